/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * verbs_atomics: remote atomics from several RC QPs at once on one word and
 * on neighbouring words, as a plain libibverbs program (test_atomics.sh runs
 * it through uroce-run on a uroced with two workers). Each QP has a CQ of its
 * own, so the daemon places them on its workers in turn; QP 2p and 2p+1 are
 * connected to each other over port 1's own GID (the daemon's loopback), and
 * every QP sends atomics to its peer, so the responders run on every worker.
 *
 *   verbs_atomics [--qps N] [--fadd N] [--cas N] [--cpu N]
 *
 * Phase "one word": every QP posts N FETCH_ADDs of 1 (16 in flight) and
 * runs a compare-and-swap loop that increments N times (CAS(v, v + 1),
 * retried with the value returned), all on one 8-byte word, while this
 * process's CPU adds --cpu more with __atomic_fetch_add. Phase "neighbouring
 * words": the same without the CPU on adjacent words of one cache line,
 * word p hit by both QPs of pair p.
 * Checked: ibv_query_device() says IBV_ATOMIC_HCA (as ConnectX; uroce's own
 * API says GLOB); every completion
 * succeeds; each word ends at the number of its increments; the originals
 * the FETCH_ADDs and successful CASes returned are all distinct, exactly
 * 0 .. (remote increments - 1) where the CPU did not add. The last line
 * says what was done; exit 0 means every check passed.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#define MAX_QP 16
#define DEPTH 32
#define INFLIGHT 16
#define LINE_OFF 64             /* the words: one 64-byte aligned line */
#define RES_OFF 4096            /* per QP: DEPTH result slots of 8 bytes */
#define BUF_LEN (RES_OFF + MAX_QP * DEPTH * 8)

#define FAIL(...)                                                \
	do {                                                     \
		fprintf(stderr, "verbs_atomics: " __VA_ARGS__);  \
		fprintf(stderr, "\n");                           \
		exit(1);                                         \
	} while (0)

enum kind { K_FADD, K_CAS };

struct aqp {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	unsigned int idx;
	unsigned int word;
	uint32_t fadd_left;
	uint32_t cas_left;
	bool cas_busy;
	uint64_t cas_guess;
	uint32_t posted;
	uint32_t completed;
	uint32_t inflight;
};

static unsigned int nqp = 8;
static uint8_t *buf;
static struct ibv_mr *mr;
static struct aqp q[MAX_QP];
static uint64_t *orig[MAX_QP / 2];
static uint32_t norig[MAX_QP / 2];
static uint32_t orig_cap;
static uint64_t cas_retries;

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t *
word_ptr(unsigned int w)
{
	return (uint64_t *)(void *)(buf + LINE_OFF + 8 * w);
}

static uint64_t *
res_ptr(const struct aqp *a, uint32_t slot)
{
	return (uint64_t *)(void *)(buf + RES_OFF + (a->idx * DEPTH + slot) * 8);
}

static void
connect_qp(struct ibv_qp *qp, const union ibv_gid *gid, uint32_t dqpn, uint32_t sq_psn,
	   uint32_t rq_psn)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS) != 0)
		FAIL("INIT: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = INFLIGHT;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
		FAIL("RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = 18; /* 1 s: a loaded 2-CPU machine may deschedule a worker */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = INFLIGHT;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) != 0)
		FAIL("RTS: %s", strerror(errno));
}

static void
post(struct aqp *a, enum kind k, uint64_t compare_add, uint64_t swap)
{
	struct ibv_sge sge = {(uintptr_t)res_ptr(a, a->posted % DEPTH), 8, mr->lkey};
	struct ibv_send_wr wr, *bad;
	int rc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = k;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = k == K_FADD ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)word_ptr(a->word);
	wr.wr.atomic.rkey = mr->rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	rc = ibv_post_send(a->qp, &wr, &bad);
	if (rc != 0)
		FAIL("QP %u: post_send: %s", a->idx, strerror(rc));
	a->posted++;
	a->inflight++;
}

static void
record(unsigned int w, uint64_t v)
{
	if (norig[w] >= orig_cap)
		FAIL("word %u: more originals than increments", w);
	orig[w][norig[w]++] = v;
}

/* Post what may be posted, take in completions (in order per QP: the k-th
 * completion's result is in slot k % DEPTH). @return QPs still busy. */
static unsigned int
round_once(void)
{
	unsigned int i, busy = 0;

	for (i = 0; i < nqp; i++) {
		struct aqp *a = &q[i];
		struct ibv_wc wc[16];
		int n, k;

		if (a->cas_left > 0 && !a->cas_busy && a->inflight < INFLIGHT) {
			post(a, K_CAS, a->cas_guess, a->cas_guess + 1);
			a->cas_busy = true;
		}
		while (a->fadd_left > 0 && a->inflight < INFLIGHT) {
			post(a, K_FADD, 1, 0);
			a->fadd_left--;
		}
		n = ibv_poll_cq(a->cq, 16, wc);
		if (n < 0)
			FAIL("QP %u: poll_cq %d", a->idx, n);
		for (k = 0; k < n; k++) {
			uint64_t v = *res_ptr(a, a->completed % DEPTH);

			if (wc[k].status != IBV_WC_SUCCESS)
				FAIL("QP %u: %s", a->idx, ibv_wc_status_str(wc[k].status));
			a->completed++;
			a->inflight--;
			if (wc[k].wr_id == K_FADD) {
				record(a->word, v);
				continue;
			}
			a->cas_busy = false;
			if (v == a->cas_guess) {
				record(a->word, v);
				a->cas_left--;
				a->cas_guess = v + 1;
			} else {
				cas_retries++;
				a->cas_guess = v;
			}
		}
		if (a->fadd_left > 0 || a->cas_left > 0 || a->inflight > 0)
			busy++;
	}
	return busy;
}

static int
cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* One phase; @p pairs: word p for pair p, else word 0 for all. @return the
 * number of words checked. */
static unsigned int
phase(const char *name, bool pairs, uint32_t nfadd, uint32_t ncas, uint64_t cpu)
{
	unsigned int i, w, nwords = pairs ? nqp / 2 : 1;
	uint64_t want[MAX_QP / 2] = {0}, cpu_done = 0;
	double end = now_s() + 240;

	memset(buf + LINE_OFF, 0, 64);
	orig_cap = nqp * (nfadd + ncas);
	for (w = 0; w < nwords; w++) {
		free(orig[w]);
		orig[w] = calloc(orig_cap, sizeof(uint64_t));
		norig[w] = 0;
		if (orig[w] == NULL)
			FAIL("out of memory");
	}
	for (i = 0; i < nqp; i++) {
		q[i].word = pairs ? i / 2 : 0;
		q[i].fadd_left = nfadd;
		q[i].cas_left = ncas;
		q[i].cas_busy = false;
		q[i].cas_guess = 0;
		want[q[i].word] += nfadd + ncas;
	}
	while (round_once() > 0) {
		if (cpu_done < cpu) {
			__atomic_fetch_add(word_ptr(0), 1, __ATOMIC_SEQ_CST);
			cpu_done++;
		}
		if (now_s() > end)
			FAIL("%s: the atomics did not complete in 240 s", name);
	}
	for (; cpu_done < cpu; cpu_done++)
		__atomic_fetch_add(word_ptr(0), 1, __ATOMIC_SEQ_CST);
	for (w = 0; w < nwords; w++) {
		uint64_t final = __atomic_load_n(word_ptr(w), __ATOMIC_SEQ_CST), j;

		if (norig[w] != want[w])
			FAIL("%s: word %u: %u originals for %" PRIu64 " increments", name, w,
			     norig[w], want[w]);
		if (final != want[w] + (w == 0 ? cpu : 0))
			FAIL("%s: word %u ended at %" PRIu64 " after %" PRIu64 " remote and %" PRIu64
			     " CPU increments: updates lost", name, w, final, want[w],
			     w == 0 ? cpu : 0);
		if (w == 0 && cpu != 0)
			continue; /* the CPU's adds return no originals */
		qsort(orig[w], norig[w], sizeof(uint64_t), cmp_u64);
		for (j = 0; j < norig[w]; j++)
			if (orig[w][j] != j)
				FAIL("%s: word %u: original %" PRIu64 " where %" PRIu64 " was due (%s)",
				     name, w, orig[w][j], j,
				     j > 0 && orig[w][j] == orig[w][j - 1] ? "returned twice" :
				     "skipped");
	}
	printf("verbs_atomics: %s: %u QPs, %u FETCH_ADD and %u CAS each, %" PRIu64
	       " CPU adds: %u word(s) exact\n", name, nqp, nfadd, ncas, cpu, nwords);
	return nwords;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"qps", required_argument, NULL, 'q'},
		{"fadd", required_argument, NULL, 'f'},
		{"cas", required_argument, NULL, 'c'},
		{"cpu", required_argument, NULL, 'u'},
		{NULL, 0, NULL, 0},
	};
	uint32_t nfadd = 20000, ncas = 1000;
	uint64_t cpu = 100000;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_device_attr da;
	struct ibv_pd *pd;
	union ibv_gid gid;
	unsigned int i;
	double t0;
	int c, n;

	setlinebuf(stdout);
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'q': nqp = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'f': nfadd = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'c': ncas = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'u': cpu = strtoull(optarg, NULL, 0); break;
		default: FAIL("usage: verbs_atomics [--qps N] [--fadd N] [--cas N] [--cpu N]");
		}
	}
	if (nqp < 2 || nqp > MAX_QP || nqp % 2 != 0)
		FAIL("--qps: an even number from 2 to %d", MAX_QP);
	list = ibv_get_device_list(&n);
	if (list == NULL || n < 1)
		FAIL("no verbs device");
	ctx = ibv_open_device(list[0]);
	if (ctx == NULL)
		FAIL("open %s: %s", ibv_get_device_name(list[0]), strerror(errno));
	if (ibv_query_device(ctx, &da) != 0)
		FAIL("query_device");
	/* Remote atomics are CPU atomics on the word: the CPU's own atomics see
	 * them as indivisible (issue 16). */
	if (da.atomic_cap != IBV_ATOMIC_HCA)
		FAIL("atomic_cap %d, expected IBV_ATOMIC_HCA (%d)", da.atomic_cap,
		     IBV_ATOMIC_HCA);
	if (ibv_query_gid(ctx, 1, 0, &gid) != 0)
		FAIL("query_gid");
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, BUF_LEN);
	if (pd == NULL || buf == NULL)
		FAIL("pd/buffer");
	memset(buf, 0, BUF_LEN);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	if (mr == NULL)
		FAIL("reg_mr: %s", strerror(errno));
	for (i = 0; i < nqp; i++) {
		struct ibv_qp_init_attr ia;

		q[i].idx = i;
		q[i].cq = ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0);
		if (q[i].cq == NULL)
			FAIL("create_cq: %s", strerror(errno));
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = q[i].cq;
		ia.recv_cq = q[i].cq;
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = DEPTH;
		ia.cap.max_recv_wr = 1;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		q[i].qp = ibv_create_qp(pd, &ia);
		if (q[i].qp == NULL)
			FAIL("create_qp: %s", strerror(errno));
	}
	for (i = 0; i < nqp; i++) {
		connect_qp(q[i].qp, &gid, q[i ^ 1].qp->qp_num, 0x100 * i, 0x100 * (i ^ 1));
		printf("verbs_atomics: QP %u qpn %#x -> qpn %#x\n", i, q[i].qp->qp_num,
		       q[i ^ 1].qp->qp_num);
	}
	t0 = now_s();
	phase("one word", false, nfadd, ncas, cpu);
	phase("neighbouring words", true, nfadd, ncas, 0);
	for (i = 0; i < nqp; i++)
		if (ibv_destroy_qp(q[i].qp) != 0 || ibv_destroy_cq(q[i].cq) != 0)
			FAIL("destroy");
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("verbs_atomics: ok: %u QPs, %" PRIu64 " atomics and %" PRIu64
	       " CAS retries in %.1f s\n", nqp, (uint64_t)2 * nqp * (nfadd + ncas) + cas_retries,
	       cas_retries, now_s() - t0);
	return 0;
}
