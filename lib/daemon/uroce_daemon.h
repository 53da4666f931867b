/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The uroce daemon core, without DPDK.
 *
 * A control plane: a UNIX SOCK_SEQPACKET listening socket for liburoce
 * clients, one session per client with its own resource table (a client
 * reaches only the objects it created), the control protocol of lib/shm,
 * segments mapped once, PDs, MRs and AHs on one device shared by every
 * worker.
 *
 * Workers: each has a transport engine and owns the QPs, CQs and SRQs
 * placed on it (the QPN says which: uroce_daemon_qpn_worker()). A worker
 * takes WQEs from the client's shared rings when their doorbells ring
 * (each field read once, checked, written straight into the engine's queue
 * slot), runs the engine, and writes completions straight into the client's
 * CQ ring. Packets for one of the daemon's own GIDs loop back inside, as on
 * a ConnectX, as complete RoCEv2 frames (encapsulation and ICRC built by
 * lib/wire and parsed again, exactly as a wire would), to whichever worker
 * owns the destination QP; the rest go to the wire port, whose owner gives
 * received packets to uroce_daemon_worker_rx() on the owner worker.
 *
 * Threads: with uroce_daemon_conf.threaded, one thread runs
 * uroce_daemon_control_poll() (it owns every socket and blocks in epoll)
 * and each worker's thread runs uroce_daemon_worker_poll() (no system call
 * in steady state; the control thread reaches a worker's objects only
 * through that worker's mailbox). Without it, uroce_daemon_poll() does all
 * of it on the calling thread. Nothing takes a lock.
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

/** Workers a daemon may have. */
#define UROCE_DAEMON_MAX_WORKERS 16

/** How long an idle worker with no QP sleeps (µs): the delay of an ARP or
 * ND answer or a CM MAD after idle (uroce_daemon_worker_sleep()). */
#define UROCE_DAEMON_DEEP_SLEEP_US 100000u

/** The worker that owns QP number @p qpn (its engine's QPN base). */
static inline unsigned int
uroce_daemon_qpn_worker(uint32_t qpn)
{
	return (qpn & 0xFFFFFFu) >> UROCE_QPN_LOCAL_BITS;
}

/** What a worker did, for cycle accounting (uroce-ctl workers, telemetry). */
struct uroce_daemon_worker_stats {
	/* filled by the shell that runs the worker (worker_stats_fn) */
	uint64_t tsc_hz;          /**< cycles per second of the counters below, 0: none */
	uint64_t busy_cycles;     /**< cycles of loops that did work */
	uint64_t idle_cycles;     /**< cycles of loops that found nothing (spinning or asleep) */
	uint64_t loops;
	uint64_t rx_packets;      /**< frames received on this worker's queues */
	uint64_t tx_packets;      /**< frames sent on this worker's queues */
	uint64_t handoff_in;      /**< frames another worker handed to this one */
	uint64_t handoff_out;     /**< frames this worker handed to their owner */
	uint64_t sleeps;          /**< idle back-offs */
	uint64_t late_rounds;     /**< rounds 200 ms or more late: the thread did not run */
	uint64_t max_late_us;     /**< the longest time it did not run when it should have */
	/* filled by the daemon */
	uint64_t qps;             /**< QPs placed on it */
	uint64_t wqes;            /**< send and receive WQEs taken from client rings */
	uint64_t cqes;            /**< CQEs written to client rings */
	uint64_t roce_rx;         /**< packets its engine received */
	uint64_t roce_tx;         /**< packets its engine sent */
};

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
	/**
	 * Optional: send with the payload left in client memory, as
	 * uroce_eng_ops.tx_send_zc (false declines; the daemon then copies).
	 * The shell calls uroce_eng_zc_mem_release() when the device lets go
	 * of the payload and keeps the packet's @p zc for tx_zc_reap.
	 */
	bool (*tx_send_zc)(void *ctx, uint8_t *ib, uint32_t hdr_len, const uint8_t *payload,
			   uint32_t paylen, uint32_t ib_len, const struct uroce_eng_tx_addr *addr,
			   const struct uroce_eng_zc *zc);
	/**
	 * With tx_send_zc, required: give @p fn every zero-copy packet the
	 * device let go of since the last call (the worker's thread, between
	 * engine calls). @return how many.
	 */
	unsigned int (*tx_zc_reap)(void *ctx, void (*fn)(void *arg, const struct uroce_eng_zc *zc),
				   void *arg);
	/**
	 * Optional: the next hop of @p gid, which rdma_resolve_addr waits for
	 * (uroce_cma_ops.resolve): 0 known, -EAGAIN being resolved (the call
	 * starts it), -EHOSTUNREACH failed (the call starts over), another
	 * negative errno: cannot be. Called on the control thread with worker
	 * 0's context. NULL: every destination is reachable at once.
	 */
	int (*resolve)(void *ctx, const uint8_t gid[16]);
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
	/** Per-worker port context (its own TX queue); NULL entries use port_ctx. */
	void *port_ctxs[UROCE_DAEMON_MAX_WORKERS];
	/**
	 * Optional: a worker's clock in µs, called once per round with that
	 * worker's port context (port_ctxs), where port_ops has no now_us
	 * (no port). NULL: CLOCK_MONOTONIC, one clock_gettime() per round.
	 */
	uint64_t (*clock_us)(void *ctx);
	/** Workers, 1..UROCE_DAEMON_MAX_WORKERS; 0 means 1. */
	unsigned int n_workers;
	/** Control and workers on threads of the caller's (see the file comment). */
	bool threaded;
	/** Loopback frame buffers per worker; 0 means 1024. */
	uint32_t loop_frames;
	/** Optional: the shell's part of a worker's statistics (control thread). */
	void (*worker_stats_fn)(void *ctx, unsigned int worker,
				struct uroce_daemon_worker_stats *st);
	void *worker_stats_ctx;
	/**
	 * Congestion control of port 1 (ECN marking, CNPs, DCQCN; see
	 * doc/congestion.md), copied into every worker's engine at creation;
	 * NULL: ConnectX's defaults. A set uroce_eng_cc_params_check() refuses
	 * fails the creation (EINVAL).
	 */
	const struct uroce_eng_cc_params *cc;
	/**
	 * Payload bytes from which packets leave zero-copy, read by the port
	 * straight from client memory (port_ops->tx_send_zc); 0: never. See
	 * doc/dataplane.md, "Zero-copy transmission".
	 */
	uint32_t zc_min;
	/**
	 * With no port (every packet loops back inside the daemon): payload
	 * bytes from which a packet's payload stays in client memory until the
	 * receiving QP has checked and placed it, instead of being copied into
	 * a loop frame; 0: always copy. See doc/dataplane.md, "The loopback".
	 */
	uint32_t loop_zc_min;
	/*
	 * The connection manager (doc/rdmacm.md): the CM response timeout
	 * (5-bit exponent) and the CM retries of the REQs and SIDR_REQs it
	 * sends, and the paths' packet life time; 0 means rdma_cm's 20, 15
	 * and 16. Smaller values make a silent peer fail sooner.
	 */
	uint8_t cm_response_timeout;
	uint8_t cm_max_retries;
	uint8_t cm_packet_life_time;
	/**
	 * Bytes that all lcore generators (doc/loadgen.md) may hold together,
	 * over every client; 0 means UROCE_DAEMON_GEN_MEM_DEFAULT. A
	 * GEN_CREATE past it is refused with ENOMEM: a client cannot make
	 * the daemon allocate (and fill) memory without bound.
	 */
	uint64_t gen_mem_max;
};

/** Default of uroce_daemon_conf.gen_mem_max: four of the largest generators. */
#define UROCE_DAEMON_GEN_MEM_DEFAULT (2048ull << 20)

/** Resource counts and counters of a daemon (uroce_daemon_stats()), one field
 * per line of daemon_stats.def. */
struct uroce_daemon_stats {
#define UROCE_DAEMON_STAT(name, type, kept_by, desc) type name;
#include "daemon_stats.def"
#undef UROCE_DAEMON_STAT
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
 * Without threads: do one bounded round of everything without blocking:
 * the control plane (accept clients, answer control requests, reap hung-up
 * sessions, send events), then each worker's round.
 *
 * @return an amount of work done (0 when idle; the caller may then sleep or
 *   wait on uroce_daemon_fd()).
 */
unsigned int uroce_daemon_poll(struct uroce_daemon *d);

/**
 * The control thread's round (threaded daemons): wait up to @p timeout_ms
 * (0: not at all, -1: until something happens) for a client to connect or
 * write, then accept, answer requests, reap hung-up sessions and send the
 * events workers raised. Workers must be running their rounds meanwhile:
 * requests that touch a worker's objects wait for it.
 *
 * @return an amount of work done.
 */
unsigned int uroce_daemon_control_poll(struct uroce_daemon *d, int timeout_ms);

/**
 * Worker @p worker's round (on its thread): the mailbox, rung doorbells,
 * loopback frames, the engine's timers, responses and requests, and the
 * CQEs written since the last round made visible to clients. No system call
 * except eventfd wake-ups for clients that armed a CQ.
 *
 * @return an amount of work done (0: idle).
 */
unsigned int uroce_daemon_worker_poll(struct uroce_daemon *d, unsigned int worker);

/**
 * The earliest timer of worker @p worker in µs (the port's clock), or
 * UINT64_MAX; an idle worker may sleep until then. On its thread.
 */
uint64_t uroce_daemon_worker_deadline(struct uroce_daemon *d, unsigned int worker);

/**
 * Make uroce_daemon_control_poll() return when @p fd is readable (as work
 * done), e.g. uroce_dp_ctl_fd(): news of the shell's for its control loop,
 * which the caller then reads. The level stays: the caller must drain it.
 * @return 0 or -errno.
 */
int uroce_daemon_watch_fd(struct uroce_daemon *d, int fd);

/**
 * An idle worker's sleep (the shell's idle policy calls it after a round
 * that found nothing): the worker announces it in the status segment, looks
 * for work once more (doorbells, commands, frames of other workers, and
 * whatever @p more says, e.g. the shell's own rings; NULL: none), and sleeps
 * at most @p us unless there was some; a client's doorbell, the control
 * thread or uroce_daemon_worker_wake() ends the sleep at once. A worker with
 * no QP sleeps UROCE_DAEMON_DEEP_SLEEP_US instead of a long @p us. Worker
 * thread. @return true if it slept.
 */
bool uroce_daemon_worker_sleep(struct uroce_daemon *d, unsigned int worker, uint64_t us,
			       bool (*more)(void *ctx), void *ctx);

/** Wake @p worker if it sleeps, after giving it work of the shell's (a full
 * fence first: the work may have been published by a release store). Any
 * thread. */
void uroce_daemon_worker_wake(struct uroce_daemon *d, unsigned int worker);

/** Number of workers. */
unsigned int uroce_daemon_worker_count(const struct uroce_daemon *d);

/**
 * The worker threads of a threaded daemon have stopped for good (after
 * uroce_daemon_quiesce()): from now on the calling thread does their part
 * itself, so statistics and uroce_daemon_destroy() need no running worker.
 */
void uroce_daemon_workers_stopped(struct uroce_daemon *d);

/**
 * Statistics of worker @p worker: the daemon's counts and, through
 * worker_stats_fn, the shell's. Control thread.
 * @return 0, or -EINVAL for a bad worker.
 */
int uroce_daemon_worker_stats(struct uroce_daemon *d, unsigned int worker,
			      struct uroce_daemon_worker_stats *st);

/**
 * Transport counters summed over every worker (lib/transport/counters.def
 * order; names from uroce_eng_counter_name()): up to @p n values into
 * @p vals. Control thread.
 *
 * @return the number of counters (UROCE_CNT_MAX), which may exceed @p n.
 */
unsigned int uroce_daemon_counters(struct uroce_daemon *d, uint64_t *vals, unsigned int n);

/** Transport counters uroce_daemon_qps() reports per QP (counters.def order). */
#define UROCE_DAEMON_QP_CNT 64

/** One QP, as uroce_daemon_qps() reports it. */
struct uroce_daemon_qp_info {
	uint32_t qpn;
	uint32_t type;         /**< enum uroce_qp_type */
	uint32_t state;        /**< enum uroce_qp_state */
	uint32_t worker;       /**< the worker that owns it */
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
 * introspection messages, which apply their visibility rule. Control thread.
 *
 * @return the number of entries written.
 */
unsigned int uroce_daemon_qps(struct uroce_daemon *d, uint32_t from,
			      struct uroce_daemon_qp_info *out, unsigned int max);

/** One lcore load generator, as uroce_daemon_gens() reports it (doc/loadgen.md). */
struct uroce_daemon_gen_info {
	uint32_t id;            /**< its id within the owning session */
	uint32_t client_id;     /**< the owning session (uroce-ctl gen's connection) */
	int32_t pid;            /**< the owner's pid, -1 if unknown */
	uint32_t role;          /**< UROCE_SHM_GEN_INITIATOR or UROCE_SHM_GEN_TARGET */
	uint32_t state;         /**< enum uroce_shm_gen_state */
	uint32_t worker;
	uint32_t n_qps;
	uint32_t err_status;    /**< first error completion (enum uroce_wc_status), 0: none */
	uint32_t err_qpn;
	uint32_t reserved;
	uint64_t elapsed_us;    /**< since it started */
	uint64_t posted;        /**< WRs posted (a target: receives) */
	uint64_t completed;     /**< successful completions (a target: SENDs received) */
	uint64_t errors;        /**< error completions */
	uint64_t bytes;         /**< bytes of the successful completions */
	uint64_t verify_bad;    /**< checks that failed (READ data, atomic results, SEND payloads) */
	uint64_t outstanding;   /**< WRs posted and not completed */
};

/**
 * The load generators of every client, at most @p max of them, in the order
 * of their sessions. Control thread.
 * @return the number of entries written.
 */
unsigned int uroce_daemon_gens(struct uroce_daemon *d, struct uroce_daemon_gen_info *out,
			       unsigned int max);

/**
 * Give worker @p worker one packet received from its wire port, for a QP
 * it owns (uroce_daemon_qpn_worker() of pkt->dqpn; another worker's packet
 * is counted as for an unknown QP). @p pkt and @p frame come from
 * uroce_parse() or uroce_parse_rest() (ICRC checked, or for a payload the
 * engine copies out left late to that copy); the daemon does not keep them after
 * returning, so the caller frees the buffer. On the worker's thread.
 * @return as uroce_eng_rx(): -EBADMSG if a late ICRC was wrong, else 0.
 */
int uroce_daemon_worker_rx(struct uroce_daemon *d, unsigned int worker,
			   const struct uroce_pkt *pkt, const struct uroce_frame *frame);

/**
 * uroce_daemon_worker_rx() on the worker that owns pkt->dqpn (one thread
 * only: daemons without threads).
 */
int uroce_daemon_rx(struct uroce_daemon *d, const struct uroce_pkt *pkt,
		    const struct uroce_frame *frame);

/**
 * Orderly stop, before uroce_daemon_destroy(): every QP moves to ERR on its
 * worker, so its outstanding work requests complete with flush errors, and
 * those completions are written to the clients' CQ rings (with wake-ups).
 * The clients then see their sockets close at destroy, which liburoce
 * reports as a device-fatal event. Control thread, with workers running.
 *
 * @return the number of QPs moved to ERR.
 */
unsigned int uroce_daemon_quiesce(struct uroce_daemon *d);

/** The epoll descriptor of the control plane (readable when a client connects or
 * writes), for an idle wait of a daemon without threads. */
int uroce_daemon_fd(const struct uroce_daemon *d);

/**
 * Copy the resource counts and counters (the workers' summed in). Control
 * thread. @return 0, or -EINVAL if NULL.
 */
int uroce_daemon_stats(struct uroce_daemon *d, struct uroce_daemon_stats *st);

/**
 * Counters of QP1 and the connection manager: the GSI's (MADs in and out,
 * unsupported classes answered or dropped, rdma_cm events), then the CM's
 * (lib/cm/cm_counters.def), up to @p n values into @p vals. Control thread.
 * @return the number of counters (names: uroce_daemon_cm_counter_name()).
 */
unsigned int uroce_daemon_cm_counters(struct uroce_daemon *d, uint64_t *vals, unsigned int n);

/** Name of CM counter @p i ("gsi_rx_mads", "cm_req_sent", ...), or NULL. */
const char *uroce_daemon_cm_counter_name(unsigned int i);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_DAEMON_H */
