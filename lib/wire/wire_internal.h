/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * Private interfaces of lib/wire, shared between its source files, its unit
 * tests and its benchmarks, and not installed: the portable CRC-32 that
 * icrc.c falls back to when ISA-L is not available (always compiled, even
 * when ISA-L is used, so that the unit tests can check that both
 * implementations agree and the benchmark can measure both), and the IPv4
 * header sum of build.c and parse.c.
 */

#ifndef UROCE_WIRE_INTERNAL_H
#define UROCE_WIRE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * CRC-32 (reflected polynomial 0xEDB88320, initial value and final XOR all
 * ones, the zlib/Ethernet CRC) with slice-by-8 tables, continued from @p crc.
 * Same contract as zlib's crc32(): pass 0 to start, pass the previous result
 * to continue over the next piece of a buffer.
 */
uint32_t wire_crc32_slice8(uint32_t crc, const void *buf, size_t len);

/**
 * One's-complement sum (RFC 1071) of the IPv4 header @p h of @p len bytes,
 * folded to 16 bits, in network order: 0xFFFF when its checksum holds; the
 * checksum to write is its complement with the checksum field zero. Adds
 * 32-bit words in host order and reads the folded sum back as big-endian
 * (the sum does not depend on byte order, RFC 1071 2.B), so a header with
 * no options takes five additions and no loop.
 */
static inline uint16_t
wire_ipv4_sum(const uint8_t *h, uint32_t len)
{
	uint32_t w[15];
	uint64_t sum = 0;
	uint16_t s16;
	uint8_t b[2];
	uint32_t i;

	if (len > sizeof(w) || len % 4 != 0)
		len = 0; /* not a header: IHL counts 32-bit words, at most 15 */
	if (len == 20) {
		memcpy(w, h, 20);
		sum = (uint64_t)w[0] + w[1] + w[2] + w[3] + w[4];
	} else {
		memcpy(w, h, len);
		for (i = 0; i < len / 4; i++)
			sum += w[i];
	}
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	s16 = (uint16_t)sum;
	memcpy(b, &s16, 2);
	return (uint16_t)(b[0] << 8 | b[1]);
}

#ifdef __cplusplus
}
#endif

#endif /* UROCE_WIRE_INTERNAL_H */
