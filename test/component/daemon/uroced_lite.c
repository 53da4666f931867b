/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * uroced_lite: a TEST TOOL, not the daemon. It runs lib/daemon's core
 * without DPDK on a UNIX socket, so that liburoce programs (examples,
 * uroce-perf, test/component/daemon/daemon_client) run on any machine.
 *
 *   uroced_lite SOCKET_PATH [MODE_OCTAL]
 *       one daemon core, loopback port only (GID ::ffff:198.18.0.1): every
 *       packet goes back into the same transport engine.
 *   uroced_lite --pair SOCKET_A SOCKET_B
 *       two daemon cores, GIDs ::ffff:198.18.0.1 (A) and ::ffff:198.18.0.2
 *       (B), joined by the simulated wire of test/common/simwire_daemon.c
 *       (no loss), so that a client of A and a client of B do RDMA to each
 *       other as over two hosts' NICs. UROCED_LITE_DROP_PPM, _DUP_PPM,
 *       _REORDER_PPM and _SEED (environment) put faults on that wire, as
 *       uroced's fault_* keys do (test_soak.sh's failures replay here).
 *
 * Environment (one daemon core): UROCED_LITE_WORKERS=N gives it N workers
 * (QPs placed round robin, so the two QPs of a pair loop back across
 * workers); UROCED_LITE_THREADS=1 runs it as uroced does, the control plane
 * on the main thread (epoll) and each worker on a thread of its own.
 *
 * UROCED_LITE_DEBUG=1 logs at debug level on stderr (e.g. every CM MAD).
 *
 * SIGINT or SIGTERM stops it cleanly. --help and --version answer and exit;
 * any other argument starting with '-' is refused (a socket path is never
 * taken from an option).
 */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uroce_cli.h"
#include "uroce_daemon.h"
#include "simwire_daemon.h"

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static const uint8_t gid_of[2][16] = {
	{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 1},
	{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2},
};

/* A number from the environment (@p def if unset or empty); a bad one is a
 * usage error naming the variable. */
static uint64_t
env_num(const char *name, uint64_t def, uint64_t max)
{
	const char *e = getenv(name);
	uint64_t v;

	if (e == NULL || *e == '\0')
		return def;
	if (cli_num(name, e, CLI_COUNT, 0, max, &v) != 0)
		exit(2);
	return v;
}

/* Idle: a short nap keeps latency low without spinning a core. */
static void
nap(void)
{
	struct timespec ts = {.tv_nsec = 20000};

	nanosleep(&ts, NULL);
}

static int
run_pair(const char *path_a, const char *path_b)
{
	const char *path[2] = {path_a, path_b};
	struct simwire_daemon_conf wc = {.seed = 1};
	struct uroce_daemon *d[2] = {NULL, NULL};
	struct uroce_daemon_conf conf;
	struct simwire_daemon *w;
	unsigned int work;
	int i, rc = 1;

	wc.drop_ppm = (uint32_t)env_num("UROCED_LITE_DROP_PPM", 0, 1000000);
	wc.dup_ppm = (uint32_t)env_num("UROCED_LITE_DUP_PPM", 0, 1000000);
	wc.reorder_ppm = (uint32_t)env_num("UROCED_LITE_REORDER_PPM", 0, 1000000);
	wc.seed = env_num("UROCED_LITE_SEED", 1, UINT64_MAX);
	w = simwire_daemon_create(&wc);
	if (w == NULL) {
		fprintf(stderr, "uroced_lite: wire: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < 2; i++) {
		memset(&conf, 0, sizeof(conf));
		conf.sock_path = path[i];
		conf.n_gid = 1;
		memcpy(conf.gids[0], gid_of[i], 16);
		conf.port_ops = simwire_daemon_port_ops();
		conf.port_ctx = simwire_daemon_port_ctx(w, i);
		d[i] = uroce_daemon_create(&conf);
		if (d[i] == NULL || simwire_daemon_attach(w, i, d[i], gid_of[i]) != 0) {
			fprintf(stderr, "uroced_lite: %s: %s\n", path[i], strerror(errno));
			goto out;
		}
	}
	printf("uroced_lite: listening on %s and %s (two daemon cores, one wire, test tool)\n",
	       path_a, path_b);
	fflush(stdout);
	while (!stop) {
		work = uroce_daemon_poll(d[0]) + uroce_daemon_poll(d[1]);
		work += simwire_daemon_step(w);
		if (work == 0)
			nap();
	}
	printf("uroced_lite: stopping\n");
	rc = 0;
out:
	for (i = 0; i < 2; i++)
		uroce_daemon_destroy(d[i]);
	simwire_daemon_destroy(w);
	return rc;
}

struct wthread {
	struct uroce_daemon *d;
	unsigned int idx;
	pthread_t tid;
};

static volatile int workers_quit;

/* A worker's thread: its rounds, a nap when idle. */
static void *
worker_main(void *arg)
{
	struct wthread *t = arg;

	while (!workers_quit) {
		if (uroce_daemon_worker_poll(t->d, t->idx) == 0)
			nap();
	}
	return NULL;
}

static int
run_one(const char *path, const char *mode)
{
	struct wthread t[UROCE_DAEMON_MAX_WORKERS];
	struct uroce_daemon_conf conf;
	struct uroce_daemon_stats st;
	struct uroce_daemon *d;
	unsigned int i;

	memset(&conf, 0, sizeof(conf));
	conf.sock_path = path;
	if (mode != NULL) {
		char *end;
		unsigned long m = strtoul(mode, &end, 8);

		if (*mode == '\0' || *end != '\0' || m > 0777)
			cli_usage_error("MODE_OCTAL '%s': expected an octal mode such as 0660", mode);
		conf.sock_mode = (mode_t)m;
	}
	conf.n_workers = (unsigned int)env_num("UROCED_LITE_WORKERS", 1, UROCE_DAEMON_MAX_WORKERS);
	conf.threaded = env_num("UROCED_LITE_THREADS", 0, 1) != 0;
	d = uroce_daemon_create(&conf);
	if (d == NULL) {
		fprintf(stderr, "uroced_lite: %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("uroced_lite: listening on %s (loopback port, %u worker(s)%s, test tool)\n", path,
	       uroce_daemon_worker_count(d), conf.threaded ? " on threads" : "");
	fflush(stdout);
	if (conf.threaded) {
		for (i = 0; i < uroce_daemon_worker_count(d); i++) {
			t[i].d = d;
			t[i].idx = i;
			if (pthread_create(&t[i].tid, NULL, worker_main, &t[i]) != 0) {
				fprintf(stderr, "uroced_lite: pthread_create failed\n");
				return 1;
			}
		}
		while (!stop)
			uroce_daemon_control_poll(d, 10);
		/* Orderly: flushes written while the workers still run. */
		uroce_daemon_quiesce(d);
		workers_quit = 1;
		for (i = 0; i < uroce_daemon_worker_count(d); i++)
			pthread_join(t[i].tid, NULL);
		uroce_daemon_workers_stopped(d);
	}
	while (!stop) {
		if (uroce_daemon_poll(d) == 0)
			nap();
	}
	uroce_daemon_stats(d, &st);
	printf("uroced_lite: stopping; %u sessions, %llu loopback frames, %llu bad\n",
	       st.sessions, (unsigned long long)st.loop_frames, (unsigned long long)st.loop_bad);
	uroce_daemon_destroy(d);
	return 0;
}

static void
usage(FILE *out)
{
	fprintf(out, "usage: uroced_lite SOCKET_PATH [MODE_OCTAL]\n"
		     "       uroced_lite --pair SOCKET_A SOCKET_B\n"
		     "       uroced_lite --help | --version\n"
		     "A test tool: lib/daemon's core without DPDK, on a loopback port (or two\n"
		     "cores joined by a simulated wire with --pair). Environment:\n"
		     "UROCED_LITE_WORKERS, UROCED_LITE_THREADS; with --pair UROCED_LITE_DROP_PPM,\n"
		     "_DUP_PPM, _REORDER_PPM, _SEED. Not uroced: see doc/operations.md.\n");
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	int i;

	cli_init("uroced_lite", usage);
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))
		cli_help();
	if (argc >= 2 && (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0))
		cli_version();
	for (i = argc == 4 && strcmp(argv[1], "--pair") == 0 ? 2 : 1; i < argc; i++)
		if (argv[i][0] == '-')
			cli_usage_error("unknown option '%s'", argv[i]);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (env_num("UROCED_LITE_DEBUG", 0, 1) != 0)
		uroce_log_set(NULL, UROCE_LOG_DEBUG);
	if (argc == 4 && strcmp(argv[1], "--pair") == 0)
		return run_pair(argv[2], argv[3]);
	if (argc == 2 || argc == 3)
		return run_one(argv[1], argc == 3 ? argv[2] : NULL);
	cli_usage_error("expected SOCKET_PATH [MODE_OCTAL] or --pair SOCKET_A SOCKET_B");
}
