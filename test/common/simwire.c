/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The simulated wire: see simwire.h. Packets in flight are ordered by (event
 * time in ns, sequence number), so equal times keep sending order and a run
 * is a pure function of the seed. A packet whose time is not before the last
 * queued one's (every packet of a wire without reordering, delay changes or
 * a bottleneck) goes to the end of a FIFO; any other into a binary heap; the
 * next event is the earlier of their two heads. The heap alone was 12 % of
 * bench_engine's time. An event is a delivery to
 * a side, or (with a bottleneck) a packet's arrival at the switch queue.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_rng.h"
#include "simwire.h"

#define HEADROOM (UROCE_ETH_LEN + UROCE_IPV6_LEN + UROCE_UDP_LEN)

struct flight {
	uint64_t at_ns;     /* event time: delivery, or arrival at the switch */
	bool to_switch;     /* the event is the arrival at the bottleneck queue */
	uint64_t seq;
	int to;
	uint8_t *base;      /* malloc'd block */
	uint8_t *frame;
	uint32_t len;
};

struct sim_ep {
	struct simwire *sw;
	int side;
	struct uroce_eng *eng;
	uint8_t gid[16];
	uint8_t mac[6];
	bool capture;
	struct sim_cap *caps;
	uint32_t ncap;
	uint32_t capcap;
	uint32_t events[16];
	/* zero-copy packets sent and not yet released (zc_hold), and released
	 * ones whose engine half waits for the next step */
	struct uroce_eng_zc *zc_held;
	uint32_t nheld, capheld;
	struct uroce_eng_zc *zc_done;
	uint32_t ndone, capdone;
	/* rx_faults: the packet held back (base NULL: none), since when */
	struct flight held;
	uint64_t held_since;
	/* rx_faults: this step's receive burst */
	struct flight *burst;
	uint32_t nburst, capburst;
};

struct simwire {
	struct simwire_conf conf;
	uint64_t now;
	uint64_t rng;
	uint64_t seq;
	uint32_t late_turn;      /* late_icrc: which parse the next frame gets */
	struct sim_ep ep[2];
	struct flight *heap;
	uint32_t nheap;
	uint32_t capheap;
	struct flight *fifo;     /* a ring of capfifo (a power of 2) entries */
	uint32_t fifo_head;
	uint32_t nfifo;
	uint32_t capfifo;
	struct simwire_stats st;
	/* bottleneck: when the egress port is free again, and each side-0 QP's
	 * access link (by QPN) */
	uint64_t bn_free_ns;
	uint64_t *acc_free_ns;
};

static bool
flight_less(const struct flight *a, const struct flight *b)
{
	return a->at_ns < b->at_ns || (a->at_ns == b->at_ns && a->seq < b->seq);
}

static void
heap_push(struct simwire *sw, struct flight fl)
{
	uint32_t i;

	if (sw->nheap == sw->capheap) {
		uint32_t n = sw->capheap ? sw->capheap * 2 : 256;
		struct flight *h = realloc(sw->heap, n * sizeof(*h));

		if (h == NULL) {
			free(fl.base);
			return;
		}
		sw->heap = h;
		sw->capheap = n;
	}
	i = sw->nheap++;
	sw->heap[i] = fl;
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		struct flight t;

		if (!flight_less(&sw->heap[i], &sw->heap[p]))
			break;
		t = sw->heap[p];
		sw->heap[p] = sw->heap[i];
		sw->heap[i] = t;
		i = p;
	}
}

static struct flight
heap_pop(struct simwire *sw)
{
	struct flight top = sw->heap[0];
	uint32_t i = 0;

	sw->heap[0] = sw->heap[--sw->nheap];
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		struct flight t;

		if (l < sw->nheap && flight_less(&sw->heap[l], &sw->heap[m]))
			m = l;
		if (r < sw->nheap && flight_less(&sw->heap[r], &sw->heap[m]))
			m = r;
		if (m == i)
			break;
		t = sw->heap[m];
		sw->heap[m] = sw->heap[i];
		sw->heap[i] = t;
		i = m;
	}
	return top;
}

static bool
fifo_push(struct simwire *sw, struct flight fl)
{
	if (sw->nfifo == sw->capfifo) {
		uint32_t n = sw->capfifo ? sw->capfifo * 2 : 256, i;
		struct flight *f = malloc(n * sizeof(*f));

		if (f == NULL)
			return false;
		for (i = 0; i < sw->nfifo; i++)
			f[i] = sw->fifo[(sw->fifo_head + i) & (sw->capfifo - 1)];
		free(sw->fifo);
		sw->fifo = f;
		sw->fifo_head = 0;
		sw->capfifo = n;
	}
	sw->fifo[(sw->fifo_head + sw->nfifo++) & (sw->capfifo - 1)] = fl;
	return true;
}

/* Queue a packet in flight (see the top of the file). */
static void
flight_push(struct simwire *sw, struct flight fl)
{
	const struct flight *last;

	if (sw->nfifo > 0) {
		last = &sw->fifo[(sw->fifo_head + sw->nfifo - 1) & (sw->capfifo - 1)];
		if (flight_less(&fl, last)) {
			heap_push(sw, fl);
			return;
		}
	}
	if (!fifo_push(sw, fl))
		heap_push(sw, fl);
}

/* The next event, or NULL if nothing is in flight. */
static const struct flight *
flight_next(const struct simwire *sw)
{
	const struct flight *f = sw->nfifo > 0 ? &sw->fifo[sw->fifo_head] : NULL;

	if (sw->nheap > 0 && (f == NULL || flight_less(&sw->heap[0], f)))
		return &sw->heap[0];
	return f;
}

/* Take the next event; something must be in flight. */
static struct flight
flight_pop(struct simwire *sw)
{
	struct flight fl;

	if (sw->nheap > 0 && flight_next(sw) == &sw->heap[0])
		return heap_pop(sw);
	fl = sw->fifo[sw->fifo_head];
	sw->fifo_head = (sw->fifo_head + 1) & (sw->capfifo - 1);
	sw->nfifo--;
	return fl;
}

/* SIMWIRE_TRACE=1 prints every packet (debugging aid, off by default). */
static void
trace(struct simwire *sw, const char *what, int from, const uint8_t *frame, uint32_t len)
{
	static int on = -1;
	struct uroce_frame f;
	struct uroce_pkt p;

	if (on < 0)
		on = getenv("SIMWIRE_TRACE") != NULL;
	if (!on)
		return;
	if (uroce_parse(frame, len, &f, &p) != UROCE_WIRE_OK) {
		fprintf(stderr, "%8llu %s %d->%d (unparsable)\n", (unsigned long long)sw->now, what,
			from, 1 - from);
		return;
	}
	fprintf(stderr, "%8llu %-7s %d->%d qp %#x %-32s psn %#08x%s len %u",
		(unsigned long long)sw->now, what, from, 1 - from, p.dqpn, p.info->name, p.psn,
		uroce_bth_ackreq(p.bth) ? " A" : "", p.paylen);
	if (p.info->mask & UROCE_HDR_AETH)
		fprintf(stderr, " syn %#x msn %u", uroce_aeth_syndrome(p.bth + p.info->off_aeth),
			uroce_aeth_msn(p.bth + p.info->off_aeth));
	if (p.info->mask & UROCE_HDR_RETH)
		fprintf(stderr, " va %#llx len %u",
			(unsigned long long)uroce_reth_va(p.bth + p.info->off_reth),
			uroce_reth_dma_len(p.bth + p.info->off_reth));
	fprintf(stderr, "\n");
}

static uint64_t
op_now(void *ctx)
{
	struct sim_ep *ep = ctx;

	return ep->sw->now;
}

static uint8_t *
op_tx_alloc(void *ctx, uint32_t ib_len)
{
	uint8_t *b = malloc(HEADROOM + ib_len);

	(void)ctx;
	return b == NULL ? NULL : b + HEADROOM;
}

static void
op_tx_free(void *ctx, uint8_t *buf)
{
	(void)ctx;
	free(buf - HEADROOM);
}

/* Wrap the InfiniBand part in Ethernet/IP/UDP and compute the ICRC. */
static uint8_t *
encap(struct sim_ep *ep, uint8_t *buf, uint32_t ib_len, const struct uroce_eng_tx_addr *a,
      uint32_t *len)
{
	struct sim_ep *peer = &ep->sw->ep[1 - ep->side];
	struct uroce_encap e;
	uint32_t elen;

	uroce_eng_tx_encap(a, &e);
	memcpy(e.smac, ep->mac, 6);
	memcpy(e.dmac, peer->mac, 6);
	e.family = ep->sw->conf.ipv6 ? UROCE_IP_V6 : UROCE_IP_V4;
	elen = uroce_frame_wrap(buf, HEADROOM, ib_len, &e);
	if (elen == 0)
		return NULL;
	*len = elen + ib_len;
	return buf - elen;
}

static void
capture(struct sim_ep *ep, uint8_t *frame, uint32_t len, const struct uroce_eng_tx_addr *a)
{
	struct sim_cap *c;

	if (ep->ncap == ep->capcap) {
		uint32_t n = ep->capcap ? ep->capcap * 2 : 64;
		struct sim_cap *p = realloc(ep->caps, n * sizeof(*p));

		if (p == NULL)
			return;
		ep->caps = p;
		ep->capcap = n;
	}
	c = &ep->caps[ep->ncap];
	c->frame = malloc(len);
	if (c->frame == NULL)
		return;
	memcpy(c->frame, frame, len);
	c->len = len;
	c->addr = *a;
	if (uroce_parse(c->frame, len, &c->f, &c->p) != UROCE_WIRE_OK) {
		free(c->frame);
		ep->sw->st.bad_parse++;
		return;
	}
	ep->ncap++;
}

/* ns to put @p len bytes on a link of @p mbps (1 Mb/s is one bit per µs). */
static uint64_t
ser_ns(uint32_t len, uint32_t mbps)
{
	return ((uint64_t)len * 8000 + mbps - 1) / mbps;
}

/* Bytes waiting in the bottleneck queue at @p t_ns: what the port still has
 * to send, at its rate. */
static uint32_t
bn_backlog(const struct simwire *sw, uint64_t t_ns)
{
	if (sw->bn_free_ns <= t_ns)
		return 0;
	return (uint32_t)((sw->bn_free_ns - t_ns) * sw->conf.bn_rate_mbps / 8000);
}

/* RED with ECN: never below kmin, always from kmax, linear in between. */
static bool
bn_mark(struct simwire *sw, uint32_t q)
{
	const struct simwire_conf *c = &sw->conf;
	uint64_t ppm;

	if (q < c->bn_kmin)
		return false;
	if (q >= c->bn_kmax)
		return true;
	ppm = (uint64_t)c->bn_pmax_ppm * (q - c->bn_kmin) / (c->bn_kmax - c->bn_kmin);
	return sim_chance(&sw->rng, (uint32_t)ppm);
}

/* A packet reaches the switch: tail drop, RED/ECN marking, then the FIFO. */
static void
bn_enqueue(struct simwire *sw, struct flight fl)
{
	uint32_t q = bn_backlog(sw, fl.at_ns);
	struct uroce_frame f;

	if (sw->conf.bn_capacity != 0 && q + fl.len > sw->conf.bn_capacity) {
		trace(sw, "BNDROP", 0, fl.frame, fl.len);
		sw->st.bn_dropped++;
		free(fl.base);
		return;
	}
	sw->st.bn_enqueued++;
	if (q + fl.len > sw->st.bn_max_queue)
		sw->st.bn_max_queue = q + fl.len;
	if (bn_mark(sw, q)) {
		if (uroce_frame_parse(fl.frame, fl.len, &f) == UROCE_WIRE_OK &&
		    uroce_frame_mark_ce(fl.frame, fl.len, &f) >= 0)
			sw->st.bn_marked++;
		else
			sw->st.bn_not_ect++;
	}
	sw->bn_free_ns = UROCE_MAX(sw->bn_free_ns, fl.at_ns) +
			 ser_ns(fl.len, sw->conf.bn_rate_mbps);
	fl.at_ns = sw->bn_free_ns + (uint64_t)sw->conf.delay_us * 1000;
	fl.to_switch = false;
	fl.seq = sw->seq++;
	flight_push(sw, fl);
}

static void
op_tx_send(void *ctx, uint8_t *buf, uint32_t ib_len, const struct uroce_eng_tx_addr *a)
{
	struct sim_ep *ep = ctx;
	struct simwire *sw = ep->sw;
	struct flight fl;
	uint32_t len;
	uint8_t *frame = encap(ep, buf, ib_len, a, &len);

	sw->st.sent++;
	if (frame == NULL) {
		sw->st.bad_parse++;
		free(buf - HEADROOM);
		return;
	}
	if (ep->capture) {
		capture(ep, frame, len, a);
		free(buf - HEADROOM);
		return;
	}
	if (!sw->conf.rx_faults &&
	    (sw->conf.drop_only_from == 0 || sw->conf.drop_only_from == ep->side + 1) &&
	    sim_chance(&sw->rng, sw->conf.drop_ppm)) {
		trace(sw, "DROP", ep->side, frame, len);
		sw->st.dropped++;
		free(buf - HEADROOM);
		return;
	}
	if (sim_chance(&sw->rng, sw->conf.corrupt_ppm)) {
		uint32_t off = (uint32_t)(len - ib_len + sim_rnd(&sw->rng) % ib_len);

		frame[off] ^= (uint8_t)(1 + sim_rnd(&sw->rng) % 255);
		sw->st.corrupted++;
	}
	fl.seq = sw->seq++;
	fl.to = 1 - ep->side;
	fl.base = buf - HEADROOM;
	fl.frame = frame;
	fl.len = len;
	fl.to_switch = false;
	if (sw->conf.bn_rate_mbps != 0 && ep->side == 0 && sw->acc_free_ns != NULL) {
		/* Over the QP's own link into the switch: serialised behind the
		 * QP's earlier packets, it arrives when its last bit does. */
		uint32_t acc = sw->conf.bn_access_mbps ? sw->conf.bn_access_mbps :
			       sw->conf.bn_rate_mbps;
		uint64_t *af = &sw->acc_free_ns[a->src_qpn % UROCE_MAX_QP];

		*af = UROCE_MAX(*af, sw->now * 1000) + ser_ns(len, acc);
		fl.at_ns = *af;
		fl.to_switch = true;
		flight_push(sw, fl);
		return;
	}
	fl.at_ns = (sw->now + sw->conf.delay_us) * 1000;
	if (sw->conf.rx_faults) {
		flight_push(sw, fl);
		return;
	}
	if (sim_chance(&sw->rng, sw->conf.reorder_ppm)) {
		fl.at_ns += (1 + sim_rnd(&sw->rng) %
			     (sw->conf.reorder_us ? sw->conf.reorder_us : 50)) * 1000;
		sw->st.reordered++;
	}
	if (sim_chance(&sw->rng, sw->conf.dup_ppm)) {
		struct flight d = fl;

		d.base = malloc(HEADROOM + ib_len);
		if (d.base != NULL) {
			memcpy(d.base, fl.base, HEADROOM + ib_len);
			d.frame = d.base + (fl.frame - fl.base);
			d.seq = sw->seq++;
			d.at_ns += (sim_rnd(&sw->rng) % 20) * 1000;
			sw->st.duplicated++;
			flight_push(sw, d);
		}
	}
	flight_push(sw, fl);
}

static void
op_event(void *ctx, enum uroce_event_type type, void *obj)
{
	struct sim_ep *ep = ctx;

	(void)obj;
	if ((unsigned int)type < 16)
		ep->events[type]++;
}

static bool
zc_push(struct uroce_eng_zc **v, uint32_t *n, uint32_t *cap, const struct uroce_eng_zc *zc)
{
	if (*n == *cap) {
		uint32_t c = *cap ? *cap * 2 : 64;
		struct uroce_eng_zc *nv = realloc(*v, c * sizeof(*nv));

		if (nv == NULL)
			return false;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = *zc;
	return true;
}

/* The device reads the payload now (the frame is made whole for the wire)
 * and lets go of it at the next step, or when the test says (zc_hold). */
static bool
op_tx_send_zc(void *ctx, uint8_t *buf, uint32_t hdr_len, const uint8_t *payload, uint32_t paylen,
	      uint32_t ib_len, const struct uroce_eng_tx_addr *a, const struct uroce_eng_zc *zc)
{
	struct sim_ep *ep = ctx;
	struct sim_ep *peer = &ep->sw->ep[1 - ep->side];
	uint8_t trailer[8];
	struct uroce_encap e;
	uint32_t pad = uroce_pad(paylen);

	if (ep->nheld == UINT32_MAX ||
	    !(ep->sw->conf.zc_hold ? zc_push(&ep->zc_held, &ep->nheld, &ep->capheld, zc) :
				     zc_push(&ep->zc_done, &ep->ndone, &ep->capdone, zc)))
		return false; /* declined: the engine copies */
	uroce_eng_tx_encap(a, &e);
	memcpy(e.smac, ep->mac, 6);
	memcpy(e.dmac, peer->mac, 6);
	e.family = ep->sw->conf.ipv6 ? UROCE_IP_V6 : UROCE_IP_V4;
	if (uroce_frame_wrap_split(buf, HEADROOM, hdr_len, payload, paylen, trailer, &e) == 0)
		abort(); /* the engine's headers and our encapsulation always fit */
	/* The wire carries one buffer: join the pieces behind the headers, and
	 * let op_tx_send() wrap it again (the same bytes, ICRC included). */
	memcpy(buf + hdr_len, payload, paylen);
	memcpy(buf + hdr_len + paylen, trailer, pad + UROCE_ICRC_LEN);
	op_tx_send(ctx, buf, ib_len, a);
	return true;
}

/* The engine half of releases, between engine calls. */
static unsigned int
zc_step(struct sim_ep *ep)
{
	uint32_t i, n = ep->ndone;

	for (i = 0; i < n; i++) {
		uroce_eng_zc_mem_release(&ep->zc_done[i]);
		uroce_eng_zc_release(ep->eng, &ep->zc_done[i]);
	}
	ep->ndone = 0;
	return n;
}

uint32_t
simwire_zc_held(const struct simwire *sw, int side)
{
	return sw->ep[side].nheld;
}

void
simwire_zc_release(struct simwire *sw, int side)
{
	struct sim_ep *ep = &sw->ep[side];
	uint32_t i;

	for (i = 0; i < ep->nheld; i++)
		if (!zc_push(&ep->zc_done, &ep->ndone, &ep->capdone, &ep->zc_held[i]))
			abort();
	ep->nheld = 0;
}

static const struct uroce_eng_ops sim_ops = {
	.async_event = op_event,
	.now_us = op_now,
	.tx_alloc = op_tx_alloc,
	.tx_send = op_tx_send,
	.tx_free = op_tx_free,
	.tx_send_zc = op_tx_send_zc,
};

struct simwire *
simwire_create(const struct simwire_conf *conf)
{
	struct simwire *sw = calloc(1, sizeof(*sw));
	int i;

	if (sw == NULL)
		return NULL;
	if (conf != NULL)
		sw->conf = *conf;
	sw->rng = sim_rng_seed(sw->conf.seed);
	sw->now = 1000;
	if (sw->conf.bn_rate_mbps != 0) {
		sw->acc_free_ns = calloc(UROCE_MAX_QP, sizeof(*sw->acc_free_ns));
		if (sw->acc_free_ns == NULL) {
			free(sw);
			return NULL;
		}
	}
	for (i = 0; i < 2; i++) {
		struct sim_ep *ep = &sw->ep[i];
		struct uroce_eng_conf ec;

		ep->sw = sw;
		ep->side = i;
		if (sw->conf.ipv6) {
			/* 2001:2::/48 is the IPv6 benchmarking range (RFC 5180). */
			ep->gid[0] = 0x20;
			ep->gid[1] = 0x01;
			ep->gid[3] = 0x02;
			ep->gid[15] = (uint8_t)(i + 1);
		} else {
			/* ::ffff:198.18.0.1 and .2 (RFC 2544 benchmarking range) */
			ep->gid[10] = 0xFF;
			ep->gid[11] = 0xFF;
			ep->gid[12] = 198;
			ep->gid[13] = 18;
			ep->gid[15] = (uint8_t)(i + 1);
		}
		ep->mac[0] = 0x02;
		ep->mac[5] = (uint8_t)(i + 1);
		memset(&ec, 0, sizeof(ec));
		ec.ops = &sim_ops;
		ec.ctx = ep;
		memcpy(ec.gid, ep->gid, 16);
		ec.poll_budget = sw->conf.budget;
		ec.zc_min = sw->conf.zc_min;
		ep->eng = uroce_eng_create(&ec);
		if (ep->eng == NULL) {
			simwire_destroy(sw);
			return NULL;
		}
	}
	return sw;
}

void
simwire_destroy(struct simwire *sw)
{
	int i;

	if (sw == NULL)
		return;
	for (i = 0; i < 2; i++) {
		/* The device lets go of everything before the engine goes. */
		simwire_zc_release(sw, i);
		zc_step(&sw->ep[i]);
		uroce_eng_destroy(sw->ep[i].eng);
		simwire_cap_clear(sw, i);
		free(sw->ep[i].caps);
		free(sw->ep[i].held.base);
		free(sw->ep[i].burst);
		free(sw->ep[i].zc_held);
		free(sw->ep[i].zc_done);
	}
	while (flight_next(sw) != NULL)
		free(flight_pop(sw).base);
	free(sw->heap);
	free(sw->fifo);
	free(sw->acc_free_ns);
	free(sw);
}

struct uroce_eng *
simwire_engine(struct simwire *sw, int side)
{
	return sw->ep[side].eng;
}

const uint8_t *
simwire_gid(const struct simwire *sw, int side)
{
	return sw->ep[side].gid;
}

uint64_t
simwire_now(const struct simwire *sw)
{
	return sw->now;
}

void
simwire_advance(struct simwire *sw, uint64_t us)
{
	sw->now += us;
}

struct simwire_stats
simwire_stats(const struct simwire *sw)
{
	return sw->st;
}

uint32_t
simwire_bn_queue(const struct simwire *sw)
{
	return sw->conf.bn_rate_mbps != 0 ? bn_backlog(sw, sw->now * 1000) : 0;
}

void
simwire_bn_reset_max(struct simwire *sw)
{
	sw->st.bn_max_queue = 0;
}

void
simwire_set_loss(struct simwire *sw, uint32_t drop_ppm, uint32_t dup_ppm, uint32_t reorder_ppm,
		 uint32_t corrupt_ppm)
{
	sw->conf.drop_ppm = drop_ppm;
	sw->conf.dup_ppm = dup_ppm;
	sw->conf.reorder_ppm = reorder_ppm;
	sw->conf.corrupt_ppm = corrupt_ppm;
}

void
simwire_set_late_icrc(struct simwire *sw, bool on)
{
	sw->conf.late_icrc = on;
}

uint32_t
simwire_event_count(const struct simwire *sw, int side, enum uroce_event_type type)
{
	return (unsigned int)type < 16 ? sw->ep[side].events[type] : 0;
}

void
simwire_set_capture(struct simwire *sw, int side, bool on)
{
	sw->ep[side].capture = on;
}

uint32_t
simwire_ncap(const struct simwire *sw, int side)
{
	return sw->ep[side].ncap;
}

const struct sim_cap *
simwire_cap(const struct simwire *sw, int side, uint32_t i)
{
	return i < sw->ep[side].ncap ? &sw->ep[side].caps[i] : NULL;
}

void
simwire_cap_clear(struct simwire *sw, int side)
{
	struct sim_ep *ep = &sw->ep[side];
	uint32_t i;

	for (i = 0; i < ep->ncap; i++)
		free(ep->caps[i].frame);
	ep->ncap = 0;
}

/* uroce_parse() of a whole frame, or with late_icrc in turns
 * uroce_parse_rest() with late set (a frame in one buffer, as a port or the
 * loopback's copied frames) and uroce_parse_split() with late set of its
 * pieces where they lie (headers, payload, pad and ICRC), as the loopback
 * hands a zero-copy frame over. */
static enum uroce_wire_err
parse_frame(struct simwire *sw, const uint8_t *frame, uint32_t len, struct uroce_frame *f,
	    struct uroce_pkt *p)
{
	const struct uroce_opcode_info *oi;
	enum uroce_wire_err e;
	uint32_t hl, rest;

	if (!sw->conf.late_icrc)
		return uroce_parse(frame, len, f, p);
	e = uroce_frame_parse(frame, len, f);
	if (e != UROCE_WIRE_OK)
		return e;
	if ((sw->late_turn++ & 1) == 0)
		return uroce_parse_rest(frame, f, true, p);
	oi = uroce_opcode_get(uroce_bth_opcode(frame + f->bth_off));
	if (oi == NULL || f->ib_len < (uint32_t)oi->hdr_len + UROCE_ICRC_LEN)
		return uroce_parse(frame, len, f, p);
	hl = f->bth_off + oi->hdr_len;
	rest = f->ib_len - oi->hdr_len - UROCE_ICRC_LEN; /* payload and pad */
	if (uroce_bth_padcnt(frame + f->bth_off) > rest)
		return uroce_parse(frame, len, f, p);
	rest -= uroce_bth_padcnt(frame + f->bth_off);
	return uroce_parse_split(frame, hl, frame + hl, rest, frame + hl + rest, true, f, p);
}

void
simwire_cap_forward(struct simwire *sw, int side, uint32_t i)
{
	const struct sim_cap *c = simwire_cap(sw, side, i);
	struct uroce_frame f;
	struct uroce_pkt p;

	if (c == NULL)
		return;
	if (parse_frame(sw, c->frame, c->len, &f, &p) != UROCE_WIRE_OK) {
		sw->st.bad_parse++;
		return;
	}
	if (uroce_eng_rx(sw->ep[1 - side].eng, &p, &f) == -EBADMSG)
		sw->st.late_bad++;
}

int
simwire_inject(struct simwire *sw, int to_side, const struct uroce_bth_fields *bth,
	       const struct uroce_ext_fields *ext, const void *payload, uint32_t paylen)
{
	return simwire_inject_from(sw, to_side, NULL, bth, ext, payload, paylen, 0);
}

int
simwire_inject_tc(struct simwire *sw, int to_side, const struct uroce_bth_fields *bth,
		  const struct uroce_ext_fields *ext, const void *payload, uint32_t paylen,
		  uint8_t tclass)
{
	return simwire_inject_from(sw, to_side, NULL, bth, ext, payload, paylen, tclass);
}

int
simwire_inject_from(struct simwire *sw, int to_side, const uint8_t sgid[16],
		    const struct uroce_bth_fields *bth, const struct uroce_ext_fields *ext,
		    const void *payload, uint32_t paylen, uint8_t tclass)
{
	struct sim_ep *from = &sw->ep[1 - to_side], *to = &sw->ep[to_side];
	const struct uroce_opcode_info *oi = uroce_opcode_get(bth->opcode);
	struct uroce_ext_fields zero;
	struct uroce_eng_tx_addr a;
	struct uroce_frame f;
	struct uroce_pkt p;
	uint32_t ib_len, hl, len;
	uint8_t *buf, *frame;
	int rc = 0;

	if (oi == NULL)
		return -EINVAL;
	if (ext == NULL) {
		memset(&zero, 0, sizeof(zero));
		ext = &zero;
	}
	ib_len = oi->hdr_len + paylen + uroce_pad(paylen) + UROCE_ICRC_LEN;
	buf = op_tx_alloc(from, ib_len);
	if (buf == NULL)
		return -ENOMEM;
	hl = uroce_hdr_build(buf, ib_len, bth, ext, paylen);
	if (hl == 0) {
		op_tx_free(from, buf);
		return -EINVAL;
	}
	if (paylen > 0)
		memcpy(buf + hl, payload, paylen);
	memset(buf + hl + paylen, 0, uroce_pad(paylen) + UROCE_ICRC_LEN);
	memset(&a, 0, sizeof(a));
	memcpy(a.sgid, sgid != NULL ? sgid : from->gid, 16);
	memcpy(a.dgid, to->gid, 16);
	a.sport = 0xC000;
	a.tclass = tclass;
	frame = encap(from, buf, ib_len, &a, &len);
	if (frame == NULL || uroce_parse(frame, len, &f, &p) != UROCE_WIRE_OK)
		rc = -EINVAL;
	else
		uroce_eng_rx(to->eng, &p, &f);
	op_tx_free(from, buf);
	return rc;
}

static void
deliver(struct simwire *sw, struct flight fl)
{
	struct uroce_frame f;
	struct uroce_pkt p;

	trace(sw, "deliver", 1 - fl.to, fl.frame, fl.len);
	if (parse_frame(sw, fl.frame, fl.len, &f, &p) == UROCE_WIRE_OK) {
		sw->st.delivered++;
		if (uroce_eng_rx(sw->ep[fl.to].eng, &p, &f) == -EBADMSG)
			sw->st.late_bad++;
	} else {
		sw->st.bad_parse++;
	}
	free(fl.base);
}

static bool
burst_push(struct sim_ep *ep, struct flight fl)
{
	if (ep->nburst == ep->capburst) {
		uint32_t n = ep->capburst ? ep->capburst * 2 : 64;
		struct flight *b = realloc(ep->burst, n * sizeof(*b));

		if (b == NULL)
			return false;
		ep->burst = b;
		ep->capburst = n;
	}
	ep->burst[ep->nburst++] = fl;
	return true;
}

static struct flight
flight_copy(const struct flight *fl)
{
	struct flight d = *fl;

	d.base = malloc(HEADROOM + fl->len + (size_t)(fl->frame - fl->base));
	if (d.base != NULL) {
		memcpy(d.base, fl->base, (size_t)(fl->frame - fl->base) + fl->len);
		d.frame = d.base + (fl->frame - fl->base);
	}
	return d;
}

static uint64_t
hold_us(const struct simwire *sw)
{
	return sw->conf.rx_hold_us != 0 ? sw->conf.rx_hold_us : 10000;
}

/*
 * rx_faults: the receive burst of @p ep, through the same decisions as
 * dp_fault_burst() (lib/dataplane/fault.c), then into its engine.
 */
static unsigned int
rx_burst(struct simwire *sw, struct sim_ep *ep)
{
	struct flight *dups = NULL, prev = ep->held;
	uint32_t ndup = 0, i, n = ep->nburst;
	unsigned int work = 0;
	bool faults = sw->conf.drop_only_from == 0 || sw->conf.drop_only_from == 2 - ep->side;

	/* drop_only_from: drops only into that side, as on the wire. */

	if (n == 0) {
		/* An idle link lets a lone held packet go after a while. */
		if (prev.base != NULL && sw->now >= ep->held_since + hold_us(sw)) {
			ep->held.base = NULL;
			deliver(sw, prev);
			return 1;
		}
		return 0;
	}
	if (faults && sw->conf.dup_ppm != 0)
		dups = calloc(n, sizeof(*dups));
	for (i = 0; i < n; i++) {
		struct flight fl = ep->burst[i];
		uint32_t r = (uint32_t)(sim_rnd(&sw->rng) % 1000000u);

		if (r < sw->conf.drop_ppm && faults) {
			trace(sw, "DROP", 1 - fl.to, fl.frame, fl.len);
			sw->st.dropped++;
			free(fl.base);
			continue;
		}
		if (r < sw->conf.drop_ppm)
			r = sw->conf.drop_ppm + sw->conf.dup_ppm + sw->conf.reorder_ppm; /* kept */
		r -= sw->conf.drop_ppm;
		if (r < sw->conf.dup_ppm) {
			if (dups != NULL) {
				dups[ndup] = flight_copy(&fl);
				if (dups[ndup].base != NULL) {
					ndup++;
					sw->st.duplicated++;
				}
			}
		} else if (r - sw->conf.dup_ppm < sw->conf.reorder_ppm) {
			/* Held back; one already held goes in its place. */
			struct flight old = ep->held;

			trace(sw, "HOLD", 1 - fl.to, fl.frame, fl.len);
			ep->held = fl;
			ep->held_since = sw->now;
			sw->st.held++;
			sw->st.reordered++;
			if (old.base == NULL)
				continue;
			fl = old;
		}
		deliver(sw, fl);
		work++;
	}
	for (i = 0; i < ndup; i++) {
		deliver(sw, dups[i]);
		work++;
	}
	free(dups);
	ep->nburst = 0;
	/* Held since an earlier burst: behind this one, once something went
	 * ahead of it. */
	if (prev.base != NULL && ep->held.base == prev.base && work > 0) {
		ep->held.base = NULL;
		deliver(sw, prev);
		work++;
	}
	return work;
}

unsigned int
simwire_step(struct simwire *sw)
{
	const struct flight *next;
	unsigned int work = 0;
	int i;

	work += zc_step(&sw->ep[0]);
	work += zc_step(&sw->ep[1]);
	work += uroce_eng_poll(sw->ep[0].eng);
	work += uroce_eng_poll(sw->ep[1].eng);
	while ((next = flight_next(sw)) != NULL && next->at_ns <= sw->now * 1000) {
		struct flight fl = flight_pop(sw);

		if (fl.to_switch) {
			bn_enqueue(sw, fl);
			continue;
		}
		if (sw->conf.rx_faults && burst_push(&sw->ep[fl.to], fl))
			continue;
		deliver(sw, fl);
		work++;
	}
	if (sw->conf.rx_faults)
		for (i = 0; i < 2; i++)
			work += rx_burst(sw, &sw->ep[i]);
	return work;
}

uint64_t
simwire_next_event(const struct simwire *sw)
{
	const struct flight *next = flight_next(sw);
	uint64_t t = next != NULL ? (next->at_ns + 999) / 1000 : UINT64_MAX;
	int i;

	for (i = 0; i < 2; i++)
		if (sw->ep[i].held.base != NULL && sw->ep[i].held_since + hold_us(sw) < t)
			t = sw->ep[i].held_since + hold_us(sw);
	uint64_t d0 = uroce_eng_next_deadline(sw->ep[0].eng);
	uint64_t d1 = uroce_eng_next_deadline(sw->ep[1].eng);

	t = d0 < t ? d0 : t;
	return d1 < t ? d1 : t;
}

bool
simwire_run_until(struct simwire *sw, bool (*done)(void *arg), void *arg, uint64_t max_us)
{
	uint64_t end = sw->now + max_us;

	for (;;) {
		if (done(arg))
			return true;
		if (sw->now > end)
			return false;
		if (simwire_step(sw) == 0) {
			uint64_t t;

			if (uroce_eng_busy(sw->ep[0].eng) || uroce_eng_busy(sw->ep[1].eng) ||
			    sw->ep[0].ndone > 0 || sw->ep[1].ndone > 0) {
				sw->now++;
				continue;
			}
			t = simwire_next_event(sw);
			if (t == UINT64_MAX)
				return done(arg);
			sw->now = t > sw->now ? t : sw->now + 1;
		} else {
			sw->now++;
		}
	}
}

void
simwire_settle(struct simwire *sw)
{
	unsigned int guard = 0;

	while (guard++ < 1000000) {
		unsigned int w = simwire_step(sw);
		const struct flight *next = flight_next(sw);

		if (w == 0 && next == NULL && !uroce_eng_busy(sw->ep[0].eng) &&
		    !uroce_eng_busy(sw->ep[1].eng) && sw->ep[0].ndone == 0 && sw->ep[1].ndone == 0)
			return;
		if (w == 0 && next != NULL && next->at_ns > sw->now * 1000)
			sw->now = (next->at_ns + 999) / 1000;
	}
}

/* ------------------------------------------------------------------------ */

struct uroce_eng_qp *
sim_qp_create(struct sim_side *s, enum uroce_qp_type t, uint32_t max_wr)
{
	struct uroce_eng_qp_init_attr ia;

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = t;
	ia.send_cq = s->scq;
	ia.recv_cq = s->rcq;
	ia.cap.max_send_wr = max_wr;
	ia.cap.max_recv_wr = max_wr;
	ia.cap.max_send_sge = UROCE_MAX_SGE;
	ia.cap.max_recv_sge = UROCE_MAX_SGE;
	ia.cap.max_inline_data = UROCE_MAX_INLINE;
	return uroce_eng_qp_create(s->pd, &ia);
}

int
sim_qp_up(struct simwire *sw, struct uroce_eng_qp *q, int side, struct uroce_eng_qp *peer,
	  const struct sim_qp_opts *o)
{
	enum uroce_qp_type t = o->type ? o->type : UROCE_QPT_RC;
	uint32_t sq_psn = side == 0 ? o->psn0 : o->psn1;
	uint32_t rq_psn = side == 0 ? o->psn1 : o->psn0;
	struct uroce_eng_qp_attr a;
	int rc, mask;

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.port_num = 1;
	a.pkey_index = 0;
	a.qp_access_flags = o->access ? o->access :
			    UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ |
			    UROCE_ACCESS_REMOTE_ATOMIC | UROCE_ACCESS_LOCAL_WRITE;
	a.qkey = o->qkey ? o->qkey : 0x11111111;
	mask = UROCE_QP_STATE | UROCE_QP_PORT | UROCE_QP_PKEY_INDEX |
	       (t == UROCE_QPT_UD ? UROCE_QP_QKEY : UROCE_QP_ACCESS_FLAGS);
	rc = uroce_eng_modify_qp(q, &a, mask);
	if (rc != 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTR;
	mask = UROCE_QP_STATE;
	if (t != UROCE_QPT_UD) {
		a.path_mtu = o->mtu ? o->mtu : UROCE_MTU_1024;
		a.dest_qp_num = uroce_eng_qp_num(peer);
		a.rq_psn = rq_psn;
		memcpy(a.ah_attr.dgid, simwire_gid(sw, 1 - side), 16);
		a.ah_attr.hop_limit = 64;
		a.ah_attr.port_num = 1;
		mask |= UROCE_QP_AV | UROCE_QP_PATH_MTU | UROCE_QP_DEST_QPN | UROCE_QP_RQ_PSN;
		if (t == UROCE_QPT_RC) {
			a.max_dest_rd_atomic = o->max_dest_rd_atomic ? o->max_dest_rd_atomic :
					       UROCE_MAX_DEST_RD_ATOMIC;
			a.min_rnr_timer = o->min_rnr_timer || o->explicit_zero ?
					  o->min_rnr_timer : 1;
			mask |= UROCE_QP_MAX_DEST_RD_ATOMIC | UROCE_QP_MIN_RNR_TIMER;
		}
	}
	rc = uroce_eng_modify_qp(q, &a, mask);
	if (rc != 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTS;
	a.sq_psn = sq_psn;
	mask = UROCE_QP_STATE | UROCE_QP_SQ_PSN;
	if (t == UROCE_QPT_RC) {
		a.timeout = o->timeout || o->explicit_zero ? o->timeout : 10;
		a.retry_cnt = o->retry_cnt || o->explicit_zero ? o->retry_cnt : 7;
		a.rnr_retry = o->rnr_retry || o->explicit_zero ? o->rnr_retry : 7;
		a.max_rd_atomic = o->max_rd_atomic ? o->max_rd_atomic : UROCE_MAX_RD_ATOMIC;
		mask |= UROCE_QP_TIMEOUT | UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY |
			UROCE_QP_MAX_QP_RD_ATOMIC;
	}
	return uroce_eng_modify_qp(q, &a, mask);
}

int
sim_connect(struct simwire *sw, struct uroce_eng_qp *a, struct uroce_eng_qp *b,
	    const struct sim_qp_opts *o)
{
	int rc = sim_qp_up(sw, a, 0, b, o);

	if (rc != 0)
		return rc;
	return sim_qp_up(sw, b, 1, a, o);
}

int
sim_pair_create(struct simwire *sw, struct sim_side s[2], const struct sim_qp_opts *o,
		uint32_t max_wr, int cqe)
{
	enum uroce_qp_type t = o->type ? o->type : UROCE_QPT_RC;
	int i;

	memset(s, 0, 2 * sizeof(*s));
	for (i = 0; i < 2; i++) {
		s[i].pd = uroce_eng_pd_alloc(simwire_engine(sw, i));
		s[i].scq = uroce_eng_cq_create(simwire_engine(sw, i), cqe, NULL);
		s[i].rcq = uroce_eng_cq_create(simwire_engine(sw, i), cqe, NULL);
		if (s[i].pd == NULL || s[i].scq == NULL || s[i].rcq == NULL)
			return -ENOMEM;
		s[i].qp = sim_qp_create(&s[i], t, max_wr);
		if (s[i].qp == NULL)
			return -errno;
	}
	return sim_connect(sw, s[0].qp, s[1].qp, o);
}

void
sim_pair_destroy(struct sim_side s[2])
{
	int i;

	for (i = 0; i < 2; i++) {
		if (s[i].qp != NULL)
			uroce_eng_qp_destroy(s[i].qp);
		if (s[i].scq != NULL)
			uroce_eng_cq_destroy(s[i].scq);
		if (s[i].rcq != NULL)
			uroce_eng_cq_destroy(s[i].rcq);
	}
}

struct wait_ctx {
	struct uroce_eng_cq *cq;
	struct uroce_eng_wc *wc;
	int n;
	int got;
};

static bool
wait_done(void *arg)
{
	struct wait_ctx *w = arg;

	while (w->got < w->n) {
		int r = uroce_eng_poll_cq(w->cq, w->n - w->got, w->wc + w->got);

		if (r <= 0)
			break;
		w->got += r;
	}
	return w->got >= w->n;
}

int
sim_wait_cq(struct simwire *sw, struct uroce_eng_cq *cq, struct uroce_eng_wc *wc, int n,
	    uint64_t max_us)
{
	struct wait_ctx w = { .cq = cq, .wc = wc, .n = n, .got = 0 };

	simwire_run_until(sw, wait_done, &w, max_us);
	return w.got;
}
