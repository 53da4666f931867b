/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * libFuzzer target for lib/cm: the MAD/CM parser and the state machines of
 * the IB CM and the rdma_cm layer. Two ports (A and B, each a uroce_cma with
 * its CM) are joined by a wire the input drives. The input is a stream of
 * records (fuzz_input.h), each a command byte (value % 8):
 *
 *   0 inject   side, length (u16 % 300), that many bytes: a MAD from nowhere
 *   1 deliver  side, mutate offset (u8), mutate value (u8): the oldest MAD
 *              that side sent goes to the other, one byte changed unless the
 *              offset is 0xFF; 0xFE drops it instead
 *   2 time     u16: that many ms pass (x 16), both ports poll
 *   3 id       side, ps (u8 % 3), then an operation on a new id: listen on a
 *              port (u8 % 4), or resolve the other side and its route
 *   4 op       side, id slot (u8 % 16), operation (u8 % 10), u32 argument:
 *              connect, accept, reject, establish, disconnect, notify,
 *              init_qp_attr, query, set_option, destroy
 *   5 answer   side, u8: what its next CONNECT_REQUEST returns (bit 0) and
 *              what its neighbour table says of every next hop from now on
 *              (bits 6-7: known, being resolved, unreachable, table full)
 *   6 pump     deliver everything in flight both ways, unmodified
 *   7 cm       side, an operation straight on the CM of that side's newest
 *              CM id (REQ parameters out of range, SIDR, LAP answers)
 *
 * Checks: ASan/UBSan (every MAD is a malloc of exactly its length), and at
 * the end, with every id destroyed and a day gone by, that no CM id is left
 * (time wait ends, nothing leaks, no timer runs forever).
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "uroce_cma.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SLOTS 16
#define QMAX 64

struct fport {
	struct uroce_cma *cma;
	uint8_t gid[16];
	struct uroce_cma_id *id[SLOTS];
	int answer;
	int hop;                   /* the neighbour table's answer (resolve) */
	struct {
		uint8_t mad[UROCE_MAD_LEN];
	} q[QMAX];
	unsigned int qh, qn;
};

static struct fport P[2];
static uint64_t clk;
static int owner;

static uint64_t
now_us(void *ctx)
{
	(void)ctx;
	return clk;
}

static int
send_mad(void *ctx, const struct uroce_cm_addr *to, const uint8_t *mad)
{
	struct fport *p = ctx;

	(void)to;
	if (p->qn == QMAX)
		return -ENOBUFS;
	memcpy(p->q[(p->qh + p->qn) % QMAX].mad, mad, UROCE_MAD_LEN);
	p->qn++;
	return 0;
}

static void
slot_put(struct fport *p, struct uroce_cma_id *id)
{
	unsigned int i;

	for (i = 0; i < SLOTS; i++)
		if (p->id[i] == NULL) {
			p->id[i] = id;
			return;
		}
	uroce_cma_id_destroy(id); /* no room: the test lets it go at once */
}

static int
on_event(void *ctx, struct uroce_cma_id *id, const struct uroce_cma_event *ev)
{
	struct fport *p = ctx;
	unsigned int i;

	if (ev->type != UROCE_CMA_EV_CONNECT_REQUEST)
		return 0;
	if (p->answer != 0)
		return p->answer;
	uroce_cma_id_set_owner(id, &owner);
	for (i = 0; i < SLOTS; i++)
		if (p->id[i] == NULL) {
			p->id[i] = id;
			return 0;
		}
	return 1; /* no slot: refused, the layer frees it */
}

static int
resolve(void *ctx, const uint8_t gid[16])
{
	(void)gid;
	return ((struct fport *)ctx)->hop;
}

static const struct uroce_cma_ops ops = {now_us, send_mad, on_event, resolve};
static const int hops[4] = {0, -EAGAIN, -EHOSTUNREACH, -ENOSPC};

static void
rx(struct fport *to, const struct fport *from, const uint8_t *mad, uint32_t len)
{
	struct uroce_cm_addr a;
	uint8_t *copy = malloc(len ? len : 1);

	if (copy == NULL)
		return;
	memcpy(copy, mad, len);
	memset(&a, 0, sizeof(a));
	memcpy(a.sgid, to->gid, 16);
	memcpy(a.dgid, from->gid, 16);
	a.remote_qpn = 1;
	a.hop_limit = 64;
	uroce_cma_rx(to->cma, &a, copy, len);
	free(copy);
}

static void
deliver(unsigned int s, uint8_t off, uint8_t val)
{
	struct fport *p = &P[s];
	uint8_t mad[UROCE_MAD_LEN];

	if (p->qn == 0)
		return;
	memcpy(mad, p->q[p->qh].mad, sizeof(mad));
	p->qh = (p->qh + 1) % QMAX;
	p->qn--;
	if (off == 0xFE)
		return;
	if (off != 0xFF)
		mad[off] ^= val | 1;
	rx(&P[s ^ 1], p, mad, sizeof(mad));
}

static void
poll_both(void)
{
	uroce_cma_poll(P[0].cma);
	uroce_cma_poll(P[1].cma);
}

static const uint16_t ps_of[3] = {UROCE_CMA_PS_TCP, UROCE_CMA_PS_UDP, UROCE_CMA_PS_IB};

static void
new_id(struct fin *in, unsigned int s)
{
	struct fport *p = &P[s];
	uint16_t ps = ps_of[fin_u8(in) % 3];
	uint8_t how = fin_u8(in);
	struct uroce_cma_id *id;
	struct uroce_cma_addr a;

	id = uroce_cma_id_create(p->cma, &owner, ps,
				 ps == UROCE_CMA_PS_UDP || (how & 0x80) ? UROCE_QPT_UD : UROCE_QPT_RC);
	if (id == NULL)
		return;
	memset(&a, 0, sizeof(a));
	a.family = 4;
	a.ip[10] = a.ip[11] = 0xff;
	a.port = (uint16_t)(7000 + (how & 3));
	if (how & 0x40) {
		/* a listener on any address */
		if (uroce_cma_bind(id, &a) == 0)
			uroce_cma_listen(id, (how >> 2) & 3);
	} else {
		memcpy(a.ip, P[s ^ 1].gid, 16);
		if (uroce_cma_resolve_addr(id, NULL, &a, 2000) == 0)
			uroce_cma_resolve_route(id);
	}
	slot_put(p, id);
}

static void
op(struct fin *in, unsigned int s)
{
	struct fport *p = &P[s];
	unsigned int slot = fin_u8(in) % SLOTS, what = fin_u8(in) % 10;
	uint32_t arg = fin_u32(in);
	struct uroce_cma_id *id = p->id[slot];
	struct uroce_cma_conn_param cp;
	struct uroce_cm_qp_attr qa;
	struct uroce_cma_route r;
	uint8_t pd[200];
	int mask;

	if (id == NULL)
		return;
	memset(pd, (int)arg, sizeof(pd));
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pd;
	cp.private_data_len = (uint8_t)(arg >> 8);
	cp.responder_resources = (uint8_t)arg;
	cp.initiator_depth = (uint8_t)(arg >> 16);
	cp.retry_count = (uint8_t)(arg >> 24);
	cp.rnr_retry_count = (uint8_t)(arg >> 20);
	cp.qp_num = arg & 0xFFFFFF;
	switch (what) {
	case 0:
		uroce_cma_connect(id, &cp);
		break;
	case 1:
		uroce_cma_accept(id, &cp);
		break;
	case 2:
		uroce_cma_reject(id, pd, (uint8_t)arg, (uint16_t)(arg >> 16));
		break;
	case 3:
		uroce_cma_establish(id);
		break;
	case 4:
		uroce_cma_disconnect(id);
		break;
	case 5:
		uroce_cma_notify(id, (int)(arg & 7));
		break;
	case 6:
		uroce_cma_init_qp_attr(id, (enum uroce_qp_state)(arg % 8), &qa, &mask);
		break;
	case 7:
		uroce_cma_query(id, &r);
		break;
	case 8:
		uroce_cma_set_option(id, (int)(arg & 7), arg >> 8);
		break;
	default:
		uroce_cma_id_destroy(id);
		p->id[slot] = NULL;
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t ga[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 1};
	static const uint8_t gb[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2};
	struct fin in = {data, size};
	struct uroce_cma_conf c;
	unsigned int s, i, steps = 0;
	uint8_t v;

	memset(P, 0, sizeof(P));
	clk = 1000000;
	for (s = 0; s < 2; s++) {
		memset(&c, 0, sizeof(c));
		c.ops = &ops;
		c.ctx = &P[s];
		c.ca_guid = s + 1;
		c.seed = s + 7;
		c.n_gid = 1;
		memcpy(c.gids[0], s ? gb : ga, 16);
		memcpy(P[s].gid, s ? gb : ga, 16);
		c.max_cm_retries = 3;
		P[s].cma = uroce_cma_create(&c);
		if (P[s].cma == NULL)
			abort();
	}
	while (fin_left(&in) && steps++ < 2000) {
		uint8_t cmd = fin_u8(&in) % 8;
		unsigned int side = fin_u8(&in) & 1;

		switch (cmd) {
		case 0: {
			uint8_t mad[300];
			uint16_t len = fin_u16(&in) % 300;

			memset(mad, 0, sizeof(mad));
			fin_bytes(&in, mad, len);
			rx(&P[side], &P[side ^ 1], mad, len);
			break;
		}
		case 1: {
			uint8_t off = fin_u8(&in), val = fin_u8(&in);

			deliver(side, off, val);
			break;
		}
		case 2:
			clk += (uint64_t)fin_u16(&in) * 16000;
			poll_both();
			break;
		case 3:
			new_id(&in, side);
			break;
		case 4:
			op(&in, side);
			break;
		case 5:
			v = fin_u8(&in);
			P[side].answer = v & 1 ? -1 : 0;
			P[side].hop = hops[v >> 6];
			break;
		case 6:
			for (i = 0; i < 2 * QMAX && (P[0].qn || P[1].qn); i++) {
				deliver(0, 0xFF, 0);
				deliver(1, 0xFF, 0);
			}
			break;
		default:
			/* raw CM: a REQ from a bare CM id, fields straight from the input */
			{
				struct uroce_cm_req_param q;
				struct uroce_cm_id *cid = uroce_cm_id_create(uroce_cma_cm(P[side].cma),
									     NULL);
				uint8_t pd[92];

				if (cid == NULL)
					break;
				memset(&q, 0, sizeof(q));
				memcpy(q.addr.sgid, P[side].gid, 16);
				memcpy(q.addr.dgid, P[side ^ 1].gid, 16);
				q.service_id = uroce_cma_service_id(ps_of[fin_u8(&in) % 3],
								    (uint16_t)(7000 + fin_u8(&in) % 4));
				q.qpn = fin_u32(&in) & 0x1FFFFFF;
				q.transport = fin_u8(&in) % 4;
				q.path_mtu = fin_u8(&in) % 7;
				q.max_cm_retries = fin_u8(&in) % 17;
				q.packet_life_time = fin_u8(&in) % 33;
				q.remote_cm_response_timeout = fin_u8(&in) % 33;
				memset(pd, 0, sizeof(pd));
				q.private_data_len = (uint8_t)fin_bytes(&in, pd, fin_u8(&in) % 93);
				q.private_data = pd;
				uroce_cm_send_req(cid, &q);
				/* its owner is gone at once: the CM handles the rest */
				uroce_cm_id_destroy(cid);
			}
			break;
		}
	}
	/* Everything let go; a day later no CM id may be left. */
	for (s = 0; s < 2; s++)
		for (i = 0; i < SLOTS; i++)
			if (P[s].id[i] != NULL)
				uroce_cma_id_destroy(P[s].id[i]);
	for (i = 0; i < 200; i++) {
		for (s = 0; s < 2; s++) {
			deliver(s, 0xFF, 0);
			deliver(s, 0xFF, 0);
		}
		clk += 600ull * 1000000;
		poll_both();
	}
	for (s = 0; s < 2; s++) {
		if (uroce_cma_id_count(P[s].cma) != 0)
			abort();
		/* Ids a REQ or SIDR_REQ made wait for their owner: none is left
		 * (each was refused or handed over and destroyed above). */
		if (uroce_cm_id_count(uroce_cma_cm(P[s].cma)) != 0)
			abort();
		uroce_cma_destroy(P[s].cma);
	}
	return 0;
}
