/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The lossy wire between two daemon cores: see simwire_daemon.h. Frames in
 * flight sit in a binary heap ordered by (delivery time, sending sequence),
 * so frames due at the same µs keep their sending order unless the wire
 * reordered them on purpose.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_rng.h"
#include "simwire_daemon.h"

/* Room in front of the IB part for Ethernet, IPv6 and UDP (62 bytes). */
#define HEADROOM 128u
/* Byte of the BTH the ICRC does not cover (FECN, BECN, reserved; masked to
 * ones by uroce_icrc_compute()): a flip there is invisible by design. */
#define BTH_MASKED_BYTE 4u
/* Frames delivered per step at most, as a port's receive burst: the daemons
 * are polled between bursts, so a responder answers while a long batch is
 * still arriving instead of after all of it. */
#define SIMWIRE_DAEMON_BURST 16u

struct flight {
	uint64_t at;
	uint64_t seq;
	int to;
	bool corrupt;
	uint8_t *base;      /* malloc'd block */
	uint8_t *frame;
	uint32_t len;
};

struct zc_hold {
	struct uroce_eng_zc zc;
	uint64_t due;                   /* the step that lets go of it */
};

struct wside {
	struct simwire_daemon *w;
	int side;
	struct uroce_daemon *d;
	uint8_t gid[16];
	uint8_t mac[6];
	bool attached;
	uint64_t sent;      /* frames this side gave its port */
	bool asked_peer;    /* resolve() was asked for the other side's GID */
	/* zero-copy packets the device holds, then those it let go of */
	struct zc_hold *held;
	uint32_t nheld, capheld;
	struct uroce_eng_zc *done;
	uint32_t ndone, capdone;
};

struct simwire_daemon {
	struct simwire_daemon_conf conf;
	uint64_t steps;                 /* simwire_daemon_step() calls */
	uint64_t rng;
	uint64_t seq;
	struct wside s[2];
	struct flight *heap;
	uint32_t nheap;
	uint32_t capheap;
	struct simwire_daemon_stats st;
};

uint64_t
simwire_daemon_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static bool
before(const struct flight *a, const struct flight *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void
swap_fl(struct flight *a, struct flight *b)
{
	struct flight t = *a;

	*a = *b;
	*b = t;
}

/* @return false (and the frame is freed) if the heap cannot grow. */
static bool
push(struct simwire_daemon *w, const struct flight *fl)
{
	uint32_t i;

	if (w->nheap == w->capheap) {
		uint32_t n = w->capheap != 0 ? w->capheap * 2 : 256;
		struct flight *h = realloc(w->heap, n * sizeof(*h));

		if (h == NULL) {
			free(fl->base);
			w->st.alloc_fail++;
			return false;
		}
		w->heap = h;
		w->capheap = n;
	}
	i = w->nheap++;
	w->heap[i] = *fl;
	while (i > 0 && before(&w->heap[i], &w->heap[(i - 1) / 2])) {
		swap_fl(&w->heap[i], &w->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	return true;
}

static struct flight
pop(struct simwire_daemon *w)
{
	struct flight top = w->heap[0];
	uint32_t i = 0;

	w->heap[0] = w->heap[--w->nheap];
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < w->nheap && before(&w->heap[l], &w->heap[m]))
			m = l;
		if (r < w->nheap && before(&w->heap[r], &w->heap[m]))
			m = r;
		if (m == i)
			break;
		swap_fl(&w->heap[i], &w->heap[m]);
		i = m;
	}
	return top;
}

/* SIMWIRE_TRACE=1 prints every frame's fate to stderr (a debugging aid, off by default). */
static void
trace(const char *what, int from, const uint8_t *frame, uint32_t len)
{
	static int on = -1;
	struct uroce_frame f;
	struct uroce_pkt p;

	if (on < 0)
		on = getenv("SIMWIRE_TRACE") != NULL;
	if (!on)
		return;
	if (uroce_parse(frame, len, &f, &p) != UROCE_WIRE_OK) {
		fprintf(stderr, "%llu %-7s %d->%d (unparsable)\n",
			(unsigned long long)simwire_daemon_now_us(), what, from, 1 - from);
		return;
	}
	fprintf(stderr, "%llu %-7s %d->%d (.%u->.%u) qp %#x %-28s psn %#08x%s len %u",
		(unsigned long long)simwire_daemon_now_us(), what, from, 1 - from, f.sgid[15],
		f.dgid[15], p.dqpn,
		p.info->name, p.psn, uroce_bth_ackreq(p.bth) ? " A" : "", p.paylen);
	if (p.info->mask & UROCE_HDR_AETH)
		fprintf(stderr, " syn %#x msn %u", uroce_aeth_syndrome(p.bth + p.info->off_aeth),
			uroce_aeth_msn(p.bth + p.info->off_aeth));
	if (p.info->mask & UROCE_HDR_ATMETH)
		fprintf(stderr, " add/swap %#llx cmp %#llx",
			(unsigned long long)uroce_atmeth_swap_add(p.bth + p.info->off_atmeth),
			(unsigned long long)uroce_atmeth_compare(p.bth + p.info->off_atmeth));
	if (p.info->mask & UROCE_HDR_ATMACK)
		fprintf(stderr, " orig %#llx",
			(unsigned long long)uroce_get_be64(p.bth + p.info->off_atmack));
	fprintf(stderr, "\n");
}

/* ------------------------------------------------------------------------ */
/* Port ops                                                                  */
/* ------------------------------------------------------------------------ */

static uint8_t *
port_tx_alloc(void *ctx, uint32_t ib_len)
{
	struct wside *s = ctx;
	uint8_t *b = malloc(HEADROOM + ib_len);

	if (b == NULL) {
		s->w->st.alloc_fail++;
		return NULL;
	}
	return b + HEADROOM;
}

static void
port_tx_free(void *ctx, uint8_t *ib)
{
	(void)ctx;
	free(ib - HEADROOM);
}

/* The side whose GID is @p gid, or -1. */
static int
route(const struct simwire_daemon *w, const uint8_t gid[16])
{
	int i;

	for (i = 0; i < 2; i++)
		if (w->s[i].attached && memcmp(w->s[i].gid, gid, 16) == 0)
			return i;
	return -1;
}

static void
port_tx_send(void *ctx, uint8_t *ib, uint32_t ib_len, const struct uroce_eng_tx_addr *a)
{
	struct wside *s = ctx;
	struct simwire_daemon *w = s->w;
	int to = route(w, a->dgid);
	struct uroce_encap e;
	struct flight fl;
	uint32_t elen;
	uint8_t *frame;

	w->st.sent++;
	s->sent++;
	/* A daemon loops its own GIDs inside itself: a frame back to the
	 * sender, or to a GID nobody owns, has nowhere to go. */
	if (to < 0 || to == s->side) {
		w->st.unroutable++;
		free(ib - HEADROOM);
		return;
	}
	uroce_eng_tx_encap(a, &e);
	memcpy(e.smac, s->mac, 6);
	memcpy(e.dmac, w->s[to].mac, 6);
	/* Shorter than a BTH and an ICRC: nothing an engine builds. */
	elen = ib_len < UROCE_BTH_LEN + UROCE_ICRC_LEN ? 0 :
	       uroce_frame_wrap(ib, HEADROOM, ib_len, &e);
	if (elen == 0) {
		w->st.unroutable++;
		free(ib - HEADROOM);
		return;
	}
	frame = ib - elen;
	if (sim_chance(&w->rng, w->conf.drop_ppm)) {
		trace("DROP", s->side, frame, elen + ib_len);
		w->st.dropped++;
		free(ib - HEADROOM);
		return;
	}
	memset(&fl, 0, sizeof(fl));
	if (sim_chance(&w->rng, w->conf.corrupt_ppm)) {
		uint32_t off = (uint32_t)(sim_rnd(&w->rng) % (ib_len - 1));

		/* Any IB byte but the one the ICRC leaves out. */
		if (off >= BTH_MASKED_BYTE)
			off++;
		ib[off] ^= (uint8_t)(1 + sim_rnd(&w->rng) % 255);
		fl.corrupt = true;
		w->st.corrupted++;
	}
	fl.at = simwire_daemon_now_us() + w->conf.delay_us;
	if (sim_chance(&w->rng, w->conf.reorder_ppm)) {
		uint32_t span = w->conf.reorder_us != 0 ? w->conf.reorder_us : 300;

		fl.at += 1 + sim_rnd(&w->rng) % span;
		w->st.reordered++;
	}
	fl.seq = w->seq++;
	fl.to = to;
	fl.base = ib - HEADROOM;
	fl.frame = frame;
	fl.len = elen + ib_len;
	if (sim_chance(&w->rng, w->conf.dup_ppm)) {
		struct flight d = fl;

		d.base = malloc(HEADROOM + ib_len);
		if (d.base != NULL) {
			memcpy(d.base, fl.base, HEADROOM + ib_len);
			d.frame = d.base + (fl.frame - fl.base);
			d.seq = w->seq++;
			d.at += sim_rnd(&w->rng) % 50;
			w->st.duplicated++;
			if (d.corrupt)
				w->st.corrupted++;
			push(w, &d);
		} else {
			w->st.alloc_fail++;
		}
	}
	push(w, &fl);
}

/* The device reads the payload now and lets go of it zc_hold_steps later. */
static bool
port_tx_send_zc(void *ctx, uint8_t *ib, uint32_t hdr_len, const uint8_t *payload,
		uint32_t paylen, uint32_t ib_len, const struct uroce_eng_tx_addr *a,
		const struct uroce_eng_zc *zc)
{
	struct wside *s = ctx;
	struct simwire_daemon *w = s->w;
	uint32_t pad = uroce_pad(paylen);

	if (!w->conf.zc)
		return false;
	if (s->nheld == s->capheld) {
		uint32_t c = s->capheld ? s->capheld * 2 : 256;
		struct zc_hold *n = realloc(s->held, c * sizeof(*n));

		if (n == NULL)
			return false; /* declined: the daemon copies */
		s->held = n;
		s->capheld = c;
	}
	s->held[s->nheld].zc = *zc;
	s->held[s->nheld].due = w->steps + w->conf.zc_hold_steps;
	s->nheld++;
	/* One buffer on this wire: the payload joins the headers, then
	 * port_tx_send() wraps it as any frame (the same bytes). */
	memcpy(ib + hdr_len, payload, paylen);
	memset(ib + hdr_len + paylen, 0, pad + UROCE_ICRC_LEN);
	port_tx_send(ctx, ib, ib_len, a);
	return true;
}

static unsigned int
port_tx_zc_reap(void *ctx, void (*fn)(void *arg, const struct uroce_eng_zc *zc), void *arg)
{
	struct wside *s = ctx;
	uint32_t i, n = s->ndone;

	for (i = 0; i < n; i++)
		fn(arg, &s->done[i]);
	s->ndone = 0;
	return n;
}

/* The device lets go of what is due: the memory at once, the WQEs at the
 * daemon's next poll (its reap). */
static void
zc_due(struct simwire_daemon *w, struct wside *s)
{
	uint32_t i, k = 0;

	for (i = 0; i < s->nheld; i++) {
		if (s->held[i].due > w->steps) {
			s->held[k++] = s->held[i];
			continue;
		}
		if (s->ndone == s->capdone) {
			uint32_t c = s->capdone ? s->capdone * 2 : 256;
			struct uroce_eng_zc *n = realloc(s->done, c * sizeof(*n));

			if (n == NULL) {
				s->held[k++] = s->held[i]; /* next time */
				continue;
			}
			s->done = n;
			s->capdone = c;
		}
		uroce_eng_zc_mem_release(&s->held[i].zc);
		s->done[s->ndone++] = s->held[i].zc;
	}
	s->nheld = k;
}

uint32_t
simwire_daemon_zc_held(const struct simwire_daemon *w)
{
	return w->s[0].nheld + w->s[1].nheld;
}

/* Every destination is known at once; what is asked first is noted. */
static int
port_resolve(void *ctx, const uint8_t gid[16])
{
	struct wside *s = ctx;
	struct simwire_daemon *w = s->w;

	w->st.resolve_asked++;
	if (!s->asked_peer && route(w, gid) == 1 - s->side) {
		s->asked_peer = true;
		w->st.asked_before_sending[s->side] = s->sent == 0;
	}
	return 0;
}

static const struct uroce_daemon_port_ops port_ops = {
	.now_us = NULL,
	.tx_alloc = port_tx_alloc,
	.tx_send = port_tx_send,
	.tx_free = port_tx_free,
	.tx_send_zc = port_tx_send_zc,
	.tx_zc_reap = port_tx_zc_reap,
	.resolve = port_resolve,
};

const struct uroce_daemon_port_ops *
simwire_daemon_port_ops(void)
{
	return &port_ops;
}

/* ------------------------------------------------------------------------ */
/* The wire                                                                  */
/* ------------------------------------------------------------------------ */

struct simwire_daemon *
simwire_daemon_create(const struct simwire_daemon_conf *conf)
{
	struct simwire_daemon *w = calloc(1, sizeof(*w));
	int i;

	if (w == NULL)
		return NULL;
	if (conf != NULL)
		w->conf = *conf;
	w->rng = sim_rng_seed(w->conf.seed);
	for (i = 0; i < 2; i++) {
		w->s[i].w = w;
		w->s[i].side = i;
		/* Locally administered unicast MACs 02:00:00:00:00:0{1,2}. */
		w->s[i].mac[0] = 0x02;
		w->s[i].mac[5] = (uint8_t)(i + 1);
	}
	return w;
}

void
simwire_daemon_destroy(struct simwire_daemon *w)
{
	if (w == NULL)
		return;
	while (w->nheap > 0)
		free(pop(w).base);
	free(w->heap);
	free(w->s[0].held);
	free(w->s[1].held);
	free(w->s[0].done);
	free(w->s[1].done);
	free(w);
}

void *
simwire_daemon_port_ctx(struct simwire_daemon *w, int side)
{
	if (w == NULL || side < 0 || side > 1)
		return NULL;
	return &w->s[side];
}

int
simwire_daemon_attach(struct simwire_daemon *w, int side, struct uroce_daemon *d,
		      const uint8_t gid[16])
{
	if (w == NULL || side < 0 || side > 1 || d == NULL || gid == NULL)
		return -EINVAL;
	w->s[side].d = d;
	memcpy(w->s[side].gid, gid, 16);
	w->s[side].attached = true;
	return 0;
}

unsigned int
simwire_daemon_step(struct simwire_daemon *w)
{
	unsigned int work = 0, burst = 0;
	uint64_t now;
	int i;

	w->steps++;
	for (i = 0; i < 2; i++)
		zc_due(w, &w->s[i]);
	for (i = 0; i < 2; i++)
		if (w->s[i].attached)
			work += uroce_daemon_poll(w->s[i].d);
	now = simwire_daemon_now_us();
	while (w->nheap > 0 && w->heap[0].at <= now && burst++ < SIMWIRE_DAEMON_BURST) {
		struct flight fl = pop(w);
		enum uroce_wire_err err;
		struct uroce_frame f;
		struct uroce_pkt p;

		if (fl.corrupt)
			w->st.corrupted_arrived++;
		trace(fl.corrupt ? "CORRUPT" : "deliver", 1 - fl.to, fl.frame, fl.len);
		/* The receiving port's checks, as the dataplane's: frame, ICRC, BTH. */
		err = uroce_parse(fl.frame, fl.len, &f, &p);
		if (err == UROCE_WIRE_OK) {
			p.owner = fl.base;
			w->st.delivered++;
			uroce_daemon_rx(w->s[fl.to].d, &p, &f);
		} else {
			w->st.rejected++;
			if ((unsigned int)err < UROCE_WIRE_ERR_MAX)
				w->st.rejected_by[err]++;
		}
		free(fl.base);
		work++;
	}
	return work;
}

uint32_t
simwire_daemon_in_flight(const struct simwire_daemon *w)
{
	return w->nheap + simwire_daemon_zc_held(w) + w->s[0].ndone + w->s[1].ndone;
}

void
simwire_daemon_set_loss(struct simwire_daemon *w, uint32_t drop_ppm, uint32_t dup_ppm,
			uint32_t reorder_ppm, uint32_t corrupt_ppm)
{
	w->conf.drop_ppm = drop_ppm;
	w->conf.dup_ppm = dup_ppm;
	w->conf.reorder_ppm = reorder_ppm;
	w->conf.corrupt_ppm = corrupt_ppm;
}

struct simwire_daemon_stats
simwire_daemon_stats(const struct simwire_daemon *w)
{
	return w->st;
}
