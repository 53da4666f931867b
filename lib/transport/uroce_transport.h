/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The InfiniBand transport engine: PD, MR, CQ, SRQ, QP (RC, UC, UD) and AH,
 * the QP state machine, and the requester, responder and completer that run
 * RC/UC/UD over RoCEv2. One engine owns every object of one worker (one
 * lcore); it takes no locks. It is driven from outside:
 *
 *  - uroce_eng_rx() for every received packet that lib/wire has already
 *    validated (lengths, opcode, ICRC). The engine checks everything
 *    transport-level: QPN, QP state, PSN, opcode sequence, keys, bounds and
 *    access rights.
 *  - uroce_eng_poll() to run requesters that have work, responses that
 *    are queued, coalesced ACKs and expired timers, with bounded work.
 *
 * It transmits through an ops table (tx_alloc / tx_send: the engine writes
 * BTH through payload, leaves the 4-byte ICRC for the shell) and reads time
 * from an ops callback in microseconds. Nothing here includes DPDK, so two
 * engines can talk over a simulated wire inside one test process.
 *
 * Enum values, names and semantics follow libibverbs (ibv_wc_status,
 * ibv_wr_opcode, ibv_qp_attr_mask, ...) so that the verbs shim is a cast.
 * Functions return 0 or -errno; constructors return NULL and set errno.
 */

#ifndef UROCE_TRANSPORT_H
#define UROCE_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uroce_verbs_defs.h"
#include "uroce_wire.h"
#include "uroce_wr.h"

#ifdef __cplusplus
extern "C" {
#endif

struct uroce_eng;
struct uroce_eng_dev;
struct uroce_eng_pd;
struct uroce_eng_mr;
struct uroce_eng_cq;
struct uroce_eng_srq;
struct uroce_eng_qp;
struct uroce_eng_ah;

/* ------------------------------------------------------------------------ */
/* Verbs-like enums (values equal to libibverbs)                             */
/* ------------------------------------------------------------------------ */











/** Asynchronous events (subset of ibv_event_type). */
enum uroce_event_type {
	UROCE_EVENT_CQ_ERR = 0,        /**< obj is the CQ: it overflowed */
	/** obj is the QP: it went to ERR on its own, and no completion says why */
	UROCE_EVENT_QP_FATAL = 1,
	/** obj is the QP: its responder got an invalid request and had no receive
	 * WQE to report it on (IBA 11.6.3, Invalid Request Local WQ Error) */
	UROCE_EVENT_QP_REQ_ERR = 2,
	/** obj is the QP: its responder refused a remote access and had no receive
	 * WQE to report it on (IBA 11.6.3, Local Access Violation WQ Error) */
	UROCE_EVENT_QP_ACCESS_ERR = 3,
	UROCE_EVENT_SQ_DRAINED = 5,    /**< obj is the QP: SQD reached with nothing in flight */
	/** obj is a QP with an SRQ: it entered ERR, so it takes no more WQEs
	 * from the SRQ (IBA 11.6.3, Last WQE Reached) */
	UROCE_EVENT_QP_LAST_WQE_REACHED = 16,
};

/** Bytes of GRH space in front of every UD receive buffer (IBA 11.4.1.2). */
#define UROCE_GRH_LEN 40

/** Q_Key values with this bit set in a UD WR mean "use the QP's Q_Key" (IBA 10.2.5). */
#define UROCE_QKEY_PRIVILEGED 0x80000000u

/* ------------------------------------------------------------------------ */
/* Counters                                                                  */
/* ------------------------------------------------------------------------ */

/** Counter identifiers, from counters.def. */
enum uroce_counter {
#define UROCE_CNT(sym, name, desc) UROCE_CNT_##sym,
#include "counters.def"
#undef UROCE_CNT
	UROCE_CNT_MAX
};

/** Stable name of counter @p c ("out_of_sequence", ...), or NULL if out of range. */
const char *uroce_eng_counter_name(enum uroce_counter c);

/** One-line description of counter @p c, or NULL if out of range. */
const char *uroce_eng_counter_desc(enum uroce_counter c);

/* ------------------------------------------------------------------------ */
/* Engine                                                                    */
/* ------------------------------------------------------------------------ */

/**
 * Where a packet goes: everything the shell needs to put Ethernet/IP/UDP in
 * front of the InfiniBand part. GIDs are 16 bytes (IPv4 as ::ffff:a.b.c.d).
 */
struct uroce_eng_tx_addr {
	uint8_t sgid[16];
	uint8_t dgid[16];
	uint8_t tclass;       /**< DSCP << 2 | ECN */
	uint8_t hop_limit;    /**< 0 means the shell's default (64) */
	uint32_t flow_label;
	uint16_t sport;       /**< UDP source port, uroce_udp_sport() */
	uint8_t port;         /**< port number of the AH/QP (1-based, as verbs) */
	uint32_t src_qpn;     /**< QP that sent it (for the shell's statistics) */
	/**
	 * The engine chose the whole traffic class (a CNP: cnp_dscp and its ECN
	 * bits): the shell must not fill in its default DSCP. Otherwise a DSCP
	 * of 0 means the port's (doc/congestion.md, "Marking").
	 */
	bool tclass_final;
	bool has_pcp;         /**< pcp replaces the port's 802.1p priority (CNPs) */
	uint8_t pcp;          /**< 802.1p priority 0..7 when has_pcp */
};

/**
 * Fill the IP and UDP fields of @p e from @p a: family (from the destination
 * GID), source and destination GIDs, traffic class, hop limit, flow label and
 * UDP source port. The rest of @p e is zeroed: MACs, VLAN and IP id are the
 * port's to set before uroce_frame_wrap().
 */
void uroce_eng_tx_encap(const struct uroce_eng_tx_addr *a, struct uroce_encap *e);

/**
 * A zero-copy packet's references (uroce_eng_ops.tx_send_zc): the memory its
 * payload lies in, and the send WQE that must not complete before the
 * device is done reading it. The shell keeps a copy until then.
 */
struct uroce_eng_zc {
	uint32_t *mem_ref;   /**< the memory's in-flight count (uroce_eng_mr_set_zc_ref()) */
	uint32_t qpn;
	uint32_t gen;        /**< the QP's incarnation (a reset or a new QP ends it) */
	uint32_t wqe;        /**< send queue index; UROCE_ENG_ZC_NO_WQE for a READ response */
};

#define UROCE_ENG_ZC_NO_WQE UINT32_MAX

/** How the engine reaches the outside world. Called on the engine's thread only. */
/** One saved READ/ATOMIC resource of a responder, as a rejection saw it. */
struct uroce_eng_resp_res {
	uint8_t type;        /**< 0 free, 1 READ, 2 ATOMIC, 3 ATOMIC WRITE, 4 FLUSH */
	uint8_t queued;      /**< its response (or replay) waits to be sent */
	uint8_t replay;      /**< queued again for a duplicate */
	uint8_t reserved;
	uint32_t first_psn;  /**< PSNs of the original request */
	uint32_t last_psn;
	uint32_t rkey;
	uint64_t va;
	uint32_t len;
	uint32_t msn;        /**< the MSN its responses carry */
	uint32_t cur_psn;    /**< the next response packet's PSN */
	uint32_t resid;      /**< bytes of the (sub-)range still to send */
};

/**
 * A request the responder refused, with what it knew at that moment: what
 * a ConnectX user reads as the QP's last error. Kept per QP (the last
 * UROCE_RESP_REJECTS, uroce_eng_qp_resp_rejects()) and passed to the
 * shell's resp_reject op as it happens.
 */
struct uroce_eng_resp_reject {
	uint64_t time_us;    /**< engine clock */
	uint64_t seq;        /**< 1 for the QP's first rejection since it was created */
	uint32_t qpn;
	uint8_t check;       /**< enum uroce_resp_check */
	uint8_t opcode;      /**< the request's BTH opcode */
	uint8_t nak;         /**< NAK code sent (enum uroce_nak_code) or UROCE_RESP_REJECT_DROPPED */
	uint8_t in_msg;      /**< message in progress: 0, 1 SEND, 2 WRITE */
	uint32_t psn;        /**< the request's PSN (a READ response's, for READ_MR) */
	uint32_t epsn;       /**< the responder's expected PSN */
	uint32_t msn;
	uint32_t rkey;       /**< from the RETH or AtomicETH (0 without) */
	uint64_t va;
	uint32_t len;        /**< DMA length; 8 for an atomic */
	uint32_t w_rkey;     /**< the WRITE in progress (in_msg 2) */
	uint64_t w_va;
	uint32_t w_resid;
	uint32_t n_res;      /**< entries in res[]: max_dest_rd_atomic */
	struct uroce_eng_resp_res res[UROCE_MAX_DEST_RD_ATOMIC];
};

/** Rejections a QP keeps. */
#define UROCE_RESP_REJECTS 4u

/** What a requester met off the good path (uroce_eng_req_event.kind). */
enum uroce_req_event_kind {
	UROCE_REQ_EV_TIMEOUT = 1,   /**< local ACK timeout: go-back-N from comp_psn */
	UROCE_REQ_EV_NAK_SEQ,       /**< PSN sequence error NAK at psn: resend from it */
	UROCE_REQ_EV_IMPLIED_NAK,   /**< a later response skipped a READ/ATOMIC: resend */
	UROCE_REQ_EV_RETRY_SKIPPED, /**< the same resend is under way: no new rewind */
	UROCE_REQ_EV_RNR,           /**< RNR NAK at psn: wait, then resend */
	UROCE_REQ_EV_NAK,           /**< an error NAK */
};

/** One requester event (newest last in uroce_eng_req_error.ev). */
struct uroce_eng_req_event {
	uint64_t time_us;
	uint8_t kind;        /**< enum uroce_req_event_kind */
	uint8_t retry_left;  /**< retries left when it came */
	uint16_t reserved;
	uint32_t psn;        /**< the response's PSN (TIMEOUT: comp_psn) */
	uint32_t comp_psn;   /**< oldest unacknowledged PSN, after it */
	uint32_t req_psn;    /**< next PSN to send, after it */
};

/** Requester events a QP keeps for its error record. */
#define UROCE_REQ_EVENTS 8u

/**
 * A requester that completed its oldest WQE in error and put the QP in ERR
 * (retries or RNR retries exhausted, an error NAK): the WQE, the PSNs, and
 * its last events, for the shell's req_error op.
 */
struct uroce_eng_req_error {
	uint64_t time_us;
	uint32_t qpn;
	uint32_t status;     /**< enum uroce_wc_status of the WQE */
	uint32_t opcode;     /**< the WQE's enum uroce_wr_opcode */
	uint32_t length;
	uint32_t first_psn;  /**< the WQE's PSNs */
	uint32_t last_psn;
	uint32_t comp_psn;
	uint32_t req_psn;
	uint32_t psn_hi;     /**< one past the highest PSN sent */
	uint32_t outstanding; /**< WQEs posted and not completed */
	uint32_t rd_outstanding;
	uint8_t retry_cnt;
	uint8_t timeout;     /**< local ACK timeout exponent */
	uint8_t n_ev;        /**< entries in ev[], oldest first */
	uint8_t reserved;
	struct uroce_eng_req_event ev[UROCE_REQ_EVENTS];
};

struct uroce_eng_ops {
	/** Current time in microseconds, monotonic. Required. */
	uint64_t (*now_us)(void *ctx);
	/**
	 * A buffer for @p ib_len bytes (BTH through ICRC), or NULL if none is
	 * available now (the engine counts tx_alloc_fail and retries later or
	 * relies on retransmission). Required.
	 */
	uint8_t *(*tx_alloc)(void *ctx, uint32_t ib_len);
	/**
	 * Send a buffer from tx_alloc. The engine wrote BTH through payload and
	 * pad; the last 4 bytes are for the ICRC, which the shell computes after
	 * adding the encapsulation. Ownership passes to the shell. Required.
	 */
	void (*tx_send)(void *ctx, uint8_t *buf, uint32_t ib_len,
			const struct uroce_eng_tx_addr *addr);
	/** Give back a buffer from tx_alloc that will not be sent. Required. */
	void (*tx_free)(void *ctx, uint8_t *buf);
	/** Asynchronous event (CQ overflow, QP fatal, SQ drained). Optional. */
	void (*async_event)(void *ctx, enum uroce_event_type type, void *obj);
	/**
	 * The receive queue of @p qp (its own, or its SRQ) is empty and a
	 * message needs a WQE: post what the caller holds for it now, with
	 * uroce_eng_rq_reserve() / uroce_eng_srq_reserve(), before the engine
	 * answers RNR (RC) or drops (UC, UD). A shell that takes receive WQEs
	 * from elsewhere (shared memory) makes a posted receive visible at once
	 * this way. Optional; must not re-enter the engine otherwise.
	 */
	void (*rq_refill)(void *ctx, struct uroce_eng_qp *qp);
	/**
	 * Zero-copy send (optional; used for payloads of at least
	 * uroce_eng_conf.zc_min bytes). @p buf is from tx_alloc(@p ib_len) and
	 * holds the headers (@p hdr_len bytes, BTH through the last extension
	 * header); the payload stays at @p payload (@p paylen bytes, in memory
	 * whose in-flight count @p zc names); the shell appends pad and ICRC.
	 * Return false to decline: nothing was sent, @p buf is still the
	 * engine's (which then copies the payload and calls tx_send). Once the
	 * device no longer reads the payload, the shell calls
	 * uroce_eng_zc_mem_release() (at once, on any thread) and then, on the
	 * engine's thread and outside any engine call,
	 * uroce_eng_zc_release(). The payload is read again for a resend.
	 */
	bool (*tx_send_zc)(void *ctx, uint8_t *buf, uint32_t hdr_len, const uint8_t *payload,
			   uint32_t paylen, uint32_t ib_len, const struct uroce_eng_tx_addr *addr,
			   const struct uroce_eng_zc *zc);
	/**
	 * The responder of @p qp refused a request (an error NAK, or a
	 * duplicate it could not answer): @p r says what and why. Only on
	 * that path, never for a good packet. Optional; must not re-enter
	 * the engine.
	 */
	void (*resp_reject)(void *ctx, struct uroce_eng_qp *qp,
			    const struct uroce_eng_resp_reject *r);
	/**
	 * The requester of @p qp failed its oldest WQE and the QP went to ERR
	 * (uroce_eng_req_error). Optional; must not re-enter the engine.
	 */
	void (*req_error)(void *ctx, struct uroce_eng_qp *qp, const struct uroce_eng_req_error *e);
};

/** Engine configuration for uroce_eng_create(). */
struct uroce_eng_conf {
	const struct uroce_eng_ops *ops;
	void *ctx;                 /**< passed to every op */
	uint8_t gid[16];           /**< source GID (index 0) of this engine's port */
	uint8_t port;              /**< port number reported in tx_addr; 0 means 1 */
	uint32_t poll_budget;      /**< packets one uroce_eng_poll() may send; 0: 256 */
	uint32_t ud_mtu;           /**< largest UD payload; 0 means 4096 */
	/**
	 * The device this engine's PDs, MRs and AHs live on, shared with the
	 * other engines (workers) of one daemon; NULL gives the engine a
	 * private one. See uroce_eng_dev_create().
	 */
	struct uroce_eng_dev *dev;
	/**
	 * QPNs of this engine are qpn_base | n, n < UROCE_MAX_QP: the bits
	 * above UROCE_QPN_LOCAL_BITS tell which engine (worker) owns a QP.
	 * Must have no bit below UROCE_QPN_LOCAL_BITS. 0 for one engine.
	 */
	uint32_t qpn_base;
	/**
	 * Payload bytes from which a packet goes zero-copy through
	 * ops.tx_send_zc (from an MR with an in-flight count); 0: never.
	 */
	uint32_t zc_min;
};

/** QPN bits that number a QP within its engine; the bits above name the engine. */
#define UROCE_QPN_LOCAL_BITS 16

/**
 * Create a device: the PDs, MRs and AHs that several engines share. Its MR
 * table is read by every engine (worker) without a lock; registration,
 * deregistration and the other object calls of a device must all come from
 * one thread (the daemon's control thread), and whoever frees an MR or AH
 * must first make sure no engine still uses it (a quiescent point of every
 * worker: the engine never keeps an MR or AH pointer across polls).
 *
 * @return the device, or NULL with errno ENOMEM.
 */
struct uroce_eng_dev *uroce_eng_dev_create(void);

/**
 * Destroy a device and every PD, MR and AH still on it. Every engine on it
 * must be destroyed first. NULL is a no-op.
 */
void uroce_eng_dev_destroy(struct uroce_eng_dev *dev);

/**
 * Create an engine. Its objects live until uroce_eng_destroy().
 *
 * @return the engine, or NULL with errno EINVAL (missing op or bad value)
 *   or ENOMEM.
 */
struct uroce_eng *uroce_eng_create(const struct uroce_eng_conf *conf);

/** Destroy an engine and every object it still owns. NULL is a no-op. */
void uroce_eng_destroy(struct uroce_eng *eng);

/**
 * Give the engine one received packet. @p pkt was produced by uroce_parse()
 * (or uroce_pkt_parse() plus an ICRC check); @p frame carries the addresses
 * (required: the source GID of an RC/UC packet must be its QP's peer, and
 * UD needs it for the GRH); a call without one is ignored. The engine never
 * keeps a pointer into the packet after returning.
 * Transport-level problems are counted.
 * @return 0, or -EBADMSG if the packet's ICRC, left to the engine's copy by
 * the parse (uroce_pkt's icrc_late), was wrong: it was dropped having changed
 * nothing and counted in rx_icrc_late_errors, and the caller may count it
 * as its own ICRC error (a port's rx_icrc_errors).
 */
int uroce_eng_rx(struct uroce_eng *eng, const struct uroce_pkt *pkt,
		 const struct uroce_frame *frame);

/**
 * Run pending work: expired timers, queued READ/atomic responses, coalesced
 * ACKs, and requesters with work. Responses and requests stop at the
 * configured budget of packets; a responder may add its one ACK/NAK.
 *
 * @return packets sent plus timers handled (0 when idle).
 */
unsigned int uroce_eng_poll(struct uroce_eng *eng);

/**
 * Earliest armed timer deadline in µs, or UINT64_MAX if none. A simulated
 * clock may jump straight to it when the engine is otherwise idle.
 */
uint64_t uroce_eng_next_deadline(const struct uroce_eng *eng);

/** True if uroce_eng_poll() has something to do right now (ignoring timers). */
bool uroce_eng_busy(const struct uroce_eng *eng);

/** Engine-wide counter value (sum over all QPs plus engine-level events). */
uint64_t uroce_eng_counter(const struct uroce_eng *eng, enum uroce_counter c);

/**
 * Every engine-wide counter at once, in one pass over the QPs (what a
 * statistics snapshot wants: UROCE_CNT_MAX calls of uroce_eng_counter() would
 * walk the QP table as many times).
 * @param out  UROCE_CNT_MAX values, indexed by enum uroce_counter
 */
void uroce_eng_counters(const struct uroce_eng *eng, uint64_t out[UROCE_CNT_MAX]);

/* ------------------------------------------------------------------------ */
/* PD, MR, AH                                                                */
/* ------------------------------------------------------------------------ */

/**
 * Allocate a protection domain on @p eng's device: QPs of every engine of
 * that device may use it (an SRQ created with no engine named goes to
 * @p eng). @return the PD, or NULL with errno ENOMEM/EINVAL.
 */
struct uroce_eng_pd *uroce_eng_pd_alloc(struct uroce_eng *eng);

/**
 * Free a protection domain.
 * @return 0, -EBUSY if MRs, QPs, SRQs or AHs still use it, -EINVAL if NULL.
 */
int uroce_eng_pd_dealloc(struct uroce_eng_pd *pd);

/**
 * Register a memory region: a window [@p iova, @p iova + @p length) that the
 * engine reaches through @p addr (a pointer valid in this process). Keys are
 * index << 8 | variant; the variant byte changes on every registration that
 * reuses an index. lkey and rkey are equal.
 *
 * @param access  UROCE_ACCESS_* flags. REMOTE_WRITE and REMOTE_ATOMIC
 *   require LOCAL_WRITE (IBA 10.6.3.1, as verbs).
 * @return the MR, or NULL with errno EINVAL (bad flags, NULL addr with a
 *   length, iova + length wraps, REMOTE_ATOMIC where @p addr and @p iova
 *   differ modulo 8: an 8-aligned atomic VA would name a misaligned word),
 *   ENOMEM (out of MR slots or memory).
 */
struct uroce_eng_mr *uroce_eng_mr_reg(struct uroce_eng_pd *pd, void *addr, uint64_t iova,
				      uint64_t length, int access);

/**
 * Re-register @p old (ibv_rereg_mr): an MR with @p old's key and the given
 * PD, translation and access replaces it in the key table with one store, so
 * an engine finds either the old MR or the new, never a mix. @p old keeps
 * serving pointers found before; once every engine has passed a quiescent
 * point, free it with uroce_eng_mr_dereg() (which then leaves the key, no
 * longer its own, in place).
 * @return the new MR, or NULL with errno EINVAL (arguments as for
 *   uroce_eng_mr_reg(), a PD of another device, @p old revoked or replaced),
 *   ENOMEM.
 */
struct uroce_eng_mr *uroce_eng_mr_rereg(struct uroce_eng_mr *old, struct uroce_eng_pd *pd,
					void *addr, uint64_t iova, uint64_t length, int access);

/**
 * Take @p mr out of its device's key table: no engine finds it from now on,
 * though one may still be using the pointer it found before. With several
 * engines (workers) on the device, revoke, wait until every worker has
 * passed a quiescent point, then uroce_eng_mr_dereg().
 */
void uroce_eng_mr_revoke(struct uroce_eng_mr *mr);

/**
 * Let packets send @p mr's memory zero-copy: @p ref counts the packets
 * whose payload the device may still read (atomically; the engine adds one
 * per packet, uroce_eng_zc_mem_release() takes it back). The owner keeps
 * the memory mapped, whatever happens to the MR, until @p ref reads 0.
 * NULL (the default) keeps every packet from @p mr a copy.
 */
void uroce_eng_mr_set_zc_ref(struct uroce_eng_mr *mr, uint32_t *ref);

/**
 * The device no longer reads a zero-copy packet's payload: drop its memory
 * reference. Any thread; at once (the memory may go as soon as the count
 * reads 0).
 */
void uroce_eng_zc_mem_release(const struct uroce_eng_zc *zc);

/**
 * The same packet, for its send WQE: a WQE whose packets are all released
 * (and that was acknowledged) completes, and the completions behind it.
 * The engine's thread, outside any engine call. A QP reset or destroyed
 * since makes it a no-op.
 */
void uroce_eng_zc_release(struct uroce_eng *eng, const struct uroce_eng_zc *zc);

/** Deregister (revoke, then free); a memory window too. @return 0, or
 * -EINVAL if @p mr is NULL. */
int uroce_eng_mr_dereg(struct uroce_eng_mr *mr);

/**
 * Allocate a memory window of @p pd (IBA 10.6.7.1): type 1 (bound with a
 * BIND_MW work request on any QP of the PD) or type 2B (bound only while
 * FREE, used only through the QP that bound it, returned to FREE by
 * LOCAL_INV or a peer's SEND with Invalidate). It grants nothing until bound.
 * Its rkey is uroce_eng_mr_rkey() (the variant byte changes with each bind);
 * free it as an MR: uroce_eng_mr_revoke(), a quiescent point, then
 * uroce_eng_mr_dereg().
 * @return the window, or NULL with errno EINVAL (NULL @p pd, unknown type),
 *   ENOMEM (out of key slots or memory).
 */
struct uroce_eng_mr *uroce_eng_mw_alloc(struct uroce_eng_pd *pd, int type);

/** True while memory windows are bound to MR @p mr: deregistering it must
 * be refused (IBA 10.6.7.2: bound windows keep their MR). */
bool uroce_eng_mr_busy(const struct uroce_eng_mr *mr);

/** Local key of @p mr (0 for a window: it has none). */
uint32_t uroce_eng_mr_lkey(const struct uroce_eng_mr *mr);
/** Remote key of @p mr. */
uint32_t uroce_eng_mr_rkey(const struct uroce_eng_mr *mr);

/**
 * Overflow-safe bounds and rights check, as the responder does it: true if
 * [@p va, @p va + @p len) lies inside @p mr and @p mr grants every flag in
 * @p access. len 0 is inside if va is within [iova, iova + length].
 */
bool uroce_eng_mr_check(const struct uroce_eng_mr *mr, uint64_t va, uint64_t len, int access);

/** Address vector (ibv_ah_attr with a RoCEv2 GRH). */
struct uroce_eng_ah_attr {
	uint8_t dgid[16];
	uint8_t sgid[16];   /**< source GID; all zero means the engine's GID */
	uint8_t tclass;
	uint8_t hop_limit;
	uint32_t flow_label;
	uint8_t port_num;   /**< 0 means the engine's port */
	uint8_t sl;
};

/** Create an address handle. @return the AH, or NULL with errno EINVAL/ENOMEM. */
struct uroce_eng_ah *uroce_eng_ah_create(struct uroce_eng_pd *pd,
					 const struct uroce_eng_ah_attr *attr);

/** Destroy an address handle. @return 0, or -EINVAL if NULL. */
int uroce_eng_ah_destroy(struct uroce_eng_ah *ah);

/** The address vector of @p ah (what a UD send copies into its WQE). */
const struct uroce_eng_ah_attr *uroce_eng_ah_attr(const struct uroce_eng_ah *ah);

/** The PD of @p ah. */
struct uroce_eng_pd *uroce_eng_ah_pd(const struct uroce_eng_ah *ah);

/* ------------------------------------------------------------------------ */
/* CQ and SRQ                                                                */
/* ------------------------------------------------------------------------ */

/** A work completion (ibv_wc). */
struct uroce_eng_wc {
	uint64_t wr_id;
	enum uroce_wc_status status;
	enum uroce_wc_opcode opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data;          /**< host order, valid with UROCE_WC_WITH_IMM */
	uint32_t invalidated_rkey;  /**< valid with UROCE_WC_WITH_INV */
	uint32_t qp_num;
	uint32_t src_qp;            /**< UD: sender's QPN */
	unsigned int wc_flags;
	uint16_t pkey_index;
	uint8_t sl;
	/**
	 * A hint for the shell, not part of the completion: WQEs of the same
	 * send queue are still outstanding behind this one, so its client is
	 * not waiting on this completion alone (see the worker's cqe_put()).
	 */
	bool sq_more;
};

/**
 * Where a CQ's completions go: the shell writes each one straight to its
 * final place (a client's shared CQ ring), on the engine's thread, in
 * completion order. The engine keeps none.
 */
struct uroce_eng_cq_sink {
	/** Store @p wc. @return false if there is no room: the CQ overruns. */
	bool (*push)(void *ctx, const struct uroce_eng_wc *wc);
	/** Called once when the CQ is destroyed (may be NULL). */
	void (*release)(void *ctx);
	void *ctx;
};

/**
 * Create a CQ whose completions go to @p sink. A CQ belongs to one engine
 * (one worker). An overrun (push returns false) is counted (cq_overflow)
 * and raises UROCE_EVENT_CQ_ERR once (IBA 11.4.2.1).
 * @return the CQ, or NULL with errno EINVAL/ENOMEM.
 */
struct uroce_eng_cq *uroce_eng_cq_create_sink(struct uroce_eng *eng,
					      const struct uroce_eng_cq_sink *sink,
					      void *cq_context);

/** Destroy a CQ (its sink's release is called). @return 0, -EBUSY if a QP
 * uses it, -EINVAL if NULL. */
int uroce_eng_cq_destroy(struct uroce_eng_cq *cq);

/** True once a completion could not be stored because the CQ was full. */
bool uroce_eng_cq_overflowed(const struct uroce_eng_cq *cq);

/** The cq_context given at creation. */
void *uroce_eng_cq_context(const struct uroce_eng_cq *cq);

/** The ctx of the CQ's sink. */
void *uroce_eng_cq_sink_ctx(const struct uroce_eng_cq *cq);

/** SRQ creation attributes. */
struct uroce_eng_srq_init_attr {
	uint32_t max_wr;
	uint32_t max_sge;
	void *srq_context;
	struct uroce_eng *eng;   /**< engine that owns it; NULL: the PD's own engine */
	/**
	 * Non-zero: an XRC SRQ of this XRC domain (IBA 1.2 XRC). It gets an
	 * SRQ number (uroce_eng_srq_num()) that XRC requests name, its
	 * receives complete to @c cq (required, of the same engine), and TGT
	 * QPs of the same domain take receives from it.
	 */
	uint32_t xrcd;
	struct uroce_eng_cq *cq;
};

/** Create a shared receive queue. @return the SRQ, or NULL with errno EINVAL (bad
 * sizes, an XRC SRQ without a CQ of its engine) or ENOMEM (also: out of XRC SRQ numbers). */
struct uroce_eng_srq *uroce_eng_srq_create(struct uroce_eng_pd *pd,
					   const struct uroce_eng_srq_init_attr *attr);

/** Destroy an SRQ. @return 0, -EBUSY if a QP uses it, -EINVAL if NULL. */
int uroce_eng_srq_destroy(struct uroce_eng_srq *srq);

/** The srq_context given at creation. */
void *uroce_eng_srq_context(const struct uroce_eng_srq *srq);

/** The XRC SRQ number of @p srq (engine bits | index, like a QPN); 0 for a plain SRQ. */
uint32_t uroce_eng_srq_num(const struct uroce_eng_srq *srq);

/**
 * The XRC SRQ whose receive queue a TGT QP's responder needs now (the
 * rq_refill hook of an XRC_RECV QP asks this), or NULL.
 */
struct uroce_eng_srq *uroce_eng_qp_xrc_srq(const struct uroce_eng_qp *qp);

/** Receive WQEs an SRQ holds. */
uint32_t uroce_eng_srq_count(const struct uroce_eng_srq *srq);

/** The most SGEs a receive WQE of @p srq may have. */
uint32_t uroce_eng_srq_max_sge(const struct uroce_eng_srq *srq);

/* ------------------------------------------------------------------------ */
/* QP                                                                        */
/* ------------------------------------------------------------------------ */

/** Queue capacities (ibv_qp_cap). */
struct uroce_eng_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

/** QP creation attributes (ibv_qp_init_attr). */
struct uroce_eng_qp_init_attr {
	void *qp_context;
	struct uroce_eng_cq *send_cq;
	struct uroce_eng_cq *recv_cq;
	struct uroce_eng_srq *srq;      /**< NULL: the QP has its own RQ */
	struct uroce_eng_qp_cap cap;
	enum uroce_qp_type qp_type;
	bool sq_sig_all;            /**< every send WR is signaled */
	/**
	 * XRC_RECV (TGT) QPs only: the XRC domain, and the engine (no CQs,
	 * no queues: requests take receives from the domain's XRC SRQs).
	 * XRC_SEND (INI) QPs have a send queue only.
	 */
	uint32_t xrcd;
	struct uroce_eng *eng;
};

/** QP attributes (ibv_qp_attr), with the address vector inline. */
struct uroce_eng_qp_attr {
	enum uroce_qp_state qp_state;
	enum uroce_qp_state cur_qp_state;
	enum uroce_mtu path_mtu;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	int qp_access_flags;
	struct uroce_eng_qp_cap cap;
	struct uroce_eng_ah_attr ah_attr;
	uint16_t pkey_index;
	bool sq_draining;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;       /**< 5-bit code, IBA table 45 */
	uint8_t port_num;
	uint8_t timeout;             /**< local ACK timeout 4.096 µs * 2^timeout; 0: none */
	uint8_t retry_cnt;           /**< 0..7; 7 is seven retries, not infinite */
	uint8_t rnr_retry;           /**< 0..7; 7 is infinite */
};

/**
 * Create a QP in RESET. Its QPN is uroce_eng_qp_num().
 * @return the QP, or NULL with errno EINVAL (type, CQs, caps beyond
 *   config/uroce_limits.h, SRQ of another PD) or ENOMEM (out of QPNs).
 */
struct uroce_eng_qp *uroce_eng_qp_create(struct uroce_eng_pd *pd,
					 const struct uroce_eng_qp_init_attr *attr);

/** Index of QP1, the General Services Interface's (IBA 13.5.1). */
#define UROCE_GSI_QP_INDEX 1

/**
 * Create this engine's QP1 (its QPN is qpn_base | 1), a UD QP for the
 * daemon's General Services Interface; otherwise as uroce_eng_qp_create().
 * @return the QP, or NULL with errno EINVAL (not UD, or as
 *   uroce_eng_qp_create()), EBUSY (the engine has one), ENOMEM.
 */
struct uroce_eng_qp *uroce_eng_qp_create_gsi(struct uroce_eng_pd *pd,
					     const struct uroce_eng_qp_init_attr *attr);

/** Destroy a QP (outstanding WQEs are dropped without completions). @return 0 or -EINVAL. */
int uroce_eng_qp_destroy(struct uroce_eng_qp *qp);

/** The QP number. */
uint32_t uroce_eng_qp_num(const struct uroce_eng_qp *qp);

/** The QP with number @p qpn on @p eng (e.g. from uroce_eng_wc.qp_num), or NULL. */
struct uroce_eng_qp *uroce_eng_qp(const struct uroce_eng *eng, uint32_t qpn);

/** The qp_context given at creation. */
void *uroce_eng_qp_context(const struct uroce_eng_qp *qp);

/** The current state. */
enum uroce_qp_state uroce_eng_qp_state(const struct uroce_eng_qp *qp);

/**
 * Modify a QP, verbs style (IBA 10.3.1 and 11.2.5.2, table of required and
 * optional attributes per transition and service). Either every attribute
 * is applied or none is.
 *
 * @return 0; -EINVAL for a transition the state machine does not allow, a
 *   required attribute missing from @p mask, an attribute not allowed on
 *   this transition, or a value out of range (path MTU not 256..4096,
 *   PSN > 2^24-1, retry counts > 7, timers > 31, rd_atomic above the limits,
 *   CUR_STATE not matching).
 */
int uroce_eng_modify_qp(struct uroce_eng_qp *qp, const struct uroce_eng_qp_attr *attr, int mask);

/**
 * Read back the QP attributes and creation attributes.
 * @return 0, or -EINVAL if @p qp or @p attr is NULL (@p init may be NULL).
 */
int uroce_eng_query_qp(const struct uroce_eng_qp *qp, struct uroce_eng_qp_attr *attr,
		   struct uroce_eng_qp_init_attr *init);

/** Per-QP counter value. */
uint64_t uroce_eng_qp_counter(const struct uroce_eng_qp *qp, enum uroce_counter c);

/**
 * The last (up to UROCE_RESP_REJECTS) requests @p qp's responder refused,
 * newest first, into @p out (room for @p n).
 * @return how many were written; 0 if none yet.
 */
unsigned int uroce_eng_qp_resp_rejects(const struct uroce_eng_qp *qp,
				       struct uroce_eng_resp_reject *out, unsigned int n);

/* ------------------------------------------------------------------------ */
/* Congestion control (ECN marking, CNP notification point, DCQCN)           */
/* ------------------------------------------------------------------------ */

/**
 * Congestion control parameters, one field per line of cc_params.def, named
 * and defaulted as ConnectX names them (rpg_time_reset, dce_tcp_g,
 * min_time_between_cnps, ...). An engine has one set (the port's, from
 * uroce_eng_cc_set()); a QP uses it unless uroce_eng_qp_cc_set() gave it its
 * own. See doc/congestion.md for what each does.
 */
struct uroce_eng_cc_params {
#define UROCE_CC_PARAM(name, min, max, def, unit, desc) uint32_t name;
#include "cc_params.def"
#undef UROCE_CC_PARAM
};

/** Description of one parameter (uroce_eng_cc_param_info()). */
struct uroce_eng_cc_param_info {
	const char *name;     /**< the field and config key, e.g. "rpg_time_reset" */
	uint32_t min;
	uint32_t max;
	uint32_t def;         /**< the ConnectX default */
	const char *unit;     /**< "us", "Mb/s", "bytes", "1/1024", ... */
	const char *desc;     /**< one line */
};

/** Number of parameters (lines of cc_params.def). */
unsigned int uroce_eng_cc_param_count(void);

/** Parameter @p i (0 .. count - 1), or NULL if out of range. */
const struct uroce_eng_cc_param_info *uroce_eng_cc_param_info(unsigned int i);

/** Index of the parameter called @p name, or -ENOENT. */
int uroce_eng_cc_param_find(const char *name);

/** Value of parameter @p i in @p p (0 if @p i is out of range). */
uint32_t uroce_eng_cc_param_get(const struct uroce_eng_cc_params *p, unsigned int i);

/**
 * Set parameter @p i of @p p to @p v.
 * @return 0, or -EINVAL if @p i is out of range or @p v outside [min, max].
 */
int uroce_eng_cc_param_set(struct uroce_eng_cc_params *p, unsigned int i, uint32_t v);

/** Fill @p p with the defaults (ConnectX's). */
void uroce_eng_cc_params_default(struct uroce_eng_cc_params *p);

/**
 * Check a whole set: every value within its range, and rpg_min_rate not
 * above the maximum rate (rpg_max_rate, else line_rate).
 * @return 0, or -EINVAL (with *@p bad, if not NULL, set to the index of the
 *   first offending parameter).
 */
int uroce_eng_cc_params_check(const struct uroce_eng_cc_params *p, unsigned int *bad);

/**
 * Set the engine's (the port's) parameters. QPs without their own set use
 * them from their next packet on; a QP already slowed down keeps its current
 * rate and recovers under the new parameters.
 * @return 0, or -EINVAL (NULL, or uroce_eng_cc_params_check() fails).
 */
int uroce_eng_cc_set(struct uroce_eng *eng, const struct uroce_eng_cc_params *p);

/** Copy the engine's parameters. @return 0, or -EINVAL if an argument is NULL. */
int uroce_eng_cc_get(const struct uroce_eng *eng, struct uroce_eng_cc_params *p);

/**
 * Give @p qp its own parameters (NULL: use the engine's again).
 * @return 0, or -EINVAL (NULL @p qp, or uroce_eng_cc_params_check() fails).
 */
int uroce_eng_qp_cc_set(struct uroce_eng_qp *qp, const struct uroce_eng_cc_params *p);

/** Copy the parameters @p qp uses. @return 0, or -EINVAL if an argument is NULL. */
int uroce_eng_qp_cc_get(const struct uroce_eng_qp *qp, struct uroce_eng_cc_params *p);

/** Reaction point state of one QP (uroce_eng_qp_cc_state()). */
struct uroce_eng_cc_state {
	bool limited;          /**< a CNP slowed it and it has not recovered to the maximum */
	uint32_t rate_kbps;    /**< current rate (the maximum when not limited) */
	uint32_t target_kbps;  /**< target rate of the recovery */
	uint32_t max_kbps;     /**< the maximum rate (rpg_max_rate or line_rate) */
	uint32_t alpha;        /**< congestion estimate, 1/1024 */
	uint32_t time_stage;   /**< timer increase events since the last cut */
	uint32_t byte_stage;   /**< byte counter increase events since the last cut */
};

/** The reaction point state of @p qp. @return 0, or -EINVAL if an argument is NULL. */
int uroce_eng_qp_cc_state(const struct uroce_eng_qp *qp, struct uroce_eng_cc_state *st);

/* ------------------------------------------------------------------------ */
/* Work requests                                                             */
/* ------------------------------------------------------------------------ */

/*
 * Posting in place: the caller writes a work request (uroce_wr.h) straight
 * into the engine's queue slot and commits it, so a shell that reads another
 * format (the shared-memory WQE of lib/shm) copies nothing twice. Only the
 * fields the opcode uses need to be written.
 */

/** A send work request in its queue slot. */
struct uroce_eng_send_wqe {
	struct uroce_wr_send wr;
	/** UD: the address vector, copied (the AH may go away before it is sent). */
	struct uroce_eng_ah_attr ah;
};

/**
 * The next free send slot of @p qp, or NULL if the send queue is full. The
 * slot is the caller's until uroce_eng_sq_commit(); reserving again without
 * a commit returns the same slot.
 */
struct uroce_eng_send_wqe *uroce_eng_sq_reserve(struct uroce_eng_qp *qp);

/**
 * Check and post the reserved slot (IBA 10.8.2, 11.4.1.1: what is the
 * poster's fault fails the post; key problems complete in error later). In
 * ERR or SQE it completes at once with a flush error (IBA 10.3.1).
 * @return 0; -EINVAL (QP in RESET/INIT/RTR, opcode not allowed for the QP
 *   type, unknown flag, too many SGEs, UD without AH); -EMSGSIZE (message,
 *   inline or UD payload too long, atomic not 8 bytes). On error nothing is
 *   posted and the slot is free again.
 */
int uroce_eng_sq_commit(struct uroce_eng_qp *qp);

/** The next free slot of @p qp's own receive queue, or NULL if full or none. */
struct uroce_wr_recv *uroce_eng_rq_reserve(struct uroce_eng_qp *qp);
/**
 * Receive WQEs of @p qp's own receive queue the engine still holds: posted
 * and not completed, the one of a message in progress included.
 */
uint32_t uroce_eng_rq_held(const struct uroce_eng_qp *qp);
/**
 * Post the reserved receive slot. In ERR it completes at once with a flush
 * error (IBA 10.8.3.2).
 * @return 0; -EINVAL (QP in RESET, too many SGEs); -EMSGSIZE (over 2^31 bytes).
 */
int uroce_eng_rq_commit(struct uroce_eng_qp *qp);
/** The next free slot of @p srq, or NULL if full. */
struct uroce_wr_recv *uroce_eng_srq_reserve(struct uroce_eng_srq *srq);
/** Post the reserved SRQ slot (@c length is set by commit). @return 0, -EINVAL (too many SGEs), -EMSGSIZE. */
int uroce_eng_srq_commit(struct uroce_eng_srq *srq);

/** Name of a QP state ("RESET", ...), "?" if out of range. */
const char *uroce_eng_qp_state_str(enum uroce_qp_state s);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_TRANSPORT_H */
