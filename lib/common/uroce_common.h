/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * Small helpers every uroce library uses: big-endian loads and stores on byte
 * buffers (wire headers are never cast to structs), branch hints,
 * container_of, and a logging hook that the embedding program can redirect.
 * No DPDK here: this is part of the core.
 */

#ifndef UROCE_COMMON_H
#define UROCE_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))
#endif

#define UROCE_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define UROCE_MIN(a, b) ((a) < (b) ? (a) : (b))
#define UROCE_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Big-endian accessors. memcpy keeps them alignment-safe; compilers emit a
 * single load plus bswap. */
static inline uint16_t
uroce_get_be16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return __builtin_bswap16(v);
}

static inline uint32_t
uroce_get_be24(const void *p)
{
	const uint8_t *b = (const uint8_t *)p;

	return ((uint32_t)b[0] << 16) | ((uint32_t)b[1] << 8) | b[2];
}

static inline uint32_t
uroce_get_be32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return __builtin_bswap32(v);
}

static inline uint64_t
uroce_get_be64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return __builtin_bswap64(v);
}

static inline void
uroce_put_be16(void *p, uint16_t v)
{
	v = __builtin_bswap16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
uroce_put_be24(void *p, uint32_t v)
{
	uint8_t *b = (uint8_t *)p;

	b[0] = (uint8_t)(v >> 16);
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)v;
}

static inline void
uroce_put_be32(void *p, uint32_t v)
{
	v = __builtin_bswap32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
uroce_put_be64(void *p, uint64_t v)
{
	v = __builtin_bswap64(v);
	memcpy(p, &v, sizeof(v));
}

/** Log levels, same order as syslog. */
enum uroce_log_level {
	UROCE_LOG_ERR = 3,
	UROCE_LOG_WARNING = 4,
	UROCE_LOG_NOTICE = 5,
	UROCE_LOG_INFO = 6,
	UROCE_LOG_DEBUG = 7,
};

/** A log sink. The daemon points it at rte_log; tests point it at a buffer. */
typedef void (*uroce_log_fn)(enum uroce_log_level level, const char *msg);

/**
 * Redirect uroce's control-path log messages. The data path never logs.
 *
 * @param fn
 *   New sink, or NULL to restore the default (stderr).
 * @param max_level
 *   Messages above this level are discarded.
 */
void uroce_log_set(uroce_log_fn fn, enum uroce_log_level max_level);

/** Log one control-path message through the current sink. */
void uroce_log(enum uroce_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#endif /* UROCE_COMMON_H */
