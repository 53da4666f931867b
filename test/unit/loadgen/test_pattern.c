/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Unit tests of lib/loadgen/pattern.c, the payload pattern "uroce-lg-1":
 * the bytes are pinned (a generator written elsewhere follows doc/loadgen.md),
 * no pattern byte is ever 0, a WRITE's bytes depend only on where they land,
 * and every kind of bad data a transport bug would make is found: a flipped
 * bit, a shifted or misdelivered write, a truncated or mixed-up SEND.
 */

#include <string.h>

#include <criterion/criterion.h>

#include "uroce_loadgen.h"

#define WIN 4096

static uint8_t win[WIN], buf[WIN];

Test(pattern, known_bytes)
{
	static const uint8_t w17[10] = {0x69, 0x7b, 0xcd, 0xd5, 0x63, 0x63, 0x51, 0xa1, 0xd7,
					0x11};
	static const uint8_t s19[8] = {0x03, 0x01, 0x9f, 0xeb, 0x77, 0xa5, 0x91, 0x6d};
	uint64_t k;

	/* Expect: the values doc/loadgen.md's reference code gives (computed
	 * with an independent Python implementation of the specification). */
	cr_assert_eq(uroce_lg_write_seed(17), 0x9e961dd7201af68cull);
	for (k = 0; k < 10; k++)
		cr_assert_eq(uroce_lg_byte(uroce_lg_write_seed(17), k), w17[k], "byte %u",
			     (unsigned int)k);
	cr_assert_eq(uroce_lg_send_seed(19, 5, 64), 0x2002ce580bdcd194ull);
	uroce_lg_send_fill(buf, 19, 5, 64);
	cr_assert_eq(buf[0], 0);
	cr_assert_eq(buf[3], 5, "the tag is big-endian");
	cr_assert_arr_eq(buf + 4, s19, sizeof(s19));
}

Test(pattern, bytes_are_never_zero)
{
	uint64_t seed, k;

	for (seed = 0; seed < 64; seed++)
		for (k = 0; k < 1024; k++)
			cr_assert_eq(uroce_lg_byte(seed * 0x1234567ull, k) & 1, 1);
}

Test(pattern, write_bytes_depend_only_on_the_offset)
{
	uint64_t off;

	uroce_lg_write_fill(win, 0x123, 0, WIN);
	/* Expect: a WRITE of any length at any offset carries exactly the bytes
	 * a whole-window fill puts there, so overlapping and repeated writes
	 * (a pcap replayed in a loop) leave the window valid. */
	for (off = 0; off < 64; off++) {
		uroce_lg_write_fill(buf, 0x123, off, 77);
		cr_assert_arr_eq(buf, win + off, 77, "offset %u", (unsigned int)off);
		cr_assert_eq(uroce_lg_write_check(win + off, 0x123, off, 77), 77);
	}
	cr_assert_eq(uroce_lg_write_check(win, 0x123, 0, 0), 0);
}

Test(pattern, write_check_finds_a_flipped_bit_where_it_is)
{
	static const uint64_t at[] = {0, 1, 7, 8, 63, 64, 1000, WIN - 1};
	unsigned int i, bit;

	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		for (bit = 0; bit < 8; bit++) {
			uroce_lg_write_fill(win, 9, 0, WIN);
			win[at[i]] ^= (uint8_t)(1u << bit);
			cr_assert_eq(uroce_lg_write_check(win, 9, 0, WIN), at[i]);
		}
}

Test(pattern, shifted_or_misdelivered_writes_fail)
{
	/* Expect: bytes meant for offset 8 placed at offset 0 fail at once. */
	uroce_lg_write_fill(buf, 9, 8, 64);
	cr_assert_lt(uroce_lg_write_check(buf, 9, 0, 64), 8);
	/* Expect: bytes for QP 9's window fail as QP 10's. */
	uroce_lg_write_fill(buf, 9, 0, 64);
	cr_assert_lt(uroce_lg_write_check(buf, 10, 0, 64), 8);
}

Test(pattern, scan_counts_written_unwritten_and_bad)
{
	struct uroce_lg_scan sc;

	memset(win, 0, WIN);
	uroce_lg_write_scan(win, 5, WIN, &sc);
	cr_assert_eq(sc.unwritten, WIN);
	cr_assert_eq(sc.written + sc.bad, 0);
	uroce_lg_write_fill(win + 128, 5, 128, 256);
	uroce_lg_write_scan(win, 5, WIN, &sc);
	cr_assert_eq(sc.written, 256);
	cr_assert_eq(sc.unwritten, WIN - 256);
	cr_assert_eq(sc.bad, 0);
	/* Expect: a corrupted byte, and bytes of another QP, are bad. */
	win[200] ^= 0x10;
	uroce_lg_write_fill(win + 1024, 6, 1024, 16);
	uroce_lg_write_scan(win, 5, WIN, &sc);
	cr_assert_eq(sc.first_bad, 200);
	cr_assert_geq(sc.bad, 1 + 14, "QP 6's bytes mostly differ from QP 5's");
	cr_assert_eq(sc.written + sc.unwritten + sc.bad, WIN);
}

Test(pattern, send_round_trip_every_length)
{
	static const uint32_t lens[] = {0, 1, 2, 3, 4, 5, 8, 63, 64, 1024, WIN};
	unsigned int i;
	uint32_t tag;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uroce_lg_send_fill(buf, 77, 0xabcdef01u, lens[i]);
		cr_assert_eq(uroce_lg_send_check(buf, 77, lens[i], &tag), lens[i], "len %u",
			     lens[i]);
		cr_assert_eq(tag, lens[i] >= UROCE_LG_TAG_LEN ? 0xabcdef01u : 0u, "len %u",
			     lens[i]);
	}
}

Test(pattern, send_check_finds_bad_payloads)
{
	uint32_t len = 64;

	/* Expect: a zeroed buffer (a receive the daemon never wrote) fails: at
	 * byte 4 (the tag reads 0, the first pattern byte is not), and at byte
	 * 0 below 4 bytes. */
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(uroce_lg_send_check(buf, 1, len, NULL), 4);
	cr_assert_eq(uroce_lg_send_check(buf, 1, 3, NULL), 0);
	/* Expect: a payload for another QP fails. */
	uroce_lg_send_fill(buf, 1, 7, len);
	cr_assert_lt(uroce_lg_send_check(buf, 2, len, NULL), len);
	/* Expect: a truncated payload fails (the length is in the seed). */
	cr_assert_lt(uroce_lg_send_check(buf, 1, len - 1, NULL), len - 1);
	/* Expect: the head of message 7 with the tag of message 8 fails. */
	buf[3] = 8;
	cr_assert_lt(uroce_lg_send_check(buf, 1, len, NULL), len);
	/* Expect: one flipped bit in the body is found where it is. */
	uroce_lg_send_fill(buf, 1, 7, len);
	buf[40] ^= 0x80;
	cr_assert_eq(uroce_lg_send_check(buf, 1, len, NULL), 40);
}
