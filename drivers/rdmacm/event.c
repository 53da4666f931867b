/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Event channels and events. A channel is an epoll set of one socket per
 * device it has ids on (the daemon's CM_EVENTs) and an eventfd that is
 * readable while the library holds events itself ("ready": events of ids
 * migrated here, DEVICE_REMOVAL). rdma_get_cm_event() takes a ready event,
 * or reads one CM_EVENT and does what librdmacm does with it: a new id for
 * a CONNECT_REQUEST, the QP brought to RTS and the RTU sent for a
 * CONNECT_RESPONSE when the id has a QP (ESTABLISHED then), the QP to ERR
 * for REJECTED, the route filled in for ADDR/ROUTE_RESOLVED.
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "uroce_cma.h"

#include "rc_internal.h"

/* epoll data: 0 the eventfd, device slot + 1 a device's socket */
#define EV_READY 0u

struct rc_chan *
rc_chan_new(void)
{
	struct rc_chan *c = calloc(1, sizeof(*c));
	struct epoll_event ee = {.events = EPOLLIN, .data.u32 = EV_READY};
	int i;

	if (c == NULL)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->ready_tail = &c->ready;
	for (i = 0; i < RC_MAX_DEVICES; i++)
		c->dev[i].fd = -1;
	c->ch.fd = epoll_create1(EPOLL_CLOEXEC);
	c->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->ch.fd < 0 || c->evfd < 0 || epoll_ctl(c->ch.fd, EPOLL_CTL_ADD, c->evfd, &ee) != 0) {
		int e = errno;

		rc_chan_free(c);
		errno = e;
		return NULL;
	}
	return c;
}

void
rc_chan_free(struct rc_chan *c)
{
	struct rc_event *e;
	int i;

	if (c == NULL)
		return;
	for (i = 0; i < RC_MAX_DEVICES; i++) {
		struct rc_dev *d = rc_device(i);

		if (c->dev[i].fd < 0)
			continue;
		if (d != NULL && !c->dev[i].dead) {
			struct uroce_shm_msg_handle h = {.handle = c->dev[i].handle};

			rc_call(d, UROCE_SHM_MSG_CM_CHANNEL_CLOSE, &h, sizeof(h), NULL, 0, -1);
		}
		close(c->dev[i].fd);
	}
	while ((e = c->ready) != NULL) {
		c->ready = e->next;
		free(e);
	}
	if (c->ch.fd >= 0)
		close(c->ch.fd);
	if (c->evfd >= 0)
		close(c->evfd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* Open the channel on device @p d (a socketpair, one end to its daemon). */
int
rc_chan_attach(struct rc_chan *c, struct rc_dev *d)
{
	struct uroce_shm_msg_cm_channel_open_req q = {0};
	struct uroce_shm_msg_handle h;
	struct epoll_event ee = {.events = EPOLLIN};
	int sv[2], rc, i = (int)(d - rc_device(0));

	pthread_mutex_lock(&c->lock);
	if (c->dev[i].fd >= 0) {
		pthread_mutex_unlock(&c->lock);
		return c->dev[i].dead ? ENODEV : 0;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0) {
		rc = errno;
		goto out;
	}
	rc = rc_call(d, UROCE_SHM_MSG_CM_CHANNEL_OPEN, &q, sizeof(q), &h, sizeof(h), sv[1]);
	close(sv[1]);
	if (rc != 0) {
		close(sv[0]);
		goto out;
	}
	ee.data.u32 = (uint32_t)i + 1;
	if (epoll_ctl(c->ch.fd, EPOLL_CTL_ADD, sv[0], &ee) != 0) {
		rc = errno;
		close(sv[0]);
		rc_call(d, UROCE_SHM_MSG_CM_CHANNEL_CLOSE, &h, sizeof(h), NULL, 0, -1);
		goto out;
	}
	c->dev[i].fd = sv[0];
	c->dev[i].handle = h.handle;
	c->dev[i].dead = false;
out:
	pthread_mutex_unlock(&c->lock);
	return rc;
}

uint32_t
rc_chan_handle(struct rc_chan *c, struct rc_dev *d)
{
	return c->dev[d - rc_device(0)].handle;
}

void
rc_chan_push(struct rc_chan *c, struct rc_event *e)
{
	uint64_t one = 1;

	pthread_mutex_lock(&c->lock);
	e->next = NULL;
	*c->ready_tail = e;
	c->ready_tail = &e->next;
	if (write(c->evfd, &one, sizeof(one)) != sizeof(one)) {
		/* the counter is far from full: cannot happen */
	}
	pthread_mutex_unlock(&c->lock);
}

static struct rc_event *
ready_pop(struct rc_chan *c)
{
	struct rc_event *e;
	uint64_t v;

	pthread_mutex_lock(&c->lock);
	e = c->ready;
	if (e != NULL) {
		c->ready = e->next;
		if (c->ready == NULL)
			c->ready_tail = &c->ready;
	}
	/* Readable exactly while events wait. */
	if (c->ready == NULL && read(c->evfd, &v, sizeof(v)) < 0) {
		/* EAGAIN: it was not set */
	}
	pthread_mutex_unlock(&c->lock);
	return e;
}

/* Take the held events of @p x out of @p c (it is destroyed). @return how many. */
void
rc_chan_drop_id(struct rc_chan *c, struct rc_id *x)
{
	struct rc_event **pp, *e;

	pthread_mutex_lock(&c->lock);
	for (pp = &c->ready; (e = *pp) != NULL;) {
		if (e->owner == x) {
			*pp = e->next;
			free(e);
			x->events_out--;
		} else {
			pp = &e->next;
		}
	}
	c->ready_tail = &c->ready;
	for (e = c->ready; e != NULL; e = e->next)
		c->ready_tail = &e->next;
	pthread_mutex_unlock(&c->lock);
}

/* ------------------------------------------------------------------------ */
/* One CM_EVENT into an rdma_cm_event                                        */
/* ------------------------------------------------------------------------ */

static void
release(struct rc_id *x)
{
	pthread_mutex_lock(&x->lock);
	x->events_out--;
	pthread_cond_broadcast(&x->cond);
	pthread_mutex_unlock(&x->lock);
}

static void
conn_param(struct rc_event *e, const struct uroce_shm_msg_cm_event *m)
{
	struct rdma_conn_param *p = &e->ev.param.conn;

	p->private_data_len = m->param.private_data_len;
	if (p->private_data_len > 0) {
		memcpy(e->private_data, m->param.private_data, p->private_data_len);
		p->private_data = e->private_data;
	}
	p->responder_resources = m->param.responder_resources;
	p->initiator_depth = m->param.initiator_depth;
	p->flow_control = m->param.flow_control;
	p->retry_count = m->param.retry_count;
	p->rnr_retry_count = m->param.rnr_retry_count;
	p->srq = m->param.srq;
	p->qp_num = m->param.qp_num;
}

static void
ud_param(struct rc_event *e, const struct uroce_shm_msg_cm_event *m, uint8_t port)
{
	struct rdma_ud_param *p = &e->ev.param.ud;

	p->private_data_len = m->param.private_data_len;
	if (p->private_data_len > 0) {
		memcpy(e->private_data, m->param.private_data, p->private_data_len);
		p->private_data = e->private_data;
	}
	p->qp_num = m->param.qp_num;
	p->qkey = m->qkey;
	if (m->flags & UROCE_SHM_CM_EV_F_AH) {
		p->ah_attr.is_global = 1;
		memcpy(p->ah_attr.grh.dgid.raw, m->ah_dgid, 16);
		p->ah_attr.grh.flow_label = m->ah_flow_label;
		p->ah_attr.grh.sgid_index = m->ah_sgid_index;
		p->ah_attr.grh.hop_limit = m->ah_hop_limit;
		p->ah_attr.grh.traffic_class = m->ah_traffic_class;
		p->ah_attr.port_num = port;
	}
}

/* The id a CONNECT_REQUEST makes (librdmacm's ucma_process_conn_req). */
static struct rc_id *
conn_request(struct rc_dev *d, const struct uroce_shm_msg_cm_event *m, struct rc_id **lp)
{
	struct rc_id *l, *x;

	pthread_mutex_lock(&rc_lock);
	l = rc_id_find(d, m->listen_id);
	if (l == NULL || l->destroying) {
		pthread_mutex_unlock(&rc_lock);
		return NULL;
	}
	x = rc_id_alloc(l->id.channel, l->id.context, l->id.ps, l->id.qp_type);
	if (x == NULL) {
		pthread_mutex_unlock(&rc_lock);
		return NULL;
	}
	x->b[0].dev = d;
	x->b[0].handle = m->id;
	x->nb = 1;
	x->initiator_depth = m->param.initiator_depth;
	x->responder_resources = m->param.responder_resources;
	x->next = rc_ids;
	rc_ids = x;
	l->events_out++; /* the event is the listener's channel's, acked as its */
	pthread_mutex_unlock(&rc_lock);
	rc_id_set_dev(x, d);
	*lp = l;
	return x;
}

/* librdmacm's ucma_process_conn_resp: RTR, RTS, then the RTU. */
static int
conn_response(struct rc_id *x)
{
	if (rc_modify_qp_rtr(x, RDMA_MAX_RESP_RES) != 0 ||
	    rc_modify_qp_rts(x, RDMA_MAX_INIT_DEPTH) != 0 || rc_establish(x) != 0) {
		int e = errno;

		rc_modify_qp_err(x);
		errno = e;
		return -1;
	}
	return 0;
}

/* @return the event for the application, or NULL if it is swallowed or moved. */
static struct rc_event *
process(struct rc_chan *c, struct rc_dev *d, const struct uroce_shm_msg_cm_event *m)
{
	struct rc_id *x, *l = NULL;
	struct rc_event *e;

	if (m->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		x = conn_request(d, m, &l);
		if (x == NULL) {
			/* No listener any more (or no memory): the daemon id goes. */
			struct uroce_shm_msg_handle h = {.handle = m->id};

			rc_call(d, UROCE_SHM_MSG_CM_DESTROY_ID, &h, sizeof(h), NULL, 0, -1);
			return NULL;
		}
	} else {
		pthread_mutex_lock(&rc_lock);
		x = rc_id_find(d, m->id);
		if (x != NULL && !x->destroying)
			x->events_out++;
		else
			x = NULL;
		pthread_mutex_unlock(&rc_lock);
		if (x == NULL)
			return NULL; /* an id destroyed meanwhile */
		rc_wait_idle(x);
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		release(l != NULL ? l : x);
		return NULL;
	}
	e->owner = l != NULL ? l : x;
	e->ev.id = &x->id;
	e->ev.event = (enum rdma_cm_event_type)m->event;
	e->ev.status = m->status;
	if (m->event != RDMA_CM_EVENT_DISCONNECTED && m->event != RDMA_CM_EVENT_TIMEWAIT_EXIT)
		rc_route_set(x, &m->route);
	switch (m->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		e->ev.listen_id = &l->id;
		if (m->flags & UROCE_SHM_CM_EV_F_UD)
			ud_param(e, m, 1);
		else
			conn_param(e, m);
		/* A synchronous listener's request gets a channel of its own. */
		if (l->sync && rdma_migrate_id(&x->id, NULL) != 0) {
			rdma_destroy_id(&x->id);
			release(l);
			free(e);
			return NULL;
		}
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		conn_param(e, m);
		if (x->id.qp != NULL) {
			if (conn_response(x) == 0) {
				e->ev.event = RDMA_CM_EVENT_ESTABLISHED;
			} else {
				e->ev.event = RDMA_CM_EVENT_CONNECT_ERROR;
				e->ev.status = -errno;
				x->connect_error = true;
			}
		}
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DISCONNECTED:
		if (x->connect_error) {
			release(x);
			free(e);
			return NULL;
		}
		conn_param(e, m);
		if (m->event == RDMA_CM_EVENT_REJECTED)
			rc_modify_qp_err(x);
		break;
	default:
		if (m->flags & UROCE_SHM_CM_EV_F_UD)
			ud_param(e, m, x->id.port_num ? x->id.port_num : 1);
		else
			conn_param(e, m);
		break;
	}
	RC_TRACE("event %s status %d on id %p (daemon id 0x%x)", rdma_event_str(e->ev.event),
		 e->ev.status, (void *)&x->id, m->id);
	/* An id migrated since: its event goes to its channel now. */
	if (l == NULL && x->id.channel != &c->ch) {
		rc_chan_push(rc_chan_of(x->id.channel), e);
		return NULL;
	}
	return e;
}

/* The daemon of device slot @p i went away: every id on it hears it once. */
static void
device_gone(struct rc_chan *c, int i)
{
	struct rc_dev *d = rc_device(i);
	struct rc_id *x;
	unsigned int k;

	pthread_mutex_lock(&c->lock);
	if (!c->dev[i].dead) {
		epoll_ctl(c->ch.fd, EPOLL_CTL_DEL, c->dev[i].fd, NULL);
		c->dev[i].dead = true;
	}
	pthread_mutex_unlock(&c->lock);
	d->dead = true;
	pthread_mutex_lock(&rc_lock);
	for (x = rc_ids; x != NULL; x = x->next) {
		struct rc_event *e;

		if (x->id.channel != &c->ch || x->destroying)
			continue;
		for (k = 0; k < x->nb && x->b[k].dev != d; k++)
			;
		if (k == x->nb)
			continue;
		e = calloc(1, sizeof(*e));
		if (e == NULL)
			continue;
		e->owner = x;
		e->ev.id = &x->id;
		e->ev.event = RDMA_CM_EVENT_DEVICE_REMOVAL;
		x->events_out++;
		rc_chan_push(c, e);
	}
	pthread_mutex_unlock(&rc_lock);
}

/* Read one message from device slot @p i's socket. */
static struct rc_event *
read_dev(struct rc_chan *c, int i)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	const struct uroce_shm_msg_hdr *h = (const void *)buf;
	struct uroce_shm_msg_cm_event m;
	ssize_t n;
	int fd = -1;

	n = uroce_shm_sock_recv(c->dev[i].fd, buf, sizeof(buf), &fd);
	if (n == -EAGAIN || n == -EWOULDBLOCK)
		return NULL;
	if (fd >= 0)
		close(fd);
	if (n <= 0 && n != -EMSGSIZE) {
		device_gone(c, i); /* end of the channel: the daemon is gone */
		return NULL;
	}
	/* Anything but a well-formed CM_EVENT is the daemon's bug: skip it. */
	if (n < 0 || uroce_shm_msg_validate(buf, (size_t)n, true, false) != 0 ||
	    h->type != UROCE_SHM_MSG_CM_EVENT)
		return NULL;
	memcpy(&m, buf + sizeof(*h), sizeof(m));
	return process(c, rc_device(i), &m);
}

RC_EXPORT int
rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct rc_chan *c = channel != NULL ? rc_chan_of(channel) : NULL;
	struct epoll_event evs[RC_MAX_DEVICES + 1];
	int fl, n, k;

	if (c == NULL || event == NULL)
		return rc_err(EINVAL);
	fl = fcntl(c->ch.fd, F_GETFL);
	for (;;) {
		struct rc_event *e = ready_pop(c);

		if (e != NULL) {
			*event = &e->ev;
			return 0;
		}
		n = epoll_wait(c->ch.fd, evs, RC_MAX_DEVICES + 1, (fl & O_NONBLOCK) ? 0 : -1);
		if (n < 0)
			return -1; /* EINTR: a signal, as read() of the kernel's channel */
		if (n == 0)
			return rc_err(EAGAIN);
		for (k = 0; k < n; k++) {
			uint32_t s = evs[k].data.u32;

			if (s == EV_READY || s > RC_MAX_DEVICES || c->dev[s - 1].fd < 0)
				continue;
			e = read_dev(c, (int)s - 1);
			if (e != NULL) {
				*event = &e->ev;
				return 0;
			}
		}
	}
}

RC_EXPORT int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct rc_event *e = (struct rc_event *)(void *)event;

	if (event == NULL)
		return rc_err(EINVAL);
	if (e->owner != NULL)
		release(e->owner);
	free(e);
	return 0;
}

/* A synchronous id's call waits for its event (librdmacm's ucma_complete). */
int
rc_complete(struct rc_id *x)
{
	struct rdma_cm_event *ev;

	if (!x->sync)
		return 0;
	if (x->id.event != NULL) {
		rdma_ack_cm_event(x->id.event);
		x->id.event = NULL;
	}
	if (rdma_get_cm_event(x->id.channel, &ev) != 0)
		return -1;
	x->id.event = ev;
	if (ev->status != 0) {
		if (ev->event == RDMA_CM_EVENT_REJECTED)
			return rc_err(ECONNREFUSED);
		return rc_err(ev->status < 0 ? -ev->status : ev->status);
	}
	return 0;
}

RC_EXPORT struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct rc_chan *c;

	if (rc_init() != 0 || rc_ndevices() == 0) {
		errno = ENODEV; /* no uroce device: no daemon socket */
		return NULL;
	}
	c = rc_chan_new();
	return c != NULL ? &c->ch : NULL;
}

RC_EXPORT void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	if (channel != NULL)
		rc_chan_free(rc_chan_of(channel));
}

RC_EXPORT const char *
rdma_event_str(enum rdma_cm_event_type event)
{
	/* lib/cm's table has librdmacm's numbers and names. */
	return uroce_cma_event_str((int)event);
}
