/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * rdma_write_read: one-sided RDMA between two processes.
 *
 * The "target" process registers a buffer for remote access and tells the
 * "initiator" where it is (its virtual address and rkey), together with its
 * QP number, first PSN and GID. The initiator then, for each size, RDMA WRITEs
 * a pattern into the target's buffer, asks the target to check it, and RDMA
 * READs it back into a cleared buffer of its own and compares. The target's
 * CPU takes no part in the transfers: it only looks at its memory when told.
 *
 * The two processes exchange their connection data over a socketpair; a
 * program on two hosts sends the same fields over TCP. The path MTU is
 * 1024 bytes, so 1 B is one packet, 4 KiB four and 1 MiB 1024: a WRITE is
 * split into FIRST, MIDDLE... LAST packets, a READ is one request answered
 * by as many READ RESPONSE packets (IBA 9.4.2, 9.4.3). If either port's
 * active MTU is smaller, both sides use the smaller one: each sends its
 * port's active MTU with its connection data.
 *
 *   rdma_write_read [SOCKET_PATH] [SIZE...]
 *
 * SIZE defaults to 1 4096 1048576 (at most 16 MiB each). SOCKET_PATH defaults
 * to $UROCE_SOCKET, then /run/uroce/uroced.sock. Environment
 * (examples/example_util.h):
 *   UROCE_PEER_SOCKET  the daemon the initiator uses (default: the target's,
 *                      SOCKET_PATH)
 *   UROCE_GID_INDEX    the GID index both use on port 1 (default 0)
 * Run it against the test tool:
 *   build/test/component/daemon/uroced_lite /tmp/uroce.sock &
 *   build/examples/rdma_write_read /tmp/uroce.sock
 * or on two uroced instances connected by memif or af_packet:
 *   UROCE_PEER_SOCKET=/run/uroce/b.sock UROCE_GID_INDEX=1 \
 *       build/examples/rdma_write_read /run/uroce/a.sock
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uroce_verbs.h"

#include "example_util.h"

#define MAX_SIZES 16          /* the usage text says so */
#define MAX_SIZE (16u << 20)
#define WANT_MTU 3          /* IBA MTU enum: 1024 bytes */

/* What each side tells the other. Both processes run this binary on one host,
 * so the struct goes as it is; over TCP, send each field in network order. */
struct conn_info {
	uint64_t va;        /* target: address of its buffer (the MR's iova) */
	uint32_t rkey;      /* target: the key that lets the peer reach it */
	uint32_t len;       /* target: length of its buffer */
	uint32_t qpn;
	uint32_t psn;       /* the first PSN this side will send */
	uint32_t mtu;       /* this side's port active MTU (IBA MTU enum) */
	uint8_t gid[16];
};

/* After connecting, the initiator sends one of these per size; the target
 * answers one byte, 0 if its buffer holds the pattern. size 0: finished. */
struct check_msg {
	uint32_t size;
	uint32_t seed;
};

/* Everything one side owns, in the order it is created. */
struct side {
	struct uroce_context *ctx;
	struct uroce_port_attr port;
	struct uroce_pd *pd;
	uint8_t *buf;
	size_t len;
	struct uroce_mr *mr;
	struct uroce_cq *cq;
	struct uroce_qp *qp;
	struct conn_info me;
};

/* Open the device of side @p which (0: target, 1: initiator; see ex_open())
 * and make a PD, a buffer of @p len bytes registered with @p access, a CQ and
 * one RC QP. */
static void
setup(struct side *s, const char *path, int which, size_t len, int access)
{
	s->ctx = ex_open(path, which, s->me.gid, &s->port);
	s->me.mtu = s->port.active_mtu;
	s->pd = uroce_alloc_pd(s->ctx);
	if (s->pd == NULL)
		ex_die("alloc_pd", errno);
	s->len = len;
	s->buf = uroce_alloc_buf(s->ctx, len);
	if (s->buf == NULL)
		ex_die("alloc_buf", errno);
	s->mr = uroce_reg_mr(s->pd, s->buf, len, access);
	if (s->mr == NULL)
		ex_die("reg_mr", errno);
	s->cq = uroce_create_cq(s->ctx, 16, NULL);
	if (s->cq == NULL)
		ex_die("create_cq", errno);
	s->qp = ex_create_qp(s->pd, s->cq, UROCE_QPT_RC, false, 4, 1);
	s->me.qpn = s->qp->qp_num;
	s->me.psn = (uint32_t)getpid() & 0xffffff;  /* any 24-bit value */
	s->me.va = (uint64_t)(uintptr_t)s->buf;
	s->me.rkey = s->mr->rkey;
	s->me.len = (uint32_t)len;
}

/* RESET -> RTS, aimed at @p peer; one READ in flight at a time each way. */
static void
connect_qp(struct side *s, const struct conn_info *peer, int access)
{
	uint32_t mtu = WANT_MTU;
	struct ex_rc_conn c = {
		.dest_qpn = peer->qpn,
		.rq_psn = peer->psn,    /* the first PSN we expect is the one the peer sends */
		.sq_psn = s->me.psn,
		.dgid = peer->gid,
		.access = access,
		.rd_atomic = 1,
	};

	/* The path MTU may exceed neither port's active MTU, and both ends
	 * must use the same one: each takes the smallest of the three. */
	if (s->me.mtu < mtu)
		mtu = s->me.mtu;
	if (peer->mtu < mtu)
		mtu = peer->mtu;
	c.path_mtu = (uint8_t)mtu;
	ex_connect_rc(s->qp, &c);
}

static void
teardown(struct side *s)
{
	ex_ck(uroce_destroy_qp(s->qp), "destroy_qp");
	ex_close(s->ctx, s->pd, s->buf, s->mr, s->cq);
}

/* Wait for the completion of the one WR in flight and check it. */
static void
wait_wc(struct uroce_cq *cq, uint32_t opcode)
{
	struct uroce_wc wc;

	ex_wait_wcs(cq, 1, &wc);
	if (wc.status != UROCE_WC_SUCCESS) {
		fprintf(stderr, "%s: completion error %s (vendor_err %u)\n", ex_role,
			ex_status(wc.status), wc.vendor_err);
		exit(1);
	}
	if (wc.opcode != opcode) {
		fprintf(stderr, "%s: completion opcode %u, expected %u\n", ex_role, wc.opcode,
			opcode);
		exit(1);
	}
}

/* One RDMA WRITE or READ of @p len bytes between local @p laddr and the
 * target's @p raddr, signaled, and wait for it. */
static void
rdma(struct side *s, uint32_t opcode, uint8_t *laddr, uint64_t raddr, uint32_t rkey,
     uint32_t len)
{
	struct uroce_sge sge = {(uint64_t)(uintptr_t)laddr, len, s->mr->lkey};
	struct uroce_send_wr wr = {
		.wr_id = opcode, .sg_list = &sge, .num_sge = 1,
		.opcode = opcode, .send_flags = UROCE_SEND_SIGNALED,
	};
	struct uroce_send_wr *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	ex_ck(uroce_post_send(s->qp, &wr, &bad), "post_send");
	wait_wc(s->cq, opcode == UROCE_WR_RDMA_WRITE ? UROCE_WC_RDMA_WRITE : UROCE_WC_RDMA_READ);
}

/* The target: expose a buffer, then check it whenever the initiator asks. */
static int
target(int sock, const char *path, size_t max)
{
	int access = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
		     UROCE_ACCESS_REMOTE_READ;
	struct conn_info peer;
	struct check_msg m;
	struct side s;
	uint8_t *want;

	ex_set_role("rdma_write_read[target]");
	want = malloc(max);
	if (want == NULL)
		ex_die("malloc", ENOMEM);
	memset(&s, 0, sizeof(s));
	setup(&s, path, 0, max, access);
	/* Connect before answering, so that the QP is ready for the initiator's
	 * first packet. */
	ex_recv(sock, &peer, sizeof(peer));
	connect_qp(&s, &peer, access);
	ex_send(sock, &s.me, sizeof(s.me));
	for (;;) {
		uint8_t verdict;

		ex_recv(sock, &m, sizeof(m));
		if (m.size == 0)
			break;
		if (m.size > max)
			ex_die("check request", EINVAL);
		ex_fill(want, m.size, m.seed);
		verdict = memcmp(s.buf, want, m.size) != 0;
		ex_send(sock, &verdict, 1);
	}
	free(want);
	teardown(&s);
	return 0;
}

/* The initiator: WRITE, have the target check, READ back, compare. */
static int
initiator(int sock, const char *path, const uint32_t *sizes, int nsizes, size_t max)
{
	struct conn_info peer;
	struct check_msg m;
	struct side s;
	uint8_t *src, *dst;
	int i;

	ex_set_role("rdma_write_read[initiator]");
	memset(&s, 0, sizeof(s));
	/* [0, max): what we WRITE; [max, 2*max): where READ puts it. READ
	 * writes local memory, so LOCAL_WRITE; nothing remote reaches us. */
	setup(&s, path, 1, 2 * max, UROCE_ACCESS_LOCAL_WRITE);
	src = s.buf;
	dst = s.buf + max;
	ex_send(sock, &s.me, sizeof(s.me));
	ex_recv(sock, &peer, sizeof(peer));
	connect_qp(&s, &peer, 0);
	printf("%s: connected QP %#x to QP %#x, target buffer %#llx rkey %#x\n", ex_role, s.me.qpn,
	       peer.qpn, (unsigned long long)peer.va, peer.rkey);

	for (i = 0; i < nsizes; i++) {
		uint32_t len = sizes[i];
		uint8_t verdict;

		if (len > peer.len)
			ex_die("size beyond the target's buffer", EINVAL);
		/* 1. WRITE a fresh pattern; it completes once the target has
		 * acknowledged its last packet, i.e. all of it. */
		m.size = len;
		m.seed = 0x9e3779b9u * (uint32_t)(i + 1);
		ex_fill(src, len, m.seed);
		rdma(&s, UROCE_WR_RDMA_WRITE, src, peer.va, peer.rkey, len);
		/* 2. The target checks its own memory. */
		ex_send(sock, &m, sizeof(m));
		ex_recv(sock, &verdict, 1);
		if (verdict != 0) {
			fprintf(stderr, "%s: %u bytes: the target's buffer does not match\n", ex_role,
				len);
			return 1;
		}
		/* 3. READ it back into cleared memory and compare. */
		memset(dst, 0, len);
		rdma(&s, UROCE_WR_RDMA_READ, dst, peer.va, peer.rkey, len);
		if (memcmp(dst, src, len) != 0) {
			fprintf(stderr, "%s: %u bytes: READ returned other bytes\n", ex_role, len);
			return 1;
		}
		printf("%s: %u bytes: WRITE and READ verified\n", ex_role, len);
	}
	m.size = 0;
	m.seed = 0;
	ex_send(sock, &m, sizeof(m));
	teardown(&s);
	return 0;
}

int
main(int argc, char **argv)
{
	uint32_t sizes[MAX_SIZES] = {1, 4096, 1u << 20};
	uint64_t given[MAX_SIZES];
	struct ex_num nums[MAX_SIZES];
	int nsizes = 3, n, sv[2], rc, status, i;
	const char *path;
	size_t max = 0;
	pid_t pid;

	ex_set_role("rdma_write_read");
	for (i = 0; i < MAX_SIZES; i++)
		nums[i] = (struct ex_num){"SIZE", 1, MAX_SIZE, &given[i]};
	path = ex_args(argc, argv, "rdma_write_read [SOCKET_PATH] [SIZE...] (at most 16 sizes)",
		       nums, MAX_SIZES, &n);
	if (n > 0) {
		nsizes = n;
		for (i = 0; i < n; i++)
			sizes[i] = (uint32_t)given[i];
	}
	for (i = 0; i < nsizes; i++)
		if (sizes[i] > max)
			max = sizes[i];

	/* Fork before opening the device: a context must not cross fork()
	 * (doc/verbs.md), so each process opens its own. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		ex_die("socketpair", errno);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		ex_die("fork", errno);
	if (pid == 0) {
		close(sv[0]);
		exit(target(sv[1], path, max));
	}
	close(sv[1]);
	rc = initiator(sv[0], path, sizes, nsizes, max);
	close(sv[0]);
	if (waitpid(pid, &status, 0) != pid)
		ex_die("waitpid", errno);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "%s: the target failed (status %#x)\n", ex_role, status);
		return 1;
	}
	if (rc == 0)
		printf("rdma_write_read: %d sizes verified\n", nsizes);
	return rc;
}
