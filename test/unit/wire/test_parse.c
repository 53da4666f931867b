/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* Receive-side validation (lib/wire/parse.c): every malformed frame gets its
 * own error, and nothing is read past the buffer (each test copies the frame
 * into a heap buffer of exactly the length given, so ASan sees an over-read). */

#include <stdlib.h>

#include <criterion/criterion.h>

#include "uroce_wire.h"
#include "wire_internal.h"
#include "wire_test_util.h"

/* Returns only the verdict: the copy, and so the views into it, are freed. */
static enum uroce_wire_err
parse_exact(const uint8_t *frame, uint32_t len, struct uroce_frame *f, struct uroce_pkt *p)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum uroce_wire_err err;

	memcpy(copy, frame, len);
	err = uroce_parse(copy, len, f, p);
	free(copy);
	return err;
}

static uint32_t
make(uint8_t *buf, uint8_t opcode, enum uroce_ip_family fam, bool vlan, uint32_t paylen)
{
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	struct uroce_encap e;

	test_fields(opcode, &bth, &ext);
	test_encap(&e, fam, vlan);
	return test_build_frame(buf, &e, &bth, &ext, paylen);
}

Test(parse, truncation_at_every_byte_offset)
{
	static const struct {
		uint8_t opcode;
		enum uroce_ip_family fam;
		bool vlan;
		uint32_t paylen;
	} cases[] = {
		{0x0A, UROCE_IP_V4, false, 64},  {0x11, UROCE_IP_V4, false, 0},
		{0x12, UROCE_IP_V6, false, 0},   {0x13, UROCE_IP_V4, true, 0},
		{0x65, UROCE_IP_V6, true, 17},   {0x06, UROCE_IP_V4, false, 256},
		{UROCE_OPCODE_CNP, UROCE_IP_V4, false, 0},
	};
	uint8_t buf[TEST_FRAME_MAX];
	struct uroce_frame f;
	struct uroce_pkt p;
	size_t c;
	uint32_t len, cut;

	for (c = 0; c < UROCE_ARRAY_SIZE(cases); c++) {
		len = make(buf, cases[c].opcode, cases[c].fam, cases[c].vlan, cases[c].paylen);
		cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_OK);
		/* Expect: every shorter buffer is reported truncated, never parsed. */
		for (cut = 0; cut < len; cut++)
			cr_assert_eq(parse_exact(buf, cut, &f, &p), UROCE_WIRE_TRUNCATED,
				     "case %zu cut at %u of %u: %s", c, cut, len,
				     uroce_wire_strerror(uroce_parse(buf, cut, &f, &p)));
	}
}

Test(parse, ethernet_padding_is_not_payload)
{
	uint8_t buf[TEST_FRAME_MAX];
	struct uroce_frame f;
	struct uroce_pkt p;
	uint32_t len = make(buf, 0x11, UROCE_IP_V4, false, 0);

	/* A 62-byte ACK padded by a switch or NIC to 64 bytes plus junk. */
	memset(buf + len, 0xEE, 10);
	cr_assert_eq(uroce_parse(buf, len + 10, &f, &p), UROCE_WIRE_OK);
	cr_assert_eq(p.paylen, 0);
	cr_assert_eq(f.ib_len, 20);
}

Test(parse, not_rocev2)
{
	uint8_t buf[TEST_FRAME_MAX];
	struct uroce_frame f;
	struct uroce_pkt p;
	uint32_t len;

	/* ARP */
	len = make(buf, 0x0A, UROCE_IP_V4, false, 8);
	uroce_put_be16(buf + 12, UROCE_ETHERTYPE_ARP);
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_NOT_ROCEV2);
	cr_assert_eq(f.family, UROCE_IP_NONE);

	/* UDP to another port: checksum stays valid, only the port changes. */
	len = make(buf, 0x0A, UROCE_IP_V4, false, 8);
	uroce_put_be16(buf + 36, 4792);
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_NOT_ROCEV2);
	cr_assert_eq(f.family, UROCE_IP_V4, "addresses still reported");

	/* TCP over IPv6 */
	len = make(buf, 0x0A, UROCE_IP_V6, false, 8);
	buf[14 + 6] = 6;
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_NOT_ROCEV2);
}

Test(parse, bad_ip_headers)
{
	uint8_t buf[TEST_FRAME_MAX];
	struct uroce_frame f;
	struct uroce_pkt p;
	uint32_t len;

	len = make(buf, 0x04, UROCE_IP_V4, false, 8);
	buf[24] ^= 0x01; /* checksum */
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_BAD_IP, "IPv4 checksum");

	len = make(buf, 0x04, UROCE_IP_V4, false, 8);
	buf[14] = 0x55; /* version 5 */
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_BAD_IP, "IPv4 version");

	len = make(buf, 0x04, UROCE_IP_V4, false, 8);
	buf[14] = 0x44; /* IHL 4 */
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_BAD_IP, "IHL < 5");

	len = make(buf, 0x04, UROCE_IP_V6, false, 8);
	buf[14] = 0x40;
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_BAD_IP, "IPv6 version");
}

/* Recompute the IPv4 header checksum after editing the header. */
static void
fix_ipv4_csum(uint8_t *ip)
{
	uint32_t sum = 0;
	int i;

	uroce_put_be16(ip + 10, 0);
	for (i = 0; i < 20; i += 2)
		sum += uroce_get_be16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	uroce_put_be16(ip + 10, (uint16_t)~sum);
}

Test(parse, fragments_are_not_accepted)
{
	uint8_t buf[TEST_FRAME_MAX];
	struct uroce_frame f;
	struct uroce_pkt p;
	uint32_t len = make(buf, 0x04, UROCE_IP_V4, false, 8);

	uroce_put_be16(buf + 20, 0x2000); /* MF */
	fix_ipv4_csum(buf + 14);
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_BAD_IP);
	uroce_put_be16(buf + 20, 0x0010); /* offset */
	fix_ipv4_csum(buf + 14);
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_BAD_IP);
}

Test(parse, lengths_that_disagree)
{
	uint8_t buf[TEST_FRAME_MAX];
	struct uroce_frame f;
	struct uroce_pkt p;
	uint32_t len;

	/* UDP length shorter than the IP payload */
	len = make(buf, 0x04, UROCE_IP_V4, false, 8);
	uroce_put_be16(buf + 38, (uint16_t)(uroce_get_be16(buf + 38) - 4));
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_BAD_LENGTH, "UDP < IP");

	/* UDP length longer than the IP payload */
	len = make(buf, 0x04, UROCE_IP_V4, false, 8);
	uroce_put_be16(buf + 38, (uint16_t)(uroce_get_be16(buf + 38) + 4));
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_BAD_LENGTH, "UDP > IP");

	/* IP total length smaller than its own header */
	len = make(buf, 0x04, UROCE_IP_V4, false, 8);
	uroce_put_be16(buf + 16, 12);
	fix_ipv4_csum(buf + 14);
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_BAD_LENGTH);

	/* UDP too short to hold a BTH and ICRC: IP and UDP say 8 + 12 bytes. */
	len = make(buf, 0x04, UROCE_IP_V4, false, 0);
	uroce_put_be16(buf + 16, 20 + 8 + 12);
	uroce_put_be16(buf + 38, 8 + 12);
	fix_ipv4_csum(buf + 14);
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_BAD_LENGTH);
}

Test(parse, icrc_is_checked_before_transport_headers)
{
	uint8_t buf[TEST_FRAME_MAX];
	struct uroce_frame f;
	struct uroce_pkt p;
	uint32_t len = make(buf, 0x04, UROCE_IP_V4, false, 32);

	buf[42] = 0x15; /* reserved opcode, ICRC not updated */
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_BAD_ICRC);
	test_refill_icrc(buf, len, false, UROCE_IP_V4);
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_BAD_OPCODE);

	len = make(buf, 0x04, UROCE_IP_V4, false, 32);
	buf[len - 10] ^= 0x20; /* payload bit */
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_BAD_ICRC);
}

Test(parse, transport_header_checks)
{
	uint8_t buf[TEST_FRAME_MAX];
	struct uroce_pkt p;
	uint32_t len;

	/* Expect: TVer != 0 dropped (IBA 9.6.1). */
	len = make(buf, 0x04, UROCE_IP_V4, false, 8);
	buf[43] |= 0x01;
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42, &p), UROCE_WIRE_BAD_TVER);

	/* Expect: RD and reserved opcodes rejected. */
	buf[43] &= 0xF0;
	buf[42] = 0x40;
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42, &p), UROCE_WIRE_BAD_OPCODE);
	buf[42] = 0x1F;
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42, &p), UROCE_WIRE_BAD_OPCODE);

	/* Expect: an opcode without payload may not carry any, nor a pad count. */
	len = make(buf, 0x11, UROCE_IP_V4, false, 0);
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42, &p), UROCE_WIRE_OK);
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42 + 4, &p), UROCE_WIRE_BAD_LENGTH);
	buf[43] |= 0x10;
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42, &p), UROCE_WIRE_BAD_LENGTH);

	/* Expect: a header longer than the packet is a length error. */
	len = make(buf, 0x13, UROCE_IP_V4, false, 0); /* 40-byte header */
	cr_assert_eq(uroce_pkt_parse(buf + 42, 40, &p), UROCE_WIRE_BAD_LENGTH);
	cr_assert_eq(uroce_pkt_parse(buf + 42, 15, &p), UROCE_WIRE_BAD_LENGTH);

	/* Expect: payload + pad must be whole words, pad no larger than it. */
	len = make(buf, 0x04, UROCE_IP_V4, false, 0); /* SEND Only, empty */
	cr_assert_eq(uroce_pkt_parse(buf + 42, 16, &p), UROCE_WIRE_OK);
	cr_assert_eq(p.paylen, 0);
	cr_assert_eq(uroce_pkt_parse(buf + 42, 18, &p), UROCE_WIRE_BAD_LENGTH);
	buf[43] = 0x30; /* pad 3, no payload bytes */
	cr_assert_eq(uroce_pkt_parse(buf + 42, 16, &p), UROCE_WIRE_BAD_LENGTH);
	cr_assert_eq(uroce_pkt_parse(buf + 42, 20, &p), UROCE_WIRE_OK);
	cr_assert_eq(p.paylen, 1);
}

Test(parse, first_and_middle_carry_a_full_pmtu)
{
	uint8_t buf[TEST_FRAME_MAX];
	struct uroce_pkt p;
	uint32_t len;

	/* IBA C9-92: FIRST and MIDDLE carry exactly one PMTU. */
	len = make(buf, 0x00, UROCE_IP_V4, false, 1024);
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42, &p), UROCE_WIRE_OK);
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42 - 4, &p), UROCE_WIRE_BAD_LENGTH);
	len = make(buf, 0x02, UROCE_IP_V4, false, 1020); /* a LAST of 1020 is fine */
	buf[42] = 0x01; /* ... but not as a MIDDLE */
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42, &p), UROCE_WIRE_BAD_LENGTH);
}

Test(parse, payload_larger_than_max_pmtu)
{
	uint8_t buf[TEST_FRAME_MAX];
	struct uroce_pkt p;
	uint32_t len = make(buf, 0x04, UROCE_IP_V4, false, 4096);

	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42, &p), UROCE_WIRE_OK);
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42 + 4, &p), UROCE_WIRE_BAD_LENGTH);
}

Test(parse, double_vlan_tag)
{
	uint8_t buf[TEST_FRAME_MAX], q[TEST_FRAME_MAX];
	struct uroce_frame f;
	struct uroce_pkt p;
	uint32_t len = make(buf, 0x0A, UROCE_IP_V4, true, 40);

	/* Insert an 802.1ad outer tag in front of the 802.1Q tag. */
	memcpy(q, buf, 12);
	uroce_put_be16(q + 12, UROCE_ETHERTYPE_QINQ);
	uroce_put_be16(q + 14, 7);
	memcpy(q + 16, buf + 12, len - 12);
	cr_assert_eq(uroce_parse(q, len + 4, &f, &p), UROCE_WIRE_OK);
	cr_assert(f.has_vlan);
	cr_assert_eq(f.vlan_tci, (5u << 13) | 100, "innermost tag kept");
	cr_assert_eq(f.l3_off, 22);
	cr_assert_eq(p.paylen, 40);
}

Test(parse, rxe_golden_frames)
{
	/* RC RDMA WRITE Only (64 B) and its ACK, captured from Linux rxe. */
	static const char *const frames[] = {
		"52540018000152540018000208004500007c37b0400040117699c6120002c6120001c12112b700"
		"6800000a00ffff00000011807e6610000056150df8900000000241000000405a661a9c8c8862ae"
		"4b5957c7b57294cc1b3b6670f395cc718bd76c4a503ae0aba0fa472c82aadbcd033295b8a52984"
		"c064ea305880fdc90bd43556246f36cf100198bac6",
		"525400180002525400180001080045000030bcb040004011f1e4c6120001c6120002c12112b700"
		"1c00001100ffff00000011007e66101f000001b8e0aa5f",
	};
	uint8_t buf[256];
	struct uroce_frame f;
	struct uroce_pkt p;
	uint32_t len;

	/* Parsed in place: the view points into buf. */
	len = test_unhex(buf, frames[0]);
	cr_assert_eq(uroce_parse(buf, len, &f, &p), UROCE_WIRE_OK);
	cr_assert_str_eq(p.info->name, "RC RDMA WRITE Only");
	cr_assert_eq(p.psn, 0x7e6610);
	cr_assert_eq(p.dqpn, 0x11);
	cr_assert_eq(p.paylen, 64);
	cr_assert_eq(uroce_reth_rkey(p.bth + p.info->off_reth), 0x241);
	cr_assert_eq(uroce_reth_dma_len(p.bth + p.info->off_reth), 64);
	cr_assert_eq(f.sport, 0xC121);

	len = test_unhex(buf, frames[1]);
	cr_assert_eq(uroce_parse(buf, len, &f, &p), UROCE_WIRE_OK);
	cr_assert_eq(p.opcode, 0x11);
	cr_assert_eq(uroce_aeth_syndrome(p.bth + p.info->off_aeth), 0x1F);
	cr_assert_eq(uroce_aeth_msn(p.bth + p.info->off_aeth), 1);
}

Test(parse, strerror_names)
{
	cr_assert_str_eq(uroce_wire_strerror(UROCE_WIRE_OK), "ok");
	cr_assert_str_eq(uroce_wire_strerror(UROCE_WIRE_TRUNCATED), "truncated");
	cr_assert_str_eq(uroce_wire_strerror(UROCE_WIRE_NOT_ROCEV2), "not_rocev2");
	cr_assert_str_eq(uroce_wire_strerror(UROCE_WIRE_BAD_ICRC), "bad_icrc");
	cr_assert_str_eq(uroce_wire_strerror(UROCE_WIRE_BAD_OPCODE), "bad_opcode");
	cr_assert_str_eq(uroce_wire_strerror(UROCE_WIRE_BAD_LENGTH), "bad_length");
	cr_assert_str_eq(uroce_wire_strerror(UROCE_WIRE_ERR_MAX), "unknown");
	cr_assert_str_eq(uroce_wire_strerror((enum uroce_wire_err)-1), "unknown");
}

/* IBA 1.5 A19: FLUSH (0x1C) carries no payload, ATOMIC WRITE (0x1D) exactly
 * 8 bytes, and both are answered by a READ Response Only (0x10) with none. */
Test(parse, iba15_flush_atomic_write_and_empty_read_response)
{
	uint8_t buf[TEST_FRAME_MAX];
	const uint8_t *b;
	struct uroce_pkt p;
	uint32_t len;

	len = make(buf, 0x1C, UROCE_IP_V4, false, 0);
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42, &p), UROCE_WIRE_OK);
	cr_assert_eq(p.paylen, 0);
	b = p.bth;
	/* FETH right after the BTH, then the RETH (VA, R_Key, DMA length). */
	cr_assert_eq(uroce_get_be32(b + 12), 0x11);
	cr_assert_eq(uroce_get_be64(b + 16), 0x0102030405060708ull);
	cr_assert_eq(uroce_get_be32(b + 24), 0x11223344);
	cr_assert_eq(uroce_get_be32(b + 28), 0x00012345);
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42 + 4, &p), UROCE_WIRE_BAD_LENGTH,
		     "FLUSH with data");
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42 - 4, &p), UROCE_WIRE_BAD_LENGTH,
		     "FLUSH without its RETH");

	len = make(buf, 0x1D, UROCE_IP_V4, false, 8);
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42, &p), UROCE_WIRE_OK);
	cr_assert_eq(p.paylen, 8);
	cr_assert_eq(p.payload, p.bth + 28);
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42 - 4, &p), UROCE_WIRE_BAD_LENGTH,
		     "4 bytes");
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42 + 4, &p), UROCE_WIRE_BAD_LENGTH,
		     "12 bytes");
	buf[43] |= 0x10; /* pad 1: 7 bytes */
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42, &p), UROCE_WIRE_BAD_LENGTH, "7 bytes");

	len = make(buf, 0x10, UROCE_IP_V4, false, 0);
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42, &p), UROCE_WIRE_OK);
	cr_assert_eq(p.paylen, 0);
	cr_assert(p.info->mask & UROCE_HDR_AETH);
	cr_assert_eq(len - 42, 12 + 4 + 4, "BTH + AETH + ICRC");
}

/* IBA 1.2 XRC: a request cut inside its XRCETH, or one whose XRCETH is there
 * but whose next header is cut, is malformed (bad_length); the SRQ number
 * reads back. */
Test(parse, xrc_xrceth_and_truncation)
{
	uint8_t buf[TEST_FRAME_MAX];
	struct uroce_frame f;
	struct uroce_pkt p;
	uint32_t len, cut;

	len = make(buf, 0xA4, UROCE_IP_V4, false, 0); /* XRC SEND Only, no data */
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42, &p), UROCE_WIRE_OK);
	cr_assert_eq(uroce_xrceth_srqn(p.bth + p.info->off_xrceth), 0x5A0B0C);
	cr_assert_eq(p.payload, p.bth + 16);
	for (cut = 1; cut <= 4; cut++)
		cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42 - cut, &p),
			     UROCE_WIRE_BAD_LENGTH, "XRCETH cut by %u", cut);

	len = make(buf, 0xB3, UROCE_IP_V6, true, 0); /* XRC CmpSwap */
	cr_assert_eq(parse_exact(buf, len, &f, &p), UROCE_WIRE_OK);
	cr_assert_eq(uroce_pkt_parse(buf + len - 48, 48, &p), UROCE_WIRE_OK);
	cr_assert_eq(uroce_pkt_parse(buf + len - 48, 44, &p), UROCE_WIRE_BAD_LENGTH,
		     "AtomicETH cut after the XRCETH");
	/* An XRC response carries no XRCETH: an ACK is BTH + AETH. */
	len = make(buf, 0xB1, UROCE_IP_V4, false, 0);
	cr_assert_eq(uroce_pkt_parse(buf + 42, len - 42, &p), UROCE_WIRE_OK);
	cr_assert_eq(len - 42, 12 + 4 + 4);
}

/* RFC 1071 by the book: 16-bit big-endian words, end-around carry. */
static uint16_t
ref_ipv4_sum(const uint8_t *h, uint32_t len)
{
	uint32_t sum = 0, i;

	for (i = 0; i < len; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)sum;
}

/* Expect: the header sum of build.c and parse.c (32-bit words, host order)
 * equals RFC 1071's for every IHL, on random and all-ones headers; a length
 * that is no IPv4 header sums to 0 and never checks. */
Test(parse, ipv4_sum_matches_rfc1071)
{
	uint8_t h[60];
	uint32_t ihl, i, round;

	srand(1071);
	for (round = 0; round < 2000; round++) {
		for (i = 0; i < sizeof(h); i++)
			h[i] = round == 0 ? 0xFF : (uint8_t)rand();
		for (ihl = 5; ihl <= 15; ihl++)
			cr_assert_eq(wire_ipv4_sum(h, ihl * 4), ref_ipv4_sum(h, ihl * 4),
				     "round %u, IHL %u", round, ihl);
	}
	cr_assert_eq(wire_ipv4_sum(h, 22), 0);
	cr_assert_eq(wire_ipv4_sum(h, 64), 0);
}
