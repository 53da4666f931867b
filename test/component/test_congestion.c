/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * DCQCN end to end on the simulated wire: N RC flows, each a side-0 QP with
 * its own 10 Gb/s link into a switch whose 10 Gb/s port to side 1 is the
 * bottleneck (a FIFO that marks CE as a RED/ECN switch does and tail-drops
 * what does not fit; test/common/simwire.h). Every flow keeps 16 SENDs of
 * 16 KiB outstanding (256 packets at path MTU 1024, the requester's window)
 * for RUN_US of simulated time, then stops posting and drains. The engines
 * use ConnectX's DCQCN parameters but two: line_rate says the links are
 * 10 Gb/s, and rpg_byte_reset 0 leaves the rate increases to the timer. With
 * ConnectX's byte counter (an increase every 32767 bytes sent) fast flows
 * get proportionally more increases than slow ones, and 8 flows stay unfair
 * (Jain's index about 0.8 after 500 ms here; doc/congestion.md).
 *
 *   Expect (2 and 8 flows, DCQCN on): the flows converge to fair shares:
 *           Jain's index of their goodput over the last 40 % of the run is
 *           at least 0.9, and together they use at least 70 % of the
 *           bottleneck; once rates have settled (the last 40 %) the queue
 *           stays below half its capacity and nothing is dropped; every
 *           message arrives, in order, with the right bytes, and every SEND
 *           completes with success (drops while the flows start are
 *           recovered by go-back-N).
 *   Expect (2 flows, DCQCN off: roce_rp_enable 0 on the senders): the same
 *           setup fills the queue to its capacity and drops.
 *
 * Each run prints its rate trace (every millisecond: each flow's DCQCN rate
 * and goodput, the queue); UROCE_CC_TRACE_DIR=dir also writes the full trace
 * (every 100 µs) to dir/<run>.tsv, which doc/congestion-plot.py draws.
 */

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simwire.h"

#define MAXF 8
#define MSG (16 * 1024)
#define DEPTH 16                  /* messages outstanding per flow */
#define LINK_MBPS 10000
#define SAMPLE_US 100
#define PRINT_US 5000
#define RUN_US 200000u            /* the flows post for 200 ms */
#define NOCC_US 10000u            /* enough to overflow without DCQCN */
#define DRAIN_US 200000
#define QUEUE_CAP (400 * 1024)    /* bytes: below two flows' windows */
#define KMIN (5 * 1024)
#define KMAX (100 * 1024)
#define PMAX_PPM 200000           /* 20 % just below KMAX, every packet from it */

struct flow {
	struct uroce_eng_qp *qp[2];
	uint8_t *sbuf;                /* side 0: DEPTH message slots */
	uint8_t *rbuf;                /* side 1: DEPTH receive slots */
	struct uroce_eng_mr *mr[2];
	uint32_t posted;
	uint32_t completed;
	uint32_t received;
	uint64_t rx_bytes;            /* delivered and checked */
	uint64_t rx_mark;             /* rx_bytes at the last sample */
	uint64_t rx_at_window;        /* rx_bytes when the fairness window opened */
	bool bad;
};

struct run {
	const char *name;
	struct simwire *sw;
	struct uroce_eng_pd *pd[2];
	struct uroce_eng_cq *scq;
	struct uroce_eng_cq *rcq;
	struct flow f[MAXF];
	int n;
	bool posting;
	uint64_t t0;
	uint64_t next_sample;
	uint64_t next_print;
	uint64_t window_at;          /* start of the fairness window */
	bool window_open;
	uint64_t drops_at_window;
	FILE *trace;
};

/* Word k of message m of flow f: each 8-byte word names itself. */
static uint64_t
pat(int f, uint32_t m, uint32_t k)
{
	return (uint64_t)f << 56 | (uint64_t)m << 24 | k;
}

static void
fill(uint8_t *p, int f, uint32_t m)
{
	uint32_t k;

	for (k = 0; k < MSG / 8; k++) {
		uint64_t w = pat(f, m, k);

		memcpy(p + 8 * k, &w, 8);
	}
}

static bool
check(const uint8_t *p, int f, uint32_t m)
{
	uint32_t k;

	for (k = 0; k < MSG / 8; k++) {
		uint64_t w;

		memcpy(&w, p + 8 * k, 8);
		if (w != pat(f, m, k))
			return false;
	}
	return true;
}

static void
post_recv(struct flow *fl, uint32_t slot)
{
	struct uroce_wr_sge sge = { (uint64_t)(uintptr_t)(fl->rbuf + slot * MSG), MSG,
				     uroce_eng_mr_lkey(fl->mr[1]) };
	struct uroce_eng_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };

	cr_assert_eq(uroce_eng_post_recv(fl->qp[1], &wr, NULL), 0);
}

static void
post_send(struct run *r, int i)
{
	struct flow *fl = &r->f[i];
	uint32_t slot = fl->posted % DEPTH;
	struct uroce_wr_sge sge = { (uint64_t)(uintptr_t)(fl->sbuf + slot * MSG), MSG,
				     uroce_eng_mr_lkey(fl->mr[0]) };
	struct uroce_eng_send_wr wr;

	fill(fl->sbuf + slot * MSG, i, fl->posted);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = fl->posted;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = UROCE_WR_SEND;
	wr.send_flags = UROCE_SEND_SIGNALED;
	cr_assert_eq(uroce_eng_post_send(fl->qp[0], &wr, NULL), 0);
	fl->posted++;
}

static int
flow_of(struct run *r, int side, uint32_t qpn)
{
	int i;

	for (i = 0; i < r->n; i++)
		if (uroce_eng_qp_num(r->f[i].qp[side]) == qpn)
			return i;
	cr_assert_fail("completion for unknown QP %#x", qpn);
	return -1;
}

static void
sample(struct run *r, uint64_t now)
{
	bool print = now >= r->next_print;
	int i;

	if (print)
		printf("%s %6.1f ms q %6u B |", r->name, (double)(now - r->t0) / 1000.0,
		       simwire_bn_queue(r->sw));
	for (i = 0; i < r->n; i++) {
		struct flow *fl = &r->f[i];
		struct uroce_eng_cc_state st;
		double thr = (double)(fl->rx_bytes - fl->rx_mark) * 8 / SAMPLE_US;

		cr_assert_eq(uroce_eng_qp_cc_state(fl->qp[0], &st), 0);
		if (r->trace != NULL)
			fprintf(r->trace, "%.1f\t%d\t%.1f\t%.1f\t%u\n",
				(double)(now - r->t0) / 1000.0, i, st.rate_kbps / 1000.0, thr,
				simwire_bn_queue(r->sw));
		if (print)
			printf(" %5.0f/%5.0f", st.rate_kbps / 1000.0, thr);
		fl->rx_mark = fl->rx_bytes;
	}
	if (print) {
		printf("  (Mb/s: DCQCN rate/goodput)\n");
		r->next_print += PRINT_US;
	}
	r->next_sample += SAMPLE_US;
}

/* Called by the wire every step: the applications on both sides. */
static bool
step(void *arg)
{
	struct run *r = arg;
	uint64_t now = simwire_now(r->sw);
	struct uroce_eng_wc wc[32];
	bool done = true;
	int n, k, i;

	while ((n = uroce_eng_poll_cq(r->scq, 32, wc)) > 0) {
		for (k = 0; k < n; k++) {
			i = flow_of(r, 0, wc[k].qp_num);
			if (wc[k].status != UROCE_WC_SUCCESS || wc[k].wr_id != r->f[i].completed)
				r->f[i].bad = true;
			r->f[i].completed++;
		}
	}
	while ((n = uroce_eng_poll_cq(r->rcq, 32, wc)) > 0) {
		for (k = 0; k < n; k++) {
			struct flow *fl;

			i = flow_of(r, 1, wc[k].qp_num);
			fl = &r->f[i];
			if (wc[k].status != UROCE_WC_SUCCESS || wc[k].byte_len != MSG ||
			    wc[k].wr_id != fl->received % DEPTH ||
			    !check(fl->rbuf + wc[k].wr_id * MSG, i, fl->received))
				fl->bad = true;
			fl->rx_bytes += MSG;
			fl->received++;
			post_recv(fl, (uint32_t)wc[k].wr_id);
		}
	}
	if (r->posting && now - r->t0 >= RUN_US)
		r->posting = false;
	for (i = 0; i < r->n; i++) {
		struct flow *fl = &r->f[i];

		while (r->posting && fl->posted - fl->completed < DEPTH)
			post_send(r, i);
		if (fl->received != fl->posted || fl->completed != fl->posted)
			done = false;
	}
	if (!r->window_open && now >= r->window_at) {
		r->window_open = true;
		r->drops_at_window = simwire_stats(r->sw).bn_dropped;
		simwire_bn_reset_max(r->sw);
		for (i = 0; i < r->n; i++)
			r->f[i].rx_at_window = r->f[i].rx_bytes;
	}
	while (now >= r->next_sample && now - r->t0 <= RUN_US)
		sample(r, r->next_sample);
	return !r->posting && done;
}

static void
run_setup(struct run *r, const char *name, int n, bool dcqcn)
{
	struct simwire_conf c = {
		.seed = getenv("UROCE_CC_SEED") ? strtoull(getenv("UROCE_CC_SEED"), NULL, 0) : 13,
		.delay_us = 2,
		.bn_rate_mbps = LINK_MBPS,
		.bn_access_mbps = LINK_MBPS,
		.bn_kmin = KMIN,
		.bn_kmax = KMAX,
		.bn_pmax_ppm = PMAX_PPM,
		.bn_capacity = QUEUE_CAP,
	};
	struct sim_qp_opts o = { .mtu = UROCE_MTU_1024, .timeout = 9 };
	struct uroce_eng_cc_params cc;
	const char *dir = getenv("UROCE_CC_TRACE_DIR");
	int i, s;

	memset(r, 0, sizeof(*r));
	r->name = name;
	r->n = n;
	r->sw = simwire_create(&c);
	cr_assert_not_null(r->sw);
	for (s = 0; s < 2; s++) {
		uroce_eng_cc_params_default(&cc);
		cc.line_rate = LINK_MBPS;
		cc.roce_rp_enable = dcqcn;
		cc.rpg_byte_reset = 0;
		cr_assert_eq(uroce_eng_cc_set(simwire_engine(r->sw, s), &cc), 0);
		r->pd[s] = uroce_eng_pd_alloc(simwire_engine(r->sw, s));
		cr_assert_not_null(r->pd[s]);
	}
	r->scq = uroce_eng_cq_create(simwire_engine(r->sw, 0), MAXF * DEPTH * 2, NULL);
	r->rcq = uroce_eng_cq_create(simwire_engine(r->sw, 1), MAXF * DEPTH * 2, NULL);
	cr_assert(r->scq != NULL && r->rcq != NULL);
	for (i = 0; i < n; i++) {
		struct flow *fl = &r->f[i];

		for (s = 0; s < 2; s++) {
			struct sim_side sd = { .pd = r->pd[s], .scq = s ? r->rcq : r->scq,
					       .rcq = s ? r->rcq : r->scq };
			uint8_t **buf = s ? &fl->rbuf : &fl->sbuf;

			fl->qp[s] = sim_qp_create(&sd, UROCE_QPT_RC, DEPTH * 2);
			cr_assert_not_null(fl->qp[s]);
			*buf = calloc(DEPTH, MSG);
			cr_assert_not_null(*buf);
			fl->mr[s] = uroce_eng_mr_reg(r->pd[s], *buf, (uint64_t)(uintptr_t)*buf,
						     DEPTH * MSG, UROCE_ACCESS_LOCAL_WRITE);
			cr_assert_not_null(fl->mr[s]);
		}
		cr_assert_eq(sim_connect(r->sw, fl->qp[0], fl->qp[1], &o), 0);
		for (s = 0; s < DEPTH; s++)
			post_recv(fl, (uint32_t)s);
	}
	if (dir != NULL) {
		char path[512];

		snprintf(path, sizeof(path), "%s/%s.tsv", dir, name);
		r->trace = fopen(path, "w");
		cr_assert_not_null(r->trace, "cannot write %s", path);
		fprintf(r->trace, "t_ms\tflow\trate_mbps\tgoodput_mbps\tqueue_bytes\n");
	}
	r->t0 = simwire_now(r->sw);
	r->next_sample = r->t0 + SAMPLE_US;
	r->next_print = r->t0 + PRINT_US;
	r->window_at = r->t0 + RUN_US * 6 / 10;
	r->posting = true;
}

static void
run_teardown(struct run *r)
{
	int i;

	if (r->trace != NULL)
		fclose(r->trace);
	simwire_destroy(r->sw);
	for (i = 0; i < r->n; i++) {
		free(r->f[i].sbuf);
		free(r->f[i].rbuf);
	}
}

/* Run, drain, and check fairness, queue, drops and delivery. */
static void
converge(const char *name, int n)
{
	struct simwire_stats st;
	double sum = 0, sq = 0, jain, util;
	uint64_t total = 0;
	struct run r;
	int i;

	run_setup(&r, name, n, true);
	cr_assert(simwire_run_until(r.sw, step, &r, RUN_US + DRAIN_US),
		  "%s: not drained %u us after the run", name, DRAIN_US);
	st = simwire_stats(r.sw);
	for (i = 0; i < n; i++) {
		double x = (double)(r.f[i].rx_bytes - r.f[i].rx_at_window);

		sum += x;
		sq += x * x;
		total += r.f[i].received;
		cr_expect_not(r.f[i].bad, "%s flow %d: a bad completion or wrong bytes", name, i);
		cr_expect_eq(r.f[i].received, r.f[i].posted, "%s flow %d", name, i);
		cr_expect_eq(r.f[i].completed, r.f[i].posted, "%s flow %d", name, i);
		printf("%s flow %d: %u messages (%.1f MB) sent and checked, goodput in the "
		       "window %.0f Mb/s, rp_cnp_handled %llu, np_cnp_sent %llu\n",
		       name, i, r.f[i].received, r.f[i].received * (double)MSG / 1e6,
		       x * 8 / (RUN_US * 4 / 10), (unsigned long long)
		       uroce_eng_qp_counter(r.f[i].qp[0], UROCE_CNT_RP_CNP_HANDLED),
		       (unsigned long long)uroce_eng_qp_counter(r.f[i].qp[1],
								UROCE_CNT_NP_CNP_SENT));
	}
	jain = sum * sum / (n * sq);
	util = sum * 8 / (RUN_US * 4 / 10) / LINK_MBPS;
	printf("%s: Jain %.3f over the last 40%% of %u us, bottleneck use %.0f%%, queue max "
	       "%u B after settling, marked %llu, dropped %llu (%llu after settling)\n",
	       name, jain, RUN_US, util * 100, st.bn_max_queue,
	       (unsigned long long)st.bn_marked, (unsigned long long)st.bn_dropped,
	       (unsigned long long)(st.bn_dropped - r.drops_at_window));
	cr_expect_geq(jain, 0.9, "%s: Jain's index %.3f", name, jain);
	cr_expect_geq(util, 0.7, "%s: the flows use %.0f%% of the bottleneck", name,
		      util * 100);
	cr_expect_lt(st.bn_max_queue, QUEUE_CAP / 2, "%s: queue reached %u B after settling",
		     name, st.bn_max_queue);
	cr_expect_eq(st.bn_dropped, r.drops_at_window, "%s: drops after settling", name);
	cr_expect_gt(st.bn_marked, 0);
	cr_expect_eq(total * MSG > 0, true);
	run_teardown(&r);
}

Test(congestion, two_flows_converge, .timeout = 120)
{
	converge("dcqcn-2", 2);
}

Test(congestion, eight_flows_converge, .timeout = 120)
{
	converge("dcqcn-8", 8);
}

/* Expect: without the reaction point the same two flows overflow the queue. */
Test(congestion, without_dcqcn_the_queue_overflows, .timeout = 120)
{
	struct simwire_stats st;
	struct run r;

	run_setup(&r, "nocc-2", 2, false);
	simwire_run_until(r.sw, step, &r, NOCC_US);
	st = simwire_stats(r.sw);
	printf("nocc-2: after %u us: queue max %u B of %u, marked %llu, dropped %llu, "
	       "rp_cnp_ignored %llu\n", NOCC_US, st.bn_max_queue, QUEUE_CAP,
	       (unsigned long long)st.bn_marked, (unsigned long long)st.bn_dropped,
	       (unsigned long long)uroce_eng_counter(simwire_engine(r.sw, 0),
						     UROCE_CNT_RP_CNP_IGNORED));
	cr_expect_gt(st.bn_dropped, 0);
	cr_expect_gt(st.bn_max_queue, QUEUE_CAP - 2 * 1100);
	cr_expect_gt(uroce_eng_counter(simwire_engine(r.sw, 0), UROCE_CNT_RP_CNP_IGNORED), 0);
	cr_expect_eq(uroce_eng_counter(simwire_engine(r.sw, 0), UROCE_CNT_RP_CNP_HANDLED), 0);
	run_teardown(&r);
}
