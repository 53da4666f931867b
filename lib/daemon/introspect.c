/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Introspection requests of the control protocol (ABI 1.1): LIST_SESSIONS,
 * LIST_QPS and QUERY_COUNTERS, which uroce-ctl uses to show clients, QPs and
 * counters. They are read-only and served to any session that passed HELLO.
 *
 * Visibility: a client whose uid is 0 or the daemon's own uid sees every
 * session; any other client sees the sessions (and QPs) of its own uid only,
 * so an unprivileged user learns nothing about other users' processes. A QP
 * it may not see is answered -ENOENT, like a QPN that does not exist.
 * Device-wide counters are aggregates and name no process; every client may
 * read them.
 *
 * Paging (doc/shm-abi.md): entries go out in ascending key order from the
 * request's start key; a reply that could not hold them all sets
 * UROCE_SHM_LIST_F_MORE and gives the next start key.
 */

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uroce_daemon.h"
#include "uroce_shm_introspect.h"

#include "control.h"

/* The daemon's own counters (struct uroce_daemon_stats), by stable name. */
struct stat_row {
	const char *name;
	size_t off;
	size_t size; /* 4 or 8 */
};

#define STAT_ROW(f) \
	{#f, offsetof(struct uroce_daemon_stats, f), sizeof(((struct uroce_daemon_stats *)0)->f)}

static const struct stat_row stat_rows[] = {
#define UROCE_DAEMON_STAT(name, type, kept_by, desc) STAT_ROW(name),
#include "daemon_stats.def"
#undef UROCE_DAEMON_STAT
};

#define N_STAT_ROWS (sizeof(stat_rows) / sizeof(stat_rows[0]))

static uint64_t
stat_value(const struct uroce_daemon_stats *st, const struct stat_row *r)
{
	const uint8_t *p = (const uint8_t *)st + r->off;
	uint32_t v32;
	uint64_t v64;

	if (r->size == sizeof(v32)) {
		memcpy(&v32, p, sizeof(v32));
		return v32;
	}
	memcpy(&v64, p, sizeof(v64));
	return v64;
}

/* A session, as uroce-ctl sees it: identity and object counts. */
struct sview {
	struct session *s;
	uint32_t id;
	int32_t pid;
	uint32_t uid;
	bool hello;
	uint32_t count[OBJ_SRQ + 1];
};

static void
session_view(struct session *s, struct sview *v)
{
	uint32_t i;

	memset(v, 0, sizeof(*v));
	v->s = s;
	v->id = s->id;
	v->pid = (int32_t)s->pid;
	v->uid = (uint32_t)s->uid;
	v->hello = s->hello;
	for (i = 0; i < s->nobjs; i++) {
		uint8_t t = OBJ_FREE;

		if (obj_at(s, i, &t) != NULL)
			v->count[t]++;
	}
}

/* The next QP of @p s at object index *pos or later; *pos moves past it. */
static struct dqp *
session_qp_next(struct session *s, uint32_t *pos)
{
	uint32_t i;

	for (i = *pos; i < s->nobjs; i++) {
		uint8_t t = OBJ_FREE;
		void *o = obj_at(s, i, &t);

		if (o != NULL && t == OBJ_QP) {
			*pos = i + 1;
			return o;
		}
	}
	*pos = i;
	return NULL;
}

/* May the client of @p req see the session of @p target? */
static bool
visible(const struct sview *req, const struct sview *target)
{
	return req->uid == 0 || req->uid == (uint32_t)geteuid() || req->uid == target->uid;
}

static int
introspect_list_sessions(struct uroce_daemon *d, struct session *s, const void *body,
			 void *resp)
{
	const struct uroce_shm_msg_list_req *q = body;
	struct uroce_shm_msg_list_sessions_resp *p = resp;
	/* The smallest ids >= start, sorted; one more than fits tells "more". */
	struct sview best[UROCE_SHM_LIST_SESSIONS_MAX + 1];
	struct sview me, v;
	unsigned int n = 0, i, j;
	struct session *o;

	if (q->flags != 0)
		return -EINVAL;
	session_view(s, &me);
	for (o = d->sessions; o != NULL; o = o->next) {
		session_view(o, &v);
		if (v.id < q->start || !visible(&me, &v))
			continue;
		for (i = 0; i < n && best[i].id < v.id; i++)
			;
		if (i == UROCE_SHM_LIST_SESSIONS_MAX + 1)
			continue;
		if (n < UROCE_SHM_LIST_SESSIONS_MAX + 1)
			n++;
		for (j = n - 1; j > i; j--)
			best[j] = best[j - 1];
		best[i] = v;
	}
	if (n > UROCE_SHM_LIST_SESSIONS_MAX) {
		p->page.flags = UROCE_SHM_LIST_F_MORE;
		p->page.next = best[UROCE_SHM_LIST_SESSIONS_MAX].id;
		n = UROCE_SHM_LIST_SESSIONS_MAX;
	}
	p->page.count = (uint16_t)n;
	for (i = 0; i < n; i++) {
		struct uroce_shm_session_info *e = &p->s[i];

		e->client_id = best[i].id;
		e->pid = best[i].pid;
		e->uid = best[i].uid;
		e->flags = (best[i].id == me.id ? UROCE_SHM_SESSION_F_SELF : 0) |
			   (best[i].hello ? UROCE_SHM_SESSION_F_HELLO : 0);
		e->segments = best[i].count[OBJ_SEG];
		e->pds = best[i].count[OBJ_PD];
		e->mrs = best[i].count[OBJ_MR];
		e->cqs = best[i].count[OBJ_CQ];
		e->qps = best[i].count[OBJ_QP];
		e->ahs = best[i].count[OBJ_AH];
		e->srqs = best[i].count[OBJ_SRQ];
	}
	return 0;
}

struct qp_pick {
	struct dqp *qp;
	uint32_t owner_id;
	int32_t owner_pid;
};

/* Find the visible QP @p qpn. @return it, or NULL. */
static struct dqp *
find_qp(struct uroce_daemon *d, struct session *s, uint32_t qpn)
{
	struct sview me, v;
	struct session *o;
	struct dqp *qp;

	session_view(s, &me);
	for (o = d->sessions; o != NULL; o = o->next) {
		uint32_t pos = 0;

		session_view(o, &v);
		if (!visible(&me, &v))
			continue;
		while ((qp = session_qp_next(o, &pos)) != NULL)
			if (qp->qpn == qpn)
				return qp;
	}
	return NULL;
}

static int
introspect_list_qps(struct uroce_daemon *d, struct session *s, const void *body, void *resp)
{
	const struct uroce_shm_msg_list_req *q = body;
	struct uroce_shm_msg_list_qps_resp *p = resp;
	struct qp_pick best[UROCE_SHM_LIST_QPS_MAX + 1];
	struct sview me, v;
	unsigned int n = 0, i, j;
	struct session *o;

	if (q->flags != 0)
		return -EINVAL;
	session_view(s, &me);
	for (o = d->sessions; o != NULL; o = o->next) {
		struct dqp *qp;
		uint32_t pos = 0;

		session_view(o, &v);
		if (!visible(&me, &v))
			continue;
		while ((qp = session_qp_next(o, &pos)) != NULL) {
			if (qp->qpn < q->start)
				continue;
			for (i = 0; i < n && best[i].qp->qpn < qp->qpn; i++)
				;
			if (i == UROCE_SHM_LIST_QPS_MAX + 1)
				continue;
			if (n < UROCE_SHM_LIST_QPS_MAX + 1)
				n++;
			for (j = n - 1; j > i; j--)
				best[j] = best[j - 1];
			best[i].qp = qp;
			best[i].owner_id = v.id;
			best[i].owner_pid = v.pid;
		}
	}
	if (n > UROCE_SHM_LIST_QPS_MAX) {
		p->page.flags = UROCE_SHM_LIST_F_MORE;
		p->page.next = best[UROCE_SHM_LIST_QPS_MAX].qp->qpn;
		n = UROCE_SHM_LIST_QPS_MAX;
	}
	p->page.count = (uint16_t)n;
	for (i = 0; i < n; i++) {
		struct uroce_shm_qp_info *e = &p->q[i];
		struct dqp *qp = best[i].qp;
		struct dqp_state st;
		int rc = qp_state_query(d, qp, &st);

		if (rc != 0)
			return rc;
		e->qp_num = qp->qpn;
		e->client_id = best[i].owner_id;
		e->pid = best[i].owner_pid;
		e->qp_type = (uint8_t)qp->type;
		e->qp_state = (uint8_t)st.attr.qp_state;
		e->path_mtu = (uint8_t)st.attr.path_mtu;
		e->flags = st.failed ? UROCE_SHM_QP_F_RING_FAILED : 0;
		e->sq_psn = st.attr.sq_psn;
		e->rq_psn = st.attr.rq_psn;
		e->dest_qp_num = st.attr.dest_qp_num;
		e->max_send_wr = qp->max_send_wr;
		e->max_recv_wr = qp->max_recv_wr;
		e->sq_queued = st.sq_queued;
		e->rq_queued = st.rq_queued;
		memcpy(e->dgid, st.attr.ah_attr.dgid, sizeof(e->dgid));
		e->worker = (uint32_t)qp->worker;
	}
	return 0;
}

/* A QP's congestion control rows: its reaction point state, then its
 * parameters (cc_params.def), by index. */
static const char *const cc_state_rows[] = {
	"rp_limited", "rp_current_rate_kbps", "rp_target_rate_kbps", "rp_max_rate_kbps",
	"rp_alpha", "rp_time_stage", "rp_byte_stage",
};

#define N_CC_STATE (sizeof(cc_state_rows) / sizeof(cc_state_rows[0]))

static unsigned int
cc_row_count(void)
{
	return N_CC_STATE + uroce_eng_cc_param_count();
}

static const char *
cc_row_name(unsigned int i)
{
	if (i < N_CC_STATE)
		return cc_state_rows[i];
	if (i < cc_row_count())
		return uroce_eng_cc_param_info(i - N_CC_STATE)->name;
	return NULL;
}

static uint64_t
cc_row(const struct dqp_state *qs, unsigned int i)
{
	const uint32_t *v[N_CC_STATE] = { NULL, &qs->cc.rate_kbps, &qs->cc.target_kbps,
					  &qs->cc.max_kbps, &qs->cc.alpha, &qs->cc.time_stage,
					  &qs->cc.byte_stage };

	if (i >= cc_row_count())
		return 0;
	if (i >= N_CC_STATE)
		return uroce_eng_cc_param_get(&qs->cc_params, i - N_CC_STATE);
	return i == 0 ? qs->cc.limited : *v[i];
}

/* A QP's last responder rejection (struct uroce_eng_resp_reject), by index. */
static const char *const reject_rows[] = {
	"resp_rejects", "last_reject_check", "last_reject_nak", "last_reject_opcode",
	"last_reject_psn", "last_reject_epsn", "last_reject_va", "last_reject_rkey",
	"last_reject_len", "last_reject_time_us",
};

#define N_REJECT_ROWS (sizeof(reject_rows) / sizeof(reject_rows[0]))

static uint64_t
reject_row(const struct uroce_eng_resp_reject *r, unsigned int i)
{
	const uint64_t v[N_REJECT_ROWS] = { r->seq, r->check, r->nak, r->opcode, r->psn,
					    r->epsn, r->va, r->rkey, r->len, r->time_us };

	return i < N_REJECT_ROWS ? v[i] : 0;
}

static void
put_counter(struct uroce_shm_counter *e, const char *name, uint64_t value, uint8_t group)
{
	snprintf(e->name, sizeof(e->name), "%s", name != NULL ? name : "?");
	e->value = value;
	e->group = group;
}

static int
introspect_query_counters(struct uroce_daemon *d, struct session *s, const void *body,
			  void *resp)
{
	const struct uroce_shm_msg_query_counters_req *q = body;
	struct uroce_shm_msg_query_counters_resp *p = resp;
	struct uroce_daemon_stats st;
	static struct dqp_state qs; /* the control thread answers one request at a time */
	uint64_t dev[UROCE_CNT_MAX];
	uint32_t total, i, k;
	struct dqp *qp;
	int rc;

	if (q->flags != 0)
		return -EINVAL;
	if (q->scope == UROCE_SHM_COUNTERS_DEVICE) {
		if (q->qp_num != 0)
			return -EINVAL;
		rc = uroce_daemon_stats(d, &st);
		if (rc != 0)
			return rc;
		/* Engine-wide: destroyed QPs and engine-level drops included. */
		uroce_daemon_counters(d, dev, UROCE_CNT_MAX);
		total = (uint32_t)(N_STAT_ROWS + UROCE_CNT_MAX);
	} else if (q->scope == UROCE_SHM_COUNTERS_QP) {
		qp = find_qp(d, s, q->qp_num);
		if (qp == NULL)
			return -ENOENT;
		rc = qp_state_query(d, qp, &qs);
		if (rc != 0)
			return rc;
		/* cc: then the QP's congestion state and parameters, then its
		 * last responder rejection */
		total = UROCE_CNT_MAX + cc_row_count() + N_REJECT_ROWS;
	} else {
		return -EINVAL;
	}
	if (q->start > total)
		return -EINVAL;
	p->total = total;
	for (i = q->start, k = 0; i < total && k < UROCE_SHM_COUNTERS_MAX; i++, k++) {
		struct uroce_shm_counter *e = &p->c[k];

		if (q->scope == UROCE_SHM_COUNTERS_QP && i >= UROCE_CNT_MAX + cc_row_count())
			put_counter(e, reject_rows[i - UROCE_CNT_MAX - cc_row_count()],
				    reject_row(&qs.reject, i - UROCE_CNT_MAX - cc_row_count()),
				    UROCE_SHM_COUNTER_G_RESP_REJECT);
		else if (q->scope == UROCE_SHM_COUNTERS_QP && i >= UROCE_CNT_MAX)
			put_counter(e, cc_row_name(i - UROCE_CNT_MAX),
				    cc_row(&qs, i - UROCE_CNT_MAX), UROCE_SHM_COUNTER_G_CC);
		else if (q->scope == UROCE_SHM_COUNTERS_QP)
			put_counter(e, uroce_eng_counter_name((enum uroce_counter)i), qs.cnt[i],
				    UROCE_SHM_COUNTER_G_TRANSPORT);
		else if (i < N_STAT_ROWS)
			put_counter(e, stat_rows[i].name, stat_value(&st, &stat_rows[i]),
				    UROCE_SHM_COUNTER_G_DAEMON);
		else
			put_counter(e, uroce_eng_counter_name((enum uroce_counter)(i - N_STAT_ROWS)),
				    dev[i - N_STAT_ROWS], UROCE_SHM_COUNTER_G_TRANSPORT);
	}
	p->page.count = (uint16_t)k;
	if (i < total) {
		p->page.flags = UROCE_SHM_LIST_F_MORE;
		p->page.next = i;
	}
	return 0;
}

/* Workers are not any client's: every client may list them. */
static int
introspect_list_workers(struct uroce_daemon *d, struct session *s, const void *body, void *resp)
{
	const struct uroce_shm_msg_list_req *q = body;
	struct uroce_shm_msg_list_workers_resp *p = resp;
	unsigned int i, k;

	(void)s;
	if (q->flags != 0)
		return -EINVAL;
	for (i = q->start, k = 0; i < d->n_workers && k < UROCE_SHM_LIST_WORKERS_MAX; i++, k++) {
		struct uroce_shm_worker_info *e = &p->w[k];
		struct uroce_daemon_worker_stats ws;

		uroce_daemon_worker_stats(d, i, &ws);
		e->worker = i;
		e->qps = (uint32_t)ws.qps;
		e->tsc_hz = ws.tsc_hz;
		e->busy_cycles = ws.busy_cycles;
		e->idle_cycles = ws.idle_cycles;
		e->loops = ws.loops;
		e->rx_packets = ws.rx_packets;
		e->tx_packets = ws.tx_packets;
		e->handoff_in = ws.handoff_in;
		e->handoff_out = ws.handoff_out;
		e->wqes = ws.wqes;
		e->cqes = ws.cqes;
		e->roce_rx = ws.roce_rx;
		e->roce_tx = ws.roce_tx;
		e->sleeps = ws.sleeps;
	}
	p->page.count = (uint16_t)k;
	if (i < d->n_workers) {
		p->page.flags = UROCE_SHM_LIST_F_MORE;
		p->page.next = i;
	}
	return 0;
}

unsigned int
uroce_daemon_qps(struct uroce_daemon *d, uint32_t from, struct uroce_daemon_qp_info *out,
		 unsigned int max)
{
	static struct dqp_state st; /* control thread only */
	unsigned int n = 0, i, j, k;
	struct session *o;

	for (o = d->sessions; o != NULL; o = o->next) {
		struct dqp *qp;
		uint32_t pos = 0;

		while ((qp = session_qp_next(o, &pos)) != NULL) {
			if (qp->qpn < from)
				continue;
			/* Insertion by QP number; the largest falls off a full array. */
			for (i = 0; i < n && out[i].qpn < qp->qpn; i++)
				;
			if (i == max || qp_state_query(d, qp, &st) != 0)
				continue;
			if (n < max)
				n++;
			for (j = n - 1; j > i; j--)
				out[j] = out[j - 1];
			memset(&out[i], 0, sizeof(out[i]));
			out[i].qpn = qp->qpn;
			out[i].type = qp->type;
			out[i].state = st.attr.qp_state;
			out[i].worker = (uint32_t)qp->worker;
			out[i].dest_qpn = st.attr.dest_qp_num;
			out[i].sq_psn = st.attr.sq_psn;
			out[i].rq_psn = st.attr.rq_psn;
			out[i].pid = (int32_t)o->pid;
			out[i].n_cnt = UROCE_MIN((unsigned int)UROCE_CNT_MAX, UROCE_DAEMON_QP_CNT);
			for (k = 0; k < out[i].n_cnt; k++)
				out[i].cnt[k] = st.cnt[k];
		}
	}
	return n;
}

int
introspect_dispatch(struct uroce_daemon *d, struct session *s, uint16_t type, const void *body,
		    struct reply *r)
{
	switch (type) {
	case UROCE_SHM_MSG_LIST_SESSIONS:
		return introspect_list_sessions(d, s, body, r->body);
	case UROCE_SHM_MSG_LIST_QPS:
		return introspect_list_qps(d, s, body, r->body);
	case UROCE_SHM_MSG_QUERY_COUNTERS:
		return introspect_query_counters(d, s, body, r->body);
	case UROCE_SHM_MSG_LIST_WORKERS:
		return introspect_list_workers(d, s, body, r->body);
	default:
		return -EOPNOTSUPP;
	}
}

/* ------------------------------------------------------------------------ */
/* What the daemon counts (the public stats API and QUERY_COUNTERS)          */
/* ------------------------------------------------------------------------ */

/* Every worker's counts and transport counters, summed. */
static void
sum_workers(struct uroce_daemon *d, struct dworker_cnt *cnt, uint64_t *eng)
{
	unsigned int i, k;
	struct dcmd c;

	memset(cnt, 0, sizeof(*cnt));
	memset(eng, 0, sizeof(uint64_t) * UROCE_CNT_MAX);
	for (i = 0; i < d->n_workers; i++) {
		memset(&c, 0, sizeof(c));
		c.type = CMD_STATS;
		worker_call(d, i, &c);
#define SUM_CTL(name)
#define SUM_WRK(name) cnt->name += c.u.stats.cnt.name;
#define SUM_ALL(name) SUM_WRK(name)
#define UROCE_DAEMON_STAT(name, type, kept_by, desc) SUM_##kept_by(name)
#include "daemon_stats.def"
#undef UROCE_DAEMON_STAT
		for (k = 0; k < UROCE_CNT_MAX; k++)
			eng[k] += c.u.stats.eng[k];
	}
}
unsigned int
uroce_daemon_counters(struct uroce_daemon *d, uint64_t *vals, unsigned int n)
{
	uint64_t eng[UROCE_CNT_MAX];
	struct dworker_cnt cnt;
	unsigned int i;

	sum_workers(d, &cnt, eng);
	for (i = 0; i < n && i < UROCE_CNT_MAX; i++)
		vals[i] = eng[i];
	return UROCE_CNT_MAX;
}

int
uroce_daemon_stats(struct uroce_daemon *d, struct uroce_daemon_stats *st)
{
	uint64_t eng[UROCE_CNT_MAX];
	struct dworker_cnt cnt;

	if (d == NULL || st == NULL)
		return -EINVAL;
	sum_workers(d, &cnt, eng);
	*st = d->st;
	/* The workers' rows replace the control thread's (it keeps none of
	 * them); the rows both keep are added. */
#define MERGE_CTL(name)
#define MERGE_WRK(name) st->name = cnt.name;
#define MERGE_ALL(name) st->name += cnt.name;
#define UROCE_DAEMON_STAT(name, type, kept_by, desc) MERGE_##kept_by(name)
#include "daemon_stats.def"
#undef UROCE_DAEMON_STAT
	return 0;
}
int
uroce_daemon_worker_stats(struct uroce_daemon *d, unsigned int worker,
			  struct uroce_daemon_worker_stats *st)
{
	struct dcmd c;

	if (d == NULL || st == NULL || worker >= d->n_workers)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	if (d->worker_stats_fn != NULL)
		d->worker_stats_fn(d->worker_stats_ctx, worker, st);
	memset(&c, 0, sizeof(c));
	c.type = CMD_STATS;
	worker_call(d, worker, &c);
	st->wqes = c.u.stats.cnt.wqes;
	st->cqes = c.u.stats.cnt.cqe_written;
	st->roce_rx = c.u.stats.eng[UROCE_CNT_RX_PACKETS];
	st->roce_tx = c.u.stats.eng[UROCE_CNT_TX_PACKETS];
	st->qps = c.u.stats.qps;
	return 0;
}
