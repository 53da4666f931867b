/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Benchmark (suite 'perf'): the cross-core cache-line round trip, the floor
 * under anything two cores hand each other (a client's doorbell and the
 * worker's completion are one such round trip each way). Two threads pinned
 * to two CPUs bounce one 64-byte line: each waits for the other's value and
 * answers with the next. Prints the mean round trip of the best of five runs.
 *
 * usage: bench_xcore [CPU_A CPU_B [ROUNDS]]   (defaults 0 1 1000000)
 * Exits 77 (skip) when fewer than two CPUs are usable.
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct line {
	_Alignas(64) volatile uint64_t v;
};

static struct line ball;
static unsigned long rounds = 1000000;
static int cpu_b = 1;

static int
pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

/* The far side: answers each odd value with the next even one. */
static void *
far_side(void *arg)
{
	unsigned long i;

	(void)arg;
	if (pin(cpu_b) != 0)
		return (void *)1;
	for (i = 0; i < rounds; i++) {
		uint64_t want = 2 * i + 1;

		while (__atomic_load_n(&ball.v, __ATOMIC_ACQUIRE) != want)
			__builtin_ia32_pause();
		__atomic_store_n(&ball.v, want + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int
main(int argc, char **argv)
{
	int cpu_a = 0, run;
	double best = 0;

	if (argc >= 3) {
		cpu_a = atoi(argv[1]);
		cpu_b = atoi(argv[2]);
	}
	if (argc >= 4)
		rounds = strtoul(argv[3], NULL, 0);
	if (rounds == 0 || cpu_a == cpu_b) {
		fprintf(stderr, "usage: bench_xcore [CPU_A CPU_B [ROUNDS]] (two different CPUs)\n");
		return 2;
	}
	if (pin(cpu_a) != 0) {
		fprintf(stderr, "bench_xcore: cannot run on CPU %d: SKIP\n", cpu_a);
		return 77;
	}
	for (run = 0; run < 5; run++) {
		pthread_t t;
		unsigned long i;
		double t0, ns;
		void *ret;

		ball.v = 0;
		if (pthread_create(&t, NULL, far_side, NULL) != 0) {
			fprintf(stderr, "bench_xcore: pthread_create: %s\n", strerror(errno));
			return 1;
		}
		t0 = now_ns();
		for (i = 0; i < rounds; i++) {
			uint64_t mine = 2 * i + 1;

			__atomic_store_n(&ball.v, mine, __ATOMIC_RELEASE);
			while (__atomic_load_n(&ball.v, __ATOMIC_ACQUIRE) != mine + 1)
				__builtin_ia32_pause();
		}
		ns = (now_ns() - t0) / (double)rounds;
		pthread_join(t, &ret);
		if (ret != NULL) {
			fprintf(stderr, "bench_xcore: cannot run on CPU %d: SKIP\n", cpu_b);
			return 77;
		}
		if (best == 0 || ns < best)
			best = ns;
	}
	printf("cross-core cache-line round trip, CPU %d <-> CPU %d: %.1f ns (best of 5 x %lu)\n",
	       cpu_a, cpu_b, best, rounds);
	return 0;
}
