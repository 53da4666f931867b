/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Completer protocol tests (lib/transport/comp.c): ACK processing, the
 * local ACK timeout and go-back-N, PSN sequence NAKs, implied NAKs, RNR
 * waits, NAK codes to WC statuses, retry counters. Side 0 is the requester
 * under test; responses are injected into it.
 */

#include "simproto.h"

#define Q 0

static const struct uroce_ext_fields ack_ext = { .syndrome = UROCE_AETH_ACK_NO_CREDIT };

static void
inj_ack(struct proto *p, uint8_t syn, uint32_t psn)
{
	struct uroce_ext_fields e = { .syndrome = syn };

	inj(p, Q, UROCE_OP_ACKNOWLEDGE, psn, false, &e, NULL, 0);
}

static int
poll1(struct proto *p, struct uroce_eng_wc *wc)
{
	return uroce_eng_poll_cq(p->s[Q].scq, 1, wc);
}

/* An ACK completes the WQEs up to its PSN, in order. */
Test(comp, ack_completes_in_order)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_eng_wc wc;

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 1, 0);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 2, 0);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 3, 0);
	flush(&p, Q);
	cr_assert_eq(ntx(&p, Q), 3);
	/* Expect: ACK 1 (coalesced) completes WQEs 1 and 2, not 3. */
	inj_ack(&p, UROCE_AETH_ACK_NO_CREDIT, 1);
	cr_assert_eq(poll1(&p, &wc), 1);
	cr_expect_eq(wc.wr_id, 1);
	cr_assert_eq(poll1(&p, &wc), 1);
	cr_expect_eq(wc.wr_id, 2);
	cr_expect_eq(poll1(&p, &wc), 0);
	/* A stale duplicate ACK changes nothing; a ghost ACK is ignored. */
	inj_ack(&p, UROCE_AETH_ACK_NO_CREDIT, 0);
	inj_ack(&p, UROCE_AETH_ACK_NO_CREDIT, 77);
	cr_expect_eq(poll1(&p, &wc), 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[Q].qp, UROCE_CNT_GHOST_RESPONSE), 1);
	inj_ack(&p, UROCE_AETH_ACK_NO_CREDIT, 2);
	cr_assert_eq(poll1(&p, &wc), 1);
	cr_expect_eq(wc.wr_id, 3);
	proto_fini(&p);
}

/* IBA 9.7.6.1.3: local ACK timeout → go-back-N from the oldest unacked PSN,
 * 4.096 µs * 2^timeout measured in µs. */
Test(comp, ack_timeout_go_back_n)
{
	struct sim_qp_opts o = { .psn0 = 10, .timeout = 10 };
	struct proto p;
	uint64_t rto = uroce_ack_timeout_us(10);

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 1, 0);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 2, 0);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 3, 0);
	flush(&p, Q);
	cr_assert_eq(ntx(&p, Q), 3);
	/* ACK for PSN 10 only. */
	inj_ack(&p, UROCE_AETH_ACK_NO_CREDIT, 10);
	simwire_cap_clear(p.sw, Q);
	/* Expect: nothing one µs before the deadline... */
	simwire_advance(p.sw, rto - 1);
	flush(&p, Q);
	cr_expect_eq(ntx(&p, Q), 0);
	/* ...then PSNs 11 and 12 again when it fires. */
	simwire_advance(p.sw, 1);
	flush(&p, Q);
	cr_assert_eq(ntx(&p, Q), 2);
	cr_expect_eq(tx(&p, Q, 0)->psn, 11);
	cr_expect_eq(tx(&p, Q, 1)->psn, 12);
	cr_expect_eq(uroce_eng_qp_counter(p.s[Q].qp, UROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 1);
	cr_expect_eq(uroce_eng_qp_counter(p.s[Q].qp, UROCE_CNT_RETRANSMITS), 2);
	proto_fini(&p);
}

/* retry_cnt = 7 is seven retries, not infinite: the 8th timeout fails the
 * WQE with RETRY_EXC_ERR and the QP goes to ERR. */
Test(comp, retry_cnt_7_is_not_infinite)
{
	struct sim_qp_opts o = { .psn0 = 0, .timeout = 1, .retry_cnt = 7 };
	struct proto p;
	struct uroce_eng_wc wc;
	uint64_t rto = uroce_ack_timeout_us(1);
	int i;

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 1, 0);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 2, 0);
	flush(&p, Q);
	for (i = 0; i < 7; i++) {
		simwire_advance(p.sw, rto);
		flush(&p, Q);
	}
	/* Expect: 2 originals + 7 retries of 2 packets. */
	cr_expect_eq(ntx(&p, Q), 2 + 7 * 2);
	cr_expect_eq(poll1(&p, &wc), 0);
	simwire_advance(p.sw, rto);
	flush(&p, Q);
	/* Expect: RETRY_EXC_ERR for WQE 1, flush for WQE 2, QP in ERR. */
	cr_expect_eq(ntx(&p, Q), 2 + 7 * 2);
	cr_assert_eq(poll1(&p, &wc), 1);
	cr_expect_eq(wc.wr_id, 1);
	cr_expect_eq(wc.status, UROCE_WC_RETRY_EXC_ERR);
	cr_assert_eq(poll1(&p, &wc), 1);
	cr_expect_eq(wc.status, UROCE_WC_WR_FLUSH_ERR);
	cr_expect_eq(uroce_eng_qp_state(p.s[Q].qp), UROCE_QPS_ERR);
	cr_expect_eq(uroce_eng_qp_counter(p.s[Q].qp, UROCE_CNT_RETRY_EXC_ERR), 1);
	proto_fini(&p);
}

/* Timers judge the peer, not the host: a deadline the engine passes by far
 * more than UROCE_HOST_STALL_US (it did not run: descheduled, stopped) is
 * re-armed without a retry, and the ACK waiting in its queue is taken in
 * before the new deadline. */
Test(comp, host_stall_rearms_without_a_retry)
{
	struct sim_qp_opts o = { .psn0 = 0, .timeout = 10, .retry_cnt = 1 };
	struct proto p;
	struct uroce_eng_wc wc;
	uint64_t rto = uroce_ack_timeout_us(10);

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 1, 0);
	flush(&p, Q);
	simwire_cap_clear(p.sw, Q);
	/* The host stops for 50 timeouts; the ACK arrived meanwhile and waits. */
	simwire_advance(p.sw, 50 * rto);
	/* Expect: no retransmission, no retry spent, the stall counted. */
	flush(&p, Q);
	cr_expect_eq(ntx(&p, Q), 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[Q].qp, UROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[Q].qp, UROCE_CNT_HOST_STALL_REARM), 1);
	inj_ack(&p, UROCE_AETH_ACK_NO_CREDIT, 0);
	cr_assert_eq(poll1(&p, &wc), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	/* Expect: a deadline met on time (retry_cnt 1) still counts as IBA says. */
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 2, 0);
	flush(&p, Q);
	simwire_advance(p.sw, rto);
	flush(&p, Q);
	cr_expect_eq(uroce_eng_qp_counter(p.s[Q].qp, UROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 1);
	proto_fini(&p);
}

/* A peer that is really gone still exhausts retry_cnt on a host that keeps
 * stalling: host stalls forgive UROCE_HOST_STALL_REARMS timeouts in a row,
 * no more. */
Test(comp, dead_peer_on_a_stalling_host_still_fails)
{
	struct sim_qp_opts o = { .psn0 = 0, .timeout = 1, .retry_cnt = 2 };
	struct proto p;
	struct uroce_eng_wc wc;
	uint64_t rto = uroce_ack_timeout_us(1);
	int i;

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 1, 0);
	flush(&p, Q);
	for (i = 0; i < UROCE_HOST_STALL_REARMS + 3; i++) {
		simwire_advance(p.sw, rto + 2 * UROCE_HOST_STALL_US);
		flush(&p, Q);
	}
	cr_expect_eq(uroce_eng_qp_counter(p.s[Q].qp, UROCE_CNT_HOST_STALL_REARM),
		     UROCE_HOST_STALL_REARMS);
	cr_assert_eq(poll1(&p, &wc), 1);
	cr_expect_eq(wc.status, UROCE_WC_RETRY_EXC_ERR);
	cr_expect_eq(uroce_eng_qp_state(p.s[Q].qp), UROCE_QPS_ERR);
	proto_fini(&p);
}

/* Progress resets the retry counter. */
Test(comp, retry_counter_resets_on_progress)
{
	struct sim_qp_opts o = { .psn0 = 0, .timeout = 1, .retry_cnt = 1 };
	struct proto p;
	struct uroce_eng_wc wc;
	uint64_t rto = uroce_ack_timeout_us(1);

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 1, 0);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 2, 0);
	flush(&p, Q);
	simwire_advance(p.sw, rto);
	flush(&p, Q); /* retry 1 of 1 */
	inj_ack(&p, UROCE_AETH_ACK_NO_CREDIT, 0);
	simwire_advance(p.sw, rto);
	flush(&p, Q); /* allowed again after progress */
	cr_expect_eq(uroce_eng_qp_state(p.s[Q].qp), UROCE_QPS_RTS);
	cr_assert_eq(poll1(&p, &wc), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	proto_fini(&p);
}

/* timeout 0 disables the local ACK timer (IBA 9.7.6.1.3). */
Test(comp, timeout_zero_means_no_timer)
{
	struct sim_qp_opts o = { .psn0 = 0, .timeout = 0, .explicit_zero = true,
				 .retry_cnt = 7, .rnr_retry = 7 };
	struct proto p;

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 1, 0);
	flush(&p, Q);
	cr_expect_eq(uroce_eng_next_deadline(simwire_engine(p.sw, Q)), UINT64_MAX);
	simwire_advance(p.sw, 100000000);
	flush(&p, Q);
	cr_expect_eq(ntx(&p, Q), 1);
	proto_fini(&p);
}

/* IBA 9.7.5.2.3: PSN sequence error NAK → resend from the NAK'd PSN; it
 * also acknowledges everything before it. */
Test(comp, seq_nak_resends_from_nak_psn)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_eng_wc wc;
	int i;

	proto_init(&p, &o);
	for (i = 0; i < 4; i++)
		post_wr(&p, UROCE_WR_SEND, 0, 8, 0, (uint64_t)i, 0);
	flush(&p, Q);
	simwire_cap_clear(p.sw, Q);
	inj_ack(&p, uroce_aeth_nak(UROCE_NAK_PSN_SEQ_ERR), 2);
	flush(&p, Q);
	/* Expect: WQEs 0 and 1 complete; PSNs 2 and 3 sent again. */
	cr_assert_eq(ntx(&p, Q), 2);
	cr_expect_eq(tx(&p, Q, 0)->psn, 2);
	cr_expect_eq(tx(&p, Q, 1)->psn, 3);
	cr_assert_eq(poll1(&p, &wc), 1);
	cr_expect_eq(wc.wr_id, 0);
	cr_assert_eq(poll1(&p, &wc), 1);
	cr_expect_eq(wc.wr_id, 1);
	cr_expect_eq(poll1(&p, &wc), 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[Q].qp, UROCE_CNT_PACKET_SEQ_ERR), 1);
	proto_fini(&p);
}

/* A rewind then a response that completes the rewound WQE (reordering: the
 * responder NAKed PSN 1 when PSN 2 overtook it, then got PSN 1 and ACKed it):
 * the requester must resume after the completed WQE with the PSNs it gave
 * before (IBA 9.7.1), never resend the next WQE under the old PSN. */
Test(comp, ack_after_rewind_keeps_psns)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_eng_wc wc;
	int i;

	proto_init(&p, &o);
	for (i = 0; i < 3; i++)
		post_wr(&p, UROCE_WR_SEND, 0, 8, 0, (uint64_t)i, 0);
	flush(&p, Q);
	simwire_cap_clear(p.sw, Q);
	/* Both responses arrive before the requester runs again. */
	inj_ack(&p, uroce_aeth_nak(UROCE_NAK_PSN_SEQ_ERR), 1);
	inj_ack(&p, UROCE_AETH_ACK_NO_CREDIT, 1);
	flush(&p, Q);
	/* Expect: WQEs 0 and 1 complete; WQE 2 goes again as PSN 2, alone. */
	cr_assert_eq(ntx(&p, Q), 1);
	cr_expect_eq(tx(&p, Q, 0)->psn, 2);
	for (i = 0; i < 2; i++) {
		cr_assert_eq(poll1(&p, &wc), 1);
		cr_expect_eq(wc.wr_id, (uint64_t)i);
		cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	}
	cr_expect_eq(poll1(&p, &wc), 0);
	inj_ack(&p, UROCE_AETH_ACK_NO_CREDIT, 2);
	cr_assert_eq(poll1(&p, &wc), 1);
	cr_expect_eq(wc.wr_id, 2);
	proto_fini(&p);
}

/* Go-back-N inside a multi-packet WRITE resumes mid-message. */
Test(comp, seq_nak_inside_message)
{
	struct sim_qp_opts o = { .psn0 = 0, .mtu = UROCE_MTU_256 };
	struct proto p;

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_RDMA_WRITE, 0, 4 * 256, 0, 1, 0);
	flush(&p, Q);
	simwire_cap_clear(p.sw, Q);
	inj_ack(&p, uroce_aeth_nak(UROCE_NAK_PSN_SEQ_ERR), 2);
	flush(&p, Q);
	/* Expect: MIDDLE at PSN 2 (bytes 512..767), LAST at 3. */
	cr_assert_eq(ntx(&p, Q), 2);
	cr_expect_eq(tx(&p, Q, 0)->opcode, UROCE_OP_RDMA_WRITE_MIDDLE);
	cr_expect_eq(tx(&p, Q, 0)->psn, 2);
	cr_expect_eq(memcmp(tx(&p, Q, 0)->payload, p.buf[Q] + 512, 256), 0);
	cr_expect_eq(tx(&p, Q, 1)->opcode, UROCE_OP_RDMA_WRITE_LAST);
	proto_fini(&p);
}

/* IBA 9.7.5.2 implied NAK: an ACK beyond an outstanding READ means its
 * response was lost: re-request the READ. */
Test(comp, implied_nak_on_ack_past_read)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_eng_wc wc;

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_RDMA_READ, 0, 8, 0, 1, 0);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 2, 0);
	flush(&p, Q);
	simwire_cap_clear(p.sw, Q);
	inj_ack(&p, UROCE_AETH_ACK_NO_CREDIT, 1);
	flush(&p, Q);
	/* Expect: READ request at PSN 0 again, SEND at 1 again; nothing done. */
	cr_assert(ntx(&p, Q) >= 1);
	cr_expect_eq(tx(&p, Q, 0)->opcode, UROCE_OP_RDMA_READ_REQUEST);
	cr_expect_eq(tx(&p, Q, 0)->psn, 0);
	cr_expect_eq(poll1(&p, &wc), 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[Q].qp, UROCE_CNT_IMPLIED_NAK_SEQ_ERR), 1);
	proto_fini(&p);
}

/* An atomic ACK for a later atomic also implies the earlier READ was lost. */
Test(comp, implied_nak_on_atomic_ack)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_ext_fields e = ack_ext;

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_RDMA_READ, 0, 8, 0, 1, 0);
	post_wr(&p, UROCE_WR_ATOMIC_FETCH_AND_ADD, 8, 8, 0, 2, 0);
	flush(&p, Q);
	simwire_cap_clear(p.sw, Q);
	e.orig = 5;
	inj(&p, Q, UROCE_OP_ATOMIC_ACKNOWLEDGE, 1, false, &e, NULL, 0);
	flush(&p, Q);
	cr_assert(ntx(&p, Q) >= 1);
	cr_expect_eq(tx(&p, Q, 0)->opcode, UROCE_OP_RDMA_READ_REQUEST);
	cr_expect_eq(tx(&p, Q, 0)->psn, 0);
	proto_fini(&p);
}

/* A gap in READ responses is an implied NAK: re-request the rest of the
 * READ from the first missing PSN (sub-range). */
Test(comp, read_response_gap_rerequests_subrange)
{
	struct sim_qp_opts o = { .psn0 = 100, .mtu = UROCE_MTU_256 };
	struct proto p;
	struct uroce_ext_fields e = ack_ext;
	const struct uroce_pkt *t;
	struct uroce_eng_wc wc;
	uint8_t d[256];

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_RDMA_READ, 0, 3 * 256, 0, 1, 0);
	flush(&p, Q);
	simwire_cap_clear(p.sw, Q);
	memset(d, 0xA1, sizeof(d));
	inj(&p, Q, UROCE_OP_RDMA_READ_RESPONSE_FIRST, 100, false, &e, d, 256);
	memset(d, 0xA3, sizeof(d));
	inj(&p, Q, UROCE_OP_RDMA_READ_RESPONSE_LAST, 102, false, &e, d, 256);
	flush(&p, Q);
	/* Expect: READ request at PSN 101 for va + 256, 512 bytes. */
	cr_assert_eq(ntx(&p, Q), 1);
	t = tx(&p, Q, 0);
	cr_expect_eq(t->opcode, UROCE_OP_RDMA_READ_REQUEST);
	cr_expect_eq(t->psn, 101);
	cr_expect_eq(uroce_reth_va(t->bth + t->info->off_reth), IOVA(1) + 256);
	cr_expect_eq(uroce_reth_dma_len(t->bth + t->info->off_reth), 512);
	/* The replay: FIRST 101, LAST 102. Expect: completion, data in place. */
	memset(d, 0xA2, sizeof(d));
	inj(&p, Q, UROCE_OP_RDMA_READ_RESPONSE_FIRST, 101, false, &e, d, 256);
	memset(d, 0xA3, sizeof(d));
	inj(&p, Q, UROCE_OP_RDMA_READ_RESPONSE_LAST, 102, false, &e, d, 256);
	cr_assert_eq(poll1(&p, &wc), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	cr_expect_eq(p.buf[Q][0], 0xA1);
	cr_expect_eq(p.buf[Q][256], 0xA2);
	cr_expect_eq(p.buf[Q][767], 0xA3);
	proto_fini(&p);
}

/* IBA 9.7.5.2.8: RNR NAK → wait the encoded time (no spinning), retry. */
Test(comp, rnr_nak_waits_then_retries)
{
	struct sim_qp_opts o = { .psn0 = 0, .rnr_retry = 7 };
	struct proto p;
	uint32_t wait = uroce_rnr_timer_us(14); /* 0.96 ms */

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 1, 0);
	flush(&p, Q);
	simwire_cap_clear(p.sw, Q);
	inj_ack(&p, uroce_aeth_rnr(14), 0);
	/* Expect: the RNR deadline is the next event; nothing is sent before. */
	cr_expect_eq(uroce_eng_next_deadline(simwire_engine(p.sw, Q)),
		     simwire_now(p.sw) + wait);
	simwire_advance(p.sw, wait - 1);
	cr_expect_eq(uroce_eng_poll(simwire_engine(p.sw, Q)), 0, "RNR wait spins");
	cr_expect_eq(ntx(&p, Q), 0);
	simwire_advance(p.sw, 1);
	flush(&p, Q);
	/* Expect: the SEND again at PSN 0. */
	cr_assert_eq(ntx(&p, Q), 1);
	cr_expect_eq(tx(&p, Q, 0)->psn, 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[Q].qp, UROCE_CNT_RX_RNR_NAK), 1);
	proto_fini(&p);
}

/* rnr_retry = 2: the third RNR NAK fails with RNR_RETRY_EXC_ERR. */
Test(comp, rnr_retry_exhausted)
{
	struct sim_qp_opts o = { .psn0 = 0, .rnr_retry = 2 };
	struct proto p;
	struct uroce_eng_wc wc;
	int i;

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 1, 0);
	flush(&p, Q);
	for (i = 0; i < 2; i++) {
		inj_ack(&p, uroce_aeth_rnr(1), 0);
		simwire_advance(p.sw, uroce_rnr_timer_us(1));
		flush(&p, Q);
	}
	cr_expect_eq(ntx(&p, Q), 3);
	inj_ack(&p, uroce_aeth_rnr(1), 0);
	cr_assert_eq(poll1(&p, &wc), 1);
	cr_expect_eq(wc.status, UROCE_WC_RNR_RETRY_EXC_ERR);
	cr_expect_eq(uroce_eng_qp_state(p.s[Q].qp), UROCE_QPS_ERR);
	cr_expect_eq(uroce_eng_qp_counter(p.s[Q].qp, UROCE_CNT_RNR_NAK_RETRY_ERR), 1);
	proto_fini(&p);
}

/* rnr_retry = 7 is infinite. */
Test(comp, rnr_retry_7_infinite)
{
	struct sim_qp_opts o = { .psn0 = 0, .rnr_retry = 7 };
	struct proto p;
	struct uroce_eng_wc wc;
	int i;

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 1, 0);
	flush(&p, Q);
	for (i = 0; i < 50; i++) {
		inj_ack(&p, uroce_aeth_rnr(1), 0);
		simwire_advance(p.sw, uroce_rnr_timer_us(1));
		flush(&p, Q);
	}
	cr_expect_eq(ntx(&p, Q), 51);
	cr_expect_eq(poll1(&p, &wc), 0);
	cr_expect_eq(uroce_eng_qp_state(p.s[Q].qp), UROCE_QPS_RTS);
	proto_fini(&p);
}

/* IBA table 44: each NAK code maps to its WC status; the QP goes to ERR and
 * the WQEs behind are flushed. */
Test(comp, nak_codes_to_wc_status)
{
	static const struct {
		enum uroce_nak_code code;
		enum uroce_wc_status st;
		enum uroce_counter cnt;
	} t[] = {
		{ UROCE_NAK_INVALID_REQUEST, UROCE_WC_REM_INV_REQ_ERR,
		  UROCE_CNT_REQ_REMOTE_INVALID_REQUEST },
		{ UROCE_NAK_REMOTE_ACCESS_ERR, UROCE_WC_REM_ACCESS_ERR,
		  UROCE_CNT_REQ_REMOTE_ACCESS_ERRORS },
		{ UROCE_NAK_REMOTE_OP_ERR, UROCE_WC_REM_OP_ERR, UROCE_CNT_REQ_REMOTE_OP_ERRORS },
		{ UROCE_NAK_INVALID_RD_REQUEST, UROCE_WC_REM_INV_RD_REQ_ERR,
		  UROCE_CNT_REQ_REMOTE_INVALID_REQUEST },
	};
	unsigned int i;

	for (i = 0; i < UROCE_ARRAY_SIZE(t); i++) {
		struct sim_qp_opts o = { .psn0 = 0 };
		struct proto p;
		struct uroce_eng_wc wc;

		proto_init(&p, &o);
		post_wr(&p, UROCE_WR_RDMA_WRITE, 0, 8, 0, 1, 0);
		post_wr(&p, UROCE_WR_RDMA_WRITE, 0, 8, 0, 2, 0);
		flush(&p, Q);
		inj_ack(&p, uroce_aeth_nak(t[i].code), 0);
		cr_assert_eq(poll1(&p, &wc), 1);
		cr_expect_eq(wc.wr_id, 1);
		cr_expect_eq(wc.status, t[i].st, "code %d got %s", t[i].code,
			     uroce_wc_status_str(wc.status));
		cr_assert_eq(poll1(&p, &wc), 1);
		cr_expect_eq(wc.wr_id, 2);
		cr_expect_eq(wc.status, UROCE_WC_WR_FLUSH_ERR);
		cr_expect_eq(uroce_eng_qp_state(p.s[Q].qp), UROCE_QPS_ERR);
		cr_expect_eq(uroce_eng_qp_counter(p.s[Q].qp, t[i].cnt), 1);
		proto_fini(&p);
	}
}

/* PSN wrap on the requester: 0xFFFFFF, 0, 1 and ACK across the wrap. */
Test(comp, psn_wrap_requester)
{
	struct sim_qp_opts o = { .psn0 = 0xFFFFFF, .mtu = UROCE_MTU_256 };
	struct proto p;
	struct uroce_eng_wc wc;

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_SEND, 0, 3 * 256, 0, 1, 0);
	flush(&p, Q);
	cr_assert_eq(ntx(&p, Q), 3);
	cr_expect_eq(tx(&p, Q, 0)->psn, 0xFFFFFF);
	cr_expect_eq(tx(&p, Q, 1)->psn, 0);
	cr_expect_eq(tx(&p, Q, 2)->psn, 1);
	inj_ack(&p, UROCE_AETH_ACK_NO_CREDIT, 0);
	cr_expect_eq(poll1(&p, &wc), 0, "partial ACK across the wrap completes nothing");
	inj_ack(&p, UROCE_AETH_ACK_NO_CREDIT, 1);
	cr_assert_eq(poll1(&p, &wc), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	proto_fini(&p);
}

/* IBA 10.3.1 SQD: WQEs in flight finish, no new WQE starts, and SQ_DRAINED
 * is raised once the send queue has drained. */
Test(comp, sqd_drains_then_event)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_eng_qp_attr a;

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 1, 0);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 2, 0);
	flush(&p, Q);
	cr_assert_eq(ntx(&p, Q), 2);
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_SQD;
	cr_assert_eq(uroce_eng_modify_qp(p.s[Q].qp, &a, UROCE_QP_STATE |
				     UROCE_QP_EN_SQD_ASYNC_NOTIFY), 0);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 3, 0);
	flush(&p, Q);
	/* Expect: nothing new sent in SQD, not drained yet. */
	cr_expect_eq(ntx(&p, Q), 2);
	cr_expect_eq(simwire_event_count(p.sw, Q, UROCE_EVENT_SQ_DRAINED), 0);
	uroce_eng_query_qp(p.s[Q].qp, &a, NULL);
	cr_expect(a.sq_draining);
	inj_ack(&p, UROCE_AETH_ACK_NO_CREDIT, 1);
	/* Expect: drained → one SQ_DRAINED event. */
	cr_expect_eq(simwire_event_count(p.sw, Q, UROCE_EVENT_SQ_DRAINED), 1);
	uroce_eng_query_qp(p.s[Q].qp, &a, NULL);
	cr_expect(!a.sq_draining);
	/* Back to RTS: the third SEND goes out. */
	a.qp_state = UROCE_QPS_RTS;
	cr_assert_eq(uroce_eng_modify_qp(p.s[Q].qp, &a, UROCE_QP_STATE), 0);
	flush(&p, Q);
	cr_assert_eq(ntx(&p, Q), 3);
	cr_expect_eq(tx(&p, Q, 2)->psn, 2);
	proto_fini(&p);
}

/* A lost ACK: the requester times out and resends; the responder sees a
 * duplicate, ACKs it again without delivering twice; the WQE completes. */
Test(comp, lost_ack_recovered_without_duplicate_delivery)
{
	struct sim_qp_opts o = { .psn0 = 0x20, .timeout = 8 };
	struct proto p;
	struct uroce_eng_wc wc[2];

	proto_init(&p, &o);
	post_recv_buf(&p, 1, 0, 64, 1);
	post_recv_buf(&p, 1, 64, 64, 2);
	post_wr(&p, UROCE_WR_SEND, 0, 16, 0, 7, 0);
	flush(&p, Q);
	cr_assert_eq(ntx(&p, Q), 1);
	simwire_cap_forward(p.sw, Q, 0);
	flush(&p, 1);
	/* Expect: the responder delivered once and ACKed PSN 0x20 ... */
	cr_assert_eq(ntx(&p, 1), 1);
	expect_ack(&p, 1, 0, UROCE_AETH_ACK, 0, 0x20);
	cr_expect_eq(uroce_eng_poll_cq(p.s[1].rcq, 2, wc), 1);
	/* ... which is lost. After the ACK timeout the SEND goes again. */
	simwire_advance(p.sw, uroce_ack_timeout_us(8));
	flush(&p, Q);
	cr_assert_eq(ntx(&p, Q), 2);
	cr_expect_eq(tx(&p, Q, 1)->psn, 0x20);
	simwire_cap_forward(p.sw, Q, 1);
	flush(&p, 1);
	/* Expect: a duplicate, ACKed again, not delivered again. */
	cr_assert_eq(ntx(&p, 1), 2);
	expect_ack(&p, 1, 1, UROCE_AETH_ACK, 0, 0x20);
	cr_expect_eq(uroce_eng_poll_cq(p.s[1].rcq, 2, wc), 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_DUPLICATE_REQUEST), 1);
	simwire_cap_forward(p.sw, 1, 1);
	cr_assert_eq(uroce_eng_poll_cq(p.s[Q].scq, 2, wc), 1);
	cr_expect_eq(wc[0].wr_id, 7);
	cr_expect_eq(wc[0].status, UROCE_WC_SUCCESS);
	cr_expect_eq(uroce_eng_next_deadline(simwire_engine(p.sw, Q)), UINT64_MAX,
		     "nothing outstanding: timer stopped");
	proto_fini(&p);
}
