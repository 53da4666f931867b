/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Component tests of shared receive queues and asynchronous events through
 * the daemon core (lib/daemon) and liburoce (shm ABI 1.1). The daemon runs in
 * a thread of the test process (uroce_daemon_poll() in a loop, under a lock
 * that uroce_daemon_stats() also takes); the test is its liburoce client over
 * the UNIX socket, and the SIGKILL test forks a separate client process.
 * Traffic goes over the daemon's loopback port (full RoCEv2 frames, parsed
 * again on the way in); the socket lives in /tmp and nothing leaves the host.
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uroce_daemon.h"
#include "uroce_shm.h"
#include "uroce_verbs.h"

#include "daemon_test_util.h"
#include "dt_daemon.h"

#define BUF_SIZE (64 * 1024)
#define MSG_LEN 300
#define SLOT_LEN 1024

static struct dt_daemon dd;

/* The workers' clock when a test sets it (start_daemon_clocked()). */
static _Atomic uint64_t fake_now_us;

static uint64_t
fake_clock(void *ctx)
{
	(void)ctx;
	return atomic_load(&fake_now_us);
}

static void
start_daemon_conf(struct uroce_daemon_conf *conf)
{
	int rc = dt_daemon_start(&dd, "srq", conf);

	cr_assert_eq(rc, 0, "daemon: %s", strerror(-rc));
}

static void
start_daemon(void)
{
	struct uroce_daemon_conf conf;

	memset(&conf, 0, sizeof(conf));
	start_daemon_conf(&conf);
}

/* A daemon whose workers' time moves only when the test moves fake_now_us. */
static void
start_daemon_clocked(void)
{
	struct uroce_daemon_conf conf;

	atomic_store(&fake_now_us, 1000000);
	memset(&conf, 0, sizeof(conf));
	conf.clock_us = fake_clock;
	start_daemon_conf(&conf);
}

static void
stop_daemon(void)
{
	dt_daemon_stop(&dd);
}

static void
stats(struct uroce_daemon_stats *st)
{
	dt_daemon_lock(&dd);
	uroce_daemon_stats(dd.d, st);
	dt_daemon_unlock(&dd);
}


/* One client: context, PD, a registered 64 KiB buffer and one CQ. */
struct ep {
	struct uroce_context *ctx;
	struct uroce_pd *pd;
	uint8_t *buf;
	struct uroce_mr *mr;
	struct uroce_cq *cq;
	uint8_t gid[16];
};

static void
ep_open(struct ep *e)
{
	memset(e, 0, sizeof(*e));
	e->ctx = uroce_open_device(dd.sock_path);
	cr_assert_not_null(e->ctx, "open_device: %s", strerror(errno));
	cr_assert_eq(uroce_query_gid(e->ctx, 1, 0, e->gid), 0);
	e->pd = uroce_alloc_pd(e->ctx);
	cr_assert_not_null(e->pd, "alloc_pd: %s", strerror(errno));
	e->buf = uroce_alloc_buf(e->ctx, BUF_SIZE);
	cr_assert_not_null(e->buf, "alloc_buf: %s", strerror(errno));
	e->mr = uroce_reg_mr(e->pd, e->buf, BUF_SIZE,
			     UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE);
	cr_assert_not_null(e->mr, "reg_mr: %s", strerror(errno));
	e->cq = uroce_create_cq(e->ctx, 256, NULL);
	cr_assert_not_null(e->cq, "create_cq: %s", strerror(errno));
}

static struct uroce_srq *
srq_new(struct ep *e, uint32_t max_wr, uint32_t max_sge)
{
	struct uroce_srq_init_attr ia;
	struct uroce_srq *srq;

	memset(&ia, 0, sizeof(ia));
	ia.attr.max_wr = max_wr;
	ia.attr.max_sge = max_sge;
	ia.attr.srq_limit = 3; /* ignored at creation, as in verbs */
	srq = uroce_create_srq(e->pd, &ia);
	cr_assert_not_null(srq, "create_srq: %s", strerror(errno));
	cr_assert_geq(ia.attr.max_wr, max_wr);
	cr_assert_eq(ia.attr.srq_limit, 0);
	return srq;
}

/* An RC QP on the endpoint's CQ; receives from @p srq if not NULL. */
static struct uroce_qp *
qp_new(struct ep *e, struct uroce_srq *srq)
{
	struct uroce_qp *qp = dt_qp_create(e->pd, e->cq, srq, UROCE_QPT_RC, 16, 2);

	cr_assert_not_null(qp, "create_qp: %s", strerror(errno));
	return qp;
}

static void
qp_rts(struct uroce_qp *qp, const uint8_t gid[16], uint32_t dqpn)
{
	const struct dt_rc rc = {.dgid = gid, .dqpn = dqpn, .rq_psn = 100, .sq_psn = 100,
				 .rd_atomic = 1};

	cr_assert_eq(dt_qp_to_rts(qp, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE, &rc),
		     0);
}

/* Connect a (sender) and b (receiver) to each other. */
static void
pair(struct ep *e, struct uroce_qp *a, struct uroce_qp *b)
{
	qp_rts(a, e->gid, b->qp_num);
	qp_rts(b, e->gid, a->qp_num);
}

static uint8_t
pat(uint32_t i, uint32_t seed)
{
	return (uint8_t)(i * 7 + seed * 13 + 1);
}

/* Post one SRQ receive of [buf + off, + len) under @p lkey. */
static int
srq_recv1(struct ep *e, struct uroce_srq *srq, uint64_t wr_id, uint32_t off, uint32_t len,
	  uint32_t lkey)
{
	struct uroce_sge sge = {.addr = (uint64_t)(uintptr_t)(e->buf + off), .length = len,
				.lkey = lkey};
	struct uroce_recv_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return uroce_post_srq_recv(srq, &wr, &bad);
}

/* SEND MSG_LEN bytes of pattern @p seed from the send area (second half). */
static void
send1(struct ep *e, struct uroce_qp *qp, uint64_t wr_id, uint32_t seed)
{
	uint8_t *src = e->buf + BUF_SIZE / 2 + (seed % 16) * SLOT_LEN;
	struct uroce_sge sge = {.addr = (uint64_t)(uintptr_t)src, .length = MSG_LEN,
				.lkey = e->mr->lkey};
	struct uroce_send_wr wr, *bad = NULL;
	uint32_t i;

	for (i = 0; i < MSG_LEN; i++)
		src[i] = pat(i, seed);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = UROCE_WR_SEND;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	cr_assert_eq(uroce_post_send(qp, &wr, &bad), 0);
}

/* Wait for one completion, 10 s at most. */
static void
wait_wc(struct uroce_cq *cq, struct uroce_wc *wc)
{
	double end = dt_now_s() + 10;
	int n;

	while ((n = uroce_poll_cq(cq, 1, wc)) == 0) {
		cr_assert_lt(dt_now_s(), end, "no completion in 10 s");
		dt_nap_ms(1);
	}
	cr_assert_eq(n, 1, "poll_cq: %d", n);
}

/* Wait up to @p ms for an async event; false if none came. */
static bool
wait_event(struct uroce_context *ctx, struct uroce_async_event *ev, int ms)
{
	struct pollfd p = {.fd = uroce_async_fd(ctx), .events = POLLIN};
	double end = dt_now_s() + ms / 1000.0;

	for (;;) {
		int rc = uroce_get_async_event(ctx, ev);

		if (rc == 0)
			return true;
		cr_assert_eq(rc, -EAGAIN, "get_async_event: %d", rc);
		if (dt_now_s() >= end)
			return false;
		poll(&p, 1, 10);
	}
}

static void
async_nonblocking(struct uroce_context *ctx)
{
	int fd = uroce_async_fd(ctx);

	cr_assert_geq(fd, 0);
	cr_assert_eq(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
}

/* Wait until the daemon's resource counts are all back to zero. */
static void
wait_all_reclaimed(void)
{
	struct uroce_daemon_stats st;
	double end = dt_now_s() + 10;

	for (;;) {
		stats(&st);
		if (st.sessions == 0 && st.srqs == 0 && st.qps == 0 && st.cqs == 0 &&
		    st.mrs == 0 && st.pds == 0 && st.segments == 0)
			return;
		cr_assert_lt(dt_now_s(), end,
			     "not reclaimed: sessions %u srqs %u qps %u cqs %u mrs %u pds %u "
			     "segments %u", st.sessions, st.srqs, st.qps, st.cqs, st.mrs, st.pds,
			     st.segments);
		dt_nap_ms(2);
	}
}

/* Release the endpoint's objects (locally too when the daemon is gone) and close. */
static void
ep_close(struct ep *e)
{
	int rc;

	rc = uroce_destroy_cq(e->cq);
	cr_expect(rc == 0 || rc == -ENOTCONN, "destroy_cq %d", rc);
	rc = uroce_dereg_mr(e->mr);
	cr_expect(rc == 0 || rc == -ENOTCONN, "dereg_mr %d", rc);
	rc = uroce_free_buf(e->ctx, e->buf);
	cr_expect(rc == 0, "free_buf %d", rc);
	rc = uroce_dealloc_pd(e->pd);
	cr_expect(rc == 0 || rc == -ENOTCONN, "dealloc_pd %d", rc);
	cr_expect_eq(uroce_close_device(e->ctx), 0);
}

/* Start the daemon, open @p e and connect a sender and a receiver on its CQ. */
static void
pair_open(struct ep *e, struct uroce_qp **snd, struct uroce_qp **rcv)
{
	start_daemon();
	ep_open(e);
	*snd = qp_new(e, NULL);
	*rcv = qp_new(e, NULL);
	pair(e, *snd, *rcv);
}

/* Destroy the pair and close @p e; wait until the daemon has reclaimed all. */
static void
pair_close(struct ep *e, struct uroce_qp *snd, struct uroce_qp *rcv)
{
	cr_assert_eq(uroce_destroy_qp(rcv), 0);
	cr_assert_eq(uroce_destroy_qp(snd), 0);
	ep_close(e);
	wait_all_reclaimed();
}

/* Post one receive of SLOT_LEN bytes at slot @p i on @p qp's own RQ. */
static int
recv1(struct ep *e, struct uroce_qp *qp, uint64_t wr_id, uint32_t i)
{
	struct uroce_sge sge = {.addr = (uint64_t)(uintptr_t)(e->buf + (i % 16) * SLOT_LEN),
				.length = SLOT_LEN, .lkey = e->mr->lkey};
	struct uroce_recv_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return uroce_post_recv(qp, &wr, &bad);
}

/* An RC sender on CQ @p scq, paired with a receiver on e->cq that has @p n
 * receives posted (slots 0..n-1). */
static void
sender_pair(struct ep *e, struct uroce_cq *scq, uint32_t n, struct uroce_qp **snd,
	    struct uroce_qp **rcv)
{
	uint32_t i;

	*snd = dt_qp_create(e->pd, scq, NULL, UROCE_QPT_RC, 16, 2);
	cr_assert_not_null(*snd, "create_qp: %s", strerror(errno));
	*rcv = qp_new(e, NULL);
	pair(e, *snd, *rcv);
	for (i = 0; i < n; i++)
		cr_assert_eq(recv1(e, *rcv, i, i), 0);
}

/* Destroy what sender_pair() made, then its CQ. */
static void
sender_pair_close(struct uroce_cq *scq, struct uroce_qp *snd, struct uroce_qp *rcv)
{
	cr_assert_eq(uroce_destroy_qp(rcv), 0);
	cr_assert_eq(uroce_destroy_qp(snd), 0);
	cr_assert_eq(uroce_destroy_cq(scq), 0);
}

/*
 * A QP's own receive queue holds exactly the max_recv_wr it reported: the
 * daemon reads posted receives into its engine, but their ring slots go back
 * to the client only when they complete (rdma-core's full_rq_bad_flow).
 */
Test(rq, holds_exactly_max_recv_wr, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_qp *snd, *rcv;
	struct uroce_wc wc;
	uint32_t cap, i, recvs = 0, sends = 0;
	struct ep e;

	pair_open(&e, &snd, &rcv);
	cap = rcv->cap.max_recv_wr;
	cr_assert_geq(cap, 16);
	/* Expect: cap receives are taken, the next one is ENOMEM. */
	for (i = 0; i < cap; i++)
		cr_assert_eq(recv1(&e, rcv, i, i), 0, "receive %u of %u", i, cap);
	cr_expect_eq(recv1(&e, rcv, 999, 0), -ENOMEM);
	/* Expect: still ENOMEM once the daemon has read them into its engine. */
	dt_nap_ms(50);
	cr_expect_eq(recv1(&e, rcv, 999, 0), -ENOMEM, "the RQ took more than %u", cap);
	/* Expect: 3 SENDs complete 3 receives; then exactly 3 more fit. */
	for (i = 0; i < 3; i++)
		send1(&e, snd, 1, i);
	while (recvs < 3 || sends < 3) {
		wait_wc(e.cq, &wc);
		cr_assert_eq(wc.status, UROCE_WC_SUCCESS, "status %d", wc.status);
		if (wc.opcode & UROCE_WC_RECV)
			recvs++;
		else
			sends++;
	}
	for (i = 0; i < 3; i++)
		cr_expect_eq(recv1(&e, rcv, 100 + i, i), 0, "repost %u", i);
	cr_expect_eq(recv1(&e, rcv, 999, 0), -ENOMEM);
	pair_close(&e, snd, rcv);
}

/*
 * ibv_resize_cq: a CQ grows with the CQEs it holds kept in order, refuses to
 * shrink below them (EINVAL), and takes new CQEs in its new ring.
 */
Test(cq, resize_keeps_cqes_and_refuses_below_them, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_qp *snd, *rcv;
	struct uroce_wc wc[8];
	struct uroce_cq *scq;
	uint32_t i, got;
	struct ep e;

	start_daemon();
	ep_open(&e);
	scq = uroce_create_cq(e.ctx, 4, NULL);
	cr_assert_not_null(scq, "create_cq: %s", strerror(errno));
	cr_assert_eq(uroce_cq_size(scq), 4);
	sender_pair(&e, scq, 6, &snd, &rcv);
	for (i = 0; i < 3; i++)
		send1(&e, snd, 10 + i, i);
	for (i = 0; i < 3; i++) {
		wait_wc(e.cq, &wc[0]);
		cr_assert_eq(wc[0].status, UROCE_WC_SUCCESS);
	}
	/* The 3 send CQEs (their ACKs follow the receives). */
	dt_nap_ms(100);
	/* Expect: shrinking below the 3 CQEs held is EINVAL, and keeps them. */
	cr_expect_eq(uroce_resize_cq(scq, 2), -EINVAL);
	cr_expect_eq(uroce_cq_size(scq), 4);
	/* Expect: growing keeps them, in order. */
	cr_assert_eq(uroce_resize_cq(scq, 50), 0);
	cr_expect_eq(uroce_cq_size(scq), 64);
	got = (uint32_t)uroce_poll_cq(scq, 8, wc);
	cr_assert_eq(got, 3, "CQEs after the resize: %u", got);
	for (i = 0; i < 3; i++) {
		cr_expect_eq(wc[i].wr_id, 10 + i);
		cr_expect_eq(wc[i].status, UROCE_WC_SUCCESS);
	}
	/* Expect: new CQEs land in the new ring. */
	for (i = 0; i < 3; i++)
		send1(&e, snd, 20 + i, i);
	for (i = 0; i < 3; i++) {
		wait_wc(scq, &wc[0]);
		cr_expect_eq(wc[0].wr_id, 20 + i);
	}
	/* Expect: an empty CQ shrinks. */
	cr_expect_eq(uroce_resize_cq(scq, 2), 0);
	cr_expect_eq(uroce_cq_size(scq), 2);
	sender_pair_close(scq, snd, rcv);
	ep_close(&e);
	wait_all_reclaimed();
}

/* Set @p cq's moderation; 0 or -errno. */
static int
moderate(struct uroce_cq *cq, uint32_t mask, uint16_t count, uint16_t period)
{
	struct uroce_modify_cq_attr m = {.attr_mask = mask, .cq_count = count, .cq_period = period};

	return uroce_modify_cq(cq, &m);
}

/* Arm @p cq, SEND @p n messages, take their @p n send CQEs. */
static void
arm_send_take(struct ep *e, struct uroce_qp *snd, struct uroce_cq *cq, uint32_t n, uint64_t id)
{
	struct uroce_wc wc;
	uint32_t i;

	cr_assert_eq(uroce_req_notify_cq(cq, false), 0);
	for (i = 0; i < n; i++)
		send1(e, snd, id + i, i);
	for (i = 0; i < n; i++) {
		wait_wc(cq, &wc);
		cr_assert_eq(wc.status, UROCE_WC_SUCCESS);
		cr_assert_eq(wc.wr_id, id + i);
	}
}

/*
 * ibv_modify_cq (IBV_CQ_ATTR_MODERATE): an armed CQ's event waits for
 * cq_count CQEs or cq_period microseconds after the first, whichever is
 * first; a change of the setting closes an open window (the event comes, not
 * lost); cq_period 0 signals at once. The workers' clock is the test's, so
 * "not yet" holds until the test moves it. Set before the CQ is placed (the
 * control thread keeps it) and after (its worker takes it).
 */
Test(cq, moderation_waits_for_count_or_period, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_qp *snd, *rcv;
	struct uroce_cq *scq;
	struct uroce_wc wc;
	struct ep e;

	start_daemon_clocked();
	ep_open(&e);
	scq = uroce_create_cq(e.ctx, 64, NULL);
	cr_assert_not_null(scq, "create_cq: %s", strerror(errno));
	/* Expect: bad settings are EINVAL and change nothing. */
	cr_expect_eq(moderate(scq, 0, 4, 100), -EINVAL);
	cr_expect_eq(moderate(scq, UROCE_CQ_ATTR_MODERATE | 2, 4, 100), -EINVAL);
	cr_expect_eq(moderate(scq, UROCE_CQ_ATTR_MODERATE, 4, UROCE_CQ_PERIOD_MAX + 1), -EINVAL);
	cr_expect_eq(uroce_modify_cq(scq, NULL), -EINVAL);
	cr_assert_eq(moderate(scq, UROCE_CQ_ATTR_MODERATE, 4, UROCE_CQ_PERIOD_MAX), 0);
	sender_pair(&e, scq, 16, &snd, &rcv);

	/* Expect: 3 CQEs after the arm raise no event; the 4th does. */
	arm_send_take(&e, snd, scq, 3, 100);
	cr_expect_eq(uroce_get_cq_event(scq, 200), 0, "an event before 4 CQEs or the period");
	send1(&e, snd, 103, 3);
	cr_expect_eq(uroce_get_cq_event(scq, 10000), 1, "no event at the 4th CQE");
	wait_wc(scq, &wc);

	/* Expect: 1 CQE raises its event only when the period has passed. */
	arm_send_take(&e, snd, scq, 1, 200);
	cr_expect_eq(uroce_get_cq_event(scq, 200), 0, "an event before the period");
	atomic_fetch_add(&fake_now_us, UROCE_CQ_PERIOD_MAX - 1);
	cr_expect_eq(uroce_get_cq_event(scq, 200), 0, "an event 1 us before the period");
	atomic_fetch_add(&fake_now_us, 1);
	cr_expect_eq(uroce_get_cq_event(scq, 10000), 1, "no event after the period");

	/* Expect: a new setting (on the placed CQ) closes the open window. */
	arm_send_take(&e, snd, scq, 1, 300);
	cr_expect_eq(uroce_get_cq_event(scq, 200), 0);
	cr_assert_eq(moderate(scq, UROCE_CQ_ATTR_MODERATE, 0, 0), 0);
	cr_expect_eq(uroce_get_cq_event(scq, 10000), 1, "the change lost the event");

	/* Expect: period 0 is no moderation: the event comes at once. */
	arm_send_take(&e, snd, scq, 1, 400);
	cr_expect_eq(uroce_get_cq_event(scq, 10000), 1, "no event without moderation");

	/* Expect: count 0 leaves the period alone; a CQE before the arm (polled)
	 * opens no window: the period runs from the first CQE after the arm. */
	cr_assert_eq(moderate(scq, UROCE_CQ_ATTR_MODERATE, 0, 10), 0);
	send1(&e, snd, 500, 0);
	wait_wc(scq, &wc);
	atomic_fetch_add(&fake_now_us, 5);
	arm_send_take(&e, snd, scq, 2, 501);
	cr_expect_eq(uroce_get_cq_event(scq, 200), 0, "count 0 fired on the count");
	atomic_fetch_add(&fake_now_us, 5);
	cr_expect_eq(uroce_get_cq_event(scq, 200), 0, "the period ran from a CQE before the arm");
	atomic_fetch_add(&fake_now_us, 5);
	cr_expect_eq(uroce_get_cq_event(scq, 10000), 1, "no event after the period");

	sender_pair_close(scq, snd, rcv);
	ep_close(&e);
	wait_all_reclaimed();
}

/*
 * Windows of several CQs close each at its own time: one with a long period
 * opened first does not hold back one with a short period opened after it
 * (the worker keeps them in due order and looks at the soonest).
 */
Test(cq, moderation_windows_close_in_due_order, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_qp *snd[3], *rcv[3];
	static const uint16_t period[3] = {300, 100, 200};
	struct uroce_cq *scq[3];
	uint32_t k;
	struct ep e;

	start_daemon_clocked();
	ep_open(&e);
	for (k = 0; k < 3; k++) {
		scq[k] = uroce_create_cq(e.ctx, 16, NULL);
		cr_assert_not_null(scq[k], "create_cq: %s", strerror(errno));
		sender_pair(&e, scq[k], 2, &snd[k], &rcv[k]);
		cr_assert_eq(moderate(scq[k], UROCE_CQ_ATTR_MODERATE, 0, period[k]), 0);
	}
	/* Expect: opened at the same time, in the order 300, 100, 200 us, they
	 * close at 100, 200 and 300, each alone. */
	for (k = 0; k < 3; k++)
		arm_send_take(&e, snd[k], scq[k], 1, 10 * k);
	for (k = 0; k < 3; k++)
		cr_expect_eq(uroce_get_cq_event(scq[k], 100), 0, "CQ %u: an event at once", k);
	atomic_fetch_add(&fake_now_us, 100);
	cr_expect_eq(uroce_get_cq_event(scq[1], 10000), 1, "100 us: no event");
	cr_expect_eq(uroce_get_cq_event(scq[0], 100), 0, "100 us: the 300 us window closed");
	cr_expect_eq(uroce_get_cq_event(scq[2], 100), 0, "100 us: the 200 us window closed");
	atomic_fetch_add(&fake_now_us, 100);
	cr_expect_eq(uroce_get_cq_event(scq[2], 10000), 1, "200 us: no event");
	cr_expect_eq(uroce_get_cq_event(scq[0], 100), 0, "200 us: the 300 us window closed");
	atomic_fetch_add(&fake_now_us, 100);
	cr_expect_eq(uroce_get_cq_event(scq[0], 10000), 1, "300 us: no event");
	/* Expect: a CQ destroyed with its window open leaves the others' alone. */
	arm_send_take(&e, snd[1], scq[1], 1, 100);
	arm_send_take(&e, snd[2], scq[2], 1, 200);
	cr_assert_eq(uroce_destroy_qp(snd[1]), 0);
	cr_assert_eq(uroce_destroy_cq(scq[1]), 0);
	atomic_fetch_add(&fake_now_us, 200);
	cr_expect_eq(uroce_get_cq_event(scq[2], 10000), 1, "the other window lost its event");
	for (k = 0; k < 3; k++) {
		if (k != 1)
			sender_pair_close(scq[k], snd[k], rcv[k]);
		else
			cr_assert_eq(uroce_destroy_qp(rcv[k]), 0);
	}
	ep_close(&e);
	wait_all_reclaimed();
}

/* RDMA WRITE 64 bytes of pattern @p seed from the send area to @p raddr/@p rkey. */
static void
write1(struct ep *e, struct uroce_qp *qp, uint64_t raddr, uint32_t rkey, uint32_t seed)
{
	uint8_t *src = e->buf + BUF_SIZE / 2;
	struct uroce_sge sge = {.addr = (uint64_t)(uintptr_t)src, .length = 64,
				.lkey = e->mr->lkey};
	struct uroce_send_wr wr, *bad = NULL;
	uint32_t i;

	for (i = 0; i < 64; i++)
		src[i] = pat(i, seed);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = UROCE_WR_RDMA_WRITE;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	cr_assert_eq(uroce_post_send(qp, &wr, &bad), 0);
}

/*
 * ibv_rereg_mr: access and translation change under the same keys, at once
 * for the next request; bad flags change nothing; a reset QP's CQEs can be
 * cleaned from its CQ (uroce_cq_clean, as the drop-in does on RESET).
 */
Test(mr, rereg_keeps_keys_changes_access_and_translation, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_qp *snd, *rcv;
	struct uroce_mr *t;
	struct uroce_wc wc;
	uint32_t lkey, rkey, i;
	uint8_t *a, *b;
	struct ep e;

	pair_open(&e, &snd, &rcv);
	a = e.buf;
	b = e.buf + 4096;
	t = uroce_reg_mr(e.pd, a, 4096, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE);
	cr_assert_not_null(t, "reg_mr: %s", strerror(errno));
	lkey = t->lkey;
	rkey = t->rkey;
	/* Expect: bad flags are EINVAL. */
	cr_expect_eq(uroce_rereg_mr(t, 0, NULL, NULL, 0, 0), -EINVAL);
	cr_expect_eq(uroce_rereg_mr(t, 8, NULL, NULL, 0, 0), -EINVAL);
	/* Expect: moved to [b, +4096): a WRITE at b's address lands there. */
	cr_assert_eq(uroce_rereg_mr(t, UROCE_REREG_TRANSLATION, NULL, b, 4096, 0), 0);
	cr_expect_eq(t->lkey, lkey);
	cr_expect_eq(t->rkey, rkey);
	cr_expect_eq(t->addr, (void *)b);
	memset(a, 0, 64);
	write1(&e, snd, (uint64_t)(uintptr_t)b, rkey, 7);
	wait_wc(e.cq, &wc);
	cr_assert_eq(wc.status, UROCE_WC_SUCCESS, "status %d", wc.status);
	for (i = 0; i < 64; i++)
		cr_assert_eq(b[i], pat(i, 7), "byte %u", i);
	/* Expect: a's address is outside the MR now. */
	write1(&e, snd, (uint64_t)(uintptr_t)a, rkey, 8);
	wait_wc(e.cq, &wc);
	cr_expect_eq(wc.status, UROCE_WC_REM_ACCESS_ERR, "status %d", wc.status);
	for (i = 0; i < 64; i++)
		cr_assert_eq(a[i], 0, "byte %u written", i);
	/* Expect: without REMOTE_WRITE, the same key is refused. Reset the
	 * sender (its CQs cleaned) and connect again first. */
	{
		struct uroce_qp_attr qa;

		memset(&qa, 0, sizeof(qa));
		qa.qp_state = UROCE_QPS_RESET;
		cr_assert_eq(uroce_modify_qp(snd, &qa, UROCE_QP_STATE), 0);
		cr_assert_eq(uroce_modify_qp(rcv, &qa, UROCE_QP_STATE), 0);
		uroce_cq_clean(e.cq, snd->qp_num);
		cr_expect_eq(uroce_poll_cq(e.cq, 1, &wc), 0, "CQEs of the reset QP remain");
		pair(&e, snd, rcv);
	}
	cr_assert_eq(uroce_rereg_mr(t, UROCE_REREG_ACCESS, NULL, NULL, 0,
				    UROCE_ACCESS_LOCAL_WRITE), 0);
	cr_expect_eq(t->rkey, rkey);
	write1(&e, snd, (uint64_t)(uintptr_t)b, rkey, 9);
	wait_wc(e.cq, &wc);
	cr_expect_eq(wc.status, UROCE_WC_REM_ACCESS_ERR, "status %d", wc.status);
	for (i = 0; i < 64; i++)
		cr_assert_eq(b[i], pat(i, 7), "byte %u overwritten", i);
	cr_assert_eq(uroce_dereg_mr(t), 0);
	pair_close(&e, snd, rcv);
}

Test(srq, shared_by_two_qps_delivers_sends, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_qp *r1, *r2, *s1, *s2;
	struct uroce_async_event ev;
	struct uroce_daemon_stats st;
	struct uroce_device_attr da;
	struct uroce_srq_attr sa;
	struct uroce_srq *srq;
	struct uroce_recv_wr rw;
	unsigned int from_r1 = 0, from_r2 = 0, seen = 0;
	struct ep e;
	int i;

	start_daemon();
	ep_open(&e);
	async_nonblocking(e.ctx);
	cr_assert_eq(uroce_query_device(e.ctx, &da), 0);
	cr_expect_gt(da.max_srq, 0, "the daemon serves SRQs (ABI 1.1)");
	srq = srq_new(&e, 16, 1);
	r1 = qp_new(&e, srq);
	r2 = qp_new(&e, srq);
	s1 = qp_new(&e, NULL);
	s2 = qp_new(&e, NULL);
	cr_expect_eq(r1->srq, srq);
	pair(&e, s1, r1);
	pair(&e, s2, r2);
	stats(&st);
	cr_expect_eq(st.srqs, 1);
	/* Expect: a QP on an SRQ refuses its own receives (verbs). */
	memset(&rw, 0, sizeof(rw));
	cr_expect_eq(uroce_post_recv(r1, &rw, NULL), -EINVAL);
	/* Expect: 8 receive buffers in the SRQ serve 3 SENDs on each QP. */
	for (i = 0; i < 8; i++)
		cr_assert_eq(srq_recv1(&e, srq, 1000 + i, (uint32_t)i * SLOT_LEN, SLOT_LEN,
				       e.mr->lkey), 0);
	for (i = 0; i < 3; i++) {
		send1(&e, s1, 1, 10 + (uint32_t)i);
		send1(&e, s2, 2, 20 + (uint32_t)i);
	}
	while (seen < 12) {
		struct uroce_wc wc;

		wait_wc(e.cq, &wc);
		seen++;
		cr_assert_eq(wc.status, UROCE_WC_SUCCESS, "wc status %u wr_id %llu", wc.status,
			     (unsigned long long)wc.wr_id);
		if (wc.opcode == UROCE_WC_SEND)
			continue;
		cr_assert_eq(wc.opcode, UROCE_WC_RECV);
		cr_assert(wc.wr_id >= 1000 && wc.wr_id < 1008, "wr_id %llu",
			  (unsigned long long)wc.wr_id);
		cr_assert_eq(wc.byte_len, MSG_LEN);
		cr_assert(wc.qp_num == r1->qp_num || wc.qp_num == r2->qp_num);
		{
			const uint8_t *d = e.buf + (wc.wr_id - 1000) * SLOT_LEN;
			/* SRQ WQEs are taken in order; each QP's SENDs arrive in order,
			 * so the seed is recovered from the first byte and checked whole. */
			uint32_t seed = wc.qp_num == r1->qp_num ? 10 + from_r1 : 20 + from_r2;
			uint32_t k;

			for (k = 0; k < MSG_LEN; k++)
				cr_assert_eq(d[k], pat(k, seed), "byte %u of wr_id %llu", k,
					     (unsigned long long)wc.wr_id);
		}
		if (wc.qp_num == r1->qp_num)
			from_r1++;
		else
			from_r2++;
	}
	cr_expect_eq(from_r1, 3);
	cr_expect_eq(from_r2, 3);
	cr_assert_eq(uroce_query_srq(srq, &sa), 0);
	cr_expect_eq(sa.max_wr, 16);
	cr_expect_eq(sa.max_sge, 1);
	cr_expect_eq(sa.srq_limit, 0);
	/* Expect: the SRQ cannot go while QPs use it. */
	cr_expect_eq(uroce_destroy_srq(srq), -EBUSY);
	/* Expect: an SRQ QP moved to ERR reports Last WQE Reached (IBA 11.6.3). */
	{
		struct uroce_qp_attr a;

		memset(&a, 0, sizeof(a));
		a.qp_state = UROCE_QPS_ERR;
		cr_assert_eq(uroce_modify_qp(r1, &a, UROCE_QP_STATE), 0);
	}
	cr_assert(wait_event(e.ctx, &ev, 3000), "no LAST_WQE_REACHED");
	cr_expect_eq(ev.event_type, UROCE_ASYNC_QP_LAST_WQE_REACHED);
	cr_expect_eq(ev.element.qp, r1);
	cr_expect_eq(uroce_destroy_qp(r1), -EBUSY, "destroy before the ack");
	uroce_ack_async_event(&ev);
	cr_assert_eq(uroce_destroy_qp(r1), 0);
	cr_assert_eq(uroce_destroy_qp(r2), 0);
	cr_assert_eq(uroce_destroy_qp(s1), 0);
	cr_assert_eq(uroce_destroy_qp(s2), 0);
	cr_assert_eq(uroce_destroy_srq(srq), 0);
	stats(&st);
	cr_expect_eq(st.srqs, 0);
	ep_close(&e);
	wait_all_reclaimed();
}

Test(srq, bad_lkey_and_sge_outside_mr_fail_the_receive, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_qp *r, *s;
	struct uroce_daemon_stats st0, st;
	struct uroce_srq *srq;
	struct uroce_wc wc;
	struct uroce_sge sge[2];
	struct uroce_recv_wr rw, *bad = NULL;
	bool got_recv = false;
	struct ep e;
	int round;

	start_daemon();
	ep_open(&e);
	srq = srq_new(&e, 8, 1);
	/* Expect: more SGEs than the SRQ's max_sge is refused at post, nothing written. */
	memset(&rw, 0, sizeof(rw));
	memset(sge, 0, sizeof(sge));
	rw.wr_id = 1;
	rw.sg_list = sge;
	rw.num_sge = 2;
	cr_expect_eq(uroce_post_srq_recv(srq, &rw, &bad), -EINVAL);
	cr_expect_eq(bad, &rw);
	/* Expect: SGEs without an sg_list are refused at post, on the SRQ and on
	 * a QP's own receive queue alike (one posting path in liburoce). */
	rw.sg_list = NULL;
	rw.num_sge = 1;
	bad = NULL;
	cr_expect_eq(uroce_post_srq_recv(srq, &rw, &bad), -EINVAL);
	cr_expect_eq(bad, &rw);
	s = qp_new(&e, NULL);
	bad = NULL;
	cr_expect_eq(uroce_post_recv(s, &rw, &bad), -EINVAL);
	cr_expect_eq(bad, &rw);
	cr_assert_eq(uroce_destroy_qp(s), 0);
	for (round = 0; round < 2; round++) {
		uint64_t wr_id = 500 + (uint64_t)round;

		stats(&st0);
		r = qp_new(&e, srq);
		s = qp_new(&e, NULL);
		pair(&e, s, r);
		if (round == 0)
			/* Expect: an lkey that is no MR of this client: the WQE
			 * fails with LOC_PROT_ERR on the QP that takes it. */
			cr_assert_eq(srq_recv1(&e, srq, wr_id, 0, SLOT_LEN,
					       e.mr->lkey ^ 0x100u), 0);
		else
			/* Expect: an SGE running past the end of the MR fails the same. */
			cr_assert_eq(srq_recv1(&e, srq, wr_id, BUF_SIZE - 100, SLOT_LEN,
					       e.mr->lkey), 0);
		send1(&e, s, 77, 5);
		got_recv = false;
		for (;;) {
			wait_wc(e.cq, &wc);
			if (wc.opcode & UROCE_WC_RECV)
				break;
		}
		got_recv = true;
		cr_expect(got_recv);
		cr_expect_eq(wc.wr_id, wr_id);
		cr_expect_eq(wc.status, UROCE_WC_LOC_PROT_ERR, "round %d: status %u", round,
			     wc.status);
		cr_expect_eq(wc.qp_num, r->qp_num);
		stats(&st);
		/* Keys and bounds are the engine's to check when data lands (a
		 * foreign lkey is of another PD): not a rejection by the worker. */
		cr_expect_eq(st.srq_wqe_rejected, st0.srq_wqe_rejected,
			     "round %d: not a worker rejection", round);
		/* Drain the sender's completion (error or flush) before teardown. */
		dt_nap_ms(20);
		while (uroce_poll_cq(e.cq, 1, &wc) == 1)
			;
		cr_assert_eq(uroce_destroy_qp(r), 0);
		cr_assert_eq(uroce_destroy_qp(s), 0);
	}
	/* Expect: the SRQ itself still works after the failed WQEs. */
	r = qp_new(&e, srq);
	s = qp_new(&e, NULL);
	pair(&e, s, r);
	cr_assert_eq(srq_recv1(&e, srq, 900, 0, SLOT_LEN, e.mr->lkey), 0);
	send1(&e, s, 78, 6);
	for (;;) {
		wait_wc(e.cq, &wc);
		if (wc.opcode & UROCE_WC_RECV)
			break;
	}
	cr_expect_eq(wc.wr_id, 900);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	cr_expect_eq(e.buf[0], pat(0, 6));
	cr_expect_eq(e.buf[MSG_LEN - 1], pat(MSG_LEN - 1, 6));
	dt_nap_ms(20);
	while (uroce_poll_cq(e.cq, 1, &wc) == 1)
		;
	cr_assert_eq(uroce_destroy_qp(r), 0);
	cr_assert_eq(uroce_destroy_qp(s), 0);
	cr_assert_eq(uroce_destroy_srq(srq), 0);
	ep_close(&e);
	wait_all_reclaimed();
}

Test(srq, limit_event_fires_once_when_armed, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_qp *r, *s;
	struct uroce_async_event ev;
	struct uroce_srq_attr sa;
	struct uroce_srq *srq;
	struct uroce_wc wc;
	struct ep e;
	int i, recvs = 0;

	start_daemon();
	ep_open(&e);
	async_nonblocking(e.ctx);
	srq = srq_new(&e, 8, 1);
	r = qp_new(&e, srq);
	s = qp_new(&e, NULL);
	pair(&e, s, r);
	for (i = 0; i < 8; i++)
		cr_assert_eq(srq_recv1(&e, srq, 100 + i, (uint32_t)i * SLOT_LEN, SLOT_LEN,
				       e.mr->lkey), 0);
	/* Expect: MODIFY_SRQ refuses a resize and a limit above max_wr. */
	memset(&sa, 0, sizeof(sa));
	sa.max_wr = 16;
	cr_expect_eq(uroce_modify_srq(srq, &sa, UROCE_SRQ_MAX_WR), -EINVAL);
	sa.srq_limit = 9;
	cr_expect_eq(uroce_modify_srq(srq, &sa, UROCE_SRQ_LIMIT), -EINVAL);
	sa.srq_limit = 5;
	cr_assert_eq(uroce_modify_srq(srq, &sa, UROCE_SRQ_LIMIT), 0);
	cr_assert_eq(uroce_query_srq(srq, &sa), 0);
	cr_expect_eq(sa.srq_limit, 5, "armed");
	/* Expect: 3 receives leave 5 WQEs: not below the limit, no event. */
	for (i = 0; i < 3; i++)
		send1(&e, s, 1, (uint32_t)i);
	while (recvs < 3) {
		wait_wc(e.cq, &wc);
		cr_assert_eq(wc.status, UROCE_WC_SUCCESS);
		if (wc.opcode & UROCE_WC_RECV)
			recvs++;
	}
	cr_expect_not(wait_event(e.ctx, &ev, 100), "event at 5 WQEs (type %u)", ev.event_type);
	/* Expect: the 4th leaves 4 < 5: SRQ_LIMIT_REACHED once. A control reply
	 * that comes after the event (QUERY_SRQ) still matches its request. */
	send1(&e, s, 1, 3);
	while (recvs < 4) {
		wait_wc(e.cq, &wc);
		if (wc.opcode & UROCE_WC_RECV)
			recvs++;
	}
	dt_nap_ms(50); /* the event is on the socket now, unread */
	cr_assert_eq(uroce_query_srq(srq, &sa), 0);
	cr_expect_eq(sa.max_wr, 8);
	cr_expect_eq(sa.srq_limit, 0, "disarmed by the event");
	cr_assert(wait_event(e.ctx, &ev, 3000), "no SRQ_LIMIT_REACHED");
	cr_expect_eq(ev.event_type, UROCE_ASYNC_SRQ_LIMIT_REACHED);
	cr_expect_eq(ev.element.srq, srq);
	/* Expect: two more receives, no second event without re-arming. */
	for (i = 4; i < 6; i++)
		send1(&e, s, 1, (uint32_t)i);
	while (recvs < 6) {
		wait_wc(e.cq, &wc);
		if (wc.opcode & UROCE_WC_RECV)
			recvs++;
	}
	cr_expect_not(wait_event(e.ctx, &ev, 100), "a second event (type %u)", ev.event_type);
	/* Expect: arming above the current level (2 WQEs) fires at once. While
	 * that event sits on the socket, a CQ wait (nothing armed) times out
	 * cleanly: it queues the event instead of failing or spinning. */
	sa.srq_limit = 3;
	cr_assert_eq(uroce_modify_srq(srq, &sa, UROCE_SRQ_LIMIT), 0);
	dt_nap_ms(50);
	cr_expect_eq(uroce_get_cq_event(e.cq, 50), 0);
	{
		struct uroce_async_event ev2;

		cr_assert(wait_event(e.ctx, &ev2, 3000), "no event on arming below the level");
		cr_expect_eq(ev2.event_type, UROCE_ASYNC_SRQ_LIMIT_REACHED);
		uroce_ack_async_event(&ev2);
	}
	cr_assert_eq(uroce_destroy_qp(r), 0);
	cr_assert_eq(uroce_destroy_qp(s), 0);
	cr_expect_eq(uroce_destroy_srq(srq), -EBUSY, "one event not acknowledged");
	uroce_ack_async_event(&ev);
	cr_expect_eq(uroce_destroy_srq(srq), 0);
	ep_close(&e);
	wait_all_reclaimed();
}

Test(srq, another_clients_srq_handle_is_refused, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_qp_init_attr ia;
	struct uroce_srq_attr sa;
	struct uroce_srq *srq_a, *srq_b, fake;
	struct uroce_daemon_stats st;
	struct ep a, b;

	start_daemon();
	ep_open(&a);
	ep_open(&b);
	srq_a = srq_new(&a, 8, 1);
	srq_b = srq_new(&b, 8, 1);
	/* A copy of A's SRQ under B's context: B sends A's handle. */
	fake = *srq_a;
	fake.context = b.ctx;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = b.cq;
	ia.recv_cq = b.cq;
	ia.srq = &fake;
	ia.qp_type = UROCE_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_send_sge = 1;
	/* Expect: CREATE_QP with another client's SRQ: EPERM. */
	cr_expect_null(uroce_create_qp(b.pd, &ia));
	cr_expect_eq(errno, EPERM, "errno %d", errno);
	cr_expect_eq(uroce_query_srq(&fake, &sa), -EPERM);
	memset(&sa, 0, sizeof(sa));
	sa.srq_limit = 1;
	cr_expect_eq(uroce_modify_srq(&fake, &sa, UROCE_SRQ_LIMIT), -EPERM);
	cr_expect_eq(uroce_query_srq(srq_a, &sa), 0);
	cr_expect_eq(sa.srq_limit, 0, "A's SRQ untouched");
	/* Expect: a handle of B's own session that names no SRQ: ENOENT. */
	fake.handle = (srq_b->handle & 0xffff0000u) | 0xfff0u;
	cr_expect_null(uroce_create_qp(b.pd, &ia));
	cr_expect_eq(errno, ENOENT, "errno %d", errno);
	/* Expect: the creating context's own handle passes the liburoce check. */
	ia.srq = srq_a;
	cr_expect_null(uroce_create_qp(b.pd, &ia), "SRQ of another context");
	cr_expect_eq(errno, EINVAL);
	stats(&st);
	cr_expect_eq(st.srqs, 2);
	cr_expect_eq(st.qps, 0);
	cr_expect_eq(uroce_destroy_srq(srq_b), 0);
	cr_expect_eq(uroce_destroy_srq(srq_a), 0);
	ep_close(&b);
	ep_close(&a);
	wait_all_reclaimed();
}

/* Child of the SIGKILL test: an SRQ with posted WQEs and a QP on it, then wait. */
static void
srq_owner_child(int wfd)
{
	struct uroce_context *ctx = uroce_open_device(dd.sock_path);
	struct uroce_srq_init_attr sia;
	struct uroce_qp_init_attr ia;
	struct uroce_sge sge;
	struct uroce_recv_wr rw;
	struct uroce_srq *srq;
	struct uroce_pd *pd;
	struct uroce_mr *mr;
	struct uroce_cq *cq;
	uint8_t *buf;
	int i;

	if (ctx == NULL || (pd = uroce_alloc_pd(ctx)) == NULL ||
	    (buf = uroce_alloc_buf(ctx, BUF_SIZE)) == NULL ||
	    (mr = uroce_reg_mr(pd, buf, BUF_SIZE, UROCE_ACCESS_LOCAL_WRITE)) == NULL ||
	    (cq = uroce_create_cq(ctx, 16, NULL)) == NULL)
		_exit(2);
	memset(&sia, 0, sizeof(sia));
	sia.attr.max_wr = 16;
	sia.attr.max_sge = 1;
	srq = uroce_create_srq(pd, &sia);
	if (srq == NULL)
		_exit(3);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.srq = srq;
	ia.qp_type = UROCE_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_send_sge = 1;
	if (uroce_create_qp(pd, &ia) == NULL)
		_exit(4);
	for (i = 0; i < 8; i++) {
		sge.addr = (uint64_t)(uintptr_t)(buf + i * SLOT_LEN);
		sge.length = SLOT_LEN;
		sge.lkey = mr->lkey;
		memset(&rw, 0, sizeof(rw));
		rw.wr_id = (uint64_t)i;
		rw.sg_list = &sge;
		rw.num_sge = 1;
		if (uroce_post_srq_recv(srq, &rw, NULL) != 0)
			_exit(5);
	}
	if (write(wfd, "R", 1) != 1)
		_exit(6);
	for (;;)
		pause();
}

Test(srq, sigkill_of_srq_owner_is_reclaimed, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_daemon_stats st;
	int pfd[2], status = 0;
	double end;
	char c = 0;
	pid_t pid;

	start_daemon();
	cr_assert_eq(pipe(pfd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(pfd[0]);
		srq_owner_child(pfd[1]);
	}
	close(pfd[1]);
	cr_assert_eq(read(pfd[0], &c, 1), 1, "child did not get ready");
	cr_assert_eq(c, 'R');
	close(pfd[0]);
	/* Expect: the child's SRQ with its 8 WQEs, a QP on it, all live. */
	end = dt_now_s() + 5;
	do {
		stats(&st);
		if (st.srqs == 1 && st.qps == 1)
			break;
		dt_nap_ms(2);
	} while (dt_now_s() < end);
	cr_assert_eq(st.srqs, 1);
	cr_assert_eq(st.qps, 1);
	cr_assert_eq(st.sessions, 1);
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* Expect: the hang-up reclaims it all: counts back to zero. */
	wait_all_reclaimed();
	stats(&st);
	cr_expect_geq(st.sessions_reaped, 1);
}

/* The mapping in this process of the memfd named @p name (first one found). */
static void *
find_memfd_map(const char *name)
{
	char line[512], want[64];
	FILE *f = fopen("/proc/self/maps", "r");
	void *addr = NULL;

	cr_assert_not_null(f);
	snprintf(want, sizeof(want), "/memfd:%s ", name);
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo;

		if (strstr(line, want) != NULL && sscanf(line, "%lx-", &lo) == 1) {
			addr = (void *)lo;
			break;
		}
	}
	fclose(f);
	return addr;
}

Test(events, qp_fatal_event_is_delivered, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_daemon_stats st0, st;
	struct uroce_async_event ev;
	struct uroce_shm_ring_hdr *sq;
	struct uroce_qp_attr qa;
	struct uroce_srq *srq;
	struct uroce_qp *qp;
	struct ep e;

	start_daemon();
	ep_open(&e);
	async_nonblocking(e.ctx);
	/* The session's first objects with doorbell slots: the SRQ gets slot 0,
	 * the QP slot 1 of the same block, or 0 of another worker's (the daemon
	 * hands out the lowest free slot of the block of the object's worker). */
	srq = srq_new(&e, 8, 1);
	qp = qp_new(&e, srq);
	/* The QP's segment starts with its SQ ring (sq_offset 0). The test is
	 * the client here, and a hostile one: it publishes a producer index
	 * 100000 ahead of the consumer and rings the QP's doorbell. */
	sq = find_memfd_map("uroce-qp");
	cr_assert_not_null(sq, "QP segment not mapped");
	cr_assert_eq(sq->magic, UROCE_SHM_RING_MAGIC);
	stats(&st0);
	__atomic_store_n(&sq->prod, sq->cons + 100000u, __ATOMIC_RELEASE);
	/* Slots 0 and 1 of every worker's block: the QP's is among them (with
	 * two workers it may be slot 0 of a block the SRQ has no slot in). */
	for (unsigned int b = 0; b < dt_workers(); b++) {
		uroce_shm_db_ring((struct uroce_shm_db_block *)find_memfd_map("uroce-db") + b, 0);
		uroce_shm_db_ring((struct uroce_shm_db_block *)find_memfd_map("uroce-db") + b, 1);
	}
	/* Expect: ring found corrupt, the QP in ERR, QP_FATAL then
	 * LAST_WQE_REACHED (the QP is on an SRQ) to the owner. */
	cr_assert(wait_event(e.ctx, &ev, 3000), "no QP_FATAL");
	cr_expect_eq(ev.event_type, UROCE_ASYNC_QP_FATAL);
	cr_expect_eq(ev.element.qp, qp);
	uroce_ack_async_event(&ev);
	cr_assert(wait_event(e.ctx, &ev, 3000), "no LAST_WQE_REACHED");
	cr_expect_eq(ev.event_type, UROCE_ASYNC_QP_LAST_WQE_REACHED);
	cr_expect_eq(ev.element.qp, qp);
	uroce_ack_async_event(&ev);
	stats(&st);
	cr_expect_eq(st.ring_corrupt, st0.ring_corrupt + 1);
	cr_expect_geq(st.async_events, st0.async_events + 2);
	cr_expect_eq(st.async_dropped, 0);
	cr_assert_eq(uroce_query_qp(qp, &qa, UROCE_QP_STATE, NULL), 0);
	cr_expect_eq(qa.qp_state, UROCE_QPS_ERR);
	cr_expect_eq(uroce_destroy_qp(qp), 0);
	cr_expect_eq(uroce_destroy_srq(srq), 0);
	ep_close(&e);
	wait_all_reclaimed();
}

/* What the daemon logged (uroce_log_set() sink of this process). */
static char log_text[16384];
static size_t log_len;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void
log_capture(enum uroce_log_level level, const char *msg)
{
	(void)level;
	pthread_mutex_lock(&log_lock);
	log_len += (size_t)snprintf(log_text + log_len, sizeof(log_text) - log_len, "%s\n", msg);
	if (log_len >= sizeof(log_text))
		log_len = sizeof(log_text) - 1;
	pthread_mutex_unlock(&log_lock);
}

static bool
log_has(const char *what)
{
	bool yes;

	pthread_mutex_lock(&log_lock);
	yes = strstr(log_text, what) != NULL;
	pthread_mutex_unlock(&log_lock);
	return yes;
}

/* A request the responder refuses (issue 16): a WRITE under an R_Key of no
 * MR. Expect: the requester's WQE fails REM_ACCESS_ERR, the responder QP
 * raises QP_ACCESS_ERR, and the daemon logs the refusal on its control
 * thread with the check that refused it, the PSNs and the RETH, and keeps
 * it as the QP's last responder error (QUERY_COUNTERS). */
Test(events, refused_request_is_logged_and_kept, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_shm_msg_query_counters_resp cr;
	struct uroce_shm_msg_query_counters_req cq;
	struct uroce_sge sge;
	struct uroce_send_wr wr, *bad = NULL;
	struct uroce_async_event ev;
	struct uroce_qp *a, *b;
	char want[160];
	uint32_t bad_rkey, i, found = 0;
	double end;
	struct uroce_wc wc;
	struct ep e;

	log_len = 0;
	log_text[0] = '\0';
	uroce_log_set(log_capture, UROCE_LOG_NOTICE);
	start_daemon();
	ep_open(&e);
	async_nonblocking(e.ctx);
	a = qp_new(&e, NULL);
	b = qp_new(&e, NULL);
	pair(&e, a, b);
	bad_rkey = e.mr->rkey ^ 0x5500u; /* another index: no MR */
	sge = (struct uroce_sge){.addr = (uintptr_t)e.buf, .length = 64, .lkey = e.mr->lkey};
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 9;
	wr.opcode = UROCE_WR_RDMA_WRITE;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)e.buf + 4096;
	wr.wr.rdma.rkey = bad_rkey;
	cr_assert_eq(uroce_post_send(a, &wr, &bad), 0);
	wait_wc(e.cq, &wc);
	cr_expect_eq(wc.status, UROCE_WC_REM_ACCESS_ERR);
	cr_assert(wait_event(e.ctx, &ev, 3000), "no QP_ACCESS_ERR");
	cr_expect_eq(ev.event_type, UROCE_ASYNC_QP_ACCESS_ERR);
	cr_expect_eq(ev.element.qp, b);
	uroce_ack_async_event(&ev);
	snprintf(want, sizeof(want), "qp %#x (client", b->qp_num);
	end = dt_now_s() + 5;
	while (!log_has(want) && dt_now_s() < end)
		dt_nap_ms(5);
	cr_expect(log_has(want), "no log line for qp %#x: %s", b->qp_num, log_text);
	snprintf(want, sizeof(want), "responder refused RC RDMA WRITE Only psn 0x64 (rejection 1");
	cr_expect(log_has(want), "%s", log_text);
	snprintf(want, sizeof(want), "check rkey, remote access error; epsn 0x64");
	cr_expect(log_has(want), "%s", log_text);
	snprintf(want, sizeof(want), "rkey %#x len 64; in message none", bad_rkey);
	cr_expect(log_has(want), "%s", log_text);
	/* The QP's counters, as uroce-ctl reads them. */
	{
		int s = dt_connect(dd.sock_path), fd = -1;
		struct uroce_shm_msg_hello_req h;
		uint8_t buf[UROCE_SHM_MSG_MAX];

		cr_assert_geq(s, 0);
		memset(&h, 0, sizeof(h));
		h.abi_major = UROCE_SHM_ABI_MAJOR;
		h.abi_minor = UROCE_SHM_ABI_MINOR;
		cr_assert_gt(dt_msg_send(s, UROCE_SHM_MSG_HELLO, 1, &h, sizeof(h), -1), 0);
		cr_assert_gt(dt_msg_recv(s, buf, sizeof(buf), &fd), 0);
		if (fd >= 0)
			close(fd);
		memset(&cq, 0, sizeof(cq));
		cq.scope = UROCE_SHM_COUNTERS_QP;
		cq.qp_num = b->qp_num;
		do {
			const struct uroce_shm_msg_hdr *hd = (const void *)buf;

			cr_assert_gt(dt_msg_send(s, UROCE_SHM_MSG_QUERY_COUNTERS, 2, &cq,
						 sizeof(cq), -1), 0);
			cr_assert_gt(dt_msg_recv(s, buf, sizeof(buf), &fd), 0);
			cr_assert_eq(hd->status, 0);
			memcpy(&cr, buf + sizeof(*hd), sizeof(cr));
			for (i = 0; i < cr.page.count; i++) {
				const struct uroce_shm_counter *c = &cr.c[i];

				if (c->group != UROCE_SHM_COUNTER_G_RESP_REJECT)
					continue;
				found++;
				if (strcmp(c->name, "resp_rejects") == 0)
					cr_expect_eq(c->value, 1);
				if (strcmp(c->name, "last_reject_check") == 0)
					cr_expect_eq(c->value, UROCE_RCHK_RKEY);
				if (strcmp(c->name, "last_reject_nak") == 0)
					cr_expect_eq(c->value, UROCE_NAK_REMOTE_ACCESS_ERR);
				if (strcmp(c->name, "last_reject_psn") == 0)
					cr_expect_eq(c->value, 100);
				if (strcmp(c->name, "last_reject_rkey") == 0)
					cr_expect_eq(c->value, bad_rkey);
				if (strcmp(c->name, "last_reject_va") == 0)
					cr_expect_eq(c->value, (uintptr_t)e.buf + 4096);
			}
			cq.start = cr.page.next;
		} while (cr.page.flags & UROCE_SHM_LIST_F_MORE);
		close(s);
	}
	cr_expect_eq(found, 10, "the last responder error rows");
	uroce_log_set(NULL, UROCE_LOG_NOTICE);
	cr_expect_eq(uroce_destroy_qp(a), 0);
	cr_expect_eq(uroce_destroy_qp(b), 0);
	ep_close(&e);
	wait_all_reclaimed();
}

/* The client of a responder QP goes away while its READ responses are
 * queued (issue 16: the soak's "spurious remote access error" was this, at
 * the teardown that followed a failure). Workers on threads of their own,
 * so they keep running while the control thread tears the session down.
 * Expect: the requester's READs end in success, RETRY_EXC_ERR or a flush,
 * never REM_ACCESS_ERR; the daemon counts no remote access error and logs
 * no refused request: the dead client's QP answered nothing. */
Test(events, dying_responder_is_silent, .timeout = 60, .fini = stop_daemon)
{
	const int access = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
			   UROCE_ACCESS_REMOTE_READ;
	struct uroce_daemon_conf conf;
	uint64_t cnt[UROCE_CNT_MAX];
	struct uroce_qp *a, *b;
	struct uroce_mr *mrb;
	struct uroce_wc wc;
	struct ep ea, eb;
	unsigned int i, done = 0, ok = 0;
	double end;
	int rc;

	log_len = 0;
	log_text[0] = '\0';
	uroce_log_set(log_capture, UROCE_LOG_NOTICE);
	memset(&conf, 0, sizeof(conf));
	conf.threaded = true;
	rc = dt_daemon_start(&dd, "dying", &conf);
	cr_assert_eq(rc, 0, "daemon: %s", strerror(-rc));
	ep_open(&ea);
	ep_open(&eb);
	mrb = uroce_reg_mr(eb.pd, eb.buf, BUF_SIZE, access);
	cr_assert_not_null(mrb);
	a = qp_new(&ea, NULL);
	b = qp_new(&eb, NULL);
	{
		const struct dt_rc to_b = {.dgid = eb.gid, .dqpn = b->qp_num, .rq_psn = 7,
					   .sq_psn = 9, .rd_atomic = 16};
		const struct dt_rc to_a = {.dgid = ea.gid, .dqpn = a->qp_num, .rq_psn = 9,
					   .sq_psn = 7, .rd_atomic = 16};

		cr_assert_eq(dt_qp_to_rts(a, access, &to_b), 0);
		cr_assert_eq(dt_qp_to_rts(b, access, &to_a), 0);
	}
	/* 16 READs of 32 KiB (32 response packets each) from b's memory. */
	for (i = 0; i < 16; i++) {
		struct uroce_sge sge = {.addr = (uintptr_t)ea.buf, .length = 32768,
					.lkey = ea.mr->lkey};
		struct uroce_send_wr wr, *bad = NULL;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = i;
		wr.opcode = UROCE_WR_RDMA_READ;
		wr.send_flags = UROCE_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.remote_addr = (uintptr_t)eb.buf;
		wr.wr.rdma.rkey = mrb->rkey;
		cr_assert_eq(uroce_post_send(a, &wr, &bad), 0);
	}
	/* The responder is busy: its client hangs up without cleaning up. */
	wait_wc(ea.cq, &wc);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS, "%s", uroce_wc_status_name(wc.status));
	done = ok = 1;
	cr_assert_eq(uroce_close_device(eb.ctx), 0);
	end = dt_now_s() + 20;
	while (done < 16 && dt_now_s() < end) {
		if (uroce_poll_cq(ea.cq, 1, &wc) != 1) {
			dt_nap_ms(1);
			continue;
		}
		done++;
		ok += wc.status == UROCE_WC_SUCCESS;
		cr_expect(wc.status == UROCE_WC_SUCCESS || wc.status == UROCE_WC_RETRY_EXC_ERR ||
			  wc.status == UROCE_WC_WR_FLUSH_ERR, "READ %u: %s", done,
			  uroce_wc_status_name(wc.status));
	}
	cr_expect_eq(done, 16, "%u of 16 READs completed", done);
	dt_daemon_lock(&dd);
	uroce_daemon_counters(dd.d, cnt, UROCE_CNT_MAX);
	dt_daemon_unlock(&dd);
	cr_expect_eq(cnt[UROCE_CNT_RESP_REMOTE_ACCESS_ERRORS], 0);
	cr_expect(!log_has("responder refused"), "%s", log_text);
	cr_log_info("%u of 16 READs done before the responder's client left", ok);
	uroce_log_set(NULL, UROCE_LOG_NOTICE);
	cr_expect_eq(uroce_destroy_qp(a), 0);
	ep_close(&ea);
}

Test(events, cq_overrun_reports_cq_err_once, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_async_event ev;
	struct uroce_qp_init_attr ia;
	struct uroce_send_wr wr[3];
	struct uroce_sge sge;
	struct uroce_cq *tiny;
	struct uroce_qp *qp;
	struct uroce_wc wc;
	struct ep e;
	int i;

	start_daemon();
	ep_open(&e);
	async_nonblocking(e.ctx);
	tiny = uroce_create_cq(e.ctx, 1, NULL);
	cr_assert_not_null(tiny);
	cr_assert_eq(uroce_cq_size(tiny), 1);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = tiny;
	ia.recv_cq = e.cq;
	ia.qp_type = UROCE_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = uroce_create_qp(e.pd, &ia);
	cr_assert_not_null(qp);
	qp_rts(qp, e.gid, qp->qp_num);
	/* Expect: three SENDs whose lkey is no MR of this client: the first
	 * fails its lkey check (LOC_PROT_ERR, the QP to ERR) and the others
	 * are flushed, but the send CQ holds one: the second completion
	 * overruns it, CQ_ERR once (IBA 11.4.2.1), not twice, and no QP event
	 * (the completion reports the error). */
	sge.addr = (uint64_t)(uintptr_t)e.buf;
	sge.length = 8;
	sge.lkey = e.mr->lkey ^ 0x100u;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 40 + (uint64_t)i;
		wr[i].opcode = UROCE_WR_SEND;
		wr[i].send_flags = UROCE_SEND_SIGNALED;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	cr_assert_eq(uroce_post_send(qp, wr, NULL), 0);
	cr_assert(wait_event(e.ctx, &ev, 3000), "no CQ_ERR");
	cr_expect_eq(ev.event_type, UROCE_ASYNC_CQ_ERR);
	cr_expect_eq(ev.element.cq, tiny);
	cr_expect_eq(uroce_destroy_cq(tiny), -EBUSY, "destroy before the ack");
	uroce_ack_async_event(&ev);
	wait_wc(tiny, &wc);
	cr_expect_eq(wc.wr_id, 40);
	cr_expect_eq(wc.status, UROCE_WC_LOC_PROT_ERR);
	cr_expect_not(wait_event(e.ctx, &ev, 100), "a second CQ_ERR (type %u)", ev.event_type);
	cr_assert_eq(uroce_destroy_qp(qp), 0);
	cr_assert_eq(uroce_destroy_cq(tiny), 0);
	ep_close(&e);
	wait_all_reclaimed();
}

Test(events, daemon_death_gives_device_fatal_and_enotconn, .timeout = 60,
     .fini = stop_daemon)
{
	struct uroce_async_event ev;
	struct uroce_srq_attr sa;
	struct uroce_srq *srq;
	struct pollfd p;
	struct ep e;

	start_daemon();
	ep_open(&e);
	srq = srq_new(&e, 8, 1);
	/* An event left unread when the daemon dies: arming at level 0 fires. */
	memset(&sa, 0, sizeof(sa));
	sa.srq_limit = 1;
	cr_assert_eq(uroce_modify_srq(srq, &sa, UROCE_SRQ_LIMIT), 0);
	stop_daemon();
	/* Expect: the async fd turns readable; the queued event first, then
	 * DEVICE_FATAL once (blocking mode: it must not hang), then ENOTCONN. */
	p.fd = uroce_async_fd(e.ctx);
	p.events = POLLIN;
	cr_assert_eq(poll(&p, 1, 5000), 1, "async fd not readable after daemon death");
	cr_assert_eq(uroce_get_async_event(e.ctx, &ev), 0);
	cr_expect_eq(ev.event_type, UROCE_ASYNC_SRQ_LIMIT_REACHED);
	cr_expect_eq(ev.element.srq, srq);
	uroce_ack_async_event(&ev);
	cr_assert_eq(uroce_get_async_event(e.ctx, &ev), 0);
	cr_expect_eq(ev.event_type, UROCE_ASYNC_DEVICE_FATAL);
	cr_expect_null(ev.element.qp);
	uroce_ack_async_event(&ev);
	cr_expect_eq(uroce_get_async_event(e.ctx, &ev), -ENOTCONN);
	cr_expect(uroce_context_fatal(e.ctx));
	/* Expect: every call that needs the daemon fails with ENOTCONN. */
	cr_expect_null(uroce_alloc_pd(e.ctx));
	cr_expect_eq(errno, ENOTCONN);
	cr_expect_eq(uroce_query_srq(srq, &sa), -ENOTCONN);
	cr_expect_eq(srq_recv1(&e, srq, 1, 0, 64, e.mr->lkey), -ENOTCONN);
	cr_expect_eq(uroce_destroy_srq(srq), -ENOTCONN, "freed locally anyway");
	ep_close(&e);
}

/* ------------------------------------------------------------------------ */
/* Tests that speak the control protocol by hand (lib/shm only)             */
/* ------------------------------------------------------------------------ */

static int
raw_connect(void)
{
	struct timeval tv = {.tv_sec = 5};
	int fd = dt_connect(dd.sock_path);

	cr_assert_geq(fd, 0, "connect: %s", strerror(-fd));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Send one request without waiting. @return bytes sent or -errno. */
static ssize_t
raw_send(int fd, uint16_t type, uint32_t seq, const void *body, size_t blen, bool dontwait)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	int n = dt_msg_build(buf, sizeof(buf), type, seq, body, blen);

	cr_assert_gt(n, 0);
	if (dontwait) {
		ssize_t r = send(fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);

		return r < 0 ? -errno : r;
	}
	return uroce_shm_sock_send(fd, buf, (size_t)n, -1);
}

/* One request/response; ASYNC_EVENTs met on the way are counted in @p events. */
static int
raw_call(int fd, uint16_t type, uint32_t seq, const void *body, size_t blen, void *resp,
	 size_t rlen, unsigned int *events)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	const struct uroce_shm_msg_hdr *h = (const void *)buf;

	cr_assert_gt(raw_send(fd, type, seq, body, blen, false), 0);
	for (;;) {
		int rfd;
		ssize_t n = dt_msg_recv(fd, buf, sizeof(buf), &rfd);

		cr_assert_gt(n, 0, "recv: %zd", n);
		if (rfd >= 0)
			close(rfd);
		if (h->type == UROCE_SHM_MSG_ASYNC_EVENT) {
			cr_assert_eq(h->seq, 0, "events are seq 0");
			if (events != NULL)
				(*events)++;
			continue;
		}
		cr_assert_eq(h->seq, seq);
		cr_assert_eq(h->type, type);
		if (resp != NULL)
			memcpy(resp, buf + sizeof(*h), rlen);
		return h->status;
	}
}

static uint32_t
raw_hello_pd_srq(int fd, uint16_t minor, int *srq_rc, uint16_t *daemon_minor)
{
	struct uroce_shm_msg_hello_req hq;
	struct uroce_shm_msg_hello_resp hr;
	struct uroce_shm_msg_handle pd;
	struct uroce_shm_msg_create_srq_req sq;
	struct uroce_shm_msg_create_srq_resp sr;

	memset(&hq, 0, sizeof(hq));
	hq.abi_major = UROCE_SHM_ABI_MAJOR;
	hq.abi_minor = minor;
	cr_assert_eq(raw_call(fd, UROCE_SHM_MSG_HELLO, 1, &hq, sizeof(hq), &hr, sizeof(hr),
			      NULL), 0);
	*daemon_minor = hr.abi_minor;
	cr_assert_eq(raw_call(fd, UROCE_SHM_MSG_ALLOC_PD, 2, NULL, 0, &pd, sizeof(pd), NULL), 0);
	memset(&sq, 0, sizeof(sq));
	sq.pd_handle = pd.handle;
	sq.max_wr = 4;
	sq.max_sge = 1;
	memset(&sr, 0, sizeof(sr));
	*srq_rc = raw_call(fd, UROCE_SHM_MSG_CREATE_SRQ, 3, &sq, sizeof(sq), &sr, sizeof(sr),
			   NULL);
	return sr.srq_handle;
}

/* MODIFY_CQ is checked by the daemon too, whatever a client sends: another
 * mask, a period above 4095 us, a nonzero reserved word: EINVAL before the
 * handle is looked at; a handle that is not a CQ: ENOENT. */
Test(events, modify_cq_checked_by_the_daemon, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_shm_msg_modify_cq_req q;
	uint16_t dminor = 0;
	uint32_t srq;
	int fd, rc;

	start_daemon();
	fd = raw_connect();
	srq = raw_hello_pd_srq(fd, UROCE_SHM_ABI_MINOR, &rc, &dminor);
	cr_assert_eq(rc, 0, "create_srq: %d", rc);
	memset(&q, 0, sizeof(q));
	q.cq_handle = 0xdeadbeef;
	q.attr_mask = UROCE_CQ_ATTR_MODERATE;
	q.cq_count = 8;
	q.cq_period = UROCE_CQ_PERIOD_MAX + 1;
	cr_expect_eq(raw_call(fd, UROCE_SHM_MSG_MODIFY_CQ, 10, &q, sizeof(q), NULL, 0, NULL),
		     -EINVAL);
	q.cq_period = 10;
	q.attr_mask = 2;
	cr_expect_eq(raw_call(fd, UROCE_SHM_MSG_MODIFY_CQ, 11, &q, sizeof(q), NULL, 0, NULL),
		     -EINVAL);
	q.attr_mask = UROCE_CQ_ATTR_MODERATE;
	q.reserved = 1;
	cr_expect_eq(raw_call(fd, UROCE_SHM_MSG_MODIFY_CQ, 12, &q, sizeof(q), NULL, 0, NULL),
		     -EINVAL);
	q.reserved = 0;
	cr_expect_eq(raw_call(fd, UROCE_SHM_MSG_MODIFY_CQ, 13, &q, sizeof(q), NULL, 0, NULL),
		     -EPERM, "another session's handle");
	q.cq_handle = srq;
	cr_expect_eq(raw_call(fd, UROCE_SHM_MSG_MODIFY_CQ, 14, &q, sizeof(q), NULL, 0, NULL),
		     -ENOENT, "an SRQ's handle");
	close(fd);
}

Test(events, abi_1_0_client_gets_no_srq, .timeout = 60, .fini = stop_daemon)
{
	uint16_t dminor = 0;
	int fd, rc;

	start_daemon();
	fd = raw_connect();
	/* Expect: a 1.0 HELLO is accepted, the response says ours (1.8), and CREATE_SRQ
	 * is -EOPNOTSUPP: that client would never ring the SRQ's doorbell. */
	raw_hello_pd_srq(fd, 0, &rc, &dminor);
	cr_expect_eq(dminor, UROCE_SHM_ABI_MINOR);
	cr_expect_eq(UROCE_SHM_ABI_MINOR, 8);
	cr_expect_eq(rc, -EOPNOTSUPP);
	close(fd);
	fd = raw_connect();
	/* Expect: the same requests from a 1.1 client create the SRQ. */
	raw_hello_pd_srq(fd, 1, &rc, &dminor);
	cr_expect_eq(rc, 0);
	close(fd);
	wait_all_reclaimed();
}

Test(events, unread_socket_drops_events_and_never_blocks, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_shm_msg_modify_srq_req mq;
	struct uroce_daemon_stats st;
	struct ep e;
	uint32_t seq, srq;
	uint16_t dminor;
	double end;
	int fd, rc;

	start_daemon();
	fd = raw_connect();
	srq = raw_hello_pd_srq(fd, 1, &rc, &dminor);
	cr_assert_eq(rc, 0);
	/* Expect: each MODIFY_SRQ arms the limit of the empty SRQ, which fires
	 * at once: a reply and an event per request. This client reads nothing:
	 * once half its socket is full the daemon drops events (counted); when
	 * even a reply cannot be sent it hangs up on that client. It never waits. */
	memset(&mq, 0, sizeof(mq));
	mq.srq_handle = srq;
	mq.attr_mask = UROCE_SRQ_LIMIT;
	mq.srq_limit = 1;
	end = dt_now_s() + 10;
	for (seq = 10; seq < 20000 && dt_now_s() < end; seq++) {
		ssize_t n = raw_send(fd, UROCE_SHM_MSG_MODIFY_SRQ, seq, &mq, sizeof(mq), true);

		if (n == -EAGAIN) {
			seq--;
			dt_nap_ms(1);
			continue;
		}
		if (n < 0)
			break; /* the daemon hung up on us */
	}
	end = dt_now_s() + 10;
	do {
		stats(&st);
		if (st.async_dropped > 0 && st.sessions_reaped > 0)
			break;
		dt_nap_ms(5);
	} while (dt_now_s() < end);
	cr_log_info("requests sent %u, events sent %llu, dropped %llu, sessions reaped %llu",
		    seq - 10, (unsigned long long)st.async_events,
		    (unsigned long long)st.async_dropped, (unsigned long long)st.sessions_reaped);
	cr_expect_gt(st.async_events, 0, "some events were sent");
	cr_expect_gt(st.async_dropped, 0, "events dropped, not waited for");
	cr_expect_geq(st.sessions_reaped, 1, "the client that reads nothing was hung up on");
	/* Expect: the daemon still serves everyone else. */
	ep_open(&e);
	ep_close(&e);
	close(fd);
	wait_all_reclaimed();
}

/*
 * Placement (doc/architecture.md): a QP, its CQs and its SRQ run on one
 * worker. With two workers, two QPs on CQs of their own land on different
 * workers (round robin), and a third QP that names one CQ of each is refused
 * with EXDEV, creating nothing. With one worker it is an ordinary QP.
 */
Test(events, qp_on_cqs_of_two_workers_is_refused_exdev, .timeout = 60, .fini = stop_daemon)
{
	struct uroce_qp_init_attr ia;
	struct uroce_daemon_stats st;
	struct uroce_qp *q1, *q2, *q3;
	struct uroce_cq *cq2;
	struct ep a;

	start_daemon();
	ep_open(&a);
	cq2 = uroce_create_cq(a.ctx, 16, NULL);
	cr_assert_not_null(cq2);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = UROCE_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.send_cq = ia.recv_cq = a.cq;
	q1 = uroce_create_qp(a.pd, &ia);
	cr_assert_not_null(q1, "create_qp: %s", strerror(errno));
	ia.send_cq = ia.recv_cq = cq2;
	q2 = uroce_create_qp(a.pd, &ia);
	cr_assert_not_null(q2, "create_qp: %s", strerror(errno));
	ia.send_cq = a.cq;
	ia.recv_cq = cq2;
	q3 = uroce_create_qp(a.pd, &ia);
	stats(&st);
	if (dt_workers() >= 2) {
		/* Expect: EXDEV, and no third QP. */
		cr_expect_null(q3, "a QP on CQs of two workers was created");
		cr_expect_eq(errno, EXDEV, "errno %d", errno);
		cr_expect_eq(st.qps, 2);
	} else {
		/* Expect: one worker holds everything: an ordinary QP. */
		cr_expect_not_null(q3, "create_qp: %s", strerror(errno));
		cr_expect_eq(st.qps, 3);
		if (q3 != NULL)
			cr_expect_eq(uroce_destroy_qp(q3), 0);
	}
	cr_expect_eq(uroce_destroy_qp(q2), 0);
	cr_expect_eq(uroce_destroy_qp(q1), 0);
	cr_expect_eq(uroce_destroy_cq(cq2), 0);
	ep_close(&a);
}
