/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * A fuzz input read as a stream of little-endian integers and byte runs. Every
 * read past the end returns zeros (and an empty run), so a harness never has
 * to check lengths: a short input is just a sequence that stops early. Shared
 * by the libFuzzer targets of test/fuzz.
 */

#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct fin {
	const uint8_t *p;
	size_t n;
};

static inline int
fin_left(const struct fin *in)
{
	return in->n > 0;
}

static inline uint8_t
fin_u8(struct fin *in)
{
	uint8_t v;

	if (in->n == 0)
		return 0;
	v = in->p[0];
	in->p++;
	in->n--;
	return v;
}

static inline uint16_t
fin_u16(struct fin *in)
{
	return (uint16_t)(fin_u8(in) | (uint16_t)fin_u8(in) << 8);
}

static inline uint32_t
fin_u32(struct fin *in)
{
	uint32_t lo = fin_u16(in);

	return lo | (uint32_t)fin_u16(in) << 16;
}

static inline uint64_t
fin_u64(struct fin *in)
{
	uint64_t lo = fin_u32(in);

	return lo | (uint64_t)fin_u32(in) << 32;
}

/* Up to @p max bytes into @p dst; returns how many there were. */
static inline size_t
fin_bytes(struct fin *in, void *dst, size_t max)
{
	size_t k = max < in->n ? max : in->n;

	memcpy(dst, in->p, k);
	in->p += k;
	in->n -= k;
	return k;
}

#endif /* FUZZ_INPUT_H */
