/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The engine half of lib/daemon: one transport engine, its loopback port,
 * the hand-over to a wire port if there is one, and thin translations
 * between the daemon's neutral structs (daemon_internal.h) and
 * lib/transport's API.
 *
 * Loopback: a packet for one of the daemon's own GIDs (every packet, when
 * there is no wire port) is wrapped in Ethernet/IP/UDP and gets its ICRC
 * (uroce_frame_wrap()), and is queued.
 * The next eng_poll() runs each queued frame through uroce_parse() (frame,
 * ICRC and BTH checks) and gives it to uroce_eng_rx() of the same engine.
 * Delivery is deferred so that the engine is never re-entered from its own
 * tx_send. With a wire port the engine's buffers are the port's, so a
 * looped packet is copied out of the port buffer first.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uroce_daemon.h"
#include "uroce_transport.h"
#include "uroce_wire.h"

#include "daemon_internal.h"

/* Room in front of the IB part for Ethernet (+VLAN) and IPv6 and UDP. */
#define LOOP_HEADROOM 128u

struct loop_frame {
	struct loop_frame *next;
	uint8_t *frame;
	uint32_t len;
	uint32_t pad;
	/* LOOP_HEADROOM bytes, then the IB part, follow */
};

struct eng {
	struct uroce_eng *eng;
	unsigned int n_gid;
	uint8_t gids[UROCE_DAEMON_GID_MAX][16];
	const struct uroce_daemon_port_ops *port; /* NULL: loopback only */
	void *port_ctx;
	void *dctx;              /* the daemon, for daemon_async_event() */
	struct loop_frame *head; /* FIFO of frames to deliver */
	struct loop_frame **tail;
	struct eng_counters cnt;
};

static uint64_t
op_now(void *ctx)
{
	struct eng *e = ctx;
	struct timespec ts;

	if (e->port != NULL && e->port->now_us != NULL)
		return e->port->now_us(e->port_ctx);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint8_t *
loop_alloc(uint32_t ib_len)
{
	struct loop_frame *f = malloc(sizeof(*f) + LOOP_HEADROOM + ib_len);

	if (f == NULL)
		return NULL;
	return (uint8_t *)(f + 1) + LOOP_HEADROOM;
}

static struct loop_frame *
frame_of(uint8_t *buf)
{
	return (struct loop_frame *)(void *)(buf - LOOP_HEADROOM) - 1;
}

static uint8_t *
op_tx_alloc(void *ctx, uint32_t ib_len)
{
	struct eng *e = ctx;

	return e->port != NULL ? e->port->tx_alloc(e->port_ctx, ib_len) : loop_alloc(ib_len);
}

static void
op_tx_free(void *ctx, uint8_t *buf)
{
	struct eng *e = ctx;

	if (e->port != NULL)
		e->port->tx_free(e->port_ctx, buf);
	else
		free(frame_of(buf));
}

/* Is @p gid one of this daemon's GIDs (so packets to it loop back)? */
static bool
gid_is_local(const struct eng *e, const uint8_t gid[16])
{
	unsigned int i;

	if (uroce_gid_is_zero(gid)) /* empty table slots are zero */
		return false;
	for (i = 0; i < e->n_gid; i++)
		if (memcmp(e->gids[i], gid, 16) == 0)
			return true;
	return false;
}

/* Queue a loop frame (a buffer from loop_alloc) for the next eng_poll(). */
static void
loop_enqueue(struct eng *e, uint8_t *buf, uint32_t ib_len, const struct uroce_eng_tx_addr *a)
{
	static const uint8_t mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
	struct loop_frame *f = frame_of(buf);
	struct uroce_encap enc;
	uint32_t elen;

	uroce_eng_tx_encap(a, &enc);
	memcpy(enc.smac, mac, 6);
	memcpy(enc.dmac, mac, 6);
	elen = uroce_frame_wrap(buf, LOOP_HEADROOM, ib_len, &enc);
	if (elen == 0) {
		e->cnt.loop_bad++;
		free(f);
		return;
	}
	f->frame = buf - elen;
	f->len = elen + ib_len;
	f->next = NULL;
	*e->tail = f;
	e->tail = &f->next;
}

static void
op_tx_send(void *ctx, uint8_t *buf, uint32_t ib_len, const struct uroce_eng_tx_addr *a)
{
	struct eng *e = ctx;
	uint8_t *copy;

	if (e->port == NULL) {
		loop_enqueue(e, buf, ib_len, a);
		return;
	}
	if (!gid_is_local(e, a->dgid)) {
		e->cnt.port_tx++;
		e->port->tx_send(e->port_ctx, buf, ib_len, a);
		return;
	}
	/* A packet for ourselves never leaves: loop a copy, free the port buffer. */
	copy = loop_alloc(ib_len);
	if (copy != NULL) {
		memcpy(copy, buf, ib_len);
		loop_enqueue(e, copy, ib_len, a);
	} else {
		e->cnt.loop_bad++;
	}
	e->port->tx_free(e->port_ctx, buf);
}

/* Engine events go to the owning client; the daemon only queues a message. */
static void
op_async_event(void *ctx, enum uroce_event_type t, void *obj)
{
	struct eng *e = ctx;

	switch (t) {
	case UROCE_EVENT_QP_FATAL:
		daemon_async_event(e->dctx, UROCE_ASYNC_QP_FATAL, uroce_eng_qp_num(obj), NULL);
		break;
	case UROCE_EVENT_SQ_DRAINED:
		daemon_async_event(e->dctx, UROCE_ASYNC_SQ_DRAINED, uroce_eng_qp_num(obj), NULL);
		break;
	case UROCE_EVENT_CQ_ERR:
		daemon_async_event(e->dctx, UROCE_ASYNC_CQ_ERR, 0, obj);
		break;
	}
}

static const struct uroce_eng_ops eng_ops = {
	.async_event = op_async_event,
	.now_us = op_now,
	.tx_alloc = op_tx_alloc,
	.tx_send = op_tx_send,
	.tx_free = op_tx_free,
};

struct eng *
eng_create(const struct eng_conf *c)
{
	struct uroce_eng_conf conf;
	struct eng *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->tail = &e->head;
	e->n_gid = c->n_gid;
	memcpy(e->gids, c->gids, sizeof(e->gids));
	e->port = c->port;
	e->port_ctx = c->port_ctx;
	e->dctx = c->dctx;
	memset(&conf, 0, sizeof(conf));
	conf.ops = &eng_ops;
	conf.ctx = e;
	memcpy(conf.gid, c->gids[0], 16);
	conf.port = 1;
	conf.ud_mtu = c->ud_mtu;
	e->eng = uroce_eng_create(&conf);
	if (e->eng == NULL) {
		int err = errno;

		free(e);
		errno = err;
		return NULL;
	}
	if (c->cc != NULL && uroce_eng_cc_set(e->eng, c->cc) != 0) {
		uroce_eng_destroy(e->eng);
		free(e);
		errno = EINVAL;
		return NULL;
	}
	return e;
}

void
eng_rx(struct eng *e, const struct uroce_pkt *pkt, const struct uroce_frame *frame)
{
	e->cnt.port_rx++;
	uroce_eng_rx(e->eng, pkt, frame);
}

static void
loop_drop_all(struct eng *e)
{
	while (e->head != NULL) {
		struct loop_frame *f = e->head;

		e->head = f->next;
		free(f);
	}
	e->tail = &e->head;
}

void
eng_destroy(struct eng *e)
{
	if (e == NULL)
		return;
	loop_drop_all(e);
	uroce_eng_destroy(e->eng);
	free(e);
}

unsigned int
eng_poll(struct eng *e)
{
	struct loop_frame *list = e->head;
	unsigned int work = 0;

	/* Take the queue as it is now; what rx/poll sends waits for the next call. */
	e->head = NULL;
	e->tail = &e->head;
	while (list != NULL) {
		struct loop_frame *f = list;
		struct uroce_frame fr;
		struct uroce_pkt p;

		list = f->next;
		if (uroce_parse(f->frame, f->len, &fr, &p) == UROCE_WIRE_OK) {
			p.owner = f;
			uroce_eng_rx(e->eng, &p, &fr);
			e->cnt.loop_frames++;
		} else {
			e->cnt.loop_bad++;
		}
		free(f);
		work++;
	}
	work += uroce_eng_poll(e->eng);
	return work;
}

unsigned int
eng_counter_values(const struct eng *e, uint64_t *vals, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n && i < UROCE_CNT_MAX; i++)
		vals[i] = uroce_eng_counter(e->eng, (enum uroce_counter)i);
	return UROCE_CNT_MAX;
}

void
eng_counters(const struct eng *e, struct eng_counters *c)
{
	*c = e->cnt;
}

void *
eng_pd_alloc(struct eng *e)
{
	return uroce_eng_pd_alloc(e->eng);
}

int
eng_pd_dealloc(void *pd)
{
	return uroce_eng_pd_dealloc(pd);
}

void *
eng_mr_reg(void *pd, void *addr, uint64_t iova, uint64_t len, int access, uint32_t *lkey,
	   uint32_t *rkey)
{
	struct uroce_eng_mr *mr = uroce_eng_mr_reg(pd, addr, iova, len, access);

	if (mr != NULL) {
		*lkey = uroce_eng_mr_lkey(mr);
		*rkey = uroce_eng_mr_rkey(mr);
	}
	return mr;
}

int
eng_mr_dereg(void *mr)
{
	return uroce_eng_mr_dereg(mr);
}

void *
eng_ah_create(void *pd, const uint8_t sgid[16], const uint8_t dgid[16], uint8_t tclass,
	      uint8_t hop_limit, uint32_t flow_label, uint8_t sl, uint8_t port)
{
	struct uroce_eng_ah_attr at;

	memset(&at, 0, sizeof(at));
	memcpy(at.sgid, sgid, 16);
	memcpy(at.dgid, dgid, 16);
	at.tclass = tclass;
	at.hop_limit = hop_limit;
	at.flow_label = flow_label;
	at.sl = sl;
	at.port_num = port;
	return uroce_eng_ah_create(pd, &at);
}

int
eng_ah_destroy(void *ah)
{
	return uroce_eng_ah_destroy(ah);
}

void *
eng_cq_create(struct eng *e, int cqe)
{
	return uroce_eng_cq_create(e->eng, cqe, NULL);
}

int
eng_cq_destroy(void *cq)
{
	return uroce_eng_cq_destroy(cq);
}

int
eng_poll_cq(void *cq, int n, struct dwc *out)
{
	struct uroce_eng_wc wc[32];
	int got, i;

	if (n > 32)
		n = 32;
	got = uroce_eng_poll_cq(cq, n, wc);
	for (i = 0; i < got; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].wr_id = wc[i].wr_id;
		out[i].status = (uint32_t)wc[i].status;
		out[i].opcode = (uint32_t)wc[i].opcode;
		out[i].flags = wc[i].wc_flags;
		out[i].vendor_err = wc[i].vendor_err;
		out[i].byte_len = wc[i].byte_len;
		out[i].imm = (wc[i].wc_flags & UROCE_WC_WITH_INV) ? wc[i].invalidated_rkey :
								   wc[i].imm_data;
		out[i].qp_num = wc[i].qp_num;
		out[i].src_qp = wc[i].src_qp;
		out[i].pkey_index = wc[i].pkey_index;
		out[i].sl = wc[i].sl;
	}
	return got;
}

void *
eng_qp_create(void *pd, void *send_cq, void *recv_cq, int qp_type, bool sig_all,
	      const struct dcap *cap, uint32_t *qpn)
{
	struct uroce_eng_qp_init_attr ia;
	struct uroce_eng_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = send_cq;
	ia.recv_cq = recv_cq;
	ia.qp_type = (enum uroce_qp_type)qp_type;
	ia.sq_sig_all = sig_all;
	ia.cap.max_send_wr = cap->max_send_wr;
	ia.cap.max_recv_wr = cap->max_recv_wr;
	ia.cap.max_send_sge = cap->max_send_sge;
	ia.cap.max_recv_sge = cap->max_recv_sge;
	ia.cap.max_inline_data = cap->max_inline;
	qp = uroce_eng_qp_create(pd, &ia);
	if (qp != NULL)
		*qpn = uroce_eng_qp_num(qp);
	return qp;
}

int
eng_qp_destroy(void *qp)
{
	return uroce_eng_qp_destroy(qp);
}

int
eng_modify_qp(void *qp, const struct dqp_attr *a, int mask)
{
	struct uroce_eng_qp_attr at;

	memset(&at, 0, sizeof(at));
	memcpy(at.ah_attr.sgid, a->sgid, 16);
	at.qp_state = (enum uroce_qp_state)a->qp_state;
	at.cur_qp_state = (enum uroce_qp_state)a->cur_qp_state;
	at.path_mtu = (enum uroce_mtu)a->path_mtu;
	at.qkey = a->qkey;
	at.rq_psn = a->rq_psn;
	at.sq_psn = a->sq_psn;
	at.dest_qp_num = a->dest_qp_num;
	at.qp_access_flags = (int)a->access;
	at.pkey_index = a->pkey_index;
	at.port_num = a->port_num;
	at.max_rd_atomic = a->max_rd_atomic;
	at.max_dest_rd_atomic = a->max_dest_rd_atomic;
	at.min_rnr_timer = a->min_rnr_timer;
	at.timeout = a->timeout;
	at.retry_cnt = a->retry_cnt;
	at.rnr_retry = a->rnr_retry;
	memcpy(at.ah_attr.dgid, a->dgid, 16);
	at.ah_attr.flow_label = a->flow_label;
	at.ah_attr.hop_limit = a->hop_limit;
	at.ah_attr.tclass = a->tclass;
	at.ah_attr.sl = a->sl;
	at.ah_attr.port_num = a->ah_port;
	return uroce_eng_modify_qp(qp, &at, mask);
}

int
eng_query_qp(void *qp, struct dqp_attr *a, struct dcap *cap)
{
	struct uroce_eng_qp_attr at;
	struct uroce_eng_qp_init_attr ia;
	int rc = uroce_eng_query_qp(qp, &at, &ia);

	if (rc != 0)
		return rc;
	memset(a, 0, sizeof(*a));
	a->qp_state = (uint32_t)at.qp_state;
	a->cur_qp_state = (uint32_t)at.qp_state;
	a->path_mtu = (uint32_t)at.path_mtu;
	a->qkey = at.qkey;
	a->rq_psn = at.rq_psn;
	a->sq_psn = at.sq_psn;
	a->dest_qp_num = at.dest_qp_num;
	a->access = (uint32_t)at.qp_access_flags;
	a->pkey_index = at.pkey_index;
	a->port_num = at.port_num;
	a->max_rd_atomic = at.max_rd_atomic;
	a->max_dest_rd_atomic = at.max_dest_rd_atomic;
	a->min_rnr_timer = at.min_rnr_timer;
	a->timeout = at.timeout;
	a->retry_cnt = at.retry_cnt;
	a->rnr_retry = at.rnr_retry;
	a->sq_draining = at.sq_draining;
	memcpy(a->dgid, at.ah_attr.dgid, 16);
	memcpy(a->sgid, at.ah_attr.sgid, 16);
	a->flow_label = at.ah_attr.flow_label;
	a->hop_limit = at.ah_attr.hop_limit;
	a->tclass = at.ah_attr.tclass;
	a->sl = at.ah_attr.sl;
	a->ah_port = at.ah_attr.port_num;
	cap->max_send_wr = ia.cap.max_send_wr;
	cap->max_recv_wr = ia.cap.max_recv_wr;
	cap->max_send_sge = ia.cap.max_send_sge;
	cap->max_recv_sge = ia.cap.max_recv_sge;
	cap->max_inline = ia.cap.max_inline_data;
	return 0;
}

int
eng_qp_to_err(void *qp)
{
	struct uroce_eng_qp_attr at;

	memset(&at, 0, sizeof(at));
	at.qp_state = UROCE_QPS_ERR;
	return uroce_eng_modify_qp(qp, &at, UROCE_QP_STATE);
}

int
eng_post_send(void *qp, const struct dsend_wr *w)
{
	struct uroce_eng_send_wr wr;
	struct uroce_eng_sge sge[UROCE_MAX_SGE];
	int i;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = w->wr_id;
	wr.opcode = (enum uroce_wr_opcode)w->opcode;
	wr.send_flags = w->flags;
	wr.imm_data = w->imm;
	wr.invalidate_rkey = w->imm;
	if (w->flags & UROCE_SEND_INLINE) {
		/* The daemon's private copy; the engine copies it again at post. */
		sge[0].addr = (uint64_t)(uintptr_t)w->inline_data;
		sge[0].length = w->inline_len;
		sge[0].lkey = 0;
		wr.num_sge = w->inline_len ? 1 : 0;
	} else {
		for (i = 0; i < w->num_sge; i++) {
			sge[i].addr = w->sge[i].addr;
			sge[i].length = w->sge[i].length;
			sge[i].lkey = w->sge[i].lkey;
		}
		wr.num_sge = w->num_sge;
	}
	wr.sg_list = sge;
	if (w->ah != NULL) {
		wr.wr.ud.ah = w->ah;
		wr.wr.ud.remote_qpn = w->remote_qpn;
		wr.wr.ud.remote_qkey = w->remote_qkey;
	} else if (w->opcode == UROCE_WR_ATOMIC_CMP_AND_SWP ||
	    w->opcode == UROCE_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = w->remote_addr;
		wr.wr.atomic.rkey = w->rkey;
		wr.wr.atomic.compare_add = w->compare_add;
		wr.wr.atomic.swap = w->swap;
	} else {
		wr.wr.rdma.remote_addr = w->remote_addr;
		wr.wr.rdma.rkey = w->rkey;
	}
	return uroce_eng_post_send(qp, &wr, NULL);
}

int
eng_post_recv(void *qp, uint64_t wr_id, const struct dsge *s, int num_sge)
{
	struct uroce_eng_recv_wr wr;
	struct uroce_eng_sge sge[UROCE_MAX_SGE];
	int i;

	for (i = 0; i < num_sge; i++) {
		sge[i].addr = s[i].addr;
		sge[i].length = s[i].length;
		sge[i].lkey = s[i].lkey;
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = sge;
	wr.num_sge = num_sge;
	return uroce_eng_post_recv(qp, &wr, NULL);
}
