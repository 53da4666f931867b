/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* The opcode table (lib/wire/opcode.c) against IBA 9.2.1 table 35. */

#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "uroce_wire.h"

struct hdr_desc {
	uint32_t bit;
	uint8_t len;
	size_t off_field;
};

#define HD(bit, len, field) {bit, len, offsetof(struct uroce_opcode_info, field)}

/* In IBA header order (9.2). */
static const struct hdr_desc hdrs[] = {
	HD(UROCE_HDR_DETH, UROCE_DETH_LEN, off_deth),
	HD(UROCE_HDR_XRCETH, UROCE_XRCETH_LEN, off_xrceth),
	HD(UROCE_HDR_FETH, UROCE_FETH_LEN, off_feth),
	HD(UROCE_HDR_RETH, UROCE_RETH_LEN, off_reth),
	HD(UROCE_HDR_AETH, UROCE_AETH_LEN, off_aeth),
	HD(UROCE_HDR_ATMETH, UROCE_ATMETH_LEN, off_atmeth),
	HD(UROCE_HDR_ATMACK, UROCE_ATMACK_LEN, off_atmack),
	HD(UROCE_HDR_IMMDT, UROCE_IMMDT_LEN, off_immdt),
	HD(UROCE_HDR_IETH, UROCE_IETH_LEN, off_ieth),
};

Test(opcode, count_of_valid_entries)
{
	int n = 0, i;

	for (i = 0; i < 256; i++)
		n += uroce_opcode_get((uint8_t)i) != NULL;
	/* Expect: 23 RC + FLUSH + ATOMIC WRITE + 12 UC + 2 UD + CNP = 40, plus
	 * the 25 XRC twins of the RC ones (RD is not supported). */
	cr_assert_eq(n, 65);
}

Test(opcode, offsets_follow_iba_order_and_lengths_add_up)
{
	int i;
	size_t h;

	for (i = 0; i < 256; i++) {
		const struct uroce_opcode_info *oi = uroce_opcode_get((uint8_t)i);
		uint32_t expect_off = UROCE_BTH_LEN;

		if (oi == NULL)
			continue;
		for (h = 0; h < UROCE_ARRAY_SIZE(hdrs); h++) {
			uint8_t off = *((const uint8_t *)oi + hdrs[h].off_field);

			if (oi->mask & hdrs[h].bit) {
				cr_assert_eq(off, expect_off, "opcode 0x%02x header %zu at %u, not %u",
					     i, h, off, expect_off);
				expect_off += hdrs[h].len;
			} else {
				cr_assert_eq(off, 0, "opcode 0x%02x: absent header has offset", i);
			}
		}
		if (oi->mask & UROCE_HDR_CNPRSVD)
			expect_off += UROCE_CNP_RSVD_LEN;
		cr_assert_eq(oi->hdr_len, expect_off, "opcode 0x%02x (%s)", i, oi->name);
	}
}

Test(opcode, names_carry_the_service_prefix)
{
	int i;

	for (i = 0; i < 256; i++) {
		const struct uroce_opcode_info *oi = uroce_opcode_get((uint8_t)i);
		const char *prefix;

		if (oi == NULL)
			continue;
		switch (i & 0xE0) {
		case UROCE_SVC_RC: prefix = "RC "; break;
		case UROCE_SVC_UC: prefix = "UC "; break;
		case UROCE_SVC_UD: prefix = "UD "; break;
		case UROCE_SVC_XRC: prefix = "XRC "; break;
		default: prefix = "CNP"; break;
		}
		cr_assert_eq(strncmp(oi->name, prefix, strlen(prefix)), 0, "0x%02x %s", i, oi->name);
	}
}

Test(opcode, reserved_and_rd_opcodes_are_invalid)
{
	int i;

	/* IBA table 35: RC 0x15 and 0x18-0x1F reserved here except IBA 1.5's
	 * FLUSH 0x1C and ATOMIC WRITE 0x1D; RD (0x40-0x5F) unsupported. */
	cr_assert_null(uroce_opcode_get(0x15));
	for (i = 0x18; i <= 0x1F; i++)
		if (i != 0x1C && i != 0x1D)
			cr_assert_null(uroce_opcode_get((uint8_t)i));
	for (i = 0x40; i <= 0x5F; i++)
		cr_assert_null(uroce_opcode_get((uint8_t)i));
	/* UC has no READ, ACK or atomic (IBA 9.8.1). */
	for (i = 0x2C; i <= 0x3F; i++)
		cr_assert_null(uroce_opcode_get((uint8_t)i));
	/* UD has only SEND Only (with immediate). */
	for (i = 0x60; i <= 0x7F; i++)
		if (i != 0x64 && i != 0x65)
			cr_assert_null(uroce_opcode_get((uint8_t)i));
	for (i = 0x82; i <= 0x9F; i++)
		cr_assert_null(uroce_opcode_get((uint8_t)i));
	/* XRC (0xA0-0xBF) has exactly RC's operations. */
	for (i = 0; i <= 0x1F; i++)
		cr_assert_eq(uroce_opcode_get((uint8_t)(0xA0 | i)) != NULL,
			     uroce_opcode_get((uint8_t)i) != NULL, "XRC op 0x%02x", i);
	for (i = 0xC0; i <= 0xFF; i++)
		cr_assert_null(uroce_opcode_get((uint8_t)i));
}

/* IBA 1.2 XRC: every request carries the XRCETH right after the BTH, before
 * RETH, AtomicETH or FETH; responses and ACKs have none; otherwise an XRC
 * opcode is its RC twin. */
Test(opcode, xrc_requests_carry_xrceth_after_bth)
{
	int op;

	for (op = 0; op <= 0x1F; op++) {
		const struct uroce_opcode_info *rc = uroce_opcode_get((uint8_t)op);
		const struct uroce_opcode_info *x = uroce_opcode_get((uint8_t)(0xA0 | op));

		if (rc == NULL)
			continue;
		if (rc->mask & UROCE_F_REQ) {
			cr_assert(x->mask & UROCE_HDR_XRCETH, "0x%02x", 0xA0 | op);
			cr_assert_eq(x->off_xrceth, UROCE_BTH_LEN);
			cr_assert_eq(x->hdr_len, rc->hdr_len + UROCE_XRCETH_LEN);
			cr_assert_eq(x->mask & ~UROCE_HDR_XRCETH, rc->mask & ~UROCE_F_LATE_ICRC);
		} else {
			cr_assert_eq(x->mask, rc->mask & ~UROCE_F_LATE_ICRC, "0x%02x", 0xA0 | op);
			cr_assert_eq(x->off_xrceth, 0);
			cr_assert_eq(x->hdr_len, rc->hdr_len);
		}
	}
	cr_assert_str_eq(uroce_opcode_get(0xA4)->name, "XRC SEND Only");
	cr_assert_eq(uroce_opcode_get(0xB4)->off_atmeth, 16); /* FetchAdd */
	cr_assert_eq(uroce_opcode_get(0xAA)->off_reth, 16);   /* WRITE Only */
	cr_assert_eq(uroce_opcode_get(0xBC)->off_feth, 16);   /* FLUSH */
	cr_assert_eq(uroce_opcode_get(0xBC)->off_reth, 20);
}

Test(opcode, known_entries)
{
	const struct uroce_opcode_info *oi;

	oi = uroce_opcode_get(0x0A);
	cr_assert_str_eq(oi->name, "RC RDMA WRITE Only");
	cr_assert(oi->mask & UROCE_HDR_RETH);
	cr_assert(oi->mask & UROCE_F_START && oi->mask & UROCE_F_END);
	cr_assert_eq(oi->hdr_len, 28);

	oi = uroce_opcode_get(0x12);
	cr_assert_str_eq(oi->name, "RC ATOMIC Acknowledge");
	cr_assert_eq(oi->off_aeth, 12);
	cr_assert_eq(oi->off_atmack, 16);
	cr_assert_not(oi->mask & UROCE_F_PAYLOAD);

	oi = uroce_opcode_get(0x65);
	cr_assert_str_eq(oi->name, "UD SEND Only with Immediate");
	cr_assert_eq(oi->off_deth, 12);
	cr_assert_eq(oi->off_immdt, 20);

	oi = uroce_opcode_get(UROCE_OPCODE_CNP);
	cr_assert_str_eq(oi->name, "CNP");
	cr_assert_eq(oi->hdr_len, 28);
	cr_assert(oi->mask & UROCE_F_CNP);
}

Test(opcode, roles_are_consistent)
{
	int i;

	for (i = 0; i < 256; i++) {
		const struct uroce_opcode_info *oi = uroce_opcode_get((uint8_t)i);
		uint32_t m;

		if (oi == NULL)
			continue;
		m = oi->mask;
		/* Exactly one of request, response, CNP. */
		cr_assert_eq(!!(m & UROCE_F_REQ) + !!(m & UROCE_F_RESP) + !!(m & UROCE_F_CNP), 1,
			     "0x%02x", i);
		/* FIRST/MIDDLE must carry a full PMTU; nothing else does. */
		cr_assert_eq(!!(m & UROCE_F_FULL_PMTU),
			     !!(m & UROCE_F_MIDDLE) || ((m & UROCE_F_START) && !(m & UROCE_F_END) &&
							(m & UROCE_F_PAYLOAD)),
			     "0x%02x", i);
		/* Immediate only on a message's last packet (IBA 9.4.1). */
		if (m & UROCE_HDR_IMMDT)
			cr_assert(m & UROCE_F_END, "0x%02x", i);
		/* RETH on WRITE FIRST/ONLY, READ request, and IBA 1.5's FLUSH and
		 * ATOMIC WRITE only; the FETH on FLUSH only. */
		if (m & UROCE_HDR_RETH)
			cr_assert((m & UROCE_F_START) &&
				  (m & (UROCE_F_WRITE | UROCE_F_READ | UROCE_F_FLUSH |
					UROCE_F_ATOMIC_WRITE)) && (m & UROCE_F_REQ), "0x%02x", i);
		cr_assert_eq(!!(m & UROCE_HDR_FETH), !!(m & UROCE_F_FLUSH), "0x%02x", i);
		/* The same operation appears in RC and UC with the same layout. */
		if (i < 0x20 && (m & (UROCE_F_SEND | UROCE_F_WRITE)) && !(m & UROCE_HDR_IETH)) {
			const struct uroce_opcode_info *uc = uroce_opcode_get((uint8_t)(i | 0x20));

			cr_assert_not_null(uc, "UC twin of 0x%02x", i);
			cr_assert_eq(uc->mask, m & ~UROCE_F_LATE_ICRC, "UC twin of 0x%02x", i);
			cr_assert_eq(uc->hdr_len, oi->hdr_len);
		}
	}
}

/* A late ICRC (checked as the payload is copied) only where the receiver's
 * state, not the packet, says where the payload goes: RC SEND and WRITE
 * MIDDLE and LAST without immediate or invalidate, every READ response
 * carrying data, and UD SENDs (into the next receive WQE). Never on an RC
 * message's first request packet (its RETH or the receive WQE it takes),
 * UC or XRC. */
Test(opcode, late_icrc_only_where_state_places_the_payload)
{
	static const uint8_t late[] = {
		UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_SEND_MIDDLE),
		UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_SEND_LAST),
		UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_RDMA_WRITE_MIDDLE),
		UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_RDMA_WRITE_LAST),
		UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_RDMA_READ_RESPONSE_FIRST),
		UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_RDMA_READ_RESPONSE_MIDDLE),
		UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_RDMA_READ_RESPONSE_LAST),
		UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_RDMA_READ_RESPONSE_ONLY),
		UROCE_OPCODE(UROCE_SVC_UD, UROCE_OP_SEND_ONLY),
		UROCE_OPCODE(UROCE_SVC_UD, UROCE_OP_SEND_ONLY_WITH_IMMEDIATE),
	};
	unsigned int i, j, n = 0;

	for (i = 0; i < 256; i++) {
		const struct uroce_opcode_info *oi = uroce_opcode_get((uint8_t)i);
		bool want = false;

		for (j = 0; j < UROCE_ARRAY_SIZE(late); j++)
			want |= late[j] == i;
		if (oi == NULL) {
			cr_assert(!want);
			continue;
		}
		cr_assert_eq(!!(oi->mask & UROCE_F_LATE_ICRC), want, "0x%02x %s", i, oi->name);
		n += want;
	}
	cr_assert_eq(n, UROCE_ARRAY_SIZE(late));
}

/* IBA 1.5 A19 (rxe's ib_pack.h values): FLUSH is BTH + FETH + RETH without
 * data, ATOMIC WRITE BTH + RETH + 8 bytes; both RC only. */
Test(opcode, iba15_flush_and_atomic_write)
{
	const struct uroce_opcode_info *fl = uroce_opcode_get(0x1C);
	const struct uroce_opcode_info *aw = uroce_opcode_get(0x1D);

	cr_assert_not_null(fl);
	cr_assert_str_eq(fl->name, "RC FLUSH");
	cr_assert_eq(fl->off_feth, 12);
	cr_assert_eq(fl->off_reth, 16);
	cr_assert_eq(fl->hdr_len, 32);
	cr_assert(fl->mask & UROCE_F_REQ && fl->mask & UROCE_F_FLUSH);
	cr_assert_not(fl->mask & (UROCE_F_PAYLOAD | UROCE_F_WRITE | UROCE_F_READ));
	cr_assert_not_null(aw);
	cr_assert_str_eq(aw->name, "RC ATOMIC WRITE");
	cr_assert_eq(aw->off_reth, 12);
	cr_assert_eq(aw->off_feth, 0);
	cr_assert_eq(aw->hdr_len, 28);
	cr_assert(aw->mask & UROCE_F_PAYLOAD && aw->mask & UROCE_F_ATOMIC_WRITE);
	cr_assert_not(aw->mask & (UROCE_F_WRITE | UROCE_F_ATOMIC | UROCE_F_READ));
	cr_assert_null(uroce_opcode_get(UROCE_OPCODE(UROCE_SVC_UC, UROCE_OP_FLUSH)));
	cr_assert_null(uroce_opcode_get(UROCE_OPCODE(UROCE_SVC_UC, UROCE_OP_ATOMIC_WRITE)));
}

/* FETH (A19.4.1): placement type bits 3:0, selectivity bits 5:4, the rest
 * reserved; only GLOBAL/PERSISTENT and RANGE/MR mean something. */
Test(opcode, feth_fields_and_validity)
{
	uint32_t t;

	cr_assert_eq(uroce_feth_make(UROCE_FLUSH_GLOBAL, UROCE_FLUSH_RANGE), 0x01);
	cr_assert_eq(uroce_feth_make(UROCE_FLUSH_GLOBAL, UROCE_FLUSH_MR), 0x11);
	cr_assert_eq(uroce_feth_make(UROCE_FLUSH_PERSISTENT, UROCE_FLUSH_MR), 0x12);
	cr_assert_eq(uroce_feth_type(0x13), 3);
	cr_assert_eq(uroce_feth_level(0x13), 1);
	cr_assert(uroce_feth_valid(0x01));
	cr_assert(uroce_feth_valid(0x11));
	cr_assert(uroce_feth_valid(0x03));
	cr_assert_not(uroce_feth_valid(0x00), "no placement type");
	cr_assert_not(uroce_feth_valid(0x10), "no placement type");
	cr_assert_not(uroce_feth_valid(0x04), "unknown placement type bit");
	cr_assert_not(uroce_feth_valid(0x09), "unknown placement type bit");
	cr_assert_not(uroce_feth_valid(0x21), "selectivity 2");
	cr_assert_not(uroce_feth_valid(0x31), "selectivity 3");
	for (t = 6; t < 32; t++)
		cr_assert_not(uroce_feth_valid(0x01 | 1u << t), "reserved bit %u", t);
}
