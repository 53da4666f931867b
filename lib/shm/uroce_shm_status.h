/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The daemon's status segment (shm ABI 1.5): one page the daemon writes and
 * every client maps read-only (GET_STATUS passes its memfd, sealed against
 * any new writable mapping). It says two things a client cannot learn
 * otherwise without a system call:
 *
 *  - whether the daemon still makes progress: the control thread stores the
 *    time (CLOCK_MONOTONIC, ms) at least every heartbeat_period_ms, so a
 *    client tells a stopped or starved daemon from a slow one and gives up
 *    after a bound of its own (UROCE_DAEMON_TIMEOUT_MS);
 *  - whether a worker sleeps: an idle worker (idle_sleep_us) announces it in
 *    its futex word before it sleeps, and whoever gives it work afterwards (a
 *    client ringing a doorbell, the control thread, another worker) wakes it
 *    with FUTEX_WAKE. A busy worker never sleeps, and then a doorbell costs
 *    one more load of a line nobody writes.
 *
 * No lost wake-up: the worker stores sleeping = 1, then looks for work
 * (doorbells, mailbox, rings); a waker publishes its work, then loads
 * sleeping. Both pairs are sequentially consistent, so at least one of them
 * sees the other's store.
 */

#ifndef UROCE_SHM_STATUS_H
#define UROCE_SHM_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "uroce_shm_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/** First word of the segment. */
#define UROCE_SHM_STATUS_MAGIC 0x55525354u /* "URST" */
/** Workers the segment has room for. */
#define UROCE_SHM_STATUS_WORKERS 16u
/** Bytes of the segment (one page). */
#define UROCE_SHM_STATUS_SIZE 4096u

/** One worker's line. */
struct uroce_shm_worker_status {
	/** Futex word: 1 while the worker sleeps or is about to (the worker
	 * writes it; anyone who gives the worker work reads it and wakes). */
	uint32_t sleeping;
	uint32_t reserved0;
	uint64_t reserved[7];
};
UROCE_SHM_SIZE(struct uroce_shm_worker_status, 64);

struct uroce_shm_status {
	uint32_t magic;                 /**< UROCE_SHM_STATUS_MAGIC */
	uint16_t n_workers;             /**< worker[] entries in use */
	uint16_t reserved0;
	uint32_t heartbeat_period_ms;   /**< heartbeat_ms advances at least this often */
	uint32_t reserved1;
	/** CLOCK_MONOTONIC in ms, stored by the control thread (0: none yet). */
	uint64_t heartbeat_ms;
	uint64_t reserved2[5];
	struct uroce_shm_worker_status worker[UROCE_SHM_STATUS_WORKERS];
	uint8_t reserved3[UROCE_SHM_STATUS_SIZE - 64 - 64 * UROCE_SHM_STATUS_WORKERS];
};
UROCE_SHM_OFF(struct uroce_shm_status, heartbeat_ms, 16);
UROCE_SHM_OFF(struct uroce_shm_status, worker, 64);
UROCE_SHM_SIZE(struct uroce_shm_status, UROCE_SHM_STATUS_SIZE);

/** GET_STATUS response (its memfd passed with it). */
struct uroce_shm_msg_get_status_resp {
	uint32_t size;                  /**< bytes to map: UROCE_SHM_STATUS_SIZE */
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_get_status_resp, 8);

/** CLOCK_MONOTONIC in ms, the heartbeat's clock. */
uint64_t uroce_shm_now_ms(void);

/**
 * Map a status segment read-only and check it.
 * @return the mapping, or NULL (errno: EINVAL for a bad segment, or mmap's).
 */
const struct uroce_shm_status *uroce_shm_status_map(int fd, uint32_t size);

/** Unmap what uroce_shm_status_map() returned (NULL is fine). */
void uroce_shm_status_unmap(const struct uroce_shm_status *st);

/**
 * The daemon made progress within @p timeout_ms: its heartbeat is that
 * recent. A segment with no heartbeat yet counts as alive.
 */
bool uroce_shm_status_alive(const struct uroce_shm_status *st, uint64_t timeout_ms);

/** FUTEX_WAKE of @p worker's word (uroce_shm_status_wake()). */
void uroce_shm_status_wake_slow(const struct uroce_shm_status *st, unsigned int worker);

/**
 * Waker side: after publishing work for worker @p worker (a doorbell, a
 * command, a frame), wake it if it sleeps. A load when it does not. The
 * store that published the work must be seq_cst (uroce_shm_db_ring()'s
 * locked OR is), or be followed by a seq_cst fence.
 */
static inline void
uroce_shm_status_wake(const struct uroce_shm_status *st, unsigned int worker)
{
	if (st != NULL && worker < UROCE_SHM_STATUS_WORKERS &&
	    __atomic_load_n(&st->worker[worker].sleeping, __ATOMIC_SEQ_CST) != 0)
		uroce_shm_status_wake_slow(st, worker);
}

/**
 * Worker side: announce a sleep (sleeping = 1). Then look for work once more;
 * sleep with uroce_shm_status_sleep() only if there is none; end with
 * uroce_shm_status_awake() either way.
 */
void uroce_shm_status_sleep_begin(struct uroce_shm_status *st, unsigned int worker);
/** Sleep until woken or @p us pass (a spurious return is harmless). */
void uroce_shm_status_sleep(struct uroce_shm_status *st, unsigned int worker, uint64_t us);
/** The worker runs again: sleeping = 0. */
void uroce_shm_status_awake(struct uroce_shm_status *st, unsigned int worker);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_SHM_STATUS_H */
