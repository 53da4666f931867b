/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Completion queues. A CQ belongs to one engine, and so to one worker: the
 * producer (this engine) and the consumer (uroce_eng_poll_cq() on the same
 * thread) never race, so the ring here needs no atomics. A CQ with a sink
 * keeps nothing: each completion goes straight to the shell (the daemon
 * writes it into the client's shared CQ ring). An overrun is detected,
 * counted and reported (IBA 11.4.2.1), never overwritten.
 */

#include <errno.h>
#include <stdlib.h>

#include "transport_internal.h"

static struct uroce_eng_cq *
cq_new(struct uroce_eng *eng, uint32_t size, const struct uroce_eng_cq_sink *sink,
       void *cq_context)
{
	struct uroce_eng_cq *cq = calloc(1, sizeof(*cq));

	if (cq == NULL)
		goto nomem;
	if (sink != NULL) {
		cq->sink = *sink;
	} else {
		cq->ring = calloc(size, sizeof(*cq->ring));
		if (cq->ring == NULL)
			goto free_cq;
	}
	cq->eng = eng;
	cq->size = size;
	cq->context = cq_context;
	TAILQ_INSERT_TAIL(&eng->cqs, cq, link);
	return cq;
free_cq:
	free(cq);
nomem:
	errno = ENOMEM;
	return NULL;
}

struct uroce_eng_cq *
uroce_eng_cq_create(struct uroce_eng *eng, int cqe, void *cq_context)
{
	if (eng == NULL || cqe < 1 || cqe > UROCE_MAX_CQE) {
		errno = EINVAL;
		return NULL;
	}
	/* A power of two, so the ring index is a mask, never a division. */
	return cq_new(eng, pow2_ceil((uint32_t)cqe), NULL, cq_context);
}

struct uroce_eng_cq *
uroce_eng_cq_create_sink(struct uroce_eng *eng, const struct uroce_eng_cq_sink *sink,
			 void *cq_context)
{
	if (eng == NULL || sink == NULL || sink->push == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return cq_new(eng, 0, sink, cq_context);
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

static void
cq_overrun(struct uroce_eng_cq *cq)
{
	ENG_CNT(cq->eng, CQ_OVERFLOW);
	if (!cq->overflow) {
		cq->overflow = true;
		eng_async(cq->eng, UROCE_EVENT_CQ_ERR, cq);
	}
}

void
cq_push(struct uroce_eng_cq *cq, const struct uroce_eng_wc *wc)
{
	if (cq->ring == NULL) {
		if (unlikely(!cq->sink.push(cq->sink.ctx, wc)))
			cq_overrun(cq);
		return;
	}
	if (unlikely(cq->count == cq->size)) {
		cq_overrun(cq);
		return;
	}
	cq->ring[(cq->head + cq->count) & (cq->size - 1)] = *wc;
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
		cq->head = (cq->head + 1) & (cq->size - 1);
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
