/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * iba15_rxe: the rxe side of the IBA 1.5 interop pair, run inside the peer
 * VM on Debian's libibverbs (rdma-core 44) and Linux rxe. It links nothing
 * of uroce: the VM has only Debian's libraries.
 *
 * usage: iba15_rxe caps | write|read-back HOST PORT GID_INDEX
 *   caps       print the device's IBA 1.5 capability bits and whether an MR
 *              and a QP take IBV_ACCESS_FLUSH_GLOBAL
 *   write      rxe responds: registers buffer a (REMOTE_WRITE, MW_BIND,
 *              FLUSH_GLOBAL) and b (REMOTE_WRITE only), binds a type 2
 *              window over a, and after uroce's requests checks that the
 *              ATOMIC WRITE value and the window's bytes are in a and that a
 *              SEND with Invalidate arrived naming the window's rkey
 *   read-back  rxe requests: ibv_wr_atomic_write() into uroce's writable MR
 *              (expects success) and into its read-only MR (expects
 *              IBV_WC_REM_ACCESS_ERR)
 * See iba15_common.h for the side channel.
 */

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "iba15_common.h"

/* rdma-core 45 names; rdma-core 44 (Debian 12) lacks them, the kernel
 * takes the raw bits (include/uapi/rdma/ib_user_verbs.h). */
#define ACCESS_FLUSH_GLOBAL (1 << 8)
#define CAP_FLUSH_GLOBAL (1ULL << 38)
#define CAP_FLUSH_PERSISTENT (1ULL << 39)
#define CAP_ATOMIC_WRITE (1ULL << 40)
/* The kernel's IB_WC_WITH_INVALIDATE (include/rdma/ib_verbs.h). */
#define RXE_WC_WITH_INVALIDATE (1 << 2)

#define WAIT_MS 15000

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	struct ibv_qp_ex *qpx[2];
	uint8_t gid[16];
	int gid_index;
	int fd;
};

static struct ibv_context *
open_first(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n;

	list = ibv_get_device_list(&n);
	if (list == NULL || n == 0)
		iba15_die("no RDMA device (is rdma_rxe loaded and rxe0 added?)");
	ctx = ibv_open_device(list[0]);
	if (ctx == NULL)
		iba15_die("ibv_open_device(%s): %s", ibv_get_device_name(list[0]),
			  strerror(errno));
	ibv_free_device_list(list);
	return ctx;
}

static int
caps(void)
{
	struct ibv_device_attr_ex ax;
	struct ibv_context *ctx = open_first();
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	void *buf;
	uint64_t f;

	memset(&ax, 0, sizeof(ax));
	if (ibv_query_device_ex(ctx, NULL, &ax) != 0)
		iba15_die("ibv_query_device_ex: %s", strerror(errno));
	f = ax.device_cap_flags_ex;
	printf("iba15 rxe: device_cap_flags_ex 0x%" PRIx64 " FLUSH_GLOBAL=%d FLUSH_PERSISTENT=%d "
	       "ATOMIC_WRITE=%d MEM_WINDOW_TYPE_2B=%d\n", f, !!(f & CAP_FLUSH_GLOBAL),
	       !!(f & CAP_FLUSH_PERSISTENT), !!(f & CAP_ATOMIC_WRITE),
	       !!(f & IBV_DEVICE_MEM_WINDOW_TYPE_2B));
	iba15_check((f & CAP_FLUSH_GLOBAL) && (f & CAP_ATOMIC_WRITE),
		    "rxe reports FLUSH_GLOBAL (1<<38) and ATOMIC_WRITE (1<<40)");
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, IBA15_BUF);
	if (pd == NULL || buf == NULL)
		iba15_die("alloc_pd/buffer: %s", strerror(errno));
	mr = ibv_reg_mr(pd, buf, IBA15_BUF, IBV_ACCESS_LOCAL_WRITE | ACCESS_FLUSH_GLOBAL);
	iba15_check(mr != NULL, "ibv_reg_mr with IBV_ACCESS_FLUSH_GLOBAL (raw 1<<8): %s",
		    mr != NULL ? "registered" : strerror(errno));
	if (mr != NULL)
		ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	return iba15_fails;
}

static int
connect_host(const char *host, int port)
{
	struct sockaddr_in sa;
	int i, fd;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		iba15_die("bad host address %s", host);
	/* uroce's side listens once its previous case is over. */
	for (i = 0; i < IBA15_CONNECT_S * 5; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			iba15_die("socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			iba15_timeouts(fd);
			return fd;
		}
		close(fd);
		usleep(200 * 1000);
	}
	iba15_die("side channel: no listener at %s:%d after %d s", host, port, IBA15_CONNECT_S);
}

/* Poll @p cq for one completion; 0 with @p wc filled, -1 on timeout. */
static int
wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec t0, t;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			iba15_die("ibv_poll_cq: %d", n);
		if (n == 1)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > WAIT_MS)
			return -1;
		usleep(1000);
	}
}

static void
setup(struct side *s, uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex ia;
	int i;

	s->ctx = open_first();
	s->pd = ibv_alloc_pd(s->ctx);
	if (s->pd == NULL)
		iba15_die("ibv_alloc_pd: %s", strerror(errno));
	if (ibv_query_gid(s->ctx, 1, s->gid_index, (union ibv_gid *)s->gid) != 0)
		iba15_die("ibv_query_gid(%d): %s", s->gid_index, strerror(errno));
	for (i = 0; i < 2; i++) {
		s->cq[i] = ibv_create_cq(s->ctx, 32, NULL, NULL, 0);
		if (s->cq[i] == NULL)
			iba15_die("ibv_create_cq: %s", strerror(errno));
		memset(&ia, 0, sizeof(ia));
		ia.qp_type = IBV_QPT_RC;
		ia.send_cq = s->cq[i];
		ia.recv_cq = s->cq[i];
		ia.cap.max_send_wr = 16;
		ia.cap.max_recv_wr = 16;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		ia.pd = s->pd;
		ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ia.send_ops_flags = send_ops;
		s->qp[i] = ibv_create_qp_ex(s->ctx, &ia);
		if (s->qp[i] == NULL)
			iba15_die("ibv_create_qp_ex (send_ops_flags 0x%" PRIx64 "): %s", send_ops,
				  strerror(errno));
		s->qpx[i] = ibv_qp_to_qp_ex(s->qp[i]);
	}
}

/* Exchange QP lines and take both QPs to RTS, @p access on each. */
static void
connect_qps(struct side *s, const char *host, int port, unsigned int access)
{
	char line[256], hex[33], rhex[40];
	unsigned int rq[2], rpsn;
	uint8_t rgid[16];
	int i;

	s->fd = connect_host(host, port);
	iba15_gid_hex(s->gid, hex);
	snprintf(line, sizeof(line), "QP %u %u %u %s\n", s->qp[0]->qp_num, s->qp[1]->qp_num,
		 IBA15_PSN, hex);
	iba15_sendline(s->fd, line);
	iba15_readline(s->fd, line, sizeof(line));
	if (sscanf(line, "QP %u %u %u %39s", &rq[0], &rq[1], &rpsn, rhex) != 4 ||
	    iba15_gid_parse(rhex, rgid) != 0)
		iba15_die("side channel: bad QP line '%s'", line);
	for (i = 0; i < 2; i++) {
		struct ibv_qp_attr a;

		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = access;
		if (ibv_modify_qp(s->qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					    IBV_QP_ACCESS_FLAGS) != 0)
			iba15_die("modify QP to INIT (access 0x%x): %s", access, strerror(errno));
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = rq[i];
		a.rq_psn = rpsn;
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 12;
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, rgid, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)s->gid_index;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		if (ibv_modify_qp(s->qp[i], &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
			iba15_die("modify QP to RTR: %s", strerror(errno));
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = IBA15_PSN;
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 4;
		if (ibv_modify_qp(s->qp[i], &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					    IBV_QP_MAX_QP_RD_ATOMIC) != 0)
			iba15_die("modify QP to RTS: %s", strerror(errno));
	}
}

static struct ibv_mr *
reg(struct ibv_pd *pd, void *buf, unsigned int access, const char *what)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, IBA15_BUF, (int)access);

	if (mr == NULL)
		iba15_die("ibv_reg_mr %s (access 0x%x): %s", what, access, strerror(errno));
	return mr;
}

/* Case "write": rxe is the responder of uroce's ATOMIC WRITE, FLUSH, a
 * write through a type 2 window and a SEND with Invalidate of it. */
static int
case_write(struct side *s, const char *host, int port)
{
	uint8_t *a = aligned_alloc(4096, IBA15_BUF), *b = aligned_alloc(4096, IBA15_BUF);
	uint8_t *rbuf = aligned_alloc(4096, IBA15_BUF);
	struct ibv_mr *mra, *mrb, *mrr;
	struct ibv_mw_bind_info bi;
	struct ibv_recv_wr rw, *bad;
	struct ibv_sge sge;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	char line[256];
	uint32_t rkey;
	int i, ok;

	if (a == NULL || b == NULL || rbuf == NULL)
		iba15_die("out of memory");
	memset(a, 0, IBA15_BUF);
	memset(b, 0, IBA15_BUF);
	setup(s, IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE);
	mra = reg(s->pd, a, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND | ACCESS_FLUSH_GLOBAL, "a");
	mrb = reg(s->pd, b, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, "b");
	mrr = reg(s->pd, rbuf, IBV_ACCESS_LOCAL_WRITE, "receive buffer");
	mw = ibv_alloc_mw(s->pd, IBV_MW_TYPE_2);
	if (mw == NULL)
		iba15_die("ibv_alloc_mw(TYPE_2): %s", strerror(errno));
	connect_qps(s, host, port, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_REMOTE_ATOMIC | ACCESS_FLUSH_GLOBAL);
	/* The SEND with Invalidate needs a receive on QP 0 (posted before
	 * uroce has the keys, so before it can send). */
	sge.addr = (uintptr_t)rbuf;
	sge.length = 256;
	sge.lkey = mrr->lkey;
	memset(&rw, 0, sizeof(rw));
	rw.wr_id = 7;
	rw.sg_list = &sge;
	rw.num_sge = 1;
	if (ibv_post_recv(s->qp[0], &rw, &bad) != 0)
		iba15_die("ibv_post_recv: %s", strerror(errno));

	/* A type 2 window is bound by a WR of a QP of its PD (IBA 10.6.7.2). */
	rkey = ibv_inc_rkey(mw->rkey);
	memset(&bi, 0, sizeof(bi));
	bi.mr = mra;
	bi.addr = (uintptr_t)a + IBA15_MW_OFF;
	bi.length = IBA15_MW_LEN;
	bi.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ibv_wr_start(s->qpx[0]);
	s->qpx[0]->wr_id = 1;
	s->qpx[0]->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(s->qpx[0], mw, rkey, &bi);
	if (ibv_wr_complete(s->qpx[0]) != 0)
		iba15_die("ibv_wr_bind_mw: %s", strerror(errno));
	if (wait_wc(s->cq[0], &wc) != 0)
		iba15_die("no completion of the window bind");
	iba15_check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW,
		    "type 2 window bound on rxe (rkey 0x%x over [a+%d, +%d)): %s", rkey,
		    IBA15_MW_OFF, IBA15_MW_LEN, ibv_wc_status_str(wc.status));

	snprintf(line, sizeof(line), "KEYS %" PRIu64 " %u %" PRIu64 " %u %" PRIu64 " %u\n",
		 (uint64_t)(uintptr_t)a, mra->rkey, (uint64_t)(uintptr_t)b, mrb->rkey,
		 (uint64_t)bi.addr, rkey);
	iba15_keys_then_done(s->fd, line);
	iba15_check_aw(a + IBA15_AW_OFF, "ATOMIC WRITE from uroce landed in rxe's MR");
	for (ok = 1, i = 0; i < IBA15_WIN_LEN; i++)
		ok &= a[IBA15_MW_OFF + i] == IBA15_WIN_BYTE;
	iba15_check(ok, "RDMA WRITE from uroce through the window rkey landed at a+%d",
		    IBA15_MW_OFF);
	if (wait_wc(s->cq[0], &wc) != 0)
		iba15_die("no receive completion for the SEND with Invalidate");
	/* rxe's kernel writes its IB_WC_WITH_INVALIDATE (1 << 2) into the
	 * user CQE, which libibverbs reads as IBV_WC_IP_CSUM_OK; its
	 * IBV_WC_WITH_INV is 1 << 3. Either names the invalidation here. */
	iba15_check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		    (wc.wc_flags & (IBV_WC_WITH_INV | RXE_WC_WITH_INVALIDATE)) &&
		    wc.invalidated_rkey == rkey,
		    "SEND with Invalidate received: status %s, wc_flags 0x%x (IBV_WC_WITH_INV %d, "
		    "rxe's 1<<2 %d), invalidated rkey 0x%x (window 0x%x)",
		    ibv_wc_status_str(wc.status), wc.wc_flags, !!(wc.wc_flags & IBV_WC_WITH_INV),
		    !!(wc.wc_flags & RXE_WC_WITH_INVALIDATE), wc.invalidated_rkey, rkey);
	for (ok = 1, i = IBA15_WIN_LEN; i < 2 * IBA15_WIN_LEN; i++)
		ok &= a[IBA15_MW_OFF + i] == 0;
	iba15_check(ok, "the write through the invalidated rkey changed nothing");
	for (ok = 1, i = 0; i < IBA15_BUF; i++)
		ok &= b[i] == 0;
	iba15_check(ok, "buffer b (no FLUSH access) is untouched");
	iba15_sendline(s->fd, "BYE\n");
	return iba15_fails;
}

/* Case "read-back": rxe requests ATOMIC WRITE into uroce's memory. */
static int
case_read_back(struct side *s, const char *host, int port)
{
	uint64_t addr[2], v = IBA15_AW_VALUE;
	unsigned int key[2];
	struct ibv_wc wc;
	char line[256];
	int i;

	setup(s, IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_WRITE);
	connect_qps(s, host, port, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_REMOTE_ATOMIC);
	iba15_readline(s->fd, line, sizeof(line));
	if (sscanf(line, "KEYS %" SCNu64 " %u %" SCNu64 " %u", &addr[0], &key[0], &addr[1],
		   &key[1]) != 4)
		iba15_die("side channel: bad KEYS line '%s'", line);
	/* QP 0 into the writable MR, QP 1 into the read-only one (its error
	 * takes only QP 1 to ERR). */
	for (i = 0; i < 2; i++) {
		ibv_wr_start(s->qpx[i]);
		s->qpx[i]->wr_id = 10 + (uint64_t)i;
		s->qpx[i]->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_atomic_write(s->qpx[i], key[i], addr[i] + IBA15_AW_OFF, &v);
		if (ibv_wr_complete(s->qpx[i]) != 0)
			iba15_die("ibv_wr_atomic_write: %s", strerror(errno));
		if (wait_wc(s->cq[i], &wc) != 0)
			iba15_die("no completion of the ATOMIC WRITE on QP %d", i);
		if (i == 0)
			iba15_check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_ATOMIC_WRITE,
				    "ibv_wr_atomic_write to uroce's writable MR completed: %s, "
				    "opcode %d (IBV_WC_ATOMIC_WRITE %d)",
				    ibv_wc_status_str(wc.status), wc.opcode, IBV_WC_ATOMIC_WRITE);
		else
			iba15_check(wc.status == IBV_WC_REM_ACCESS_ERR,
				    "ibv_wr_atomic_write to uroce's read-only MR: %s (expected "
				    "remote access error)", ibv_wc_status_str(wc.status));
	}
	iba15_sendline(s->fd, "DONE\n");
	iba15_readline(s->fd, line, sizeof(line));
	return iba15_fails;
}

int
main(int argc, char **argv)
{
	struct side s;

	iba15_side = "rxe";
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&s, 0, sizeof(s));
	if (argc == 2 && strcmp(argv[1], "caps") == 0)
		return caps();
	if (argc != 5) {
		fprintf(stderr, "usage: %s caps | write|read-back HOST PORT GID_INDEX\n", argv[0]);
		return 2;
	}
	s.gid_index = atoi(argv[4]);
	if (strcmp(argv[1], "write") == 0)
		return case_write(&s, argv[2], atoi(argv[3]));
	if (strcmp(argv[1], "read-back") == 0)
		return case_read_back(&s, argv[2], atoi(argv[3]));
	fprintf(stderr, "%s: unknown case %s\n", argv[0], argv[1]);
	return 2;
}
