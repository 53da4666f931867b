/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Requester protocol tests (lib/transport/req.c): segmentation, PSNs,
 * AckReq, READ PSN consumption, max_rd_atomic and fences. Side 0 is the
 * requester under test; its packets are captured and checked.
 */

#include "simproto.h"

#define Q 0 /* requester side */

static const enum uroce_mtu mtus[] = {
	UROCE_MTU_256, UROCE_MTU_512, UROCE_MTU_1024, UROCE_MTU_2048, UROCE_MTU_4096,
};

/* IBA 9.7.1 / 9.2.1: segmentation by path MTU, consecutive PSNs, opcodes
 * FIRST/MIDDLE/LAST/ONLY, sizes 0, 1, MTU-1, MTU, MTU+1, 2 MTU, large. */
Test(req, segmentation_every_mtu_and_size)
{
	unsigned int m, k;

	for (m = 0; m < UROCE_ARRAY_SIZE(mtus); m++) {
		struct sim_qp_opts o = { .mtu = mtus[m], .psn0 = 0xFFFFF0 };
		struct proto p;
		uint32_t mtu, sz[7], psn = 0xFFFFF0;

		proto_init(&p, &o);
		mtu = p.mtu;
		sz[0] = 0, sz[1] = 1, sz[2] = mtu - 1, sz[3] = mtu, sz[4] = mtu + 1;
		sz[5] = 2 * mtu, sz[6] = 9 * mtu + 3;
		for (k = 0; k < 7; k++) {
			uint32_t n = uroce_num_pkts(sz[k], mtu), i, got = 0;

			simwire_cap_clear(p.sw, Q);
			post_wr(&p, UROCE_WR_RDMA_WRITE, 0, sz[k], 0, k, 0);
			flush(&p, Q);
			/* Expect: n packets, PSN psn.., opcodes by position. */
			cr_assert_eq(ntx(&p, Q), n, "mtu %u size %u", mtu, sz[k]);
			for (i = 0; i < n; i++) {
				const struct uroce_pkt *t = tx(&p, Q, i);
				uint8_t want = n == 1 ? UROCE_OP_RDMA_WRITE_ONLY :
					       i == 0 ? UROCE_OP_RDMA_WRITE_FIRST :
					       i == n - 1 ? UROCE_OP_RDMA_WRITE_LAST :
							    UROCE_OP_RDMA_WRITE_MIDDLE;

				cr_expect_eq(t->opcode, want, "mtu %u size %u pkt %u", mtu, sz[k],
					     i);
				cr_expect_eq(t->psn, uroce_psn_add(psn, i));
				cr_expect_eq(t->paylen, i < n - 1 ? mtu : sz[k] - (n - 1) * mtu);
				/* IBA 9.7.2: AckReq on the last packet. */
				cr_expect_eq(uroce_bth_ackreq(t->bth), i == n - 1);
				got += t->paylen;
			}
			cr_expect_eq(got, sz[k]);
			/* ACK it all so the next message starts clean. */
			psn = uroce_psn_add(psn, n);
			inj(&p, Q, UROCE_OP_ACKNOWLEDGE, uroce_psn_add(psn, UROCE_PSN_MASK), false,
			    &(struct uroce_ext_fields){ .syndrome = UROCE_AETH_ACK_NO_CREDIT },
			    NULL, 0);
		}
		proto_fini(&p);
	}
}

/* IBA 9.7.1: one message spans at most 2^22 PSNs (a quarter of the PSN
 * space), so at a 256-byte path MTU the post of 1 GiB + 1 byte is refused
 * and 1 GiB is taken (the post does not check the key's range; the WQE would
 * fail when it runs). The engine says -EMSGSIZE; eng_post.c reports it as
 * -EINVAL, as ibv_post_send() does. */
Test(req, message_spans_at_most_2_22_psns)
{
	struct sim_qp_opts o = { .mtu = UROCE_MTU_256 };
	struct proto p;
	int rc;

	proto_init(&p, &o);
	cr_assert_eq(p.mtu, 256);
	/* Expect: 2^22 * 256 + 1 bytes would take 2^22 + 1 PSNs. */
	rc = post_wr_qp(&p, p.s[0].qp, UROCE_WR_RDMA_WRITE, 0, (1u << 30) + 1, 0, 0, 0);
	cr_expect_eq(rc, -EINVAL, "1 GiB + 1: %d", rc);
	/* Expect: 2^22 * 256 bytes is accepted. */
	rc = post_wr_qp(&p, p.s[0].qp, UROCE_WR_RDMA_WRITE, 0, 1u << 30, 0, 0, 0);
	cr_expect_eq(rc, 0, "1 GiB: %d", rc);
	proto_fini(&p);
}

/* IBA 9.7.2: AckReq also periodically inside a long message. */
Test(req, periodic_ackreq)
{
	struct sim_qp_opts o = { .mtu = UROCE_MTU_256 };
	struct proto p;
	uint32_t i, n = 2 * UROCE_ACKREQ_INTERVAL + 5;

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_SEND, 0, n * 256, 0, 1, 0);
	flush(&p, Q);
	cr_assert_eq(ntx(&p, Q), n);
	for (i = 0; i < n; i++) {
		bool want = (i + 1) % UROCE_ACKREQ_INTERVAL == 0 || i == n - 1;

		cr_expect_eq(uroce_bth_ackreq(tx(&p, Q, i)->bth), want, "pkt %u", i);
	}
	proto_fini(&p);
}

/* IBA 9.7.4.1.3: a READ request consumes one PSN per response packet. */
Test(req, read_consumes_response_psns)
{
	struct sim_qp_opts o = { .mtu = UROCE_MTU_1024, .psn0 = 0xFFFFFE };
	struct proto p;
	const struct uroce_pkt *t;

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_RDMA_READ, 0, 3 * 1024 + 1, 0, 1, 0);
	post_wr(&p, UROCE_WR_SEND, 0, 10, 0, 2, 0);
	flush(&p, Q);
	/* Expect: READ request at 0xFFFFFE (4 PSNs), SEND at 0xFFFFFE + 4 = 2. */
	cr_assert_eq(ntx(&p, Q), 2);
	t = tx(&p, Q, 0);
	cr_expect_eq(t->opcode, UROCE_OP_RDMA_READ_REQUEST);
	cr_expect_eq(t->psn, 0xFFFFFE);
	cr_expect_eq(uroce_reth_dma_len(t->bth + t->info->off_reth), 3 * 1024 + 1);
	cr_expect_eq(tx(&p, Q, 1)->psn, 2);
	proto_fini(&p);
}

/* IBA 9.7.4.1.x: never more than max_rd_atomic READ/ATOMIC outstanding. */
Test(req, max_rd_atomic_limits_outstanding)
{
	struct sim_qp_opts o = { .max_rd_atomic = 2, .psn0 = 0 };
	struct proto p;
	struct uroce_ext_fields e = { .syndrome = UROCE_AETH_ACK_NO_CREDIT };
	uint8_t d[8] = { 0 };

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_RDMA_READ, 0, 8, 0, 1, 0);
	post_wr(&p, UROCE_WR_ATOMIC_FETCH_AND_ADD, 8, 8, 0, 2, 0);
	post_wr(&p, UROCE_WR_RDMA_READ, 16, 8, 0, 3, 0);
	flush(&p, Q);
	/* Expect: two requests only. */
	cr_assert_eq(ntx(&p, Q), 2);
	/* The first READ completes: Expect: the third request goes out. */
	inj(&p, Q, UROCE_OP_RDMA_READ_RESPONSE_ONLY, 0, false, &e, d, 8);
	flush(&p, Q);
	cr_assert_eq(ntx(&p, Q), 3);
	cr_expect_eq(tx(&p, Q, 2)->opcode, UROCE_OP_RDMA_READ_REQUEST);
	cr_expect_eq(tx(&p, Q, 2)->psn, 2);
	proto_fini(&p);
}

/* IBA 10.8.3.3 fence: a fenced WR waits for prior READ/ATOMIC to complete. */
Test(req, fence_waits_for_reads)
{
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	struct uroce_ext_fields e = { .syndrome = UROCE_AETH_ACK_NO_CREDIT };
	uint8_t d[8] = { 0 };

	proto_init(&p, &o);
	post_wr(&p, UROCE_WR_RDMA_READ, 0, 8, 0, 1, 0);
	post_wr(&p, UROCE_WR_SEND, 0, 8, 0, 2, UROCE_SEND_FENCE);
	flush(&p, Q);
	/* Expect: only the READ. */
	cr_assert_eq(ntx(&p, Q), 1);
	inj(&p, Q, UROCE_OP_RDMA_READ_RESPONSE_ONLY, 0, false, &e, d, 8);
	flush(&p, Q);
	/* Expect: the fenced SEND after the READ completed. */
	cr_assert_eq(ntx(&p, Q), 2);
	cr_expect_eq(tx(&p, Q, 1)->opcode, UROCE_OP_SEND_ONLY);
	proto_fini(&p);
}

/* Every WR opcode produces its wire opcode(s). */
Test(req, every_opcode_on_the_wire)
{
	static const struct {
		enum uroce_wr_opcode op;
		uint8_t wire;
	} t[] = {
		{ UROCE_WR_SEND, UROCE_OP_SEND_ONLY },
		{ UROCE_WR_SEND_WITH_IMM, UROCE_OP_SEND_ONLY_WITH_IMMEDIATE },
		{ UROCE_WR_SEND_WITH_INV, UROCE_OP_SEND_ONLY_WITH_INVALIDATE },
		{ UROCE_WR_RDMA_WRITE, UROCE_OP_RDMA_WRITE_ONLY },
		{ UROCE_WR_RDMA_WRITE_WITH_IMM, UROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE },
		{ UROCE_WR_RDMA_READ, UROCE_OP_RDMA_READ_REQUEST },
		{ UROCE_WR_ATOMIC_CMP_AND_SWP, UROCE_OP_COMPARE_SWAP },
		{ UROCE_WR_ATOMIC_FETCH_AND_ADD, UROCE_OP_FETCH_ADD },
	};
	struct sim_qp_opts o = { .psn0 = 0 };
	struct proto p;
	unsigned int i;

	proto_init(&p, &o);
	for (i = 0; i < UROCE_ARRAY_SIZE(t); i++)
		post_wr(&p, t[i].op, 0, 8, 0, i, 0);
	flush(&p, Q);
	cr_assert_eq(ntx(&p, Q), UROCE_ARRAY_SIZE(t));
	for (i = 0; i < UROCE_ARRAY_SIZE(t); i++) {
		cr_expect_eq(tx(&p, Q, i)->opcode, t[i].wire, "wr %u", i);
		cr_expect_eq(tx(&p, Q, i)->psn, i);
	}
	proto_fini(&p);
}

/* The address vector reaches the wire: GID, traffic class, hop limit, flow
 * label, and the UDP source port derived from the flow label; changed on the
 * fly through SQD→SQD (IBA 11.2.5.2 allows AV there). RoCEv2 over IPv6. */
Test(req, address_vector_on_the_wire)
{
	struct simwire_conf wc = { .seed = 1, .ipv6 = true };
	struct sim_qp_opts o = { .psn0 = 0 };
	struct simwire *sw = simwire_create(&wc);
	struct sim_side s[2];
	struct uroce_eng_qp_attr a;
	struct uroce_eng_send_wr wr;
	const struct sim_cap *c;

	cr_assert_not_null(sw);
	cr_assert_eq(sim_pair_create(sw, s, &o, 8, 16), 0);
	simwire_set_capture(sw, 0, true);
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_SQD;
	cr_assert_eq(uroce_eng_modify_qp(s[0].qp, &a, UROCE_QP_STATE), 0);
	memcpy(a.ah_attr.dgid, simwire_gid(sw, 1), 16);
	a.ah_attr.tclass = 0x68;
	a.ah_attr.hop_limit = 7;
	a.ah_attr.flow_label = 0x12345;
	cr_assert_eq(uroce_eng_modify_qp(s[0].qp, &a, UROCE_QP_STATE | UROCE_QP_AV), 0);
	a.qp_state = UROCE_QPS_RTS;
	cr_assert_eq(uroce_eng_modify_qp(s[0].qp, &a, UROCE_QP_STATE), 0);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = UROCE_WR_SEND;
	cr_assert_eq(uroce_eng_post_send(s[0].qp, &wr, NULL), 0);
	uroce_eng_poll(simwire_engine(sw, 0));
	cr_assert_eq(simwire_ncap(sw, 0), 1);
	c = simwire_cap(sw, 0, 0);
	/* Expect: IPv6 frame from GID 0 to GID 1 with the AV's fields. */
	cr_expect_eq(c->f.family, UROCE_IP_V6);
	cr_expect_eq(memcmp(c->f.sgid, simwire_gid(sw, 0), 16), 0);
	cr_expect_eq(memcmp(c->f.dgid, simwire_gid(sw, 1), 16), 0);
	/* DSCP 26 from the AV; no ECN bits there, so the port's default
	 * ECT(0) (doc/congestion.md, "Marking"). */
	cr_expect_eq(c->f.tclass, 0x6A);
	cr_expect_eq(c->f.hop_limit, 7);
	cr_expect_eq(c->f.flow_label, 0x12345);
	cr_expect_eq(c->f.sport, uroce_udp_sport(0x12345, uroce_eng_qp_num(s[0].qp),
						 uroce_eng_qp_num(s[1].qp)));
	cr_expect_eq(c->f.dport, UROCE_UDP_PORT);
	cr_expect_eq(c->p.dqpn, uroce_eng_qp_num(s[1].qp));
	simwire_destroy(sw);
}
