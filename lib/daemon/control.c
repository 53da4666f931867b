/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Control requests (doc/shm-abi.md), one function each, on the control
 * thread. Requests about PDs, MRs, AHs and segments are done here; requests
 * about QPs, CQs and SRQs are done on the worker that owns the object,
 * through worker_call().
 *
 * Placement (doc/architecture.md): a QP, its send CQ, its receive CQ and
 * its SRQ live on one worker. An SRQ is placed when it is created (its
 * doorbell must name a worker): on the worker of the client's CQ placed
 * last, if any (its QPs will likely share that CQ), else round robin; a CQ
 * when the first QP that uses it is created; a QP on the worker of
 * whichever of its CQs and SRQ is placed already, else round robin. A QP whose CQs or SRQ are placed on
 * different workers is refused with EXDEV. A client older than ABI 1.2 has
 * one doorbell block, so everything of it goes to worker 0.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "uroce_common.h"
#include "uroce_shm.h"

#include "control.h"
#include "dcm.h"

/* ------------------------------------------------------------------------ */
/* Placement and doorbell slots                                              */
/* ------------------------------------------------------------------------ */

static unsigned int
next_worker(struct uroce_daemon *d, struct session *s)
{
	unsigned int w;

	if (s->n_db_blocks < d->n_workers)
		return 0;
	w = d->next_worker;
	d->next_worker = (w + 1) % d->n_workers;
	return w;
}

/* The session's doorbell block on worker @p w is served there (once). */
static int
ws_ensure(struct uroce_daemon *d, struct session *s, unsigned int w)
{
	struct dwsess *ws;
	struct dcmd c;
	int rc;

	if (s->ws[w] != NULL)
		return 0;
	ws = calloc(1, sizeof(*ws));
	if (ws == NULL)
		return -ENOMEM;
	s->slot_bits[w] = calloc(UROCE_SHM_DB_SLOTS / 64, sizeof(uint64_t));
	if (s->slot_bits[w] == NULL) {
		free(ws);
		return -ENOMEM;
	}
	ws->s = s;
	uroce_shm_db_reader_init(&ws->rd, (struct uroce_shm_db_block *)s->db.addr +
				 (s->n_db_blocks > 1 ? w : 0), UROCE_SHM_DB_SLOTS);
	memset(&c, 0, sizeof(c));
	c.type = CMD_WS_ADD;
	c.u.ws = ws;
	rc = worker_call(d, w, &c);
	if (rc != 0) {
		free(ws);
		free(s->slot_bits[w]);
		s->slot_bits[w] = NULL;
		return rc;
	}
	s->ws[w] = ws;
	return 0;
}

/* A free doorbell slot of the session on worker @p w. @return 0 or -ENOMEM. */
static int
slot_alloc(struct session *s, unsigned int w, uint32_t *slot)
{
	uint32_t i;

	for (i = 0; i < UROCE_SHM_DB_SLOTS / 64; i++) {
		uint64_t free_bits = ~s->slot_bits[w][i];

		if (free_bits != 0) {
			uint32_t b = (uint32_t)__builtin_ctzll(free_bits);

			s->slot_bits[w][i] |= 1ull << b;
			*slot = i * 64 + b;
			return 0;
		}
	}
	return -ENOMEM;
}

static void
slot_free(struct session *s, unsigned int w, uint32_t slot)
{
	s->slot_bits[w][slot / 64] &= ~(1ull << (slot % 64));
}

/* Create the engine CQ of @p cq on worker @p w, if it has none yet. */
static int
cq_place(struct uroce_daemon *d, struct dcq *cq, unsigned int w)
{
	struct dcmd c;
	int rc;

	if (cq->worker >= 0)
		return cq->worker == (int)w ? 0 : -EXDEV;
	memset(&c, 0, sizeof(c));
	c.type = CMD_CQ_PLACE;
	c.u.cq = cq;
	rc = worker_call(d, w, &c);
	if (rc == 0) {
		cq->worker = (int)w;
		cq->owner->last_cq_worker = (int)w;
	}
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Session, segments, PD, MR, AH                                             */
/* ------------------------------------------------------------------------ */

/* The PD (@p xrcd false) or XRC domain (true) of @p handle: both are PD
 * objects, and a handle of the other kind is -EINVAL. */
static int
pd_kind_get(struct session *s, uint32_t handle, bool xrcd, struct dpd **pd)
{
	int rc = obj_get(s, handle, OBJ_PD, (void **)pd);

	return rc == 0 && (*pd)->is_xrcd != xrcd ? -EINVAL : rc;
}

static int
pd_get(struct session *s, uint32_t handle, struct dpd **pd)
{
	return pd_kind_get(s, handle, false, pd);
}

static int
xrcd_get(struct session *s, uint32_t handle, struct dpd **x)
{
	return pd_kind_get(s, handle, true, x);
}

/* Free PD or XRC domain @p handle; an XRC domain only once no TGT QP or
 * XRC SRQ uses it (-EBUSY), a PD once the engine holds nothing of it. */
static int
pd_release(struct uroce_daemon *d, struct session *s, uint32_t handle, bool xrcd)
{
	struct dpd *pd;
	int rc = pd_kind_get(s, handle, xrcd, &pd);

	if (rc != 0)
		return rc;
	if (pd->xrcd_users != 0)
		return -EBUSY;
	rc = uroce_eng_pd_dealloc(pd->pd);
	if (rc != 0)
		return rc;
	obj_del(s, handle);
	free(pd);
	d->st.pds--;
	return 0;
}

static int
do_hello(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_hello_req *q = body;
	struct uroce_shm_msg_hello_resp *p = r->body;
	unsigned int blocks, i;
	int rc;

	if (s->hello)
		return -EALREADY;
	if (q->flags != 0)
		return -EINVAL;
	rc = uroce_shm_version_check(q->abi_major, q->abi_minor);
	if (rc != 0)
		return rc;
	s->minor = q->abi_minor;
	/* A block per worker for a client that knows them (1.2); one otherwise. */
	blocks = s->minor >= 2 ? d->n_workers : 1;
	rc = uroce_shm_segment_create(&s->db, "uroce-db",
				      blocks * sizeof(struct uroce_shm_db_block), 0);
	if (rc != 0)
		return rc;
	s->n_db_blocks = blocks;
	s->hello = true;
	for (i = 0; i < UROCE_DAEMON_MAX_WORKERS; i++)
		s->ws[i] = NULL;
	p->abi_major = UROCE_SHM_ABI_MAJOR;
	p->abi_minor = UROCE_SHM_ABI_MINOR;
	p->client_id = s->id;
	p->n_db_blocks = blocks;
	p->db_seg_size = (uint32_t)s->db.size;
	p->max_inline = UROCE_MAX_INLINE;
	p->max_sge = UROCE_MAX_SGE;
	p->max_qp_wr = UROCE_MAX_QP_WR;
	p->max_cqe = UROCE_MAX_CQE;
	r->fd = s->db.fd;
	return 0;
}

static int
do_alloc_segment(struct uroce_daemon *d, struct session *s, const void *body, int *fd,
		 struct reply *r)
{
	const struct uroce_shm_msg_alloc_segment_req *q = body;
	struct uroce_shm_msg_alloc_segment_resp *p = r->body;
	struct dseg *g;
	uint32_t h;
	int rc;

	if (q->reserved != 0 || (q->flags & ~UROCE_SHM_SEG_HUGETLB) != 0 || q->size == 0 ||
	    q->size > SIZE_MAX)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return -ENOMEM;
	rc = uroce_shm_segment_map(&g->seg, *fd, (size_t)q->size);
	if (rc != 0) {
		free(g);
		return rc;
	}
	*fd = -1; /* the segment owns it now */
	rc = obj_add(s, OBJ_SEG, g, &h);
	if (rc != 0) {
		uroce_shm_segment_unmap(&g->seg);
		free(g);
		return rc;
	}
	d->st.segments++;
	p->seg_handle = h;
	p->size = g->seg.size;
	return 0;
}

static int
do_free_segment(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dseg *g;
	int rc = obj_get(s, q->handle, OBJ_SEG, (void **)&g);

	if (rc != 0)
		return rc;
	if (g->refs != 0)
		return -EBUSY;
	obj_del(s, q->handle);
	seg_put(d, g);
	return 0;
}

void
seg_put(struct uroce_daemon *d, struct dseg *g)
{
	/* Acquire: the device's reads are over before the memory goes. */
	if (__atomic_load_n(&g->zc_inflight, __ATOMIC_ACQUIRE) != 0) {
		g->grave_next = d->graveyard;
		d->graveyard = g;
		return;
	}
	uroce_shm_segment_unmap(&g->seg);
	free(g);
	d->st.segments--;
}

unsigned int
seg_graveyard_sweep(struct uroce_daemon *d)
{
	struct dseg **pp = &d->graveyard, *g;
	unsigned int n = 0;

	while ((g = *pp) != NULL) {
		if (__atomic_load_n(&g->zc_inflight, __ATOMIC_ACQUIRE) != 0) {
			pp = &g->grave_next;
			continue;
		}
		*pp = g->grave_next;
		uroce_shm_segment_unmap(&g->seg);
		free(g);
		d->st.segments--;
		n++;
	}
	return n;
}

static int
pd_new(struct uroce_daemon *d, struct session *s, struct reply *r, bool xrcd)
{
	struct uroce_shm_msg_handle *p = r->body;
	struct dpd *pd;
	int rc;

	if (d->st.pds >= DAEMON_MAX_PD)
		return -ENOMEM;
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL)
		return -ENOMEM;
	/* On the device every worker shares; worker 0's engine is its home. */
	pd->pd = uroce_eng_pd_alloc(d->w[0]->eng);
	if (pd->pd == NULL) {
		free(pd);
		return -ENOMEM;
	}
	if (xrcd) {
		/* IBA 1.2 XRC: a domain number no other domain of this
		 * daemon has; 0 means "not XRC" to the engine. */
		pd->is_xrcd = true;
		pd->xrcd_id = ++d->xrcd_next != 0 ? d->xrcd_next : ++d->xrcd_next;
		pd->xrcd_worker = -1;
	}
	rc = obj_add(s, OBJ_PD, pd, &p->handle);
	if (rc != 0) {
		uroce_eng_pd_dealloc(pd->pd);
		free(pd);
		return rc;
	}
	d->st.pds++;
	return 0;
}

static int
do_alloc_pd(struct uroce_daemon *d, struct session *s, struct reply *r)
{
	return pd_new(d, s, r, false);
}

/*
 * ibv_open_xrcd (ABI 1.7): a new XRC domain of this session. Sharing one
 * domain through a file (ibv_xrcd_init_attr.fd) is the client library's:
 * within one process the same file names the same domain; a domain is never
 * shared between sessions (doc/verbs-dropin.md).
 */
static int
do_open_xrcd(struct uroce_daemon *d, struct session *s, struct reply *r)
{
	if (s->minor < 7)
		return -EOPNOTSUPP;
	return pd_new(d, s, r, true);
}

/* ibv_close_xrcd: -EBUSY while a TGT QP or an XRC SRQ is in the domain. */
static int
do_close_xrcd(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;

	return pd_release(d, s, q->handle, true);
}

/* The worker of XRC domain @p x: where its TGT QPs and XRC SRQs all run,
 * so that only one worker ever takes WQEs from one of its SRQs. Placed with
 * its first TGT QP or SRQ: on @p hint if that is given (the SRQ's CQ's
 * worker), else the worker of the client's CQ placed last (the domain's
 * SRQs will likely complete there), else the next one. */
static unsigned int
xrcd_worker(struct uroce_daemon *d, struct session *s, struct dpd *x, int hint)
{
	if (x->xrcd_worker < 0)
		x->xrcd_worker = hint >= 0 ? hint :
				 s->last_cq_worker >= 0 ? s->last_cq_worker :
				 (int)next_worker(d, s);
	return (unsigned int)x->xrcd_worker;
}

static int
do_dealloc_pd(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;

	return pd_release(d, s, q->handle, false);
}

/* Segment @p handle of @p s, if [@p off, + @p len) lies inside it (overflow-safe). */
static int
seg_window(struct session *s, uint32_t handle, uint64_t off, uint64_t len, struct dseg **g)
{
	int rc = obj_get(s, handle, OBJ_SEG, (void **)g);

	if (rc != 0)
		return rc;
	return off > (*g)->seg.size || len > (*g)->seg.size - off ? -EINVAL : 0;
}

static int
do_reg_mr(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_reg_mr_req *q = body;
	struct uroce_shm_msg_reg_mr_resp *p = r->body;
	const uint32_t all = UROCE_ACCESS_FLAGS_ALL;
	struct dpd *pd;
	struct dseg *g;
	struct dmr *mr;
	int rc;

	if (q->reserved != 0 || (q->access & ~all) != 0)
		return -EINVAL;
	rc = pd_get(s, q->pd_handle, &pd);
	if (rc == 0)
		rc = seg_window(s, q->seg_handle, q->seg_offset, q->length, &g);
	if (rc != 0)
		return rc;
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return -ENOMEM;
	mr->mr = uroce_eng_mr_reg(pd->pd, (uint8_t *)g->seg.addr + q->seg_offset, q->iova,
				  q->length, (int)q->access);
	if (mr->mr == NULL) {
		rc = errno ? -errno : -ENOMEM;
		free(mr);
		return rc;
	}
	mr->seg = g;
	mr->pd = pd;
	mr->seg_offset = q->seg_offset;
	mr->length = q->length;
	mr->iova = q->iova;
	mr->access = q->access;
	/* Packets may send this memory in place; the segment counts them. */
	uroce_eng_mr_set_zc_ref(mr->mr, &g->zc_inflight);
	rc = obj_add(s, OBJ_MR, mr, &p->mr_handle);
	if (rc != 0) {
		uroce_eng_mr_dereg(mr->mr);
		free(mr);
		return rc;
	}
	p->lkey = uroce_eng_mr_lkey(mr->mr);
	p->rkey = uroce_eng_mr_rkey(mr->mr);
	g->refs++;
	d->st.mrs++;
	return 0;
}

/* Free MRs (and memory windows) whose keys were revoked and that every
 * worker has moved past. */
static void
mr_free(struct uroce_daemon *d, struct dmr *mr)
{
	uroce_eng_mr_dereg(mr->mr);
	if (mr->seg != NULL) {
		mr->seg->refs--;
		d->st.mrs--;
	}
	free(mr);
}

/*
 * ibv_rereg_mr: a new engine MR under the same keys replaces the old one at
 * once; the old one is freed after every worker has come round, as DEREG_MR
 * frees. What flags do not change is taken from the registration.
 */
static int
do_rereg_mr(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_rereg_mr_req *q = body;
	struct uroce_shm_msg_reg_mr_resp *p = r->body;
	const uint32_t all = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
			     UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC;
	const uint32_t flags = UROCE_SHM_REREG_TRANSLATION | UROCE_SHM_REREG_PD |
			       UROCE_SHM_REREG_ACCESS;
	struct uroce_eng_mr *old, *nmr;
	struct dseg *g, *old_seg;
	struct dpd *pd;
	struct dmr *mr;
	uint64_t off, len, iova;
	uint32_t access;
	int rc;

	if (q->reserved != 0 || q->flags == 0 || (q->flags & ~flags) != 0 ||
	    ((q->flags & UROCE_SHM_REREG_ACCESS) && (q->access & ~all) != 0))
		return -EINVAL;
	rc = obj_get(s, q->mr_handle, OBJ_MR, (void **)&mr);
	if (rc != 0)
		return rc;
	pd = mr->pd;
	g = mr->seg;
	off = mr->seg_offset;
	len = mr->length;
	iova = mr->iova;
	access = q->flags & UROCE_SHM_REREG_ACCESS ? q->access : mr->access;
	if (q->flags & UROCE_SHM_REREG_PD)
		rc = pd_get(s, q->pd_handle, &pd);
	if (rc == 0 && (q->flags & UROCE_SHM_REREG_TRANSLATION)) {
		rc = seg_window(s, q->seg_handle, q->seg_offset, q->length, &g);
		off = q->seg_offset;
		len = q->length;
		iova = q->iova;
	}
	if (rc != 0)
		return rc;
	old = mr->mr;
	nmr = uroce_eng_mr_rereg(old, pd->pd, (uint8_t *)g->seg.addr + off, iova, len,
				 (int)access);
	if (nmr == NULL)
		return errno ? -errno : -ENOMEM;
	uroce_eng_mr_set_zc_ref(nmr, &g->zc_inflight);
	old_seg = mr->seg;
	g->refs++;
	mr->mr = nmr;
	mr->seg = g;
	mr->pd = pd;
	mr->seg_offset = off;
	mr->length = len;
	mr->iova = iova;
	mr->access = access;
	/* A worker may still copy with the old MR it found: free it after. */
	daemon_barrier(d);
	uroce_eng_mr_dereg(old);
	old_seg->refs--;
	p->mr_handle = q->mr_handle;
	p->lkey = uroce_eng_mr_lkey(nmr);
	p->rkey = uroce_eng_mr_rkey(nmr);
	return 0;
}

static int
do_dereg_mr(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dmr *mr;
	int rc = obj_get(s, q->handle, OBJ_MR, (void **)&mr);

	if (rc != 0)
		return rc;
	if (mr->seg == NULL)
		return -EINVAL; /* a memory window: DEALLOC_MW */
	/* IBA 10.6.7: an MR with windows bound to it stays (as rxe, EBUSY
	 * here). A bind racing with this finds the MR revoked below and the
	 * window dead: the count only refuses, it protects nothing. */
	if (uroce_eng_mr_busy(mr->mr))
		return -EBUSY;
	obj_del(s, q->handle);
	/* No worker finds the key from now on; one may still be copying with
	 * the pointer it found: free only after each has come round. */
	uroce_eng_mr_revoke(mr->mr);
	daemon_barrier(d);
	mr_free(d, mr);
	return 0;
}

/*
 * Memory windows (ABI 1.5) live in the object table as OBJ_MR entries with
 * no segment (the type field has no spare value); the engine tells the
 * window from an MR by its key object.
 */
static int
do_alloc_mw(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_alloc_mw_req *q = body;
	struct uroce_shm_msg_alloc_mw_resp *p = r->body;
	struct dpd *pd;
	struct dmr *mw;
	int rc = pd_get(s, q->pd_handle, &pd);

	(void)d;
	if (rc != 0)
		return rc;
	mw = calloc(1, sizeof(*mw));
	if (mw == NULL)
		return -ENOMEM;
	mw->mr = uroce_eng_mw_alloc(pd->pd, (int)q->type);
	if (mw->mr == NULL) {
		rc = errno ? -errno : -ENOMEM;
		free(mw);
		return rc;
	}
	rc = obj_add(s, OBJ_MR, mw, &p->mw_handle);
	if (rc != 0) {
		uroce_eng_mr_dereg(mw->mr);
		free(mw);
		return rc;
	}
	p->rkey = uroce_eng_mr_rkey(mw->mr);
	return 0;
}

static int
do_dealloc_mw(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dmr *mw;
	int rc = obj_get(s, q->handle, OBJ_MR, (void **)&mw);

	if (rc != 0)
		return rc;
	if (mw->seg != NULL)
		return -EINVAL; /* an MR: DEREG_MR */
	obj_del(s, q->handle);
	/* As DEREG_MR: a worker may still be using the binding it resolved. */
	uroce_eng_mr_revoke(mw->mr);
	daemon_barrier(d);
	mr_free(d, mw);
	return 0;
}

/* The GID at @p index of port 1; an empty slot or an index past the table is EINVAL. */
static int
sgid_lookup(const struct uroce_daemon *d, uint32_t index, uint8_t sgid[16])
{
	if (index >= d->n_gid || uroce_gid_is_zero(d->gids[index]))
		return -EINVAL;
	memcpy(sgid, d->gids[index], 16);
	return 0;
}

static int
do_create_ah(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_create_ah_req *q = body;
	const struct uroce_shm_ah_attr *a = &q->attr;
	struct uroce_shm_msg_handle *p = r->body;
	struct uroce_eng_ah_attr at;
	struct dpd *pd;
	struct dah *ah;
	int rc = pd_get(s, q->pd_handle, &pd);

	if (rc != 0)
		return rc;
	/* RoCE AHs are always global (IBA A16.3); one port. */
	if (q->reserved != 0 || a->reserved0 != 0 || a->reserved1 != 0 ||
	    a->flow_label > 0xfffff || a->port_num > 1)
		return -EINVAL;
	memset(&at, 0, sizeof(at));
	rc = sgid_lookup(d, a->sgid_index, at.sgid);
	if (rc != 0)
		return rc;
	if (d->st.ahs >= DAEMON_MAX_AH)
		return -ENOMEM;
	memcpy(at.dgid, a->dgid, 16);
	at.tclass = a->traffic_class;
	at.hop_limit = a->hop_limit;
	at.flow_label = a->flow_label;
	at.sl = a->sl;
	at.port_num = a->port_num;
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL)
		return -ENOMEM;
	ah->ah = uroce_eng_ah_create(pd->pd, &at);
	if (ah->ah == NULL) {
		rc = errno ? -errno : -ENOMEM;
		free(ah);
		return rc;
	}
	rc = obj_add(s, OBJ_AH, ah, &p->handle);
	if (rc != 0) {
		uroce_eng_ah_destroy(ah->ah);
		free(ah);
		return rc;
	}
	d->st.ahs++;
	(void)route_prime(d, at.dgid);
	return 0;
}

static void
ah_free(struct uroce_daemon *d, struct dah *ah)
{
	uroce_eng_ah_destroy(ah->ah);
	free(ah);
	d->st.ahs--;
}

static int
do_destroy_ah(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dah *ah;
	int rc = obj_get(s, q->handle, OBJ_AH, (void **)&ah);

	if (rc != 0)
		return rc;
	/* A worker translating a UD WQE may have just looked the handle up. */
	obj_del(s, q->handle);
	daemon_barrier(d);
	ah_free(d, ah);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* CQ                                                                        */
/* ------------------------------------------------------------------------ */

/*
 * The worker writes the client's CQ eventfd, so it accepts only a real
 * eventfd in non-blocking mode: a pipe could raise SIGPIPE, and a blocking
 * descriptor (or an eventfd whose counter the client drove to the top) could
 * stall a worker.
 */
static bool
is_nonblocking_eventfd(int fd)
{
	char path[64], link[64];
	ssize_t n;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || !(fl & O_NONBLOCK))
		return false;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return strcmp(link, "anon_inode:[eventfd]") == 0;
}

static int
do_create_cq(struct uroce_daemon *d, struct session *s, const void *body, int *fd,
	     struct reply *r)
{
	const struct uroce_shm_msg_create_cq_req *q = body;
	struct uroce_shm_msg_create_cq_resp *p = r->body;
	struct dcq *cq;
	size_t mem;
	int rc;

	if (q->reserved != 0 || (q->flags & ~UROCE_SHM_CQ_F_EVENTFD) != 0 || q->cqe == 0 ||
	    q->cqe > UROCE_MAX_CQE || q->comp_vector != 0)
		return -EINVAL;
	if (((q->flags & UROCE_SHM_CQ_F_EVENTFD) != 0) != (*fd >= 0))
		return -EINVAL;
	if (*fd >= 0 && !is_nonblocking_eventfd(*fd))
		return -EINVAL;
	if (d->st.cqs >= DAEMON_MAX_CQ)
		return -ENOMEM;
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return -ENOMEM;
	cq->evfd = -1;
	cq->worker = -1;
	cq->size = pow2_at_least(q->cqe);
	mem = uroce_shm_ring_mem_size(cq->size, sizeof(struct uroce_shm_cqe));
	rc = uroce_shm_segment_create(&cq->seg, "uroce-cq", mem, 0);
	if (rc != 0)
		goto fail_free;
	rc = uroce_shm_ring_init(&cq->ring, cq->seg.addr, cq->seg.size, cq->size,
				 sizeof(struct uroce_shm_cqe), 0, UROCE_SHM_RING_PRODUCER,
				 UROCE_SHM_RING_F_UNTRUSTED);
	if (rc != 0)
		goto fail_seg;
	rc = obj_add(s, OBJ_CQ, cq, &p->cq_handle);
	if (rc != 0)
		goto fail_seg;
	cq->owner = s;
	cq->handle = p->cq_handle;
	cq->evfd = *fd;
	*fd = -1;
	d->st.cqs++;
	p->cqe = cq->size;
	p->seg_size = cq->seg.size;
	p->ring_offset = 0;
	r->fd = cq->seg.fd;
	return 0;
fail_seg:
	uroce_shm_segment_unmap(&cq->seg);
fail_free:
	free(cq);
	return rc;
}

static int
cq_free(struct uroce_daemon *d, struct dcq *cq)
{
	struct dcmd c;
	int rc;

	if (cq->qps != 0)
		return -EBUSY;
	if (cq->worker >= 0) {
		memset(&c, 0, sizeof(c));
		c.type = CMD_CQ_DESTROY;
		c.u.cq = cq;
		rc = worker_call(d, (unsigned int)cq->worker, &c);
		if (rc != 0)
			return rc;
	}
	uroce_shm_segment_unmap(&cq->seg);
	if (cq->evfd >= 0)
		close(cq->evfd);
	free(cq);
	d->st.cqs--;
	return 0;
}

/* ibv_resize_cq: a new ring, the unconsumed CQEs moved into it (cq_ring_move). */
static int
do_resize_cq(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_resize_cq_req *q = body;
	struct uroce_shm_msg_create_cq_resp *p = r->body;
	struct uroce_shm_segment seg;
	struct dcmd c;
	struct dcq *cq;
	uint32_t size;
	int rc;

	if (q->cqe == 0 || q->cqe > UROCE_MAX_CQE)
		return -EINVAL;
	rc = obj_get(s, q->cq_handle, OBJ_CQ, (void **)&cq);
	if (rc != 0)
		return rc;
	size = pow2_at_least(q->cqe);
	rc = uroce_shm_segment_create(&seg, "uroce-cq",
				      uroce_shm_ring_mem_size(size, sizeof(struct uroce_shm_cqe)), 0);
	if (rc != 0)
		return rc;
	if (cq->worker >= 0) {
		memset(&c, 0, sizeof(c));
		c.type = CMD_CQ_RESIZE;
		c.u.cq_resize.cq = cq;
		c.u.cq_resize.seg = &seg;
		c.u.cq_resize.size = size;
		rc = worker_call(d, (unsigned int)cq->worker, &c);
	} else {
		rc = cq_ring_move(cq, &seg, size);
	}
	if (rc != 0) {
		uroce_shm_segment_unmap(&seg);
		return rc;
	}
	p->cq_handle = cq->handle;
	p->cqe = cq->size;
	p->seg_size = cq->seg.size;
	p->ring_offset = 0;
	r->fd = cq->seg.fd;
	return 0;
}

/*
 * ibv_modify_cq with IBV_CQ_ATTR_MODERATE: the CQ's event moderation
 * (struct uroce_shm_msg_modify_cq_req). An unplaced CQ takes it at once; a
 * placed one through its worker, which owns the window.
 */
static int
do_modify_cq(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_modify_cq_req *q = body;
	struct dcmd c;
	struct dcq *cq;
	int rc;

	if (q->attr_mask != UROCE_CQ_ATTR_MODERATE || q->cq_period > UROCE_CQ_PERIOD_MAX ||
	    q->reserved != 0)
		return -EINVAL;
	rc = obj_get(s, q->cq_handle, OBJ_CQ, (void **)&cq);
	if (rc != 0)
		return rc;
	if (cq->worker < 0) {
		cq->mod_count = q->cq_count;
		cq->mod_period_us = q->cq_period;
		return 0;
	}
	memset(&c, 0, sizeof(c));
	c.type = CMD_CQ_MODERATE;
	c.u.cq_mod.cq = cq;
	c.u.cq_mod.count = q->cq_count;
	c.u.cq_mod.period_us = q->cq_period;
	return worker_call(d, (unsigned int)cq->worker, &c);
}

static int
do_destroy_cq(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dcq *cq;
	int rc = obj_get(s, q->handle, OBJ_CQ, (void **)&cq);

	if (rc != 0)
		return rc;
	rc = cq_free(d, cq);
	if (rc == 0)
		obj_del(s, q->handle);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* QP                                                                        */
/* ------------------------------------------------------------------------ */

/* Create the engine SRQ of @p srq on worker @p w, if it has none yet. */
static int
srq_place(struct uroce_daemon *d, struct dsrq *srq, unsigned int w)
{
	struct dcmd c;
	int rc;

	if (srq->worker >= 0)
		return srq->worker == (int)w ? 0 : -EXDEV;
	memset(&c, 0, sizeof(c));
	c.type = CMD_SRQ_CREATE;
	c.u.srq.srq = srq;
	c.u.srq.pd = srq->pd;
	rc = worker_call(d, w, &c);
	if (rc == 0)
		srq->worker = (int)w;
	return rc;
}

/* The worker a new QP goes to: that of whichever of its CQs and SRQ is
 * placed, else the next one; -EXDEV if they are placed on different ones. */
static int
qp_worker(struct uroce_daemon *d, struct session *s, struct dcq *scq, struct dcq *rcq,
	  struct dsrq *srq)
{
	int w = srq != NULL ? srq->worker : -1;

	if (scq->worker >= 0) {
		if (w >= 0 && w != scq->worker)
			return -EXDEV;
		w = scq->worker;
	}
	if (rcq->worker >= 0) {
		if (w >= 0 && w != rcq->worker)
			return -EXDEV;
		w = rcq->worker;
	}
	return w >= 0 ? w : (int)next_worker(d, s);
}

/* What a new QP is made of, once its handles are checked and it is placed. */
struct qp_plan {
	struct dpd *pd;
	struct dpd *xrcd;       /* an XRC TGT QP's domain (then no CQs, no SRQ) */
	struct dcq *scq, *rcq;
	struct dsrq *srq;
	unsigned int w;
	uint32_t sqn, rqn;
};

/*
 * An XRC TGT QP (IBA 1.2 XRC, ABI 1.7): in an XRC domain, on the domain's
 * worker, with no CQs and no queues (the segment holds a one-slot send ring
 * the daemon never reads: its doorbell slot is never served). Its receives
 * come from the domain's XRC SRQs, per request.
 */
static int
qp_plan_tgt(struct uroce_daemon *d, struct session *s,
	    const struct uroce_shm_msg_create_qp_req *q, struct qp_plan *pl)
{
	int rc;

	if (s->minor < 7)
		return -EOPNOTSUPP;
	rc = xrcd_get(s, q->pd_handle, &pl->xrcd);
	if (rc != 0)
		return rc;
	if (q->send_cq != UROCE_SHM_HANDLE_NONE || q->recv_cq != UROCE_SHM_HANDLE_NONE ||
	    q->srq_handle != UROCE_SHM_HANDLE_NONE || q->sq_sig_all != 0 ||
	    q->cap.max_send_wr != 0 || q->cap.max_recv_wr != 0 || q->cap.max_send_sge != 0 ||
	    q->cap.max_recv_sge != 0 || q->cap.max_inline_data != 0 || q->cap.reserved != 0)
		return -EINVAL;
	pl->pd = pl->xrcd; /* its hidden PD */
	pl->w = xrcd_worker(d, s, pl->xrcd, -1);
	pl->sqn = 1;
	pl->rqn = 0;
	return ws_ensure(d, s, pl->w);
}

/* RC, UC, UD and XRC initiator QPs: with their CQs and SRQ, on the worker
 * those are placed on (placing them there). */
static int
qp_plan(struct uroce_daemon *d, struct session *s, const struct uroce_shm_msg_create_qp_req *q,
	struct qp_plan *pl)
{
	bool ini = q->qp_type == UROCE_QPT_XRC_SEND;
	int rc, w;

	rc = pd_get(s, q->pd_handle, &pl->pd);
	if (rc == 0)
		rc = obj_get(s, q->send_cq, OBJ_CQ, (void **)&pl->scq);
	if (rc == 0)
		rc = obj_get(s, q->recv_cq, OBJ_CQ, (void **)&pl->rcq);
	/* Another client's SRQ handle: -EPERM; no such SRQ: -ENOENT. */
	if (rc == 0 && q->srq_handle != UROCE_SHM_HANDLE_NONE)
		rc = obj_get(s, q->srq_handle, OBJ_SRQ, (void **)&pl->srq);
	if (rc != 0)
		return rc;
	if (q->qp_type != UROCE_QPT_RC && q->qp_type != UROCE_QPT_UC &&
	    q->qp_type != UROCE_QPT_UD && !ini)
		return -EINVAL;
	/* IBA 1.2 XRC: an initiator has no receive queue (ibv_create_qp
	 * ignores its receive capacities) and takes no SRQ. */
	if (ini && s->minor < 7)
		return -EOPNOTSUPP;
	if (ini && pl->srq != NULL)
		return -EINVAL;
	/* With an SRQ the receive capacities are the SRQ's (ibv_qp_init_attr
	 * ignores max_recv_wr and max_recv_sge then). */
	if (q->sq_sig_all > 1 || q->cap.reserved != 0 || q->cap.max_send_wr == 0 ||
	    q->cap.max_send_wr > UROCE_MAX_QP_WR || q->cap.max_send_sge > UROCE_MAX_SGE ||
	    q->cap.max_inline_data > UROCE_MAX_INLINE ||
	    (pl->srq == NULL && !ini &&
	     (q->cap.max_recv_wr == 0 || q->cap.max_recv_wr > UROCE_MAX_QP_WR ||
	      q->cap.max_recv_sge > UROCE_MAX_SGE)))
		return -EINVAL;
	w = qp_worker(d, s, pl->scq, pl->rcq, pl->srq);
	if (w < 0)
		return w;
	pl->w = (unsigned int)w;
	rc = ws_ensure(d, s, pl->w);
	if (rc == 0)
		rc = cq_place(d, pl->scq, pl->w);
	if (rc == 0)
		rc = cq_place(d, pl->rcq, pl->w);
	if (rc == 0 && pl->srq != NULL)
		rc = srq_place(d, pl->srq, pl->w);
	pl->sqn = pow2_at_least(q->cap.max_send_wr);
	pl->rqn = pl->srq != NULL || ini ? 0 : pow2_at_least(q->cap.max_recv_wr);
	return rc;
}

static int
do_create_qp(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_create_qp_req *q = body;
	struct uroce_shm_msg_create_qp_resp *p = r->body;
	struct uroce_shm_qp_layout lay;
	struct qp_plan pl;
	struct dqp *qp;
	uint32_t slot;
	struct dcmd c;
	int rc;

	memset(&pl, 0, sizeof(pl));
	rc = q->qp_type == UROCE_QPT_XRC_RECV ? qp_plan_tgt(d, s, q, &pl) : qp_plan(d, s, q, &pl);
	if (rc == 0)
		rc = uroce_shm_qp_layout(pl.sqn, pl.rqn, &lay);
	if (rc == 0)
		rc = slot_alloc(s, pl.w, &slot);
	if (rc != 0)
		return rc;
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL) {
		rc = -ENOMEM;
		goto fail_slot;
	}
	qp->owner = s;
	qp->worker = (int)pl.w;
	qp->slot = slot;
	qp->type = q->qp_type;
	qp->sig_all = q->sq_sig_all;
	qp->pd = pl.pd;
	qp->xrcd = pl.xrcd;
	qp->scq = pl.scq;
	qp->rcq = pl.rcq;
	qp->srq = pl.srq;
	qp->max_send_wr = pl.sqn;
	qp->max_recv_wr = pl.rqn;
	qp->max_send_sge = q->cap.max_send_sge ? q->cap.max_send_sge : 1;
	qp->max_recv_sge = pl.rqn == 0 ? 0 : q->cap.max_recv_sge ? q->cap.max_recv_sge : 1;
	qp->max_inline = q->cap.max_inline_data;
	rc = uroce_shm_segment_create(&qp->seg, "uroce-qp", lay.total, 0);
	if (rc != 0)
		goto fail_free;
	rc = uroce_shm_ring_init(&qp->sq, (uint8_t *)qp->seg.addr + lay.sq_offset, lay.sq_bytes,
				 pl.sqn, sizeof(struct uroce_shm_send_wqe), 0,
				 UROCE_SHM_RING_CONSUMER, UROCE_SHM_RING_F_UNTRUSTED);
	if (rc == 0 && pl.rqn > 0)
		rc = uroce_shm_ring_init(&qp->rq, (uint8_t *)qp->seg.addr + lay.rq_offset,
					 lay.rq_bytes, pl.rqn, sizeof(struct uroce_shm_recv_wqe), 0,
					 UROCE_SHM_RING_CONSUMER, UROCE_SHM_RING_F_UNTRUSTED);
	if (rc != 0)
		goto fail_seg;
	rc = obj_add(s, OBJ_QP, qp, &p->qp_handle);
	if (rc != 0)
		goto fail_seg;
	qp->handle = p->qp_handle;
	memset(&c, 0, sizeof(c));
	c.type = CMD_QP_CREATE;
	c.u.qp.qp = qp;
	rc = worker_call(d, pl.w, &c);
	if (rc != 0)
		goto fail_obj;
	if (pl.xrcd != NULL) {
		pl.xrcd->xrcd_users++;
	} else {
		pl.scq->qps++;
		pl.rcq->qps++;
	}
	if (pl.srq != NULL)
		pl.srq->qps++;
	d->st.qps++;
	p->qp_num = qp->qpn;
	if (pl.xrcd == NULL) {
		p->cap.max_send_wr = qp->max_send_wr;
		p->cap.max_recv_wr = qp->max_recv_wr;
		p->cap.max_send_sge = qp->max_send_sge;
		p->cap.max_recv_sge = qp->max_recv_sge;
		p->cap.max_inline_data = qp->max_inline;
	}
	p->seg_size = qp->seg.size;
	p->sq_offset = lay.sq_offset;
	p->rq_offset = lay.rq_offset;
	p->db_block = s->n_db_blocks > 1 ? pl.w : 0;
	p->db_slot = slot;
	r->fd = qp->seg.fd;
	return 0;
fail_obj:
	obj_del(s, qp->handle);
fail_seg:
	uroce_shm_segment_unmap(&qp->seg);
fail_free:
	free(qp);
fail_slot:
	slot_free(s, pl.w, slot);
	return rc;
}

static void
qp_free(struct uroce_daemon *d, struct session *s, struct dqp *qp)
{
	struct dcmd c;

	memset(&c, 0, sizeof(c));
	c.type = CMD_QP_DESTROY;
	c.u.qp.qp = qp;
	worker_call(d, (unsigned int)qp->worker, &c);
	slot_free(s, (unsigned int)qp->worker, qp->slot);
	if (qp->xrcd != NULL) {
		qp->xrcd->xrcd_users--;
	} else {
		qp->scq->qps--;
		qp->rcq->qps--;
	}
	if (qp->srq != NULL)
		qp->srq->qps--;
	uroce_shm_segment_unmap(&qp->seg);
	free(qp);
	d->st.qps--;
}

static int
do_destroy_qp(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dqp *qp;
	int rc = obj_get(s, q->handle, OBJ_QP, (void **)&qp);

	if (rc != 0)
		return rc;
	obj_del(s, q->handle);
	qp_free(d, s, qp);
	return 0;
}

static int
do_modify_qp(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_modify_qp_req *q = body;
	const struct uroce_shm_qp_attr *a = &q->attr;
	struct uroce_eng_qp_attr at;
	struct dqp *qp;
	struct dcmd c;
	int rc = obj_get(s, q->qp_handle, OBJ_QP, (void **)&qp);

	if (rc != 0)
		return rc;
	if (a->reserved0 != 0 || a->reserved1 != 0 || (q->attr_mask & UROCE_QP_CAP))
		return -EINVAL;
	memset(&at, 0, sizeof(at));
	if (q->attr_mask & UROCE_QP_AV) {
		rc = sgid_lookup(d, a->ah_attr.sgid_index, at.ah_attr.sgid);
		if (rc != 0)
			return rc;
	}
	/* A path MTU above the port's active MTU could never be carried. */
	if ((q->attr_mask & UROCE_QP_PATH_MTU) && a->path_mtu > d->active_mtu)
		return -EINVAL;
	/* IBA 10.2.5: a Q_Key with the high bit set is privileged (QP1's is
	 * 0x80010000); with it an unprivileged client could forge CM MADs. As
	 * Linux, only root may set one. */
	if ((q->attr_mask & UROCE_QP_QKEY) && (a->qkey & UROCE_QKEY_PRIVILEGED) && s->uid != 0)
		return -EPERM;
	at.qp_state = (enum uroce_qp_state)a->qp_state;
	at.cur_qp_state = (enum uroce_qp_state)a->cur_qp_state;
	at.path_mtu = (enum uroce_mtu)a->path_mtu;
	at.qkey = a->qkey;
	at.rq_psn = a->rq_psn;
	at.sq_psn = a->sq_psn;
	at.dest_qp_num = a->dest_qp_num;
	at.qp_access_flags = (int)a->qp_access_flags;
	at.pkey_index = a->pkey_index;
	at.port_num = a->port_num;
	at.max_rd_atomic = a->max_rd_atomic;
	at.max_dest_rd_atomic = a->max_dest_rd_atomic;
	at.min_rnr_timer = a->min_rnr_timer;
	at.timeout = a->timeout;
	at.retry_cnt = a->retry_cnt;
	at.rnr_retry = a->rnr_retry;
	memcpy(at.ah_attr.dgid, a->ah_attr.dgid, 16);
	at.ah_attr.flow_label = a->ah_attr.flow_label;
	at.ah_attr.hop_limit = a->ah_attr.hop_limit;
	at.ah_attr.tclass = a->ah_attr.traffic_class;
	at.ah_attr.sl = a->ah_attr.sl;
	at.ah_attr.port_num = a->ah_attr.port_num;
	memset(&c, 0, sizeof(c));
	c.type = CMD_QP_MODIFY;
	c.u.qp.qp = qp;
	c.u.qp.attr = &at;
	c.u.qp.mask = (int)q->attr_mask;
	/* Before the worker may send: its answer is the first packet's business. */
	if (q->attr_mask & UROCE_QP_AV)
		(void)route_prime(d, at.ah_attr.dgid);
	return worker_call(d, (unsigned int)qp->worker, &c);
}

/* The engine-side facts of @p qp, from its worker. */

static int
do_query_qp(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_query_qp_req *q = body;
	struct uroce_shm_msg_query_qp_resp *p = r->body;
	const struct uroce_eng_qp_attr *a;
	struct dqp_state st;
	struct dqp *qp;
	unsigned int i;
	int rc = obj_get(s, q->qp_handle, OBJ_QP, (void **)&qp);

	if (rc != 0)
		return rc;
	rc = qp_state_query(d, qp, &st);
	if (rc != 0)
		return rc;
	a = &st.attr;
	p->attr.qp_state = a->qp_state;
	p->attr.cur_qp_state = a->qp_state;
	p->attr.path_mtu = a->path_mtu;
	p->attr.qkey = a->qkey;
	p->attr.rq_psn = a->rq_psn;
	p->attr.sq_psn = a->sq_psn;
	p->attr.dest_qp_num = a->dest_qp_num;
	p->attr.qp_access_flags = (uint32_t)a->qp_access_flags;
	p->attr.pkey_index = a->pkey_index;
	p->attr.port_num = a->port_num;
	p->attr.max_rd_atomic = a->max_rd_atomic;
	p->attr.max_dest_rd_atomic = a->max_dest_rd_atomic;
	p->attr.min_rnr_timer = a->min_rnr_timer;
	p->attr.timeout = a->timeout;
	p->attr.retry_cnt = a->retry_cnt;
	p->attr.rnr_retry = a->rnr_retry;
	p->attr.sq_draining = a->sq_draining;
	memcpy(p->attr.ah_attr.dgid, a->ah_attr.dgid, 16);
	p->attr.ah_attr.flow_label = a->ah_attr.flow_label;
	p->attr.ah_attr.hop_limit = a->ah_attr.hop_limit;
	p->attr.ah_attr.traffic_class = a->ah_attr.tclass;
	p->attr.ah_attr.sl = a->ah_attr.sl;
	p->attr.ah_attr.port_num = a->ah_attr.port_num;
	p->attr.ah_attr.is_global = 1;
	for (i = 0; i < d->n_gid; i++)
		if (memcmp(d->gids[i], a->ah_attr.sgid, 16) == 0)
			p->attr.ah_attr.sgid_index = (uint8_t)i;
	/* Report the daemon's view of the queues (what the rings hold). */
	p->cap.max_send_wr = qp->max_send_wr;
	p->cap.max_recv_wr = qp->max_recv_wr;
	p->cap.max_send_sge = qp->max_send_sge;
	p->cap.max_recv_sge = qp->max_recv_sge;
	p->cap.max_inline_data = qp->max_inline;
	p->qp_type = qp->type;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* SRQ                                                                       */
/* ------------------------------------------------------------------------ */

/* A new SRQ of @p pd whose doorbell is in worker @p w's block, its reply
 * in @p p and @p r; not placed yet. */
static int
srq_new(struct uroce_daemon *d, struct session *s, struct dpd *pd,
	const struct uroce_shm_msg_create_srq_req *q, unsigned int w,
	struct uroce_shm_msg_create_srq_resp *p, struct reply *r, struct dsrq **out)
{
	struct dsrq *srq;
	uint32_t slot;
	size_t mem;
	int rc;

	/* ibv_create_srq: the limit must not exceed max_wr (0: not armed). */
	if (q->max_wr == 0 || q->max_wr > UROCE_MAX_QP_WR || q->max_sge > UROCE_MAX_SGE ||
	    q->srq_limit > q->max_wr)
		return -EINVAL;
	if (d->st.srqs >= DAEMON_MAX_SRQ)
		return -ENOMEM;
	rc = ws_ensure(d, s, w);
	if (rc != 0)
		return rc;
	rc = slot_alloc(s, w, &slot);
	if (rc != 0)
		return rc;
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL) {
		rc = -ENOMEM;
		goto fail_slot;
	}
	srq->owner = s;
	srq->pd = pd;
	srq->worker = -1;
	srq->db_worker = w;
	srq->slot = slot;
	srq->max_wr = pow2_at_least(q->max_wr);
	srq->max_sge = q->max_sge ? q->max_sge : 1;
	srq->limit = q->srq_limit;
	mem = uroce_shm_ring_mem_size(srq->max_wr, sizeof(struct uroce_shm_recv_wqe));
	rc = uroce_shm_segment_create(&srq->seg, "uroce-srq", mem, 0);
	if (rc != 0)
		goto fail_free;
	rc = uroce_shm_ring_init(&srq->ring, srq->seg.addr, srq->seg.size, srq->max_wr,
				 sizeof(struct uroce_shm_recv_wqe), 0, UROCE_SHM_RING_CONSUMER,
				 UROCE_SHM_RING_F_UNTRUSTED);
	if (rc != 0)
		goto fail_seg;
	rc = obj_add(s, OBJ_SRQ, srq, &p->srq_handle);
	if (rc != 0)
		goto fail_seg;
	srq->handle = p->srq_handle;
	d->st.srqs++;
	p->max_wr = srq->max_wr;
	p->max_sge = srq->max_sge;
	p->seg_size = srq->seg.size;
	p->ring_offset = 0;
	p->db_block = s->n_db_blocks > 1 ? w : 0;
	p->db_slot = slot;
	r->fd = srq->seg.fd;
	*out = srq;
	return 0;
fail_seg:
	uroce_shm_segment_unmap(&srq->seg);
fail_free:
	free(srq);
fail_slot:
	slot_free(s, w, slot);
	return rc;
}

static int
do_create_srq(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	struct dsrq *srq;
	struct dpd *pd;
	int rc;

	/* A 1.0 client would never ring the SRQ's doorbell slot. */
	if (s->minor < 1)
		return -EOPNOTSUPP;
	rc = pd_get(s, ((const struct uroce_shm_msg_create_srq_req *)body)->pd_handle, &pd);
	if (rc != 0)
		return rc;
	/* Its doorbell block: the worker of the client's CQ placed last, if any
	 * (its QPs will likely share that CQ), else the next one. The SRQ itself
	 * is placed with its first QP, wherever that goes. */
	return srq_new(d, s, pd, body,
		       s->last_cq_worker >= 0 ? (unsigned int)s->last_cq_worker : next_worker(d, s),
		       r->body, r, &srq);
}

static int srq_free(struct uroce_daemon *d, struct session *s, struct dsrq *srq);

/*
 * ibv_create_srq_ex with IBV_SRQT_XRC (ABI 1.7, IBA 1.2 XRC): placed at once
 * on its domain's worker (placed here if it was not, with the CQ's worker
 * if the CQ is placed), its doorbell in that worker's block, its CQ there
 * too (-EXDEV if the CQ runs elsewhere). Its number is what remote XRC
 * requests name.
 */
static int
do_create_xrc_srq(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_create_xrc_srq_req *q = body;
	struct uroce_shm_msg_create_xrc_srq_resp *p = r->body;
	struct uroce_shm_msg_create_srq_req sq;
	struct dsrq *srq;
	struct dpd *pd, *x;
	struct dcq *cq;
	unsigned int w;
	int rc;

	if (s->minor < 7)
		return -EOPNOTSUPP;
	rc = pd_get(s, q->pd_handle, &pd);
	if (rc == 0)
		rc = xrcd_get(s, q->xrcd_handle, &x);
	if (rc == 0)
		rc = obj_get(s, q->cq_handle, OBJ_CQ, (void **)&cq);
	if (rc != 0)
		return rc;
	if (x->xrcd_worker >= 0 && cq->worker >= 0 && x->xrcd_worker != cq->worker)
		return -EXDEV;
	w = xrcd_worker(d, s, x, cq->worker);
	rc = cq_place(d, cq, w);
	if (rc != 0)
		return rc;
	memset(&sq, 0, sizeof(sq));
	sq.pd_handle = q->pd_handle;
	sq.max_wr = q->max_wr;
	sq.max_sge = q->max_sge;
	sq.srq_limit = q->srq_limit;
	rc = srq_new(d, s, pd, &sq, w, &p->srq, r, &srq);
	if (rc != 0)
		return rc;
	srq->xrcd = x;
	srq->cq = cq;
	rc = srq_place(d, srq, w);
	if (rc != 0) {
		r->fd = -1;
		obj_del(s, srq->handle);
		srq_free(d, s, srq);
		return rc;
	}
	x->xrcd_users++;
	cq->qps++; /* the CQ is in use: DESTROY_CQ is -EBUSY until the SRQ goes */
	p->srq_num = srq->srqn;
	return 0;
}

/* Release an SRQ no QP uses any more (the engine SRQ with its WQEs too). */
static int
srq_free(struct uroce_daemon *d, struct session *s, struct dsrq *srq)
{
	struct dcmd c;
	int rc;

	if (srq->qps != 0)
		return -EBUSY;
	if (srq->worker >= 0) {
		memset(&c, 0, sizeof(c));
		c.type = CMD_SRQ_DESTROY;
		c.u.srq.srq = srq;
		rc = worker_call(d, (unsigned int)srq->worker, &c);
		if (rc != 0)
			return rc;
	}
	slot_free(s, srq->db_worker, srq->slot);
	if (srq->xrcd != NULL && srq->worker >= 0) {
		srq->xrcd->xrcd_users--;
		srq->cq->qps--;
	}
	uroce_shm_segment_unmap(&srq->seg);
	free(srq);
	d->st.srqs--;
	return 0;
}

static int
do_destroy_srq(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_handle *q = body;
	struct dsrq *srq;
	int rc = obj_get(s, q->handle, OBJ_SRQ, (void **)&srq);

	if (rc != 0)
		return rc;
	if (q->reserved != 0)
		return -EINVAL;
	rc = srq_free(d, s, srq); /* -EBUSY while a QP uses it (ibv_destroy_srq) */
	if (rc != 0)
		return rc;
	obj_del(s, q->handle);
	return 0;
}

/*
 * ibv_modify_srq: IBV_SRQ_LIMIT arms the limit (0 disarms; above max_wr is
 * EINVAL); IBV_SRQ_MAX_WR resizes, which this device does not do (it reports
 * no IBV_DEVICE_SRQ_RESIZE), so it is EINVAL as in verbs. Arming when the SRQ
 * already holds fewer WQEs than the limit reports the event at once.
 */
static int
do_modify_srq(struct uroce_daemon *d, struct session *s, const void *body)
{
	const struct uroce_shm_msg_modify_srq_req *q = body;
	struct dsrq *srq;
	struct dcmd c;
	int rc = obj_get(s, q->srq_handle, OBJ_SRQ, (void **)&srq);

	if (rc != 0)
		return rc;
	if (q->attr_mask == 0 || (q->attr_mask & ~(UROCE_SRQ_MAX_WR | UROCE_SRQ_LIMIT)) != 0 ||
	    (q->attr_mask & UROCE_SRQ_MAX_WR))
		return -EINVAL;
	if (q->srq_limit > srq->max_wr)
		return -EINVAL;
	if (srq->worker < 0) {
		/* Not placed: nothing takes its WQEs; the ring holds them all. */
		srq->limit = q->srq_limit;
		if (srq->limit != 0 && uroce_shm_ring_used_count(&srq->ring) < srq->limit) {
			srq->limit = 0;
			session_event(d, s, UROCE_ASYNC_SRQ_LIMIT_REACHED, srq->handle);
		}
		return 0;
	}
	memset(&c, 0, sizeof(c));
	c.type = CMD_SRQ_LIMIT;
	c.u.srq.srq = srq;
	c.u.srq.limit = q->srq_limit;
	return worker_call(d, (unsigned int)srq->worker, &c);
}

static int
do_query_srq(struct uroce_daemon *d, struct session *s, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_handle *q = body;
	struct uroce_shm_msg_query_srq_resp *p = r->body;
	struct dsrq *srq;
	struct dcmd c;
	int rc = obj_get(s, q->handle, OBJ_SRQ, (void **)&srq);

	if (rc != 0)
		return rc;
	memset(&c, 0, sizeof(c));
	c.type = CMD_SRQ_QUERY;
	c.u.srq.srq = srq;
	if (srq->worker >= 0) {
		rc = worker_call(d, (unsigned int)srq->worker, &c);
		if (rc != 0)
			return rc;
	} else {
		c.u.srq.limit = srq->limit;
	}
	p->max_wr = srq->max_wr;
	p->max_sge = srq->max_sge;
	p->srq_limit = c.u.srq.limit; /* 0 once the limit event fired (disarmed) */
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Device queries                                                            */
/* ------------------------------------------------------------------------ */

uint64_t
daemon_node_guid(const struct uroce_daemon *d)
{
	return (uint64_t)d->gids[0][12] << 24 | (uint64_t)d->gids[0][13] << 16 |
	       (uint64_t)d->gids[0][14] << 8 | d->gids[0][15];
}

/* The status segment, read-only for the client (sealed FUTURE_WRITE). */
static int
do_get_status(struct uroce_daemon *d, struct reply *r)
{
	struct uroce_shm_msg_get_status_resp *p = r->body;

	if (d->status == NULL)
		return -EOPNOTSUPP;
	p->size = UROCE_SHM_STATUS_SIZE;
	r->fd = d->status_fd;
	return 0;
}

static void
do_query_device(struct uroce_daemon *d, struct reply *r)
{
	struct uroce_shm_msg_query_device_resp *p = r->body;

	p->node_guid = daemon_node_guid(d);
	p->sys_image_guid = p->node_guid;
	/* No IEEE OUI of its own: the "no vendor" id Linux's software RoCE
	 * device (rxe) reports, so that programs do not take 0 for "no device". */
	p->vendor_id = UROCE_VENDOR_ID_NONE;
	p->max_mr_size = UINT64_MAX;
	p->page_size_cap = 4096;
	p->max_qp = UROCE_MAX_QP - UROCE_FIRST_USER_QPN;
	p->max_qp_wr = UROCE_MAX_QP_WR;
	p->max_sge = UROCE_MAX_SGE;
	p->max_cq = DAEMON_MAX_CQ;
	p->max_cqe = UROCE_MAX_CQE;
	p->max_mr = UROCE_MAX_MR - 1; /* key index 0 is never used */
	p->max_pd = DAEMON_MAX_PD;
	p->max_qp_rd_atom = UROCE_MAX_DEST_RD_ATOMIC;
	p->max_qp_init_rd_atom = UROCE_MAX_RD_ATOMIC;
	p->max_srq = DAEMON_MAX_SRQ;
	p->max_srq_wr = UROCE_MAX_QP_WR;
	p->max_srq_sge = UROCE_MAX_SGE;
	p->max_ah = DAEMON_MAX_AH;
	p->max_inline_data = UROCE_MAX_INLINE;
	/* An ATOMIC is one CPU atomic on the client's own memory (resp.c), so
	 * the client's CPU atomics on the word see it as indivisible. */
	p->atomic_cap = UROCE_ATOMIC_GLOB;
	/* Memory windows type 1 and 2B (IBA 10.6.7, mr.c). */
	p->device_cap_flags = UROCE_DEVICE_MEM_WINDOW | UROCE_DEVICE_MEM_WINDOW_TYPE_2B |
			      UROCE_DEVICE_XRC;
	p->phys_port_cnt = 1;
	p->max_pkeys = 1;
}

static int
do_query_port(struct uroce_daemon *d, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_query_port_req *q = body;
	struct uroce_shm_msg_query_port_resp *p = r->body;

	if (q->port_num != 1)
		return -EINVAL;
	p->state = 4;        /* IBV_PORT_ACTIVE */
	p->max_mtu = 5;      /* 4096 */
	p->active_mtu = d->active_mtu;
	p->gid_tbl_len = d->n_gid;
	p->max_msg_sz = UROCE_MAX_MSG_SIZE;
	p->pkey_tbl_len = 1;
	p->active_speed = 1;
	p->active_width = 1;
	p->phys_state = 5;   /* LinkUp */
	p->link_layer = 2;   /* IBV_LINK_LAYER_ETHERNET */
	return 0;
}

static int
do_query_gid(struct uroce_daemon *d, const void *body, struct reply *r)
{
	const struct uroce_shm_msg_query_gid_req *q = body;
	struct uroce_shm_msg_query_gid_resp *p = r->body;

	if (q->port_num != 1 || q->index >= d->n_gid)
		return -EINVAL;
	/* An empty slot reads as the zero GID, as ibv_query_gid does. */
	memcpy(p->gid, d->gids[q->index], 16);
	p->gid_type = 1; /* RoCEv2 */
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Events to clients                                                         */
/* ------------------------------------------------------------------------ */

/*
 * Tell a client about an event on one of its objects with an unprompted
 * ASYNC_EVENT (seq 0). The session socket is non-blocking and this never
 * waits: replies must always find room, so when more than half of the
 * socket's send buffer is still unread the event is dropped and counted
 * (async_dropped), as it is when the send fails.
 */
void
session_event(struct uroce_daemon *d, struct session *s, uint32_t type, uint32_t handle)
{
	uint8_t buf[sizeof(struct uroce_shm_msg_hdr) + sizeof(struct uroce_shm_msg_async_event)];
	struct uroce_shm_msg_async_event *ev;
	socklen_t sl = sizeof(int);
	int n, outq = 0, sndbuf = 0;

	/* A 1.0 client has no consumer for events: it is sent none. */
	if (s == NULL || s->dead || !s->hello || s->minor < 1)
		return;
	if (ioctl(s->fd, SIOCOUTQ, &outq) != 0 ||
	    getsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl) != 0 || outq > sndbuf / 2) {
		d->st.async_dropped++;
		return;
	}
	n = uroce_shm_msg_init(buf, sizeof(buf), UROCE_SHM_MSG_ASYNC_EVENT, 0, true, 0);
	if (n != (int)sizeof(buf)) {
		d->st.async_dropped++;
		return;
	}
	ev = (void *)(buf + sizeof(struct uroce_shm_msg_hdr));
	ev->event_type = type;
	ev->handle = handle;
	if (uroce_shm_sock_send(s->fd, buf, sizeof(buf), -1) == (ssize_t)sizeof(buf))
		d->st.async_events++;
	else
		d->st.async_dropped++;
}

int
control_dispatch(struct uroce_daemon *d, struct session *s, uint16_t type, const void *body,
		 int *fd, struct reply *r)
{
	switch (type) {
	case UROCE_SHM_MSG_HELLO:
		return do_hello(d, s, body, r);
	case UROCE_SHM_MSG_ALLOC_SEGMENT:
		return do_alloc_segment(d, s, body, fd, r);
	case UROCE_SHM_MSG_FREE_SEGMENT:
		return do_free_segment(d, s, body);
	case UROCE_SHM_MSG_ALLOC_PD:
		return do_alloc_pd(d, s, r);
	case UROCE_SHM_MSG_DEALLOC_PD:
		return do_dealloc_pd(d, s, body);
	case UROCE_SHM_MSG_REG_MR:
		return do_reg_mr(d, s, body, r);
	case UROCE_SHM_MSG_DEREG_MR:
		return do_dereg_mr(d, s, body);
	case UROCE_SHM_MSG_ALLOC_MW:
		return do_alloc_mw(d, s, body, r);
	case UROCE_SHM_MSG_DEALLOC_MW:
		return do_dealloc_mw(d, s, body);
	case UROCE_SHM_MSG_REREG_MR:
		return do_rereg_mr(d, s, body, r);
	case UROCE_SHM_MSG_CREATE_CQ:
		return do_create_cq(d, s, body, fd, r);
	case UROCE_SHM_MSG_DESTROY_CQ:
		return do_destroy_cq(d, s, body);
	case UROCE_SHM_MSG_RESIZE_CQ:
		return do_resize_cq(d, s, body, r);
	case UROCE_SHM_MSG_MODIFY_CQ:
		return do_modify_cq(d, s, body);
	case UROCE_SHM_MSG_CREATE_QP:
		return do_create_qp(d, s, body, r);
	case UROCE_SHM_MSG_DESTROY_QP:
		return do_destroy_qp(d, s, body);
	case UROCE_SHM_MSG_MODIFY_QP:
		return do_modify_qp(d, s, body);
	case UROCE_SHM_MSG_QUERY_QP:
		return do_query_qp(d, s, body, r);
	case UROCE_SHM_MSG_CREATE_AH:
		return do_create_ah(d, s, body, r);
	case UROCE_SHM_MSG_DESTROY_AH:
		return do_destroy_ah(d, s, body);
	case UROCE_SHM_MSG_QUERY_DEVICE:
		do_query_device(d, r);
		return 0;
	case UROCE_SHM_MSG_QUERY_PORT:
		return do_query_port(d, body, r);
	case UROCE_SHM_MSG_CREATE_SRQ:
		return do_create_srq(d, s, body, r);
	case UROCE_SHM_MSG_DESTROY_SRQ:
		return do_destroy_srq(d, s, body);
	case UROCE_SHM_MSG_MODIFY_SRQ:
		return do_modify_srq(d, s, body);
	case UROCE_SHM_MSG_QUERY_SRQ:
		return do_query_srq(d, s, body, r);
	case UROCE_SHM_MSG_QUERY_GID:
		return do_query_gid(d, body, r);
	case UROCE_SHM_MSG_GET_STATUS:
		return do_get_status(d, r);
	case UROCE_SHM_MSG_OPEN_XRCD:
		return do_open_xrcd(d, s, r);
	case UROCE_SHM_MSG_CLOSE_XRCD:
		return do_close_xrcd(d, s, body);
	case UROCE_SHM_MSG_CREATE_XRC_SRQ:
		return do_create_xrc_srq(d, s, body, r);
	default:
		return -EOPNOTSUPP;
	}
}

/*
 * Tear a session down. Its doorbell blocks are served no more; its QPs go,
 * then SRQs and CQs on their workers; then AHs and MRs leave the device, and
 * once every worker has come round (none holds an MR pointer into the
 * session's memory any more) they are freed with PDs and segments.
 *
 * The MRs are revoked only once the QPs are gone: only a QP of the same PD
 * can use them, and a QP still alive would answer a request in flight, or
 * send a READ response it had queued, with a remote access error NAK for a
 * key it no longer finds, and tell its peer "you named a bad key" (issue 16,
 * the soak's spurious remote access error). A destroyed QP answers nothing:
 * the peer sees silence, as when a process with a ConnectX QP dies.
 */
void
control_session_free(struct uroce_daemon *d, struct session *s)
{
	static const uint8_t order[] = {OBJ_QP, OBJ_SRQ, OBJ_CQ, OBJ_AH, OBJ_MR, OBJ_PD,
					OBJ_SEG};
	unsigned int k, w;
	struct dcmd c;
	uint32_t i;

	for (w = 0; w < d->n_workers; w++) {
		if (s->ws[w] == NULL)
			continue;
		memset(&c, 0, sizeof(c));
		c.type = CMD_WS_DEL;
		c.u.ws = s->ws[w];
		worker_call(d, w, &c);
	}
	for (k = 0; k < sizeof(order); k++) {
		if (order[k] == OBJ_AH) {
			for (i = 0; i < s->nobjs; i++) {
				uint8_t t;
				void *o = obj_at(s, i, &t);

				if (t == OBJ_MR)
					uroce_eng_mr_revoke(((struct dmr *)o)->mr);
			}
			daemon_barrier(d); /* after the QPs, before AHs, MRs, memory go */
		}
		for (i = 0; i < s->nobjs; i++) {
			uint8_t t;
			void *o = obj_at(s, i, &t);

			if (o == NULL || t != order[k])
				continue;
			obj_del(s, (uint32_t)s->id << 16 | i);
			switch (t) {
			case OBJ_QP:
				qp_free(d, s, o);
				break;
			case OBJ_SRQ:
				srq_free(d, s, o);
				break;
			case OBJ_CQ:
				cq_free(d, o);
				break;
			case OBJ_AH:
				ah_free(d, o);
				break;
			case OBJ_MR:
				mr_free(d, o);
				break;
			case OBJ_PD:
				uroce_eng_pd_dealloc(((struct dpd *)o)->pd);
				free(o);
				d->st.pds--;
				break;
			case OBJ_SEG:
				seg_put(d, o);
				break;
			}
		}
	}
	/* The workers dropped these at CMD_WS_DEL; QP and SRQ teardown above
	 * still cleared their slots in them. */
	for (w = 0; w < d->n_workers; w++) {
		free(s->ws[w]);
		s->ws[w] = NULL;
	}
}
