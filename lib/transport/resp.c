/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The responder (IBA 9.7.4, 9.7.5.1, 9.8 for UC, 9.8.2 for UD): PSN check,
 * duplicates, opcode sequence, R_Key/bounds/access checks, RNR, data
 * placement (one copy, packet payload straight into MR memory), READ and
 * ATOMIC resources saved for duplicates, ACK coalescing and the in-order
 * response queue.
 *
 * resp_rx() runs a state machine (enum, name table, loop where each step
 * returns the next state). Protocol errors are states; resp_err_tab maps
 * each to its NAK code, the WC status of an affected receive WQE, and a
 * counter. Responses (READ data, atomic ACKs) are queued in request order
 * and sent by resp_run() from uroce_eng_poll(), bounded by the budget,
 * followed by at most one coalesced ACK or one NAK.
 */

#include <string.h>

#include "transport_internal.h"

enum resp_st {
	RESP_CHECK_PSN,
	RESP_DUPLICATE,
	RESP_OUT_OF_SEQ,
	RESP_CHECK_OP_SEQ,
	RESP_CHECK_LENGTH,
	RESP_CHECK_ACCESS,
	RESP_SEND,
	RESP_WRITE,
	RESP_READ,
	RESP_ATOMIC,
	RESP_ACK,
	RESP_RNR,
	RESP_ERROR,
	RESP_DROP,
	RESP_EXIT,
};

static const char *const resp_st_names[] __attribute__((unused)) = {
	[RESP_CHECK_PSN] = "CHECK_PSN", [RESP_DUPLICATE] = "DUPLICATE",
	[RESP_OUT_OF_SEQ] = "OUT_OF_SEQ", [RESP_CHECK_OP_SEQ] = "CHECK_OP_SEQ",
	[RESP_CHECK_LENGTH] = "CHECK_LENGTH", [RESP_CHECK_ACCESS] = "CHECK_ACCESS",
	[RESP_SEND] = "SEND", [RESP_WRITE] = "WRITE", [RESP_READ] = "READ",
	[RESP_ATOMIC] = "ATOMIC", [RESP_ACK] = "ACK", [RESP_RNR] = "RNR",
	[RESP_ERROR] = "ERROR", [RESP_DROP] = "DROP", [RESP_EXIT] = "EXIT",
};

/* Responder protocol errors. */
enum resp_err {
	RERR_NONE = 0,
	RERR_INVALID_REQUEST,   /* opcode sequence, lengths (IBA 9.7.5.1) */
	RERR_REMOTE_ACCESS,     /* R_Key, bounds, rights, alignment (IBA 9.7.5.1) */
	RERR_LENGTH,            /* SEND longer than the receive WQE (IBA 9.7.5.1) */
	RERR_LOCAL_PROT,        /* receive WQE SGE fails its L_Key check */
	RERR_RD_ATOMIC,         /* beyond max_dest_rd_atomic (IBA 9.7.5.1) */
	RERR_MAX,
};

/* Error → NAK code, WC status of the receive WQE in use (0: none), counter. */
static const struct {
	enum uroce_nak_code nak;
	enum uroce_wc_status wc;
	enum uroce_counter cnt;
} resp_err_tab[RERR_MAX] = {
	[RERR_INVALID_REQUEST] = { UROCE_NAK_INVALID_REQUEST, UROCE_WC_REM_INV_REQ_ERR,
				   UROCE_CNT_RESP_REMOTE_INVALID_REQUEST },
	[RERR_REMOTE_ACCESS] = { UROCE_NAK_REMOTE_ACCESS_ERR, UROCE_WC_REM_ACCESS_ERR,
				 UROCE_CNT_RESP_REMOTE_ACCESS_ERRORS },
	[RERR_LENGTH] = { UROCE_NAK_INVALID_REQUEST, UROCE_WC_LOC_LEN_ERR,
			  UROCE_CNT_RESP_LOCAL_LENGTH_ERROR },
	[RERR_LOCAL_PROT] = { UROCE_NAK_REMOTE_OP_ERR, UROCE_WC_LOC_PROT_ERR,
			      UROCE_CNT_RX_LOCAL_PROT_ERR },
	[RERR_RD_ATOMIC] = { UROCE_NAK_INVALID_REQUEST, UROCE_WC_SUCCESS,
			     UROCE_CNT_RESP_RD_ATOMIC_EXCEEDED },
};

void
resp_reset(struct uroce_eng_qp *qp)
{
	memset(&qp->resp, 0, offsetof(struct resp_state, on_list));
	qp->resp.epsn = qp->attr.rq_psn;
}

static struct rq *
recv_queue(struct uroce_eng_qp *qp, struct uroce_eng_pd **pd)
{
	if (qp->init.srq != NULL) {
		*pd = qp->init.srq->pd;
		return &qp->init.srq->rq;
	}
	*pd = qp->pd;
	return &qp->rq;
}

/* Take a receive WQE for a new message (IBA 9.7.4.1). False if none. */
static bool
take_wqe(struct uroce_eng_qp *qp)
{
	struct uroce_eng_pd *pd;
	struct rq *rq = recv_queue(qp, &pd);
	struct rwqe *r;

	if (qp->resp.has_wqe)
		return true;
	r = rq_peek(rq);
	if (r == NULL)
		return false;
	qp->resp.wqe = *r;
	qp->resp.has_wqe = true;
	qp->resp.wqe_from_srq = qp->init.srq != NULL;
	rq_pop(rq);
	return true;
}

static struct uroce_eng_pd *
wqe_pd(struct uroce_eng_qp *qp)
{
	return qp->resp.wqe_from_srq ? qp->init.srq->pd : qp->pd;
}

static void
recv_complete(struct uroce_eng_qp *qp, struct uroce_eng_wc *wc)
{
	wc->wr_id = qp->resp.wqe.wr_id;
	wc->qp_num = qp->qpn;
	cq_push(qp->init.recv_cq, wc);
	qp->resp.has_wqe = false;
	qp->resp.offset = 0;
}

/* R_Key, PD, rights and bounds of a remote access (IBA 9.7.5.1, 10.6.3). */
static struct uroce_eng_mr *
rkey_check(struct uroce_eng_qp *qp, uint32_t rkey, uint64_t va, uint64_t len, int access)
{
	struct uroce_eng_mr *mr = mr_lookup(qp->eng, rkey);

	if (mr == NULL || mr->pd != qp->pd || !uroce_eng_mr_check(mr, va, len, access))
		return NULL;
	return mr;
}

static void
queue_nak(struct uroce_eng_qp *qp, uint8_t syn, uint32_t psn)
{
	qp->resp.nak_pending = true;
	qp->resp.nak_syn = syn;
	qp->resp.nak_psn = psn;
	eng_resp_kick(qp);
}

static void
queue_ack(struct uroce_eng_qp *qp, uint32_t psn)
{
	if (qp->resp.ack_pending)
		QP_CNT(qp, RESP_ACKS_COALESCED);
	qp->resp.ack_pending = true;
	qp->resp.ack_psn = psn;
	eng_resp_kick(qp);
}

static void
queue_res(struct uroce_eng_qp *qp, uint32_t slot)
{
	struct resp_state *r = &qp->resp;

	if (r->res[slot].queued)
		return;
	r->res[slot].queued = true;
	r->fifo[(r->fifo_head + r->fifo_count) % UROCE_MAX_DEST_RD_ATOMIC] = (uint8_t)slot;
	r->fifo_count++;
	eng_resp_kick(qp);
}

static void
fifo_remove(struct resp_state *r, uint32_t slot)
{
	uint32_t i, j = 0;
	uint8_t keep[UROCE_MAX_DEST_RD_ATOMIC];

	for (i = 0; i < r->fifo_count; i++) {
		uint8_t s = r->fifo[(r->fifo_head + i) % UROCE_MAX_DEST_RD_ATOMIC];

		if (s != slot)
			keep[j++] = s;
	}
	for (i = 0; i < j; i++)
		r->fifo[(r->fifo_head + i) % UROCE_MAX_DEST_RD_ATOMIC] = keep[i];
	r->fifo_count = j;
	r->res[slot].queued = false;
	r->res[slot].replay = false;
}

/*
 * A resource for a new READ/ATOMIC, or -1 if that would exceed
 * max_dest_rd_atomic (IBA 9.7.5.1). The requester completes in order, so
 * the READ/ATOMICs it still has outstanding are always the newest ones by
 * PSN, at most max_rd_atomic <= max_dest_rd_atomic of them counting this
 * one. The slot to reuse is therefore a free one or else the oldest by PSN.
 * If that oldest one is queued for a replay, the duplicate that asked for it
 * was stale (a correct requester cannot have it outstanding any more): the
 * replay is cancelled. If it is still queued for its first response, the
 * requester really has too many outstanding: refuse.
 */
static int
alloc_res(struct uroce_eng_qp *qp)
{
	struct resp_state *r = &qp->resp;
	uint32_t n = qp->attr.max_dest_rd_atomic, i;
	int best = -1;
	int32_t best_age = -1;

	if (n == 0)
		return -1;
	for (i = 0; i < n; i++) {
		struct rd_res *res = &r->res[i];
		int32_t age;

		if (res->type == RES_NONE && !res->queued)
			return (int)i;
		age = -uroce_psn_diff(res->first_psn, r->epsn);
		if (age > best_age) {
			best_age = age;
			best = (int)i;
		}
	}
	if (best < 0)
		return -1;
	if (r->res[best].queued) {
		if (!r->res[best].replay)
			return -1;
		fifo_remove(r, (uint32_t)best);
	}
	return best;
}

static struct rd_res *
find_res(struct uroce_eng_qp *qp, enum res_type type, uint32_t psn, uint32_t *slot)
{
	uint32_t i;

	for (i = 0; i < UROCE_MAX_DEST_RD_ATOMIC; i++) {
		struct rd_res *res = &qp->resp.res[i];

		if (res->type != type)
			continue;
		if (uroce_psn_diff(psn, res->first_psn) >= 0 &&
		    uroce_psn_diff(psn, res->last_psn) <= 0) {
			*slot = i;
			return res;
		}
	}
	return NULL;
}

/* IBA 9.7.5.1.2: duplicate requests. SEND/WRITE are ACKed again without
 * executing; a READ is replayed from the saved resource (possibly from a
 * PSN inside it); an ATOMIC is answered with the saved original value. */
static enum resp_st
resp_duplicate(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt)
{
	const struct uroce_opcode_info *oi = pkt->info;
	struct rd_res *res;
	uint32_t slot;

	QP_CNT(qp, DUPLICATE_REQUEST);
	if (oi->mask & UROCE_F_READ) {
		const uint8_t *reth = pkt->bth + oi->off_reth;
		uint64_t va = uroce_reth_va(reth);
		uint32_t len = uroce_reth_dma_len(reth), skip;

		res = find_res(qp, RES_READ, pkt->psn, &slot);
		if (res == NULL) {
			QP_CNT(qp, RESP_REPLAY_MISS);
			return RESP_DROP;
		}
		/* The sub-range must be the tail of the saved READ. */
		skip = (uint32_t)uroce_psn_diff(pkt->psn, res->first_psn) * qp->mtu;
		if (uroce_reth_rkey(reth) != res->rkey || skip > res->len ||
		    va != res->va + skip || len != res->len - skip) {
			QP_CNT(qp, RESP_REPLAY_MISS);
			return RESP_DROP;
		}
		QP_CNT(qp, RESP_READ_REPLAY);
		if (!res->queued)
			res->replay = true;
		res->start_psn = pkt->psn;
		res->cur_psn = pkt->psn;
		res->cur_va = va;
		res->resid = len;
		res->sub_len = len;
		queue_res(qp, slot);
		return RESP_EXIT;
	}
	if (oi->mask & UROCE_F_ATOMIC) {
		res = find_res(qp, RES_ATOMIC, pkt->psn, &slot);
		if (res == NULL) {
			QP_CNT(qp, RESP_REPLAY_MISS);
			return RESP_DROP;
		}
		QP_CNT(qp, RESP_ATOMIC_REPLAY);
		if (!res->queued)
			res->replay = true;
		queue_res(qp, slot);
		return RESP_EXIT;
	}
	queue_ack(qp, uroce_psn_add(qp->resp.epsn, UROCE_PSN_MASK)); /* ePSN - 1 */
	return RESP_EXIT;
}

static enum resp_st
resp_check_op_seq(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt)
{
	uint32_t mask = pkt->info->mask;

	/* IBA 9.7.5.1 (opcode sequence): inside a message only its
	 * MIDDLE/LAST may follow; outside, only a FIRST/ONLY (or READ/ATOMIC). */
	if (qp->resp.in_msg != 0) {
		if ((mask & UROCE_F_START) || !(mask & qp->resp.in_msg))
			return RESP_ERROR;
	} else if (!(mask & UROCE_F_START)) {
		return RESP_ERROR;
	}
	return RESP_CHECK_LENGTH;
}

static void
write_grh(uint8_t *grh, const struct uroce_frame *f, uint32_t ib_len)
{
	memset(grh, 0, UROCE_GRH_LEN);
	if (f == NULL)
		return;
	if (f->family == UROCE_IP_V6) {
		uint32_t w = 6u << 28 | (uint32_t)f->tclass << 20 | (f->flow_label & 0xFFFFF);

		uroce_put_be32(grh, w);
		uroce_put_be16(grh + 4, (uint16_t)(ib_len + UROCE_UDP_LEN));
		grh[6] = UROCE_IPPROTO_UDP;
		grh[7] = f->hop_limit;
		memcpy(grh + 8, f->sgid, 16);
		memcpy(grh + 24, f->dgid, 16);
	} else {
		/* RoCEv2 over IPv4: the IPv4 header sits in the last 20 bytes
		 * (the convention of Linux RDMA providers). */
		uint8_t *ip = grh + 20;

		ip[0] = 0x45;
		ip[1] = f->tclass;
		uroce_put_be16(ip + 2, (uint16_t)(UROCE_IPV4_LEN + UROCE_UDP_LEN + ib_len));
		ip[8] = f->hop_limit;
		ip[9] = UROCE_IPPROTO_UDP;
		memcpy(ip + 12, f->sgid + 12, 4);
		memcpy(ip + 16, f->dgid + 12, 4);
	}
}

/* IBA 9.8.2 / 10.2.5: UD receive: Q_Key check, one packet, GRH space. */
static unsigned int
resp_ud(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt, const struct uroce_frame *frame)
{
	const struct uroce_opcode_info *oi = pkt->info;
	const uint8_t *deth = pkt->bth + oi->off_deth;
	struct uroce_eng_wc wc;
	uint8_t grh[UROCE_GRH_LEN];

	if (!(oi->mask & UROCE_HDR_DETH) || !(oi->mask & UROCE_F_SEND)) {
		QP_CNT(qp, RX_BAD_SERVICE);
		return 0;
	}
	/* IBA C10-15: a Q_Key mismatch is silently dropped. */
	if (uroce_deth_qkey(deth) != qp->attr.qkey) {
		QP_CNT(qp, RESP_UD_QKEY_ERR);
		return 0;
	}
	if (pkt->paylen > qp->mtu || !take_wqe(qp)) {
		QP_CNT(qp, RESP_UD_DROP);
		return 0;
	}
	memset(&wc, 0, sizeof(wc));
	wc.opcode = UROCE_WC_RECV;
	wc.src_qp = uroce_deth_src_qp(deth);
	wc.wc_flags = UROCE_WC_GRH;
	if (qp->resp.wqe.length < pkt->paylen + UROCE_GRH_LEN) {
		QP_CNT(qp, RESP_LOCAL_LENGTH_ERROR);
		wc.status = UROCE_WC_LOC_LEN_ERR;
		recv_complete(qp, &wc);
		return 0;
	}
	write_grh(grh, frame, pkt->ib_len);
	if (sge_copy(qp->eng, wqe_pd(qp), qp->resp.wqe.sge, qp->resp.wqe.num_sge, 0, grh,
		     UROCE_GRH_LEN, true) != 0 ||
	    sge_copy(qp->eng, wqe_pd(qp), qp->resp.wqe.sge, qp->resp.wqe.num_sge, UROCE_GRH_LEN,
		     (void *)(uintptr_t)pkt->payload, pkt->paylen, true) != 0) {
		QP_CNT(qp, RX_LOCAL_PROT_ERR);
		wc.status = UROCE_WC_LOC_PROT_ERR;
		recv_complete(qp, &wc);
		return 0;
	}
	if (oi->mask & UROCE_HDR_IMMDT) {
		wc.wc_flags |= UROCE_WC_WITH_IMM;
		wc.imm_data = uroce_immdt_imm(pkt->bth + oi->off_immdt);
	}
	wc.byte_len = pkt->paylen + UROCE_GRH_LEN;
	QP_CNT(qp, RX_SEND_REQUESTS);
	recv_complete(qp, &wc);
	return 1;
}

void
resp_rx(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt, const struct uroce_frame *frame)
{
	const struct uroce_opcode_info *oi = pkt->info;
	const uint32_t mask = oi->mask;
	const bool rc = qp->init.qp_type == UROCE_QPT_RC;
	struct resp_state *r = &qp->resp;
	enum resp_st st = RESP_CHECK_PSN;
	enum resp_err err = RERR_NONE;
	uint32_t psn = pkt->psn;
	struct uroce_eng_wc wc;
	int32_t d;

	if (qp->init.qp_type == UROCE_QPT_UD) {
		resp_ud(qp, pkt, frame);
		return;
	}
	for (;;) {
		switch (st) {
		case RESP_CHECK_PSN:
			d = uroce_psn_diff(psn, r->epsn);
			if (rc) {
				/* IBA 9.7.5.1.1: ahead → NAK once; behind →
				 * duplicate; equal → process. */
				st = d > 0 ? RESP_OUT_OF_SEQ : d < 0 ? RESP_DUPLICATE :
								       RESP_CHECK_OP_SEQ;
				break;
			}
			/* UC (IBA 9.8.3): a gap loses the message in progress;
			 * resynchronise on the next FIRST/ONLY. */
			if (d != 0 || r->uc_drop) {
				if (d != 0)
					QP_CNT(qp, OUT_OF_SEQUENCE);
				r->in_msg = 0;
				r->offset = 0;
				if (mask & UROCE_F_START) {
					r->uc_drop = false;
					r->epsn = psn;
				} else {
					r->uc_drop = true;
					r->epsn = uroce_psn_add(psn, 1);
					st = RESP_DROP;
					break;
				}
			}
			st = RESP_CHECK_OP_SEQ;
			break;

		case RESP_OUT_OF_SEQ:
			QP_CNT(qp, OUT_OF_SEQUENCE);
			/* IBA 9.7.5.1.3: one PSN sequence error NAK per gap, then
			 * silent drops until ePSN arrives. After an RNR NAK the
			 * requester is waiting: stay silent too. */
			if (r->nak_state == NAK_NONE) {
				QP_CNT(qp, RESP_SEQ_NAK_SENT);
				r->nak_state = NAK_SEQ_SENT;
				queue_nak(qp, uroce_aeth_nak(UROCE_NAK_PSN_SEQ_ERR), r->epsn);
				st = RESP_EXIT;
			} else {
				st = RESP_DROP;
			}
			break;

		case RESP_DUPLICATE:
			st = resp_duplicate(qp, pkt);
			break;

		case RESP_CHECK_OP_SEQ:
			st = resp_check_op_seq(qp, pkt);
			if (st == RESP_ERROR)
				err = RERR_INVALID_REQUEST;
			break;

		case RESP_CHECK_LENGTH:
			/* IBA C9-92: FIRST/MIDDLE carry exactly the path
			 * MTU, LAST/ONLY at most the path MTU. */
			if (((mask & UROCE_F_FULL_PMTU) && pkt->paylen != qp->mtu) ||
			    pkt->paylen > qp->mtu) {
				err = RERR_INVALID_REQUEST;
				st = RESP_ERROR;
				break;
			}
			st = RESP_CHECK_ACCESS;
			break;

		case RESP_CHECK_ACCESS: {
			/* IBA 9.7.5.1 / 10.2: the QP must enable the remote
			 * operation (qp_access_flags). */
			int need = (mask & UROCE_F_WRITE) ? UROCE_ACCESS_REMOTE_WRITE :
				   (mask & UROCE_F_READ) ? UROCE_ACCESS_REMOTE_READ :
				   (mask & UROCE_F_ATOMIC) ? UROCE_ACCESS_REMOTE_ATOMIC : 0;

			if ((mask & (UROCE_F_READ | UROCE_F_ATOMIC)) && !rc) {
				st = RESP_DROP; /* not a UC operation */
				break;
			}
			if ((qp->attr.qp_access_flags & need) != need) {
				err = RERR_REMOTE_ACCESS;
				st = RESP_ERROR;
				break;
			}
			st = (mask & UROCE_F_SEND) ? RESP_SEND :
			     (mask & UROCE_F_WRITE) ? RESP_WRITE :
			     (mask & UROCE_F_READ) ? RESP_READ : RESP_ATOMIC;
			break;
		}

		case RESP_SEND:
			if ((mask & UROCE_F_START) && !take_wqe(qp)) {
				st = rc ? RESP_RNR : RESP_DROP;
				if (!rc)
					r->uc_drop = true;
				break;
			}
			if (!r->has_wqe) {
				/* UC: the WQE was lost with a dropped message. */
				st = RESP_DROP;
				break;
			}
			/* IBA 9.7.5.1: a SEND longer than the receive WQE is a
			 * local length error at the responder, NAK invalid request. */
			if (pkt->paylen > r->wqe.length - r->offset) {
				err = RERR_LENGTH;
				st = RESP_ERROR;
				break;
			}
			if ((mask & UROCE_HDR_IETH) && (mask & UROCE_F_END)) {
				uint32_t key = uroce_ieth_rkey(pkt->bth + oi->off_ieth);
				struct uroce_eng_mr *mr = mr_lookup(qp->eng, key);

				/* IBA 10.6.7.2.x: invalidate an R_Key of our PD. */
				if (mr == NULL || mr->pd != qp->pd) {
					err = RERR_INVALID_REQUEST;
					st = RESP_ERROR;
					break;
				}
			}
			if (pkt->paylen > 0 &&
			    sge_copy(qp->eng, wqe_pd(qp), r->wqe.sge, r->wqe.num_sge, r->offset,
				     (void *)(uintptr_t)pkt->payload, pkt->paylen, true) != 0) {
				err = RERR_LOCAL_PROT;
				st = RESP_ERROR;
				break;
			}
			QP_CNT(qp, RX_SEND_REQUESTS);
			r->offset += pkt->paylen;
			if (!(mask & UROCE_F_END)) {
				r->in_msg = UROCE_F_SEND;
				st = RESP_ACK;
				break;
			}
			memset(&wc, 0, sizeof(wc));
			wc.opcode = UROCE_WC_RECV;
			wc.byte_len = r->offset;
			if (mask & UROCE_HDR_IMMDT) {
				wc.wc_flags |= UROCE_WC_WITH_IMM;
				wc.imm_data = uroce_immdt_imm(pkt->bth + oi->off_immdt);
			}
			if (mask & UROCE_HDR_IETH) {
				uint32_t key = uroce_ieth_rkey(pkt->bth + oi->off_ieth);

				mr_lookup(qp->eng, key)->valid = false;
				wc.wc_flags |= UROCE_WC_WITH_INV;
				wc.invalidated_rkey = key;
			}
			recv_complete(qp, &wc);
			r->in_msg = 0;
			r->msn = (r->msn + 1) & 0xFFFFFF;
			st = RESP_ACK;
			break;

		case RESP_WRITE: {
			struct uroce_eng_mr *mr;

			if (mask & UROCE_F_START) {
				const uint8_t *reth = pkt->bth + oi->off_reth;

				r->w_va = uroce_reth_va(reth);
				r->w_rkey = uroce_reth_rkey(reth);
				r->w_len = r->w_resid = uroce_reth_dma_len(reth);
				/* IBA C9-88: a zero-length WRITE does
				 * not check the R_Key; others check key, PD,
				 * REMOTE_WRITE and bounds, overflow-safe. */
				if (r->w_len > UROCE_MAX_MSG_SIZE ||
				    (r->w_len > 0 &&
				     rkey_check(qp, r->w_rkey, r->w_va, r->w_len,
						UROCE_ACCESS_REMOTE_WRITE) == NULL)) {
					err = RERR_REMOTE_ACCESS;
					st = RESP_ERROR;
					break;
				}
			}
			/* Payload beyond the DMA length, or a short message. */
			if (pkt->paylen > r->w_resid ||
			    ((mask & UROCE_F_END) && pkt->paylen != r->w_resid)) {
				err = RERR_INVALID_REQUEST;
				st = RESP_ERROR;
				break;
			}
			/* WRITE with immediate consumes a receive WQE: check it
			 * before placing, so an RNR retry places the same bytes. */
			if ((mask & UROCE_HDR_IMMDT) && !take_wqe(qp)) {
				st = rc ? RESP_RNR : RESP_DROP;
				if (!rc)
					r->uc_drop = true;
				break;
			}
			if (pkt->paylen > 0) {
				mr = rkey_check(qp, r->w_rkey, r->w_va, pkt->paylen,
						UROCE_ACCESS_REMOTE_WRITE);
				if (mr == NULL) {
					err = RERR_REMOTE_ACCESS;
					st = RESP_ERROR;
					break;
				}
				memcpy(mr->addr + (r->w_va - mr->iova), pkt->payload, pkt->paylen);
			}
			QP_CNT(qp, RX_WRITE_REQUESTS);
			r->w_va += pkt->paylen;
			r->w_resid -= pkt->paylen;
			if (!(mask & UROCE_F_END)) {
				r->in_msg = UROCE_F_WRITE;
				st = RESP_ACK;
				break;
			}
			if (mask & UROCE_HDR_IMMDT) {
				memset(&wc, 0, sizeof(wc));
				wc.opcode = UROCE_WC_RECV_RDMA_WITH_IMM;
				wc.byte_len = r->w_len;
				wc.wc_flags = UROCE_WC_WITH_IMM;
				wc.imm_data = uroce_immdt_imm(pkt->bth + oi->off_immdt);
				recv_complete(qp, &wc);
			}
			r->in_msg = 0;
			r->msn = (r->msn + 1) & 0xFFFFFF;
			st = RESP_ACK;
			break;
		}

		case RESP_READ: {
			const uint8_t *reth = pkt->bth + oi->off_reth;
			uint64_t va = uroce_reth_va(reth);
			uint32_t rkey = uroce_reth_rkey(reth), len = uroce_reth_dma_len(reth);
			struct rd_res *res;
			int slot;

			if (len > UROCE_MAX_MSG_SIZE) {
				err = RERR_INVALID_REQUEST;
				st = RESP_ERROR;
				break;
			}
			if (len > 0 &&
			    rkey_check(qp, rkey, va, len, UROCE_ACCESS_REMOTE_READ) == NULL) {
				err = RERR_REMOTE_ACCESS;
				st = RESP_ERROR;
				break;
			}
			slot = alloc_res(qp);
			if (slot < 0) {
				err = RERR_RD_ATOMIC;
				st = RESP_ERROR;
				break;
			}
			res = &r->res[slot];
			res->type = RES_READ;
			res->replay = false;
			res->first_psn = psn;
			res->last_psn = uroce_psn_add(psn, uroce_num_pkts(len, qp->mtu) - 1);
			res->va = va;
			res->rkey = rkey;
			res->len = len;
			res->start_psn = psn;
			res->cur_psn = psn;
			res->cur_va = va;
			res->resid = len;
			res->sub_len = len;
			queue_res(qp, (uint32_t)slot);
			/* Its response will acknowledge everything before it. */
			if (r->ack_pending) {
				r->ack_pending = false;
				QP_CNT(qp, RESP_ACKS_COALESCED);
			}
			QP_CNT(qp, RX_READ_REQUESTS);
			r->nak_state = NAK_NONE;
			r->epsn = uroce_psn_add(res->last_psn, 1);
			r->msn = (r->msn + 1) & 0xFFFFFF;
			st = RESP_EXIT;
			break;
		}

		case RESP_ATOMIC: {
			const uint8_t *ae = pkt->bth + oi->off_atmeth;
			uint64_t va = uroce_atmeth_va(ae), orig, val;
			struct uroce_eng_mr *mr;
			struct rd_res *res;
			uint8_t *p;
			int slot;

			/* IBA 9.4.5: 8-byte aligned, inside the MR, with
			 * REMOTE_ATOMIC; any failure is a remote access error. */
			mr = rkey_check(qp, uroce_atmeth_rkey(ae), va, 8,
					UROCE_ACCESS_REMOTE_ATOMIC);
			if (mr == NULL || (va & 7) != 0) {
				err = RERR_REMOTE_ACCESS;
				st = RESP_ERROR;
				break;
			}
			slot = alloc_res(qp);
			if (slot < 0) {
				err = RERR_RD_ATOMIC;
				st = RESP_ERROR;
				break;
			}
			/* Execute exactly once; duplicates use res->orig. The
			 * engine is the only writer on this worker. */
			p = mr->addr + (va - mr->iova);
			memcpy(&orig, p, 8);
			if ((pkt->opcode & 0x1F) == UROCE_OP_COMPARE_SWAP)
				val = orig == uroce_atmeth_compare(ae) ?
				      uroce_atmeth_swap_add(ae) : orig;
			else
				val = orig + uroce_atmeth_swap_add(ae);
			memcpy(p, &val, 8);
			res = &r->res[slot];
			memset(res, 0, sizeof(*res));
			res->type = RES_ATOMIC;
			res->first_psn = res->last_psn = res->start_psn = res->cur_psn = psn;
			res->va = va;
			res->rkey = uroce_atmeth_rkey(ae);
			res->orig = orig;
			queue_res(qp, (uint32_t)slot);
			if (r->ack_pending) {
				r->ack_pending = false;
				QP_CNT(qp, RESP_ACKS_COALESCED);
			}
			QP_CNT(qp, RX_ATOMIC_REQUESTS);
			r->nak_state = NAK_NONE;
			r->epsn = uroce_psn_add(psn, 1);
			r->msn = (r->msn + 1) & 0xFFFFFF;
			st = RESP_EXIT;
			break;
		}

		case RESP_ACK:
			r->nak_state = NAK_NONE;
			r->epsn = uroce_psn_add(psn, 1);
			/* IBA 9.7.5.1: ACK when asked (coalesced in resp_run). */
			if (rc && uroce_bth_ackreq(pkt->bth))
				queue_ack(qp, psn);
			st = RESP_EXIT;
			break;

		case RESP_RNR:
			/* IBA 9.7.5.1.4: no receive WQE: RNR NAK with our
			 * min_rnr_timer; ePSN stays so the retry is processed. */
			QP_CNT(qp, RESP_RNR_NAK_SENT);
			r->nak_state = NAK_RNR_SENT;
			queue_nak(qp, uroce_aeth_rnr(qp->attr.min_rnr_timer), psn);
			st = RESP_EXIT;
			break;

		case RESP_ERROR:
			qp->cnt[resp_err_tab[err].cnt]++;
			if (!rc) {
				/* UC has no NAK: drop the message (IBA 9.8.3). */
				r->in_msg = 0;
				r->offset = 0;
				r->uc_drop = true;
				st = RESP_DROP;
				break;
			}
			/* A receive WQE in use completes with the error. */
			if (r->has_wqe && resp_err_tab[err].wc != UROCE_WC_SUCCESS) {
				memset(&wc, 0, sizeof(wc));
				wc.opcode = UROCE_WC_RECV;
				wc.status = resp_err_tab[err].wc;
				recv_complete(qp, &wc);
			}
			/* IBA 9.7.5.1: NAK, then the responder QP goes to ERR
			 * (the requester does too when it gets the NAK). The
			 * rd_atomic excess NAK is not fatal for the responder. */
			queue_nak(qp, uroce_aeth_nak(resp_err_tab[err].nak), psn);
			if (err != RERR_RD_ATOMIC)
				qp_to_err(qp);
			st = RESP_EXIT;
			break;

		case RESP_DROP:
			QP_CNT(qp, RESP_SILENT_DROP);
			return;

		case RESP_EXIT:
			return;
		}
	}
}

static bool
send_ack(struct uroce_eng_qp *qp, uint8_t syn, uint32_t psn)
{
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	uint32_t hdr_len;
	uint8_t *buf;

	memset(&bth, 0, sizeof(bth));
	memset(&ext, 0, sizeof(ext));
	bth.opcode = UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_ACKNOWLEDGE);
	bth.pkey = UROCE_DEFAULT_PKEY;
	bth.migreq = true;
	bth.dqpn = qp->attr.dest_qp_num;
	bth.psn = psn;
	ext.syndrome = syn;
	ext.msn = qp->resp.msn;
	buf = eng_tx_prepare(qp, &bth, &ext, 0, &hdr_len);
	if (buf == NULL)
		return false;
	eng_tx_send(qp, buf, &bth, hdr_len, 0, &qp->attr.ah_attr);
	return true;
}

/* Send the next packet of the response at the head of the queue. */
static bool
send_response(struct uroce_eng_qp *qp, struct rd_res *res, bool *done)
{
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	uint32_t hdr_len, paylen = 0;
	struct uroce_eng_mr *mr = NULL;
	uint8_t *buf;
	uint8_t op;

	memset(&bth, 0, sizeof(bth));
	memset(&ext, 0, sizeof(ext));
	bth.pkey = UROCE_DEFAULT_PKEY;
	bth.migreq = true;
	bth.dqpn = qp->attr.dest_qp_num;
	bth.psn = res->cur_psn;
	ext.syndrome = UROCE_AETH_ACK_NO_CREDIT;
	ext.msn = qp->resp.msn;
	*done = true;
	if (res->type == RES_ATOMIC) {
		op = UROCE_OP_ATOMIC_ACKNOWLEDGE;
		ext.orig = res->orig;
	} else {
		bool first = res->cur_psn == res->start_psn;
		bool last;

		paylen = UROCE_MIN(qp->mtu, res->resid);
		last = paylen == res->resid;
		op = first && last ? UROCE_OP_RDMA_READ_RESPONSE_ONLY :
		     first ? UROCE_OP_RDMA_READ_RESPONSE_FIRST :
		     last ? UROCE_OP_RDMA_READ_RESPONSE_LAST : UROCE_OP_RDMA_READ_RESPONSE_MIDDLE;
		*done = last;
		if (paylen > 0) {
			/* The MR may have gone since the request was checked. */
			mr = rkey_check(qp, res->rkey, res->cur_va, paylen,
					UROCE_ACCESS_REMOTE_READ);
			if (mr == NULL) {
				uint32_t i;

				QP_CNT(qp, RESP_REMOTE_ACCESS_ERRORS);
				for (i = 0; i < UROCE_MAX_DEST_RD_ATOMIC; i++)
					qp->resp.res[i].queued = false;
				qp->resp.fifo_count = 0;
				qp->resp.nak_pending = true;
				qp->resp.nak_syn = uroce_aeth_nak(UROCE_NAK_REMOTE_ACCESS_ERR);
				qp->resp.nak_psn = res->cur_psn;
				res->queued = false;
				qp_to_err(qp);
				return true;
			}
		}
	}
	bth.opcode = UROCE_OPCODE(UROCE_SVC_RC, op);
	buf = eng_tx_prepare(qp, &bth, &ext, paylen, &hdr_len);
	if (buf == NULL) {
		*done = false;
		return false;
	}
	if (paylen > 0)
		memcpy(buf + hdr_len, mr->addr + (res->cur_va - mr->iova), paylen);
	eng_tx_send(qp, buf, &bth, hdr_len, paylen, &qp->attr.ah_attr);
	if (res->type == RES_ATOMIC)
		return true;
	res->cur_psn = uroce_psn_add(res->cur_psn, 1);
	res->cur_va += paylen;
	res->resid -= paylen;
	return true;
}

unsigned int
resp_run(struct uroce_eng_qp *qp, unsigned int budget, bool *more)
{
	struct resp_state *r = &qp->resp;
	unsigned int sent = 0;
	bool done;

	*more = false;
	if (qp->attr.qp_state == UROCE_QPS_ERR || qp->attr.qp_state == UROCE_QPS_RESET) {
		/* Only the final NAK leaves a QP in error. */
		while (r->fifo_count > 0) {
			r->res[r->fifo[r->fifo_head]].queued = false;
			r->res[r->fifo[r->fifo_head]].replay = false;
			r->fifo_head = (r->fifo_head + 1) % UROCE_MAX_DEST_RD_ATOMIC;
			r->fifo_count--;
		}
		r->ack_pending = false;
	}
	while (r->fifo_count > 0 && sent < budget) {
		struct rd_res *res = &r->res[r->fifo[r->fifo_head]];

		if (!send_response(qp, res, &done)) {
			*more = true;
			return sent;
		}
		sent++;
		if (done && r->fifo_count > 0) {
			res->queued = false;
			res->replay = false;
			r->fifo_head = (r->fifo_head + 1) % UROCE_MAX_DEST_RD_ATOMIC;
			r->fifo_count--;
		}
	}
	if (r->fifo_count > 0) {
		*more = true;
		return sent;
	}
	if (sent >= budget && (r->nak_pending || r->ack_pending)) {
		*more = true;
		return sent;
	}
	if (r->nak_pending) {
		/* A NAK implicitly acknowledges everything before it, but an ACK
		 * owed to the requester (for a duplicate or an AckReq) is still
		 * sent first: if the NAK is lost, the ACK alone lets the
		 * requester make progress. */
		if (r->ack_pending && uroce_psn_before(r->ack_psn, r->nak_psn)) {
			if (!send_ack(qp, UROCE_AETH_ACK_NO_CREDIT, r->ack_psn)) {
				*more = true;
				return sent;
			}
			QP_CNT(qp, RESP_ACKS_SENT);
			sent++;
		}
		r->ack_pending = false;
		if (!send_ack(qp, r->nak_syn, r->nak_psn)) {
			*more = true;
			return sent;
		}
		r->nak_pending = false;
		sent++;
	} else if (r->ack_pending) {
		if (!send_ack(qp, UROCE_AETH_ACK_NO_CREDIT, r->ack_psn)) {
			*more = true;
			return sent;
		}
		QP_CNT(qp, RESP_ACKS_SENT);
		r->ack_pending = false;
		sent++;
	}
	return sent;
}
