/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The shm half of lib/daemon: listening socket, client sessions, the control
 * protocol of lib/shm, per-session handle tables, and the data path between
 * the shared rings and the engine (eng.c). See doc/verbs.md.
 *
 * Trust: nothing read from a client (socket or shared memory) is trusted.
 * Control bodies are checked field by field after uroce_shm_msg_validate();
 * WQEs are copied out of the rings before they are checked; SGE addresses are
 * iovas that the engine resolves through an MR of the QP's PD, and every lkey
 * must belong to an MR of the posting session.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "uroce_common.h"
#include "uroce_shm.h"

#include "daemon_internal.h"
#include "uroce_daemon.h"

/* Objects per session: handles are session id << 16 | index. */
#define SESSION_MAX_OBJS 65535u
/* PDs and CQs in the whole daemon (no engine table bounds them). */
#define DAEMON_MAX_PD UROCE_MAX_QP
#define DAEMON_MAX_CQ UROCE_MAX_QP
/* Address handles in the whole daemon (max_ah of QUERY_DEVICE). */
#define DAEMON_MAX_AH UROCE_MAX_QP
/* SRQs in the whole daemon (max_srq of QUERY_DEVICE). */
#define DAEMON_MAX_SRQ UROCE_MAX_QP
/* Work bounds of one uroce_daemon_poll(). */
#define MSGS_PER_POLL 16
#define WQES_PER_QP 64
#define SLOTS_PER_POLL 256
#define ACCEPTS_PER_POLL 8

enum obj_type {
	OBJ_FREE = 0,
	OBJ_SEG,
	OBJ_PD,
	OBJ_MR,
	OBJ_CQ,
	OBJ_QP,
	OBJ_AH,
	OBJ_SRQ,
};

struct session;

struct dseg {
	struct uroce_shm_segment seg;
	uint32_t refs; /* MRs over it */
};

struct dpd {
	void *pd;
};

struct dmr {
	void *mr;
	uint32_t key;
	struct dseg *seg;
};

struct dah {
	void *ah;
};

struct dcq {
	struct dcq *next;   /* daemon's list of CQs, walked after each engine poll */
	struct dcq **pprev;
	void *cq;
	struct session *owner; /* for async events */
	uint32_t handle;
	struct uroce_shm_segment seg;
	struct uroce_shm_ring ring; /* producer, untrusted */
	int evfd;
	uint32_t size;
	bool overflowed;
	bool err_reported;  /* CQ_ERR sent to the owner (once per CQ) */
};

struct drecv {
	uint64_t wr_id;
	int num_sge;
	struct dsge sge[UROCE_MAX_SGE];
};

/*
 * A shared receive queue (IBA 10.2.9). The client produces receive WQEs into
 * its shm ring and rings the SRQ's doorbell slot; the daemon copies them out,
 * checks them and posts them to the engine SRQ. The engine has no SRQ limit,
 * so the daemon keeps the level itself: WQEs it gave the engine (in_engine)
 * minus receive completions of the SRQ's QPs (each one consumed exactly one
 * SRQ WQE), plus what still waits in the ring.
 */
struct dsrq {
	void *srq;
	struct session *owner;
	uint32_t handle;
	uint32_t slot;
	uint32_t max_wr;          /* ring entries = engine SRQ size */
	uint32_t max_sge;
	uint32_t limit;           /* armed srq_limit, 0: not armed */
	uint32_t in_engine;       /* WQEs posted to the engine, not yet completed */
	uint32_t qps;             /* QPs that take their receives from it */
	bool stashed;             /* stash waits for engine room */
	bool failed;              /* ring corrupt: no more WQEs taken */
	struct drecv stash;
	struct uroce_shm_segment seg;
	struct uroce_shm_ring ring; /* consumer, untrusted */
};

struct dqp {
	void *qp;
	struct session *owner;    /* for async events */
	uint32_t handle;
	struct dsrq *srq;         /* receives come from it, or NULL */
	uint32_t qpn;
	uint32_t type;
	uint32_t slot;
	uint32_t sig_all;
	struct dcap cap;
	struct dcq *scq;
	struct dcq *rcq;
	struct uroce_shm_segment seg;
	struct uroce_shm_ring sq; /* consumer, untrusted */
	struct uroce_shm_ring rq; /* consumer, untrusted */
	bool send_stashed;        /* stash_send waits for engine room */
	bool recv_stashed;
	bool failed;              /* ring corrupt: QP forced to ERR */
	struct dsend_wr stash_send;
	struct drecv stash_recv;
};

struct obj {
	uint8_t type;
	void *p;
};

struct session {
	struct session *next;
	int fd;
	uint16_t id;
	bool hello;
	bool dead;
	pid_t pid;
	uid_t uid;
	struct uroce_shm_segment db;
	struct uroce_shm_db_reader rd;
	struct obj *objs;
	uint32_t nobjs;
	uint32_t capobjs;
	struct dqp **slots; /* UROCE_SHM_DB_SLOTS */
	struct dsrq **srq_slots; /* UROCE_SHM_DB_SLOTS, allocated with the first SRQ */
	uint16_t minor;     /* the client's ABI minor (HELLO) */
};

struct key_owner {
	struct session *s;
	uint32_t key;
};

struct uroce_daemon {
	struct eng *eng;
	int lfd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	unsigned int n_gid;
	uint8_t gids[UROCE_DAEMON_GID_MAX][16]; /* port 1; all zero: empty slot */
	uint8_t active_mtu;                     /* enum uroce_mtu */
	uint32_t max_sessions;
	uint16_t next_sid;
	struct session *sessions;
	struct dcq *cqs;
	struct key_owner keys[UROCE_MAX_MR + 1]; /* by key >> 8 */
	struct dqp *qp_by_qpn[UROCE_MAX_QP];     /* async events, SRQ accounting */
	struct uroce_daemon_stats st;
};

static void session_event(struct uroce_daemon *d, struct session *s, uint32_t type,
			  uint32_t handle);
static void srq_consumed(struct uroce_daemon *d, struct dsrq *srq);

/* ------------------------------------------------------------------------ */
/* Handles                                                                   */
/* ------------------------------------------------------------------------ */

static int
obj_add(struct session *s, uint8_t type, void *p, uint32_t *handle)
{
	uint32_t i;

	for (i = 0; i < s->nobjs; i++)
		if (s->objs[i].type == OBJ_FREE)
			break;
	if (i == s->nobjs) {
		if (s->nobjs == SESSION_MAX_OBJS)
			return -ENOMEM;
		if (s->nobjs == s->capobjs) {
			uint32_t n = s->capobjs ? s->capobjs * 2 : 32;
			struct obj *o = realloc(s->objs, n * sizeof(*o));

			if (o == NULL)
				return -ENOMEM;
			s->objs = o;
			s->capobjs = n;
		}
		s->nobjs++;
	}
	s->objs[i].type = type;
	s->objs[i].p = p;
	*handle = (uint32_t)s->id << 16 | i;
	return 0;
}

/* The object of @p handle if it is this session's and of @p type. -EPERM for
 * another session's handle, -ENOENT for no such object of that type. */
static int
obj_get(struct session *s, uint32_t handle, uint8_t type, void **p)
{
	uint32_t i = handle & 0xffffu;

	if ((handle >> 16) != s->id)
		return -EPERM;
	if (i >= s->nobjs || s->objs[i].type != type)
		return -ENOENT;
	*p = s->objs[i].p;
	return 0;
}

static void
obj_del(struct session *s, uint32_t handle)
{
	s->objs[handle & 0xffffu].type = OBJ_FREE;
	s->objs[handle & 0xffffu].p = NULL;
}

static uint32_t
pow2_at_least(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* ------------------------------------------------------------------------ */
/* Completions                                                               */
/* ------------------------------------------------------------------------ */

static void
cqe_from_dwc(struct uroce_shm_cqe *c, const struct dwc *w)
{
	memset(c, 0, sizeof(*c));
	c->wr_id = w->wr_id;
	c->status = (uint8_t)w->status;
	c->opcode = (uint8_t)w->opcode;
	c->wc_flags = (uint16_t)w->flags;
	c->vendor_err = w->vendor_err;
	c->byte_len = w->byte_len;
	c->imm_data = w->imm;
	c->qp_num = w->qp_num;
	c->src_qp = w->src_qp;
	c->pkey_index = w->pkey_index;
	c->sl = w->sl;
}

static void
cq_signal(struct uroce_daemon *d, struct dcq *cq, bool qualifies)
{
	uint64_t one = 1;

	if (cq->evfd < 0)
		return;
	if (uroce_shm_cq_should_signal(&cq->ring, qualifies)) {
		/* A full eventfd counter (EAGAIN) already means "wake up". */
		if (write(cq->evfd, &one, sizeof(one)) == (ssize_t)sizeof(one))
			d->st.cq_events++;
	}
}

/* Move the engine's completions of @p cq into its shm ring. */
static unsigned int
cq_drain(struct uroce_daemon *d, struct dcq *cq)
{
	struct uroce_shm_cqe cqe[32];
	struct dwc wc[32];
	unsigned int total = 0;
	bool qualifies = false;

	for (;;) {
		uint32_t room = uroce_shm_ring_free_count(&cq->ring);
		int n, i;

		if (room == 0)
			break;
		n = eng_poll_cq(cq->cq, room < 32 ? (int)room : 32, wc);
		if (n == -EOVERFLOW) {
			cq->overflowed = true;
			break;
		}
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			struct dqp *qp;

			cqe_from_dwc(&cqe[i], &wc[i]);
			if (wc[i].status != 0)
				qualifies = true;
			/* A receive completion of an SRQ QP consumed one SRQ WQE. */
			if ((wc[i].opcode & UROCE_WC_RECV) && wc[i].qp_num < UROCE_MAX_QP &&
			    (qp = d->qp_by_qpn[wc[i].qp_num]) != NULL && qp->srq != NULL)
				srq_consumed(d, qp->srq);
		}
		uroce_shm_ring_enqueue_burst(&cq->ring, cqe, (uint32_t)n);
		total += (unsigned int)n;
	}
	if (total > 0) {
		d->st.cqe_written += total;
		cq_signal(d, cq, qualifies);
	}
	return total;
}

/*
 * A WQE the daemon refuses: the QP goes to ERR (IBA 10.8.3.3: a local error
 * puts the QP in the error state); what the engine flushed is delivered first
 * so completions stay in order, then the refused WQE's error CQE.
 */
static void
wqe_reject(struct uroce_daemon *d, struct dqp *qp, struct dcq *cq, uint64_t wr_id, int wc_opcode,
	   int status)
{
	struct uroce_shm_cqe c;

	d->st.wqe_rejected++;
	eng_qp_to_err(qp->qp);
	cq_drain(d, qp->scq);
	if (qp->rcq != qp->scq)
		cq_drain(d, qp->rcq);
	memset(&c, 0, sizeof(c));
	c.wr_id = wr_id;
	c.status = (uint8_t)status;
	c.opcode = (uint8_t)wc_opcode;
	c.qp_num = qp->qpn;
	if (uroce_shm_ring_enqueue_burst(&cq->ring, &c, 1) == 1) {
		d->st.cqe_written++;
		cq_signal(d, cq, true);
	} else {
		/* The shm CQ is full: a completion is lost, the CQ is in error
		 * (IBA 11.4.2.1 CQ overrun); tell its owner once. */
		cq->overflowed = true;
		if (!cq->err_reported) {
			cq->err_reported = true;
			session_event(d, cq->owner, UROCE_ASYNC_CQ_ERR, cq->handle);
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Data path: doorbell -> copy out -> check -> engine                         */
/* ------------------------------------------------------------------------ */

/* Every lkey must name an MR of this session (ownership); bounds, PD and
 * rights are checked by the engine against that MR. */
static bool
lkey_owned(struct uroce_daemon *d, struct session *s, uint32_t key)
{
	uint32_t idx = key >> 8;

	return idx >= 1 && idx <= UROCE_MAX_MR && d->keys[idx].s == s && d->keys[idx].key == key;
}

static int
send_translate(struct uroce_daemon *d, struct session *s, struct dqp *qp,
	       const struct uroce_shm_send_wqe *w, struct dsend_wr *out)
{
	enum uroce_wc_status st;
	uint64_t total;
	int i;

	st = uroce_shm_send_wqe_check(w, qp->cap.max_send_sge, qp->cap.max_inline, &total);
	if (st != UROCE_WC_SUCCESS)
		return st;
	/* IBA 10.7.3.1 (table 95): UC carries SEND and WRITE only. */
	if (qp->type == UROCE_QPT_UC &&
	    (w->opcode == UROCE_WR_RDMA_READ || w->opcode == UROCE_WR_ATOMIC_CMP_AND_SWP ||
	     w->opcode == UROCE_WR_ATOMIC_FETCH_AND_ADD))
		return UROCE_WC_LOC_QP_OP_ERR;
	memset(out, 0, offsetof(struct dsend_wr, inline_data));
	if (qp->type == UROCE_QPT_UD) {
		struct dah *ah;

		/* IBA 10.7.3.1 (table 95): UD carries SEND and SEND with immediate. */
		if (w->opcode != UROCE_WR_SEND && w->opcode != UROCE_WR_SEND_WITH_IMM)
			return UROCE_WC_LOC_QP_OP_ERR;
		/* The AH must be this session's (another client's handle fails). */
		if (w->wr.ud.reserved != 0 || w->wr.ud.remote_qpn > 0xffffff ||
		    obj_get(s, w->wr.ud.ah_handle, OBJ_AH, (void **)&ah) != 0)
			return UROCE_WC_LOC_QP_OP_ERR;
		out->ah = ah->ah;
		out->remote_qpn = w->wr.ud.remote_qpn;
		out->remote_qkey = w->wr.ud.remote_qkey;
	}
	out->wr_id = w->wr_id;
	out->opcode = w->opcode;
	out->flags = w->send_flags;
	out->imm = w->imm_data;
	if (w->send_flags & UROCE_SEND_INLINE) {
		out->inline_len = w->inline_len;
		memcpy(out->inline_data, w->data.inline_data, w->inline_len);
	} else {
		out->num_sge = w->num_sge;
		for (i = 0; i < w->num_sge; i++) {
			if (!lkey_owned(d, s, w->data.sg_list[i].lkey))
				return UROCE_WC_LOC_PROT_ERR;
			out->sge[i].addr = w->data.sg_list[i].addr;
			out->sge[i].length = w->data.sg_list[i].length;
			out->sge[i].lkey = w->data.sg_list[i].lkey;
		}
	}
	if (qp->type == UROCE_QPT_UD) {
		/* wr.ud taken above */
	} else if (w->opcode == UROCE_WR_ATOMIC_CMP_AND_SWP ||
		   w->opcode == UROCE_WR_ATOMIC_FETCH_AND_ADD) {
		out->remote_addr = w->wr.atomic.remote_addr;
		out->rkey = w->wr.atomic.rkey;
		out->compare_add = w->wr.atomic.compare_add;
		out->swap = w->wr.atomic.swap;
	} else {
		out->remote_addr = w->wr.rdma.remote_addr;
		out->rkey = w->wr.rdma.rkey;
	}
	return UROCE_WC_SUCCESS;
}

static void
qp_ring_failed(struct uroce_daemon *d, struct dqp *qp)
{
	if (qp->failed)
		return;
	qp->failed = true;
	d->st.ring_corrupt++;
	eng_qp_to_err(qp->qp);
	/* No completion can say it: the QP went to ERR on its own (IBA 11.6.3). */
	session_event(d, qp->owner, UROCE_ASYNC_QP_FATAL, qp->handle);
	if (qp->srq != NULL)
		session_event(d, qp->owner, UROCE_ASYNC_QP_LAST_WQE_REACHED, qp->handle);
}

/* @return true if the QP still has work (budget or engine room exhausted). */
static bool
qp_service_rq(struct uroce_daemon *d, struct session *s, struct dqp *qp)
{
	struct uroce_shm_recv_wqe w;
	uint64_t total;
	int n, i, rc;

	if (qp->rq.hdr == NULL || qp->failed)
		return false;
	for (n = 0; n < WQES_PER_QP; n++) {
		if (!qp->recv_stashed) {
			enum uroce_wc_status st;

			if (uroce_shm_ring_dequeue_burst(&qp->rq, &w, 1) != 1) {
				if (uroce_shm_ring_is_corrupt(&qp->rq))
					qp_ring_failed(d, qp);
				return false;
			}
			st = uroce_shm_recv_wqe_check(&w, qp->cap.max_recv_sge, &total);
			for (i = 0; st == UROCE_WC_SUCCESS && i < (int)w.num_sge; i++)
				if (!lkey_owned(d, s, w.sg_list[i].lkey))
					st = UROCE_WC_LOC_PROT_ERR;
			if (st != UROCE_WC_SUCCESS) {
				wqe_reject(d, qp, qp->rcq, w.wr_id, UROCE_WC_RECV, st);
				continue;
			}
			qp->stash_recv.wr_id = w.wr_id;
			qp->stash_recv.num_sge = (int)w.num_sge;
			for (i = 0; i < (int)w.num_sge; i++) {
				qp->stash_recv.sge[i].addr = w.sg_list[i].addr;
				qp->stash_recv.sge[i].length = w.sg_list[i].length;
				qp->stash_recv.sge[i].lkey = w.sg_list[i].lkey;
			}
			qp->recv_stashed = true;
		}
		rc = eng_post_recv(qp->qp, qp->stash_recv.wr_id, qp->stash_recv.sge,
				   qp->stash_recv.num_sge);
		if (rc == -ENOMEM)
			return true;
		qp->recv_stashed = false;
		if (rc != 0)
			wqe_reject(d, qp, qp->rcq, qp->stash_recv.wr_id, UROCE_WC_RECV,
				   UROCE_WC_LOC_QP_OP_ERR);
	}
	return true;
}

static bool
qp_service_sq(struct uroce_daemon *d, struct session *s, struct dqp *qp)
{
	struct uroce_shm_send_wqe w;
	int n, rc;

	if (qp->failed)
		return false;
	for (n = 0; n < WQES_PER_QP; n++) {
		if (!qp->send_stashed) {
			int st;

			/* Copy out first: only the private copy is checked and used. */
			if (uroce_shm_ring_dequeue_burst(&qp->sq, &w, 1) != 1) {
				if (uroce_shm_ring_is_corrupt(&qp->sq))
					qp_ring_failed(d, qp);
				return false;
			}
			st = send_translate(d, s, qp, &w, &qp->stash_send);
			if (st != UROCE_WC_SUCCESS) {
				wqe_reject(d, qp, qp->scq, w.wr_id, uroce_wc_opcode_of(w.opcode),
					   st);
				continue;
			}
			qp->send_stashed = true;
		}
		rc = eng_post_send(qp->qp, &qp->stash_send);
		if (rc == -ENOMEM)
			return true;
		qp->send_stashed = false;
		if (rc != 0)
			wqe_reject(d, qp, qp->scq, qp->stash_send.wr_id,
				   uroce_wc_opcode_of(qp->stash_send.opcode),
				   UROCE_WC_LOC_QP_OP_ERR);
	}
	return true;
}

/* ------------------------------------------------------------------------ */
/* Asynchronous events and SRQs                                              */
/* ------------------------------------------------------------------------ */

/*
 * Tell a client about an event on one of its objects with an unprompted
 * ASYNC_EVENT (seq 0). The session socket is non-blocking and this never
 * waits: replies must always find room, so when more than half of the
 * socket's send buffer is still unread the event is dropped and counted
 * (async_dropped), as it is when the send fails.
 */
static void
session_event(struct uroce_daemon *d, struct session *s, uint32_t type, uint32_t handle)
{
	uint8_t buf[sizeof(struct uroce_shm_msg_hdr) + sizeof(struct uroce_shm_msg_async_event)];
	struct uroce_shm_msg_async_event *ev;
	socklen_t sl = sizeof(int);
	int n, outq = 0, sndbuf = 0;

	/* A 1.0 client has no consumer for events: it is sent none. */
	if (s == NULL || s->dead || !s->hello || s->minor < 1)
		return;
	if (ioctl(s->fd, SIOCOUTQ, &outq) != 0 ||
	    getsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl) != 0 || outq > sndbuf / 2) {
		d->st.async_dropped++;
		return;
	}
	n = uroce_shm_msg_init(buf, sizeof(buf), UROCE_SHM_MSG_ASYNC_EVENT, 0, true, 0);
	if (n != (int)sizeof(buf)) {
		d->st.async_dropped++;
		return;
	}
	ev = (void *)(buf + sizeof(struct uroce_shm_msg_hdr));
	ev->event_type = type;
	ev->handle = handle;
	if (uroce_shm_sock_send(s->fd, buf, sizeof(buf), -1) == (ssize_t)sizeof(buf))
		d->st.async_events++;
	else
		d->st.async_dropped++;
}

void
daemon_async_event(void *dctx, int type, uint32_t qpn, void *eng_cq)
{
	struct uroce_daemon *d = dctx;
	struct dqp *qp;
	struct dcq *cq;

	switch (type) {
	case UROCE_ASYNC_QP_FATAL:
	case UROCE_ASYNC_SQ_DRAINED:
		if (qpn >= UROCE_MAX_QP || (qp = d->qp_by_qpn[qpn]) == NULL)
			return; /* a QP the daemon no longer tracks */
		session_event(d, qp->owner, (uint32_t)type, qp->handle);
		/* IBA 11.6.3: an SRQ QP in ERR takes no more WQEs from its SRQ
		 * (the engine flushed the one it held when it entered ERR). */
		if (type == UROCE_ASYNC_QP_FATAL && qp->srq != NULL)
			session_event(d, qp->owner, UROCE_ASYNC_QP_LAST_WQE_REACHED, qp->handle);
		return;
	case UROCE_ASYNC_CQ_ERR:
		/* Rare: a walk of the CQ list is fine here. */
		for (cq = d->cqs; cq != NULL; cq = cq->next)
			if (cq->cq == eng_cq) {
				if (!cq->err_reported) {
					cq->err_reported = true;
					session_event(d, cq->owner, UROCE_ASYNC_CQ_ERR,
						      cq->handle);
				}
				return;
			}
		return;
	default:
		return; /* no other engine event names a client object */
	}
}

/* WQEs the SRQ holds: in the engine, stashed, and still in the ring. */
static uint32_t
srq_level(struct dsrq *srq)
{
	return srq->in_engine + (srq->stashed ? 1 : 0) + uroce_shm_ring_used_count(&srq->ring);
}

/*
 * The SRQ limit (IBA 10.2.9.3, 11.5.2.4): once armed, the first time the SRQ
 * holds fewer WQEs than the limit, report SRQ_LIMIT_REACHED and disarm, so
 * that one arming gives one event.
 */
static void
srq_check_limit(struct uroce_daemon *d, struct dsrq *srq)
{
	if (srq->limit == 0 || srq_level(srq) >= srq->limit)
		return;
	srq->limit = 0;
	session_event(d, srq->owner, UROCE_ASYNC_SRQ_LIMIT_REACHED, srq->handle);
}

static void
srq_consumed(struct uroce_daemon *d, struct dsrq *srq)
{
	if (srq->in_engine > 0)
		srq->in_engine--;
	srq_check_limit(d, srq);
}

static void
srq_ring_failed(struct uroce_daemon *d, struct dsrq *srq)
{
	if (srq->failed)
		return;
	srq->failed = true;
	d->st.ring_corrupt++;
	session_event(d, srq->owner, UROCE_ASYNC_SRQ_ERR, srq->handle);
}

/*
 * Move receive WQEs from the SRQ ring to the engine SRQ: copy out, check, post.
 * A WQE the ABI alone refuses (reserved bits, too many SGEs, too long) is
 * dropped and counted: there is no QP to complete it on yet. An SGE whose lkey
 * is not one of this client's MRs is posted with the reserved key 0, which no
 * MR ever has, so the QP that consumes the WQE completes it with
 * LOC_PROT_ERR, as hardware reports a bad SRQ lkey (counted as well). Bounds
 * and rights are the engine's to check against the MR when data lands.
 * @return true if work is left (budget or engine room exhausted).
 */
static bool
srq_service(struct uroce_daemon *d, struct session *s, struct dsrq *srq)
{
	struct uroce_shm_recv_wqe w;
	uint64_t total;
	int n, i, rc;

	if (srq->failed)
		return false;
	for (n = 0; n < WQES_PER_QP; n++) {
		if (!srq->stashed) {
			bool poisoned = false;

			if (uroce_shm_ring_dequeue_burst(&srq->ring, &w, 1) != 1) {
				if (uroce_shm_ring_is_corrupt(&srq->ring))
					srq_ring_failed(d, srq);
				return false;
			}
			if (uroce_shm_recv_wqe_check(&w, srq->max_sge, &total) !=
			    UROCE_WC_SUCCESS) {
				d->st.wqe_rejected++;
				d->st.srq_wqe_rejected++;
				continue;
			}
			srq->stash.wr_id = w.wr_id;
			srq->stash.num_sge = (int)w.num_sge;
			for (i = 0; i < (int)w.num_sge; i++) {
				uint32_t key = w.sg_list[i].lkey;

				if (!lkey_owned(d, s, key)) {
					key = 0;
					poisoned = true;
				}
				srq->stash.sge[i].addr = w.sg_list[i].addr;
				srq->stash.sge[i].length = w.sg_list[i].length;
				srq->stash.sge[i].lkey = key;
			}
			if (poisoned) {
				d->st.wqe_rejected++;
				d->st.srq_wqe_rejected++;
			}
			srq->stashed = true;
		}
		rc = eng_post_srq_recv(srq->srq, srq->stash.wr_id, srq->stash.sge,
				       srq->stash.num_sge);
		if (rc == -ENOMEM)
			return true;
		srq->stashed = false;
		if (rc == 0) {
			srq->in_engine++;
		} else {
			d->st.wqe_rejected++;
			d->st.srq_wqe_rejected++;
		}
	}
	return true;
}

static unsigned int
session_doorbells(struct uroce_daemon *d, struct session *s)
{
	uint32_t again[SLOTS_PER_POLL];
	uint32_t nagain = 0, i;
	unsigned int served = 0;
	int slot;

	if (!s->hello || s->dead)
		return 0;
	while (served < SLOTS_PER_POLL && (slot = uroce_shm_db_next(&s->rd)) >= 0) {
		struct dqp *qp = s->slots[slot];
		bool more;

		served++;
		if (qp == NULL) {
			struct dsrq *srq = s->srq_slots != NULL ? s->srq_slots[slot] : NULL;

			/* A slot with neither a QP nor an SRQ: the client's own noise. */
			if (srq != NULL && srq_service(d, s, srq))
				again[nagain++] = (uint32_t)slot;
			continue;
		}
		more = qp_service_rq(d, s, qp);
		more |= qp_service_sq(d, s, qp);
		if (more)
			again[nagain++] = (uint32_t)slot;
	}
	for (i = 0; i < nagain; i++)
		uroce_shm_db_requeue(&s->rd, again[i]);
	return served;
}

/* ------------------------------------------------------------------------ */
/* Resource teardown                                                         */
/* ------------------------------------------------------------------------ */

static void
qp_free(struct uroce_daemon *d, struct session *s, struct dqp *qp)
{
	eng_qp_destroy(qp->qp);
	uroce_shm_segment_unmap(&qp->seg);
	s->slots[qp->slot] = NULL;
	if (qp->qpn < UROCE_MAX_QP && d->qp_by_qpn[qp->qpn] == qp)
		d->qp_by_qpn[qp->qpn] = NULL;
	if (qp->srq != NULL)
		qp->srq->qps--;
	free(qp);
	d->st.qps--;
}

static void
mr_free(struct uroce_daemon *d, struct dmr *mr)
{
	uint32_t idx = mr->key >> 8;

	eng_mr_dereg(mr->mr);
	if (idx >= 1 && idx <= UROCE_MAX_MR) {
		d->keys[idx].s = NULL;
		d->keys[idx].key = 0;
	}
	mr->seg->refs--;
	free(mr);
	d->st.mrs--;
}

/* Release a CQ whose engine CQ is already destroyed. */
static void
cq_release(struct uroce_daemon *d, struct dcq *cq)
{
	*cq->pprev = cq->next;
	if (cq->next != NULL)
		cq->next->pprev = cq->pprev;
	uroce_shm_segment_unmap(&cq->seg);
	if (cq->evfd >= 0)
		close(cq->evfd);
	free(cq);
	d->st.cqs--;
}

static void
cq_free(struct uroce_daemon *d, struct dcq *cq)
{
	eng_cq_destroy(cq->cq);
	cq_release(d, cq);
}

/* Release an SRQ no QP uses any more (the engine SRQ with its WQEs too). */
static int
srq_free(struct uroce_daemon *d, struct session *s, struct dsrq *srq)
{
	int rc;

	if (srq->qps != 0)
		return -EBUSY;
	rc = eng_srq_destroy(srq->srq);
	if (rc != 0)
		return rc;
	s->srq_slots[srq->slot] = NULL;
	uroce_shm_segment_unmap(&srq->seg);
	free(srq);
	d->st.srqs--;
	return 0;
}

/* Tear a session down: QPs to ERR and destroyed, then MRs, SRQs, CQs, PDs, segments. */
static void
session_free(struct uroce_daemon *d, struct session *s)
{
	static const uint8_t order[] = {OBJ_QP, OBJ_AH, OBJ_MR, OBJ_SRQ, OBJ_CQ, OBJ_PD,
					OBJ_SEG};
	unsigned int k;
	uint32_t i;

	for (i = 0; i < s->nobjs; i++)
		if (s->objs[i].type == OBJ_QP)
			eng_qp_to_err(((struct dqp *)s->objs[i].p)->qp);
	for (k = 0; k < sizeof(order); k++) {
		for (i = 0; i < s->nobjs; i++) {
			struct obj *o = &s->objs[i];

			if (o->type != order[k])
				continue;
			switch (o->type) {
			case OBJ_QP:
				qp_free(d, s, o->p);
				break;
			case OBJ_MR:
				mr_free(d, o->p);
				break;
			case OBJ_AH:
				eng_ah_destroy(((struct dah *)o->p)->ah);
				free(o->p);
				d->st.ahs--;
				break;
			case OBJ_CQ:
				cq_free(d, o->p);
				break;
			case OBJ_SRQ:
				srq_free(d, s, o->p);
				break;
			case OBJ_PD:
				eng_pd_dealloc(((struct dpd *)o->p)->pd);
				free(o->p);
				d->st.pds--;
				break;
			case OBJ_SEG:
				uroce_shm_segment_unmap(&((struct dseg *)o->p)->seg);
				free(o->p);
				d->st.segments--;
				break;
			}
			o->type = OBJ_FREE;
		}
	}
	uroce_shm_segment_unmap(&s->db);
	if (s->fd >= 0)
		close(s->fd);
	free(s->objs);
	free(s->slots);
	free(s->srq_slots);
	free(s);
	d->st.sessions--;
}

/* ------------------------------------------------------------------------ */
/* Control requests                                                          */
/* ------------------------------------------------------------------------ */

struct reply {
	uint8_t buf[UROCE_SHM_MSG_MAX];
	void *body;
	int fd; /* descriptor to pass with a successful reply */
};

static int
do_hello(struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_hello_req *q = body;
	struct uroce_shm_msg_hello_resp *p = r->body;
	int rc;

	if (s->hello)
		return -EALREADY;
	if (q->flags != 0)
		return -EINVAL;
	rc = uroce_shm_version_check(q->abi_major, q->abi_minor);
	if (rc != 0)
		return rc;
	s->minor = q->abi_minor;
	rc = uroce_shm_segment_create(&s->db, "uroce-db", sizeof(struct uroce_shm_db_block), 0);
	if (rc != 0)
		return rc;
	uroce_shm_db_reader_init(&s->rd, s->db.addr, UROCE_SHM_DB_SLOTS);
	s->hello = true;
	p->abi_major = UROCE_SHM_ABI_MAJOR;
	p->abi_minor = UROCE_SHM_ABI_MINOR;
	p->client_id = s->id;
	p->n_db_blocks = 1;
	p->db_seg_size = (uint32_t)s->db.size;
	p->max_inline = UROCE_MAX_INLINE;
	p->max_sge = UROCE_MAX_SGE;
	p->max_qp_wr = UROCE_MAX_QP_WR;
	p->max_cqe = UROCE_MAX_CQE;
	r->fd = s->db.fd;
	return 0;
}

static int
do_alloc_segment(struct uroce_daemon *d, struct session *s, const void *body, int *fd,
		 struct reply *r)
{
	const struct uroce_shm_msg_alloc_segment_req *q = body;
	struct uroce_shm_msg_alloc_segment_resp *p = r->body;
	struct dseg *g;
	uint32_t h;
	int rc;

	if (q->reserved != 0 || (q->flags & ~UROCE_SHM_SEG_HUGETLB) != 0 || q->size == 0 ||
	    q->size > SIZE_MAX)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return -ENOMEM;
	rc = uroce_shm_segment_map(&g->seg, *fd, (size_t)q->size);
	if (rc != 0) {
		free(g);
		return rc;
	}
	*fd = -1; /* the segment owns it now */
	rc = obj_add(s, OBJ_SEG, g, &h);
	if (rc != 0) {
		uroce_shm_segment_unmap(&g->seg);
		free(g);
		return rc;
	}
	d->st.segments++;
	p->seg_handle = h;
	p->size = g->seg.size;
	return 0;
}

static int
do_free_segment(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dseg *g;
	int rc = obj_get(s, q->handle, OBJ_SEG, (void **)&g);

	if (rc != 0)
		return rc;
	if (g->refs != 0)
		return -EBUSY;
	uroce_shm_segment_unmap(&g->seg);
	free(g);
	obj_del(s, q->handle);
	d->st.segments--;
	return 0;
}

static int
do_alloc_pd(struct uroce_daemon *d, struct session *s, struct reply *r)
{
	struct uroce_shm_msg_handle *p = r->body;
	struct dpd *pd;
	int rc;

	if (d->st.pds >= DAEMON_MAX_PD)
		return -ENOMEM;
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL)
		return -ENOMEM;
	pd->pd = eng_pd_alloc(d->eng);
	if (pd->pd == NULL) {
		free(pd);
		return -ENOMEM;
	}
	rc = obj_add(s, OBJ_PD, pd, &p->handle);
	if (rc != 0) {
		eng_pd_dealloc(pd->pd);
		free(pd);
		return rc;
	}
	d->st.pds++;
	return 0;
}

static int
do_dealloc_pd(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dpd *pd;
	int rc = obj_get(s, q->handle, OBJ_PD, (void **)&pd);

	if (rc != 0)
		return rc;
	rc = eng_pd_dealloc(pd->pd);
	if (rc != 0)
		return rc;
	free(pd);
	obj_del(s, q->handle);
	d->st.pds--;
	return 0;
}

static int
do_reg_mr(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_reg_mr_req *q = body;
	struct uroce_shm_msg_reg_mr_resp *p = r->body;
	const uint32_t all = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
			     UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC;
	struct dpd *pd;
	struct dseg *g;
	struct dmr *mr;
	uint32_t idx;
	int rc;

	if (q->reserved != 0 || (q->access & ~all) != 0)
		return -EINVAL;
	rc = obj_get(s, q->pd_handle, OBJ_PD, (void **)&pd);
	if (rc == 0)
		rc = obj_get(s, q->seg_handle, OBJ_SEG, (void **)&g);
	if (rc != 0)
		return rc;
	/* The window must lie inside the segment (overflow-safe). */
	if (q->seg_offset > g->seg.size || q->length > g->seg.size - q->seg_offset)
		return -EINVAL;
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return -ENOMEM;
	mr->mr = eng_mr_reg(pd->pd, (uint8_t *)g->seg.addr + q->seg_offset, q->iova, q->length,
			    (int)q->access, &p->lkey, &p->rkey);
	if (mr->mr == NULL) {
		rc = -errno;
		free(mr);
		return rc ? rc : -ENOMEM;
	}
	mr->key = p->lkey;
	mr->seg = g;
	rc = obj_add(s, OBJ_MR, mr, &p->mr_handle);
	if (rc != 0) {
		eng_mr_dereg(mr->mr);
		free(mr);
		return rc;
	}
	idx = mr->key >> 8;
	if (idx >= 1 && idx <= UROCE_MAX_MR) {
		d->keys[idx].s = s;
		d->keys[idx].key = mr->key;
	}
	g->refs++;
	d->st.mrs++;
	return 0;
}

static int
do_dereg_mr(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dmr *mr;
	int rc = obj_get(s, q->handle, OBJ_MR, (void **)&mr);

	if (rc != 0)
		return rc;
	mr_free(d, mr);
	obj_del(s, q->handle);
	return 0;
}

/*
 * The daemon writes the client's CQ eventfd from its poll loop, so it accepts
 * only a real eventfd in non-blocking mode: a pipe could raise SIGPIPE, and a
 * blocking descriptor (or an eventfd whose counter the client drove to the
 * top) could stall every client's data path.
 */
static bool
is_nonblocking_eventfd(int fd)
{
	char path[64], link[64];
	ssize_t n;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || !(fl & O_NONBLOCK))
		return false;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return strcmp(link, "anon_inode:[eventfd]") == 0;
}

static int
do_create_cq(struct uroce_daemon *d, struct session *s, const void *body, int *fd,
	     struct reply *r)
{
	const struct uroce_shm_msg_create_cq_req *q = body;
	struct uroce_shm_msg_create_cq_resp *p = r->body;
	struct dcq *cq;
	size_t mem;
	int rc;

	if (q->reserved != 0 || (q->flags & ~UROCE_SHM_CQ_F_EVENTFD) != 0 || q->cqe == 0 ||
	    q->cqe > UROCE_MAX_CQE || q->comp_vector != 0)
		return -EINVAL;
	if (((q->flags & UROCE_SHM_CQ_F_EVENTFD) != 0) != (*fd >= 0))
		return -EINVAL;
	if (*fd >= 0 && !is_nonblocking_eventfd(*fd))
		return -EINVAL;
	if (d->st.cqs >= DAEMON_MAX_CQ)
		return -ENOMEM;
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return -ENOMEM;
	cq->evfd = -1;
	cq->size = pow2_at_least(q->cqe);
	mem = uroce_shm_ring_mem_size(cq->size, sizeof(struct uroce_shm_cqe));
	rc = uroce_shm_segment_create(&cq->seg, "uroce-cq", mem, 0);
	if (rc != 0)
		goto fail_free;
	rc = uroce_shm_ring_init(&cq->ring, cq->seg.addr, cq->seg.size, cq->size,
				 sizeof(struct uroce_shm_cqe), 0, UROCE_SHM_RING_PRODUCER,
				 UROCE_SHM_RING_F_UNTRUSTED);
	if (rc != 0)
		goto fail_seg;
	cq->cq = eng_cq_create(d->eng, (int)cq->size);
	if (cq->cq == NULL) {
		rc = -ENOMEM;
		goto fail_seg;
	}
	rc = obj_add(s, OBJ_CQ, cq, &p->cq_handle);
	if (rc != 0)
		goto fail_cq;
	cq->owner = s;
	cq->handle = p->cq_handle;
	cq->evfd = *fd;
	*fd = -1;
	cq->next = d->cqs;
	if (d->cqs != NULL)
		d->cqs->pprev = &cq->next;
	cq->pprev = &d->cqs;
	d->cqs = cq;
	d->st.cqs++;
	p->cqe = cq->size;
	p->seg_size = cq->seg.size;
	p->ring_offset = 0;
	r->fd = cq->seg.fd;
	return 0;
fail_cq:
	eng_cq_destroy(cq->cq);
fail_seg:
	uroce_shm_segment_unmap(&cq->seg);
fail_free:
	free(cq);
	return rc;
}

static int
do_destroy_cq(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dcq *cq;
	int rc = obj_get(s, q->handle, OBJ_CQ, (void **)&cq);

	if (rc != 0)
		return rc;
	rc = eng_cq_destroy(cq->cq);
	if (rc != 0)
		return rc;
	cq_release(d, cq);
	obj_del(s, q->handle);
	return 0;
}

/* A doorbell slot that names neither a QP nor an SRQ. @return 0 or -ENOMEM. */
static int
slot_alloc(const struct session *s, uint32_t *slot)
{
	uint32_t i;

	for (i = 0; i < UROCE_SHM_DB_SLOTS; i++)
		if (s->slots[i] == NULL && (s->srq_slots == NULL || s->srq_slots[i] == NULL)) {
			*slot = i;
			return 0;
		}
	return -ENOMEM;
}

static int
do_create_qp(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_create_qp_req *q = body;
	struct uroce_shm_msg_create_qp_resp *p = r->body;
	struct uroce_shm_qp_layout lay;
	struct dsrq *srq = NULL;
	struct dpd *pd;
	struct dcq *scq, *rcq;
	struct dqp *qp;
	uint32_t slot, sqn, rqn;
	int rc;

	rc = obj_get(s, q->pd_handle, OBJ_PD, (void **)&pd);
	if (rc == 0)
		rc = obj_get(s, q->send_cq, OBJ_CQ, (void **)&scq);
	if (rc == 0)
		rc = obj_get(s, q->recv_cq, OBJ_CQ, (void **)&rcq);
	/* Another client's SRQ handle: -EPERM; no such SRQ: -ENOENT. */
	if (rc == 0 && q->srq_handle != UROCE_SHM_HANDLE_NONE)
		rc = obj_get(s, q->srq_handle, OBJ_SRQ, (void **)&srq);
	if (rc != 0)
		return rc;
	if (q->qp_type != UROCE_QPT_RC && q->qp_type != UROCE_QPT_UC &&
	    q->qp_type != UROCE_QPT_UD)
		return -EINVAL;
	/* With an SRQ the receive capacities are the SRQ's (ibv_qp_init_attr
	 * ignores max_recv_wr and max_recv_sge then). */
	if (q->sq_sig_all > 1 || q->cap.reserved != 0 || q->cap.max_send_wr == 0 ||
	    q->cap.max_send_wr > UROCE_MAX_QP_WR || q->cap.max_send_sge > UROCE_MAX_SGE ||
	    q->cap.max_inline_data > UROCE_MAX_INLINE ||
	    (srq == NULL && (q->cap.max_recv_wr == 0 || q->cap.max_recv_wr > UROCE_MAX_QP_WR ||
			     q->cap.max_recv_sge > UROCE_MAX_SGE)))
		return -EINVAL;
	rc = slot_alloc(s, &slot);
	if (rc != 0)
		return rc;
	sqn = pow2_at_least(q->cap.max_send_wr);
	rqn = srq != NULL ? 0 : pow2_at_least(q->cap.max_recv_wr);
	rc = uroce_shm_qp_layout(sqn, rqn, &lay);
	if (rc != 0)
		return rc;
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return -ENOMEM;
	qp->type = q->qp_type;
	qp->slot = slot;
	qp->scq = scq;
	qp->rcq = rcq;
	qp->sig_all = q->sq_sig_all;
	qp->cap.max_send_wr = sqn;
	qp->cap.max_recv_wr = rqn;
	qp->cap.max_send_sge = q->cap.max_send_sge ? q->cap.max_send_sge : 1;
	qp->cap.max_recv_sge = srq != NULL ? 0 : q->cap.max_recv_sge ? q->cap.max_recv_sge : 1;
	qp->cap.max_inline = q->cap.max_inline_data;
	rc = uroce_shm_segment_create(&qp->seg, "uroce-qp", lay.total, 0);
	if (rc != 0)
		goto fail_free;
	rc = uroce_shm_ring_init(&qp->sq, (uint8_t *)qp->seg.addr + lay.sq_offset, lay.sq_bytes,
				 sqn, sizeof(struct uroce_shm_send_wqe), 0,
				 UROCE_SHM_RING_CONSUMER, UROCE_SHM_RING_F_UNTRUSTED);
	if (rc == 0 && srq == NULL)
		rc = uroce_shm_ring_init(&qp->rq, (uint8_t *)qp->seg.addr + lay.rq_offset,
					 lay.rq_bytes, rqn, sizeof(struct uroce_shm_recv_wqe), 0,
					 UROCE_SHM_RING_CONSUMER, UROCE_SHM_RING_F_UNTRUSTED);
	if (rc != 0)
		goto fail_seg;
	if (srq != NULL)
		qp->qp = eng_qp_create_srq(pd->pd, scq->cq, rcq->cq, srq->srq, (int)q->qp_type,
					   q->sq_sig_all != 0, &qp->cap, &qp->qpn);
	else
		qp->qp = eng_qp_create(pd->pd, scq->cq, rcq->cq, (int)q->qp_type,
				       q->sq_sig_all != 0, &qp->cap, &qp->qpn);
	if (qp->qp == NULL) {
		rc = errno ? -errno : -ENOMEM;
		goto fail_seg;
	}
	rc = obj_add(s, OBJ_QP, qp, &p->qp_handle);
	if (rc != 0)
		goto fail_qp;
	s->slots[slot] = qp;
	qp->owner = s;
	qp->handle = p->qp_handle;
	qp->srq = srq;
	if (srq != NULL)
		srq->qps++;
	if (qp->qpn < UROCE_MAX_QP)
		d->qp_by_qpn[qp->qpn] = qp;
	d->st.qps++;
	p->qp_num = qp->qpn;
	p->cap.max_send_wr = qp->cap.max_send_wr;
	p->cap.max_recv_wr = qp->cap.max_recv_wr;
	p->cap.max_send_sge = qp->cap.max_send_sge;
	p->cap.max_recv_sge = qp->cap.max_recv_sge;
	p->cap.max_inline_data = qp->cap.max_inline;
	p->seg_size = qp->seg.size;
	p->sq_offset = lay.sq_offset;
	p->rq_offset = lay.rq_offset;
	p->db_block = 0;
	p->db_slot = slot;
	r->fd = qp->seg.fd;
	return 0;
fail_qp:
	eng_qp_destroy(qp->qp);
fail_seg:
	uroce_shm_segment_unmap(&qp->seg);
fail_free:
	free(qp);
	return rc;
}

static int
do_destroy_qp(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dqp *qp;
	int rc = obj_get(s, q->handle, OBJ_QP, (void **)&qp);

	if (rc != 0)
		return rc;
	/* Count the SRQ WQEs its last receives consumed before it is forgotten. */
	if (qp->srq != NULL)
		cq_drain(d, qp->rcq);
	qp_free(d, s, qp);
	obj_del(s, q->handle);
	return 0;
}

/* The GID at @p index of port 1; an empty slot or an index past the table is EINVAL. */
static int
sgid_lookup(const struct uroce_daemon *d, uint32_t index, uint8_t sgid[16])
{
	if (index >= d->n_gid || uroce_gid_is_zero(d->gids[index]))
		return -EINVAL;
	memcpy(sgid, d->gids[index], 16);
	return 0;
}

static int
do_modify_qp(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_modify_qp_req *q = body;
	const struct uroce_shm_qp_attr *a = &q->attr;
	struct dqp_attr da;
	struct dqp *qp;
	int rc = obj_get(s, q->qp_handle, OBJ_QP, (void **)&qp);

	if (rc != 0)
		return rc;
	if (a->reserved0 != 0 || a->reserved1 != 0 || (q->attr_mask & UROCE_QP_CAP))
		return -EINVAL;
	memset(&da, 0, sizeof(da));
	if (q->attr_mask & UROCE_QP_AV) {
		rc = sgid_lookup(d, a->ah_attr.sgid_index, da.sgid);
		if (rc != 0)
			return rc;
	}
	/* A path MTU above the port's active MTU could never be carried. */
	if ((q->attr_mask & UROCE_QP_PATH_MTU) && a->path_mtu > d->active_mtu)
		return -EINVAL;
	da.qp_state = a->qp_state;
	da.cur_qp_state = a->cur_qp_state;
	da.path_mtu = a->path_mtu;
	da.qkey = a->qkey;
	da.rq_psn = a->rq_psn;
	da.sq_psn = a->sq_psn;
	da.dest_qp_num = a->dest_qp_num;
	da.access = a->qp_access_flags;
	da.pkey_index = a->pkey_index;
	da.port_num = a->port_num;
	da.max_rd_atomic = a->max_rd_atomic;
	da.max_dest_rd_atomic = a->max_dest_rd_atomic;
	da.min_rnr_timer = a->min_rnr_timer;
	da.timeout = a->timeout;
	da.retry_cnt = a->retry_cnt;
	da.rnr_retry = a->rnr_retry;
	memcpy(da.dgid, a->ah_attr.dgid, 16);
	da.flow_label = a->ah_attr.flow_label;
	da.hop_limit = a->ah_attr.hop_limit;
	da.tclass = a->ah_attr.traffic_class;
	da.sl = a->ah_attr.sl;
	da.ah_port = a->ah_attr.port_num;
	rc = eng_modify_qp(qp->qp, &da, (int)q->attr_mask);
	/* IBA 11.6.3: an SRQ QP the client moved to ERR takes no more WQEs from
	 * the SRQ once the flush completions are out: Last WQE Reached. */
	if (rc == 0 && qp->srq != NULL && (q->attr_mask & UROCE_QP_STATE) &&
	    a->qp_state == UROCE_QPS_ERR) {
		cq_drain(d, qp->rcq);
		session_event(d, s, UROCE_ASYNC_QP_LAST_WQE_REACHED, qp->handle);
	}
	return rc;
}

static int
do_query_qp(const struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_query_qp_req *q = body;
	struct uroce_shm_msg_query_qp_resp *p = r->body;
	struct dqp_attr da;
	struct dcap cap;
	struct dqp *qp;
	unsigned int i;
	int rc = obj_get(s, q->qp_handle, OBJ_QP, (void **)&qp);

	if (rc != 0)
		return rc;
	rc = eng_query_qp(qp->qp, &da, &cap);
	if (rc != 0)
		return rc;
	p->attr.qp_state = da.qp_state;
	p->attr.cur_qp_state = da.cur_qp_state;
	p->attr.path_mtu = da.path_mtu;
	p->attr.qkey = da.qkey;
	p->attr.rq_psn = da.rq_psn;
	p->attr.sq_psn = da.sq_psn;
	p->attr.dest_qp_num = da.dest_qp_num;
	p->attr.qp_access_flags = da.access;
	p->attr.pkey_index = da.pkey_index;
	p->attr.port_num = da.port_num;
	p->attr.max_rd_atomic = da.max_rd_atomic;
	p->attr.max_dest_rd_atomic = da.max_dest_rd_atomic;
	p->attr.min_rnr_timer = da.min_rnr_timer;
	p->attr.timeout = da.timeout;
	p->attr.retry_cnt = da.retry_cnt;
	p->attr.rnr_retry = da.rnr_retry;
	p->attr.sq_draining = da.sq_draining;
	memcpy(p->attr.ah_attr.dgid, da.dgid, 16);
	p->attr.ah_attr.flow_label = da.flow_label;
	p->attr.ah_attr.hop_limit = da.hop_limit;
	p->attr.ah_attr.traffic_class = da.tclass;
	p->attr.ah_attr.sl = da.sl;
	p->attr.ah_attr.port_num = da.ah_port;
	p->attr.ah_attr.is_global = 1;
	for (i = 0; i < d->n_gid; i++)
		if (memcmp(d->gids[i], da.sgid, 16) == 0)
			p->attr.ah_attr.sgid_index = (uint8_t)i;
	/* Report the daemon's view of the queues (what the rings hold). */
	p->cap.max_send_wr = qp->cap.max_send_wr;
	p->cap.max_recv_wr = qp->cap.max_recv_wr;
	p->cap.max_send_sge = qp->cap.max_send_sge;
	p->cap.max_recv_sge = qp->cap.max_recv_sge;
	p->cap.max_inline_data = qp->cap.max_inline;
	p->qp_type = qp->type;
	return 0;
}

static int
do_create_ah(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_create_ah_req *q = body;
	const struct uroce_shm_ah_attr *a = &q->attr;
	struct uroce_shm_msg_handle *p = r->body;
	uint8_t sgid[16];
	struct dpd *pd;
	struct dah *ah;
	int rc = obj_get(s, q->pd_handle, OBJ_PD, (void **)&pd);

	if (rc != 0)
		return rc;
	/* RoCE AHs are always global (IBA A16.3); one port. */
	if (q->reserved != 0 || a->reserved0 != 0 || a->reserved1 != 0 ||
	    a->flow_label > 0xfffff || a->port_num > 1)
		return -EINVAL;
	rc = sgid_lookup(d, a->sgid_index, sgid);
	if (rc != 0)
		return rc;
	if (d->st.ahs >= DAEMON_MAX_AH)
		return -ENOMEM;
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL)
		return -ENOMEM;
	ah->ah = eng_ah_create(pd->pd, sgid, a->dgid, a->traffic_class, a->hop_limit,
			       a->flow_label, a->sl, a->port_num);
	if (ah->ah == NULL) {
		rc = errno ? -errno : -ENOMEM;
		free(ah);
		return rc;
	}
	rc = obj_add(s, OBJ_AH, ah, &p->handle);
	if (rc != 0) {
		eng_ah_destroy(ah->ah);
		free(ah);
		return rc;
	}
	d->st.ahs++;
	return 0;
}

static int
do_destroy_ah(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dah *ah;
	int rc = obj_get(s, q->handle, OBJ_AH, (void **)&ah);

	if (rc != 0)
		return rc;
	rc = eng_ah_destroy(ah->ah);
	if (rc != 0)
		return rc;
	free(ah);
	obj_del(s, q->handle);
	d->st.ahs--;
	return 0;
}

static void
do_query_device(struct uroce_daemon *d, struct reply *r)
{
	struct uroce_shm_msg_query_device_resp *p = r->body;

	p->node_guid = (uint64_t)d->gids[0][12] << 24 | (uint64_t)d->gids[0][13] << 16 |
		       (uint64_t)d->gids[0][14] << 8 | d->gids[0][15];
	p->sys_image_guid = p->node_guid;
	p->max_mr_size = UINT64_MAX;
	p->page_size_cap = 4096;
	p->max_qp = UROCE_MAX_QP - UROCE_FIRST_USER_QPN;
	p->max_qp_wr = UROCE_MAX_QP_WR;
	p->max_sge = UROCE_MAX_SGE;
	p->max_cq = DAEMON_MAX_CQ;
	p->max_cqe = UROCE_MAX_CQE;
	p->max_mr = UROCE_MAX_MR - 1; /* key index 0 is never used */
	p->max_pd = DAEMON_MAX_PD;
	p->max_qp_rd_atom = UROCE_MAX_DEST_RD_ATOMIC;
	p->max_qp_init_rd_atom = UROCE_MAX_RD_ATOMIC;
	p->max_srq = DAEMON_MAX_SRQ;
	p->max_srq_wr = UROCE_MAX_QP_WR;
	p->max_srq_sge = UROCE_MAX_SGE;
	p->max_ah = DAEMON_MAX_AH;
	p->max_inline_data = UROCE_MAX_INLINE;
	p->atomic_cap = 1; /* IBV_ATOMIC_HCA: atomic among this device's QPs */
	p->phys_port_cnt = 1;
	p->max_pkeys = 1;
}

static int
do_query_port(struct uroce_daemon *d, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_query_port_req *q = body;
	struct uroce_shm_msg_query_port_resp *p = r->body;

	if (q->port_num != 1)
		return -EINVAL;
	p->state = 4;        /* IBV_PORT_ACTIVE */
	p->max_mtu = 5;      /* 4096 */
	p->active_mtu = d->active_mtu;
	p->gid_tbl_len = d->n_gid;
	p->max_msg_sz = UROCE_MAX_MSG_SIZE;
	p->pkey_tbl_len = 1;
	p->active_speed = 1;
	p->active_width = 1;
	p->phys_state = 5;   /* LinkUp */
	p->link_layer = 2;   /* IBV_LINK_LAYER_ETHERNET */
	return 0;
}

static int
do_query_gid(struct uroce_daemon *d, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_query_gid_req *q = body;
	struct uroce_shm_msg_query_gid_resp *p = r->body;

	if (q->port_num != 1 || q->index >= d->n_gid)
		return -EINVAL;
	/* An empty slot reads as the zero GID, as ibv_query_gid does. */
	memcpy(p->gid, d->gids[q->index], 16);
	p->gid_type = 1; /* RoCEv2 */
	return 0;
}

/* ------------------------------------------------------------------------ */
/* SRQ requests                                                              */
/* ------------------------------------------------------------------------ */

static int
do_create_srq(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_create_srq_req *q = body;
	struct uroce_shm_msg_create_srq_resp *p = r->body;
	struct dsrq *srq;
	struct dpd *pd;
	size_t mem;
	uint32_t slot;
	int rc;

	/* A 1.0 client would never ring the SRQ's doorbell slot. */
	if (s->minor < 1)
		return -EOPNOTSUPP;
	rc = obj_get(s, q->pd_handle, OBJ_PD, (void **)&pd);
	if (rc != 0)
		return rc;
	/* ibv_create_srq: the limit must not exceed max_wr (0: not armed). */
	if (q->max_wr == 0 || q->max_wr > UROCE_MAX_QP_WR || q->max_sge > UROCE_MAX_SGE ||
	    q->srq_limit > q->max_wr)
		return -EINVAL;
	if (d->st.srqs >= DAEMON_MAX_SRQ)
		return -ENOMEM;
	if (s->srq_slots == NULL) {
		s->srq_slots = calloc(UROCE_SHM_DB_SLOTS, sizeof(*s->srq_slots));
		if (s->srq_slots == NULL)
			return -ENOMEM;
	}
	rc = slot_alloc(s, &slot);
	if (rc != 0)
		return rc;
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		return -ENOMEM;
	srq->slot = slot;
	srq->max_wr = pow2_at_least(q->max_wr);
	srq->max_sge = q->max_sge ? q->max_sge : 1;
	srq->limit = q->srq_limit;
	mem = uroce_shm_ring_mem_size(srq->max_wr, sizeof(struct uroce_shm_recv_wqe));
	rc = uroce_shm_segment_create(&srq->seg, "uroce-srq", mem, 0);
	if (rc != 0)
		goto fail_free;
	rc = uroce_shm_ring_init(&srq->ring, srq->seg.addr, srq->seg.size, srq->max_wr,
				 sizeof(struct uroce_shm_recv_wqe), 0, UROCE_SHM_RING_CONSUMER,
				 UROCE_SHM_RING_F_UNTRUSTED);
	if (rc != 0)
		goto fail_seg;
	srq->srq = eng_srq_create(pd->pd, srq->max_wr, srq->max_sge);
	if (srq->srq == NULL) {
		rc = errno ? -errno : -ENOMEM;
		goto fail_seg;
	}
	rc = obj_add(s, OBJ_SRQ, srq, &p->srq_handle);
	if (rc != 0)
		goto fail_srq;
	srq->owner = s;
	srq->handle = p->srq_handle;
	s->srq_slots[slot] = srq;
	d->st.srqs++;
	p->max_wr = srq->max_wr;
	p->max_sge = srq->max_sge;
	p->seg_size = srq->seg.size;
	p->ring_offset = 0;
	p->db_block = 0;
	p->db_slot = slot;
	r->fd = srq->seg.fd;
	return 0;
fail_srq:
	eng_srq_destroy(srq->srq);
fail_seg:
	uroce_shm_segment_unmap(&srq->seg);
fail_free:
	free(srq);
	return rc;
}

static int
do_destroy_srq(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dsrq *srq;
	int rc = obj_get(s, q->handle, OBJ_SRQ, (void **)&srq);

	if (rc != 0)
		return rc;
	if (q->reserved != 0)
		return -EINVAL;
	rc = srq_free(d, s, srq); /* -EBUSY while a QP uses it (ibv_destroy_srq) */
	if (rc != 0)
		return rc;
	obj_del(s, q->handle);
	return 0;
}

/*
 * ibv_modify_srq: IBV_SRQ_LIMIT arms the limit (0 disarms; above max_wr is
 * EINVAL); IBV_SRQ_MAX_WR resizes, which this device does not do (it reports
 * no IBV_DEVICE_SRQ_RESIZE), so it is EINVAL as in verbs. Arming when the SRQ
 * already holds fewer WQEs than the limit reports the event at once.
 */
static int
do_modify_srq(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_modify_srq_req *q = body;
	struct dsrq *srq;
	int rc = obj_get(s, q->srq_handle, OBJ_SRQ, (void **)&srq);

	if (rc != 0)
		return rc;
	if (q->attr_mask == 0 || (q->attr_mask & ~(UROCE_SRQ_MAX_WR | UROCE_SRQ_LIMIT)) != 0 ||
	    (q->attr_mask & UROCE_SRQ_MAX_WR))
		return -EINVAL;
	if (q->srq_limit > srq->max_wr)
		return -EINVAL;
	srq->limit = q->srq_limit;
	srq_check_limit(d, srq);
	return 0;
}

static int
do_query_srq(struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_handle *q = body;
	struct uroce_shm_msg_query_srq_resp *p = r->body;
	struct dsrq *srq;
	int rc = obj_get(s, q->handle, OBJ_SRQ, (void **)&srq);

	if (rc != 0)
		return rc;
	p->max_wr = srq->max_wr;
	p->max_sge = srq->max_sge;
	p->srq_limit = srq->limit; /* 0 once the limit event fired (disarmed) */
	return 0;
}

static int
dispatch(struct uroce_daemon *d, struct session *s, uint16_t type, const void *body, int *fd,
	 struct reply *r)
{
	if (type != UROCE_SHM_MSG_HELLO && !s->hello)
		return -EPROTO;
	switch (type) {
	case UROCE_SHM_MSG_HELLO:
		return do_hello(s, body, r);
	case UROCE_SHM_MSG_ALLOC_SEGMENT:
		return do_alloc_segment(d, s, body, fd, r);
	case UROCE_SHM_MSG_FREE_SEGMENT:
		return do_free_segment(d, s, body);
	case UROCE_SHM_MSG_ALLOC_PD:
		return do_alloc_pd(d, s, r);
	case UROCE_SHM_MSG_DEALLOC_PD:
		return do_dealloc_pd(d, s, body);
	case UROCE_SHM_MSG_REG_MR:
		return do_reg_mr(d, s, body, r);
	case UROCE_SHM_MSG_DEREG_MR:
		return do_dereg_mr(d, s, body);
	case UROCE_SHM_MSG_CREATE_CQ:
		return do_create_cq(d, s, body, fd, r);
	case UROCE_SHM_MSG_DESTROY_CQ:
		return do_destroy_cq(d, s, body);
	case UROCE_SHM_MSG_CREATE_QP:
		return do_create_qp(d, s, body, r);
	case UROCE_SHM_MSG_DESTROY_QP:
		return do_destroy_qp(d, s, body);
	case UROCE_SHM_MSG_MODIFY_QP:
		return do_modify_qp(d, s, body);
	case UROCE_SHM_MSG_QUERY_QP:
		return do_query_qp(d, s, body, r);
	case UROCE_SHM_MSG_CREATE_AH:
		return do_create_ah(d, s, body, r);
	case UROCE_SHM_MSG_DESTROY_AH:
		return do_destroy_ah(d, s, body);
	case UROCE_SHM_MSG_QUERY_DEVICE:
		do_query_device(d, r);
		return 0;
	case UROCE_SHM_MSG_QUERY_PORT:
		return do_query_port(d, body, r);
	case UROCE_SHM_MSG_CREATE_SRQ:
		return do_create_srq(d, s, body, r);
	case UROCE_SHM_MSG_DESTROY_SRQ:
		return do_destroy_srq(d, s, body);
	case UROCE_SHM_MSG_MODIFY_SRQ:
		return do_modify_srq(d, s, body);
	case UROCE_SHM_MSG_QUERY_SRQ:
		return do_query_srq(s, body, r);
	case UROCE_SHM_MSG_QUERY_GID:
		return do_query_gid(d, body, r);
	case UROCE_SHM_MSG_LIST_SESSIONS:
		return introspect_list_sessions(d, s, body, r->body);
	case UROCE_SHM_MSG_LIST_QPS:
		return introspect_list_qps(d, s, body, r->body);
	case UROCE_SHM_MSG_QUERY_COUNTERS:
		return introspect_query_counters(d, s, body, r->body);
	default:
		return -EOPNOTSUPP;
	}
}

/* Answer one message. @return false if the session must be closed. */
static bool
session_msg(struct uroce_daemon *d, struct session *s, const uint8_t *buf, size_t len, int fd)
{
	const struct uroce_shm_msg_hdr *h = (const void *)buf;
	struct reply r;
	uint16_t type;
	int rc, n;
	bool keep = true;

	rc = uroce_shm_msg_validate(buf, len, false, fd >= 0);
	if (rc == -EPROTONOSUPPORT) {
		/* Incompatible client: a HELLO response in our major carrying our
		 * version in its frozen prefix, then hang up (doc/shm-abi.md). */
		struct uroce_shm_msg_hello_resp *p;

		d->st.hello_refused++;
		n = uroce_shm_msg_init(r.buf, sizeof(r.buf), UROCE_SHM_MSG_HELLO,
				       len >= sizeof(*h) ? h->seq : 0, true, -EPROTONOSUPPORT);
		if (n > 0) {
			p = (void *)(r.buf + sizeof(*h));
			p->abi_major = UROCE_SHM_ABI_MAJOR;
			p->abi_minor = UROCE_SHM_ABI_MINOR;
			uroce_shm_sock_send(s->fd, r.buf, (size_t)n, -1);
		}
		if (fd >= 0)
			close(fd);
		return false;
	}
	if (rc != 0) {
		d->st.bad_msgs++;
		if (fd >= 0)
			close(fd);
		/* Garbage we cannot even frame: the client is broken; hang up. */
		if (len < sizeof(*h) || rc == -EPROTO || rc == -EOPNOTSUPP || rc == -EBADMSG)
			return false;
		type = h->type;
		n = uroce_shm_msg_init(r.buf, sizeof(r.buf), type, h->seq, true, rc);
		if (n < 0 || uroce_shm_sock_send(s->fd, r.buf, (size_t)n, -1) != n)
			return false;
		return true;
	}
	type = h->type;
	n = uroce_shm_msg_init(r.buf, sizeof(r.buf), type, h->seq, true, 0);
	if (n < 0) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	r.body = r.buf + sizeof(*h);
	r.fd = -1;
	rc = dispatch(d, s, type, buf + sizeof(*h), &fd, &r);
	if (fd >= 0)
		close(fd); /* a descriptor the request did not consume */
	d->st.msgs++;
	if (rc != 0) {
		n = uroce_shm_msg_init(r.buf, sizeof(r.buf), type, h->seq, true, rc);
		r.fd = -1;
		if (type == UROCE_SHM_MSG_HELLO && rc == -EPROTONOSUPPORT) {
			struct uroce_shm_msg_hello_resp *hp = r.body;

			d->st.hello_refused++;
			hp->abi_major = UROCE_SHM_ABI_MAJOR;
			hp->abi_minor = UROCE_SHM_ABI_MINOR;
			keep = false;
		}
	}
	if (uroce_shm_sock_send(s->fd, r.buf, (size_t)n, r.fd) != n)
		return false;
	return keep;
}

static unsigned int
session_control(struct uroce_daemon *d, struct session *s)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	unsigned int n;

	for (n = 0; n < MSGS_PER_POLL && !s->dead; n++) {
		int fd = -1;
		ssize_t len = uroce_shm_sock_recv(s->fd, buf, sizeof(buf), &fd);

		if (len == -EAGAIN || len == -EWOULDBLOCK)
			break;
		if (len == 0 || (len < 0 && len != -EMSGSIZE && len != -ENOBUFS &&
				 len != -EBADMSG)) {
			s->dead = true; /* hang-up or socket error */
			break;
		}
		if (len < 0) {
			d->st.bad_msgs++;
			s->dead = true; /* truncated or fd-stuffed: a broken client */
			break;
		}
		if (!session_msg(d, s, buf, (size_t)len, fd))
			s->dead = true;
	}
	return n;
}

static void
accept_clients(struct uroce_daemon *d)
{
	int i;

	for (i = 0; i < ACCEPTS_PER_POLL; i++) {
		struct session *s;
		gid_t gid;
		int fd = accept4(d->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		if (d->st.sessions >= d->max_sessions) {
			close(fd);
			continue;
		}
		s = calloc(1, sizeof(*s));
		if (s != NULL)
			s->slots = calloc(UROCE_SHM_DB_SLOTS, sizeof(*s->slots));
		if (s == NULL || s->slots == NULL) {
			if (s != NULL)
				free(s);
			close(fd);
			continue;
		}
		s->fd = fd;
		s->db.fd = -1;
		if (uroce_shm_sock_peercred(fd, &s->pid, &s->uid, &gid) != 0)
			s->pid = -1;
		/* Session ids are never 0 and skip ids still in use. */
		for (;;) {
			struct session *o;

			if (++d->next_sid == 0)
				d->next_sid = 1;
			for (o = d->sessions; o != NULL; o = o->next)
				if (o->id == d->next_sid)
					break;
			if (o == NULL)
				break;
		}
		s->id = d->next_sid;
		s->next = d->sessions;
		d->sessions = s;
		d->st.sessions++;
		uroce_log(UROCE_LOG_INFO, "uroce daemon: client %u connected (pid %d uid %u)",
			  s->id, (int)s->pid, (unsigned int)s->uid);
	}
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                */
/* ------------------------------------------------------------------------ */

struct uroce_daemon *
uroce_daemon_create(const struct uroce_daemon_conf *conf)
{
	static const uint8_t zero[16];
	struct sockaddr_un sa;
	struct uroce_daemon *d;
	struct eng_conf ec;
	int err;

	if (conf == NULL || conf->sock_path == NULL ||
	    strlen(conf->sock_path) >= sizeof(sa.sun_path) || conf->sock_path[0] == '\0') {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return NULL;
	d->lfd = -1;
	strcpy(d->path, conf->sock_path);
	d->max_sessions = conf->max_sessions ? conf->max_sessions : 64;
	if (conf->n_gid > UROCE_DAEMON_GID_MAX || conf->active_mtu > UROCE_MTU_4096 ||
	    (conf->port_ops != NULL && (conf->port_ops->tx_alloc == NULL ||
					conf->port_ops->tx_send == NULL ||
					conf->port_ops->tx_free == NULL))) {
		free(d);
		errno = EINVAL;
		return NULL;
	}
	if (conf->n_gid != 0) {
		d->n_gid = conf->n_gid;
		memcpy(d->gids, conf->gids, sizeof(d->gids[0]) * conf->n_gid);
	} else if (memcmp(conf->gid, zero, 16) == 0) {
		/* ::ffff:198.18.0.1 (RFC 2544 benchmarking range) */
		static const uint8_t def[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
						198, 18, 0, 1};
		d->n_gid = 1;
		memcpy(d->gids[0], def, 16);
	} else {
		d->n_gid = 1;
		memcpy(d->gids[0], conf->gid, 16);
	}
	d->active_mtu = conf->active_mtu ? conf->active_mtu : UROCE_MTU_4096;
	memset(&ec, 0, sizeof(ec));
	ec.n_gid = d->n_gid;
	ec.gids = (const uint8_t (*)[16])d->gids;
	ec.port = conf->port_ops;
	ec.port_ctx = conf->port_ctx;
	ec.dctx = d;
	ec.ud_mtu = uroce_mtu_bytes(d->active_mtu);
	ec.cc = conf->cc;
	d->eng = eng_create(&ec);
	if (d->eng == NULL)
		goto fail;
	d->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (d->lfd < 0)
		goto fail;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, d->path);
	unlink(d->path);
	if (bind(d->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		goto fail;
	if (chmod(d->path, conf->sock_mode ? conf->sock_mode : 0660) != 0 ||
	    listen(d->lfd, 64) != 0) {
		err = errno;
		unlink(d->path);
		errno = err;
		goto fail;
	}
	return d;
fail:
	err = errno;
	if (d->lfd >= 0)
		close(d->lfd);
	eng_destroy(d->eng);
	free(d);
	errno = err;
	return NULL;
}

void
uroce_daemon_destroy(struct uroce_daemon *d)
{
	if (d == NULL)
		return;
	while (d->sessions != NULL) {
		struct session *s = d->sessions;

		d->sessions = s->next;
		session_free(d, s);
	}
	close(d->lfd);
	unlink(d->path);
	eng_destroy(d->eng);
	free(d);
}

unsigned int
uroce_daemon_poll(struct uroce_daemon *d)
{
	struct session **pp, *s;
	unsigned int work = 0;
	struct dcq *cq;

	accept_clients(d);
	for (pp = &d->sessions; (s = *pp) != NULL;) {
		work += session_control(d, s);
		if (s->dead) {
			*pp = s->next;
			uroce_log(UROCE_LOG_INFO, "uroce daemon: client %u gone, reclaiming",
				  s->id);
			session_free(d, s);
			d->st.sessions_reaped++;
			work++;
			continue;
		}
		pp = &s->next;
	}
	for (s = d->sessions; s != NULL; s = s->next)
		work += session_doorbells(d, s);
	work += eng_poll(d->eng);
	for (cq = d->cqs; cq != NULL; cq = cq->next)
		work += cq_drain(d, cq);
	return work;
}

void
uroce_daemon_rx(struct uroce_daemon *d, const struct uroce_pkt *pkt,
		const struct uroce_frame *frame)
{
	eng_rx(d->eng, pkt, frame);
}

unsigned int
uroce_daemon_quiesce(struct uroce_daemon *d)
{
	unsigned int n = 0, round;
	struct session *s;
	struct dcq *cq;
	uint32_t i;

	for (s = d->sessions; s != NULL; s = s->next) {
		for (i = 0; i < s->nobjs; i++) {
			if (s->objs[i].type == OBJ_QP &&
			    eng_qp_to_err(((struct dqp *)s->objs[i].p)->qp) == 0)
				n++;
		}
	}
	/* The flushes are engine completions: a few rounds carry them to the rings. */
	for (round = 0; round < 4; round++) {
		eng_poll(d->eng);
		for (cq = d->cqs; cq != NULL; cq = cq->next)
			cq_drain(d, cq);
	}
	return n;
}

int
uroce_daemon_fd(const struct uroce_daemon *d)
{
	return d == NULL ? -EINVAL : d->lfd;
}

unsigned int
uroce_daemon_counters(const struct uroce_daemon *d, uint64_t *vals, unsigned int n)
{
	return eng_counter_values(d->eng, vals, n);
}

int
uroce_daemon_stats(const struct uroce_daemon *d, struct uroce_daemon_stats *st)
{
	struct eng_counters c;

	if (d == NULL || st == NULL)
		return -EINVAL;
	*st = d->st;
	eng_counters(d->eng, &c);
	st->loop_frames = c.loop_frames;
	st->loop_bad = c.loop_bad;
	st->port_tx = c.port_tx;
	st->port_rx = c.port_rx;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Read-only views for introspect.c                                          */
/* ------------------------------------------------------------------------ */

struct session *
daemon_session_next(struct uroce_daemon *d, struct session *prev)
{
	return prev == NULL ? d->sessions : prev->next;
}

void
daemon_session_view(const struct session *s, struct dsession_view *v)
{
	uint32_t i;

	memset(v, 0, sizeof(*v));
	v->id = s->id;
	v->pid = (int32_t)s->pid;
	v->uid = (uint32_t)s->uid;
	v->hello = s->hello;
	for (i = 0; i < s->nobjs; i++) {
		switch (s->objs[i].type) {
		case OBJ_SEG:
			v->segments++;
			break;
		case OBJ_PD:
			v->pds++;
			break;
		case OBJ_MR:
			v->mrs++;
			break;
		case OBJ_CQ:
			v->cqs++;
			break;
		case OBJ_QP:
			v->qps++;
			break;
		case OBJ_AH:
			v->ahs++;
			break;
		case OBJ_SRQ:
			v->srqs++;
			break;
		default:
			break;
		}
	}
}

int
daemon_session_qp_next(struct session *s, uint32_t *pos, struct dqp_view *v)
{
	uint32_t i;

	for (i = *pos; i < s->nobjs; i++) {
		struct dqp *qp;

		if (s->objs[i].type != OBJ_QP)
			continue;
		qp = s->objs[i].p;
		memset(v, 0, sizeof(*v));
		v->qp = qp->qp;
		v->qpn = qp->qpn;
		v->type = qp->type;
		v->max_send_wr = qp->cap.max_send_wr;
		v->max_recv_wr = qp->cap.max_recv_wr;
		v->sq_queued = uroce_shm_ring_used_count(&qp->sq) + (qp->send_stashed ? 1 : 0);
		v->rq_queued = (qp->rq.hdr != NULL ? uroce_shm_ring_used_count(&qp->rq) : 0) +
			       (qp->recv_stashed ? 1 : 0);
		v->failed = qp->failed;
		*pos = i + 1;
		return 0;
	}
	*pos = i;
	return -ENOENT;
}
