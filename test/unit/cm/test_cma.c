/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The rdma_cm layer (lib/cm/cma.c): two ports, A (198.18.0.1) and B
 * (198.18.0.2), each with its own layer, joined by a wire that delivers
 * every MAD in order (or drops what the test says) on a fake clock. It
 * checks what librdmacm programs see: binds and ports, address and route
 * resolution, listeners, the CMA header, CONNECT_REQUEST with the peer's
 * addresses and private data, accept/reject/establish/disconnect and their
 * events, rdma_cm's statuses (REJ reasons, SIDR statuses, -ETIMEDOUT), SIDR
 * for UD, backlogs, and that the QP attributes both sides get agree.
 */

#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "uroce_common.h"
#include "uroce_cma.h"

#define MAXQ 64
#define MAXEV 32

struct port {
	struct uroce_cma *cma;
	uint8_t gid[16];
	struct {
		struct uroce_cma_event e;
		uint8_t pd[256];
	} ev[MAXEV];
	unsigned int nev;
	int answer;                     /* CONNECT_REQUEST's return value */
};

static struct port PA, PB;
static uint64_t clk;
static struct {
	struct port *from;
	uint8_t mad[UROCE_MAD_LEN];
	struct uroce_cm_addr to;
} wire[MAXQ];
static unsigned int wq;
static uint16_t drop_attr;          /* drop every MAD of this attribute */

static const uint8_t ip_a[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 1};
static const uint8_t ip_b[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2};
static const uint8_t ip_c[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 3};
static const uint8_t ip6_a[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static int owner;

static uint64_t
now_us(void *ctx)
{
	(void)ctx;
	return clk;
}

static int
send_mad(void *ctx, const struct uroce_cm_addr *to, const uint8_t *mad)
{
	cr_assert_lt(wq, MAXQ);
	wire[wq].from = ctx;
	memcpy(wire[wq].mad, mad, UROCE_MAD_LEN);
	wire[wq].to = *to;
	wq++;
	return 0;
}

static int
on_event(void *ctx, struct uroce_cma_id *id, const struct uroce_cma_event *ev)
{
	struct port *p = ctx;
	const uint8_t *pd = ev->ud ? ev->ud_param.private_data : ev->conn.private_data;
	uint8_t len = ev->ud ? ev->ud_param.private_data_len : ev->conn.private_data_len;

	cr_assert_lt(p->nev, MAXEV);
	p->ev[p->nev].e = *ev;
	if (len > 0)
		memcpy(p->ev[p->nev].pd, pd, len);
	p->nev++;
	if (ev->type == UROCE_CMA_EV_CONNECT_REQUEST && p->answer == 0)
		uroce_cma_id_set_owner(id, &owner);
	return ev->type == UROCE_CMA_EV_CONNECT_REQUEST ? p->answer : 0;
}

/* The port's neighbour table: what it answers for every next hop, and how often it was asked. */
static int hop_rc;
static unsigned int hop_asked;

static int
resolve_hop(void *ctx, const uint8_t gid[16])
{
	(void)ctx;
	(void)gid;
	hop_asked++;
	return hop_rc;
}

static const struct uroce_cma_ops ops = {now_us, send_mad, on_event, resolve_hop};

static struct uroce_cma *
port_make(struct port *p, const uint8_t *gid, const uint8_t *gid2, uint32_t seed)
{
	struct uroce_cma_conf c;

	memset(&c, 0, sizeof(c));
	c.ops = &ops;
	c.ctx = p;
	c.ca_guid = seed;
	c.seed = seed;
	c.n_gid = 2;
	memcpy(c.gids[0], gid, 16);
	if (gid2 != NULL)
		memcpy(c.gids[1], gid2, 16);
	c.active_mtu = UROCE_MTU_1024;
	c.max_cm_retries = 2;
	memcpy(p->gid, gid, 16);
	return uroce_cma_create(&c);
}

static void
setup(void)
{
	memset(&PA, 0, sizeof(PA));
	memset(&PB, 0, sizeof(PB));
	wq = 0;
	drop_attr = 0;
	hop_rc = 0;
	hop_asked = 0;
	clk = 5000000;
	PA.cma = port_make(&PA, ip_a, ip6_a, 11);
	PB.cma = port_make(&PB, ip_b, NULL, 22);
	cr_assert(PA.cma != NULL && PB.cma != NULL);
}

static void
teardown(void)
{
	uroce_cma_destroy(PA.cma);
	uroce_cma_destroy(PB.cma);
}

TestSuite(cma, .init = setup, .fini = teardown);

/* Deliver every MAD in flight (and those they cause). @return how many. */
static unsigned int
pump(void)
{
	unsigned int n = 0, i;

	while (wq > 0) {
		struct port *from = wire[0].from, *to = from == &PA ? &PB : &PA;
		struct uroce_cm_addr a;
		uint8_t mad[UROCE_MAD_LEN];

		memcpy(mad, wire[0].mad, sizeof(mad));
		for (i = 1; i < wq; i++)
			wire[i - 1] = wire[i];
		wq--;
		if (drop_attr != 0 && uroce_get_be16(mad + 16) == drop_attr)
			continue;
		memset(&a, 0, sizeof(a));
		memcpy(a.sgid, to->gid, 16);
		memcpy(a.dgid, from->gid, 16);
		a.remote_qpn = 1;
		a.hop_limit = 64;
		uroce_cma_rx(to->cma, &a, mad, sizeof(mad));
		n++;
	}
	return n;
}

static void
advance_ms(uint64_t ms)
{
	clk += ms * 1000;
	uroce_cma_poll(PA.cma);
	uroce_cma_poll(PB.cma);
}

static struct uroce_cma_addr
v4(const uint8_t ip[16], uint16_t port)
{
	struct uroce_cma_addr a = {.family = 4, .port = port};

	memcpy(a.ip, ip, 16);
	return a;
}

static struct uroce_cma_addr
any4(uint16_t port)
{
	struct uroce_cma_addr a = {.family = 4, .port = port};

	a.ip[10] = 0xff;
	a.ip[11] = 0xff;
	return a;
}

static const struct uroce_cma_event *
last(const struct port *p)
{
	cr_assert_gt(p->nev, 0, "no event");
	return &p->ev[p->nev - 1].e;
}

static const struct uroce_cma_event *
expect_ev(const struct port *p, unsigned int i, int type)
{
	cr_assert_gt(p->nev, i, "event %u (%s) missing", i, uroce_cma_event_str(type));
	cr_expect_eq(p->ev[i].e.type, type, "event %u: %s, expected %s", i,
		     uroce_cma_event_str(p->ev[i].e.type), uroce_cma_event_str(type));
	return &p->ev[i].e;
}

static struct uroce_cma_id *
listener(uint16_t ps, enum uroce_qp_type t, const struct uroce_cma_addr *a)
{
	struct uroce_cma_id *l = uroce_cma_id_create(PB.cma, &owner, ps, t);

	cr_assert_not_null(l);
	cr_assert_eq(uroce_cma_bind(l, a), 0);
	cr_assert_eq(uroce_cma_listen(l, 0), 0);
	return l;
}

/* A resolves B:port and its route. */
static struct uroce_cma_id *
resolved(uint16_t ps, enum uroce_qp_type t, uint16_t port)
{
	struct uroce_cma_id *c = uroce_cma_id_create(PA.cma, &owner, ps, t);
	struct uroce_cma_addr d = v4(ip_b, port);

	cr_assert_not_null(c);
	cr_assert_eq(uroce_cma_resolve_addr(c, NULL, &d, 2000), 0);
	cr_assert_eq(uroce_cma_resolve_route(c), 0);
	return c;
}

static struct uroce_cma_conn_param
cparam(uint32_t qpn, const char *pd)
{
	struct uroce_cma_conn_param p = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.qp_num = qpn,
	};

	if (pd != NULL) {
		p.private_data = (const uint8_t *)pd;
		p.private_data_len = (uint8_t)strlen(pd);
	}
	return p;
}

/* ------------------------------------------------------------------------ */

Test(cma, header_codec)
{
	static const uint8_t golden[36] = {0x00, 0x40, 0xd0, 0xbc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					   0, 0, 0xc6, 0x12, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0,
					   0, 0, 0, 0, 0xc6, 0x12, 0x00, 0x01};
	struct uroce_cma_hdr h;
	uint8_t pd[40];

	cr_assert_eq(uroce_cma_hdr_decode(golden, sizeof(golden), &h), 0);
	cr_expect_eq(h.ip_version, 4);
	cr_expect_eq(h.src_port, 0xd0bc);
	cr_expect_eq(h.src_ip[10], 0xff, "IPv4 comes back mapped");
	cr_expect_eq(h.dst_ip[15], 1);
	cr_assert_eq(uroce_cma_hdr_encode(pd, &h), 0);
	cr_expect_arr_eq(pd, golden, 36, "12 zero bytes, not ::ffff:, on the wire");
	h.ip_version = 6;
	memcpy(h.src_ip, ip6_a, 16);
	cr_assert_eq(uroce_cma_hdr_encode(pd, &h), 0);
	cr_expect_eq(pd[1], 0x60);
	cr_expect_arr_eq(pd + 4, ip6_a, 16);
	cr_expect_eq(uroce_cma_hdr_decode(golden, 35, &h), -EMSGSIZE);
	memcpy(pd, golden, 36);
	pd[0] = 1;
	cr_expect_eq(uroce_cma_hdr_decode(pd, 36, &h), -EPROTONOSUPPORT);
	pd[0] = 0;
	pd[1] = 0x50;
	cr_expect_eq(uroce_cma_hdr_decode(pd, 36, &h), -EAFNOSUPPORT);
	h.ip_version = 5;
	cr_expect_eq(uroce_cma_hdr_encode(pd, &h), -EINVAL);
	cr_expect_eq(uroce_cma_service_id(UROCE_CMA_PS_TCP, 7174), 0x0000000001061C06ull);
	cr_expect_str_eq(uroce_cma_event_str(UROCE_CMA_EV_TIMEWAIT_EXIT),
			 "RDMA_CM_EVENT_TIMEWAIT_EXIT");
	cr_expect_str_eq(uroce_cma_event_str(16), "UNKNOWN EVENT");
}

Test(cma, ids_checked)
{
	errno = 0;
	cr_expect_null(uroce_cma_id_create(PA.cma, NULL, UROCE_CMA_PS_IPOIB, UROCE_QPT_UD));
	cr_expect_eq(errno, EPROTONOSUPPORT);
	cr_expect_null(uroce_cma_id_create(PA.cma, NULL, UROCE_CMA_PS_TCP, UROCE_QPT_UD));
	cr_expect_eq(errno, EINVAL);
	cr_expect_null(uroce_cma_id_create(PA.cma, NULL, UROCE_CMA_PS_UDP, UROCE_QPT_RC));
	cr_expect_null(uroce_cma_id_create(PA.cma, NULL, 0x1234, UROCE_QPT_RC));
	cr_expect_not_null(uroce_cma_id_create(PA.cma, NULL, UROCE_CMA_PS_IB, UROCE_QPT_UD));
	cr_expect_eq(uroce_cma_id_count(PA.cma), 1);
}

Test(cma, bind_and_ports)
{
	struct uroce_cma_id *a = uroce_cma_id_create(PA.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	struct uroce_cma_id *b = uroce_cma_id_create(PA.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	struct uroce_cma_id *u = uroce_cma_id_create(PA.cma, &owner, UROCE_CMA_PS_UDP, UROCE_QPT_UD);
	struct uroce_cma_addr x = v4(ip_a, 7174), other = v4(ip_c, 7174), any = any4(0);
	struct uroce_cma_route r;

	cr_expect_eq(uroce_cma_bind(a, &other), -EADDRNOTAVAIL, "not an address of this port");
	cr_assert_eq(uroce_cma_bind(a, &x), 0);
	cr_expect_eq(uroce_cma_bind(a, &x), -EINVAL, "bound already");
	cr_expect_eq(uroce_cma_bind(b, &x), -EADDRINUSE);
	cr_expect_eq(uroce_cma_bind(u, &x), 0, "another port space");
	cr_assert_eq(uroce_cma_bind(b, &any), 0);
	uroce_cma_query(b, &r);
	cr_expect(r.src.port >= 32768 && r.src.port <= 60999, "ephemeral port %u", r.src.port);
	uroce_cma_query(a, &r);
	cr_expect_eq(r.src.port, 7174);
	cr_expect_eq(r.sgid_index, 0);
	uroce_cma_id_destroy(a);
	a = uroce_cma_id_create(PA.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	cr_expect_eq(uroce_cma_bind(a, &x), 0, "free again once destroyed");
}

Test(cma, reuseaddr_and_listeners)
{
	struct uroce_cma_id *a = uroce_cma_id_create(PA.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	struct uroce_cma_id *b = uroce_cma_id_create(PA.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	struct uroce_cma_id *c = uroce_cma_id_create(PA.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	struct uroce_cma_addr x = v4(ip_a, 5000), any6;

	uroce_cma_set_option(a, UROCE_CMA_OPT_REUSEADDR, 1);
	uroce_cma_set_option(b, UROCE_CMA_OPT_REUSEADDR, 1);
	cr_assert_eq(uroce_cma_bind(a, &x), 0);
	cr_expect_eq(uroce_cma_bind(b, &x), 0, "both asked for REUSEADDR");
	cr_expect_eq(uroce_cma_listen(b, 1), -EADDRINUSE, "a listener shares nothing");
	uroce_cma_id_destroy(a);
	cr_expect_eq(uroce_cma_listen(b, 1), 0);
	/* An IPv6 "any" listener covers IPv4 too, unless IPv6-only. */
	memset(&any6, 0, sizeof(any6));
	any6.family = 6;
	any6.port = 5000;
	cr_expect_eq(uroce_cma_bind(c, &any6), -EADDRINUSE);
	uroce_cma_set_option(c, UROCE_CMA_OPT_AFONLY, 1);
	cr_expect_eq(uroce_cma_set_option(c, UROCE_CMA_OPT_AFONLY, 1), 0);
	cr_expect_eq(uroce_cma_bind(c, &any6), 0);
	cr_expect_eq(uroce_cma_set_option(c, UROCE_CMA_OPT_REUSEADDR, 1), -EINVAL, "too late");
	cr_expect_eq(uroce_cma_set_option(c, 99, 1), -ENOPROTOOPT);
	cr_expect_eq(uroce_cma_set_option(c, UROCE_CMA_OPT_ACK_TIMEOUT, 32), -EINVAL);
}

Test(cma, resolve_addr_picks_the_source)
{
	struct uroce_cma_id *c = uroce_cma_id_create(PA.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	struct uroce_cma_addr d = v4(ip_b, 7174), self = v4(ip_a, 7174), bad;
	struct uroce_cma_route r;

	cr_assert_eq(uroce_cma_resolve_addr(c, NULL, &d, 2000), 0);
	expect_ev(&PA, 0, UROCE_CMA_EV_ADDR_RESOLVED);
	cr_expect_eq(last(&PA)->status, 0);
	uroce_cma_query(c, &r);
	cr_expect(r.bound && r.resolved);
	cr_expect_arr_eq(r.src.ip, ip_a, 16);
	cr_expect(r.src.port >= 32768, "an ephemeral port was bound");
	cr_expect_arr_eq(r.dgid, ip_b, 16);
	cr_expect_arr_eq(r.sgid, ip_a, 16);
	/* to one of our own addresses: loopback, that very address */
	c = uroce_cma_id_create(PA.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	cr_assert_eq(uroce_cma_resolve_addr(c, NULL, &self, 2000), 0);
	uroce_cma_query(c, &r);
	cr_expect_arr_eq(r.dgid, ip_a, 16);
	/* B has no IPv6 address */
	c = uroce_cma_id_create(PB.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	memset(&bad, 0, sizeof(bad));
	bad.family = 6;
	memcpy(bad.ip, ip6_a, 16);
	cr_expect_eq(uroce_cma_resolve_addr(c, NULL, &bad, 2000), -EADDRNOTAVAIL);
	/* any, multicast, malformed destinations */
	bad = any4(1);
	cr_expect_eq(uroce_cma_resolve_addr(c, NULL, &bad, 2000), -EINVAL);
	bad = v4(ip_b, 1);
	bad.ip[12] = 224;
	cr_expect_eq(uroce_cma_resolve_addr(c, NULL, &bad, 2000), -EINVAL);
	bad.family = 6;
	cr_expect_eq(uroce_cma_resolve_addr(c, NULL, &bad, 2000), -EINVAL);
	/* a source that is not ours */
	bad = v4(ip_c, 0);
	cr_expect_eq(uroce_cma_resolve_addr(c, &bad, &d, 2000), -EADDRNOTAVAIL);
	cr_expect_eq(uroce_cma_resolve_route(c), -EINVAL, "address not resolved");
}

/*
 * As Linux's rdma_resolve_addr, ADDR_RESOLVED waits for the next hop's MAC:
 * a REQ sent before it was dropped by uroced's port, and the connection
 * waited for the CM's retry (UCX through rdmacm: 5 s per connection).
 */
Test(cma, resolve_addr_waits_for_the_next_hop)
{
	struct uroce_cma_id *c = uroce_cma_id_create(PA.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	struct uroce_cma_addr d = v4(ip_b, 7174), self = v4(ip_a, 7174);
	struct uroce_cma_route r;

	hop_rc = -EAGAIN;
	cr_assert_eq(uroce_cma_resolve_addr(c, NULL, &d, 2000), 0);
	cr_expect_eq(PA.nev, 0, "no ADDR_RESOLVED before the next hop is known");
	cr_expect_eq(hop_asked, 1);
	cr_expect_eq(uroce_cma_resolve_route(c), -EINVAL, "address not resolved yet");
	cr_expect_eq(uroce_cma_resolve_addr(c, NULL, &d, 2000), -EINVAL, "one query at a time");
	cr_expect_leq(uroce_cma_next_deadline(PA.cma), clk + 1000, "the query is polled");
	advance_ms(1);
	cr_expect_eq(PA.nev, 0);
	cr_expect_eq(hop_asked, 2);
	hop_rc = 0;
	advance_ms(1);
	expect_ev(&PA, 0, UROCE_CMA_EV_ADDR_RESOLVED);
	cr_expect_eq(last(&PA)->status, 0);
	cr_expect_eq(uroce_cma_next_deadline(PA.cma), UINT64_MAX, "nothing left to poll");
	cr_expect_eq(uroce_cma_resolve_route(c), 0);
	uroce_cma_query(c, &r);
	cr_expect(r.resolved);
	/* our own address (loopback) needs no neighbour */
	hop_rc = -EAGAIN;
	hop_asked = 0;
	c = uroce_cma_id_create(PA.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	cr_assert_eq(uroce_cma_resolve_addr(c, NULL, &self, 2000), 0);
	expect_ev(&PA, 2, UROCE_CMA_EV_ADDR_RESOLVED);
	cr_expect_eq(hop_asked, 0);
}

Test(cma, resolve_addr_fails_as_the_neighbour_does)
{
	struct uroce_cma_id *c = uroce_cma_id_create(PA.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	struct uroce_cma_addr d = v4(ip_b, 7174);
	struct uroce_cma_route r;

	/* A failure from an earlier resolution: the port starts over, so it
	 * counts only once the new one has been pending. */
	hop_rc = -EHOSTUNREACH;
	cr_assert_eq(uroce_cma_resolve_addr(c, NULL, &d, 2000), 0);
	advance_ms(1);
	cr_expect_eq(PA.nev, 0, "the stale failure is not reported");
	hop_rc = -EAGAIN;
	advance_ms(1);
	hop_rc = -EHOSTUNREACH;
	advance_ms(1);
	expect_ev(&PA, 0, UROCE_CMA_EV_ADDR_ERROR);
	cr_expect_eq(last(&PA)->status, -EHOSTUNREACH);
	uroce_cma_query(c, &r);
	cr_expect(r.bound && !r.resolved, "back to bound, as Linux's ADDR_BOUND");
	cr_expect_eq(uroce_cma_resolve_route(c), -EINVAL);
	/* again: nobody answers within rdma_resolve_addr's timeout */
	hop_rc = -EAGAIN;
	cr_assert_eq(uroce_cma_resolve_addr(c, NULL, &d, 500), 0);
	advance_ms(499);
	cr_expect_eq(PA.nev, 1);
	advance_ms(1);
	expect_ev(&PA, 1, UROCE_CMA_EV_ADDR_ERROR);
	cr_expect_eq(last(&PA)->status, -ETIMEDOUT);
	/* an id destroyed while it waits is forgotten */
	cr_assert_eq(uroce_cma_resolve_addr(c, NULL, &d, 500), 0);
	uroce_cma_id_destroy(c);
	cr_expect_eq(uroce_cma_next_deadline(PA.cma), UINT64_MAX);
	advance_ms(1000);
	cr_expect_eq(PA.nev, 2);
}

Test(cma, route_like_linux)
{
	struct uroce_cma_id *c = uroce_cma_id_create(PA.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	struct uroce_cma_addr src = v4(ip_a, 0xd0bc), d = v4(ip_b, 0x4853);
	struct uroce_cma_route r;

	uroce_cma_set_option(c, UROCE_CMA_OPT_TOS, 0x20);
	cr_assert_eq(uroce_cma_resolve_addr(c, &src, &d, 2000), 0);
	cr_assert_eq(uroce_cma_resolve_route(c), 0);
	expect_ev(&PA, 1, UROCE_CMA_EV_ROUTE_RESOLVED);
	uroce_cma_query(c, &r);
	cr_expect(r.has_path);
	cr_expect_eq(r.flow_label, 0x98F17, "the golden REQ's, from ports 0xd0bc and 0x4853");
	cr_expect_eq(r.mtu, UROCE_MTU_1024);
	cr_expect_eq(r.hop_limit, 64);
	cr_expect_eq(r.traffic_class, 0x20);
	cr_expect_eq(r.packet_life_time, 16);
	cr_expect_eq(r.pkey, 0xFFFF);
}

/* The whole of rping's connection, and the attributes both sides get. */
Test(cma, connect_accept_establish_disconnect)
{
	struct uroce_cma_addr la = any4(7174);
	struct uroce_cma_id *l = listener(UROCE_CMA_PS_TCP, UROCE_QPT_RC, &la), *c, *s;
	struct uroce_cma_conn_param p = cparam(0x11, "hello"), ap = cparam(0x22, "world");
	const struct uroce_cma_event *e;
	struct uroce_cm_qp_attr ar, as, br, bs;
	struct uroce_cma_route rc, rs;
	int m;

	c = resolved(UROCE_CMA_PS_TCP, UROCE_QPT_RC, 7174);
	p.responder_resources = 2;
	p.initiator_depth = 3;
	p.retry_count = 9; /* rdma_cm lowers it to 7 */
	cr_assert_eq(uroce_cma_connect(c, &p), 0);
	cr_expect_eq(uroce_cma_connect(c, &p), -EINVAL, "not twice");
	cr_expect_eq(pump(), 1);
	/* Expect: B's CONNECT_REQUEST names the listener, a new id, the peer's endpoints. */
	e = expect_ev(&PB, 0, UROCE_CMA_EV_CONNECT_REQUEST);
	cr_expect_eq(e->listen_id, l);
	s = e->id;
	cr_assert(s != NULL && s != l);
	cr_expect_eq(uroce_cma_id_owner(s), &owner);
	cr_expect_eq(e->conn.private_data_len, 56, "the whole user area of a REQ");
	cr_expect_arr_eq(PB.ev[0].pd, "hello", 5);
	cr_expect_eq(PB.ev[0].pd[5], 0);
	cr_expect_eq(e->conn.responder_resources, 3, "crossed over");
	cr_expect_eq(e->conn.initiator_depth, 2);
	cr_expect_eq(e->conn.retry_count, 7);
	cr_expect_eq(e->conn.qp_num, 0x11);
	uroce_cma_query(s, &rs);
	uroce_cma_query(c, &rc);
	cr_expect_arr_eq(rs.src.ip, ip_b, 16);
	cr_expect_eq(rs.src.port, 7174);
	cr_expect_arr_eq(rs.dst.ip, ip_a, 16);
	cr_expect_eq(rs.dst.port, rc.src.port, "the CMA header's source port");
	cr_expect_arr_eq(rs.dgid, ip_a, 16);
	cr_expect_eq(rs.flow_label, rc.flow_label);
	cr_expect_eq(uroce_cma_id_ps(s), UROCE_CMA_PS_TCP);
	cr_expect_eq(uroce_cma_id_qp_type(s), UROCE_QPT_RC);
	/* Expect: the accepting side's attributes (librdmacm asks before the REP). */
	cr_assert_eq(uroce_cma_init_qp_attr(s, UROCE_QPS_RTR, &br, &m), 0);
	cr_assert_eq(uroce_cma_init_qp_attr(s, UROCE_QPS_RTS, &bs, &m), 0);
	cr_expect_eq(br.dest_qp_num, 0x11);
	ap.responder_resources = 3;
	ap.initiator_depth = 2;
	cr_assert_eq(uroce_cma_accept(s, &ap), 0);
	cr_expect_eq(pump(), 1);
	e = expect_ev(&PA, 2, UROCE_CMA_EV_CONNECT_RESPONSE);
	cr_expect_eq(e->conn.qp_num, 0x22);
	cr_expect_arr_eq(PA.ev[2].pd, "world", 5);
	cr_expect_eq(e->conn.private_data_len, 196);
	cr_expect_eq(e->conn.responder_resources, 2);
	cr_expect_eq(e->conn.initiator_depth, 3);
	cr_assert_eq(uroce_cma_init_qp_attr(c, UROCE_QPS_RTR, &ar, &m), 0);
	cr_assert_eq(uroce_cma_init_qp_attr(c, UROCE_QPS_RTS, &as, &m), 0);
	/* Expect: what each side sends with is what the other expects. */
	cr_expect_eq(as.sq_psn, br.rq_psn);
	cr_expect_eq(bs.sq_psn, ar.rq_psn);
	cr_expect_eq(ar.dest_qp_num, 0x22);
	cr_expect_eq(as.max_rd_atomic, 3);
	cr_expect_eq(br.max_dest_rd_atomic, 3);
	cr_expect_eq(ar.max_dest_rd_atomic, 2);
	cr_expect_eq(bs.max_rd_atomic, 2);
	cr_expect_eq(as.timeout, bs.timeout, "both 17: ACK delay 15, life 16");
	cr_expect_eq(as.timeout, 17);
	cr_expect_eq(ar.sgid_index, 0);
	/* Expect: establish sends the RTU; B sees ESTABLISHED. */
	cr_assert_eq(uroce_cma_establish(c), 0);
	cr_expect_eq(pump(), 1);
	expect_ev(&PB, 1, UROCE_CMA_EV_ESTABLISHED);
	/* Expect: A disconnects; B sees DISCONNECTED, answers; A sees DISCONNECTED. */
	cr_assert_eq(uroce_cma_disconnect(c), 0);
	pump();
	expect_ev(&PB, 2, UROCE_CMA_EV_DISCONNECTED);
	cr_expect_eq(PA.nev, 3, "A hears when the DREP comes");
	cr_assert_eq(uroce_cma_disconnect(s), 0);
	pump();
	e = expect_ev(&PA, 3, UROCE_CMA_EV_DISCONNECTED);
	cr_expect_eq(e->status, 0);
	cr_expect_eq(uroce_cma_disconnect(s), -EINVAL, "nothing left to disconnect");
	advance_ms(1000);
	expect_ev(&PA, 4, UROCE_CMA_EV_TIMEWAIT_EXIT);
	expect_ev(&PB, 3, UROCE_CMA_EV_TIMEWAIT_EXIT);
	uroce_cma_id_destroy(c);
	uroce_cma_id_destroy(s);
	uroce_cma_id_destroy(l);
	cr_expect_eq(wq, 0, "nothing more to send");
	cr_expect_eq(uroce_cma_id_count(PA.cma) + uroce_cma_id_count(PB.cma), 0);
	cr_expect_eq(uroce_cm_id_count(uroce_cma_cm(PA.cma)), 0);
	cr_expect_eq(uroce_cm_id_count(uroce_cma_cm(PB.cma)), 0);
}

/* The passive side disconnects; a destroyed connected id still sends its DREQ. */
Test(cma, passive_disconnect_and_destroy)
{
	struct uroce_cma_addr la = v4(ip_b, 7174);
	struct uroce_cma_conn_param p = cparam(1, NULL);
	struct uroce_cma_id *c, *s;

	listener(UROCE_CMA_PS_TCP, UROCE_QPT_RC, &la);
	c = resolved(UROCE_CMA_PS_TCP, UROCE_QPT_RC, 7174);
	uroce_cma_connect(c, &p);
	pump();
	s = last(&PB)->id;
	uroce_cma_accept(s, &p);
	pump();
	uroce_cma_establish(c);
	pump();
	uroce_cma_id_destroy(s);
	pump();
	expect_ev(&PA, 3, UROCE_CMA_EV_DISCONNECTED);
	cr_assert_eq(uroce_cma_disconnect(c), 0, "the DREP owed");
	pump();
	advance_ms(1000);
	cr_expect_eq(uroce_cm_id_count(uroce_cma_cm(PB.cma)), 0, "B's CM id gone after time wait");
}

/* An accepted connection uses its listener's port without holding it (as
 * on Linux): the listener goes, a new one takes the port (perftest -R does). */
Test(cma, children_hold_no_port)
{
	struct uroce_cma_addr la = v4(ip_b, 7175);
	struct uroce_cma_conn_param p = cparam(1, NULL);
	struct uroce_cma_id *l, *l2, *c, *s;

	l = listener(UROCE_CMA_PS_TCP, UROCE_QPT_RC, &la);
	c = resolved(UROCE_CMA_PS_TCP, UROCE_QPT_RC, 7175);
	uroce_cma_connect(c, &p);
	pump();
	s = last(&PB)->id;
	cr_assert_eq(uroce_cma_accept(s, &p), 0);
	pump();
	cr_assert_eq(uroce_cma_establish(c), 0);
	pump();
	l2 = uroce_cma_id_create(PB.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	cr_assert_eq(uroce_cma_bind(l2, &la), -EADDRINUSE, "the listener still has the port");
	uroce_cma_id_destroy(l);
	cr_expect_eq(uroce_cma_bind(l2, &la), 0, "the accepted id kept the port");
	cr_expect_eq(uroce_cma_listen(l2, 1), 0);
}

Test(cma, rejects)
{
	struct uroce_cma_addr la = v4(ip_b, 7174);
	struct uroce_cma_conn_param p = cparam(1, NULL);
	struct uroce_cma_id *c;
	const struct uroce_cma_event *e;

	listener(UROCE_CMA_PS_TCP, UROCE_QPT_RC, &la);
	/* by the consumer, with private data */
	c = resolved(UROCE_CMA_PS_TCP, UROCE_QPT_RC, 7174);
	uroce_cma_connect(c, &p);
	pump();
	cr_assert_eq(uroce_cma_reject(last(&PB)->id, (const uint8_t *)"no thanks", 9, 0), 0);
	pump();
	e = expect_ev(&PA, 2, UROCE_CMA_EV_REJECTED);
	cr_expect_eq(e->status, 28, "Consumer Defined");
	cr_expect_eq(e->conn.private_data_len, 148);
	cr_expect_arr_eq(PA.ev[2].pd, "no thanks", 9);
	/* rdma_reject_ece's reason */
	c = resolved(UROCE_CMA_PS_TCP, UROCE_QPT_RC, 7174);
	uroce_cma_connect(c, &p);
	pump();
	uroce_cma_reject(last(&PB)->id, NULL, 0, 35);
	pump();
	cr_expect_eq(last(&PA)->status, 35);
	/* nobody on the port */
	c = resolved(UROCE_CMA_PS_TCP, UROCE_QPT_RC, 7175);
	uroce_cma_connect(c, &p);
	pump();
	e = last(&PA);
	cr_expect_eq(e->type, UROCE_CMA_EV_REJECTED);
	cr_expect_eq(e->status, 8, "invalid service ID");
	/* the consumer refuses the request in its event callback */
	PB.answer = -1;
	c = resolved(UROCE_CMA_PS_TCP, UROCE_QPT_RC, 7174);
	uroce_cma_connect(c, &p);
	pump();
	cr_expect_eq(last(&PA)->status, 28);
	cr_expect_eq(uroce_cma_id_count(PB.cma), 3, "the listener and the two children refused later");
}

/* A listener on one address hears nothing for another; one on any does. */
Test(cma, listener_address_matching)
{
	struct uroce_cma_addr la = v4(ip_c, 7174), any = any4(7174);
	struct uroce_cma_conn_param p = cparam(1, NULL);
	struct uroce_cma_id *c, *l;
	struct uroce_cma *save = PB.cma;

	/* B answers to 198.18.0.3 too; the listener is on .3 only. */
	PB.cma = port_make(&PB, ip_b, ip_c, 22);
	l = listener(UROCE_CMA_PS_TCP, UROCE_QPT_RC, &la);
	c = resolved(UROCE_CMA_PS_TCP, UROCE_QPT_RC, 7174);
	uroce_cma_connect(c, &p);
	pump();
	cr_expect_eq(last(&PA)->status, 8);
	uroce_cma_id_destroy(l);
	listener(UROCE_CMA_PS_TCP, UROCE_QPT_RC, &any);
	c = resolved(UROCE_CMA_PS_TCP, UROCE_QPT_RC, 7174);
	uroce_cma_connect(c, &p);
	pump();
	cr_expect_eq(last(&PB)->type, UROCE_CMA_EV_CONNECT_REQUEST);
	uroce_cma_destroy(PB.cma);
	PB.cma = save;
}

/* A REQ to a GID that is not the port's: REJ 12 naming it. */
Test(cma, invalid_gid)
{
	struct uroce_cma_addr any = any4(7174);
	struct uroce_cma_conn_param p = cparam(1, NULL);
	struct uroce_cma_id *c;

	uroce_cma_destroy(PB.cma);
	PB.cma = port_make(&PB, ip_c, NULL, 22); /* the wire still says .2 */
	listener(UROCE_CMA_PS_TCP, UROCE_QPT_RC, &any);
	c = resolved(UROCE_CMA_PS_TCP, UROCE_QPT_RC, 7174);
	uroce_cma_connect(c, &p);
	pump();
	cr_expect_eq(last(&PA)->type, UROCE_CMA_EV_REJECTED);
	cr_expect_eq(last(&PA)->status, 12);
}

/* A CMA header of another version is refused (REJ 28), as rdma_cm does. */
Test(cma, cma_header_version_refused)
{
	struct uroce_cma_addr any = any4(7174);
	struct uroce_cm_req_param q;
	struct uroce_cm_id *raw;
	uint8_t pd[36] = {1, 0x40};

	listener(UROCE_CMA_PS_TCP, UROCE_QPT_RC, &any);
	raw = uroce_cm_id_create(uroce_cma_cm(PA.cma), NULL);
	memset(&q, 0, sizeof(q));
	memcpy(q.addr.sgid, ip_a, 16);
	memcpy(q.addr.dgid, ip_b, 16);
	q.service_id = uroce_cma_service_id(UROCE_CMA_PS_TCP, 7174);
	q.path_mtu = UROCE_MTU_1024;
	q.max_cm_retries = 1;
	q.private_data = pd;
	q.private_data_len = sizeof(pd);
	cr_assert_eq(uroce_cm_send_req(raw, &q), 0);
	pump();
	cr_expect_eq(PB.nev, 0);
	cr_expect_eq(uroce_cm_id_state(raw), UROCE_CM_IDLE, "refused");
	cr_expect_eq(uroce_cm_counter(uroce_cma_cm(PB.cma), UROCE_CM_CNT_REJ_SENT), 1);
}

Test(cma, backlog)
{
	struct uroce_cma_id *l = uroce_cma_id_create(PB.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	struct uroce_cma_addr la = v4(ip_b, 7174);
	struct uroce_cma_conn_param p = cparam(1, NULL);
	struct uroce_cma_id *c1, *c2, *c3;

	uroce_cma_bind(l, &la);
	cr_assert_eq(uroce_cma_listen(l, 1), 0);
	c1 = resolved(UROCE_CMA_PS_TCP, UROCE_QPT_RC, 7174);
	c2 = resolved(UROCE_CMA_PS_TCP, UROCE_QPT_RC, 7174);
	p.qp_num = 1;
	uroce_cma_connect(c1, &p);
	p.qp_num = 2;
	uroce_cma_connect(c2, &p);
	pump();
	cr_expect_eq(PB.nev, 1, "one waits, the other is refused");
	cr_expect_eq(last(&PA)->type, UROCE_CMA_EV_REJECTED);
	/* once answered, it no longer counts */
	uroce_cma_accept(last(&PB)->id, &p);
	c3 = resolved(UROCE_CMA_PS_TCP, UROCE_QPT_RC, 7174);
	p.qp_num = 3;
	uroce_cma_connect(c3, &p);
	pump();
	cr_expect_eq(PB.nev, 2);
}

/* No answer at all: UNREACHABLE with -ETIMEDOUT after the retries. */
Test(cma, unreachable)
{
	struct uroce_cma_conn_param p = cparam(1, NULL);
	struct uroce_cma_id *c = resolved(UROCE_CMA_PS_TCP, UROCE_QPT_RC, 7174);
	unsigned int i;

	drop_attr = UROCE_CM_ATTR_REQ;
	uroce_cma_connect(c, &p);
	for (i = 0; i < 3; i++) {
		pump();
		advance_ms(4608);
	}
	pump();
	cr_expect_eq(last(&PA)->type, UROCE_CMA_EV_UNREACHABLE);
	cr_expect_eq(last(&PA)->status, -ETIMEDOUT);
	cr_expect_eq(uroce_cm_counter(uroce_cma_cm(PA.cma), UROCE_CM_CNT_REQ_RETRIES), 2);
}

/* udaddy: SIDR for UD, the address vector from the path. */
Test(cma, sidr_for_ud)
{
	struct uroce_cma_addr la = any4(7174);
	struct uroce_cma_conn_param p = cparam(0x77, "ud"), ap = cparam(0x99, "ok");
	const struct uroce_cma_event *e;
	struct uroce_cma_id *c, *s;
	struct uroce_cm_qp_attr x;
	int m;

	listener(UROCE_CMA_PS_UDP, UROCE_QPT_UD, &la);
	c = resolved(UROCE_CMA_PS_UDP, UROCE_QPT_UD, 7174);
	cr_assert_eq(uroce_cma_init_qp_attr(c, UROCE_QPS_INIT, &x, &m), 0);
	cr_expect_eq(x.qkey, UROCE_CMA_UDP_QKEY);
	cr_expect(m & UROCE_QP_QKEY);
	cr_assert_eq(uroce_cma_connect(c, &p), 0);
	pump();
	e = last(&PB);
	cr_expect_eq(e->type, UROCE_CMA_EV_CONNECT_REQUEST);
	cr_expect(e->ud);
	cr_expect_eq(e->ud_param.private_data_len, 180);
	cr_expect_arr_eq(PB.ev[PB.nev - 1].pd, "ud", 2);
	cr_expect_not(e->ud_param.ah_valid, "the passive side gets no address vector");
	s = e->id;
	cr_assert_eq(uroce_cma_accept(s, &ap), 0);
	pump();
	e = last(&PA);
	cr_expect_eq(e->type, UROCE_CMA_EV_ESTABLISHED);
	cr_expect(e->ud);
	cr_expect_eq(e->ud_param.qp_num, 0x99);
	cr_expect_eq(e->ud_param.qkey, UROCE_CMA_UDP_QKEY);
	cr_expect(e->ud_param.ah_valid);
	cr_expect_arr_eq(e->ud_param.dgid, ip_b, 16);
	cr_expect_eq(e->ud_param.hop_limit, 64);
	cr_expect_arr_eq(PA.ev[PA.nev - 1].pd, "ok", 2);
	/* refused, and nobody listening: UNREACHABLE with the SIDR status */
	c = resolved(UROCE_CMA_PS_UDP, UROCE_QPT_UD, 7174);
	uroce_cma_connect(c, &p);
	pump();
	uroce_cma_reject(last(&PB)->id, NULL, 0, 0);
	pump();
	cr_expect_eq(last(&PA)->type, UROCE_CMA_EV_UNREACHABLE);
	cr_expect_eq(last(&PA)->status, UROCE_CM_SIDR_REJECT);
	c = resolved(UROCE_CMA_PS_UDP, UROCE_QPT_UD, 7175);
	uroce_cma_connect(c, &p);
	pump();
	cr_expect_eq(last(&PA)->status, UROCE_CM_SIDR_UNSUPPORTED);
	cr_expect_eq(uroce_cma_disconnect(c), -EINVAL, "UD has nothing to disconnect");
}

Test(cma, attributes_before_a_connection_and_options)
{
	struct uroce_cma_id *c = resolved(UROCE_CMA_PS_TCP, UROCE_QPT_RC, 7174), *s;
	struct uroce_cma_addr la = any4(7174);
	struct uroce_cma_conn_param p = cparam(1, NULL);
	struct uroce_cm_qp_attr x;
	int m;

	cr_assert_eq(uroce_cma_init_qp_attr(c, UROCE_QPS_INIT, &x, &m), 0);
	cr_expect_eq(m, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
			    UROCE_QP_ACCESS_FLAGS);
	cr_expect_eq(x.qp_access_flags, 0, "no remote access before a connection");
	cr_expect_eq(x.port_num, 1);
	cr_expect_eq(uroce_cma_init_qp_attr(c, UROCE_QPS_RTR, &x, &m), -EINVAL);
	/* ACK_TIMEOUT: the QP's timeout, and one below it the REQ's life time. */
	listener(UROCE_CMA_PS_TCP, UROCE_QPT_RC, &la);
	c = uroce_cma_id_create(PA.cma, &owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	uroce_cma_set_option(c, UROCE_CMA_OPT_ACK_TIMEOUT, 14);
	uroce_cma_set_option(c, UROCE_CMA_OPT_TOS, 0x20);
	{
		struct uroce_cma_addr d = v4(ip_b, 7174);

		uroce_cma_resolve_addr(c, NULL, &d, 2000);
		uroce_cma_resolve_route(c);
	}
	uroce_cma_connect(c, &p);
	pump();
	s = last(&PB)->id;
	uroce_cma_accept(s, &p);
	pump();
	cr_assert_eq(uroce_cma_init_qp_attr(c, UROCE_QPS_RTS, &x, &m), 0);
	cr_expect_eq(x.timeout, 14);
	cr_assert_eq(uroce_cma_init_qp_attr(s, UROCE_QPS_RTR, &x, &m), 0);
	cr_expect_eq(x.traffic_class, 0x20, "the ToS became the REQ's traffic class");
	/* COMM_EST before the RTU: ESTABLISHED at once */
	cr_assert_eq(uroce_cma_notify(s, 4), 0);
	cr_expect_eq(last(&PB)->type, UROCE_CMA_EV_ESTABLISHED);
	cr_expect_eq(uroce_cma_notify(s, 4), -EINVAL, "established already");
}
