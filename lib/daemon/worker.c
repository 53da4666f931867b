/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * A worker of lib/daemon: one transport engine and everything placed on it.
 *
 *  - Doorbells: the worker serves one doorbell block per session that has
 *    objects here. A rung slot names a QP or an SRQ; its WQEs are read in
 *    place from the client's ring, each field once, checked, and written
 *    straight into the engine's queue slot (one translation, no copy of the
 *    WQE itself). A WQE the checks refuse completes in error and moves the
 *    QP to ERR (IBA 10.8.3.3). When the engine's queue is full the WQEs
 *    stay in the ring and the slot is served again next round.
 *  - Receives when the engine runs low: a look at a slot takes none while
 *    the engine holds RQ_LOW of the QP's; the round's end takes a batch once
 *    completions bring it below. When a message finds no receive WQE in the
 *    engine, the engine asks (rq_refill) and the worker takes what the
 *    client has posted in the meantime, so a receive posted before a message
 *    arrives is always there for it (UD has no RNR to fall back on).
 *  - Completions: every CQ placed here is a sink of the engine; a completion
 *    is written once, straight into the client's CQ ring, and the CQs that
 *    got some are published (one release store each) and signalled at the
 *    end of the round.
 *  - Loopback: packets for the daemon's own GIDs are wrapped and ICRC'd as
 *    on a wire, in frames of a preallocated pool (no malloc per frame), and
 *    delivered next round to the worker that owns the destination QP, over
 *    a single-producer ring per pair of workers; the frame then goes back to
 *    the sender's pool over another. A ring's index is published every
 *    LOOP_PUBLISH_EVERY frames and at the round's end, not per frame, and
 *    the receiver never writes a frame it was handed.
 *  - Mailbox: commands from the control thread run at the top of a round.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "uroce_common.h"
#include "uroce_shm.h"
#include "uroce_wire.h"

#include "gen_internal.h"
#include "worker.h"
#include "dcm.h"

/* Sleeps from which worker_sleep() looks whether the worker has any QP. */
#define DEEP_SLEEP_AFTER_US 1000u

/* Work bounds of one round. */
#define WQES_PER_SLOT 64
#define SLOTS_PER_ROUND 256
/* A hot slot (session_doorbells()) cools after this many rounds with no
 * work; while a session has one, its doorbells are read every
 * HARVEST_EVERY rounds. */
#define HOT_IDLE_ROUNDS 64
#define HARVEST_EVERY 4

/* Loopback frames: room in front of the IB part for Ethernet (+VLAN), IPv6
 * and UDP; the IB part of the largest packet (headers, 4096, pad, ICRC). */
#define LOOP_HEADROOM 128u
#define LOOP_IB_MAX (64u + UROCE_MAX_PMTU + 8u)
/* Frames handed to another worker between publications of the ring's index. */
#define LOOP_PUBLISH_EVERY 16u

/* Read a field of a client-written WQE exactly once. */
#define SHM_READ(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

struct loop_frame {
	struct loop_frame *next;
	uint8_t *frame;
	uint32_t len;                   /* bytes at frame; a zero-copy frame's headers */
	uint16_t owner;                 /* the worker whose pool it is from */
	/* Zero-copy (loop_send_zc()): the payload lies in client memory at
	 * tail; the pad and the ICRC follow the len bytes of headers. zc is
	 * released when the frame comes home. NULL tail: one piece. */
	uint32_t tail_len;
	const uint8_t *tail;
	struct uroce_eng_zc zc;
	uint8_t buf[LOOP_HEADROOM + LOOP_IB_MAX] __attribute__((aligned(64)));
};

/*
 * A single-producer single-consumer ring of frame pointers between two
 * workers. It holds a whole pool, so a frame going home always finds room.
 * Each side works on indexes of its own and shows the other one store per
 * round (pring_publish(), pring_done()), not one per frame: an index the
 * other worker reads is a line that crosses cores each time it is written.
 */
struct pring {
	/* Written by the producer only, when it publishes. */
	uint32_t tail __attribute__((aligned(DAEMON_CACHE_LINE)));
	/* Written by the consumer only; the mask is a copy on its own line. */
	uint32_t head __attribute__((aligned(DAEMON_CACHE_LINE)));
	uint32_t cons_mask;
	/* The producer's private line, written per frame: the consumer never
	 * reads it, so it carries its own copy of the mask. */
	struct {
		uint32_t next;      /* the next slot to fill */
		uint32_t head_seen; /* head as last read: room is known up to it */
		uint32_t mask;
	} prod __attribute__((aligned(DAEMON_CACHE_LINE)));
	struct loop_frame *slot[] __attribute__((aligned(DAEMON_CACHE_LINE)));
};

struct dloop {
	struct pring *in[UROCE_DAEMON_MAX_WORKERS];  /* from worker i to me */
	struct pring *ret[UROCE_DAEMON_MAX_WORKERS]; /* my frames back from worker i */
	/* The rings this worker fills: worker i's in[me] and ret[me], linked
	 * when the later of the two is created (worker_create()). Reaching them
	 * through d->w[i] read worker i's struct dworker, on lines that worker
	 * writes every round: a miss per hand-off, and a store of its own that
	 * waited for the line back. */
	struct pring *to_in[UROCE_DAEMON_MAX_WORKERS];
	struct pring *to_ret[UROCE_DAEMON_MAX_WORKERS];
	uint32_t in_owed;  /* bit i: frames put into worker i's in ring, not yet published */
	uint32_t ret_owed; /* bit i: frames put into worker i's ret ring, not yet published */
};

_Static_assert(UROCE_DAEMON_MAX_WORKERS <= 32, "in_owed and ret_owed have a bit per worker");

static struct dloop *
loop_of(struct dworker *w)
{
	return (struct dloop *)w->loop_mem;
}

/* Producer: fill a slot; the consumer sees it at the next pring_publish(). */
static bool
pring_put(struct pring *r, struct loop_frame *f)
{
	if (r->prod.next - r->prod.head_seen > r->prod.mask) {
		r->prod.head_seen = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		if (r->prod.next - r->prod.head_seen > r->prod.mask)
			return false;
	}
	r->slot[r->prod.next++ & r->prod.mask] = f;
	return true;
}

/* Producer: slots filled and not yet shown to the consumer (tail is its own). */
static uint32_t
pring_unpublished(const struct pring *r)
{
	return r->prod.next - __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
}

/* Producer: show the consumer every slot filled so far; true if any was new. */
static bool
pring_publish(struct pring *r)
{
	if (pring_unpublished(r) == 0)
		return false;
	/* Release: the frames' bytes and the slots before the index. */
	__atomic_store_n(&r->tail, r->prod.next, __ATOMIC_RELEASE);
	return true;
}

/*
 * Producer: put @p f and publish it with the LOOP_PUBLISH_EVERY frames
 * before it, or else mark bit @p bit of @p owed for loop_publish() at the
 * round's end. @return -1 when the ring is full, 1 when it published (the
 * caller wakes the consumer if it sleeps), 0 otherwise.
 */
static int
pring_put_batched(struct pring *r, struct loop_frame *f, uint32_t *owed, unsigned int bit)
{
	if (!pring_put(r, f))
		return -1;
	if (pring_unpublished(r) >= LOOP_PUBLISH_EVERY) {
		pring_publish(r);
		return 1;
	}
	*owed |= 1u << bit;
	return 0;
}

/* Consumer: the end of what the producer has published (slots head..end). */
static uint32_t
pring_ready(struct pring *r)
{
	return __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
}

/* Consumer: the frame in slot @p h (head <= h < pring_ready()). */
static struct loop_frame *
pring_slot(const struct pring *r, uint32_t h)
{
	return r->slot[h & r->cons_mask];
}

/* Consumer: done with every slot before @p end, in one store. */
static void
pring_done(struct pring *r, uint32_t end)
{
	/* Release: done with the slots before the producer may reuse them. */
	__atomic_store_n(&r->head, end, __ATOMIC_RELEASE);
}

/* Publish this round's hand-offs: each ring at most once, and one wake per
 * worker handed frames (its fence is paid once, not per frame). */
static void
loop_publish(struct dworker *w)
{
	struct dloop *l = loop_of(w);
	struct uroce_daemon *d = w->d;
	unsigned int i;

	while (l->in_owed != 0) {
		i = (unsigned int)__builtin_ctz(l->in_owed);
		l->in_owed &= l->in_owed - 1;
		if (pring_publish(l->to_in[i]))
			worker_wake_at(d, i);
	}
	while (l->ret_owed != 0) {
		i = (unsigned int)__builtin_ctz(l->ret_owed);
		l->ret_owed &= l->ret_owed - 1;
		pring_publish(l->to_ret[i]);
	}
}

/* ------------------------------------------------------------------------ */
/* Events to the control thread                                              */
/* ------------------------------------------------------------------------ */

static void
raise_event(struct dworker *w, struct session *s, uint32_t type, uint32_t handle)
{
	uint32_t head = __atomic_load_n(&w->ev_head, __ATOMIC_ACQUIRE);
	struct devent *e;

	if (w->ev_tail - head == DWORKER_EVENTS) {
		w->cnt.async_dropped++;
		return;
	}
	e = &w->ev[w->ev_tail & (DWORKER_EVENTS - 1)];
	e->session_id = s->id;
	e->reserved = 0;
	e->type = type;
	e->handle = handle;
	__atomic_store_n(&w->ev_tail, w->ev_tail + 1, __ATOMIC_RELEASE);
}

/* The engine's resp_reject op: the record goes to the control thread, which
 * logs it; the worker never writes a log line itself. */
static struct dreject *
reject_slot(struct dworker *w, struct uroce_eng_qp *eq)
{
	struct dqp *qp = uroce_eng_qp_context(eq);
	uint32_t head = __atomic_load_n(&w->rej_head, __ATOMIC_ACQUIRE);
	struct dreject *e;

	if (w->rej_tail - head == DWORKER_REJECTS) {
		w->cnt.rejects_dropped++;
		return NULL;
	}
	e = &w->rej[w->rej_tail & (DWORKER_REJECTS - 1)];
	e->session_id = qp != NULL ? qp->owner->id : 0;
	e->reserved = 0;
	e->pid = qp != NULL ? (int32_t)qp->owner->pid : 0;
	return e;
}

static void
op_resp_reject(void *ctx, struct uroce_eng_qp *eq, const struct uroce_eng_resp_reject *r)
{
	struct dworker *w = ctx;
	struct dreject *e = reject_slot(w, eq);

	if (e == NULL)
		return;
	e->is_req = 0;
	e->u.r = *r;
	/* Release: the record is whole before the control thread sees it. */
	__atomic_store_n(&w->rej_tail, w->rej_tail + 1, __ATOMIC_RELEASE);
}

static void
op_req_error(void *ctx, struct uroce_eng_qp *eq, const struct uroce_eng_req_error *q)
{
	struct dworker *w = ctx;
	struct dreject *e = reject_slot(w, eq);

	if (e == NULL)
		return;
	e->is_req = 1;
	e->u.q = *q;
	__atomic_store_n(&w->rej_tail, w->rej_tail + 1, __ATOMIC_RELEASE);
}

bool
worker_reject(struct dworker *w, struct dreject *out)
{
	uint32_t tail = __atomic_load_n(&w->rej_tail, __ATOMIC_ACQUIRE);

	if (w->rej_head == tail)
		return false;
	*out = w->rej[w->rej_head & (DWORKER_REJECTS - 1)];
	/* Release: done with the slot before the worker may reuse it. */
	__atomic_store_n(&w->rej_head, w->rej_head + 1, __ATOMIC_RELEASE);
	return true;
}

unsigned int
worker_events(struct dworker *w, struct devent *out, unsigned int max)
{
	uint32_t tail = __atomic_load_n(&w->ev_tail, __ATOMIC_ACQUIRE);
	unsigned int n = 0;

	while (w->ev_head != tail && n < max) {
		out[n++] = w->ev[w->ev_head & (DWORKER_EVENTS - 1)];
		__atomic_store_n(&w->ev_head, w->ev_head + 1, __ATOMIC_RELEASE);
	}
	return n;
}

/* ------------------------------------------------------------------------ */
/* Completions: written once, into the client's ring                         */
/* ------------------------------------------------------------------------ */

static void srq_check_limit(struct dworker *w, struct dsrq *srq);
static void qp_rq_refill(struct dworker *w, struct dqp *qp);

/*
 * Give the client back the ring slots of receive WQEs the engine no longer
 * holds (completed, flushed or refused). Receives complete in order, so the
 * slots are the first rq_held after the ring's consumer index.
 */
static void
qp_rq_release(struct dqp *qp)
{
	uint32_t held;

	if (qp->qp == NULL || qp->rq.hdr == NULL || uroce_shm_ring_is_corrupt(&qp->rq))
		return;
	held = uroce_eng_rq_held(qp->qp);
	if (qp->rq_held > held) {
		uroce_shm_ring_cons_release(&qp->rq, qp->rq_held - held);
		qp->rq_held = held;
	}
}

/* A receive of QP @p qpn completed: its ring slot is released before the
 * CQE is published (cq_publish), so a client that sees the completion can
 * post again. The engine may still count the WQE now (a flush pushes the
 * CQE before popping it), hence the deferral to the end of the round. */
static void
rq_note_completion(struct dworker *w, uint32_t qpn)
{
	struct uroce_eng_qp *eq = uroce_eng_qp(w->eng, qpn);
	struct dqp *qp = eq != NULL ? uroce_eng_qp_context(eq) : NULL;

	if (qp == NULL || qp->srq != NULL || qp->rq_dirty)
		return;
	qp->rq_dirty = true;
	qp->rq_dirty_next = w->rq_dirty;
	w->rq_dirty = qp;
}

/*
 * The CQE of @p wc as the eight 64-bit words of struct uroce_shm_cqe, whose
 * offsets uroce_shm_datapath.h asserts; the ABI is little-endian (host order
 * on every supported target, uroce_shm_abi.h). Built in registers: a CQE
 * assembled on the stack field by field and then read back 16 bytes at a
 * time waited for each read, as a load that spans several narrower stores
 * is not forwarded from them (doc/benchmarks.md).
 */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "cqe_words() writes little-endian words");
static inline void
cqe_words(const struct uroce_eng_wc *wc, uint64_t q[8])
{
	uint32_t imm = (wc->wc_flags & UROCE_WC_WITH_INV) ? wc->invalidated_rkey : wc->imm_data;

	q[0] = wc->wr_id;
	q[1] = (uint64_t)(uint8_t)wc->status | (uint64_t)(uint8_t)wc->opcode << 8 |
	       (uint64_t)(uint16_t)wc->wc_flags << 16 | (uint64_t)wc->vendor_err << 32;
	q[2] = (uint64_t)wc->byte_len | (uint64_t)imm << 32;
	/* Two loads, not one over both fields: the engine stores them apart
	 * just before this call (recv_complete()), and an 8-byte load over two
	 * 4-byte stores waits for them to reach the cache (half of
	 * cq_sink_push()'s 34 % of a UD ingest worker, doc/benchmarks.md). */
	q[3] = (uint64_t)wc->qp_num | (uint64_t)*(const volatile uint32_t *)&wc->src_qp << 32;
	/* pkey_index, slid (0 on RoCE), sl, dlid_path_bits (0), reserved0 */
	q[4] = (uint64_t)(uint16_t)wc->pkey_index | (uint64_t)(uint8_t)wc->sl << 32;
	q[5] = q[6] = q[7] = 0;
}

/*
 * Write the CQE of @p wc to ring slot @p slot, with streaming (non-temporal)
 * stores if @p stream (cqe_streams() says when). The slot's line was last
 * read by the client, on its CPU: an ordinary store must first take it back,
 * a cross-core round trip; a whole line of streaming stores needs no read
 * for ownership. Those are weakly ordered: cq_publish() fences them before
 * the producer index says they are there. A slot that is not 16-byte aligned
 * (the ring is the client's) takes ordinary stores.
 * @return true if it streamed.
 */
static inline bool
cqe_put(void *slot, const struct uroce_eng_wc *wc, bool stream)
{
	uint64_t q[8];

	cqe_words(wc, q);
#if defined(__SSE2__)
	__m128i v0 = _mm_set_epi64x((long long)q[1], (long long)q[0]);
	__m128i v1 = _mm_set_epi64x((long long)q[3], (long long)q[2]);
	__m128i v2 = _mm_set_epi64x((long long)q[5], (long long)q[4]);
	__m128i v3 = _mm_set_epi64x((long long)q[7], (long long)q[6]);
	__m128i *d = slot;

	if (stream && ((uintptr_t)slot & 15) == 0) {
		_mm_stream_si128(d, v0);
		_mm_stream_si128(d + 1, v1);
		_mm_stream_si128(d + 2, v2);
		_mm_stream_si128(d + 3, v3);
		return true;
	}
	_mm_storeu_si128(d, v0);
	_mm_storeu_si128(d + 1, v1);
	_mm_storeu_si128(d + 2, v2);
	_mm_storeu_si128(d + 3, v3);
#else
	(void)stream;
	memcpy(slot, q, sizeof(q));
#endif
	return false;
}

/*
 * Whether @p wc's CQE is streamed (doc/benchmarks.md, 6 Dec 2026). With a
 * completion for every WR of a busy send queue, ordinary CQE stores filled
 * the store buffer with those round trips: a third of the worker's time.
 * But a streamed line goes to memory and the client reads it from there, 0.2
 * us more on a lone READ's round trip, so only a completion with more WQEs of
 * its send queue behind it is streamed: its client is not waiting on it
 * alone. And only a SEND or WRITE: a READ or atomic completion follows
 * ordinary stores into the client's buffer, which the publishing fence waits
 * for too (64 B READ and FETCH_ADD bw were 20 % slower).
 */
static inline bool
cqe_streams(const struct uroce_eng_wc *wc)
{
	return wc->sq_more && (wc->opcode == UROCE_WC_SEND || wc->opcode == UROCE_WC_RDMA_WRITE);
}

/* Order cqe_put()'s streaming stores before the producer index that publishes them. */
static inline void
cqe_stream_fence(void)
{
#if defined(__SSE2__)
	_mm_sfence();
#endif
}

static uint64_t
clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
clock_us(void)
{
	return clock_ns() / 1000u;
}

#define CQE_AHEAD 4

static bool
cq_sink_push(void *ctx, const struct uroce_eng_wc *wc)
{
	struct dcq *cq = ctx;
	struct dworker *w = cq->wk;

	if (wc->opcode & UROCE_WC_RECV)
		rq_note_completion(w, wc->qp_num);
	if (uroce_shm_ring_prod_reserve(&cq->ring, cq->pending + 1) <= cq->pending) {
		/* The client's ring is full: IBA 11.4.2.1 CQ overrun. The
		 * engine counts it and raises CQ_ERR once. */
		cq->overflowed = true;
		return false;
	}
	if (cqe_put(uroce_shm_ring_prod_slot(&cq->ring, cq->pending), wc, cqe_streams(wc)))
		w->cqe_streamed = true;
	/* The slot CQE_AHEAD on was last read by the client, on its CPU:
	 * asked for now, a receive's CQE stores will not wait for it
	 * (doc/benchmarks.md, 7 Dec 2026). Not for the sends: a busy send
	 * queue's CQEs are streamed and take no line. */
	if (wc->opcode & UROCE_WC_RECV)
		__builtin_prefetch(uroce_shm_ring_prod_slot(&cq->ring, cq->pending + CQE_AHEAD), 1);
	cq->pending++;
	if (wc->status != UROCE_WC_SUCCESS)
		cq->qualifies = true;
	if (!cq->dirty) {
		cq->dirty = true;
		cq->dirty_next = NULL;
		*w->dirty_tail = cq;
		w->dirty_tail = &cq->dirty_next;
	}
	/* A receive of an SRQ QP took one of the SRQ's WQEs: check its limit. */
	if (wc->opcode & UROCE_WC_RECV) {
		struct uroce_eng_qp *eq = uroce_eng_qp(w->eng, wc->qp_num);
		struct dqp *qp = eq != NULL ? uroce_eng_qp_context(eq) : NULL;

		if (qp != NULL && qp->srq != NULL && qp->srq->limit != 0)
			srq_check_limit(w, qp->srq);
	}
	return true;
}

static void
cq_signal(struct dworker *w, struct dcq *cq, bool qualifies)
{
	uint64_t one = 1, t0;

	if (cq->evfd < 0)
		return;
	/* The client armed the CQ and blocks on its channel: the one system
	 * call of a worker, made only for a client that asked to sleep. A full
	 * eventfd counter (EAGAIN) already means "wake up". Its time is
	 * counted (cq_event_ns): waking a thread on another CPU took this
	 * worker 13.5 us on average on a KVM guest (doc/benchmarks.md,
	 * 7 Dec 2026, fifth session). */
	if (!uroce_shm_cq_should_signal(&cq->ring, qualifies))
		return;
	t0 = clock_ns();
	if (write(cq->evfd, &one, sizeof(one)) == (ssize_t)sizeof(one))
		w->cnt.cq_events++;
	w->cnt.cq_event_ns += clock_ns() - t0;
}

/* Open @p cq's window, due at @p due: the list stays in due order, so the
 * round looks at its head only. Searched from the tail: a window due later
 * than all others (the same period as theirs) goes in at once. */
static void
cq_mod_link(struct dworker *w, struct dcq *cq, uint64_t due)
{
	struct dcq *p = w->moderated_tail;

	while (p != NULL && p->mod_due_us > due)
		p = p->mod_prev;
	cq->mod_due_us = due;
	cq->mod_prev = p;
	cq->mod_next = p != NULL ? p->mod_next : w->moderated;
	if (cq->mod_next != NULL)
		cq->mod_next->mod_prev = cq;
	else
		w->moderated_tail = cq;
	if (p != NULL)
		p->mod_next = cq;
	else
		w->moderated = cq;
}

static void
cq_mod_unlink(struct dworker *w, struct dcq *cq)
{
	if (cq->mod_prev != NULL)
		cq->mod_prev->mod_next = cq->mod_next;
	else
		w->moderated = cq->mod_next;
	if (cq->mod_next != NULL)
		cq->mod_next->mod_prev = cq->mod_prev;
	else
		w->moderated_tail = cq->mod_prev;
	cq->mod_next = NULL;
	cq->mod_prev = NULL;
	cq->mod_due_us = 0;
}

/* Close a moderated CQ's window: claim the event it owes, if the client has
 * not taken it itself meanwhile. */
static void
cq_mod_fire(struct dworker *w, struct dcq *cq)
{
	cq_mod_unlink(w, cq);
	cq_signal(w, cq, cq->mod_qualifies);
	cq->mod_qualifies = false;
}

/*
 * What a moderated CQ does where another signals at once: the first CQE its
 * arm asks an event for opens a window, which closes (the event is claimed)
 * once mod_count CQEs came in it or at its due time (cq_mod_due()). The arm
 * stays set meanwhile, so the event is late by at most the period, never lost;
 * the client's wakeup, a system call on this CPU, comes once per window
 * instead of once per arm.
 */
static void
cq_moderate(struct dworker *w, struct dcq *cq, uint32_t n, bool qualifies)
{
	bool owed;

	if (cq->evfd < 0)
		return;
	/* Judged either way: a client arming later does not take these CQEs
	 * for its own (IBA 11.4.2.2). */
	owed = uroce_shm_cq_peek_armed(&cq->ring, qualifies);
	if (cq->mod_due_us == 0) {
		if (!owed)
			return;
		cq_mod_link(w, cq, worker_now_us(w) + cq->mod_period_us);
		cq->mod_n = 0;
	}
	cq->mod_n += n;
	cq->mod_qualifies |= qualifies;
	if (cq->mod_count != 0 && cq->mod_n >= cq->mod_count)
		cq_mod_fire(w, cq);
}

/* Windows whose time has come: the head of the list, while due. */
static unsigned int
cq_mod_due(struct dworker *w)
{
	uint64_t now = worker_now_us(w);
	unsigned int n = 0;

	while (w->moderated != NULL && now >= w->moderated->mod_due_us) {
		cq_mod_fire(w, w->moderated);
		n++;
	}
	return n;
}

/* Make the CQEs written this round visible (one release store per CQ). */
static unsigned int
cq_publish(struct dworker *w)
{
	unsigned int n = 0;
	struct dcq *cq;
	struct dqp *qp;

	while ((qp = w->rq_dirty) != NULL) {
		w->rq_dirty = qp->rq_dirty_next;
		qp->rq_dirty = false;
		qp_rq_refill(w, qp);
	}
	if (w->cqe_streamed) {
		cqe_stream_fence();
		w->cqe_streamed = false;
	}
	while ((cq = w->dirty) != NULL) {
		w->dirty = cq->dirty_next;
		cq->dirty = false;
		uroce_shm_ring_prod_commit(&cq->ring, cq->pending);
		w->cnt.cqe_written += cq->pending;
		n += cq->pending;
		if (cq->mod_period_us != 0)
			cq_moderate(w, cq, cq->pending, cq->qualifies);
		else
			cq_signal(w, cq, cq->qualifies);
		cq->pending = 0;
		cq->qualifies = false;
	}
	w->dirty_tail = &w->dirty;
	return n;
}

/* Write one completion outside the engine (a WQE the worker refused). */
static void
cq_write(struct dcq *cq, uint64_t wr_id, uint32_t qpn, int wc_opcode, int status)
{
	struct uroce_eng_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wr_id;
	wc.status = (enum uroce_wc_status)status;
	wc.opcode = (enum uroce_wc_opcode)wc_opcode;
	wc.qp_num = qpn;
	if (!cq_sink_push(cq, &wc) && !cq->err_reported) {
		cq->err_reported = true;
		raise_event(cq->wk, cq->owner, UROCE_ASYNC_CQ_ERR, cq->handle);
	}
}

/* ------------------------------------------------------------------------ */
/* SRQ limit                                                                 */
/* ------------------------------------------------------------------------ */

/*
 * The SRQ limit (IBA 10.2.9.3, 11.5.2.4): once armed, the first time the SRQ
 * holds fewer WQEs than the limit (in the engine plus still in the client's
 * ring), report SRQ_LIMIT_REACHED and disarm, so one arming gives one event.
 */
static void
srq_check_limit(struct dworker *w, struct dsrq *srq)
{
	uint32_t level;

	if (srq->limit == 0 || srq->srq == NULL)
		return;
	level = uroce_eng_srq_count(srq->srq) + uroce_shm_ring_used_count(&srq->ring);
	if (level >= srq->limit)
		return;
	srq->limit = 0;
	raise_event(w, srq->owner, UROCE_ASYNC_SRQ_LIMIT_REACHED, srq->handle);
}

/* ------------------------------------------------------------------------ */
/* WQEs: read once from the client's ring, straight into the engine's slot   */
/* ------------------------------------------------------------------------ */

/* The WC status a refused commit gets. */
static int
commit_status(int rc)
{
	return rc == -EMSGSIZE ? UROCE_WC_LOC_LEN_ERR : UROCE_WC_LOC_QP_OP_ERR;
}

/*
 * Read the send WQE @p sw of @p qp into the engine slot @p e with lib/shm's
 * reader; then a UD WQE's address handle must be one of this client's, of
 * the QP's PD (IBA 10.2.3), and its address vector is copied into the slot.
 * @return UROCE_WC_SUCCESS, or the status to fail the WQE with.
 */
static int
sq_read(struct dqp *qp, const struct uroce_shm_wq_limits *lim, const struct uroce_shm_send_wqe *sw,
	struct uroce_eng_send_wqe *e)
{
	int st = uroce_shm_send_wqe_read(sw, lim, &e->wr, NULL);
	struct dah *ah;

	if (st != UROCE_WC_SUCCESS || qp->type != UROCE_QPT_UD)
		return st;
	if (obj_get(qp->owner, e->wr.ah_handle, OBJ_AH, (void **)&ah) != 0 ||
	    uroce_eng_ah_pd(ah->ah) != qp->pd->pd)
		return UROCE_WC_LOC_QP_OP_ERR;
	e->ah = *uroce_eng_ah_attr(ah->ah);
	return UROCE_WC_SUCCESS;
}

/*
 * A WQE the worker refuses: the QP goes to ERR (IBA 10.8.3.3: a local error
 * puts the QP in the error state); the engine flushes what it holds first,
 * so completions stay in order, then the refused WQE's error CQE.
 */
static void
wqe_reject(struct dworker *w, struct dqp *qp, struct dcq *cq, uint64_t wr_id, int wc_opcode,
	   int status)
{
	struct uroce_eng_qp_attr a;

	w->cnt.wqe_rejected++;
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_ERR;
	uroce_eng_modify_qp(qp->qp, &a, UROCE_QP_STATE);
	cq_write(cq, wr_id, qp->qpn, wc_opcode, status);
}

static void
qp_ring_failed(struct dworker *w, struct dqp *qp)
{
	struct uroce_eng_qp_attr a;

	if (qp->failed)
		return;
	qp->failed = true;
	w->cnt.ring_corrupt++;
	/* No completion can say it: the QP goes to ERR on its own (IBA 11.6.3);
	 * the engine adds Last WQE Reached for an SRQ QP. */
	raise_event(w, qp->owner, UROCE_ASYNC_QP_FATAL, qp->handle);
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_ERR;
	uroce_eng_modify_qp(qp->qp, &a, UROCE_QP_STATE);
}

/* WQEs asked for ahead of the one being read: sends (qp_service_sq()), and
 * receives (qp_service_rq()), which a client posts in batches that the worker
 * then takes in one go (doc/benchmarks.md, 7 Dec 2026, fifth session: 4
 * ahead did nothing there). The engine's own RQ has its read-ahead in
 * lib/transport/resp.c. */
#define SQ_READ_AHEAD 4
#define RECV_READ_AHEAD 12

static inline void
wqe_prefetch(const void *slot)
{
	__builtin_prefetch(slot, 0);
	__builtin_prefetch((const uint8_t *)slot + 64, 0);
}

/*
 * The client wrote the WQEs of @p ring on its own CPU: each read waits for
 * its lines to come across. Ask for the control line and first SGE of every
 * WQE up to index @p upto (below @p n) not yet asked for (*@p asked on), so
 * that the transfers overlap: the first time, all of them at once.
 */
static inline void
wqe_read_ahead(struct uroce_shm_ring *ring, uint32_t *asked, uint32_t upto, uint32_t n)
{
	for (; *asked < n && *asked <= upto; (*asked)++)
		wqe_prefetch(uroce_shm_ring_cons_slot(ring, *asked));
}

/* @return true if the QP may have more send WQEs (budget or engine room out). */
static bool
qp_service_sq(struct dworker *w, struct dqp *qp)
{
	struct uroce_shm_wq_limits lim = {
		.max_sge = qp->max_send_sge, .max_inline = qp->max_inline, .qp_type = qp->type,
	};
	uint32_t n, i, asked = 1; /* WQEs asked for ahead: the head's, below */

	if (qp->failed)
		return false;
	/* The doorbell rang after the WQE at the head was written: ask for it
	 * before the producer index, so that the two misses overlap. (On a
	 * look at a hot slot the head may not be written yet; asking for it
	 * anyway measured better than asking only once the index said so.) */
	wqe_prefetch(uroce_shm_ring_cons_slot(&qp->sq, 0));
	n = uroce_shm_ring_untrusted_peek(&qp->sq, WQES_PER_SLOT);
	if (n == 0) {
		if (uroce_shm_ring_is_corrupt(&qp->sq))
			qp_ring_failed(w, qp);
		return false;
	}
	for (i = 0; i < n; i++) {
		const struct uroce_shm_send_wqe *sw = uroce_shm_ring_cons_slot(&qp->sq, i);
		struct uroce_eng_send_wqe *e = uroce_eng_sq_reserve(qp->qp);
		int st, rc;

		if (e == NULL)
			break; /* the engine's SQ is full: the rest waits in the ring */
		wqe_read_ahead(&qp->sq, &asked, i + 1 + SQ_READ_AHEAD, n);
		st = sq_read(qp, &lim, sw, e);
		if (st == UROCE_WC_SUCCESS) {
			rc = uroce_eng_sq_commit(qp->qp);
			if (rc != 0)
				st = commit_status(rc);
		}
		if (st != UROCE_WC_SUCCESS)
			wqe_reject(w, qp, qp->scq, e->wr.wr_id, uroce_wc_opcode_of(e->wr.opcode), st);
	}
	uroce_shm_ring_cons_release(&qp->sq, i);
	w->cnt.wqes += i;
	return i < n || n == WQES_PER_SLOT;
}

/*
 * Receives taken ahead. The client writes its RQ's producer index as it
 * posts, and every read of it after a write is a miss (3 to 8 % of a UD
 * ingest worker, doc/benchmarks.md). So while the engine holds RQ_LOW
 * receives, a look at the QP's slot takes none, and when its completions
 * bring it below, the round's end takes up to RQ_REFILL at once
 * (qp_rq_refill()): one read of the index per RQ_REFILL receives, not per
 * look. The engine's refill hook still takes what it needs if a burst
 * empties it first. A WQE the worker would refuse is refused only once
 * the WQEs before it are taken (a ConnectX, too, reads receive WQEs as
 * messages need them).
 */
#define RQ_LOW 128u
#define RQ_REFILL 256u

/*
 * Take up to @p max receive WQEs of @p qp into the engine; the caller has
 * released the slots of those the engine no longer holds (qp_rq_release()).
 * From the engine's refill hook (@p from_engine), a WQE that must be
 * refused is left in the ring for the doorbell path: the QP cannot change
 * state under the responder. @return true if the QP may have more receive
 * WQEs.
 */
static bool
qp_service_rq(struct dworker *w, struct dqp *qp, bool from_engine, uint32_t max)
{
	uint32_t n, i, asked;
	bool more;

	if (qp->rq.hdr == NULL || qp->failed)
		return false;
	/* The first rq_held entries are in the engine already. */
	n = uroce_shm_ring_untrusted_peek(&qp->rq, qp->rq_held + max);
	if (n <= qp->rq_held) {
		if (uroce_shm_ring_is_corrupt(&qp->rq) && !from_engine)
			qp_ring_failed(w, qp);
		return false;
	}
	asked = qp->rq_held;
	for (i = qp->rq_held; i < n; i++) {
		struct uroce_wr_recv *e = uroce_eng_rq_reserve(qp->qp);
		int st, rc;

		if (e == NULL)
			break;
		wqe_read_ahead(&qp->rq, &asked, i + RECV_READ_AHEAD, n);
		st = uroce_shm_recv_wqe_read(uroce_shm_ring_cons_slot(&qp->rq, i), qp->max_recv_sge, e);
		if (st == UROCE_WC_SUCCESS) {
			rc = uroce_eng_rq_commit(qp->qp);
			if (rc != 0)
				st = commit_status(rc);
		}
		if (st != UROCE_WC_SUCCESS) {
			if (from_engine)
				break;
			wqe_reject(w, qp, qp->rcq, e->wr_id, UROCE_WC_RECV, st);
		}
	}
	w->cnt.wqes += i - qp->rq_held;
	/* Slots are released only for WQEs the engine no longer holds: those
	 * refused, or completed at once in ERR. */
	more = i < n || n - qp->rq_held == max;
	qp->rq_held = i;
	qp_rq_release(qp);
	return more;
}

/* A look at the slot of @p qp: its receives, unless the engine holds
 * RQ_LOW. (A ring the engine's refill hook found corrupt is failed here.)
 * @return true if the QP may have more receive WQEs. */
static bool
qp_rq_look(struct dworker *w, struct dqp *qp)
{
	qp_rq_release(qp);
	if (qp->rq_held >= RQ_LOW && !uroce_shm_ring_is_corrupt(&qp->rq)) {
		qp->rq_deferred = true;
		return false;
	}
	return qp_service_rq(w, qp, false, WQES_PER_SLOT);
}

/* Receives of @p qp completed this round: if a look left some in the ring
 * and the engine runs low, take up to RQ_REFILL. */
static void
qp_rq_refill(struct dworker *w, struct dqp *qp)
{
	qp_rq_release(qp);
	if (qp->rq_deferred && qp->rq_held < RQ_LOW)
		qp->rq_deferred = qp_service_rq(w, qp, false, RQ_REFILL);
}

/*
 * @p qp went to RESET, which empties its work queues with no completion
 * (IBA 10.3.1): the engine dropped the WQEs it held, and those still in the
 * client's rings go too, so that none is taken once the QP is used again.
 * Receives stay in the ring when the engine holds RQ_LOW; sends when the
 * doorbell was not read yet, or when the engine's SQ was full.
 */
static void
ring_discard(struct uroce_shm_ring *ring)
{
	uint32_t n = uroce_shm_ring_untrusted_peek(ring, ring->size);

	if (n != 0)
		uroce_shm_ring_cons_release(ring, n);
}

static void
qp_discard_rings(struct dqp *qp)
{
	ring_discard(&qp->sq);
	if (qp->rq.hdr == NULL)
		return;
	/* The engine holds none after RESET, and the rq_held it held are the
	 * ring's first entries, not yet released: all go with the rest. */
	ring_discard(&qp->rq);
	qp->rq_held = 0;
	qp->rq_deferred = false;
}

/*
 * Move receive WQEs from the SRQ ring to the engine SRQ. A WQE the ABI
 * alone refuses (reserved bits, too many SGEs, too long) is dropped and
 * counted: there is no QP to complete it on yet. Keys, bounds and rights are
 * the engine's to check when data lands (a key of another client's MR is of
 * another PD: the QP that consumes the WQE completes it LOC_PROT_ERR).
 * @return true if work is left.
 */
static bool
srq_service(struct dworker *w, struct dsrq *srq)
{
	uint32_t n, i;

	if (srq->failed)
		return false;
	n = uroce_shm_ring_untrusted_peek(&srq->ring, WQES_PER_SLOT);
	if (n == 0) {
		if (uroce_shm_ring_is_corrupt(&srq->ring)) {
			srq->failed = true;
			w->cnt.ring_corrupt++;
			raise_event(w, srq->owner, UROCE_ASYNC_SRQ_ERR, srq->handle);
		}
		return false;
	}
	for (i = 0; i < n; i++) {
		struct uroce_wr_recv *e = uroce_eng_srq_reserve(srq->srq);

		if (e == NULL)
			break;
		if (uroce_shm_recv_wqe_read(uroce_shm_ring_cons_slot(&srq->ring, i), srq->max_sge, e) !=
			    UROCE_WC_SUCCESS ||
		    uroce_eng_srq_commit(srq->srq) != 0) {
			w->cnt.wqe_rejected++;
			w->cnt.srq_wqe_rejected++;
		}
	}
	uroce_shm_ring_cons_release(&srq->ring, i);
	w->cnt.wqes += i;
	srq_check_limit(w, srq);
	return i < n || n == WQES_PER_SLOT;
}

/* Serve the QP or SRQ of doorbell slot entry @p e (a slot with neither: the
 * client's own noise). @return true if it may have more work. */
static bool
slot_service(struct dworker *w, uintptr_t e)
{
	bool more = false;

	if ((e & SLOT_MASK) == SLOT_QP) {
		struct dqp *qp = (struct dqp *)(e & ~(uintptr_t)SLOT_MASK);

		more = qp_rq_look(w, qp);
		more |= qp_service_sq(w, qp);
	} else if ((e & SLOT_MASK) == SLOT_SRQ) {
		more = srq_service(w, (struct dsrq *)(e & ~(uintptr_t)SLOT_MASK));
	}
	return more;
}

static bool
slot_is_hot(const struct dwsess *ws, uint32_t slot)
{
	unsigned int i;

	for (i = 0; i < ws->n_hot; i++)
		if (ws->hot[i] == slot)
			return true;
	return false;
}

/*
 * Serve the session's rung slots. Reading the doorbells costs two locked
 * exchanges on lines the client wrote last, and a client that posts one WQE
 * at a time rings for each: about one exchange pair per message. So a slot
 * that had work stays hot: its rings are looked at every round, as a rung
 * slot's are, until HOT_IDLE_ROUNDS rounds found nothing, and meanwhile the
 * doorbells are read only every HARVEST_EVERY rounds. A look at a slot whose
 * doorbell did not ring is what a spurious ring already causes; no doorbell
 * is lost, since its bit stays set until the next read. What a busy client
 * gains: its bits stay set, so its ring finds them set, on a line still its
 * own. @return the slots that had work, and the rung ones.
 */
static unsigned int
session_doorbells(struct dworker *w, struct dwsess *ws)
{
	uint32_t again[SLOTS_PER_ROUND];
	uint32_t nagain = 0, i;
	unsigned int served = 0, work = 0;
	int slot;

	for (i = 0; i < ws->n_hot;) {
		uint64_t wqes = w->cnt.wqes;

		if (slot_service(w, ws->slot[ws->hot[i]]) || w->cnt.wqes != wqes) {
			ws->hot_idle[i] = 0;
			work++;
		} else if (++ws->hot_idle[i] > HOT_IDLE_ROUNDS) {
			ws->n_hot--;
			ws->hot[i] = ws->hot[ws->n_hot];
			ws->hot_idle[i] = ws->hot_idle[ws->n_hot];
			continue;
		}
		i++;
	}
	if (ws->n_hot > 0 && ++ws->rounds_unharvested < HARVEST_EVERY)
		return work;
	ws->rounds_unharvested = 0;
	while (served < SLOTS_PER_ROUND && (slot = uroce_shm_db_next(&ws->rd)) >= 0) {
		served++;
		if (slot_is_hot(ws, (uint32_t)slot))
			continue; /* looked at above */
		if (ws->n_hot < HOT_SLOTS) {
			ws->hot_idle[ws->n_hot] = 0;
			ws->hot[ws->n_hot++] = (uint16_t)slot;
			slot_service(w, ws->slot[slot]);
		} else if (slot_service(w, ws->slot[slot])) {
			again[nagain++] = (uint32_t)slot;
		}
	}
	for (i = 0; i < nagain; i++)
		uroce_shm_db_requeue(&ws->rd, again[i]);
	return work + served;
}

/* ------------------------------------------------------------------------ */
/* The engine's ops                                                          */
/* ------------------------------------------------------------------------ */

uint64_t
worker_now_us(const struct dworker *w)
{
	return w->d->clock_us != NULL ? w->d->clock_us(w->port_ctx) : w->now_us;
}

static uint64_t
op_now(void *ctx)
{
	return worker_now_us(ctx);
}

static struct loop_frame *
frame_of(uint8_t *ib)
{
	return (struct loop_frame *)(void *)(ib - LOOP_HEADROOM - offsetof(struct loop_frame, buf));
}

/* Give back the memory references of zero-copy frames that came home. */
static void
loop_zc_flush(struct dworker *w)
{
	if (w->zc_ref_n == 0)
		return;
	/* Release: the receiver's reads are over before the memory may go. */
	__atomic_fetch_sub(w->zc_ref, w->zc_ref_n, __ATOMIC_RELEASE);
	w->zc_ref_n = 0;
}

/*
 * A zero-copy frame is home: the WQE waiting for it (the requester's engine
 * is this worker's) may complete, and the client memory it read is free.
 * Frames of one segment come home in runs: their references go back as one
 * atomic per run when the run ends or the caller's batch does
 * (loop_zc_flush()), not one per frame (a locked instruction also waits for
 * the stores of the copy just made to drain).
 */
static void
loop_zc_done(struct dworker *w, struct loop_frame *f)
{
	if (f->tail == NULL)
		return;
	f->tail = NULL;
	uroce_eng_zc_release(w->eng, &f->zc);
	if (f->zc.mem_ref == NULL)
		return;
	if (f->zc.mem_ref != w->zc_ref)
		loop_zc_flush(w);
	w->zc_ref = f->zc.mem_ref;
	w->zc_ref_n++;
}

/*
 * Ask for the lines of a free frame that its sender writes (the frame's
 * fields and the headers in front of and after LOOP_HEADROOM) in the
 * exclusive state. A frame home from another worker was last read there: a
 * store to it waits for that copy to be invalidated, and a store buffer of
 * such stores stalls the worker (the cross layout of bench_workers.sh).
 * loop_alloc() asks for the frame LOOP_ALLOC_AHEAD allocations ahead, so
 * that the invalidations go out evenly, in time, and a few at once: asked
 * for a whole returned batch at once (as loop_reclaim() once did), they
 * filled the core's miss buffers and the prefetches themselves stalled.
 */
#define LOOP_ALLOC_AHEAD 4u

static inline void
frame_prefetch_w(const struct loop_frame *f)
{
	const uint8_t *b = f->buf;

#if defined(__x86_64__)
	/* PREFETCHW: a no-op where the CPU lacks it (no -march needed). */
	__asm__ volatile("prefetchw %0" : : "m"(*(const uint8_t *)f));
	__asm__ volatile("prefetchw %0" : : "m"(b[LOOP_HEADROOM - 64]));
	__asm__ volatile("prefetchw %0" : : "m"(b[LOOP_HEADROOM]));
	__asm__ volatile("prefetchw %0" : : "m"(b[LOOP_HEADROOM + 64]));
#else
	__builtin_prefetch(f, 1);
	__builtin_prefetch(b + LOOP_HEADROOM - 64, 1);
	__builtin_prefetch(b + LOOP_HEADROOM, 1);
	__builtin_prefetch(b + LOOP_HEADROOM + 64, 1);
#endif
}

static void
loop_free_push(struct dworker *w, struct loop_frame *f)
{
	loop_zc_done(w, f);
	w->loop_free[w->loop_nfree++] = f; /* the stack holds the whole pool */
}

/*
 * Bit 0 of a return ring's slot: the frame going home was zero-copy (its
 * tail set), so its owner has a reference to give back. The receiver sets
 * it from the fields it has just parsed the frame by, and the owner learns
 * it from the slot: its load of the frame's field, right behind a prefetch
 * for writing of that line, waited for the invalidation, one frame after
 * another (half of loop_reclaim()'s time in the cross layout of
 * bench_workers.sh).
 */
#define LOOP_RET_ZC ((uintptr_t)1)

/* Frames other workers are done with come home to the free stack without a
 * load from them (LOOP_RET_ZC); the top of the stack, which loop_alloc()
 * hands out first and asks for no earlier, is asked for here. */
static void
loop_reclaim(struct dworker *w)
{
	struct dloop *l = loop_of(w);
	uint32_t h, end, came = 0;
	struct loop_frame *f;
	uintptr_t slot;
	unsigned int i;

	for (i = 0; i < w->d->n_workers; i++) {
		if (l->ret[i] == NULL)
			continue;
		end = pring_ready(l->ret[i]);
		h = l->ret[i]->head;
		if (h == end)
			continue;
		for (; h != end; h++) {
			slot = (uintptr_t)pring_slot(l->ret[i], h);
			f = (struct loop_frame *)(slot & ~LOOP_RET_ZC);
			if (slot & LOOP_RET_ZC)
				loop_zc_done(w, f);
			w->loop_free[w->loop_nfree++] = f;
			came++;
		}
		pring_done(l->ret[i], end);
	}
	for (i = 1; came > 0 && i <= LOOP_ALLOC_AHEAD && i <= w->loop_nfree; i++)
		frame_prefetch_w(w->loop_free[w->loop_nfree - i]);
	loop_zc_flush(w);
}

static uint8_t *
loop_alloc(struct dworker *w, uint32_t ib_len)
{
	struct loop_frame *f;

	if (ib_len > LOOP_IB_MAX)
		return NULL;
	if (w->loop_nfree == 0)
		loop_reclaim(w);
	if (w->loop_nfree == 0)
		return NULL;
	f = w->loop_free[--w->loop_nfree];
	if (w->loop_nfree >= LOOP_ALLOC_AHEAD)
		frame_prefetch_w(w->loop_free[w->loop_nfree - LOOP_ALLOC_AHEAD]);
	return f->buf + LOOP_HEADROOM;
}

/* A frame this worker delivered goes back to its pool. */
static void
loop_release(struct dworker *w, struct loop_frame *f)
{
	unsigned int owner = f->owner;

	if (owner == w->idx) {
		loop_free_push(w, f);
		return;
	}
	/* The return ring holds the owner's whole pool: there is always room. */
	if (f->tail != NULL)
		f = (struct loop_frame *)((uintptr_t)f | LOOP_RET_ZC);
	if (pring_put_batched(loop_of(w)->to_ret[owner], f, &loop_of(w)->ret_owed, owner) < 0)
		w->cnt.loop_bad++; /* cannot happen; lost from the pool, counted */
}

static uint8_t *
op_tx_alloc(void *ctx, uint32_t ib_len)
{
	struct dworker *w = ctx;

	if (w->d->port != NULL)
		return w->d->port->tx_alloc(w->port_ctx, ib_len);
	return loop_alloc(w, ib_len);
}

static void
op_tx_free(void *ctx, uint8_t *buf)
{
	struct dworker *w = ctx;

	if (w->d->port != NULL)
		w->d->port->tx_free(w->port_ctx, buf);
	else
		loop_release(w, frame_of(buf));
}

/* Is @p gid one of this daemon's GIDs (so packets to it loop back)? */
static bool
gid_is_local(const struct uroce_daemon *d, const uint8_t gid[16])
{
	unsigned int i;

	if (uroce_gid_is_zero(gid)) /* empty table slots are zero */
		return false;
	for (i = 0; i < d->n_gid; i++)
		if (memcmp(d->gids[i], gid, 16) == 0)
			return true;
	return false;
}

/* The Ethernet/IP/UDP a loop frame carries, as a wire between two ports. */
static void
loop_encap(const struct uroce_eng_tx_addr *a, struct uroce_encap *enc)
{
	static const uint8_t mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};

	uroce_eng_tx_encap(a, enc);
	memcpy(enc->smac, mac, 6);
	memcpy(enc->dmac, mac, 6);
}

/* Hand a wrapped loop frame (its BTH at @p bth) to the owner worker of the
 * QP it is for; false if that worker's ring is full. */
static bool
loop_hand(struct dworker *w, struct loop_frame *f, const uint8_t *bth)
{
	struct uroce_daemon *d = w->d;
	unsigned int to;
	int rc;

	f->next = NULL;
	to = uroce_daemon_qpn_worker(uroce_bth_dqpn(bth));
	if (to >= d->n_workers)
		to = 0; /* nobody's QPN: worker 0's engine counts it */
	if (to == w->idx) {
		*w->loop_tail = f;
		w->loop_tail = &f->next;
		return true;
	}
	/* Published, and the owner woken, at the round's end or every
	 * LOOP_PUBLISH_EVERY frames: the owner starts on a long burst while
	 * this worker is still making it, as two ports on a wire would. */
	rc = pring_put_batched(loop_of(w)->to_in[to], f, &loop_of(w)->in_owed, to);
	if (rc > 0)
		worker_wake_at(d, to);
	return rc >= 0;
}

/* Wrap a loop frame as a wire would and hand it to the QP's owner worker. */
static void
loop_send(struct dworker *w, uint8_t *ib, uint32_t ib_len, const struct uroce_eng_tx_addr *a)
{
	struct loop_frame *f = frame_of(ib);
	struct uroce_encap enc;
	uint32_t elen;

	loop_encap(a, &enc);
	elen = uroce_frame_wrap(ib, LOOP_HEADROOM, ib_len, &enc);
	if (elen == 0) {
		w->cnt.loop_bad++;
		loop_release(w, f);
		return;
	}
	f->frame = ib - elen;
	f->len = elen + ib_len;
	if (!loop_hand(w, f, ib)) {
		w->cnt.loop_bad++; /* the owner is that far behind: a loss, as on a wire */
		loop_release(w, f);
	}
}

/*
 * A loop frame whose payload stays in client memory: the headers, then the
 * pad and the ICRC, in the frame; the payload read where it lies, once for
 * the ICRC here and once by the receiver (its ICRC check, then its copy into
 * the target), which spares a copy through the frame pool. The MR's memory
 * and the WQE stay held until the frame comes home (loop_zc_done()). False
 * when it cannot go so: the engine copies it into @p ib and sends that.
 */
static bool
loop_send_zc(struct dworker *w, uint8_t *ib, uint32_t hdr_len, const uint8_t *payload,
	     uint32_t paylen, const struct uroce_eng_zc *zc, const struct uroce_eng_tx_addr *a)
{
	struct loop_frame *f = frame_of(ib);
	struct uroce_encap enc;
	uint32_t elen;

	loop_encap(a, &enc);
	elen = uroce_frame_wrap_split(ib, LOOP_HEADROOM, hdr_len, payload, paylen, ib + hdr_len,
				      &enc);
	if (elen == 0)
		return false;
	f->frame = ib - elen;
	f->len = elen + hdr_len;
	f->tail = payload;
	f->tail_len = paylen;
	f->zc = *zc;
	if (!loop_hand(w, f, ib)) {
		f->tail = NULL;
		return false;
	}
	w->cnt.loop_zero_copy++;
	return true;
}

static void
op_tx_send(void *ctx, uint8_t *buf, uint32_t ib_len, const struct uroce_eng_tx_addr *a)
{
	struct dworker *w = ctx;
	const struct uroce_daemon_port_ops *port = w->d->port;
	uint8_t *copy;

	if (port == NULL) {
		loop_send(w, buf, ib_len, a);
		return;
	}
	if (!gid_is_local(w->d, a->dgid)) {
		w->cnt.port_tx++;
		port->tx_send(w->port_ctx, buf, ib_len, a);
		return;
	}
	/* A packet for ourselves never leaves: loop a copy, free the port buffer. */
	copy = loop_alloc(w, ib_len);
	if (copy != NULL) {
		memcpy(copy, buf, ib_len);
		loop_send(w, copy, ib_len, a);
	} else {
		w->cnt.loop_bad++;
	}
	port->tx_free(w->port_ctx, buf);
}

/* Zero-copy through the port, or through the loopback when there is no port.
 * With a port, a frame for ourselves is in a port buffer: it is copied into
 * a loop frame (op_tx_send()). */
static bool
op_tx_send_zc(void *ctx, uint8_t *buf, uint32_t hdr_len, const uint8_t *payload,
	      uint32_t paylen, uint32_t ib_len, const struct uroce_eng_tx_addr *a,
	      const struct uroce_eng_zc *zc)
{
	struct dworker *w = ctx;
	const struct uroce_daemon_port_ops *port = w->d->port;

	if (port == NULL)
		return loop_send_zc(w, buf, hdr_len, payload, paylen, zc, a);
	if (port->tx_send_zc == NULL || gid_is_local(w->d, a->dgid) ||
	    !port->tx_send_zc(w->port_ctx, buf, hdr_len, payload, paylen, ib_len, a, zc))
		return false;
	w->cnt.port_tx++;
	return true;
}

static void
zc_released(void *arg, const struct uroce_eng_zc *zc)
{
	struct dworker *w = arg;

	uroce_eng_zc_release(w->eng, zc);
}

_Static_assert((int)UROCE_EVENT_QP_FATAL == (int)UROCE_ASYNC_QP_FATAL &&
	       (int)UROCE_EVENT_QP_REQ_ERR == (int)UROCE_ASYNC_QP_REQ_ERR &&
	       (int)UROCE_EVENT_QP_ACCESS_ERR == (int)UROCE_ASYNC_QP_ACCESS_ERR &&
	       (int)UROCE_EVENT_SQ_DRAINED == (int)UROCE_ASYNC_SQ_DRAINED &&
	       (int)UROCE_EVENT_QP_LAST_WQE_REACHED == (int)UROCE_ASYNC_QP_LAST_WQE_REACHED,
	       "engine QP events carry ibverbs' numbers");

/* Engine events go to the owning client, through the control thread. */
static void
op_async_event(void *ctx, enum uroce_event_type t, void *obj)
{
	struct dworker *w = ctx;
	struct dqp *qp;
	struct dcq *cq;

	switch (t) {
	case UROCE_EVENT_QP_FATAL:
	case UROCE_EVENT_QP_REQ_ERR:
	case UROCE_EVENT_QP_ACCESS_ERR:
	case UROCE_EVENT_SQ_DRAINED:
	case UROCE_EVENT_QP_LAST_WQE_REACHED:
		qp = uroce_eng_qp_context(obj);
		if (qp == NULL)
			return;
		/* The engine's event numbers are ibverbs' (see the asserts above). */
		raise_event(w, qp->owner, (uint32_t)t, qp->handle);
		return;
	case UROCE_EVENT_CQ_ERR:
		cq = uroce_eng_cq_context(obj);
		if (cq != NULL && !cq->err_reported) {
			cq->err_reported = true;
			raise_event(w, cq->owner, UROCE_ASYNC_CQ_ERR, cq->handle);
		}
		return;
	}
}

static void
op_rq_refill(void *ctx, struct uroce_eng_qp *eq)
{
	struct dworker *w = ctx;
	struct dqp *qp = uroce_eng_qp_context(eq);

	if (qp == NULL)
		return;
	if (qp->xrcd != NULL) {
		/* XRC TGT: the SRQ the request names (on this worker: the
		 * domain's SRQs all are). */
		struct uroce_eng_srq *xs = uroce_eng_qp_xrc_srq(eq);

		if (xs != NULL)
			srq_service(w, uroce_eng_srq_context(xs));
	} else if (qp->srq != NULL) {
		srq_service(w, qp->srq);
	} else {
		qp_rq_release(qp);
		qp_service_rq(w, qp, true, WQES_PER_SLOT);
	}
}

static const struct uroce_eng_ops worker_ops = {
	.now_us = op_now,
	.tx_alloc = op_tx_alloc,
	.tx_send = op_tx_send,
	.tx_free = op_tx_free,
	.async_event = op_async_event,
	.rq_refill = op_rq_refill,
	.tx_send_zc = op_tx_send_zc,
	.resp_reject = op_resp_reject,
	.req_error = op_req_error,
};

/* ------------------------------------------------------------------------ */
/* Commands from the control thread                                          */
/* ------------------------------------------------------------------------ */

static int
ws_add(struct dworker *w, struct dwsess *ws)
{
	if (w->n_ws == w->cap_ws) {
		unsigned int n = w->cap_ws ? w->cap_ws * 2 : 16;
		struct dwsess **a = realloc(w->ws, n * sizeof(*a));

		if (a == NULL)
			return -ENOMEM;
		w->ws = a;
		w->cap_ws = n;
	}
	w->ws[w->n_ws++] = ws;
	return 0;
}

static void
ws_del(struct dworker *w, struct dwsess *ws)
{
	unsigned int i;

	for (i = 0; i < w->n_ws; i++)
		if (w->ws[i] == ws) {
			w->ws[i] = w->ws[--w->n_ws];
			return;
		}
}

static int
cq_place(struct dworker *w, struct dcq *cq)
{
	struct uroce_eng_cq_sink sink = { .push = cq_sink_push, .ctx = cq };

	cq->wk = w;
	cq->cq = uroce_eng_cq_create_sink(w->eng, &sink, cq);
	return cq->cq != NULL ? 0 : -ENOMEM;
}

static void
dirty_unlink(struct dworker *w, struct dcq *cq)
{
	struct dcq **pp;

	for (pp = &w->dirty; *pp != NULL; pp = &(*pp)->dirty_next)
		if (*pp == cq) {
			*pp = cq->dirty_next;
			if (w->dirty_tail == &cq->dirty_next)
				w->dirty_tail = pp;
			break;
		}
	cq->dirty = false;
}

static int
qp_create(struct dworker *w, struct dqp *qp)
{
	struct uroce_eng_qp_init_attr ia;
	struct session *s = qp->owner;

	memset(&ia, 0, sizeof(ia));
	ia.qp_context = qp;
	if (qp->xrcd != NULL) {
		/* XRC TGT: no CQs, no queues; its send ring is never served, so
		 * its doorbell slot stays empty. */
		ia.xrcd = qp->xrcd->xrcd_id;
		ia.eng = w->eng;
		ia.qp_type = UROCE_QPT_XRC_RECV;
		qp->qp = uroce_eng_qp_create(qp->pd->pd, &ia);
		if (qp->qp == NULL)
			return errno ? -errno : -ENOMEM;
		qp->qpn = uroce_eng_qp_num(qp->qp);
		return 0;
	}
	ia.send_cq = qp->scq->cq;
	ia.recv_cq = qp->rcq->cq;
	ia.srq = qp->srq != NULL ? qp->srq->srq : NULL;
	ia.qp_type = (enum uroce_qp_type)qp->type;
	ia.sq_sig_all = qp->sig_all != 0;
	ia.cap.max_send_wr = qp->max_send_wr;
	ia.cap.max_recv_wr = qp->max_recv_wr;
	ia.cap.max_send_sge = qp->max_send_sge;
	ia.cap.max_recv_sge = qp->max_recv_sge;
	ia.cap.max_inline_data = qp->max_inline;
	qp->qp = uroce_eng_qp_create(qp->pd->pd, &ia);
	if (qp->qp == NULL)
		return errno ? -errno : -ENOMEM;
	qp->qpn = uroce_eng_qp_num(qp->qp);
	s->ws[w->idx]->slot[qp->slot] = (uintptr_t)qp | SLOT_QP;
	return 0;
}

static void
qp_destroy(struct dworker *w, struct dqp *qp)
{
	struct dqp **p;

	qp->owner->ws[w->idx]->slot[qp->slot] = 0;
	for (p = &w->rq_dirty; qp->rq_dirty && *p != NULL; p = &(*p)->rq_dirty_next) {
		if (*p == qp) {
			*p = qp->rq_dirty_next;
			qp->rq_dirty = false;
			break;
		}
	}
	uroce_eng_qp_destroy(qp->qp);
	qp->qp = NULL;
}

static void
qp_state(struct dworker *w, struct dqp *qp, struct dqp_state *st)
{
	unsigned int k;

	(void)w;
	memset(st, 0, sizeof(*st));
	uroce_eng_query_qp(qp->qp, &st->attr, NULL);
	st->sq_queued = uroce_shm_ring_used_count(&qp->sq);
	st->rq_queued = qp->rq.hdr != NULL ? uroce_shm_ring_used_count(&qp->rq) : 0;
	st->failed = qp->failed;
	st->n_cnt = UROCE_CNT_MAX;
	for (k = 0; k < UROCE_CNT_MAX; k++)
		st->cnt[k] = uroce_eng_qp_counter(qp->qp, (enum uroce_counter)k);
	uroce_eng_qp_cc_state(qp->qp, &st->cc);
	uroce_eng_qp_cc_get(qp->qp, &st->cc_params);
	uroce_eng_qp_resp_rejects(qp->qp, &st->reject, 1);
}

/* Every QP of this worker to ERR; their flushes written. @return QPs moved. */
static unsigned int
quiesce(struct dworker *w)
{
	struct uroce_eng_qp_attr a;
	unsigned int n = 0, i, round;

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_ERR;
	for (i = UROCE_FIRST_USER_QPN; i < UROCE_MAX_QP; i++) {
		struct uroce_eng_qp *qp = uroce_eng_qp(w->eng, w->idx << UROCE_QPN_LOCAL_BITS | i);

		if (qp != NULL && uroce_eng_qp_state(qp) != UROCE_QPS_ERR &&
		    uroce_eng_modify_qp(qp, &a, UROCE_QP_STATE) == 0)
			n++;
	}
	for (round = 0; round < 4; round++)
		uroce_eng_poll(w->eng);
	return n;
}

static unsigned int
qps_placed(struct dworker *w)
{
	unsigned int n = 0, i;

	for (i = UROCE_FIRST_USER_QPN; i < UROCE_MAX_QP; i++)
		if (uroce_eng_qp(w->eng, w->idx << UROCE_QPN_LOCAL_BITS | i) != NULL)
			n++;
	return n;
}

/* Rounds a CQ resize runs at most before it moves the CQEs. */
#define CQ_RESIZE_ROUNDS 8

static unsigned int round_work(struct dworker *w);

static void
worker_exec(struct dworker *w, struct dcmd *c)
{
	struct uroce_eng_srq_init_attr sa;
	unsigned int i;

	c->rc = 0;
	switch (c->type) {
	case CMD_BARRIER:
		break;
	case CMD_WS_ADD:
		c->rc = ws_add(w, c->u.ws);
		break;
	case CMD_WS_DEL:
		ws_del(w, c->u.ws);
		break;
	case CMD_CQ_PLACE:
		c->rc = cq_place(w, c->u.cq);
		break;
	case CMD_CQ_RESIZE:
		/* Run until idle first (a few rounds at most): the doorbells rung
		 * before the request are served and what completes at once (UD
		 * sends, loopback exchanges, local errors) is in the ring, so it
		 * counts against the new size as on a device. */
		for (i = 0; i < CQ_RESIZE_ROUNDS && round_work(w) != 0; i++)
			;
		c->rc = cq_ring_move(c->u.cq_resize.cq, c->u.cq_resize.seg, c->u.cq_resize.size);
		break;
	case CMD_CQ_MODERATE:
		c->u.cq_mod.cq->mod_count = c->u.cq_mod.count;
		c->u.cq_mod.cq->mod_period_us = c->u.cq_mod.period_us;
		/* A window of the old setting closes now: an event early, none lost. */
		if (c->u.cq_mod.cq->mod_due_us != 0)
			cq_mod_fire(w, c->u.cq_mod.cq);
		break;
	case CMD_CQ_DESTROY:
		c->rc = uroce_eng_cq_destroy(c->u.cq->cq);
		if (c->rc == 0) {
			dirty_unlink(w, c->u.cq);
			if (c->u.cq->mod_due_us != 0)
				cq_mod_unlink(w, c->u.cq);
		}
		break;
	case CMD_SRQ_CREATE:
		memset(&sa, 0, sizeof(sa));
		sa.max_wr = c->u.srq.srq->max_wr;
		sa.max_sge = c->u.srq.srq->max_sge;
		sa.srq_context = c->u.srq.srq;
		sa.eng = w->eng;
		if (c->u.srq.srq->xrcd != NULL) {
			sa.xrcd = c->u.srq.srq->xrcd->xrcd_id;
			sa.cq = c->u.srq.srq->cq->cq;
		}
		c->u.srq.srq->srq = uroce_eng_srq_create(c->u.srq.pd->pd, &sa);
		if (c->u.srq.srq->srq == NULL) {
			c->rc = errno ? -errno : -ENOMEM;
			break;
		}
		c->u.srq.srq->srqn = uroce_eng_srq_num(c->u.srq.srq->srq);
		/* Its doorbell rings here only if its block is this worker's; else
		 * the engine's refill hook takes its WQEs. */
		if (c->u.srq.srq->db_worker == w->idx)
			c->u.srq.srq->owner->ws[w->idx]->slot[c->u.srq.srq->slot] =
				(uintptr_t)c->u.srq.srq | SLOT_SRQ;
		srq_service(w, c->u.srq.srq);
		break;
	case CMD_SRQ_DESTROY:
		c->rc = uroce_eng_srq_destroy(c->u.srq.srq->srq);
		if (c->rc == 0 && c->u.srq.srq->db_worker == w->idx)
			c->u.srq.srq->owner->ws[w->idx]->slot[c->u.srq.srq->slot] = 0;
		break;
	case CMD_SRQ_LIMIT:
		c->u.srq.srq->limit = c->u.srq.limit;
		srq_check_limit(w, c->u.srq.srq);
		break;
	case CMD_SRQ_QUERY:
		c->u.srq.limit = c->u.srq.srq->limit;
		break;
	case CMD_QP_CREATE:
		c->rc = qp_create(w, c->u.qp.qp);
		break;
	case CMD_QP_DESTROY:
		qp_destroy(w, c->u.qp.qp);
		break;
	case CMD_QP_MODIFY:
		c->rc = uroce_eng_modify_qp(c->u.qp.qp->qp, c->u.qp.attr, c->u.qp.mask);
		if (c->rc == 0 && (c->u.qp.mask & UROCE_QP_STATE) &&
		    c->u.qp.attr->qp_state == UROCE_QPS_RESET)
			qp_discard_rings(c->u.qp.qp);
		break;
	case CMD_QP_QUERY:
		qp_state(w, c->u.qp.qp, c->u.qp.out);
		break;
	case CMD_QP_TO_ERR: {
		struct uroce_eng_qp_attr a;

		memset(&a, 0, sizeof(a));
		a.qp_state = UROCE_QPS_ERR;
		c->rc = uroce_eng_modify_qp(c->u.qp.qp->qp, &a, UROCE_QP_STATE);
		break;
	}
	case CMD_QUIESCE:
		c->u.stats.flushed = quiesce(w);
		break;
	case CMD_GEN:
		c->rc = gen_exec(w, c);
		break;
	case CMD_STATS:
		c->u.stats.cnt = w->cnt;
		uroce_eng_counters(w->eng, c->u.stats.eng);
		c->u.stats.qps = qps_placed(w);
		break;
	}
	/* What the command completed (flushes) reaches the clients now. */
	cq_publish(w);
}

/* ------------------------------------------------------------------------ */
/* The round                                                                 */
/* ------------------------------------------------------------------------ */

static unsigned int
mailbox(struct dworker *w)
{
	uint64_t seq = __atomic_load_n(&w->req.seq, __ATOMIC_ACQUIRE);

	if (seq == w->handled)
		return 0;
	/* Acquire above: the command the control thread wrote is visible. */
	worker_exec(w, w->req.cmd);
	w->handled = seq;
	/* Release: the command's results before the control thread reads them. */
	__atomic_store_n(&w->done.seq, seq, __ATOMIC_RELEASE);
	return 1;
}

/* One frame delivered to this worker to its engine; then it goes home. */
static void
loop_rx(struct dworker *w, struct loop_frame *f)
{
	struct uroce_frame fr;
	struct uroce_pkt p;
	enum uroce_wire_err err;

	/* A zero-copy frame's buffer has room for all of it (LOOP_IB_MAX), as
	 * uroce_parse_split() needs. Late: the ICRC of a payload the engine
	 * copies out is checked in that copy, one pass over it. */
	if (f->tail != NULL)
		err = uroce_parse_split(f->frame, f->len, f->tail, f->tail_len, f->frame + f->len,
					true, &fr, &p);
	else if ((err = uroce_frame_parse(f->frame, f->len, &fr)) == UROCE_WIRE_OK)
		err = uroce_parse_rest(f->frame, &fr, true, &p);
	if (err == UROCE_WIRE_OK) {
		p.owner = f;
		if (uroce_eng_rx(w->eng, &p, &fr) == 0)
			w->cnt.loop_frames++;
		else
			w->cnt.loop_bad++; /* its late ICRC was wrong */
	} else {
		w->cnt.loop_bad++;
	}
	loop_release(w, f);
}

/* Frames from another worker whose lines are asked for ahead of parsing. */
#define LOOP_RX_AHEAD 4u
/* Lines of one such frame asked for: a longer frame's next lines the
 * hardware prefetcher fetches as the reads stream through them. */
#define LOOP_RX_LINES 4u

/* Ask for the lines a frame from another worker will be parsed from (its
 * ICRC reads every one). */
static inline void
frame_prefetch_r(const struct loop_frame *f)
{
	const uintptr_t line_mask = ~(uintptr_t)(DAEMON_CACHE_LINE - 1);
	uintptr_t line = (uintptr_t)f->frame & line_mask;
	uintptr_t last = ((uintptr_t)f->frame + f->len - 1) & line_mask;
	unsigned int n;

	for (n = 0; n < LOOP_RX_LINES && line <= last; n++, line += DAEMON_CACHE_LINE)
		__builtin_prefetch((const void *)line, 0);
}

/* Give each frame delivered to this worker to its engine, in arrival order
 * per sender (a wire between two ports does not reorder either): its own,
 * then each other worker's, read from the ring (a frame from another worker
 * is not written here: its sender writes it next). */
static unsigned int
loop_deliver(struct dworker *w)
{
	struct loop_frame *list = w->loop_head, *f;
	struct dloop *l = loop_of(w);
	unsigned int work = 0, i;
	uint32_t h, end, k;

	/* Take the local queue as it is now; what delivery sends waits. */
	w->loop_head = NULL;
	w->loop_tail = &w->loop_head;
	while ((f = list) != NULL) {
		list = f->next;
		loop_rx(w, f);
		work++;
	}
	for (i = 0; i < w->d->n_workers; i++) {
		if (l->in[i] == NULL)
			continue;
		end = pring_ready(l->in[i]);
		h = l->in[i]->head;
		if (h == end)
			continue;
		/* The other worker wrote them: ask for the frames' lines ahead
		 * of their parsing, a frame's fields LOOP_RX_AHEAD frames
		 * ahead, then its bytes half as far (a load of the fields
		 * that point to them by then hits). */
		for (k = 0; k < LOOP_RX_AHEAD && h + k != end; k++)
			__builtin_prefetch(pring_slot(l->in[i], h + k), 0);
		for (k = 0; k < LOOP_RX_AHEAD / 2 && h + k != end; k++)
			frame_prefetch_r(pring_slot(l->in[i], h + k));
		for (; h != end; h++, work++) {
			if (end - h > LOOP_RX_AHEAD)
				__builtin_prefetch(pring_slot(l->in[i], h + LOOP_RX_AHEAD), 0);
			if (end - h > LOOP_RX_AHEAD / 2)
				frame_prefetch_r(pring_slot(l->in[i], h + LOOP_RX_AHEAD / 2));
			loop_rx(w, pring_slot(l->in[i], h));
		}
		pring_done(l->in[i], end);
	}
	loop_zc_flush(w);
	return work;
}

/* A round's work after its mailbox. */
static unsigned int
round_work(struct dworker *w)
{
	unsigned int work = 0, i;

	if (w->d->n_workers > 1)
		loop_reclaim(w);
	for (i = 0; i < w->n_ws; i++)
		work += session_doorbells(w, w->ws[i]);
	work += loop_deliver(w);
	if (w->gens != NULL)
		work += gen_poll(w); /* load generators post before the engine sends */
	/* Packets the device let go of: their WQEs may complete now. */
	if (w->d->port != NULL && w->d->port->tx_zc_reap != NULL)
		work += w->d->port->tx_zc_reap(w->port_ctx, zc_released, w);
	work += dcm_worker_poll(w->d, w); /* QP1 (worker 0): receives, MADs to send */
	work += uroce_eng_poll(w->eng);
	work += cq_publish(w);
	if (w->moderated != NULL)
		work += cq_mod_due(w);
	if (w->d->n_workers > 1)
		loop_publish(w);
	return work;
}

unsigned int
worker_poll(struct dworker *w)
{
	w->cnt.polls++;
	if (w->d->clock_us == NULL)
		w->now_us = clock_us();
	/* A command is not traffic: it does not count as work, so that an idle
	 * worker's sleeps keep growing through the control thread's periodic
	 * queries (it is woken for each, and sleeps again after). */
	mailbox(w);
	return round_work(w);
}

int
worker_rx(struct dworker *w, const struct uroce_pkt *pkt, const struct uroce_frame *frame)
{
	w->cnt.port_rx++;
	return uroce_eng_rx(w->eng, pkt, frame);
}

/* ------------------------------------------------------------------------ */
/* Life                                                                      */
/* ------------------------------------------------------------------------ */

struct dworker *
worker_create(struct uroce_daemon *d, unsigned int idx, const struct uroce_daemon_conf *conf)
{
	struct uroce_eng_conf ec;
	struct loop_frame *frames;
	struct dworker *w;
	struct dloop *l;
	uint32_t i;

	w = aligned_alloc(DAEMON_CACHE_LINE, (sizeof(*w) + DAEMON_CACHE_LINE - 1) &
						     ~(size_t)(DAEMON_CACHE_LINE - 1));
	if (w == NULL)
		return NULL;
	memset(w, 0, sizeof(*w));
	w->d = d;
	w->idx = idx;
	w->exec = worker_exec;
	w->port_ctx = conf->port_ctxs[idx] != NULL ? conf->port_ctxs[idx] : conf->port_ctx;
	w->loop_tail = &w->loop_head;
	w->dirty_tail = &w->dirty;
	w->now_us = clock_us();
	l = calloc(1, sizeof(*l));
	w->loop_mem = l;
	frames = aligned_alloc(64, sizeof(*frames) * d->loop_frames);
	w->loop_free = calloc(d->loop_frames, sizeof(*w->loop_free));
	if (l == NULL || frames == NULL || w->loop_free == NULL) {
		free(frames);
		goto fail;
	}
	w->loop_frames = frames;
	for (i = 0; i < d->loop_frames; i++) {
		frames[i].owner = (uint16_t)idx;
		frames[i].tail = NULL;
		w->loop_free[d->loop_frames - 1 - i] = &frames[i];
	}
	w->loop_nfree = d->loop_frames;
	for (i = 0; i < d->n_workers && d->n_workers > 1; i++) {
		uint32_t n = pow2_at_least(d->loop_frames);
		size_t sz = sizeof(struct pring) + n * sizeof(struct loop_frame *);

		if (i == idx)
			continue;
		l->in[i] = aligned_alloc(DAEMON_CACHE_LINE, sz);
		l->ret[i] = aligned_alloc(DAEMON_CACHE_LINE, sz);
		if (l->in[i] == NULL || l->ret[i] == NULL)
			goto fail;
		memset(l->in[i], 0, sz);
		memset(l->ret[i], 0, sz);
		l->in[i]->cons_mask = l->in[i]->prod.mask = n - 1;
		l->ret[i]->cons_mask = l->ret[i]->prod.mask = n - 1;
		if (i < idx) {
			/* Workers are created in order, before any runs: link
			 * both ways with each one made before this one. */
			struct dloop *peer = loop_of(d->w[i]);

			peer->to_in[idx] = l->in[i];
			peer->to_ret[idx] = l->ret[i];
			l->to_in[i] = peer->in[idx];
			l->to_ret[i] = peer->ret[idx];
		}
	}
	memset(&ec, 0, sizeof(ec));
	ec.ops = &worker_ops;
	ec.ctx = w;
	memcpy(ec.gid, d->gids[0], 16);
	ec.port = 1;
	ec.ud_mtu = uroce_mtu_bytes(d->active_mtu);
	ec.dev = d->dev;
	ec.qpn_base = idx << UROCE_QPN_LOCAL_BITS;
	ec.zc_min = d->zc_min;
	w->eng = uroce_eng_create(&ec);
	if (w->eng == NULL)
		goto fail;
	if (conf->cc != NULL && uroce_eng_cc_set(w->eng, conf->cc) != 0) {
		errno = EINVAL;
		goto fail;
	}
	return w;
fail:
	worker_destroy(w);
	return NULL;
}

void
worker_destroy(struct dworker *w)
{
	struct dloop *l;
	unsigned int i;

	if (w == NULL)
		return;
	/* Zero-copy frames still out: their memory is not read any more. */
	loop_zc_flush(w);
	for (i = 0; w->loop_frames != NULL && i < w->d->loop_frames; i++)
		if (w->loop_frames[i].tail != NULL)
			uroce_eng_zc_mem_release(&w->loop_frames[i].zc);
	uroce_eng_destroy(w->eng);
	l = loop_of(w);
	if (l != NULL)
		for (i = 0; i < UROCE_DAEMON_MAX_WORKERS; i++) {
			free(l->in[i]);
			free(l->ret[i]);
		}
	free(l);
	free(w->loop_frames);
	free(w->loop_free);
	free(w->ws);
	free(w);
}

/* ------------------------------------------------------------------------ */
/* Idle sleep                                                                */
/* ------------------------------------------------------------------------ */

/* Anything for this worker? Its last look after it announced a sleep: every
 * load here is ordered after that store (seq_cst), and every waker publishes
 * before it loads the sleeping word. */
static bool
worker_has_work(struct dworker *w)
{
	struct dloop *l = loop_of(w);
	unsigned int i;

	if (__atomic_load_n(&w->req.seq, __ATOMIC_SEQ_CST) != w->handled || w->loop_head != NULL)
		return true;
	for (i = 0; i < w->n_ws; i++)
		if (uroce_shm_db_pending(&w->ws[i]->rd))
			return true;
	for (i = 0; i < w->d->n_workers; i++)
		if (l->in[i] != NULL && __atomic_load_n(&l->in[i]->tail, __ATOMIC_SEQ_CST) !=
						l->in[i]->head)
			return true;
	return dcm_worker_pending(w->d, w);
}

bool
worker_sleep(struct dworker *w, uint64_t us, bool (*more)(void *ctx), void *ctx)
{
	struct uroce_shm_status *st = w->d->status;
	bool slept = false;

	if (st == NULL)
		return false;
	/* A worker with no QP has nothing whose latency matters: what can come
	 * is ARP, ND, CM MADs (timeouts of seconds) or packets for QPs it does
	 * not have; a client's first doorbell wakes it at once. Counted only
	 * once the sleeps are long (a scan of the QP table). */
	if (us >= DEEP_SLEEP_AFTER_US && w->gens == NULL && qps_placed(w) == 0)
		us = UROCE_DAEMON_DEEP_SLEEP_US;
	uroce_shm_status_sleep_begin(st, w->idx);
	if (!worker_has_work(w) && (more == NULL || !more(ctx))) {
		uroce_shm_status_sleep(st, w->idx, us);
		slept = true;
	}
	uroce_shm_status_awake(st, w->idx);
	return slept;
}
