/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* The load generator's worker side (gen_internal.h): posting, completions,
   and the steps the control thread asks for (CMD_GEN). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uroce_common.h"
#include "uroce_loadgen.h"
#include "uroce_shm_gen.h"

#include "gen_internal.h"
#include "worker.h"

/* ------------------------------------------------------------------------ */
/* Worker side                                                               */
/* ------------------------------------------------------------------------ */

/* The MR's iova space is the daemon's own addresses. */

static void
gen_fail(struct dgen *g, uint32_t status, uint32_t qpn, uint32_t op)
{
	if (g->failed)
		return;
	g->failed = true;
	g->flush_all = true;
	g->st.err_status = status;
	g->st.err_qpn = qpn;
	g->st.err_op = op;
}

/* The checks of a successful completion (with verify). */
static void
init_verify(struct dgen *g, uint32_t qi, uint64_t k, const struct gen_slot *sl)
{
	uint64_t v;

	switch (sl->op) {
	case UROCE_LG_READ:
		/* The target's window holds the pattern, and so does our mirror
		 * of it: the bytes READ must be those at the same offset. */
		if (memcmp(land_of(g, qi, k), mirror_of(g, qi) + sl->off, sl->size) != 0)
			g->st.verify_bad++;
		break;
	case UROCE_LG_FADD:
	case UROCE_LG_CSWAP:
		/* The original value, host order (as verbs returns it). */
		memcpy(&v, ares_of(g, qi, k), sizeof(v));
		if (v != sl->expect)
			g->st.verify_bad++;
		break;
	default:
		break; /* WRITE and SEND are the target's to check */
	}
}

/* Completions of an initiator, on its worker, in completion order. */
static bool
init_push(void *ctx, const struct uroce_eng_wc *wc)
{
	struct dgen *g = ctx;
	uint32_t qi = (uint32_t)(wc->wr_id >> 32), seq = (uint32_t)wc->wr_id;
	const struct gen_slot *sl;
	struct gen_qp *q;
	uint64_t k;

	if (unlikely(qi >= g->n_qps)) {
		g->st.order_bad++; /* no WR of ours: cannot happen */
		return true;
	}
	q = &g->qps[qi];
	k = q->done;
	/* IBA 10.8.3: an RC send queue completes in the order it was posted. */
	if (unlikely(seq != (uint32_t)k))
		g->st.order_bad++;
	sl = &q->slots[k & (g->slots - 1)];
	q->done++;
	g->outstanding--;
	if (likely(wc->status == UROCE_WC_SUCCESS)) {
		g->st.completed++;
		g->st.bytes += sl->size;
		g->st.op_msgs[sl->op]++;
		if (g->run.verify)
			init_verify(g, qi, k, sl);
		return true;
	}
	g->st.errors++;
	q->dead = true;
	gen_fail(g, (uint32_t)wc->status, wc->qp_num, sl->op);
	return true;
}

/* Completions of a target: its receives. */
static bool
target_push(void *ctx, const struct uroce_eng_wc *wc)
{
	struct dgen *g = ctx;
	uint32_t qi = (uint32_t)(wc->wr_id >> 32), seq = (uint32_t)wc->wr_id;
	struct gen_qp *q;

	if (unlikely(qi >= g->n_qps)) {
		g->st.order_bad++;
		return true;
	}
	q = &g->qps[qi];
	/* IBA 10.8.3: receive WQEs complete in the order they were posted. */
	if (unlikely(seq != (uint32_t)q->done))
		g->st.order_bad++;
	q->done++;
	g->recv_dirty = true;
	if (likely(wc->status == UROCE_WC_SUCCESS)) {
		g->st.recv++;
		g->st.completed++;
		g->st.recv_bytes += wc->byte_len;
		g->st.bytes += wc->byte_len;
		g->st.op_msgs[UROCE_LG_SEND]++;
		if (g->flags & UROCE_SHM_GEN_F_VERIFY) {
			uint32_t len = UROCE_MIN(wc->byte_len, g->max_size);

			if (uroce_lg_send_check(recv_of(g, qi, seq), q->qpn, len, NULL) != len ||
			    len != wc->byte_len)
				g->st.verify_bad++;
		}
		return true;
	}
	g->st.errors++;
	q->dead = true;
	if (g->st.err_status == 0) {
		g->st.err_status = (uint32_t)wc->status;
		g->st.err_qpn = wc->qp_num;
		g->st.err_op = UROCE_LG_SEND;
	}
	return true;
}

/* Post the next WR of initiator QP @p qi into its engine slot. @return 0 or -errno. */
static int
init_post_one(struct dgen *g, struct gen_qp *q, uint32_t qi)
{
	struct uroce_eng_send_wqe *slot = uroce_eng_sq_reserve(q->qp);
	const struct uroce_lg_mix_entry *m;
	struct uroce_wr_send *e;
	uint64_t k = q->posted;
	struct gen_slot *sl;
	uint8_t *buf;
	int rc;

	if (slot == NULL)
		return -ENOSPC;
	e = &slot->wr;
	m = &g->run.mix.e[g->run.table[q->tpos]];
	q->tpos = (q->tpos + 1) & (UROCE_LG_MIX_TABLE - 1);
	sl = &q->slots[k & (g->slots - 1)];
	sl->op = m->op;
	sl->size = m->size;
	e->wr_id = (uint64_t)qi << 32 | (uint32_t)k;
	e->flags = UROCE_SEND_SIGNALED;
	e->num_sge = 1;
	e->sge[0].lkey = g->lkey;
	e->sge[0].length = m->size;
	switch (m->op) {
	case UROCE_LG_WRITE:
	case UROCE_LG_READ:
		sl->off = uroce_lg_gen_offset(k, m->size, g->win_len);
		e->remote_addr = q->rwin + sl->off;
		e->rkey = g->peer_rkey;
		if (m->op == UROCE_LG_WRITE) {
			e->opcode = UROCE_WR_RDMA_WRITE;
			buf = mirror_of(g, qi) + sl->off;
		} else {
			e->opcode = UROCE_WR_RDMA_READ;
			buf = land_of(g, qi, k);
		}
		break;
	case UROCE_LG_SEND:
		e->opcode = UROCE_WR_SEND;
		if (g->run.verify) {
			/* The target checks the SEND pattern of its QPN; the tag is
			 * the message's sequence. This fill is verify's cost. */
			buf = send_of(g, qi, k);
			uroce_lg_send_fill(buf, q->peer_qpn, (uint32_t)k, m->size);
		} else {
			sl->off = uroce_lg_gen_offset(k, m->size, g->win_len);
			buf = mirror_of(g, qi) + sl->off;
		}
		break;
	default:
		e->opcode = m->op == UROCE_LG_CSWAP ? UROCE_WR_ATOMIC_CMP_AND_SWP :
						     UROCE_WR_ATOMIC_FETCH_AND_ADD;
		e->remote_addr = q->ratomic;
		e->rkey = g->peer_rkey;
		uroce_lg_atomic_next(&q->am, m->op, &e->compare_add, &e->swap, &sl->expect);
		buf = ares_of(g, qi, k);
		break;
	}
	e->sge[0].addr = iova_of(buf);
	/* Counted before the commit: a QP in ERR completes the WR (a flush)
	 * inside it, and the completion must find it outstanding. */
	q->posted++;
	g->outstanding++;
	rc = uroce_eng_sq_commit(q->qp);
	if (unlikely(rc != 0)) {
		q->posted--;
		g->outstanding--;
		q->dead = true;
		gen_fail(g, rc == -EMSGSIZE ? UROCE_WC_LOC_LEN_ERR : UROCE_WC_LOC_QP_OP_ERR,
			 q->qpn, m->op);
		return rc;
	}
	return 0;
}

/* Every QP of @p g to ERR: what they hold completes with flush errors. */
static void
gen_flush(struct dgen *g)
{
	struct uroce_eng_qp_attr a;
	uint32_t i;

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_ERR;
	for (i = 0; i < g->n_qps; i++) {
		g->qps[i].dead = true;
		if (g->qps[i].qp != NULL && uroce_eng_qp_state(g->qps[i].qp) != UROCE_QPS_ERR)
			uroce_eng_modify_qp(g->qps[i].qp, &a, UROCE_QP_STATE);
	}
}

/* How many messages the rate limit lets go now (@p want at most). */
static uint64_t
rate_allow(struct dgen *g, uint64_t now, uint64_t want)
{
	uint64_t dt, cap;

	if (g->run.rate == 0)
		return want;
	dt = now > g->t_last ? now - g->t_last : 0;
	g->t_last = now;
	if (dt > 1000000)
		dt = 1000000; /* a second asleep earns no more than the burst below */
	g->tokens += dt * g->run.rate;
	/* A burst of at most a millisecond's worth (one message at least). */
	cap = UROCE_MAX(g->run.rate / 1000, 1) * GEN_TOKEN;
	if (g->tokens > cap)
		g->tokens = cap;
	return UROCE_MIN(want, g->tokens / GEN_TOKEN);
}

static unsigned int
init_poll(struct dworker *w, struct dgen *g, unsigned int budget)
{
	uint64_t now = worker_now_us(w), allow;
	unsigned int n = 0, tries;

	if (g->flush_all) {
		g->flush_all = false;
		gen_flush(g);
	}
	if (g->state == UROCE_SHM_GEN_RUNNING) {
		if (g->failed || now >= g->t_end ||
		    (g->run.count != 0 && g->posted_total >= g->run.count)) {
			g->state = UROCE_SHM_GEN_DRAINING;
		} else if (g->outstanding < (uint64_t)g->n_qps * g->run.window) {
			allow = budget;
			if (g->run.count != 0)
				allow = UROCE_MIN(allow, g->run.count - g->posted_total);
			allow = rate_allow(g, now, allow);
			for (tries = 0; tries < g->n_qps && n < allow && !g->failed; tries++) {
				struct gen_qp *q = &g->qps[g->rr];
				uint32_t qi = g->rr;

				g->rr = g->rr + 1 == g->n_qps ? 0 : g->rr + 1;
				while (n < allow && !q->dead && q->posted - q->done < g->run.window &&
				       init_post_one(g, q, qi) == 0)
					n++;
			}
			g->posted_total += n;
			g->st.posted += n;
			if (g->run.rate != 0)
				g->tokens -= n * GEN_TOKEN;
		}
	}
	if (g->state == UROCE_SHM_GEN_DRAINING && g->outstanding == 0) {
		g->state = g->failed ? UROCE_SHM_GEN_FAILED : UROCE_SHM_GEN_DONE;
		g->t_done = now;
	}
	return n;
}

static unsigned int
target_poll(struct dgen *g, unsigned int budget)
{
	unsigned int n = 0, tries;

	if (!g->recv_dirty || !(g->flags & UROCE_SHM_GEN_F_SEND))
		return 0;
	for (tries = 0; tries < g->n_qps && n < budget; tries++) {
		struct gen_qp *q = &g->qps[g->rr];
		uint32_t qi = g->rr;

		g->rr = g->rr + 1 == g->n_qps ? 0 : g->rr + 1;
		while (n < budget && !q->dead && q->live &&
		       q->posted - q->done < g->depth) {
			struct uroce_wr_recv *e = uroce_eng_rq_reserve(q->qp);
			uint64_t k = q->posted;

			if (e == NULL)
				break;
			e->wr_id = (uint64_t)qi << 32 | (uint32_t)k;
			e->num_sge = 1;
			e->sge[0].addr = iova_of(recv_of(g, qi, k));
			e->sge[0].length = g->max_size;
			e->sge[0].lkey = g->lkey;
			q->posted++;
			g->st.posted++;
			if (uroce_eng_rq_commit(q->qp) != 0) {
				q->posted--;
				g->st.posted--;
				q->dead = true;
				break;
			}
			n++;
		}
	}
	/* A whole pass that found nothing to post: clean until a receive completes. */
	if (n < budget)
		g->recv_dirty = false;
	return n;
}

unsigned int
gen_poll(struct dworker *w)
{
	unsigned int work = 0, post = GEN_POST_BUDGET, recv = GEN_RECV_BUDGET, n;
	struct dgen *g;

	for (g = w->gens; g != NULL; g = g->wnext) {
		if (g->role == UROCE_SHM_GEN_INITIATOR) {
			if (g->state != UROCE_SHM_GEN_RUNNING && g->state != UROCE_SHM_GEN_DRAINING &&
			    !g->flush_all)
				continue;
			n = init_poll(w, g, post);
			post -= n;
		} else {
			if (g->state != UROCE_SHM_GEN_READY)
				continue;
			n = target_poll(g, recv);
			recv -= n;
		}
		work += n;
	}
	return work;
}

uint64_t
gen_deadline(struct dworker *w)
{
	uint64_t t = UINT64_MAX, at;
	struct dgen *g;

	for (g = w->gens; g != NULL; g = g->wnext) {
		if (g->role != UROCE_SHM_GEN_INITIATOR || g->state != UROCE_SHM_GEN_RUNNING)
			continue;
		if (g->t_end < t)
			t = g->t_end;
		/* Waiting for tokens, with room in the window: the next one's time. */
		if (g->run.rate != 0 && g->tokens < GEN_TOKEN &&
		    g->outstanding < (uint64_t)g->n_qps * g->run.window) {
			at = g->t_last + (GEN_TOKEN - g->tokens + g->run.rate - 1) / g->run.rate;
			if (at < t)
				t = at;
		}
	}
	return t;
}

static int
w_create(struct dworker *w, struct dgen *g)
{
	struct uroce_eng_cq_sink sink = {
		.push = g->role == UROCE_SHM_GEN_INITIATOR ? init_push : target_push,
		.ctx = g,
	};
	struct uroce_eng_qp_init_attr ia;
	struct uroce_eng_qp_attr a;
	uint32_t i;
	int rc;

	/* No CQ context: the worker's CQ_ERR handler skips it (never raised:
	 * the push always takes the completion). */
	g->cq = uroce_eng_cq_create_sink(w->eng, &sink, NULL);
	if (g->cq == NULL)
		return errno ? -errno : -ENOMEM;
	memset(&ia, 0, sizeof(ia));
	ia.qp_context = NULL; /* not a client's: see the file comment */
	ia.send_cq = g->cq;
	ia.recv_cq = g->cq;
	ia.qp_type = UROCE_QPT_RC;
	ia.sq_sig_all = true;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	if (g->role == UROCE_SHM_GEN_INITIATOR) {
		ia.cap.max_send_wr = g->slots;
		ia.cap.max_recv_wr = 1;
	} else {
		ia.cap.max_send_wr = 1;
		ia.cap.max_recv_wr = (g->flags & UROCE_SHM_GEN_F_SEND) ? g->slots : 1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = g->role == UROCE_SHM_GEN_TARGET ?
			    UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
			    UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC : 0;
	for (i = 0; i < g->n_qps; i++) {
		struct gen_qp *q = &g->qps[i];

		q->qp = uroce_eng_qp_create(g->pd, &ia);
		if (q->qp == NULL) {
			rc = errno ? -errno : -ENOMEM;
			goto fail;
		}
		q->qpn = uroce_eng_qp_num(q->qp);
		rc = uroce_eng_modify_qp(q->qp, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX |
					 UROCE_QP_PORT | UROCE_QP_ACCESS_FLAGS);
		if (rc != 0) {
			i++;
			goto fail;
		}
	}
	g->state = UROCE_SHM_GEN_CREATED;
	g->wnext = w->gens;
	w->gens = g;
	return 0;
fail:
	while (i-- > 0) {
		uroce_eng_qp_destroy(g->qps[i].qp);
		g->qps[i].qp = NULL;
	}
	uroce_eng_cq_destroy(g->cq);
	g->cq = NULL;
	return rc;
}

/* QPs first .. first + count - 1 to RTR and RTS, toward the peer's. */
static int
w_connect(struct dgen *g, uint32_t first, uint32_t count)
{
	struct uroce_eng_qp_attr a;
	uint32_t i;
	int rc;

	for (i = first; i < first + count; i++) {
		struct gen_qp *q = &g->qps[i];

		memset(&a, 0, sizeof(a));
		a.qp_state = UROCE_QPS_RTR;
		a.path_mtu = (enum uroce_mtu)g->path_mtu;
		a.dest_qp_num = q->peer_qpn;
		a.rq_psn = q->peer_psn;
		a.max_dest_rd_atomic = UROCE_MAX_DEST_RD_ATOMIC;
		a.min_rnr_timer = GEN_MIN_RNR_TIMER;
		memcpy(a.ah_attr.dgid, g->peer_gid, 16);
		memcpy(a.ah_attr.sgid, g->gid, 16);
		a.ah_attr.hop_limit = GEN_HOP_LIMIT;
		a.ah_attr.port_num = 1;
		rc = uroce_eng_modify_qp(q->qp, &a, UROCE_QP_STATE | UROCE_QP_AV |
					 UROCE_QP_PATH_MTU | UROCE_QP_DEST_QPN |
					 UROCE_QP_RQ_PSN | UROCE_QP_MAX_DEST_RD_ATOMIC |
					 UROCE_QP_MIN_RNR_TIMER);
		if (rc != 0)
			return rc;
		memset(&a, 0, sizeof(a));
		a.qp_state = UROCE_QPS_RTS;
		a.sq_psn = q->psn;
		a.timeout = g->timeout;
		a.retry_cnt = GEN_RETRY_CNT;
		a.rnr_retry = GEN_RNR_RETRY;
		a.max_rd_atomic = UROCE_MAX_RD_ATOMIC;
		rc = uroce_eng_modify_qp(q->qp, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN |
					 UROCE_QP_TIMEOUT | UROCE_QP_RETRY_CNT |
					 UROCE_QP_RNR_RETRY | UROCE_QP_MAX_QP_RD_ATOMIC);
		if (rc != 0)
			return rc;
		/* The worker's own view (gen_poll); the control thread keeps its own. */
		q->live = true;
		g->w_connected++;
	}
	if (g->w_connected == g->n_qps)
		g->state = UROCE_SHM_GEN_READY;
	g->recv_dirty = true; /* a target posts its receives from its next round */
	return 0;
}

static int
w_start(struct dworker *w, struct dgen *g)
{
	uint64_t now = worker_now_us(w);
	uint32_t i;

	if (g->state != UROCE_SHM_GEN_READY)
		return -ENOTCONN;
	for (i = 0; i < g->n_qps; i++) {
		struct gen_qp *q = &g->qps[i];

		/* Each QP walks the table from its own place. */
		q->tpos = (i * 389u) & (UROCE_LG_MIX_TABLE - 1);
		uroce_lg_atomic_start(&q->am, q->peer_qpn);
	}
	memset(&g->st, 0, sizeof(g->st));
	g->t_start = now;
	g->t_last = now;
	g->t_end = g->run.duration_us != 0 ? now + g->run.duration_us : UINT64_MAX;
	g->tokens = g->run.rate != 0 ? GEN_TOKEN : 0;
	g->posted_total = 0;
	g->rr = 0;
	g->state = UROCE_SHM_GEN_RUNNING;
	return 0;
}

static void
w_stats(struct dworker *w, struct dgen *g, struct uroce_shm_msg_gen_stats_resp *out)
{
	uint64_t end = g->state == UROCE_SHM_GEN_DONE || g->state == UROCE_SHM_GEN_FAILED ?
		       g->t_done : worker_now_us(w);
	uint32_t i;

	*out = g->st;
	out->state = g->state;
	out->role = g->role;
	out->worker = w->idx;
	out->n_qps = g->n_qps;
	out->outstanding = g->outstanding;
	if (g->role == UROCE_SHM_GEN_INITIATOR && g->state >= UROCE_SHM_GEN_RUNNING)
		out->elapsed_us = end > g->t_start ? end - g->t_start : 0;
	for (i = 0; i < g->n_qps; i++) {
		struct uroce_eng_qp *qp = g->qps[i].qp;

		out->retransmits += uroce_eng_qp_counter(qp, UROCE_CNT_RETRANSMITS);
		out->tx_packets += uroce_eng_qp_counter(qp, UROCE_CNT_TX_PACKETS);
		out->rx_packets += uroce_eng_qp_counter(qp, UROCE_CNT_RX_PACKETS);
	}
	/* The model's final words, once every atomic has completed. */
	out->atomic_digest = 0;
	if (g->role == UROCE_SHM_GEN_INITIATOR && g->state == UROCE_SHM_GEN_DONE)
		for (i = 0; i < g->n_qps; i++)
			out->atomic_digest = uroce_lg_atomic_digest(out->atomic_digest, i,
								    g->qps[i].am.value);
}

static void
w_destroy(struct dworker *w, struct dgen *g)
{
	struct dgen **pp;
	uint32_t i;

	for (pp = &w->gens; *pp != NULL; pp = &(*pp)->wnext)
		if (*pp == g) {
			*pp = g->wnext;
			break;
		}
	/* Outstanding WRs go without completions (the engine drops them). */
	for (i = 0; i < g->n_qps; i++) {
		if (g->qps[i].qp != NULL)
			uroce_eng_qp_destroy(g->qps[i].qp);
		g->qps[i].qp = NULL;
	}
	uroce_eng_cq_destroy(g->cq);
	g->cq = NULL;
}

int
gen_exec(struct dworker *w, struct dcmd *c)
{
	struct dgen *g = c->u.gen.g;

	switch (c->u.gen.op) {
	case GEN_W_CREATE:
		return w_create(w, g);
	case GEN_W_CONNECT:
		return w_connect(g, c->u.gen.first, c->u.gen.count);
	case GEN_W_START:
		return w_start(w, g);
	case GEN_W_STATS:
		w_stats(w, g, c->u.gen.out);
		return 0;
	case GEN_W_DESTROY:
		w_destroy(w, g);
		return 0;
	default:
		return -EINVAL;
	}
}
