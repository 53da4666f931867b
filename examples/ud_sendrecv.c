/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * ud_sendrecv: datagrams between two processes over UD queue pairs.
 *
 * Unlike RC, a UD QP is not connected to anyone: it goes RESET -> INIT -> RTR
 * -> RTS with only its own Q_Key, port and send PSN, and every send names its
 * destination itself, through an address handle (the peer's GID, hop limit,
 * traffic class, flow label) plus the peer's QPN and Q_Key. A datagram is one
 * packet of at most the path MTU, nothing is acknowledged or retried, and a
 * datagram that finds no posted receive, or carries the wrong Q_Key, is
 * silently dropped (IBA 9.6.1.1, 10.2.5). Every UD receive buffer starts with
 * 40 bytes where the GRH lands (IBA 11.4.1.2); the payload follows it, and
 * byte_len counts both.
 *
 * The two processes ("a" and "b") each post their receives first, then swap
 * QPN, Q_Key and GID over a socketpair (over TCP on two hosts), then send
 * COUNT datagrams with immediate data (the sequence number) to each other and
 * check every one they receive: payload, immediate, sender QPN.
 *
 * A datagram must fit in the path MTU of both ports: each side also sends
 * its port's active MTU and both check the payload against the smaller one.
 *
 *   ud_sendrecv [SOCKET_PATH] [COUNT]
 *
 * COUNT defaults to 16 (1 .. 64). SOCKET_PATH defaults to $UROCE_SOCKET, then
 * /run/uroce/uroced.sock. Environment (examples/example_util.h):
 *   UROCE_PEER_SOCKET  the daemon side b uses (default: side a's, SOCKET_PATH)
 *   UROCE_GID_INDEX    the GID index both use on port 1 (default 0)
 * Run it against the test tool:
 *   build/test/component/daemon/uroced_lite /tmp/uroce.sock &
 *   build/examples/ud_sendrecv /tmp/uroce.sock
 * or on two uroced instances connected by memif or af_packet:
 *   UROCE_PEER_SOCKET=/run/uroce/b.sock UROCE_GID_INDEX=1 \
 *       build/examples/ud_sendrecv /run/uroce/a.sock
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uroce_verbs.h"

#include "example_util.h"

#define MAX_COUNT 64
#define MSG_LEN 512                      /* payload bytes, well below any path MTU */
#define SLOT (UROCE_GRH_LEN + MSG_LEN)   /* one receive buffer: GRH room + payload */

/* What each side tells the other (same host: the struct goes as it is). */
struct ud_info {
	uint32_t qpn;
	uint32_t qkey;
	uint32_t mtu;       /* this side's port active MTU (IBA MTU enum) */
	uint8_t gid[16];
};

/* The bytes of datagram @p seq from side @p from: both sides can compute them. */
static void
fill(uint8_t *p, char from, uint32_t seq)
{
	ex_fill(p, MSG_LEN, (uint32_t)from * 0x9e3779b9u + seq * 0x85ebca6bu);
}

/* Take one completion (sleeping while there is none) and check its status. */
static void
next_wc(struct uroce_cq *cq, struct uroce_wc *wc)
{
	ex_wait_wcs(cq, 1, wc);
	if (wc->status != UROCE_WC_SUCCESS) {
		fprintf(stderr, "%s: completion error %s (wr_id %llu)\n", ex_role,
			ex_status(wc->status), (unsigned long long)wc->wr_id);
		exit(1);
	}
}

static int
side(int sock, const char *path, char me, uint32_t count)
{
	struct uroce_port_attr port;
	struct uroce_ah_attr aa;
	struct uroce_qp_attr a;
	struct ud_info mine, peer;
	struct uroce_context *ctx;
	struct uroce_pd *pd;
	struct uroce_mr *mr;
	struct uroce_cq *cq;
	struct uroce_qp *qp;
	struct uroce_ah *ah;
	bool seen[MAX_COUNT] = {false};
	uint32_t i, mtu, sent = 0, got = 0;
	uint8_t *buf, *rx, *tx, want[MSG_LEN], done;

	ex_set_role("ud_sendrecv[%c]", me);
	memset(&mine, 0, sizeof(mine));
	ctx = ex_open(path, me == 'a' ? 0 : 1, mine.gid, &port);  /* a: side 0, b: side 1 */
	mine.mtu = port.active_mtu;
	pd = uroce_alloc_pd(ctx);
	if (pd == NULL)
		ex_die("alloc_pd", errno);
	/* [0, count*SLOT): receive slots; then the send payloads. */
	buf = uroce_alloc_buf(ctx, (size_t)count * SLOT + (size_t)count * MSG_LEN);
	if (buf == NULL)
		ex_die("alloc_buf", errno);
	rx = buf;
	tx = buf + (size_t)count * SLOT;
	mr = uroce_reg_mr(pd, buf, (size_t)count * (SLOT + MSG_LEN), UROCE_ACCESS_LOCAL_WRITE);
	if (mr == NULL)
		ex_die("reg_mr", errno);
	cq = uroce_create_cq(ctx, (int)(2 * count), NULL);
	if (cq == NULL)
		ex_die("create_cq", errno);
	qp = ex_create_qp(pd, cq, UROCE_QPT_UD, true, count, count);

	/* A UD QP needs only its own Q_Key and port (INIT), nothing for RTR, and
	 * its first PSN for RTS: there is no peer to name. */
	mine.qpn = qp->qp_num;
	mine.qkey = 0x11110000u | (uint32_t)getpid() % 0xffff; /* any value below 2^31 */
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.port_num = 1;
	a.qkey = mine.qkey;
	ex_ck(uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
					   UROCE_QP_QKEY), "modify to INIT");
	a.qp_state = UROCE_QPS_RTR;
	ex_ck(uroce_modify_qp(qp, &a, UROCE_QP_STATE), "modify to RTR");
	a.qp_state = UROCE_QPS_RTS;
	a.sq_psn = (uint32_t)getpid() & 0xffffff;
	ex_ck(uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN), "modify to RTS");

	/* Receives go in before the peer learns our QPN: nothing is dropped. */
	for (i = 0; i < count; i++) {
		struct uroce_sge sge = {(uint64_t)(uintptr_t)(rx + i * SLOT), SLOT, mr->lkey};
		struct uroce_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1};
		struct uroce_recv_wr *bad;

		ex_ck(uroce_post_recv(qp, &wr, &bad), "post_recv");
	}
	ex_send(sock, &mine, sizeof(mine));
	ex_recv(sock, &peer, sizeof(peer));

	/* A UD message is one packet: it must fit both ports' MTU (IBA MTU enum
	 * m is 128 << m bytes, 1 (256) .. 5 (4096)). */
	mtu = mine.mtu < peer.mtu ? mine.mtu : peer.mtu;
	if (mtu < 1 || mtu > 5 || MSG_LEN > 128u << mtu) {
		fprintf(stderr, "%s: %d-byte datagrams do not fit path MTU enum %u\n", ex_role,
			MSG_LEN, mtu);
		return 1;
	}

	/* The address handle: where our datagrams go (RoCE: always a GRH). */
	memset(&aa, 0, sizeof(aa));
	memcpy(aa.dgid, peer.gid, 16);
	aa.hop_limit = 64;
	aa.port_num = 1;
	aa.sgid_index = (uint8_t)ex_gid_index();  /* the GID the peer was told */
	ah = uroce_create_ah(pd, &aa);
	if (ah == NULL)
		ex_die("create_ah", errno);

	for (i = 0; i < count; i++) {
		struct uroce_sge sge = {(uint64_t)(uintptr_t)(tx + i * MSG_LEN), MSG_LEN, mr->lkey};
		struct uroce_send_wr wr = {
			.wr_id = 1000 + i, .sg_list = &sge, .num_sge = 1,
			.opcode = UROCE_WR_SEND_WITH_IMM, .imm_data = i,
		};
		struct uroce_send_wr *bad;

		fill(tx + i * MSG_LEN, me, i);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = peer.qpn;
		wr.wr.ud.remote_qkey = peer.qkey;
		ex_ck(uroce_post_send(qp, &wr, &bad), "post_send");
	}

	/* Sends and receives complete on the one CQ, interleaved. */
	while (sent < count || got < count) {
		struct uroce_wc wc;

		next_wc(cq, &wc);
		if (wc.opcode == UROCE_WC_SEND) {
			sent++;
			continue;
		}
		if (wc.opcode != UROCE_WC_RECV || !(wc.wc_flags & UROCE_WC_WITH_IMM) ||
		    wc.imm_data >= count || seen[wc.imm_data] || wc.wr_id >= count ||
		    wc.src_qp != peer.qpn || wc.byte_len != SLOT) {
			fprintf(stderr, "%s: unexpected receive: opcode %u imm %u src_qp %#x "
				"byte_len %u\n", ex_role, wc.opcode, wc.imm_data, wc.src_qp,
				wc.byte_len);
			return 1;
		}
		seen[wc.imm_data] = true;
		/* The payload starts after the GRH area. */
		fill(want, me == 'a' ? 'b' : 'a', wc.imm_data);
		if (memcmp(rx + wc.wr_id * SLOT + UROCE_GRH_LEN, want, MSG_LEN) != 0) {
			fprintf(stderr, "%s: datagram %u corrupt\n", ex_role, wc.imm_data);
			return 1;
		}
		got++;
	}
	printf("%s: QP %#x sent %u and received %u datagrams from QP %#x, verified\n", ex_role,
	       mine.qpn, sent, got, peer.qpn);

	/* Both done before either tears down. */
	ex_send(sock, "d", 1);
	ex_recv(sock, &done, 1);
	ex_ck(uroce_destroy_ah(ah), "destroy_ah");
	ex_ck(uroce_destroy_qp(qp), "destroy_qp");
	ex_close(ctx, pd, buf, mr, cq);
	return 0;
}

int
main(int argc, char **argv)
{
	uint64_t count_arg = 16;
	const struct ex_num nums[] = {{"COUNT", 1, MAX_COUNT, &count_arg}};
	const char *path;
	uint32_t count;
	int sv[2], rc, status;
	pid_t pid;

	ex_set_role("ud_sendrecv");
	path = ex_args(argc, argv, "ud_sendrecv [SOCKET_PATH] [COUNT]", nums, 1, NULL);
	count = (uint32_t)count_arg;
	/* Fork before opening the device: a context must not cross fork(). */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		ex_die("socketpair", errno);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		ex_die("fork", errno);
	if (pid == 0) {
		close(sv[0]);
		exit(side(sv[1], path, 'b', count));
	}
	close(sv[1]);
	rc = side(sv[0], path, 'a', count);
	close(sv[0]);
	if (waitpid(pid, &status, 0) != pid)
		ex_die("waitpid", errno);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "%s: side b failed (status %#x)\n", ex_role, status);
		return 1;
	}
	if (rc == 0)
		printf("ud_sendrecv: %u datagrams each way verified\n", count);
	return rc;
}
