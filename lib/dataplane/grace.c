/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Grace periods (grace.h) and the munmap() that waits for them. The process
 * keeps a list of registered domains; munmap() from any thread that is not a
 * reader waits for a grace period of each, then unmaps through the next
 * definition in the lookup order (the C library's, or a sanitizer's
 * interceptor). With no domain registered it only forwards.
 */

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "grace.h"

typedef int (*munmap_fn)(void *addr, size_t len);

static munmap_fn next_munmap;
static pthread_mutex_t domains_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dp_grace *domains;
static __thread bool thread_is_reader;
static uint64_t unmaps_waited;

/* Looked up before main(), not inside munmap(): dlsym() may itself unmap. */
__attribute__((constructor)) static void
grace_init(void)
{
	next_munmap = (munmap_fn)dlsym(RTLD_NEXT, "munmap");
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

unsigned int
dp_grace_wait(struct dp_grace *g)
{
	uint64_t target, v, t0 = 0, warned_s = 0, s;
	unsigned int i, waited = 0, spins;

	target = __atomic_add_fetch(&g->epoch, 1, __ATOMIC_SEQ_CST);
	/* Pairs with dp_grace_online(): what this thread wrote before (the
	 * PMD's cleared flag) is seen by a reader we find offline. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i < g->n_readers; i++) {
		spins = 0;
		for (;;) {
			v = __atomic_load_n(g->qs[i], __ATOMIC_ACQUIRE);
			if (v == DP_GRACE_OFFLINE || v >= target)
				break;
			if (spins++ == 0) {
				waited++;
				if (t0 == 0)
					t0 = mono_ns();
			}
			/* A loop takes microseconds; a descheduled worker longer. */
			if (spins < 64) {
				sched_yield();
				continue;
			}
			usleep(50);
			/* Waiting is right (the worker is inside a burst on the
			 * memory); a worker stuck for seconds is worth a line. */
			s = (mono_ns() - t0) / 1000000000u;
			if (s > warned_s) {
				warned_s = s;
				fprintf(stderr, "uroce: an unmap has waited %lu s for worker %u to "
					"leave its RX/TX burst\n", (unsigned long)s, i);
			}
		}
	}
	return waited;
}

void
dp_grace_register(struct dp_grace *g)
{
	pthread_mutex_lock(&domains_lock);
	g->next = domains;
	__atomic_store_n(&domains, g, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&domains_lock);
}

void
dp_grace_unregister(struct dp_grace *g)
{
	struct dp_grace **pp;

	pthread_mutex_lock(&domains_lock);
	for (pp = &domains; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == g) {
			__atomic_store_n(pp, g->next, __ATOMIC_RELEASE);
			break;
		}
	}
	g->next = NULL;
	pthread_mutex_unlock(&domains_lock);
}

void
dp_grace_thread_is_reader(bool reader)
{
	thread_is_reader = reader;
}

uint64_t
dp_grace_unmaps_waited(void)
{
	return __atomic_load_n(&unmaps_waited, __ATOMIC_RELAXED);
}

/*
 * munmap() for the whole process (uroced exports it, so PMD plugins bind
 * here): a PMD's control path that unmaps rings in use waits for the
 * workers first (grace.h). A reader's own unmaps never wait for itself.
 */
int
munmap(void *addr, size_t len)
{
	struct dp_grace *g;

	if (__atomic_load_n(&domains, __ATOMIC_ACQUIRE) != NULL && !thread_is_reader) {
		pthread_mutex_lock(&domains_lock);
		for (g = domains; g != NULL; g = g->next)
			if (dp_grace_wait(g) != 0)
				__atomic_fetch_add(&unmaps_waited, 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&domains_lock);
	}
	if (next_munmap != NULL)
		return next_munmap(addr, len);
	return (int)syscall(SYS_munmap, addr, len);
}
