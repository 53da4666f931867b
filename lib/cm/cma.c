/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The rdma_cm layer: ids with IP endpoints over the IB CM of cm.c. It does
 * what the kernel's rdma_cm does for librdmacm on a RoCE port (Linux
 * drivers/infiniband/core/cma.c, read for behaviour): binds in port
 * spaces, resolves addresses against the port's GID table, builds the path
 * locally (no SA on RoCE), puts the CMA header in front of a REQ's private
 * data, finds the listener of a REQ by service ID and destination address,
 * and turns CM events into rdma_cm events. The active side's QP moves are
 * the client's (librdmacm does them from rdma_init_qp_attr), so the layer
 * only hands out attributes.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_common.h"

#include "uroce_cma.h"

#define CMA_DEF_LIFE 16
#define CMA_DEF_RESP_TIMEOUT 20
#define CMA_DEF_RETRIES 15
#define CMA_DEF_BACKLOG 1024
#define CMA_PORT_LO 32768
#define CMA_PORT_HI 60999
#define CMA_HOP_LIMIT 64
#define CMA_QUERY_POLL_US 1000   /* how often a pending next hop is asked again */

enum cma_state {
	CMA_IDLE,
	CMA_BOUND,
	CMA_ADDR_QUERY,     /* waiting for the next hop's MAC (the kernel's ADDR_QUERY) */
	CMA_ADDR_RESOLVED,
	CMA_ROUTE_RESOLVED,
	CMA_LISTEN,
	CMA_CONNECT,        /* connecting or connected, as the kernel's RDMA_CM_CONNECT */
	CMA_DISCONNECT,     /* DISCONNECTED reported */
};

struct uroce_cma_id {
	struct uroce_cma *cma;
	void *owner;
	uint16_t ps;
	enum uroce_qp_type qp_type;
	enum cma_state state;
	struct uroce_cma_route r;
	uint8_t tos;
	bool reuseaddr;
	bool afonly;
	uint8_t ack_timeout;        /* 0: not set */
	uint64_t query_end_us;      /* ADDR_QUERY: when rdma_resolve_addr's timeout runs out */
	bool query_pending;         /* ADDR_QUERY: the port said "being resolved" since */
	uint32_t seq_num;           /* the PSN this side receives from */
	struct uroce_cm_id *cm;
	bool disconnecting;         /* our DREQ is out */
	struct uroce_cma_id *listener; /* a child waiting for an answer: counts in its backlog */
	unsigned int pending;       /* listener: children waiting */
	unsigned int backlog;
	bool child;                 /* made by a listener: uses its port, reserves none (as Linux) */
	struct uroce_cma_id *next;
	struct uroce_cma_id **pprev;
};

struct uroce_cma {
	struct uroce_cma_conf conf;
	struct uroce_cm *cm;
	struct uroce_cma_id *ids;
	unsigned int n_ids;
	unsigned int n_query;       /* ids in ADDR_QUERY */
	uint64_t rng;
};

static const char *const event_str[] = {
	"RDMA_CM_EVENT_ADDR_RESOLVED",   "RDMA_CM_EVENT_ADDR_ERROR",
	"RDMA_CM_EVENT_ROUTE_RESOLVED",  "RDMA_CM_EVENT_ROUTE_ERROR",
	"RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
	"RDMA_CM_EVENT_CONNECT_ERROR",   "RDMA_CM_EVENT_UNREACHABLE",
	"RDMA_CM_EVENT_REJECTED",        "RDMA_CM_EVENT_ESTABLISHED",
	"RDMA_CM_EVENT_DISCONNECTED",    "RDMA_CM_EVENT_DEVICE_REMOVAL",
	"RDMA_CM_EVENT_MULTICAST_JOIN",  "RDMA_CM_EVENT_MULTICAST_ERROR",
	"RDMA_CM_EVENT_ADDR_CHANGE",     "RDMA_CM_EVENT_TIMEWAIT_EXIT",
};

const char *
uroce_cma_event_str(int type)
{
	if (type >= 0 && (unsigned int)type < UROCE_ARRAY_SIZE(event_str))
		return event_str[type];
	return "UNKNOWN EVENT";
}

/* ------------------------------------------------------------------------ */
/* CMA header, addresses                                                     */
/* ------------------------------------------------------------------------ */

static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

int
uroce_cma_hdr_decode(const uint8_t *pd, uint32_t len, struct uroce_cma_hdr *h)
{
	if (pd == NULL || h == NULL || len < UROCE_CMA_HDR_LEN)
		return -EMSGSIZE;
	memset(h, 0, sizeof(*h));
	h->version = pd[0];
	h->ip_version = pd[1] >> 4;
	h->src_port = uroce_get_be16(pd + 2);
	if (h->version != 0)
		return -EPROTONOSUPPORT;
	if (h->ip_version == 4) {
		/* 12 zero bytes, then the address: map it. */
		memcpy(h->src_ip, v4_prefix, 12);
		memcpy(h->src_ip + 12, pd + 16, 4);
		memcpy(h->dst_ip, v4_prefix, 12);
		memcpy(h->dst_ip + 12, pd + 32, 4);
	} else if (h->ip_version == 6) {
		memcpy(h->src_ip, pd + 4, 16);
		memcpy(h->dst_ip, pd + 20, 16);
	} else {
		return -EAFNOSUPPORT;
	}
	return 0;
}

int
uroce_cma_hdr_encode(uint8_t *pd, const struct uroce_cma_hdr *h)
{
	if (pd == NULL || h == NULL || (h->ip_version != 4 && h->ip_version != 6))
		return -EINVAL;
	memset(pd, 0, UROCE_CMA_HDR_LEN);
	pd[0] = h->version;
	pd[1] = (uint8_t)(h->ip_version << 4);
	uroce_put_be16(pd + 2, h->src_port);
	if (h->ip_version == 4) {
		memcpy(pd + 16, h->src_ip + 12, 4);
		memcpy(pd + 32, h->dst_ip + 12, 4);
	} else {
		memcpy(pd + 4, h->src_ip, 16);
		memcpy(pd + 20, h->dst_ip, 16);
	}
	return 0;
}

static bool
addr_is_any(const struct uroce_cma_addr *a)
{
	static const uint8_t zero[16];

	if (a->family == 4)
		return memcmp(a->ip + 12, zero, 4) == 0;
	return memcmp(a->ip, zero, 16) == 0;
}

static bool
addr_is_multicast(const struct uroce_cma_addr *a)
{
	if (a->family == 4)
		return (a->ip[12] & 0xF0) == 0xE0;
	return a->ip[0] == 0xFF;
}

/* Is @p a well formed: family 4 with a mapped address, or family 6 (not mapped)? */
static bool
addr_valid(const struct uroce_cma_addr *a)
{
	if (a->family == 4)
		return memcmp(a->ip, v4_prefix, 12) == 0;
	return a->family == 6 && memcmp(a->ip, v4_prefix, 12) != 0;
}

/* The GID index of IP @p ip on this port, or -1. */
static int
gid_index(const struct uroce_cma *cma, const uint8_t ip[16])
{
	static const uint8_t zero[16];
	unsigned int i;

	if (memcmp(ip, zero, 16) == 0)
		return -1;
	for (i = 0; i < cma->conf.n_gid; i++)
		if (memcmp(cma->conf.gids[i], ip, 16) == 0)
			return (int)i;
	return -1;
}

static bool
ipv6_link_local(const uint8_t ip[16])
{
	return ip[0] == 0xFE && (ip[1] & 0xC0) == 0x80;
}

/* This port's address for talking to @p dst: @p dst itself if ours, else the
 * first of its family (IPv6: link-local only toward link-local). */
static int
source_for(const struct uroce_cma *cma, const struct uroce_cma_addr *dst)
{
	unsigned int i;
	int g = gid_index(cma, dst->ip);

	if (g >= 0)
		return g;
	for (i = 0; i < cma->conf.n_gid; i++) {
		const uint8_t *x = cma->conf.gids[i];
		bool v4 = memcmp(x, v4_prefix, 12) == 0;
		static const uint8_t zero[16];

		if (memcmp(x, zero, 16) == 0 || v4 != (dst->family == 4))
			continue;
		if (!v4 && ipv6_link_local(x) != ipv6_link_local(dst->ip))
			continue;
		return (int)i;
	}
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Ids                                                                       */
/* ------------------------------------------------------------------------ */

static uint32_t
rnd(struct uroce_cma *cma)
{
	/* xorshift64*: PSNs and ports only need to differ, not to be secret */
	cma->rng ^= cma->rng >> 12;
	cma->rng ^= cma->rng << 25;
	cma->rng ^= cma->rng >> 27;
	return (uint32_t)((cma->rng * 0x2545F4914F6CDD1Dull) >> 32);
}

static struct uroce_cma_id *
id_alloc(struct uroce_cma *cma, void *owner, uint16_t ps, enum uroce_qp_type qp_type)
{
	struct uroce_cma_id *id = calloc(1, sizeof(*id));

	if (id == NULL)
		return NULL;
	id->cma = cma;
	id->owner = owner;
	id->ps = ps;
	id->qp_type = qp_type;
	id->seq_num = rnd(cma) & 0xFFFFFF;
	id->r.pkey = 0xFFFF;
	id->next = cma->ids;
	if (cma->ids != NULL)
		cma->ids->pprev = &id->next;
	id->pprev = &cma->ids;
	cma->ids = id;
	cma->n_ids++;
	return id;
}

struct uroce_cma_id *
uroce_cma_id_create(struct uroce_cma *cma, void *owner, uint16_t ps, enum uroce_qp_type qp_type)
{
	struct uroce_cma_id *id;

	if (cma == NULL || (qp_type != UROCE_QPT_RC && qp_type != UROCE_QPT_UC &&
			    qp_type != UROCE_QPT_UD)) {
		errno = EINVAL;
		return NULL;
	}
	if (ps != UROCE_CMA_PS_TCP && ps != UROCE_CMA_PS_UDP && ps != UROCE_CMA_PS_IB) {
		errno = EPROTONOSUPPORT; /* IPoIB needs multicast groups */
		return NULL;
	}
	if ((ps == UROCE_CMA_PS_TCP && qp_type == UROCE_QPT_UD) ||
	    (ps == UROCE_CMA_PS_UDP && qp_type != UROCE_QPT_UD)) {
		errno = EINVAL;
		return NULL;
	}
	id = id_alloc(cma, owner, ps, qp_type);
	if (id == NULL)
		errno = ENOMEM;
	return id;
}

static void
child_done(struct uroce_cma_id *id)
{
	if (id->listener != NULL) {
		id->listener->pending--;
		id->listener = NULL;
	}
}

void
uroce_cma_id_destroy(struct uroce_cma_id *id)
{
	struct uroce_cma_id *o;

	if (id == NULL)
		return;
	child_done(id);
	if (id->state == CMA_ADDR_QUERY)
		id->cma->n_query--;
	for (o = id->cma->ids; o != NULL; o = o->next)
		if (o->listener == id)
			o->listener = NULL;
	if (id->cm != NULL)
		uroce_cm_id_destroy(id->cm); /* sends what the peer is owed */
	*id->pprev = id->next;
	if (id->next != NULL)
		id->next->pprev = id->pprev;
	id->cma->n_ids--;
	free(id);
}

void *
uroce_cma_id_owner(const struct uroce_cma_id *id)
{
	return id->owner;
}

void
uroce_cma_id_set_owner(struct uroce_cma_id *id, void *owner)
{
	id->owner = owner;
}

uint16_t
uroce_cma_id_ps(const struct uroce_cma_id *id)
{
	return id->ps;
}

enum uroce_qp_type
uroce_cma_id_qp_type(const struct uroce_cma_id *id)
{
	return id->qp_type;
}

const struct uroce_cm_id *
uroce_cma_id_cm(const struct uroce_cma_id *id)
{
	return id->cm;
}

unsigned int
uroce_cma_id_count(const struct uroce_cma *cma)
{
	return cma->n_ids;
}

int
uroce_cma_set_option(struct uroce_cma_id *id, int option, uint32_t value)
{
	if (id == NULL)
		return -EINVAL;
	switch (option) {
	case UROCE_CMA_OPT_TOS:
		if (value > 0xFF)
			return -EINVAL;
		id->tos = (uint8_t)value;
		return 0;
	case UROCE_CMA_OPT_REUSEADDR:
		if (id->state != CMA_IDLE)
			return -EINVAL;
		id->reuseaddr = value != 0;
		return 0;
	case UROCE_CMA_OPT_AFONLY:
		if (id->state != CMA_IDLE)
			return -EINVAL;
		id->afonly = value != 0;
		return 0;
	case UROCE_CMA_OPT_ACK_TIMEOUT:
		if (value == 0 || value > 31)
			return -EINVAL;
		id->ack_timeout = (uint8_t)value;
		return 0;
	default:
		return -ENOPROTOOPT;
	}
}

/* ------------------------------------------------------------------------ */
/* Binding                                                                   */
/* ------------------------------------------------------------------------ */

/* Do two bound endpoints of one port space share addresses? */
static bool
addr_overlap(const struct uroce_cma_id *a, const struct uroce_cma_id *b)
{
	const struct uroce_cma_addr *x = &a->r.src, *y = &b->r.src;

	if (x->family != y->family) {
		/* An IPv6 "any" that is not IPv6-only covers IPv4 too. */
		return (x->family == 6 && addr_is_any(x) && !a->afonly) ||
		       (y->family == 6 && addr_is_any(y) && !b->afonly);
	}
	return addr_is_any(x) || addr_is_any(y) || memcmp(x->ip, y->ip, 16) == 0;
}

static bool
port_taken(const struct uroce_cma *cma, const struct uroce_cma_id *id, uint16_t port)
{
	const struct uroce_cma_id *o;

	for (o = cma->ids; o != NULL; o = o->next) {
		if (o == id || !o->r.bound || o->child || o->ps != id->ps || o->r.src.port != port)
			continue;
		if (!addr_overlap(o, id))
			continue;
		/* REUSEADDR shares a port among ids that all ask for it, none listening. */
		if (o->reuseaddr && id->reuseaddr && o->state != CMA_LISTEN &&
		    id->state != CMA_LISTEN)
			continue;
		return true;
	}
	return false;
}

static int
bind_port(struct uroce_cma_id *id, uint16_t port)
{
	struct uroce_cma *cma = id->cma;
	unsigned int span = CMA_PORT_HI - CMA_PORT_LO + 1, i, start;

	if (port != 0) {
		id->r.src.port = port;
		if (port_taken(cma, id, port))
			return -EADDRINUSE;
		return 0;
	}
	start = rnd(cma) % span;
	for (i = 0; i < span; i++) {
		uint16_t p = (uint16_t)(CMA_PORT_LO + (start + i) % span);

		if (!port_taken(cma, id, p)) {
			id->r.src.port = p;
			return 0;
		}
	}
	return -EAGAIN;
}

int
uroce_cma_bind(struct uroce_cma_id *id, const struct uroce_cma_addr *a)
{
	int g = -1, rc;

	if (id == NULL || a == NULL || id->r.bound || id->state != CMA_IDLE || !addr_valid(a))
		return -EINVAL;
	if (!addr_is_any(a)) {
		g = gid_index(id->cma, a->ip);
		if (g < 0)
			return -EADDRNOTAVAIL;
	}
	id->r.src = *a;
	rc = bind_port(id, a->port);
	if (rc != 0) {
		memset(&id->r.src, 0, sizeof(id->r.src));
		return rc;
	}
	if (g >= 0) {
		id->r.sgid_index = (uint8_t)g;
		memcpy(id->r.sgid, id->cma->conf.gids[g], 16);
	}
	id->r.bound = true;
	id->state = CMA_BOUND;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Events                                                                    */
/* ------------------------------------------------------------------------ */

static int
emit(struct uroce_cma_id *id, struct uroce_cma_event *ev)
{
	ev->id = id;
	return id->cma->conf.ops->event(id->cma->conf.ctx, id, ev);
}

static void
emit_simple(struct uroce_cma_id *id, int type, int status)
{
	struct uroce_cma_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.status = status;
	ev.ud = id->qp_type == UROCE_QPT_UD;
	emit(id, &ev);
}

/* ------------------------------------------------------------------------ */
/* Address and route                                                         */
/* ------------------------------------------------------------------------ */

/*
 * Ask the port for the next hop of the id's destination: 0 known (or one of
 * our own addresses: loopback), -EAGAIN being resolved, another negative
 * errno: unreachable.
 */
static int
next_hop(struct uroce_cma_id *id)
{
	struct uroce_cma *cma = id->cma;

	if (cma->conf.ops->resolve == NULL || gid_index(cma, id->r.dgid) >= 0)
		return 0;
	return cma->conf.ops->resolve(cma->conf.ctx, id->r.dgid);
}

/* Leave ADDR_QUERY: ADDR_RESOLVED (@p status 0) or back to bound and ADDR_ERROR. */
static void
query_done(struct uroce_cma_id *id, int status)
{
	id->cma->n_query--;
	if (status == 0) {
		id->state = CMA_ADDR_RESOLVED;
		emit_simple(id, UROCE_CMA_EV_ADDR_RESOLVED, 0);
		return;
	}
	id->r.resolved = false;
	id->state = CMA_BOUND;
	emit_simple(id, UROCE_CMA_EV_ADDR_ERROR, status);
}

/* Every id waiting for its next hop: resolved, failed or timed out. */
static unsigned int
query_poll(struct uroce_cma *cma)
{
	struct uroce_cma_id *id, *next;
	unsigned int n = 0;
	uint64_t now;
	int rc;

	if (cma->n_query == 0)
		return 0;
	now = cma->conf.ops->now_us(cma->conf.ctx);
	for (id = cma->ids; id != NULL; id = next) {
		next = id->next;
		if (id->state != CMA_ADDR_QUERY)
			continue;
		rc = next_hop(id);
		if (rc == -EAGAIN)
			id->query_pending = true;
		/* An unreachable entry from before this query (the port starts
		 * over on it) counts once the port has said "being resolved". */
		if (rc == 0 || (rc != -EAGAIN && (rc != -EHOSTUNREACH || id->query_pending)))
			query_done(id, rc);
		else if (now >= id->query_end_us)
			query_done(id, -ETIMEDOUT);
		else
			continue;
		n++;
	}
	return n;
}

int
uroce_cma_resolve_addr(struct uroce_cma_id *id, const struct uroce_cma_addr *src,
		       const struct uroce_cma_addr *dst, uint32_t timeout_ms)
{
	struct uroce_cma *cma;
	int g, rc;

	if (id == NULL || dst == NULL || !addr_valid(dst) || addr_is_any(dst) ||
	    addr_is_multicast(dst) ||
	    (id->state != CMA_IDLE && id->state != CMA_BOUND && id->state != CMA_ADDR_RESOLVED))
		return -EINVAL;
	cma = id->cma;
	if (src != NULL && src->family != 0 && !id->r.bound) {
		if (src->family != dst->family)
			return -EINVAL;
		rc = uroce_cma_bind(id, src);
		if (rc != 0)
			return rc;
	}
	if (id->r.bound && id->r.src.family != dst->family &&
	    !(id->r.src.family == 6 && addr_is_any(&id->r.src)))
		return -EINVAL;
	if (id->r.bound && !addr_is_any(&id->r.src)) {
		g = id->r.sgid_index;
	} else {
		g = source_for(cma, dst);
		if (g < 0)
			return -EADDRNOTAVAIL;
	}
	if (!id->r.bound) {
		struct uroce_cma_addr a;

		memset(&a, 0, sizeof(a));
		a.family = dst->family;
		memcpy(a.ip, cma->conf.gids[g], 16);
		rc = uroce_cma_bind(id, &a);
		if (rc != 0)
			return rc;
	} else {
		/* Bound to any: the source address is now this one. */
		id->r.src.family = dst->family;
		memcpy(id->r.src.ip, cma->conf.gids[g], 16);
	}
	id->r.sgid_index = (uint8_t)g;
	memcpy(id->r.sgid, cma->conf.gids[g], 16);
	id->r.dst = *dst;
	memcpy(id->r.dgid, dst->ip, 16);
	id->r.resolved = true;
	/* As Linux's rdma_resolve_addr, ADDR_RESOLVED waits for the next hop's
	 * MAC: a REQ sent before it would be dropped by the port and only its
	 * retry (seconds later) would reach the peer. */
	rc = next_hop(id);
	if (rc == 0) {
		id->state = CMA_ADDR_RESOLVED;
		emit_simple(id, UROCE_CMA_EV_ADDR_RESOLVED, 0);
		return 0;
	}
	id->state = CMA_ADDR_QUERY;
	id->query_pending = rc == -EAGAIN;
	id->query_end_us = cma->conf.ops->now_us(cma->conf.ctx) +
			   (uint64_t)(timeout_ms > 0 ? timeout_ms : 1) * 1000u;
	cma->n_query++;
	return 0;
}

static uint8_t
life_of(const struct uroce_cma_id *id)
{
	/* RDMA_OPTION_ID_ACK_TIMEOUT sets the ACK timeout, one above the life time. */
	if (id->ack_timeout != 0)
		return (uint8_t)(id->ack_timeout - 1);
	return id->cma->conf.packet_life_time;
}

int
uroce_cma_resolve_route(struct uroce_cma_id *id)
{
	struct uroce_cma_route *r;

	if (id == NULL || (id->state != CMA_ADDR_RESOLVED && id->state != CMA_ROUTE_RESOLVED))
		return -EINVAL;
	r = &id->r;
	r->mtu = id->cma->conf.active_mtu;
	r->hop_limit = CMA_HOP_LIMIT;
	r->traffic_class = id->tos;
	/* RoCEv2: the flow label (hence the data QPs' UDP source port) comes
	 * from the two ports, as Linux computes it. */
	r->flow_label = ((uint32_t)r->src.port * 31u + r->dst.port) & 0xFFFFFu;
	r->packet_life_time = life_of(id);
	r->sl = 0;
	r->rate = 0;
	r->has_path = true;
	id->state = CMA_ROUTE_RESOLVED;
	emit_simple(id, UROCE_CMA_EV_ROUTE_RESOLVED, 0);
	return 0;
}

int
uroce_cma_query(const struct uroce_cma_id *id, struct uroce_cma_route *r)
{
	if (id == NULL || r == NULL)
		return -EINVAL;
	*r = id->r;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Listening and requests                                                    */
/* ------------------------------------------------------------------------ */

int
uroce_cma_listen(struct uroce_cma_id *id, int backlog)
{
	int rc;

	if (id == NULL || (id->state != CMA_IDLE && id->state != CMA_BOUND))
		return -EINVAL;
	if (!id->r.bound) {
		struct uroce_cma_addr any;

		memset(&any, 0, sizeof(any));
		any.family = 6; /* like the kernel: IPv6 any, which covers IPv4 */
		rc = uroce_cma_bind(id, &any);
		if (rc != 0)
			return rc;
	}
	id->state = CMA_LISTEN;
	/* Now a listener: a port shared through REUSEADDR is no longer shareable. */
	if (port_taken(id->cma, id, id->r.src.port)) {
		id->state = CMA_BOUND;
		return -EADDRINUSE;
	}
	id->backlog = backlog <= 0 || backlog > CMA_DEF_BACKLOG ? CMA_DEF_BACKLOG :
								   (unsigned int)backlog;
	return 0;
}

/* The listener of (port space, port) for a request to @p dst. */
static struct uroce_cma_id *
find_listener(struct uroce_cma *cma, uint16_t ps, uint16_t port, const uint8_t dst[16],
	      uint8_t family, enum uroce_qp_type qpt)
{
	struct uroce_cma_id *l, *any = NULL;

	for (l = cma->ids; l != NULL; l = l->next) {
		const struct uroce_cma_addr *a = &l->r.src;

		if (l->state != CMA_LISTEN || l->ps != ps || a->port != port ||
		    (ps == UROCE_CMA_PS_IB ? l->qp_type != qpt
					   : (l->qp_type == UROCE_QPT_UD) != (qpt == UROCE_QPT_UD)))
			continue;
		if (addr_is_any(a)) {
			if (a->family == family || (a->family == 6 && !l->afonly))
				any = l;
			continue;
		}
		if (a->family == family && memcmp(a->ip, dst, 16) == 0)
			return l; /* a specific address wins over any */
	}
	return any;
}

/* Service ID → (port space, port), if it is an IP CM service ID (IBA A11). */
static bool
sid_split(uint64_t sid, uint16_t *ps, uint16_t *port)
{
	*ps = (uint16_t)(sid >> 16);
	*port = (uint16_t)sid;
	return (sid >> 32) == 0 &&
	       (*ps == UROCE_CMA_PS_TCP || *ps == UROCE_CMA_PS_UDP || *ps == UROCE_CMA_PS_IB);
}

/* The new id of a request: its endpoints from the CMA header. */
static struct uroce_cma_id *
child_new(struct uroce_cma_id *l, const struct uroce_cma_hdr *h, uint16_t port,
	  struct uroce_cm_id *cmid)
{
	struct uroce_cma_id *c = id_alloc(l->cma, NULL, l->ps, l->qp_type);
	int g;

	if (c == NULL)
		return NULL;
	c->tos = l->tos;
	c->ack_timeout = l->ack_timeout;
	c->r.src.family = h->ip_version;
	c->r.src.port = port;
	memcpy(c->r.src.ip, h->dst_ip, 16);
	c->r.dst.family = h->ip_version;
	c->r.dst.port = h->src_port;
	memcpy(c->r.dst.ip, h->src_ip, 16);
	g = gid_index(l->cma, h->dst_ip);
	c->r.sgid_index = (uint8_t)(g < 0 ? 0 : g);
	c->r.bound = true;
	c->child = true;
	c->r.resolved = true;
	c->state = CMA_CONNECT;
	c->cm = cmid;
	c->listener = l;
	l->pending++;
	uroce_cm_id_set_context(cmid, c);
	return c;
}

static int
req_received(struct uroce_cma *cma, struct uroce_cm_id *cmid, const struct uroce_cm_event *ev)
{
	const struct uroce_cm_req *q = &ev->msg->u.req;
	struct uroce_cma_event ce;
	struct uroce_cma_id *l, *c;
	struct uroce_cma_hdr h;
	uint16_t ps, port;
	int rc;

	if (!sid_split(q->service_id, &ps, &port))
		return UROCE_CM_REJ_INVALID_SERVICE_ID;
	/* IBA 12.6.7.2: a REQ to a GID that is not ours names it in the ARI. */
	if (gid_index(cma, q->primary.remote_gid) < 0) {
		memcpy(ev->ari, q->primary.remote_gid, 16);
		*ev->ari_len = 16;
		return UROCE_CM_REJ_INVALID_GID;
	}
	/* rdma_cm refuses a header it cannot read (version, IP version). */
	if (uroce_cma_hdr_decode(q->private_data, UROCE_CM_REQ_PDATA, &h) != 0)
		return UROCE_CM_REJ_CONSUMER_DEFINED;
	l = find_listener(cma, ps, port, h.dst_ip, h.ip_version,
			  q->transport == UROCE_CM_TRANSPORT_UC ? UROCE_QPT_UC : UROCE_QPT_RC);
	if (l == NULL)
		return UROCE_CM_REJ_INVALID_SERVICE_ID;
	if (l->pending >= l->backlog)
		return UROCE_CM_REJ_CONSUMER_DEFINED;
	c = child_new(l, &h, port, cmid);
	if (c == NULL)
		return UROCE_CM_REJ_NO_RESOURCES;
	/* The path is the REQ's, seen from this side. */
	memcpy(c->r.sgid, q->primary.remote_gid, 16);
	memcpy(c->r.dgid, q->primary.local_gid, 16);
	c->r.pkey = q->pkey;
	c->r.mtu = (uint8_t)UROCE_MIN(q->path_mtu, cma->conf.active_mtu);
	c->r.hop_limit = q->primary.hop_limit;
	c->r.traffic_class = q->primary.traffic_class;
	c->r.flow_label = q->primary.flow_label;
	c->r.packet_life_time = q->primary.local_ack_timeout ? q->primary.local_ack_timeout - 1 : 0;
	c->r.sl = q->primary.sl;
	c->r.has_path = true;
	memset(&ce, 0, sizeof(ce));
	ce.type = UROCE_CMA_EV_CONNECT_REQUEST;
	ce.listen_id = l;
	ce.conn.private_data = q->private_data + UROCE_CMA_HDR_LEN;
	ce.conn.private_data_len = UROCE_CMA_REQ_PDATA;
	/* What the active side issues we accept, and the reverse. */
	ce.conn.responder_resources = q->initiator_depth;
	ce.conn.initiator_depth = q->responder_resources;
	ce.conn.flow_control = q->e2e_flow_control;
	ce.conn.retry_count = q->retry_count;
	ce.conn.rnr_retry_count = q->rnr_retry_count;
	ce.conn.srq = q->srq;
	ce.conn.qp_num = q->local_qpn;
	rc = emit(c, &ce);
	if (rc != 0) {
		c->cm = NULL; /* the CM refuses and frees its id */
		uroce_cma_id_destroy(c);
		return UROCE_CM_REJ_CONSUMER_DEFINED;
	}
	return 0;
}

static int
sidr_req_received(struct uroce_cma *cma, struct uroce_cm_id *cmid, const struct uroce_cm_event *ev)
{
	const struct uroce_cm_sidr_req *q = &ev->msg->u.sidr_req;
	struct uroce_cma_event ce;
	struct uroce_cma_id *l, *c;
	struct uroce_cma_hdr h;
	uint16_t ps, port;
	int rc;

	if (!sid_split(q->service_id, &ps, &port))
		return UROCE_CM_SIDR_UNSUPPORTED;
	if (uroce_cma_hdr_decode(q->private_data, UROCE_CM_SIDR_REQ_PDATA, &h) != 0)
		return UROCE_CM_SIDR_REJECT;
	l = find_listener(cma, ps, port, h.dst_ip, h.ip_version, UROCE_QPT_UD);
	if (l == NULL)
		return UROCE_CM_SIDR_UNSUPPORTED;
	if (l->pending >= l->backlog)
		return UROCE_CM_SIDR_REJECT;
	c = child_new(l, &h, port, cmid);
	if (c == NULL)
		return UROCE_CM_SIDR_REJECT;
	memcpy(c->r.sgid, ev->from->sgid, 16);
	memcpy(c->r.dgid, ev->from->dgid, 16);
	c->r.pkey = q->pkey;
	c->r.mtu = cma->conf.active_mtu;
	c->r.hop_limit = ev->from->hop_limit;
	c->r.traffic_class = ev->from->tclass;
	c->r.flow_label = ev->from->flow_label;
	memset(&ce, 0, sizeof(ce));
	ce.type = UROCE_CMA_EV_CONNECT_REQUEST;
	ce.listen_id = l;
	ce.ud = true;
	ce.ud_param.private_data = q->private_data + UROCE_CMA_HDR_LEN;
	ce.ud_param.private_data_len = UROCE_CMA_SIDR_PDATA;
	/* Linux leaves the passive side's address vector empty. */
	rc = emit(c, &ce);
	if (rc != 0) {
		c->cm = NULL;
		uroce_cma_id_destroy(c);
		return UROCE_CM_SIDR_REJECT;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Connecting                                                                */
/* ------------------------------------------------------------------------ */

static void
path_addr(const struct uroce_cma_id *id, struct uroce_cm_addr *a)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->sgid, id->r.sgid, 16);
	memcpy(a->dgid, id->r.dgid, 16);
	a->tclass = id->r.traffic_class;
	a->hop_limit = id->r.hop_limit;
	a->flow_label = id->r.flow_label;
	a->remote_qpn = UROCE_GSI_QPN;
	a->pkey = id->r.pkey;
}

static void
hdr_of(const struct uroce_cma_id *id, uint8_t *pd)
{
	struct uroce_cma_hdr h;

	memset(&h, 0, sizeof(h));
	h.ip_version = id->r.src.family;
	h.src_port = id->r.src.port;
	memcpy(h.src_ip, id->r.src.ip, 16);
	memcpy(h.dst_ip, id->r.dst.ip, 16);
	uroce_cma_hdr_encode(pd, &h);
}

int
uroce_cma_connect(struct uroce_cma_id *id, const struct uroce_cma_conn_param *p)
{
	struct uroce_cma *cma;
	uint8_t pd[UROCE_CM_SIDR_REQ_PDATA];
	int rc;

	if (id == NULL || p == NULL || id->state != CMA_ROUTE_RESOLVED ||
	    (p->private_data_len > 0 && p->private_data == NULL))
		return -EINVAL;
	cma = id->cma;
	id->cm = uroce_cm_id_create(cma->cm, id);
	if (id->cm == NULL)
		return -ENOMEM;
	memset(pd, 0, sizeof(pd));
	hdr_of(id, pd);
	if (id->qp_type == UROCE_QPT_UD) {
		struct uroce_cm_sidr_req_param s;

		if (p->private_data_len > UROCE_CMA_SIDR_PDATA)
			goto inval;
		memset(&s, 0, sizeof(s));
		path_addr(id, &s.addr);
		s.service_id = uroce_cma_service_id(id->ps, id->r.dst.port);
		s.timeout_ms = uroce_cm_time_ms(cma->conf.cm_response_timeout);
		s.max_cm_retries = cma->conf.max_cm_retries;
		if (p->private_data_len > 0)
			memcpy(pd + UROCE_CMA_HDR_LEN, p->private_data, p->private_data_len);
		s.private_data = pd;
		s.private_data_len = UROCE_CMA_HDR_LEN + p->private_data_len;
		rc = uroce_cm_send_sidr_req(id->cm, &s);
	} else {
		struct uroce_cm_req_param q;

		if (p->private_data_len > UROCE_CMA_REQ_PDATA)
			goto inval;
		memset(&q, 0, sizeof(q));
		path_addr(id, &q.addr);
		q.service_id = uroce_cma_service_id(id->ps, id->r.dst.port);
		q.qpn = p->qp_num;
		q.transport = id->qp_type == UROCE_QPT_UC ? UROCE_CM_TRANSPORT_UC :
							    UROCE_CM_TRANSPORT_RC;
		q.starting_psn = id->seq_num;
		q.responder_resources = p->responder_resources;
		q.initiator_depth = p->initiator_depth;
		/* rdma_cm lowers counts above the 3-bit field to 7. */
		q.retry_count = (uint8_t)UROCE_MIN(p->retry_count, 7);
		q.rnr_retry_count = (uint8_t)UROCE_MIN(p->rnr_retry_count, 7);
		q.flow_control = p->flow_control;
		q.srq = p->srq;
		q.path_mtu = id->r.mtu;
		q.packet_life_time = id->r.packet_life_time;
		q.remote_cm_response_timeout = cma->conf.cm_response_timeout;
		q.local_cm_response_timeout = cma->conf.cm_response_timeout;
		q.max_cm_retries = cma->conf.max_cm_retries;
		if (p->private_data_len > 0)
			memcpy(pd + UROCE_CMA_HDR_LEN, p->private_data, p->private_data_len);
		q.private_data = pd;
		q.private_data_len = (uint8_t)(UROCE_CMA_HDR_LEN + p->private_data_len);
		rc = uroce_cm_send_req(id->cm, &q);
	}
	/* A send that found no room is retried by the CM's timer. */
	if (rc == -EINVAL)
		goto inval;
	id->state = CMA_CONNECT;
	return 0;
inval:
	uroce_cm_id_destroy(id->cm);
	id->cm = NULL;
	return -EINVAL;
}

int
uroce_cma_accept(struct uroce_cma_id *id, const struct uroce_cma_conn_param *p)
{
	enum uroce_cm_state st;
	int rc;

	if (id == NULL || p == NULL || id->cm == NULL || id->state != CMA_CONNECT ||
	    (p->private_data_len > 0 && p->private_data == NULL))
		return -EINVAL;
	st = uroce_cm_id_state(id->cm);
	if (st == UROCE_CM_SIDR_REQ_RCVD) {
		struct uroce_cm_sidr_rep_param s = {
			.status = UROCE_CM_SIDR_SUCCESS,
			.qpn = p->qp_num,
			.qkey = UROCE_CMA_UDP_QKEY,
			.private_data = p->private_data,
			.private_data_len = p->private_data_len,
		};

		if (p->private_data_len > UROCE_CM_SIDR_REP_PDATA)
			return -EINVAL;
		rc = uroce_cm_send_sidr_rep(id->cm, &s);
	} else {
		struct uroce_cm_rep_param r = {
			.qpn = p->qp_num,
			.starting_psn = id->seq_num,
			.responder_resources = p->responder_resources,
			.initiator_depth = p->initiator_depth,
			.rnr_retry_count = (uint8_t)UROCE_MIN(p->rnr_retry_count, 7),
			.flow_control = p->flow_control,
			.srq = p->srq,
			.private_data = p->private_data,
			.private_data_len = p->private_data_len,
		};

		if (p->private_data_len > UROCE_CM_REP_PDATA)
			return -EINVAL;
		rc = uroce_cm_send_rep(id->cm, &r);
	}
	if (rc == -EINVAL)
		return rc;
	child_done(id);
	return 0;
}

int
uroce_cma_reject(struct uroce_cma_id *id, const uint8_t *pd, uint8_t len, uint16_t reason)
{
	int rc;

	if (id == NULL || id->cm == NULL || (len > 0 && pd == NULL))
		return -EINVAL;
	if (uroce_cm_id_state(id->cm) == UROCE_CM_SIDR_REQ_RCVD) {
		struct uroce_cm_sidr_rep_param s = {
			.status = UROCE_CM_SIDR_REJECT,
			.private_data = pd,
			.private_data_len = len,
		};

		if (len > UROCE_CM_SIDR_REP_PDATA)
			return -EINVAL;
		rc = uroce_cm_send_sidr_rep(id->cm, &s);
	} else {
		rc = uroce_cm_send_rej(id->cm, reason ? reason : UROCE_CM_REJ_CONSUMER_DEFINED,
				       NULL, 0, pd, len);
	}
	if (rc == -EINVAL)
		return rc;
	child_done(id);
	return 0;
}

int
uroce_cma_establish(struct uroce_cma_id *id)
{
	if (id == NULL || id->cm == NULL)
		return -EINVAL;
	return uroce_cm_send_rtu(id->cm, NULL, 0);
}

int
uroce_cma_disconnect(struct uroce_cma_id *id)
{
	if (id == NULL || id->cm == NULL || id->qp_type == UROCE_QPT_UD)
		return -EINVAL;
	/* A DREQ if we may, else the DREP owed (Linux: dreq, else drep). */
	if (uroce_cm_send_dreq(id->cm, NULL, 0) == 0) {
		id->disconnecting = true;
		return 0;
	}
	return uroce_cm_send_drep(id->cm, NULL, 0);
}

int
uroce_cma_notify(struct uroce_cma_id *id, int ibv_event)
{
	if (id == NULL || id->cm == NULL)
		return -EINVAL;
	/* IBV_EVENT_COMM_EST: the peer's first packet is as good as its RTU. */
	if (ibv_event != 4)
		return 0;
	if (uroce_cm_established(id->cm) != 0)
		return -EINVAL;
	emit_simple(id, UROCE_CMA_EV_ESTABLISHED, 0);
	return 0;
}

int
uroce_cma_init_qp_attr(struct uroce_cma_id *id, enum uroce_qp_state state,
		       struct uroce_cm_qp_attr *a, int *mask)
{
	int rc;

	if (id == NULL || a == NULL || mask == NULL)
		return -EINVAL;
	if (id->qp_type == UROCE_QPT_UD || id->cm == NULL ||
	    uroce_cm_id_req(id->cm) == NULL) {
		/* Before a connection (and always for UD): rdma_cm's defaults. */
		memset(a, 0, sizeof(*a));
		a->qp_state = state;
		a->port_num = 1;
		a->sgid_index = id->r.sgid_index;
		switch (state) {
		case UROCE_QPS_INIT:
			*mask = UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT;
			if (id->qp_type == UROCE_QPT_UD) {
				a->qkey = UROCE_CMA_UDP_QKEY;
				*mask |= UROCE_QP_QKEY;
			} else {
				*mask |= UROCE_QP_ACCESS_FLAGS;
			}
			return 0;
		case UROCE_QPS_RTR:
			if (id->qp_type != UROCE_QPT_UD)
				return -EINVAL;
			*mask = UROCE_QP_STATE;
			return 0;
		case UROCE_QPS_RTS:
			if (id->qp_type != UROCE_QPT_UD)
				return -EINVAL;
			*mask = UROCE_QP_STATE | UROCE_QP_SQ_PSN;
			return 0;
		default:
			return -EINVAL;
		}
	}
	rc = uroce_cm_qp_attr(id->cm, state, id->cma->conf.active_mtu, a, mask);
	if (rc != 0)
		return rc;
	a->sgid_index = id->r.sgid_index;
	/* As Linux's rdma_cm: the receive PSN is the id's own sequence number
	 * (sent in its REQ or REP), the ACK timeout the option's if set. */
	if (state == UROCE_QPS_RTR)
		a->rq_psn = id->seq_num;
	if (state == UROCE_QPS_RTS && id->ack_timeout != 0 && (*mask & UROCE_QP_TIMEOUT))
		a->timeout = id->ack_timeout;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* CM events → rdma_cm events                                                */
/* ------------------------------------------------------------------------ */

static void
conn_event(struct uroce_cma_id *id, int type, int status, const uint8_t *pd, uint8_t len)
{
	struct uroce_cma_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.status = status;
	ev.conn.private_data = pd;
	ev.conn.private_data_len = len;
	emit(id, &ev);
}

static void
disconnected(struct uroce_cma_id *id, int status)
{
	if (id->state != CMA_CONNECT)
		return;
	id->state = CMA_DISCONNECT;
	conn_event(id, UROCE_CMA_EV_DISCONNECTED, status, NULL, 0);
}

static void
rep_received(struct uroce_cma_id *id, const struct uroce_cm_rep *r)
{
	struct uroce_cma_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = UROCE_CMA_EV_CONNECT_RESPONSE;
	ev.conn.private_data = r->private_data;
	ev.conn.private_data_len = UROCE_CM_REP_PDATA;
	ev.conn.responder_resources = r->initiator_depth;
	ev.conn.initiator_depth = r->responder_resources;
	ev.conn.flow_control = r->e2e_flow_control;
	ev.conn.rnr_retry_count = r->rnr_retry_count;
	ev.conn.srq = r->srq;
	ev.conn.qp_num = r->local_qpn;
	emit(id, &ev);
}

static void
sidr_rep_received(struct uroce_cma_id *id, const struct uroce_cm_sidr_rep *r)
{
	struct uroce_cma_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.ud = true;
	if (r->status != UROCE_CM_SIDR_SUCCESS) {
		ev.type = UROCE_CMA_EV_UNREACHABLE;
		ev.status = r->status;
		emit(id, &ev);
		return;
	}
	ev.type = UROCE_CMA_EV_ESTABLISHED;
	ev.ud_param.private_data = r->private_data;
	ev.ud_param.private_data_len = UROCE_CM_SIDR_REP_PDATA;
	ev.ud_param.qp_num = r->qpn;
	ev.ud_param.qkey = r->qkey;
	ev.ud_param.ah_valid = true;
	memcpy(ev.ud_param.dgid, id->r.dgid, 16);
	ev.ud_param.sgid_index = id->r.sgid_index;
	ev.ud_param.flow_label = id->r.flow_label;
	ev.ud_param.hop_limit = id->r.hop_limit;
	ev.ud_param.traffic_class = id->r.traffic_class;
	emit(id, &ev);
}

static int
cm_event(void *ctx, struct uroce_cm_id *cmid, const struct uroce_cm_event *ev)
{
	struct uroce_cma *cma = ctx;
	struct uroce_cma_id *id;

	if (ev->type == UROCE_CM_EV_REQ_RECEIVED)
		return req_received(cma, cmid, ev);
	if (ev->type == UROCE_CM_EV_SIDR_REQ_RECEIVED)
		return sidr_req_received(cma, cmid, ev);
	id = uroce_cm_id_context(cmid);
	if (id == NULL)
		return 0;
	switch (ev->type) {
	case UROCE_CM_EV_REP_RECEIVED:
		rep_received(id, &ev->msg->u.rep);
		break;
	case UROCE_CM_EV_RTU_RECEIVED:
		conn_event(id, UROCE_CMA_EV_ESTABLISHED, 0, NULL, 0);
		break;
	case UROCE_CM_EV_REJ_RECEIVED:
		child_done(id);
		id->state = CMA_DISCONNECT;
		conn_event(id, UROCE_CMA_EV_REJECTED, ev->msg->u.rej.reason,
			   ev->msg->u.rej.private_data, UROCE_CM_REJ_PDATA);
		break;
	case UROCE_CM_EV_REQ_TIMEOUT:
	case UROCE_CM_EV_REP_TIMEOUT:
	case UROCE_CM_EV_SIDR_TIMEOUT:
		id->state = CMA_DISCONNECT;
		emit_simple(id, UROCE_CMA_EV_UNREACHABLE, -ETIMEDOUT);
		break;
	case UROCE_CM_EV_DREQ_RECEIVED:
		/* Both sides disconnecting at once: the DREP is owed now. */
		if (id->disconnecting)
			uroce_cm_send_drep(id->cm, NULL, 0);
		disconnected(id, 0);
		break;
	case UROCE_CM_EV_DREP_RECEIVED:
		disconnected(id, 0);
		break;
	case UROCE_CM_EV_DREQ_TIMEOUT:
		disconnected(id, -ETIMEDOUT);
		break;
	case UROCE_CM_EV_TIMEWAIT_EXIT:
		emit_simple(id, UROCE_CMA_EV_TIMEWAIT_EXIT, 0);
		break;
	case UROCE_CM_EV_SIDR_REP_RECEIVED:
		sidr_rep_received(id, &ev->msg->u.sidr_rep);
		break;
	default:
		break;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Life                                                                      */
/* ------------------------------------------------------------------------ */

static uint64_t
cm_now(void *ctx)
{
	struct uroce_cma *cma = ctx;

	return cma->conf.ops->now_us(cma->conf.ctx);
}

static int
cm_send(void *ctx, const struct uroce_cm_addr *to, const uint8_t *mad)
{
	struct uroce_cma *cma = ctx;

	return cma->conf.ops->send(cma->conf.ctx, to, mad);
}

static const struct uroce_cm_ops cma_cm_ops = {
	.now_us = cm_now,
	.send = cm_send,
	.event = cm_event,
};

struct uroce_cma *
uroce_cma_create(const struct uroce_cma_conf *conf)
{
	struct uroce_cm_conf cc;
	struct uroce_cma *cma;

	if (conf == NULL || conf->ops == NULL || conf->ops->now_us == NULL ||
	    conf->ops->send == NULL || conf->ops->event == NULL || conf->n_gid > 16 ||
	    conf->active_mtu > UROCE_MTU_4096 || conf->packet_life_time > 30 ||
	    conf->cm_response_timeout > 31 || conf->max_cm_retries > 15) {
		errno = EINVAL;
		return NULL;
	}
	cma = calloc(1, sizeof(*cma));
	if (cma == NULL)
		return NULL;
	cma->conf = *conf;
	if (cma->conf.active_mtu == 0)
		cma->conf.active_mtu = UROCE_MTU_1024;
	if (cma->conf.packet_life_time == 0)
		cma->conf.packet_life_time = CMA_DEF_LIFE;
	if (cma->conf.cm_response_timeout == 0)
		cma->conf.cm_response_timeout = CMA_DEF_RESP_TIMEOUT;
	if (cma->conf.max_cm_retries == 0)
		cma->conf.max_cm_retries = CMA_DEF_RETRIES;
	cma->rng = ((uint64_t)conf->seed << 32 | 0x9E3779B9u) ^ 0xD1B54A32D192ED03ull;
	memset(&cc, 0, sizeof(cc));
	cc.ops = &cma_cm_ops;
	cc.ctx = cma;
	cc.ca_guid = conf->ca_guid;
	cc.seed = conf->seed;
	cma->cm = uroce_cm_create(&cc);
	if (cma->cm == NULL) {
		free(cma);
		errno = ENOMEM;
		return NULL;
	}
	return cma;
}

void
uroce_cma_destroy(struct uroce_cma *cma)
{
	if (cma == NULL)
		return;
	uroce_cm_destroy(cma->cm); /* every CM id, nothing sent */
	while (cma->ids != NULL) {
		struct uroce_cma_id *id = cma->ids;

		cma->ids = id->next;
		free(id);
	}
	free(cma);
}

struct uroce_cm *
uroce_cma_cm(struct uroce_cma *cma)
{
	return cma->cm;
}

void
uroce_cma_rx(struct uroce_cma *cma, const struct uroce_cm_addr *from, const uint8_t *mad,
	     uint32_t len)
{
	uroce_cm_rx(cma->cm, from, mad, len);
}

unsigned int
uroce_cma_poll(struct uroce_cma *cma)
{
	return uroce_cm_poll(cma->cm) + query_poll(cma);
}

uint64_t
uroce_cma_next_deadline(const struct uroce_cma *cma)
{
	uint64_t t = uroce_cm_next_deadline(cma->cm), q;

	if (cma->n_query == 0)
		return t;
	q = cma->conf.ops->now_us(cma->conf.ctx) + CMA_QUERY_POLL_US;
	return q < t ? q : t;
}
