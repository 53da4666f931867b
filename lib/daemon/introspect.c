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

#include "uroce_shm.h"

#include "daemon_internal.h"
#include "uroce_daemon.h"

/* The daemon's own counters (struct uroce_daemon_stats), by stable name. */
struct stat_row {
	const char *name;
	size_t off;
	size_t size; /* 4 or 8 */
};

#define STAT_ROW(f) \
	{#f, offsetof(struct uroce_daemon_stats, f), sizeof(((struct uroce_daemon_stats *)0)->f)}

static const struct stat_row stat_rows[] = {
	STAT_ROW(sessions),
	STAT_ROW(segments),
	STAT_ROW(pds),
	STAT_ROW(mrs),
	STAT_ROW(cqs),
	STAT_ROW(qps),
	STAT_ROW(ahs),
	STAT_ROW(srqs),
	STAT_ROW(msgs),
	STAT_ROW(bad_msgs),
	STAT_ROW(hello_refused),
	STAT_ROW(wqe_rejected),
	STAT_ROW(ring_corrupt),
	STAT_ROW(loop_frames),
	STAT_ROW(loop_bad),
	STAT_ROW(port_tx),
	STAT_ROW(port_rx),
	STAT_ROW(cqe_written),
	STAT_ROW(cq_events),
	STAT_ROW(sessions_reaped),
	STAT_ROW(srq_wqe_rejected),
	STAT_ROW(async_events),
	STAT_ROW(async_dropped),
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

/* May the client of @p req see the session of @p target? */
static bool
visible(const struct dsession_view *req, const struct dsession_view *target)
{
	return req->uid == 0 || req->uid == (uint32_t)geteuid() || req->uid == target->uid;
}

int
introspect_list_sessions(struct uroce_daemon *d, struct session *s, const void *body,
			 void *resp)
{
	const struct uroce_shm_msg_list_req *q = body;
	struct uroce_shm_msg_list_sessions_resp *p = resp;
	/* The smallest ids >= start, sorted; one more than fits tells "more". */
	struct dsession_view best[UROCE_SHM_LIST_SESSIONS_MAX + 1];
	struct dsession_view me, v;
	unsigned int n = 0, i, j;
	struct session *o;

	if (q->flags != 0)
		return -EINVAL;
	daemon_session_view(s, &me);
	for (o = daemon_session_next(d, NULL); o != NULL; o = daemon_session_next(d, o)) {
		daemon_session_view(o, &v);
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
		e->segments = best[i].segments;
		e->pds = best[i].pds;
		e->mrs = best[i].mrs;
		e->cqs = best[i].cqs;
		e->qps = best[i].qps;
		e->ahs = best[i].ahs;
		e->srqs = best[i].srqs;
	}
	return 0;
}

struct qp_pick {
	struct dqp_view v;
	uint32_t owner_id;
	int32_t owner_pid;
};

/* Find the visible QP @p qpn. @return 0, or -ENOENT. */
static int
find_qp(struct uroce_daemon *d, struct session *s, uint32_t qpn, struct dqp_view *out)
{
	struct dsession_view me, v;
	struct session *o;

	daemon_session_view(s, &me);
	for (o = daemon_session_next(d, NULL); o != NULL; o = daemon_session_next(d, o)) {
		uint32_t pos = 0;

		daemon_session_view(o, &v);
		if (!visible(&me, &v))
			continue;
		while (daemon_session_qp_next(o, &pos, out) == 0)
			if (out->qpn == qpn)
				return 0;
	}
	return -ENOENT;
}

int
introspect_list_qps(struct uroce_daemon *d, struct session *s, const void *body, void *resp)
{
	const struct uroce_shm_msg_list_req *q = body;
	struct uroce_shm_msg_list_qps_resp *p = resp;
	struct qp_pick best[UROCE_SHM_LIST_QPS_MAX + 1];
	struct dsession_view me, v;
	unsigned int n = 0, i, j;
	struct session *o;

	if (q->flags != 0)
		return -EINVAL;
	daemon_session_view(s, &me);
	for (o = daemon_session_next(d, NULL); o != NULL; o = daemon_session_next(d, o)) {
		struct dqp_view qv;
		uint32_t pos = 0;

		daemon_session_view(o, &v);
		if (!visible(&me, &v))
			continue;
		while (daemon_session_qp_next(o, &pos, &qv) == 0) {
			if (qv.qpn < q->start)
				continue;
			for (i = 0; i < n && best[i].v.qpn < qv.qpn; i++)
				;
			if (i == UROCE_SHM_LIST_QPS_MAX + 1)
				continue;
			if (n < UROCE_SHM_LIST_QPS_MAX + 1)
				n++;
			for (j = n - 1; j > i; j--)
				best[j] = best[j - 1];
			best[i].v = qv;
			best[i].owner_id = v.id;
			best[i].owner_pid = v.pid;
		}
	}
	if (n > UROCE_SHM_LIST_QPS_MAX) {
		p->page.flags = UROCE_SHM_LIST_F_MORE;
		p->page.next = best[UROCE_SHM_LIST_QPS_MAX].v.qpn;
		n = UROCE_SHM_LIST_QPS_MAX;
	}
	p->page.count = (uint16_t)n;
	for (i = 0; i < n; i++) {
		struct uroce_shm_qp_info *e = &p->q[i];
		struct dqp_attr a;
		struct dcap cap;
		int rc = eng_query_qp(best[i].v.qp, &a, &cap);

		if (rc != 0)
			return rc;
		e->qp_num = best[i].v.qpn;
		e->client_id = best[i].owner_id;
		e->pid = best[i].owner_pid;
		e->qp_type = (uint8_t)best[i].v.type;
		e->qp_state = (uint8_t)a.qp_state;
		e->path_mtu = (uint8_t)a.path_mtu;
		e->flags = best[i].v.failed ? UROCE_SHM_QP_F_RING_FAILED : 0;
		e->sq_psn = a.sq_psn;
		e->rq_psn = a.rq_psn;
		e->dest_qp_num = a.dest_qp_num;
		e->max_send_wr = best[i].v.max_send_wr;
		e->max_recv_wr = best[i].v.max_recv_wr;
		e->sq_queued = best[i].v.sq_queued;
		e->rq_queued = best[i].v.rq_queued;
		memcpy(e->dgid, a.dgid, sizeof(e->dgid));
	}
	return 0;
}

static void
put_counter(struct uroce_shm_counter *e, const char *name, uint64_t value, uint8_t group)
{
	snprintf(e->name, sizeof(e->name), "%s", name != NULL ? name : "?");
	e->value = value;
	e->group = group;
}

int
introspect_query_counters(struct uroce_daemon *d, struct session *s, const void *body,
			  void *resp)
{
	const struct uroce_shm_msg_query_counters_req *q = body;
	struct uroce_shm_msg_query_counters_resp *p = resp;
	struct uroce_daemon_stats st;
	unsigned int n_eng = eng_counter_count();
	uint64_t *dev = NULL;
	struct dqp_view qv;
	uint32_t total, i, k;
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
		dev = calloc(n_eng ? n_eng : 1, sizeof(*dev));
		if (dev == NULL)
			return -ENOMEM;
		uroce_daemon_counters(d, dev, n_eng);
		total = (uint32_t)(N_STAT_ROWS + n_eng);
	} else if (q->scope == UROCE_SHM_COUNTERS_QP) {
		rc = find_qp(d, s, q->qp_num, &qv);
		if (rc != 0)
			return rc;
		/* cc: then the QP's congestion state and parameters */
		total = n_eng + eng_cc_row_count();
	} else {
		return -EINVAL;
	}
	if (q->start > total) {
		free(dev);
		return -EINVAL;
	}
	p->total = total;
	for (i = q->start, k = 0; i < total && k < UROCE_SHM_COUNTERS_MAX; i++, k++) {
		struct uroce_shm_counter *e = &p->c[k];

		if (q->scope == UROCE_SHM_COUNTERS_QP && i >= n_eng)
			put_counter(e, eng_cc_row_name(i - n_eng), eng_qp_cc_row(qv.qp, i - n_eng),
				    UROCE_SHM_COUNTER_G_CC);
		else if (q->scope == UROCE_SHM_COUNTERS_QP)
			put_counter(e, eng_counter_name(i), eng_qp_counter(qv.qp, i),
				    UROCE_SHM_COUNTER_G_TRANSPORT);
		else if (i < N_STAT_ROWS)
			put_counter(e, stat_rows[i].name, stat_value(&st, &stat_rows[i]),
				    UROCE_SHM_COUNTER_G_DAEMON);
		else
			put_counter(e, eng_counter_name(i - N_STAT_ROWS), dev[i - N_STAT_ROWS],
				    UROCE_SHM_COUNTER_G_TRANSPORT);
	}
	free(dev);
	p->page.count = (uint16_t)k;
	if (i < total) {
		p->page.flags = UROCE_SHM_LIST_F_MORE;
		p->page.next = i;
	}
	return 0;
}

unsigned int
uroce_daemon_qps(struct uroce_daemon *d, uint32_t from, struct uroce_daemon_qp_info *out,
		 unsigned int max)
{
	unsigned int n = 0, i, j, k;
	struct session *o;

	for (o = daemon_session_next(d, NULL); o != NULL; o = daemon_session_next(d, o)) {
		struct dsession_view v;
		struct dqp_view qv;
		uint32_t pos = 0;

		daemon_session_view(o, &v);
		while (daemon_session_qp_next(o, &pos, &qv) == 0) {
			struct dqp_attr a;
			struct dcap cap;

			if (qv.qpn < from || eng_query_qp(qv.qp, &a, &cap) != 0)
				continue;
			/* Insertion by QP number; the largest falls off a full array. */
			for (i = 0; i < n && out[i].qpn < qv.qpn; i++)
				;
			if (i == max)
				continue;
			if (n < max)
				n++;
			for (j = n - 1; j > i; j--)
				out[j] = out[j - 1];
			memset(&out[i], 0, sizeof(out[i]));
			out[i].qpn = qv.qpn;
			out[i].type = qv.type;
			out[i].state = a.qp_state;
			out[i].dest_qpn = a.dest_qp_num;
			out[i].sq_psn = a.sq_psn;
			out[i].rq_psn = a.rq_psn;
			out[i].pid = v.pid;
			out[i].n_cnt = UROCE_MIN(eng_counter_count(), UROCE_DAEMON_QP_CNT);
			for (k = 0; k < out[i].n_cnt; k++)
				out[i].cnt[k] = eng_qp_counter(qv.qp, k);
		}
	}
	return n;
}
