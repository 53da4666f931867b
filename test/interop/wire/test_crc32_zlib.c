/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * uroce_crc32() (ISA-L crc32_gzip_refl() or the slice-by-8 fallback) against
 * zlib's crc32(), an independent implementation of the same CRC-32: same
 * result, same starting value (0), same chaining (the previous result is the
 * next call's first argument) and the same treatment of an arbitrary seed.
 * This is the check that ISA-L's "gzip reflected" variant is the CRC the
 * ICRC needs (rxe, scapy and the peer README all use zlib's crc32).
 */

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <zlib.h>

#include "uroce_wire.h"
#include "wire_internal.h"

/* Assert only on failure: these loops run thousands of times, and Criterion
 * with --full-stats records every passing cr_assert. */
#define CHECK(cond, ...) \
	do { \
		if (!(cond)) \
			cr_assert_fail(__VA_ARGS__); \
	} while (0)

static uint64_t rng_state = 0xD1B54A32D192ED03ull;

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static uint32_t
zcrc(uint32_t crc, const uint8_t *p, size_t n)
{
	return (uint32_t)crc32(crc, p, (uInt)n);
}

/* Expect: the start value is 0 for both, and crc32(0, NULL, 0) is 0. */
Test(crc32_zlib, start_value)
{
	cr_assert_eq(zcrc(0, NULL, 0), 0u);
	cr_assert_eq(uroce_crc32(0, "", 0), 0u);
	cr_assert_eq(uroce_crc32(0, "123456789", 9), zcrc(0, (const uint8_t *)"123456789", 9));
}

/* Expect: equal on every length 0..9000 at every alignment, from seed 0 and
 * from random seeds. */
Test(crc32_zlib, lengths_and_seeds)
{
	enum { N = 9000 };
	uint8_t *buf = malloc(N + 8);
	size_t len, i;
	uint32_t seed;

	cr_assert_not_null(buf);
	for (i = 0; i < N + 8; i++)
		buf[i] = (uint8_t)(rng() >> 56);
	for (len = 0; len <= N; len++) {
		const uint8_t *p = buf + (len & 7);

		CHECK(uroce_crc32(0, p, len) == zcrc(0, p, len), "len %zu", len);
		CHECK(wire_crc32_slice8(0, p, len) == zcrc(0, p, len), "slice8 len %zu", len);
		seed = (uint32_t)rng();
		CHECK(uroce_crc32(seed, p, len) == zcrc(seed, p, len), "seed 0x%08x len %zu", seed,
		      len);
	}
	free(buf);
}

/* Expect: chaining through either library at every split point of a 4 KiB
 * buffer gives zlib's one-shot CRC: the two keep their state the same way. */
Test(crc32_zlib, chaining_mixed)
{
	enum { N = 4096 };
	uint8_t buf[N];
	uint32_t whole;
	size_t s, i;

	for (i = 0; i < N; i++)
		buf[i] = (uint8_t)(rng() >> 56);
	whole = zcrc(0, buf, N);
	for (s = 0; s <= N; s++) {
		CHECK(zcrc(uroce_crc32(0, buf, s), buf + s, N - s) == whole, "split %zu", s);
		CHECK(uroce_crc32(zcrc(0, buf, s), buf + s, N - s) == whole, "split %zu", s);
	}
}
