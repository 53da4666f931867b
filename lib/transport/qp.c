/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Queue pairs: creation, the QP state machine (IBA 10.3.1, figure 124) with
 * the required and optional attributes of each transition (IBA 11.2.5.2,
 * the same table verbs uses), and flushing on entry to ERR.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport_internal.h"

/* Index of a QP type in the transition table. */
enum { T_RC = 0, T_UC = 1, T_UD = 2, T_NUM };

struct qp_trans {
	bool valid;
	int req[T_NUM];
	int opt[T_NUM];
};

#define NST (UROCE_QPS_ERR + 1)

/* Attribute sets reused by several transitions. */
#define A_INIT_UD (UROCE_QP_PKEY_INDEX | UROCE_QP_PORT | UROCE_QP_QKEY)
#define A_INIT_RC (UROCE_QP_PKEY_INDEX | UROCE_QP_PORT | UROCE_QP_ACCESS_FLAGS)
#define A_RTS_UD (UROCE_QP_CUR_STATE | UROCE_QP_QKEY)
#define A_RTS_UC (UROCE_QP_CUR_STATE | UROCE_QP_ACCESS_FLAGS | UROCE_QP_ALT_PATH | \
		  UROCE_QP_PATH_MIG_STATE)
#define A_RTS_RC (A_RTS_UC | UROCE_QP_MIN_RNR_TIMER)

/*
 * IBA 11.2.5.2 (table 91 and the QP state diagram): which transitions exist
 * and which attributes each requires or allows, per service. Every state can
 * go to RESET and to ERR with no attribute.
 */
static const struct qp_trans trans[NST][NST] = {
	[UROCE_QPS_RESET] = {
		[UROCE_QPS_RESET] = { .valid = true },
		[UROCE_QPS_INIT] = { .valid = true,
			.req = { A_INIT_RC, A_INIT_RC, A_INIT_UD } },
	},
	[UROCE_QPS_INIT] = {
		[UROCE_QPS_INIT] = { .valid = true,
			.opt = { A_INIT_RC, A_INIT_RC, A_INIT_UD } },
		[UROCE_QPS_RTR] = { .valid = true,
			.req = {
				[T_RC] = UROCE_QP_AV | UROCE_QP_PATH_MTU | UROCE_QP_DEST_QPN |
					 UROCE_QP_RQ_PSN | UROCE_QP_MAX_DEST_RD_ATOMIC |
					 UROCE_QP_MIN_RNR_TIMER,
				[T_UC] = UROCE_QP_AV | UROCE_QP_PATH_MTU | UROCE_QP_DEST_QPN |
					 UROCE_QP_RQ_PSN,
				[T_UD] = 0 },
			.opt = {
				[T_RC] = UROCE_QP_ALT_PATH | UROCE_QP_ACCESS_FLAGS |
					 UROCE_QP_PKEY_INDEX,
				[T_UC] = UROCE_QP_ALT_PATH | UROCE_QP_ACCESS_FLAGS |
					 UROCE_QP_PKEY_INDEX,
				[T_UD] = UROCE_QP_PKEY_INDEX | UROCE_QP_QKEY } },
	},
	[UROCE_QPS_RTR] = {
		[UROCE_QPS_RTS] = { .valid = true,
			.req = {
				[T_RC] = UROCE_QP_SQ_PSN | UROCE_QP_TIMEOUT | UROCE_QP_RETRY_CNT |
					 UROCE_QP_RNR_RETRY | UROCE_QP_MAX_QP_RD_ATOMIC,
				[T_UC] = UROCE_QP_SQ_PSN,
				[T_UD] = UROCE_QP_SQ_PSN },
			.opt = { A_RTS_RC, A_RTS_UC, A_RTS_UD } },
	},
	[UROCE_QPS_RTS] = {
		[UROCE_QPS_RTS] = { .valid = true, .opt = { A_RTS_RC, A_RTS_UC, A_RTS_UD } },
		[UROCE_QPS_SQD] = { .valid = true,
			.opt = { UROCE_QP_EN_SQD_ASYNC_NOTIFY, UROCE_QP_EN_SQD_ASYNC_NOTIFY,
				 UROCE_QP_EN_SQD_ASYNC_NOTIFY } },
	},
	[UROCE_QPS_SQD] = {
		[UROCE_QPS_RTS] = { .valid = true, .opt = { A_RTS_RC, A_RTS_UC, A_RTS_UD } },
		[UROCE_QPS_SQD] = { .valid = true,
			.opt = {
				[T_RC] = UROCE_QP_AV | UROCE_QP_TIMEOUT | UROCE_QP_RETRY_CNT |
					 UROCE_QP_RNR_RETRY | UROCE_QP_MAX_QP_RD_ATOMIC |
					 UROCE_QP_MAX_DEST_RD_ATOMIC | UROCE_QP_ALT_PATH |
					 UROCE_QP_ACCESS_FLAGS | UROCE_QP_PKEY_INDEX |
					 UROCE_QP_MIN_RNR_TIMER | UROCE_QP_PATH_MIG_STATE,
				[T_UC] = UROCE_QP_AV | UROCE_QP_ALT_PATH | UROCE_QP_ACCESS_FLAGS |
					 UROCE_QP_PKEY_INDEX | UROCE_QP_PATH_MIG_STATE,
				[T_UD] = UROCE_QP_PKEY_INDEX | UROCE_QP_QKEY } },
	},
	[UROCE_QPS_SQE] = {
		/* IBA 10.3.1: SQE exists for UC and UD only; RC send errors go to ERR. */
		[UROCE_QPS_RTS] = { .valid = true,
			.opt = { [T_UC] = UROCE_QP_CUR_STATE | UROCE_QP_ACCESS_FLAGS,
				 [T_UD] = UROCE_QP_CUR_STATE | UROCE_QP_QKEY } },
	},
};

static int
type_index(enum uroce_qp_type t)
{
	switch (t) {
	case UROCE_QPT_RC:
		return T_RC;
	case UROCE_QPT_UC:
		return T_UC;
	case UROCE_QPT_UD:
		return T_UD;
	case UROCE_QPT_XRC_SEND:
	case UROCE_QPT_XRC_RECV:
		return T_RC; /* IBA 1.2 XRC: RC's state machine */
	}
	return -1;
}

/* XRC (IBA 1.2): an initiator has no receive side and a target no send
 * side, so the attributes of the side a QP lacks are optional for it (as
 * the kernel's transition table and ConnectX take them). */
#define XRC_INI_OPTIONAL (UROCE_QP_ACCESS_FLAGS | UROCE_QP_MAX_DEST_RD_ATOMIC | \
			  UROCE_QP_MIN_RNR_TIMER)
#define XRC_TGT_OPTIONAL (UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY | UROCE_QP_MAX_QP_RD_ATOMIC)

/* Is cur -> next allowed for this QP type, and is @mask acceptable? */
static int
check_transition(const struct uroce_eng_qp *qp, enum uroce_qp_state cur, enum uroce_qp_state next,
		 int mask)
{
	int t = type_index(qp->init.qp_type);
	const struct qp_trans *tr;
	int req, opt, given;

	if ((unsigned int)next >= NST || t < 0)
		return -EINVAL;
	given = mask & ~UROCE_QP_STATE;
	if (next == UROCE_QPS_RESET || next == UROCE_QPS_ERR) {
		/* Any state to RESET or ERR; only CUR_STATE may come along. */
		return (given & ~UROCE_QP_CUR_STATE) ? -EINVAL : 0;
	}
	tr = &trans[cur][next];
	if (!tr->valid)
		return -EINVAL;
	if (cur == UROCE_QPS_SQE && t == T_RC)
		return -EINVAL;
	req = tr->req[t];
	opt = tr->opt[t];
	if (qp->init.qp_type == UROCE_QPT_XRC_SEND || qp->init.qp_type == UROCE_QPT_XRC_RECV) {
		int relax = qp->init.qp_type == UROCE_QPT_XRC_SEND ? XRC_INI_OPTIONAL :
								      XRC_TGT_OPTIONAL;

		opt |= req & relax;
		req &= ~relax;
	}
	if ((given & req) != req)
		return -EINVAL; /* a required attribute is missing */
	if (given & ~(req | opt))
		return -EINVAL; /* an attribute this transition does not take */
	return 0;
}

/* Range checks of every attribute in @mask (IBA 11.2.5.2 value ranges). */
static int
check_values(const struct uroce_eng_qp *qp, const struct uroce_eng_qp_attr *a, int mask)
{
	/* MW_BIND means nothing on a QP; the FLUSH types are allowed per QP
	 * (IBA 1.5 A19). */
	const int all_access = UROCE_ACCESS_FLAGS_ALL & ~UROCE_ACCESS_MW_BIND;
	uint8_t port = qp->eng->port;

	if ((mask & UROCE_QP_CUR_STATE) && a->cur_qp_state != qp->attr.qp_state)
		return -EINVAL;
	if ((mask & UROCE_QP_PATH_MTU) && uroce_mtu_bytes((uint8_t)a->path_mtu) == 0)
		return -EINVAL;
	if ((mask & UROCE_QP_RQ_PSN) && a->rq_psn > UROCE_PSN_MASK)
		return -EINVAL;
	if ((mask & UROCE_QP_SQ_PSN) && a->sq_psn > UROCE_PSN_MASK)
		return -EINVAL;
	if ((mask & UROCE_QP_DEST_QPN) && a->dest_qp_num > UROCE_QPN_MASK)
		return -EINVAL;
	if ((mask & UROCE_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & UROCE_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & UROCE_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & UROCE_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & UROCE_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > UROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & UROCE_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > UROCE_MAX_DEST_RD_ATOMIC)
		return -EINVAL;
	if ((mask & UROCE_QP_ACCESS_FLAGS) && (a->qp_access_flags & ~all_access))
		return -EINVAL;
	if ((mask & UROCE_QP_PORT) && a->port_num != port)
		return -EINVAL;
	if ((mask & UROCE_QP_PKEY_INDEX) && a->pkey_index != 0)
		return -EINVAL; /* one P_Key, the default, at index 0 */
	if ((mask & UROCE_QP_AV) &&
	    (a->ah_attr.flow_label > 0xFFFFF ||
	     (a->ah_attr.port_num != 0 && a->ah_attr.port_num != port)))
		return -EINVAL;
	if (mask & UROCE_QP_CAP)
		return -EINVAL; /* resizing queues is not supported */
	return 0;
}

static void
sq_drop_all(struct uroce_eng_qp *qp)
{
	qp->sq_retire = qp->sq_head = qp->sq_tail = 0;
	/* A new incarnation: releases of zero-copy packets sent before are
	 * no longer about any WQE of this queue (uroce_eng_zc_release()). */
	qp->zc_gen = qp->eng->zc_gen++;
	memset(&qp->req, 0, offsetof(struct req_state, on_list));
	qp->req.psn = qp->req.psn_hi = qp->attr.sq_psn;
}

/* Complete every outstanding WQE with WR_FLUSH_ERR: in ERR no WQE is
 * processed, each one completes in error (IBA 10.3.1). */
void
sq_flush(struct uroce_eng_qp *qp)
{
	while (qp->sq_head != qp->sq_tail) {
		struct swqe *w = sq_at(qp, qp->sq_head);

		req_complete_wqe(qp, w, UROCE_WC_WR_FLUSH_ERR);
	}
	qp->req.cur = qp->sq_tail;
	qp->req.off = 0;
	qp->req.rd_outstanding = 0;
	qp->req.rnr_wait = false;
}

/* Where the receive WQE in progress completes: an XRC SRQ's own CQ (IBA
 * 1.2 XRC), else the QP's receive CQ. */
struct uroce_eng_cq *
resp_wqe_cq(const struct uroce_eng_qp *qp)
{
	const struct uroce_eng_srq *srq = qp->resp.wqe_srq;

	return srq != NULL && srq->cq != NULL ? srq->cq : qp->init.recv_cq;
}

struct uroce_eng_srq *
uroce_eng_qp_xrc_srq(const struct uroce_eng_qp *qp)
{
	return qp != NULL ? qp->resp.xsrq : NULL;
}

void
qp_flush(struct uroce_eng_qp *qp)
{
	struct uroce_eng_wc wc;
	struct rwqe *r;

	sq_flush(qp);
	memset(&wc, 0, sizeof(wc));
	wc.status = UROCE_WC_WR_FLUSH_ERR;
	wc.opcode = UROCE_WC_RECV;
	wc.qp_num = qp->qpn;
	/* A receive WQE taken from the RQ/SRQ for a message in progress. */
	if (qp->resp.has_wqe) {
		wc.wr_id = qp->resp.wqe.wr_id;
		cq_push(resp_wqe_cq(qp), &wc);
		qp->resp.has_wqe = false;
	}
	/* The QP's own RQ is flushed; an SRQ's WQEs belong to the SRQ. */
	while ((r = rq_peek(&qp->rq)) != NULL) {
		wc.wr_id = r->wr_id;
		cq_push(qp->init.recv_cq, &wc);
		rq_pop(&qp->rq);
	}
}

/* Enter ERR on our own (a protocol or local error): flush, and raise the
 * affiliated event unless a completion already tells the consumer why. */
void
qp_to_err(struct uroce_eng_qp *qp, int event)
{
	if (qp->attr.qp_state == UROCE_QPS_ERR)
		return;
	qp->attr.qp_state = UROCE_QPS_ERR;
	qp->comp.rto_deadline = 0;
	qp->comp.rnr_deadline = 0;
	qp_flush(qp);
	if (event != QP_ERR_REPORTED)
		eng_async(qp->eng, (enum uroce_event_type)event, qp);
	if (qp->init.srq != NULL)
		eng_async(qp->eng, UROCE_EVENT_QP_LAST_WQE_REACHED, qp);
}

static void
qp_reset(struct uroce_eng_qp *qp)
{
	sq_drop_all(qp);
	qp->rq.head = qp->rq.count = 0;
	memset(&qp->comp, 0, offsetof(struct comp_state, on_timer_list));
	resp_reset(qp);
}

/* A QP with the next free number, or with index @p fixed (< the first user QPN). */
static struct uroce_eng_qp *
qp_create(struct uroce_eng_pd *pd, const struct uroce_eng_qp_init_attr *attr, uint32_t fixed)
{
	struct uroce_eng *eng;
	struct uroce_eng_qp *qp;
	uint32_t i, idx = fixed;
	bool tgt = attr != NULL && attr->qp_type == UROCE_QPT_XRC_RECV;
	bool own_rq;

	/* The QP lives on its CQs' engine (worker); its SRQ must be there too.
	 * An XRC TGT QP has neither CQs nor queues: it names its engine and
	 * XRC domain instead (IBA 1.2 XRC). */
	if (pd == NULL || attr == NULL || type_index(attr->qp_type) < 0 ||
	    (tgt ? attr->eng == NULL || attr->eng->dev != pd->dev || attr->xrcd == 0 ||
		   attr->send_cq != NULL || attr->recv_cq != NULL || attr->srq != NULL :
		   attr->send_cq == NULL || attr->recv_cq == NULL ||
		   attr->recv_cq->eng != attr->send_cq->eng ||
		   attr->send_cq->eng->dev != pd->dev) ||
	    attr->cap.max_send_wr > UROCE_MAX_QP_WR || attr->cap.max_recv_wr > UROCE_MAX_QP_WR ||
	    attr->cap.max_send_sge > UROCE_MAX_SGE || attr->cap.max_recv_sge > UROCE_MAX_SGE ||
	    attr->cap.max_inline_data > UROCE_MAX_INLINE ||
	    (attr->qp_type == UROCE_QPT_XRC_SEND && attr->srq != NULL) ||
	    (attr->srq != NULL && attr->srq->eng != attr->send_cq->eng)) {
		errno = EINVAL;
		return NULL;
	}
	eng = tgt ? attr->eng : attr->send_cq->eng;
	own_rq = attr->srq == NULL && attr->qp_type != UROCE_QPT_XRC_SEND && !tgt;
	if (fixed != 0 && eng->qps[fixed] != NULL) {
		errno = EBUSY;
		return NULL;
	}
	for (i = 0; fixed == 0 && i < UROCE_MAX_QP - UROCE_FIRST_USER_QPN; i++) {
		uint32_t c = UROCE_FIRST_USER_QPN +
			     (eng->qpn_next + i) % (UROCE_MAX_QP - UROCE_FIRST_USER_QPN);

		if (eng->qps[c] == NULL) {
			idx = c;
			break;
		}
	}
	if (idx == 0) {
		errno = ENOMEM;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		goto nomem;
	/* Queues are powers of two (indexes are masks, never divisions); the
	 * capacities reported back are what was allocated, as verbs allows. */
	qp->sq_size = pow2_ceil(attr->cap.max_send_wr);
	qp->sq_mask = qp->sq_size - 1;
	qp->sq = calloc(qp->sq_size, sizeof(*qp->sq));
	if (qp->sq == NULL)
		goto free_qp;
	if (attr->cap.max_inline_data > 0) {
		qp->sq_inline = calloc(qp->sq_size, UROCE_MAX_INLINE);
		if (qp->sq_inline == NULL)
			goto free_sq;
	}
	if (own_rq && rq_init(&qp->rq, attr->cap.max_recv_wr, attr->cap.max_recv_sge) != 0)
		goto free_inline;
	qp->eng = eng;
	qp->pd = pd;
	qp->init = *attr;
	qp->init.cap.max_send_wr = qp->sq_size;
	if (attr->srq == NULL)
		qp->init.cap.max_recv_wr = qp->rq.size;
	if (!own_rq && attr->srq == NULL)
		qp->init.cap.max_recv_sge = 0;
	qp->qpn = eng->qpn_base | idx;
	qp->attr.qp_state = UROCE_QPS_RESET;
	qp->attr.cap = qp->init.cap;
	qp->attr.path_mtu = UROCE_MTU_1024;
	qp->attr.port_num = eng->port;
	qp->mtu = uroce_mtu_bytes(UROCE_MTU_1024);
	if (attr->qp_type == UROCE_QPT_UD)
		qp->mtu = eng->ud_mtu;
	qp_reset(qp);
	eng->qps[idx] = qp;
	if (fixed == 0)
		eng->qpn_next = idx - UROCE_FIRST_USER_QPN + 1;
	__atomic_fetch_add(&pd->refs, 1, __ATOMIC_RELAXED);
	if (!tgt) {
		attr->send_cq->refs++;
		attr->recv_cq->refs++;
	}
	if (attr->srq != NULL)
		attr->srq->refs++;
	return qp;
free_inline:
	free(qp->sq_inline);
free_sq:
	free(qp->sq);
free_qp:
	free(qp);
nomem:
	errno = ENOMEM;
	return NULL;
}

struct uroce_eng_qp *
uroce_eng_qp_create(struct uroce_eng_pd *pd, const struct uroce_eng_qp_init_attr *attr)
{
	return qp_create(pd, attr, 0);
}

struct uroce_eng_qp *
uroce_eng_qp_create_gsi(struct uroce_eng_pd *pd, const struct uroce_eng_qp_init_attr *attr)
{
	/* IBA 9.8.3 / 13.5.1: QP1 is the GSI's, a UD QP. */
	if (attr == NULL || attr->qp_type != UROCE_QPT_UD) {
		errno = EINVAL;
		return NULL;
	}
	return qp_create(pd, attr, UROCE_GSI_QP_INDEX);
}

int
uroce_eng_qp_destroy(struct uroce_eng_qp *qp)
{
	unsigned int c;

	if (qp == NULL)
		return -EINVAL;
	eng_unlink_qp(qp);
	qp->eng->qps[qp->qpn & UROCE_QPN_INDEX_MASK] = NULL;
	/* Engine-wide totals keep what a QP counted after it is gone. */
	for (c = 0; c < UROCE_CNT_MAX; c++)
		qp->eng->cnt[c] += qp->cnt[c];
	__atomic_fetch_sub(&qp->pd->refs, 1, __ATOMIC_RELAXED);
	if (qp->init.send_cq != NULL) {
		qp->init.send_cq->refs--;
		qp->init.recv_cq->refs--;
	}
	if (qp->init.srq != NULL)
		qp->init.srq->refs--;
	rq_fini(&qp->rq);
	free(qp->sq_inline);
	free(qp->sq);
	free(qp);
	return 0;
}

uint32_t
uroce_eng_qp_num(const struct uroce_eng_qp *qp)
{
	return qp->qpn;
}

struct uroce_eng_qp *
uroce_eng_qp(const struct uroce_eng *eng, uint32_t qpn)
{
	return eng_qp_of(eng, qpn);
}

void *
uroce_eng_qp_context(const struct uroce_eng_qp *qp)
{
	return qp->init.qp_context;
}

enum uroce_qp_state
uroce_eng_qp_state(const struct uroce_eng_qp *qp)
{
	return qp->attr.qp_state;
}

uint64_t
uroce_eng_qp_counter(const struct uroce_eng_qp *qp, enum uroce_counter c)
{
	return (unsigned int)c < UROCE_CNT_MAX ? qp->cnt[c] : 0;
}

int
uroce_eng_modify_qp(struct uroce_eng_qp *qp, const struct uroce_eng_qp_attr *a, int mask)
{
	enum uroce_qp_state cur, next;
	int rc;

	if (qp == NULL || a == NULL)
		return -EINVAL;
	cur = qp->attr.qp_state;
	next = (mask & UROCE_QP_STATE) ? a->qp_state : cur;
	rc = check_transition(qp, cur, next, mask);
	if (rc != 0)
		return rc;
	rc = check_values(qp, a, mask);
	if (rc != 0)
		return rc;

	/* Everything is valid: apply. */
	if (mask & UROCE_QP_ACCESS_FLAGS)
		qp->attr.qp_access_flags = a->qp_access_flags;
	if (mask & UROCE_QP_QKEY)
		qp->attr.qkey = a->qkey;
	if (mask & UROCE_QP_AV)
		qp->attr.ah_attr = a->ah_attr;
	if (mask & UROCE_QP_PATH_MTU) {
		qp->attr.path_mtu = a->path_mtu;
		qp->mtu = uroce_mtu_bytes((uint8_t)a->path_mtu);
	}
	if (mask & UROCE_QP_TIMEOUT)
		qp->attr.timeout = a->timeout;
	if (mask & UROCE_QP_RETRY_CNT) {
		qp->attr.retry_cnt = a->retry_cnt;
		qp->comp.retry_left = a->retry_cnt;
	}
	if (mask & UROCE_QP_RNR_RETRY) {
		qp->attr.rnr_retry = a->rnr_retry;
		qp->comp.rnr_left = a->rnr_retry;
	}
	if (mask & UROCE_QP_RQ_PSN) {
		qp->attr.rq_psn = a->rq_psn;
		qp->resp.epsn = a->rq_psn;
	}
	if (mask & UROCE_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = a->max_rd_atomic;
	if (mask & UROCE_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = a->min_rnr_timer;
	if (mask & UROCE_QP_SQ_PSN) {
		qp->attr.sq_psn = a->sq_psn;
		qp->req.psn = qp->req.psn_hi = a->sq_psn;
		qp->comp.psn = a->sq_psn;
	}
	if (mask & UROCE_QP_MAX_DEST_RD_ATOMIC)
		qp->attr.max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & UROCE_QP_DEST_QPN)
		qp->attr.dest_qp_num = a->dest_qp_num;
	if (mask & UROCE_QP_PKEY_INDEX)
		qp->attr.pkey_index = a->pkey_index;
	if (mask & UROCE_QP_PORT)
		qp->attr.port_num = a->port_num;

	if (next == cur)
		return 0;
	if (next == UROCE_QPS_RESET) {
		eng_unlink_qp(qp);
		qp->attr.qp_state = UROCE_QPS_RESET;
		qp_reset(qp);
		return 0;
	}
	if (next == UROCE_QPS_ERR) {
		/* Entered by the user: flush; no error event, but an SRQ QP
		 * takes no more WQEs from its SRQ (IBA 11.6.3). */
		qp->attr.qp_state = UROCE_QPS_ERR;
		qp->comp.rto_deadline = 0;
		qp->comp.rnr_deadline = 0;
		qp_flush(qp);
		if (qp->init.srq != NULL && cur != UROCE_QPS_ERR)
			eng_async(qp->eng, UROCE_EVENT_QP_LAST_WQE_REACHED, qp);
		return 0;
	}
	qp->attr.qp_state = next;
	qp->attr.sq_draining = (next == UROCE_QPS_SQD);
	if (next == UROCE_QPS_RTS)
		eng_req_kick(qp);
	if (next == UROCE_QPS_SQD) {
		qp->sqd_notify = (mask & UROCE_QP_EN_SQD_ASYNC_NOTIFY) != 0;
		qp_check_drained(qp);
	}
	return 0;
}

/* IBA 10.3.1 (SQD): once every WQE started before SQD has completed, the
 * SQ is drained; raise SQ_DRAINED once if asked to. */
void
qp_check_drained(struct uroce_eng_qp *qp)
{
	struct swqe *w;

	if (qp->attr.qp_state != UROCE_QPS_SQD || !qp->sqd_notify)
		return;
	w = qp->sq_head != qp->sq_tail ? sq_at(qp, qp->sq_head) : NULL;
	if (w != NULL && w->state == SWQE_SENT)
		return;
	qp->sqd_notify = false;
	eng_async(qp->eng, UROCE_EVENT_SQ_DRAINED, qp);
}

int
uroce_eng_query_qp(const struct uroce_eng_qp *qp, struct uroce_eng_qp_attr *attr,
	       struct uroce_eng_qp_init_attr *init)
{
	if (qp == NULL || attr == NULL)
		return -EINVAL;
	*attr = qp->attr;
	attr->cur_qp_state = qp->attr.qp_state;
	attr->sq_draining = qp->attr.qp_state == UROCE_QPS_SQD && qp->sq_head != qp->sq_tail &&
			    sq_at(qp, qp->sq_head)->state == SWQE_SENT;
	if (init != NULL)
		*init = qp->init;
	return 0;
}

/* IBA 10.8.3.2: a receive posted in ERR completes at once with a flush error. */
static void
recv_flushed(struct uroce_eng_qp *qp, uint64_t wr_id)
{
	struct uroce_eng_wc wc = {
		.wr_id = wr_id, .status = UROCE_WC_WR_FLUSH_ERR,
		.opcode = UROCE_WC_RECV, .qp_num = qp->qpn,
	};

	cq_push(qp->init.recv_cq, &wc);
}

struct uroce_wr_recv *
uroce_eng_rq_reserve(struct uroce_eng_qp *qp)
{
	if (qp->init.srq != NULL || qp->rq.size == 0)
		return NULL;
	return rq_reserve(&qp->rq);
}

uint32_t
uroce_eng_rq_held(const struct uroce_eng_qp *qp)
{
	return qp->rq.count + (qp->resp.has_wqe && qp->resp.wqe_srq == NULL ? 1u : 0u);
}

int
uroce_eng_rq_commit(struct uroce_eng_qp *qp)
{
	struct rwqe *w = &qp->rq.ring[(qp->rq.head + qp->rq.count) & qp->rq.mask];

	if (qp->attr.qp_state == UROCE_QPS_RESET)
		return -EINVAL;
	if (qp->attr.qp_state == UROCE_QPS_ERR) {
		if (w->num_sge > qp->rq.max_sge)
			return -EINVAL;
		recv_flushed(qp, w->wr_id);
		return 0;
	}
	return rq_commit(&qp->rq);
}

