/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The worker loop. One iteration: for each port, one RX burst (at most
 * [limits] burst frames: the bound on work per iteration), classify each
 * frame as ARP, ICMPv6 (neighbour discovery), RoCEv2 or other, then flush
 * the frames queued for TX in one burst per port. RoCEv2 frames are
 * validated by lib/wire's uroce_parse() and handed to the worker's receive
 * callback; every drop is counted by reason and nothing is logged per packet.
 * Between RX and the TX flush the worker runs its work callback (the
 * transport). Worker 0 owns every QP: a RoCEv2 frame that lands on another
 * worker's queue goes to worker 0 through its hand-off ring, unparsed.
 */

#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "dp_internal.h"

#define DP_MAX_BURST 256

uint32_t
dp_l2_write(const struct dp_port *p, uint8_t *buf, const uint8_t dmac[6], uint16_t ethertype)
{
	memcpy(buf, dmac, 6);
	memcpy(buf + 6, p->mac, 6);
	if (p->cfg.has_vlan) {
		uroce_put_be16(buf + 12, UROCE_ETHERTYPE_VLAN);
		uroce_put_be16(buf + 14, (uint16_t)(p->cfg.pcp << 13 | p->cfg.vlan_id));
		uroce_put_be16(buf + 16, ethertype);
		return UROCE_ETH_LEN + UROCE_VLAN_LEN;
	}
	uroce_put_be16(buf + 12, ethertype);
	return UROCE_ETH_LEN;
}

/*
 * Send what the queue holds. Frames the port does not take (its ring is
 * full) stay queued, in order, for the next call instead of being dropped:
 * dropping them would only make the transport retransmit more.
 */
void
dp_tx_flush(struct dp_worker *w, struct dp_port *p, struct dp_txq *q)
{
	struct dp_counters *cnt = &p->cnt[w->idx];
	uint16_t sent, i;

	/* Before the empty check: an idle call may release a held packet. Frames
	 * kept from a partial burst went through fault injection already. */
	if (unlikely(p->fault != NULL))
		q->n = (uint16_t)(q->ready +
				  dp_fault_burst(dp_fault_at(p->fault, w->idx, DP_FAULT_TX),
						 q->m + q->ready, (uint16_t)(q->n - q->ready),
						 (uint16_t)(DP_TXBUF - q->ready), p->pool));
	if (q->n == 0)
		return;
	sent = rte_eth_tx_burst(p->port_id, (uint16_t)w->idx, q->m, q->n);
	for (i = 0; i < sent; i++) {
		cnt->tx_packets++;
		cnt->tx_bytes += rte_pktmbuf_pkt_len(q->m[i]);
	}
	if (sent < q->n) {
		cnt->tx_busy++;
		memmove(q->m, q->m + sent, (size_t)(q->n - sent) * sizeof(q->m[0]));
	}
	q->n = (uint16_t)(q->n - sent);
	q->ready = q->n;
}

/* At worker exit: one last try, then drop what the port would not take. */
static void
tx_drain(struct dp_worker *w, struct dp_port *p, struct dp_txq *q)
{
	uint16_t i;

	dp_tx_flush(w, p, q);
	for (i = 0; i < q->n; i++) {
		p->cnt[w->idx].tx_dropped++;
		rte_pktmbuf_free(q->m[i]);
	}
	q->n = q->ready = 0;
}

void
dp_tx_enqueue(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m)
{
	struct dp_txq *q = &w->txq[p - w->dp->ports];

	if (q->n == DP_TXBUF)
		dp_tx_flush(w, p, q);
	if (unlikely(q->n == DP_TXBUF)) {
		p->cnt[w->idx].tx_dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	q->m[q->n++] = m;
}

/* The default receive callback: count (done by the caller) and free. */
static void
sink_rx(void *ctx, uint16_t port, const struct uroce_frame *frame, struct uroce_pkt *pkt)
{
	(void)ctx;
	(void)port;
	(void)frame;
	rte_pktmbuf_free((struct rte_mbuf *)pkt->owner);
}

static void
roce_input(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m)
{
	struct dp_counters *cnt = &p->cnt[w->idx];
	struct uroce_frame f;
	struct uroce_pkt pkt;
	enum uroce_wire_err e;

	e = uroce_parse(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, &f, &pkt);
	if (unlikely(e != UROCE_WIRE_OK)) {
		cnt->wire_err[e]++;
		rte_pktmbuf_free(m);
		return;
	}
	if (unlikely(!dp_port_owns_gid(p, f.dgid))) {
		cnt->rx_dst_not_local++;
		rte_pktmbuf_free(m);
		return;
	}
	cnt->rx_roce_packets++;
	cnt->rx_roce_bytes += m->pkt_len;
	/* The peer is alive at this MAC: its neighbour entry needs no probe. */
	dp_neigh_rx_seen(w, (uint16_t)(p - w->dp->ports), f.sgid, f.smac);
	pkt.owner = m;
	/* The engine reads the packet only during the call; the frame is ours after. */
	w->rx_fn(w->rx_ctx, (uint16_t)(p - w->dp->ports), &f, &pkt);
}

/* RoCEv2 for a QP: worker 0 owns them all, the others hand the frame over. */
static void
roce_deliver(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m)
{
	struct rte_ring *r = w->dp->workers[0].handoff;

	if (w->idx == 0 || r == NULL) {
		roce_input(w, p, m);
		return;
	}
	m->port = (uint16_t)(p - w->dp->ports); /* our port index, for worker 0 */
	if (unlikely(rte_ring_enqueue(r, m) != 0)) {
		p->cnt[w->idx].rx_handoff_full++;
		rte_pktmbuf_free(m);
		return;
	}
	p->cnt[w->idx].rx_handoff++;
}

/* Classify one frame and pass it on; the callee frees it. */
static void
classify(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m)
{
	struct dp_counters *cnt = &p->cnt[w->idx];
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = m->data_len, off = 12;
	uint16_t type;

	cnt->rx_packets++;
	cnt->rx_bytes += m->pkt_len;
	if (unlikely(m->nb_segs != 1)) {
		cnt->rx_multiseg++;
		goto drop;
	}
	if (unlikely(len < UROCE_ETH_LEN)) {
		cnt->wire_err[UROCE_WIRE_TRUNCATED]++;
		goto drop;
	}
	if (unlikely(memcmp(b + 6, p->mac, 6) == 0)) {
		cnt->rx_looped++;
		goto drop;
	}
	if ((b[0] & 1) == 0 && memcmp(b, p->mac, 6) != 0) {
		cnt->rx_not_for_us++;
		goto drop;
	}
	type = uroce_get_be16(b + off);
	if (type == UROCE_ETHERTYPE_VLAN) {
		if (len < UROCE_ETH_LEN + UROCE_VLAN_LEN) {
			cnt->wire_err[UROCE_WIRE_TRUNCATED]++;
			goto drop;
		}
		if (!p->cfg.has_vlan || (uroce_get_be16(b + 14) & 0xfff) != p->cfg.vlan_id) {
			cnt->rx_vlan_mismatch++;
			goto drop;
		}
		off += UROCE_VLAN_LEN;
		type = uroce_get_be16(b + off);
	} else if (p->cfg.has_vlan) {
		cnt->rx_vlan_mismatch++;
		goto drop;
	}
	off += 2; /* now the L3 offset */

	switch (type) {
	case UROCE_ETHERTYPE_ARP:
		dp_arp_input(w, p, m, off);
		return;
	case UROCE_ETHERTYPE_IPV4:
		if (len >= off + UROCE_IPV4_LEN && b[off + 9] == UROCE_IPPROTO_UDP) {
			roce_deliver(w, p, m);
			return;
		}
		break;
	case UROCE_ETHERTYPE_IPV6:
		if (len < off + UROCE_IPV6_LEN) {
			cnt->wire_err[UROCE_WIRE_TRUNCATED]++;
			goto drop;
		}
		if (b[off + 6] == UROCE_IPPROTO_UDP) {
			roce_deliver(w, p, m);
			return;
		}
		if (b[off + 6] == 58) {
			dp_icmp6_input(w, p, m, off);
			return;
		}
		break;
	default:
		break;
	}
	cnt->rx_other++;
drop:
	rte_pktmbuf_free(m);
}

int
dp_worker_main(void *arg)
{
	struct dp_worker *w = arg;
	struct uroce_dp *dp = w->dp;
	struct rte_mbuf *pkts[DP_MAX_BURST];
	uint16_t burst = (uint16_t)UROCE_MIN(dp->cfg.burst, DP_MAX_BURST);
	unsigned int i, j, n;
	uint64_t work;

	if (w->rx_fn == NULL) {
		w->rx_fn = sink_rx;
		w->rx_ctx = NULL;
	}
	while (!dp->quit) {
		w->now_us = dp_tsc_to_us(dp, rte_rdtsc());
		work = 0;
		for (i = 0; i < dp->n_ports; i++) {
			struct dp_port *p = &dp->ports[i];
			struct dp_txq *q = &w->txq[i];

			n = rte_eth_rx_burst(p->port_id, (uint16_t)w->idx, pkts, burst);
			if (unlikely(p->fault != NULL))
				n = dp_fault_burst(dp_fault_at(p->fault, w->idx, DP_FAULT_RX), pkts,
						   (uint16_t)n, DP_MAX_BURST, p->pool);
			for (j = 0; j < n; j++)
				classify(w, p, pkts[j]);
			work += n;
			if (w->idx == 0) {
				/* Frames from the control thread (ARP requests, NS). */
				n = rte_ring_dequeue_burst(p->ctl_tx, (void **)&q->m[q->n],
							   DP_TXBUF - q->n, NULL);
				q->n = (uint16_t)(q->n + n);
				work += n;
			}
		}
		if (w->handoff != NULL) {
			struct rte_mbuf *h[DP_MAX_BURST];

			n = rte_ring_dequeue_burst(w->handoff, (void **)h, burst, NULL);
			for (j = 0; j < n; j++)
				roce_input(w, &dp->ports[h[j]->port], h[j]);
			work += n;
		}
		if (w->work_fn != NULL)
			work += w->work_fn(w->work_ctx);
		for (i = 0; i < dp->n_ports; i++)
			dp_tx_flush(w, &dp->ports[i], &w->txq[i]);
		if (work == 0) {
			if (dp->cfg.idle_sleep_us != 0 || (dp->n_ports == 0 && w->work_fn == NULL))
				rte_delay_us_sleep(dp->cfg.idle_sleep_us ? dp->cfg.idle_sleep_us
									  : 1000);
			else
				rte_pause();
		}
	}
	for (i = 0; i < dp->n_ports; i++)
		tx_drain(w, &dp->ports[i], &w->txq[i]);
	return 0;
}
