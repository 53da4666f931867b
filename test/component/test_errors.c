/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Error paths end to end between two engines: remote access errors put both
 * QPs in ERR (IBA 9.7.5.2 / 10.3.1), a SEND longer than the receive buffer,
 * RNR waits that resolve when a receive is posted, retry exhaustion on a dead
 * link, and the flush of everything behind an error.
 */

#include "simproto.h"

static void
live(struct proto *p)
{
	simwire_set_capture(p->sw, 0, false);
	simwire_set_capture(p->sw, 1, false);
}

static void
post_bad_rkey_write(struct proto *p, uint32_t rkey, uint64_t id)
{
	struct uroce_wr_sge sge = { IOVA(0), 64, uroce_eng_mr_lkey(p->mr[0]) };
	struct uroce_eng_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = UROCE_WR_RDMA_WRITE;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = IOVA(1);
	wr.wr.rdma.rkey = rkey;
	cr_assert_eq(uroce_eng_post_send(p->s[0].qp, &wr, NULL), 0);
}

/* Invalid R_Key: requester REM_ACCESS_ERR, both QPs in ERR, the next WR
 * flushed. */
Test(errors, remote_access_error_both_qps_to_err)
{
	struct sim_qp_opts o = { .psn0 = 3 };
	struct proto p;
	struct uroce_eng_wc wc[2];

	proto_init(&p, &o);
	live(&p);
	post_bad_rkey_write(&p, uroce_eng_mr_rkey(p.mr[1]) ^ 0x100, 1);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 2, 0);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[0].scq, wc, 2, 1000000), 2);
	cr_expect_eq(wc[0].wr_id, 1);
	cr_expect_eq(wc[0].status, UROCE_WC_REM_ACCESS_ERR);
	cr_expect_eq(wc[1].wr_id, 2);
	cr_expect_eq(wc[1].status, UROCE_WC_WR_FLUSH_ERR);
	cr_expect_eq(uroce_eng_qp_state(p.s[0].qp), UROCE_QPS_ERR);
	cr_expect_eq(uroce_eng_qp_state(p.s[1].qp), UROCE_QPS_ERR);
	cr_expect_eq(uroce_eng_qp_counter(p.s[0].qp, UROCE_CNT_REQ_REMOTE_ACCESS_ERRORS), 1);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RESP_REMOTE_ACCESS_ERRORS), 1);
	proto_fini(&p);
}

/* READ beyond the MR: REM_ACCESS_ERR; a misaligned atomic: an invalid
 * request (IBA 9.4.5), REM_INV_REQ_ERR. */
Test(errors, read_past_end_and_misaligned_atomic)
{
	struct sim_qp_opts o = { .psn0 = 3 };
	struct proto p;
	struct uroce_eng_wc wc;

	proto_init(&p, &o);
	live(&p);
	post_wr(&p, UROCE_WR_RDMA_READ, 0, 128, PBUF - 64, 1, 0);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[0].scq, &wc, 1, 1000000), 1);
	cr_expect_eq(wc.status, UROCE_WC_REM_ACCESS_ERR);
	proto_fini(&p);

	proto_init(&p, &o);
	live(&p);
	post_wr(&p, UROCE_WR_ATOMIC_FETCH_AND_ADD, 0, 8, 12, 1, 0);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[0].scq, &wc, 1, 1000000), 1);
	cr_expect_eq(wc.status, UROCE_WC_REM_INV_REQ_ERR);
	proto_fini(&p);
}

/* SEND longer than the receive buffer: responder LOC_LEN_ERR, requester
 * REM_INV_REQ_ERR (IBA 9.7.5.1 invalid request). */
Test(errors, send_longer_than_receive_buffer)
{
	struct sim_qp_opts o = { .psn0 = 3 };
	struct proto p;
	struct uroce_eng_wc wc;

	proto_init(&p, &o);
	live(&p);
	post_recv_buf(&p, 1, 0, 100, 7);
	post_wr(&p, UROCE_WR_SEND, 0, 3000, 0, 1, 0);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[0].scq, &wc, 1, 1000000), 1);
	cr_expect_eq(wc.status, UROCE_WC_REM_INV_REQ_ERR);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[1].rcq, &wc, 1, 1000000), 1);
	cr_expect_eq(wc.wr_id, 7);
	cr_expect_eq(wc.status, UROCE_WC_LOC_LEN_ERR);
	cr_expect_eq(uroce_eng_qp_state(p.s[1].qp), UROCE_QPS_ERR);
	proto_fini(&p);
}

static bool
late_recv(void *arg)
{
	struct proto *p = arg;

	/* Post the receive once the sender has been RNR NAKed three times. */
	if (uroce_eng_qp_counter(p->s[0].qp, UROCE_CNT_RX_RNR_NAK) >= 3) {
		post_recv_buf(p, 1, 0, 4096, 1);
		return true;
	}
	return false;
}

/* RNR: the SEND waits (RNR NAK, timer, retry) until a receive is posted,
 * then completes. */
Test(errors, rnr_until_receive_posted)
{
	struct sim_qp_opts o = { .psn0 = 3, .min_rnr_timer = 1, .rnr_retry = 7 };
	struct proto p;
	struct uroce_eng_wc wc;

	proto_init(&p, &o);
	live(&p);
	p.buf[0][0] = 0x42;
	post_wr(&p, UROCE_WR_SEND, 0, 2000, 0, 1, 0);
	cr_assert(simwire_run_until(p.sw, late_recv, &p, 1000000));
	cr_assert_eq(sim_wait_cq(p.sw, p.s[0].scq, &wc, 1, 1000000), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[1].rcq, &wc, 1, 1000000), 1);
	cr_expect_eq(wc.byte_len, 2000);
	cr_expect_eq(p.buf[1][0], 0x42);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RESP_RNR_NAK_SENT), 3);
	proto_fini(&p);
}

/* A dead link: retry_cnt 3 → 1 + 3 transmissions, then RETRY_EXC_ERR after
 * four local ACK timeouts (simulated time, no real waiting). */
Test(errors, dead_link_retry_exceeded)
{
	struct sim_qp_opts o = { .psn0 = 3, .timeout = 14, .retry_cnt = 3 };
	struct proto p;
	struct uroce_eng_wc wc;
	uint64_t t0;

	proto_init(&p, &o);
	live(&p);
	simwire_set_loss(p.sw, 1000000, 0, 0, 0);
	t0 = simwire_now(p.sw);
	post_wr(&p, UROCE_WR_RDMA_WRITE, 0, 64, 0, 1, 0);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[0].scq, &wc, 1, 100000000), 1);
	cr_expect_eq(wc.status, UROCE_WC_RETRY_EXC_ERR);
	cr_expect_eq(uroce_eng_qp_counter(p.s[0].qp, UROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 4);
	cr_expect_eq(uroce_eng_qp_counter(p.s[0].qp, UROCE_CNT_TX_PACKETS), 4);
	/* Four timeouts of 4.096 µs * 2^14 = 67.1 ms each. */
	cr_expect_geq(simwire_now(p.sw) - t0, 4 * uroce_ack_timeout_us(14));
	cr_expect_lt(simwire_now(p.sw) - t0, 4 * uroce_ack_timeout_us(14) + 1000);
	proto_fini(&p);
}

/* A local protection error (bad lkey) completes with LOC_PROT_ERR. */
Test(errors, bad_lkey_local_protection_error)
{
	struct sim_qp_opts o = { .psn0 = 3 };
	struct proto p;
	struct uroce_wr_sge sge = { IOVA(0), 64, 0x12345601 };
	struct uroce_eng_send_wr wr;
	struct uroce_eng_wc wc;

	proto_init(&p, &o);
	live(&p);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 9;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = UROCE_WR_SEND;
	cr_assert_eq(uroce_eng_post_send(p.s[0].qp, &wr, NULL), 0);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[0].scq, &wc, 1, 100000), 1);
	cr_expect_eq(wc.wr_id, 9);
	cr_expect_eq(wc.status, UROCE_WC_LOC_PROT_ERR);
	cr_expect_eq(uroce_eng_qp_state(p.s[0].qp), UROCE_QPS_ERR);
	proto_fini(&p);
}
