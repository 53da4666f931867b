/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The daemon's status segment (uroce_shm_status.h): heartbeat and the
 * workers' futex words. The futex is a shared one (no FUTEX_PRIVATE_FLAG):
 * the daemon waits on its writable mapping, clients wake through their
 * read-only one; the kernel keys both by the page, not the address.
 */

#include <errno.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "uroce_shm_status.h"

uint64_t
uroce_shm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

const struct uroce_shm_status *
uroce_shm_status_map(int fd, uint32_t size)
{
	const struct uroce_shm_status *st;

	if (fd < 0 || size != UROCE_SHM_STATUS_SIZE) {
		errno = EINVAL;
		return NULL;
	}
	st = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (st == MAP_FAILED)
		return NULL;
	if (st->magic != UROCE_SHM_STATUS_MAGIC || st->n_workers > UROCE_SHM_STATUS_WORKERS) {
		munmap((void *)(uintptr_t)st, size);
		errno = EINVAL;
		return NULL;
	}
	return st;
}

void
uroce_shm_status_unmap(const struct uroce_shm_status *st)
{
	if (st != NULL)
		munmap((void *)(uintptr_t)st, UROCE_SHM_STATUS_SIZE);
}

bool
uroce_shm_status_alive(const struct uroce_shm_status *st, uint64_t timeout_ms)
{
	uint64_t hb = __atomic_load_n(&st->heartbeat_ms, __ATOMIC_RELAXED);
	uint64_t now = uroce_shm_now_ms();

	return hb == 0 || now < hb || now - hb <= timeout_ms;
}

void
uroce_shm_status_wake_slow(const struct uroce_shm_status *st, unsigned int worker)
{
	syscall(SYS_futex, &st->worker[worker].sleeping, FUTEX_WAKE, 1, NULL, NULL, 0);
}

void
uroce_shm_status_sleep_begin(struct uroce_shm_status *st, unsigned int worker)
{
	/* Seq_cst: ordered before the worker's last look for work. */
	__atomic_store_n(&st->worker[worker].sleeping, 1, __ATOMIC_SEQ_CST);
}

void
uroce_shm_status_sleep(struct uroce_shm_status *st, unsigned int worker, uint64_t us)
{
	struct timespec ts = {.tv_sec = (time_t)(us / 1000000u),
			      .tv_nsec = (long)(us % 1000000u) * 1000};

	/* FUTEX_WAIT sleeps only while the word is 1: a wake, the timeout or
	 * a signal ends it. */
	syscall(SYS_futex, &st->worker[worker].sleeping, FUTEX_WAIT, 1, &ts, NULL, 0);
}

void
uroce_shm_status_awake(struct uroce_shm_status *st, unsigned int worker)
{
	__atomic_store_n(&st->worker[worker].sleeping, 0, __ATOMIC_RELAXED);
}
