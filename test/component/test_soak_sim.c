/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The soak of test/dpdk/test_soak.sh on the simulated wire, deterministic
 * from a seed: one RC QP pair kept busy with WRITE, READ, SEND and
 * FETCH_ADD, up to 32 at once (max_rd_atomic 16), for tens of thousands of
 * operations while the wire drops, duplicates or reorders. Checks, as the
 * dpdk test: every completion successful, every WRITE's and READ's bytes
 * right, every SEND received once and in order, every FETCH_ADD executed
 * exactly once (the k-th returns k). A failure names the operation, its
 * kind and the simulated time, so that the seed replays it exactly.
 *
 * Each fault alone, at the rates of the dpdk soak (1 % duplication, 1 %
 * reordering, 5 % loss), at a long retransmit timeout (67 ms) so that
 * nothing but a protocol bug can exhaust retry_cnt = 7.
 */

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simwire.h"

#define DEPTH 32u
#define SLOT 4096u
#define NSLOT DEPTH

enum { OP_WRITE, OP_READ, OP_SEND, OP_FADD };
static const char *const op_names[] = {"WRITE", "READ", "SEND", "FETCH_ADD"};

struct fl {
	int op;
	uint64_t seq;   /* per kind */
	uint64_t n;     /* operation number overall */
	uint32_t len;
	bool busy;
};

struct soak {
	struct simwire *sw;
	struct sim_side s[2];
	uint8_t *a, *b;   /* side 0: sources, READ and atomic results; side 1: targets */
	struct uroce_eng_mr *ma, *mb;
	struct fl fl[NSLOT];
	uint64_t rng, n_posted, n_done, send_seq, recv_seq, fadd_seq;
	uint32_t recv_len[NSLOT];
	bool failed;
	uint32_t jump_ppm, jump_us;
	uint32_t op_mask;
};

/* Side 0 buffer: SRC | RD | ATOM results; side 1: DST | RECV | counter. */
#define A_SRC 0
#define A_RD (NSLOT * SLOT)
#define A_ATOM (2 * NSLOT * SLOT)
#define B_DST 0
#define B_RECV (NSLOT * SLOT)
#define B_CTR (2 * NSLOT * SLOT)
#define BUF (2 * NSLOT * SLOT + 4096)
#define IOVA_A 0x10000000ull
#define IOVA_B 0x20000000ull

static uint8_t
pat(uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 2654435761u >> 7 ^ i * 31u ^ i >> 8);
}

static uint64_t
rnd(struct soak *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

static void
post_recv(struct soak *s, uint32_t slot)
{
	struct uroce_wr_sge g = {IOVA_B + B_RECV + (uint64_t)slot * SLOT, SLOT,
				  uroce_eng_mr_lkey(s->mb)};
	struct uroce_eng_recv_wr w = {.wr_id = slot, .sg_list = &g, .num_sge = 1};

	cr_assert_eq(uroce_eng_post_recv(s->s[1].qp, &w, NULL), 0);
}

static void
post_one(struct soak *s, uint32_t slot)
{
	struct fl *f = &s->fl[slot];
	uint64_t off = (uint64_t)slot * SLOT, r = rnd(s);
	struct uroce_wr_sge g;
	struct uroce_eng_send_wr w;
	uint32_t j;

	f->op = (int)(r % 4);
	/* SOAK_SIM_MIX=MASK (bit 0 WRITE, 1 READ, 2 SEND, 3 FETCH_ADD), as
	 * soak_client --ops: the first allowed operation from the drawn one. */
	while (s->op_mask != 0 && !(s->op_mask & 1u << f->op))
		f->op = (f->op + 1) % 4;
	f->len = 1 + (uint32_t)(r >> 20) % SLOT;
	f->n = s->n_posted++;
	f->busy = true;
	memset(&w, 0, sizeof(w));
	w.wr_id = slot;
	w.sg_list = &g;
	w.num_sge = 1;
	w.send_flags = UROCE_SEND_SIGNALED;
	g = (struct uroce_wr_sge){IOVA_A + A_SRC + off, f->len, uroce_eng_mr_lkey(s->ma)};
	switch (f->op) {
	case OP_WRITE:
		f->seq = f->n;
		for (j = 0; j < f->len; j++)
			s->a[A_SRC + off + j] = pat(f->seq, j);
		w.opcode = UROCE_WR_RDMA_WRITE;
		w.wr.rdma.remote_addr = IOVA_B + B_DST + off;
		w.wr.rdma.rkey = uroce_eng_mr_rkey(s->mb);
		break;
	case OP_READ:
		memset(s->a + A_RD + off, 0, f->len);
		g.addr = IOVA_A + A_RD + off;
		w.opcode = UROCE_WR_RDMA_READ;
		w.wr.rdma.remote_addr = IOVA_B + B_DST + off;
		w.wr.rdma.rkey = uroce_eng_mr_rkey(s->mb);
		break;
	case OP_SEND:
		f->seq = s->send_seq++;
		if (f->len < 8)
			f->len = g.length = 8;
		for (j = 0; j < f->len; j++)
			s->a[A_SRC + off + j] = pat(f->seq ^ 0xABCD, j);
		memcpy(s->a + A_SRC + off, &f->seq, 8);
		s->recv_len[f->seq % NSLOT] = f->len;
		w.opcode = UROCE_WR_SEND;
		break;
	default:
		f->seq = s->fadd_seq++;
		f->len = 8;
		g = (struct uroce_wr_sge){IOVA_A + A_ATOM + (uint64_t)slot * 8, 8,
					   uroce_eng_mr_lkey(s->ma)};
		w.opcode = UROCE_WR_ATOMIC_FETCH_AND_ADD;
		w.wr.atomic.remote_addr = IOVA_B + B_CTR;
		w.wr.atomic.rkey = uroce_eng_mr_rkey(s->mb);
		w.wr.atomic.compare_add = 1;
		break;
	}
	cr_assert_eq(uroce_eng_post_send(s->s[0].qp, &w, NULL), 0);
}

static void
fail(struct soak *s, const struct fl *f, const char *what, unsigned int status)
{
	if (!s->failed)
		cr_log_error("operation %llu (%s, %u bytes) at %.3f s simulated: %s %s",
			     (unsigned long long)f->n, op_names[f->op], f->len,
			     (double)simwire_now(s->sw) / 1e6, what,
			     status ? uroce_wc_status_str(status) : "");
	s->failed = true;
}

static void
complete(struct soak *s)
{
	struct uroce_eng_wc wc[16];
	int n, k;

	n = uroce_eng_poll_cq(s->s[0].scq, 16, wc);
	for (k = 0; k < n; k++) {
		struct fl *f = &s->fl[wc[k].wr_id];
		uint64_t off = wc[k].wr_id * SLOT, old;

		if (wc[k].status != UROCE_WC_SUCCESS) {
			fail(s, f, "completed with", wc[k].status);
		} else if (f->op == OP_WRITE) {
			for (uint32_t j = 0; j < f->len; j++)
				if (s->b[B_DST + off + j] != pat(f->seq, j)) {
					fail(s, f, "bytes landed wrong", 0);
					break;
				}
		} else if (f->op == OP_READ) {
			if (memcmp(s->a + A_RD + off, s->b + B_DST + off, f->len) != 0)
				fail(s, f, "read wrong bytes", 0);
		} else if (f->op == OP_FADD) {
			memcpy(&old, s->a + A_ATOM + wc[k].wr_id * 8, 8);
			if (old != f->seq)
				fail(s, f, "returned another count", 0);
		}
		f->busy = false;
		s->n_done++;
	}
	n = uroce_eng_poll_cq(s->s[1].rcq, 16, wc);
	for (k = 0; k < n; k++) {
		uint8_t *m = s->b + B_RECV + wc[k].wr_id * SLOT;
		uint64_t seq;
		struct fl dummy = {.op = OP_SEND, .n = s->recv_seq};

		memcpy(&seq, m, 8);
		if (wc[k].status != UROCE_WC_SUCCESS)
			fail(s, &dummy, "receive completed with", wc[k].status);
		else if (seq != s->recv_seq || wc[k].byte_len != s->recv_len[seq % NSLOT])
			fail(s, &dummy, "received out of order or with a wrong length", 0);
		s->recv_seq++;
		post_recv(s, (uint32_t)wc[k].wr_id);
	}
}

/* @return operations completed before the first failure, or @p nops. */
static uint64_t
run_soak_conf(const struct simwire_conf *wc0, uint64_t nops)
{
	struct simwire_conf wc = *wc0;
	struct sim_qp_opts o = {.timeout = 12, .retry_cnt = 7, .rnr_retry = 7, .psn0 = 0xFFFF00,
				.psn1 = 0x500};
	struct soak *s = calloc(1, sizeof(*s));
	uint64_t done, end_us, seed = wc.seed;
	uint32_t i, counter, drop = wc.drop_ppm, dup = wc.dup_ppm, reorder = wc.reorder_ppm;
	struct simwire_stats st;

	cr_assert_not_null(s);
	s->rng = seed * 0x9E3779B97F4A7C15ull | 1;
	if (getenv("SOAK_SIM_MIX") != NULL)
		s->op_mask = (uint32_t)strtoul(getenv("SOAK_SIM_MIX"), NULL, 0) & 15;
	if (getenv("SOAK_SIM_JUMP_PPM") != NULL) {
		s->jump_ppm = (uint32_t)strtoul(getenv("SOAK_SIM_JUMP_PPM"), NULL, 0);
		s->jump_us = getenv("SOAK_SIM_JUMP_US") != NULL ?
			     (uint32_t)strtoul(getenv("SOAK_SIM_JUMP_US"), NULL, 0) : 40000;
		if (s->jump_us == 0)
			s->jump_us = 1;
	}
	s->sw = simwire_create(&wc);
	cr_assert_not_null(s->sw);
	cr_assert_eq(sim_pair_create(s->sw, s->s, &o, DEPTH, 256), 0);
	s->a = calloc(1, BUF);
	s->b = calloc(1, BUF);
	cr_assert(s->a != NULL && s->b != NULL);
	s->ma = uroce_eng_mr_reg(s->s[0].pd, s->a, IOVA_A, BUF, UROCE_ACCESS_LOCAL_WRITE);
	s->mb = uroce_eng_mr_reg(s->s[1].pd, s->b, IOVA_B, BUF, UROCE_ACCESS_LOCAL_WRITE |
				 UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ |
				 UROCE_ACCESS_REMOTE_ATOMIC);
	cr_assert(s->ma != NULL && s->mb != NULL);
	for (i = 0; i < NSLOT; i++)
		post_recv(s, i);
	end_us = simwire_now(s->sw) + 3600ull * 1000000;
	while (!s->failed && s->n_done < nops && simwire_now(s->sw) < end_us) {
		for (i = 0; i < NSLOT && s->n_posted < nops; i++)
			if (!s->fl[i].busy)
				post_one(s, i);
		if (simwire_step(s->sw) == 0) {
			/* Idle: on to the next delivery or deadline, whichever
			 * comes first (a reordered packet arrives when it is due,
			 * not after the next retransmission timeout). */
			uint64_t d = simwire_next_event(s->sw);

			simwire_advance(s->sw, d != UINT64_MAX && d > simwire_now(s->sw) ?
					d - simwire_now(s->sw) : 1);
		} else {
			simwire_advance(s->sw, 1);
		}
		/* A host that was not scheduled for a while: the clock jumps
		 * with packets on the wire (SOAK_SIM_JUMP_PPM per step, up to
		 * SOAK_SIM_JUMP_US). */
		if (s->jump_ppm != 0 && rnd(s) % 1000000u < s->jump_ppm)
			simwire_advance(s->sw, rnd(s) % s->jump_us);
		complete(s);
	}
	done = s->n_done;
	memcpy(&counter, s->b + B_CTR, 4);
	if (!s->failed) {
		cr_expect_eq(s->n_done, nops, "%llu of %llu operations completed",
			     (unsigned long long)s->n_done, (unsigned long long)nops);
		cr_expect_eq(counter, (uint32_t)s->fadd_seq, "counter %u after %llu FETCH_ADDs",
			     counter, (unsigned long long)s->fadd_seq);
	}
	cr_expect_not(s->failed, "seed %llu: failed after %llu operations (see the log)",
		      (unsigned long long)seed, (unsigned long long)done);
	st = simwire_stats(s->sw);
	cr_log_info("seed %llu drop %u dup %u reorder %u ppm%s: %llu operations, %.3f s "
		    "simulated; wire: %llu dropped, %llu duplicated, %llu reordered",
		    (unsigned long long)seed, drop, dup, reorder, wc.rx_faults ? " (at RX)" : "",
		    (unsigned long long)done, (double)simwire_now(s->sw) / 1e6,
		    (unsigned long long)st.dropped, (unsigned long long)st.duplicated,
		    (unsigned long long)st.reordered);
	sim_pair_destroy(s->s);
	uroce_eng_mr_dereg(s->ma);
	uroce_eng_mr_dereg(s->mb);
	simwire_destroy(s->sw);
	free(s->a);
	free(s->b);
	free(s);
	return done;
}

static uint64_t
run_soak(uint64_t seed, uint32_t drop, uint32_t dup, uint32_t reorder, uint64_t nops)
{
	struct simwire_conf wc = {.seed = seed, .drop_ppm = drop, .dup_ppm = dup,
				  .reorder_ppm = reorder, .delay_us = 5};

	return run_soak_conf(&wc, nops);
}

/* As uroced's fault_* keys at each receiving port (test_soak.sh). */
static uint64_t
run_soak_rx(uint64_t seed, uint64_t nops)
{
	struct simwire_conf wc = {.seed = seed, .drop_ppm = 50000, .dup_ppm = 10000,
				  .reorder_ppm = 10000, .delay_us = 5, .rx_faults = true};

	return run_soak_conf(&wc, nops);
}

Test(soak_sim, duplication_1pct, .timeout = 240)
{
	run_soak(1, 0, 10000, 0, 20000);
}

Test(soak_sim, reordering_1pct, .timeout = 240)
{
	run_soak(2, 0, 0, 10000, 20000);
}

Test(soak_sim, loss_5pct, .timeout = 240)
{
	run_soak(3, 50000, 0, 0, 20000);
}

Test(soak_sim, loss_dup_reorder, .timeout = 240)
{
	run_soak(4, 50000, 10000, 10000, 20000);
}

/* SOAK_SIM_SEEDS=FIRST-LAST [SOAK_SIM_OPS=N] [SOAK_SIM_RX=1]: more seeds of the
 * full mix (faults at the receiving ports with SOAK_SIM_RX), for a hunt;
 * skipped (loudly) without it. */
Test(soak_sim, explore, .timeout = 3600)
{
	const char *e = getenv("SOAK_SIM_SEEDS"), *o = getenv("SOAK_SIM_OPS");
	unsigned long first, last, seed, bad = 0;
	uint64_t nops = o != NULL ? strtoull(o, NULL, 0) : 20000;

	if (e == NULL || sscanf(e, "%lu-%lu", &first, &last) != 2)
		cr_skip_test("SOAK_SIM_SEEDS=FIRST-LAST not set");
	for (seed = first; seed <= last; seed++)
		if ((getenv("SOAK_SIM_RX") != NULL ? run_soak_rx(seed, nops) :
		     run_soak(seed, 50000, 10000, 10000, nops)) < nops)
			bad++;
	cr_log_info("%lu of %lu seeds failed", bad, last - first + 1);
}
