/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Doorbells: a two-level bitmap per (client, worker). The client sets the
 * QP's bit, then (if the word was empty) the word's bit in the summary; the
 * worker exchanges the summary with 0, then each flagged word with 0, and
 * hands out the harvested slots one by one with find-first-set. Duplicates
 * collapse into one bit, so the block cannot overflow; bits the daemon did not
 * hand out (at or above nslots) are counted and dropped.
 *
 * Why no doorbell is lost (doc/shm-abi.md has the long form): every
 * transition of a word from 0 to non-zero is followed, in the ringing thread,
 * by an OR of the summary bit. The worker always exchanges the summary before
 * the words it flags. All RMWs are acq_rel, so when a client's word OR reads
 * the 0 written by the worker's word exchange, the worker's earlier summary
 * exchange happens before the client's summary OR, which therefore lands
 * after it in the summary's modification order and is seen by a later harvest.
 */

#include <errno.h>
#include <string.h>

#include <uroce_common.h>

#include "shm_internal.h"

void
uroce_shm_db_ring(struct uroce_shm_db_block *db, uint32_t slot)
{
	uint32_t w;
	uint64_t old;

	slot &= UROCE_SHM_DB_SLOTS - 1;
	w = slot >> 6;
	/* words[w]: client ORs, worker exchanges. Release: the SQ producer index
	 * stored before this is visible to the worker whose exchange reads this
	 * bit. Acquire: if we read the worker's 0, our summary OR below is
	 * ordered after the worker's summary exchange. Seq_cst (the same locked
	 * instruction on x86): the caller's load of the worker's sleeping word
	 * that follows (uroce_shm_status_wake()) is ordered after it. */
	old = atomic_fetch_or_explicit(SHM_A64(&db->words[w]), 1ull << (slot & 63),
				       memory_order_seq_cst);
	if (old != 0)
		return; /* whoever made the word non-zero sets the summary bit */
	/* summary: client ORs, worker exchanges. acq_rel as above: release
	 * orders the word bit before the summary bit. */
	atomic_fetch_or_explicit(SHM_A64(&db->summary), 1ull << w, memory_order_seq_cst);
}

bool
uroce_shm_db_pending(const struct uroce_shm_db_reader *rd)
{
	/* Seq_cst: after the worker's store of its sleeping word. */
	return rd->pending_summary != 0 ||
	       atomic_load_explicit(SHM_A64(&rd->db->summary), memory_order_seq_cst) != 0;
}

void
uroce_shm_db_reader_init(struct uroce_shm_db_reader *rd, struct uroce_shm_db_block *db,
			 uint32_t nslots)
{
	memset(rd, 0, sizeof(*rd));
	rd->db = db;
	rd->nslots = UROCE_MIN(nslots, UROCE_SHM_DB_SLOTS);
}

/* Bits of word w that are slots the daemon handed out. */
static uint64_t
valid_mask(const struct uroce_shm_db_reader *rd, uint32_t w)
{
	uint32_t first = w * 64;

	if (first >= rd->nslots)
		return 0;
	if (rd->nslots - first >= 64)
		return ~0ull;
	return (1ull << (rd->nslots - first)) - 1;
}

static bool
harvest(struct uroce_shm_db_reader *rd)
{
	uint64_t s, bits, bad;
	uint32_t w;

	/* Relaxed peek: while the client does not ring, the line stays shared
	 * in our cache and costs no coherence traffic. The exchange below does
	 * the ordering. */
	if (atomic_load_explicit(SHM_A64(&rd->db->summary), memory_order_relaxed) == 0)
		return false;
	/* summary: worker exchanges, client ORs. Acquire pairs with the client's
	 * release OR; release orders this exchange before our word exchanges,
	 * which is what the no-lost-doorbell argument above needs. */
	s = atomic_exchange_explicit(SHM_A64(&rd->db->summary), 0, memory_order_acq_rel);
	rd->harvests++;
	while (s != 0) {
		w = (uint32_t)__builtin_ctzll(s);
		s &= s - 1;
		/* words[w]: worker exchanges, client ORs. Acquire: the SQ
		 * producer indices published before the ORs we read are visible
		 * to the ring loads that follow. Release: see ring(). */
		bits = atomic_exchange_explicit(SHM_A64(&rd->db->words[w]), 0,
						memory_order_acq_rel);
		if (bits == 0) {
			rd->spurious++;
			continue;
		}
		bad = bits & ~valid_mask(rd, w);
		if (bad != 0) {
			rd->bad_slot += (uint64_t)__builtin_popcountll(bad);
			bits &= ~bad;
		}
		if (bits != 0) {
			rd->pending[w] |= bits;
			rd->pending_summary |= 1ull << w;
		}
	}
	return rd->pending_summary != 0;
}

int
uroce_shm_db_next(struct uroce_shm_db_reader *rd)
{
	uint32_t w, b;

	if (rd->pending_summary == 0 && !harvest(rd))
		return -EAGAIN;
	w = (uint32_t)__builtin_ctzll(rd->pending_summary);
	b = (uint32_t)__builtin_ctzll(rd->pending[w]);
	rd->pending[w] &= rd->pending[w] - 1;
	if (rd->pending[w] == 0)
		rd->pending_summary &= ~(1ull << w);
	return (int)(w * 64 + b);
}

void
uroce_shm_db_requeue(struct uroce_shm_db_reader *rd, uint32_t slot)
{
	if (slot >= rd->nslots) {
		rd->bad_slot++;
		return;
	}
	rd->pending[slot >> 6] |= 1ull << (slot & 63);
	rd->pending_summary |= 1ull << (slot >> 6);
}
