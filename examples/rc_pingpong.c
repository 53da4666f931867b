/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * rc_pingpong: the smallest complete liburoce program.
 *
 * It opens the uroce daemon, makes two RC queue pairs, connects them to each
 * other through the daemon's port, and bounces a message between them: QP A
 * SENDs, QP B receives it and SENDs it back, A receives the reply, and so on.
 * It prints the average round-trip time. Everything a two-host program does is
 * here, except that the "other side" (QPN, PSN, GID) is known locally instead
 * of being exchanged over TCP.
 *
 *   rc_pingpong [SOCKET_PATH] [ITERATIONS] [SIZE]
 *
 * SOCKET_PATH defaults to $UROCE_SOCKET, then /run/uroce/uroced.sock. Until
 * uroced is wired to lib/daemon, run it against the test tool:
 *   build/test/component/daemon/uroced_lite /tmp/uroce.sock &
 *   build/examples/rc_pingpong /tmp/uroce.sock 10000
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uroce_verbs.h"

#include "example_util.h"

struct side {
	struct uroce_qp *qp;
	uint8_t *buf;     /* [0, size): send buffer, [size, 2*size): receive buffer */
};

/* RESET -> INIT -> RTR -> RTS, aimed at the QP numbered dest_qpn. Both QPs
 * start at PSN 0; SENDs only, so no remote access is granted. */
static void
connect_qp(struct uroce_qp *qp, uint32_t dest_qpn, const uint8_t gid[16])
{
	struct ex_rc_conn c = {
		.dest_qpn = dest_qpn,
		.dgid = gid,
		.path_mtu = 5,          /* 4096 */
		.access = UROCE_ACCESS_LOCAL_WRITE,
		.rd_atomic = 1,
	};

	ex_connect_rc(qp, &c);
}

static void
post_recv(struct side *s, uint32_t size, uint32_t lkey)
{
	struct uroce_sge sge = {(uint64_t)(uintptr_t)(s->buf + size), size, lkey};
	struct uroce_recv_wr wr = {.wr_id = 2, .sg_list = &sge, .num_sge = 1};
	struct uroce_recv_wr *bad;
	int rc = uroce_post_recv(s->qp, &wr, &bad);

	if (rc)
		ex_die("post_recv", -rc);
}

static void
post_send(struct side *s, uint32_t size, uint32_t lkey)
{
	struct uroce_sge sge = {(uint64_t)(uintptr_t)s->buf, size, lkey};
	struct uroce_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = UROCE_WR_SEND, .send_flags = UROCE_SEND_SIGNALED,
	};
	struct uroce_send_wr *bad;
	int rc = uroce_post_send(s->qp, &wr, &bad);

	if (rc)
		ex_die("post_send", -rc);
}

/* Busy-poll until the receive (wr_id 2) of @p qp_num has completed. Send
 * completions (wr_id 1) are consumed on the way. */
static void
wait_recv(struct uroce_cq *cq, uint32_t qp_num)
{
	struct uroce_wc wc;

	for (;;) {
		int n = uroce_poll_cq(cq, 1, &wc);

		if (n < 0)
			ex_die("poll_cq", -n);
		if (n == 0)
			continue;
		if (wc.status != UROCE_WC_SUCCESS) {
			fprintf(stderr, "rc_pingpong: completion error %u (wr_id %llu)\n",
				wc.status, (unsigned long long)wc.wr_id);
			exit(1);
		}
		if (wc.wr_id == 2 && wc.qp_num == qp_num)
			return;
	}
}

int
main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : NULL;
	long iters = argc > 2 ? atol(argv[2]) : 1000;
	uint32_t size = argc > 3 ? (uint32_t)atol(argv[3]) : 64;
	struct uroce_qp_init_attr ia;
	struct uroce_context *ctx;
	struct uroce_pd *pd;
	struct uroce_cq *cq;
	struct uroce_mr *mr;
	struct side a, b;
	struct timespec t0, t1;
	uint8_t gid[16];
	uint8_t *mem;
	long i;
	double us;

	ex_set_role("rc_pingpong");
	if (iters <= 0 || size == 0 || size > 65536) {
		fprintf(stderr, "usage: rc_pingpong [SOCKET_PATH] [ITERATIONS] [SIZE<=65536]\n");
		return 2;
	}
	/* 1. The device: a context on the daemon's socket, the port's GID. */
	ctx = uroce_open_device(path);
	if (ctx == NULL)
		ex_die("open_device", errno);
	if (uroce_query_gid(ctx, 1, 0, gid) != 0)
		ex_die("query_gid", EIO);

	/* 2. Memory: shared with the daemon, registered once for both QPs. */
	pd = uroce_alloc_pd(ctx);
	if (pd == NULL)
		ex_die("alloc_pd", errno);
	mem = uroce_alloc_buf(ctx, 4 * (size_t)size);
	if (mem == NULL)
		ex_die("alloc_buf", errno);
	mr = uroce_reg_mr(pd, mem, 4 * (size_t)size, UROCE_ACCESS_LOCAL_WRITE);
	if (mr == NULL)
		ex_die("reg_mr", errno);
	a.buf = mem;
	b.buf = mem + 2 * size;

	/* 3. One CQ and two RC QPs. */
	cq = uroce_create_cq(ctx, 16, NULL);
	if (cq == NULL)
		ex_die("create_cq", errno);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = UROCE_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	a.qp = uroce_create_qp(pd, &ia);
	b.qp = uroce_create_qp(pd, &ia);
	if (a.qp == NULL || b.qp == NULL)
		ex_die("create_qp", errno);

	/* 4. Connect them to each other. A receive is posted before the first SEND
	 * can arrive (otherwise the responder answers RNR NAK and the sender waits). */
	connect_qp(a.qp, b.qp->qp_num, gid);
	connect_qp(b.qp, a.qp->qp_num, gid);
	post_recv(&b, size, mr->lkey);
	post_recv(&a, size, mr->lkey);

	/* 5. Ping-pong: A -> B, B -> A, each side re-posting its receive first. */
	memset(a.buf, 0x5a, size);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < iters; i++) {
		post_send(&a, size, mr->lkey);
		wait_recv(cq, b.qp->qp_num);
		post_recv(&b, size, mr->lkey);
		memcpy(b.buf, b.buf + size, size); /* echo what arrived */
		post_send(&b, size, mr->lkey);
		wait_recv(cq, a.qp->qp_num);
		post_recv(&a, size, mr->lkey);
		if (memcmp(a.buf + size, a.buf, size) != 0) {
			fprintf(stderr, "rc_pingpong: data mismatch at iteration %ld\n", i);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	us = ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3);
	printf("rc_pingpong: %ld round trips of %u bytes, %.2f us per round trip\n", iters, size,
	       us / (double)iters);

	/* 6. Tear down in reverse order. */
	uroce_destroy_qp(a.qp);
	uroce_destroy_qp(b.qp);
	uroce_destroy_cq(cq);
	uroce_dereg_mr(mr);
	uroce_free_buf(ctx, mem);
	uroce_dealloc_pd(pd);
	uroce_close_device(ctx);
	return 0;
}
