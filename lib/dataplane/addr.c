/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The daemon as its own IP endpoint on each port: the GID table, ARP
 * (RFC 826) and IPv6 neighbour discovery (RFC 4861) answers for our
 * addresses, and resolution of peers with retry and timeout; entries age
 * (neigh.c): a peer is asked again neigh_reachable_ms after it last told us
 * its MAC, so that a MAC change is followed.
 *
 * GID indexes (doc/dataplane.md), in the order Linux rxe fills its table:
 *   0  fe80::/64 link-local, interface id = modified EUI-64 of the port MAC
 *   1  ::ffff:a.b.c.d, the IPv4-mapped GID, when the port has ipv4
 *   next  the global IPv6 address, when the port has ipv6
 *
 * Frames are read and written as byte buffers with the uroce_get/put_be*
 * accessors; nothing is cast to a header struct.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dp_internal.h"

#define ARP_LEN 28
#define ARP_OP_REQUEST 1
#define ARP_OP_REPLY 2
#define IPPROTO_ICMPV6_ 58
#define ND_NS 135
#define ND_NA 136
#define ND_OPT_SLLA 1
#define ND_OPT_TLLA 2
#define ND_NA_FLAG_SOLICITED 0x40
#define ND_NA_FLAG_OVERRIDE 0x20
#define ETH_MIN_FRAME 60 /* without FCS */

static const uint8_t bcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* ---------------------------------------------------------------------- */
/* GID table                                                               */
/* ---------------------------------------------------------------------- */

int
dp_addr_init(struct uroce_dp *dp, struct dp_port *p, char *err, size_t errlen)
{
	const struct uroce_dp_port_cfg *c = &p->cfg;
	uint32_t max, nslots;
	struct dp_nslot *slot;
	struct dp_neigh *ent;
	unsigned int i;

	uroce_dp_gid_link_local(p->mac, p->ll);
	memcpy(p->gid[p->n_gid++], p->ll, 16);
	if (c->has_ipv4) {
		memset(p->v4gid, 0, 10);
		p->v4gid[10] = 0xff;
		p->v4gid[11] = 0xff;
		memcpy(p->v4gid + 12, c->ipv4, 4);
		memcpy(p->gid[p->n_gid++], p->v4gid, 16);
	}
	if (c->has_ipv6)
		memcpy(p->gid[p->n_gid++], c->ipv6, 16);

	max = UROCE_MAX(dp->cfg.neigh_max, c->n_neigh);
	nslots = dp_ntable_nslots(max);
	slot = rte_zmalloc_socket("uroce_nslot", sizeof(*slot) * nslots, RTE_CACHE_LINE_SIZE,
				  p->socket);
	ent = rte_zmalloc_socket("uroce_neigh", sizeof(*ent) * max, 0, p->socket);
	if (slot == NULL || ent == NULL) {
		rte_free(slot);
		rte_free(ent);
		snprintf(err, errlen, "[%s] out of memory for %u neighbour entries", c->section,
			 max);
		return -ENOMEM;
	}
	dp_ntable_init(&p->nt, slot, nslots, ent, max);
	for (i = 0; i < c->n_neigh; i++) {
		struct dp_neigh *n = dp_ntable_find(&p->nt, c->neigh[i].ip);

		if (n == NULL)
			n = dp_ntable_add(&p->nt, c->neigh[i].ip);
		memcpy(n->mac, c->neigh[i].mac, 6);
		n->state = DP_NEIGH_STATIC;
		dp_ntable_publish(&p->nt, n);
	}
	return 0;
}

void
dp_addr_free(struct dp_port *p)
{
	rte_free(p->nt.slot);
	rte_free(p->nt.ent);
	memset(&p->nt, 0, sizeof(p->nt));
}

bool
dp_port_owns_gid(const struct dp_port *p, const uint8_t gid[16])
{
	unsigned int i;

	for (i = 0; i < p->n_gid; i++)
		if (memcmp(p->gid[i], gid, 16) == 0)
			return true;
	return false;
}

/* ---------------------------------------------------------------------- */
/* Neighbour table: the control thread writes, everybody reads (neigh.c)   */
/* ---------------------------------------------------------------------- */

int
dp_neigh_rings_create(struct uroce_dp *dp)
{
	char name[RTE_RING_NAMESIZE];
	unsigned int i;

	for (i = 0; i <= dp->n_workers; i++) {
		bool any = i == dp->n_workers;

		snprintf(name, sizeof(name), "uroce_nev_%u", i);
		/* One producer per worker ring; telemetry threads share the last. */
		dp->nev[i] = rte_ring_create_elem(name, sizeof(struct dp_nev),
						  any ? DP_NEV_RING_ANY : DP_NEV_RING,
						  (int)rte_socket_id(),
						  RING_F_SC_DEQ | (any ? 0 : RING_F_SP_ENQ));
		if (dp->nev[i] == NULL)
			return -ENOMEM;
	}
	return 0;
}

void
dp_neigh_rings_free(struct uroce_dp *dp)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(dp->nev); i++) {
		rte_ring_free(dp->nev[i]);
		dp->nev[i] = NULL;
	}
}

void
dp_neigh_post(struct rte_ring *r, enum dp_nev_type type, uint16_t port, const uint8_t ip[16],
	      const uint8_t mac[6], struct dp_counters *cnt)
{
	struct dp_nev ev = {.type = (uint8_t)type, .port = (uint8_t)port};

	memcpy(ev.ip, ip, 16);
	if (mac != NULL)
		memcpy(ev.mac, mac, 6);
	if (unlikely(r == NULL || rte_ring_enqueue_elem(r, &ev, sizeof(ev)) != 0) && cnt != NULL)
		cnt->neigh_events_dropped++;
}

/*
 * Control thread: an answer (or a request addressed to us) tells us @ip is
 * at @mac. @create: make an entry if there is none (requests to us, as
 * RFC 826 and RFC 4861 7.2.3 both allow); otherwise only known entries change.
 */
static void
neigh_learn(struct dp_port *p, struct dp_counters *cnt, const uint8_t ip[16],
	    const uint8_t mac[6], bool create, uint64_t now)
{
	struct dp_neigh *n = dp_ntable_find(&p->nt, ip);

	if (n == NULL && create)
		n = dp_ntable_add(&p->nt, ip);
	if (n == NULL || n->state == DP_NEIGH_STATIC)
		return;
	if (n->state != DP_NEIGH_REACHABLE && n->state != DP_NEIGH_PROBE)
		cnt->neigh_resolved++;
	/* The peer's MAC, straight from the peer: trusted again for
	 * neigh_reachable_ms, and followed if it changed. */
	if (dp_neigh_confirm(n, mac, now))
		cnt->neigh_mac_changed++;
	dp_ntable_publish(&p->nt, n);
}

/* Control thread: somebody wants @ip resolved: start (or start over). */
static void
neigh_start(struct dp_port *p, const uint8_t ip[16])
{
	struct dp_neigh *n = dp_ntable_find(&p->nt, ip);

	if (n == NULL) {
		dp_ntable_add(&p->nt, ip); /* PENDING: the tick sends the request */
		return;
	}
	if (n->state != DP_NEIGH_FAILED)
		return;
	/* A failed entry was reported to the asker; the next resolution starts over. */
	n->state = DP_NEIGH_PENDING;
	n->tries = 0;
	n->next_tsc = 0;
	dp_ntable_publish(&p->nt, n);
}

static void
neigh_event(struct uroce_dp *dp, const struct dp_nev *ev, uint64_t now)
{
	struct dp_port *p;
	struct dp_neigh *n;

	if (ev->port >= dp->n_ports)
		return;
	p = &dp->ports[ev->port];
	switch (ev->type) {
	case DP_NEV_RESOLVE:
		neigh_start(p, ev->ip);
		break;
	case DP_NEV_LEARN:
	case DP_NEV_LEARN_NEW:
		neigh_learn(p, &p->cnt[dp->n_workers], ev->ip, ev->mac,
			    ev->type == DP_NEV_LEARN_NEW, now);
		break;
	case DP_NEV_SEEN:
		n = dp_ntable_find(&p->nt, ev->ip);
		if (n != NULL && dp_neigh_seen(n, ev->mac, now))
			dp_ntable_publish(&p->nt, n);
		break;
	default:
		break;
	}
}

static bool
is_link_local6(const uint8_t ip[16])
{
	return ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80;
}

int
dp_neigh_resolve(struct uroce_dp *dp, uint16_t port, const uint8_t ip[16], uint8_t mac[6],
		 struct rte_ring *ask, struct dp_counters *cnt, bool may_ask)
{
	struct dp_port *p;
	int st;

	if (port >= dp->n_ports)
		return -EINVAL;
	p = &dp->ports[port];
	if (uroce_gid_is_v4mapped(ip) ? !p->cfg.has_ipv4
				       : (!p->cfg.has_ipv6 && !is_link_local6(ip)))
		return -EINVAL;
	if (ip[0] == 0xff || dp_port_owns_gid(p, ip))
		return -EINVAL;
	st = dp_ntable_lookup(&p->nt, ip, mac);
	switch (st) {
	case DP_NEIGH_STATIC:
	case DP_NEIGH_REACHABLE:
	case DP_NEIGH_PROBE: /* asked again; the known MAC is used meanwhile */
		return 0;
	case DP_NEIGH_PENDING:
	case -EBUSY:         /* the control thread is rewriting it: as if pending */
		return -EAGAIN;
	case DP_NEIGH_FAILED:
		/* Reported to this caller; the control thread starts over. */
		if (may_ask) {
			dp_neigh_post(ask, DP_NEV_RESOLVE, port, ip, NULL, cnt);
			dp_ctl_wake(dp);
		}
		return -EHOSTUNREACH;
	default: /* no entry: the control thread makes one and asks the wire */
		if (may_ask) {
			dp_neigh_post(ask, DP_NEV_RESOLVE, port, ip, NULL, cnt);
			dp_ctl_wake(dp);
		}
		return __atomic_load_n(&p->nt.full, __ATOMIC_RELAXED) ? -ENOSPC : -EAGAIN;
	}
}

int
uroce_dp_resolve(struct uroce_dp *dp, uint16_t port, const uint8_t ip[16], uint8_t mac[6])
{
	return dp_neigh_resolve(dp, port, ip, mac, dp->nev[dp->n_workers], NULL, true);
}

/* ---------------------------------------------------------------------- */
/* Frame building                                                          */
/* ---------------------------------------------------------------------- */

/* Allocate an mbuf and return a zeroed buffer of @len bytes (padded to 60). */
static uint8_t *
frame_alloc(struct dp_port *p, struct rte_mbuf **mp, uint32_t len)
{
	struct rte_mbuf *m;
	uint8_t *buf;

	if (len < ETH_MIN_FRAME)
		len = ETH_MIN_FRAME;
	m = rte_pktmbuf_alloc(p->pool);
	if (m == NULL)
		return NULL;
	buf = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	if (buf == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(buf, 0, len);
	*mp = m;
	return buf;
}

static uint32_t
l2_len(const struct dp_port *p)
{
	return UROCE_ETH_LEN + (p->cfg.has_vlan ? UROCE_VLAN_LEN : 0);
}

static struct rte_mbuf *
arp_build(struct dp_port *p, uint16_t op, const uint8_t dmac[6], const uint8_t tha[6],
	  const uint8_t tpa[4])
{
	struct rte_mbuf *m;
	uint8_t *buf, *a;

	buf = frame_alloc(p, &m, l2_len(p) + ARP_LEN);
	if (buf == NULL)
		return NULL;
	a = buf + dp_l2_write(p, buf, dmac, UROCE_ETHERTYPE_ARP);
	uroce_put_be16(a, 1);                    /* Ethernet */
	uroce_put_be16(a + 2, UROCE_ETHERTYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	uroce_put_be16(a + 6, op);
	memcpy(a + 8, p->mac, 6);
	memcpy(a + 14, p->cfg.ipv4, 4);
	memcpy(a + 18, tha, 6);
	memcpy(a + 24, tpa, 4);
	return m;
}

/* One's-complement sum (RFC 1071), continued from @sum. */
static uint32_t
csum_add(uint32_t sum, const uint8_t *b, uint32_t len)
{
	uint32_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	return sum;
}

static uint16_t
csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* ICMPv6 checksum over the pseudo-header (RFC 8200 8.1) and the message. */
static uint16_t
icmp6_csum(const uint8_t *ip6, const uint8_t *icmp, uint32_t len)
{
	uint8_t ph[8] = {0};
	uint32_t sum;

	uroce_put_be32(ph, len);
	ph[7] = IPPROTO_ICMPV6_;
	sum = csum_add(0, ip6 + 8, 32); /* source and destination */
	sum = csum_add(sum, ph, 8);
	sum = csum_add(sum, icmp, len);
	return csum_fold(sum);
}

/* IPv6 + ICMPv6 ND message with one link-layer address option. */
static struct rte_mbuf *
nd_build(struct dp_port *p, uint8_t type, const uint8_t dmac[6], const uint8_t src[16],
	 const uint8_t dst[16], const uint8_t target[16], uint8_t flags)
{
	const uint32_t icmp_len = 24 + 8;
	struct rte_mbuf *m;
	uint8_t *buf, *ip6, *ic;

	buf = frame_alloc(p, &m, l2_len(p) + UROCE_IPV6_LEN + icmp_len);
	if (buf == NULL)
		return NULL;
	ip6 = buf + dp_l2_write(p, buf, dmac, UROCE_ETHERTYPE_IPV6);
	uroce_put_be32(ip6, 6u << 28);
	uroce_put_be16(ip6 + 4, (uint16_t)icmp_len);
	ip6[6] = IPPROTO_ICMPV6_;
	ip6[7] = 255; /* RFC 4861 7.1: ND hop limit is always 255 */
	memcpy(ip6 + 8, src, 16);
	memcpy(ip6 + 24, dst, 16);
	ic = ip6 + UROCE_IPV6_LEN;
	ic[0] = type;
	ic[4] = flags;
	memcpy(ic + 8, target, 16);
	ic[24] = type == ND_NS ? ND_OPT_SLLA : ND_OPT_TLLA;
	ic[25] = 1;
	memcpy(ic + 26, p->mac, 6);
	uroce_put_be16(ic + 2, icmp6_csum(ip6, ic, icmp_len));
	return m;
}

/* Worker 0 transmits what the control thread queues here. */
static void
ctl_send(struct uroce_dp *dp, struct dp_port *p, struct rte_mbuf *m)
{
	if (dp->n_workers == 0 || rte_ring_enqueue(p->ctl_tx, m) != 0) {
		p->cnt[dp->n_workers].tx_dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	dp_wake(dp, 0);
}

static void
neigh_request(struct uroce_dp *dp, struct dp_port *p, const uint8_t ip[16])
{
	struct dp_counters *cnt = &p->cnt[dp->n_workers];
	static const uint8_t zero_mac[6];
	struct rte_mbuf *m;

	if (uroce_gid_is_v4mapped(ip)) {
		m = arp_build(p, ARP_OP_REQUEST, bcast_mac, zero_mac, ip + 12);
		if (m != NULL)
			cnt->arp_tx_request++;
	} else {
		/* Solicited-node multicast ff02::1:ffXX:XXXX and its MAC 33:33:ff:XX:XX:XX. */
		uint8_t snm[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff};
		uint8_t dmac[6] = {0x33, 0x33, 0xff};
		const uint8_t *src = p->ll;

		memcpy(snm + 13, ip + 13, 3);
		memcpy(dmac + 3, ip + 13, 3);
		if (!is_link_local6(ip) && p->cfg.has_ipv6)
			src = p->cfg.ipv6;
		m = nd_build(p, ND_NS, dmac, src, snm, ip, 0);
		if (m != NULL)
			cnt->nd_tx_ns++;
	}
	if (m == NULL) {
		cnt->tx_nombuf++;
		return;
	}
	ctl_send(dp, p, m);
}

void
dp_neigh_tick(struct uroce_dp *dp, uint64_t now)
{
	const struct dp_neigh_timing t = {
		.retry = dp->tsc_hz / 1000 * dp->cfg.neigh_retry_ms,
		.reachable = dp->tsc_hz / 1000 * dp->cfg.neigh_reachable_ms,
		.tries = dp->cfg.neigh_tries,
	};
	struct dp_nev ev[32];
	unsigned int i, j, k, got;

	if (dp->n_ports == 0)
		return;
	/* What the workers (and telemetry) passed on since the last tick; a
	 * ring holds at most its size, so this ends. */
	for (i = 0; i <= dp->n_workers; i++) {
		do {
			got = rte_ring_dequeue_burst_elem(dp->nev[i], ev, sizeof(ev[0]),
							  RTE_DIM(ev), NULL);
			for (k = 0; k < got; k++)
				neigh_event(dp, &ev[k], now);
		} while (got == RTE_DIM(ev));
	}
	for (i = 0; i < dp->n_ports; i++) {
		struct dp_port *p = &dp->ports[i];
		struct dp_counters *cnt = &p->cnt[dp->n_workers];

		for (j = 0; j < p->nt.used; j++) {
			struct dp_neigh *n = &p->nt.ent[j];

			switch (dp_neigh_age(n, now, &t)) {
			case DP_NEIGH_GIVE_UP:
				cnt->neigh_failed++;
				dp_ntable_publish(&p->nt, n);
				break;
			case DP_NEIGH_REFRESH:
				cnt->neigh_refresh++;
				dp_ntable_publish(&p->nt, n); /* now PROBE */
				/* fall through */
			case DP_NEIGH_REQUEST:
				neigh_request(dp, p, n->ip);
				break;
			default:
				break;
			}
		}
	}
}

/* ---------------------------------------------------------------------- */
/* Receive                                                                 */
/* ---------------------------------------------------------------------- */

/* A worker's ARP/ND news for the control thread; multicast MACs are never a
 * neighbour's. */
static void
neigh_news(struct dp_worker *w, struct dp_port *p, enum dp_nev_type type, const uint8_t ip[16],
	   const uint8_t mac[6])
{
	if ((mac[0] & 1) != 0)
		return;
	dp_neigh_post(w->dp->nev[w->idx], type, (uint16_t)(p - w->dp->ports), ip, mac,
		      &p->cnt[w->idx]);
	dp_ctl_wake(w->dp);
}

void
dp_arp_input(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m, uint32_t l3_off)
{
	struct dp_counters *cnt = &p->cnt[w->idx];
	const uint8_t *a = rte_pktmbuf_mtod(m, const uint8_t *) + l3_off;
	uint8_t ip[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	struct rte_mbuf *r;
	uint16_t op;

	if (m->data_len < l3_off + ARP_LEN || uroce_get_be16(a) != 1 ||
	    uroce_get_be16(a + 2) != UROCE_ETHERTYPE_IPV4 || a[4] != 6 || a[5] != 4) {
		cnt->arp_rx_invalid++;
		goto out;
	}
	op = uroce_get_be16(a + 6);
	memcpy(ip + 12, a + 14, 4); /* sender protocol address */
	if (!p->cfg.has_ipv4 || memcmp(a + 24, p->cfg.ipv4, 4) != 0 ||
	    (op != ARP_OP_REQUEST && op != ARP_OP_REPLY)) {
		/* Gratuitous ARP or traffic for others: refresh only what we know. */
		cnt->arp_rx_other++;
		if (op == ARP_OP_REQUEST || op == ARP_OP_REPLY)
			neigh_news(w, p, DP_NEV_LEARN, ip, a + 8);
		goto out;
	}
	if (op == ARP_OP_REPLY) {
		cnt->arp_rx_reply++;
		neigh_news(w, p, DP_NEV_LEARN, ip, a + 8);
		goto out;
	}
	cnt->arp_rx_request++;
	if ((a[8] & 1) != 0 || uroce_get_be32(a + 14) == 0) {
		/* Multicast sender or an ARP probe (RFC 5227): nothing to answer to. */
		cnt->arp_rx_invalid++;
		goto out;
	}
	neigh_news(w, p, DP_NEV_LEARN_NEW, ip, a + 8);
	r = arp_build(p, ARP_OP_REPLY, a + 8, a + 8, a + 14);
	if (r == NULL) {
		cnt->tx_nombuf++;
		goto out;
	}
	cnt->arp_tx_reply++;
	dp_tx_enqueue(w, p, r);
out:
	rte_pktmbuf_free(m);
}

/* Link-layer address option of type @type in ND options, or NULL. */
static const uint8_t *
nd_lla(const uint8_t *opt, uint32_t len, uint8_t type, bool *bad)
{
	const uint8_t *found = NULL;

	while (len >= 2) {
		uint32_t olen = (uint32_t)opt[1] * 8;

		if (olen == 0 || olen > len) {
			*bad = true; /* RFC 4861 4.6: zero length is invalid */
			return NULL;
		}
		if (opt[0] == type && olen >= 8)
			found = opt + 2;
		opt += olen;
		len -= olen;
	}
	return found;
}

void
dp_icmp6_input(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m, uint32_t l3_off)
{
	struct dp_counters *cnt = &p->cnt[w->idx];
	const uint8_t *ip6 = rte_pktmbuf_mtod(m, const uint8_t *) + l3_off;
	static const uint8_t unspec[16];
	static const uint8_t all_nodes[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	const uint8_t *ic, *target, *lla;
	uint32_t plen;
	struct rte_mbuf *r;
	bool bad = false;

	plen = uroce_get_be16(ip6 + 4);
	ic = ip6 + UROCE_IPV6_LEN;
	if (m->data_len < l3_off + UROCE_IPV6_LEN + plen || plen < 4) {
		cnt->nd_rx_invalid++;
		goto out;
	}
	if (ic[0] != ND_NS && ic[0] != ND_NA) {
		cnt->nd_rx_other++;
		goto out;
	}
	/* RFC 4861 7.1.1 / 7.1.2: hop limit 255, code 0, >= 24 bytes, valid checksum. */
	if (ip6[7] != 255 || ic[1] != 0 || plen < 24 || icmp6_csum(ip6, ic, plen) != 0) {
		cnt->nd_rx_invalid++;
		goto out;
	}
	target = ic + 8;
	if (target[0] == 0xff) {
		cnt->nd_rx_invalid++;
		goto out;
	}
	if (ic[0] == ND_NA) {
		lla = nd_lla(ic + 24, plen - 24, ND_OPT_TLLA, &bad);
		if (bad) {
			cnt->nd_rx_invalid++;
			goto out;
		}
		cnt->nd_rx_na++;
		if (lla != NULL)
			neigh_news(w, p, DP_NEV_LEARN, target, lla);
		goto out;
	}
	if (!dp_port_owns_gid(p, target) || uroce_gid_is_v4mapped(target)) {
		cnt->nd_rx_other++;
		goto out;
	}
	lla = nd_lla(ic + 24, plen - 24, ND_OPT_SLLA, &bad);
	/* RFC 4861 7.1.1: a DAD probe (source ::) carries no SLLA option. */
	if (bad || (memcmp(ip6 + 8, unspec, 16) == 0 && lla != NULL)) {
		cnt->nd_rx_invalid++;
		goto out;
	}
	cnt->nd_rx_ns++;
	if (memcmp(ip6 + 8, unspec, 16) == 0) {
		/* RFC 4861 7.2.4: answer a DAD probe to all-nodes, S flag clear. */
		static const uint8_t all_nodes_mac[6] = {0x33, 0x33, 0, 0, 0, 1};

		r = nd_build(p, ND_NA, all_nodes_mac, target, all_nodes, target,
			     ND_NA_FLAG_OVERRIDE);
	} else {
		const uint8_t *dmac = lla != NULL ? lla
				      : rte_pktmbuf_mtod(m, const uint8_t *) + 6;

		if (lla != NULL)
			neigh_news(w, p, DP_NEV_LEARN_NEW, ip6 + 8, lla);
		r = nd_build(p, ND_NA, dmac, target, ip6 + 8, target,
			     ND_NA_FLAG_SOLICITED | ND_NA_FLAG_OVERRIDE);
	}
	if (r == NULL) {
		cnt->tx_nombuf++;
		goto out;
	}
	cnt->nd_tx_na++;
	dp_tx_enqueue(w, p, r);
out:
	rte_pktmbuf_free(m);
}
