/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Test-only client of the daemon, built on the public liburoce API. The
 * component test (test_daemon.c) runs it as separate processes:
 *
 *   daemon_client pair SOCK ROLE WFD RFD  RC QP to the other role's QP; role 0
 *                                         runs SEND/RECV (SGE list, inline,
 *                                         immediate), WRITE, WRITE_WITH_IMM,
 *                                         READ, FETCH_ADD, CMP_SWAP, unsignaled
 *                                         WRs and an eventfd wait; role 1 serves
 *                                         and checks what landed in its memory
 *   daemon_client hog SOCK WFD            two of its own QPs joined to each
 *                                         other, RDMA WRITEs forever; writes 'R'
 *                                         to WFD once traffic flows
 *   daemon_client victim SOCK WFD RFD     publishes its QP/MR handles and keys,
 *                                         checks afterwards they were not touched
 *   daemon_client thief SOCK WFD RFD      uses the victim's handles and keys
 *   daemon_client orphan SOCK WFD RFD     waits while the daemon is destroyed,
 *                                         then checks calls fail with ENOTCONN
 *   daemon_client ud SOCK ROLE WFD RFD    UD QP; datagrams both ways (data, imm,
 *                                         src_qp, GRH flag checked), one with a
 *                                         wrong Q_Key that must be dropped; role 1
 *                                         then tries role 0's AH handle (-EPERM,
 *                                         and an error completion in a WQE); role 0
 *                                         checks RDMA on UD (-EINVAL) and a
 *                                         4097-byte datagram (error completion)
 *
 * Exit status 0 means every check passed; a failure prints what and exits 1.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uroce_verbs.h"

#include "daemon_test_util.h"

#define BUF_SIZE (64 * 1024)

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "daemon_client %s:%d: ", g_mode, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                        \
			fprintf(stderr, "\n");                               \
			exit(1);                                             \
		}                                                            \
	} while (0)

static const char *g_mode = "?";

struct peer_info {
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint32_t lkey;
	uint64_t va;
	uint32_t qp_handle;
	uint32_t mr_handle;
};

struct ep {
	struct uroce_context *ctx;
	struct uroce_pd *pd;
	uint8_t *buf;
	struct uroce_mr *mr;
	struct uroce_cq *cq;
	struct uroce_qp *qp;
	uint8_t gid[16];
};

/* Wait for one completion (busy poll with short naps), 10 s at most. */
static void
wait_wc(struct uroce_cq *cq, struct uroce_wc *wc)
{
	double end = dt_now_s() + 10;
	int n;

	while ((n = uroce_poll_cq(cq, 1, wc)) == 0) {
		CHECK(dt_now_s() < end, "no completion in 10 s");
		dt_nap_us(20);
	}
	CHECK(n == 1, "poll_cq: %d", n);
}

static void
expect_wc(struct uroce_cq *cq, uint64_t wr_id, uint32_t status, uint32_t opcode)
{
	struct uroce_wc wc;

	wait_wc(cq, &wc);
	CHECK(wc.wr_id == wr_id && wc.status == status && wc.opcode == opcode,
	      "wc wr_id %llu status %u opcode %u, wanted %llu %u %u",
	      (unsigned long long)wc.wr_id, wc.status, wc.opcode, (unsigned long long)wr_id,
	      status, opcode);
}

static void
ep_open(struct ep *e, const char *sock)
{
	struct uroce_qp_init_attr ia;
	struct uroce_device_attr da;
	struct uroce_port_attr pa;
	int rc;

	e->ctx = uroce_open_device(sock);
	CHECK(e->ctx != NULL, "open_device: %s", strerror(errno));
	rc = uroce_query_device(e->ctx, &da);
	CHECK(rc == 0 && da.max_sge == UROCE_MAX_SGE && da.max_qp_wr == UROCE_MAX_QP_WR &&
	      da.max_inline_data == UROCE_MAX_INLINE && da.max_cqe == UROCE_MAX_CQE &&
	      da.phys_port_cnt == 1, "query_device %d", rc);
	rc = uroce_query_port(e->ctx, 1, &pa);
	CHECK(rc == 0 && pa.state == 4 && pa.link_layer == 2 && pa.active_mtu == 5,
	      "query_port %d", rc);
	CHECK(uroce_query_port(e->ctx, 2, &pa) == -EINVAL, "port 2 exists?");
	CHECK(uroce_query_gid(e->ctx, 1, 0, e->gid) == 0, "query_gid");
	e->pd = uroce_alloc_pd(e->ctx);
	CHECK(e->pd != NULL, "alloc_pd: %s", strerror(errno));
	e->buf = uroce_alloc_buf(e->ctx, BUF_SIZE);
	CHECK(e->buf != NULL, "alloc_buf: %s", strerror(errno));
	e->mr = uroce_reg_mr(e->pd, e->buf, BUF_SIZE,
			     UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
			     UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC);
	CHECK(e->mr != NULL, "reg_mr: %s", strerror(errno));
	e->cq = uroce_create_cq(e->ctx, 64, NULL);
	CHECK(e->cq != NULL, "create_cq: %s", strerror(errno));
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.qp_type = UROCE_QPT_RC;
	ia.cap.max_send_wr = 32;
	ia.cap.max_recv_wr = 32;
	ia.cap.max_send_sge = 4;
	ia.cap.max_recv_sge = 4;
	ia.cap.max_inline_data = 64;
	e->qp = uroce_create_qp(e->pd, &ia);
	CHECK(e->qp != NULL, "create_qp: %s", strerror(errno));
	CHECK(ia.cap.max_send_wr >= 32 && ia.cap.max_inline_data == 64, "caps");
}

/* A QP of @p type on the endpoint's CQ, @p depth WRs and @p sge SGEs each way. */
static struct uroce_qp *
qp_new_type(struct ep *e, int type, uint32_t depth, uint32_t sge)
{
	struct uroce_qp *qp = dt_qp_create(e->pd, e->cq, NULL, type, depth, sge);

	CHECK(qp != NULL, "create_qp: %s", strerror(errno));
	return qp;
}

static struct uroce_qp *
qp_new(struct ep *e)
{
	return qp_new_type(e, UROCE_QPT_RC, 32, 4);
}

static void
qp_init(struct uroce_qp *qp)
{
	int rc = dt_qp_init(qp, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
				       UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC);

	CHECK(rc == 0, "INIT: %d", rc);
}

/* INIT -> RTR -> RTS, four READs/atomics in flight each way. */
static void
qp_connect(struct uroce_qp *qp, const uint8_t gid[16], uint32_t dqpn, uint32_t rq_psn,
	   uint32_t sq_psn)
{
	const struct dt_rc c = {.dgid = gid, .dqpn = dqpn, .rq_psn = rq_psn, .sq_psn = sq_psn,
				.rd_atomic = 4};
	int rc = dt_qp_rtr_rts(qp, &c);

	CHECK(rc == 0, "RTR/RTS: %d", rc);
}

static void
post_send1(struct uroce_qp *qp, uint64_t wr_id, uint32_t opcode, unsigned int flags,
	   struct uroce_sge *sge, int nsge, uint64_t raddr, uint32_t rkey)
{
	struct uroce_send_wr wr, *bad = NULL;
	int rc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = opcode;
	wr.send_flags = flags;
	wr.sg_list = sge;
	wr.num_sge = nsge;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	rc = uroce_post_send(qp, &wr, &bad);
	CHECK(rc == 0, "post_send %llu: %d", (unsigned long long)wr_id, rc);
}

static void
post_atomic(struct uroce_qp *qp, uint64_t wr_id, uint32_t opcode, struct uroce_sge *sge,
	    uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct uroce_send_wr wr, *bad = NULL;
	int rc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = opcode;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	rc = uroce_post_send(qp, &wr, &bad);
	CHECK(rc == 0, "post atomic %llu: %d", (unsigned long long)wr_id, rc);
}

static void
post_recv1(struct uroce_qp *qp, uint64_t wr_id, uint64_t addr, uint32_t len, uint32_t lkey)
{
	struct uroce_sge sge = {.addr = addr, .length = len, .lkey = lkey};
	struct uroce_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1};
	struct uroce_recv_wr *bad = NULL;
	int rc = uroce_post_recv(qp, &wr, &bad);

	CHECK(rc == 0, "post_recv: %d", rc);
}

static uint8_t
pat(uint32_t i, uint32_t seed)
{
	return (uint8_t)(i * 7 + seed + (i >> 8));
}

static void
fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(i, seed);
}

static bool
same(const uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(i, seed))
			return false;
	return true;
}

static void
exchange(struct ep *e, int wfd, int rfd, uint32_t psn, struct peer_info *peer)
{
	struct peer_info me = {
		.qpn = e->qp->qp_num, .psn = psn, .rkey = e->mr->rkey, .lkey = e->mr->lkey,
		.va = (uint64_t)(uintptr_t)e->buf, .qp_handle = e->qp->handle,
		.mr_handle = e->mr->handle,
	};

	dt_xwrite(wfd, &me, sizeof(me), __func__);
	dt_xread(rfd, peer, sizeof(*peer), __func__);
}

/* Offsets in each side's buffer. */
#define OFF_SEND 0        /* role 0 sends from here */
#define OFF_RECV 8192     /* role 1 receives here */
#define OFF_WRITE 16384   /* role 0 writes into role 1 here */
#define OFF_READ 32768    /* role 0 reads role 1 from here */
#define OFF_ATOMIC 49152  /* role 1's atomic word */
#define OFF_RESULT 49664  /* role 0's atomic results */
#define OFF_PING 53248

static int
run_pair(const char *sock, int role, int wfd, int rfd)
{
	struct peer_info peer;
	struct uroce_wc wc;
	struct ep e;
	uint32_t lk;
	uint64_t rva;
	uint8_t b = 0;
	int rc;

	memset(&e, 0, sizeof(e));
	ep_open(&e, sock);
	lk = e.mr->lkey;
	qp_init(e.qp);
	exchange(&e, wfd, rfd, role ? 0x200 : 0xfffff0, &peer);
	rva = peer.va;
	if (role == 1) {
		fill(e.buf + OFF_READ, 5000, 33);
		*(uint64_t *)(void *)(e.buf + OFF_ATOMIC) = 100;
		post_recv1(e.qp, 1, (uint64_t)(uintptr_t)(e.buf + OFF_RECV), 4096, lk);
		post_recv1(e.qp, 2, (uint64_t)(uintptr_t)(e.buf + OFF_RECV + 4096), 64, lk);
		post_recv1(e.qp, 3, (uint64_t)(uintptr_t)(e.buf + OFF_RECV + 4096 + 64), 64, lk);
	} else {
		post_recv1(e.qp, 50, (uint64_t)(uintptr_t)(e.buf + OFF_PING), 256, lk);
	}
	/* PSNs: role 0 starts near the 2^24 wrap on purpose. */
	qp_connect(e.qp, e.gid, peer.qpn, peer.psn, role ? 0x200 : 0xfffff0);
	{
		struct uroce_qp_attr qa;

		CHECK(uroce_query_qp(e.qp, &qa, 0, NULL) == 0 && qa.qp_state == UROCE_QPS_RTS &&
		      qa.dest_qp_num == peer.qpn, "query_qp");
	}
	dt_xwrite(wfd, "r", 1, __func__);
	dt_xread(rfd, &b, 1, __func__);

	if (role == 0) {
		struct uroce_sge sg[2];
		char inl[40];

		/* SEND of 3000 bytes from two SGEs (three packets at MTU 1024). */
		fill(e.buf + OFF_SEND, 3000, 1);
		sg[0] = (struct uroce_sge){(uint64_t)(uintptr_t)(e.buf + OFF_SEND), 1000, lk};
		sg[1] = (struct uroce_sge){(uint64_t)(uintptr_t)(e.buf + OFF_SEND + 1000), 2000,
					   lk};
		post_send1(e.qp, 10, UROCE_WR_SEND, UROCE_SEND_SIGNALED, sg, 2, 0, 0);
		expect_wc(e.cq, 10, UROCE_WC_SUCCESS, UROCE_WC_SEND);
		/* SEND_WITH_IMM, inline: the bytes are copied at post. */
		memset(inl, 'I', sizeof(inl));
		sg[0] = (struct uroce_sge){(uint64_t)(uintptr_t)inl, sizeof(inl), 0};
		{
			struct uroce_send_wr wr, *bad;

			memset(&wr, 0, sizeof(wr));
			wr.wr_id = 11;
			wr.opcode = UROCE_WR_SEND_WITH_IMM;
			wr.send_flags = UROCE_SEND_SIGNALED | UROCE_SEND_INLINE;
			wr.imm_data = 0x12345678;
			wr.sg_list = sg;
			wr.num_sge = 1;
			CHECK(uroce_post_send(e.qp, &wr, &bad) == 0, "post inline");
			memset(inl, 0, sizeof(inl)); /* must not matter any more */
		}
		expect_wc(e.cq, 11, UROCE_WC_SUCCESS, UROCE_WC_SEND);
		/* RDMA WRITE 8000 bytes unsignaled, then WRITE_WITH_IMM signaled. */
		fill(e.buf + OFF_SEND, 8000, 2);
		sg[0] = (struct uroce_sge){(uint64_t)(uintptr_t)(e.buf + OFF_SEND), 8000, lk};
		post_send1(e.qp, 12, UROCE_WR_RDMA_WRITE, 0, sg, 1, rva + OFF_WRITE, peer.rkey);
		sg[0] = (struct uroce_sge){(uint64_t)(uintptr_t)(e.buf + OFF_SEND + 8000), 100, lk};
		fill(e.buf + OFF_SEND + 8000, 100, 3);
		{
			struct uroce_send_wr wr, *bad;

			memset(&wr, 0, sizeof(wr));
			wr.wr_id = 13;
			wr.opcode = UROCE_WR_RDMA_WRITE_WITH_IMM;
			wr.send_flags = UROCE_SEND_SIGNALED;
			wr.imm_data = 0xabcd;
			wr.sg_list = sg;
			wr.num_sge = 1;
			wr.wr.rdma.remote_addr = rva + OFF_WRITE + 8000;
			wr.wr.rdma.rkey = peer.rkey;
			CHECK(uroce_post_send(e.qp, &wr, &bad) == 0, "post write imm");
		}
		/* The unsignaled WRITE gives no completion: the next one is 13. */
		expect_wc(e.cq, 13, UROCE_WC_SUCCESS, UROCE_WC_RDMA_WRITE);
		/* RDMA READ 5000 bytes. */
		memset(e.buf + OFF_SEND, 0, 5000);
		sg[0] = (struct uroce_sge){(uint64_t)(uintptr_t)(e.buf + OFF_SEND), 5000, lk};
		post_send1(e.qp, 14, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, sg, 1, rva + OFF_READ,
			   peer.rkey);
		expect_wc(e.cq, 14, UROCE_WC_SUCCESS, UROCE_WC_RDMA_READ);
		CHECK(same(e.buf + OFF_SEND, 5000, 33), "READ data differs");
		/* FETCH_ADD 100 + 5, then CMP_SWAP 105 -> 7. */
		sg[0] = (struct uroce_sge){(uint64_t)(uintptr_t)(e.buf + OFF_RESULT), 8, lk};
		post_atomic(e.qp, 15, UROCE_WR_ATOMIC_FETCH_AND_ADD, sg, rva + OFF_ATOMIC,
			    peer.rkey, 5, 0);
		expect_wc(e.cq, 15, UROCE_WC_SUCCESS, UROCE_WC_FETCH_ADD);
		CHECK(*(uint64_t *)(void *)(e.buf + OFF_RESULT) == 100, "FETCH_ADD original %llu",
		      (unsigned long long)*(uint64_t *)(void *)(e.buf + OFF_RESULT));
		sg[0] = (struct uroce_sge){(uint64_t)(uintptr_t)(e.buf + OFF_RESULT + 8), 8, lk};
		post_atomic(e.qp, 16, UROCE_WR_ATOMIC_CMP_AND_SWP, sg, rva + OFF_ATOMIC, peer.rkey,
			    105, 7);
		expect_wc(e.cq, 16, UROCE_WC_SUCCESS, UROCE_WC_COMP_SWAP);
		CHECK(*(uint64_t *)(void *)(e.buf + OFF_RESULT + 8) == 105, "CMP_SWAP original");
		/* The pong: arm the (empty) CQ before role 1 may send, so the event
		 * must come from the daemon's eventfd write; block on it. */
		CHECK(uroce_poll_cq(e.cq, 1, &wc) == 0, "CQ not empty");
		CHECK(uroce_req_notify_cq(e.cq, false) == 0, "req_notify");
		dt_xwrite(wfd, "d", 1, __func__);
		CHECK(uroce_get_cq_event(e.cq, 10000) == 1, "no CQ event");
		rc = uroce_poll_cq(e.cq, 1, &wc);
		CHECK(rc == 1 && wc.wr_id == 50 && wc.status == UROCE_WC_SUCCESS &&
		      wc.opcode == UROCE_WC_RECV && wc.byte_len == 200, "pong wc");
		CHECK(same(e.buf + OFF_PING, 200, 9), "pong data");
	} else {
		/* The SEND, the inline SEND_WITH_IMM, the WRITE_WITH_IMM. */
		wait_wc(e.cq, &wc);
		CHECK(wc.wr_id == 1 && wc.status == 0 && wc.opcode == UROCE_WC_RECV &&
		      wc.byte_len == 3000, "recv 1: id %llu st %u op %u len %u",
		      (unsigned long long)wc.wr_id, wc.status, wc.opcode, wc.byte_len);
		CHECK(same(e.buf + OFF_RECV, 3000, 1), "SEND data");
		wait_wc(e.cq, &wc);
		CHECK(wc.wr_id == 2 && wc.status == 0 && wc.byte_len == 40 &&
		      (wc.wc_flags & UROCE_WC_WITH_IMM) && wc.imm_data == 0x12345678,
		      "recv 2 (imm %#x flags %#x)", wc.imm_data, wc.wc_flags);
		CHECK(memcmp(e.buf + OFF_RECV + 4096, "IIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII",
			     40) == 0, "inline data");
		wait_wc(e.cq, &wc);
		CHECK(wc.wr_id == 3 && wc.status == 0 && wc.opcode == UROCE_WC_RECV_RDMA_WITH_IMM &&
		      wc.imm_data == 0xabcd && wc.byte_len == 100, "recv 3");
		CHECK(same(e.buf + OFF_WRITE, 8000, 2) && same(e.buf + OFF_WRITE + 8000, 100, 3),
		      "WRITE data");
		dt_xread(rfd, &b, 1, __func__);
		CHECK(b == 'd', "sync");
		CHECK(*(uint64_t *)(void *)(e.buf + OFF_ATOMIC) == 7, "atomic word %llu",
		      (unsigned long long)*(uint64_t *)(void *)(e.buf + OFF_ATOMIC));
		{
			struct uroce_sge sg = {(uint64_t)(uintptr_t)(e.buf + OFF_PING), 200, lk};

			fill(e.buf + OFF_PING, 200, 9);
			post_send1(e.qp, 60, UROCE_WR_SEND, UROCE_SEND_SIGNALED, &sg, 1, 0, 0);
			expect_wc(e.cq, 60, UROCE_WC_SUCCESS, UROCE_WC_SEND);
		}
	}
	dt_xwrite(wfd, "e", 1, __func__);
	dt_xread(rfd, &b, 1, __func__);
	CHECK(uroce_destroy_qp(e.qp) == 0, "destroy_qp");
	CHECK(uroce_destroy_cq(e.cq) == 0, "destroy_cq");
	CHECK(uroce_dereg_mr(e.mr) == 0, "dereg_mr");
	CHECK(uroce_free_buf(e.ctx, e.buf) == 0, "free_buf");
	CHECK(uroce_dealloc_pd(e.pd) == 0, "dealloc_pd");
	CHECK(uroce_close_device(e.ctx) == 0, "close");
	return 0;
}

/* Two QPs of one client joined to each other. */
static void
self_pair(struct ep *e, struct uroce_qp *a, struct uroce_qp *b)
{
	qp_init(a);
	qp_init(b);
	qp_connect(a, e->gid, b->qp_num, 0x10, 0x20);
	qp_connect(b, e->gid, a->qp_num, 0x20, 0x10);
}

static int
run_hog(const char *sock, int wfd)
{
	struct uroce_qp *b;
	struct uroce_wc wc;
	struct ep e;
	uint64_t n = 0, done = 0;

	memset(&e, 0, sizeof(e));
	ep_open(&e, sock);
	b = qp_new(&e);
	self_pair(&e, e.qp, b);
	for (;;) {
		struct uroce_sge sg = {(uint64_t)(uintptr_t)e.buf, 16384, e.mr->lkey};

		while (n - done < 16) {
			post_send1(e.qp, n, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, &sg, 1,
				   (uint64_t)(uintptr_t)(e.buf + 32768), e.mr->rkey);
			n++;
		}
		while (uroce_poll_cq(e.cq, 1, &wc) == 1) {
			CHECK(wc.status == 0, "hog wc %u", wc.status);
			if (++done == 8)
				dt_xwrite(wfd, "R", 1, __func__);
		}
		dt_nap_us(20);
	}
	return 0;
}

static int
run_victim(const char *sock, int wfd, int rfd)
{
	struct peer_info me;
	struct uroce_qp_attr qa;
	struct ep e;
	uint8_t b;

	memset(&e, 0, sizeof(e));
	ep_open(&e, sock);
	qp_init(e.qp);
	fill(e.buf, 4096, 5);
	exchange(&e, wfd, rfd, 0, &me);
	dt_xread(rfd, &b, 1, __func__);
	/* The thief is done: our QP and MR are as we left them. */
	CHECK(uroce_query_qp(e.qp, &qa, 0, NULL) == 0 && qa.qp_state == UROCE_QPS_INIT,
	      "victim QP state %u", qa.qp_state);
	CHECK(same(e.buf, 4096, 5), "victim memory changed");
	CHECK(uroce_destroy_qp(e.qp) == 0, "victim QP gone");
	CHECK(uroce_destroy_cq(e.cq) == 0, "victim CQ gone");
	CHECK(uroce_dereg_mr(e.mr) == 0, "victim MR gone");
	CHECK(uroce_free_buf(e.ctx, e.buf) == 0, "victim buffer");
	CHECK(uroce_dealloc_pd(e.pd) == 0, "victim PD gone");
	CHECK(uroce_close_device(e.ctx) == 0, "close");
	dt_xwrite(wfd, "v", 1, __func__);
	return 0;
}

static int
run_thief(const char *sock, int wfd, int rfd)
{
	struct peer_info v;
	struct uroce_qp fake;
	struct uroce_mr fake_mr;
	struct uroce_qp_attr qa;
	struct uroce_qp *b, *c2, *d2;
	struct ep e;
	int rc;

	memset(&e, 0, sizeof(e));
	ep_open(&e, sock);
	exchange(&e, wfd, rfd, 0, &v);
	/* Another client's QP handle: refused, nothing changes. */
	fake = *e.qp;
	fake.handle = v.qp_handle;
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = UROCE_QPS_ERR;
	rc = uroce_modify_qp(&fake, &qa, UROCE_QP_STATE);
	CHECK(rc == -EPERM, "modify foreign QP: %d", rc);
	rc = uroce_query_qp(&fake, &qa, 0, NULL);
	CHECK(rc == -EPERM, "query foreign QP: %d", rc);
	fake_mr = *e.mr;
	fake_mr.handle = v.mr_handle;
	rc = uroce_dereg_mr(&fake_mr);
	CHECK(rc == -EPERM, "dereg foreign MR: %d", rc);
	/* A handle of our own session that does not exist. */
	fake.handle = e.qp->handle + 77;
	rc = uroce_modify_qp(&fake, &qa, UROCE_QP_STATE);
	CHECK(rc == -ENOENT, "modify unknown QP: %d", rc);

	/* Another client's rkey through our own connection: remote access error. */
	b = qp_new(&e);
	self_pair(&e, e.qp, b);
	{
		struct uroce_sge sg = {(uint64_t)(uintptr_t)e.buf, 64, e.mr->lkey};

		post_send1(e.qp, 70, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, &sg, 1, v.va,
			   v.rkey);
		expect_wc(e.cq, 70, UROCE_WC_REM_ACCESS_ERR, UROCE_WC_RDMA_WRITE);
	}
	/* Another client's lkey in our WQE: local protection error from the daemon. */
	c2 = qp_new(&e);
	d2 = qp_new(&e);
	self_pair(&e, c2, d2);
	{
		struct uroce_sge sg = {v.va, 64, v.lkey};

		post_send1(c2, 71, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, &sg, 1,
			   (uint64_t)(uintptr_t)e.buf, e.mr->rkey);
		expect_wc(e.cq, 71, UROCE_WC_LOC_PROT_ERR, UROCE_WC_RDMA_WRITE);
		CHECK(uroce_query_qp(c2, &qa, 0, NULL) == 0 && qa.qp_state == UROCE_QPS_ERR,
		      "QP with a bad WQE is in ERR (%u)", qa.qp_state);
	}
	dt_xwrite(wfd, "t", 1, __func__);
	/* Leave everything to the daemon's cleanup: exit abruptly, as a crashing
	 * client would (no atexit handlers, no leak report for what we left). */
	_exit(0);
}

static int
run_orphan(const char *sock, int wfd, int rfd)
{
	struct ep e;
	uint8_t b;
	int rc;

	memset(&e, 0, sizeof(e));
	ep_open(&e, sock);
	CHECK(uroce_req_notify_cq(e.cq, false) == 0, "arm");
	dt_xwrite(wfd, "R", 1, __func__);
	dt_xread(rfd, &b, 1, __func__); /* the daemon is gone now */
	rc = uroce_get_cq_event(e.cq, 10000);
	CHECK(rc == -ENOTCONN, "get_cq_event after daemon death: %d", rc);
	CHECK(uroce_alloc_pd(e.ctx) == NULL && errno == ENOTCONN, "alloc_pd: %s",
	      strerror(errno));
	CHECK(uroce_context_fatal(e.ctx), "context not fatal");
	{
		struct uroce_sge sg = {(uint64_t)(uintptr_t)e.buf, 8, e.mr->lkey};
		struct uroce_send_wr wr = {.opcode = UROCE_WR_SEND, .sg_list = &sg, .num_sge = 1};
		struct uroce_send_wr *bad = NULL;

		CHECK(uroce_post_send(e.qp, &wr, &bad) == -ENOTCONN && bad == &wr, "post_send");
	}
	/* Destroying after the daemon died releases the local side. */
	CHECK(uroce_destroy_qp(e.qp) == -ENOTCONN, "destroy_qp");
	CHECK(uroce_destroy_cq(e.cq) == -ENOTCONN, "destroy_cq");
	CHECK(uroce_dereg_mr(e.mr) == -ENOTCONN, "dereg_mr");
	CHECK(uroce_free_buf(e.ctx, e.buf) == 0, "free_buf");
	CHECK(uroce_dealloc_pd(e.pd) == -ENOTCONN, "dealloc_pd");
	CHECK(uroce_close_device(e.ctx) == 0, "close");
	return 0;
}

/* ------------------------------------------------------------------------ */
/* UD                                                                        */
/* ------------------------------------------------------------------------ */

#define UD_QKEY 0x11223344u
#define UD_N 4                 /* good datagrams each way */
#define UD_LEN 1000            /* payload bytes, below the 1024 path MTU */
#define UD_SLOT 2048           /* receive slot: GRH + payload */

struct ud_info {
	uint32_t qpn;
	uint32_t qkey;
	uint32_t ah_handle;
	uint8_t gid[16];
};

static struct uroce_qp *
ud_qp_new(struct ep *e)
{
	struct uroce_qp *qp = qp_new_type(e, UROCE_QPT_UD, 16, 1);
	struct uroce_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.port_num = 1;
	a.qkey = UD_QKEY;
	rc = uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
					     UROCE_QP_QKEY);
	CHECK(rc == 0, "UD INIT: %d", rc);
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTR;
	rc = uroce_modify_qp(qp, &a, UROCE_QP_STATE);
	CHECK(rc == 0, "UD RTR: %d", rc);
	a.qp_state = UROCE_QPS_RTS;
	a.sq_psn = 0x123;
	rc = uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN);
	CHECK(rc == 0, "UD RTS: %d", rc);
	return qp;
}

static void
ud_send(struct ep *e, struct uroce_qp *qp, struct uroce_ah *ah, uint32_t dqpn, uint32_t qkey,
	uint64_t wr_id, uint32_t seed, bool imm)
{
	struct uroce_sge sg = {(uint64_t)(uintptr_t)e->buf + seed * UD_SLOT, UD_LEN, e->mr->lkey};
	struct uroce_send_wr wr, *bad = NULL;
	int rc;

	fill(e->buf + seed * UD_SLOT, UD_LEN, seed);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = imm ? UROCE_WR_SEND_WITH_IMM : UROCE_WR_SEND;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.imm_data = 0xabc00000u + seed;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = dqpn;
	wr.wr.ud.remote_qkey = qkey;
	rc = uroce_post_send(qp, &wr, &bad);
	CHECK(rc == 0, "UD post_send %llu: %d", (unsigned long long)wr_id, rc);
	expect_wc(e->cq, wr_id, UROCE_WC_SUCCESS, UROCE_WC_SEND);
}

/* Receive the datagrams of seeds first..first+UD_N-1 from @p src_qpn, in order. */
static void
ud_recv_check(struct ep *e, uint32_t src_qpn, uint32_t first)
{
	struct uroce_wc wc;
	uint32_t i;

	for (i = 0; i < UD_N; i++) {
		uint32_t seed = first + i;
		uint8_t *slot;

		wait_wc(e->cq, &wc);
		CHECK(wc.status == UROCE_WC_SUCCESS && wc.opcode == UROCE_WC_RECV,
		      "UD recv status %u opcode %u", wc.status, wc.opcode);
		slot = e->buf + 32768 + wc.wr_id * UD_SLOT;
		/* IBA 11.4.1.2: the first 40 bytes of a UD receive are the GRH. */
		CHECK(wc.byte_len == UROCE_GRH_LEN + UD_LEN, "UD byte_len %u", wc.byte_len);
		CHECK(wc.wc_flags & UROCE_WC_GRH, "UD recv without GRH flag");
		CHECK(wc.src_qp == src_qpn, "src_qp %#x, wanted %#x", wc.src_qp, src_qpn);
		CHECK(same(slot + UROCE_GRH_LEN, UD_LEN, seed), "UD datagram %u corrupt", seed);
		if (i == 0)
			CHECK((wc.wc_flags & UROCE_WC_WITH_IMM) &&
			      wc.imm_data == 0xabc00000u + seed, "imm %#x flags %#x", wc.imm_data,
			      wc.wc_flags);
		else
			CHECK(!(wc.wc_flags & UROCE_WC_WITH_IMM), "unexpected imm");
	}
}

static int
run_ud(const char *sock, int role, int wfd, int rfd)
{
	struct uroce_device_attr da;
	struct uroce_ah_attr aa;
	struct ud_info me, peer;
	struct uroce_ah *ah, fake_ah;
	struct uroce_qp *qp;
	struct uroce_wc wc;
	struct ep e;
	uint32_t i;
	uint8_t b;
	int rc;

	memset(&e, 0, sizeof(e));
	ep_open(&e, sock);
	/* query_device tells the truth: AHs and SRQs (ABI 1.1) are served. */
	CHECK(uroce_query_device(e.ctx, &da) == 0 && da.max_ah == 4096 && da.max_srq == 4096,
	      "max_ah %u max_srq %u", da.max_ah, da.max_srq);
	qp = ud_qp_new(&e);
	{
		struct uroce_qp_attr qa;

		CHECK(uroce_query_qp(qp, &qa, 0, NULL) == 0 && qa.qp_state == UROCE_QPS_RTS &&
		      qa.qkey == UD_QKEY, "UD query_qp state %u qkey %#x", qa.qp_state, qa.qkey);
	}
	/* Receive slots: GRH + payload each; wr_id is the slot index. */
	for (i = 0; i < 8; i++)
		post_recv1(qp, i, (uint64_t)(uintptr_t)e.buf + 32768 + i * UD_SLOT, UD_SLOT,
			   e.mr->lkey);
	memset(&me, 0, sizeof(me));
	me.qpn = qp->qp_num;
	me.qkey = UD_QKEY;
	memcpy(me.gid, e.gid, 16);
	memset(&aa, 0, sizeof(aa));
	memcpy(aa.dgid, e.gid, 16);
	aa.hop_limit = 64;
	aa.traffic_class = 0;
	aa.flow_label = 0x12345;
	aa.port_num = 1;
	aa.flow_label = 0x1fffff;
	CHECK(uroce_create_ah(e.pd, &aa) == NULL && errno == EINVAL, "21-bit flow label");
	aa.flow_label = 0x12345;
	ah = uroce_create_ah(e.pd, &aa);
	CHECK(ah != NULL, "create_ah: %s", strerror(errno));
	me.ah_handle = ah->handle;
	dt_xwrite(wfd, &me, sizeof(me), __func__);
	dt_xread(rfd, &peer, sizeof(peer), __func__);
	/* Both sides have their receives posted once the exchange is done. */
	if (role == 0) {
		/* Expect: a wrong Q_Key is silently dropped by the receiver (IBA
		 * C9-158 / 10.2.5): the peer's first completion is seed 1. */
		ud_send(&e, qp, ah, peer.qpn, 0x0badbad0u, 100, 0, false);
		for (i = 0; i < UD_N; i++)
			ud_send(&e, qp, ah, peer.qpn, peer.qkey, 101 + i, 1 + i, i == 0);
		ud_recv_check(&e, peer.qpn, 11);
	} else {
		ud_recv_check(&e, peer.qpn, 1);
		for (i = 0; i < UD_N; i++)
			ud_send(&e, qp, ah, peer.qpn, peer.qkey, 201 + i, 11 + i, i == 0);
	}
	dt_xwrite(wfd, "d", 1, __func__);
	dt_xread(rfd, &b, 1, __func__);
	/* Nothing else arrived: the wrong-Q_Key datagram left no completion. */
	CHECK(uroce_poll_cq(e.cq, 1, &wc) == 0, "extra completion wr_id %llu status %u",
	      (unsigned long long)wc.wr_id, wc.status);
	if (role == 1) {
		/* Another client's AH handle: refused by the daemon. */
		fake_ah = *ah;
		fake_ah.handle = peer.ah_handle;
		rc = uroce_destroy_ah(&fake_ah);
		CHECK(rc == -EPERM, "destroy foreign AH: %d", rc);
		/* ... and in a WQE it fails that WQE with a local QP operation error. */
		{
			struct uroce_sge sg = {(uint64_t)(uintptr_t)e.buf, 16, e.mr->lkey};
			struct uroce_send_wr wr, *bad = NULL;

			memset(&wr, 0, sizeof(wr));
			wr.wr_id = 300;
			wr.opcode = UROCE_WR_SEND;
			wr.send_flags = UROCE_SEND_SIGNALED;
			wr.sg_list = &sg;
			wr.num_sge = 1;
			wr.wr.ud.ah = &fake_ah;
			wr.wr.ud.remote_qpn = peer.qpn;
			wr.wr.ud.remote_qkey = peer.qkey;
			CHECK(uroce_post_send(qp, &wr, &bad) == 0, "post foreign AH");
			/* The QP goes to ERR: its 4 unused receives are flushed first. */
			for (i = 0; i < 4; i++) {
				wait_wc(e.cq, &wc);
				CHECK(wc.status == UROCE_WC_WR_FLUSH_ERR && wc.wr_id == 4 + i,
				      "flush wr_id %llu status %u",
				      (unsigned long long)wc.wr_id, wc.status);
			}
			expect_wc(e.cq, 300, UROCE_WC_LOC_QP_OP_ERR, UROCE_WC_SEND);
		}
		/* Leave QP, AH and the rest to the daemon's cleanup: exit abruptly,
		 * as a crashing client would (no leak report for what we left). */
		_exit(0);
	}
	{
		/* RDMA on a UD QP: refused by liburoce before it reaches the ring. */
		struct uroce_sge sg = {(uint64_t)(uintptr_t)e.buf, 16, e.mr->lkey};
		struct uroce_send_wr wr, *bad = NULL;

		memset(&wr, 0, sizeof(wr));
		wr.opcode = UROCE_WR_RDMA_WRITE;
		wr.sg_list = &sg;
		wr.num_sge = 1;
		wr.wr.ud.ah = ah;
		CHECK(uroce_post_send(qp, &wr, &bad) == -EINVAL && bad == &wr, "UD RDMA WRITE");
		/* A datagram longer than the 4096-byte MTU fails that WR. */
		wr.opcode = UROCE_WR_SEND;
		wr.wr_id = 400;
		wr.send_flags = UROCE_SEND_SIGNALED;
		wr.wr.ud.remote_qpn = peer.qpn;
		wr.wr.ud.remote_qkey = peer.qkey;
		sg.length = 4097;
		CHECK(uroce_post_send(qp, &wr, &bad) == 0, "post 4097 B datagram");
		/* The QP goes to ERR: its 4 unused receives are flushed first. */
		for (i = 0; i < 4; i++) {
			wait_wc(e.cq, &wc);
			CHECK(wc.status == UROCE_WC_WR_FLUSH_ERR && wc.wr_id == 4 + i,
			      "flush wr_id %llu status %u", (unsigned long long)wc.wr_id,
			      wc.status);
		}
		wait_wc(e.cq, &wc);
		/* The engine refuses it at post (longer than the UD MTU): the
		 * worker fails the WR with a local length error (IBA 10.8.3.1). */
		CHECK(wc.wr_id == 400 && wc.status == UROCE_WC_LOC_LEN_ERR,
		      "4097 B datagram: wr_id %llu status %u", (unsigned long long)wc.wr_id,
		      wc.status);
	}
	CHECK(uroce_destroy_ah(ah) == 0, "destroy_ah");
	CHECK(uroce_destroy_qp(qp) == 0, "destroy UD qp");
	CHECK(uroce_destroy_qp(e.qp) == 0, "destroy RC qp");
	CHECK(uroce_destroy_cq(e.cq) == 0, "destroy_cq");
	CHECK(uroce_dereg_mr(e.mr) == 0, "dereg_mr");
	CHECK(uroce_free_buf(e.ctx, e.buf) == 0, "free_buf");
	CHECK(uroce_dealloc_pd(e.pd) == 0, "dealloc_pd");
	CHECK(uroce_close_device(e.ctx) == 0, "close");
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: daemon_client pair|hog|victim|thief|orphan SOCK ...\n");
		return 2;
	}
	g_mode = argv[1];
	if (!strcmp(argv[1], "pair") && argc == 6)
		return run_pair(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	if (!strcmp(argv[1], "ud") && argc == 6)
		return run_ud(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	if (!strcmp(argv[1], "hog") && argc == 4)
		return run_hog(argv[2], atoi(argv[3]));
	if (!strcmp(argv[1], "victim") && argc == 5)
		return run_victim(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (!strcmp(argv[1], "thief") && argc == 5)
		return run_thief(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (!strcmp(argv[1], "orphan") && argc == 5)
		return run_orphan(argv[2], atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "daemon_client: bad arguments\n");
	return 2;
}
