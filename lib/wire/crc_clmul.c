/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * CRC-32 by carry-less multiplication (x86 PCLMULQDQ), for the short
 * buffers most packets are: the ICRC of an ACK, a READ request or a 64-byte
 * WRITE covers 52 to 128 bytes, and a general CRC call costs more in set-up
 * and in its byte-serial tail than in folding such a buffer. Here the
 * masked pseudo header of the ICRC is built in registers, straight from the
 * packet, with no copy to a buffer.
 *
 * The method is polynomial folding (Intel's "Fast CRC Computation for
 * Generic Polynomials Using PCLMULQDQ", 2009): a 16-byte block B that lies
 * D bits ahead of the end of what has been read contributes B(x) * x^D mod
 * P(x); with B = H x^64 + L that is H (x^(D+64) mod P) + L (x^D mod P), two
 * 64 x 32-bit carry-less products whose sum is again at most 128 bits. The
 * constants are computed here from P at start-up.
 *
 * Bit order. The CRC is the reflected one: the first bit of a byte is its
 * least significant, and the first byte is the highest power. A 16-byte
 * block loaded little-endian has bit p as the coefficient of x^(127 - p);
 * a 64-bit half, bit p as that of x^(63 - p). The carry-less product of two
 * such 64-bit values puts the coefficient of x^(126 - r) in bit r, one
 * power short of the 128-bit order, so every constant is taken one power of
 * x lower than the product needs.
 *
 * Where the CPU has AVX-512 with VPCLMULQDQ, the ICRC of a packet of up to
 * a few blocks of 64 bytes is folded four 16-byte blocks per instruction
 * instead (icrc_zmm()). Zero bytes in front of a CRC's input do not change
 * its remainder, so the pseudo packet is read as if it were preceded by the
 * zeros that make it a whole number of 64-byte blocks: masked loads give
 * those zeros (and fault on none of the bytes they leave out), and no block
 * is partial.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "uroce_common.h"
#include "uroce_wire.h"
#include "wire_internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define CLMUL_TARGET __attribute__((target("pclmul,sse4.1")))
#define ZMM_TARGET __attribute__((target("pclmul,sse4.1,avx2,avx512f,avx512bw,avx512vl,vpclmulqdq")))

#define CRC32_POLY_NORMAL 0x04C11DB7u   /* P(x) without x^32, x^31 first */

/* fold[i] moves a block (i + 1) * 128 bits ahead: {x^(D+63), x^(D-1)} mod P. */
static __m128i fold_k[4];
/* The reduction of the last block: x^95 and x^63 mod P. */
static __m128i reduce_k;
/* pshufb indexes for a last block of k < 16 bytes: see crc_last(). */
static const uint8_t shuf_tab[48] = {
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};
/*
 * What the pseudo packet ORs into a packet, per family (IPv4, IPv6): 64 zero
 * bytes, then 8 bytes of ones for the LRH (the first four XORed with the
 * CRC register's initial ones, so zero) and the ones of the variant fields
 * of the IP, UDP and BTH headers behind them, then zeros. icrc_clmul() takes
 * its four header blocks from byte 64; icrc_zmm(), reading a packet with z
 * zeros in front, from byte 64 - z.
 */
static uint8_t icrc_or[2][256] __attribute__((aligned(64)));
static __m512i zmm_fold_k[3];   /* 512 bits ahead; the last 384, 256, 128; 2048 ahead */
static int level_max;
static int level;
static bool ready; /* clmul_init() has run: wire_crc_level() needs no pthread_once() */

/* x^n mod P, as a 64-bit half (coefficient of x^i in bit 63 - i). */
static uint64_t
xpow_mod(unsigned int n)
{
	uint32_t r = 1; /* x^0, coefficient of x^i in bit i */
	uint64_t out = 0;
	unsigned int i;

	while (n-- > 0)
		r = (r << 1) ^ ((r & 0x80000000u) ? CRC32_POLY_NORMAL : 0);
	for (i = 0; i < 32; i++)
		if (r & (1u << i))
			out |= 1ull << (63 - i);
	return out;
}

static void
clmul_init(void)
{
	unsigned int i, d;

	wire_crc_tab_init(); /* crc_reduce()'s last step */
	__builtin_cpu_init(); /* in case this runs before the constructors */
	level_max = WIRE_CRC_TABLE;
	if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1"))
		level_max = WIRE_CRC_CLMUL;
	if (level_max == WIRE_CRC_CLMUL && __builtin_cpu_supports("avx2") &&
	    __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("vpclmulqdq"))
		level_max = WIRE_CRC_ZMM;
	level = level_max;
	for (i = 0; i < 4; i++) {
		d = (i + 1) * 128;
		fold_k[i] = _mm_set_epi64x((long long)xpow_mod(d - 1), (long long)xpow_mod(d + 63));
	}
	reduce_k = _mm_set_epi64x((long long)xpow_mod(63), (long long)xpow_mod(95));
	{
		uint64_t k[8];

		for (i = 0; i < 4; i++) {
			k[2 * i] = xpow_mod(512 + 63);
			k[2 * i + 1] = xpow_mod(512 - 1);
		}
		memcpy(&zmm_fold_k[0], k, sizeof(k));
		for (i = 0; i < 3; i++) {
			d = (3 - i) * 128;
			k[2 * i] = xpow_mod(d + 63);
			k[2 * i + 1] = xpow_mod(d - 1);
		}
		k[6] = k[7] = 0; /* the last lane is not moved */
		memcpy(&zmm_fold_k[1], k, sizeof(k));
		for (i = 0; i < 4; i++) {
			k[2 * i] = xpow_mod(2048 + 63);
			k[2 * i + 1] = xpow_mod(2048 - 1);
		}
		memcpy(&zmm_fold_k[2], k, sizeof(k));
	}

	/* The pseudo header of an all-zero packet: the fields icrc.c masks,
	 * so that both roads mask the same ones. */
	for (i = 0; i < 2; i++) {
		static const uint8_t zero_hdrs[UROCE_IPV6_LEN + UROCE_UDP_LEN + UROCE_BTH_LEN];
		enum uroce_ip_family f = i == 0 ? UROCE_IP_V4 : UROCE_IP_V6;

		memset(icrc_or[i], 0, sizeof(icrc_or[i]));
		wire_icrc_pseudo_hdr(icrc_or[i] + 64, zero_hdrs,
				     (f == UROCE_IP_V4 ? UROCE_IPV4_LEN : UROCE_IPV6_LEN) +
				     UROCE_UDP_LEN + UROCE_BTH_LEN, f);
		memset(icrc_or[i] + 64, 0, 4);
	}
	__atomic_store_n(&ready, true, __ATOMIC_RELEASE);
}

static pthread_once_t clmul_once = PTHREAD_ONCE_INIT;

static inline CLMUL_TARGET __m128i
fold(__m128i x, __m128i k)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

/*
 * Append the last @p k (1..15) bytes, which end @p last (the 16 bytes that
 * end the buffer), to the state @p x. The new last block is x's bytes k..15
 * followed by those k bytes; x's first k bytes, which now lie a whole block
 * ahead of its end, are folded into it.
 */
static inline CLMUL_TARGET __m128i
crc_last(__m128i x, __m128i last, size_t k)
{
	__m128i keep = _mm_loadu_si128((const __m128i *)(const void *)(shuf_tab + 16 + k));
	__m128i ahead = _mm_loadu_si128((const __m128i *)(const void *)(shuf_tab + k));
	__m128i blk;

	/* ahead has its top bit set in bytes 0..15-k: those come from x. */
	blk = _mm_blendv_epi8(last, _mm_shuffle_epi8(x, keep), ahead);
	return _mm_xor_si128(fold(_mm_shuffle_epi8(x, ahead), fold_k[0]), blk);
}

/*
 * The CRC register for the 128-bit state @p x: x(x) * x^32 mod P, reduced to
 * 64 bits by two products and then to 32 by feeding the high word through
 * four zero bytes of the table CRC.
 */
static inline CLMUL_TARGET uint32_t
crc_reduce(__m128i x)
{
	__m128i t;
	uint64_t u;
	uint32_t h;

	/* x = H x^64 + L: x x^32 = H x^96 + L x^32, at most 96 bits. */
	t = _mm_xor_si128(_mm_clmulepi64_si128(x, reduce_k, 0x00),
			  _mm_slli_si128(_mm_unpackhi_epi64(x, _mm_setzero_si128()), 4));
	/* Its top 32 bits times x^64 mod P, added to its low 64. */
	t = _mm_xor_si128(_mm_clmulepi64_si128(t, reduce_k, 0x10), t);
	u = (uint64_t)_mm_extract_epi64(t, 1);
	h = (uint32_t)u;
	return wire_crc_tab[3][h & 0xFF] ^ wire_crc_tab[2][(h >> 8) & 0xFF] ^
	       wire_crc_tab[1][(h >> 16) & 0xFF] ^ wire_crc_tab[0][h >> 24] ^ (uint32_t)(u >> 32);
}

/*
 * CRC register of the @p len (>= 16) byte stream at @p p whose first block
 * is @p first instead of p's bytes, and whose blocks 1 to 3 are ORed with
 * @p mask[0..2]. Reads p[16..len) only.
 */
static CLMUL_TARGET uint32_t
crc_stream(__m128i first, const uint8_t *p, size_t len, const __m128i *mask)
{
	size_t nb = len / 16, j;
	__m128i x, x1, x2, x3;

#define BLK(i) _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * (i)))
	if (nb >= 4) {
		/* Four independent chains, a block each, 64 bytes apart. */
		x = first;
		x1 = _mm_or_si128(BLK(1), mask[0]);
		x2 = _mm_or_si128(BLK(2), mask[1]);
		x3 = _mm_or_si128(BLK(3), mask[2]);
		for (j = 4; j + 4 <= nb; j += 4) {
			x = _mm_xor_si128(fold(x, fold_k[3]), BLK(j));
			x1 = _mm_xor_si128(fold(x1, fold_k[3]), BLK(j + 1));
			x2 = _mm_xor_si128(fold(x2, fold_k[3]), BLK(j + 2));
			x3 = _mm_xor_si128(fold(x3, fold_k[3]), BLK(j + 3));
		}
		x = _mm_xor_si128(_mm_xor_si128(fold(x, fold_k[2]), fold(x1, fold_k[1])),
				  _mm_xor_si128(fold(x2, fold_k[0]), x3));
	} else {
		x = first;
		for (j = 1; j < nb; j++)
			x = _mm_xor_si128(fold(x, fold_k[0]), _mm_or_si128(BLK(j), mask[j - 1]));
	}
	for (; j < nb; j++)
		x = _mm_xor_si128(fold(x, fold_k[0]), BLK(j));
#undef BLK
	if (len % 16 != 0)
		x = crc_last(x, _mm_loadu_si128((const __m128i *)(const void *)(p + len - 16)),
			     len % 16);
	return crc_reduce(x);
}

static const __m128i no_mask[3];

static CLMUL_TARGET uint32_t
crc32_clmul(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	__m128i first;

	/* The register starts at ~crc: XOR it into the first four bytes. */
	first = _mm_xor_si128(_mm_loadu_si128((const __m128i *)buf), _mm_cvtsi32_si128((int)~crc));
	return ~crc_stream(first, p, len, no_mask);
}

static CLMUL_TARGET uint32_t
icrc_clmul(const uint8_t *l3, uint32_t len, enum uroce_ip_family family)
{
	const __m128i *m = (const __m128i *)(const void *)(icrc_or[family == UROCE_IP_V6] + 64);
	__m128i first;

	/* The LRH's bytes from the constants, then the first eight of the IP
	 * header. The rest of the stream is l3 from byte 8 on, which is where
	 * p + 16 points with p = l3 - 8. */
	first = _mm_slli_si128(_mm_loadl_epi64((const __m128i *)(const void *)l3), 8);
	first = _mm_or_si128(first, m[0]);
	return ~crc_stream(first, l3 - 8, (size_t)len + 8, m + 1);
}

/* x * x^D + b for the 512-bit state x: every lane moved D bits ahead by k. */
static inline ZMM_TARGET __m512i
fold512(__m512i x, __m512i k, __m512i b)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
					 _mm512_clmulepi64_epi128(x, k, 0x11), b, 0x96);
}

/* The 512-bit state @p x as a 128-bit one: lanes 0..2 moved to the end of
 * lane 3, then the four added. */
static inline ZMM_TARGET __m128i
zmm_to_xmm(__m512i x)
{
	__m512i b = _mm512_xor_si512(_mm512_clmulepi64_epi128(x, zmm_fold_k[1], 0x00),
				     _mm512_clmulepi64_epi128(x, zmm_fold_k[1], 0x11));
	__m256i y;

	x = _mm512_mask_blend_epi64(0xC0, b, x);
	y = _mm256_xor_si256(_mm512_castsi512_si256(x), _mm512_extracti64x4_epi64(x, 1));
	return _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
}

/*
 * icrc_clmul() four blocks at a time: the pseudo packet of @p len bytes of
 * l3 (at most ZMM_MAX with its 8 bytes of ones) behind the zeros that make
 * it whole 64-byte blocks.
 */
#define ZMM_MAX 1024
/* Above these, ISA-L's wider folds over the body are faster than folding the
 * whole pseudo packet here (bench_icrc; doc/benchmarks.md). */
#define XMM_MAX 300
#define ZMM_BUILT_MIN 256

static ZMM_TARGET uint32_t
icrc_zmm(const uint8_t *l3, uint32_t len, enum uroce_ip_family family)
{
	const uint8_t *or = icrc_or[family == UROCE_IP_V6];
	uint32_t total = len + 8, z = (64 - total % 64) % 64, nb = (total + z) / 64, c;
	/* Block c starts at l3 + 64 c - z - 8; its first z + 8 - 64 c bytes are
	 * not l3's: the loads leave them out. (A load with nothing in its mask
	 * is not made: one whose address lay in an unmapped page took a
	 * microcode assist of about 150 ns here, although it could not fault.) */
	const uint8_t *p = l3 - z - 8;
	uint32_t skip = z + 8;
	__m512i x, b;

	x = _mm512_loadu_si512(or + 64 - z);
	if (skip < 64)
		x = _mm512_or_si512(x, _mm512_maskz_loadu_epi8(~0ull << skip, p));
	for (c = 1; c < nb; c++) {
		b = _mm512_maskz_loadu_epi8(skip >= 64 * (c + 1) ? 0 :
					    skip > 64 * c ? ~0ull << (skip - 64 * c) : ~0ull,
					    p + 64 * c);
		if (c < 3)
			b = _mm512_or_si512(b, _mm512_loadu_si512(or + 64 - z + 64 * c));
		x = fold512(x, zmm_fold_k[0], b);
	}
	return ~crc_reduce(zmm_to_xmm(x));
}

/*
 * Copy @p len (>= 256) bytes and fold them on the way, continuing @p crc:
 * each 64-byte block is loaded once, stored, and folded from the same
 * register. Four chains 256 bytes apart keep the multiplier busy; the
 * stores ride along in the time the folds take (doc/benchmarks.md).
 *
 * The destination (a responder's MR) is mostly not in this core's cache: a
 * store that misses holds its store-queue entry until the line comes, and
 * 64 of them filled the queue, so copies waited on stores (and the stores
 * of the code after them too). The lines COPY_AHEAD bytes on are asked
 * for while the copy goes: PREFETCHT0, which is what the write hint gives
 * on the baseline x86-64 target (PREFETCHW, built with -mprfchw, was no
 * faster: 0.97 x). (Streaming stores, which take no line, were 0.74 x as
 * fast here: they went to DRAM.)
 */
#define COPY_AHEAD 1024

static ZMM_TARGET uint32_t
crc32_copy_zmm(uint32_t crc, uint8_t *dst, const uint8_t *src, size_t len)
{
	__m512i x0, x1, x2, x3, b0, b1, b2, b3;
	size_t off;
	__m128i q;

	x0 = _mm512_loadu_si512(src);
	x1 = _mm512_loadu_si512(src + 64);
	x2 = _mm512_loadu_si512(src + 128);
	x3 = _mm512_loadu_si512(src + 192);
	_mm512_storeu_si512(dst, x0);
	_mm512_storeu_si512(dst + 64, x1);
	_mm512_storeu_si512(dst + 128, x2);
	_mm512_storeu_si512(dst + 192, x3);
	/* The register starts at ~crc: XOR it into the first four bytes. */
	x0 = _mm512_xor_si512(x0, _mm512_castsi128_si512(_mm_cvtsi32_si128((int)~crc)));
	for (off = 256; off + 256 <= len; off += 256) {
		__builtin_prefetch(dst + off + COPY_AHEAD, 1);
		__builtin_prefetch(dst + off + COPY_AHEAD + 64, 1);
		__builtin_prefetch(dst + off + COPY_AHEAD + 128, 1);
		__builtin_prefetch(dst + off + COPY_AHEAD + 192, 1);
		b0 = _mm512_loadu_si512(src + off);
		b1 = _mm512_loadu_si512(src + off + 64);
		b2 = _mm512_loadu_si512(src + off + 128);
		b3 = _mm512_loadu_si512(src + off + 192);
		_mm512_storeu_si512(dst + off, b0);
		_mm512_storeu_si512(dst + off + 64, b1);
		_mm512_storeu_si512(dst + off + 128, b2);
		_mm512_storeu_si512(dst + off + 192, b3);
		x0 = fold512(x0, zmm_fold_k[2], b0);
		x1 = fold512(x1, zmm_fold_k[2], b1);
		x2 = fold512(x2, zmm_fold_k[2], b2);
		x3 = fold512(x3, zmm_fold_k[2], b3);
	}
	x0 = fold512(x0, zmm_fold_k[0], x1);
	x0 = fold512(x0, zmm_fold_k[0], x2);
	x0 = fold512(x0, zmm_fold_k[0], x3);
	for (; off + 64 <= len; off += 64) {
		b0 = _mm512_loadu_si512(src + off);
		_mm512_storeu_si512(dst + off, b0);
		x0 = fold512(x0, zmm_fold_k[0], b0);
	}
	q = zmm_to_xmm(x0);
	for (; off + 16 <= len; off += 16) {
		__m128i blk = _mm_loadu_si128((const __m128i *)(const void *)(src + off));

		_mm_storeu_si128((__m128i *)(void *)(dst + off), blk);
		q = _mm_xor_si128(fold(q, fold_k[0]), blk);
	}
	if (off < len) {
		memcpy(dst + off, src + off, len - off);
		q = crc_last(q, _mm_loadu_si128((const __m128i *)(const void *)(src + len - 16)),
			     len - off);
	}
	return ~crc_reduce(q);
}

int
wire_crc_level(void)
{
	/* Asked for every packet: a flag, then pthread_once() only at first. */
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		pthread_once(&clmul_once, clmul_init);
	return level;
}

int
wire_crc_level_set(int want)
{
	int was;

	pthread_once(&clmul_once, clmul_init);
	was = level;
	level = want < WIRE_CRC_TABLE ? WIRE_CRC_TABLE : want > level_max ? level_max : want;
	return was;
}

uint32_t
wire_crc32_clmul(uint32_t crc, const void *buf, size_t len)
{
	if (len < 16 || wire_crc_level() < WIRE_CRC_CLMUL)
		return wire_crc32_slice8(crc, buf, len);
	return crc32_clmul(crc, buf, len);
}

uint32_t
wire_icrc_clmul_max(void)
{
	return level == WIRE_CRC_ZMM ? ZMM_MAX : XMM_MAX;
}

uint32_t
wire_icrc_clmul(const uint8_t *l3, uint32_t len, enum uroce_ip_family family, bool built)
{
	/* Headers just written are still in the store buffer, and a load that
	 * spans them waits until they reach the cache: a 64-byte load longer
	 * than 16-byte ones. Up to ZMM_BUILT_MIN bytes the 128-bit folds were
	 * the faster on such a packet, the 512-bit ones on a packet received
	 * (bench_icrc; doc/benchmarks.md). */
	if (level == WIRE_CRC_ZMM && len + 8 <= ZMM_MAX && (!built || len + 8 > ZMM_BUILT_MIN))
		return icrc_zmm(l3, len, family);
	return icrc_clmul(l3, len, family);
}

#else /* no PCLMULQDQ */

int
wire_crc_level(void)
{
	return WIRE_CRC_TABLE;
}

int
wire_crc_level_set(int want)
{
	(void)want;
	return WIRE_CRC_TABLE;
}

uint32_t
wire_crc32_clmul(uint32_t crc, const void *buf, size_t len)
{
	return wire_crc32_slice8(crc, buf, len);
}

uint32_t
wire_icrc_clmul_max(void)
{
	return 0;
}

uint32_t
wire_icrc_clmul(const uint8_t *l3, uint32_t len, enum uroce_ip_family family, bool built)
{
	(void)l3;
	(void)len;
	(void)family;
	(void)built;
	return 0;
}

#endif

uint32_t
uroce_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
#ifdef ZMM_TARGET
	if (len >= 256 && wire_crc_level() == WIRE_CRC_ZMM)
		return crc32_copy_zmm(crc, dst, src, len);
#endif
	memcpy(dst, src, len);
	return uroce_crc32(crc, dst, len);
}
