/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Private definitions of the transport engine: the object structs behind the
 * opaque handles of uroce_transport.h, the per-role sub-structs of a QP
 * (requester, completer, responder), and the functions the role files call
 * in each other. Nothing here is part of the public API.
 */

#ifndef TRANSPORT_INTERNAL_H
#define TRANSPORT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

/* glibc's sys/queue.h lacks the _SAFE iterators. */
#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar) \
	for ((var) = TAILQ_FIRST(head); (var) && ((tvar) = TAILQ_NEXT(var, field), 1); \
	     (var) = (tvar))
#endif

#include "uroce_limits.h"
#include "uroce_transport.h"

/* Keys are index << 8 | variant (IBA 10.6.3.4 leaves the format to the CI). */
#define KEY_INDEX(k) ((k) >> 8)
#define KEY_VARIANT(k) ((k) & 0xFFu)

/*
 * What the engines of one daemon share: PDs, MRs, AHs. Written by one thread
 * (the control thread); the MR table is read by every engine. An MR pointer
 * is published with a release store after the MR is filled in, and read
 * with an acquire load, so a worker sees either no MR or a whole one; the
 * caller frees an unpublished MR only after every worker has passed a
 * quiescent point (uroce_eng_dev_create()).
 */
struct uroce_eng_dev {
	struct uroce_eng_mr *mrs[UROCE_MAX_MR];
	uint8_t mr_variant[UROCE_MAX_MR];
	uint32_t mr_next;
	TAILQ_HEAD(, uroce_eng_pd) pds;
	TAILQ_HEAD(, uroce_eng_ah) ahs;
};

struct uroce_eng_pd {
	struct uroce_eng_dev *dev;
	struct uroce_eng *home;   /* engine it was allocated from (default for SRQs) */
	TAILQ_ENTRY(uroce_eng_pd) link;
	/* MRs, QPs, SRQs and AHs using it; QPs and SRQs are created on their
	 * workers, MRs and AHs on the control thread: atomic. */
	uint32_t refs;
};

/*
 * A key's object: an MR (type 0), or a memory window of type 1 or 2 (IBA
 * 10.6.7). An MR never changes once published. A window's binding (key,
 * iova, length, access and the mw_* fields) changes with each bind and
 * invalidation, done by whichever worker runs the QP that posted it, while
 * every worker may resolve the key: the binding is under a sequence lock
 * (mw_seq odd while a writer changes it; writers take it with a CAS), and
 * readers copy it out (rkey_lookup()). A window names its MR by key, never by
 * pointer, so an MR that goes away leaves the window dead, not dangling.
 */
struct uroce_eng_mr {
	struct uroce_eng_dev *dev;
	struct uroce_eng_pd *pd;
	uint8_t *addr;      /* daemon-side pointer of iova (MR only) */
	uint64_t iova;
	uint64_t length;
	int access;
	uint32_t key;
	uint32_t *zc_ref;   /* in-flight zero-copy packets of this memory; NULL: copy */
	uint8_t type;       /* 0: MR; UROCE_MW_TYPE_1 or _2: a window (fixed) */
	uint32_t mw_binds;  /* MR: windows bound to it (atomic; any worker binds) */
	uint32_t mw_seq;    /* window: sequence lock of the binding */
	uint32_t mw_mr_key; /* window: the bound MR's key; 0: unbound (type 2: FREE) */
	uint32_t mw_qpn;    /* type 2: the QP it was bound through, */
	uint32_t mw_qp_gen; /* and that QP's incarnation (zc_gen) */
};

struct uroce_eng_ah {
	struct uroce_eng_pd *pd;
	TAILQ_ENTRY(uroce_eng_ah) link;
	struct uroce_eng_ah_attr attr;
};

struct uroce_eng_cq {
	struct uroce_eng *eng;
	TAILQ_ENTRY(uroce_eng_cq) link;
	struct uroce_eng_cq_sink sink;
	uint32_t refs;
	bool overflow;
	void *context;
};

/* A receive WQE in its queue slot. */
#define rwqe uroce_wr_recv

/* A receive queue: ring of rwqe, used by a QP's RQ and by an SRQ. */
struct rq {
	struct rwqe *ring;
	uint32_t size;      /* a power of two, or 0: no queue */
	uint32_t mask;
	uint32_t head;
	uint32_t count;
	uint32_t max_sge;
};

struct uroce_eng_srq {
	struct uroce_eng *eng;
	struct uroce_eng_pd *pd;
	TAILQ_ENTRY(uroce_eng_srq) link;
	struct rq rq;
	uint32_t refs;
	void *context;
	/* XRC SRQ (IBA 1.2): its domain (0: a plain SRQ), number and CQ */
	uint32_t xrcd;
	uint32_t srqn;
	struct uroce_eng_cq *cq;
};

/* Send WQE state. */
enum swqe_state {
	SWQE_POSTED = 0,    /* nothing sent yet */
	SWQE_SENT,          /* PSNs assigned, at least one packet sent */
	SWQE_DONE,          /* completed (kept only until the head passes) */
};

/*
 * A send WQE: the request as posted (in place, uroce_eng_sq_reserve(), or
 * copied into its slot: never a pointer into client memory), then
 * the requester's and completer's state of it.
 */
struct swqe {
	struct uroce_eng_send_wqe s;  /* the request as posted */
	uint32_t props;              /* uroce_wr_props() of its opcode */
	uint32_t length;             /* message bytes */
	bool is_inline;              /* payload from wr.inline_data, not SGEs */
	/* requester/completer state */
	enum swqe_state state;
	uint32_t first_psn;
	uint32_t last_psn;
	uint32_t npkts;
	bool rd_counted;             /* holds one of max_rd_atomic */
	uint16_t zc_inflight;        /* zero-copy packets the device may still read */
	uint8_t wc_status;           /* completed, waiting to retire (see sq_retire) */
};

/* Requester (req.c) */
struct req_state {
	uint32_t psn;       /* next PSN to send */
	uint32_t psn_hi;    /* one past the highest PSN ever sent */
	uint32_t cur;       /* SQ index of the WQE being sent */
	uint32_t off;       /* bytes of cur already sent (restart offset) */
	uint32_t rd_outstanding;
	bool rnr_wait;
	bool on_list;
	TAILQ_ENTRY(uroce_eng_qp) link;
};

/* Completer (comp.c) */
struct comp_state {
	uint32_t psn;           /* oldest PSN not yet acknowledged */
	uint8_t retry_left;
	uint8_t rnr_left;
	uint8_t stall_rearms;   /* timeouts put down to host stalls since the last progress */
	uint64_t rto_deadline;  /* 0: not armed */
	uint64_t rnr_deadline;  /* 0: not armed */
	uint32_t rnr_psn;
	/* A NAK (explicit or implied) already rewound to this PSN: further
	 * implied NAKs for it are the stale tail of the same loss and must not
	 * rewind again or spend retries until progress or a timeout. */
	bool nak_rewound;
	uint32_t nak_rewind_psn;
	bool on_timer_list;
	TAILQ_ENTRY(uroce_eng_qp) timer_link;
};

/* Responder READ/ATOMIC resource (IBA 9.7.5.1.2, saved for duplicates);
 * ATOMIC WRITE and FLUSH take one too (IBA 1.5 A19, oA19-14). */
enum res_type { RES_NONE = 0, RES_READ, RES_ATOMIC, RES_ATOMIC_WRITE, RES_FLUSH };

struct rd_res {
	enum res_type type;
	uint32_t first_psn;     /* of the original request */
	uint32_t last_psn;
	uint64_t va;            /* of the original request */
	uint32_t rkey;
	uint32_t len;
	uint64_t orig;          /* ATOMIC: value before the operation */
	uint32_t msn;           /* MSN its responses carry (that of the request) */
	bool queued;            /* response still (partly) to be sent */
	bool replay;            /* queued again for a duplicate request */
	/* cursor of the response being sent (a replay may restart mid-way) */
	uint32_t start_psn;
	uint32_t cur_psn;
	uint64_t cur_va;
	uint32_t resid;
	uint32_t sub_len;       /* length of the (sub-)request being answered */
	struct uroce_eng_pd *pd; /* whose R_Keys a READ is answered from (XRC: the SRQ's) */
};

enum resp_nak_state {
	NAK_NONE = 0,
	NAK_SEQ_SENT,           /* one PSN sequence NAK per gap (IBA 9.7.5.1.3) */
	NAK_RNR_SENT,           /* waiting for the retried PSN */
};

/* Responder (resp.c) */
struct resp_state {
	uint32_t epsn;
	uint32_t msn;
	enum resp_nak_state nak_state;
	uint32_t in_msg;        /* UROCE_F_SEND or UROCE_F_WRITE while a message is open */
	bool uc_drop;           /* UC: dropping until the next FIRST/ONLY */
	/* current SEND */
	bool has_wqe;
	struct uroce_eng_srq *wqe_srq;  /* the SRQ the WQE came from, NULL: own RQ */
	struct rwqe wqe;
	/* XRC TGT: the XRC SRQ the request being processed names (XRCETH) */
	struct uroce_eng_srq *xsrq;
	uint32_t offset;
	/* current WRITE */
	uint32_t w_rkey;
	uint64_t w_va;
	uint32_t w_resid;
	uint32_t w_len;
	/* ACK coalescing */
	bool ack_pending;
	uint32_t ack_psn;
	uint32_t ack_msn;
	bool nak_pending;
	uint8_t nak_syn;
	uint32_t nak_psn;
	uint32_t nak_msn;
	/* READ/ATOMIC resources and the in-order response queue */
	struct rd_res res[UROCE_MAX_DEST_RD_ATOMIC];
	uint8_t fifo[UROCE_MAX_DEST_RD_ATOMIC];
	uint32_t fifo_head;
	uint32_t fifo_count;
	uint32_t res_next;      /* the slot the next new one takes (alloc_res()) */
	uint32_t res_n;         /* max_dest_rd_atomic at the first; 0: none yet */
	bool on_list;
	TAILQ_ENTRY(uroce_eng_qp) link;
};

/*
 * Congestion control (cc.c): ECN marking, the CNP notification point and
 * the DCQCN reaction point. A cc_conf is a parameter set with the values the
 * data path needs precomputed (rates in kb/s), so that no packet costs a
 * division.
 */
struct cc_conf {
	struct uroce_eng_cc_params p;
	uint32_t max_kbps;      /* rpg_max_rate, else line_rate */
	uint32_t min_kbps;      /* rpg_min_rate, at most max_kbps */
	uint32_t first_kbps;    /* rate_to_set_on_first_cnp, else max_kbps */
	uint32_t ai_kbps;
	uint32_t hai_kbps;
};

/* Per-QP congestion state. Everything before conf is reset with the QP. */
struct cc_state {
	/* reaction point (DCQCN) */
	bool limited;           /* rate limiter on: from the first CNP until rc is back at max */
	bool reduce_pending;    /* a CNP came inside the monitor period: cut at reduce_at */
	bool inc_timer;         /* a timer increase happened since the last cut */
	bool inc_byte;          /* a byte counter increase happened since the last cut */
	bool alpha_cnp;         /* a CNP came in the current alpha period */
	bool paced;             /* the requester waits for pace_us on the timer list */
	uint32_t rc_kbps;       /* current rate */
	uint32_t rt_kbps;       /* target rate */
	uint32_t alpha;         /* 1/1024 */
	uint32_t t_stage;       /* timer increase events since the last cut */
	uint32_t b_stage;       /* byte counter increase events since the last cut */
	uint32_t bytes;         /* sent toward the next byte counter event */
	uint32_t overhead;      /* frame bytes around the IB part (Ethernet, IP, UDP) */
	uint64_t alpha_ts;      /* start of the current alpha period */
	uint64_t reduce_at;     /* no cut before this */
	uint64_t inc_at;        /* next timer increase */
	/* pacing: the next packet may leave at pace_us + pace_frac / 2^CC_PACE_SHIFT */
	uint64_t pace_us;
	uint64_t pace_frac;
	uint64_t cost;          /* µs << CC_PACE_SHIFT per byte at rc_kbps */
	uint64_t deadline;      /* earliest armed time above; 0: none (engine timer list) */
	/* notification point */
	bool cnp_sent;
	uint64_t last_cnp_us;
	/* parameters: kept across a reset */
	const struct cc_conf *conf; /* NULL: the engine's */
	struct cc_conf own;
};

struct uroce_eng_qp {
	struct uroce_eng *eng;
	struct uroce_eng_pd *pd;
	struct uroce_eng_qp_init_attr init;
	struct uroce_eng_qp_attr attr;   /* current attributes, attr.qp_state is the state */
	uint32_t qpn;
	uint32_t mtu;                /* path MTU in bytes */
	bool sqd_notify;             /* raise SQ_DRAINED once SQD has drained */
	/* send queue */
	struct swqe *sq;
	uint8_t *sq_inline;
	uint32_t sq_size;            /* a power of two */
	uint32_t sq_mask;
	uint32_t sq_retire;          /* oldest whose completion is not delivered */
	uint32_t sq_head;            /* oldest not completed */
	uint32_t sq_tail;            /* next to post */
	uint32_t zc_gen;             /* incarnation, for zero-copy releases */
	/* own receive queue (when no SRQ) */
	struct rq rq;
	struct req_state req;
	struct comp_state comp;
	struct resp_state resp;
	struct cc_state cc;
	uint64_t cnt[UROCE_CNT_MAX];
	/* Requests the responder refused, a ring by rej_count (the newest at
	 * (rej_count - 1) % UROCE_RESP_REJECTS); kept across a reset. */
	uint64_t rej_count;
	struct uroce_eng_resp_reject rej[UROCE_RESP_REJECTS];
	/* The requester's last events off the good path (comp.c), a ring. */
	uint32_t req_ev_count;
	struct uroce_eng_req_event req_ev[UROCE_REQ_EVENTS];
};

TAILQ_HEAD(qp_list, uroce_eng_qp);

struct uroce_eng {
	struct uroce_eng_ops ops;
	void *ctx;
	struct uroce_eng_dev *dev;
	bool own_dev;                /* dev created for this engine alone */
	uint8_t gid[16];
	uint8_t port;
	uint32_t budget;
	uint32_t ud_mtu;
	uint32_t qpn_base;           /* this engine's QPNs: qpn_base | index */
	uint32_t zc_min;             /* payload bytes from which packets go zero-copy */
	uint32_t zc_gen;             /* the next QP incarnation */
	struct uroce_eng_qp *qps[UROCE_MAX_QP]; /* by QPN index */
	uint32_t qpn_next;
	struct qp_list req_list;     /* requesters with work */
	struct qp_list resp_list;    /* responders with responses or ACKs to send */
	struct qp_list timer_list;   /* QPs with an armed timer */
	uint64_t next_deadline;      /* earliest deadline on timer_list (lower bound) */
	uint64_t cnt[UROCE_CNT_MAX]; /* engine-level events (no QP) */
	uint64_t icrc_late_bad;      /* late ICRC failures, QPs' and the engine's: uroce_eng_rx()'s answer */
	struct cc_conf cc;           /* the port's congestion control parameters */
	/* every CQ and SRQ, so uroce_eng_destroy() frees them */
	TAILQ_HEAD(, uroce_eng_cq) cqs;
	TAILQ_HEAD(, uroce_eng_srq) srqs;
	/* XRC SRQs by number index (IBA 1.2 XRC; numbers as QPNs: qpn_base | i) */
	struct uroce_eng_srq *xsrqs[UROCE_MAX_XRC_SRQ];
	uint32_t xsrq_next;
};

_Static_assert(UROCE_MAX_QP <= (1u << UROCE_QPN_LOCAL_BITS), "QP index fits below the engine bits");
_Static_assert(UROCE_MAX_XRC_SRQ <= (1u << UROCE_QPN_LOCAL_BITS), "SRQ index fits too");

/* The QPN bits that index a QP within its engine. */
#define UROCE_QPN_INDEX_MASK ((1u << UROCE_QPN_LOCAL_BITS) - 1)

/* The QP of @p qpn on @p eng, or NULL (another engine's QPN, or none). */
static inline struct uroce_eng_qp *
eng_qp_of(const struct uroce_eng *eng, uint32_t qpn)
{
	uint32_t idx = qpn & UROCE_QPN_INDEX_MASK;

	if (unlikely((qpn & ~UROCE_QPN_INDEX_MASK) != eng->qpn_base || idx >= UROCE_MAX_QP))
		return NULL;
	return eng->qps[idx];
}

/* The XRC SRQ numbered @p srqn on @p eng, or NULL (another engine's, none). */
static inline struct uroce_eng_srq *
eng_xsrq_of(const struct uroce_eng *eng, uint32_t srqn)
{
	uint32_t idx = srqn & UROCE_QPN_INDEX_MASK;

	if (unlikely((srqn & ~UROCE_QPN_INDEX_MASK) != eng->qpn_base || idx == 0 ||
		     idx >= UROCE_MAX_XRC_SRQ))
		return NULL;
	return eng->xsrqs[idx];
}

/* Reliable services: RC, and XRC's initiator and target (IBA 1.2 XRC is RC
 * with a shared receive side). */
static inline bool
qpt_reliable(enum uroce_qp_type t)
{
	return t == UROCE_QPT_RC || t == UROCE_QPT_XRC_SEND || t == UROCE_QPT_XRC_RECV;
}

/* Per-QP counter bump. Engine totals are the sum (uroce_eng_counter). */
#define QP_CNT(qp, c) ((qp)->cnt[UROCE_CNT_##c]++)
#define ENG_CNT(eng, c) ((eng)->cnt[UROCE_CNT_##c]++)

/*
 * The end of a late ICRC check (uroce_pkt's icrc_late, uroce_parse_split()):
 * @p crc is the CRC its payload was copied with, or NULL to check the payload
 * where it lies. A wrong ICRC is counted, and the caller drops the packet
 * having changed nothing: at most the copied bytes, which went where the
 * QP's own state put them, inside a message not yet complete (for UD, the
 * receive WQE the QP keeps for its next SEND).
 */
static inline bool
icrc_late_ok(struct uroce_eng *eng, struct uroce_eng_qp *qp, const struct uroce_pkt *pkt,
	     const uint32_t *crc)
{
	if (crc != NULL ? uroce_pkt_icrc_end(pkt, *crc) : uroce_pkt_icrc_late(pkt))
		return true;
	/* On its QP, or the engine's when none took it; and for uroce_eng_rx(). */
	(qp != NULL ? qp->cnt : eng->cnt)[UROCE_CNT_RX_ICRC_LATE]++;
	eng->icrc_late_bad++;
	return false;
}

static inline bool
qp_icrc_late_ok(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt, const uint32_t *crc)
{
	return icrc_late_ok(qp->eng, qp, pkt, crc);
}

/* A late ICRC still due (*@p late, cleared here) checked where the payload
 * lies, so that no later step checks it again. @return false if it was
 * wrong (counted: drop the packet). */
static inline bool
qp_icrc_late_once(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt, bool *late)
{
	if (likely(!*late))
		return true;
	*late = false;
	return qp_icrc_late_ok(qp, pkt, NULL);
}

static inline uint64_t
eng_now(const struct uroce_eng *eng)
{
	return eng->ops.now_us(eng->ctx);
}

/* engine.c */
uint8_t *eng_tx_prepare(struct uroce_eng_qp *qp, const struct uroce_bth_fields *bth,
			const struct uroce_ext_fields *ext, uint32_t paylen, uint32_t *hdr_len);
void eng_tx_send(struct uroce_eng_qp *qp, uint8_t *buf, const struct uroce_bth_fields *bth,
		 uint32_t hdr_len, uint32_t paylen, const struct uroce_eng_ah_attr *ah);
/* Zero-copy: may @p paylen bytes of @p mr go that way? */
bool eng_zc_ok(const struct uroce_eng_qp *qp, const struct uroce_eng_mr *mr, uint32_t paylen);
/* Send @p payload in place (the packet of @p w, or of no WQE: a READ
 * response); false if the shell declined (buf is still ours). */
bool eng_tx_send_zc(struct uroce_eng_qp *qp, uint8_t *buf, const struct uroce_bth_fields *bth,
		    uint32_t hdr_len, const uint8_t *payload, uint32_t paylen,
		    const struct uroce_eng_ah_attr *ah, struct uroce_eng_mr *mr, struct swqe *w);
void eng_req_kick(struct uroce_eng_qp *qp);
void eng_resp_kick(struct uroce_eng_qp *qp);
void eng_timer_update(struct uroce_eng_qp *qp);
void eng_async(struct uroce_eng *eng, enum uroce_event_type t, void *obj);
void eng_unlink_qp(struct uroce_eng_qp *qp);

/* mr.c */
/* The object published at @p key's index, whatever its variant (see
 * uroce_eng_dev), or NULL. */
static inline struct uroce_eng_mr *
key_obj(struct uroce_eng_dev *dev, uint32_t key)
{
	uint32_t idx = KEY_INDEX(key);

	if (unlikely(idx == 0 || idx >= UROCE_MAX_MR))
		return NULL;
	return __atomic_load_n(&dev->mrs[idx], __ATOMIC_ACQUIRE);
}

/* The MR of @p key, or NULL (none, another variant, or a window: a
 * window's key is no L_Key, and rkey_lookup() resolves it as an R_Key). */
static inline struct uroce_eng_mr *
mr_lookup(struct uroce_eng *eng, uint32_t key)
{
	struct uroce_eng_mr *mr = key_obj(eng->dev, key);

	if (unlikely(mr == NULL || mr->type != 0 || mr->key != key))
		return NULL;
	return mr;
}
/* The memory an R_Key names for @p qp (an MR, or a bound window copied into
 * @p snap), or NULL; rights and bounds are the caller's to check. */
struct uroce_eng_mr *rkey_lookup(struct uroce_eng_qp *qp, uint32_t rkey,
				 struct uroce_eng_mr *snap);
/* Execute a BIND_MW or LOCAL_INV work request of @p qp (IBA 10.6.7). */
enum uroce_wc_status mw_local_op(struct uroce_eng_qp *qp, const struct uroce_wr_send *wr);
/* Return the bound type 2 window of @p qp's PD named by exactly @p rkey to
 * FREE (IBA 10.6.7.2.1 local, 10.6.7.2.2 remote); @p check_only: only say
 * whether it would. */
bool mw_invalidate(struct uroce_eng_qp *qp, uint32_t rkey, bool check_only);
bool mr_range_ok(const struct uroce_eng_mr *mr, uint64_t va, uint64_t len);
/* Ask the cache for the first @p len bytes a receive into @p sge will write:
 * a hint only, and none outside the SGE's MR. */
void sge_prefetch_dst(struct uroce_eng *eng, const struct uroce_wr_sge *sge, uint32_t len);
/* Copy between an SGE list and a flat buffer, starting at byte @off of the list. */
int sge_copy(struct uroce_eng *eng, struct uroce_eng_pd *pd, const struct uroce_wr_sge *sge,
	     uint32_t num_sge, uint32_t off, void *buf, uint32_t len, bool to_sge);
/* Copy @p pkt's payload into an SGE list of @p qp, from byte @p off of the
 * list; a late ICRC (*@p late, then cleared) is checked in the copy, or in
 * place if the copy stops short. @return 0, -EBADMSG if the ICRC was wrong
 * (counted: drop the packet), or sge_copy()'s error with the ICRC good. */
int sge_place(struct uroce_eng_qp *qp, struct uroce_eng_pd *pd, const struct uroce_wr_sge *sge,
	      uint32_t num_sge, uint32_t off, const struct uroce_pkt *pkt, bool *late);
/* The MR and the address of bytes [off, off + len) of an SGE list if they lie
 * in one SGE (for reading), else NULL. */
const uint8_t *sge_span(struct uroce_eng *eng, struct uroce_eng_pd *pd,
			const struct uroce_wr_sge *sge, uint32_t num_sge, uint32_t off, uint32_t len,
			struct uroce_eng_mr **mrp);
bool sge_list_ok(struct uroce_eng *eng, struct uroce_eng_pd *pd, const struct uroce_wr_sge *sge,
		 uint32_t num_sge, int access);

/* cq.c */
void cq_push(struct uroce_eng_cq *cq, const struct uroce_eng_wc *wc);

/* srq.c (receive queues) */
int rq_init(struct rq *rq, uint32_t size, uint32_t max_sge);
void rq_fini(struct rq *rq);
struct rwqe *rq_reserve(struct rq *rq);
int rq_commit(struct rq *rq);
struct rwqe *rq_peek(struct rq *rq);
void rq_pop(struct rq *rq);
/* The smallest power of two >= @p v (1 for 0). */
uint32_t pow2_ceil(uint32_t v);

/* qp.c */
/* The QP enters ERR on its own. @p event is the affiliated event to raise
 * (IBA 11.6.3), or QP_ERR_REPORTED when a completion already reports it. */
#define QP_ERR_REPORTED (-1)
void qp_to_err(struct uroce_eng_qp *qp, int event);
void qp_flush(struct uroce_eng_qp *qp);
struct uroce_eng_cq *resp_wqe_cq(const struct uroce_eng_qp *qp);
void sq_flush(struct uroce_eng_qp *qp);
void qp_check_drained(struct uroce_eng_qp *qp);
static inline bool
qp_can_send(const struct uroce_eng_qp *qp)
{
	return qp->attr.qp_state == UROCE_QPS_RTS || qp->attr.qp_state == UROCE_QPS_SQD;
}

/* req.c */
unsigned int req_run(struct uroce_eng_qp *qp, unsigned int budget, bool *more);
void req_rewind(struct uroce_eng_qp *qp, uint32_t psn);
void req_complete_wqe(struct uroce_eng_qp *qp, struct swqe *w, enum uroce_wc_status st);
void sq_retire(struct uroce_eng_qp *qp);
static inline struct swqe *
sq_at(const struct uroce_eng_qp *qp, uint32_t idx)
{
	return &qp->sq[idx & qp->sq_mask];
}

/* comp.c */
void comp_rx(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt);
unsigned int comp_timers(struct uroce_eng_qp *qp, uint64_t now);
uint64_t comp_rto_us(const struct uroce_eng_qp *qp);

/* cc.c: congestion control (doc/congestion.md) */
void cc_eng_init(struct uroce_eng *eng);
void cc_reset(struct uroce_eng_qp *qp);
void cc_rp_cnp(struct uroce_eng *eng, const struct uroce_pkt *pkt,
	       const struct uroce_frame *frame);
void cc_np_ce(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt,
	      const struct uroce_frame *frame);
bool cc_pace_ok(struct uroce_eng_qp *qp);
bool cc_ackreq(const struct uroce_eng_qp *qp, uint32_t paylen);
void cc_tx_done(struct uroce_eng_qp *qp, uint32_t ib_len);
void cc_tx_mark(const struct uroce_eng_qp *qp, uint8_t opcode, struct uroce_eng_tx_addr *a);
unsigned int cc_timers(struct uroce_eng_qp *qp, uint64_t now);

/* RFC 3168: ECN bits 11, Congestion Experienced. */
static inline bool
cc_frame_ce(const struct uroce_frame *frame)
{
	return frame != NULL && (frame->tclass & 3) == 3;
}

/* resp.c */
/* Record a refused request (@p pkt NULL: a READ response could not be sent,
 * at @p psn) and tell the shell. */
void resp_reject(struct uroce_eng_qp *qp, enum uroce_resp_check chk, const struct uroce_pkt *pkt,
		 uint32_t psn, uint8_t nak);
void resp_rx(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt, const struct uroce_frame *frame);
unsigned int resp_run(struct uroce_eng_qp *qp, unsigned int budget, bool *more);
void resp_reset(struct uroce_eng_qp *qp);

#endif /* TRANSPORT_INTERNAL_H */
