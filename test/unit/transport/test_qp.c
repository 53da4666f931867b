/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* The QP state machine (IBA 10.3.1, 11.2.5.2): transitions, required and
 * optional attributes, value ranges, and the flush on entry to ERR. */

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "simwire.h"

static struct simwire *sw;
static struct sim_side s;

static void
setup(void)
{
	sw = simwire_create(NULL);
	cr_assert_not_null(sw);
	memset(&s, 0, sizeof(s));
	s.pd = uroce_eng_pd_alloc(simwire_engine(sw, 0));
	s.scq = uroce_eng_cq_create(simwire_engine(sw, 0), 64, NULL);
	s.rcq = uroce_eng_cq_create(simwire_engine(sw, 0), 64, NULL);
	cr_assert(s.pd && s.scq && s.rcq);
}

static void
teardown(void)
{
	simwire_destroy(sw);
}

TestSuite(qp, .init = setup, .fini = teardown);

static const int init_mask = UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
			     UROCE_QP_ACCESS_FLAGS;
static const int rtr_mask = UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU |
			    UROCE_QP_DEST_QPN | UROCE_QP_RQ_PSN | UROCE_QP_MAX_DEST_RD_ATOMIC |
			    UROCE_QP_MIN_RNR_TIMER;
static const int rts_mask = UROCE_QP_STATE | UROCE_QP_SQ_PSN | UROCE_QP_TIMEOUT |
			    UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY | UROCE_QP_MAX_QP_RD_ATOMIC;

static void
good_attr(struct uroce_eng_qp_attr *a, enum uroce_qp_state st)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = st;
	a->port_num = 1;
	a->path_mtu = UROCE_MTU_1024;
	a->dest_qp_num = 0x22;
	a->rq_psn = 1;
	a->sq_psn = 2;
	a->max_dest_rd_atomic = 4;
	a->max_rd_atomic = 4;
	a->min_rnr_timer = 12;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->qp_access_flags = UROCE_ACCESS_REMOTE_WRITE;
}

static struct uroce_eng_qp *
rc_to(enum uroce_qp_state target)
{
	struct uroce_eng_qp *qp = sim_qp_create(&s, UROCE_QPT_RC, 16);
	struct uroce_eng_qp_attr a;

	cr_assert_not_null(qp);
	if (target == UROCE_QPS_RESET)
		return qp;
	good_attr(&a, UROCE_QPS_INIT);
	cr_assert_eq(uroce_eng_modify_qp(qp, &a, init_mask), 0);
	if (target == UROCE_QPS_INIT)
		return qp;
	good_attr(&a, UROCE_QPS_RTR);
	cr_assert_eq(uroce_eng_modify_qp(qp, &a, rtr_mask), 0);
	if (target == UROCE_QPS_RTR)
		return qp;
	good_attr(&a, UROCE_QPS_RTS);
	cr_assert_eq(uroce_eng_modify_qp(qp, &a, rts_mask), 0);
	if (target == UROCE_QPS_RTS)
		return qp;
	good_attr(&a, target);
	cr_assert_eq(uroce_eng_modify_qp(qp, &a, UROCE_QP_STATE), 0);
	return qp;
}

Test(qp, happy_path_reset_to_rts_and_query)
{
	struct uroce_eng_qp *qp = rc_to(UROCE_QPS_RTS);
	struct uroce_eng_qp_attr q;

	cr_assert_eq(uroce_eng_qp_state(qp), UROCE_QPS_RTS);
	cr_assert_eq(uroce_eng_query_qp(qp, &q, NULL), 0);
	cr_expect_eq(q.path_mtu, UROCE_MTU_1024);
	cr_expect_eq(q.dest_qp_num, 0x22);
	cr_expect_eq(q.rq_psn, 1);
	cr_expect_eq(q.sq_psn, 2);
	cr_expect_eq(q.min_rnr_timer, 12);
	cr_expect_eq(q.timeout, 14);
	cr_expect_eq(q.retry_cnt, 7);
	cr_expect_eq(q.max_rd_atomic, 4);
	cr_expect_eq(q.max_dest_rd_atomic, 4);
	cr_expect(uroce_eng_qp_num(qp) >= 0x11);
	cr_expect_eq(uroce_eng_qp(simwire_engine(sw, 0), uroce_eng_qp_num(qp)), qp);
	cr_expect_null(uroce_eng_qp(simwire_engine(sw, 0), 0xFFFFFF));
	cr_expect_null(uroce_eng_qp_context(qp));
}

/* Each required attribute of each transition, removed one at a time. */
Test(qp, missing_required_attribute_is_einval)
{
	const struct {
		enum uroce_qp_state from, to;
		int mask;
	} steps[] = {
		{ UROCE_QPS_RESET, UROCE_QPS_INIT, init_mask },
		{ UROCE_QPS_INIT, UROCE_QPS_RTR, rtr_mask },
		{ UROCE_QPS_RTR, UROCE_QPS_RTS, rts_mask },
	};
	unsigned int i, bit;

	for (i = 0; i < UROCE_ARRAY_SIZE(steps); i++) {
		for (bit = 1; bit < 21; bit++) {
			struct uroce_eng_qp *qp;
			struct uroce_eng_qp_attr a;

			if (!(steps[i].mask & (1 << bit)))
				continue;
			qp = rc_to(steps[i].from);
			good_attr(&a, steps[i].to);
			cr_expect_eq(uroce_eng_modify_qp(qp, &a, steps[i].mask & ~(1 << bit)), -EINVAL,
				     "%s->%s without bit %u accepted",
				     uroce_eng_qp_state_str(steps[i].from),
				     uroce_eng_qp_state_str(steps[i].to), bit);
			cr_expect_eq(uroce_eng_qp_state(qp), steps[i].from, "state changed");
			uroce_eng_qp_destroy(qp);
		}
	}
}

Test(qp, invalid_transitions_are_einval)
{
	const struct {
		enum uroce_qp_state from, to;
	} bad[] = {
		{ UROCE_QPS_RESET, UROCE_QPS_RTR }, { UROCE_QPS_RESET, UROCE_QPS_RTS },
		{ UROCE_QPS_RESET, UROCE_QPS_SQD }, { UROCE_QPS_INIT, UROCE_QPS_RTS },
		{ UROCE_QPS_INIT, UROCE_QPS_SQD }, { UROCE_QPS_RTR, UROCE_QPS_INIT },
		{ UROCE_QPS_RTR, UROCE_QPS_SQD }, { UROCE_QPS_RTS, UROCE_QPS_INIT },
		{ UROCE_QPS_RTS, UROCE_QPS_RTR }, { UROCE_QPS_ERR, UROCE_QPS_RTS },
		{ UROCE_QPS_ERR, UROCE_QPS_INIT }, { UROCE_QPS_RTS, UROCE_QPS_SQE },
		{ UROCE_QPS_SQD, UROCE_QPS_INIT },
	};
	unsigned int i;

	for (i = 0; i < UROCE_ARRAY_SIZE(bad); i++) {
		struct uroce_eng_qp *qp = rc_to(bad[i].from);
		struct uroce_eng_qp_attr a;

		good_attr(&a, bad[i].to);
		cr_expect_eq(uroce_eng_modify_qp(qp, &a, UROCE_QP_STATE), -EINVAL, "%s->%s accepted",
			     uroce_eng_qp_state_str(bad[i].from), uroce_eng_qp_state_str(bad[i].to));
		cr_expect_eq(uroce_eng_qp_state(qp), bad[i].from);
		uroce_eng_qp_destroy(qp);
	}
}

Test(qp, out_of_range_values_are_einval)
{
	struct uroce_eng_qp *qp = rc_to(UROCE_QPS_INIT);
	struct uroce_eng_qp_attr a;

	good_attr(&a, UROCE_QPS_RTR);
	a.path_mtu = 0;
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, rtr_mask), -EINVAL);
	a.path_mtu = 6; /* 8192 is not an IBA MTU */
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, rtr_mask), -EINVAL);
	good_attr(&a, UROCE_QPS_RTR);
	a.rq_psn = 1u << 24;
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, rtr_mask), -EINVAL);
	good_attr(&a, UROCE_QPS_RTR);
	a.min_rnr_timer = 32;
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, rtr_mask), -EINVAL);
	good_attr(&a, UROCE_QPS_RTR);
	a.max_dest_rd_atomic = UROCE_MAX_DEST_RD_ATOMIC + 1;
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, rtr_mask), -EINVAL);
	good_attr(&a, UROCE_QPS_RTR);
	/* An attribute RTR does not take (SQ_PSN) is rejected. */
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, rtr_mask | UROCE_QP_SQ_PSN), -EINVAL);
	cr_expect_eq(uroce_eng_qp_state(qp), UROCE_QPS_INIT);
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, rtr_mask), 0);
	good_attr(&a, UROCE_QPS_RTS);
	a.retry_cnt = 8;
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, rts_mask), -EINVAL);
	good_attr(&a, UROCE_QPS_RTS);
	a.rnr_retry = 8;
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, rts_mask), -EINVAL);
	good_attr(&a, UROCE_QPS_RTS);
	a.timeout = 32;
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, rts_mask), -EINVAL);
	good_attr(&a, UROCE_QPS_RTS);
	a.sq_psn = 0x1000000;
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, rts_mask), -EINVAL);
	good_attr(&a, UROCE_QPS_RTS);
	a.cur_qp_state = UROCE_QPS_INIT; /* wrong current state */
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, rts_mask | UROCE_QP_CUR_STATE), -EINVAL);
	cr_expect_eq(uroce_eng_qp_state(qp), UROCE_QPS_RTR);
}

Test(qp, every_mtu_accepted)
{
	enum uroce_mtu m;

	for (m = UROCE_MTU_256; m <= UROCE_MTU_4096; m++) {
		struct uroce_eng_qp *qp = rc_to(UROCE_QPS_INIT);
		struct uroce_eng_qp_attr a;

		good_attr(&a, UROCE_QPS_RTR);
		a.path_mtu = m;
		cr_expect_eq(uroce_eng_modify_qp(qp, &a, rtr_mask), 0);
		uroce_eng_qp_destroy(qp);
	}
}

Test(qp, sqd_and_back, .description = "RTS -> SQD -> RTS, SQD -> SQD with attributes")
{
	struct uroce_eng_qp *qp = rc_to(UROCE_QPS_SQD);
	struct uroce_eng_qp_attr a;

	cr_expect_eq(uroce_eng_qp_state(qp), UROCE_QPS_SQD);
	good_attr(&a, UROCE_QPS_SQD);
	a.timeout = 3;
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_TIMEOUT), 0);
	good_attr(&a, UROCE_QPS_RTS);
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, UROCE_QP_STATE), 0);
	cr_expect_eq(uroce_eng_qp_state(qp), UROCE_QPS_RTS);
}

Test(qp, any_state_to_err_and_reset)
{
	enum uroce_qp_state st;

	for (st = UROCE_QPS_RESET; st <= UROCE_QPS_SQD; st++) {
		struct uroce_eng_qp *qp = rc_to(st);
		struct uroce_eng_qp_attr a;

		good_attr(&a, UROCE_QPS_ERR);
		cr_expect_eq(uroce_eng_modify_qp(qp, &a, UROCE_QP_STATE), 0);
		cr_expect_eq(uroce_eng_qp_state(qp), UROCE_QPS_ERR);
		good_attr(&a, UROCE_QPS_RESET);
		cr_expect_eq(uroce_eng_modify_qp(qp, &a, UROCE_QP_STATE), 0);
		cr_expect_eq(uroce_eng_qp_state(qp), UROCE_QPS_RESET);
		uroce_eng_qp_destroy(qp);
	}
}

/* Entering ERR flushes every outstanding send and receive WQE (IBA 10.3.1). */
Test(qp, err_flushes_all_wqes)
{
	struct uroce_eng_qp *qp = rc_to(UROCE_QPS_RTS);
	struct uroce_eng_send_wr swr[3];
	struct uroce_eng_recv_wr rwr[2];
	struct uroce_eng_qp_attr a;
	struct uroce_eng_wc wc[8];
	int i, n;

	memset(swr, 0, sizeof(swr));
	memset(rwr, 0, sizeof(rwr));
	for (i = 0; i < 3; i++) {
		swr[i].wr_id = 10 + i;
		swr[i].opcode = UROCE_WR_SEND;
		swr[i].next = i < 2 ? &swr[i + 1] : NULL; /* unsignaled too */
	}
	for (i = 0; i < 2; i++) {
		rwr[i].wr_id = 20 + i;
		rwr[i].next = i < 1 ? &rwr[i + 1] : NULL;
	}
	/* Capture so nothing is acknowledged. */
	simwire_set_capture(sw, 0, true);
	cr_assert_eq(uroce_eng_post_send(qp, swr, NULL), 0);
	cr_assert_eq(uroce_eng_post_recv(qp, rwr, NULL), 0);
	uroce_eng_poll(simwire_engine(sw, 0));
	good_attr(&a, UROCE_QPS_ERR);
	cr_assert_eq(uroce_eng_modify_qp(qp, &a, UROCE_QP_STATE), 0);
	n = uroce_eng_poll_cq(s.scq, 8, wc);
	cr_assert_eq(n, 3);
	for (i = 0; i < 3; i++) {
		cr_expect_eq(wc[i].wr_id, (uint64_t)(10 + i));
		cr_expect_eq(wc[i].status, UROCE_WC_WR_FLUSH_ERR);
	}
	n = uroce_eng_poll_cq(s.rcq, 8, wc);
	cr_assert_eq(n, 2);
	for (i = 0; i < 2; i++) {
		cr_expect_eq(wc[i].wr_id, (uint64_t)(20 + i));
		cr_expect_eq(wc[i].status, UROCE_WC_WR_FLUSH_ERR);
	}
	/* Posting in ERR completes at once with a flush error. */
	swr[0].next = NULL;
	cr_assert_eq(uroce_eng_post_send(qp, swr, NULL), 0);
	cr_assert_eq(uroce_eng_poll_cq(s.scq, 8, wc), 1);
	cr_expect_eq(wc[0].status, UROCE_WC_WR_FLUSH_ERR);
}

Test(qp, post_send_before_rts_is_einval)
{
	struct uroce_eng_qp *qp = rc_to(UROCE_QPS_RTR);
	struct uroce_eng_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = UROCE_WR_SEND;
	cr_expect_eq(uroce_eng_post_send(qp, &wr, &bad), -EINVAL);
	cr_expect_eq(bad, &wr);
}

Test(qp, post_send_validation)
{
	struct uroce_eng_qp *qp = rc_to(UROCE_QPS_RTS);
	struct uroce_eng_qp *ud = sim_qp_create(&s, UROCE_QPT_UD, 4);
	struct uroce_eng_send_wr wr;
	struct uroce_wr_sge sge = { 0, 4, 0 };
	uint8_t big[UROCE_MAX_INLINE + 1];
	unsigned int i;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = UROCE_WR_ATOMIC_FETCH_AND_ADD; /* atomics are 8 bytes */
	wr.sg_list = &sge;
	wr.num_sge = 1;
	cr_expect_eq(uroce_eng_post_send(qp, &wr, NULL), -EINVAL);
	wr.opcode = UROCE_WR_SEND;
	wr.num_sge = UROCE_MAX_SGE + 1;
	cr_expect_eq(uroce_eng_post_send(qp, &wr, NULL), -EINVAL);
	sge.addr = (uint64_t)(uintptr_t)big;
	sge.length = sizeof(big);
	wr.num_sge = 1;
	wr.send_flags = UROCE_SEND_INLINE;
	cr_expect_eq(uroce_eng_post_send(qp, &wr, NULL), -EINVAL);
	wr.opcode = 77;
	wr.send_flags = 0;
	cr_expect_eq(uroce_eng_post_send(qp, &wr, NULL), -EINVAL);
	/* Queue full: 16 WRs fit, the 17th does not (nothing is acked: capture). */
	simwire_set_capture(sw, 0, true);
	wr.opcode = UROCE_WR_SEND;
	wr.num_sge = 0;
	for (i = 0; i < 16; i++)
		cr_expect_eq(uroce_eng_post_send(qp, &wr, NULL), 0);
	cr_expect_eq(uroce_eng_post_send(qp, &wr, NULL), -ENOMEM);
	/* UD: only SEND, and an AH is required. */
	cr_assert_not_null(ud);
	wr.opcode = UROCE_WR_RDMA_WRITE;
	cr_expect_eq(uroce_eng_post_send(ud, &wr, NULL), -EINVAL);
}

Test(qp, ud_transitions)
{
	struct uroce_eng_qp *qp = sim_qp_create(&s, UROCE_QPT_UD, 4);
	struct uroce_eng_qp_attr a;

	good_attr(&a, UROCE_QPS_INIT);
	/* UD needs QKEY, not ACCESS_FLAGS. */
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, init_mask), -EINVAL);
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
					   UROCE_QP_QKEY), 0);
	good_attr(&a, UROCE_QPS_RTR);
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, UROCE_QP_STATE), 0);
	good_attr(&a, UROCE_QPS_RTS);
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, UROCE_QP_STATE), -EINVAL);
	cr_expect_eq(uroce_eng_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN), 0);
}

Test(qp, create_rejects_bad_caps)
{
	struct uroce_eng_qp_init_attr ia;

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = UROCE_QPT_RC;
	ia.send_cq = s.scq;
	ia.recv_cq = s.rcq;
	ia.cap.max_send_wr = UROCE_MAX_QP_WR + 1;
	cr_expect_null(uroce_eng_qp_create(s.pd, &ia));
	cr_expect_eq(errno, EINVAL);
	ia.cap.max_send_wr = 4;
	ia.cap.max_send_sge = UROCE_MAX_SGE + 1;
	cr_expect_null(uroce_eng_qp_create(s.pd, &ia));
	ia.cap.max_send_sge = 1;
	ia.qp_type = 1; /* not RC/UC/UD */
	cr_expect_null(uroce_eng_qp_create(s.pd, &ia));
	ia.qp_type = UROCE_QPT_RC;
	ia.send_cq = NULL;
	cr_expect_null(uroce_eng_qp_create(s.pd, &ia));
}

/* One message spans at most 2^22 packets (PSN window), at the path MTU. */
Test(qp, message_packet_limit)
{
	struct uroce_eng_qp *qp = rc_to(UROCE_QPS_INIT);
	struct uroce_eng_qp_attr a;
	struct uroce_wr_sge sge = { 0, (1u << 30) + 1, 0 };
	struct uroce_eng_send_wr wr;

	good_attr(&a, UROCE_QPS_RTR);
	a.path_mtu = UROCE_MTU_256;
	cr_assert_eq(uroce_eng_modify_qp(qp, &a, rtr_mask), 0);
	good_attr(&a, UROCE_QPS_RTS);
	cr_assert_eq(uroce_eng_modify_qp(qp, &a, rts_mask), 0);
	simwire_set_capture(sw, 0, true);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = UROCE_WR_RDMA_READ;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	cr_expect_eq(uroce_eng_post_send(qp, &wr, NULL), -EINVAL, "2^22 + 1 packets");
	sge.length = 1u << 30;
	cr_expect_eq(uroce_eng_post_send(qp, &wr, NULL), 0, "exactly 2^22 packets");
}

/* IBA 1.2 XRC: an initiator (no receive side) may leave out the access
 * flags, max_dest_rd_atomic and min_rnr_timer; a target (no send side) the
 * retry counts and max_rd_atomic, not the timeout; both still take the full
 * RC set, and refuse what RC refuses. */
Test(qp, xrc_transitions_relax_the_missing_side)
{
	struct uroce_eng_qp_init_attr ia;
	struct uroce_eng_qp *ini, *tgt;
	struct uroce_eng_qp_attr a;

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = UROCE_QPT_XRC_SEND;
	ia.send_cq = s.scq;
	ia.recv_cq = s.scq;
	ia.cap.max_send_wr = 4;
	ini = uroce_eng_qp_create(s.pd, &ia);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = UROCE_QPT_XRC_RECV;
	ia.eng = simwire_engine(sw, 0);
	ia.xrcd = 3;
	tgt = uroce_eng_qp_create(s.pd, &ia);
	cr_assert(ini && tgt);
	/* Expect: the INI QP needs no access flags, nor the RTR responder set. */
	good_attr(&a, UROCE_QPS_INIT);
	cr_expect_eq(uroce_eng_modify_qp(ini, &a, init_mask & ~UROCE_QP_ACCESS_FLAGS), 0);
	good_attr(&a, UROCE_QPS_RTR);
	cr_expect_eq(uroce_eng_modify_qp(ini, &a, rtr_mask & ~(UROCE_QP_MAX_DEST_RD_ATOMIC |
							       UROCE_QP_MIN_RNR_TIMER)), 0);
	good_attr(&a, UROCE_QPS_RTS);
	cr_expect_eq(uroce_eng_modify_qp(ini, &a, rts_mask & ~UROCE_QP_RETRY_CNT), -EINVAL,
		     "the requester's retry count is required");
	cr_expect_eq(uroce_eng_modify_qp(ini, &a, rts_mask), 0);
	/* Expect: the TGT QP takes the full RC set at INIT and RTR, and needs
	 * only SQ_PSN and the timeout at RTS. */
	good_attr(&a, UROCE_QPS_INIT);
	cr_expect_eq(uroce_eng_modify_qp(tgt, &a, init_mask & ~UROCE_QP_ACCESS_FLAGS), -EINVAL,
		     "a target's access flags are required");
	cr_expect_eq(uroce_eng_modify_qp(tgt, &a, init_mask), 0);
	good_attr(&a, UROCE_QPS_RTR);
	cr_expect_eq(uroce_eng_modify_qp(tgt, &a, rtr_mask & ~UROCE_QP_MIN_RNR_TIMER), -EINVAL);
	cr_expect_eq(uroce_eng_modify_qp(tgt, &a, rtr_mask), 0);
	good_attr(&a, UROCE_QPS_RTS);
	cr_expect_eq(uroce_eng_modify_qp(tgt, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN), -EINVAL,
		     "the timeout is required");
	cr_expect_eq(uroce_eng_modify_qp(tgt, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN |
					 UROCE_QP_TIMEOUT), 0);
	cr_expect_eq(uroce_eng_qp_state(tgt), UROCE_QPS_RTS);
	/* Expect: a TGT QP posts nothing (no send queue of its own). */
	{
		struct uroce_eng_send_wr w;

		memset(&w, 0, sizeof(w));
		w.opcode = UROCE_WR_SEND;
		cr_expect_eq(uroce_eng_post_send(tgt, &w, NULL), -EINVAL);
	}
}
