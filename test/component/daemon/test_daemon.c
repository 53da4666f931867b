/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Component tests of lib/daemon: the daemon core runs in this process
 * (uroce_daemon_poll() in a loop) and real client processes (daemon_client,
 * built on liburoce only) connect to it over its UNIX socket and do RDMA
 * through it, over the loopback port (every packet is a full RoCEv2 frame
 * with ICRC, parsed again on the way in). One test runs the separate
 * uroced_lite process instead.
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uroce_daemon.h"
#include "uroce_shm.h"

#include "daemon_core_test.h"
#include "daemon_test_util.h"

#define MAX_CHILD 4
/* Datagrams one UD client sends (one with a bad Q_Key, four good). */
#define UD_FRAMES_MIN 4

struct child {
	pid_t pid;
	int status;
	bool done;
};

static char sock_path[108];
static struct uroce_daemon *dmn;
static int lite_out = -1; /* uroced_lite's stdout, open until it stops */

/* @p loop_zc_min: uroce_daemon_conf's (0: every loop frame is a copy). */
static void
start_daemon_zc(uint32_t loop_zc_min)
{
	struct uroce_daemon_conf conf;

	dt_sock_path(sock_path, sizeof(sock_path), "daemon");
	memset(&conf, 0, sizeof(conf));
	conf.sock_path = sock_path;
	conf.sock_mode = 0600;
	conf.n_workers = dt_workers();
	conf.loop_zc_min = loop_zc_min;
	dmn = uroce_daemon_create(&conf);
	cr_assert_not_null(dmn, "daemon: %s", strerror(errno));
}

static void
start_daemon(void)
{
	start_daemon_zc(0);
}

static pid_t
spawn(const char *mode, const char *path, int a, int b, int c)
{
	const char *exe = getenv("DAEMON_CLIENT");
	char sa[16], sb[16], sc[16];
	pid_t pid;

	cr_assert_not_null(exe, "DAEMON_CLIENT not set (run through meson test)");
	snprintf(sa, sizeof(sa), "%d", a);
	snprintf(sb, sizeof(sb), "%d", b);
	snprintf(sc, sizeof(sc), "%d", c);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		if (c >= 0)
			execl(exe, exe, mode, path, sa, sb, sc, (char *)NULL);
		else if (b >= 0)
			execl(exe, exe, mode, path, sa, sb, (char *)NULL);
		else
			execl(exe, exe, mode, path, sa, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void
reap(struct child *ch, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!ch[i].done && ch[i].pid > 0 &&
		    waitpid(ch[i].pid, &ch[i].status, WNOHANG) == ch[i].pid)
			ch[i].done = true;
}

static bool
all_done(struct child *ch, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!ch[i].done)
			return false;
	return true;
}

static void
kill_all(struct child *ch, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!ch[i].done && ch[i].pid > 0) {
			kill(ch[i].pid, SIGKILL);
			waitpid(ch[i].pid, &ch[i].status, 0);
			ch[i].done = true;
		}
}

/* A client socket to the daemon for tests that speak the protocol by hand;
 * non-blocking, so that the test can run the daemon while it waits. */
static int
raw_connect(void)
{
	int s = dt_connect(sock_path);

	cr_assert_geq(s, 0, "connect: %s", strerror(-s));
	fcntl(s, F_SETFL, O_NONBLOCK);
	return s;
}

/* Run the daemon until a message arrives on @p s (validated: -EPROTO if
 * malformed), or the daemon hangs up (0), for at most 10 s (-EAGAIN). */
static ssize_t
poll_for_reply(int s, void *buf, size_t len, int *fd)
{
	double end = dt_now_s() + 10;
	ssize_t n = -EAGAIN;

	while (dt_now_s() < end) {
		uroce_daemon_poll(dmn);
		n = dt_msg_recv(s, buf, len, fd);
		if (n != -EAGAIN)
			break;
		dt_nap_us(20);
	}
	return n;
}

/* Run the daemon until every child has exited (or @p ready_fd is readable,
 * if >= 0). @return false on timeout. */
static bool
run(struct child *ch, int n, int ready_fd, double timeout_s)
{
	double end = dt_now_s() + timeout_s;

	while (dt_now_s() < end) {
		if (uroce_daemon_poll(dmn) == 0)
			dt_nap_us(20);
		reap(ch, n);
		if (ready_fd >= 0) {
			struct pollfd p = {.fd = ready_fd, .events = POLLIN};

			if (poll(&p, 1, 0) == 1)
				return true;
		} else if (all_done(ch, n)) {
			return true;
		}
	}
	return false;
}

static void
expect_exit0(const struct child *c, const char *what)
{
	cr_expect(WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0,
		  "%s: status %#x (exit %d)", what, c->status,
		  WIFEXITED(c->status) ? WEXITSTATUS(c->status) : -1);
}

static void
start_pair(struct child *ch, const char *path, int p01[2], int p10[2])
{
	cr_assert(pipe(p01) == 0 && pipe(p10) == 0);
	ch[0].pid = spawn("pair", path, 0, p01[1], p10[0]);
	ch[1].pid = spawn("pair", path, 1, p10[1], p01[0]);
}

static void
close_pipes(int *a, int *b)
{
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

static void
rc_every_op(uint32_t loop_zc_min)
{
	struct child ch[2] = {0};
	struct uroce_daemon_stats st;
	int p01[2], p10[2];
	bool ok;

	start_daemon_zc(loop_zc_min);
	start_pair(ch, sock_path, p01, p10);
	/* Expect: SEND (SGE list), inline SEND_WITH_IMM, WRITE, WRITE_WITH_IMM,
	 * READ, FETCH_ADD, CMP_SWAP and the eventfd wake-up all verified by the
	 * clients themselves, which exit 0. */
	ok = run(ch, 2, -1, 60);
	kill_all(ch, 2);
	cr_expect(ok, "clients did not finish");
	expect_exit0(&ch[0], "pair role 0");
	expect_exit0(&ch[1], "pair role 1");
	uroce_daemon_stats(dmn, &st);
	/* Expect: traffic went through the loopback port as real frames. */
	cr_expect_gt(st.loop_frames, 10);
	cr_expect_gt(st.cqe_written, 8);
	cr_expect_geq(st.cq_events, 1);
	/* Each wake-up's write is timed (a system call: never 0 ns). */
	cr_expect_geq(st.cq_event_ns, st.cq_events);
	cr_expect_eq(st.wqe_rejected, 0);
	if (loop_zc_min == 0)
		cr_expect_eq(st.loop_zero_copy, 0);
	else
		cr_expect_gt(st.loop_zero_copy, 0, "no frame left its payload in place");
	dc_expect_all_reclaimed(dmn);
	close_pipes(p01, p10);
	uroce_daemon_destroy(dmn);
	cr_expect(access(sock_path, F_OK) != 0, "socket file left behind");
}

Test(daemon, rc_every_op_between_two_clients, .timeout = 120)
{
	rc_every_op(0);
}

/* The same with every payload of one SGE left in client memory on the
 * loopback (loop_zc_min 1): the clients check every byte, the WQEs complete
 * only once their frames came home, and every segment is unmapped after. */
Test(daemon, rc_every_op_with_loopback_zero_copy, .timeout = 120)
{
	rc_every_op(1);
}

static void
ud_datagrams(uint32_t loop_zc_min)
{
	struct child ch[2] = {0};
	struct uroce_daemon_stats st;
	int p01[2], p10[2];
	bool ok;

	start_daemon_zc(loop_zc_min);
	cr_assert(pipe(p01) == 0 && pipe(p10) == 0);
	ch[0].pid = spawn("ud", sock_path, 0, p01[1], p10[0]);
	ch[1].pid = spawn("ud", sock_path, 1, p10[1], p01[0]);
	/* Expect: UD SEND and SEND_WITH_IMM both ways, data, imm, src_qp, byte_len
	 * (GRH + payload) and the GRH flag checked by the clients; a datagram with
	 * a wrong Q_Key gives no completion; role 1 gets -EPERM destroying role
	 * 0's AH and an error completion using it in a WQE; role 0's datagram
	 * above the 4096-byte MTU fails with LOC_QP_OP_ERR. */
	ok = run(ch, 2, -1, 60);
	kill_all(ch, 2);
	cr_expect(ok, "clients did not finish");
	expect_exit0(&ch[0], "ud role 0");
	expect_exit0(&ch[1], "ud role 1");
	uroce_daemon_stats(dmn, &st);
	/* Expect: exactly the foreign-AH and the over-MTU WQEs were refused. */
	cr_expect_eq(st.wqe_rejected, 2);
	cr_expect_geq(st.loop_frames, 2 * UD_FRAMES_MIN);
	if (loop_zc_min != 0)
		cr_expect_gt(st.loop_zero_copy, 0, "no datagram left its payload in place");
	/* Expect: role 1 left its AH and QP to the daemon: all reclaimed. */
	dc_expect_all_reclaimed(dmn);
	close_pipes(p01, p10);
	uroce_daemon_destroy(dmn);
}

Test(daemon, ud_datagrams_between_two_clients, .timeout = 120)
{
	ud_datagrams(0);
}

/* The same with every datagram's payload left in the sender's memory: the
 * receiver checks it and places it behind the GRH from there. */
Test(daemon, ud_datagrams_with_loopback_zero_copy, .timeout = 120)
{
	ud_datagrams(1);
}

Test(daemon, foreign_handles_and_keys_are_refused, .timeout = 120)
{
	struct child ch[2] = {0};
	struct uroce_daemon_stats st;
	int p01[2], p10[2];
	bool ok;

	start_daemon();
	cr_assert(pipe(p01) == 0 && pipe(p10) == 0);
	ch[0].pid = spawn("victim", sock_path, p01[1], p10[0], -1);
	ch[1].pid = spawn("thief", sock_path, p10[1], p01[0], -1);
	/* Expect: the thief gets -EPERM for the victim's QP/MR handles, a remote
	 * access error for the victim's rkey, a local protection error for the
	 * victim's lkey; the victim finds its QP and memory untouched. */
	ok = run(ch, 2, -1, 60);
	kill_all(ch, 2);
	cr_expect(ok, "clients did not finish");
	expect_exit0(&ch[0], "victim");
	expect_exit0(&ch[1], "thief");
	uroce_daemon_stats(dmn, &st);
	/* Expect: the foreign lkey is of another PD: the requester's own check
	 * (IBA 10.8.3.1) failed that WQE; the daemon refused no WQE itself. */
	cr_expect_eq(st.wqe_rejected, 0);
	{
		uint64_t cnt[UROCE_CNT_MAX];

		uroce_daemon_counters(dmn, cnt, UROCE_CNT_MAX);
		cr_expect_eq(cnt[UROCE_CNT_REQ_LOCAL_PROT_ERR], 1);
	}
	dc_expect_all_reclaimed(dmn);
	close_pipes(p01, p10);
	uroce_daemon_destroy(dmn);
}

static void
sigkill_mid_transfer(uint32_t loop_zc_min)
{
	struct child ch[3] = {0};
	struct uroce_daemon_stats st;
	int p01[2], p10[2], hog[2];
	bool ok;

	start_daemon_zc(loop_zc_min);
	cr_assert(pipe(hog) == 0);
	ch[2].pid = spawn("hog", sock_path, hog[1], -1, -1);
	/* Expect: the hog's RDMA WRITEs are flowing. */
	ok = run(ch, 3, hog[0], 30);
	cr_assert(ok, "hog never got going");
	uroce_daemon_stats(dmn, &st);
	cr_expect_eq(st.qps, 2);
	if (loop_zc_min != 0)
		cr_expect_gt(st.loop_zero_copy, 0, "the hog's WRITEs were copied");
	kill(ch[2].pid, SIGKILL);
	start_pair(ch, sock_path, p01, p10);
	/* Expect: the pair's whole workload still passes. */
	ok = run(ch, 3, -1, 60);
	kill_all(ch, 3);
	cr_expect(ok, "clients did not finish");
	cr_expect(WIFSIGNALED(ch[2].status) && WTERMSIG(ch[2].status) == SIGKILL);
	expect_exit0(&ch[0], "pair role 0");
	expect_exit0(&ch[1], "pair role 1");
	dc_expect_all_reclaimed(dmn);
	uroce_daemon_stats(dmn, &st);
	cr_expect_eq(st.sessions_reaped, 3);
	close_pipes(p01, p10);
	close(hog[0]);
	close(hog[1]);
	uroce_daemon_destroy(dmn);
}

Test(daemon, sigkill_mid_transfer_is_reclaimed, .timeout = 120)
{
	sigkill_mid_transfer(0);
}

/* Expect: a client killed while loop frames still point into its memory
 * (16 KiB WRITEs left in place) loses nothing of anyone else's: its segment
 * waits for those frames to come home, then is unmapped (segments 0). */
Test(daemon, sigkill_mid_zero_copy_transfer_is_reclaimed, .timeout = 120)
{
	sigkill_mid_transfer(1);
}

Test(daemon, incompatible_abi_is_refused_with_version, .timeout = 60)
{
	struct uroce_shm_msg_hello_req *hq;
	struct uroce_shm_msg_hdr *h;
	struct uroce_daemon_stats st;
	uint8_t buf[UROCE_SHM_MSG_MAX];
	uint16_t maj = 0, min = 0;
	ssize_t n = -EAGAIN;
	int s, fd = -1, len;

	start_daemon();
	s = raw_connect();
	/* A HELLO from a client of ABI major 2. */
	len = uroce_shm_msg_init(buf, sizeof(buf), UROCE_SHM_MSG_HELLO, 1, false, 0);
	cr_assert_gt(len, 0);
	h = (void *)buf;
	h->abi_major = UROCE_SHM_ABI_MAJOR + 1;
	hq = (void *)(buf + sizeof(*h));
	hq->abi_major = UROCE_SHM_ABI_MAJOR + 1;
	hq->abi_minor = 3;
	cr_assert_eq(uroce_shm_sock_send(s, buf, (size_t)len, -1), len);
	n = poll_for_reply(s, buf, sizeof(buf), &fd);
	/* Expect: a HELLO response with -EPROTONOSUPPORT and our version in it. */
	cr_assert_gt(n, 0);
	cr_expect_eq(uroce_shm_msg_validate(buf, (size_t)n, true, fd >= 0), 0);
	cr_expect_eq(h->type, UROCE_SHM_MSG_HELLO);
	cr_expect_eq(h->status, -EPROTONOSUPPORT);
	cr_expect_eq(fd, -1);
	cr_expect_eq(uroce_shm_msg_peer_version(buf, (size_t)n, &maj, &min), 0);
	cr_expect_eq(maj, UROCE_SHM_ABI_MAJOR);
	cr_expect_eq(min, UROCE_SHM_ABI_MINOR);
	/* Expect: then the daemon hangs up and forgets the session. */
	n = poll_for_reply(s, buf, sizeof(buf), &fd);
	cr_expect_eq(n, 0);
	uroce_daemon_stats(dmn, &st);
	cr_expect_eq(st.hello_refused, 1);
	dc_expect_all_reclaimed(dmn);
	close(s);
	uroce_daemon_destroy(dmn);
}

Test(daemon, garbage_on_the_socket_hangs_up_that_client_only, .timeout = 60)
{
	struct uroce_daemon_stats st;
	uint8_t junk[64];
	ssize_t n = -EAGAIN;
	int s, fd = -1;

	start_daemon();
	s = raw_connect();
	memset(junk, 0xa5, sizeof(junk));
	cr_assert_eq(send(s, junk, sizeof(junk), 0), (ssize_t)sizeof(junk));
	n = poll_for_reply(s, junk, sizeof(junk), &fd);
	/* Expect: bad magic is counted and the client is hung up on. */
	cr_expect_eq(n, 0);
	uroce_daemon_stats(dmn, &st);
	cr_expect_eq(st.bad_msgs, 1);
	dc_expect_all_reclaimed(dmn);
	close(s);
	uroce_daemon_destroy(dmn);
}

Test(daemon, daemon_death_fails_client_calls, .timeout = 60)
{
	struct child ch[1] = {0};
	int p01[2], p10[2];
	bool ok;

	start_daemon();
	cr_assert(pipe(p01) == 0 && pipe(p10) == 0);
	ch[0].pid = spawn("orphan", sock_path, p01[1], p10[0], -1);
	ok = run(ch, 1, p01[0], 30);
	cr_assert(ok, "orphan never got ready");
	uroce_daemon_destroy(dmn);
	dmn = NULL;
	cr_assert_eq(write(p10[1], "K", 1), 1);
	/* Expect: the blocked CQ wait, alloc_pd and post_send all fail with
	 * ENOTCONN; nothing hangs. */
	{
		double end = dt_now_s() + 30;

		while (!ch[0].done && dt_now_s() < end) {
			reap(ch, 1);
			dt_nap_us(20);
		}
	}
	kill_all(ch, 1);
	expect_exit0(&ch[0], "orphan");
	close_pipes(p01, p10);
}

/* Start the uroced_lite test tool as its own process on a fresh socket. */
static pid_t
start_lite(void)
{
	pid_t pid;

	cr_assert_not_null(getenv("UROCED_LITE"), "UROCED_LITE not set (run through meson test)");
	dt_sock_path(sock_path, sizeof(sock_path), "lite");
	pid = dt_lite_start(sock_path, NULL, &lite_out);
	cr_assert_gt(pid, 0, "uroced_lite did not start: %s", strerror(-pid));
	return pid;
}

/* SIGTERM uroced_lite and reap it into @p c. */
static void
stop_lite(struct child *c)
{
	c->status = dt_lite_stop(c->pid, lite_out);
	c->done = true;
	lite_out = -1;
}

Test(daemon, rc_pingpong_example_runs_on_uroced_lite, .timeout = 120)
{
	const char *ex = getenv("RC_PINGPONG");
	struct child ch[2] = {0};
	double end;

	if (ex == NULL)
		cr_skip_test("examples not built (-Dexamples=false)");
	ch[1].pid = start_lite();
	ch[0].pid = fork();
	cr_assert(ch[0].pid >= 0);
	if (ch[0].pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 1);
		execl(ex, ex, sock_path, "2000", "1000", (char *)NULL);
		_exit(127);
	}
	for (end = dt_now_s() + 60; !ch[0].done && dt_now_s() < end;) {
		reap(ch, 1);
		dt_nap_us(20);
	}
	stop_lite(&ch[1]);
	kill_all(ch, 1);
	/* Expect: 2000 verified round trips of 1000 bytes, exit 0. */
	expect_exit0(&ch[0], "rc_pingpong");
	expect_exit0(&ch[1], "uroced_lite");
}

Test(daemon, uroced_lite_serves_two_clients, .timeout = 120)
{
	struct child ch[3] = {0};
	int p01[2], p10[2];
	double end;
	bool ok;

	ch[2].pid = start_lite();
	start_pair(ch, sock_path, p01, p10);
	for (end = dt_now_s() + 60; !(ch[0].done && ch[1].done) && dt_now_s() < end;) {
		reap(ch, 2);
		dt_nap_us(20);
	}
	ok = ch[0].done && ch[1].done;
	stop_lite(&ch[2]);
	kill_all(ch, 2);
	cr_expect(ok, "clients did not finish");
	expect_exit0(&ch[0], "pair role 0");
	expect_exit0(&ch[1], "pair role 1");
	/* Expect: SIGTERM stops uroced_lite cleanly and removes its socket. */
	expect_exit0(&ch[2], "uroced_lite");
	cr_expect(access(sock_path, F_OK) != 0, "socket file left behind");
	close_pipes(p01, p10);
}

/* A client written against lib/shm directly, so that it can write anything
 * into its rings and doorbell block. */
struct raw_qp {
	struct uroce_shm_segment seg;
	struct uroce_shm_ring sq, rq;
	uint32_t slot, qpn, handle;
};

/* Queue sizes of raw_open()'s QPs and CQ. */
struct raw_caps {
	uint32_t send_wr, recv_wr, cqe;
};

static const struct raw_caps raw_small = {4, 4, 8};

struct raw {
	int s;
	uint32_t seq;
	struct uroce_shm_segment db, cqseg;
	struct uroce_shm_ring cq;
	struct raw_qp qp[2];
	unsigned int n_qp;
};

static int
raw_rpc_fd(struct raw *r, uint16_t type, const void *req, size_t req_len, int fd_in, void *resp,
	   size_t resp_len, int *fd_out)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	struct uroce_shm_msg_hdr *h = (void *)buf;
	int fd = -1;
	ssize_t n;

	cr_assert_eq(dt_msg_send(r->s, type, ++r->seq, req, req_len, fd_in),
		     (ssize_t)(sizeof(*h) + req_len));
	n = poll_for_reply(r->s, buf, sizeof(buf), &fd);
	cr_assert_gt(n, 0);
	if (h->status == 0 && resp_len)
		memcpy(resp, buf + sizeof(*h), resp_len);
	if (fd_out != NULL)
		*fd_out = fd;
	else if (fd >= 0)
		close(fd);
	return h->status;
}

static int
raw_rpc(struct raw *r, uint16_t type, const void *req, size_t req_len, void *resp,
	size_t resp_len, int *fd_out)
{
	return raw_rpc_fd(r, type, req, req_len, -1, resp, resp_len, fd_out);
}

/* Move @p q to @p state; RTR connects it to itself. */
static void
raw_qp_to(struct raw *r, struct raw_qp *q, enum uroce_qp_state state)
{
	struct uroce_shm_msg_modify_qp_req mq;

	memset(&mq, 0, sizeof(mq));
	mq.qp_handle = q->handle;
	mq.attr.qp_state = state;
	mq.attr_mask = UROCE_QP_STATE;
	switch (state) {
	case UROCE_QPS_INIT:
		mq.attr.port_num = 1;
		mq.attr.qp_access_flags = UROCE_ACCESS_REMOTE_WRITE;
		mq.attr_mask |= UROCE_QP_PKEY_INDEX | UROCE_QP_PORT | UROCE_QP_ACCESS_FLAGS;
		break;
	case UROCE_QPS_RTR:
		mq.attr.path_mtu = 3;
		mq.attr.dest_qp_num = q->qpn;
		mq.attr.max_dest_rd_atomic = 1;
		mq.attr.ah_attr.dgid[10] = mq.attr.ah_attr.dgid[11] = 0xff;
		mq.attr.ah_attr.dgid[12] = 198;
		mq.attr.ah_attr.dgid[13] = 18;
		mq.attr.ah_attr.dgid[15] = 1;
		mq.attr_mask |= UROCE_QP_AV | UROCE_QP_PATH_MTU | UROCE_QP_DEST_QPN | UROCE_QP_RQ_PSN |
				UROCE_QP_MAX_DEST_RD_ATOMIC | UROCE_QP_MIN_RNR_TIMER;
		break;
	case UROCE_QPS_RTS:
		mq.attr.timeout = 14;
		mq.attr.retry_cnt = 7;
		mq.attr.rnr_retry = 7;
		mq.attr.max_rd_atomic = 1;
		mq.attr_mask |= UROCE_QP_SQ_PSN | UROCE_QP_TIMEOUT | UROCE_QP_RETRY_CNT |
				UROCE_QP_RNR_RETRY | UROCE_QP_MAX_QP_RD_ATOMIC;
		break;
	default:
		break;
	}
	cr_assert_eq(raw_rpc(r, UROCE_SHM_MSG_MODIFY_QP, &mq, sizeof(mq), NULL, 0, NULL), 0,
		     "modify to state %d", (int)state);
}

/* An RC QP of @p r's PD and CQ, of @p caps, in RTS and connected to itself. */
static void
raw_qp_open(struct raw *r, uint32_t pd, uint32_t cq, const struct raw_caps *caps,
	    struct raw_qp *q)
{
	struct uroce_shm_msg_create_qp_req qq;
	struct uroce_shm_msg_create_qp_resp qr;
	int fd;

	memset(&qq, 0, sizeof(qq));
	qq.pd_handle = pd;
	qq.send_cq = cq;
	qq.recv_cq = cq;
	qq.srq_handle = UROCE_SHM_HANDLE_NONE;
	qq.qp_type = UROCE_QPT_RC;
	qq.cap.max_send_wr = caps->send_wr;
	qq.cap.max_recv_wr = caps->recv_wr;
	qq.cap.max_send_sge = 1;
	qq.cap.max_recv_sge = 1;
	cr_assert_eq(raw_rpc(r, UROCE_SHM_MSG_CREATE_QP, &qq, sizeof(qq), &qr, sizeof(qr), &fd), 0);
	cr_assert_eq(uroce_shm_segment_map(&q->seg, fd, qr.seg_size), 0);
	cr_assert_eq(uroce_shm_ring_attach(&q->sq, (uint8_t *)q->seg.addr + qr.sq_offset,
					   qr.rq_offset - qr.sq_offset, UROCE_SHM_RING_PRODUCER, 0),
		     0);
	cr_assert_eq(uroce_shm_ring_attach(&q->rq, (uint8_t *)q->seg.addr + qr.rq_offset,
					   q->seg.size - qr.rq_offset, UROCE_SHM_RING_PRODUCER, 0),
		     0);
	q->slot = qr.db_slot;
	q->qpn = qr.qp_num;
	q->handle = qr.qp_handle;
	raw_qp_to(r, q, UROCE_QPS_INIT);
	raw_qp_to(r, q, UROCE_QPS_RTR);
	raw_qp_to(r, q, UROCE_QPS_RTS);
}

/* A session with one PD, one CQ and @p n_qp (1 or 2) raw_qp_open() QPs, of @p caps. */
static void
raw_open_caps(struct raw *r, unsigned int n_qp, const struct raw_caps *caps)
{
	struct uroce_shm_msg_hello_req hq = {.abi_major = UROCE_SHM_ABI_MAJOR};
	struct uroce_shm_msg_hello_resp hr;
	struct uroce_shm_msg_handle pd;
	struct uroce_shm_msg_create_cq_req cq = {.cqe = caps->cqe};
	struct uroce_shm_msg_create_cq_resp cr;
	unsigned int i;
	int fd;

	memset(r, 0, sizeof(*r));
	r->s = raw_connect();
	cr_assert_eq(raw_rpc(r, UROCE_SHM_MSG_HELLO, &hq, sizeof(hq), &hr, sizeof(hr), &fd), 0);
	cr_assert_eq(uroce_shm_segment_map(&r->db, fd, hr.db_seg_size), 0);
	cr_assert_eq(raw_rpc(r, UROCE_SHM_MSG_ALLOC_PD, NULL, 0, &pd, sizeof(pd), NULL), 0);
	cr_assert_eq(raw_rpc(r, UROCE_SHM_MSG_CREATE_CQ, &cq, sizeof(cq), &cr, sizeof(cr), &fd), 0);
	cr_assert_eq(uroce_shm_segment_map(&r->cqseg, fd, cr.seg_size), 0);
	cr_assert_eq(uroce_shm_ring_attach(&r->cq, r->cqseg.addr, r->cqseg.size,
					   UROCE_SHM_RING_CONSUMER, 0), 0);
	cr_assert(n_qp >= 1 && n_qp <= UROCE_ARRAY_SIZE(r->qp));
	for (i = 0; i < n_qp; i++)
		raw_qp_open(r, pd.handle, cr.cq_handle, caps, &r->qp[i]);
	r->n_qp = n_qp;
}

static void
raw_open(struct raw *r, unsigned int n_qp)
{
	raw_open_caps(r, n_qp, &raw_small);
}

static void
raw_close(struct raw *r)
{
	unsigned int i;

	for (i = 0; i < r->n_qp; i++)
		uroce_shm_segment_unmap(&r->qp[i].seg);
	uroce_shm_segment_unmap(&r->cqseg);
	uroce_shm_segment_unmap(&r->db);
	close(r->s);
}

/* Poll the daemon until a CQE arrives in the raw client's CQ. */
static struct uroce_shm_cqe
raw_cqe(struct raw *r)
{
	struct uroce_shm_cqe c;
	double end = dt_now_s() + 10;

	while (uroce_shm_ring_used_count(&r->cq) == 0 && dt_now_s() < end) {
		uroce_daemon_poll(dmn);
		dt_nap_us(20);
	}
	cr_assert_eq(uroce_shm_ring_cons_peek(&r->cq, 1), 1, "no CQE");
	memcpy(&c, uroce_shm_ring_cons_slot(&r->cq, 0), sizeof(c));
	uroce_shm_ring_cons_release(&r->cq, 1);
	return c;
}

/* Post a signaled WQE of @p opcode with no SGE, and no doorbell. */
static void
raw_post_op(struct raw_qp *q, uint64_t wr_id, uint8_t opcode)
{
	struct uroce_shm_send_wqe w;

	memset(&w, 0, sizeof(w));
	w.wr_id = wr_id;
	w.opcode = opcode;
	w.send_flags = UROCE_SEND_SIGNALED;
	cr_assert_eq(uroce_shm_ring_enqueue_burst(&q->sq, &w, 1), 1);
}

/* Post a signaled WQE of an opcode that does not exist, with no doorbell:
 * it completes in error at once, and that CQE says when the worker took it. */
static void
raw_post_bad(struct raw_qp *q, uint64_t wr_id)
{
	raw_post_op(q, wr_id, 42);
}

Test(daemon, hostile_rings_and_doorbells_never_crash_it, .timeout = 60)
{
	struct uroce_shm_send_wqe w;
	struct uroce_shm_db_block *db;
	struct uroce_shm_msg_query_qp_req qq;
	struct uroce_shm_msg_query_qp_resp qr;
	struct uroce_daemon_stats st;
	struct uroce_shm_cqe c;
	struct raw r;
	int i;

	start_daemon();
	raw_open(&r, 1);
	db = r.db.addr;
	/* Expect: a CQ "eventfd" that is a pipe, or a blocking eventfd, is refused
	 * (the daemon must never get SIGPIPE or block on a client's descriptor). */
	{
		struct uroce_shm_msg_create_cq_req cq = {.cqe = 4, .flags = UROCE_SHM_CQ_F_EVENTFD};
		struct uroce_shm_msg_create_cq_resp cr;
		int p[2], efd;

		cr_assert(pipe2(p, O_NONBLOCK) == 0);
		close(p[0]);
		cr_expect_eq(raw_rpc_fd(&r, UROCE_SHM_MSG_CREATE_CQ, &cq, sizeof(cq), p[1], &cr,
					sizeof(cr), NULL), -EINVAL);
		close(p[1]);
		efd = eventfd(0, 0);
		cr_expect_eq(raw_rpc_fd(&r, UROCE_SHM_MSG_CREATE_CQ, &cq, sizeof(cq), efd, &cr,
					sizeof(cr), NULL), -EINVAL);
		close(efd);
	}
	/* Every doorbell bit set, most for slots with no QP. */
	db->summary = ~0ull;
	for (i = 0; i < (int)UROCE_SHM_DB_WORDS; i++)
		db->words[i] = ~0ull;
	for (i = 0; i < 10; i++)
		uroce_daemon_poll(dmn);
	/* A WQE with an opcode that does not exist, then a well-formed SEND. */
	raw_post_bad(&r.qp[0], 0xbad);
	memset(&w, 0, sizeof(w));
	w.wr_id = 0x600d;
	w.opcode = UROCE_WR_SEND;
	w.send_flags = UROCE_SEND_SIGNALED;
	cr_assert_eq(uroce_shm_ring_enqueue_burst(&r.qp[0].sq, &w, 1), 1);
	uroce_shm_db_ring(db, r.qp[0].slot);
	/* Expect: the bad WQE completes LOC_QP_OP_ERR, the QP is in ERR and the
	 * next WQE is flushed. */
	c = raw_cqe(&r);
	cr_expect_eq(c.wr_id, 0xbad);
	cr_expect_eq(c.status, UROCE_WC_LOC_QP_OP_ERR);
	cr_expect_eq(c.qp_num, r.qp[0].qpn);
	c = raw_cqe(&r);
	cr_expect_eq(c.wr_id, 0x600d);
	cr_expect_eq(c.status, UROCE_WC_WR_FLUSH_ERR);
	memset(&qq, 0, sizeof(qq));
	qq.qp_handle = r.qp[0].handle;
	cr_assert_eq(raw_rpc(&r, UROCE_SHM_MSG_QUERY_QP, &qq, sizeof(qq), &qr, sizeof(qr), NULL),
		     0);
	cr_expect_eq(qr.attr.qp_state, UROCE_QPS_ERR);
	/* A producer index far beyond the ring: counted, never followed. */
	r.qp[0].sq.hdr->prod += 100000;
	uroce_shm_db_ring(db, r.qp[0].slot);
	for (i = 0; i < 10; i++)
		uroce_daemon_poll(dmn);
	uroce_daemon_stats(dmn, &st);
	cr_expect_eq(st.wqe_rejected, 1);
	cr_expect_eq(st.ring_corrupt, 1);
	cr_expect_eq(st.qps, 1);
	raw_close(&r);
	dc_expect_all_reclaimed(dmn);
	uroce_daemon_destroy(dmn);
}

/* Poll the daemon @p rounds times. @return the CQEs then in @p r's CQ. */
static uint32_t
raw_rounds(struct raw *r, int rounds)
{
	while (rounds-- > 0)
		uroce_daemon_poll(dmn);
	return uroce_shm_ring_used_count(&r->cq);
}

Test(daemon, slots_with_work_are_looked_at_without_their_doorbell_until_idle, .timeout = 60)
{
	struct uroce_shm_db_block *db;
	struct uroce_shm_cqe c;
	struct raw_qp *a, *b;
	struct raw r;

	start_daemon();
	raw_open(&r, 2);
	db = r.db.addr;
	a = &r.qp[0];
	b = &r.qp[1];
	raw_post_bad(a, 1);
	uroce_shm_db_ring(db, a->slot);
	c = raw_cqe(&r);
	cr_expect_eq(c.wr_id, 1);
	cr_expect_neq(c.status, UROCE_WC_SUCCESS);
	/* Expect: A just had work, so a WQE posted without its doorbell is
	 * taken within a round or two. */
	raw_post_bad(a, 2);
	cr_expect_eq(raw_rounds(&r, 2), 1, "a busy slot's ring was not looked at");
	c = raw_cqe(&r);
	cr_expect_eq(c.wr_id, 2);
	/* Expect: B's doorbell, rung while A is hot, is read within the
	 * worker's HARVEST_EVERY (4) rounds: a busy QP does not starve others. */
	raw_post_bad(b, 3);
	uroce_shm_db_ring(db, b->slot);
	cr_expect_eq(raw_rounds(&r, 5), 1, "a doorbell waited behind a busy slot");
	c = raw_cqe(&r);
	cr_expect_eq(c.wr_id, 3);
	cr_expect_eq(c.qp_num, b->qpn);
	/* Expect: after HOT_IDLE_ROUNDS (64) rounds with nothing, both wait for
	 * their doorbells again (an idle QP costs its worker no look), and
	 * their doorbells are read at once. */
	cr_expect_eq(raw_rounds(&r, 200), 0);
	raw_post_bad(a, 4);
	raw_post_bad(b, 5);
	cr_expect_eq(raw_rounds(&r, 50), 0, "an idle slot's ring was looked at");
	uroce_shm_db_ring(db, a->slot);
	uroce_shm_db_ring(db, b->slot);
	cr_expect_eq(raw_rounds(&r, 3), 2, "doorbells of idle slots were not read at once");
	c = raw_cqe(&r);
	cr_expect(c.wr_id == 4 || c.wr_id == 5);
	c = raw_cqe(&r);
	cr_expect(c.wr_id == 4 || c.wr_id == 5);
	raw_close(&r);
	dc_expect_all_reclaimed(dmn);
	uroce_daemon_destroy(dmn);
}

/* Post @p n receives with no SGE, wr_ids from @p first on, and ring. */
static void
raw_post_recvs(struct raw *r, struct raw_qp *q, uint64_t first, uint32_t n)
{
	struct uroce_shm_recv_wqe w;
	uint32_t i;

	memset(&w, 0, sizeof(w));
	for (i = 0; i < n; i++) {
		w.wr_id = first + i;
		cr_assert_eq(uroce_shm_ring_enqueue_burst(&q->rq, &w, 1), 1);
	}
	uroce_shm_db_ring(r->db.addr, q->slot);
}

/* @return the daemon's count of WQEs taken from client rings. */
static uint64_t
wqes_taken(void)
{
	struct uroce_daemon_stats st;

	uroce_daemon_stats(dmn, &st);
	return st.wqes;
}

/* Post @p n receives (raw_post_recvs()), let the daemon run, and expect
 * some of them left in the ring: the engine holds enough already. */
static void
post_recvs_expect_some_left(struct raw *r, struct raw_qp *q, uint64_t first, uint32_t n)
{
	uint64_t before = wqes_taken();
	int i;

	raw_post_recvs(r, q, first, n);
	for (i = 0; i < 200; i++)
		uroce_daemon_poll(dmn);
	cr_expect_lt(wqes_taken() - before, n,
		     "every receive was taken at once: this test no longer covers those left behind");
}

/* Expect the next @p n receive CQEs of @p r to be wr_ids @p first on, in
 * order, with @p status; send CQEs between them are skipped. */
static void
expect_recvs(struct raw *r, uint64_t first, uint32_t n, int status)
{
	uint32_t got = 0;

	while (got < n) {
		struct uroce_shm_cqe c = raw_cqe(r);

		if (!(c.opcode & UROCE_WC_RECV))
			continue;
		cr_assert_eq(c.wr_id, first + got, "receive %u: wr_id %llu", got,
			     (unsigned long long)c.wr_id);
		cr_assert_eq(c.status, status, "receive %u: status %d", got, c.status);
		got++;
	}
}

Test(daemon, receives_left_in_the_ring_are_taken_in_order_flushed_and_reset, .timeout = 60)
{
	const struct raw_caps caps = {.send_wr = 32, .recv_wr = 1024, .cqe = 2048};
	struct uroce_shm_send_wqe w;
	struct raw_qp *q;
	struct raw r;
	uint32_t sent = 0, batch;
	int i;

	start_daemon();
	raw_open_caps(&r, 1, &caps);
	q = &r.qp[0];
	/* More receives than the engine takes ahead (the worker's RQ_LOW), in
	 * two batches, with a doorbell for each. */
	raw_post_recvs(&r, q, 1000, 300);
	for (i = 0; i < 20; i++)
		uroce_daemon_poll(dmn);
	post_recvs_expect_some_left(&r, q, 1300, 400);
	/* Expect: 700 zero-length SENDs to itself consume them all, in order. */
	memset(&w, 0, sizeof(w));
	w.opcode = UROCE_WR_SEND;
	w.send_flags = UROCE_SEND_SIGNALED;
	while (sent < 700) {
		batch = 700 - sent < 16 ? 700 - sent : 16;
		for (i = 0; i < (int)batch; i++) {
			w.wr_id = sent + (uint32_t)i;
			cr_assert_eq(uroce_shm_ring_enqueue_burst(&q->sq, &w, 1), 1);
		}
		uroce_shm_db_ring(r.db.addr, q->slot);
		expect_recvs(&r, 1000 + sent, batch, UROCE_WC_SUCCESS);
		sent += batch; /* the send CQEs are skipped by the next expect_recvs() */
	}
	/* Expect: receives left in the ring when the QP goes to ERR are flushed
	 * too, in order, with no doorbell after the modify. */
	post_recvs_expect_some_left(&r, q, 5000, 400);
	raw_qp_to(&r, q, UROCE_QPS_ERR);
	expect_recvs(&r, 5000, 400, UROCE_WC_WR_FLUSH_ERR);
	/* Expect: those left in the ring when the QP goes to RESET are gone
	 * with the rest (no completion), so the first receive posted after it
	 * is the one the next SEND finds. */
	raw_qp_to(&r, q, UROCE_QPS_RESET);
	raw_qp_to(&r, q, UROCE_QPS_INIT);
	post_recvs_expect_some_left(&r, q, 7000, 400);
	raw_qp_to(&r, q, UROCE_QPS_RESET);
	for (i = 0; i < 50; i++)
		uroce_daemon_poll(dmn);
	cr_expect_eq(uroce_shm_ring_used_count(&r.cq), 0, "RESET completed receives");
	raw_qp_to(&r, q, UROCE_QPS_INIT);
	raw_qp_to(&r, q, UROCE_QPS_RTR);
	raw_qp_to(&r, q, UROCE_QPS_RTS);
	raw_post_recvs(&r, q, 9000, 1);
	w.wr_id = 9000;
	cr_assert_eq(uroce_shm_ring_enqueue_burst(&q->sq, &w, 1), 1);
	uroce_shm_db_ring(r.db.addr, q->slot);
	expect_recvs(&r, 9000, 1, UROCE_WC_SUCCESS);
	raw_close(&r);
	dc_expect_all_reclaimed(dmn);
	uroce_daemon_destroy(dmn);
}

/* Post a signaled zero-length RDMA WRITE to @p q's own QP, with a doorbell
 * if @p ring. No R_Key is checked for no data (C9-88), but the QP's remote
 * write access is (raw_qp_to()). */
static void
raw_post_write0(struct raw *r, struct raw_qp *q, uint64_t wr_id, bool ring)
{
	raw_post_op(q, wr_id, UROCE_WR_RDMA_WRITE);
	if (ring)
		uroce_shm_db_ring(r->db.addr, q->slot);
}

Test(daemon, sends_left_in_the_ring_at_reset_are_discarded, .timeout = 60)
{
	struct uroce_shm_cqe c;
	struct raw_qp *q;
	struct raw r;

	start_daemon();
	raw_open(&r, 1);
	q = &r.qp[0];
	/* A WRITE whose doorbell was rung is done. */
	raw_post_write0(&r, q, 1, true);
	c = raw_cqe(&r);
	cr_expect_eq(c.wr_id, 1);
	cr_expect_eq(c.status, UROCE_WC_SUCCESS);
	/* Two more with no doorbell, once the slot is idle: they stay in the
	 * ring, as if the QP were reset before the worker read the doorbell. */
	cr_expect_eq(raw_rounds(&r, 200), 0);
	raw_post_write0(&r, q, 2, false);
	raw_post_write0(&r, q, 3, false);
	cr_expect_eq(raw_rounds(&r, 50), 0, "an idle slot's ring was looked at");
	/* Expect: RESET empties the SQ with no completion (IBA 10.3.1), so the
	 * first CQE once the QP is back in RTS is the WRITE posted after it. */
	raw_qp_to(&r, q, UROCE_QPS_RESET);
	cr_expect_eq(raw_rounds(&r, 50), 0, "RESET completed sends");
	raw_qp_to(&r, q, UROCE_QPS_INIT);
	raw_qp_to(&r, q, UROCE_QPS_RTR);
	raw_qp_to(&r, q, UROCE_QPS_RTS);
	raw_post_write0(&r, q, 4, true);
	c = raw_cqe(&r);
	cr_expect_eq(c.wr_id, 4, "a send posted before RESET was executed after it (wr_id %llu)",
		     (unsigned long long)c.wr_id);
	cr_expect_eq(c.status, UROCE_WC_SUCCESS);
	cr_expect_eq(raw_rounds(&r, 50), 0, "more than one completion after RESET");
	raw_close(&r);
	dc_expect_all_reclaimed(dmn);
	uroce_daemon_destroy(dmn);
}
