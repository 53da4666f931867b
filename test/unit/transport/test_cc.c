/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* Congestion control (cc.c): the parameter table and its ConnectX defaults,
 * ECN marking, the notification point (CE in, CNP out, rate-limited per QP)
 * and the DCQCN reaction point (cut, alpha, recovery stages, release), and
 * pacing that parks a requester on the timer list. Protocol tests: inject a
 * packet into one side of a captured pair and assert on what it sent. */

#include "simproto.h"

static void
inj_tc(struct proto *p, int to, uint8_t op, uint32_t psn, bool ackreq,
       const struct uroce_ext_fields *ext, const void *pay, uint32_t len, uint8_t tclass)
{
	struct uroce_bth_fields b;

	memset(&b, 0, sizeof(b));
	b.opcode = UROCE_OPCODE(UROCE_SVC_RC, op);
	b.pkey = UROCE_DEFAULT_PKEY;
	b.dqpn = uroce_eng_qp_num(p->s[to].qp);
	b.psn = psn;
	b.ackreq = ackreq;
	cr_assert_eq(simwire_inject_tc(p->sw, to, &b, ext, pay, len, tclass), 0);
}

/* A CNP from the other side's GID to @p to's QP, as a ConnectX sends it. */
static void
inj_cnp(struct proto *p, int to, uint16_t pkey)
{
	struct uroce_bth_fields b;

	memset(&b, 0, sizeof(b));
	b.opcode = UROCE_OPCODE_CNP;
	b.pkey = pkey;
	b.becn = true;
	b.dqpn = uroce_eng_qp_num(p->s[to].qp);
	cr_assert_eq(simwire_inject_tc(p->sw, to, &b, NULL, NULL, 0, 0xC2), 0);
}

static struct uroce_eng_cc_state
cc_state(struct uroce_eng_qp *qp)
{
	struct uroce_eng_cc_state st;

	cr_assert_eq(uroce_eng_qp_cc_state(qp, &st), 0);
	return st;
}

static void
set_param(struct uroce_eng_cc_params *c, const char *name, uint32_t v)
{
	int i = uroce_eng_cc_param_find(name);

	cr_assert_geq(i, 0, "%s", name);
	cr_assert_eq(uroce_eng_cc_param_set(c, (unsigned int)i, v), 0, "%s = %u", name, v);
}

static uint64_t
qcnt(struct proto *p, int side, enum uroce_counter c)
{
	return uroce_eng_qp_counter(p->s[side].qp, c);
}

/* Run @p side's engine at the current time until it has nothing to do. */
static void
poll_side(struct proto *p, int side)
{
	flush(p, side);
}

/* Expect: the defaults are ConnectX's (mlxconfig of ConnectX-4/5 firmware,
 * NVIDIA's DCQCN parameter table). */
Test(cc, defaults_are_connectx)
{
	struct uroce_eng_cc_params c;

	uroce_eng_cc_params_default(&c);
	cr_expect_eq(c.roce_rp_enable, 1);
	cr_expect_eq(c.roce_np_enable, 1);
	cr_expect_eq(c.rpg_time_reset, 300);
	cr_expect_eq(c.rpg_byte_reset, 32767);
	cr_expect_eq(c.rpg_threshold, 1);
	cr_expect_eq(c.rpg_max_rate, 0);
	cr_expect_eq(c.rpg_ai_rate, 5);
	cr_expect_eq(c.rpg_hai_rate, 50);
	cr_expect_eq(c.rpg_gd, 11);
	cr_expect_eq(c.rpg_min_dec_fac, 50);
	cr_expect_eq(c.rpg_min_rate, 1);
	cr_expect_eq(c.rate_to_set_on_first_cnp, 0);
	cr_expect_eq(c.dce_tcp_g, 1019);
	cr_expect_eq(c.dce_tcp_rtt, 1);
	cr_expect_eq(c.rate_reduce_monitor_period, 4);
	cr_expect_eq(c.initial_alpha_value, 1023);
	cr_expect_eq(c.clamp_tgt_rate, 0);
	cr_expect_eq(c.clamp_tgt_rate_after_time_inc, 1);
	cr_expect_eq(c.min_time_between_cnps, 4);
	cr_expect_eq(c.cnp_dscp, 48);
	cr_expect_eq(c.cnp_802p_prio, 6);
	cr_expect_eq(c.ecn, 2);
	cr_expect_eq(c.line_rate, 0);
}

/* Expect: the table covers every field once, names resolve, ranges hold. */
Test(cc, parameter_table)
{
	struct uroce_eng_cc_params c;
	unsigned int i, n = uroce_eng_cc_param_count(), bad = 99;

	cr_assert_eq(n * sizeof(uint32_t), sizeof(c));
	uroce_eng_cc_params_default(&c);
	for (i = 0; i < n; i++) {
		const struct uroce_eng_cc_param_info *pi = uroce_eng_cc_param_info(i);

		cr_assert_not_null(pi);
		cr_expect_eq(uroce_eng_cc_param_find(pi->name), (int)i, "%s", pi->name);
		cr_expect_eq(uroce_eng_cc_param_get(&c, i), pi->def, "%s", pi->name);
		cr_expect_lt(strlen(pi->name), 32u, "%s fits a counter name", pi->name);
		cr_expect_leq(pi->min, pi->def);
		cr_expect_leq(pi->def, pi->max);
		cr_expect_eq(uroce_eng_cc_param_set(&c, i, pi->max), 0);
		if (pi->max != UINT32_MAX)
			cr_expect_eq(uroce_eng_cc_param_set(&c, i, pi->max + 1), -EINVAL, "%s",
				     pi->name);
		if (pi->min > 0)
			cr_expect_eq(uroce_eng_cc_param_set(&c, i, pi->min - 1), -EINVAL, "%s",
				     pi->name);
		cr_expect_eq(uroce_eng_cc_param_get(&c, i), pi->max);
	}
	cr_expect_null(uroce_eng_cc_param_info(n));
	cr_expect_eq(uroce_eng_cc_param_find("rpg_no_such"), -ENOENT);
	cr_expect_eq(uroce_eng_cc_param_find(NULL), -ENOENT);
	cr_expect_eq(uroce_eng_cc_param_set(&c, n, 1), -EINVAL);
	cr_expect_eq(uroce_eng_cc_param_get(&c, n), 0);
	/* Expect: a minimum rate above the maximum is refused, naming it. */
	uroce_eng_cc_params_default(&c);
	cr_expect_eq(uroce_eng_cc_params_check(&c, NULL), 0);
	set_param(&c, "rpg_max_rate", 1000);
	set_param(&c, "rpg_min_rate", 2000);
	cr_expect_eq(uroce_eng_cc_params_check(&c, &bad), -EINVAL);
	cr_expect_eq(bad, (unsigned int)uroce_eng_cc_param_find("rpg_min_rate"));
	set_param(&c, "rpg_max_rate", 0);
	set_param(&c, "line_rate", 1000);
	cr_expect_eq(uroce_eng_cc_params_check(&c, NULL), -EINVAL);
	c.line_rate = 0; /* 0: 100 Gb/s */
	cr_expect_eq(uroce_eng_cc_params_check(&c, NULL), 0);
	c.rpg_gd = 0;
	cr_expect_eq(uroce_eng_cc_params_check(&c, &bad), -EINVAL);
	cr_expect_eq(bad, (unsigned int)uroce_eng_cc_param_find("rpg_gd"));
	cr_expect_eq(uroce_eng_cc_params_check(NULL, NULL), -EINVAL);
}

/* Expect: a QP uses the engine's set until it has its own, and again after
 * it gives it back; bad sets and NULLs are EINVAL and change nothing. */
Test(cc, engine_and_qp_parameters)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_eng_cc_params c, got;
	struct uroce_eng *e;
	struct proto p;

	proto_init(&p, &o);
	e = simwire_engine(p.sw, 0);
	uroce_eng_cc_params_default(&c);
	set_param(&c, "rpg_time_reset", 55);
	cr_assert_eq(uroce_eng_cc_set(e, &c), 0);
	cr_assert_eq(uroce_eng_qp_cc_get(p.s[0].qp, &got), 0);
	cr_expect_eq(got.rpg_time_reset, 55);
	set_param(&c, "cnp_dscp", 26);
	cr_assert_eq(uroce_eng_qp_cc_set(p.s[0].qp, &c), 0);
	set_param(&c, "rpg_time_reset", 77);
	cr_assert_eq(uroce_eng_cc_set(e, &c), 0);
	cr_assert_eq(uroce_eng_qp_cc_get(p.s[0].qp, &got), 0);
	cr_expect_eq(got.rpg_time_reset, 55, "the QP's own set stays");
	cr_expect_eq(got.cnp_dscp, 26);
	cr_assert_eq(uroce_eng_qp_cc_set(p.s[0].qp, NULL), 0);
	cr_assert_eq(uroce_eng_qp_cc_get(p.s[0].qp, &got), 0);
	cr_expect_eq(got.rpg_time_reset, 77);
	c.rpg_threshold = 0;
	cr_expect_eq(uroce_eng_cc_set(e, &c), -EINVAL);
	cr_expect_eq(uroce_eng_qp_cc_set(p.s[0].qp, &c), -EINVAL);
	cr_assert_eq(uroce_eng_cc_get(e, &got), 0);
	cr_expect_eq(got.rpg_threshold, 1);
	cr_expect_eq(uroce_eng_cc_set(NULL, &got), -EINVAL);
	cr_expect_eq(uroce_eng_cc_set(e, NULL), -EINVAL);
	cr_expect_eq(uroce_eng_cc_get(NULL, &got), -EINVAL);
	cr_expect_eq(uroce_eng_qp_cc_set(NULL, NULL), -EINVAL);
	cr_expect_eq(uroce_eng_qp_cc_get(p.s[0].qp, NULL), -EINVAL);
	cr_expect_eq(uroce_eng_qp_cc_state(NULL, NULL), -EINVAL);
	proto_fini(&p);
}

/* Expect: data, ACKs and READ responses carry ECT(0) when the traffic class
 * has no ECN bits; ECT(1) asked by the traffic class stays; CE in a traffic
 * class is never sent; a QP whose ecn is 0 sends not-ECT. */
Test(cc, marking)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_eng_cc_params c;
	struct uroce_eng_qp_attr a;
	struct proto p;
	uint8_t tc[4] = { 0x68, 0x69, 0x6B, 0x68 };
	uint8_t want[4] = { 0x6A, 0x69, 0x6A, 0x68 };
	struct uroce_ext_fields ack = { .syndrome = UROCE_AETH_ACK_NO_CREDIT };
	int i;

	proto_init(&p, &o);
	/* Expect: the responder's ACK to a plain SEND is ECT(0). */
	post_recv_buf(&p, 1, 0, 64, 1);
	inj_tc(&p, 1, UROCE_OP_SEND_ONLY, 0, true, NULL, "abcd", 4, 0);
	flush(&p, 1);
	cr_assert_eq(ntx(&p, 1), 1);
	expect_ack(&p, 1, 0, UROCE_AETH_ACK, 0, 0);
	cr_expect_eq(simwire_cap(p.sw, 1, 0)->f.tclass, 0x02);
	cr_expect_not(simwire_cap(p.sw, 1, 0)->addr.tclass_final);
	for (i = 0; i < 4; i++) {
		memset(&a, 0, sizeof(a));
		a.qp_state = UROCE_QPS_SQD;
		cr_assert_eq(uroce_eng_modify_qp(p.s[0].qp, &a, UROCE_QP_STATE), 0);
		memcpy(a.ah_attr.dgid, simwire_gid(p.sw, 1), 16);
		a.ah_attr.tclass = tc[i];
		cr_assert_eq(uroce_eng_modify_qp(p.s[0].qp, &a, UROCE_QP_STATE | UROCE_QP_AV), 0);
		a.qp_state = UROCE_QPS_RTS;
		cr_assert_eq(uroce_eng_modify_qp(p.s[0].qp, &a, UROCE_QP_STATE), 0);
		if (i == 3) {
			uroce_eng_cc_params_default(&c);
			set_param(&c, "ecn", 0);
			cr_assert_eq(uroce_eng_qp_cc_set(p.s[0].qp, &c), 0);
		}
		post_wr(&p, UROCE_WR_RDMA_WRITE, 0, 16, 0, (uint64_t)i, 0);
		flush(&p, 0);
		cr_assert_eq(ntx(&p, 0), (uint32_t)i + 1);
		/* Acknowledge it, so the next round may change the AV in SQD. */
		inj(&p, 0, UROCE_OP_ACKNOWLEDGE, (uint32_t)i, false, &ack, NULL, 0);
		cr_expect_eq(simwire_cap(p.sw, 0, (uint32_t)i)->f.tclass, want[i],
			     "traffic class %#x sent as %#x, want %#x", tc[i],
			     simwire_cap(p.sw, 0, (uint32_t)i)->f.tclass, want[i]);
	}
	proto_fini(&p);
}

/* Expect: CE on a request makes the responder's QP send one CNP (RoCEv2
 * A17.9.3) to the requester's QP, at once, before its ACK; a second CE
 * within min_time_between_cnps sends none; one after it sends the next. */
Test(cc, np_answers_ce_with_a_cnp)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	const struct sim_cap *k;
	struct proto p;
	uint32_t i;

	proto_init(&p, &o);
	post_recv_buf(&p, 1, 0, 64, 1);
	post_recv_buf(&p, 1, 0, 64, 2);
	post_recv_buf(&p, 1, 0, 64, 3);
	inj_tc(&p, 1, UROCE_OP_SEND_ONLY, 0, true, NULL, "abcd", 4, 0x1B); /* DSCP 6, CE */
	cr_assert_eq(ntx(&p, 1), 1, "the CNP goes out from the receive path");
	k = simwire_cap(p.sw, 1, 0);
	cr_expect_eq(k->p.opcode, UROCE_OPCODE_CNP);
	cr_expect(uroce_bth_becn(k->p.bth));
	cr_expect_not(uroce_bth_fecn(k->p.bth));
	cr_expect_not(uroce_bth_se(k->p.bth));
	cr_expect_not(uroce_bth_migreq(k->p.bth));
	cr_expect_not(uroce_bth_ackreq(k->p.bth));
	cr_expect_eq(uroce_bth_pkey(k->p.bth), 0xFFFF);
	cr_expect_eq(k->p.dqpn, uroce_eng_qp_num(p.s[0].qp));
	cr_expect_eq(k->p.psn, 0);
	cr_expect_eq(k->p.ib_len, UROCE_BTH_LEN + UROCE_CNP_RSVD_LEN + UROCE_ICRC_LEN);
	for (i = 0; i < UROCE_CNP_RSVD_LEN; i++)
		cr_expect_eq(k->p.bth[UROCE_BTH_LEN + i], 0, "reserved byte %u", i);
	/* Expect: DSCP 48 with ECT(0), 802.1p priority 6, addressed back to
	 * side 0 (uroce_parse() in the capture checked the ICRC). */
	cr_expect_eq(k->f.tclass, 0xC2);
	cr_expect(k->addr.tclass_final);
	cr_expect(k->addr.has_pcp);
	cr_expect_eq(k->addr.pcp, 6);
	cr_expect_eq(memcmp(k->f.dgid, simwire_gid(p.sw, 0), 16), 0);
	cr_expect_eq(memcmp(k->f.sgid, simwire_gid(p.sw, 1), 16), 0);
	flush(&p, 1);
	cr_assert_eq(ntx(&p, 1), 2);
	expect_ack(&p, 1, 1, UROCE_AETH_ACK, 0, 0);
	/* Expect: 3 µs later, CE again: counted, no CNP. */
	simwire_advance(p.sw, 3);
	inj_tc(&p, 1, UROCE_OP_SEND_ONLY, 1, false, NULL, "abcd", 4, 0x03);
	cr_expect_eq(ntx(&p, 1), 2);
	/* Expect: at 4 µs a CNP again. */
	simwire_advance(p.sw, 1);
	inj_tc(&p, 1, UROCE_OP_SEND_ONLY, 2, false, NULL, "abcd", 4, 0x03);
	cr_assert_eq(ntx(&p, 1), 3);
	cr_expect_eq(tx(&p, 1, 2)->opcode, UROCE_OPCODE_CNP);
	cr_expect_eq(qcnt(&p, 1, UROCE_CNT_NP_ECN_MARKED_ROCE_PACKETS), 3);
	cr_expect_eq(qcnt(&p, 1, UROCE_CNT_NP_CNP_SENT), 2);
	cr_expect_eq(qcnt(&p, 1, UROCE_CNT_RX_SEND_REQUESTS), 3);
	/* Expect: ECT(0), ECT(1) and not-ECT packets are no congestion sign. */
	simwire_advance(p.sw, 100);
	post_recv_buf(&p, 1, 0, 64, 4);
	post_recv_buf(&p, 1, 0, 64, 5);
	post_recv_buf(&p, 1, 0, 64, 6);
	inj_tc(&p, 1, UROCE_OP_SEND_ONLY, 3, false, NULL, "abcd", 4, 0x02);
	inj_tc(&p, 1, UROCE_OP_SEND_ONLY, 4, false, NULL, "abcd", 4, 0x01);
	inj_tc(&p, 1, UROCE_OP_SEND_ONLY, 5, false, NULL, "abcd", 4, 0xFC);
	cr_expect_eq(ntx(&p, 1), 3);
	cr_expect_eq(qcnt(&p, 1, UROCE_CNT_NP_ECN_MARKED_ROCE_PACKETS), 3);
	proto_fini(&p);
}

/* Expect: min_time_between_cnps 0 answers every CE; roce_np_enable 0 counts
 * CE and sends nothing; cnp_dscp 0 stays 0 (final, no port DSCP). */
Test(cc, np_parameters)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_eng_cc_params c;
	struct proto p;
	uint32_t i;

	proto_init(&p, &o);
	uroce_eng_cc_params_default(&c);
	set_param(&c, "min_time_between_cnps", 0);
	set_param(&c, "cnp_dscp", 0);
	set_param(&c, "cnp_802p_prio", 3);
	set_param(&c, "ecn", 1);
	cr_assert_eq(uroce_eng_qp_cc_set(p.s[1].qp, &c), 0);
	for (i = 0; i < 3; i++)
		inj_tc(&p, 1, UROCE_OP_RDMA_WRITE_ONLY, i, false,
		       &(struct uroce_ext_fields){ .va = IOVA(1), .rkey =
			       uroce_eng_mr_rkey(p.mr[1]), .dma_len = 4 }, "abcd", 4, 0x03);
	cr_assert_eq(ntx(&p, 1), 3);
	for (i = 0; i < 3; i++) {
		cr_expect_eq(tx(&p, 1, i)->opcode, UROCE_OPCODE_CNP);
		cr_expect_eq(simwire_cap(p.sw, 1, i)->f.tclass, 0x01);
		cr_expect(simwire_cap(p.sw, 1, i)->addr.tclass_final);
		cr_expect_eq(simwire_cap(p.sw, 1, i)->addr.pcp, 3);
	}
	set_param(&c, "roce_np_enable", 0);
	cr_assert_eq(uroce_eng_qp_cc_set(p.s[1].qp, &c), 0);
	inj_tc(&p, 1, UROCE_OP_RDMA_WRITE_ONLY, 3, false,
	       &(struct uroce_ext_fields){ .va = IOVA(1), .rkey = uroce_eng_mr_rkey(p.mr[1]),
					  .dma_len = 4 }, "abcd", 4, 0x03);
	cr_expect_eq(ntx(&p, 1), 3);
	cr_expect_eq(qcnt(&p, 1, UROCE_CNT_NP_ECN_MARKED_ROCE_PACKETS), 4);
	cr_expect_eq(qcnt(&p, 1, UROCE_CNT_NP_CNP_SENT), 3);
	cr_expect_eq(qcnt(&p, 1, UROCE_CNT_RX_WRITE_REQUESTS), 4);
	proto_fini(&p);
}

/* Expect: CE on a response (an ACK) makes the requester's QP send a CNP to
 * the responder's QP: the notification point is any receiving QP. */
Test(cc, np_on_responses)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_ext_fields e = { .syndrome = UROCE_AETH_ACK_NO_CREDIT };
	struct proto p;

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_RDMA_WRITE, 0, 16, 0, 1, 0);
	flush(&p, 0);
	cr_assert_eq(ntx(&p, 0), 1);
	inj_tc(&p, 0, UROCE_OP_ACKNOWLEDGE, 0, false, &e, NULL, 0, 0x03);
	cr_assert_eq(ntx(&p, 0), 2);
	cr_expect_eq(tx(&p, 0, 1)->opcode, UROCE_OPCODE_CNP);
	cr_expect_eq(tx(&p, 0, 1)->dqpn, uroce_eng_qp_num(p.s[1].qp));
	cr_expect_eq(qcnt(&p, 0, UROCE_CNT_NP_CNP_SENT), 1);
	proto_fini(&p);
}

/* Expect: a UD QP answers CE with a CNP to the DETH's source QP at the
 * frame's source GID. */
Test(cc, np_ud_answers_the_deth_source)
{
	struct sim_qp_opts o = { .type = UROCE_QPT_UD };
	struct uroce_bth_fields b;
	struct uroce_ext_fields e;
	const struct sim_cap *k;
	struct proto p;

	proto_init(&p, &o);
	post_recv_buf(&p, 1, 0, 256, 1);
	memset(&b, 0, sizeof(b));
	memset(&e, 0, sizeof(e));
	b.opcode = UROCE_OPCODE(UROCE_SVC_UD, UROCE_OP_SEND_ONLY);
	b.pkey = UROCE_DEFAULT_PKEY;
	b.dqpn = uroce_eng_qp_num(p.s[1].qp);
	e.qkey = 0x11111111;
	e.src_qp = 0x77;
	cr_assert_eq(simwire_inject_tc(p.sw, 1, &b, &e, "abcd", 4, 0x03), 0);
	cr_assert_eq(ntx(&p, 1), 1);
	k = simwire_cap(p.sw, 1, 0);
	cr_expect_eq(k->p.opcode, UROCE_OPCODE_CNP);
	cr_expect_eq(k->p.dqpn, 0x77);
	cr_expect_eq(memcmp(k->f.dgid, simwire_gid(p.sw, 0), 16), 0);
	cr_expect_eq(memcmp(k->f.sgid, simwire_gid(p.sw, 1), 16), 0);
	proto_fini(&p);
}

/* Expect: the first CNP starts the limiter at the maximum rate and cuts it
 * by alpha / 2 with alpha = initial_alpha_value: 100 Gb/s * (2048 - 1023) /
 * 2048. The target stays at the rate before the congestion. */
Test(cc, rp_first_cnp)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_eng_cc_state st;
	struct proto p;

	proto_init(&p, &o);
	st = cc_state(p.s[0].qp);
	cr_expect_not(st.limited);
	cr_expect_eq(st.rate_kbps, 100000000u);
	cr_expect_eq(st.max_kbps, 100000000u);
	inj_cnp(&p, 0, 0xFFFF);
	st = cc_state(p.s[0].qp);
	cr_expect(st.limited);
	cr_expect_eq(st.rate_kbps, 50048828u);
	cr_expect_eq(st.target_kbps, 100000000u);
	cr_expect_eq(st.alpha, 1023);
	cr_expect_eq(qcnt(&p, 0, UROCE_CNT_RP_CNP_HANDLED), 1);
	cr_expect_eq(uroce_eng_counter(simwire_engine(p.sw, 0), UROCE_CNT_RX_CNP), 1);
	/* Expect: the increase timer is armed rpg_time_reset from now. */
	cr_expect_eq(uroce_eng_next_deadline(simwire_engine(p.sw, 0)), simwire_now(p.sw) + 300);
	/* Expect: a QP back in RESET forgets it. */
	{
		struct uroce_eng_qp_attr a = { .qp_state = UROCE_QPS_RESET };

		cr_assert_eq(uroce_eng_modify_qp(p.s[0].qp, &a, UROCE_QP_STATE), 0);
		cr_expect_not(cc_state(p.s[0].qp).limited);
		cr_expect_eq(uroce_eng_next_deadline(simwire_engine(p.sw, 0)), UINT64_MAX);
	}
	proto_fini(&p);
}

/* Expect: CNPs to no QP, with another P_Key, from a GID that is not the
 * QP's peer, to a QP in ERR, or with the RP disabled change nothing. */
Test(cc, rp_ignores)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_eng_cc_params c;
	struct uroce_bth_fields b;
	struct uroce_frame fr;
	struct uroce_pkt pk;
	struct uroce_eng *e;
	struct proto p;
	uint8_t buf[64];
	struct uroce_eng_qp_attr a;

	proto_init(&p, &o);
	e = simwire_engine(p.sw, 0);
	memset(&b, 0, sizeof(b));
	b.opcode = UROCE_OPCODE_CNP;
	b.pkey = 0xFFFF;
	b.becn = true;
	b.dqpn = 0x3FF;
	cr_assert_eq(simwire_inject(p.sw, 0, &b, NULL, NULL, 0), 0);
	cr_expect_eq(uroce_eng_counter(e, UROCE_CNT_RP_CNP_IGNORED), 1);
	inj_cnp(&p, 0, 0x8001);
	cr_expect_eq(qcnt(&p, 0, UROCE_CNT_RP_CNP_IGNORED), 1);
	/* From a GID that is not the QP's peer. */
	b.dqpn = uroce_eng_qp_num(p.s[0].qp);
	cr_assert_eq(uroce_hdr_build(buf, sizeof(buf), &b, NULL, 0), 28);
	memset(buf + 28, 0, 4);
	cr_assert_eq(uroce_pkt_parse(buf, 32, &pk), UROCE_WIRE_OK);
	memset(&fr, 0, sizeof(fr));
	memcpy(fr.sgid, simwire_gid(p.sw, 0), 16);
	fr.tclass = 0xC2;
	uroce_eng_rx(e, &pk, &fr);
	cr_expect_eq(qcnt(&p, 0, UROCE_CNT_RP_CNP_IGNORED), 2);
	uroce_eng_cc_params_default(&c);
	set_param(&c, "roce_rp_enable", 0);
	cr_assert_eq(uroce_eng_qp_cc_set(p.s[0].qp, &c), 0);
	inj_cnp(&p, 0, 0xFFFF);
	cr_expect_eq(qcnt(&p, 0, UROCE_CNT_RP_CNP_IGNORED), 3);
	cr_assert_eq(uroce_eng_qp_cc_set(p.s[0].qp, NULL), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_ERR;
	cr_assert_eq(uroce_eng_modify_qp(p.s[0].qp, &a, UROCE_QP_STATE), 0);
	inj_cnp(&p, 0, 0xFFFF);
	cr_expect_eq(qcnt(&p, 0, UROCE_CNT_RP_CNP_IGNORED), 4);
	cr_expect_eq(qcnt(&p, 0, UROCE_CNT_RP_CNP_HANDLED), 0);
	cr_expect_not(cc_state(p.s[0].qp).limited);
	cr_expect_eq(uroce_eng_counter(e, UROCE_CNT_RX_CNP), 5);
	proto_fini(&p);
}

/* Expect: CNPs inside rate_reduce_monitor_period cut once more at its end,
 * not once each; alpha falls while no CNP comes and rises with CNPs. */
Test(cc, rp_monitor_period_and_alpha)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_eng_cc_state st;
	struct uroce_eng *e;
	struct proto p;
	uint32_t r1, a1;
	int i;

	proto_init(&p, &o);
	e = simwire_engine(p.sw, 0);
	inj_cnp(&p, 0, 0xFFFF);
	r1 = cc_state(p.s[0].qp).rate_kbps;
	simwire_advance(p.sw, 1);
	inj_cnp(&p, 0, 0xFFFF);
	inj_cnp(&p, 0, 0xFFFF);
	cr_expect_eq(cc_state(p.s[0].qp).rate_kbps, r1, "no cut inside the period");
	cr_expect_eq(uroce_eng_next_deadline(e), simwire_now(p.sw) + 3);
	simwire_advance(p.sw, 3);
	poll_side(&p, 0);
	st = cc_state(p.s[0].qp);
	cr_expect_lt(st.rate_kbps, r1, "one cut at the end of the period");
	cr_expect_geq(st.rate_kbps, r1 / 2, "rpg_min_dec_fac: at most half");
	cr_expect_eq(qcnt(&p, 0, UROCE_CNT_RP_CNP_HANDLED), 3);
	/* Expect: 200 µs without CNPs: alpha * (1019/1024)^~200 (about 0.37). */
	a1 = st.alpha;
	simwire_advance(p.sw, 200);
	poll_side(&p, 0);
	inj_cnp(&p, 0, 0xFFFF);
	st = cc_state(p.s[0].qp);
	cr_expect_lt(st.alpha, a1 * 45 / 100, "alpha %u after 200 us, was %u", st.alpha, a1);
	cr_expect_gt(st.alpha, a1 * 30 / 100, "alpha %u after 200 us, was %u", st.alpha, a1);
	/* Expect: a CNP every µs for 100 µs: alpha climbs again. */
	a1 = st.alpha;
	for (i = 0; i < 100; i++) {
		simwire_advance(p.sw, 1);
		poll_side(&p, 0);
		inj_cnp(&p, 0, 0xFFFF);
	}
	st = cc_state(p.s[0].qp);
	cr_expect_gt(st.alpha, a1 + 100, "alpha %u after 100 CNPs, was %u", st.alpha, a1);
	cr_expect_leq(st.alpha, 1023);
	cr_expect_geq(st.rate_kbps, 1000, "never below rpg_min_rate");
	proto_fini(&p);
}

/* Expect: recovery after a cut, step by step (rpg_threshold 1): the first
 * timer event is fast recovery (half way to the target), the next ones
 * additive (target + rpg_ai_rate); with the byte counter past the threshold
 * too, hyper (target + i * rpg_hai_rate). A cut after a timer increase
 * clamps the target to the current rate. */
Test(cc, rp_recovery_stages)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_eng_cc_params c;
	struct uroce_eng_cc_state st;
	uint32_t rc, rt;
	struct proto p;

	proto_init(&p, &o);
	uroce_eng_cc_params_default(&c);
	set_param(&c, "rpg_time_reset", 100);
	set_param(&c, "rpg_byte_reset", 0);
	set_param(&c, "line_rate", 10000);
	cr_assert_eq(uroce_eng_qp_cc_set(p.s[0].qp, &c), 0);
	inj_cnp(&p, 0, 0xFFFF);
	st = cc_state(p.s[0].qp);
	rc = st.rate_kbps;
	rt = st.target_kbps;
	cr_expect_eq(rc, 10000000ull * 1025 / 2048);
	cr_expect_eq(rt, 10000000);
	/* Fast recovery. */
	simwire_advance(p.sw, 100);
	poll_side(&p, 0);
	st = cc_state(p.s[0].qp);
	cr_expect_eq(st.time_stage, 1);
	cr_expect_eq(st.target_kbps, rt);
	cr_expect_eq(st.rate_kbps, (rc + rt + 1) / 2);
	/* A cut now clamps the target to the current rate (after a timer
	 * increase, clamp_tgt_rate_after_time_inc). */
	rc = st.rate_kbps;
	inj_cnp(&p, 0, 0xFFFF);
	st = cc_state(p.s[0].qp);
	cr_expect_eq(st.target_kbps, rc);
	cr_expect_eq(st.time_stage, 0);
	rt = st.target_kbps;
	rc = st.rate_kbps;
	/* FR, then AI twice. */
	simwire_advance(p.sw, 100);
	poll_side(&p, 0);
	rc = (rc + rt + 1) / 2;
	cr_expect_eq(cc_state(p.s[0].qp).rate_kbps, rc);
	simwire_advance(p.sw, 100);
	poll_side(&p, 0);
	rt += 5000;
	rc = (rc + rt + 1) / 2;
	st = cc_state(p.s[0].qp);
	cr_expect_eq(st.target_kbps, rt);
	cr_expect_eq(st.rate_kbps, rc);
	simwire_advance(p.sw, 100);
	poll_side(&p, 0);
	rt += 5000;
	rc = (rc + rt + 1) / 2;
	st = cc_state(p.s[0].qp);
	cr_expect_eq(st.target_kbps, rt);
	cr_expect_eq(st.rate_kbps, rc);
	cr_expect_eq(st.time_stage, 3);
	cr_expect_eq(st.byte_stage, 0);
	proto_fini(&p);
}

/* Expect: the byte counter drives increases while data flows, and with both
 * counters past rpg_threshold the target grows by rpg_hai_rate steps. */
Test(cc, rp_hyper_increase)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_eng_cc_params c;
	struct uroce_eng_cc_state st;
	struct proto p;
	uint32_t rt0;
	int i;

	proto_init(&p, &o);
	uroce_eng_cc_params_default(&c);
	set_param(&c, "rpg_time_reset", 50);
	set_param(&c, "rpg_byte_reset", 2000);
	set_param(&c, "line_rate", 10000);
	set_param(&c, "rpg_hai_rate", 1000);
	cr_assert_eq(uroce_eng_qp_cc_set(p.s[0].qp, &c), 0);
	inj_cnp(&p, 0, 0xFFFF);
	/* A timer increase, then a cut that clamps the target. */
	simwire_advance(p.sw, 50);
	poll_side(&p, 0);
	simwire_advance(p.sw, 4);
	inj_cnp(&p, 0, 0xFFFF);
	rt0 = cc_state(p.s[0].qp).target_kbps;
	simwire_set_capture(p.sw, 0, false);
	simwire_set_capture(p.sw, 1, false);
	for (i = 0; i < 40; i++)
		post_wr(&p, UROCE_WR_RDMA_WRITE, 0, 1024, 0, (uint64_t)i, 0);
	/* 120 µs: two timer events; ~5 Gb/s for 120 µs is 75 KB: dozens of
	 * byte events. */
	for (i = 0; i < 120; i++) {
		simwire_step(p.sw);
		simwire_advance(p.sw, 1);
	}
	st = cc_state(p.s[0].qp);
	cr_expect_geq(st.time_stage, 2);
	cr_expect_gt(st.byte_stage, 2);
	cr_expect_geq(st.target_kbps, rt0 + 1000000, "hyper increase: target %u from %u",
		      st.target_kbps, rt0);
	proto_fini(&p);
}

/* Expect: once the current rate is back at the maximum the limiter is off:
 * no pacing, no timer. */
Test(cc, rp_release)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_eng_cc_params c;
	struct uroce_eng *e;
	struct proto p;
	int i;

	proto_init(&p, &o);
	e = simwire_engine(p.sw, 0);
	uroce_eng_cc_params_default(&c);
	set_param(&c, "rpg_time_reset", 10);
	set_param(&c, "line_rate", 1000);
	set_param(&c, "rpg_ai_rate", 1000);
	cr_assert_eq(uroce_eng_cc_set(e, &c), 0);
	inj_cnp(&p, 0, 0xFFFF);
	cr_expect(cc_state(p.s[0].qp).limited);
	for (i = 0; i < 40 && cc_state(p.s[0].qp).limited; i++) {
		simwire_advance(p.sw, 10);
		poll_side(&p, 0);
	}
	cr_expect_not(cc_state(p.s[0].qp).limited, "released after %d timer events", i);
	cr_expect_eq(cc_state(p.s[0].qp).rate_kbps, 1000000);
	cr_expect_eq(uroce_eng_next_deadline(e), UINT64_MAX);
	proto_fini(&p);
}

/* Expect: a limited QP sends at its rate: after a packet, the requester is
 * off the work list with a deadline where the next may go, and that one
 * goes when the clock gets there. An unlimited QP on the same engine sends
 * all it has meanwhile. */
Test(cc, pacing_parks_the_requester)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct uroce_eng_cc_params c;
	struct sim_side s2[2];
	struct uroce_eng *e;
	struct proto p;
	uint64_t t, t0, prev;
	int i;

	proto_init(&p, &o);
	e = simwire_engine(p.sw, 0);
	uroce_eng_cc_params_default(&c);
	/* 20 Mb/s, held: no cut, no increase during the test. */
	set_param(&c, "rate_to_set_on_first_cnp", 20);
	set_param(&c, "rpg_min_dec_fac", 100);
	set_param(&c, "rpg_time_reset", 131071);
	set_param(&c, "rpg_byte_reset", 0);
	cr_assert_eq(uroce_eng_qp_cc_set(p.s[0].qp, &c), 0);
	inj_cnp(&p, 0, 0xFFFF);
	cr_assert_eq(cc_state(p.s[0].qp).rate_kbps, 20000);
	/* A second pair on the same engines, not limited. */
	memset(s2, 0, sizeof(s2));
	for (i = 0; i < 2; i++) {
		s2[i] = p.s[i];
		s2[i].qp = sim_qp_create(&s2[i], UROCE_QPT_RC, 64);
		cr_assert_not_null(s2[i].qp);
	}
	cr_assert_eq(sim_connect(p.sw, s2[0].qp, s2[1].qp, &o), 0);
	for (i = 0; i < 10; i++)
		post_wr(&p, UROCE_WR_RDMA_WRITE, 0, 1024, 0, (uint64_t)i, 0);
	for (i = 0; i < 20; i++)
		cr_assert_eq(post_wr_qp(&p, s2[0].qp, UROCE_WR_RDMA_WRITE, 0, 1024, 0, 0, 0), 0);
	flush(&p, 0);
	/* Expect: the other QP's 20 and one of the limited QP's. */
	cr_assert_eq(ntx(&p, 0), 21);
	cr_expect_not(uroce_eng_busy(e), "a paced requester is not on the work list");
	/* 1024 + 28 + 4 bytes of IB part, 42 of Ethernet/IPv4/UDP, at 20 Mb/s:
	 * 439.2 µs a packet. */
	t0 = simwire_now(p.sw);
	prev = t0;
	for (i = 1; i < 10; i++) {
		t = uroce_eng_next_deadline(e);
		cr_assert_neq(t, UINT64_MAX);
		cr_expect_leq(t - t0, (uint64_t)(i * 4392) / 10, "packet %d at +%llu", i,
			      (unsigned long long)(t - t0));
		cr_expect_geq(t - t0 + 1, (uint64_t)(i * 4392) / 10, "packet %d at +%llu", i,
			      (unsigned long long)(t - t0));
		cr_expect_gt(t, prev);
		prev = t;
		simwire_advance(p.sw, t - simwire_now(p.sw) - 1);
		flush(&p, 0);
		cr_expect_eq(ntx(&p, 0), 20u + (uint32_t)i, "nothing before the slot");
		simwire_advance(p.sw, 1);
		flush(&p, 0);
		cr_expect_eq(ntx(&p, 0), 21u + (uint32_t)i, "one in the slot");
	}
	proto_fini(&p);
}

/* Expect: a QP paced far below its ACK timeout's scale (2 Mb/s: 4.5 ms a
 * packet; timeout 8: 1 ms) completes a 4-packet WRITE with no timeout and
 * no retransmission: each slow packet asks for its ACK, and the timer does
 * not run while the requester only waits for its slot. */
Test(cc, slow_pacing_no_false_timeouts)
{
	struct sim_qp_opts o = { .psn0 = 0, .timeout = 8, .retry_cnt = 1 };
	struct uroce_eng_cc_params c;
	struct uroce_eng_wc wc;
	struct proto p;
	uint32_t i;

	proto_init(&p, &o);
	uroce_eng_cc_params_default(&c);
	set_param(&c, "rate_to_set_on_first_cnp", 2);
	set_param(&c, "rpg_min_dec_fac", 100);
	set_param(&c, "rpg_time_reset", 131071);
	set_param(&c, "rpg_byte_reset", 0);
	cr_assert_eq(uroce_eng_qp_cc_set(p.s[0].qp, &c), 0);
	inj_cnp(&p, 0, 0xFFFF);
	simwire_set_capture(p.sw, 0, false);
	simwire_set_capture(p.sw, 1, false);
	post_wr(&p, UROCE_WR_RDMA_WRITE, 0, 4 * 1024, 0, 7, 0);
	cr_assert_eq(sim_wait_cq(p.sw, p.s[0].scq, &wc, 1, 100000), 1);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS, "%s", uroce_wc_status_str(wc.status));
	cr_expect_eq(qcnt(&p, 0, UROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 0);
	cr_expect_eq(qcnt(&p, 0, UROCE_CNT_RETRANSMITS), 0);
	cr_expect_eq(qcnt(&p, 1, UROCE_CNT_RESP_ACKS_SENT), 4, "one ACK per slow packet");
	for (i = 0; i < 4 * 1024; i++)
		cr_assert_eq(p.buf[1][i], p.buf[0][i]);
	cr_expect(cc_state(p.s[0].qp).limited);
	proto_fini(&p);
}

/* Expect: rate increases from the byte counter keep the pacing schedule:
 * with a clock far from 0 (as a real one is), every packet still waits for
 * its slot at the new, slightly higher rate; none goes early. */
Test(cc, byte_counter_keeps_the_pacing_schedule)
{
	struct sim_qp_opts o = { .psn0 = 0, .timeout = 20 };
	struct uroce_eng_cc_params c;
	struct uroce_eng_cc_state st;
	struct uroce_eng *e;
	struct proto p;
	uint64_t t, prev;
	int i;

	proto_init(&p, &o);
	e = simwire_engine(p.sw, 0);
	simwire_advance(p.sw, 1000000000ull); /* 1000 s of uptime */
	uroce_eng_cc_params_default(&c);
	set_param(&c, "rate_to_set_on_first_cnp", 20);
	set_param(&c, "rpg_min_dec_fac", 100);
	set_param(&c, "rpg_time_reset", 131071);
	set_param(&c, "rpg_byte_reset", 1100); /* an event every other packet */
	cr_assert_eq(uroce_eng_qp_cc_set(p.s[0].qp, &c), 0);
	inj_cnp(&p, 0, 0xFFFF);
	for (i = 0; i < 10; i++)
		post_wr(&p, UROCE_WR_RDMA_WRITE, 0, 1024, 0, (uint64_t)i, 0);
	flush(&p, 0);
	cr_assert_eq(ntx(&p, 0), 1);
	prev = simwire_now(p.sw);
	for (i = 1; i < 10; i++) {
		/* The gap is the last packet's 1098 frame bytes at the rate it
		 * left with, or at the higher rate its byte counter event set. */
		uint32_t lo = (uint32_t)(1098ull * 8000 / cc_state(p.s[0].qp).rate_kbps);

		t = uroce_eng_next_deadline(e);
		cr_expect_geq(t - prev + 1, lo, "packet %d %llu us after the last, want %u", i,
			      (unsigned long long)(t - prev), lo);
		cr_expect_leq(t - prev, 440, "never slower than 20 Mb/s");
		simwire_advance(p.sw, t - simwire_now(p.sw));
		flush(&p, 0);
		cr_assert_eq(ntx(&p, 0), 1u + (uint32_t)i);
		prev = t;
	}
	st = cc_state(p.s[0].qp);
	cr_expect_gt(st.byte_stage, 0);
	cr_expect_gt(st.rate_kbps, 20000, "the byte counter raised the rate");
	proto_fini(&p);
}
