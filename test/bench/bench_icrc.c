/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * ICRC and CRC-32 throughput, one core.
 *
 * For 64 B, 124 B (a 64-byte RDMA WRITE ONLY), 256 B, 1 KiB and 4 KiB it times:
 *   icrc         uroce_icrc_compute() on a real RoCEv2 IPv4 packet of that
 *                size (IP header through ICRC), with the best code the CPU
 *                has, then with 128-bit carry-less folds only, then with
 *                none (crc_clmul.c)
 *   icrc+hdrs    uroce_icrc_compute() on an RC SEND ONLY packet carrying
 *                that many payload bytes (what an MTU-sized data packet
 *                looks like); GB/s counts the payload only
 *   isal         ISA-L crc32_gzip_refl() (if the build found ISA-L)
 *   clmul        uroce's carry-less CRC-32 (lib/wire/crc_clmul.c)
 *   slice8       uroce's portable slice-by-8 fallback (lib/wire/icrc.c)
 *   zlib         zlib crc32() (if the build found zlib)
 *   bytewise     a plain byte-at-a-time 256-entry table CRC, the baseline
 * Each row runs for about --time seconds (default 0.2), split in 5 runs of
 * which the fastest is reported, on a buffer that stays in L1. GB/s is 10^9
 * bytes of buffer per second. The program reports and
 * never fails on a number; it exits non-zero only if two implementations
 * disagree on a CRC.
 *
 * Usage: bench_icrc [--time SECONDS]
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef UROCE_HAVE_ISAL
#include <isa-l/crc.h>
#endif
#ifdef UROCE_HAVE_ZLIB
#include <zlib.h>
#endif

#include "uroce_wire.h"
#include "wire_internal.h"

/* IP + UDP + BTH + ICRC around a payload */
#define PAY_OVERHEAD (UROCE_IPV4_LEN + UROCE_UDP_LEN + UROCE_BTH_LEN + UROCE_ICRC_LEN)

static uint32_t byte_tab[256];

static void
byte_tab_init(void)
{
	uint32_t b, c;
	int k;

	for (b = 0; b < 256; b++) {
		c = b;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1) ? 0xEDB88320u : 0);
		byte_tab[b] = c;
	}
}

static uint32_t
crc_bytewise(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n-- > 0)
		crc = (crc >> 8) ^ byte_tab[(crc ^ *p++) & 0xFF];
	return ~crc;
}

/* Where the copy rows put the bytes. */
static uint8_t copy_dst[8192] __attribute__((aligned(64)));

enum kind {
	K_ICRC,
	K_ICRC_XMM,
	K_ICRC_NOCLMUL,
	K_ICRC_PAY,
	K_CLMUL,
	K_COPY_FUSED,
	K_COPY_THEN,
	K_ISAL,
	K_SLICE8,
	K_ZLIB,
	K_BYTEWISE,
};

static uint32_t
run_one(enum kind k, const uint8_t *buf, uint32_t len)
{
	switch (k) {
	case K_ICRC:
	case K_ICRC_XMM:     /* measure() sets wire_crc_level() */
	case K_ICRC_NOCLMUL:
		return uroce_icrc_compute(buf, len - UROCE_ICRC_LEN, UROCE_IP_V4);
	case K_ICRC_PAY:
		return uroce_icrc_compute(buf, len + PAY_OVERHEAD - UROCE_ICRC_LEN, UROCE_IP_V4);
#ifdef UROCE_HAVE_ISAL
	case K_ISAL:
		return crc32_gzip_refl(0, buf, len);
#endif
	case K_SLICE8:
		return wire_crc32_slice8(0, buf, len);
	case K_CLMUL:
		return wire_crc32_clmul(0, buf, len);
	case K_COPY_FUSED: /* a received payload placed: copied and checked in one pass */
		return uroce_crc32_copy(0, copy_dst, buf, len);
	case K_COPY_THEN: { /* the same, checked first and copied after */
		uint32_t c = uroce_crc32(0, buf, len);

		memcpy(copy_dst, buf, len);
		return c;
	}
#ifdef UROCE_HAVE_ZLIB
	case K_ZLIB:
		return (uint32_t)crc32(0, buf, len);
#endif
	case K_BYTEWISE:
		return crc_bytewise(0, buf, len);
	default:
		return 0;
	}
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile uint32_t sink;

/* Seconds for @p iters calls. The buffer's first byte changes between calls
 * (a bit the CRC covers, not a masked one) so no call can be hoisted. */
static double
time_iters(enum kind k, uint8_t *buf, uint32_t len, uint64_t iters)
{
	uint32_t acc = 0;
	uint64_t i;
	double t0 = now_s();

	for (i = 0; i < iters; i++) {
		acc += run_one(k, buf, len);
		buf[len - 5] ^= (uint8_t)i;
	}
	sink = acc;
	return now_s() - t0;
}

#define REPEATS 5

/*
 * Throughput in GB/s: calibrate, then REPEATS timed runs of target/REPEATS
 * seconds each, and keep the fastest (on a shared or virtual machine the
 * slow runs measure the neighbours, not the code).
 */
static double
measure(enum kind k, uint8_t *buf, uint32_t len, double target, double *ns_per_call)
{
	double t, best = 0;
	uint64_t iters = 16;
	int rep;

	wire_crc_level_set(k == K_ICRC_NOCLMUL ? WIRE_CRC_TABLE :
			   k == K_ICRC_XMM ? WIRE_CRC_CLMUL : WIRE_CRC_ZMM);
	for (;;) {
		t = time_iters(k, buf, len, iters);
		if (t >= target / 50 || iters > (1ull << 40))
			break;
		iters *= 2;
	}
	iters = (uint64_t)((double)iters * (target / REPEATS) / (t > 0 ? t : 1e-9)) + 1;
	for (rep = 0; rep < REPEATS; rep++) {
		t = time_iters(k, buf, len, iters);
		if (best == 0 || t < best)
			best = t;
	}
	wire_crc_level_set(WIRE_CRC_ZMM);
	*ns_per_call = best * 1e9 / (double)iters;
	return (double)len * (double)iters / best / 1e9;
}

/* A RoCEv2 IPv4 packet, IP header through ICRC, of @p len bytes: RC SEND ONLY
 * (@p len >= PAY_OVERHEAD). */
static void
make_packet(uint8_t *p, uint32_t len)
{
	uint32_t i, paylen = len - UROCE_IPV4_LEN - UROCE_UDP_LEN - UROCE_BTH_LEN - 4;

	memset(p, 0, len);
	p[0] = 0x45;
	uroce_put_be16(p + 2, (uint16_t)len);
	p[6] = 0x40;            /* DF */
	p[8] = 64;
	p[9] = UROCE_IPPROTO_UDP;
	memcpy(p + 12, "\xc6\x12\x00\x01\xc6\x12\x00\x02", 8);
	uroce_put_be16(p + 20, 0xC123);
	uroce_put_be16(p + 22, UROCE_UDP_PORT);
	uroce_put_be16(p + 24, (uint16_t)(len - UROCE_IPV4_LEN));
	p[28] = UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_SEND_ONLY);
	p[29] = 0x40;           /* MigReq */
	uroce_put_be16(p + 30, UROCE_DEFAULT_PKEY);
	uroce_put_be24(p + 33, 0x11);
	uroce_put_be24(p + 37, 0x123456);
	for (i = 0; i < paylen; i++)
		p[40 + i] = (uint8_t)(i * 7 + 1);
	uroce_icrc_fill(p, len - UROCE_ICRC_LEN, UROCE_IP_V4);
}

int
main(int argc, char **argv)
{
	static const uint32_t sizes[] = {64, 124, 256, 1024, 4096};
	static const struct {
		enum kind k;
		const char *name;
	} rows[] = {
		{K_ICRC, "icrc (packet)"},
		{K_ICRC_XMM, "icrc (packet), 128-bit"},
		{K_ICRC_NOCLMUL, "icrc (packet), no clmul"},
		{K_ICRC_PAY, "icrc+hdrs (payload)"},
		{K_CLMUL, "clmul (uroce, crc_clmul.c)"},
		{K_COPY_FUSED, "copy+crc, one pass"},
		{K_COPY_THEN, "crc, then memcpy"},
#ifdef UROCE_HAVE_ISAL
		{K_ISAL, "isal crc32_gzip_refl"},
#endif
		{K_SLICE8, "slice8 (uroce fallback)"},
#ifdef UROCE_HAVE_ZLIB
		{K_ZLIB, "zlib crc32"},
#endif
		{K_BYTEWISE, "bytewise table"},
	};
	double target = 0.2, gbs[12], nsc[12];
	uint8_t *buf;
	size_t s, r;
	int bad = 0;

	if (argc == 3 && strcmp(argv[1], "--time") == 0) {
		target = atof(argv[2]);
	} else if (argc != 1) {
		fprintf(stderr, "usage: %s [--time SECONDS]\n", argv[0]);
		return 2;
	}
	if (!(target > 0 && target < 60))
		target = 0.2;
	byte_tab_init();
	buf = aligned_alloc(64, 4096 + 64);
	if (buf == NULL)
		return 1;

	printf("ICRC / CRC-32 throughput, one core, %.2f s per row (best of %d); "
	       "uroce_crc32 = %s\n", target, REPEATS, uroce_crc32_impl());
	printf("icrc (packet):       uroce_icrc_compute(), IPv4 RoCEv2 packet of SIZE bytes "
	       "(IP header through ICRC)\n");
	printf("icrc+hdrs (payload): uroce_icrc_compute(), RC SEND ONLY with SIZE payload bytes "
	       "(+%d B of headers and ICRC, not counted in GB/s)\n", PAY_OVERHEAD);
	printf("copy rows:           CRC-32 of a SIZE-byte buffer copied to another "
	       "(uroce_crc32_copy(), or uroce_crc32() then memcpy())\n");
	printf("other rows:          plain CRC-32 over a SIZE-byte buffer\n\n");
	printf("%-6s %-26s %10s %10s %10s\n", "SIZE", "IMPLEMENTATION", "GB/s", "ns/call",
	       "x bytewise");
	for (s = 0; s < UROCE_ARRAY_SIZE(sizes); s++) {
		uint32_t len = sizes[s], ref;

		make_packet(buf, len);
		/* The implementations must agree before any is timed. */
		ref = crc_bytewise(0, buf, len);
		for (r = 0; r < UROCE_ARRAY_SIZE(rows); r++) {
			if (rows[r].k == K_ICRC || rows[r].k == K_ICRC_XMM ||
			    rows[r].k == K_ICRC_NOCLMUL ||
			    rows[r].k == K_ICRC_PAY)
				continue;
			if (run_one(rows[r].k, buf, len) != ref) {
				fprintf(stderr, "MISMATCH: %s gives 0x%08x, bytewise 0x%08x\n",
					rows[r].name, run_one(rows[r].k, buf, len), ref);
				bad = 1;
			}
		}
		if (!uroce_icrc_check(buf, len - UROCE_ICRC_LEN, UROCE_IP_V4)) {
			fprintf(stderr, "MISMATCH: ICRC of the %u-byte packet\n", len);
			bad = 1;
		}
		for (r = 0; r < UROCE_ARRAY_SIZE(rows); r++) {
			make_packet(buf, rows[r].k == K_ICRC_PAY ? len + PAY_OVERHEAD : len);
			gbs[r] = measure(rows[r].k, buf, len, target, &nsc[r]);
		}
		/* The last row is the bytewise baseline. */
		for (r = 0; r < UROCE_ARRAY_SIZE(rows); r++)
			printf("%-6u %-26s %10.2f %10.1f %9.1fx\n", len, rows[r].name, gbs[r],
			       nsc[r], gbs[r] / gbs[UROCE_ARRAY_SIZE(rows) - 1]);
		printf("\n");
	}
	free(buf);
	return bad;
}
