/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The control protocol of the shared-memory ABI: messages over the daemon's
 * UNIX SOCK_SEQPACKET socket (one message per record, at most one descriptor
 * passed with SCM_RIGHTS), their header, types and resource bodies, the
 * checks every received message goes through before a body field is read,
 * and the socket helpers. Introspection and generator bodies have headers of
 * their own (uroce_shm_introspect.h, uroce_shm_gen.h).
 */

#ifndef UROCE_SHM_CTRL_H
#define UROCE_SHM_CTRL_H

#include "uroce_shm_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * ---------------------------------------------------------------------------
 * Control protocol (UNIX SOCK_SEQPACKET socket, one message per record)
 * ---------------------------------------------------------------------------
 */

/** "UROC", first word of every control message. */
#define UROCE_SHM_MSG_MAGIC 0x434f5255u
/** Largest control message, header included. */
#define UROCE_SHM_MSG_MAX 512u
/** Handle value meaning "none" (e.g. no SRQ). */
#define UROCE_SHM_HANDLE_NONE 0xffffffffu

/** Message types. Values are ABI; a new type needs a new minor. */
enum uroce_shm_msg_type {
	UROCE_SHM_MSG_HELLO = 1,
	UROCE_SHM_MSG_ALLOC_SEGMENT = 2,
	UROCE_SHM_MSG_FREE_SEGMENT = 3,
	UROCE_SHM_MSG_ALLOC_PD = 4,
	UROCE_SHM_MSG_DEALLOC_PD = 5,
	UROCE_SHM_MSG_REG_MR = 6,
	UROCE_SHM_MSG_DEREG_MR = 7,
	UROCE_SHM_MSG_CREATE_CQ = 8,
	UROCE_SHM_MSG_DESTROY_CQ = 9,
	UROCE_SHM_MSG_CREATE_QP = 10,
	UROCE_SHM_MSG_DESTROY_QP = 11,
	UROCE_SHM_MSG_MODIFY_QP = 12,
	UROCE_SHM_MSG_QUERY_QP = 13,
	UROCE_SHM_MSG_CREATE_SRQ = 14,
	UROCE_SHM_MSG_DESTROY_SRQ = 15,
	UROCE_SHM_MSG_MODIFY_SRQ = 16,
	UROCE_SHM_MSG_QUERY_SRQ = 17,
	UROCE_SHM_MSG_CREATE_AH = 18,
	UROCE_SHM_MSG_DESTROY_AH = 19,
	UROCE_SHM_MSG_QUERY_DEVICE = 20,
	UROCE_SHM_MSG_QUERY_PORT = 21,
	UROCE_SHM_MSG_QUERY_GID = 22,
	UROCE_SHM_MSG_ASYNC_EVENT = 23, /**< daemon to client only, seq 0 */
	/* ABI 1.1: read-only introspection for uroce-ctl (doc/shm-abi.md). */
	UROCE_SHM_MSG_LIST_SESSIONS = 24,
	UROCE_SHM_MSG_LIST_QPS = 25,
	UROCE_SHM_MSG_QUERY_COUNTERS = 26,
	/* ABI 1.2 */
	UROCE_SHM_MSG_LIST_WORKERS = 27,
	/* ABI 1.3: the lcore load generator (doc/loadgen.md, doc/shm-abi.md). */
	UROCE_SHM_MSG_GEN_CREATE = 28,
	UROCE_SHM_MSG_GEN_QPS = 29,
	UROCE_SHM_MSG_GEN_CONNECT = 30,
	UROCE_SHM_MSG_GEN_START = 31,
	UROCE_SHM_MSG_GEN_STATS = 32,
	UROCE_SHM_MSG_GEN_DESTROY = 33,
	/* ABI 1.4: rdma_cm (uroce_shm_cm.h, doc/shm-abi.md). */
	UROCE_SHM_MSG_CM_CHANNEL_OPEN = 34,
	UROCE_SHM_MSG_CM_CHANNEL_CLOSE = 35,
	UROCE_SHM_MSG_CM_CREATE_ID = 36,
	UROCE_SHM_MSG_CM_DESTROY_ID = 37,
	UROCE_SHM_MSG_CM_MIGRATE_ID = 38,
	UROCE_SHM_MSG_CM_SET_OPTION = 39,
	UROCE_SHM_MSG_CM_BIND = 40,
	UROCE_SHM_MSG_CM_RESOLVE_ADDR = 41,
	UROCE_SHM_MSG_CM_RESOLVE_ROUTE = 42,
	UROCE_SHM_MSG_CM_LISTEN = 43,
	UROCE_SHM_MSG_CM_CONNECT = 44,
	UROCE_SHM_MSG_CM_ACCEPT = 45,
	UROCE_SHM_MSG_CM_REJECT = 46,
	UROCE_SHM_MSG_CM_ESTABLISH = 47,
	UROCE_SHM_MSG_CM_DISCONNECT = 48,
	UROCE_SHM_MSG_CM_NOTIFY = 49,
	UROCE_SHM_MSG_CM_INIT_QP_ATTR = 50,
	UROCE_SHM_MSG_CM_QUERY = 51,
	UROCE_SHM_MSG_CM_EVENT = 52, /**< daemon to client only, on an event channel, seq 0 */
	/* ABI 1.5: the status segment (uroce_shm_status.h), memory windows
	 * (doc/shm-abi.md). */
	UROCE_SHM_MSG_GET_STATUS = 53,
	UROCE_SHM_MSG_ALLOC_MW = 54,
	UROCE_SHM_MSG_DEALLOC_MW = 55,
	UROCE_SHM_MSG_RESIZE_CQ = 56,
	UROCE_SHM_MSG_REREG_MR = 57,
	/* ABI 1.7: XRC (doc/shm-abi.md) */
	UROCE_SHM_MSG_OPEN_XRCD = 58,
	UROCE_SHM_MSG_CLOSE_XRCD = 59,
	UROCE_SHM_MSG_CREATE_XRC_SRQ = 60,
	/* ABI 1.8: CQ moderation (ibv_modify_cq) */
	UROCE_SHM_MSG_MODIFY_CQ = 61,
	UROCE_SHM_MSG_TYPE_MAX = 61,
};

/** Header flag: the message comes from the daemon (a response or an event). */
#define UROCE_SHM_MSG_F_FROM_DAEMON (1u << 0)

/**
 * Header of every control message. magic, abi_major, type and length keep
 * these offsets in every major version, so a peer can always tell "wrong
 * version" from "garbage".
 */
struct uroce_shm_msg_hdr {
	uint32_t magic;     /**< UROCE_SHM_MSG_MAGIC */
	uint16_t abi_major; /**< UROCE_SHM_ABI_MAJOR of the sender */
	uint16_t type;      /**< enum uroce_shm_msg_type */
	uint32_t length;    /**< whole message, header included */
	uint32_t seq;       /**< request sequence; a response echoes it */
	int32_t status;     /**< response: 0 or -errno; request: 0 */
	uint16_t flags;     /**< UROCE_SHM_MSG_F_* */
	uint16_t reserved;  /**< must be 0 */
};
UROCE_SHM_OFF(struct uroce_shm_msg_hdr, abi_major, 4);
UROCE_SHM_OFF(struct uroce_shm_msg_hdr, type, 6);
UROCE_SHM_OFF(struct uroce_shm_msg_hdr, length, 8);
UROCE_SHM_OFF(struct uroce_shm_msg_hdr, seq, 12);
UROCE_SHM_OFF(struct uroce_shm_msg_hdr, status, 16);
UROCE_SHM_OFF(struct uroce_shm_msg_hdr, flags, 20);
UROCE_SHM_SIZE(struct uroce_shm_msg_hdr, 24);

/** Body that carries only a handle (DESTROY_*, DEALLOC_PD, DEREG_MR, ...). */
struct uroce_shm_msg_handle {
	uint32_t handle;
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_handle, 8);

/** HELLO request. The first 4 bytes are frozen in every major. */
struct uroce_shm_msg_hello_req {
	uint16_t abi_major;
	uint16_t abi_minor;
	uint32_t flags;     /**< must be 0 */
	char name[32];      /**< client's name for uroce-ctl, NUL-padded */
};
UROCE_SHM_OFF(struct uroce_shm_msg_hello_req, name, 8);
UROCE_SHM_SIZE(struct uroce_shm_msg_hello_req, 40);

/** HELLO response; carries the doorbell segment fd on success. The first
 * 4 bytes are frozen in every major, so a refused client can print them. */
struct uroce_shm_msg_hello_resp {
	uint16_t abi_major;
	uint16_t abi_minor;
	uint32_t client_id;
	uint32_t n_db_blocks;  /**< doorbell blocks in the segment (one per worker) */
	uint32_t db_seg_size;  /**< bytes of the doorbell segment */
	uint32_t max_inline;   /**< UROCE_MAX_INLINE of the daemon */
	uint32_t max_sge;      /**< UROCE_MAX_SGE of the daemon */
	uint32_t max_qp_wr;
	uint32_t max_cqe;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_hello_resp, 32);

/** ALLOC_SEGMENT request: adopt the attached sealed memfd. */
struct uroce_shm_msg_alloc_segment_req {
	uint64_t size;
	uint32_t flags;     /**< UROCE_SHM_SEG_HUGETLB if huge-page backed */
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_alloc_segment_req, 16);

/** ALLOC_SEGMENT response. */
struct uroce_shm_msg_alloc_segment_resp {
	uint32_t seg_handle;
	uint32_t reserved;
	uint64_t size;      /**< bytes the daemon mapped */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_alloc_segment_resp, 16);

/** REG_MR request: a window [seg_offset, seg_offset + length) of a segment. */
struct uroce_shm_msg_reg_mr_req {
	uint32_t pd_handle;
	uint32_t seg_handle;
	uint64_t seg_offset;
	uint64_t length;
	uint64_t iova;      /**< client address of the first byte */
	uint32_t access;    /**< enum uroce_access_flags */
	uint32_t reserved;
};
UROCE_SHM_OFF(struct uroce_shm_msg_reg_mr_req, iova, 24);
UROCE_SHM_SIZE(struct uroce_shm_msg_reg_mr_req, 40);

/** REG_MR response. */
struct uroce_shm_msg_reg_mr_resp {
	uint32_t mr_handle;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_reg_mr_resp, 16);

/** ALLOC_MW request (ABI 1.5). */
struct uroce_shm_msg_alloc_mw_req {
	uint32_t pd_handle;
	uint32_t type;      /**< enum uroce_mw_type */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_alloc_mw_req, 8);

/** ALLOC_MW response: the window's handle and its first rkey. */
struct uroce_shm_msg_alloc_mw_resp {
	uint32_t mw_handle;
	uint32_t rkey;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_alloc_mw_resp, 8);

/** REREG_MR flags (the values of enum ibv_rereg_mr_flags). */
#define UROCE_SHM_REREG_TRANSLATION (1u << 0)
#define UROCE_SHM_REREG_PD (1u << 1)
#define UROCE_SHM_REREG_ACCESS (1u << 2)

/**
 * REREG_MR request (ABI 1.5; ibv_rereg_mr): change what flags say of MR
 * mr_handle, keeping its keys; fields of a change not asked for are ignored
 * (translation: seg_handle, seg_offset, length, iova; PD: pd_handle; access:
 * access). The response is REG_MR's. On an error the MR is unchanged.
 */
struct uroce_shm_msg_rereg_mr_req {
	uint32_t mr_handle;
	uint32_t flags;     /**< UROCE_SHM_REREG_* */
	uint32_t pd_handle;
	uint32_t seg_handle;
	uint64_t seg_offset;
	uint64_t length;
	uint64_t iova;
	uint32_t access;
	uint32_t reserved;
};
UROCE_SHM_OFF(struct uroce_shm_msg_rereg_mr_req, seg_offset, 16);
UROCE_SHM_SIZE(struct uroce_shm_msg_rereg_mr_req, 48);

/** CQ flag: the request carries an eventfd for blocking completions. */
#define UROCE_SHM_CQ_F_EVENTFD (1u << 0)

/** CREATE_CQ request; may carry an eventfd. */
struct uroce_shm_msg_create_cq_req {
	uint32_t cqe;         /**< minimum entries */
	uint32_t comp_vector;
	uint32_t flags;       /**< UROCE_SHM_CQ_F_* */
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_create_cq_req, 16);

/** CREATE_CQ response; carries the CQ segment fd on success. */
struct uroce_shm_msg_create_cq_resp {
	uint32_t cq_handle;
	uint32_t cqe;         /**< ring entries (power of two) */
	uint64_t seg_size;
	uint32_t ring_offset;
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_create_cq_resp, 24);

/**
 * RESIZE_CQ request (ABI 1.5; ibv_resize_cq). The daemon moves the CQEs not
 * yet consumed into a new ring of at least cqe entries, at the same indices,
 * and answers as CREATE_CQ does, with the new segment's fd; the client
 * switches to it and must not consume from the CQ meanwhile. -EINVAL if the
 * CQ holds more CQEs than cqe.
 */
struct uroce_shm_msg_resize_cq_req {
	uint32_t cq_handle;
	uint32_t cqe;         /**< minimum entries */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_resize_cq_req, 8);

/**
 * MODIFY_CQ request (ABI 1.8, ibv_modify_cq with IBV_CQ_ATTR_MODERATE). While
 * the CQ is armed, its event waits until cq_count CQEs have been written since
 * the first that the arm asked an event for, or cq_period microseconds after
 * that one, whichever comes first. cq_period 0 turns moderation off (the
 * default: an event per arm at once); cq_count 0 leaves only the period.
 * -EINVAL for another mask bit, cq_period above UROCE_CQ_PERIOD_MAX or a
 * nonzero reserved field.
 */
struct uroce_shm_msg_modify_cq_req {
	uint32_t cq_handle;
	uint32_t attr_mask;   /**< UROCE_CQ_ATTR_MODERATE */
	uint16_t cq_count;
	uint16_t cq_period;   /**< microseconds */
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_modify_cq_req, 16);

/** QP capabilities (ibv_qp_cap). */
struct uroce_shm_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_qp_cap, 24);

/** Address vector (ibv_ah_attr with its GRH; RoCE is always global). */
struct uroce_shm_ah_attr {
	uint8_t dgid[16];
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t sl;
	uint8_t port_num;
	uint8_t static_rate;
	uint8_t is_global;
	uint8_t reserved0;
	uint32_t reserved1;
};
UROCE_SHM_OFF(struct uroce_shm_ah_attr, flow_label, 16);
UROCE_SHM_OFF(struct uroce_shm_ah_attr, port_num, 24);
UROCE_SHM_SIZE(struct uroce_shm_ah_attr, 32);

/** QP attributes (ibv_qp_attr subset uroce supports). */
struct uroce_shm_qp_attr {
	uint32_t qp_state;        /**< enum uroce_qp_state */
	uint32_t cur_qp_state;
	uint32_t path_mtu;        /**< IBA MTU enum, 1 (256) .. 5 (4096) */
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qp_access_flags; /**< enum uroce_access_flags */
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t sq_draining;
	uint16_t reserved0;
	uint32_t reserved1;
	struct uroce_shm_ah_attr ah_attr;
};
UROCE_SHM_OFF(struct uroce_shm_qp_attr, pkey_index, 32);
UROCE_SHM_OFF(struct uroce_shm_qp_attr, rnr_retry, 40);
UROCE_SHM_OFF(struct uroce_shm_qp_attr, ah_attr, 48);
UROCE_SHM_SIZE(struct uroce_shm_qp_attr, 80);

/** CREATE_QP request. */
struct uroce_shm_msg_create_qp_req {
	uint32_t pd_handle;
	uint32_t send_cq;
	uint32_t recv_cq;
	uint32_t srq_handle;  /**< or UROCE_SHM_HANDLE_NONE */
	/** enum uroce_qp_type. ABI 1.7: XRC_SEND (an initiator: send queue
	 * only, recv_cq ignored but valid) and XRC_RECV (a target: pd_handle
	 * names its XRC domain, both CQs and the SRQ are
	 * UROCE_SHM_HANDLE_NONE, all capacities 0; it has no queues) */
	uint32_t qp_type;
	uint32_t sq_sig_all;
	struct uroce_shm_qp_cap cap;
};
UROCE_SHM_OFF(struct uroce_shm_msg_create_qp_req, cap, 24);
UROCE_SHM_SIZE(struct uroce_shm_msg_create_qp_req, 48);

/** CREATE_QP response; carries the QP segment fd (SQ and RQ rings) on success. */
struct uroce_shm_msg_create_qp_resp {
	uint32_t qp_handle;
	uint32_t qp_num;
	struct uroce_shm_qp_cap cap; /**< actual capabilities */
	uint64_t seg_size;
	uint32_t sq_offset;
	uint32_t rq_offset;
	uint32_t db_block;           /**< doorbell block index in the HELLO segment */
	uint32_t db_slot;            /**< slot within that block */
};
UROCE_SHM_OFF(struct uroce_shm_msg_create_qp_resp, seg_size, 32);
UROCE_SHM_SIZE(struct uroce_shm_msg_create_qp_resp, 56);

/** MODIFY_QP request. */
struct uroce_shm_msg_modify_qp_req {
	uint32_t qp_handle;
	uint32_t attr_mask;          /**< enum uroce_qp_attr_mask */
	struct uroce_shm_qp_attr attr;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_modify_qp_req, 88);

/** QUERY_QP request. */
struct uroce_shm_msg_query_qp_req {
	uint32_t qp_handle;
	uint32_t attr_mask;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_qp_req, 8);

/** QUERY_QP response. */
struct uroce_shm_msg_query_qp_resp {
	struct uroce_shm_qp_attr attr;
	struct uroce_shm_qp_cap cap;
	uint32_t qp_type;
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_qp_resp, 112);

/** CREATE_SRQ request. */
struct uroce_shm_msg_create_srq_req {
	uint32_t pd_handle;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_create_srq_req, 16);

/**
 * CREATE_SRQ response; carries the SRQ segment fd on success. Since ABI 1.1 an
 * SRQ has a doorbell slot like a QP's, in the same slot space of the HELLO
 * doorbell segment (a slot names either one QP or one SRQ): the client rings
 * it after publishing receive WQEs, so the daemon finds SRQ work in O(1). The
 * two words were reserved (zero) in 1.0, which is why the size is unchanged.
 */
struct uroce_shm_msg_create_srq_resp {
	uint32_t srq_handle;
	uint32_t max_wr;      /**< ring entries (power of two) */
	uint32_t max_sge;
	uint32_t db_block;    /**< doorbell block index in the HELLO segment (1.1; was reserved) */
	uint64_t seg_size;
	uint32_t ring_offset;
	uint32_t db_slot;     /**< slot within that block (1.1; was reserved) */
};
UROCE_SHM_OFF(struct uroce_shm_msg_create_srq_resp, db_block, 12);
UROCE_SHM_OFF(struct uroce_shm_msg_create_srq_resp, seg_size, 16);
UROCE_SHM_OFF(struct uroce_shm_msg_create_srq_resp, ring_offset, 24);
UROCE_SHM_OFF(struct uroce_shm_msg_create_srq_resp, db_slot, 28);
UROCE_SHM_SIZE(struct uroce_shm_msg_create_srq_resp, 32);

/**
 * CREATE_XRC_SRQ request (ABI 1.7, IBA 1.2 XRC): an SRQ of PD @c pd_handle in
 * the XRC domain @c xrcd_handle (from OPEN_XRCD) whose receives complete to
 * @c cq_handle. It is placed at once, with its domain's TGT QPs (the CQ must
 * be on that worker or unplaced: -EXDEV otherwise).
 */
struct uroce_shm_msg_create_xrc_srq_req {
	uint32_t pd_handle;
	uint32_t xrcd_handle;
	uint32_t cq_handle;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_create_xrc_srq_req, 24);

/** CREATE_XRC_SRQ response: CREATE_SRQ's, and the SRQ number remote XRC
 * requests name (ibv_get_srq_num). Carries the SRQ segment fd. */
struct uroce_shm_msg_create_xrc_srq_resp {
	struct uroce_shm_msg_create_srq_resp srq;
	uint32_t srq_num;
	uint32_t reserved;
};
UROCE_SHM_OFF(struct uroce_shm_msg_create_xrc_srq_resp, srq_num, 32);
UROCE_SHM_SIZE(struct uroce_shm_msg_create_xrc_srq_resp, 40);

/** MODIFY_SRQ mask bits (ibv_srq_attr_mask values). */
#define UROCE_SRQ_MAX_WR (1u << 0)
#define UROCE_SRQ_LIMIT (1u << 1)

/** MODIFY_SRQ request. */
struct uroce_shm_msg_modify_srq_req {
	uint32_t srq_handle;
	uint32_t attr_mask;
	uint32_t max_wr;
	uint32_t srq_limit;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_modify_srq_req, 16);

/** QUERY_SRQ response. */
struct uroce_shm_msg_query_srq_resp {
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_srq_resp, 16);

/** CREATE_AH request. */
struct uroce_shm_msg_create_ah_req {
	uint32_t pd_handle;
	uint32_t reserved;
	struct uroce_shm_ah_attr attr;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_create_ah_req, 40);

/** QUERY_DEVICE response (ibv_device_attr subset). */
struct uroce_shm_msg_query_device_resp {
	uint64_t node_guid;
	uint64_t sys_image_guid;
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	uint32_t max_qp;
	uint32_t max_qp_wr;
	uint32_t device_cap_flags;
	uint32_t max_sge;
	uint32_t max_cq;
	uint32_t max_cqe;
	uint32_t max_mr;
	uint32_t max_pd;
	uint32_t max_qp_rd_atom;
	uint32_t max_qp_init_rd_atom;
	uint32_t max_srq;
	uint32_t max_srq_wr;
	uint32_t max_srq_sge;
	uint32_t max_ah;
	uint32_t max_inline_data;
	uint8_t atomic_cap;          /**< enum uroce_atomic_cap */
	uint8_t phys_port_cnt;
	uint16_t max_pkeys;
	uint32_t reserved;
};
UROCE_SHM_OFF(struct uroce_shm_msg_query_device_resp, vendor_id, 32);
UROCE_SHM_OFF(struct uroce_shm_msg_query_device_resp, atomic_cap, 104);
UROCE_SHM_SIZE(struct uroce_shm_msg_query_device_resp, 112);

/** QUERY_PORT request. */
struct uroce_shm_msg_query_port_req {
	uint8_t port_num;
	uint8_t reserved[7];
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_port_req, 8);

/** QUERY_PORT response (ibv_port_attr subset). */
struct uroce_shm_msg_query_port_resp {
	uint32_t state;
	uint32_t max_mtu;
	uint32_t active_mtu;
	uint32_t gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint16_t pkey_tbl_len;
	uint8_t active_speed;
	uint8_t active_width;
	uint8_t phys_state;
	uint8_t link_layer;
	uint16_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_port_resp, 32);

/** QUERY_GID request. */
struct uroce_shm_msg_query_gid_req {
	uint8_t port_num;
	uint8_t reserved[3];
	uint32_t index;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_gid_req, 8);

/** QUERY_GID response. */
struct uroce_shm_msg_query_gid_resp {
	uint8_t gid[16];
	uint32_t gid_type;  /**< 0: IB/RoCEv1, 1: RoCEv2 (as ibv_gid_type) */
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_gid_resp, 24);

/**
 * ASYNC_EVENT (daemon to client), header seq 0, status 0. Sent unprompted
 * since ABI 1.1 when the engine reports an event on one of the client's
 * objects (QP fatal, SQ drained, CQ overrun, SRQ limit reached, last WQE
 * reached). The daemon never blocks on it: when the client's socket is more
 * than half full the event is dropped and counted (doc/shm-abi.md).
 */
struct uroce_shm_msg_async_event {
	uint32_t event_type; /**< enum uroce_async_event_type (ibv_event_type value) */
	uint32_t handle;     /**< QP, CQ or SRQ handle, or UROCE_SHM_HANDLE_NONE */
	uint64_t reserved;   /**< 0 */
};
UROCE_SHM_OFF(struct uroce_shm_msg_async_event, handle, 4);
UROCE_SHM_SIZE(struct uroce_shm_msg_async_event, 16);


/** Whether a message carries a file descriptor (SCM_RIGHTS). */
enum uroce_shm_msg_fd_rule {
	UROCE_SHM_FD_NONE = 0,     /**< never */
	UROCE_SHM_FD_REQUIRED = 1, /**< always (on responses: when status is 0) */
	UROCE_SHM_FD_OPTIONAL = 2, /**< may */
};

/**
 * Body length of a message type in one direction.
 *
 * @return bytes (0 for an empty body), -EOPNOTSUPP (unknown type), or
 *   -EBADMSG (the type does not exist in that direction).
 */
int uroce_shm_msg_body_len(uint16_t type, bool from_daemon);

/** File-descriptor rule of a type in one direction (UROCE_SHM_FD_NONE if unknown). */
enum uroce_shm_msg_fd_rule uroce_shm_msg_fd_rule(uint16_t type, bool from_daemon);

/** Name of a message type ("HELLO"), or "UNKNOWN". */
const char *uroce_shm_msg_type_name(uint16_t type);

/**
 * Write a header and a zeroed body for a message.
 *
 * @return total length, or -EOPNOTSUPP / -EBADMSG as uroce_shm_msg_body_len(),
 *   -ENOSPC (cap too small), -EINVAL (non-zero status on a request).
 */
int uroce_shm_msg_init(void *buf, size_t cap, uint16_t type, uint32_t seq, bool from_daemon,
		       int32_t status);

/**
 * Validate a received message before any field of its body is used. Checks, in
 * this order: header present, magic, ABI major, reserved header bits, direction
 * flag, type, length, status, file descriptor presence. Body fields (handles,
 * sizes, reserved words) are the daemon's to check against its own records.
 *
 * @param buf  the message (any alignment)
 * @param len  bytes received
 * @param from_daemon  true where the client receives, false where the daemon does
 * @param has_fd  a descriptor came with it
 * @return
 *   0 if valid;
 *   -EMSGSIZE: shorter than a header, or length field or size wrong for the type;
 *   -EPROTO: bad magic, reserved header bits set, status set on a request or
 *   positive on a response;
 *   -EPROTONOSUPPORT: ABI major differs (read the peer's version with
 *   uroce_shm_msg_peer_version());
 *   -EBADMSG: direction flag wrong, or type not valid in that direction;
 *   -EOPNOTSUPP: unknown type;
 *   -EBADF: descriptor missing or unexpected.
 */
int uroce_shm_msg_validate(const void *buf, size_t len, bool from_daemon, bool has_fd);

/**
 * Read the peer's ABI version from any message's frozen prefix (header
 * abi_major, and the minor from a HELLO body), even one that failed validation
 * with -EPROTONOSUPPORT.
 *
 * @return 0, -EMSGSIZE (too short) or -EPROTO (bad magic). minor is set to
 *   0xffff when the message is not a HELLO.
 */
int uroce_shm_msg_peer_version(const void *buf, size_t len, uint16_t *major, uint16_t *minor);

/**
 * Send one message with at most one descriptor (SCM_RIGHTS), MSG_NOSIGNAL.
 *
 * @param fd  descriptor to pass, or -1
 * @return bytes sent, or -EINVAL (len 0 or > UROCE_SHM_MSG_MAX), -EMSGSIZE
 *   (partial send), or the -errno of sendmsg (-EAGAIN, -EPIPE, ...).
 */
ssize_t uroce_shm_sock_send(int sock, const void *buf, size_t len, int fd);

/**
 * Receive one message and at most one descriptor (close-on-exec).
 *
 * @param fd  set to the received descriptor or -1
 * @return bytes received (0 at end of stream), or -EMSGSIZE (message longer
 *   than cap; truncated), -ENOBUFS (control data truncated), -EBADMSG (more
 *   than one descriptor, or an unexpected control message), or the -errno of
 *   recvmsg. On every error no descriptor is left open.
 */
ssize_t uroce_shm_sock_recv(int sock, void *buf, size_t cap, int *fd);

/**
 * The peer's credentials (SO_PEERCRED), which is how the daemon learns a
 * client's pid and uid; the HELLO message does not carry them.
 *
 * @return 0, or the -errno of getsockopt.
 */
int uroce_shm_sock_peercred(int sock, pid_t *pid, uid_t *uid, gid_t *gid);

/*
 * ---------------------------------------------------------------------------
 * The client's end: one request at a time, its reply matched by sequence
 * ---------------------------------------------------------------------------
 */

/**
 * The daemon's socket path a client uses: @p opt if not NULL, else
 * $UROCE_SOCKET if set and not empty, else UROCE_DEFAULT_SOCKET.
 */
const char *uroce_shm_socket_path(const char *opt);

/**
 * A client's connection to the daemon's control socket: liburoce's,
 * uroce-ctl's and uroce-perf's. A call sends one request and waits for the
 * reply with its sequence number; an ASYNC_EVENT that arrives meanwhile goes
 * to on_event; a reply to an earlier call that gave up waiting is skipped.
 * Not thread-safe: a caller with threads serialises its calls.
 */
struct uroce_shm_client {
	int fd;                 /**< the socket, -1 when closed */
	uint32_t seq;           /**< sequence of the last request sent */
	uint32_t abandoned;     /**< requests given up (ETIMEDOUT) whose replies may still come */
	int timeout_ms;         /**< how long a call waits between progress checks; -1: for ever */
	/** An ASYNC_EVENT body received while a reply was awaited (may be NULL: dropped). */
	void (*on_event)(void *arg, const void *body);
	/**
	 * Asked each time timeout_ms passes without the reply: true to go on
	 * waiting (the daemon shows it makes progress, only slowly), false to
	 * give up with -ETIMEDOUT. NULL: give up at once.
	 */
	bool (*still_alive)(void *arg);
	void *arg;              /**< for on_event and still_alive */
	uint32_t client_id;     /**< from HELLO */
	uint16_t daemon_minor;  /**< the daemon's ABI minor, from HELLO */
	/** The last call's result is the daemon's answer (its status, 0 or
	 * -errno), not a failure of the exchange: a daemon may answer -ENOTCONN
	 * or -EPROTONOSUPPORT about the request itself. */
	bool replied;
};

/** How long a tool's call waits for its reply (uroce_shm_client_open()). */
#define UROCE_SHM_CLIENT_TIMEOUT_MS 5000

/**
 * Connect @p c to the daemon's socket at @p path (no HELLO yet).
 * @return 0; -ENAMETOOLONG; the -errno of socket() or connect() (-ENOENT,
 *   -ECONNREFUSED: nobody listens; -EACCES: no permission).
 */
int uroce_shm_client_connect(struct uroce_shm_client *c, const char *path);

/**
 * One request and its reply.
 *
 * @param type  enum uroce_shm_msg_type
 * @param req   request body; @p req_len must be the type's body length
 * @param fd_in  descriptor to pass with the request, or -1
 * @param resp  reply body out (on status 0); @p resp_len must be the type's
 *   reply body length
 * @param fd_out  set to the descriptor that came with the reply, or -1 (NULL:
 *   any is closed)
 * @return
 *   0 or the daemon's status (-errno) for the request;
 *   -ETIMEDOUT: no reply and still_alive() said to stop: the connection stays
 *   usable (a later call skips the late reply) and the request may or may not
 *   have taken effect;
 *   -ECONNRESET: the daemon hung up (it is gone);
 *   -EPROTO: a malformed or unexpected reply (the connection cannot be
 *   trusted any more);
 *   -EPROTONOSUPPORT: the daemon speaks another ABI major;
 *   -EINVAL: bad lengths; or the -errno of sendmsg/recvmsg/poll.
 */
int uroce_shm_client_call(struct uroce_shm_client *c, uint16_t type, const void *req,
			  size_t req_len, int fd_in, void *resp, size_t resp_len, int *fd_out);

/**
 * Between calls: read every message waiting on the socket, without
 * blocking. Events go to on_event; late replies of calls given up are
 * skipped.
 * @return 0; -ECONNRESET (the daemon hung up); -EPROTO (a message no request
 *   asked for); or the -errno of recvmsg.
 */
int uroce_shm_client_drain(struct uroce_shm_client *c);

/**
 * Say HELLO as @p name (ABI major and minor of this build).
 * @return as uroce_shm_client_call(); @p fd_out gets the doorbell segment.
 */
int uroce_shm_client_hello(struct uroce_shm_client *c, const char *name,
			   struct uroce_shm_msg_hello_resp *resp, int *fd_out);

/**
 * Connect and say HELLO as a tool that posts nothing (uroce-ctl, uroce-perf's
 * sink): the doorbell segment HELLO passes is closed at once; calls wait
 * UROCE_SHM_CLIENT_TIMEOUT_MS for their reply, events are dropped.
 * @return 0 or -errno as uroce_shm_client_connect() and
 *   uroce_shm_client_call(); on error @p c is closed.
 */
int uroce_shm_client_open(struct uroce_shm_client *c, const char *path, const char *name);

/** One request without descriptors (a tool's call). */
static inline int
uroce_shm_client_request(struct uroce_shm_client *c, uint16_t type, const void *req,
			 size_t req_len, void *resp, size_t resp_len)
{
	return uroce_shm_client_call(c, type, req, req_len, -1, resp, resp_len, NULL);
}

/** Human advice for an error of uroce_shm_client_open() (one sentence). */
const char *uroce_shm_client_advice(int err);

/** Close the connection (the daemon then reclaims the session). */
void uroce_shm_client_close(struct uroce_shm_client *c);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_SHM_CTRL_H */
