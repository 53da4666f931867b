/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The transport's side of a worker: the per-iteration work callback, and
 * RoCEv2 transmission. The engine writes the InfiniBand part of a packet
 * (BTH through the ICRC slot) into an mbuf whose data starts
 * RTE_PKTMBUF_HEADROOM bytes in; sending prepends Ethernet [VLAN] IP UDP in
 * that headroom, computes the ICRC and queues the mbuf on the worker's TX
 * queue. No copy, no lock: the next hop comes from the worker's own cache,
 * and only a cache miss reads the shared neighbour table (lock-free, neigh.c).
 */

#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "dp_internal.h"

/* The engine's buffer pointer must lead back to its mbuf (see mbuf_of_ib). */
_Static_assert(UROCE_DP_ROCE_HEADROOM == RTE_PKTMBUF_HEADROOM,
	       "the IB part starts at the default mbuf headroom");
_Static_assert(UROCE_DP_ROCE_HEADROOM >= UROCE_ETH_LEN + UROCE_VLAN_LEN + UROCE_IPV6_LEN +
		       UROCE_UDP_LEN, "headroom holds the largest encapsulation");

int
uroce_dp_set_work_handler(struct uroce_dp *dp, unsigned int worker, uroce_dp_work_fn fn,
			  void *ctx)
{
	if (worker >= dp->n_workers)
		return -EINVAL;
	if (dp->running)
		return -EBUSY;
	dp->workers[worker].work_fn = fn;
	dp->workers[worker].work_ctx = ctx;
	return 0;
}

uint16_t
uroce_dp_port_mtu(const struct uroce_dp *dp, uint16_t port)
{
	return port < dp->n_ports ? dp->ports[port].mtu : 0;
}

/*
 * Our pools have no private area (rte_pktmbuf_pool_create(..., 0, ...)), so
 * the data buffer follows the mbuf header directly and a fresh mbuf's data
 * starts RTE_PKTMBUF_HEADROOM bytes into it.
 */
static struct rte_mbuf *
mbuf_of_ib(uint8_t *ib)
{
	return (struct rte_mbuf *)(void *)(ib - RTE_PKTMBUF_HEADROOM - sizeof(struct rte_mbuf));
}

uint8_t *
uroce_dp_roce_alloc(struct uroce_dp *dp, unsigned int worker, uint16_t port, uint32_t ib_len)
{
	struct dp_port *p = &dp->ports[port];
	struct dp_worker *w = &dp->workers[worker];
	struct rte_mbuf *m;

	/* Back-pressure: while the port cannot take what is queued, build nothing. */
	if (unlikely(w->txq[port].n == DP_TXBUF)) {
		dp_tx_flush(w, p, &w->txq[port]);
		if (w->txq[port].n == DP_TXBUF) {
			p->cnt[worker].tx_ring_full++;
			return NULL;
		}
	}
	/* The smallest encapsulation is IPv4 + UDP: anything longer can never go. */
	if (unlikely(ib_len + UROCE_IPV4_LEN + UROCE_UDP_LEN > p->mtu)) {
		p->cnt[worker].tx_too_big++;
		return NULL;
	}
	m = rte_pktmbuf_alloc(p->pool);
	if (unlikely(m == NULL)) {
		p->cnt[worker].tx_nombuf++;
		return NULL;
	}
	RTE_ASSERT(m->data_off == RTE_PKTMBUF_HEADROOM && rte_pktmbuf_priv_size(p->pool) == 0);
	return rte_pktmbuf_mtod(m, uint8_t *);
}

void
uroce_dp_roce_free(uint8_t *ib)
{
	rte_pktmbuf_free(mbuf_of_ib(ib));
}

static unsigned int
ncache_slot(const uint8_t ip[16], uint16_t port)
{
	uint32_t h = (uint32_t)ip[12] << 24 | (uint32_t)ip[13] << 16 | (uint32_t)ip[14] << 8 |
		     ip[15];

	h ^= (uint32_t)ip[8] ^ (uint32_t)ip[9] << 8 ^ port;
	h *= 0x9e3779b1u;
	return h >> 26; /* DP_NCACHE == 64 */
}

_Static_assert(DP_NCACHE == 64, "ncache_slot returns 6 bits");

/*
 * The next hop's MAC for @p ip: from the worker's cache while the table's
 * generation holds, else from the shared table (no lock). A miss or a failed
 * entry asks the control thread, once per DP_NEIGH_ASK_US and cache slot.
 */
static int
next_hop(struct dp_worker *w, uint16_t port, const uint8_t ip[16], uint8_t mac[6])
{
	struct dp_ncache *c = &w->ncache[ncache_slot(ip, port)];
	struct dp_port *p = &w->dp->ports[port];
	uint64_t gen = dp_ntable_gen(&p->nt); /* before the table is read */
	bool may_ask;
	int rc;

	if (c->gen == gen && c->expires_us > w->now_us && c->port == port &&
	    memcmp(c->ip, ip, 16) == 0) {
		memcpy(mac, c->mac, 6);
		return 0;
	}
	may_ask = w->now_us - c->asked_us >= DP_NEIGH_ASK_US;
	rc = dp_neigh_resolve(w->dp, port, ip, mac, w->dp->nev[w->idx], &p->cnt[w->idx], may_ask);
	if (rc == 0) {
		memcpy(c->ip, ip, 16);
		memcpy(c->mac, mac, 6);
		c->port = port;
		c->gen = gen;
		c->expires_us = w->now_us + DP_NCACHE_US;
	} else if (may_ask && (rc == -EAGAIN || rc == -EHOSTUNREACH || rc == -ENOSPC)) {
		c->asked_us = w->now_us;
	}
	return rc;
}

/*
 * The port's part of a packet's encapsulation: its addresses checked, the
 * next hop's MAC, the VLAN tag and DSCP. 0, or a counted reason not to send.
 */
static int
encap_prepare(struct dp_worker *w, struct dp_port *p, uint16_t port, struct uroce_encap *e,
	      uint32_t ib_len, uint32_t *elen)
{
	struct dp_counters *cnt = &p->cnt[w->idx];
	uint32_t l2;
	int rc;

	/* Only our own addresses as source, and the family both GIDs say. */
	if (unlikely(!dp_port_owns_gid(p, e->sgid) || e->family != uroce_gid_family(e->sgid) ||
		     e->family != uroce_gid_family(e->dgid))) {
		cnt->tx_bad_addr++;
		return -EINVAL;
	}
	rc = next_hop(w, port, e->dgid, e->dmac);
	if (unlikely(rc != 0)) {
		if (rc == -EAGAIN)
			cnt->tx_neigh_pending++;
		else if (rc == -EHOSTUNREACH)
			cnt->tx_neigh_failed++;
		else
			cnt->tx_bad_addr++;
		return rc;
	}
	memcpy(e->smac, p->mac, 6);
	e->has_vlan = p->cfg.has_vlan;
	/* cc (doc/congestion.md): the engine chose the ECN bits, and a CNP's
	 * whole class and 802.1p priority; a DSCP of 0 takes the port's. */
	e->vlan_tci = (uint16_t)((e->has_pcp ? e->pcp : p->cfg.pcp) << 13 | p->cfg.vlan_id);
	if (!e->tclass_final && (e->tclass >> 2) == 0)
		e->tclass |= (uint8_t)(p->cfg.dscp << 2);
	e->ip_id = 0; /* DF is set: the identification has no use (RFC 6864) */
	*elen = uroce_encap_len(e);
	l2 = UROCE_ETH_LEN + (e->has_vlan ? UROCE_VLAN_LEN : 0);
	if (unlikely(*elen - l2 + ib_len > p->mtu)) {
		cnt->tx_too_big++;
		return -EMSGSIZE;
	}
	return 0;
}

void
dp_neigh_rx_seen(struct dp_worker *w, uint16_t port, const uint8_t ip[16], const uint8_t mac[6])
{
	struct dp_ncache *c = &w->ncache[ncache_slot(ip, port)];
	struct dp_port *p = &w->dp->ports[port];

	/* Only a next hop this worker sends to, from the MAC it sends to, and
	 * not more than once per DP_NEIGH_SEEN_US: the control thread confirms. */
	if (c->gen != dp_ntable_gen(&p->nt) || c->expires_us <= w->now_us || c->port != port ||
	    memcmp(c->ip, ip, 16) != 0 || memcmp(c->mac, mac, 6) != 0 ||
	    w->now_us - c->seen_us < DP_NEIGH_SEEN_US)
		return;
	c->seen_us = w->now_us;
	dp_neigh_post(w->dp->nev[w->idx], DP_NEV_SEEN, port, ip, mac, &p->cnt[w->idx]);
}

int
uroce_dp_roce_send(struct uroce_dp *dp, unsigned int worker, uint16_t port, uint8_t *ib,
		   uint32_t ib_len, struct uroce_encap *e)
{
	struct dp_worker *w = &dp->workers[worker];
	struct dp_port *p = &dp->ports[port];
	struct dp_counters *cnt = &p->cnt[worker];
	struct rte_mbuf *m = mbuf_of_ib(ib);
	uint32_t elen;
	int rc;

	rc = encap_prepare(w, p, port, e, ib_len, &elen);
	if (unlikely(rc != 0))
		goto drop;
	if (unlikely(uroce_frame_wrap(ib, RTE_PKTMBUF_HEADROOM, ib_len, e) != elen)) {
		cnt->tx_bad_addr++;
		rc = -EINVAL;
		goto drop;
	}
	m->data_off = (uint16_t)(m->data_off - elen);
	m->data_len = (uint16_t)(elen + ib_len);
	m->pkt_len = elen + ib_len;
	cnt->tx_roce_packets++;
	cnt->tx_roce_bytes += m->pkt_len;
	dp_tx_enqueue(w, p, m);
	return 0;
drop:
	rte_pktmbuf_free(m);
	return rc;
}

/* The device let go of a zero-copy payload (the mbuf's last reference):
 * the caller's memory reference now, the rest at the worker's reap. */
static void
zc_free_cb(void *addr, void *opaque)
{
	struct dp_zc *z = opaque;
	struct dp_worker *w = z->w;

	(void)addr;
	z->released(z->cookie);
	z->next = w->zc_done;
	w->zc_done = (uint32_t)(z - w->zc);
}

int
uroce_dp_roce_send_zc(struct uroce_dp *dp, unsigned int worker, uint16_t port, uint8_t *ib,
		      uint32_t hdr_len, const uint8_t *payload, uint32_t paylen,
		      struct uroce_encap *e, const void *cookie, size_t cookie_len,
		      void (*released)(const void *cookie))
{
	struct dp_worker *w = &dp->workers[worker];
	struct dp_port *p = &dp->ports[port];
	struct dp_counters *cnt = &p->cnt[worker];
	uint32_t pad = uroce_pad(paylen);
	uint32_t ib_len = hdr_len + paylen + pad + UROCE_ICRC_LEN, elen, tlen = pad + UROCE_ICRC_LEN;
	struct rte_mbuf *m = mbuf_of_ib(ib), *seg[2];
	struct dp_zc *z;
	uint8_t *t;

	/* Every reason to decline comes before anything is taken. */
	if (!p->zc || w->zc == NULL || w->zc_free == DP_ZC_NONE || cookie_len > sizeof(z->cookie) ||
	    paylen == 0 || paylen > UINT16_MAX || released == NULL)
		return 0;
	if (encap_prepare(w, p, port, e, ib_len, &elen) != 0)
		return 0; /* the copy that follows meets the same and drops */
	if (rte_pktmbuf_alloc_bulk(p->pool, seg, 2) != 0) {
		cnt->tx_nombuf++;
		return 0;
	}
	z = &w->zc[w->zc_free];
	w->zc_free = z->next;
	memcpy(z->cookie, cookie, cookie_len);
	z->released = released;
	z->shinfo.free_cb = zc_free_cb;
	z->shinfo.fcb_opaque = z;
	rte_mbuf_ext_refcnt_set(&z->shinfo, 1);
	/* Virtual devices only (port_zc()): the address is all they use. */
	rte_pktmbuf_attach_extbuf(seg[0], (void *)(uintptr_t)payload,
				  rte_eal_iova_mode() == RTE_IOVA_VA ?
				  (rte_iova_t)(uintptr_t)payload : RTE_BAD_IOVA,
				  (uint16_t)paylen, &z->shinfo);
	seg[0]->data_off = 0;
	seg[0]->data_len = (uint16_t)paylen;
	seg[0]->pkt_len = paylen;
	t = rte_pktmbuf_mtod(seg[1], uint8_t *);
	seg[1]->data_len = (uint16_t)tlen;
	seg[1]->pkt_len = tlen;
	/* Ours from here: a failure below drops it, and freeing the chain
	 * releases the payload. */
	m->next = seg[0];
	seg[0]->next = seg[1];
	m->nb_segs = 3;
	if (unlikely(uroce_frame_wrap_split(ib, RTE_PKTMBUF_HEADROOM, hdr_len, payload, paylen, t,
					    e) != elen)) {
		cnt->tx_bad_addr++;
		rte_pktmbuf_free(m);
		return 1;
	}
	m->data_off = (uint16_t)(m->data_off - elen);
	m->data_len = (uint16_t)(elen + hdr_len);
	m->pkt_len = elen + ib_len;
	cnt->tx_roce_packets++;
	cnt->tx_roce_bytes += m->pkt_len;
	cnt->tx_zero_copy++;
	dp_tx_enqueue(w, p, m);
	return 1;
}

unsigned int
uroce_dp_zc_reap(struct uroce_dp *dp, unsigned int worker,
		 void (*fn)(void *arg, const void *cookie), void *arg)
{
	struct dp_worker *w = &dp->workers[worker];
	unsigned int n = 0;

	while (w->zc_done != DP_ZC_NONE) {
		struct dp_zc *z = &w->zc[w->zc_done];

		w->zc_done = z->next;
		fn(arg, z->cookie);
		z->next = w->zc_free;
		w->zc_free = (uint32_t)(z - w->zc);
		n++;
	}
	return n;
}

uint32_t
uroce_dp_port_zc_min(const struct uroce_dp *dp, uint16_t port)
{
	return port < dp->n_ports && dp->ports[port].zc ? dp->cfg.zc_min : 0;
}
