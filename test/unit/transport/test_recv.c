/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* Receive demultiplexing and common checks (recv.c, IBA 9.6): unknown QPN,
 * wrong service, wrong P_Key, QP state, CNP. */

#include "simproto.h"

static void
inject_raw(struct proto *p, uint8_t opcode, uint32_t dqpn, uint16_t pkey)
{
	struct uroce_bth_fields b;
	uint8_t d[4] = { 0 };

	memset(&b, 0, sizeof(b));
	b.opcode = opcode;
	b.pkey = pkey;
	b.dqpn = dqpn;
	cr_assert_eq(simwire_inject(p->sw, 1, &b, NULL, d,
				    uroce_opcode_get(opcode)->mask & UROCE_F_PAYLOAD ? 4 : 0), 0);
}

Test(recv, demux_checks)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_eng *e;
	uint32_t qpn;

	proto_init(&p, &o);
	e = simwire_engine(p.sw, 1);
	qpn = uroce_eng_qp_num(p.s[1].qp);
	inject_raw(&p, UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_SEND_ONLY), 0x123456, 0xFFFF);
	inject_raw(&p, UROCE_OPCODE(UROCE_SVC_UD, UROCE_OP_SEND_ONLY), qpn, 0xFFFF);
	inject_raw(&p, UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_SEND_ONLY), qpn, 0x8001);
	/* The membership bit is ignored: 0x7FFF is the default P_Key too. */
	post_recv_buf(&p, 1, 0, 64, 1);
	inject_raw(&p, UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_SEND_ONLY), qpn, 0x7FFF);
	inject_raw(&p, UROCE_OPCODE_CNP, qpn, 0xFFFF);
	cr_expect_eq(uroce_eng_counter(e, UROCE_CNT_RX_BAD_QPN), 1);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RX_BAD_SERVICE), 1);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RX_BAD_PKEY), 1);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RX_SEND_REQUESTS), 1);
	cr_expect_eq(uroce_eng_counter(e, UROCE_CNT_RX_CNP), 1);
	proto_fini(&p);
}

/* A QP in RESET/INIT or ERR drops requests; responses need RTS/SQD. */
Test(recv, state_checks)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_eng_qp_attr a;
	struct uroce_ext_fields e = { .syndrome = UROCE_AETH_ACK_NO_CREDIT };

	proto_init(&p, &o);
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_ERR;
	cr_assert_eq(uroce_eng_modify_qp(p.s[1].qp, &a, UROCE_QP_STATE), 0);
	inj(&p, 1, UROCE_OP_SEND_ONLY, 0, true, NULL, "abcd", 4);
	inj(&p, 1, UROCE_OP_ACKNOWLEDGE, 0, false, &e, NULL, 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RX_BAD_STATE), 2);
	flush(&p, 1);
	cr_expect_eq(ntx(&p, 1), 0);
	proto_fini(&p);
}

/* Inject an RC packet into side 1's QP from source GID @p sgid. */
static void
inj_from(struct proto *p, const uint8_t sgid[16], uint8_t op, uint32_t psn,
	 const struct uroce_ext_fields *ext, const void *pay, uint32_t len)
{
	struct uroce_bth_fields b;

	memset(&b, 0, sizeof(b));
	b.opcode = UROCE_OPCODE(UROCE_SVC_RC, op);
	b.pkey = UROCE_DEFAULT_PKEY;
	b.dqpn = uroce_eng_qp_num(p->s[1].qp);
	b.psn = psn;
	b.ackreq = true;
	cr_assert_eq(simwire_inject_from(p->sw, 1, sgid, &b, ext, pay, len, 0), 0);
}

/*
 * IBA 9.6 (connected services): an RC QP hears only its peer. A WRITE with
 * the right QPN, PSN and R_Key from another source address, a spoofed ACK
 * and a spoofed NAK are dropped and counted; nothing is placed, acknowledged
 * or completed, and the real peer's WRITE then goes through.
 */
Test(recv, connected_qp_drops_foreign_source)
{
	static const uint8_t spoof4[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
					    198, 18, 66, 66 };
	static const uint8_t spoof6[16] = { 0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0,
					    0, 0, 0, 0, 0, 0, 0x66, 0x66 };
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_ext_fields e;
	struct uroce_eng_wc wc;
	struct proto p;
	uint8_t d[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	proto_init(&p, &o);
	memset(&e, 0, sizeof(e));
	e.va = IOVA(1) + 128;
	e.rkey = uroce_eng_mr_rkey(p.mr[1]);
	e.dma_len = 8;
	inj_from(&p, spoof4, UROCE_OP_RDMA_WRITE_ONLY, 0, &e, d, 8);
	inj_from(&p, spoof6, UROCE_OP_RDMA_WRITE_ONLY, 0, &e, d, 8);
	memset(&e, 0, sizeof(e));
	e.syndrome = uroce_aeth_nak(UROCE_NAK_REMOTE_ACCESS_ERR);
	inj_from(&p, spoof4, UROCE_OP_ACKNOWLEDGE, 0, &e, NULL, 0);
	flush(&p, 1);
	/* Expect: three drops counted, no ACK, no byte placed, QP still RTS. */
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RX_BAD_SRC_ADDR), 3);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RX_WRITE_REQUESTS), 0);
	cr_expect_eq(ntx(&p, 1), 0);
	cr_expect_eq(memcmp(p.buf[1] + 128, "\0\0\0\0\0\0\0\0", 8), 0);
	cr_expect_eq(uroce_eng_qp_state(p.s[1].qp), UROCE_QPS_RTS);
	cr_expect_eq(uroce_eng_poll_cq(p.s[1].scq, 1, &wc), 0);
	/* Expect: the peer's own WRITE at the same PSN is placed and ACKed. */
	memset(&e, 0, sizeof(e));
	e.va = IOVA(1) + 128;
	e.rkey = uroce_eng_mr_rkey(p.mr[1]);
	e.dma_len = 8;
	inj(&p, 1, UROCE_OP_RDMA_WRITE_ONLY, 0, true, &e, d, 8);
	flush(&p, 1);
	cr_assert_eq(ntx(&p, 1), 1);
	expect_ack(&p, 1, 0, UROCE_AETH_ACK, 0, 0);
	cr_expect_eq(memcmp(p.buf[1] + 128, d, 8), 0);
	proto_fini(&p);
}

/* The same for UC: a foreign source's WRITE is dropped and counted, and the
 * peer's next WRITE ONLY is placed (UC has no ACK). */
Test(recv, uc_qp_drops_foreign_source)
{
	static const uint8_t spoof[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
					   198, 18, 66, 66 };
	struct sim_qp_opts o = { .type = UROCE_QPT_UC, .psn0 = 5 };
	struct uroce_bth_fields b;
	struct uroce_ext_fields e;
	struct proto p;
	uint8_t d[4] = { 9, 9, 9, 9 };

	proto_init(&p, &o);
	memset(&b, 0, sizeof(b));
	b.opcode = UROCE_OPCODE(UROCE_SVC_UC, UROCE_OP_RDMA_WRITE_ONLY);
	b.pkey = UROCE_DEFAULT_PKEY;
	b.dqpn = uroce_eng_qp_num(p.s[1].qp);
	b.psn = 5;
	memset(&e, 0, sizeof(e));
	e.va = IOVA(1) + 64;
	e.rkey = uroce_eng_mr_rkey(p.mr[1]);
	e.dma_len = 4;
	cr_assert_eq(simwire_inject_from(p.sw, 1, spoof, &b, &e, d, 4, 0), 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RX_BAD_SRC_ADDR), 1);
	cr_expect_eq(memcmp(p.buf[1] + 64, "\0\0\0\0", 4), 0);
	cr_assert_eq(simwire_inject(p.sw, 1, &b, &e, d, 4), 0);
	cr_expect_eq(memcmp(p.buf[1] + 64, d, 4), 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RX_WRITE_REQUESTS), 1);
	proto_fini(&p);
}
