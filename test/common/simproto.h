/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Helpers shared by the protocol tests: a connected RC pair on the simulated
 * wire with both sides capturing, so a test injects packets into one side
 * and asserts on what that side sent (the `Expect:` steps).
 */

#ifndef TEST_TRANSPORT_PROTO_H
#define TEST_TRANSPORT_PROTO_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "simwire.h"

#define PBUF (64 * 1024)
#define IOVA(side) (0x40000000ull * ((side) + 1))

struct proto {
	struct simwire *sw;
	struct sim_side s[2];
	uint8_t *buf[2];
	struct uroce_eng_mr *mr[2];
	uint32_t mtu;
};

static inline void
proto_init(struct proto *p, const struct sim_qp_opts *o)
{
	int i;

	memset(p, 0, sizeof(*p));
	p->sw = simwire_create(NULL);
	cr_assert_not_null(p->sw);
	cr_assert_eq(sim_pair_create(p->sw, p->s, o, 64, 256), 0);
	for (i = 0; i < 2; i++) {
		p->buf[i] = calloc(1, PBUF);
		p->mr[i] = uroce_eng_mr_reg(p->s[i].pd, p->buf[i], IOVA(i), PBUF,
					UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
					UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC);
		cr_assert_not_null(p->mr[i]);
		simwire_set_capture(p->sw, i, true);
	}
	p->mtu = uroce_mtu_bytes((uint8_t)(o->mtu ? o->mtu : UROCE_MTU_1024));
}

static inline void
proto_fini(struct proto *p)
{
	simwire_destroy(p->sw);
	free(p->buf[0]);
	free(p->buf[1]);
}

/* Inject an RC packet into side @to, addressed to its QP. */
static inline void
inj(struct proto *p, int to, uint8_t op, uint32_t psn, bool ackreq,
    const struct uroce_ext_fields *ext, const void *pay, uint32_t len)
{
	struct uroce_bth_fields b;

	memset(&b, 0, sizeof(b));
	b.opcode = UROCE_OPCODE(UROCE_SVC_RC, op);
	b.pkey = UROCE_DEFAULT_PKEY;
	b.dqpn = uroce_eng_qp_num(p->s[to].qp);
	b.psn = psn;
	b.ackreq = ackreq;
	cr_assert_eq(simwire_inject(p->sw, to, &b, ext, pay, len), 0, "inject op %#x", op);
}

/* Let @side's engine send what it has queued (ACKs, responses, requests). */
static inline void
flush(struct proto *p, int side)
{
	while (uroce_eng_poll(simwire_engine(p->sw, side)) != 0)
		;
}

static inline uint32_t
ntx(struct proto *p, int side)
{
	return simwire_ncap(p->sw, side);
}

static inline const struct uroce_pkt *
tx(struct proto *p, int side, uint32_t i)
{
	const struct sim_cap *c = simwire_cap(p->sw, side, i);

	cr_assert_not_null(c, "no packet %u from side %d", i, side);
	return &c->p;
}

static inline uint8_t
tx_syndrome(const struct uroce_pkt *k)
{
	return uroce_aeth_syndrome(k->bth + k->info->off_aeth);
}

/* Assert packet @i of @side is an ACK-family packet with this syndrome type. */
static inline void
expect_ack(struct proto *p, int side, uint32_t i, enum uroce_aeth_type type, uint8_t value,
	   uint32_t psn)
{
	const struct uroce_pkt *k = tx(p, side, i);

	cr_expect_eq(k->opcode & 0x1F, UROCE_OP_ACKNOWLEDGE, "pkt %u opcode %#x", i, k->opcode);
	cr_expect_eq(uroce_aeth_type(tx_syndrome(k)), type, "pkt %u syndrome %#x", i,
		     tx_syndrome(k));
	if (type != UROCE_AETH_ACK)
		cr_expect_eq(uroce_aeth_value(tx_syndrome(k)), value, "pkt %u syndrome %#x", i,
			     tx_syndrome(k));
	cr_expect_eq(k->psn, psn, "pkt %u psn %#x want %#x", i, k->psn, psn);
}

static inline void
post_recv_buf(struct proto *p, int side, uint32_t off, uint32_t len, uint64_t id)
{
	struct uroce_wr_sge sge = { IOVA(side) + off, len, uroce_eng_mr_lkey(p->mr[side]) };
	struct uroce_eng_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };

	cr_assert_eq(uroce_eng_post_recv(p->s[side].qp, &wr, NULL), 0);
}

/* Post one WR from side 0's buffer to side 1's on @p qp, with exactly
 * @p flags; the post's return code. */
static inline int
post_wr_qp(struct proto *p, struct uroce_eng_qp *qp, enum uroce_wr_opcode op, uint32_t loff,
	   uint32_t len, uint32_t roff, uint64_t id, unsigned int flags)
{
	struct uroce_wr_sge sge = { IOVA(0) + loff, len, uroce_eng_mr_lkey(p->mr[0]) };
	struct uroce_eng_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = flags;
	if (op == UROCE_WR_ATOMIC_FETCH_AND_ADD || op == UROCE_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = IOVA(1) + roff;
		wr.wr.atomic.rkey = uroce_eng_mr_rkey(p->mr[1]);
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = IOVA(1) + roff;
		wr.wr.rdma.rkey = uroce_eng_mr_rkey(p->mr[1]);
	}
	return uroce_eng_post_send(qp, &wr, NULL);
}

/* A signaled WR on side 0's QP, which must be taken. */
static inline void
post_wr(struct proto *p, enum uroce_wr_opcode op, uint32_t loff, uint32_t len, uint32_t roff,
	uint64_t id, unsigned int flags)
{
	cr_assert_eq(post_wr_qp(p, p->s[0].qp, op, loff, len, roff, id,
				flags | UROCE_SEND_SIGNALED), 0);
}

/* A UD pair, Q_Key 0x1234 on both sides. */
static inline void
ud_pair(struct proto *p)
{
	struct sim_qp_opts o = { .type = UROCE_QPT_UD, .qkey = 0x1234 };

	proto_init(p, &o);
}

/* A signaled UD SEND with immediate of @p len bytes from side 0's buffer to
 * side 1's QP @p to, with Q_Key @p qkey. */
static inline void
post_ud_to(struct proto *p, struct uroce_eng_ah *ah, struct uroce_eng_qp *to, uint32_t len,
	   uint32_t qkey, uint64_t id)
{
	struct uroce_wr_sge sge = { IOVA(0), len, uroce_eng_mr_lkey(p->mr[0]) };
	struct uroce_eng_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = UROCE_WR_SEND_WITH_IMM;
	wr.imm_data = 0x77;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = uroce_eng_qp_num(to);
	wr.wr.ud.remote_qkey = qkey;
	cr_assert_eq(uroce_eng_post_send(p->s[0].qp, &wr, NULL), 0);
}

/* post_ud_to() side 1's QP of the pair. */
static inline void
post_ud(struct proto *p, struct uroce_eng_ah *ah, uint32_t len, uint32_t qkey, uint64_t id)
{
	post_ud_to(p, ah, p->s[1].qp, len, qkey, id);
}

/* Side 0's address handle for side 1's GID. */
static inline struct uroce_eng_ah *
ud_ah(struct proto *p)
{
	struct uroce_eng_ah_attr aa;
	struct uroce_eng_ah *ah;

	memset(&aa, 0, sizeof(aa));
	memcpy(aa.dgid, simwire_gid(p->sw, 1), 16);
	aa.hop_limit = 64;
	ah = uroce_eng_ah_create(p->s[0].pd, &aa);
	cr_assert_not_null(ah);
	return ah;
}

#endif
