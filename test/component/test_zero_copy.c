/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Zero-copy transmission (uroce_eng_ops.tx_send_zc) between two engines on
 * the simulated wire: payloads of zc_min bytes and more leave in place, a
 * send WQE completes only once it is acknowledged and the "device" has let
 * go of every packet of it (and the completions behind it wait, in order),
 * the memory's in-flight count returns to 0, a READ response goes zero-copy
 * from the responder's MR, a lossy wire rereads the memory for resends, and
 * a QP reset or destroyed with packets out makes their late release
 * harmless.
 */

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "simwire.h"

#define BUF (1024 * 1024)
#define ZC_MIN 1024

struct env {
	struct simwire *sw;
	struct sim_side s[2];
	uint8_t *buf[2];
	struct uroce_eng_mr *mr[2];
	uint32_t inflight[2]; /* each side's memory: zero-copy packets out */
};

static void
env_init(struct env *e, enum uroce_qp_type t, bool hold, uint32_t drop_ppm)
{
	struct simwire_conf wc = {.seed = 7, .delay_us = 2, .zc_min = ZC_MIN, .zc_hold = hold,
				  .drop_ppm = drop_ppm};
	struct sim_qp_opts o = {.type = t, .mtu = UROCE_MTU_4096};
	int i;

	memset(e, 0, sizeof(*e));
	e->sw = simwire_create(&wc);
	cr_assert_not_null(e->sw);
	cr_assert_eq(sim_pair_create(e->sw, e->s, &o, 64, 256), 0);
	for (i = 0; i < 2; i++) {
		e->buf[i] = calloc(1, BUF);
		cr_assert_not_null(e->buf[i]);
		e->mr[i] = uroce_eng_mr_reg(e->s[i].pd, e->buf[i], 0x10000000ull * (i + 1), BUF,
					    UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
					    UROCE_ACCESS_REMOTE_READ);
		cr_assert_not_null(e->mr[i]);
		uroce_eng_mr_set_zc_ref(e->mr[i], &e->inflight[i]);
	}
}

static void
env_fini(struct env *e)
{
	simwire_destroy(e->sw);
	/* Expect: whatever happened, every packet let go of the memory. */
	cr_expect_eq(e->inflight[0], 0);
	cr_expect_eq(e->inflight[1], 0);
	free(e->buf[0]);
	free(e->buf[1]);
}

static uint64_t
iova(int side, uint32_t off)
{
	return 0x10000000ull * (side + 1) + off;
}

static void
fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 9));
}

static void
post(struct env *e, enum uroce_wr_opcode op, uint32_t loff, uint32_t len, uint32_t roff,
     uint64_t id, bool signaled)
{
	struct uroce_wr_sge sge = {.addr = iova(0, loff), .length = len,
				    .lkey = uroce_eng_mr_lkey(e->mr[0])};
	struct uroce_eng_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = signaled ? UROCE_SEND_SIGNALED : 0;
	wr.wr.rdma.remote_addr = iova(1, roff);
	wr.wr.rdma.rkey = uroce_eng_mr_rkey(e->mr[1]);
	cr_assert_eq(uroce_eng_post_send(e->s[0].qp, &wr, NULL), 0);
}

static uint64_t
tx_zc(struct env *e, int side)
{
	return uroce_eng_qp_counter(e->s[side].qp, UROCE_CNT_TX_ZERO_COPY);
}

/* Expect: a 256 KiB WRITE goes out as 64 zero-copy packets; once the
 * responder acknowledged them all, no completion yet while the device holds
 * the packets (their memory counted in flight); on release the WQE
 * completes and the data is there, byte for byte. */
Test(zero_copy, write_completes_after_ack_and_release)
{
	struct uroce_eng_wc wc;
	struct env e;

	env_init(&e, UROCE_QPT_RC, true, 0);
	fill(e.buf[0], 262144, 1);
	post(&e, UROCE_WR_RDMA_WRITE, 0, 262144, 0, 1, true);
	simwire_settle(e.sw);
	cr_expect_eq(tx_zc(&e, 0), 64);
	cr_expect_eq(simwire_zc_held(e.sw, 0), 64);
	cr_expect_eq(e.inflight[0], 64);
	cr_expect_eq(memcmp(e.buf[1], e.buf[0], 262144), 0, "the data landed (it was read at send)");
	cr_expect_eq(uroce_eng_poll_cq(e.s[0].scq, 1, &wc), 0, "completed before the release");
	simwire_zc_release(e.sw, 0);
	cr_assert_eq(sim_wait_cq(e.sw, e.s[0].scq, &wc, 1, 1000000), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 1);
	cr_expect_eq(e.inflight[0], 0);
	env_fini(&e);
}

/* Expect: completions stay in order: a small WRITE (a copy) posted behind a
 * zero-copy one waits for it, acknowledged or not; both come on release, the
 * zero-copy one first. Below zc_min nothing is zero-copy. */
Test(zero_copy, completions_behind_a_held_wqe_wait_in_order)
{
	struct uroce_eng_wc wc[2];
	struct env e;

	env_init(&e, UROCE_QPT_RC, true, 0);
	fill(e.buf[0], 65536, 2);
	post(&e, UROCE_WR_RDMA_WRITE, 0, 8192, 0, 10, true);
	post(&e, UROCE_WR_RDMA_WRITE, 8192, ZC_MIN - 1, 8192, 11, true);
	simwire_settle(e.sw);
	cr_expect_eq(tx_zc(&e, 0), 2, "8 KiB: 2 zero-copy packets; %u B: a copy", ZC_MIN - 1);
	cr_expect_eq(uroce_eng_poll_cq(e.s[0].scq, 2, wc), 0);
	simwire_zc_release(e.sw, 0);
	cr_assert_eq(sim_wait_cq(e.sw, e.s[0].scq, wc, 2, 1000000), 2);
	cr_expect_eq(wc[0].wr_id, 10);
	cr_expect_eq(wc[1].wr_id, 11);
	cr_expect_eq(memcmp(e.buf[1], e.buf[0], 8192 + ZC_MIN - 1), 0);
	env_fini(&e);
}

/* Expect: an unsignaled zero-copy WQE holds a signaled one behind it too,
 * and completes silently (IBA 10.8.3). */
Test(zero_copy, unsignaled_held_wqe_completes_silently)
{
	struct uroce_eng_wc wc[2];
	struct env e;

	env_init(&e, UROCE_QPT_RC, true, 0);
	post(&e, UROCE_WR_RDMA_WRITE, 0, 4096, 0, 20, false);
	post(&e, UROCE_WR_RDMA_WRITE, 4096, 64, 4096, 21, true);
	simwire_settle(e.sw);
	cr_expect_eq(uroce_eng_poll_cq(e.s[0].scq, 2, wc), 0);
	simwire_zc_release(e.sw, 0);
	cr_assert_eq(sim_wait_cq(e.sw, e.s[0].scq, wc, 1, 1000000), 1);
	cr_expect_eq(wc[0].wr_id, 21);
	cr_expect_eq(uroce_eng_poll_cq(e.s[0].scq, 1, wc), 0);
	env_fini(&e);
}

/* Expect: a READ's responses leave the responder's MR zero-copy; the
 * requester completes with the right bytes and the responder's memory is
 * released (no WQE of the responder waits for it). */
Test(zero_copy, read_responses_from_the_responders_memory)
{
	struct uroce_eng_wc wc;
	struct env e;

	env_init(&e, UROCE_QPT_RC, false, 0);
	fill(e.buf[1] + 65536, 131072, 3);
	post(&e, UROCE_WR_RDMA_READ, 0, 131072, 65536, 30, true);
	cr_assert_eq(sim_wait_cq(e.sw, e.s[0].scq, &wc, 1, 1000000), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	cr_expect_eq(memcmp(e.buf[0], e.buf[1] + 65536, 131072), 0);
	cr_expect_eq(tx_zc(&e, 1), 32, "32 READ responses of 4 KiB, zero-copy");
	simwire_settle(e.sw);
	cr_expect_eq(e.inflight[1], 0);
	env_fini(&e);
}

/* Expect: UD SEND: the WQE completes (no ACK in UD) only once released. */
Test(zero_copy, ud_send_completes_on_release)
{
	struct uroce_eng_ah_attr aa;
	struct uroce_eng_ah *ah;
	struct uroce_wr_sge sge;
	struct uroce_eng_recv_wr rwr;
	struct uroce_eng_send_wr wr;
	struct uroce_eng_wc wc;
	struct env e;

	env_init(&e, UROCE_QPT_UD, true, 0);
	memset(&aa, 0, sizeof(aa));
	memcpy(aa.dgid, simwire_gid(e.sw, 1), 16);
	aa.hop_limit = 64;
	ah = uroce_eng_ah_create(e.s[0].pd, &aa);
	cr_assert_not_null(ah);
	sge = (struct uroce_wr_sge){.addr = iova(1, 0), .length = 4096 + 40,
				     .lkey = uroce_eng_mr_lkey(e.mr[1])};
	rwr = (struct uroce_eng_recv_wr){.wr_id = 1, .sg_list = &sge, .num_sge = 1};
	cr_assert_eq(uroce_eng_post_recv(e.s[1].qp, &rwr, NULL), 0);
	fill(e.buf[0], 4096, 4);
	memset(&wr, 0, sizeof(wr));
	sge = (struct uroce_wr_sge){.addr = iova(0, 0), .length = 4096,
				     .lkey = uroce_eng_mr_lkey(e.mr[0])};
	wr.wr_id = 40;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = UROCE_WR_SEND;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = uroce_eng_qp_num(e.s[1].qp);
	wr.wr.ud.remote_qkey = 0x11111111;
	cr_assert_eq(uroce_eng_post_send(e.s[0].qp, &wr, NULL), 0);
	simwire_settle(e.sw);
	cr_expect_eq(tx_zc(&e, 0), 1);
	cr_expect_eq(uroce_eng_poll_cq(e.s[0].scq, 1, &wc), 0);
	cr_assert_eq(sim_wait_cq(e.sw, e.s[1].rcq, &wc, 1, 1000000), 1);
	cr_expect_eq(memcmp(e.buf[1] + 40, e.buf[0], 4096), 0);
	simwire_zc_release(e.sw, 0);
	cr_assert_eq(sim_wait_cq(e.sw, e.s[0].scq, &wc, 1, 1000000), 1);
	cr_expect_eq(wc.wr_id, 40);
	uroce_eng_ah_destroy(ah);
	env_fini(&e);
}

/* Expect: at 5 % loss, resends read the memory again (zero-copy too), and
 * 40 verified 64 KiB WRITEs complete in order. */
Test(zero_copy, lossy_wire_resends_from_memory, .timeout = 60)
{
	struct uroce_eng_wc wc;
	struct env e;
	uint32_t i;

	env_init(&e, UROCE_QPT_RC, false, 50000);
	fill(e.buf[0], BUF, 5);
	for (i = 0; i < 40; i++) {
		post(&e, UROCE_WR_RDMA_WRITE, (i % 16) * 65536, 65536, (i % 16) * 65536, 100 + i,
		     true);
		cr_assert_eq(sim_wait_cq(e.sw, e.s[0].scq, &wc, 1, 20000000), 1, "WRITE %u", i);
		cr_assert_eq(wc.status, UROCE_WC_SUCCESS, "WRITE %u: %s", i,
			     uroce_wc_status_str(wc.status));
		cr_assert_eq(wc.wr_id, 100 + i);
	}
	cr_expect_eq(memcmp(e.buf[1], e.buf[0], BUF), 0);
	cr_expect_gt(uroce_eng_qp_counter(e.s[0].qp, UROCE_CNT_RETRANSMITS), 0);
	cr_expect_gt(tx_zc(&e, 0), 640, "resends went zero-copy too");
	env_fini(&e);
}

/* Expect: a QP destroyed while the device still holds its packets: their
 * late release touches nothing of it (nor of a new QP in its place), and the
 * memory count still returns to 0. */
Test(zero_copy, late_release_after_destroy_is_harmless)
{
	struct sim_side *s;
	struct uroce_eng_wc wc;
	struct env e;

	env_init(&e, UROCE_QPT_RC, true, 0);
	post(&e, UROCE_WR_RDMA_WRITE, 0, 65536, 0, 50, true);
	simwire_settle(e.sw);
	cr_expect_eq(simwire_zc_held(e.sw, 0), 16);
	s = &e.s[0];
	cr_assert_eq(uroce_eng_qp_destroy(s->qp), 0);
	/* A new QP, most likely in the same slot. */
	s->qp = sim_qp_create(s, UROCE_QPT_RC, 64);
	cr_assert_not_null(s->qp);
	simwire_zc_release(e.sw, 0);
	simwire_settle(e.sw);
	cr_expect_eq(e.inflight[0], 0);
	cr_expect_eq(uroce_eng_poll_cq(s->scq, 1, &wc), 0, "no completion from the dead QP");
	env_fini(&e);
}
