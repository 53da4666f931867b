/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Responder protocol tests (lib/transport/resp.c). Side 1 is the responder
 * under test: each test injects requester packets into it and checks what
 * it sent back and what it completed. Each step is commented with Expect:.
 */

#include "simproto.h"

#define R 1 /* responder side */

static struct uroce_ext_fields
reth(struct proto *p, uint32_t off, uint32_t len)
{
	struct uroce_ext_fields e;

	memset(&e, 0, sizeof(e));
	e.va = IOVA(R) + off;
	e.rkey = uroce_eng_mr_rkey(p->mr[R]);
	e.dma_len = len;
	return e;
}

/* IBA 9.7.5.1.1 in-order SEND; IBA 9.7.2 ACK when AckReq is set. */
Test(resp, in_order_send_acked)
{
	struct sim_qp_opts o = { .psn0 = 100 };
	struct proto p;
	struct uroce_eng_wc wc;
	uint8_t data[10] = "0123456789";

	proto_init(&p, &o);
	post_recv_buf(&p, R, 0, 64, 7);
	inj(&p, R, UROCE_OP_SEND_ONLY, 100, true, NULL, data, 10);
	flush(&p, R);
	/* Expect: one ACK for PSN 100, and a RECV completion of 10 bytes. */
	cr_assert_eq(ntx(&p, R), 1);
	expect_ack(&p, R, 0, UROCE_AETH_ACK, 0, 100);
	cr_assert_eq(uroce_eng_poll_cq(p.s[R].rcq, 1, &wc), 1);
	cr_expect_eq(wc.wr_id, 7);
	cr_expect_eq(wc.byte_len, 10);
	cr_expect_eq(memcmp(p.buf[R], data, 10), 0);
	proto_fini(&p);
}

/* IBA 9.7.5.1.3: PSN ahead → one PSN sequence error NAK per gap, then
 * silent drops until the expected PSN arrives. */
Test(resp, psn_ahead_one_nak_then_silent)
{
	struct sim_qp_opts o = { .psn0 = 10 };
	struct proto p;
	uint8_t d[4] = { 1, 2, 3, 4 };

	proto_init(&p, &o);
	post_recv_buf(&p, R, 0, 64, 1);
	post_recv_buf(&p, R, 64, 64, 2);
	inj(&p, R, UROCE_OP_SEND_ONLY, 12, true, NULL, d, 4);
	flush(&p, R);
	/* Expect: NAK(PSN sequence error) carrying the expected PSN 10. */
	cr_assert_eq(ntx(&p, R), 1);
	expect_ack(&p, R, 0, UROCE_AETH_NAK, UROCE_NAK_PSN_SEQ_ERR, 10);
	inj(&p, R, UROCE_OP_SEND_ONLY, 13, true, NULL, d, 4);
	inj(&p, R, UROCE_OP_SEND_ONLY, 11, true, NULL, d, 4);
	flush(&p, R);
	/* Expect: nothing more for the same gap. */
	cr_expect_eq(ntx(&p, R), 1);
	cr_expect_eq(uroce_eng_qp_counter(p.s[R].qp, UROCE_CNT_OUT_OF_SEQUENCE), 3);
	inj(&p, R, UROCE_OP_SEND_ONLY, 10, true, NULL, d, 4);
	flush(&p, R);
	/* Expect: ePSN processed and ACKed; a new gap gets a new NAK. */
	cr_assert_eq(ntx(&p, R), 2);
	expect_ack(&p, R, 1, UROCE_AETH_ACK, 0, 10);
	inj(&p, R, UROCE_OP_SEND_ONLY, 14, true, NULL, d, 4);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 3);
	expect_ack(&p, R, 2, UROCE_AETH_NAK, UROCE_NAK_PSN_SEQ_ERR, 11);
	proto_fini(&p);
}

/* IBA 9.7.5.1.2: a duplicate SEND/WRITE is ACKed again, not executed again. */
Test(resp, duplicate_send_and_write_reacked_not_reexecuted)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_ext_fields e;
	struct uroce_eng_wc wc[4];
	uint8_t a[4] = { 1, 1, 1, 1 }, b[4] = { 2, 2, 2, 2 };

	proto_init(&p, &o);
	e = reth(&p, 256, 4);
	post_recv_buf(&p, R, 0, 64, 1);
	post_recv_buf(&p, R, 64, 64, 2);
	inj(&p, R, UROCE_OP_SEND_ONLY, 0, true, NULL, a, 4);
	inj(&p, R, UROCE_OP_RDMA_WRITE_ONLY, 1, true, &e, a, 4);
	flush(&p, R);
	simwire_cap_clear(p.sw, R);
	/* Expect: the duplicates are re-ACKed with the latest PSN (1)... */
	inj(&p, R, UROCE_OP_SEND_ONLY, 0, true, NULL, b, 4);
	inj(&p, R, UROCE_OP_RDMA_WRITE_ONLY, 1, true, &e, b, 4);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 1, "coalesced re-ACK");
	expect_ack(&p, R, 0, UROCE_AETH_ACK, 0, 1);
	/* ...and not executed: one RECV completion, memory unchanged. */
	cr_expect_eq(uroce_eng_poll_cq(p.s[R].rcq, 4, wc), 1);
	cr_expect_eq(memcmp(p.buf[R] + 256, a, 4), 0);
	cr_expect_eq(memcmp(p.buf[R] + 64, "\0\0\0\0", 4), 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[R].qp, UROCE_CNT_DUPLICATE_REQUEST), 2);
	proto_fini(&p);
}

/* IBA 9.7.5.1.2: a duplicate READ is replayed from the saved resource,
 * including a restart from a PSN inside it (sub-range). */
Test(resp, duplicate_read_replayed_with_subrange)
{
	struct sim_qp_opts o = { .psn0 = 0xFFFFFE, .mtu = UROCE_MTU_256 };
	struct proto p;
	struct uroce_ext_fields e;
	uint32_t i;

	proto_init(&p, &o);
	for (i = 0; i < 3 * 256; i++)
		p.buf[R][1024 + i] = (uint8_t)(i * 13);
	e = reth(&p, 1024, 3 * 256);
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 0xFFFFFE, true, &e, NULL, 0);
	flush(&p, R);
	/* Expect: FIRST 0xFFFFFE, MIDDLE 0xFFFFFF, LAST 0 (PSN wraps). */
	cr_assert_eq(ntx(&p, R), 3);
	cr_expect_eq(tx(&p, R, 0)->opcode, UROCE_OP_RDMA_READ_RESPONSE_FIRST);
	cr_expect_eq(tx(&p, R, 0)->psn, 0xFFFFFE);
	cr_expect_eq(tx(&p, R, 1)->opcode, UROCE_OP_RDMA_READ_RESPONSE_MIDDLE);
	cr_expect_eq(tx(&p, R, 1)->psn, 0xFFFFFF);
	cr_expect_eq(tx(&p, R, 2)->opcode, UROCE_OP_RDMA_READ_RESPONSE_LAST);
	cr_expect_eq(tx(&p, R, 2)->psn, 0);
	cr_expect_eq(memcmp(tx(&p, R, 1)->payload, p.buf[R] + 1024 + 256, 256), 0);
	/* A duplicate of the whole READ: Expect: the same three responses. */
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 0xFFFFFE, true, &e, NULL, 0);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 6);
	cr_expect_eq(tx(&p, R, 5)->psn, 0);
	/* A restart from the middle PSN for the rest of the range.
	 * Expect: FIRST at 0xFFFFFF carrying bytes 256..511, LAST at 0. */
	e = reth(&p, 1024 + 256, 2 * 256);
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 0xFFFFFF, true, &e, NULL, 0);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 8);
	cr_expect_eq(tx(&p, R, 6)->opcode, UROCE_OP_RDMA_READ_RESPONSE_FIRST);
	cr_expect_eq(tx(&p, R, 6)->psn, 0xFFFFFF);
	cr_expect_eq(memcmp(tx(&p, R, 6)->payload, p.buf[R] + 1024 + 256, 256), 0);
	cr_expect_eq(tx(&p, R, 7)->opcode, UROCE_OP_RDMA_READ_RESPONSE_LAST);
	cr_expect_eq(tx(&p, R, 7)->psn, 0);
	cr_expect_eq(memcmp(tx(&p, R, 7)->payload, p.buf[R] + 1024 + 512, 256), 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[R].qp, UROCE_CNT_RESP_READ_REPLAY), 2);
	/* A restart that does not match the saved READ is dropped. */
	e = reth(&p, 1024 + 100, 2 * 256);
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 0xFFFFFF, true, &e, NULL, 0);
	flush(&p, R);
	cr_expect_eq(ntx(&p, R), 8);
	proto_fini(&p);
}

/* IBA 9.7.5.1 atomics: a duplicate is answered with the saved
 * original value and never executed twice. */
Test(resp, duplicate_atomic_answered_from_saved_value)
{
	struct sim_qp_opts o = { .psn0 = 50 };
	struct proto p;
	struct uroce_ext_fields e;
	uint64_t v = 40, orig;

	proto_init(&p, &o);
	memcpy(p.buf[R] + 8, &v, 8);
	memset(&e, 0, sizeof(e));
	e.va = IOVA(R) + 8;
	e.rkey = uroce_eng_mr_rkey(p.mr[R]);
	e.swap_add = 2;
	inj(&p, R, UROCE_OP_FETCH_ADD, 50, true, &e, NULL, 0);
	flush(&p, R);
	/* Expect: ATOMIC ACK with original 40; memory 42. */
	cr_assert_eq(ntx(&p, R), 1);
	cr_expect_eq(tx(&p, R, 0)->opcode, UROCE_OP_ATOMIC_ACKNOWLEDGE);
	orig = uroce_atmack_orig(tx(&p, R, 0)->bth + tx(&p, R, 0)->info->off_atmack);
	cr_expect_eq(orig, 40);
	memcpy(&v, p.buf[R] + 8, 8);
	cr_expect_eq(v, 42);
	/* The duplicate: Expect: the same answer, memory still 42. */
	inj(&p, R, UROCE_OP_FETCH_ADD, 50, true, &e, NULL, 0);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 2);
	orig = uroce_atmack_orig(tx(&p, R, 1)->bth + tx(&p, R, 1)->info->off_atmack);
	cr_expect_eq(orig, 40);
	cr_expect_eq(tx(&p, R, 1)->psn, 50);
	memcpy(&v, p.buf[R] + 8, 8);
	cr_expect_eq(v, 42);
	cr_expect_eq(uroce_eng_qp_counter(p.s[R].qp, UROCE_CNT_RX_ATOMIC_REQUESTS), 1);
	cr_expect_eq(uroce_eng_qp_counter(p.s[R].qp, UROCE_CNT_RESP_ATOMIC_REPLAY), 1);
	proto_fini(&p);
}

/* IBA 9.7.5.1.4: no receive WQE → RNR NAK with min_rnr_timer; the retried
 * PSN is processed once a WQE is posted. */
Test(resp, rnr_nak_when_no_receive_wqe)
{
	struct sim_qp_opts o = { .psn0 = 5, .min_rnr_timer = 14 };
	struct proto p;
	struct uroce_eng_wc wc;
	uint8_t d[8] = "abcdefg";

	proto_init(&p, &o);
	inj(&p, R, UROCE_OP_SEND_ONLY, 5, true, NULL, d, 8);
	flush(&p, R);
	/* Expect: RNR NAK, timer code 14, PSN 5. */
	cr_assert_eq(ntx(&p, R), 1);
	expect_ack(&p, R, 0, UROCE_AETH_RNR_NAK, 14, 5);
	/* Packets after it are dropped silently while the requester waits. */
	inj(&p, R, UROCE_OP_SEND_ONLY, 6, true, NULL, d, 8);
	flush(&p, R);
	cr_expect_eq(ntx(&p, R), 1);
	post_recv_buf(&p, R, 0, 64, 3);
	inj(&p, R, UROCE_OP_SEND_ONLY, 5, true, NULL, d, 8);
	flush(&p, R);
	/* Expect: the retry is accepted and ACKed. */
	cr_assert_eq(ntx(&p, R), 2);
	expect_ack(&p, R, 1, UROCE_AETH_ACK, 0, 5);
	cr_assert_eq(uroce_eng_poll_cq(p.s[R].rcq, 1, &wc), 1);
	cr_expect_eq(wc.byte_len, 8);
	proto_fini(&p);
}

/* IBA 9.7.2: ACKs coalesce; one ACK covers several AckReq packets. */
Test(resp, acks_coalesce)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_ext_fields e;
	uint8_t d[4] = { 0 };
	int i;

	proto_init(&p, &o);
	e = reth(&p, 0, 4);
	for (i = 0; i < 5; i++)
		inj(&p, R, UROCE_OP_RDMA_WRITE_ONLY, (uint32_t)i, true, &e, d, 4);
	flush(&p, R);
	/* Expect: a single ACK for PSN 4. */
	cr_assert_eq(ntx(&p, R), 1);
	expect_ack(&p, R, 0, UROCE_AETH_ACK, 0, 4);
	cr_expect_eq(uroce_eng_qp_counter(p.s[R].qp, UROCE_CNT_RESP_ACKS_COALESCED), 4);
	/* MSN in the AETH counts completed messages: 5. */
	cr_expect_eq(uroce_aeth_msn(tx(&p, R, 0)->bth + tx(&p, R, 0)->info->off_aeth), 5);
	proto_fini(&p);
}

/* IBA 9.7.5.1: max_dest_rd_atomic outstanding responses; one more READ
 * is answered with NAK invalid request. */
Test(resp, max_dest_rd_atomic_enforced)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_ext_fields e;
	uint32_t i;

	proto_init(&p, &o);
	e = reth(&p, 0, 8);
	for (i = 0; i < UROCE_MAX_DEST_RD_ATOMIC + 1; i++)
		inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, i, true, &e, NULL, 0);
	flush(&p, R);
	/* Expect: 16 READ responses, then NAK invalid request for PSN 16. */
	cr_assert_eq(ntx(&p, R), UROCE_MAX_DEST_RD_ATOMIC + 1);
	for (i = 0; i < UROCE_MAX_DEST_RD_ATOMIC; i++)
		cr_expect_eq(tx(&p, R, i)->opcode, UROCE_OP_RDMA_READ_RESPONSE_ONLY);
	expect_ack(&p, R, UROCE_MAX_DEST_RD_ATOMIC, UROCE_AETH_NAK, UROCE_NAK_INVALID_REQUEST,
		   UROCE_MAX_DEST_RD_ATOMIC);
	cr_expect_eq(uroce_eng_qp_counter(p.s[R].qp, UROCE_CNT_RESP_RD_ATOMIC_EXCEEDED), 1);
	proto_fini(&p);
}

/* IBA 9.7.5.1 opcode sequence: a MIDDLE with no FIRST is an invalid
 * request; the responder NAKs and goes to ERR. */
Test(resp, bad_opcode_sequence_invalid_request)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	uint8_t d[1024] = { 0 };

	proto_init(&p, &o);
	post_recv_buf(&p, R, 0, 4096, 1);
	inj(&p, R, UROCE_OP_SEND_MIDDLE, 0, false, NULL, d, 1024);
	flush(&p, R);
	/* Expect: NAK invalid request, responder QP in ERR. */
	cr_assert_eq(ntx(&p, R), 1);
	expect_ack(&p, R, 0, UROCE_AETH_NAK, UROCE_NAK_INVALID_REQUEST, 0);
	cr_expect_eq(uroce_eng_qp_state(p.s[R].qp), UROCE_QPS_ERR);
	proto_fini(&p);
}

Test(resp, write_first_then_send_is_invalid)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_ext_fields e;
	uint8_t d[1024] = { 0 };

	proto_init(&p, &o);
	e = reth(&p, 0, 4096);
	post_recv_buf(&p, R, 0, 4096, 1);
	inj(&p, R, UROCE_OP_RDMA_WRITE_FIRST, 0, false, &e, d, 1024);
	inj(&p, R, UROCE_OP_SEND_LAST, 1, true, NULL, d, 10);
	flush(&p, R);
	/* Expect: NAK invalid request at PSN 1. */
	cr_assert_eq(ntx(&p, R), 1);
	expect_ack(&p, R, 0, UROCE_AETH_NAK, UROCE_NAK_INVALID_REQUEST, 1);
	proto_fini(&p);
}

/* FIRST/MIDDLE must carry exactly the path MTU. */
Test(resp, short_first_packet_invalid)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	uint8_t d[1024] = { 0 };

	proto_init(&p, &o);
	post_recv_buf(&p, R, 0, 4096, 1);
	/* 512 is a valid MTU (the wire accepts it) but not this QP's 1024. */
	inj(&p, R, UROCE_OP_SEND_FIRST, 0, false, NULL, d, 512);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 1);
	expect_ack(&p, R, 0, UROCE_AETH_NAK, UROCE_NAK_INVALID_REQUEST, 0);
	proto_fini(&p);
}

/* IBA 9.7.5.1: a SEND longer than the receive WQE: NAK invalid request,
 * the receive WQE completes with LOC_LEN_ERR. */
Test(resp, send_too_long_for_receive_buffer)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_eng_wc wc;
	uint8_t d[100] = { 0 };

	proto_init(&p, &o);
	post_recv_buf(&p, R, 0, 50, 9);
	inj(&p, R, UROCE_OP_SEND_ONLY, 0, true, NULL, d, 100);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 1);
	expect_ack(&p, R, 0, UROCE_AETH_NAK, UROCE_NAK_INVALID_REQUEST, 0);
	cr_assert_eq(uroce_eng_poll_cq(p.s[R].rcq, 1, &wc), 1);
	cr_expect_eq(wc.wr_id, 9);
	cr_expect_eq(wc.status, UROCE_WC_LOC_LEN_ERR);
	cr_expect_eq(uroce_eng_qp_counter(p.s[R].qp, UROCE_CNT_RESP_LOCAL_LENGTH_ERROR), 1);
	proto_fini(&p);
}

/* PSN wrap at 2^24 on the responder: FIRST 0xFFFFFF, LAST 0. */
Test(resp, psn_wrap_multi_packet_send)
{
	struct sim_qp_opts o = { .psn0 = 0xFFFFFF, .mtu = UROCE_MTU_256 };
	struct proto p;
	struct uroce_eng_wc wc;
	uint8_t d[300];
	uint32_t i;

	proto_init(&p, &o);
	for (i = 0; i < 300; i++)
		d[i] = (uint8_t)i;
	post_recv_buf(&p, R, 0, 1024, 1);
	inj(&p, R, UROCE_OP_SEND_FIRST, 0xFFFFFF, false, NULL, d, 256);
	inj(&p, R, UROCE_OP_SEND_LAST, 0, true, NULL, d + 256, 44);
	flush(&p, R);
	/* Expect: ACK for PSN 0; the message reassembled across the wrap. */
	cr_assert_eq(ntx(&p, R), 1);
	expect_ack(&p, R, 0, UROCE_AETH_ACK, 0, 0);
	cr_assert_eq(uroce_eng_poll_cq(p.s[R].rcq, 1, &wc), 1);
	cr_expect_eq(wc.byte_len, 300);
	cr_expect_eq(memcmp(p.buf[R], d, 300), 0);
	/* A PSN just behind the wrap is a duplicate, not a future PSN. */
	inj(&p, R, UROCE_OP_SEND_LAST, 0, true, NULL, d + 256, 44);
	flush(&p, R);
	cr_expect_eq(uroce_eng_qp_counter(p.s[R].qp, UROCE_CNT_DUPLICATE_REQUEST), 1);
	proto_fini(&p);
}

/* Zero-length WRITE with a bogus R_Key is fine (IBA 9.7.4.1.5: R_Key not
 * checked for a zero-length RDMA WRITE). */
Test(resp, zero_length_write_skips_rkey)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_ext_fields e;

	proto_init(&p, &o);
	memset(&e, 0, sizeof(e));
	e.rkey = 0xDEAD00;
	inj(&p, R, UROCE_OP_RDMA_WRITE_ONLY, 0, true, &e, NULL, 0);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 1);
	expect_ack(&p, R, 0, UROCE_AETH_ACK, 0, 0);
	proto_fini(&p);
}

/* Packets for a QPN that does not exist, or with the wrong service, are
 * counted and dropped (IBA 9.6.1.1). */
Test(resp, unknown_qpn_and_wrong_service)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_bth_fields b;
	uint8_t d[4] = { 0 };

	proto_init(&p, &o);
	memset(&b, 0, sizeof(b));
	b.opcode = UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_SEND_ONLY);
	b.pkey = UROCE_DEFAULT_PKEY;
	b.dqpn = 0x999;
	cr_assert_eq(simwire_inject(p.sw, R, &b, NULL, d, 4), 0);
	b.opcode = UROCE_OPCODE(UROCE_SVC_UC, UROCE_OP_SEND_ONLY);
	b.dqpn = uroce_eng_qp_num(p.s[R].qp);
	cr_assert_eq(simwire_inject(p.sw, R, &b, NULL, d, 4), 0);
	b.opcode = UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_SEND_ONLY);
	b.pkey = 0x1234;
	cr_assert_eq(simwire_inject(p.sw, R, &b, NULL, d, 4), 0);
	flush(&p, R);
	cr_expect_eq(ntx(&p, R), 0);
	cr_expect_eq(uroce_eng_counter(simwire_engine(p.sw, R), UROCE_CNT_RX_BAD_QPN), 1);
	cr_expect_eq(uroce_eng_qp_counter(p.s[R].qp, UROCE_CNT_RX_BAD_SERVICE), 1);
	cr_expect_eq(uroce_eng_qp_counter(p.s[R].qp, UROCE_CNT_RX_BAD_PKEY), 1);
	proto_fini(&p);
}

/* A responder set up with @p o that has answered READs 0 and 1
 * (8 bytes each); returns their RETH fields. */
static struct uroce_ext_fields
two_reads(struct proto *p, const struct sim_qp_opts *o)
{
	struct uroce_ext_fields e;

	proto_init(p, o);
	e = reth(p, 0, 8);
	inj(p, R, UROCE_OP_RDMA_READ_REQUEST, 0, true, &e, NULL, 0);
	inj(p, R, UROCE_OP_RDMA_READ_REQUEST, 1, true, &e, NULL, 0);
	flush(p, R);
	cr_assert_eq(ntx(p, R), 2);
	return e;
}

/* Resources: the requester completes in order, so the READs it may ask for
 * again are the newest. A new READ reuses the oldest resource; a replay of
 * that oldest one still queued came from a stale duplicate and is cancelled;
 * an oldest one still waiting for its first response means too many READs
 * outstanding: NAK invalid request. */
Test(resp, read_resources_keep_the_newest)
{
	struct sim_qp_opts o = { .psn0 = 0, .max_dest_rd_atomic = 2 };
	struct proto p;
	struct uroce_ext_fields e;

	e = two_reads(&p, &o);
	/* A stale duplicate of READ 0 is queued, then READ 2 arrives.
	 * Expect: READ 0's replay cancelled, READ 2 answered. */
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 0, true, &e, NULL, 0);
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 2, true, &e, NULL, 0);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 3);
	cr_expect_eq(tx(&p, R, 2)->psn, 2);
	cr_expect_eq(tx(&p, R, 2)->opcode, UROCE_OP_RDMA_READ_RESPONSE_ONLY);
	/* READ 1 is still held and replays; READ 0 is gone. */
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 1, true, &e, NULL, 0);
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 0, true, &e, NULL, 0);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 4);
	cr_expect_eq(tx(&p, R, 3)->psn, 1);
	cr_expect_eq(uroce_eng_qp_counter(p.s[R].qp, UROCE_CNT_RESP_REPLAY_MISS), 1);
	/* Three new READs before any response goes out, with max 2: the
	 * third finds the oldest still waiting for its first response. */
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 3, true, &e, NULL, 0);
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 4, true, &e, NULL, 0);
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 5, true, &e, NULL, 0);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 7);
	cr_expect_eq(tx(&p, R, 4)->psn, 3);
	cr_expect_eq(tx(&p, R, 5)->psn, 4);
	expect_ack(&p, R, 6, UROCE_AETH_NAK, UROCE_NAK_INVALID_REQUEST, 5);
	proto_fini(&p);
}

/* The resources fill in order and are then reused oldest first without a
 * scan; max_dest_rd_atomic raised in SQD (IBA 10.3.1) breaks that order.
 * Expect: the new READ takes the new free slot, so READs 0 and 1 still
 * replay; and after a reset the order starts again from the first slot. */
Test(resp, read_resources_after_max_dest_rd_atomic_changes)
{
	struct sim_qp_opts o = { .psn0 = 0, .max_dest_rd_atomic = 2 };
	struct uroce_eng_qp_attr a;
	struct proto p;
	struct uroce_ext_fields e;
	uint32_t psn;

	e = two_reads(&p, &o);
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_SQD;
	cr_assert_eq(uroce_eng_modify_qp(p.s[R].qp, &a, UROCE_QP_STATE), 0);
	a.max_dest_rd_atomic = 3;
	cr_assert_eq(uroce_eng_modify_qp(p.s[R].qp, &a, UROCE_QP_STATE |
					 UROCE_QP_MAX_DEST_RD_ATOMIC), 0);
	a.qp_state = UROCE_QPS_RTS;
	cr_assert_eq(uroce_eng_modify_qp(p.s[R].qp, &a, UROCE_QP_STATE), 0);
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 2, true, &e, NULL, 0);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 3);
	cr_expect_eq(tx(&p, R, 2)->psn, 2);
	/* Duplicates of all three: each replays, none is a miss. */
	for (psn = 0; psn < 3; psn++)
		inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, psn, true, &e, NULL, 0);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 6);
	for (psn = 0; psn < 3; psn++)
		cr_expect_eq(tx(&p, R, 3 + psn)->psn, psn);
	cr_expect_eq(uroce_eng_qp_counter(p.s[R].qp, UROCE_CNT_RESP_REPLAY_MISS), 0);
	/* Three more: the oldest go first, READ 0, then 1, then 2. */
	for (psn = 3; psn < 6; psn++)
		inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, psn, true, &e, NULL, 0);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 9);
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 2, true, &e, NULL, 0);
	flush(&p, R);
	cr_expect_eq(uroce_eng_qp_counter(p.s[R].qp, UROCE_CNT_RESP_REPLAY_MISS), 1);
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 3, true, &e, NULL, 0);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 10);
	cr_expect_eq(tx(&p, R, 9)->psn, 3);
	proto_fini(&p);
}

/* Every RC request opcode, in a valid sequence, into the responder.
 * Expect: the right placement, completions and responses for each. */
Test(resp, every_request_opcode)
{
	struct sim_qp_opts o = { .psn0 = 0, .mtu = UROCE_MTU_256 };
	struct proto p;
	struct uroce_ext_fields e;
	struct uroce_eng_wc wc[8];
	uint8_t d[256];
	uint64_t v = 10;
	uint32_t psn = 0;
	int n;

	proto_init(&p, &o);
	memset(d, 0x5C, sizeof(d));
	for (n = 0; n < 7; n++)
		post_recv_buf(&p, R, (uint32_t)n * 1024, 1024, (uint64_t)n);
	memset(&e, 0, sizeof(e));
	e.imm = 0x1234;
	/* SEND FIRST/MIDDLE/LAST, ONLY, ONLY_WITH_IMM, FIRST + LAST_WITH_IMM */
	inj(&p, R, UROCE_OP_SEND_FIRST, psn++, false, NULL, d, 256);
	inj(&p, R, UROCE_OP_SEND_MIDDLE, psn++, false, NULL, d, 256);
	inj(&p, R, UROCE_OP_SEND_LAST, psn++, true, NULL, d, 10);
	inj(&p, R, UROCE_OP_SEND_ONLY, psn++, true, NULL, d, 5);
	inj(&p, R, UROCE_OP_SEND_ONLY_WITH_IMMEDIATE, psn++, true, &e, d, 6);
	inj(&p, R, UROCE_OP_SEND_FIRST, psn++, false, NULL, d, 256);
	inj(&p, R, UROCE_OP_SEND_LAST_WITH_IMMEDIATE, psn++, true, &e, d, 7);
	/* (SEND with Invalidate: resp::send_with_invalidate_refused.) */
	inj(&p, R, UROCE_OP_SEND_ONLY, psn++, true, NULL, d, 8);
	n = uroce_eng_poll_cq(p.s[R].rcq, 8, wc);
	cr_assert_eq(n, 5);
	cr_expect_eq(wc[0].byte_len, 522);
	cr_expect_eq(wc[1].byte_len, 5);
	cr_expect_eq(wc[2].byte_len, 6);
	cr_expect_eq(wc[2].imm_data, 0x1234);
	cr_expect_eq(wc[3].byte_len, 263);
	cr_expect(wc[3].wc_flags & UROCE_WC_WITH_IMM);
	cr_expect_eq(wc[4].byte_len, 8);
	/* WRITE FIRST/MIDDLE/LAST, ONLY, FIRST + LAST_WITH_IMM, ONLY_WITH_IMM */
	e = (struct uroce_ext_fields){ .va = IOVA(R) + 16384, .rkey = uroce_eng_mr_rkey(p.mr[R]),
				       .dma_len = 600, .imm = 99 };
	inj(&p, R, UROCE_OP_RDMA_WRITE_FIRST, psn++, false, &e, d, 256);
	inj(&p, R, UROCE_OP_RDMA_WRITE_MIDDLE, psn++, false, NULL, d, 256);
	inj(&p, R, UROCE_OP_RDMA_WRITE_LAST, psn++, true, NULL, d, 88);
	e.dma_len = 4;
	inj(&p, R, UROCE_OP_RDMA_WRITE_ONLY, psn++, true, &e, d, 4);
	e.dma_len = 260;
	inj(&p, R, UROCE_OP_RDMA_WRITE_FIRST, psn++, false, &e, d, 256);
	inj(&p, R, UROCE_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE, psn++, true, &e, d, 4);
	e.dma_len = 3;
	inj(&p, R, UROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE, psn++, true, &e, d, 3);
	n = uroce_eng_poll_cq(p.s[R].rcq, 8, wc);
	cr_assert_eq(n, 2);
	cr_expect_eq(wc[0].opcode, UROCE_WC_RECV_RDMA_WITH_IMM);
	cr_expect_eq(wc[0].byte_len, 260);
	cr_expect_eq(wc[1].byte_len, 3);
	cr_expect_eq(wc[1].imm_data, 99);
	cr_expect_eq(p.buf[R][16384 + 599], 0x5C);
	/* READ, CMP_SWAP, FETCH_ADD */
	memcpy(p.buf[R] + 32768, &v, 8);
	e = (struct uroce_ext_fields){ .va = IOVA(R) + 16384, .rkey = uroce_eng_mr_rkey(p.mr[R]),
				       .dma_len = 300 };
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, psn, true, &e, NULL, 0);
	psn += 2;
	e = (struct uroce_ext_fields){ .va = IOVA(R) + 32768, .rkey = uroce_eng_mr_rkey(p.mr[R]),
				       .compare = 10, .swap_add = 20 };
	inj(&p, R, UROCE_OP_COMPARE_SWAP, psn++, true, &e, NULL, 0);
	e.swap_add = 5;
	inj(&p, R, UROCE_OP_FETCH_ADD, psn++, true, &e, NULL, 0);
	simwire_cap_clear(p.sw, R);
	flush(&p, R);
	/* Expect: READ FIRST+LAST, two atomic ACKs (10, 20); the pending ACK
	 * for PSN 14 is folded into the READ response that follows it. */
	cr_assert_eq(ntx(&p, R), 4);
	cr_expect_eq(tx(&p, R, 0)->opcode, UROCE_OP_RDMA_READ_RESPONSE_FIRST);
	cr_expect_eq(tx(&p, R, 1)->opcode, UROCE_OP_RDMA_READ_RESPONSE_LAST);
	cr_expect_eq(tx(&p, R, 1)->paylen, 44);
	cr_expect_eq(uroce_atmack_orig(tx(&p, R, 2)->bth + tx(&p, R, 2)->info->off_atmack), 10);
	cr_expect_eq(uroce_atmack_orig(tx(&p, R, 3)->bth + tx(&p, R, 3)->info->off_atmack), 20);
	cr_expect_eq(tx(&p, R, 3)->psn, 18);
	memcpy(&v, p.buf[R] + 32768, 8);
	cr_expect_eq(v, 25);
	proto_fini(&p);
}

/* WRITE_WITH_IMM needs a receive WQE only at its last packet: RNR there,
 * and the retried LAST places its bytes at the right offset. */
Test(resp, write_imm_rnr_on_last_packet)
{
	struct sim_qp_opts o = { .psn0 = 0, .mtu = UROCE_MTU_256, .min_rnr_timer = 3 };
	struct proto p;
	struct uroce_ext_fields e;
	struct uroce_eng_wc wc;
	uint8_t a[256], b[100];

	proto_init(&p, &o);
	memset(a, 0xAA, sizeof(a));
	memset(b, 0xBB, sizeof(b));
	e = reth(&p, 1000, 356);
	e.imm = 5;
	inj(&p, R, UROCE_OP_RDMA_WRITE_FIRST, 0, false, &e, a, 256);
	inj(&p, R, UROCE_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE, 1, true, &e, b, 100);
	flush(&p, R);
	/* Expect: RNR NAK for PSN 1, the LAST's bytes not placed. */
	cr_assert_eq(ntx(&p, R), 1);
	expect_ack(&p, R, 0, UROCE_AETH_RNR_NAK, 3, 1);
	cr_expect_eq(p.buf[R][1000 + 255], 0xAA);
	cr_expect_eq(p.buf[R][1000 + 256], 0);
	post_recv_buf(&p, R, 0, 16, 9);
	inj(&p, R, UROCE_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE, 1, true, &e, b, 100);
	flush(&p, R);
	/* Expect: ACK 1, RECV_RDMA_WITH_IMM of 356 bytes, data in place. */
	cr_assert_eq(ntx(&p, R), 2);
	expect_ack(&p, R, 1, UROCE_AETH_ACK, 0, 1);
	cr_assert_eq(uroce_eng_poll_cq(p.s[R].rcq, 1, &wc), 1);
	cr_expect_eq(wc.opcode, UROCE_WC_RECV_RDMA_WITH_IMM);
	cr_expect_eq(wc.byte_len, 356);
	cr_expect_eq(wc.imm_data, 5);
	cr_expect_eq(p.buf[R][1000 + 256], 0xBB);
	cr_expect_eq(p.buf[R][1000 + 355], 0xBB);
	cr_expect_eq(p.buf[R][1000 + 356], 0);
	proto_fini(&p);
}

/*
 * IBA 10.6.7.2.2: only a type 2 memory window or a fast-registration MR may
 * be invalidated by a peer; an MR from reg_mr never. A SEND with Invalidate
 * naming such an MR's R_Key is an invalid request: NAK invalid request, the
 * receive WQE completes with REM_INV_REQ_ERR, and the MR stays valid: a
 * WRITE to it on another QP still lands.
 */
Test(resp, send_with_invalidate_refused)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_eng_qp *qp2;
	struct uroce_eng_send_wr wr;
	struct uroce_wr_sge sge;
	struct uroce_ext_fields e;
	struct uroce_eng_wc wc;
	struct proto p;
	uint8_t d[8] = { 0 };

	proto_init(&p, &o);
	post_recv_buf(&p, R, 0, 64, 5);
	memset(&e, 0, sizeof(e));
	e.inv_rkey = uroce_eng_mr_rkey(p.mr[R]);
	inj(&p, R, UROCE_OP_SEND_ONLY_WITH_INVALIDATE, 0, true, &e, d, 8);
	flush(&p, R);
	/* Expect: NAK invalid request for PSN 0, WQE 5 in error, QP in ERR. */
	cr_assert_eq(ntx(&p, R), 1);
	expect_ack(&p, R, 0, UROCE_AETH_NAK, UROCE_NAK_INVALID_REQUEST, 0);
	cr_assert_eq(uroce_eng_poll_cq(p.s[R].rcq, 1, &wc), 1);
	cr_expect_eq(wc.wr_id, 5);
	cr_expect_eq(wc.status, UROCE_WC_REM_INV_REQ_ERR);
	cr_expect_eq(uroce_eng_qp_state(p.s[R].qp), UROCE_QPS_ERR);
	/* Expect: the MR still takes a WRITE through a second QP pair. */
	qp2 = sim_qp_create(&p.s[R], UROCE_QPT_RC, 16);
	cr_assert_not_null(qp2);
	{
		struct uroce_eng_qp *q0 = sim_qp_create(&p.s[0], UROCE_QPT_RC, 16);

		cr_assert_not_null(q0);
		cr_assert_eq(sim_connect(p.sw, q0, qp2, &o), 0);
		simwire_set_capture(p.sw, 0, false);
		simwire_set_capture(p.sw, 1, false);
		memset(p.buf[0], 0x77, 16);
		sge = (struct uroce_wr_sge){ IOVA(0), 16, uroce_eng_mr_lkey(p.mr[0]) };
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 9;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = UROCE_WR_RDMA_WRITE;
		wr.send_flags = UROCE_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = IOVA(R) + 4096;
		wr.wr.rdma.rkey = uroce_eng_mr_rkey(p.mr[R]);
		cr_assert_eq(uroce_eng_post_send(q0, &wr, NULL), 0);
		cr_assert_eq(sim_wait_cq(p.sw, p.s[0].scq, &wc, 1, 100000), 1);
		cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
		cr_expect_eq(memcmp(p.buf[R] + 4096, p.buf[0], 16), 0);
	}
	proto_fini(&p);
}

/*
 * IBA 9.7.5.1.5: the AETH of each READ response and atomic ACK carries the
 * MSN as of its own request, even when several arrive in one burst before
 * any response is sent; a duplicate is answered with the MSN it had.
 */
Test(resp, msn_per_response)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_ext_fields e;
	struct proto p;
	uint32_t i;

	proto_init(&p, &o);
	memset(&e, 0, sizeof(e));
	e.va = IOVA(R) + 512;
	e.rkey = uroce_eng_mr_rkey(p.mr[R]);
	e.swap_add = 1;
	for (i = 0; i < 5; i++)
		inj(&p, R, UROCE_OP_FETCH_ADD, i, true, &e, NULL, 0);
	e.dma_len = 16;
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 5, true, &e, NULL, 0);
	flush(&p, R);
	/* Expect: atomic ACKs with MSN 1..5, then the READ response with 6. */
	cr_assert_eq(ntx(&p, R), 6);
	for (i = 0; i < 6; i++) {
		const struct uroce_pkt *k = tx(&p, R, i);

		cr_expect_eq(uroce_aeth_msn(k->bth + k->info->off_aeth), i + 1, "response %u", i);
	}
	simwire_cap_clear(p.sw, R);
	/* A duplicate of the second FETCH_ADD: Expect: MSN 2 again. */
	inj(&p, R, UROCE_OP_FETCH_ADD, 1, true, &e, NULL, 0);
	flush(&p, R);
	cr_assert_eq(ntx(&p, R), 1);
	cr_expect_eq(uroce_aeth_msn(tx(&p, R, 0)->bth + tx(&p, R, 0)->info->off_aeth), 2);
	proto_fini(&p);
}

/* Refused requests are recorded with what the responder knew: the check,
 * the NAK (or a silent drop), the request's PSN and RETH/AtomicETH, the
 * expected PSN, and every saved READ/ATOMIC; the newest first. */
Test(resp, rejections_are_recorded)
{
	struct sim_qp_opts o = { .psn0 = 20, .max_dest_rd_atomic = 2 };
	struct uroce_eng_resp_reject rj[UROCE_RESP_REJECTS + 1];
	struct proto p;
	struct uroce_ext_fields e, a;

	proto_init(&p, &o);
	e = reth(&p, 0, 8);
	memset(&a, 0, sizeof(a));
	a.va = IOVA(R) + 8;
	a.rkey = uroce_eng_mr_rkey(p.mr[R]);
	a.swap_add = 1;
	cr_expect_eq(uroce_eng_qp_resp_rejects(p.s[R].qp, rj, 4), 0, "none before any");
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 20, true, &e, NULL, 0);
	flush(&p, R);
	inj(&p, R, UROCE_OP_FETCH_ADD, 21, true, &a, NULL, 0);
	flush(&p, R);
	inj(&p, R, UROCE_OP_FETCH_ADD, 22, true, &a, NULL, 0);
	flush(&p, R);
	/* With max_dest_rd_atomic 2, the atomic at 22 took READ 20's resource.
	 * An atomic claiming PSN 20: Expect: dropped, recorded as a replay
	 * miss, with the two atomics' resources. */
	inj(&p, R, UROCE_OP_FETCH_ADD, 20, true, &a, NULL, 0);
	flush(&p, R);
	cr_assert_eq(uroce_eng_qp_resp_rejects(p.s[R].qp, rj, 4), 1);
	cr_expect_eq(rj[0].check, UROCE_RCHK_REPLAY_MISS);
	cr_expect_eq(rj[0].nak, UROCE_RESP_REJECT_DROPPED);
	cr_expect_eq(rj[0].seq, 1);
	cr_expect_eq(rj[0].qpn, uroce_eng_qp_num(p.s[R].qp));
	cr_expect_eq(rj[0].psn, 20);
	cr_expect_eq(rj[0].epsn, 23);
	cr_expect_eq(rj[0].opcode, UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_FETCH_ADD));
	cr_expect_eq(rj[0].va, IOVA(R) + 8);
	cr_expect_eq(rj[0].len, 8);
	cr_expect_eq(rj[0].n_res, 2);
	cr_expect_eq(rj[0].res[0].type + rj[0].res[1].type, 4, "two atomics held");
	cr_expect(rj[0].res[0].first_psn == 21 || rj[0].res[1].first_psn == 21);
	/* A READ past the MR's end. Expect: NAK remote access, recorded with
	 * its RETH, newest first. */
	e = reth(&p, 0, 1 << 20);
	inj(&p, R, UROCE_OP_RDMA_READ_REQUEST, 23, true, &e, NULL, 0);
	flush(&p, R);
	cr_assert_eq(uroce_eng_qp_resp_rejects(p.s[R].qp, rj, UROCE_RESP_REJECTS + 1), 2);
	cr_expect_eq(rj[0].check, UROCE_RCHK_RKEY);
	cr_expect_eq(rj[0].nak, UROCE_NAK_REMOTE_ACCESS_ERR);
	cr_expect_eq(rj[0].seq, 2);
	cr_expect_eq(rj[0].psn, 23);
	cr_expect_eq(rj[0].len, 1u << 20);
	cr_expect_eq(rj[0].rkey, uroce_eng_mr_rkey(p.mr[R]));
	cr_expect_eq(rj[1].check, UROCE_RCHK_REPLAY_MISS);
	cr_expect_str_eq(uroce_resp_check_name(UROCE_RCHK_RKEY), "rkey");
	cr_expect_str_eq(uroce_resp_check_name(999), "?");
	proto_fini(&p);
}
