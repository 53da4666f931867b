/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * iba15_uroce: the uroce side of the IBA 1.5 interop pair (iba15_rxe runs
 * the other side in the rxe VM), on liburoce, because rdma-core 44 has no
 * ibv_wr_flush().
 *
 * usage: iba15_uroce write|read-back LISTEN_IP PORT
 *   (UROCE_SOCKET names the daemon, UROCE_GID_INDEX the GID rxe is told)
 *   write      uroce requests, rxe responds, on QP 0: ATOMIC WRITE into a,
 *              RDMA WRITE through rxe's type 2 window, SEND with Invalidate
 *              of the window, then an RDMA WRITE through the now invalid
 *              rkey (expects IBV_WC_REM_ACCESS_ERR); on QP 1: FLUSH GLOBAL
 *              of a range of a (see there for rxe 6.12), of all of a, and
 *              of b, which rxe registered without FLUSH access (expects the
 *              remote access error of rxe's NAK)
 *   read-back  rxe requests ATOMIC WRITE; uroce checks its memory after
 * See iba15_common.h for the side channel.
 */

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "example_util.h"
#include "uroce_verbs.h"

#include "iba15_common.h"

struct side {
	struct uroce_context *ctx;
	struct uroce_pd *pd;
	struct uroce_cq *cq[2];
	struct uroce_qp *qp[2];
	uint8_t gid[16];
	int fd;
};

static int
accept_vm(const char *ip, int port)
{
	struct sockaddr_in sa;
	struct pollfd pfd;
	int one = 1, lfd, fd;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
		iba15_die("bad listen address %s", ip);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 1) != 0)
		iba15_die("listen on %s:%d: %s", ip, port, strerror(errno));
	printf("iba15 uroce: listening on %s:%d\n", ip, port);
	pfd.fd = lfd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, IBA15_CONNECT_S * 1000) != 1)
		iba15_die("side channel: the VM did not connect within %d s", IBA15_CONNECT_S);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		iba15_die("accept: %s", strerror(errno));
	close(lfd);
	iba15_timeouts(fd);
	return fd;
}

/* Both QPs, connected to the VM's after the QP lines are exchanged. */
static void
setup(struct side *s, const char *ip, int port)
{
	char line[256], hex[33], rhex[40];
	unsigned int rq[2], rpsn;
	uint8_t rgid[16];
	int i;

	s->ctx = ex_open(NULL, 0, s->gid, NULL);
	s->pd = uroce_alloc_pd(s->ctx);
	if (s->pd == NULL)
		iba15_die("alloc_pd: %s", strerror(errno));
	for (i = 0; i < 2; i++) {
		s->cq[i] = uroce_create_cq(s->ctx, 32, NULL);
		if (s->cq[i] == NULL)
			iba15_die("create_cq: %s", strerror(errno));
		s->qp[i] = ex_create_qp(s->pd, s->cq[i], UROCE_QPT_RC, false, 16, 16);
	}
	s->fd = accept_vm(ip, port);
	iba15_readline(s->fd, line, sizeof(line));
	if (sscanf(line, "QP %u %u %u %39s", &rq[0], &rq[1], &rpsn, rhex) != 4 ||
	    iba15_gid_parse(rhex, rgid) != 0)
		iba15_die("side channel: bad QP line '%s'", line);
	iba15_gid_hex(s->gid, hex);
	snprintf(line, sizeof(line), "QP %u %u %u %s\n", s->qp[0]->qp_num, s->qp[1]->qp_num,
		 IBA15_PSN, hex);
	iba15_sendline(s->fd, line);
	for (i = 0; i < 2; i++) {
		struct ex_rc_conn c = {
			.dest_qpn = rq[i],
			.rq_psn = rpsn,
			.sq_psn = IBA15_PSN,
			.dgid = rgid,
			.path_mtu = 3,  /* 1024: the VM's eth0 MTU is 1500 */
			.access = UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ |
				  UROCE_ACCESS_REMOTE_ATOMIC,
			.rd_atomic = 4,
		};

		ex_connect_rc(s->qp[i], &c);
	}
}

/* Post @p wr (signaled) on QP @p i and return its completion. */
static struct uroce_wc
post_wait(struct side *s, int i, struct uroce_send_wr *wr)
{
	struct uroce_send_wr *bad;
	struct uroce_wc wc;

	wr->send_flags |= UROCE_SEND_SIGNALED;
	ex_ck(uroce_post_send(s->qp[i], wr, &bad), "post_send");
	ex_wait_wcs(s->cq[i], 1, &wc);
	return wc;
}

/* RDMA WRITE of @p sge to @p raddr, @p rkey on QP 0; its completion. */
static struct uroce_wc
write_at(struct side *s, struct uroce_sge *sge, uint64_t raddr, uint32_t rkey)
{
	struct uroce_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = UROCE_WR_RDMA_WRITE;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return post_wait(s, 0, &wr);
}

static void
expect(const struct uroce_wc *wc, uint32_t status, uint32_t opcode, const char *what)
{
	char want[64];

	/* ex_status() returns one static buffer: copy the first. */
	snprintf(want, sizeof(want), "%s", ex_status(status));
	/* An error completion's opcode is not defined (IBA 11.4.2.1). */
	iba15_check(wc->status == status && (status != UROCE_WC_SUCCESS || wc->opcode == opcode),
		    "%s: %s, opcode %u (expected %s, %u)", what, ex_status(wc->status), wc->opcode,
		    want, opcode);
}

/* Wait (at most 60 s) for the file @p path, when one is named: the test
 * replays the failed FLUSH to rxe meanwhile, with both ICRCs. */
static void
hold(const char *path)
{
	int i;

	if (path == NULL || *path == '\0')
		return;
	for (i = 0; i < 600 && access(path, F_OK) != 0; i++)
		usleep(100 * 1000);
}

static int
case_write(struct side *s, const char *ip, int port)
{
	uint64_t aaddr, baddr, mwaddr, aw = IBA15_AW_VALUE;
	unsigned int arkey, brkey, mwrkey;
	struct uroce_send_wr wr;
	struct uroce_sge sge;
	struct uroce_mr *mr;
	struct uroce_wc wc;
	char line[256];
	uint8_t *buf;

	setup(s, ip, port);
	buf = uroce_alloc_buf(s->ctx, IBA15_BUF);
	if (buf == NULL)
		iba15_die("alloc_buf: %s", strerror(errno));
	mr = uroce_reg_mr(s->pd, buf, IBA15_BUF, UROCE_ACCESS_LOCAL_WRITE);
	if (mr == NULL)
		iba15_die("reg_mr: %s", strerror(errno));
	memset(buf, IBA15_WIN_BYTE, IBA15_WIN_LEN);
	memset(buf + IBA15_WIN_LEN, 0xee, IBA15_WIN_LEN);
	iba15_readline(s->fd, line, sizeof(line));
	if (sscanf(line, "KEYS %" SCNu64 " %u %" SCNu64 " %u %" SCNu64 " %u", &aaddr, &arkey,
		   &baddr, &brkey, &mwaddr, &mwrkey) != 6)
		iba15_die("side channel: bad KEYS line '%s'", line);

	memset(&wr, 0, sizeof(wr));
	wr.opcode = UROCE_WR_ATOMIC_WRITE;
	wr.wr.atomic_write.remote_addr = aaddr + IBA15_AW_OFF;
	wr.wr.atomic_write.rkey = arkey;
	memcpy(wr.wr.atomic_write.data, &aw, 8);
	wc = post_wait(s, 0, &wr);
	expect(&wc, UROCE_WC_SUCCESS, UROCE_WC_ATOMIC_WRITE, "ATOMIC WRITE (0x1D) to rxe");

	sge.addr = (uintptr_t)buf;
	sge.length = IBA15_WIN_LEN;
	sge.lkey = mr->lkey;
	wc = write_at(s, &sge, mwaddr, mwrkey);
	expect(&wc, UROCE_WC_SUCCESS, UROCE_WC_RDMA_WRITE,
	       "RDMA WRITE through rxe's type 2 window rkey");

	memset(&wr, 0, sizeof(wr));
	wr.opcode = UROCE_WR_SEND_WITH_INV;
	wr.imm_data = mwrkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wc = post_wait(s, 0, &wr);
	expect(&wc, UROCE_WC_SUCCESS, UROCE_WC_SEND, "SEND with Invalidate of the window rkey");

	/* IBA C9-88: an invalidated window's rkey no longer grants access. */
	sge.addr = (uintptr_t)buf + IBA15_WIN_LEN;
	wc = write_at(s, &sge, mwaddr + IBA15_WIN_LEN, mwrkey);
	expect(&wc, UROCE_WC_REM_ACCESS_ERR, UROCE_WC_RDMA_WRITE,
	       "RDMA WRITE through the invalidated window rkey");

	/* QP 1: FLUSH. rxe 6.12 drops every FLUSH it did not build itself:
	 * it computes a FLUSH's ICRC over its headers twice (its opcode
	 * table gives RC_FLUSH no payload offset), so a standard ICRC never
	 * matches and the requester retries until RETRY_EXC_ERR. That
	 * outcome is reported as "rxe-defect" (test_iba15_rxe.sh checks the
	 * frames' ICRC both ways); an answer from rxe is checked as IBA 1.5
	 * says, and then a FLUSH to b must be refused. */
	memset(&wr, 0, sizeof(wr));
	wr.opcode = UROCE_WR_FLUSH;
	wr.wr.flush.remote_addr = aaddr + IBA15_AW_OFF;
	wr.wr.flush.length = 8;
	wr.wr.flush.rkey = arkey;
	wr.wr.flush.type = UROCE_FLUSH_GLOBAL;
	wr.wr.flush.level = UROCE_FLUSH_RANGE;
	wc = post_wait(s, 1, &wr);
	if (wc.status == UROCE_WC_RETRY_EXC_ERR) {
		printf("iba15 uroce: rxe-defect: FLUSH (0x1C) GLOBAL to rxe unanswered: %s\n",
		       ex_status(wc.status));
		hold(getenv("IBA15_HOLD"));
	} else {
		expect(&wc, UROCE_WC_SUCCESS, UROCE_WC_FLUSH,
		       "FLUSH (0x1C) GLOBAL of a range, to rxe");
		wr.wr.flush.level = UROCE_FLUSH_MR;
		wc = post_wait(s, 1, &wr);
		expect(&wc, UROCE_WC_SUCCESS, UROCE_WC_FLUSH,
		       "FLUSH GLOBAL of the whole MR, to rxe");
		/* rxe checks the MR's FLUSH access (IBA 1.5 A19): remote access NAK. */
		wr.wr.flush.remote_addr = baddr;
		wr.wr.flush.rkey = brkey;
		wr.wr.flush.level = UROCE_FLUSH_RANGE;
		wc = post_wait(s, 1, &wr);
		expect(&wc, UROCE_WC_REM_ACCESS_ERR, UROCE_WC_FLUSH,
		       "FLUSH GLOBAL to an rxe MR without FLUSH access");
	}

	iba15_sendline(s->fd, "DONE\n");
	iba15_readline(s->fd, line, sizeof(line));
	return iba15_fails;
}

static int
case_read_back(struct side *s, const char *ip, int port)
{
	struct uroce_mr *rw, *ro;
	uint8_t *buf, *robuf;
	char line[256];
	uint64_t z;
	int i, ok;

	setup(s, ip, port);
	buf = uroce_alloc_buf(s->ctx, IBA15_BUF);
	robuf = uroce_alloc_buf(s->ctx, IBA15_BUF);
	if (buf == NULL || robuf == NULL)
		iba15_die("alloc_buf: %s", strerror(errno));
	rw = uroce_reg_mr(s->pd, buf, IBA15_BUF,
			  UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE);
	ro = uroce_reg_mr(s->pd, robuf, IBA15_BUF,
			  UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_READ);
	if (rw == NULL || ro == NULL)
		iba15_die("reg_mr: %s", strerror(errno));
	snprintf(line, sizeof(line), "KEYS %" PRIu64 " %u %" PRIu64 " %u\n",
		 (uint64_t)(uintptr_t)buf, rw->rkey, (uint64_t)(uintptr_t)robuf, ro->rkey);
	iba15_keys_then_done(s->fd, line);
	iba15_check_aw(buf + IBA15_AW_OFF, "rxe's ATOMIC WRITE landed in uroce's MR");
	for (ok = 1, i = 0; i < IBA15_BUF; i += 8) {
		memcpy(&z, robuf + i, 8);
		ok &= z == 0;
	}
	iba15_check(ok, "uroce's MR without REMOTE_WRITE is untouched");
	iba15_sendline(s->fd, "BYE\n");
	return iba15_fails;
}

int
main(int argc, char **argv)
{
	struct side s;

	iba15_side = "uroce";
	ex_set_role("iba15_uroce");
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&s, 0, sizeof(s));
	if (argc != 4) {
		fprintf(stderr, "usage: %s write|read-back LISTEN_IP PORT\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "write") == 0)
		return case_write(&s, argv[2], atoi(argv[3]));
	if (strcmp(argv[1], "read-back") == 0)
		return case_read_back(&s, argv[2], atoi(argv[3]));
	fprintf(stderr, "%s: unknown case %s\n", argv[0], argv[1]);
	return 2;
}
