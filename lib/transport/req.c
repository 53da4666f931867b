/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The requester: posting send WRs, segmentation by path MTU into
 * FIRST/MIDDLE/LAST/ONLY packets, PSN assignment (IBA 9.7.1), AckReq
 * (IBA 9.7.2), the max_rd_atomic and fence rules, and go-back-N rewinds
 * ordered by the completer (IBA 9.7.5.2 retry).
 *
 * The requester of one QP is a small state machine run by req_run(): each
 * step returns the next state, and a state that cannot progress ends the
 * run (the QP leaves the engine's work list until something kicks it).
 */

#include <assert.h>
#include <errno.h>
#include <string.h>

#include "transport_internal.h"

void
req_complete_wqe(struct uroce_eng_qp *qp, struct swqe *w, enum uroce_wc_status st)
{
	assert(w == sq_at(qp, qp->sq_head));
	if (w->rd_counted) {
		w->rd_counted = false;
		qp->req.rd_outstanding--;
	}
	w->state = SWQE_DONE;
	w->wc_status = (uint8_t)st;
	qp->sq_head++;
	if ((int32_t)(qp->req.cur - qp->sq_head) < 0) {
		qp->req.cur = qp->sq_head;
		qp->req.off = 0;
		/* The resend point was inside the WQE just completed: resume
		 * at the PSN after it, not at the stale rewound PSN. */
		if (uroce_psn_before(qp->req.psn, uroce_psn_add(w->last_psn, 1)))
			qp->req.psn = uroce_psn_add(w->last_psn, 1);
	}
	sq_retire(qp);
}

/*
 * Deliver the completions of completed WQEs, in order (IBA 10.8.3), up to the
 * first whose zero-copy packets the device may still read: its buffer is
 * the client's again once it completes, so it completes after the ACK and
 * after the release (uroce_eng_zc_release()), and the ones behind it wait.
 */
void
sq_retire(struct uroce_eng_qp *qp)
{
	while (qp->sq_retire != qp->sq_head) {
		struct swqe *w = sq_at(qp, qp->sq_retire);
		enum uroce_wc_status st = (enum uroce_wc_status)w->wc_status;

		if (w->zc_inflight != 0)
			break;
		/* IBA 10.8.3: unsignaled WRs complete silently unless in error. */
		if ((w->s.wr.flags & UROCE_SEND_SIGNALED) || qp->init.sq_sig_all ||
		    st != UROCE_WC_SUCCESS) {
			struct uroce_eng_wc wc;

			memset(&wc, 0, sizeof(wc));
			wc.wr_id = w->s.wr.wr_id;
			wc.status = st;
			wc.opcode = uroce_wc_opcode_of((enum uroce_wr_opcode)w->s.wr.opcode);
			wc.qp_num = qp->qpn;
			wc.byte_len = w->length;
			wc.sq_more = qp->sq_tail - qp->sq_retire > 1;
			cq_push(qp->init.send_cq, &wc);
		}
		qp->sq_retire++;
	}
}

void
uroce_eng_zc_release(struct uroce_eng *eng, const struct uroce_eng_zc *zc)
{
	struct uroce_eng_qp *qp;
	struct swqe *w;

	if (eng == NULL || zc == NULL || zc->wqe == UROCE_ENG_ZC_NO_WQE)
		return;
	qp = eng_qp_of(eng, zc->qpn);
	/* A QP reset or destroyed since then: nothing of it waits. */
	if (qp == NULL || qp->zc_gen != zc->gen ||
	    zc->wqe - qp->sq_retire >= qp->sq_tail - qp->sq_retire)
		return;
	w = sq_at(qp, zc->wqe);
	if (w->zc_inflight == 0)
		return;
	if (--w->zc_inflight == 0 && zc->wqe == qp->sq_retire)
		sq_retire(qp);
}

struct uroce_eng_send_wqe *
uroce_eng_sq_reserve(struct uroce_eng_qp *qp)
{
	struct swqe *w;

	if (qp->sq_tail - qp->sq_retire >= qp->sq_size)
		return NULL;
	w = sq_at(qp, qp->sq_tail);
	w->s.wr.inline_data = qp->sq_inline != NULL ?
			    qp->sq_inline + (size_t)(qp->sq_tail & qp->sq_mask) * UROCE_MAX_INLINE :
			    NULL;
	return &w->s;
}

/* Post-time validation of the reserved slot (IBA 10.8.2 / 11.4.1.1 checks
 * that are the poster's fault fail the post; key problems complete in error
 * later). */
static int
sq_check(struct uroce_eng_qp *qp, struct swqe *w)
{
	const struct uroce_wr_send *r = &w->s.wr;
	enum uroce_qp_type t = qp->init.qp_type;
	uint64_t total = 0;
	uint32_t i;

	if (!uroce_wr_allowed(r->opcode, t) || (r->flags & ~UROCE_SEND_FLAGS_ALL) != 0)
		return -EINVAL;
	/* IBA 1.2 XRC: the XRCETH has 24 bits for the SRQ number. */
	if (t == UROCE_QPT_XRC_SEND && r->xrc_srqn > UROCE_QPN_MASK)
		return -EINVAL;
	w->props = uroce_wr_props(r->opcode);
	w->is_inline = (r->flags & UROCE_SEND_INLINE) != 0;
	/* A bind or invalidation carries no data; an ATOMIC WRITE or FLUSH
	 * carries its operands in the WQE (IBA 1.5 A19). */
	if ((w->props & (UROCE_WRP_LOCAL | UROCE_WRP_EMPTY_RESP)) &&
	    (w->is_inline || r->num_sge != 0))
		return -EINVAL;
	if (r->opcode == UROCE_WR_FLUSH) {
		if (!uroce_feth_valid((uint32_t)r->swap) || r->swap > UINT32_MAX)
			return -EINVAL;
		if (uroce_feth_level((uint32_t)r->swap) == UROCE_FLUSH_RANGE &&
		    r->compare_add > UROCE_MAX_MSG_SIZE)
			return -EMSGSIZE;
	}
	if (w->is_inline) {
		if (!(w->props & UROCE_WRP_PAYLOAD) || r->inline_data == NULL)
			return -EINVAL;
		if (r->inline_len > qp->init.cap.max_inline_data)
			return -EMSGSIZE;
		total = r->inline_len;
	} else {
		if (r->num_sge > qp->init.cap.max_send_sge)
			return -EINVAL;
		for (i = 0; i < r->num_sge; i++)
			total += r->sge[i].length;
	}
	if (total > UROCE_MAX_MSG_SIZE)
		return -EMSGSIZE;
	/* IBA 9.4.5: atomics are 8 bytes. */
	if ((w->props & UROCE_WRP_ATOMIC) && total != 8)
		return -EMSGSIZE;
	if (t == UROCE_QPT_UD && total > qp->mtu)
		return -EMSGSIZE;
	/* Keep one message within a quarter of the PSN space, so modular PSN
	 * comparisons over it stay unambiguous (IBA 9.7.1: 2^23 window). This
	 * only bites 2 GB messages at a 256-byte path MTU. */
	if (t != UROCE_QPT_UD && total > ((uint64_t)qp->mtu << 22))
		return -EMSGSIZE;
	w->length = (uint32_t)total;
	return 0;
}

int
uroce_eng_sq_commit(struct uroce_eng_qp *qp)
{
	enum uroce_qp_state st = qp->attr.qp_state;
	struct swqe *w = sq_at(qp, qp->sq_tail);
	int rc;

	/* IBA 10.8.2: the SQ takes WRs from RTS on. */
	if (st == UROCE_QPS_RESET || st == UROCE_QPS_INIT || st == UROCE_QPS_RTR)
		return -EINVAL;
	rc = sq_check(qp, w);
	if (rc != 0)
		return rc;
	w->state = SWQE_POSTED;
	w->rd_counted = false;
	w->zc_inflight = 0;
	qp->sq_tail++;
	/* IBA 10.3.1: WRs posted in ERR/SQE complete with a flush error. */
	if (st == UROCE_QPS_ERR || st == UROCE_QPS_SQE) {
		qp->req.cur = qp->sq_tail;
		req_complete_wqe(qp, sq_at(qp, qp->sq_head), UROCE_WC_WR_FLUSH_ERR);
	} else if (!qp->req.on_list) {
		eng_req_kick(qp);
	}
	return 0;
}

/*
 * Requester states: one check or one action each, done by the function of
 * the same name in req_steps[]. A step returns the next state; EXIT ends
 * the run (the QP leaves the engine's work list until something kicks it),
 * MORE ends it with the QP kept on the list.
 *
 *   GET_WQE ─┬─ (new WQE) START_WQE ─┬─ SEND_PKT ─ GET_WQE ...
 *            │                        └─ WQE_ERROR (local protection) ─ EXIT
 *            ├─ (WQE in progress) SEND_PKT
 *            └─ (SQ empty, window full, budget spent) EXIT / MORE
 *   blocked (SQD, fence, max_rd_atomic, congestion pacing): EXIT
 */
enum req_st {
	REQ_GET_WQE,
	REQ_START_WQE,
	REQ_SEND_PKT,
	REQ_WQE_ERROR,
	REQ_MORE,
	REQ_EXIT,
	REQ_NUM_STATES,
};

static const char *const req_st_names[REQ_NUM_STATES] __attribute__((unused)) = {
	[REQ_GET_WQE] = "GET_WQE", [REQ_START_WQE] = "START_WQE",
	[REQ_SEND_PKT] = "SEND_PKT", [REQ_WQE_ERROR] = "WQE_ERROR",
	[REQ_MORE] = "MORE", [REQ_EXIT] = "EXIT",
};

/* One run of the requester of one QP. */
struct req_ctx {
	struct uroce_eng_qp *qp;
	struct swqe *w;             /* the WQE being sent */
	unsigned int budget;        /* packets this run may send */
	unsigned int sent;
	bool more;                  /* MORE: budget or TX buffers ran out */
};

typedef enum req_st (*req_step_fn)(struct req_ctx *c);

/* One packet of a message: what the headers say and how much it carries. */
struct req_pkt {
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	uint32_t paylen;
	uint32_t consumed;          /* PSNs it takes (a READ: one per response) */
	uint32_t off;               /* message offset of the payload */
	bool last;                  /* ends the message */
	const struct uroce_eng_ah_attr *ah;
};

/* Position of a packet in its message, the column of seg_ops[]. */
enum seg_pos {
	SEG_ONLY,
	SEG_FIRST,
	SEG_MIDDLE,
	SEG_LAST,
};

#define SEG_ROW(only, first, middle, last) \
	{ [SEG_ONLY] = UROCE_OP_##only, [SEG_FIRST] = UROCE_OP_##first, \
	  [SEG_MIDDLE] = UROCE_OP_##middle, [SEG_LAST] = UROCE_OP_##last }

/* Operation of each packet of a SEND/WRITE message, by WR opcode and
 * position (IBA 9.2.1, table 35). Immediate data and the invalidate key ride
 * on the last packet only. */
static const uint8_t seg_ops[][4] = {
	[UROCE_WR_RDMA_WRITE] = SEG_ROW(RDMA_WRITE_ONLY, RDMA_WRITE_FIRST,
					RDMA_WRITE_MIDDLE, RDMA_WRITE_LAST),
	[UROCE_WR_RDMA_WRITE_WITH_IMM] = SEG_ROW(RDMA_WRITE_ONLY_WITH_IMMEDIATE, RDMA_WRITE_FIRST,
						 RDMA_WRITE_MIDDLE, RDMA_WRITE_LAST_WITH_IMMEDIATE),
	[UROCE_WR_SEND] = SEG_ROW(SEND_ONLY, SEND_FIRST, SEND_MIDDLE, SEND_LAST),
	[UROCE_WR_SEND_WITH_IMM] = SEG_ROW(SEND_ONLY_WITH_IMMEDIATE, SEND_FIRST, SEND_MIDDLE,
					   SEND_LAST_WITH_IMMEDIATE),
	[UROCE_WR_SEND_WITH_INV] = SEG_ROW(SEND_ONLY_WITH_INVALIDATE, SEND_FIRST, SEND_MIDDLE,
					   SEND_LAST_WITH_INVALIDATE),
};

/* ---- headers: one function per kind of message --------------------------- */

/* IBA 9.8.2: UD is one SEND_ONLY packet with a DETH. */
static void
fmt_ud(const struct uroce_eng_qp *qp, const struct swqe *w, struct req_pkt *p)
{
	const struct uroce_wr_send *wr = &w->s.wr;

	p->bth.opcode = UROCE_OPCODE(UROCE_SVC_UD, wr->opcode == UROCE_WR_SEND_WITH_IMM ?
				     UROCE_OP_SEND_ONLY_WITH_IMMEDIATE : UROCE_OP_SEND_ONLY);
	p->bth.dqpn = wr->remote_qpn;
	p->bth.se = wr->flags & UROCE_SEND_SOLICITED;
	/* IBA 10.2.5: a Q_Key with the high bit set means the QP's own. */
	p->ext.qkey = (wr->remote_qkey & UROCE_QKEY_PRIVILEGED) ? qp->attr.qkey : wr->remote_qkey;
	p->ext.src_qp = qp->qpn;
	p->ext.imm = wr->imm;
	p->paylen = w->length;
	p->ah = &w->s.ah;
}

/* IBA 9.7.4.1.3: a READ request consumes one PSN per response packet; a
 * restart asks for the remaining sub-range. */
static void
fmt_read(const struct uroce_eng_qp *qp, const struct swqe *w, struct req_pkt *p)
{
	p->bth.opcode = UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_RDMA_READ_REQUEST);
	p->bth.ackreq = true;
	p->ext.va = w->s.wr.remote_addr + qp->req.off;
	p->ext.rkey = w->s.wr.rkey;
	p->ext.dma_len = w->length - qp->req.off;
	p->consumed = uroce_num_pkts(p->ext.dma_len, qp->mtu);
}

/* IBA 9.4.5: an atomic is one packet with an AtomicETH. */
static void
fmt_atomic(const struct uroce_eng_qp *qp, const struct swqe *w, struct req_pkt *p)
{
	const struct uroce_wr_send *wr = &w->s.wr;
	bool cas = wr->opcode == UROCE_WR_ATOMIC_CMP_AND_SWP;

	(void)qp;
	p->bth.opcode = UROCE_OPCODE(UROCE_SVC_RC, cas ? UROCE_OP_COMPARE_SWAP : UROCE_OP_FETCH_ADD);
	p->bth.ackreq = true;
	p->ext.va = wr->remote_addr;
	p->ext.rkey = wr->rkey;
	p->ext.swap_add = cas ? wr->swap : wr->compare_add;
	p->ext.compare = wr->compare_add;
}

/* IBA 1.5 A19: an ATOMIC WRITE is one packet with a RETH of length 8 and
 * the 8 bytes (req_send_payload()); a FLUSH one with a FETH and a RETH
 * (length ignored at selectivity MR). */
static void
fmt_empty_resp(const struct uroce_eng_qp *qp, const struct swqe *w, struct req_pkt *p)
{
	const struct uroce_wr_send *wr = &w->s.wr;

	(void)qp;
	p->bth.ackreq = true;
	p->ext.va = wr->remote_addr;
	p->ext.rkey = wr->rkey;
	if (wr->opcode == UROCE_WR_ATOMIC_WRITE) {
		p->bth.opcode = UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_ATOMIC_WRITE);
		p->ext.dma_len = 8;
		p->paylen = 8;
	} else {
		p->bth.opcode = UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_FLUSH);
		p->ext.feth = (uint32_t)wr->swap;
		p->ext.dma_len = (uint32_t)wr->compare_add;
	}
}

/* A SEND or WRITE segmented by path MTU (IBA 9.7.1): the packet at the
 * current offset, FIRST/MIDDLE/LAST or ONLY. */
static void
fmt_segment(const struct uroce_eng_qp *qp, const struct swqe *w, struct req_pkt *p)
{
	const struct uroce_wr_send *wr = &w->s.wr;
	uint8_t svc = qp->init.qp_type == UROCE_QPT_UC ? UROCE_SVC_UC : UROCE_SVC_RC;
	bool first = qp->req.off == 0;
	enum seg_pos pos;

	p->off = qp->req.off;
	p->paylen = UROCE_MIN(qp->mtu, w->length - qp->req.off);
	p->last = qp->req.off + p->paylen == w->length;
	pos = first ? (p->last ? SEG_ONLY : SEG_FIRST) : (p->last ? SEG_LAST : SEG_MIDDLE);
	/* sq_check() admits only the opcodes with a row here. */
	assert(wr->opcode < UROCE_ARRAY_SIZE(seg_ops));
	p->bth.opcode = UROCE_OPCODE(svc, seg_ops[wr->opcode][pos]);
	p->ext.va = wr->remote_addr;
	p->ext.rkey = wr->rkey;
	p->ext.dma_len = w->length;
	p->ext.imm = wr->imm;
	p->ext.inv_rkey = wr->imm;
	p->bth.se = p->last && (wr->flags & UROCE_SEND_SOLICITED);
	/* IBA 9.7.2: AckReq on the last packet and periodically. */
	p->bth.ackreq = qpt_reliable(qp->init.qp_type) &&
			(p->last || (uroce_psn_diff(p->bth.psn, w->first_psn) + 1) %
					    UROCE_ACKREQ_INTERVAL == 0);
}

/* The headers of the next packet of @p w. */
static void
req_fmt(const struct uroce_eng_qp *qp, const struct swqe *w, struct req_pkt *p)
{
	uroce_zero_small(p, sizeof(*p));
	p->bth.pkey = UROCE_DEFAULT_PKEY;
	p->bth.migreq = true;
	p->bth.dqpn = qp->attr.dest_qp_num;
	p->bth.psn = qp->req.psn;
	p->consumed = 1;
	p->last = true;
	p->ah = &qp->attr.ah_attr;
	if (qp->init.qp_type == UROCE_QPT_UD)
		fmt_ud(qp, w, p);
	else if (w->props & UROCE_WRP_ATOMIC)
		fmt_atomic(qp, w, p);
	else if (w->props & UROCE_WRP_EMPTY_RESP)
		fmt_empty_resp(qp, w, p);
	else if (w->props & UROCE_WRP_RD_ATOMIC)
		fmt_read(qp, w, p);
	else
		fmt_segment(qp, w, p);
	/* IBA 1.2 XRC: the RC operation with the XRC prefix, and the XRCETH
	 * naming the responder's XRC SRQ the WR chose. */
	if (qp->init.qp_type == UROCE_QPT_XRC_SEND) {
		p->bth.opcode = UROCE_OPCODE(UROCE_SVC_XRC, UROCE_OPCODE_OP(p->bth.opcode));
		p->ext.xrc_srqn = w->s.wr.xrc_srqn;
	}
}

/* ---- payload: copied, or zero-copy from client memory -------------------- */

/*
 * Put the payload of @p p behind the headers in @p buf and send it. Zero-copy
 * when the payload lies in one SGE of an MR that allows it: the WQE then
 * waits for the device (sq_retire()). @return false if the MR went away
 * under a message in progress (buf is freed).
 */
static bool
req_send_payload(struct uroce_eng_qp *qp, struct swqe *w, const struct req_pkt *p, uint8_t *buf,
		 uint32_t hdr_len)
{
	if (w->props & UROCE_WRP_EMPTY_RESP) {
		/* ATOMIC WRITE: the 8 bytes kept in the WQE, as they lay. */
		memcpy(buf + hdr_len, &w->s.wr.compare_add, p->paylen);
	} else if (p->paylen > 0) {
		struct uroce_eng_mr *mr = NULL;
		const uint8_t *src = NULL;

		if (!w->is_inline && qp->eng->zc_min != 0 && p->paylen >= qp->eng->zc_min)
			src = sge_span(qp->eng, qp->pd, w->s.wr.sge, w->s.wr.num_sge, p->off,
				       p->paylen, &mr);
		if (src != NULL && eng_zc_ok(qp, mr, p->paylen) &&
		    eng_tx_send_zc(qp, buf, &p->bth, hdr_len, src, p->paylen, p->ah, mr, w))
			return true;
		if (w->is_inline) {
			memcpy(buf + hdr_len, w->s.wr.inline_data + p->off, p->paylen);
		} else if (sge_copy(qp->eng, qp->pd, w->s.wr.sge, w->s.wr.num_sge, p->off,
				    buf + hdr_len, p->paylen, false) != 0) {
			qp->eng->ops.tx_free(qp->eng->ctx, buf);
			return false;
		}
	}
	eng_tx_send(qp, buf, &p->bth, hdr_len, p->paylen, p->ah);
	return true;
}

/* ---- after the packet: PSN, timer, message progress ---------------------- */

static void
arm_rto(struct uroce_eng_qp *qp)
{
	uint64_t rto = comp_rto_us(qp);

	if (rto != 0 && qp->comp.rto_deadline == 0) {
		qp->comp.rto_deadline = eng_now(qp->eng) + rto;
		eng_timer_update(qp);
	}
}

/* The packet @p p of @p w left: the PSN moves on (IBA 9.7.1), the retransmit
 * timer runs (RC), and a finished message moves the requester to the next
 * WQE; UC and UD have no ACK, so their WQE completes once sent (IBA 9.8). */
static void
req_advance(struct uroce_eng_qp *qp, struct swqe *w, const struct req_pkt *p)
{
	uint32_t psn = p->bth.psn;

	if (uroce_psn_before(psn, qp->req.psn_hi))
		QP_CNT(qp, RETRANSMITS);
	qp->req.psn = uroce_psn_add(psn, p->consumed);
	if (uroce_psn_before(qp->req.psn_hi, qp->req.psn))
		qp->req.psn_hi = qp->req.psn;
	if (qpt_reliable(qp->init.qp_type))
		arm_rto(qp);
	if (!p->last) {
		qp->req.off += p->paylen;
		return;
	}
	qp->req.cur++;
	qp->req.off = 0;
	if (!qpt_reliable(qp->init.qp_type))
		req_complete_wqe(qp, w, UROCE_WC_SUCCESS);
}

/* ---- the steps ---------------------------------------------------------- */

static enum req_st
req_get_wqe(struct req_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;

	if (c->sent >= c->budget)
		return REQ_MORE;
	if (qp->req.cur == qp->sq_tail)
		return REQ_EXIT;
	c->w = sq_at(qp, qp->req.cur);
	/* The window of unacknowledged PSNs is full: wait for ACKs. */
	if (qpt_reliable(qp->init.qp_type) &&
	    uroce_psn_diff(qp->req.psn, qp->comp.psn) >= UROCE_MAX_INFLIGHT_PKTS)
		return REQ_EXIT;
	return c->w->state == SWQE_POSTED ? REQ_START_WQE : REQ_SEND_PKT;
}

/*
 * BIND_MW and LOCAL_INV (IBA 10.6.7.3, 10.6.7.2.1) send nothing. Each waits
 * until every WQE before it has completed, so completions stay in order and
 * a window changes only after the operations posted before it are done
 * (stronger than a fence; binds are rare). A failure completes the WQE in
 * error and the QP goes to ERR, as any local error of the requester.
 */
static enum req_st
req_local_op(struct req_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	enum uroce_wc_status st;

	if (qp->sq_head != qp->req.cur)
		return REQ_EXIT; /* comp_done() kicks the requester on progress */
	st = mw_local_op(qp, &c->w->s.wr);
	c->w->first_psn = qp->req.psn;
	c->w->last_psn = uroce_psn_add(qp->req.psn, UROCE_PSN_MASK); /* none: the one before */
	c->w->npkts = 0;
	req_complete_wqe(qp, c->w, st);
	if (st != UROCE_WC_SUCCESS) {
		QP_CNT(qp, REQ_MW_ERR);
		qp_to_err(qp, QP_ERR_REPORTED);
		return REQ_EXIT;
	}
	return REQ_GET_WQE;
}

static enum req_st
req_start_wqe(struct req_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	struct swqe *w = c->w;
	bool rd_atomic = (w->props & UROCE_WRP_RD_ATOMIC) != 0;

	/* IBA 10.3.1: in SQD no new WQE starts; those in progress finish. */
	if (qp->attr.qp_state == UROCE_QPS_SQD)
		return REQ_EXIT;
	/* IBA 10.8.3.3 (fence): wait for every prior READ/ATOMIC. */
	if ((w->s.wr.flags & UROCE_SEND_FENCE) && qp->req.rd_outstanding > 0)
		return REQ_EXIT;
	if (w->props & UROCE_WRP_LOCAL)
		return req_local_op(c);
	/* IBA 9.7.4.1.x: never more than max_rd_atomic READ/ATOMIC outstanding. */
	if (rd_atomic && qp->req.rd_outstanding >= qp->attr.max_rd_atomic)
		return REQ_EXIT;
	/* IBA 10.8.3.1: a READ or atomic writes into its SGEs. */
	if (!w->is_inline && !sge_list_ok(qp->eng, qp->pd, w->s.wr.sge, w->s.wr.num_sge,
					  rd_atomic ? UROCE_ACCESS_LOCAL_WRITE : 0))
		return REQ_WQE_ERROR;
	w->first_psn = qp->req.psn;
	if ((w->props & (UROCE_WRP_ATOMIC | UROCE_WRP_EMPTY_RESP)) ||
	    qp->init.qp_type == UROCE_QPT_UD)
		w->npkts = 1;
	else
		w->npkts = uroce_num_pkts(w->length, qp->mtu);
	w->last_psn = uroce_psn_add(w->first_psn, w->npkts - 1);
	w->state = SWQE_SENT;
	if (rd_atomic) {
		w->rd_counted = true;
		qp->req.rd_outstanding++;
	}
	return REQ_SEND_PKT;
}

/* Build, fill and send the next packet of the WQE. */
static enum req_st
req_send_pkt(struct req_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	struct req_pkt p;
	uint32_t hdr_len;
	uint8_t *buf;

	/* cc: a QP that a CNP slowed waits for its pacing slot on the timer
	 * list (cc.c), not on the work list. */
	if (unlikely(qp->cc.limited) && !cc_pace_ok(qp))
		return REQ_EXIT;
	req_fmt(qp, c->w, &p);
	/* cc: a slowly paced RC packet asks for its ACK (cc_ackreq()). */
	if (unlikely(qp->cc.limited) && qpt_reliable(qp->init.qp_type) && !p.bth.ackreq)
		p.bth.ackreq = cc_ackreq(qp, p.paylen);
	buf = eng_tx_prepare(qp, &p.bth, &p.ext, p.paylen, &hdr_len);
	if (buf == NULL)
		return REQ_MORE;
	if (!req_send_payload(qp, c->w, &p, buf, hdr_len))
		return REQ_WQE_ERROR; /* the MR went away under a message in progress */
	if (unlikely(qp->cc.limited))
		cc_tx_done(qp, hdr_len + p.paylen + uroce_pad(p.paylen) + UROCE_ICRC_LEN);
	req_advance(qp, c->w, &p);
	c->sent++;
	return REQ_GET_WQE;
}

/* IBA 10.8.3.1: local protection error. RC QPs go to ERR; UC/UD go to SQE
 * (IBA 10.3.1). */
static enum req_st
req_wqe_error(struct req_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	struct swqe *w = c->w;

	if (qpt_reliable(qp->init.qp_type)) {
		/* Completions are in order: if earlier WQEs are still in flight,
		 * wait for them (the WQE stays POSTED and is checked again on
		 * the next kick). */
		if (qp->sq_head != qp->req.cur) {
			if (w->state == SWQE_SENT)
				w->state = SWQE_POSTED;
			return REQ_EXIT;
		}
		QP_CNT(qp, REQ_LOCAL_PROT_ERR);
		req_complete_wqe(qp, w, UROCE_WC_LOC_PROT_ERR);
		qp_to_err(qp, QP_ERR_REPORTED);
	} else {
		QP_CNT(qp, REQ_LOCAL_PROT_ERR);
		req_complete_wqe(qp, w, UROCE_WC_LOC_PROT_ERR);
		qp->attr.qp_state = UROCE_QPS_SQE;
		sq_flush(qp);
	}
	return REQ_EXIT;
}

static enum req_st
req_more(struct req_ctx *c)
{
	c->more = true;
	return REQ_EXIT;
}

static const req_step_fn req_steps[REQ_NUM_STATES] = {
	[REQ_GET_WQE] = req_get_wqe,
	[REQ_START_WQE] = req_start_wqe,
	[REQ_SEND_PKT] = req_send_pkt,
	[REQ_WQE_ERROR] = req_wqe_error,
	[REQ_MORE] = req_more,
};

unsigned int
req_run(struct uroce_eng_qp *qp, unsigned int budget, bool *more)
{
	struct req_ctx c = { .qp = qp, .budget = budget };
	enum req_st st = REQ_GET_WQE;

	*more = false;
	if (!qp_can_send(qp) || qp->req.rnr_wait)
		return 0;
	while (st != REQ_EXIT)
		st = req_steps[st](&c);
	*more = c.more;
	return c.sent;
}

void
req_rewind(struct uroce_eng_qp *qp, uint32_t psn)
{
	uint32_t idx;

	qp->req.psn = psn;
	qp->req.off = 0;
	for (idx = qp->sq_head; idx != qp->sq_tail; idx++) {
		struct swqe *w = sq_at(qp, idx);

		if (w->state != SWQE_SENT)
			break;
		if (uroce_psn_diff(psn, w->last_psn) <= 0) {
			int32_t d = uroce_psn_diff(psn, w->first_psn);

			if (d < 0) {
				/* Before this WQE: restart it whole. */
				d = 0;
				qp->req.psn = w->first_psn;
			}
			if (!(w->props & UROCE_WRP_ATOMIC))
				qp->req.off = (uint32_t)d * qp->mtu;
			break;
		}
	}
	qp->req.cur = idx;
	eng_req_kick(qp);
}
