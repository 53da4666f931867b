/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The RoCEv2 invariant CRC (IBA 7.8.1, RoCEv2 annex A17.4.1) and the CRC-32
 * under it.
 *
 * The ICRC is CRC-32 over a pseudo packet: 8 bytes of ones in place of the
 * LRH, the IP header, the UDP header and the InfiniBand headers and payload,
 * with every field that a router or switch may change on the way replaced by
 * ones. Where the CPU has carry-less multiplication, crc_clmul.c masks the
 * headers in registers and folds a small packet whole, in place. Otherwise
 * the headers are masked in a buffer on the stack; a small packet is copied
 * whole behind them (one CRC call, over one 256-byte block: see ONE_PASS_LEN
 * and PAD_MIN). A larger packet's body is taken in place after its headers.
 *
 * uroce_crc32() is ISA-L's crc32_gzip_refl() when the build found ISA-L (by
 * far the fastest on x86; see doc/benchmarks.md) and otherwise a portable
 * slice-by-8 table CRC written here. The slice-by-8 code is always compiled
 * so that tests and the benchmark can compare the two.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef UROCE_HAVE_ISAL
#include <isa-l/crc.h>
#endif

#include "uroce_common.h"
#include "uroce_wire.h"
#include "wire_internal.h"

/* ------------------------------------------------------------------------ */
/* Portable CRC-32, slice-by-8                                               */
/* ------------------------------------------------------------------------ */

#define CRC32_POLY_REFL 0xEDB88320u

/*
 * wire_crc_tab[k][b] is the CRC register after feeding byte b into an all-zero
 * register and then k zero bytes. With those eight tables, eight input bytes
 * are folded into the register with eight lookups and no dependency between
 * them. Filled once, at first use.
 */
uint32_t wire_crc_tab[8][256];
static pthread_once_t crc_tab_once = PTHREAD_ONCE_INIT;

static void
crc_tab_init(void)
{
	uint32_t b, c;
	int k;

	for (b = 0; b < 256; b++) {
		c = b;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1) ? CRC32_POLY_REFL : 0);
		wire_crc_tab[0][b] = c;
	}
	for (b = 0; b < 256; b++) {
		c = wire_crc_tab[0][b];
		for (k = 1; k < 8; k++) {
			c = (c >> 8) ^ wire_crc_tab[0][c & 0xFF];
			wire_crc_tab[k][b] = c;
		}
	}
}

void
wire_crc_tab_init(void)
{
	pthread_once(&crc_tab_once, crc_tab_init);
}

uint32_t
wire_crc32_slice8(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t v;

	wire_crc_tab_init();
	crc = ~crc;

	/* Align to 8 so that the wide loads below do not straddle lines. */
	while (len > 0 && ((uintptr_t)p & 7) != 0) {
		crc = (crc >> 8) ^ wire_crc_tab[0][(crc ^ *p++) & 0xFF];
		len--;
	}
	while (len >= 8) {
		memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		v = __builtin_bswap64(v);
#endif
		/* Byte 0 of the input is the low byte of v on every host now. */
		v ^= crc;
		crc = wire_crc_tab[7][v & 0xFF] ^
		      wire_crc_tab[6][(v >> 8) & 0xFF] ^
		      wire_crc_tab[5][(v >> 16) & 0xFF] ^
		      wire_crc_tab[4][(v >> 24) & 0xFF] ^
		      wire_crc_tab[3][(v >> 32) & 0xFF] ^
		      wire_crc_tab[2][(v >> 40) & 0xFF] ^
		      wire_crc_tab[1][(v >> 48) & 0xFF] ^
		      wire_crc_tab[0][v >> 56];
		p += 8;
		len -= 8;
	}
	while (len > 0) {
		crc = (crc >> 8) ^ wire_crc_tab[0][(crc ^ *p++) & 0xFF];
		len--;
	}
	return ~crc;
}

/* ------------------------------------------------------------------------ */
/* CRC-32 used by uroce                                                      */
/* ------------------------------------------------------------------------ */

uint32_t
uroce_crc32(uint32_t crc, const void *buf, size_t len)
{
#ifdef UROCE_HAVE_ISAL
	/* Same contract as zlib's crc32(): seed 0, result chains; test_icrc checks it. */
	return crc32_gzip_refl(crc, (const unsigned char *)buf, len);
#else
	return wire_crc32_clmul(crc, buf, len);
#endif
}

const char *
uroce_crc32_impl(void)
{
#ifdef UROCE_HAVE_ISAL
	return "isal";
#else
	return wire_crc_level() >= WIRE_CRC_CLMUL ? "clmul" : "slice8";
#endif
}

/* ------------------------------------------------------------------------ */
/* ICRC                                                                      */
/* ------------------------------------------------------------------------ */

#define IPV4_MAX_HLEN 60        /* IHL is 4 bits of 32-bit words */
#define LRH_ONES_LEN  8         /* the LRH replaced by ones (IBA A17.4.1) */
#define PSEUDO_MAX    (LRH_ONES_LEN + IPV4_MAX_HLEN + UROCE_UDP_LEN + UROCE_BTH_LEN)
/*
 * A pseudo packet of at most this many bytes is built whole in one buffer
 * (the masked headers, then the rest copied behind them) and takes one CRC
 * call: each call has a fixed cost larger than copying this much. Such
 * packets are ACKs, READ requests, atomics and their responses, and small
 * WRITEs and SENDs.
 */
#define ONE_PASS_LEN  256
/* Where the CPU has carry-less multiplication (crc_clmul.c), a contiguous
 * pseudo packet up to this size is folded whole there. */
#ifdef UROCE_HAVE_ISAL
#define CLMUL_WHOLE_MAX wire_icrc_clmul_max()
#else
#define CLMUL_WHOLE_MAX UINT64_MAX
#endif

/*
 * ISA-L's fast CRC (crc32_gzip_refl_by16_10) folds whole 256-byte blocks;
 * what is left below 256 bytes goes through a serial fold that costs more
 * than a whole block: on the development VM 132 bytes take 72 cycles, 255
 * take 111 and 256 take 46 (doc/benchmarks.md). So a one-pass packet of at
 * least PAD_MIN bytes is placed at the end of the 256-byte buffer behind
 * zeros, and the CRC starts from a seed that those zeros carry to the usual
 * all-ones register: a CRC is linear, and zero bytes fed into a register
 * only multiply it by a power of x, which can be undone (zero_seed_init()).
 * Below PAD_MIN the serial fold is the cheaper. The portable CRC pays per
 * byte, so it gets no padding.
 */
#ifdef UROCE_HAVE_ISAL
#define PAD_MIN       80
#else
#define PAD_MIN       (ONE_PASS_LEN + 1)
#endif

/*
 * zero_seed[n]: the seed c for which uroce_crc32(c, n zero bytes followed
 * by D) equals uroce_crc32(0, D) for every D. uroce_crc32() inverts its
 * seed into the register, so the register after the n zeros must be all
 * ones: start from all ones and undo n zero-byte steps. A step on a zero
 * byte maps r to (r >> 8) ^ T[r & 0xFF]; the top byte of T[i] tells i (the
 * top bytes of the 256 entries are all different), which gives r back.
 */
static uint32_t zero_seed[ONE_PASS_LEN];
static pthread_once_t zero_seed_once = PTHREAD_ONCE_INIT;

static void
zero_seed_init(void)
{
	uint8_t index_of_top[256];
	uint32_t r = 0xFFFFFFFFu, i;
	unsigned int n;

	wire_crc_tab_init();
	for (i = 0; i < 256; i++)
		index_of_top[wire_crc_tab[0][i] >> 24] = (uint8_t)i;
	for (n = 0; n < ONE_PASS_LEN; n++) {
		zero_seed[n] = ~r;
		i = index_of_top[r >> 24];
		r = ((r ^ wire_crc_tab[0][i]) << 8) | i;
	}
}

/*
 * How many bytes of @p l3 the IP, UDP and BTH headers take, or 0 if they do
 * not fit in @p l3_len or the IP header is not valid enough to know its
 * length.
 */
static uint32_t
icrc_hdrs_len(const uint8_t *l3, uint32_t l3_len, enum uroce_ip_family family)
{
	uint32_t ip_len, hdrs;

	if (family == UROCE_IP_V4) {
		if (l3_len < UROCE_IPV4_LEN)
			return 0;
		/* The ICRC covers the whole IPv4 header, options included. */
		ip_len = (uint32_t)(l3[0] & 0x0F) * 4;
		if (ip_len < UROCE_IPV4_LEN)
			return 0;
	} else if (family == UROCE_IP_V6) {
		ip_len = UROCE_IPV6_LEN;
	} else {
		return 0;
	}
	hdrs = ip_len + UROCE_UDP_LEN + UROCE_BTH_LEN;
	return l3_len < hdrs ? 0 : hdrs;
}

void
wire_icrc_pseudo_hdr(uint8_t *ps, const uint8_t *l3, uint32_t hdrs, enum uroce_ip_family family)
{
	uint8_t *ip = ps + LRH_ONES_LEN;
	uint32_t ip_len = hdrs - UROCE_UDP_LEN - UROCE_BTH_LEN;
	uint8_t *udp, *bth;

	memset(ps, 0xFF, LRH_ONES_LEN);
	/* Copies of a constant size: a variable one became `rep movsq`, whose
	 * start-up cost was half of this function's time per packet. */
	if (hdrs == UROCE_IPV4_LEN + UROCE_UDP_LEN + UROCE_BTH_LEN)
		memcpy(ip, l3, UROCE_IPV4_LEN + UROCE_UDP_LEN + UROCE_BTH_LEN);
	else if (hdrs == UROCE_IPV6_LEN + UROCE_UDP_LEN + UROCE_BTH_LEN)
		memcpy(ip, l3, UROCE_IPV6_LEN + UROCE_UDP_LEN + UROCE_BTH_LEN);
	else
		memcpy(ip, l3, hdrs); /* IPv4 with options */
	if (family == UROCE_IP_V4) {
		ip[1] = 0xFF;                   /* type of service (DSCP, ECN) */
		ip[8] = 0xFF;                   /* time to live */
		ip[10] = 0xFF;                  /* header checksum */
		ip[11] = 0xFF;
	} else {
		ip[0] |= 0x0F;                  /* traffic class, high nibble */
		ip[1] = 0xFF;                   /* traffic class low, flow label */
		ip[2] = 0xFF;
		ip[3] = 0xFF;
		ip[7] = 0xFF;                   /* hop limit */
	}
	udp = ip + ip_len;
	udp[6] = 0xFF;                          /* UDP checksum */
	udp[7] = 0xFF;
	bth = udp + UROCE_UDP_LEN;
	bth[4] = 0xFF;                          /* FECN, BECN, reserved */
}

/*
 * Clear the first @p n bytes of @p buf, and at most 15 more (the packet is
 * written over them next): uroce_zero_small() of whole vectors, since a
 * memset() here became `rep stosq` (3 % of bench_engine's time).
 */
static inline void
zero_front(uint8_t *buf, uint32_t n)
{
	uroce_zero_small(buf, (n + sizeof(uroce_vec16) - 1) & ~(sizeof(uroce_vec16) - 1));
}

/*
 * CRC of a pseudo packet of @p total bytes (at most ONE_PASS_LEN) built whole
 * in one buffer: the masked headers, the rest of @p l3, @p tail and @p zeros
 * zero bytes. One CRC call, over one whole block where that is the cheaper.
 */
static uint32_t
icrc_one_block(const uint8_t *l3, uint32_t hdrs, uint32_t rest, const uint8_t *tail,
	       uint32_t tail_len, uint32_t zeros, enum uroce_ip_family family, uint32_t total)
{
	uint8_t buf[ONE_PASS_LEN] __attribute__((aligned(64)));
	uint32_t start = 0, seed = 0; /* zero_seed[0]: no zeros in front */
	uint8_t *p;

	if (total >= PAD_MIN) {
		/* One whole block: zeros, then the packet at its end. */
		start = ONE_PASS_LEN - total;
		zero_front(buf, start);
		pthread_once(&zero_seed_once, zero_seed_init);
		seed = zero_seed[start];
	}
	p = buf + start;
	wire_icrc_pseudo_hdr(p, l3, hdrs, family);
	p += LRH_ONES_LEN + hdrs;
	memcpy(p, l3 + hdrs, rest);
	p += rest;
	if (tail_len > 0)
		memcpy(p, tail, tail_len);
	p += tail_len;
	memset(p, 0, zeros);
	return uroce_crc32(seed, buf, (size_t)start + total);
}

/* The pad's bytes (IBA 9.2.4: zero), at most 3; one more to spare. */
static const uint8_t pad_zeros[4];

/*
 * CRC of the pseudo packet, or false if the headers are not all there. The
 * IP header's own idea of the length is not used: @p l3_len is what the
 * caller (uroce_frame_parse()) validated. @p tail (zero-copy: the payload
 * where it lies) continues the packet after @p l3. @p built: the headers
 * were just written (a packet being sent), see wire_icrc_clmul().
 */
static bool
icrc_calc(const uint8_t *l3, uint32_t l3_len, const uint8_t *tail, uint32_t tail_len,
	  uint32_t zeros, enum uroce_ip_family family, bool built, uint32_t *out)
{
	uint8_t ps[PSEUDO_MAX];
	uint32_t hdrs, crc, rest;
	uint64_t total;

	hdrs = icrc_hdrs_len(l3, l3_len, family);
	if (hdrs == 0)
		return false;
	rest = l3_len - hdrs;
	zeros = zeros < sizeof(pad_zeros) ? zeros : sizeof(pad_zeros);
	total = (uint64_t)LRH_ONES_LEN + hdrs + rest + tail_len + zeros; /* no wrap */
	if ((family == UROCE_IP_V6 || hdrs == UROCE_IPV4_LEN + UROCE_UDP_LEN + UROCE_BTH_LEN) &&
	    wire_crc_level() >= WIRE_CRC_CLMUL) {
		/* Masked in registers, read in place (crc_clmul.c). A large
		 * packet has only its headers folded there: ISA-L is faster
		 * over a long body. */
		if (tail_len == 0 && zeros == 0 && total <= CLMUL_WHOLE_MAX) {
			*out = wire_icrc_clmul(l3, l3_len, family, built);
			return true;
		}
		crc = wire_icrc_clmul(l3, hdrs, family, built);
	} else if (total <= ONE_PASS_LEN) {
		*out = icrc_one_block(l3, hdrs, rest, tail, tail_len, zeros, family,
				      (uint32_t)total);
		return true;
	} else {
		wire_icrc_pseudo_hdr(ps, l3, hdrs, family);
		crc = uroce_crc32(0, ps, LRH_ONES_LEN + hdrs);
	}
	crc = uroce_crc32(crc, l3 + hdrs, rest);
	if (tail_len > 0)
		crc = uroce_crc32(crc, tail, tail_len);
	if (zeros > 0)
		crc = uroce_crc32(crc, pad_zeros, zeros);
	*out = crc;
	return true;
}

bool
wire_icrc_head(const uint8_t *l3, uint32_t l3_len, enum uroce_ip_family family, uint32_t *crc)
{
	return icrc_calc(l3, l3_len, NULL, 0, 0, family, false, crc);
}

bool
uroce_pkt_icrc_end(const struct uroce_pkt *p, uint32_t crc)
{
	if (p->padcnt > 0)
		crc = uroce_crc32(crc, pad_zeros, p->padcnt);
	return crc == p->icrc_want;
}

bool
uroce_pkt_icrc_late(const struct uroce_pkt *p)
{
	return uroce_pkt_icrc_end(p, uroce_crc32(p->icrc_seed, p->payload, p->paylen));
}

uint32_t
uroce_icrc_compute(const uint8_t *l3, uint32_t l3_len, enum uroce_ip_family family)
{
	uint32_t crc;

	if (!icrc_calc(l3, l3_len, NULL, 0, 0, family, true, &crc))
		return 0;
	return crc;
}

uint32_t
uroce_icrc_compute2(const uint8_t *l3, uint32_t l3_len, const uint8_t *tail, uint32_t tail_len,
		    uint32_t zeros, enum uroce_ip_family family)
{
	uint32_t crc;

	if (!icrc_calc(l3, l3_len, tail, tail_len, zeros, family, true, &crc))
		return 0;
	return crc;
}

void
uroce_icrc_fill(uint8_t *l3, uint32_t l3_len, enum uroce_ip_family family)
{
	uint32_t crc = uroce_icrc_compute(l3, l3_len, family);
	uint8_t *w = l3 + l3_len;

	/* The ICRC goes on the wire least significant byte first (as rxe and
	 * every RoCE NIC send it). */
	w[0] = (uint8_t)crc;
	w[1] = (uint8_t)(crc >> 8);
	w[2] = (uint8_t)(crc >> 16);
	w[3] = (uint8_t)(crc >> 24);
}

bool
uroce_icrc_check(const uint8_t *l3, uint32_t l3_len, enum uroce_ip_family family)
{
	return uroce_icrc_check2(l3, l3_len, NULL, 0, 0, l3 + l3_len, family);
}

bool
uroce_icrc_check2(const uint8_t *l3, uint32_t l3_len, const uint8_t *tail, uint32_t tail_len,
		  uint32_t zeros, const uint8_t icrc[4], enum uroce_ip_family family)
{
	uint32_t crc;

	if (!icrc_calc(l3, l3_len, tail, tail_len, zeros, family, false, &crc))
		return false;
	return crc == wire_icrc_get(icrc);
}
