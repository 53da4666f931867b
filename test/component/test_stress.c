/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Stress: several RC QP pairs, a random mix of SEND, WRITE_WITH_IMM, READ
 * and FETCH_ADD, at 0%, 1%, 10% and 30% loss plus duplication, reordering
 * and corruption. Checks: every message arrives exactly once, in order,
 * with the right bytes; every READ returns the right bytes; N fetch-and-adds
 * leave exactly N and return each of 0..N-1 once; every WQE completes with
 * success.
 */

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simwire.h"

#define NQP 4
#define NMSG 150
#define MAXLEN (3 * 1024 + 7)
#define SLOT 4096

enum kind { K_SEND, K_WRITE_IMM, K_READ, K_FA };

struct pair {
	struct uroce_eng_qp *qp[2];
	uint8_t *src;        /* side 0: message sources, one slot per message */
	uint8_t *dst;        /* side 0: READ destinations and FA results */
	uint8_t *rbuf;       /* side 1: receive buffers, one slot per message */
	uint8_t *wbuf;       /* side 1: WRITE targets, one slot per message */
	uint8_t *rsrc;       /* side 1: READ source */
	uint64_t *counter;   /* side 1: the FA target */
	struct uroce_eng_mr *mr[5];
	enum kind kind[NMSG];
	uint32_t len[NMSG];
	uint32_t recv_seq[NMSG]; /* message number of the i-th recv-consuming WR */
	uint32_t n_recv_msgs;
	uint32_t n_fa;
	uint32_t send_done;
	uint32_t recv_done;
	uint8_t fa_seen[NMSG];
	bool failed;
	bool retry_exc;      /* ended with RETRY_EXC_ERR (allowed when tolerant) */
};

struct stress {
	struct simwire *sw;
	struct sim_side s[2];
	struct pair p[NQP];
	uint64_t rng;
	bool tolerant;
};

static uint32_t
rnd(struct stress *st)
{
	st->rng ^= st->rng << 13;
	st->rng ^= st->rng >> 7;
	st->rng ^= st->rng << 17;
	return (uint32_t)st->rng;
}

static uint8_t
pat(uint32_t qp, uint32_t msg, uint32_t i)
{
	return (uint8_t)(qp * 101 + msg * 7 + i * 13 + (i >> 7));
}

static void
setup_pair(struct stress *st, int q)
{
	struct pair *pr = &st->p[q];
	int acc = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ |
		  UROCE_ACCESS_REMOTE_ATOMIC;
	uint32_t i;

	pr->src = calloc(NMSG, SLOT);
	pr->dst = calloc(NMSG, SLOT);
	pr->rbuf = calloc(NMSG, SLOT);
	pr->wbuf = calloc(NMSG, SLOT);
	pr->rsrc = calloc(1, SLOT);
	pr->counter = calloc(1, 8);
	cr_assert(pr->src && pr->dst && pr->rbuf && pr->wbuf && pr->rsrc && pr->counter);
	for (i = 0; i < SLOT; i++)
		pr->rsrc[i] = pat(q, 9999, i);
	pr->mr[0] = uroce_eng_mr_reg(st->s[0].pd, pr->src, 0x100000, (uint64_t)NMSG * SLOT, 0);
	pr->mr[1] = uroce_eng_mr_reg(st->s[0].pd, pr->dst, 0x200000000ull, (uint64_t)NMSG * SLOT,
				 UROCE_ACCESS_LOCAL_WRITE);
	pr->mr[2] = uroce_eng_mr_reg(st->s[1].pd, pr->rbuf, 0x300000, (uint64_t)NMSG * SLOT,
				 UROCE_ACCESS_LOCAL_WRITE);
	pr->mr[3] = uroce_eng_mr_reg(st->s[1].pd, pr->wbuf, 0x7000000000ull, (uint64_t)NMSG * SLOT,
				 acc);
	pr->mr[4] = uroce_eng_mr_reg(st->s[1].pd, pr->rsrc, 0x9000, SLOT + 8, acc);
	/* rsrc and counter share nothing: the counter has its own MR slot */
	for (i = 0; i < 5; i++)
		cr_assert_not_null(pr->mr[i]);
}

static struct uroce_eng_mr *counter_mr[NQP];
static bool sends_only;

static void
post_all(struct stress *st, int q)
{
	struct pair *pr = &st->p[q];
	uint32_t i;

	for (i = 0; i < NMSG; i++) {
		struct uroce_wr_sge sge;
		struct uroce_eng_send_wr wr;
		uint32_t r = rnd(st) % 100, j;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = i;
		wr.send_flags = UROCE_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (sends_only)
			r = r % 65;
		pr->kind[i] = r < 40 ? K_SEND : r < 65 ? K_WRITE_IMM : r < 85 ? K_READ : K_FA;
		pr->len[i] = rnd(st) % (MAXLEN + 1);
		switch (pr->kind[i]) {
		case K_SEND:
		case K_WRITE_IMM:
			for (j = 0; j < pr->len[i]; j++)
				pr->src[(size_t)i * SLOT + j] = pat(q, i, j);
			sge = (struct uroce_wr_sge){ 0x100000 + (uint64_t)i * SLOT, pr->len[i],
						  uroce_eng_mr_lkey(pr->mr[0]) };
			wr.imm_data = i;
			if (pr->kind[i] == K_SEND) {
				wr.opcode = UROCE_WR_SEND_WITH_IMM;
			} else {
				wr.opcode = UROCE_WR_RDMA_WRITE_WITH_IMM;
				wr.wr.rdma.remote_addr = 0x7000000000ull + (uint64_t)i * SLOT;
				wr.wr.rdma.rkey = uroce_eng_mr_rkey(pr->mr[3]);
			}
			pr->recv_seq[pr->n_recv_msgs++] = i;
			break;
		case K_READ:
			if (pr->len[i] > SLOT)
				pr->len[i] = SLOT;
			sge = (struct uroce_wr_sge){ 0x200000000ull + (uint64_t)i * SLOT, pr->len[i],
						  uroce_eng_mr_lkey(pr->mr[1]) };
			wr.opcode = UROCE_WR_RDMA_READ;
			wr.wr.rdma.remote_addr = 0x9000;
			wr.wr.rdma.rkey = uroce_eng_mr_rkey(pr->mr[4]);
			break;
		case K_FA:
			pr->len[i] = 8;
			sge = (struct uroce_wr_sge){ 0x200000000ull + (uint64_t)i * SLOT, 8,
						  uroce_eng_mr_lkey(pr->mr[1]) };
			wr.opcode = UROCE_WR_ATOMIC_FETCH_AND_ADD;
			wr.wr.atomic.remote_addr = 0xA0000;
			wr.wr.atomic.rkey = uroce_eng_mr_rkey(counter_mr[q]);
			wr.wr.atomic.compare_add = 1;
			pr->n_fa++;
			break;
		}
		cr_assert_eq(uroce_eng_post_send(pr->qp[0], &wr, NULL), 0);
	}
	for (i = 0; i < pr->n_recv_msgs; i++) {
		struct uroce_wr_sge sge = { 0x300000 + (uint64_t)i * SLOT, SLOT,
					 uroce_eng_mr_lkey(pr->mr[2]) };
		struct uroce_eng_recv_wr rwr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };

		cr_assert_eq(uroce_eng_post_recv(pr->qp[1], &rwr, NULL), 0);
	}
}

static void
check_send_wc(struct stress *st, int q, const struct uroce_eng_wc *wc)
{
	struct pair *pr = &st->p[q];
	uint32_t i = pr->send_done, j;

	if (st->tolerant && wc->wr_id == i &&
	    ((!pr->retry_exc && wc->status == UROCE_WC_RETRY_EXC_ERR) ||
	     (pr->retry_exc && wc->status == UROCE_WC_WR_FLUSH_ERR))) {
		/* IBA 9.7.6.1.3: retry_cnt exhausted is the specified outcome
		 * when 8 attempts in a row fail; everything after is flushed. */
		pr->retry_exc = true;
		pr->send_done++;
		return;
	}
	if (wc->status != UROCE_WC_SUCCESS || wc->wr_id != i || pr->retry_exc) {
		cr_log_error("qp %d send wc %u: status %s wr_id %llu", q, i,
			     uroce_wc_status_str(wc->status), (unsigned long long)wc->wr_id);
		pr->failed = true;
		return;
	}
	if (pr->kind[i] == K_READ) {
		for (j = 0; j < pr->len[i]; j++)
			if (pr->dst[(size_t)i * SLOT + j] != pat(q, 9999, j)) {
				cr_log_error("qp %d READ %u byte %u wrong", q, i, j);
				pr->failed = true;
				break;
			}
	} else if (pr->kind[i] == K_FA) {
		uint64_t orig;

		memcpy(&orig, pr->dst + (size_t)i * SLOT, 8);
		if (orig >= NMSG || pr->fa_seen[orig]) {
			cr_log_error("qp %d FA %u returned %llu twice or out of range", q, i,
				     (unsigned long long)orig);
			pr->failed = true;
		} else {
			pr->fa_seen[orig] = 1;
		}
	}
	pr->send_done++;
}

static void
check_recv_wc(struct stress *st, int q, const struct uroce_eng_wc *wc)
{
	struct pair *pr = &st->p[q];
	uint32_t k = pr->recv_done, m = pr->recv_seq[k], j;
	const uint8_t *data;

	if (wc->status != UROCE_WC_SUCCESS || wc->wr_id != k || wc->imm_data != m ||
	    wc->byte_len != pr->len[m]) {
		cr_log_error("qp %d recv %u: %s wr_id %llu imm %u (want %u) len %u (want %u)",
			     q, k, uroce_wc_status_str(wc->status), (unsigned long long)wc->wr_id,
			     wc->imm_data, m, wc->byte_len, pr->len[m]);
		pr->failed = true;
		return;
	}
	if (pr->kind[m] == K_SEND) {
		if (wc->opcode != UROCE_WC_RECV)
			pr->failed = true;
		data = pr->rbuf + (size_t)k * SLOT;
	} else {
		if (wc->opcode != UROCE_WC_RECV_RDMA_WITH_IMM)
			pr->failed = true;
		data = pr->wbuf + (size_t)m * SLOT;
	}
	for (j = 0; j < pr->len[m]; j++)
		if (data[j] != pat(q, m, j)) {
			cr_log_error("qp %d msg %u byte %u wrong", q, m, j);
			pr->failed = true;
			break;
		}
	pr->recv_done++;
}

static bool
all_done(void *arg)
{
	struct stress *st = arg;
	struct uroce_eng_wc wc[32];
	bool done = true;
	int n, i, q;

	/* One CQ per side is shared by all QPs: dispatch by QP number. */
	while ((n = uroce_eng_poll_cq(st->s[0].scq, 32, wc)) > 0)
		for (i = 0; i < n; i++)
			for (q = 0; q < NQP; q++)
				if (wc[i].qp_num == uroce_eng_qp_num(st->p[q].qp[0]))
					check_send_wc(st, q, &wc[i]);
	while ((n = uroce_eng_poll_cq(st->s[1].rcq, 32, wc)) > 0)
		for (i = 0; i < n; i++)
			for (q = 0; q < NQP; q++)
				if (wc[i].qp_num == uroce_eng_qp_num(st->p[q].qp[1]))
					check_recv_wc(st, q, &wc[i]);
	for (q = 0; q < NQP; q++) {
		if (st->p[q].failed)
			return true;
		if (st->p[q].send_done < NMSG ||
		    (!st->p[q].retry_exc && st->p[q].recv_done < st->p[q].n_recv_msgs))
			done = false;
	}
	return done;
}

static int drop_only_from;
static bool late_icrc;
static uint32_t corrupt_ppm = 5000;

static int
run_stress(uint32_t drop_ppm, uint64_t seed, bool tolerant)
{
	struct simwire_conf wc = {
		.seed = seed, .drop_ppm = drop_ppm, .dup_ppm = 20000, .reorder_ppm = 50000,
		.corrupt_ppm = corrupt_ppm, .delay_us = 2, .reorder_us = 20,
	};

	wc.drop_only_from = drop_only_from;
	wc.late_icrc = late_icrc;
	if (getenv("STRESS_SEED") != NULL)
		wc.seed = seed = (uint64_t)atoll(getenv("STRESS_SEED"));
	if (getenv("STRESS_CLEAN") != NULL)
		wc.dup_ppm = wc.reorder_ppm = wc.corrupt_ppm = 0;
	if (getenv("STRESS_DUP") != NULL)
		wc.dup_ppm = (uint32_t)atoi(getenv("STRESS_DUP"));
	if (getenv("STRESS_REORDER") != NULL)
		wc.reorder_ppm = (uint32_t)atoi(getenv("STRESS_REORDER"));
	if (getenv("STRESS_CORRUPT") != NULL)
		wc.corrupt_ppm = (uint32_t)atoi(getenv("STRESS_CORRUPT"));
	struct sim_qp_opts o = { .mtu = UROCE_MTU_1024, .timeout = 5, .retry_cnt = 7,
				 .rnr_retry = 7, .psn0 = 0xFFFF00, .psn1 = 0x123 };
	struct stress *st = calloc(1, sizeof(*st));
	struct simwire_stats ss;
	uint64_t counter;
	int q, i, n_exc = 0;
	bool ok;

	cr_assert_not_null(st);
	st->tolerant = tolerant;
	st->rng = seed * 2654435761u + 1;
	st->sw = simwire_create(&wc);
	cr_assert_not_null(st->sw);
	for (i = 0; i < 2; i++) {
		st->s[i].pd = uroce_eng_pd_alloc(simwire_engine(st->sw, i));
		st->s[i].scq = uroce_eng_cq_create(simwire_engine(st->sw, i), 4096, NULL);
		st->s[i].rcq = uroce_eng_cq_create(simwire_engine(st->sw, i), 4096, NULL);
	}
	for (q = 0; q < NQP; q++) {
		st->p[q].qp[0] = sim_qp_create(&st->s[0], UROCE_QPT_RC, 256);
		st->p[q].qp[1] = sim_qp_create(&st->s[1], UROCE_QPT_RC, 256);
		cr_assert_eq(sim_connect(st->sw, st->p[q].qp[0], st->p[q].qp[1], &o), 0);
		setup_pair(st, q);
		counter_mr[q] = uroce_eng_mr_reg(st->s[1].pd, st->p[q].counter, 0xA0000, 8,
					     UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_ATOMIC);
		cr_assert_not_null(counter_mr[q]);
		post_all(st, q);
	}
	ok = simwire_run_until(st->sw, all_done, st, 60ull * 1000 * 1000);
	ss = simwire_stats(st->sw);
	cr_log_info("loss %u ppm seed %llu: sent %llu dropped %llu dup %llu reordered %llu "
		    "corrupt %llu, sim time %llu us, retransmits %llu, timeouts %llu",
		    drop_ppm, (unsigned long long)seed, (unsigned long long)ss.sent,
		    (unsigned long long)ss.dropped, (unsigned long long)ss.duplicated,
		    (unsigned long long)ss.reordered, (unsigned long long)ss.corrupted,
		    (unsigned long long)simwire_now(st->sw),
		    (unsigned long long)uroce_eng_counter(simwire_engine(st->sw, 0),
							      UROCE_CNT_RETRANSMITS),
		    (unsigned long long)uroce_eng_counter(simwire_engine(st->sw, 0),
							      UROCE_CNT_LOCAL_ACK_TIMEOUT_ERR));
	cr_expect(ok, "did not finish");
	for (q = 0; q < NQP; q++) {
		struct pair *pr = &st->p[q];

		cr_expect(!pr->failed, "qp %d failed", q);
		cr_expect_eq(pr->send_done, NMSG, "qp %d: %u of %u send completions", q,
			     pr->send_done, NMSG);
		memcpy(&counter, pr->counter, 8);
		/* Every atomic the responder executed applied exactly once. */
		cr_expect_eq(counter, uroce_eng_qp_counter(pr->qp[1], UROCE_CNT_RX_ATOMIC_REQUESTS),
			     "qp %d: counter %llu but %llu executions", q,
			     (unsigned long long)counter,
			     (unsigned long long)uroce_eng_qp_counter(pr->qp[1],
								  UROCE_CNT_RX_ATOMIC_REQUESTS));
		if (pr->retry_exc) {
			n_exc++;
			cr_log_info("qp %d: RETRY_EXC_ERR after %u of %u messages; all delivered "
				    "ones verified", q, pr->recv_done, pr->n_recv_msgs);
			cr_expect_eq(uroce_eng_qp_state(pr->qp[0]), UROCE_QPS_ERR);
		} else {
			cr_expect_eq(pr->recv_done, pr->n_recv_msgs, "qp %d: %u of %u messages",
				     q, pr->recv_done, pr->n_recv_msgs);
			cr_expect_eq(counter, pr->n_fa, "qp %d: %u fetch-and-adds left %llu", q,
				     pr->n_fa, (unsigned long long)counter);
			for (i = 0; i < (int)pr->n_fa; i++)
				cr_expect(pr->fa_seen[i], "qp %d: FA original %d never returned",
					  q, i);
			cr_expect_eq(uroce_eng_qp_state(pr->qp[0]), UROCE_QPS_RTS);
		}
		free(pr->src);
		free(pr->dst);
		free(pr->rbuf);
		free(pr->wbuf);
		free(pr->rsrc);
		free(pr->counter);
	}
	if (drop_ppm > 0)
		cr_expect_gt(ss.dropped, 0);
	if (late_icrc && wc.corrupt_ppm > 0) {
		uint64_t late = 0;

		for (i = 0; i < 2; i++)
			late += uroce_eng_counter(simwire_engine(st->sw, i), UROCE_CNT_RX_ICRC_LATE);
		cr_log_info("late ICRC: %llu corrupted packets caught in the copy of %llu",
			    (unsigned long long)late, (unsigned long long)ss.corrupted);
		cr_expect_gt(late, 0, "no corrupted packet reached the late check");
		cr_expect_leq(late, ss.corrupted);
		cr_expect_eq(ss.late_bad, late, "uroce_eng_rx() answers -EBADMSG for each");
	}
	simwire_destroy(st->sw);
	free(st);
	return n_exc;
}

Test(stress, loss_0, .timeout = 60)
{
	run_stress(0, 1, false);
}

Test(stress, loss_1pct, .timeout = 60)
{
	run_stress(10000, 2, false);
}

Test(stress, loss_10pct, .timeout = 60)
{
	run_stress(100000, 3, false);
}

/* The receivers check a copied payload's ICRC as they copy it (as uroced's
 * loopback does), with one packet in 20 corrupted: a corrupted SEND, WRITE
 * or READ response continuation must be dropped before it changes anything
 * but the bytes it was copying, and the retransmission must put the right
 * bytes there. Every check of run_stress() applies. */
Test(stress, corrupt_5pct_late_icrc, .timeout = 60)
{
	late_icrc = true;
	corrupt_ppm = 50000;
	run_stress(10000, 21, false);
	run_stress(0, 22, false);
}

/*
 * At 30% loss in both directions a READ or ATOMIC at the head of the send
 * queue needs its request and its first response to get through: about one
 * chance in two per attempt. retry_cnt = 7 (not infinite, IBA 9.7.6.1.3)
 * then fails a QP with RETRY_EXC_ERR with probability ~0.5^8 per stall, so
 * with hundreds of stalls per run some QPs may fail, as IBA specifies. This
 * test therefore runs several seeds and checks on every one: nothing is
 * duplicated, reordered or corrupted, each executed atomic applied once,
 * and a QP that fails does so only with RETRY_EXC_ERR then flushes. The
 * number of QPs that completed everything is logged.
 */
Test(stress, loss_30pct, .timeout = 120)
{
	int seed, exc = 0;

	for (seed = 4; seed < 8; seed++)
		exc += run_stress(300000, (uint64_t)seed, true);
	cr_log_info("30%% loss: %d of %d QPs hit RETRY_EXC_ERR", exc, 4 * NQP);
	cr_expect_lt(exc, 4 * NQP, "no QP completed at 30%% loss");
}

/* 30% loss both ways with SEND and WRITE_WITH_IMM only: each resend round
 * carries many AckReq packets, so most runs complete everything; a stall
 * where the head packet or every response is lost 8 times in a row still
 * ends in RETRY_EXC_ERR (seen on 1 seed of 10 in a sweep, see
 * doc/conformance.md), so the same checks as loss_30pct apply. */
Test(stress, loss_30pct_sends_writes_only, .timeout = 120)
{
	int seed, exc = 0;

	sends_only = true;
	for (seed = 12; seed < 16; seed++)
		exc += run_stress(300000, (uint64_t)seed, true);
	cr_log_info("30%% loss, SEND/WRITE only: %d of %d QPs hit RETRY_EXC_ERR", exc, 4 * NQP);
	cr_expect_lt(exc, 4 * NQP, "no QP completed at 30%% loss");
}

/* The same load at 30% loss with retries that a stall cannot exhaust as
 * easily: a longer run where RNR and retransmission must still deliver
 * every message exactly once. Here the loss is one-directional (requests
 * only), so each retransmission round succeeds with 70%. */
Test(stress, loss_30pct_requests_only, .timeout = 120)
{
	drop_only_from = 1;
	run_stress(300000, 11, false);
}

/* Both ends are requester and responder at once on the same QPs: ACKs,
 * NAKs, READ responses and requests share each direction, at 10% loss. */
#define BIMSG 120

struct bidir {
	struct simwire *sw;
	struct sim_side s[2];
	uint8_t *mem[2];
	struct uroce_eng_mr *mr[2];
	uint32_t recv_done[2];
	uint32_t send_done[2];
	bool failed;
};

static bool
bidir_done(void *arg)
{
	struct bidir *b = arg;
	struct uroce_eng_wc wc[16];
	int side, n, i;

	for (side = 0; side < 2; side++) {
		while ((n = uroce_eng_poll_cq(b->s[side].scq, 16, wc)) > 0)
			for (i = 0; i < n; i++) {
				if (wc[i].status != UROCE_WC_SUCCESS ||
				    wc[i].wr_id != b->send_done[side]) {
					cr_log_error("side %d send %u: %s", side,
						     b->send_done[side],
						     uroce_wc_status_str(wc[i].status));
					b->failed = true;
				}
				b->send_done[side]++;
			}
		while ((n = uroce_eng_poll_cq(b->s[side].rcq, 16, wc)) > 0)
			for (i = 0; i < n; i++) {
				uint32_t k = b->recv_done[side], j;
				const uint8_t *d = b->mem[side] + 0x100000 + (size_t)k * SLOT;

				if (wc[i].status != UROCE_WC_SUCCESS || wc[i].imm_data != k) {
					b->failed = true;
				} else {
					for (j = 0; j < wc[i].byte_len; j++)
						if (d[j] != pat(side, k, j)) {
							cr_log_error("side %d msg %u byte %u",
								     side, k, j);
							b->failed = true;
							break;
						}
				}
				b->recv_done[side]++;
			}
	}
	return b->failed || (b->recv_done[0] == BIMSG && b->recv_done[1] == BIMSG &&
			     b->send_done[0] == 2 * BIMSG && b->send_done[1] == 2 * BIMSG);
}

Test(stress, bidirectional_10pct, .timeout = 60)
{
	struct simwire_conf wc = { .seed = 21, .drop_ppm = 100000, .dup_ppm = 20000,
				   .reorder_ppm = 50000, .delay_us = 2, .reorder_us = 20 };
	struct sim_qp_opts o = { .mtu = UROCE_MTU_512, .timeout = 5, .psn0 = 0xFFFFF0,
				 .psn1 = 77 };
	struct bidir *b = calloc(1, sizeof(*b));
	uint32_t i, j;
	int side;

	cr_assert_not_null(b);
	b->sw = simwire_create(&wc);
	cr_assert_eq(sim_pair_create(b->sw, b->s, &o, 512, 4096), 0);
	for (side = 0; side < 2; side++) {
		/* [0, 1 MB): sources; [1 MB, 2 MB): receive slots; 2 MB+: READ area */
		b->mem[side] = calloc(1, 3 << 20);
		b->mr[side] = uroce_eng_mr_reg(b->s[side].pd, b->mem[side], 0, 3 << 20,
					   UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_READ);
		cr_assert_not_null(b->mr[side]);
		for (j = 0; j < SLOT; j++)
			b->mem[side][(2 << 20) + j] = pat(side + 7, 0, j);
	}
	for (side = 0; side < 2; side++) {
		int peer = 1 - side;

		for (i = 0; i < BIMSG; i++) {
			struct uroce_wr_sge rs = { 0x100000 + (uint64_t)i * SLOT, SLOT,
						uroce_eng_mr_lkey(b->mr[side]) };
			struct uroce_eng_recv_wr rw = { .wr_id = i, .sg_list = &rs, .num_sge = 1 };

			cr_assert_eq(uroce_eng_post_recv(b->s[side].qp, &rw, NULL), 0);
		}
		for (i = 0; i < BIMSG; i++) {
			uint32_t len = (i * 997 + (uint32_t)side * 131) % (3 * 512 + 11);
			struct uroce_wr_sge sge = { (uint64_t)i * SLOT, len,
						 uroce_eng_mr_lkey(b->mr[side]) };
			struct uroce_wr_sge rsg = { (uint64_t)(i + BIMSG) * SLOT, 1500,
						 uroce_eng_mr_lkey(b->mr[side]) };
			struct uroce_eng_send_wr wr, rd;

			for (j = 0; j < len; j++)
				b->mem[side][(size_t)i * SLOT + j] = pat(peer, i, j);
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = 2 * i;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = UROCE_WR_SEND_WITH_IMM;
			wr.imm_data = i;
			wr.send_flags = UROCE_SEND_SIGNALED;
			memset(&rd, 0, sizeof(rd));
			rd.wr_id = 2 * i + 1;
			rd.sg_list = &rsg;
			rd.num_sge = 1;
			rd.opcode = UROCE_WR_RDMA_READ;
			rd.send_flags = UROCE_SEND_SIGNALED;
			rd.wr.rdma.remote_addr = 2 << 20;
			rd.wr.rdma.rkey = uroce_eng_mr_rkey(b->mr[peer]);
			wr.next = &rd;
			cr_assert_eq(uroce_eng_post_send(b->s[side].qp, &wr, NULL), 0);
		}
	}
	cr_expect(simwire_run_until(b->sw, bidir_done, b, 60ull * 1000 * 1000));
	cr_expect(!b->failed);
	if (b->failed)
		for (side = 0; side < 2; side++)
			for (i = 0; i < UROCE_CNT_MAX; i++)
				if (uroce_eng_qp_counter(b->s[side].qp, i) != 0)
					cr_log_info("side %d %s = %llu", side, uroce_eng_counter_name(i),
						    (unsigned long long)uroce_eng_qp_counter(
							    b->s[side].qp, i));
	for (side = 0; side < 2; side++) {
		int peer = 1 - side;

		cr_expect_eq(b->recv_done[side], BIMSG, "side %d got %u messages", side,
			     b->recv_done[side]);
		cr_expect_eq(b->send_done[side], 2 * BIMSG);
		for (i = 0; i < BIMSG; i++)
			for (j = 0; j < 1500; j++)
				if (b->mem[side][(size_t)(i + BIMSG) * SLOT + j] !=
				    pat(peer + 7, 0, j)) {
					cr_expect_fail("side %d READ %u byte %u", side, i, j);
					i = BIMSG;
					break;
				}
	}
	simwire_destroy(b->sw);
	free(b->mem[0]);
	free(b->mem[1]);
	free(b);
}
