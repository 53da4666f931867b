/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * IBA 1.5 ATOMIC WRITE through the drop-in libibverbs (drivers/verbs), as a
 * verbs program writes it against rdma-core 44's verbs.h: run by
 * test_verbs_aw.sh with uroce-run on uroced_lite. Two RC QPs of one PD on
 * the daemon's loopback port; a writes into b's MR.
 *
 *   Expect: device_cap_flags_ex has ATOMIC_WRITE (1<<40) and FLUSH_GLOBAL
 *   (1<<38), not FLUSH_PERSISTENT (1<<39). An MR with FLUSH_GLOBAL (1<<8)
 *   registers; with FLUSH_PERSISTENT (1<<9) it does not. ibv_wr_atomic_write
 *   on a QP created with IBV_QP_EX_WITH_ATOMIC_WRITE: IBV_WC_ATOMIC_WRITE,
 *   the 8 bytes land; a misaligned address: IBV_WC_REM_INV_REQ_ERR, nothing
 *   written. IBV_WR_ATOMIC_WRITE by ibv_post_send: EINVAL.
 * Prints one "verbs_aw: ok: ..." line per check; exit 0 only if all pass.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

static int fails;

#define CHECK(c, ...)                                                   \
	do {                                                            \
		if (c) {                                                \
			printf("verbs_aw: ok: ");                        \
		} else {                                                \
			printf("verbs_aw: FAIL: ");                      \
			fails++;                                        \
		}                                                       \
		printf(__VA_ARGS__);                                    \
		printf("\n");                                           \
	} while (0)
#define DIE(...)                                                        \
	do {                                                            \
		printf("verbs_aw: FAIL: " __VA_ARGS__);                 \
		printf("\n");                                           \
		exit(1);                                                \
	} while (0)

#define BUF_LEN 65536
/* rdma-core 45's IBV_ACCESS_FLUSH_GLOBAL / _PERSISTENT (absent from 44). */
#define ACCESS_FLUSH_GLOBAL (1 << 8)
#define ACCESS_FLUSH_PERSISTENT (1 << 9)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cqa, *cqb;
static struct ibv_mr *mr;
static uint8_t *buf;
static union ibv_gid gid;

static void
qp_up(struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | ACCESS_FLUSH_GLOBAL;
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

static void
pair(struct ibv_qp **a, struct ibv_qp **b, uint64_t send_ops)
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
	ia.send_cq = ia.recv_cq = cqa;
	*a = ibv_create_qp_ex(ctx, &ia);
	ia.send_cq = ia.recv_cq = cqb;
	*b = ibv_create_qp_ex(ctx, &ia);
	if (*a == NULL || *b == NULL)
		DIE("create_qp: %s", strerror(errno));
	qp_up(*a, (*b)->qp_num);
	qp_up(*b, (*a)->qp_num);
}

static struct ibv_wc
wait_wc(struct ibv_cq *cq)
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

/* Post one ibv_wr_atomic_write on @p a and wait for its completion. */
static struct ibv_wc
atomic_write(struct ibv_qp *a, uint32_t rkey, uint64_t raddr, uint64_t v)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a);

	ibv_wr_start(x);
	x->wr_id = v;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, rkey, raddr, &v);
	if (ibv_wr_complete(x) != 0)
		DIE("wr_complete: %s", strerror(errno));
	return wait_wc(cqa);
}

int
main(void)
{
	struct ibv_device **list;
	struct ibv_device_attr_ex dx;
	struct ibv_qp *a, *b, *c, *d;
	struct ibv_mr *pmr;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	uint64_t v = 0x1122334455667788ull, got;
	int n;

	list = ibv_get_device_list(&n);
	if (list == NULL || n < 1)
		DIE("no device");
	ctx = ibv_open_device(list[0]);
	if (ctx == NULL)
		DIE("open_device");
	if (ibv_query_gid(ctx, 1, 0, &gid) != 0)
		DIE("query_gid");
	memset(&dx, 0, sizeof(dx));
	CHECK(ibv_query_device_ex(ctx, NULL, &dx) == 0, "query_device_ex");
	CHECK(dx.device_cap_flags_ex & (1ULL << 40), "device_cap_flags_ex ATOMIC_WRITE");
	CHECK(dx.device_cap_flags_ex & (1ULL << 38), "device_cap_flags_ex FLUSH_GLOBAL");
	CHECK(!(dx.device_cap_flags_ex & (1ULL << 39)), "no FLUSH_PERSISTENT");
	pd = ibv_alloc_pd(ctx);
	cqa = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	cqb = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	buf = aligned_alloc(4096, BUF_LEN);
	if (pd == NULL || cqa == NULL || cqb == NULL || buf == NULL)
		DIE("objects");
	memset(buf, 0, BUF_LEN);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			ACCESS_FLUSH_GLOBAL);
	CHECK(mr != NULL, "reg_mr with FLUSH_GLOBAL");
	if (mr == NULL)
		DIE("reg_mr: %s", strerror(errno));
	pmr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | ACCESS_FLUSH_PERSISTENT);
	CHECK(pmr == NULL, "reg_mr with FLUSH_PERSISTENT refused (errno %d)", errno);

	pair(&a, &b, IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_WRITE);
	wc = atomic_write(a, mr->rkey, (uintptr_t)buf + 64, v);
	memcpy(&got, buf + 64, 8);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_ATOMIC_WRITE && got == v,
	      "ibv_wr_atomic_write: %s, opcode %d, word 0x%llx",
	      ibv_wc_status_str(wc.status), wc.opcode, (unsigned long long)got);

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_ATOMIC_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)buf + 72;
	wr.wr.rdma.rkey = mr->rkey;
	CHECK(ibv_post_send(a, &wr, &bad) == EINVAL, "IBV_WR_ATOMIC_WRITE by ibv_post_send: EINVAL");

	wc = atomic_write(a, mr->rkey, (uintptr_t)buf + 132, 5);
	memcpy(&got, buf + 128, 8);
	CHECK(wc.status == IBV_WC_REM_INV_REQ_ERR && got == 0,
	      "misaligned ATOMIC WRITE: %s", ibv_wc_status_str(wc.status));

	/* A fresh pair still works after the failed one. */
	pair(&c, &d, IBV_QP_EX_WITH_ATOMIC_WRITE);
	wc = atomic_write(c, mr->rkey, (uintptr_t)buf + 256, 42);
	memcpy(&got, buf + 256, 8);
	CHECK(wc.status == IBV_WC_SUCCESS && got == 42, "second pair: %s",
	      ibv_wc_status_str(wc.status));

	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_qp(c);
	ibv_destroy_qp(d);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cqa);
	ibv_destroy_cq(cqb);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return fails ? 1 : 0;
}
