/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uroce_version.h"
#include "uroce_cli.h"

const char cli_version_string[] = UROCE_VERSION;

static const char *prog_name = "uroce";
static void (*prog_usage)(FILE *out);

void
cli_init(const char *prog, void (*usage)(FILE *out))
{
	prog_name = prog;
	prog_usage = usage;
}

const char *
cli_prog(void)
{
	return prog_name;
}

void
cli_verr(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void
cli_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verr(fmt, ap);
	va_end(ap);
}

void
cli_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verr(fmt, ap);
	va_end(ap);
	exit(1);
}

void
cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verr(fmt, ap);
	va_end(ap);
	if (prog_usage != NULL)
		prog_usage(stderr);
	exit(2);
}

void
cli_help(void)
{
	if (prog_usage != NULL)
		prog_usage(stdout);
	exit(0);
}

void
cli_version(void)
{
	/* The form help2man reads: "PROGRAM (PACKAGE) VERSION". */
	printf("%s (uroce) %s\n", prog_name, cli_version_string);
	exit(0);
}

void
cli_getopt_error(int c, char *const argv[])
{
	const char *opt = optind > 0 ? argv[optind - 1] : "?";

	if (c == ':')
		cli_usage_error("option '%s' needs an argument", opt);
	cli_usage_error("unknown option '%s'", opt);
}

struct suffix {
	const char *name;
	uint64_t mult;
};

static const struct suffix count_sfx[] = {
	{"k", 1000}, {"K", 1000}, {"M", 1000000}, {"G", 1000000000}, {NULL, 0},
};

static const struct suffix bytes_sfx[] = {
	{"K", 1ull << 10}, {"k", 1ull << 10}, {"KiB", 1ull << 10},
	{"M", 1ull << 20}, {"MiB", 1ull << 20},
	{"G", 1ull << 30}, {"GiB", 1ull << 30},
	{NULL, 0},
};

static int
hex_value(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int
cli_parse_u64(const char *s, enum cli_unit unit, uint64_t max, uint64_t *v)
{
	const struct suffix *sfx = unit == CLI_COUNT ? count_sfx :
				   unit == CLI_BYTES ? bytes_sfx : NULL;
	unsigned int base = 10;
	const char *p = s;
	uint64_t x = 0, mult = 1;
	int d;

	if (s == NULL || v == NULL)
		return -EINVAL;
	if (unit == CLI_PLAIN && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;    /* ids and keys are often written in hexadecimal */
		p += 2;
	}
	if (hex_value(*p) < 0 || hex_value(*p) >= (int)base)
		return -EINVAL;
	for (; (d = hex_value(*p)) >= 0 && d < (int)base; p++) {
		if (x > (UINT64_MAX - (uint64_t)d) / base)
			return -ERANGE;
		x = x * base + (uint64_t)d;
	}
	if (*p != '\0') {
		for (; sfx != NULL && sfx->name != NULL; sfx++)
			if (strcmp(p, sfx->name) == 0)
				break;
		if (sfx == NULL || sfx->name == NULL)
			return -EINVAL;
		mult = sfx->mult;
	}
	if (x > max / mult)
		return -ERANGE;
	*v = x * mult;
	return 0;
}

int
cli_num(const char *opt, const char *s, enum cli_unit unit, uint64_t min, uint64_t max,
	uint64_t *v)
{
	static const char *const hint[] = {
		[CLI_PLAIN] = "",
		[CLI_COUNT] = " (suffixes k, M, G: powers of 1000)",
		[CLI_BYTES] = " (suffixes K, M, G: powers of 1024)",
	};
	int rc = cli_parse_u64(s, unit, UINT64_MAX, v);

	if (rc == -EINVAL) {
		cli_err("%s: '%s' is not a number%s", opt, s, hint[unit]);
		return -1;
	}
	if (rc != 0 || *v < min || *v > max) {
		cli_err("%s: '%s' is out of range %" PRIu64 "..%" PRIu64, opt, s, min, max);
		return -1;
	}
	return 0;
}

uint64_t
cli_num_or_exit(const char *opt, const char *s, enum cli_unit unit, uint64_t min, uint64_t max)
{
	uint64_t v;

	if (cli_num(opt, s, unit, min, max, &v) != 0) {
		if (prog_usage != NULL)
			prog_usage(stderr);
		exit(2);
	}
	return v;
}
