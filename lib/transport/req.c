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

static bool
is_rd_atomic(uint32_t op)
{
	return (uroce_wr_props(op) & UROCE_WRP_RD_ATOMIC) != 0;
}

static bool
is_atomic(uint32_t op)
{
	return (uroce_wr_props(op) & UROCE_WRP_ATOMIC) != 0;
}

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
	w->is_inline = (r->flags & UROCE_SEND_INLINE) != 0;
	if (w->is_inline) {
		if (is_rd_atomic((enum uroce_wr_opcode)r->opcode) || r->inline_data == NULL)
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
	if (is_atomic((enum uroce_wr_opcode)r->opcode) && total != 8)
		return -EMSGSIZE;
	if (t == UROCE_QPT_UD && total > qp->mtu)
		return -EMSGSIZE;
	/* Keep one message within a quarter of the PSN space, so modular PSN
	 * comparisons over it stay unambiguous (IBA 9.7.1: 2^23 window). This
	 * only bites 2 GB messages at a 256-byte path MTU. */
	if (t != UROCE_QPT_UD && uroce_num_pkts(total, qp->mtu) > (1u << 22))
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

/* Requester states (each step returns the next). */
enum req_state_e {
	REQ_GET_WQE,
	REQ_START_WQE,
	REQ_SEND_PKT,
	REQ_WQE_ERROR,
	REQ_BLOCKED,   /* waits for a kick: window, rd_atomic, fence, SQD, RNR */
	REQ_MORE,      /* budget or TX buffers exhausted */
	REQ_EXIT,
};

static const char *const req_state_names[] __attribute__((unused)) = {
	[REQ_GET_WQE] = "GET_WQE", [REQ_START_WQE] = "START_WQE",
	[REQ_SEND_PKT] = "SEND_PKT", [REQ_WQE_ERROR] = "WQE_ERROR",
	[REQ_BLOCKED] = "BLOCKED", [REQ_MORE] = "MORE", [REQ_EXIT] = "EXIT",
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

/* Full opcode of one packet of a SEND/WRITE message. */
static uint8_t
seg_opcode(const struct uroce_eng_qp *qp, const struct swqe *w, bool first, bool last)
{
	uint8_t svc = qp->init.qp_type == UROCE_QPT_UC ? UROCE_SVC_UC : UROCE_SVC_RC;
	enum seg_pos pos = first ? (last ? SEG_ONLY : SEG_FIRST) : (last ? SEG_LAST : SEG_MIDDLE);

	/* sq_check() admits only the opcodes with a row here. */
	assert(w->s.wr.opcode < UROCE_ARRAY_SIZE(seg_ops));
	return UROCE_OPCODE(svc, seg_ops[w->s.wr.opcode][pos]);
}

static void
arm_rto(struct uroce_eng_qp *qp)
{
	uint64_t rto = comp_rto_us(qp);

	if (rto != 0 && qp->comp.rto_deadline == 0) {
		qp->comp.rto_deadline = eng_now(qp->eng) + rto;
		eng_timer_update(qp);
	}
}

/* Build and send the next packet of WQE @w. Returns false if no TX buffer
 * (or a local protection error, with *err set). */
static bool
send_pkt(struct uroce_eng_qp *qp, struct swqe *w, bool *err)
{
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	uint32_t psn = qp->req.psn, paylen = 0, consumed = 1, hdr_len;
	bool first = false, last = true;
	const struct uroce_eng_ah_attr *ah = &qp->attr.ah_attr;
	uint8_t *buf;

	memset(&bth, 0, sizeof(bth));
	memset(&ext, 0, sizeof(ext));
	bth.pkey = UROCE_DEFAULT_PKEY;
	bth.migreq = true;
	bth.dqpn = qp->attr.dest_qp_num;
	bth.psn = psn;

	if (qp->init.qp_type == UROCE_QPT_UD) {
		/* IBA 9.8.2: UD is one SEND_ONLY packet with a DETH. */
		bth.opcode = UROCE_OPCODE(UROCE_SVC_UD, w->s.wr.opcode == UROCE_WR_SEND_WITH_IMM ?
					  UROCE_OP_SEND_ONLY_WITH_IMMEDIATE : UROCE_OP_SEND_ONLY);
		bth.dqpn = w->s.wr.remote_qpn;
		bth.se = w->s.wr.flags & UROCE_SEND_SOLICITED;
		/* IBA 10.2.5: a Q_Key with the high bit set means the QP's own. */
		ext.qkey = (w->s.wr.remote_qkey & UROCE_QKEY_PRIVILEGED) ? qp->attr.qkey :
								     w->s.wr.remote_qkey;
		ext.src_qp = qp->qpn;
		ext.imm = w->s.wr.imm;
		paylen = w->length;
		first = true;
		ah = &w->s.ah;
	} else if (w->s.wr.opcode == UROCE_WR_RDMA_READ) {
		/* IBA 9.7.4.1.3: a READ request consumes one PSN per response
		 * packet; a restart asks for the remaining sub-range. */
		bth.opcode = UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_RDMA_READ_REQUEST);
		bth.ackreq = true;
		ext.va = w->s.wr.remote_addr + qp->req.off;
		ext.rkey = w->s.wr.rkey;
		ext.dma_len = w->length - qp->req.off;
		consumed = uroce_num_pkts(ext.dma_len, qp->mtu);
	} else if (is_atomic(w->s.wr.opcode)) {
		bth.opcode = UROCE_OPCODE(UROCE_SVC_RC,
					  w->s.wr.opcode == UROCE_WR_ATOMIC_CMP_AND_SWP ?
					  UROCE_OP_COMPARE_SWAP : UROCE_OP_FETCH_ADD);
		bth.ackreq = true;
		ext.va = w->s.wr.remote_addr;
		ext.rkey = w->s.wr.rkey;
		ext.swap_add = w->s.wr.opcode == UROCE_WR_ATOMIC_CMP_AND_SWP ? w->s.wr.swap : w->s.wr.compare_add;
		ext.compare = w->s.wr.compare_add;
	} else {
		first = qp->req.off == 0;
		paylen = UROCE_MIN(qp->mtu, w->length - qp->req.off);
		last = qp->req.off + paylen == w->length;
		bth.opcode = seg_opcode(qp, w, first, last);
		ext.va = w->s.wr.remote_addr;
		ext.rkey = w->s.wr.rkey;
		ext.dma_len = w->length;
		ext.imm = w->s.wr.imm;
		ext.inv_rkey = w->s.wr.imm;
		bth.se = last && (w->s.wr.flags & UROCE_SEND_SOLICITED);
		/* IBA 9.7.2: AckReq on the last packet and periodically. */
		bth.ackreq = qp->init.qp_type == UROCE_QPT_RC &&
			     (last || (uroce_psn_diff(psn, w->first_psn) + 1) %
					      UROCE_ACKREQ_INTERVAL == 0);
	}

	/* cc: a slowly paced RC packet asks for its ACK (cc_ackreq()). */
	if (unlikely(qp->cc.limited) && qp->init.qp_type == UROCE_QPT_RC && !bth.ackreq)
		bth.ackreq = cc_ackreq(qp, paylen);
	buf = eng_tx_prepare(qp, &bth, &ext, paylen, &hdr_len);
	if (buf == NULL)
		return false;
	if (paylen > 0) {
		uint32_t off = qp->init.qp_type == UROCE_QPT_UD ? 0 : qp->req.off;
		struct uroce_eng_mr *mr = NULL;
		const uint8_t *src = NULL;

		/* Zero-copy when the payload lies in one SGE of an MR that
		 * allows it; the WQE then waits for the device (sq_retire()). */
		if (!w->is_inline && qp->eng->zc_min != 0 && paylen >= qp->eng->zc_min)
			src = sge_span(qp->eng, qp->pd, w->s.wr.sge, w->s.wr.num_sge, off, paylen, &mr);
		if (src != NULL && eng_zc_ok(qp, mr, paylen) &&
		    eng_tx_send_zc(qp, buf, &bth, hdr_len, src, paylen, ah, mr, w)) {
			buf = NULL;
		} else if (w->is_inline) {
			memcpy(buf + hdr_len, w->s.wr.inline_data + off, paylen);
		} else if (sge_copy(qp->eng, qp->pd, w->s.wr.sge, w->s.wr.num_sge, off, buf + hdr_len,
				    paylen, false) != 0) {
			/* The MR went away under a message in progress. */
			qp->eng->ops.tx_free(qp->eng->ctx, buf);
			*err = true;
			return false;
		}
	}
	if (buf != NULL)
		eng_tx_send(qp, buf, &bth, hdr_len, paylen, ah);
	if (unlikely(qp->cc.limited))
		cc_tx_done(qp, hdr_len + paylen + uroce_pad(paylen) + UROCE_ICRC_LEN); /* cc */

	if (uroce_psn_before(psn, qp->req.psn_hi))
		QP_CNT(qp, RETRANSMITS);
	qp->req.psn = uroce_psn_add(psn, consumed);
	if (uroce_psn_before(qp->req.psn_hi, qp->req.psn))
		qp->req.psn_hi = qp->req.psn;
	if (qp->init.qp_type == UROCE_QPT_RC)
		arm_rto(qp);

	if (w->s.wr.opcode == UROCE_WR_RDMA_READ || is_atomic(w->s.wr.opcode) || last) {
		qp->req.cur++;
		qp->req.off = 0;
		/* UC and UD have no ACK: a WQE is complete once sent (IBA 9.8). */
		if (qp->init.qp_type != UROCE_QPT_RC)
			req_complete_wqe(qp, w, UROCE_WC_SUCCESS);
	} else {
		qp->req.off += paylen;
	}
	return true;
}

static enum req_state_e
req_get_wqe(struct uroce_eng_qp *qp, struct swqe **wp)
{
	struct swqe *w;

	if (qp->req.cur == qp->sq_tail)
		return REQ_EXIT;
	w = sq_at(qp, qp->req.cur);
	*wp = w;
	if (qp->init.qp_type == UROCE_QPT_RC &&
	    uroce_psn_diff(qp->req.psn, qp->comp.psn) >= UROCE_MAX_INFLIGHT_PKTS)
		return REQ_BLOCKED;
	if (w->state == SWQE_POSTED)
		return REQ_START_WQE;
	return REQ_SEND_PKT;
}

static enum req_state_e
req_start_wqe(struct uroce_eng_qp *qp, struct swqe *w)
{
	int access = 0;

	/* IBA 10.3.1: in SQD no new WQE starts; those in progress finish. */
	if (qp->attr.qp_state == UROCE_QPS_SQD)
		return REQ_BLOCKED;
	/* IBA 10.8.3.3 (fence): wait for every prior READ/ATOMIC. */
	if ((w->s.wr.flags & UROCE_SEND_FENCE) && qp->req.rd_outstanding > 0)
		return REQ_BLOCKED;
	/* IBA 9.7.4.1.x: never more than max_rd_atomic READ/ATOMIC outstanding. */
	if (is_rd_atomic(w->s.wr.opcode) && qp->req.rd_outstanding >= qp->attr.max_rd_atomic)
		return REQ_BLOCKED;
	if (is_rd_atomic(w->s.wr.opcode))
		access = UROCE_ACCESS_LOCAL_WRITE;
	if (!w->is_inline &&
	    !sge_list_ok(qp->eng, qp->pd, w->s.wr.sge, w->s.wr.num_sge, access))
		return REQ_WQE_ERROR;
	w->first_psn = qp->req.psn;
	if (w->s.wr.opcode == UROCE_WR_RDMA_READ)
		w->npkts = uroce_num_pkts(w->length, qp->mtu);
	else if (is_atomic(w->s.wr.opcode) || qp->init.qp_type == UROCE_QPT_UD)
		w->npkts = 1;
	else
		w->npkts = uroce_num_pkts(w->length, qp->mtu);
	w->last_psn = uroce_psn_add(w->first_psn, w->npkts - 1);
	w->state = SWQE_SENT;
	if (is_rd_atomic(w->s.wr.opcode)) {
		w->rd_counted = true;
		qp->req.rd_outstanding++;
	}
	return REQ_SEND_PKT;
}

unsigned int
req_run(struct uroce_eng_qp *qp, unsigned int budget, bool *more)
{
	enum req_state_e st = REQ_GET_WQE;
	struct swqe *w = NULL;
	unsigned int sent = 0;
	bool err = false;

	*more = false;
	if (!qp_can_send(qp) || qp->req.rnr_wait)
		return 0;
	for (;;) {
		switch (st) {
		case REQ_GET_WQE:
			st = sent < budget ? req_get_wqe(qp, &w) : REQ_MORE;
			break;
		case REQ_START_WQE:
			st = req_start_wqe(qp, w);
			break;
		case REQ_SEND_PKT:
			/* cc: a QP that a CNP slowed waits for its pacing slot
			 * on the timer list (cc.c), not on the work list. */
			if (unlikely(qp->cc.limited) && !cc_pace_ok(qp))
				return sent;
			if (send_pkt(qp, w, &err)) {
				sent++;
				st = REQ_GET_WQE;
			} else {
				st = err ? REQ_WQE_ERROR : REQ_MORE;
			}
			break;
		case REQ_WQE_ERROR:
			/* IBA 10.8.3.1: local protection error. RC QPs go to ERR;
			 * UC/UD go to SQE (IBA 10.3.1). */
			if (qp->init.qp_type == UROCE_QPT_RC) {
				/* Completions are in order: if earlier WQEs are
				 * still in flight, wait for them (the WQE stays
				 * POSTED and is checked again on the next kick). */
				if (qp->sq_head != qp->req.cur) {
					if (w->state == SWQE_SENT)
						w->state = SWQE_POSTED;
					return sent;
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
			return sent;
		case REQ_MORE:
			*more = true;
			return sent;
		case REQ_BLOCKED:
		case REQ_EXIT:
			return sent;
		}
	}
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
			if (!is_atomic(w->s.wr.opcode))
				qp->req.off = (uint32_t)d * qp->mtu;
			break;
		}
	}
	qp->req.cur = idx;
	eng_req_kick(qp);
}
