/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * bench_shm: work requests posted and completed per second through the
 * shared-memory shim alone (lib/shm), no transport: the client writes a send
 * WQE into the SQ ring in place and rings the doorbell; the daemon side finds
 * the QP through the doorbell block, copies the WQE out, and writes a CQE;
 * the client polls the CQE in place. Two set-ups: both sides interleaved on
 * one core, and client and daemon in two threads. Prints numbers; never fails
 * on them.
 */

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uroce_shm.h"

#define SQ_SIZE 1024u
#define CQ_SIZE 1024u
#define QP_SLOT 3u

struct shim {
	void *sq_mem, *cq_mem;
	struct uroce_shm_db_block *db;
	struct uroce_shm_ring c_sq, d_sq; /* client producer, daemon consumer */
	struct uroce_shm_ring d_cq, c_cq; /* daemon producer, client consumer */
	struct uroce_shm_db_reader rd;
	uint64_t posted, completed, next_wr_id, expect_wr_id, errors;
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void
shim_init(struct shim *s)
{
	size_t sql = uroce_shm_ring_mem_size(SQ_SIZE, sizeof(struct uroce_shm_send_wqe));
	size_t cql = uroce_shm_ring_mem_size(CQ_SIZE, sizeof(struct uroce_shm_cqe));

	memset(s, 0, sizeof(*s));
	s->sq_mem = aligned_alloc(4096, sql);
	s->cq_mem = aligned_alloc(4096, cql);
	s->db = aligned_alloc(4096, sizeof(*s->db));
	if (s->sq_mem == NULL || s->cq_mem == NULL || s->db == NULL)
		abort();
	memset(s->db, 0, sizeof(*s->db));
	if (uroce_shm_ring_init(&s->d_sq, s->sq_mem, sql, SQ_SIZE,
				sizeof(struct uroce_shm_send_wqe), 0, UROCE_SHM_RING_CONSUMER,
				UROCE_SHM_RING_F_UNTRUSTED) != 0 ||
	    uroce_shm_ring_attach(&s->c_sq, s->sq_mem, sql, UROCE_SHM_RING_PRODUCER, 0) != 0 ||
	    uroce_shm_ring_init(&s->d_cq, s->cq_mem, cql, CQ_SIZE, sizeof(struct uroce_shm_cqe),
				0, UROCE_SHM_RING_PRODUCER, UROCE_SHM_RING_F_UNTRUSTED) != 0 ||
	    uroce_shm_ring_attach(&s->c_cq, s->cq_mem, cql, UROCE_SHM_RING_CONSUMER, 0) != 0)
		abort();
	uroce_shm_db_reader_init(&s->rd, s->db, 64);
}

static void
shim_fini(struct shim *s)
{
	free(s->sq_mem);
	free(s->cq_mem);
	free(s->db);
}

/* Client: post up to n signaled SENDs with one SGE, in place; one doorbell. */
static uint32_t
client_post(struct shim *s, uint32_t n)
{
	struct uroce_shm_send_wqe *w;
	uint32_t k, i;

	k = uroce_shm_ring_prod_reserve(&s->c_sq, n);
	for (i = 0; i < k; i++) {
		w = uroce_shm_ring_prod_slot(&s->c_sq, i);
		w->wr_id = s->next_wr_id++;
		w->opcode = UROCE_WR_SEND;
		w->num_sge = 1;
		w->send_flags = UROCE_SEND_SIGNALED;
		w->imm_data = 0;
		w->inline_len = 0;
		w->data.sg_list[0].addr = 0x10000 + i * 64;
		w->data.sg_list[0].length = 64;
		w->data.sg_list[0].lkey = 0x1234;
	}
	if (k != 0) {
		uroce_shm_ring_prod_commit(&s->c_sq, k);
		uroce_shm_db_ring(s->db, QP_SLOT);
	}
	s->posted += k;
	return k;
}

/* Daemon: find work by doorbell, copy WQEs out, complete them. */
static uint32_t
daemon_work(struct shim *s, uint32_t budget)
{
	struct uroce_shm_send_wqe w[32];
	struct uroce_shm_cqe cqe[32];
	uint32_t n, i, done = 0;
	int slot;

	slot = uroce_shm_db_next(&s->rd);
	if (slot < 0)
		return 0;
	while (done < budget) {
		n = (budget - done < 32 ? budget - done : 32);
		n = uroce_shm_ring_free_count(&s->d_cq) < n ? uroce_shm_ring_free_count(&s->d_cq)
							    : n;
		n = uroce_shm_ring_dequeue_burst(&s->d_sq, w, n);
		if (n == 0)
			break;
		for (i = 0; i < n; i++) {
			/* The checks a real daemon makes on its private copy. */
			if (w[i].opcode != UROCE_WR_SEND || w[i].num_sge > UROCE_MAX_SGE)
				s->errors++;
			memset(&cqe[i], 0, sizeof(cqe[i]));
			cqe[i].wr_id = w[i].wr_id;
			cqe[i].opcode = UROCE_WC_SEND;
			cqe[i].qp_num = 0x11;
		}
		if (uroce_shm_ring_enqueue_burst(&s->d_cq, cqe, n) != n)
			s->errors++;
		if (uroce_shm_cq_should_signal(&s->d_cq, false))
			s->errors++; /* never armed in this benchmark */
		done += n;
	}
	/* Work left (budget or CQ full): keep the QP on the private list. */
	if (uroce_shm_ring_used_count(&s->d_sq) != 0)
		uroce_shm_db_requeue(&s->rd, (uint32_t)slot);
	return done;
}

static uint32_t
client_poll(struct shim *s)
{
	const struct uroce_shm_cqe *c;
	uint32_t n, i;

	n = uroce_shm_ring_cons_peek(&s->c_cq, 64);
	for (i = 0; i < n; i++) {
		c = uroce_shm_ring_cons_slot(&s->c_cq, i);
		if (c->wr_id != s->expect_wr_id++ || c->status != UROCE_WC_SUCCESS)
			s->errors++;
	}
	if (n != 0)
		uroce_shm_ring_cons_release(&s->c_cq, n);
	s->completed += n;
	return n;
}

static void
one_core(uint32_t batch, double seconds)
{
	struct shim s;
	double t0, t;
	uint64_t iter = 0;

	shim_init(&s);
	t0 = now();
	do {
		for (int k = 0; k < 256; k++, iter++) {
			client_post(&s, batch);
			daemon_work(&s, batch);
			client_poll(&s);
		}
		t = now();
	} while (t - t0 < seconds);
	printf("bench_shm one core, batch %2u: %7.2f M WR/s posted+completed "
	       "(%6.1f ns/WR, %llu WRs, errors %llu)\n",
	       batch, s.completed / (t - t0) / 1e6, (t - t0) * 1e9 / (double)s.completed,
	       (unsigned long long)s.completed, (unsigned long long)s.errors);
	shim_fini(&s);
}

struct two {
	struct shim *s;
	uint64_t target;
	_Atomic int stop;
};

static void *
daemon_thread(void *arg)
{
	struct two *tw = arg;
	uint32_t idle = 0;

	while (!atomic_load_explicit(&tw->stop, memory_order_relaxed)) {
		if (daemon_work(tw->s, 64) == 0 && ++idle % 256 == 0)
			sched_yield();
	}
	return NULL;
}

static void
two_threads(uint32_t batch, uint64_t wrs)
{
	struct shim s;
	struct two tw;
	pthread_t t;
	double t0, t1;
	uint32_t idle = 0;

	shim_init(&s);
	tw.s = &s;
	tw.target = wrs;
	atomic_init(&tw.stop, 0);
	if (pthread_create(&t, NULL, daemon_thread, &tw) != 0)
		abort();
	t0 = now();
	while (s.completed < wrs) {
		uint32_t p = 0, c;

		if (s.posted - s.completed < SQ_SIZE)
			p = client_post(&s, batch);
		c = client_poll(&s);
		if (p == 0 && c == 0 && ++idle % 256 == 0)
			sched_yield();
	}
	t1 = now();
	atomic_store(&tw.stop, 1);
	pthread_join(t, NULL);
	printf("bench_shm two threads, batch %2u: %7.2f M WR/s posted+completed "
	       "(%6.1f ns/WR, %llu WRs, errors %llu)\n",
	       batch, s.completed / (t1 - t0) / 1e6, (t1 - t0) * 1e9 / (double)s.completed,
	       (unsigned long long)s.completed, (unsigned long long)s.errors);
	shim_fini(&s);
}

static void
cpu_model(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "model name", 10) == 0) {
			printf("bench_shm cpu: %s", strchr(line, ':') + 2);
			break;
		}
	fclose(f);
}

int
main(void)
{
	static const uint32_t batches[] = {1, 8, 32};

	cpu_model();
	printf("bench_shm WQE %zu B, CQE %zu B, SQ %u, CQ %u entries\n",
	       sizeof(struct uroce_shm_send_wqe), sizeof(struct uroce_shm_cqe), SQ_SIZE,
	       CQ_SIZE);
	for (size_t i = 0; i < sizeof(batches) / sizeof(batches[0]); i++)
		one_core(batches[i], 0.5);
	for (size_t i = 0; i < sizeof(batches) / sizeof(batches[0]); i++)
		two_threads(batches[i], 4000000);
	return 0;
}
