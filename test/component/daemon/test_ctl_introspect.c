/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Component tests of uroce-ctl's daemon subcommands (devices, gids, qps,
 * clients, counters) and of the introspection messages behind them
 * (LIST_SESSIONS, LIST_QPS, QUERY_COUNTERS; doc/shm-abi.md).
 *
 * Each test starts uroced_lite (lib/daemon over its loopback port) on a
 * socket of its own, acts as a liburoce client itself (PD, MR, CQ, QPs, an
 * RDMA WRITE between two of its QPs), then runs the built uroce-ctl binary
 * and checks what it printed against what the client created. The JSON
 * output has a fixed key order (doc/uroce-ctl.md), so an object is found by
 * its leading key and checked field by field.
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uroce_shm.h"
#include "uroce_verbs.h"

#include "daemon_test_util.h"

#define BUF_SIZE 8192
#define OUT_MAX (256 * 1024)

static char sock_path[108];
static pid_t lite_pid = -1;
static int lite_out = -1; /* uroced_lite's stdout */

struct run {
	int status;     /* exit code, or -1 if it did not exit normally */
	char *out;      /* stdout, NUL-terminated */
	char *err;      /* stderr */
};

static void
start_lite(void)
{
	cr_assert_not_null(getenv("UROCED_LITE"), "UROCED_LITE not set (run through meson test)");
	dt_sock_path(sock_path, sizeof(sock_path), "ctl");
	/* 0666: the unprivileged-client test connects as another uid. */
	lite_pid = dt_lite_start(sock_path, "666", &lite_out);
	cr_assert_gt(lite_pid, 0, "uroced_lite did not start: %s", strerror(-lite_pid));
}

static void
stop_lite(void)
{
	dt_lite_stop(lite_pid, lite_out);
	lite_pid = -1;
	lite_out = -1;
	unlink(sock_path);
}

/* Read what a pipe has into *buf (grown up to OUT_MAX). @return false at EOF. */
static bool
drain(int fd, char **buf, size_t *len)
{
	char tmp[4096];
	ssize_t n = read(fd, tmp, sizeof(tmp));

	if (n <= 0)
		return false;
	cr_assert_lt(*len + (size_t)n, (size_t)OUT_MAX, "output too long");
	*buf = realloc(*buf, *len + (size_t)n + 1);
	cr_assert_not_null(*buf);
	memcpy(*buf + *len, tmp, (size_t)n);
	*len += (size_t)n;
	(*buf)[*len] = '\0';
	return true;
}

/*
 * Run uroce-ctl with @p args (NULL-terminated, without argv[0]) and collect its
 * output; @p uid >= 0 runs it as that uid (setuid in the child).
 */
static void
run_ctl_as(struct run *r, int uid, const char *const *args)
{
	const char *exe = getenv("UROCE_CTL");
	const char *argv[16];
	int po[2], pe[2], status, i;
	size_t lo = 0, le = 0;
	bool open_o = true, open_e = true;
	double end = dt_now_s() + 20;
	pid_t pid;

	cr_assert_not_null(exe, "UROCE_CTL not set (run through meson test)");
	argv[0] = exe;
	for (i = 0; args[i] != NULL && i < 14; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	cr_assert(pipe(po) == 0 && pipe(pe) == 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		dup2(po[1], STDOUT_FILENO);
		dup2(pe[1], STDERR_FILENO);
		close(po[0]);
		close(pe[0]);
		if (uid >= 0 && (setgid((gid_t)uid) != 0 || setuid((uid_t)uid) != 0))
			_exit(126);
		execv(exe, (char *const *)argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	r->out = calloc(1, 1);
	r->err = calloc(1, 1);
	while (open_o || open_e) {
		struct pollfd p[2] = {{.fd = open_o ? po[0] : -1, .events = POLLIN},
				      {.fd = open_e ? pe[0] : -1, .events = POLLIN}};

		cr_assert(dt_now_s() < end, "uroce-ctl did not finish in 20 s");
		if (poll(p, 2, 100) <= 0)
			continue;
		if (open_o && (p[0].revents & (POLLIN | POLLHUP)))
			open_o = drain(po[0], &r->out, &lo);
		if (open_e && (p[1].revents & (POLLIN | POLLHUP)))
			open_e = drain(pe[0], &r->err, &le);
	}
	close(po[0]);
	close(pe[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void
run_ctl(struct run *r, const char *const *args)
{
	run_ctl_as(r, -1, args);
}

static void
run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* One JSON document: one line, an object, ending in a newline. */
static void
expect_one_document(const struct run *r)
{
	size_t n = strlen(r->out);

	cr_assert_eq(r->status, 0, "uroce-ctl failed (%d): %s", r->status, r->err);
	cr_assert_gt(n, 2);
	cr_expect_eq(r->out[0], '{', "%s", r->out);
	cr_expect_eq(r->out[n - 1], '\n');
	cr_expect_eq(r->out[n - 2], '}');
	cr_expect_null(memchr(r->out, '\n', n - 1), "more than one line");
}

/*
 * The object that starts with @p lead (e.g. {"qpn":17,), as a new string up
 * to its closing brace (the entries of uroce-ctl's arrays hold no nested
 * objects), or NULL.
 */
static char *
find_obj(const char *doc, const char *lead)
{
	const char *p = strstr(doc, lead);
	const char *e;

	if (p == NULL)
		return NULL;
	e = strchr(p, '}');
	if (e == NULL)
		return NULL;
	return strndup(p, (size_t)(e - p + 1));
}

/* Count occurrences of @p s in @p doc. */
static int
count_of(const char *doc, const char *s)
{
	int n = 0;

	while ((doc = strstr(doc, s)) != NULL) {
		n++;
		doc += strlen(s);
	}
	return n;
}

/* The number after "key": in @p doc (the first one after @p after, if not NULL). */
static long long
num_after(const char *doc, const char *after, const char *key)
{
	char pat[128];
	const char *p = doc;

	if (after != NULL) {
		p = strstr(doc, after);
		cr_assert_not_null(p, "no %s in %s", after, doc);
	}
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(p, pat);
	cr_assert_not_null(p, "no %s in output", key);
	return strtoll(p + strlen(pat), NULL, 10);
}

/* ------------------------------------------------------------------------ */
/* A liburoce client in this process                                         */
/* ------------------------------------------------------------------------ */

struct client {
	struct uroce_context *ctx;
	struct uroce_pd *pd;
	uint8_t *buf;
	struct uroce_mr *mr;
	struct uroce_cq *cq;
	struct uroce_qp *a, *b; /* RC, connected to each other, RTS */
	struct uroce_qp *ud;    /* UD, RESET */
	uint8_t gid[16];
};

static struct uroce_qp *
qp_create(struct client *c, int type)
{
	struct uroce_qp *qp = dt_qp_create(c->pd, c->cq, NULL, type, 16, 1);

	cr_assert_not_null(qp, "create_qp: %s", strerror(errno));
	return qp;
}

static void
qp_to_rts(struct uroce_qp *qp, const uint8_t gid[16], uint32_t dqpn, uint32_t rq_psn,
	  uint32_t sq_psn)
{
	const struct dt_rc rc = {.dgid = gid, .dqpn = dqpn, .rq_psn = rq_psn, .sq_psn = sq_psn,
				 .rd_atomic = 1};

	cr_assert_eq(dt_qp_to_rts(qp, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE, &rc),
		     0);
}

static void
client_open(struct client *c)
{
	memset(c, 0, sizeof(*c));
	c->ctx = uroce_open_device(sock_path);
	cr_assert_not_null(c->ctx, "open_device: %s", strerror(errno));
	cr_assert_eq(uroce_query_gid(c->ctx, 1, 0, c->gid), 0);
	c->pd = uroce_alloc_pd(c->ctx);
	cr_assert_not_null(c->pd);
	c->buf = uroce_alloc_buf(c->ctx, BUF_SIZE);
	cr_assert_not_null(c->buf);
	c->mr = uroce_reg_mr(c->pd, c->buf, BUF_SIZE,
			     UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE);
	cr_assert_not_null(c->mr);
	c->cq = uroce_create_cq(c->ctx, 64, NULL);
	cr_assert_not_null(c->cq);
	c->a = qp_create(c, UROCE_QPT_RC);
	c->b = qp_create(c, UROCE_QPT_RC);
	c->ud = qp_create(c, UROCE_QPT_UD);
	/* Distinct PSNs so that each side's sq_psn/rq_psn is recognisable. */
	qp_to_rts(c->a, c->gid, c->b->qp_num, 0x200, 0x100);
	qp_to_rts(c->b, c->gid, c->a->qp_num, 0x100, 0x200);
}

/* Destroy what client_open() created (the QPs still alive), then hang up. */
static void
client_close(struct client *c)
{
	if (c->ud != NULL)
		cr_expect_eq(uroce_destroy_qp(c->ud), 0);
	cr_expect_eq(uroce_destroy_qp(c->b), 0);
	cr_expect_eq(uroce_destroy_qp(c->a), 0);
	cr_expect_eq(uroce_destroy_cq(c->cq), 0);
	cr_expect_eq(uroce_dereg_mr(c->mr), 0);
	cr_expect_eq(uroce_free_buf(c->ctx, c->buf), 0);
	cr_expect_eq(uroce_dealloc_pd(c->pd), 0);
	cr_expect_eq(uroce_close_device(c->ctx), 0);
}

/* Post a signaled RDMA WRITE of @p len bytes on @p qp into the client's buffer. */
static void
post_write(struct client *c, struct uroce_qp *qp, uint32_t len)
{
	struct uroce_sge sge = {.addr = (uintptr_t)c->buf, .length = len, .lkey = c->mr->lkey};
	struct uroce_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 7;
	wr.opcode = UROCE_WR_RDMA_WRITE;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)c->buf + BUF_SIZE / 2;
	wr.wr.rdma.rkey = c->mr->rkey;
	cr_assert_eq(uroce_post_send(qp, &wr, &bad), 0);
}

/* RDMA WRITE of @p len bytes from a to b, signaled; wait for its completion. */
static void
client_write(struct client *c, uint32_t len)
{
	struct uroce_wc wc;
	double end = dt_now_s() + 10;
	int n;

	post_write(c, c->a, len);
	while ((n = uroce_poll_cq(c->cq, 1, &wc)) == 0) {
		cr_assert(dt_now_s() < end, "no completion in 10 s");
		dt_nap_ms(1);
	}
	cr_assert_eq(n, 1);
	cr_assert_eq(wc.status, UROCE_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 7);
}

TestSuite(ctl_introspect, .init = start_lite, .fini = stop_lite, .timeout = 60);

/* ------------------------------------------------------------------------ */
/* JSON output                                                               */
/* ------------------------------------------------------------------------ */

Test(ctl_introspect, qps_json_match_what_the_client_created)
{
	const char *args[] = {"qps", "--json", "-s", sock_path, NULL};
	struct client c;
	struct run r;
	char lead[64], want[64], *o;

	client_open(&c);
	run_ctl(&r, args);
	expect_one_document(&r);
	/* Expect: exactly the three QPs of this client. */
	cr_expect_eq(count_of(r.out, "\"qpn\":"), 3, "%s", r.out);

	/* Expect: a is RC, RTS, ours, connected to b with its PSNs and MTU. */
	snprintf(lead, sizeof(lead), "{\"qpn\":%u,", c.a->qp_num);
	o = find_obj(r.out, lead);
	cr_assert_not_null(o, "QP %u missing: %s", c.a->qp_num, r.out);
	cr_expect_not_null(strstr(o, "\"type\":\"RC\",\"state\":\"RTS\""), "%s", o);
	snprintf(want, sizeof(want), "\"pid\":%d,", (int)getpid());
	cr_expect_not_null(strstr(o, want), "%s", o);
	snprintf(want, sizeof(want), "\"dest_qpn\":%u,", c.b->qp_num);
	cr_expect_not_null(strstr(o, want), "%s", o);
	cr_expect_not_null(strstr(o, "\"sq_psn\":256,\"rq_psn\":512,"), "%s", o);
	cr_expect_not_null(strstr(o, "\"path_mtu\":1024,"), "%s", o);
	cr_expect_not_null(strstr(o, "\"dgid\":\"::ffff:198.18.0.1\""), "%s", o);
	cr_expect_not_null(strstr(o, "\"ring_failed\":false"), "%s", o);
	free(o);

	/* Expect: b mirrors a. */
	snprintf(lead, sizeof(lead), "{\"qpn\":%u,", c.b->qp_num);
	o = find_obj(r.out, lead);
	cr_assert_not_null(o);
	snprintf(want, sizeof(want), "\"dest_qpn\":%u,", c.a->qp_num);
	cr_expect_not_null(strstr(o, want), "%s", o);
	cr_expect_not_null(strstr(o, "\"sq_psn\":512,\"rq_psn\":256,"), "%s", o);
	free(o);

	/* Expect: the UD QP never left RESET: no path, no peer. */
	snprintf(lead, sizeof(lead), "{\"qpn\":%u,", c.ud->qp_num);
	o = find_obj(r.out, lead);
	cr_assert_not_null(o);
	cr_expect_not_null(strstr(o, "\"type\":\"UD\",\"state\":\"RESET\""), "%s", o);
	cr_expect_not_null(strstr(o, "\"dgid\":null"), "%s", o);
	free(o);
	run_free(&r);

	/* Expect: a QP moved to ERR shows ERR. */
	{
		struct uroce_qp_attr at = {.qp_state = UROCE_QPS_ERR};

		cr_assert_eq(uroce_modify_qp(c.b, &at, UROCE_QP_STATE), 0);
	}
	run_ctl(&r, args);
	expect_one_document(&r);
	snprintf(lead, sizeof(lead), "{\"qpn\":%u,", c.b->qp_num);
	o = find_obj(r.out, lead);
	cr_assert_not_null(o);
	cr_expect_not_null(strstr(o, "\"state\":\"ERR\""), "%s", o);
	free(o);
	run_free(&r);

	/* Expect: a destroyed QP is gone from the list. */
	snprintf(lead, sizeof(lead), "{\"qpn\":%u,", c.ud->qp_num);
	cr_assert_eq(uroce_destroy_qp(c.ud), 0);
	c.ud = NULL;
	run_ctl(&r, args);
	expect_one_document(&r);
	cr_expect_eq(count_of(r.out, "\"qpn\":"), 2, "%s", r.out);
	cr_expect_null(strstr(r.out, lead));
	run_free(&r);
	client_close(&c);
}

Test(ctl_introspect, qps_paged_beyond_one_message)
{
	const char *args[] = {"qps", "--json", "-s", sock_path, NULL};
	struct uroce_qp *extra[3 * UROCE_SHM_LIST_QPS_MAX];
	char lead[64];
	struct client c;
	struct run r;
	unsigned int i;

	client_open(&c);
	for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		extra[i] = qp_create(&c, UROCE_QPT_UD);
	run_ctl(&r, args);
	expect_one_document(&r);
	/* Expect: 3 + 21 QPs over four LIST_QPS replies, each exactly once. */
	cr_expect_eq(count_of(r.out, "\"qpn\":"), 3 + 3 * UROCE_SHM_LIST_QPS_MAX);
	for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		snprintf(lead, sizeof(lead), "{\"qpn\":%u,", extra[i]->qp_num);
		cr_expect_eq(count_of(r.out, lead), 1, "QP %u", extra[i]->qp_num);
	}
	run_free(&r);
	for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		cr_expect_eq(uroce_destroy_qp(extra[i]), 0);
	client_close(&c);
}

Test(ctl_introspect, clients_json_lists_the_client_pid)
{
	const char *args[] = {"clients", "--json", "-s", sock_path, NULL};
	struct uroce_context *more[UROCE_SHM_LIST_SESSIONS_MAX];
	char lead[64], *o;
	struct client c;
	struct run r;
	unsigned int i;

	client_open(&c);
	run_ctl(&r, args);
	expect_one_document(&r);
	/* Expect: this process's session with what it holds... */
	snprintf(lead, sizeof(lead), "\"pid\":%d,", (int)getpid());
	o = find_obj(r.out, lead);
	cr_assert_not_null(o, "pid %d missing: %s", (int)getpid(), r.out);
	cr_expect_not_null(strstr(o, "\"hello\":true,\"self\":false,"), "%s", o);
	cr_expect_not_null(strstr(o, "\"pds\":1,\"mrs\":1,\"cqs\":1,\"qps\":3,\"ahs\":0,"
				  "\"srqs\":0}"), "%s", o);
	cr_expect_eq(num_after(o, NULL, "segments"), 1, "%s", o); /* uroce_alloc_buf */
	free(o);
	/* ...and uroce-ctl's own session, marked self. */
	cr_expect_eq(count_of(r.out, "\"self\":true"), 1, "%s", r.out);
	cr_expect_eq(count_of(r.out, "\"client_id\":"), 2, "%s", r.out);
	run_free(&r);

	/* Expect: more sessions than one reply holds are all listed, once. */
	for (i = 0; i < UROCE_SHM_LIST_SESSIONS_MAX; i++) {
		more[i] = uroce_open_device(sock_path);
		cr_assert_not_null(more[i]);
	}
	run_ctl(&r, args);
	expect_one_document(&r);
	cr_expect_eq(count_of(r.out, "\"client_id\":"), 2 + UROCE_SHM_LIST_SESSIONS_MAX, "%s",
		     r.out);
	cr_expect_eq(count_of(r.out, lead), 1 + UROCE_SHM_LIST_SESSIONS_MAX, "%s", r.out);
	run_free(&r);
	for (i = 0; i < UROCE_SHM_LIST_SESSIONS_MAX; i++)
		uroce_close_device(more[i]);
	client_close(&c);
}

Test(ctl_introspect, counters_move_after_traffic)
{
	const char *dev_args[] = {"counters", "--json", "-s", sock_path, NULL};
	char qpn[16];
	const char *qp_args[] = {"counters", "--json", "--qp", qpn, "-s", sock_path, NULL};
	long long tx0, tx1, wr0, wr1, cqe0, cqe1;
	struct client c;
	struct run r;

	client_open(&c);
	run_ctl(&r, dev_args);
	expect_one_document(&r);
	cr_expect_not_null(strstr(r.out, "{\"scope\":\"device\",\"dev\":\"uroce0\",\"counters\":"
				      "{\"daemon\":{\"sessions\":"), "%s", r.out);
	/* Expect: the daemon counts this client's objects. */
	cr_expect_eq(num_after(r.out, NULL, "qps"), 3);
	cr_expect_eq(num_after(r.out, NULL, "mrs"), 1);
	tx0 = num_after(r.out, "\"transport\":", "tx_packets");
	wr0 = num_after(r.out, "\"transport\":", "rx_write_requests");
	cqe0 = num_after(r.out, NULL, "cqe_written");
	run_free(&r);

	/* 3 KiB at MTU 1024: three WRITE packets, then the ACK. */
	client_write(&c, 3072);

	run_ctl(&r, dev_args);
	expect_one_document(&r);
	tx1 = num_after(r.out, "\"transport\":", "tx_packets");
	wr1 = num_after(r.out, "\"transport\":", "rx_write_requests");
	cqe1 = num_after(r.out, NULL, "cqe_written");
	/* Expect: three WRITE packets and at least one ACK went out and in. */
	cr_expect_geq(tx1 - tx0, 4, "tx_packets %lld -> %lld", tx0, tx1);
	cr_expect_eq(wr1 - wr0, 3, "rx_write_requests %lld -> %lld", wr0, wr1);
	cr_expect_eq(cqe1 - cqe0, 1, "cqe_written %lld -> %lld", cqe0, cqe1);
	cr_expect_geq(num_after(r.out, NULL, "loop_frames"), 4);
	run_free(&r);

	/* Expect: per QP, the responder b counted the WRITEs, the requester a did not. */
	snprintf(qpn, sizeof(qpn), "%u", c.b->qp_num);
	run_ctl(&r, qp_args);
	expect_one_document(&r);
	cr_expect_not_null(strstr(r.out, "\"scope\":\"qp\""), "%s", r.out);
	cr_expect_null(strstr(r.out, "\"daemon\":"), "per-QP scope has no daemon group");
	cr_expect_eq(num_after(r.out, NULL, "rx_write_requests"), 3, "%s", r.out);
	cr_expect_geq(num_after(r.out, NULL, "resp_acks_sent"), 1, "%s", r.out);
	run_free(&r);
	snprintf(qpn, sizeof(qpn), "%u", c.a->qp_num);
	run_ctl(&r, qp_args);
	expect_one_document(&r);
	cr_expect_eq(num_after(r.out, NULL, "rx_write_requests"), 0, "%s", r.out);
	cr_expect_eq(num_after(r.out, NULL, "tx_packets"), 3, "%s", r.out);
	run_free(&r);

	/* Expect: drops that belong to no QP are in the device counters too: a
	 * WRITE to a QPN that does not exist is counted as rx_bad_qpn by the
	 * engine itself (no QP's counter could hold it). */
	{
		struct uroce_qp *lost = qp_create(&c, UROCE_QPT_RC);
		long long bad = 0;
		double end = dt_now_s() + 10;

		qp_to_rts(lost, c.gid, 0xabcde, 0, 0);
		post_write(&c, lost, 64);
		while (bad == 0) {
			cr_assert(dt_now_s() < end, "rx_bad_qpn did not move in 10 s");
			run_ctl(&r, dev_args);
			expect_one_document(&r);
			bad = num_after(r.out, "\"transport\":", "rx_bad_qpn");
			run_free(&r);
			if (bad == 0)
				dt_nap_ms(20);
		}
		cr_expect_geq(bad, 1);
		cr_expect_eq(uroce_destroy_qp(lost), 0);
	}

	/* Expect: a QPN that does not exist is an error, exit 2. */
	snprintf(qpn, sizeof(qpn), "%u", 0xfffff0u);
	run_ctl(&r, qp_args);
	cr_expect_eq(r.status, 2);
	cr_expect_not_null(strstr(r.err, "no QP 16777200"), "%s", r.err);
	cr_expect_str_eq(r.out, "");
	run_free(&r);
	client_close(&c);
}

Test(ctl_introspect, devices_and_gids_json)
{
	const char *dargs[] = {"devices", "--json", "-s", sock_path, NULL};
	const char *gargs[] = {"gids", "-j", "--socket", sock_path, NULL};
	struct run r;

	run_ctl(&r, dargs);
	expect_one_document(&r);
	/* Expect: the ABI the daemon answered HELLO with, one device, one port. */
	cr_expect_not_null(strstr(r.out, "\"abi\":{\"major\":1,\"minor\":"), "%s", r.out);
	cr_expect_not_null(strstr(r.out, "\"devices\":[{\"name\":\"uroce0\""), "%s", r.out);
	cr_expect_eq(num_after(r.out, NULL, "phys_port_cnt"), 1);
	cr_expect_eq(num_after(r.out, NULL, "max_sge"), UROCE_MAX_SGE);
	cr_expect_eq(num_after(r.out, NULL, "max_inline_data"), UROCE_MAX_INLINE);
	/* Expect: remote atomics are CPU atomics on the word (issue 16). */
	cr_expect_eq(num_after(r.out, NULL, "atomic_cap"), UROCE_ATOMIC_GLOB);
	cr_expect_not_null(strstr(r.out, "{\"port\":1,\"state\":\"PORT_ACTIVE\","), "%s", r.out);
	cr_expect_not_null(strstr(r.out, "\"link_layer\":\"Ethernet\""), "%s", r.out);
	run_free(&r);

	run_ctl(&r, gargs);
	expect_one_document(&r);
	/* Expect: uroced_lite's default GID 0, ::ffff:198.18.0.1, RoCEv2. */
	cr_expect_not_null(strstr(r.out, "{\"dev\":\"uroce0\",\"port\":1,\"index\":0,"
				      "\"gid\":\"::ffff:198.18.0.1\",\"type\":\"RoCEv2\"}"),
			   "%s", r.out);
	run_free(&r);
}

/* ------------------------------------------------------------------------ */
/* Human output                                                              */
/* ------------------------------------------------------------------------ */

static void
expect_first_line(const char *cmd, const char *prefix)
{
	const char *args[] = {cmd, "-s", sock_path, NULL};
	struct run r;

	run_ctl(&r, args);
	cr_assert_eq(r.status, 0, "%s: %s", cmd, r.err);
	cr_expect_eq(strncmp(r.out, prefix, strlen(prefix)), 0, "%s printed:\n%s", cmd, r.out);
	cr_expect_null(strchr(r.out, '{'), "%s: JSON without --json", cmd);
	run_free(&r);
}

Test(ctl_introspect, human_tables_have_a_header)
{
	const char *args[] = {"qps", "-s", sock_path, NULL};
	char row[64], *line;
	struct client c;
	struct run r;

	client_open(&c);
	/* Expect: each table starts with its header line. */
	expect_first_line("devices", "hca_id:\turoce0\n");
	expect_first_line("gids", "DEV     PORT  INDEX  GID ");
	expect_first_line("qps", "QPN  TYPE  STATE  PID ");
	expect_first_line("clients", "CLIENT  PID ");
	expect_first_line("counters", "GROUP      COUNTER ");
	/* Expect: a row per QP under it, the RC QP a in RTS. */
	run_ctl(&r, args);
	cr_assert_eq(r.status, 0);
	cr_expect_eq(count_of(r.out, "\n"), 1 + 3, "%s", r.out);
	snprintf(row, sizeof(row), "\n%u ", c.a->qp_num);
	line = strstr(r.out, row);
	cr_assert_not_null(line, "%s", r.out);
	line = strndup(line + 1, strcspn(line + 1, "\n"));
	cr_expect_not_null(strstr(line, " RC "), "%s", line);
	cr_expect_not_null(strstr(line, " RTS "), "%s", line);
	cr_expect_not_null(strstr(line, " ::ffff:198.18.0.1 "), "%s", line);
	free(line);
	run_free(&r);
	client_close(&c);
}

/* ------------------------------------------------------------------------ */
/* Errors and visibility                                                     */
/* ------------------------------------------------------------------------ */

Test(ctl_introspect, no_daemon_is_one_clear_line_and_exit_1)
{
	static const char *const cmds[] = {"devices", "gids", "qps", "clients", "counters"};
	char path[128], want[200];
	unsigned int i;

	snprintf(path, sizeof(path), "/tmp/uroce-test-ctl-none-%d.sock", (int)getpid());
	snprintf(want, sizeof(want), "uroce-ctl: cannot connect to uroced at %s: ", path);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const char *args[] = {cmds[i], "--json", "-s", path, NULL};
		struct run r;

		run_ctl(&r, args);
		/* Expect: exit 1, nothing on stdout, one line on stderr with advice. */
		cr_expect_eq(r.status, 1, "%s", cmds[i]);
		cr_expect_str_eq(r.out, "", "%s", cmds[i]);
		cr_expect_eq(strncmp(r.err, want, strlen(want)), 0, "%s: %s", cmds[i], r.err);
		cr_expect_not_null(strstr(r.err, "is uroced running?"), "%s", r.err);
		cr_expect_eq(count_of(r.err, "\n"), 1, "%s", r.err);
		run_free(&r);
	}
}

Test(ctl_introspect, socket_from_environment)
{
	const char *args[] = {"clients", "--json", NULL};
	struct run r;

	/* Expect: without -s, $UROCE_SOCKET names the daemon (as for liburoce). */
	cr_assert_eq(setenv("UROCE_SOCKET", sock_path, 1), 0);
	run_ctl(&r, args);
	expect_one_document(&r);
	cr_expect_eq(count_of(r.out, "\"self\":true"), 1, "%s", r.out);
	run_free(&r);
}

Test(ctl_introspect, other_uid_sees_only_its_own_sessions)
{
	const char *cargs[] = {"clients", "--json", "-s", sock_path, NULL};
	const char *qargs[] = {"qps", "--json", "-s", sock_path, NULL};
	char qpn[16];
	const char *kargs[] = {"counters", "--qp", qpn, "-s", sock_path, NULL};
	const char *dargs[] = {"counters", "--json", "-s", sock_path, NULL};
	struct client c;
	struct run r;

	if (geteuid() != 0)
		cr_skip_test("needs root to run uroce-ctl as another uid");
	client_open(&c);
	/* uid 65534 (nobody): neither 0 nor the daemon's uid. */
	run_ctl_as(&r, 65534, cargs);
	expect_one_document(&r);
	/* Expect: only its own session; root's client is not shown. */
	cr_expect_eq(count_of(r.out, "\"client_id\":"), 1, "%s", r.out);
	cr_expect_not_null(strstr(r.out, "\"uid\":65534,"), "%s", r.out);
	run_free(&r);
	run_ctl_as(&r, 65534, qargs);
	expect_one_document(&r);
	/* Expect: none of root's QPs. */
	cr_expect_str_eq(r.out, "{\"qps\":[]}\n");
	run_free(&r);
	/* Expect: root's QP is "no QP" to it... */
	snprintf(qpn, sizeof(qpn), "%u", c.a->qp_num);
	run_ctl_as(&r, 65534, kargs);
	cr_expect_eq(r.status, 2);
	cr_expect_not_null(strstr(r.err, "no QP"), "%s", r.err);
	run_free(&r);
	/* ...but device-wide counters, which name no process, are readable. */
	run_ctl_as(&r, 65534, dargs);
	expect_one_document(&r);
	cr_expect_eq(num_after(r.out, NULL, "qps"), 3);
	run_free(&r);
	/* Expect: root sees both sessions. */
	run_ctl(&r, cargs);
	expect_one_document(&r);
	cr_expect_eq(count_of(r.out, "\"client_id\":"), 2, "%s", r.out);
	run_free(&r);
	client_close(&c);
}

/* ------------------------------------------------------------------------ */
/* The messages themselves, spoken by hand                                   */
/* ------------------------------------------------------------------------ */

static int
raw_hello(void)
{
	struct uroce_shm_msg_hello_req hq;
	uint8_t buf[UROCE_SHM_MSG_MAX];
	int s, fd;

	s = dt_connect(sock_path);
	cr_assert_geq(s, 0, "connect: %s", strerror(-s));
	memset(&hq, 0, sizeof(hq));
	hq.abi_major = UROCE_SHM_ABI_MAJOR;
	hq.abi_minor = UROCE_SHM_ABI_MINOR;
	cr_assert_gt(dt_msg_send(s, UROCE_SHM_MSG_HELLO, 1, &hq, sizeof(hq), -1), 0);
	cr_assert_gt(dt_msg_recv(s, buf, sizeof(buf), &fd), 0);
	close(fd);
	return s;
}

/* Send @p type with @p body; return the response status, body into @p resp. */
static int
raw_call(int s, uint16_t type, uint32_t seq, const void *body, size_t blen, void *resp,
	 size_t rlen)
{
	struct uroce_shm_msg_hdr h;
	uint8_t buf[UROCE_SHM_MSG_MAX];
	ssize_t len;
	int fd;

	cr_assert_gt(dt_msg_send(s, type, seq, body, blen, -1), 0);
	len = dt_msg_recv(s, buf, sizeof(buf), &fd);
	cr_assert_eq((size_t)len, sizeof(h) + rlen);
	memcpy(&h, buf, sizeof(h));
	cr_assert_eq(h.seq, seq);
	memcpy(resp, buf + sizeof(h), rlen);
	return h.status;
}

Test(ctl_introspect, messages_check_their_fields)
{
	struct uroce_shm_msg_query_counters_resp cr;
	struct uroce_shm_msg_query_counters_req cq;
	struct uroce_shm_msg_list_sessions_resp sr;
	struct uroce_shm_msg_list_qps_resp qr;
	struct uroce_shm_msg_list_req lq;
	struct client c;
	uint32_t start, seen = 0, total = 0, n_cc = 0, n_rej = 0;
	int s = raw_hello();

	client_open(&c);
	/* Expect: flags must be 0. */
	memset(&lq, 0, sizeof(lq));
	lq.flags = 1;
	cr_expect_eq(raw_call(s, UROCE_SHM_MSG_LIST_QPS, 2, &lq, sizeof(lq), &qr, sizeof(qr)),
		     -EINVAL);
	cr_expect_eq(raw_call(s, UROCE_SHM_MSG_LIST_SESSIONS, 3, &lq, sizeof(lq), &sr,
			      sizeof(sr)), -EINVAL);
	/* Expect: a start key past every QPN gives an empty last page. */
	lq.flags = 0;
	lq.start = 0xffffff;
	cr_expect_eq(raw_call(s, UROCE_SHM_MSG_LIST_QPS, 4, &lq, sizeof(lq), &qr, sizeof(qr)), 0);
	cr_expect_eq(qr.page.count, 0);
	cr_expect_eq(qr.page.flags, 0);
	/* Expect: starting at b's QPN skips a (QPNs ascend: a < b < ud). */
	lq.start = c.b->qp_num;
	cr_expect_eq(raw_call(s, UROCE_SHM_MSG_LIST_QPS, 5, &lq, sizeof(lq), &qr, sizeof(qr)), 0);
	cr_expect_eq(qr.page.count, 2);
	cr_expect_eq(qr.q[0].qp_num, c.b->qp_num);
	cr_expect_eq(qr.q[1].qp_num, c.ud->qp_num);
	cr_expect_eq(qr.q[0].qp_state, UROCE_QPS_RTS);
	cr_expect_eq(qr.q[0].pid, (int32_t)getpid());
	cr_expect_eq(qr.q[0].max_send_wr, c.b->cap.max_send_wr);

	/* Expect: unknown scope, a QPN with device scope, reserved flags -> EINVAL. */
	memset(&cq, 0, sizeof(cq));
	cq.scope = 7;
	cr_expect_eq(raw_call(s, UROCE_SHM_MSG_QUERY_COUNTERS, 6, &cq, sizeof(cq), &cr,
			      sizeof(cr)), -EINVAL);
	cq.scope = UROCE_SHM_COUNTERS_DEVICE;
	cq.qp_num = c.a->qp_num;
	cr_expect_eq(raw_call(s, UROCE_SHM_MSG_QUERY_COUNTERS, 7, &cq, sizeof(cq), &cr,
			      sizeof(cr)), -EINVAL);
	cq.qp_num = 0;
	cq.flags = 2;
	cr_expect_eq(raw_call(s, UROCE_SHM_MSG_QUERY_COUNTERS, 8, &cq, sizeof(cq), &cr,
			      sizeof(cr)), -EINVAL);
	/* Expect: a QPN that does not exist -> ENOENT. */
	cq.flags = 0;
	cq.scope = UROCE_SHM_COUNTERS_QP;
	cq.qp_num = 0xabcdef;
	cr_expect_eq(raw_call(s, UROCE_SHM_MSG_QUERY_COUNTERS, 9, &cq, sizeof(cq), &cr,
			      sizeof(cr)), -ENOENT);
	/* Expect: the pages of a QP's counters add up to total, names NUL-terminated;
	 * the transport counters first, then the congestion group (its DCQCN state
	 * and parameters: rp_current_rate_kbps, rpg_time_reset 300, ...), then the
	 * last responder rejection (none on this healthy QP). */
	cq.qp_num = c.a->qp_num;
	start = 0;
	do {
		cq.start = start;
		cr_assert_eq(raw_call(s, UROCE_SHM_MSG_QUERY_COUNTERS, 10 + seen, &cq, sizeof(cq),
				      &cr, sizeof(cr)), 0);
		cr_assert_leq(cr.page.count, UROCE_SHM_COUNTERS_MAX);
		for (unsigned int i = 0; i < cr.page.count; i++) {
			cr_expect_neq(memchr(cr.c[i].name, '\0', sizeof(cr.c[i].name)), NULL);
			if (cr.c[i].group == UROCE_SHM_COUNTER_G_TRANSPORT) {
				cr_expect_eq(n_cc, 0, "%s after the congestion group",
					     cr.c[i].name);
				continue;
			}
			if (cr.c[i].group == UROCE_SHM_COUNTER_G_RESP_REJECT) {
				cr_expect_gt(n_cc, 0, "%s before the congestion group",
					     cr.c[i].name);
				cr_expect_eq(cr.c[i].value, 0, "%s", cr.c[i].name);
				n_rej++;
				continue;
			}
			cr_expect_eq(n_rej, 0, "%s after the rejection group", cr.c[i].name);
			cr_expect_eq(cr.c[i].group, UROCE_SHM_COUNTER_G_CC);
			n_cc++;
			if (strcmp(cr.c[i].name, "rp_limited") == 0)
				cr_expect_eq(cr.c[i].value, 0);
			if (strcmp(cr.c[i].name, "rp_current_rate_kbps") == 0)
				cr_expect_eq(cr.c[i].value, 100000000u, "line rate of an idle QP");
			if (strcmp(cr.c[i].name, "rpg_time_reset") == 0)
				cr_expect_eq(cr.c[i].value, 300);
		}
		seen += cr.page.count;
		total = cr.total;
		if (cr.page.flags & UROCE_SHM_LIST_F_MORE) {
			cr_assert_eq(cr.page.next, start + cr.page.count);
			cr_assert_eq(cr.page.count, UROCE_SHM_COUNTERS_MAX);
		}
		start = cr.page.next;
	} while (cr.page.flags & UROCE_SHM_LIST_F_MORE);
	cr_expect_gt(total, UROCE_SHM_COUNTERS_MAX);
	cr_expect_eq(seen, total);
	cr_expect_gt(n_cc, 7, "the DCQCN state rows and the parameters");
	cr_expect_eq(n_rej, 10, "resp_rejects and the last rejection's fields");
	/* Expect: a start beyond total -> EINVAL. */
	cq.start = total + 1;
	cr_expect_eq(raw_call(s, UROCE_SHM_MSG_QUERY_COUNTERS, 99, &cq, sizeof(cq), &cr,
			      sizeof(cr)), -EINVAL);
	close(s);
	client_close(&c);
}
