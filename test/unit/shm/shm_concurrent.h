/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The concurrent scenarios of the shm unit tests, written without Criterion so
 * that the same code runs in the Criterion tests (test_ring.c, test_doorbell.c,
 * test_cq.c) and in tsan_concurrent.c, the ThreadSanitizer driver: Criterion
 * cannot start under TSan (Snaipe/Criterion issue 274). Each scenario returns
 * counts; the callers assert on them.
 */

#ifndef SHM_CONCURRENT_H
#define SHM_CONCURRENT_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "uroce_shm.h"

/* Spin briefly, then let the other thread run: the test machine is shared. */
static inline void
conc_relax(uint32_t *spins)
{
	if (++*spins % 128 == 0)
		sched_yield();
	else
		atomic_signal_fence(memory_order_seq_cst);
}

static inline void
conc_delay(uint32_t n)
{
	for (volatile uint32_t i = 0; i < n; i++)
		;
}

static inline double
conc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- ring: one producer, one consumer, data checks ---- */

struct conc_ent {
	uint64_t seq;
	uint64_t check;
};

#define CONC_CHECK(s) ((s) * 0x9e3779b97f4a7c15ull ^ 0x5555aaaa5555aaaaull)

struct conc_prod {
	struct uroce_shm_ring *r;
	uint64_t count;
};

/* Produce count entries in bursts of 1..31. */
static inline void *
conc_producer(void *arg)
{
	struct conc_prod *cp = arg;
	struct conc_ent e[32];
	uint64_t next = 0;
	uint32_t n, i, k, spins = 0;

	while (next < cp->count) {
		n = (uint32_t)(next % 31) + 1;
		if (n > cp->count - next)
			n = (uint32_t)(cp->count - next);
		for (i = 0; i < n; i++)
			e[i] = (struct conc_ent){next + i, CONC_CHECK(next + i)};
		k = uroce_shm_ring_enqueue_burst(cp->r, e, n);
		if (k == 0) {
			if (uroce_shm_ring_is_corrupt(cp->r))
				break;
			conc_relax(&spins);
			continue;
		}
		next += k;
	}
	return NULL;
}

/* Consume count entries in bursts of up to 64; returns how many were wrong
 * (out of order, bad contents, or never arrived because of corruption). */
static inline uint64_t
conc_consume(struct uroce_shm_ring *r, uint64_t count)
{
	struct conc_ent out[64];
	uint64_t next = 0, errors = 0;
	uint32_t k, i, spins = 0;

	while (next < count) {
		k = uroce_shm_ring_dequeue_burst(r, out, 64);
		if (k == 0) {
			if (uroce_shm_ring_is_corrupt(r))
				return errors + (count - next);
			conc_relax(&spins);
			continue;
		}
		for (i = 0; i < k; i++, next++)
			if (out[i].seq != next || out[i].check != CONC_CHECK(next))
				errors++;
	}
	return errors;
}

/* Two threads over one ring of `size` entries starting at index `start`. */
static inline uint64_t
conc_ring_threads(uint32_t size, uint32_t start, uint64_t count, uint32_t *end_index)
{
	size_t len = uroce_shm_ring_mem_size(size, sizeof(struct conc_ent));
	struct uroce_shm_ring p, c;
	struct conc_prod cp;
	uint64_t errors;
	pthread_t t;
	void *m = aligned_alloc(64, len);

	if (m == NULL ||
	    uroce_shm_ring_init(&c, m, len, size, sizeof(struct conc_ent), start,
				UROCE_SHM_RING_CONSUMER, UROCE_SHM_RING_F_UNTRUSTED) != 0 ||
	    uroce_shm_ring_attach(&p, m, len, UROCE_SHM_RING_PRODUCER, 0) != 0) {
		free(m);
		return count;
	}
	cp = (struct conc_prod){.r = &p, .count = count};
	if (pthread_create(&t, NULL, conc_producer, &cp) != 0) {
		free(m);
		return count;
	}
	errors = conc_consume(&c, count);
	pthread_join(t, NULL);
	if (uroce_shm_ring_is_corrupt(&c) || uroce_shm_ring_is_corrupt(&p))
		errors++;
	*end_index = c.head;
	free(m);
	return errors;
}

/* ---- doorbells: client threads post into per-QP rings and ring ---- */

#define CONC_NQP 200u

struct conc_client {
	struct uroce_shm_db_block *db;
	struct uroce_shm_ring *sq;  /* producer handles */
	uint32_t first, step, posts;
};

static inline void *
conc_client_thread(void *arg)
{
	struct conc_client *cl = arg;
	uint64_t v;
	uint32_t i, q, spins = 0;

	for (i = 0; i < cl->posts; i++) {
		q = cl->first + (i * 7919u) % (CONC_NQP / cl->step) * cl->step;
		v = ((uint64_t)q << 32) | i;
		while (uroce_shm_ring_enqueue_burst(&cl->sq[q], &v, 1) == 0)
			conc_relax(&spins);
		uroce_shm_db_ring(cl->db, q);
	}
	return NULL;
}

struct conc_db_result {
	uint64_t got;       /* entries received */
	uint64_t misorder;  /* per-QP order violations or wrong QP */
	uint64_t bad_slot;  /* reader's count, must stay 0 */
};

/* Two client threads (even and odd QPs) post `posts` entries each into
 * 16-deep rings and ring one doorbell block; this thread drains a ring only
 * when the doorbell names it. A lost doorbell strands entries (and blocks the
 * client), so got < 2 * posts within the deadline. */
static inline struct conc_db_result
conc_doorbell(uint32_t posts, double seconds)
{
	struct conc_db_result res = {0, 0, 0};
	struct uroce_shm_ring prod[CONC_NQP], cons[CONC_NQP];
	struct uroce_shm_db_reader rd;
	struct conc_client cl[2];
	pthread_t t[2];
	static uint32_t next_seq[CONC_NQP];
	size_t len = uroce_shm_ring_mem_size(16, 8);
	struct uroce_shm_db_block *db = aligned_alloc(4096, sizeof(*db));
	uint8_t *mem = aligned_alloc(64, len * CONC_NQP);
	double deadline;
	uint64_t v;
	uint32_t q;
	int s;

	if (db == NULL || mem == NULL)
		abort();
	memset(db, 0, sizeof(*db));
	memset(next_seq, 0, sizeof(next_seq));
	for (q = 0; q < CONC_NQP; q++)
		if (uroce_shm_ring_init(&cons[q], mem + q * len, len, 16, 8, 0,
					UROCE_SHM_RING_CONSUMER, UROCE_SHM_RING_F_UNTRUSTED) != 0 ||
		    uroce_shm_ring_attach(&prod[q], mem + q * len, len, UROCE_SHM_RING_PRODUCER,
					  0) != 0)
			abort();
	uroce_shm_db_reader_init(&rd, db, CONC_NQP);
	cl[0] = (struct conc_client){db, prod, 0, 2, posts};
	cl[1] = (struct conc_client){db, prod, 1, 2, posts};
	if (pthread_create(&t[0], NULL, conc_client_thread, &cl[0]) != 0 ||
	    pthread_create(&t[1], NULL, conc_client_thread, &cl[1]) != 0)
		abort();
	deadline = conc_now() + seconds;
	while (res.got < 2ull * posts && conc_now() < deadline) {
		s = uroce_shm_db_next(&rd);
		if (s < 0) {
			sched_yield();
			continue;
		}
		while (uroce_shm_ring_dequeue_burst(&cons[s], &v, 1) == 1) {
			if (v >> 32 != (uint64_t)s || (uint32_t)v < next_seq[s])
				res.misorder++;
			next_seq[s] = (uint32_t)v + 1;
			res.got++;
		}
	}
	res.bad_slot = rd.bad_slot;
	if (res.got < 2ull * posts) {
		/* A lost doorbell: the clients are stuck, joining would hang. */
		fprintf(stderr, "conc_doorbell: only %llu of %llu entries arrived\n",
			(unsigned long long)res.got, 2ull * posts);
		abort();
	}
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	free(mem);
	free(db);
	return res;
}

/* ---- CQ arm/poll race with a real eventfd ---- */

struct conc_cq_result {
	uint32_t claimed;   /* rounds where the client's arm claimed the event */
	uint32_t woken;     /* rounds where the daemon's eventfd write came */
	uint32_t quiet;     /* rounds with no event: the CQE came before the arm */
	uint32_t lost;      /* rounds where the client found nothing and no event came */
	uint32_t doubled;   /* rounds with a second event */
	uint32_t missing;   /* rounds where the CQE was not there to poll */
	uint64_t daemon_signals;
};

struct conc_race {
	struct uroce_shm_ring *d;
	uint32_t rounds;
	int efd;
	_Atomic uint32_t client_ready;
	_Atomic uint32_t daemon_done;
	uint64_t daemon_signals;
};

static inline void *
conc_cq_daemon(void *arg)
{
	struct conc_race *rc = arg;
	struct uroce_shm_cqe e;
	uint32_t r, spins = 0;

	memset(&e, 0, sizeof(e));
	for (r = 1; r <= rc->rounds; r++) {
		while (atomic_load_explicit(&rc->client_ready, memory_order_acquire) != r)
			conc_relax(&spins);
		/* Vary where in the client's arm we land. */
		conc_delay((r % 4) * 40);
		e.wr_id = r;
		while (uroce_shm_ring_enqueue_burst(rc->d, &e, 1) != 1)
			conc_relax(&spins);
		if (uroce_shm_cq_should_signal(rc->d, false)) {
			rc->daemon_signals++;
			if (eventfd_write(rc->efd, 1) != 0)
				abort();
		}
		atomic_store_explicit(&rc->daemon_done, r, memory_order_release);
	}
	return NULL;
}

static inline uint32_t
conc_cq_poll_all(struct uroce_shm_ring *c, uint64_t want_wr_id, uint32_t *wrong)
{
	const struct uroce_shm_cqe *e;
	uint32_t n, i, total = 0;

	while ((n = uroce_shm_ring_cons_peek(c, 16)) != 0) {
		for (i = 0; i < n; i++) {
			e = uroce_shm_ring_cons_slot(c, i);
			if (want_wr_id != 0 && e->wr_id != want_wr_id)
				(*wrong)++;
		}
		uroce_shm_ring_cons_release(c, n);
		total += n;
	}
	return total;
}

/* Per round the client does what a verbs application does (IBA 11.4.2.2:
 * an arm covers the next completion only): arm, poll, and block on the
 * eventfd only if the poll found nothing. The daemon thread races one CQE
 * against it. Every third round the client arms only once the CQE is
 * visible, so the CQE lands between its poll and its arm. A client that
 * found nothing must be woken (never lost); no round has two events. */
static inline struct conc_cq_result
conc_cq_race(uint32_t rounds)
{
	struct conc_cq_result res;
	size_t len = uroce_shm_ring_mem_size(64, sizeof(struct uroce_shm_cqe));
	struct uroce_shm_ring d, c;
	struct conc_race rc;
	struct pollfd pfd;
	eventfd_t val;
	pthread_t t;
	uint32_t r, spins = 0, wrong = 0, got, events;
	void *m = aligned_alloc(64, len);
	int a;

	memset(&res, 0, sizeof(res));
	memset(&rc, 0, sizeof(rc));
	if (m == NULL ||
	    uroce_shm_ring_init(&d, m, len, 64, sizeof(struct uroce_shm_cqe),
				UINT32_MAX - rounds / 2, UROCE_SHM_RING_PRODUCER,
				UROCE_SHM_RING_F_UNTRUSTED) != 0 ||
	    uroce_shm_ring_attach(&c, m, len, UROCE_SHM_RING_CONSUMER, 0) != 0)
		abort();
	rc.d = &d;
	rc.rounds = rounds;
	rc.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rc.efd < 0 || pthread_create(&t, NULL, conc_cq_daemon, &rc) != 0)
		abort();
	for (r = 1; r <= rounds; r++) {
		conc_cq_poll_all(&c, 0, &wrong);
		atomic_store_explicit(&rc.client_ready, r, memory_order_release);
		if (r % 3 == 0)
			while (uroce_shm_ring_used_count(&c) == 0)
				conc_relax(&spins);
		a = uroce_shm_cq_arm(&c, false);
		if (a < 0) {
			res.lost++;
			break;
		}
		events = a == 1;
		got = conc_cq_poll_all(&c, r, &wrong);
		if (got == 0) {
			/* Nothing yet, so the CQE comes after the arm: its event
			 * must wake us. */
			pfd = (struct pollfd){.fd = rc.efd, .events = POLLIN};
			if (a == 1 || poll(&pfd, 1, 5000) != 1 ||
			    eventfd_read(rc.efd, &val) != 0 || val != 1) {
				res.lost++;
				break; /* the daemon thread may be ahead; stop here */
			}
			events++;
			got = conc_cq_poll_all(&c, r, &wrong);
		}
		while (atomic_load_explicit(&rc.daemon_done, memory_order_acquire) != r)
			conc_relax(&spins);
		if (eventfd_read(rc.efd, &val) == 0)
			events += (uint32_t)val;
		if (events > 1)
			res.doubled++;
		else if (events == 0)
			res.quiet++;
		else if (a == 1)
			res.claimed++;
		else
			res.woken++;
		if (got != 1)
			res.missing++;
		/* Leave the CQ disarmed for the next round: take the arm back if
		 * nothing fired, as an application that closes its CQ would. */
		if (events == 0)
			atomic_store_explicit((_Atomic uint64_t *)(void *)&c.hdr->cq_arm, 0,
					      memory_order_release);
	}
	if (r <= rounds) {
		/* A lost wakeup: the daemon thread would wait forever. */
		fprintf(stderr, "conc_cq_race: no event in round %u\n", r);
		abort();
	}
	pthread_join(t, NULL);
	res.missing += wrong;
	res.daemon_signals = rc.daemon_signals;
	close(rc.efd);
	free(m);
	return res;
}

#endif /* SHM_CONCURRENT_H */
