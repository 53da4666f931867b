/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Completion queues. A CQ belongs to one engine, and so to one worker, and
 * keeps nothing: each completion goes straight to its sink, the shell (the
 * daemon writes it into the client's shared CQ ring; the tests keep a ring
 * of their own, test/common). An overrun is detected, counted and reported
 * (IBA 11.4.2.1), never overwritten.
 */

#include <errno.h>
#include <stdlib.h>

#include "transport_internal.h"

struct uroce_eng_cq *
uroce_eng_cq_create_sink(struct uroce_eng *eng, const struct uroce_eng_cq_sink *sink,
			 void *cq_context)
{
	struct uroce_eng_cq *cq;

	if (eng == NULL || sink == NULL || sink->push == NULL) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	cq->sink = *sink;
	cq->eng = eng;
	cq->context = cq_context;
	TAILQ_INSERT_TAIL(&eng->cqs, cq, link);
	return cq;
}

int
uroce_eng_cq_destroy(struct uroce_eng_cq *cq)
{
	if (cq == NULL)
		return -EINVAL;
	if (cq->refs != 0)
		return -EBUSY;
	TAILQ_REMOVE(&cq->eng->cqs, cq, link);
	if (cq->sink.release != NULL)
		cq->sink.release(cq->sink.ctx);
	free(cq);
	return 0;
}

void
cq_push(struct uroce_eng_cq *cq, const struct uroce_eng_wc *wc)
{
	if (likely(cq->sink.push(cq->sink.ctx, wc)))
		return;
	ENG_CNT(cq->eng, CQ_OVERFLOW);
	if (!cq->overflow) {
		cq->overflow = true;
		eng_async(cq->eng, UROCE_EVENT_CQ_ERR, cq);
	}
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

void *
uroce_eng_cq_sink_ctx(const struct uroce_eng_cq *cq)
{
	return cq->sink.ctx;
}
