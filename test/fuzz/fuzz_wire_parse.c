/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * libFuzzer target for the receive path of lib/wire: any byte string is a
 * frame. The transport-header parser is reached directly as well, because
 * through uroce_parse() the ICRC check stops nearly every random input first.
 * Invariants checked on success: everything the view points at lies inside the
 * input, and the lengths add up as the opcode table says. The input is also
 * cut into the three pieces of a zero-copy loop frame for uroce_parse_split().
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

/* A packet parsed with its ICRC left late: the check in place and the check
 * of a copy agree with each other and with the whole check (@p whole_ok),
 * and the copy is the payload. */
static void
late_agrees(const struct uroce_pkt *p, bool whole_ok)
{
	uint8_t *copy;
	bool in_place, copied;

	if (!(p->info->mask & UROCE_F_LATE_ICRC) || p->paylen < UROCE_LATE_ICRC_MIN)
		abort();
	copy = malloc(p->paylen);
	if (copy == NULL)
		return;
	in_place = uroce_pkt_icrc_late(p);
	copied = uroce_pkt_icrc_end(p, uroce_crc32_copy(p->icrc_seed, copy, p->payload, p->paylen));
	if (in_place != copied || in_place != whole_ok || memcmp(copy, p->payload, p->paylen) != 0)
		abort();
	free(copy);
}

/*
 * The input as [2 bytes: header bytes N][N bytes of headers][payload][ICRC]:
 * each piece in an exact-size buffer (the header piece with the room the
 * contract asks for, zero past N, and the pad as zeros before the ICRC), so
 * that ASan flags a read outside any of them.
 */
static void
split_case(const uint8_t *data, uint32_t len)
{
	uint32_t hl, paylen, pad, room;
	uint8_t *hdr, *pay, *trailer;
	struct uroce_frame f;
	struct uroce_pkt p;

	if (len < 2 + UROCE_ICRC_LEN)
		return;
	hl = (uint32_t)data[0] << 8 | data[1];
	data += 2;
	len -= 2;
	if (hl > len - UROCE_ICRC_LEN)
		return;
	paylen = len - hl - UROCE_ICRC_LEN;
	pad = uroce_pad(paylen);
	room = hl + paylen + pad + UROCE_ICRC_LEN;
	hdr = calloc(1, room);
	pay = malloc(paylen ? paylen : 1);
	trailer = calloc(1, pad + UROCE_ICRC_LEN);
	if (hdr != NULL && pay != NULL && trailer != NULL) {
		memcpy(hdr, data, hl);
		memcpy(pay, data + hl, paylen);
		memcpy(trailer + pad, data + hl + paylen, UROCE_ICRC_LEN);
		if (uroce_parse_split(hdr, hl, pay, paylen, trailer, false, &f, &p) == UROCE_WIRE_OK &&
		    (p.payload != pay || p.paylen != paylen || p.bth < hdr ||
		     p.bth + p.info->hdr_len != hdr + hl || p.icrc_late))
			abort();
		if (uroce_parse_split(hdr, hl, pay, paylen, trailer, true, &f, &p) == UROCE_WIRE_OK) {
			if (p.payload != pay || p.paylen != paylen)
				abort();
			if (p.icrc_late)
				late_agrees(&p, uroce_icrc_check2(hdr + f.l3_off, hl - f.l3_off, pay,
								  paylen, pad, trailer + pad,
								  f.family));
		}
	}
	free(hdr);
	free(pay);
	free(trailer);
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
	err = uroce_parse(buf, len, &f, &p);
	/* Late, the same verdict: OK and checked, or OK with a late check that
	 * says what the whole one said. */
	if (uroce_frame_parse(buf, len, &f) == UROCE_WIRE_OK &&
	    uroce_parse_rest(buf, &f, true, &p) == UROCE_WIRE_OK) {
		if (p.icrc_late)
			late_agrees(&p, err == UROCE_WIRE_OK);
		else if (err != UROCE_WIRE_OK)
			abort();
	}

	/* The whole input as the InfiniBand part of a packet. */
	if (uroce_pkt_parse(buf, len, &p) == UROCE_WIRE_OK)
		check_pkt(buf, len, &p);

	split_case(buf, len);
	free(buf);
	return 0;
}
