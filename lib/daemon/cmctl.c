/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The connection manager on the control thread (doc/rdmacm.md): the rdma_cm
 * layer of lib/cm over QP1 (gsi.c), its timers on the control loop, and the
 * CM_* requests of ABI 1.4 that drivers/rdmacm (the drop-in librdmacm)
 * sends. A client's ids and event channels belong to its session; every
 * request names them by handle (generation << 16 | slot, so a stale handle
 * finds nothing). Events go to the id's channel as CM_EVENT messages on the
 * socket end the client passed; a channel whose reader falls behind keeps a
 * bounded backlog, and past it fails (shut down) rather than lose events
 * silently.
 *
 * Trust: every request body is checked field by field; a channel descriptor
 * must be a UNIX SOCK_SEQPACKET socket; a client reaches only its own ids
 * and channels.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "uroce_cma.h"
#include "uroce_common.h"
#include "uroce_shm.h"

#include "core.h"
#include "control.h"
#include "worker.h"
#include "dcm.h"

#define MADS_PER_POLL 64
#define CM_GEN_SHIFT 16
#define CM_SLOT_MASK 0xFFFFu

struct dcm_ev {
	struct dcm_ev *next;
	uint32_t len;
	uint8_t buf[];
};

struct dcm_chan {
	struct session *s;
	uint32_t handle;
	int fd;                         /* the daemon's end */
	bool failed;                    /* shut down: its events are lost */
	struct dcm_ev *head, **tail;    /* backlog */
	unsigned int backlog;
	struct dcm_chan *pending_next;  /* on dcm.pending while it has a backlog */
	bool pending;
};

struct dcm_id {
	struct session *s;
	uint32_t handle;
	struct dcm_chan *ch;
	struct uroce_cma_id *cid;
};

struct dcm_sess {
	struct dcm_chan *chan[UROCE_SHM_CM_MAX_CHANNELS];
	uint16_t chan_gen[UROCE_SHM_CM_MAX_CHANNELS];
	struct dcm_id **id;             /* UROCE_SHM_CM_MAX_IDS slots, allocated on first use */
	uint16_t *id_gen;
	unsigned int n_ids;
};

struct dcm {
	struct uroce_daemon *d;
	struct uroce_cma *cma;
	struct dgsi *gsi;
	uint64_t node_guid;
	struct dcm_chan *pending;       /* channels with a backlog */
	uint64_t cnt[DCM_CNT_MAX];      /* the control thread's */
};

static struct dcm *
dcm_of(struct uroce_daemon *d)
{
	return d->cm;
}

/* ------------------------------------------------------------------------ */
/* Handles                                                                   */
/* ------------------------------------------------------------------------ */

static struct dcm_sess *
sess_of(struct session *s, bool create)
{
	if (s->cm == NULL && create)
		s->cm = calloc(1, sizeof(struct dcm_sess));
	return s->cm;
}

static struct dcm_chan *
chan_get(struct session *s, uint32_t h)
{
	struct dcm_sess *cs = sess_of(s, false);
	uint32_t i = h & CM_SLOT_MASK;
	struct dcm_chan *c;

	if (cs == NULL || i >= UROCE_SHM_CM_MAX_CHANNELS)
		return NULL;
	c = cs->chan[i];
	return c != NULL && c->handle == h ? c : NULL;
}

static struct dcm_id *
id_get(struct session *s, uint32_t h)
{
	struct dcm_sess *cs = sess_of(s, false);
	uint32_t i = h & CM_SLOT_MASK;
	struct dcm_id *x;

	if (cs == NULL || cs->id == NULL || i >= UROCE_SHM_CM_MAX_IDS)
		return NULL;
	x = cs->id[i];
	return x != NULL && x->handle == h ? x : NULL;
}

/* A new id of session @p s on channel @p ch (no CM id yet). */
static struct dcm_id *
id_new(struct session *s, struct dcm_chan *ch)
{
	struct dcm_sess *cs = sess_of(s, true);
	struct dcm_id *x;
	uint32_t i;

	if (cs == NULL)
		return NULL;
	if (cs->id == NULL) {
		cs->id = calloc(UROCE_SHM_CM_MAX_IDS, sizeof(*cs->id));
		cs->id_gen = calloc(UROCE_SHM_CM_MAX_IDS, sizeof(*cs->id_gen));
		if (cs->id == NULL || cs->id_gen == NULL) {
			free(cs->id);
			free(cs->id_gen);
			cs->id = NULL;
			cs->id_gen = NULL;
			return NULL;
		}
	}
	for (i = 0; i < UROCE_SHM_CM_MAX_IDS && cs->id[i] != NULL; i++)
		;
	if (i == UROCE_SHM_CM_MAX_IDS)
		return NULL;
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return NULL;
	x->s = s;
	x->ch = ch;
	/* Generations never make a handle of all ones (UROCE_SHM_HANDLE_NONE). */
	cs->id_gen[i] = (uint16_t)(cs->id_gen[i] % 0xFFFEu + 1);
	x->handle = (uint32_t)cs->id_gen[i] << CM_GEN_SHIFT | i;
	cs->id[i] = x;
	cs->n_ids++;
	return x;
}

static void
id_free(struct dcm_id *x)
{
	struct dcm_sess *cs = x->s->cm;

	if (x->cid != NULL)
		uroce_cma_id_destroy(x->cid); /* what the peer is owed goes out */
	cs->id[x->handle & CM_SLOT_MASK] = NULL;
	cs->n_ids--;
	free(x);
}

/* ------------------------------------------------------------------------ */
/* Channels and events                                                       */
/* ------------------------------------------------------------------------ */

static void
chan_fail(struct dcm *cm, struct dcm_chan *c)
{
	struct dcm_ev *e;

	if (!c->failed)
		shutdown(c->fd, SHUT_RDWR); /* the reader sees the end of the channel */
	c->failed = true;
	while ((e = c->head) != NULL) {
		c->head = e->next;
		cm->cnt[DCM_CNT_CM_EVENTS_LOST]++;
		free(e);
	}
	c->tail = &c->head;
	c->backlog = 0;
}

/* Send what the backlog holds, oldest first, until the socket is full. */
static unsigned int
chan_flush(struct dcm *cm, struct dcm_chan *c)
{
	struct dcm_ev *e;
	unsigned int n = 0;

	while ((e = c->head) != NULL) {
		ssize_t rc = uroce_shm_sock_send(c->fd, e->buf, e->len, -1);

		if (rc == -EAGAIN || rc == -EWOULDBLOCK || rc == -ENOBUFS)
			break;
		c->head = e->next;
		if (c->head == NULL)
			c->tail = &c->head;
		c->backlog--;
		free(e);
		if (rc < 0) {
			chan_fail(cm, c); /* the client closed its end */
			break;
		}
		cm->cnt[DCM_CNT_CM_EVENTS]++;
		n++;
	}
	return n;
}

static void
chan_queue(struct dcm *cm, struct dcm_chan *c, const uint8_t *buf, uint32_t len)
{
	struct dcm_ev *e;

	if (c->failed) {
		cm->cnt[DCM_CNT_CM_EVENTS_LOST]++;
		return;
	}
	if (c->head == NULL) {
		ssize_t rc = uroce_shm_sock_send(c->fd, buf, len, -1);

		if (rc == (ssize_t)len) {
			cm->cnt[DCM_CNT_CM_EVENTS]++;
			return;
		}
		if (rc != -EAGAIN && rc != -EWOULDBLOCK && rc != -ENOBUFS) {
			cm->cnt[DCM_CNT_CM_EVENTS_LOST]++;
			chan_fail(cm, c);
			return;
		}
	}
	if (c->backlog >= UROCE_SHM_CM_CHANNEL_BACKLOG) {
		/* The reader is that far behind: fail loudly, not silently. */
		cm->cnt[DCM_CNT_CM_EVENTS_LOST]++;
		chan_fail(cm, c);
		return;
	}
	e = malloc(sizeof(*e) + len);
	if (e == NULL) {
		cm->cnt[DCM_CNT_CM_EVENTS_LOST]++;
		chan_fail(cm, c);
		return;
	}
	e->next = NULL;
	e->len = len;
	memcpy(e->buf, buf, len);
	*c->tail = e;
	c->tail = &e->next;
	c->backlog++;
	if (!c->pending) {
		c->pending = true;
		c->pending_next = cm->pending;
		cm->pending = c;
	}
}

static unsigned int
flush_pending(struct dcm *cm)
{
	struct dcm_chan **pp = &cm->pending, *c;
	unsigned int n = 0;

	while ((c = *pp) != NULL) {
		n += chan_flush(cm, c);
		if (c->head == NULL) {
			c->pending = false;
			*pp = c->pending_next;
		} else {
			pp = &c->pending_next;
		}
	}
	return n;
}

static void
chan_unpend(struct dcm *cm, struct dcm_chan *c)
{
	struct dcm_chan **pp;

	if (!c->pending)
		return;
	for (pp = &cm->pending; *pp != NULL; pp = &(*pp)->pending_next)
		if (*pp == c) {
			*pp = c->pending_next;
			break;
		}
	c->pending = false;
}

static void
chan_close(struct dcm *cm, struct dcm_chan *c)
{
	struct dcm_sess *cs = c->s->cm;

	chan_unpend(cm, c);
	chan_fail(cm, c);
	close(c->fd);
	cs->chan[c->handle & CM_SLOT_MASK] = NULL;
	free(c);
}

static void
addr_out(struct uroce_shm_cm_addr *o, const struct uroce_cma_addr *a)
{
	memset(o, 0, sizeof(*o));
	o->family = a->family;
	o->port = a->port;
	memcpy(o->ip, a->ip, 16);
}

static void
route_out(struct uroce_shm_cm_route *o, const struct uroce_cma_id *cid)
{
	struct uroce_cma_route r;

	memset(o, 0, sizeof(*o));
	if (cid == NULL || uroce_cma_query(cid, &r) != 0)
		return;
	addr_out(&o->src, &r.src);
	addr_out(&o->dst, &r.dst);
	memcpy(o->sgid, r.sgid, 16);
	memcpy(o->dgid, r.dgid, 16);
	o->flags = (r.bound ? UROCE_SHM_CM_ROUTE_F_BOUND : 0) |
		   (r.resolved ? UROCE_SHM_CM_ROUTE_F_RESOLVED : 0) |
		   (r.has_path ? UROCE_SHM_CM_ROUTE_F_PATH : 0);
	o->sgid_index = r.sgid_index;
	o->pkey = r.pkey;
	o->mtu = r.mtu;
	o->hop_limit = r.hop_limit;
	o->traffic_class = r.traffic_class;
	o->packet_life_time = r.packet_life_time;
	o->flow_label = r.flow_label;
	o->sl = r.sl;
	o->rate = r.rate;
}

static void
param_out(struct uroce_shm_cm_conn_param *o, const struct uroce_cma_event *ev)
{
	const uint8_t *pd = ev->ud ? ev->ud_param.private_data : ev->conn.private_data;
	uint8_t len = ev->ud ? ev->ud_param.private_data_len : ev->conn.private_data_len;

	memset(o, 0, sizeof(*o));
	if (ev->ud) {
		o->qp_num = ev->ud_param.qp_num;
	} else {
		o->qp_num = ev->conn.qp_num;
		o->srq = ev->conn.srq;
		o->responder_resources = ev->conn.responder_resources;
		o->initiator_depth = ev->conn.initiator_depth;
		o->flow_control = ev->conn.flow_control;
		o->retry_count = ev->conn.retry_count;
		o->rnr_retry_count = ev->conn.rnr_retry_count;
	}
	if (len > UROCE_SHM_CM_PDATA_MAX)
		len = UROCE_SHM_CM_PDATA_MAX;
	if (pd != NULL && len > 0)
		memcpy(o->private_data, pd, len);
	o->private_data_len = len;
}

static void
event_send(struct dcm *cm, struct dcm_id *x, uint32_t listen_handle,
	   const struct uroce_cma_event *ev)
{
	uint8_t buf[sizeof(struct uroce_shm_msg_hdr) + sizeof(struct uroce_shm_msg_cm_event)];
	struct uroce_shm_msg_cm_event *e;
	int n;

	n = uroce_shm_msg_init(buf, sizeof(buf), UROCE_SHM_MSG_CM_EVENT, 0, true, 0);
	if (n != (int)sizeof(buf))
		return;
	e = (void *)(buf + sizeof(struct uroce_shm_msg_hdr));
	e->id = x->handle;
	e->listen_id = listen_handle;
	e->event = ev->type;
	e->status = ev->status;
	if (ev->ud) {
		e->flags |= UROCE_SHM_CM_EV_F_UD;
		e->qkey = ev->ud_param.qkey;
		if (ev->ud_param.ah_valid) {
			e->flags |= UROCE_SHM_CM_EV_F_AH;
			memcpy(e->ah_dgid, ev->ud_param.dgid, 16);
			e->ah_flow_label = ev->ud_param.flow_label;
			e->ah_sgid_index = ev->ud_param.sgid_index;
			e->ah_hop_limit = ev->ud_param.hop_limit;
			e->ah_traffic_class = ev->ud_param.traffic_class;
		}
	}
	route_out(&e->route, x->cid);
	param_out(&e->param, ev);
	uroce_log(UROCE_LOG_DEBUG, "cm: event %s status %d to id 0x%x", uroce_cma_event_str(ev->type),
		  ev->status, x->handle);
	chan_queue(cm, x->ch, buf, (uint32_t)n);
}

/* The rdma_cm layer's events: to the id's channel; a request gets a new id. */
static int
cma_event(void *ctx, struct uroce_cma_id *cid, const struct uroce_cma_event *ev)
{
	struct dcm *cm = ctx;
	struct dcm_id *x, *l;

	if (ev->type != UROCE_CMA_EV_CONNECT_REQUEST) {
		x = uroce_cma_id_owner(cid);
		if (x != NULL)
			event_send(cm, x, UROCE_SHM_HANDLE_NONE, ev);
		return 0;
	}
	l = uroce_cma_id_owner(ev->listen_id);
	if (l == NULL || l->ch->failed)
		return -ECONNREFUSED;
	x = id_new(l->s, l->ch);
	if (x == NULL)
		return -ENOMEM; /* refused: the session has too many ids */
	x->cid = cid;
	uroce_cma_id_set_owner(cid, x);
	event_send(cm, x, l->handle, ev);
	return 0;
}

static uint64_t
cma_now(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* One line per CM MAD at debug level: what troubleshooting needs first. */
static void
mad_log(const char *dir, const struct uroce_cm_addr *peer, const uint8_t *mad)
{
	uint16_t attr = uroce_get_be16(mad + 16);
	char gid[INET6_ADDRSTRLEN], why[48] = "";

	inet_ntop(AF_INET6, peer->dgid, gid, sizeof(gid));
	if (attr == UROCE_CM_ATTR_REJ)
		snprintf(why, sizeof(why), " reason %u (%s)", uroce_get_be16(mad + 34),
			 uroce_cm_rej_reason_str(uroce_get_be16(mad + 34)));
	uroce_log(UROCE_LOG_DEBUG, "cm: %s %s %s %s comm 0x%08x/0x%08x tid 0x%016" PRIx64 "%s", dir,
		  uroce_cm_attr_name(attr), dir[0] == 't' ? "to" : "from", gid,
		  uroce_get_be32(mad + 24), uroce_get_be32(mad + 28), uroce_get_be64(mad + 8), why);
}

static int
cma_send(void *ctx, const struct uroce_cm_addr *to, const uint8_t *mad)
{
	struct dcm *cm = ctx;

	mad_log("tx", to, mad);
	return gsi_send(cm->gsi, to, mad);
}

/* The next hop through the port (worker 0's context: the one QP1 sends on). */
static int
cma_resolve(void *ctx, const uint8_t gid[16])
{
	struct dcm *cm = ctx;

	return route_prime(cm->d, gid);
}

static const struct uroce_cma_ops dcm_cma_ops = {
	.now_us = cma_now,
	.send = cma_send,
	.event = cma_event,
	.resolve = cma_resolve,
};

/* ------------------------------------------------------------------------ */
/* MADs from QP1                                                             */
/* ------------------------------------------------------------------------ */

/*
 * Sort one MAD by class and method (IBA 13.4.5, 13.4.7): the CM's Sends go
 * to the CM; a Get or Set nobody here serves (any other class, or the CM
 * class's ClassPortInfo) is answered GetResp "unsupported method/attribute"
 * as Linux's MAD layer answers it; anything else needs no answer.
 */
static void
mad_in(void *arg, const struct uroce_cm_addr *from, const uint8_t *mad)
{
	struct dcm *cm = arg;
	struct uroce_mad_hdr h;
	struct uroce_cm_addr to;
	uint8_t resp[UROCE_MAD_LEN];

	uroce_mad_hdr_decode(mad, &h);
	if (h.base_version != UROCE_MAD_BASE_VERSION) {
		cm->cnt[DCM_CNT_MAD_BAD_VERSION]++;
		return;
	}
	if (h.mgmt_class == UROCE_MGMT_CLASS_CM && h.class_version == UROCE_CM_CLASS_VERSION &&
	    h.method == UROCE_MAD_METHOD_SEND) {
		mad_log("rx", from, mad);
		uroce_cma_rx(cm->cma, from, mad, UROCE_MAD_LEN);
		return;
	}
	if (h.method != UROCE_MAD_METHOD_GET && h.method != UROCE_MAD_METHOD_SET) {
		cm->cnt[DCM_CNT_MAD_UNSUPPORTED_DROPPED]++;
		return;
	}
	memcpy(resp, mad, sizeof(resp));
	h.method = UROCE_MAD_METHOD_GET_RESP;
	h.status = UROCE_MAD_STATUS_UNSUPPORTED_METHOD_ATTR;
	uroce_mad_hdr_encode(resp, &h);
	to = *from;
	if (gsi_send(cm->gsi, &to, resp) == 0)
		cm->cnt[DCM_CNT_MAD_UNSUPPORTED_ANSWERED]++;
}

/* ------------------------------------------------------------------------ */
/* Requests                                                                  */
/* ------------------------------------------------------------------------ */

static bool
addr_in(const struct uroce_shm_cm_addr *in, struct uroce_cma_addr *a)
{
	if (in->reserved != 0)
		return false;
	memset(a, 0, sizeof(*a));
	a->family = in->family;
	a->port = in->port;
	memcpy(a->ip, in->ip, 16);
	return true;
}

static bool
param_in(const struct uroce_shm_cm_conn_param *in, struct uroce_cma_conn_param *p)
{
	if (in->reserved != 0 || in->private_data_len > UROCE_SHM_CM_PDATA_MAX)
		return false;
	memset(p, 0, sizeof(*p));
	p->private_data = in->private_data;
	p->private_data_len = in->private_data_len;
	p->responder_resources = in->responder_resources;
	p->initiator_depth = in->initiator_depth;
	p->flow_control = in->flow_control;
	p->retry_count = in->retry_count;
	p->rnr_retry_count = in->rnr_retry_count;
	p->srq = in->srq;
	p->qp_num = in->qp_num;
	return p->qp_num <= 0xFFFFFF;
}

static int
route_reply(struct dcm *cm, struct dcm_id *x, struct reply *r)
{
	struct uroce_shm_msg_cm_route_resp *p = r->body;

	route_out(&p->route, x->cid);
	p->node_guid = cm->node_guid;
	return 0;
}

static int
do_channel_open(struct dcm *cm, struct session *s, const void *body, int *fd, struct reply *r)
{
	const struct uroce_shm_msg_cm_channel_open_req *q = body;
	struct uroce_shm_msg_handle *p = r->body;
	struct dcm_sess *cs;
	struct dcm_chan *c;
	int type = 0, dom = 0, fl;
	socklen_t sl = sizeof(int);
	uint32_t i;

	(void)cm;
	if (q->flags != 0 || q->reserved != 0 || *fd < 0)
		return -EINVAL;
	/* Only a UNIX SOCK_SEQPACKET socket: one event per record, never a file. */
	if (getsockopt(*fd, SOL_SOCKET, SO_TYPE, &type, &sl) != 0 || type != SOCK_SEQPACKET)
		return -EINVAL;
	sl = sizeof(int);
	if (getsockopt(*fd, SOL_SOCKET, SO_DOMAIN, &dom, &sl) != 0 || dom != AF_UNIX)
		return -EINVAL;
	cs = sess_of(s, true);
	if (cs == NULL)
		return -ENOMEM;
	for (i = 0; i < UROCE_SHM_CM_MAX_CHANNELS && cs->chan[i] != NULL; i++)
		;
	if (i == UROCE_SHM_CM_MAX_CHANNELS)
		return -EMFILE;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	/* The daemon never waits on a client: a full socket means a backlog. */
	fl = fcntl(*fd, F_GETFL);
	if (fl < 0 || fcntl(*fd, F_SETFL, fl | O_NONBLOCK) != 0) {
		free(c);
		return -EINVAL;
	}
	c->s = s;
	c->fd = *fd;
	*fd = -1;
	c->tail = &c->head;
	cs->chan_gen[i] = (uint16_t)(cs->chan_gen[i] % 0xFFFEu + 1);
	c->handle = (uint32_t)cs->chan_gen[i] << CM_GEN_SHIFT | i;
	cs->chan[i] = c;
	p->handle = c->handle;
	return 0;
}

static int
do_channel_close(struct dcm *cm, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dcm_chan *c = chan_get(s, q->handle);
	struct dcm_sess *cs = s->cm;
	uint32_t i;

	if (q->reserved != 0)
		return -EINVAL;
	if (c == NULL)
		return -ENOENT;
	for (i = 0; cs->id != NULL && i < UROCE_SHM_CM_MAX_IDS; i++)
		if (cs->id[i] != NULL && cs->id[i]->ch == c)
			return -EBUSY; /* rdma_destroy_event_channel: ids first */
	chan_close(cm, c);
	return 0;
}

static int
do_create_id(struct dcm *cm, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_cm_create_id_req *q = body;
	struct uroce_shm_msg_handle *p = r->body;
	struct dcm_chan *c = chan_get(s, q->channel);
	struct dcm_id *x;

	if (q->reserved != 0)
		return -EINVAL;
	if (c == NULL)
		return -ENOENT;
	x = id_new(s, c);
	if (x == NULL)
		return -ENOMEM;
	x->cid = uroce_cma_id_create(cm->cma, x, q->ps, (enum uroce_qp_type)q->qp_type);
	if (x->cid == NULL) {
		int err = errno;

		id_free(x);
		return -err;
	}
	p->handle = x->handle;
	return 0;
}

static int
do_migrate(struct session *s, const void *body)
{
	const struct uroce_shm_msg_cm_migrate_req *q = body;
	struct dcm_id *x = id_get(s, q->id);
	struct dcm_chan *c = chan_get(s, q->channel);

	if (x == NULL || c == NULL)
		return -ENOENT;
	/* Events from now on go to the new channel; those already written to
	 * the old one are the client's to move (drivers/rdmacm does). */
	x->ch = c;
	return 0;
}

static int
do_set_option(struct dcm_id *x, const void *body)
{
	const struct uroce_shm_msg_cm_option_req *q = body;

	if (q->reserved != 0)
		return -EINVAL;
	return uroce_cma_set_option(x->cid, (int)q->option, q->value);
}

static int
do_addr_req(struct dcm *cm, uint16_t type, struct dcm_id *x, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_cm_addr_req *q = body;
	struct uroce_cma_addr src, dst;
	int rc;

	if (!addr_in(&q->src, &src) || !addr_in(&q->dst, &dst))
		return -EINVAL;
	switch (type) {
	case UROCE_SHM_MSG_CM_BIND:
		rc = q->arg != 0 ? -EINVAL : uroce_cma_bind(x->cid, &src);
		break;
	case UROCE_SHM_MSG_CM_RESOLVE_ADDR:
		rc = uroce_cma_resolve_addr(x->cid, src.family != 0 ? &src : NULL, &dst, q->arg);
		break;
	case UROCE_SHM_MSG_CM_RESOLVE_ROUTE:
		rc = uroce_cma_resolve_route(x->cid);
		break;
	default: /* LISTEN */
		rc = uroce_cma_listen(x->cid, (int)(int32_t)q->arg);
		break;
	}
	return rc != 0 ? rc : route_reply(cm, x, r);
}

static int
do_conn(uint16_t type, struct dcm_id *x, const void *body)
{
	const struct uroce_shm_msg_cm_conn_req *q = body;
	struct uroce_cma_conn_param p;

	if (q->reserved != 0 || !param_in(&q->param, &p))
		return -EINVAL;
	if (type == UROCE_SHM_MSG_CM_CONNECT)
		return uroce_cma_connect(x->cid, &p);
	return uroce_cma_accept(x->cid, &p);
}

static int
do_reject(struct dcm_id *x, const void *body)
{
	const struct uroce_shm_msg_cm_reject_req *q = body;

	if (q->reserved != 0 || q->private_data_len > UROCE_CM_REJ_PDATA)
		return -EINVAL;
	return uroce_cma_reject(x->cid, q->private_data, q->private_data_len, q->reason);
}

static int
do_qp_attr(struct dcm_id *x, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_cm_qp_attr_req *q = body;
	struct uroce_shm_msg_cm_qp_attr_resp *p = r->body;
	struct uroce_cm_qp_attr a;
	int mask, rc;

	if (q->qp_state != UROCE_QPS_INIT && q->qp_state != UROCE_QPS_RTR &&
	    q->qp_state != UROCE_QPS_RTS)
		return -EINVAL;
	rc = uroce_cma_init_qp_attr(x->cid, (enum uroce_qp_state)q->qp_state, &a, &mask);
	if (rc != 0)
		return rc;
	p->mask = (uint32_t)mask;
	p->qp_state = a.qp_state;
	p->qp_access_flags = (uint32_t)a.qp_access_flags;
	p->qkey = a.qkey;
	p->dest_qp_num = a.dest_qp_num;
	p->rq_psn = a.rq_psn;
	p->sq_psn = a.sq_psn;
	p->flow_label = a.flow_label;
	memcpy(p->dgid, a.dgid, 16);
	p->pkey_index = a.pkey_index;
	p->port_num = a.port_num;
	p->path_mtu = (uint8_t)a.path_mtu;
	p->max_dest_rd_atomic = a.max_dest_rd_atomic;
	p->max_rd_atomic = a.max_rd_atomic;
	p->min_rnr_timer = a.min_rnr_timer;
	p->timeout = a.timeout;
	p->retry_cnt = a.retry_cnt;
	p->rnr_retry = a.rnr_retry;
	p->sgid_index = a.sgid_index;
	p->hop_limit = a.hop_limit;
	p->traffic_class = a.traffic_class;
	p->sl = a.sl;
	return 0;
}

int
dcm_dispatch(struct uroce_daemon *d, struct session *s, uint16_t type, const void *body, int *fd,
	     struct reply *r)
{
	struct dcm *cm = dcm_of(d);
	const uint32_t *idp = body; /* every request but CHANNEL_OPEN starts with its handle */
	struct dcm_id *x;

	/* A client of an older minor knows none of these. */
	if (cm == NULL || s->minor < 4)
		return -EOPNOTSUPP;
	switch (type) {
	case UROCE_SHM_MSG_CM_CHANNEL_OPEN:
		return do_channel_open(cm, s, body, fd, r);
	case UROCE_SHM_MSG_CM_CHANNEL_CLOSE:
		return do_channel_close(cm, s, body);
	case UROCE_SHM_MSG_CM_CREATE_ID:
		return do_create_id(cm, s, body, r);
	case UROCE_SHM_MSG_CM_MIGRATE_ID:
		return do_migrate(s, body);
	default:
		break;
	}
	x = id_get(s, *idp);
	if (x == NULL)
		return -ENOENT;
	switch (type) {
	case UROCE_SHM_MSG_CM_DESTROY_ID:
		if (((const struct uroce_shm_msg_handle *)body)->reserved != 0)
			return -EINVAL;
		id_free(x);
		return 0;
	case UROCE_SHM_MSG_CM_SET_OPTION:
		return do_set_option(x, body);
	case UROCE_SHM_MSG_CM_BIND:
	case UROCE_SHM_MSG_CM_RESOLVE_ADDR:
	case UROCE_SHM_MSG_CM_RESOLVE_ROUTE:
	case UROCE_SHM_MSG_CM_LISTEN:
		return do_addr_req(cm, type, x, body, r);
	case UROCE_SHM_MSG_CM_CONNECT:
	case UROCE_SHM_MSG_CM_ACCEPT:
		return do_conn(type, x, body);
	case UROCE_SHM_MSG_CM_REJECT:
		return do_reject(x, body);
	case UROCE_SHM_MSG_CM_ESTABLISH:
		return uroce_cma_establish(x->cid);
	case UROCE_SHM_MSG_CM_DISCONNECT:
		return uroce_cma_disconnect(x->cid);
	case UROCE_SHM_MSG_CM_NOTIFY:
		return uroce_cma_notify(x->cid,
					(int)((const struct uroce_shm_msg_cm_notify_req *)body)->event);
	case UROCE_SHM_MSG_CM_INIT_QP_ATTR:
		return do_qp_attr(x, body, r);
	case UROCE_SHM_MSG_CM_QUERY:
		return route_reply(cm, x, r);
	default:
		return -EOPNOTSUPP;
	}
}

void
dcm_session_free(struct uroce_daemon *d, struct session *s)
{
	struct dcm_sess *cs = s->cm;
	struct dcm *cm = dcm_of(d);
	uint32_t i;

	if (cs == NULL)
		return;
	/* Ids first: their peers are told (REJ, DREQ) as the consumer left. */
	for (i = 0; cs->id != NULL && i < UROCE_SHM_CM_MAX_IDS; i++)
		if (cs->id[i] != NULL)
			id_free(cs->id[i]);
	for (i = 0; i < UROCE_SHM_CM_MAX_CHANNELS; i++)
		if (cs->chan[i] != NULL)
			chan_close(cm, cs->chan[i]);
	free(cs->id);
	free(cs->id_gen);
	free(cs);
	s->cm = NULL;
}

/* ------------------------------------------------------------------------ */
/* Polling, counters, life                                                   */
/* ------------------------------------------------------------------------ */

unsigned int
dcm_control_poll(struct uroce_daemon *d)
{
	struct dcm *cm = dcm_of(d);
	unsigned int work;

	if (cm == NULL)
		return 0;
	work = gsi_take(cm->gsi, MADS_PER_POLL, mad_in, cm);
	work += uroce_cma_poll(cm->cma);
	if (cm->pending != NULL)
		work += flush_pending(cm);
	return work;
}

unsigned int
dcm_worker_poll(struct uroce_daemon *d, struct dworker *w)
{
	struct dcm *cm = dcm_of(d);

	return cm != NULL && w->idx == 0 ? gsi_worker_poll(cm->gsi) : 0;
}

bool
dcm_worker_pending(struct uroce_daemon *d, struct dworker *w)
{
	struct dcm *cm = dcm_of(d);

	return cm != NULL && w->idx == 0 && gsi_pending(cm->gsi);
}

static const char *const dcm_names[DCM_CNT_MAX] = {
#define DCM_X(sym, name, desc) [DCM_CNT_##sym] = name,
	DCM_GSI_COUNTERS(DCM_X)
#undef DCM_X
};

const char *
uroce_daemon_cm_counter_name(unsigned int i)
{
	if (i < DCM_CNT_MAX)
		return dcm_names[i];
	return uroce_cm_counter_name(i - DCM_CNT_MAX);
}

unsigned int
uroce_daemon_cm_counters(struct uroce_daemon *d, uint64_t *vals, unsigned int n)
{
	struct dcm *cm = d != NULL ? dcm_of(d) : NULL;
	uint64_t c[DCM_CNT_MAX];
	unsigned int i, total = DCM_CNT_MAX + UROCE_CM_CNT_MAX;

	if (cm == NULL)
		return 0;
	memcpy(c, cm->cnt, sizeof(c));
	gsi_counters(cm->gsi, c);
	c[DCM_CNT_CM_IDS] = uroce_cm_id_count(uroce_cma_cm(cm->cma));
	c[DCM_CNT_CM_RDMA_IDS] = uroce_cma_id_count(cm->cma);
	for (i = 0; i < n && i < total; i++)
		vals[i] = i < DCM_CNT_MAX ? c[i] :
					    uroce_cm_counter(uroce_cma_cm(cm->cma), i - DCM_CNT_MAX);
	return total;
}

int
dcm_create(struct uroce_daemon *d, const struct uroce_daemon_conf *conf)
{
	struct uroce_cma_conf cc;
	struct dcm *cm;
	unsigned int i;
	int err;

	cm = calloc(1, sizeof(*cm));
	if (cm == NULL)
		return -ENOMEM;
	cm->d = d;
	cm->node_guid = daemon_node_guid(d);
	cm->gsi = gsi_create(d, d->w[0]);
	if (cm->gsi == NULL) {
		err = errno;
		free(cm);
		return -err;
	}
	memset(&cc, 0, sizeof(cc));
	cc.ops = &dcm_cma_ops;
	cc.ctx = cm;
	cc.ca_guid = cm->node_guid;
	cc.seed = (uint32_t)cma_now(NULL) ^ (uint32_t)getpid() << 16;
	cc.n_gid = d->n_gid;
	for (i = 0; i < d->n_gid; i++)
		memcpy(cc.gids[i], d->gids[i], 16);
	cc.active_mtu = d->active_mtu;
	cc.packet_life_time = conf->cm_packet_life_time;
	cc.cm_response_timeout = conf->cm_response_timeout;
	cc.max_cm_retries = conf->cm_max_retries;
	cm->cma = uroce_cma_create(&cc);
	if (cm->cma == NULL) {
		err = errno;
		gsi_destroy(cm->gsi);
		free(cm);
		return -err;
	}
	d->cm = cm;
	return 0;
}

void
dcm_destroy(struct uroce_daemon *d)
{
	struct dcm *cm = dcm_of(d);

	if (cm == NULL)
		return;
	uroce_cma_destroy(cm->cma);
	gsi_destroy(cm->gsi);
	free(cm);
	d->cm = NULL;
}
