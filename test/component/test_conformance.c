/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Conformance against a hostile peer. The responder's memory is one buffer
 * of canary bytes; an MR covers only its middle page. Every test injects a
 * malformed or malicious request and then proves that not one byte outside
 * the target range changed (and, for rejected requests, not one byte at
 * all), and that the responder answered as IBA says.
 */

#include "simproto.h"

#define R 1
#define PAGE 4096
#define CANARY 0xC5
#define MR_IOVA 0x10000ull

struct hostile {
	struct proto p;
	uint8_t *mem;             /* 3 pages: canary | target | canary */
	uint8_t *snap;
	struct uroce_eng_mr *rw;      /* all rights over the middle page */
	struct uroce_eng_mr *ro;      /* REMOTE_READ only, same page, other iova */
	struct uroce_eng_mr *other;   /* an MR of another PD */
	struct uroce_eng_pd *pd2;
};

static void
h_init(struct hostile *h, int qp_access)
{
	struct sim_qp_opts o = { .psn0 = 1000, .access = qp_access };

	proto_init(&h->p, &o);
	h->mem = malloc(3 * PAGE);
	h->snap = malloc(3 * PAGE);
	cr_assert(h->mem && h->snap);
	memset(h->mem, CANARY, 3 * PAGE);
	h->rw = uroce_eng_mr_reg(h->p.s[R].pd, h->mem + PAGE, MR_IOVA, PAGE,
			     UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
			     UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC);
	h->ro = uroce_eng_mr_reg(h->p.s[R].pd, h->mem + PAGE, 0x20000, PAGE, UROCE_ACCESS_REMOTE_READ);
	h->pd2 = uroce_eng_pd_alloc(simwire_engine(h->p.sw, R));
	h->other = uroce_eng_mr_reg(h->pd2, h->mem + PAGE, 0x30000, PAGE,
				UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE);
	cr_assert(h->rw && h->ro && h->pd2 && h->other);
	memcpy(h->snap, h->mem, 3 * PAGE);
}

static void
h_fini(struct hostile *h)
{
	proto_fini(&h->p);
	free(h->mem);
	free(h->snap);
}

/* Not one byte of the 3 pages changed. */
static void
expect_untouched(struct hostile *h, const char *what)
{
	uint32_t i;

	for (i = 0; i < 3 * PAGE; i++)
		if (h->mem[i] != h->snap[i]) {
			cr_expect_fail("%s: byte %d of the buffer changed", what, (int)i - PAGE);
			return;
		}
}

/* Only [off, off + len) of the MR page may differ from the snapshot. */
static void
expect_only_range(struct hostile *h, uint32_t off, uint32_t len, const char *what)
{
	uint32_t i;

	for (i = 0; i < 3 * PAGE; i++) {
		if (i >= PAGE + off && i < PAGE + off + len)
			continue;
		if (h->mem[i] != h->snap[i]) {
			cr_expect_fail("%s: byte %d outside the target changed", what,
				       (int)i - PAGE);
			return;
		}
	}
}

static struct uroce_ext_fields
reth_of(uint64_t va, uint32_t rkey, uint32_t len)
{
	struct uroce_ext_fields e;

	memset(&e, 0, sizeof(e));
	e.va = va;
	e.rkey = rkey;
	e.dma_len = len;
	return e;
}

static void
expect_nak(struct hostile *h, enum uroce_nak_code code, uint32_t psn)
{
	flush(&h->p, R);
	cr_assert_eq(ntx(&h->p, R), 1, "want exactly one NAK, got %u packets", ntx(&h->p, R));
	expect_ack(&h->p, R, 0, UROCE_AETH_NAK, code, psn);
}

static uint8_t junk[2 * PAGE];

/* IBA 9.7.5.1: an invalid R_Key (unknown, wrong variant, index 0) is a
 * remote access error and writes nothing. */
Test(hostile, invalid_rkeys)
{
	const uint32_t bad[] = { 0, 0xFF, 0x00FFFF00, 0xFFFFFFFF };
	unsigned int i;

	memset(junk, 0x11, sizeof(junk));
	for (i = 0; i < UROCE_ARRAY_SIZE(bad) + 1; i++) {
		struct hostile h;
		struct uroce_ext_fields e;
		uint32_t key;

		h_init(&h, 0);
		/* The last case: the right index with the wrong variant byte. */
		key = i < UROCE_ARRAY_SIZE(bad) ? bad[i] : (uroce_eng_mr_rkey(h.rw) ^ 0x01);
		e = reth_of(MR_IOVA, key, 64);
		inj(&h.p, R, UROCE_OP_RDMA_WRITE_ONLY, 1000, true, &e, junk, 64);
		expect_nak(&h, UROCE_NAK_REMOTE_ACCESS_ERR, 1000);
		expect_untouched(&h, "invalid rkey");
		cr_expect_eq(uroce_eng_qp_state(h.p.s[R].qp), UROCE_QPS_ERR);
		cr_expect_eq(uroce_eng_qp_counter(h.p.s[R].qp, UROCE_CNT_RESP_REMOTE_ACCESS_ERRORS), 1);
		h_fini(&h);
	}
}

/* Lengths and addresses that run past the MR or wrap the 64-bit space. */
Test(hostile, out_of_bounds_and_overflowing_writes)
{
	const struct {
		uint64_t va;
		uint32_t len;
		uint32_t pay;
		uint8_t nak;
	} t[] = {
		/* one byte past the end */
		{ MR_IOVA + PAGE - 1, 2, 2, UROCE_NAK_REMOTE_ACCESS_ERR },
		/* one byte before */
		{ MR_IOVA - 1, 2, 2, UROCE_NAK_REMOTE_ACCESS_ERR },
		/* DMA length above 2^31: no message is that long */
		{ MR_IOVA + 100, 0x80000001u, 64, UROCE_NAK_INVALID_REQUEST },
		/* va + len wraps */
		{ UINT64_MAX - 10, 100, 64, UROCE_NAK_REMOTE_ACCESS_ERR },
		/* exactly at the end */
		{ MR_IOVA + PAGE, 1, 1, UROCE_NAK_REMOTE_ACCESS_ERR },
		/* len wraps 32 bits */
		{ MR_IOVA + 8, 0xFFFFFFFFu, 64, UROCE_NAK_INVALID_REQUEST },
		/* starts before, ends inside */
		{ MR_IOVA - 0x10000, 0x10008, 64, UROCE_NAK_REMOTE_ACCESS_ERR },
	};
	unsigned int i;

	memset(junk, 0x22, sizeof(junk));
	for (i = 0; i < UROCE_ARRAY_SIZE(t); i++) {
		struct hostile h;
		struct uroce_ext_fields e;

		h_init(&h, 0);
		e = reth_of(t[i].va, uroce_eng_mr_rkey(h.rw), t[i].len);
		inj(&h.p, R, UROCE_OP_RDMA_WRITE_ONLY, 1000, true, &e, junk, t[i].pay);
		expect_nak(&h, t[i].nak, 1000);
		expect_untouched(&h, "out of bounds write");
		h_fini(&h);
	}
}

/* A WRITE whose payload exceeds its DMA length: invalid request, and
 * nothing past the announced range is written. */
Test(hostile, payload_longer_than_dma_length)
{
	struct hostile h;
	struct uroce_ext_fields e;

	memset(junk, 0x33, sizeof(junk));
	h_init(&h, 0);
	e = reth_of(MR_IOVA + 256, uroce_eng_mr_rkey(h.rw), 16);
	inj(&h.p, R, UROCE_OP_RDMA_WRITE_ONLY, 1000, true, &e, junk, 64);
	expect_nak(&h, UROCE_NAK_INVALID_REQUEST, 1000);
	expect_untouched(&h, "payload > dma_len");
	h_fini(&h);

	/* Multi-packet: FIRST is fine (1024 of 1032), MIDDLE would overrun. */
	h_init(&h, 0);
	e = reth_of(MR_IOVA + 1024, uroce_eng_mr_rkey(h.rw), 1032);
	inj(&h.p, R, UROCE_OP_RDMA_WRITE_FIRST, 1000, false, &e, junk, 1024);
	inj(&h.p, R, UROCE_OP_RDMA_WRITE_MIDDLE, 1001, false, NULL, junk, 1024);
	expect_nak(&h, UROCE_NAK_INVALID_REQUEST, 1001);
	expect_only_range(&h, 1024, 1024, "overrunning MIDDLE");
	cr_expect_eq(h.mem[PAGE + 1024], 0x33);
	h_fini(&h);
}

/* IBA 10.6.3 / 9.7.5.1: WRITE to an MR without REMOTE_WRITE, to an MR of
 * another PD, or on a QP without REMOTE_WRITE: remote access error. */
Test(hostile, write_without_rights)
{
	struct hostile h;
	struct uroce_ext_fields e;

	memset(junk, 0x44, sizeof(junk));
	h_init(&h, 0);
	e = reth_of(0x20000, uroce_eng_mr_rkey(h.ro), 64);
	inj(&h.p, R, UROCE_OP_RDMA_WRITE_ONLY, 1000, true, &e, junk, 64);
	expect_nak(&h, UROCE_NAK_REMOTE_ACCESS_ERR, 1000);
	expect_untouched(&h, "MR without REMOTE_WRITE");
	h_fini(&h);

	h_init(&h, 0);
	e = reth_of(0x30000, uroce_eng_mr_rkey(h.other), 64);
	inj(&h.p, R, UROCE_OP_RDMA_WRITE_ONLY, 1000, true, &e, junk, 64);
	expect_nak(&h, UROCE_NAK_REMOTE_ACCESS_ERR, 1000);
	expect_untouched(&h, "MR of another PD");
	h_fini(&h);

	h_init(&h, UROCE_ACCESS_REMOTE_READ);
	e = reth_of(MR_IOVA, uroce_eng_mr_rkey(h.rw), 64);
	inj(&h.p, R, UROCE_OP_RDMA_WRITE_ONLY, 1000, true, &e, junk, 64);
	expect_nak(&h, UROCE_NAK_REMOTE_ACCESS_ERR, 1000);
	expect_untouched(&h, "QP without REMOTE_WRITE");
	h_fini(&h);
}

/* READ past the end, READ without REMOTE_READ: remote access error and no
 * READ response (nothing outside the MR leaks). */
Test(hostile, reads_past_end_or_without_rights)
{
	struct hostile h;
	struct uroce_ext_fields e;

	h_init(&h, 0);
	e = reth_of(MR_IOVA + PAGE - 100, uroce_eng_mr_rkey(h.rw), 200);
	inj(&h.p, R, UROCE_OP_RDMA_READ_REQUEST, 1000, true, &e, NULL, 0);
	expect_nak(&h, UROCE_NAK_REMOTE_ACCESS_ERR, 1000);
	expect_untouched(&h, "read past end");
	h_fini(&h);

	h_init(&h, 0);
	e = reth_of(MR_IOVA, uroce_eng_mr_rkey(h.other), 16);
	inj(&h.p, R, UROCE_OP_RDMA_READ_REQUEST, 1000, true, &e, NULL, 0);
	expect_nak(&h, UROCE_NAK_REMOTE_ACCESS_ERR, 1000);
	h_fini(&h);

	h_init(&h, 0);
	e = reth_of(UINT64_MAX - 4, uroce_eng_mr_rkey(h.rw), 16);
	inj(&h.p, R, UROCE_OP_RDMA_READ_REQUEST, 1000, true, &e, NULL, 0);
	expect_nak(&h, UROCE_NAK_REMOTE_ACCESS_ERR, 1000);
	h_fini(&h);

	h_init(&h, UROCE_ACCESS_REMOTE_WRITE);
	e = reth_of(MR_IOVA, uroce_eng_mr_rkey(h.rw), 16);
	inj(&h.p, R, UROCE_OP_RDMA_READ_REQUEST, 1000, true, &e, NULL, 0);
	expect_nak(&h, UROCE_NAK_REMOTE_ACCESS_ERR, 1000);
	h_fini(&h);
}

/* Atomics past the end or without REMOTE_ATOMIC: remote access error;
 * unaligned (IBA 9.4.5): invalid request; memory untouched either way. */
Test(hostile, bad_atomics)
{
	const uint64_t vas[] = { MR_IOVA + 4, MR_IOVA + 1, MR_IOVA + PAGE, MR_IOVA + PAGE - 4,
				 UINT64_MAX - 7 };
	unsigned int i;

	for (i = 0; i < UROCE_ARRAY_SIZE(vas) + 1; i++) {
		struct hostile h;
		struct uroce_ext_fields e;

		h_init(&h, 0);
		memset(&e, 0, sizeof(e));
		if (i < UROCE_ARRAY_SIZE(vas)) {
			e.va = vas[i];
			e.rkey = uroce_eng_mr_rkey(h.rw);
		} else {
			e.va = 0x20000; /* the REMOTE_READ-only MR */
			e.rkey = uroce_eng_mr_rkey(h.ro);
		}
		e.swap_add = 0x0101010101010101ull;
		inj(&h.p, R, UROCE_OP_FETCH_ADD, 1000, true, &e, NULL, 0);
		expect_nak(&h, i < UROCE_ARRAY_SIZE(vas) && (vas[i] & 7) != 0 ?
				       UROCE_NAK_INVALID_REQUEST : UROCE_NAK_REMOTE_ACCESS_ERR,
			   1000);
		expect_untouched(&h, "bad atomic");
		h_fini(&h);
	}
}

/* Out-of-window PSNs: ahead (up to 2^23 - 1) gets one NAK, behind is a
 * duplicate; neither writes. */
Test(hostile, out_of_window_psns)
{
	const uint32_t psns[] = { 1001, 1000 + (1u << 22), 1000 + (1u << 23) - 1,
				  1000 + (1u << 23), 999, 1000 - (1u << 22),
				  (1000 + UROCE_PSN_MASK) & UROCE_PSN_MASK };
	unsigned int i;

	memset(junk, 0x55, sizeof(junk));
	for (i = 0; i < UROCE_ARRAY_SIZE(psns); i++) {
		struct hostile h;
		struct uroce_ext_fields e;

		h_init(&h, 0);
		e = reth_of(MR_IOVA, uroce_eng_mr_rkey(h.rw), 64);
		inj(&h.p, R, UROCE_OP_RDMA_WRITE_ONLY, psns[i] & UROCE_PSN_MASK, true, &e, junk,
		    64);
		flush(&h.p, R);
		/* Expect: ahead → NAK(PSN seq) for 1000; behind → re-ACK of 999. */
		cr_assert_eq(ntx(&h.p, R), 1);
		if (uroce_psn_diff(psns[i] & UROCE_PSN_MASK, 1000) > 0)
			expect_ack(&h.p, R, 0, UROCE_AETH_NAK, UROCE_NAK_PSN_SEQ_ERR, 1000);
		else
			expect_ack(&h.p, R, 0, UROCE_AETH_ACK, 0, 999);
		expect_untouched(&h, "out of window PSN");
		cr_expect_eq(uroce_eng_qp_state(h.p.s[R].qp), UROCE_QPS_RTS);
		h_fini(&h);
	}
}

/* Sequence attacks: a LAST with no FIRST; a FIRST then a new FIRST. */
Test(hostile, broken_sequences_write_nothing)
{
	struct hostile h;
	struct uroce_ext_fields e;

	memset(junk, 0x66, sizeof(junk));
	h_init(&h, 0);
	inj(&h.p, R, UROCE_OP_RDMA_WRITE_LAST, 1000, true, NULL, junk, 64);
	expect_nak(&h, UROCE_NAK_INVALID_REQUEST, 1000);
	expect_untouched(&h, "LAST without FIRST");
	h_fini(&h);

	h_init(&h, 0);
	e = reth_of(MR_IOVA, uroce_eng_mr_rkey(h.rw), 2048);
	inj(&h.p, R, UROCE_OP_RDMA_WRITE_FIRST, 1000, false, &e, junk, 1024);
	e = reth_of(MR_IOVA + 2048, uroce_eng_mr_rkey(h.rw), 64);
	inj(&h.p, R, UROCE_OP_RDMA_WRITE_ONLY, 1001, true, &e, junk, 64);
	expect_nak(&h, UROCE_NAK_INVALID_REQUEST, 1001);
	expect_only_range(&h, 0, 1024, "ONLY inside a WRITE");
	h_fini(&h);
}

/* SEND_WITH_INV of an R_Key of another PD is refused and invalidates
 * nothing. */
Test(hostile, invalidate_foreign_rkey)
{
	struct hostile h;
	struct uroce_ext_fields e;
	uint8_t d[8] = { 0 };

	h_init(&h, 0);
	post_recv_buf(&h.p, R, 0, 64, 1);
	memset(&e, 0, sizeof(e));
	e.inv_rkey = uroce_eng_mr_rkey(h.other);
	inj(&h.p, R, UROCE_OP_SEND_ONLY_WITH_INVALIDATE, 1000, true, &e, d, 8);
	expect_nak(&h, UROCE_NAK_INVALID_REQUEST, 1000);
	cr_expect(uroce_eng_mr_check(h.other, 0x30000, PAGE, 0));
	h_fini(&h);
}
