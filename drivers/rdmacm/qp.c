/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The verbs side of rdma_cm, as librdmacm does it: QPs (and their CQs with
 * completion channels when the caller gives none) on the id's device,
 * brought to INIT (UD: to RTS) at creation and through RTR and RTS with the
 * daemon's attributes at accept and at the connect response; SRQs; the
 * synchronous endpoints of rdma_create_ep() and rdma_get_request().
 */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_verbs.h>

#include "rc_internal.h"

static int
modify_from_cm(struct rc_id *x, enum ibv_qp_state state, int override, uint8_t value)
{
	struct ibv_qp_attr a;
	int mask, rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = state;
	if (rdma_init_qp_attr(&x->id, &a, &mask) != 0)
		return -1;
	if (override == IBV_QP_MAX_DEST_RD_ATOMIC && value != RDMA_MAX_RESP_RES)
		a.max_dest_rd_atomic = value;
	if (override == IBV_QP_MAX_QP_RD_ATOMIC && value != RDMA_MAX_INIT_DEPTH)
		a.max_rd_atomic = value;
	rc = ibv_modify_qp(x->id.qp, &a, mask);
	return rc != 0 ? rc_err(rc) : 0;
}

/* INIT again (READ/atomic access appear with the connection), then RTR. */
int
rc_modify_qp_rtr(struct rc_id *x, uint8_t resp_res)
{
	if (x->id.qp == NULL)
		return 0;
	if (modify_from_cm(x, IBV_QPS_INIT, 0, 0) != 0)
		return -1;
	return modify_from_cm(x, IBV_QPS_RTR, IBV_QP_MAX_DEST_RD_ATOMIC, resp_res);
}

int
rc_modify_qp_rts(struct rc_id *x, uint8_t init_depth)
{
	if (x->id.qp == NULL)
		return 0;
	return modify_from_cm(x, IBV_QPS_RTS, IBV_QP_MAX_QP_RD_ATOMIC, init_depth);
}

int
rc_modify_qp_err(struct rc_id *x)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
	int rc;

	if (x->id.qp == NULL)
		return 0;
	rc = ibv_modify_qp(x->id.qp, &a, IBV_QP_STATE);
	return rc != 0 ? rc_err(rc) : 0;
}

static void
destroy_cqs(struct rdma_cm_id *id)
{
	if (id->recv_cq != NULL) {
		ibv_destroy_cq(id->recv_cq);
		if (id->send_cq != NULL && id->send_cq != id->recv_cq)
			ibv_destroy_cq(id->send_cq);
		id->send_cq = NULL;
		id->recv_cq = NULL;
	}
	if (id->recv_cq_channel != NULL) {
		ibv_destroy_comp_channel(id->recv_cq_channel);
		if (id->send_cq_channel != NULL && id->send_cq_channel != id->recv_cq_channel)
			ibv_destroy_comp_channel(id->send_cq_channel);
		id->send_cq_channel = NULL;
		id->recv_cq_channel = NULL;
	}
}

/* CQs, each with a completion channel, for the sizes not zero. */
static int
create_cqs(struct rdma_cm_id *id, uint32_t send_size, uint32_t recv_size)
{
	if (recv_size > 0) {
		id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
		if (id->recv_cq_channel == NULL)
			goto err;
		id->recv_cq = ibv_create_cq(id->verbs, (int)recv_size, id, id->recv_cq_channel, 0);
		if (id->recv_cq == NULL)
			goto err;
	}
	if (send_size > 0) {
		id->send_cq_channel = ibv_create_comp_channel(id->verbs);
		if (id->send_cq_channel == NULL)
			goto err;
		id->send_cq = ibv_create_cq(id->verbs, (int)send_size, id, id->send_cq_channel, 0);
		if (id->send_cq == NULL)
			goto err;
	}
	return 0;
err:
	destroy_cqs(id);
	return -1;
}

/* A new QP's first states (librdmacm's ucma_init_conn_qp / ucma_init_ud_qp). */
static int
init_qp(struct rc_id *x, struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	int mask, rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	if (rdma_init_qp_attr(&x->id, &a, &mask) != 0)
		return -1;
	rc = ibv_modify_qp(qp, &a, mask);
	if (rc != 0 || x->id.qp_type != IBV_QPT_UD)
		return rc != 0 ? rc_err(rc) : 0;
	/* UD needs no peer: straight to RTS, PSN 0. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (rc == 0) {
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0;
		rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	return rc != 0 ? rc_err(rc) : 0;
}

RC_EXPORT int
rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct rc_id *x;
	struct ibv_qp *qp;

	if (id == NULL || attr == NULL || id->qp != NULL || id->verbs == NULL)
		return rc_err(EINVAL);
	x = rc_id_of(id);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
		attr->pd = id->pd;
	} else if (id->verbs != attr->pd->context) {
		return rc_err(EINVAL);
	}
	if ((id->recv_cq != NULL && attr->recv_cq != NULL && id->recv_cq != attr->recv_cq) ||
	    (id->send_cq != NULL && attr->send_cq != NULL && id->send_cq != attr->send_cq))
		return rc_err(EINVAL);
	if (create_cqs(id, attr->send_cq != NULL || id->send_cq != NULL ? 0 : attr->cap.max_send_wr,
		       attr->recv_cq != NULL || id->recv_cq != NULL ? 0 : attr->cap.max_recv_wr) !=
	    0)
		return -1;
	if (attr->send_cq == NULL)
		attr->send_cq = id->send_cq;
	if (attr->recv_cq == NULL)
		attr->recv_cq = id->recv_cq;
	if (id->srq != NULL && attr->srq == NULL)
		attr->srq = id->srq;
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (qp == NULL)
		goto err_cqs;
	if (init_qp(x, qp) != 0) {
		int e = errno;

		ibv_destroy_qp(qp);
		errno = e;
		goto err_cqs;
	}
	id->pd = qp->pd;
	id->qp = qp;
	return 0;
err_cqs:
	{
		int e = errno;

		destroy_cqs(id);
		errno = e;
	}
	return -1;
}

RC_EXPORT int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ex;
	int rc;

	if (id == NULL || qp_init_attr == NULL)
		return rc_err(EINVAL);
	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, qp_init_attr, sizeof(*qp_init_attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd != NULL ? pd : id->pd;
	rc = rdma_create_qp_ex(id, &ex);
	memcpy(qp_init_attr, &ex, sizeof(*qp_init_attr));
	return rc;
}

RC_EXPORT void
rdma_destroy_qp(struct rdma_cm_id *id)
{
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	destroy_cqs(id);
}

RC_EXPORT int
rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq *srq;

	if (id == NULL || attr == NULL || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE))
		return rc_err(EINVAL);
	if (attr->srq_type != IBV_SRQT_BASIC)
		return rc_err(EOPNOTSUPP); /* no XRC on uroce */
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->pd = id->pd;
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	srq = ibv_create_srq_ex(id->verbs, attr);
	if (srq == NULL)
		return -1;
	if (id->pd == NULL)
		id->pd = attr->pd;
	id->srq = srq;
	return 0;
}

RC_EXPORT int
rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex;
	int rc;

	if (id == NULL || attr == NULL)
		return rc_err(EINVAL);
	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	ex.srq_type = IBV_SRQT_BASIC;
	ex.pd = pd;
	rc = rdma_create_srq_ex(id, &ex);
	memcpy(attr, &ex, sizeof(*attr));
	return rc;
}

RC_EXPORT void
rdma_destroy_srq(struct rdma_cm_id *id)
{
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
	destroy_cqs(id);
}

/* ------------------------------------------------------------------------ */
/* Synchronous endpoints                                                     */
/* ------------------------------------------------------------------------ */

RC_EXPORT int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct rdma_cm_event *ev;
	struct rc_id *l;
	int rc;

	if (listen == NULL || id == NULL)
		return rc_err(EINVAL);
	l = rc_id_of(listen);
	if (!l->sync)
		return rc_err(EINVAL);
	if (listen->event != NULL) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	if (rdma_get_cm_event(listen->channel, &ev) != 0)
		return -1;
	if (ev->event == RDMA_CM_EVENT_REJECTED) {
		rc = ECONNREFUSED;
		goto err;
	}
	if (ev->status != 0) {
		rc = ev->status < 0 ? -ev->status : ev->status;
		goto err;
	}
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		rc = EINVAL;
		goto err;
	}
	if (l->qp_init_attr != NULL) {
		struct ibv_qp_init_attr a = *l->qp_init_attr;

		if (rdma_create_qp(ev->id, listen->pd, &a) != 0) {
			rc = errno;
			goto err;
		}
	}
	*id = ev->id;
	(*id)->event = ev;
	return 0;
err:
	listen->event = ev;
	return rc_err(rc);
}

RC_EXPORT int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm;
	struct rc_id *x;
	int rc;

	if (id == NULL || res == NULL)
		return rc_err(EINVAL);
	if (rc_id_create(NULL, &cm, NULL, (enum rdma_port_space)res->ai_port_space,
			 (enum ibv_qp_type)res->ai_qp_type) != 0)
		return -1;
	x = rc_id_of(cm);
	if (res->ai_flags & RAI_PASSIVE) {
		rc = rdma_bind_addr(cm, res->ai_src_addr);
		if (rc != 0)
			goto err;
		if (pd != NULL)
			cm->pd = pd;
		if (qp_init_attr != NULL) {
			x->qp_init_attr = malloc(sizeof(*qp_init_attr));
			if (x->qp_init_attr == NULL) {
				errno = ENOMEM;
				goto err;
			}
			*x->qp_init_attr = *qp_init_attr;
			x->qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
		}
		*id = cm;
		return 0;
	}
	if (rdma_resolve_addr(cm, res->ai_src_addr, res->ai_dst_addr, 2000) != 0 ||
	    rdma_resolve_route(cm, 2000) != 0)
		goto err;
	if (qp_init_attr != NULL) {
		qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
		if (rdma_create_qp(cm, pd, qp_init_attr) != 0)
			goto err;
	}
	if (res->ai_connect_len > 0) {
		if (res->ai_connect_len > UCHAR_MAX) {
			errno = EINVAL;
			goto err;
		}
		x->connect = malloc(res->ai_connect_len);
		if (x->connect == NULL) {
			errno = ENOMEM;
			goto err;
		}
		memcpy(x->connect, res->ai_connect, res->ai_connect_len);
		x->connect_len = (uint8_t)res->ai_connect_len;
	}
	*id = cm;
	return 0;
err:
	rc = errno;
	rdma_destroy_ep(cm);
	return rc_err(rc);
}

RC_EXPORT void
rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id->qp != NULL)
		rdma_destroy_qp(id);
	if (id->srq != NULL)
		rdma_destroy_srq(id);
	rdma_destroy_id(id);
}
