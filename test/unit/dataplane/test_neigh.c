/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * lib/dataplane/neigh.c without EAL: one neighbour entry driven through its
 * life by a fake clock (TSC values are plain numbers here): resolution with
 * retries and failure, ageing of a reachable entry, probing while the known
 * MAC stays in use, a MAC change followed, a peer gone quiet given up on,
 * traffic from the known MAC confirming an entry (and never teaching one), and
 * static entries untouched.
 */

#include <string.h>

#include <criterion/criterion.h>

#include "dp_internal.h"

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
