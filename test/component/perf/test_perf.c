/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Component tests of app/uroce-perf: each test starts the uroced_lite test
 * tool on a fresh socket, then a uroce-perf server and a uroce-perf client
 * that meet over 127.0.0.1 TCP on a free port and do RDMA through the daemon
 * core's loopback port. Runs are short and use --verify; the test checks
 * both exit codes and parses the client's result table (perftest columns).
 * Every process started here is stopped by its PID.
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS 24
#define MAX_ROWS 32

struct proc {
	pid_t pid;
	int status;
	bool done;
	char out[64];   /* stdout+stderr file */
};

static char sock_path[108];
static pid_t lite_pid = -1;

/* Every child this test process started and has not reaped yet, so that the
 * suite's fini can stop them (by PID) when an assertion ends a test early. */
#define MAX_LIVE 8
static pid_t live[MAX_LIVE];

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

static void
reaped(pid_t pid)
{
	int i;

	for (i = 0; i < MAX_LIVE; i++)
		if (live[i] == pid)
			live[i] = 0;
}

static void
stop_leftovers(void)
{
	int i, st;

	for (i = 0; i < MAX_LIVE; i++)
		if (live[i] > 0) {
			kill(live[i], SIGKILL);
			waitpid(live[i], &st, 0);
			live[i] = 0;
		}
	if (sock_path[0] != '\0')
		unlink(sock_path);
}

TestSuite(perf, .fini = stop_leftovers);

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
	struct timespec ts = {.tv_nsec = 2000000};

	nanosleep(&ts, NULL);
}

/* Start a program with its output in a fresh temporary file. */
static void
spawn(struct proc *p, char *const argv[])
{
	int fd;

	snprintf(p->out, sizeof(p->out), "/tmp/uroce-test-perf-out-XXXXXX");
	fd = mkstemp(p->out);
	cr_assert(fd >= 0, "mkstemp: %s", strerror(errno));
	p->done = false;
	p->pid = fork();
	cr_assert(p->pid >= 0);
	if (p->pid == 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	track(p->pid);
	close(fd);
}

/* Wait up to @p secs for @p p; then SIGKILL it (by PID) and say so. */
static bool
wait_for(struct proc *p, double secs)
{
	double end = now_s() + secs;
	bool finished;

	while (!p->done && now_s() < end) {
		if (waitpid(p->pid, &p->status, WNOHANG) == p->pid)
			p->done = true;
		else
			nap();
	}
	finished = p->done;
	if (!finished) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, &p->status, 0);
		p->done = true;
	}
	reaped(p->pid);
	return finished;
}

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void
start_lite(void)
{
	const char *lite = getenv("UROCED_LITE");
	double end;

	cr_assert_not_null(lite, "UROCED_LITE not set (run through meson test)");
	snprintf(sock_path, sizeof(sock_path), "/tmp/uroce-test-perf-%d.sock", (int)getpid());
	unlink(sock_path);
	lite_pid = fork();
	cr_assert(lite_pid >= 0);
	if (lite_pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 1);
		execl(lite, lite, sock_path, (char *)NULL);
		_exit(127);
	}
	track(lite_pid);
	for (end = now_s() + 10; access(sock_path, F_OK) != 0 && now_s() < end;)
		nap();
	cr_assert(access(sock_path, F_OK) == 0, "uroced_lite did not start");
}

static void
stop_lite(void)
{
	int st;

	if (lite_pid <= 0)
		return;
	kill(lite_pid, SIGTERM);
	waitpid(lite_pid, &st, 0);
	reaped(lite_pid);
	lite_pid = -1;
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "uroced_lite did not stop cleanly");
}

static unsigned int
free_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert(s >= 0);
	cr_assert_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(getsockname(s, (struct sockaddr *)&sa, &len), 0);
	close(s);
	return ntohs(sa.sin_port);
}

/* argv for uroce-perf: the program, then @p args (NULL-terminated), the
 * socket and port, then @p peer if not NULL. */
static void
build_argv(char **argv, char *port, const char *const *args, const char *peer)
{
	const char *perf = getenv("UROCE_PERF");
	int n = 0;

	cr_assert_not_null(perf, "UROCE_PERF not set (run through meson test)");
	argv[n++] = (char *)perf;
	for (; *args != NULL; args++)
		argv[n++] = (char *)*args;
	argv[n++] = "--socket";
	argv[n++] = sock_path;
	argv[n++] = "-p";
	argv[n++] = port;
	if (peer != NULL)
		argv[n++] = (char *)peer;
	argv[n] = NULL;
	cr_assert(n < MAX_ARGS);
}

/* One result row of the client's table. */
struct row {
	double v[9];
	int nv;
};

/* Parse the rows between the "#bytes" header and the closing rule. */
static int
parse_table(const char *out, struct row *rows, int max)
{
	const char *p = strstr(out, " #bytes");
	int n = 0;

	if (p == NULL)
		return -1;
	p = strchr(p, '\n');
	while (p != NULL && p[1] == ' ' && n < max) {
		char buf[512], *end, *line = buf;
		const char *eol = strchr(p + 1, '\n');
		size_t len = eol != NULL ? (size_t)(eol - p - 1) : strlen(p + 1);
		struct row *r = &rows[n];

		/* One line at a time: strtod would skip the newline. */
		if (len >= sizeof(buf))
			break;
		memcpy(buf, p + 1, len);
		buf[len] = '\0';
		r->nv = 0;
		for (;;) {
			double d = strtod(line, &end);

			if (end == line || r->nv == 9)
				break;
			r->v[r->nv++] = d;
			line = end;
		}
		if (r->nv == 0)
			break;
		n++;
		p = strchr(p + 1, '\n');
	}
	return n;
}

/* Run server and client with the same @p args; check exits and table. */
static void
run_pair_expect(const char *const *args, bool lat, const unsigned long *sizes, int nsizes,
		unsigned long iters, const char *server_says)
{
	char *sargv[MAX_ARGS], *cargv[MAX_ARGS], port[16];
	struct proc srv = {0}, cli = {0};
	struct row rows[MAX_ROWS];
	char *sout, *cout;
	bool cok, sok;
	int n, i, j;

	start_lite();
	snprintf(port, sizeof(port), "%u", free_port());
	build_argv(sargv, port, args, NULL);
	build_argv(cargv, port, args, "127.0.0.1");
	spawn(&srv, sargv);
	spawn(&cli, cargv);
	cok = wait_for(&cli, 25);
	sok = wait_for(&srv, 5);
	stop_lite();
	sout = slurp(srv.out);
	cout = slurp(cli.out);
	unlink(srv.out);
	unlink(cli.out);
	/* Expect: both sides finish in time and exit 0 (verification passed). */
	cr_assert(cok && sok, "timeout (client done %d, server done %d)\nclient:\n%s\nserver:\n%s",
		  cok, sok, cout, sout);
	cr_assert(WIFEXITED(cli.status) && WEXITSTATUS(cli.status) == 0,
		  "client failed (status %#x):\n%s", cli.status, cout);
	cr_assert(WIFEXITED(srv.status) && WEXITSTATUS(srv.status) == 0,
		  "server failed (status %#x):\n%s", srv.status, sout);
	/* Expect: no sanitizer report (a UBSan report alone would not change the exit code). */
	cr_expect(strstr(cout, "runtime error") == NULL && strstr(cout, "Sanitizer") == NULL,
		  "client:\n%s", cout);
	cr_expect(strstr(sout, "runtime error") == NULL && strstr(sout, "Sanitizer") == NULL,
		  "server:\n%s", sout);
	/* Expect: the server checked the data it owns and says so. */
	cr_expect(strstr(sout, server_says) != NULL, "server did not say '%s':\n%s",
		  server_says, sout);
	/* Expect: one row per size with the perftest column count, the size in
	 * the bytes column, the iteration count, and finite positive numbers. */
	n = parse_table(cout, rows, MAX_ROWS);
	cr_assert_eq(n, nsizes, "expected %d result rows, parsed %d:\n%s", nsizes, n, cout);
	for (i = 0; i < n; i++) {
		cr_expect_eq(rows[i].nv, lat ? 9 : 5, "row %d has %d columns:\n%s", i,
			     rows[i].nv, cout);
		cr_expect_eq((unsigned long)rows[i].v[0], sizes[i], "row %d bytes", i);
		if (iters)
			cr_expect_eq((unsigned long)rows[i].v[1], iters, "row %d iterations", i);
		else
			cr_expect_gt(rows[i].v[1], 0, "row %d iterations", i);
		/* MB/s has two decimals, as perftest prints it: a few-byte message
		 * on a loaded machine may honestly print 0.00; the rate may not. */
		for (j = 2; j < rows[i].nv; j++)
			cr_expect(isfinite(rows[i].v[j]) &&
				  (rows[i].v[j] > 0 ||
				   (!lat && j < 4 && sizes[i] < 1024 && rows[i].v[j] == 0)),
				  "row %d column %d is %g", i, j, rows[i].v[j]);
		if (lat)
			cr_expect(rows[i].v[2] <= rows[i].v[4] && rows[i].v[4] <= rows[i].v[3],
				  "row %d: t_min <= t_typical <= t_max", i);
	}
	free(sout);
	free(cout);
}

static void
run_pair(const char *const *args, bool lat, const unsigned long *sizes, int nsizes,
	 unsigned long iters)
{
	run_pair_expect(args, lat, sizes, nsizes, iters, "verify OK");
}

static const unsigned long s4096[] = {4096}, s64[] = {64}, s8[] = {8};

Test(perf, write_bw, .timeout = 60)
{
	const char *a[] = {"write", "bw", "-s", "4096", "-n", "300", "-t", "512", "--verify",
			   NULL};

	/* Expect: with 512 slots every one of the 300 WRITEs has its own slot,
	 * so the server checks all of them. */
	run_pair_expect(a, false, s4096, 1, 300, "4096       verify OK (300 messages checked");
}

Test(perf, write_bw_sweep_to_64k, .timeout = 60)
{
	const char *a[] = {"write", "bw", "-a", "--max-size", "65536", "-n", "20", "-t", "16",
			   "--verify", NULL};
	unsigned long sizes[16];
	int i;

	for (i = 0; i < 16; i++)
		sizes[i] = 2ul << i;
	run_pair(a, false, sizes, 16, 20);
}

Test(perf, write_lat, .timeout = 60)
{
	const char *a[] = {"write", "lat", "-s", "64", "-n", "200", "--verify", NULL};

	run_pair(a, true, s64, 1, 200);
}

Test(perf, read_bw, .timeout = 60)
{
	const char *a[] = {"read", "bw", "-s", "4096", "-n", "300", "--verify", NULL};

	run_pair(a, false, s4096, 1, 300);
}

Test(perf, read_lat, .timeout = 60)
{
	const char *a[] = {"read", "lat", "-s", "64", "-n", "200", "--verify", NULL};

	run_pair(a, true, s64, 1, 200);
}

Test(perf, send_bw_two_qps, .timeout = 60)
{
	const char *a[] = {"send", "bw", "-s", "4096", "-n", "200", "-q", "2", "-t", "32",
			   "--verify", NULL};

	/* Expect: the server checked all 2 x 200 received messages. */
	run_pair_expect(a, false, s4096, 1, 200, "4096       verify OK (400 messages checked");
}

Test(perf, send_lat, .timeout = 60)
{
	const char *a[] = {"send", "lat", "-s", "64", "-n", "200", "--verify", "-u", "18", NULL};

	run_pair(a, true, s64, 1, 200);
}

Test(perf, atomic_bw, .timeout = 60)
{
	const char *a[] = {"atomic", "bw", "-n", "300", "--verify", NULL};

	/* Expect: the server's counter is 300 after 300 FETCH_ADDs of 1. */
	run_pair_expect(a, false, s8, 1, 300, "8          verify OK (300 messages checked");
}

Test(perf, atomic_lat, .timeout = 60)
{
	const char *a[] = {"atomic", "lat", "-n", "200", "--verify", NULL};

	run_pair(a, true, s8, 1, 200);
}

Test(perf, read_bw_duration, .timeout = 60)
{
	const char *a[] = {"read", "bw", "-s", "1024", "-D", "1", "--verify", NULL};

	/* Expect: a -D run reports however many iterations fit in 1 s. */
	run_pair(a, false, (const unsigned long[]){1024}, 1, 0);
}

/* -Q: one WR in N asks for a completion. The client checks every READ's data
 * and every FETCH_ADD's result when the signaled WR behind them completes,
 * and a run whose count is no multiple of N still ends (its last WR is
 * signaled; with -D the client posts on to the next signaled one). */
Test(perf, read_bw_cq_mod_count_not_a_multiple, .timeout = 60)
{
	const char *a[] = {"read", "bw", "-s", "64", "-n", "1050", "-Q", "100", "--verify", NULL};

	run_pair(a, false, s64, 1, 1050);
}

Test(perf, atomic_bw_cq_mod_three_qps, .timeout = 60)
{
	const char *a[] = {"atomic", "bw", "-n", "333", "-Q", "64", "-t", "16", "-q", "3",
			   "--verify", NULL};

	/* Expect: -Q 64 above -t 16 is cut to the 16 WRs in flight. */
	run_pair(a, false, s8, 1, 333);
}

Test(perf, write_bw_cq_mod_duration, .timeout = 60)
{
	const char *a[] = {"write", "bw", "-s", "64", "-D", "1", "-Q", "7", "-t", "20",
			   "--verify", NULL};

	run_pair(a, false, s64, 1, 0);
}

Test(perf, send_bw_every_wr_signaled, .timeout = 60)
{
	const char *a[] = {"send", "bw", "-s", "4096", "-n", "100", "-Q", "1", "--verify",
			   NULL};

	run_pair_expect(a, false, s4096, 1, 100, "4096       verify OK (100 messages checked");
}

/* -e: both sides sleep on their CQ's fd; the run still verifies, and the
 * client says how often it slept. With @p must_sleep it slept at least once:
 * the client waits for each answer (lat, or bw with one WR outstanding), and
 * the answer takes longer than arming and polling once more. A bw client
 * with a deep queue may find completions waiting every time it polls. */
static void
run_events(const char *const *args, bool lat, bool must_sleep, const unsigned long *sizes,
	   unsigned long iters)
{
	char *sargv[MAX_ARGS], *cargv[MAX_ARGS], port[16];
	struct proc srv = {0}, cli = {0};
	struct row rows[MAX_ROWS];
	char *sout, *cout, *p;
	unsigned long sleeps;
	bool cok, sok;
	int n;

	start_lite();
	snprintf(port, sizeof(port), "%u", free_port());
	build_argv(sargv, port, args, NULL);
	build_argv(cargv, port, args, "127.0.0.1");
	spawn(&srv, sargv);
	spawn(&cli, cargv);
	cok = wait_for(&cli, 25);
	sok = wait_for(&srv, 5);
	stop_lite();
	sout = slurp(srv.out);
	cout = slurp(cli.out);
	unlink(srv.out);
	unlink(cli.out);
	/* Expect: both exit 0 in time, the header says events are on, one row
	 * of the expected size and count, and the client slept on its CQ. */
	cr_assert(cok && sok, "timeout\nclient:\n%s\nserver:\n%s", cout, sout);
	cr_assert(WIFEXITED(cli.status) && WEXITSTATUS(cli.status) == 0, "client:\n%s", cout);
	cr_assert(WIFEXITED(srv.status) && WEXITSTATUS(srv.status) == 0, "server:\n%s", sout);
	cr_expect(strstr(cout, "Use events      : ON") != NULL, "client:\n%s", cout);
	p = strstr(cout, " CQ sleeps       : ");
	cr_assert_not_null(p, "client printed no CQ sleeps:\n%s", cout);
	sleeps = strtoul(p + 19, NULL, 10);
	if (must_sleep)
		cr_expect_gt(sleeps, 0, "the client never slept on its CQ:\n%s", cout);
	n = parse_table(cout, rows, MAX_ROWS);
	cr_assert_eq(n, 1, "rows:\n%s", cout);
	cr_expect_eq((unsigned long)rows[0].v[0], sizes[0]);
	cr_expect_eq((unsigned long)rows[0].v[1], iters);
	cr_expect_eq(rows[0].nv, lat ? 9 : 5);
	cr_log_info("%s %s -e: the client slept %lu times", args[0], args[1], sleeps);
	free(sout);
	free(cout);
}

Test(perf, send_lat_events, .timeout = 60)
{
	const char *a[] = {"send", "lat", "-s", "64", "-n", "200", "--verify", "-e", NULL};

	run_events(a, true, true, s64, 200);
}

Test(perf, read_lat_events, .timeout = 60)
{
	const char *a[] = {"read", "lat", "-s", "64", "-n", "200", "--verify", "-e", NULL};

	run_events(a, true, true, s64, 200);
}

Test(perf, send_bw_events, .timeout = 60)
{
	const char *a[] = {"send", "bw", "-s", "4096", "-n", "300", "--verify", "-e", NULL};

	run_events(a, false, false, s4096, 300);
}

/* One SEND outstanding: the client waits for each completion. */
Test(perf, send_bw_events_depth_1, .timeout = 60)
{
	const char *a[] = {"send", "bw", "-s", "4096", "-n", "300", "-t", "1", "--verify", "-e",
			   NULL};

	run_events(a, false, true, s4096, 300);
}

/* Run uroce-perf alone and return its exit status and output. */
static int
run_alone(char *const argv[], char **out)
{
	struct proc p = {0};

	spawn(&p, argv);
	cr_assert(wait_for(&p, 15), "uroce-perf did not exit");
	*out = slurp(p.out);
	unlink(p.out);
	return WIFEXITED(p.status) ? WEXITSTATUS(p.status) : -1;
}

Test(perf, bad_options_exit_2_with_usage, .timeout = 60)
{
	char *perf = getenv("UROCE_PERF");
	char *cases[][6] = {
		{perf, "write", "bw", "-s", "abc", NULL},
		{perf, "fly", "bw", NULL},
		{perf, "write", "fast", NULL},
		{perf, "write", "lat", "-D", "2", NULL},
		{perf, "atomic", "bw", "-s", "64", NULL},
		{perf, "write", "bw", "--bogus", NULL},
		{perf, "write", NULL},
		{perf, "write", "lat", "-e", NULL},
		{perf, "write", "bw", "-u", "0", NULL},
		{perf, "write", "bw", "-u", "32", NULL},
		{perf, "write", "bw", "-Q", "0", NULL},
		{perf, "write", "bw", "-Q", "4097", NULL},
	};
	unsigned int i;

	cr_assert_not_null(perf, "UROCE_PERF not set (run through meson test)");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out;
		int rc = run_alone(cases[i], &out);

		/* Expect: exit 2, one "uroce-perf: ..." line, then the usage. */
		cr_expect_eq(rc, 2, "case %u: exit %d:\n%s", i, rc, out);
		cr_expect(strncmp(out, "uroce-perf: ", 12) == 0, "case %u:\n%s", i, out);
		cr_expect(strstr(out, "\nusage: uroce-perf") != NULL, "case %u:\n%s", i, out);
		free(out);
	}
}

Test(perf, unreachable_daemon_exits_1, .timeout = 60)
{
	char *perf = getenv("UROCE_PERF");
	char path[64];
	char *argv[] = {perf, "write", "bw", "--socket", path, "127.0.0.1", NULL};
	char *out;
	int rc;

	cr_assert_not_null(perf, "UROCE_PERF not set (run through meson test)");
	snprintf(path, sizeof(path), "/tmp/uroce-test-perf-none-%d.sock", (int)getpid());
	rc = run_alone(argv, &out);
	/* Expect: exit 1 with a line naming the socket, before any TCP. */
	cr_expect_eq(rc, 1, "exit %d:\n%s", rc, out);
	cr_expect(strstr(out, "cannot reach the uroce daemon at") != NULL, "%s", out);
	cr_expect(strstr(out, path) != NULL, "%s", out);
	free(out);
}

/* A uroced_lite, then a server and a client of @p args on a free port. */
static void
start_pair(struct proc *srv, struct proc *cli, const char *const *args)
{
	char *sargv[MAX_ARGS], *cargv[MAX_ARGS], port[16];

	start_lite();
	snprintf(port, sizeof(port), "%u", free_port());
	build_argv(sargv, port, args, NULL);
	build_argv(cargv, port, args, "127.0.0.1");
	spawn(srv, sargv);
	spawn(cli, cargv);
}

Test(perf, peer_disconnect_is_reported, .timeout = 60)
{
	const char *a[] = {"send", "lat", "-n", "2000000", NULL};
	struct proc srv = {0}, cli = {0};
	char *sout, *cout;
	bool sok;

	start_pair(&srv, &cli, a);
	/* Let them connect and start the run, then kill the client. */
	usleep(1500000);
	kill(cli.pid, SIGKILL);
	waitpid(cli.pid, &cli.status, 0);
	reaped(cli.pid);
	cli.done = true;
	sok = wait_for(&srv, 10);
	stop_lite();
	sout = slurp(srv.out);
	cout = slurp(cli.out);
	unlink(srv.out);
	unlink(cli.out);
	/* Expect: the server notices, says "peer disconnected" and exits 1. */
	cr_assert(sok, "server did not notice the peer going away:\n%s", sout);
	cr_expect(WIFEXITED(srv.status) && WEXITSTATUS(srv.status) == 1,
		  "server status %#x:\n%s", srv.status, sout);
	cr_expect(strstr(sout, "peer disconnected") != NULL, "%s", sout);
	free(sout);
	free(cout);
}

Test(perf, own_daemon_stopping_is_not_blamed_on_the_peer, .timeout = 60)
{
	const char *a[] = {"send", "lat", "-n", "2000000", NULL};
	struct proc srv = {0}, cli = {0};
	char *sout, *cout;
	bool sok, cok;

	start_pair(&srv, &cli, a);
	/* Let them connect and start the run, then stop the daemon both use. */
	usleep(1500000);
	stop_lite();
	sok = wait_for(&srv, 15);
	cok = wait_for(&cli, 15);
	sout = slurp(srv.out);
	cout = slurp(cli.out);
	unlink(srv.out);
	unlink(cli.out);
	/* Expect: both exit 1 naming their own daemon; neither blames the peer. */
	cr_assert(sok && cok, "a side did not notice its daemon stopping:\n%s\n%s", sout, cout);
	cr_expect(WIFEXITED(srv.status) && WEXITSTATUS(srv.status) == 1, "server %#x:\n%s",
		  srv.status, sout);
	cr_expect(WIFEXITED(cli.status) && WEXITSTATUS(cli.status) == 1, "client %#x:\n%s",
		  cli.status, cout);
	cr_expect(strstr(sout, "this side's uroce daemon") != NULL, "server:\n%s", sout);
	cr_expect(strstr(cout, "this side's uroce daemon") != NULL, "client:\n%s", cout);
	cr_expect(strstr(sout, "peer disconnected") == NULL, "server blames the peer:\n%s", sout);
	cr_expect(strstr(cout, "did the peer go away") == NULL, "client:\n%s", cout);
	free(sout);
	free(cout);
}

Test(perf, bench_range_server_off_every_link_is_refused)
{
	char *perf = getenv("UROCE_PERF");
	char *argv[] = {perf, "write", "bw", "--socket", "/nonexistent/uroce.sock", "198.19.255.99",
			NULL};
	char *out;
	int rc;

	cr_assert_not_null(perf, "UROCE_PERF not set (run through meson test)");
	rc = run_alone(argv, &out);
	/* Expect: refused before anything else (no daemon needed, no SYN sent),
	 * naming the range and the flag; this test's network namespace has no
	 * link in 198.18.0.0/15 (the suites create theirs in namespaces). */
	cr_expect_eq(rc, 1, "exit %d:\n%s", rc, out);
	cr_expect(strstr(out, "198.18.0.0/15") != NULL && strstr(out, "--allow-offlink") != NULL,
		  "%s", out);
	free(out);
}

/* Connect to a uroce-perf server on @p port as a fake client (retrying
 * while it starts) and send @p len bytes of @p msg, then close. */
static void
fake_client(unsigned int port, const void *msg, size_t len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	double end = now_s() + 10;
	int s;

	for (;;) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		cr_assert(s >= 0);
		if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		close(s);
		cr_assert(now_s() < end, "the server never listened");
		nap();
	}
	if (len)
		cr_assert_eq(send(s, msg, len, MSG_NOSIGNAL), (ssize_t)len);
	close(s);
}

Test(perf, malformed_side_channel_is_refused, .timeout = 60)
{
	const char *a[] = {"write", "bw", NULL};
	char *argv[MAX_ARGS], port[16], garbage[96], *out;
	struct proc srv = {0};
	unsigned int round, p;

	memset(garbage, 0xa5, sizeof(garbage));
	start_lite();
	for (round = 0; round < 2; round++) {
		p = free_port();
		snprintf(port, sizeof(port), "%u", p);
		build_argv(argv, port, a, NULL);
		spawn(&srv, argv);
		/* Round 0: 96 bytes that are not a HELLO; round 1: connect and close. */
		fake_client(p, garbage, round == 0 ? sizeof(garbage) : 0);
		cr_assert(wait_for(&srv, 10), "server did not exit");
		out = slurp(srv.out);
		unlink(srv.out);
		/* Expect: exit 1 with a clear line, no crash. */
		cr_expect(WIFEXITED(srv.status) && WEXITSTATUS(srv.status) == 1,
			  "round %u: status %#x:\n%s", round, srv.status, out);
		cr_expect(strstr(out, round == 0 ? "is not a uroce-perf client" :
					 "peer disconnected") != NULL, "round %u:\n%s", round, out);
		free(out);
	}
	stop_lite();
}

/*
 * Map @p pid's uroce_alloc_buf() memfd (its data buffer) through
 * /proc/PID/fd, as a parent may. @return the mapping, or NULL if the buffer
 * does not exist yet; *@p len is its size.
 */
static uint8_t *
map_peer_buffer(pid_t pid, size_t *len)
{
	char dir[64], path[360], target[128];
	struct dirent *de;
	uint8_t *map = NULL;
	struct stat st;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (d == NULL)
		return NULL;
	while (map == NULL && (de = readdir(d)) != NULL) {
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strstr(target, "memfd:uroce-buf") == NULL)
			continue;
		fd = open(path, O_RDWR);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_size > 0) {
			map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				   0);
			if (map == MAP_FAILED)
				map = NULL;
			else
				*len = (size_t)st.st_size;
		}
		close(fd);
	}
	closedir(d);
	return map;
}

Test(perf, corrupted_data_fails_verify_with_exit_1, .timeout = 60)
{
	const char *a[] = {"read", "bw", "-s", "4096", "-D", "1", "--verify", NULL};
	struct proc srv = {0}, cli = {0};
	uint8_t *map = NULL;
	size_t len = 0;
	unsigned int zeroed = 0, lines;
	char *sout, *cout;
	const char *p;
	double end;
	bool cok, sok;

	start_pair(&srv, &cli, a);
	/* Corrupt the server's buffer from outside (no hook in uroce-perf):
	 * zero it every 2 ms while the client READs it, so the data the server
	 * filled in is gone for most READs. */
	for (end = now_s() + 20; now_s() < end;) {
		if (waitpid(cli.pid, &cli.status, WNOHANG) == cli.pid) {
			cli.done = true;
			break;
		}
		if (map == NULL)
			map = map_peer_buffer(srv.pid, &len);
		if (map != NULL) {
			memset(map, 0, len);
			zeroed++;
		}
		nap();
	}
	if (map != NULL)
		munmap(map, len);
	cok = wait_for(&cli, 1);
	sok = wait_for(&srv, 5);
	stop_lite();
	sout = slurp(srv.out);
	cout = slurp(cli.out);
	unlink(srv.out);
	unlink(cli.out);
	cr_assert(zeroed > 0, "never found the server's buffer in /proc/%d/fd", (int)srv.pid);
	cr_assert(cok && sok, "timeout (client done %d, server done %d)", cok, sok);
	/* Expect: the client names the bad READ and exits 1 with the summary. */
	cr_expect(WIFEXITED(cli.status) && WEXITSTATUS(cli.status) == 1,
		  "client status %#x:\n%.2000s", cli.status, cout);
	cr_expect(strstr(cout, "uroce-perf: verify: RDMA READ data: QP 0 message ") != NULL &&
		  strstr(cout, " differs at byte 0\n") != NULL, "%.2000s", cout);
	cr_expect(strstr(cout, "uroce-perf: data verification FAILED\n") != NULL, "%.2000s",
		  cout);
	/* Expect: the first 10 bad READs get a line each, then their count, not
	 * thousands of lines. */
	for (p = cout, lines = 0; (p = strstr(p, "uroce-perf: verify: RDMA READ")) != NULL; p++)
		lines++;
	cr_expect_eq(lines, 10, "%u lines about bad READs", lines);
	cr_expect(strstr(cout, " bad messages in all (the first 10 shown)\n") != NULL,
		  "%.2000s", cout);
	/* Expect: no sanitizer report on either side. */
	cr_expect(strstr(cout, "runtime error") == NULL && strstr(cout, "Sanitizer") == NULL,
		  "client:\n%.2000s", cout);
	cr_expect(strstr(sout, "runtime error") == NULL && strstr(sout, "Sanitizer") == NULL,
		  "server:\n%.2000s", sout);
	free(sout);
	free(cout);
}
