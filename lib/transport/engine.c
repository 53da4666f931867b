/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The engine: one per worker. It owns the QPs, CQs and SRQs of that worker
 * (PDs, MRs and AHs live on the device the engines of a daemon share), keeps
 * the work lists (requesters with work, responders with queued responses or
 * ACKs, QPs with an armed timer), builds outgoing packets into buffers from
 * the shell's tx_alloc, and runs everything from uroce_eng_poll().
 *
 * Timer cost: QPs with an armed timer sit on timer_list. The engine keeps a
 * lower bound of their earliest deadline, so a poll with nothing expired
 * costs one comparison; when it may have expired, the list is walked once
 * (O(QPs with an armed timer), not O(all QPs)) and the bound is recomputed.
 */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport_internal.h"

struct uroce_eng_dev *
uroce_eng_dev_create(void)
{
	struct uroce_eng_dev *dev = calloc(1, sizeof(*dev));

	if (dev == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	TAILQ_INIT(&dev->pds);
	TAILQ_INIT(&dev->ahs);
	return dev;
}

void
uroce_eng_dev_destroy(struct uroce_eng_dev *dev)
{
	uint32_t i;

	if (dev == NULL)
		return;
	for (i = 0; i < UROCE_MAX_MR; i++)
		if (dev->mrs[i] != NULL)
			uroce_eng_mr_dereg(dev->mrs[i]);
	while (!TAILQ_EMPTY(&dev->ahs))
		uroce_eng_ah_destroy(TAILQ_FIRST(&dev->ahs));
	while (!TAILQ_EMPTY(&dev->pds)) {
		TAILQ_FIRST(&dev->pds)->refs = 0;
		uroce_eng_pd_dealloc(TAILQ_FIRST(&dev->pds));
	}
	free(dev);
}

struct uroce_eng *
uroce_eng_create(const struct uroce_eng_conf *conf)
{
	struct uroce_eng *eng;

	if (conf == NULL || conf->ops == NULL || conf->ops->now_us == NULL ||
	    conf->ops->tx_alloc == NULL || conf->ops->tx_send == NULL ||
	    conf->ops->tx_free == NULL ||
	    (conf->ud_mtu != 0 && uroce_mtu_enum(conf->ud_mtu) == 0) ||
	    (conf->qpn_base & ((1u << UROCE_QPN_LOCAL_BITS) - 1)) != 0 ||
	    conf->qpn_base > UROCE_QPN_MASK) {
		errno = EINVAL;
		return NULL;
	}
	eng = calloc(1, sizeof(*eng));
	if (eng == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	eng->dev = conf->dev;
	if (eng->dev == NULL) {
		eng->dev = uroce_eng_dev_create();
		if (eng->dev == NULL) {
			free(eng);
			errno = ENOMEM;
			return NULL;
		}
		eng->own_dev = true;
	}
	eng->qpn_base = conf->qpn_base;
	eng->zc_min = conf->ops->tx_send_zc != NULL ? conf->zc_min : 0;
	eng->ops = *conf->ops;
	eng->ctx = conf->ctx;
	memcpy(eng->gid, conf->gid, sizeof(eng->gid));
	eng->port = conf->port != 0 ? conf->port : 1;
	eng->budget = conf->poll_budget != 0 ? conf->poll_budget : 256;
	eng->ud_mtu = conf->ud_mtu != 0 ? conf->ud_mtu : 4096;
	eng->next_deadline = UINT64_MAX;
	TAILQ_INIT(&eng->req_list);
	TAILQ_INIT(&eng->resp_list);
	TAILQ_INIT(&eng->timer_list);
	TAILQ_INIT(&eng->cqs);
	TAILQ_INIT(&eng->srqs);
	cc_eng_init(eng); /* cc: ConnectX's defaults until uroce_eng_cc_set() */
	return eng;
}

void
uroce_eng_destroy(struct uroce_eng *eng)
{
	uint32_t i;

	if (eng == NULL)
		return;
	for (i = 0; i < UROCE_MAX_QP; i++)
		if (eng->qps[i] != NULL)
			uroce_eng_qp_destroy(eng->qps[i]);
	/* Then what the QPs referenced. */
	while (!TAILQ_EMPTY(&eng->srqs)) {
		TAILQ_FIRST(&eng->srqs)->refs = 0;
		uroce_eng_srq_destroy(TAILQ_FIRST(&eng->srqs));
	}
	while (!TAILQ_EMPTY(&eng->cqs)) {
		TAILQ_FIRST(&eng->cqs)->refs = 0;
		uroce_eng_cq_destroy(TAILQ_FIRST(&eng->cqs));
	}
	if (eng->own_dev)
		uroce_eng_dev_destroy(eng->dev);
	free(eng);
}

uint64_t
uroce_eng_counter(const struct uroce_eng *eng, enum uroce_counter c)
{
	uint64_t v;
	uint32_t i;

	if ((unsigned int)c >= UROCE_CNT_MAX)
		return 0;
	v = eng->cnt[c];
	for (i = 0; i < UROCE_MAX_QP; i++)
		if (eng->qps[i] != NULL)
			v += eng->qps[i]->cnt[c];
	return v;
}

void
uroce_eng_counters(const struct uroce_eng *eng, uint64_t out[UROCE_CNT_MAX])
{
	uint32_t i, k;

	memcpy(out, eng->cnt, sizeof(eng->cnt));
	for (i = 0; i < UROCE_MAX_QP; i++) {
		const struct uroce_eng_qp *qp = eng->qps[i];

		if (qp == NULL)
			continue;
		for (k = 0; k < UROCE_CNT_MAX; k++)
			out[k] += qp->cnt[k];
	}
}

void
eng_async(struct uroce_eng *eng, enum uroce_event_type t, void *obj)
{
	if (eng->ops.async_event != NULL)
		eng->ops.async_event(eng->ctx, t, obj);
}

void
eng_req_kick(struct uroce_eng_qp *qp)
{
	if (!qp->req.on_list) {
		qp->req.on_list = true;
		TAILQ_INSERT_TAIL(&qp->eng->req_list, qp, req.link);
	}
}

void
eng_resp_kick(struct uroce_eng_qp *qp)
{
	if (!qp->resp.on_list) {
		qp->resp.on_list = true;
		TAILQ_INSERT_TAIL(&qp->eng->resp_list, qp, resp.link);
	}
}

/* Call after changing a QP's deadlines. */
void
eng_timer_update(struct uroce_eng_qp *qp)
{
	struct uroce_eng *eng = qp->eng;
	bool armed = qp->comp.rto_deadline != 0 || qp->comp.rnr_deadline != 0 ||
		     qp->cc.deadline != 0; /* cc: pacing and DCQCN timers */

	if (armed && !qp->comp.on_timer_list) {
		qp->comp.on_timer_list = true;
		TAILQ_INSERT_TAIL(&eng->timer_list, qp, comp.timer_link);
	}
	if (qp->comp.rto_deadline != 0 && qp->comp.rto_deadline < eng->next_deadline)
		eng->next_deadline = qp->comp.rto_deadline;
	if (qp->comp.rnr_deadline != 0 && qp->comp.rnr_deadline < eng->next_deadline)
		eng->next_deadline = qp->comp.rnr_deadline;
	if (qp->cc.deadline != 0 && qp->cc.deadline < eng->next_deadline)
		eng->next_deadline = qp->cc.deadline;
	/* Disarmed QPs leave the list lazily, at the next walk. */
}

void
eng_unlink_qp(struct uroce_eng_qp *qp)
{
	struct uroce_eng *eng = qp->eng;

	if (qp->req.on_list) {
		TAILQ_REMOVE(&eng->req_list, qp, req.link);
		qp->req.on_list = false;
	}
	if (qp->resp.on_list) {
		TAILQ_REMOVE(&eng->resp_list, qp, resp.link);
		qp->resp.on_list = false;
	}
	if (qp->comp.on_timer_list) {
		TAILQ_REMOVE(&eng->timer_list, qp, comp.timer_link);
		qp->comp.on_timer_list = false;
	}
	qp->comp.rto_deadline = 0;
	qp->comp.rnr_deadline = 0;
	cc_reset(qp); /* cc: rate state and its deadlines go with the QP's */
}

uint64_t
uroce_eng_next_deadline(const struct uroce_eng *eng)
{
	const struct uroce_eng_qp *qp;
	uint64_t d = UINT64_MAX;

	TAILQ_FOREACH(qp, &eng->timer_list, comp.timer_link) {
		if (qp->comp.rto_deadline != 0 && qp->comp.rto_deadline < d)
			d = qp->comp.rto_deadline;
		if (qp->comp.rnr_deadline != 0 && qp->comp.rnr_deadline < d)
			d = qp->comp.rnr_deadline;
		if (qp->cc.deadline != 0 && qp->cc.deadline < d)
			d = qp->cc.deadline;
	}
	return d;
}

bool
uroce_eng_busy(const struct uroce_eng *eng)
{
	return !TAILQ_EMPTY(&eng->req_list) || !TAILQ_EMPTY(&eng->resp_list);
}

uint8_t *
eng_tx_prepare(struct uroce_eng_qp *qp, const struct uroce_bth_fields *bth,
	       const struct uroce_ext_fields *ext, uint32_t paylen, uint32_t *hdr_len)
{
	struct uroce_eng *eng = qp->eng;
	const struct uroce_opcode_info *oi = uroce_opcode_get(bth->opcode);
	uint32_t ib_len;
	uint8_t *buf;

	if (oi == NULL)
		return NULL;
	ib_len = oi->hdr_len + paylen + uroce_pad(paylen) + UROCE_ICRC_LEN;
	buf = eng->ops.tx_alloc(eng->ctx, ib_len);
	if (buf == NULL) {
		ENG_CNT(eng, TX_ALLOC_FAIL);
		return NULL;
	}
	*hdr_len = uroce_hdr_build(buf, ib_len, bth, ext, paylen);
	/* The opcode comes from our own tables, so this cannot fail. */
	assert(*hdr_len == oi->hdr_len);
	return buf;
}

void
uroce_eng_tx_encap(const struct uroce_eng_tx_addr *a, struct uroce_encap *e)
{
	memset(e, 0, sizeof(*e));
	e->family = uroce_gid_family(a->dgid);
	memcpy(e->sgid, a->sgid, 16);
	memcpy(e->dgid, a->dgid, 16);
	e->tclass = a->tclass;
	e->hop_limit = a->hop_limit;
	e->flow_label = a->flow_label;
	e->sport = a->sport;
	e->tclass_final = a->tclass_final;
	e->has_pcp = a->has_pcp;
	e->pcp = a->pcp;
}

static void
tx_addr(struct uroce_eng_qp *qp, const struct uroce_bth_fields *bth,
	const struct uroce_eng_ah_attr *ah, struct uroce_eng_tx_addr *addr)
{
	struct uroce_eng *eng = qp->eng;

	/* The shell resolved the verbs sgid_index to a GID; zero: the port's first. */
	memcpy(addr->sgid, uroce_gid_is_zero(ah->sgid) ? eng->gid : ah->sgid, 16);
	memcpy(addr->dgid, ah->dgid, 16);
	addr->tclass = ah->tclass;
	addr->hop_limit = ah->hop_limit;
	addr->flow_label = ah->flow_label;
	addr->sport = uroce_udp_sport(ah->flow_label, qp->qpn, bth->dqpn);
	addr->port = ah->port_num != 0 ? ah->port_num : eng->port;
	addr->src_qpn = qp->qpn;
	cc_tx_mark(qp, bth->opcode, addr); /* cc: ECN bits; a CNP's DSCP and PCP */
}

void
eng_tx_send(struct uroce_eng_qp *qp, uint8_t *buf, const struct uroce_bth_fields *bth,
	    uint32_t hdr_len, uint32_t paylen, const struct uroce_eng_ah_attr *ah)
{
	struct uroce_eng *eng = qp->eng;
	struct uroce_eng_tx_addr addr;
	uint8_t pad = uroce_pad(paylen);
	uint32_t ib_len = hdr_len + paylen + pad + UROCE_ICRC_LEN;

	/* IBA 9.2.4: pad bytes are zero. The ICRC is the shell's job. */
	memset(buf + hdr_len + paylen, 0, pad + UROCE_ICRC_LEN);
	tx_addr(qp, bth, ah, &addr);
	QP_CNT(qp, TX_PACKETS);
	eng->ops.tx_send(eng->ctx, buf, ib_len, &addr);
}

bool
eng_zc_ok(const struct uroce_eng_qp *qp, const struct uroce_eng_mr *mr, uint32_t paylen)
{
	return qp->eng->zc_min != 0 && paylen >= qp->eng->zc_min && mr != NULL &&
	       mr->zc_ref != NULL;
}

bool
eng_tx_send_zc(struct uroce_eng_qp *qp, uint8_t *buf, const struct uroce_bth_fields *bth,
	       uint32_t hdr_len, const uint8_t *payload, uint32_t paylen,
	       const struct uroce_eng_ah_attr *ah, struct uroce_eng_mr *mr, struct swqe *w)
{
	struct uroce_eng *eng = qp->eng;
	struct uroce_eng_tx_addr addr;
	struct uroce_eng_zc zc;
	uint32_t ib_len = hdr_len + paylen + uroce_pad(paylen) + UROCE_ICRC_LEN;

	/* One more reader of the memory and of the WQE before the shell sees
	 * the packet: it may send it and release it before returning. */
	if (w != NULL && w->zc_inflight == UINT16_MAX)
		return false;
	zc.mem_ref = mr->zc_ref;
	zc.qpn = qp->qpn;
	zc.gen = qp->zc_gen;
	zc.wqe = UROCE_ENG_ZC_NO_WQE;
	if (w != NULL) {
		/* The WQE's free-running index: the slot's place in the window
		 * [sq_retire, sq_tail) (zc_release() checks it is still there). */
		uint32_t slot = (uint32_t)(w - qp->sq);

		zc.wqe = qp->sq_retire + ((slot - qp->sq_retire) & qp->sq_mask);
		w->zc_inflight++;
	}
	__atomic_fetch_add(mr->zc_ref, 1, __ATOMIC_RELAXED);
	tx_addr(qp, bth, ah, &addr);
	if (!eng->ops.tx_send_zc(eng->ctx, buf, hdr_len, payload, paylen, ib_len, &addr, &zc)) {
		__atomic_fetch_sub(mr->zc_ref, 1, __ATOMIC_RELAXED);
		if (w != NULL)
			w->zc_inflight--;
		return false;
	}
	QP_CNT(qp, TX_PACKETS);
	QP_CNT(qp, TX_ZERO_COPY);
	return true;
}

static unsigned int
run_timers(struct uroce_eng *eng, uint64_t now)
{
	struct uroce_eng_qp *qp, *tmp;
	uint64_t next = UINT64_MAX;
	unsigned int n = 0;

	if (now < eng->next_deadline)
		return 0;
	TAILQ_FOREACH_SAFE(qp, &eng->timer_list, comp.timer_link, tmp) {
		n += comp_timers(qp, now);
		n += cc_timers(qp, now);
		if (qp->comp.rto_deadline == 0 && qp->comp.rnr_deadline == 0 &&
		    qp->cc.deadline == 0) {
			TAILQ_REMOVE(&eng->timer_list, qp, comp.timer_link);
			qp->comp.on_timer_list = false;
			continue;
		}
		if (qp->comp.rto_deadline != 0 && qp->comp.rto_deadline < next)
			next = qp->comp.rto_deadline;
		if (qp->comp.rnr_deadline != 0 && qp->comp.rnr_deadline < next)
			next = qp->comp.rnr_deadline;
		if (qp->cc.deadline != 0 && qp->cc.deadline < next)
			next = qp->cc.deadline;
	}
	/* The walk saw every armed deadline, re-armed ones included. */
	eng->next_deadline = next;
	return n;
}

unsigned int
uroce_eng_poll(struct uroce_eng *eng)
{
	unsigned int budget = eng->budget, done = 0, n;
	struct uroce_eng_qp *qp, *last;
	bool more, stop;

	done += run_timers(eng, eng_now(eng));

	/* Responses first: they unblock the peer's requesters. Each QP on the
	 * list is visited at most once per poll: a QP that still has work is
	 * re-queued behind the one that was last when the walk began. */
	last = TAILQ_LAST(&eng->resp_list, qp_list);
	for (stop = last == NULL; !stop && budget > 0;) {
		qp = TAILQ_FIRST(&eng->resp_list);
		stop = qp == last;
		TAILQ_REMOVE(&eng->resp_list, qp, resp.link);
		qp->resp.on_list = false;
		more = false;
		n = resp_run(qp, budget, &more);
		budget -= UROCE_MIN(n, budget);
		done += n;
		if (more)
			eng_resp_kick(qp);
	}

	last = TAILQ_LAST(&eng->req_list, qp_list);
	for (stop = last == NULL; !stop && budget > 0;) {
		qp = TAILQ_FIRST(&eng->req_list);
		stop = qp == last;
		TAILQ_REMOVE(&eng->req_list, qp, req.link);
		qp->req.on_list = false;
		more = false;
		n = req_run(qp, budget, &more);
		budget -= UROCE_MIN(n, budget);
		done += n;
		if (more)
			eng_req_kick(qp);
	}
	return done;
}
