/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * QP attributes of a connection (lib/cm/attr.c), on both sides of an
 * exchange that reproduces the golden rxe one (ib_write_bw -R: REQ PSN
 * 0xd4feac, REP PSN 0x54c4c2, no READ resources, ACK timeout 19 from life
 * 18 and ACK delay 15): each side sends with the other's starting PSN, the
 * resources cross over, the timeouts are Linux's.
 */

#include <criterion/criterion.h>

#include "cm_pair.h"

TestSuite(attr, .init = cm_pair_setup, .fini = cm_pair_teardown);

/* A's REQ as in the golden capture, B's REP likewise. */
static struct uroce_cm_id *
golden_exchange(uint8_t resp, uint8_t init, uint8_t rep_resp, uint8_t rep_init, uint8_t mtu,
		uint8_t transport)
{
	struct uroce_cm_req_param p;
	struct uroce_cm_rep_param rp;
	struct uroce_cm_id *a = uroce_cm_id_create(A.cm, &owner_tag);

	req_param(&p, 0x11, 15);
	p.responder_resources = resp;
	p.initiator_depth = init;
	p.packet_life_time = 18; /* Linux 6.1 on RoCE */
	p.path_mtu = mtu;
	p.transport = transport;
	cr_assert_eq(uroce_cm_send_req(a, &p), 0);
	deliver(&A, UROCE_CM_ATTR_REQ);
	cr_assert_not_null(B.last_new);
	rep_param(&rp, 0x11);
	rp.responder_resources = rep_resp;
	rp.initiator_depth = rep_init;
	cr_assert_eq(uroce_cm_send_rep(B.last_new, &rp), 0);
	return a;
}

Test(attr, passive_side_like_linux)
{
	struct uroce_cm_req_param p;
	struct uroce_cm_id *a = uroce_cm_id_create(A.cm, &owner_tag), *b;
	struct uroce_cm_qp_attr x;
	struct uroce_cm_rep_param rp;
	int mask;

	req_param(&p, 0x11, 15);
	p.responder_resources = 0;
	p.initiator_depth = 0;
	p.packet_life_time = 18;
	uroce_cm_send_req(a, &p);
	deliver(&A, UROCE_CM_ATTR_REQ);
	b = B.last_new;
	/* INIT: no READ resources asked for, so REMOTE_WRITE only. */
	cr_assert_eq(uroce_cm_qp_attr(b, UROCE_QPS_INIT, UROCE_MTU_4096, &x, &mask), 0);
	cr_expect_eq(x.qp_access_flags, UROCE_ACCESS_REMOTE_WRITE);
	cr_expect_eq(x.port_num, 1);
	cr_expect_eq(x.pkey_index, 0);
	cr_expect_eq(mask, UROCE_QP_STATE | UROCE_QP_ACCESS_FLAGS | UROCE_QP_PKEY_INDEX |
			       UROCE_QP_PORT);
	/* RTR before the REP (librdmacm asks then): the receive PSN is the caller's. */
	cr_assert_eq(uroce_cm_qp_attr(b, UROCE_QPS_RTR, UROCE_MTU_4096, &x, &mask), 0);
	cr_expect_eq(x.dest_qp_num, 0x11);
	cr_expect_eq(x.path_mtu, UROCE_MTU_1024);
	cr_expect_eq(x.rq_psn, 0);
	cr_expect_arr_eq(x.dgid, gid_a, 16, "the peer is the REQ's local GID");
	cr_expect_arr_eq(x.sgid, gid_b, 16);
	cr_expect_eq(x.flow_label, 0x98F17);
	cr_expect_eq(x.hop_limit, 64);
	cr_expect_eq(x.max_dest_rd_atomic, 0);
	cr_expect_eq(x.min_rnr_timer, 0);
	cr_expect_eq(mask, UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU | UROCE_QP_DEST_QPN |
			       UROCE_QP_RQ_PSN | UROCE_QP_MAX_DEST_RD_ATOMIC |
			       UROCE_QP_MIN_RNR_TIMER);
	/* RTS: the passive side sends with the REQ's PSN (golden: 0xd4feac). */
	cr_assert_eq(uroce_cm_qp_attr(b, UROCE_QPS_RTS, UROCE_MTU_4096, &x, &mask), 0);
	cr_expect_eq(x.sq_psn, 0xD4FEAC);
	cr_expect_eq(x.timeout, 19, "the REQ's local ACK timeout");
	cr_expect_eq(x.retry_cnt, 7);
	cr_expect_eq(x.rnr_retry, 7, "the REQ's RNR retry count");
	cr_expect_eq(x.max_rd_atomic, 0);
	cr_expect_eq(mask, UROCE_QP_STATE | UROCE_QP_SQ_PSN | UROCE_QP_TIMEOUT |
			       UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY |
			       UROCE_QP_MAX_QP_RD_ATOMIC);
	/* After the REP the receive PSN is the REP's. */
	rep_param(&rp, 0x11);
	uroce_cm_send_rep(b, &rp);
	cr_assert_eq(uroce_cm_qp_attr(b, UROCE_QPS_RTR, UROCE_MTU_4096, &x, &mask), 0);
	cr_expect_eq(x.rq_psn, 0x54C4C2);
}

Test(attr, active_side_like_linux)
{
	struct uroce_cm_id *a = golden_exchange(0, 0, 0, 0, UROCE_MTU_1024, 0);
	struct uroce_cm_qp_attr x;
	int mask;

	/* Before the REP the active side knows no peer QP. */
	cr_expect_eq(uroce_cm_qp_attr(a, UROCE_QPS_RTR, UROCE_MTU_4096, &x, &mask), -EAGAIN);
	cr_expect_eq(uroce_cm_qp_attr(a, UROCE_QPS_RTS, UROCE_MTU_4096, &x, &mask), -EAGAIN);
	cr_assert_eq(uroce_cm_qp_attr(a, UROCE_QPS_INIT, UROCE_MTU_4096, &x, &mask), 0);
	deliver(&B, UROCE_CM_ATTR_REP);
	cr_assert_eq(uroce_cm_qp_attr(a, UROCE_QPS_RTR, UROCE_MTU_4096, &x, &mask), 0);
	cr_expect_eq(x.dest_qp_num, 0x11);
	cr_expect_eq(x.rq_psn, 0xD4FEAC, "its own REQ's PSN");
	cr_expect_arr_eq(x.dgid, gid_b, 16);
	cr_expect_arr_eq(x.sgid, gid_a, 16);
	cr_assert_eq(uroce_cm_qp_attr(a, UROCE_QPS_RTS, UROCE_MTU_4096, &x, &mask), 0);
	cr_expect_eq(x.sq_psn, 0x54C4C2, "golden: the active side sends with the REP's PSN");
	cr_expect_eq(x.timeout, 19, "ack_timeout(REP ACK delay 15, life 18)");
	cr_expect_eq(x.rnr_retry, 7, "the REP's RNR retry count");
	cr_expect_eq(x.retry_cnt, 7);
}

/* IBA 12.7.29-30: what one side issues at once the other accepts. */
Test(attr, resources_cross_over)
{
	struct uroce_cm_id *a = golden_exchange(4, 2, 3, 1, UROCE_MTU_1024, 0), *b = B.last_new;
	struct uroce_cm_qp_attr x;
	int mask;

	deliver(&B, UROCE_CM_ATTR_REP);
	/* B answered with responder resources 3, initiator depth 1. */
	uroce_cm_qp_attr(b, UROCE_QPS_RTR, UROCE_MTU_4096, &x, &mask);
	cr_expect_eq(x.max_dest_rd_atomic, 3);
	uroce_cm_qp_attr(b, UROCE_QPS_RTS, UROCE_MTU_4096, &x, &mask);
	cr_expect_eq(x.max_rd_atomic, 1);
	uroce_cm_qp_attr(b, UROCE_QPS_INIT, UROCE_MTU_4096, &x, &mask);
	cr_expect_eq(x.qp_access_flags, UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ |
						UROCE_ACCESS_REMOTE_ATOMIC);
	/* A: its READs go to B's responder resources, B's to A's. */
	uroce_cm_qp_attr(a, UROCE_QPS_RTS, UROCE_MTU_4096, &x, &mask);
	cr_expect_eq(x.max_rd_atomic, 3);
	uroce_cm_qp_attr(a, UROCE_QPS_RTR, UROCE_MTU_4096, &x, &mask);
	cr_expect_eq(x.max_dest_rd_atomic, 1);
	uroce_cm_qp_attr(a, UROCE_QPS_INIT, UROCE_MTU_4096, &x, &mask);
	cr_expect_eq(x.qp_access_flags, UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ |
						UROCE_ACCESS_REMOTE_ATOMIC);
}

/* Before the REP, B's resources are the REQ's crossed over. */
Test(attr, passive_resources_from_the_req)
{
	struct uroce_cm_req_param p;
	struct uroce_cm_id *a = uroce_cm_id_create(A.cm, &owner_tag);
	struct uroce_cm_qp_attr x;
	int mask;

	req_param(&p, 0x11, 15);
	p.responder_resources = 5;
	p.initiator_depth = 0;
	uroce_cm_send_req(a, &p);
	deliver(&A, UROCE_CM_ATTR_REQ);
	uroce_cm_qp_attr(B.last_new, UROCE_QPS_INIT, UROCE_MTU_4096, &x, &mask);
	cr_expect_eq(x.qp_access_flags, UROCE_ACCESS_REMOTE_WRITE, "A issues no READs");
	uroce_cm_qp_attr(B.last_new, UROCE_QPS_RTS, UROCE_MTU_4096, &x, &mask);
	cr_expect_eq(x.max_rd_atomic, 5);
}

Test(attr, mtu_capped_by_the_port)
{
	struct uroce_cm_id *a = golden_exchange(0, 0, 0, 0, UROCE_MTU_4096, 0);
	struct uroce_cm_qp_attr x;
	int mask;

	deliver(&B, UROCE_CM_ATTR_REP);
	uroce_cm_qp_attr(a, UROCE_QPS_RTR, UROCE_MTU_1024, &x, &mask);
	cr_expect_eq(x.path_mtu, UROCE_MTU_1024);
	uroce_cm_qp_attr(a, UROCE_QPS_RTR, UROCE_MTU_4096, &x, &mask);
	cr_expect_eq(x.path_mtu, UROCE_MTU_4096);
}

Test(attr, uc_has_no_rc_attributes)
{
	struct uroce_cm_id *a = golden_exchange(0, 0, 0, 0, UROCE_MTU_1024,
						UROCE_CM_TRANSPORT_UC);
	struct uroce_cm_qp_attr x;
	int mask;

	deliver(&B, UROCE_CM_ATTR_REP);
	uroce_cm_qp_attr(a, UROCE_QPS_RTR, UROCE_MTU_4096, &x, &mask);
	cr_expect_eq(mask, UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU | UROCE_QP_DEST_QPN |
			       UROCE_QP_RQ_PSN);
	uroce_cm_qp_attr(a, UROCE_QPS_RTS, UROCE_MTU_4096, &x, &mask);
	cr_expect_eq(mask, UROCE_QP_STATE | UROCE_QP_SQ_PSN);
	cr_expect_eq(x.sq_psn, 0x54C4C2);
}

Test(attr, refused)
{
	struct uroce_cm_id *a = uroce_cm_id_create(A.cm, &owner_tag);
	struct uroce_cm_qp_attr x;
	int mask;

	cr_expect_eq(uroce_cm_qp_attr(a, UROCE_QPS_INIT, UROCE_MTU_4096, &x, &mask), -EINVAL,
		     "no REQ yet");
	cr_expect_eq(uroce_cm_qp_attr(NULL, UROCE_QPS_INIT, UROCE_MTU_4096, &x, &mask), -EINVAL);
	a = golden_exchange(0, 0, 0, 0, UROCE_MTU_1024, 0);
	cr_expect_eq(uroce_cm_qp_attr(a, UROCE_QPS_ERR, UROCE_MTU_4096, &x, &mask), -EINVAL);
	cr_expect_eq(uroce_cm_qp_attr(a, UROCE_QPS_INIT, UROCE_MTU_4096, NULL, &mask), -EINVAL);
}
