/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * ThreadSanitizer driver for the neighbour table's publish protocol
 * (neigh_concurrent.h): the scenario test_neigh.c runs, in a plain main(),
 * because Criterion cannot start under TSan (Snaipe/Criterion issue 274).
 * Built and registered only with -Db_sanitize=thread. Exit status 0: the
 * checks held and TSan (halt_on_error) reported nothing.
 */

#include <stdio.h>

#include "neigh_concurrent.h"

int
main(void)
{
	struct nc_result r = {0};
	int rc;

	/* Fewer rounds than the Criterion run: TSan is 5-15x slower. */
	rc = nc_run(20000, &r);
	printf("neigh table: rc %d, %llu lookups, %llu busy, %llu reused, %llu missing, "
	       "%llu torn, %llu backwards, %llu stale\n", rc, (unsigned long long)r.lookups,
	       (unsigned long long)r.busy, (unsigned long long)r.reused,
	       (unsigned long long)r.missing, (unsigned long long)r.torn,
	       (unsigned long long)r.backwards, (unsigned long long)r.stale);
	return rc != 0 || r.reused != 20000 || r.missing != 0 || r.torn != 0 ||
	       r.backwards != 0 || r.stale != 0;
}
