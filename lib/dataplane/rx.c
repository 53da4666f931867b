/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The worker loop. One iteration: for each port, one RX burst (at most
 * [limits] burst frames: the bound on work per iteration), classify each
 * frame as ARP, ICMPv6 (neighbour discovery), RoCEv2 or other; the frames
 * other workers handed over; the work callback (the transport); then the
 * frames queued for TX, in one burst per port. RoCEv2 frames are validated
 * by lib/wire and handed to the receive callback of the worker that owns
 * the destination QP: a frame that lands on another worker's queue goes to
 * its owner's hand-off ring, in one burst per owner, after only its
 * encapsulation was read; the owner checks the ICRC. Every drop is counted
 * by reason and nothing is logged per packet; received frames are freed in
 * one bulk free per burst.
 *
 * Idle policy: a loop that did work is followed at once by the next. A
 * worker that found nothing keeps spinning for idle_spin_us, then sleeps an
 * eighth of its idle time (idle_sleep_us to idle_sleep_max_us), never past
 * its transport's next deadline; a doorbell, a command or frames handed
 * over wake it (idle() below).
 * Each loop's TSC cycles count as busy or idle (sleeps included).
 */

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "dp_internal.h"

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

static bool
link_down(const struct dp_port *p)
{
	struct rte_eth_link link;

	return rte_eth_link_get_nowait(p->port_id, &link) == 0 &&
	       link.link_status == RTE_ETH_LINK_DOWN;
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
	if (unlikely(sent == 0) && link_down(p)) {
		/* Nothing will take them (a memif whose peer left): keeping them
		 * would hold zero-copy payloads, and the completions that wait
		 * for them, for as long as the link stays down. The transport
		 * resends what matters. */
		for (i = 0; i < q->n; i++)
			rte_pktmbuf_free(q->m[i]);
		cnt->tx_link_down += q->n;
		q->n = q->ready = 0;
		return;
	}
	w->st.tx_packets += sent;
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

/* The default receive callback: counted by the caller, freed with the burst;
 * a late ICRC is checked here, since nothing else will. */
static int
sink_rx(void *ctx, uint16_t port, const struct uroce_frame *frame, struct uroce_pkt *pkt)
{
	(void)ctx;
	(void)port;
	(void)frame;
	return pkt->icrc_late && !uroce_pkt_icrc_late(pkt) ? -EBADMSG : 0;
}

/* The mbuf goes with the burst's bulk free. */
static inline void
free_later(struct dp_worker *w, struct rte_mbuf *m)
{
	if (unlikely(w->n_free == RTE_DIM(w->free))) {
		rte_pktmbuf_free_bulk(w->free, w->n_free);
		w->n_free = 0;
	}
	w->free[w->n_free++] = m;
}

static void
free_burst(struct dp_worker *w)
{
	if (w->n_free > 0) {
		rte_pktmbuf_free_bulk(w->free, w->n_free);
		w->n_free = 0;
	}
}

/* A RoCEv2 frame whose encapsulation @p f is checked, on its owner worker:
 * ICRC, BTH, then the transport. */
static void
roce_input_rest(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m,
		const struct uroce_frame *f)
{
	struct dp_counters *cnt = &p->cnt[w->idx];
	struct uroce_pkt pkt;
	enum uroce_wire_err e;

	/* Late: the ICRC of a payload the engine copies out is checked in that
	 * copy; a wrong one comes back as -EBADMSG and is counted here as any
	 * other bad ICRC. */
	e = uroce_parse_rest(rte_pktmbuf_mtod(m, const uint8_t *), f, true, &pkt);
	if (unlikely(e != UROCE_WIRE_OK)) {
		cnt->wire_err[e]++;
		free_later(w, m);
		return;
	}
	/* The peer is alive at this MAC: its neighbour entry needs no probe. */
	dp_neigh_rx_seen(w, (uint16_t)(p - w->dp->ports), f->sgid, f->smac);
	pkt.owner = m;
	/* The engine reads the packet only during the call; the frame is ours after. */
	if (unlikely(w->rx_fn(w->rx_ctx, (uint16_t)(p - w->dp->ports), f, &pkt) == -EBADMSG)) {
		cnt->wire_err[UROCE_WIRE_BAD_ICRC]++;
	} else {
		cnt->rx_roce_packets++;
		cnt->rx_roce_bytes += m->pkt_len;
	}
	free_later(w, m);
}

/* Encapsulation checks of a frame that may be RoCEv2. @return false if dropped. */
static bool
roce_frame(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m, struct uroce_frame *f)
{
	struct dp_counters *cnt = &p->cnt[w->idx];
	enum uroce_wire_err e;

	e = uroce_frame_parse(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, f);
	if (unlikely(e != UROCE_WIRE_OK)) {
		cnt->wire_err[e]++;
		free_later(w, m);
		return false;
	}
	if (unlikely(!dp_port_owns_gid(p, f->dgid))) {
		cnt->rx_dst_not_local++;
		free_later(w, m);
		return false;
	}
	return true;
}

/* A frame another worker handed over (its encapsulation is read again here:
 * the frame struct does not travel with the mbuf). */
static void
roce_input(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m)
{
	struct uroce_frame f;

	if (roce_frame(w, p, m, &f))
		roce_input_rest(w, p, m, &f);
}

/* RoCEv2 for a QP: here if this worker owns it, else into the owner's batch. */
static void
roce_deliver(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m)
{
	struct uroce_dp *dp = w->dp;
	struct uroce_frame f;
	unsigned int o = 0;

	if (!roce_frame(w, p, m, &f))
		return;
	if (dp->owner_fn != NULL) {
		o = dp->owner_fn(dp->owner_ctx,
				 uroce_bth_dqpn(rte_pktmbuf_mtod(m, const uint8_t *) + f.bth_off));
		if (o >= dp->n_workers)
			o = 0; /* nobody's QPN: worker 0's transport counts it */
	}
	if (o == w->idx || dp->workers[o].handoff == NULL) {
		roce_input_rest(w, p, m, &f);
		return;
	}
	m->port = (uint16_t)(p - dp->ports); /* our port index, for the owner */
	w->out[o][w->n_out[o]++] = m;
}

/* Hand this burst's frames to their owners, one ring burst per owner. A
 * frame in the ring is its owner's: it may be processed and freed (and the
 * mbuf reused) before this loop goes on, so the counters are taken before
 * the enqueue, from what this worker still owns. */
static void
handoff_flush(struct dp_worker *w)
{
	struct uroce_dp *dp = w->dp;
	uint16_t port[DP_MAX_BURST];
	unsigned int o, n, k;

	for (o = 0; o < dp->n_workers; o++) {
		if (w->n_out[o] == 0)
			continue;
		for (k = 0; k < w->n_out[o]; k++)
			port[k] = w->out[o][k]->port;
		n = rte_ring_enqueue_burst(dp->workers[o].handoff, (void **)w->out[o], w->n_out[o],
					   NULL);
		w->st.handoff_out += n;
		for (k = 0; k < n; k++)
			dp->ports[port[k]].cnt[w->idx].rx_handoff++;
		for (; k < w->n_out[o]; k++) {
			dp->ports[port[k]].cnt[w->idx].rx_handoff_full++;
			w->st.handoff_full++;
			free_later(w, w->out[o][k]);
		}
		w->n_out[o] = 0;
		if (n != 0)
			dp_wake(dp, o);
	}
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
	free_later(w, m);
}

/* What the dataplane has for worker @p ctx besides its RX queues: frames
 * handed over by other workers, and (worker 0) the control thread's. Asked
 * after the worker announced a sleep. */
static bool
rings_pending(void *ctx)
{
	struct dp_worker *w = ctx;
	struct uroce_dp *dp = w->dp;
	unsigned int i;

	if (w->handoff != NULL && rte_ring_count(w->handoff) != 0)
		return true;
	if (w->idx == 0)
		for (i = 0; i < dp->n_ports; i++)
			if (rte_ring_count(dp->ports[i].ctl_tx) != 0)
				return true;
	return false;
}

/*
 * The idle policy, after a loop that found nothing. @p idle_since is the TSC
 * of the first empty loop of this idle stretch. Spin (a pause) for
 * idle_spin_us; then sleep for an eighth of the time the worker has been
 * idle, at least idle_sleep_us and at most idle_sleep_max_us, and never past
 * the transport's next deadline (a timer due never waits for a sleep). So a
 * frame that arrives after a gap waits at most an eighth of the gap more
 * (and idle_sleep_us): request-response traffic keeps its pace, while a
 * worker idle for long wakes idle_sleep_max_us apart. A sleep through the
 * sleep handler ends at once on a doorbell, a command or frames handed
 * over; frames on the RX queues wait for the sleep's end.
 */
static void
idle(struct dp_worker *w, uint64_t now_tsc, uint64_t idle_since)
{
	struct uroce_dp *dp = w->dp;
	uint64_t sleep_us, deadline;
	bool slept;

	if (dp->cfg.idle_sleep_us == 0 || now_tsc - idle_since < dp->idle_spin_tsc) {
		rte_pause();
		return;
	}
	sleep_us = dp_tsc_to_us(dp, now_tsc - idle_since) / 8;
	sleep_us = RTE_MAX(sleep_us, (uint64_t)dp->cfg.idle_sleep_us);
	sleep_us = RTE_MIN(sleep_us, (uint64_t)dp->cfg.idle_sleep_max_us);
	if (w->deadline_fn != NULL) {
		deadline = w->deadline_fn(w->deadline_ctx);
		if (deadline <= w->now_us) {
			rte_pause();
			return;
		}
		if (deadline - w->now_us < sleep_us)
			sleep_us = deadline - w->now_us;
	}
	w->asked_us = sleep_us;
	/* Asleep, the worker holds no ring: an unmap need not wait for it. */
	dp_grace_offline(&w->qs);
	if (w->sleep_fn != NULL) {
		slept = w->sleep_fn(w->sleep_ctx, sleep_us, rings_pending, w);
	} else {
		rte_delay_us_sleep((unsigned int)sleep_us);
		slept = true;
	}
	dp_grace_online(&dp->grace, &w->qs);
	if (slept)
		w->st.sleeps++;
}

/*
 * A loop that took far longer than the sleep it asked for: the thread was
 * not running. A peer's requester sees this worker as dead for that long
 * (its local ACK timeouts count it against retry_cnt), so a failed
 * connection on a busy host can be told from a protocol fault.
 */
static void
late_round(struct dp_worker *w, uint64_t cycles)
{
	uint64_t us = dp_tsc_to_us(w->dp, cycles), late;

	if (us <= w->asked_us)
		return;
	late = us - w->asked_us;
	if (late > w->st.max_late_us)
		w->st.max_late_us = late;
	if (late >= DP_LATE_ROUND_US)
		w->st.late_rounds++;
}

int
dp_worker_main(void *arg)
{
	struct dp_worker *w = arg;
	struct uroce_dp *dp = w->dp;
	struct rte_mbuf *pkts[DP_MAX_BURST];
	uint16_t burst = (uint16_t)UROCE_MIN(dp->cfg.burst, DP_MAX_BURST);
	uint64_t work, t0, t1, idle_since = 0;
	unsigned int i, j, n;

	if (w->rx_fn == NULL) {
		w->rx_fn = sink_rx;
		w->rx_ctx = NULL;
	}
	/* Short sleeps mean short sleeps: the default 50 µs timer slack would
	 * stretch every back-off. */
	if (dp->cfg.idle_sleep_us != 0)
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	/* Its own unmaps wait for nobody (grace.h); its bursts count from now. */
	dp_grace_thread_is_reader(true);
	dp_grace_online(&dp->grace, &w->qs);
	t0 = rte_rdtsc();
	while (!dp->quit) {
		/* Outside every burst: what a PMD unmaps from here on is not ours. */
		dp_grace_quiescent(&dp->grace, &w->qs);
		w->now_us = dp_tsc_to_us(dp, t0);
		w->asked_us = 0;
		work = 0;
		for (i = 0; i < dp->n_ports; i++) {
			struct dp_port *p = &dp->ports[i];
			struct dp_txq *q = &w->txq[i];

			n = rte_eth_rx_burst(p->port_id, (uint16_t)w->idx, pkts, burst);
			if (unlikely(p->fault != NULL))
				n = dp_fault_burst(dp_fault_at(p->fault, w->idx, DP_FAULT_RX), pkts,
						   (uint16_t)n, DP_MAX_BURST, p->pool);
			w->st.rx_packets += n;
			for (j = 0; j < n; j++)
				classify(w, p, pkts[j]);
			handoff_flush(w);
			free_burst(w);
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
			n = rte_ring_dequeue_burst(w->handoff, (void **)pkts, burst, NULL);
			w->st.handoff_in += n;
			for (j = 0; j < n; j++)
				roce_input(w, &dp->ports[pkts[j]->port], pkts[j]);
			free_burst(w);
			work += n;
		}
		if (w->work_fn != NULL)
			work += w->work_fn(w->work_ctx);
		for (i = 0; i < dp->n_ports; i++)
			dp_tx_flush(w, &dp->ports[i], &w->txq[i]);
		if (work == 0) {
			if (idle_since == 0)
				idle_since = t0;
			if (dp->n_ports == 0 && w->work_fn == NULL) {
				w->asked_us = 1000;
				rte_delay_us_sleep(1000); /* nothing will ever come */
			} else {
				idle(w, rte_rdtsc(), idle_since);
			}
		} else {
			idle_since = 0;
		}
		t1 = rte_rdtsc();
		if (work != 0)
			w->st.busy_cycles += t1 - t0;
		else
			w->st.idle_cycles += t1 - t0;
		late_round(w, t1 - t0);
		w->st.loops++;
		t0 = t1;
	}
	for (i = 0; i < dp->n_ports; i++)
		tx_drain(w, &dp->ports[i], &w->txq[i]);
	dp_grace_offline(&w->qs);
	dp_grace_thread_is_reader(false);
	return 0;
}
