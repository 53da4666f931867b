/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Two engines over a perfect simulated wire: every RC operation at every
 * path MTU and at the message sizes around segment boundaries, with the
 * bytes checked on both sides.
 */

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "simwire.h"

#define BUF (256 * 1024)

struct env {
	struct simwire *sw;
	struct sim_side s[2];
	uint8_t *buf[2];
	struct uroce_eng_mr *mr[2];
};

static void
env_init(struct env *e, enum uroce_mtu mtu, uint32_t psn0, uint32_t psn1)
{
	struct simwire_conf wc = { .seed = 1, .delay_us = 1 };
	struct sim_qp_opts o = { .mtu = mtu, .psn0 = psn0, .psn1 = psn1 };
	int i;

	memset(e, 0, sizeof(*e));
	e->sw = simwire_create(&wc);
	cr_assert_not_null(e->sw);
	cr_assert_eq(sim_pair_create(e->sw, e->s, &o, 256, 1024), 0);
	for (i = 0; i < 2; i++) {
		e->buf[i] = malloc(BUF);
		cr_assert_not_null(e->buf[i]);
		memset(e->buf[i], 0, BUF);
		e->mr[i] = uroce_eng_mr_reg(e->s[i].pd, e->buf[i], 0x10000000ull * (i + 1), BUF,
					UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
					UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC);
		cr_assert_not_null(e->mr[i]);
	}
}

static void
env_fini(struct env *e)
{
	simwire_destroy(e->sw);
	free(e->buf[0]);
	free(e->buf[1]);
}

static uint64_t
iova(struct env *e __attribute__((unused)), int side, uint32_t off)
{
	return 0x10000000ull * (side + 1) + off;
}

static void
fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

static void
post_recv(struct env *e, int side, uint32_t off, uint32_t len, uint64_t id)
{
	struct uroce_wr_sge sge = { .addr = iova(e, side, off), .length = len,
				 .lkey = uroce_eng_mr_lkey(e->mr[side]) };
	struct uroce_eng_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };

	cr_assert_eq(uroce_eng_post_recv(e->s[side].qp, &wr, NULL), 0);
}

static void
post(struct env *e, enum uroce_wr_opcode op, uint32_t loff, uint32_t len, uint32_t roff,
     uint64_t id)
{
	struct uroce_wr_sge sge = { .addr = iova(e, 0, loff), .length = len,
				 .lkey = uroce_eng_mr_lkey(e->mr[0]) };
	struct uroce_eng_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.imm_data = 0xABCD0000u + (uint32_t)id;
	wr.wr.rdma.remote_addr = iova(e, 1, roff);
	wr.wr.rdma.rkey = uroce_eng_mr_rkey(e->mr[1]);
	cr_assert_eq(uroce_eng_post_send(e->s[0].qp, &wr, NULL), 0);
}

static void
expect_wc(struct env *e, struct uroce_eng_cq *cq, uint64_t id, enum uroce_wc_opcode op,
	  uint32_t byte_len)
{
	struct uroce_eng_wc wc;

	cr_assert_eq(sim_wait_cq(e->sw, cq, &wc, 1, 10000000), 1, "no completion for %llu",
		     (unsigned long long)id);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS, "status %s",
		     uroce_wc_status_str(wc.status));
	cr_expect_eq(wc.wr_id, id);
	cr_expect_eq(wc.opcode, op);
	if (op == UROCE_WC_RECV || op == UROCE_WC_RECV_RDMA_WITH_IMM)
		cr_expect_eq(wc.byte_len, byte_len);
}

static const enum uroce_mtu mtus[] = {
	UROCE_MTU_256, UROCE_MTU_512, UROCE_MTU_1024, UROCE_MTU_2048, UROCE_MTU_4096,
};

static void
sizes_for(uint32_t mtu, uint32_t *s)
{
	s[0] = 0;
	s[1] = 1;
	s[2] = mtu - 1;
	s[3] = mtu;
	s[4] = mtu + 1;
	s[5] = 2 * mtu;
	s[6] = 37 * mtu + 5; /* large multi-packet */
}

/* Every size at every MTU: SEND and SEND_WITH_IMM land in the receive buffer. */
Test(rc_basic, send_all_sizes_all_mtus)
{
	unsigned int m, k;

	for (m = 0; m < UROCE_ARRAY_SIZE(mtus); m++) {
		uint32_t mtu = uroce_mtu_bytes((uint8_t)mtus[m]), sz[7];
		struct env e;

		env_init(&e, mtus[m], 100, 200);
		sizes_for(mtu, sz);
		for (k = 0; k < 7; k++) {
			struct uroce_eng_wc wc;

			fill(e.buf[0], sz[k], k + m);
			memset(e.buf[1], 0xEE, BUF);
			post_recv(&e, 1, 0, BUF, 1000 + k);
			post(&e, k & 1 ? UROCE_WR_SEND_WITH_IMM : UROCE_WR_SEND, 0, sz[k], 0, k);
			expect_wc(&e, e.s[0].scq, k, UROCE_WC_SEND, sz[k]);
			cr_assert_eq(sim_wait_cq(e.sw, e.s[1].rcq, &wc, 1, 1000000), 1);
			cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
			cr_expect_eq(wc.wr_id, 1000 + k);
			cr_expect_eq(wc.byte_len, sz[k], "mtu %u size %u got %u", mtu, sz[k],
				     wc.byte_len);
			cr_expect_eq(!!(wc.wc_flags & UROCE_WC_WITH_IMM), k & 1);
			if (k & 1)
				cr_expect_eq(wc.imm_data, 0xABCD0000u + k);
			cr_expect_eq(memcmp(e.buf[0], e.buf[1], sz[k]), 0, "data mtu %u size %u",
				     mtu, sz[k]);
			cr_expect_eq(e.buf[1][sz[k]], 0xEE, "byte after the message changed");
		}
		env_fini(&e);
	}
}

/* RDMA WRITE (and with immediate) at every size and MTU. */
Test(rc_basic, write_all_sizes_all_mtus)
{
	unsigned int m, k;

	for (m = 0; m < UROCE_ARRAY_SIZE(mtus); m++) {
		uint32_t mtu = uroce_mtu_bytes((uint8_t)mtus[m]), sz[7];
		struct env e;

		env_init(&e, mtus[m], 0xFFFFF0, 5);
		sizes_for(mtu, sz);
		for (k = 0; k < 7; k++) {
			bool imm = k & 1;

			fill(e.buf[0], sz[k], 3 * k + m);
			memset(e.buf[1], 0xEE, BUF);
			if (imm)
				post_recv(&e, 1, 0, 16, 500 + k);
			post(&e, imm ? UROCE_WR_RDMA_WRITE_WITH_IMM : UROCE_WR_RDMA_WRITE, 0,
			     sz[k], 64, k);
			expect_wc(&e, e.s[0].scq, k, UROCE_WC_RDMA_WRITE, sz[k]);
			if (imm) {
				struct uroce_eng_wc wc;

				cr_assert_eq(sim_wait_cq(e.sw, e.s[1].rcq, &wc, 1, 1000000), 1);
				cr_expect_eq(wc.opcode, UROCE_WC_RECV_RDMA_WITH_IMM);
				cr_expect_eq(wc.imm_data, 0xABCD0000u + k);
				cr_expect_eq(wc.byte_len, sz[k]);
			}
			cr_expect_eq(memcmp(e.buf[0], e.buf[1] + 64, sz[k]), 0,
				     "data mtu %u size %u", mtu, sz[k]);
			cr_expect_eq(e.buf[1][63], 0xEE);
			cr_expect_eq(e.buf[1][64 + sz[k]], 0xEE);
		}
		env_fini(&e);
	}
}

/* RDMA READ at every size and MTU. */
Test(rc_basic, read_all_sizes_all_mtus)
{
	unsigned int m, k;

	for (m = 0; m < UROCE_ARRAY_SIZE(mtus); m++) {
		uint32_t mtu = uroce_mtu_bytes((uint8_t)mtus[m]), sz[7];
		struct env e;

		env_init(&e, mtus[m], 0xFFFFFE, 0xFFFFFF);
		sizes_for(mtu, sz);
		for (k = 0; k < 7; k++) {
			fill(e.buf[1] + 8, sz[k], 5 * k + m);
			memset(e.buf[0], 0xEE, BUF);
			post(&e, UROCE_WR_RDMA_READ, 16, sz[k], 8, k);
			expect_wc(&e, e.s[0].scq, k, UROCE_WC_RDMA_READ, sz[k]);
			cr_expect_eq(memcmp(e.buf[0] + 16, e.buf[1] + 8, sz[k]), 0,
				     "data mtu %u size %u", mtu, sz[k]);
			cr_expect_eq(e.buf[0][15], 0xEE);
			cr_expect_eq(e.buf[0][16 + sz[k]], 0xEE);
		}
		env_fini(&e);
	}
}

static void
post_atomic(struct env *e, enum uroce_wr_opcode op, uint32_t loff, uint32_t roff, uint64_t cmp_add,
	    uint64_t swap, uint64_t id)
{
	struct uroce_wr_sge sge = { .addr = iova(e, 0, loff), .length = 8,
				 .lkey = uroce_eng_mr_lkey(e->mr[0]) };
	struct uroce_eng_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = iova(e, 1, roff);
	wr.wr.atomic.rkey = uroce_eng_mr_rkey(e->mr[1]);
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	cr_assert_eq(uroce_eng_post_send(e->s[0].qp, &wr, NULL), 0);
}

Test(rc_basic, atomics)
{
	struct env e;
	uint64_t v = 1000, got;

	env_init(&e, UROCE_MTU_1024, 7, 9);
	memcpy(e.buf[1] + 128, &v, 8);
	post_atomic(&e, UROCE_WR_ATOMIC_FETCH_AND_ADD, 0, 128, 5, 0, 1);
	expect_wc(&e, e.s[0].scq, 1, UROCE_WC_FETCH_ADD, 8);
	memcpy(&got, e.buf[0], 8);
	cr_expect_eq(got, 1000);
	memcpy(&v, e.buf[1] + 128, 8);
	cr_expect_eq(v, 1005);
	/* CMP&SWP that fails leaves memory as is, returns the value. */
	post_atomic(&e, UROCE_WR_ATOMIC_CMP_AND_SWP, 8, 128, 1, 77, 2);
	expect_wc(&e, e.s[0].scq, 2, UROCE_WC_COMP_SWAP, 8);
	memcpy(&got, e.buf[0] + 8, 8);
	cr_expect_eq(got, 1005);
	memcpy(&v, e.buf[1] + 128, 8);
	cr_expect_eq(v, 1005);
	/* CMP&SWP that matches swaps. */
	post_atomic(&e, UROCE_WR_ATOMIC_CMP_AND_SWP, 16, 128, 1005, 77, 3);
	expect_wc(&e, e.s[0].scq, 3, UROCE_WC_COMP_SWAP, 8);
	memcpy(&got, e.buf[0] + 16, 8);
	cr_expect_eq(got, 1005);
	memcpy(&v, e.buf[1] + 128, 8);
	cr_expect_eq(v, 77);
	env_fini(&e);
}

/*
 * SEND_WITH_INV end to end, naming an MR from reg_mr: IBA 10.6.7.2.2 lets a
 * peer invalidate only memory windows and fast-registration MRs, so the
 * responder refuses it (NAK invalid request), both sides complete in error,
 * and the MR stays registered and usable.
 */
Test(rc_basic, send_with_invalidate_of_reg_mr_refused)
{
	struct env e;
	struct uroce_eng_mr *victim;
	struct uroce_wr_sge sge;
	struct uroce_eng_send_wr wr;
	struct uroce_eng_wc wc;

	env_init(&e, UROCE_MTU_1024, 0, 0);
	victim = uroce_eng_mr_reg(e.s[1].pd, e.buf[1] + 4096, 0x5000, 4096, UROCE_ACCESS_LOCAL_WRITE |
			      UROCE_ACCESS_REMOTE_WRITE);
	cr_assert_not_null(victim);
	post_recv(&e, 1, 0, 64, 9);
	fill(e.buf[0], 10, 1);
	sge = (struct uroce_wr_sge){ .addr = iova(&e, 0, 0), .length = 10,
				  .lkey = uroce_eng_mr_lkey(e.mr[0]) };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = UROCE_WR_SEND_WITH_INV;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.invalidate_rkey = uroce_eng_mr_rkey(victim);
	cr_assert_eq(uroce_eng_post_send(e.s[0].qp, &wr, NULL), 0);
	cr_assert_eq(sim_wait_cq(e.sw, e.s[0].scq, &wc, 1, 100000), 1);
	cr_expect_eq(wc.status, UROCE_WC_REM_INV_REQ_ERR);
	cr_assert_eq(sim_wait_cq(e.sw, e.s[1].rcq, &wc, 1, 100000), 1);
	cr_expect_eq(wc.wr_id, 9);
	cr_expect_eq(wc.status, UROCE_WC_REM_INV_REQ_ERR);
	cr_expect(uroce_eng_mr_check(victim, 0x5000, 4096, UROCE_ACCESS_REMOTE_WRITE));
	env_fini(&e);
}

/* Scatter/gather on both ends, inline data and unsignaled WRs. */
Test(rc_basic, sgl_inline_unsignaled)
{
	struct env e;
	struct uroce_wr_sge sge[3], rsge[2];
	struct uroce_eng_send_wr wr;
	struct uroce_eng_recv_wr rwr;
	struct uroce_eng_wc wc[2];
	uint8_t inl[100];
	int n;

	env_init(&e, UROCE_MTU_256, 0, 0);
	fill(e.buf[0], 3000, 9);
	sge[0] = (struct uroce_wr_sge){ iova(&e, 0, 0), 300, uroce_eng_mr_lkey(e.mr[0]) };
	sge[1] = (struct uroce_wr_sge){ iova(&e, 0, 1000), 1, uroce_eng_mr_lkey(e.mr[0]) };
	sge[2] = (struct uroce_wr_sge){ iova(&e, 0, 2000), 500, uroce_eng_mr_lkey(e.mr[0]) };
	rsge[0] = (struct uroce_wr_sge){ iova(&e, 1, 100), 400, uroce_eng_mr_lkey(e.mr[1]) };
	rsge[1] = (struct uroce_wr_sge){ iova(&e, 1, 5000), 401, uroce_eng_mr_lkey(e.mr[1]) };
	rwr = (struct uroce_eng_recv_wr){ .wr_id = 7, .sg_list = rsge, .num_sge = 2 };
	cr_assert_eq(uroce_eng_post_recv(e.s[1].qp, &rwr, NULL), 0);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = sge;
	wr.num_sge = 3;
	wr.opcode = UROCE_WR_SEND; /* unsignaled */
	cr_assert_eq(uroce_eng_post_send(e.s[0].qp, &wr, NULL), 0);
	cr_assert_eq(sim_wait_cq(e.sw, e.s[1].rcq, wc, 1, 100000), 1);
	cr_expect_eq(wc[0].byte_len, 801);
	cr_expect_eq(memcmp(e.buf[1] + 100, e.buf[0], 300), 0);
	cr_expect_eq(e.buf[1][400], e.buf[0][1000]);
	cr_expect_eq(memcmp(e.buf[1] + 401, e.buf[0] + 2000, 99), 0);
	cr_expect_eq(memcmp(e.buf[1] + 5000, e.buf[0] + 2099, 401), 0);
	/* The unsignaled SEND made no completion. */
	simwire_settle(e.sw);
	cr_expect_eq(uroce_eng_poll_cq(e.s[0].scq, 2, wc), 0);

	/* Inline WRITE: the source buffer may change right after posting. */
	memset(inl, 0x5A, sizeof(inl));
	sge[0] = (struct uroce_wr_sge){ (uint64_t)(uintptr_t)inl, sizeof(inl), 0 };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.opcode = UROCE_WR_RDMA_WRITE;
	wr.send_flags = UROCE_SEND_INLINE | UROCE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = iova(&e, 1, 9000);
	wr.wr.rdma.rkey = uroce_eng_mr_rkey(e.mr[1]);
	cr_assert_eq(uroce_eng_post_send(e.s[0].qp, &wr, NULL), 0);
	memset(inl, 0, sizeof(inl));
	n = sim_wait_cq(e.sw, e.s[0].scq, wc, 1, 100000);
	cr_assert_eq(n, 1);
	cr_expect_eq(wc[0].status, UROCE_WC_SUCCESS);
	cr_expect_eq(e.buf[1][9000], 0x5A);
	cr_expect_eq(e.buf[1][9099], 0x5A);
	env_fini(&e);
}

/*
 * The hint a send completion carries for the shell (uroce_eng_wc.sq_more):
 * WQEs of the same send queue are still outstanding behind it. The worker
 * streams such a CQE to the client's ring and writes a lone one with
 * ordinary stores, so a client waiting on it alone reads it from cache.
 */
Test(rc_basic, send_completion_says_whether_wqes_wait_behind_it)
{
	struct uroce_eng_wc wc[4];
	struct env e;
	int n = 0, k;

	env_init(&e, UROCE_MTU_1024, 0, 0);
	post(&e, UROCE_WR_RDMA_WRITE, 0, 64, 0, 1);
	post(&e, UROCE_WR_RDMA_WRITE, 64, 64, 64, 2);
	post(&e, UROCE_WR_RDMA_WRITE, 128, 64, 128, 3);
	while (n < 3) {
		k = sim_wait_cq(e.sw, e.s[0].scq, wc + n, 3 - n, 1000000);
		cr_assert_gt(k, 0, "%d of 3 completions", n);
		n += k;
	}
	for (k = 0; k < 3; k++) {
		cr_expect_eq(wc[k].wr_id, (uint64_t)k + 1);
		cr_expect_eq(wc[k].status, UROCE_WC_SUCCESS);
		cr_expect_eq(wc[k].sq_more, k < 2, "WR %d: sq_more %d", k + 1, wc[k].sq_more);
	}
	/* Alone on its queue: nothing behind it. */
	post(&e, UROCE_WR_RDMA_WRITE, 0, 64, 0, 4);
	cr_assert_eq(sim_wait_cq(e.sw, e.s[0].scq, wc, 1, 1000000), 1);
	cr_expect_eq(wc[0].wr_id, 4);
	cr_expect_not(wc[0].sq_more);
	env_fini(&e);
}
