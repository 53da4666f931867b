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
 * Everything runs on the thread that calls uroce_daemon_poll(); nothing here
 * takes a lock. uroced will put a DPDK port under the same core; test code
 * and test/component/daemon/uroced_lite use the loopback port.
 */

#ifndef UROCE_DAEMON_H
#define UROCE_DAEMON_H

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct uroce_daemon;

/** Daemon configuration for uroce_daemon_create(). */
struct uroce_daemon_conf {
	const char *sock_path; /**< UNIX socket path to listen on (required) */
	mode_t sock_mode;      /**< permissions of the socket file; 0 means 0660 */
	uint8_t gid[16];       /**< GID 0 of the port; all zero: ::ffff:198.18.0.1 */
	uint32_t max_sessions; /**< clients at once; 0 means 64 */
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
	uint64_t cqe_written;   /**< CQEs written to shm CQ rings */
	uint64_t cq_events;     /**< eventfd wake-ups written */
	uint64_t sessions_reaped; /**< sessions cleaned up after hang-up */
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

/** The listening socket (readable when a client connects), for an idle wait. */
int uroce_daemon_fd(const struct uroce_daemon *d);

/** Copy the resource counts and counters. @return 0, or -EINVAL if NULL. */
int uroce_daemon_stats(const struct uroce_daemon *d, struct uroce_daemon_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_DAEMON_H */
