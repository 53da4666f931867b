/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* The engine: creation checks, counters and their names, timers found
 * through the timer list, bounded poll work, TX buffer exhaustion. */

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "simproto.h"

static uint64_t fake_now;
static unsigned int allocs, sends;
static bool starve;

static uint64_t
f_now(void *ctx)
{
	(void)ctx;
	return fake_now;
}

static uint8_t *
f_alloc(void *ctx, uint32_t len)
{
	(void)ctx;
	if (starve)
		return NULL;
	allocs++;
	return malloc(len);
}

static void
f_send(void *ctx, uint8_t *buf, uint32_t len, const struct uroce_eng_tx_addr *a)
{
	(void)ctx;
	(void)len;
	(void)a;
	sends++;
	free(buf);
}

static void
f_free(void *ctx, uint8_t *buf)
{
	(void)ctx;
	free(buf);
}

Test(engine, create_requires_ops)
{
	struct uroce_eng_ops ops = { .now_us = f_now, .tx_alloc = f_alloc, .tx_send = f_send,
					.tx_free = f_free };
	struct uroce_eng_conf c;
	struct uroce_eng *e;

	memset(&c, 0, sizeof(c));
	cr_expect_null(uroce_eng_create(NULL));
	cr_expect_eq(errno, EINVAL);
	cr_expect_null(uroce_eng_create(&c));
	c.ops = &ops;
	c.ud_mtu = 1000; /* not an IBA MTU */
	cr_expect_null(uroce_eng_create(&c));
	c.ud_mtu = 0;
	ops.tx_free = NULL;
	cr_expect_null(uroce_eng_create(&c));
	ops.tx_free = f_free;
	e = uroce_eng_create(&c);
	cr_assert_not_null(e);
	cr_expect_eq(uroce_eng_next_deadline(e), UINT64_MAX);
	cr_expect(!uroce_eng_busy(e));
	cr_expect_eq(uroce_eng_poll(e), 0);
	uroce_eng_destroy(e);
	uroce_eng_destroy(NULL);
}

Test(engine, counter_names_from_def)
{
	unsigned int i, j;

	cr_expect_str_eq(uroce_eng_counter_name(UROCE_CNT_OUT_OF_SEQUENCE), "out_of_sequence");
	cr_expect_str_eq(uroce_eng_counter_name(UROCE_CNT_PACKET_SEQ_ERR), "packet_seq_err");
	cr_expect_str_eq(uroce_eng_counter_name(UROCE_CNT_LOCAL_ACK_TIMEOUT_ERR),
			 "local_ack_timeout_err");
	cr_expect_str_eq(uroce_eng_counter_name(UROCE_CNT_IMPLIED_NAK_SEQ_ERR),
			 "implied_nak_seq_err");
	cr_expect_null(uroce_eng_counter_name(UROCE_CNT_MAX));
	for (i = 0; i < UROCE_CNT_MAX; i++) {
		cr_assert_not_null(uroce_eng_counter_name(i));
		cr_assert_not_null(uroce_eng_counter_desc(i));
		for (j = i + 1; j < UROCE_CNT_MAX; j++)
			cr_expect_str_neq(uroce_eng_counter_name(i), uroce_eng_counter_name(j));
	}
	cr_expect_str_eq(uroce_wc_status_str(UROCE_WC_RETRY_EXC_ERR),
			 "transport retry counter exceeded");
	cr_expect_str_eq(uroce_eng_qp_state_str(UROCE_QPS_SQD), "SQD");
	cr_expect_str_eq(uroce_eng_qp_state_str(99), "?");
}

/* Timers: the next deadline is the earliest armed one across QPs; a poll
 * before it does no timer work. */
Test(engine, next_deadline_tracks_earliest_timer)
{
	struct sim_qp_opts o1 = { .psn0 = 0, .timeout = 12 };
	struct proto p;
	struct uroce_eng_qp *q2;
	uint64_t t0;

	proto_init(&p, &o1);
	t0 = simwire_now(p.sw);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 1, 0);
	flush(&p, 0);
	cr_expect_eq(uroce_eng_next_deadline(simwire_engine(p.sw, 0)),
		     t0 + uroce_ack_timeout_us(12));
	/* A second QP with a shorter timeout becomes the earliest. */
	q2 = sim_qp_create(&p.s[0], UROCE_QPT_RC, 4);
	{
		struct sim_side other = p.s[1];
		struct uroce_eng_qp *peer = sim_qp_create(&other, UROCE_QPT_RC, 4);
		struct sim_qp_opts o2 = { .psn0 = 0, .timeout = 8 };
		struct uroce_wr_sge sge = { IOVA(0), 8, uroce_eng_mr_lkey(p.mr[0]) };
		struct uroce_eng_send_wr wr = { .sg_list = &sge, .num_sge = 1,
					    .opcode = UROCE_WR_SEND };

		cr_assert_eq(sim_connect(p.sw, q2, peer, &o2), 0);
		simwire_advance(p.sw, 10);
		cr_assert_eq(uroce_eng_post_send(q2, &wr, NULL), 0);
		flush(&p, 0);
	}
	cr_expect_eq(uroce_eng_next_deadline(simwire_engine(p.sw, 0)),
		     t0 + 10 + uroce_ack_timeout_us(8));
	simwire_advance(p.sw, uroce_ack_timeout_us(8) - 1);
	cr_expect_eq(uroce_eng_poll(simwire_engine(p.sw, 0)), 0);
	proto_fini(&p);
}

/* TX buffer exhaustion: nothing is lost; the requester resumes later. */
Test(engine, tx_alloc_failure_retried)
{
	struct uroce_eng_ops ops = { .now_us = f_now, .tx_alloc = f_alloc, .tx_send = f_send,
					.tx_free = f_free };
	struct uroce_eng_conf c = { .ops = &ops, .poll_budget = 4 };
	struct uroce_eng *e = uroce_eng_create(&c);
	struct sim_side s;
	struct uroce_eng_qp_attr a;
	struct uroce_eng_send_wr wr;
	int i;

	cr_assert_not_null(e);
	memset(&s, 0, sizeof(s));
	s.pd = uroce_eng_pd_alloc(e);
	s.scq = uroce_eng_cq_create(e, 64, NULL);
	s.rcq = uroce_eng_cq_create(e, 64, NULL);
	s.qp = sim_qp_create(&s, UROCE_QPT_RC, 16);
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.port_num = 1;
	cr_assert_eq(uroce_eng_modify_qp(s.qp, &a, UROCE_QP_STATE | UROCE_QP_PORT |
				     UROCE_QP_PKEY_INDEX | UROCE_QP_ACCESS_FLAGS), 0);
	a.qp_state = UROCE_QPS_RTR;
	a.path_mtu = UROCE_MTU_1024;
	cr_assert_eq(uroce_eng_modify_qp(s.qp, &a, UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU |
				     UROCE_QP_DEST_QPN | UROCE_QP_RQ_PSN |
				     UROCE_QP_MAX_DEST_RD_ATOMIC | UROCE_QP_MIN_RNR_TIMER), 0);
	a.qp_state = UROCE_QPS_RTS;
	a.max_rd_atomic = 1;
	a.timeout = 10;
	a.retry_cnt = 7;
	cr_assert_eq(uroce_eng_modify_qp(s.qp, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN | UROCE_QP_TIMEOUT |
				     UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY |
				     UROCE_QP_MAX_QP_RD_ATOMIC), 0);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = UROCE_WR_SEND;
	for (i = 0; i < 10; i++)
		cr_assert_eq(uroce_eng_post_send(s.qp, &wr, NULL), 0);
	starve = true;
	cr_expect_eq(uroce_eng_poll(e), 0);
	cr_expect_eq(uroce_eng_counter(e, UROCE_CNT_TX_ALLOC_FAIL), 1);
	cr_expect(uroce_eng_busy(e), "the QP stays on the work list");
	starve = false;
	/* Bounded work: the budget of 4 packets per poll. */
	cr_expect_eq(uroce_eng_poll(e), 4);
	cr_expect_eq(uroce_eng_poll(e), 4);
	cr_expect_eq(uroce_eng_poll(e), 2);
	cr_expect_eq(sends, 10);
	uroce_eng_destroy(e);
}
