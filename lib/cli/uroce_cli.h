/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The command-line conventions every uroce program follows, written once:
 * messages are "PROG: what went wrong" on stderr; a usage error prints the
 * message and the usage text on stderr and exits 2; other failures exit 1;
 * --help prints the usage on stdout and --version "PROG (uroce) VERSION",
 * both exiting 0. Numbers are decimal; plain ones (ids, ports, keys) may
 * be 0x hexadecimal instead, counts may carry a suffix k, M, G (powers of
 * 1000) and sizes in bytes K, M, G (powers of 1024; KiB, MiB, GiB too), as
 * lib/loadgen's specs read them. No DPDK, libc only; internal to
 * the programs (not in liburoce, not installed).
 */

#ifndef UROCE_CLI_H
#define UROCE_CLI_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a number counts: it decides which suffixes are accepted. */
enum cli_unit {
	CLI_PLAIN,  /**< no suffix, decimal or 0x hexadecimal: ids, ports, indexes */
	CLI_COUNT,  /**< k, M, G: 10^3, 10^6, 10^9 */
	CLI_BYTES,  /**< K, M, G (or KiB, MiB, GiB): 2^10, 2^20, 2^30 */
};

/** The project version, as meson's project() gives it. */
extern const char cli_version_string[];

/**
 * Name the program (for every message) and its usage printer (for --help
 * and usage errors; NULL: none). Call first thing in main().
 */
void cli_init(const char *prog, void (*usage)(FILE *out));

/** The name given to cli_init(). */
const char *cli_prog(void);

/** "PROG: message" on stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_verr(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/** cli_err(), then exit 1. */
void cli_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/** cli_err(), the usage on stderr, then exit 2. */
void cli_usage_error(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/** The usage on stdout, exit 0 (--help). */
void cli_help(void) __attribute__((noreturn));

/** "PROG (uroce) VERSION" on stdout, exit 0 (--version). */
void cli_version(void) __attribute__((noreturn));

/**
 * getopt_long() returned ':' (missing argument, with a leading ':' in the
 * option string) or '?' (unknown option; opterr = 0): a usage error naming
 * the option.
 */
void cli_getopt_error(int c, char *const argv[]) __attribute__((noreturn));

/**
 * Parse @p s as a number of @p unit, at most @p max. Prints nothing.
 * @return 0, -EINVAL (empty, a sign, a stray character or a suffix the unit
 *   does not take) or -ERANGE (above @p max or overflowing).
 */
int cli_parse_u64(const char *s, enum cli_unit unit, uint64_t max, uint64_t *v);

/**
 * cli_parse_u64() for option @p opt (as the user wrote it, e.g. "-s"), in
 * [@p min, @p max]. On an error prints "PROG: OPT: 'S' is not a number" or
 * "... is out of range MIN..MAX" and returns -1, else 0.
 */
int cli_num(const char *opt, const char *s, enum cli_unit unit, uint64_t min, uint64_t max,
	    uint64_t *v);

/** cli_num(), or a usage error (exit 2). */
uint64_t cli_num_or_exit(const char *opt, const char *s, enum cli_unit unit, uint64_t min,
			 uint64_t max);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_CLI_H */
