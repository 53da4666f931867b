/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The late ICRC check (uroce_parse_split() with late set, as uroced's
 * loopback parses): the ICRC of an RC SEND or WRITE continuation, a READ
 * response or a UD SEND is checked as its payload is copied. A corrupted
 * one, whatever its flipped bits make it look like (another PSN, another
 * opcode, an AckReq, another Q_Key or QP), must be dropped and counted
 * having changed nothing: no ACK or NAK, no completion, no retry, no PSN
 * moved, no QP state changed, no receive WQE lost. The packets as sent then
 * complete the message with the right bytes.
 */

#include "simproto.h"

#define LEN 3072 /* FIRST, MIDDLE, LAST at a 1024-byte MTU */

static void
late_init(struct proto *p)
{
	struct sim_qp_opts o = { .mtu = UROCE_MTU_1024 };
	int i;

	proto_init(p, &o);
	simwire_set_late_icrc(p->sw, true);
	for (i = 0; i < LEN; i++)
		p->buf[0][i] = (uint8_t)(i * 7 + 3);
	for (i = 0; i < LEN; i++)
		p->buf[1][i] = (uint8_t)(i * 13 + 1);
}

/* Captured packet @i of @side, delivered with the byte at @p at XORed with
 * @p x (its ICRC as sent, so now wrong), then restored. */
static void
forward_flipped(struct proto *p, int side, uint32_t i, const uint8_t *at, uint8_t x)
{
	uint8_t *b = (uint8_t *)(uintptr_t)at;

	*b ^= x;
	simwire_cap_forward(p->sw, side, i);
	*b ^= x;
}

/* The ways a corrupted continuation @i of @side may look, each delivered
 * once; @p op_x turns its opcode into another that parses. @return how many. */
static uint32_t
corrupt_all_ways(struct proto *p, int side, uint32_t i, uint8_t op_x)
{
	const struct uroce_pkt *k = tx(p, side, i);

	cr_assert(k->info->mask & UROCE_F_LATE_ICRC, "%s", k->info->name);
	cr_assert_geq(k->paylen, UROCE_LATE_ICRC_MIN);
	forward_flipped(p, side, i, k->payload + 100, 0x10);   /* the data */
	forward_flipped(p, side, i, k->bth + 11, 0x01);        /* PSN - 1: a duplicate */
	forward_flipped(p, side, i, k->bth + 11, 0x02);        /* PSN + 2: ahead */
	forward_flipped(p, side, i, k->bth + 8, 0x80);         /* AckReq */
	forward_flipped(p, side, i, k->bth, op_x);             /* another opcode */
	return 5;
}

/* Post @p op of LEN bytes from side 0 and deliver its FIRST, then every
 * corrupted form of its MIDDLE and LAST (their opcodes XORed with @p mid_x
 * and @p last_x: another operation's, an opcode sequence error that would
 * NAK and end the QP if believed). Side 1 must answer none and stay in RTS.
 * @return how many corrupted packets were delivered. */
static uint32_t
corrupt_continuations(struct proto *p, enum uroce_wr_opcode op, uint8_t mid_x, uint8_t last_x)
{
	uint32_t n;

	post_wr(p, op, 0, LEN, 0, 1, 0);
	flush(p, 0);
	cr_assert_eq(ntx(p, 0), 3);
	simwire_cap_forward(p->sw, 0, 0);
	n = corrupt_all_ways(p, 0, 1, mid_x);
	n += corrupt_all_ways(p, 0, 2, last_x);
	flush(p, 1);
	cr_expect_eq(ntx(p, 1), 0, "a corrupted packet was answered");
	cr_expect_eq(uroce_eng_qp_counter(p->s[1].qp, UROCE_CNT_RX_ICRC_LATE), n);
	cr_expect_eq(simwire_stats(p->sw).late_bad, n, "uroce_eng_rx() said -EBADMSG");
	cr_expect_eq(uroce_eng_qp_counter(p->s[1].qp, UROCE_CNT_OUT_OF_SEQUENCE), 0);
	cr_expect_eq(uroce_eng_qp_counter(p->s[1].qp, UROCE_CNT_DUPLICATE_REQUEST), 0);
	cr_expect_eq(uroce_eng_qp_state(p->s[1].qp), UROCE_QPS_RTS);
	return n;
}

Test(late_icrc, corrupt_write_continuations_change_nothing)
{
	struct proto p;
	struct uroce_eng_wc wc;

	late_init(&p);
	corrupt_continuations(&p, UROCE_WR_RDMA_WRITE,
			      UROCE_OP_RDMA_WRITE_MIDDLE ^ UROCE_OP_SEND_MIDDLE,
			      UROCE_OP_RDMA_WRITE_LAST ^ UROCE_OP_SEND_LAST);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RX_WRITE_REQUESTS), 1);
	/* The packets as sent: the WRITE lands whole and is ACKed once. */
	simwire_cap_forward(p.sw, 0, 1);
	simwire_cap_forward(p.sw, 0, 2);
	flush(&p, 1);
	cr_assert_eq(ntx(&p, 1), 1);
	expect_ack(&p, 1, 0, UROCE_AETH_ACK, 0, 2);
	cr_expect_eq(memcmp(p.buf[1], p.buf[0], LEN), 0, "target bytes");
	simwire_cap_forward(p.sw, 1, 0);
	cr_assert_eq(uroce_eng_poll_cq(p.s[0].scq, 1, &wc), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	proto_fini(&p);
}

Test(late_icrc, corrupt_send_continuations_change_nothing)
{
	struct proto p;
	struct uroce_eng_wc wc;

	late_init(&p);
	memset(p.buf[1] + 8192, 0, LEN);
	post_recv_buf(&p, 1, 8192, 4096, 50);
	corrupt_continuations(&p, UROCE_WR_SEND, UROCE_OP_SEND_MIDDLE ^ UROCE_OP_RDMA_WRITE_MIDDLE,
			      UROCE_OP_SEND_LAST ^ UROCE_OP_RDMA_WRITE_LAST);
	cr_expect_eq(uroce_eng_poll_cq(p.s[1].rcq, 1, &wc), 0, "a corrupted LAST completed");
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RX_SEND_REQUESTS), 1);
	simwire_cap_forward(p.sw, 0, 1);
	simwire_cap_forward(p.sw, 0, 2);
	cr_assert_eq(uroce_eng_poll_cq(p.s[1].rcq, 1, &wc), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 50);
	cr_expect_eq(wc.byte_len, LEN);
	cr_expect_eq(memcmp(p.buf[1] + 8192, p.buf[0], LEN), 0, "received bytes");
	proto_fini(&p);
}

Test(late_icrc, corrupt_read_responses_change_nothing)
{
	struct proto p;
	struct uroce_eng_wc wc;
	uint32_t n;

	late_init(&p);
	memset(p.buf[0] + 8192, 0, LEN);
	post_wr(&p, UROCE_WR_RDMA_READ, 8192, LEN, 0, 1, 0);
	flush(&p, 0);
	cr_assert_eq(ntx(&p, 0), 1);
	simwire_cap_forward(p.sw, 0, 0);
	flush(&p, 1);
	cr_assert_eq(ntx(&p, 1), 3);
	/* FIRST: a flipped PSN ahead would be an implied NAK (a retried READ)
	 * if believed, MIDDLE's opcode a bad response error (QP to ERR). */
	n = corrupt_all_ways(&p, 1, 0, UROCE_OP_RDMA_READ_RESPONSE_FIRST ^
				       UROCE_OP_RDMA_READ_RESPONSE_ONLY);
	simwire_cap_forward(p.sw, 1, 0);
	n += corrupt_all_ways(&p, 1, 1, UROCE_OP_RDMA_READ_RESPONSE_MIDDLE ^
				       UROCE_OP_RDMA_READ_RESPONSE_LAST);
	n += corrupt_all_ways(&p, 1, 2, UROCE_OP_RDMA_READ_RESPONSE_LAST ^
				       UROCE_OP_RDMA_READ_RESPONSE_ONLY);
	flush(&p, 0);
	cr_expect_eq(ntx(&p, 0), 1, "a corrupted response made the requester send");
	cr_expect_eq(uroce_eng_poll_cq(p.s[0].scq, 1, &wc), 0, "a corrupted response completed");
	cr_expect_eq(uroce_eng_qp_counter(p.s[0].qp, UROCE_CNT_RX_ICRC_LATE), n);
	cr_expect_eq(simwire_stats(p.sw).late_bad, n, "uroce_eng_rx() said -EBADMSG");
	cr_expect_eq(uroce_eng_qp_counter(p.s[0].qp, UROCE_CNT_IMPLIED_NAK_SEQ_ERR), 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[0].qp, UROCE_CNT_DUPLICATE_RESPONSE), 0);
	cr_expect_eq(uroce_eng_qp_state(p.s[0].qp), UROCE_QPS_RTS);
	simwire_cap_forward(p.sw, 1, 1);
	simwire_cap_forward(p.sw, 1, 2);
	cr_assert_eq(uroce_eng_poll_cq(p.s[0].scq, 1, &wc), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	cr_expect_eq(memcmp(p.buf[0] + 8192, p.buf[1], LEN), 0, "bytes read");
	proto_fini(&p);
}

/* Below UROCE_LATE_ICRC_MIN, and for a message's first packet, the ICRC is
 * checked in the parse as before: nothing is late. */
Test(late_icrc, first_packets_and_short_payloads_are_checked_whole)
{
	struct proto p;

	late_init(&p);
	post_wr(&p, UROCE_WR_RDMA_WRITE, 0, LEN, 0, 1, 0);
	post_wr(&p, UROCE_WR_RDMA_WRITE, 0, 1024 + 200, 4096, 2, 0);
	flush(&p, 0);
	cr_assert_eq(ntx(&p, 0), 5);
	forward_flipped(&p, 0, 0, tx(&p, 0, 0)->payload + 5, 0x01); /* FIRST */
	forward_flipped(&p, 0, 4, tx(&p, 0, 4)->payload + 5, 0x01); /* LAST of 200 */
	cr_expect_eq(simwire_stats(p.sw).bad_parse, 2);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RX_ICRC_LATE), 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RX_PACKETS), 0);
	proto_fini(&p);
}

#define UD_LEN 1024

static void
ud_late_init(struct proto *p)
{
	int i;

	ud_pair(p);
	simwire_set_late_icrc(p->sw, true);
	for (i = 0; i < UD_LEN; i++)
		p->buf[0][i] = (uint8_t)(i * 7 + 3);
}

/* Send one UD SEND of UD_LEN bytes to @p to and hold it on side 0. */
static const struct uroce_pkt *
ud_send_held(struct proto *p, struct uroce_eng_qp *to)
{
	const struct uroce_pkt *k;

	post_ud_to(p, ud_ah(p), to, UD_LEN, 0x1234, 1);
	flush(p, 0);
	cr_assert_eq(ntx(p, 0), 1);
	k = tx(p, 0, 0);
	cr_assert(k->info->mask & UROCE_F_LATE_ICRC, "%s", k->info->name);
	return k;
}

static uint64_t
late_errors(struct proto *p)
{
	return uroce_eng_counter(simwire_engine(p->sw, 1), UROCE_CNT_RX_ICRC_LATE);
}

/* IBA C10-15 (Q_Key), 9.6.1 (QP): only after the ICRC holds. The receive
 * WQE a corrupted SEND took is the next SEND's: nothing completes, and the
 * packet as sent completes the first receive posted, with its bytes. */
Test(late_icrc, corrupt_ud_sends_complete_nothing_and_lose_no_receive)
{
	struct proto p;
	struct uroce_eng_wc wc;
	const struct uroce_pkt *k;
	const uint8_t *deth;

	ud_late_init(&p);
	post_recv_buf(&p, 1, 8192, UROCE_GRH_LEN + UD_LEN, 50);
	post_recv_buf(&p, 1, 12288, UROCE_GRH_LEN + UD_LEN, 51);
	k = ud_send_held(&p, p.s[1].qp);
	deth = k->bth + k->info->off_deth;
	forward_flipped(&p, 0, 0, k->payload + 100, 0x10); /* the data */
	forward_flipped(&p, 0, 0, deth + 3, 0x01);          /* another Q_Key */
	forward_flipped(&p, 0, 0, deth + 7, 0x01);          /* another source QP */
	forward_flipped(&p, 0, 0, k->bth + 5, 0x80);        /* no such QP */
	cr_expect_eq(uroce_eng_poll_cq(p.s[1].rcq, 1, &wc), 0, "a corrupted SEND completed");
	cr_expect_eq(late_errors(&p), 4);
	cr_expect_eq(simwire_stats(p.sw).late_bad, 4, "uroce_eng_rx() said -EBADMSG");
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RESP_UD_QKEY_ERR), 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RX_SEND_REQUESTS), 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RX_BAD_QPN), 0);
	cr_expect_eq(uroce_eng_rq_held(p.s[1].qp), 2, "a receive WQE was lost");
	simwire_cap_forward(p.sw, 0, 0);
	cr_assert_eq(uroce_eng_poll_cq(p.s[1].rcq, 1, &wc), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 50);
	cr_expect_eq(wc.byte_len, UROCE_GRH_LEN + UD_LEN);
	cr_expect_eq(wc.src_qp, uroce_eng_qp_num(p.s[0].qp));
	cr_expect_eq(wc.imm_data, 0x77);
	cr_expect_eq(memcmp(p.buf[1] + 8192 + UROCE_GRH_LEN, p.buf[0], UD_LEN), 0,
		     "received bytes");
	cr_expect_eq(uroce_eng_rq_held(p.s[1].qp), 1);
	proto_fini(&p);
}

/* With no receive posted, or one too short, a corrupted SEND is counted as
 * corrupted, not as the drop or the length error the packet as sent gets. */
Test(late_icrc, corrupt_ud_sends_without_a_fitting_receive_are_only_corrupted)
{
	struct proto p;
	struct uroce_eng_wc wc;
	const struct uroce_pkt *k;

	ud_late_init(&p);
	k = ud_send_held(&p, p.s[1].qp);
	forward_flipped(&p, 0, 0, k->payload + 100, 0x10);
	cr_expect_eq(late_errors(&p), 1);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RESP_UD_DROP), 0);
	simwire_cap_forward(p.sw, 0, 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RESP_UD_DROP), 1);
	post_recv_buf(&p, 1, 8192, UD_LEN, 60); /* no room for the GRH */
	forward_flipped(&p, 0, 0, k->payload + 100, 0x10);
	cr_expect_eq(late_errors(&p), 2);
	cr_expect_eq(uroce_eng_poll_cq(p.s[1].rcq, 1, &wc), 0, "a corrupted SEND completed");
	simwire_cap_forward(p.sw, 0, 0);
	cr_assert_eq(uroce_eng_poll_cq(p.s[1].rcq, 1, &wc), 1);
	cr_expect_eq(wc.status, UROCE_WC_LOC_LEN_ERR);
	cr_expect_eq(wc.wr_id, 60);
	cr_expect_eq(simwire_stats(p.sw).late_bad, 2);
	proto_fini(&p);
}

/* A UD QP's receive from an SRQ: a corrupted SEND takes no WQE from it,
 * which another QP of the SRQ could have had. */
Test(late_icrc, corrupt_ud_send_takes_nothing_from_an_srq)
{
	struct uroce_eng_srq_init_attr sa = { .max_wr = 8, .max_sge = 1 };
	struct uroce_wr_sge sge;
	struct uroce_eng_recv_wr rwr = { .wr_id = 70, .sg_list = &sge, .num_sge = 1 };
	struct sim_qp_opts o = { .type = UROCE_QPT_UD, .qkey = 0x1234 };
	struct uroce_eng_qp_init_attr ia;
	struct uroce_eng_srq *srq;
	struct uroce_eng_qp *qp;
	struct uroce_eng_wc wc;
	const struct uroce_pkt *k;
	struct proto p;

	ud_late_init(&p);
	srq = uroce_eng_srq_create(p.s[1].pd, &sa);
	cr_assert_not_null(srq);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = UROCE_QPT_UD;
	ia.send_cq = p.s[1].scq;
	ia.recv_cq = p.s[1].rcq;
	ia.srq = srq;
	ia.cap.max_send_wr = 4;
	ia.cap.max_send_sge = 1;
	qp = uroce_eng_qp_create(p.s[1].pd, &ia);
	cr_assert_not_null(qp);
	cr_assert_eq(sim_qp_up(p.sw, qp, 1, p.s[0].qp, &o), 0);
	sge = (struct uroce_wr_sge){ IOVA(1) + 8192, UROCE_GRH_LEN + UD_LEN,
				     uroce_eng_mr_lkey(p.mr[1]) };
	cr_assert_eq(uroce_eng_post_srq_recv(srq, &rwr, NULL), 0);
	k = ud_send_held(&p, qp);
	forward_flipped(&p, 0, 0, k->payload + 100, 0x10);
	cr_expect_eq(late_errors(&p), 1);
	cr_expect_eq(uroce_eng_srq_count(srq), 1, "the SRQ lost its WQE");
	simwire_cap_forward(p.sw, 0, 0);
	cr_assert_eq(uroce_eng_poll_cq(p.s[1].rcq, 1, &wc), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 70);
	cr_expect_eq(memcmp(p.buf[1] + 8192 + UROCE_GRH_LEN, p.buf[0], UD_LEN), 0);
	cr_expect_eq(uroce_eng_qp_destroy(qp), 0);
	cr_expect_eq(uroce_eng_srq_destroy(srq), 0);
	proto_fini(&p);
}
