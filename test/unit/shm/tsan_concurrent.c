/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * ThreadSanitizer driver for the concurrent shm scenarios (shm_concurrent.h):
 * the same code the Criterion tests run, in a plain main(), because Criterion
 * cannot start under TSan (Snaipe/Criterion issue 274). Built and registered
 * only when the build uses -Db_sanitize=thread. Exit status 0 means every
 * scenario's checks held and TSan (halt_on_error) reported nothing.
 */

#include <stdio.h>

#include "shm_concurrent.h"

int
main(void)
{
	struct conc_db_result db;
	struct conc_cq_result cq;
	uint32_t end = 0;
	uint64_t errors;
	int fail = 0;

	/* Smaller counts than the Criterion runs: TSan is 5-15x slower. */
	errors = conc_ring_threads(1024, UINT32_MAX - 50000, 200000, &end);
	printf("ring threads: 200000 entries, %llu errors, end index %u\n",
	       (unsigned long long)errors, end);
	fail |= errors != 0 || end != (uint32_t)(UINT32_MAX - 50000 + 200000);

	db = conc_doorbell(20000, 60);
	printf("doorbell: %llu of 40000 entries, %llu misordered, %llu bad slots\n",
	       (unsigned long long)db.got, (unsigned long long)db.misorder,
	       (unsigned long long)db.bad_slot);
	fail |= db.got != 40000 || db.misorder != 0 || db.bad_slot != 0;

	cq = conc_cq_race(1000);
	printf("cq arm race: 1000 rounds, %u claimed, %u woken, %u lost, %u doubled, "
	       "%u missing\n", cq.claimed, cq.woken, cq.lost, cq.doubled, cq.missing);
	fail |= cq.claimed + cq.woken != 1000 || cq.lost != 0 || cq.doubled != 0 ||
		cq.missing != 0 || cq.daemon_signals != cq.woken;

	printf("%s\n", fail ? "FAIL" : "PASS");
	return fail;
}
