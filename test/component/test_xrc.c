/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * XRC (IBA 1.2 eXtended Reliable Connected) between two engines over the
 * simulated wire. Side 0 holds XRC initiator (XRC_SEND) QPs; side 1 an XRC
 * domain with target (XRC_RECV) QPs and XRC SRQs. Checked: SENDs from several
 * initiators land in the one SRQ their XRCETH names, under loss, and complete
 * to that SRQ's CQ with the TGT QP's number; WRITE, READ and both atomics
 * work through a TGT QP with R_Keys of the SRQ's PD; the packets carry the
 * XRC opcodes and the XRCETH; an SRQ of another domain, an unknown SRQ
 * number or an R_Key of another PD is NAKed (remote access error) and counted.
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "simwire.h"

#define NQP 3
#define BUF (256 * 1024)
#define XRCD 7
#define OTHER_XRCD 8
#define MR_ACCESS \
	(UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ | \
	 UROCE_ACCESS_REMOTE_ATOMIC)

struct env {
	struct simwire *sw;
	/* side 0: initiators */
	struct uroce_eng_pd *pd0;
	struct uroce_eng_cq *cq0;
	struct uroce_eng_qp *ini[NQP];
	uint8_t *buf0;
	struct uroce_eng_mr *mr0;
	/* side 1: the domain's hidden PD for TGT QPs, the SRQs' PD, another PD */
	struct uroce_eng_pd *xpd, *pd1, *pd1b;
	struct uroce_eng_cq *cq1, *cq1b;
	struct uroce_eng_qp *tgt[NQP];
	struct uroce_eng_srq *srq, *other_srq;
	uint8_t *buf1, *buf1b;
	struct uroce_eng_mr *mr1, *mr1b;
};

static struct uroce_eng_srq *
xsrq_create(struct uroce_eng_pd *pd, struct uroce_eng *eng, struct uroce_eng_cq *cq,
	    uint32_t xrcd)
{
	struct uroce_eng_srq_init_attr sa = { .max_wr = 256, .max_sge = 1, .eng = eng,
					      .xrcd = xrcd, .cq = cq };

	return uroce_eng_srq_create(pd, &sa);
}

static void
env_init(struct env *e, const struct simwire_conf *wc)
{
	struct sim_qp_opts o = { .mtu = UROCE_MTU_1024, .psn0 = 0xFFFFF0, .psn1 = 300 };
	struct uroce_eng *e0, *e1;
	int i;

	memset(e, 0, sizeof(*e));
	e->sw = simwire_create(wc);
	cr_assert_not_null(e->sw);
	e0 = simwire_engine(e->sw, 0);
	e1 = simwire_engine(e->sw, 1);
	e->pd0 = uroce_eng_pd_alloc(e0);
	e->cq0 = uroce_eng_cq_create(e0, 1024, NULL);
	e->xpd = uroce_eng_pd_alloc(e1);
	e->pd1 = uroce_eng_pd_alloc(e1);
	e->pd1b = uroce_eng_pd_alloc(e1);
	e->cq1 = uroce_eng_cq_create(e1, 1024, NULL);
	e->cq1b = uroce_eng_cq_create(e1, 64, NULL);
	cr_assert(e->pd0 && e->cq0 && e->xpd && e->pd1 && e->pd1b && e->cq1 && e->cq1b);
	e->buf0 = aligned_alloc(64, BUF);
	e->buf1 = aligned_alloc(64, BUF);
	e->buf1b = aligned_alloc(64, 4096);
	cr_assert(e->buf0 && e->buf1 && e->buf1b);
	memset(e->buf0, 0, BUF);
	memset(e->buf1, 0, BUF);
	memset(e->buf1b, 0, 4096);
	e->mr0 = uroce_eng_mr_reg(e->pd0, e->buf0, 0x10000000ull, BUF, MR_ACCESS);
	e->mr1 = uroce_eng_mr_reg(e->pd1, e->buf1, 0x20000000ull, BUF, MR_ACCESS);
	e->mr1b = uroce_eng_mr_reg(e->pd1b, e->buf1b, 0x30000000ull, 4096, MR_ACCESS);
	cr_assert(e->mr0 && e->mr1 && e->mr1b);
	e->srq = xsrq_create(e->pd1, e1, e->cq1, XRCD);
	e->other_srq = xsrq_create(e->pd1, e1, e->cq1b, OTHER_XRCD);
	cr_assert(e->srq && e->other_srq);
	cr_assert_neq(uroce_eng_srq_num(e->srq), 0);
	cr_assert_neq(uroce_eng_srq_num(e->srq), uroce_eng_srq_num(e->other_srq));
	for (i = 0; i < NQP; i++) {
		struct uroce_eng_qp_init_attr ia;

		memset(&ia, 0, sizeof(ia));
		ia.qp_type = UROCE_QPT_XRC_SEND;
		ia.send_cq = e->cq0;
		ia.recv_cq = e->cq0;
		ia.cap.max_send_wr = 128;
		ia.cap.max_send_sge = 1;
		e->ini[i] = uroce_eng_qp_create(e->pd0, &ia);
		memset(&ia, 0, sizeof(ia));
		ia.qp_type = UROCE_QPT_XRC_RECV;
		ia.eng = e1;
		ia.xrcd = XRCD;
		e->tgt[i] = uroce_eng_qp_create(e->xpd, &ia);
		cr_assert(e->ini[i] && e->tgt[i], "QP %d: %s", i, strerror(errno));
		cr_assert_eq(sim_connect(e->sw, e->ini[i], e->tgt[i], &o), 0);
	}
}

static void
env_fini(struct env *e)
{
	simwire_destroy(e->sw);
	free(e->buf0);
	free(e->buf1);
	free(e->buf1b);
}

static int
post(struct env *e, int qp, enum uroce_wr_opcode op, uint32_t srqn, uint64_t id, uint32_t loff,
     uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct uroce_wr_sge sge = { .addr = 0x10000000ull + loff, .length = len,
				    .lkey = uroce_eng_mr_lkey(e->mr0) };
	struct uroce_eng_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = op;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = len > 0 ? 1 : 0;
	wr.xrc_remote_srqn = srqn;
	if (op == UROCE_WR_ATOMIC_FETCH_AND_ADD || op == UROCE_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = op == UROCE_WR_ATOMIC_CMP_AND_SWP ? 0x1111 : 5;
		wr.wr.atomic.swap = 0x2222;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return uroce_eng_post_send(e->ini[qp], &wr, NULL);
}

static void
post_srq_recvs(struct env *e, struct uroce_eng_srq *srq, uint32_t n, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct uroce_wr_sge sge = { .addr = 0x20000000ull + i * len, .length = len,
					    .lkey = uroce_eng_mr_lkey(e->mr1) };
		struct uroce_eng_recv_wr rw = { .wr_id = 1000 + i, .sg_list = &sge, .num_sge = 1 };

		cr_assert_eq(uroce_eng_post_srq_recv(srq, &rw, NULL), 0);
	}
}

static uint8_t
pattern(int qp, int seq, uint32_t k)
{
	return (uint8_t)(qp * 31 + seq * 7 + k * 13 + 1);
}

/* Expect: 3 initiators x 8 SENDs of 2500 bytes (3 packets each at 1024),
 * with 5 % loss, duplication and reordering, all land in the one SRQ their
 * XRCETH names, each once and whole, and complete to that SRQ's CQ with the
 * number of the TGT QP that received it; the PSNs wrap (0xFFFFF0). */
Test(xrc, sends_from_many_initiators_land_in_one_srq_under_loss)
{
	struct simwire_conf conf = { .seed = 20, .delay_us = 2, .drop_ppm = 50000,
				     .dup_ppm = 20000, .reorder_ppm = 20000 };
	enum { MSGS = 8, LEN = 2500, SLOT = 4096 };
	bool seen[NQP][MSGS];
	struct uroce_eng_wc wc[NQP * MSGS];
	struct env e;
	int q, m, i;

	env_init(&e, &conf);
	post_srq_recvs(&e, e.srq, NQP * MSGS, SLOT);
	memset(seen, 0, sizeof(seen));
	for (q = 0; q < NQP; q++)
		for (m = 0; m < MSGS; m++) {
			uint8_t *p = e.buf0 + (uint32_t)(q * MSGS + m) * SLOT;
			uint32_t k;

			p[0] = (uint8_t)q;
			p[1] = (uint8_t)m;
			for (k = 2; k < LEN; k++)
				p[k] = pattern(q, m, k);
			cr_assert_eq(post(&e, q, UROCE_WR_SEND, uroce_eng_srq_num(e.srq),
					  (uint64_t)(q * MSGS + m), (uint32_t)(q * MSGS + m) * SLOT,
					  LEN, 0, 0), 0);
		}
	cr_assert_eq(sim_wait_cq(e.sw, e.cq0, wc, NQP * MSGS, 60000000), NQP * MSGS);
	for (i = 0; i < NQP * MSGS; i++)
		cr_expect_eq(wc[i].status, UROCE_WC_SUCCESS, "send %llu: %s",
			     (unsigned long long)wc[i].wr_id, uroce_wc_status_str(wc[i].status));
	cr_assert_eq(sim_wait_cq(e.sw, e.cq1, wc, NQP * MSGS, 10000000), NQP * MSGS);
	for (i = 0; i < NQP * MSGS; i++) {
		const uint8_t *p = e.buf1 + (uint32_t)(wc[i].wr_id - 1000) * SLOT;
		uint32_t k;

		cr_assert_eq(wc[i].status, UROCE_WC_SUCCESS);
		cr_assert_eq(wc[i].opcode, UROCE_WC_RECV);
		cr_assert_eq(wc[i].byte_len, LEN);
		q = p[0];
		m = p[1];
		cr_assert(q < NQP && m < MSGS && !seen[q][m], "message %d/%d twice or bad", q, m);
		seen[q][m] = true;
		cr_expect_eq(wc[i].qp_num, uroce_eng_qp_num(e.tgt[q]), "TGT QPN of the receive");
		for (k = 2; k < LEN; k++)
			if (p[k] != pattern(q, m, k))
				cr_assert_fail("message %d/%d byte %u", q, m, k);
	}
	cr_expect_eq(uroce_eng_srq_count(e.srq), 0);
	cr_expect_eq(uroce_eng_cq_count(e.cq1b), 0, "nothing reached the other domain's SRQ");
	cr_expect_gt(simwire_stats(e.sw).dropped, 0, "the wire lost packets");
	env_fini(&e);
}

/* Expect: through a TGT QP, a WRITE places 5000 bytes with an R_Key of the
 * SRQ's PD, a READ brings them back, FETCH_ADD and CMP_SWP return the old
 * word and change it once, under 3 % loss. */
Test(xrc, write_read_and_atomics_through_a_tgt_qp)
{
	struct simwire_conf wc = { .seed = 21, .delay_us = 2, .drop_ppm = 30000 };
	struct uroce_eng_wc c[4];
	uint32_t rk, srqn, k;
	uint64_t v;
	struct env e;

	env_init(&e, &wc);
	rk = uroce_eng_mr_rkey(e.mr1);
	srqn = uroce_eng_srq_num(e.srq);
	for (k = 0; k < 5000; k++)
		e.buf0[k] = (uint8_t)(k * 3 + 7);
	v = 100;
	memcpy(e.buf1 + 8192, &v, 8);
	v = 0x1111;
	memcpy(e.buf1 + 8200, &v, 8);
	cr_assert_eq(post(&e, 0, UROCE_WR_RDMA_WRITE, srqn, 1, 0, 5000, 0x20000000ull + 100, rk), 0);
	cr_assert_eq(post(&e, 1, UROCE_WR_RDMA_READ, srqn, 2, 16384, 5000, 0x20000000ull + 100,
			  rk), 0);
	cr_assert_eq(sim_wait_cq(e.sw, e.cq0, c, 1, 30000000), 1);
	cr_expect_eq(c[0].status, UROCE_WC_SUCCESS);
	cr_assert_eq(sim_wait_cq(e.sw, e.cq0, c + 1, 1, 30000000), 1);
	cr_expect_eq(c[1].status, UROCE_WC_SUCCESS);
	cr_expect_eq(memcmp(e.buf1 + 100, e.buf0, 5000), 0, "WRITE placed");
	/* The READ may have raced the WRITE (another QP): read again after. */
	cr_assert_eq(post(&e, 1, UROCE_WR_RDMA_READ, srqn, 3, 16384, 5000, 0x20000000ull + 100,
			  rk), 0);
	cr_assert_eq(sim_wait_cq(e.sw, e.cq0, c, 1, 30000000), 1);
	cr_expect_eq(c[0].status, UROCE_WC_SUCCESS);
	cr_expect_eq(memcmp(e.buf0 + 16384, e.buf0, 5000), 0, "READ brought it back");
	cr_assert_eq(post(&e, 2, UROCE_WR_ATOMIC_FETCH_AND_ADD, srqn, 4, 32768, 8,
			  0x20000000ull + 8192, rk), 0);
	cr_assert_eq(post(&e, 2, UROCE_WR_ATOMIC_CMP_AND_SWP, srqn, 5, 32776, 8,
			  0x20000000ull + 8200, rk), 0);
	cr_assert_eq(sim_wait_cq(e.sw, e.cq0, c, 2, 30000000), 2);
	cr_expect_eq(c[0].status, UROCE_WC_SUCCESS);
	cr_expect_eq(c[1].status, UROCE_WC_SUCCESS);
	memcpy(&v, e.buf0 + 32768, 8);
	cr_expect_eq(v, 100, "FETCH_ADD's original value");
	memcpy(&v, e.buf1 + 8192, 8);
	cr_expect_eq(v, 105, "added once");
	memcpy(&v, e.buf0 + 32776, 8);
	cr_expect_eq(v, 0x1111, "CMP_SWP's original value");
	memcpy(&v, e.buf1 + 8200, 8);
	cr_expect_eq(v, 0x2222, "swapped once");
	cr_expect_eq(uroce_eng_cq_count(e.cq1), 0, "one-sided operations take no receive");
	env_fini(&e);
}

/* Expect: an XRC request is opcode 0xA0 | op with the XRCETH (the SRQ's
 * number) right after the BTH; the TGT QP's ACK is 0xB1 without one. */
Test(xrc, packets_carry_xrc_opcodes_and_the_xrceth)
{
	struct simwire_conf wc = { .seed = 22, .delay_us = 1 };
	struct uroce_eng_wc c;
	const struct sim_cap *cap;
	struct env e;
	uint32_t i;
	bool acked = false;

	env_init(&e, &wc);
	post_srq_recvs(&e, e.srq, 1, 4096);
	/* Captured packets are held: each is looked at, then forwarded. */
	simwire_set_capture(e.sw, 0, true);
	simwire_set_capture(e.sw, 1, true);
	cr_assert_eq(post(&e, 0, UROCE_WR_SEND, uroce_eng_srq_num(e.srq), 1, 0, 64, 0, 0), 0);
	simwire_settle(e.sw);
	cr_assert_eq(simwire_ncap(e.sw, 0), 1);
	cap = simwire_cap(e.sw, 0, 0);
	cr_expect_eq(cap->p.opcode, 0xA4, "XRC SEND Only");
	cr_expect_eq(cap->p.info->off_xrceth, 12);
	cr_expect_eq(uroce_xrceth_srqn(cap->p.bth + 12), uroce_eng_srq_num(e.srq));
	cr_expect_eq(cap->p.paylen, 64);
	simwire_cap_forward(e.sw, 0, 0);
	simwire_settle(e.sw);
	for (i = 0; i < simwire_ncap(e.sw, 1); i++) {
		cap = simwire_cap(e.sw, 1, i);
		if (cap->p.opcode == 0xB1) {
			acked = true;
			cr_expect_eq(cap->p.info->hdr_len, 16, "BTH + AETH");
		}
		simwire_cap_forward(e.sw, 1, i);
	}
	cr_expect(acked, "an XRC Acknowledge came back");
	simwire_set_capture(e.sw, 0, false);
	simwire_set_capture(e.sw, 1, false);
	cr_assert_eq(sim_wait_cq(e.sw, e.cq0, &c, 1, 1000000), 1);
	cr_expect_eq(c.status, UROCE_WC_SUCCESS);
	cr_assert_eq(sim_wait_cq(e.sw, e.cq1, &c, 1, 1000000), 1);
	cr_expect_eq(c.byte_len, 64);
	env_fini(&e);
}

/*
 * Expect: an SRQ of another XRC domain, an SRQ number no SRQ has, and an
 * R_Key of a PD other than the SRQ's each complete with REM_ACCESS_ERR at
 * the initiator; the TGT QP goes to ERR; nothing lands in either SRQ or in
 * the other PD's memory; the domain violations are counted.
 */
Test(xrc, foreign_srq_unknown_srq_and_foreign_pd_are_refused)
{
	struct simwire_conf wc = { .seed = 23, .delay_us = 1 };
	struct uroce_eng_wc c;
	uint8_t zero[64];
	struct env e;

	env_init(&e, &wc);
	post_srq_recvs(&e, e.srq, 4, 4096);
	post_srq_recvs(&e, e.other_srq, 4, 4096);
	memset(e.buf0, 0xEE, 64);

	cr_assert_eq(post(&e, 0, UROCE_WR_SEND, uroce_eng_srq_num(e.other_srq), 1, 0, 64, 0, 0),
		     0);
	cr_assert_eq(sim_wait_cq(e.sw, e.cq0, &c, 1, 2000000), 1);
	cr_expect_eq(c.status, UROCE_WC_REM_ACCESS_ERR, "%s", uroce_wc_status_str(c.status));
	cr_expect_eq(uroce_eng_qp_state(e.tgt[0]), UROCE_QPS_ERR);

	cr_assert_eq(post(&e, 1, UROCE_WR_RDMA_WRITE, 0x123456, 2, 0, 64, 0x20000000ull,
			  uroce_eng_mr_rkey(e.mr1)), 0);
	cr_assert_eq(sim_wait_cq(e.sw, e.cq0, &c, 1, 2000000), 1);
	cr_expect_eq(c.status, UROCE_WC_REM_ACCESS_ERR, "%s", uroce_wc_status_str(c.status));
	cr_expect_eq(uroce_eng_qp_state(e.tgt[1]), UROCE_QPS_ERR);

	cr_assert_eq(post(&e, 2, UROCE_WR_RDMA_WRITE, uroce_eng_srq_num(e.srq), 3, 0, 64,
			  0x30000000ull, uroce_eng_mr_rkey(e.mr1b)), 0);
	cr_assert_eq(sim_wait_cq(e.sw, e.cq0, &c, 1, 2000000), 1);
	cr_expect_eq(c.status, UROCE_WC_REM_ACCESS_ERR, "%s", uroce_wc_status_str(c.status));

	memset(zero, 0, sizeof(zero));
	cr_expect_eq(memcmp(e.buf1b, zero, 64), 0, "the other PD's memory untouched");
	cr_expect_eq(uroce_eng_srq_count(e.srq), 4);
	cr_expect_eq(uroce_eng_srq_count(e.other_srq), 4);
	cr_expect_eq(uroce_eng_cq_count(e.cq1), 0);
	cr_expect_eq(uroce_eng_cq_count(e.cq1b), 0);
	cr_expect_eq(uroce_eng_counter(simwire_engine(e.sw, 1), UROCE_CNT_RESP_XRC_DOMAIN_ERR), 2);
	env_fini(&e);
}

/* Expect: a hostile peer's XRC requests (injected, from the TGT QP's peer
 * address) naming an unknown SRQ or one of another domain are NAKed and
 * counted and change nothing; a request to an initiator (no receive side)
 * or an XRC response to a target is dropped as a bad service. */
Test(xrc, hostile_peer_xrceth)
{
	struct simwire_conf wc = { .seed = 24, .delay_us = 1 };
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	struct uroce_eng *e1;
	uint8_t data[32];
	struct env e;

	env_init(&e, &wc);
	e1 = simwire_engine(e.sw, 1);
	post_srq_recvs(&e, e.other_srq, 2, 4096);
	memset(data, 0x5A, sizeof(data));
	memset(&bth, 0, sizeof(bth));
	memset(&ext, 0, sizeof(ext));
	bth.opcode = 0xA4; /* XRC SEND Only */
	bth.pkey = UROCE_DEFAULT_PKEY;
	bth.dqpn = uroce_eng_qp_num(e.tgt[0]);
	bth.psn = 0xFFFFF0; /* the TGT QP's expected PSN */
	bth.ackreq = true;
	ext.xrc_srqn = uroce_eng_srq_num(e.other_srq);
	cr_assert_eq(simwire_inject(e.sw, 1, &bth, &ext, data, sizeof(data)), 0);
	simwire_settle(e.sw);
	cr_expect_eq(uroce_eng_counter(e1, UROCE_CNT_RESP_XRC_DOMAIN_ERR), 1);
	cr_expect_eq(uroce_eng_srq_count(e.other_srq), 2, "the foreign SRQ gave no WQE");
	cr_expect_eq(uroce_eng_qp_state(e.tgt[0]), UROCE_QPS_ERR);

	bth.dqpn = uroce_eng_qp_num(e.tgt[1]);
	ext.xrc_srqn = 0xFFFFFF;
	cr_assert_eq(simwire_inject(e.sw, 1, &bth, &ext, data, sizeof(data)), 0);
	simwire_settle(e.sw);
	cr_expect_eq(uroce_eng_counter(e1, UROCE_CNT_RESP_XRC_DOMAIN_ERR), 2);
	cr_expect_eq(uroce_eng_cq_count(e.cq1), 0);

	/* An XRC request to an initiator, an XRC ACK to a target: bad service. */
	bth.dqpn = uroce_eng_qp_num(e.ini[2]);
	cr_assert_eq(simwire_inject(e.sw, 0, &bth, &ext, data, sizeof(data)), 0);
	bth.opcode = 0xB1;
	bth.dqpn = uroce_eng_qp_num(e.tgt[2]);
	ext.syndrome = 0;
	cr_assert_eq(simwire_inject(e.sw, 1, &bth, &ext, NULL, 0), 0);
	simwire_settle(e.sw);
	cr_expect_eq(uroce_eng_counter(simwire_engine(e.sw, 0), UROCE_CNT_RX_BAD_SERVICE), 1);
	cr_expect_eq(uroce_eng_counter(e1, UROCE_CNT_RX_BAD_SERVICE), 1);
	cr_expect_eq(uroce_eng_qp_state(e.tgt[2]), UROCE_QPS_RTS);
	env_fini(&e);
}

/* Expect: the engine refuses what XRC forbids: a TGT QP without a domain or
 * with CQs, an initiator with an SRQ, an XRC SRQ without a CQ, receives
 * posted to either QP, RDMA on an initiator's WR naming a 25-bit SRQ number. */
Test(xrc, creation_and_posting_rules)
{
	struct simwire_conf wc = { .seed = 25, .delay_us = 1 };
	struct uroce_eng_qp_init_attr ia;
	struct uroce_eng_srq_init_attr sa;
	struct uroce_wr_sge sge = { .addr = 0x10000000ull, .length = 8 };
	struct uroce_eng_recv_wr rw = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	struct env e;

	env_init(&e, &wc);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = UROCE_QPT_XRC_RECV;
	ia.eng = simwire_engine(e.sw, 1);
	cr_expect_null(uroce_eng_qp_create(e.xpd, &ia), "no domain");
	ia.xrcd = XRCD;
	ia.send_cq = e.cq1;
	ia.recv_cq = e.cq1;
	cr_expect_null(uroce_eng_qp_create(e.xpd, &ia), "CQs on a TGT QP");
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = UROCE_QPT_XRC_SEND;
	ia.send_cq = e.cq0;
	ia.recv_cq = e.cq0;
	ia.cap.max_send_wr = 4;
	ia.srq = NULL;
	memset(&sa, 0, sizeof(sa));
	sa.max_wr = 4;
	sa.xrcd = XRCD;
	sa.eng = simwire_engine(e.sw, 1);
	cr_expect_null(uroce_eng_srq_create(e.pd1, &sa), "XRC SRQ without a CQ");
	sa.cq = e.cq0; /* another engine's */
	cr_expect_null(uroce_eng_srq_create(e.pd1, &sa), "XRC SRQ with a CQ of another engine");
	cr_expect_eq(uroce_eng_post_recv(e.ini[0], &rw, NULL), -EINVAL);
	cr_expect_eq(uroce_eng_post_recv(e.tgt[0], &rw, NULL), -EINVAL);
	cr_expect_eq(post(&e, 0, UROCE_WR_SEND, 0x1000000, 9, 0, 8, 0, 0), -EINVAL,
		     "SRQ number above 24 bits");
	env_fini(&e);
}
