/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The completer: consumes ACKs, NAKs, READ responses and atomic ACKs for the
 * requester's WQEs (IBA 9.7.5.2), completes WQEs in order, and runs the two
 * per-QP timers: the local ACK timeout (go-back-N retransmit, IBA 9.7.6.1.3,
 * retry_cnt of 7 meaning seven retries) and the RNR wait (IBA 9.7.5.2.8,
 * rnr_retry of 7 meaning infinite).
 *
 * comp_rx() is a state machine: an enum, a table of names, one function per
 * state (comp_steps[]), each citing its IBA rule, and a loop where each step
 * returns the next state. NAK codes map to WC statuses through nak_tab.
 */

#include <errno.h>
#include <string.h>

#include "transport_internal.h"

enum comp_st {
	COMP_GET_WQE,
	COMP_CHECK_PSN,
	COMP_CHECK_ACK,
	COMP_READ,
	COMP_ATOMIC,
	COMP_EMPTY_RESP,
	COMP_COMPLETE,
	COMP_RETRY,
	COMP_RNR,
	COMP_ERROR,
	COMP_DONE,
	COMP_EXIT,
	COMP_NUM_STATES,
};

static const char *const comp_st_names[COMP_NUM_STATES] __attribute__((unused)) = {
	[COMP_GET_WQE] = "GET_WQE", [COMP_CHECK_PSN] = "CHECK_PSN",
	[COMP_CHECK_ACK] = "CHECK_ACK", [COMP_READ] = "READ", [COMP_ATOMIC] = "ATOMIC",
	[COMP_EMPTY_RESP] = "EMPTY_RESP",
	[COMP_COMPLETE] = "COMPLETE", [COMP_RETRY] = "RETRY", [COMP_RNR] = "RNR",
	[COMP_ERROR] = "ERROR", [COMP_DONE] = "DONE", [COMP_EXIT] = "EXIT",
};

/* IBA 9.7.5.2, table 44: NAK code → requester WC status and counter. */
static const struct {
	enum uroce_wc_status status;
	enum uroce_counter cnt;
} nak_tab[] = {
	[UROCE_NAK_INVALID_REQUEST] = { UROCE_WC_REM_INV_REQ_ERR,
					UROCE_CNT_REQ_REMOTE_INVALID_REQUEST },
	[UROCE_NAK_REMOTE_ACCESS_ERR] = { UROCE_WC_REM_ACCESS_ERR,
					  UROCE_CNT_REQ_REMOTE_ACCESS_ERRORS },
	[UROCE_NAK_REMOTE_OP_ERR] = { UROCE_WC_REM_OP_ERR, UROCE_CNT_REQ_REMOTE_OP_ERRORS },
	[UROCE_NAK_INVALID_RD_REQUEST] = { UROCE_WC_REM_INV_RD_REQ_ERR,
					   UROCE_CNT_REQ_REMOTE_INVALID_REQUEST },
};

uint64_t
comp_rto_us(const struct uroce_eng_qp *qp)
{
	return uroce_ack_timeout_us(qp->attr.timeout);
}

static bool
wqe_is_read(const struct swqe *w)
{
	return (w->props & (UROCE_WRP_RD_ATOMIC | UROCE_WRP_ATOMIC | UROCE_WRP_EMPTY_RESP)) ==
	       UROCE_WRP_RD_ATOMIC;
}

static bool
wqe_is_atomic(const struct swqe *w)
{
	return (w->props & UROCE_WRP_ATOMIC) != 0;
}

/* ATOMIC WRITE, FLUSH (IBA 1.5 A19): answered by an empty READ response. */
static bool
wqe_is_empty_resp(const struct swqe *w)
{
	return (w->props & UROCE_WRP_EMPTY_RESP) != 0;
}

/* A READ, atomic, ATOMIC WRITE or FLUSH: a response of its own answers it,
 * so an ACK or a later response in its place is an implied NAK. */
static bool
wqe_wants_response(const struct swqe *w)
{
	return (w->props & UROCE_WRP_RD_ATOMIC) != 0;
}

/* Off the good path: remember what the requester met, for the record of a
 * later failure (req_failed()). A few stores; no log. */
static void
req_event(struct uroce_eng_qp *qp, enum uroce_req_event_kind kind, uint32_t psn)
{
	struct uroce_eng_req_event *e = &qp->req_ev[qp->req_ev_count++ % UROCE_REQ_EVENTS];

	e->time_us = eng_now(qp->eng);
	e->kind = (uint8_t)kind;
	e->retry_left = qp->comp.retry_left;
	e->reserved = 0;
	e->psn = psn;
	e->comp_psn = qp->comp.psn;
	e->req_psn = qp->req.psn;
}

/* The oldest WQE @p w fails with @p st and the QP goes to ERR: tell the shell
 * what the requester knew. */
static void
req_failed(struct uroce_eng_qp *qp, const struct swqe *w, enum uroce_wc_status st)
{
	struct uroce_eng_req_error e;
	uint32_t i, n;

	if (qp->eng->ops.req_error == NULL)
		return;
	memset(&e, 0, sizeof(e));
	e.time_us = eng_now(qp->eng);
	e.qpn = qp->qpn;
	e.status = st;
	e.opcode = w->s.wr.opcode;
	e.length = w->length;
	e.first_psn = w->first_psn;
	e.last_psn = w->last_psn;
	e.comp_psn = qp->comp.psn;
	e.req_psn = qp->req.psn;
	e.psn_hi = qp->req.psn_hi;
	e.outstanding = qp->sq_tail - qp->sq_head;
	e.rd_outstanding = qp->req.rd_outstanding;
	e.retry_cnt = qp->attr.retry_cnt;
	e.timeout = qp->attr.timeout;
	n = UROCE_MIN(qp->req_ev_count, UROCE_REQ_EVENTS);
	for (i = 0; i < n; i++)
		e.ev[i] = qp->req_ev[(qp->req_ev_count - n + i) % UROCE_REQ_EVENTS];
	e.n_ev = (uint8_t)n;
	qp->eng->ops.req_error(qp->eng->ctx, qp, &e);
}

/* Forward progress: IBA 9.7.5.2, the retry counters restart. */
static void
progress(struct uroce_eng_qp *qp)
{
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
	qp->comp.nak_rewound = false;
	qp->comp.stall_rearms = 0;
}

static void
advance_psn(struct uroce_eng_qp *qp, uint32_t psn)
{
	if (uroce_psn_diff(psn, qp->comp.psn) > 0) {
		qp->comp.psn = psn;
		progress(qp);
	}
}

static struct swqe *
head_wqe(struct uroce_eng_qp *qp)
{
	struct swqe *w;

	if (qp->sq_head == qp->sq_tail)
		return NULL;
	w = sq_at(qp, qp->sq_head);
	return w->state == SWQE_SENT ? w : NULL;
}

/* After a change: re-arm or stop the retransmit timer and wake the requester. */
static void
comp_done(struct uroce_eng_qp *qp, bool progressed)
{
	uint64_t rto = comp_rto_us(qp);

	/* cc: the timer runs while packets await a response; a paced
	 * requester with everything sent acknowledged re-arms it at its
	 * next packet (arm_rto()). */
	if (head_wqe(qp) == NULL || qp->req.rnr_wait || rto == 0 ||
	    !uroce_psn_before(qp->comp.psn, qp->req.psn_hi))
		qp->comp.rto_deadline = 0;
	else if (progressed || qp->comp.rto_deadline == 0)
		qp->comp.rto_deadline = eng_now(qp->eng) + rto;
	eng_timer_update(qp);
	eng_req_kick(qp);
	qp_check_drained(qp);
}

/* One response packet on its way through the steps. */
struct comp_ctx {
	struct uroce_eng_qp *qp;
	const struct uroce_pkt *pkt;
	uint8_t syn;                /* AETH syndrome, when there is an AETH */
	struct swqe *w;             /* the oldest outstanding WQE */
	enum uroce_wc_status err;   /* set by a step that returns COMP_ERROR */
	uint32_t retry_psn;         /* set by a step that returns COMP_RETRY */
	bool progressed;            /* a WQE completed or the PSN moved on */
	bool implicit;              /* completing WQEs a later response ACKs */
	bool icrc_late;             /* the payload's ICRC is still to check (comp_rx()) */
};

typedef enum comp_st (*comp_step_fn)(struct comp_ctx *c);

/* What a step that found nothing new returns: finish what progressed. */
static enum comp_st
comp_nothing(const struct comp_ctx *c)
{
	return c->progressed ? COMP_DONE : COMP_EXIT;
}

/* IBA 9.7.5.2: responses are matched to the oldest outstanding WQE. */
static enum comp_st
comp_get_wqe(struct comp_ctx *c)
{
	c->w = head_wqe(c->qp);
	if (c->w != NULL)
		return COMP_CHECK_PSN;
	if (!c->progressed) {
		if (uroce_psn_before(c->pkt->psn, c->qp->req.psn_hi))
			QP_CNT(c->qp, DUPLICATE_RESPONSE);
		else
			QP_CNT(c->qp, GHOST_RESPONSE);
	}
	return comp_nothing(c);
}

/*
 * IBA 9.7.5.2.1: a response for a PSN never sent is ignored, one older than
 * the oldest outstanding WQE is a duplicate. One for a later WQE implicitly
 * acknowledges a SEND/WRITE (IBA 9.7.5.2.2) but is an implied NAK for a
 * READ or ATOMIC, whose own response was lost.
 */
static enum comp_st
comp_check_psn(struct comp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	uint32_t psn = c->pkt->psn;

	if (!uroce_psn_before(psn, qp->req.psn_hi)) {
		QP_CNT(qp, GHOST_RESPONSE);
		return comp_nothing(c);
	}
	if (uroce_psn_before(psn, c->w->first_psn)) {
		if (!c->progressed)
			QP_CNT(qp, DUPLICATE_RESPONSE);
		return comp_nothing(c);
	}
	if (uroce_psn_diff(psn, c->w->last_psn) > 0) {
		if (wqe_wants_response(c->w)) {
			QP_CNT(qp, IMPLIED_NAK_SEQ_ERR);
			c->retry_psn = qp->comp.psn;
			return COMP_RETRY;
		}
		c->implicit = true;
		return COMP_COMPLETE;
	}
	return COMP_CHECK_ACK;
}

/* IBA 9.7.5.2.3: a NAK; PSN sequence errors resend, the others end the QP
 * with the WC status of nak_tab (IBA 9.7.5.2, table 44). */
static enum comp_st
comp_nak(struct comp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	uint32_t psn = c->pkt->psn;
	uint8_t code = uroce_aeth_value(c->syn);

	if (uroce_psn_before(psn, qp->comp.psn)) {
		QP_CNT(qp, DUPLICATE_RESPONSE);
		return comp_nothing(c);
	}
	if (code == UROCE_NAK_PSN_SEQ_ERR) {
		/* Resend from the NAK'd PSN; everything before it was received. */
		QP_CNT(qp, PACKET_SEQ_ERR);
		req_event(qp, UROCE_REQ_EV_NAK_SEQ, psn);
		if (!wqe_wants_response(c->w)) {
			if (uroce_psn_diff(psn, qp->comp.psn) > 0)
				c->progressed = true;
			advance_psn(qp, psn);
		}
		c->retry_psn = psn;
		return COMP_RETRY;
	}
	if (code < UROCE_ARRAY_SIZE(nak_tab) && nak_tab[code].status != UROCE_WC_SUCCESS) {
		qp->cnt[nak_tab[code].cnt]++;
		c->err = nak_tab[code].status;
	} else {
		/* A reserved NAK code: IBA treats it as invalid request. */
		QP_CNT(qp, REQ_REMOTE_INVALID_REQUEST);
		c->err = UROCE_WC_REM_INV_REQ_ERR;
	}
	req_event(qp, UROCE_REQ_EV_NAK, psn);
	return COMP_ERROR;
}

/* IBA 9.7.5.2: the response's opcode must suit the WQE it answers: READ
 * responses a READ, an atomic ACK an ATOMIC, an ACK a SEND/WRITE (inside a
 * READ/ATOMIC an ACK is an implied NAK: the response was lost). */
static enum comp_st
comp_check_ack(struct comp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	const struct uroce_pkt *pkt = c->pkt;

	if (pkt->info->mask & UROCE_F_READ) {
		if (wqe_is_read(c->w))
			return COMP_READ;
		if (wqe_is_empty_resp(c->w))
			return COMP_EMPTY_RESP;
		QP_CNT(qp, GHOST_RESPONSE);
		return COMP_EXIT;
	}
	if (UROCE_OPCODE_OP(pkt->opcode) == UROCE_OP_ATOMIC_ACKNOWLEDGE) {
		if (wqe_is_atomic(c->w))
			return COMP_ATOMIC;
		QP_CNT(qp, GHOST_RESPONSE);
		return COMP_EXIT;
	}
	switch (uroce_aeth_type(c->syn)) {
	case UROCE_AETH_ACK:
		if (wqe_wants_response(c->w)) {
			QP_CNT(qp, IMPLIED_NAK_SEQ_ERR);
			c->retry_psn = qp->comp.psn;
			return COMP_RETRY;
		}
		if (pkt->psn == c->w->last_psn)
			return COMP_COMPLETE;
		/* Part of a multi-packet message. */
		advance_psn(qp, uroce_psn_add(pkt->psn, 1));
		c->progressed = true;
		return COMP_DONE;
	case UROCE_AETH_RNR_NAK:
		return COMP_RNR;
	case UROCE_AETH_NAK:
		return comp_nak(c);
	default:
		QP_CNT(qp, GHOST_RESPONSE);
		return comp_nothing(c);
	}
}

/*
 * IBA 9.7.5.2: READ responses arrive in PSN order; a gap is an implied NAK
 * (re-request the rest), an older one a duplicate. Each response's opcode
 * and length must fit its position in the READ; the data lands in the
 * WQE's SGEs.
 */
static enum comp_st
comp_read(struct comp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	const struct uroce_pkt *pkt = c->pkt;
	struct swqe *w = c->w;
	uint32_t psn = pkt->psn;
	bool last = psn == w->last_psn;
	uint32_t idx = (uint32_t)uroce_psn_diff(psn, w->first_psn);
	uint32_t want = last ? w->length - idx * qp->mtu : qp->mtu;
	uint32_t mask = pkt->info->mask;

	if (psn != qp->comp.psn) {
		if (uroce_psn_diff(psn, qp->comp.psn) > 0) {
			QP_CNT(qp, IMPLIED_NAK_SEQ_ERR);
			c->retry_psn = qp->comp.psn;
			return COMP_RETRY;
		}
		QP_CNT(qp, DUPLICATE_RESPONSE);
		return comp_nothing(c);
	}
	if ((last && !(mask & UROCE_F_END)) || (!last && (mask & UROCE_F_END)) ||
	    pkt->paylen != want ||
	    ((mask & UROCE_HDR_AETH) && uroce_aeth_type(c->syn) != UROCE_AETH_ACK)) {
		if (!qp_icrc_late_once(qp, pkt, &c->icrc_late))
			return comp_nothing(c);
		c->err = UROCE_WC_BAD_RESP_ERR;
		return COMP_ERROR;
	}
	if (pkt->paylen > 0) {
		int rc = sge_place(qp, qp->pd, w->s.wr.sge, w->s.wr.num_sge, idx * qp->mtu, pkt,
				   &c->icrc_late);

		if (rc == -EBADMSG)
			return comp_nothing(c);
		if (rc != 0) {
			c->err = UROCE_WC_LOC_PROT_ERR;
			return COMP_ERROR;
		}
	}
	advance_psn(qp, uroce_psn_add(psn, 1));
	c->progressed = true;
	return last ? COMP_COMPLETE : COMP_DONE;
}

/* IBA 9.7.5.2, 9.4.5: an atomic ACK for the ATOMIC's own PSN; the original
 * value lands in the local buffer in host order. */
static enum comp_st
comp_atomic(struct comp_ctx *c)
{
	const uint8_t *aa = c->pkt->bth + c->pkt->info->off_atmack;
	uint64_t orig = uroce_atmack_orig(aa);

	if (c->pkt->psn != c->w->first_psn) {
		QP_CNT(c->qp, GHOST_RESPONSE);
		return comp_nothing(c);
	}
	if (sge_copy(c->qp->eng, c->qp->pd, c->w->s.wr.sge, c->w->s.wr.num_sge, 0, &orig, 8, true) != 0) {
		c->err = UROCE_WC_LOC_PROT_ERR;
		return COMP_ERROR;
	}
	return COMP_COMPLETE;
}

/* IBA 1.5 A19: an ATOMIC WRITE or FLUSH is answered by one RDMA READ
 * Response Only with an ACK syndrome and no payload, at its own PSN; any
 * other READ response for it is a bad response. */
static enum comp_st
comp_empty_resp(struct comp_ctx *c)
{
	const struct uroce_pkt *pkt = c->pkt;

	if (pkt->psn != c->w->first_psn) {
		QP_CNT(c->qp, GHOST_RESPONSE);
		return comp_nothing(c);
	}
	if (UROCE_OPCODE_OP(pkt->opcode) != UROCE_OP_RDMA_READ_RESPONSE_ONLY || pkt->paylen != 0 ||
	    uroce_aeth_type(c->syn) != UROCE_AETH_ACK) {
		c->err = UROCE_WC_BAD_RESP_ERR;
		return COMP_ERROR;
	}
	return COMP_COMPLETE;
}

/* IBA 9.7.5.2.2, 10.8.3: the WQE completes, in order; an implicit
 * acknowledgement goes on with the next WQE. */
static enum comp_st
comp_complete(struct comp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	uint32_t last = c->w->last_psn;

	req_complete_wqe(qp, c->w, UROCE_WC_SUCCESS);
	advance_psn(qp, uroce_psn_add(last, 1));
	progress(qp);
	c->progressed = true;
	if (c->implicit) {
		c->implicit = false;
		return COMP_GET_WQE;
	}
	return COMP_DONE;
}

/* IBA 9.7.5.2.3, 9.7.6.1.3: go back to retry_psn; retry_cnt 7 is seven
 * retries, not infinite. */
static enum comp_st
comp_retry(struct comp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;

	/* Already resending from this PSN: a later response that was in flight
	 * before the resend is no new information. */
	if (qp->comp.nak_rewound && qp->comp.nak_rewind_psn == c->retry_psn) {
		req_event(qp, UROCE_REQ_EV_RETRY_SKIPPED, c->pkt->psn);
		return comp_nothing(c);
	}
	req_event(qp, UROCE_REQ_EV_IMPLIED_NAK, c->pkt->psn);
	if (qp->comp.retry_left == 0) {
		QP_CNT(qp, RETRY_EXC_ERR);
		c->err = UROCE_WC_RETRY_EXC_ERR;
		return COMP_ERROR;
	}
	qp->comp.retry_left--;
	req_rewind(qp, c->retry_psn);
	qp->comp.nak_rewound = true;
	qp->comp.nak_rewind_psn = c->retry_psn;
	qp->comp.rto_deadline = 0;
	c->progressed = true; /* restart the timer for the resend */
	return COMP_DONE;
}

/* IBA 9.7.5.2.8: an RNR NAK parks the requester for the timer it names and
 * then resends from its PSN; rnr_retry 7 is infinite. */
static enum comp_st
comp_rnr(struct comp_ctx *c)
{
	struct uroce_eng_qp *qp = c->qp;
	uint32_t psn = c->pkt->psn;

	QP_CNT(qp, RX_RNR_NAK);
	if (uroce_psn_before(psn, qp->comp.psn))
		return comp_nothing(c);
	req_event(qp, UROCE_REQ_EV_RNR, psn);
	if (!wqe_wants_response(c->w))
		advance_psn(qp, psn);
	if (qp->comp.rnr_left == 0) {
		QP_CNT(qp, RNR_NAK_RETRY_ERR);
		c->err = UROCE_WC_RNR_RETRY_EXC_ERR;
		return COMP_ERROR;
	}
	if (qp->attr.rnr_retry != 7)
		qp->comp.rnr_left--;
	/* Wait on a timer, never by spinning: the requester is parked until
	 * comp_timers() sees the deadline. */
	qp->req.rnr_wait = true;
	qp->comp.rnr_psn = psn;
	qp->comp.rnr_deadline = eng_now(qp->eng) + uroce_rnr_timer_us(uroce_aeth_value(c->syn));
	qp->comp.rto_deadline = 0;
	eng_timer_update(qp);
	return COMP_EXIT;
}

/* IBA 9.7.5.2, 10.3.1: the WQE completes in error and the QP goes to ERR,
 * flushing the rest. */
static enum comp_st
comp_error(struct comp_ctx *c)
{
	req_failed(c->qp, c->w, c->err);
	req_complete_wqe(c->qp, c->w, c->err);
	qp_to_err(c->qp, QP_ERR_REPORTED);
	return COMP_EXIT;
}

static enum comp_st
comp_done_step(struct comp_ctx *c)
{
	comp_done(c->qp, c->progressed);
	return COMP_EXIT;
}

static const comp_step_fn comp_steps[COMP_NUM_STATES] = {
	[COMP_GET_WQE] = comp_get_wqe,
	[COMP_CHECK_PSN] = comp_check_psn,
	[COMP_CHECK_ACK] = comp_check_ack,
	[COMP_READ] = comp_read,
	[COMP_ATOMIC] = comp_atomic,
	[COMP_EMPTY_RESP] = comp_empty_resp,
	[COMP_COMPLETE] = comp_complete,
	[COMP_RETRY] = comp_retry,
	[COMP_RNR] = comp_rnr,
	[COMP_ERROR] = comp_error,
	[COMP_DONE] = comp_done_step,
};

/*
 * The READ response the completer waits for: the oldest WQE is a READ whose
 * PSNs hold it, and it is the next one. For it the steps before comp_read()
 * change and count nothing, and comp_read() checks a late ICRC (uroce_pkt's
 * icrc_late) as it copies the payload or before it refuses the packet.
 */
static bool
read_in_order(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt)
{
	const struct swqe *w = head_wqe(qp);

	return w != NULL && wqe_is_read(w) && pkt->psn == qp->comp.psn &&
	       uroce_psn_before(pkt->psn, qp->req.psn_hi) &&
	       !uroce_psn_before(pkt->psn, w->first_psn) &&
	       uroce_psn_diff(pkt->psn, w->last_psn) <= 0;
}

void
comp_rx(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt)
{
	struct comp_ctx c = { .qp = qp, .pkt = pkt, .icrc_late = pkt->icrc_late };
	enum comp_st st = COMP_GET_WQE;

	/* Any other packet has its late ICRC checked before it changes anything. */
	if (unlikely(c.icrc_late) && !read_in_order(qp, pkt) &&
	    !qp_icrc_late_once(qp, pkt, &c.icrc_late))
		return;
	if (pkt->info->mask & UROCE_HDR_AETH)
		c.syn = uroce_aeth_syndrome(pkt->bth + pkt->info->off_aeth);
	while (st != COMP_EXIT)
		st = comp_steps[st](&c);
}

/*
 * A local ACK timeout found more than UROCE_HOST_STALL_US after its deadline
 * was missed by this host, not by the peer: a running engine checks its
 * timers every round, and an idle one never sleeps past a deadline, so
 * such lateness means the worker was descheduled or the process stopped.
 * IBA 9.7.6.1.3 counts a retry when the responder failed to answer within
 * the timeout; here it is not known that it did, since its answer may be
 * queued unread. At most UROCE_HOST_STALL_REARMS in a row, so that a peer
 * that is really gone still exhausts retry_cnt on a host that keeps
 * stalling.
 */
static bool
host_stalled(const struct uroce_eng_qp *qp, uint64_t now, uint64_t deadline)
{
	return now - deadline > UROCE_HOST_STALL_US &&
	       qp->comp.stall_rearms < UROCE_HOST_STALL_REARMS;
}

unsigned int
comp_timers(struct uroce_eng_qp *qp, uint64_t now)
{
	unsigned int n = 0;
	struct swqe *w;

	if (!qp_can_send(qp)) {
		qp->comp.rto_deadline = 0;
		qp->comp.rnr_deadline = 0;
		return 0;
	}
	if (qp->comp.rnr_deadline != 0 && now >= qp->comp.rnr_deadline) {
		qp->comp.rnr_deadline = 0;
		qp->req.rnr_wait = false;
		req_rewind(qp, qp->comp.rnr_psn);
		n++;
	}
	if (qp->comp.rto_deadline != 0 && now >= qp->comp.rto_deadline) {
		uint64_t deadline = qp->comp.rto_deadline;

		qp->comp.rto_deadline = 0;
		w = head_wqe(qp);
		/* cc: nothing in flight (a paced requester waits to send): no
		 * timeout; the next packet arms the timer again. */
		if (w != NULL && uroce_psn_before(qp->comp.psn, qp->req.psn_hi) &&
		    host_stalled(qp, now, deadline)) {
			/* Timers judge the peer, not the host: the engine did
			 * not run at the deadline, so the answer may be waiting
			 * in its receive queue. It gets a fresh interval, in
			 * which what already arrived is taken in first. */
			QP_CNT(qp, HOST_STALL_REARM);
			qp->comp.stall_rearms++;
			qp->comp.rto_deadline = now + comp_rto_us(qp);
		} else if (w != NULL && uroce_psn_before(qp->comp.psn, qp->req.psn_hi)) {
			/* IBA 9.7.6.1.3: local ACK timeout → go-back-N from the
			 * oldest unacknowledged PSN. */
			QP_CNT(qp, LOCAL_ACK_TIMEOUT_ERR);
			req_event(qp, UROCE_REQ_EV_TIMEOUT, qp->comp.psn);
			if (qp->comp.retry_left == 0) {
				QP_CNT(qp, RETRY_EXC_ERR);
				req_failed(qp, w, UROCE_WC_RETRY_EXC_ERR);
				req_complete_wqe(qp, w, UROCE_WC_RETRY_EXC_ERR);
				qp_to_err(qp, QP_ERR_REPORTED);
				return n + 1;
			}
			qp->comp.retry_left--;
			/* Responses still in flight from before this resend must
			 * not trigger another rewind (see COMP_RETRY). */
			qp->comp.nak_rewound = true;
			qp->comp.nak_rewind_psn = qp->comp.psn;
			req_rewind(qp, qp->comp.psn);
			qp->comp.rto_deadline = now + comp_rto_us(qp);
			n++;
		}
	}
	eng_timer_update(qp);
	return n;
}
