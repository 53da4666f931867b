/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* Protocol arithmetic (lib/wire/arith.c and the inline helpers of
 * uroce_wire.h), each at its wrap-around and edges; and the small copy and
 * clear of uroce_common.h that the packet paths use. */

#include <string.h>

#include <criterion/criterion.h>

#include "uroce_wire.h"

Test(psn, add_wraps_at_2_24)
{
	cr_assert_eq(uroce_psn_add(0xFFFFFF, 1), 0);
	cr_assert_eq(uroce_psn_add(0xFFFFFE, 5), 3);
	cr_assert_eq(uroce_psn_add(0, 0xFFFFFF), 0xFFFFFF);
	cr_assert_eq(uroce_psn_add(0x123456, 0x1000000), 0x123456);
}

Test(psn, diff_is_modular_with_a_2_23_window)
{
	/* IBA 9.7.1: PSNs compare within half the 24-bit space. */
	cr_assert_eq(uroce_psn_diff(0, 0xFFFFFF), 1);
	cr_assert_eq(uroce_psn_diff(0xFFFFFF, 0), -1);
	cr_assert_eq(uroce_psn_diff(5, 0xFFFFFB), 10);
	cr_assert_eq(uroce_psn_diff(0x7FFFFF, 0), 0x7FFFFF);
	cr_assert_eq(uroce_psn_diff(0x800000, 0), -0x800000);
	cr_assert_eq(uroce_psn_diff(0, 0x800000), -0x800000);
	cr_assert_eq(uroce_psn_diff(0x800001, 1), -0x800000);
	cr_assert(uroce_psn_before(0xFFFFFF, 0));
	cr_assert_not(uroce_psn_before(0, 0xFFFFFF));
	cr_assert_not(uroce_psn_before(7, 7));
	/* Bits above 24 are ignored. */
	cr_assert_eq(uroce_psn_diff(0x1000005, 3), 2);
}

Test(psn, diff_agrees_with_add_everywhere)
{
	uint32_t base, n;

	for (base = 0; base < 0x1000000; base += 0x3FF1)
		for (n = 0; n < 0x800000; n += 0x1FFF3) {
			cr_assert_eq(uroce_psn_diff(uroce_psn_add(base, n), base), (int32_t)n);
			if (n)
				cr_assert_eq(uroce_psn_diff(base, uroce_psn_add(base, n)), -(int32_t)n);
		}
}

Test(segmentation, packets_per_message)
{
	uint8_t e;

	for (e = 1; e <= 5; e++) {
		uint32_t mtu = uroce_mtu_bytes(e);

		cr_assert_eq(uroce_num_pkts(0, mtu), 1, "a zero-byte message is one packet");
		cr_assert_eq(uroce_num_pkts(1, mtu), 1);
		cr_assert_eq(uroce_num_pkts(mtu - 1, mtu), 1);
		cr_assert_eq(uroce_num_pkts(mtu, mtu), 1);
		cr_assert_eq(uroce_num_pkts(mtu + 1, mtu), 2);
		cr_assert_eq(uroce_num_pkts(2 * mtu, mtu), 2);
		cr_assert_eq(uroce_num_pkts(1ull << 31, mtu), (1u << 31) / mtu);
	}
}

Test(segmentation, pad)
{
	cr_assert_eq(uroce_pad(0), 0);
	cr_assert_eq(uroce_pad(1), 3);
	cr_assert_eq(uroce_pad(2), 2);
	cr_assert_eq(uroce_pad(3), 1);
	cr_assert_eq(uroce_pad(4), 0);
	cr_assert_eq(uroce_pad(4095), 1);
}

Test(mtu, enum_round_trip)
{
	cr_assert_eq(uroce_mtu_bytes(1), 256);
	cr_assert_eq(uroce_mtu_bytes(3), 1024);
	cr_assert_eq(uroce_mtu_bytes(5), 4096);
	cr_assert_eq(uroce_mtu_bytes(0), 0);
	cr_assert_eq(uroce_mtu_bytes(6), 0);
	cr_assert_eq(uroce_mtu_enum(256), 1);
	cr_assert_eq(uroce_mtu_enum(4096), 5);
	cr_assert_eq(uroce_mtu_enum(1500), 0);
	cr_assert_eq(uroce_mtu_enum(8192), 0);
	cr_assert_eq(uroce_mtu_enum(0), 0);
}

Test(aeth, syndrome_encoding)
{
	/* IBA 9.7.5.1 table 43/44: bits 6:5 type, 4:0 credit/timer/NAK code. */
	cr_assert_eq(uroce_aeth_type(0x1F), UROCE_AETH_ACK);
	cr_assert_eq(uroce_aeth_value(0x1F), 0x1F);
	cr_assert_eq(uroce_aeth_rnr(14), 0x2E);
	cr_assert_eq(uroce_aeth_type(0x2E), UROCE_AETH_RNR_NAK);
	cr_assert_eq(uroce_aeth_rnr(0xFF), 0x3F, "timer is five bits");
	cr_assert_eq(uroce_aeth_nak(UROCE_NAK_PSN_SEQ_ERR), 0x60);
	cr_assert_eq(uroce_aeth_nak(UROCE_NAK_INVALID_REQUEST), 0x61);
	cr_assert_eq(uroce_aeth_nak(UROCE_NAK_REMOTE_ACCESS_ERR), 0x62);
	cr_assert_eq(uroce_aeth_nak(UROCE_NAK_REMOTE_OP_ERR), 0x63);
	cr_assert_eq(uroce_aeth_type(0x63), UROCE_AETH_NAK);
	cr_assert_eq(uroce_aeth_value(0x63), UROCE_NAK_REMOTE_OP_ERR);
}

Test(timers, rnr_nak_timer_table)
{
	/* IBA table 45. */
	cr_assert_eq(uroce_rnr_timer_us(0), 655360);
	cr_assert_eq(uroce_rnr_timer_us(1), 10);
	cr_assert_eq(uroce_rnr_timer_us(5), 60);
	cr_assert_eq(uroce_rnr_timer_us(12), 640);
	cr_assert_eq(uroce_rnr_timer_us(14), 1280);
	cr_assert_eq(uroce_rnr_timer_us(16), 2560);
	cr_assert_eq(uroce_rnr_timer_us(31), 491520);
	cr_assert_eq(uroce_rnr_timer_us(32 + 1), 10, "only five bits count");
}

Test(timers, rnr_table_is_monotonic_after_code_0)
{
	uint8_t c;

	for (c = 2; c < 32; c++)
		cr_assert_gt(uroce_rnr_timer_us(c), uroce_rnr_timer_us(c - 1));
}

Test(timers, local_ack_timeout)
{
	/* IBA 9.7.6.1.3: 4.096 us * 2^timeout, 0 = disabled. */
	cr_assert_eq(uroce_ack_timeout_us(0), 0);
	cr_assert_eq(uroce_ack_timeout_us(1), 9);        /* 8.192 us */
	cr_assert_eq(uroce_ack_timeout_us(8), 1049);     /* 1048.576 us */
	cr_assert_eq(uroce_ack_timeout_us(14), 67109);   /* 67.108864 ms */
	cr_assert_eq(uroce_ack_timeout_us(31), 8796093023ull);
	cr_assert_eq(uroce_ack_timeout_us(40), 8796093023ull, "clamped to 31");
}

/* uroce_copy_small() and uroce_zero_small() (uroce_common.h), which the
 * per-packet paths use instead of memcpy() and memset(): every length from
 * 0 to past their inline limits, at every alignment of a 16-byte line,
 * touches exactly the bytes asked for. */
#define SMALL_MAX 160
#define GUARD 32
#define FILL 0xA5

/* @p dst (of @p size bytes, all FILL before the call) holds @p want's @p n
 * bytes at @p at (zeros where @p want is NULL) and FILL everywhere else. */
static void
expect_only(const uint8_t *dst, size_t size, size_t at, size_t n, const uint8_t *want)
{
	size_t i;

	for (i = 0; i < size; i++) {
		uint8_t w = i < at || i >= at + n ? FILL : want != NULL ? want[i - at] : 0;

		cr_assert_eq(dst[i], w, "length %zu, at %zu: byte %zu is %#x, not %#x", n, at, i,
			     dst[i], w);
	}
}

Test(small_ops, copy_every_length_and_alignment)
{
	uint8_t src[SMALL_MAX + 16], dst[GUARD + SMALL_MAX + 16 + GUARD];
	unsigned int n, a, i;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 1);
	for (n = 0; n <= SMALL_MAX; n++) {
		for (a = 0; a < 16; a++) {
			memset(dst, FILL, sizeof(dst));
			uroce_copy_small(dst + GUARD + a, src + (15 - a), n);
			expect_only(dst, sizeof(dst), GUARD + a, n, src + (15 - a));
		}
	}
}

Test(small_ops, zero_every_length_and_alignment)
{
	uint8_t dst[GUARD + SMALL_MAX + 16 + GUARD];
	unsigned int n, a;

	for (n = 0; n <= SMALL_MAX; n++) {
		for (a = 0; a < 16; a++) {
			memset(dst, FILL, sizeof(dst));
			uroce_zero_small(dst + GUARD + a, n);
			expect_only(dst, sizeof(dst), GUARD + a, n, NULL);
		}
	}
}
