/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Component tests of the lcore load generator (lib/daemon/gen_control.c, gen_worker.c, the GEN_*
 * control messages of shm ABI 1.3; doc/loadgen.md, doc/shm-abi.md) without
 * DPDK.
 *
 * The gen suite runs the daemon core in a thread of the test process
 * (uroce_daemon_poll() in a loop, as test_srq_events does) and speaks raw
 * control messages to it over its UNIX socket, as uroce-ctl gen does: every
 * field of GEN_CREATE, GEN_QPS, GEN_CONNECT, GEN_START, GEN_STATS and
 * GEN_DESTROY that can be wrong is refused with its errno and leaves nothing
 * behind; a target and an initiator on the daemon's loopback port run a
 * short verified mix of WRITE, READ, SEND, FETCH_AND_ADD and COMPARE_AND_SWAP
 * to its end; a session that hangs up mid-run loses its generators and
 * nothing else. UROCE_TEST_WORKERS=2 (test_gen_2w) puts the initiator on
 * worker 1 and the target on worker 0, so every packet crosses workers.
 *
 * The pair suite runs the built uroce-ctl gen between the two daemon cores
 * of `uroced_lite --pair` (two GIDs, one simulated wire) and checks its JSON
 * summary.
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uroce_daemon.h"
#include "uroce_loadgen.h"
#include "uroce_shm.h"
#include "uroce_verbs.h"

#include "daemon_test_util.h"
#include "dt_daemon.h"

static struct dt_daemon dd;

/* @p gen_mem_max: 0 for the default budget of generator memory. */
static void
start_daemon_budget(const char *name, uint64_t gen_mem_max)
{
	struct uroce_daemon_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	conf.active_mtu = UROCE_MTU_4096;
	conf.gen_mem_max = gen_mem_max;
	rc = dt_daemon_start(&dd, name, &conf);
	cr_assert_eq(rc, 0, "daemon: %s", strerror(-rc));
}

static void
start_daemon(void)
{
	start_daemon_budget("gen", 0);
}

static void
stop_daemon(void)
{
	dt_daemon_stop(&dd);
}

static void
dstats(struct uroce_daemon_stats *st)
{
	dt_daemon_lock(&dd);
	uroce_daemon_stats(dd.d, st);
	dt_daemon_unlock(&dd);
}

/* Wait up to 5 s for the daemon to hold exactly @p qps QPs, and as many CQs,
 * MRs and PDs as that many generators' worth (@p gens: each has one of each). */
static void
expect_left(uint32_t qps, uint32_t gens, const char *when)
{
	struct uroce_daemon_stats st;
	double end = dt_now_s() + 5;

	do {
		dstats(&st);
		if (st.qps == qps && st.cqs == gens && st.mrs == gens && st.pds == gens)
			return;
		dt_nap_ms(10);
	} while (dt_now_s() < end);
	cr_assert_fail("%s: the daemon holds %u QPs, %u CQs, %u MRs, %u PDs; expected %u QPs "
		       "and %u of the others", when, st.qps, st.cqs, st.mrs, st.pds, qps, gens);
}

/* ------------------------------------------------------------------------ */
/* A raw control session                                                     */
/* ------------------------------------------------------------------------ */

struct sess {
	int s;
	uint32_t seq;
};

/* One request and its response. @return the response's status (0 or -errno). */
static int
rpc(struct sess *c, uint16_t type, const void *body, size_t blen, void *resp, size_t rlen)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	const struct uroce_shm_msg_hdr *h = (const void *)buf;
	struct pollfd p = {.fd = c->s, .events = POLLIN};
	uint32_t seq = ++c->seq;
	ssize_t n;
	int fd;

	cr_assert_gt(dt_msg_send(c->s, type, seq, body, blen, -1), 0, "send %s",
		     uroce_shm_msg_type_name(type));
	cr_assert_eq(poll(&p, 1, 20000), 1, "no answer to %s within 20 s",
		     uroce_shm_msg_type_name(type));
	n = dt_msg_recv(c->s, buf, sizeof(buf), &fd);
	cr_assert_gt(n, 0, "receive the answer to %s: %zd", uroce_shm_msg_type_name(type), n);
	if (fd >= 0)
		close(fd);
	cr_assert_eq(h->type, type);
	cr_assert_eq(h->seq, seq);
	if (h->status == 0 && resp != NULL) {
		cr_assert_geq((size_t)n, sizeof(*h) + rlen);
		memcpy(resp, buf + sizeof(*h), rlen);
	}
	return h->status;
}

static void
sess_open(struct sess *c)
{
	struct uroce_shm_msg_hello_req hq;
	struct uroce_shm_msg_hello_resp hr;

	memset(c, 0, sizeof(*c));
	c->s = dt_connect(dd.sock_path);
	cr_assert_geq(c->s, 0, "connect %s: %s", dd.sock_path, strerror(-c->s));
	memset(&hq, 0, sizeof(hq));
	hq.abi_major = UROCE_SHM_ABI_MAJOR;
	hq.abi_minor = UROCE_SHM_ABI_MINOR;
	memcpy(hq.name, "test_gen", 8);
	cr_assert_eq(rpc(c, UROCE_SHM_MSG_HELLO, &hq, sizeof(hq), &hr, sizeof(hr)), 0);
	cr_assert_geq(hr.abi_minor, 3, "the daemon speaks ABI 1.%u, the generator is 1.3",
		      hr.abi_minor);
}

static void
sess_close(struct sess *c)
{
	if (c->s >= 0)
		close(c->s);
	c->s = -1;
}

/* ------------------------------------------------------------------------ */
/* Generator steps                                                           */
/* ------------------------------------------------------------------------ */

#define N_QPS 3
#define DEPTH 16
#define MAX_SIZE 3000 /* a READ or SEND of it takes 3 packets at MTU 1024 */

static struct uroce_shm_msg_gen_create_req
create_req(uint32_t role, uint32_t worker, uint32_t flags)
{
	struct uroce_shm_msg_gen_create_req q;

	memset(&q, 0, sizeof(q));
	q.role = role;
	q.n_qps = N_QPS;
	q.worker = worker;
	q.gid_index = 0;
	q.depth = DEPTH;
	q.flags = flags;
	q.max_size = MAX_SIZE;
	return q;
}

static struct uroce_shm_msg_gen_create_resp
gen_create(struct sess *c, const struct uroce_shm_msg_gen_create_req *q)
{
	struct uroce_shm_msg_gen_create_resp r;
	int rc = rpc(c, UROCE_SHM_MSG_GEN_CREATE, q, sizeof(*q), &r, sizeof(r));

	cr_assert_eq(rc, 0, "GEN_CREATE (role %u): %s", q->role, strerror(-rc));
	cr_assert_neq(r.gen_id, 0);
	cr_assert_eq(r.n_qps, q->n_qps);
	cr_assert_eq(r.worker, q->worker);
	cr_assert_geq(r.win_len, q->max_size);
	cr_assert_eq(r.active_mtu, UROCE_MTU_4096);
	return r;
}

static void
gen_qps(struct sess *c, uint32_t id, struct uroce_shm_gen_qp *out)
{
	struct uroce_shm_msg_gen_qps_req q = {.gen_id = id, .start = 0};
	struct uroce_shm_msg_gen_qps_resp r;
	unsigned int i;

	cr_assert_eq(rpc(c, UROCE_SHM_MSG_GEN_QPS, &q, sizeof(q), &r, sizeof(r)), 0);
	cr_assert_eq(r.page.count, N_QPS);
	cr_assert_eq(r.page.flags & UROCE_SHM_LIST_F_MORE, 0);
	for (i = 0; i < N_QPS; i++) {
		cr_assert_leq(r.q[i].psn, 0xffffffu);
		out[i] = r.q[i];
	}
}

/* GEN_CONNECT of all QPs of @p self to those of @p peer (a target's memory
 * when @p self is an initiator). */
static struct uroce_shm_msg_gen_connect_req
connect_req(uint32_t id, const struct uroce_shm_msg_gen_create_resp *peer,
	    const struct uroce_shm_gen_qp *peer_qps)
{
	struct uroce_shm_msg_gen_connect_req q;

	memset(&q, 0, sizeof(q));
	q.gen_id = id;
	q.first = 0;
	q.count = N_QPS;
	q.path_mtu = UROCE_MTU_1024;
	memcpy(q.peer_gid, peer->gid, 16);
	q.peer_rkey = peer->rkey;
	q.peer_win_len = peer->win_len;
	q.peer_va = peer->va;
	q.peer_atomic_off = peer->atomic_off;
	memcpy(q.q, peer_qps, sizeof(*peer_qps) * N_QPS);
	return q;
}

static int
gen_connect(struct sess *c, const struct uroce_shm_msg_gen_connect_req *q)
{
	struct uroce_shm_msg_gen_connect_resp r;

	return rpc(c, UROCE_SHM_MSG_GEN_CONNECT, q, sizeof(*q), &r, sizeof(r));
}

static int
gen_start(struct sess *c, const struct uroce_shm_msg_gen_start_req *q)
{
	return rpc(c, UROCE_SHM_MSG_GEN_START, q, sizeof(*q), NULL, 0);
}

static int
gen_stats(struct sess *c, uint32_t id, uint32_t flags, struct uroce_shm_msg_gen_stats_resp *r)
{
	struct uroce_shm_msg_gen_stats_req q = {.gen_id = id, .flags = flags};

	return rpc(c, UROCE_SHM_MSG_GEN_STATS, &q, sizeof(q), r, sizeof(*r));
}

static int
gen_destroy(struct sess *c, uint32_t id)
{
	struct uroce_shm_msg_handle q = {.handle = id};

	return rpc(c, UROCE_SHM_MSG_GEN_DESTROY, &q, sizeof(q), NULL, 0);
}

/* The verified mix of the loopback run: every operation, sizes of one and
 * several packets. */
static struct uroce_shm_msg_gen_start_req
start_req(uint32_t id, uint64_t count)
{
	static const struct uroce_shm_gen_mix mix[] = {
		{UROCE_LG_WRITE, 64, 2}, {UROCE_LG_WRITE, MAX_SIZE, 1},
		{UROCE_LG_READ, 100, 2}, {UROCE_LG_READ, MAX_SIZE, 1},
		{UROCE_LG_SEND, 1, 1}, {UROCE_LG_SEND, MAX_SIZE, 1},
		{UROCE_LG_FADD, 8, 2}, {UROCE_LG_CSWAP, 8, 2},
	};
	struct uroce_shm_msg_gen_start_req q;

	memset(&q, 0, sizeof(q));
	q.gen_id = id;
	q.n_mix = sizeof(mix) / sizeof(mix[0]);
	q.window = DEPTH / 2;
	q.flags = UROCE_SHM_GEN_F_VERIFY;
	q.count = count;
	q.seed = 12;
	memcpy(q.mix, mix, sizeof(mix));
	return q;
}

#define ALL_FLAGS (UROCE_SHM_GEN_F_READ | UROCE_SHM_GEN_F_SEND | UROCE_SHM_GEN_F_ATOMIC | \
		   UROCE_SHM_GEN_F_VERIFY)

/* Target on worker 0, initiator on the last worker, both connected. */
struct pair {
	struct uroce_shm_msg_gen_create_resp t, i;
	struct uroce_shm_gen_qp tq[N_QPS], iq[N_QPS];
};

static void
make_pair(struct sess *ts, struct sess *is, struct pair *p)
{
	struct uroce_shm_msg_gen_create_req q;
	struct uroce_shm_msg_gen_connect_req cq;

	q = create_req(UROCE_SHM_GEN_TARGET, 0, ALL_FLAGS);
	p->t = gen_create(ts, &q);
	cr_assert_neq(p->t.rkey, 0);
	cr_assert_neq(p->t.va, 0);
	cr_assert_eq(p->t.atomic_off % 8, 0);
	q = create_req(UROCE_SHM_GEN_INITIATOR, dt_workers() - 1, ALL_FLAGS);
	p->i = gen_create(is, &q);
	gen_qps(ts, p->t.gen_id, p->tq);
	gen_qps(is, p->i.gen_id, p->iq);
	cq = connect_req(p->t.gen_id, &p->i, p->iq);
	cr_assert_eq(gen_connect(ts, &cq), 0);
	cq = connect_req(p->i.gen_id, &p->t, p->tq);
	cr_assert_eq(gen_connect(is, &cq), 0);
}

/* Poll GEN_STATS until the generator leaves RUNNING and DRAINING (30 s). */
static void
wait_end(struct sess *c, uint32_t id, struct uroce_shm_msg_gen_stats_resp *r)
{
	double end = dt_now_s() + 30;

	for (;;) {
		cr_assert_eq(gen_stats(c, id, 0, r), 0);
		if (r->state == UROCE_SHM_GEN_DONE || r->state == UROCE_SHM_GEN_FAILED)
			return;
		cr_assert_lt(dt_now_s(), end, "the generator is still in state %u after 30 s "
			     "(%llu of its messages completed)", r->state,
			     (unsigned long long)r->completed);
		dt_nap_ms(20);
	}
}

TestSuite(gen, .init = start_daemon, .fini = stop_daemon, .timeout = 120);

/* Every GEN_CREATE field out of range is refused, and nothing is left. */
Test(gen, create_refusals)
{
	struct uroce_shm_msg_gen_create_req q, bad;
	struct uroce_shm_msg_gen_create_resp r;
	struct sess c;
	int rc;

	sess_open(&c);
	q = create_req(UROCE_SHM_GEN_INITIATOR, 0, ALL_FLAGS);
#define REFUSE(field, value, err) do { \
		bad = q; \
		bad.field = (value); \
		rc = rpc(&c, UROCE_SHM_MSG_GEN_CREATE, &bad, sizeof(bad), &r, sizeof(r)); \
		cr_expect_eq(rc, (err), "GEN_CREATE with " #field " = %llu: %d, expected %d", \
			     (unsigned long long)(value), rc, (err)); \
	} while (0)
	REFUSE(role, 0, -EINVAL);
	REFUSE(role, 3, -EINVAL);
	REFUSE(n_qps, 0, -EINVAL);
	REFUSE(n_qps, UROCE_SHM_GEN_MAX_QPS + 1, -EINVAL);
	REFUSE(worker, dt_workers(), -EINVAL);
	REFUSE(worker, UINT32_MAX, -EINVAL);
	REFUSE(gid_index, 1, -EINVAL); /* the loopback daemon has GID 0 only */
	REFUSE(depth, 0, -EINVAL);
	REFUSE(depth, UROCE_MAX_QP_WR + 1, -EINVAL);
	REFUSE(flags, UROCE_SHM_GEN_F_VERIFY << 1, -EINVAL);
	REFUSE(max_size, 0, -EINVAL);
	REFUSE(max_size, UROCE_LG_GEN_MAX_SIZE + 1, -EINVAL);
	REFUSE(reserved, 1, -EINVAL);
	/* More memory than one generator may take (UROCE_SHM_GEN_MAX_MEM):
	 * 1024 windows of 16 MiB, and a verified READ landing of 4096 x 16 MiB
	 * whose size overflows 32 bits. */
	q.n_qps = UROCE_SHM_GEN_MAX_QPS;
	REFUSE(max_size, UROCE_LG_GEN_MAX_SIZE, -E2BIG);
	q.n_qps = 1;
	q.depth = UROCE_MAX_QP_WR;
	REFUSE(max_size, UROCE_LG_GEN_MAX_SIZE, -E2BIG);
	q.role = UROCE_SHM_GEN_TARGET;
	q.n_qps = 64;
	REFUSE(max_size, UROCE_LG_GEN_MAX_SIZE, -E2BIG);
#undef REFUSE
	expect_left(0, 0, "after the refused GEN_CREATEs");
	/* The same session is still served: a good one is made, then destroyed. */
	q = create_req(UROCE_SHM_GEN_TARGET, 0, ALL_FLAGS);
	r = gen_create(&c, &q);
	expect_left(N_QPS, 1, "after a GEN_CREATE");
	cr_assert_eq(gen_destroy(&c, r.gen_id), 0);
	cr_assert_eq(gen_destroy(&c, r.gen_id), -ENOENT);
	expect_left(0, 0, "after GEN_DESTROY");
	sess_close(&c);
}

/* The daemon-wide budget of generator memory (conf.gen_mem_max, uroced's
 * [limits] gen_mem_mb): generators of any session are made while their
 * memory fits, the next is refused with ENOMEM and leaves nothing behind,
 * and destroying one, or a session's hang-up, gives its share back. */
#define BUDGET (4u << 20)

static void
start_budget_daemon(void)
{
	start_daemon_budget("genbudget", BUDGET);
}

TestSuite(gen_budget, .init = start_budget_daemon, .fini = stop_daemon, .timeout = 120);

Test(gen_budget, refused_past_it_and_given_back)
{
	struct uroce_shm_msg_gen_create_resp r, first;
	struct uroce_shm_msg_gen_create_req q;
	struct sess a, b;
	unsigned int made = 0;
	int rc;

	sess_open(&a);
	sess_open(&b);
	/* A target's memory is all it takes from the budget. */
	q = create_req(UROCE_SHM_GEN_TARGET, 0, ALL_FLAGS);
	q.max_size = 16u << 10; /* 3 windows of 64 KiB, 3 x 16 receives of 16 KiB */
	first = gen_create(&a, &q);
	made++;
	cr_assert_leq(first.mem_len, BUDGET / 2, "one generator takes %llu bytes",
		      (unsigned long long)first.mem_len);
	/* Fill it from both sessions: the budget is the daemon's. */
	for (;;) {
		struct sess *c = made % 2 ? &b : &a;

		rc = rpc(c, UROCE_SHM_MSG_GEN_CREATE, &q, sizeof(q), &r, sizeof(r));
		if (rc != 0)
			break;
		cr_assert_eq(r.mem_len, first.mem_len);
		made++;
		cr_assert_leq((uint64_t)made * first.mem_len, BUDGET, "%u generators made", made);
	}
	cr_assert_eq(rc, -ENOMEM, "the generator past the budget: %s", strerror(-rc));
	cr_assert_gt((uint64_t)(made + 1) * first.mem_len, BUDGET,
		     "refused with %u generators of %llu bytes in a budget of %u", made,
		     (unsigned long long)first.mem_len, BUDGET);
	expect_left(made * N_QPS, made, "after the refused GEN_CREATE");
	/* Destroying one gives its share back. */
	cr_assert_eq(gen_destroy(&a, first.gen_id), 0);
	first = gen_create(&b, &q);
	rc = rpc(&b, UROCE_SHM_MSG_GEN_CREATE, &q, sizeof(q), &r, sizeof(r));
	cr_assert_eq(rc, -ENOMEM, "full again: %s", strerror(-rc));
	/* So does a session's hang-up: after both go, a new session has it all. */
	sess_close(&a);
	sess_close(&b);
	expect_left(0, 0, "after both sessions hung up");
	sess_open(&a);
	for (made = 0; (uint64_t)(made + 1) * first.mem_len <= BUDGET; made++)
		(void)gen_create(&a, &q);
	expect_left(made * N_QPS, made, "after refilling the budget from a new session");
	sess_close(&a);
}

/* GEN_QPS, GEN_CONNECT, GEN_START, GEN_STATS and GEN_DESTROY refuse what is
 * wrong; then a verified run over the loopback port completes every message
 * with nothing bad, and the target's memory matches the initiator's model. */
Test(gen, refusals_then_verified_run)
{
	struct uroce_shm_msg_gen_create_req cq;
	struct uroce_shm_msg_gen_create_resp t, in;
	struct uroce_shm_msg_gen_connect_req kq, bk;
	struct uroce_shm_msg_gen_start_req sq, bs;
	struct uroce_shm_msg_gen_stats_resp is, ts;
	struct uroce_shm_msg_gen_qps_req qq;
	struct uroce_shm_msg_gen_qps_resp qr;
	struct uroce_shm_gen_qp tq[N_QPS], iq[N_QPS];
	struct uroce_daemon_gen_info gi[4];
	struct uroce_shm_msg_handle h;
	const uint64_t count = 3000;
	uint64_t sum = 0;
	struct sess c;
	unsigned int i, n;
	int rc;

	sess_open(&c);
	/* The target makes receives for SENDs; the initiator is made without
	 * F_SEND, so that a mix with SENDs is refused at GEN_START, and again
	 * with it for the run. */
	cq = create_req(UROCE_SHM_GEN_TARGET, 0, ALL_FLAGS);
	t = gen_create(&c, &cq);
	cq = create_req(UROCE_SHM_GEN_INITIATOR, dt_workers() - 1, ALL_FLAGS & ~UROCE_SHM_GEN_F_SEND);
	in = gen_create(&c, &cq);
	cr_assert_neq(in.gen_id, t.gen_id);
	gen_qps(&c, t.gen_id, tq);
	gen_qps(&c, in.gen_id, iq);

	/* GEN_QPS */
	qq.gen_id = 999;
	qq.start = 0;
	cr_expect_eq(rpc(&c, UROCE_SHM_MSG_GEN_QPS, &qq, sizeof(qq), &qr, sizeof(qr)), -ENOENT);
	qq.gen_id = t.gen_id;
	qq.start = N_QPS + 1;
	cr_expect_eq(rpc(&c, UROCE_SHM_MSG_GEN_QPS, &qq, sizeof(qq), &qr, sizeof(qr)), -EINVAL);

	/* GEN_START before every QP is connected */
	sq = start_req(in.gen_id, count);
	sq.mix[4].op = UROCE_LG_WRITE; /* no SEND: this initiator was made without */
	sq.mix[5].op = UROCE_LG_WRITE;
	cr_expect_eq(gen_start(&c, &sq), -ENOTCONN);

	/* GEN_CONNECT */
	kq = connect_req(in.gen_id, &t, tq);
#define REFUSE(field, value, err) do { \
		bk = kq; \
		bk.field = (value); \
		rc = gen_connect(&c, &bk); \
		cr_expect_eq(rc, (err), "GEN_CONNECT with " #field " = %llu: %d, expected %d", \
			     (unsigned long long)(value), rc, (err)); \
	} while (0)
	REFUSE(gen_id, 999, -ENOENT);
	REFUSE(timeout, 32, -EINVAL);
	REFUSE(count, 0, -EINVAL);
	REFUSE(count, N_QPS + 1, -EINVAL);
	REFUSE(count, UROCE_SHM_GEN_QPS_MAX + 1, -EINVAL);
	REFUSE(first, N_QPS, -EINVAL);
	REFUSE(first, 1, -EINVAL); /* 1 + N_QPS runs past the end */
	REFUSE(path_mtu, 0, -EINVAL);
	REFUSE(path_mtu, UROCE_MTU_4096 + 1, -EINVAL);
	REFUSE(peer_win_len, t.win_len / 2, -EINVAL);
	REFUSE(peer_atomic_off, t.atomic_off + 4, -EINVAL);
	REFUSE(peer_va, UINT64_MAX - 4096, -EINVAL);
	REFUSE(q[1].qpn, 1u << 24, -EINVAL);
	REFUSE(q[2].psn, 1u << 24, -EINVAL);
	bk = kq;
	memset(bk.peer_gid, 0, 16);
	cr_expect_eq(gen_connect(&c, &bk), -EINVAL, "GEN_CONNECT to the zero GID");
#undef REFUSE
	/* QP by QP, then once more: already connected. */
	bk = kq;
	bk.count = 1;
	cr_assert_eq(gen_connect(&c, &bk), 0);
	bk.first = 1;
	bk.count = N_QPS - 1;
	memmove(bk.q, bk.q + 1, sizeof(bk.q[0]) * (N_QPS - 1));
	bk.peer_rkey ^= 1;
	cr_expect_eq(gen_connect(&c, &bk), -EINVAL, "a second peer (another R_Key) refused");
	bk.peer_rkey ^= 1;
	bk.timeout = 20;
	cr_expect_eq(gen_connect(&c, &bk), -EINVAL, "another timeout for some QPs refused");
	bk.timeout = 14; /* what 0 means */
	cr_assert_eq(gen_connect(&c, &bk), 0);
	cr_expect_eq(gen_connect(&c, &kq), -EALREADY);
	kq = connect_req(t.gen_id, &in, iq);
	cr_assert_eq(gen_connect(&c, &kq), 0);

	/* GEN_START */
	bs = sq;
	bs.gen_id = t.gen_id;
	cr_expect_eq(gen_start(&c, &bs), -EINVAL, "a target does not start");
	bs.gen_id = 999;
	cr_expect_eq(gen_start(&c, &bs), -ENOENT);
#define REFUSE(field, value) do { \
		bs = sq; \
		bs.field = (value); \
		rc = gen_start(&c, &bs); \
		cr_expect_eq(rc, -EINVAL, "GEN_START with " #field " = %llu: %d", \
			     (unsigned long long)(value), rc); \
	} while (0)
	REFUSE(n_mix, 0);
	REFUSE(n_mix, UROCE_SHM_GEN_MIX_MAX + 1);
	REFUSE(window, 0);
	REFUSE(window, DEPTH + 1);
	REFUSE(flags, UROCE_SHM_GEN_F_READ);
	REFUSE(mix[0].op, UROCE_LG_NOPS);
	REFUSE(mix[0].size, 0);
	REFUSE(mix[0].size, MAX_SIZE + 1); /* above what it was made for */
	REFUSE(mix[0].weight, 0);
	REFUSE(mix[0].weight, UROCE_LG_MAX_WEIGHT + 1);
	REFUSE(mix[6].size, 16); /* an atomic is 8 bytes (IBA 9.4.5) */
	REFUSE(mix[0].op, UROCE_LG_SEND); /* made without receives' buffers */
#undef REFUSE
	expect_left(2 * N_QPS, 2, "after the refused GEN_STARTs");

	/* GEN_STATS and GEN_DESTROY */
	cr_expect_eq(gen_stats(&c, 999, 0, &is), -ENOENT);
	cr_expect_eq(gen_stats(&c, in.gen_id, UROCE_SHM_GEN_STATS_F_SCAN << 1, &is), -EINVAL);
	h.handle = in.gen_id;
	h.reserved = 1;
	cr_expect_eq(rpc(&c, UROCE_SHM_MSG_GEN_DESTROY, &h, sizeof(h), NULL, 0), -EINVAL);
	cr_expect_eq(gen_destroy(&c, 999), -ENOENT);
	cr_assert_eq(gen_stats(&c, in.gen_id, 0, &is), 0);
	cr_expect_eq(is.state, UROCE_SHM_GEN_READY);
	cr_expect_eq(is.posted, 0);

	/* The initiator without SENDs runs the rest of the mix, verified. */
	cr_assert_eq(gen_start(&c, &sq), 0);
	cr_expect_eq(gen_start(&c, &sq), -EALREADY);
	kq = connect_req(in.gen_id, &t, tq);
	cr_expect_eq(gen_connect(&c, &kq), -EBUSY, "GEN_CONNECT of a started generator");
	wait_end(&c, in.gen_id, &is);
	cr_assert_eq(gen_stats(&c, t.gen_id, UROCE_SHM_GEN_STATS_F_SCAN, &ts), 0);
	cr_expect_eq(is.state, UROCE_SHM_GEN_DONE, "state %u, first error status %u on QP %u",
		     is.state, is.err_status, is.err_qpn);
	cr_expect_eq(is.completed, count);
	cr_expect_eq(is.posted, count);
	cr_expect_eq(is.errors, 0);
	cr_expect_eq(is.verify_bad, 0);
	cr_expect_eq(is.order_bad, 0);
	cr_expect_eq(is.outstanding, 0);
	cr_expect_gt(is.elapsed_us, 0);
	for (i = 0; i < UROCE_LG_NOPS; i++) {
		sum += is.op_msgs[i];
		if (i != UROCE_LG_SEND)
			cr_expect_gt(is.op_msgs[i], 0, "no %s completed", uroce_lg_op_name(i));
	}
	cr_expect_eq(is.op_msgs[UROCE_LG_SEND], 0);
	cr_expect_eq(sum, count);
	cr_expect_gt(is.bytes, count * 8);
	cr_expect_gt(is.tx_packets, count, "multi-packet messages at MTU 1024");
	cr_expect_eq(ts.errors, 0);
	cr_expect_eq(ts.recv, 0);
	cr_expect_eq(ts.scan_bytes, (uint64_t)N_QPS * t.win_len);
	cr_expect_eq(ts.scan_bad, 0, "%llu bytes of the target's windows do not hold the pattern",
		     (unsigned long long)ts.scan_bad);
	cr_expect_eq(ts.atomic_digest, is.atomic_digest,
		     "the target's atomic words differ from the initiator's model");

	/* uroce_daemon_gens(), as /uroce/gen shows them */
	dt_daemon_lock(&dd);
	n = uroce_daemon_gens(dd.d, gi, 4);
	dt_daemon_unlock(&dd);
	cr_assert_eq(n, 2);
	for (i = 0; i < n; i++) {
		const struct uroce_daemon_gen_info *g = &gi[i];

		cr_expect_eq(g->pid, (int32_t)getpid());
		cr_expect_eq(g->n_qps, N_QPS);
		if (g->role == UROCE_SHM_GEN_INITIATOR) {
			cr_expect_eq(g->id, in.gen_id);
			cr_expect_eq(g->state, UROCE_SHM_GEN_DONE);
			cr_expect_eq(g->completed, count);
			cr_expect_eq(g->worker, dt_workers() - 1);
			cr_expect_eq(g->verify_bad, 0);
		} else {
			cr_expect_eq(g->role, UROCE_SHM_GEN_TARGET);
			cr_expect_eq(g->id, t.gen_id);
			cr_expect_eq(g->worker, 0);
		}
	}
	cr_assert_eq(gen_destroy(&c, in.gen_id), 0);
	cr_assert_eq(gen_destroy(&c, t.gen_id), 0);
	expect_left(0, 0, "after both GEN_DESTROYs");
	sess_close(&c);
}

/* Every operation, SENDs included, verified; the target's receives counted. */
Test(gen, verified_run_with_sends)
{
	struct uroce_shm_msg_gen_stats_resp is, ts;
	struct uroce_shm_msg_gen_start_req sq;
	const uint64_t count = 4000;
	struct sess c;
	struct pair p;
	unsigned int i;

	sess_open(&c);
	make_pair(&c, &c, &p);
	sq = start_req(p.i.gen_id, count);
	cr_assert_eq(gen_start(&c, &sq), 0);
	wait_end(&c, p.i.gen_id, &is);
	cr_assert_eq(gen_stats(&c, p.t.gen_id, UROCE_SHM_GEN_STATS_F_SCAN, &ts), 0);
	cr_expect_eq(is.state, UROCE_SHM_GEN_DONE, "state %u, first error status %u on QP %u",
		     is.state, is.err_status, is.err_qpn);
	cr_expect_eq(is.completed, count);
	cr_expect_eq(is.errors + is.verify_bad + is.order_bad, 0);
	for (i = 0; i < UROCE_LG_NOPS; i++)
		cr_expect_gt(is.op_msgs[i], 0, "no %s completed", uroce_lg_op_name(i));
	cr_expect_eq(ts.recv, is.op_msgs[UROCE_LG_SEND], "the target received every SEND");
	cr_expect_gt(ts.recv_bytes, ts.recv);
	cr_expect_eq(ts.verify_bad, 0, "SEND payloads that failed the check at the target");
	cr_expect_eq(ts.errors, 0);
	cr_expect_eq(ts.scan_bad, 0);
	cr_expect_eq(ts.atomic_digest, is.atomic_digest);
	sess_close(&c);
	expect_left(0, 0, "after the session closed");
}

/* A rate limit holds the rate (within the token bucket's burst) and a
 * duration ends the run. */
Test(gen, rate_and_duration)
{
	struct uroce_shm_msg_gen_stats_resp is;
	struct uroce_shm_msg_gen_start_req sq;
	struct sess c;
	struct pair p;
	double rate;

	sess_open(&c);
	make_pair(&c, &c, &p);
	sq = start_req(p.i.gen_id, 0);
	sq.rate = 2000;
	sq.duration_us = 1000000;
	cr_assert_eq(gen_start(&c, &sq), 0);
	wait_end(&c, p.i.gen_id, &is);
	cr_expect_eq(is.state, UROCE_SHM_GEN_DONE);
	cr_expect_eq(is.errors + is.verify_bad, 0);
	rate = (double)is.completed / ((double)is.elapsed_us / 1e6);
	/* The bucket lets one burst of a window per QP through, then holds. */
	cr_expect(is.completed >= 1000 && is.completed <= 2000 + N_QPS * DEPTH,
		  "%llu messages in %llu us at a limit of 2000/s",
		  (unsigned long long)is.completed, (unsigned long long)is.elapsed_us);
	cr_expect(rate < 2000 * 1.5, "rate %.0f/s at a limit of 2000/s", rate);
	sess_close(&c);
	expect_left(0, 0, "after the session closed");
}

/* A session that hangs up mid-run loses its generator; another session's
 * target is untouched. Sessions do not see each other's generators (ids are
 * per session: both sessions' first is 1). */
Test(gen, hangup_mid_run)
{
	struct uroce_shm_msg_gen_stats_resp is, ts;
	struct uroce_shm_msg_gen_start_req sq;
	struct sess tc, ic, xc;
	struct pair p;

	sess_open(&tc);
	sess_open(&ic);
	sess_open(&xc);
	make_pair(&tc, &ic, &p);
	cr_expect_eq(p.t.gen_id, p.i.gen_id);
	cr_expect_eq(gen_stats(&xc, p.i.gen_id, 0, &is), -ENOENT);
	cr_expect_eq(gen_destroy(&xc, p.i.gen_id), -ENOENT);
	sess_close(&xc);
	sq = start_req(p.i.gen_id, 0); /* no end */
	cr_assert_eq(gen_start(&ic, &sq), 0);
	/* Running, with SENDs received (the mix has them) and completions at
	 * the initiator, before the hang-up. The two are read one after the
	 * other, and with two workers either may be ahead: wait for both. */
	for (double end = dt_now_s() + 10;;) {
		cr_assert_eq(gen_stats(&tc, p.t.gen_id, 0, &ts), 0);
		cr_assert_eq(gen_stats(&ic, p.i.gen_id, 0, &is), 0);
		if ((ts.recv > 0 && is.completed > 0) || dt_now_s() > end)
			break;
		dt_nap_ms(20);
	}
	cr_expect_eq(is.state, UROCE_SHM_GEN_RUNNING);
	cr_expect_gt(is.completed, 0);
	sess_close(&ic);
	expect_left(N_QPS, 1, "after the initiator's session hung up");
	cr_assert_eq(gen_stats(&tc, p.t.gen_id, UROCE_SHM_GEN_STATS_F_SCAN, &ts), 0);
	cr_expect_eq(ts.state, UROCE_SHM_GEN_READY);
	cr_expect_gt(ts.recv, 0);
	cr_expect_eq(ts.scan_bad, 0);
	cr_expect_eq(ts.verify_bad, 0);
	cr_assert_eq(gen_destroy(&tc, p.t.gen_id), 0);
	expect_left(0, 0, "after the target's GEN_DESTROY");
	sess_close(&tc);
}

/* ------------------------------------------------------------------------ */
/* uroce-ctl gen between the two daemon cores of uroced_lite --pair         */
/* ------------------------------------------------------------------------ */

static pid_t pair_pid = -1;
static char pair_a[108], pair_b[108];

static void
start_pair(void)
{
	const char *exe = getenv("UROCED_LITE");
	char line[256];
	ssize_t n;
	int p[2];

	if (exe == NULL || getenv("UROCE_CTL") == NULL)
		cr_skip_test("UROCED_LITE or UROCE_CTL is not set (uroce-ctl needs libpcap-dev)");
	dt_sock_path(pair_a, sizeof(pair_a), "gen-a");
	dt_sock_path(pair_b, sizeof(pair_b), "gen-b");
	cr_assert_eq(pipe(p), 0);
	pair_pid = fork();
	cr_assert_geq(pair_pid, 0);
	if (pair_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		close(p[1]);
		execl(exe, exe, "--pair", pair_a, pair_b, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	n = read(p[0], line, sizeof(line) - 1);
	close(p[0]);
	cr_assert_gt(n, 0, "uroced_lite --pair said nothing");
	line[n] = '\0';
	cr_assert_not_null(strstr(line, "listening"), "uroced_lite --pair: %s", line);
}

static void
stop_pair(void)
{
	int st;

	if (pair_pid > 0) {
		kill(pair_pid, SIGTERM);
		waitpid(pair_pid, &st, 0);
		pair_pid = -1;
	}
	unlink(pair_a);
	unlink(pair_b);
}

/* Run uroce-ctl gen with @p args; its stdout in @p out. @return its exit code. */
static int
run_gen(const char *args, char *out, size_t len)
{
	char cmd[1024], path[64];
	FILE *f;
	size_t n;
	int st;

	snprintf(path, sizeof(path), "/tmp/uroce-test-gen-%d.out", (int)getpid());
	snprintf(cmd, sizeof(cmd), "timeout 60 %s gen --from %s --to %s -x 0 %s >%s 2>&1",
		 getenv("UROCE_CTL"), pair_a, pair_b, args, path);
	st = system(cmd);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	fclose(f);
	unlink(path);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TestSuite(pair, .init = start_pair, .fini = stop_pair, .timeout = 120);

Test(pair, uroce_ctl_gen_verified)
{
	static char out[64 * 1024];
	const char *s;
	int rc;

	rc = run_gen("--qps 3 --ops write,read,send,atomic --sizes 64,2K,5000 -n 6000 "
		     "--window 8 --verify --mtu 1024 -u 16", out, sizeof(out));
	cr_assert_eq(rc, 0, "uroce-ctl gen exit %d:\n%s", rc, out);
	s = strstr(out, "{\"uroce_gen_summary\":1,");
	cr_assert_not_null(s, "no summary:\n%s", out);
	/* The summary's keys come in a fixed order (doc/loadgen.md). */
	cr_expect_not_null(strstr(s, "\"ok\":true,\"stopped_by\":\"done\",\"qps\":3,"), "%s", s);
	cr_expect_not_null(strstr(s, "\"path_mtu\":1024,\"verify\":true,\"qp_timeout\":16,"), "%s", s);
	cr_expect_not_null(strstr(s, "\"total\":{\"msgs\":6000,"), "%s", s);
	cr_expect_not_null(strstr(s, "\"errors\":0,\"verify_bad\":0}"), "%s", s);
	cr_expect_not_null(strstr(s, "\"error\":null,\"atomic_words_match\":true,"), "%s", s);
	cr_expect_not_null(strstr(s, "\"scan_bad\":0"), "%s", s);
	cr_expect_null(strstr(s, "\"write\":0,"), "%s", s);
	cr_expect_null(strstr(s, "\"read\":0,"), "%s", s);
	cr_expect_null(strstr(s, "\"send\":0,"), "%s", s);
	cr_expect_null(strstr(s, "\"fadd\":0,"), "%s", s);
	cr_expect_null(strstr(s, "\"cswap\":0}"), "%s", s);
}

Test(pair, uroce_ctl_gen_refusals)
{
	static char out[16 * 1024];
	int rc;

	/* At uroce-ctl: a mix the daemon would refuse never reaches it. */
	rc = run_gen("--mix cswap:4", out, sizeof(out));
	cr_expect_eq(rc, 2, "exit %d: %s", rc, out);
	cr_expect_not_null(strstr(out, "8 bytes"), "%s", out);
	/* At the daemon: a worker it does not have. */
	rc = run_gen("--worker 1", out, sizeof(out));
	cr_expect_eq(rc, 2, "exit %d: %s", rc, out);
	cr_expect_not_null(strstr(out, "no worker 1"), "%s", out);
	rc = run_gen("--mtu 8192", out, sizeof(out));
	cr_expect_eq(rc, 2, "exit %d: %s", rc, out);
	rc = run_gen("--qp-timeout 32", out, sizeof(out));
	cr_expect_eq(rc, 2, "exit %d: %s", rc, out);
	cr_expect_not_null(strstr(out, "--qp-timeout"), "%s", out);
}
