/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* Header and encapsulation building (lib/wire/build.c): every opcode built
 * then parsed, byte-exact against frames Linux rxe put on the wire. */

#include <criterion/criterion.h>
#include <errno.h>

#include "uroce_wire.h"
#include "wire_test_util.h"

static void
check_roundtrip(uint8_t opcode, enum uroce_ip_family fam, bool vlan, uint32_t paylen)
{
	static uint8_t buf[TEST_FRAME_MAX];
	const struct uroce_opcode_info *oi = uroce_opcode_get(opcode);
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	struct uroce_encap e;
	struct uroce_frame f;
	struct uroce_pkt p;
	enum uroce_wire_err err;
	uint32_t len, i;

	test_fields(opcode, &bth, &ext);
	test_encap(&e, fam, vlan);
	len = test_build_frame(buf, &e, &bth, &ext, paylen);
	cr_assert_gt(len, 0, "build 0x%02x len %u", opcode, paylen);

	err = uroce_parse(buf, len, &f, &p);
	cr_assert_eq(err, UROCE_WIRE_OK, "0x%02x (%s) paylen %u fam %d vlan %d: %s", opcode,
		     oi->name, paylen, fam, vlan, uroce_wire_strerror(err));

	/* Expect: every BTH field reads back. */
	cr_assert_eq(p.opcode, opcode);
	cr_assert_eq(p.info, oi);
	cr_assert_eq(p.paylen, paylen);
	cr_assert_eq(p.padcnt, uroce_pad(paylen));
	cr_assert_eq(p.psn, 0xFEDCBA);
	cr_assert_eq(p.dqpn, 0xABCDEF);
	cr_assert(uroce_bth_se(p.bth));
	cr_assert(uroce_bth_migreq(p.bth));
	cr_assert(uroce_bth_ackreq(p.bth));
	cr_assert(uroce_bth_becn(p.bth));
	cr_assert_not(uroce_bth_fecn(p.bth));
	cr_assert_eq(uroce_bth_tver(p.bth), 0);
	cr_assert_eq(uroce_bth_pkey(p.bth), 0xFFFF);

	/* Expect: every extension header the table lists reads back. */
	if (oi->mask & UROCE_HDR_DETH) {
		cr_assert_eq(uroce_deth_qkey(p.bth + oi->off_deth), 0x80010000);
		cr_assert_eq(uroce_deth_src_qp(p.bth + oi->off_deth), 0x123456);
	}
	if (oi->mask & UROCE_HDR_RETH) {
		cr_assert_eq(uroce_reth_va(p.bth + oi->off_reth), 0x0102030405060708ull);
		cr_assert_eq(uroce_reth_rkey(p.bth + oi->off_reth), 0x11223344);
		cr_assert_eq(uroce_reth_dma_len(p.bth + oi->off_reth), 0x12345);
	}
	if (oi->mask & UROCE_HDR_AETH) {
		cr_assert_eq(uroce_aeth_syndrome(p.bth + oi->off_aeth), 0x1F);
		cr_assert_eq(uroce_aeth_msn(p.bth + oi->off_aeth), 0x654321);
	}
	if (oi->mask & UROCE_HDR_ATMETH) {
		cr_assert_eq(uroce_atmeth_va(p.bth + oi->off_atmeth), 0x0102030405060708ull);
		cr_assert_eq(uroce_atmeth_rkey(p.bth + oi->off_atmeth), 0x11223344);
		cr_assert_eq(uroce_atmeth_swap_add(p.bth + oi->off_atmeth), 0xA1A2A3A4A5A6A7A8ull);
		cr_assert_eq(uroce_atmeth_compare(p.bth + oi->off_atmeth), 0xB1B2B3B4B5B6B7B8ull);
	}
	if (oi->mask & UROCE_HDR_ATMACK)
		cr_assert_eq(uroce_atmack_orig(p.bth + oi->off_atmack), 0xC1C2C3C4C5C6C7C8ull);
	if (oi->mask & UROCE_HDR_IMMDT)
		cr_assert_eq(uroce_immdt_imm(p.bth + oi->off_immdt), 0xD1D2D3D4);
	if (oi->mask & UROCE_HDR_IETH)
		cr_assert_eq(uroce_ieth_rkey(p.bth + oi->off_ieth), 0xE1E2E3E4);
	if (oi->mask & UROCE_HDR_FETH)
		cr_assert_eq(uroce_feth_word(p.bth + oi->off_feth), 0x11);
	if (oi->mask & UROCE_HDR_XRCETH) {
		cr_assert_eq(uroce_xrceth_srqn(p.bth + oi->off_xrceth), 0x5A0B0C);
		cr_assert_eq(p.bth[oi->off_xrceth], 0, "reserved byte sent as 0");
	}

	/* Expect: payload where the table says, then zero pad. */
	cr_assert_eq(p.payload, p.bth + oi->hdr_len);
	for (i = 0; i < paylen; i++)
		if (p.payload[i] != (uint8_t)(i * 7 + 1))
			cr_assert_fail("0x%02x payload byte %u is 0x%02x", opcode, i, p.payload[i]);
	for (i = 0; i < p.padcnt; i++)
		cr_assert_eq(p.payload[paylen + i], 0);

	/* Expect: the encapsulation reads back. */
	cr_assert_eq(f.family, fam);
	cr_assert_eq(f.has_vlan, vlan);
	if (vlan)
		cr_assert_eq(f.vlan_tci, (5u << 13) | 100);
	cr_assert_eq(f.tclass, 0x6A);
	cr_assert_eq(f.hop_limit, 33);
	cr_assert_eq(f.sport, 0xC123);
	cr_assert_eq(f.dport, UROCE_UDP_PORT);
	cr_assert_eq(memcmp(f.sgid, e.sgid, 16), 0);
	cr_assert_eq(memcmp(f.dgid, e.dgid, 16), 0);
	cr_assert_eq(f.flow_label, fam == UROCE_IP_V6 ? 0x9ABCDu : 0u);
	cr_assert_eq(f.ib_len, oi->hdr_len + paylen + p.padcnt + UROCE_ICRC_LEN);
}

Test(build, every_opcode_built_then_parsed)
{
	static const struct {
		enum uroce_ip_family fam;
		bool vlan;
	} encs[] = {{UROCE_IP_V4, false}, {UROCE_IP_V6, false}, {UROCE_IP_V4, true},
		    {UROCE_IP_V6, true}};
	uint32_t lens[16];
	int op, n, i;
	size_t k;
	int frames = 0;

	for (op = 0; op < 256; op++) {
		const struct uroce_opcode_info *oi = uroce_opcode_get((uint8_t)op);

		if (oi == NULL)
			continue;
		n = test_paylens(oi, lens);
		for (k = 0; k < UROCE_ARRAY_SIZE(encs); k++)
			for (i = 0; i < n; i++, frames++)
				check_roundtrip((uint8_t)op, encs[k].fam, encs[k].vlan, lens[i]);
	}
	cr_log_info("%d frames built and parsed", frames);
	cr_assert_gt(frames, 40 * 4);
}

Test(build, hdr_build_rejects_what_the_table_forbids)
{
	uint8_t buf[64];
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;

	test_fields(0x15, &bth, &ext);
	cr_assert_eq(uroce_hdr_build(buf, sizeof(buf), &bth, &ext, 0), 0, "reserved opcode");
	bth.opcode = 0x11; /* ACK carries no payload */
	cr_assert_eq(uroce_hdr_build(buf, sizeof(buf), &bth, &ext, 4), 0);
	cr_assert_eq(uroce_hdr_build(buf, sizeof(buf), &bth, &ext, 0), 16);
	bth.opcode = 0x0A; /* 28-byte header */
	cr_assert_eq(uroce_hdr_build(buf, 27, &bth, &ext, 0), 0, "no room");
	cr_assert_eq(uroce_hdr_build(buf, 28, &bth, &ext, UROCE_MAX_PMTU + 1), 0, "over PMTU");
	cr_assert_eq(uroce_hdr_build(buf, 28, &bth, &ext, UROCE_MAX_PMTU), 28);
}

Test(build, bth_bits_land_where_iba_puts_them)
{
	uint8_t b[UROCE_BTH_LEN];
	struct uroce_bth_fields bth = {
		.opcode = 0x04, .se = true, .migreq = false, .pkey = 0x8001,
		.fecn = true, .becn = false, .dqpn = 0x000011, .ackreq = true, .psn = 0xFFFFFF,
	};
	struct uroce_ext_fields ext = {0};

	cr_assert_eq(uroce_hdr_build(b, sizeof(b), &bth, &ext, 3), UROCE_BTH_LEN);
	/* Expect: SE bit 7, M bit 6, PadCnt bits 5:4 (=1 for 3 bytes), TVer 0. */
	cr_assert_eq(b[1], 0x90);
	cr_assert_eq(b[2], 0x80);
	cr_assert_eq(b[3], 0x01);
	/* Expect: FECN bit 7 of byte 4, reserved bits zero. */
	cr_assert_eq(b[4], 0x80);
	cr_assert_eq(b[5], 0x00);
	cr_assert_eq(b[7], 0x11);
	/* Expect: AckReq bit 7 of byte 8, reserved 7 bits zero. */
	cr_assert_eq(b[8], 0x80);
	cr_assert_eq(b[9], 0xFF);
	cr_assert_eq(b[11], 0xFF);
}

/* Frames Linux rxe sent (test/vectors/rxe/rxe-write-s64.pcap, frames 21 and 57). */
static const char rxe_write_only_64[] =
	"52540018000152540018000208004500007c37b0400040117699c6120002c6120001c12112b7006800"
	"000a00ffff00000011807e6610000056150df8900000000241000000405a661a9c8c8862ae4b5957c7"
	"b57294cc1b3b6670f395cc718bd76c4a503ae0aba0fa472c82aadbcd033295b8a52984c064ea305880"
	"fdc90bd43556246f36cf100198bac6";
static const char rxe_ack[] =
	"525400180002525400180001080045000030bcb040004011f1e4c6120001c6120002c12112b7001c00"
	"001100ffff00000011007e66101f000001b8e0aa5f";

static void
rxe_encap(struct uroce_encap *e, const uint8_t *frame)
{
	memset(e, 0, sizeof(*e));
	memcpy(e->dmac, frame, 6);
	memcpy(e->smac, frame + 6, 6);
	e->family = UROCE_IP_V4;
	e->sgid[10] = e->sgid[11] = e->dgid[10] = e->dgid[11] = 0xFF;
	memcpy(e->sgid + 12, frame + 26, 4);
	memcpy(e->dgid + 12, frame + 30, 4);
	e->hop_limit = 64;
	e->ip_id = uroce_get_be16(frame + 18);
	/* Expect: rxe's source port is the QPN-pair convention, QPN 0x11 both ends. */
	e->sport = uroce_udp_sport(0, 0x11, 0x11);
}

Test(build, byte_exact_with_rxe_write_only)
{
	uint8_t golden[256], ours[256];
	uint32_t glen = test_unhex(golden, rxe_write_only_64);
	struct uroce_bth_fields bth = {.opcode = 0x0A, .pkey = 0xFFFF, .dqpn = 0x11,
				       .ackreq = true, .psn = 0x7e6610};
	struct uroce_ext_fields ext = {.va = 0x000056150df89000ull, .rkey = 0x241, .dma_len = 64};
	struct uroce_encap e;
	uint32_t l2, hdr;

	rxe_encap(&e, golden);
	l2 = uroce_encap_build(ours, sizeof(ours), &e, 28 + 64 + 4);
	cr_assert_eq(l2, 42);
	hdr = uroce_hdr_build(ours + l2, sizeof(ours) - l2, &bth, &ext, 64);
	cr_assert_eq(hdr, 28);
	memcpy(ours + l2 + hdr, golden + l2 + hdr, 64); /* payload is perftest's */
	uroce_icrc_fill(ours + 14, glen - 14 - 4, UROCE_IP_V4);
	cr_assert_eq(glen, l2 + hdr + 64 + 4);
	cr_assert_arr_eq(ours, golden, glen, "uroce's WRITE Only differs from rxe's");
}

Test(build, byte_exact_with_rxe_ack)
{
	uint8_t golden[128], ours[128];
	uint32_t glen = test_unhex(golden, rxe_ack);
	struct uroce_bth_fields bth = {.opcode = 0x11, .pkey = 0xFFFF, .dqpn = 0x11, .psn = 0x7e6610};
	struct uroce_ext_fields ext = {.syndrome = UROCE_AETH_ACK_NO_CREDIT, .msn = 1};
	struct uroce_encap e;
	uint32_t l2;

	rxe_encap(&e, golden);
	l2 = uroce_encap_build(ours, sizeof(ours), &e, 16 + 4);
	cr_assert_eq(uroce_hdr_build(ours + l2, sizeof(ours) - l2, &bth, &ext, 0), 16);
	uroce_icrc_fill(ours + 14, glen - 14 - 4, UROCE_IP_V4);
	cr_assert_eq(glen, 62);
	cr_assert_arr_eq(ours, golden, glen, "uroce's ACK differs from rxe's");
}

Test(build, encap_ipv4_header)
{
	uint8_t b[64];
	struct uroce_encap e;
	uint32_t sum = 0;
	int i;

	test_encap(&e, UROCE_IP_V4, false);
	cr_assert_eq(uroce_encap_build(b, sizeof(b), &e, 100), 42);
	cr_assert_eq(uroce_get_be16(b + 12), UROCE_ETHERTYPE_IPV4);
	cr_assert_eq(b[14], 0x45);
	cr_assert_eq(b[15], 0x6A);
	cr_assert_eq(uroce_get_be16(b + 16), 20 + 8 + 100);
	cr_assert_eq(uroce_get_be16(b + 20), 0x4000, "DF set, not a fragment");
	cr_assert_eq(b[22], 33);
	cr_assert_eq(b[23], UROCE_IPPROTO_UDP);
	for (i = 0; i < 20; i += 2)
		sum += uroce_get_be16(b + 14 + i);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	cr_assert_eq(sum, 0xFFFF, "IPv4 header checksum verifies");
	cr_assert_eq(uroce_get_be16(b + 34), 0xC123);
	cr_assert_eq(uroce_get_be16(b + 36), 4791);
	cr_assert_eq(uroce_get_be16(b + 38), 108);
	cr_assert_eq(uroce_get_be16(b + 40), 0, "RoCEv2 UDP checksum is 0");
}

Test(build, encap_ipv6_vlan_header)
{
	uint8_t b[80];
	struct uroce_encap e;

	test_encap(&e, UROCE_IP_V6, true);
	cr_assert_eq(uroce_encap_len(&e), 14 + 4 + 40 + 8);
	cr_assert_eq(uroce_encap_build(b, sizeof(b), &e, 64), 66);
	cr_assert_eq(uroce_get_be16(b + 12), UROCE_ETHERTYPE_VLAN);
	cr_assert_eq(uroce_get_be16(b + 14), 0xA064, "PCP 5, VID 100");
	cr_assert_eq(uroce_get_be16(b + 16), UROCE_ETHERTYPE_IPV6);
	cr_assert_eq(uroce_get_be32(b + 18), (6u << 28) | (0x6Au << 20) | 0x9ABCD);
	cr_assert_eq(uroce_get_be16(b + 22), 72);
	cr_assert_eq(b[24], UROCE_IPPROTO_UDP);
	cr_assert_eq(b[25], 33);
}

Test(build, encap_rejects_bad_input)
{
	uint8_t b[80];
	struct uroce_encap e;

	test_encap(&e, UROCE_IP_V4, false);
	cr_assert_eq(uroce_encap_build(b, 41, &e, 64), 0, "no room");
	cr_assert_eq(uroce_encap_build(b, sizeof(b), &e, 0xFFFF), 0, "IP length overflow");
	e.family = UROCE_IP_NONE;
	cr_assert_eq(uroce_encap_build(b, sizeof(b), &e, 64), 0);
}

/* uroce_frame_wrap() needs the whole encapsulation in the headroom. */
Test(build, frame_wrap_refuses_short_headroom)
{
	uint8_t b[128] = {0};
	struct uroce_encap e;

	test_encap(&e, UROCE_IP_V6, true);
	cr_assert_eq(uroce_frame_wrap(b + 66, 65, 32, &e), 0, "one byte short");
	cr_assert_eq(uroce_frame_wrap(b + 66, 66, 32, &e), 66);
	e.family = UROCE_IP_NONE;
	cr_assert_eq(uroce_frame_wrap(b + 66, 66, 32, &e), 0, "bad family");
}

Test(build, udp_sport_convention)
{
	uint32_t a, b;

	/* Expect: always in the RoCEv2 range, and both ends compute the same port. */
	for (a = 0; a < 2000; a += 7)
		for (b = 0x11; b < 0x11 + 3000; b += 131) {
			uint16_t s = uroce_udp_sport(0, a, b);

			cr_assert_geq(s, 0xC000);
			cr_assert_eq(s, uroce_udp_sport(0, b, a));
		}
	/* Expect: 0x11 x 0x11 = 0x121, which rxe put on the wire as 0xC121. */
	cr_assert_eq(uroce_udp_sport(0, 0x11, 0x11), 0xC121);
	/* Expect: a given flow label is folded, the QPNs ignored. */
	cr_assert_eq(uroce_udp_sport(0xFC000, 1, 2), 0xC03F);
	cr_assert_eq(uroce_udp_sport(0x03FFF, 1, 2), 0xFFFF);
	cr_assert_eq(uroce_udp_sport(0x1FC001, 1, 2), 0xC03E, "only 20 bits of label count");
}

/* Expect: uroce_frame_mark_ce() turns ECT(0)/ECT(1) into CE, IPv4 and IPv6,
 * with and without VLAN; the frame still parses (IPv4 checksum recomputed)
 * and its ICRC still verifies (A17.4.1 masks the ECN bits); CE stays CE;
 * not-ECT and a frame description that does not fit are refused. */
Test(build, frame_mark_ce)
{
	static const enum uroce_ip_family fam[2] = { UROCE_IP_V4, UROCE_IP_V6 };
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	struct uroce_encap e;
	struct uroce_frame f, g;
	struct uroce_pkt p;
	uint8_t buf[TEST_FRAME_MAX];
	uint32_t len;
	int i, vlan, ecn;

	test_fields(UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_RDMA_WRITE_ONLY), &bth, &ext);
	for (i = 0; i < 2; i++) {
		for (vlan = 0; vlan < 2; vlan++) {
			for (ecn = 0; ecn < 4; ecn++) {
				test_encap(&e, fam[i], vlan);
				e.tclass = (uint8_t)(0x68 | ecn);
				len = test_build_frame(buf, &e, &bth, &ext, 100);
				cr_assert_gt(len, 0);
				cr_assert_eq(uroce_parse(buf, len, &f, &p), UROCE_WIRE_OK);
				if (ecn == 0) {
					cr_expect_eq(uroce_frame_mark_ce(buf, len, &f), -EINVAL);
					cr_expect_eq(f.tclass, 0x68);
					continue;
				}
				cr_expect_eq(uroce_frame_mark_ce(buf, len, &f), ecn == 3 ? 0 : 1);
				cr_expect_eq(f.tclass, 0x6B);
				/* Expect: parses again, CE on the wire, ICRC good. */
				cr_assert_eq(uroce_parse(buf, len, &g, &p), UROCE_WIRE_OK,
					     "family %d vlan %d ecn %d", fam[i], vlan, ecn);
				cr_expect_eq(g.tclass, 0x6B);
				cr_expect_eq(g.flow_label, f.flow_label);
			}
		}
	}
	test_encap(&e, UROCE_IP_V4, false);
	len = test_build_frame(buf, &e, &bth, &ext, 100);
	cr_assert_eq(uroce_parse(buf, len, &f, &p), UROCE_WIRE_OK);
	cr_expect_eq(uroce_frame_mark_ce(buf, f.l3_off + 10, &f), -EINVAL);
	cr_expect_eq(uroce_frame_mark_ce(NULL, len, &f), -EINVAL);
	cr_expect_eq(uroce_frame_mark_ce(buf, len, NULL), -EINVAL);
	f.family = UROCE_IP_NONE;
	cr_expect_eq(uroce_frame_mark_ce(buf, len, &f), -EINVAL);
}

/* The headers of an RC RDMA WRITE ONLY of @p paylen bytes, built at @p ib,
 * and the encapsulation @p e for IPv4 (@p fam 0) or VLAN-tagged IPv6 (1);
 * @p ib_len gets the packet's InfiniBand length. @return the header bytes. */
static uint32_t
op_hdrs(uint8_t *ib, uint8_t op, uint32_t paylen, unsigned int fam, struct uroce_bth_fields *bth,
	struct uroce_encap *e, uint32_t *ib_len)
{
	struct uroce_ext_fields ext;
	uint32_t hl;

	test_fields(UROCE_OPCODE(UROCE_SVC_RC, op), bth, &ext);
	test_encap(e, fam ? UROCE_IP_V6 : UROCE_IP_V4, fam == 1);
	*ib_len = uroce_opcode_get(bth->opcode)->hdr_len + paylen + uroce_pad(paylen) +
		  UROCE_ICRC_LEN;
	hl = uroce_hdr_build(ib, *ib_len, bth, &ext, paylen);
	cr_assert_gt(hl, 0);
	return hl;
}

static uint32_t
write_only_hdrs(uint8_t *ib, uint32_t paylen, unsigned int fam, struct uroce_bth_fields *bth,
		struct uroce_encap *e, uint32_t *ib_len)
{
	return op_hdrs(ib, UROCE_OP_RDMA_WRITE_ONLY, paylen, fam, bth, e, ib_len);
}

/* uroce_parse_split() of the pieces of a good frame (@p fr, @p hl header
 * bytes), and of the same with one thing wrong. */
static void
split_parse_checks(const uint8_t *fr, uint32_t hl, uint8_t *payload, uint32_t paylen,
		   uint8_t *trailer)
{
	struct uroce_frame f;
	struct uroce_pkt p;

	cr_assert_eq(uroce_parse_split(fr, hl, payload, paylen, trailer, false, &f, &p), UROCE_WIRE_OK,
		     "split, paylen %u", paylen);
	cr_expect_eq(p.payload, payload);
	cr_expect_eq(p.paylen, paylen);
	cr_expect_eq(p.opcode, UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_RDMA_WRITE_ONLY));
	payload[paylen - 1] ^= 0x10;
	cr_expect_eq(uroce_parse_split(fr, hl, payload, paylen, trailer, false, &f, &p),
		     UROCE_WIRE_BAD_ICRC, "flipped payload, paylen %u", paylen);
	payload[paylen - 1] ^= 0x10;
	if (uroce_pad(paylen) > 0) {
		trailer[0] = 1;
		cr_expect_eq(uroce_parse_split(fr, hl, payload, paylen, trailer, false, &f, &p),
			     UROCE_WIRE_BAD_ICRC, "nonzero pad, paylen %u", paylen);
		trailer[0] = 0;
	}
	cr_expect_neq(uroce_parse_split(fr, hl - 4, payload, paylen, trailer, false, &f, &p),
		      UROCE_WIRE_OK, "header piece 4 bytes short, paylen %u", paylen);
	cr_expect_neq(uroce_parse_split(fr, hl + 4, payload, paylen, trailer, false, &f, &p),
		      UROCE_WIRE_OK, "header piece 4 bytes long, paylen %u", paylen);
}

/* Expect: a frame wrapped in three pieces (headers, payload left in place,
 * pad and ICRC in a trailer) is byte for byte the frame uroce_frame_wrap()
 * makes of the same packet in one buffer, for IPv4 and IPv6 with a VLAN tag,
 * and payload lengths with every pad count; the result parses and its ICRC
 * checks. uroce_parse_split() accepts the three pieces as they lie, pointing
 * the packet's payload at the payload piece; it refuses a flipped payload
 * bit and a nonzero pad (BAD_ICRC) and a header piece that ends before or
 * after the headers do (never OK). */
Test(build, frame_wrap_split_equals_frame_wrap)
{
	static const uint32_t lens[] = {1, 2, 3, 4, 5, 7, 64, 1021, 4096};
	/* The header piece has room for a whole frame (uroce_parse_split()). */
	static uint8_t one[128 + 8192], hdr[128 + 8192], payload[4096], trailer[8], joined[8192];
	struct uroce_bth_fields bth;
	struct uroce_encap e;
	struct uroce_frame f;
	struct uroce_pkt p;
	unsigned int i, fam;
	uint32_t k;

	for (k = 0; k < sizeof(payload); k++)
		payload[k] = (uint8_t)(k * 7 + 3);
	for (fam = 0; fam < 2; fam++) {
		for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			uint32_t paylen = lens[i], pad = uroce_pad(paylen), hl, ib_len, e1, e2;

			hl = write_only_hdrs(one + 128, paylen, fam, &bth, &e, &ib_len);
			memcpy(hdr + 128, one + 128, hl);
			memcpy(one + 128 + hl, payload, paylen);
			memset(one + 128 + hl + paylen, 0, pad);
			e1 = uroce_frame_wrap(one + 128, 128, ib_len, &e);
			memset(trailer, 0xee, sizeof(trailer));
			e2 = uroce_frame_wrap_split(hdr + 128, 128, hl, payload, paylen, trailer, &e);
			cr_assert_eq(e1, e2);
			cr_assert_gt(e2, 0);
			memcpy(joined, hdr + 128 - e2, e2 + hl);
			memcpy(joined + e2 + hl, payload, paylen);
			memcpy(joined + e2 + hl + paylen, trailer, pad + UROCE_ICRC_LEN);
			cr_assert_eq(memcmp(joined, one + 128 - e1, e1 + ib_len), 0,
				     "family %u paylen %u differs", fam, paylen);
			cr_assert_eq(uroce_parse(joined, e2 + ib_len, &f, &p), UROCE_WIRE_OK,
				     "family %u paylen %u", fam, paylen);
			split_parse_checks(hdr + 128 - e2, e2 + hl, payload, paylen, trailer);
		}
	}
}

/*
 * uroce_parse_split() with late set: a WRITE MIDDLE or LAST payload of at
 * least UROCE_LATE_ICRC_MIN bytes has only its headers checked (icrc_late),
 * and the rest checks by uroce_pkt_icrc_late() or by the CRC of a copy
 * (uroce_crc32_copy(), uroce_pkt_icrc_end()), pad included; a flipped
 * payload or BTH bit passes the parse and fails that check. A shorter
 * payload, a WRITE ONLY (its RETH places it) and a corrupted packet whose
 * headers no longer parse are checked whole in the parse (BAD_ICRC). The
 * same for the frame in one buffer (uroce_parse_rest()), where a pad that
 * is not zero is checked whole too.
 */
Test(build, split_parse_late_icrc)
{
	static const struct {
		uint8_t op;
		uint32_t paylen;
		bool late;
	} cases[] = {
		{ UROCE_OP_RDMA_WRITE_MIDDLE, 1024, true },
		{ UROCE_OP_RDMA_WRITE_MIDDLE, 256, true },
		{ UROCE_OP_RDMA_WRITE_LAST, 257, true },
		{ UROCE_OP_RDMA_WRITE_LAST, 255, false },
		{ UROCE_OP_RDMA_WRITE_ONLY, 1024, false },
	};
	static uint8_t hdr[128 + 8192], payload[4096], copy[4096], trailer[8], joined[8192];
	struct uroce_bth_fields bth;
	struct uroce_encap e;
	struct uroce_frame f;
	struct uroce_pkt p;
	unsigned int i, fam;
	uint32_t k;

	for (k = 0; k < sizeof(payload); k++)
		payload[k] = (uint8_t)(k * 11 + 5);
	for (fam = 0; fam < 2; fam++) {
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			uint32_t paylen = cases[i].paylen, hl, ib_len, en, jl;
			const uint8_t *fr;
			uint8_t *bthp;

			hl = op_hdrs(hdr + 128, cases[i].op, paylen, fam, &bth, &e, &ib_len);
			en = uroce_frame_wrap_split(hdr + 128, 128, hl, payload, paylen, trailer, &e);
			cr_assert_gt(en, 0);
			fr = hdr + 128 - en;
			hl += en;
			bthp = hdr + 128;
			/* The same frame in one buffer: uroce_parse_rest(). */
			memcpy(joined, fr, hl);
			memcpy(joined + hl, payload, paylen);
			memcpy(joined + hl + paylen, trailer, uroce_pad(paylen) + UROCE_ICRC_LEN);
			jl = hl + paylen + uroce_pad(paylen) + UROCE_ICRC_LEN;
			cr_assert_eq(uroce_frame_parse(joined, jl, &f), UROCE_WIRE_OK);
			cr_assert_eq(uroce_parse_rest(joined, &f, true, &p), UROCE_WIRE_OK);
			cr_expect_eq(p.icrc_late, cases[i].late, "case %u, one buffer", i);
			cr_expect(!p.icrc_late || uroce_pkt_icrc_late(&p), "case %u, one buffer", i);
			joined[hl + 3] ^= 0x01;
			cr_assert_eq(uroce_frame_parse(joined, jl, &f), UROCE_WIRE_OK);
			k = uroce_parse_rest(joined, &f, true, &p);
			cr_expect(cases[i].late ? k == UROCE_WIRE_OK && !uroce_pkt_icrc_late(&p) :
						  k == UROCE_WIRE_BAD_ICRC,
				  "case %u, one buffer, flipped payload", i);
			joined[hl + 3] ^= 0x01;
			if (uroce_pad(paylen) > 0) {
				/* A pad that is not zero: checked whole, so refused. */
				joined[hl + paylen] = 1;
				cr_assert_eq(uroce_frame_parse(joined, jl, &f), UROCE_WIRE_OK);
				cr_expect_eq(uroce_parse_rest(joined, &f, true, &p),
					     UROCE_WIRE_BAD_ICRC, "case %u, pad 1", i);
			}
			cr_assert_eq(uroce_parse_split(fr, hl, payload, paylen, trailer, true, &f, &p),
				     UROCE_WIRE_OK, "case %u", i);
			cr_expect_eq(p.icrc_late, cases[i].late, "case %u", i);
			if (!cases[i].late) {
				payload[paylen / 2] ^= 0x04;
				cr_expect_eq(uroce_parse_split(fr, hl, payload, paylen, trailer, true,
							       &f, &p),
					     UROCE_WIRE_BAD_ICRC, "case %u: flipped payload", i);
				payload[paylen / 2] ^= 0x04;
				continue;
			}
			cr_expect(uroce_pkt_icrc_late(&p), "case %u", i);
			memset(copy, 0, sizeof(copy));
			cr_expect(uroce_pkt_icrc_end(&p, uroce_crc32_copy(p.icrc_seed, copy, p.payload,
									  p.paylen)),
				  "case %u: the copy's CRC", i);
			cr_expect_eq(memcmp(copy, payload, paylen), 0);
			/* A flipped payload bit and a flipped PSN bit: parsed, caught late. */
			payload[paylen - 1] ^= 0x20;
			cr_assert_eq(uroce_parse_split(fr, hl, payload, paylen, trailer, true, &f, &p),
				     UROCE_WIRE_OK);
			cr_expect(!uroce_pkt_icrc_late(&p), "case %u: flipped payload", i);
			cr_expect(!uroce_pkt_icrc_end(&p, uroce_crc32_copy(p.icrc_seed, copy,
									   p.payload, p.paylen)));
			payload[paylen - 1] ^= 0x20;
			bthp[11] ^= 0x01;
			cr_assert_eq(uroce_parse_split(fr, hl, payload, paylen, trailer, true, &f, &p),
				     UROCE_WIRE_OK);
			cr_expect(!uroce_pkt_icrc_late(&p), "case %u: flipped PSN", i);
			bthp[11] ^= 0x01;
			/* An opcode that does not exist: BAD_ICRC, not BAD_OPCODE. */
			bthp[0] = 0x1F;
			cr_assert_null(uroce_opcode_get(bthp[0]));
			cr_expect_eq(uroce_parse_split(fr, hl, payload, paylen, trailer, true, &f, &p),
				     UROCE_WIRE_BAD_ICRC, "case %u: no such opcode", i);
			bthp[0] = UROCE_OPCODE(UROCE_SVC_RC, cases[i].op);
		}
	}
}

/* IBA 1.5 A19: ATOMIC WRITE is built only with its 8 bytes; the FETH lands
 * between the BTH and the RETH of a FLUSH. */
Test(build, iba15_requests)
{
	uint8_t buf[64];
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;

	test_fields(0x1D, &bth, &ext);
	cr_assert_eq(uroce_hdr_build(buf, sizeof(buf), &bth, &ext, 4), 0);
	cr_assert_eq(uroce_hdr_build(buf, sizeof(buf), &bth, &ext, 16), 0);
	cr_assert_eq(uroce_hdr_build(buf, sizeof(buf), &bth, &ext, 8), 28);
	cr_assert_eq(uroce_reth_dma_len(buf + 12), 0x00012345);
	test_fields(0x1C, &bth, &ext);
	ext.feth = uroce_feth_make(UROCE_FLUSH_GLOBAL, UROCE_FLUSH_RANGE);
	cr_assert_eq(uroce_hdr_build(buf, sizeof(buf), &bth, &ext, 4), 0, "FLUSH carries no data");
	cr_assert_eq(uroce_hdr_build(buf, sizeof(buf), &bth, &ext, 0), 32);
	cr_assert_eq(buf[12], 0);
	cr_assert_eq(buf[15], 0x01);
	cr_assert_eq(uroce_reth_rkey(buf + 16), 0x11223344);
}

/* IBA 1.2 XRC: the XRCETH is 8 reserved bits and the 24-bit SRQ number, right
 * after the BTH; bits above 24 of the number given are not sent. */
Test(build, xrc_requests)
{
	uint8_t buf[64];
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;

	test_fields(0xB4, &bth, &ext); /* XRC FetchAdd */
	ext.xrc_srqn = 0xFF123456;
	cr_assert_eq(uroce_hdr_build(buf, sizeof(buf), &bth, &ext, 0), 12 + 4 + 28);
	cr_assert_eq(uroce_get_be32(buf + 12), 0x00123456);
	cr_assert_eq(uroce_atmeth_rkey(buf + 16), 0x11223344);
	test_fields(0xAA, &bth, &ext); /* XRC RDMA WRITE Only */
	cr_assert_eq(uroce_hdr_build(buf, sizeof(buf), &bth, &ext, 4), 32);
	cr_assert_eq(uroce_xrceth_srqn(buf + 12), 0x5A0B0C);
	cr_assert_eq(uroce_reth_va(buf + 16), 0x0102030405060708ull);
	test_fields(0xB1, &bth, &ext); /* XRC Acknowledge: no XRCETH */
	cr_assert_eq(uroce_hdr_build(buf, sizeof(buf), &bth, &ext, 0), 16);
	cr_assert_eq(uroce_aeth_msn(buf + 12), 0x654321);
}

/* RFC 1071 over 16-bit big-endian words, the slow way: the reference the
 * built header's checksum is held to. */
static uint16_t
rfc1071_sum(const uint8_t *h, uint32_t len)
{
	uint32_t sum = 0, i;

	for (i = 0; i < len; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)sum;
}

/* uroce_encap_build() computes the IPv4 checksum from the field values
 * (not by reading the header back): every field that enters it, with
 * values that make the one's-complement sum carry. */
Test(build, ipv4_checksum_from_values_over_random_headers)
{
	uint8_t buf[128];
	uint64_t x = 0x9E3779B97F4A7C15ull;
	struct uroce_encap e;
	uint32_t i, k, ib_len;

	for (i = 0; i < 20000; i++) {
		memset(&e, 0, sizeof(e));
		e.family = UROCE_IP_V4;
		e.sgid[10] = e.sgid[11] = e.dgid[10] = e.dgid[11] = 0xFF;
		for (k = 12; k < 16; k++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			e.sgid[k] = (uint8_t)(x >> 56);
			e.dgid[k] = (uint8_t)(x >> 48);
		}
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		e.tclass = (uint8_t)(x >> 56);
		e.hop_limit = (uint8_t)(x >> 48);
		e.ip_id = (uint16_t)(x >> 32);
		e.sport = (uint16_t)(x >> 16);
		e.has_vlan = (x & 1) != 0;
		/* All ones in every free field once: the most carries. */
		if (i == 0) {
			memset(e.sgid + 12, 0xFF, 4);
			memset(e.dgid + 12, 0xFF, 4);
			e.tclass = e.hop_limit = 0xFF;
			e.ip_id = 0xFFFF;
		}
		ib_len = (uint32_t)(x % 9000);
		cr_assert_eq(uroce_encap_build(buf, sizeof(buf), &e, ib_len), uroce_encap_len(&e));
		k = e.has_vlan ? 18 : 14;
		cr_assert_eq(rfc1071_sum(buf + k, 20), 0xFFFF,
			     "header %u: checksum 0x%02x%02x does not hold", i, buf[k + 10],
			     buf[k + 11]);
		cr_assert_eq(buf[k + 8], e.hop_limit ? e.hop_limit : 64);
	}
}
