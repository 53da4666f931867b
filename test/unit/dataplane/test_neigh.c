/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * lib/dataplane/neigh.c without EAL: one neighbour entry driven through its
 * life by a fake clock (TSC values are plain numbers here): resolution with
 * retries and failure, ageing of a reachable entry, probing while the known
 * MAC stays in use, a MAC change followed, a peer gone quiet given up on,
 * traffic from the known MAC confirming an entry (and never teaching one), and
 * static entries untouched. Then the table the entries live in: lookup by
 * address in the published hash, the generation the workers' caches follow,
 * slot reuse with tombstones, a full table, and the publish protocol under
 * real threads (neigh_concurrent.h).
 */

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "dp_internal.h"
#include "neigh_concurrent.h"

/* 1 tick = 1 ms: retry 100 ms, reachable 1000 ms, 3 tries. */
static const struct dp_neigh_timing t = {.retry = 100, .reachable = 1000, .tries = 3};
static const uint8_t mac1[6] = {0x02, 0, 0xc6, 0x12, 0x01, 0x01};
static const uint8_t mac2[6] = {0x02, 0, 0xc6, 0x12, 0x01, 0x99};

Test(neigh, pending_asks_every_retry_then_fails)
{
	struct dp_neigh n = {.state = DP_NEIGH_PENDING, .next_tsc = 0};
	uint64_t now = 5000;

	/* Expect: the first request at once, then one per retry, neigh_tries in all. */
	cr_expect_eq(dp_neigh_age(&n, now, &t), DP_NEIGH_REQUEST);
	cr_expect_eq(dp_neigh_age(&n, now + 50, &t), DP_NEIGH_IDLE);
	cr_expect_eq(dp_neigh_age(&n, now + 100, &t), DP_NEIGH_REQUEST);
	cr_expect_eq(dp_neigh_age(&n, now + 200, &t), DP_NEIGH_REQUEST);
	cr_expect_eq(n.tries, 3);
	/* Expect: no answer by the next retry: failed, once; then left alone. */
	cr_expect_eq(dp_neigh_age(&n, now + 299, &t), DP_NEIGH_IDLE);
	cr_expect_eq(dp_neigh_age(&n, now + 300, &t), DP_NEIGH_GIVE_UP);
	cr_expect_eq(n.state, DP_NEIGH_FAILED);
	cr_expect_eq(dp_neigh_age(&n, now + 100000, &t), DP_NEIGH_IDLE);
}

Test(neigh, answer_makes_it_reachable_until_it_ages)
{
	struct dp_neigh n = {.state = DP_NEIGH_PENDING};

	cr_expect_eq(dp_neigh_age(&n, 0, &t), DP_NEIGH_REQUEST);
	/* Expect: an answer on a pending entry is no MAC change. */
	cr_expect_not(dp_neigh_confirm(&n, mac1, 40));
	cr_expect_eq(n.state, DP_NEIGH_REACHABLE);
	cr_expect_arr_eq(n.mac, mac1, 6);
	/* Expect: trusted for exactly neigh_reachable_ms after the answer. */
	cr_expect_eq(dp_neigh_age(&n, 40 + 999, &t), DP_NEIGH_IDLE);
	cr_expect_eq(n.state, DP_NEIGH_REACHABLE);
	cr_expect_eq(dp_neigh_age(&n, 40 + 1000, &t), DP_NEIGH_REFRESH);
	/* Expect: probing keeps the MAC (traffic goes on) and asks every retry. */
	cr_expect_eq(n.state, DP_NEIGH_PROBE);
	cr_expect_arr_eq(n.mac, mac1, 6);
	cr_expect_eq(dp_neigh_age(&n, 40 + 1050, &t), DP_NEIGH_IDLE);
	cr_expect_eq(dp_neigh_age(&n, 40 + 1100, &t), DP_NEIGH_REQUEST);
}

Test(neigh, refresh_and_traffic_keep_a_live_peer)
{
	struct dp_neigh n = {.state = DP_NEIGH_PENDING};
	uint64_t now;

	dp_neigh_confirm(&n, mac1, 0);
	/* Expect: a peer that answers each probe stays reachable for hours,
	 * with one refresh per period and the same MAC. */
	for (now = 0; now < 3600 * 1000; now += 10) {
		enum dp_neigh_action a = dp_neigh_age(&n, now, &t);

		cr_assert(a == DP_NEIGH_IDLE || a == DP_NEIGH_REFRESH, "action %d at %llu", a,
			  (unsigned long long)now);
		if (a == DP_NEIGH_REFRESH)
			cr_assert_not(dp_neigh_confirm(&n, mac1, now + 1));
	}
	cr_expect_eq(n.state, DP_NEIGH_REACHABLE);
}

Test(neigh, mac_change_is_followed)
{
	struct dp_neigh n = {.state = DP_NEIGH_PENDING};

	dp_neigh_confirm(&n, mac1, 0);
	cr_expect_eq(dp_neigh_age(&n, 1000, &t), DP_NEIGH_REFRESH);
	/* Expect: the answer to the probe carries the new MAC: reported as a
	 * change, and the entry holds it and is reachable again. */
	cr_expect(dp_neigh_confirm(&n, mac2, 1010));
	cr_expect_eq(n.state, DP_NEIGH_REACHABLE);
	cr_expect_arr_eq(n.mac, mac2, 6);
	cr_expect_eq(n.tries, 0);
	cr_expect_eq(dp_neigh_age(&n, 1010 + 999, &t), DP_NEIGH_IDLE);
	/* Expect: a gratuitous announcement (a confirmation while reachable) is
	 * followed too, without waiting for the entry to age. */
	cr_expect(dp_neigh_confirm(&n, mac1, 1500));
	cr_expect_arr_eq(n.mac, mac1, 6);
	cr_expect_not(dp_neigh_confirm(&n, mac1, 1600));
}

Test(neigh, quiet_peer_fails_after_the_probes)
{
	struct dp_neigh n = {.state = DP_NEIGH_PENDING};

	dp_neigh_confirm(&n, mac1, 0);
	/* Expect: refresh counts as the first of neigh_tries requests. */
	cr_expect_eq(dp_neigh_age(&n, 1000, &t), DP_NEIGH_REFRESH);
	cr_expect_eq(dp_neigh_age(&n, 1100, &t), DP_NEIGH_REQUEST);
	cr_expect_eq(dp_neigh_age(&n, 1200, &t), DP_NEIGH_REQUEST);
	cr_expect_eq(dp_neigh_age(&n, 1300, &t), DP_NEIGH_GIVE_UP);
	cr_expect_eq(n.state, DP_NEIGH_FAILED);
	/* Expect: a late answer to a failed entry makes it reachable again. */
	cr_expect_not(dp_neigh_confirm(&n, mac2, 1400));
	cr_expect_eq(n.state, DP_NEIGH_REACHABLE);
}

Test(neigh, static_entries_never_change)
{
	struct dp_neigh n = {.state = DP_NEIGH_STATIC};

	memcpy(n.mac, mac1, 6);
	cr_expect_eq(dp_neigh_age(&n, UINT64_MAX / 2, &t), DP_NEIGH_IDLE);
	cr_expect_not(dp_neigh_confirm(&n, mac2, 10));
	cr_expect_eq(n.state, DP_NEIGH_STATIC);
	cr_expect_arr_eq(n.mac, mac1, 6);
}

Test(neigh, free_and_failed_entries_stay_idle)
{
	struct dp_neigh f = {.state = DP_NEIGH_FREE}, x = {.state = DP_NEIGH_FAILED};

	cr_expect_eq(dp_neigh_age(&f, 123456, &t), DP_NEIGH_IDLE);
	cr_expect_eq(dp_neigh_age(&x, 123456, &t), DP_NEIGH_IDLE);
	cr_expect_eq(f.state, DP_NEIGH_FREE);
	cr_expect_eq(x.state, DP_NEIGH_FAILED);
}

Test(neigh, traffic_from_the_known_mac_confirms)
{
	struct dp_neigh n = {.state = DP_NEIGH_PENDING};
	uint64_t now;

	dp_neigh_confirm(&n, mac1, 0);
	/* Expect: a peer whose frames keep coming from its MAC is never probed. */
	for (now = 0; now < 100000; now += 100) {
		cr_assert_eq(dp_neigh_age(&n, now, &t), DP_NEIGH_IDLE, "probed at %llu",
			     (unsigned long long)now);
		cr_assert(dp_neigh_seen(&n, mac1, now));
	}
	/* Expect: traffic also ends a probe that is under way. */
	cr_expect_eq(dp_neigh_age(&n, now + 1000, &t), DP_NEIGH_REFRESH);
	cr_expect(dp_neigh_seen(&n, mac1, now + 1050));
	cr_expect_eq(n.state, DP_NEIGH_REACHABLE);
	cr_expect_eq(n.tries, 0);
}

Test(neigh, traffic_never_teaches_a_mac)
{
	struct dp_neigh n = {.state = DP_NEIGH_PENDING}, f = {.state = DP_NEIGH_FAILED};
	struct dp_neigh s = {.state = DP_NEIGH_STATIC};

	/* Expect: frames from another MAC, or for an entry not reachable, change
	 * nothing: only ARP and ND teach a MAC. */
	cr_expect_not(dp_neigh_seen(&n, mac1, 10));
	cr_expect_eq(n.state, DP_NEIGH_PENDING);
	dp_neigh_confirm(&n, mac1, 0);
	cr_expect_not(dp_neigh_seen(&n, mac2, 500));
	cr_expect_arr_eq(n.mac, mac1, 6);
	cr_expect_eq(n.confirmed_tsc, 0);
	cr_expect_not(dp_neigh_seen(&f, mac1, 10));
	cr_expect_eq(f.state, DP_NEIGH_FAILED);
	memcpy(s.mac, mac1, 6);
	cr_expect_not(dp_neigh_seen(&s, mac1, 10));
	cr_expect_eq(s.state, DP_NEIGH_STATIC);
}

/* ---------------------------------------------------------------------- */
/* The table (dp_ntable)                                                   */
/* ---------------------------------------------------------------------- */

struct tbl {
	struct dp_ntable t;
	struct dp_nslot *slot;
	struct dp_neigh *ent;
};

static void
tbl_init(struct tbl *b, uint32_t max)
{
	uint32_t n = dp_ntable_nslots(max);

	b->slot = calloc(n, sizeof(*b->slot));
	b->ent = calloc(max, sizeof(*b->ent));
	cr_assert(b->slot != NULL && b->ent != NULL);
	dp_ntable_init(&b->t, b->slot, n, b->ent, max);
}

static void
tbl_free(struct tbl *b)
{
	free(b->slot);
	free(b->ent);
}

/* The slot an address lands in when it is alone in a table of @max: its home. */
static uint32_t
home_of(uint32_t key, uint32_t max)
{
	struct tbl b;
	uint8_t ip[16];
	uint32_t h;

	tbl_init(&b, max);
	nc_ip(ip, key);
	h = dp_ntable_add(&b.t, ip)->slot;
	tbl_free(&b);
	return h;
}

static unsigned int
slot_state(const struct tbl *b, uint32_t i)
{
	return (unsigned int)(b->t.slot[i & b->t.mask].val >> 48) & 0xff;
}

Test(ntable, sizes)
{
	/* Expect: a power of two, at least twice the entries, at least 8. */
	cr_expect_eq(dp_ntable_nslots(1), 8);
	cr_expect_eq(dp_ntable_nslots(4), 8);
	cr_expect_eq(dp_ntable_nslots(5), 16);
	cr_expect_eq(dp_ntable_nslots(256), 512);
	cr_expect_eq(dp_ntable_nslots(65536), 131072);
}

Test(ntable, add_publish_lookup)
{
	struct tbl b;
	uint8_t ip[16], other[16], mac[6];
	struct dp_neigh *n;

	tbl_init(&b, 4);
	nc_ip(ip, 7);
	nc_ip(other, 8);
	/* Expect: nothing there: a miss, for the control thread and a reader. */
	cr_expect_null(dp_ntable_find(&b.t, ip));
	cr_expect_eq(dp_ntable_lookup(&b.t, ip, mac), DP_NEIGH_FREE);
	/* Expect: a new entry is published at once as pending. */
	n = dp_ntable_add(&b.t, ip);
	cr_assert_not_null(n);
	cr_expect_eq(n->state, DP_NEIGH_PENDING);
	cr_expect_eq(n->next_tsc, 0, "the next tick asks at once");
	cr_expect_eq(dp_ntable_find(&b.t, ip), n);
	cr_expect_eq(dp_ntable_lookup(&b.t, ip, mac), DP_NEIGH_PENDING);
	cr_expect_eq(dp_ntable_lookup(&b.t, other, mac), DP_NEIGH_FREE);
	/* Expect: the state machine's change is seen only once published. */
	dp_neigh_confirm(n, mac1, 10);
	cr_expect_eq(dp_ntable_lookup(&b.t, ip, mac), DP_NEIGH_PENDING);
	dp_ntable_publish(&b.t, n);
	cr_expect_eq(dp_ntable_lookup(&b.t, ip, mac), DP_NEIGH_REACHABLE);
	cr_expect_arr_eq(mac, mac1, 6);
	/* Expect: a reader's view of the slot names the address. */
	memset(other, 0, sizeof(other));
	cr_expect_eq(dp_ntable_read(&b.t, n->slot, other, mac), DP_NEIGH_REACHABLE);
	cr_expect_arr_eq(other, ip, 16);
	cr_expect_eq(dp_ntable_read(&b.t, (n->slot + 1) & b.t.mask, other, mac), DP_NEIGH_FREE);
	tbl_free(&b);
}

Test(ntable, generation_moves_when_a_usable_mac_goes)
{
	struct tbl b;
	uint8_t ip[16];
	struct dp_neigh *n;
	uint64_t g;

	tbl_init(&b, 4);
	nc_ip(ip, 1);
	g = dp_ntable_gen(&b.t);
	cr_expect_neq(g, 0, "0 means \"no MAC\" in a worker's cache");
	/* Expect: new entries and first answers take nothing from a cache. */
	n = dp_ntable_add(&b.t, ip);
	dp_neigh_confirm(n, mac1, 0);
	dp_ntable_publish(&b.t, n);
	cr_expect_eq(dp_ntable_gen(&b.t), g);
	/* Expect: probing keeps the MAC in use: no bump. */
	cr_expect_eq(dp_neigh_age(n, 1000, &t), DP_NEIGH_REFRESH);
	dp_ntable_publish(&b.t, n);
	cr_expect_eq(dp_ntable_gen(&b.t), g);
	/* Expect: a new MAC: bump. The same MAC again: nothing. */
	cr_expect(dp_neigh_confirm(n, mac2, 1010));
	dp_ntable_publish(&b.t, n);
	cr_expect_eq(dp_ntable_gen(&b.t), g + 1);
	dp_neigh_confirm(n, mac2, 1020);
	dp_ntable_publish(&b.t, n);
	cr_expect_eq(dp_ntable_gen(&b.t), g + 1);
	/* Expect: a failure takes the MAC away: bump; starting over does not. */
	cr_expect_eq(dp_neigh_age(n, 2020, &t), DP_NEIGH_REFRESH);
	cr_expect_eq(dp_neigh_age(n, 2120, &t), DP_NEIGH_REQUEST);
	cr_expect_eq(dp_neigh_age(n, 2220, &t), DP_NEIGH_REQUEST);
	cr_expect_eq(dp_neigh_age(n, 2320, &t), DP_NEIGH_GIVE_UP);
	dp_ntable_publish(&b.t, n);
	cr_expect_eq(dp_ntable_gen(&b.t), g + 2);
	n->state = DP_NEIGH_PENDING;
	dp_ntable_publish(&b.t, n);
	cr_expect_eq(dp_ntable_gen(&b.t), g + 2);
	tbl_free(&b);
}

/* Expect: a full table refuses, says so, and gives a failed entry to the next
 * address; the failed address is gone, the others stay. */
Test(ntable, full_reuses_a_failed_entry)
{
	struct tbl b;
	uint8_t ip[16], mac[6];
	struct dp_neigh *n[4], *x;
	uint32_t i;

	tbl_init(&b, 4);
	for (i = 0; i < 4; i++) {
		nc_ip(ip, 100 + i);
		n[i] = dp_ntable_add(&b.t, ip);
		cr_assert_not_null(n[i]);
	}
	nc_ip(ip, 200);
	cr_expect_null(dp_ntable_add(&b.t, ip));
	cr_expect(b.t.full);
	n[2]->state = DP_NEIGH_FAILED;
	dp_ntable_publish(&b.t, n[2]);
	x = dp_ntable_add(&b.t, ip);
	cr_expect_eq(x, n[2], "the failed entry is reused");
	cr_expect_not(b.t.full);
	cr_expect_eq(dp_ntable_lookup(&b.t, ip, mac), DP_NEIGH_PENDING);
	nc_ip(ip, 102);
	cr_expect_eq(dp_ntable_lookup(&b.t, ip, mac), DP_NEIGH_FREE);
	cr_expect_null(dp_ntable_find(&b.t, ip));
	for (i = 0; i < 4; i++) {
		if (i == 2)
			continue;
		nc_ip(ip, 100 + i);
		cr_expect_eq(dp_ntable_find(&b.t, ip), n[i]);
		cr_expect_eq(dp_ntable_lookup(&b.t, ip, mac), DP_NEIGH_PENDING);
	}
	tbl_free(&b);
}

/* Expect: three addresses with one home sit in consecutive slots; removing
 * the first leaves a tombstone that keeps the other two reachable; removing
 * the last of a run turns its tombstones back into never-used slots. */
Test(ntable, tombstones_keep_probe_sequences)
{
	uint32_t same[3], key, h = home_of(1, 4), n = 0, i;
	struct dp_neigh *e[4];
	struct tbl b;
	uint8_t ip[16], mac[6];

	for (key = 1; n < 3 && key < 100000; key++)
		if (home_of(key, 4) == h)
			same[n++] = key;
	cr_assert_eq(n, 3, "three addresses with one home slot");
	tbl_init(&b, 4);
	for (i = 0; i < 3; i++) {
		nc_ip(ip, same[i]);
		e[i] = dp_ntable_add(&b.t, ip);
		cr_assert_eq(e[i]->slot, (h + i) & b.t.mask, "linear probing");
	}
	/* A fourth address elsewhere fills the table. */
	for (key = 100000;; key++) {
		uint32_t k = home_of(key, 4);

		if (k != h && k != ((h + 1) & b.t.mask) && k != ((h + 2) & b.t.mask) &&
		    k != ((h + 3) & b.t.mask) && k != ((h - 1) & b.t.mask))
			break;
	}
	nc_ip(ip, key);
	e[3] = dp_ntable_add(&b.t, ip);
	cr_assert_not_null(e[3]);
	/* Remove the head of the run (reuse for a new address far away). */
	e[0]->state = DP_NEIGH_FAILED;
	dp_ntable_publish(&b.t, e[0]);
	nc_ip(ip, key + 1);
	while (home_of(key + 1, 4) == h) {
		key++;
		nc_ip(ip, key + 1);
	}
	cr_assert_eq(dp_ntable_add(&b.t, ip), e[0]);
	if (e[0]->slot != h)
		cr_expect_eq(slot_state(&b, h), DP_NSLOT_TOMB, "the head is a tombstone");
	for (i = 1; i < 3; i++) {
		nc_ip(ip, same[i]);
		cr_expect_eq(dp_ntable_lookup(&b.t, ip, mac), DP_NEIGH_PENDING,
			     "found through the tombstone");
		cr_expect_eq(dp_ntable_find(&b.t, ip), e[i]);
	}
	nc_ip(ip, same[0]);
	cr_expect_eq(dp_ntable_lookup(&b.t, ip, mac), DP_NEIGH_FREE);
	/* Remove the tail of the run: its slot and the tombstones before it
	 * that end no sequence become never-used. */
	if (slot_state(&b, h + 3) == DP_NSLOT_EMPTY) {
		e[2]->state = DP_NEIGH_FAILED;
		dp_ntable_publish(&b.t, e[2]);
		nc_ip(ip, 300000);
		cr_assert_eq(dp_ntable_add(&b.t, ip), e[2]);
		if (e[2]->slot != ((h + 2) & b.t.mask))
			cr_expect_eq(slot_state(&b, h + 2), DP_NSLOT_EMPTY);
		nc_ip(ip, same[1]);
		cr_expect_eq(dp_ntable_lookup(&b.t, ip, mac), DP_NEIGH_PENDING);
	}
	tbl_free(&b);
}

/* Expect: under churn by one writer and reads by two threads, a reachable
 * address is always found, never torn, never older than before, and never
 * older than the generation read first says (neigh_concurrent.h). */
Test(ntable, lock_free_readers, .timeout = 120)
{
	struct nc_result r = {0};

	cr_assert_eq(nc_run(200000, &r), 0);
	cr_log_info("%llu lookups, %llu busy, %llu reused", (unsigned long long)r.lookups,
		    (unsigned long long)r.busy, (unsigned long long)r.reused);
	cr_expect_gt(r.lookups, 0);
	cr_expect_eq(r.reused, 200000, "every round reused a failed entry");
	cr_expect_eq(r.missing, 0);
	cr_expect_eq(r.torn, 0);
	cr_expect_eq(r.backwards, 0);
	cr_expect_eq(r.stale, 0);
}
