/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * Private interfaces of lib/wire, shared between its source files, its unit
 * tests and its benchmarks, and not installed. Today this is the portable
 * CRC-32 that icrc.c falls back to when ISA-L is not available. It is always
 * compiled, even when ISA-L is used, so that the unit tests can check that
 * both implementations agree and the benchmark can measure both.
 */

#ifndef UROCE_WIRE_INTERNAL_H
#define UROCE_WIRE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

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

#ifdef __cplusplus
}
#endif

#endif /* UROCE_WIRE_INTERNAL_H */
