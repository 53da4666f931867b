/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The verbs vocabulary every uroce layer shares: QP types and states, access
 * flags, QP attribute mask bits, MTU, work request opcodes and flags, and work
 * completion status, opcodes and flags. The transport engine, the
 * shared-memory ABI and liburoce all use these names, and the values are
 * libibverbs' own, so drivers/verbs converts nothing and a value on the ABI
 * means the same thing on every side. Defined once, here.
 */

#ifndef UROCE_VERBS_DEFS_H
#define UROCE_VERBS_DEFS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** QP transport service (ibv_qp_type). */
enum uroce_qp_type {
	UROCE_QPT_RC = 2,
	UROCE_QPT_UC = 3,
	UROCE_QPT_UD = 4,
	UROCE_QPT_XRC_SEND = 9,  /**< XRC initiator: send queue only (IBA 1.2 XRC) */
	UROCE_QPT_XRC_RECV = 10, /**< XRC target: in an XRC domain, receives via XRC SRQs */
};

/**
 * Atomicity of remote atomics (ibv_atomic_cap): HCA, only against the
 * device's own atomics; GLOB, also against the CPU's atomics on the word.
 */
enum uroce_atomic_cap {
	UROCE_ATOMIC_NONE = 0,
	UROCE_ATOMIC_HCA = 1,
	UROCE_ATOMIC_GLOB = 2,
};

/** QP state (ibv_qp_state, IBA 10.3.1). */
enum uroce_qp_state {
	UROCE_QPS_RESET = 0,
	UROCE_QPS_INIT = 1,
	UROCE_QPS_RTR = 2,
	UROCE_QPS_RTS = 3,
	UROCE_QPS_SQD = 4,
	UROCE_QPS_SQE = 5,
	UROCE_QPS_ERR = 6,
};

/** Memory access flags (ibv_access_flags). */
enum uroce_access_flags {
	UROCE_ACCESS_LOCAL_WRITE = 1 << 0,
	UROCE_ACCESS_REMOTE_WRITE = 1 << 1,
	UROCE_ACCESS_REMOTE_READ = 1 << 2,
	UROCE_ACCESS_REMOTE_ATOMIC = 1 << 3,
	/** Memory windows may be bound to the MR (IBA 10.6.7, C10-73). */
	UROCE_ACCESS_MW_BIND = 1 << 4,
	/** FLUSH with placement type GLOBAL may target the MR / QP (IBA 1.5
	 * A19; libibverbs' IBV_ACCESS_FLUSH_GLOBAL, rdma-core 45). */
	UROCE_ACCESS_FLUSH_GLOBAL = 1 << 8,
	/** FLUSH with placement type PERSISTENT: accepted on a QP, refused on
	 * an MR (uroce has no persistent-memory MRs, doc/conformance.md). */
	UROCE_ACCESS_FLUSH_PERSISTENT = 1 << 9,
};

/** Every access flag an MR or a QP may carry. */
#define UROCE_ACCESS_FLAGS_ALL \
	(UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ | \
	 UROCE_ACCESS_REMOTE_ATOMIC | UROCE_ACCESS_MW_BIND | UROCE_ACCESS_FLUSH_GLOBAL | \
	 UROCE_ACCESS_FLUSH_PERSISTENT)

/** ibv_modify_cq attr_mask bit: CQ event moderation (IBV_CQ_ATTR_MODERATE). */
#define UROCE_CQ_ATTR_MODERATE (1u << 0)
/** The longest CQ moderation period, in microseconds (a ConnectX's). */
#define UROCE_CQ_PERIOD_MAX 4095u

/** Device capability flags uroce reports (ibv_device_cap_flags values). */
enum uroce_device_cap_flags {
	UROCE_DEVICE_MEM_WINDOW = 1 << 17,
	UROCE_DEVICE_XRC = 1 << 20,          /**< since shm ABI 1.7 (IBA 1.2 XRC) */
	UROCE_DEVICE_MEM_WINDOW_TYPE_2B = 1 << 24,
};

/** Memory window types (ibv_mw_type, IBA 10.6.7). uroce's type 2 is 2B: a
 * bound window is used only through the QP that bound it. */
enum uroce_mw_type {
	UROCE_MW_TYPE_1 = 1,
	UROCE_MW_TYPE_2 = 2,
};

/** uroce_modify_qp() attribute mask (ibv_qp_attr_mask). */
enum uroce_qp_attr_mask {
	UROCE_QP_STATE = 1 << 0,
	UROCE_QP_CUR_STATE = 1 << 1,
	UROCE_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	UROCE_QP_ACCESS_FLAGS = 1 << 3,
	UROCE_QP_PKEY_INDEX = 1 << 4,
	UROCE_QP_PORT = 1 << 5,
	UROCE_QP_QKEY = 1 << 6,
	UROCE_QP_AV = 1 << 7,
	UROCE_QP_PATH_MTU = 1 << 8,
	UROCE_QP_TIMEOUT = 1 << 9,
	UROCE_QP_RETRY_CNT = 1 << 10,
	UROCE_QP_RNR_RETRY = 1 << 11,
	UROCE_QP_RQ_PSN = 1 << 12,
	UROCE_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	UROCE_QP_ALT_PATH = 1 << 14,
	UROCE_QP_MIN_RNR_TIMER = 1 << 15,
	UROCE_QP_SQ_PSN = 1 << 16,
	UROCE_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	UROCE_QP_PATH_MIG_STATE = 1 << 18,
	UROCE_QP_CAP = 1 << 19,
	UROCE_QP_DEST_QPN = 1 << 20,
};

/** Path MTU (ibv_mtu, IBA MTU enum). */
enum uroce_mtu {
	UROCE_MTU_256 = 1,
	UROCE_MTU_512 = 2,
	UROCE_MTU_1024 = 3,
	UROCE_MTU_2048 = 4,
	UROCE_MTU_4096 = 5,
};

/** Send work request opcode (ibv_wr_opcode). */
enum uroce_wr_opcode {
	UROCE_WR_RDMA_WRITE = 0,
	UROCE_WR_RDMA_WRITE_WITH_IMM = 1,
	UROCE_WR_SEND = 2,
	UROCE_WR_SEND_WITH_IMM = 3,
	UROCE_WR_RDMA_READ = 4,
	UROCE_WR_ATOMIC_CMP_AND_SWP = 5,
	UROCE_WR_ATOMIC_FETCH_AND_ADD = 6,
	UROCE_WR_LOCAL_INV = 7,   /**< imm: the type 2 window rkey to invalidate */
	UROCE_WR_BIND_MW = 8,     /**< see struct uroce_wr_send for its fields */
	UROCE_WR_SEND_WITH_INV = 9,
	/** IBA 1.5 FLUSH (ibv_wr_flush, rdma-core 45): see struct uroce_wr_send. */
	UROCE_WR_FLUSH = 14,
	/** IBA 1.5 ATOMIC WRITE (ibv_wr_atomic_write): 8 bytes stored at once. */
	UROCE_WR_ATOMIC_WRITE = 15,
};

/** FLUSH placement types, a set of bits (IBA 1.5 A19.4.1 FETH bits 3:0;
 * rdma-core 45's IBV_FLUSH_GLOBAL, IBV_FLUSH_PERSISTENT). */
enum uroce_flush_type {
	UROCE_FLUSH_GLOBAL = 1,        /**< visible to every later access */
	UROCE_FLUSH_PERSISTENT = 2,    /**< also persistent (pmem: refused by uroce) */
};

/** FLUSH selectivity levels (FETH bits 5:4; IBV_FLUSH_RANGE, IBV_FLUSH_MR). */
enum uroce_flush_level {
	UROCE_FLUSH_RANGE = 0,         /**< [remote_addr, + length) */
	UROCE_FLUSH_MR = 1,            /**< the whole MR (or window) of the rkey */
};

/** Send flags (ibv_send_flags). */
enum uroce_send_flags {
	UROCE_SEND_FENCE = 1 << 0,     /**< wait for prior READ/ATOMIC to complete */
	UROCE_SEND_SIGNALED = 1 << 1,  /**< generate a completion on success */
	UROCE_SEND_SOLICITED = 1 << 2, /**< set the BTH SE bit on the last packet */
	UROCE_SEND_INLINE = 1 << 3,    /**< sg_list addr are process pointers, copied at post */
};

/** Work completion status (ibv_wc_status). */
enum uroce_wc_status {
	UROCE_WC_SUCCESS = 0,
	UROCE_WC_LOC_LEN_ERR = 1,
	UROCE_WC_LOC_QP_OP_ERR = 2,
	UROCE_WC_LOC_EEC_OP_ERR = 3,
	UROCE_WC_LOC_PROT_ERR = 4,
	UROCE_WC_WR_FLUSH_ERR = 5,
	UROCE_WC_MW_BIND_ERR = 6,
	UROCE_WC_BAD_RESP_ERR = 7,
	UROCE_WC_LOC_ACCESS_ERR = 8,
	UROCE_WC_REM_INV_REQ_ERR = 9,
	UROCE_WC_REM_ACCESS_ERR = 10,
	UROCE_WC_REM_OP_ERR = 11,
	UROCE_WC_RETRY_EXC_ERR = 12,
	UROCE_WC_RNR_RETRY_EXC_ERR = 13,
	UROCE_WC_LOC_RDD_VIOL_ERR = 14,
	UROCE_WC_REM_INV_RD_REQ_ERR = 15,
	UROCE_WC_REM_ABORT_ERR = 16,
	UROCE_WC_INV_EECN_ERR = 17,
	UROCE_WC_INV_EEC_STATE_ERR = 18,
	UROCE_WC_FATAL_ERR = 19,
	UROCE_WC_RESP_TIMEOUT_ERR = 20,
	UROCE_WC_GENERAL_ERR = 21,
};

/** The enumerator's name without its prefix ("RETRY_EXC_ERR"), or "unknown status". */
const char *uroce_wc_status_name(uint32_t status);

/** What the status means, in libibverbs' words (ibv_wc_status_str()), or "unknown". */
const char *uroce_wc_status_str(uint32_t status);


/** Work completion opcode (ibv_wc_opcode). */
enum uroce_wc_opcode {
	UROCE_WC_SEND = 0,
	UROCE_WC_RDMA_WRITE = 1,
	UROCE_WC_RDMA_READ = 2,
	UROCE_WC_COMP_SWAP = 3,
	UROCE_WC_FETCH_ADD = 4,
	UROCE_WC_BIND_MW = 5,
	UROCE_WC_LOCAL_INV = 6,
	UROCE_WC_FLUSH = 8,
	UROCE_WC_ATOMIC_WRITE = 9,
	UROCE_WC_RECV = 128,
	UROCE_WC_RECV_RDMA_WITH_IMM = 129,
};

/** Work completion flags (ibv_wc_flags). */
enum uroce_wc_flags {
	UROCE_WC_GRH = 1 << 0,
	UROCE_WC_WITH_IMM = 1 << 1,
	UROCE_WC_IP_CSUM_OK = 1 << 2,
	UROCE_WC_WITH_INV = 1 << 3,
	/** uroce extension: the message carried the BTH SE bit (IBA 9.2); used by
	 * solicited-only CQ arming. drivers/verbs masks it off. */
	UROCE_WC_SOLICITED = 1 << 15,
};

/**
 * Asynchronous event types (ibv_event_type), as the daemon reports them to
 * clients in ASYNC_EVENT messages and liburoce returns them from
 * uroce_get_async_event(). The names carry ASYNC_ because lib/transport's
 * engine-internal enum uroce_event_type already uses UROCE_EVENT_*.
 */
enum uroce_async_event_type {
	UROCE_ASYNC_CQ_ERR = 0,              /**< CQ overrun (IBA 11.4.2.1) */
	UROCE_ASYNC_QP_FATAL = 1,            /**< QP went to ERR on its own */
	UROCE_ASYNC_QP_REQ_ERR = 2,
	UROCE_ASYNC_QP_ACCESS_ERR = 3,
	UROCE_ASYNC_COMM_EST = 4,
	UROCE_ASYNC_SQ_DRAINED = 5,          /**< SQD reached, nothing in flight */
	UROCE_ASYNC_PATH_MIG = 6,
	UROCE_ASYNC_PATH_MIG_ERR = 7,
	UROCE_ASYNC_DEVICE_FATAL = 8,        /**< the daemon is gone */
	UROCE_ASYNC_PORT_ACTIVE = 9,
	UROCE_ASYNC_PORT_ERR = 10,
	UROCE_ASYNC_LID_CHANGE = 11,
	UROCE_ASYNC_PKEY_CHANGE = 12,
	UROCE_ASYNC_SM_CHANGE = 13,
	UROCE_ASYNC_SRQ_ERR = 14,            /**< SRQ ring found corrupt */
	UROCE_ASYNC_SRQ_LIMIT_REACHED = 15,  /**< fewer WQEs than the armed limit */
	UROCE_ASYNC_QP_LAST_WQE_REACHED = 16, /**< an SRQ QP in ERR takes no more WQEs */
	UROCE_ASYNC_CLIENT_REREGISTER = 17,
	UROCE_ASYNC_GID_CHANGE = 18,
	UROCE_ASYNC_WQ_FATAL = 19,
};

#ifdef __cplusplus
}
#endif

#endif /* UROCE_VERBS_DEFS_H */
