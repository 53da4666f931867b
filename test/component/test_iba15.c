/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * IBA 1.5 ATOMIC WRITE and FLUSH (Annex A19) between two engines over the
 * simulated wire: the value lands, a duplicate is answered without being
 * executed again, every refusal completes with the status the IBA gives it,
 * malformed requests are NAKed and counted, and a mixed load survives loss.
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "simwire.h"

#define BUF (64 * 1024)
#define ALL_REMOTE \
	(UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC | \
	 UROCE_ACCESS_FLUSH_GLOBAL | UROCE_ACCESS_FLUSH_PERSISTENT)
#define MR_ACCESS \
	(UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ | \
	 UROCE_ACCESS_REMOTE_ATOMIC | UROCE_ACCESS_FLUSH_GLOBAL)

struct env {
	struct simwire *sw;
	struct sim_side s[2];
	uint8_t *buf[2];
	struct uroce_eng_mr *mr[2];
};

static void
env_init_opts(struct env *e, const struct simwire_conf *wc, int qp_access, int mr_access,
	      uint8_t max_dest_rd_atomic)
{
	struct sim_qp_opts o = { .mtu = UROCE_MTU_1024, .psn0 = 100, .psn1 = 200,
				 .access = qp_access, .max_dest_rd_atomic = max_dest_rd_atomic };
	int i;

	memset(e, 0, sizeof(*e));
	e->sw = simwire_create(wc);
	cr_assert_not_null(e->sw);
	cr_assert_eq(sim_pair_create(e->sw, e->s, &o, 256, 1024), 0);
	for (i = 0; i < 2; i++) {
		e->buf[i] = aligned_alloc(64, BUF);
		cr_assert_not_null(e->buf[i]);
		memset(e->buf[i], 0, BUF);
		e->mr[i] = uroce_eng_mr_reg(e->s[i].pd, e->buf[i], 0x10000000ull * (i + 1), BUF,
					mr_access);
		cr_assert_not_null(e->mr[i]);
	}
}

static void
env_init(struct env *e, int qp_access, int mr_access)
{
	struct simwire_conf wc = { .seed = 1, .delay_us = 1 };

	env_init_opts(e, &wc, qp_access, mr_access, 0);
}

static void
env_fini(struct env *e)
{
	simwire_destroy(e->sw);
	free(e->buf[0]);
	free(e->buf[1]);
}

static uint64_t
riova(uint32_t off)
{
	return 0x20000000ull + off;
}

static int
post_aw(struct env *e, uint32_t roff, uint64_t v, uint64_t id)
{
	struct uroce_eng_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = UROCE_WR_ATOMIC_WRITE;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.atomic_write.remote_addr = riova(roff);
	wr.wr.atomic_write.rkey = uroce_eng_mr_rkey(e->mr[1]);
	memcpy(wr.wr.atomic_write.data, &v, 8);
	return uroce_eng_post_send(e->s[0].qp, &wr, NULL);
}

static int
post_flush(struct env *e, uint32_t rkey, uint32_t roff, uint64_t len, uint8_t type,
	   uint8_t level, uint64_t id)
{
	struct uroce_eng_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = UROCE_WR_FLUSH;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.flush.remote_addr = riova(roff);
	wr.wr.flush.rkey = rkey;
	wr.wr.flush.length = len;
	wr.wr.flush.type = type;
	wr.wr.flush.level = level;
	return uroce_eng_post_send(e->s[0].qp, &wr, NULL);
}

static void
expect_wc(struct env *e, uint64_t id, enum uroce_wc_status st, enum uroce_wc_opcode op)
{
	struct uroce_eng_wc wc;

	cr_assert_eq(sim_wait_cq(e->sw, e->s[0].scq, &wc, 1, 10000000), 1,
		     "no completion for %llu", (unsigned long long)id);
	cr_expect_eq(wc.wr_id, id);
	cr_expect_eq(wc.status, st, "status %s, not %s", uroce_wc_status_str(wc.status),
		     uroce_wc_status_str(st));
	if (st == UROCE_WC_SUCCESS)
		cr_expect_eq(wc.opcode, op);
}

static uint64_t
word_at(const struct env *e, uint32_t off)
{
	uint64_t v;

	memcpy(&v, e->buf[1] + off, 8);
	return v;
}

static uint64_t
cnt(const struct env *e, int side, enum uroce_counter c)
{
	return uroce_eng_counter(simwire_engine(e->sw, side), c);
}

/* The 8 bytes land as they were posted; the completion says ATOMIC_WRITE
 * (IBV_WC_ATOMIC_WRITE, 9), and the request went out as opcode 0x1D with
 * a RETH of length 8, answered by an empty READ Response Only. */
Test(iba15, atomic_write_lands)
{
	uint64_t v = 0x0123456789ABCDEFull;
	const struct sim_cap *c;
	struct env e;

	env_init(&e, ALL_REMOTE, MR_ACCESS);
	cr_expect_eq(UROCE_WC_ATOMIC_WRITE, 9);
	cr_expect_eq(UROCE_WC_FLUSH, 8);
	simwire_set_capture(e.sw, 0, true);
	simwire_set_capture(e.sw, 1, true);
	cr_assert_eq(post_aw(&e, 64, v, 1), 0);
	simwire_settle(e.sw);
	cr_assert_eq(simwire_ncap(e.sw, 0), 1);
	c = simwire_cap(e.sw, 0, 0);
	cr_expect_eq(c->p.opcode, 0x1D);
	cr_expect_eq(c->p.paylen, 8);
	cr_expect_eq(uroce_reth_dma_len(c->p.bth + c->p.info->off_reth), 8);
	cr_expect_eq(uroce_reth_va(c->p.bth + c->p.info->off_reth), riova(64));
	cr_expect_eq(memcmp(c->p.payload, &v, 8), 0);
	simwire_cap_forward(e.sw, 0, 0);
	simwire_settle(e.sw);
	cr_expect_eq(word_at(&e, 64), v);
	cr_assert_eq(simwire_ncap(e.sw, 1), 1);
	c = simwire_cap(e.sw, 1, 0);
	cr_expect_eq(c->p.opcode, 0x10);
	cr_expect_eq(c->p.paylen, 0);
	cr_expect_eq(uroce_aeth_type(uroce_aeth_syndrome(c->p.bth + c->p.info->off_aeth)),
		     UROCE_AETH_ACK);
	simwire_set_capture(e.sw, 0, false);
	simwire_set_capture(e.sw, 1, false);
	simwire_cap_forward(e.sw, 1, 0);
	expect_wc(&e, 1, UROCE_WC_SUCCESS, UROCE_WC_ATOMIC_WRITE);
	cr_expect_eq(cnt(&e, 1, UROCE_CNT_RX_ATOMIC_WRITE_REQUESTS), 1);
	env_fini(&e);
}

/* IBA 1.5 oA19-14/15: a duplicate ATOMIC WRITE is answered from its saved
 * resource and never executed again: a word overwritten locally after the
 * first execution keeps the local value. */
Test(iba15, atomic_write_duplicate_not_executed_twice)
{
	uint64_t local = 0x5555555555555555ull;
	struct env e;

	env_init(&e, ALL_REMOTE, MR_ACCESS);
	simwire_set_capture(e.sw, 0, true);
	cr_assert_eq(post_aw(&e, 128, 0xAAAAAAAAAAAAAAAAull, 1), 0);
	simwire_settle(e.sw);
	cr_assert_eq(simwire_ncap(e.sw, 0), 1);
	simwire_cap_forward(e.sw, 0, 0);
	expect_wc(&e, 1, UROCE_WC_SUCCESS, UROCE_WC_ATOMIC_WRITE);
	cr_expect_eq(word_at(&e, 128), 0xAAAAAAAAAAAAAAAAull);
	memcpy(e.buf[1] + 128, &local, 8);
	simwire_cap_forward(e.sw, 0, 0); /* the same request again */
	simwire_settle(e.sw);
	cr_expect_eq(word_at(&e, 128), local, "a duplicate was executed");
	cr_expect_eq(cnt(&e, 1, UROCE_CNT_RESP_ATOMIC_WRITE_FLUSH_REPLAY), 1);
	cr_expect_eq(cnt(&e, 1, UROCE_CNT_RX_ATOMIC_WRITE_REQUESTS), 1);
	/* The QP goes on working. */
	simwire_set_capture(e.sw, 0, false);
	cr_assert_eq(post_aw(&e, 136, 7, 2), 0);
	expect_wc(&e, 2, UROCE_WC_SUCCESS, UROCE_WC_ATOMIC_WRITE);
	cr_expect_eq(word_at(&e, 136), 7);
	env_fini(&e);
}

/* A misaligned target is the misaligned-atomic NAK (invalid request). */
Test(iba15, atomic_write_misaligned)
{
	struct env e;

	env_init(&e, ALL_REMOTE, MR_ACCESS);
	cr_assert_eq(post_aw(&e, 132, 1, 1), 0);
	expect_wc(&e, 1, UROCE_WC_REM_INV_REQ_ERR, 0);
	cr_expect_eq(word_at(&e, 128), 0);
	cr_expect_eq(word_at(&e, 136), 0);
	env_fini(&e);
}

/* Remote write is needed on the MR and on the QP (REM_ACCESS_ERR). */
Test(iba15, atomic_write_needs_remote_write)
{
	struct env e;

	env_init(&e, ALL_REMOTE, MR_ACCESS & ~UROCE_ACCESS_REMOTE_WRITE);
	cr_assert_eq(post_aw(&e, 64, 1, 1), 0);
	expect_wc(&e, 1, UROCE_WC_REM_ACCESS_ERR, 0);
	cr_expect_eq(word_at(&e, 64), 0);
	env_fini(&e);
	env_init(&e, ALL_REMOTE & ~UROCE_ACCESS_REMOTE_WRITE, MR_ACCESS);
	cr_assert_eq(post_aw(&e, 64, 1, 1), 0);
	expect_wc(&e, 1, UROCE_WC_REM_ACCESS_ERR, 0);
	cr_expect_eq(word_at(&e, 64), 0);
	env_fini(&e);
}

/* FLUSH GLOBAL at selectivity RANGE and MR completes with WC FLUSH; the
 * FETH on the wire is 0x01 and 0x11 (test plan item 17). */
Test(iba15, flush_global_range_and_mr)
{
	uint32_t rkey;
	const struct sim_cap *c;
	struct env e;

	env_init(&e, ALL_REMOTE, MR_ACCESS);
	rkey = uroce_eng_mr_rkey(e.mr[1]);
	simwire_set_capture(e.sw, 0, true);
	cr_assert_eq(post_flush(&e, rkey, 0, 4096, UROCE_FLUSH_GLOBAL, UROCE_FLUSH_RANGE, 1), 0);
	cr_assert_eq(post_flush(&e, rkey, 0, 0, UROCE_FLUSH_GLOBAL, UROCE_FLUSH_MR, 2), 0);
	simwire_settle(e.sw);
	cr_assert_eq(simwire_ncap(e.sw, 0), 2);
	c = simwire_cap(e.sw, 0, 0);
	cr_expect_eq(c->p.opcode, 0x1C);
	cr_expect_eq(uroce_feth_word(c->p.bth + c->p.info->off_feth), 0x01);
	cr_expect_eq(uroce_reth_dma_len(c->p.bth + c->p.info->off_reth), 4096);
	c = simwire_cap(e.sw, 0, 1);
	cr_expect_eq(uroce_feth_word(c->p.bth + c->p.info->off_feth), 0x11);
	simwire_cap_forward(e.sw, 0, 0);
	simwire_cap_forward(e.sw, 0, 1);
	simwire_set_capture(e.sw, 0, false);
	expect_wc(&e, 1, UROCE_WC_SUCCESS, UROCE_WC_FLUSH);
	expect_wc(&e, 2, UROCE_WC_SUCCESS, UROCE_WC_FLUSH);
	cr_expect_eq(cnt(&e, 1, UROCE_CNT_RX_FLUSH_REQUESTS), 2);
	env_fini(&e);
}

/* PERSISTENT is refused (no pmem MRs), even where the QP allows it. */
Test(iba15, flush_persistent_refused)
{
	struct env e;

	env_init(&e, ALL_REMOTE, MR_ACCESS);
	cr_expect_null(uroce_eng_mr_reg(e.s[1].pd, e.buf[1], 0x30000000ull, 4096,
					MR_ACCESS | UROCE_ACCESS_FLUSH_PERSISTENT),
		       "an MR cannot be persistent memory");
	cr_assert_eq(post_flush(&e, uroce_eng_mr_rkey(e.mr[1]), 0, 64, UROCE_FLUSH_PERSISTENT,
				UROCE_FLUSH_RANGE, 1), 0);
	expect_wc(&e, 1, UROCE_WC_REM_ACCESS_ERR, 0);
	env_fini(&e);
}

/* A range outside the MR, an MR without FLUSH_GLOBAL, a QP without it: each
 * a remote access error. */
Test(iba15, flush_access_and_range_refused)
{
	struct env e;

	env_init(&e, ALL_REMOTE, MR_ACCESS);
	cr_assert_eq(post_flush(&e, uroce_eng_mr_rkey(e.mr[1]), BUF - 8, 16, UROCE_FLUSH_GLOBAL,
				UROCE_FLUSH_RANGE, 1), 0);
	expect_wc(&e, 1, UROCE_WC_REM_ACCESS_ERR, 0);
	env_fini(&e);

	env_init(&e, ALL_REMOTE, MR_ACCESS & ~UROCE_ACCESS_FLUSH_GLOBAL);
	cr_assert_eq(post_flush(&e, uroce_eng_mr_rkey(e.mr[1]), 0, 0, UROCE_FLUSH_GLOBAL,
				UROCE_FLUSH_MR, 1), 0);
	expect_wc(&e, 1, UROCE_WC_REM_ACCESS_ERR, 0);
	env_fini(&e);

	env_init(&e, ALL_REMOTE & ~UROCE_ACCESS_FLUSH_GLOBAL, MR_ACCESS);
	cr_assert_eq(post_flush(&e, uroce_eng_mr_rkey(e.mr[1]), 0, 64, UROCE_FLUSH_GLOBAL,
				UROCE_FLUSH_RANGE, 1), 0);
	expect_wc(&e, 1, UROCE_WC_REM_ACCESS_ERR, 0);
	env_fini(&e);
}

/* The requester refuses what it cannot put on the wire: a FETH with no or
 * unknown placement type or level, SGEs, inline, a UC QP. */
Test(iba15, post_time_checks)
{
	struct uroce_wr_sge sge;
	struct uroce_eng_send_wr wr;
	uint32_t rkey;
	struct env e;

	env_init(&e, ALL_REMOTE, MR_ACCESS);
	rkey = uroce_eng_mr_rkey(e.mr[1]);
	cr_expect_eq(post_flush(&e, rkey, 0, 64, 0, UROCE_FLUSH_RANGE, 1), -EINVAL);
	cr_expect_eq(post_flush(&e, rkey, 0, 64, 4, UROCE_FLUSH_RANGE, 1), -EINVAL);
	cr_expect_eq(post_flush(&e, rkey, 0, 64, UROCE_FLUSH_GLOBAL, 2, 1), -EINVAL);
	/* Above 2^31 (the harness reports the engine's -EMSGSIZE as -EINVAL). */
	cr_expect_eq(post_flush(&e, rkey, 0, 1ull << 32, UROCE_FLUSH_GLOBAL, UROCE_FLUSH_RANGE,
				1), -EINVAL);
	memset(&wr, 0, sizeof(wr));
	sge = (struct uroce_wr_sge){ .addr = 0x10000000ull, .length = 8,
				     .lkey = uroce_eng_mr_lkey(e.mr[0]) };
	wr.opcode = UROCE_WR_ATOMIC_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.atomic_write.rkey = rkey;
	cr_expect_eq(uroce_eng_post_send(e.s[0].qp, &wr, NULL), -EINVAL, "SGEs");
	/* Inline SGE addresses are this process's pointers. */
	sge.addr = (uintptr_t)&rkey;
	sge.length = 4;
	wr.send_flags = UROCE_SEND_INLINE;
	cr_expect_eq(uroce_eng_post_send(e.s[0].qp, &wr, NULL), -EINVAL, "inline");
	wr.opcode = UROCE_WR_FLUSH;
	wr.send_flags = 0;
	wr.wr.flush.type = UROCE_FLUSH_GLOBAL;
	cr_expect_eq(uroce_eng_post_send(e.s[0].qp, &wr, NULL), -EINVAL, "FLUSH with SGEs");
	/* Nothing was posted: the QP still works. */
	cr_assert_eq(post_aw(&e, 64, 3, 9), 0);
	expect_wc(&e, 9, UROCE_WC_SUCCESS, UROCE_WC_ATOMIC_WRITE);
	env_fini(&e);
}

/* Inject a request at the responder's ePSN and return what it answered. */
static uint8_t
inject_and_answer(struct env *e, const struct uroce_bth_fields *bth,
		  const struct uroce_ext_fields *ext, const void *pay, uint32_t paylen)
{
	const struct sim_cap *c;
	uint8_t syn;

	simwire_set_capture(e->sw, 1, true);
	cr_assert_eq(simwire_inject(e->sw, 1, bth, ext, pay, paylen), 0);
	simwire_settle(e->sw);
	cr_assert_geq(simwire_ncap(e->sw, 1), 1);
	c = simwire_cap(e->sw, 1, simwire_ncap(e->sw, 1) - 1);
	cr_assert(c->p.info->mask & UROCE_HDR_AETH);
	syn = uroce_aeth_syndrome(c->p.bth + c->p.info->off_aeth);
	simwire_cap_clear(e->sw, 1);
	return syn;
}

/* A hostile or broken requester: reserved FETH bits, an unknown
 * selectivity, no placement type, an ATOMIC WRITE RETH length other than 8
 * are malformed requests: NAK invalid request, counted, nothing executed. */
Test(iba15, malformed_requests_naked)
{
	static const uint32_t bad_feth[] = { 0x41, 0x21, 0x10, 0x80000001u };
	struct uroce_eng_resp_reject rej;
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	uint64_t v = ~0ull;
	struct env e;
	size_t i;

	for (i = 0; i <= UROCE_ARRAY_SIZE(bad_feth); i++) {
		env_init(&e, ALL_REMOTE, MR_ACCESS);
		memset(&bth, 0, sizeof(bth));
		memset(&ext, 0, sizeof(ext));
		bth.pkey = UROCE_DEFAULT_PKEY;
		bth.dqpn = uroce_eng_qp_num(e.s[1].qp);
		bth.psn = 100;
		bth.ackreq = true;
		ext.va = riova(64);
		ext.rkey = uroce_eng_mr_rkey(e.mr[1]);
		if (i < UROCE_ARRAY_SIZE(bad_feth)) {
			bth.opcode = UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_FLUSH);
			ext.feth = bad_feth[i];
			ext.dma_len = 64;
			cr_expect_eq(inject_and_answer(&e, &bth, &ext, NULL, 0),
				     uroce_aeth_nak(UROCE_NAK_INVALID_REQUEST), "FETH 0x%x",
				     bad_feth[i]);
			cr_expect_eq(uroce_eng_qp_resp_rejects(e.s[1].qp, &rej, 1), 1);
			cr_expect_eq(rej.check, UROCE_RCHK_FETH);
			cr_expect_eq(cnt(&e, 1, UROCE_CNT_RX_FLUSH_REQUESTS), 0);
		} else {
			bth.opcode = UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_ATOMIC_WRITE);
			ext.dma_len = 4;
			cr_expect_eq(inject_and_answer(&e, &bth, &ext, &v, 8),
				     uroce_aeth_nak(UROCE_NAK_INVALID_REQUEST));
			cr_expect_eq(word_at(&e, 64), 0);
			cr_expect_eq(cnt(&e, 1, UROCE_CNT_RX_ATOMIC_WRITE_REQUESTS), 0);
		}
		cr_expect_eq(cnt(&e, 1, UROCE_CNT_RESP_REMOTE_INVALID_REQUEST), 1);
		env_fini(&e);
	}
}

/*
 * Under loss, duplication and reordering: WRITEs, each followed by a FLUSH
 * of its range and an ATOMIC WRITE of a flag word, all complete in order
 * and every byte and word ends as posted; retransmitted ATOMIC WRITEs are
 * not executed twice (the flag words hold their one value each).
 */
Test(iba15, mixed_under_loss)
{
	struct simwire_conf wc = { .seed = 7, .delay_us = 2, .drop_ppm = 100000,
				   .dup_ppm = 50000, .reorder_ppm = 50000 };
	const uint32_t n = 64;
	struct uroce_eng_wc got[3];
	uint32_t i, k, rkey;
	struct env e;

	env_init_opts(&e, &wc, ALL_REMOTE, MR_ACCESS, 0);
	rkey = uroce_eng_mr_rkey(e.mr[1]);
	for (i = 0; i < BUF / 2; i++)
		e.buf[0][i] = (uint8_t)(i * 13 + 5);
	for (i = 0; i < n; i++) {
		struct uroce_wr_sge sge = { .addr = 0x10000000ull + i * 256, .length = 256,
					 .lkey = uroce_eng_mr_lkey(e.mr[0]) };
		struct uroce_eng_send_wr wr;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = i * 3;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = UROCE_WR_RDMA_WRITE;
		wr.send_flags = UROCE_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = riova(i * 256);
		wr.wr.rdma.rkey = rkey;
		cr_assert_eq(uroce_eng_post_send(e.s[0].qp, &wr, NULL), 0);
		cr_assert_eq(post_flush(&e, rkey, i * 256, 256, UROCE_FLUSH_GLOBAL,
					i % 2 ? UROCE_FLUSH_MR : UROCE_FLUSH_RANGE, i * 3 + 1), 0);
		cr_assert_eq(post_aw(&e, BUF / 2 + i * 8, 0x1000 + i, i * 3 + 2), 0);
		cr_assert_eq(sim_wait_cq(e.sw, e.s[0].scq, got, 3, 60000000), 3, "round %u", i);
		for (k = 0; k < 3; k++) {
			cr_assert_eq(got[k].status, UROCE_WC_SUCCESS, "round %u: %s", i,
				     uroce_wc_status_str(got[k].status));
			cr_assert_eq(got[k].wr_id, i * 3 + k);
		}
		cr_expect_eq(got[1].opcode, UROCE_WC_FLUSH);
		cr_expect_eq(got[2].opcode, UROCE_WC_ATOMIC_WRITE);
		/* Overwritten locally: a late duplicate must not bring the value back. */
		memset(e.buf[1] + BUF / 2 + i * 8, 0xEE, 8);
	}
	simwire_set_loss(e.sw, 0, 0, 0, 0);
	simwire_settle(e.sw);
	cr_expect_eq(memcmp(e.buf[1], e.buf[0], n * 256), 0);
	for (i = 0; i < n; i++)
		cr_expect_eq(word_at(&e, BUF / 2 + i * 8), 0xEEEEEEEEEEEEEEEEull, "flag %u", i);
	cr_expect_eq(cnt(&e, 1, UROCE_CNT_RX_ATOMIC_WRITE_REQUESTS), n);
	cr_expect_eq(cnt(&e, 1, UROCE_CNT_RX_FLUSH_REQUESTS), n);
	cr_log_info("retransmits %llu, replays %llu",
		    (unsigned long long)cnt(&e, 0, UROCE_CNT_RETRANSMITS),
		    (unsigned long long)cnt(&e, 1, UROCE_CNT_RESP_ATOMIC_WRITE_FLUSH_REPLAY));
	env_fini(&e);
}

/* Inject one response at the requester (side 0). */
static void
inject_resp(struct env *e, uint8_t op, uint32_t psn, const void *pay, uint32_t paylen)
{
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;

	memset(&bth, 0, sizeof(bth));
	memset(&ext, 0, sizeof(ext));
	bth.opcode = UROCE_OPCODE(UROCE_SVC_RC, op);
	bth.pkey = UROCE_DEFAULT_PKEY;
	bth.dqpn = uroce_eng_qp_num(e->s[0].qp);
	bth.psn = psn;
	ext.syndrome = UROCE_AETH_ACK_NO_CREDIT;
	ext.msn = 1;
	cr_assert_eq(simwire_inject(e->sw, 0, &bth, &ext, pay, paylen), 0);
	simwire_settle(e->sw);
}

/* A hostile or broken responder: an atomic ACK is no answer to an ATOMIC
 * WRITE (ignored, ghost_response); the empty READ Response Only completes
 * it; a READ response carrying data for a FLUSH is a bad response. */
Test(iba15, completer_takes_only_the_empty_read_response)
{
	struct uroce_eng_wc wc;
	uint64_t data = 0;
	struct env e;

	env_init(&e, ALL_REMOTE, MR_ACCESS);
	simwire_set_capture(e.sw, 0, true); /* the requests never arrive */
	cr_assert_eq(post_aw(&e, 64, 1, 1), 0);
	simwire_settle(e.sw);
	inject_resp(&e, UROCE_OP_ATOMIC_ACKNOWLEDGE, 100, NULL, 0);
	cr_expect_eq(uroce_eng_poll_cq(e.s[0].scq, 1, &wc), 0, "an atomic ACK completed it");
	cr_expect_eq(cnt(&e, 0, UROCE_CNT_GHOST_RESPONSE), 1);
	inject_resp(&e, UROCE_OP_RDMA_READ_RESPONSE_ONLY, 100, NULL, 0);
	expect_wc(&e, 1, UROCE_WC_SUCCESS, UROCE_WC_ATOMIC_WRITE);
	cr_assert_eq(post_flush(&e, uroce_eng_mr_rkey(e.mr[1]), 0, 64, UROCE_FLUSH_GLOBAL,
				UROCE_FLUSH_RANGE, 2), 0);
	simwire_settle(e.sw);
	inject_resp(&e, UROCE_OP_RDMA_READ_RESPONSE_ONLY, 101, &data, 8);
	expect_wc(&e, 2, UROCE_WC_BAD_RESP_ERR, 0);
	env_fini(&e);
}
