/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Memory windows through liburoce and the daemon core (shm ABI 1.5): an
 * in-process daemon (dt_daemon, UROCE_TEST_WORKERS workers) and this
 * process as its client, with RC QP pairs over the loopback port. QP b owns
 * the windows (binds them), QP a is the peer that uses their rkeys.
 *
 *   Expect: the device reports MEM_WINDOW and MEM_WINDOW_TYPE_2B.
 *   type2_lifecycle: BIND_MW on b completes (BIND_MW); a's WRITE through
 *     the window lands; DEREG_MR of the bound MR is refused (EBUSY); a's
 *     SEND with Invalidate naming the window completes at b with WITH_INV
 *     and the key; a's WRITE with that key then fails (REM_ACCESS_ERR) and
 *     nothing lands; the MR deregisters once the window is gone.
 *   type1_and_local_inv: a type 1 window bound by b's BIND_MW (advanced
 *     key), used by a's READ; unbound with length 0, its key is refused. A
 *     type 2 window freed by LOCAL_INV (completion LOCAL_INV) refuses its key.
 *   bad_requests: ALLOC_MW of an unknown type (EINVAL), a BIND_MW with SGEs
 *     (EINVAL at post), DEALLOC_MW of an MR handle and DEREG_MR of a window
 *     handle (EINVAL).
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_daemon.h"
#include "uroce_verbs.h"

#include "daemon_test_util.h"
#include "dt_daemon.h"

#define BUF_LEN 65536u
#define WIN_OFF 8192u
#define WIN_LEN 4096u
#define RW (UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ)

/* buf: a's memory [0, BUF_LEN/2), b's [BUF_LEN/2, BUF_LEN) */
static struct dt_rc_fixture t;

#define BBUF (t.buf + BUF_LEN / 2)

static void
setup(void)
{
	int rc = dt_rc_fixture_start(&t, "mw", BUF_LEN, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_MW_BIND, UROCE_ACCESS_LOCAL_WRITE | RW);

	cr_assert_eq(rc, 0, "fixture: %s", strerror(-rc));
}

static void
teardown(void)
{
	dt_rc_fixture_stop(&t);
}

TestSuite(mw, .init = setup, .fini = teardown, .timeout = 60);

/* One completion from @p cq within a few seconds. */
static struct uroce_wc
wait_wc(struct uroce_cq *cq)
{
	struct uroce_wc wc;

	cr_assert_eq(dt_wait_wc(cq, &wc, 10), 1, "no completion");
	return wc;
}

static void
post(struct uroce_qp *qp, struct uroce_send_wr *wr)
{
	int rc = uroce_post_send(qp, wr, NULL);

	cr_assert_eq(rc, 0, "post_send: %s", strerror(-rc));
}

/* b binds @p mw over [off, off + len) of b's half with key byte @p kb. */
static struct uroce_wc
bind(struct uroce_mw *mw, uint8_t kb, uint64_t off, uint64_t len, int access)
{
	struct uroce_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xB1;
	wr.opcode = UROCE_WR_BIND_MW;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.bind_mw.rkey = (mw->rkey & ~0xFFu) | kb;
	wr.wr.bind_mw.mr_lkey = t.mr->lkey;
	wr.wr.bind_mw.addr = (uintptr_t)BBUF + off;
	wr.wr.bind_mw.length = len;
	wr.wr.bind_mw.access = (uint32_t)access;
	post(t.b, &wr);
	mw->rkey = wr.wr.bind_mw.rkey; /* the poster keeps the key current */
	return wait_wc(t.cqb);
}

/* a: one RDMA op of @p len bytes from/to a's half at @p loff. */
static struct uroce_wc
rdma(uint32_t op, uint32_t rkey, uint64_t roff, uint64_t loff, uint32_t len)
{
	struct uroce_sge sge = {(uintptr_t)t.buf + loff, len, t.mr->lkey};
	struct uroce_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = op;
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)BBUF + roff;
	wr.wr.rdma.rkey = rkey;
	post(t.a, &wr);
	return wait_wc(t.cqa);
}

Test(mw, type2_lifecycle)
{
	struct uroce_device_attr dev;
	struct uroce_recv_wr rwr;
	struct uroce_send_wr wr;
	struct uroce_sge sge;
	struct uroce_mw *mw;
	struct uroce_wc wc;
	uint32_t key;

	cr_assert_eq(uroce_query_device(t.ctx, &dev), 0);
	cr_expect(dev.device_cap_flags & UROCE_DEVICE_MEM_WINDOW);
	cr_expect(dev.device_cap_flags & UROCE_DEVICE_MEM_WINDOW_TYPE_2B);
	mw = uroce_alloc_mw(t.pd, UROCE_MW_TYPE_2);
	cr_assert_not_null(mw, "alloc_mw: %s", strerror(errno));
	wc = bind(mw, 0x21, WIN_OFF, WIN_LEN, RW);
	/* Expect: the bind completes as BIND_MW. */
	cr_assert_eq(wc.status, UROCE_WC_SUCCESS, "bind: %s", uroce_wc_status_name(wc.status));
	cr_expect_eq(wc.opcode, UROCE_WC_BIND_MW);
	key = mw->rkey;
	/* Expect: a's WRITE through the window lands in b's half. */
	memset(t.buf, 0xA5, 64);
	wc = rdma(UROCE_WR_RDMA_WRITE, key, WIN_OFF + WIN_LEN - 64, 0, 64);
	cr_assert_eq(wc.status, UROCE_WC_SUCCESS, "%s", uroce_wc_status_name(wc.status));
	cr_expect_eq(BBUF[WIN_OFF + WIN_LEN - 1], 0xA5);
	/* Expect: the MR is held by the bound window. */
	cr_expect_eq(uroce_dereg_mr(t.mr), -EBUSY);
	/* Expect: a's SEND with Invalidate frees it; b's receive says so. */
	sge = (struct uroce_sge){(uintptr_t)BBUF, 64, t.mr->lkey};
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 0x77;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	cr_assert_eq(uroce_post_recv(t.b, &rwr, NULL), 0);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = UROCE_WR_SEND_WITH_INV;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.imm_data = key;
	post(t.a, &wr);
	wc = wait_wc(t.cqa);
	cr_assert_eq(wc.status, UROCE_WC_SUCCESS, "%s", uroce_wc_status_name(wc.status));
	wc = wait_wc(t.cqb);
	cr_assert_eq(wc.status, UROCE_WC_SUCCESS, "%s", uroce_wc_status_name(wc.status));
	cr_expect_eq(wc.wr_id, 0x77);
	cr_expect(wc.wc_flags & UROCE_WC_WITH_INV);
	cr_expect_eq(wc.imm_data, key);
	/* Expect: the key is stale: REM_ACCESS_ERR, nothing written. */
	memset(t.buf, 0x3C, 64);
	wc = rdma(UROCE_WR_RDMA_WRITE, key, WIN_OFF, 0, 64);
	cr_expect_eq(wc.status, UROCE_WC_REM_ACCESS_ERR, "%s", uroce_wc_status_name(wc.status));
	cr_expect_eq(BBUF[WIN_OFF], 0);
	cr_expect_eq(uroce_dealloc_mw(mw), 0);
	cr_expect_eq(uroce_dereg_mr(t.mr), 0);
	t.mr = NULL;
}

Test(mw, type1_and_local_inv)
{
	struct uroce_send_wr wr;
	struct uroce_mw *mw1, *mw2;
	struct uroce_wc wc;
	uint32_t k2;

	mw1 = uroce_alloc_mw(t.pd, UROCE_MW_TYPE_1);
	mw2 = uroce_alloc_mw(t.pd, UROCE_MW_TYPE_2);
	cr_assert(mw1 != NULL && mw2 != NULL, "alloc_mw: %s", strerror(errno));
	memset(BBUF + 512, 0x66, 128);
	wc = bind(mw1, (uint8_t)(mw1->rkey + 1), 512, 128, UROCE_ACCESS_REMOTE_READ);
	cr_assert_eq(wc.status, UROCE_WC_SUCCESS, "%s", uroce_wc_status_name(wc.status));
	/* Expect: a READs the window's bytes. */
	wc = rdma(UROCE_WR_RDMA_READ, mw1->rkey, 512, 1024, 128);
	cr_assert_eq(wc.status, UROCE_WC_SUCCESS, "%s", uroce_wc_status_name(wc.status));
	cr_expect_eq(t.buf[1024 + 127], 0x66);
	/* Expect: a type 2 window freed by LOCAL_INV (completion LOCAL_INV). */
	wc = bind(mw2, 9, 0, 64, RW);
	cr_assert_eq(wc.status, UROCE_WC_SUCCESS);
	k2 = mw2->rkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x1F;
	wr.opcode = UROCE_WR_LOCAL_INV;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.imm_data = k2;
	post(t.b, &wr);
	wc = wait_wc(t.cqb);
	cr_assert_eq(wc.status, UROCE_WC_SUCCESS, "%s", uroce_wc_status_name(wc.status));
	cr_expect_eq(wc.opcode, UROCE_WC_LOCAL_INV);
	/* Expect: type 1 unbound by a zero-length bind; its key is refused. */
	memset(&wr, 0, sizeof(wr));
	wc = bind(mw1, (uint8_t)(mw1->rkey + 1), 0, 0, 0);
	cr_assert_eq(wc.status, UROCE_WC_SUCCESS, "%s", uroce_wc_status_name(wc.status));
	wc = rdma(UROCE_WR_RDMA_READ, mw1->rkey, 512, 1024, 128);
	cr_expect_eq(wc.status, UROCE_WC_REM_ACCESS_ERR, "%s", uroce_wc_status_name(wc.status));
	cr_expect_eq(uroce_dealloc_mw(mw1), 0);
	cr_expect_eq(uroce_dealloc_mw(mw2), 0);
}

/* The stale key of a LOCAL_INV'd window: a's WRITE fails (separately, as a
 * remote access error puts a's QP in ERR). */
Test(mw, local_inv_key_refused)
{
	struct uroce_send_wr wr;
	struct uroce_mw *mw;
	struct uroce_wc wc;

	mw = uroce_alloc_mw(t.pd, UROCE_MW_TYPE_2);
	cr_assert_not_null(mw);
	cr_assert_eq(bind(mw, 3, 0, 64, RW).status, UROCE_WC_SUCCESS);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = UROCE_WR_LOCAL_INV;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.imm_data = mw->rkey;
	post(t.b, &wr);
	cr_assert_eq(wait_wc(t.cqb).status, UROCE_WC_SUCCESS);
	wc = rdma(UROCE_WR_RDMA_WRITE, mw->rkey, 0, 0, 8);
	cr_expect_eq(wc.status, UROCE_WC_REM_ACCESS_ERR, "%s", uroce_wc_status_name(wc.status));
	cr_expect_eq(uroce_dealloc_mw(mw), 0);
}

Test(mw, bad_requests)
{
	struct uroce_sge sge = {(uintptr_t)t.buf, 8, 0};
	struct uroce_send_wr wr;
	struct uroce_mw *mw;

	errno = 0;
	cr_expect_null(uroce_alloc_mw(t.pd, 3));
	cr_expect_eq(errno, EINVAL);
	mw = uroce_alloc_mw(t.pd, UROCE_MW_TYPE_2);
	cr_assert_not_null(mw);
	sge.lkey = t.mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.opcode = UROCE_WR_BIND_MW;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.bind_mw.rkey = mw->rkey;
	cr_expect_eq(uroce_post_send(t.b, &wr, NULL), -EINVAL, "a bind carries no data");
	/* Expect: a window handle is no MR handle, and the other way round
	 * (a refused call frees nothing, so copies on the stack will do). */
	{
		struct uroce_mw fake_mw = *mw;
		struct uroce_mr fake_mr = *t.mr;

		fake_mw.handle = t.mr->handle;
		fake_mr.handle = mw->handle;
		cr_expect_eq(uroce_dealloc_mw(&fake_mw), -EINVAL);
		cr_expect_eq(uroce_dereg_mr(&fake_mr), -EINVAL);
	}
	cr_expect_eq(uroce_dealloc_mw(mw), 0);
}
