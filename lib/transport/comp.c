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
 * comp_rx() is a state machine: an enum, a table of names, and a loop where
 * each step returns the next state. NAK codes map to WC statuses through
 * nak_tab below.
 */

#include <string.h>

#include "transport_internal.h"

enum comp_st {
	COMP_GET_WQE,
	COMP_CHECK_PSN,
	COMP_CHECK_ACK,
	COMP_READ,
	COMP_ATOMIC,
	COMP_COMPLETE,
	COMP_RETRY,
	COMP_RNR,
	COMP_ERROR,
	COMP_DONE,
	COMP_EXIT,
};

static const char *const comp_st_names[] __attribute__((unused)) = {
	[COMP_GET_WQE] = "GET_WQE", [COMP_CHECK_PSN] = "CHECK_PSN",
	[COMP_CHECK_ACK] = "CHECK_ACK", [COMP_READ] = "READ", [COMP_ATOMIC] = "ATOMIC",
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
	return w->opcode == UROCE_WR_RDMA_READ;
}

static bool
wqe_is_atomic(const struct swqe *w)
{
	return w->opcode == UROCE_WR_ATOMIC_CMP_AND_SWP ||
	       w->opcode == UROCE_WR_ATOMIC_FETCH_AND_ADD;
}

/* Forward progress: IBA 9.7.5.2, the retry counters restart. */
static void
progress(struct uroce_eng_qp *qp)
{
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
	qp->comp.nak_rewound = false;
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

void
comp_rx(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt)
{
	const struct uroce_opcode_info *oi = pkt->info;
	enum comp_st st = COMP_GET_WQE;
	enum uroce_wc_status err = UROCE_WC_SUCCESS;
	uint32_t psn = pkt->psn, retry_psn = 0;
	uint8_t op = pkt->opcode & 0x1F, syn = 0;
	struct swqe *w = NULL;
	bool progressed = false, implicit = false;

	if (oi->mask & UROCE_HDR_AETH)
		syn = uroce_aeth_syndrome(pkt->bth + oi->off_aeth);

	for (;;) {
		switch (st) {
		case COMP_GET_WQE:
			w = head_wqe(qp);
			if (w == NULL) {
				if (progressed) {
					st = COMP_DONE;
					break;
				}
				if (uroce_psn_before(psn, qp->req.psn_hi))
					QP_CNT(qp, DUPLICATE_RESPONSE);
				else
					QP_CNT(qp, GHOST_RESPONSE);
				st = COMP_EXIT;
				break;
			}
			st = COMP_CHECK_PSN;
			break;

		case COMP_CHECK_PSN:
			/* IBA 9.7.5.2.1: a response for a PSN never sent is ignored. */
			if (!uroce_psn_before(psn, qp->req.psn_hi)) {
				QP_CNT(qp, GHOST_RESPONSE);
				st = progressed ? COMP_DONE : COMP_EXIT;
				break;
			}
			/* Older than the oldest outstanding WQE: a duplicate. */
			if (uroce_psn_before(psn, w->first_psn)) {
				if (!progressed)
					QP_CNT(qp, DUPLICATE_RESPONSE);
				st = progressed ? COMP_DONE : COMP_EXIT;
				break;
			}
			if (uroce_psn_diff(psn, w->last_psn) > 0) {
				/* The response is for a later WQE. IBA 9.7.5.2:
				 * it implicitly ACKs a SEND/WRITE; for a READ or
				 * ATOMIC it is an implied NAK (response lost). */
				if (wqe_is_read(w) || wqe_is_atomic(w)) {
					QP_CNT(qp, IMPLIED_NAK_SEQ_ERR);
					retry_psn = qp->comp.psn;
					st = COMP_RETRY;
				} else {
					implicit = true;
					st = COMP_COMPLETE;
				}
				break;
			}
			st = COMP_CHECK_ACK;
			break;

		case COMP_CHECK_ACK:
			if (oi->mask & UROCE_F_READ) {
				st = wqe_is_read(w) ? COMP_READ : COMP_EXIT;
				if (st == COMP_EXIT)
					QP_CNT(qp, GHOST_RESPONSE);
				break;
			}
			if (op == UROCE_OP_ATOMIC_ACKNOWLEDGE) {
				st = wqe_is_atomic(w) ? COMP_ATOMIC : COMP_EXIT;
				if (st == COMP_EXIT)
					QP_CNT(qp, GHOST_RESPONSE);
				break;
			}
			switch (uroce_aeth_type(syn)) {
			case UROCE_AETH_ACK:
				if (wqe_is_read(w) || wqe_is_atomic(w)) {
					/* ACK inside a READ/ATOMIC: its response
					 * was lost (implied NAK). */
					QP_CNT(qp, IMPLIED_NAK_SEQ_ERR);
					retry_psn = qp->comp.psn;
					st = COMP_RETRY;
				} else if (psn == w->last_psn) {
					st = COMP_COMPLETE;
				} else {
					/* Part of a multi-packet message. */
					advance_psn(qp, uroce_psn_add(psn, 1));
					progressed = true;
					st = COMP_DONE;
				}
				break;
			case UROCE_AETH_RNR_NAK:
				st = COMP_RNR;
				break;
			case UROCE_AETH_NAK:
				if (uroce_psn_before(psn, qp->comp.psn)) {
					QP_CNT(qp, DUPLICATE_RESPONSE);
					st = progressed ? COMP_DONE : COMP_EXIT;
					break;
				}
				if (uroce_aeth_value(syn) == UROCE_NAK_PSN_SEQ_ERR) {
					/* IBA 9.7.5.2.3: resend from the NAK'd PSN;
					 * everything before it was received. */
					QP_CNT(qp, PACKET_SEQ_ERR);
					if (!wqe_is_read(w) && !wqe_is_atomic(w)) {
						if (uroce_psn_diff(psn, qp->comp.psn) > 0)
							progressed = true;
						advance_psn(qp, psn);
					}
					retry_psn = psn;
					st = COMP_RETRY;
					break;
				}
				if (uroce_aeth_value(syn) < UROCE_ARRAY_SIZE(nak_tab) &&
				    nak_tab[uroce_aeth_value(syn)].status != UROCE_WC_SUCCESS) {
					qp->cnt[nak_tab[uroce_aeth_value(syn)].cnt]++;
					err = nak_tab[uroce_aeth_value(syn)].status;
				} else {
					/* Reserved NAK code: IBA treats as invalid. */
					QP_CNT(qp, REQ_REMOTE_INVALID_REQUEST);
					err = UROCE_WC_REM_INV_REQ_ERR;
				}
				st = COMP_ERROR;
				break;
			default:
				QP_CNT(qp, GHOST_RESPONSE);
				st = progressed ? COMP_DONE : COMP_EXIT;
				break;
			}
			break;

		case COMP_READ: {
			bool last = psn == w->last_psn;
			uint32_t idx = (uint32_t)uroce_psn_diff(psn, w->first_psn);
			uint32_t want = last ? w->length - idx * qp->mtu : qp->mtu;

			if (psn != qp->comp.psn) {
				if (uroce_psn_diff(psn, qp->comp.psn) > 0) {
					/* IBA 9.7.5.2: a gap in READ responses is
					 * an implied NAK: re-request the rest. */
					QP_CNT(qp, IMPLIED_NAK_SEQ_ERR);
					retry_psn = qp->comp.psn;
					st = COMP_RETRY;
				} else {
					QP_CNT(qp, DUPLICATE_RESPONSE);
					st = progressed ? COMP_DONE : COMP_EXIT;
				}
				break;
			}
			/* IBA 9.7.5.2: response opcode and length must fit the
			 * position in the READ. */
			if ((last && !(oi->mask & UROCE_F_END)) ||
			    (!last && (oi->mask & UROCE_F_END)) || pkt->paylen != want ||
			    ((oi->mask & UROCE_HDR_AETH) &&
			     uroce_aeth_type(syn) != UROCE_AETH_ACK)) {
				err = UROCE_WC_BAD_RESP_ERR;
				st = COMP_ERROR;
				break;
			}
			if (pkt->paylen > 0 &&
			    sge_copy(qp->eng, qp->pd, w->sge, w->num_sge, idx * qp->mtu,
				     (void *)(uintptr_t)pkt->payload, pkt->paylen, true) != 0) {
				err = UROCE_WC_LOC_PROT_ERR;
				st = COMP_ERROR;
				break;
			}
			advance_psn(qp, uroce_psn_add(psn, 1));
			progressed = true;
			st = last ? COMP_COMPLETE : COMP_DONE;
			break;
		}

		case COMP_ATOMIC: {
			uint64_t orig = uroce_atmack_orig(pkt->bth + oi->off_atmack);

			if (psn != w->first_psn) {
				QP_CNT(qp, GHOST_RESPONSE);
				st = progressed ? COMP_DONE : COMP_EXIT;
				break;
			}
			/* The original value lands in the local buffer in host order. */
			if (sge_copy(qp->eng, qp->pd, w->sge, w->num_sge, 0, &orig, 8, true) != 0) {
				err = UROCE_WC_LOC_PROT_ERR;
				st = COMP_ERROR;
				break;
			}
			st = COMP_COMPLETE;
			break;
		}

		case COMP_COMPLETE: {
			uint32_t last = w->last_psn;

			req_complete_wqe(qp, w, UROCE_WC_SUCCESS);
			advance_psn(qp, uroce_psn_add(last, 1));
			progress(qp);
			progressed = true;
			if (implicit) {
				implicit = false;
				st = COMP_GET_WQE;
			} else {
				st = COMP_DONE;
			}
			break;
		}

		case COMP_RETRY:
			/* Already resending from this PSN: a later response that
			 * was in flight before the resend is no new information. */
			if (qp->comp.nak_rewound && qp->comp.nak_rewind_psn == retry_psn) {
				st = progressed ? COMP_DONE : COMP_EXIT;
				break;
			}
			/* IBA 9.7.6.1.3: retry_cnt 7 is seven retries, not infinite. */
			if (qp->comp.retry_left == 0) {
				QP_CNT(qp, RETRY_EXC_ERR);
				err = UROCE_WC_RETRY_EXC_ERR;
				st = COMP_ERROR;
				break;
			}
			qp->comp.retry_left--;
			req_rewind(qp, retry_psn);
			qp->comp.nak_rewound = true;
			qp->comp.nak_rewind_psn = retry_psn;
			qp->comp.rto_deadline = 0;
			progressed = true; /* restart the timer for the resend */
			st = COMP_DONE;
			break;

		case COMP_RNR: {
			uint8_t code = uroce_aeth_value(syn);

			QP_CNT(qp, RX_RNR_NAK);
			if (uroce_psn_before(psn, qp->comp.psn)) {
				st = progressed ? COMP_DONE : COMP_EXIT;
				break;
			}
			if (!wqe_is_read(w) && !wqe_is_atomic(w))
				advance_psn(qp, psn);
			/* IBA 9.7.5.2.8: rnr_retry 7 is infinite. */
			if (qp->comp.rnr_left == 0) {
				QP_CNT(qp, RNR_NAK_RETRY_ERR);
				err = UROCE_WC_RNR_RETRY_EXC_ERR;
				st = COMP_ERROR;
				break;
			}
			if (qp->attr.rnr_retry != 7)
				qp->comp.rnr_left--;
			/* Wait on a timer, never by spinning: the requester is
			 * parked until comp_timers() sees the deadline. */
			qp->req.rnr_wait = true;
			qp->comp.rnr_psn = psn;
			qp->comp.rnr_deadline = eng_now(qp->eng) + uroce_rnr_timer_us(code);
			qp->comp.rto_deadline = 0;
			eng_timer_update(qp);
			st = COMP_EXIT;
			break;
		}

		case COMP_ERROR:
			/* IBA 9.7.5.2 / 10.3.1: the WQE completes in error and the
			 * QP goes to ERR, flushing the rest. */
			req_complete_wqe(qp, w, err);
			qp_to_err(qp);
			return;

		case COMP_DONE:
			comp_done(qp, progressed);
			return;

		case COMP_EXIT:
			return;
		}
	}
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
		qp->comp.rto_deadline = 0;
		w = head_wqe(qp);
		/* cc: nothing in flight (a paced requester waits to send): no
		 * timeout; the next packet arms the timer again. */
		if (w != NULL && uroce_psn_before(qp->comp.psn, qp->req.psn_hi)) {
			/* IBA 9.7.6.1.3: local ACK timeout → go-back-N from the
			 * oldest unacknowledged PSN. */
			QP_CNT(qp, LOCAL_ACK_TIMEOUT_ERR);
			if (qp->comp.retry_left == 0) {
				QP_CNT(qp, RETRY_EXC_ERR);
				req_complete_wqe(qp, w, UROCE_WC_RETRY_EXC_ERR);
				qp_to_err(qp);
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
