/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * uroce-ctl wait: block until a daemon serves clients, for scripts that
 * start uroced in the background (`uroced ... &`) and must not race it. Ready
 * means what a client needs: the socket accepts a liburoce session and the
 * daemon answers a port query. It uses liburoce's public API only.
 */

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "uroce_cli.h"
#include "uroce_shm_ctrl.h"
#include "uroce_verbs.h"

#include "ctl.h"

#define WAIT_DEFAULT_S 30
#define WAIT_MAX_S 3600
#define WAIT_POLL_NS 100000000L

static void
wait_usage(FILE *out)
{
	fprintf(out,
		"usage: uroce-ctl wait [-s|--socket PATH] [-t|--timeout SEC]\n"
		"Wait until the daemon on PATH serves clients (its socket takes a liburoce\n"
		"session and it answers a port query), at most SEC seconds (default %d).\n"
		"  -s, --socket PATH   the daemon's socket (default: $UROCE_SOCKET, else %s)\n"
		"  -t, --timeout SEC   give up after SEC seconds, 1..%d\n"
		"  -h, --help          this text\n"
		"Exit: 0 ready, 1 not ready in time (the last error is printed), 2 usage.\n",
		WAIT_DEFAULT_S, UROCE_DEFAULT_SOCKET, WAIT_MAX_S);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One try: 0 when the daemon serves, else -errno of the step that failed. */
static int
try_daemon(const char *path, const char **step)
{
	struct uroce_port_attr pa;
	struct uroce_context *ctx;
	int rc;

	*step = "open_device";
	ctx = uroce_open_device(path);
	if (ctx == NULL)
		return -errno;
	*step = "query_port";
	rc = uroce_query_port(ctx, 1, &pa);
	uroce_close_device(ctx);
	return rc;
}

int
ctl_wait_main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"socket", required_argument, NULL, 's'},
		{"timeout", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const struct timespec nap = {.tv_nsec = WAIT_POLL_NS};
	const char *sock = NULL, *step = "";
	uint64_t timeout = WAIT_DEFAULT_S;
	double end;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:t:h", lopts, NULL)) != -1) {
		switch (c) {
		case 's':
			sock = optarg;
			break;
		case 't':
			if (cli_num("--timeout", optarg, CLI_PLAIN, 1, WAIT_MAX_S, &timeout) != 0)
				return CTL_EXIT_ERROR;
			break;
		case 'h':
			wait_usage(stdout);
			return CTL_EXIT_OK;
		default:
			ctl_err("wait: %s '%s'", c == ':' ? "option needs an argument" :
				"unknown option", argv[optind - 1]);
			wait_usage(stderr);
			return CTL_EXIT_ERROR;
		}
	}
	if (optind != argc) {
		ctl_err("wait: unexpected argument '%s'", argv[optind]);
		wait_usage(stderr);
		return CTL_EXIT_ERROR;
	}
	sock = uroce_shm_socket_path(sock);
	end = now_s() + (double)timeout;
	while ((rc = try_daemon(sock, &step)) != 0 && now_s() < end)
		nanosleep(&nap, NULL);
	if (rc != 0) {
		ctl_err("wait: no daemon serving on %s after %llu s (%s: %s)", sock,
			(unsigned long long)timeout, step, strerror(-rc));
		return CTL_EXIT_NO_DAEMON;
	}
	return CTL_EXIT_OK;
}
