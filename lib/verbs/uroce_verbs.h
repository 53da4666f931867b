/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * liburoce: the client library of uroce. A process opens the daemon's UNIX
 * socket with uroce_open_device() and then uses RDMA with the names and
 * semantics of libibverbs: protection domains, memory regions, completion
 * queues, RC/UC queue pairs, post_send/post_recv and poll_cq. Resources are
 * created by control messages on the socket (lib/shm's protocol); the data
 * path is shared memory only: a post writes a WQE into the QP's send ring and
 * rings a doorbell with a plain atomic store, and a poll reads CQEs from the
 * CQ ring, with no system call on either side.
 *
 * Differences from libibverbs, all deliberate:
 *  - Memory the daemon reaches must live in a shared segment: allocate it
 *    with uroce_alloc_buf() and register any range inside it with
 *    uroce_reg_mr(), or register ordinary page-aligned memory, which
 *    uroce_reg_mr() re-backs with shared memory in place (doc/verbs.md).
 *    SGE and remote addresses are this process's virtual addresses (the MR
 *    iova), as in verbs.
 *  - Functions return 0 or -errno (the uroce convention) rather than a
 *    positive errno; constructors return NULL and set errno.
 *  - Each CQ has its own eventfd (uroce_cq_fd()) instead of a completion
 *    channel.
 *  - When the daemon goes away the context becomes fatal: every later call
 *    that needs the daemon fails with -ENOTCONN (never blocks), blocked
 *    waits in uroce_get_cq_event() return -ENOTCONN, and
 *    uroce_get_async_event() returns UROCE_ASYNC_DEVICE_FATAL once.
 *  - Destroying a QP, CQ or SRQ with an unacknowledged async event fails
 *    with -EBUSY instead of waiting for the acknowledgement.
 *
 * Enumerations (UROCE_WR_*, UROCE_WC_*, UROCE_QPT_*, UROCE_QPS_*, UROCE_QP_*
 * attribute mask bits, UROCE_ACCESS_*, UROCE_SEND_*) come from uroce_shm.h;
 * their values are those of libibverbs. A process may not use one context
 * across fork(): see doc/verbs.md.
 */

#ifndef UROCE_VERBS_H
#define UROCE_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uroce_shm_datapath.h"

#ifdef __cplusplus
extern "C" {
#endif

/* UROCE_DEFAULT_SOCKET (uroce_shm_abi.h): the socket uroce_open_device()
 * uses when it gets NULL and $UROCE_SOCKET is unset. */

/** Bytes of GRH in front of every UD receive (IBA 11.4.1.2): a UD receive
 * buffer needs this much room before the payload, and byte_len counts it. */
#ifndef UROCE_GRH_LEN
#define UROCE_GRH_LEN 40
#endif

struct uroce_context;
struct uroce_cq;
struct uroce_srq;

/** XRC domain (ibv_xrcd, IBA 1.2 XRC; read-only for users). */
struct uroce_xrcd {
	struct uroce_context *context;
	uint32_t handle; /**< daemon handle */
};

/** Protection domain. */
struct uroce_pd {
	struct uroce_context *context;
	uint32_t handle; /**< daemon handle */
};

/** Memory region (read-only for users). */
struct uroce_mr {
	struct uroce_context *context;
	struct uroce_pd *pd;
	void *addr;
	size_t length;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
};

/** Memory window (ibv_mw; read-only for users but @c rkey, which the
 * poster of a BIND_MW keeps current, as verbs' ibv_bind_mw does). */
struct uroce_mw {
	struct uroce_context *context;
	struct uroce_pd *pd;
	uint32_t handle;
	uint32_t rkey;
	uint32_t type;   /**< enum uroce_mw_type */
};

/** Device attributes (ibv_device_attr subset), from config/uroce_limits.h. */
struct uroce_device_attr {
	uint64_t node_guid;
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t max_qp;
	uint32_t max_qp_wr;
	uint32_t max_sge;
	uint32_t max_cq;
	uint32_t max_cqe;
	uint32_t max_mr;
	uint32_t max_pd;
	uint32_t max_qp_rd_atom;
	uint32_t max_qp_init_rd_atom;
	uint32_t max_srq;
	uint32_t max_ah;
	uint32_t max_inline_data;
	uint8_t atomic_cap;        /**< enum uroce_atomic_cap (uroced: GLOB) */
	uint8_t phys_port_cnt;
	uint16_t max_pkeys;
	/* Added for drivers/verbs (ibv_query_device): */
	uint64_t sys_image_guid;
	uint32_t vendor_id;        /**< as the daemon reports it (0: none) */
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	uint32_t device_cap_flags; /**< ibv_device_cap_flags bits */
	uint32_t max_srq_wr;
	uint32_t max_srq_sge;
};

/** Port attributes (ibv_port_attr subset). */
struct uroce_port_attr {
	uint32_t state;        /**< 4: active */
	uint32_t max_mtu;      /**< IBA MTU enum */
	uint32_t active_mtu;
	uint32_t gid_tbl_len;
	uint32_t max_msg_sz;
	uint16_t pkey_tbl_len;
	uint8_t link_layer;    /**< 2: Ethernet */
	uint8_t phys_state;
	/* Added for drivers/verbs (ibv_query_port): */
	uint32_t port_cap_flags;
	uint8_t active_speed;  /**< ibv_port_attr encoding */
	uint8_t active_width;
};

/** Work completion (ibv_wc). */
struct uroce_wc {
	uint64_t wr_id;
	uint32_t status;     /**< enum uroce_wc_status */
	uint32_t opcode;     /**< enum uroce_wc_opcode */
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data;   /**< host order; with WITH_INV the invalidated rkey */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags;   /**< enum uroce_wc_flags */
	uint16_t pkey_index;
	uint8_t sl;
};

/** Queue capacities (ibv_qp_cap). */
struct uroce_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

/** QP creation attributes (ibv_qp_init_attr). */
struct uroce_qp_init_attr {
	void *qp_context;
	struct uroce_cq *send_cq;
	struct uroce_cq *recv_cq;
	/** SRQ the QP takes its receives from (then cap.max_recv_wr and
	 * max_recv_sge are ignored and uroce_post_recv() is refused), or NULL. */
	struct uroce_srq *srq;
	struct uroce_qp_cap cap;   /**< in: requested; out: actual */
	/** UROCE_QPT_RC, _UC, _UD, or _XRC_SEND (an XRC initiator: no receive
	 * queue, no SRQ; recv_cq may be NULL). XRC_RECV QPs are created with
	 * uroce_create_xrc_tgt_qp(). */
	uint32_t qp_type;
	bool sq_sig_all;
};

struct uroce_ah;

/** Address vector (ibv_ah_attr with its GRH; RoCE is always global). */
struct uroce_ah_attr {
	uint8_t dgid[16];
	uint32_t flow_label;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t sl;
	uint8_t port_num;
	uint8_t sgid_index;    /**< source GID (uroce_query_gid index); RoCE AHs are global */
};

/** QP attributes (ibv_qp_attr subset). */
struct uroce_qp_attr {
	uint32_t qp_state;
	uint32_t cur_qp_state;
	uint32_t path_mtu;        /**< IBA MTU enum, 1 (256) .. 5 (4096) */
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qp_access_flags;
	struct uroce_qp_cap cap;
	struct uroce_ah_attr ah_attr;
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t sq_draining;
};

/** Address handle for UD sends (read-only for users). */
struct uroce_ah {
	struct uroce_context *context;
	struct uroce_pd *pd;
	uint32_t handle; /**< daemon handle */
};

/** Queue pair (read-only for users). */
struct uroce_qp {
	struct uroce_context *context;
	struct uroce_pd *pd;
	struct uroce_cq *send_cq;
	struct uroce_cq *recv_cq;
	void *qp_context;
	uint32_t handle;
	uint32_t qp_num;
	uint32_t qp_type;
	struct uroce_qp_cap cap;  /**< actual capacities */
	struct uroce_qp_priv *priv;
	struct uroce_srq *srq;    /**< from uroce_qp_init_attr, or NULL */
};

/** SRQ attributes (ibv_srq_attr). */
struct uroce_srq_attr {
	uint32_t max_wr;    /**< receive WQEs the SRQ holds */
	uint32_t max_sge;   /**< SGEs per receive WQE */
	uint32_t srq_limit; /**< armed limit (0: not armed); see uroce_modify_srq() */
};

/** SRQ creation attributes (ibv_srq_init_attr). */
struct uroce_srq_init_attr {
	void *srq_context;
	struct uroce_srq_attr attr; /**< in: requested (srq_limit ignored); out: actual */
};

struct uroce_srq_priv;

/** Shared receive queue (read-only for users). */
struct uroce_srq {
	struct uroce_context *context;
	struct uroce_pd *pd;
	void *srq_context;
	uint32_t handle; /**< daemon handle */
	struct uroce_srq_priv *priv;
	uint32_t srq_num; /**< XRC SRQ: its number (ibv_get_srq_num); 0 otherwise */
};

/** An asynchronous event (ibv_async_event). */
struct uroce_async_event {
	union {
		struct uroce_cq *cq;   /**< CQ_ERR */
		struct uroce_qp *qp;   /**< QP_FATAL, SQ_DRAINED, QP_LAST_WQE_REACHED */
		struct uroce_srq *srq; /**< SRQ_ERR, SRQ_LIMIT_REACHED */
	} element;                     /**< NULL for DEVICE_FATAL */
	uint32_t event_type;           /**< enum uroce_async_event_type */
};

/** Scatter/gather element: addr and length inside the MR of lkey. */
struct uroce_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/** Send work request (ibv_send_wr). */
struct uroce_send_wr {
	struct uroce_send_wr *next;
	uint64_t wr_id;
	struct uroce_sge *sg_list;
	int num_sge;
	uint32_t opcode;      /**< enum uroce_wr_opcode */
	uint32_t send_flags;  /**< enum uroce_send_flags */
	/** host order; SEND_WITH_INV, LOCAL_INV: the rkey to invalidate */
	uint32_t imm_data;
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		/** ATOMIC_WRITE (IBA 1.5): the 8 bytes of @c data are stored at
		 * @c remote_addr (8-aligned) in one piece, as they lie here.
		 * num_sge must be 0. */
		struct {
			uint64_t remote_addr;
			uint8_t data[8];
			uint32_t rkey;
		} atomic_write;
		/** FLUSH (IBA 1.5): make earlier writes to the peer's memory
		 * visible (@c type UROCE_FLUSH_GLOBAL; PERSISTENT is refused
		 * by uroce peers), for [remote_addr, + length) at @c level
		 * UROCE_FLUSH_RANGE or the rkey's whole MR at UROCE_FLUSH_MR.
		 * num_sge must be 0. */
		struct {
			uint64_t remote_addr;
			uint64_t length;
			uint32_t rkey;
			uint8_t type;   /**< enum uroce_flush_type bits */
			uint8_t level;  /**< enum uroce_flush_level */
		} flush;
		/** BIND_MW: the window named by @c rkey (its new key: the
		 * window's rkey with another low byte) over [addr, addr +
		 * length) of the MR of @c mr_lkey; type 1 with length 0 unbinds. */
		struct {
			uint32_t rkey;
			uint32_t mr_lkey;
			uint64_t addr;
			uint64_t length;
			uint32_t access;  /**< UROCE_ACCESS_REMOTE_* */
		} bind_mw;
		/** UD QPs: destination address handle, QPN and Q_Key. A Q_Key with
		 * bit 31 set means "use the QP's own Q_Key" (IBA 10.2.5). */
		struct {
			struct uroce_ah *ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
	} wr;
	/** XRC_SEND QPs only (LIBUROCE_1.2): the remote XRC SRQ's number
	 * (ibv_send_wr.qp_type.xrc.remote_srqn); not read for other QPs. */
	uint32_t xrc_remote_srqn;
};

/** Receive work request (ibv_recv_wr). */
struct uroce_recv_wr {
	struct uroce_recv_wr *next;
	uint64_t wr_id;
	struct uroce_sge *sg_list;
	int num_sge;
};

/**
 * Connect to the daemon and say HELLO.
 *
 * @param sock_path  the daemon's socket; NULL: $UROCE_SOCKET, else
 *   UROCE_DEFAULT_SOCKET
 * @return a context, or NULL with errno: ENOENT/ECONNREFUSED (no daemon
 *   there), EACCES (socket permissions), EPROTONOSUPPORT (the daemon speaks
 *   another shm ABI major; both versions are logged), EPROTO (malformed
 *   answer), ETIMEDOUT (no answer), ENOMEM.
 */
struct uroce_context *uroce_open_device(const char *sock_path);

/**
 * Close a context. The daemon reclaims everything the context still owns
 * (QPs go to ERR and are destroyed); buffers from uroce_alloc_buf() are
 * unmapped. As with ibv_close_device(), PDs, MRs, CQs and QPs should be
 * destroyed first: their local structures are not freed here.
 * @return 0, or -EINVAL if NULL.
 */
int uroce_close_device(struct uroce_context *ctx);

/** True once the daemon has gone away: every daemon call now fails with -ENOTCONN. */
bool uroce_context_fatal(const struct uroce_context *ctx);

/** @return 0, -EINVAL, -ENOTCONN (daemon gone), -ETIMEDOUT. */
int uroce_query_device(struct uroce_context *ctx, struct uroce_device_attr *attr);
/** @return 0, -EINVAL (no such port: ports are numbered from 1), -ENOTCONN, -ETIMEDOUT. */
int uroce_query_port(struct uroce_context *ctx, uint8_t port, struct uroce_port_attr *attr);
/** @return 0, -EINVAL (no such port or index), -ENOTCONN, -ETIMEDOUT. */
int uroce_query_gid(struct uroce_context *ctx, uint8_t port, int index, uint8_t gid[16]);

/** Allocate a PD. @return the PD, or NULL with errno ENOMEM, ENOTCONN, ETIMEDOUT. */
struct uroce_pd *uroce_alloc_pd(struct uroce_context *ctx);
/** @return 0, -EBUSY (MRs or QPs use it), -EINVAL, -ENOTCONN. */
int uroce_dealloc_pd(struct uroce_pd *pd);

/**
 * Allocate @p size bytes of zeroed memory shared with the daemon (a sealed
 * memfd segment, page aligned). Register ranges of it with uroce_reg_mr().
 * @return the address, or NULL with errno EINVAL (size 0), ENOMEM,
 *   ENOTCONN, ETIMEDOUT.
 */
void *uroce_alloc_buf(struct uroce_context *ctx, size_t size);
/** Free a buffer from uroce_alloc_buf(). @return 0, -EINVAL (not one), -EBUSY (an MR covers it). */
int uroce_free_buf(struct uroce_context *ctx, void *addr);

/**
 * Register [@p addr, @p addr + @p length). A range inside one buffer from
 * uroce_alloc_buf() is registered as it is. Any other range must be ordinary
 * private anonymous memory (malloc, anonymous mmap, a stack) with page-aligned
 * start and length: it is re-backed in place with a sealed memfd shared with
 * the daemon (pointers and contents stay valid; MADV_DONTFORK while
 * registered; private memory again after the last uroce_dereg_mr()). A range
 * inside an already re-backed range needs no alignment. See doc/verbs.md,
 * "Registering ordinary memory", for the limits. Keys are the daemon's
 * (lkey = rkey).
 * @param access  UROCE_ACCESS_*; REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE
 * @return the MR, or NULL with errno EINVAL (bad flags, length 0, ordinary
 *   memory not page aligned, or partly overlapping a re-backed range), EFAULT
 *   (part of the range is not mapped), EACCES (part is not readable),
 *   EOPNOTSUPP (part is a file, shared, hugetlb or special mapping), EBUSY (a
 *   re-backed range with live MRs was unmapped or replaced), ENOMEM,
 *   ENOTCONN, ETIMEDOUT.
 */
struct uroce_mr *uroce_reg_mr(struct uroce_pd *pd, void *addr, size_t length, int access);
/** @return 0, -EINVAL, -EBUSY (memory windows are bound to it, daemon ABI
 *   1.5), -ENOTCONN (the MR is freed locally anyway). */
int uroce_dereg_mr(struct uroce_mr *mr);

/** What uroce_rereg_mr() changes (the values of enum ibv_rereg_mr_flags). */
enum uroce_rereg_flags {
	UROCE_REREG_TRANSLATION = 1 << 0, /**< addr and length */
	UROCE_REREG_PD = 1 << 1,
	UROCE_REREG_ACCESS = 1 << 2,
};

/**
 * Re-register @p mr (ibv_rereg_mr): change its memory, PD or access as
 * @p flags say, keeping its keys. The daemon swaps it at once: a request
 * that arrives meanwhile sees the old registration or the new. Arguments of
 * a change not asked for are ignored.
 * @return 0; -EINVAL (bad flags or arguments; the MR is unchanged);
 *   -EOPNOTSUPP (a daemon before shm ABI 1.5); what uroce_reg_mr() can fail
 *   with for new memory; -ENOTCONN.
 */
int uroce_rereg_mr(struct uroce_mr *mr, int flags, struct uroce_pd *pd, void *addr,
		   size_t length, int access);

/**
 * Allocate a memory window of @p pd (IBA 10.6.7; daemon ABI 1.5). Type 1 is
 * bound on any QP of the PD, type 2 (2B) only while free and then used only
 * through the QP that bound it. Either is bound by posting UROCE_WR_BIND_MW
 * (wr.bind_mw) with a new rkey: the window's rkey with a new low byte.
 * Type 2 windows are freed by UROCE_WR_LOCAL_INV or a peer's SEND with
 * Invalidate. Binding needs an MR registered with UROCE_ACCESS_MW_BIND.
 * @return the window, or NULL with errno EINVAL (bad type), EOPNOTSUPP (the
 *   daemon predates ABI 1.5), ENOMEM, ENOTCONN, ETIMEDOUT.
 */
struct uroce_mw *uroce_alloc_mw(struct uroce_pd *pd, int type);
/** @return 0, -EINVAL, -ENOTCONN (the window is freed locally anyway). */
int uroce_dealloc_mw(struct uroce_mw *mw);

/**
 * Create a CQ of at least @p cqe entries (rounded up to a power of two) with
 * its own eventfd.
 * @return the CQ, or NULL with errno EINVAL (cqe 0 or above max_cqe),
 *   ENOMEM, ENOTCONN, ETIMEDOUT.
 */
struct uroce_cq *uroce_create_cq(struct uroce_context *ctx, int cqe, void *cq_context);
/** @return 0, -EBUSY (a QP uses it, or an async event on it is not
 * acknowledged), -EINVAL, -ENOTCONN. */
int uroce_destroy_cq(struct uroce_cq *cq);
/** Entries of the CQ ring. */
int uroce_cq_size(const struct uroce_cq *cq);
/**
 * Resize @p cq to at least @p cqe entries (ibv_resize_cq), keeping the CQEs it
 * holds; uroce_cq_size() then says the new size. Not to be called while
 * another thread polls the CQ through uroce_cq_begin().
 * @return 0; -EINVAL (cqe out of range, or fewer than the CQEs it holds);
 *   -EOPNOTSUPP (a daemon before shm ABI 1.5); -ENOTCONN.
 */
int uroce_resize_cq(struct uroce_cq *cq, int cqe);

/** What uroce_modify_cq() changes (struct ibv_modify_cq_attr). */
struct uroce_modify_cq_attr {
	uint32_t attr_mask;       /**< UROCE_CQ_ATTR_MODERATE */
	uint16_t cq_count;        /**< CQEs before the event (0: the period alone) */
	uint16_t cq_period;       /**< microseconds after the first (0: off) */
};

/**
 * CQ event moderation (ibv_modify_cq with IBV_CQ_ATTR_MODERATE). While the
 * CQ is armed, its event waits until @p cq_count CQEs have been written since
 * the first that the arm asked an event for, or @p cq_period microseconds
 * after it, whichever is first; no event is lost, and none comes later than
 * the period (plus the worker's idle sleep, when it sleeps). It spares the
 * daemon's worker a wakeup (a system call) per arm of a client that sleeps
 * on the CQ. cq_period 0, the default, signals at once.
 * @return 0; -EINVAL (another mask bit, cq_period above UROCE_CQ_PERIOD_MAX);
 *   -EOPNOTSUPP (a daemon before shm ABI 1.8); -ENOTCONN.
 */
int uroce_modify_cq(struct uroce_cq *cq, const struct uroce_modify_cq_attr *attr);
/**
 * Remove @p cq's unconsumed CQEs of QP @p qp_num, keeping the others in
 * order, as an mlx5 provider cleans a QP's CQs when the QP is reset. For a
 * QP in RESET (no more CQEs come for it).
 * @return the number of CQEs removed.
 */
uint32_t uroce_cq_clean(struct uroce_cq *cq, uint32_t qp_num);
/** The cq_context given at creation. */
void *uroce_cq_context(const struct uroce_cq *cq);
/** The CQ's eventfd (readable once an armed CQ got a completion); for poll/epoll. */
int uroce_cq_fd(const struct uroce_cq *cq);

/**
 * Take up to @p num completions, oldest first; no system call while
 * completions are there.
 * @return the number taken (0 if none), -EINVAL, -EIO (the CQ ring is
 *   corrupt), -ENOTCONN (empty and the daemon is gone; checked every 256th
 *   empty poll).
 */
int uroce_poll_cq(struct uroce_cq *cq, int num, struct uroce_wc *wc);

/**
 * Arm the CQ for one event (ibv_req_notify_cq): the next completion (or, with
 * @p solicited_only, the next solicited or unsuccessful one) makes the CQ's
 * eventfd readable. Arm, then poll once more, then wait.
 * @return 0, -EINVAL, -EIO (corrupt ring).
 */
int uroce_req_notify_cq(struct uroce_cq *cq, bool solicited_only);

/**
 * Wait for an event of an armed CQ and consume it (ibv_get_cq_event and
 * ibv_ack_cq_events in one).
 * @param timeout_ms  -1 to wait forever, 0 to check
 * @return 1 (an event), 0 (timeout), -ENOTCONN (the daemon went away),
 *   -EINVAL, or the -errno of poll/read.
 */
int uroce_get_cq_event(struct uroce_cq *cq, int timeout_ms);

/**
 * Create a QP in RESET on @p pd.
 * @param init  in: the request; out: init->cap holds the actual capacities
 * @return the QP, or NULL with errno EINVAL (caps beyond the device limits,
 *   CQs of another context), EXDEV (its CQs or SRQ already serve QPs of
 *   another worker lcore: doc/architecture.md, "Placement"), ENOMEM,
 *   ENOTCONN, ETIMEDOUT.
 */
struct uroce_qp *uroce_create_qp(struct uroce_pd *pd, struct uroce_qp_init_attr *init);

/**
 * Modify a QP, verbs style (IBA 10.3.1, 11.2.5.2): the state machine and
 * the required/optional attributes per transition of doc/transport.md.
 * @return 0, -EINVAL (transition or attribute refused), -EPERM/-ENOENT
 *   (the handle is not one of this context's QPs), -ENOTCONN, -ETIMEDOUT.
 */
int uroce_modify_qp(struct uroce_qp *qp, const struct uroce_qp_attr *attr, int attr_mask);

/** Read back QP attributes. @return 0, -EINVAL, -ENOTCONN, -ETIMEDOUT. */
int uroce_query_qp(struct uroce_qp *qp, struct uroce_qp_attr *attr, int attr_mask,
		   struct uroce_qp_init_attr *init);

/**
 * Destroy a QP (outstanding WQEs are dropped).
 * @return 0, -EINVAL, -EBUSY (an async event on it is not acknowledged),
 *   -ENOTCONN (the daemon is gone; freed locally anyway).
 */
int uroce_destroy_qp(struct uroce_qp *qp);

/**
 * Post a chain of send WRs: each is written into the send ring, then the
 * doorbell is rung once (an atomic store, no system call). Checks done here:
 * opcode known, num_sge within the QP's max_send_sge, inline data within
 * max_inline_data and only on SEND/WRITE opcodes, ring not full. The daemon
 * checks everything else (keys, bounds, state) and reports problems as
 * error completions.
 * @param bad_wr  set to the first WR not posted on error
 * @return 0, -EINVAL (bad WR), -ENOMEM (send ring full), -ENOTCONN (daemon gone).
 */
int uroce_post_send(struct uroce_qp *qp, struct uroce_send_wr *wr, struct uroce_send_wr **bad_wr);

/**
 * Post a chain of receive WRs into the receive ring, then ring the doorbell.
 * @return 0, -EINVAL (too many SGEs, num_sge > 0 with a NULL sg_list, or the
 *   QP takes its receives from an SRQ), -ENOMEM (ring full), -ENOTCONN.
 */
int uroce_post_recv(struct uroce_qp *qp, struct uroce_recv_wr *wr, struct uroce_recv_wr **bad_wr);

/**
 * Create an address handle on @p pd for UD sends (ibv_create_ah): the
 * destination GID, traffic class, hop limit and flow label of the GRH.
 * @return the AH, or NULL with errno EINVAL (NULL argument, flow label above
 *   20 bits, no such port), EPERM (the PD is another context's), ENOMEM,
 *   ENOTCONN, ETIMEDOUT.
 */
struct uroce_ah *uroce_create_ah(struct uroce_pd *pd, const struct uroce_ah_attr *attr);

/**
 * Destroy an address handle (the local structure is freed on success and
 * when the daemon is gone).
 * @return 0, -EINVAL, -EPERM/-ENOENT (not one of this context's AHs), -ENOTCONN.
 */
int uroce_destroy_ah(struct uroce_ah *ah);

/**
 * Create a shared receive queue on @p pd (ibv_create_srq). QPs created with
 * init->srq set take their receives from it, in the order they were posted.
 * @param init  in: attr.max_wr (1..max_qp_wr, rounded up to a power of two)
 *   and attr.max_sge (0..max_sge; 0 means 1); attr.srq_limit is ignored, as in
 *   verbs: arm the limit with uroce_modify_srq(). out: the actual attributes.
 * @return the SRQ, or NULL with errno EINVAL (NULL argument, max_wr 0 or too
 *   large, max_sge too large), EPERM/ENOENT (the PD is not one of this
 *   context's), EOPNOTSUPP (the daemon speaks shm ABI 1.0, which has no SRQ
 *   doorbell), ENOMEM, ENOTCONN, ETIMEDOUT.
 */
struct uroce_srq *uroce_create_srq(struct uroce_pd *pd, struct uroce_srq_init_attr *init);

/**
 * Open a new XRC domain (ibv_open_xrcd, IBA 1.2 XRC; LIBUROCE_1.2). It is this
 * context's: the daemon never shares one between processes.
 * @return the domain, or NULL with errno EOPNOTSUPP (daemon before ABI 1.7),
 *   ENOMEM, ENOTCONN.
 */
struct uroce_xrcd *uroce_open_xrcd(struct uroce_context *ctx);

/**
 * Close an XRC domain (ibv_close_xrcd).
 * @return 0, -EBUSY (a TGT QP or XRC SRQ is still in it), -EINVAL, -ENOTCONN.
 */
int uroce_close_xrcd(struct uroce_xrcd *xrcd);

/**
 * Create an XRC SRQ (ibv_create_srq_ex with IBV_SRQT_XRC; LIBUROCE_1.2) of
 * @p pd in @p xrcd, whose receives complete to @p cq; srq_num is what a
 * remote XRC initiator names. Post to it with uroce_post_srq_recv().
 * @return the SRQ, or NULL with errno EINVAL (as uroce_create_srq(), or
 *   objects of another context), EXDEV (the CQ runs on another worker than
 *   the domain: give the SRQ its own CQ), EOPNOTSUPP (daemon before ABI
 *   1.7), ENOMEM, ENOTCONN.
 */
struct uroce_srq *uroce_create_xrc_srq(struct uroce_pd *pd, struct uroce_xrcd *xrcd,
				       struct uroce_cq *cq, struct uroce_srq_init_attr *init);

/**
 * Create an XRC target QP (IBV_QPT_XRC_RECV; LIBUROCE_1.2) in @p xrcd: no
 * CQs, no queues, no PD; modify it like an RC QP (the send-side attributes
 * are optional). Requests to it land in the domain's XRC SRQs.
 * @return the QP (pd, send_cq, recv_cq NULL), or NULL with errno EINVAL,
 *   EOPNOTSUPP (daemon before ABI 1.7), ENOMEM, ENOTCONN.
 */
struct uroce_qp *uroce_create_xrc_tgt_qp(struct uroce_xrcd *xrcd, void *qp_context);

/**
 * Modify an SRQ (ibv_modify_srq). UROCE_SRQ_LIMIT arms the SRQ limit: the
 * first time the SRQ then holds fewer than attr->srq_limit WQEs, one
 * UROCE_ASYNC_SRQ_LIMIT_REACHED event is reported and the limit disarms
 * (IBA 10.2.9.3); arming below the current level reports it at once; 0
 * disarms. UROCE_SRQ_MAX_WR (resize) is not supported, as on a device
 * without IBV_DEVICE_SRQ_RESIZE.
 * @return 0, -EINVAL (NULL argument, empty or unknown mask, UROCE_SRQ_MAX_WR,
 *   srq_limit above max_wr), -EPERM/-ENOENT (not one of this context's SRQs),
 *   -ENOTCONN, -ETIMEDOUT.
 */
int uroce_modify_srq(struct uroce_srq *srq, struct uroce_srq_attr *attr, int attr_mask);

/**
 * Read back max_wr, max_sge and the armed srq_limit (0 once the limit event
 * fired) (ibv_query_srq).
 * @return 0, -EINVAL, -EPERM/-ENOENT, -ENOTCONN, -ETIMEDOUT.
 */
int uroce_query_srq(struct uroce_srq *srq, struct uroce_srq_attr *attr);

/**
 * Destroy an SRQ (ibv_destroy_srq); its posted WQEs are dropped.
 * @return 0, -EINVAL (NULL), -EBUSY (a QP still uses it, or an async event on
 *   it was not acknowledged), -ENOTCONN (the daemon is gone; freed locally
 *   anyway).
 */
int uroce_destroy_srq(struct uroce_srq *srq);

/**
 * Post a chain of receive WRs to an SRQ (ibv_post_srq_recv): each is written
 * into the SRQ ring, then the SRQ's doorbell slot is rung once (no system
 * call). Checked here: num_sge within max_sge, ring not full. The daemon
 * checks the rest: an SGE whose lkey is not one of this context's MRs, or
 * that lies outside its MR, fails the WQE with UROCE_WC_LOC_PROT_ERR on the
 * QP that consumes it.
 * @param bad_wr  set to the first WR not posted on error
 * @return 0, -EINVAL (NULL argument or too many SGEs), -ENOMEM (ring full),
 *   -ENOTCONN.
 */
int uroce_post_srq_recv(struct uroce_srq *srq, struct uroce_recv_wr *wr,
			struct uroce_recv_wr **bad_wr);

/**
 * The context's asynchronous event descriptor (ibv_context::async_fd): poll
 * or epoll it for POLLIN, which means uroce_get_async_event() has something
 * (an event, or the daemon's departure). Make it O_NONBLOCK with fcntl() to
 * have uroce_get_async_event() return -EAGAIN instead of waiting. Owned by the
 * context; do not close it.
 */
int uroce_async_fd(const struct uroce_context *ctx);

/**
 * Take the next asynchronous event (ibv_get_async_event): QP fatal, SQ
 * drained, CQ overrun, SRQ error, SRQ limit reached, last WQE reached, and
 * once, when the daemon goes away, UROCE_ASYNC_DEVICE_FATAL with a NULL
 * element. Events on objects destroyed before they are taken are skipped.
 * Waits if there is none, unless uroce_async_fd() is O_NONBLOCK. Events that
 * arrive during a control call are kept in order; if more than 256 wait
 * untaken the newest are dropped. Every event taken must be acknowledged with
 * uroce_ack_async_event() before its object can be destroyed.
 * @return 0, -EINVAL (NULL argument), -EAGAIN (none, non-blocking),
 *   -ENOTCONN (DEVICE_FATAL was already returned), or the -errno of poll.
 */
int uroce_get_async_event(struct uroce_context *ctx, struct uroce_async_event *ev);

/** Acknowledge an event from uroce_get_async_event() (ibv_ack_async_event). */
void uroce_ack_async_event(struct uroce_async_event *ev);

/*
 * ---------------------------------------------------------------------------
 * Direct ring access (for drivers/verbs)
 *
 * uroce_post_send(), uroce_post_recv() and uroce_poll_cq() translate
 * uroce_* work requests and completions. A library that has its own WR and
 * WC formats (drivers/verbs: ibv_send_wr, ibv_wc, the ibv_wr_* builder and
 * ibv_cq_ex) writes WQEs and reads CQEs in the shared rings itself with these
 * functions, so that it adds no copy and no system call over liburoce:
 *
 *   uroce_sq_begin(qp);                    locks the send queue
 *   w = uroce_sq_slot(qp, 0); fill *w;     the n-th WQE of this batch
 *   w = uroce_sq_slot(qp, 1); fill *w;
 *   uroce_sq_end(qp, 2);                   publishes 2 WQEs, one doorbell, unlocks
 *
 * A slot is published only by *_end(), so a batch can be abandoned with
 * *_end(x, 0). The daemon checks every WQE it copies out (doc/verbs.md, "Bad
 * WQEs") exactly as for uroce_post_send(). Between *_begin() and *_end() the
 * queue's lock is held: the same thread must end what it began, and must not
 * call uroce_post_send()/uroce_post_recv() on that queue meanwhile.
 * ---------------------------------------------------------------------------
 */

/**
 * Start a batch of send WQEs on @p qp: take the send queue's lock.
 * @return 0 (the lock is held; end with uroce_sq_end()), -EINVAL (NULL),
 *   -ENOTCONN (the daemon is gone; nothing is held).
 */
int uroce_sq_begin(struct uroce_qp *qp);

/**
 * The @p i-th WQE of the batch started with uroce_sq_begin() (i counts from
 * 0 and must grow by one per call), its 64-byte control part zeroed; the
 * caller fills it (wr_id, opcode, flags, wr, then SGEs or inline bytes).
 * @return the slot, or NULL if the send ring has no room for i + 1 WQEs.
 */
struct uroce_shm_send_wqe *uroce_sq_slot(struct uroce_qp *qp, uint32_t i);

/**
 * Publish the first @p n WQEs of the batch (0: abandon it), ring the QP's
 * doorbell once if n > 0, release the lock.
 */
void uroce_sq_end(struct uroce_qp *qp, uint32_t n);

/**
 * Receive-queue batch of @p qp, as uroce_sq_begin().
 * @return 0, -EINVAL (NULL, or the QP takes its receives from an SRQ),
 *   -ENOTCONN.
 */
int uroce_rq_begin(struct uroce_qp *qp);
/** The @p i-th receive WQE of the batch, zeroed; NULL if the ring is full. */
struct uroce_shm_recv_wqe *uroce_rq_slot(struct uroce_qp *qp, uint32_t i);
/** Publish @p n receive WQEs, ring the doorbell once if n > 0, unlock. */
void uroce_rq_end(struct uroce_qp *qp, uint32_t n);

/** SRQ batch, as uroce_rq_begin(). @return 0, -EINVAL (NULL), -ENOTCONN. */
int uroce_srq_begin(struct uroce_srq *srq);
/** The @p i-th receive WQE of the SRQ batch, zeroed; NULL if the ring is full. */
struct uroce_shm_recv_wqe *uroce_srq_slot(struct uroce_srq *srq, uint32_t i);
/** Publish @p n SRQ WQEs, ring the SRQ's doorbell once if n > 0, unlock. */
void uroce_srq_end(struct uroce_srq *srq, uint32_t n);
/** The SRQ's actual max_sge (from uroce_create_srq()). */
uint32_t uroce_srq_max_sge(const struct uroce_srq *srq);

/**
 * Start reading completions of @p cq in place: take the CQ's lock and make
 * up to @p n CQEs visible (no system call).
 * @return the number of CQEs readable with uroce_cq_entry() (0 if none);
 *   the lock is held either way: end with uroce_cq_end().
 */
uint32_t uroce_cq_begin(struct uroce_cq *cq, uint32_t n);

/** The @p i-th CQE made visible by uroce_cq_begin() (read-only, in the ring). */
const struct uroce_shm_cqe *uroce_cq_entry(struct uroce_cq *cq, uint32_t i);

/**
 * Release the first @p n CQEs read (they may be overwritten from now on) and
 * the CQ's lock. With n == 0 it checks, as uroce_poll_cq() does for an empty
 * poll, that the ring is sane and (every 256th empty poll) that the daemon is
 * there.
 * @return 0, -EIO (the CQ ring is corrupt), -ENOTCONN (the daemon is gone).
 */
int uroce_cq_end(struct uroce_cq *cq, uint32_t n);

/**
 * Check now whether the daemon is still there (one poll() on the socket,
 * no message). For blocking waits that do not watch the socket themselves.
 * @return 0, -EINVAL (NULL), -ENOTCONN (gone: the context is now fatal).
 */
int uroce_context_check(struct uroce_context *ctx);

/**
 * uroce_query_gid() that also returns the GID's type.
 * @param gid_type  set to 0 (RoCEv1) or 1 (RoCEv2), as the daemon reports it
 * @return 0, -EINVAL (no such port or index), -ENOTCONN, -ETIMEDOUT.
 */
int uroce_query_gid_ex(struct uroce_context *ctx, uint8_t port, int index, uint8_t gid[16],
		       uint32_t *gid_type);

/*
 * ---------------------------------------------------------------------------
 * Control requests for libraries on liburoce (drivers/rdmacm)
 * ---------------------------------------------------------------------------
 */

/**
 * Send one request of the control protocol (lib/shm, e.g. the CM_* requests
 * of ABI 1.4) on @p ctx's session and wait for its response, exactly as
 * liburoce's own calls do (one at a time per context; events that arrive
 * meanwhile are kept for uroce_get_async_event()).
 * @param fd_in   a descriptor to pass with the request, or -1
 * @param fd_out  set to the descriptor of the response, or -1 (may be NULL)
 * @return the daemon's status (0 or -errno); -EINVAL (NULL context, or a
 *   length that is not the type's), -ENOTCONN (daemon gone), -ETIMEDOUT,
 *   -EPROTO (a malformed response).
 */
int uroce_ctl_call(struct uroce_context *ctx, uint16_t type, const void *req, size_t req_len,
		   int fd_in, void *resp, size_t resp_len, int *fd_out);

/** The ABI minor the daemon said it speaks at HELLO (1.4 has rdma_cm). */
uint16_t uroce_daemon_abi_minor(const struct uroce_context *ctx);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_VERBS_H */
