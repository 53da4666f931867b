/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* Completion queues: order, sizes, and overflow that is detected and
 * reported rather than overwriting (IBA 11.4.2.1). */

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "simwire.h"

static int cq_ctx;

Test(cq, create_limits)
{
	struct simwire *sw = simwire_create(NULL);
	struct uroce_eng *eng = simwire_engine(sw, 0);

	cr_expect_null(uroce_eng_cq_create(eng, 0, NULL));
	cr_expect_eq(errno, EINVAL);
	cr_expect_null(uroce_eng_cq_create(eng, UROCE_MAX_CQE + 1, NULL));
	cr_expect_not_null(uroce_eng_cq_create(eng, UROCE_MAX_CQE, NULL));
	cr_expect_eq(uroce_eng_cq_context(uroce_eng_cq_create(eng, 1, &cq_ctx)), &cq_ctx);
	cr_expect_eq(uroce_eng_cq_destroy(NULL), -EINVAL);
	simwire_destroy(sw);
}

/* Flushed receive WQEs overflow a 4-entry CQ: the first 4 are kept in order,
 * the rest are counted as lost, and poll reports -EOVERFLOW once drained. */
Test(cq, overflow_detected_not_overwritten)
{
	struct simwire *sw = simwire_create(NULL);
	struct sim_side s;
	struct uroce_eng_recv_wr rwr[6];
	struct uroce_eng_qp_attr a;
	struct uroce_eng_wc wc[8];
	int i, n;

	memset(&s, 0, sizeof(s));
	s.pd = uroce_eng_pd_alloc(simwire_engine(sw, 0));
	s.scq = uroce_eng_cq_create(simwire_engine(sw, 0), 16, NULL);
	s.rcq = uroce_eng_cq_create(simwire_engine(sw, 0), 4, NULL);
	s.qp = sim_qp_create(&s, UROCE_QPT_RC, 8);
	cr_assert_not_null(s.qp);
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.port_num = 1;
	cr_assert_eq(uroce_eng_modify_qp(s.qp, &a, UROCE_QP_STATE | UROCE_QP_PORT |
				     UROCE_QP_PKEY_INDEX | UROCE_QP_ACCESS_FLAGS), 0);
	memset(rwr, 0, sizeof(rwr));
	for (i = 0; i < 6; i++) {
		rwr[i].wr_id = 100 + i;
		rwr[i].next = i < 5 ? &rwr[i + 1] : NULL;
	}
	cr_assert_eq(uroce_eng_post_recv(s.qp, rwr, NULL), 0);
	a.qp_state = UROCE_QPS_ERR;
	cr_assert_eq(uroce_eng_modify_qp(s.qp, &a, UROCE_QP_STATE), 0);
	cr_expect(uroce_eng_cq_overflowed(s.rcq));
	cr_expect_eq(simwire_event_count(sw, 0, UROCE_EVENT_CQ_ERR), 1, "one CQ_ERR event");
	cr_expect_eq(uroce_eng_counter(simwire_engine(sw, 0), UROCE_CNT_CQ_OVERFLOW), 2);
	cr_expect_eq(uroce_eng_cq_count(s.rcq), 4);
	n = uroce_eng_poll_cq(s.rcq, 8, wc);
	cr_assert_eq(n, 4);
	for (i = 0; i < 4; i++)
		cr_expect_eq(wc[i].wr_id, (uint64_t)(100 + i), "oldest entries kept, in order");
	cr_expect_eq(uroce_eng_poll_cq(s.rcq, 8, wc), -EOVERFLOW);
	cr_expect(!uroce_eng_cq_overflowed(s.scq));
	cr_expect_eq(uroce_eng_poll_cq(s.scq, 8, wc), 0);
	cr_expect_eq(uroce_eng_cq_destroy(s.rcq), -EBUSY, "a QP still uses it");
	simwire_destroy(sw);
}
