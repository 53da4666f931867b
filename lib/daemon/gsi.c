/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * QP1, the General Services Interface (IBA 13.5.1), on worker 0.
 *
 * QP1 is a UD QP of worker 0's engine (uroce_eng_qp_create_gsi(), QPN 1,
 * Q_Key 0x80010000, IBA 10.2.5), so the engine does what IBA asks of any UD
 * QP: the P_Key and Q_Key checks (a wrong Q_Key is dropped and counted,
 * C10-15), the GRH in front of every receive (here RoCEv2's IP header,
 * where the peer's GID and traffic class come from), PSNs and the DETH of
 * what it sends. Its buffers are one daemon MR: receive slots of GRH + MAD
 * and send slots of one MAD.
 *
 * The MADs themselves are the control thread's (the CM runs there): worker
 * 0 hands each received MAD, with its address, to the control thread
 * through the "up" ring and sends what the control thread puts in the
 * "down" ring. Each ring has one producer and one consumer: the producer
 * writes a record, then publishes its tail (release); the consumer reads the
 * tail (acquire), the record, then publishes its head (release), which
 * gives the slot back.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_common.h"
#include "uroce_transport.h"

#include "core.h"
#include "worker.h"
#include "dcm.h"

#define GSI_RX_SLOTS 64u
#define GSI_TX_SLOTS 64u
#define GSI_RING 256u              /* records each way, a power of two */
#define GSI_RX_LEN (UROCE_GRH_LEN + UROCE_MAD_LEN)
#define GSI_WR_RX (1ull << 32)     /* wr_id tag of a receive slot */

struct gsi_rec {
	struct uroce_cm_addr addr;
	uint8_t mad[UROCE_MAD_LEN];
};

struct gsi_ring {
	uint32_t tail __attribute__((aligned(DAEMON_CACHE_LINE))); /* producer's */
	uint32_t head __attribute__((aligned(DAEMON_CACHE_LINE))); /* consumer's */
	struct gsi_rec rec[GSI_RING] __attribute__((aligned(DAEMON_CACHE_LINE)));
};

struct dgsi {
	struct dworker *w;
	struct uroce_eng_pd *pd;
	struct uroce_eng_mr *mr;
	struct uroce_eng_cq *cq;
	struct uroce_eng_qp *qp;
	uint8_t *mem;                  /* RX slots, then TX slots */
	uint32_t lkey;
	/* worker 0 */
	uint32_t repost[GSI_RX_SLOTS];
	unsigned int n_repost;
	uint32_t tx_free[GSI_TX_SLOTS];
	unsigned int n_tx_free;
	uint64_t cnt[DCM_CNT_MAX];     /* written by worker 0, read relaxed */
	struct gsi_ring up;            /* worker 0 → control thread */
	struct gsi_ring down;          /* control thread → worker 0 */
};

static uint8_t *
rx_buf(struct dgsi *g, uint32_t slot)
{
	return g->mem + (size_t)slot * GSI_RX_LEN;
}

static uint8_t *
tx_buf(struct dgsi *g, uint32_t slot)
{
	return g->mem + (size_t)GSI_RX_SLOTS * GSI_RX_LEN + (size_t)slot * UROCE_MAD_LEN;
}

static void
cnt_add(struct dgsi *g, enum dcm_counter c)
{
	__atomic_store_n(&g->cnt[c], g->cnt[c] + 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------ */
/* Rings                                                                     */
/* ------------------------------------------------------------------------ */

static struct gsi_rec *
ring_slot_free(struct gsi_ring *r)
{
	uint32_t t = r->tail;

	if (t - __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) >= GSI_RING)
		return NULL;
	return &r->rec[t & (GSI_RING - 1)];
}

static void
ring_publish(struct gsi_ring *r)
{
	__atomic_store_n(&r->tail, r->tail + 1, __ATOMIC_RELEASE);
}

static struct gsi_rec *
ring_peek(struct gsi_ring *r)
{
	uint32_t h = r->head;

	if (h == __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE))
		return NULL;
	return &r->rec[h & (GSI_RING - 1)];
}

static void
ring_pop(struct gsi_ring *r)
{
	__atomic_store_n(&r->head, r->head + 1, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------------ */
/* Worker 0                                                                  */
/* ------------------------------------------------------------------------ */

/* The sender's address from the GRH the engine wrote (RoCEv2: its IP header). */
static void
grh_addr(const uint8_t *grh, uint32_t src_qp, struct uroce_cm_addr *a)
{
	static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	memset(a, 0, sizeof(*a));
	if ((grh[0] >> 4) == 6) {
		uint32_t w = uroce_get_be32(grh);

		a->tclass = (uint8_t)(w >> 20);
		a->flow_label = w & 0xFFFFF;
		a->hop_limit = grh[7];
		memcpy(a->dgid, grh + 8, 16);
		memcpy(a->sgid, grh + 24, 16);
	} else {
		/* IPv4 in the last 20 bytes of the GRH area */
		const uint8_t *ip = grh + 20;

		a->tclass = ip[1];
		a->hop_limit = ip[8];
		memcpy(a->dgid, v4, 12);
		memcpy(a->dgid + 12, ip + 12, 4);
		memcpy(a->sgid, v4, 12);
		memcpy(a->sgid + 12, ip + 16, 4);
	}
	a->remote_qpn = src_qp;
	a->pkey = 0xFFFF; /* the only P_Key of the port */
}

/* QP1's completions, on worker 0 inside engine calls: nothing re-enters it. */
static bool
gsi_sink(void *ctx, const struct uroce_eng_wc *wc)
{
	struct dgsi *g = ctx;
	struct gsi_rec *rec;
	uint32_t slot = (uint32_t)wc->wr_id;

	if (!(wc->wr_id & GSI_WR_RX)) {
		if (slot < GSI_TX_SLOTS && g->n_tx_free < GSI_TX_SLOTS)
			g->tx_free[g->n_tx_free++] = slot;
		return true;
	}
	if (slot >= GSI_RX_SLOTS)
		return true;
	g->repost[g->n_repost++] = slot;
	if (wc->status != UROCE_WC_SUCCESS) {
		/* a flush, or a MAD longer than 256 bytes (local length error) */
		if (wc->status != UROCE_WC_WR_FLUSH_ERR)
			cnt_add(g, DCM_CNT_GSI_RX_BAD);
		return true;
	}
	cnt_add(g, DCM_CNT_GSI_RX);
	/* IBA 13.4.2: a GSI datagram is exactly one 256-byte MAD. */
	if (wc->byte_len != GSI_RX_LEN) {
		cnt_add(g, DCM_CNT_GSI_RX_BAD);
		return true;
	}
	rec = ring_slot_free(&g->up);
	if (rec == NULL) {
		cnt_add(g, DCM_CNT_GSI_RX_DROPPED);
		return true;
	}
	grh_addr(rx_buf(g, slot), wc->src_qp, &rec->addr);
	memcpy(rec->mad, rx_buf(g, slot) + UROCE_GRH_LEN, UROCE_MAD_LEN);
	ring_publish(&g->up);
	return true;
}

static int
post_recv(struct dgsi *g, uint32_t slot)
{
	struct uroce_wr_recv *r = uroce_eng_rq_reserve(g->qp);

	if (r == NULL)
		return -ENOMEM;
	r->wr_id = GSI_WR_RX | slot;
	r->num_sge = 1;
	r->length = GSI_RX_LEN;
	r->sge[0].addr = (uintptr_t)rx_buf(g, slot);
	r->sge[0].length = GSI_RX_LEN;
	r->sge[0].lkey = g->lkey;
	return uroce_eng_rq_commit(g->qp);
}

static bool
post_send(struct dgsi *g, const struct gsi_rec *rec)
{
	struct uroce_eng_send_wqe *s;
	uint32_t slot;

	if (g->n_tx_free == 0)
		return false;
	s = uroce_eng_sq_reserve(g->qp);
	if (s == NULL)
		return false;
	slot = g->tx_free[--g->n_tx_free];
	memcpy(tx_buf(g, slot), rec->mad, UROCE_MAD_LEN);
	s->wr.wr_id = slot;
	s->wr.opcode = UROCE_WR_SEND;
	s->wr.flags = UROCE_SEND_SIGNALED;
	s->wr.num_sge = 1;
	s->wr.sge[0].addr = (uintptr_t)tx_buf(g, slot);
	s->wr.sge[0].length = UROCE_MAD_LEN;
	s->wr.sge[0].lkey = g->lkey;
	s->wr.remote_qpn = rec->addr.remote_qpn ? rec->addr.remote_qpn : UROCE_GSI_QPN;
	/* The privileged bit: the QP's own Q_Key, the GSI's. */
	s->wr.remote_qkey = UROCE_CM_GSI_QKEY;
	memset(&s->ah, 0, sizeof(s->ah));
	memcpy(s->ah.dgid, rec->addr.dgid, 16);
	memcpy(s->ah.sgid, rec->addr.sgid, 16);
	s->ah.tclass = rec->addr.tclass;
	s->ah.hop_limit = rec->addr.hop_limit;
	s->ah.flow_label = rec->addr.flow_label;
	s->ah.port_num = 1;
	if (uroce_eng_sq_commit(g->qp) != 0) {
		g->tx_free[g->n_tx_free++] = slot;
		cnt_add(g, DCM_CNT_GSI_TX_DROPPED);
		return true; /* the record is spent: the CM's timer covers it */
	}
	cnt_add(g, DCM_CNT_GSI_TX);
	return true;
}

unsigned int
gsi_worker_poll(struct dgsi *g)
{
	const struct gsi_rec *rec;
	unsigned int work = 0;

	while (g->n_repost > 0) {
		if (post_recv(g, g->repost[g->n_repost - 1]) != 0)
			break;
		g->n_repost--;
		work++;
	}
	while ((rec = ring_peek(&g->down)) != NULL && post_send(g, rec)) {
		ring_pop(&g->down);
		work++;
	}
	return work;
}

/* ------------------------------------------------------------------------ */
/* Control thread                                                            */
/* ------------------------------------------------------------------------ */

unsigned int
gsi_take(struct dgsi *g, unsigned int max,
	 void (*fn)(void *arg, const struct uroce_cm_addr *from, const uint8_t *mad), void *arg)
{
	const struct gsi_rec *rec;
	unsigned int n = 0;

	while (n < max && (rec = ring_peek(&g->up)) != NULL) {
		fn(arg, &rec->addr, rec->mad);
		ring_pop(&g->up);
		n++;
	}
	return n;
}

int
gsi_send(struct dgsi *g, const struct uroce_cm_addr *to, const uint8_t *mad)
{
	struct gsi_rec *rec = ring_slot_free(&g->down);

	if (rec == NULL)
		return -ENOBUFS;
	rec->addr = *to;
	memcpy(rec->mad, mad, UROCE_MAD_LEN);
	ring_publish(&g->down);
	worker_wake(g->w);
	return 0;
}

bool
gsi_pending(struct dgsi *g)
{
	return __atomic_load_n(&g->down.tail, __ATOMIC_SEQ_CST) != g->down.head;
}

void
gsi_counters(const struct dgsi *g, uint64_t *cnt)
{
	unsigned int i;

	for (i = 0; i < DCM_CNT_MAX; i++)
		cnt[i] += __atomic_load_n(&g->cnt[i], __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------ */
/* Life                                                                      */
/* ------------------------------------------------------------------------ */

struct dgsi *
gsi_create(struct uroce_daemon *d, struct dworker *w)
{
	static const int steps[3] = {UROCE_QPS_INIT, UROCE_QPS_RTR, UROCE_QPS_RTS};
	struct uroce_eng_cq_sink sink = {.push = gsi_sink};
	struct uroce_eng_qp_init_attr ia;
	struct uroce_eng_qp_attr a;
	size_t len = (size_t)GSI_RX_SLOTS * GSI_RX_LEN + (size_t)GSI_TX_SLOTS * UROCE_MAD_LEN;
	struct dgsi *g;
	uint32_t i;
	int err = ENOMEM;

	(void)d;
	g = aligned_alloc(DAEMON_CACHE_LINE, (sizeof(*g) + DAEMON_CACHE_LINE - 1) &
						     ~(size_t)(DAEMON_CACHE_LINE - 1));
	if (g == NULL)
		return NULL;
	memset(g, 0, sizeof(*g));
	g->w = w;
	g->mem = calloc(1, len);
	if (g->mem == NULL)
		goto fail;
	g->pd = uroce_eng_pd_alloc(w->eng);
	if (g->pd == NULL)
		goto fail;
	g->mr = uroce_eng_mr_reg(g->pd, g->mem, (uintptr_t)g->mem, len, UROCE_ACCESS_LOCAL_WRITE);
	if (g->mr == NULL)
		goto fail;
	g->lkey = uroce_eng_mr_lkey(g->mr);
	sink.ctx = g;
	g->cq = uroce_eng_cq_create_sink(w->eng, &sink, NULL);
	if (g->cq == NULL)
		goto fail;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = g->cq;
	ia.recv_cq = g->cq;
	ia.qp_type = UROCE_QPT_UD;
	ia.sq_sig_all = true;
	ia.cap.max_send_wr = GSI_TX_SLOTS;
	ia.cap.max_recv_wr = GSI_RX_SLOTS;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	g->qp = uroce_eng_qp_create_gsi(g->pd, &ia);
	if (g->qp == NULL) {
		err = errno;
		goto fail;
	}
	for (i = 0; i < 3; i++) {
		int mask = UROCE_QP_STATE;

		memset(&a, 0, sizeof(a));
		a.qp_state = steps[i];
		if (steps[i] == UROCE_QPS_INIT) {
			a.qkey = UROCE_CM_GSI_QKEY;
			a.port_num = 1;
			mask |= UROCE_QP_PKEY_INDEX | UROCE_QP_PORT | UROCE_QP_QKEY;
		} else if (steps[i] == UROCE_QPS_RTS) {
			mask |= UROCE_QP_SQ_PSN;
		}
		if (uroce_eng_modify_qp(g->qp, &a, mask) != 0) {
			err = EINVAL;
			goto fail;
		}
	}
	for (i = 0; i < GSI_RX_SLOTS; i++)
		if (post_recv(g, i) != 0)
			goto fail;
	for (i = 0; i < GSI_TX_SLOTS; i++)
		g->tx_free[g->n_tx_free++] = i;
	return g;
fail:
	gsi_destroy(g);
	errno = err;
	return NULL;
}

void
gsi_destroy(struct dgsi *g)
{
	if (g == NULL)
		return;
	if (g->qp != NULL)
		uroce_eng_qp_destroy(g->qp);
	if (g->cq != NULL)
		uroce_eng_cq_destroy(g->cq);
	if (g->mr != NULL)
		uroce_eng_mr_dereg(g->mr);
	if (g->pd != NULL)
		uroce_eng_pd_dealloc(g->pd);
	free(g->mem);
	free(g);
}
