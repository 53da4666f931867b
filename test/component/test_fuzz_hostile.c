/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Randomised hostile peer: tens of thousands of packets that pass lib/wire's
 * validation but carry random opcodes, PSNs, keys, addresses, lengths and
 * syndromes, thrown at both a responder and a requester (whose own READs
 * and atomics are outstanding). Both sides' memory is canary-filled around
 * the registered windows. Checks: no crash (ASan/UBSan in the sanitizer
 * build), not one byte outside a registered window changes, and the QPs
 * recover through RESET whenever the garbage drove them to ERR.
 */

#include "simproto.h"

#define PAGE 4096
#define CANARY 0xA7
#define ROUNDS 100000

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const uint8_t ops[] = {
	UROCE_OP_SEND_FIRST, UROCE_OP_SEND_MIDDLE, UROCE_OP_SEND_LAST,
	UROCE_OP_SEND_LAST_WITH_IMMEDIATE, UROCE_OP_SEND_ONLY, UROCE_OP_SEND_ONLY_WITH_IMMEDIATE,
	UROCE_OP_RDMA_WRITE_FIRST, UROCE_OP_RDMA_WRITE_MIDDLE, UROCE_OP_RDMA_WRITE_LAST,
	UROCE_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE, UROCE_OP_RDMA_WRITE_ONLY,
	UROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE, UROCE_OP_RDMA_READ_REQUEST,
	UROCE_OP_RDMA_READ_RESPONSE_FIRST, UROCE_OP_RDMA_READ_RESPONSE_MIDDLE,
	UROCE_OP_RDMA_READ_RESPONSE_LAST, UROCE_OP_RDMA_READ_RESPONSE_ONLY,
	UROCE_OP_ACKNOWLEDGE, UROCE_OP_ATOMIC_ACKNOWLEDGE, UROCE_OP_COMPARE_SWAP,
	UROCE_OP_FETCH_ADD, UROCE_OP_SEND_LAST_WITH_INVALIDATE,
	UROCE_OP_SEND_ONLY_WITH_INVALIDATE,
};

struct side_mem {
	uint8_t *mem;      /* canary | window | canary */
	struct uroce_eng_mr *mr;
	uint64_t iova;
};

static void
reconnect(struct proto *p)
{
	struct sim_qp_opts o = { .mtu = UROCE_MTU_256, .psn0 = 100, .psn1 = 200, .timeout = 3,
				 .retry_cnt = 7, .rnr_retry = 7 };
	struct uroce_eng_qp_attr a;
	int i;

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RESET;
	for (i = 0; i < 2; i++)
		cr_assert_eq(uroce_eng_modify_qp(p->s[i].qp, &a, UROCE_QP_STATE), 0);
	cr_assert_eq(sim_connect(p->sw, p->s[0].qp, p->s[1].qp, &o), 0);
}

static uint64_t
pick_va(const struct side_mem *m)
{
	switch (rnd() % 6) {
	case 0:
		return m->iova + rnd() % PAGE;
	case 1:
		return m->iova + PAGE - rnd() % 16;
	case 2:
		return m->iova - rnd() % 16;
	case 3:
		return UINT64_MAX - rnd() % 64;
	case 4:
		return m->iova + (rnd() % (PAGE / 8)) * 8;
	default:
		return rnd();
	}
}

Test(fuzz, hostile_packets_never_escape_windows, .timeout = 120)
{
	struct sim_qp_opts o = { .mtu = UROCE_MTU_256, .psn0 = 100, .psn1 = 200, .timeout = 3 };
	struct proto p;
	struct side_mem m[2];
	static uint8_t snap[2][3 * PAGE];
	static uint8_t pay[512];
	uint32_t i, resets = 0, j;
	int s;

	proto_init(&p, &o);
	for (s = 0; s < 2; s++) {
		m[s].mem = malloc(3 * PAGE);
		cr_assert_not_null(m[s].mem);
		memset(m[s].mem, CANARY, 3 * PAGE);
		m[s].iova = 0x100000ull * (s + 1);
		m[s].mr = uroce_eng_mr_reg(p.s[s].pd, m[s].mem + PAGE, m[s].iova, PAGE,
				       UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
				       UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC);
		cr_assert_not_null(m[s].mr);
		memcpy(snap[s], m[s].mem, 3 * PAGE);
	}
	for (i = 0; i < sizeof(pay); i++)
		pay[i] = (uint8_t)rnd();
	for (i = 0; i < ROUNDS; i++) {
		struct uroce_bth_fields b;
		struct uroce_ext_fields e;
		const struct uroce_opcode_info *oi;
		int to = (int)(rnd() & 1);
		uint32_t paylen = 0;

		/* Keep work outstanding so responses meet a live completer,
		 * and receive WQEs so SENDs get placed (inside the window). */
		if (uroce_eng_qp_state(p.s[0].qp) != UROCE_QPS_RTS ||
		    uroce_eng_qp_state(p.s[1].qp) != UROCE_QPS_RTS) {
			reconnect(&p);
			resets++;
		}
		if (i % 16 == 0) {
			for (s = 0; s < 2; s++) {
				struct uroce_wr_sge sge = { m[s].iova + rnd() % 2048, 1024,
							 uroce_eng_mr_lkey(m[s].mr) };
				struct uroce_eng_recv_wr rw = { .sg_list = &sge, .num_sge = 1 };
				struct uroce_eng_send_wr w;

				uroce_eng_post_recv(p.s[s].qp, &rw, NULL);
				memset(&w, 0, sizeof(w));
				w.sg_list = &sge;
				w.num_sge = 1;
				sge.length = 8;
				sge.addr = m[s].iova + (rnd() % 64) * 8;
				w.opcode = rnd() & 1 ? UROCE_WR_RDMA_READ :
						       UROCE_WR_ATOMIC_FETCH_AND_ADD;
				w.wr.rdma.remote_addr = m[1 - s].iova;
				w.wr.rdma.rkey = uroce_eng_mr_rkey(m[1 - s].mr);
				if (w.opcode == UROCE_WR_ATOMIC_FETCH_AND_ADD) {
					w.wr.atomic.remote_addr = m[1 - s].iova + 64;
					w.wr.atomic.rkey = uroce_eng_mr_rkey(m[1 - s].mr);
				}
				uroce_eng_post_send(p.s[s].qp, &w, NULL);
			}
			flush(&p, 0);
			flush(&p, 1);
			simwire_cap_clear(p.sw, 0);
			simwire_cap_clear(p.sw, 1);
		}
		memset(&b, 0, sizeof(b));
		memset(&e, 0, sizeof(e));
		b.opcode = UROCE_OPCODE(UROCE_SVC_RC, ops[rnd() % UROCE_ARRAY_SIZE(ops)]);
		oi = uroce_opcode_get(b.opcode);
		b.pkey = UROCE_DEFAULT_PKEY;
		b.dqpn = uroce_eng_qp_num(p.s[to].qp);
		b.ackreq = rnd() & 1;
		/* PSNs near what each side expects, sometimes anywhere. */
		b.psn = (uint32_t)((rnd() % 4 == 0 ? rnd() : (to ? 100 : 200) + rnd() % 64 - 16) &
				   UROCE_PSN_MASK);
		e.va = pick_va(&m[to]);
		e.rkey = rnd() % 3 ? uroce_eng_mr_rkey(m[to].mr) : (uint32_t)rnd();
		e.dma_len = rnd() % 3 ? (uint32_t)(rnd() % 600) : (uint32_t)rnd();
		e.syndrome = (uint8_t)rnd();
		e.msn = (uint32_t)rnd();
		e.swap_add = rnd();
		e.compare = rnd();
		e.orig = rnd();
		e.imm = (uint32_t)rnd();
		e.inv_rkey = rnd() & 1 ? uroce_eng_mr_rkey(m[to].mr) : (uint32_t)rnd();
		if (oi->mask & UROCE_F_PAYLOAD) {
			if (oi->mask & UROCE_F_FULL_PMTU)
				paylen = rnd() & 1 ? 256 : 512;
			else
				paylen = (uint32_t)(rnd() % 300);
		}
		cr_assert_eq(simwire_inject(p.sw, to, &b, &e, pay, paylen), 0);
		if (i % 8 == 0) {
			simwire_advance(p.sw, rnd() % 100);
			uroce_eng_poll(simwire_engine(p.sw, 0));
			uroce_eng_poll(simwire_engine(p.sw, 1));
		}
		if (i % 512 == 0) {
			simwire_cap_clear(p.sw, 0);
			simwire_cap_clear(p.sw, 1);
			for (s = 0; s < 2; s++) {
				struct uroce_eng_wc wc[64];

				while (uroce_eng_poll_cq(p.s[s].scq, 64, wc) > 0)
					;
				while (uroce_eng_poll_cq(p.s[s].rcq, 64, wc) > 0)
					;
			}
		}
	}
	for (s = 0; s < 2; s++) {
		for (j = 0; j < PAGE; j++) {
			if (m[s].mem[j] != snap[s][j] || m[s].mem[2 * PAGE + j] != snap[s][2 * PAGE + j])
				break;
		}
		cr_expect_eq(j, PAGE, "side %d: a byte outside the window changed", s);
	}
	cr_log_info("fuzz: %u packets, %u reconnects, rx %llu/%llu, remote access NAKs %llu, "
		    "invalid request NAKs %llu", ROUNDS, resets,
		    (unsigned long long)uroce_eng_counter(simwire_engine(p.sw, 0),
							      UROCE_CNT_RX_PACKETS),
		    (unsigned long long)uroce_eng_counter(simwire_engine(p.sw, 1),
							      UROCE_CNT_RX_PACKETS),
		    (unsigned long long)(uroce_eng_counter(simwire_engine(p.sw, 0),
							       UROCE_CNT_RESP_REMOTE_ACCESS_ERRORS) +
					 uroce_eng_counter(simwire_engine(p.sw, 1),
							      UROCE_CNT_RESP_REMOTE_ACCESS_ERRORS)),
		    (unsigned long long)(uroce_eng_counter(simwire_engine(p.sw, 0),
							       UROCE_CNT_RESP_REMOTE_INVALID_REQUEST) +
					 uroce_eng_counter(simwire_engine(p.sw, 1),
							      UROCE_CNT_RESP_REMOTE_INVALID_REQUEST)));
	cr_expect_gt(resets, 0);
	proto_fini(&p);
	free(m[0].mem);
	free(m[1].mem);
}
