/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The payload pattern "uroce-lg-1" (uroce_loadgen.h, doc/loadgen.md). A
 * stream of 64-bit words, word i = splitmix64(seed + (i + 1) * golden),
 * read as little-endian bytes whatever the host's byte order, each byte with
 * its lowest bit set. Where a byte sits in the stream is fixed by where it
 * lands (window offset) or by its place in the message (SEND), never by a
 * sequence number, so frames replayed in a loop stay valid. The seeds mix a
 * constant per kind, so a WRITE stream and a SEND stream never coincide.
 */

#include <string.h>

#include "uroce_common.h"
#include "uroce_loadgen.h"

#define GOLDEN 0x9e3779b97f4a7c15ull
/* "UROCELGW" and "UROCELGS": the kind of stream, mixed into every seed. */
#define KIND_WRITE 0x55524f43454c4757ull
#define KIND_SEND 0x55524f43454c4753ull

static uint64_t
mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t
word_of(uint64_t seed, uint64_t i)
{
	return mix(seed + (i + 1) * GOLDEN);
}

uint8_t
uroce_lg_byte(uint64_t seed, uint64_t k)
{
	return (uint8_t)(word_of(seed, k / 8) >> (8 * (k % 8))) | 1;
}

uint64_t
uroce_lg_write_seed(uint32_t qpn)
{
	return mix(KIND_WRITE ^ (qpn & 0xffffffu));
}

uint64_t
uroce_lg_send_seed(uint32_t qpn, uint32_t tag, uint32_t len)
{
	return mix(mix(KIND_SEND ^ (qpn & 0xffffffu)) ^ ((uint64_t)len << 32 | tag));
}

/* Bytes [from, from + len) of the stream of @p seed into @p dst. */
static void
stream_fill(uint8_t *dst, uint64_t seed, uint64_t from, uint64_t len)
{
	uint64_t k, w = 0;

	for (k = 0; k < len; k++) {
		uint64_t pos = from + k;

		if (k == 0 || pos % 8 == 0)
			w = word_of(seed, pos / 8);
		dst[k] = (uint8_t)(w >> (8 * (pos % 8))) | 1;
	}
}

/* First k in [0, len) where src[k] is not stream byte from + k, or len. */
static uint64_t
stream_check(const volatile uint8_t *src, uint64_t seed, uint64_t from, uint64_t len)
{
	uint64_t k, w = 0;

	for (k = 0; k < len; k++) {
		uint64_t pos = from + k;

		if (k == 0 || pos % 8 == 0)
			w = word_of(seed, pos / 8);
		if (src[k] != ((uint8_t)(w >> (8 * (pos % 8))) | 1))
			return k;
	}
	return len;
}

void
uroce_lg_write_fill(uint8_t *dst, uint32_t qpn, uint64_t off, uint64_t len)
{
	stream_fill(dst, uroce_lg_write_seed(qpn), off, len);
}

uint64_t
uroce_lg_write_check(const volatile uint8_t *src, uint32_t qpn, uint64_t off, uint64_t len)
{
	return stream_check(src, uroce_lg_write_seed(qpn), off, len);
}

void
uroce_lg_write_scan(const volatile uint8_t *win, uint32_t qpn, uint64_t len,
		    struct uroce_lg_scan *out)
{
	uint64_t seed = uroce_lg_write_seed(qpn), k, w = 0;

	memset(out, 0, sizeof(*out));
	for (k = 0; k < len; k++) {
		uint8_t b = win[k];

		if (k % 8 == 0)
			w = word_of(seed, k / 8);
		if (b == ((uint8_t)(w >> (8 * (k % 8))) | 1)) {
			out->written++;
		} else if (b == 0) {
			out->unwritten++;
		} else {
			if (out->bad++ == 0)
				out->first_bad = k;
		}
	}
}

void
uroce_lg_send_fill(uint8_t *dst, uint32_t qpn, uint32_t tag, uint32_t len)
{
	uint32_t skip = 0;

	if (len >= UROCE_LG_TAG_LEN) {
		uroce_put_be32(dst, tag);
		skip = UROCE_LG_TAG_LEN;
	} else {
		tag = 0;
	}
	stream_fill(dst + skip, uroce_lg_send_seed(qpn, tag, len), skip, len - skip);
}

uint32_t
uroce_lg_send_check(const uint8_t *src, uint32_t qpn, uint32_t len, uint32_t *tag)
{
	uint32_t t = 0, skip = 0;

	if (len >= UROCE_LG_TAG_LEN) {
		t = uroce_get_be32(src);
		skip = UROCE_LG_TAG_LEN;
	}
	if (tag != NULL)
		*tag = t;
	return skip + (uint32_t)stream_check(src + skip, uroce_lg_send_seed(qpn, t, len), skip,
					     len - skip);
}
