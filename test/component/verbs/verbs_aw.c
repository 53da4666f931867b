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

#include "verbs_probe.h"

#define BUF_LEN 65536
/* rdma-core 45's IBV_ACCESS_FLUSH_GLOBAL / _PERSISTENT (absent from 44). */
#define ACCESS_FLUSH_GLOBAL (1 << 8)
#define ACCESS_FLUSH_PERSISTENT (1 << 9)
#define QP_ACCESS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | ACCESS_FLUSH_GLOBAL)

const char *probe_name = "verbs_aw";

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
	return probe_wait_wc(cqa);
}

int
main(void)
{
	struct ibv_device_attr_ex dx;
	struct ibv_qp *a, *b, *c, *d;
	struct ibv_mr *mr, *pmr;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	uint64_t v = 0x1122334455667788ull, got;
	uint8_t *buf;

	probe_open();
	memset(&dx, 0, sizeof(dx));
	CHECK(ibv_query_device_ex(ctx, NULL, &dx) == 0, "query_device_ex");
	CHECK(dx.device_cap_flags_ex & (1ULL << 40), "device_cap_flags_ex ATOMIC_WRITE");
	CHECK(dx.device_cap_flags_ex & (1ULL << 38), "device_cap_flags_ex FLUSH_GLOBAL");
	CHECK(!(dx.device_cap_flags_ex & (1ULL << 39)), "no FLUSH_PERSISTENT");
	buf = aligned_alloc(4096, BUF_LEN);
	if (buf == NULL)
		DIE("objects");
	memset(buf, 0, BUF_LEN);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			ACCESS_FLUSH_GLOBAL);
	CHECK(mr != NULL, "reg_mr with FLUSH_GLOBAL");
	if (mr == NULL)
		DIE("reg_mr: %s", strerror(errno));
	pmr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | ACCESS_FLUSH_PERSISTENT);
	CHECK(pmr == NULL, "reg_mr with FLUSH_PERSISTENT refused (errno %d)", errno);

	probe_pair(&a, &b, QP_ACCESS, IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_WRITE);
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
	probe_pair(&c, &d, QP_ACCESS, IBV_QP_EX_WITH_ATOMIC_WRITE);
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
	free(buf);
	printf("verbs_aw: %d failure(s)\n", probe_fails);
	return probe_fails ? 1 : 0;
}
