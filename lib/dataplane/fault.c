/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Fault injection (issue #5): drop, duplicate, reorder or corrupt a given
 * fraction of the RoCEv2 frames a port receives or sends, so that tests (and
 * curious users) can watch the transport's retransmission at work; and mark
 * a fraction of the received ones ECN CE (fault_ce, issue #13), as a
 * congested switch in front of the port would, to watch the CNP notification
 * point and the DCQCN reaction point.
 *
 * One 32-bit draw per RoCEv2 frame from a per-(port, worker, direction)
 * xorshift64* generator picks at most one fault: the configured fractions
 * are cut-offs on the draw. The generator is seeded from fault_seed, so the
 * same sequence of RoCEv2 frames meets the same decisions on every run,
 * however other traffic is interleaved with it. Frames that are not RoCEv2
 * (ARP, IPv6 ND, anything else) are never touched: what the user wants to see
 * is the transport recovering, not neighbour resolution failing, which would
 * only stall every flow behind it.
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "dp_internal.h"

#define CUT_ONE (UINT64_C(1) << 32) /* a cut-off that every 32-bit draw is below */

/* splitmix64 step: spreads a seed and an index into an unrelated 64-bit value. */
static uint64_t
fault_mix(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* xorshift64*: the high 32 bits of the product are the draw. */
static inline uint32_t
fault_draw(struct dp_fault *f)
{
	uint64_t x = f->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	f->rng = x;
	return (uint32_t)((x * UINT64_C(0x2545f4914f6cdd1d)) >> 32);
}

/* A fraction 0..1 as a cut-off on a 32-bit draw; 1 (or more) is CUT_ONE. */
static uint64_t
fault_cut(double frac)
{
	if (!(frac > 0.0))
		return 0;
	if (frac >= 1.0)
		return CUT_ONE;
	return (uint64_t)(frac * (double)CUT_ONE + 0.5);
}

bool
dp_fault_wanted(const struct uroce_dp_port_cfg *c)
{
	return c->fault_drop > 0.0 || c->fault_dup > 0.0 || c->fault_reorder > 0.0 ||
	       c->fault_corrupt > 0.0 || c->fault_ce > 0.0;
}

void
dp_fault_init(struct dp_fault *f, const struct uroce_dp_port_cfg *c, unsigned int port,
	      unsigned int worker, enum dp_fault_side side, struct dp_counters *cnt)
{
	bool on;
	uint64_t s;

	memset(f, 0, sizeof(*f));
	f->cnt = cnt;
	on = c->fault_dir == UROCE_DP_FAULT_BOTH ||
	     (c->fault_dir == UROCE_DP_FAULT_RX && side == DP_FAULT_RX) ||
	     (c->fault_dir == UROCE_DP_FAULT_TX && side == DP_FAULT_TX);
	if (on) {
		/* Cumulative: each fault owns a slice of the draw's range. */
		f->cut[0] = fault_cut(c->fault_drop);
		f->cut[1] = fault_cut(c->fault_drop + c->fault_dup);
		f->cut[2] = fault_cut(c->fault_drop + c->fault_dup + c->fault_reorder);
		f->cut[3] = fault_cut(c->fault_drop + c->fault_dup + c->fault_reorder +
				      c->fault_corrupt);
	}
	/* A congested switch marks what it forwards to us: received frames only. */
	if (side == DP_FAULT_RX && c->fault_dir != UROCE_DP_FAULT_TX)
		f->ce_cut = fault_cut(c->fault_ce);
	f->enabled = f->cut[3] != 0 || f->ce_cut != 0;
	/* Each (port, worker, side) gets its own stream from the one seed. */
	s = fault_mix(c->fault_seed);
	s = fault_mix(s ^ ((uint64_t)port << 40 | (uint64_t)worker << 8 | (uint64_t)side));
	f->rng = s != 0 ? s : UINT64_C(0x2545f4914f6cdd1d); /* xorshift stays at 0 forever */
}

/*
 * Flip one byte after the BTH: extension headers, payload, pad or the ICRC
 * itself. The Ethernet, IP and UDP headers stay intact so that the frame
 * still reaches the receiver's RoCEv2 parser, and that parser's ICRC check
 * is what must catch it: a CRC-32 detects every error confined to 32
 * consecutive bits (IBA 7.8.1 ICRC; RoCEv2 annex A17.4.1). The BTH is left
 * alone because its byte 4 (FECN, BECN, reserved) is masked out of the ICRC.
 * A frame someone else holds a reference to (say, a TX frame the transport
 * kept for retransmission) is copied first, so that the retransmission
 * goes out clean.
 *
 * @return the frame to pass on (@p m, or the corrupted copy that replaces it),
 *   or NULL if a copy was needed and could not be made: then @p m is untouched
 *   and still owned by the caller.
 */
static struct rte_mbuf *
fault_corrupt(struct dp_fault *f, struct rte_mbuf *m, const struct uroce_frame *fr,
	      struct rte_mempool *mp)
{
	uint32_t span = fr->ib_len - UROCE_BTH_LEN; /* >= UROCE_ICRC_LEN (frame parse) */
	uint32_t off = fr->bth_off + UROCE_BTH_LEN + fault_draw(f) % span;
	uint8_t mask = (uint8_t)(fault_draw(f) | 1); /* never 0: always a change */
	struct rte_mbuf *c;

	if (rte_mbuf_refcnt_read(m) != 1 || !RTE_MBUF_DIRECT(m)) {
		if (mp == NULL)
			return NULL;
		c = rte_pktmbuf_copy(m, mp, 0, UINT32_MAX);
		if (c == NULL)
			return NULL;
		if (off >= rte_pktmbuf_data_len(c)) {
			rte_pktmbuf_free(c);
			return NULL;
		}
		rte_pktmbuf_free(m);
		m = c;
	}
	rte_pktmbuf_mtod(m, uint8_t *)[off] ^= mask;
	return m;
}

/*
 * CE in the IP header, checksum fixed (uroce_frame_mark_ce()); the ICRC does
 * not cover the ECN bits (A17.4.1). Only RX frames get here, and those are
 * ours alone (a refcount of 1), so the edit is in place.
 */
static void
fault_ce(struct dp_fault *f, struct rte_mbuf *m, struct uroce_frame *fr)
{
	if (uroce_frame_mark_ce(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m), fr) < 0)
		f->cnt->fault_ce_not_ect++;
	else
		f->cnt->fault_ce_marked++;
}

/* Place the held packet after the @p total packets of the burst, if there is room. */
static uint16_t
fault_release(struct dp_fault *f, struct rte_mbuf **pkts, uint16_t total, uint16_t room)
{
	if (total >= room)
		return total;
	pkts[total++] = f->held;
	f->held = NULL;
	f->held_polls = 0;
	return total;
}

uint16_t
dp_fault_burst(struct dp_fault *f, struct rte_mbuf **pkts, uint16_t n, uint16_t room,
	       struct rte_mempool *mp)
{
	struct dp_counters *cnt = f->cnt;
	struct rte_mbuf *prev = f->held; /* held since an earlier call */
	struct uroce_frame fr;
	uint16_t out = 0, ndup = 0, i;

	if (likely(!f->enabled))
		return n;
	if (n == 0) {
		/* An idle link: let a lone held packet go after a while. */
		if (prev != NULL && ++f->held_polls >= DP_FAULT_HOLD_POLLS)
			return fault_release(f, pkts, 0, room);
		return 0;
	}
	/*
	 * pkts[0, out) are the survivors, compacted in order (out <= i);
	 * pkts[n, n + ndup) collect the duplicates until the end.
	 */
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i], *c;
		uint32_t r;

		/*
		 * Only RoCEv2 (UDP 4791) is subject to faults (see the top
		 * comment), and only RoCEv2 consumes draws: ARP or ND frames
		 * interleaved differently do not shift the decisions.
		 */
		if (uroce_frame_parse(rte_pktmbuf_mtod(m, const uint8_t *),
				      rte_pktmbuf_data_len(m), &fr) != UROCE_WIRE_OK)
			goto keep;
		r = fault_draw(f);
		/* fault_ce draws apart, after the fault draw, so that adding it
		 * leaves the other faults' fractions as they were. */
		if (f->ce_cut != 0 && fault_draw(f) < f->ce_cut && RTE_MBUF_DIRECT(m) &&
		    rte_mbuf_refcnt_read(m) == 1)
			fault_ce(f, m, &fr);
		if (likely(r >= f->cut[3]))
			goto keep;
		if (r < f->cut[0]) {
			rte_pktmbuf_free(m);
			cnt->fault_dropped++;
			continue;
		}
		if (r < f->cut[1]) {
			/*
			 * A real copy, not a clone: the PMD frees each TX mbuf
			 * on its own schedule, and the RX path may edit one.
			 */
			if (n + ndup < room && mp != NULL) {
				c = rte_pktmbuf_copy(m, mp, 0, UINT32_MAX);
				if (c != NULL) {
					pkts[n + ndup++] = c;
					cnt->fault_duplicated++;
				}
			}
			goto keep;
		}
		if (r < f->cut[2]) {
			/* Hold this one back; one already held takes its place. */
			c = f->held;
			f->held = m;
			f->held_polls = 0;
			cnt->fault_reordered++;
			if (c == NULL)
				continue;
			m = c;
			goto keep;
		}
		c = fault_corrupt(f, m, &fr, mp);
		if (c != NULL) {
			m = c;
			cnt->fault_corrupted++;
		}
keep:
		pkts[out++] = m;
	}
	if (ndup != 0 && out != n)
		memmove(&pkts[out], &pkts[n], ndup * sizeof(pkts[0]));
	out = (uint16_t)(out + ndup);
	/*
	 * A packet held since an earlier call goes out behind this burst, once
	 * at least one later packet has gone ahead of it (else it was merely
	 * delayed). With no room it waits for the next call.
	 */
	if (prev != NULL && f->held == prev) {
		if (out != 0)
			return fault_release(f, pkts, out, room);
		f->held_polls++;
	}
	return out;
}

uint16_t
dp_fault_flush(struct dp_fault *f, struct rte_mbuf **pkts, uint16_t room)
{
	if (f->held == NULL || room == 0)
		return 0;
	return fault_release(f, pkts, 0, room);
}

void
dp_fault_free(struct dp_fault *f)
{
	if (f->held != NULL) {
		rte_pktmbuf_free(f->held);
		f->held = NULL;
		f->held_polls = 0;
	}
}

int
dp_fault_create(const struct uroce_dp_port_cfg *c, unsigned int port, unsigned int n_workers,
		struct dp_counters *cnt, int socket, struct dp_fault **out)
{
	struct dp_fault *arr;
	unsigned int w;

	*out = NULL;
	if (!dp_fault_wanted(c) || n_workers == 0)
		return 0;
	arr = rte_zmalloc_socket("uroce_fault", 2 * n_workers * sizeof(*arr), RTE_CACHE_LINE_SIZE,
				 socket);
	if (arr == NULL)
		return -ENOMEM;
	for (w = 0; w < n_workers; w++) {
		dp_fault_init(dp_fault_at(arr, w, DP_FAULT_RX), c, port, w, DP_FAULT_RX, &cnt[w]);
		dp_fault_init(dp_fault_at(arr, w, DP_FAULT_TX), c, port, w, DP_FAULT_TX, &cnt[w]);
	}
	*out = arr;
	return 0;
}

void
dp_fault_destroy(struct dp_fault *arr, unsigned int n_workers)
{
	unsigned int i;

	if (arr == NULL)
		return;
	for (i = 0; i < 2 * n_workers; i++)
		dp_fault_free(&arr[i]);
	rte_free(arr);
}
