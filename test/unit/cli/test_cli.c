/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* lib/cli: number syntax, the messages and exit statuses of the conventions. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include "uroce_version.h"
#include "uroce_cli.h"

Test(cli, plain_numbers)
{
	uint64_t v;

	/* Expect: decimal and 0x hexadecimal; no suffix, sign or blank. */
	cr_assert_eq(cli_parse_u64("0", CLI_PLAIN, 10, &v), 0);
	cr_assert_eq(v, 0);
	cr_assert_eq(cli_parse_u64("4791", CLI_PLAIN, 65535, &v), 0);
	cr_assert_eq(v, 4791);
	cr_assert_eq(cli_parse_u64("0x11", CLI_PLAIN, 0xffffff, &v), 0);
	cr_assert_eq(v, 17);
	cr_assert_eq(cli_parse_u64("010", CLI_PLAIN, 100, &v), 0);
	cr_assert_eq(v, 10, "a leading zero is not octal");
	cr_expect_eq(cli_parse_u64("1k", CLI_PLAIN, UINT64_MAX, &v), -EINVAL);
	cr_expect_eq(cli_parse_u64("-1", CLI_PLAIN, UINT64_MAX, &v), -EINVAL);
	cr_expect_eq(cli_parse_u64("+1", CLI_PLAIN, UINT64_MAX, &v), -EINVAL);
	cr_expect_eq(cli_parse_u64(" 1", CLI_PLAIN, UINT64_MAX, &v), -EINVAL);
	cr_expect_eq(cli_parse_u64("1 ", CLI_PLAIN, UINT64_MAX, &v), -EINVAL);
	cr_expect_eq(cli_parse_u64("", CLI_PLAIN, UINT64_MAX, &v), -EINVAL);
	cr_expect_eq(cli_parse_u64("0x", CLI_PLAIN, UINT64_MAX, &v), -EINVAL);
	cr_expect_eq(cli_parse_u64("0xg", CLI_PLAIN, UINT64_MAX, &v), -EINVAL);
	cr_expect_eq(cli_parse_u64(NULL, CLI_PLAIN, UINT64_MAX, &v), -EINVAL);
	/* Expect: above max or overflowing 64 bits is ERANGE, never wrapped. */
	cr_expect_eq(cli_parse_u64("11", CLI_PLAIN, 10, &v), -ERANGE);
	cr_expect_eq(cli_parse_u64("18446744073709551615", CLI_PLAIN, UINT64_MAX, &v), 0);
	cr_expect_eq(v, UINT64_MAX);
	cr_expect_eq(cli_parse_u64("18446744073709551616", CLI_PLAIN, UINT64_MAX, &v),
		     -ERANGE);
	cr_expect_eq(cli_parse_u64("0x10000000000000000", CLI_PLAIN, UINT64_MAX, &v), -ERANGE);
}

Test(cli, counts_and_sizes)
{
	uint64_t v;

	/* Expect: counts scale by 1000, sizes by 1024; hexadecimal is for
	 * plain numbers only. */
	cr_assert_eq(cli_parse_u64("10k", CLI_COUNT, UINT64_MAX, &v), 0);
	cr_assert_eq(v, 10000);
	cr_assert_eq(cli_parse_u64("2M", CLI_COUNT, UINT64_MAX, &v), 0);
	cr_assert_eq(v, 2000000);
	cr_assert_eq(cli_parse_u64("1G", CLI_COUNT, UINT64_MAX, &v), 0);
	cr_assert_eq(v, 1000000000);
	cr_assert_eq(cli_parse_u64("64K", CLI_BYTES, UINT64_MAX, &v), 0);
	cr_assert_eq(v, 65536);
	cr_assert_eq(cli_parse_u64("4k", CLI_BYTES, UINT64_MAX, &v), 0);
	cr_assert_eq(v, 4096);
	cr_assert_eq(cli_parse_u64("1MiB", CLI_BYTES, UINT64_MAX, &v), 0);
	cr_assert_eq(v, 1u << 20);
	cr_assert_eq(cli_parse_u64("3G", CLI_BYTES, UINT64_MAX, &v), 0);
	cr_assert_eq(v, 3ull << 30);
	cr_expect_eq(cli_parse_u64("1KiB", CLI_COUNT, UINT64_MAX, &v), -EINVAL);
	cr_expect_eq(cli_parse_u64("1T", CLI_BYTES, UINT64_MAX, &v), -EINVAL);
	cr_expect_eq(cli_parse_u64("0x40", CLI_BYTES, UINT64_MAX, &v), -EINVAL);
	cr_expect_eq(cli_parse_u64("1.5K", CLI_BYTES, UINT64_MAX, &v), -EINVAL);
	cr_expect_eq(cli_parse_u64("K", CLI_BYTES, UINT64_MAX, &v), -EINVAL);
	/* Expect: the suffix counts toward the maximum. */
	cr_expect_eq(cli_parse_u64("8K", CLI_BYTES, 8192, &v), 0);
	cr_expect_eq(cli_parse_u64("9K", CLI_BYTES, 8192, &v), -ERANGE);
	cr_expect_eq(cli_parse_u64("20000000000G", CLI_BYTES, UINT64_MAX, &v), -ERANGE);
}

static void
usage(FILE *out)
{
	fputs("usage: prog [options]\n", out);
}

static void
init(void)
{
	cli_init("prog", usage);
}

Test(cli, num_reports_errors, .init = init)
{
	char buf[256] = "";
	uint64_t v = 7;
	FILE *err;

	/* Expect: cli_num() names the option and the value and returns -1. */
	err = freopen("/dev/null", "w", stderr);
	cr_assert_not_null(err);
	setvbuf(stderr, buf, _IOFBF, sizeof(buf));
	cr_expect_eq(cli_num("-n", "12x", CLI_COUNT, 1, 100, &v), -1);
	cr_expect(strstr(buf, "prog: -n: '12x' is not a number") != NULL, "%s", buf);
	fflush(stderr);    /* the next message starts at buf[0] again */
	memset(buf, 0, sizeof(buf));
	cr_expect_eq(cli_num("-n", "1k", CLI_COUNT, 1, 100, &v), -1);
	cr_expect(strstr(buf, "prog: -n: '1k' is out of range 1..100") != NULL, "%s", buf);
	cr_expect_eq(cli_num("-n", "0", CLI_COUNT, 1, 100, &v), -1);
	cr_expect_eq(cli_num("-n", "100", CLI_COUNT, 1, 100, &v), 0);
	cr_expect_eq(v, 100);
}

/* Run @p fn in a child with stdout on a pipe: its output and exit status. */
static int
child_output(void (*fn)(void), char *out, size_t cap)
{
	int p[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	cr_assert_eq(pipe(p), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		fn();
		_exit(99);
	}
	close(p[1]);
	while ((n = read(p[0], out + got, cap - 1 - (size_t)got)) > 0)
		got += n;
	out[got] = '\0';
	close(p[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

Test(cli, version_line, .init = init)
{
	char want[64], out[256];

	/* Expect: "PROG (uroce) VERSION", the form help2man reads, with
	 * meson's project version, and exit 0. */
	snprintf(want, sizeof(want), "prog (uroce) %s\n", UROCE_VERSION);
	cr_expect_eq(child_output(cli_version, out, sizeof(out)), 0);
	cr_expect_str_eq(out, want);
	cr_expect_str_eq(cli_version_string, UROCE_VERSION);
}

Test(cli, help_prints_usage_on_stdout, .init = init)
{
	char out[256];

	/* Expect: --help is the usage on stdout and exit 0. */
	cr_expect_eq(child_output(cli_help, out, sizeof(out)), 0);
	cr_expect_str_eq(out, "usage: prog [options]\n");
}

Test(cli, usage_error_exits_two, .init = init, .exit_code = 2)
{
	cr_redirect_stderr();
	cli_usage_error("bad %s", "thing");
}

Test(cli, die_exits_one, .init = init, .exit_code = 1)
{
	cr_redirect_stderr();
	cli_die("broken");
}

Test(cli, num_or_exit_is_a_usage_error, .init = init, .exit_code = 2)
{
	cr_redirect_stderr();
	cli_num_or_exit("-s", "big", CLI_BYTES, 1, 10);
}
