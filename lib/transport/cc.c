/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Congestion control for RoCEv2 as a ConnectX does it (doc/congestion.md):
 *
 *  - Marking: the QP's packets carry ECT(0) unless its traffic class asks for
 *    other ECN bits (parameter ecn); CNPs carry cnp_dscp and cnp_802p_prio.
 *  - Notification point (NP): a packet that arrives with CE makes the QP send
 *    a CNP (RoCEv2 A17.9.3: opcode 0x81, BECN, 16 reserved bytes) to the QP
 *    that sent it, at most one per min_time_between_cnps.
 *  - Reaction point (RP): DCQCN per QP. The first CNP starts a rate limiter;
 *    each CNP cuts the current rate by alpha/2 (at most once per
 *    rate_reduce_monitor_period) and raises alpha; alpha decays every
 *    dce_tcp_rtt while no CNP comes; a timer (rpg_time_reset) and a byte
 *    counter (rpg_byte_reset) drive fast recovery, additive and hyper
 *    increase until the rate is back at the maximum and the limiter is off.
 *  - Pacing: a limited QP's requester sends a packet only when its schedule
 *    allows; otherwise it waits on the engine's timer list (never spinning),
 *    and the other QPs keep running.
 *
 * Units: rates in kb/s (u32: up to 4 Tb/s), alpha in 1/1024, time in µs from
 * the engine clock. The pacing schedule is kept in µs with a 24-bit fraction,
 * and the cost of a byte at the current rate is computed when the rate
 * changes (one division per rate change, none per packet).
 */

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "transport_internal.h"

#define CC_ALPHA_SHIFT 10                  /* alpha and dce_tcp_g are 1/1024 */
#define CC_PACE_SHIFT 24                   /* fraction bits of the pacing schedule */
#define CC_PACE_SLACK_US 2                 /* credit an idle or late QP may keep */
#define CC_LINE_RATE_MBPS 100000u          /* line_rate 0: taken as 100 Gb/s */
#define CC_INC_CATCHUP 64                  /* timer increases run at most per call */
#define CC_ACKREQ_US 8                     /* a packet this long at the rate asks for an ACK */

/* ------------------------------------------------------------------------ */
/* Parameter table                                                           */
/* ------------------------------------------------------------------------ */

static const struct uroce_eng_cc_param_info param_info[] = {
#define UROCE_CC_PARAM(name, min, max, def, unit, desc) { #name, min, max, def, unit, desc },
#include "cc_params.def"
#undef UROCE_CC_PARAM
};

static const size_t param_off[] = {
#define UROCE_CC_PARAM(name, min, max, def, unit, desc) \
	offsetof(struct uroce_eng_cc_params, name),
#include "cc_params.def"
#undef UROCE_CC_PARAM
};

#define N_PARAMS UROCE_ARRAY_SIZE(param_info)

_Static_assert(sizeof(struct uroce_eng_cc_params) == N_PARAMS * sizeof(uint32_t),
	       "every parameter is one uint32_t field");

unsigned int
uroce_eng_cc_param_count(void)
{
	return N_PARAMS;
}

const struct uroce_eng_cc_param_info *
uroce_eng_cc_param_info(unsigned int i)
{
	return i < N_PARAMS ? &param_info[i] : NULL;
}

int
uroce_eng_cc_param_find(const char *name)
{
	unsigned int i;

	if (name == NULL)
		return -ENOENT;
	for (i = 0; i < N_PARAMS; i++)
		if (strcmp(param_info[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

static uint32_t *
param_ptr(struct uroce_eng_cc_params *p, unsigned int i)
{
	return (uint32_t *)(void *)((uint8_t *)p + param_off[i]);
}

uint32_t
uroce_eng_cc_param_get(const struct uroce_eng_cc_params *p, unsigned int i)
{
	if (p == NULL || i >= N_PARAMS)
		return 0;
	return *param_ptr((struct uroce_eng_cc_params *)(uintptr_t)p, i);
}

int
uroce_eng_cc_param_set(struct uroce_eng_cc_params *p, unsigned int i, uint32_t v)
{
	if (p == NULL || i >= N_PARAMS || v < param_info[i].min || v > param_info[i].max)
		return -EINVAL;
	*param_ptr(p, i) = v;
	return 0;
}

void
uroce_eng_cc_params_default(struct uroce_eng_cc_params *p)
{
	unsigned int i;

	for (i = 0; i < N_PARAMS; i++)
		*param_ptr(p, i) = param_info[i].def;
}

static uint32_t
max_rate_mbps(const struct uroce_eng_cc_params *p)
{
	if (p->rpg_max_rate != 0)
		return p->rpg_max_rate;
	return p->line_rate != 0 ? p->line_rate : CC_LINE_RATE_MBPS;
}

int
uroce_eng_cc_params_check(const struct uroce_eng_cc_params *p, unsigned int *bad)
{
	unsigned int i;

	if (p == NULL)
		return -EINVAL;
	for (i = 0; i < N_PARAMS; i++) {
		uint32_t v = uroce_eng_cc_param_get(p, i);

		if (v < param_info[i].min || v > param_info[i].max)
			goto fail;
	}
	if (p->rpg_min_rate > max_rate_mbps(p)) {
		i = (unsigned int)uroce_eng_cc_param_find("rpg_min_rate");
		goto fail;
	}
	return 0;
fail:
	if (bad != NULL)
		*bad = i;
	return -EINVAL;
}

static void
conf_derive(struct cc_conf *c, const struct uroce_eng_cc_params *p)
{
	c->p = *p;
	c->max_kbps = max_rate_mbps(p) * 1000;
	c->min_kbps = UROCE_MIN(p->rpg_min_rate * 1000, c->max_kbps);
	c->first_kbps = p->rate_to_set_on_first_cnp != 0 ?
			UROCE_MIN(p->rate_to_set_on_first_cnp * 1000, c->max_kbps) : c->max_kbps;
	c->ai_kbps = p->rpg_ai_rate * 1000;
	c->hai_kbps = p->rpg_hai_rate * 1000;
}

void
cc_eng_init(struct uroce_eng *eng)
{
	struct uroce_eng_cc_params p;

	uroce_eng_cc_params_default(&p);
	conf_derive(&eng->cc, &p);
}

static const struct cc_conf *
cc_conf(const struct uroce_eng_qp *qp)
{
	return qp->cc.conf != NULL ? qp->cc.conf : &qp->eng->cc;
}

/* ------------------------------------------------------------------------ */
/* Rate state                                                                */
/* ------------------------------------------------------------------------ */

/* Arm the QP's earliest congestion deadline on the engine's timer list. */
static void
cc_rearm(struct uroce_eng_qp *qp)
{
	struct cc_state *s = &qp->cc;
	uint64_t d = UINT64_MAX;

	if (s->paced)
		d = s->pace_us;
	if (s->reduce_pending && s->reduce_at < d)
		d = s->reduce_at;
	if (s->limited && s->inc_at < d)
		d = s->inc_at;
	s->deadline = d == UINT64_MAX ? 0 : UROCE_MAX(d, 1);
	if (s->deadline != 0)
		eng_timer_update(qp);
	/* A disarmed QP leaves the list lazily, as the completer's timers do. */
}

static void
set_rate(struct cc_state *s, uint64_t kbps)
{
	s->rc_kbps = (uint32_t)kbps;
	/* 1 kb/s is 10^-3 bit/µs: a byte takes 8000 / kbps µs. */
	s->cost = ((uint64_t)8000 << CC_PACE_SHIFT) / (kbps != 0 ? kbps : 1);
}

/*
 * A new rate from a timer event or a cut: the wait for the next packet,
 * which the old rate set, shrinks or stretches with it. Without this a QP
 * cut to a few Mb/s would sit out its long gap even after recovering.
 * @p now 0: leave the wait as it is (a byte counter event, right after the
 * packet that set it).
 */
static void
set_rate_now(struct cc_state *s, uint64_t kbps, uint64_t now)
{
	uint32_t old = s->rc_kbps;

	if (now != 0 && s->pace_us >= now && old != 0 && kbps != 0 && kbps != old) {
		uint64_t rem = ((s->pace_us - now) << CC_PACE_SHIFT) + s->pace_frac;

		/* rem < 2^(24 + 33) at 1 Mb/s: the product fits after the shift. */
		rem = (rem >> 8) * old / kbps << 8;
		s->pace_us = now + (rem >> CC_PACE_SHIFT);
		s->pace_frac = rem & ((1ull << CC_PACE_SHIFT) - 1);
	}
	set_rate(s, kbps);
}

/* The limiter is off: the QP sends as fast as it can again. */
static void
cc_release(struct uroce_eng_qp *qp)
{
	struct cc_state *s = &qp->cc;
	bool paced = s->paced;

	s->limited = false;
	s->reduce_pending = false;
	s->paced = false;
	cc_rearm(qp);
	if (paced)
		eng_req_kick(qp);
}

/* alpha * (g / 1024)^n, by squaring (n may be large after an idle spell). */
static uint32_t
alpha_decay(uint64_t alpha, uint64_t g, uint64_t n)
{
	while (n != 0 && alpha != 0) {
		if (n & 1)
			alpha = (alpha * g) >> CC_ALPHA_SHIFT;
		g = (g * g) >> CC_ALPHA_SHIFT;
		n >>= 1;
	}
	return (uint32_t)alpha;
}

/*
 * Bring alpha up to @p now: every dce_tcp_rtt µs, alpha = alpha * g / 1024,
 * plus (1024 - g) for the period a CNP came in. Periods are only counted here
 * (at CNPs and cuts), never on a timer of their own.
 */
static void
alpha_sync(struct cc_state *s, const struct cc_conf *c, uint64_t now)
{
	uint64_t rtt = c->p.dce_tcp_rtt, n;
	uint32_t g = c->p.dce_tcp_g, a;

	if (now < s->alpha_ts + rtt)
		return;
	n = (now - s->alpha_ts) / rtt;
	a = (uint32_t)(((uint64_t)s->alpha * g) >> CC_ALPHA_SHIFT);
	if (s->alpha_cnp)
		a += (1u << CC_ALPHA_SHIFT) - g;
	s->alpha = UROCE_MIN(alpha_decay(a, g, n - 1), (1u << CC_ALPHA_SHIFT) - 1);
	s->alpha_cnp = false;
	s->alpha_ts += n * rtt;
}

/* A rate cut: rc = rc * (1 - alpha / 2^rpg_gd), bounded by rpg_min_dec_fac and rpg_min_rate. */
static void
cc_cut(struct uroce_eng_qp *qp, uint64_t now)
{
	const struct cc_conf *c = cc_conf(qp);
	struct cc_state *s = &qp->cc;
	uint64_t gd = 1ull << c->p.rpg_gd, rc = s->rc_kbps, nr, floor;

	alpha_sync(s, c, now);
	/* The target rate is where recovery heads back to: it stays at the rate
	 * before the congestion through a burst of cuts, unless an increase
	 * came in between (or clamp_tgt_rate says always). */
	if (c->p.clamp_tgt_rate || s->inc_byte ||
	    (s->inc_timer && c->p.clamp_tgt_rate_after_time_inc))
		s->rt_kbps = s->rc_kbps;
	nr = s->alpha >= gd ? 0 : rc * (gd - s->alpha) >> c->p.rpg_gd;
	floor = rc * c->p.rpg_min_dec_fac / 100;
	nr = UROCE_MAX(nr, floor);
	nr = UROCE_MAX(nr, c->min_kbps);
	set_rate_now(s, UROCE_MIN(nr, c->max_kbps), now);
	s->t_stage = 0;
	s->b_stage = 0;
	s->bytes = 0;
	s->inc_timer = false;
	s->inc_byte = false;
	s->reduce_pending = false;
	s->reduce_at = now + c->p.rate_reduce_monitor_period;
	s->inc_at = now + c->p.rpg_time_reset;
}

/*
 * One rate increase event (DCQCN): fast recovery while both stages are at
 * most rpg_threshold, hyper increase once both passed it, additive increase
 * in between; the current rate then moves half way to the target.
 */
static void
cc_increase(struct uroce_eng_qp *qp, bool timer, uint64_t now)
{
	const struct cc_conf *c = cc_conf(qp);
	struct cc_state *s = &qp->cc;
	uint32_t f = c->p.rpg_threshold;
	uint32_t hi = UROCE_MAX(s->t_stage, s->b_stage), lo = UROCE_MIN(s->t_stage, s->b_stage);
	uint64_t rt = s->rt_kbps;

	if (timer)
		s->inc_timer = true;
	else
		s->inc_byte = true;
	if (lo > f)
		rt += (uint64_t)(lo - f) * c->hai_kbps;
	else if (hi > f)
		rt += c->ai_kbps;
	s->rt_kbps = (uint32_t)UROCE_MIN(rt, c->max_kbps);
	set_rate_now(s, UROCE_MIN(((uint64_t)s->rc_kbps + s->rt_kbps + 1) / 2, c->max_kbps),
		     now);
	if (s->rc_kbps >= c->max_kbps)
		cc_release(qp);
}

/* The RP's reaction to one CNP at @p now. */
static void
cc_rp_event(struct uroce_eng_qp *qp, uint64_t now)
{
	const struct cc_conf *c = cc_conf(qp);
	struct cc_state *s = &qp->cc;

	if (!s->limited) {
		/* The first CNP of a flow starts the limiter from the rate it
		 * sends at (ConnectX: line rate, or rate_to_set_on_first_cnp). */
		s->limited = true;
		s->rt_kbps = c->first_kbps;
		set_rate(s, c->first_kbps);
		s->alpha = c->p.initial_alpha_value;
		s->alpha_ts = now;
		s->alpha_cnp = false;
		s->inc_timer = false;
		s->inc_byte = false;
		s->reduce_at = now;
		s->pace_us = now;
		s->pace_frac = 0;
		s->overhead = UROCE_ETH_LEN + UROCE_UDP_LEN +
			      (qp->init.qp_type != UROCE_QPT_UD &&
			       !uroce_gid_is_v4mapped(qp->attr.ah_attr.dgid) ?
			       UROCE_IPV6_LEN : UROCE_IPV4_LEN);
	} else {
		alpha_sync(s, c, now);
		s->alpha_cnp = true;
	}
	if (now >= s->reduce_at)
		cc_cut(qp, now);
	else
		s->reduce_pending = true;
	cc_rearm(qp);
}

void
cc_reset(struct uroce_eng_qp *qp)
{
	memset(&qp->cc, 0, offsetof(struct cc_state, conf));
}

/* ------------------------------------------------------------------------ */
/* Hooks of the data path                                                    */
/* ------------------------------------------------------------------------ */

void
cc_rp_cnp(struct uroce_eng *eng, const struct uroce_pkt *pkt, const struct uroce_frame *frame)
{
	struct uroce_eng_qp *qp;

	if (pkt->dqpn >= UROCE_MAX_QP || (qp = eng->qps[pkt->dqpn]) == NULL) {
		ENG_CNT(eng, RP_CNP_IGNORED);
		return;
	}
	/* Only a CNP from the QP's own peer counts (RC/UC: the GID its address
	 * vector points at), with the P_Key, to a QP that sends (RTS, SQD). */
	if (!cc_conf(qp)->p.roce_rp_enable || !qp_can_send(qp) ||
	    (uroce_bth_pkey(pkt->bth) & 0x7FFF) != (UROCE_DEFAULT_PKEY & 0x7FFF) ||
	    (frame != NULL && qp->init.qp_type != UROCE_QPT_UD &&
	     memcmp(frame->sgid, qp->attr.ah_attr.dgid, 16) != 0)) {
		QP_CNT(qp, RP_CNP_IGNORED);
		return;
	}
	QP_CNT(qp, RP_CNP_HANDLED);
	cc_rp_event(qp, eng_now(eng));
}

void
cc_np_ce(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt, const struct uroce_frame *frame)
{
	const struct cc_conf *c = cc_conf(qp);
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	struct uroce_eng_ah_attr ah;
	uint32_t hdr_len;
	uint64_t now;
	uint8_t *buf;

	QP_CNT(qp, NP_ECN_MARKED_ROCE_PACKETS);
	if (!c->p.roce_np_enable)
		return;
	now = eng_now(qp->eng);
	if (qp->cc.cnp_sent && now - qp->cc.last_cnp_us < c->p.min_time_between_cnps)
		return;
	memset(&bth, 0, sizeof(bth));
	memset(&ext, 0, sizeof(ext));
	/* RoCEv2 A17.9.3: BTH with opcode 0x81, BECN set, the sender's QP as
	 * destination; PSN, SE, M and AckReq 0 (as a ConnectX sends it). */
	bth.opcode = UROCE_OPCODE_CNP;
	bth.pkey = UROCE_DEFAULT_PKEY;
	bth.becn = true;
	if (qp->init.qp_type == UROCE_QPT_UD) {
		/* The sender is the DETH's source QP at the frame's source GID. */
		if (!(pkt->info->mask & UROCE_HDR_DETH))
			return;
		bth.dqpn = uroce_deth_src_qp(pkt->bth + pkt->info->off_deth);
		memset(&ah, 0, sizeof(ah));
		memcpy(ah.dgid, frame->sgid, 16);
		memcpy(ah.sgid, frame->dgid, 16);
		ah.port_num = qp->attr.port_num;
	} else {
		bth.dqpn = qp->attr.dest_qp_num;
		ah = qp->attr.ah_attr;
	}
	buf = eng_tx_prepare(qp, &bth, &ext, 0, &hdr_len);
	if (buf == NULL)
		return; /* tx_alloc_fail counted; the next CE tries again */
	eng_tx_send(qp, buf, &bth, hdr_len, 0, &ah);
	qp->cc.cnp_sent = true;
	qp->cc.last_cnp_us = now;
	QP_CNT(qp, NP_CNP_SENT);
}

bool
cc_pace_ok(struct uroce_eng_qp *qp)
{
	struct cc_state *s = &qp->cc;
	uint64_t now = eng_now(qp->eng);

	if (now >= s->pace_us) {
		/* Idle or woken late: keep at most CC_PACE_SLACK_US of credit. */
		if (now - s->pace_us > CC_PACE_SLACK_US) {
			s->pace_us = now - CC_PACE_SLACK_US;
			s->pace_frac = 0;
		}
		return true;
	}
	/* Too early: wait on the timer list; the requester leaves the work
	 * list, so the worker goes on with the other QPs. */
	if (!s->paced) {
		s->paced = true;
		cc_rearm(qp);
	}
	return false;
}

/*
 * IBA 9.7.2 lets a requester ask for an ACK on any packet. A QP paced slowly
 * asks on each one that takes CC_ACKREQ_US or more at its rate: otherwise the
 * first packets of a long message would wait for the last one's ACK, paced
 * out many packet times later, and the local ACK timeout could expire
 * although nothing was lost. Above a few Gb/s nothing changes.
 */
bool
cc_ackreq(const struct uroce_eng_qp *qp, uint32_t paylen)
{
	uint64_t bytes = (uint64_t)paylen + UROCE_BTH_LEN + qp->cc.overhead;

	return (bytes * qp->cc.cost) >> CC_PACE_SHIFT >= CC_ACKREQ_US;
}

void
cc_tx_done(struct uroce_eng_qp *qp, uint32_t ib_len)
{
	const struct cc_conf *c = cc_conf(qp);
	struct cc_state *s = &qp->cc;
	uint32_t bytes = ib_len + s->overhead;
	uint64_t t = s->pace_frac + (uint64_t)bytes * s->cost;

	s->pace_us += t >> CC_PACE_SHIFT;
	s->pace_frac = t & ((1ull << CC_PACE_SHIFT) - 1);
	if (c->p.rpg_byte_reset == 0)
		return;
	s->bytes += bytes;
	if (s->bytes >= c->p.rpg_byte_reset) {
		s->bytes -= c->p.rpg_byte_reset;
		s->b_stage++;
		/* Right after a packet: the wait it set is at most one packet
		 * long, so 0 (no rescaling) does for the time. */
		cc_increase(qp, false, 0);
	}
}

void
cc_tx_mark(const struct uroce_eng_qp *qp, uint8_t opcode, struct uroce_eng_tx_addr *a)
{
	const struct cc_conf *c = cc_conf(qp);

	a->tclass_final = false;
	a->has_pcp = false;
	a->pcp = 0;
	if (opcode == UROCE_OPCODE_CNP) {
		/* A ConnectX-4 Lx sends its CNPs with DSCP 48 and ECT(0)
		 * (test/vectors/scapy, hw-cx4lx-cnp: TOS 0xc2). */
		a->tclass = (uint8_t)(c->p.cnp_dscp << 2 | c->p.ecn);
		a->tclass_final = true;
		a->has_pcp = true;
		a->pcp = (uint8_t)c->p.cnp_802p_prio;
		return;
	}
	/* No ECN bits in the traffic class: the QP's (port's) choice. A sender
	 * never sets CE itself (RFC 3168, 5): that too becomes the default. */
	if ((a->tclass & 3) == 0 || (a->tclass & 3) == 3)
		a->tclass = (uint8_t)((a->tclass & ~3u) | c->p.ecn);
}

unsigned int
cc_timers(struct uroce_eng_qp *qp, uint64_t now)
{
	const struct cc_conf *c = cc_conf(qp);
	struct cc_state *s = &qp->cc;
	unsigned int n = 0, k;

	if (s->deadline == 0 || now < s->deadline)
		return 0;
	if (!qp_can_send(qp)) {
		s->paced = false;
		s->reduce_pending = false;
		s->deadline = 0;
		return 0;
	}
	if (s->reduce_pending && now >= s->reduce_at) {
		cc_cut(qp, now);
		n++;
	}
	for (k = 0; s->limited && now >= s->inc_at && k < CC_INC_CATCHUP; k++) {
		s->t_stage++;
		s->inc_at += c->p.rpg_time_reset;
		cc_increase(qp, true, now);
		n++;
	}
	if (s->limited && now >= s->inc_at)
		s->inc_at = now + c->p.rpg_time_reset;
	if (s->paced && now >= s->pace_us) {
		s->paced = false;
		eng_req_kick(qp);
		n++;
	}
	cc_rearm(qp);
	return n;
}

/* ------------------------------------------------------------------------ */
/* API                                                                       */
/* ------------------------------------------------------------------------ */

int
uroce_eng_cc_set(struct uroce_eng *eng, const struct uroce_eng_cc_params *p)
{
	if (eng == NULL || uroce_eng_cc_params_check(p, NULL) != 0)
		return -EINVAL;
	conf_derive(&eng->cc, p);
	return 0;
}

int
uroce_eng_cc_get(const struct uroce_eng *eng, struct uroce_eng_cc_params *p)
{
	if (eng == NULL || p == NULL)
		return -EINVAL;
	*p = eng->cc.p;
	return 0;
}

int
uroce_eng_qp_cc_set(struct uroce_eng_qp *qp, const struct uroce_eng_cc_params *p)
{
	if (qp == NULL || (p != NULL && uroce_eng_cc_params_check(p, NULL) != 0))
		return -EINVAL;
	if (p == NULL) {
		qp->cc.conf = NULL;
	} else {
		conf_derive(&qp->cc.own, p);
		qp->cc.conf = &qp->cc.own;
	}
	if (qp->cc.limited && !cc_conf(qp)->p.roce_rp_enable)
		cc_release(qp);
	return 0;
}

int
uroce_eng_qp_cc_get(const struct uroce_eng_qp *qp, struct uroce_eng_cc_params *p)
{
	if (qp == NULL || p == NULL)
		return -EINVAL;
	*p = cc_conf(qp)->p;
	return 0;
}

int
uroce_eng_qp_cc_state(const struct uroce_eng_qp *qp, struct uroce_eng_cc_state *st)
{
	const struct cc_conf *c;

	if (qp == NULL || st == NULL)
		return -EINVAL;
	c = cc_conf(qp);
	memset(st, 0, sizeof(*st));
	st->limited = qp->cc.limited;
	st->max_kbps = c->max_kbps;
	st->rate_kbps = qp->cc.limited ? qp->cc.rc_kbps : c->max_kbps;
	st->target_kbps = qp->cc.limited ? qp->cc.rt_kbps : c->max_kbps;
	st->alpha = qp->cc.alpha;
	st->time_stage = qp->cc.t_stage;
	st->byte_stage = qp->cc.b_stage;
	return 0;
}
