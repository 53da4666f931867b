/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * Shared definitions of the uroce-ctl program: the subcommand entry points
 * that main.c dispatches to, and the exit codes every subcommand uses.
 * A subcommand is a function taking the arguments from its own name on
 * (argv[0] is "decode", for example) and returning the process exit code.
 */

#ifndef UROCE_CTL_H
#define UROCE_CTL_H

/** Success (for --diff: the captures agree). */
#define CTL_EXIT_OK 0
/** The command ran but found a problem (--strict: an invalid packet; --diff: a difference). */
#define CTL_EXIT_FOUND 1
/** Usage error, unreadable input, or a runtime failure. */
#define CTL_EXIT_ERROR 2
/** Daemon subcommands: no uroced could be reached at the socket path. */
#define CTL_EXIT_NO_DAEMON 1

/** `uroce-ctl decode ...`: see doc/uroce-ctl.md. */
int ctl_decode_main(int argc, char **argv);

/* Subcommands that ask a running uroced (show.c; doc/uroce-ctl.md). */
int ctl_devices_main(int argc, char **argv);
int ctl_gids_main(int argc, char **argv);
int ctl_qps_main(int argc, char **argv);
int ctl_workers_main(int argc, char **argv);
int ctl_clients_main(int argc, char **argv);
int ctl_counters_main(int argc, char **argv);

/** `uroce-ctl template ...`: a pcap for `uroce-perf sink` (template.c, doc/loadgen.md). */
int ctl_template_main(int argc, char **argv);

/** `uroce-ctl gen ...`: the lcore load generator (cmd_gen.c, doc/loadgen.md). */
int ctl_gen_main(int argc, char **argv);

/** wait.c: until a daemon serves clients. */
int ctl_wait_main(int argc, char **argv);

/** Print @p fmt to stderr prefixed with "uroce-ctl: ". */
void ctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* UROCE_CTL_H */
