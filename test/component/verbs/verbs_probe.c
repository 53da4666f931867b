/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* The drop-in probes' common part (verbs_probe.h). */

#include <errno.h>
#include <string.h>
#include <time.h>

#include "verbs_probe.h"

int probe_fails;
struct ibv_context *ctx;
struct ibv_pd *pd;
struct ibv_cq *cqa, *cqb;
union ibv_gid gid;

void
probe_open(void)
{
	struct ibv_device **list;
	int n;

	list = ibv_get_device_list(&n);
	if (list == NULL || n < 1)
		DIE("no device");
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (ctx == NULL)
		DIE("open_device: %s", strerror(errno));
	if (ibv_query_gid(ctx, 1, 0, &gid) != 0)
		DIE("query_gid");
	pd = ibv_alloc_pd(ctx);
	cqa = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	cqb = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (pd == NULL || cqa == NULL || cqb == NULL)
		DIE("objects: %s", strerror(errno));
}

void
probe_qp_up(struct ibv_qp *qp, uint32_t dqpn, unsigned int access)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS) != 0)
		DIE("INIT: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
		DIE("RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) != 0)
		DIE("RTS: %s", strerror(errno));
}

void
probe_pair(struct ibv_qp **a, struct ibv_qp **b, unsigned int access, uint64_t send_ops)
{
	probe_pair_on(cqa, cqb, a, b, access, send_ops);
}

void
probe_pair_on(struct ibv_cq *ca, struct ibv_cq *cb, struct ibv_qp **a, struct ibv_qp **b,
	      unsigned int access, uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex ia;

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = 16;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.pd = pd;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | (send_ops ? IBV_QP_INIT_ATTR_SEND_OPS_FLAGS : 0);
	ia.send_ops_flags = send_ops;
	ia.send_cq = ia.recv_cq = ca;
	*a = ibv_create_qp_ex(ctx, &ia);
	ia.send_cq = ia.recv_cq = cb;
	*b = ibv_create_qp_ex(ctx, &ia);
	if (*a == NULL || *b == NULL)
		DIE("create_qp: %s", strerror(errno));
	probe_qp_up(*a, (*b)->qp_num, access);
	probe_qp_up(*b, (*a)->qp_num, access);
}

struct ibv_wc
probe_wait_wc(struct ibv_cq *cq)
{
	struct timespec ts = {0, 100000};
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 100000; i++) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			DIE("poll_cq");
		if (n == 1)
			return wc;
		nanosleep(&ts, NULL);
	}
	DIE("no completion");
}

