/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * Messages of the lcore load generator (ABI 1.3), uroce-ctl gen's control
 * of generators that run on the daemon's workers (doc/loadgen.md).
 */

#ifndef UROCE_SHM_GEN_H
#define UROCE_SHM_GEN_H

#include "uroce_shm_introspect.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The lcore load generator (ABI 1.3). A generator is an object of the
 * session that created it (it goes when the session does): N RC QPs on one
 * worker of the daemon, with a CQ whose completions the worker takes itself,
 * and memory of the daemon's own registered as one MR. An initiator posts
 * work requests into its QPs on its worker; a target answers them, with its
 * memory holding the uroce-lg-1 pattern. uroce-ctl gen creates a target on
 * one daemon and an initiator on the other, exchanges QPNs and PSNs
 * (GEN_QPS, GEN_CONNECT), starts the initiator and reads both
 * (GEN_STATS). Sizes, mixes and the checks: doc/loadgen.md.
 */

/** GEN_CREATE role: posts the work requests. */
#define UROCE_SHM_GEN_INITIATOR 1u
/** GEN_CREATE role: answers them (memory, receives). */
#define UROCE_SHM_GEN_TARGET 2u

/** GEN_CREATE flag: the mix has RDMA READs (initiator: landing memory). */
#define UROCE_SHM_GEN_F_READ (1u << 0)
/** GEN_CREATE flag: the mix has SENDs (target: posted receives). */
#define UROCE_SHM_GEN_F_SEND (1u << 1)
/** GEN_CREATE flag: the mix has atomics (initiator: result memory). */
#define UROCE_SHM_GEN_F_ATOMIC (1u << 2)
/** GEN_CREATE and GEN_START flag: check READ data, atomic results, SEND payloads. */
#define UROCE_SHM_GEN_F_VERIFY (1u << 3)
#define UROCE_SHM_GEN_F_ALL (UROCE_SHM_GEN_F_READ | UROCE_SHM_GEN_F_SEND | \
			     UROCE_SHM_GEN_F_ATOMIC | UROCE_SHM_GEN_F_VERIFY)

/** Most QPs of one generator. */
#define UROCE_SHM_GEN_MAX_QPS 1024u
/** Most bytes of memory one generator may take in the daemon. */
#define UROCE_SHM_GEN_MAX_MEM (512ull << 20)

/** GEN_CREATE request. */
struct uroce_shm_msg_gen_create_req {
	uint32_t role;       /**< UROCE_SHM_GEN_INITIATOR or UROCE_SHM_GEN_TARGET */
	uint32_t n_qps;      /**< 1..UROCE_SHM_GEN_MAX_QPS */
	uint32_t worker;     /**< the worker that runs it, < the daemon's workers */
	uint32_t gid_index;  /**< source GID of its QPs (port 1) */
	uint32_t depth;      /**< initiator: most WRs outstanding per QP; target: receives
				  kept posted per QP (with F_SEND); 1..UROCE_MAX_QP_WR */
	uint32_t flags;      /**< UROCE_SHM_GEN_F_* */
	uint32_t max_size;   /**< largest WRITE, READ or SEND, 1..16 MiB */
	uint32_t reserved;   /**< 0 */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_create_req, 32);

/** GEN_CREATE response. */
struct uroce_shm_msg_gen_create_resp {
	uint32_t gen_id;     /**< the generator's handle within the session */
	uint32_t n_qps;
	uint32_t worker;
	uint32_t win_len;    /**< bytes of each QP's window (uroce_lg_gen_win_len()) */
	uint8_t gid[16];     /**< the QPs' source GID */
	uint32_t rkey;       /**< target: R_Key of its memory; initiator: 0 */
	uint32_t atomic_off; /**< target: offset of QP 0's atomic word from va */
	uint64_t va;         /**< target: address of QP 0's window */
	uint64_t mem_len;    /**< bytes of the generator's memory in the daemon */
	uint32_t active_mtu; /**< the port's active MTU (enum uroce_mtu) */
	uint32_t reserved;
};
UROCE_SHM_OFF(struct uroce_shm_msg_gen_create_resp, gid, 16);
UROCE_SHM_OFF(struct uroce_shm_msg_gen_create_resp, va, 40);
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_create_resp, 64);

/** One QP of a generator: its number and its first send PSN. */
struct uroce_shm_gen_qp {
	uint32_t qpn;
	uint32_t psn;
};
UROCE_SHM_SIZE(struct uroce_shm_gen_qp, 8);

/** QPs per GEN_QPS reply and per GEN_CONNECT request. */
#define UROCE_SHM_GEN_QPS_MAX 48

/** GEN_QPS request: the QPs of a generator from index start (paged). */
struct uroce_shm_msg_gen_qps_req {
	uint32_t gen_id;
	uint32_t start;      /**< QP index */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_qps_req, 8);

/** GEN_QPS response; page.next is the next QP index. */
struct uroce_shm_msg_gen_qps_resp {
	struct uroce_shm_list_page page;
	struct uroce_shm_gen_qp q[UROCE_SHM_GEN_QPS_MAX];
};
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_qps_resp, 8 + 8 * 48);

/**
 * GEN_CONNECT request: QPs first .. first + count - 1 of the generator are
 * joined to the peer's QPs of the same indexes (qpn, and psn: the peer's
 * first send PSN, our expected receive PSN) and brought to RTS. The peer's
 * memory (rkey, va, win_len, atomic_off) is an initiator's to aim at; a
 * target ignores it (zero). timeout is the local ACK timeout of the QPs
 * (IBA 9.7.6.1.3: 4.096 us * 2^timeout; 0 means 14, about 67 ms); with 7
 * retries a silent peer fails the QPs after about 8 x that.
 */
struct uroce_shm_msg_gen_connect_req {
	uint32_t gen_id;
	uint32_t first;
	uint32_t count;          /**< 1..UROCE_SHM_GEN_QPS_MAX */
	uint32_t path_mtu;       /**< enum uroce_mtu, at most the port's active MTU */
	uint8_t peer_gid[16];
	uint32_t peer_rkey;
	uint32_t peer_win_len;
	uint64_t peer_va;
	uint32_t peer_atomic_off;
	uint32_t timeout;        /**< local ACK timeout exponent, 1..31; 0: 14 */
	struct uroce_shm_gen_qp q[UROCE_SHM_GEN_QPS_MAX];
};
UROCE_SHM_OFF(struct uroce_shm_msg_gen_connect_req, peer_va, 40);
UROCE_SHM_OFF(struct uroce_shm_msg_gen_connect_req, q, 56);
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_connect_req, 56 + 8 * 48);

/** GEN_CONNECT response. */
struct uroce_shm_msg_gen_connect_resp {
	uint32_t connected;      /**< QPs of the generator connected so far */
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_connect_resp, 8);

/** One entry of a mix (struct uroce_lg_mix_entry of lib/loadgen). */
struct uroce_shm_gen_mix {
	uint32_t op;             /**< enum uroce_lg_op */
	uint32_t size;
	uint32_t weight;
};
UROCE_SHM_SIZE(struct uroce_shm_gen_mix, 12);

/** Entries of a GEN_START mix. */
#define UROCE_SHM_GEN_MIX_MAX 16

/** GEN_START request: an initiator whose QPs are all connected starts. */
struct uroce_shm_msg_gen_start_req {
	uint32_t gen_id;
	uint32_t n_mix;          /**< 1..UROCE_SHM_GEN_MIX_MAX */
	uint32_t window;         /**< WRs outstanding per QP, 1..the created depth */
	uint32_t flags;          /**< UROCE_SHM_GEN_F_VERIFY (if created with it) */
	uint64_t rate;           /**< messages per second over all QPs; 0: no limit */
	uint64_t duration_us;    /**< stop posting after this; 0: no limit */
	uint64_t count;          /**< stop posting after this many messages; 0: no limit */
	uint64_t seed;           /**< order of the mix (uroce_lg_mix_table()) */
	struct uroce_shm_gen_mix mix[UROCE_SHM_GEN_MIX_MAX];
};
UROCE_SHM_OFF(struct uroce_shm_msg_gen_start_req, rate, 16);
UROCE_SHM_OFF(struct uroce_shm_msg_gen_start_req, mix, 48);
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_start_req, 48 + 12 * 16);

/** A generator's state (GEN_STATS). */
enum uroce_shm_gen_state {
	UROCE_SHM_GEN_CREATED = 0,   /**< QPs exist, not all connected */
	UROCE_SHM_GEN_READY = 1,     /**< every QP connected (a target: answering) */
	UROCE_SHM_GEN_RUNNING = 2,   /**< posting */
	UROCE_SHM_GEN_DRAINING = 3,  /**< done posting, WRs still outstanding */
	UROCE_SHM_GEN_DONE = 4,      /**< every WR completed, none in error */
	UROCE_SHM_GEN_FAILED = 5,    /**< a completion in error; every WR completed or flushed */
};

/** GEN_STATS request flag: a target checks its windows and atomic words now. */
#define UROCE_SHM_GEN_STATS_F_SCAN (1u << 0)

/** GEN_STATS request. */
struct uroce_shm_msg_gen_stats_req {
	uint32_t gen_id;
	uint32_t flags;          /**< UROCE_SHM_GEN_STATS_F_* */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_stats_req, 8);

/** GEN_STATS response: what the generator did since GEN_START (or creation). */
struct uroce_shm_msg_gen_stats_resp {
	uint32_t state;          /**< enum uroce_shm_gen_state */
	uint32_t role;
	uint32_t worker;
	uint32_t n_qps;
	uint32_t err_status;     /**< first error completion: enum uroce_wc_status */
	uint32_t err_qpn;        /**< ... its QP */
	uint32_t err_op;         /**< ... its operation (enum uroce_lg_op) */
	uint32_t reserved;
	uint64_t elapsed_us;     /**< since GEN_START, until every WR completed */
	uint64_t posted;         /**< WRs posted (target: receives posted) */
	uint64_t completed;      /**< completions in success */
	uint64_t errors;         /**< completions in error (flushes included) */
	uint64_t bytes;          /**< bytes of the successful completions */
	uint64_t verify_bad;     /**< READ data, atomic results or SEND payloads that failed */
	uint64_t order_bad;      /**< completions out of posting order (RC forbids it) */
	uint64_t outstanding;    /**< WRs posted, not completed */
	uint64_t op_msgs[5];     /**< successful completions per enum uroce_lg_op */
	uint64_t recv;           /**< target: SENDs received */
	uint64_t recv_bytes;
	uint64_t scan_bytes;     /**< target, F_SCAN: window bytes checked */
	uint64_t scan_bad;       /**< ... bytes that did not hold the pattern */
	uint64_t atomic_digest;  /**< uroce_lg_atomic_digest() of the atomic words (an
				      initiator: of its model, once every atomic completed) */
	uint64_t retransmits;    /**< the transport counters of its QPs, summed */
	uint64_t tx_packets;
	uint64_t rx_packets;
};
UROCE_SHM_OFF(struct uroce_shm_msg_gen_stats_resp, elapsed_us, 32);
UROCE_SHM_OFF(struct uroce_shm_msg_gen_stats_resp, op_msgs, 96);
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_stats_resp, 200);

UROCE_SHM_STATIC_ASSERT(sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_gen_connect_req) <= UROCE_SHM_MSG_MAX &&
			sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_gen_qps_resp) <= UROCE_SHM_MSG_MAX &&
			sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_gen_start_req) <= UROCE_SHM_MSG_MAX,
			"generator messages fit one message");

#ifdef __cplusplus
}
#endif

#endif /* UROCE_SHM_GEN_H */
