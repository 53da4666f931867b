/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Two daemon cores (lib/daemon) joined by the simulated lossy wire
 * (test/common/simwire_daemon.h), with real liburoce client processes: so
 * that loss recovery, duplicates, reordering and corruption cross the
 * daemon's wire port and its shared-memory data path, not only a bare
 * engine.
 *
 * The test process creates daemon A (GID ::ffff:198.18.0.1) and daemon B
 * (::ffff:198.18.0.2), both with active MTU 1024 so that messages are
 * multi-packet, and polls both and the wire. Client A (forked, liburoce,
 * connected to A's socket) and client B (to B's) exchange QPN, PSN, GID,
 * buffer address and rkey over a socketpair and bring an RC QP to RTS
 * (local ACK timeout 12, 16.8 ms, so that recovery is fast; seven retries;
 * A's send PSN starts just below 2^24 so that its first round wraps).
 * Then, in rounds that alternate the requester, the requester posts one
 * batch of RDMA WRITEs, RDMA READs, SENDs, FETCH_AND_ADDs and
 * COMPARE_AND_SWAPs; it checks every completion (in order, success, opcode)
 * and the bytes READ and the atomics' original values exactly; the
 * responder checks the bytes written (and that nothing around them
 * changed), every received message and the atomic's final value.
 *
 * After the clients exit: both daemons are back to zero resources, no work
 * request ran out of retries, and with loss the retransmission counters of
 * the transport moved; every frame the wire corrupted was rejected by the
 * receiving port's ICRC check and never reached a daemon.
 *
 * Everything stays in this process and its children (UNIX sockets in a
 * private directory under /tmp); no packet touches a real network.
 *
 * Debugging: SIMWIRE_TRACE=1 prints every frame's fate (simwire_daemon.c);
 * DAEMON_WIRE_DUMP=1 prints both daemons' non-zero transport counters.
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uroce_daemon.h"
#include "uroce_transport.h"
#include "uroce_verbs.h"
#include "uroce_wire.h"

#include "simwire_daemon.h"

/* In a child: print what failed and exit 1 (never return into Criterion). */
#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "client %c round %d %s:%d: ", cl_name, \
				cl_round, __func__, __LINE__);                \
			fprintf(stderr, __VA_ARGS__);                         \
			fprintf(stderr, "\n");                                \
			_exit(1);                                             \
		}                                                             \
	} while (0)

/* Layout of each client's buffer (one uroce_alloc_buf segment, one MR). */
#define BUF_LEN (512u * 1024)
#define REGION (64u * 1024)
#define OFF_WDST (0 * REGION)   /* the peer RDMA WRITEs here */
#define OFF_RSRC (1 * REGION)   /* the peer RDMA READs from here */
#define OFF_WSRC (2 * REGION)   /* source of our WRITEs */
#define OFF_RDST (3 * REGION)   /* destination of our READs */
#define OFF_SSRC (4 * REGION)   /* source of our SENDs */
#define OFF_RECV (5 * REGION)   /* receive slots */
#define SLOT 8192u
#define OFF_ATOM (7 * REGION)   /* the 8-byte target of the peer's atomics */
#define OFF_ARES (OFF_ATOM + 64) /* original values our atomics return */
#define RECV_FILL 0xEE

#define ROUNDS 6
#define WAIT_S 20.0             /* bound on any one wait in a client */
#define RUN_S 40.0              /* bound on a whole case in the test process */

/* The script both clients follow; sizes straddle the 1024-byte MTU. */
struct xfer {
	uint32_t src;   /* offset in the source region */
	uint32_t dst;   /* offset in the destination region */
	uint32_t len;
};

static const struct xfer writes[] = {
	{0, 0, 1}, {16, 64, 1023}, {2048, 1100, 1024}, {4100, 3000, 1025},
	{8000, 5003, 4099}, {12345, 12000, 20000},
};
static const struct xfer reads[] = {
	{3, 0, 7}, {100, 64, 1024}, {5000, 2000, 3073}, {9001, 8192, 16384}, {40000, 30000, 1},
};
/* dst: receive slot index */
static const struct xfer sends[] = {
	{0, 0, 1}, {10, 1, 1023}, {2000, 2, 1024}, {4000, 3, 1025}, {8000, 4, 4096},
	{16000, 5, 8192},
};
static const uint64_t adds[] = {
	1, 0xFF, 0x100000000ull, 0x8000000000000000ull, 7,
};

#define N_W (sizeof(writes) / sizeof(writes[0]))
#define N_R (sizeof(reads) / sizeof(reads[0]))
#define N_S (sizeof(sends) / sizeof(sends[0]))
#define N_A (sizeof(adds) / sizeof(adds[0]))
#define N_WR (N_W + N_R + N_S + N_A + 2)

/* Exchanged over the socketpair to connect. */
struct conn_info {
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint32_t pad;
	uint64_t va;
	uint8_t gid[16];
};

/* Shared with the children through fork(). */
static char dir_path[64];
static char sock_path[2][108];
static uint8_t gid_of[2][16];
static char cl_name = '?';
static int cl_round = -1;

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
	struct timespec ts = {.tv_nsec = 20000};

	nanosleep(&ts, NULL);
}

static void
set_gid(uint8_t gid[16], uint8_t host)
{
	/* ::ffff:198.18.0.x (RFC 2544 benchmarking range) */
	memset(gid, 0, 16);
	gid[10] = 0xFF;
	gid[11] = 0xFF;
	gid[12] = 198;
	gid[13] = 18;
	gid[15] = host;
}

/* ------------------------------------------------------------------------ */
/* Client side                                                               */
/* ------------------------------------------------------------------------ */

struct client {
	struct uroce_context *ctx;
	struct uroce_pd *pd;
	struct uroce_cq *scq;
	struct uroce_cq *rcq;
	struct uroce_qp *qp;
	struct uroce_mr *mr;
	uint8_t *buf;
	struct conn_info peer;
	int fd;
};

static uint8_t
pat(uint32_t i, uint32_t seed)
{
	return (uint8_t)(i * 29 + seed * 131 + (i >> 8) * 7 + 3);
}

static void
fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(i, seed);
}

static uint32_t
seed_of(int round, char what)
{
	return (uint32_t)round * 4u + (uint32_t)(what == 'W' ? 1 : what == 'R' ? 2 : 3);
}

static uint64_t
atom_start(int round)
{
	/* High bits set: the 0x8000... add carries out of bit 63. */
	return 0xF123456789ABCD00ull + (uint64_t)round * 0x1000;
}

static uint64_t
atom_swap(int round)
{
	return 0xA5A5A5A55A5A5A5Aull ^ (uint64_t)round;
}

static void
xwrite(int fd, const void *p, size_t n)
{
	CHECK(write(fd, p, n) == (ssize_t)n, "write: %s", strerror(errno));
}

static void
xread(int fd, void *p, size_t n)
{
	ssize_t r = read(fd, p, n);

	CHECK(r == (ssize_t)n, "read: %zd (%s)", r, r == 0 ? "the peer is gone" : strerror(errno));
}

static void
expect_byte(int fd, char want)
{
	char c = 0;

	xread(fd, &c, 1);
	CHECK(c == want, "peer said '%c', expected '%c'", c, want);
}

/* Poll @p cq for exactly @p n completions, within WAIT_S. */
static void
poll_n(struct uroce_cq *cq, struct uroce_wc *wc, int n)
{
	double end = now_s() + WAIT_S;
	int got = 0;

	while (got < n) {
		int r = uroce_poll_cq(cq, n - got, wc + got);

		CHECK(r >= 0, "poll_cq: %d", r);
		if (r == 0) {
			CHECK(now_s() < end, "%d of %d completions after %.0f s", got, n, WAIT_S);
			nap();
		}
		got += r;
	}
}

static void
client_open(struct client *c, int side, int fd)
{
	struct uroce_qp_init_attr ia;
	struct uroce_port_attr pa;
	uint8_t gid[16];

	c->fd = fd;
	c->ctx = uroce_open_device(sock_path[side]);
	CHECK(c->ctx != NULL, "open_device %s: %s", sock_path[side], strerror(errno));
	/* Expect: the daemon's port as configured: its GID, MTU 1024. */
	CHECK(uroce_query_gid(c->ctx, 1, 0, gid) == 0, "query_gid");
	CHECK(memcmp(gid, gid_of[side], 16) == 0, "GID 0 is not the daemon's");
	CHECK(uroce_query_port(c->ctx, 1, &pa) == 0 && pa.active_mtu == UROCE_MTU_1024,
	      "active_mtu %u", pa.active_mtu);
	c->pd = uroce_alloc_pd(c->ctx);
	CHECK(c->pd != NULL, "alloc_pd: %s", strerror(errno));
	c->buf = uroce_alloc_buf(c->ctx, BUF_LEN);
	CHECK(c->buf != NULL, "alloc_buf: %s", strerror(errno));
	c->mr = uroce_reg_mr(c->pd, c->buf, BUF_LEN,
			     UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
			     UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC);
	CHECK(c->mr != NULL, "reg_mr: %s", strerror(errno));
	c->scq = uroce_create_cq(c->ctx, 64, NULL);
	c->rcq = uroce_create_cq(c->ctx, 64, NULL);
	CHECK(c->scq != NULL && c->rcq != NULL, "create_cq: %s", strerror(errno));
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = c->scq;
	ia.recv_cq = c->rcq;
	ia.qp_type = UROCE_QPT_RC;
	ia.cap.max_send_wr = 32;
	ia.cap.max_recv_wr = 16;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	c->qp = uroce_create_qp(c->pd, &ia);
	CHECK(c->qp != NULL, "create_qp: %s", strerror(errno));
}

/* Swap QPN/PSN/GID/VA/rkey with the peer and take the QP to RTS. */
static void
client_connect(struct client *c, uint32_t psn)
{
	struct conn_info me;
	struct uroce_qp_attr a;

	memset(&me, 0, sizeof(me));
	me.qpn = c->qp->qp_num;
	me.psn = psn;
	me.rkey = c->mr->rkey;
	me.va = (uintptr_t)c->buf;
	CHECK(uroce_query_gid(c->ctx, 1, 0, me.gid) == 0, "query_gid");
	xwrite(c->fd, &me, sizeof(me));
	xread(c->fd, &c->peer, sizeof(c->peer));
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
			    UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC;
	CHECK(uroce_modify_qp(c->qp, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
					       UROCE_QP_ACCESS_FLAGS) == 0, "INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTR;
	a.path_mtu = UROCE_MTU_1024;
	a.dest_qp_num = c->peer.qpn;
	a.rq_psn = c->peer.psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	memcpy(a.ah_attr.dgid, c->peer.gid, 16);
	a.ah_attr.port_num = 1;
	a.ah_attr.hop_limit = 64;
	CHECK(uroce_modify_qp(c->qp, &a, UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU |
					       UROCE_QP_DEST_QPN | UROCE_QP_RQ_PSN |
					       UROCE_QP_MAX_DEST_RD_ATOMIC |
					       UROCE_QP_MIN_RNR_TIMER) == 0, "RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTS;
	a.sq_psn = psn;
	/* 4.096 µs * 2^12 = 16.8 ms: fast loss recovery, yet longer than the
	 * scheduling stalls of a loaded 2-core machine (the wire and both
	 * daemons are one process), which would fire spurious timeouts. */
	a.timeout = 12;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	CHECK(uroce_modify_qp(c->qp, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN | UROCE_QP_TIMEOUT |
					       UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY |
					       UROCE_QP_MAX_QP_RD_ATOMIC) == 0, "RTS");
}

static void
client_close(struct client *c)
{
	CHECK(uroce_destroy_qp(c->qp) == 0, "destroy_qp");
	CHECK(uroce_destroy_cq(c->scq) == 0, "destroy_cq");
	CHECK(uroce_destroy_cq(c->rcq) == 0, "destroy_cq");
	CHECK(uroce_dereg_mr(c->mr) == 0, "dereg_mr");
	CHECK(uroce_free_buf(c->ctx, c->buf) == 0, "free_buf");
	CHECK(uroce_dealloc_pd(c->pd) == 0, "dealloc_pd");
	CHECK(uroce_close_device(c->ctx) == 0, "close_device");
}

/* One send WR on our buffer; the caller sets the opcode-specific fields. */
static void
wr_init(struct uroce_send_wr *wr, struct uroce_sge *sge, struct client *c, uint64_t wr_id,
	uint32_t opcode, uint32_t off, uint32_t len)
{
	memset(wr, 0, sizeof(*wr));
	sge->addr = (uintptr_t)(c->buf + off);
	sge->length = len;
	sge->lkey = c->mr->lkey;
	wr->wr_id = wr_id;
	wr->opcode = opcode;
	wr->send_flags = UROCE_SEND_SIGNALED;
	wr->sg_list = sge;
	wr->num_sge = 1;
}

/* The requester's half of round @p r: one batch of every operation. */
static void
requester_round(struct client *c, int r)
{
	static const uint32_t wc_op[] = {
		[UROCE_WR_RDMA_WRITE] = UROCE_WC_RDMA_WRITE,
		[UROCE_WR_RDMA_READ] = UROCE_WC_RDMA_READ,
		[UROCE_WR_SEND] = UROCE_WC_SEND,
		[UROCE_WR_ATOMIC_FETCH_AND_ADD] = UROCE_WC_FETCH_ADD,
		[UROCE_WR_ATOMIC_CMP_AND_SWP] = UROCE_WC_COMP_SWAP,
	};
	struct uroce_send_wr wr[N_WR], *bad = NULL;
	struct uroce_sge sge[N_WR];
	struct uroce_wc wc[N_WR];
	uint64_t expect_orig[N_A + 2], v, res;
	uint64_t rva = c->peer.va;
	uint32_t rkey = c->peer.rkey;
	unsigned int n = 0, i;
	uint8_t *rdst = c->buf + OFF_RDST;

	expect_byte(c->fd, 'R');
	fill(c->buf + OFF_WSRC, REGION, seed_of(r, 'W'));
	fill(c->buf + OFF_SSRC, REGION, seed_of(r, 'S'));
	memset(rdst, 0, REGION);
	memset(c->buf + OFF_ARES, 0, 8 * (N_A + 2));
	for (i = 0; i < N_W; i++, n++) {
		wr_init(&wr[n], &sge[n], c, n, UROCE_WR_RDMA_WRITE, OFF_WSRC + writes[i].src,
			writes[i].len);
		wr[n].wr.rdma.remote_addr = rva + OFF_WDST + writes[i].dst;
		wr[n].wr.rdma.rkey = rkey;
	}
	for (i = 0; i < N_R; i++, n++) {
		wr_init(&wr[n], &sge[n], c, n, UROCE_WR_RDMA_READ, OFF_RDST + reads[i].dst,
			reads[i].len);
		wr[n].wr.rdma.remote_addr = rva + OFF_RSRC + reads[i].src;
		wr[n].wr.rdma.rkey = rkey;
	}
	for (i = 0; i < N_S; i++, n++)
		wr_init(&wr[n], &sge[n], c, n, UROCE_WR_SEND, OFF_SSRC + sends[i].src,
			sends[i].len);
	/* Atomics (IBA 9.4.5): 8-byte aligned target, executed once each in
	 * PSN order, so the original values are exactly a running sum. */
	v = atom_start(r);
	for (i = 0; i < N_A; i++, n++) {
		wr_init(&wr[n], &sge[n], c, n, UROCE_WR_ATOMIC_FETCH_AND_ADD, OFF_ARES + 8 * i, 8);
		wr[n].wr.atomic.remote_addr = rva + OFF_ATOM;
		wr[n].wr.atomic.rkey = rkey;
		wr[n].wr.atomic.compare_add = adds[i];
		expect_orig[i] = v;
		v += adds[i];
	}
	/* CMP_SWAP that matches (swaps), then one that no longer matches. */
	wr_init(&wr[n], &sge[n], c, n, UROCE_WR_ATOMIC_CMP_AND_SWP, OFF_ARES + 8 * N_A, 8);
	wr[n].wr.atomic.remote_addr = rva + OFF_ATOM;
	wr[n].wr.atomic.rkey = rkey;
	wr[n].wr.atomic.compare_add = v;
	wr[n].wr.atomic.swap = atom_swap(r);
	expect_orig[N_A] = v;
	n++;
	wr_init(&wr[n], &sge[n], c, n, UROCE_WR_ATOMIC_CMP_AND_SWP, OFF_ARES + 8 * (N_A + 1), 8);
	wr[n].wr.atomic.remote_addr = rva + OFF_ATOM;
	wr[n].wr.atomic.rkey = rkey;
	wr[n].wr.atomic.compare_add = v;
	wr[n].wr.atomic.swap = 0x0123456789ABCDEFull;
	expect_orig[N_A + 1] = atom_swap(r);
	n++;
	for (i = 0; i + 1 < n; i++)
		wr[i].next = &wr[i + 1];
	CHECK(uroce_post_send(c->qp, &wr[0], &bad) == 0, "post_send failed at wr %lld",
	      bad != NULL ? (long long)bad->wr_id : -1LL);
	poll_n(c->scq, wc, (int)n);
	/* Expect: RC completes in order, every WR successfully. */
	for (i = 0; i < n; i++) {
		CHECK(wc[i].wr_id == i, "completion %u is wr %llu", i,
		      (unsigned long long)wc[i].wr_id);
		CHECK(wc[i].status == UROCE_WC_SUCCESS, "wr %u (opcode %u) status %u vendor %#x",
		      i, wr[i].opcode, wc[i].status, wc[i].vendor_err);
		CHECK(wc[i].opcode == wc_op[wr[i].opcode], "wr %u: wc opcode %u", i, wc[i].opcode);
		CHECK(wc[i].qp_num == c->qp->qp_num, "wr %u: qp_num %#x", i, wc[i].qp_num);
	}
	/* Expect: each READ brought exactly the peer's bytes; nothing else changed. */
	for (i = 0; i < N_R; i++) {
		uint32_t k;

		for (k = 0; k < reads[i].len; k++)
			CHECK(rdst[reads[i].dst + k] == pat(reads[i].src + k, seed_of(r, 'R')),
			      "read %u byte %u", i, k);
		/* Expect: the completion of a READ reports its length. */
		CHECK(wc[N_W + i].byte_len == reads[i].len, "read %u byte_len %u", i,
		      wc[N_W + i].byte_len);
	}
	for (i = 0; i < REGION; i++) {
		unsigned int k;
		bool inside = false;

		for (k = 0; k < N_R; k++)
			inside = inside || (i >= reads[k].dst && i < reads[k].dst + reads[k].len);
		if (!inside)
			CHECK(rdst[i] == 0, "READ wrote outside its range at %u", i);
	}
	/* Expect: every atomic returned the exact original value. */
	for (i = 0; i < N_A + 2; i++) {
		memcpy(&res, c->buf + OFF_ARES + 8 * i, 8);
		CHECK(res == expect_orig[i], "atomic %u returned %#llx, expected %#llx", i,
		      (unsigned long long)res, (unsigned long long)expect_orig[i]);
	}
	xwrite(c->fd, "D", 1);
	expect_byte(c->fd, 'V');
}

/* The responder's half of round @p r: prepare, then check what arrived. */
static void
responder_round(struct client *c, int r)
{
	struct uroce_recv_wr rwr[N_S], *bad = NULL;
	struct uroce_sge sge[N_S];
	struct uroce_wc wc[N_S];
	uint8_t *wdst = c->buf + OFF_WDST;
	uint64_t atom;
	unsigned int i;

	memset(wdst, 0, REGION);
	fill(c->buf + OFF_RSRC, REGION, seed_of(r, 'R'));
	memset(c->buf + OFF_RECV, RECV_FILL, N_S * SLOT);
	atom = atom_start(r);
	memcpy(c->buf + OFF_ATOM, &atom, 8);
	for (i = 0; i < N_S; i++) {
		memset(&rwr[i], 0, sizeof(rwr[i]));
		sge[i].addr = (uintptr_t)(c->buf + OFF_RECV + SLOT * i);
		sge[i].length = SLOT;
		sge[i].lkey = c->mr->lkey;
		rwr[i].wr_id = 0x100 + i;
		rwr[i].sg_list = &sge[i];
		rwr[i].num_sge = 1;
		rwr[i].next = i + 1 < N_S ? &rwr[i + 1] : NULL;
	}
	CHECK(uroce_post_recv(c->qp, &rwr[0], &bad) == 0, "post_recv");
	xwrite(c->fd, "R", 1);
	expect_byte(c->fd, 'D');
	/* Expect: every WRITE landed with the requester's bytes, nothing else changed. */
	for (i = 0; i < REGION; i++) {
		unsigned int k;
		int in = -1;

		for (k = 0; k < N_W; k++)
			if (i >= writes[k].dst && i < writes[k].dst + writes[k].len)
				in = (int)k;
		if (in < 0)
			CHECK(wdst[i] == 0, "WRITE landed outside its range at %u", i);
		else
			CHECK(wdst[i] == pat(writes[in].src + i - writes[in].dst, seed_of(r, 'W')),
			      "write %d byte %u", in, i - writes[in].dst);
	}
	/* Expect: the messages in order, each in its own receive WQE, exact. */
	poll_n(c->rcq, wc, (int)N_S);
	for (i = 0; i < N_S; i++) {
		const uint8_t *slot = c->buf + OFF_RECV + SLOT * sends[i].dst;
		uint32_t k;

		CHECK(wc[i].status == UROCE_WC_SUCCESS, "recv %u status %u", i, wc[i].status);
		CHECK(wc[i].opcode == UROCE_WC_RECV, "recv %u opcode %u", i, wc[i].opcode);
		CHECK(wc[i].wr_id == 0x100 + i, "recv %u wr_id %#llx", i,
		      (unsigned long long)wc[i].wr_id);
		CHECK(wc[i].byte_len == sends[i].len, "recv %u byte_len %u, sent %u", i,
		      wc[i].byte_len, sends[i].len);
		for (k = 0; k < sends[i].len; k++)
			CHECK(slot[k] == pat(sends[i].src + k, seed_of(r, 'S')), "recv %u byte %u",
			      i, k);
		for (; k < SLOT; k++)
			CHECK(slot[k] == RECV_FILL, "recv %u wrote past the message at %u", i, k);
	}
	/* Expect: all adds applied once, the matching CMP_SWAP swapped, the
	 * other did not. */
	memcpy(&atom, c->buf + OFF_ATOM, 8);
	CHECK(atom == atom_swap(r), "atomic target %#llx, expected %#llx",
	      (unsigned long long)atom, (unsigned long long)atom_swap(r));
	xwrite(c->fd, "V", 1);
}

static void
client_main(int side, int fd)
{
	struct client c;
	int r;

	memset(&c, 0, sizeof(c));
	cl_name = side == 0 ? 'A' : 'B';
	client_open(&c, side, fd);
	/* A starts just below the 2^24 PSN wrap, so its first round wraps. */
	client_connect(&c, side == 0 ? 0xFFFFF0u : 0x123u);
	/* Both QPs at RTS before either sends. */
	xwrite(fd, "C", 1);
	expect_byte(fd, 'C');
	for (r = 0; r < ROUNDS; r++) {
		cl_round = r;
		if ((r % 2) == side)
			requester_round(&c, r);
		else
			responder_round(&c, r);
	}
	cl_round = -1;
	/* Both sides done before either tears down. */
	xwrite(fd, "E", 1);
	expect_byte(fd, 'E');
	client_close(&c);
}

/* ------------------------------------------------------------------------ */
/* The test process: two daemons, the wire, the clients                      */
/* ------------------------------------------------------------------------ */

struct wire_case {
	const char *name;
	struct simwire_daemon_conf wire;
	uint32_t zc_min;        /* the daemons' zero-copy threshold (wire.zc) */
};

struct result {
	uint64_t cnt[2][UROCE_CNT_MAX];
	struct uroce_daemon_stats st[2];
	struct simwire_daemon_stats ws;
};

static uint64_t
counter(const struct result *res, int side, const char *name)
{
	unsigned int i;

	for (i = 0; i < UROCE_CNT_MAX; i++)
		if (strcmp(uroce_eng_counter_name((enum uroce_counter)i), name) == 0)
			return res->cnt[side][i];
	cr_assert_fail("no transport counter named %s", name);
	return 0;
}

static uint64_t
both(const struct result *res, const char *name)
{
	return counter(res, 0, name) + counter(res, 1, name);
}

static void
run_case(const struct wire_case *wc, struct result *res)
{
	struct uroce_daemon *d[2] = {NULL, NULL};
	struct simwire_daemon *w;
	pid_t pid[2] = {-1, -1};
	int status[2] = {0, 0};
	bool done[2] = {false, false};
	int sp[2], i;
	double end;

	snprintf(dir_path, sizeof(dir_path), "/tmp/uroce-wire-XXXXXX");
	cr_assert_not_null(mkdtemp(dir_path), "mkdtemp: %s", strerror(errno));
	w = simwire_daemon_create(&wc->wire);
	cr_assert_not_null(w);
	for (i = 0; i < 2; i++) {
		struct uroce_daemon_conf conf;

		snprintf(sock_path[i], sizeof(sock_path[i]), "%s/%c.sock", dir_path, 'a' + i);
		set_gid(gid_of[i], (uint8_t)(i + 1));
		memset(&conf, 0, sizeof(conf));
		conf.sock_path = sock_path[i];
		conf.sock_mode = 0600;
		conf.n_gid = 1;
		memcpy(conf.gids[0], gid_of[i], 16);
		conf.active_mtu = UROCE_MTU_1024;
		conf.port_ops = simwire_daemon_port_ops();
		conf.port_ctx = simwire_daemon_port_ctx(w, i);
		conf.zc_min = wc->zc_min;
		d[i] = uroce_daemon_create(&conf);
		cr_assert_not_null(d[i], "daemon %d: %s", i, strerror(errno));
		cr_assert_eq(simwire_daemon_attach(w, i, d[i], gid_of[i]), 0);
	}
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	fflush(NULL);
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		cr_assert(pid[i] >= 0, "fork: %s", strerror(errno));
		if (pid[i] == 0) {
			/* Never outlive the test process. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(sp[1 - i]);
			client_main(i, sp[i]);
			_exit(0);
		}
	}
	close(sp[0]);
	close(sp[1]);
	/* Poll both daemons and the wire until both clients are gone. */
	end = now_s() + RUN_S;
	while ((!done[0] || !done[1]) && now_s() < end) {
		if (simwire_daemon_step(w) == 0)
			nap();
		for (i = 0; i < 2; i++)
			if (!done[i] && waitpid(pid[i], &status[i], WNOHANG) == pid[i])
				done[i] = true;
	}
	for (i = 0; i < 2; i++)
		if (!done[i]) {
			kill(pid[i], SIGKILL);
			waitpid(pid[i], &status[i], 0);
			cr_expect(false, "%s: client %c timed out", wc->name, 'A' + i);
		}
	/* The daemons reap the sessions; late frames drain off the wire. */
	end = now_s() + 5;
	do {
		simwire_daemon_step(w);
		uroce_daemon_stats(d[0], &res->st[0]);
		uroce_daemon_stats(d[1], &res->st[1]);
		if (res->st[0].sessions == 0 && res->st[1].sessions == 0 &&
		    simwire_daemon_in_flight(w) == 0)
			break;
		nap();
	} while (now_s() < end);
	for (i = 0; i < 2; i++) {
		cr_assert_eq(uroce_daemon_counters(d[i], res->cnt[i], UROCE_CNT_MAX),
			     UROCE_CNT_MAX);
		uroce_daemon_stats(d[i], &res->st[i]);
	}
	res->ws = simwire_daemon_stats(w);
	fprintf(stderr,
		"%s: wire sent %llu delivered %llu dropped %llu dup %llu reordered %llu "
		"corrupted %llu rejected %llu (bad_icrc %llu) | retransmits %llu "
		"local_ack_timeout_err %llu packet_seq_err %llu out_of_sequence %llu "
		"duplicate_request %llu duplicate_response %llu implied_nak_seq_err %llu "
		"rx_bad_state %llu\n",
		wc->name, (unsigned long long)res->ws.sent, (unsigned long long)res->ws.delivered,
		(unsigned long long)res->ws.dropped, (unsigned long long)res->ws.duplicated,
		(unsigned long long)res->ws.reordered, (unsigned long long)res->ws.corrupted,
		(unsigned long long)res->ws.rejected,
		(unsigned long long)res->ws.rejected_by[UROCE_WIRE_BAD_ICRC],
		(unsigned long long)both(res, "retransmits"),
		(unsigned long long)both(res, "local_ack_timeout_err"),
		(unsigned long long)both(res, "packet_seq_err"),
		(unsigned long long)both(res, "out_of_sequence"),
		(unsigned long long)both(res, "duplicate_request"),
		(unsigned long long)both(res, "duplicate_response"),
		(unsigned long long)both(res, "implied_nak_seq_err"),
		(unsigned long long)both(res, "rx_bad_state"));
	if (getenv("DAEMON_WIRE_DUMP") != NULL) {
		unsigned int k;

		for (i = 0; i < 2; i++)
			for (k = 0; k < UROCE_CNT_MAX; k++)
				if (res->cnt[i][k] != 0)
					fprintf(stderr, "  daemon %c %s %llu\n", 'A' + i,
						uroce_eng_counter_name((enum uroce_counter)k),
						(unsigned long long)res->cnt[i][k]);
	}
	for (i = 0; i < 2; i++)
		uroce_daemon_destroy(d[i]);
	simwire_daemon_destroy(w);
	rmdir(dir_path);
	/* Expect: both clients checked every byte and exited cleanly. */
	for (i = 0; i < 2; i++)
		cr_assert(WIFEXITED(status[i]) && WEXITSTATUS(status[i]) == 0,
			  "%s: client %c status %#x", wc->name, 'A' + i, status[i]);
}

/* What every case must show, lossy or not. */
static void
expect_common(const struct wire_case *wc, const struct result *res)
{
	int i;

	for (i = 0; i < 2; i++) {
		const struct uroce_daemon_stats *st = &res->st[i];

		/* Expect: every client resource reclaimed. */
		cr_expect_eq(st->sessions, 0, "%s: daemon %d sessions %u", wc->name, i,
			     st->sessions);
		cr_expect_eq(st->segments, 0, "%s: daemon %d segments", wc->name, i);
		cr_expect_eq(st->pds, 0, "%s: daemon %d pds", wc->name, i);
		cr_expect_eq(st->mrs, 0, "%s: daemon %d mrs", wc->name, i);
		cr_expect_eq(st->cqs, 0, "%s: daemon %d cqs", wc->name, i);
		cr_expect_eq(st->qps, 0, "%s: daemon %d qps", wc->name, i);
		cr_expect_eq(st->ahs, 0, "%s: daemon %d ahs", wc->name, i);
		cr_expect_eq(st->srqs, 0, "%s: daemon %d srqs", wc->name, i);
		/* Expect: nothing refused, no ring trouble, no frame for its own
		 * GID (A and B only talk to each other). */
		cr_expect_eq(st->wqe_rejected, 0, "%s: daemon %d wqe_rejected", wc->name, i);
		cr_expect_eq(st->ring_corrupt, 0, "%s: daemon %d ring_corrupt", wc->name, i);
		cr_expect_eq(st->bad_msgs, 0, "%s: daemon %d bad_msgs", wc->name, i);
		cr_expect_eq(st->loop_frames, 0, "%s: daemon %d loop_frames", wc->name, i);
		cr_expect_eq(st->loop_bad, 0, "%s: daemon %d loop_bad", wc->name, i);
		/* Expect: no WR ran out of retries or RNR retries. */
		cr_expect_eq(counter(res, i, "retry_exceeded_err"), 0, "%s: daemon %d", wc->name,
			     i);
		cr_expect_eq(counter(res, i, "rnr_nak_retry_err"), 0, "%s: daemon %d", wc->name,
			     i);
		cr_expect_eq(counter(res, i, "tx_alloc_fail"), 0, "%s: daemon %d", wc->name, i);
	}
	/* Expect: every frame the daemons sent went through the wire port, and
	 * every frame the wire delivered reached a daemon through
	 * uroce_daemon_rx(). */
	cr_expect_eq(res->st[0].port_tx + res->st[1].port_tx, res->ws.sent, "%s: port_tx %llu+%llu",
		     wc->name, (unsigned long long)res->st[0].port_tx,
		     (unsigned long long)res->st[1].port_tx);
	cr_expect_eq(res->st[0].port_rx + res->st[1].port_rx, res->ws.delivered, "%s: port_rx",
		     wc->name);
	cr_expect_eq(both(res, "rx_packets"), res->ws.delivered, "%s: rx_packets", wc->name);
	cr_expect_eq(res->ws.unroutable, 0, "%s: unroutable", wc->name);
	cr_expect_eq(res->ws.alloc_fail, 0, "%s: alloc_fail", wc->name);
	/* Expect: each daemon asked its port for the peer's next hop when the
	 * client gave the QP its address (RTR), before its first frame, as a
	 * ConnectX driver resolves the MAC at RTR. */
	cr_expect(res->ws.asked_before_sending[0] && res->ws.asked_before_sending[1],
		  "%s: next hop asked before the first frame: A %d, B %d", wc->name,
		  res->ws.asked_before_sending[0], res->ws.asked_before_sending[1]);
	/* Expect: each corrupted frame that arrived was rejected, by its ICRC,
	 * and only corrupted frames were rejected. */
	cr_expect_eq(res->ws.rejected, res->ws.corrupted_arrived,
		     "%s: rejected %llu, corrupted %llu", wc->name,
		     (unsigned long long)res->ws.rejected,
		     (unsigned long long)res->ws.corrupted_arrived);
	cr_expect_eq(res->ws.rejected_by[UROCE_WIRE_BAD_ICRC], res->ws.rejected,
		     "%s: rejected for other reasons than the ICRC", wc->name);
	cr_expect_eq(res->ws.sent + res->ws.duplicated,
		     res->ws.dropped + res->ws.delivered + res->ws.rejected + res->ws.unroutable,
		     "%s: frames unaccounted for", wc->name);
}

/* With loss: the wire did its part, and the transport recovered by retransmitting. */
static void
expect_recovery(const struct wire_case *wc, const struct result *res)
{
	cr_expect_gt(res->ws.dropped, 0, "%s: the wire dropped nothing", wc->name);
	cr_expect_gt(both(res, "retransmits"), 0, "%s: nothing retransmitted", wc->name);
	/* Expect: loss was detected by the requesters (timeout or NAK) ... */
	cr_expect_gt(both(res, "local_ack_timeout_err") + both(res, "packet_seq_err") +
		     both(res, "implied_nak_seq_err"), 0, "%s: no requester saw loss", wc->name);
	/* ... and the responders saw the gaps or the resent duplicates. */
	cr_expect_gt(both(res, "out_of_sequence") + both(res, "duplicate_request"), 0,
		     "%s: no responder saw a gap or a duplicate", wc->name);
}

Test(daemon_wire, clean_wire, .timeout = 60)
{
	static const struct wire_case wc = {.name = "loss 0%", .wire = {.seed = 1}};
	static struct result res;

	run_case(&wc, &res);
	expect_common(&wc, &res);
	/* Expect: a clean wire drops, duplicates and corrupts nothing. */
	cr_expect_eq(res.ws.dropped + res.ws.duplicated + res.ws.corrupted + res.ws.rejected, 0);
	cr_expect_eq(res.ws.delivered, res.ws.sent);
	cr_expect_eq(both(&res, "packet_seq_err"), 0, "no loss, yet a sequence NAK");
	cr_expect_eq(both(&res, "out_of_sequence"), 0, "no loss or reorder, yet a gap");
}

Test(daemon_wire, one_percent_loss_with_dup_reorder_corrupt, .timeout = 60)
{
	static const struct wire_case wc = {
		.name = "loss 1%",
		.wire = {.seed = 0x5eed01, .drop_ppm = 10000, .dup_ppm = 5000,
			 .reorder_ppm = 5000, .corrupt_ppm = 5000, .delay_us = 20},
	};
	static struct result res;

	run_case(&wc, &res);
	expect_common(&wc, &res);
	expect_recovery(&wc, &res);
}

Test(daemon_wire, ten_percent_loss_with_dup_reorder_corrupt, .timeout = 60)
{
	static const struct wire_case wc = {
		.name = "loss 10%",
		.wire = {.seed = 0x5eed10, .drop_ppm = 100000, .dup_ppm = 20000,
			 .reorder_ppm = 20000, .corrupt_ppm = 20000, .delay_us = 20},
	};
	static struct result res;

	run_case(&wc, &res);
	expect_common(&wc, &res);
	expect_recovery(&wc, &res);
	/* Expect: corruption happened and the ICRC caught every frame of it. */
	cr_expect_gt(res.ws.rejected_by[UROCE_WIRE_BAD_ICRC], 0);
}

Test(daemon_wire, zero_copy_with_loss, .timeout = 60)
{
	static const struct wire_case wc = {
		.name = "zero-copy, loss 1%",
		.wire = {.seed = 0x5eed2c, .drop_ppm = 10000, .reorder_ppm = 5000, .delay_us = 20,
			 .zc = true, .zc_hold_steps = 4},
		.zc_min = 512,
	};
	static struct result res;

	run_case(&wc, &res);
	/* Expect: everything the other cases expect (every byte checked by the
	 * clients, every resource reclaimed: segments too, though the device
	 * held packets of them as the clients went), with payloads of 512 bytes
	 * and more read from client memory in place, resends included. */
	expect_common(&wc, &res);
	expect_recovery(&wc, &res);
	cr_expect_gt(counter(&res, 0, "tx_zero_copy"), 0);
	cr_expect_gt(counter(&res, 1, "tx_zero_copy"), 0);
	fprintf(stderr, "%s: tx_zero_copy A %llu B %llu of tx_packets %llu\n", wc.name,
		(unsigned long long)counter(&res, 0, "tx_zero_copy"),
		(unsigned long long)counter(&res, 1, "tx_zero_copy"),
		(unsigned long long)both(&res, "tx_packets"));
}
