/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * UC (IBA 9.8.3: no ACKs, a message with a missing packet is dropped whole,
 * resynchronisation on the next FIRST/ONLY), UD (IBA 9.8.2: one packet,
 * Q_Key, source QP, 40 bytes of GRH in front of the receive buffer) and
 * receives through an SRQ.
 */

#include "simproto.h"

static void
fill(uint8_t *p, uint32_t n, uint8_t seed)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 3);
}

Test(uc, lossless_send_and_write)
{
	struct sim_qp_opts o = { .type = UROCE_QPT_UC, .mtu = UROCE_MTU_256, .psn0 = 0xFFFFFE };
	struct proto p;
	struct uroce_eng_wc wc;

	proto_init(&p, &o);
	simwire_set_capture(p.sw, 0, false);
	simwire_set_capture(p.sw, 1, false);
	fill(p.buf[0], 1000, 1);
	post_recv_buf(&p, 1, 0, 2048, 5);
	post_wr(&p, UROCE_WR_SEND_WITH_IMM, 0, 1000, 0, 1, 0);
	post_wr(&p, UROCE_WR_RDMA_WRITE, 0, 700, 4096, 2, 0);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[0].scq, &wc, 1, 100000), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[0].scq, &wc, 1, 100000), 1);
	cr_expect_eq(wc.wr_id, 2);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[1].rcq, &wc, 1, 100000), 1);
	cr_expect_eq(wc.byte_len, 1000);
	cr_expect_eq(wc.wr_id, 5);
	simwire_settle(p.sw);
	cr_expect_eq(memcmp(p.buf[1], p.buf[0], 1000), 0);
	cr_expect_eq(memcmp(p.buf[1] + 4096, p.buf[0], 700), 0);
	/* No ACK ever crossed the wire: side 1 sent nothing. */
	cr_expect_eq(uroce_eng_counter(simwire_engine(p.sw, 1), UROCE_CNT_TX_PACKETS), 0);
	proto_fini(&p);
}

/* A lost MIDDLE drops message 2 whole; message 3 lands in the same receive
 * WQE (the receiver resynchronised on its FIRST). */
Test(uc, lost_packet_drops_message_resync_on_first)
{
	struct sim_qp_opts o = { .type = UROCE_QPT_UC, .mtu = UROCE_MTU_256 };
	struct proto p;
	struct uroce_eng_wc wc[4];
	uint32_t i;

	proto_init(&p, &o);
	fill(p.buf[0], 600, 10);
	fill(p.buf[0] + 1000, 600, 20);
	fill(p.buf[0] + 2000, 600, 30);
	post_recv_buf(&p, 1, 0, 1024, 100);
	post_recv_buf(&p, 1, 1024, 1024, 101);
	post_wr(&p, UROCE_WR_SEND, 0, 600, 0, 1, 0);
	post_wr(&p, UROCE_WR_SEND, 1000, 600, 0, 2, 0);
	post_wr(&p, UROCE_WR_SEND, 2000, 600, 0, 3, 0);
	flush(&p, 0);
	cr_assert_eq(ntx(&p, 0), 9);
	/* Expect: UC completes WQEs when sent, without ACKs. */
	cr_expect_eq(uroce_eng_poll_cq(p.s[0].scq, 4, wc), 3);
	for (i = 0; i < 9; i++)
		if (i != 4) /* the MIDDLE of message 2 is lost */
			simwire_cap_forward(p.sw, 0, i);
	cr_assert_eq(uroce_eng_poll_cq(p.s[1].rcq, 4, wc), 2);
	cr_expect_eq(wc[0].wr_id, 100);
	cr_expect_eq(wc[0].byte_len, 600);
	cr_expect_eq(memcmp(p.buf[1], p.buf[0], 600), 0);
	cr_expect_eq(wc[1].wr_id, 101);
	cr_expect_eq(wc[1].byte_len, 600);
	cr_expect_eq(memcmp(p.buf[1] + 1024, p.buf[0] + 2000, 600), 0, "message 3 data");
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RESP_SILENT_DROP), 1);
	flush(&p, 1);
	cr_expect_eq(ntx(&p, 1), 0, "UC sends no ACK or NAK");
	proto_fini(&p);
}

/* UC WRITE: a lost FIRST drops the rest of the message; the next works. */
Test(uc, lost_write_first_then_recovery)
{
	struct sim_qp_opts o = { .type = UROCE_QPT_UC, .mtu = UROCE_MTU_256 };
	struct proto p;
	uint32_t i;

	proto_init(&p, &o);
	fill(p.buf[0], 512, 40);
	memset(p.buf[1], 0xEE, 4096);
	post_wr(&p, UROCE_WR_RDMA_WRITE, 0, 512, 0, 1, 0);
	post_wr(&p, UROCE_WR_RDMA_WRITE, 0, 512, 1024, 2, 0);
	flush(&p, 0);
	cr_assert_eq(ntx(&p, 0), 4);
	for (i = 1; i < 4; i++)
		simwire_cap_forward(p.sw, 0, i);
	for (i = 0; i < 512; i++)
		cr_expect_eq(p.buf[1][i], 0xEE);
	cr_expect_eq(memcmp(p.buf[1] + 1024, p.buf[0], 512), 0);
	proto_fini(&p);
}

Test(ud, send_with_grh_and_src_qp)
{
	struct proto p;
	struct uroce_eng_ah *ah;
	struct uroce_eng_wc wc;

	ud_pair(&p);
	simwire_set_capture(p.sw, 0, false);
	ah = ud_ah(&p);
	fill(p.buf[0], 4096, 5);
	post_recv_buf(&p, 1, 0, 4096 + UROCE_GRH_LEN, 9);
	post_ud(&p, ah, 4096, 0x1234, 1);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[1].rcq, &wc, 1, 100000), 1);
	/* Expect: GRH flag, 40 + 4096 bytes, source QP, immediate, payload at 40. */
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	cr_expect_eq(wc.byte_len, 4096 + UROCE_GRH_LEN);
	cr_expect(wc.wc_flags & UROCE_WC_GRH);
	cr_expect_eq(wc.src_qp, uroce_eng_qp_num(p.s[0].qp));
	cr_expect_eq(wc.imm_data, 0x77);
	cr_expect_eq(memcmp(p.buf[1] + UROCE_GRH_LEN, p.buf[0], 4096), 0);
	/* IPv4 RoCEv2: the IPv4 header is in the last 20 bytes of the GRH. */
	cr_expect_eq(p.buf[1][20], 0x45);
	cr_expect_eq(memcmp(p.buf[1] + 20 + 12, simwire_gid(p.sw, 0) + 12, 4), 0);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[0].scq, &wc, 1, 100000), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	proto_fini(&p);
}

Test(ud, qkey_checked_and_privileged_qkey)
{
	struct proto p;
	struct uroce_eng_ah *ah;
	struct uroce_eng_wc wc;

	ud_pair(&p);
	simwire_set_capture(p.sw, 0, false);
	ah = ud_ah(&p);
	post_recv_buf(&p, 1, 0, 256, 1);
	post_ud(&p, ah, 10, 0x9999, 1);
	simwire_settle(p.sw);
	/* Expect: wrong Q_Key dropped silently and counted. */
	cr_expect_eq(uroce_eng_poll_cq(p.s[1].rcq, 1, &wc), 0);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RESP_UD_QKEY_ERR), 1);
	/* A Q_Key with the high bit set uses the sender QP's own Q_Key (0x1234). */
	post_ud(&p, ah, 10, 0x80000000u, 2);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[1].rcq, &wc, 1, 100000), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	cr_expect_eq(wc.byte_len, 10 + UROCE_GRH_LEN);
	proto_fini(&p);
}

Test(ud, limits)
{
	struct proto p;
	struct uroce_eng_ah *ah;
	struct uroce_wr_sge sge;
	struct uroce_eng_send_wr wr;
	struct uroce_eng_wc wc;

	ud_pair(&p);
	simwire_set_capture(p.sw, 0, false);
	ah = ud_ah(&p);
	/* Longer than one MTU: rejected at post. */
	sge = (struct uroce_wr_sge){ IOVA(0), 4097, uroce_eng_mr_lkey(p.mr[0]) };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = UROCE_WR_SEND;
	wr.wr.ud.ah = ah;
	cr_expect_eq(uroce_eng_post_send(p.s[0].qp, &wr, NULL), -EINVAL);
	wr.wr.ud.ah = NULL;
	sge.length = 8;
	cr_expect_eq(uroce_eng_post_send(p.s[0].qp, &wr, NULL), -EINVAL, "UD needs an AH");
	/* No receive WQE: dropped and counted (no RNR on UD). */
	post_ud(&p, ah, 8, 0x1234, 3);
	simwire_settle(p.sw);
	cr_expect_eq(uroce_eng_qp_counter(p.s[1].qp, UROCE_CNT_RESP_UD_DROP), 1);
	/* Receive buffer without room for GRH + payload: LOC_LEN_ERR. */
	post_recv_buf(&p, 1, 0, 30, 4);
	post_ud(&p, ah, 8, 0x1234, 4);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[1].rcq, &wc, 1, 100000), 1);
	cr_expect_eq(wc.status, UROCE_WC_LOC_LEN_ERR);
	proto_fini(&p);
}

/* Two RC QPs receive through one SRQ. */
Test(srq, two_qps_share_an_srq)
{
	struct simwire *sw = simwire_create(NULL);
	struct sim_side s[2];
	struct uroce_eng_srq_init_attr sa = { .max_wr = 8, .max_sge = 1 };
	struct uroce_eng_qp_init_attr ia;
	struct uroce_eng_srq *srq;
	struct uroce_eng_qp *a[2], *b[2];
	struct sim_qp_opts o = { .psn0 = 1 };
	uint8_t *m0 = calloc(1, 4096), *m1 = calloc(1, 4096);
	struct uroce_eng_mr *mr0, *mr1;
	struct uroce_eng_wc wc[4];
	int i, n = 0;

	memset(s, 0, sizeof(s));
	for (i = 0; i < 2; i++) {
		s[i].pd = uroce_eng_pd_alloc(simwire_engine(sw, i));
		s[i].scq = uroce_eng_cq_create(simwire_engine(sw, i), 16, NULL);
		s[i].rcq = uroce_eng_cq_create(simwire_engine(sw, i), 16, NULL);
	}
	srq = uroce_eng_srq_create(s[1].pd, &sa);
	cr_assert_not_null(srq);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = UROCE_QPT_RC;
	ia.send_cq = s[1].scq;
	ia.recv_cq = s[1].rcq;
	ia.srq = srq;
	ia.cap.max_send_wr = 4;
	ia.cap.max_send_sge = 1;
	for (i = 0; i < 2; i++) {
		a[i] = sim_qp_create(&s[0], UROCE_QPT_RC, 8);
		b[i] = uroce_eng_qp_create(s[1].pd, &ia);
		cr_assert(a[i] && b[i]);
		cr_assert_eq(sim_connect(sw, a[i], b[i], &o), 0);
	}
	mr0 = uroce_eng_mr_reg(s[0].pd, m0, 0, 4096, UROCE_ACCESS_LOCAL_WRITE);
	mr1 = uroce_eng_mr_reg(s[1].pd, m1, 0, 4096, UROCE_ACCESS_LOCAL_WRITE);
	for (i = 0; i < 2; i++) {
		struct uroce_wr_sge sge = { (uint64_t)i * 100, 100, uroce_eng_mr_lkey(mr1) };
		struct uroce_eng_recv_wr rwr = { .wr_id = 50 + (uint64_t)i, .sg_list = &sge,
					     .num_sge = 1 };

		cr_assert_eq(uroce_eng_post_srq_recv(srq, &rwr, NULL), 0);
	}
	cr_expect_eq(uroce_eng_post_recv(b[0], &(struct uroce_eng_recv_wr){ 0 }, NULL), -EINVAL,
		     "a QP with an SRQ has no RQ");
	for (i = 0; i < 2; i++) {
		struct uroce_wr_sge sge = { 0, 10, uroce_eng_mr_lkey(mr0) };
		struct uroce_eng_send_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1,
					    .opcode = UROCE_WR_SEND };

		m0[0] = (uint8_t)(0xA0 + i);
		cr_assert_eq(uroce_eng_post_send(a[i], &wr, NULL), 0);
		n += sim_wait_cq(sw, s[1].rcq, wc + n, 1, 100000);
	}
	cr_assert_eq(n, 2);
	cr_expect_eq(wc[0].qp_num, uroce_eng_qp_num(b[0]));
	cr_expect_eq(wc[1].qp_num, uroce_eng_qp_num(b[1]));
	cr_expect_eq(m1[0], 0xA0);
	cr_expect_eq(m1[100], 0xA1);
	cr_expect_eq(uroce_eng_srq_destroy(srq), -EBUSY);
	simwire_destroy(sw);
	free(m0);
	free(m1);
}

/* UC send error (bad lkey): LOC_PROT_ERR, the QP goes to SQE (IBA 10.3.1:
 * UC/UD send errors), later WRs are flushed, and SQE → RTS recovers. */
Test(uc, send_error_to_sqe_and_back)
{
	struct sim_qp_opts o = { .type = UROCE_QPT_UC };
	struct proto p;
	struct uroce_wr_sge sge = { IOVA(0), 8, 0x7777 };
	struct uroce_eng_send_wr wr;
	struct uroce_eng_qp_attr a;
	struct uroce_eng_wc wc[2];

	proto_init(&p, &o);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = UROCE_WR_SEND;
	cr_assert_eq(uroce_eng_post_send(p.s[0].qp, &wr, NULL), 0);
	flush(&p, 0);
	cr_assert_eq(uroce_eng_poll_cq(p.s[0].scq, 2, wc), 1);
	cr_expect_eq(wc[0].status, UROCE_WC_LOC_PROT_ERR);
	cr_expect_eq(uroce_eng_qp_state(p.s[0].qp), UROCE_QPS_SQE);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 2, 0);
	cr_assert_eq(uroce_eng_poll_cq(p.s[0].scq, 2, wc), 1);
	cr_expect_eq(wc[0].status, UROCE_WC_WR_FLUSH_ERR);
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTS;
	cr_assert_eq(uroce_eng_modify_qp(p.s[0].qp, &a, UROCE_QP_STATE), 0);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 3, 0);
	flush(&p, 0);
	cr_assert_eq(uroce_eng_poll_cq(p.s[0].scq, 2, wc), 1);
	cr_expect_eq(wc[0].status, UROCE_WC_SUCCESS);
	cr_expect_eq(ntx(&p, 0), 1);
	proto_fini(&p);
}
