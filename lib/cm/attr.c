/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The QP attributes of a connection, from its REQ and REP (IBA 12.7), the
 * way Linux's CM computes them (ib_cm_init_qp_attr), so that a QP
 * connected by uroce's CM to rxe or a ConnectX behaves as one connected by
 * the kernel. The values that cross over: each side's starting PSN is the
 * PSN it expects to receive, so its peer sends with it; the READ/atomic
 * resources one side issues are what the other accepts. Wire truth:
 * test/vectors/rxe/rxe-write-cm-s4096.pcap (the active side sends with the
 * REP's PSN, the passive side with the REQ's).
 */

#include <errno.h>
#include <string.h>

#include "cm_internal.h"

int
uroce_cm_qp_attr(const struct uroce_cm_id *id, enum uroce_qp_state state,
		 enum uroce_mtu port_mtu, struct uroce_cm_qp_attr *a, int *mask)
{
	const struct uroce_cm_path *p;
	bool rc_qp;

	if (id == NULL || a == NULL || mask == NULL || !id->has_req)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->qp_state = state;
	a->port_num = 1;
	rc_qp = id->req.transport == UROCE_CM_TRANSPORT_RC;
	p = &id->req.primary;
	switch (state) {
	case UROCE_QPS_INIT:
		/* IBA 12.7.29: READs and atomics only if this side accepts any. */
		a->qp_access_flags = UROCE_ACCESS_REMOTE_WRITE;
		if (id->resp_res > 0)
			a->qp_access_flags |= UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC;
		*mask = UROCE_QP_STATE | UROCE_QP_ACCESS_FLAGS | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT;
		return 0;
	case UROCE_QPS_RTR:
		/* The active side learns the peer's QP from the REP. */
		if (id->active && !id->has_rep)
			return -EAGAIN;
		a->dest_qp_num = id->remote_qpn;
		a->path_mtu = id->req.path_mtu;
		if (port_mtu >= UROCE_MTU_256 && a->path_mtu > port_mtu)
			a->path_mtu = port_mtu;
		/* This side's starting PSN: its REQ's, or its REP's (the
		 * passive side asks before it answers: 0 until then, the caller
		 * supplies the PSN it will put in the REP). */
		if (id->active)
			a->rq_psn = id->req.starting_psn;
		else if (id->has_rep)
			a->rq_psn = id->rep.starting_psn;
		/* The REQ's path runs from the active side: swap for the passive. */
		memcpy(a->dgid, id->active ? p->remote_gid : p->local_gid, 16);
		memcpy(a->sgid, id->active ? p->local_gid : p->remote_gid, 16);
		a->flow_label = p->flow_label;
		a->hop_limit = p->hop_limit;
		a->traffic_class = p->traffic_class;
		a->sl = p->sl;
		*mask = UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU | UROCE_QP_DEST_QPN |
			UROCE_QP_RQ_PSN;
		if (rc_qp) {
			a->max_dest_rd_atomic = id->resp_res;
			a->min_rnr_timer = 0;
			*mask |= UROCE_QP_MAX_DEST_RD_ATOMIC | UROCE_QP_MIN_RNR_TIMER;
		}
		return 0;
	case UROCE_QPS_RTS:
		if (id->active && !id->has_rep)
			return -EAGAIN;
		/* The peer's starting PSN is ours to send with. */
		a->sq_psn = id->active ? id->rep.starting_psn : id->req.starting_psn;
		*mask = UROCE_QP_STATE | UROCE_QP_SQ_PSN;
		if (rc_qp) {
			a->timeout = id->local_ack_timeout;
			a->retry_cnt = id->req.retry_count;
			a->rnr_retry = id->active ? id->rep.rnr_retry_count : id->req.rnr_retry_count;
			a->max_rd_atomic = id->init_depth;
			*mask |= UROCE_QP_TIMEOUT | UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY |
				 UROCE_QP_MAX_QP_RD_ATOMIC;
		}
		return 0;
	default:
		return -EINVAL;
	}
}
