/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Protocol arithmetic both ends must agree on: the RNR NAK timer encoding and
 * the local ACK timeout. PSN helpers are inline in uroce_wire.h.
 */

#include "uroce_wire.h"

/* IBA table 45, "Encoding for RNR NAK Timer Field", in microseconds. */
static const uint32_t rnr_timer_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

uint32_t
uroce_rnr_timer_us(uint8_t code)
{
	return rnr_timer_us[code & 0x1F];
}

uint64_t
uroce_ack_timeout_us(uint8_t timeout)
{
	uint64_t ns;

	/* IBA 9.7.6.1.3: 4.096 us * 2^timeout; 0 disables the timer. */
	if (timeout == 0)
		return 0;
	if (timeout > 31)
		timeout = 31;
	ns = 4096ull << timeout;
	return (ns + 999) / 1000;
}
