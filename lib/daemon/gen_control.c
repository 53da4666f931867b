/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* The load generator's control side (gen_internal.h): the GEN_* requests,
   each step run on the generator's worker through CMD_GEN. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uroce_common.h"
#include "uroce_loadgen.h"
#include "uroce_shm_gen.h"

#include "control.h"
#include "gen_internal.h"

/* ------------------------------------------------------------------------ */
/* Control thread                                                            */
/* ------------------------------------------------------------------------ */

static int
gen_call(struct uroce_daemon *d, struct dgen *g, unsigned int op, uint32_t first, uint32_t count,
	 void *out)
{
	struct dcmd c;

	memset(&c, 0, sizeof(c));
	c.type = CMD_GEN;
	c.u.gen.g = g;
	c.u.gen.op = op;
	c.u.gen.first = first;
	c.u.gen.count = count;
	c.u.gen.out = out;
	return worker_call(d, g->worker, &c);
}

static struct dgen *
gen_find(struct session *s, uint32_t id)
{
	struct dgen *g;

	for (g = s->gens; g != NULL; g = g->next)
		if (g->id == id)
			return g;
	return NULL;
}

static size_t
align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Where each region of @p g's memory goes. @return the total, or 0 above the cap. */
static uint64_t
gen_layout(struct dgen *g)
{
	bool verify = (g->flags & UROCE_SHM_GEN_F_VERIFY) != 0;
	uint64_t n = g->n_qps, off;

	/* Every product below is under 2^10 * 2^12 * 2^24: no overflow. */
	off = n * g->win_len;
	if (g->role == UROCE_SHM_GEN_INITIATOR) {
		if (g->flags & UROCE_SHM_GEN_F_READ) {
			g->land_stride = align_up((size_t)(verify ? g->slots : 1) * g->max_size,
						  GEN_ALIGN);
			g->off_land = off;
			off += n * g->land_stride;
		}
		if ((g->flags & UROCE_SHM_GEN_F_SEND) && verify) {
			g->send_stride = align_up((size_t)g->slots * g->max_size, GEN_ALIGN);
			g->off_send = off;
			off += n * g->send_stride;
		}
		if (g->flags & UROCE_SHM_GEN_F_ATOMIC) {
			g->off_ares = off;
			off += align_up(n * g->slots * 8, GEN_ALIGN);
		}
	} else {
		g->off_atomic = off;
		off += align_up(n * 8, GEN_ALIGN);
		if (g->flags & UROCE_SHM_GEN_F_SEND) {
			g->off_recv = off;
			/* With checks, a buffer per receive; without, one for all. */
			g->recv_stride = verify ? align_up((size_t)g->slots * g->max_size,
							   GEN_ALIGN) : 0;
			off += verify ? n * g->recv_stride : align_up(g->max_size, GEN_ALIGN);
		}
	}
	return off > UROCE_SHM_GEN_MAX_MEM ? 0 : off;
}

/* A send PSN that no two runs are likely to share (IBA 9.7.1 lets the
 * requester pick any). */
static uint32_t
gen_psn(const struct dgen *g, uint32_t i)
{
	struct timespec ts;
	uint64_t z;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	z = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32 ^ (uint64_t)(uintptr_t)g ^
	    (uint64_t)i * 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)(z ^ (z >> 31)) & 0xffffffu;
}

static void
gen_free(struct uroce_daemon *d, struct dgen *g)
{
	if (g->placed) {
		gen_call(d, g, GEN_W_DESTROY, 0, 0, NULL);
		d->st.qps -= g->n_qps;
		d->st.cqs--;
	}
	if (g->mr != NULL) {
		/* No QP of its PD is left; still, a worker may hold the pointer
		 * it found: free after each has come round (as DEREG_MR). */
		uroce_eng_mr_revoke(g->mr);
		daemon_barrier(d);
		uroce_eng_mr_dereg(g->mr);
		d->st.mrs--;
	}
	if (g->pd != NULL) {
		uroce_eng_pd_dealloc(g->pd);
		d->st.pds--;
	}
	d->gen_mem_used -= g->budget;
	free(g->mem);
	free(g->slot_mem);
	free(g->qps);
	free(g);
}

/* The GID at @p index of port 1, as control.c's sgid_lookup(). */
static int
gen_sgid(const struct uroce_daemon *d, uint32_t index, uint8_t gid[16])
{
	if (index >= d->n_gid || uroce_gid_is_zero(d->gids[index]))
		return -EINVAL;
	memcpy(gid, d->gids[index], 16);
	return 0;
}

static int
gen_create(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_gen_create_req *q = body;
	struct uroce_shm_msg_gen_create_resp *p = r->body;
	uint64_t len;
	struct dgen *g;
	uint32_t i;
	int rc;

	if (q->reserved != 0 ||
	    (q->role != UROCE_SHM_GEN_INITIATOR && q->role != UROCE_SHM_GEN_TARGET) ||
	    q->n_qps == 0 || q->n_qps > UROCE_SHM_GEN_MAX_QPS || q->worker >= d->n_workers ||
	    q->depth == 0 || q->depth > UROCE_MAX_QP_WR || (q->flags & ~UROCE_SHM_GEN_F_ALL) != 0 ||
	    q->max_size == 0 || q->max_size > UROCE_LG_GEN_MAX_SIZE)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return -ENOMEM;
	rc = gen_sgid(d, q->gid_index, g->gid);
	if (rc != 0)
		goto fail;
	g->owner = s;
	g->role = q->role;
	g->n_qps = q->n_qps;
	g->worker = q->worker;
	g->depth = q->depth;
	g->slots = pow2_at_least(q->depth);
	g->flags = q->flags;
	g->max_size = q->max_size;
	g->win_len = uroce_lg_gen_win_len(q->max_size);
	len = gen_layout(g);
	if (len == 0) {
		rc = -E2BIG; /* more memory than one generator may take */
		goto fail;
	}
	g->mem_len = align_up((size_t)len, 4096);
	/* The daemon-wide budget: its buffers and its slots, which the
	 * control thread allocates and fills now. */
	g->budget = g->mem_len;
	if (g->role == UROCE_SHM_GEN_INITIATOR)
		g->budget += (size_t)g->n_qps * g->slots * sizeof(*g->slot_mem);
	if (g->budget > d->gen_mem_max - d->gen_mem_used) {
		g->budget = 0;
		rc = -ENOMEM;
		goto fail;
	}
	d->gen_mem_used += g->budget;
	g->mem = aligned_alloc(4096, g->mem_len);
	g->qps = calloc(g->n_qps, sizeof(*g->qps));
	if (g->role == UROCE_SHM_GEN_INITIATOR)
		g->slot_mem = calloc((size_t)g->n_qps * g->slots, sizeof(*g->slot_mem));
	if (g->mem == NULL || g->qps == NULL ||
	    (g->role == UROCE_SHM_GEN_INITIATOR && g->slot_mem == NULL)) {
		rc = -ENOMEM;
		goto fail;
	}
	memset(g->mem, 0, g->mem_len);
	for (i = 0; g->slot_mem != NULL && i < g->n_qps; i++)
		g->qps[i].slots = g->slot_mem + (size_t)i * g->slots;
	/* Its own PD: its QPs reach its MR and nothing of any client's. */
	g->pd = uroce_eng_pd_alloc(d->w[0]->eng);
	if (g->pd == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	d->st.pds++;
	g->mr = uroce_eng_mr_reg(g->pd, g->mem, (uint64_t)(uintptr_t)g->mem, g->mem_len,
				 g->role == UROCE_SHM_GEN_TARGET ?
				 UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
				 UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC :
				 UROCE_ACCESS_LOCAL_WRITE);
	if (g->mr == NULL) {
		rc = errno ? -errno : -ENOMEM;
		goto fail;
	}
	d->st.mrs++;
	g->lkey = uroce_eng_mr_lkey(g->mr);
	rc = gen_call(d, g, GEN_W_CREATE, 0, 0, NULL);
	if (rc != 0)
		goto fail;
	g->placed = true;
	d->st.qps += g->n_qps;
	d->st.cqs++;
	for (i = 0; i < g->n_qps; i++)
		g->qps[i].psn = gen_psn(g, i);
	if (g->role == UROCE_SHM_GEN_TARGET) {
		/* Its windows hold the uroce-lg-1 pattern of its QPNs, its words
		 * the initial value the initiator's model starts from. */
		for (i = 0; i < g->n_qps; i++) {
			uint64_t v = uroce_lg_atomic_init(g->qps[i].qpn);

			uroce_lg_write_fill(mirror_of(g, i), g->qps[i].qpn, 0, g->win_len);
			memcpy(g->mem + g->off_atomic + (size_t)i * 8, &v, sizeof(v));
		}
	}
	/* Ids of one session are never 0 and never reused while it lives. */
	g->id = ++s->last_gen_id;
	g->next = s->gens;
	s->gens = g;
	p->gen_id = g->id;
	p->n_qps = g->n_qps;
	p->worker = g->worker;
	p->win_len = g->win_len;
	memcpy(p->gid, g->gid, 16);
	p->rkey = g->role == UROCE_SHM_GEN_TARGET ? uroce_eng_mr_rkey(g->mr) : 0;
	p->atomic_off = g->role == UROCE_SHM_GEN_TARGET ? (uint32_t)g->off_atomic : 0;
	p->va = g->role == UROCE_SHM_GEN_TARGET ? (uint64_t)(uintptr_t)g->mem : 0;
	p->mem_len = g->mem_len;
	p->active_mtu = d->active_mtu;
	return 0;
fail:
	gen_free(d, g);
	return rc;
}

static int
gen_qps(struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_gen_qps_req *q = body;
	struct uroce_shm_msg_gen_qps_resp *p = r->body;
	struct dgen *g = gen_find(s, q->gen_id);
	uint32_t i, k;

	if (g == NULL)
		return -ENOENT;
	if (q->start > g->n_qps)
		return -EINVAL;
	for (i = q->start, k = 0; i < g->n_qps && k < UROCE_SHM_GEN_QPS_MAX; i++, k++) {
		p->q[k].qpn = g->qps[i].qpn;
		p->q[k].psn = g->qps[i].psn;
	}
	p->page.count = (uint16_t)k;
	if (i < g->n_qps) {
		p->page.flags = UROCE_SHM_LIST_F_MORE;
		p->page.next = i;
	}
	return 0;
}

static int
gen_connect(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_gen_connect_req *q = body;
	struct uroce_shm_msg_gen_connect_resp *p = r->body;
	struct dgen *g = gen_find(s, q->gen_id);
	bool init;
	uint32_t i;
	int rc;

	if (g == NULL)
		return -ENOENT;
	init = g->role == UROCE_SHM_GEN_INITIATOR;
	if (q->timeout > 31 || q->count == 0 || q->count > UROCE_SHM_GEN_QPS_MAX ||
	    q->first >= g->n_qps || q->count > g->n_qps - q->first ||
	    q->path_mtu < UROCE_MTU_256 || q->path_mtu > d->active_mtu ||
	    uroce_gid_is_zero(q->peer_gid))
		return -EINVAL;
	if (g->started)
		return -EBUSY;
	/* The peer's windows and words must not wrap the address space. */
	if (init && (q->peer_win_len != g->win_len ||
		     q->peer_va > UINT64_MAX - (uint64_t)g->n_qps * g->win_len ||
		     q->peer_va > UINT64_MAX - q->peer_atomic_off - (uint64_t)g->n_qps * 8 ||
		     q->peer_atomic_off % 8 != 0))
		return -EINVAL;
	for (i = 0; i < q->count; i++) {
		if (q->q[i].qpn > UROCE_QPN_MASK || q->q[i].psn > 0xffffffu)
			return -EINVAL;
		if (g->qps[q->first + i].connected)
			return -EALREADY;
	}
	/* One peer per generator. */
	if (g->n_connected > 0 && (memcmp(g->peer_gid, q->peer_gid, 16) != 0 ||
				   g->path_mtu != q->path_mtu ||
				   g->timeout != (q->timeout != 0 ? q->timeout : GEN_TIMEOUT) ||
				   (init && g->peer_rkey != q->peer_rkey)))
		return -EINVAL;
	memcpy(g->peer_gid, q->peer_gid, 16);
	g->path_mtu = (uint8_t)q->path_mtu;
	g->timeout = (uint8_t)(q->timeout != 0 ? q->timeout : GEN_TIMEOUT);
	if (init)
		g->peer_rkey = q->peer_rkey;
	for (i = 0; i < q->count; i++) {
		uint32_t k = q->first + i;
		struct gen_qp *gq = &g->qps[k];

		gq->peer_qpn = q->q[i].qpn;
		gq->peer_psn = q->q[i].psn;
		if (!init)
			continue;
		gq->rwin = q->peer_va + (uint64_t)k * g->win_len;
		gq->ratomic = q->peer_va + q->peer_atomic_off + (uint64_t)k * 8;
		/* The mirror of the peer's window: what WRITEs send, and what
		 * READs must bring back. */
		uroce_lg_write_fill(mirror_of(g, k), gq->peer_qpn, 0, g->win_len);
	}
	rc = gen_call(d, g, GEN_W_CONNECT, q->first, q->count, NULL);
	if (rc != 0)
		return rc;
	(void)route_prime(d, g->peer_gid); /* gen_start waits for the answer */
	for (i = 0; i < q->count; i++)
		g->qps[q->first + i].connected = true;
	g->n_connected += q->count;
	p->connected = g->n_connected;
	return 0;
}

static int
gen_start(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_gen_start_req *q = body;
	struct dgen *g = gen_find(s, q->gen_id);
	unsigned int ops, need = 0, i;
	int rc;

	if (g == NULL)
		return -ENOENT;
	if (g->role != UROCE_SHM_GEN_INITIATOR)
		return -EINVAL;
	if (g->started)
		return -EALREADY;
	if (g->n_connected != g->n_qps)
		return -ENOTCONN;
	if (q->n_mix == 0 || q->n_mix > UROCE_SHM_GEN_MIX_MAX || q->window == 0 ||
	    q->window > g->depth || (q->flags & ~UROCE_SHM_GEN_F_VERIFY) != 0 ||
	    ((q->flags & UROCE_SHM_GEN_F_VERIFY) && !(g->flags & UROCE_SHM_GEN_F_VERIFY)))
		return -EINVAL;
	memset(&g->run, 0, sizeof(g->run));
	g->run.mix.n = q->n_mix;
	for (i = 0; i < q->n_mix; i++) {
		g->run.mix.e[i].op = q->mix[i].op;
		g->run.mix.e[i].size = q->mix[i].size;
		g->run.mix.e[i].weight = q->mix[i].weight;
	}
	if (uroce_lg_mix_check(&g->run.mix, NULL, 0) != 0 ||
	    uroce_lg_mix_max_size(&g->run.mix, ~0u) > g->max_size)
		return -EINVAL;
	/* What the mix needs must have been made at creation. */
	ops = uroce_lg_mix_ops(&g->run.mix);
	if (ops & UROCE_LG_OP_BIT(UROCE_LG_READ))
		need |= UROCE_SHM_GEN_F_READ;
	if (ops & UROCE_LG_OP_BIT(UROCE_LG_SEND))
		need |= UROCE_SHM_GEN_F_SEND;
	if (ops & UROCE_LG_ATOMIC_OPS)
		need |= UROCE_SHM_GEN_F_ATOMIC;
	if ((need & ~g->flags) != 0)
		return -EINVAL;
	rc = uroce_lg_mix_table(&g->run.mix, q->seed, g->run.table);
	if (rc != 0)
		return rc;
	g->run.window = q->window;
	g->run.verify = (q->flags & UROCE_SHM_GEN_F_VERIFY) != 0;
	g->run.rate = q->rate;
	g->run.duration_us = q->duration_us;
	g->run.count = q->count;
	/* Not before the peer's MAC is known: the first window would be
	 * dropped by the port and wait out a retransmission timeout. The
	 * caller asks again (uroce-ctl gen does, for a while). */
	rc = route_prime(d, g->peer_gid);
	if (rc == -EAGAIN || rc == -EHOSTUNREACH)
		return rc;
	rc = gen_call(d, g, GEN_W_START, 0, 0, NULL);
	if (rc == 0)
		g->started = true;
	return rc;
}

/* A target's memory now: pattern bytes of every window, digest of the words. */
static void
gen_scan(struct dgen *g, struct uroce_shm_msg_gen_stats_resp *p)
{
	struct uroce_lg_scan sc;
	uint64_t v, digest = 0;
	uint32_t i;

	for (i = 0; i < g->n_qps; i++) {
		/* Written from the start: a byte that is not its pattern byte,
		 * zero included, is bad. */
		uroce_lg_write_scan(mirror_of(g, i), g->qps[i].qpn, g->win_len, &sc);
		p->scan_bytes += g->win_len;
		p->scan_bad += sc.bad + sc.unwritten;
		memcpy(&v, (const void *)(g->mem + g->off_atomic + (size_t)i * 8), sizeof(v));
		digest = uroce_lg_atomic_digest(digest, i, v);
	}
	p->atomic_digest = digest;
}

static int
gen_stats(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_gen_stats_req *q = body;
	struct uroce_shm_msg_gen_stats_resp *p = r->body;
	struct dgen *g = gen_find(s, q->gen_id);
	int rc;

	if (g == NULL)
		return -ENOENT;
	if ((q->flags & ~UROCE_SHM_GEN_STATS_F_SCAN) != 0)
		return -EINVAL;
	rc = gen_call(d, g, GEN_W_STATS, 0, 0, p);
	if (rc != 0)
		return rc;
	if ((q->flags & UROCE_SHM_GEN_STATS_F_SCAN) && g->role == UROCE_SHM_GEN_TARGET)
		gen_scan(g, p);
	return 0;
}

static int
gen_destroy(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dgen **pp, *g;

	if (q->reserved != 0)
		return -EINVAL;
	for (pp = &s->gens; (g = *pp) != NULL; pp = &g->next)
		if (g->id == q->handle)
			break;
	if (g == NULL)
		return -ENOENT;
	*pp = g->next;
	gen_free(d, g);
	return 0;
}

int
gen_dispatch(struct uroce_daemon *d, struct session *s, uint16_t type, const void *body,
	     struct reply *r)
{
	switch (type) {
	case UROCE_SHM_MSG_GEN_CREATE:
		return gen_create(d, s, body, r);
	case UROCE_SHM_MSG_GEN_QPS:
		return gen_qps(s, body, r);
	case UROCE_SHM_MSG_GEN_CONNECT:
		return gen_connect(d, s, body, r);
	case UROCE_SHM_MSG_GEN_START:
		return gen_start(d, s, body);
	case UROCE_SHM_MSG_GEN_STATS:
		return gen_stats(d, s, body, r);
	case UROCE_SHM_MSG_GEN_DESTROY:
		return gen_destroy(d, s, body);
	default:
		return -EOPNOTSUPP;
	}
}

void
gen_session_free(struct uroce_daemon *d, struct session *s)
{
	struct dgen *g;

	while ((g = s->gens) != NULL) {
		s->gens = g->next;
		gen_free(d, g);
	}
}

unsigned int
uroce_daemon_gens(struct uroce_daemon *d, struct uroce_daemon_gen_info *out, unsigned int max)
{
	struct uroce_shm_msg_gen_stats_resp st;
	unsigned int n = 0;
	struct session *s;
	struct dgen *g;

	for (s = d->sessions; s != NULL; s = s->next)
		for (g = s->gens; g != NULL && n < max; g = g->next) {
			struct uroce_daemon_gen_info *e = &out[n];

			memset(&st, 0, sizeof(st));
			if (gen_call(d, g, GEN_W_STATS, 0, 0, &st) != 0)
				continue;
			memset(e, 0, sizeof(*e));
			e->id = g->id;
			e->client_id = s->id;
			e->pid = (int32_t)s->pid;
			e->role = g->role;
			e->state = st.state;
			e->worker = g->worker;
			e->n_qps = g->n_qps;
			e->err_status = st.err_status;
			e->err_qpn = st.err_qpn;
			e->elapsed_us = st.elapsed_us;
			e->posted = st.posted;
			e->completed = st.completed;
			e->errors = st.errors;
			e->bytes = st.bytes;
			e->verify_bad = st.verify_bad;
			e->outstanding = st.outstanding;
			n++;
		}
	return n;
}
