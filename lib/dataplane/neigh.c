/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The life of one neighbour entry (doc/dataplane.md, "Resolution"), kept free
 * of DPDK calls so that test/unit/dataplane can drive it with a fake clock:
 *
 *   FREE -resolve-> PENDING -answer-> REACHABLE -neigh_reachable_ms-> PROBE
 *                      |                  ^                            |
 *                      | neigh_tries      +----------answer------------+
 *                      v                                               |
 *                    FAILED <-----------------neigh_tries--------------+
 *
 * This is RFC 4861 7.3's reachability state machine cut to what a daemon
 * without upper-layer hints needs (Linux's REACHABLE, STALE/DELAY/PROBE and
 * FAILED): an entry is trusted for neigh_reachable_ms after the peer last
 * told us its MAC; then it is asked again, with the same broadcast ARP
 * request or multicast solicitation as the first time, so that a peer whose
 * MAC changed answers with its new one. While it is being asked the known
 * MAC stays in use, so a peer that only went quiet loses no traffic.
 * RoCEv2 traffic from the peer, from the MAC the entry holds, is the
 * upper-layer hint of RFC 4861 7.3.1: it confirms the entry, so a peer in
 * conversation is never probed (on a link flooded by RDMA, an ARP reply can
 * be lost, and a failed probe would stop the conversation).
 */

#include <errno.h>
#include <string.h>

#include <rte_pause.h>

#include "dp_internal.h"

enum dp_neigh_action
dp_neigh_age(struct dp_neigh *n, uint64_t now, const struct dp_neigh_timing *t)
{
	switch (n->state) {
	case DP_NEIGH_REACHABLE:
		if (now - n->confirmed_tsc < t->reachable)
			return DP_NEIGH_IDLE;
		n->state = DP_NEIGH_PROBE;
		n->tries = 1;
		n->next_tsc = now + t->retry;
		return DP_NEIGH_REFRESH;
	case DP_NEIGH_PENDING:
	case DP_NEIGH_PROBE:
		if (now < n->next_tsc)
			return DP_NEIGH_IDLE;
		if (n->tries >= t->tries) {
			n->state = DP_NEIGH_FAILED;
			return DP_NEIGH_GIVE_UP;
		}
		n->tries++;
		n->next_tsc = now + t->retry;
		return DP_NEIGH_REQUEST;
	default:
		return DP_NEIGH_IDLE;
	}
}

bool
dp_neigh_seen(struct dp_neigh *n, const uint8_t mac[6], uint64_t now)
{
	if ((n->state != DP_NEIGH_REACHABLE && n->state != DP_NEIGH_PROBE) ||
	    memcmp(n->mac, mac, 6) != 0)
		return false;
	n->state = DP_NEIGH_REACHABLE;
	n->tries = 0;
	n->confirmed_tsc = now;
	return true;
}

bool
dp_neigh_confirm(struct dp_neigh *n, const uint8_t mac[6], uint64_t now)
{
	bool changed;

	if (n->state == DP_NEIGH_STATIC)
		return false;
	changed = (n->state == DP_NEIGH_REACHABLE || n->state == DP_NEIGH_PROBE) &&
		  memcmp(n->mac, mac, 6) != 0;
	memcpy(n->mac, mac, 6);
	n->state = DP_NEIGH_REACHABLE;
	n->tries = 0;
	n->confirmed_tsc = now;
	return changed;
}

/*
 * The neighbour table of a port (struct dp_ntable): the entries above, owned
 * by the control thread, and an open-addressed hash of their published
 * form, which workers read without a lock.
 *
 * Writers: the control thread alone (addr.c: resolution requests, answers
 * and traffic that workers pass it through rings, and the ageing tick).
 * Readers: any thread (workers on a next-hop cache miss, telemetry).
 *
 * Each slot is a sequence lock with one writer: the writer makes the
 * sequence odd, rewrites key and value, and makes it even again (release);
 * a reader reads the sequence (acquire), the fields, then the sequence again
 * after an acquire fence, and retries while the two differ or are odd. The
 * fields are 64-bit words read and written atomically, so a torn copy is
 * never used, only retried. A reader that keeps finding a slot mid-write
 * (its writer was descheduled there) gives up with -EBUSY after
 * DP_NSLOT_SPINS tries rather than wait on another thread.
 *
 * Linear probing. A removed entry leaves a tombstone, so that the probe
 * sequences through it stay whole; a tombstone followed by a never-used slot
 * ends no sequence and goes back to never-used (with those before it).
 * Slots are at least twice the entries. Entries only move slots when one is
 * reused for another address, so a reader that races a change can miss only
 * the address being added (which is pending, and it asks again).
 *
 * The generation: after a change that takes a usable MAC away (a new MAC, a
 * failure), the writer bumps gen (release), after the slot is rewritten. A
 * worker reads gen (acquire) before it reads a slot and keeps the MAC with
 * the gen it read; a cached MAC whose gen is still current is still the
 * published one.
 */

#define DP_NSLOT_SPINS 64

static inline uint64_t
nval(const uint8_t mac[6], unsigned int state)
{
	uint64_t v = (uint64_t)state << 48;
	unsigned int i;

	for (i = 0; i < 6; i++)
		v |= (uint64_t)mac[i] << (8 * i);
	return v;
}

static inline unsigned int
nval_state(uint64_t v)
{
	return (unsigned int)(v >> 48) & 0xff;
}

static inline void
nval_mac(uint64_t v, uint8_t mac[6])
{
	unsigned int i;

	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)(v >> (8 * i));
}

static inline bool
nstate_usable(unsigned int s)
{
	return s == DP_NEIGH_REACHABLE || s == DP_NEIGH_PROBE || s == DP_NEIGH_STATIC;
}

static inline void
nkey(const uint8_t ip[16], uint64_t k[2])
{
	memcpy(&k[0], ip, 8);
	memcpy(&k[1], ip + 8, 8);
}

static inline uint32_t
nhash(const uint64_t k[2])
{
	uint64_t h = (k[0] ^ (k[1] << 29 | k[1] >> 35)) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32);
}

/* The control thread's own read of a slot: no other writer exists. */
static inline uint64_t
nslot_val(const struct dp_nslot *s)
{
	return __atomic_load_n(&s->val, __ATOMIC_RELAXED);
}

static void
nslot_store(struct dp_nslot *s, const uint64_t k[2], uint64_t v)
{
	uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);

	/* Odd first, and ordered before the fields (release fence): a reader
	 * that sees any new field sees the odd or the next sequence. */
	__atomic_store_n(&s->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->key[0], k[0], __ATOMIC_RELAXED);
	__atomic_store_n(&s->key[1], k[1], __ATOMIC_RELAXED);
	__atomic_store_n(&s->val, v, __ATOMIC_RELAXED);
	/* Even again: everything above is visible to whoever sees it. */
	__atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
}

/* A consistent copy of slot @s: 0, or -EBUSY if it stayed mid-write. */
static inline int
nslot_load(const struct dp_nslot *s, uint64_t k[2], uint64_t *v)
{
	unsigned int tries;
	uint32_t seq;

	for (tries = 0; tries < DP_NSLOT_SPINS; tries++) {
		seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		if (seq & 1) {
			rte_pause();
			continue;
		}
		k[0] = __atomic_load_n(&s->key[0], __ATOMIC_RELAXED);
		k[1] = __atomic_load_n(&s->key[1], __ATOMIC_RELAXED);
		*v = __atomic_load_n(&s->val, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) == seq)
			return 0;
	}
	return -EBUSY;
}

uint32_t
dp_ntable_nslots(uint32_t max)
{
	uint32_t n = 8;

	while (n < 2 * max)
		n <<= 1;
	return n;
}

void
dp_ntable_init(struct dp_ntable *t, struct dp_nslot *slot, uint32_t nslots, struct dp_neigh *ent,
	       uint32_t max)
{
	memset(slot, 0, sizeof(*slot) * nslots);
	memset(ent, 0, sizeof(*ent) * max);
	t->slot = slot;
	t->mask = nslots - 1;
	t->ent = ent;
	t->max = max;
	t->used = 0;
	t->gen = 1; /* a worker's cache holds gen 0 for "no MAC" */
	t->full = false;
}

struct dp_neigh *
dp_ntable_find(struct dp_ntable *t, const uint8_t ip[16])
{
	uint64_t k[2];
	uint32_t i, n;

	nkey(ip, k);
	i = nhash(k) & t->mask;
	for (n = 0; n <= t->mask; n++, i = (i + 1) & t->mask) {
		const struct dp_nslot *s = &t->slot[i];
		unsigned int st = nval_state(nslot_val(s));

		if (st == DP_NSLOT_EMPTY)
			return NULL;
		if (st != DP_NSLOT_TOMB && s->key[0] == k[0] && s->key[1] == k[1])
			return &t->ent[s->entry];
	}
	return NULL;
}

/* Take entry @n's slot away (a tombstone), and drop the tombstones that end
 * no probe sequence. */
static void
ntable_unlink(struct dp_ntable *t, struct dp_neigh *n)
{
	static const uint64_t zero[2];
	uint32_t i = n->slot;
	uint64_t k[2];

	nkey(n->ip, k);
	nslot_store(&t->slot[i], k, (uint64_t)DP_NSLOT_TOMB << 48);
	if (nval_state(nslot_val(&t->slot[(i + 1) & t->mask])) != DP_NSLOT_EMPTY)
		return;
	while (nval_state(nslot_val(&t->slot[i])) == DP_NSLOT_TOMB) {
		nslot_store(&t->slot[i], zero, 0);
		i = (i - 1) & t->mask;
	}
}

struct dp_neigh *
dp_ntable_add(struct dp_ntable *t, const uint8_t ip[16])
{
	struct dp_neigh *n = NULL;
	uint64_t k[2];
	uint32_t i, j;

	if (t->used < t->max) {
		n = &t->ent[t->used++];
	} else {
		/* Full: reuse a failed entry (it holds no usable MAC). */
		for (j = 0; j < t->max && n == NULL; j++)
			if (t->ent[j].state == DP_NEIGH_FAILED)
				n = &t->ent[j];
		if (n == NULL) {
			__atomic_store_n(&t->full, true, __ATOMIC_RELAXED);
			return NULL;
		}
		ntable_unlink(t, n);
	}
	memset(n, 0, sizeof(*n));
	memcpy(n->ip, ip, 16);
	n->state = DP_NEIGH_PENDING;
	nkey(ip, k);
	/* Slots outnumber entries, so a free one is on the way. */
	for (i = nhash(k) & t->mask;; i = (i + 1) & t->mask) {
		unsigned int st = nval_state(nslot_val(&t->slot[i]));

		if (st == DP_NSLOT_EMPTY || st == DP_NSLOT_TOMB)
			break;
	}
	n->slot = i;
	t->slot[i].entry = (uint32_t)(n - t->ent);
	nslot_store(&t->slot[i], k, nval(n->mac, n->state));
	__atomic_store_n(&t->full, false, __ATOMIC_RELAXED);
	return n;
}

void
dp_ntable_publish(struct dp_ntable *t, const struct dp_neigh *n)
{
	struct dp_nslot *s = &t->slot[n->slot];
	uint64_t old = nslot_val(s), v = nval(n->mac, n->state), k[2];

	if (old == v)
		return;
	nkey(n->ip, k);
	nslot_store(s, k, v);
	/* A usable MAC went away or changed: the workers' caches must not
	 * keep it. (A new MAC for an entry that had none needs no bump:
	 * no cache can hold one.) */
	if (nstate_usable(nval_state(old)) &&
	    (!nstate_usable(n->state) || (old & 0xffffffffffffull) != (v & 0xffffffffffffull)))
		__atomic_store_n(&t->gen, t->gen + 1, __ATOMIC_RELEASE);
}

int
dp_ntable_lookup(const struct dp_ntable *t, const uint8_t ip[16], uint8_t mac[6])
{
	uint64_t k[2], sk[2], v;
	uint32_t i, n;
	unsigned int st;

	nkey(ip, k);
	i = nhash(k) & t->mask;
	for (n = 0; n <= t->mask; n++, i = (i + 1) & t->mask) {
		if (nslot_load(&t->slot[i], sk, &v) != 0)
			return -EBUSY;
		st = nval_state(v);
		if (st == DP_NSLOT_EMPTY)
			return DP_NEIGH_FREE;
		if (st != DP_NSLOT_TOMB && sk[0] == k[0] && sk[1] == k[1]) {
			nval_mac(v, mac);
			return (int)st;
		}
	}
	return DP_NEIGH_FREE;
}

int
dp_ntable_read(const struct dp_ntable *t, uint32_t i, uint8_t ip[16], uint8_t mac[6])
{
	uint64_t k[2], v;
	unsigned int st;

	if (nslot_load(&t->slot[i], k, &v) != 0)
		return -EBUSY;
	st = nval_state(v);
	if (st == DP_NSLOT_EMPTY || st == DP_NSLOT_TOMB)
		return DP_NEIGH_FREE;
	memcpy(ip, &k[0], 8);
	memcpy(ip + 8, &k[1], 8);
	nval_mac(v, mac);
	return (int)st;
}
