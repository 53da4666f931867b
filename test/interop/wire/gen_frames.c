/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Write a classic pcap of every opcode in uroce_opcode_table, built with
 * uroce_hdr_build() + uroce_encap_build() + uroce_icrc_fill(), at the payload
 * lengths 0, 1, 3, 4, 255, 256, 1024 and 4096 where the opcode carries
 * payload (FIRST and MIDDLE only at the full-PMTU ones: 256, 1024, 4096),
 * over IPv4, IPv6 and 802.1Q-tagged IPv4. Next to it, a tab-separated
 * manifest of every field that went into each frame, which
 * test_wire_interop.py compares with what tshark and scapy decode.
 *
 * Usage: gen_frames OUT.pcap OUT.tsv
 * Exit: 0 on success, 1 if a frame could not be built or written.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_wire.h"

#define FRAME_MAX (UROCE_ETH_LEN + UROCE_VLAN_LEN + UROCE_IPV6_LEN + UROCE_UDP_LEN + 64 + 4096 + 8)

static int
put32(FILE *f, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

	return fwrite(b, 1, 4, f) == 4 ? 0 : -1;
}

static int
put16(FILE *f, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};

	return fwrite(b, 1, 2, f) == 2 ? 0 : -1;
}

/* Classic pcap, little-endian, microsecond stamps, Ethernet. */
static int
pcap_header(FILE *f)
{
	if (put32(f, 0xA1B2C3D4u) || put16(f, 2) || put16(f, 4) || put32(f, 0) ||
	    put32(f, 0) || put32(f, 65535) || put32(f, 1))
		return -1;
	return 0;
}

static int
pcap_record(FILE *f, uint32_t sec, const uint8_t *frame, uint32_t len)
{
	if (put32(f, sec) || put32(f, 0) || put32(f, len) || put32(f, len))
		return -1;
	return fwrite(frame, 1, len, f) == len ? 0 : -1;
}

enum encap_kind {
	ENC_V4,
	ENC_V6,
	ENC_V4_VLAN,
	ENC_MAX,
};

static const char *const encap_name[ENC_MAX] = {"ipv4", "ipv6", "ipv4-vlan"};

static void
make_encap(struct uroce_encap *e, enum encap_kind k, uint32_t n)
{
	/* 198.18.0.0/15 (RFC 2544) and 2001:2::/48 (RFC 5180) only. */
	static const uint8_t v4a[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 1};
	static const uint8_t v4b[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2};
	static const uint8_t v6a[16] = {0x20, 0x01, 0, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	static const uint8_t v6b[16] = {0x20, 0x01, 0, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

	memset(e, 0, sizeof(*e));
	memcpy(e->dmac, "\x02\xfc\x00\x00\x00\x02", 6);
	memcpy(e->smac, "\x02\xfc\x00\x00\x00\x01", 6);
	e->family = k == ENC_V6 ? UROCE_IP_V6 : UROCE_IP_V4;
	memcpy(e->sgid, k == ENC_V6 ? v6a : v4a, 16);
	memcpy(e->dgid, k == ENC_V6 ? v6b : v4b, 16);
	e->has_vlan = k == ENC_V4_VLAN;
	e->vlan_tci = (uint16_t)(((n % 8) << 13) | (1 + n % 4094));
	e->tclass = (uint8_t)((n * 4) | (n % 4));     /* DSCP and ECN both vary */
	e->hop_limit = (uint8_t)(n % 3 == 0 ? 0 : 64 + n % 192); /* 0 means 64 */
	e->flow_label = (n * 0x1357u) & 0xFFFFF;
	e->sport = uroce_udp_sport(e->flow_label, 0x11 + n, 0x22 + n);
	e->ip_id = (uint16_t)(n * 31);
}

/* Every field gets a value that changes from frame to frame. */
static void
make_fields(uint8_t opcode, uint32_t n, struct uroce_bth_fields *b, struct uroce_ext_fields *x)
{
	static const uint8_t syndromes[] = {0x1F, 0x00, 0x60, 0x61, 0x62, 0x63, 0x2E, 0x21};
	const struct uroce_opcode_info *oi = uroce_opcode_get(opcode);

	memset(b, 0, sizeof(*b));
	memset(x, 0, sizeof(*x));
	b->opcode = opcode;
	b->se = (n & 1) != 0;
	b->migreq = (n & 2) == 0;
	b->pkey = (n % 5 == 0) ? 0x7FFF : UROCE_DEFAULT_PKEY;
	b->fecn = (n & 4) != 0;
	b->becn = (n & 8) != 0;
	b->dqpn = (0x11u + n * 0x10101u) & UROCE_QPN_MASK;
	b->ackreq = (n & 16) == 0;
	b->psn = (0xFFFFF0u + n * 0x1357u) & UROCE_PSN_MASK; /* crosses the 2^24 wrap */
	x->va = 0x00007F0000000000ull + (uint64_t)n * 0x1008;
	x->rkey = 0x00000241u + n * 0x100;
	x->dma_len = (oi->mask & UROCE_F_ATOMIC_WRITE) ? 8 : 4096u * (1 + n % 7);
	/* FLUSH: GLOBAL at selectivity RANGE or MR (IBA 1.5 A19.4.1). */
	x->feth = uroce_feth_make(UROCE_FLUSH_GLOBAL, (uint8_t)(n & 1));
	/* Responses to atomics and reads carry a plain ACK syndrome. */
	x->syndrome = (oi->mask & (UROCE_F_READ | UROCE_F_ATOMIC)) ? 0x1F :
				syndromes[n % UROCE_ARRAY_SIZE(syndromes)];
	x->msn = (n * 0x10001u) & 0xFFFFFF;
	x->swap_add = 0x1111111111111111ull * (1 + n % 15);
	x->compare = 0x0102030405060708ull + n;
	x->orig = 0xFEDCBA9876543210ull - n;
	x->imm = 0xA0000000u | n;
	x->inv_rkey = 0xB0000000u | n;
	x->qkey = (n & 1) ? UROCE_GSI_QKEY : 0x11111111u;
	x->src_qp = (0x22u + n) & UROCE_QPN_MASK;
	x->xrc_srqn = (0x5A0000u + n * 0x101u) & UROCE_QPN_MASK;
}

static int
paylens_for(const struct uroce_opcode_info *oi, uint32_t *out)
{
	static const uint32_t any[] = {0, 1, 3, 4, 255, 256, 1024, 4096};
	size_t i;
	int n = 0;

	if (!(oi->mask & UROCE_F_PAYLOAD)) {
		out[0] = 0;
		return 1;
	}
	/* IBA 1.5 A19: an ATOMIC WRITE carries exactly 8 bytes. */
	if (oi->mask & UROCE_F_ATOMIC_WRITE) {
		out[0] = 8;
		return 1;
	}
	for (i = 0; i < UROCE_ARRAY_SIZE(any); i++) {
		if ((oi->mask & UROCE_F_FULL_PMTU) && uroce_mtu_enum(any[i]) == 0)
			continue;
		out[n++] = any[i];
	}
	return n;
}

/* Build frame number @p n (0-based) and append it to the pcap and the manifest. */
static int
emit(FILE *pcap, FILE *tsv, uint8_t op, enum encap_kind k, uint32_t paylen, uint32_t n)
{
	static uint8_t frame[FRAME_MAX];
	const struct uroce_opcode_info *oi = uroce_opcode_get(op);
	uint32_t l2, l3_off, l3_len, hdr, ib_len, j, len, icrc;
	uint8_t pad = uroce_pad(paylen);
	struct uroce_bth_fields b;
	struct uroce_ext_fields x;
	struct uroce_encap e;

	make_encap(&e, k, n);
	make_fields(op, n, &b, &x);
	l2 = uroce_encap_len(&e);
	l3_off = UROCE_ETH_LEN + (e.has_vlan ? UROCE_VLAN_LEN : 0);
	hdr = uroce_hdr_build(frame + l2, FRAME_MAX - l2, &b, &x, paylen);
	if (hdr != oi->hdr_len) {
		fprintf(stderr, "gen_frames: uroce_hdr_build(0x%02x, %u) = %u\n", op, paylen, hdr);
		return -1;
	}
	for (j = 0; j < paylen; j++)
		frame[l2 + hdr + j] = (uint8_t)(j * 7 + n);
	memset(frame + l2 + hdr + paylen, 0, pad);
	ib_len = hdr + paylen + pad + UROCE_ICRC_LEN;
	if (uroce_encap_build(frame, FRAME_MAX, &e, ib_len) != l2) {
		fprintf(stderr, "gen_frames: uroce_encap_build(0x%02x, %u) failed\n", op, paylen);
		return -1;
	}
	len = l2 + ib_len;
	l3_len = len - l3_off - UROCE_ICRC_LEN;
	uroce_icrc_fill(frame + l3_off, l3_len, e.family);
	icrc = uroce_icrc_compute(frame + l3_off, l3_len, e.family);
	if (pcap_record(pcap, 1700000000u + n, frame, len) != 0)
		return -1;
	/* Frame numbers in the manifest start at 1, as in tshark. */
	fprintf(tsv, "%u\t%u\t%s\t%s\t%u\t%u\t%u\t%u\t%d\t%d\t%d\t%d\t%d\t%u",
		n + 1, op, oi->name, encap_name[k], paylen, pad, b.psn, b.dqpn, b.se, b.migreq,
		b.ackreq, b.fecn, b.becn, b.pkey);
	fprintf(tsv, "\t%" PRIu64 "\t%u\t%u\t%u\t%u\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
		"\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\n",
		x.va, x.rkey, x.dma_len, x.syndrome, x.msn, x.swap_add, x.compare, x.orig, x.imm,
		x.inv_rkey, x.qkey, x.src_qp, icrc, oi->mask, x.feth, x.xrc_srqn);
	return ferror(tsv) ? -1 : 0;
}

int
main(int argc, char **argv)
{
	FILE *pcap, *tsv;
	uint32_t n = 0;
	int op, k, i, rc = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: %s OUT.pcap OUT.tsv\n", argv[0]);
		return 2;
	}
	pcap = fopen(argv[1], "wb");
	tsv = fopen(argv[2], "w");
	if (pcap == NULL || tsv == NULL) {
		fprintf(stderr, "gen_frames: cannot create output: %s\n", strerror(errno));
		goto out;
	}
	if (pcap_header(pcap) != 0)
		goto io_err;
	fprintf(tsv, "frame\topcode\tname\tencap\tpaylen\tpadcnt\tpsn\tdqpn\tse\tmigreq\tackreq"
		     "\tfecn\tbecn\tpkey\tva\trkey\tdma_len\tsyndrome\tmsn\tswap_add\tcompare"
		     "\torig\timm\tinv_rkey\tqkey\tsrc_qp\ticrc\tmask\tfeth\txrc_srqn\n");

	for (op = 0; op < 256; op++) {
		const struct uroce_opcode_info *oi = uroce_opcode_get((uint8_t)op);
		uint32_t lens[8];
		int nl;

		if (oi == NULL)
			continue;
		nl = paylens_for(oi, lens);
		for (k = 0; k < ENC_MAX; k++) {
			for (i = 0; i < nl; i++) {
				if (emit(pcap, tsv, (uint8_t)op, (enum encap_kind)k, lens[i],
					 n) != 0)
					goto io_err;
				n++;
			}
		}
	}
	if (fflush(pcap) != 0 || fflush(tsv) != 0)
		goto io_err;
	printf("gen_frames: %u frames\n", n);
	rc = 0;
	goto out;
io_err:
	fprintf(stderr, "gen_frames: failed after %u frames (%s)\n", n,
		errno != 0 ? strerror(errno) : "see above");
out:
	if (pcap != NULL && fclose(pcap) != 0)
		rc = 1;
	if (tsv != NULL && fclose(tsv) != 0)
		rc = 1;
	return rc;
}
