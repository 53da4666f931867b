/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * Grace periods between the workers' bursts and a PMD's control path.
 *
 * DPDK 22.11's memif PMD tears a connection down in EAL's interrupt thread
 * (memif_disconnect(), when the peer leaves): it clears its "connected"
 * flag, then munmap()s the shared rings at once. A worker already past that
 * flag, inside rte_eth_rx_burst() or rte_eth_tx_burst(), then reads an
 * unmapped ring and the daemon dies with SIGSEGV. Nothing in the PMD waits,
 * and it offers no hook between the two steps; munmap() is the only call in
 * between that a program can see.
 *
 * So the dataplane holds such an unmap until every worker has been outside
 * its bursts once since it began (quiescent-state based reclamation): each
 * worker publishes, at the top of its loop, the epoch it saw; a waiter bumps
 * the epoch and waits until every worker shows the new one or is offline
 * (asleep or stopped). Workers that started a burst before the bump finish
 * it first; those that start one after see the flag cleared. The dataplane
 * defines munmap() (guard.c) to wait this way whenever a registered grace
 * domain has a worker running and the caller is not a worker; uroced
 * exports that definition so that PMD plugins bind to it.
 *
 * The reader side costs one load and one store per loop, plus a fence after
 * a sleep. No DPDK header: the unit tests drive it with plain threads.
 */

#ifndef DP_GRACE_H
#define DP_GRACE_H

#include <stdbool.h>
#include <stdint.h>

/** A reader that is asleep or stopped: it holds nothing. */
#define DP_GRACE_OFFLINE UINT64_MAX

/** The most readers (workers) one domain has. */
#define DP_GRACE_MAX_READERS 64

/** One grace domain: a dataplane's workers. */
struct dp_grace {
	uint64_t epoch;                          /**< bumped by each waiter */
	unsigned int n_readers;
	uint64_t *qs[DP_GRACE_MAX_READERS];      /**< each reader's epoch, or OFFLINE */
	struct dp_grace *next;                   /**< in the process's list (guard.c) */
};

/** Reader, once per loop, outside any burst: "I hold nothing of before". */
static inline void
dp_grace_quiescent(const struct dp_grace *g, uint64_t *qs)
{
	__atomic_store_n(qs, __atomic_load_n(&g->epoch, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
}

/** Reader, before a sleep or when it stops: wait for nothing of mine. */
static inline void
dp_grace_offline(uint64_t *qs)
{
	__atomic_store_n(qs, DP_GRACE_OFFLINE, __ATOMIC_RELEASE);
}

/**
 * Reader, back from a sleep, before its next burst. The full fence pairs
 * with the waiter's: either the waiter sees this reader online (and waits
 * for its next quiescent state), or this reader sees what the waiter's
 * thread wrote before it bumped the epoch (the PMD's cleared flag).
 */
static inline void
dp_grace_online(const struct dp_grace *g, uint64_t *qs)
{
	__atomic_store_n(qs, __atomic_load_n(&g->epoch, __ATOMIC_ACQUIRE), __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/**
 * Wait until every reader of @p g has passed a quiescent state or gone
 * offline since this call began. Never call it from a reader of @p g.
 * @return the readers that were online and waited for.
 */
unsigned int dp_grace_wait(struct dp_grace *g);

/**
 * Add @p g to the domains that munmap() waits for (guard.c), or take it
 * out. Control thread; @p g must stay valid until taken out.
 */
void dp_grace_register(struct dp_grace *g);
void dp_grace_unregister(struct dp_grace *g);

/** The calling thread is a reader: its own munmap() calls wait for nothing. */
void dp_grace_thread_is_reader(bool reader);

/** munmap() calls that had to wait for a worker so far (all domains). */
uint64_t dp_grace_unmaps_waited(void);

#endif /* DP_GRACE_H */
