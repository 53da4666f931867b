/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * CQ arming (ibv_req_notify_cq) without a lost wakeup.
 *
 * The arm word lives in line 3 of the CQ ring header. The client stores it
 * (mode, its consumer index, a sequence number); whichever side claims the
 * event clears the mode with a compare-and-swap, so each arm yields exactly
 * one event. The race to close: a CQE published between the client's last
 * poll and its arm. Both sides run the store-buffering pattern with a seq_cst
 * fence between their store and their load:
 *
 *   client: store arm;  fence; load prod  -> CQE already there? claim it
 *   daemon: store prod; fence; load arm   -> armed? claim it
 *
 * With the fences, at least one side sees the other's store, and the CAS
 * makes at most one of them win.
 */

#include <errno.h>

#include <uroce_common.h>

#include "shm_internal.h"

static bool
cqe_qualifies(const struct uroce_shm_cqe *cqe)
{
	/* Solicited-only arming fires on a solicited or an unsuccessful
	 * completion (IBA vol. 1, the Request Completion Notification verb). */
	return cqe->status != UROCE_WC_SUCCESS || (cqe->wc_flags & UROCE_WC_SOLICITED) != 0;
}

int
uroce_shm_cq_arm(struct uroce_shm_ring *cq, bool solicited_only)
{
	_Atomic uint64_t *arm = SHM_A64(&cq->hdr->cq_arm);
	uint32_t mode = solicited_only ? UROCE_SHM_CQ_ARM_SOLICITED : UROCE_SHM_CQ_ARM_NEXT;
	uint32_t cons = cq->head, prod, i;
	uint64_t word, expected;
	bool fire = !solicited_only;

	if (cq->role != UROCE_SHM_RING_CONSUMER || cq->entry_size < sizeof(struct uroce_shm_cqe))
		return -EINVAL;
	if (cq->corrupt)
		return -EIO;
	cq->cq_arm_seq = (cq->cq_arm_seq + 1) & 0xffffffu;
	word = SHM_ARM_WORD(cons, mode, cq->cq_arm_seq);
	/* cq_arm: the client stores, either side clears by CAS. The store and
	 * the fence form our half of the store-buffering pattern above. */
	atomic_store_explicit(arm, word, memory_order_seq_cst);
	atomic_thread_fence(memory_order_seq_cst);
	/* prod: owned by the daemon. Acquire: CQEs it published are readable. */
	prod = atomic_load_explicit(SHM_A32(&cq->hdr->prod), memory_order_acquire);
	if (prod - cons > cq->size) {
		cq->corrupt = 1;
		cq->bad_index++;
		return -EIO;
	}
	if (prod == cons)
		return 0;
	cq->peer = prod;
	for (i = 0; !fire && i < prod - cons; i++)
		fire = cqe_qualifies(uroce_shm_ring_cons_slot(cq, i));
	if (!fire)
		return 0;
	/* Claim the event ourselves unless the daemon already did. acq_rel on
	 * success, nothing to order on failure (the daemon signals). */
	expected = word;
	if (atomic_compare_exchange_strong_explicit(arm, &expected,
						    SHM_ARM_WORD(cons, UROCE_SHM_CQ_DISARMED,
								 cq->cq_arm_seq),
						    memory_order_acq_rel, memory_order_relaxed))
		return 1;
	return 0;
}

bool
uroce_shm_cq_should_signal(struct uroce_shm_ring *cq, bool qualifies)
{
	_Atomic uint64_t *arm = SHM_A64(&cq->hdr->cq_arm);
	uint64_t word;
	uint32_t mode, dist;

	if (cq->role != UROCE_SHM_RING_PRODUCER || cq->corrupt)
		return false;
	/* Our half of the store-buffering pattern: the release store of prod
	 * (in the commit) is ordered before the load of the arm word. */
	atomic_thread_fence(memory_order_seq_cst);
	/* cq_arm: client-written, untrusted. It only decides whether this
	 * client's own eventfd is written, so a bad value harms no one else. */
	word = atomic_load_explicit(arm, memory_order_acquire);
	mode = SHM_ARM_MODE(word);
	if (mode == UROCE_SHM_CQ_DISARMED)
		return false;
	if (mode != UROCE_SHM_CQ_ARM_NEXT && mode != UROCE_SHM_CQ_ARM_SOLICITED) {
		cq->bad_arm++;
		return false;
	}
	if (mode == UROCE_SHM_CQ_ARM_SOLICITED && !qualifies)
		return false;
	/* Something must lie past the consumer index the client armed at, and
	 * that index must be one the client could have had. */
	dist = cq->head - SHM_ARM_CONS(word);
	if (dist == 0)
		return false;
	if (dist > cq->size) {
		cq->bad_arm++;
		return false;
	}
	/* Disarm by CAS: if the client claimed the event or re-armed in between,
	 * the CAS fails and the client's own re-check covers our CQE. */
	return atomic_compare_exchange_strong_explicit(arm, &word,
						       word & ~(0xffull << 32),
						       memory_order_acq_rel,
						       memory_order_relaxed);
}
