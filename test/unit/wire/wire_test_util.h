/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Helpers shared by the lib/wire unit tests: build a whole RoCEv2 frame for
 * an opcode with recognisable field values, and turn hex strings (golden
 * frames captured from Linux rxe) into bytes.
 */

#ifndef WIRE_TEST_UTIL_H
#define WIRE_TEST_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "uroce_wire.h"

#define TEST_FRAME_MAX 9216

/* Field values that make a wrong offset visible: every byte differs. */
static inline void
test_fields(uint8_t opcode, struct uroce_bth_fields *bth, struct uroce_ext_fields *ext)
{
	memset(bth, 0, sizeof(*bth));
	memset(ext, 0, sizeof(*ext));
	bth->opcode = opcode;
	bth->se = true;
	bth->migreq = true;
	bth->pkey = 0xFFFF;
	bth->becn = true;
	bth->dqpn = 0xABCDEF;
	bth->ackreq = true;
	bth->psn = 0xFEDCBA;
	ext->va = 0x0102030405060708ull;
	ext->rkey = 0x11223344;
	ext->dma_len = 0x00012345;
	ext->syndrome = 0x1F;
	ext->msn = 0x654321;
	ext->swap_add = 0xA1A2A3A4A5A6A7A8ull;
	ext->compare = 0xB1B2B3B4B5B6B7B8ull;
	ext->orig = 0xC1C2C3C4C5C6C7C8ull;
	ext->imm = 0xD1D2D3D4;
	ext->inv_rkey = 0xE1E2E3E4;
	ext->qkey = 0x80010000;
	ext->src_qp = 0x123456;
	ext->feth = 0x00000011;
	ext->xrc_srqn = 0x5A0B0C;
}

static inline void
test_encap(struct uroce_encap *e, enum uroce_ip_family family, bool vlan)
{
	static const uint8_t v6src[16] = {0x20, 0x01, 0x02, 0x00, 0, 0, 0, 0,
					  0, 0, 0, 0, 0, 0, 0, 0x01};
	static const uint8_t v6dst[16] = {0x20, 0x01, 0x02, 0x00, 0, 0, 0, 0,
					  0, 0, 0, 0, 0, 0, 0, 0x02};

	memset(e, 0, sizeof(*e));
	memcpy(e->dmac, "\x02\x00\xc6\x12\x00\x02", 6);
	memcpy(e->smac, "\x02\x00\xc6\x12\x00\x01", 6);
	e->family = family;
	e->has_vlan = vlan;
	e->vlan_tci = (5u << 13) | 100; /* PCP 5, VID 100 */
	if (family == UROCE_IP_V4) {
		/* 198.18.0.1 -> 198.18.0.2, IPv4-mapped GIDs */
		memcpy(e->sgid, "\0\0\0\0\0\0\0\0\0\0\xff\xff\xc6\x12\x00\x01", 16);
		memcpy(e->dgid, "\0\0\0\0\0\0\0\0\0\0\xff\xff\xc6\x12\x00\x02", 16);
	} else {
		memcpy(e->sgid, v6src, 16);
		memcpy(e->dgid, v6dst, 16);
	}
	e->tclass = 0x6A; /* DSCP 26, ECN 2 */
	e->hop_limit = 33;
	e->flow_label = 0x9ABCD;
	e->sport = 0xC123;
	e->ip_id = 0x4242;
}

/*
 * Build a whole frame: encapsulation, headers, @paylen payload bytes
 * (byte i = i * 7 + 1), zero pad and ICRC. Returns the frame length, 0 if the
 * headers could not be built.
 */
static inline uint32_t
test_build_frame(uint8_t *buf, const struct uroce_encap *e, const struct uroce_bth_fields *bth,
		 const struct uroce_ext_fields *ext, uint32_t paylen)
{
	uint32_t l2 = uroce_encap_len(e);
	uint32_t hdr, ib_len, i;
	uint8_t pad = uroce_pad(paylen);

	hdr = uroce_hdr_build(buf + l2, TEST_FRAME_MAX - l2, bth, ext, paylen);
	if (hdr == 0)
		return 0;
	for (i = 0; i < paylen; i++)
		buf[l2 + hdr + i] = (uint8_t)(i * 7 + 1);
	memset(buf + l2 + hdr + paylen, 0, pad);
	ib_len = hdr + paylen + pad + UROCE_ICRC_LEN;
	/* In place, as the daemon and the dataplane build their frames. */
	if (uroce_frame_wrap(buf + l2, l2, ib_len, e) != l2)
		return 0;
	return l2 + ib_len;
}

/* Recompute the ICRC of a whole frame after a test edited it. */
static inline void
test_refill_icrc(uint8_t *buf, uint32_t len, bool vlan, enum uroce_ip_family family)
{
	uint32_t l3_off = UROCE_ETH_LEN + (vlan ? UROCE_VLAN_LEN : 0);

	uroce_icrc_fill(buf + l3_off, len - l3_off - UROCE_ICRC_LEN, family);
}

static inline uint32_t
test_unhex(uint8_t *out, const char *hex)
{
	uint32_t n = 0;

	while (hex[0] && hex[1]) {
		char b[3] = {hex[0], hex[1], 0};

		out[n++] = (uint8_t)strtoul(b, NULL, 16);
		hex += 2;
	}
	return n;
}

/* Payload lengths worth trying for an opcode: the edges IBA cares about. */
static inline int
test_paylens(const struct uroce_opcode_info *oi, uint32_t *lens)
{
	static const uint32_t any[] = {0, 1, 2, 3, 4, 5, 255, 256, 1023, 1024, 1025, 4095, 4096};
	static const uint32_t full[] = {256, 512, 1024, 2048, 4096};
	int n = 0;
	size_t i;

	if (!(oi->mask & UROCE_F_PAYLOAD)) {
		lens[0] = 0;
		return 1;
	}
	/* IBA 1.5 A19: an ATOMIC WRITE carries exactly 8 bytes. */
	if (oi->mask & UROCE_F_ATOMIC_WRITE) {
		lens[0] = 8;
		return 1;
	}
	if (oi->mask & UROCE_F_FULL_PMTU) {
		for (i = 0; i < UROCE_ARRAY_SIZE(full); i++)
			lens[n++] = full[i];
		return n;
	}
	for (i = 0; i < UROCE_ARRAY_SIZE(any); i++)
		lens[n++] = any[i];
	return n;
}

#endif /* WIRE_TEST_UTIL_H */
