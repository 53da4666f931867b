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

#include <string.h>

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
