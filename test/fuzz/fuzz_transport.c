/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * libFuzzer target for the transport engine behind lib/wire: the responder
 * and the completer fed packet sequences, through the public API only
 * (uroce_eng_* and uroce_eng_rx()). One engine lives for the whole run; each
 * input gets fresh QPs brought to RTS, so an input replays alone exactly as
 * it ran in the campaign:
 *
 *   QP 0  RC, its own receive queue      QP 3  UD
 *   QP 1  RC, with requests outstanding  QP 4  RC on an SRQ
 *   QP 2  UC
 *
 * The QPs' PD holds memory regions with every combination that matters to a
 * remote peer, each surrounded by PROT_NONE guard pages:
 *
 *   RW      2 pages, every remote right        RO      1 page, REMOTE_READ only,
 *   WONLY   1 page, REMOTE_WRITE only                  mapped PROT_READ
 *   HIGH    2 pages at iova 2^64 - 12 KiB      NOACC   1 page, no remote right,
 *   WIN     100 bytes in the middle of a               mapped PROT_NONE
 *           page of canary bytes               FOREIGN 1 page, all rights but
 *   LOCAL   4 pages for local SGEs                     another PD, PROT_NONE
 *                                              STALE   deregistered, PROT_NONE
 *
 * so any byte the engine reads or writes where IBA forbids it faults at once
 * (a write to RO, any access to NOACC, FOREIGN or STALE, anything past a
 * region), and WIN's canary is compared after every input.
 *
 * QPs: RC, RC, UC, UD, RC on an SRQ, an XRC initiator and an XRC target
 * (IBA 1.2) whose domain has an SRQ; another domain's SRQ holds one receive
 * that no request may take.
 *
 * An input is a header (path MTU, initial PSNs, receives and requests to
 * post) and then records, each a command byte and its operands: a request
 * built field by field (opcode of any service, PSN in sequence, ahead, behind
 * or duplicate, each key and address chosen among the regions above or raw,
 * DMA and payload lengths, pad count, P_Key, source GID), a response to one
 * of the PSNs the requester really sent, a raw packet aimed at one of the
 * QPs, time passing (timers, retransmission), a local post, a receive, a QP
 * state change, or an MR re-registration.
 *
 * Invariants (abort on violation, besides ASan/UBSan and the guard pages):
 * every packet the engine sends parses, carries at most 4096 payload bytes
 * and names one of our QPs as its source; a successful receive completion
 * never claims more bytes than its receive WQE had room for (a WRITE with
 * immediate excepted: it reports the WRITE's length); every MR still grants
 * its range and rights after the input (nothing remote disables an MR);
 * WIN's surroundings never change.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uroce_transport.h"
#include "eng_post.h"
#include "uroce_wire.h"

#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PAGE 4096u
#define NQP 7
/* IBA 1.2 XRC: q[5] an initiator, q[6] a target of domain XRCD (its SRQ xsrq);
 * xsrq_other is an SRQ of another domain, which no request may reach. */
#define XRCD 1
#define QI_SRQ 4
#define QI_TGT 6
#define QP_DEPTH 16
#define MAX_RECORDS 96
#define SENT_LOG 32
#define CANARY 0xA7
#define WIN_OFF 1000u
#define WIN_LEN 100u

enum mr_id {
	MR_RW, MR_RO, MR_WONLY, MR_NOACC, MR_FOREIGN, MR_HIGH, MR_WIN, MR_STALE, MR_LOCAL,
	MR_N,
};

struct region {
	uint8_t *mem;        /* first byte of the window */
	uint64_t iova;
	uint32_t len;
	int access;
	int prot;            /* mprotect after registration */
	bool foreign;
	struct uroce_eng_mr *mr;
	uint32_t rkey;
};

struct fqp {
	struct uroce_eng_qp *qp;
	enum uroce_qp_type type;
	uint32_t qpn;
	uint32_t peer_qpn;
	uint32_t next_psn;            /* what a sane peer would send next */
	uint32_t mtu;                 /* bytes */
	uint32_t sent_psn[SENT_LOG];  /* PSNs of the requests this QP sent */
	uint8_t sent_op[SENT_LOG];
	unsigned int n_sent;
};

static const uint8_t local_gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 1};
static const uint8_t peer_gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2};
static const uint8_t spoof_gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 66};

static struct uroce_eng *eng;
static struct uroce_eng_pd *pd, *pd2;
static struct uroce_eng_ah *ah;
static struct region reg[MR_N];
static uint8_t *win_page;
static uint64_t now_us = 1;
static struct fqp q[NQP];
static struct uroce_eng_cq *cq;
static struct uroce_eng_srq *srq, *xsrq, *xsrq_other;
static uint8_t inline_buf[UROCE_MAX_INLINE];

/* ------------------------------------------------------------------------ */
/* Engine ops: a clock the input moves, and a wire that checks and discards  */
/* ------------------------------------------------------------------------ */

static uint64_t
op_now(void *ctx)
{
	(void)ctx;
	return now_us;
}

static uint8_t *
op_alloc(void *ctx, uint32_t ib_len)
{
	(void)ctx;
	/* Exact size: ASan sees any write past what the engine asked for. */
	return malloc(ib_len ? ib_len : 1);
}

static struct fqp *
fqp_of(uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < NQP; i++)
		if (q[i].qp != NULL && q[i].qpn == qpn)
			return &q[i];
	return NULL;
}

static void
op_send(void *ctx, uint8_t *buf, uint32_t ib_len, const struct uroce_eng_tx_addr *a)
{
	struct uroce_pkt p;
	struct fqp *f;

	(void)ctx;
	/* Invariant: whatever a peer threw at it, the engine emits valid packets. */
	if (uroce_pkt_parse(buf, ib_len, &p) != UROCE_WIRE_OK) {
		fprintf(stderr, "engine sent a packet that does not parse (opcode %#x, %u bytes)\n",
			buf[0], ib_len);
		abort();
	}
	if (p.paylen > UROCE_MAX_PMTU)
		abort();
	f = fqp_of(a->src_qpn);
	if (f == NULL) {
		fprintf(stderr, "engine sent from QPN %#x, not one of ours\n", a->src_qpn);
		abort();
	}
	/* Remember the requests, so that responses can name real PSNs. */
	if (p.info->mask & UROCE_F_REQ) {
		f->sent_psn[f->n_sent % SENT_LOG] = p.psn;
		f->sent_op[f->n_sent % SENT_LOG] = p.opcode;
		f->n_sent++;
	}
	free(buf);
}

static void
op_free(void *ctx, uint8_t *buf)
{
	(void)ctx;
	free(buf);
}

static const struct uroce_eng_ops ops = {
	.now_us = op_now,
	.tx_alloc = op_alloc,
	.tx_send = op_send,
	.tx_free = op_free,
};

/* ------------------------------------------------------------------------ */
/* One-time set-up                                                           */
/* ------------------------------------------------------------------------ */

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_transport set-up: %s: %s\n", what, strerror(errno));
	abort();
}

/* Map @p pages of window between two PROT_NONE guard pages. */
static uint8_t *
guarded(unsigned int pages)
{
	uint8_t *m = mmap(NULL, (size_t)(pages + 2) * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		die("mmap");
	if (mprotect(m, PAGE, PROT_NONE) != 0 ||
	    mprotect(m + (size_t)(pages + 1) * PAGE, PAGE, PROT_NONE) != 0)
		die("mprotect guard");
	return m + PAGE;
}

static void
mr_register(struct region *r)
{
	r->mr = uroce_eng_mr_reg(r->foreign ? pd2 : pd, r->mem, r->iova, r->len, r->access);
	if (r->mr == NULL)
		die("uroce_eng_mr_reg");
	r->rkey = uroce_eng_mr_rkey(r->mr);
}

static void
region_init(enum mr_id id, unsigned int pages, uint64_t iova, int access, int prot)
{
	struct region *r = &reg[id];

	r->mem = guarded(pages);
	memset(r->mem, 0x5A, (size_t)pages * PAGE);
	r->iova = iova;
	r->len = pages * PAGE;
	r->access = access;
	r->prot = prot;
	r->foreign = id == MR_FOREIGN;
	mr_register(r);
	if (prot != (PROT_READ | PROT_WRITE) && mprotect(r->mem, r->len, prot) != 0)
		die("mprotect region");
}

static void
setup(void)
{
	const int all = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
			UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC |
			UROCE_ACCESS_FLUSH_GLOBAL;
	struct uroce_eng_conf c;
	struct uroce_eng_ah_attr aa;
	struct region *w;

	memset(&c, 0, sizeof(c));
	c.ops = &ops;
	memcpy(c.gid, local_gid, 16);
	c.poll_budget = 64;
	eng = uroce_eng_create(&c);
	if (eng == NULL)
		die("uroce_eng_create");
	pd = uroce_eng_pd_alloc(eng);
	pd2 = uroce_eng_pd_alloc(eng);
	if (pd == NULL || pd2 == NULL)
		die("uroce_eng_pd_alloc");
	region_init(MR_RW, 2, 0x10000000ull, all, PROT_READ | PROT_WRITE);
	region_init(MR_RO, 1, 0x11000000ull, UROCE_ACCESS_REMOTE_READ, PROT_READ);
	region_init(MR_WONLY, 1, 0x12000000ull, UROCE_ACCESS_LOCAL_WRITE |
		    UROCE_ACCESS_REMOTE_WRITE, PROT_READ | PROT_WRITE);
	region_init(MR_NOACC, 1, 0x13000000ull, UROCE_ACCESS_LOCAL_WRITE, PROT_NONE);
	region_init(MR_FOREIGN, 1, 0x14000000ull, all, PROT_NONE);
	region_init(MR_HIGH, 2, 0xFFFFFFFFFFFFD000ull, all, PROT_READ | PROT_WRITE);
	region_init(MR_LOCAL, 4, 0x20000000ull, UROCE_ACCESS_LOCAL_WRITE,
		    PROT_READ | PROT_WRITE);
	/* STALE: registered, deregistered, its memory unreachable. */
	region_init(MR_STALE, 1, 0x15000000ull, all, PROT_NONE);
	if (uroce_eng_mr_dereg(reg[MR_STALE].mr) != 0)
		die("uroce_eng_mr_dereg");
	reg[MR_STALE].mr = NULL;
	/* WIN: a 100-byte window whose neighbours in the same page are canary. */
	win_page = guarded(1);
	memset(win_page, CANARY, PAGE);
	w = &reg[MR_WIN];
	w->mem = win_page + WIN_OFF;
	w->iova = 0x16000000ull + WIN_OFF;
	w->len = WIN_LEN;
	w->access = all;
	w->prot = PROT_READ | PROT_WRITE;
	mr_register(w);
	memset(&aa, 0, sizeof(aa));
	memcpy(aa.dgid, peer_gid, 16);
	aa.hop_limit = 64;
	ah = uroce_eng_ah_create(pd, &aa);
	if (ah == NULL)
		die("uroce_eng_ah_create");
	for (unsigned int i = 0; i < sizeof(inline_buf); i++)
		inline_buf[i] = (uint8_t)i;
}

/* ------------------------------------------------------------------------ */
/* Per-input QPs                                                             */
/* ------------------------------------------------------------------------ */

static const enum uroce_qp_type qp_types[NQP] = {
	UROCE_QPT_RC, UROCE_QPT_RC, UROCE_QPT_UC, UROCE_QPT_UD, UROCE_QPT_RC,
	UROCE_QPT_XRC_SEND, UROCE_QPT_XRC_RECV,
};

/* RC and XRC take RC's reliable-service attributes. */
static bool
reliable(enum uroce_qp_type t)
{
	return t == UROCE_QPT_RC || t == UROCE_QPT_XRC_SEND || t == UROCE_QPT_XRC_RECV;
}

static int
bring_up(struct fqp *f, enum uroce_mtu mtu, uint32_t sq_psn, uint32_t rq_psn, uint8_t retry)
{
	struct uroce_eng_qp_attr a;
	int mask;

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x11111111;
	a.qp_access_flags = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
			    UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC |
			    UROCE_ACCESS_FLUSH_GLOBAL | UROCE_ACCESS_FLUSH_PERSISTENT;
	mask = UROCE_QP_STATE | UROCE_QP_PORT | UROCE_QP_PKEY_INDEX |
	       (f->type == UROCE_QPT_UD ? UROCE_QP_QKEY : UROCE_QP_ACCESS_FLAGS);
	if (uroce_eng_modify_qp(f->qp, &a, mask) != 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTR;
	mask = UROCE_QP_STATE;
	if (f->type != UROCE_QPT_UD) {
		a.path_mtu = mtu;
		a.dest_qp_num = f->peer_qpn;
		a.rq_psn = rq_psn;
		memcpy(a.ah_attr.dgid, peer_gid, 16);
		a.ah_attr.hop_limit = 64;
		a.ah_attr.port_num = 1;
		mask |= UROCE_QP_AV | UROCE_QP_PATH_MTU | UROCE_QP_DEST_QPN | UROCE_QP_RQ_PSN;
		if (reliable(f->type)) {
			a.max_dest_rd_atomic = 4;
			a.min_rnr_timer = 1;
			mask |= UROCE_QP_MAX_DEST_RD_ATOMIC | UROCE_QP_MIN_RNR_TIMER;
		}
	}
	if (uroce_eng_modify_qp(f->qp, &a, mask) != 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTS;
	a.sq_psn = sq_psn;
	mask = UROCE_QP_STATE | UROCE_QP_SQ_PSN;
	if (reliable(f->type)) {
		a.timeout = 4 + (retry & 7);
		a.retry_cnt = retry & 7;
		a.rnr_retry = (retry >> 3) & 7;
		a.max_rd_atomic = 4;
		mask |= UROCE_QP_TIMEOUT | UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY |
			UROCE_QP_MAX_QP_RD_ATOMIC;
	}
	return uroce_eng_modify_qp(f->qp, &a, mask);
}

static void
qps_create(enum uroce_mtu mtu, uint32_t psn0, uint8_t retry)
{
	struct uroce_eng_srq_init_attr sa = {.max_wr = QP_DEPTH, .max_sge = 2};
	unsigned int i;

	cq = uroce_eng_cq_create(eng, 256, NULL);
	srq = uroce_eng_srq_create(pd, &sa);
	if (cq == NULL || srq == NULL)
		die("cq/srq");
	sa.eng = eng;
	sa.cq = cq;
	sa.xrcd = XRCD;
	xsrq = uroce_eng_srq_create(pd, &sa);
	sa.xrcd = XRCD + 1;
	xsrq_other = uroce_eng_srq_create(pd, &sa);
	if (xsrq == NULL || xsrq_other == NULL)
		die("xrc srqs");
	{
		/* A bait receive no XRC request may ever take (checked at the end). */
		struct uroce_wr_sge bs = {reg[MR_LOCAL].iova, 64, uroce_eng_mr_lkey(reg[MR_LOCAL].mr)};
		struct uroce_eng_recv_wr br = {.wr_id = 0xBA17, .sg_list = &bs, .num_sge = 1};

		if (uroce_eng_post_srq_recv(xsrq_other, &br, NULL) != 0)
			die("xrc bait");
	}
	for (i = 0; i < NQP; i++) {
		struct uroce_eng_qp_init_attr ia;
		struct fqp *f = &q[i];

		memset(f, 0, sizeof(*f));
		memset(&ia, 0, sizeof(ia));
		ia.qp_type = qp_types[i];
		ia.send_cq = cq;
		ia.recv_cq = cq;
		ia.srq = i == QI_SRQ ? srq : NULL;
		if (ia.qp_type == UROCE_QPT_XRC_RECV) {
			ia.send_cq = ia.recv_cq = NULL;
			ia.eng = eng;
			ia.xrcd = XRCD;
		}
		ia.cap.max_send_wr = QP_DEPTH;
		ia.cap.max_recv_wr = QP_DEPTH;
		ia.cap.max_send_sge = 2;
		ia.cap.max_recv_sge = 2;
		ia.cap.max_inline_data = UROCE_MAX_INLINE;
		f->qp = uroce_eng_qp_create(pd, &ia);
		if (f->qp == NULL)
			die("uroce_eng_qp_create");
		f->type = qp_types[i];
		f->qpn = uroce_eng_qp_num(f->qp);
		f->peer_qpn = 0x800 + i;
		f->next_psn = (psn0 + 0x100 * i) & UROCE_PSN_MASK;
		f->mtu = 128u << mtu;
		if (bring_up(f, mtu, (psn0 + 0x80 + 0x100 * i) & UROCE_PSN_MASK, f->next_psn,
			     retry) != 0)
			die("bring_up");
	}
}

static void
qps_destroy(void)
{
	unsigned int i;

	for (i = 0; i < NQP; i++) {
		uroce_eng_qp_destroy(q[i].qp);
		q[i].qp = NULL;
	}
	uroce_eng_srq_destroy(srq);
	uroce_eng_srq_destroy(xsrq);
	uroce_eng_srq_destroy(xsrq_other);
	uroce_eng_cq_destroy(cq);
}

/* ------------------------------------------------------------------------ */
/* Records                                                                   */
/* ------------------------------------------------------------------------ */

static uint32_t
pick_key(struct fin *in)
{
	uint8_t k = fin_u8(in);

	switch (k & 15) {
	case MR_N:
		return fin_u32(in);
	case MR_N + 1:
		return reg[MR_RW].rkey ^ 1; /* right index, wrong variant */
	case MR_N + 2:
		return reg[MR_RW].rkey ^ 0x100; /* neighbouring index */
	default:
		return (k & 15) < MR_N ? reg[k & 15].rkey : reg[MR_RW].rkey;
	}
}

static const struct region *
key_region(uint32_t rkey)
{
	unsigned int i;

	for (i = 0; i < MR_N; i++)
		if (reg[i].rkey == rkey)
			return &reg[i];
	return &reg[MR_RW];
}

/* A virtual address relative to the region of @p rkey, or raw. */
static uint64_t
pick_va(struct fin *in, uint32_t rkey)
{
	const struct region *r = key_region(rkey);
	uint8_t m = fin_u8(in);

	switch (m & 7) {
	case 0:
		return r->iova + fin_u16(in) % (r->len + 1);
	case 1:
		return r->iova + (uint64_t)(int64_t)(int32_t)fin_u32(in);
	case 2:
		return fin_u64(in);
	case 3:
		return r->iova + r->len - fin_u8(in);
	case 4:
		return r->iova - 1 - fin_u8(in);
	case 5:
		return UINT64_MAX - fin_u16(in);
	default:
		return r->iova + (uint64_t)(fin_u16(in) % (r->len / 8 + 1)) * 8 + (m >> 3 & 7);
	}
}

static uint32_t
pick_len(struct fin *in, uint32_t paylen)
{
	uint8_t m = fin_u8(in);

	switch (m & 7) {
	case 0:
		return paylen;
	case 1:
		return fin_u16(in);
	case 2:
		return fin_u32(in);
	case 3:
		return UINT32_MAX - fin_u8(in);
	case 4:
		return 8;
	case 5:
		return paylen + 1 + fin_u8(in);
	case 6:
		return 0;
	default:
		return 0x80000000u + fin_u16(in);
	}
}

static uint32_t
pick_psn(struct fin *in, struct fqp *f, bool *advance)
{
	uint8_t m = fin_u8(in);

	*advance = false;
	switch (m & 7) {
	case 0:
	case 1:
	case 2:
		*advance = true;
		return f->next_psn;
	case 3:
		*advance = true;
		return uroce_psn_add(f->next_psn, 1 + fin_u8(in) % 8); /* a gap */
	case 4:
		return uroce_psn_add(f->next_psn, UROCE_PSN_MASK - fin_u8(in) % 16); /* behind */
	case 5:
		return uroce_psn_add(f->next_psn, 0x800000 + fin_u16(in)); /* half a space away */
	case 6:
		return fin_u32(in) & UROCE_PSN_MASK;
	default:
		return uroce_psn_add(f->next_psn, UROCE_PSN_MASK); /* the last one again */
	}
}

enum late { LATE_NO, LATE_GOOD, LATE_BAD };

/* Hand @p len bytes at @p bth to the engine as the wire would (parse first).
 * @p late: where the opcode allows it, leave the payload's ICRC for the
 * engine to check as it copies (uroce_parse_split() with late set), with the
 * right value or a wrong one; a wrong one must be counted exactly once
 * (rx_icrc_late_errors), a right one never. */
static void
deliver(uint8_t *bth, uint32_t len, bool spoof, enum late late)
{
	static const uint8_t zero[3];
	struct uroce_frame fr;
	struct uroce_pkt p;
	uint64_t before;
	uint32_t crc;
	int rc;

	if (uroce_pkt_parse(bth, len, &p) != UROCE_WIRE_OK)
		return;
	if (late != LATE_NO && (p.info->mask & UROCE_F_LATE_ICRC) &&
	    p.paylen >= UROCE_LATE_ICRC_MIN) {
		p.icrc_late = true;
		p.icrc_seed = 0x5EED;
		crc = uroce_crc32(uroce_crc32(p.icrc_seed, p.payload, p.paylen), zero, p.padcnt);
		p.icrc_want = late == LATE_BAD ? crc ^ 0x100 : crc;
	} else {
		late = LATE_NO;
	}
	memset(&fr, 0, sizeof(fr));
	fr.family = UROCE_IP_V4;
	memcpy(fr.sgid, spoof ? spoof_gid : peer_gid, 16);
	memcpy(fr.dgid, local_gid, 16);
	fr.hop_limit = 64;
	fr.sport = 0xC000;
	fr.dport = UROCE_UDP_PORT;
	fr.ib_len = len;
	before = uroce_eng_counter(eng, UROCE_CNT_RX_ICRC_LATE);
	rc = uroce_eng_rx(eng, &p, &fr);
	if (uroce_eng_counter(eng, UROCE_CNT_RX_ICRC_LATE) - before != (late == LATE_BAD) ||
	    rc != (late == LATE_BAD ? -EBADMSG : 0)) {
		fprintf(stderr, "a late ICRC (%s, %s) counted %llu times, uroce_eng_rx() %d\n",
			p.info->name, late == LATE_BAD ? "wrong" : "right",
			(unsigned long long)(uroce_eng_counter(eng, UROCE_CNT_RX_ICRC_LATE) - before),
			rc);
		abort();
	}
}

/* Build a packet of @p opcode with the given fields and @p paylen bytes,
 * then apply the input's tampering (pad count, truncation) and deliver it. */
static void
build_and_deliver(struct fin *in, const struct uroce_bth_fields *bth,
		  const struct uroce_ext_fields *ext, uint32_t paylen)
{
	const struct uroce_opcode_info *oi = uroce_opcode_get(bth->opcode);
	uint8_t tamper = fin_u8(in);
	uint32_t hl, len;
	uint8_t *buf;

	if (oi == NULL)
		return;
	if (!(oi->mask & UROCE_F_PAYLOAD))
		paylen = 0;
	if (paylen > UROCE_MAX_PMTU)
		paylen = UROCE_MAX_PMTU;
	len = oi->hdr_len + paylen + uroce_pad(paylen) + UROCE_ICRC_LEN;
	buf = malloc(len);
	if (buf == NULL)
		return;
	memset(buf, 0, len);
	hl = uroce_hdr_build(buf, len, bth, ext, paylen);
	if (hl == 0) {
		free(buf);
		return;
	}
	memset(buf + hl, (int)(tamper | 1), paylen);
	if (tamper & 0x10) /* a pad count that does not match the payload */
		buf[1] = (uint8_t)((buf[1] & ~0x30) | (fin_u8(in) & 3) << 4);
	if (tamper & 0x20) /* truncated: cut anywhere, headers included */
		len = fin_u16(in) % (len + 1);
	/* 0x80: the ICRC left late, 0x08: and wrong. */
	deliver(buf, len, tamper & 0x40,
		!(tamper & 0x80) ? LATE_NO : (tamper & 0x08) ? LATE_BAD : LATE_GOOD);
	free(buf);
}

static struct fqp *
pick_qp(struct fin *in)
{
	return &q[fin_u8(in) % NQP];
}

static uint8_t
svc_of(enum uroce_qp_type t)
{
	return t == UROCE_QPT_RC ? UROCE_SVC_RC : t == UROCE_QPT_UC ? UROCE_SVC_UC :
	       t == UROCE_QPT_UD ? UROCE_SVC_UD : UROCE_SVC_XRC;
}

/* The XRCETH's SRQ: mostly the target's domain's, else another domain's or
 * any number (IBA 1.2 XRC: those must be refused). */
static uint32_t
pick_srqn(struct fin *in)
{
	uint8_t k = fin_u8(in);

	return k < 0xC0 ? uroce_eng_srq_num(xsrq) : k < 0xE0 ? uroce_eng_srq_num(xsrq_other) :
	       fin_u32(in);
}

/* A request from the peer: field by field. */
static void
rec_request(struct fin *in)
{
	struct fqp *f = pick_qp(in);
	struct uroce_bth_fields b;
	struct uroce_ext_fields e;
	uint8_t opb = fin_u8(in), flags = fin_u8(in);
	uint32_t paylen;
	bool advance;

	memset(&b, 0, sizeof(b));
	memset(&e, 0, sizeof(e));
	/* Mostly this QP's service (up to IBA 1.5's FLUSH and ATOMIC WRITE);
	 * sometimes any opcode at all. */
	b.opcode = opb & 0x80 ? (uint8_t)(opb << 1 | (flags & 1)) : svc_of(f->type) | (opb % 0x1E);
	b.dqpn = flags & 2 ? fin_u32(in) & UROCE_QPN_MASK : f->qpn;
	b.psn = pick_psn(in, f, &advance);
	b.pkey = flags & 4 ? fin_u16(in) : UROCE_DEFAULT_PKEY;
	b.ackreq = flags & 8;
	b.se = flags & 16;
	b.migreq = flags & 32;
	b.fecn = flags & 64;
	paylen = fin_u16(in) % (f->mtu + 65);
	e.rkey = pick_key(in);
	e.va = pick_va(in, e.rkey);
	e.dma_len = pick_len(in, paylen);
	e.swap_add = fin_u64(in);
	e.compare = fin_u64(in);
	e.imm = fin_u32(in);
	e.inv_rkey = pick_key(in);
	e.qkey = flags & 128 ? fin_u32(in) : 0x11111111;
	e.src_qp = f->peer_qpn;
	/* FETH: mostly a placement type and level, sometimes any word. */
	e.feth = opb & 0x40 ? fin_u32(in) : (uint32_t)(flags & 0x33);
	e.xrc_srqn = pick_srqn(in);
	build_and_deliver(in, &b, &e, paylen);
	if (advance)
		f->next_psn = uroce_psn_add(b.psn, 1);
}

/* A multi-packet WRITE or SEND from the peer: FIRST, MIDDLEs, LAST, with the
 * RETH's DMA length chosen independently of the bytes that follow. */
static void
rec_message(struct fin *in)
{
	struct fqp *f = pick_qp(in);
	uint8_t kind = fin_u8(in);
	uint8_t svc = svc_of(f->type);
	bool write = kind & 1;
	unsigned int npk = 2 + (kind >> 1) % 6, i;
	struct uroce_bth_fields b;
	struct uroce_ext_fields e;

	memset(&e, 0, sizeof(e));
	e.rkey = pick_key(in);
	e.va = pick_va(in, e.rkey);
	e.dma_len = pick_len(in, f->mtu * npk);
	e.imm = 0x12345678;
	e.xrc_srqn = pick_srqn(in);
	for (i = 0; i < npk; i++) {
		uint32_t paylen = f->mtu;
		uint8_t op;

		if (i == 0)
			op = write ? UROCE_OP_RDMA_WRITE_FIRST : UROCE_OP_SEND_FIRST;
		else if (i + 1 < npk)
			op = write ? UROCE_OP_RDMA_WRITE_MIDDLE : UROCE_OP_SEND_MIDDLE;
		else
			op = write ? UROCE_OP_RDMA_WRITE_LAST : UROCE_OP_SEND_LAST;
		if (i + 1 == npk)
			paylen = fin_u16(in) % (f->mtu + 1);
		memset(&b, 0, sizeof(b));
		b.opcode = svc | op;
		b.dqpn = f->qpn;
		b.psn = f->next_psn;
		b.pkey = UROCE_DEFAULT_PKEY;
		b.ackreq = i + 1 == npk;
		build_and_deliver(in, &b, &e, paylen);
		f->next_psn = uroce_psn_add(f->next_psn, 1);
	}
}

/* A response from the peer to one of the requests a QP really sent. */
static void
rec_response(struct fin *in)
{
	static const uint8_t rops[] = {
		UROCE_OP_ACKNOWLEDGE, UROCE_OP_RDMA_READ_RESPONSE_FIRST,
		UROCE_OP_RDMA_READ_RESPONSE_MIDDLE, UROCE_OP_RDMA_READ_RESPONSE_LAST,
		UROCE_OP_RDMA_READ_RESPONSE_ONLY, UROCE_OP_ATOMIC_ACKNOWLEDGE,
	};
	struct fqp *f = pick_qp(in);
	struct uroce_bth_fields b;
	struct uroce_ext_fields e;
	uint8_t m = fin_u8(in), syn = fin_u8(in);
	uint32_t paylen;

	memset(&b, 0, sizeof(b));
	memset(&e, 0, sizeof(e));
	b.opcode = svc_of(f->type) | rops[m % sizeof(rops)];
	b.dqpn = f->qpn;
	b.pkey = UROCE_DEFAULT_PKEY;
	if (f->n_sent > 0 && !(m & 0x80)) {
		unsigned int k = fin_u8(in) % (f->n_sent < SENT_LOG ? f->n_sent : SENT_LOG);
		uint32_t base = f->sent_psn[(f->n_sent - 1 - k) % SENT_LOG];

		b.psn = uroce_psn_add(base, (uint32_t)(int32_t)(int8_t)(m & 0x40 ? fin_u8(in) : 0));
	} else {
		b.psn = fin_u32(in) & UROCE_PSN_MASK;
	}
	/* Syndromes: mostly an ACK, else anything (RNR, NAKs, reserved). */
	e.syndrome = syn & 0x80 ? syn & 0x7f : (uint8_t)(syn & 0x1f);
	e.msn = fin_u32(in) & 0xFFFFFF;
	e.orig = fin_u64(in);
	paylen = fin_u16(in) % (f->mtu + 65);
	build_and_deliver(in, &b, &e, paylen);
}

/* A raw packet from the input, aimed at one of our QPs. */
static void
rec_raw(struct fin *in)
{
	uint32_t len = fin_u16(in) % (UROCE_MAX_PMTU + 128);
	struct fqp *f = pick_qp(in);
	uint8_t *buf = malloc(len ? len : 1);

	if (buf == NULL)
		return;
	len = (uint32_t)fin_bytes(in, buf, len);
	if (len >= UROCE_BTH_LEN) {
		uroce_put_be24(buf + 5, f->qpn);
		buf[1] &= 0xF0; /* TVer 0, else lib/wire drops it first */
	}
	deliver(buf, len, false, LATE_NO);
	free(buf);
}

/* Time passes: retransmit, RNR and ACK timers fire. */
static void
rec_time(struct fin *in)
{
	uint32_t dt = fin_u32(in);

	now_us += dt & 0x80000000u ? (uint64_t)(dt & 0xFFFF) : (uint64_t)dt % 20000000u;
}

static uint64_t
local_addr(struct fin *in)
{
	return reg[MR_LOCAL].iova + fin_u16(in) % reg[MR_LOCAL].len;
}

/* A local work request (what a client posts), with remote fields from the input. */
static void
rec_post_send(struct fin *in)
{
	static const enum uroce_wr_opcode wops[] = {
		UROCE_WR_RDMA_WRITE, UROCE_WR_RDMA_WRITE_WITH_IMM, UROCE_WR_SEND,
		UROCE_WR_SEND_WITH_IMM, UROCE_WR_RDMA_READ, UROCE_WR_ATOMIC_CMP_AND_SWP,
		UROCE_WR_ATOMIC_FETCH_AND_ADD, UROCE_WR_SEND_WITH_INV, UROCE_WR_ATOMIC_WRITE,
		UROCE_WR_FLUSH,
	};
	struct fqp *f = pick_qp(in);
	uint8_t m = fin_u8(in);
	struct uroce_wr_sge sge[2];
	struct uroce_eng_send_wr w;

	memset(&w, 0, sizeof(w));
	w.wr_id = 0x5E00 | m;
	w.opcode = wops[m % UROCE_ARRAY_SIZE(wops)];
	w.send_flags = (m & 8 ? UROCE_SEND_SIGNALED : 0) | (m & 16 ? UROCE_SEND_FENCE : 0) |
		       (m & 32 ? UROCE_SEND_SOLICITED : 0);
	sge[0].addr = local_addr(in);
	sge[0].length = fin_u16(in) % 9000;
	sge[0].lkey = uroce_eng_mr_lkey(reg[MR_LOCAL].mr);
	sge[1].addr = local_addr(in);
	sge[1].length = fin_u8(in);
	sge[1].lkey = m & 64 ? pick_key(in) : sge[0].lkey;
	w.sg_list = sge;
	w.num_sge = 1 + (m >> 7);
	if (w.opcode == UROCE_WR_ATOMIC_CMP_AND_SWP || w.opcode == UROCE_WR_ATOMIC_FETCH_AND_ADD)
		sge[0].length = 8;
	if ((m & 0xC0) == 0xC0 && (w.opcode == UROCE_WR_SEND || w.opcode == UROCE_WR_RDMA_WRITE)) {
		/* Inline: the addresses are this process's pointers. */
		w.send_flags |= UROCE_SEND_INLINE;
		sge[0].addr = (uintptr_t)inline_buf;
		sge[0].length = fin_u8(in);
		w.num_sge = 1;
	}
	w.imm_data = fin_u32(in);
	w.invalidate_rkey = pick_key(in);
	if (f->type == UROCE_QPT_XRC_SEND)
		w.xrc_remote_srqn = fin_u32(in) & 0x1FFFFFF; /* above 24 bits: refused */
	if (f->type == UROCE_QPT_UD) {
		w.wr.ud.ah = ah;
		w.wr.ud.remote_qpn = 0x900;
		w.wr.ud.remote_qkey = 0x11111111;
	} else if (w.opcode == UROCE_WR_ATOMIC_WRITE || w.opcode == UROCE_WR_FLUSH) {
		/* Operands in the WQE; an SGE (m & 1) makes the post fail. */
		w.num_sge = m & 1;
		w.wr.flush.remote_addr = fin_u64(in);
		w.wr.flush.length = fin_u32(in);
		w.wr.flush.rkey = fin_u32(in);
		w.wr.flush.type = fin_u8(in) & 0x7;
		w.wr.flush.level = fin_u8(in) % 3;
	} else if (w.opcode == UROCE_WR_ATOMIC_CMP_AND_SWP ||
		   w.opcode == UROCE_WR_ATOMIC_FETCH_AND_ADD) {
		w.wr.atomic.remote_addr = fin_u64(in);
		w.wr.atomic.compare_add = fin_u64(in);
		w.wr.atomic.swap = fin_u64(in);
		w.wr.atomic.rkey = fin_u32(in);
	} else {
		w.wr.rdma.remote_addr = fin_u64(in);
		w.wr.rdma.rkey = fin_u32(in);
	}
	(void)uroce_eng_post_send(f->qp, &w, NULL);
}

/* Receive WQEs record their room in wr_id, for the byte_len invariant. */
#define RECV_TAG 0xEC000000ull

static void
post_recv(struct fqp *f, uint64_t addr, uint32_t len, uint32_t lkey)
{
	struct uroce_wr_sge s = {addr, len, lkey};
	struct uroce_eng_recv_wr r = {.wr_id = RECV_TAG << 32 | len, .sg_list = &s, .num_sge = 1};

	if (f->qp == q[QI_SRQ].qp)
		(void)uroce_eng_post_srq_recv(srq, &r, NULL);
	else if (f->qp == q[QI_TGT].qp)
		(void)uroce_eng_post_srq_recv(xsrq, &r, NULL);
	else
		(void)uroce_eng_post_recv(f->qp, &r, NULL);
}

static void
rec_post_recv(struct fin *in)
{
	struct fqp *f = pick_qp(in);
	uint8_t m = fin_u8(in);
	uint64_t addr = local_addr(in);
	uint32_t len = fin_u16(in) % (2 * PAGE);
	uint32_t lkey = m & 1 ? pick_key(in) : uroce_eng_mr_lkey(reg[MR_LOCAL].mr);

	/* A receive SGE must lie in memory the engine may write: LOCAL, or an
	 * MR the input names (then the engine must check its lkey and range). */
	post_recv(f, addr, len, lkey);
}

/* Move a QP to another state: SQD, SQE (UC), ERR, or back to RTS. */
static void
rec_state(struct fin *in)
{
	static const enum uroce_qp_state to[] = {
		UROCE_QPS_SQD, UROCE_QPS_RTS, UROCE_QPS_ERR, UROCE_QPS_SQE, UROCE_QPS_RESET,
	};
	struct fqp *f = pick_qp(in);
	struct uroce_eng_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = to[fin_u8(in) % 5];
	(void)uroce_eng_modify_qp(f->qp, &a, UROCE_QP_STATE);
}

/* Re-register an MR (its key changes); the old key becomes someone's guess. */
static void
rec_rereg(struct fin *in)
{
	struct region *r = &reg[fin_u8(in) % 3 == 0 ? MR_RW : MR_WIN];

	uroce_eng_mr_dereg(r->mr);
	mr_register(r);
}

/* Drain completions and check what a receive completion claims. */
static void
drain(void)
{
	struct uroce_eng_wc wc[32];
	int n, i;

	while ((n = uroce_eng_poll_cq(cq, 32, wc)) > 0) {
		for (i = 0; i < n; i++) {
			/* A WRITE with immediate reports the WRITE's length, not
			 * what its receive WQE holds (IBA 10.7.3.1, as rxe). */
			if (wc[i].wr_id >> 32 != RECV_TAG || wc[i].status != UROCE_WC_SUCCESS ||
			    wc[i].opcode == UROCE_WC_RECV_RDMA_WITH_IMM)
				continue;
			if (wc[i].byte_len > (uint32_t)wc[i].wr_id) {
				fprintf(stderr, "receive completion of %u bytes in a %u-byte WQE\n",
					wc[i].byte_len, (uint32_t)wc[i].wr_id);
				abort();
			}
		}
	}
}

static void
run_engine(void)
{
	int i;

	for (i = 0; i < 8 && uroce_eng_poll(eng) > 0; i++)
		;
	drain();
}

/* Invariant: whatever the peer sent, every MR is still whole: its own range
 * with its own rights (no remote invalidate of an ordinary MR, IBA 10.6.4.2;
 * issue 9 defect 2). */
static void
check_mrs(void)
{
	unsigned int i;

	for (i = 0; i < MR_N; i++) {
		const struct region *r = &reg[i];

		if (r->mr == NULL)
			continue;
		if (!uroce_eng_mr_check(r->mr, r->iova, r->len, r->access)) {
			fprintf(stderr, "MR %u (rkey %#x) no longer grants its rights\n", i,
				r->rkey);
			abort();
		}
	}
}

static void
check_canary(void)
{
	uint32_t i;

	for (i = 0; i < PAGE; i++) {
		if ((i < WIN_OFF || i >= WIN_OFF + WIN_LEN) && win_page[i] != CANARY) {
			fprintf(stderr, "canary byte %u next to MR WIN changed to %#x\n", i,
				win_page[i]);
			abort();
		}
	}
}

/* FUZZ_VERBOSE=1: the engine's non-zero counters after each input, to see
 * which checks an input (or a corpus) reaches. */
static int verbose = -1;

static void
print_counters(void)
{
	int c;

	for (c = 0; c < UROCE_CNT_MAX; c++) {
		uint64_t v = uroce_eng_counter(eng, (enum uroce_counter)c);

		if (v != 0)
			fprintf(stderr, "%s=%llu ", uroce_eng_counter_name((enum uroce_counter)c),
				(unsigned long long)v);
	}
	fprintf(stderr, "\n");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t psn_bases[4] = {0, 0x1000, 0xFFFFF0, 0x7FFFF8};
	struct fin in = {data, size};
	uint8_t cfg, nrecv, pre;
	unsigned int i, rec;

	if (eng == NULL)
		setup();
	if (verbose < 0)
		verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (size > 16384)
		return 0;
	cfg = fin_u8(&in);
	nrecv = fin_u8(&in);
	pre = fin_u8(&in);
	now_us += 100000000ull; /* every timer of the last input is long gone */
	qps_create((enum uroce_mtu)(1 + cfg % 5), psn_bases[(cfg >> 3) & 3], fin_u8(&in));
	/* Receive WQEs everywhere (8 KiB of LOCAL each at most), then requests
	 * from QP 1 (and others) so that responses meet a live completer. */
	for (i = 0; i < (nrecv & 7u); i++) {
		unsigned int k;

		for (k = 0; k < NQP; k++)
			post_recv(&q[k], reg[MR_LOCAL].iova + (i * 1024u) % (3 * PAGE),
				  nrecv & 8 ? 64 : PAGE, uroce_eng_mr_lkey(reg[MR_LOCAL].mr));
	}
	for (i = 0; i < 8; i++) {
		if (pre & (1u << i)) {
			struct uroce_wr_sge s = {reg[MR_LOCAL].iova + 8u * i, i < 4 ? 3000 : 8,
						  uroce_eng_mr_lkey(reg[MR_LOCAL].mr)};
			struct uroce_eng_send_wr w;

			memset(&w, 0, sizeof(w));
			w.wr_id = i;
			w.sg_list = &s;
			w.num_sge = 1;
			w.send_flags = UROCE_SEND_SIGNALED;
			w.opcode = i < 2 ? UROCE_WR_RDMA_READ : i < 3 ? UROCE_WR_RDMA_WRITE :
				   i < 4 ? UROCE_WR_SEND : i < 6 ? UROCE_WR_ATOMIC_FETCH_AND_ADD :
				   UROCE_WR_ATOMIC_CMP_AND_SWP;
			w.wr.rdma.remote_addr = 0x4000000 + 64u * i;
			w.wr.rdma.rkey = 0x1234;
			w.wr.atomic.remote_addr = 0x4000000 + 64u * i;
			w.wr.atomic.rkey = 0x1234;
			(void)uroce_eng_post_send(q[1].qp, &w, NULL);
			if (i == 3)
				(void)uroce_eng_post_send(q[2].qp, &w, NULL);
		}
	}
	run_engine();
	for (rec = 0; rec < MAX_RECORDS && fin_left(&in); rec++) {
		switch (fin_u8(&in) % 12) {
		case 0:
		case 1:
		case 2:
			rec_request(&in);
			break;
		case 3:
			rec_message(&in);
			break;
		case 4:
		case 5:
			rec_response(&in);
			break;
		case 6:
			rec_raw(&in);
			break;
		case 7:
			rec_time(&in);
			break;
		case 8:
			rec_post_send(&in);
			break;
		case 9:
			rec_post_recv(&in);
			break;
		case 10:
			rec_state(&in);
			break;
		default:
			rec_rereg(&in);
			break;
		}
		run_engine();
	}
	/* Let the timers fire once more (a retransmission, an RNR retry). */
	now_us += 1000000;
	run_engine();
	if (verbose)
		print_counters();
	/* IBA 1.2 XRC: no request reaches an SRQ of another domain. */
	if (uroce_eng_srq_count(xsrq_other) != 1) {
		fprintf(stderr, "another domain's XRC SRQ gave up its receive\n");
		abort();
	}
	qps_destroy();
	check_mrs();
	check_canary();
	return 0;
}
