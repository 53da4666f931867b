/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * uroced's parts: main.c (options, EAL, signals) and core.c (the daemon core
 * of lib/daemon on the dataplane's worker 0).
 */

#ifndef UROCED_H
#define UROCED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uroce_daemon.h"
#include "uroce_dataplane.h"

/* Counters the control thread publishes for the telemetry thread (a seqlock:
 * seq is odd while it writes; a reader retries until it reads one even value
 * before and after its copy). */
#define UROCED_SNAP_CNT 64
#define UROCED_SNAP_US 100000u
/* ... and while no worker has done anything since the last one (each
 * snapshot calls every worker: an idle daemon should not wake them 10 times
 * a second for counters that do not move). Whether they have is looked at
 * every UROCED_SNAP_US, so work after an idle spell is published within it. */
#define UROCED_SNAP_IDLE_US 1000000u
#define UROCED_SNAP_QPS 32 /* QPs with per-QP counters in telemetry (lowest QPNs) */
#define UROCED_SNAP_GENS 8 /* load generators in telemetry (/uroce/gen) */

/* A load generator's rates over the last second (/uroce/gen). */
struct uroced_gen_rate {
	uint64_t msgs_per_s;
	uint64_t bytes_per_s;
	uint64_t cycles_per_msg;   /* its worker's busy cycles per message, 0: unknown */
	uint64_t busy_permille;    /* its worker's busy share, in 1/1000 */
};

/* What the last rate was computed from (control thread). */
struct uroced_gen_prev {
	uint32_t client_id;
	uint32_t id;
	uint64_t t_us;
	uint64_t completed;
	uint64_t bytes;
	uint64_t busy_cycles;
	uint64_t idle_cycles;
	struct uroced_gen_rate rate;
};

struct uroced_snap {
	uint32_t seq;
	struct uroce_daemon_stats st;
	unsigned int n_cnt;
	uint64_t cnt[UROCED_SNAP_CNT];
	unsigned int n_qps;
	struct uroce_daemon_qp_info qps[UROCED_SNAP_QPS];
	unsigned int n_workers;
	struct uroce_daemon_worker_stats workers[UROCE_DP_MAX_WORKERS];
	unsigned int n_gens;
	struct uroce_daemon_gen_info gens[UROCED_SNAP_GENS];
	struct uroced_gen_rate gen_rate[UROCED_SNAP_GENS];
	unsigned int n_cm;                  /* QP1 and the CM (uroce_daemon_cm_counters) */
	uint64_t cm[UROCED_SNAP_CNT];
};

struct uroced_core;

/* What a worker's port ops and callbacks get: the core and which worker. */
struct uroced_wctx {
	struct uroced_core *c;
	unsigned int worker;
};

struct uroced_core {
	struct uroce_daemon *d;
	struct uroce_dp *dp;
	bool on_worker;        /* workers run the daemon's workers; else the main lcore */
	uint64_t next_snap_us;          /* when snap_publish() looks again */
	uint64_t snap_us;               /* when it last published */
	uint64_t snap_busy;             /* the workers' busy cycles when it last looked */
	bool ctl_worked;                /* the control thread worked since it published */
	struct uroced_wctx w[UROCE_DP_MAX_WORKERS];
	struct uroced_snap snap;
	unsigned int n_gen_prev;
	struct uroced_gen_prev gen_prev[UROCED_SNAP_GENS];
};

/** The verbs active MTU (enum uroce_mtu) a port of IP MTU @p ip_mtu carries. */
uint8_t uroced_active_mtu(uint16_t ip_mtu);

/**
 * Create the daemon core over @p dp (GIDs and MTU of port 0; loopback only
 * without ports) and install it on worker 0. Before uroce_dp_start().
 * @return 0, or -errno with @p err set to one line.
 */
int uroced_core_start(struct uroced_core *c, struct uroce_dp *dp,
		      const struct uroce_dp_config *cfg, char *err, size_t errlen);

/** Register /uroce/daemon/stats (daemon resources and transport counters), /uroce/qps,
 * /uroce/qp/stats, /uroce/workers and /uroce/gen (load generators). */
int uroced_core_telemetry_register(struct uroced_core *c);

/**
 * The main lcore's turn: the control plane (clients, requests, events),
 * waiting up to @p timeout_ms for a client; without workers, the whole
 * daemon. @return work done.
 */
unsigned int uroced_core_main_poll(struct uroced_core *c, int timeout_ms);

/**
 * Orderly stop: QPs to ERR with flush completions written (on the owner
 * lcore), workers stopped, sessions closed, socket removed.
 * @param workers_ran  false if uroce_dp_start() failed: the caller's thread
 *                     then does the workers' part itself
 * @return the number of QPs that were moved to ERR.
 */
unsigned int uroced_core_stop(struct uroced_core *c, struct uroce_dp *dp, bool workers_ran);

#endif /* UROCED_H */
