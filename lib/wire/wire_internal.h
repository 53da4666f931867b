/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * Private interfaces of lib/wire, shared between its source files, its unit
 * tests and its benchmarks, and not installed: the portable CRC-32 that
 * icrc.c falls back to when ISA-L is not available (always compiled, even
 * when ISA-L is used, so that the unit tests can check that both
 * implementations agree and the benchmark can measure both), the
 * carry-less CRC of crc_clmul.c and its switch, and the IPv4 header sum of
 * build.c and parse.c.
 */

#ifndef UROCE_WIRE_INTERNAL_H
#define UROCE_WIRE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "uroce_wire.h"

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
 * wire_crc_tab[k][b]: the CRC-32 register after byte b is fed into an
 * all-zero register and then k zero bytes (slice-by-8 tables). Valid after
 * wire_crc_tab_init().
 */
extern uint32_t wire_crc_tab[8][256];
void wire_crc_tab_init(void);

/**
 * Write 8 bytes of ones and then the @p hdrs bytes of IP, UDP and BTH
 * headers of @p l3 to @p ps, with every variant field set to ones (IBA
 * A17.4.1): the ICRC's masked headers, for icrc.c's buffer and for
 * crc_clmul.c's constants.
 */
void wire_icrc_pseudo_hdr(uint8_t *ps, const uint8_t *l3, uint32_t hdrs,
			  enum uroce_ip_family family);

/*
 * The ICRC's CRC over a received packet's pseudo header and headers: @p l3
 * (@p l3_len bytes, IP through the last extension header), to be continued
 * over the payload (a late check, uroce_parse_split()). @return false if
 * the headers are not all there.
 */
bool wire_icrc_head(const uint8_t *l3, uint32_t l3_len, enum uroce_ip_family family,
		    uint32_t *crc);

/* An ICRC as it lies on the wire, least significant byte first. */
static inline uint32_t
wire_icrc_get(const uint8_t icrc[4])
{
	return (uint32_t)icrc[0] | ((uint32_t)icrc[1] << 8) | ((uint32_t)icrc[2] << 16) |
	       ((uint32_t)icrc[3] << 24);
}

/**
 * Which CRC code the ICRC uses (crc_clmul.c): the tables and ISA-L, or
 * carry-less multiplication with SSE (PCLMULQDQ and SSE4.1), or also 512-bit
 * folds (AVX-512BW/VL and VPCLMULQDQ). wire_crc_level() is the best the CPU
 * has unless wire_crc_level_set() chose a lower one (for tests and
 * benchmarks; it returns the level before and cannot go above the CPU's).
 */
enum { WIRE_CRC_TABLE, WIRE_CRC_CLMUL, WIRE_CRC_ZMM };
int wire_crc_level(void);
int wire_crc_level_set(int level);

/**
 * CRC-32 with the same contract as wire_crc32_slice8(), by carry-less
 * multiplication where the CPU has it (slice-by-8 otherwise, and below 16
 * bytes).
 */
uint32_t wire_crc32_clmul(uint32_t crc, const void *buf, size_t len);

/**
 * The ICRC of the pseudo packet of the IP header at @p l3 (IPv4 without
 * options, or IPv6) through @p len bytes, read in place: the masked headers
 * are built in registers. Only when wire_crc_level() >= WIRE_CRC_CLMUL; @p
 * len covers at least the IP, UDP and BTH headers. @p built: the packet's
 * headers were just written (it is being sent), which picks narrower loads.
 */
uint32_t wire_icrc_clmul(const uint8_t *l3, uint32_t len, enum uroce_ip_family family,
			 bool built);

/** Pseudo packets (8 + len bytes) up to this size are faster folded whole by
 * wire_icrc_clmul() than by ISA-L. */
uint32_t wire_icrc_clmul_max(void);

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
