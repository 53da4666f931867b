/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The daemon's connection manager (lib/daemon/gsi.c, cmctl.c) between two
 * daemon cores on the simulated wire (test/common/simwire_daemon.c): QP1 on
 * each, CM MADs across the wire, the CM_* requests of ABI 1.4 from liburoce
 * contexts (uroce_ctl_call(), as drivers/rdmacm sends them), CM_EVENTs read
 * from event channels, and RC and UD QPs brought up with the attributes the
 * daemon hands out, then used: data must flow.
 *
 * A poll thread drives both daemons and the wire; the test thread is both
 * clients. The CM's timing is shortened through uroce_daemon_conf (response
 * timeout 12, packet life 10: a REQ is resent every 24 ms) so that losses
 * and a silent peer resolve in well under a second.
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uroce_cm.h"
#include "uroce_daemon.h"
#include "uroce_shm.h"
#include "uroce_verbs.h"

#include "daemon_test_util.h"
#include "simwire_daemon.h"

#define PS_TCP 0x0106
#define PS_UDP 0x0111
#define EV_ADDR_RESOLVED 0
#define EV_ROUTE_RESOLVED 2
#define EV_CONNECT_REQUEST 4
#define EV_CONNECT_RESPONSE 5
#define EV_UNREACHABLE 7
#define EV_REJECTED 8
#define EV_ESTABLISHED 9
#define EV_DISCONNECTED 10
#define EV_TIMEWAIT_EXIT 15

static const uint8_t gid_of[3][16] = {
	{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 1},
	{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2},
	{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 9}, /* nobody */
};

/* ------------------------------------------------------------------------ */
/* Two daemons on the wire, polled by a thread                               */
/* ------------------------------------------------------------------------ */

static struct {
	char dir[64];
	char sock[2][108];
	struct uroce_daemon *d[2];
	struct simwire_daemon *w;
	pthread_t thread;
	pthread_mutex_t lock;
	volatile int stop;
} T;

static void *
poll_main(void *arg)
{
	(void)arg;
	while (!T.stop) {
		unsigned int work;

		pthread_mutex_lock(&T.lock);
		work = simwire_daemon_step(T.w);
		pthread_mutex_unlock(&T.lock);
		if (work == 0)
			dt_nap_us(50);
	}
	return NULL;
}

static void
wire_start(uint32_t drop_ppm, uint32_t dup_ppm)
{
	struct simwire_daemon_conf wc = {.seed = 7, .drop_ppm = drop_ppm, .dup_ppm = dup_ppm};
	int i;

	snprintf(T.dir, sizeof(T.dir), "/tmp/uroce-cm-XXXXXX");
	cr_assert_not_null(mkdtemp(T.dir));
	T.w = simwire_daemon_create(&wc);
	cr_assert_not_null(T.w);
	for (i = 0; i < 2; i++) {
		struct uroce_daemon_conf conf;

		snprintf(T.sock[i], sizeof(T.sock[i]), "%s/%c.sock", T.dir, 'a' + i);
		memset(&conf, 0, sizeof(conf));
		conf.sock_path = T.sock[i];
		conf.sock_mode = 0600;
		conf.n_gid = 1;
		memcpy(conf.gids[0], gid_of[i], 16);
		conf.active_mtu = UROCE_MTU_1024;
		conf.n_workers = dt_workers();
		conf.port_ops = simwire_daemon_port_ops();
		conf.port_ctx = simwire_daemon_port_ctx(T.w, i);
		conf.cm_response_timeout = 12;
		conf.cm_packet_life_time = 10;
		T.d[i] = uroce_daemon_create(&conf);
		cr_assert_not_null(T.d[i], "daemon %d: %s", i, strerror(errno));
		cr_assert_eq(simwire_daemon_attach(T.w, i, T.d[i], gid_of[i]), 0);
	}
	pthread_mutex_init(&T.lock, NULL);
	T.stop = 0;
	cr_assert_eq(pthread_create(&T.thread, NULL, poll_main, NULL), 0);
}

static void
wire_stop(void)
{
	T.stop = 1;
	pthread_join(T.thread, NULL);
	uroce_daemon_destroy(T.d[0]);
	uroce_daemon_destroy(T.d[1]);
	simwire_daemon_destroy(T.w);
	pthread_mutex_destroy(&T.lock);
	rmdir(T.dir);
}

/* A CM counter of daemon @p i by name. */
static uint64_t
cm_counter(int i, const char *name)
{
	uint64_t v[128];
	unsigned int n, k;

	pthread_mutex_lock(&T.lock);
	n = uroce_daemon_cm_counters(T.d[i], v, 128);
	pthread_mutex_unlock(&T.lock);
	for (k = 0; k < n && k < 128; k++)
		if (strcmp(uroce_daemon_cm_counter_name(k), name) == 0)
			return v[k];
	cr_assert_fail("no CM counter %s", name);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* A client: a context, an event channel, the CM requests                   */
/* ------------------------------------------------------------------------ */

struct cli {
	struct uroce_context *ctx;
	int chan_fd;
	uint32_t chan;
	struct uroce_pd *pd;
	struct uroce_cq *cq;
	uint8_t *buf;
	struct uroce_mr *mr;
};

struct ev {
	struct uroce_shm_msg_cm_event e;
};

static void
cli_open(struct cli *c, int side)
{
	struct uroce_shm_msg_cm_channel_open_req q = {0};
	struct uroce_shm_msg_handle h;
	int sv[2];

	memset(c, 0, sizeof(*c));
	c->ctx = uroce_open_device(T.sock[side]);
	cr_assert_not_null(c->ctx, "open %s: %s", T.sock[side], strerror(errno));
	cr_assert_geq(uroce_daemon_abi_minor(c->ctx), 4); /* rdma_cm came with 1.4 */
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	cr_assert_eq(uroce_ctl_call(c->ctx, UROCE_SHM_MSG_CM_CHANNEL_OPEN, &q, sizeof(q), sv[1],
				    &h, sizeof(h), NULL), 0);
	close(sv[1]);
	c->chan_fd = sv[0];
	c->chan = h.handle;
	c->pd = uroce_alloc_pd(c->ctx);
	c->cq = uroce_create_cq(c->ctx, 64, NULL);
	c->buf = uroce_alloc_buf(c->ctx, 65536);
	cr_assert(c->pd && c->cq && c->buf);
	c->mr = uroce_reg_mr(c->pd, c->buf, 65536, UROCE_ACCESS_LOCAL_WRITE |
				    UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ);
	cr_assert_not_null(c->mr);
}

static void
cli_close(struct cli *c)
{
	close(c->chan_fd);
	uroce_close_device(c->ctx);
}

static uint32_t
create_id(struct cli *c, uint16_t ps, uint8_t qpt)
{
	struct uroce_shm_msg_cm_create_id_req q = {.channel = c->chan, .ps = ps, .qp_type = qpt};
	struct uroce_shm_msg_handle h;

	cr_assert_eq(uroce_ctl_call(c->ctx, UROCE_SHM_MSG_CM_CREATE_ID, &q, sizeof(q), -1, &h,
				    sizeof(h), NULL), 0);
	return h.handle;
}

static int
addr_call(struct cli *c, uint16_t type, uint32_t id, uint32_t arg, const uint8_t *ip, uint16_t port,
	  struct uroce_shm_msg_cm_route_resp *r)
{
	struct uroce_shm_msg_cm_addr_req q;
	struct uroce_shm_msg_cm_route_resp tmp;
	struct uroce_shm_cm_addr *a;

	memset(&q, 0, sizeof(q));
	q.id = id;
	q.arg = arg;
	a = type == UROCE_SHM_MSG_CM_RESOLVE_ADDR ? &q.dst : &q.src;
	if (ip != NULL) {
		a->family = 4;
		a->port = port;
		memcpy(a->ip, ip, 16);
	}
	return uroce_ctl_call(c->ctx, type, &q, sizeof(q), -1, r != NULL ? r : &tmp, sizeof(tmp),
			      NULL);
}

static int
simple_call(struct cli *c, uint16_t type, uint32_t id)
{
	struct uroce_shm_msg_handle h = {.handle = id};

	return uroce_ctl_call(c->ctx, type, &h, sizeof(h), -1, NULL, 0, NULL);
}

static int
conn_call(struct cli *c, uint16_t type, uint32_t id, uint32_t qpn, const void *pd, uint8_t len)
{
	struct uroce_shm_msg_cm_conn_req q;

	memset(&q, 0, sizeof(q));
	q.id = id;
	q.param.qp_num = qpn;
	q.param.responder_resources = 1;
	q.param.initiator_depth = 1;
	q.param.retry_count = 7;
	q.param.rnr_retry_count = 7;
	q.param.private_data_len = len;
	if (len > 0)
		memcpy(q.param.private_data, pd, len);
	return uroce_ctl_call(c->ctx, type, &q, sizeof(q), -1, NULL, 0, NULL);
}

/* The next event on @p c's channel (up to 10 s). */
static struct uroce_shm_msg_cm_event
ev_next(struct cli *c)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	const struct uroce_shm_msg_hdr *h = (const void *)buf;
	struct uroce_shm_msg_cm_event e;
	struct pollfd p = {.fd = c->chan_fd, .events = POLLIN};
	ssize_t n;
	int fd = -1;

	cr_assert_eq(poll(&p, 1, 10000), 1, "no event within 10 s");
	n = uroce_shm_sock_recv(c->chan_fd, buf, sizeof(buf), &fd);
	cr_assert_gt(n, 0, "channel: %zd", n);
	cr_assert_eq(fd, -1);
	cr_assert_eq(uroce_shm_msg_validate(buf, (size_t)n, true, false), 0);
	cr_assert_eq(h->type, UROCE_SHM_MSG_CM_EVENT);
	cr_assert_eq(h->seq, 0);
	memcpy(&e, buf + sizeof(*h), sizeof(e));
	return e;
}

static struct uroce_shm_msg_cm_event
ev_expect(struct cli *c, int type, uint32_t id)
{
	struct uroce_shm_msg_cm_event e = ev_next(c);

	cr_assert_eq(e.event, type, "event %d, expected %d (status %d)", e.event, type, e.status);
	if (id != UROCE_SHM_HANDLE_NONE)
		cr_assert_eq(e.id, id);
	return e;
}

static bool
ev_none(struct cli *c, int ms)
{
	struct pollfd p = {.fd = c->chan_fd, .events = POLLIN};

	return poll(&p, 1, ms) == 0;
}

/* Move @p qp through @p state with the daemon's attributes for @p id. */
static void
qp_move(struct cli *c, struct uroce_qp *qp, uint32_t id, uint32_t state)
{
	struct uroce_shm_msg_cm_qp_attr_req q = {.id = id, .qp_state = state};
	struct uroce_shm_msg_cm_qp_attr_resp r;
	struct uroce_qp_attr a;

	cr_assert_eq(uroce_ctl_call(c->ctx, UROCE_SHM_MSG_CM_INIT_QP_ATTR, &q, sizeof(q), -1, &r,
				    sizeof(r), NULL), 0, "init_qp_attr %u", state);
	memset(&a, 0, sizeof(a));
	a.qp_state = r.qp_state;
	a.qp_access_flags = r.qp_access_flags;
	a.qkey = r.qkey;
	a.pkey_index = r.pkey_index;
	a.port_num = r.port_num;
	a.path_mtu = r.path_mtu;
	a.dest_qp_num = r.dest_qp_num;
	a.rq_psn = r.rq_psn;
	a.sq_psn = r.sq_psn;
	a.max_dest_rd_atomic = r.max_dest_rd_atomic;
	a.max_rd_atomic = r.max_rd_atomic;
	a.min_rnr_timer = r.min_rnr_timer;
	a.timeout = r.timeout;
	a.retry_cnt = r.retry_cnt;
	a.rnr_retry = r.rnr_retry;
	memcpy(a.ah_attr.dgid, r.dgid, 16);
	a.ah_attr.flow_label = r.flow_label;
	a.ah_attr.hop_limit = r.hop_limit;
	a.ah_attr.traffic_class = r.traffic_class;
	a.ah_attr.sgid_index = r.sgid_index;
	a.ah_attr.port_num = 1;
	cr_assert_eq(uroce_modify_qp(qp, &a, (int)r.mask), 0, "modify to %u", state);
}

static struct uroce_qp *
rc_qp(struct cli *c, int type)
{
	struct uroce_qp_init_attr ia;
	struct uroce_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = c->cq;
	ia.recv_cq = c->cq;
	ia.qp_type = type;
	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = 16;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = uroce_create_qp(c->pd, &ia);
	cr_assert_not_null(qp, "create_qp: %s", strerror(errno));
	return qp;
}

static void
post_recv(struct cli *c, struct uroce_qp *qp, uint32_t off, uint32_t len)
{
	struct uroce_sge sge = {(uintptr_t)c->buf + off, len, c->mr->lkey};
	struct uroce_recv_wr wr = {.wr_id = off, .sg_list = &sge, .num_sge = 1};
	struct uroce_recv_wr *bad;

	cr_assert_eq(uroce_post_recv(qp, &wr, &bad), 0);
}

static struct uroce_wc
wait_wc(struct cli *c)
{
	struct uroce_wc wc;
	double end = dt_now_s() + 10;

	while (dt_now_s() < end) {
		int n = uroce_poll_cq(c->cq, 1, &wc);

		cr_assert_geq(n, 0);
		if (n == 1)
			return wc;
		dt_nap_us(100);
	}
	cr_assert_fail("no completion within 10 s");
	return wc;
}

/* What the passive side hands the active one in its REP's private data. */
struct mrinfo {
	uint64_t va;
	uint32_t rkey;
	uint32_t pad;
};

/* ------------------------------------------------------------------------ */

/*
 * The whole RC life: listen, resolve, route, connect, request, accept,
 * response, establish, SEND and RDMA WRITE/READ both ways, disconnect
 * from the active side, time wait; then the sessions go and nothing is
 * left in either daemon.
 */
static void
rc_life(void)
{
	static const uint8_t b_ip[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2};
	struct uroce_shm_msg_cm_route_resp route;
	struct uroce_shm_msg_cm_event e;
	struct cli A, B;
	struct uroce_qp *qa, *qb;
	struct mrinfo mi;
	struct uroce_wc wc;
	uint32_t la, ca, cb;

	cli_open(&A, 0);
	cli_open(&B, 1);
	/* B listens on its address, port 7174 (rping's). */
	la = create_id(&B, PS_TCP, UROCE_QPT_RC);
	cr_assert_eq(addr_call(&B, UROCE_SHM_MSG_CM_BIND, la, 0, b_ip, 7174, &route), 0);
	cr_expect_eq(route.route.src.port, 7174);
	cr_expect(route.route.flags & UROCE_SHM_CM_ROUTE_F_BOUND);
	cr_assert_eq(addr_call(&B, UROCE_SHM_MSG_CM_LISTEN, la, 8, NULL, 0, NULL), 0);
	/* A resolves B and the route: both events, with the route. */
	ca = create_id(&A, PS_TCP, UROCE_QPT_RC);
	cr_assert_eq(addr_call(&A, UROCE_SHM_MSG_CM_RESOLVE_ADDR, ca, 2000, b_ip, 7174, &route), 0);
	cr_expect_arr_eq(route.route.dgid, gid_of[1], 16);
	cr_expect_arr_eq(route.route.sgid, gid_of[0], 16);
	cr_expect_neq(route.node_guid, 0);
	ev_expect(&A, EV_ADDR_RESOLVED, ca);
	cr_assert_eq(addr_call(&A, UROCE_SHM_MSG_CM_RESOLVE_ROUTE, ca, 2000, NULL, 0, NULL), 0);
	e = ev_expect(&A, EV_ROUTE_RESOLVED, ca);
	cr_expect(e.route.flags & UROCE_SHM_CM_ROUTE_F_PATH);
	cr_expect_eq(e.route.mtu, UROCE_MTU_1024);
	/* A's QP in INIT from the daemon's attributes (no remote access yet). */
	qa = rc_qp(&A, UROCE_QPT_RC);
	qp_move(&A, qa, ca, UROCE_QPS_INIT);
	cr_assert_eq(conn_call(&A, UROCE_SHM_MSG_CM_CONNECT, ca, qa->qp_num, "hello", 5), 0);
	/* B: a request on a new id, A's QPN and private data, A's endpoints. */
	e = ev_expect(&B, EV_CONNECT_REQUEST, UROCE_SHM_HANDLE_NONE);
	cb = e.id;
	cr_expect_eq(e.listen_id, la);
	cr_expect_neq(cb, la);
	cr_expect_eq(e.param.qp_num, qa->qp_num);
	cr_expect_eq(e.param.private_data_len, 56);
	cr_expect_arr_eq(e.param.private_data, "hello", 5);
	cr_expect_arr_eq(e.route.dst.ip, gid_of[0], 16);
	cr_expect_eq(e.route.src.port, 7174);
	/* B brings its QP up and accepts, telling A its buffer. */
	qb = rc_qp(&B, UROCE_QPT_RC);
	qp_move(&B, qb, cb, UROCE_QPS_INIT);
	qp_move(&B, qb, cb, UROCE_QPS_RTR);
	qp_move(&B, qb, cb, UROCE_QPS_RTS);
	post_recv(&B, qb, 0, 1024);
	memset(B.buf + 8192, 0xB5, 4096);
	mi.va = (uintptr_t)B.buf;
	mi.rkey = B.mr->rkey;
	cr_assert_eq(conn_call(&B, UROCE_SHM_MSG_CM_ACCEPT, cb, qb->qp_num, &mi, sizeof(mi)), 0);
	/* A: the response with B's QPN and buffer; RTR, RTS, establish. */
	e = ev_expect(&A, EV_CONNECT_RESPONSE, ca);
	cr_expect_eq(e.param.qp_num, qb->qp_num);
	cr_expect_eq(e.param.private_data_len, 196);
	memcpy(&mi, e.param.private_data, sizeof(mi));
	cr_expect_eq(mi.rkey, B.mr->rkey);
	qp_move(&A, qa, ca, UROCE_QPS_RTR);
	qp_move(&A, qa, ca, UROCE_QPS_RTS);
	cr_assert_eq(simple_call(&A, UROCE_SHM_MSG_CM_ESTABLISH, ca), 0);
	ev_expect(&B, EV_ESTABLISHED, cb);
	/* Data: a SEND, an RDMA WRITE and an RDMA READ from A. */
	{
		struct uroce_sge sge = {(uintptr_t)A.buf, 100, A.mr->lkey};
		struct uroce_send_wr wr, *bad;

		memset(A.buf, 0xA1, 4096);
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 1;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = UROCE_WR_SEND;
		wr.send_flags = UROCE_SEND_SIGNALED;
		cr_assert_eq(uroce_post_send(qa, &wr, &bad), 0);
		wc = wait_wc(&A);
		cr_expect_eq(wc.status, UROCE_WC_SUCCESS, "send: %u", wc.status);
		wc = wait_wc(&B);
		cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
		cr_expect_eq(wc.byte_len, 100);
		cr_expect_eq(B.buf[99], 0xA1);
		sge.length = 4000;
		wr.opcode = UROCE_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = mi.va + 4096;
		wr.wr.rdma.rkey = mi.rkey;
		cr_assert_eq(uroce_post_send(qa, &wr, &bad), 0);
		wc = wait_wc(&A);
		cr_expect_eq(wc.status, UROCE_WC_SUCCESS, "write: %u", wc.status);
		cr_expect_eq(B.buf[4096 + 3999], 0xA1);
		sge.addr = (uintptr_t)A.buf + 16384;
		wr.opcode = UROCE_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = mi.va + 8192;
		cr_assert_eq(uroce_post_send(qa, &wr, &bad), 0);
		wc = wait_wc(&A);
		cr_expect_eq(wc.status, UROCE_WC_SUCCESS, "read: %u", wc.status);
		cr_expect_eq(A.buf[16384 + 3999], 0xB5);
	}
	/* A disconnects: B hears it, answers, A hears the DREP. */
	cr_assert_eq(simple_call(&A, UROCE_SHM_MSG_CM_DISCONNECT, ca), 0);
	ev_expect(&B, EV_DISCONNECTED, cb);
	cr_assert_eq(simple_call(&B, UROCE_SHM_MSG_CM_DISCONNECT, cb), 0);
	e = ev_expect(&A, EV_DISCONNECTED, ca);
	cr_expect_eq(e.status, 0);
	ev_expect(&A, EV_TIMEWAIT_EXIT, ca);
	ev_expect(&B, EV_TIMEWAIT_EXIT, cb);
	cr_expect_eq(simple_call(&A, UROCE_SHM_MSG_CM_DESTROY_ID, ca), 0);
	cr_expect_eq(simple_call(&A, UROCE_SHM_MSG_CM_DESTROY_ID, ca), -ENOENT, "stale handle");
	cr_expect_eq(simple_call(&B, UROCE_SHM_MSG_CM_DESTROY_ID, cb), 0);
	cr_expect_eq(simple_call(&B, UROCE_SHM_MSG_CM_DESTROY_ID, la), 0);
	uroce_destroy_qp(qa);
	uroce_destroy_qp(qb);
	cli_close(&A);
	cli_close(&B);
	cr_expect_eq(cm_counter(0, "cm_ids"), 0);
	cr_expect_eq(cm_counter(1, "cm_ids"), 0);
	cr_expect_eq(cm_counter(0, "cm_rdma_ids") + cm_counter(1, "cm_rdma_ids"), 0);
	cr_expect_geq(cm_counter(0, "cm_req_sent"), 1);
	cr_expect_geq(cm_counter(1, "cm_rep_sent"), 1);
	cr_expect_geq(cm_counter(0, "gsi_tx_mads"), 3, "REQ, RTU, DREQ");
	cr_expect_geq(cm_counter(1, "gsi_rx_mads"), 3);
	cr_expect_eq(cm_counter(0, "gsi_rx_bad") + cm_counter(1, "gsi_rx_bad"), 0);
}

Test(cm_wire, rc_connect_transfer_disconnect, .timeout = 60)
{
	wire_start(0, 0);
	rc_life();
	wire_stop();
}

/* 10 % of frames lost and 5 % duplicated: the CM's retries and duplicate
 * handling carry the same life through. */
Test(cm_wire, rc_over_a_lossy_wire, .timeout = 90)
{
	wire_start(100000, 50000);
	rc_life();
	cr_expect_gt(cm_counter(0, "cm_req_retries") + cm_counter(1, "cm_rep_retries") +
			     cm_counter(0, "cm_dreq_retries") + cm_counter(1, "cm_dup_req") +
			     cm_counter(0, "cm_dup_rep"),
		     0, "the losses cost retries or made duplicates");
	wire_stop();
}

Test(cm_wire, nobody_listening_is_rejected, .timeout = 60)
{
	static const uint8_t b_ip[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2};
	struct uroce_shm_msg_cm_event e;
	struct cli A;
	uint32_t ca;

	wire_start(0, 0);
	cli_open(&A, 0);
	ca = create_id(&A, PS_TCP, UROCE_QPT_RC);
	cr_assert_eq(addr_call(&A, UROCE_SHM_MSG_CM_RESOLVE_ADDR, ca, 2000, b_ip, 9999, NULL), 0);
	ev_expect(&A, EV_ADDR_RESOLVED, ca);
	addr_call(&A, UROCE_SHM_MSG_CM_RESOLVE_ROUTE, ca, 2000, NULL, 0, NULL);
	ev_expect(&A, EV_ROUTE_RESOLVED, ca);
	cr_assert_eq(conn_call(&A, UROCE_SHM_MSG_CM_CONNECT, ca, 0x123, NULL, 0), 0);
	e = ev_expect(&A, EV_REJECTED, ca);
	cr_expect_eq(e.status, UROCE_CM_REJ_INVALID_SERVICE_ID);
	cr_expect_eq(e.param.private_data_len, 148);
	cr_expect(ev_none(&A, 300), "nothing after the REJ (no retry, no UNREACHABLE)");
	cr_expect_eq(cm_counter(1, "cm_rej_no_listener"), 1);
	cli_close(&A);
	wire_stop();
}

/* A peer that never answers: the REQ is resent, then UNREACHABLE (-ETIMEDOUT). */
Test(cm_wire, silent_peer_unreachable, .timeout = 60)
{
	struct uroce_shm_msg_cm_event e;
	struct cli A;
	uint32_t ca;

	wire_start(0, 0);
	cli_open(&A, 0);
	ca = create_id(&A, PS_TCP, UROCE_QPT_RC);
	cr_assert_eq(addr_call(&A, UROCE_SHM_MSG_CM_RESOLVE_ADDR, ca, 2000, gid_of[2], 1, NULL),
		     0);
	ev_expect(&A, EV_ADDR_RESOLVED, ca);
	addr_call(&A, UROCE_SHM_MSG_CM_RESOLVE_ROUTE, ca, 2000, NULL, 0, NULL);
	ev_expect(&A, EV_ROUTE_RESOLVED, ca);
	cr_assert_eq(conn_call(&A, UROCE_SHM_MSG_CM_CONNECT, ca, 0x123, NULL, 0), 0);
	e = ev_expect(&A, EV_UNREACHABLE, ca);
	cr_expect_eq(e.status, -ETIMEDOUT);
	cr_expect_eq(cm_counter(0, "cm_req_retries"), 15);
	cr_expect_eq(cm_counter(0, "cm_req_timeouts"), 1);
	cli_close(&A);
	wire_stop();
}

/* A client that goes away connected: its daemon sends a DREQ for it. */
Test(cm_wire, client_death_disconnects_the_peer, .timeout = 60)
{
	static const uint8_t b_ip[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2};
	struct uroce_shm_msg_cm_event e;
	struct cli A, B;
	uint32_t la, ca, cb;

	wire_start(0, 0);
	cli_open(&A, 0);
	cli_open(&B, 1);
	la = create_id(&B, PS_TCP, UROCE_QPT_RC);
	addr_call(&B, UROCE_SHM_MSG_CM_BIND, la, 0, b_ip, 7174, NULL);
	addr_call(&B, UROCE_SHM_MSG_CM_LISTEN, la, 0, NULL, 0, NULL);
	ca = create_id(&A, PS_TCP, UROCE_QPT_RC);
	addr_call(&A, UROCE_SHM_MSG_CM_RESOLVE_ADDR, ca, 2000, b_ip, 7174, NULL);
	ev_expect(&A, EV_ADDR_RESOLVED, ca);
	addr_call(&A, UROCE_SHM_MSG_CM_RESOLVE_ROUTE, ca, 2000, NULL, 0, NULL);
	ev_expect(&A, EV_ROUTE_RESOLVED, ca);
	cr_assert_eq(conn_call(&A, UROCE_SHM_MSG_CM_CONNECT, ca, 0x55, NULL, 0), 0);
	e = ev_expect(&B, EV_CONNECT_REQUEST, UROCE_SHM_HANDLE_NONE);
	cb = e.id;
	cr_assert_eq(conn_call(&B, UROCE_SHM_MSG_CM_ACCEPT, cb, 0x66, NULL, 0), 0);
	ev_expect(&A, EV_CONNECT_RESPONSE, ca);
	cr_assert_eq(simple_call(&A, UROCE_SHM_MSG_CM_ESTABLISH, ca), 0);
	ev_expect(&B, EV_ESTABLISHED, cb);
	cli_close(&A); /* gone, connected */
	ev_expect(&B, EV_DISCONNECTED, cb);
	cr_assert_eq(simple_call(&B, UROCE_SHM_MSG_CM_DISCONNECT, cb), 0, "the DREP owed");
	cli_close(&B);
	dt_nap_ms(400); /* time wait (128 ms at these timeouts) */
	cr_expect_eq(cm_counter(0, "cm_ids") + cm_counter(1, "cm_ids"), 0);
	wire_stop();
}

/* UD: SIDR resolution, then a datagram with the address the event gave. */
Test(cm_wire, ud_sidr, .timeout = 60)
{
	static const uint8_t b_ip[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2};
	struct uroce_shm_msg_cm_event e;
	struct cli A, B;
	struct uroce_qp *qa, *qb;
	struct uroce_ah_attr ah;
	struct uroce_ah *h;
	struct uroce_wc wc;
	uint32_t la, ca, cb;

	wire_start(0, 0);
	cli_open(&A, 0);
	cli_open(&B, 1);
	la = create_id(&B, PS_UDP, UROCE_QPT_UD);
	addr_call(&B, UROCE_SHM_MSG_CM_BIND, la, 0, b_ip, 7174, NULL);
	cr_assert_eq(addr_call(&B, UROCE_SHM_MSG_CM_LISTEN, la, 0, NULL, 0, NULL), 0);
	ca = create_id(&A, PS_UDP, UROCE_QPT_UD);
	addr_call(&A, UROCE_SHM_MSG_CM_RESOLVE_ADDR, ca, 2000, b_ip, 7174, NULL);
	ev_expect(&A, EV_ADDR_RESOLVED, ca);
	addr_call(&A, UROCE_SHM_MSG_CM_RESOLVE_ROUTE, ca, 2000, NULL, 0, NULL);
	ev_expect(&A, EV_ROUTE_RESOLVED, ca);
	qa = rc_qp(&A, UROCE_QPT_UD);
	qp_move(&A, qa, ca, UROCE_QPS_INIT);
	qp_move(&A, qa, ca, UROCE_QPS_RTR);
	qp_move(&A, qa, ca, UROCE_QPS_RTS);
	cr_assert_eq(conn_call(&A, UROCE_SHM_MSG_CM_CONNECT, ca, qa->qp_num, "udaddy", 6), 0);
	e = ev_expect(&B, EV_CONNECT_REQUEST, UROCE_SHM_HANDLE_NONE);
	cb = e.id;
	cr_expect(e.flags & UROCE_SHM_CM_EV_F_UD);
	cr_expect_eq(e.param.private_data_len, 180);
	cr_expect_arr_eq(e.param.private_data, "udaddy", 6);
	qb = rc_qp(&B, UROCE_QPT_UD);
	qp_move(&B, qb, cb, UROCE_QPS_INIT);
	qp_move(&B, qb, cb, UROCE_QPS_RTR);
	qp_move(&B, qb, cb, UROCE_QPS_RTS);
	post_recv(&B, qb, 0, 1024);
	cr_assert_eq(conn_call(&B, UROCE_SHM_MSG_CM_ACCEPT, cb, qb->qp_num, NULL, 0), 0);
	e = ev_expect(&A, EV_ESTABLISHED, ca);
	cr_expect(e.flags & UROCE_SHM_CM_EV_F_AH);
	cr_expect_eq(e.param.qp_num, qb->qp_num);
	cr_expect_eq(e.qkey, 0x01234567u);
	cr_expect_arr_eq(e.ah_dgid, gid_of[1], 16);
	memset(&ah, 0, sizeof(ah));
	memcpy(ah.dgid, e.ah_dgid, 16);
	ah.hop_limit = e.ah_hop_limit;
	ah.sgid_index = e.ah_sgid_index;
	ah.port_num = 1;
	h = uroce_create_ah(A.pd, &ah);
	cr_assert_not_null(h);
	{
		struct uroce_sge sge = {(uintptr_t)A.buf, 64, A.mr->lkey};
		struct uroce_send_wr wr, *bad;

		memset(A.buf, 0x5A, 64);
		memset(&wr, 0, sizeof(wr));
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = UROCE_WR_SEND;
		wr.send_flags = UROCE_SEND_SIGNALED;
		wr.wr.ud.ah = h;
		wr.wr.ud.remote_qpn = e.param.qp_num;
		wr.wr.ud.remote_qkey = e.qkey;
		cr_assert_eq(uroce_post_send(qa, &wr, &bad), 0);
		wc = wait_wc(&A);
		cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
		wc = wait_wc(&B);
		cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
		cr_expect_eq(wc.byte_len, 64 + 40, "GRH + payload");
		cr_expect_eq(wc.src_qp, qa->qp_num);
		cr_expect_eq(B.buf[40 + 63], 0x5A);
	}
	cr_expect_eq(uroce_destroy_ah(h), 0);
	cli_close(&A);
	cli_close(&B);
	wire_stop();
}

/* QP1 answers a Get of a class it does not serve (IBA 13.4.7), drops the rest. */
Test(cm_wire, unsupported_mads, .timeout = 60)
{
	struct uroce_qp *qp;
	struct uroce_qp_attr a;
	struct uroce_ah_attr ah;
	struct uroce_ah *h;
	struct uroce_wc wc;
	struct cli A;
	uint8_t *mad;
	int i;

	wire_start(0, 0);
	cli_open(&A, 0);
	/* A UD QP speaking to B's QP1 with the GSI's Q_Key. */
	qp = rc_qp(&A, UROCE_QPT_UD);
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.port_num = 1;
	a.qkey = UROCE_CM_GSI_QKEY;
	cr_assert_eq(uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
						     UROCE_QP_QKEY), 0);
	a.qp_state = UROCE_QPS_RTR;
	cr_assert_eq(uroce_modify_qp(qp, &a, UROCE_QP_STATE), 0);
	a.qp_state = UROCE_QPS_RTS;
	cr_assert_eq(uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN), 0);
	memset(&ah, 0, sizeof(ah));
	memcpy(ah.dgid, gid_of[1], 16);
	ah.hop_limit = 64;
	ah.port_num = 1;
	h = uroce_create_ah(A.pd, &ah);
	cr_assert_not_null(h);
	post_recv(&A, qp, 8192, 1024);
	for (i = 0; i < 4; i++) {
		struct uroce_sge sge = {(uintptr_t)A.buf + 256 * i, 256, A.mr->lkey};
		struct uroce_send_wr wr, *bad;

		mad = A.buf + 256 * i;
		memset(mad, 0, 256);
		mad[0] = 1;                       /* base version */
		mad[1] = i == 2 ? 0x07 : 0x04;    /* PerfMgt, or the CM's */
		mad[2] = i == 2 ? 2 : 1;
		mad[3] = i == 1 ? 0x03 : 0x01;    /* Get, or a Send */
		mad[8] = (uint8_t)(0xA0 + i);     /* TID */
		mad[17] = i == 2 ? 0x01 : 0x12;   /* ClassPortInfo, PortCounters */
		if (i == 3)
			mad[0] = 2;               /* a base version nobody speaks */
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 100 + (uint64_t)i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = UROCE_WR_SEND;
		wr.send_flags = UROCE_SEND_SIGNALED;
		wr.wr.ud.ah = h;
		wr.wr.ud.remote_qpn = 1;
		wr.wr.ud.remote_qkey = UROCE_CM_GSI_QKEY;
		cr_assert_eq(uroce_post_send(qp, &wr, &bad), 0);
	}
	/* Four send completions and the first answer, in whatever order. */
	memset(&wc, 0, sizeof(wc));
	for (i = 0; i < 5; i++) {
		struct uroce_wc w = wait_wc(&A);

		cr_expect_eq(w.status, UROCE_WC_SUCCESS);
		if (w.opcode & UROCE_WC_RECV)
			wc = w;
	}
	/* Expect: the PerfMgt Get answered GetResp, status 0x000C, same TID. */
	cr_assert(wc.opcode & UROCE_WC_RECV, "an answer came");
	cr_expect_eq(wc.byte_len, 40 + 256);
	cr_expect_eq(wc.src_qp, 1);
	mad = A.buf + 8192 + 40;
	cr_expect_eq(mad[1], 0x04);
	cr_expect_eq(mad[3], UROCE_MAD_METHOD_GET_RESP);
	cr_expect_eq(uroce_get_be16(mad + 4), UROCE_MAD_STATUS_UNSUPPORTED_METHOD_ATTR);
	cr_expect_eq(mad[8], 0xA0, "the TID of the Get");
	dt_nap_ms(200);
	cr_expect_eq(cm_counter(1, "mad_unsupported_answered"), 2, "PerfMgt Get, CM Get");
	cr_expect_eq(cm_counter(1, "mad_unsupported_dropped"), 1, "the Send");
	cr_expect_eq(cm_counter(1, "mad_bad_base_version"), 1);
	cr_expect_eq(cm_counter(1, "cm_rx_mads"), 0, "none reached the CM");
	cr_expect_eq(uroce_destroy_ah(h), 0);
	cli_close(&A);
	wire_stop();
}

/* Requests of another session's handles, bad bodies, a 1.3 client. */
Test(cm_wire, requests_checked, .timeout = 60)
{
	struct uroce_shm_msg_cm_channel_open_req oq = {0};
	struct uroce_shm_msg_cm_create_id_req q;
	struct uroce_shm_msg_handle hh;
	struct cli A, A2;
	uint32_t ca;
	int fd;

	wire_start(0, 0);
	cli_open(&A, 0);
	cli_open(&A2, 0);
	ca = create_id(&A, PS_TCP, UROCE_QPT_RC);
	cr_expect_eq(simple_call(&A2, UROCE_SHM_MSG_CM_DISCONNECT, ca), -ENOENT,
		     "another session's id is not found");
	/* Handles are the session's own: A2's first channel is not A's. */
	memset(&q, 0, sizeof(q));
	q.channel = A.chan + 5;
	q.ps = PS_TCP;
	q.qp_type = UROCE_QPT_RC;
	cr_expect_eq(uroce_ctl_call(A2.ctx, UROCE_SHM_MSG_CM_CREATE_ID, &q, sizeof(q), -1, &hh,
				    sizeof(hh), NULL), -ENOENT, "no such channel");
	q.channel = A.chan;
	q.ps = 0x0002; /* IPoIB */
	q.qp_type = UROCE_QPT_UD;
	cr_expect_eq(uroce_ctl_call(A.ctx, UROCE_SHM_MSG_CM_CREATE_ID, &q, sizeof(q), -1, &hh,
				    sizeof(hh), NULL), -EPROTONOSUPPORT);
	q.ps = PS_TCP;
	q.reserved = 1;
	cr_expect_eq(uroce_ctl_call(A.ctx, UROCE_SHM_MSG_CM_CREATE_ID, &q, sizeof(q), -1, &hh,
				    sizeof(hh), NULL), -EINVAL);
	/* A channel must be a SEQPACKET socket. */
	fd = dup(STDIN_FILENO);
	cr_expect_eq(uroce_ctl_call(A.ctx, UROCE_SHM_MSG_CM_CHANNEL_OPEN, &oq, sizeof(oq), fd, &hh,
				    sizeof(hh), NULL), -EINVAL);
	close(fd);
	/* A channel with ids on it is not closed under them. */
	hh.handle = A.chan;
	hh.reserved = 0;
	cr_expect_eq(uroce_ctl_call(A.ctx, UROCE_SHM_MSG_CM_CHANNEL_CLOSE, &hh, sizeof(hh), -1,
				    NULL, 0, NULL), -EBUSY);
	cr_expect_eq(addr_call(&A, UROCE_SHM_MSG_CM_RESOLVE_ROUTE, ca, 0, NULL, 0, NULL), -EINVAL,
		     "route before address");
	cr_expect_eq(addr_call(&A, UROCE_SHM_MSG_CM_BIND, ca, 0, gid_of[1], 1, NULL),
		     -EADDRNOTAVAIL, "B's address is not A's");
	cli_close(&A);
	cli_close(&A2);
	wire_stop();
}

/* rdma_cm inside one daemon: both ends on daemon A (loopback to its own GID). */
Test(cm_wire, loopback_in_one_daemon, .timeout = 60)
{
	static const uint8_t a_ip[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 1};
	struct uroce_shm_msg_cm_event e;
	struct cli S, C;
	uint32_t l, c, s;

	wire_start(0, 0);
	cli_open(&S, 0);
	cli_open(&C, 0);
	l = create_id(&S, PS_TCP, UROCE_QPT_RC);
	cr_assert_eq(addr_call(&S, UROCE_SHM_MSG_CM_LISTEN, l, 0, NULL, 0, NULL), 0,
		     "unbound: any address, an ephemeral port");
	{
		struct uroce_shm_msg_handle hh = {.handle = l};
		struct uroce_shm_msg_cm_route_resp r;

		cr_assert_eq(uroce_ctl_call(S.ctx, UROCE_SHM_MSG_CM_QUERY, &hh, sizeof(hh), -1, &r,
					    sizeof(r), NULL), 0);
		c = create_id(&C, PS_TCP, UROCE_QPT_RC);
		cr_assert_eq(addr_call(&C, UROCE_SHM_MSG_CM_RESOLVE_ADDR, c, 0, a_ip,
				       r.route.src.port, NULL), 0);
	}
	ev_expect(&C, EV_ADDR_RESOLVED, c);
	addr_call(&C, UROCE_SHM_MSG_CM_RESOLVE_ROUTE, c, 0, NULL, 0, NULL);
	ev_expect(&C, EV_ROUTE_RESOLVED, c);
	cr_assert_eq(conn_call(&C, UROCE_SHM_MSG_CM_CONNECT, c, 0x77, NULL, 0), 0);
	e = ev_expect(&S, EV_CONNECT_REQUEST, UROCE_SHM_HANDLE_NONE);
	s = e.id;
	cr_assert_eq(conn_call(&S, UROCE_SHM_MSG_CM_ACCEPT, s, 0x78, NULL, 0), 0);
	ev_expect(&C, EV_CONNECT_RESPONSE, c);
	simple_call(&C, UROCE_SHM_MSG_CM_ESTABLISH, c);
	ev_expect(&S, EV_ESTABLISHED, s);
	/* DREQ from the passive side this time. */
	cr_assert_eq(simple_call(&S, UROCE_SHM_MSG_CM_DISCONNECT, s), 0);
	ev_expect(&C, EV_DISCONNECTED, c);
	simple_call(&C, UROCE_SHM_MSG_CM_DISCONNECT, c);
	ev_expect(&S, EV_DISCONNECTED, s);
	cli_close(&S);
	cli_close(&C);
	dt_nap_ms(400);
	cr_expect_eq(cm_counter(0, "cm_ids"), 0);
	cr_expect_eq(cm_counter(0, "cm_rdma_ids"), 0);
	cr_expect_eq(cm_counter(1, "gsi_rx_mads"), 0, "nothing crossed the wire");
	wire_stop();
}

/* Many connections up and down: nothing is left in either daemon. */
Test(cm_wire, many_connections_leave_nothing, .timeout = 120)
{
	static const uint8_t b_ip[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2};
	struct uroce_shm_msg_cm_event e;
	struct cli A, B;
	uint32_t la, ca[16], cb[16];
	int round, i;

	wire_start(0, 0);
	cli_open(&A, 0);
	cli_open(&B, 1);
	la = create_id(&B, PS_TCP, UROCE_QPT_RC);
	addr_call(&B, UROCE_SHM_MSG_CM_BIND, la, 0, b_ip, 7471, NULL);
	cr_assert_eq(addr_call(&B, UROCE_SHM_MSG_CM_LISTEN, la, 64, NULL, 0, NULL), 0);
	for (round = 0; round < 4; round++) {
		for (i = 0; i < 16; i++) {
			ca[i] = create_id(&A, PS_TCP, UROCE_QPT_RC);
			addr_call(&A, UROCE_SHM_MSG_CM_RESOLVE_ADDR, ca[i], 0, b_ip, 7471, NULL);
			ev_expect(&A, EV_ADDR_RESOLVED, ca[i]);
			addr_call(&A, UROCE_SHM_MSG_CM_RESOLVE_ROUTE, ca[i], 0, NULL, 0, NULL);
			ev_expect(&A, EV_ROUTE_RESOLVED, ca[i]);
			/* A new QPN each time: a reused one would be stale in time wait. */
			cr_assert_eq(conn_call(&A, UROCE_SHM_MSG_CM_CONNECT, ca[i],
					       0x1000 + round * 16 + i, NULL, 0), 0);
		}
		for (i = 0; i < 16; i++) {
			e = ev_expect(&B, EV_CONNECT_REQUEST, UROCE_SHM_HANDLE_NONE);
			cb[i] = e.id;
			cr_assert_eq(conn_call(&B, UROCE_SHM_MSG_CM_ACCEPT, cb[i], 0x2000 + i, NULL,
					       0), 0);
		}
		for (i = 0; i < 16; i++) {
			e = ev_expect(&A, EV_CONNECT_RESPONSE, UROCE_SHM_HANDLE_NONE);
			cr_assert_eq(simple_call(&A, UROCE_SHM_MSG_CM_ESTABLISH, e.id), 0);
		}
		for (i = 0; i < 16; i++)
			ev_expect(&B, EV_ESTABLISHED, UROCE_SHM_HANDLE_NONE);
		/* Half torn down by A with a DREQ, half by destroying B's ids. */
		for (i = 0; i < 16; i++) {
			if (i & 1)
				cr_assert_eq(simple_call(&B, UROCE_SHM_MSG_CM_DESTROY_ID, cb[i]), 0);
			else
				cr_assert_eq(simple_call(&A, UROCE_SHM_MSG_CM_DISCONNECT, ca[i]),
					     0);
		}
		/* B hears A's DREQs and answers by destroying its ids (the DREP). */
		for (i = 0; i < 16; i += 2) {
			ev_expect(&B, EV_DISCONNECTED, cb[i]);
			cr_assert_eq(simple_call(&B, UROCE_SHM_MSG_CM_DESTROY_ID, cb[i]), 0);
		}
		for (i = 0; i < 16; i++) {
			e = ev_expect(&A, EV_DISCONNECTED, UROCE_SHM_HANDLE_NONE);
			cr_expect_eq(e.status, 0, "DREQ or DREP, never a timeout");
		}
		for (i = 0; i < 16; i++)
			cr_assert_eq(simple_call(&A, UROCE_SHM_MSG_CM_DESTROY_ID, ca[i]), 0);
	}
	simple_call(&B, UROCE_SHM_MSG_CM_DESTROY_ID, la);
	dt_nap_ms(500);
	cr_expect_eq(cm_counter(0, "cm_ids"), 0);
	cr_expect_eq(cm_counter(1, "cm_ids"), 0);
	cr_expect_eq(cm_counter(0, "cm_rdma_ids") + cm_counter(1, "cm_rdma_ids"), 0);
	cr_expect_eq(cm_counter(1, "cm_rep_sent"), 64);
	cli_close(&A);
	cli_close(&B);
	wire_stop();
}

/*
 * IBA 10.2.5: only a privileged consumer may use a Q_Key with the high bit
 * (QP1's among them), or any local client could forge CM MADs. A client of
 * another uid than root is refused one (-EPERM), as on Linux.
 */
Test(cm_wire, privileged_qkey_needs_root, .timeout = 60)
{
	pid_t pid;
	int st;

	if (geteuid() != 0)
		cr_skip_test("needs root to run a client as another uid");
	wire_start(0, 0);
	cr_assert_eq(chmod(T.dir, 0711), 0);
	cr_assert_eq(chmod(T.sock[0], 0666), 0);
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct uroce_context *ctx;
		struct uroce_qp_attr a;
		struct uroce_qp_init_attr ia;
		struct uroce_pd *pd;
		struct uroce_cq *cq;
		struct uroce_qp *qp;
		int rc;

		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(10);
		ctx = uroce_open_device(T.sock[0]);
		pd = ctx != NULL ? uroce_alloc_pd(ctx) : NULL;
		cq = ctx != NULL ? uroce_create_cq(ctx, 4, NULL) : NULL;
		if (pd == NULL || cq == NULL)
			_exit(11);
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = cq;
		ia.recv_cq = cq;
		ia.qp_type = UROCE_QPT_UD;
		ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		qp = uroce_create_qp(pd, &ia);
		if (qp == NULL)
			_exit(12);
		memset(&a, 0, sizeof(a));
		a.qp_state = UROCE_QPS_INIT;
		a.port_num = 1;
		a.qkey = UROCE_CM_GSI_QKEY;
		rc = uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
						     UROCE_QP_QKEY);
		if (rc != -EPERM)
			_exit(13);
		a.qkey = 0x01234567; /* an ordinary one is fine */
		rc = uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
						     UROCE_QP_QKEY);
		_exit(rc == 0 ? 0 : 14);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	wire_stop();
}
