/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * rdma_cm ids: each is one daemon id on the device it is bound to, or one
 * per device while bound to a wildcard address without a device (a
 * listener on any address hears every device, as on Linux; the same port on
 * each). Addresses go to the daemon as GIDs; what it answers (the bound and
 * resolved endpoints, the path) fills id->route, id->verbs, id->pd and
 * id->port_num as librdmacm fills them from the kernel.
 */

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rc_internal.h"

pthread_mutex_t rc_lock = PTHREAD_MUTEX_INITIALIZER;
struct rc_id *rc_ids;

/* Under rc_lock. */
struct rc_id *
rc_id_find(struct rc_dev *d, uint32_t handle)
{
	struct rc_id *x;
	unsigned int k;

	for (x = rc_ids; x != NULL; x = x->next)
		for (k = 0; k < x->nb; k++)
			if (x->b[k].dev == d && x->b[k].handle == handle)
				return x;
	return NULL;
}

struct rc_id *
rc_id_alloc(struct rdma_event_channel *ch, void *context, enum rdma_port_space ps,
	    enum ibv_qp_type qpt)
{
	struct rc_id *x = calloc(1, sizeof(*x));

	if (x == NULL)
		return NULL;
	pthread_mutex_init(&x->lock, NULL);
	pthread_cond_init(&x->cond, NULL);
	x->id.context = context;
	x->id.ps = ps;
	x->id.qp_type = qpt;
	x->reuseaddr = -1;
	x->afonly = -1;
	if (ch == NULL) {
		struct rc_chan *c = rc_chan_new();

		if (c == NULL) {
			free(x);
			return NULL;
		}
		ch = &c->ch;
		x->sync = true;
	}
	x->id.channel = ch;
	return x;
}

void
rc_busy(struct rc_id *x, bool on)
{
	pthread_mutex_lock(&x->lock);
	if (on) {
		x->busy++;
	} else {
		x->busy--;
		pthread_cond_broadcast(&x->cond);
	}
	pthread_mutex_unlock(&x->lock);
}

void
rc_wait_idle(struct rc_id *x)
{
	pthread_mutex_lock(&x->lock);
	while (x->busy > 0)
		pthread_cond_wait(&x->cond, &x->lock);
	pthread_mutex_unlock(&x->lock);
}

static void
id_free(struct rc_id *x)
{
	if (x->sync)
		rc_chan_free(rc_chan_of(x->id.channel));
	free(x->id.route.path_rec);
	free(x->qp_init_attr);
	free(x->connect);
	pthread_cond_destroy(&x->cond);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

int
rc_id_create(struct rdma_event_channel *ch, struct rdma_cm_id **idp, void *context,
	     enum rdma_port_space ps, enum ibv_qp_type qpt)
{
	struct rc_id *x;

	/* As the kernel's rdma_ucm: an unknown port space is EINVAL here, not
	 * an odd error later (udaddy's -p takes a port space, not a port). */
	if (idp == NULL || (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP && ps != RDMA_PS_IB &&
			    ps != RDMA_PS_IPOIB))
		return rc_err(EINVAL);
	if (rc_init() != 0 || rc_ndevices() == 0)
		return rc_err(ENODEV);
	x = rc_id_alloc(ch, context, ps, qpt);
	if (x == NULL)
		return rc_err(ENOMEM);
	pthread_mutex_lock(&rc_lock);
	x->next = rc_ids;
	rc_ids = x;
	pthread_mutex_unlock(&rc_lock);
	*idp = &x->id;
	return 0;
}

RC_EXPORT int
rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
	       enum rdma_port_space ps)
{
	return rc_id_create(channel, id, context, ps,
			    ps == RDMA_PS_IPOIB || ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC);
}

void
rc_id_set_dev(struct rc_id *x, struct rc_dev *d)
{
	x->id.verbs = d->verbs;
	if (x->id.pd == NULL)
		x->id.pd = d->pd;
	x->id.port_num = 1;
}

/* ------------------------------------------------------------------------ */
/* Addresses and routes                                                      */
/* ------------------------------------------------------------------------ */

static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* A socket address as the daemon takes it. @return 0, EAFNOSUPPORT. */
static int
addr_in(const struct sockaddr *sa, struct uroce_shm_cm_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (sa == NULL)
		return 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)sa;

		a->family = 4;
		a->port = ntohs(s->sin_port);
		memcpy(a->ip, v4_prefix, 12);
		memcpy(a->ip + 12, &s->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)sa;

		/* An IPv4-mapped IPv6 address is IPv4 on the wire. */
		a->family = memcmp(&s->sin6_addr, v4_prefix, 12) == 0 ? 4 : 6;
		a->port = ntohs(s->sin6_port);
		memcpy(a->ip, &s->sin6_addr, 16);
		return 0;
	}
	return EAFNOSUPPORT;
}

static void
addr_out(struct sockaddr_storage *ss, const struct uroce_shm_cm_addr *a)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == 4) {
		struct sockaddr_in *s = (void *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(a->port);
		memcpy(&s->sin_addr, a->ip + 12, 4);
	} else if (a->family == 6) {
		struct sockaddr_in6 *s = (void *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(a->port);
		memcpy(&s->sin6_addr, a->ip, 16);
	}
}

void
rc_route_set(struct rc_id *x, const struct uroce_shm_cm_route *r)
{
	struct rdma_route *rt = &x->id.route;
	struct ibv_sa_path_rec *p;

	if (r->flags & UROCE_SHM_CM_ROUTE_F_BOUND)
		addr_out(&rt->addr.src_storage, &r->src);
	if (!(r->flags & UROCE_SHM_CM_ROUTE_F_RESOLVED))
		return;
	addr_out(&rt->addr.dst_storage, &r->dst);
	memcpy(rt->addr.addr.ibaddr.sgid.raw, r->sgid, 16);
	memcpy(rt->addr.addr.ibaddr.dgid.raw, r->dgid, 16);
	rt->addr.addr.ibaddr.pkey = htobe16(r->pkey);
	if (!(r->flags & UROCE_SHM_CM_ROUTE_F_PATH))
		return;
	if (rt->path_rec == NULL) {
		rt->path_rec = calloc(1, sizeof(*rt->path_rec));
		if (rt->path_rec == NULL)
			return;
	}
	p = rt->path_rec;
	memcpy(p->dgid.raw, r->dgid, 16);
	memcpy(p->sgid.raw, r->sgid, 16);
	p->flow_label = htobe32(r->flow_label);
	p->hop_limit = r->hop_limit;
	p->traffic_class = r->traffic_class;
	p->reversible = 1;
	p->numb_path = 1;
	p->pkey = htobe16(r->pkey);
	p->sl = r->sl;
	p->mtu_selector = 2; /* exactly */
	p->mtu = r->mtu;
	p->rate_selector = 2;
	p->rate = r->rate;
	p->packet_life_time_selector = 2;
	p->packet_life_time = r->packet_life_time;
	rt->num_paths = 1;
}

/* ------------------------------------------------------------------------ */
/* Daemon ids                                                                */
/* ------------------------------------------------------------------------ */

static int
set_option(struct rc_dev *d, uint32_t handle, uint32_t opt, uint32_t val)
{
	struct uroce_shm_msg_cm_option_req q = {.id = handle, .option = opt, .value = val};

	return rc_call(d, UROCE_SHM_MSG_CM_SET_OPTION, &q, sizeof(q), NULL, 0, -1);
}

/* A daemon id for @p x on @p d, with the options set so far. @return 0 or errno. */
static int
bind_dev(struct rc_id *x, struct rc_dev *d)
{
	struct uroce_shm_msg_cm_create_id_req q;
	struct uroce_shm_msg_handle h;
	int rc;

	rc = rc_dev_open(d);
	if (rc == 0 && !d->open)
		rc = ENODEV;
	if (rc == 0)
		rc = rc_chan_attach(rc_chan_of(x->id.channel), d);
	if (rc != 0)
		return rc;
	memset(&q, 0, sizeof(q));
	q.channel = rc_chan_handle(rc_chan_of(x->id.channel), d);
	q.ps = (uint16_t)x->id.ps;
	q.qp_type = (uint8_t)x->id.qp_type;
	rc = rc_call(d, UROCE_SHM_MSG_CM_CREATE_ID, &q, sizeof(q), &h, sizeof(h), -1);
	if (rc != 0)
		return rc;
	if (x->tos_set)
		rc = set_option(d, h.handle, RDMA_OPTION_ID_TOS, x->tos);
	if (rc == 0 && x->reuseaddr >= 0)
		rc = set_option(d, h.handle, RDMA_OPTION_ID_REUSEADDR, (uint32_t)x->reuseaddr);
	if (rc == 0 && x->afonly >= 0)
		rc = set_option(d, h.handle, RDMA_OPTION_ID_AFONLY, (uint32_t)x->afonly);
	if (rc == 0 && x->ack_timeout != 0)
		rc = set_option(d, h.handle, RDMA_OPTION_ID_ACK_TIMEOUT, x->ack_timeout);
	if (rc != 0) {
		rc_call(d, UROCE_SHM_MSG_CM_DESTROY_ID, &h, sizeof(h), NULL, 0, -1);
		return rc;
	}
	pthread_mutex_lock(&rc_lock);
	x->b[x->nb].dev = d;
	x->b[x->nb].handle = h.handle;
	x->nb++;
	pthread_mutex_unlock(&rc_lock);
	return 0;
}

/* Drop daemon id @p k of @p x. */
static void
unbind_dev(struct rc_id *x, unsigned int k)
{
	struct uroce_shm_msg_handle h = {.handle = x->b[k].handle};
	struct rc_dev *d = x->b[k].dev;

	pthread_mutex_lock(&rc_lock);
	x->b[k] = x->b[x->nb - 1];
	x->nb--;
	pthread_mutex_unlock(&rc_lock);
	if (!d->dead)
		rc_call(d, UROCE_SHM_MSG_CM_DESTROY_ID, &h, sizeof(h), NULL, 0, -1);
}

/* Keep only daemon id @p keep: the id now belongs to that device. */
static void
keep_only(struct rc_id *x, unsigned int keep)
{
	struct rc_bind b = x->b[keep];

	while (x->nb > 1) {
		unsigned int k = x->b[0].dev == b.dev ? 1 : 0;

		unbind_dev(x, k);
	}
	rc_id_set_dev(x, b.dev);
}

/* The device of a one-device id, or NULL. */
static struct rc_dev *
dev_of(struct rc_id *x)
{
	return x->nb == 1 && x->id.verbs != NULL ? x->b[0].dev : NULL;
}

/* A request naming the id, on its (single) device. @return 0 or errno. */
static int
call_id(struct rc_id *x, uint16_t type, void *req, size_t len, void *resp, size_t rlen)
{
	struct rc_dev *d = dev_of(x);

	if (d == NULL)
		return EINVAL;
	*(uint32_t *)req = x->b[0].handle;
	return rc_call(d, type, req, len, resp, rlen, -1);
}

static int
addr_call(struct rc_id *x, unsigned int k, uint16_t type, uint32_t arg,
	  const struct uroce_shm_cm_addr *src, const struct uroce_shm_cm_addr *dst)
{
	struct uroce_shm_msg_cm_addr_req q;
	struct uroce_shm_msg_cm_route_resp r;
	int rc;

	memset(&q, 0, sizeof(q));
	q.id = x->b[k].handle;
	q.arg = arg;
	if (src != NULL)
		q.src = *src;
	if (dst != NULL)
		q.dst = *dst;
	if (rc_trace_on) {
		char s[INET6_ADDRSTRLEN], t[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, q.src.ip, s, sizeof(s));
		inet_ntop(AF_INET6, q.dst.ip, t, sizeof(t));
		rc_trace("%s src v%u [%s]:%u dst v%u [%s]:%u arg %u", uroce_shm_msg_type_name(type),
			 q.src.family, s, q.src.port, q.dst.family, t, q.dst.port, arg);
	}
	rc = rc_call(x->b[k].dev, type, &q, sizeof(q), &r, sizeof(r), -1);
	if (rc == 0)
		rc_route_set(x, &r.route);
	return rc;
}

RC_EXPORT int
rdma_destroy_id(struct rdma_cm_id *id)
{
	struct rc_id *x, **pp;

	if (id == NULL)
		return rc_err(EINVAL);
	x = rc_id_of(id);
	pthread_mutex_lock(&rc_lock);
	x->destroying = true;
	for (pp = &rc_ids; *pp != NULL; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			break;
		}
	pthread_mutex_unlock(&rc_lock);
	while (x->nb > 0)
		unbind_dev(x, x->nb - 1); /* the daemon tells the peer (REJ, DREQ) */
	if (x->id.event != NULL) {
		rdma_ack_cm_event(x->id.event);
		x->id.event = NULL;
	}
	pthread_mutex_lock(&x->lock);
	rc_chan_drop_id(rc_chan_of(x->id.channel), x);
	/* rdma_destroy_id waits until every event handed out is acknowledged. */
	while (x->events_out > 0)
		pthread_cond_wait(&x->cond, &x->lock);
	pthread_mutex_unlock(&x->lock);
	id_free(x);
	return 0;
}

/* Bind @p x to @p a: the device that has the address, or every device for a
 * wildcard (the first picks the port, the others take the same). */
static int
do_bind(struct rc_id *x, const struct uroce_shm_cm_addr *a)
{
	struct uroce_shm_cm_addr want = *a;
	int i, rc = EADDRNOTAVAIL;
	bool any;

	if (x->nb > 0)
		return EINVAL;
	any = a->family == 4 ? memcmp(a->ip + 12, "\0\0\0\0", 4) == 0 :
			      memcmp(a->ip, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16) == 0;
	for (i = 0; i < rc_ndevices(); i++) {
		struct rc_dev *d = rc_device(i);
		int r;

		if (bind_dev(x, d) != 0)
			continue;
		r = addr_call(x, x->nb - 1, UROCE_SHM_MSG_CM_BIND, 0, &want, NULL);
		if (r != 0) {
			unbind_dev(x, x->nb - 1);
			if (r != EADDRNOTAVAIL) {
				rc = r;
				break;
			}
			continue;
		}
		rc = 0;
		if (!any) {
			rc_id_set_dev(x, d);
			return 0;
		}
		/* the port the first device chose, for the others too */
		want.port = ntohs(((struct sockaddr_in *)&x->id.route.addr.src_storage)->sin_port);
	}
	if (rc != 0) {
		while (x->nb > 0)
			unbind_dev(x, x->nb - 1);
	}
	return x->nb > 0 ? 0 : (rc == 0 ? EADDRNOTAVAIL : rc);
}

RC_EXPORT int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct uroce_shm_cm_addr a;
	int rc;

	if (id == NULL || addr == NULL)
		return rc_err(EINVAL);
	rc = addr_in(addr, &a);
	if (rc == 0) {
		rc_busy(rc_id_of(id), true);
		rc = do_bind(rc_id_of(id), &a);
		rc_busy(rc_id_of(id), false);
	}
	return rc != 0 ? rc_err(rc) : 0;
}

/* rdma_resolve_addr() on a busy id: 0 or errno. */
static int
resolve_addr(struct rc_id *x, const struct uroce_shm_cm_addr *src,
	     const struct uroce_shm_cm_addr *dst, uint32_t timeout_ms)
{
	unsigned int k;
	int i, rc;

	if (src->family != 0 && x->nb == 0) {
		rc = do_bind(x, src);
		if (rc != 0)
			return rc;
	}
	/* Bound: resolve where it is bound; first to answer is the device. */
	for (k = 0; k < x->nb; k++) {
		rc = addr_call(x, k, UROCE_SHM_MSG_CM_RESOLVE_ADDR, timeout_ms, NULL, dst);
		if (rc == 0) {
			keep_only(x, k);
			return 0;
		}
		if (rc != EADDRNOTAVAIL)
			return rc;
	}
	if (x->nb > 0)
		return EADDRNOTAVAIL;
	/* Unbound: the first device with an address for it. */
	rc = EADDRNOTAVAIL;
	for (i = 0; i < rc_ndevices(); i++) {
		int r = bind_dev(x, rc_device(i));

		if (r != 0) {
			rc = r == ENODEV && rc == EADDRNOTAVAIL ? rc : r;
			continue;
		}
		r = addr_call(x, 0, UROCE_SHM_MSG_CM_RESOLVE_ADDR, timeout_ms, NULL, dst);
		if (r == 0) {
			rc_id_set_dev(x, rc_device(i));
			return 0;
		}
		unbind_dev(x, 0);
		if (r != EADDRNOTAVAIL)
			return r;
	}
	return rc;
}

RC_EXPORT int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		  int timeout_ms)
{
	struct uroce_shm_cm_addr src, dst;
	struct rc_id *x;
	int rc;

	if (id == NULL || dst_addr == NULL)
		return rc_err(EINVAL);
	x = rc_id_of(id);
	if (addr_in(dst_addr, &dst) != 0 || addr_in(src_addr, &src) != 0)
		return rc_err(EAFNOSUPPORT);
	if (dst.family == 0)
		return rc_err(EINVAL);
	rc_busy(x, true);
	rc = resolve_addr(x, &src, &dst, (uint32_t)timeout_ms);
	rc_busy(x, false);
	return rc != 0 ? rc_err(rc) : rc_complete(x);
}

RC_EXPORT int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct rc_id *x;
	int rc;

	if (id == NULL)
		return rc_err(EINVAL);
	x = rc_id_of(id);
	if (dev_of(x) == NULL)
		return rc_err(EINVAL);
	rc_busy(x, true);
	rc = addr_call(x, 0, UROCE_SHM_MSG_CM_RESOLVE_ROUTE, (uint32_t)timeout_ms, NULL, NULL);
	rc_busy(x, false);
	return rc != 0 ? rc_err(rc) : rc_complete(x);
}

RC_EXPORT int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct rc_id *x;
	unsigned int k;
	int rc;

	if (id == NULL)
		return rc_err(EINVAL);
	x = rc_id_of(id);
	if (x->nb == 0) {
		/* Unbound: any address (IPv6 any covers IPv4), an ephemeral port. */
		struct uroce_shm_cm_addr any;

		memset(&any, 0, sizeof(any));
		any.family = 6;
		rc = do_bind(x, &any);
		if (rc != 0)
			return rc_err(rc);
	}
	for (k = 0; k < x->nb; k++) {
		rc = addr_call(x, k, UROCE_SHM_MSG_CM_LISTEN, (uint32_t)backlog, NULL, NULL);
		if (rc != 0)
			return rc_err(rc);
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Connecting                                                                */
/* ------------------------------------------------------------------------ */

/* librdmacm's ucma_valid_param: TCP ids need a QP or parameters, within the device. */
static int
valid_param(struct rc_id *x, const struct rdma_conn_param *p)
{
	struct rc_dev *d = dev_of(x);

	if (x->id.ps != RDMA_PS_TCP)
		return 0;
	if (x->id.qp == NULL && p == NULL)
		return EINVAL;
	if (p == NULL || d == NULL)
		return 0;
	if (p->responder_resources != RDMA_MAX_RESP_RES &&
	    p->responder_resources > d->max_resp_res)
		return EINVAL;
	if (p->initiator_depth != RDMA_MAX_INIT_DEPTH && p->initiator_depth > d->max_init_depth)
		return EINVAL;
	return 0;
}

/* The parameters as librdmacm sends them (ucma_copy_conn_param_to_kern). */
static int
param_out(struct rc_id *x, struct uroce_shm_cm_conn_param *o, const struct rdma_conn_param *p,
	  uint32_t qpn, uint8_t srq)
{
	memset(o, 0, sizeof(*o));
	o->qp_num = qpn;
	o->srq = srq;
	o->responder_resources = x->responder_resources;
	o->initiator_depth = x->initiator_depth;
	if (x->connect_len > 0) {
		memcpy(o->private_data, x->connect, x->connect_len);
		o->private_data_len = x->connect_len;
	}
	if (p != NULL) {
		o->flow_control = p->flow_control;
		o->retry_count = p->retry_count;
		o->rnr_retry_count = p->rnr_retry_count;
		if (p->private_data != NULL && p->private_data_len > 0) {
			if ((size_t)o->private_data_len + p->private_data_len >
			    UROCE_SHM_CM_PDATA_MAX)
				return EINVAL;
			memcpy(o->private_data + o->private_data_len, p->private_data,
			       p->private_data_len);
			o->private_data_len += p->private_data_len;
		}
	} else {
		o->retry_count = 7;
		o->rnr_retry_count = 7;
	}
	return 0;
}

RC_EXPORT int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct uroce_shm_msg_cm_conn_req q;
	struct rc_dev *d;
	struct rc_id *x;
	uint32_t qpn = conn_param != NULL ? conn_param->qp_num : 0;
	uint8_t srq = conn_param != NULL ? conn_param->srq : 0;
	int rc;

	if (id == NULL)
		return rc_err(EINVAL);
	x = rc_id_of(id);
	d = dev_of(x);
	if (d == NULL)
		return rc_err(EINVAL);
	rc = valid_param(x, conn_param);
	if (rc != 0)
		return rc_err(rc);
	x->initiator_depth = conn_param != NULL &&
			     conn_param->initiator_depth != RDMA_MAX_INIT_DEPTH ?
				     conn_param->initiator_depth : d->max_init_depth;
	x->responder_resources = conn_param != NULL &&
				 conn_param->responder_resources != RDMA_MAX_RESP_RES ?
					 conn_param->responder_resources : d->max_resp_res;
	if (id->qp != NULL) {
		qpn = id->qp->qp_num;
		srq = id->qp->srq != NULL;
	}
	memset(&q, 0, sizeof(q));
	rc = param_out(x, &q.param, conn_param, qpn, srq);
	if (rc != 0)
		return rc_err(rc);
	rc_busy(x, true);
	rc = call_id(x, UROCE_SHM_MSG_CM_CONNECT, &q, sizeof(q), NULL, 0);
	if (rc == 0) {
		free(x->connect);
		x->connect = NULL;
		x->connect_len = 0;
	}
	rc_busy(x, false);
	return rc != 0 ? rc_err(rc) : rc_complete(x);
}

RC_EXPORT int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct uroce_shm_msg_cm_conn_req q;
	struct rc_dev *d;
	struct rc_id *x;
	uint32_t qpn;
	uint8_t srq;
	int rc;

	if (id == NULL || (id->qp == NULL && conn_param == NULL))
		return rc_err(EINVAL);
	x = rc_id_of(id);
	d = dev_of(x);
	if (d == NULL)
		return rc_err(EINVAL);
	qpn = id->qp != NULL ? id->qp->qp_num : conn_param->qp_num;
	srq = id->qp != NULL ? id->qp->srq != NULL : conn_param->srq;
	rc = valid_param(x, conn_param);
	if (rc != 0)
		return rc_err(rc);
	if (conn_param == NULL || conn_param->initiator_depth == RDMA_MAX_INIT_DEPTH)
		x->initiator_depth = x->initiator_depth < d->max_init_depth ? x->initiator_depth :
									      d->max_init_depth;
	else
		x->initiator_depth = conn_param->initiator_depth;
	if (conn_param == NULL || conn_param->responder_resources == RDMA_MAX_RESP_RES)
		x->responder_resources = x->responder_resources < d->max_resp_res ?
						 x->responder_resources : d->max_resp_res;
	else
		x->responder_resources = conn_param->responder_resources;
	if (id->qp_type != IBV_QPT_UD) {
		if (rc_modify_qp_rtr(x, x->responder_resources) != 0 ||
		    rc_modify_qp_rts(x, x->initiator_depth) != 0)
			return -1;
	}
	memset(&q, 0, sizeof(q));
	rc = param_out(x, &q.param, conn_param, qpn, srq);
	if (rc == 0) {
		rc_busy(x, true);
		rc = call_id(x, UROCE_SHM_MSG_CM_ACCEPT, &q, sizeof(q), NULL, 0);
		rc_busy(x, false);
	}
	if (rc != 0) {
		rc_modify_qp_err(x);
		return rc_err(rc);
	}
	return id->qp_type == IBV_QPT_UD ? 0 : rc_complete(x);
}

static int
reject(struct rdma_cm_id *id, const void *pd, uint8_t len, uint16_t reason)
{
	struct uroce_shm_msg_cm_reject_req q;
	int rc;

	if (id == NULL || (len > 0 && pd == NULL) || len > UROCE_SHM_CM_PDATA_MAX)
		return rc_err(EINVAL);
	memset(&q, 0, sizeof(q));
	q.reason = reason;
	q.private_data_len = len;
	if (len > 0)
		memcpy(q.private_data, pd, len);
	rc = call_id(rc_id_of(id), UROCE_SHM_MSG_CM_REJECT, &q, sizeof(q), NULL, 0);
	return rc != 0 ? rc_err(rc) : 0;
}

RC_EXPORT int
rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	return reject(id, private_data, private_data_len, 0);
}

RC_EXPORT int
rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	/* IBA: Vendor Option Not Supported */
	return reject(id, private_data, private_data_len, 35);
}

int
rc_establish(struct rc_id *x)
{
	struct uroce_shm_msg_handle h = {0};
	int rc = call_id(x, UROCE_SHM_MSG_CM_ESTABLISH, &h, sizeof(h), NULL, 0);

	return rc != 0 ? rc_err(rc) : 0;
}

RC_EXPORT int
rdma_establish(struct rdma_cm_id *id)
{
	/* Only for an id without a QP: with one, the library did it already. */
	if (id == NULL || id->qp != NULL)
		return rc_err(EINVAL);
	return rc_establish(rc_id_of(id));
}

RC_EXPORT int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct uroce_shm_msg_handle h = {0};
	struct rc_id *x;
	int rc;

	if (id == NULL || id->verbs == NULL)
		return rc_err(EINVAL);
	x = rc_id_of(id);
	/* RoCE: the QP to ERR first (librdmacm's ucma_shutdown). */
	if (rc_modify_qp_err(x) != 0)
		return -1;
	rc = call_id(x, UROCE_SHM_MSG_CM_DISCONNECT, &h, sizeof(h), NULL, 0);
	return rc != 0 ? rc_err(rc) : rc_complete(x);
}

RC_EXPORT int
rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	struct uroce_shm_msg_cm_notify_req q = {.event = (uint32_t)event};
	int rc;

	if (id == NULL)
		return rc_err(EINVAL);
	rc = call_id(rc_id_of(id), UROCE_SHM_MSG_CM_NOTIFY, &q, sizeof(q), NULL, 0);
	return rc != 0 ? rc_err(rc) : 0;
}

RC_EXPORT int
rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	struct uroce_shm_msg_cm_qp_attr_req q;
	struct uroce_shm_msg_cm_qp_attr_resp r;
	int rc;

	if (id == NULL || qp_attr == NULL || qp_attr_mask == NULL)
		return rc_err(EINVAL);
	q.qp_state = qp_attr->qp_state;
	rc = call_id(rc_id_of(id), UROCE_SHM_MSG_CM_INIT_QP_ATTR, &q, sizeof(q), &r, sizeof(r));
	if (rc != 0)
		return rc_err(rc);
	memset(qp_attr, 0, sizeof(*qp_attr));
	qp_attr->qp_state = (enum ibv_qp_state)r.qp_state;
	qp_attr->qp_access_flags = (unsigned int)r.qp_access_flags;
	qp_attr->qkey = r.qkey;
	qp_attr->pkey_index = r.pkey_index;
	qp_attr->port_num = r.port_num;
	qp_attr->path_mtu = (enum ibv_mtu)r.path_mtu;
	qp_attr->dest_qp_num = r.dest_qp_num;
	qp_attr->rq_psn = r.rq_psn;
	qp_attr->sq_psn = r.sq_psn;
	qp_attr->max_dest_rd_atomic = r.max_dest_rd_atomic;
	qp_attr->max_rd_atomic = r.max_rd_atomic;
	qp_attr->min_rnr_timer = r.min_rnr_timer;
	qp_attr->timeout = r.timeout;
	qp_attr->retry_cnt = r.retry_cnt;
	qp_attr->rnr_retry = r.rnr_retry;
	if (r.mask & IBV_QP_AV) {
		qp_attr->ah_attr.is_global = 1;
		memcpy(qp_attr->ah_attr.grh.dgid.raw, r.dgid, 16);
		qp_attr->ah_attr.grh.flow_label = r.flow_label;
		qp_attr->ah_attr.grh.sgid_index = r.sgid_index;
		qp_attr->ah_attr.grh.hop_limit = r.hop_limit;
		qp_attr->ah_attr.grh.traffic_class = r.traffic_class;
		qp_attr->ah_attr.sl = r.sl;
		qp_attr->ah_attr.port_num = id->port_num ? id->port_num : 1;
	}
	*qp_attr_mask = (int)r.mask;
	return 0;
}

RC_EXPORT int
rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	struct rc_id *x;
	uint32_t v;
	unsigned int k;
	int rc = 0;

	if (id == NULL || optval == NULL)
		return rc_err(EINVAL);
	x = rc_id_of(id);
	if (level != RDMA_OPTION_ID)
		return rc_err(level == RDMA_OPTION_IB ? EOPNOTSUPP : EINVAL); /* no SA paths */
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen < sizeof(uint8_t))
			return rc_err(EINVAL);
		v = *(uint8_t *)optval;
		break;
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		if (optlen < sizeof(int))
			return rc_err(EINVAL);
		v = *(int *)optval != 0;
		break;
	default:
		return rc_err(ENOSYS);
	}
	for (k = 0; k < x->nb && rc == 0; k++)
		rc = set_option(x->b[k].dev, x->b[k].handle, (uint32_t)optname, v);
	if (rc != 0)
		return rc_err(rc);
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		x->tos = (uint8_t)v;
		x->tos_set = true;
		break;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		x->ack_timeout = (uint8_t)v;
		break;
	case RDMA_OPTION_ID_REUSEADDR:
		x->reuseaddr = (int)v;
		break;
	default:
		x->afonly = (int)v;
		break;
	}
	return 0;
}

RC_EXPORT int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct rc_chan *to, *from;
	struct rc_id *x;
	bool sync = channel == NULL;
	unsigned int k;
	int rc = 0;

	if (id == NULL)
		return rc_err(EINVAL);
	x = rc_id_of(id);
	if (x->sync && sync)
		return rc_err(EINVAL);
	from = rc_chan_of(id->channel);
	to = sync ? rc_chan_new() : rc_chan_of(channel);
	if (to == NULL)
		return -1;
	for (k = 0; k < x->nb && rc == 0; k++) {
		struct uroce_shm_msg_cm_migrate_req q = {.id = x->b[k].handle};

		rc = rc_chan_attach(to, x->b[k].dev);
		if (rc == 0) {
			q.channel = rc_chan_handle(to, x->b[k].dev);
			rc = rc_call(x->b[k].dev, UROCE_SHM_MSG_CM_MIGRATE_ID, &q, sizeof(q), NULL, 0,
				     -1);
		}
	}
	if (rc != 0) {
		if (sync)
			rc_chan_free(to);
		return rc_err(rc);
	}
	if (x->sync && id->event != NULL) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	pthread_mutex_lock(&rc_lock);
	id->channel = &to->ch;
	pthread_mutex_unlock(&rc_lock);
	if (x->sync)
		rc_chan_free(from); /* its private channel */
	x->sync = sync;
	return 0;
}

RC_EXPORT __be16
rdma_get_src_port(struct rdma_cm_id *id)
{
	const struct sockaddr *sa = &id->route.addr.src_addr;

	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)(const void *)sa)->sin6_port;
	return 0;
}

RC_EXPORT __be16
rdma_get_dst_port(struct rdma_cm_id *id)
{
	const struct sockaddr *sa = &id->route.addr.dst_addr;

	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)(const void *)sa)->sin6_port;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* What RoCE on uroce has not                                                */
/* ------------------------------------------------------------------------ */

RC_EXPORT int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	(void)id;
	(void)addr;
	(void)context;
	return rc_err(EOPNOTSUPP); /* no multicast groups on uroce */
}

RC_EXPORT int
rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *mc_join_attr,
		       void *context)
{
	(void)id;
	(void)mc_join_attr;
	(void)context;
	return rc_err(EOPNOTSUPP);
}

RC_EXPORT int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id;
	(void)addr;
	return rc_err(EADDRNOTAVAIL); /* never joined */
}

RC_EXPORT int
rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	/* librdmacm's checks; the options are not sent: ECE is refused by the
	 * drop-in libibverbs (ibv_set_ece: EOPNOTSUPP), as on a device without it. */
	if (id == NULL || id->qp != NULL || ece == NULL || ece->vendor_id == 0 ||
	    ece->comp_mask != 0)
		return rc_err(EINVAL);
	return 0;
}

RC_EXPORT int
rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (id == NULL || id->qp != NULL || ece == NULL)
		return rc_err(EINVAL);
	memset(ece, 0, sizeof(*ece));
	return 0;
}
