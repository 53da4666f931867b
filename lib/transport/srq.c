/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Receive queues: the ring of receive WQEs that a QP's own RQ and a shared
 * receive queue (SRQ, IBA 10.2.9) both use, and the SRQ object.
 */

#include <errno.h>
#include <stdlib.h>

#include "transport_internal.h"

uint32_t
pow2_ceil(uint32_t v)
{
	return v <= 1 ? 1 : 1u << (32 - __builtin_clz(v - 1));
}

int
rq_init(struct rq *rq, uint32_t size, uint32_t max_sge)
{
	rq->ring = NULL;
	/* A power of two, so the ring index is a mask, never a division. */
	rq->size = size == 0 ? 0 : pow2_ceil(size);
	rq->mask = rq->size - 1;
	rq->head = 0;
	rq->count = 0;
	rq->max_sge = max_sge;
	if (size == 0)
		return 0;
	rq->ring = calloc(rq->size, sizeof(*rq->ring));
	return rq->ring == NULL ? -ENOMEM : 0;
}

void
rq_fini(struct rq *rq)
{
	free(rq->ring);
	rq->ring = NULL;
	rq->size = 0;
	rq->count = 0;
}

struct rwqe *
rq_reserve(struct rq *rq)
{
	if (rq->count == rq->size)
		return NULL;
	return &rq->ring[(rq->head + rq->count) & rq->mask];
}

/* Check the reserved slot and post it. */
int
rq_commit(struct rq *rq)
{
	struct rwqe *w = &rq->ring[(rq->head + rq->count) & rq->mask];
	uint64_t total = 0;
	uint32_t i;

	if (w->num_sge > rq->max_sge)
		return -EINVAL;
	for (i = 0; i < w->num_sge; i++)
		total += w->sge[i].length;
	if (total > UROCE_MAX_MSG_SIZE)
		return -EMSGSIZE;
	w->length = (uint32_t)total;
	rq->count++;
	return 0;
}


struct rwqe *
rq_peek(struct rq *rq)
{
	return rq->count > 0 ? &rq->ring[rq->head] : NULL;
}

void
rq_pop(struct rq *rq)
{
	rq->head = (rq->head + 1) & rq->mask;
	rq->count--;
}

struct uroce_eng_srq *
uroce_eng_srq_create(struct uroce_eng_pd *pd, const struct uroce_eng_srq_init_attr *attr)
{
	struct uroce_eng_srq *srq;
	struct uroce_eng *eng;
	uint32_t idx = 0, i;

	if (pd == NULL || attr == NULL || attr->max_wr == 0 || attr->max_wr > UROCE_MAX_QP_WR ||
	    attr->max_sge > UROCE_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	eng = attr->eng != NULL ? attr->eng : pd->home;
	/* An XRC SRQ completes to its own CQ, which must be on its engine
	 * (one worker writes it). */
	if (eng->dev != pd->dev ||
	    (attr->xrcd != 0 && (attr->cq == NULL || attr->cq->eng != eng))) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; attr->xrcd != 0 && i < UROCE_MAX_XRC_SRQ - 1; i++) {
		uint32_t c = 1 + (eng->xsrq_next + i) % (UROCE_MAX_XRC_SRQ - 1);

		if (eng->xsrqs[c] == NULL) {
			idx = c;
			break;
		}
	}
	if (attr->xrcd != 0 && idx == 0) {
		errno = ENOMEM;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (rq_init(&srq->rq, attr->max_wr, attr->max_sge) != 0) {
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	srq->eng = eng;
	srq->pd = pd;
	srq->context = attr->srq_context;
	if (attr->xrcd != 0) {
		srq->xrcd = attr->xrcd;
		srq->cq = attr->cq;
		srq->cq->refs++;
		srq->srqn = eng->qpn_base | idx;
		eng->xsrqs[idx] = srq;
		eng->xsrq_next = idx;
	}
	__atomic_fetch_add(&pd->refs, 1, __ATOMIC_RELAXED);
	TAILQ_INSERT_TAIL(&eng->srqs, srq, link);
	return srq;
}

/* TGT QPs forget an XRC SRQ that goes away: a receive WQE taken from it for
 * a message in progress goes with it (the consumer destroyed the queue it
 * was posted to), so the rest of that message finds no WQE. */
static void
xsrq_forget(struct uroce_eng_srq *srq)
{
	struct uroce_eng *eng = srq->eng;
	uint32_t i;

	for (i = UROCE_FIRST_USER_QPN; i < UROCE_MAX_QP; i++) {
		struct uroce_eng_qp *qp = eng->qps[i];

		if (qp == NULL || qp->init.qp_type != UROCE_QPT_XRC_RECV)
			continue;
		if (qp->resp.wqe_srq == srq) {
			qp->resp.has_wqe = false;
			qp->resp.wqe_srq = NULL;
		}
		if (qp->resp.xsrq == srq)
			qp->resp.xsrq = NULL;
	}
	eng->xsrqs[srq->srqn & UROCE_QPN_INDEX_MASK] = NULL;
	srq->cq->refs--;
}

int
uroce_eng_srq_destroy(struct uroce_eng_srq *srq)
{
	if (srq == NULL)
		return -EINVAL;
	if (srq->refs != 0)
		return -EBUSY;
	if (srq->xrcd != 0)
		xsrq_forget(srq);
	__atomic_fetch_sub(&srq->pd->refs, 1, __ATOMIC_RELAXED);
	TAILQ_REMOVE(&srq->eng->srqs, srq, link);
	rq_fini(&srq->rq);
	free(srq);
	return 0;
}


void *
uroce_eng_srq_context(const struct uroce_eng_srq *srq)
{
	return srq->context;
}

uint32_t
uroce_eng_srq_num(const struct uroce_eng_srq *srq)
{
	return srq->srqn;
}

uint32_t
uroce_eng_srq_count(const struct uroce_eng_srq *srq)
{
	return srq->rq.count;
}

uint32_t
uroce_eng_srq_max_sge(const struct uroce_eng_srq *srq)
{
	return srq->rq.max_sge;
}

struct uroce_wr_recv *
uroce_eng_srq_reserve(struct uroce_eng_srq *srq)
{
	return rq_reserve(&srq->rq);
}

int
uroce_eng_srq_commit(struct uroce_eng_srq *srq)
{
	return rq_commit(&srq->rq);
}
