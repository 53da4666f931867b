/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * rc_pingpong: the smallest complete liburoce program.
 *
 * It makes two RC queue pairs, a and b, connects them to each other, and
 * bounces a message between them: a SENDs, b receives it and SENDs it back, a
 * receives the reply, and so on. It prints the average round-trip time.
 * Everything a two-host program does is here, except that the "other side"
 * (QPN, PSN, GID, MTU) is known locally instead of being exchanged over TCP.
 *
 * Each QP has its own context (daemon connection), PD, buffer, MR and CQ, as
 * it would on two hosts. By default both contexts open the same daemon; with
 * UROCE_PEER_SOCKET set, b opens that daemon instead, so that a and b talk
 * over the wire between two daemons.
 *
 *   rc_pingpong [SOCKET_PATH] [ITERATIONS] [SIZE]
 *
 * SOCKET_PATH defaults to $UROCE_SOCKET, then /run/uroce/uroced.sock.
 * Environment (examples/example_util.h):
 *   UROCE_PEER_SOCKET  the daemon of QP b (default: SOCKET_PATH's)
 *   UROCE_GID_INDEX    the GID index both QPs use on port 1 (default 0)
 * The path MTU is 4096 bytes, or the smaller active MTU of the two ports.
 * Run it against the test tool:
 *   build/test/component/daemon/uroced_lite /tmp/uroce.sock &
 *   build/examples/rc_pingpong /tmp/uroce.sock 10000
 * or on two uroced instances connected by memif or af_packet:
 *   UROCE_PEER_SOCKET=/run/uroce/b.sock UROCE_GID_INDEX=1 \
 *       build/examples/rc_pingpong /run/uroce/a.sock 10000
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uroce_verbs.h"

#include "example_util.h"

#define WANT_MTU 5      /* IBA MTU enum: 4096 bytes */

/* One QP and everything it owns; on two hosts, one host's resources. */
struct side {
	struct uroce_context *ctx;
	struct uroce_port_attr port;
	uint8_t gid[16];
	struct uroce_pd *pd;
	uint8_t *buf;     /* [0, size): send buffer, [size, 2*size): receive buffer */
	struct uroce_mr *mr;
	struct uroce_cq *cq;
	struct uroce_qp *qp;
};

/* Open side @p which (0: a, 1: b; see ex_open()) and make its PD, a buffer
 * of 2 * @p size bytes and its MR, a CQ and one RC QP. */
static void
setup(struct side *s, const char *path, int which, uint32_t size)
{
	s->ctx = ex_open(path, which, s->gid, &s->port);
	s->pd = uroce_alloc_pd(s->ctx);
	if (s->pd == NULL)
		ex_die("alloc_pd", errno);
	s->buf = uroce_alloc_buf(s->ctx, 2 * (size_t)size);
	if (s->buf == NULL)
		ex_die("alloc_buf", errno);
	s->mr = uroce_reg_mr(s->pd, s->buf, 2 * (size_t)size, UROCE_ACCESS_LOCAL_WRITE);
	if (s->mr == NULL)
		ex_die("reg_mr", errno);
	s->cq = uroce_create_cq(s->ctx, 16, NULL);
	if (s->cq == NULL)
		ex_die("create_cq", errno);
	s->qp = ex_create_qp(s->pd, s->cq, UROCE_QPT_RC, false, 4, 4);
}

/* RESET -> INIT -> RTR -> RTS, aimed at @p peer's QP. Both QPs start at PSN
 * 0; SENDs only, so no remote access is granted. The path MTU must not
 * exceed either port's active MTU (the daemon refuses it with EINVAL), and
 * both ends must use the same one. */
static void
connect_qp(struct side *s, const struct side *peer)
{
	uint32_t mtu = WANT_MTU;
	struct ex_rc_conn c = {
		.dest_qpn = peer->qp->qp_num,
		.dgid = peer->gid,
		.access = UROCE_ACCESS_LOCAL_WRITE,
		.rd_atomic = 1,
	};

	if (s->port.active_mtu < mtu)
		mtu = s->port.active_mtu;
	if (peer->port.active_mtu < mtu)
		mtu = peer->port.active_mtu;
	c.path_mtu = (uint8_t)mtu;
	ex_connect_rc(s->qp, &c);
}

static void
post_recv(struct side *s, uint32_t size)
{
	struct uroce_sge sge = {(uint64_t)(uintptr_t)(s->buf + size), size, s->mr->lkey};
	struct uroce_recv_wr wr = {.wr_id = 2, .sg_list = &sge, .num_sge = 1};
	struct uroce_recv_wr *bad;
	int rc = uroce_post_recv(s->qp, &wr, &bad);

	if (rc)
		ex_die("post_recv", -rc);
}

static void
post_send(struct side *s, uint32_t size)
{
	struct uroce_sge sge = {(uint64_t)(uintptr_t)s->buf, size, s->mr->lkey};
	struct uroce_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = UROCE_WR_SEND, .send_flags = UROCE_SEND_SIGNALED,
	};
	struct uroce_send_wr *bad;
	int rc = uroce_post_send(s->qp, &wr, &bad);

	if (rc)
		ex_die("post_send", -rc);
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Busy-poll @p s's CQ until its receive (wr_id 2) has completed; its send
 * completions (wr_id 1) are consumed on the way. Dies after EX_WAIT_MS
 * without one (e.g. the two daemons cannot reach each other). */
static void
wait_recv(struct side *s)
{
	double end = now_ms() + EX_WAIT_MS;
	unsigned int idle = 0;
	struct uroce_wc wc;

	for (;;) {
		int n = uroce_poll_cq(s->cq, 1, &wc);

		if (n < 0)
			ex_die("poll_cq", -n);
		if (n == 0) {
			/* Look at the clock only now and then: polling is the hot path. */
			if (++idle % 4096 == 0 && now_ms() > end)
				ex_die("waiting for a receive", ETIMEDOUT);
			continue;
		}
		if (wc.status != UROCE_WC_SUCCESS) {
			fprintf(stderr, "rc_pingpong: completion error %s (wr_id %llu)\n",
				ex_status(wc.status), (unsigned long long)wc.wr_id);
			exit(1);
		}
		if (wc.wr_id == 2)
			return;
	}
}

static void
teardown(struct side *s)
{
	ex_ck(uroce_destroy_qp(s->qp), "destroy_qp");
	ex_close(s->ctx, s->pd, s->buf, s->mr, s->cq);
}

int
main(int argc, char **argv)
{
	uint64_t n_arg = 1000, size_arg = 64;
	const struct ex_num nums[] = {
		{"ITERATIONS", 1, 100000000, &n_arg},
		{"SIZE", 1, 65536, &size_arg},
	};
	const char *path;
	struct timespec t0, t1;
	struct side a, b;
	uint32_t size;
	long i, iters;
	double us;

	ex_set_role("rc_pingpong");
	path = ex_args(argc, argv, "rc_pingpong [SOCKET_PATH] [ITERATIONS] [SIZE<=65536]", nums,
		       2, NULL);
	iters = (long)n_arg;
	size = (uint32_t)size_arg;
	/* 1. Two sides, each with its own context (its daemon, its GID, its
	 * port's MTU), memory, CQ and RC QP. */
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	setup(&a, path, 0, size);
	setup(&b, path, 1, size);

	/* 2. Connect them to each other. A receive is posted before the first
	 * SEND can arrive (otherwise the responder answers RNR NAK and the
	 * sender waits). */
	connect_qp(&a, &b);
	connect_qp(&b, &a);
	post_recv(&b, size);
	post_recv(&a, size);

	/* 3. Ping-pong: a -> b, b -> a, each side re-posting its receive first. */
	memset(a.buf, 0x5a, size);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < iters; i++) {
		post_send(&a, size);
		wait_recv(&b);
		post_recv(&b, size);
		memcpy(b.buf, b.buf + size, size); /* echo what arrived */
		post_send(&b, size);
		wait_recv(&a);
		post_recv(&a, size);
		if (memcmp(a.buf + size, a.buf, size) != 0) {
			fprintf(stderr, "rc_pingpong: data mismatch at iteration %ld\n", i);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	us = ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3);
	printf("rc_pingpong: %ld round trips of %u bytes, %.2f us per round trip\n", iters, size,
	       us / (double)iters);

	/* 4. Tear down in reverse order. */
	teardown(&a);
	teardown(&b);
	return 0;
}
