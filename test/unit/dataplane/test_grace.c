/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * lib/dataplane/grace.c: grace periods between readers (the workers) and a
 * thread that unmaps what they read, through the munmap() the dataplane
 * defines. The reader threads play memif's data path: check a "connected"
 * flag, then read the ring for a while; the other thread plays
 * memif_disconnect(): clear the flag, then munmap() the ring at once.
 */

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "grace.h"

#define READERS 2
#define RING_BYTES 4096

struct ring_state {
	struct dp_grace grace;
	uint64_t qs[READERS];
	uint64_t *volatile ring;       /* NULL: not connected */
	volatile bool stop;
	volatile bool sleepy;          /* readers go offline between bursts */
	uint64_t bursts[READERS];
	uint64_t sum[READERS];
};

struct reader_arg {
	struct ring_state *st;
	unsigned int idx;
};

static void *
reader(void *arg)
{
	struct reader_arg *ra = arg;
	struct ring_state *st = ra->st;
	uint64_t *qs = &st->qs[ra->idx], *ring, s = 0;
	unsigned int i;

	dp_grace_thread_is_reader(true);
	dp_grace_online(&st->grace, qs);
	while (!st->stop) {
		dp_grace_quiescent(&st->grace, qs);
		ring = st->ring;
		if (ring == NULL)
			continue;
		/* A burst: long enough that the unmapper catches us inside. */
		for (i = 0; i < RING_BYTES / sizeof(uint64_t); i++)
			s += ((volatile uint64_t *)ring)[i];
		sched_yield();
		for (i = 0; i < RING_BYTES / sizeof(uint64_t); i++)
			s += ((volatile uint64_t *)ring)[i];
		st->bursts[ra->idx]++;
		if (st->sleepy && (st->bursts[ra->idx] & 7) == 0) {
			dp_grace_offline(qs);
			usleep(20);
			dp_grace_online(&st->grace, qs);
		}
	}
	st->sum[ra->idx] = s;
	dp_grace_offline(qs);
	return NULL;
}

static void
run_disconnects(struct ring_state *st, unsigned int rounds)
{
	struct reader_arg ra[READERS];
	pthread_t th[READERS];
	uint64_t *ring, seen;
	unsigned int i, r;

	st->grace.n_readers = READERS;
	for (i = 0; i < READERS; i++) {
		st->qs[i] = DP_GRACE_OFFLINE;
		st->grace.qs[i] = &st->qs[i];
		ra[i].st = st;
		ra[i].idx = i;
	}
	dp_grace_register(&st->grace);
	for (i = 0; i < READERS; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, reader, &ra[i]), 0);
	for (r = 0; r < rounds; r++) {
		ring = mmap(NULL, RING_BYTES, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		cr_assert_neq(ring, MAP_FAILED);
		ring[0] = r;
		seen = st->bursts[0] + st->bursts[1];
		st->ring = ring; /* connected */
		/* Let the readers into their bursts on this ring. */
		while (st->bursts[0] + st->bursts[1] < seen + 2)
			sched_yield();
		/* Disconnected: the flag first, then the ring, with no pause. */
		st->ring = NULL;
		cr_assert_eq(munmap(ring, RING_BYTES), 0);
	}
	st->stop = true;
	for (i = 0; i < READERS; i++)
		pthread_join(th[i], NULL);
	dp_grace_unregister(&st->grace);
}

/* Without the wait in munmap() a reader faults within a few rounds. */
Test(grace, unmap_waits_for_readers_in_a_burst)
{
	static struct ring_state st;
	uint64_t before = dp_grace_unmaps_waited();

	run_disconnects(&st, 2000);
	cr_assert_gt(st.bursts[0] + st.bursts[1], 4000u);
	/* Readers were caught inside their bursts, and waited for. */
	cr_assert_gt(dp_grace_unmaps_waited(), before);
}

/* Readers that sleep between bursts (offline, then online with a fence). */
Test(grace, readers_going_offline_and_back)
{
	static struct ring_state st;

	st.sleepy = true;
	run_disconnects(&st, 1000);
	cr_assert_gt(st.bursts[0] + st.bursts[1], 2000u);
}

Test(grace, offline_readers_are_not_waited_for)
{
	static struct ring_state st;

	st.grace.n_readers = READERS;
	st.qs[0] = DP_GRACE_OFFLINE;
	st.qs[1] = DP_GRACE_OFFLINE;
	st.grace.qs[0] = &st.qs[0];
	st.grace.qs[1] = &st.qs[1];
	cr_assert_eq(dp_grace_wait(&st.grace), 0u);
	cr_assert_eq(st.grace.epoch, 1u);
	/* One that has seen the new epoch already holds nothing of before. */
	st.qs[1] = 2;
	cr_assert_eq(dp_grace_wait(&st.grace), 0u);
}

static void *
late_reader(void *arg)
{
	struct ring_state *st = arg;

	usleep(20000);
	dp_grace_quiescent(&st->grace, &st->qs[0]);
	return NULL;
}

Test(grace, an_online_reader_is_waited_for_until_its_next_quiescent_state)
{
	static struct ring_state st;
	pthread_t th;

	st.grace.n_readers = 1;
	st.grace.qs[0] = &st.qs[0];
	dp_grace_online(&st.grace, &st.qs[0]); /* epoch 0: inside a burst */
	cr_assert_eq(pthread_create(&th, NULL, late_reader, &st), 0);
	cr_assert_eq(dp_grace_wait(&st.grace), 1u);
	cr_assert_eq(st.qs[0], 1u);
	pthread_join(th, NULL);
}

/* A reader's own unmap never waits (it would wait for itself), and with no
 * domain registered munmap() only forwards. */
Test(grace, a_readers_own_unmap_does_not_wait)
{
	static struct ring_state st;
	void *p;

	st.grace.n_readers = 1;
	st.grace.qs[0] = &st.qs[0];
	dp_grace_online(&st.grace, &st.qs[0]);
	dp_grace_register(&st.grace);
	dp_grace_thread_is_reader(true);
	p = mmap(NULL, RING_BYTES, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(p, MAP_FAILED);
	cr_assert_eq(munmap(p, RING_BYTES), 0);
	cr_assert_eq(st.grace.epoch, 0u);
	dp_grace_thread_is_reader(false);
	dp_grace_unregister(&st.grace);
	p = mmap(NULL, RING_BYTES, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(p, MAP_FAILED);
	cr_assert_eq(munmap(p, RING_BYTES), 0);
	cr_assert_eq(st.grace.epoch, 0u);
}
