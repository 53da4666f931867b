/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Unit tests of app/uroce-perf/verify.c: the --verify check must find every
 * kind of bad data a transport bug could produce (a flipped bit anywhere,
 * a zeroed buffer, a stale or misdelivered message, bytes shifted by one, a
 * truncated message) and must pass the right data.
 */

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"

#define LEN 70001 /* not a whole number of pattern words */

static uint8_t buf[LEN + 1];

Test(verify, pattern_byte_matches_fill)
{
	uint64_t seed = verify_seed(1, 2, 3), k;

	verify_fill(buf, 100, seed);
	for (k = 0; k < 100; k++)
		cr_assert_eq(buf[k], verify_pattern_byte(seed, k), "byte %llu",
			     (unsigned long long)k);
}

Test(verify, intact_data_passes)
{
	uint64_t seed = verify_seed(3, 17, LEN);

	verify_fill(buf, LEN, seed);
	/* Expect: no difference: the check returns the length. */
	cr_assert_eq(verify_check(buf, LEN, seed), LEN);
	cr_assert_eq(verify_check(buf, 0, seed), 0);
	cr_assert_eq(verify_check(buf, 1, seed), 1);
}

Test(verify, one_corrupted_bit_is_found_where_it_is)
{
	const uint64_t offs[] = {0, 1, 7, 8, 255, 256, 4095, 4096, 65535, 65536, LEN - 1};
	uint64_t seed = verify_seed(0, 5, LEN);
	unsigned int i, bit;

	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		for (bit = 0; bit < 8; bit++) {
			verify_fill(buf, LEN, seed);
			buf[offs[i]] ^= (uint8_t)(1u << bit);
			/* Expect: the check stops at exactly the flipped byte. */
			cr_assert_eq(verify_check(buf, LEN, seed), offs[i], "offset %llu bit %u",
				     (unsigned long long)offs[i], bit);
		}
}

Test(verify, zeroed_buffer_fails_at_byte_0_for_every_seed)
{
	uint64_t q, seq;

	memset(buf, 0, LEN);
	/* Expect: byte 0 of a pattern is never 0, so nothing zeroed passes. */
	for (q = 0; q < 4; q++)
		for (seq = 0; seq < 4096; seq++)
			cr_assert_eq(verify_check(buf, LEN, verify_seed(q, seq, LEN)), 0,
				     "qp %llu seq %llu", (unsigned long long)q,
				     (unsigned long long)seq);
	cr_assert_eq(verify_check(buf, 1, 0), 0);
	cr_assert_eq(verify_check(buf, 1, ~0ull), 0);
}

Test(verify, another_messages_data_fails)
{
	uint64_t q, seq, size = 4096;

	/* Expect: a message carrying the data of another sequence number (a
	 * stale slot, also 256 or 2^16 messages old), another QP (misdelivered)
	 * or another size is caught within its first 8 bytes. */
	verify_fill(buf, size, verify_seed(0, 1000, size));
	cr_assert_eq(verify_check(buf, size, verify_seed(0, 1000, size)), size);
	for (seq = 0; seq < 70000; seq++)
		if (seq != 1000)
			cr_assert_lt(verify_check(buf, size, verify_seed(0, seq, size)), 8,
				     "seq %llu", (unsigned long long)seq);
	for (q = 1; q < 128; q++)
		cr_assert_lt(verify_check(buf, size, verify_seed(q, 1000, size)), 8, "qp %llu",
			     (unsigned long long)q);
	for (size = 1; size <= 8388608; size *= 2)
		if (size != 4096)
			cr_assert_lt(verify_check(buf, 4096, verify_seed(0, 1000, size)), 8,
				     "size %llu", (unsigned long long)size);
}

Test(verify, shifted_data_fails)
{
	uint64_t seed = verify_seed(2, 9, LEN);

	/* Expect: data placed one byte late or early is caught at once (the
	 * pattern does not repeat; these seeds are fixed, so no chance). */
	verify_fill(buf + 1, LEN, seed);
	cr_assert_eq(verify_check(buf + 1, LEN, seed), LEN);
	cr_assert_lt(verify_check(buf, LEN, seed), 8);
	verify_fill(buf, LEN + 1, seed);
	cr_assert_lt(verify_check(buf + 1, LEN, seed), 8);
}

Test(verify, truncated_message_fails_at_the_first_missing_byte)
{
	uint64_t seed = verify_seed(0, 1, 4096);

	/* Expect: only the first 1000 bytes arrived over a cleared buffer; the
	 * check stops at byte 1000 (a multiple of 8: never zero in a pattern). */
	memset(buf, 0, 4096);
	verify_fill(buf, 1000, seed);
	cr_assert_eq(verify_check(buf, 4096, seed), 1000);
}
