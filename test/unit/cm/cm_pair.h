/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Two CMs for the lib/cm tests: A (active) and B (passive), joined by a wire
 * the test drives MAD by MAD (each side's sends are captured; the test
 * delivers, drops or forges them), on a fake clock. Included by one test
 * file each (everything is static).
 */

#ifndef CM_PAIR_H
#define CM_PAIR_H

#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "uroce_cm.h"

#define MAXQ 64
#define MAXEV 64

struct side {
	struct uroce_cm *cm;
	uint8_t q[MAXQ][UROCE_MAD_LEN];  /* what it sent */
	struct uroce_cm_addr to[MAXQ];
	unsigned int nq, rd;             /* sent, delivered or dropped so far */
	struct {
		enum uroce_cm_event_type type;
		struct uroce_cm_id *id;
		struct uroce_cm_msg msg;
		bool has_msg;
	} ev[MAXEV];
	unsigned int nev;
	int req_answer;                  /* what REQ_RECEIVED returns */
	uint8_t ari[16];
	uint8_t ari_len;
	struct uroce_cm_id *last_new;    /* the last id a REQ or SIDR_REQ made */
	int fail_send;                   /* the next sends fail with -ENOBUFS */
};

static struct side A, B;
static uint64_t clk_us;

static const uint8_t gid_a[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 1};
static const uint8_t gid_b[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2};
static int owner_tag;

static inline uint64_t
now_us(void *ctx)
{
	(void)ctx;
	return clk_us;
}

static inline int
send_mad(void *ctx, const struct uroce_cm_addr *to, const uint8_t *mad)
{
	struct side *s = ctx;

	if (s->fail_send > 0) {
		s->fail_send--;
		return -ENOBUFS;
	}
	cr_assert_lt(s->nq, MAXQ, "too many MADs");
	memcpy(s->q[s->nq], mad, UROCE_MAD_LEN);
	s->to[s->nq] = *to;
	s->nq++;
	return 0;
}

static inline int
on_event(void *ctx, struct uroce_cm_id *id, const struct uroce_cm_event *ev)
{
	struct side *s = ctx;

	cr_assert_lt(s->nev, MAXEV);
	s->ev[s->nev].type = ev->type;
	s->ev[s->nev].id = id;
	s->ev[s->nev].has_msg = ev->msg != NULL;
	if (ev->msg != NULL)
		s->ev[s->nev].msg = *ev->msg;
	s->nev++;
	if (ev->type == UROCE_CM_EV_REQ_RECEIVED || ev->type == UROCE_CM_EV_SIDR_REQ_RECEIVED) {
		s->last_new = id;
		if (s->req_answer == 0)
			uroce_cm_id_set_context(id, &owner_tag);
		if (s->ari_len > 0) {
			memcpy(ev->ari, s->ari, s->ari_len);
			*ev->ari_len = s->ari_len;
		}
		return s->req_answer;
	}
	return 0;
}

static const struct uroce_cm_ops ops = {
	.now_us = now_us,
	.send = send_mad,
	.event = on_event,
};

static inline void
cm_pair_setup(void)
{
	struct uroce_cm_conf c;

	memset(&A, 0, sizeof(A));
	memset(&B, 0, sizeof(B));
	clk_us = 1000000;
	memset(&c, 0, sizeof(c));
	c.ops = &ops;
	c.ctx = &A;
	c.ca_guid = 0xA0A0A0A0A0A0A0A0ull;
	c.seed = 1;
	A.cm = uroce_cm_create(&c);
	c.ctx = &B;
	c.ca_guid = 0xB0B0B0B0B0B0B0B0ull;
	c.seed = 2;
	B.cm = uroce_cm_create(&c);
	cr_assert(A.cm != NULL && B.cm != NULL);
}

static inline void
cm_pair_teardown(void)
{
	uroce_cm_destroy(A.cm);
	uroce_cm_destroy(B.cm);
}

static inline struct side *
peer(struct side *s)
{
	return s == &A ? &B : &A;
}

static inline unsigned int
pending(const struct side *s)
{
	return s->nq - s->rd;
}

/* The next undelivered MAD of @p s, decoded. */
static inline struct uroce_cm_msg
peek(struct side *s)
{
	struct uroce_cm_msg m;

	cr_assert_gt(pending(s), 0, "nothing sent");
	cr_assert_eq(uroce_cm_msg_decode(s->q[s->rd], UROCE_MAD_LEN, &m), 0);
	return m;
}

/* Deliver the next MAD @p s sent to its peer, checking its attribute. */
static inline struct uroce_cm_msg
deliver(struct side *s, uint16_t attr)
{
	struct uroce_cm_msg m = peek(s);
	struct uroce_cm_addr from;

	cr_assert_eq(m.hdr.attr_id, attr, "expected %s, got %s", uroce_cm_attr_name(attr),
		     uroce_cm_attr_name(m.hdr.attr_id));
	/* The receiver sees its own GID as sgid and the sender's as dgid. */
	memset(&from, 0, sizeof(from));
	memcpy(from.sgid, s == &A ? gid_b : gid_a, 16);
	memcpy(from.dgid, s == &A ? gid_a : gid_b, 16);
	from.remote_qpn = 1;
	from.pkey = 0xFFFF;
	from.hop_limit = 64;
	uroce_cm_rx(peer(s)->cm, &from, s->q[s->rd], UROCE_MAD_LEN);
	s->rd++;
	return m;
}

static inline struct uroce_cm_msg
drop(struct side *s, uint16_t attr)
{
	struct uroce_cm_msg m = peek(s);

	cr_assert_eq(m.hdr.attr_id, attr, "expected %s, got %s", uroce_cm_attr_name(attr),
		     uroce_cm_attr_name(m.hdr.attr_id));
	s->rd++;
	return m;
}

/* Inject a forged message into @p to's CM, as if from its peer. */
static inline void
inject(struct side *to, struct uroce_cm_msg *m, uint16_t attr)
{
	uint8_t mad[UROCE_MAD_LEN];
	struct uroce_cm_addr from;

	m->hdr.attr_id = attr;
	cr_assert_eq(uroce_cm_msg_encode(m, mad), 0);
	memset(&from, 0, sizeof(from));
	memcpy(from.sgid, to == &A ? gid_a : gid_b, 16);
	memcpy(from.dgid, to == &A ? gid_b : gid_a, 16);
	from.remote_qpn = 1;
	uroce_cm_rx(to->cm, &from, mad, UROCE_MAD_LEN);
}

static inline void
expect_event(struct side *s, unsigned int i, enum uroce_cm_event_type t)
{
	cr_assert_gt(s->nev, i, "event %u (%s) missing", i, uroce_cm_event_name(t));
	cr_expect_eq(s->ev[i].type, t, "event %u: %s, expected %s", i,
		     uroce_cm_event_name(s->ev[i].type), uroce_cm_event_name(t));
}

/* Move the fake clock and run the timers. */
static inline unsigned int
advance_ms(uint64_t ms)
{
	clk_us += ms * 1000;
	return uroce_cm_poll(A.cm) + uroce_cm_poll(B.cm);
}

static inline uint64_t
cnt(struct side *s, enum uroce_cm_counter c)
{
	return uroce_cm_counter(s->cm, c);
}

/* An rping-like REQ from A to B. */
static inline void
req_param(struct uroce_cm_req_param *p, uint32_t qpn, uint8_t retries)
{
	static const uint8_t pd[4] = {1, 2, 3, 4};

	memset(p, 0, sizeof(*p));
	memcpy(p->addr.sgid, gid_a, 16);
	memcpy(p->addr.dgid, gid_b, 16);
	p->addr.flow_label = 0x98F17;
	p->addr.hop_limit = 64;
	p->service_id = 0x0000000001064853ull;
	p->qpn = qpn;
	p->transport = UROCE_CM_TRANSPORT_RC;
	p->starting_psn = 0xD4FEAC;
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
	p->path_mtu = UROCE_MTU_1024;
	p->packet_life_time = 16;
	p->remote_cm_response_timeout = 20;
	p->local_cm_response_timeout = 20;
	p->max_cm_retries = retries;
	p->private_data = pd;
	p->private_data_len = sizeof(pd);
}

static inline void
rep_param(struct uroce_cm_rep_param *p, uint32_t qpn)
{
	memset(p, 0, sizeof(*p));
	p->qpn = qpn;
	p->starting_psn = 0x54C4C2;
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->rnr_retry_count = 7;
}

/* A connects to B up to B's REQ_RCVD. @return A's id (B's is B.last_new). */
static inline struct uroce_cm_id *
to_req_rcvd(uint32_t qpn, uint8_t retries)
{
	struct uroce_cm_req_param p;
	struct uroce_cm_id *a = uroce_cm_id_create(A.cm, &owner_tag);

	req_param(&p, qpn, retries);
	cr_assert_eq(uroce_cm_send_req(a, &p), 0);
	cr_assert_eq(uroce_cm_id_state(a), UROCE_CM_REQ_SENT);
	deliver(&A, UROCE_CM_ATTR_REQ);
	cr_assert_not_null(B.last_new);
	cr_assert_eq(uroce_cm_id_state(B.last_new), UROCE_CM_REQ_RCVD);
	return a;
}

/* A whole connection: REQ, REP, RTU. */
static inline struct uroce_cm_id *
connect_ab(uint32_t qpn, uint8_t retries)
{
	struct uroce_cm_rep_param rp;
	struct uroce_cm_id *a = to_req_rcvd(qpn, retries);

	rep_param(&rp, qpn + 0x100);
	cr_assert_eq(uroce_cm_send_rep(B.last_new, &rp), 0);
	deliver(&B, UROCE_CM_ATTR_REP);
	cr_assert_eq(uroce_cm_id_state(a), UROCE_CM_REP_RCVD);
	cr_assert_eq(uroce_cm_send_rtu(a, NULL, 0), 0);
	deliver(&A, UROCE_CM_ATTR_RTU);
	cr_assert_eq(uroce_cm_id_state(a), UROCE_CM_ESTABLISHED);
	cr_assert_eq(uroce_cm_id_state(B.last_new), UROCE_CM_ESTABLISHED);
	return a;
}

#endif /* CM_PAIR_H */
