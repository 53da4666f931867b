/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Completion queues. A CQ belongs to one engine, and so to one worker: the
 * producer (this engine) and the consumer (uroce_eng_poll_cq on the same thread,
 * or the daemon copying CQEs into the client's shared ring on that thread)
 * never race, so the ring here needs no atomics. An overrun is detected,
 * counted and reported (IBA 11.4.2.1), never overwritten.
 */

#include <errno.h>
#include <stdlib.h>

#include "transport_internal.h"

struct uroce_eng_cq *
uroce_eng_cq_create(struct uroce_eng *eng, int cqe, void *cq_context)
{
	struct uroce_eng_cq *cq;

	if (eng == NULL || cqe < 1 || cqe > UROCE_MAX_CQE) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		goto nomem;
	cq->ring = calloc((size_t)cqe, sizeof(*cq->ring));
	if (cq->ring == NULL)
		goto free_cq;
	cq->eng = eng;
	cq->size = (uint32_t)cqe;
	cq->context = cq_context;
	TAILQ_INSERT_TAIL(&eng->cqs, cq, link);
	return cq;
free_cq:
	free(cq);
nomem:
	errno = ENOMEM;
	return NULL;
}

int
uroce_eng_cq_destroy(struct uroce_eng_cq *cq)
{
	if (cq == NULL)
		return -EINVAL;
	if (cq->refs != 0)
		return -EBUSY;
	TAILQ_REMOVE(&cq->eng->cqs, cq, link);
	free(cq->ring);
	free(cq);
	return 0;
}

void
cq_push(struct uroce_eng_cq *cq, const struct uroce_eng_wc *wc)
{
	if (unlikely(cq->count == cq->size)) {
		ENG_CNT(cq->eng, CQ_OVERFLOW);
		if (!cq->overflow) {
			cq->overflow = true;
			eng_async(cq->eng, UROCE_EVENT_CQ_ERR, cq);
		}
		return;
	}
	cq->ring[(cq->head + cq->count) % cq->size] = *wc;
	cq->count++;
}

int
uroce_eng_poll_cq(struct uroce_eng_cq *cq, int num, struct uroce_eng_wc *wc)
{
	int n = 0;

	if (cq == NULL || num < 0 || (num > 0 && wc == NULL))
		return -EINVAL;
	while (n < num && cq->count > 0) {
		wc[n++] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->size;
		cq->count--;
	}
	if (n == 0 && cq->overflow)
		return -EOVERFLOW;
	return n;
}

bool
uroce_eng_cq_overflowed(const struct uroce_eng_cq *cq)
{
	return cq->overflow;
}

void *
uroce_eng_cq_context(const struct uroce_eng_cq *cq)
{
	return cq->context;
}

uint32_t
uroce_eng_cq_count(const struct uroce_eng_cq *cq)
{
	return cq->count;
}
