/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Remote atomics across workers (issue 16, defect 1). The daemon core runs
 * in this process as uroced runs it: a control thread and two workers, each
 * polling on a thread of its own (dt_daemon, conf.threaded), so the two
 * workers really execute at the same time on the machine's CPUs. This
 * process is also the liburoce client: eight RC QPs, each on a CQ of its
 * own so that placement alternates between the workers, connected in pairs
 * over the loopback port (QP 2p on one worker, 2p+1 on the other), and every
 * QP is a requester: the responders that execute the atomics sit on both
 * workers, four on each.
 *
 *   Expect: the device reports atomic_cap IBV_ATOMIC_GLOB.
 *   one_word: every QP posts FETCH_ADDs of 1 (16 in flight) and runs a
 *     compare-and-swap loop that increments (CAS(v, v + 1), retried with the
 *     value returned), all on one 8-byte word.
 *     Expect: the word ends at the number of FETCH_ADDs plus successful
 *     CASes, and the original values those returned are all distinct: they
 *     are exactly 0 .. final - 1 (each increment saw its own value).
 *   neighbouring_words: the same on four adjacent words of one cache line,
 *     each hit by both QPs of one pair (so by both workers).
 *     Expect: the same, word by word; no word disturbs its neighbours.
 *   cpu_and_remote: the client's own CPU adds to the word with
 *     __atomic_fetch_add while the QPs' FETCH_ADDs run (IBV_ATOMIC_GLOB).
 *     Expect: the word ends at the sum of both.
 *   atomic_write_not_torn (IBA 1.5 ATOMIC WRITE, 9.4.8): four QPs whose
 *     responders sit two on each worker post ATOMIC WRITEs of tagged values
 *     (one 16-bit tag repeated in all four lanes) to one word, while the
 *     four others read it with FETCH_ADD 0 (also executed on both workers)
 *     and the client's CPU loads it.
 *     Expect: every value seen is 0 or a whole tag ever written (never two
 *     writes' halves), the word ends at one writer's last tag, and the
 *     neighbouring words keep their contents.
 *
 * Before the fix (a plain read-modify-write in resp_exec_atomic) updates
 * were lost and originals returned twice.
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_daemon.h"
#include "uroce_verbs.h"

#include "daemon_test_util.h"
#include "dt_daemon.h"

#define NQP 8u
#define DEPTH 32u
#define INFLIGHT 16u            /* max_rd_atomic */
#define NWORDS 4u               /* neighbouring words: one per QP pair */
#define BUF_LEN 65536u
#define RES_OFF 4096u           /* per QP: DEPTH result slots of 8 bytes */
#define TARGET_OFF 64u          /* the words hit: one 64-byte aligned line */
#define ACCESS \
	(UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_ATOMIC | UROCE_ACCESS_REMOTE_WRITE)
#define LANES 0x0001000100010001ull /* a 16-bit tag in each of the four lanes */

enum kind { K_FADD, K_CAS };

struct aqp {
	struct uroce_qp *qp;
	struct uroce_cq *cq;
	unsigned int idx;
	unsigned int word;       /* target word index */
	uint32_t fadd_left;      /* FETCH_ADDs still to post */
	uint32_t cas_left;       /* successful CASes still wanted */
	bool cas_busy;
	uint64_t cas_guess;
	uint32_t posted;         /* WRs posted (their result slot: posted % DEPTH) */
	uint32_t completed;
	uint32_t inflight;
};

struct hammer {
	struct dt_daemon dd;
	struct uroce_context *ctx;
	struct uroce_pd *pd;
	uint8_t *buf;
	struct uroce_mr *mr;
	struct aqp q[NQP];
	/* originals returned by FETCH_ADDs and successful CASes, per word */
	uint64_t *orig[NWORDS];
	uint32_t norig[NWORDS];
	uint32_t cap;
	uint64_t cas_fail;
};

static struct hammer h;

static uint64_t *
word_ptr(unsigned int w)
{
	return (uint64_t *)(void *)(h.buf + TARGET_OFF + 8 * w);
}

static uint64_t *
res_ptr(const struct aqp *a, uint32_t slot)
{
	return (uint64_t *)(void *)(h.buf + RES_OFF + (a->idx * DEPTH + slot) * 8);
}

static void
setup(void)
{
	struct uroce_daemon_conf conf;
	struct uroce_device_attr dev;
	uint8_t gid[16];
	unsigned int i, w;
	int rc;

	memset(&h, 0, sizeof(h));
	memset(&conf, 0, sizeof(conf));
	conf.n_workers = 2;
	conf.threaded = true;
	rc = dt_daemon_start(&h.dd, "atomics-mt", &conf);
	cr_assert_eq(rc, 0, "daemon: %s", strerror(-rc));
	h.ctx = uroce_open_device(h.dd.sock_path);
	cr_assert_not_null(h.ctx, "open: %s", strerror(errno));
	cr_assert_eq(uroce_query_device(h.ctx, &dev), 0);
	/* Expect: remote atomics are CPU atomics on the word. */
	cr_expect_eq(dev.atomic_cap, UROCE_ATOMIC_GLOB, "atomic_cap %u", dev.atomic_cap);
	cr_assert_eq(uroce_query_gid(h.ctx, 1, 0, gid), 0);
	h.pd = uroce_alloc_pd(h.ctx);
	h.buf = uroce_alloc_buf(h.ctx, BUF_LEN);
	cr_assert(h.pd != NULL && h.buf != NULL);
	memset(h.buf, 0, BUF_LEN);
	h.mr = uroce_reg_mr(h.pd, h.buf, BUF_LEN, ACCESS);
	cr_assert_not_null(h.mr, "reg_mr: %s", strerror(errno));
	for (i = 0; i < NQP; i++) {
		h.q[i].idx = i;
		h.q[i].cq = uroce_create_cq(h.ctx, 2 * DEPTH, NULL);
		cr_assert_not_null(h.q[i].cq);
		h.q[i].qp = dt_qp_create(h.pd, h.q[i].cq, NULL, UROCE_QPT_RC, DEPTH, 1);
		cr_assert_not_null(h.q[i].qp, "create_qp %u: %s", i, strerror(errno));
	}
	/* Expect: each pair spans the two workers (placement alternates). */
	for (i = 0; i < NQP; i += 2)
		cr_assert_neq(uroce_daemon_qpn_worker(h.q[i].qp->qp_num),
			      uroce_daemon_qpn_worker(h.q[i + 1].qp->qp_num),
			      "QPs %u and %u on one worker", i, i + 1);
	for (i = 0; i < NQP; i++) {
		struct dt_rc rc_to = {.dgid = gid, .dqpn = h.q[i ^ 1].qp->qp_num,
				      .rq_psn = 0x100 * (i ^ 1), .sq_psn = 0x100 * i,
				      .rd_atomic = INFLIGHT};

		rc = dt_qp_to_rts(h.q[i].qp,
				  UROCE_ACCESS_REMOTE_ATOMIC | UROCE_ACCESS_REMOTE_WRITE, &rc_to);
		cr_assert_eq(rc, 0, "QP %u to RTS: %s", i, strerror(-rc));
	}
	for (w = 0; w < NWORDS; w++)
		h.orig[w] = NULL;
}

static void
teardown(void)
{
	unsigned int i;

	for (i = 0; i < NQP; i++) {
		if (h.q[i].qp != NULL)
			uroce_destroy_qp(h.q[i].qp);
		if (h.q[i].cq != NULL)
			uroce_destroy_cq(h.q[i].cq);
	}
	if (h.mr != NULL)
		uroce_dereg_mr(h.mr);
	if (h.ctx != NULL)
		uroce_close_device(h.ctx);
	dt_daemon_stop(&h.dd);
	for (i = 0; i < NWORDS; i++)
		free(h.orig[i]);
}

static void
post(struct aqp *a, enum kind k, uint64_t compare_add, uint64_t swap)
{
	uint32_t slot = a->posted % DEPTH;
	struct uroce_sge sge = {(uintptr_t)res_ptr(a, slot), 8, h.mr->lkey};
	struct uroce_send_wr wr;
	int rc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = k;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = k == K_FADD ? UROCE_WR_ATOMIC_FETCH_AND_ADD : UROCE_WR_ATOMIC_CMP_AND_SWP;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)word_ptr(a->word);
	wr.wr.atomic.rkey = h.mr->rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	rc = uroce_post_send(a->qp, &wr, NULL);
	cr_assert_eq(rc, 0, "QP %u post: %s", a->idx, strerror(-rc));
	a->posted++;
	a->inflight++;
}

static void
record(unsigned int w, uint64_t v)
{
	cr_assert_lt(h.norig[w], h.cap, "more originals than increments");
	h.orig[w][h.norig[w]++] = v;
}

/* Post what may be posted and take in completions (in order per QP, so the
 * k-th completion's result is in slot k % DEPTH). @return QPs still busy. */
static unsigned int
round_once(void)
{
	unsigned int i, busy = 0;

	for (i = 0; i < NQP; i++) {
		struct aqp *a = &h.q[i];
		struct uroce_wc wc[16];
		int n, k;

		if (a->cas_left > 0 && !a->cas_busy && a->inflight < INFLIGHT) {
			post(a, K_CAS, a->cas_guess, a->cas_guess + 1);
			a->cas_busy = true;
		}
		while (a->fadd_left > 0 && a->inflight < INFLIGHT) {
			post(a, K_FADD, 1, 0);
			a->fadd_left--;
		}
		n = uroce_poll_cq(a->cq, 16, wc);
		cr_assert_geq(n, 0, "poll_cq: %s", strerror(-n));
		for (k = 0; k < n; k++) {
			uint64_t v = *res_ptr(a, a->completed % DEPTH);

			cr_assert_eq(wc[k].status, UROCE_WC_SUCCESS, "QP %u: %s", a->idx,
				     uroce_wc_status_name(wc[k].status));
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
				h.cas_fail++;
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

/* Each QP: @p nfadd FETCH_ADDs and @p ncas successful CASes on word
 * word_of(i); @p cpu_adds more from this CPU, interleaved. */
static void
run(unsigned int (*word_of)(unsigned int), uint32_t nfadd, uint32_t ncas, uint64_t cpu_adds)
{
	uint64_t want[NWORDS] = {0}, cpu_done = 0;
	double end = dt_now_s() + 90;
	unsigned int i, w;

	h.cap = NQP * (nfadd + ncas);
	for (w = 0; w < NWORDS; w++) {
		h.orig[w] = calloc(h.cap, sizeof(uint64_t));
		cr_assert_not_null(h.orig[w]);
	}
	for (i = 0; i < NQP; i++) {
		h.q[i].word = word_of(i);
		h.q[i].fadd_left = nfadd;
		h.q[i].cas_left = ncas;
		want[h.q[i].word] += nfadd + ncas;
	}
	while (round_once() > 0) {
		/* The client's CPU, between its own posts (cpu_and_remote). */
		if (cpu_done < cpu_adds) {
			__atomic_fetch_add(word_ptr(0), 1, __ATOMIC_SEQ_CST);
			cpu_done++;
		}
		cr_assert_lt(dt_now_s(), end, "atomics did not complete in 90 s");
	}
	while (cpu_done < cpu_adds) {
		__atomic_fetch_add(word_ptr(0), 1, __ATOMIC_SEQ_CST);
		cpu_done++;
	}
	for (w = 0; w < NWORDS; w++) {
		uint64_t final = __atomic_load_n(word_ptr(w), __ATOMIC_SEQ_CST);
		uint32_t j;

		cr_expect_eq(h.norig[w], want[w], "word %u: %u originals for %" PRIu64 " increments",
			     w, h.norig[w], want[w]);
		/* Expect: nothing lost, nothing added to a neighbour. */
		cr_expect_eq(final, want[w] + (w == 0 ? cpu_adds : 0),
			     "word %u ended at %" PRIu64 ", %" PRIu64 " remote + %" PRIu64
			     " CPU increments", w, final, want[w], w == 0 ? cpu_adds : 0);
		if (cpu_adds != 0 && w == 0)
			continue; /* the CPU's increments return no originals */
		/* Expect: every original distinct, exactly 0 .. final - 1. */
		qsort(h.orig[w], h.norig[w], sizeof(uint64_t), cmp_u64);
		for (j = 0; j < h.norig[w]; j++)
			if (h.orig[w][j] != j) {
				cr_expect_fail("word %u: original %" PRIu64 " where %u was due (%s)", w,
					       h.orig[w][j], j,
					       j > 0 && h.orig[w][j] == h.orig[w][j - 1] ?
					       "returned twice" : "skipped");
				break;
			}
	}
	cr_log_info("%u QPs on 2 workers: %u FETCH_ADD and %u CAS each, %" PRIu64
		    " CAS retries, %" PRIu64 " CPU adds", NQP, nfadd, ncas, h.cas_fail, cpu_adds);
}

static unsigned int
one_word(unsigned int qp)
{
	(void)qp;
	return 0;
}

/* Both QPs of pair p (one on each worker) hit word p. */
static unsigned int
pair_word(unsigned int qp)
{
	return qp / 2;
}

static bool
whole_tag(uint64_t v, unsigned int nwriters, uint32_t nwrites)
{
	uint64_t tag = v & 0xFFFF;

	/* tag = writer << 13 | (seq + 1): see atomic_write_not_torn */
	return v == tag * LANES && (v == 0 ||
		((tag >> 13) < nwriters && (tag & 0x1FFF) >= 1 && (tag & 0x1FFF) <= nwrites));
}

static void
post_atomic_write(struct aqp *a, uint64_t v)
{
	struct uroce_send_wr wr;
	int rc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = v;
	wr.opcode = UROCE_WR_ATOMIC_WRITE;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.atomic_write.remote_addr = (uintptr_t)word_ptr(0);
	wr.wr.atomic_write.rkey = h.mr->rkey;
	memcpy(wr.wr.atomic_write.data, &v, 8);
	rc = uroce_post_send(a->qp, &wr, NULL);
	cr_assert_eq(rc, 0, "QP %u post: %s", a->idx, strerror(-rc));
	a->posted++;
	a->inflight++;
}

TestSuite(atomics_2w, .init = setup, .fini = teardown, .timeout = 180);

Test(atomics_2w, one_word)
{
	run(one_word, 20000, 1000, 0);
}

Test(atomics_2w, neighbouring_words)
{
	run(pair_word, 20000, 1000, 0);
}

Test(atomics_2w, cpu_and_remote)
{
	run(one_word, 20000, 0, 200000);
}

/* Writers: QPs 0, 3, 4 and 7, whose responders (1, 2, 5 and 6) alternate
 * between the workers; readers: the other four, likewise. */
Test(atomics_2w, atomic_write_not_torn)
{
	const uint32_t nwrites = 8000; /* per writer; fits the tag's 13 bits */
	const uint64_t sentinel = 0x5A5A5A5A5A5A5A5Aull;
	uint32_t wrote[NQP] = {0}, reads = 0, cpu_loads = 0;
	uint64_t last[NQP] = {0}, final;
	unsigned int i, busy, nwriters = 0, writer_of[NQP];
	double end = dt_now_s() + 90;

	for (i = 1; i < NWORDS; i++)
		*word_ptr(i) = sentinel;
	for (i = 0; i < NQP; i++)
		writer_of[i] = (i % 4 == 0 || i % 4 == 3) ? nwriters++ : NQP;
	cr_assert_eq(nwriters, 4);
	do {
		busy = 0;
		for (i = 0; i < NQP; i++) {
			struct aqp *a = &h.q[i];
			struct uroce_wc wc[16];
			int n, k;

			while (a->inflight < INFLIGHT) {
				if (writer_of[i] < NQP && wrote[i] < nwrites) {
					uint64_t tag = (uint64_t)writer_of[i] << 13 | (wrote[i] + 1);

					post_atomic_write(a, tag * LANES);
					wrote[i]++;
				} else if (writer_of[i] == NQP && a->posted < nwrites) {
					post(a, K_FADD, 0, 0);
				} else {
					break;
				}
			}
			n = uroce_poll_cq(a->cq, 16, wc);
			cr_assert_geq(n, 0, "poll_cq: %s", strerror(-n));
			for (k = 0; k < n; k++) {
				cr_assert_eq(wc[k].status, UROCE_WC_SUCCESS, "QP %u: %s", a->idx,
					     uroce_wc_status_name(wc[k].status));
				if (writer_of[i] < NQP) {
					cr_assert_eq(wc[k].opcode, UROCE_WC_ATOMIC_WRITE);
					last[i] = wc[k].wr_id;
				} else {
					uint64_t v = *res_ptr(a, a->completed % DEPTH);

					cr_assert(whole_tag(v, nwriters, nwrites),
						  "QP %u read a torn value %#" PRIx64, a->idx, v);
					reads++;
				}
				a->completed++;
				a->inflight--;
			}
			if (a->inflight > 0 || (writer_of[i] < NQP ? wrote[i] < nwrites :
						a->posted < nwrites))
				busy++;
		}
		if (busy > 0) {
			uint64_t v = __atomic_load_n(word_ptr(0), __ATOMIC_ACQUIRE);

			cr_assert(whole_tag(v, nwriters, nwrites),
				  "the CPU loaded a torn value %#" PRIx64, v);
			cpu_loads++;
		}
		cr_assert_lt(dt_now_s(), end, "ATOMIC WRITEs did not complete in 90 s");
	} while (busy > 0);
	final = __atomic_load_n(word_ptr(0), __ATOMIC_ACQUIRE);
	cr_expect(whole_tag(final, nwriters, nwrites) && final != 0, "final %#" PRIx64, final);
	/* Expect: the word holds the last write of one of the writers
	 * (each QP's writes execute in order, IBA C9-28 ordering). */
	for (i = 0; i < NQP; i++)
		if (writer_of[i] < NQP && last[i] == final)
			break;
	cr_expect_lt(i, NQP, "final %#" PRIx64 " is no writer's last write", final);
	for (i = 1; i < NWORDS; i++)
		cr_expect_eq(*word_ptr(i), sentinel, "word %u disturbed: %#" PRIx64, i,
			     *word_ptr(i));
	cr_log_info("4 writers x %u ATOMIC WRITEs, %u FETCH_ADD-0 reads, %u CPU loads, no tear",
		    nwrites, reads, cpu_loads);
}
