/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Unit tests of lib/loadgen/rate.c: counts arithmetic (subtraction clamps,
 * never wraps) and the rate record line, byte for byte.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "uroce_loadgen.h"

Test(rate, add_and_clamped_sub)
{
	struct uroce_lg_counts a = {10, 20, 30, 1, 2, 3, 4}, b = {1, 2, 3, 4, 5, 6, 7}, c;

	uroce_lg_counts_add(&a, &b);
	cr_assert_eq(a.msgs, 11);
	cr_assert_eq(a.verify_bad, 11);
	c = uroce_lg_counts_sub(&b, &a);
	/* Expect: a counter that went down (a daemon restarted) reads 0, not 2^64 - n. */
	cr_assert_eq(c.msgs, 0);
	cr_assert_eq(c.errors, 0);
	c = uroce_lg_counts_sub(&a, &b);
	cr_assert_eq(c.msgs, 10);
	cr_assert_eq(c.dropped, 2);
}

Test(rate, record_line)
{
	struct uroce_lg_counts d = {1000, 64000, 500, 0, 3, 2, 0};
	struct uroce_lg_counts t = {5000, 320000, 2500, 1, 9, 8, 0};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	cr_assert_eq(uroce_lg_rate_write(f, "sink", 2.0, 0.5, &d, &t), 0);
	fclose(f);
	cr_assert_str_eq(text,
			 "{\"uroce_rate\":1,\"role\":\"sink\",\"t\":2.000,\"dt\":0.500,"
			 "\"msgs\":1000,\"bytes\":64000,\"cqes\":500,\"errors\":0,\"dropped\":3,"
			 "\"resyncs\":2,\"verify_bad\":0,\"msgs_per_s\":2000.0,"
			 "\"bytes_per_s\":128000.0,\"cqes_per_s\":1000.0,\"total\":{\"msgs\":5000,"
			 "\"bytes\":320000,\"cqes\":2500,\"errors\":1,\"dropped\":9,\"resyncs\":8,"
			 "\"verify_bad\":0}}\n");
	free(text);
}
