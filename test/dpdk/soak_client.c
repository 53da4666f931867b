/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The client of the soak and churn tests (test_churn.sh, test_soak.sh): one
 * process, two liburoce contexts, one on each of two uroced joined by a wire.
 *
 *   soak_client churn --a SOCK --b SOCK --cycles N
 *       N times: an RC QP on each side, connected to each other, one WRITE
 *       whose bytes are checked where they land, both QPs destroyed. Every
 *       100 cycles the CQs and MRs are destroyed and made again too.
 *
 *   soak_client mixed --a SOCK --b SOCK --seconds S [--depth D]
 *       One RC QP pair kept busy for S seconds with WRITE, READ, SEND and
 *       FETCH_ADD, up to D at once, while the wire drops, duplicates and
 *       reorders (the daemons' fault_* keys). Checked: every WRITE's bytes
 *       where they land, every READ's bytes, every SEND received exactly once
 *       and in order with its own bytes, every FETCH_ADD executed exactly once
 *       (each returns the count of those before it; the counter ends at the
 *       number posted), and every completion successful.
 *
 * --gid I picks the GID index both sides use (1: IPv4, 2: IPv6), --timeout N
 * the local ACK timeout code (default 16, 268 ms), --ops M the operations
 * mixed (bit 0 WRITE, 1 READ, 2 SEND, 3 FETCH_ADD; default 15). The last
 * line is one JSON object with what was done; exit 0 means every check
 * passed.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uroce_verbs.h"

#define ACCESS (UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | \
		UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC)

#define FAIL(...)                                         \
	do {                                              \
		fprintf(stderr, "soak_client: " __VA_ARGS__); \
		fprintf(stderr, "\n");                    \
		exit(1);                                  \
	} while (0)

static int gid_index = 1;
/* Local ACK timeout code (4.096 us * 2^n): 16 (268 ms) by default, so that
 * retry_cnt = 7 (2.1 s) outlasts a worker descheduled for half a second on a
 * busy 2-core machine (seen: 0.5 s under a load of 18); a WQE that is never
 * answered still ends in RETRY_EXC_ERR within seconds. */
static uint8_t ack_timeout = 16;
/* Operations mixed: bit 0 WRITE, 1 READ, 2 SEND, 3 FETCH_ADD (--ops). */
static unsigned int op_mask = 15;

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct side {
	struct uroce_context *ctx;
	struct uroce_pd *pd;
	struct uroce_cq *cq;
	uint8_t *buf;
	size_t len;
	struct uroce_mr *mr;
	uint8_t gid[16];
};

static void
side_open(struct side *s, const char *sock, size_t len)
{
	s->ctx = uroce_open_device(sock);
	if (s->ctx == NULL)
		FAIL("open %s: %s", sock, strerror(errno));
	if (uroce_query_gid(s->ctx, 1, gid_index, s->gid) != 0)
		FAIL("no GID %d on %s", gid_index, sock);
	s->pd = uroce_alloc_pd(s->ctx);
	s->buf = uroce_alloc_buf(s->ctx, len);
	if (s->pd == NULL || s->buf == NULL)
		FAIL("pd/buf: %s", strerror(errno));
	s->len = len;
}

static void
side_objects(struct side *s, int cqe)
{
	s->cq = uroce_create_cq(s->ctx, cqe, NULL);
	s->mr = uroce_reg_mr(s->pd, s->buf, s->len, ACCESS);
	if (s->cq == NULL || s->mr == NULL)
		FAIL("cq/mr: %s", strerror(errno));
}

static void
side_objects_free(struct side *s)
{
	if (uroce_dereg_mr(s->mr) != 0 || uroce_destroy_cq(s->cq) != 0)
		FAIL("dereg/destroy_cq");
}

static struct uroce_qp *
qp_new(struct side *s, uint32_t depth)
{
	struct uroce_qp_init_attr ia;
	struct uroce_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	ia.qp_type = UROCE_QPT_RC;
	ia.cap.max_send_wr = depth;
	ia.cap.max_recv_wr = depth;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = uroce_create_qp(s->pd, &ia);
	if (qp == NULL)
		FAIL("create_qp: %s", strerror(errno));
	return qp;
}

static void
qp_connect(struct uroce_qp *qp, const uint8_t dgid[16], uint32_t dqpn, uint32_t sq_psn,
	   uint32_t rq_psn)
{
	struct uroce_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = ACCESS;
	if (uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
			    UROCE_QP_ACCESS_FLAGS) != 0)
		FAIL("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTR;
	a.path_mtu = 3;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	memcpy(a.ah_attr.dgid, dgid, 16);
	a.ah_attr.sgid_index = (uint8_t)gid_index;
	a.ah_attr.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU |
			    UROCE_QP_DEST_QPN | UROCE_QP_RQ_PSN | UROCE_QP_MAX_DEST_RD_ATOMIC |
			    UROCE_QP_MIN_RNR_TIMER) != 0)
		FAIL("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = ack_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	if (uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN | UROCE_QP_TIMEOUT |
			    UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY |
			    UROCE_QP_MAX_QP_RD_ATOMIC) != 0)
		FAIL("RTS");
}

static void
post(struct uroce_qp *qp, uint32_t op, uint64_t wr_id, void *local, uint32_t len, uint32_t lkey,
     uint64_t raddr, uint32_t rkey)
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
		w.wr.atomic.compare_add = 1;
	} else {
		w.wr.rdma.remote_addr = raddr;
		w.wr.rdma.rkey = rkey;
	}
	rc = uroce_post_send(qp, &w, NULL);
	if (rc != 0)
		FAIL("post_send op %u: %s", op, strerror(-rc));
}

static void
post_recv(struct uroce_qp *qp, uint64_t wr_id, void *buf, uint32_t len, uint32_t lkey)
{
	struct uroce_sge s = {(uintptr_t)buf, len, lkey};
	struct uroce_recv_wr w = {.wr_id = wr_id, .sg_list = &s, .num_sge = 1};

	if (uroce_post_recv(qp, &w, NULL) != 0)
		FAIL("post_recv");
}

static void
wait_one(struct uroce_cq *cq, struct uroce_wc *wc)
{
	double end = now_s() + 30;
	int n;

	while ((n = uroce_poll_cq(cq, 1, wc)) == 0) {
		if (now_s() > end)
			FAIL("no completion in 30 s");
		usleep(10);
	}
	if (n < 0)
		FAIL("poll_cq: %s", strerror(-n));
	if (wc->status != UROCE_WC_SUCCESS)
		FAIL("wr %" PRIu64 ": status %u", wc->wr_id, wc->status);
}

static uint8_t
pat(uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 2654435761u >> 7 ^ i * 31u ^ i >> 8);
}

/* ------------------------------------------------------------------------ */

static int
churn(struct side *a, struct side *b, unsigned long cycles)
{
	unsigned long c;
	double t0 = now_s();

	side_objects(a, 16);
	side_objects(b, 16);
	for (c = 0; c < cycles; c++) {
		struct uroce_qp *qa, *qb;
		struct uroce_wc wc;
		uint32_t i, len = 64 + (uint32_t)(c % 8) * 100;

		if (c > 0 && c % 100 == 0) {
			side_objects_free(a);
			side_objects_free(b);
			side_objects(a, 16);
			side_objects(b, 16);
		}
		qa = qp_new(a, 4);
		qb = qp_new(b, 4);
		qp_connect(qa, b->gid, qb->qp_num, (uint32_t)c * 7 & 0xFFFFFF, 0x300);
		qp_connect(qb, a->gid, qa->qp_num, 0x300, (uint32_t)c * 7 & 0xFFFFFF);
		for (i = 0; i < len; i++)
			a->buf[i] = pat(c, i);
		post(qa, UROCE_WR_RDMA_WRITE, c, a->buf, len, a->mr->lkey,
		     (uintptr_t)b->buf + 4096, b->mr->rkey);
		wait_one(a->cq, &wc);
		if (memcmp(b->buf + 4096, a->buf, len) != 0)
			FAIL("cycle %lu: WRITE of %u bytes landed wrong", c, len);
		if (uroce_destroy_qp(qa) != 0 || uroce_destroy_qp(qb) != 0)
			FAIL("cycle %lu: destroy_qp", c);
	}
	side_objects_free(a);
	side_objects_free(b);
	printf("{\"mode\":\"churn\",\"cycles\":%lu,\"seconds\":%.1f}\n", cycles, now_s() - t0);
	return 0;
}

/* ------------------------------------------------------------------------ */

/* Layout of each side's buffer in mixed mode. */
#define M_SLOTS 256u
#define M_SLOT 4096u
#define M_DST 0                          /* B: WRITE targets, READ sources */
#define M_SRC (M_SLOTS * M_SLOT)         /* A: WRITE and SEND sources */
#define M_RD (2 * M_SLOTS * M_SLOT)      /* A: READ destinations */
#define M_RECV (3 * M_SLOTS * M_SLOT)    /* B: receive buffers */
#define M_ATOM (4 * M_SLOTS * M_SLOT)    /* B: the counter; A: results */
#define M_SIZE (M_ATOM + M_SLOTS * 8 + 4096)

enum { OP_WRITE, OP_READ, OP_SEND, OP_FADD };

struct inflight {
	int op;
	uint64_t seq;   /* per-op sequence */
	uint32_t slot;
	uint32_t len;
	bool busy;
};

static int
mixed(struct side *a, struct side *b, double seconds, uint32_t depth)
{
	struct inflight fl[64];
	struct uroce_qp *qa, *qb;
	uint64_t n_op[4] = {0}, done_op[4] = {0}, bytes = 0;
	uint64_t send_seq = 0, recv_seq = 0, fadd_seq = 0, fadd_done = 0;
	uint64_t rng = 88172645463325252ull;
	uint32_t recv_len[64], i, busy = 0;
	double t0 = now_s(), end = t0 + seconds;
	uint64_t counter;

	if (depth > 64 || depth == 0)
		FAIL("depth 1..64");
	side_objects(a, 256);
	side_objects(b, 256);
	memset(b->buf + M_ATOM, 0, 8);
	qa = qp_new(a, depth);
	qb = qp_new(b, depth);
	qp_connect(qa, b->gid, qb->qp_num, 0xFFFF00, 0x500); /* across the 2^24 wrap */
	qp_connect(qb, a->gid, qa->qp_num, 0x500, 0xFFFF00);
	memset(fl, 0, sizeof(fl));
	for (i = 0; i < depth; i++)
		post_recv(qb, i, b->buf + M_RECV + i * M_SLOT, M_SLOT, b->mr->lkey);
	while (now_s() < end || busy > 0) {
		struct uroce_wc wc[16];
		int n, k;

		/* Post while there is room (and time). */
		while (busy < depth && now_s() < end) {
			struct inflight *f = NULL;
			uint32_t off, j;

			for (i = 0; i < depth; i++)
				if (!fl[i].busy) {
					f = &fl[i];
					break;
				}
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			do {
				rng ^= rng << 13;
				rng ^= rng >> 7;
				rng ^= rng << 17;
				f->op = (int)(rng % 4);
			} while (!(op_mask & 1u << f->op));
			f->slot = (uint32_t)(f - fl);
			f->len = 1 + (uint32_t)(rng >> 20) % M_SLOT;
			f->busy = true;
			busy++;
			off = f->slot * M_SLOT;
			switch (f->op) {
			case OP_WRITE:
				f->seq = n_op[OP_WRITE];
				for (j = 0; j < f->len; j++)
					a->buf[M_SRC + off + j] = pat(f->seq, j);
				post(qa, UROCE_WR_RDMA_WRITE, f->slot, a->buf + M_SRC + off, f->len,
				     a->mr->lkey, (uintptr_t)(b->buf + M_DST + off), b->mr->rkey);
				break;
			case OP_READ:
				/* Read back what B's slot holds now (nobody writes it
				 * while this slot is busy). */
				memset(a->buf + M_RD + off, 0, f->len);
				post(qa, UROCE_WR_RDMA_READ, f->slot, a->buf + M_RD + off, f->len,
				     a->mr->lkey, (uintptr_t)(b->buf + M_DST + off), b->mr->rkey);
				break;
			case OP_SEND:
				/* The first 8 bytes carry the sequence number. */
				f->seq = send_seq++;
				if (f->len < 8)
					f->len = 8;
				for (j = 0; j < f->len; j++)
					a->buf[M_SRC + off + j] = pat(f->seq ^ 0xABCD, j);
				memcpy(a->buf + M_SRC + off, &f->seq, 8);
				post(qa, UROCE_WR_SEND, f->slot, a->buf + M_SRC + off, f->len,
				     a->mr->lkey, 0, 0);
				recv_len[f->seq % 64] = f->len;
				break;
			default:
				f->seq = fadd_seq++;
				f->len = 8;
				post(qa, UROCE_WR_ATOMIC_FETCH_AND_ADD, f->slot,
				     a->buf + M_ATOM + f->slot * 8, 8, a->mr->lkey,
				     (uintptr_t)(b->buf + M_ATOM), b->mr->rkey);
				break;
			}
			n_op[f->op]++;
		}
		n = uroce_poll_cq(a->cq, 16, wc);
		if (n < 0)
			FAIL("poll_cq A: %s", strerror(-n));
		for (k = 0; k < n; k++) {
			struct inflight *f = &fl[wc[k].wr_id];
			uint32_t off = f->slot * M_SLOT, j;
			uint64_t old;

			if (wc[k].status != UROCE_WC_SUCCESS)
				FAIL("op %d slot %u: status %u", f->op, f->slot, wc[k].status);
			switch (f->op) {
			case OP_WRITE:
				for (j = 0; j < f->len; j++)
					if (b->buf[M_DST + off + j] != pat(f->seq, j))
						FAIL("WRITE %" PRIu64 ": byte %u wrong", f->seq, j);
				break;
			case OP_READ:
				if (memcmp(a->buf + M_RD + off, b->buf + M_DST + off, f->len) != 0)
					FAIL("READ of slot %u: wrong bytes", f->slot);
				break;
			case OP_FADD:
				memcpy(&old, a->buf + M_ATOM + f->slot * 8, 8);
				/* RC executes atomics in order, each once: the k-th
				 * returns k. */
				if (old != f->seq)
					FAIL("FETCH_ADD %" PRIu64 " returned %" PRIu64, f->seq,
					     old);
				fadd_done++;
				break;
			default:
				break;
			}
			bytes += f->len;
			done_op[f->op]++;
			f->busy = false;
			busy--;
		}
		/* B: every SEND once, in order, with its own bytes. */
		n = uroce_poll_cq(b->cq, 16, wc);
		if (n < 0)
			FAIL("poll_cq B: %s", strerror(-n));
		for (k = 0; k < n; k++) {
			uint8_t *m = b->buf + M_RECV + wc[k].wr_id * M_SLOT;
			uint64_t seq;
			uint32_t j;

			if (wc[k].status != UROCE_WC_SUCCESS || wc[k].opcode != UROCE_WC_RECV)
				FAIL("receive: status %u opcode %u", wc[k].status, wc[k].opcode);
			memcpy(&seq, m, 8);
			if (seq != recv_seq)
				FAIL("SEND %" PRIu64 " received when %" PRIu64 " was due", seq,
				     recv_seq);
			if (wc[k].byte_len != recv_len[seq % 64])
				FAIL("SEND %" PRIu64 ": %u bytes, sent %u", seq, wc[k].byte_len,
				     recv_len[seq % 64]);
			for (j = 8; j < wc[k].byte_len; j++)
				if (m[j] != pat(seq ^ 0xABCD, j))
					FAIL("SEND %" PRIu64 ": byte %u wrong", seq, j);
			recv_seq++;
			post_recv(qb, wc[k].wr_id, m, M_SLOT, b->mr->lkey);
		}
		if (n == 0 && busy > 0)
			usleep(5);
	}
	/* Give the last receive completions a moment. */
	for (i = 0; i < 2000 && recv_seq < send_seq; i++) {
		struct uroce_wc wc;

		if (uroce_poll_cq(b->cq, 1, &wc) == 1) {
			if (wc.status != UROCE_WC_SUCCESS)
				FAIL("late receive: status %u", wc.status);
			recv_seq++;
		} else {
			usleep(1000);
		}
	}
	memcpy(&counter, b->buf + M_ATOM, 8);
	if (recv_seq != send_seq)
		FAIL("%" PRIu64 " SENDs posted, %" PRIu64 " received", send_seq, recv_seq);
	if (counter != fadd_seq || fadd_done != fadd_seq)
		FAIL("%" PRIu64 " FETCH_ADDs posted, %" PRIu64 " completed, counter %" PRIu64,
		     fadd_seq, fadd_done, counter);
	if (uroce_destroy_qp(qa) != 0 || uroce_destroy_qp(qb) != 0)
		FAIL("destroy_qp");
	side_objects_free(a);
	side_objects_free(b);
	printf("{\"mode\":\"mixed\",\"seconds\":%.1f,\"write\":%" PRIu64 ",\"read\":%" PRIu64
	       ",\"send\":%" PRIu64 ",\"fetch_add\":%" PRIu64 ",\"bytes\":%" PRIu64
	       ",\"counter\":%" PRIu64 "}\n", now_s() - t0, done_op[OP_WRITE], done_op[OP_READ],
	       done_op[OP_SEND], done_op[OP_FADD], bytes, counter);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"a", required_argument, NULL, 'a'},
		{"b", required_argument, NULL, 'b'},
		{"cycles", required_argument, NULL, 'c'},
		{"seconds", required_argument, NULL, 's'},
		{"depth", required_argument, NULL, 'd'},
		{"gid", required_argument, NULL, 'g'},
		{"timeout", required_argument, NULL, 't'},
		{"ops", required_argument, NULL, 'o'},
		{NULL, 0, NULL, 0},
	};
	const char *sa = NULL, *sb = NULL;
	unsigned long cycles = 1000;
	double seconds = 10;
	uint32_t depth = 16;
	struct side a, b;
	int c;

	setlinebuf(stdout);
	if (argc < 2)
		FAIL("usage: soak_client churn|mixed --a SOCK --b SOCK [--cycles N] "
		     "[--seconds S] [--depth D] [--gid I] [--timeout N] [--ops MASK]");
	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'a': sa = optarg; break;
		case 'b': sb = optarg; break;
		case 'c': cycles = strtoul(optarg, NULL, 0); break;
		case 's': seconds = strtod(optarg, NULL); break;
		case 'd': depth = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'g': gid_index = atoi(optarg); break;
		case 't': ack_timeout = (uint8_t)atoi(optarg); break;
		case 'o': op_mask = (unsigned int)strtoul(optarg, NULL, 0) & 15; break;
		default: FAIL("bad option");
		}
	}
	if (sa == NULL || sb == NULL)
		FAIL("--a and --b are required");
	if (op_mask == 0)
		FAIL("--ops: at least one operation");
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (strcmp(argv[1], "churn") == 0) {
		side_open(&a, sa, 1 << 16);
		side_open(&b, sb, 1 << 16);
		return churn(&a, &b, cycles);
	}
	if (strcmp(argv[1], "mixed") == 0) {
		side_open(&a, sa, M_SIZE);
		side_open(&b, sb, M_SIZE);
		return mixed(&a, &b, seconds, depth);
	}
	FAIL("unknown mode %s", argv[1]);
}
