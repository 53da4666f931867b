/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Hostile clients of the daemon core (issue 9). The daemon runs in this
 * process (uroce_daemon_create/poll/destroy, its socket: the public API only);
 * beside it, in every test, an honest pair (a forked liburoce client with two
 * RC QPs joined to each other) does WRITE, READ, SEND and FETCH_ADD in a loop
 * and verifies every byte, every completion and a 64 KiB canary in an MR with
 * every remote right. The attackers speak lib/shm's protocol by hand and write
 * their own rings and doorbells (uroce_shm.h only):
 *
 *   - WQEs with unknown opcodes, flags and reserved bits, too many SGEs, SGEs
 *     outside their MRs, wrapping SGE addresses and lengths, the honest
 *     client's L_Key and R_Key, oversized inline data and atomics;
 *   - producer indexes far ahead, behind and exactly a ring ahead, consumer
 *     indexes and arm words that lie, doorbell floods on every slot;
 *   - the honest client's QP, MR and PD handles in control messages;
 *   - garbage, truncated, oversized and lying control messages, descriptors
 *     of the wrong kind and too many of them;
 *   - SIGKILL in the middle of posting, again and again;
 *   - a WQE rewritten after the doorbell (the daemon copies before it checks).
 *
 * Every test expects: the honest pair never sees a failed completion or a
 * wrong byte and keeps making progress; each attack gets the error it must
 * get (a completion status, an errno, a hang-up) and hurts only the attacker;
 * once everyone is gone the daemon owns nothing and holds no more file
 * descriptors than before.
 */

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uroce_daemon.h"
#include "uroce_shm.h"

#include "daemon_core_test.h"
#include "daemon_test_util.h"

#define ALL_ACCESS (UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | \
		    UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC)
#define RAW_SEG 65536u
#define CANARY_BYTE 0xC3

static char sock_path[108];
static struct uroce_daemon *dmn;
static bool in_daemon_process; /* false in forked children */
static const uint8_t daemon_gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 1};

/* cr_assert in the test process; in a forked attacker, a message and exit 3
 * (Criterion's reporting belongs to the test process alone). */
#define RASSERT(cond, ...)                                                  \
	do {                                                                \
		if (!(cond)) {                                              \
			if (in_daemon_process)                              \
				cr_assert_fail(__VA_ARGS__);                \
			fprintf(stderr, "attacker child: %s failed\n", #cond); \
			_exit(3);                                           \
		}                                                           \
	} while (0)
#define RASSERT_EQ(a, b) RASSERT((a) == (b), #a " == " #b)

static void
pump(void)
{
	if (in_daemon_process && uroce_daemon_poll(dmn) == 0)
		dt_nap_us(20);
	else if (!in_daemon_process)
		dt_nap_us(50);
}

/* In a forked child: it dies with the test process, whatever happens there. */
static void
child_init(void)
{
	in_daemon_process = false;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

/* An attacker child spins as fast as it can; at a lower priority, so that on
 * a busy 2-core machine the test measures the daemon's fairness, not the
 * scheduler's. */
static void
attacker_init(void)
{
	child_init();
	errno = 0;
	if (nice(10) == -1 && errno != 0)
		fprintf(stderr, "attacker child: nice: %s\n", strerror(errno));
}

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

static void
start_daemon(void)
{
	struct uroce_daemon_conf conf;

	in_daemon_process = true;
	dt_sock_path(sock_path, sizeof(sock_path), "hostile");
	memset(&conf, 0, sizeof(conf));
	conf.sock_path = sock_path;
	conf.sock_mode = 0600;
	/* Payloads from 64 bytes stay in client memory on the loopback, as
	 * uroced's default does from 2 KiB: the attackers get at that path. */
	conf.loop_zc_min = 64;
	dmn = uroce_daemon_create(&conf);
	cr_assert_not_null(dmn, "daemon: %s", strerror(errno));
}

/* ------------------------------------------------------------------------ */
/* The honest pair                                                           */
/* ------------------------------------------------------------------------ */

/* What the honest client tells the attackers (so that they can try it). */
struct honest_info {
	uint64_t canary_addr;
	uint32_t canary_len;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t mr_handle;
	uint32_t pd_handle;
	uint32_t qp_handle;
	uint32_t qpn;
	uint32_t pad;
};

struct honest {
	pid_t pid;
	int stop_w;   /* closed to tell it to stop */
	int info_r;   /* its info, then its operation count */
	struct honest_info info;
	bool done;
	int status;
};

#define H_FAIL(...)                                          \
	do {                                                 \
		fprintf(stderr, "honest client: " __VA_ARGS__); \
		fprintf(stderr, "\n");                       \
		_exit(1);                                    \
	} while (0)

static void
h_wait(struct uroce_cq *cq, uint64_t wr_id, uint32_t want_len)
{
	struct uroce_wc wc;
	double end = dt_now_s() + 20;
	int n;

	while ((n = uroce_poll_cq(cq, 1, &wc)) == 0 && dt_now_s() < end)
		dt_nap_us(20);
	if (n != 1)
		H_FAIL("no completion for wr %llu (%d)", (unsigned long long)wr_id, n);
	if (wc.status != UROCE_WC_SUCCESS)
		H_FAIL("wr %llu completed with %s (%u)", (unsigned long long)wc.wr_id,
		       uroce_wc_status_str(wc.status), wc.status);
	if (wc.wr_id != wr_id)
		H_FAIL("wr %llu completed, want %llu", (unsigned long long)wc.wr_id,
		       (unsigned long long)wr_id);
	if (want_len != UINT32_MAX && wc.byte_len != want_len)
		H_FAIL("wr %llu: byte_len %u, want %u", (unsigned long long)wr_id, wc.byte_len,
		       want_len);
}

/* The SEND's and the receive's completions, in either order (one CQ). */
static void
h_wait2(struct uroce_cq *cq, uint64_t send_id, uint64_t recv_id, uint32_t recv_len)
{
	struct uroce_wc wc;
	double end = dt_now_s() + 20;
	int got = 0, n;

	while (got < 2 && dt_now_s() < end) {
		n = uroce_poll_cq(cq, 1, &wc);
		if (n == 0) {
			dt_nap_us(20);
			continue;
		}
		if (n != 1 || wc.status != UROCE_WC_SUCCESS)
			H_FAIL("SEND/RECV: %d, status %u", n, wc.status);
		if (wc.wr_id == recv_id && wc.byte_len != recv_len)
			H_FAIL("RECV byte_len %u, want %u", wc.byte_len, recv_len);
		if (wc.wr_id != send_id && wc.wr_id != recv_id)
			H_FAIL("unexpected completion %llu", (unsigned long long)wc.wr_id);
		got++;
	}
	if (got != 2)
		H_FAIL("SEND/RECV: %d of 2 completions", got);
}

static void
h_post(struct uroce_qp *qp, uint32_t op, uint64_t wr_id, void *local, uint32_t len,
       uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t add)
{
	struct uroce_sge s = {(uintptr_t)local, len, lkey};
	struct uroce_send_wr w;
	int rc;

	memset(&w, 0, sizeof(w));
	w.wr_id = wr_id;
	w.sg_list = &s;
	w.num_sge = 1;
	w.opcode = op;
	w.send_flags = UROCE_SEND_SIGNALED;
	if (op == UROCE_WR_ATOMIC_FETCH_AND_ADD) {
		w.wr.atomic.remote_addr = raddr;
		w.wr.atomic.rkey = rkey;
		w.wr.atomic.compare_add = add;
	} else {
		w.wr.rdma.remote_addr = raddr;
		w.wr.rdma.rkey = rkey;
	}
	rc = uroce_post_send(qp, &w, NULL);
	if (rc != 0)
		H_FAIL("post_send op %u: %s", op, strerror(-rc));
}

/* Layout of the honest buffer: A source, B target, E read-back, C canary
 * (inside the MR, never written by anyone), D the atomic counter. */
#define H_A 0
#define H_B (64 * 1024)
#define H_E (128 * 1024)
#define H_C (192 * 1024)
#define H_D (256 * 1024)
#define H_SIZE (260 * 1024)

static void
honest_main(int stop_r, int info_w)
{
	struct uroce_context *ctx = uroce_open_device(sock_path);
	struct uroce_pd *pd;
	struct uroce_cq *cq;
	struct uroce_qp *qa, *qb;
	struct uroce_mr *mr;
	struct honest_info info;
	uint8_t gid[16], *buf;
	uint64_t ops = 0, counter = 0, seed = 0x1234567;
	uint32_t i;
	struct dt_rc ra, rb;

	if (ctx == NULL)
		H_FAIL("open_device: %s", strerror(errno));
	if (uroce_query_gid(ctx, 1, 0, gid) != 0)
		H_FAIL("query_gid");
	pd = uroce_alloc_pd(ctx);
	cq = uroce_create_cq(ctx, 64, NULL);
	buf = uroce_alloc_buf(ctx, H_SIZE);
	if (pd == NULL || cq == NULL || buf == NULL)
		H_FAIL("objects: %s", strerror(errno));
	memset(buf + H_C, CANARY_BYTE, 65536);
	mr = uroce_reg_mr(pd, buf, H_SIZE, ALL_ACCESS);
	qa = dt_qp_create(pd, cq, NULL, UROCE_QPT_RC, 64, 1);
	qb = dt_qp_create(pd, cq, NULL, UROCE_QPT_RC, 64, 1);
	if (mr == NULL || qa == NULL || qb == NULL)
		H_FAIL("mr/qp: %s", strerror(errno));
	ra = (struct dt_rc){gid, qb->qp_num, 300, 200, 4};
	rb = (struct dt_rc){gid, qa->qp_num, 200, 300, 4};
	if (dt_qp_to_rts(qa, ALL_ACCESS, &ra) != 0 || dt_qp_to_rts(qb, ALL_ACCESS, &rb) != 0)
		H_FAIL("connect");
	memset(&info, 0, sizeof(info));
	info.canary_addr = (uintptr_t)(buf + H_C);
	info.canary_len = 65536;
	info.lkey = mr->lkey;
	info.rkey = mr->rkey;
	info.mr_handle = mr->handle;
	info.pd_handle = pd->handle;
	info.qp_handle = qa->handle;
	info.qpn = qa->qp_num;
	dt_xwrite(info_w, &info, sizeof(info), "honest info");
	for (;;) {
		struct pollfd pf = {.fd = stop_r, .events = POLLIN};
		struct uroce_recv_wr rw;
		struct uroce_sge rs;
		uint32_t len, off;
		uint64_t old;

		if (poll(&pf, 1, 0) == 1)
			break;
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		len = 1 + (uint32_t)(seed >> 33) % 16384;
		off = (uint32_t)(seed >> 20) % (65536 - len);
		for (i = 0; i < len; i++)
			buf[H_A + i] = (uint8_t)(seed >> (i % 56) ^ i);
		/* WRITE A -> B+off, then READ it back into E. */
		h_post(qa, UROCE_WR_RDMA_WRITE, 1, buf + H_A, len, mr->lkey,
		       (uintptr_t)(buf + H_B + off), mr->rkey, 0);
		h_wait(cq, 1, UINT32_MAX);
		if (memcmp(buf + H_B + off, buf + H_A, len) != 0)
			H_FAIL("WRITE of %u bytes landed wrong", len);
		h_post(qa, UROCE_WR_RDMA_READ, 2, buf + H_E, len, mr->lkey,
		       (uintptr_t)(buf + H_B + off), mr->rkey, 0);
		h_wait(cq, 2, UINT32_MAX);
		if (memcmp(buf + H_E, buf + H_A, len) != 0)
			H_FAIL("READ of %u bytes returned wrong bytes", len);
		/* SEND A -> a receive in E (on qb). */
		rs = (struct uroce_sge){(uintptr_t)(buf + H_E), 65536, mr->lkey};
		rw = (struct uroce_recv_wr){.wr_id = 3, .sg_list = &rs, .num_sge = 1};
		if (uroce_post_recv(qb, &rw, NULL) != 0)
			H_FAIL("post_recv");
		buf[H_A] ^= 0xFF;
		h_post(qa, UROCE_WR_SEND, 4, buf + H_A, len, mr->lkey, 0, 0, 0);
		h_wait2(cq, 4, 3, len);
		if (memcmp(buf + H_E, buf + H_A, len) != 0)
			H_FAIL("SEND of %u bytes delivered wrong bytes", len);
		/* FETCH_ADD on D: the original value is exactly the count so far. */
		h_post(qa, UROCE_WR_ATOMIC_FETCH_AND_ADD, 5, buf + H_E, 8, mr->lkey,
		       (uintptr_t)(buf + H_D), mr->rkey, 1);
		h_wait(cq, 5, UINT32_MAX);
		memcpy(&old, buf + H_E, 8);
		if (old != counter)
			H_FAIL("FETCH_ADD returned %llu, want %llu", (unsigned long long)old,
			       (unsigned long long)counter);
		counter++;
		for (i = 0; i < 65536; i++)
			if (buf[H_C + i] != CANARY_BYTE)
				H_FAIL("canary byte %u changed to %#x", i, buf[H_C + i]);
		ops += 4;
	}
	dt_xwrite(info_w, &ops, sizeof(ops), "honest ops");
	uroce_close_device(ctx);
	_exit(0);
}

static void
honest_start(struct honest *h)
{
	int sp[2], ip[2];
	double end;

	cr_assert(pipe(sp) == 0 && pipe(ip) == 0);
	memset(h, 0, sizeof(*h));
	h->pid = fork();
	cr_assert(h->pid >= 0);
	if (h->pid == 0) {
		child_init(); /* the honest pair: normal priority */
		close(sp[1]);
		close(ip[0]);
		honest_main(sp[0], ip[1]);
	}
	close(sp[0]);
	close(ip[1]);
	h->stop_w = sp[1];
	h->info_r = ip[0];
	fcntl(h->info_r, F_SETFL, O_NONBLOCK);
	/* Serve it until it has its QPs and says who it is. */
	for (end = dt_now_s() + 20; dt_now_s() < end;) {
		ssize_t n = read(h->info_r, &h->info, sizeof(h->info));

		if (n == (ssize_t)sizeof(h->info))
			return;
		cr_assert(n < 0 && errno == EAGAIN, "honest client died at start");
		pump();
	}
	cr_assert_fail("honest client did not start");
}

static void
reap_children(struct honest *h)
{
	if (!h->done && waitpid(h->pid, &h->status, WNOHANG) == h->pid)
		h->done = true;
}

/* Serve the daemon for @p s seconds (the honest pair keeps going). */
static void
serve(struct honest *h, double s)
{
	double end = dt_now_s() + s;

	while (dt_now_s() < end) {
		pump();
		reap_children(h);
		cr_assert(!h->done, "the honest client exited during the attack (status %#x)",
			  h->status);
	}
}

/* Stop the honest pair; expect it clean and with at least @p min_ops done. */
static uint64_t
honest_stop(struct honest *h, uint64_t min_ops)
{
	uint64_t ops = 0;
	double end;

	close(h->stop_w);
	for (end = dt_now_s() + 30; !h->done && dt_now_s() < end;) {
		pump();
		reap_children(h);
	}
	if (!h->done) {
		kill(h->pid, SIGKILL);
		waitpid(h->pid, &h->status, 0);
		cr_assert_fail("honest client did not stop");
	}
	cr_expect(WIFEXITED(h->status) && WEXITSTATUS(h->status) == 0,
		  "honest client failed: status %#x (its stderr says why)", h->status);
	if (read(h->info_r, &ops, sizeof(ops)) != (ssize_t)sizeof(ops))
		ops = 0;
	close(h->info_r);
	cr_expect_geq(ops, min_ops, "honest pair made too little progress: %llu operations",
		      (unsigned long long)ops);
	return ops;
}

/* ------------------------------------------------------------------------ */
/* A raw client: lib/shm by hand                                             */
/* ------------------------------------------------------------------------ */

struct raw {
	int s;
	uint32_t seq;
	struct uroce_shm_segment db, cqseg, data;
	struct uroce_shm_ring cq;
	uint32_t pd, cqh, seg, mr, lkey, rkey;
};

struct rawqp {
	struct uroce_shm_segment seg;
	struct uroce_shm_ring sq, rq;
	uint32_t handle, qpn, slot, block;
};

/* One request; the answer's status, its body in @p resp, any descriptor in
 * *@p fd_out (closed if NULL). -ETIMEDOUT if none came, -EPIPE on hang-up. */
static int
raw_rpc(struct raw *r, uint16_t type, const void *req, size_t req_len, int fd_in, void *resp,
	size_t resp_len, int *fd_out)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	struct uroce_shm_msg_hdr *h = (void *)buf;
	double end = dt_now_s() + 10;
	uint32_t seq = ++r->seq;
	int fd = -1;
	ssize_t n;

	if (fd_out != NULL)
		*fd_out = -1;
	if (dt_msg_send(r->s, type, seq, req, req_len, fd_in) < 0)
		return -EPIPE;
	while (dt_now_s() < end) {
		n = dt_msg_recv(r->s, buf, sizeof(buf), &fd);
		if (n == 0)
			return -EPIPE;
		if (n > 0 && h->type == UROCE_SHM_MSG_ASYNC_EVENT)
			continue;
		if (n > 0) {
			if (h->status == 0 && resp_len > 0)
				memcpy(resp, buf + sizeof(*h), resp_len);
			if (fd_out != NULL)
				*fd_out = fd;
			else if (fd >= 0)
				close(fd);
			return h->status;
		}
		if (n != -EAGAIN)
			return (int)n;
		pump();
	}
	return -ETIMEDOUT;
}

static void
raw_open(struct raw *r)
{
	struct uroce_shm_msg_hello_req hq = {.abi_major = UROCE_SHM_ABI_MAJOR,
					     .abi_minor = UROCE_SHM_ABI_MINOR};
	struct uroce_shm_msg_hello_resp hr;
	struct uroce_shm_msg_handle pd;
	struct uroce_shm_msg_alloc_segment_req sq;
	struct uroce_shm_msg_alloc_segment_resp sr;
	struct uroce_shm_msg_reg_mr_req mq;
	struct uroce_shm_msg_reg_mr_resp mr;
	struct uroce_shm_msg_create_cq_req cq = {.cqe = 64};
	struct uroce_shm_msg_create_cq_resp cr;
	int fd;

	memset(r, 0, sizeof(*r));
	r->s = dt_connect(sock_path);
	RASSERT(r->s >= 0, "connect");
	fcntl(r->s, F_SETFL, O_NONBLOCK);
	memcpy(hq.name, "attacker", 8);
	RASSERT_EQ(raw_rpc(r, UROCE_SHM_MSG_HELLO, &hq, sizeof(hq), -1, &hr, sizeof(hr), &fd), 0);
	RASSERT_EQ(uroce_shm_segment_map(&r->db, fd, hr.db_seg_size), 0);
	RASSERT_EQ(raw_rpc(r, UROCE_SHM_MSG_ALLOC_PD, NULL, 0, -1, &pd, sizeof(pd), NULL), 0);
	r->pd = pd.handle;
	RASSERT_EQ(uroce_shm_segment_create(&r->data, "attacker", RAW_SEG, 0), 0);
	memset(&sq, 0, sizeof(sq));
	sq.size = r->data.size;
	RASSERT_EQ(raw_rpc(r, UROCE_SHM_MSG_ALLOC_SEGMENT, &sq, sizeof(sq), r->data.fd, &sr,
			   sizeof(sr), NULL), 0);
	r->seg = sr.seg_handle;
	memset(&mq, 0, sizeof(mq));
	mq.pd_handle = r->pd;
	mq.seg_handle = r->seg;
	mq.length = RAW_SEG;
	mq.iova = (uintptr_t)r->data.addr;
	mq.access = ALL_ACCESS;
	RASSERT_EQ(raw_rpc(r, UROCE_SHM_MSG_REG_MR, &mq, sizeof(mq), -1, &mr, sizeof(mr), NULL), 0);
	r->mr = mr.mr_handle;
	r->lkey = mr.lkey;
	r->rkey = mr.rkey;
	RASSERT_EQ(raw_rpc(r, UROCE_SHM_MSG_CREATE_CQ, &cq, sizeof(cq), -1, &cr, sizeof(cr), &fd),
		   0);
	r->cqh = cr.cq_handle;
	RASSERT_EQ(uroce_shm_segment_map(&r->cqseg, fd, cr.seg_size), 0);
	RASSERT_EQ(uroce_shm_ring_attach(&r->cq, (uint8_t *)r->cqseg.addr + cr.ring_offset,
					 r->cqseg.size - cr.ring_offset,
					 UROCE_SHM_RING_CONSUMER, 0), 0);
}

static void
raw_close(struct raw *r)
{
	uroce_shm_segment_unmap(&r->cqseg);
	uroce_shm_segment_unmap(&r->db);
	uroce_shm_segment_unmap(&r->data);
	close(r->s);
}

static int
raw_modify(struct raw *r, uint32_t qp_handle, uint32_t state, uint32_t dqpn)
{
	struct uroce_shm_msg_modify_qp_req mq;

	memset(&mq, 0, sizeof(mq));
	mq.qp_handle = qp_handle;
	mq.attr.qp_state = state;
	switch (state) {
	case UROCE_QPS_INIT:
		mq.attr.port_num = 1;
		mq.attr.qp_access_flags = ALL_ACCESS;
		mq.attr_mask = UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
			       UROCE_QP_ACCESS_FLAGS;
		break;
	case UROCE_QPS_RTR:
		mq.attr.path_mtu = 3;
		mq.attr.dest_qp_num = dqpn;
		mq.attr.rq_psn = 100;
		mq.attr.max_dest_rd_atomic = 4;
		mq.attr.min_rnr_timer = 1;
		memcpy(mq.attr.ah_attr.dgid, daemon_gid, 16);
		mq.attr.ah_attr.hop_limit = 64;
		mq.attr.ah_attr.port_num = 1;
		mq.attr_mask = UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU |
			       UROCE_QP_DEST_QPN | UROCE_QP_RQ_PSN | UROCE_QP_MAX_DEST_RD_ATOMIC |
			       UROCE_QP_MIN_RNR_TIMER;
		break;
	case UROCE_QPS_RTS:
		mq.attr.sq_psn = 100;
		mq.attr.timeout = 14;
		mq.attr.retry_cnt = 1;
		mq.attr.rnr_retry = 1;
		mq.attr.max_rd_atomic = 4;
		mq.attr_mask = UROCE_QP_STATE | UROCE_QP_SQ_PSN | UROCE_QP_TIMEOUT |
			       UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY | UROCE_QP_MAX_QP_RD_ATOMIC;
		break;
	default:
		mq.attr_mask = UROCE_QP_STATE;
		break;
	}
	return raw_rpc(r, UROCE_SHM_MSG_MODIFY_QP, &mq, sizeof(mq), -1, NULL, 0, NULL);
}

/* An RC QP of the raw client in INIT (raw_qp_connect() takes it to RTS). */
static void
raw_qp_create(struct raw *r, struct rawqp *q)
{
	struct uroce_shm_msg_create_qp_req cq;
	struct uroce_shm_msg_create_qp_resp cr;
	int fd;

	memset(q, 0, sizeof(*q));
	memset(&cq, 0, sizeof(cq));
	cq.pd_handle = r->pd;
	cq.send_cq = r->cqh;
	cq.recv_cq = r->cqh;
	cq.srq_handle = UROCE_SHM_HANDLE_NONE;
	cq.qp_type = UROCE_QPT_RC;
	cq.cap.max_send_wr = 16;
	cq.cap.max_recv_wr = 16;
	cq.cap.max_send_sge = 2;
	cq.cap.max_recv_sge = 2;
	cq.cap.max_inline_data = 64;
	RASSERT_EQ(raw_rpc(r, UROCE_SHM_MSG_CREATE_QP, &cq, sizeof(cq), -1, &cr, sizeof(cr), &fd),
		   0);
	q->handle = cr.qp_handle;
	q->qpn = cr.qp_num;
	q->slot = cr.db_slot;
	q->block = cr.db_block;
	RASSERT_EQ(uroce_shm_segment_map(&q->seg, fd, cr.seg_size), 0);
	RASSERT_EQ(uroce_shm_ring_attach(&q->sq, (uint8_t *)q->seg.addr + cr.sq_offset,
					 cr.rq_offset - cr.sq_offset, UROCE_SHM_RING_PRODUCER, 0),
		   0);
	RASSERT_EQ(uroce_shm_ring_attach(&q->rq, (uint8_t *)q->seg.addr + cr.rq_offset,
					 q->seg.size - cr.rq_offset, UROCE_SHM_RING_PRODUCER, 0),
		   0);
	RASSERT_EQ(raw_modify(r, q->handle, UROCE_QPS_INIT, 0), 0);
}

static void
raw_qp_connect(struct raw *r, struct rawqp *q, uint32_t dqpn)
{
	RASSERT_EQ(raw_modify(r, q->handle, UROCE_QPS_RTR, dqpn), 0);
	RASSERT_EQ(raw_modify(r, q->handle, UROCE_QPS_RTS, 0), 0);
}

/* An RC QP connected to itself, in RTS. */
static void
raw_qp(struct raw *r, struct rawqp *q)
{
	raw_qp_create(r, q);
	raw_qp_connect(r, q, q->qpn);
}

/* Two RC QPs connected to each other, in RTS: an error at the responder
 * (b) reaches the requester (a) as a NAK, not as a flush of its own QP. */
static void
raw_qp_pair(struct raw *r, struct rawqp *a, struct rawqp *b)
{
	raw_qp_create(r, a);
	raw_qp_create(r, b);
	raw_qp_connect(r, a, b->qpn);
	raw_qp_connect(r, b, a->qpn);
}

static void
raw_qp_destroy(struct raw *r, struct rawqp *q)
{
	struct uroce_shm_msg_handle h = {.handle = q->handle};

	cr_expect_eq(raw_rpc(r, UROCE_SHM_MSG_DESTROY_QP, &h, sizeof(h), -1, NULL, 0, NULL), 0);
	uroce_shm_segment_unmap(&q->seg);
}

/* The next CQE of the raw client's CQ, or a CQE with wr_id ~0 on timeout. */
static struct uroce_shm_cqe
raw_cqe(struct raw *r, double timeout)
{
	struct uroce_shm_cqe c;
	double end = dt_now_s() + timeout;

	memset(&c, 0, sizeof(c));
	c.wr_id = ~0ull;
	while (uroce_shm_ring_cons_peek(&r->cq, 1) == 0) {
		if (dt_now_s() > end)
			return c;
		pump();
	}
	memcpy(&c, uroce_shm_ring_cons_slot(&r->cq, 0), sizeof(c));
	uroce_shm_ring_cons_release(&r->cq, 1);
	return c;
}

static void
raw_drain_cq(struct raw *r)
{
	while (raw_cqe(r, 0.05).wr_id != ~0ull)
		;
}

static void
ring(struct raw *r, const struct rawqp *q)
{
	/* The doorbell block of the worker that owns the QP (ABI 1.2). */
	uroce_shm_db_ring((struct uroce_shm_db_block *)r->db.addr + q->block, q->slot);
}

/* A WRITE of @p len bytes from the raw client's own memory to itself. */
static void
wqe_write(struct raw *r, struct uroce_shm_send_wqe *w, uint64_t wr_id, uint32_t len)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	w->opcode = UROCE_WR_RDMA_WRITE;
	w->send_flags = UROCE_SEND_SIGNALED;
	w->num_sge = 1;
	w->data.sg_list[0].addr = (uintptr_t)r->data.addr;
	w->data.sg_list[0].length = len;
	w->data.sg_list[0].lkey = r->lkey;
	w->wr.rdma.remote_addr = (uintptr_t)r->data.addr + 32768;
	w->wr.rdma.rkey = r->rkey;
}

/* ------------------------------------------------------------------------ */

static struct honest hon;
static int fd_baseline;

static void
setup_common(void)
{
	start_daemon();
	fd_baseline = count_fds();
	honest_start(&hon);
}

static void
finish_common(uint64_t min_ops)
{
	uint64_t ops = honest_stop(&hon, min_ops);
	struct uroce_daemon_stats st;

	cr_log_info("honest pair: %llu verified operations", (unsigned long long)ops);
	dc_expect_all_reclaimed(dmn);
	/* Expect: every descriptor a client passed, and every socket, is gone. */
	cr_expect_eq(count_fds(), fd_baseline, "descriptors: %d, before the clients %d",
		     count_fds(), fd_baseline);
	uroce_daemon_stats(dmn, &st);
	cr_log_info("daemon: wqe_rejected %llu ring_corrupt %llu bad_msgs %llu reaped %llu",
		    (unsigned long long)st.wqe_rejected, (unsigned long long)st.ring_corrupt,
		    (unsigned long long)st.bad_msgs, (unsigned long long)st.sessions_reaped);
	/* Expect: the honest pair's payloads went zero-copy (start_daemon()). */
	cr_expect_gt(st.loop_zero_copy, 0);
	uroce_daemon_destroy(dmn);
}

struct bad_wqe {
	const char *what;
	uint8_t status;
};

Test(hostile_client, bad_wqes_fail_only_their_own_qp, .timeout = 120)
{
	static const struct bad_wqe cases[] = {
		{"unknown opcode 42", UROCE_WC_LOC_QP_OP_ERR},
		{"unknown send flag", UROCE_WC_LOC_QP_OP_ERR},
		{"xrc_remote_srqn set on an RC QP", UROCE_WC_LOC_QP_OP_ERR},
		{"reserved1 set", UROCE_WC_LOC_QP_OP_ERR},
		{"9 SGEs on a QP of 2", UROCE_WC_LOC_QP_OP_ERR},
		{"inline READ", UROCE_WC_LOC_QP_OP_ERR},
		{"inline of 65 bytes on a QP of 64", UROCE_WC_LOC_LEN_ERR},
		{"atomic with a 16-byte SGE", UROCE_WC_LOC_LEN_ERR},
		{"two SGEs of 2^31 (total above the largest message)", UROCE_WC_LOC_LEN_ERR},
		{"SGE one byte past its MR", UROCE_WC_LOC_PROT_ERR},
		{"SGE before its MR", UROCE_WC_LOC_PROT_ERR},
		{"SGE whose address wraps 2^64", UROCE_WC_LOC_PROT_ERR},
		{"SGE with an L_Key nobody has", UROCE_WC_LOC_PROT_ERR},
		{"SGE with the honest client's L_Key and address", UROCE_WC_LOC_PROT_ERR},
		{"WRITE to the honest client's canary with its R_Key", UROCE_WC_REM_ACCESS_ERR},
		{"READ of the honest client's canary with its R_Key", UROCE_WC_REM_ACCESS_ERR},
		{"FETCH_ADD on the honest client's canary", UROCE_WC_REM_ACCESS_ERR},
		{"WRITE past the end of its own MR", UROCE_WC_REM_ACCESS_ERR},
	};
	struct raw r;
	size_t i;

	setup_common();
	raw_open(&r);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct uroce_shm_send_wqe w;
		struct uroce_shm_cqe c;
		struct rawqp q, qb;

		raw_qp_pair(&r, &q, &qb);
		wqe_write(&r, &w, 0xBAD0 + i, 64);
		switch (i) {
		case 0: w.opcode = 42; break;
		case 1: w.send_flags |= 0x100; break;
		case 2: w.xrc_remote_srqn = 1; break;
		case 3: w.reserved1 = 1; break;
		case 4: w.num_sge = 9; break;
		case 5:
			w.opcode = UROCE_WR_RDMA_READ;
			w.send_flags |= UROCE_SEND_INLINE;
			w.inline_len = 8;
			break;
		case 6:
			w.send_flags |= UROCE_SEND_INLINE;
			w.inline_len = 65;
			break;
		case 7:
			w.opcode = UROCE_WR_ATOMIC_FETCH_AND_ADD;
			w.data.sg_list[0].length = 16;
			w.wr.atomic.remote_addr = (uintptr_t)r.data.addr + 32768;
			w.wr.atomic.rkey = r.rkey;
			break;
		case 8:
			w.num_sge = 2;
			w.data.sg_list[0].length = 0x80000000u;
			w.data.sg_list[1] = w.data.sg_list[0];
			break;
		case 9: w.data.sg_list[0].addr += RAW_SEG - 63; break;
		case 10: w.data.sg_list[0].addr -= 1; break;
		case 11: w.data.sg_list[0].addr = UINT64_MAX - 15; break;
		case 12: w.data.sg_list[0].lkey = r.lkey ^ 0x5A5A00; break;
		case 13:
			w.data.sg_list[0].lkey = hon.info.lkey;
			w.data.sg_list[0].addr = hon.info.canary_addr;
			break;
		case 14:
			w.wr.rdma.remote_addr = hon.info.canary_addr;
			w.wr.rdma.rkey = hon.info.rkey;
			break;
		case 15:
			w.opcode = UROCE_WR_RDMA_READ;
			w.wr.rdma.remote_addr = hon.info.canary_addr;
			w.wr.rdma.rkey = hon.info.rkey;
			break;
		case 16:
			w.opcode = UROCE_WR_ATOMIC_FETCH_AND_ADD;
			w.data.sg_list[0].length = 8;
			w.wr.atomic.remote_addr = hon.info.canary_addr;
			w.wr.atomic.compare_add = 1;
			w.wr.atomic.rkey = hon.info.rkey;
			break;
		default:
			w.wr.rdma.remote_addr = (uintptr_t)r.data.addr + RAW_SEG - 32;
			break;
		}
		cr_assert_eq(uroce_shm_ring_enqueue_burst(&q.sq, &w, 1), 1);
		ring(&r, &q);
		/* Expect: one completion, this WQE's, with the status IBA and
		 * verbs give that mistake; the honest pair goes on. */
		c = raw_cqe(&r, 10);
		cr_expect_eq(c.wr_id, 0xBAD0 + i, "%s: completion for wr %#llx", cases[i].what,
			     (unsigned long long)c.wr_id);
		cr_expect_eq(c.status, cases[i].status, "%s: status %u (%s), want %u",
			     cases[i].what, c.status, uroce_wc_status_str(c.status),
			     cases[i].status);
		cr_expect_eq(c.qp_num, q.qpn, "%s: on QP %u", cases[i].what, c.qp_num);
		raw_qp_destroy(&r, &q);
		raw_qp_destroy(&r, &qb);
		raw_drain_cq(&r);
	}
	/* Receive WQEs that cannot be used: reserved bits, too many SGEs. */
	{
		struct uroce_shm_recv_wqe rw;
		struct uroce_shm_cqe c;
		struct rawqp q;

		raw_qp(&r, &q);
		memset(&rw, 0, sizeof(rw));
		rw.wr_id = 0xBEEF;
		rw.num_sge = 9;
		cr_assert_eq(uroce_shm_ring_enqueue_burst(&q.rq, &rw, 1), 1);
		ring(&r, &q);
		c = raw_cqe(&r, 10);
		cr_expect_eq(c.wr_id, 0xBEEF);
		cr_expect_eq(c.status, UROCE_WC_LOC_QP_OP_ERR, "receive WQE with 9 SGEs: %u",
			     c.status);
		raw_qp_destroy(&r, &q);
		raw_drain_cq(&r);
	}
	serve(&hon, 0.5);
	raw_close(&r);
	finish_common(40);
}

Test(hostile_client, ring_indexes_lies_and_doorbell_floods, .timeout = 120)
{
	struct uroce_daemon_stats st0, st;
	struct raw r;
	struct rawqp q;
	struct uroce_shm_send_wqe w[16];
	int i;
	pid_t flood;

	setup_common();
	raw_open(&r);
	uroce_daemon_stats(dmn, &st0);
	/* Expect: a producer index exactly one ring ahead is a full ring: 16
	 * WQEs (garbage where never written) are copied out and checked one by
	 * one; the QP ends in ERR with completions for them. */
	raw_qp(&r, &q);
	q.sq.hdr->prod += 16;
	ring(&r, &q);
	serve(&hon, 0.3);
	raw_drain_cq(&r);
	raw_qp_destroy(&r, &q);
	/* Expect: far ahead, behind and 2^31 away: the ring is corrupt, counted,
	 * never followed; only this QP suffers. */
	for (i = 0; i < 3; i++) {
		static const uint32_t jump[3] = {100000, (uint32_t)-5, 0x80000000u};

		raw_qp(&r, &q);
		wqe_write(&r, &w[0], 1, 8);
		cr_assert_eq(uroce_shm_ring_enqueue_burst(&q.sq, w, 1), 1);
		q.sq.hdr->prod += jump[i];
		ring(&r, &q);
		/* The same on the receive ring. */
		q.rq.hdr->prod += jump[i];
		ring(&r, &q);
		serve(&hon, 0.2);
		raw_drain_cq(&r);
		raw_qp_destroy(&r, &q);
	}
	uroce_daemon_stats(dmn, &st);
	cr_expect_geq(st.ring_corrupt - st0.ring_corrupt, 3, "ring_corrupt %llu -> %llu",
		      (unsigned long long)st0.ring_corrupt, (unsigned long long)st.ring_corrupt);
	/* Expect: a CQ consumer index that lies, and arm words of every kind,
	 * affect only this client's CQ. */
	raw_qp(&r, &q);
	r.cq.hdr->cons += 1000;
	r.cq.hdr->cq_arm = ~0ull;
	for (i = 0; i < 16; i++)
		wqe_write(&r, &w[i], 100 + i, 8);
	cr_assert_eq(uroce_shm_ring_enqueue_burst(&q.sq, w, 16), 16);
	ring(&r, &q);
	serve(&hon, 0.3);
	r.cq.hdr->cons -= 1000;
	r.cq.hdr->cq_arm = 0x0000012300000005ull;
	serve(&hon, 0.2);
	raw_qp_destroy(&r, &q);
	/* Expect: a child that sets every doorbell bit, summary and words, as
	 * fast as it can for 2 s does not starve the honest pair. */
	flood = fork();
	cr_assert(flood >= 0);
	if (flood == 0) {
		struct uroce_shm_db_block *db = r.db.addr;
		double end;
		unsigned int k;

		attacker_init();
		end = dt_now_s() + 2;
		while (dt_now_s() < end) {
			db->summary = ~0ull;
			for (k = 0; k < UROCE_SHM_DB_WORDS; k++)
				db->words[k] = ~0ull;
			for (k = 0; k < UROCE_SHM_DB_SLOTS; k += 7)
				uroce_shm_db_ring(db, k);
		}
		_exit(0);
	}
	{
		double end = dt_now_s() + 3;
		int status = -1;
		pid_t got = 0;

		while ((got = waitpid(flood, &status, WNOHANG)) != flood && dt_now_s() < end)
			serve(&hon, 0.05);
		if (got != flood) {
			kill(flood, SIGKILL);
			waitpid(flood, &status, 0);
		}
		cr_expect(got == flood && WIFEXITED(status) && WEXITSTATUS(status) == 0,
			  "flood child: %#x", status);
	}
	raw_close(&r);
	finish_common(40);
}

Test(hostile_client, other_clients_handles_are_refused, .timeout = 120)
{
	struct uroce_shm_msg_handle h;
	struct uroce_shm_msg_query_qp_req qq;
	struct uroce_shm_msg_query_qp_resp qr;
	struct uroce_shm_msg_reg_mr_req mq;
	struct uroce_shm_msg_reg_mr_resp mr;
	struct uroce_shm_msg_create_qp_req cq;
	struct uroce_shm_msg_create_qp_resp cr;
	struct raw r;
	int rc;

	setup_common();
	raw_open(&r);
	/* Expect: the honest client's handles are another session's: -EPERM
	 * (never -ENOENT, never success), whatever the message. */
	h = (struct uroce_shm_msg_handle){.handle = hon.info.qp_handle};
	cr_expect_eq(raw_rpc(&r, UROCE_SHM_MSG_DESTROY_QP, &h, sizeof(h), -1, NULL, 0, NULL),
		     -EPERM);
	cr_expect_eq(raw_modify(&r, hon.info.qp_handle, UROCE_QPS_ERR, 0), -EPERM);
	memset(&qq, 0, sizeof(qq));
	qq.qp_handle = hon.info.qp_handle;
	cr_expect_eq(raw_rpc(&r, UROCE_SHM_MSG_QUERY_QP, &qq, sizeof(qq), -1, &qr, sizeof(qr),
			     NULL), -EPERM);
	h.handle = hon.info.mr_handle;
	cr_expect_eq(raw_rpc(&r, UROCE_SHM_MSG_DEREG_MR, &h, sizeof(h), -1, NULL, 0, NULL), -EPERM);
	/* ... and so is re-registering it (REREG_MR, ABI 1.5). */
	{
		struct uroce_shm_msg_rereg_mr_req rq = {.mr_handle = hon.info.mr_handle,
							.flags = UROCE_SHM_REREG_ACCESS};
		struct uroce_shm_msg_reg_mr_resp rr;

		cr_expect_eq(raw_rpc(&r, UROCE_SHM_MSG_REREG_MR, &rq, sizeof(rq), -1, &rr,
				     sizeof(rr), NULL), -EPERM);
	}
	h.handle = hon.info.pd_handle;
	cr_expect_eq(raw_rpc(&r, UROCE_SHM_MSG_DEALLOC_PD, &h, sizeof(h), -1, NULL, 0, NULL),
		     -EPERM);
	/* Expect: an MR or a QP on the honest client's PD is refused. */
	memset(&mq, 0, sizeof(mq));
	mq.pd_handle = hon.info.pd_handle;
	mq.seg_handle = r.seg;
	mq.length = 4096;
	mq.iova = (uintptr_t)r.data.addr;
	mq.access = ALL_ACCESS;
	cr_expect_eq(raw_rpc(&r, UROCE_SHM_MSG_REG_MR, &mq, sizeof(mq), -1, &mr, sizeof(mr), NULL),
		     -EPERM);
	memset(&cq, 0, sizeof(cq));
	cq.pd_handle = hon.info.pd_handle;
	cq.send_cq = r.cqh;
	cq.recv_cq = r.cqh;
	cq.srq_handle = UROCE_SHM_HANDLE_NONE;
	cq.qp_type = UROCE_QPT_RC;
	cq.cap.max_send_wr = 4;
	cq.cap.max_recv_wr = 4;
	rc = raw_rpc(&r, UROCE_SHM_MSG_CREATE_QP, &cq, sizeof(cq), -1, &cr, sizeof(cr), NULL);
	cr_expect_eq(rc, -EPERM, "CREATE_QP on another client's PD: %d", rc);
	/* Expect: handles of its own session, of the wrong type or never
	 * issued, are -ENOENT (or -EPERM), never another object's. */
	h.handle = r.mr; /* an MR handle used as a QP handle */
	rc = raw_rpc(&r, UROCE_SHM_MSG_DESTROY_QP, &h, sizeof(h), -1, NULL, 0, NULL);
	cr_expect(rc == -ENOENT || rc == -EPERM, "DESTROY_QP of an MR handle: %d", rc);
	h.handle = (r.mr & 0xffff0000u) | 0xffff;
	rc = raw_rpc(&r, UROCE_SHM_MSG_DEREG_MR, &h, sizeof(h), -1, NULL, 0, NULL);
	cr_expect(rc == -ENOENT || rc == -EPERM, "DEREG_MR of a handle never issued: %d", rc);
	/* And the honest QP is still in RTS, its own. */
	serve(&hon, 0.5);
	raw_close(&r);
	finish_common(40);
}

/* Send raw bytes as one message on a fresh connection (with up to two
 * descriptors); @return true if the daemon hung up or answered with an error,
 * false if it took the message as valid. */
static bool
garbage_is_refused(const void *msg, size_t len, int fd1, int fd2)
{
	uint8_t cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = {(void *)msg, len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	uint8_t buf[UROCE_SHM_MSG_MAX];
	const struct uroce_shm_msg_hdr *h = (const void *)buf;
	double end = dt_now_s() + 5;
	int s = dt_connect(sock_path), fd = -1, nfd = (fd1 >= 0) + (fd2 >= 0);
	bool refused = false;
	ssize_t n;

	cr_assert_geq(s, 0);
	fcntl(s, F_SETFL, O_NONBLOCK);
	if (nfd > 0) {
		struct cmsghdr *c;
		int fds[2] = {fd1, fd2};

		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(nfd * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfd * sizeof(int));
		memcpy(CMSG_DATA(c), fd1 >= 0 ? fds : fds + 1, nfd * sizeof(int));
	}
	if (sendmsg(s, &mh, MSG_NOSIGNAL) < 0) {
		close(s);
		return true;
	}
	while (dt_now_s() < end) {
		pump();
		n = uroce_shm_sock_recv(s, buf, sizeof(buf), &fd);
		if (fd >= 0)
			close(fd);
		if (n == 0 || (n < 0 && n != -EAGAIN)) {
			refused = true; /* hung up */
			break;
		}
		if (n > 0) {
			refused = uroce_shm_msg_validate(buf, (size_t)n, true, false) == 0 &&
				  h->status < 0;
			break;
		}
	}
	close(s);
	return refused;
}

Test(hostile_client, garbage_and_truncated_control_messages, .timeout = 120)
{
	uint8_t m[UROCE_SHM_MSG_MAX + 64];
	struct uroce_shm_msg_hdr *h = (void *)m;
	struct uroce_daemon_stats st0, st;
	struct uroce_shm_segment seg;
	int i, p[2], efd, len;

	setup_common();
	uroce_daemon_stats(dmn, &st0);
	/* Expect: random bytes of every length up to and beyond the largest
	 * message are refused (hang-up or an error answer). */
	srand(9);
	for (i = 0; i < 64; i++) {
		size_t n = 1 + (size_t)rand() % sizeof(m), k;

		for (k = 0; k < n; k++)
			m[k] = (uint8_t)rand();
		if (i % 2 == 0 && n >= 8)
			h->magic = UROCE_SHM_MSG_MAGIC; /* garbage behind a good magic */
		cr_expect(garbage_is_refused(m, n, -1, -1), "garbage message %d of %zu bytes", i,
			  n);
	}
	/* A header cut short, a body cut short, a length that lies. */
	len = uroce_shm_msg_init(m, sizeof(m), UROCE_SHM_MSG_ALLOC_PD, 1, false, 0);
	cr_expect(garbage_is_refused(m, 10, -1, -1), "header of 10 bytes");
	len = uroce_shm_msg_init(m, sizeof(m), UROCE_SHM_MSG_REG_MR, 1, false, 0);
	cr_expect(garbage_is_refused(m, (size_t)len - 4, -1, -1), "REG_MR body cut by 4");
	h->length = 10000;
	cr_expect(garbage_is_refused(m, (size_t)len, -1, -1), "length field 10000");
	h->length = (uint32_t)len;
	h->reserved = 7;
	cr_expect(garbage_is_refused(m, (size_t)len, -1, -1), "reserved header bits");
	/* A valid request before HELLO. */
	len = uroce_shm_msg_init(m, sizeof(m), UROCE_SHM_MSG_ALLOC_PD, 1, false, 0);
	cr_expect(garbage_is_refused(m, (size_t)len, -1, -1), "ALLOC_PD before HELLO");
	/* Descriptors: on a message that takes none, two at once, and an
	 * ALLOC_SEGMENT with an unsealed memfd or a pipe. */
	cr_assert(pipe2(p, O_CLOEXEC) == 0);
	efd = eventfd(0, EFD_CLOEXEC);
	cr_expect(garbage_is_refused(m, (size_t)len, p[0], -1), "descriptor on ALLOC_PD");
	cr_expect(garbage_is_refused(m, (size_t)len, p[0], efd), "two descriptors");
	cr_assert_eq(uroce_shm_segment_create(&seg, "hostile", 4096, 0), 0);
	len = uroce_shm_msg_init(m, sizeof(m), UROCE_SHM_MSG_ALLOC_SEGMENT, 1, false, 0);
	cr_expect(garbage_is_refused(m, (size_t)len, seg.fd, efd), "segment and an eventfd");
	close(p[0]);
	close(p[1]);
	close(efd);
	uroce_shm_segment_unmap(&seg);
	/* A HELLO, then lies within the session: the session stays for the
	 * answers it can give, a framing error hangs it up. */
	{
		struct raw r;
		struct uroce_shm_msg_alloc_segment_req sq;
		int fd;

		raw_open(&r);
		/* An unsealed memfd as a segment: -EPERM. */
		fd = memfd_create("unsealed", MFD_CLOEXEC);
		cr_assert(fd >= 0 && ftruncate(fd, 4096) == 0);
		memset(&sq, 0, sizeof(sq));
		sq.size = 4096;
		cr_expect_eq(raw_rpc(&r, UROCE_SHM_MSG_ALLOC_SEGMENT, &sq, sizeof(sq), fd, NULL, 0,
				     NULL), -EPERM);
		close(fd);
		/* A sealed segment smaller than it claims: refused. */
		cr_assert_eq(uroce_shm_segment_create(&seg, "small", 4096, 0), 0);
		sq.size = 1 << 20;
		cr_expect_neq(raw_rpc(&r, UROCE_SHM_MSG_ALLOC_SEGMENT, &sq, sizeof(sq), seg.fd,
				      NULL, 0, NULL), 0);
		uroce_shm_segment_unmap(&seg);
		/* A second HELLO. */
		{
			struct uroce_shm_msg_hello_req hq = {.abi_major = UROCE_SHM_ABI_MAJOR};
			struct uroce_shm_msg_hello_resp hr;
			int rc = raw_rpc(&r, UROCE_SHM_MSG_HELLO, &hq, sizeof(hq), -1, &hr,
					 sizeof(hr), &fd);

			if (fd >= 0)
				close(fd);
			cr_expect(rc != 0, "a second HELLO is refused (%d)", rc);
		}
		raw_close(&r);
	}
	uroce_daemon_stats(dmn, &st);
	cr_expect_gt(st.bad_msgs, st0.bad_msgs, "bad_msgs moved");
	serve(&hon, 0.5);
	finish_common(40);
}

Test(hostile_client, sigkill_mid_post_is_reclaimed, .timeout = 180)
{
	struct uroce_daemon_stats st0, st;
	int round;

	setup_common();
	uroce_daemon_stats(dmn, &st0);
	/* Expect: a client killed at random points of a posting loop (mid WQE,
	 * mid doorbell, with work in flight) is reaped with everything it had,
	 * twenty times over, while the honest pair goes on. */
	for (round = 0; round < 20; round++) {
		int go[2];
		pid_t pid;
		char c;

		cr_assert(pipe(go) == 0);
		pid = fork();
		cr_assert(pid >= 0);
		if (pid == 0) {
			struct raw r;
			struct rawqp q;
			struct uroce_shm_send_wqe w;
			uint64_t n = 0;

			attacker_init();
			close(go[0]);
			raw_open(&r);
			raw_qp(&r, &q);
			if (write(go[1], "R", 1) != 1)
				_exit(2);
			for (;;) {
				wqe_write(&r, &w, n, 4096 + (uint32_t)(n % 8) * 1024);
				n++;
				if (uroce_shm_ring_enqueue_burst(&q.sq, &w, 1) == 1)
					ring(&r, &q);
				while (uroce_shm_ring_cons_peek(&r.cq, 1) == 1)
					uroce_shm_ring_cons_release(&r.cq, 1);
			}
		}
		close(go[1]);
		fcntl(go[0], F_SETFL, O_NONBLOCK);
		while (read(go[0], &c, 1) != 1)
			pump();
		close(go[0]);
		serve(&hon, 0.01 + 0.01 * (round % 7));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	serve(&hon, 0.5);
	uroce_daemon_stats(dmn, &st);
	cr_expect_geq(st.sessions_reaped - st0.sessions_reaped, 20, "reaped %llu",
		      (unsigned long long)(st.sessions_reaped - st0.sessions_reaped));
	cr_expect_eq(st.sessions, 1, "only the honest client is left (%u sessions)", st.sessions);
	finish_common(40);
}

Test(hostile_client, wqe_rewritten_after_the_doorbell, .timeout = 120)
{
	int go[2];
	pid_t pid;
	char c;
	int status;

	setup_common();
	/* Expect: a child that posts a valid WRITE to itself, rings, then keeps
	 * rewriting the WQE's keys, addresses and lengths (to the honest
	 * client's canary, to wrapping values) never gets a byte of the honest
	 * client's memory changed: the daemon checks and uses its own copy. */
	cr_assert(pipe(go) == 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		struct raw r;
		struct rawqp q;
		struct uroce_shm_send_wqe w;
		double end;
		uint64_t n = 0;

		attacker_init();
		close(go[0]);
		raw_open(&r);
		raw_qp(&r, &q);
		if (write(go[1], "R", 1) != 1)
			_exit(2);
		end = dt_now_s() + 2;
		while (dt_now_s() < end) {
			volatile struct uroce_shm_send_wqe *slot;

			wqe_write(&r, &w, n++, 2048);
			if (uroce_shm_ring_prod_reserve(&q.sq, 1) != 1) {
				/* Full: the QP went to ERR; start over with a new one. */
				struct uroce_shm_msg_handle h = {.handle = q.handle};

				(void)raw_rpc(&r, UROCE_SHM_MSG_DESTROY_QP, &h, sizeof(h), -1,
					      NULL, 0, NULL);
				uroce_shm_segment_unmap(&q.seg);
				raw_qp(&r, &q);
				continue;
			}
			slot = uroce_shm_ring_prod_slot(&q.sq, 0);
			memcpy((void *)slot, &w, sizeof(w));
			uroce_shm_ring_prod_commit(&q.sq, 1);
			ring(&r, &q);
			for (int k = 0; k < 64; k++) {
				slot->wr.rdma.remote_addr = k & 1 ? hon.info.canary_addr
								  : (uintptr_t)r.data.addr;
				slot->wr.rdma.rkey = k & 2 ? hon.info.rkey : r.rkey;
				slot->data.sg_list[0].lkey = k & 4 ? hon.info.lkey : r.lkey;
				slot->data.sg_list[0].length = k & 8 ? 0xFFFFFFF0u : 2048;
				slot->data.sg_list[0].addr = k & 16 ? hon.info.canary_addr
								    : (uintptr_t)r.data.addr;
			}
			while (uroce_shm_ring_cons_peek(&r.cq, 1) == 1)
				uroce_shm_ring_cons_release(&r.cq, 1);
		}
		_exit(0);
	}
	close(go[1]);
	fcntl(go[0], F_SETFL, O_NONBLOCK);
	while (read(go[0], &c, 1) != 1)
		pump();
	close(go[0]);
	while (waitpid(pid, &status, WNOHANG) != pid)
		serve(&hon, 0.05);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "rewriting child: %#x", status);
	finish_common(40);
}
