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
 *
 * Only completions added after the arm raise its event (IBA 11.4.2.2): an
 * application that arms before it polls (perftest's event mode: one event,
 * one poll) must not get a second event for a CQE it is about to take. After
 * each check the daemon stores cq_judged = prod; the client only considers
 * CQEs at or past cq_judged. A CQE below it was checked while the CQ was not
 * armed, so it was there before the arm. One past it may be being checked
 * right now, and either side may claim it, once.
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
	uint32_t cons = cq->head, prod, judged, i;
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
	/* cq_judged: daemon-written; used only when it lies in [cons, prod]
	 * (so an old daemon that leaves it 0 gets the whole unpolled range). */
	judged = atomic_load_explicit(SHM_A32(&cq->hdr->cq_judged), memory_order_acquire);
	if (judged - cons <= prod - cons)
		cons = judged;
	if (prod == cons)
		return 0;
	for (i = 0; !fire && i < prod - cons; i++)
		fire = cqe_qualifies(uroce_shm_ring_cons_slot(cq, cons - cq->head + i));
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

/* Does @p word (as loaded) ask for an event for what we just published? */
static bool
armed_for(struct uroce_shm_ring *cq, uint64_t word, bool qualifies)
{
	uint32_t mode = SHM_ARM_MODE(word), dist;

	if (mode == UROCE_SHM_CQ_DISARMED)
		return false;
	if (mode != UROCE_SHM_CQ_ARM_NEXT && mode != UROCE_SHM_CQ_ARM_SOLICITED) {
		cq->bad_arm++;
		return false;
	}
	if (mode == UROCE_SHM_CQ_ARM_SOLICITED && !qualifies)
		return false;
	/* Something must lie past the consumer index the client armed at, and
	 * that index must be one the client could have had: it armed with at
	 * most size CQEs unpolled, and at most size more can have come since
	 * (it polls after arming; the first new one disarms). */
	dist = cq->head - SHM_ARM_CONS(word);
	if (dist == 0)
		return false;
	if (dist > 2 * cq->size) {
		cq->bad_arm++;
		return false;
	}
	return true;
}

/* A client re-arming over and over can only delay its own event. */
#define ARM_CLAIM_TRIES 4

bool
uroce_shm_cq_should_signal(struct uroce_shm_ring *cq, bool qualifies)
{
	_Atomic uint64_t *arm = SHM_A64(&cq->hdr->cq_arm);
	bool fire = false;
	uint64_t word;
	unsigned int tries;

	if (cq->role != UROCE_SHM_RING_PRODUCER || cq->corrupt)
		return false;
	/* Our half of the store-buffering pattern: the release store of prod
	 * (in the commit) is ordered before the load of the arm word. */
	atomic_thread_fence(memory_order_seq_cst);
	/* cq_arm: client-written, untrusted. It only decides whether this
	 * client's own eventfd is written, so a bad value harms no one else. */
	word = atomic_load_explicit(arm, memory_order_acquire);
	for (tries = 0; tries < ARM_CLAIM_TRIES && armed_for(cq, word, qualifies); tries++) {
		/* Disarm by CAS. It fails if the client claimed the event (the
		 * word is disarmed now) or armed again (the CQEs came while it
		 * was armed, so they still raise one event): look again. */
		if (atomic_compare_exchange_strong_explicit(arm, &word, word & ~(0xffull << 32),
							    memory_order_acq_rel,
							    memory_order_acquire)) {
			fire = true;
			break;
		}
	}
	/* Checked, after the last load of the arm word: a client that sees this
	 * store and finds the arm word still set knows those loads missed it,
	 * so the CQEs below came before its arm. */
	atomic_store_explicit(SHM_A32(&cq->hdr->cq_judged), cq->head, memory_order_release);
	return fire;
}

bool
uroce_shm_cq_peek_armed(struct uroce_shm_ring *cq, bool qualifies)
{
	bool armed;

	if (cq->role != UROCE_SHM_RING_PRODUCER || cq->corrupt)
		return false;
	/* The same half of the store-buffering pattern as above, without the
	 * claim: the caller claims later (CQ moderation), with
	 * uroce_shm_cq_should_signal(). A client arming after the store below
	 * does not count these CQEs as its own, as above. */
	atomic_thread_fence(memory_order_seq_cst);
	armed = armed_for(cq, atomic_load_explicit(SHM_A64(&cq->hdr->cq_arm),
						   memory_order_acquire), qualifies);
	atomic_store_explicit(SHM_A32(&cq->hdr->cq_judged), cq->head, memory_order_release);
	return armed;
}
