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
 * neighbour table is shared and protected by a spinlock (control path only,
 * never taken for RoCEv2 packets).
 */

#ifndef DP_INTERNAL_H
#define DP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

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
};

struct dp_neigh {
	uint8_t ip[16];
	uint8_t mac[6];
	enum dp_neigh_state state;
	unsigned int tries;
	uint64_t next_tsc; /**< when the next request is due (PENDING) */
};

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
	rte_spinlock_t neigh_lock;
	struct dp_neigh *neigh;
	unsigned int neigh_max;
	bool configured;
	bool started;
	/** Counters: [0, n_workers) the workers, [n_workers] the control thread. */
	struct dp_counters cnt[UROCE_DP_MAX_WORKERS + 1];
};

struct dp_txq {
	uint16_t n;
	struct rte_mbuf *m[DP_TXBUF];
};

struct dp_worker {
	struct uroce_dp *dp;
	unsigned int idx;                  /**< also the queue id on every port */
	unsigned int lcore;
	uroce_dp_rx_fn rx_fn;
	void *rx_ctx;
	uint64_t now_us;                   /**< TSC time of the current loop */
	struct dp_txq txq[UROCE_DP_MAX_PORTS];
};

struct uroce_dp {
	struct uroce_dp_config cfg;
	unsigned int n_ports;
	struct dp_port ports[UROCE_DP_MAX_PORTS];
	unsigned int n_workers;
	struct dp_worker workers[UROCE_DP_MAX_WORKERS];
	uint64_t tsc_hz;
	volatile bool quit;                /**< set by uroce_dp_stop(); read by workers */
	bool running;
};

/** Microseconds from a TSC value. */
static inline uint64_t
dp_tsc_to_us(const struct uroce_dp *dp, uint64_t tsc)
{
	return tsc / dp->tsc_hz * 1000000 + tsc % dp->tsc_hz * 1000000 / dp->tsc_hz;
}

/* addr.c */
int dp_addr_init(struct uroce_dp *dp, struct dp_port *p, char *err, size_t errlen);
void dp_addr_free(struct dp_port *p);
bool dp_port_owns_gid(const struct dp_port *p, const uint8_t gid[16]);
void dp_arp_input(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m, uint32_t l3_off);
void dp_icmp6_input(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m, uint32_t l3_off);
void dp_neigh_tick(struct uroce_dp *dp, uint64_t now_tsc);

/* telemetry.c */
void dp_telemetry_detach(const struct uroce_dp *dp);

/* rx.c */
int dp_worker_main(void *arg);
void dp_tx_enqueue(struct dp_worker *w, struct dp_port *p, struct rte_mbuf *m);
/** Write Ethernet (and the port's VLAN tag); returns the L3 offset. */
uint32_t dp_l2_write(const struct dp_port *p, uint8_t *buf, const uint8_t dmac[6],
		     uint16_t ethertype);

#endif /* DP_INTERNAL_H */
