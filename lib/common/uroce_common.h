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

/** 16 bytes for one vector store: unaligned (movups on x86), any type. */
typedef uint8_t uroce_vec16 __attribute__((vector_size(16), aligned(1), may_alias));

/**
 * Zero @p len bytes at @p p on a per-packet path, in 16-byte stores and a
 * memset() of the rest. For a constant memset() above 64 bytes GCC's
 * generic x86-64 tuning emits `rep stosq`, whose start-up costs tens of
 * cycles, more than the stores themselves; this loop stays one (unrolled
 * where @p len is a constant).
 */
static inline void
uroce_zero_small(void *p, size_t len)
{
	uint8_t *b = (uint8_t *)p;
	size_t i;

#pragma GCC unroll 16
	for (i = 0; i + sizeof(uroce_vec16) <= len; i += sizeof(uroce_vec16))
		*(uroce_vec16 *)(void *)(b + i) = (uroce_vec16){ 0 };
	memset(b + i, 0, len - i);
}

/**
 * memcpy() of @p n bytes on a per-packet path, inline up to 64: at most four
 * 16-byte moves, the last ones overlapping the first, where a call goes
 * through the PLT and libc's dispatch on the length, and where GCC, knowing
 * a bound on @p n, may expand it as `rep movsq` (tens of cycles to start).
 * Longer copies call memcpy(). @p d and @p s do not overlap.
 */
static inline void
uroce_copy_small(void *d, const void *s, size_t n)
{
	uint8_t *db = (uint8_t *)d;
	const uint8_t *sb = (const uint8_t *)s;

	if (n > 64) {
		memcpy(db, sb, n);
	} else if (n >= 16) {
		memcpy(db, sb, 16);
		if (n > 32) {
			memcpy(db + 16, sb + 16, 16);
			memcpy(db + n - 32, sb + n - 32, 16);
		}
		memcpy(db + n - 16, sb + n - 16, 16);
	} else if (n >= 8) {
		memcpy(db, sb, 8);
		memcpy(db + n - 8, sb + n - 8, 8);
	} else if (n >= 4) {
		memcpy(db, sb, 4);
		memcpy(db + n - 4, sb + n - 4, 4);
	} else {
		while (n-- > 0)
			*db++ = *sb++;
	}
}

/**
 * Which responder check refused a request (IBA 9.7.5.1): lib/transport's
 * record of it (uroce_eng_resp_reject), the daemon's log and the QP's
 * "last responder error" counters (QUERY_COUNTERS) carry these numbers.
 */
enum uroce_resp_check {
	UROCE_RCHK_NONE = 0,
	UROCE_RCHK_OP_SEQ,        /**< opcode out of sequence (C9-85): NAK invalid request */
	UROCE_RCHK_LENGTH,        /**< payload against the path MTU (C9-92) */
	UROCE_RCHK_QP_ACCESS,     /**< the QP's access flags do not allow the operation */
	UROCE_RCHK_MSG_SIZE,      /**< a DMA length above 2^31 */
	UROCE_RCHK_RKEY,          /**< R_Key, PD, rights or bounds of the RETH / AtomicETH (C9-88) */
	UROCE_RCHK_ATOMIC_ALIGN,  /**< an atomic VA not 8-aligned (IBA 9.4.5) */
	UROCE_RCHK_DMA_LENGTH,    /**< WRITE payload past its DMA length (C9-89) */
	UROCE_RCHK_RECV_LENGTH,   /**< SEND longer than its receive WQE */
	UROCE_RCHK_INVALIDATE,    /**< SEND with Invalidate: nothing may be invalidated */
	UROCE_RCHK_RECV_SGE,      /**< the receive WQE's SGE fails its L_Key check */
	UROCE_RCHK_WRITE_MR,      /**< a WRITE's later packet: the MR no longer holds the bytes */
	UROCE_RCHK_RD_ATOMIC,     /**< a READ/ATOMIC beyond max_dest_rd_atomic */
	UROCE_RCHK_READ_MR,       /**< a READ response: the MR no longer holds the bytes */
	UROCE_RCHK_REPLAY_MISS,   /**< duplicate READ/ATOMIC, no saved resource: dropped */
	UROCE_RCHK_REPLAY_RANGE,  /**< duplicate READ, not the tail of its saved READ: dropped */
	UROCE_RCHK_FETH,          /**< FLUSH: FETH reserved bits, type or level (IBA 1.5 A19) */
	UROCE_RCHK_FLUSH_TYPE,    /**< FLUSH: a placement type the QP/MR does not allow */
	UROCE_RCHK_XRC_SRQ,       /**< XRC: the XRCETH's SRQ is unknown or of another XRC domain */
	UROCE_RCHK_MAX,
};

/** The NAK code of a refused request that was dropped without a NAK. */
#define UROCE_RESP_REJECT_DROPPED 0xFFu

/** Name of a responder check ("rkey", "replay_miss", ...), "?" if unknown. */
const char *uroce_resp_check_name(uint32_t check);

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
