/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The DPDK shell of uroced: configuration (command line plus an INI file read
 * with rte_cfgfile), ethdev ports with one RX and one TX queue per worker
 * lcore, NUMA-local mempools, the worker loop (RX burst, classification into
 * ARP / IPv6 ND / RoCEv2 / other, validation with lib/wire), the daemon's own
 * IP endpoint (ARP and neighbour discovery answers, neighbour resolution with
 * retry), the GID table, per-port counters exported through DPDK telemetry,
 * and the `uroced --check` preflight.
 *
 * This is the only uroce library that includes DPDK headers, and this header
 * includes none: the configuration structs are plain C so that the config
 * parser can be unit-tested without EAL. Threading is described in
 * doc/dataplane.md.
 */

#ifndef UROCE_DATAPLANE_H
#define UROCE_DATAPLANE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "uroce_common.h"
#include "uroce_transport.h"
#include "uroce_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

#define UROCE_DP_MAX_PORTS 8         /**< ports one daemon drives */
#define UROCE_DP_MAX_WORKERS 16      /**< worker lcores */
#define UROCE_DP_MAX_STATIC_NEIGH 32 /**< static neighbours per port */
#define UROCE_DP_MAX_EAL_ITEMS 16    /**< vdev or allow entries */
#define UROCE_DP_GID_MAX 4           /**< GIDs per port: link-local, IPv4, IPv6 */
#define UROCE_DP_LOOP_ZC_MIN_DEFAULT 2048 /**< loop_zero_copy_min: see doc/benchmarks.md */
#define UROCE_DP_ERR_LEN 512         /**< size of an error-message buffer */

/** One static neighbour: an IP address (as a GID) and its MAC. */
struct uroce_dp_neigh_cfg {
	enum uroce_ip_family family;
	uint8_t ip[16];  /**< IPv4 as ::ffff:a.b.c.d */
	uint8_t mac[6];
};

/** Which directions of a port fault injection applies to (key fault_dir). */
enum uroce_dp_fault_dir {
	UROCE_DP_FAULT_BOTH = 0, /**< the default: received and sent packets */
	UROCE_DP_FAULT_RX,       /**< received packets only */
	UROCE_DP_FAULT_TX,       /**< sent packets only */
};

/** Configuration of one port (section [port.N]). */
struct uroce_dp_port_cfg {
	char section[64];        /**< "port.0": names the port in messages */
	char device[128];        /**< ethdev name: PCI address or vdev name */
	bool has_ipv4;
	uint8_t ipv4[4];
	uint8_t ipv4_prefix;
	bool has_ipv6;
	uint8_t ipv6[16];
	uint8_t ipv6_prefix;
	bool has_mac;            /**< mac override */
	uint8_t mac[6];
	bool has_vlan;
	uint16_t vlan_id;        /**< 1..4094 */
	uint8_t pcp;             /**< 802.1p priority 0..7 */
	uint16_t mtu;            /**< IP MTU; 0 keeps the device's */
	uint8_t dscp;            /**< default DSCP of RoCEv2 traffic */
	uint8_t ecn;             /**< default ECN bits (0 not-ECT, 1 ECT(1), 2 ECT(0): default) */
	unsigned int n_neigh;
	struct uroce_dp_neigh_cfg neigh[UROCE_DP_MAX_STATIC_NEIGH];
	/*
	 * Fault injection (issue #5): the fraction, 0..1, of RoCEv2 packets that
	 * are dropped, duplicated, reordered or corrupted. One draw per packet
	 * picks at most one fault, so the four add up to at most 1. All 0 (the
	 * default) turns fault injection off.
	 */
	double fault_drop;
	double fault_dup;
	double fault_reorder;
	double fault_corrupt;
	enum uroce_dp_fault_dir fault_dir; /**< directions faults apply to */
	uint64_t fault_seed;               /**< PRNG seed: same seed, same decisions */
	/**
	 * The fraction, 0..1, of received ECN-capable RoCEv2 frames marked CE
	 * (as a congested switch in front of the port would), drawn apart from
	 * the four faults above; received frames only.
	 */
	double fault_ce;
	/**
	 * Congestion control of the port's QPs: the ConnectX-named keys of
	 * lib/transport/cc_params.def (rpg_time_reset, min_time_between_cnps,
	 * ...), ConnectX defaults unless set. Its ecn field is the ecn key.
	 */
	struct uroce_eng_cc_params cc;
};

/** The whole configuration: file plus command line. */
struct uroce_dp_config {
	char file[256];          /**< config file read, "" if none */
	/* [eal] */
	char lcores[64];         /**< EAL -l / --lcores list; first is the main lcore */
	char file_prefix[64];
	bool no_huge;
	bool in_memory;
	unsigned int memory_mb;  /**< -m; 0 lets EAL choose (with no_huge: 256) */
	bool no_pci;
	char log_level[64];
	unsigned int n_vdev;
	char vdev[UROCE_DP_MAX_EAL_ITEMS][256];
	unsigned int n_allow;
	char allow[UROCE_DP_MAX_EAL_ITEMS][64];
	unsigned int n_extra;    /**< verbatim EAL arguments after "--" */
	char extra[UROCE_DP_MAX_EAL_ITEMS][256];
	/* [daemon] */
	char socket_path[108];
	unsigned int socket_mode;
	/** The connection manager's timing (doc/rdmacm.md); 0: rdma_cm's 20, 15, 16. */
	unsigned int cm_response_timeout;
	unsigned int cm_max_retries;
	unsigned int cm_packet_life_time;
	/* [limits] */
	unsigned int max_qp;
	unsigned int mbufs;          /**< mbufs per port and NUMA node */
	unsigned int rx_desc;
	unsigned int tx_desc;
	unsigned int burst;          /**< RX burst size, the bound on work per loop */
	unsigned int neigh_retry_ms; /**< resolution: time between requests */
	unsigned int neigh_tries;    /**< resolution: requests before failing */
	/** Ageing: a reachable entry is asked again this long after the peer
	 * last told us its MAC (and fails after neigh_tries unanswered requests). */
	unsigned int neigh_reachable_ms;
	unsigned int neigh_max;      /**< neighbour table entries per port */
	/** Shortest sleep of an idle worker (0: it never sleeps, busy
	 * polling); it sleeps an eighth of its idle time, up to
	 * idle_sleep_max_us. */
	unsigned int idle_sleep_us;
	/** Longest sleep of an idle worker: how late a frame on its RX queue
	 * can be seen (a doorbell or a command wakes it at once). */
	unsigned int idle_sleep_max_us;
	/** How long an idle worker keeps spinning before it sleeps. */
	unsigned int idle_spin_us;
	/**
	 * Payload bytes from which RoCEv2 packets leave zero-copy (the port
	 * reads client memory through an external mbuf); 0: never. Only on
	 * ports of virtual devices with multi-segment TX and no TX faults.
	 */
	unsigned int zc_min;
	/**
	 * Without a port: payload bytes from which a packet looped back inside
	 * the daemon leaves its payload in client memory (the receiver checks
	 * and places it from there); 0: always copy into a loop frame.
	 */
	unsigned int loop_zc_min;
	/** MiB that all lcore generators may hold together (doc/loadgen.md). */
	unsigned int gen_mem_mb;
	/* ports */
	unsigned int n_ports;
	struct uroce_dp_port_cfg ports[UROCE_DP_MAX_PORTS];
};

/** Fill @p cfg with the defaults documented in doc/operations.md. */
void uroce_dp_config_defaults(struct uroce_dp_config *cfg);

/**
 * Read an INI file with rte_cfgfile and merge it into @p cfg. Unknown
 * sections and keys are errors (they are usually typos). On error @p err
 * holds one line naming the file, the section, the key and the problem.
 * Needs no EAL.
 *
 * @return 0; -ENOENT or -EACCES if the file cannot be opened; -EINVAL for a
 *   syntax error, an unknown key or a bad value; -E2BIG if a list is full.
 */
int uroce_dp_config_load(struct uroce_dp_config *cfg, const char *path, char *err, size_t errlen);

/**
 * Check the merged configuration for conflicts (two ports on one device, a
 * static neighbour of a family the port has no address for, ...).
 *
 * @return 0, or -EINVAL with @p err set to one line.
 */
int uroce_dp_config_validate(const struct uroce_dp_config *cfg, char *err, size_t errlen);

/**
 * Take EAL arguments given after "--" that the daemon must know about into
 * the configuration: --file-prefix (it names the daemon's runtime files and
 * telemetry socket, and is shown when it is ready) and --in-memory. They
 * leave @p cfg->extra, so that uroce_dp_eal_args() passes each once. Call it
 * before uroce_dp_config_validate().
 *
 * @return 0, or -EINVAL with @p err set (a --file-prefix without a value or
 *   with characters EAL's file names cannot take).
 */
int uroce_dp_config_adopt_eal_args(struct uroce_dp_config *cfg, char *err, size_t errlen);

/**
 * Check, before EAL starts, that the CPUs of lcore list @p lcores (the
 * lcores key or -l, EAL --lcores syntax: "0,1", "0-2", "0@1,1@0",
 * "(0-1)@(2-3)") exist and are this process's to use (its affinity): EAL
 * would answer "core N unavailable" and then print its whole usage. Needs no
 * EAL.
 *
 * @return 0 (also for text it cannot parse: EAL judges that), or -EINVAL
 *   with @p err naming the CPU and the CPUs that may be used.
 */
int uroce_dp_lcores_check(const char *lcores, char *err, size_t errlen);

/**
 * Build the EAL argument vector from @p cfg: argv[0] is @p prog. The strings
 * point into @p cfg or are static; @p argv must have room for @p max entries.
 *
 * @return argc, or -E2BIG if @p max is too small.
 */
int uroce_dp_eal_args(const struct uroce_dp_config *cfg, const char *prog, char **argv, int max);

/**
 * Parse "a.b.c.d/len" or "x:y::z/len" (family chosen by the text).
 * @return 0, or -EINVAL.
 */
int uroce_dp_parse_prefix(const char *s, enum uroce_ip_family *family, uint8_t gid[16],
			  uint8_t *prefix);

/** Parse "aa:bb:cc:dd:ee:ff". @return 0, or -EINVAL. */
int uroce_dp_parse_mac(const char *s, uint8_t mac[6]);

/** Format a GID as an IPv6 address (IPv4-mapped shown as ::ffff:a.b.c.d). */
void uroce_dp_gid_str(const uint8_t gid[16], char *buf, size_t len);

/** Link-local GID fe80::/64 with the EUI-64 interface id derived from @p mac. */
void uroce_dp_gid_link_local(const uint8_t mac[6], uint8_t gid[16]);

/* ------------------------------------------------------------------------ */
/* Runtime (needs EAL)                                                       */
/* ------------------------------------------------------------------------ */

struct uroce_dp;

/**
 * What a worker hands to the transport for every valid RoCEv2 packet: the
 * frame's encapsulation and the validated view. @p pkt->owner is the mbuf;
 * it is valid during the call only: the dataplane frees it afterwards, with
 * the rest of the burst in one bulk free (the transport copies what it
 * keeps). The callback runs on the worker that owns the destination QP
 * (see uroce_dp_set_owner()). @p pkt may have the payload's ICRC still to
 * check (icrc_late, uroce_parse_rest()): the callback checks it before
 * believing anything in the packet, and returns -EBADMSG if it was wrong
 * (the dataplane counts rx_icrc_errors), else 0.
 */
typedef int (*uroce_dp_rx_fn)(void *ctx, uint16_t port, const struct uroce_frame *frame,
			      struct uroce_pkt *pkt);

/**
 * Create the dataplane after rte_eal_init(): probe and configure every port of
 * @p cfg, create NUMA-local mempools, build the GID tables and load the
 * static neighbours. Workers are the EAL worker lcores. Ports are not started.
 *
 * @return the dataplane, or NULL with errno set and @p err holding one line:
 *   ENODEV (port not found), EEXIST (address in use by another port), ENOMEM,
 *   EINVAL (device refused the MTU, MAC or queue setup), EBUSY.
 */
struct uroce_dp *uroce_dp_create(const struct uroce_dp_config *cfg, char *err, size_t errlen);

/**
 * Install the RoCEv2 receive callback for worker @p worker (index among
 * workers), before uroce_dp_start(). Without one, a counting sink is used:
 * the packet is counted as rx_roce_packets and freed.
 *
 * @return 0, or -EINVAL if @p worker is out of range, -EBUSY if running.
 */
int uroce_dp_set_rx_handler(struct uroce_dp *dp, unsigned int worker, uroce_dp_rx_fn fn,
			    void *ctx);

/**
 * The transport's turn in a worker's loop: called once per iteration, after
 * the RX bursts and before the TX flush. @return work done (0 when idle).
 */
typedef unsigned int (*uroce_dp_work_fn)(void *ctx);

/**
 * Install the per-iteration work callback of worker @p worker, before
 * uroce_dp_start(). uroced runs one worker of its daemon core there (its
 * engine, the QPs placed on it, their shared-memory rings).
 *
 * @return 0, or -EINVAL if @p worker is out of range, -EBUSY if running.
 */
int uroce_dp_set_work_handler(struct uroce_dp *dp, unsigned int worker, uroce_dp_work_fn fn,
			      void *ctx);

/** Bytes of headroom uroce_dp_roce_alloc() leaves in front of the IB part. */
/** Which worker owns destination QP @p dqpn (an index below the worker count). */
typedef unsigned int (*uroce_dp_owner_fn)(void *ctx, uint32_t dqpn);

/**
 * Tell the dataplane which worker owns each QP, before uroce_dp_start(). A
 * RoCEv2 frame that lands on another worker's RX queue is handed to its
 * owner through the owner's ring, in bursts (counted handoff_out/in).
 * Without an owner function worker 0 owns every QP.
 *
 * @return 0, or -EBUSY if running.
 */
int uroce_dp_set_owner(struct uroce_dp *dp, uroce_dp_owner_fn fn, void *ctx);

/** The transport's earliest timer in µs (uroce_dp_worker_now_us() clock), or UINT64_MAX. */
typedef uint64_t (*uroce_dp_deadline_fn)(void *ctx);

/**
 * The idle policy's view of worker @p worker's transport, before
 * uroce_dp_start(). A worker with work queued never sleeps. One that found
 * nothing keeps spinning for [limits] idle_spin_us, then sleeps an eighth
 * of its idle time, from idle_sleep_us up to idle_sleep_max_us
 * (idle_sleep_us 0: it never sleeps), and never past this deadline.
 *
 * @return 0, or -EINVAL for a bad worker, -EBUSY if running.
 */
int uroce_dp_set_deadline_handler(struct uroce_dp *dp, unsigned int worker,
				  uroce_dp_deadline_fn fn, void *ctx);

/**
 * How an idle worker sleeps: @p fn sleeps at most @p us unless work came
 * (it asks @p more, the dataplane's own rings, after it announced the
 * sleep) and returns whether it slept. uroced's daemon core sleeps on the
 * status segment's futex word, which a client's doorbell ends. Without one,
 * the worker sleeps in rte_delay_us_sleep(). Before uroce_dp_start().
 *
 * @return 0, or -EINVAL for a bad worker, -EBUSY if running.
 */
typedef bool (*uroce_dp_sleep_fn)(void *ctx, uint64_t us, bool (*more)(void *), void *more_ctx);
int uroce_dp_set_sleep_handler(struct uroce_dp *dp, unsigned int worker, uroce_dp_sleep_fn fn,
			       void *ctx);

/**
 * How to wake worker @p worker after the dataplane gave it frames (another
 * worker's hand-off, the control thread's ARP/ND frames), which went in
 * with a release store: @p fn orders its look at the worker's state after
 * that store (uroce_daemon_worker_wake() does). Before uroce_dp_start().
 * @return 0, or -EBUSY if running.
 */
typedef void (*uroce_dp_wake_fn)(void *ctx, unsigned int worker);
int uroce_dp_set_wake_handler(struct uroce_dp *dp, uroce_dp_wake_fn fn, void *ctx);

/** Worker @p worker's clock in µs, read once per loop from the TSC. On that worker. */
uint64_t uroce_dp_worker_now_us(const struct uroce_dp *dp, unsigned int worker);

/** What a worker's loop did (cycle accounting). */
struct uroce_dp_worker_stats {
	uint64_t busy_cycles;   /**< TSC cycles of loops that did work */
	uint64_t idle_cycles;   /**< TSC cycles of loops that found none, sleeps included */
	uint64_t loops;
	uint64_t rx_packets;    /**< frames received on its queues */
	uint64_t tx_packets;    /**< frames sent on its queues */
	uint64_t handoff_in;    /**< frames other workers handed it */
	uint64_t handoff_out;   /**< frames it handed to their owner */
	uint64_t handoff_full;  /**< frames dropped: the owner's ring was full */
	uint64_t sleeps;
	uint64_t late_rounds;   /**< loops 200 ms or more longer than the sleep they asked for */
	uint64_t max_late_us;   /**< the longest such excess: the thread did not run */
};

/**
 * Read worker @p worker's counters (any thread; each is a 64-bit word the
 * worker alone writes) and the TSC rate they count in.
 * @return 0, or -EINVAL.
 */
int uroce_dp_worker_stats(const struct uroce_dp *dp, unsigned int worker,
			  struct uroce_dp_worker_stats *st, uint64_t *tsc_hz);

#define UROCE_DP_ROCE_HEADROOM 128u

/**
 * A buffer (an mbuf of port @p port's pool) for a RoCEv2 packet whose
 * InfiniBand part (BTH through ICRC) is @p ib_len bytes. Worker lcores only.
 *
 * @return a pointer to the IB part, with UROCE_DP_ROCE_HEADROOM bytes free in
 *   front; NULL if the pool is empty or the packet cannot fit the port's MTU
 *   (both counted).
 */
uint8_t *uroce_dp_roce_alloc(struct uroce_dp *dp, unsigned int worker, uint16_t port,
			     uint32_t ib_len);

/** Give back a buffer from uroce_dp_roce_alloc() unsent. */
void uroce_dp_roce_free(uint8_t *ib);

/**
 * Encapsulate and queue a packet from uroce_dp_roce_alloc() on worker
 * @p worker's TX queue of port @p port. @p e gives the family, GIDs,
 * traffic class (0: the port's dscp/ecn), hop limit, flow label and UDP
 * source port; the port fills in the rest of @p e itself (not a copy: the
 * copy's loads of the caller's fresh stores could not be forwarded and
 * waited for them): the MACs (resolving the next hop: the worker's cache,
 * else uroce_dp_resolve()), its VLAN tag with PCP and DSCP. Computes the
 * ICRC. The buffer is consumed in every case.
 *
 * @return 0; -EAGAIN (next hop being resolved), -EHOSTUNREACH (resolution
 *   failed), -EINVAL (an address the port cannot send from or to); each
 *   failure drops the packet and counts it, and the transport's retransmit
 *   timer recovers or, after retry_cnt, fails the QP.
 */
int uroce_dp_roce_send(struct uroce_dp *dp, unsigned int worker, uint16_t port, uint8_t *ib,
		       uint32_t ib_len, struct uroce_encap *e);

/** Bytes of the cookie uroce_dp_roce_send_zc() keeps for its caller. */
#define UROCE_DP_ZC_COOKIE 32

/**
 * uroce_dp_roce_send() with the payload left where it is (zero-copy): @p ib
 * (from uroce_dp_roce_alloc()) holds the headers, @p hdr_len bytes; the
 * frame is those, then @p paylen bytes at @p payload (an external mbuf: the
 * device reads them in place), then pad and ICRC (computed here, reading the
 * payload once). When the device lets go of the payload, @p released runs
 * with the cookie at once (on the thread that frees the mbuf: keep it short),
 * and the cookie is kept for uroce_dp_zc_reap() on @p worker.
 *
 * @return 1: the packet is the port's (sent, or dropped and counted: either
 *   way @p released will run); 0: declined, nothing done, @p ib is still the
 *   caller's (the port does no zero-copy, no token or mbuf is free, the next
 *   hop is not resolved, or the packet would not fit).
 */
int uroce_dp_roce_send_zc(struct uroce_dp *dp, unsigned int worker, uint16_t port, uint8_t *ib,
			  uint32_t hdr_len, const uint8_t *payload, uint32_t paylen,
			  struct uroce_encap *e, const void *cookie, size_t cookie_len,
			  void (*released)(const void *cookie));

/**
 * Give @p fn the cookie of every zero-copy packet of @p worker the device
 * let go of since the last call. The worker's thread. @return how many.
 */
unsigned int uroce_dp_zc_reap(struct uroce_dp *dp, unsigned int worker,
			      void (*fn)(void *arg, const void *cookie), void *arg);

/** Whether port @p port sends zero-copy (and from how many payload bytes: 0 never). */
uint32_t uroce_dp_port_zc_min(const struct uroce_dp *dp, uint16_t port);

/** The port's IP MTU. */
uint16_t uroce_dp_port_mtu(const struct uroce_dp *dp, uint16_t port);

/**
 * Start the ports and launch one loop per worker lcore.
 * @return 0, or -errno from rte_eth_dev_start() / rte_eal_remote_launch().
 */
int uroce_dp_start(struct uroce_dp *dp, char *err, size_t errlen);

/**
 * Control-thread housekeeping: what the workers learnt about neighbours
 * (they pass it here through rings), then neighbour retries and timeouts.
 * Call it from the main lcore every millisecond or so while there is work;
 * an idle control loop may wait longer if it watches uroce_dp_ctl_fd(). It
 * is the only writer of the neighbour tables.
 */
void uroce_dp_poll(struct uroce_dp *dp);

/**
 * A descriptor that becomes readable when a worker has news for the
 * control thread (a neighbour to resolve, an ARP or ND answer): a control
 * loop that sleeps in poll/epoll watches it; uroce_dp_poll() drains it.
 */
int uroce_dp_ctl_fd(const struct uroce_dp *dp);

/** Ask the workers to stop, wait for them, then stop the ports. Idempotent. */
void uroce_dp_stop(struct uroce_dp *dp);

/** Free everything uroce_dp_create() made (stops first if needed). NULL is a no-op. */
void uroce_dp_destroy(struct uroce_dp *dp);

/** Number of ports. */
unsigned int uroce_dp_port_count(const struct uroce_dp *dp);

/** Number of worker lcores. */
unsigned int uroce_dp_worker_count(const struct uroce_dp *dp);

/**
 * GID @p index of port @p port.
 * @return 0, -EINVAL if @p port is out of range, -ENOENT if the index is empty.
 */
int uroce_dp_gid_get(const struct uroce_dp *dp, uint16_t port, unsigned int index,
		     uint8_t gid[16]);

/**
 * Resolve @p ip (a GID; IPv4 as ::ffff:a.b.c.d) on port @p port to a MAC
 * address. Any thread, no lock: it reads the neighbour table the control
 * thread publishes. The first call for an address asks the control thread,
 * which creates an entry and sends an ARP request or a neighbour
 * solicitation on its next uroce_dp_poll(), resends it every
 * neigh_retry_ms and marks the entry failed after neigh_tries requests. A
 * call that finds the entry failed reports it and has the control thread
 * start over. A reachable entry is asked again neigh_reachable_ms after the
 * peer last told us its MAC; the known MAC is returned meanwhile, and the
 * new one once the peer answers.
 *
 * @return 0 with @p mac filled, -EAGAIN while pending (or not yet created),
 *   -EHOSTUNREACH if the last resolution failed, -ENOSPC if the table is
 *   full, -EINVAL for a bad port or an address of a family the port has no
 *   address for.
 */
int uroce_dp_resolve(struct uroce_dp *dp, uint16_t port, const uint8_t ip[16], uint8_t mac[6]);

/**
 * Write the `uroced --check` preflight report for @p cfg to @p out: EAL
 * memory (hugepages or --no-huge), each port (found, link, MTU, MAC,
 * addresses, GIDs) and the control socket path. Call it after rte_eal_init()
 * (@p eal_ok true) or after it failed (@p eal_ok false: only the checks that
 * need no EAL run). Every problem line starts with "FAIL" or "WARN" and
 * carries advice.
 *
 * @return the number of FAIL lines.
 */
int uroce_dp_check(const struct uroce_dp_config *cfg, bool eal_ok, FILE *out);

/**
 * Before rte_eal_init(): is there memory for EAL? Without no_huge, some
 * hugepages must be free and hugetlbfs mounted. Needs no EAL.
 *
 * @return 0, or -ENOMEM with @p err holding one line of advice.
 */
int uroce_dp_memory_precheck(const struct uroce_dp_config *cfg, char *err, size_t errlen);

/**
 * Does a daemon listen on control socket @p path? Probes with the daemon's
 * socket type (SOCK_SEQPACKET). Needs no EAL.
 *
 * @return 1: something accepts connections there; 0: nothing does (no
 *   file, or a stale socket file whose daemon is gone); a negative errno
 *   when it cannot tell: -EPROTOTYPE (a socket of another type listens
 *   there), -EACCES (no permission to connect), -ENAMETOOLONG, ...
 */
int uroce_dp_socket_live(const char *path);

/**
 * Create the directory of control socket @p path if it is missing, as
 * mkdir -p does: every directory created gets mode 0755 (whatever the umask)
 * and belongs to the caller (root, for a system daemon); existing ones are
 * left as they are. Needs no EAL.
 *
 * @return 0, or a negative errno with @p err holding one line that names the
 *   directory, the reason and what to do: -EINVAL (not an absolute path),
 *   -ENOTDIR (a component is not a directory), -EACCES / -EPERM / -EROFS
 *   (not allowed), or what mkdir() returned.
 */
int uroce_dp_socket_dir(const char *path, char *err, size_t errlen);

/**
 * At a clean stop, after uroce_dp_destroy() and before rte_eal_cleanup():
 * give back the hugepages of this process's EAL memory, which DPDK 22.11
 * would leave held by their files (<file_prefix>map_N in the hugetlbfs
 * mounts) after the process ends (see check.c for why). Removes those files
 * of @p cfg's file prefix, and only if it is the prefix EAL runs with; the
 * memory stays mapped until the process exits. Nothing with no_huge or
 * in_memory.
 *
 * @return the number of files removed, -ESRCH if EAL runs with another
 *   prefix, or a negative errno if the mounts cannot be read.
 */
int uroce_dp_hugepages_release(const struct uroce_dp_config *cfg);

/** Register the /uroce/... telemetry commands for @p dp (once per process). */
int uroce_dp_telemetry_register(struct uroce_dp *dp);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_DATAPLANE_H */
