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

int
rq_init(struct rq *rq, uint32_t size, uint32_t max_sge)
{
	rq->ring = NULL;
	rq->size = size;
	rq->head = 0;
	rq->count = 0;
	rq->max_sge = max_sge;
	if (size == 0)
		return 0;
	rq->ring = calloc(size, sizeof(*rq->ring));
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

int
rq_post(struct rq *rq, const struct uroce_eng_recv_wr *wr)
{
	struct rwqe *w;
	uint64_t total = 0;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge ||
	    (wr->num_sge > 0 && wr->sg_list == NULL))
		return -EINVAL;
	if (rq->count == rq->size)
		return -ENOMEM;
	w = &rq->ring[(rq->head + rq->count) % rq->size];
	w->wr_id = wr->wr_id;
	w->num_sge = (uint32_t)wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		w->sge[i] = wr->sg_list[i];
		total += wr->sg_list[i].length;
	}
	if (total > UROCE_MAX_MSG_SIZE)
		return -EINVAL;
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
	rq->head = (rq->head + 1) % rq->size;
	rq->count--;
}

struct uroce_eng_srq *
uroce_eng_srq_create(struct uroce_eng_pd *pd, const struct uroce_eng_srq_init_attr *attr)
{
	struct uroce_eng_srq *srq;

	if (pd == NULL || attr == NULL || attr->max_wr == 0 || attr->max_wr > UROCE_MAX_QP_WR ||
	    attr->max_sge > UROCE_MAX_SGE) {
		errno = EINVAL;
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
	srq->pd = pd;
	srq->context = attr->srq_context;
	pd->refs++;
	TAILQ_INSERT_TAIL(&pd->eng->srqs, srq, link);
	return srq;
}

int
uroce_eng_srq_destroy(struct uroce_eng_srq *srq)
{
	if (srq == NULL)
		return -EINVAL;
	if (srq->refs != 0)
		return -EBUSY;
	srq->pd->refs--;
	TAILQ_REMOVE(&srq->pd->eng->srqs, srq, link);
	rq_fini(&srq->rq);
	free(srq);
	return 0;
}

int
uroce_eng_post_srq_recv(struct uroce_eng_srq *srq, struct uroce_eng_recv_wr *wr,
			struct uroce_eng_recv_wr **bad_wr)
{
	int rc;

	if (srq == NULL)
		return -EINVAL;
	for (; wr != NULL; wr = wr->next) {
		rc = rq_post(&srq->rq, wr);
		if (rc != 0) {
			if (bad_wr != NULL)
				*bad_wr = wr;
			return rc;
		}
	}
	return 0;
}
