/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * uroce-ctl: the command-line tool of uroce. This file only finds the
 * subcommand and hands it the rest of the command line; each subcommand
 * lives in its own file and returns the exit code (see ctl.h). To add one,
 * write its entry point and add a row to ctl_commands[].
 */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "uroce_cli.h"

#include "ctl.h"

struct ctl_command {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *summary;
};

static const struct ctl_command ctl_commands[] = {
	{ "decode", ctl_decode_main, "decode RoCEv2 packets in a pcap/pcapng file as JSON lines" },
	{ "devices", ctl_devices_main, "the daemon's device and ports (ibv_devinfo style)" },
	{ "gids", ctl_gids_main, "the GID table of each port" },
	{ "qps", ctl_qps_main, "QPs: number, type, state, owner, PSNs, path, worker" },
	{ "workers", ctl_workers_main, "workers: QPs, busy share, packets, cycles per packet "
	  "and per message" },
	{ "clients", ctl_clients_main, "client sessions: pid, uid, resources held" },
	{ "counters", ctl_counters_main, "daemon and transport counters (--qp N: one QP)" },
	{ "template", ctl_template_main, "pcap of RoCEv2 frames for a sink, to replay (loadgen)" },
	{ "gen", ctl_gen_main, "run the lcore load generator: RC QPs of one uroced to another's" },
	{ "wait", ctl_wait_main, "wait until a daemon serves clients (for scripts)" },
};

void
ctl_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verr(fmt, ap);
	va_end(ap);
}

static void
usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: uroce-ctl COMMAND [ARGS...]\n"
		     "       uroce-ctl COMMAND --help\n"
		     "       uroce-ctl --version\n\ncommands:\n");
	for (i = 0; i < sizeof(ctl_commands) / sizeof(ctl_commands[0]); i++)
		fprintf(out, "  %-10s %s\n", ctl_commands[i].name, ctl_commands[i].summary);
}

int
main(int argc, char **argv)
{
	size_t i;

	cli_init("uroce-ctl", usage);
	if (argc < 2) {
		usage(stderr);
		return CTL_EXIT_ERROR;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0)
		cli_help();
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0)
		cli_version();
	for (i = 0; i < sizeof(ctl_commands) / sizeof(ctl_commands[0]); i++)
		if (strcmp(argv[1], ctl_commands[i].name) == 0)
			return ctl_commands[i].main(argc - 1, argv + 1);
	ctl_err("unknown command '%s'", argv[1]);
	usage(stderr);
	return CTL_EXIT_ERROR;
}
