/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Memory windows through the drop-in libibverbs (drivers/verbs), as a verbs
 * program writes them against rdma-core 44's verbs.h: run by
 * test_verbs_mw.sh with uroce-run on uroced_lite. Two RC QPs of one PD on
 * the daemon's loopback port: b owns the windows, a uses their rkeys.
 *
 *   Expect: device caps MEM_WINDOW and MEM_WINDOW_TYPE_2B, max_mw > 0.
 *   Type 1: ibv_alloc_mw, ibv_bind_mw (rkey advanced by ibv_inc_rkey,
 *   IBV_WC_BIND_MW), a's WRITE through it lands; ibv_bind_mw of a type 2
 *   window fails (EINVAL, the verbs.h inline).
 *   Type 2: IBV_WR_BIND_MW by ibv_post_send on b, a's SEND_WITH_INV
 *   naming it: b's receive has IBV_WC_WITH_INV and the rkey; ibv_dereg_mr
 *   refused (EBUSY) before; a's WRITE with the stale key: REM_ACCESS_ERR.
 *   ibv_wr_bind_mw / ibv_wr_local_inv through an ibv_qp_ex on a fresh pair.
 * Prints one "verbs_mw: ok: ..." line per check; exit 0 only if all pass.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_probe.h"

#define BUF_LEN 65536
#define RW (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

const char *probe_name = "verbs_mw";
static struct ibv_mr *mr;
static uint8_t *buf;

static struct ibv_wc
write_from(struct ibv_qp *a, uint32_t rkey, uint8_t *dst, uint32_t len)
{
	struct ibv_sge sge = {(uintptr_t)buf, len, mr->lkey};
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(a, &wr, &bad) != 0)
		DIE("post WRITE");
	return probe_wait_wc(cqa);
}

int
main(void)
{
	struct ibv_device_attr_ex dx;
	struct ibv_qp *a, *b;
	struct ibv_mw *mw1, *mw2;
	struct ibv_mw_bind mb;
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	uint8_t *win = NULL;
	uint32_t key;
	int rc;

	probe_open();
	memset(&dx, 0, sizeof(dx));
	if (ibv_query_device_ex(ctx, NULL, &dx) != 0)
		DIE("query_device_ex");
	CHECK((dx.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
	      (dx.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) &&
	      dx.orig_attr.max_mw > 0, "caps %#x, max_mw %d", dx.orig_attr.device_cap_flags,
	      dx.orig_attr.max_mw);
	if (posix_memalign((void **)&buf, 4096, BUF_LEN) != 0)
		DIE("objects");
	memset(buf, 0, BUF_LEN);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	if (mr == NULL)
		DIE("reg_mr with MW_BIND: %s", strerror(errno));
	win = buf + 32768;
	probe_pair(&a, &b, RW, 0);

	/* Type 1 through ibv_bind_mw. */
	mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	CHECK(mw1 != NULL && mw2 != NULL, "ibv_alloc_mw types 1 and 2 (%s)", strerror(errno));
	if (mw1 == NULL || mw2 == NULL)
		return 1;
	memset(&mb, 0, sizeof(mb));
	mb.wr_id = 11;
	mb.send_flags = IBV_SEND_SIGNALED;
	mb.bind_info.mr = mr;
	mb.bind_info.addr = (uintptr_t)win;
	mb.bind_info.length = 4096;
	mb.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	key = mw1->rkey;
	rc = ibv_bind_mw(b, mw1, &mb);
	wc = probe_wait_wc(cqb);
	CHECK(rc == 0 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW &&
	      mw1->rkey == ibv_inc_rkey(key), "ibv_bind_mw type 1: rc %d, %s, opcode %d, rkey %#x",
	      rc, ibv_wc_status_str(wc.status), wc.opcode, mw1->rkey);
	CHECK(ibv_bind_mw(b, mw2, &mb) == EINVAL, "ibv_bind_mw of a type 2 window: EINVAL");
	memset(buf, 0x3A, 64);
	wc = write_from(a, mw1->rkey, win + 4032, 64);
	CHECK(wc.status == IBV_WC_SUCCESS && win[4095] == 0x3A,
	      "WRITE through the type 1 window: %s", ibv_wc_status_str(wc.status));

	/* Type 2 through IBV_WR_BIND_MW, freed by a SEND with Invalidate. */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 12;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw2;
	wr.bind_mw.rkey = ibv_inc_rkey(mw2->rkey);
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)win + 8192;
	wr.bind_mw.bind_info.length = 256;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	rc = ibv_post_send(b, &wr, &bad);
	wc = probe_wait_wc(cqb);
	key = wr.bind_mw.rkey;
	CHECK(rc == 0 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW,
	      "IBV_WR_BIND_MW type 2: %s", ibv_wc_status_str(wc.status));
	CHECK(ibv_dereg_mr(mr) == EBUSY, "ibv_dereg_mr of the MR with bound windows: EBUSY");
	sge = (struct ibv_sge){(uintptr_t)buf + 1024, 64, mr->lkey};
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 13;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	if (ibv_post_recv(b, &rwr, &rbad) != 0)
		DIE("post_recv");
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = key;
	if (ibv_post_send(a, &wr, &bad) != 0)
		DIE("post SEND_WITH_INV");
	wc = probe_wait_wc(cqa);
	CHECK(wc.status == IBV_WC_SUCCESS, "SEND_WITH_INV: %s", ibv_wc_status_str(wc.status));
	wc = probe_wait_wc(cqb);
	CHECK(wc.status == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_WITH_INV) &&
	      wc.invalidated_rkey == key, "receive: WITH_INV, invalidated_rkey %#x (want %#x)",
	      wc.invalidated_rkey, key);
	wc = write_from(a, key, win + 8192, 8);
	CHECK(wc.status == IBV_WC_REM_ACCESS_ERR && win[8192] == 0,
	      "WRITE with the invalidated key: %s", ibv_wc_status_str(wc.status));

	/* ibv_wr_bind_mw and ibv_wr_local_inv on a fresh pair. */
	probe_pair(&a, &b, RW, IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV);
	{
		struct ibv_qp_ex *x = ibv_qp_to_qp_ex(b);
		struct ibv_mw_bind_info bi = {mr, (uintptr_t)win + 12288, 128,
					      IBV_ACCESS_REMOTE_WRITE};

		key = ibv_inc_rkey(mw2->rkey);
		ibv_wr_start(x);
		x->wr_id = 14;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(x, mw2, key, &bi);
		x->wr_id = 15;
		ibv_wr_local_inv(x, key);
		rc = ibv_wr_complete(x);
		wc = probe_wait_wc(cqb);
		CHECK(rc == 0 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW,
		      "ibv_wr_bind_mw: rc %d %s", rc, ibv_wc_status_str(wc.status));
		wc = probe_wait_wc(cqb);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV,
		      "ibv_wr_local_inv: %s opcode %d", ibv_wc_status_str(wc.status), wc.opcode);
	}
	wc = write_from(a, key, win + 12288, 8);
	CHECK(wc.status == IBV_WC_REM_ACCESS_ERR, "WRITE with the LOCAL_INV'd key: %s",
	      ibv_wc_status_str(wc.status));
	CHECK(ibv_dealloc_mw(mw1) == 0 && ibv_dealloc_mw(mw2) == 0, "ibv_dealloc_mw");
	CHECK(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr once the windows are gone");
	printf("verbs_mw: %d failure(s)\n", probe_fails);
	return probe_fails == 0 ? 0 : 1;
}
