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

#include <assert.h>
#include <errno.h>
#include <string.h>

#include "transport_internal.h"

/*
 * Responder states: one check or one action each, of IBA 9.7.5.1 (RC) and
 * 9.8.3 (UC), done by the function of the same name in resp_steps[]. A
 * step returns the next state; RESP_EXIT ends the packet.
 *
 *   CHECK_PSN ─┬─ OUT_OF_SEQ / DUPLICATE (RC) ─────────────────────────── EXIT
 *              └─ [CHECK_XRC] → CHECK_OP_SEQ → CHECK_LENGTH → CHECK_QP_ACCESS → CHECK_RKEY
 *   SEND:   GET_WQE → CHECK_RECV_LENGTH → CHECK_INVALIDATE → PLACE_SEND
 *   WRITE:  CHECK_DMA_LENGTH → [GET_WQE with immediate] → PLACE_WRITE
 *   READ:   EXEC_READ        ATOMIC: EXEC_ATOMIC
 *   ATOMIC WRITE: EXEC_ATOMIC_WRITE    FLUSH: EXEC_FLUSH (IBA 1.5 A19)
 *   last packet of a SEND/WRITE: COMPLETE → ACK; other packets: ACK
 *   errors: ERROR (NAK), RNR (RNR NAK), DROP (silent)
 */
enum resp_st {
	RESP_CHECK_PSN,
	RESP_OUT_OF_SEQ,
	RESP_DUPLICATE,
	RESP_CHECK_XRC,
	RESP_CHECK_OP_SEQ,
	RESP_CHECK_LENGTH,
	RESP_CHECK_QP_ACCESS,
	RESP_CHECK_RKEY,
	RESP_CHECK_DMA_LENGTH,
	RESP_GET_WQE,
	RESP_CHECK_RECV_LENGTH,
	RESP_CHECK_INVALIDATE,
	RESP_PLACE_SEND,
	RESP_PLACE_WRITE,
	RESP_EXEC_READ,
	RESP_EXEC_ATOMIC,
	RESP_EXEC_ATOMIC_WRITE,
	RESP_EXEC_FLUSH,
	RESP_COMPLETE,
	RESP_ACK,
	RESP_RNR,
	RESP_ERROR,
	RESP_DROP,
	RESP_EXIT,
	RESP_NUM_STATES,
};

static const char *const resp_st_names[RESP_NUM_STATES] __attribute__((unused)) = {
	[RESP_CHECK_PSN] = "CHECK_PSN", [RESP_OUT_OF_SEQ] = "OUT_OF_SEQ",
	[RESP_DUPLICATE] = "DUPLICATE", [RESP_CHECK_XRC] = "CHECK_XRC",
	[RESP_CHECK_OP_SEQ] = "CHECK_OP_SEQ",
	[RESP_CHECK_LENGTH] = "CHECK_LENGTH", [RESP_CHECK_QP_ACCESS] = "CHECK_QP_ACCESS",
	[RESP_CHECK_RKEY] = "CHECK_RKEY", [RESP_CHECK_DMA_LENGTH] = "CHECK_DMA_LENGTH",
	[RESP_GET_WQE] = "GET_WQE", [RESP_CHECK_RECV_LENGTH] = "CHECK_RECV_LENGTH",
	[RESP_CHECK_INVALIDATE] = "CHECK_INVALIDATE", [RESP_PLACE_SEND] = "PLACE_SEND",
	[RESP_PLACE_WRITE] = "PLACE_WRITE", [RESP_EXEC_READ] = "EXEC_READ",
	[RESP_EXEC_ATOMIC] = "EXEC_ATOMIC", [RESP_EXEC_ATOMIC_WRITE] = "EXEC_ATOMIC_WRITE",
	[RESP_EXEC_FLUSH] = "EXEC_FLUSH", [RESP_COMPLETE] = "COMPLETE", [RESP_ACK] = "ACK",
	[RESP_RNR] = "RNR", [RESP_ERROR] = "ERROR", [RESP_DROP] = "DROP", [RESP_EXIT] = "EXIT",
};

/* Responder protocol errors. */
enum resp_err {
	RERR_NONE = 0,
	RERR_INVALID_REQUEST,   /* opcode sequence, lengths, invalidate (IBA 9.7.5.1) */
	RERR_REMOTE_ACCESS,     /* R_Key, bounds, rights, alignment (IBA 9.7.5.1) */
	RERR_LENGTH,            /* SEND longer than the receive WQE (IBA 9.7.5.1) */
	RERR_LOCAL_PROT,        /* receive WQE SGE fails its L_Key check */
	RERR_RD_ATOMIC,         /* beyond max_dest_rd_atomic (IBA 9.7.5.1) */
	RERR_MAX,
};

/* Error → NAK code, WC status of the receive WQE in use (0: none), counter,
 * and the affiliated event when no WQE reports it (IBA 11.6.3). */
static const struct {
	enum uroce_nak_code nak;
	enum uroce_wc_status wc;
	enum uroce_counter cnt;
	int event;
} resp_err_tab[RERR_MAX] = {
	[RERR_INVALID_REQUEST] = { UROCE_NAK_INVALID_REQUEST, UROCE_WC_REM_INV_REQ_ERR,
				   UROCE_CNT_RESP_REMOTE_INVALID_REQUEST,
				   UROCE_EVENT_QP_REQ_ERR },
	[RERR_REMOTE_ACCESS] = { UROCE_NAK_REMOTE_ACCESS_ERR, UROCE_WC_REM_ACCESS_ERR,
				 UROCE_CNT_RESP_REMOTE_ACCESS_ERRORS, UROCE_EVENT_QP_ACCESS_ERR },
	[RERR_LENGTH] = { UROCE_NAK_INVALID_REQUEST, UROCE_WC_LOC_LEN_ERR,
			  UROCE_CNT_RESP_LOCAL_LENGTH_ERROR, UROCE_EVENT_QP_REQ_ERR },
	[RERR_LOCAL_PROT] = { UROCE_NAK_REMOTE_OP_ERR, UROCE_WC_LOC_PROT_ERR,
			      UROCE_CNT_RX_LOCAL_PROT_ERR, UROCE_EVENT_QP_FATAL },
	[RERR_RD_ATOMIC] = { UROCE_NAK_INVALID_REQUEST, UROCE_WC_SUCCESS,
			     UROCE_CNT_RESP_RD_ATOMIC_EXCEEDED, UROCE_EVENT_QP_REQ_ERR },
};

/* One request packet on its way through the steps. */
struct resp_ctx {
	struct uroce_eng_qp *qp;
	const struct uroce_pkt *pkt;
	uint32_t mask;          /* the opcode's UROCE_F_* and header bits */
	bool rc;                /* RC (NAKs, duplicates) or UC (silent drops) */
	enum resp_err err;      /* set by a step that returns RESP_ERROR */
	enum uroce_resp_check chk; /* and which check it was */
	struct uroce_eng_mr *mr; /* ATOMIC, ATOMIC WRITE, FLUSH: the MR resp_check_rkey() found */
	struct uroce_eng_mr win; /* the window binding c->mr may point to */
	bool icrc_late;         /* the payload's ICRC is still to check (resp_rx()) */
};

typedef enum resp_st (*resp_step_fn)(struct resp_ctx *c);

/* A check refused the request: the error and the check, for resp_error(). */
static enum resp_st
refuse(struct resp_ctx *c, enum resp_err err, enum uroce_resp_check chk)
{
	c->err = err;
	c->chk = chk;
	return RESP_ERROR;
}

/*
 * Off the good path: a refused request, with the responder's state as it
 * was (expected PSN, the message in progress, every saved READ/ATOMIC), so
 * that a spurious refusal can be explained after the fact.
 */
void
resp_reject(struct uroce_eng_qp *qp, enum uroce_resp_check chk, const struct uroce_pkt *pkt,
	    uint32_t psn, uint8_t nak)
{
	const struct resp_state *r = &qp->resp;
	struct uroce_eng_resp_reject *e = &qp->rej[qp->rej_count % UROCE_RESP_REJECTS];
	uint32_t i;

	memset(e, 0, sizeof(*e));
	e->time_us = eng_now(qp->eng);
	e->seq = ++qp->rej_count;
	e->qpn = qp->qpn;
	e->check = (uint8_t)chk;
	e->nak = nak;
	e->in_msg = r->in_msg == UROCE_F_SEND ? 1 : r->in_msg == UROCE_F_WRITE ? 2 : 0;
	e->psn = psn;
	e->epsn = r->epsn;
	e->msn = r->msn;
	if (pkt != NULL) {
		const uint8_t *h;

		e->opcode = pkt->opcode;
		if (pkt->info->mask & UROCE_HDR_RETH) {
			h = pkt->bth + pkt->info->off_reth;
			e->va = uroce_reth_va(h);
			e->rkey = uroce_reth_rkey(h);
			e->len = uroce_reth_dma_len(h);
		} else if (pkt->info->mask & UROCE_HDR_ATMETH) {
			h = pkt->bth + pkt->info->off_atmeth;
			e->va = uroce_atmeth_va(h);
			e->rkey = uroce_atmeth_rkey(h);
			e->len = 8;
		}
	}
	if (e->in_msg == 2) {
		e->w_rkey = r->w_rkey;
		e->w_va = r->w_va;
		e->w_resid = r->w_resid;
	}
	e->n_res = UROCE_MIN(qp->attr.max_dest_rd_atomic, UROCE_MAX_DEST_RD_ATOMIC);
	for (i = 0; i < e->n_res; i++) {
		const struct rd_res *s = &r->res[i];
		struct uroce_eng_resp_res *d = &e->res[i];

		d->type = (uint8_t)s->type;
		d->queued = s->queued;
		d->replay = s->replay;
		d->first_psn = s->first_psn;
		d->last_psn = s->last_psn;
		d->rkey = s->rkey;
		d->va = s->va;
		d->len = s->len;
		d->msn = s->msn;
		d->cur_psn = s->cur_psn;
		d->resid = s->resid;
	}
	if (qp->eng->ops.resp_reject != NULL)
		qp->eng->ops.resp_reject(qp->eng->ctx, qp, e);
}

unsigned int
uroce_eng_qp_resp_rejects(const struct uroce_eng_qp *qp, struct uroce_eng_resp_reject *out,
			  unsigned int n)
{
	unsigned int i;

	if (qp == NULL || out == NULL)
		return 0;
	for (i = 0; i < n && i < UROCE_RESP_REJECTS && i < qp->rej_count; i++)
		out[i] = qp->rej[(qp->rej_count - 1 - i) % UROCE_RESP_REJECTS];
	return i;
}

void
resp_reset(struct uroce_eng_qp *qp)
{
	memset(&qp->resp, 0, offsetof(struct resp_state, on_list));
	qp->resp.epsn = qp->attr.rq_psn;
}

/* The SRQ a new message takes its receive WQE from: an XRC TGT QP's is the
 * one its XRCETH names (IBA 1.2 XRC), another QP's the one it was created
 * with; NULL: the QP's own RQ. */
static struct uroce_eng_srq *
recv_srq(const struct uroce_eng_qp *qp)
{
	return qp->init.qp_type == UROCE_QPT_XRC_RECV ? qp->resp.xsrq : qp->init.srq;
}

/* The PD whose R_Keys a request may use: an XRC TGT QP has none of its own,
 * it uses that of the XRC SRQ the request names (IBA 1.2 XRC). */
static struct uroce_eng_pd *
resp_pd(const struct uroce_eng_qp *qp)
{
	if (qp->init.qp_type == UROCE_QPT_XRC_RECV)
		return qp->resp.xsrq != NULL ? qp->resp.xsrq->pd : NULL;
	return qp->pd;
}

/*
 * What take_wqe() asks for ahead of its use. A busy SEND or UD responder
 * takes a receive WQE per message from a ring as deep as the client's
 * posted receives (thousands: far beyond this core's L2), and writes each
 * message into a buffer as long out of its cache: both were misses on every
 * packet, and the stores behind them filled the store buffer
 * (doc/benchmarks.md, 7 Dec 2026). So the entry RQ_READ_AHEAD on is read
 * ahead, and as much of the next WQE's buffer as this message's packet
 * fills of its own (@p fill), up to RECV_PREFETCH_MAX: the next message is
 * likely the same size.
 */
#define RQ_READ_AHEAD 3
#define RECV_PREFETCH_MAX 1152

static void
rq_prefetch(struct uroce_eng *eng, struct rq *rq, uint32_t fill)
{
	const struct rwqe *next = rq_peek(rq);
	const uint8_t *ahead;

	if (rq->count > RQ_READ_AHEAD) {
		/* What rwqe_take() reads of it with one SGE. */
		ahead = (const uint8_t *)&rq->ring[(rq->head + RQ_READ_AHEAD) & rq->mask];
		__builtin_prefetch(ahead, 0);
		__builtin_prefetch(ahead + offsetof(struct rwqe, sge[1]) - 1, 0);
	}
	if (next != NULL && next->num_sge > 0)
		sge_prefetch_dst(eng, &next->sge[0], UROCE_MIN(fill, RECV_PREFETCH_MAX));
}

/* A receive WQE's header and the SGEs it has, not the whole entry: most of
 * its UROCE_MAX_SGE slots are unused. rq_commit() bounded num_sge. */
static inline void
rwqe_take(struct rwqe *dst, const struct rwqe *src)
{
	uint32_t i, n = src->num_sge;

	dst->wr_id = src->wr_id;
	dst->num_sge = n;
	dst->length = src->length;
	for (i = 0; i < n; i++)
		dst->sge[i] = src->sge[i];
}

/* Take a receive WQE for a new message (IBA 9.7.4.1) whose first packet
 * writes @p fill bytes of it (0: a WRITE with immediate, which writes none).
 * False if none. */
static bool
take_wqe(struct uroce_eng_qp *qp, uint32_t fill)
{
	struct uroce_eng_srq *srq = recv_srq(qp);
	struct rq *rq = srq != NULL ? &srq->rq : &qp->rq;
	struct rwqe *r;

	if (qp->resp.has_wqe)
		return true;
	r = rq_peek(rq);
	if (r == NULL && qp->eng->ops.rq_refill != NULL) {
		/* The shell may hold receives posted before this packet came
		 * (IBA 10.8.3: a posted receive is available at once). */
		qp->eng->ops.rq_refill(qp->eng->ctx, qp);
		r = rq_peek(rq);
	}
	if (r == NULL)
		return false;
	rwqe_take(&qp->resp.wqe, r);
	qp->resp.has_wqe = true;
	qp->resp.wqe_srq = srq;
	rq_pop(rq);
	rq_prefetch(qp->eng, rq, fill);
	return true;
}

static struct uroce_eng_pd *
wqe_pd(struct uroce_eng_qp *qp)
{
	return qp->resp.wqe_srq != NULL ? qp->resp.wqe_srq->pd : qp->pd;
}

static void
recv_complete(struct uroce_eng_qp *qp, struct uroce_eng_wc *wc)
{
	wc->wr_id = qp->resp.wqe.wr_id;
	wc->qp_num = qp->qpn;
	cq_push(resp_wqe_cq(qp), wc);
	qp->resp.has_wqe = false;
	qp->resp.offset = 0;
}

/* R_Key, PD, rights and bounds of a remote access (IBA 9.7.5.1, 10.6.3).
 * An R_Key may name a memory window (IBA 10.6.7.2): its binding is copied
 * into @p snap, which the result then points to. */
static struct uroce_eng_mr *
rkey_check_pd(struct uroce_eng_qp *qp, struct uroce_eng_pd *pd, uint32_t rkey, uint64_t va,
	      uint64_t len, int access, struct uroce_eng_mr *snap)
{
	struct uroce_eng_mr *mr = rkey_lookup(qp, rkey, snap);

	if (mr == NULL || pd == NULL || mr->pd != pd || !uroce_eng_mr_check(mr, va, len, access))
		return NULL;
	return mr;
}

static struct uroce_eng_mr *
rkey_check(struct uroce_eng_qp *qp, uint32_t rkey, uint64_t va, uint64_t len, int access,
	   struct uroce_eng_mr *snap)
{
	return rkey_check_pd(qp, resp_pd(qp), rkey, va, len, access, snap);
}

/* The MSN of an ACK or NAK is the one reached when it was queued (IBA
 * 9.7.5.1.5: the MSN of the last message completed before it). */
static void
queue_nak(struct uroce_eng_qp *qp, uint8_t syn, uint32_t psn)
{
	qp->resp.nak_pending = true;
	qp->resp.nak_syn = syn;
	qp->resp.nak_psn = psn;
	qp->resp.nak_msn = qp->resp.msn;
	eng_resp_kick(qp);
}

static void
queue_ack(struct uroce_eng_qp *qp, uint32_t psn)
{
	if (qp->resp.ack_pending)
		QP_CNT(qp, RESP_ACKS_COALESCED);
	qp->resp.ack_pending = true;
	qp->resp.ack_psn = psn;
	qp->resp.ack_msn = qp->resp.msn;
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
 *
 * New requests take slots in PSN order and no slot is freed before a reset,
 * so the slots fill in index order and from then on the oldest is the one
 * after the last taken: res_next, without a scan of every slot per request.
 * A max_dest_rd_atomic changed after the first one breaks that order; the
 * QP then looks for the oldest by PSN (oldest_res()) until its next reset.
 */
static int
oldest_res(const struct resp_state *r, uint32_t n)
{
	int32_t best_age = -1;
	int best = -1;
	uint32_t i;

	for (i = 0; i < n; i++) {
		const struct rd_res *res = &r->res[i];
		int32_t age;

		if (res->type == RES_NONE && !res->queued)
			return (int)i;
		age = -uroce_psn_diff(res->first_psn, r->epsn);
		if (age > best_age) {
			best_age = age;
			best = (int)i;
		}
	}
	return best;
}

static int
alloc_res(struct uroce_eng_qp *qp)
{
	struct resp_state *r = &qp->resp;
	uint32_t n = qp->attr.max_dest_rd_atomic;
	bool in_order;
	int slot;

	if (n == 0)
		return -1;
	if (r->res_n == 0)
		r->res_n = n;
	in_order = r->res_n == n;
	slot = in_order ? (int)r->res_next : oldest_res(r, n);
	if (slot < 0)
		return -1;
	if (r->res[slot].queued) {
		if (!r->res[slot].replay)
			return -1;
		fifo_remove(r, (uint32_t)slot);
	}
	if (in_order)
		r->res_next = (uint32_t)slot + 1 == n ? 0 : (uint32_t)slot + 1;
	return slot;
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

/* A READ/ATOMIC was accepted: its response acknowledges everything before
 * it, so an ACK still owed is folded into it; the message is counted. */
static void
rd_atomic_accepted(struct uroce_eng_qp *qp, struct rd_res *res, uint32_t next_epsn)
{
	struct resp_state *r = &qp->resp;

	if (r->ack_pending) {
		r->ack_pending = false;
		QP_CNT(qp, RESP_ACKS_COALESCED);
	}
	r->nak_state = NAK_NONE;
	r->epsn = next_epsn;
	/* IBA 9.7.5.1.5: a READ or ATOMIC is a message of its own; its
	 * responses carry the MSN it completed, even when other requests
	 * arrive before they are sent, and a replay carries it again. */
	r->msn = (r->msn + 1) & UROCE_PSN_MASK;
	res->msn = r->msn;
}

/* IBA 9.7.5.1.1 (RC): behind ePSN is a duplicate, ahead is out of sequence,
 * ePSN itself is processed. */
static enum resp_st
check_psn_rc(struct resp_ctx *c)
{
	int32_t d = uroce_psn_diff(c->pkt->psn, c->qp->resp.epsn);

	return d > 0 ? RESP_OUT_OF_SEQ : d < 0 ? RESP_DUPLICATE : RESP_CHECK_XRC;
}

/* IBA 9.8.3 (UC): a PSN gap loses the message in progress; the responder
 * resynchronises on the next FIRST or ONLY, whatever its PSN. */
static enum resp_st
check_psn_uc(struct resp_ctx *c)
{
	struct resp_state *r = &c->qp->resp;
	uint32_t psn = c->pkt->psn;
	int32_t d = uroce_psn_diff(psn, r->epsn);

	if (d == 0 && !r->uc_drop)
		return RESP_CHECK_OP_SEQ;
	if (d != 0)
		QP_CNT(c->qp, OUT_OF_SEQUENCE);
	r->in_msg = 0;
	r->offset = 0;
	if (c->mask & UROCE_F_START) {
		r->uc_drop = false;
		r->epsn = psn;
		return RESP_CHECK_OP_SEQ;
	}
	r->uc_drop = true;
	r->epsn = uroce_psn_add(psn, 1);
	return RESP_DROP;
}

static enum resp_st
resp_check_psn(struct resp_ctx *c)
{
	return c->rc ? check_psn_rc(c) : check_psn_uc(c);
}

/* IBA 9.7.5.1.3: one PSN sequence error NAK per gap, then silent drops
 * until ePSN arrives. After an RNR NAK the requester is waiting: silent too. */
static enum resp_st
resp_out_of_seq(struct resp_ctx *c)
{
	struct resp_state *r = &c->qp->resp;

	QP_CNT(c->qp, OUT_OF_SEQUENCE);
	if (r->nak_state != NAK_NONE)
		return RESP_DROP;
	QP_CNT(c->qp, RESP_SEQ_NAK_SENT);
	r->nak_state = NAK_SEQ_SENT;
	queue_nak(c->qp, uroce_aeth_nak(UROCE_NAK_PSN_SEQ_ERR), r->epsn);
	return RESP_EXIT;
}

/* IBA 9.7.5.1.2: duplicate requests. SEND/WRITE are ACKed again without
 * executing; a READ is replayed from the saved resource (possibly from a
 * PSN inside it); an ATOMIC is answered with the saved original value. */
static enum resp_st
resp_duplicate(struct resp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	const struct uroce_pkt *pkt = c->pkt;
	const struct uroce_opcode_info *oi = pkt->info;
	struct rd_res *res;
	uint32_t slot;

	QP_CNT(qp, DUPLICATE_REQUEST);
	if (c->mask & UROCE_F_READ) {
		const uint8_t *reth = pkt->bth + oi->off_reth;
		uint64_t va = uroce_reth_va(reth);
		uint32_t len = uroce_reth_dma_len(reth), skip;

		res = find_res(qp, RES_READ, pkt->psn, &slot);
		if (res == NULL) {
			QP_CNT(qp, RESP_REPLAY_MISS);
			resp_reject(qp, UROCE_RCHK_REPLAY_MISS, pkt, pkt->psn,
				    UROCE_RESP_REJECT_DROPPED);
			return RESP_DROP;
		}
		/* The sub-range must be the tail of the saved READ. */
		skip = (uint32_t)uroce_psn_diff(pkt->psn, res->first_psn) * qp->mtu;
		if (uroce_reth_rkey(reth) != res->rkey || skip > res->len ||
		    va != res->va + skip || len != res->len - skip) {
			QP_CNT(qp, RESP_REPLAY_MISS);
			resp_reject(qp, UROCE_RCHK_REPLAY_RANGE, pkt, pkt->psn,
				    UROCE_RESP_REJECT_DROPPED);
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
	/* IBA 1.5 oA19-14, oA19-15: a duplicate ATOMIC WRITE or FLUSH is
	 * answered again from its resource, never executed twice. */
	if (c->mask & (UROCE_F_ATOMIC | UROCE_F_ATOMIC_WRITE | UROCE_F_FLUSH)) {
		enum res_type t = (c->mask & UROCE_F_ATOMIC) ? RES_ATOMIC :
				  (c->mask & UROCE_F_FLUSH) ? RES_FLUSH : RES_ATOMIC_WRITE;

		res = find_res(qp, t, pkt->psn, &slot);
		if (res == NULL) {
			QP_CNT(qp, RESP_REPLAY_MISS);
			resp_reject(qp, UROCE_RCHK_REPLAY_MISS, pkt, pkt->psn,
				    UROCE_RESP_REJECT_DROPPED);
			return RESP_DROP;
		}
		if (t == RES_ATOMIC)
			QP_CNT(qp, RESP_ATOMIC_REPLAY);
		else
			QP_CNT(qp, RESP_ATOMIC_WRITE_FLUSH_REPLAY);
		if (!res->queued)
			res->replay = true;
		queue_res(qp, slot);
		return RESP_EXIT;
	}
	queue_ack(qp, uroce_psn_add(qp->resp.epsn, UROCE_PSN_MASK)); /* ePSN - 1 */
	return RESP_EXIT;
}

/*
 * IBA 1.2 XRC: a request to an XRC TGT QP names in its XRCETH the XRC SRQ
 * that receives it, and whose PD its R_Keys must belong to. That SRQ must
 * exist and belong to the TGT QP's XRC domain; otherwise it is an XRC
 * domain violation, NAKed as a remote access error (the TGT QP goes to
 * ERR, the requester completes with REM_ACCESS_ERR). A SEND's later
 * packets are placed in the WQE its first packet took.
 */
static enum resp_st
resp_check_xrc(struct resp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	struct uroce_eng_srq *srq;

	if (qp->init.qp_type != UROCE_QPT_XRC_RECV)
		return RESP_CHECK_OP_SEQ;
	srq = eng_xsrq_of(qp->eng, uroce_xrceth_srqn(c->pkt->bth + c->pkt->info->off_xrceth));
	qp->resp.xsrq = NULL;
	if (srq == NULL || srq->xrcd != qp->init.xrcd) {
		QP_CNT(qp, RESP_XRC_DOMAIN_ERR);
		return refuse(c, RERR_REMOTE_ACCESS, UROCE_RCHK_XRC_SRQ);
	}
	qp->resp.xsrq = srq;
	return RESP_CHECK_OP_SEQ;
}

/* IBA 9.7.5.1 (opcode sequence, C9-85): inside a message only its MIDDLE or
 * LAST may follow; outside one, only a FIRST or ONLY (or a READ/ATOMIC). */
static enum resp_st
resp_check_op_seq(struct resp_ctx *c)
{
	uint32_t in_msg = c->qp->resp.in_msg;

	if (in_msg != 0 ? (c->mask & UROCE_F_START) || !(c->mask & in_msg) :
			  !(c->mask & UROCE_F_START)) {
		return refuse(c, RERR_INVALID_REQUEST, UROCE_RCHK_OP_SEQ);
	}
	return RESP_CHECK_LENGTH;
}

/* IBA C9-92: FIRST and MIDDLE carry exactly the path MTU, LAST and ONLY at
 * most the path MTU. */
static enum resp_st
resp_check_length(struct resp_ctx *c)
{
	uint32_t paylen = c->pkt->paylen, mtu = c->qp->mtu;

	if (((c->mask & UROCE_F_FULL_PMTU) && paylen != mtu) || paylen > mtu)
		return refuse(c, RERR_INVALID_REQUEST, UROCE_RCHK_LENGTH);
	return RESP_CHECK_QP_ACCESS;
}

/* The access flags a FLUSH of FETH @p feth needs, per placement type. */
static int
flush_access(uint32_t feth)
{
	uint8_t t = uroce_feth_type(feth);

	return ((t & UROCE_FLUSH_GLOBAL) ? UROCE_ACCESS_FLUSH_GLOBAL : 0) |
	       ((t & UROCE_FLUSH_PERSISTENT) ? UROCE_ACCESS_FLUSH_PERSISTENT : 0);
}

/* The FETH word of a FLUSH request. */
static uint32_t
pkt_feth(const struct uroce_pkt *pkt)
{
	return uroce_feth_word(pkt->bth + pkt->info->off_feth);
}

/* IBA 9.7.5.1, 10.2.4: the QP must enable the remote operation
 * (qp_access_flags); UC carries no READ or ATOMIC (IBA 9.8.1). IBA 1.5 A19:
 * ATOMIC WRITE needs remote write; FLUSH the flag of each placement type it
 * names, after its FETH is found well formed (a malformed request). */
static enum resp_st
resp_check_qp_access(struct resp_ctx *c)
{
	int need = (c->mask & (UROCE_F_WRITE | UROCE_F_ATOMIC_WRITE)) ? UROCE_ACCESS_REMOTE_WRITE :
		   (c->mask & UROCE_F_READ) ? UROCE_ACCESS_REMOTE_READ :
		   (c->mask & UROCE_F_ATOMIC) ? UROCE_ACCESS_REMOTE_ATOMIC : 0;

	if ((c->mask & (UROCE_F_READ | UROCE_F_ATOMIC | UROCE_F_ATOMIC_WRITE | UROCE_F_FLUSH)) &&
	    !c->rc)
		return RESP_DROP;
	if (c->mask & UROCE_F_FLUSH) {
		if (!uroce_feth_valid(pkt_feth(c->pkt)))
			return refuse(c, RERR_INVALID_REQUEST, UROCE_RCHK_FETH);
		need = flush_access(pkt_feth(c->pkt));
	}
	if ((c->qp->attr.qp_access_flags & need) != need)
		return refuse(c, RERR_REMOTE_ACCESS, UROCE_RCHK_QP_ACCESS);
	if (c->mask & UROCE_F_SEND)
		return (c->mask & UROCE_F_START) ? RESP_GET_WQE : RESP_CHECK_RECV_LENGTH;
	return RESP_CHECK_RKEY;
}

/*
 * IBA 1.5 A19: an ATOMIC WRITE's RETH names exactly 8 bytes (a malformed
 * request otherwise), 8-byte aligned (the misaligned-atomic NAK, as IBA
 * 9.4.5 for atomics), of an MR or window that grants remote write. The
 * word must be aligned in this mapping too, or no single store covers it.
 */
static enum resp_st
check_atomic_write(struct resp_ctx *c)
{
	const uint8_t *h = c->pkt->bth + c->pkt->info->off_reth;
	uint64_t va = uroce_reth_va(h);

	if (uroce_reth_dma_len(h) != 8)
		return refuse(c, RERR_INVALID_REQUEST, UROCE_RCHK_DMA_LENGTH);
	if ((va & 7) != 0)
		return refuse(c, RERR_INVALID_REQUEST, UROCE_RCHK_ATOMIC_ALIGN);
	c->mr = rkey_check(c->qp, uroce_reth_rkey(h), va, 8, UROCE_ACCESS_REMOTE_WRITE, &c->win);
	if (c->mr == NULL)
		return refuse(c, RERR_REMOTE_ACCESS, UROCE_RCHK_RKEY);
	if (((uintptr_t)c->mr->addr + (va - c->mr->iova)) & 7)
		return refuse(c, RERR_INVALID_REQUEST, UROCE_RCHK_ATOMIC_ALIGN);
	return RESP_EXEC_ATOMIC_WRITE;
}

/*
 * IBA 1.5 A19: a FLUSH names a range (selectivity RANGE: the RETH's VA and
 * length, checked like a READ's) or the whole MR or window of its R_Key
 * (selectivity MR: no range), whose access flags must allow each placement
 * type it asks for. PERSISTENT is refused whatever the flags: uroce has no
 * persistent-memory MRs, so it cannot promise persistence (a remote access
 * error, as rxe answers it for memory that is not pmem).
 */
static enum resp_st
check_flush(struct resp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	const uint8_t *h = c->pkt->bth + c->pkt->info->off_reth;
	uint32_t feth = pkt_feth(c->pkt), len = uroce_reth_dma_len(h);
	int need = flush_access(feth);
	struct uroce_eng_mr *mr;

	if (uroce_feth_type(feth) & UROCE_FLUSH_PERSISTENT)
		return refuse(c, RERR_REMOTE_ACCESS, UROCE_RCHK_FLUSH_TYPE);
	if (uroce_feth_level(feth) == UROCE_FLUSH_MR) {
		mr = rkey_lookup(qp, uroce_reth_rkey(h), &c->win);
		if (mr == NULL || mr->pd != resp_pd(qp))
			return refuse(c, RERR_REMOTE_ACCESS, UROCE_RCHK_RKEY);
		if ((mr->access & need) != need)
			return refuse(c, RERR_REMOTE_ACCESS, UROCE_RCHK_FLUSH_TYPE);
		c->mr = mr;
		return RESP_EXEC_FLUSH;
	}
	if (len > UROCE_MAX_MSG_SIZE)
		return refuse(c, RERR_INVALID_REQUEST, UROCE_RCHK_MSG_SIZE);
	c->mr = rkey_check(qp, uroce_reth_rkey(h), uroce_reth_va(h), len, need, &c->win);
	if (c->mr == NULL)
		return refuse(c, RERR_REMOTE_ACCESS, UROCE_RCHK_RKEY);
	return RESP_EXEC_FLUSH;
}

/*
 * IBA 9.7.5.1, 10.6.3 (C9-88): the R_Key names an MR of the QP's PD that
 * grants the operation and holds the whole range, computed overflow-safe.
 * A zero-length WRITE or READ checks no R_Key. A length above 2^31 or a
 * misaligned ATOMIC (IBA 9.4.5) is an invalid request before any key is
 * looked at. A WRITE's RETH is in its first packet; the
 * later packets are checked against the same MR as they are placed.
 */
static enum resp_st
resp_check_rkey(struct resp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	struct resp_state *r = &qp->resp;
	const uint8_t *h;

	if (c->mask & UROCE_F_WRITE) {
		if (!(c->mask & UROCE_F_START))
			return RESP_CHECK_DMA_LENGTH;
		h = c->pkt->bth + c->pkt->info->off_reth;
		r->w_va = uroce_reth_va(h);
		r->w_rkey = uroce_reth_rkey(h);
		r->w_len = r->w_resid = uroce_reth_dma_len(h);
		/* A length no message can have is a bad request, whatever the
		 * key (as for READ below). */
		if (r->w_len > UROCE_MAX_MSG_SIZE)
			return refuse(c, RERR_INVALID_REQUEST, UROCE_RCHK_MSG_SIZE);
		if (r->w_len > 0 && rkey_check(qp, r->w_rkey, r->w_va, r->w_len,
					       UROCE_ACCESS_REMOTE_WRITE, &c->win) == NULL) {
			return refuse(c, RERR_REMOTE_ACCESS, UROCE_RCHK_RKEY);
		}
		return RESP_CHECK_DMA_LENGTH;
	}
	if (c->mask & UROCE_F_READ) {
		uint32_t len;

		h = c->pkt->bth + c->pkt->info->off_reth;
		len = uroce_reth_dma_len(h);
		if (len > UROCE_MAX_MSG_SIZE)
			return refuse(c, RERR_INVALID_REQUEST, UROCE_RCHK_MSG_SIZE);
		if (len > 0 && rkey_check(qp, uroce_reth_rkey(h), uroce_reth_va(h), len,
					  UROCE_ACCESS_REMOTE_READ, &c->win) == NULL) {
			return refuse(c, RERR_REMOTE_ACCESS, UROCE_RCHK_RKEY);
		}
		return RESP_EXEC_READ;
	}
	if (c->mask & UROCE_F_ATOMIC_WRITE)
		return check_atomic_write(c);
	if (c->mask & UROCE_F_FLUSH)
		return check_flush(c);
	h = c->pkt->bth + c->pkt->info->off_atmeth;
	/* IBA 9.4.5: a misaligned address is a malformed request, before any
	 * key is looked at. */
	if ((uroce_atmeth_va(h) & 7) != 0)
		return refuse(c, RERR_INVALID_REQUEST, UROCE_RCHK_ATOMIC_ALIGN);
	c->mr = rkey_check(qp, uroce_atmeth_rkey(h), uroce_atmeth_va(h), 8,
			   UROCE_ACCESS_REMOTE_ATOMIC, &c->win);
	if (c->mr == NULL)
		return refuse(c, RERR_REMOTE_ACCESS, UROCE_RCHK_RKEY);
	return RESP_EXEC_ATOMIC;
}

/* IBA 9.7.5.1 (C9-89): the payload of a WRITE never goes past the DMA
 * length of its RETH, and its last packet ends exactly there. */
static enum resp_st
resp_check_dma_length(struct resp_ctx *c)
{
	uint32_t resid = c->qp->resp.w_resid, paylen = c->pkt->paylen;

	if (paylen > resid || ((c->mask & UROCE_F_END) && paylen != resid))
		return refuse(c, RERR_INVALID_REQUEST, UROCE_RCHK_DMA_LENGTH);
	/* WRITE with immediate consumes a receive WQE: take it before placing,
	 * so an RNR retry places the same bytes again. */
	return (c->mask & UROCE_HDR_IMMDT) ? RESP_GET_WQE : RESP_PLACE_WRITE;
}

/* IBA 9.7.4.1.4, 9.7.5.1.4: a message that consumes a receive WQE needs
 * one; without it RC answers RNR, UC drops the message (IBA 9.8.3). On UC
 * a later packet of a message whose WQE was lost is dropped too. */
static enum resp_st
resp_get_wqe(struct resp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;

	if (!take_wqe(qp, (c->mask & UROCE_F_SEND) ? c->pkt->paylen : 0)) {
		if (c->rc)
			return RESP_RNR;
		qp->resp.uc_drop = true;
		return RESP_DROP;
	}
	return (c->mask & UROCE_F_SEND) ? RESP_CHECK_RECV_LENGTH : RESP_PLACE_WRITE;
}

/* IBA 9.7.5.1: a SEND longer than its receive WQE is a local length error
 * at the responder and a NAK invalid request to the requester. */
static enum resp_st
resp_check_recv_length(struct resp_ctx *c)
{
	struct resp_state *r = &c->qp->resp;

	if (!r->has_wqe)
		return RESP_DROP; /* UC: the WQE was lost with a dropped message */
	if (c->pkt->paylen > r->wqe.length - r->offset)
		return refuse(c, RERR_LENGTH, UROCE_RCHK_RECV_LENGTH);
	return (c->mask & UROCE_HDR_IETH) ? RESP_CHECK_INVALIDATE : RESP_PLACE_SEND;
}

/*
 * IBA 10.6.7.2.2 (Send with Invalidate): only a type 2 memory window may be
 * invalidated remotely (uroce has no fast-registration MRs), one of this
 * QP's PD, bound, named by its current key. Anything else (an MR, a type 1
 * window, a stale key, another consumer's window) is an invalid request
 * (NAK invalid request, the receive WQE completes with REM_INV_REQ_ERR, as
 * rxe reports it) and changes nothing. The window is invalidated when the
 * message completes (resp_complete()), after its data is placed.
 */
static enum resp_st
resp_check_invalidate(struct resp_ctx *c)
{
	const struct uroce_pkt *pkt = c->pkt;

	if (!mw_invalidate(c->qp, uroce_ieth_rkey(pkt->bth + pkt->info->off_ieth), true))
		return refuse(c, RERR_INVALID_REQUEST, UROCE_RCHK_INVALIDATE);
	return RESP_PLACE_SEND;
}

/* IBA 9.7.4.1: SEND data lands in the receive WQE's SGEs, in order. */
static enum resp_st
resp_place_send(struct resp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	struct resp_state *r = &qp->resp;
	uint32_t paylen = c->pkt->paylen;

	if (paylen > 0) {
		int rc = sge_place(qp, wqe_pd(qp), r->wqe.sge, r->wqe.num_sge, r->offset, c->pkt,
				   &c->icrc_late);

		if (rc == -EBADMSG)
			return RESP_EXIT;
		if (rc != 0)
			return refuse(c, RERR_LOCAL_PROT, UROCE_RCHK_RECV_SGE);
	}
	QP_CNT(qp, RX_SEND_REQUESTS);
	r->offset += paylen;
	if (!(c->mask & UROCE_F_END)) {
		r->in_msg = UROCE_F_SEND;
		return RESP_ACK;
	}
	return RESP_COMPLETE;
}

/* IBA 9.7.4.1.5: WRITE data lands at the RETH's VA, packet by packet, each
 * packet checked against the MR again (it may have been deregistered). */
static enum resp_st
resp_place_write(struct resp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	struct resp_state *r = &qp->resp;
	uint32_t paylen = c->pkt->paylen;

	if (paylen > 0) {
		struct uroce_eng_mr *mr = rkey_check(qp, r->w_rkey, r->w_va, paylen,
						     UROCE_ACCESS_REMOTE_WRITE, &c->win);
		uint8_t *dst;

		if (mr == NULL)
			return refuse(c, RERR_REMOTE_ACCESS, UROCE_RCHK_WRITE_MR);
		dst = mr->addr + (r->w_va - mr->iova);
		if (c->icrc_late) {
			uint32_t crc = uroce_crc32_copy(c->pkt->icrc_seed, dst, c->pkt->payload, paylen);

			if (!qp_icrc_late_ok(qp, c->pkt, &crc))
				return RESP_EXIT;
			c->icrc_late = false;
		} else {
			uroce_copy_small(dst, c->pkt->payload, paylen);
		}
	}
	QP_CNT(qp, RX_WRITE_REQUESTS);
	r->w_va += paylen;
	r->w_resid -= paylen;
	if (!(c->mask & UROCE_F_END)) {
		r->in_msg = UROCE_F_WRITE;
		return RESP_ACK;
	}
	return RESP_COMPLETE;
}

/* IBA 9.7.4.1.3: a READ is answered from a saved resource (IBA 9.7.5.1.2),
 * queued in request order; it consumes one PSN per response packet. */
static enum resp_st
resp_exec_read(struct resp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	const uint8_t *reth = c->pkt->bth + c->pkt->info->off_reth;
	uint32_t psn = c->pkt->psn, len = uroce_reth_dma_len(reth);
	struct rd_res *res;
	int slot = alloc_res(qp);

	if (slot < 0)
		return refuse(c, RERR_RD_ATOMIC, UROCE_RCHK_RD_ATOMIC);
	res = &qp->resp.res[slot];
	res->type = RES_READ;
	res->replay = false;
	res->first_psn = psn;
	res->last_psn = uroce_psn_add(psn, uroce_num_pkts(len, qp->mtu) - 1);
	res->va = uroce_reth_va(reth);
	res->rkey = uroce_reth_rkey(reth);
	res->len = len;
	res->start_psn = psn;
	res->cur_psn = psn;
	res->cur_va = res->va;
	res->resid = len;
	res->sub_len = len;
	res->pd = resp_pd(qp);
	queue_res(qp, (uint32_t)slot);
	QP_CNT(qp, RX_READ_REQUESTS);
	rd_atomic_accepted(qp, res, uroce_psn_add(res->last_psn, 1));
	return RESP_EXIT;
}

/*
 * IBA 9.4.5, 9.7.5.1.2: an ATOMIC executes exactly once; its original value
 * is saved so a duplicate is answered without executing again.
 *
 * The word is one CPU atomic read-modify-write on the mapped memory, in host
 * order (as a ConnectX on x86 leaves it). An MR is shared: the same word may
 * be written at the same moment by another worker (an ATOMIC or a WRITE of
 * another QP), and by the owning process's CPU, whose own atomics on it
 * must see ours as indivisible (IBV_ATOMIC_GLOB, doc/conformance.md).
 * Sequentially consistent: on x86 the locked instruction is a full barrier
 * anyway, and elsewhere it keeps the atomic ordered with the WRITEs this QP
 * placed before it, as the requester sees them.
 * uroce_eng_mr_reg() refuses REMOTE_ATOMIC on an MR whose host address is
 * not 8-aligned where its iova is, so the word is naturally aligned.
 */
_Static_assert(__atomic_always_lock_free(sizeof(uint64_t), 0),
	       "an 8-byte atomic is one instruction, as the CPU's own atomics on the word");

static enum resp_st
resp_exec_atomic(struct resp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	const uint8_t *ae = c->pkt->bth + c->pkt->info->off_atmeth;
	uint64_t va = uroce_atmeth_va(ae), orig;
	struct uroce_eng_mr *mr = c->mr;
	struct rd_res *res;
	int slot = alloc_res(qp);
	uint64_t *word;

	if (slot < 0)
		return refuse(c, RERR_RD_ATOMIC, UROCE_RCHK_RD_ATOMIC);
	word = (uint64_t *)(void *)(mr->addr + (va - mr->iova));
	assert(((uintptr_t)word & 7) == 0);
	if (UROCE_OPCODE_OP(c->pkt->opcode) == UROCE_OP_COMPARE_SWAP) {
		/* On failure the builtin stores the value it found into orig. */
		orig = uroce_atmeth_compare(ae);
		__atomic_compare_exchange_n(word, &orig, uroce_atmeth_swap_add(ae), false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add(word, uroce_atmeth_swap_add(ae), __ATOMIC_SEQ_CST);
	}
	res = &qp->resp.res[slot];
	memset(res, 0, sizeof(*res));
	res->type = RES_ATOMIC;
	res->first_psn = res->last_psn = res->start_psn = res->cur_psn = c->pkt->psn;
	res->va = va;
	res->rkey = uroce_atmeth_rkey(ae);
	res->orig = orig;
	queue_res(qp, (uint32_t)slot);
	QP_CNT(qp, RX_ATOMIC_REQUESTS);
	rd_atomic_accepted(qp, res, uroce_psn_add(c->pkt->psn, 1));
	return RESP_EXIT;
}

/* A resource for an ATOMIC WRITE or FLUSH at the packet's PSN, answered by
 * one RDMA READ Response Only without payload (IBA 1.5 A19); NULL if
 * max_dest_rd_atomic is reached (then nothing was executed). */
static struct rd_res *
take_empty_res(struct resp_ctx *c, enum res_type type)
{
	const uint8_t *reth = c->pkt->bth + c->pkt->info->off_reth;
	int slot = alloc_res(c->qp);
	struct rd_res *res;

	if (slot < 0)
		return NULL;
	res = &c->qp->resp.res[slot];
	memset(res, 0, sizeof(*res));
	res->type = type;
	res->first_psn = res->last_psn = res->start_psn = res->cur_psn = c->pkt->psn;
	res->va = uroce_reth_va(reth);
	res->rkey = uroce_reth_rkey(reth);
	res->len = uroce_reth_dma_len(reth);
	queue_res(c->qp, (uint32_t)slot);
	rd_atomic_accepted(c->qp, res, uroce_psn_add(c->pkt->psn, 1));
	return res;
}

/*
 * IBA 1.5 A19: an ATOMIC WRITE stores its 8 bytes as one aligned 64-bit
 * store, after everything this QP placed before it (release ordering), and
 * executes once: a duplicate is answered from the resource (resp_duplicate()).
 * The bytes land as they came, as rxe stores them. The store is a CPU
 * atomic, so a reader on another worker or in the owning process sees the
 * old or the new word, never a mix (check_atomic_write() made it aligned).
 */
static enum resp_st
resp_exec_atomic_write(struct resp_ctx *c)
{
	const uint8_t *reth = c->pkt->bth + c->pkt->info->off_reth;
	uint64_t va = uroce_reth_va(reth), v;
	uint64_t *word;

	if (take_empty_res(c, RES_ATOMIC_WRITE) == NULL)
		return refuse(c, RERR_RD_ATOMIC, UROCE_RCHK_RD_ATOMIC);
	memcpy(&v, c->pkt->payload, sizeof(v));
	word = (uint64_t *)(void *)(c->mr->addr + (va - c->mr->iova));
	__atomic_store_n(word, v, __ATOMIC_RELEASE);
	QP_CNT(c->qp, RX_ATOMIC_WRITE_REQUESTS);
	return RESP_EXIT;
}

/*
 * IBA 1.5 A19: FLUSH GLOBAL makes every earlier write visible before the
 * response says so. This QP's earlier requests were placed by this worker
 * before this packet (in PSN order); a full fence orders those stores
 * before the response and before any later access. No pmem: PERSISTENT
 * was refused in check_flush().
 */
static enum resp_st
resp_exec_flush(struct resp_ctx *c)
{
	if (take_empty_res(c, RES_FLUSH) == NULL)
		return refuse(c, RERR_RD_ATOMIC, UROCE_RCHK_RD_ATOMIC);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	QP_CNT(c->qp, RX_FLUSH_REQUESTS);
	return RESP_EXIT;
}

/* IBA 9.7.4.1, 9.7.5.1.5: the last packet of a SEND or WRITE ends the
 * message: the MSN moves on, and a message that consumed a receive WQE
 * (SEND, WRITE with immediate) completes it. */
static enum resp_st
resp_complete(struct resp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	const struct uroce_pkt *pkt = c->pkt;
	struct resp_state *r = &qp->resp;
	struct uroce_eng_wc wc;

	if ((c->mask & UROCE_F_SEND) || (c->mask & UROCE_HDR_IMMDT)) {
		memset(&wc, 0, sizeof(wc));
		if (c->mask & UROCE_F_SEND) {
			wc.opcode = UROCE_WC_RECV;
			wc.byte_len = r->offset;
		} else {
			wc.opcode = UROCE_WC_RECV_RDMA_WITH_IMM;
			wc.byte_len = r->w_len;
		}
		if (c->mask & UROCE_HDR_IMMDT) {
			wc.wc_flags |= UROCE_WC_WITH_IMM;
			wc.imm_data = uroce_immdt_imm(pkt->bth + pkt->info->off_immdt);
		}
		/* IBA 10.6.7.2.2: checked in resp_check_invalidate(); a LOCAL_INV
		 * of another worker may have freed it meanwhile, which leaves
		 * the same result: the window is FREE. */
		if (c->mask & UROCE_HDR_IETH) {
			wc.wc_flags |= UROCE_WC_WITH_INV;
			wc.invalidated_rkey = uroce_ieth_rkey(pkt->bth + pkt->info->off_ieth);
			if (mw_invalidate(qp, wc.invalidated_rkey, false))
				QP_CNT(qp, RESP_REMOTE_INV);
		}
		recv_complete(qp, &wc);
	}
	r->in_msg = 0;
	r->msn = (r->msn + 1) & UROCE_PSN_MASK;
	return RESP_ACK;
}

/* IBA 9.7.5.1: the packet was accepted; ACK when the requester asked
 * (AckReq, IBA 9.7.2), coalesced in resp_run(). */
static enum resp_st
resp_ack(struct resp_ctx *c)
{
	struct resp_state *r = &c->qp->resp;

	r->nak_state = NAK_NONE;
	r->epsn = uroce_psn_add(c->pkt->psn, 1);
	if (c->rc && uroce_bth_ackreq(c->pkt->bth))
		queue_ack(c->qp, c->pkt->psn);
	return RESP_EXIT;
}

/* IBA 9.7.5.1.4: no receive WQE: RNR NAK with our min_rnr_timer; ePSN stays
 * so the retry is processed. */
static enum resp_st
resp_rnr(struct resp_ctx *c)
{
	QP_CNT(c->qp, RESP_RNR_NAK_SENT);
	c->qp->resp.nak_state = NAK_RNR_SENT;
	queue_nak(c->qp, uroce_aeth_rnr(c->qp->attr.min_rnr_timer), c->pkt->psn);
	return RESP_EXIT;
}

/*
 * IBA 9.7.5.1 (RC): a protocol error is NAKed with the code of resp_err_tab,
 * a receive WQE in use completes with its status, and the responder QP goes
 * to ERR (the requester does too when it gets the NAK); an rd_atomic excess
 * NAK is not fatal for the responder. IBA 9.8.3 (UC): no NAK, the message
 * is dropped and the responder resynchronises on the next FIRST/ONLY.
 */
static enum resp_st
resp_error(struct resp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	struct resp_state *r = &qp->resp;
	struct uroce_eng_wc wc;
	bool reported;

	qp->cnt[resp_err_tab[c->err].cnt]++;
	resp_reject(qp, c->chk, c->pkt, c->pkt->psn,
		    c->rc ? (uint8_t)resp_err_tab[c->err].nak : UROCE_RESP_REJECT_DROPPED);
	if (!c->rc) {
		r->in_msg = 0;
		r->offset = 0;
		r->uc_drop = true;
		return RESP_DROP;
	}
	reported = r->has_wqe && resp_err_tab[c->err].wc != UROCE_WC_SUCCESS;
	if (reported) {
		memset(&wc, 0, sizeof(wc));
		wc.opcode = UROCE_WC_RECV;
		wc.status = resp_err_tab[c->err].wc;
		recv_complete(qp, &wc);
	}
	queue_nak(qp, uroce_aeth_nak(resp_err_tab[c->err].nak), c->pkt->psn);
	/* IBA 11.6.3: with no WQE to carry it, the error is an affiliated
	 * event: invalid request, or local access violation. */
	if (c->err != RERR_RD_ATOMIC)
		qp_to_err(qp, reported ? QP_ERR_REPORTED : resp_err_tab[c->err].event);
	return RESP_EXIT;
}

static enum resp_st
resp_drop(struct resp_ctx *c)
{
	QP_CNT(c->qp, RESP_SILENT_DROP);
	return RESP_EXIT;
}

static const resp_step_fn resp_steps[RESP_NUM_STATES] = {
	[RESP_CHECK_PSN] = resp_check_psn,
	[RESP_OUT_OF_SEQ] = resp_out_of_seq,
	[RESP_DUPLICATE] = resp_duplicate,
	[RESP_CHECK_XRC] = resp_check_xrc,
	[RESP_CHECK_OP_SEQ] = resp_check_op_seq,
	[RESP_CHECK_LENGTH] = resp_check_length,
	[RESP_CHECK_QP_ACCESS] = resp_check_qp_access,
	[RESP_CHECK_RKEY] = resp_check_rkey,
	[RESP_CHECK_DMA_LENGTH] = resp_check_dma_length,
	[RESP_GET_WQE] = resp_get_wqe,
	[RESP_CHECK_RECV_LENGTH] = resp_check_recv_length,
	[RESP_CHECK_INVALIDATE] = resp_check_invalidate,
	[RESP_PLACE_SEND] = resp_place_send,
	[RESP_PLACE_WRITE] = resp_place_write,
	[RESP_EXEC_READ] = resp_exec_read,
	[RESP_EXEC_ATOMIC] = resp_exec_atomic,
	[RESP_EXEC_ATOMIC_WRITE] = resp_exec_atomic_write,
	[RESP_EXEC_FLUSH] = resp_exec_flush,
	[RESP_COMPLETE] = resp_complete,
	[RESP_ACK] = resp_ack,
	[RESP_RNR] = resp_rnr,
	[RESP_ERROR] = resp_error,
	[RESP_DROP] = resp_drop,
};

static void
write_grh(uint8_t *grh, const struct uroce_frame *f, uint32_t ib_len)
{
	/* Not memset(): here it was `rep stosl`, as was the WC's below
	 * (doc/benchmarks.md, 7 Dec 2026, fifth session). */
	uroce_zero_small(grh, UROCE_GRH_LEN);
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

/*
 * IBA 9.8.2 / 10.2.5: UD receive: Q_Key check, one packet, GRH space.
 * A UD SEND's ICRC may be late (UROCE_F_LATE_ICRC): the copy into the
 * receive buffer checks it, and every drop or error before checks it in
 * place, so a corrupted packet is counted as that and nothing else. One
 * found bad in the copy leaves the WQE it took held by the QP for the next
 * message (resp.has_wqe), uncompleted: the bytes it wrote are in a buffer
 * nobody may read before its WQE completes. An SRQ's WQE could serve
 * another QP meanwhile, so with an SRQ the ICRC is checked before one is
 * taken.
 */
static void
resp_ud(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt, const struct uroce_frame *frame)
{
	const struct uroce_opcode_info *oi = pkt->info;
	const uint8_t *deth = pkt->bth + oi->off_deth;
	bool late = pkt->icrc_late;
	struct uroce_eng_wc wc;
	uint8_t grh[UROCE_GRH_LEN];
	int rc;

	if (!(oi->mask & UROCE_HDR_DETH) || !(oi->mask & UROCE_F_SEND)) {
		if (qp_icrc_late_once(qp, pkt, &late))
			QP_CNT(qp, RX_BAD_SERVICE);
		return;
	}
	/* IBA C10-15: a Q_Key mismatch is silently dropped. */
	if (uroce_deth_qkey(deth) != qp->attr.qkey) {
		if (qp_icrc_late_once(qp, pkt, &late))
			QP_CNT(qp, RESP_UD_QKEY_ERR);
		return;
	}
	if (unlikely(late) && recv_srq(qp) != NULL && !qp_icrc_late_once(qp, pkt, &late))
		return;
	if (pkt->paylen > qp->mtu || !take_wqe(qp, UROCE_GRH_LEN + pkt->paylen)) {
		if (qp_icrc_late_once(qp, pkt, &late))
			QP_CNT(qp, RESP_UD_DROP);
		return;
	}
	uroce_zero_small(&wc, sizeof(wc));
	wc.opcode = UROCE_WC_RECV;
	wc.src_qp = uroce_deth_src_qp(deth);
	wc.wc_flags = UROCE_WC_GRH;
	if (qp->resp.wqe.length < pkt->paylen + UROCE_GRH_LEN) {
		if (!qp_icrc_late_once(qp, pkt, &late))
			return;
		QP_CNT(qp, RESP_LOCAL_LENGTH_ERROR);
		wc.status = UROCE_WC_LOC_LEN_ERR;
		recv_complete(qp, &wc);
		return;
	}
	write_grh(grh, frame, pkt->ib_len);
	rc = sge_copy(qp->eng, wqe_pd(qp), qp->resp.wqe.sge, qp->resp.wqe.num_sge, 0, grh,
		      UROCE_GRH_LEN, true);
	if (rc == 0)
		rc = sge_place(qp, wqe_pd(qp), qp->resp.wqe.sge, qp->resp.wqe.num_sge,
			       UROCE_GRH_LEN, pkt, &late);
	if (rc == -EBADMSG)
		return;
	if (rc != 0) {
		if (!qp_icrc_late_once(qp, pkt, &late))
			return;
		QP_CNT(qp, RX_LOCAL_PROT_ERR);
		wc.status = UROCE_WC_LOC_PROT_ERR;
		recv_complete(qp, &wc);
		return;
	}
	if (oi->mask & UROCE_HDR_IMMDT) {
		wc.wc_flags |= UROCE_WC_WITH_IMM;
		wc.imm_data = uroce_immdt_imm(pkt->bth + oi->off_immdt);
	}
	wc.byte_len = pkt->paylen + UROCE_GRH_LEN;
	QP_CNT(qp, RX_SEND_REQUESTS);
	recv_complete(qp, &wc);
}

/*
 * The steps that change nothing for an RC packet that is not a message's
 * first (UROCE_F_LATE_ICRC), and the placements, which check a late ICRC as
 * they copy. Before any other step the late ICRC is checked over the
 * payload where it lies: a corrupted packet never NAKs, completes, or moves
 * the responder.
 */
static const bool resp_late_ok[RESP_NUM_STATES] = {
	[RESP_CHECK_PSN] = true,
	[RESP_CHECK_XRC] = true,
	[RESP_CHECK_OP_SEQ] = true,
	[RESP_CHECK_LENGTH] = true,
	[RESP_CHECK_QP_ACCESS] = true,
	[RESP_CHECK_RKEY] = true,
	[RESP_CHECK_DMA_LENGTH] = true,
	[RESP_CHECK_RECV_LENGTH] = true,
	[RESP_PLACE_SEND] = true,
	[RESP_PLACE_WRITE] = true,
};

void
resp_rx(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt, const struct uroce_frame *frame)
{
	struct resp_ctx c;
	enum resp_st st = RESP_CHECK_PSN;

	/* Field by field: c.win is written by whoever resolves a window into
	 * c.mr, and zeroing it for every packet was `rep stosq`. */
	c.qp = qp;
	c.pkt = pkt;
	c.mask = pkt->info->mask;
	c.rc = qpt_reliable(qp->init.qp_type);
	c.err = RERR_NONE;
	c.chk = UROCE_RCHK_NONE;
	c.mr = NULL;
	c.icrc_late = pkt->icrc_late;

	if (qp->init.qp_type == UROCE_QPT_UD) {
		resp_ud(qp, pkt, frame);
		return;
	}
	/* Otherwise only RC opcodes are late (UROCE_F_LATE_ICRC), and the
	 * service check sends those to RC QPs only: resp_late_ok[] is written
	 * for them. */
	assert(!c.icrc_late || qp->init.qp_type == UROCE_QPT_RC);
	for (; unlikely(c.icrc_late) && st != RESP_EXIT; st = resp_steps[st](&c))
		if (!resp_late_ok[st] && !qp_icrc_late_once(qp, pkt, &c.icrc_late))
			return;
	while (st != RESP_EXIT)
		st = resp_steps[st](&c);
}

/* Responses of an XRC TGT QP carry the XRC prefix (IBA 1.2 XRC). */
static uint8_t
resp_svc(const struct uroce_eng_qp *qp)
{
	return qp->init.qp_type == UROCE_QPT_XRC_RECV ? UROCE_SVC_XRC : UROCE_SVC_RC;
}

static bool
send_ack(struct uroce_eng_qp *qp, uint8_t syn, uint32_t psn, uint32_t msn)
{
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	uint32_t hdr_len;
	uint8_t *buf;

	memset(&bth, 0, sizeof(bth));
	memset(&ext, 0, sizeof(ext));
	bth.opcode = UROCE_OPCODE(resp_svc(qp), UROCE_OP_ACKNOWLEDGE);
	bth.pkey = UROCE_DEFAULT_PKEY;
	bth.migreq = true;
	bth.dqpn = qp->attr.dest_qp_num;
	bth.psn = psn;
	ext.syndrome = syn;
	ext.msn = msn;
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
	struct uroce_eng_mr *mr = NULL, win;
	uint8_t *buf;
	uint8_t op;

	memset(&bth, 0, sizeof(bth));
	memset(&ext, 0, sizeof(ext));
	bth.pkey = UROCE_DEFAULT_PKEY;
	bth.migreq = true;
	bth.dqpn = qp->attr.dest_qp_num;
	bth.psn = res->cur_psn;
	ext.syndrome = UROCE_AETH_ACK_NO_CREDIT;
	ext.msn = res->msn;
	*done = true;
	if (res->type == RES_ATOMIC) {
		op = UROCE_OP_ATOMIC_ACKNOWLEDGE;
		ext.orig = res->orig;
	} else if (res->type != RES_READ) {
		/* IBA 1.5 A19: ATOMIC WRITE and FLUSH: no data. */
		op = UROCE_OP_RDMA_READ_RESPONSE_ONLY;
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
			mr = rkey_check_pd(qp, res->pd, res->rkey, res->cur_va, paylen,
					   UROCE_ACCESS_REMOTE_READ, &win);
			if (mr == NULL) {
				uint32_t i;

				QP_CNT(qp, RESP_REMOTE_ACCESS_ERRORS);
				resp_reject(qp, UROCE_RCHK_READ_MR, NULL, res->cur_psn,
					    UROCE_NAK_REMOTE_ACCESS_ERR);
				for (i = 0; i < UROCE_MAX_DEST_RD_ATOMIC; i++)
					qp->resp.res[i].queued = false;
				qp->resp.fifo_count = 0;
				qp->resp.nak_pending = true;
				qp->resp.nak_syn = uroce_aeth_nak(UROCE_NAK_REMOTE_ACCESS_ERR);
				qp->resp.nak_psn = res->cur_psn;
				qp->resp.nak_msn = res->msn;
				res->queued = false;
				qp_to_err(qp, UROCE_EVENT_QP_ACCESS_ERR);
				return true;
			}
		}
	}
	bth.opcode = UROCE_OPCODE(resp_svc(qp), op);
	buf = eng_tx_prepare(qp, &bth, &ext, paylen, &hdr_len);
	if (buf == NULL) {
		*done = false;
		return false;
	}
	if (paylen > 0) {
		const uint8_t *src = mr->addr + (res->cur_va - mr->iova);

		/* Zero-copy from the responder's MR: no WQE waits for it, only
		 * the memory (its in-flight count). */
		if (eng_zc_ok(qp, mr, paylen) &&
		    eng_tx_send_zc(qp, buf, &bth, hdr_len, src, paylen, &qp->attr.ah_attr, mr, NULL))
			buf = NULL;
		else
			memcpy(buf + hdr_len, src, paylen);
	}
	if (buf != NULL)
		eng_tx_send(qp, buf, &bth, hdr_len, paylen, &qp->attr.ah_attr);
	if (res->type != RES_READ)
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
			if (!send_ack(qp, UROCE_AETH_ACK_NO_CREDIT, r->ack_psn, r->ack_msn)) {
				*more = true;
				return sent;
			}
			QP_CNT(qp, RESP_ACKS_SENT);
			sent++;
		}
		r->ack_pending = false;
		if (!send_ack(qp, r->nak_syn, r->nak_psn, r->nak_msn)) {
			*more = true;
			return sent;
		}
		r->nak_pending = false;
		sent++;
	} else if (r->ack_pending) {
		if (!send_ack(qp, UROCE_AETH_ACK_NO_CREDIT, r->ack_psn, r->ack_msn)) {
			*more = true;
			return sent;
		}
		QP_CNT(qp, RESP_ACKS_SENT);
		r->ack_pending = false;
		sent++;
	}
	return sent;
}
