/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The uroce daemon core, without DPDK: one transport engine (one worker), a
 * loopback port that carries every packet the engine sends back into the same
 * engine as a complete RoCEv2 frame (encapsulation and ICRC built by lib/wire
 * and parsed again, exactly as a real wire would), a UNIX SOCK_SEQPACKET
 * listening socket for liburoce clients, one session per client with its own
 * resource table (a client reaches only the objects it created), and the data
 * path between the shared-memory rings of lib/shm and the engine: doorbells,
 * WQE copy-out and validation, translation to engine work requests, and
 * engine completions written as shm CQEs with eventfd wake-ups.
 *
 * A wire port can be put under the core (struct uroce_daemon_port_ops):
 * packets for one of the daemon's own GIDs still loop back inside, as on a
 * ConnectX; the others go to the port, and the port's owner gives received
 * packets to uroce_daemon_rx(). uroced puts a DPDK port there; the
 * component tests put the simulated lossy wire there.
 *
 * Everything runs on the thread that calls uroce_daemon_poll() (and
 * uroce_daemon_rx()); nothing here takes a lock.
 */

#ifndef UROCE_DAEMON_H
#define UROCE_DAEMON_H

#include <stdint.h>
#include <sys/types.h>

#include "uroce_transport.h"
#include "uroce_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

struct uroce_daemon;

/** GID table entries of the daemon's port. */
#define UROCE_DAEMON_GID_MAX 16

/**
 * A wire under the daemon core. The buffers are the port's: tx_alloc returns
 * a pointer to room for @p ib_len bytes (BTH through ICRC) with enough
 * headroom in front for Ethernet, a VLAN tag, IPv6 and UDP; tx_send adds
 * that encapsulation for @p addr (the port resolves the next hop), fills
 * the ICRC and sends, taking ownership; tx_free gives a buffer back unsent.
 * All are called on the thread that polls the daemon.
 */
struct uroce_daemon_port_ops {
	uint64_t (*now_us)(void *ctx); /**< monotonic µs; NULL: CLOCK_MONOTONIC */
	uint8_t *(*tx_alloc)(void *ctx, uint32_t ib_len);
	void (*tx_send)(void *ctx, uint8_t *ib, uint32_t ib_len,
			const struct uroce_eng_tx_addr *addr);
	void (*tx_free)(void *ctx, uint8_t *ib);
};

/** Daemon configuration for uroce_daemon_create(). */
struct uroce_daemon_conf {
	const char *sock_path; /**< UNIX socket path to listen on (required) */
	mode_t sock_mode;      /**< permissions of the socket file; 0 means 0660 */
	uint8_t gid[16];       /**< GID 0 when n_gid is 0; all zero: ::ffff:198.18.0.1 */
	uint32_t max_sessions; /**< clients at once; 0 means 64 */
	/**
	 * GID table of port 1 (stable indexes; an all-zero entry is an empty
	 * slot that clients cannot use). 0 entries: the table is just gid[].
	 */
	unsigned int n_gid;
	uint8_t gids[UROCE_DAEMON_GID_MAX][16];
	uint8_t active_mtu;    /**< enum uroce_mtu of port 1; 0 means 4096 */
	const struct uroce_daemon_port_ops *port_ops; /**< NULL: loopback only */
	void *port_ctx;        /**< passed to every port op */
	/**
	 * Congestion control of port 1 (ECN marking, CNPs, DCQCN; see
	 * doc/congestion.md), copied at creation; NULL: ConnectX's defaults.
	 * A set uroce_eng_cc_params_check() refuses fails the creation (EINVAL).
	 */
	const struct uroce_eng_cc_params *cc;
};

/** Resource counts and counters of a daemon (uroce_daemon_stats()). */
struct uroce_daemon_stats {
	uint32_t sessions;      /**< connected clients (after HELLO or not) */
	uint32_t segments;      /**< client data segments mapped */
	uint32_t pds;
	uint32_t mrs;
	uint32_t cqs;
	uint32_t qps;
	uint32_t ahs;           /**< address handles */
	uint64_t msgs;          /**< control requests answered */
	uint64_t bad_msgs;      /**< control messages refused by validation */
	uint64_t hello_refused; /**< clients refused for an incompatible ABI */
	uint64_t wqe_rejected;  /**< send/receive WQEs failed by the daemon's checks */
	uint64_t ring_corrupt;  /**< rings found corrupt (QP moved to ERR) */
	uint64_t loop_frames;   /**< frames carried by the loopback port */
	uint64_t loop_bad;      /**< loopback frames that failed uroce_parse() */
	uint64_t port_tx;       /**< frames given to the wire port */
	uint64_t port_rx;       /**< frames received from the wire port */
	uint64_t cqe_written;   /**< CQEs written to shm CQ rings */
	uint64_t cq_events;     /**< eventfd wake-ups written */
	uint64_t sessions_reaped; /**< sessions cleaned up after hang-up */
	uint32_t srqs;          /**< shared receive queues */
	uint32_t reserved0;      /**< padding, 0 */
	/** SRQ receive WQEs refused or posted with a poisoned key (also in wqe_rejected) */
	uint64_t srq_wqe_rejected;
	uint64_t async_events;  /**< ASYNC_EVENT messages sent to clients */
	uint64_t async_dropped; /**< async events dropped: the client's socket was too full */
};

/**
 * Create a daemon core: engine, loopback port and listening socket. An
 * existing socket file at the path is replaced.
 *
 * @return the daemon, or NULL with errno EINVAL (missing path, path too
 *   long), ENOMEM, or the errno of socket/bind/listen/chmod.
 */
struct uroce_daemon *uroce_daemon_create(const struct uroce_daemon_conf *conf);

/**
 * Destroy a daemon: every session is torn down as on hang-up, the socket is
 * closed and its file unlinked. NULL is a no-op.
 */
void uroce_daemon_destroy(struct uroce_daemon *d);

/**
 * Do one bounded round of work without blocking: accept clients, answer
 * control requests, reap hung-up sessions, drain rung doorbells into the
 * engine, deliver loopback frames, run the engine, and write completions.
 *
 * @return an amount of work done (0 when idle; the caller may then sleep or
 *   wait on uroce_daemon_fd()).
 */
unsigned int uroce_daemon_poll(struct uroce_daemon *d);

/**
 * Engine-wide transport counters (lib/transport/counters.def order; names
 * from uroce_eng_counter_name()): up to @p n values into @p vals.
 *
 * @return the number of counters (UROCE_CNT_MAX), which may exceed @p n.
 */
unsigned int uroce_daemon_counters(const struct uroce_daemon *d, uint64_t *vals, unsigned int n);

/** Transport counters uroce_daemon_qps() reports per QP (counters.def order). */
#define UROCE_DAEMON_QP_CNT 64

/** One QP, as uroce_daemon_qps() reports it. */
struct uroce_daemon_qp_info {
	uint32_t qpn;
	uint32_t type;         /**< enum uroce_qp_type */
	uint32_t state;        /**< enum uroce_qp_state */
	uint32_t dest_qpn;
	uint32_t sq_psn;       /**< next PSN the requester sends */
	uint32_t rq_psn;       /**< next PSN the responder expects */
	int32_t pid;           /**< the owning client */
	uint32_t n_cnt;        /**< valid entries of cnt */
	uint64_t cnt[UROCE_DAEMON_QP_CNT]; /**< names: uroce_eng_counter_name(i) */
};

/**
 * The QPs of every client, in ascending QP number from @p from, at most
 * @p max of them. For an owner's view (telemetry); clients use the
 * introspection messages, which apply their visibility rule.
 *
 * @return the number of entries written.
 */
unsigned int uroce_daemon_qps(struct uroce_daemon *d, uint32_t from,
			      struct uroce_daemon_qp_info *out, unsigned int max);

/**
 * Give the daemon one packet received from its wire port. @p pkt and
 * @p frame come from uroce_parse() (ICRC checked); the daemon does not keep
 * them after returning, so the caller frees the buffer. Call it on the
 * thread that polls the daemon.
 */
void uroce_daemon_rx(struct uroce_daemon *d, const struct uroce_pkt *pkt,
		     const struct uroce_frame *frame);

/**
 * Orderly stop, before uroce_daemon_destroy(): every QP moves to ERR, so
 * its outstanding work requests complete with flush errors, and those
 * completions are written to the clients' CQ rings (with wake-ups). The
 * clients then see their sockets close at destroy, which liburoce reports
 * as a device-fatal event.
 *
 * @return the number of QPs moved to ERR.
 */
unsigned int uroce_daemon_quiesce(struct uroce_daemon *d);

/** The listening socket (readable when a client connects), for an idle wait. */
int uroce_daemon_fd(const struct uroce_daemon *d);

/** Copy the resource counts and counters. @return 0, or -EINVAL if NULL. */
int uroce_daemon_stats(const struct uroce_daemon *d, struct uroce_daemon_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_DAEMON_H */
