/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * libFuzzer target for the receive path of lib/wire: any byte string is a
 * frame. The transport-header parser is reached directly as well, because
 * through uroce_parse() the ICRC check stops nearly every random input first.
 * Invariants checked on success: everything the view points at lies inside the
 * input, and the lengths add up as the opcode table says.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_pkt(const uint8_t *start, uint32_t ib_len, const struct uroce_pkt *p)
{
	const struct uroce_opcode_info *oi = p->info;

	if (oi == NULL || oi != uroce_opcode_get(p->opcode))
		abort();
	if (p->bth != start || p->ib_len != ib_len)
		abort();
	if ((uint32_t)oi->hdr_len + p->paylen + p->padcnt + UROCE_ICRC_LEN != ib_len)
		abort();
	if (p->payload != start + oi->hdr_len || p->paylen > UROCE_MAX_PMTU)
		abort();
	if (!(oi->mask & UROCE_F_PAYLOAD) && (p->paylen != 0 || p->padcnt != 0))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uroce_frame f;
	struct uroce_pkt p;
	enum uroce_wire_err err;
	uint8_t *buf;
	uint32_t len;

	if (size > 65536)
		return 0;
	len = (uint32_t)size;
	/* An exact-size copy, so ASan flags any read past the end. */
	buf = malloc(len ? len : 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, len);

	err = uroce_frame_parse(buf, len, &f);
	if (err == UROCE_WIRE_OK) {
		if (f.bth_off > len || f.ib_len > len - f.bth_off || f.l3_off >= f.bth_off)
			abort();
		(void)uroce_icrc_check(buf + f.l3_off,
				       f.bth_off - f.l3_off + f.ib_len - UROCE_ICRC_LEN, f.family);
		if (uroce_pkt_parse(buf + f.bth_off, f.ib_len, &p) == UROCE_WIRE_OK)
			check_pkt(buf + f.bth_off, f.ib_len, &p);
	}
	(void)uroce_parse(buf, len, &f, &p);

	/* The whole input as the InfiniBand part of a packet. */
	if (uroce_pkt_parse(buf, len, &p) == UROCE_WIRE_OK)
		check_pkt(buf, len, &p);

	free(buf);
	return 0;
}
