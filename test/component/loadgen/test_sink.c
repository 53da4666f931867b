/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Component tests of `uroce-perf sink` (app/uroce-perf/sink.c), no DPDK and
 * no root: each test starts the uroced_lite test tool on a fresh socket, a
 * sink on it, and lg_send (a liburoce client playing a stateless generator:
 * the frames `uroce-ctl template` would make, through the daemon core's
 * loopback). Nothing is lost on the loopback and the sink's receive queues
 * are deeper than a run, so every count is exact: the test checks the
 * summary field by field, and that bad data and bad options are reported.
 * Every process started here is stopped by its PID.
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loadgen_internal.h"

#define N 64            /* messages per QP: below the sink's 256 receive WQEs */
#define SIZE 200        /* bytes per message (not a multiple of 4: pad bytes) */
#define MAX_LIVE 4

static char sock[108], desc_path[128], out_path[128];
static pid_t live[MAX_LIVE];
static unsigned int run_no;

static void
track(pid_t pid)
{
	int i;

	for (i = 0; i < MAX_LIVE; i++)
		if (live[i] == 0) {
			live[i] = pid;
			return;
		}
	cr_assert_fail("too many children");
}

static int
reap(pid_t pid)
{
	int i, st = 0;

	waitpid(pid, &st, 0);
	for (i = 0; i < MAX_LIVE; i++)
		if (live[i] == pid)
			live[i] = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void
stop_all(void)
{
	int i, st;

	for (i = 0; i < MAX_LIVE; i++)
		if (live[i] > 0) {
			kill(live[i], SIGKILL);
			waitpid(live[i], &st, 0);
			live[i] = 0;
		}
	unlink(sock);
	unlink(desc_path);
	unlink(out_path);
}

TestSuite(sink, .fini = stop_all, .timeout = 60);

static void
nap_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

/* fork/exec with stdout (and stderr) to @p out (NULL: /dev/null). */
static pid_t
spawn(char *const argv[], const char *out)
{
	pid_t pid = fork();

	cr_assert(pid >= 0);
	if (pid == 0) {
		int fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	track(pid);
	return pid;
}

static bool
exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_size > 0;
}

/* True once a daemon accepts connections on @p path (the socket file
 * appears at bind(), a moment before listen()). */
static bool
listening(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	bool ok;

	if (fd < 0)
		return false;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/* A fresh uroced_lite. */
static pid_t
start_lite(void)
{
	char *argv[] = {getenv("UROCED_LITE"), sock, NULL};
	pid_t pid;
	int i;

	cr_assert_not_null(argv[0], "UROCED_LITE is not set");
	/* The files of this process's previous run go before new names are made. */
	unlink(sock);
	unlink(desc_path);
	unlink(out_path);
	run_no++;
	snprintf(sock, sizeof(sock), "/tmp/uroce-test-sink-%d-%u.sock", (int)getpid(), run_no);
	snprintf(desc_path, sizeof(desc_path), "/tmp/uroce-test-sink-%d-%u.json", (int)getpid(),
		 run_no);
	snprintf(out_path, sizeof(out_path), "/tmp/uroce-test-sink-%d-%u.out", (int)getpid(),
		 run_no);
	unlink(sock);
	pid = spawn(argv, NULL);
	for (i = 0; i < 500 && !listening(sock); i++)
		nap_ms(10);
	cr_assert(listening(sock), "uroced_lite does not listen on %s", sock);
	return pid;
}

/* The sink: --uc @p uc --ud @p ud, verifying, 100 ms records. */
static pid_t
start_sink(unsigned int uc, unsigned int ud)
{
	char a_uc[16], a_ud[16], a_size[16];
	/* lg_send's packets come from the daemon's own GID (loopback): the UC
	 * QPs' peer, whose packets alone a connected QP takes. */
	char *argv[] = {getenv("UROCE_PERF"), "sink", "--socket", sock, "-x", "0", "--mac",
			"02:00:00:00:00:01", "--peer-ip", "198.18.0.1", "--interval", "100",
			"--json", desc_path, "--uc", a_uc, "--ud", a_ud, "-s", a_size, "--verify",
			"-q", NULL};
	pid_t pid;
	int i;

	cr_assert_not_null(argv[0], "UROCE_PERF is not set");
	snprintf(a_uc, sizeof(a_uc), "%u", uc);
	snprintf(a_ud, sizeof(a_ud), "%u", ud);
	snprintf(a_size, sizeof(a_size), "%u", SIZE);
	unlink(desc_path);
	pid = spawn(argv, out_path);
	for (i = 0; i < 1000 && !exists(desc_path); i++)
		nap_ms(10);
	cr_assert(exists(desc_path), "the sink wrote no description");
	return pid;
}

static int
run_send(const char *op, const char *corrupt)
{
	char n[16];
	char *argv[] = {getenv("LG_SEND"), sock, desc_path, (char *)op, n,
			corrupt ? "--corrupt" : NULL, (char *)corrupt, NULL};

	cr_assert_not_null(argv[0], "LG_SEND is not set");
	snprintf(n, sizeof(n), "%u", N);
	return reap(spawn(argv, NULL));
}

/* The last line of the sink's output that holds @p key, parsed. */
static bool
last_record(const char *key, struct lgj_doc *doc)
{
	char line[65536], last[65536] = "";
	FILE *f = fopen(out_path, "r");

	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, key) != NULL)
			strcpy(last, line);
	fclose(f);
	return last[0] != '\0' && lgj_parse(doc, last, strlen(last), NULL, 0) == 0;
}

static uint64_t
num(const struct lgj_doc *doc, const struct lgj_node *obj, const char *key)
{
	uint64_t v = UINT64_MAX;

	cr_assert_eq(lgj_u64(doc, lgj_get(doc, obj, key), &v), 0, "no number '%s'", key);
	return v;
}

/* Wait until the sink's rate records total at least @p msgs, then stop it. */
static int
stop_sink_at(pid_t pid, uint64_t msgs)
{
	struct lgj_doc doc;
	uint64_t got = 0;
	int i;

	for (i = 0; i < 300 && got < msgs; i++) {
		nap_ms(20);
		if (last_record("\"uroce_rate\"", &doc)) {
			got = num(&doc, lgj_get(&doc, lgj_root(&doc), "total"), "msgs");
			lgj_free(&doc);
		}
	}
	cr_assert_geq(got, msgs, "the sink counted %llu messages, not %llu",
		      (unsigned long long)got, (unsigned long long)msgs);
	kill(pid, SIGINT);
	return reap(pid);
}

struct expect {
	uint64_t cqes_uc;       /* per UC QP */
	uint64_t bad_qp0;       /* verify_bad of the first QP */
	bool ok;
};

/* The summary, field by field: every QP got N messages of SIZE bytes. */
static void
check_summary(const struct expect *e)
{
	const struct lgj_node *root, *tot, *qps;
	struct lgj_doc doc;
	uint32_t i;

	cr_assert(last_record("\"uroce_sink_summary\"", &doc), "no summary line");
	root = lgj_root(&doc);
	tot = lgj_get(&doc, root, "total");
	qps = lgj_get(&doc, root, "qps");
	cr_assert_eq(lgj_get(&doc, root, "ok")->type, e->ok ? LGJ_TRUE : LGJ_FALSE);
	cr_assert_eq(num(&doc, tot, "errors"), 0);
	cr_assert_eq(num(&doc, tot, "dropped"), 0, "nothing is lost on the loopback");
	cr_assert_eq(num(&doc, tot, "resyncs"), 0, "PSNs in order: no resync");
	cr_assert_eq(num(&doc, tot, "msgs"), (uint64_t)N * qps->count);
	cr_assert_eq(num(&doc, root, "rx_bad_qpn"), 0);
	for (i = 0; i < qps->count; i++) {
		const struct lgj_node *q = lgj_at(&doc, qps, i);
		bool uc = strcmp(lgj_str(&doc, lgj_get(&doc, q, "type")), "UC") == 0;

		cr_assert_eq(num(&doc, q, "msgs"), N, "QP %u", i);
		cr_assert_eq(num(&doc, q, "bytes"), (uint64_t)N * SIZE, "QP %u", i);
		cr_assert_eq(num(&doc, q, "cqes"), uc ? e->cqes_uc : N, "QP %u", i);
		cr_assert_eq(num(&doc, q, "verify_bad"), i == 0 ? e->bad_qp0 : 0, "QP %u", i);
		if (uc) {
			const struct lgj_node *w = lgj_get(&doc, q, "window");
			uint64_t written = num(&doc, w, "written"), bad = num(&doc, w, "bad");

			/* Expect: with WRITEs, exactly the N slots written (a flipped
			 * bit makes one byte bad instead); with SENDs, none. */
			if (num(&doc, lgj_get(&doc, q, "counters"), "rx_send_requests") == N)
				cr_assert_eq(written + bad, 0, "QP %u", i);
			else
				cr_assert_eq(written + bad, (uint64_t)N * SIZE, "QP %u", i);
		}
	}
	lgj_free(&doc);
}

static void
run_case(const char *op, const char *corrupt, const struct expect *e, int want_rc)
{
	pid_t lite = start_lite(), s = start_sink(2, 2);

	cr_assert_eq(run_send(op, corrupt), 0, "lg_send failed");
	cr_assert_eq(stop_sink_at(s, 4 * N), want_rc, "sink exit status");
	check_summary(e);
	kill(lite, SIGTERM);
	reap(lite);
}

Test(sink, uc_write_and_ud_send_counted_and_verified)
{
	/* Expect: WRITEs without immediate make no completion; the sink counts
	 * them from the daemon's rx_write_requests and finds every window byte. */
	struct expect e = {.cqes_uc = 0, .ok = true};

	run_case("write", NULL, &e, 0);
}

Test(sink, uc_write_with_immediate)
{
	struct expect e = {.cqes_uc = N, .ok = true};

	run_case("write-imm", NULL, &e, 0);
}

Test(sink, uc_send)
{
	struct expect e = {.cqes_uc = N, .ok = true};

	run_case("send", NULL, &e, 0);
}

Test(sink, a_flipped_bit_in_a_send_is_found)
{
	/* Expect: exactly the one bad message, exit 1, "ok": false. */
	struct expect e = {.cqes_uc = N, .bad_qp0 = 1, .ok = false};

	run_case("send", "5", &e, 1);
}

Test(sink, a_flipped_bit_in_a_write_with_immediate_is_found)
{
	/* Expect: found twice: by the check of its completion, and as one bad
	 * byte by the window scans. */
	struct expect e = {.cqes_uc = N, .bad_qp0 = 2, .ok = false};

	run_case("write-imm", "7", &e, 1);
}

Test(sink, a_flipped_bit_in_a_window_is_found)
{
	/* Expect: no completion to check, but the window scan finds the byte. */
	struct expect e = {.cqes_uc = 0, .bad_qp0 = 1, .ok = false};

	run_case("write", "9", &e, 1);
}

/* The sink with @p extra options on a fresh daemon; its exit status and
 * whether its output holds @p what. */
static void
refuse(const char *what, char *const extra[])
{
	char *argv[32] = {getenv("UROCE_PERF"), "sink", "--socket", sock, "-D", "1"};
	char text[4096] = "";
	pid_t lite = start_lite();
	int i = 6, rc;
	FILE *f;

	while (*extra != NULL)
		argv[i++] = *extra++;
	argv[i] = NULL;
	rc = reap(spawn(argv, out_path));
	cr_assert_eq(rc, 2, "exit %d for %s", rc, what);
	f = fopen(out_path, "r");
	cr_assert_not_null(f);
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	cr_assert_not_null(strstr(text, what), "'%s' not in: %s", what, text);
	kill(lite, SIGTERM);
	reap(lite);
}

Test(sink, bad_options_and_setups_are_refused)
{
	refuse("no QP to receive on", (char *[]){"--uc", "0", "--ud", "0", NULL});
	refuse("port 1 has 1 GIDs", (char *[]){"-x", "3", NULL});
	refuse("is not an EUI-64 link-local address", (char *[]){"-x", "0", NULL});
	refuse("above the UC path MTU 256", (char *[]){"-x", "0", "--mac", "02:00:00:00:00:01",
							"-m", "256", "-s", "512", NULL});
	refuse("not a unicast MAC", (char *[]){"--mac", "01:00:00:00:00:01", NULL});
	refuse("--peer-ip is IPv6", (char *[]){"-x", "0", "--mac", "02:00:00:00:00:01",
					      "--peer-ip", "2001:2::1", NULL});
	refuse("--expect /nonexistent", (char *[]){"-x", "0", "--mac", "02:00:00:00:00:01",
						   "--expect", "/nonexistent", NULL});
	refuse("unknown option", (char *[]){"--bogus", NULL});
	/* Expect: no daemon on the socket is exit 2 with the path named. */
	refuse("cannot reach the uroce daemon", (char *[]){"--socket", "/tmp/uroce-none.sock",
							    NULL});
}
