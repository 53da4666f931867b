/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Component tests of the programs in examples/: each test starts the
 * uroced_lite test tool on a fresh socket, runs one example against it with
 * small counts, and checks its exit status and the lines it prints. Every
 * process is started here, bounded in time, and stopped by its PID (with
 * PR_SET_PDEATHSIG as a backstop should this test process die first).
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OUT_MAX 8192

struct run {
	int status;
	bool timed_out;
	char out[OUT_MAX];
	char err[OUT_MAX];
};

static char sock_path[108];
static pid_t lite_pid = -1;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
nap(void)
{
	struct timespec ts = {.tv_nsec = 1000000};

	nanosleep(&ts, NULL);
}

static const char *
need_env(const char *name)
{
	const char *v = getenv(name);

	cr_assert_not_null(v, "%s not set (run through meson test)", name);
	return v;
}

/* Start uroced_lite on a fresh socket and wait until it listens. */
static void
start_lite(void)
{
	const char *lite = need_env("UROCED_LITE");
	double end;

	snprintf(sock_path, sizeof(sock_path), "/tmp/uroce-test-ex-%d.sock", (int)getpid());
	unlink(sock_path);
	lite_pid = fork();
	cr_assert(lite_pid >= 0);
	if (lite_pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(devnull, 1);
		execl(lite, lite, sock_path, (char *)NULL);
		_exit(127);
	}
	for (end = now_s() + 10; access(sock_path, F_OK) != 0 && now_s() < end;)
		nap();
	cr_assert(access(sock_path, F_OK) == 0, "uroced_lite did not start");
}

/* Stop uroced_lite by PID; @return its wait status. */
static int
stop_lite(void)
{
	int status = -1;

	if (lite_pid > 0) {
		kill(lite_pid, SIGTERM);
		waitpid(lite_pid, &status, 0);
		lite_pid = -1;
	}
	unlink(sock_path);
	return status;
}

static void
slurp(int fd, char *buf)
{
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, OUT_MAX - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

/* Run @p argv (argv[0]: the program) with its stdout and stderr captured,
 * for at most @p timeout_s seconds; on timeout it is killed by PID. The
 * example's own children exit on their own when their socketpair closes. */
static void
run_example(char *const argv[], double timeout_s, struct run *r)
{
	char tout[] = "/tmp/uroce-test-ex-out-XXXXXX", terr[] = "/tmp/uroce-test-ex-err-XXXXXX";
	int fo = mkstemp(tout), fe = mkstemp(terr);
	double end = now_s() + timeout_s;
	pid_t pid;

	cr_assert(fo >= 0 && fe >= 0, "mkstemp: %s", strerror(errno));
	unlink(tout);
	unlink(terr);
	memset(r, 0, sizeof(*r));
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fo, 1);
		dup2(fe, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &r->status, WNOHANG) != pid) {
		if (now_s() > end) {
			r->timed_out = true;
			kill(pid, SIGKILL);
			waitpid(pid, &r->status, 0);
			break;
		}
		nap();
	}
	slurp(fo, r->out);
	slurp(fe, r->err);
}

static void
expect_exit(const struct run *r, int code, const char *what)
{
	cr_expect(!r->timed_out, "%s: timed out", what);
	cr_expect(WIFEXITED(r->status) && WEXITSTATUS(r->status) == code,
		  "%s: status %#x, expected exit %d\nstdout:\n%s\nstderr:\n%s", what, r->status,
		  code, r->out, r->err);
	/* Expect: no sanitizer report (in -Db_sanitize builds). */
	cr_expect(strstr(r->err, "runtime error:") == NULL && strstr(r->err, "Sanitizer") == NULL,
		  "%s: sanitizer report:\n%s", what, r->err);
}

static void
expect_line(const struct run *r, const char *text, const char *what)
{
	cr_expect(strstr(r->out, text) != NULL, "%s: no \"%s\" in stdout:\n%s\nstderr:\n%s", what,
		  text, r->out, r->err);
}

static void
expect_err(const struct run *r, const char *text, const char *what)
{
	cr_expect(strstr(r->err, text) != NULL, "%s: no \"%s\" in stderr:\n%s", what, text,
		  r->err);
}

static void
teardown(void)
{
	stop_lite();
}

TestSuite(examples, .fini = teardown, .timeout = 60);

Test(examples, rdma_write_read_default_sizes)
{
	char *argv[] = {(char *)need_env("RDMA_WRITE_READ"), sock_path, NULL};
	struct run r;

	start_lite();
	run_example(argv, 20, &r);
	/* Expect: 1 B (one packet), 4 KiB (4 packets) and 1 MiB (1024 packets
	 * at MTU 1024) written, checked by the target, read back, verified. */
	expect_exit(&r, 0, "rdma_write_read");
	expect_line(&r, "rdma_write_read[initiator]: 1 bytes: WRITE and READ verified\n",
		    "rdma_write_read");
	expect_line(&r, "rdma_write_read[initiator]: 4096 bytes: WRITE and READ verified\n",
		    "rdma_write_read");
	expect_line(&r, "rdma_write_read[initiator]: 1048576 bytes: WRITE and READ verified\n",
		    "rdma_write_read");
	expect_line(&r, "rdma_write_read: 3 sizes verified\n", "rdma_write_read");
	/* Expect: uroced_lite stops cleanly on SIGTERM. */
	cr_expect_eq(stop_lite(), 0, "uroced_lite exit status");
}

Test(examples, rdma_write_read_mtu_edges)
{
	char *argv[] = {(char *)need_env("RDMA_WRITE_READ"), sock_path, "1023", "1024", "1025",
			"3073", NULL};
	struct run r;

	start_lite();
	run_example(argv, 20, &r);
	/* Expect: one byte short of, exactly at and one byte past a packet. */
	expect_exit(&r, 0, "rdma_write_read");
	expect_line(&r, "1023 bytes: WRITE and READ verified\n", "rdma_write_read");
	expect_line(&r, "1024 bytes: WRITE and READ verified\n", "rdma_write_read");
	expect_line(&r, "1025 bytes: WRITE and READ verified\n", "rdma_write_read");
	expect_line(&r, "3073 bytes: WRITE and READ verified\n", "rdma_write_read");
	expect_line(&r, "rdma_write_read: 4 sizes verified\n", "rdma_write_read");
}

/* ud_sendrecv's path: $UD_SENDRECV, else next to rdma_write_read (both are
 * built in examples/; the meson.build of this directory does not pass it yet). */
static const char *
ud_sendrecv_path(void)
{
	static char path[4096];
	const char *v = getenv("UD_SENDRECV");
	const char *rwr, *slash;

	if (v != NULL)
		return v;
	rwr = need_env("RDMA_WRITE_READ");
	slash = strrchr(rwr, '/');
	cr_assert_not_null(slash, "RDMA_WRITE_READ is not a path: %s", rwr);
	snprintf(path, sizeof(path), "%.*s/ud_sendrecv", (int)(slash - rwr), rwr);
	cr_assert(access(path, X_OK) == 0, "%s not built", path);
	return path;
}

Test(examples, ud_sendrecv_both_ways)
{
	char *argv[] = {(char *)ud_sendrecv_path(), sock_path, "32", NULL};
	struct run r;

	start_lite();
	run_example(argv, 20, &r);
	/* Expect: 32 UD datagrams (SEND with immediate, 512 B after the 40-byte
	 * GRH area) each way, payload, immediate and source QPN verified by the
	 * receiving side, then everything destroyed cleanly. */
	expect_exit(&r, 0, "ud_sendrecv");
	expect_line(&r, "ud_sendrecv[a]: QP ", "ud_sendrecv");
	expect_line(&r, " sent 32 and received 32 datagrams from QP ", "ud_sendrecv");
	expect_line(&r, "ud_sendrecv: 32 datagrams each way verified\n", "ud_sendrecv");
	cr_expect_eq(stop_lite(), 0, "uroced_lite exit status");
}

Test(examples, ud_sendrecv_bad_count_prints_usage)
{
	char *argv[] = {(char *)ud_sendrecv_path(), sock_path, "65", NULL};
	struct run r;

	run_example(argv, 10, &r);
	/* Expect: COUNT above 64 is refused with the usage line, exit 2. */
	expect_exit(&r, 2, "ud_sendrecv 65");
	expect_err(&r, "usage: ud_sendrecv", "ud_sendrecv 65");
}

Test(examples, atomic_counter_four_clients)
{
	char *argv[] = {(char *)need_env("ATOMIC_COUNTER"), sock_path, "4", "500", NULL};
	struct run r;
	int i;

	start_lite();
	run_example(argv, 30, &r);
	/* Expect: 4 x 500 adds of 1: the counter is 2000 and every original
	 * value 0..1999 came back once; each client saw distinct values. */
	expect_exit(&r, 0, "atomic_counter");
	expect_line(&r, "atomic_counter[server]: counter = 2000 (expected 2000: 4 clients x 500 "
			"fetch-and-adds)\n", "atomic_counter");
	expect_line(&r, "atomic_counter[server]: every original value 0..1999 returned exactly "
			"once\n", "atomic_counter");
	for (i = 0; i < 4; i++) {
		char line[96];

		snprintf(line, sizeof(line), "atomic_counter[client %d]: %s\n", i,
			 "500 fetch-and-adds, original values distinct");
		expect_line(&r, line, "atomic_counter");
	}
	cr_expect_eq(stop_lite(), 0, "uroced_lite exit status");
}

Test(examples, atomic_counter_one_client_one_add)
{
	char *argv[] = {(char *)need_env("ATOMIC_COUNTER"), sock_path, "1", "1", NULL};
	struct run r;

	start_lite();
	run_example(argv, 20, &r);
	/* Expect: the smallest run: counter 1, original value 0. */
	expect_exit(&r, 0, "atomic_counter");
	expect_line(&r, "counter = 1 (expected 1: 1 clients x 1 fetch-and-adds)\n",
		    "atomic_counter");
	expect_line(&r, "every original value 0..0 returned exactly once\n", "atomic_counter");
}

Test(examples, no_daemon_is_a_clear_error)
{
	char *rw[] = {(char *)need_env("RDMA_WRITE_READ"), "/tmp/uroce-test-ex-nobody.sock",
		      NULL};
	char *ac[] = {(char *)need_env("ATOMIC_COUNTER"), "/tmp/uroce-test-ex-nobody.sock", "2",
		      "10", NULL};
	struct run r;

	/* Expect: no daemon on the socket: exit 1 with strerror(ENOENT). */
	run_example(rw, 10, &r);
	expect_exit(&r, 1, "rdma_write_read without daemon");
	expect_err(&r, "open_device: No such file or directory", "rdma_write_read");
	run_example(ac, 10, &r);
	expect_exit(&r, 1, "atomic_counter without daemon");
	expect_err(&r, "open_device: No such file or directory", "atomic_counter");
}

Test(examples, bad_arguments_print_usage)
{
	char *rw[] = {(char *)need_env("RDMA_WRITE_READ"), "/tmp/x.sock", "0", NULL};
	char *ac[] = {(char *)need_env("ATOMIC_COUNTER"), "/tmp/x.sock", "4", "abc", NULL};
	struct run r;

	/* Expect: a size of 0 and a non-numeric count are refused with exit 2. */
	run_example(rw, 10, &r);
	expect_exit(&r, 2, "rdma_write_read 0");
	expect_err(&r, "usage: rdma_write_read", "rdma_write_read");
	run_example(ac, 10, &r);
	expect_exit(&r, 2, "atomic_counter abc");
	expect_err(&r, "usage: atomic_counter", "atomic_counter");
}

Test(examples, daemon_death_fails_the_examples_in_bounded_time)
{
	char *argv[] = {(char *)need_env("ATOMIC_COUNTER"), sock_path, "2", "1000000", NULL};
	struct run r;
	pid_t killer;

	start_lite();
	/* SIGKILL the daemon 1 s into a run that would take far longer. */
	killer = fork();
	cr_assert(killer >= 0);
	if (killer == 0) {
		struct timespec ts = {.tv_sec = 1};

		nanosleep(&ts, NULL);
		kill(lite_pid, SIGKILL);
		_exit(0);
	}
	run_example(argv, 30, &r);
	waitpid(killer, NULL, 0);
	/* Expect: every process notices (ENOTCONN from liburoce, or its peer's
	 * socket closing) and the example exits 1, well before the timeout. */
	expect_exit(&r, 1, "atomic_counter with the daemon killed");
	cr_expect(strstr(r.err, "Transport endpoint is not connected") != NULL ||
		  strstr(r.err, "peer exited") != NULL ||
		  strstr(r.err, "Connection refused") != NULL,
		  "no daemon-death error in stderr:\n%s", r.err);
	stop_lite();
}
