/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The victim of the hostile-peer suite (test/dpdk/test_hostile_peer.sh): a
 * liburoce client of a live uroced whose QPs a raw-socket peer
 * (hostile_peer.py) attacks from the wire. It holds one 64 KiB shared buffer
 * in which every byte starts as a known function of its offset (the canary
 * pattern), and memory regions that are windows on it with fewer and fewer
 * rights:
 *
 *   rw     0x1000  4 KiB   local write, remote write, read, atomic
 *   stale  0x2000  4 KiB   every right, deregistered at start
 *   ro     0x3000  4 KiB   remote read only
 *   inv    0x4000  4 KiB   every right: the target of remote invalidates
 *   wo     0x5000  4 KiB   local write, remote write
 *   at     0x7000  4 KiB   local write, remote atomic
 *   none   0x9000  4 KiB   local write only
 *   pd2    0xA000  4 KiB   every right, but on a second PD
 *   odd    0xB003  100 B   every right, at an odd address
 *   recv   0xC000  8 KiB   local write: 8 receive slots of 512 B, 512 B apart
 *   loc    0xE000  4 KiB   local write: where this client's own READs and
 *                          atomics land (the completer's half of the attack)
 *
 * plus a second client (another session) with a 16 KiB canary buffer and an
 * MR with every right. Only rw, wo, at, odd, the 512-byte receive slots and
 * loc (and inv) may ever change; "check" compares every other byte of both buffers with
 * the pattern.
 *
 * QPs, connected to the peer's GID (its QPNs from --peer-qpn on):
 *   rc  RC RTS      rc2  RC RTS (requests of its own)   rc6  RC RTS, IPv6 GID
 *   uc  UC RTS      ud   UD RTS (Q_Key 0x11111111)
 *   rtr RC RTR      sqd  RC SQD   init RC INIT   reset RC RESET   err RC ERR
 *   xtgt XRC target QP RTS (IBA 1.2) in domain X, whose XRC SRQ "xsrq" (PD 1,
 *        the shared CQ) receives into the recv slots; "xother" is an XRC SRQ
 *        of another domain of this session receiving into "none", and
 *        "xforeign" one of the second client's domain receiving into its
 *        buffer: neither may ever take a receive (the canary shows it).
 *
 * It reads one command per line on stdin and answers one JSON object per line
 * on stdout (the first one, unasked, is "info"):
 *   info | check | state Q | reset Q | recv Q N | poll | dump MR OFF LEN
 *   fill MR BYTE | post Q OP LEN RADDR RKEY [ADD] | quit
 * OP is read, write, send, fadd or cswap; post uses loc at offset 0 (atomics
 * at 0x800).
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "uroce_verbs.h"

#define BUF_SIZE 0x10000u
#define BUF2_SIZE 0x4000u
#define RQ_SLOTS 8
#define RQ_OFF 0xC000u
#define RQ_SLOT_LEN 512u
#define RQ_STRIDE 1024u
#define RC_PSN_RQ 0x100u
#define RC_PSN_SQ 0x200u
#define QKEY 0x11111111u

struct mrdef {
	const char *name;
	uint32_t off;
	uint32_t len;
	int access;
	bool writable;   /* may change under attack */
	int pd;          /* 1 or 2 */
	struct uroce_mr *mr;
	uint32_t rkey;
};

enum { LW = UROCE_ACCESS_LOCAL_WRITE, RW = UROCE_ACCESS_REMOTE_WRITE,
       RR = UROCE_ACCESS_REMOTE_READ, RA = UROCE_ACCESS_REMOTE_ATOMIC };

static struct mrdef mrs[] = {
	{"rw", 0x1000, 0x1000, LW | RW | RR | RA, true, 1, NULL, 0},
	{"stale", 0x2000, 0x1000, LW | RW | RR | RA, false, 1, NULL, 0},
	{"ro", 0x3000, 0x1000, RR, false, 1, NULL, 0},
	{"inv", 0x4000, 0x1000, LW | RW | RR | RA, true, 1, NULL, 0},
	{"wo", 0x5000, 0x1000, LW | RW, true, 1, NULL, 0},
	{"mwb", 0x6000, 0x1000, LW | UROCE_ACCESS_MW_BIND, true, 1, NULL, 0},
	{"at", 0x7000, 0x1000, LW | RA, true, 1, NULL, 0},
	{"none", 0x9000, 0x1000, LW, false, 1, NULL, 0},
	{"pd2", 0xA000, 0x1000, LW | RW | RR | RA, false, 2, NULL, 0},
	{"odd", 0xB003, 100, LW | RW | RR | RA, true, 1, NULL, 0},
	{"recv", RQ_OFF, 0x2000, LW, false, 1, NULL, 0},
	{"loc", 0xE000, 0x1000, LW, true, 1, NULL, 0},
};
#define N_MRS (sizeof(mrs) / sizeof(mrs[0]))

struct qpdef {
	const char *name;
	uint32_t type;
	uint32_t target;   /* state it is brought to */
	bool ipv6;         /* connected to the peer's IPv6 GID */
	int peer_idx;      /* peer QPN = --peer-qpn + peer_idx */
	struct uroce_qp *qp;
};

static struct qpdef qps[] = {
	{"rc", UROCE_QPT_RC, UROCE_QPS_RTS, false, 0, NULL},
	{"rc2", UROCE_QPT_RC, UROCE_QPS_RTS, false, 1, NULL},
	{"rc6", UROCE_QPT_RC, UROCE_QPS_RTS, true, 2, NULL},
	{"uc", UROCE_QPT_UC, UROCE_QPS_RTS, false, 3, NULL},
	{"ud", UROCE_QPT_UD, UROCE_QPS_RTS, false, 4, NULL},
	{"rtr", UROCE_QPT_RC, UROCE_QPS_RTR, false, 5, NULL},
	{"sqd", UROCE_QPT_RC, UROCE_QPS_SQD, false, 6, NULL},
	{"init", UROCE_QPT_RC, UROCE_QPS_INIT, false, 7, NULL},
	{"reset", UROCE_QPT_RC, UROCE_QPS_RESET, false, 8, NULL},
	{"err", UROCE_QPT_RC, UROCE_QPS_ERR, false, 9, NULL},
	{"xtgt", UROCE_QPT_XRC_RECV, UROCE_QPS_RTS, false, 10, NULL},
};
#define N_QPS (sizeof(qps) / sizeof(qps[0]))

static struct uroce_context *ctx, *ctx2;
/* XRC: this session's two domains and the second client's one, an SRQ each */
static struct uroce_xrcd *xd, *xd_other, *xd_foreign;
static struct uroce_srq *xsrq, *xsrq_other, *xsrq_foreign;
static struct uroce_cq *cq2;
static struct uroce_pd *pd, *pd2, *pdx;
static struct uroce_cq *cq;
static uint8_t *buf, *buf2;
static struct uroce_mr *mr2;
static uint8_t peer_gid4[16], peer_gid6[16];
static uint32_t peer_qpn;
static int gid4_index = 1, gid6_index = 2;
static uint32_t rq_next; /* next receive slot, round robin */

static void
die(const char *what, int err)
{
	printf("{\"fatal\":\"%s: %s\"}\n", what, strerror(err));
	fflush(stdout);
	exit(1);
}

static uint8_t
pattern(uint32_t off, uint32_t salt)
{
	return (uint8_t)((off * 131u + (off >> 8) * 7u + salt) ^ 0x5A);
}

static struct mrdef *
mr_by_name(const char *n)
{
	size_t i;

	for (i = 0; i < N_MRS; i++)
		if (strcmp(mrs[i].name, n) == 0)
			return &mrs[i];
	return NULL;
}

static struct qpdef *
qp_by_name(const char *n)
{
	size_t i;

	for (i = 0; i < N_QPS; i++)
		if (strcmp(qps[i].name, n) == 0)
			return &qps[i];
	return NULL;
}

static bool
byte_writable(uint32_t off)
{
	size_t i;

	for (i = 0; i < N_MRS; i++)
		if (mrs[i].writable && off >= mrs[i].off && off < mrs[i].off + mrs[i].len)
			return true;
	if (off >= RQ_OFF && off < RQ_OFF + RQ_SLOTS * RQ_STRIDE &&
	    (off - RQ_OFF) % RQ_STRIDE < RQ_SLOT_LEN)
		return true;
	return false;
}

/* ------------------------------------------------------------------------ */

static int
qp_bring_up(struct qpdef *d)
{
	struct uroce_qp_attr a;
	int r;

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RESET;
	r = uroce_modify_qp(d->qp, &a, UROCE_QP_STATE);
	if (r != 0 || d->target == UROCE_QPS_RESET)
		return r;
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.port_num = 1;
	a.qkey = QKEY;
	a.qp_access_flags = LW | RW | RR | RA;
	r = uroce_modify_qp(d->qp, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
			    (d->type == UROCE_QPT_UD ? UROCE_QP_QKEY : UROCE_QP_ACCESS_FLAGS));
	if (r != 0 || d->target == UROCE_QPS_INIT)
		return r;
	if (d->target == UROCE_QPS_ERR) {
		a.qp_state = UROCE_QPS_ERR;
		return uroce_modify_qp(d->qp, &a, UROCE_QP_STATE);
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTR;
	if (d->type != UROCE_QPT_UD) {
		a.path_mtu = 3; /* 1024 */
		a.dest_qp_num = peer_qpn + (uint32_t)d->peer_idx;
		a.rq_psn = RC_PSN_RQ;
		memcpy(a.ah_attr.dgid, d->ipv6 ? peer_gid6 : peer_gid4, 16);
		a.ah_attr.sgid_index = (uint8_t)(d->ipv6 ? gid6_index : gid4_index);
		a.ah_attr.port_num = 1;
		a.ah_attr.hop_limit = 64;
		a.max_dest_rd_atomic = 8;
		a.min_rnr_timer = 1;
		r = uroce_modify_qp(d->qp, &a, UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU |
				    UROCE_QP_DEST_QPN | UROCE_QP_RQ_PSN |
				    (d->type == UROCE_QPT_RC || d->type == UROCE_QPT_XRC_RECV ?
				     UROCE_QP_MAX_DEST_RD_ATOMIC | UROCE_QP_MIN_RNR_TIMER : 0));
	} else {
		r = uroce_modify_qp(d->qp, &a, UROCE_QP_STATE);
	}
	if (r != 0 || d->target == UROCE_QPS_RTR)
		return r;
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTS;
	a.sq_psn = RC_PSN_SQ;
	a.timeout = 18;   /* 1 s: the peer answers the completer tests slowly */
	a.retry_cnt = 2;
	a.rnr_retry = 1;
	a.max_rd_atomic = 4;
	/* An XRC target has no send side: of RC's RTS attributes it takes
	 * the timeout only (as the kernel's transition table). */
	r = uroce_modify_qp(d->qp, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN |
			    (d->type == UROCE_QPT_RC ? UROCE_QP_TIMEOUT | UROCE_QP_RETRY_CNT |
			     UROCE_QP_RNR_RETRY | UROCE_QP_MAX_QP_RD_ATOMIC :
			     d->type == UROCE_QPT_XRC_RECV ? UROCE_QP_TIMEOUT : 0));
	if (r != 0 || d->target == UROCE_QPS_RTS)
		return r;
	a.qp_state = UROCE_QPS_SQD;
	return uroce_modify_qp(d->qp, &a, UROCE_QP_STATE);
}

static int
post_recvs(struct qpdef *d, int n)
{
	const struct mrdef *rq = mr_by_name("recv");
	int i, r = 0;

	for (i = 0; i < n && r == 0; i++) {
		uint32_t slot = rq_next++ % RQ_SLOTS;
		struct uroce_sge s = {(uintptr_t)(buf + RQ_OFF + slot * RQ_STRIDE), RQ_SLOT_LEN,
				      rq->mr->lkey};
		struct uroce_recv_wr w = {.wr_id = 0x7000 + slot, .sg_list = &s, .num_sge = 1};

		/* An XRC target's receives come from its domain's SRQ. */
		r = d->type == UROCE_QPT_XRC_RECV ? uroce_post_srq_recv(xsrq, &w, NULL) :
						    uroce_post_recv(d->qp, &w, NULL);
	}
	return r;
}

/* One receive of @p len bytes at @p addr (MR @p mr) on the XRC SRQ @p srq,
 * which must never be consumed (the attack names it from the wrong domain). */
static void
xrc_bait(struct uroce_srq *srq, struct uroce_mr *mr, uint8_t *addr, uint32_t len)
{
	struct uroce_sge s = {(uintptr_t)addr, len, mr->lkey};
	struct uroce_recv_wr w = {.wr_id = 0xBA17, .sg_list = &s, .num_sge = 1};

	if (uroce_post_srq_recv(srq, &w, NULL) != 0)
		die("xrc bait", EIO);
}

/* Domain X with its SRQ (the recv slots), another domain of this session and
 * one of the second client, each with an SRQ that holds one bait receive. */
static void
xrc_setup(void)
{
	struct uroce_srq_init_attr si;

	xd = uroce_open_xrcd(ctx);
	xd_other = uroce_open_xrcd(ctx);
	xd_foreign = uroce_open_xrcd(ctx2);
	cq2 = uroce_create_cq(ctx2, 16, NULL);
	if (xd == NULL || xd_other == NULL || xd_foreign == NULL || cq2 == NULL)
		die("xrc domains", errno);
	memset(&si, 0, sizeof(si));
	si.attr.max_wr = 64;
	si.attr.max_sge = 1;
	xsrq = uroce_create_xrc_srq(pd, xd, cq, &si);
	xsrq_other = uroce_create_xrc_srq(pd, xd_other, cq, &si);
	xsrq_foreign = uroce_create_xrc_srq(pdx, xd_foreign, cq2, &si);
	if (xsrq == NULL || xsrq_other == NULL || xsrq_foreign == NULL)
		die("xrc srqs", errno);
	xrc_bait(xsrq_other, mr_by_name("none")->mr, buf + mr_by_name("none")->off, 256);
	xrc_bait(xsrq_foreign, mr2, buf2 + 0x1000, 256);
}

static void
setup(const char *sock)
{
	struct uroce_qp_init_attr ia;
	size_t i;
	uint32_t k;

	ctx = uroce_open_device(sock);
	ctx2 = uroce_open_device(sock);
	if (ctx == NULL || ctx2 == NULL)
		die("uroce_open_device", errno);
	pd = uroce_alloc_pd(ctx);
	pd2 = uroce_alloc_pd(ctx);
	pdx = uroce_alloc_pd(ctx2);
	buf = uroce_alloc_buf(ctx, BUF_SIZE);
	buf2 = uroce_alloc_buf(ctx2, BUF2_SIZE);
	cq = uroce_create_cq(ctx, 256, NULL);
	if (pd == NULL || pd2 == NULL || pdx == NULL || buf == NULL || buf2 == NULL || cq == NULL)
		die("objects", errno);
	for (k = 0; k < BUF_SIZE; k++)
		buf[k] = pattern(k, 0);
	for (k = 0; k < BUF2_SIZE; k++)
		buf2[k] = pattern(k, 77);
	for (i = 0; i < N_MRS; i++) {
		struct mrdef *m = &mrs[i];

		m->mr = uroce_reg_mr(m->pd == 2 ? pd2 : pd, buf + m->off, m->len, m->access);
		if (m->mr == NULL)
			die(m->name, errno);
		m->rkey = m->mr->rkey;
	}
	mr2 = uroce_reg_mr(pdx, buf2, BUF2_SIZE, LW | RW | RR | RA);
	if (mr2 == NULL)
		die("reg_mr ctx2", errno);
	/* stale: its key is remembered, the MR is gone. */
	if (uroce_dereg_mr(mr_by_name("stale")->mr) != 0)
		die("dereg stale", EIO);
	mr_by_name("stale")->mr = NULL;
	xrc_setup();
	for (i = 0; i < N_QPS; i++) {
		if (qps[i].type == UROCE_QPT_XRC_RECV) {
			qps[i].qp = uroce_create_xrc_tgt_qp(xd, NULL);
			if (qps[i].qp == NULL)
				die(qps[i].name, errno);
			if (qp_bring_up(&qps[i]) != 0)
				die("bring up", EINVAL);
			continue;
		}
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = cq;
		ia.recv_cq = cq;
		ia.qp_type = qps[i].type;
		ia.cap.max_send_wr = 16;
		ia.cap.max_recv_wr = 16;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		qps[i].qp = uroce_create_qp(pd, &ia);
		if (qps[i].qp == NULL)
			die(qps[i].name, errno);
		if (qp_bring_up(&qps[i]) != 0)
			die("bring up", EINVAL);
	}
}

/* ------------------------------------------------------------------------ */

static void
cmd_info(void)
{
	size_t i;
	uint8_t gid[16];
	char g4[64], g6[64];

	g4[0] = g6[0] = '\0';
	if (uroce_query_gid(ctx, 1, gid4_index, gid) == 0)
		inet_ntop(AF_INET6, gid, g4, sizeof(g4));
	if (uroce_query_gid(ctx, 1, gid6_index, gid) == 0)
		inet_ntop(AF_INET6, gid, g6, sizeof(g6));
	printf("{\"info\":true,\"gid4\":\"%s\",\"gid6\":\"%s\",\"base\":%" PRIu64
	       ",\"rq_psn\":%u,\"sq_psn\":%u,\"qkey\":%u,\"mrs\":{", g4, g6,
	       (uint64_t)(uintptr_t)buf, RC_PSN_RQ, RC_PSN_SQ, QKEY);
	for (i = 0; i < N_MRS; i++)
		printf("%s\"%s\":{\"addr\":%" PRIu64 ",\"len\":%u,\"rkey\":%u}", i ? "," : "",
		       mrs[i].name, (uint64_t)(uintptr_t)(buf + mrs[i].off), mrs[i].len,
		       mrs[i].rkey);
	printf(",\"other\":{\"addr\":%" PRIu64 ",\"len\":%u,\"rkey\":%u}},\"srqs\":{"
	       "\"xsrq\":%u,\"xother\":%u,\"xforeign\":%u},\"qps\":{",
	       (uint64_t)(uintptr_t)buf2, BUF2_SIZE, mr2->rkey, xsrq->srq_num,
	       xsrq_other->srq_num, xsrq_foreign->srq_num);
	for (i = 0; i < N_QPS; i++)
		printf("%s\"%s\":%u", i ? "," : "", qps[i].name, qps[i].qp->qp_num);
	printf("}}\n");
}

static void
cmd_check(void)
{
	uint32_t k, bad = 0, first = UINT32_MAX, bad2 = 0;

	for (k = 0; k < BUF_SIZE; k++) {
		if (!byte_writable(k) && buf[k] != pattern(k, 0)) {
			if (first == UINT32_MAX)
				first = k;
			bad++;
		}
	}
	for (k = 0; k < BUF2_SIZE; k++)
		if (buf2[k] != pattern(k, 77))
			bad2++;
	printf("{\"ok\":%s,\"bad\":%u,\"first\":%d,\"bad_other_client\":%u}\n",
	       bad == 0 && bad2 == 0 ? "true" : "false", bad,
	       first == UINT32_MAX ? -1 : (int)first, bad2);
}

static int
qp_state(struct qpdef *d)
{
	struct uroce_qp_attr a;
	struct uroce_qp_init_attr ia;

	if (uroce_query_qp(d->qp, &a, UROCE_QP_STATE, &ia) != 0)
		return -1;
	return (int)a.qp_state;
}

static void
cmd_poll(void)
{
	struct uroce_wc wc[16];
	int n, i, total = 0;

	printf("{\"wc\":[");
	while ((n = uroce_poll_cq(cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++, total++)
			printf("%s{\"wr_id\":%" PRIu64 ",\"status\":%u,\"opcode\":%u,\"len\":%u,"
			       "\"qpn\":%u,\"imm\":%u,\"flags\":%u}", total ? "," : "",
			       wc[i].wr_id, wc[i].status, wc[i].opcode, wc[i].byte_len,
			       wc[i].qp_num, wc[i].imm_data, wc[i].wc_flags);
	}
	printf("]}\n");
}

/* The completion of @p wr_id from the shared CQ (others are dropped: the
 * suite asks for these right after a reset, with nothing else in flight). */
static int
wait_wr(uint64_t wr_id)
{
	struct uroce_wc wc;
	int i;

	for (i = 0; i < 100000; i++) {
		if (uroce_poll_cq(cq, 1, &wc) == 1 && wc.wr_id == wr_id)
			return (int)wc.status;
		usleep(10);
	}
	return -ETIMEDOUT;
}

/* mw Q TYPE OFF LEN ACCESS: a new window of the PD, bound through QP Q over
 * [OFF, OFF + LEN) of MR mwb. mwinv Q RKEY: LOCAL_INV through QP Q. */
static void
cmd_mw(struct qpdef *d, int type, uint32_t off, uint32_t len, uint32_t access)
{
	const struct mrdef *m = mr_by_name("mwb");
	struct uroce_mw *mw = uroce_alloc_mw(pd, type);
	struct uroce_send_wr w;
	int r;

	if (mw == NULL) {
		printf("{\"rc\":%d}\n", -errno);
		return;
	}
	memset(&w, 0, sizeof(w));
	w.wr_id = 0x6000;
	w.opcode = UROCE_WR_BIND_MW;
	w.send_flags = UROCE_SEND_SIGNALED;
	w.wr.bind_mw.rkey = (mw->rkey & ~0xFFu) | ((mw->rkey + 1) & 0xFF);
	w.wr.bind_mw.mr_lkey = m->mr->lkey;
	w.wr.bind_mw.addr = (uintptr_t)(buf + m->off + off);
	w.wr.bind_mw.length = len;
	w.wr.bind_mw.access = access;
	r = uroce_post_send(d->qp, &w, NULL);
	printf("{\"rc\":%d,\"status\":%d,\"rkey\":%u,\"addr\":%" PRIu64 "}\n", r,
	       r == 0 ? wait_wr(0x6000) : -1, w.wr.bind_mw.rkey, w.wr.bind_mw.addr);
}

static void
cmd_mwinv(struct qpdef *d, uint32_t rkey)
{
	struct uroce_send_wr w;
	int r;

	memset(&w, 0, sizeof(w));
	w.wr_id = 0x6001;
	w.opcode = UROCE_WR_LOCAL_INV;
	w.send_flags = UROCE_SEND_SIGNALED;
	w.imm_data = rkey;
	r = uroce_post_send(d->qp, &w, NULL);
	printf("{\"rc\":%d,\"status\":%d}\n", r, r == 0 ? wait_wr(0x6001) : -1);
}

static void
cmd_dump(const char *name, uint32_t off, uint32_t len)
{
	const struct mrdef *m = mr_by_name(name);
	uint32_t k;

	if (m == NULL || off > m->len || len > m->len - off) {
		printf("{\"error\":\"bad range\"}\n");
		return;
	}
	printf("{\"hex\":\"");
	for (k = 0; k < len; k++)
		printf("%02x", buf[m->off + off + k]);
	printf("\"}\n");
}

static void
cmd_post(struct qpdef *d, const char *op, uint32_t len, uint64_t raddr, uint32_t rkey,
	 uint64_t add)
{
	const struct mrdef *loc = mr_by_name("loc");
	struct uroce_sge s = {(uintptr_t)(buf + loc->off), len, loc->mr->lkey};
	struct uroce_send_wr w;
	int r;

	memset(&w, 0, sizeof(w));
	w.wr_id = 0x5000;
	w.sg_list = &s;
	w.num_sge = 1;
	w.send_flags = UROCE_SEND_SIGNALED;
	if (strcmp(op, "read") == 0) {
		w.opcode = UROCE_WR_RDMA_READ;
	} else if (strcmp(op, "write") == 0) {
		w.opcode = UROCE_WR_RDMA_WRITE;
	} else if (strcmp(op, "send") == 0) {
		w.opcode = UROCE_WR_SEND;
	} else if (strcmp(op, "fadd") == 0 || strcmp(op, "cswap") == 0) {
		w.opcode = op[0] == 'f' ? UROCE_WR_ATOMIC_FETCH_AND_ADD
					: UROCE_WR_ATOMIC_CMP_AND_SWP;
		s.addr = (uintptr_t)(buf + loc->off + 0x800);
		s.length = 8;
		w.wr.atomic.remote_addr = raddr;
		w.wr.atomic.rkey = rkey;
		w.wr.atomic.compare_add = add;
		w.wr.atomic.swap = add;
	} else {
		printf("{\"error\":\"bad op\"}\n");
		return;
	}
	if (w.opcode != UROCE_WR_ATOMIC_FETCH_AND_ADD && w.opcode != UROCE_WR_ATOMIC_CMP_AND_SWP) {
		w.wr.rdma.remote_addr = raddr;
		w.wr.rdma.rkey = rkey;
	}
	r = uroce_post_send(d->qp, &w, NULL);
	printf("{\"rc\":%d}\n", r);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"socket", required_argument, NULL, 's'},
		{"peer4", required_argument, NULL, '4'},
		{"peer6", required_argument, NULL, '6'},
		{"peer-qpn", required_argument, NULL, 'q'},
		{"gid4-index", required_argument, NULL, 'a'},
		{"gid6-index", required_argument, NULL, 'b'},
		{NULL, 0, NULL, 0},
	};
	const char *sock = NULL;
	char line[256];
	int c;

	peer_qpn = 0x100;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			sock = optarg;
			break;
		case '4':
		case '6':
			if (inet_pton(AF_INET6, optarg, c == '4' ? peer_gid4 : peer_gid6) != 1)
				die("bad GID", EINVAL);
			break;
		case 'q':
			peer_qpn = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'a':
			gid4_index = atoi(optarg);
			break;
		case 'b':
			gid6_index = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: hostile_victim --socket S --peer4 GID --peer6 GID "
				"[--peer-qpn N] [--gid4-index I] [--gid6-index I]\n");
			return 2;
		}
	}
	setlinebuf(stdout);
	setup(sock);
	post_recvs(qp_by_name("rc"), 4);
	post_recvs(qp_by_name("uc"), 2);
	post_recvs(qp_by_name("ud"), 2);
	post_recvs(qp_by_name("xtgt"), 4);
	cmd_info();
	while (fgets(line, sizeof(line), stdin) != NULL) {
		char w0[16] = "", w1[16] = "", w2[16] = "";
		unsigned long long a3 = 0, a4 = 0, a5 = 0, a6 = 0;
		int n = sscanf(line, "%15s %15s %15s %lli %lli %lli %lli", w0, w1, w2, &a3, &a4,
			       &a5, &a6);
		struct qpdef *d = n >= 2 ? qp_by_name(w1) : NULL;

		if (n < 1)
			continue;
		if (strcmp(w0, "quit") == 0)
			break;
		if (strcmp(w0, "info") == 0) {
			cmd_info();
		} else if (strcmp(w0, "check") == 0) {
			cmd_check();
		} else if (strcmp(w0, "poll") == 0) {
			cmd_poll();
		} else if (strcmp(w0, "state") == 0 && d != NULL) {
			printf("{\"state\":%d}\n", qp_state(d));
		} else if (strcmp(w0, "reset") == 0 && d != NULL) {
			int r = qp_bring_up(d);

			/* A QP that receives gets its receive WQEs again (RESET
			 * dropped them). */
			if (r == 0 && d->target >= UROCE_QPS_RTR && d->target <= UROCE_QPS_SQD &&
			    d->type != UROCE_QPT_XRC_RECV)
				r = post_recvs(d, 4);
			printf("{\"rc\":%d,\"state\":%d}\n", r, qp_state(d));
		} else if (strcmp(w0, "recv") == 0 && d != NULL) {
			printf("{\"rc\":%d}\n", post_recvs(d, (int)strtol(w2, NULL, 0)));
		} else if (strcmp(w0, "dump") == 0 && n >= 4) {
			cmd_dump(w1, (uint32_t)strtoul(w2, NULL, 0), (uint32_t)a3);
		} else if (strcmp(w0, "fill") == 0 && n >= 3) {
			struct mrdef *m = mr_by_name(w1);

			if (m != NULL && m->writable)
				memset(buf + m->off, (int)strtol(w2, NULL, 0), m->len);
			printf("{\"rc\":%d}\n", m != NULL && m->writable ? 0 : -EINVAL);
		} else if (strcmp(w0, "mw") == 0 && d != NULL && n >= 6) {
			cmd_mw(d, (int)strtol(w2, NULL, 0), (uint32_t)a3, (uint32_t)a4,
			       (uint32_t)a5);
		} else if (strcmp(w0, "mwinv") == 0 && d != NULL && n >= 3) {
			cmd_mwinv(d, (uint32_t)strtoul(w2, NULL, 0));
		} else if (strcmp(w0, "post") == 0 && d != NULL && n >= 6) {
			/* post Q OP LEN RADDR RKEY [ADD] */
			cmd_post(d, w2, (uint32_t)a3, a4, (uint32_t)a5, a6);
		} else {
			printf("{\"error\":\"unknown command\"}\n");
		}
	}
	return 0;
}
