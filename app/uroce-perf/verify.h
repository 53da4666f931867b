/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * uroce-perf's data patterns for --verify: the sender fills each message
 * with a pattern derived from (QP, sequence number, size), the side that
 * owns the received bytes checks them against the same pattern. Pure
 * functions, unit-tested on their own (test/unit/perf/test_verify.c).
 */

#ifndef UROCE_PERF_VERIFY_H
#define UROCE_PERF_VERIFY_H

#include <stdint.h>

/* The seed of message @p seq of QP @p q at message size @p size; distinct
 * for every QP < 256, size < 2^24 and sequence number < 2^32. */
uint64_t verify_seed(uint64_t q, uint64_t seq, uint64_t size);

/* Byte @p k of the pattern of @p seed. Every bit of the seed changes the
 * whole pattern, and byte 0 (and every 8th byte) is never zero, so a zeroed
 * buffer fails at its first byte. */
uint8_t verify_pattern_byte(uint64_t seed, uint64_t k);

/* Fill @p len bytes at @p b with the pattern of @p seed. */
void verify_fill(uint8_t *b, uint64_t len, uint64_t seed);

/* Check @p len bytes at @p b against the pattern of @p seed.
 * @return the offset of the first byte that differs, or @p len if none. */
uint64_t verify_check(const uint8_t *b, uint64_t len, uint64_t seed);

#endif /* UROCE_PERF_VERIFY_H */
