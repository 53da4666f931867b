/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* Protection domains and address handles (objects.c). */

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "simwire.h"

Test(objects, pd_and_ah)
{
	struct simwire *sw = simwire_create(NULL);
	struct uroce_eng_pd *pd;
	struct uroce_eng_ah_attr aa;
	struct uroce_eng_ah *ah;

	cr_expect_null(uroce_eng_pd_alloc(NULL));
	cr_expect_eq(errno, EINVAL);
	pd = uroce_eng_pd_alloc(simwire_engine(sw, 0));
	cr_assert_not_null(pd);
	memset(&aa, 0, sizeof(aa));
	aa.flow_label = 0x100000; /* 21 bits: invalid */
	cr_expect_null(uroce_eng_ah_create(pd, &aa));
	aa.flow_label = 0xFFFFF;
	ah = uroce_eng_ah_create(pd, &aa);
	cr_assert_not_null(ah);
	cr_expect_eq(uroce_eng_pd_dealloc(pd), -EBUSY, "the AH holds the PD");
	cr_expect_eq(uroce_eng_ah_destroy(ah), 0);
	cr_expect_eq(uroce_eng_ah_destroy(NULL), -EINVAL);
	cr_expect_eq(uroce_eng_pd_dealloc(pd), 0);
	cr_expect_eq(uroce_eng_pd_dealloc(NULL), -EINVAL);
	simwire_destroy(sw);
}

/* The engine frees what the caller left behind (ASan checks for leaks). */
Test(objects, engine_destroy_frees_everything)
{
	struct simwire *sw = simwire_create(NULL);
	struct sim_side s;
	struct uroce_eng_srq_init_attr sa = { .max_wr = 4, .max_sge = 1 };
	struct uroce_eng_ah_attr aa;
	static uint8_t mem[64];

	memset(&s, 0, sizeof(s));
	memset(&aa, 0, sizeof(aa));
	s.pd = uroce_eng_pd_alloc(simwire_engine(sw, 0));
	s.scq = uroce_eng_cq_create(simwire_engine(sw, 0), 4, NULL);
	s.rcq = uroce_eng_cq_create(simwire_engine(sw, 0), 4, NULL);
	cr_assert_not_null(sim_qp_create(&s, UROCE_QPT_RC, 4));
	cr_assert_not_null(uroce_eng_srq_create(s.pd, &sa));
	cr_assert_not_null(uroce_eng_ah_create(s.pd, &aa));
	cr_assert_not_null(uroce_eng_mr_reg(s.pd, mem, 0, sizeof(mem), 0));
	simwire_destroy(sw);
}
