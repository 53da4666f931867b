/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Completion queues (ibv_cq and ibv_cq_ex, one object) and completion
 * channels. Polling reads CQEs in place in liburoce's CQ ring
 * (uroce_cq_begin/entry/end): no system call, no intermediate copy.
 *
 * A completion channel's fd is an epoll set holding the eventfd of every CQ
 * created on it (liburoce gives each CQ one, written by the daemon when an
 * armed CQ completes), so the fd is a real descriptor an application can
 * poll, epoll or make O_NONBLOCK, and ibv_get_cq_event() learns which CQ
 * fired from the epoll entry.
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "dv_internal.h"

/* ------------------------------------------------------------------------ */
/* Channels                                                                  */
/* ------------------------------------------------------------------------ */

DV_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *c)
{
	struct dv_channel *ch;

	if (c == NULL) {
		errno = EINVAL;
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (ch == NULL)
		return NULL;
	ch->ch.fd = epoll_create1(EPOLL_CLOEXEC);
	if (ch->ch.fd < 0) {
		free(ch);
		return NULL;
	}
	ch->ch.context = c;
	ch->ch.refcnt = 0;
	return &ch->ch;
}

DV_EXPORT int
ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	if (channel == NULL)
		return EINVAL;
	if (channel->refcnt != 0)
		return EBUSY; /* CQs still use it */
	close(channel->fd);
	free(channel);
	return 0;
}

/*
 * Wait for an armed CQ of @p channel to fire. The channel's epoll set does
 * not see the daemon's socket, so a blocking wait wakes every second to
 * check that the daemon is still there (a dead daemon fails the wait with
 * EIO instead of hanging it).
 */
DV_EXPORT int
ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct epoll_event ev;
	struct dv_cq *dcq;
	uint64_t v;
	int n, fl;

	if (channel == NULL || cq == NULL || cq_context == NULL) {
		errno = EINVAL;
		return -1;
	}
	fl = fcntl(channel->fd, F_GETFL);
	for (;;) {
		n = epoll_wait(channel->fd, &ev, 1, (fl >= 0 && (fl & O_NONBLOCK)) ? 0 : 1000);
		if (n < 0)
			return -1; /* EINTR too: a signal ends the wait, as read() would */
		if (n == 0) {
			if (fl >= 0 && (fl & O_NONBLOCK)) {
				errno = EAGAIN;
				return -1;
			}
			if (uroce_context_check(dv_ctx(channel->context)->uctx) != 0) {
				errno = EIO;
				return -1;
			}
			continue;
		}
		dcq = ev.data.ptr;
		/* The eventfd is non-blocking: EAGAIN means another thread took it. */
		if (read(uroce_cq_fd(dcq->ucq), &v, sizeof(v)) != (ssize_t)sizeof(v))
			continue;
		pthread_mutex_lock(&dcq->cqx.mutex);
		dcq->events_delivered++;
		pthread_mutex_unlock(&dcq->cqx.mutex);
		*cq = (struct ibv_cq *)&dcq->cqx;
		*cq_context = dcq->cqx.cq_context;
		return 0;
	}
}

DV_EXPORT void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (cq == NULL)
		return;
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* ------------------------------------------------------------------------ */
/* Polling                                                                   */
/* ------------------------------------------------------------------------ */

/* wc_flags bits libibverbs defines that uroce reports (GRH, IMM, INV). */
#define DV_WC_FLAGS (IBV_WC_GRH | IBV_WC_WITH_IMM | IBV_WC_WITH_INV)

static inline void
cqe_to_wc(const struct uroce_shm_cqe *e, struct ibv_wc *wc)
{
	wc->wr_id = e->wr_id;
	wc->status = (enum ibv_wc_status)e->status;
	wc->opcode = (enum ibv_wc_opcode)e->opcode;
	wc->vendor_err = e->vendor_err;
	wc->byte_len = e->byte_len;
	/* The CQE keeps immediate data in host order; ibv_wc has it as on
	 * the wire. An invalidated rkey is a host-order number in both. */
	if (e->wc_flags & UROCE_WC_WITH_INV)
		wc->invalidated_rkey = e->imm_data;
	else
		wc->imm_data = htobe32(e->imm_data);
	wc->qp_num = e->qp_num;
	wc->src_qp = e->src_qp;
	wc->wc_flags = e->wc_flags & DV_WC_FLAGS;
	wc->pkey_index = e->pkey_index;
	wc->slid = e->slid;
	wc->sl = e->sl;
	wc->dlid_path_bits = e->dlid_path_bits;
}

int
dv_poll_cq(struct ibv_cq *ibcq, int num, struct ibv_wc *wc)
{
	struct dv_cq *cq = (struct dv_cq *)ibcq;
	uint32_t n, i;
	int rc;

	if (num <= 0)
		return 0;
	n = uroce_cq_begin(cq->ucq, (uint32_t)num);
	for (i = 0; i < n; i++)
		cqe_to_wc(uroce_cq_entry(cq->ucq, i), &wc[i]);
	rc = uroce_cq_end(cq->ucq, n);
	return n > 0 ? (int)n : rc;
}

int
dv_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return -uroce_req_notify_cq(((struct dv_cq *)ibcq)->ucq, solicited_only != 0);
}

/* ibv_cq_ex: start_poll takes the CQ's lock until end_poll (rdma-core's
 * contract: no other poll of the CQ in between). */
static int
ex_start_poll(struct ibv_cq_ex *x, struct ibv_poll_cq_attr *attr)
{
	struct dv_cq *cq = (struct dv_cq *)x;
	int rc;

	if (attr != NULL && attr->comp_mask != 0)
		return EINVAL;
	cq->ex_avail = uroce_cq_begin(cq->ucq, (uint32_t)uroce_cq_size(cq->ucq));
	cq->ex_pos = 0;
	if (cq->ex_avail == 0) {
		rc = uroce_cq_end(cq->ucq, 0);
		return rc == 0 ? ENOENT : -rc;
	}
	cq->ex_cur = uroce_cq_entry(cq->ucq, 0);
	x->wr_id = cq->ex_cur->wr_id;
	x->status = (enum ibv_wc_status)cq->ex_cur->status;
	return 0;
}

static int
ex_next_poll(struct ibv_cq_ex *x)
{
	struct dv_cq *cq = (struct dv_cq *)x;

	if (cq->ex_pos + 1 >= cq->ex_avail)
		return ENOENT;
	cq->ex_pos++;
	cq->ex_cur = uroce_cq_entry(cq->ucq, cq->ex_pos);
	x->wr_id = cq->ex_cur->wr_id;
	x->status = (enum ibv_wc_status)cq->ex_cur->status;
	return 0;
}

static void
ex_end_poll(struct ibv_cq_ex *x)
{
	struct dv_cq *cq = (struct dv_cq *)x;

	/* Every entry up to the current one was read. */
	uroce_cq_end(cq->ucq, cq->ex_pos + 1);
	cq->ex_cur = NULL;
}

#define CUR(x) (((struct dv_cq *)(x))->ex_cur)

static enum ibv_wc_opcode
ex_read_opcode(struct ibv_cq_ex *x)
{
	return (enum ibv_wc_opcode)CUR(x)->opcode;
}

static uint32_t
ex_read_vendor_err(struct ibv_cq_ex *x)
{
	return CUR(x)->vendor_err;
}

static uint32_t
ex_read_byte_len(struct ibv_cq_ex *x)
{
	return CUR(x)->byte_len;
}

static __be32
ex_read_imm_data(struct ibv_cq_ex *x)
{
	/* With IBV_WC_WITH_INV this is the invalidated rkey, host order. */
	return (CUR(x)->wc_flags & UROCE_WC_WITH_INV) ? CUR(x)->imm_data :
							   htobe32(CUR(x)->imm_data);
}

static uint32_t
ex_read_qp_num(struct ibv_cq_ex *x)
{
	return CUR(x)->qp_num;
}

static uint32_t
ex_read_src_qp(struct ibv_cq_ex *x)
{
	return CUR(x)->src_qp;
}

static unsigned int
ex_read_wc_flags(struct ibv_cq_ex *x)
{
	return CUR(x)->wc_flags & DV_WC_FLAGS;
}

static uint32_t
ex_read_slid(struct ibv_cq_ex *x)
{
	return CUR(x)->slid;
}

static uint8_t
ex_read_sl(struct ibv_cq_ex *x)
{
	return CUR(x)->sl;
}

static uint8_t
ex_read_dlid_path_bits(struct ibv_cq_ex *x)
{
	return CUR(x)->dlid_path_bits;
}

/* Not requestable (create_cq_ex refuses their wc_flags); defined so that no
 * ibv_cq_ex slot is NULL. */
static uint64_t
ex_read_zero64(struct ibv_cq_ex *x)
{
	(void)x;
	return 0;
}

static uint16_t
ex_read_cvlan(struct ibv_cq_ex *x)
{
	(void)x;
	return 0;
}

static uint32_t
ex_read_flow_tag(struct ibv_cq_ex *x)
{
	(void)x;
	return 0;
}

static void
ex_read_tm_info(struct ibv_cq_ex *x, struct ibv_wc_tm_info *tm)
{
	(void)x;
	memset(tm, 0, sizeof(*tm));
}

/* ------------------------------------------------------------------------ */
/* Create / destroy                                                          */
/* ------------------------------------------------------------------------ */

/* The work-completion fields uroce's CQEs carry. */
#define DV_WC_EX_FLAGS \
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | \
	 IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
	 IBV_WC_EX_WITH_DLID_PATH_BITS)

static struct dv_cq *
cq_new(struct ibv_context *c, int cqe, void *cq_context, struct ibv_comp_channel *channel,
       int comp_vector)
{
	struct dv_context *ctx;
	struct dv_cq *cq;
	struct ibv_cq_ex *x;

	if (c == NULL || cqe <= 0 || comp_vector < 0 || comp_vector >= c->num_comp_vectors ||
	    (channel != NULL && channel->context != c)) {
		errno = EINVAL;
		return NULL;
	}
	ctx = dv_ctx(c);
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return NULL;
	cq->ctx = ctx;
	cq->ucq = uroce_create_cq(ctx->uctx, cqe, cq);
	if (cq->ucq == NULL) {
		free(cq);
		return NULL;
	}
	if (channel != NULL) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = cq};

		if (epoll_ctl(channel->fd, EPOLL_CTL_ADD, uroce_cq_fd(cq->ucq), &ev) != 0) {
			int err = errno;

			uroce_destroy_cq(cq->ucq);
			free(cq);
			errno = err;
			return NULL;
		}
		__atomic_add_fetch(&channel->refcnt, 1, __ATOMIC_RELAXED);
	}
	x = &cq->cqx;
	x->context = c;
	x->channel = channel;
	x->cq_context = cq_context;
	x->handle = 0; /* the daemon's handle stays inside liburoce */
	x->cqe = uroce_cq_size(cq->ucq);
	pthread_mutex_init(&x->mutex, NULL);
	pthread_cond_init(&x->cond, NULL);
	x->start_poll = ex_start_poll;
	x->next_poll = ex_next_poll;
	x->end_poll = ex_end_poll;
	x->read_opcode = ex_read_opcode;
	x->read_vendor_err = ex_read_vendor_err;
	x->read_byte_len = ex_read_byte_len;
	x->read_imm_data = ex_read_imm_data;
	x->read_qp_num = ex_read_qp_num;
	x->read_src_qp = ex_read_src_qp;
	x->read_wc_flags = ex_read_wc_flags;
	x->read_slid = ex_read_slid;
	x->read_sl = ex_read_sl;
	x->read_dlid_path_bits = ex_read_dlid_path_bits;
	x->read_completion_ts = ex_read_zero64;
	x->read_cvlan = ex_read_cvlan;
	x->read_flow_tag = ex_read_flow_tag;
	x->read_tm_info = ex_read_tm_info;
	x->read_completion_wallclock_ns = ex_read_zero64;
	DV_TRACE("create_cq cqe %d -> %d, channel %p", cqe, x->cqe, (void *)channel);
	return cq;
}

DV_EXPORT struct ibv_cq *
ibv_create_cq(struct ibv_context *c, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct dv_cq *cq = cq_new(c, cqe, cq_context, channel, comp_vector);

	return cq != NULL ? (struct ibv_cq *)&cq->cqx : NULL;
}

struct ibv_cq_ex *
dv_create_cq_ex(struct ibv_context *c, struct ibv_cq_init_attr_ex *attr)
{
	struct dv_cq *cq;

	if (attr == NULL || attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->wc_flags & ~(uint64_t)DV_WC_EX_FLAGS) != 0 ||
	    (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					   IBV_CQ_INIT_ATTR_MASK_PD)) != 0 ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED) != 0)) {
		/* Timestamps, CVLAN, flow tags, tag matching. */
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* verbs: the PD of a CQ must be a parent domain of this context (its
	 * allocators are not called: see dv_alloc_parent_domain()). */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (attr->parent_domain == NULL || attr->parent_domain->context != c ||
	     ((struct dv_pd *)attr->parent_domain)->base == NULL)) {
		errno = EINVAL;
		return NULL;
	}
	cq = cq_new(c, (int)attr->cqe, attr->cq_context, attr->channel, (int)attr->comp_vector);
	return cq != NULL ? &cq->cqx : NULL;
}

DV_EXPORT int
ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct dv_cq *cq = (struct dv_cq *)ibcq;
	struct ibv_comp_channel *ch;
	int rc;

	if (ibcq == NULL)
		return EINVAL;
	ch = ibcq->channel;
	/* Out of the channel first: the daemon may hold the eventfd a while. */
	if (ch != NULL)
		epoll_ctl(ch->fd, EPOLL_CTL_DEL, uroce_cq_fd(cq->ucq), NULL);
	rc = uroce_destroy_cq(cq->ucq);
	if (rc != 0 && rc != -ENOTCONN) {
		if (ch != NULL) {
			struct epoll_event ev = {.events = EPOLLIN, .data.ptr = cq};

			epoll_ctl(ch->fd, EPOLL_CTL_ADD, uroce_cq_fd(cq->ucq), &ev);
		}
		return -rc;
	}
	if (ch != NULL)
		__atomic_sub_fetch(&ch->refcnt, 1, __ATOMIC_RELAXED);
	/* As libibverbs: wait until every event handed out is acknowledged. */
	pthread_mutex_lock(&ibcq->mutex);
	while (ibcq->comp_events_completed != cq->events_delivered)
		pthread_cond_wait(&ibcq->cond, &ibcq->mutex);
	pthread_mutex_unlock(&ibcq->mutex);
	pthread_mutex_destroy(&ibcq->mutex);
	pthread_cond_destroy(&ibcq->cond);
	free(cq);
	return 0;
}

/* ibv_modify_cq (a verbs.h inline that calls this op): CQ event moderation,
 * IBV_CQ_ATTR_MODERATE only (daemon ABI 1.8). */
int
dv_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr)
{
	struct uroce_modify_cq_attr a;

	if (cq == NULL || attr == NULL || attr->attr_mask != IBV_CQ_ATTR_MODERATE)
		return EINVAL;
	a.attr_mask = UROCE_CQ_ATTR_MODERATE;
	a.cq_count = attr->moderate.cq_count;
	a.cq_period = attr->moderate.cq_period;
	return -uroce_modify_cq(((struct dv_cq *)cq)->ucq, &a);
}

DV_EXPORT int
ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	struct dv_cq *dcq = (struct dv_cq *)cq;
	int rc;

	if (cq == NULL || cqe <= 0)
		return EINVAL;
	rc = uroce_resize_cq(dcq->ucq, cqe);
	if (rc == 0)
		cq->cqe = uroce_cq_size(dcq->ucq);
	return -rc;
}
