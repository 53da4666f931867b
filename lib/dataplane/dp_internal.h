/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * Private state of the DPDK shell, shared by its source files: ports with
 * their GID and neighbour tables, per-worker counters, and the worker loop's
 * helpers. Ownership: each worker writes only its own counter slot and its
 * own RX/TX queue pair per port; the control thread (main lcore) writes the
 * last counter slot and hands frames to worker 0 through a per-port ring; the
 * neighbour table is written by the control thread alone and read by workers
 * without a lock (a sequence lock per slot, neigh.c); workers pass what they
 * learn (ARP, ND, RoCEv2 traffic, resolution requests) to the control thread
 * through rings of their own. Nothing here takes a lock.
 */

#ifndef DP_INTERNAL_H
#define DP_INTERNAL_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "grace.h"
#include "uroce_dataplane.h"

/** Per-port counters of one thread (a worker, or the control thread). */
struct dp_counters {
#define DP_CNT(field, name, desc) uint64_t field;
#include "dp_counters.def"
#undef DP_CNT
	uint64_t wire_err[UROCE_WIRE_ERR_MAX]; /**< by enum uroce_wire_err */
} __rte_cache_aligned;

enum dp_neigh_state {
	DP_NEIGH_FREE = 0,
	DP_NEIGH_PENDING,   /**< request sent, waiting for the answer */
	DP_NEIGH_REACHABLE, /**< answered (or learnt from a request to us) */
	DP_NEIGH_FAILED,    /**< neigh_tries requests went unanswered */
	DP_NEIGH_STATIC,    /**< from the config; never overwritten */
	/** Reachable for neigh_reachable_ms without news: asked again (the known
	 * MAC is still used meanwhile), failed after neigh_tries requests. */
	DP_NEIGH_PROBE,
};

struct dp_neigh {
	uint8_t ip[16];
	uint8_t mac[6];
	enum dp_neigh_state state;
	unsigned int tries;
	uint64_t next_tsc;      /**< when the next request is due (PENDING, PROBE) */
	uint64_t confirmed_tsc; /**< when the peer last told us its MAC (REACHABLE) */
	uint32_t slot;          /**< its slot in the table's hash (struct dp_ntable) */
};

/** What dp_neigh_age() wants done for one entry. */
enum dp_neigh_action {
	DP_NEIGH_IDLE,      /**< nothing now */
	DP_NEIGH_REQUEST,   /**< send an ARP request / neighbour solicitation */
	DP_NEIGH_GIVE_UP,   /**< the entry just failed (count neigh_failed) */
	DP_NEIGH_REFRESH,   /**< a reachable entry aged: request (count neigh_refresh) */
};

/** Timing of neighbour resolution, in TSC cycles (from the [limits] keys). */
struct dp_neigh_timing {
	uint64_t retry;     /**< neigh_retry_ms */
	uint64_t reachable; /**< neigh_reachable_ms */
	unsigned int tries; /**< neigh_tries */
};

/*
 * neigh.c: the neighbour entry state machine, without DPDK calls (unit-tested
 * without EAL). The control thread alone calls these; it publishes the
 * result with dp_ntable_publish().
 *
 * dp_neigh_age(): one tick at @p now. A pending or probing entry asks again
 * every retry and fails after tries requests; a reachable entry not confirmed
 * for reachable starts probing (its MAC stays in use meanwhile, as Linux
 * keeps using a STALE entry); static, free and failed entries never change.
 *
 * dp_neigh_confirm(): the peer told us its MAC at @p now (an ARP reply or
 * request, a neighbour advertisement or solicitation): the entry becomes
 * reachable with that MAC. @return true if the MAC differs from the one the
 * entry had (a reachable or probing entry only). Static entries are not
 * touched (false).
 */
enum dp_neigh_action dp_neigh_age(struct dp_neigh *n, uint64_t now,
				  const struct dp_neigh_timing *t);
bool dp_neigh_confirm(struct dp_neigh *n, const uint8_t mac[6], uint64_t now);

/*
 * dp_neigh_seen(): traffic from the peer, from @p mac, at @p now: a reachable
 * or probing entry that holds @p mac is reachable again, trusted from @p now.
 * Anything else is left alone: data frames never teach a MAC (only ARP and ND
 * do). @return true if the entry was confirmed.
 */
bool dp_neigh_seen(struct dp_neigh *n, const uint8_t mac[6], uint64_t now);

/** One slot of a neighbour table's hash: an entry's published form. */
struct dp_nslot {
	uint32_t seq;    /**< sequence lock: odd while the control thread rewrites it */
	uint32_t entry;  /**< control thread only: index of the entry in dp_ntable.ent */
	uint64_t key[2]; /**< the IP (a GID) */
	uint64_t val;    /**< the MAC in bits 0-47, the slot's state in bits 48-55 */
};

/** Slot states besides enum dp_neigh_state (never FREE in a slot). */
#define DP_NSLOT_EMPTY 0    /**< never held an entry: a probe sequence ends here */
#define DP_NSLOT_TOMB 0xff  /**< held a removed entry: probe sequences go on */

/**
 * A port's neighbour table (neigh.c): entries the control thread owns, and
 * their published form in an open-addressed hash that any thread reads
 * without a lock. Written by the control thread only.
 */
struct dp_ntable {
	/* set before the workers start */
	struct dp_nslot *slot;
	uint32_t mask;         /**< slots - 1; slots is a power of two >= 2 * max */
	/* written by the control thread, read by every thread (atomics) */
	uint64_t gen;          /**< bumped after a usable MAC changed or went away */
	bool full;             /**< the last dp_ntable_add() found no room */
	/* control thread only */
	struct dp_neigh *ent;
	uint32_t max;
	uint32_t used;         /**< entries handed out so far (ent[0, used)) */
};

/** Slots for a table of @p max entries (a power of two, at least 2 * max). */
uint32_t dp_ntable_nslots(uint32_t max);

/** Set up @p t over zeroed arrays: @p nslots from dp_ntable_nslots(@p max). */
void dp_ntable_init(struct dp_ntable *t, struct dp_nslot *slot, uint32_t nslots,
		   struct dp_neigh *ent, uint32_t max);

/** Control thread: the entry for @p ip, or NULL. */
struct dp_neigh *dp_ntable_find(struct dp_ntable *t, const uint8_t ip[16]);

/**
 * Control thread: a new entry for @p ip (which dp_ntable_find() did not
 * find), published at once as PENDING with tries 0 and next_tsc 0 (the next
 * tick asks). When all entries are taken, a failed one is reused. NULL, and
 * t->full set, if there is none.
 */
struct dp_neigh *dp_ntable_add(struct dp_ntable *t, const uint8_t ip[16]);

/** Control thread: publish entry @p n's state and MAC (after any change). */
void dp_ntable_publish(struct dp_ntable *t, const struct dp_neigh *n);

/**
 * Any thread, no lock: the published state of @p ip with its MAC in @p mac
 * (meaningful for REACHABLE, PROBE and STATIC); DP_NEIGH_FREE if there is no
 * entry; -EBUSY if a slot on the way stayed mid-write (its writer was
 * descheduled): ask again later.
 */
int dp_ntable_lookup(const struct dp_ntable *t, const uint8_t ip[16], uint8_t mac[6]);

/** Any thread: slot @p i (0..mask) as dp_ntable_lookup() sees it, with its IP. */
int dp_ntable_read(const struct dp_ntable *t, uint32_t i, uint8_t ip[16], uint8_t mac[6]);

/** Any thread: the table's generation; read it before dp_ntable_lookup(). */
static inline uint64_t
dp_ntable_gen(const struct dp_ntable *t)
{
	return __atomic_load_n(&t->gen, __ATOMIC_ACQUIRE);
}

/** What a worker (or another thread) passes the control thread about a neighbour. */
enum dp_nev_type {
	DP_NEV_RESOLVE,   /**< a lookup found no entry, or a failed one: resolve it */
	DP_NEV_LEARN,     /**< an ARP/ND answer (or other news): update a known entry */
	DP_NEV_LEARN_NEW, /**< a request to us: update the entry, or make one */
	DP_NEV_SEEN,      /**< RoCEv2 from the entry's MAC: confirm it (dp_neigh_seen()) */
};

/** One event in a neighbour event ring (an rte_ring of elements). */
struct dp_nev {
	uint8_t type;     /**< enum dp_nev_type */
	uint8_t port;     /**< index of the port in the dataplane */
	uint8_t mac[6];
	uint8_t ip[16];
};

_Static_assert(sizeof(struct dp_nev) % 4 == 0, "rte_ring elements are multiples of 4 bytes");

/* A loop that lasted this much longer than the sleep it asked for: the
 * worker's thread was not running (descheduled on a busy host). More than
 * the sleep handler may add (a worker with no QP sleeps 100 ms). */
#define DP_LATE_ROUND_US 200000u

#define DP_TXBUF 64 /**< frames a worker queues per port before a flush */

struct dp_port {
	uint16_t port_id;
	int socket;                        /**< NUMA node of the device */
	struct uroce_dp_port_cfg cfg;
	uint8_t mac[6];
	uint16_t mtu;
	bool promisc;                      /**< MAC override done in software */
	struct rte_mempool *pool;
	unsigned int n_gid;
	uint8_t gid[UROCE_DP_GID_MAX][16];
	uint8_t ll[16];                    /**< fe80:: link-local (GID 0) */
	uint8_t v4gid[16];                 /**< ::ffff:ipv4 */
	struct rte_ring *ctl_tx;           /**< control thread → worker 0 */
	struct dp_ntable nt;               /**< neighbours (neigh.c) */
	struct dp_fault *fault;            /**< [2 * n_workers], fault.c; NULL: no faults */
	bool zc;                           /**< sends zero-copy (cfg.zc_min, see port_zc()) */
	char zc_why[96];                   /**< why not, when cfg.zc_min asks for it */
	bool configured;
	bool started;
	bool steered;                      /**< the steering strategy's rules hold RoCEv2 */
	char steer_why[256];               /**< the strategy's install() reason; "": one worker */
	/** Counters: [0, n_workers) the workers, [n_workers] the control thread. */
	struct dp_counters cnt[UROCE_DP_MAX_WORKERS + 1];
};

struct dp_txq {
	uint16_t n;
	uint16_t ready; /**< the first frames, kept from a partial burst, passed faults */
	struct rte_mbuf *m[DP_TXBUF];
};

/* A worker's private cache of resolved next hops, so that sending a RoCEv2
 * packet reads no shared table: an entry holds while the port table's
 * generation is the one it was read at (a MAC change or failure ends it at
 * once), and for DP_NCACHE_US at most, so that it also says "this worker
 * sent to that peer lately" (dp_neigh_rx_seen()). */
#define DP_NCACHE 64
#define DP_NCACHE_US 1000000u

struct dp_ncache {
	uint8_t ip[16];
	uint8_t mac[6];
	uint16_t port;
	uint64_t gen;        /**< the table's generation the MAC was read at; 0: none */
	uint64_t expires_us;
	uint64_t seen_us;    /**< last RoCEv2 frame from it that confirmed the entry */
	uint64_t asked_us;   /**< last resolution request for an address of this slot */
};

/* A RoCEv2 frame from a cached next hop, from its cached MAC, confirms the
 * shared neighbour entry (RFC 4861 7.3.1's upper-layer hint), at most this
 * often per peer and worker, so that a peer in conversation is never probed
 * and a worker passes the control thread ten such events a second at most. */
#define DP_NEIGH_SEEN_US 100000u

/* A worker asks the control thread to resolve an address (of one cache slot)
 * at most this often: the control thread looks at its rings about every
 * millisecond, so asking more often would only fill them. */
#define DP_NEIGH_ASK_US 1000u

/* Neighbour events a worker's ring holds (and the ring of other threads). */
#define DP_NEV_RING 1024
#define DP_NEV_RING_ANY 256

/* Frames a worker's hand-off ring holds (RoCEv2 for its QPs, from others). */
#define DP_HANDOFF_RING 2048
#define DP_MAX_BURST 256
/** mbufs a started port must leave beyond the workers' bursts (control
 *  frames, neighbour replies, per-lcore cache spill) */
#define DP_POOL_SLACK 128

/* A zero-copy packet's token: the external buffer's shared info and the
 * caller's cookie, from the worker's pool (DP_ZC_TOKENS). */
#define DP_ZC_TOKENS 4096
#define DP_ZC_NONE UINT32_MAX

struct dp_zc {
	struct rte_mbuf_ext_shared_info shinfo;
	struct dp_worker *w;
	void (*released)(const void *cookie);
	uint32_t next;                     /**< free or released list */
	uint8_t cookie[UROCE_DP_ZC_COOKIE];
};

struct dp_worker {
	struct uroce_dp *dp;
	unsigned int idx;                  /**< also the queue id on every port */
	unsigned int lcore;
	uroce_dp_rx_fn rx_fn;
	void *rx_ctx;
	uroce_dp_work_fn work_fn;          /**< the transport's turn each iteration */
	void *work_ctx;
	uroce_dp_deadline_fn deadline_fn;  /**< the transport's next timer, for the idle policy */
	void *deadline_ctx;
	uroce_dp_sleep_fn sleep_fn;        /**< how it sleeps (NULL: rte_delay_us_sleep) */
	void *sleep_ctx;
	struct rte_ring *handoff;          /**< RoCEv2 frames for this worker's QPs from others */
	uint64_t now_us;                   /**< TSC time of the current loop */
	uint64_t asked_us;                 /**< the sleep the current loop asked for */
	uint64_t qs;                       /**< grace epoch seen outside bursts (grace.h) */
	struct uroce_dp_worker_stats st;   /**< written by the worker, read whole by others */
	/* this burst's frames: to free in bulk, and to hand to other workers */
	uint16_t n_free;
	struct rte_mbuf *free[DP_MAX_BURST * 2];
	uint16_t n_out[UROCE_DP_MAX_WORKERS];
	struct rte_mbuf *out[UROCE_DP_MAX_WORKERS][DP_MAX_BURST];
	struct dp_txq txq[UROCE_DP_MAX_PORTS];
	struct dp_ncache ncache[DP_NCACHE];
	/* zero-copy tokens (NULL: no port sends zero-copy) */
	struct dp_zc *zc;
	uint32_t zc_free;                  /**< free list */
	uint32_t zc_done;                  /**< released, for uroce_dp_zc_reap() */
};

struct uroce_dp {
	struct uroce_dp_config cfg;
	unsigned int n_ports;
	struct dp_port ports[UROCE_DP_MAX_PORTS];
	unsigned int n_workers;
	struct dp_worker workers[UROCE_DP_MAX_WORKERS];
	/** Neighbour events to the control thread: [w] from worker w (single
	 * producer), [n_workers] from any other thread (telemetry). */
	struct rte_ring *nev[UROCE_DP_MAX_WORKERS + 1];
	uint64_t tsc_hz;
	/* µs = tsc * us_mult >> 32: one multiplication, no division per use */
	uint64_t us_mult;
	uint64_t idle_spin_tsc;            /**< idle_spin_us in TSC cycles */
	uroce_dp_wake_fn wake_fn;          /**< wakes a sleeping worker (NULL: none) */
	int ctl_wake_fd;                   /**< eventfd: news for the control thread */
	void *wake_ctx;
	uroce_dp_owner_fn owner_fn;        /**< which worker owns a destination QPN */
	void *owner_ctx;
	volatile bool quit;                /**< set by uroce_dp_stop(); read by workers */
	bool running;
	/** A port's PMD unmaps rings under the bursts (memif): munmap() waits
	 * for the workers while they run (grace.h). */
	bool unmap_guard;
	struct dp_grace grace;             /**< the workers as its readers */
};

/** Microseconds from a TSC value: one 64x64 multiplication (us_mult is
 * 10^6 * 2^32 / tsc_hz, computed once); exact to well under a µs per hour. */
static inline uint64_t
dp_tsc_to_us(const struct uroce_dp *dp, uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)tsc * dp->us_mult) >> 32);
}

/* addr.c */
int dp_addr_init(struct uroce_dp *dp, struct dp_port *p, char *err, size_t errlen);
void dp_addr_free(struct dp_port *p);
bool dp_port_owns_gid(const struct dp_port *p, const uint8_t gid[16]);
void dp_arp_input(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m, uint32_t l3_off);
void dp_icmp6_input(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m, uint32_t l3_off);
int dp_neigh_rings_create(struct uroce_dp *dp);
void dp_neigh_rings_free(struct uroce_dp *dp);
/* Control thread: apply the events the workers passed, then age the entries. */
void dp_neigh_tick(struct uroce_dp *dp, uint64_t now_tsc);
/* Pass the control thread an event for port @p port; a full ring drops it
 * and counts neigh_events_dropped in @p cnt (if not NULL). */
void dp_neigh_post(struct rte_ring *r, enum dp_nev_type type, uint16_t port,
		   const uint8_t ip[16], const uint8_t mac[6], struct dp_counters *cnt);
/*
 * Any thread, no lock: uroce_dp_resolve() with the request, if one is needed
 * and @p may_ask, posted to @p ask (the caller's ring).
 */
int dp_neigh_resolve(struct uroce_dp *dp, uint16_t port, const uint8_t ip[16], uint8_t mac[6],
		     struct rte_ring *ask, struct dp_counters *cnt, bool may_ask);

/* config.c: uroce_dp_lcores_check() against the CPU set @p allowed. */
int dp_lcores_check(const char *lcores, const cpu_set_t *allowed, char *err, size_t errlen);

/* telemetry.c */
void dp_telemetry_detach(const struct uroce_dp *dp);

/* roce.c: a worker's RoCEv2 frame from @p ip at @p mac confirms the neighbour
 * entry when it matches the worker's next-hop cache (DP_NEIGH_SEEN_US apart). */
void dp_neigh_rx_seen(struct dp_worker *w, uint16_t port, const uint8_t ip[16],
		      const uint8_t mac[6]);

/* rx.c */
/* Wake worker @p worker after giving it frames (port.c). */
void dp_wake(struct uroce_dp *dp, unsigned int worker);
/* Wake the control thread (uroce_dp_ctl_fd()): a resolution to start, an
 * answer to learn. Any thread. */
void dp_ctl_wake(struct uroce_dp *dp);
int dp_worker_main(void *arg);
/* Queue a frame for TX on the worker's queue of @p p (dropped, counted, if full). */
void dp_tx_enqueue(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m);
/* Send the worker's queue of @p p; what the port refuses stays queued. */
void dp_tx_flush(struct dp_worker *w, struct dp_port *p, struct dp_txq *q);
/** Write Ethernet (and the port's VLAN tag); returns the L3 offset. */
uint32_t dp_l2_write(const struct dp_port *p, uint8_t *buf, const uint8_t dmac[6],
		     uint16_t ethertype);

/*
 * fault.c: fault injection (issue #5, keys fault_* of [port.N]). Each
 * (port, worker, direction) has its own state and PRNG, written only by the
 * worker that owns it, so the data path takes no lock. Only RoCEv2 frames
 * (UDP 4791) are dropped, duplicated, reordered or corrupted.
 */

/** Direction of a fault state; also its index within a worker's pair. */
enum dp_fault_side {
	DP_FAULT_RX = 0,
	DP_FAULT_TX = 1,
};

/** A held packet goes out after this many calls that brought no packet. */
#define DP_FAULT_HOLD_POLLS 1000

/** Fault injection state of one (port, worker, direction). */
struct dp_fault {
	uint64_t rng;              /**< xorshift64* state, never 0 */
	/**
	 * Cumulative cut-offs on a 32-bit draw r: r < cut[0] drops, < cut[1]
	 * duplicates, < cut[2] reorders, < cut[3] corrupts, else no fault.
	 */
	uint64_t cut[4];
	uint64_t ce_cut;           /**< fault_ce: a second draw below it marks CE (RX only) */
	bool enabled;              /**< cut[3] != 0 or ce_cut != 0 */
	struct rte_mbuf *held;     /**< reorder: the packet held back, or NULL */
	unsigned int held_polls;   /**< calls without packets since it was held */
	struct dp_counters *cnt;   /**< the owning worker's counter slot */
} __rte_cache_aligned;

/** True if @p c asks for any fault (some fraction above 0). */
bool dp_fault_wanted(const struct uroce_dp_port_cfg *c);

/**
 * Set up one fault state from the port's configuration. The PRNG is seeded
 * from fault_seed, @p port (index in the config), @p worker and @p side, so a
 * run is repeatable. A direction that fault_dir excludes gets a disabled
 * state. @p cnt is where the fault_* counters go.
 */
void dp_fault_init(struct dp_fault *f, const struct uroce_dp_port_cfg *c, unsigned int port,
		   unsigned int worker, enum dp_fault_side side, struct dp_counters *cnt);

/**
 * Apply faults to a burst in place. @p pkts holds @p n packets and has room
 * for @p room; duplicates (copied from @p mp) go at the end of the burst, a
 * reordered packet is held back and released after at least one later
 * packet. Frames that are not RoCEv2 pass untouched. With fault_ce, a second
 * draw per RoCEv2 frame marks it CE (RX). Counts fault_dropped,
 * fault_duplicated, fault_reordered, fault_corrupted and fault_ce_marked;
 * never logs.
 *
 * @return the new number of packets in @p pkts (at most @p room).
 */
uint16_t dp_fault_burst(struct dp_fault *f, struct rte_mbuf **pkts, uint16_t n, uint16_t room,
			struct rte_mempool *mp);

/** Move the held packet, if any, to @p pkts. @return 1 if one was moved, else 0. */
uint16_t dp_fault_flush(struct dp_fault *f, struct rte_mbuf **pkts, uint16_t room);

/** Free the held packet, if any. The state stays usable. */
void dp_fault_free(struct dp_fault *f);

/**
 * Allocate and initialise the fault states of one port: 2 * @p n_workers
 * states (see dp_fault_at()), on NUMA node @p socket, counting into
 * @p cnt[worker]. With no fault configured, nothing is allocated.
 *
 * @param out  set to the array, or to NULL when dp_fault_wanted() is false
 * @return 0, or -ENOMEM.
 */
int dp_fault_create(const struct uroce_dp_port_cfg *c, unsigned int port, unsigned int n_workers,
		    struct dp_counters *cnt, int socket, struct dp_fault **out);

/** Free held packets and the array from dp_fault_create(). NULL is a no-op. */
void dp_fault_destroy(struct dp_fault *arr, unsigned int n_workers);

/** The state of @p worker for @p side in an array from dp_fault_create(). */
static inline struct dp_fault *
dp_fault_at(struct dp_fault *arr, unsigned int worker, enum dp_fault_side side)
{
	return &arr[worker * 2 + side];
}

#endif /* DP_INTERNAL_H */
