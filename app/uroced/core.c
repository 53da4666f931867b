/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The daemon core (lib/daemon) put on the DPDK dataplane. The main lcore is
 * the control thread: it blocks in uroce_daemon_control_poll() (client
 * sockets, epoll) between its neighbour timers. Each dataplane worker runs
 * one daemon worker: its RoCEv2 frames go to uroce_daemon_worker_rx() (the
 * dataplane hands a frame to the worker that owns its destination QP, which
 * the QPN names), and uroce_daemon_worker_poll() runs once per loop; the
 * engine's packets go out through the port ops below, built in mbufs of the
 * port's pool, on the worker's own TX queue. With no worker lcore (and then
 * no port), the main lcore runs the whole daemon, loopback only.
 */

#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_atomic.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_telemetry.h>

#include "uroced.h"

/* Bytes a RoCEv2 packet needs beyond its payload at most: IPv6, UDP, BTH,
 * the longest extension headers (AtomicETH, 28), ICRC. The port's IP MTU
 * minus this gives the largest IB MTU the port can carry (verbs active_mtu). */
#define ROCE_MAX_OVERHEAD (40u + 8u + 12u + 28u + 4u)

/* The worker's clock: the dataplane read the TSC once for this loop. */
static uint64_t
port_now_us(void *ctx)
{
	struct uroced_wctx *w = ctx;

	return uroce_dp_worker_now_us(w->c->dp, w->worker);
}

static uint8_t *
port_tx_alloc(void *ctx, uint32_t ib_len)
{
	struct uroced_wctx *w = ctx;

	return uroce_dp_roce_alloc(w->c->dp, w->worker, 0, ib_len);
}

static void
port_tx_free(void *ctx, uint8_t *ib)
{
	(void)ctx;
	uroce_dp_roce_free(ib);
}

static void
port_tx_send(void *ctx, uint8_t *ib, uint32_t ib_len, const struct uroce_eng_tx_addr *a)
{
	struct uroced_wctx *w = ctx;
	struct uroce_encap e;

	uroce_eng_tx_encap(a, &e);
	/* Verbs port 1 is dataplane port 0, the only one the core drives. */
	uroce_dp_roce_send(w->c->dp, w->worker, 0, ib, ib_len, &e);
}

/* The memory half of a zero-copy release, on whichever thread frees the
 * mbuf; the WQE half waits for port_tx_zc_reap() on the worker. */
static void
port_zc_mem_released(const void *cookie)
{
	uroce_eng_zc_mem_release(cookie);
}

static bool
port_tx_send_zc(void *ctx, uint8_t *ib, uint32_t hdr_len, const uint8_t *payload,
		uint32_t paylen, uint32_t ib_len, const struct uroce_eng_tx_addr *a,
		const struct uroce_eng_zc *zc)
{
	struct uroced_wctx *w = ctx;
	struct uroce_encap e;

	(void)ib_len;
	_Static_assert(sizeof(*zc) <= UROCE_DP_ZC_COOKIE, "the engine's zc fits the cookie");
	uroce_eng_tx_encap(a, &e);
	return uroce_dp_roce_send_zc(w->c->dp, w->worker, 0, ib, hdr_len, payload, paylen, &e,
				     zc, sizeof(*zc), port_zc_mem_released) == 1;
}

struct zc_reap_arg {
	void (*fn)(void *arg, const struct uroce_eng_zc *zc);
	void *arg;
};

static void
port_zc_one(void *arg, const void *cookie)
{
	struct zc_reap_arg *r = arg;
	struct uroce_eng_zc zc;

	memcpy(&zc, cookie, sizeof(zc)); /* the cookie bytes are not aligned for it */
	r->fn(r->arg, &zc);
}

static unsigned int
port_tx_zc_reap(void *ctx, void (*fn)(void *arg, const struct uroce_eng_zc *zc), void *arg)
{
	struct uroced_wctx *w = ctx;
	struct zc_reap_arg r = {fn, arg};

	return uroce_dp_zc_reap(w->c->dp, w->worker, port_zc_one, &r);
}

/* Any thread may ask (uroce_dp_resolve); the MAC itself is the workers' business. */
static int
port_resolve(void *ctx, const uint8_t gid[16])
{
	struct uroced_wctx *w = ctx;
	uint8_t mac[6];

	return uroce_dp_resolve(w->c->dp, 0, gid, mac);
}

static const struct uroce_daemon_port_ops dp_port_ops = {
	.now_us = port_now_us,
	.tx_alloc = port_tx_alloc,
	.tx_send = port_tx_send,
	.tx_free = port_tx_free,
	.tx_send_zc = port_tx_send_zc,
	.tx_zc_reap = port_tx_zc_reap,
	.resolve = port_resolve,
};

/* The dataplane frees the mbuf with its burst once this returns. */
static int
core_rx(void *ctx, uint16_t port, const struct uroce_frame *frame, struct uroce_pkt *pkt)
{
	struct uroced_wctx *w = ctx;

	(void)port;
	return uroce_daemon_worker_rx(w->c->d, w->worker, pkt, frame);
}

static unsigned int
core_owner(void *ctx, uint32_t dqpn)
{
	(void)ctx;
	return uroce_daemon_qpn_worker(dqpn);
}

static uint64_t
core_deadline(void *ctx)
{
	struct uroced_wctx *w = ctx;

	return uroce_daemon_worker_deadline(w->c->d, w->worker);
}

/* An idle worker sleeps on the status segment's futex word: a client's
 * doorbell, the control thread or another worker's frames end the sleep. */
static bool
core_sleep(void *ctx, uint64_t us, bool (*more)(void *), void *more_ctx)
{
	struct uroced_wctx *w = ctx;

	return uroce_daemon_worker_sleep(w->c->d, w->worker, us, more, more_ctx);
}

static void
core_wake(void *ctx, unsigned int worker)
{
	struct uroced_core *c = ctx;

	uroce_daemon_worker_wake(c->d, worker);
}

/* The dataplane's half of a worker's statistics (uroce-ctl workers). */
static void
core_worker_stats(void *ctx, unsigned int worker, struct uroce_daemon_worker_stats *st)
{
	struct uroced_core *c = ctx;
	struct uroce_dp_worker_stats ws;

	if (!c->on_worker || uroce_dp_worker_stats(c->dp, worker, &ws, &st->tsc_hz) != 0)
		return;
	st->busy_cycles = ws.busy_cycles;
	st->idle_cycles = ws.idle_cycles;
	st->loops = ws.loops;
	st->rx_packets = ws.rx_packets;
	st->tx_packets = ws.tx_packets;
	st->handoff_in = ws.handoff_in;
	st->handoff_out = ws.handoff_out;
	st->sleeps = ws.sleeps;
	st->late_rounds = ws.late_rounds;
	st->max_late_us = ws.max_late_us;
}

static uint64_t
mono_us(void)
{
	return rte_get_tsc_cycles() / (rte_get_tsc_hz() / 1000000u ? rte_get_tsc_hz() / 1000000u : 1);
}

/*
 * The load generators' rates for /uroce/gen: over at least a second, from
 * their completions and their worker's cycle accounting (taken in the same
 * snapshot), so cycles per message sit beside the message rate.
 */
static void
snap_gens(struct uroced_core *c, struct uroced_snap *s, uint64_t now)
{
	struct uroced_gen_prev prev[UROCED_SNAP_GENS];
	unsigned int i, k, n = 0;

	s->n_gens = uroce_daemon_gens(c->d, s->gens, UROCED_SNAP_GENS);
	for (i = 0; i < s->n_gens; i++) {
		const struct uroce_daemon_gen_info *g = &s->gens[i];
		const struct uroce_daemon_worker_stats *w =
			g->worker < s->n_workers ? &s->workers[g->worker] : NULL;
		struct uroced_gen_prev *p = NULL, *q = &prev[n++];

		for (k = 0; k < c->n_gen_prev; k++)
			if (c->gen_prev[k].client_id == g->client_id && c->gen_prev[k].id == g->id)
				p = &c->gen_prev[k];
		memset(q, 0, sizeof(*q));
		q->client_id = g->client_id;
		q->id = g->id;
		q->t_us = now;
		q->completed = g->completed;
		q->bytes = g->bytes;
		q->busy_cycles = w != NULL ? w->busy_cycles : 0;
		q->idle_cycles = w != NULL ? w->idle_cycles : 0;
		if (p != NULL && now - p->t_us < 1000000u) {
			*q = *p; /* keep measuring from the older point */
		} else if (p != NULL && g->completed >= p->completed) {
			uint64_t dt = now - p->t_us, dm = g->completed - p->completed;
			uint64_t busy = q->busy_cycles - p->busy_cycles;
			uint64_t all = busy + (q->idle_cycles - p->idle_cycles);

			q->rate.msgs_per_s = dm * 1000000u / dt;
			q->rate.bytes_per_s = (g->bytes - p->bytes) * 1000000u / dt;
			q->rate.cycles_per_msg = dm != 0 && w != NULL && w->tsc_hz != 0 ? busy / dm : 0;
			q->rate.busy_permille = all != 0 ? busy * 1000 / all : 0;
		}
		s->gen_rate[i] = q->rate;
	}
	memcpy(c->gen_prev, prev, sizeof(prev[0]) * n);
	c->n_gen_prev = n;
}

/* Did any worker do work since the last call? Read from the dataplane's
 * counters, without a call to the workers. */
static bool
workers_busy_changed(struct uroced_core *c)
{
	struct uroce_dp_worker_stats ws;
	uint64_t busy = 0, hz;
	unsigned int i;
	bool changed;

	if (!c->on_worker)
		return true;
	for (i = 0; i < uroce_daemon_worker_count(c->d); i++)
		if (uroce_dp_worker_stats(c->dp, i, &ws, &hz) == 0)
			busy += ws.busy_cycles;
	changed = busy != c->snap_busy;
	c->snap_busy = busy;
	return changed;
}

/*
 * On the control thread, every UROCED_SNAP_US while the workers or the
 * control thread work, every UROCED_SNAP_IDLE_US while all are idle. Whether
 * they worked is looked at every UROCED_SNAP_US (the dataplane's counters,
 * no call to the workers, and what uroce_daemon_control_poll() returned):
 * decided only when a snapshot was taken, an idle daemon's next one came a
 * second later whatever happened meanwhile, and a burst of work shorter
 * than that (a CM handshake and a few hundred transfers) was not in
 * telemetry for up to a second after it ended. Control work counts too: a
 * session reaped or QPs destroyed after the traffic stopped must show
 * within UROCED_SNAP_US, as before.
 */
static void
snap_publish(struct uroced_core *c)
{
	static struct uroced_snap build; /* the control thread's */
	uint64_t now = mono_us();
	struct uroced_snap *s = &c->snap, *b = &build;
	unsigned int i;

	if (now < c->next_snap_us)
		return;
	c->next_snap_us = now + UROCED_SNAP_US;
	if (!workers_busy_changed(c) && !c->ctl_worked && now - c->snap_us < UROCED_SNAP_IDLE_US)
		return;
	c->ctl_worked = false;
	c->snap_us = now;
	/* Gathered aside: it takes calls to every worker, which may be slow to
	 * come round, and a reader must never wait on that, only on the copy. */
	uroce_daemon_stats(c->d, &b->st);
	b->n_cnt = uroce_daemon_counters(c->d, b->cnt, UROCED_SNAP_CNT);
	if (b->n_cnt > UROCED_SNAP_CNT)
		b->n_cnt = UROCED_SNAP_CNT;
	b->n_qps = uroce_daemon_qps(c->d, 0, b->qps, UROCED_SNAP_QPS);
	b->n_workers = uroce_daemon_worker_count(c->d);
	for (i = 0; i < b->n_workers && i < UROCE_DP_MAX_WORKERS; i++)
		uroce_daemon_worker_stats(c->d, i, &b->workers[i]);
	snap_gens(c, b, now);
	b->n_cm = uroce_daemon_cm_counters(c->d, b->cm, UROCED_SNAP_CNT);
	if (b->n_cm > UROCED_SNAP_CNT)
		b->n_cm = UROCED_SNAP_CNT;
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy((uint8_t *)s + offsetof(struct uroced_snap, st),
	       (const uint8_t *)b + offsetof(struct uroced_snap, st),
	       sizeof(*s) - offsetof(struct uroced_snap, st));
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
}

static void
snap_read(const struct uroced_core *c, struct uroced_snap *out);

static struct uroced_core *tel_core; /* telemetry callbacks take no context */

/* The snapshot a telemetry command reads (telemetry runs one command at a
 * time, so one copy serves all), or NULL before the core started. */
static const struct uroced_snap *
tel_snap(void)
{
	static struct uroced_snap s;

	if (tel_core == NULL)
		return NULL;
	snap_read(tel_core, &s);
	return &s;
}

static const char *const qp_type_names[] = {[2] = "RC", [3] = "UC", [4] = "UD"};
static const char *const qp_state_names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

/* /uroce/qps: the QPs (lowest UROCED_SNAP_QPS numbers) with owner and state. */
static int
tel_qps(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct uroced_snap *sp = tel_snap();
	unsigned int i;

	(void)cmd;
	(void)params;
	if (sp == NULL)
		return -ENODEV;
	rte_tel_data_start_array(d, RTE_TEL_U64_VAL);
	for (i = 0; i < sp->n_qps; i++)
		rte_tel_data_add_array_u64(d, sp->qps[i].qpn);
	return 0;
}

/* /uroce/qp/stats,QPN: one QP's state and every transport counter. */
static int
tel_qp_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static struct uroced_snap s;
	const struct uroce_daemon_qp_info *q = NULL;
	unsigned long qpn;
	unsigned int i;
	char *end;

	(void)cmd;
	if (tel_core == NULL)
		return -ENODEV;
	if (params == NULL || *params == '\0')
		return -EINVAL;
	qpn = strtoul(params, &end, 0);
	if (*end != '\0')
		return -EINVAL;
	snap_read(tel_core, &s);
	for (i = 0; i < s.n_qps; i++)
		if (s.qps[i].qpn == qpn)
			q = &s.qps[i];
	if (q == NULL)
		return -ENOENT;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "qpn", q->qpn);
	rte_tel_data_add_dict_string(d, "type", q->type < RTE_DIM(qp_type_names) &&
				     qp_type_names[q->type] ? qp_type_names[q->type] : "?");
	rte_tel_data_add_dict_string(d, "state", q->state < RTE_DIM(qp_state_names) ?
				     qp_state_names[q->state] : "?");
	rte_tel_data_add_dict_int(d, "pid", q->pid);
	rte_tel_data_add_dict_u64(d, "dest_qpn", q->dest_qpn);
	rte_tel_data_add_dict_u64(d, "sq_psn", q->sq_psn);
	rte_tel_data_add_dict_u64(d, "rq_psn", q->rq_psn);
	for (i = 0; i < q->n_cnt; i++)
		rte_tel_data_add_dict_u64(d, uroce_eng_counter_name((enum uroce_counter)i),
					  q->cnt[i]);
	return 0;
}

static void
snap_read(const struct uroced_core *c, struct uroced_snap *out)
{
	uint32_t before, after;

	for (;;) {
		before = __atomic_load_n(&c->snap.seq, __ATOMIC_ACQUIRE);
		memcpy(out, &c->snap, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		after = __atomic_load_n(&c->snap.seq, __ATOMIC_RELAXED);
		if ((before & 1) == 0 && before == after)
			return;
		/* The writer is mid-copy: let it run (it may share this CPU). */
		sched_yield();
	}
}


static int
tel_daemon_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct uroced_snap *sp = tel_snap();
	unsigned int i;

	(void)cmd;
	(void)params;
	if (sp == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
#define UROCE_DAEMON_STAT(name, type, kept_by, desc) \
	rte_tel_data_add_dict_u64(d, #name, sp->st.name);
#include "daemon_stats.def"
#undef UROCE_DAEMON_STAT
	for (i = 0; i < sp->n_cnt; i++)
		rte_tel_data_add_dict_u64(d, uroce_eng_counter_name((enum uroce_counter)i),
					  sp->cnt[i]);
	return 0;
}

/* /uroce/workers: per worker, what it did and its cycles (VPP "show runtime"). */
static int
tel_workers(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct uroced_snap *sp = tel_snap();
	struct rte_tel_data *w;
	unsigned int i;

	(void)cmd;
	(void)params;
	if (sp == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (i = 0; i < sp->n_workers && i < UROCE_DP_MAX_WORKERS; i++) {
		const struct uroce_daemon_worker_stats *e = &sp->workers[i];
		uint64_t pkts = e->rx_packets + e->tx_packets;
		char name[16];

		w = rte_tel_data_alloc();
		if (w == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(w);
		rte_tel_data_add_dict_u64(w, "qps", e->qps);
		rte_tel_data_add_dict_u64(w, "busy_cycles", e->busy_cycles);
		rte_tel_data_add_dict_u64(w, "idle_cycles", e->idle_cycles);
		rte_tel_data_add_dict_u64(w, "loops", e->loops);
		rte_tel_data_add_dict_u64(w, "rx_packets", e->rx_packets);
		rte_tel_data_add_dict_u64(w, "tx_packets", e->tx_packets);
		rte_tel_data_add_dict_u64(w, "handoff_in", e->handoff_in);
		rte_tel_data_add_dict_u64(w, "handoff_out", e->handoff_out);
		rte_tel_data_add_dict_u64(w, "sleeps", e->sleeps);
		rte_tel_data_add_dict_u64(w, "late_rounds", e->late_rounds);
		rte_tel_data_add_dict_u64(w, "max_late_us", e->max_late_us);
		rte_tel_data_add_dict_u64(w, "wqes", e->wqes);
		rte_tel_data_add_dict_u64(w, "cqes", e->cqes);
		rte_tel_data_add_dict_u64(w, "roce_rx", e->roce_rx);
		rte_tel_data_add_dict_u64(w, "roce_tx", e->roce_tx);
		rte_tel_data_add_dict_u64(w, "cycles_per_packet", pkts ? e->busy_cycles / pkts : 0);
		rte_tel_data_add_dict_u64(w, "cycles_per_wqe", e->wqes ? e->busy_cycles / e->wqes : 0);
		snprintf(name, sizeof(name), "%u", i);
		rte_tel_data_add_dict_container(d, name, w, 0);
	}
	return 0;
}

/* /uroce/gen: the load generators (doc/loadgen.md), rates over the last second. */
static int
tel_gen(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *const roles[] = {"?", "initiator", "target"};
	static const char *const states[] = {"created", "ready", "running", "draining", "done",
					     "failed"};
	const struct uroced_snap *sp = tel_snap();
	struct rte_tel_data *g;
	unsigned int i;

	(void)cmd;
	(void)params;
	if (sp == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (i = 0; i < sp->n_gens && i < UROCED_SNAP_GENS; i++) {
		const struct uroce_daemon_gen_info *e = &sp->gens[i];
		const struct uroced_gen_rate *r = &sp->gen_rate[i];
		char name[32];

		g = rte_tel_data_alloc();
		if (g == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(g);
		rte_tel_data_add_dict_string(g, "role", e->role < RTE_DIM(roles) ?
					     roles[e->role] : "?");
		rte_tel_data_add_dict_string(g, "state", e->state < RTE_DIM(states) ?
					     states[e->state] : "?");
		rte_tel_data_add_dict_int(g, "pid", e->pid);
		rte_tel_data_add_dict_u64(g, "worker", e->worker);
		rte_tel_data_add_dict_u64(g, "qps", e->n_qps);
		rte_tel_data_add_dict_u64(g, "elapsed_us", e->elapsed_us);
		rte_tel_data_add_dict_u64(g, "posted", e->posted);
		rte_tel_data_add_dict_u64(g, "completed", e->completed);
		rte_tel_data_add_dict_u64(g, "errors", e->errors);
		rte_tel_data_add_dict_u64(g, "bytes", e->bytes);
		rte_tel_data_add_dict_u64(g, "verify_bad", e->verify_bad);
		rte_tel_data_add_dict_u64(g, "outstanding", e->outstanding);
		rte_tel_data_add_dict_u64(g, "err_status", e->err_status);
		rte_tel_data_add_dict_u64(g, "msgs_per_s", r->msgs_per_s);
		rte_tel_data_add_dict_u64(g, "bytes_per_s", r->bytes_per_s);
		rte_tel_data_add_dict_u64(g, "cycles_per_msg", r->cycles_per_msg);
		rte_tel_data_add_dict_u64(g, "worker_busy_permille", r->busy_permille);
		/* Telemetry names take letters, digits and "_" (no "."). */
		snprintf(name, sizeof(name), "gen_%u_%u", e->client_id, e->id);
		rte_tel_data_add_dict_container(d, name, g, 0);
	}
	return 0;
}

/* /uroce/cm: QP1 (MADs in and out, unsupported classes) and the CM's counters. */
static int
tel_cm(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct uroced_snap *sp = tel_snap();
	unsigned int i;

	(void)cmd;
	(void)params;
	if (sp == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (i = 0; i < sp->n_cm; i++)
		rte_tel_data_add_dict_u64(d, uroce_daemon_cm_counter_name(i), sp->cm[i]);
	return 0;
}

/* DPDK refuses a help text of RTE_TEL_MAX_STRING_LEN characters or more (one
 * did, and every command after it went unregistered): checked when built. */
#define TEL_REG(rc, cmd, fn, help) \
	do { \
		_Static_assert(sizeof(help) <= RTE_TEL_MAX_STRING_LEN, "help of " cmd); \
		(rc) |= rte_telemetry_register_cmd(cmd, fn, help); \
	} while (0)

int
uroced_core_telemetry_register(struct uroced_core *c)
{
	int rc = 0;

	/* The snapshots behind these are refreshed every 100 ms while the
	 * workers work, every second while they are idle. */
	tel_core = c;
	TEL_REG(rc, "/uroce/cm", tel_cm,
		"QP1 and the connection manager: MADs and CM messages sent, received, "
		"retried, timed out");
	TEL_REG(rc, "/uroce/gen", tel_gen,
		"Load generators (uroce-ctl gen): state, counts, rates "
		"and cycles per message over the last second");
	TEL_REG(rc, "/uroce/workers", tel_workers,
		"Per worker: QPs, busy and idle cycles, packets, messages, "
		"hand-offs, cycles per packet and per WQE");
	TEL_REG(rc, "/uroce/qps", tel_qps, "QP numbers (the lowest 32)");
	TEL_REG(rc, "/uroce/qp/stats", tel_qp_stats,
		"One QP's state, PSNs and transport counters. Parameter: QP number");
	TEL_REG(rc, "/uroce/daemon/stats", tel_daemon_stats,
		"Daemon resources (sessions, QPs, ...) and transport "
		"counters (out_of_sequence, ...)");
	return rc != 0 ? -1 : 0;
}

/* A worker's turn each loop. */
static unsigned int
core_work(void *ctx)
{
	struct uroced_wctx *w = ctx;

	return uroce_daemon_worker_poll(w->c->d, w->worker);
}

uint8_t
uroced_active_mtu(uint16_t ip_mtu)
{
	uint8_t e;

	for (e = UROCE_MTU_4096; e > UROCE_MTU_256; e--)
		if (uroce_mtu_bytes(e) + ROCE_MAX_OVERHEAD <= ip_mtu)
			break;
	return e;
}

int
uroced_core_start(struct uroced_core *c, struct uroce_dp *dp, const struct uroce_dp_config *cfg,
		  char *err, size_t errlen)
{
	struct uroce_daemon_conf dc;
	unsigned int i, nw;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	c->dp = dp;
	nw = uroce_dp_worker_count(dp);
	c->on_worker = nw > 0;
	memset(&dc, 0, sizeof(dc));
	dc.sock_path = cfg->socket_path;
	dc.sock_mode = (mode_t)cfg->socket_mode;
	dc.cm_response_timeout = (uint8_t)cfg->cm_response_timeout;
	dc.cm_max_retries = (uint8_t)cfg->cm_max_retries;
	dc.cm_packet_life_time = (uint8_t)cfg->cm_packet_life_time;
	dc.gen_mem_max = (uint64_t)cfg->gen_mem_mb << 20;
	dc.n_workers = c->on_worker ? nw : 1;
	dc.threaded = c->on_worker;
	dc.worker_stats_fn = core_worker_stats;
	/* With no port too, the workers' clock is the dataplane's TSC reading
	 * of the loop, not a clock_gettime() per round. */
	if (c->on_worker)
		dc.clock_us = port_now_us;
	dc.worker_stats_ctx = c;
	for (i = 0; i < nw; i++) {
		c->w[i].c = c;
		c->w[i].worker = i;
		dc.port_ctxs[i] = &c->w[i];
	}
	if (uroce_dp_port_count(dp) > 0) {
		/* The GID table of port 0, indexes kept (empty slots stay zero). */
		dc.n_gid = UROCE_DP_GID_MAX;
		for (i = 0; i < UROCE_DP_GID_MAX; i++)
			uroce_dp_gid_get(dp, 0, i, dc.gids[i]);
		dc.active_mtu = uroced_active_mtu(uroce_dp_port_mtu(dp, 0));
		dc.port_ops = &dp_port_ops;
		/* cc: port 0's congestion control keys (doc/congestion.md) */
		dc.cc = &cfg->ports[0].cc;
		/* 0 when the port cannot (see /uroce/port/info's zero_copy) */
		dc.zc_min = uroce_dp_port_zc_min(dp, 0);
	}
	dc.loop_zc_min = cfg->loop_zc_min;
	c->d = uroce_daemon_create(&dc);
	if (c->d == NULL) {
		rc = errno;
		snprintf(err, errlen, "control socket %s: %s%s", cfg->socket_path, strerror(rc),
			 rc == ENOENT ? " (create the directory, or set --socket)" : "");
		return -rc;
	}
	rc = uroce_dp_set_owner(dp, core_owner, c);
	for (i = 0; i < nw && rc == 0; i++) {
		rc = uroce_dp_set_work_handler(dp, i, core_work, &c->w[i]);
		if (rc == 0)
			rc = uroce_dp_set_rx_handler(dp, i, core_rx, &c->w[i]);
		if (rc == 0)
			rc = uroce_dp_set_deadline_handler(dp, i, core_deadline, &c->w[i]);
		if (rc == 0)
			rc = uroce_dp_set_sleep_handler(dp, i, core_sleep, &c->w[i]);
	}
	if (rc == 0)
		rc = uroce_dp_set_wake_handler(dp, core_wake, c);
	if (rc != 0) {
		snprintf(err, errlen, "cannot install the daemon core on the workers: %s",
			 strerror(-rc));
		uroce_daemon_destroy(c->d);
		c->d = NULL;
		return rc;
	}
	return 0;
}

unsigned int
uroced_core_main_poll(struct uroced_core *c, int timeout_ms)
{
	unsigned int work;

	snap_publish(c);
	if (c->on_worker) {
		work = uroce_daemon_control_poll(c->d, timeout_ms);
		if (work > 0)
			c->ctl_worked = true; /* for the next snapshot */
		return work;
	}
	work = uroce_daemon_poll(c->d);
	if (work == 0 && timeout_ms > 0) {
		/* No worker: this thread runs the engine too; nap briefly. */
		rte_delay_us_sleep(50);
	}
	return work;
}

unsigned int
uroced_core_stop(struct uroced_core *c, struct uroce_dp *dp, bool workers_ran)
{
	unsigned int n;

	if (c->d == NULL)
		return 0;
	/* Workers that never started (the dataplane failed to start) would
	 * never answer a mailbox: this thread does their part itself. */
	if (!workers_ran)
		uroce_daemon_workers_stopped(c->d);
	/* Each worker moves its QPs to ERR on its own lcore and writes the
	 * flushes; then the workers stop. */
	n = uroce_daemon_quiesce(c->d);
	if (c->on_worker && workers_ran) {
		uroce_dp_stop(dp);
		uroce_daemon_workers_stopped(c->d);
	}
	/* Workers stopped: the daemon's objects are this thread's now. Sessions
	 * close, which clients see as a fatal device event. */
	tel_core = NULL;
	uroce_daemon_destroy(c->d);
	c->d = NULL;
	return n;
}
