/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * uroce-perf --verify data patterns (see verify.h). The pattern of a seed is
 * a stream of 64-bit words, word i = mix(mix(seed) + (i + 1) * golden),
 * with the splitmix64 finalizer as mix, read as little-endian bytes whatever
 * the host's byte order. Every bit of the seed changes every word, so two
 * messages never share a pattern, and the lowest bit of every word is set so
 * that a zeroed buffer fails at its first byte.
 */

#include "verify.h"

#define GOLDEN 0x9e3779b97f4a7c15ull

static uint64_t
mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t
word_of(uint64_t h, uint64_t i)
{
	return mix(h + (i + 1) * GOLDEN) | 1;
}

uint64_t
verify_seed(uint64_t q, uint64_t seq, uint64_t size)
{
	/* Distinct for every QP < 256, size < 2^24 and sequence < 2^32. */
	return (q << 56) ^ (size << 32) ^ seq;
}

uint8_t
verify_pattern_byte(uint64_t seed, uint64_t k)
{
	return (uint8_t)(word_of(mix(seed), k / 8) >> (8 * (k % 8)));
}

void
verify_fill(uint8_t *b, uint64_t len, uint64_t seed)
{
	uint64_t h = mix(seed), k, w = 0;

	for (k = 0; k < len; k++) {
		if (k % 8 == 0)
			w = word_of(h, k / 8);
		b[k] = (uint8_t)(w >> (8 * (k % 8)));
	}
}

uint64_t
verify_check(const uint8_t *b, uint64_t len, uint64_t seed)
{
	uint64_t h = mix(seed), k, w = 0;

	for (k = 0; k < len; k++) {
		if (k % 8 == 0)
			w = word_of(h, k / 8);
		if (b[k] != (uint8_t)(w >> (8 * (k % 8))))
			return k;
	}
	return len;
}
