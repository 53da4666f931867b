/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * uroced_lite: a TEST TOOL, not the daemon. It runs lib/daemon's core with
 * its loopback port (no DPDK, no NIC: every packet goes back into the same
 * transport engine) on a UNIX socket, so that liburoce programs
 * (examples/rc_pingpong, test/component/daemon/daemon_client) can run before
 * uroced is wired to lib/daemon. SIGINT or SIGTERM stops it cleanly.
 *
 *   uroced_lite SOCKET_PATH [MODE_OCTAL]
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uroce_daemon.h"

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int
main(int argc, char **argv)
{
	struct uroce_daemon_conf conf;
	struct uroce_daemon_stats st;
	struct uroce_daemon *d;
	struct sigaction sa;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: uroced_lite SOCKET_PATH [MODE_OCTAL]\n");
		return 2;
	}
	memset(&conf, 0, sizeof(conf));
	conf.sock_path = argv[1];
	if (argc == 3)
		conf.sock_mode = (mode_t)strtoul(argv[2], NULL, 8);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	d = uroce_daemon_create(&conf);
	if (d == NULL) {
		fprintf(stderr, "uroced_lite: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	printf("uroced_lite: listening on %s (loopback port, test tool)\n", argv[1]);
	fflush(stdout);
	while (!stop) {
		if (uroce_daemon_poll(d) == 0) {
			/* Idle: a short nap keeps latency low without spinning a core. */
			struct timespec ts = {.tv_nsec = 20000};

			nanosleep(&ts, NULL);
		}
	}
	uroce_daemon_stats(d, &st);
	printf("uroced_lite: stopping; %u sessions, %llu loopback frames, %llu bad\n",
	       st.sessions, (unsigned long long)st.loop_frames, (unsigned long long)st.loop_bad);
	uroce_daemon_destroy(d);
	return 0;
}
