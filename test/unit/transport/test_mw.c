/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Memory windows (lib/transport/mr.c, IBA 10.6.7): binds and local
 * invalidation through the send queue, remote access through a window's
 * rkey, remote invalidation by SEND with Invalidate. Side 1 owns the windows
 * and is the responder; packets from its peer are injected, and each step
 * says what it expects.
 */

#include "simproto.h"

#define R 1

#define WIN_OFF 1024u
#define WIN_LEN 256u
#define RW (UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ)

struct mwt {
	struct proto p;
	struct uroce_eng_mr *mr;   /* side R, with MW_BIND */
	struct uroce_wr_sge rsge;  /* side 0's local buffer for READ/ATOMIC */
};

static void
mwt_init(struct mwt *t, int mr_access)
{
	struct sim_qp_opts o = { .psn0 = 0 };

	proto_init(&t->p, &o);
	t->mr = uroce_eng_mr_reg(t->p.s[R].pd, t->p.buf[R], IOVA(R), PBUF, mr_access);
	cr_assert_not_null(t->mr);
}

/* Post a BIND_MW on @p qp and run its engine; returns the completion status. */
static enum uroce_wc_status
bind(struct mwt *t, struct uroce_eng_qp *qp, struct uroce_eng_mr *mw, uint32_t key,
     struct uroce_eng_mr *mr, uint64_t off, uint64_t len, int access)
{
	struct uroce_eng_send_wr wr;
	struct uroce_eng_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xB1;
	wr.opcode = UROCE_WR_BIND_MW;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.bind_mw.rkey = (uroce_eng_mr_rkey(mw) & ~0xFFu) | (key & 0xFF);
	wr.wr.bind_mw.mr = mr;
	wr.wr.bind_mw.addr = IOVA(R) + off;
	wr.wr.bind_mw.length = len;
	wr.wr.bind_mw.access = access;
	cr_assert_eq(uroce_eng_post_send(qp, &wr, NULL), 0);
	flush(&t->p, R);
	cr_assert_eq(uroce_eng_poll_cq(t->p.s[R].scq, 1, &wc), 1, "the bind completes");
	cr_expect_eq(wc.wr_id, 0xB1);
	if (wc.status == UROCE_WC_SUCCESS)
		cr_expect_eq(wc.opcode, UROCE_WC_BIND_MW);
	return wc.status;
}

static enum uroce_wc_status
local_inv(struct mwt *t, uint32_t rkey)
{
	struct uroce_eng_send_wr wr;
	struct uroce_eng_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x11;
	wr.opcode = UROCE_WR_LOCAL_INV;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	cr_assert_eq(uroce_eng_post_send(t->p.s[R].qp, &wr, NULL), 0);
	flush(&t->p, R);
	cr_assert_eq(uroce_eng_poll_cq(t->p.s[R].scq, 1, &wc), 1);
	if (wc.status == UROCE_WC_SUCCESS)
		cr_expect_eq(wc.opcode, UROCE_WC_LOCAL_INV);
	return wc.status;
}

/* Inject a WRITE ONLY of 8 bytes at @p off with @p rkey into @p to's QP
 * (@p qp: another QP of side R, or NULL), and return the syndrome type of
 * the one response. */
static enum uroce_aeth_type
write8(struct mwt *t, uint32_t psn, uint32_t rkey, uint64_t off, uint8_t *nak)
{
	struct uroce_ext_fields e;
	uint8_t d[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	const struct uroce_pkt *k;
	uint32_t n0 = ntx(&t->p, R);

	memset(&e, 0, sizeof(e));
	e.va = IOVA(R) + off;
	e.rkey = rkey;
	e.dma_len = 8;
	inj(&t->p, R, UROCE_OP_RDMA_WRITE_ONLY, psn, true, &e, d, 8);
	flush(&t->p, R);
	cr_assert_eq(ntx(&t->p, R), n0 + 1, "one response");
	k = tx(&t->p, R, n0);
	*nak = uroce_aeth_value(tx_syndrome(k));
	return uroce_aeth_type(tx_syndrome(k));
}

/* IBA 10.6.7.3, 10.6.7.2: a bound type 2 window takes a WRITE inside it;
 * the bytes land in the MR at the window's address. */
Test(mw, type2_bind_then_write_lands)
{
	struct mwt t;
	struct uroce_eng_mr *mw;
	uint32_t rkey;
	uint8_t nak;

	mwt_init(&t, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_MW_BIND);
	mw = uroce_eng_mw_alloc(t.p.s[R].pd, UROCE_MW_TYPE_2);
	cr_assert_not_null(mw);
	/* Expect: a new window grants nothing. */
	cr_expect_eq(write8(&t, 0, uroce_eng_mr_rkey(mw), WIN_OFF, &nak), UROCE_AETH_NAK);
	cr_expect_eq(nak, UROCE_NAK_REMOTE_ACCESS_ERR);
	proto_fini(&t.p);

	mwt_init(&t, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_MW_BIND);
	mw = uroce_eng_mw_alloc(t.p.s[R].pd, UROCE_MW_TYPE_2);
	cr_assert_eq(bind(&t, t.p.s[R].qp, mw, 0x42, t.mr, WIN_OFF, WIN_LEN, RW), UROCE_WC_SUCCESS);
	rkey = uroce_eng_mr_rkey(mw);
	cr_expect_eq(rkey & 0xFF, 0x42, "the window takes the consumer's key byte");
	cr_expect(uroce_eng_mr_busy(t.mr), "a bound window keeps its MR");
	/* Expect: the WRITE is ACKed and lands at the window's last 8 bytes. */
	cr_expect_eq(write8(&t, 0, rkey, WIN_OFF + WIN_LEN - 8, &nak), UROCE_AETH_ACK);
	cr_expect_eq(t.p.buf[R][WIN_OFF + WIN_LEN - 8], 1);
	cr_expect_eq(t.p.buf[R][WIN_OFF + WIN_LEN - 1], 8);
	cr_expect_eq(uroce_eng_mr_lkey(mw), 0, "a window has no L_Key");
	proto_fini(&t.p);
}

/* C9-88 through a window: bytes outside it, or rights it lacks, are a
 * remote access error, even where the MR would allow them. */
Test(mw, window_bounds_and_rights)
{
	struct mwt t;
	struct uroce_eng_mr *mw;
	uint8_t nak;

	mwt_init(&t, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_MW_BIND);
	mw = uroce_eng_mw_alloc(t.p.s[R].pd, UROCE_MW_TYPE_2);
	cr_assert_eq(bind(&t, t.p.s[R].qp, mw, 1, t.mr, WIN_OFF, WIN_LEN, RW), UROCE_WC_SUCCESS);
	/* Expect: 4 bytes past the end of the window: NAK remote access. */
	cr_expect_eq(write8(&t, 0, uroce_eng_mr_rkey(mw), WIN_OFF + WIN_LEN - 4, &nak),
		     UROCE_AETH_NAK);
	cr_expect_eq(nak, UROCE_NAK_REMOTE_ACCESS_ERR);
	cr_expect_eq(t.p.buf[R][WIN_OFF + WIN_LEN - 4], 0, "nothing written");
	proto_fini(&t.p);

	mwt_init(&t, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_MW_BIND);
	mw = uroce_eng_mw_alloc(t.p.s[R].pd, UROCE_MW_TYPE_2);
	cr_assert_eq(bind(&t, t.p.s[R].qp, mw, 1, t.mr, WIN_OFF, WIN_LEN,
			  UROCE_ACCESS_REMOTE_READ), UROCE_WC_SUCCESS);
	/* Expect: a read-only window refuses a WRITE the MR itself would take. */
	cr_expect_eq(write8(&t, 0, uroce_eng_mr_rkey(mw), WIN_OFF, &nak), UROCE_AETH_NAK);
	cr_expect_eq(nak, UROCE_NAK_REMOTE_ACCESS_ERR);
	proto_fini(&t.p);
}

/* READ and ATOMIC through a window: answered from the MR's memory. */
Test(mw, read_and_atomic_through_window)
{
	struct mwt t;
	struct uroce_eng_mr *mw;
	struct uroce_ext_fields e;
	const struct uroce_pkt *k;
	uint64_t *word;

	mwt_init(&t, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_MW_BIND);
	mw = uroce_eng_mw_alloc(t.p.s[R].pd, UROCE_MW_TYPE_2);
	cr_assert_eq(bind(&t, t.p.s[R].qp, mw, 7, t.mr, WIN_OFF, WIN_LEN,
			  UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC |
			  UROCE_ACCESS_REMOTE_WRITE), UROCE_WC_SUCCESS);
	memset(t.p.buf[R] + WIN_OFF, 0x5A, 16);
	memset(&e, 0, sizeof(e));
	e.va = IOVA(R) + WIN_OFF;
	e.rkey = uroce_eng_mr_rkey(mw);
	e.dma_len = 16;
	inj(&t.p, R, UROCE_OP_RDMA_READ_REQUEST, 0, true, &e, NULL, 0);
	flush(&t.p, R);
	/* Expect: one READ response ONLY with the window's 16 bytes. */
	cr_assert_eq(ntx(&t.p, R), 1);
	k = tx(&t.p, R, 0);
	cr_expect_eq(k->opcode & 0x1F, UROCE_OP_RDMA_READ_RESPONSE_ONLY);
	cr_assert_eq(k->paylen, 16);
	cr_expect_eq(k->payload[15], 0x5A);
	word = (uint64_t *)(void *)(t.p.buf[R] + WIN_OFF + 64);
	*word = 40;
	memset(&e, 0, sizeof(e));
	e.va = IOVA(R) + WIN_OFF + 64;
	e.rkey = uroce_eng_mr_rkey(mw);
	e.swap_add = 2;
	inj(&t.p, R, UROCE_OP_FETCH_ADD, 1, true, &e, NULL, 0);
	flush(&t.p, R);
	/* Expect: the atomic executed on the MR's word, original value 40. */
	cr_assert_eq(ntx(&t.p, R), 2);
	k = tx(&t.p, R, 1);
	cr_expect_eq(k->opcode & 0x1F, UROCE_OP_ATOMIC_ACKNOWLEDGE);
	cr_expect_eq(uroce_atmack_orig(k->bth + k->info->off_atmack), 40);
	cr_expect_eq(*word, 42);
	proto_fini(&t.p);
}

/* IBA 10.6.7.2.1: LOCAL_INV returns a type 2 window to FREE; its rkey is
 * stale from then on (remote access error), the MR is no longer held, and
 * a new bind with another key byte works while the old key stays stale. */
Test(mw, local_inv_makes_rkey_stale)
{
	struct mwt t;
	struct uroce_eng_mr *mw;
	uint32_t old;
	uint8_t nak;

	mwt_init(&t, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_MW_BIND);
	mw = uroce_eng_mw_alloc(t.p.s[R].pd, UROCE_MW_TYPE_2);
	cr_assert_eq(bind(&t, t.p.s[R].qp, mw, 1, t.mr, WIN_OFF, WIN_LEN, RW), UROCE_WC_SUCCESS);
	old = uroce_eng_mr_rkey(mw);
	cr_expect_eq(write8(&t, 0, old, WIN_OFF, &nak), UROCE_AETH_ACK);
	cr_assert_eq(local_inv(&t, old), UROCE_WC_SUCCESS);
	cr_expect_not(uroce_eng_mr_busy(t.mr));
	/* Expect: bound again with key byte 2; the old key is refused... */
	cr_assert_eq(bind(&t, t.p.s[R].qp, mw, 2, t.mr, WIN_OFF, WIN_LEN, RW), UROCE_WC_SUCCESS);
	cr_expect_eq(write8(&t, 1, uroce_eng_mr_rkey(mw), WIN_OFF, &nak), UROCE_AETH_ACK);
	cr_expect_eq(write8(&t, 2, old, WIN_OFF, &nak), UROCE_AETH_NAK);
	cr_expect_eq(nak, UROCE_NAK_REMOTE_ACCESS_ERR);
	/* ...and the QP went to ERR on it (IBA 9.7.5.1: class C). */
	cr_expect_eq(uroce_eng_qp_state(t.p.s[R].qp), UROCE_QPS_ERR);
	proto_fini(&t.p);
}

/* o10-37.2.30, o10-37.2.40, C10-72..75: what a bind refuses, each with
 * MW_BIND_ERR and the QP in ERR; LOCAL_INV of anything but a bound type 2
 * window (o10-37.2.26) fails with LOC_QP_OP_ERR. */
Test(mw, bind_and_invalidate_rules)
{
	struct mwt t;
	struct uroce_eng_mr *mw, *mr_nobind, *mr_ro, *mw1;
	struct uroce_eng_pd *pd2;

#define CASE(expr, st)                                                      \
	do {                                                                \
		mwt_init(&t, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_MW_BIND); \
		mw = uroce_eng_mw_alloc(t.p.s[R].pd, UROCE_MW_TYPE_2);      \
		cr_assert_not_null(mw);                                     \
		cr_expect_eq((expr), (st), "%s", #expr);                    \
		cr_expect_eq(uroce_eng_qp_state(t.p.s[R].qp), UROCE_QPS_ERR, "%s", #expr); \
		proto_fini(&t.p);                                           \
	} while (0)

	/* o10-37.2.30: bound only while FREE. */
	CASE((bind(&t, t.p.s[R].qp, mw, 1, t.mr, 0, 64, RW),
	      bind(&t, t.p.s[R].qp, mw, 2, t.mr, 0, 64, RW)), UROCE_WC_MW_BIND_ERR);
	/* o10-37.2.40: a type 2 bind has a length. */
	CASE(bind(&t, t.p.s[R].qp, mw, 1, t.mr, 0, 0, RW), UROCE_WC_MW_BIND_ERR);
	/* C10-75: inside the MR. */
	CASE(bind(&t, t.p.s[R].qp, mw, 1, t.mr, PBUF - 8, 16, RW), UROCE_WC_MW_BIND_ERR);
	/* C10-73: the MR needs MW_BIND. */
	CASE((mr_nobind = uroce_eng_mr_reg(t.p.s[R].pd, t.p.buf[R], IOVA(R), PBUF,
					   UROCE_ACCESS_LOCAL_WRITE),
	      bind(&t, t.p.s[R].qp, mw, 1, mr_nobind, 0, 64, UROCE_ACCESS_REMOTE_READ)),
	     UROCE_WC_MW_BIND_ERR);
	/* C10-74: a writable window needs LOCAL_WRITE on the MR. */
	CASE((mr_ro = uroce_eng_mr_reg(t.p.s[R].pd, t.p.buf[R], IOVA(R), PBUF,
				       UROCE_ACCESS_MW_BIND),
	      bind(&t, t.p.s[R].qp, mw, 1, mr_ro, 0, 64, UROCE_ACCESS_REMOTE_WRITE)),
	     UROCE_WC_MW_BIND_ERR);
	/* Remote rights (LOCAL_WRITE ignored, tested below); no zero-based or
	 * unknown flag. */
	CASE(bind(&t, t.p.s[R].qp, mw, 1, t.mr, 0, 64, RW | (1 << 5)), UROCE_WC_MW_BIND_ERR);
	/* C10-72: a window of another PD. */
	CASE((pd2 = uroce_eng_pd_alloc(simwire_engine(t.p.sw, R)),
	      bind(&t, t.p.s[R].qp, uroce_eng_mw_alloc(pd2, UROCE_MW_TYPE_2), 1, t.mr, 0, 64,
		   RW)), UROCE_WC_MW_BIND_ERR);
	/* o10-37.2.26: a type 1 window is not invalidated; an MR neither; nor a
	 * FREE window; nor a bound one by an older key. */
	CASE((mw1 = uroce_eng_mw_alloc(t.p.s[R].pd, UROCE_MW_TYPE_1),
	      bind(&t, t.p.s[R].qp, mw1, 1, t.mr, 0, 64, RW),
	      local_inv(&t, uroce_eng_mr_rkey(mw1))), UROCE_WC_LOC_QP_OP_ERR);
	CASE(local_inv(&t, uroce_eng_mr_rkey(t.mr)), UROCE_WC_LOC_QP_OP_ERR);
	CASE(local_inv(&t, uroce_eng_mr_rkey(mw)), UROCE_WC_LOC_QP_OP_ERR);
	CASE((bind(&t, t.p.s[R].qp, mw, 1, t.mr, 0, 64, RW),
	      local_inv(&t, uroce_eng_mr_rkey(mw) ^ 0x80)), UROCE_WC_LOC_QP_OP_ERR);
#undef CASE
	/* Expect: unknown window types are refused at allocation. */
	mwt_init(&t, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_MW_BIND);
	errno = 0;
	cr_expect_null(uroce_eng_mw_alloc(t.p.s[R].pd, 3));
	cr_expect_eq(errno, EINVAL);
	proto_fini(&t.p);
}

/* IBA 10.6.7.2.4 (type 2B): a bound window is used only through the QP
 * that bound it; the same key arriving on another QP of the same PD is a
 * remote access error. A type 1 window works on any QP of its PD. */
Test(mw, type2_bound_to_its_qp_type1_to_its_pd)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_eng_qp *qa, *qb;
	struct uroce_eng_mr *mw2, *mw1;
	struct uroce_ext_fields e;
	uint8_t d[8] = { 9, 9, 9, 9, 9, 9, 9, 9 };
	struct mwt t;

	mwt_init(&t, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_MW_BIND);
	mw2 = uroce_eng_mw_alloc(t.p.s[R].pd, UROCE_MW_TYPE_2);
	mw1 = uroce_eng_mw_alloc(t.p.s[R].pd, UROCE_MW_TYPE_1);
	cr_assert_eq(bind(&t, t.p.s[R].qp, mw2, 1, t.mr, 0, 64, RW), UROCE_WC_SUCCESS);
	cr_assert_eq(bind(&t, t.p.s[R].qp, mw1, 1, t.mr, 128, 64, RW), UROCE_WC_SUCCESS);
	/* A second pair: qb on side R, same PD, connected to qa on side 0. */
	qa = sim_qp_create(&t.p.s[0], UROCE_QPT_RC, 16);
	qb = sim_qp_create(&t.p.s[R], UROCE_QPT_RC, 16);
	cr_assert_eq(sim_connect(t.p.sw, qa, qb, &o), 0);
	simwire_cap_clear(t.p.sw, R);
	{
		struct uroce_bth_fields b;

		memset(&b, 0, sizeof(b));
		b.opcode = UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_RDMA_WRITE_ONLY);
		b.pkey = UROCE_DEFAULT_PKEY;
		b.dqpn = uroce_eng_qp_num(qb);
		b.ackreq = true;
		memset(&e, 0, sizeof(e));
		e.dma_len = 8;
		/* Expect: the type 1 window works through qb. */
		e.va = IOVA(R) + 128;
		e.rkey = uroce_eng_mr_rkey(mw1);
		b.psn = 0;
		cr_assert_eq(simwire_inject(t.p.sw, R, &b, &e, d, 8), 0);
		flush(&t.p, R);
		cr_assert_eq(ntx(&t.p, R), 1);
		expect_ack(&t.p, R, 0, UROCE_AETH_ACK, 0, 0);
		cr_expect_eq(t.p.buf[R][128], 9);
		/* Expect: the type 2 window bound through the first QP does not. */
		e.va = IOVA(R);
		e.rkey = uroce_eng_mr_rkey(mw2);
		b.psn = 1;
		cr_assert_eq(simwire_inject(t.p.sw, R, &b, &e, d, 8), 0);
		flush(&t.p, R);
		cr_assert_eq(ntx(&t.p, R), 2);
		expect_ack(&t.p, R, 1, UROCE_AETH_NAK, UROCE_NAK_REMOTE_ACCESS_ERR, 1);
		cr_expect_eq(t.p.buf[R][0], 0);
	}
	proto_fini(&t.p);
}

/* A window of another PD (another consumer's), bound through a QP of that
 * PD, is a remote access error on this QP (C9-88), like any foreign key. */
Test(mw, window_of_another_pd_refused)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_eng_mr *mr2, *mw;
	struct uroce_eng_qp *q0, *q2;
	struct sim_side s2;
	struct mwt t;
	uint8_t nak;

	mwt_init(&t, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_MW_BIND);
	s2 = t.p.s[R];
	s2.pd = uroce_eng_pd_alloc(simwire_engine(t.p.sw, R));
	cr_assert_not_null(s2.pd);
	mr2 = uroce_eng_mr_reg(s2.pd, t.p.buf[R], IOVA(R), PBUF,
			       UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_MW_BIND);
	mw = uroce_eng_mw_alloc(s2.pd, UROCE_MW_TYPE_1);
	q0 = sim_qp_create(&t.p.s[0], UROCE_QPT_RC, 16);
	q2 = sim_qp_create(&s2, UROCE_QPT_RC, 16);
	cr_assert(mr2 != NULL && mw != NULL && q0 != NULL && q2 != NULL);
	cr_assert_eq(sim_connect(t.p.sw, q0, q2, &o), 0);
	cr_assert_eq(bind(&t, q2, mw, 1, mr2, 0, 64, RW), UROCE_WC_SUCCESS);
	simwire_cap_clear(t.p.sw, R);
	/* Expect: its key on the first QP (the other PD): NAK remote access. */
	cr_expect_eq(write8(&t, 0, uroce_eng_mr_rkey(mw), 0, &nak), UROCE_AETH_NAK);
	cr_expect_eq(nak, UROCE_NAK_REMOTE_ACCESS_ERR);
	cr_expect_eq(t.p.buf[R][0], 0, "nothing written");
	proto_fini(&t.p);
}

/* Type 1: rebinding with length 0 unbinds (verbs ibv_bind_mw): the key it
 * had is refused from then on. */
Test(mw, type1_unbind_with_zero_length)
{
	struct mwt t;
	struct uroce_eng_mr *mw;
	uint32_t k1;
	uint8_t nak;

	mwt_init(&t, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_MW_BIND);
	mw = uroce_eng_mw_alloc(t.p.s[R].pd, UROCE_MW_TYPE_1);
	cr_assert_eq(bind(&t, t.p.s[R].qp, mw, 1, t.mr, 0, 64, RW), UROCE_WC_SUCCESS);
	k1 = uroce_eng_mr_rkey(mw);
	/* Expect: LOCAL_WRITE in a window's rights is ignored (verbs consumers
	 * pass it, rxe takes it). */
	cr_assert_eq(bind(&t, t.p.s[R].qp, mw, 5, t.mr, 0, 64, RW | UROCE_ACCESS_LOCAL_WRITE),
		     UROCE_WC_SUCCESS);
	/* Expect: a type 1 window may be bound again while bound. */
	cr_assert_eq(bind(&t, t.p.s[R].qp, mw, 2, t.mr, 64, 64, RW), UROCE_WC_SUCCESS);
	cr_expect_eq(write8(&t, 0, uroce_eng_mr_rkey(mw), 64, &nak), UROCE_AETH_ACK);
	cr_assert_eq(bind(&t, t.p.s[R].qp, mw, 3, NULL, 0, 0, 0), UROCE_WC_SUCCESS);
	cr_expect_not(uroce_eng_mr_busy(t.mr));
	cr_expect_eq(write8(&t, 1, uroce_eng_mr_rkey(mw), 64, &nak), UROCE_AETH_NAK);
	cr_expect_eq(nak, UROCE_NAK_REMOTE_ACCESS_ERR);
	(void)k1;
	proto_fini(&t.p);
}

/* IBA 10.6.7.2.2: a SEND with Invalidate naming a bound type 2 window of
 * the QP's PD frees it after the data is placed; the receive completion
 * carries WITH_INV and the key; the key is refused afterwards. */
Test(mw, send_with_invalidate_frees_window)
{
	struct mwt t;
	struct uroce_eng_mr *mw;
	struct uroce_ext_fields e;
	struct uroce_eng_wc wc;
	uint8_t d[8] = "invalid", nak;
	uint32_t rkey;

	mwt_init(&t, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_MW_BIND);
	mw = uroce_eng_mw_alloc(t.p.s[R].pd, UROCE_MW_TYPE_2);
	cr_assert_eq(bind(&t, t.p.s[R].qp, mw, 1, t.mr, WIN_OFF, WIN_LEN, RW), UROCE_WC_SUCCESS);
	rkey = uroce_eng_mr_rkey(mw);
	post_recv_buf(&t.p, R, 0, 64, 5);
	memset(&e, 0, sizeof(e));
	e.inv_rkey = rkey;
	inj(&t.p, R, UROCE_OP_SEND_ONLY_WITH_INVALIDATE, 0, true, &e, d, 8);
	flush(&t.p, R);
	/* Expect: ACK, a RECV completion with WITH_INV and the key. */
	cr_assert_eq(ntx(&t.p, R), 1);
	expect_ack(&t.p, R, 0, UROCE_AETH_ACK, 0, 0);
	cr_assert_eq(uroce_eng_poll_cq(t.p.s[R].rcq, 1, &wc), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	cr_expect(wc.wc_flags & UROCE_WC_WITH_INV);
	cr_expect_eq(wc.invalidated_rkey, rkey);
	cr_expect_eq(memcmp(t.p.buf[R], d, 8), 0);
	cr_expect_eq(uroce_eng_qp_counter(t.p.s[R].qp, UROCE_CNT_RESP_REMOTE_INV), 1);
	cr_expect_not(uroce_eng_mr_busy(t.mr));
	/* Expect: the key is stale now. */
	cr_expect_eq(write8(&t, 1, rkey, WIN_OFF, &nak), UROCE_AETH_NAK);
	cr_expect_eq(nak, UROCE_NAK_REMOTE_ACCESS_ERR);
	proto_fini(&t.p);
}

/* What a peer may not invalidate: a type 1 window, a stale key, a window
 * of another PD (another consumer's): NAK invalid request, the receive WQE
 * in error, and the window unchanged. */
Test(mw, send_with_invalidate_refusals)
{
	struct uroce_eng_mr *mw, *mw1, *other;
	struct uroce_eng_pd *pd2;
	struct uroce_ext_fields e;
	struct uroce_eng_wc wc;
	uint8_t d[8] = { 0 };
	uint32_t keys[3];
	struct mwt t;
	int i;

	for (i = 0; i < 3; i++) {
		mwt_init(&t, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_MW_BIND);
		mw = uroce_eng_mw_alloc(t.p.s[R].pd, UROCE_MW_TYPE_2);
		mw1 = uroce_eng_mw_alloc(t.p.s[R].pd, UROCE_MW_TYPE_1);
		pd2 = uroce_eng_pd_alloc(simwire_engine(t.p.sw, R));
		other = uroce_eng_mw_alloc(pd2, UROCE_MW_TYPE_2);
		cr_assert_eq(bind(&t, t.p.s[R].qp, mw, 1, t.mr, 0, 64, RW), UROCE_WC_SUCCESS);
		cr_assert_eq(bind(&t, t.p.s[R].qp, mw1, 1, t.mr, 0, 64, RW), UROCE_WC_SUCCESS);
		keys[0] = uroce_eng_mr_rkey(mw1);
		keys[1] = uroce_eng_mr_rkey(mw) ^ 0x80;
		keys[2] = uroce_eng_mr_rkey(other);
		post_recv_buf(&t.p, R, 256, 64, 6);
		memset(&e, 0, sizeof(e));
		e.inv_rkey = keys[i];
		inj(&t.p, R, UROCE_OP_SEND_ONLY_WITH_INVALIDATE, 0, true, &e, d, 8);
		flush(&t.p, R);
		/* Expect: NAK invalid request; the WQE completes REM_INV_REQ_ERR. */
		cr_assert_eq(ntx(&t.p, R), 1, "case %d", i);
		expect_ack(&t.p, R, 0, UROCE_AETH_NAK, UROCE_NAK_INVALID_REQUEST, 0);
		cr_assert_eq(uroce_eng_poll_cq(t.p.s[R].rcq, 1, &wc), 1);
		cr_expect_eq(wc.status, UROCE_WC_REM_INV_REQ_ERR);
		cr_expect(uroce_eng_mr_busy(t.mr), "case %d: windows still bound", i);
		cr_expect_eq(uroce_eng_qp_counter(t.p.s[R].qp, UROCE_CNT_RESP_REMOTE_INV), 0);
		proto_fini(&t.p);
	}
}

/* A window names its MR by key: once the MR is revoked, the window grants
 * nothing (no pointer to freed memory is ever followed). */
Test(mw, revoked_mr_kills_window)
{
	struct mwt t;
	struct uroce_eng_mr *mw;
	uint8_t nak;

	mwt_init(&t, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_MW_BIND);
	mw = uroce_eng_mw_alloc(t.p.s[R].pd, UROCE_MW_TYPE_2);
	cr_assert_eq(bind(&t, t.p.s[R].qp, mw, 1, t.mr, 0, 64, RW), UROCE_WC_SUCCESS);
	uroce_eng_mr_revoke(t.mr);
	cr_expect_eq(write8(&t, 0, uroce_eng_mr_rkey(mw), 0, &nak), UROCE_AETH_NAK);
	cr_expect_eq(nak, UROCE_NAK_REMOTE_ACCESS_ERR);
	/* Expect: freeing the window and then the MR is clean (ASan). */
	cr_expect_eq(uroce_eng_mr_dereg(mw), 0);
	cr_expect_eq(uroce_eng_mr_dereg(t.mr), 0);
	proto_fini(&t.p);
}

/* A bind posted behind a WRITE still in flight waits for it: completions
 * stay in order (IBA 10.8.3), the bind completes after the WRITE's ACK. */
Test(mw, bind_waits_for_earlier_wqes)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_eng_send_wr wr;
	struct uroce_eng_wc wc[2];
	struct uroce_eng_mr *mw, *mr0;
	struct proto p;

	proto_init(&p, &o);
	simwire_set_capture(p.sw, 0, false);
	simwire_set_capture(p.sw, R, false);
	/* Side 0 binds this time: its own window over its buffer. */
	mr0 = uroce_eng_mr_reg(p.s[0].pd, p.buf[0], IOVA(0), PBUF,
			       UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_MW_BIND);
	mw = uroce_eng_mw_alloc(p.s[0].pd, UROCE_MW_TYPE_2);
	post_wr(&p, UROCE_WR_RDMA_WRITE, 0, 16, 0, 1, 0);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2;
	wr.opcode = UROCE_WR_BIND_MW;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.bind_mw.rkey = uroce_eng_mr_rkey(mw);
	wr.wr.bind_mw.mr = mr0;
	wr.wr.bind_mw.addr = IOVA(0);
	wr.wr.bind_mw.length = 64;
	wr.wr.bind_mw.access = RW;
	cr_assert_eq(uroce_eng_post_send(p.s[0].qp, &wr, NULL), 0);
	uroce_eng_poll(simwire_engine(p.sw, 0));
	/* Expect: the WRITE is out, nothing completed yet (no ACK). */
	cr_expect_eq(uroce_eng_poll_cq(p.s[0].scq, 2, wc), 0);
	cr_expect_not(uroce_eng_mr_busy(mr0), "the bind has not run");
	simwire_settle(p.sw);
	/* Expect: WRITE then BIND_MW, both successful. */
	cr_assert_eq(uroce_eng_poll_cq(p.s[0].scq, 2, wc), 2);
	cr_expect_eq(wc[0].wr_id, 1);
	cr_expect_eq(wc[1].wr_id, 2);
	cr_expect_eq(wc[1].opcode, UROCE_WC_BIND_MW);
	cr_expect_eq(wc[1].status, UROCE_WC_SUCCESS);
	cr_expect(uroce_eng_mr_busy(mr0));
	proto_fini(&p);
}

/* Posting a bind with data is the poster's error (no data rides on it). */
Test(mw, bind_with_sges_refused_at_post)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_wr_sge sge = { IOVA(0), 8, 0 };
	struct uroce_eng_send_wr wr;
	struct proto p;

	proto_init(&p, &o);
	sge.lkey = uroce_eng_mr_lkey(p.mr[0]);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = UROCE_WR_BIND_MW;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	cr_expect_eq(uroce_eng_post_send(p.s[0].qp, &wr, NULL), -EINVAL);
	wr.opcode = UROCE_WR_LOCAL_INV;
	cr_expect_eq(uroce_eng_post_send(p.s[0].qp, &wr, NULL), -EINVAL);
	proto_fini(&p);
}
