/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* Verbs-style posting and polling for tests, over the engine's slot API and
 * CQ sinks (eng_post.h). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eng_post.h"

static int
post_one(struct uroce_eng_qp *qp, enum uroce_qp_type t, const struct uroce_eng_send_wr *wr)
{
	struct uroce_eng_send_wqe *s;
	struct uroce_wr_send *r;
	uint64_t total = 0;
	int i, rc;

	if (wr->num_sge < 0 || wr->num_sge > UROCE_MAX_SGE || (wr->num_sge > 0 && wr->sg_list == NULL))
		return -EINVAL;
	if (t == UROCE_QPT_UD && wr->wr.ud.ah == NULL)
		return -EINVAL;
	s = uroce_eng_sq_reserve(qp);
	if (s == NULL)
		return -ENOMEM;
	r = &s->wr;
	r->wr_id = wr->wr_id;
	r->opcode = (uint32_t)wr->opcode;
	r->flags = wr->send_flags;
	r->imm = wr->opcode == UROCE_WR_SEND_WITH_INV || wr->opcode == UROCE_WR_LOCAL_INV ?
		 wr->invalidate_rkey : wr->imm_data;
	r->xrc_srqn = wr->xrc_remote_srqn;
	if (wr->opcode == UROCE_WR_BIND_MW) {
		r->rkey = wr->wr.bind_mw.rkey;
		r->imm = wr->wr.bind_mw.mr != NULL ? uroce_eng_mr_lkey(wr->wr.bind_mw.mr) : 0;
		r->remote_addr = wr->wr.bind_mw.addr;
		r->compare_add = wr->wr.bind_mw.length;
		r->swap = (uint64_t)wr->wr.bind_mw.access;
	} else if (wr->opcode == UROCE_WR_ATOMIC_WRITE) {
		r->remote_addr = wr->wr.atomic_write.remote_addr;
		r->rkey = wr->wr.atomic_write.rkey;
		memcpy(&r->compare_add, wr->wr.atomic_write.data, 8);
	} else if (wr->opcode == UROCE_WR_FLUSH) {
		r->remote_addr = wr->wr.flush.remote_addr;
		r->rkey = wr->wr.flush.rkey;
		r->compare_add = wr->wr.flush.length;
		r->swap = (uint64_t)wr->wr.flush.type | (uint64_t)wr->wr.flush.level << 4;
	} else if (uroce_wr_props(wr->opcode) & UROCE_WRP_ATOMIC) {
		r->remote_addr = wr->wr.atomic.remote_addr;
		r->rkey = wr->wr.atomic.rkey;
		r->compare_add = wr->wr.atomic.compare_add;
		r->swap = wr->wr.atomic.swap;
	} else if (t == UROCE_QPT_UD) {
		s->ah = *uroce_eng_ah_attr(wr->wr.ud.ah);
		r->remote_qpn = wr->wr.ud.remote_qpn;
		r->remote_qkey = wr->wr.ud.remote_qkey;
	} else {
		r->remote_addr = wr->wr.rdma.remote_addr;
		r->rkey = wr->wr.rdma.rkey;
	}
	if (wr->send_flags & UROCE_SEND_INLINE) {
		uint8_t *p = r->inline_data;
		struct uroce_eng_qp_init_attr init;
		struct uroce_eng_qp_attr attr;

		uroce_eng_query_qp(qp, &attr, &init);
		for (i = 0; i < wr->num_sge; i++)
			total += wr->sg_list[i].length;
		if (p == NULL || total > init.cap.max_inline_data)
			return -EINVAL;
		/* Inline SGE addresses are pointers in this process (copied now). */
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(p, (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
		r->inline_len = (uint32_t)total;
	} else {
		r->num_sge = (uint32_t)wr->num_sge;
		for (i = 0; i < wr->num_sge; i++)
			r->sge[i] = wr->sg_list[i];
	}
	rc = uroce_eng_sq_commit(qp);
	return rc == -EMSGSIZE ? -EINVAL : rc;
}

int
uroce_eng_post_send(struct uroce_eng_qp *qp, struct uroce_eng_send_wr *wr,
		    struct uroce_eng_send_wr **bad_wr)
{
	struct uroce_eng_qp_init_attr init;
	struct uroce_eng_qp_attr attr;
	int rc = 0;

	if (qp == NULL)
		return -EINVAL;
	uroce_eng_query_qp(qp, &attr, &init);
	for (; wr != NULL; wr = wr->next) {
		rc = post_one(qp, init.qp_type, wr);
		if (rc != 0) {
			if (bad_wr != NULL)
				*bad_wr = wr;
			break;
		}
	}
	return rc;
}

/* Copy @p wr into a receive slot (NULL: none free); the commit checks the
 * total length. A bad SGE list is refused before a full queue is. */
static int
recv_fill(struct uroce_wr_recv *w, const struct uroce_eng_recv_wr *wr, uint32_t max_sge)
{
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
	    (wr->num_sge > 0 && wr->sg_list == NULL))
		return -EINVAL;
	if (w == NULL)
		return -ENOMEM;
	w->wr_id = wr->wr_id;
	w->num_sge = (uint32_t)wr->num_sge;
	for (i = 0; i < wr->num_sge; i++)
		w->sge[i] = wr->sg_list[i];
	return 0;
}

int
uroce_eng_post_recv(struct uroce_eng_qp *qp, struct uroce_eng_recv_wr *wr,
		    struct uroce_eng_recv_wr **bad_wr)
{
	struct uroce_eng_qp_init_attr init;
	struct uroce_eng_qp_attr attr;
	int rc = 0;

	if (qp == NULL)
		return -EINVAL;
	uroce_eng_query_qp(qp, &attr, &init);
	for (; wr != NULL; wr = wr->next) {
		struct uroce_wr_recv *w = uroce_eng_rq_reserve(qp);

		if (init.srq != NULL || attr.qp_state == UROCE_QPS_RESET)
			rc = -EINVAL;
		else
			rc = recv_fill(w, wr, init.cap.max_recv_sge);
		if (rc == 0)
			rc = uroce_eng_rq_commit(qp);
		if (rc != 0) {
			if (bad_wr != NULL)
				*bad_wr = wr;
			return rc == -EMSGSIZE ? -EINVAL : rc;
		}
	}
	return 0;
}

int
uroce_eng_post_srq_recv(struct uroce_eng_srq *srq, struct uroce_eng_recv_wr *wr,
			struct uroce_eng_recv_wr **bad_wr)
{
	int rc = 0;

	if (srq == NULL)
		return -EINVAL;
	for (; wr != NULL; wr = wr->next) {
		struct uroce_wr_recv *w = uroce_eng_srq_reserve(srq);

		rc = recv_fill(w, wr, uroce_eng_srq_max_sge(srq));
		if (rc == 0)
			rc = uroce_eng_srq_commit(srq);
		if (rc != 0) {
			if (bad_wr != NULL)
				*bad_wr = wr;
			return rc == -EMSGSIZE ? -EINVAL : rc;
		}
	}
	return 0;
}

/* A test's CQ: the ring the sink fills and uroce_eng_poll_cq() empties. */
struct test_cq {
	struct uroce_eng_wc *ring;
	uint32_t size;     /* a power of two */
	uint32_t head;
	uint32_t count;
	bool overflow;
};

static bool
test_cq_push(void *ctx, const struct uroce_eng_wc *wc)
{
	struct test_cq *t = ctx;

	if (t->count == t->size) {
		t->overflow = true;
		return false;
	}
	t->ring[(t->head + t->count) & (t->size - 1)] = *wc;
	t->count++;
	return true;
}

static void
test_cq_release(void *ctx)
{
	struct test_cq *t = ctx;

	free(t->ring);
	free(t);
}

struct uroce_eng_cq *
uroce_eng_cq_create(struct uroce_eng *eng, int cqe, void *cq_context)
{
	struct uroce_eng_cq_sink sink = { test_cq_push, test_cq_release, NULL };
	struct uroce_eng_cq *cq;
	struct test_cq *t;
	uint32_t size = 1;

	if (eng == NULL || cqe < 1 || cqe > UROCE_MAX_CQE) {
		errno = EINVAL;
		return NULL;
	}
	while (size < (uint32_t)cqe)
		size <<= 1;
	t = calloc(1, sizeof(*t));
	if (t == NULL || (t->ring = calloc(size, sizeof(*t->ring))) == NULL) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->size = size;
	sink.ctx = t;
	cq = uroce_eng_cq_create_sink(eng, &sink, cq_context);
	if (cq == NULL)
		test_cq_release(t);
	return cq;
}

int
uroce_eng_poll_cq(struct uroce_eng_cq *cq, int num, struct uroce_eng_wc *wc)
{
	struct test_cq *t;
	int n = 0;

	if (cq == NULL || num < 0 || (num > 0 && wc == NULL))
		return -EINVAL;
	t = uroce_eng_cq_sink_ctx(cq);
	while (n < num && t->count > 0) {
		wc[n++] = t->ring[t->head];
		t->head = (t->head + 1) & (t->size - 1);
		t->count--;
	}
	if (n == 0 && t->overflow)
		return -EOVERFLOW;
	return n;
}

uint32_t
uroce_eng_cq_count(const struct uroce_eng_cq *cq)
{
	return ((const struct test_cq *)uroce_eng_cq_sink_ctx(cq))->count;
}
