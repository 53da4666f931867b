/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * atomic_counter: a counter shared by several processes through RDMA atomics.
 *
 * A "server" process registers one 8-byte counter for remote atomic access
 * and connects one RC QP to each of N "client" processes. Every client does
 * M RDMA FETCH_AND_ADD of 1 on the counter, keeping a few in flight. The
 * responder applies each atomic exactly once, indivisibly, and returns the
 * value the counter had before (IBA 9.4.5), so:
 *  - the counter ends at exactly N * M;
 *  - the original values the clients got back are 0 .. N*M-1, each once.
 * Each client checks its own values are distinct; the server collects them
 * all, checks that every value of 0 .. N*M-1 came back once, and prints the
 * total. The exit status is 0 only if all of this holds.
 *
 *   atomic_counter [SOCKET_PATH] [CLIENTS] [ADDS_PER_CLIENT]
 *
 * CLIENTS defaults to 4 (at most 32), ADDS_PER_CLIENT to 1000 (at most
 * 1000000). SOCKET_PATH defaults to $UROCE_SOCKET, then
 * /run/uroce/uroced.sock. Environment (examples/example_util.h):
 *   UROCE_PEER_SOCKET  the daemon the clients use (default: the server's,
 *                      SOCKET_PATH)
 *   UROCE_GID_INDEX    the GID index everyone uses on port 1 (default 0)
 * Run it against the test tool:
 *   build/test/component/daemon/uroced_lite /tmp/uroce.sock &
 *   build/examples/atomic_counter /tmp/uroce.sock 4 1000
 * or on two uroced instances connected by memif or af_packet:
 *   UROCE_PEER_SOCKET=/run/uroce/b.sock UROCE_GID_INDEX=1 \
 *       build/examples/atomic_counter /run/uroce/a.sock 4 1000
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

#define MAX_CLIENTS 32
#define MAX_ADDS 1000000
#define MAX_DEPTH 4         /* atomics a client keeps in flight */

/* What each side tells the other (same host, same binary: sent as is; over
 * TCP, send each field in network order). */
struct conn_info {
	uint64_t va;        /* server: address of the counter */
	uint32_t rkey;      /* server: key of the counter's MR */
	uint32_t qpn;
	uint32_t psn;       /* the first PSN this side will send */
	uint32_t depth;     /* atomics in flight: the client asks, the server grants */
	uint8_t gid[16];
};

/* RESET -> RTS, aimed at @p peer, with @p depth atomics in flight each way. */
static void
connect_qp(struct uroce_qp *qp, uint32_t my_psn, const struct conn_info *peer, int access,
	   uint32_t depth)
{
	struct ex_rc_conn c = {
		.dest_qpn = peer->qpn,
		.rq_psn = peer->psn,
		.sq_psn = my_psn,
		.dgid = peer->gid,
		/* 256: atomics are single packets anyway, and 256 is the
		 * smallest IBA MTU, within every port's active MTU: both ends
		 * agree without exchanging their ports' MTUs. */
		.path_mtu = 1,
		.access = access,
		.rd_atomic = (uint8_t)depth,
	};

	ex_connect_rc(qp, &c);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A client: M FETCH_AND_ADDs, then the original values to the server. */
static int
client(int id, int sock, const char *path, uint32_t adds)
{
	struct uroce_device_attr dev;
	struct conn_info me, srv;
	struct uroce_wc wc[MAX_DEPTH];
	struct uroce_context *ctx;
	struct uroce_pd *pd;
	struct uroce_mr *mr;
	struct uroce_cq *cq;
	struct uroce_qp *qp;
	uint64_t *orig, *sorted;
	uint32_t posted = 0, done = 0, i;
	size_t len = (size_t)adds * sizeof(uint64_t);

	ex_set_role("atomic_counter[client %d]", id);
	memset(&me, 0, sizeof(me));
	ctx = ex_open(path, 1, me.gid, NULL);  /* clients are side 1 */
	ex_ck(uroce_query_device(ctx, &dev), "query_device");
	me.depth = MAX_DEPTH;
	if (me.depth > dev.max_qp_init_rd_atom)
		me.depth = dev.max_qp_init_rd_atom;
	if (dev.atomic_cap == 0 || me.depth == 0)
		ex_die("the device does no atomics", EOPNOTSUPP);
	pd = uroce_alloc_pd(ctx);
	if (pd == NULL)
		ex_die("alloc_pd", errno);
	/* Atomic i returns the counter's old value into orig[i]: the
	 * responder's data lands in local memory, hence LOCAL_WRITE. */
	orig = uroce_alloc_buf(ctx, len);
	if (orig == NULL)
		ex_die("alloc_buf", errno);
	mr = uroce_reg_mr(pd, orig, len, UROCE_ACCESS_LOCAL_WRITE);
	if (mr == NULL)
		ex_die("reg_mr", errno);
	cq = uroce_create_cq(ctx, MAX_DEPTH, NULL);
	if (cq == NULL)
		ex_die("create_cq", errno);
	qp = ex_create_qp(pd, cq, UROCE_QPT_RC, false, me.depth, 1);
	me.qpn = qp->qp_num;
	me.psn = ((uint32_t)getpid() * 7919u) & 0xffffff;

	/* The server connects its QP first, then answers: once we have its
	 * answer, its QP is ready for our requests. */
	ex_send(sock, &me, sizeof(me));
	ex_recv(sock, &srv, sizeof(srv));
	connect_qp(qp, me.psn, &srv, 0, srv.depth);

	/* Keep up to depth atomics in flight; wr_id is the index into orig[]. */
	while (done < adds) {
		int n, k;

		while (posted < adds && posted - done < srv.depth) {
			struct uroce_sge sge = {(uint64_t)(uintptr_t)&orig[posted], 8, mr->lkey};
			struct uroce_send_wr wr = {
				.wr_id = posted, .sg_list = &sge, .num_sge = 1,
				.opcode = UROCE_WR_ATOMIC_FETCH_AND_ADD,
				.send_flags = UROCE_SEND_SIGNALED,
			};
			struct uroce_send_wr *bad;

			wr.wr.atomic.remote_addr = srv.va;  /* 8-byte aligned (IBA 9.4.5) */
			wr.wr.atomic.rkey = srv.rkey;
			wr.wr.atomic.compare_add = 1;       /* the value to add */
			ex_ck(uroce_post_send(qp, &wr, &bad), "post_send");
			posted++;
		}
		n = ex_wait_wcs(cq, MAX_DEPTH, wc);
		for (k = 0; k < n; k++) {
			if (wc[k].status != UROCE_WC_SUCCESS ||
			    wc[k].opcode != UROCE_WC_FETCH_ADD) {
				fprintf(stderr, "%s: atomic %llu: completion status %s opcode %u\n",
					ex_role, (unsigned long long)wc[k].wr_id,
					ex_status(wc[k].status), wc[k].opcode);
				return 1;
			}
		}
		done += (uint32_t)n;
	}

	/* Every atomic was applied exactly once, so no two got the same value. */
	sorted = malloc(len);
	if (sorted == NULL)
		ex_die("malloc", ENOMEM);
	memcpy(sorted, orig, len);
	qsort(sorted, adds, sizeof(*sorted), cmp_u64);
	for (i = 1; i < adds; i++) {
		if (sorted[i] == sorted[i - 1]) {
			fprintf(stderr, "%s: original value %llu returned twice\n", ex_role,
				(unsigned long long)sorted[i]);
			return 1;
		}
	}
	free(sorted);
	printf("%s: %u fetch-and-adds, original values distinct\n", ex_role, adds);
	fflush(stdout);
	ex_send(sock, orig, len);

	ex_ck(uroce_destroy_qp(qp), "destroy_qp");
	ex_close(ctx, pd, orig, mr, cq);
	return 0;
}

/* The server: the counter, one QP per client, then the checks. */
static int
server(const int *socks, int nclients, const char *path, uint32_t adds)
{
	uint64_t total = (uint64_t)nclients * adds, final, *vals, j;
	int access = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_ATOMIC;
	struct uroce_qp *qps[MAX_CLIENTS];
	struct uroce_device_attr dev;
	struct uroce_context *ctx;
	struct conn_info me;
	struct uroce_pd *pd;
	struct uroce_mr *mr;
	struct uroce_cq *cq;
	uint64_t *counter;
	uint8_t *seen;
	int i, bad = 0;

	ex_set_role("atomic_counter[server]");
	memset(&me, 0, sizeof(me));
	ctx = ex_open(path, 0, me.gid, NULL);  /* the server is side 0 */
	ex_ck(uroce_query_device(ctx, &dev), "query_device");
	pd = uroce_alloc_pd(ctx);
	if (pd == NULL)
		ex_die("alloc_pd", errno);
	/* The counter: the first 8 bytes of a page-aligned buffer, starting at
	 * 0. REMOTE_ATOMIC needs LOCAL_WRITE too. */
	counter = uroce_alloc_buf(ctx, 4096);
	if (counter == NULL)
		ex_die("alloc_buf", errno);
	mr = uroce_reg_mr(pd, counter, sizeof(*counter), access);
	if (mr == NULL)
		ex_die("reg_mr", errno);
	/* Nothing completes on the server's side of one-sided operations; the
	 * QPs still need a CQ. */
	cq = uroce_create_cq(ctx, 1, NULL);
	if (cq == NULL)
		ex_die("create_cq", errno);
	me.va = (uint64_t)(uintptr_t)counter;
	me.rkey = mr->rkey;

	for (i = 0; i < nclients; i++) {
		struct conn_info cl;

		ex_recv(socks[i], &cl, sizeof(cl));
		me.depth = cl.depth < dev.max_qp_rd_atom ? cl.depth : dev.max_qp_rd_atom;
		if (me.depth == 0)
			ex_die("client asked for no atomics in flight", EINVAL);
		qps[i] = ex_create_qp(pd, cq, UROCE_QPT_RC, false, 1, 1);
		me.qpn = qps[i]->qp_num;
		me.psn = (uint32_t)(0x100000 + i * 0x1000);
		connect_qp(qps[i], me.psn, &cl, access, me.depth);
		ex_send(socks[i], &me, sizeof(me));
	}

	/* Each client sends its original values once its atomics are done;
	 * mark each value of 0 .. N*M-1 as seen, exactly once. */
	vals = malloc((size_t)adds * sizeof(*vals));
	seen = calloc(total, 1);
	if (vals == NULL || seen == NULL)
		ex_die("malloc", ENOMEM);
	for (i = 0; i < nclients; i++) {
		ex_recv(socks[i], vals, (size_t)adds * sizeof(*vals));
		for (j = 0; j < adds; j++) {
			if (vals[j] >= total || seen[vals[j]]) {
				if (bad++ < 5)
					fprintf(stderr, "%s: client %d got original %llu %s\n",
						ex_role, i, (unsigned long long)vals[j],
						vals[j] >= total ? "beyond N*M" : "twice");
				continue;
			}
			seen[vals[j]] = 1;
		}
	}
	free(vals);
	free(seen);

	/* Every client has its completions, so every add has been applied; the
	 * daemon wrote the counter, so read it as memory another agent writes. */
	final = __atomic_load_n(counter, __ATOMIC_ACQUIRE);
	printf("%s: counter = %llu (expected %llu: %d clients x %u fetch-and-adds)\n", ex_role,
	       (unsigned long long)final, (unsigned long long)total, nclients, adds);
	if (final != total || bad != 0) {
		fprintf(stderr, "%s: FAILED: counter %s, %d bad original values\n", ex_role,
			final == total ? "right" : "wrong", bad);
		return 1;
	}
	printf("%s: every original value 0..%llu returned exactly once\n", ex_role,
	       (unsigned long long)(total - 1));

	for (i = 0; i < nclients; i++)
		ex_ck(uroce_destroy_qp(qps[i]), "destroy_qp");
	ex_close(ctx, pd, counter, mr, cq);
	return 0;
}

int
main(int argc, char **argv)
{
	uint64_t nclients_arg = 4, adds_arg = 1000;
	const struct ex_num nums[] = {
		{"CLIENTS", 1, MAX_CLIENTS, &nclients_arg},
		{"ADDS_PER_CLIENT", 1, MAX_ADDS, &adds_arg},
	};
	int socks[MAX_CLIENTS], sv[2], rc, status, failed = 0;
	pid_t pids[MAX_CLIENTS];
	uint32_t i, j, nclients, adds;
	const char *path;

	ex_set_role("atomic_counter");
	path = ex_args(argc, argv, "atomic_counter [SOCKET_PATH] [CLIENTS] [ADDS_PER_CLIENT]",
		       nums, 2, NULL);
	nclients = (uint32_t)nclients_arg;
	adds = (uint32_t)adds_arg;

	/* Start the clients before opening the device: a context must not
	 * cross fork() (doc/verbs.md), so every process opens its own. Each
	 * client keeps only its own end of its own socketpair. */
	fflush(stdout);
	for (i = 0; i < nclients; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
			ex_die("socketpair", errno);
		pids[i] = fork();
		if (pids[i] < 0)
			ex_die("fork", errno);
		if (pids[i] == 0) {
			for (j = 0; j < i; j++)
				close(socks[j]);
			close(sv[0]);
			exit(client((int)i, sv[1], path, adds));
		}
		close(sv[1]);
		socks[i] = sv[0];
	}
	rc = server(socks, (int)nclients, path, adds);
	for (i = 0; i < nclients; i++)
		close(socks[i]);
	for (i = 0; i < nclients; i++) {
		if (waitpid(pids[i], &status, 0) != pids[i])
			ex_die("waitpid", errno);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "%s: client %u failed (status %#x)\n", ex_role, i, status);
			failed = 1;
		}
	}
	return rc != 0 || failed ? 1 : 0;
}
