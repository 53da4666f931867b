/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The lcore load generator (doc/loadgen.md, "The lcore generator"): what
 * pktgen is to a NIC, inside the daemon. A generator is an object of the
 * session that created it: N RC QPs on one worker, one CQ whose completions
 * come straight back to it (a sink of the engine, no shared memory), and
 * memory of the daemon's own, registered as one MR of its own PD.
 *
 *  - An initiator posts WRITE, READ, SEND and atomics into its QPs' engine
 *    slots on its worker, at the mix, window and rate GEN_START gave, and
 *    checks what comes back: READ data against a mirror of the target's
 *    memory, atomic results against a model of the target's word
 *    (lib/loadgen), completions in posting order.
 *  - A target lends its memory (each QP a window holding the uroce-lg-1
 *    pattern of its QPN, and an atomic word), keeps receives posted for
 *    SENDs and checks their payloads.
 *
 * Threads: the control thread creates, connects, starts, reads and destroys
 * (GEN_* requests, through CMD_GEN on the generator's worker); the worker
 * posts and takes completions in its round (gen_poll) with bounded work
 * and no system call. Fields are marked as in daemon_internal.h: "ctl:"
 * the control thread's, "wrk:" the worker's once the generator is placed.
 *
 * A generator's QPs and CQ carry no context pointer: the worker's engine
 * callbacks (async events, receive refill) take a NULL context for "not a
 * client's object" and leave it alone. The generator finds its QP from a
 * completion's wr_id (QP index << 32 | sequence).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uroce_common.h"
#include "uroce_loadgen.h"
#include "uroce_shm_gen.h"

#include "daemon_internal.h"

/* Work bounds of one worker round, over all its generators. */
#define GEN_POST_BUDGET 256u
#define GEN_RECV_BUDGET 256u

/* Transport attributes of every generator QP (doc/loadgen.md). */
#define GEN_TIMEOUT 14          /* default local ACK timeout 4.096 µs * 2^14 = 67 ms */
#define GEN_RETRY_CNT 7         /* so a silent peer fails the QP in about 0.5 s */
#define GEN_RNR_RETRY 7         /* infinite: a target behind on receives slows SENDs */
#define GEN_MIN_RNR_TIMER 1     /* 0.01 ms */
#define GEN_HOP_LIMIT 64

/* The rate limit's tokens: one message is GEN_TOKEN (µs x messages/s). */
#define GEN_TOKEN 1000000ull

/* Alignment of the memory regions. */
#define GEN_ALIGN 64u

enum gen_step {
	GEN_W_CREATE,
	GEN_W_CONNECT,
	GEN_W_START,
	GEN_W_STATS,
	GEN_W_DESTROY,
};

/* One outstanding WR of an initiator QP. */
struct gen_slot {
	uint64_t expect;        /* atomic: the original value the completion must return */
	uint32_t off;           /* WRITE, READ, SEND: window offset */
	uint32_t size;
	uint32_t op;            /* enum uroce_lg_op */
};

struct gen_qp {
	struct uroce_eng_qp *qp;        /* wrk (created by GEN_W_CREATE) */
	uint32_t qpn;
	uint32_t psn;                   /* our first send PSN */
	uint32_t peer_qpn;              /* ctl, before GEN_W_CONNECT */
	uint32_t peer_psn;
	uint64_t rwin;                  /* initiator: the peer's address of our window */
	uint64_t ratomic;               /* initiator: the peer's address of our atomic word */
	bool connected;                 /* ctl */
	/* wrk */
	bool live;                      /* connected (RTS), as the worker knows it */
	bool dead;                      /* an error completion: posts no more */
	uint32_t tpos;                  /* next slot of the mix table */
	uint64_t posted;                /* WRs (target: receives) posted */
	uint64_t done;                  /* their completions */
	struct uroce_lg_atomic am;      /* initiator: the model of the peer's word */
	struct gen_slot *slots;         /* initiator: depth of them */
};

/* What GEN_START asked; the control thread writes it before the worker
 * starts, the worker only reads it. */
struct gen_run {
	struct uroce_lg_mix mix;
	uint8_t table[UROCE_LG_MIX_TABLE];
	uint32_t window;
	bool verify;
	uint64_t rate;
	uint64_t duration_us;
	uint64_t count;
};

struct dgen {
	struct dgen *next;              /* ctl: the session's list */
	struct dgen *wnext;             /* wrk: the worker's list */
	struct session *owner;
	uint32_t id;
	uint32_t role;
	uint32_t n_qps;
	uint32_t depth;                 /* asked */
	uint32_t slots;                 /* depth rounded up to a power of two */
	uint32_t flags;
	uint32_t max_size;
	uint32_t win_len;
	unsigned int worker;
	bool placed;                    /* ctl: GEN_W_CREATE done */
	bool started;                   /* ctl: GEN_START done */
	uint32_t n_connected;           /* ctl */
	uint8_t gid[16];
	uint8_t peer_gid[16];           /* ctl, before GEN_W_CONNECT */
	uint8_t path_mtu;               /* ctl, before GEN_W_CONNECT */
	uint8_t timeout;                /* ctl, before GEN_W_CONNECT: local ACK timeout */
	uint32_t peer_rkey;
	/* memory: one allocation, one MR; the window (mirror) region first */
	uint8_t *mem;
	size_t mem_len;
	size_t off_land, land_stride;   /* initiator: READ landing */
	size_t off_send, send_stride;   /* initiator: SEND payloads (verify) */
	size_t off_ares;                /* initiator: atomic results, 8 bytes a slot */
	size_t off_atomic;              /* target: atomic words, 8 bytes a QP */
	size_t off_recv, recv_stride;   /* target: receive buffers */
	struct uroce_eng_pd *pd;
	struct uroce_eng_mr *mr;
	uint32_t lkey;
	struct gen_qp *qps;
	struct gen_slot *slot_mem;
	struct gen_run run;
	/* wrk */
	struct uroce_eng_cq *cq;
	enum uroce_shm_gen_state state;
	uint32_t w_connected;
	uint32_t rr;                    /* the QP to serve first next round */
	bool failed;                    /* an error completion was seen */
	bool flush_all;                 /* ... and the QPs still have to go to ERR */
	bool recv_dirty;                /* target: receives may need posting */
	uint64_t t_start, t_end, t_done, t_last;
	uint64_t tokens;
	uint64_t posted_total;
	uint64_t outstanding;
	struct uroce_shm_msg_gen_stats_resp st; /* counters only; the rest at GEN_W_STATS */
};

/* ------------------------------------------------------------------------ */
/* Worker side                                                               */
/* ------------------------------------------------------------------------ */

static uint64_t
gen_now(struct dworker *w)
{
	const struct uroce_daemon_port_ops *port = w->d->port;

	if (port != NULL && port->now_us != NULL)
		return port->now_us(w->port_ctx);
	return w->now_us;
}

/* The MR's iova space is the daemon's own addresses. */
static inline uint64_t
iova_of(const uint8_t *p)
{
	return (uint64_t)(uintptr_t)p;
}

static inline uint8_t *
mirror_of(const struct dgen *g, uint32_t qi)
{
	return g->mem + (size_t)qi * g->win_len;
}

static inline uint8_t *
land_of(const struct dgen *g, uint32_t qi, uint64_t k)
{
	size_t slot = g->run.verify ? (size_t)(k & (g->slots - 1)) * g->max_size : 0;

	return g->mem + g->off_land + (size_t)qi * g->land_stride + slot;
}

static inline uint8_t *
send_of(const struct dgen *g, uint32_t qi, uint64_t k)
{
	return g->mem + g->off_send + (size_t)qi * g->send_stride +
	       (size_t)(k & (g->slots - 1)) * g->max_size;
}

static inline uint8_t *
ares_of(const struct dgen *g, uint32_t qi, uint64_t k)
{
	return g->mem + g->off_ares + ((size_t)qi * g->slots + (k & (g->slots - 1))) * 8;
}

static inline uint8_t *
recv_of(const struct dgen *g, uint32_t qi, uint64_t k)
{
	if (g->recv_stride == 0)
		return g->mem + g->off_recv; /* one buffer shared: nothing reads it */
	return g->mem + g->off_recv + (size_t)qi * g->recv_stride +
	       (size_t)(k & (g->slots - 1)) * g->max_size;
}

static void
gen_fail(struct dgen *g, uint32_t status, uint32_t qpn, uint32_t op)
{
	if (g->failed)
		return;
	g->failed = true;
	g->flush_all = true;
	g->st.err_status = status;
	g->st.err_qpn = qpn;
	g->st.err_op = op;
}

/* The checks of a successful completion (with verify). */
static void
init_verify(struct dgen *g, uint32_t qi, uint64_t k, const struct gen_slot *sl)
{
	uint64_t v;

	switch (sl->op) {
	case UROCE_LG_READ:
		/* The target's window holds the pattern, and so does our mirror
		 * of it: the bytes READ must be those at the same offset. */
		if (memcmp(land_of(g, qi, k), mirror_of(g, qi) + sl->off, sl->size) != 0)
			g->st.verify_bad++;
		break;
	case UROCE_LG_FADD:
	case UROCE_LG_CSWAP:
		/* The original value, host order (as verbs returns it). */
		memcpy(&v, ares_of(g, qi, k), sizeof(v));
		if (v != sl->expect)
			g->st.verify_bad++;
		break;
	default:
		break; /* WRITE and SEND are the target's to check */
	}
}

/* Completions of an initiator, on its worker, in completion order. */
static bool
init_push(void *ctx, const struct uroce_eng_wc *wc)
{
	struct dgen *g = ctx;
	uint32_t qi = (uint32_t)(wc->wr_id >> 32), seq = (uint32_t)wc->wr_id;
	const struct gen_slot *sl;
	struct gen_qp *q;
	uint64_t k;

	if (unlikely(qi >= g->n_qps)) {
		g->st.order_bad++; /* no WR of ours: cannot happen */
		return true;
	}
	q = &g->qps[qi];
	k = q->done;
	/* IBA 10.8.3: an RC send queue completes in the order it was posted. */
	if (unlikely(seq != (uint32_t)k))
		g->st.order_bad++;
	sl = &q->slots[k & (g->slots - 1)];
	q->done++;
	g->outstanding--;
	if (likely(wc->status == UROCE_WC_SUCCESS)) {
		g->st.completed++;
		g->st.bytes += sl->size;
		g->st.op_msgs[sl->op]++;
		if (g->run.verify)
			init_verify(g, qi, k, sl);
		return true;
	}
	g->st.errors++;
	q->dead = true;
	gen_fail(g, (uint32_t)wc->status, wc->qp_num, sl->op);
	return true;
}

/* Completions of a target: its receives. */
static bool
target_push(void *ctx, const struct uroce_eng_wc *wc)
{
	struct dgen *g = ctx;
	uint32_t qi = (uint32_t)(wc->wr_id >> 32), seq = (uint32_t)wc->wr_id;
	struct gen_qp *q;

	if (unlikely(qi >= g->n_qps)) {
		g->st.order_bad++;
		return true;
	}
	q = &g->qps[qi];
	/* IBA 10.8.3: receive WQEs complete in the order they were posted. */
	if (unlikely(seq != (uint32_t)q->done))
		g->st.order_bad++;
	q->done++;
	g->recv_dirty = true;
	if (likely(wc->status == UROCE_WC_SUCCESS)) {
		g->st.recv++;
		g->st.completed++;
		g->st.recv_bytes += wc->byte_len;
		g->st.bytes += wc->byte_len;
		g->st.op_msgs[UROCE_LG_SEND]++;
		if (g->flags & UROCE_SHM_GEN_F_VERIFY) {
			uint32_t len = UROCE_MIN(wc->byte_len, g->max_size);

			if (uroce_lg_send_check(recv_of(g, qi, seq), q->qpn, len, NULL) != len ||
			    len != wc->byte_len)
				g->st.verify_bad++;
		}
		return true;
	}
	g->st.errors++;
	q->dead = true;
	if (g->st.err_status == 0) {
		g->st.err_status = (uint32_t)wc->status;
		g->st.err_qpn = wc->qp_num;
		g->st.err_op = UROCE_LG_SEND;
	}
	return true;
}

/* Post the next WR of initiator QP @p qi into its engine slot. @return 0 or -errno. */
static int
init_post_one(struct dgen *g, struct gen_qp *q, uint32_t qi)
{
	struct uroce_eng_send_wqe *slot = uroce_eng_sq_reserve(q->qp);
	const struct uroce_lg_mix_entry *m;
	struct uroce_wr_send *e;
	uint64_t k = q->posted;
	struct gen_slot *sl;
	uint8_t *buf;
	int rc;

	if (slot == NULL)
		return -ENOSPC;
	e = &slot->wr;
	m = &g->run.mix.e[g->run.table[q->tpos]];
	q->tpos = (q->tpos + 1) & (UROCE_LG_MIX_TABLE - 1);
	sl = &q->slots[k & (g->slots - 1)];
	sl->op = m->op;
	sl->size = m->size;
	e->wr_id = (uint64_t)qi << 32 | (uint32_t)k;
	e->flags = UROCE_SEND_SIGNALED;
	e->num_sge = 1;
	e->sge[0].lkey = g->lkey;
	e->sge[0].length = m->size;
	switch (m->op) {
	case UROCE_LG_WRITE:
	case UROCE_LG_READ:
		sl->off = uroce_lg_gen_offset(k, m->size, g->win_len);
		e->remote_addr = q->rwin + sl->off;
		e->rkey = g->peer_rkey;
		if (m->op == UROCE_LG_WRITE) {
			e->opcode = UROCE_WR_RDMA_WRITE;
			buf = mirror_of(g, qi) + sl->off;
		} else {
			e->opcode = UROCE_WR_RDMA_READ;
			buf = land_of(g, qi, k);
		}
		break;
	case UROCE_LG_SEND:
		e->opcode = UROCE_WR_SEND;
		if (g->run.verify) {
			/* The target checks the SEND pattern of its QPN; the tag is
			 * the message's sequence. This fill is verify's cost. */
			buf = send_of(g, qi, k);
			uroce_lg_send_fill(buf, q->peer_qpn, (uint32_t)k, m->size);
		} else {
			sl->off = uroce_lg_gen_offset(k, m->size, g->win_len);
			buf = mirror_of(g, qi) + sl->off;
		}
		break;
	default:
		e->opcode = m->op == UROCE_LG_CSWAP ? UROCE_WR_ATOMIC_CMP_AND_SWP :
						     UROCE_WR_ATOMIC_FETCH_AND_ADD;
		e->remote_addr = q->ratomic;
		e->rkey = g->peer_rkey;
		uroce_lg_atomic_next(&q->am, m->op, &e->compare_add, &e->swap, &sl->expect);
		buf = ares_of(g, qi, k);
		break;
	}
	e->sge[0].addr = iova_of(buf);
	/* Counted before the commit: a QP in ERR completes the WR (a flush)
	 * inside it, and the completion must find it outstanding. */
	q->posted++;
	g->outstanding++;
	rc = uroce_eng_sq_commit(q->qp);
	if (unlikely(rc != 0)) {
		q->posted--;
		g->outstanding--;
		q->dead = true;
		gen_fail(g, rc == -EMSGSIZE ? UROCE_WC_LOC_LEN_ERR : UROCE_WC_LOC_QP_OP_ERR,
			 q->qpn, m->op);
		return rc;
	}
	return 0;
}

/* Every QP of @p g to ERR: what they hold completes with flush errors. */
static void
gen_flush(struct dgen *g)
{
	struct uroce_eng_qp_attr a;
	uint32_t i;

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_ERR;
	for (i = 0; i < g->n_qps; i++) {
		g->qps[i].dead = true;
		if (g->qps[i].qp != NULL && uroce_eng_qp_state(g->qps[i].qp) != UROCE_QPS_ERR)
			uroce_eng_modify_qp(g->qps[i].qp, &a, UROCE_QP_STATE);
	}
}

/* How many messages the rate limit lets go now (@p want at most). */
static uint64_t
rate_allow(struct dgen *g, uint64_t now, uint64_t want)
{
	uint64_t dt, cap;

	if (g->run.rate == 0)
		return want;
	dt = now > g->t_last ? now - g->t_last : 0;
	g->t_last = now;
	if (dt > 1000000)
		dt = 1000000; /* a second asleep earns no more than the burst below */
	g->tokens += dt * g->run.rate;
	/* A burst of at most a millisecond's worth (one message at least). */
	cap = UROCE_MAX(g->run.rate / 1000, 1) * GEN_TOKEN;
	if (g->tokens > cap)
		g->tokens = cap;
	return UROCE_MIN(want, g->tokens / GEN_TOKEN);
}

static unsigned int
init_poll(struct dworker *w, struct dgen *g, unsigned int budget)
{
	uint64_t now = gen_now(w), allow;
	unsigned int n = 0, tries;

	if (g->flush_all) {
		g->flush_all = false;
		gen_flush(g);
	}
	if (g->state == UROCE_SHM_GEN_RUNNING) {
		if (g->failed || now >= g->t_end ||
		    (g->run.count != 0 && g->posted_total >= g->run.count)) {
			g->state = UROCE_SHM_GEN_DRAINING;
		} else if (g->outstanding < (uint64_t)g->n_qps * g->run.window) {
			allow = budget;
			if (g->run.count != 0)
				allow = UROCE_MIN(allow, g->run.count - g->posted_total);
			allow = rate_allow(g, now, allow);
			for (tries = 0; tries < g->n_qps && n < allow && !g->failed; tries++) {
				struct gen_qp *q = &g->qps[g->rr];
				uint32_t qi = g->rr;

				g->rr = g->rr + 1 == g->n_qps ? 0 : g->rr + 1;
				while (n < allow && !q->dead && q->posted - q->done < g->run.window &&
				       init_post_one(g, q, qi) == 0)
					n++;
			}
			g->posted_total += n;
			g->st.posted += n;
			if (g->run.rate != 0)
				g->tokens -= n * GEN_TOKEN;
		}
	}
	if (g->state == UROCE_SHM_GEN_DRAINING && g->outstanding == 0) {
		g->state = g->failed ? UROCE_SHM_GEN_FAILED : UROCE_SHM_GEN_DONE;
		g->t_done = now;
	}
	return n;
}

static unsigned int
target_poll(struct dgen *g, unsigned int budget)
{
	unsigned int n = 0, tries;

	if (!g->recv_dirty || !(g->flags & UROCE_SHM_GEN_F_SEND))
		return 0;
	for (tries = 0; tries < g->n_qps && n < budget; tries++) {
		struct gen_qp *q = &g->qps[g->rr];
		uint32_t qi = g->rr;

		g->rr = g->rr + 1 == g->n_qps ? 0 : g->rr + 1;
		while (n < budget && !q->dead && q->live &&
		       q->posted - q->done < g->depth) {
			struct uroce_wr_recv *e = uroce_eng_rq_reserve(q->qp);
			uint64_t k = q->posted;

			if (e == NULL)
				break;
			e->wr_id = (uint64_t)qi << 32 | (uint32_t)k;
			e->num_sge = 1;
			e->sge[0].addr = iova_of(recv_of(g, qi, k));
			e->sge[0].length = g->max_size;
			e->sge[0].lkey = g->lkey;
			q->posted++;
			g->st.posted++;
			if (uroce_eng_rq_commit(q->qp) != 0) {
				q->posted--;
				g->st.posted--;
				q->dead = true;
				break;
			}
			n++;
		}
	}
	/* A whole pass that found nothing to post: clean until a receive completes. */
	if (n < budget)
		g->recv_dirty = false;
	return n;
}

unsigned int
gen_poll(struct dworker *w)
{
	unsigned int work = 0, post = GEN_POST_BUDGET, recv = GEN_RECV_BUDGET, n;
	struct dgen *g;

	for (g = w->gens; g != NULL; g = g->wnext) {
		if (g->role == UROCE_SHM_GEN_INITIATOR) {
			if (g->state != UROCE_SHM_GEN_RUNNING && g->state != UROCE_SHM_GEN_DRAINING &&
			    !g->flush_all)
				continue;
			n = init_poll(w, g, post);
			post -= n;
		} else {
			if (g->state != UROCE_SHM_GEN_READY)
				continue;
			n = target_poll(g, recv);
			recv -= n;
		}
		work += n;
	}
	return work;
}

uint64_t
gen_deadline(struct dworker *w)
{
	uint64_t t = UINT64_MAX, at;
	struct dgen *g;

	for (g = w->gens; g != NULL; g = g->wnext) {
		if (g->role != UROCE_SHM_GEN_INITIATOR || g->state != UROCE_SHM_GEN_RUNNING)
			continue;
		if (g->t_end < t)
			t = g->t_end;
		/* Waiting for tokens, with room in the window: the next one's time. */
		if (g->run.rate != 0 && g->tokens < GEN_TOKEN &&
		    g->outstanding < (uint64_t)g->n_qps * g->run.window) {
			at = g->t_last + (GEN_TOKEN - g->tokens + g->run.rate - 1) / g->run.rate;
			if (at < t)
				t = at;
		}
	}
	return t;
}

static int
w_create(struct dworker *w, struct dgen *g)
{
	struct uroce_eng_cq_sink sink = {
		.push = g->role == UROCE_SHM_GEN_INITIATOR ? init_push : target_push,
		.ctx = g,
	};
	struct uroce_eng_qp_init_attr ia;
	struct uroce_eng_qp_attr a;
	uint32_t i;
	int rc;

	/* No CQ context: the worker's CQ_ERR handler skips it (never raised:
	 * the push always takes the completion). */
	g->cq = uroce_eng_cq_create_sink(w->eng, &sink, NULL);
	if (g->cq == NULL)
		return errno ? -errno : -ENOMEM;
	memset(&ia, 0, sizeof(ia));
	ia.qp_context = NULL; /* not a client's: see the file comment */
	ia.send_cq = g->cq;
	ia.recv_cq = g->cq;
	ia.qp_type = UROCE_QPT_RC;
	ia.sq_sig_all = true;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	if (g->role == UROCE_SHM_GEN_INITIATOR) {
		ia.cap.max_send_wr = g->slots;
		ia.cap.max_recv_wr = 1;
	} else {
		ia.cap.max_send_wr = 1;
		ia.cap.max_recv_wr = (g->flags & UROCE_SHM_GEN_F_SEND) ? g->slots : 1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = g->role == UROCE_SHM_GEN_TARGET ?
			    UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
			    UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC : 0;
	for (i = 0; i < g->n_qps; i++) {
		struct gen_qp *q = &g->qps[i];

		q->qp = uroce_eng_qp_create(g->pd, &ia);
		if (q->qp == NULL) {
			rc = errno ? -errno : -ENOMEM;
			goto fail;
		}
		q->qpn = uroce_eng_qp_num(q->qp);
		rc = uroce_eng_modify_qp(q->qp, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX |
					 UROCE_QP_PORT | UROCE_QP_ACCESS_FLAGS);
		if (rc != 0) {
			i++;
			goto fail;
		}
	}
	g->state = UROCE_SHM_GEN_CREATED;
	g->wnext = w->gens;
	w->gens = g;
	return 0;
fail:
	while (i-- > 0) {
		uroce_eng_qp_destroy(g->qps[i].qp);
		g->qps[i].qp = NULL;
	}
	uroce_eng_cq_destroy(g->cq);
	g->cq = NULL;
	return rc;
}

/* QPs first .. first + count - 1 to RTR and RTS, toward the peer's. */
static int
w_connect(struct dgen *g, uint32_t first, uint32_t count)
{
	struct uroce_eng_qp_attr a;
	uint32_t i;
	int rc;

	for (i = first; i < first + count; i++) {
		struct gen_qp *q = &g->qps[i];

		memset(&a, 0, sizeof(a));
		a.qp_state = UROCE_QPS_RTR;
		a.path_mtu = (enum uroce_mtu)g->path_mtu;
		a.dest_qp_num = q->peer_qpn;
		a.rq_psn = q->peer_psn;
		a.max_dest_rd_atomic = UROCE_MAX_DEST_RD_ATOMIC;
		a.min_rnr_timer = GEN_MIN_RNR_TIMER;
		memcpy(a.ah_attr.dgid, g->peer_gid, 16);
		memcpy(a.ah_attr.sgid, g->gid, 16);
		a.ah_attr.hop_limit = GEN_HOP_LIMIT;
		a.ah_attr.port_num = 1;
		rc = uroce_eng_modify_qp(q->qp, &a, UROCE_QP_STATE | UROCE_QP_AV |
					 UROCE_QP_PATH_MTU | UROCE_QP_DEST_QPN |
					 UROCE_QP_RQ_PSN | UROCE_QP_MAX_DEST_RD_ATOMIC |
					 UROCE_QP_MIN_RNR_TIMER);
		if (rc != 0)
			return rc;
		memset(&a, 0, sizeof(a));
		a.qp_state = UROCE_QPS_RTS;
		a.sq_psn = q->psn;
		a.timeout = g->timeout;
		a.retry_cnt = GEN_RETRY_CNT;
		a.rnr_retry = GEN_RNR_RETRY;
		a.max_rd_atomic = UROCE_MAX_RD_ATOMIC;
		rc = uroce_eng_modify_qp(q->qp, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN |
					 UROCE_QP_TIMEOUT | UROCE_QP_RETRY_CNT |
					 UROCE_QP_RNR_RETRY | UROCE_QP_MAX_QP_RD_ATOMIC);
		if (rc != 0)
			return rc;
		/* The worker's own view (gen_poll); the control thread keeps its own. */
		q->live = true;
		g->w_connected++;
	}
	if (g->w_connected == g->n_qps)
		g->state = UROCE_SHM_GEN_READY;
	g->recv_dirty = true; /* a target posts its receives from its next round */
	return 0;
}

static int
w_start(struct dworker *w, struct dgen *g)
{
	uint64_t now = gen_now(w);
	uint32_t i;

	if (g->state != UROCE_SHM_GEN_READY)
		return -ENOTCONN;
	for (i = 0; i < g->n_qps; i++) {
		struct gen_qp *q = &g->qps[i];

		/* Each QP walks the table from its own place. */
		q->tpos = (i * 389u) & (UROCE_LG_MIX_TABLE - 1);
		uroce_lg_atomic_start(&q->am, q->peer_qpn);
	}
	memset(&g->st, 0, sizeof(g->st));
	g->t_start = now;
	g->t_last = now;
	g->t_end = g->run.duration_us != 0 ? now + g->run.duration_us : UINT64_MAX;
	g->tokens = g->run.rate != 0 ? GEN_TOKEN : 0;
	g->posted_total = 0;
	g->rr = 0;
	g->state = UROCE_SHM_GEN_RUNNING;
	return 0;
}

static void
w_stats(struct dworker *w, struct dgen *g, struct uroce_shm_msg_gen_stats_resp *out)
{
	uint64_t end = g->state == UROCE_SHM_GEN_DONE || g->state == UROCE_SHM_GEN_FAILED ?
		       g->t_done : gen_now(w);
	uint32_t i;

	*out = g->st;
	out->state = g->state;
	out->role = g->role;
	out->worker = w->idx;
	out->n_qps = g->n_qps;
	out->outstanding = g->outstanding;
	if (g->role == UROCE_SHM_GEN_INITIATOR && g->state >= UROCE_SHM_GEN_RUNNING)
		out->elapsed_us = end > g->t_start ? end - g->t_start : 0;
	for (i = 0; i < g->n_qps; i++) {
		struct uroce_eng_qp *qp = g->qps[i].qp;

		out->retransmits += uroce_eng_qp_counter(qp, UROCE_CNT_RETRANSMITS);
		out->tx_packets += uroce_eng_qp_counter(qp, UROCE_CNT_TX_PACKETS);
		out->rx_packets += uroce_eng_qp_counter(qp, UROCE_CNT_RX_PACKETS);
	}
	/* The model's final words, once every atomic has completed. */
	out->atomic_digest = 0;
	if (g->role == UROCE_SHM_GEN_INITIATOR && g->state == UROCE_SHM_GEN_DONE)
		for (i = 0; i < g->n_qps; i++)
			out->atomic_digest = uroce_lg_atomic_digest(out->atomic_digest, i,
								    g->qps[i].am.value);
}

static void
w_destroy(struct dworker *w, struct dgen *g)
{
	struct dgen **pp;
	uint32_t i;

	for (pp = &w->gens; *pp != NULL; pp = &(*pp)->wnext)
		if (*pp == g) {
			*pp = g->wnext;
			break;
		}
	/* Outstanding WRs go without completions (the engine drops them). */
	for (i = 0; i < g->n_qps; i++) {
		if (g->qps[i].qp != NULL)
			uroce_eng_qp_destroy(g->qps[i].qp);
		g->qps[i].qp = NULL;
	}
	uroce_eng_cq_destroy(g->cq);
	g->cq = NULL;
}

int
gen_exec(struct dworker *w, struct dcmd *c)
{
	struct dgen *g = c->u.gen.g;

	switch (c->u.gen.op) {
	case GEN_W_CREATE:
		return w_create(w, g);
	case GEN_W_CONNECT:
		return w_connect(g, c->u.gen.first, c->u.gen.count);
	case GEN_W_START:
		return w_start(w, g);
	case GEN_W_STATS:
		w_stats(w, g, c->u.gen.out);
		return 0;
	case GEN_W_DESTROY:
		w_destroy(w, g);
		return 0;
	default:
		return -EINVAL;
	}
}

/* ------------------------------------------------------------------------ */
/* Control thread                                                            */
/* ------------------------------------------------------------------------ */

static int
gen_call(struct uroce_daemon *d, struct dgen *g, unsigned int op, uint32_t first, uint32_t count,
	 void *out)
{
	struct dcmd c;

	memset(&c, 0, sizeof(c));
	c.type = CMD_GEN;
	c.u.gen.g = g;
	c.u.gen.op = op;
	c.u.gen.first = first;
	c.u.gen.count = count;
	c.u.gen.out = out;
	return worker_call(d, g->worker, &c);
}

static struct dgen *
gen_find(struct session *s, uint32_t id)
{
	struct dgen *g;

	for (g = s->gens; g != NULL; g = g->next)
		if (g->id == id)
			return g;
	return NULL;
}

static size_t
align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Where each region of @p g's memory goes. @return the total, or 0 above the cap. */
static uint64_t
gen_layout(struct dgen *g)
{
	bool verify = (g->flags & UROCE_SHM_GEN_F_VERIFY) != 0;
	uint64_t n = g->n_qps, off;

	/* Every product below is under 2^10 * 2^12 * 2^24: no overflow. */
	off = n * g->win_len;
	if (g->role == UROCE_SHM_GEN_INITIATOR) {
		if (g->flags & UROCE_SHM_GEN_F_READ) {
			g->land_stride = align_up((size_t)(verify ? g->slots : 1) * g->max_size,
						  GEN_ALIGN);
			g->off_land = off;
			off += n * g->land_stride;
		}
		if ((g->flags & UROCE_SHM_GEN_F_SEND) && verify) {
			g->send_stride = align_up((size_t)g->slots * g->max_size, GEN_ALIGN);
			g->off_send = off;
			off += n * g->send_stride;
		}
		if (g->flags & UROCE_SHM_GEN_F_ATOMIC) {
			g->off_ares = off;
			off += align_up(n * g->slots * 8, GEN_ALIGN);
		}
	} else {
		g->off_atomic = off;
		off += align_up(n * 8, GEN_ALIGN);
		if (g->flags & UROCE_SHM_GEN_F_SEND) {
			g->off_recv = off;
			/* With checks, a buffer per receive; without, one for all. */
			g->recv_stride = verify ? align_up((size_t)g->slots * g->max_size,
							   GEN_ALIGN) : 0;
			off += verify ? n * g->recv_stride : align_up(g->max_size, GEN_ALIGN);
		}
	}
	return off > UROCE_SHM_GEN_MAX_MEM ? 0 : off;
}

/* A send PSN that no two runs are likely to share (IBA 9.7.1 lets the
 * requester pick any). */
static uint32_t
gen_psn(const struct dgen *g, uint32_t i)
{
	struct timespec ts;
	uint64_t z;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	z = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32 ^ (uint64_t)(uintptr_t)g ^
	    (uint64_t)i * 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)(z ^ (z >> 31)) & 0xffffffu;
}

static void
gen_free(struct uroce_daemon *d, struct dgen *g)
{
	if (g->placed) {
		gen_call(d, g, GEN_W_DESTROY, 0, 0, NULL);
		d->st.qps -= g->n_qps;
		d->st.cqs--;
	}
	if (g->mr != NULL) {
		/* No QP of its PD is left; still, a worker may hold the pointer
		 * it found: free after each has come round (as DEREG_MR). */
		uroce_eng_mr_revoke(g->mr);
		daemon_barrier(d);
		uroce_eng_mr_dereg(g->mr);
		d->st.mrs--;
	}
	if (g->pd != NULL) {
		uroce_eng_pd_dealloc(g->pd);
		d->st.pds--;
	}
	free(g->mem);
	free(g->slot_mem);
	free(g->qps);
	free(g);
}

/* The GID at @p index of port 1, as control.c's sgid_lookup(). */
static int
gen_sgid(const struct uroce_daemon *d, uint32_t index, uint8_t gid[16])
{
	if (index >= d->n_gid || uroce_gid_is_zero(d->gids[index]))
		return -EINVAL;
	memcpy(gid, d->gids[index], 16);
	return 0;
}

static int
gen_create(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_gen_create_req *q = body;
	struct uroce_shm_msg_gen_create_resp *p = r->body;
	uint64_t len;
	struct dgen *g;
	uint32_t i;
	int rc;

	if (q->reserved != 0 ||
	    (q->role != UROCE_SHM_GEN_INITIATOR && q->role != UROCE_SHM_GEN_TARGET) ||
	    q->n_qps == 0 || q->n_qps > UROCE_SHM_GEN_MAX_QPS || q->worker >= d->n_workers ||
	    q->depth == 0 || q->depth > UROCE_MAX_QP_WR || (q->flags & ~UROCE_SHM_GEN_F_ALL) != 0 ||
	    q->max_size == 0 || q->max_size > UROCE_LG_GEN_MAX_SIZE)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return -ENOMEM;
	rc = gen_sgid(d, q->gid_index, g->gid);
	if (rc != 0)
		goto fail;
	g->owner = s;
	g->role = q->role;
	g->n_qps = q->n_qps;
	g->worker = q->worker;
	g->depth = q->depth;
	g->slots = pow2_at_least(q->depth);
	g->flags = q->flags;
	g->max_size = q->max_size;
	g->win_len = uroce_lg_gen_win_len(q->max_size);
	len = gen_layout(g);
	if (len == 0) {
		rc = -E2BIG; /* more memory than one generator may take */
		goto fail;
	}
	g->mem_len = align_up((size_t)len, 4096);
	g->mem = aligned_alloc(4096, g->mem_len);
	g->qps = calloc(g->n_qps, sizeof(*g->qps));
	if (g->role == UROCE_SHM_GEN_INITIATOR)
		g->slot_mem = calloc((size_t)g->n_qps * g->slots, sizeof(*g->slot_mem));
	if (g->mem == NULL || g->qps == NULL ||
	    (g->role == UROCE_SHM_GEN_INITIATOR && g->slot_mem == NULL)) {
		rc = -ENOMEM;
		goto fail;
	}
	memset(g->mem, 0, g->mem_len);
	for (i = 0; g->slot_mem != NULL && i < g->n_qps; i++)
		g->qps[i].slots = g->slot_mem + (size_t)i * g->slots;
	/* Its own PD: its QPs reach its MR and nothing of any client's. */
	g->pd = uroce_eng_pd_alloc(d->w[0]->eng);
	if (g->pd == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	d->st.pds++;
	g->mr = uroce_eng_mr_reg(g->pd, g->mem, (uint64_t)(uintptr_t)g->mem, g->mem_len,
				 g->role == UROCE_SHM_GEN_TARGET ?
				 UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
				 UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC :
				 UROCE_ACCESS_LOCAL_WRITE);
	if (g->mr == NULL) {
		rc = errno ? -errno : -ENOMEM;
		goto fail;
	}
	d->st.mrs++;
	g->lkey = uroce_eng_mr_lkey(g->mr);
	rc = gen_call(d, g, GEN_W_CREATE, 0, 0, NULL);
	if (rc != 0)
		goto fail;
	g->placed = true;
	d->st.qps += g->n_qps;
	d->st.cqs++;
	for (i = 0; i < g->n_qps; i++)
		g->qps[i].psn = gen_psn(g, i);
	if (g->role == UROCE_SHM_GEN_TARGET) {
		/* Its windows hold the uroce-lg-1 pattern of its QPNs, its words
		 * the initial value the initiator's model starts from. */
		for (i = 0; i < g->n_qps; i++) {
			uint64_t v = uroce_lg_atomic_init(g->qps[i].qpn);

			uroce_lg_write_fill(mirror_of(g, i), g->qps[i].qpn, 0, g->win_len);
			memcpy(g->mem + g->off_atomic + (size_t)i * 8, &v, sizeof(v));
		}
	}
	/* Ids of one session are never 0 and never reused while it lives. */
	g->id = ++s->last_gen_id;
	g->next = s->gens;
	s->gens = g;
	p->gen_id = g->id;
	p->n_qps = g->n_qps;
	p->worker = g->worker;
	p->win_len = g->win_len;
	memcpy(p->gid, g->gid, 16);
	p->rkey = g->role == UROCE_SHM_GEN_TARGET ? uroce_eng_mr_rkey(g->mr) : 0;
	p->atomic_off = g->role == UROCE_SHM_GEN_TARGET ? (uint32_t)g->off_atomic : 0;
	p->va = g->role == UROCE_SHM_GEN_TARGET ? (uint64_t)(uintptr_t)g->mem : 0;
	p->mem_len = g->mem_len;
	p->active_mtu = d->active_mtu;
	return 0;
fail:
	gen_free(d, g);
	return rc;
}

static int
gen_qps(struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_gen_qps_req *q = body;
	struct uroce_shm_msg_gen_qps_resp *p = r->body;
	struct dgen *g = gen_find(s, q->gen_id);
	uint32_t i, k;

	if (g == NULL)
		return -ENOENT;
	if (q->start > g->n_qps)
		return -EINVAL;
	for (i = q->start, k = 0; i < g->n_qps && k < UROCE_SHM_GEN_QPS_MAX; i++, k++) {
		p->q[k].qpn = g->qps[i].qpn;
		p->q[k].psn = g->qps[i].psn;
	}
	p->page.count = (uint16_t)k;
	if (i < g->n_qps) {
		p->page.flags = UROCE_SHM_LIST_F_MORE;
		p->page.next = i;
	}
	return 0;
}

static int
gen_connect(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_gen_connect_req *q = body;
	struct uroce_shm_msg_gen_connect_resp *p = r->body;
	struct dgen *g = gen_find(s, q->gen_id);
	bool init;
	uint32_t i;
	int rc;

	if (g == NULL)
		return -ENOENT;
	init = g->role == UROCE_SHM_GEN_INITIATOR;
	if (q->timeout > 31 || q->count == 0 || q->count > UROCE_SHM_GEN_QPS_MAX ||
	    q->first >= g->n_qps || q->count > g->n_qps - q->first ||
	    q->path_mtu < UROCE_MTU_256 || q->path_mtu > d->active_mtu ||
	    uroce_gid_is_zero(q->peer_gid))
		return -EINVAL;
	if (g->started)
		return -EBUSY;
	/* The peer's windows and words must not wrap the address space. */
	if (init && (q->peer_win_len != g->win_len ||
		     q->peer_va > UINT64_MAX - (uint64_t)g->n_qps * g->win_len ||
		     q->peer_va > UINT64_MAX - q->peer_atomic_off - (uint64_t)g->n_qps * 8 ||
		     q->peer_atomic_off % 8 != 0))
		return -EINVAL;
	for (i = 0; i < q->count; i++) {
		if (q->q[i].qpn > UROCE_QPN_MASK || q->q[i].psn > 0xffffffu)
			return -EINVAL;
		if (g->qps[q->first + i].connected)
			return -EALREADY;
	}
	/* One peer per generator. */
	if (g->n_connected > 0 && (memcmp(g->peer_gid, q->peer_gid, 16) != 0 ||
				   g->path_mtu != q->path_mtu ||
				   g->timeout != (q->timeout != 0 ? q->timeout : GEN_TIMEOUT) ||
				   (init && g->peer_rkey != q->peer_rkey)))
		return -EINVAL;
	memcpy(g->peer_gid, q->peer_gid, 16);
	g->path_mtu = (uint8_t)q->path_mtu;
	g->timeout = (uint8_t)(q->timeout != 0 ? q->timeout : GEN_TIMEOUT);
	if (init)
		g->peer_rkey = q->peer_rkey;
	for (i = 0; i < q->count; i++) {
		uint32_t k = q->first + i;
		struct gen_qp *gq = &g->qps[k];

		gq->peer_qpn = q->q[i].qpn;
		gq->peer_psn = q->q[i].psn;
		if (!init)
			continue;
		gq->rwin = q->peer_va + (uint64_t)k * g->win_len;
		gq->ratomic = q->peer_va + q->peer_atomic_off + (uint64_t)k * 8;
		/* The mirror of the peer's window: what WRITEs send, and what
		 * READs must bring back. */
		uroce_lg_write_fill(mirror_of(g, k), gq->peer_qpn, 0, g->win_len);
	}
	rc = gen_call(d, g, GEN_W_CONNECT, q->first, q->count, NULL);
	if (rc != 0)
		return rc;
	for (i = 0; i < q->count; i++)
		g->qps[q->first + i].connected = true;
	g->n_connected += q->count;
	p->connected = g->n_connected;
	return 0;
}

static int
gen_start(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_gen_start_req *q = body;
	struct dgen *g = gen_find(s, q->gen_id);
	unsigned int ops, need = 0, i;
	int rc;

	if (g == NULL)
		return -ENOENT;
	if (g->role != UROCE_SHM_GEN_INITIATOR)
		return -EINVAL;
	if (g->started)
		return -EALREADY;
	if (g->n_connected != g->n_qps)
		return -ENOTCONN;
	if (q->n_mix == 0 || q->n_mix > UROCE_SHM_GEN_MIX_MAX || q->window == 0 ||
	    q->window > g->depth || (q->flags & ~UROCE_SHM_GEN_F_VERIFY) != 0 ||
	    ((q->flags & UROCE_SHM_GEN_F_VERIFY) && !(g->flags & UROCE_SHM_GEN_F_VERIFY)))
		return -EINVAL;
	memset(&g->run, 0, sizeof(g->run));
	g->run.mix.n = q->n_mix;
	for (i = 0; i < q->n_mix; i++) {
		g->run.mix.e[i].op = q->mix[i].op;
		g->run.mix.e[i].size = q->mix[i].size;
		g->run.mix.e[i].weight = q->mix[i].weight;
	}
	if (uroce_lg_mix_check(&g->run.mix, NULL, 0) != 0 ||
	    uroce_lg_mix_max_size(&g->run.mix, ~0u) > g->max_size)
		return -EINVAL;
	/* What the mix needs must have been made at creation. */
	ops = uroce_lg_mix_ops(&g->run.mix);
	if (ops & UROCE_LG_OP_BIT(UROCE_LG_READ))
		need |= UROCE_SHM_GEN_F_READ;
	if (ops & UROCE_LG_OP_BIT(UROCE_LG_SEND))
		need |= UROCE_SHM_GEN_F_SEND;
	if (ops & UROCE_LG_ATOMIC_OPS)
		need |= UROCE_SHM_GEN_F_ATOMIC;
	if ((need & ~g->flags) != 0)
		return -EINVAL;
	rc = uroce_lg_mix_table(&g->run.mix, q->seed, g->run.table);
	if (rc != 0)
		return rc;
	g->run.window = q->window;
	g->run.verify = (q->flags & UROCE_SHM_GEN_F_VERIFY) != 0;
	g->run.rate = q->rate;
	g->run.duration_us = q->duration_us;
	g->run.count = q->count;
	rc = gen_call(d, g, GEN_W_START, 0, 0, NULL);
	if (rc == 0)
		g->started = true;
	return rc;
}

/* A target's memory now: pattern bytes of every window, digest of the words. */
static void
gen_scan(struct dgen *g, struct uroce_shm_msg_gen_stats_resp *p)
{
	struct uroce_lg_scan sc;
	uint64_t v, digest = 0;
	uint32_t i;

	for (i = 0; i < g->n_qps; i++) {
		/* Written from the start: a byte that is not its pattern byte,
		 * zero included, is bad. */
		uroce_lg_write_scan(mirror_of(g, i), g->qps[i].qpn, g->win_len, &sc);
		p->scan_bytes += g->win_len;
		p->scan_bad += sc.bad + sc.unwritten;
		memcpy(&v, (const void *)(g->mem + g->off_atomic + (size_t)i * 8), sizeof(v));
		digest = uroce_lg_atomic_digest(digest, i, v);
	}
	p->atomic_digest = digest;
}

static int
gen_stats(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_gen_stats_req *q = body;
	struct uroce_shm_msg_gen_stats_resp *p = r->body;
	struct dgen *g = gen_find(s, q->gen_id);
	int rc;

	if (g == NULL)
		return -ENOENT;
	if ((q->flags & ~UROCE_SHM_GEN_STATS_F_SCAN) != 0)
		return -EINVAL;
	rc = gen_call(d, g, GEN_W_STATS, 0, 0, p);
	if (rc != 0)
		return rc;
	if ((q->flags & UROCE_SHM_GEN_STATS_F_SCAN) && g->role == UROCE_SHM_GEN_TARGET)
		gen_scan(g, p);
	return 0;
}

static int
gen_destroy(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dgen **pp, *g;

	if (q->reserved != 0)
		return -EINVAL;
	for (pp = &s->gens; (g = *pp) != NULL; pp = &g->next)
		if (g->id == q->handle)
			break;
	if (g == NULL)
		return -ENOENT;
	*pp = g->next;
	gen_free(d, g);
	return 0;
}

int
gen_dispatch(struct uroce_daemon *d, struct session *s, uint16_t type, const void *body,
	     struct reply *r)
{
	switch (type) {
	case UROCE_SHM_MSG_GEN_CREATE:
		return gen_create(d, s, body, r);
	case UROCE_SHM_MSG_GEN_QPS:
		return gen_qps(s, body, r);
	case UROCE_SHM_MSG_GEN_CONNECT:
		return gen_connect(d, s, body, r);
	case UROCE_SHM_MSG_GEN_START:
		return gen_start(d, s, body);
	case UROCE_SHM_MSG_GEN_STATS:
		return gen_stats(d, s, body, r);
	case UROCE_SHM_MSG_GEN_DESTROY:
		return gen_destroy(d, s, body);
	default:
		return -EOPNOTSUPP;
	}
}

void
gen_session_free(struct uroce_daemon *d, struct session *s)
{
	struct dgen *g;

	while ((g = s->gens) != NULL) {
		s->gens = g->next;
		gen_free(d, g);
	}
}

unsigned int
uroce_daemon_gens(struct uroce_daemon *d, struct uroce_daemon_gen_info *out, unsigned int max)
{
	struct uroce_shm_msg_gen_stats_resp st;
	unsigned int n = 0;
	struct session *s;
	struct dgen *g;

	for (s = d->sessions; s != NULL; s = s->next)
		for (g = s->gens; g != NULL && n < max; g = g->next) {
			struct uroce_daemon_gen_info *e = &out[n];

			memset(&st, 0, sizeof(st));
			if (gen_call(d, g, GEN_W_STATS, 0, 0, &st) != 0)
				continue;
			memset(e, 0, sizeof(*e));
			e->id = g->id;
			e->client_id = s->id;
			e->pid = (int32_t)s->pid;
			e->role = g->role;
			e->state = st.state;
			e->worker = g->worker;
			e->n_qps = g->n_qps;
			e->err_status = st.err_status;
			e->err_qpn = st.err_qpn;
			e->elapsed_us = st.elapsed_us;
			e->posted = st.posted;
			e->completed = st.completed;
			e->errors = st.errors;
			e->bytes = st.bytes;
			e->verify_bad = st.verify_bad;
			e->outstanding = st.outstanding;
			n++;
		}
	return n;
}
