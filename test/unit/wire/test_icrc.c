/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * CRC-32 and the RoCEv2 ICRC (lib/wire/icrc.c).
 *
 * The ICRC is checked against packets uroce did not make: every RoCEv2 frame
 * of the golden Linux rxe captures over IPv4 (test/vectors/rxe/) and IPv6
 * (test/vectors/rxe-ipv6/), and the frames built by scapy's RoCE layer plus
 * one captured from a ConnectX-4 Lx NIC (test/vectors/scapy/); see
 * test/vectors/README.md. The CRC-32 is checked against the
 * published check values and a bit-at-a-time reference written here, and
 * ISA-L and the slice-by-8 fallback are checked against each other.
 *
 * The vector files are read with the small classic-pcap reader of
 * test/common/pcap_rd.h (plain stdio), so this test needs neither libpcap
 * nor the parser of lib/wire.
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "pcap_rd.h"
#include "uroce_wire.h"
#include "wire_internal.h"

#ifndef UROCE_VECTORS_DIR
#error "UROCE_VECTORS_DIR must name test/vectors"
#endif

#define FRAME_MAX 16384

/*
 * Assert in loops that run thousands of times. Criterion's cr_assert records
 * every passing assertion too (the suite runs with --full-stats), which made
 * this file take 20 s; CHECK only calls into Criterion when it fails.
 */
#define CHECK(cond, ...) \
	do { \
		if (!(cond)) \
			cr_assert_fail(__VA_ARGS__); \
	} while (0)

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

/* Bit-at-a-time CRC-32, zlib contract: the reference everything is checked against. */
static uint32_t
ref_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
	int k;

	crc = ~crc;
	while (n-- > 0) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

/* xorshift64*: deterministic test data */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static void
fill_random(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(rng() >> 56);
}

/* The vectors through test/common/pcap_rd.h, failing the test on a bad file. */
static void
pcap_open(struct pcap_rd *r, const char *path)
{
	int rc = pcap_rd_open(r, path);

	cr_assert_eq(rc, 0, "open %s: %s", path, strerror(-rc));
	cr_assert_eq(r->linktype, 1, "%s: link type %u, expected Ethernet", path, r->linktype);
}

/* Next record into @p buf; false at the end of the file. */
static bool
pcap_next(struct pcap_rd *r, uint8_t *buf, uint32_t *len)
{
	int rc = pcap_rd_next(r, buf, FRAME_MAX, len);

	CHECK(rc >= 0, "bad pcap record (%s): vectors must be whole", strerror(-rc));
	return rc == 1;
}

/*
 * Where the ICRC-covered part of a RoCEv2 frame is, found by this test's own
 * walk over Ethernet, 802.1Q, IPv4/IPv6 and UDP (independent of lib/wire's
 * parser). Lengths come from the IP header, so Ethernet padding is ignored.
 */
struct roce_loc {
	enum uroce_ip_family fam;
	uint32_t l3_off;        /* IP header */
	uint32_t l3_len;        /* IP header up to the ICRC */
	uint32_t ip_hlen;
};

static bool
locate_roce(const uint8_t *b, uint32_t len, struct roce_loc *loc)
{
	uint32_t off = 12, tot, udp;
	uint16_t type;

	if (len < 14)
		return false;
	type = uroce_get_be16(b + off);
	while ((type == 0x8100 || type == 0x88A8) && off + 6 <= len) {
		off += 4;
		type = uroce_get_be16(b + off);
	}
	off += 2;
	loc->l3_off = off;
	if (type == 0x0800 && off + 20 <= len && (b[off] >> 4) == 4) {
		loc->fam = UROCE_IP_V4;
		loc->ip_hlen = (b[off] & 0xF) * 4u;
		tot = uroce_get_be16(b + off + 2);
		if (b[off + 9] != 17 || tot > len - off)
			return false;
	} else if (type == 0x86DD && off + 40 <= len) {
		loc->fam = UROCE_IP_V6;
		loc->ip_hlen = 40;
		tot = 40u + uroce_get_be16(b + off + 4);
		if (b[off + 6] != 17 || tot > len - off)
			return false;
	} else {
		return false;
	}
	udp = off + loc->ip_hlen;
	if (tot < loc->ip_hlen + 8 + 12 + 4 || uroce_get_be16(b + udp + 2) != UROCE_UDP_PORT)
		return false;
	loc->l3_len = tot - 4;
	return true;
}

/* Copy of the covered part plus the ICRC into a buffer of exactly that size,
 * so that ASan sees any read past the end. */
static uint8_t *
exact_copy(const uint8_t *frame, const struct roce_loc *loc)
{
	uint8_t *p = malloc(loc->l3_len + UROCE_ICRC_LEN);

	cr_assert_not_null(p);
	memcpy(p, frame + loc->l3_off, loc->l3_len + UROCE_ICRC_LEN);
	return p;
}

/*
 * Bits of byte @p i (offset from the IP header) that the ICRC ignores, by the
 * rule of IBA A17.4.1, written out independently of icrc.c.
 */
static uint8_t
masked_bits(enum uroce_ip_family fam, uint32_t ip_hlen, uint32_t i)
{
	uint32_t udp = ip_hlen, bth = ip_hlen + 8;

	if (fam == UROCE_IP_V4 && (i == 1 || i == 8 || i == 10 || i == 11))
		return 0xFF;            /* TOS, TTL, header checksum */
	if (fam == UROCE_IP_V6) {
		if (i == 0)
			return 0x0F;    /* traffic class, high nibble */
		if (i >= 1 && i <= 3)
			return 0xFF;    /* traffic class, flow label */
		if (i == 7)
			return 0xFF;    /* hop limit */
	}
	if (i == udp + 6 || i == udp + 7)
		return 0xFF;            /* UDP checksum */
	if (i == bth + 4)
		return 0xFF;            /* FECN, BECN, reserved */
	return 0;
}

/* ICRC by the definition, with the reference CRC over a fully masked copy. */
static uint32_t
ref_icrc(const uint8_t *l3, const struct roce_loc *loc)
{
	uint8_t *ps = malloc(8 + loc->l3_len);
	uint32_t i, crc;

	cr_assert_not_null(ps);
	memset(ps, 0xFF, 8);
	for (i = 0; i < loc->l3_len; i++)
		ps[8 + i] = l3[i] | masked_bits(loc->fam, loc->ip_hlen, i);
	crc = ref_crc32(0, ps, 8 + loc->l3_len);
	free(ps);
	return crc;
}

/*
 * Run @p body with each ICRC code this CPU has (lib/wire/crc_clmul.c: 512-bit
 * folds, 128-bit folds, and the tables or ISA-L): all must give the same ICRCs.
 */
static void
each_crc_path(void (*body)(void))
{
	int top = wire_crc_level(), l;

	for (l = top; l >= WIRE_CRC_TABLE; l--) {
		wire_crc_level_set(l);
		body();
	}
	wire_crc_level_set(top);
}

/* ------------------------------------------------------------------------ */
/* CRC-32                                                                    */
/* ------------------------------------------------------------------------ */

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

static uint32_t
ref_crc32_v(uint32_t crc, const void *p, size_t n)
{
	return ref_crc32(crc, p, n);
}

static const struct {
	const char *name;
	crc_fn fn;
} impls[] = {
	{"uroce_crc32", uroce_crc32},
	{"slice8", wire_crc32_slice8},
	{"clmul", wire_crc32_clmul},
	{"reference", ref_crc32_v},
};

Test(crc32, check_values)
{
	static const struct {
		const char *s;
		uint32_t crc;
	} kv[] = {
		{"", 0x00000000u},
		{"a", 0xE8B7BE43u},
		{"123456789", 0xCBF43926u}, /* the CRC-32 check value */
		{"The quick brown fox jumps over the lazy dog", 0x414FA339u},
	};
	uint8_t zeros[32] = {0};
	size_t i, k;

	for (k = 0; k < UROCE_ARRAY_SIZE(impls); k++) {
		for (i = 0; i < UROCE_ARRAY_SIZE(kv); i++)
			cr_expect_eq(impls[k].fn(0, kv[i].s, strlen(kv[i].s)), kv[i].crc,
				     "%s(\"%s\") = 0x%08x, want 0x%08x", impls[k].name, kv[i].s,
				     impls[k].fn(0, kv[i].s, strlen(kv[i].s)), kv[i].crc);
		/* Expect: 32 zero bytes give 0x190A55AD (the iSCSI/RFC 3720 style vector for
		 * this polynomial). */
		cr_expect_eq(impls[k].fn(0, zeros, sizeof(zeros)), 0x190A55ADu, "%s zeros",
			     impls[k].name);
	}
}

Test(crc32, impl_name)
{
	const char *n = uroce_crc32_impl();

	cr_assert_not_null(n);
	cr_assert(strcmp(n, "isal") == 0 || strcmp(n, "clmul") == 0 || strcmp(n, "slice8") == 0,
		  "impl \"%s\"", n);
}

/* Expect: ISA-L (if used), slice-by-8, the carry-less CRC and the reference agree on every length
 * 0..9000 at every alignment, and chain from the same seeds. */
Test(crc32, impls_agree_on_lengths)
{
	enum { N = 9000 };
	uint8_t *buf = malloc(N + 8);
	uint32_t a, b, c, r, seed;
	size_t len, off;

	cr_assert_not_null(buf);
	fill_random(buf, N + 8);
	for (len = 0; len <= N; len++) {
		off = len & 7;
		a = uroce_crc32(0, buf + off, len);
		b = wire_crc32_slice8(0, buf + off, len);
		c = wire_crc32_clmul(0, buf + off, len);
		CHECK(a == b, "len %zu off %zu: uroce_crc32 0x%08x slice8 0x%08x", len, off, a, b);
		CHECK(c == b, "len %zu off %zu: clmul 0x%08x slice8 0x%08x", len, off, c, b);
		/* The bit-at-a-time reference on all short lengths and a sample of long ones. */
		if (len <= 1100 || len % 97 == 0) {
			r = ref_crc32(0, buf + off, len);
			CHECK(a == r, "len %zu: 0x%08x, reference 0x%08x", len, a, r);
		}
		/* Any seed: the seed is a previous CRC, inverted inside like zlib. */
		if (len % 13 == 0) {
			seed = (uint32_t)rng();
			a = uroce_crc32(seed, buf + off, len);
			b = wire_crc32_slice8(seed, buf + off, len);
			c = wire_crc32_clmul(seed, buf + off, len);
			r = ref_crc32(seed, buf + off, len);
			CHECK(a == b && b == r && c == r, "seed 0x%08x len %zu: %08x %08x %08x %08x",
			      seed, len, a, b, c, r);
		}
	}
	free(buf);
}

/*
 * uroce_crc32_copy() at every length to 9000, at every CRC level, from and
 * to offsets that are not multiples of 64, with random seeds: the CRC is
 * the reference's, the bytes are copied, and not one byte around the
 * destination is touched.
 */
static void
crc32_copy_every_length(void)
{
	enum { N = 9000, GUARD = 80 };
	uint8_t *src = malloc(N + 64), *dst = malloc(N + 64 + 2 * GUARD);
	size_t len, so, dof, i;
	uint32_t seed, a, r;

	cr_assert_not_null(src);
	cr_assert_not_null(dst);
	fill_random(src, N + 64);
	for (len = 0; len <= N; len++) {
		so = (len * 7) % 64;
		dof = GUARD + (len * 13) % 64;
		seed = len % 3 == 0 ? 0 : (uint32_t)rng();
		memset(dst, 0xA5, N + 64 + 2 * GUARD);
		a = uroce_crc32_copy(seed, dst + dof, src + so, len);
		r = len <= 1100 || len % 97 == 0 ? ref_crc32(seed, src + so, len) :
						    wire_crc32_slice8(seed, src + so, len);
		CHECK(a == r, "level %d len %zu seed %08x: 0x%08x, reference 0x%08x",
		      wire_crc_level(), len, seed, a, r);
		CHECK(memcmp(dst + dof, src + so, len) == 0, "len %zu: bytes not copied", len);
		for (i = 0; i < dof; i++)
			CHECK(dst[i] == 0xA5, "len %zu: byte %zu before the copy written", len, i);
		for (i = dof + len; i < N + 64 + 2 * GUARD; i++)
			CHECK(dst[i] == 0xA5, "len %zu: byte %zu after the copy written", len, i);
	}
	free(src);
	free(dst);
}

Test(crc32, copy_every_length)
{
	each_crc_path(crc32_copy_every_length);
}

/* Expect: CRC(a||b) == CRC(CRC(a), b) at every split point of a 9000-byte
 * buffer, for each implementation and when the two halves use different ones. */
Test(crc32, chaining_every_split)
{
	enum { N = 9000 };
	uint8_t *buf = malloc(N);
	uint32_t whole, c;
	size_t s;

	cr_assert_not_null(buf);
	fill_random(buf, N);
	whole = ref_crc32(0, buf, N);
	cr_assert_eq(uroce_crc32(0, buf, N), whole);
	for (s = 0; s <= N; s++) {
		c = uroce_crc32(uroce_crc32(0, buf, s), buf + s, N - s);
		CHECK(c == whole, "uroce_crc32 split at %zu", s);
		c = wire_crc32_slice8(wire_crc32_slice8(0, buf, s), buf + s, N - s);
		CHECK(c == whole, "slice8 split at %zu", s);
		c = wire_crc32_slice8(uroce_crc32(0, buf, s), buf + s, N - s);
		CHECK(c == whole, "uroce_crc32 then slice8 split at %zu", s);
	}
	free(buf);
}

/* ------------------------------------------------------------------------ */
/* ICRC against the golden rxe captures                                      */
/* ------------------------------------------------------------------------ */

/* RoCEv2 frames per file, counted with tshark -Y udp.dstport==4791. */
static const struct {
	const char *file;
	unsigned int roce;
} rxe_pcaps[] = {
	{"hostpeer-vmclient-write-s4096-python-acks.pcap", 500},
	{"rxe-atomic-cs.pcap", 200},
	{"rxe-atomic.pcap", 200},
	{"rxe-qperf-cm-trimmed.pcap", 322},
	{"rxe-read-s4096.pcap", 500},
	{"rxe-read-s64.pcap", 200},
	{"rxe-read-s8192-mtu4096.pcap", 150},
	{"rxe-send-s4096.pcap", 500},
	{"rxe-send-s64.pcap", 200},
	{"rxe-write-lat-s64.pcap", 404},
	{"rxe-write-s4096.pcap", 500},
	{"rxe-write-s64.pcap", 200},
	{"rxe-write-s8192-mtu4096.pcap", 150},
};

/* Expect: every RoCEv2 frame Linux rxe sent verifies, uroce_icrc_compute()
 * equals the 4 bytes rxe put on the wire (read little-endian) and the
 * definition-level reference, and uroce_icrc_fill() writes the same bytes. */
static void
rxe_golden_pcaps(void)
{
	static uint8_t frame[FRAME_MAX];
	unsigned int total = 0;
	size_t i;

	for (i = 0; i < UROCE_ARRAY_SIZE(rxe_pcaps); i++) {
		const char *fn = rxe_pcaps[i].file;
		char path[512];
		struct pcap_rd r;
		struct roce_loc loc;
		unsigned int n = 0;
		uint32_t len, crc, wire;
		uint8_t *l3;

		snprintf(path, sizeof(path), "%s/rxe/%s", UROCE_VECTORS_DIR, rxe_pcaps[i].file);
		pcap_open(&r, path);
		while (pcap_next(&r, frame, &len)) {
			if (!locate_roce(frame, len, &loc))
				continue;
			n++;
			l3 = exact_copy(frame, &loc);
			wire = pcap_rd_le32(l3 + loc.l3_len);
			crc = uroce_icrc_compute(l3, loc.l3_len, loc.fam);
			CHECK(crc == wire, "%s RoCE frame %u: computed 0x%08x, wire 0x%08x", fn, n,
			      crc, wire);
			CHECK(uroce_icrc_check(l3, loc.l3_len, loc.fam), "%s frame %u: check", fn,
			      n);
			CHECK(ref_icrc(l3, &loc) == wire, "%s frame %u: reference", fn, n);
			memset(l3 + loc.l3_len, 0, 4);
			CHECK(!uroce_icrc_check(l3, loc.l3_len, loc.fam),
			      "%s frame %u: zeroed ICRC", fn, n);
			uroce_icrc_fill(l3, loc.l3_len, loc.fam);
			CHECK(memcmp(l3 + loc.l3_len, frame + loc.l3_off + loc.l3_len, 4) == 0,
			      "%s frame %u: fill", fn, n);
			free(l3);
		}
		fclose(r.f);
		cr_assert_eq(n, rxe_pcaps[i].roce, "%s: %u RoCEv2 frames, expected %u",
			     rxe_pcaps[i].file, n, rxe_pcaps[i].roce);
		total += n;
	}
	cr_assert_eq(total, 4026u);
}

Test(icrc, rxe_golden_pcaps)
{
	each_crc_path(rxe_golden_pcaps);
}

/*
 * Linux rxe over IPv6 (link-local GIDs, perftest -x 0), with traffic class 0
 * and 185 (DSCP 46, ECN 1): see test/vectors/README.md for how they were made.
 * Expect: every RoCEv2 frame verifies, byte for byte, against rxe's ICRC.
 */
static void
rxe_ipv6_pcaps(void)
{
	static const struct {
		const char *file;
		unsigned int roce;
	} v6[] = {
		{"rxe-ipv6-tclass0.pcap", 40},
		{"rxe-ipv6-tclass185-a.pcap", 30},
		{"rxe-ipv6-tclass185-b.pcap", 70},
	};
	static uint8_t frame[FRAME_MAX];
	unsigned int tclass_set = 0;
	size_t i;

	for (i = 0; i < UROCE_ARRAY_SIZE(v6); i++) {
		char path[512];
		struct pcap_rd r;
		struct roce_loc loc;
		unsigned int n = 0;
		uint32_t len, crc, wire;
		uint8_t *l3;

		snprintf(path, sizeof(path), "%s/rxe-ipv6/%s", UROCE_VECTORS_DIR, v6[i].file);
		pcap_open(&r, path);
		while (pcap_next(&r, frame, &len)) {
			if (!locate_roce(frame, len, &loc))
				continue;
			n++;
			CHECK(loc.fam == UROCE_IP_V6, "%s frame %u: not IPv6", v6[i].file, n);
			l3 = exact_copy(frame, &loc);
			wire = pcap_rd_le32(l3 + loc.l3_len);
			crc = uroce_icrc_compute(l3, loc.l3_len, loc.fam);
			CHECK(crc == wire, "%s RoCE frame %u: computed 0x%08x, wire 0x%08x",
			      v6[i].file, n, crc, wire);
			CHECK(uroce_icrc_check(l3, loc.l3_len, loc.fam), "%s frame %u: check",
			      v6[i].file, n);
			CHECK(ref_icrc(l3, &loc) == wire, "%s frame %u: reference", v6[i].file, n);
			if (((uroce_get_be16(l3) >> 4) & 0xFF) != 0)
				tclass_set++;
			free(l3);
		}
		fclose(r.f);
		cr_assert_eq(n, v6[i].roce, "%s: %u RoCEv2 frames, expected %u", v6[i].file, n,
			     v6[i].roce);
	}
	/* Expect: the masked traffic class really was non-zero on the wire. */
	cr_assert_eq(tclass_set, 100u);
}

Test(icrc, rxe_ipv6_pcaps)
{
	each_crc_path(rxe_ipv6_pcaps);
}

/* Expect: any further capture dropped into test/vectors/rxe verifies too. */
Test(icrc, rxe_dir_all_files)
{
	static uint8_t frame[FRAME_MAX];
	char dir[512], path[1024];
	struct dirent *de;
	unsigned int files = 0, frames = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/rxe", UROCE_VECTORS_DIR);
	d = opendir(dir);
	cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		size_t nl = strlen(de->d_name);
		struct pcap_rd r;
		struct roce_loc loc;
		uint32_t len;

		if (nl < 5 || strcmp(de->d_name + nl - 5, ".pcap") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		pcap_open(&r, path);
		files++;
		while (pcap_next(&r, frame, &len)) {
			if (!locate_roce(frame, len, &loc))
				continue;
			frames++;
			CHECK(uroce_icrc_check(frame + loc.l3_off, loc.l3_len, loc.fam),
			      "%s: bad ICRC on RoCE frame %u", de->d_name, frames);
		}
		fclose(r.f);
	}
	closedir(d);
	cr_assert_geq(files, UROCE_ARRAY_SIZE(rxe_pcaps));
	cr_assert_geq(frames, 4026u);
}

/* ------------------------------------------------------------------------ */
/* ICRC against scapy's RoCE layer                                           */
/* ------------------------------------------------------------------------ */

struct scapy_vec {
	int family;
	uint32_t crc;
	char name[64];
};

static unsigned int
scapy_read_txt(struct scapy_vec *v, unsigned int cap)
{
	char path[512], line[256];
	unsigned int n = 0, idx;
	FILE *f;

	snprintf(path, sizeof(path), "%s/scapy/roce-scapy.txt", UROCE_VECTORS_DIR);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		if (line[0] == '#')
			continue;
		CHECK(n < cap, "more than %u vectors", cap);
		CHECK(sscanf(line, "%u %d %x %63s", &idx, &v[n].family, &v[n].crc, v[n].name) == 4,
		      "bad line: %s", line);
		CHECK(idx == n, "line %u has index %u", n, idx);
		n++;
	}
	fclose(f);
	return n;
}

/* Expect: uroce accepts every scapy-built frame (and the ConnectX-4 Lx CNP),
 * and computes exactly scapy's ICRC, over IPv4, IPv4 with options, IPv6 and
 * 802.1Q. */
Test(icrc, scapy_vectors)
{
	static uint8_t frame[FRAME_MAX];
	static struct scapy_vec v[256];
	unsigned int nv, n = 0, v4 = 0, v6 = 0, opts = 0;
	char path[512];
	struct pcap_rd r;
	struct roce_loc loc;
	uint32_t len, crc;
	uint8_t *l3;

	nv = scapy_read_txt(v, UROCE_ARRAY_SIZE(v));
	cr_assert_geq(nv, 50u, "only %u scapy vectors", nv);
	snprintf(path, sizeof(path), "%s/scapy/roce-scapy.pcap", UROCE_VECTORS_DIR);
	pcap_open(&r, path);
	while (pcap_next(&r, frame, &len)) {
		cr_assert_lt(n, nv, "more frames than lines in roce-scapy.txt");
		cr_assert(locate_roce(frame, len, &loc), "%s: not RoCEv2", v[n].name);
		cr_assert_eq((int)loc.fam, v[n].family, "%s: family", v[n].name);
		l3 = exact_copy(frame, &loc);
		crc = uroce_icrc_compute(l3, loc.l3_len, loc.fam);
		cr_assert_eq(crc, v[n].crc, "%s: uroce 0x%08x, scapy 0x%08x", v[n].name, crc,
			     v[n].crc);
		cr_assert(uroce_icrc_check(l3, loc.l3_len, loc.fam), "%s: check", v[n].name);
		cr_assert_eq(ref_icrc(l3, &loc), crc, "%s: reference", v[n].name);
		if (loc.fam == UROCE_IP_V4)
			v4++;
		else
			v6++;
		if (loc.fam == UROCE_IP_V4 && loc.ip_hlen > UROCE_IPV4_LEN)
			opts++;
		free(l3);
		n++;
	}
	fclose(r.f);
	cr_assert_eq(n, nv, "%u frames, %u lines", n, nv);
	cr_assert_gt(v4, 0);
	cr_assert_gt(v6, 0);
	cr_assert_geq(opts, 3u, "IPv4-with-options vectors");
}

/* Find a scapy vector by name and copy it out. */
static uint32_t
scapy_frame(const char *name, uint8_t *frame)
{
	static struct scapy_vec v[256];
	unsigned int nv, i, n = 0;
	char path[512];
	struct pcap_rd r;
	uint32_t len = 0;

	nv = scapy_read_txt(v, UROCE_ARRAY_SIZE(v));
	for (i = 0; i < nv; i++)
		if (strcmp(v[i].name, name) == 0)
			break;
	cr_assert_lt(i, nv, "no scapy vector %s", name);
	snprintf(path, sizeof(path), "%s/scapy/roce-scapy.pcap", UROCE_VECTORS_DIR);
	pcap_open(&r, path);
	while (n <= i && pcap_next(&r, frame, &len))
		n++;
	fclose(r.f);
	cr_assert_eq(n, i + 1);
	return len;
}

/* First RoCEv2 frame whose opcode is @p opcode in capture @p file (under test/vectors). */
static uint32_t
rxe_frame(const char *file, uint8_t opcode, uint8_t *frame)
{
	char path[512];
	struct pcap_rd r;
	struct roce_loc loc;
	uint32_t len;

	snprintf(path, sizeof(path), "%s/%s", UROCE_VECTORS_DIR, file);
	pcap_open(&r, path);
	while (pcap_next(&r, frame, &len)) {
		if (locate_roce(frame, len, &loc) &&
		    frame[loc.l3_off + loc.ip_hlen + 8] == opcode) {
			fclose(r.f);
			return len;
		}
	}
	fclose(r.f);
	cr_assert_fail("%s: no opcode 0x%02x", file, opcode);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Which bits the ICRC covers                                                */
/* ------------------------------------------------------------------------ */

/*
 * Flip every bit of every byte of the frame, one at a time.
 * Expect: a flip in a masked field (IPv4 TOS/TTL/checksum, IPv6 traffic
 * class/flow label/hop limit, UDP checksum, BTH byte 4) or in the Ethernet
 * header is NOT detected; a flip anywhere else from the IP header through
 * the ICRC itself is.
 */
static void
flip_every_bit(const char *what, const uint8_t *frame, uint32_t len)
{
	struct roce_loc loc;
	uint8_t *f = malloc(len);
	uint32_t i, covered = 0, ignored = 0;
	int bit;

	cr_assert_not_null(f);
	memcpy(f, frame, len);
	cr_assert(locate_roce(f, len, &loc), "%s: not RoCEv2", what);
	cr_assert(uroce_icrc_check(f + loc.l3_off, loc.l3_len, loc.fam), "%s: bad ICRC", what);
	for (i = 0; i < loc.l3_off + loc.l3_len + UROCE_ICRC_LEN; i++) {
		uint8_t m = i >= loc.l3_off ? masked_bits(loc.fam, loc.ip_hlen, i - loc.l3_off) :
					      0xFF;

		for (bit = 0; bit < 8; bit++) {
			bool ok;

			f[i] ^= (uint8_t)(1u << bit);
			ok = uroce_icrc_check(f + loc.l3_off, loc.l3_len, loc.fam);
			f[i] ^= (uint8_t)(1u << bit);
			if (m & (1u << bit)) {
				CHECK(ok, "%s: flip of masked byte %u bit %d changed the ICRC",
				      what, i, bit);
				ignored++;
			} else {
				CHECK(!ok, "%s: flip of byte %u bit %d not detected", what, i, bit);
				covered++;
			}
		}
	}
	cr_assert_gt(covered, 8 * (loc.l3_len - 8));
	cr_assert_gt(ignored, 0u);
	free(f);
}

Test(icrc, bitflip_rxe_ipv4)
{
	static uint8_t frame[FRAME_MAX];
	uint32_t len;

	/* RDMA WRITE ONLY with 64 B payload, READ REQUEST, READ RESPONSE ONLY,
	 * CMP&SWP, ACK: every IPv4 header field and most extension headers. */
	len = rxe_frame("rxe/rxe-write-s64.pcap", 0x0A, frame);
	flip_every_bit("rxe write only", frame, len);
	len = rxe_frame("rxe/rxe-read-s64.pcap", 0x0C, frame);
	flip_every_bit("rxe read request", frame, len);
	len = rxe_frame("rxe/rxe-read-s64.pcap", 0x10, frame);
	flip_every_bit("rxe read response only", frame, len);
	len = rxe_frame("rxe/rxe-atomic-cs.pcap", 0x13, frame);
	flip_every_bit("rxe compare&swap", frame, len);
	len = rxe_frame("rxe/rxe-atomic-cs.pcap", 0x12, frame);
	flip_every_bit("rxe atomic ack", frame, len);
	len = rxe_frame("rxe/rxe-write-s64.pcap", 0x11, frame);
	flip_every_bit("rxe ack", frame, len);
}

Test(icrc, bitflip_rxe_ipv6)
{
	static uint8_t frame[FRAME_MAX];
	uint32_t len;

	/* IPv6 with traffic class 185: RDMA WRITE FIRST (RETH + 1 KiB), READ
	 * RESPONSE LAST, FETCH&ADD, ATOMIC ACK. */
	len = rxe_frame("rxe-ipv6/rxe-ipv6-tclass185-b.pcap", 0x06, frame);
	flip_every_bit("rxe ipv6 write first", frame, len);
	len = rxe_frame("rxe-ipv6/rxe-ipv6-tclass185-b.pcap", 0x0F, frame);
	flip_every_bit("rxe ipv6 read response last", frame, len);
	len = rxe_frame("rxe-ipv6/rxe-ipv6-tclass185-b.pcap", 0x14, frame);
	flip_every_bit("rxe ipv6 fetch&add", frame, len);
	len = rxe_frame("rxe-ipv6/rxe-ipv6-tclass185-b.pcap", 0x12, frame);
	flip_every_bit("rxe ipv6 atomic ack", frame, len);
}

Test(icrc, bitflip_ipv6_vlan_options)
{
	static uint8_t frame[FRAME_MAX];
	static const char *const names[] = {
		"v6-rc-send-only-255", "v6-rc-read-request", "v6-tc-fl-hlim-set",
		"v6-vlan-rc-send-only-100", "v6-cnp", "rc-send-only-ipopt-rr",
		"rc-send-only-ipopt-max", "vlan-rc-write-only-128", "hw-cx4lx-cnp",
	};
	size_t i;

	for (i = 0; i < UROCE_ARRAY_SIZE(names); i++)
		flip_every_bit(names[i], frame, scapy_frame(names[i], frame));
}

/* Expect: arbitrary values in every masked field at once leave the ICRC as
 * it was (a router rewriting TTL, DSCP/ECN, flow label and checksums, a
 * switch setting FECN/BECN). */
static void
masked_fields_any_value(void)
{
	static uint8_t frame[FRAME_MAX];
	static const char *const names[] = {"rc-send-only-256", "v6-rc-send-only-1024",
					    "rc-send-only-ipopt-ra", "hw-cx4lx-cnp"};
	struct roce_loc loc;
	uint32_t len, i, want;
	size_t k;
	int round;

	for (k = 0; k < UROCE_ARRAY_SIZE(names); k++) {
		len = scapy_frame(names[k], frame);
		cr_assert(locate_roce(frame, len, &loc));
		want = uroce_icrc_compute(frame + loc.l3_off, loc.l3_len, loc.fam);
		for (round = 0; round < 64; round++) {
			for (i = 0; i < loc.l3_len; i++) {
				uint8_t m = masked_bits(loc.fam, loc.ip_hlen, i);

				frame[loc.l3_off + i] = (uint8_t)((frame[loc.l3_off + i] & ~m) |
								  ((uint8_t)rng() & m));
			}
			cr_assert_eq(uroce_icrc_compute(frame + loc.l3_off, loc.l3_len, loc.fam),
				     want, "%s round %d", names[k], round);
		}
	}
}

Test(icrc, masked_fields_any_value)
{
	each_crc_path(masked_fields_any_value);
}

/*
 * Expect: the ICRC of a packet of every length, IPv4 and IPv6, is the
 * reference, whether icrc.c hashes it in one pass (small packets, copied
 * behind the masked headers) or in pieces; and uroce_icrc_compute2(), with
 * the payload split at any point into a separate tail and 0 to 3 zero pad
 * bytes, gives the ICRC of the same packet laid out in one buffer.
 */
static void
every_length_and_split(void)
{
	static uint8_t frame[FRAME_MAX], flat[FRAME_MAX], tail[FRAME_MAX];
	static const char *const names[] = {"rc-write-first-4096", "v6-rc-send-only-1024"};
	const uint32_t bth = UROCE_UDP_LEN + UROCE_BTH_LEN;
	struct roce_loc loc, cut;
	uint32_t len, hdrs, n, k, z, want;
	size_t f;
	uint8_t *l3;

	for (f = 0; f < UROCE_ARRAY_SIZE(names); f++) {
		len = scapy_frame(names[f], frame);
		cr_assert(locate_roce(frame, len, &loc));
		l3 = frame + loc.l3_off;
		hdrs = loc.ip_hlen + bth;
		for (n = 0; n <= 600 && hdrs + n <= loc.l3_len; n++) {
			cut = loc;
			cut.l3_len = hdrs + n;
			want = ref_icrc(l3, &cut);
			CHECK(uroce_icrc_compute(l3, cut.l3_len, cut.fam) == want,
			      "%s cut to %u payload bytes", names[f], n);
			/* The receiver's road (a packet not just built) agrees. */
			memcpy(flat, l3, cut.l3_len);
			flat[cut.l3_len] = (uint8_t)want;
			flat[cut.l3_len + 1] = (uint8_t)(want >> 8);
			flat[cut.l3_len + 2] = (uint8_t)(want >> 16);
			flat[cut.l3_len + 3] = (uint8_t)(want >> 24);
			CHECK(uroce_icrc_check(flat, cut.l3_len, cut.fam),
			      "%s cut to %u payload bytes: check", names[f], n);
			for (z = 0; z <= 3; z++) {
				memcpy(flat, l3, cut.l3_len);
				memset(flat + cut.l3_len, 0, z);
				want = uroce_icrc_compute(flat, cut.l3_len + z, cut.fam);
				for (k = 0; k <= n; k += (n < 64 ? 1 : 37)) {
					memcpy(tail, l3 + hdrs + k, n - k);
					CHECK(uroce_icrc_compute2(l3, hdrs + k, tail, n - k, z,
								  cut.fam) == want,
					      "%s: %u bytes split at %u, %u zeros", names[f], n, k, z);
				}
			}
		}
		cr_assert_gt(n, 400, "%s: only %u payload bytes", names[f], n);
	}
}

Test(icrc, every_length_and_split)
{
	each_crc_path(every_length_and_split);
}

/* ------------------------------------------------------------------------ */
/* Fill, byte order, IPv4 options, malformed input                           */
/* ------------------------------------------------------------------------ */

/* Expect: uroce_icrc_fill() writes the CRC least significant byte first, the
 * order rxe and scapy use, and uroce_icrc_check() accepts it. */
Test(icrc, fill_little_endian)
{
	static uint8_t frame[FRAME_MAX];
	struct roce_loc loc;
	uint8_t saved[4];
	uint32_t len, crc;
	uint8_t *l3;

	len = scapy_frame("rc-write-first-4096", frame);
	cr_assert(locate_roce(frame, len, &loc));
	l3 = frame + loc.l3_off;
	memcpy(saved, l3 + loc.l3_len, 4);
	memset(l3 + loc.l3_len, 0xA5, 4);
	cr_assert_not(uroce_icrc_check(l3, loc.l3_len, loc.fam));
	uroce_icrc_fill(l3, loc.l3_len, loc.fam);
	cr_assert_arr_eq(l3 + loc.l3_len, saved, 4);
	crc = uroce_icrc_compute(l3, loc.l3_len, loc.fam);
	cr_assert_eq(l3[loc.l3_len], crc & 0xFF);
	cr_assert_eq(l3[loc.l3_len + 3], crc >> 24);
	cr_assert(uroce_icrc_check(l3, loc.l3_len, loc.fam));
}

/* Expect: with IPv4 options the ICRC covers all IHL words; treating the
 * header as 20 bytes would give another value. */
Test(icrc, ipv4_options_whole_header)
{
	static uint8_t frame[FRAME_MAX];
	struct roce_loc loc;
	uint32_t len;
	uint8_t *l3;

	len = scapy_frame("rc-send-only-ipopt-max", frame);
	cr_assert(locate_roce(frame, len, &loc));
	l3 = frame + loc.l3_off;
	cr_assert_eq(loc.ip_hlen, 60u, "vector has IHL %u", loc.ip_hlen / 4);
	cr_assert(uroce_icrc_check(l3, loc.l3_len, loc.fam));
	cr_assert_eq(uroce_icrc_compute(l3, loc.l3_len, loc.fam), ref_icrc(l3, &loc));
	/* Expect: a change in the last option word is detected. */
	l3[59] ^= 0x01;
	cr_assert_not(uroce_icrc_check(l3, loc.l3_len, loc.fam));
}

/*
 * Expect: a frame too short for IP + UDP + BTH, an IPv4 IHL below 5 or past
 * the end, or an unknown family never verifies, makes compute return 0, and
 * reads nothing outside [l3, l3 + l3_len + 4) (buffers are exact-size heap
 * allocations, so ASan would see it).
 */
Test(icrc, malformed_input)
{
	static uint8_t frame[FRAME_MAX];
	struct roce_loc loc;
	uint32_t len, n;
	uint8_t *p;
	int fam;

	for (fam = 4; fam <= 6; fam += 2) {
		const char *name = fam == 4 ? "rc-ack" : "v6-rc-ack";
		uint32_t need;

		len = scapy_frame(name, frame);
		cr_assert(locate_roce(frame, len, &loc));
		need = loc.ip_hlen + 8 + 12;
		for (n = 0; n < need; n++) {
			p = malloc(n + 4);
			cr_assert_not_null(p);
			memcpy(p, frame + loc.l3_off, n + 4);
			cr_assert_not(uroce_icrc_check(p, n, loc.fam), "%s l3_len %u", name, n);
			cr_assert_eq(uroce_icrc_compute(p, n, loc.fam), 0u);
			free(p);
		}
		/* Exactly the headers and no payload: valid input, defined result. */
		p = malloc(need + 4);
		cr_assert_not_null(p);
		memcpy(p, frame + loc.l3_off, need + 4);
		uroce_icrc_fill(p, need, loc.fam);
		cr_assert(uroce_icrc_check(p, need, loc.fam));
		/* Unknown families. */
		cr_assert_not(uroce_icrc_check(p, need, UROCE_IP_NONE));
		cr_assert_not(uroce_icrc_check(p, need, (enum uroce_ip_family)5));
		free(p);
	}

	/* IPv4 IHL 0..4, and IHL 15 on a frame that has only 20 bytes of IP. */
	len = scapy_frame("rc-send-only-4", frame);
	cr_assert(locate_roce(frame, len, &loc));
	p = malloc(loc.l3_len + 4);
	cr_assert_not_null(p);
	for (n = 0; n < 5; n++) {
		memcpy(p, frame + loc.l3_off, loc.l3_len + 4);
		p[0] = (uint8_t)(0x40 | n);
		cr_assert_not(uroce_icrc_check(p, loc.l3_len, UROCE_IP_V4), "IHL %u", n);
	}
	free(p);
	p = malloc(20 + 8 + 12 + 4 + 20);
	cr_assert_not_null(p);
	memcpy(p, frame + loc.l3_off, 20 + 8 + 12 + 4 + 20);
	p[0] = 0x4F;
	cr_assert_not(uroce_icrc_check(p, 20 + 8 + 12 + 20, UROCE_IP_V4));
	free(p);
}
