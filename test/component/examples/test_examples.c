/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Component tests of the programs in examples/: each test starts the
 * uroced_lite test tool on a fresh socket, runs one example against it with
 * small counts, and checks its exit status and the lines it prints. Every
 * process is started here, bounded in time, and stopped by its PID (with
 * PR_SET_PDEATHSIG as a backstop should this test process die first).
 *
 * The *_two_daemons tests run `uroced_lite --pair A B`: two daemon cores
 * with GIDs ::ffff:198.18.0.1 and ::ffff:198.18.0.2 joined by the simulated
 * wire, as two hosts' NICs would be. Side 0 of the example uses daemon A, side
 * 1 daemon B (UROCE_PEER_SOCKET), and the example must complete with its data
 * verified; afterwards uroce-ctl's sessions_reaped counter shows side 0's
 * sessions on A and side 1's on B, none elsewhere. (Over DPDK ports the same
 * examples run in the dpdk suite, test_e2e_memif and test_e2e_afp.)
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
static char peer_path[108];     /* the second uroced_lite, for UROCE_PEER_SOCKET */
static pid_t peer_pid = -1;

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

/* Start a uroced_lite on the fresh socket /tmp/uroce-test-ex-PID@p tag.sock
 * (written to @p path) and wait until it listens. */
static void
lite_start(char path[108], const char *tag, pid_t *pid)
{
	const char *lite = need_env("UROCED_LITE");
	double end;

	snprintf(path, 108, "/tmp/uroce-test-ex-%d%s.sock", (int)getpid(), tag);
	unlink(path);
	*pid = fork();
	cr_assert(*pid >= 0);
	if (*pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(devnull, 1);
		execl(lite, lite, path, (char *)NULL);
		_exit(127);
	}
	for (end = now_s() + 10; access(path, F_OK) != 0 && now_s() < end;)
		nap();
	cr_assert(access(path, F_OK) == 0, "uroced_lite on %s did not start", path);
}

/* Stop a uroced_lite by PID; @return its wait status. */
static int
lite_stop(const char *path, pid_t *pid)
{
	int status = -1;

	if (*pid > 0) {
		kill(*pid, SIGTERM);
		waitpid(*pid, &status, 0);
		*pid = -1;
	}
	if (path[0] != '\0')
		unlink(path);
	return status;
}

static void
start_lite(void)
{
	lite_start(sock_path, "", &lite_pid);
}

static int
stop_lite(void)
{
	return lite_stop(sock_path, &lite_pid);
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
 * example's own children exit on their own when their socketpair closes.
 * The child runs without UROCE_PEER_SOCKET and UROCE_GID_INDEX (whatever the
 * caller's environment says), then with the "NAME=VALUE" strings of @p env
 * (NULL-terminated; NULL: none) added. */
static void
run_example_env(char *const argv[], char *const env[], double timeout_s, struct run *r)
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
		unsetenv("UROCE_PEER_SOCKET");
		unsetenv("UROCE_GID_INDEX");
		for (; env != NULL && *env != NULL; env++)
			putenv(*env);
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
run_example(char *const argv[], double timeout_s, struct run *r)
{
	run_example_env(argv, NULL, timeout_s, r);
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
	lite_stop(peer_path, &peer_pid);
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

/* ---- Side 1 on another daemon: UROCE_PEER_SOCKET and UROCE_GID_INDEX ---- */

#define NOBODY_SOCK "/tmp/uroce-test-ex-nobody.sock"

/* One example run, as the tests below need it: its program and arguments
 * (SOCKET_PATH filled in by the test), the name side 1 prints its errors
 * under, and how many daemon sessions each side opens. side1_role is a
 * process whose exit ends the run: it has written its error before the
 * example's main process can return (atomic_counter's server waits for
 * client 0 first). */
struct ex_case {
	const char *env;            /* the variable that holds the program's path */
	const char *args[3];        /* after SOCKET_PATH; NULL-terminated */
	const char *side1_role;
	long side0_sessions;
	long side1_sessions;
	const char *done;           /* what the example prints when it succeeded */
};

static const struct ex_case cases[] = {
	{"RC_PINGPONG", {"20", "64", NULL}, "rc_pingpong", 1, 1, "20 round trips of 64 bytes"},
	{"RDMA_WRITE_READ", {"4096", NULL, NULL}, "rdma_write_read[initiator]", 1, 1, "verified"},
	{"ATOMIC_COUNTER", {"2", "10", NULL}, "atomic_counter[client 0]", 1, 2,
	 "returned exactly once"},
	{"UD_SENDRECV", {"4", NULL, NULL}, "ud_sendrecv[b]", 1, 1, "verified"},
};

enum { CASE_RC_PINGPONG, CASE_RDMA_WRITE_READ, CASE_ATOMIC_COUNTER, CASE_UD_SENDRECV };

/* argv of case @p c on socket @p path, in @p argv (room for 5). */
static void
case_argv(const struct ex_case *c, const char *path, char *argv[5])
{
	int i;

	argv[0] = (char *)(strcmp(c->env, "UD_SENDRECV") == 0 ? ud_sendrecv_path() :
							       need_env(c->env));
	argv[1] = (char *)path;
	for (i = 0; i < 3; i++)
		argv[2 + i] = (char *)c->args[i];
}

/* The value of the JSON member "@p key": a number in @p json, else -1. */
static long
json_num(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	return p != NULL ? strtol(p + strlen(pat), NULL, 10) : -1;
}

/*
 * How many client sessions the daemon on @p path has reaped, apart from
 * uroce-ctl's own: ask `uroce-ctl counters --json` until the asker is the only
 * session left (then every earlier one, its own earlier queries included,
 * has been reaped) and subtract the earlier queries.
 */
static long
reaped_sessions(const char *path)
{
	char *argv[] = {(char *)need_env("UROCE_CTL"), "counters", "-s", (char *)path, "--json",
			NULL};
	double end = now_s() + 10;
	struct run r;
	long k;

	for (k = 0; now_s() < end; k++) {
		long sessions, reaped;

		run_example(argv, 10, &r);
		cr_assert(!r.timed_out && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0,
			  "uroce-ctl counters -s %s: status %#x\n%s%s", path, r.status, r.out,
			  r.err);
		sessions = json_num(r.out, "sessions");
		reaped = json_num(r.out, "sessions_reaped");
		cr_assert(sessions >= 1 && reaped >= k, "uroce-ctl counters: no counts in\n%s",
			  r.out);
		if (sessions == 1)
			return reaped - k;
		nap();
	}
	cr_assert_fail("%s: clients still connected after 10 s", path);
	return -1;
}

/* `uroced_lite --pair sock_path peer_path`, as peer_pid; both sockets up. */
static void
pair_start(void)
{
	const char *lite = need_env("UROCED_LITE");
	double end;

	snprintf(sock_path, sizeof(sock_path), "/tmp/uroce-test-ex-%d-a.sock", (int)getpid());
	snprintf(peer_path, sizeof(peer_path), "/tmp/uroce-test-ex-%d-b.sock", (int)getpid());
	unlink(sock_path);
	unlink(peer_path);
	peer_pid = fork();
	cr_assert(peer_pid >= 0);
	if (peer_pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(devnull, 1);
		execl(lite, lite, "--pair", sock_path, peer_path, (char *)NULL);
		_exit(127);
	}
	for (end = now_s() + 10;
	     (access(sock_path, F_OK) != 0 || access(peer_path, F_OK) != 0) && now_s() < end;)
		nap();
	cr_assert(access(sock_path, F_OK) == 0 && access(peer_path, F_OK) == 0,
		  "uroced_lite --pair did not start");
}

/* Run case @p i with side 0 on daemon A and side 1 on daemon B of a pair. */
static void
two_daemons(int i)
{
	const struct ex_case *c = &cases[i];
	static char peer_env[160];
	char *env[] = {peer_env, NULL};
	char *argv[5];
	struct run r;

	if (getenv("UROCE_CTL") == NULL)
		cr_skip_test("uroce-ctl not built (libpcap missing)");
	pair_start();
	snprintf(peer_env, sizeof(peer_env), "UROCE_PEER_SOCKET=%s", peer_path);
	case_argv(c, sock_path, argv);
	run_example_env(argv, env, 40, &r);
	/* Expect: the example completes across the two daemons, data verified. */
	expect_exit(&r, 0, c->env);
	cr_expect(strstr(r.out, c->done) != NULL, "%s: no \"%s\" in stdout:\n%s%s", c->env,
		  c->done, r.out, r.err);
	/* Expect: side 0's sessions were on the first daemon, side 1's on the
	 * second (UROCE_PEER_SOCKET), and nowhere else. */
	cr_expect_eq(reaped_sessions(sock_path), c->side0_sessions, "%s: sessions on %s", c->env,
		     sock_path);
	cr_expect_eq(reaped_sessions(peer_path), c->side1_sessions, "%s: sessions on %s",
		     c->env, peer_path);
	unlink(sock_path);
	cr_expect_eq(lite_stop(peer_path, &peer_pid), 0, "uroced_lite --pair exit status");
}

Test(examples, rc_pingpong_two_daemons)
{
	two_daemons(CASE_RC_PINGPONG);
}

Test(examples, rdma_write_read_two_daemons)
{
	two_daemons(CASE_RDMA_WRITE_READ);
}

Test(examples, atomic_counter_two_daemons)
{
	two_daemons(CASE_ATOMIC_COUNTER);
}

Test(examples, ud_sendrecv_two_daemons)
{
	two_daemons(CASE_UD_SENDRECV);
}

Test(examples, rc_pingpong_one_daemon)
{
	char *argv[5];
	struct run r;

	start_lite();
	case_argv(&cases[CASE_RC_PINGPONG], sock_path, argv);
	run_example(argv, 20, &r);
	/* Expect: QP a and QP b, each on its own context of the one daemon,
	 * bounce 20 messages of 64 bytes (path MTU 4096, the port's). */
	expect_exit(&r, 0, "rc_pingpong");
	expect_line(&r, "rc_pingpong: 20 round trips of 64 bytes, ", "rc_pingpong");
	cr_expect_eq(stop_lite(), 0, "uroced_lite exit status");
}

Test(examples, peer_socket_is_opened_by_side_1_only)
{
	static char peer_env[] = "UROCE_PEER_SOCKET=" NOBODY_SOCK;
	char *env[] = {peer_env, NULL};
	unsigned int i;

	start_lite();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ex_case *c = &cases[i];
		char *argv[5], line[256];
		struct run r;

		case_argv(c, sock_path, argv);
		run_example_env(argv, env, 20, &r);
		/* Expect: side 1 tries the peer socket (no daemon there) and says
		 * so, naming the socket; side 0 opens SOCKET_PATH without error. */
		expect_exit(&r, 1, c->env);
		snprintf(line, sizeof(line), "%s: open_device: No such file or directory (socket "
			 NOBODY_SOCK ")\n", c->side1_role);
		expect_err(&r, line, c->env);
		cr_expect(strstr(r.err, sock_path) == NULL, "%s: side 0 failed to open %s:\n%s",
			  c->env, sock_path, r.err);
	}
	cr_expect_eq(stop_lite(), 0, "uroced_lite exit status");
}

Test(examples, gid_index_env)
{
	static char gid0[] = "UROCE_GID_INDEX=0", gid1[] = "UROCE_GID_INDEX=1",
		    bad[] = "UROCE_GID_INDEX=1x", big[] = "UROCE_GID_INDEX=256";
	char *env0[] = {gid0, NULL}, *env1[] = {gid1, NULL}, *envb[] = {bad, NULL},
	     *envg[] = {big, NULL};
	char *argv[5];
	struct run r;

	start_lite();
	case_argv(&cases[CASE_RC_PINGPONG], sock_path, argv);
	/* Expect: index 0 given explicitly is the default, and works. */
	run_example_env(argv, env0, 20, &r);
	expect_exit(&r, 0, "rc_pingpong UROCE_GID_INDEX=0");
	expect_line(&r, "rc_pingpong: 20 round trips of 64 bytes, ", "UROCE_GID_INDEX=0");
	/* Expect: uroced_lite's port has GID 0 only: index 1 is refused by the
	 * daemon (EINVAL) and the example says which index it asked for, and
	 * which GIDs the port has. */
	run_example_env(argv, env1, 20, &r);
	expect_exit(&r, 1, "rc_pingpong UROCE_GID_INDEX=1");
	expect_err(&r, "has no GID 1 (Invalid argument); its GIDs: 0 ::ffff:198.18.0.1 (set "
		   "UROCE_GID_INDEX to one of them)\n", "UROCE_GID_INDEX=1");
	expect_err(&r, "rc_pingpong: query_gid: port 1 of ", "UROCE_GID_INDEX=1");
	/* Expect: values that are no index 0..255 are refused before any use. */
	run_example_env(argv, envb, 20, &r);
	expect_exit(&r, 1, "rc_pingpong UROCE_GID_INDEX=1x");
	expect_err(&r, "rc_pingpong: UROCE_GID_INDEX=\"1x\": not a GID index (0..255)\n",
		   "UROCE_GID_INDEX=1x");
	run_example_env(argv, envg, 20, &r);
	expect_exit(&r, 1, "rc_pingpong UROCE_GID_INDEX=256");
	expect_err(&r, "rc_pingpong: UROCE_GID_INDEX=\"256\": not a GID index (0..255)\n",
		   "UROCE_GID_INDEX=256");
	/* Expect: a forked example honours it too (side a, the main process:
	 * side b, its child, fails the same way but may write after a exits). */
	case_argv(&cases[CASE_UD_SENDRECV], sock_path, argv);
	run_example_env(argv, env1, 20, &r);
	expect_exit(&r, 1, "ud_sendrecv UROCE_GID_INDEX=1");
	expect_err(&r, "ud_sendrecv[a]: query_gid: port 1 of ", "ud_sendrecv");
	expect_err(&r, "has no GID 1 (Invalid argument); its GIDs: 0 ::ffff:198.18.0.1",
		   "ud_sendrecv");
	cr_expect_eq(stop_lite(), 0, "uroced_lite exit status");
}
