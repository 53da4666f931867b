/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * Introspection messages of the control protocol (ABI 1.1, 1.2): sessions,
 * QPs, counters and workers, read-only, for uroce-ctl and uroce-perf.
 */

#ifndef UROCE_SHM_INTROSPECT_H
#define UROCE_SHM_INTROSPECT_H

#include "uroce_shm_ctrl.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Introspection (ABI 1.1): LIST_SESSIONS, LIST_QPS and QUERY_COUNTERS are
 * read-only and served to any session that passed HELLO. A client whose uid
 * is 0 or the daemon's own uid sees every session and QP; any other client
 * sees only those of its own uid (a QPN or counter of a QP it may not see is
 * answered -ENOENT, exactly as a QPN that does not exist).
 *
 * Paging: a reply carries a fixed number of entries (a message is at most
 * UROCE_SHM_MSG_MAX bytes). Entries come in ascending key order (client id,
 * QPN, counter index), starting at the request's start key. When more remain,
 * the reply sets UROCE_SHM_LIST_F_MORE and next, the start key of the next
 * request. Keys, not positions, so objects created or destroyed between two
 * requests never shift the rest of the list: nothing that lives through the
 * whole walk is skipped or listed twice. Each page is read when its request is
 * answered; the pages of one walk are not a single snapshot.
 */

/** List reply flag: entries remain; ask again with start = next. */
#define UROCE_SHM_LIST_F_MORE (1u << 0)

/** LIST_SESSIONS and LIST_QPS request. */
struct uroce_shm_msg_list_req {
	uint32_t start; /**< first key: client id (LIST_SESSIONS) or QPN (LIST_QPS) */
	uint32_t flags; /**< must be 0 */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_list_req, 8);

/** Paging words at the start of every introspection reply. */
struct uroce_shm_list_page {
	uint16_t count; /**< entries used in this reply */
	uint16_t flags; /**< UROCE_SHM_LIST_F_MORE */
	uint32_t next;  /**< start key of the next request, if UROCE_SHM_LIST_F_MORE */
};
UROCE_SHM_SIZE(struct uroce_shm_list_page, 8);

/** Session flag: the session that sent the request. */
#define UROCE_SHM_SESSION_F_SELF (1u << 0)
/** Session flag: the client completed HELLO. */
#define UROCE_SHM_SESSION_F_HELLO (1u << 1)

/** One client session (LIST_SESSIONS). Object counts are what it holds now. */
struct uroce_shm_session_info {
	uint32_t client_id; /**< HELLO's client_id */
	int32_t pid;        /**< SO_PEERCRED at connect, -1 if unknown */
	uint32_t uid;
	uint32_t flags;     /**< UROCE_SHM_SESSION_F_* */
	uint32_t segments;
	uint32_t pds;
	uint32_t mrs;
	uint32_t cqs;
	uint32_t qps;
	uint32_t ahs;
	uint32_t srqs;
	uint32_t reserved;
};
UROCE_SHM_OFF(struct uroce_shm_session_info, segments, 16);
UROCE_SHM_OFF(struct uroce_shm_session_info, srqs, 40);
UROCE_SHM_SIZE(struct uroce_shm_session_info, 48);

/** Sessions per LIST_SESSIONS reply. */
#define UROCE_SHM_LIST_SESSIONS_MAX 8

/** LIST_SESSIONS response. */
struct uroce_shm_msg_list_sessions_resp {
	struct uroce_shm_list_page page;
	struct uroce_shm_session_info s[UROCE_SHM_LIST_SESSIONS_MAX];
};
UROCE_SHM_SIZE(struct uroce_shm_msg_list_sessions_resp, 8 + 48 * 8);

/** QP flag: a shared ring of the QP was found corrupt; the daemon moved it to ERR. */
#define UROCE_SHM_QP_F_RING_FAILED (1u << 0)

/** One QP (LIST_QPS). */
struct uroce_shm_qp_info {
	uint32_t qp_num;
	uint32_t client_id;   /**< owner session */
	int32_t pid;          /**< owner's pid, -1 if unknown */
	uint8_t qp_type;      /**< enum uroce_qp_type */
	uint8_t qp_state;     /**< enum uroce_qp_state */
	uint8_t path_mtu;     /**< IBA MTU enum 1 (256) .. 5 (4096), as the engine holds it */
	uint8_t flags;        /**< UROCE_SHM_QP_F_* */
	uint32_t sq_psn;      /**< next PSN the requester sends */
	uint32_t rq_psn;      /**< PSN the responder expects */
	uint32_t dest_qp_num; /**< RC/UC remote QPN */
	uint32_t max_send_wr; /**< ring sizes */
	uint32_t max_recv_wr;
	/** Send WQEs the client posted that the engine has not taken yet (still in
	 * the shared ring, or copied out and waiting for engine room). */
	uint32_t sq_queued;
	uint32_t rq_queued;   /**< the same for receive WQEs */
	uint8_t dgid[16];     /**< RC/UC remote GID */
	uint32_t worker;      /**< the worker that owns it (1.2; was reserved, 0) */
};
UROCE_SHM_OFF(struct uroce_shm_qp_info, qp_type, 12);
UROCE_SHM_OFF(struct uroce_shm_qp_info, dgid, 44);
UROCE_SHM_SIZE(struct uroce_shm_qp_info, 64);

/** QPs per LIST_QPS reply. */
#define UROCE_SHM_LIST_QPS_MAX 7

/** LIST_QPS response. */
struct uroce_shm_msg_list_qps_resp {
	struct uroce_shm_list_page page;
	struct uroce_shm_qp_info q[UROCE_SHM_LIST_QPS_MAX];
};
UROCE_SHM_SIZE(struct uroce_shm_msg_list_qps_resp, 8 + 64 * 7);

/** QUERY_COUNTERS scope: the daemon and its transport engine as a whole. */
#define UROCE_SHM_COUNTERS_DEVICE 0u
/** QUERY_COUNTERS scope: one QP's transport counters. */
#define UROCE_SHM_COUNTERS_QP 1u

/** Counter group: the daemon's own (control messages, sessions, rings). */
#define UROCE_SHM_COUNTER_G_DAEMON 0u
/** Counter group: transport engine (names from lib/transport/counters.def). */
#define UROCE_SHM_COUNTER_G_TRANSPORT 1u
/**
 * Counter group (QP scope, after the transport group): the QP's congestion
 * control, values rather than counters: its DCQCN state (rp_current_rate_kbps,
 * ...) and its parameters (lib/transport/cc_params.def). ABI 1.1 clients show
 * an unknown group under a name of their own.
 */
#define UROCE_SHM_COUNTER_G_CC 2u
/**
 * Counter group (QP scope, after the congestion group): the last request
 * the QP's responder refused, values rather than counters: resp_rejects (how
 * many so far), then the last one's check (enum uroce_resp_check), NAK code
 * (255: dropped without a NAK), opcode, PSN, expected PSN, RETH/AtomicETH
 * VA, R_Key and length, and time (the port's µs clock). Older clients show
 * it as an unknown group.
 */
#define UROCE_SHM_COUNTER_G_RESP_REJECT 3u

/** Longest counter name, NUL included. */
#define UROCE_SHM_COUNTER_NAME_LEN 32

/** QUERY_COUNTERS request. */
struct uroce_shm_msg_query_counters_req {
	uint32_t scope;  /**< UROCE_SHM_COUNTERS_DEVICE or UROCE_SHM_COUNTERS_QP */
	uint32_t qp_num; /**< QP scope: the QPN; device scope: must be 0 */
	uint32_t start;  /**< index of the first counter */
	uint32_t flags;  /**< must be 0 */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_counters_req, 16);

/** One counter: its stable name and value. */
struct uroce_shm_counter {
	char name[UROCE_SHM_COUNTER_NAME_LEN]; /**< NUL-terminated */
	uint64_t value;
	uint8_t group;                         /**< UROCE_SHM_COUNTER_G_* */
	uint8_t reserved[7];
};
UROCE_SHM_OFF(struct uroce_shm_counter, value, 32);
UROCE_SHM_SIZE(struct uroce_shm_counter, 48);

/** Counters per QUERY_COUNTERS reply. */
#define UROCE_SHM_COUNTERS_MAX 9

/** QUERY_COUNTERS response. page.next is the next counter index. */
struct uroce_shm_msg_query_counters_resp {
	struct uroce_shm_list_page page;
	uint32_t total;    /**< counters in this scope */
	uint32_t reserved;
	struct uroce_shm_counter c[UROCE_SHM_COUNTERS_MAX];
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_counters_resp, 16 + 48 * 9);
/**
 * One worker (LIST_WORKERS, ABI 1.2): what it did since the daemon started.
 * Cycle counts come from the shell that runs the worker (uroced: the TSC);
 * a daemon without one reports tsc_hz 0 and no cycles. Cycles per packet
 * are busy_cycles / (rx_packets + tx_packets), per message busy_cycles / wqes.
 */
struct uroce_shm_worker_info {
	uint32_t worker;
	uint32_t qps;         /**< QPs placed on it */
	uint64_t tsc_hz;
	uint64_t busy_cycles; /**< cycles of rounds that found work */
	uint64_t idle_cycles; /**< cycles of rounds that found none (spinning or asleep) */
	uint64_t loops;
	uint64_t rx_packets;  /**< frames its RX queues received */
	uint64_t tx_packets;  /**< frames its TX queues sent */
	uint64_t handoff_in;  /**< frames other workers handed it (their QP's owner) */
	uint64_t handoff_out; /**< frames it handed to another worker */
	uint64_t wqes;        /**< send and receive WQEs taken from client rings */
	uint64_t cqes;        /**< CQEs written to client rings */
	uint64_t roce_rx;     /**< packets its engine received */
	uint64_t roce_tx;     /**< packets its engine sent */
	uint64_t sleeps;      /**< idle back-offs */
};
UROCE_SHM_OFF(struct uroce_shm_worker_info, tsc_hz, 8);
UROCE_SHM_SIZE(struct uroce_shm_worker_info, 112);

/** Workers per LIST_WORKERS reply. */
#define UROCE_SHM_LIST_WORKERS_MAX 3

/** LIST_WORKERS response (request: struct uroce_shm_msg_list_req, start = worker). */
struct uroce_shm_msg_list_workers_resp {
	struct uroce_shm_list_page page;
	struct uroce_shm_worker_info w[UROCE_SHM_LIST_WORKERS_MAX];
};
UROCE_SHM_SIZE(struct uroce_shm_msg_list_workers_resp, 8 + 112 * 3);


UROCE_SHM_STATIC_ASSERT(sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_list_workers_resp) <= UROCE_SHM_MSG_MAX &&
			sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_list_qps_resp) <= UROCE_SHM_MSG_MAX &&
			sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_list_sessions_resp) <= UROCE_SHM_MSG_MAX &&
			sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_query_counters_resp) <= UROCE_SHM_MSG_MAX,
			"introspection replies fit one message");

#ifdef __cplusplus
}
#endif

#endif /* UROCE_SHM_INTROSPECT_H */
