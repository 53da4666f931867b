/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The neighbour table's publish protocol under real threads (neigh.c), written
 * without Criterion so that the same scenario runs in test_neigh.c and in
 * tsan_neigh.c, the ThreadSanitizer driver (Criterion cannot start under
 * TSan, Snaipe/Criterion issue 274). It returns counts; the callers assert.
 *
 * One writer thread plays the control thread; readers play workers:
 *  - stable keys 1..NC_STABLE are reachable from the start and only change
 *    MAC; their MAC carries the key (byte 1) and a version (bytes 2-5);
 *  - churn keys are added (pending), failed, and their entries reused for
 *    new keys (tombstones, slot reuse), all the time, in the same hash;
 *  - key 1's MAC changes every round; before each generation bump the
 *    writer notes key 1's version at that generation.
 * A reader must always find a stable key reachable (never missing, never
 * pending), with a MAC of that key (never torn), its version never going
 * back, and key 1's version at least the one noted for the generation it
 * read first (the generation protocol the workers' caches rely on).
 */

#ifndef NEIGH_CONCURRENT_H
#define NEIGH_CONCURRENT_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dp_internal.h"

#define NC_STABLE 16
#define NC_CHURN 8
#define NC_READERS 2

struct nc_result {
	uint64_t lookups;   /**< reads done by all readers */
	uint64_t busy;      /**< of those, -EBUSY (a slot stayed mid-write) */
	uint64_t missing;   /**< a stable key not found, or not reachable */
	uint64_t torn;      /**< a MAC of another key */
	uint64_t backwards; /**< a version older than one this reader saw */
	uint64_t stale;     /**< key 1 older than noted for the generation read */
	uint64_t reused;    /**< churn entries reused for new keys */
};

struct nc_shared {
	struct dp_ntable t;
	uint32_t *ver_at_gen;   /**< [gen]: key 1's version when gen was reached */
	uint64_t max_gen;
	int done;
	struct nc_result r[NC_READERS];
};

struct nc_arg {
	struct nc_shared *sh;
	struct nc_result *r;
};

static inline void
nc_ip(uint8_t ip[16], uint32_t key)
{
	memset(ip, 0, 16);
	ip[10] = 0xff;
	ip[11] = 0xff;
	ip[12] = 198;
	ip[13] = 18;
	ip[14] = (uint8_t)(key >> 8);
	ip[15] = (uint8_t)key;
}

static inline void
nc_mac(uint8_t mac[6], uint32_t key, uint32_t ver)
{
	mac[0] = 0x02;
	mac[1] = (uint8_t)key;
	mac[2] = (uint8_t)(ver >> 24);
	mac[3] = (uint8_t)(ver >> 16);
	mac[4] = (uint8_t)(ver >> 8);
	mac[5] = (uint8_t)ver;
}

static inline uint32_t
nc_ver(const uint8_t mac[6])
{
	return (uint32_t)mac[2] << 24 | (uint32_t)mac[3] << 16 | (uint32_t)mac[4] << 8 | mac[5];
}

static void *
nc_reader(void *arg)
{
	struct nc_shared *sh = ((struct nc_arg *)arg)->sh;
	struct nc_result *r = ((struct nc_arg *)arg)->r;
	uint32_t last[NC_STABLE + 1] = {0}, key = 1, i = 0;
	uint8_t ip[16], mac[6];
	uint64_t g;
	int st;

	while (!__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE)) {
		key = key % NC_STABLE + 1;
		nc_ip(ip, key);
		g = dp_ntable_gen(&sh->t);
		st = dp_ntable_lookup(&sh->t, ip, mac);
		r->lookups++;
		if (st == -EBUSY) {
			r->busy++;
			continue;
		}
		if (st != DP_NEIGH_REACHABLE) {
			r->missing++;
			continue;
		}
		if (mac[0] != 0x02 || mac[1] != (uint8_t)key) {
			r->torn++;
			continue;
		}
		if (nc_ver(mac) < last[key])
			r->backwards++;
		last[key] = nc_ver(mac);
		if (key == 1 && g <= sh->max_gen && nc_ver(mac) < sh->ver_at_gen[g])
			r->stale++;
		if (++i % 256 == 0)
			sched_yield(); /* the test machine is shared */
	}
	return NULL;
}

/* Run @p rounds writer rounds against NC_READERS readers; 0 or -errno. */
static inline int
nc_run(uint32_t rounds, struct nc_result *total)
{
	uint32_t max = NC_STABLE + NC_CHURN, nslots = dp_ntable_nslots(max);
	uint32_t ver[NC_STABLE + 1] = {0}, next_churn = 1000, round, i;
	struct dp_nslot *slot = calloc(nslots, sizeof(*slot));
	struct dp_neigh *ent = calloc(max, sizeof(*ent));
	struct nc_shared *sh = calloc(1, sizeof(*sh));
	struct nc_arg args[NC_READERS];
	pthread_t th[NC_READERS];
	uint8_t ip[16], mac[6];
	struct dp_neigh *n;
	int rc = 0;

	if (slot == NULL || ent == NULL || sh == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* Every round bumps the generation once or twice. */
	sh->max_gen = 2 * (uint64_t)rounds + 2;
	sh->ver_at_gen = calloc(sh->max_gen + 1, sizeof(*sh->ver_at_gen));
	if (sh->ver_at_gen == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	dp_ntable_init(&sh->t, slot, nslots, ent, max);
	for (i = 1; i <= NC_STABLE; i++) {
		nc_ip(ip, i);
		n = dp_ntable_add(&sh->t, ip);
		nc_mac(n->mac, i, 0);
		n->state = DP_NEIGH_REACHABLE;
		dp_ntable_publish(&sh->t, n);
	}
	for (i = 0; i < NC_CHURN; i++) {
		nc_ip(ip, next_churn++);
		dp_ntable_add(&sh->t, ip);
	}
	for (i = 0; i < NC_READERS; i++) {
		args[i].sh = sh;
		args[i].r = &sh->r[i];
		if (pthread_create(&th[i], NULL, nc_reader, &args[i]) != 0) {
			__atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
			while (i-- > 0)
				pthread_join(th[i], NULL);
			rc = -EAGAIN;
			goto out;
		}
	}
	for (round = 1; round <= rounds; round++) {
		uint32_t key = 1 + round % NC_STABLE;

		/* Key 1: a new MAC every round; note it for the coming generation. */
		nc_ip(ip, 1);
		n = dp_ntable_find(&sh->t, ip);
		nc_mac(n->mac, 1, ++ver[1]);
		sh->ver_at_gen[sh->t.gen + 1] = ver[1];
		dp_ntable_publish(&sh->t, n);
		if (key != 1) {
			nc_ip(ip, key);
			n = dp_ntable_find(&sh->t, ip);
			nc_mac(n->mac, key, ++ver[key]);
			sh->ver_at_gen[sh->t.gen + 1] = ver[1];
			dp_ntable_publish(&sh->t, n);
		}
		/* A churn entry fails and its entry goes to a new address. */
		for (i = NC_STABLE; i < max; i++) {
			n = &sh->t.ent[(i + round) % NC_CHURN + NC_STABLE];
			if (n->state == DP_NEIGH_PENDING)
				break;
		}
		n->state = DP_NEIGH_FAILED;
		dp_ntable_publish(&sh->t, n);
		nc_ip(ip, next_churn);
		next_churn = next_churn >= 60000 ? 1000 : next_churn + 1;
		if (dp_ntable_find(&sh->t, ip) == NULL && dp_ntable_add(&sh->t, ip) != NULL)
			total->reused++;
		if (round % 64 == 0)
			sched_yield();
	}
	__atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NC_READERS; i++) {
		pthread_join(th[i], NULL);
		total->lookups += sh->r[i].lookups;
		total->busy += sh->r[i].busy;
		total->missing += sh->r[i].missing;
		total->torn += sh->r[i].torn;
		total->backwards += sh->r[i].backwards;
		total->stale += sh->r[i].stale;
	}
	/* After the writer stopped: every stable key at its last version. */
	for (i = 1; i <= NC_STABLE; i++) {
		nc_ip(ip, i);
		if (dp_ntable_lookup(&sh->t, ip, mac) != DP_NEIGH_REACHABLE ||
		    nc_ver(mac) != ver[i])
			total->missing++;
	}
out:
	if (sh != NULL)
		free(sh->ver_at_gen);
	free(sh);
	free(ent);
	free(slot);
	return rc;
}

#endif /* NEIGH_CONCURRENT_H */
