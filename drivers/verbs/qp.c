/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Queue pairs and shared receive queues: creation (ibv_create_qp and
 * ibv_create_qp_ex), modify/query, the legacy posting ops (ibv_post_send,
 * ibv_post_recv, ibv_post_srq_recv) and the ibv_wr_* builder of ibv_qp_ex.
 * Both posting APIs write each WQE straight into its slot of liburoce's send
 * ring (uroce_sq_begin/slot/end) and ring the doorbell once per batch: the
 * same stores uroce_post_send() makes, no more.
 */

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dv_internal.h"

/* ------------------------------------------------------------------------ */
/* Filling WQEs                                                              */
/* ------------------------------------------------------------------------ */

/* An ibv_sge is a struct uroce_sge: SGE lists pass through as they are. */
_Static_assert(sizeof(struct ibv_sge) == sizeof(struct uroce_sge) &&
	       offsetof(struct ibv_sge, length) == offsetof(struct uroce_sge, length) &&
	       offsetof(struct ibv_sge, lkey) == offsetof(struct uroce_sge, lkey),
	       "struct ibv_sge and struct uroce_sge have one layout");

/* The WQE's inline data: @p n buffers (ibv_data_buf) or SGEs used as plain
 * pointers (their lkeys ignored). @return 0 or EINVAL. */
static int
put_inline(const struct dv_qp *qp, struct uroce_shm_send_wqe *w, size_t n,
	   const struct ibv_data_buf *bufs, const struct ibv_sge *sges)
{
	size_t i;

	w->inline_len = 0;
	for (i = 0; i < n; i++) {
		const void *a = bufs != NULL ? bufs[i].addr : (const void *)(uintptr_t)sges[i].addr;
		size_t l = bufs != NULL ? bufs[i].length : sges[i].length;

		if (uroce_wqe_add_inline(w, qp->uqp, a, l) != 0)
			return EINVAL;
	}
	return 0;
}

/* A UD destination of the builder or of an ibv_send_wr. @return 0 or EINVAL. */
static int
put_ud(const struct dv_qp *qp, struct uroce_shm_send_wqe *w, struct ibv_ah *ah,
       uint32_t remote_qpn, uint32_t qkey)
{
	if (ah == NULL || ah->context != qp->qpx.qp_base.context)
		return EINVAL;
	return uroce_wqe_set_ud(w, qp->uqp, ((struct dv_ah *)ah)->uah, remote_qpn, qkey) != 0 ?
	       EINVAL : 0;
}

/* ibv_send_wr to a send WQE whose control part is zero, with liburoce's fill
 * helpers (the opcode and flag numbers are libibverbs'). @return 0 or EINVAL. */
static int
fill_send_wqe(const struct dv_qp *qp, const struct ibv_send_wr *wr, struct uroce_shm_send_wqe *w)
{
	uint32_t props = uroce_wr_props(wr->opcode);

	if (wr->num_sge < 0 || (wr->num_sge > 0 && wr->sg_list == NULL) ||
	    uroce_wqe_start(w, qp->uqp, wr->wr_id, wr->opcode, wr->send_flags) != 0)
		return EINVAL;
	if (wr->opcode == IBV_WR_BIND_MW)
		return wr->num_sge != 0 || (wr->send_flags & IBV_SEND_INLINE) ? EINVAL :
		       dv_bind_fill(w, wr->bind_mw.mw, wr->bind_mw.rkey, &wr->bind_mw.bind_info);
	/* ATOMIC WRITE (and rdma-core 45's FLUSH) have no ibv_send_wr form:
	 * libibverbs offers them through ibv_wr_*() only. */
	if (props & UROCE_WRP_EMPTY_RESP)
		return EINVAL;
	if ((props & UROCE_WRP_INV) || wr->opcode == IBV_WR_LOCAL_INV)
		uroce_wqe_set_imm(w, wr->invalidate_rkey);
	else if (props & UROCE_WRP_IMM)
		uroce_wqe_set_imm(w, be32toh(wr->imm_data));
	if (props & UROCE_WRP_ATOMIC) {
		uroce_wqe_set_atomic(w, wr->wr.atomic.remote_addr, wr->wr.atomic.rkey,
				     wr->wr.atomic.compare_add, wr->wr.atomic.swap);
	} else if (qp->qpx.qp_base.qp_type == IBV_QPT_UD) {
		if (put_ud(qp, w, wr->wr.ud.ah, wr->wr.ud.remote_qpn, wr->wr.ud.remote_qkey) != 0)
			return EINVAL;
	} else if (props & UROCE_WRP_RDMA) {
		uroce_wqe_set_rdma(w, wr->wr.rdma.remote_addr, wr->wr.rdma.rkey);
	}
	if (qp->qpx.qp_base.qp_type == IBV_QPT_XRC_SEND &&
	    uroce_wqe_set_xrc_srqn(w, wr->qp_type.xrc.remote_srqn) != 0)
		return EINVAL;
	if (wr->send_flags & IBV_SEND_INLINE)
		return put_inline(qp, w, (size_t)wr->num_sge, NULL, wr->sg_list);
	return uroce_wqe_set_sges(w, qp->uqp, (const struct uroce_sge *)wr->sg_list,
				  (size_t)wr->num_sge) != 0 ? EINVAL : 0;
}

/*
 * The states in which a post is refused at once (EINVAL), as rdma-core's
 * providers and rxe do: sends need RTS or later (RTS, SQD, SQE, ERR: the
 * last flush), receives INIT or later. Only this process moves a QP below
 * RTS (modify_qp), so the state it last set is the one to judge by; the
 * daemon's own moves (to SQE, ERR) never reach a refused state.
 */
static bool
post_state_ok(const struct ibv_qp *ibqp, bool send)
{
	enum ibv_qp_state st = __atomic_load_n(&ibqp->state, __ATOMIC_RELAXED);

	if (send)
		return st != IBV_QPS_RESET && st != IBV_QPS_INIT && st != IBV_QPS_RTR;
	return st != IBV_QPS_RESET;
}

int
dv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct dv_qp *qp = (struct dv_qp *)ibqp;
	uint32_t n = 0;
	int rc;

	rc = post_state_ok(ibqp, true) ? -uroce_sq_begin(qp->uqp) : EINVAL;
	if (rc != 0) {
		if (bad_wr != NULL)
			*bad_wr = wr;
		return rc;
	}
	for (; wr != NULL; wr = wr->next) {
		struct uroce_shm_send_wqe *w = uroce_sq_slot(qp->uqp, n);

		if (w == NULL) {
			rc = ENOMEM;
			break;
		}
		rc = fill_send_wqe(qp, wr, w);
		if (rc != 0)
			break;
		n++;
	}
	uroce_sq_end(qp->uqp, n);
	if (rc != 0) {
		DV_TRACE("post_send qpn 0x%x opcode %d flags 0x%x num_sge %d: %s", ibqp->qp_num,
			 wr->opcode, wr->send_flags, wr->num_sge, strerror(rc));
		if (bad_wr != NULL)
			*bad_wr = wr;
	}
	return rc;
}

static int
fill_recv_wqe(const struct ibv_recv_wr *wr, uint32_t max_sge, struct uroce_shm_recv_wqe *w)
{
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
	    (wr->num_sge > 0 && wr->sg_list == NULL))
		return EINVAL;
	w->wr_id = wr->wr_id;
	w->num_sge = (uint32_t)wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		w->sg_list[i].addr = wr->sg_list[i].addr;
		w->sg_list[i].length = wr->sg_list[i].length;
		w->sg_list[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

int
dv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct dv_qp *qp = (struct dv_qp *)ibqp;
	uint32_t n = 0;
	int rc;

	rc = post_state_ok(ibqp, false) ? -uroce_rq_begin(qp->uqp) : EINVAL;
	if (rc != 0) {
		if (bad_wr != NULL)
			*bad_wr = wr;
		return rc;
	}
	for (; wr != NULL; wr = wr->next) {
		struct uroce_shm_recv_wqe *w = uroce_rq_slot(qp->uqp, n);

		if (w == NULL) {
			rc = ENOMEM;
			break;
		}
		rc = fill_recv_wqe(wr, qp->uqp->cap.max_recv_sge, w);
		if (rc != 0)
			break;
		n++;
	}
	uroce_rq_end(qp->uqp, n);
	if (rc != 0 && bad_wr != NULL)
		*bad_wr = wr;
	return rc;
}

int
dv_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct dv_srq *srq = (struct dv_srq *)ibsrq;
	uint32_t n = 0, max_sge;
	int rc;

	rc = -uroce_srq_begin(srq->usrq);
	if (rc != 0) {
		if (bad_wr != NULL)
			*bad_wr = wr;
		return rc;
	}
	max_sge = uroce_srq_max_sge(srq->usrq);
	for (; wr != NULL; wr = wr->next) {
		struct uroce_shm_recv_wqe *w = uroce_srq_slot(srq->usrq, n);

		if (w == NULL) {
			rc = ENOMEM;
			break;
		}
		rc = fill_recv_wqe(wr, max_sge, w);
		if (rc != 0)
			break;
		n++;
	}
	uroce_srq_end(srq->usrq, n);
	if (rc != 0 && bad_wr != NULL)
		*bad_wr = wr;
	return rc;
}

/* ------------------------------------------------------------------------ */
/* ibv_wr_* (ibv_qp_ex)                                                      */
/* ------------------------------------------------------------------------ */

/*
 * wr_start takes the send queue (uroce_sq_begin); each wr_<op> takes the next
 * ring slot and fills its control part; wr_set_* fill its data part;
 * wr_complete publishes the batch with one doorbell, or, if any call of the
 * batch was invalid, publishes nothing and returns the first error, as
 * rdma-core's providers do; wr_abort drops the batch.
 */

#define DVQ(x) ((struct dv_qp *)(x))

static void
wr_fail(struct dv_qp *qp, int err)
{
	if (qp->wr_err == 0)
		qp->wr_err = err;
}

static void
qx_wr_start(struct ibv_qp_ex *x)
{
	struct dv_qp *qp = DVQ(x);
	int rc = post_state_ok(&x->qp_base, true) ? uroce_sq_begin(qp->uqp) : -EINVAL;

	qp->wr_open = rc == 0;
	qp->wr_err = -rc;
	qp->wr_n = 0;
	qp->wr_cur = NULL;
}

/* The next WQE of the batch for opcode @p op, or NULL (error recorded). */
static struct uroce_shm_send_wqe *
wr_new(struct ibv_qp_ex *x, enum ibv_wr_opcode op)
{
	struct dv_qp *qp = DVQ(x);
	struct uroce_shm_send_wqe *w;

	qp->wr_cur = NULL;
	if (!qp->wr_open || qp->wr_err != 0)
		return NULL;
	w = uroce_sq_slot(qp->uqp, qp->wr_n);
	if (w == NULL) {
		wr_fail(qp, ENOMEM);
		return NULL;
	}
	if (uroce_wqe_start(w, qp->uqp, x->wr_id, op, x->wr_flags) != 0) {
		wr_fail(qp, EINVAL);
		return NULL;
	}
	qp->wr_n++;
	qp->wr_cur = w;
	return w;
}

static void
qx_rdma_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	struct uroce_shm_send_wqe *w = wr_new(x, IBV_WR_RDMA_WRITE);

	if (w != NULL)
		uroce_wqe_set_rdma(w, raddr, rkey);
}

static void
qx_rdma_write_imm(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, __be32 imm)
{
	struct uroce_shm_send_wqe *w = wr_new(x, IBV_WR_RDMA_WRITE_WITH_IMM);

	if (w != NULL) {
		uroce_wqe_set_rdma(w, raddr, rkey);
		uroce_wqe_set_imm(w, be32toh(imm));
	}
}

static void
qx_rdma_read(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	struct uroce_shm_send_wqe *w = wr_new(x, IBV_WR_RDMA_READ);

	if (w != NULL)
		uroce_wqe_set_rdma(w, raddr, rkey);
}

static void
qx_atomic_cmp_swp(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, uint64_t compare,
		  uint64_t swap)
{
	struct uroce_shm_send_wqe *w = wr_new(x, IBV_WR_ATOMIC_CMP_AND_SWP);

	if (w != NULL)
		uroce_wqe_set_atomic(w, raddr, rkey, compare, swap);
}

static void
qx_atomic_fetch_add(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, uint64_t add)
{
	struct uroce_shm_send_wqe *w = wr_new(x, IBV_WR_ATOMIC_FETCH_AND_ADD);

	if (w != NULL)
		uroce_wqe_set_atomic(w, raddr, rkey, add, 0);
}

static void
qx_send(struct ibv_qp_ex *x)
{
	wr_new(x, IBV_WR_SEND);
}

static void
qx_send_imm(struct ibv_qp_ex *x, __be32 imm)
{
	struct uroce_shm_send_wqe *w = wr_new(x, IBV_WR_SEND_WITH_IMM);

	if (w != NULL)
		uroce_wqe_set_imm(w, be32toh(imm));
}

static void
qx_send_inv(struct ibv_qp_ex *x, uint32_t rkey)
{
	struct uroce_shm_send_wqe *w = wr_new(x, IBV_WR_SEND_WITH_INV);

	if (w != NULL)
		uroce_wqe_set_imm(w, rkey);
}

/* Operations uroce does not implement: the batch fails at wr_complete. */
static void
qx_unsupported(struct ibv_qp_ex *x)
{
	struct dv_qp *qp = DVQ(x);

	qp->wr_cur = NULL;
	if (qp->wr_open)
		wr_fail(qp, EOPNOTSUPP);
}

static void
qx_bind_mw(struct ibv_qp_ex *x, struct ibv_mw *mw, uint32_t rkey,
	   const struct ibv_mw_bind_info *info)
{
	struct uroce_shm_send_wqe *w = wr_new(x, IBV_WR_BIND_MW);

	if (w != NULL && dv_bind_fill(w, mw, rkey, info) != 0)
		wr_fail(DVQ(x), EINVAL);
}

static void
qx_local_inv(struct ibv_qp_ex *x, uint32_t rkey)
{
	struct uroce_shm_send_wqe *w = wr_new(x, IBV_WR_LOCAL_INV);

	if (w != NULL)
		uroce_wqe_set_imm(w, rkey);
}

static void
qx_send_tso(struct ibv_qp_ex *x, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr;
	(void)hdr_sz;
	(void)mss;
	qx_unsupported(x);
}

/* IBA 1.5 ATOMIC WRITE: the 8 bytes at @p data, read now, stored at once at
 * the peer. A daemon before shm ABI 1.6 does not know the opcode. */
static void
qx_atomic_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, const void *data)
{
	struct uroce_shm_send_wqe *w;

	if (uroce_daemon_abi_minor(DVQ(x)->uqp->context) < 6 || data == NULL) {
		qx_unsupported(x);
		return;
	}
	w = wr_new(x, IBV_WR_ATOMIC_WRITE);
	if (w != NULL)
		uroce_wqe_set_atomic_write(w, raddr, rkey, data);
}

/* IBA 1.2 XRC: the remote XRC SRQ of the WR just started (XRC_SEND QPs). */
static void
qx_set_xrc_srqn(struct ibv_qp_ex *x, uint32_t srqn)
{
	struct dv_qp *qp = DVQ(x);

	if (qp->wr_cur != NULL &&
	    (x->qp_base.qp_type != IBV_QPT_XRC_SEND ||
	     uroce_wqe_set_xrc_srqn(qp->wr_cur, srqn) != 0))
		wr_fail(qp, EINVAL);
}

static void
qx_set_ud_addr(struct ibv_qp_ex *x, struct ibv_ah *ah, uint32_t remote_qpn, uint32_t qkey)
{
	struct dv_qp *qp = DVQ(x);
	struct uroce_shm_send_wqe *w = qp->wr_cur;

	if (w != NULL && put_ud(qp, w, ah, remote_qpn, qkey) != 0)
		wr_fail(qp, EINVAL);
}

static void
qx_set_sge(struct ibv_qp_ex *x, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct dv_qp *qp = DVQ(x);
	struct uroce_sge sg = {.addr = addr, .length = length, .lkey = lkey};

	if (qp->wr_cur != NULL && uroce_wqe_set_sges(qp->wr_cur, qp->uqp, &sg, 1) != 0)
		wr_fail(qp, EINVAL);
}

static void
qx_set_sge_list(struct ibv_qp_ex *x, size_t n, const struct ibv_sge *sg)
{
	struct dv_qp *qp = DVQ(x);

	if (qp->wr_cur != NULL &&
	    uroce_wqe_set_sges(qp->wr_cur, qp->uqp, (const struct uroce_sge *)sg, n) != 0)
		wr_fail(qp, EINVAL);
}

static void
qx_set_inline_data(struct ibv_qp_ex *x, void *addr, size_t length)
{
	struct dv_qp *qp = DVQ(x);
	struct ibv_data_buf b = {.addr = addr, .length = length};

	if (qp->wr_cur == NULL)
		return;
	if (put_inline(qp, qp->wr_cur, 1, &b, NULL) != 0)
		wr_fail(qp, EINVAL);
}

static void
qx_set_inline_data_list(struct ibv_qp_ex *x, size_t n, const struct ibv_data_buf *bufs)
{
	struct dv_qp *qp = DVQ(x);

	if (qp->wr_cur == NULL)
		return;
	if (put_inline(qp, qp->wr_cur, n, bufs, NULL) != 0)
		wr_fail(qp, EINVAL);
}

static int
qx_wr_complete(struct ibv_qp_ex *x)
{
	struct dv_qp *qp = DVQ(x);
	int err = qp->wr_err;

	if (qp->wr_open)
		uroce_sq_end(qp->uqp, err == 0 ? qp->wr_n : 0);
	qp->wr_open = false;
	qp->wr_cur = NULL;
	qp->wr_err = 0;
	return err;
}

static void
qx_wr_abort(struct ibv_qp_ex *x)
{
	struct dv_qp *qp = DVQ(x);

	if (qp->wr_open)
		uroce_sq_end(qp->uqp, 0);
	qp->wr_open = false;
	qp->wr_cur = NULL;
	qp->wr_err = 0;
}

static void
qx_set_ops(struct ibv_qp_ex *x)
{
	x->wr_atomic_cmp_swp = qx_atomic_cmp_swp;
	x->wr_atomic_fetch_add = qx_atomic_fetch_add;
	x->wr_bind_mw = qx_bind_mw;
	x->wr_local_inv = qx_local_inv;
	x->wr_rdma_read = qx_rdma_read;
	x->wr_rdma_write = qx_rdma_write;
	x->wr_rdma_write_imm = qx_rdma_write_imm;
	x->wr_send = qx_send;
	x->wr_send_imm = qx_send_imm;
	x->wr_send_inv = qx_send_inv;
	x->wr_send_tso = qx_send_tso;
	x->wr_set_ud_addr = qx_set_ud_addr;
	x->wr_set_xrc_srqn = qx_set_xrc_srqn;
	x->wr_set_inline_data = qx_set_inline_data;
	x->wr_set_inline_data_list = qx_set_inline_data_list;
	x->wr_set_sge = qx_set_sge;
	x->wr_set_sge_list = qx_set_sge_list;
	x->wr_start = qx_wr_start;
	x->wr_complete = qx_wr_complete;
	x->wr_abort = qx_wr_abort;
	x->wr_atomic_write = qx_atomic_write;
}

/* ------------------------------------------------------------------------ */
/* QP create / modify / query / destroy                                      */
/* ------------------------------------------------------------------------ */

/* The ibv_wr_* operations uroce carries. */
#define DV_SEND_OPS \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND | \
	 IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
	 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
	 IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV | \
	 IBV_QP_EX_WITH_ATOMIC_WRITE)

/* The ibv_qp part of a QP liburoce created. */
static struct ibv_qp *
qp_base_init(struct ibv_context *c, struct dv_qp *qp, const struct ibv_qp_init_attr_ex *a)
{
	struct ibv_qp *b = &qp->qpx.qp_base;

	qp->ctx = dv_ctx(c);
	qp->sq_sig_all = a->sq_sig_all != 0;
	b->context = c;
	b->qp_context = a->qp_context;
	b->pd = a->qp_type == IBV_QPT_XRC_RECV ? NULL : a->pd;
	b->send_cq = a->send_cq;
	b->recv_cq = a->recv_cq;
	b->srq = a->srq;
	b->handle = qp->uqp->handle;
	b->qp_num = qp->uqp->qp_num;
	b->state = IBV_QPS_RESET;
	b->qp_type = a->qp_type;
	pthread_mutex_init(&b->mutex, NULL);
	pthread_cond_init(&b->cond, NULL);
	qx_set_ops(&qp->qpx);
	return b;
}

static struct ibv_qp *
qp_new(struct ibv_context *c, struct ibv_qp_init_attr_ex *a)
{
	struct uroce_qp_init_attr ui;
	struct dv_qp *qp;
	struct ibv_qp *b;
	bool tgt = a->qp_type == IBV_QPT_XRC_RECV, ini = a->qp_type == IBV_QPT_XRC_SEND;

	/* IBA 1.2 XRC: a target QP lives in an XRC domain, with no PD, CQs
	 * or SRQ; an initiator has no receive side (recv_cq may be NULL). */
	if (tgt ? a->xrcd == NULL || a->xrcd->context != c :
		  a->pd == NULL || a->send_cq == NULL || a->pd->context != c ||
		  a->send_cq->context != c ||
		  (!ini && a->recv_cq == NULL) ||
		  (a->recv_cq != NULL && a->recv_cq->context != c) ||
		  (a->srq != NULL && (ini || a->srq->context != c))) {
		errno = EINVAL;
		return NULL;
	}
	if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UC && a->qp_type != IBV_QPT_UD &&
	    !tgt && !ini) {
		DV_TRACE("create_qp: QP type %d unsupported", a->qp_type);
		errno = EOPNOTSUPP; /* raw packet, driver QPs */
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return NULL;
	if (tgt) {
		qp->uqp = uroce_create_xrc_tgt_qp(((struct dv_xrcd *)a->xrcd)->ux, qp);
		if (qp->uqp == NULL) {
			int err = errno;

			free(qp);
			errno = err;
			return NULL;
		}
		memset(&a->cap, 0, sizeof(a->cap));
		return qp_base_init(c, qp, a);
	}
	memset(&ui, 0, sizeof(ui));
	ui.qp_context = qp; /* async events name the QP through it */
	ui.send_cq = ((struct dv_cq *)a->send_cq)->ucq;
	ui.recv_cq = a->recv_cq != NULL ? ((struct dv_cq *)a->recv_cq)->ucq : NULL;
	ui.srq = a->srq != NULL ? ((struct dv_srq *)a->srq)->usrq : NULL;
	/* uroced sizes each ring at one entry at least (a queue of 0 is
	 * refused); the actual capacities are returned, as verbs allows. */
	ui.cap.max_send_wr = a->cap.max_send_wr != 0 ? a->cap.max_send_wr : 1;
	ui.cap.max_recv_wr = a->srq != NULL || ini ? 0 :
			     a->cap.max_recv_wr != 0 ? a->cap.max_recv_wr : 1;
	ui.cap.max_send_sge = a->cap.max_send_sge;
	ui.cap.max_recv_sge = a->srq != NULL || ini ? 0 : a->cap.max_recv_sge;
	ui.cap.max_inline_data = a->cap.max_inline_data;
	ui.qp_type = a->qp_type;
	ui.sq_sig_all = a->sq_sig_all != 0;
	qp->uqp = uroce_create_qp(((struct dv_pd *)a->pd)->upd, &ui);
	if (qp->uqp == NULL) {
		int err = errno;

		DV_TRACE("create_qp type %d caps %u/%u/%u/%u inline %u: %s", a->qp_type,
			 a->cap.max_send_wr, a->cap.max_recv_wr, a->cap.max_send_sge,
			 a->cap.max_recv_sge, a->cap.max_inline_data, strerror(err));
		free(qp);
		errno = err;
		return NULL;
	}
	b = qp_base_init(c, qp, a);
	a->cap.max_send_wr = ui.cap.max_send_wr;
	a->cap.max_send_sge = ui.cap.max_send_sge;
	a->cap.max_inline_data = ui.cap.max_inline_data;
	if (a->srq == NULL) {
		a->cap.max_recv_wr = ui.cap.max_recv_wr;
		a->cap.max_recv_sge = ui.cap.max_recv_sge;
	}
	DV_TRACE("create_qp type %d qpn 0x%x caps %u/%u/%u/%u inline %u", a->qp_type, b->qp_num,
		 a->cap.max_send_wr, a->cap.max_recv_wr, a->cap.max_send_sge, a->cap.max_recv_sge,
		 a->cap.max_inline_data);
	return b;
}

DV_EXPORT struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex x;
	struct ibv_qp *qp;

	if (pd == NULL || attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	/* ibv_qp_init_attr is the prefix of ibv_qp_init_attr_ex. */
	memset(&x, 0, sizeof(x));
	memcpy(&x, attr, sizeof(*attr));
	x.comp_mask = IBV_QP_INIT_ATTR_PD;
	x.pd = pd;
	qp = qp_new(pd->context, &x);
	if (qp != NULL)
		attr->cap = x.cap;
	return qp;
}

struct ibv_qp *
dv_create_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *a)
{
	struct ibv_qp *qp;
	struct dv_qp *dq;

	/* An XRC target QP names its XRC domain instead of a PD. */
	if (a == NULL || !(a->comp_mask & (a->qp_type == IBV_QPT_XRC_RECV ?
					   IBV_QP_INIT_ATTR_XRCD : IBV_QP_INIT_ATTR_PD))) {
		errno = EINVAL;
		return NULL;
	}
	if ((a->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
					IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_XRCD)) != 0 ||
	    ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags != 0) ||
	    ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	     (a->send_ops_flags & ~(uint64_t)DV_SEND_OPS) != 0)) {
		/* TSO, RSS hashing, create flags, other send ops. */
		DV_TRACE("create_qp_ex: comp_mask 0x%x send_ops 0x%llx unsupported", a->comp_mask,
			 (unsigned long long)a->send_ops_flags);
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = qp_new(c, a);
	if (qp == NULL)
		return NULL;
	dq = (struct dv_qp *)qp;
	if (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		dq->ex = true;
		dq->send_ops_flags = a->send_ops_flags;
	}
	return qp;
}

DV_EXPORT struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct dv_qp *dq = (struct dv_qp *)qp;

	if (qp == NULL || !dq->ex) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return &dq->qpx;
}

/* Mask bits uroce's state machine takes (doc/transport.md). */
#define DV_QP_MASK \
	(IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY | IBV_QP_ACCESS_FLAGS | \
	 IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_AV | IBV_QP_PATH_MTU | \
	 IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN | \
	 IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN | \
	 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_PATH_MIG_STATE | IBV_QP_CAP | IBV_QP_DEST_QPN)

DV_EXPORT int
ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int mask)
{
	struct dv_qp *qp = (struct dv_qp *)ibqp;
	struct uroce_qp_attr u;
	int rc;

	if (ibqp == NULL || a == NULL)
		return EINVAL;
	if ((mask & ~DV_QP_MASK) != 0) {
		/* Alternate paths (APM), rate limits: not implemented. */
		DV_TRACE("modify_qp 0x%x: mask bits 0x%x unsupported", ibqp->qp_num,
			 mask & ~DV_QP_MASK);
		return EOPNOTSUPP;
	}
	memset(&u, 0, sizeof(u));
	u.qp_state = a->qp_state;
	u.cur_qp_state = a->cur_qp_state;
	u.path_mtu = a->path_mtu;
	/* A path MTU above the port's active MTU cannot be carried; the
	 * daemon refuses it. Applications written for IB ask for 2048 or
	 * 4096 whatever the port (qperf): use the active MTU instead, as
	 * both ends do the same (doc/verbs-dropin.md). */
	if ((mask & IBV_QP_PATH_MTU) && u.path_mtu > qp->ctx->active_mtu && qp->ctx->active_mtu)
		u.path_mtu = qp->ctx->active_mtu;
	u.qkey = a->qkey;
	u.rq_psn = a->rq_psn;
	u.sq_psn = a->sq_psn;
	u.dest_qp_num = a->dest_qp_num;
	u.qp_access_flags = a->qp_access_flags;
	u.cap.max_send_wr = a->cap.max_send_wr;
	u.cap.max_recv_wr = a->cap.max_recv_wr;
	u.cap.max_send_sge = a->cap.max_send_sge;
	u.cap.max_recv_sge = a->cap.max_recv_sge;
	u.cap.max_inline_data = a->cap.max_inline_data;
	u.pkey_index = a->pkey_index;
	u.port_num = a->port_num;
	u.max_rd_atomic = a->max_rd_atomic;
	/* The initiator depth may be lowered: fewer outstanding READs and
	 * atomics than asked never exceeds what the responder allows, and
	 * programs set it to the peer's responder resources (perftest: rxe's
	 * 128), which uroced would refuse above its own limit. The responder
	 * side (max_dest_rd_atomic) is not touched: the peer relies on it. */
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
	    u.max_rd_atomic > qp->ctx->dattr.max_qp_init_rd_atom)
		u.max_rd_atomic = (uint8_t)qp->ctx->dattr.max_qp_init_rd_atom;
	u.max_dest_rd_atomic = a->max_dest_rd_atomic;
	u.min_rnr_timer = a->min_rnr_timer;
	u.timeout = a->timeout;
	u.retry_cnt = a->retry_cnt;
	u.rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_AV) {
		rc = dv_ah_attr_to_uroce(qp->ctx, &a->ah_attr, &u.ah_attr);
		if (rc != 0) {
			DV_TRACE("modify_qp 0x%x: address vector (LID 0x%x, global %d) unusable",
				 ibqp->qp_num, a->ah_attr.dlid, a->ah_attr.is_global);
			return rc;
		}
	}
	/* No APM: the migration state is accepted and ignored. */
	rc = uroce_modify_qp(qp->uqp, &u, mask & ~IBV_QP_PATH_MIG_STATE);
	if (rc != 0) {
		DV_TRACE("modify_qp 0x%x mask 0x%x to state %d: %s", ibqp->qp_num, mask,
			 a->qp_state, strerror(-rc));
		return -rc;
	}
	if (mask & IBV_QP_STATE)
		__atomic_store_n(&ibqp->state, a->qp_state, __ATOMIC_RELAXED);
	/* As rdma-core's mlx5 provider: a reset QP leaves nothing in its CQs
	 * (a flush CQE of its previous life would fail a program that reuses
	 * the QP). The daemon has published all of them by now. */
	if ((mask & IBV_QP_STATE) && a->qp_state == IBV_QPS_RESET) {
		uroce_cq_clean(((struct dv_cq *)ibqp->send_cq)->ucq, ibqp->qp_num);
		if (ibqp->recv_cq != ibqp->send_cq)
			uroce_cq_clean(((struct dv_cq *)ibqp->recv_cq)->ucq, ibqp->qp_num);
	}
	DV_TRACE("modify_qp 0x%x mask 0x%x state %d", ibqp->qp_num, mask, ibqp->state);
	return 0;
}

DV_EXPORT int
ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int mask, struct ibv_qp_init_attr *init)
{
	struct dv_qp *qp = (struct dv_qp *)ibqp;
	struct uroce_qp_attr u;
	int rc;

	if (ibqp == NULL || a == NULL)
		return EINVAL;
	rc = uroce_query_qp(qp->uqp, &u, mask, NULL);
	if (rc != 0)
		return -rc;
	memset(a, 0, sizeof(*a));
	a->qp_state = (enum ibv_qp_state)u.qp_state;
	a->cur_qp_state = (enum ibv_qp_state)u.cur_qp_state;
	a->path_mtu = (enum ibv_mtu)u.path_mtu;
	a->path_mig_state = IBV_MIG_MIGRATED;
	a->qkey = u.qkey;
	a->rq_psn = u.rq_psn;
	a->sq_psn = u.sq_psn;
	a->dest_qp_num = u.dest_qp_num;
	a->qp_access_flags = u.qp_access_flags;
	a->cap.max_send_wr = u.cap.max_send_wr;
	a->cap.max_recv_wr = u.cap.max_recv_wr;
	a->cap.max_send_sge = u.cap.max_send_sge;
	a->cap.max_recv_sge = u.cap.max_recv_sge;
	a->cap.max_inline_data = u.cap.max_inline_data;
	dv_ah_attr_from_uroce(qp->ctx, &u.ah_attr, &a->ah_attr);
	a->pkey_index = u.pkey_index;
	a->en_sqd_async_notify = 0;
	a->sq_draining = u.sq_draining;
	a->max_rd_atomic = u.max_rd_atomic;
	a->max_dest_rd_atomic = u.max_dest_rd_atomic;
	a->min_rnr_timer = u.min_rnr_timer;
	a->port_num = u.port_num;
	a->timeout = u.timeout;
	a->retry_cnt = u.retry_cnt;
	a->rnr_retry = u.rnr_retry;
	if (init != NULL) {
		memset(init, 0, sizeof(*init));
		init->qp_context = ibqp->qp_context;
		init->send_cq = ibqp->send_cq;
		init->recv_cq = ibqp->recv_cq;
		init->srq = ibqp->srq;
		init->cap = a->cap;
		init->qp_type = ibqp->qp_type;
		init->sq_sig_all = qp->sq_sig_all;
	}
	__atomic_store_n(&ibqp->state, a->qp_state, __ATOMIC_RELAXED);
	return 0;
}

DV_EXPORT int
ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct dv_qp *qp = (struct dv_qp *)ibqp;
	int rc;

	if (ibqp == NULL)
		return EINVAL;
	rc = uroce_destroy_qp(qp->uqp);
	if (rc != 0 && rc != -ENOTCONN)
		return -rc; /* EBUSY: an async event on it is not acknowledged */
	pthread_mutex_destroy(&ibqp->mutex);
	pthread_cond_destroy(&ibqp->cond);
	free(qp);
	return 0;
}

DV_EXPORT int
ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp;
	(void)op;
	(void)flags;
	return 0; /* no promise beyond what the IBA orders */
}

DV_EXPORT int
ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	return EOPNOTSUPP; /* no UD multicast in uroce yet */
}

DV_EXPORT int
ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	return EOPNOTSUPP;
}

DV_EXPORT int
ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

DV_EXPORT int
ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

/* ------------------------------------------------------------------------ */
/* SRQ                                                                       */
/* ------------------------------------------------------------------------ */

struct ibv_srq *
dv_srq_new(struct ibv_pd *pd, struct dv_xrcd *xrcd, struct ibv_cq *cq, void *srq_context,
	   struct ibv_srq_attr *attr)
{
	struct uroce_srq_init_attr ui;
	struct dv_srq *srq;

	if (pd == NULL || attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		return NULL;
	memset(&ui, 0, sizeof(ui));
	ui.srq_context = srq; /* async events name the SRQ through it */
	ui.attr.max_wr = attr->max_wr;
	ui.attr.max_sge = attr->max_sge;
	srq->usrq = xrcd != NULL ?
		    uroce_create_xrc_srq(((struct dv_pd *)pd)->upd, xrcd->ux,
					 ((struct dv_cq *)cq)->ucq, &ui) :
		    uroce_create_srq(((struct dv_pd *)pd)->upd, &ui);
	if (srq->usrq == NULL) {
		int err = errno;

		free(srq);
		errno = err;
		return NULL;
	}
	srq->srq.context = pd->context;
	srq->srq.srq_context = srq_context;
	srq->srq.pd = pd;
	srq->srq.handle = srq->usrq->handle;
	pthread_mutex_init(&srq->srq.mutex, NULL);
	pthread_cond_init(&srq->srq.cond, NULL);
	attr->max_wr = ui.attr.max_wr;
	attr->max_sge = ui.attr.max_sge;
	return &srq->srq;
}

DV_EXPORT struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	if (attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return dv_srq_new(pd, NULL, NULL, attr->srq_context, &attr->attr);
}

DV_EXPORT int
ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct uroce_srq_attr u;

	if (srq == NULL || attr == NULL)
		return EINVAL;
	u.max_wr = attr->max_wr;
	u.max_sge = attr->max_sge;
	u.srq_limit = attr->srq_limit;
	/* IBV_SRQ_MAX_WR and IBV_SRQ_LIMIT are UROCE_SRQ_MAX_WR and UROCE_SRQ_LIMIT. */
	return -uroce_modify_srq(((struct dv_srq *)srq)->usrq, &u, mask);
}

DV_EXPORT int
ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct uroce_srq_attr u;
	int rc;

	if (srq == NULL || attr == NULL)
		return EINVAL;
	rc = uroce_query_srq(((struct dv_srq *)srq)->usrq, &u);
	if (rc != 0)
		return -rc;
	attr->max_wr = u.max_wr;
	attr->max_sge = u.max_sge;
	attr->srq_limit = u.srq_limit;
	return 0;
}

DV_EXPORT int
ibv_destroy_srq(struct ibv_srq *srq)
{
	struct dv_srq *s = (struct dv_srq *)srq;
	int rc;

	if (srq == NULL)
		return EINVAL;
	rc = uroce_destroy_srq(s->usrq);
	if (rc != 0 && rc != -ENOTCONN)
		return -rc;
	pthread_mutex_destroy(&srq->mutex);
	pthread_cond_destroy(&srq->cond);
	free(s);
	return 0;
}
