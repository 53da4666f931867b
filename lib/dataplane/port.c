/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Ports and workers: probe each configured ethdev, give every worker lcore
 * one RX and one TX queue on it, create a mempool on the device's NUMA node,
 * apply MTU and MAC, and start/stop it all in order.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mempool.h>

#include "uroce_dp_driver.h"

#include "dp_internal.h"

static int
dp_err(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
dp_err(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* The largest MTU @p info allows: ethdev checks the frame length (MTU plus
 * the device's overhead) against max_rx_pktlen, which may be the tighter
 * bound (a PMD that sets no max_mtu leaves it at 65535). */
static uint32_t
eth_max_mtu(const struct rte_eth_dev_info *info)
{
	uint32_t overhead = RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN, m;

	if (info->max_mtu != UINT16_MAX && info->max_rx_pktlen > info->max_mtu)
		overhead = info->max_rx_pktlen - info->max_mtu;
	m = info->max_rx_pktlen > overhead ? info->max_rx_pktlen - overhead : 0;
	return UROCE_MIN(m, (uint32_t)info->max_mtu);
}

/*
 * Zero-copy needs a device that reads a frame in pieces (multi-segment TX)
 * by address: a virtual one (memif, af_packet, tap copy the pieces). A NIC
 * would DMA from client memory, which is not mapped for it (that would take
 * rte_extmem_register() and rte_dev_dma_map() of every client segment).
 * TX fault injection edits whole frames.
 */
static bool
port_zc(struct dp_port *p, const struct rte_eth_dev_info *info)
{
	const char *bus = info->device != NULL ? rte_bus_name(rte_dev_bus(info->device)) : NULL;

	if (bus == NULL || strcmp(bus, "vdev") != 0) {
		snprintf(p->zc_why, sizeof(p->zc_why), "a %s device: client memory is not "
			 "DMA-mapped for it", bus != NULL ? bus : "bus-less");
		return false;
	}
	if (!(info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)) {
		snprintf(p->zc_why, sizeof(p->zc_why), "%s sends no multi-segment frames",
			 info->driver_name);
		return false;
	}
	if (dp_fault_wanted(&p->cfg) && p->cfg.fault_dir != UROCE_DP_FAULT_RX) {
		snprintf(p->zc_why, sizeof(p->zc_why), "TX fault injection edits whole frames");
		return false;
	}
	return true;
}

/* Each worker's zero-copy tokens, if a port sends zero-copy. */
static int
zc_tokens(struct uroce_dp *dp)
{
	unsigned int i, k;
	uint32_t t;

	for (k = 0; k < dp->n_ports && !dp->ports[k].zc; k++)
		;
	for (i = 0; i < dp->n_workers; i++) {
		struct dp_worker *w = &dp->workers[i];

		w->zc_free = w->zc_done = DP_ZC_NONE;
		if (k == dp->n_ports || w->zc != NULL)
			continue;
		w->zc = rte_zmalloc_socket("uroce_zc", DP_ZC_TOKENS * sizeof(*w->zc),
					   RTE_CACHE_LINE_SIZE, (int)rte_lcore_to_socket_id(w->lcore));
		if (w->zc == NULL)
			return -ENOMEM;
		for (t = 0; t < DP_ZC_TOKENS; t++) {
			w->zc[t].w = w;
			w->zc[t].next = t + 1 < DP_ZC_TOKENS ? t + 1 : DP_ZC_NONE;
		}
		w->zc_free = 0;
	}
	return 0;
}

static int
port_setup(struct uroce_dp *dp, struct dp_port *p, char *err, size_t errlen)
{
	const struct uroce_dp_port_cfg *c = &p->cfg;
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	const struct uroce_dp_pmd_ops *pmd;
	struct rte_ether_addr ea;
	char name[RTE_MEMPOOL_NAMESIZE];
	unsigned int q, cache, room;
	uint32_t max_mtu;
	int rc;

	rc = rte_eth_dev_get_port_by_name(c->device, &p->port_id);
	if (rc != 0) {
		unsigned int i;

		for (i = 0; i < dp->cfg.n_vdev; i++)
			if (strncmp(dp->cfg.vdev[i], c->device, strlen(c->device)) == 0 &&
			    (dp->cfg.vdev[i][strlen(c->device)] == ',' ||
			     dp->cfg.vdev[i][strlen(c->device)] == '\0'))
				return dp_err(err, errlen, -ENODEV,
					      "[%s] device \"%s\": port not found: the vdev did not "
					      "probe, see the driver's message above (af_packet: "
					      "does the interface exist in this netns? memif: is "
					      "the socket directory there?)", c->section, c->device);
		return dp_err(err, errlen, -ENODEV,
			      "[%s] device \"%s\": port not found (%u ports probed); for a vdev "
			      "give vdev = <driver><n>,<args>, for a NIC bind it to vfio-pci "
			      "(dpdk-devbind.py) and check the allow list",
			      c->section, c->device, rte_eth_dev_count_avail());
	}
	rc = rte_eth_dev_info_get(p->port_id, &info);
	if (rc != 0)
		return dp_err(err, errlen, rc, "[%s] %s: cannot read device info: %s",
			      c->section, c->device, strerror(-rc));
	if (info.max_rx_queues < dp->n_workers || info.max_tx_queues < dp->n_workers)
		return dp_err(err, errlen, -EINVAL,
			      "[%s] %s (%s): %u worker lcores need %u RX and TX queues, the "
			      "device has %u/%u (af_packet: add qpairs=%u to the vdev; or use "
			      "fewer lcores)",
			      c->section, c->device, info.driver_name, dp->n_workers,
			      dp->n_workers, info.max_rx_queues, info.max_tx_queues,
			      dp->n_workers);
	p->socket = rte_eth_dev_socket_id(p->port_id);
	if (p->socket < 0)
		p->socket = (int)rte_socket_id();

	memset(&conf, 0, sizeof(conf));
	p->mtu = c->mtu;
	if (p->mtu == 0 && rte_eth_dev_get_mtu(p->port_id, &p->mtu) != 0)
		p->mtu = RTE_ETHER_MTU;
	conf.rxmode.mtu = p->mtu;
	p->zc = dp->cfg.zc_min != 0 && port_zc(p, &info);
	if (p->zc)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	max_mtu = eth_max_mtu(&info);
	pmd = uroce_dp_pmd_find(info.driver_name);
	if (pmd != NULL && pmd->unmaps_under_burst)
		dp->unmap_guard = true;
	if (p->mtu > max_mtu && pmd != NULL && pmd->mtu_beyond_reported) {
		/* The PMD carries more than it reports (drivers/net says so, and
		 * its vdev_args() sized its buffers for our MTU): configure the
		 * ethdev at what it reports, carry ours; the pool holds it. */
		conf.rxmode.mtu = (uint16_t)max_mtu;
		RTE_LOG(INFO, USER1, "[%s] mtu = %u on %s: the ethdev is configured at %u "
			"(what the PMD reports), frames up to %u are carried whole in %s "
			"buffers\n", c->section, p->mtu, info.driver_name, max_mtu, p->mtu,
			strncmp(info.driver_name, "net_", 4) == 0 ? info.driver_name + 4 :
			info.driver_name);
	} else if (p->mtu < info.min_mtu || p->mtu > max_mtu) {
		return dp_err(err, errlen, -EINVAL,
			      "[%s] mtu = %u: %s accepts %u..%u", c->section, p->mtu,
			      info.driver_name, info.min_mtu, max_mtu);
	}
	rc = rte_eth_dev_configure(p->port_id, (uint16_t)dp->n_workers,
				   (uint16_t)dp->n_workers, &conf);
	if (rc != 0)
		return dp_err(err, errlen, rc, "[%s] %s: rte_eth_dev_configure: %s",
			      c->section, c->device, strerror(-rc));
	p->configured = true;

	/* One mbuf holds a whole frame: MTU + Ethernet + two VLAN tags + FCS. */
	room = p->mtu + RTE_ETHER_HDR_LEN + 2 * RTE_VLAN_HLEN + RTE_ETHER_CRC_LEN;
	if (room < RTE_MBUF_DEFAULT_DATAROOM)
		room = RTE_MBUF_DEFAULT_DATAROOM;
	cache = UROCE_MIN(256u, dp->cfg.mbufs / 8);
	snprintf(name, sizeof(name), "uroce_p%u", p->port_id);
	p->pool = rte_pktmbuf_pool_create(name, dp->cfg.mbufs, cache, 0,
					  (uint16_t)(room + RTE_PKTMBUF_HEADROOM), p->socket);
	if (p->pool == NULL)
		return dp_err(err, errlen, -ENOMEM,
			      "[%s] cannot create a pool of %u mbufs on NUMA node %d: %s "
			      "(reserve more hugepages, or lower [limits] mbufs)",
			      c->section, dp->cfg.mbufs, p->socket, rte_strerror(rte_errno));

	for (q = 0; q < dp->n_workers; q++) {
		uint16_t nrx = (uint16_t)dp->cfg.rx_desc, ntx = (uint16_t)dp->cfg.tx_desc;

		rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nrx, &ntx);
		rc = rte_eth_rx_queue_setup(p->port_id, (uint16_t)q, nrx, (unsigned)p->socket,
					    NULL, p->pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(p->port_id, (uint16_t)q, ntx,
						    (unsigned)p->socket, NULL);
		if (rc != 0)
			return dp_err(err, errlen, rc, "[%s] %s: queue %u setup: %s",
				      c->section, c->device, q, strerror(-rc));
	}

	if (pmd != NULL && pmd->mac_in_software) {
		/* The ethdev's MAC is another stack's (a tap's is the kernel's,
		 * and the kernel is the peer on that wire): ours is kept in
		 * software, the configured one or a random local one. */
		if (c->has_mac)
			memcpy(ea.addr_bytes, c->mac, 6);
		else
			rte_eth_random_addr(ea.addr_bytes);
		rc = rte_eth_promiscuous_enable(p->port_id);
		if (rc != 0)
			return dp_err(err, errlen, rc, "[%s] %s: cannot go promiscuous: %s",
				      c->section, c->device, strerror(-rc));
		p->promisc = true;
		memcpy(p->mac, ea.addr_bytes, 6);
	} else if (c->has_mac) {
		memcpy(ea.addr_bytes, c->mac, 6);
		rc = rte_eth_dev_default_mac_addr_set(p->port_id, &ea);
		if (rc != 0) {
			/* The device keeps its MAC: receive everything and filter. */
			rc = rte_eth_promiscuous_enable(p->port_id);
			if (rc != 0)
				return dp_err(err, errlen, rc,
					      "[%s] mac: %s can neither set its MAC nor go "
					      "promiscuous: %s",
					      c->section, info.driver_name, strerror(-rc));
			p->promisc = true;
		}
		memcpy(p->mac, c->mac, 6);
	} else {
		rc = rte_eth_macaddr_get(p->port_id, &ea);
		if (rc != 0)
			return dp_err(err, errlen, rc, "[%s] %s: no MAC address: %s",
				      c->section, c->device, strerror(-rc));
		memcpy(p->mac, ea.addr_bytes, 6);
	}

	snprintf(name, sizeof(name), "uroce_ctl%u", p->port_id);
	p->ctl_tx = rte_ring_create(name, 256, p->socket, RING_F_SC_DEQ);
	if (p->ctl_tx == NULL)
		return dp_err(err, errlen, -ENOMEM, "[%s] cannot create the control TX ring: %s",
			      c->section, rte_strerror(rte_errno));
	rc = dp_fault_create(c, (unsigned int)(p - dp->ports), dp->n_workers, p->cnt, p->socket,
			     &p->fault);
	if (rc != 0)
		return dp_err(err, errlen, rc, "[%s] out of memory for the fault injection state",
			      c->section);
	return dp_addr_init(dp, p, err, errlen);
}

/* Every worker is one reader of the dataplane's grace domain (grace.h). */
_Static_assert(UROCE_DP_MAX_WORKERS <= DP_GRACE_MAX_READERS, "a grace domain holds every worker");

struct uroce_dp *
uroce_dp_create(const struct uroce_dp_config *cfg, char *err, size_t errlen)
{
	struct uroce_dp *dp;
	unsigned int lcore, i;
	int rc;

	dp = rte_zmalloc("uroce_dp", sizeof(*dp), RTE_CACHE_LINE_SIZE);
	if (dp == NULL) {
		dp_err(err, errlen, 0, "out of memory for the dataplane (EAL memory: -m or "
		       "hugepages)");
		errno = ENOMEM;
		return NULL;
	}
	dp->cfg = *cfg;
	dp->ctl_wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (dp->ctl_wake_fd < 0) {
		dp_err(err, errlen, errno, "eventfd");
		rte_free(dp);
		return NULL;
	}
	/* The escalation never shortens the first sleep. */
	if (dp->cfg.idle_sleep_max_us < dp->cfg.idle_sleep_us)
		dp->cfg.idle_sleep_max_us = dp->cfg.idle_sleep_us;
	dp->tsc_hz = rte_get_tsc_hz();
	dp->us_mult = (uint64_t)(((unsigned __int128)1000000 << 32) / dp->tsc_hz);
	dp->idle_spin_tsc = (uint64_t)cfg->idle_spin_us * dp->tsc_hz / 1000000;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (dp->n_workers >= UROCE_DP_MAX_WORKERS) {
			dp_err(err, errlen, 0, "%u worker lcores given, at most %u are driven: "
			       "give fewer lcores", rte_lcore_count() - 1, UROCE_DP_MAX_WORKERS);
			rte_free(dp);
			errno = EINVAL;
			return NULL;
		}
		dp->workers[dp->n_workers].dp = dp;
		dp->workers[dp->n_workers].idx = dp->n_workers;
		dp->workers[dp->n_workers].lcore = lcore;
		dp->workers[dp->n_workers].qs = DP_GRACE_OFFLINE;
		dp->grace.qs[dp->n_workers] = &dp->workers[dp->n_workers].qs;
		dp->n_workers++;
	}
	dp->grace.n_readers = dp->n_workers;
	if (cfg->n_ports > 0 && dp->n_workers == 0) {
		dp_err(err, errlen, 0, "no worker lcore: give at least two lcores (e.g. "
		       "[eal] lcores = 0,1 or -l 0,1); the first one is the control thread");
		rte_free(dp);
		errno = EINVAL;
		return NULL;
	}
	if (cfg->n_ports > 0 && dp_neigh_rings_create(dp) != 0) {
		dp_err(err, errlen, 0, "cannot create the neighbour event rings: %s",
		       rte_strerror(rte_errno));
		dp_neigh_rings_free(dp);
		rte_free(dp);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < cfg->n_ports; i++) {
		struct dp_port *p = &dp->ports[i];

		p->cfg = cfg->ports[i];
		dp->n_ports++;
		rc = port_setup(dp, p, err, errlen);
		if (rc != 0) {
			uroce_dp_destroy(dp);
			errno = -rc;
			return NULL;
		}
	}
	return dp;
}

int
uroce_dp_set_rx_handler(struct uroce_dp *dp, unsigned int worker, uroce_dp_rx_fn fn, void *ctx)
{
	if (worker >= dp->n_workers)
		return -EINVAL;
	if (dp->running)
		return -EBUSY;
	dp->workers[worker].rx_fn = fn;
	dp->workers[worker].rx_ctx = ctx;
	return 0;
}

int
uroce_dp_set_owner(struct uroce_dp *dp, uroce_dp_owner_fn fn, void *ctx)
{
	if (dp->running)
		return -EBUSY;
	dp->owner_fn = fn;
	dp->owner_ctx = ctx;
	return 0;
}

int
uroce_dp_set_deadline_handler(struct uroce_dp *dp, unsigned int worker, uroce_dp_deadline_fn fn,
			      void *ctx)
{
	if (worker >= dp->n_workers)
		return -EINVAL;
	if (dp->running)
		return -EBUSY;
	dp->workers[worker].deadline_fn = fn;
	dp->workers[worker].deadline_ctx = ctx;
	return 0;
}

int
uroce_dp_set_sleep_handler(struct uroce_dp *dp, unsigned int worker, uroce_dp_sleep_fn fn,
			   void *ctx)
{
	if (worker >= dp->n_workers)
		return -EINVAL;
	if (dp->running)
		return -EBUSY;
	dp->workers[worker].sleep_fn = fn;
	dp->workers[worker].sleep_ctx = ctx;
	return 0;
}

int
uroce_dp_set_wake_handler(struct uroce_dp *dp, uroce_dp_wake_fn fn, void *ctx)
{
	if (dp->running)
		return -EBUSY;
	dp->wake_fn = fn;
	dp->wake_ctx = ctx;
	return 0;
}

void
dp_wake(struct uroce_dp *dp, unsigned int worker)
{
	if (dp->wake_fn != NULL)
		dp->wake_fn(dp->wake_ctx, worker);
}

uint64_t
uroce_dp_worker_now_us(const struct uroce_dp *dp, unsigned int worker)
{
	return dp->workers[worker].now_us;
}

int
uroce_dp_worker_stats(const struct uroce_dp *dp, unsigned int worker,
		      struct uroce_dp_worker_stats *st, uint64_t *tsc_hz)
{
	const struct uroce_dp_worker_stats *w;

	if (dp == NULL || st == NULL || worker >= dp->n_workers)
		return -EINVAL;
	/* Each field is an aligned 64-bit word its worker alone writes. */
	w = &dp->workers[worker].st;
	st->busy_cycles = __atomic_load_n(&w->busy_cycles, __ATOMIC_RELAXED);
	st->idle_cycles = __atomic_load_n(&w->idle_cycles, __ATOMIC_RELAXED);
	st->loops = __atomic_load_n(&w->loops, __ATOMIC_RELAXED);
	st->rx_packets = __atomic_load_n(&w->rx_packets, __ATOMIC_RELAXED);
	st->tx_packets = __atomic_load_n(&w->tx_packets, __ATOMIC_RELAXED);
	st->handoff_in = __atomic_load_n(&w->handoff_in, __ATOMIC_RELAXED);
	st->handoff_out = __atomic_load_n(&w->handoff_out, __ATOMIC_RELAXED);
	st->handoff_full = __atomic_load_n(&w->handoff_full, __ATOMIC_RELAXED);
	st->sleeps = __atomic_load_n(&w->sleeps, __ATOMIC_RELAXED);
	st->late_rounds = __atomic_load_n(&w->late_rounds, __ATOMIC_RELAXED);
	st->max_late_us = __atomic_load_n(&w->max_late_us, __ATOMIC_RELAXED);
	if (tsc_hz != NULL)
		*tsc_hz = dp->tsc_hz;
	return 0;
}

/*
 * What the queues keep once started must leave the workers enough to run:
 * some PMDs fill every RX descriptor with an mbuf of the port's pool at
 * setup or start (NICs, and net_tap, which holds a chain per descriptor),
 * others hold none (af_packet, memif). Measure instead of guessing: a pool
 * the queues took whole drops every frame as rx_nombuf, silently.
 */
static int
pool_check(struct uroce_dp *dp, struct dp_port *p, char *err, size_t errlen)
{
	unsigned int avail = rte_mempool_avail_count(p->pool);
	unsigned int need = dp->n_workers * (DP_MAX_BURST + DP_TXBUF) + DP_POOL_SLACK;

	if (avail >= need)
		return 0;
	return dp_err(err, errlen, -ENOBUFS,
		      "[%s] %s: the %u RX/TX queue pair(s) keep %u of the port's %u mbufs, "
		      "leaving %u; %u worker(s) need at least %u to receive and send: raise "
		      "[limits] mbufs (to %u or more) or lower rx_desc (%u)",
		      p->cfg.section, p->cfg.device, dp->n_workers, dp->cfg.mbufs - avail,
		      dp->cfg.mbufs, avail, dp->n_workers, need,
		      dp->cfg.mbufs - avail + need, dp->cfg.rx_desc);
}

/* RoCEv2 to queue 0 through the registered steering strategy, if any. */
static bool
port_steer(struct dp_port *p)
{
	const struct uroce_dp_steer_ops *s = uroce_dp_steer();

	if (s == NULL) {
		snprintf(p->steer_why, sizeof(p->steer_why), "no steering strategy registered "
			 "(drivers/net); software hand-off in use");
		return false;
	}
	return s->install(p->port_id, 0, p->steer_why, sizeof(p->steer_why)) == 0;
}

int
uroce_dp_start(struct uroce_dp *dp, char *err, size_t errlen)
{
	unsigned int i;
	int rc;

	for (i = 0; i < dp->n_ports; i++) {
		struct dp_port *p = &dp->ports[i];

		rc = rte_eth_dev_start(p->port_id);
		if (rc != 0) {
			uroce_dp_stop(dp);
			return dp_err(err, errlen, rc, "[%s] %s: rte_eth_dev_start: %s",
				      p->cfg.section, p->cfg.device, strerror(-rc));
		}
		p->started = true;
		rc = pool_check(dp, p, err, errlen);
		if (rc != 0) {
			uroce_dp_stop(dp);
			return rc;
		}
		/* With one worker owning every QP (no owner function), have the NIC
		 * put RoCEv2 on its queue (drivers/net). When QPs are spread over
		 * the workers, RSS spreads the frames and rx.c hands each to its
		 * QP's owner: drivers/net has no per-QPN rules yet. */
		if (dp->n_workers > 1 && dp->owner_fn == NULL)
			p->steered = port_steer(p);
		else if (dp->n_workers > 1)
			snprintf(p->steer_why, sizeof(p->steer_why), "QPs on every worker: RSS, "
				 "then a software hand-off to each QP's owner");
	}
	/* Every worker that runs a transport takes its QPs' frames from others. */
	for (i = 0; i < dp->n_workers && dp->n_workers > 1; i++) {
		struct dp_worker *w = &dp->workers[i];
		char name[RTE_RING_NAMESIZE];

		if (w->work_fn == NULL || w->handoff != NULL)
			continue;
		snprintf(name, sizeof(name), "uroce_handoff_%u", i);
		w->handoff = rte_ring_create(name, DP_HANDOFF_RING,
					     (int)rte_lcore_to_socket_id(w->lcore), RING_F_SC_DEQ);
		if (w->handoff == NULL) {
			uroce_dp_stop(dp);
			return dp_err(err, errlen, -ENOMEM, "cannot create the hand-off ring: %s",
				      rte_strerror(rte_errno));
		}
	}
	if (zc_tokens(dp) != 0) {
		uroce_dp_stop(dp);
		return dp_err(err, errlen, -ENOMEM, "cannot allocate the zero-copy tokens "
			      "(%u per worker)", DP_ZC_TOKENS);
	}
	dp->quit = false;
	dp->running = true;
	if (dp->unmap_guard)
		dp_grace_register(&dp->grace);
	for (i = 0; i < dp->n_workers; i++) {
		rc = rte_eal_remote_launch(dp_worker_main, &dp->workers[i], dp->workers[i].lcore);
		if (rc != 0) {
			uroce_dp_stop(dp);
			return dp_err(err, errlen, rc, "cannot launch worker on lcore %u: %s",
				      dp->workers[i].lcore, strerror(-rc));
		}
	}
	return 0;
}

void
uroce_dp_poll(struct uroce_dp *dp)
{
	uint64_t v;

	if (read(dp->ctl_wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		v = 0; /* nothing else to do: the tick below looks anyway */
	dp_neigh_tick(dp, rte_rdtsc());
}

int
uroce_dp_ctl_fd(const struct uroce_dp *dp)
{
	return dp->ctl_wake_fd;
}

void
dp_ctl_wake(struct uroce_dp *dp)
{
	uint64_t one = 1;

	/* A full counter means a wake is pending already. */
	if (write(dp->ctl_wake_fd, &one, sizeof(one)) < 0)
		return;
}

void
uroce_dp_stop(struct uroce_dp *dp)
{
	unsigned int i;

	if (dp == NULL)
		return;
	if (dp->running) {
		dp->quit = true;
		rte_wmb();
		for (i = 0; i < dp->n_workers; i++)
			rte_eal_wait_lcore(dp->workers[i].lcore);
		dp->running = false;
		if (dp->unmap_guard)
			dp_grace_unregister(&dp->grace);
	}
	for (i = 0; i < dp->n_ports; i++) {
		struct dp_port *p = &dp->ports[i];

		if (p->started) {
			if (uroce_dp_steer() != NULL)
				uroce_dp_steer()->remove(p->port_id);
			p->steered = false;
			rte_eth_dev_stop(p->port_id);
			p->started = false;
		}
	}
}

void
uroce_dp_destroy(struct uroce_dp *dp)
{
	struct rte_mbuf *m;
	unsigned int i;

	if (dp == NULL)
		return;
	dp_telemetry_detach(dp);
	uroce_dp_stop(dp);
	for (i = 0; i < dp->n_ports; i++) {
		struct dp_port *p = &dp->ports[i];

		if (p->configured)
			rte_eth_dev_close(p->port_id);
		if (p->ctl_tx != NULL) {
			while (rte_ring_dequeue(p->ctl_tx, (void **)&m) == 0)
				rte_pktmbuf_free(m);
			rte_ring_free(p->ctl_tx);
		}
		dp_addr_free(p);
		dp_fault_destroy(p->fault, dp->n_workers); /* held mbufs go back to the pool */
		p->fault = NULL;
	}
	for (i = 0; i < dp->n_workers; i++) {
		if (dp->workers[i].handoff == NULL)
			continue;
		while (rte_ring_dequeue(dp->workers[i].handoff, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(dp->workers[i].handoff);
	}
	dp_neigh_rings_free(dp);
	for (i = 0; i < dp->n_ports; i++)
		rte_mempool_free(dp->ports[i].pool);
	/* After the ports closed: a PMD frees what it held at close. */
	for (i = 0; i < dp->n_workers; i++)
		rte_free(dp->workers[i].zc);
	close(dp->ctl_wake_fd);
	rte_free(dp);
}

unsigned int
uroce_dp_port_count(const struct uroce_dp *dp)
{
	return dp->n_ports;
}

unsigned int
uroce_dp_worker_count(const struct uroce_dp *dp)
{
	return dp->n_workers;
}

int
uroce_dp_gid_get(const struct uroce_dp *dp, uint16_t port, unsigned int index, uint8_t gid[16])
{
	if (port >= dp->n_ports)
		return -EINVAL;
	if (index >= dp->ports[port].n_gid)
		return -ENOENT;
	memcpy(gid, dp->ports[port].gid[index], 16);
	return 0;
}
