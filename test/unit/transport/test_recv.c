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
