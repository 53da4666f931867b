/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* Shared receive queues and the receive-queue ring (srq.c). End-to-end SRQ
 * traffic is in test/component/test_uc_ud.c (srq::two_qps_share_an_srq). */

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "simwire.h"

Test(srq, create_limits_and_post)
{
	struct simwire *sw = simwire_create(NULL);
	struct uroce_eng_pd *pd = uroce_eng_pd_alloc(simwire_engine(sw, 0));
	struct uroce_eng_srq_init_attr a = { .max_wr = 0, .max_sge = 1 };
	struct uroce_eng_srq *srq;
	struct uroce_wr_sge sge[2] = { { 0, 8, 0 }, { 0, 8, 0 } };
	struct uroce_eng_recv_wr wr[3], *bad = NULL;
	int i;

	cr_expect_null(uroce_eng_srq_create(pd, &a));
	cr_expect_eq(errno, EINVAL);
	a.max_wr = UROCE_MAX_QP_WR + 1;
	cr_expect_null(uroce_eng_srq_create(pd, &a));
	a.max_wr = 2;
	a.max_sge = UROCE_MAX_SGE + 1;
	cr_expect_null(uroce_eng_srq_create(pd, &a));
	a.max_sge = 1;
	srq = uroce_eng_srq_create(pd, &a);
	cr_assert_not_null(srq);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = (uint64_t)i;
		wr[i].sg_list = sge;
		wr[i].num_sge = 1;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	/* Two fit, the third is -ENOMEM and reported as bad_wr. */
	cr_expect_eq(uroce_eng_post_srq_recv(srq, wr, &bad), -ENOMEM);
	cr_expect_eq(bad, &wr[2]);
	wr[0].num_sge = 2;
	wr[0].next = NULL;
	cr_expect_eq(uroce_eng_post_srq_recv(srq, wr, &bad), -EINVAL, "too many SGEs");
	cr_expect_eq(uroce_eng_pd_dealloc(pd), -EBUSY);
	cr_expect_eq(uroce_eng_srq_destroy(srq), 0);
	cr_expect_eq(uroce_eng_srq_destroy(NULL), -EINVAL);
	cr_expect_eq(uroce_eng_pd_dealloc(pd), 0);
	simwire_destroy(sw);
}
