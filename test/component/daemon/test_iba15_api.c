/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * IBA 1.5 ATOMIC WRITE and FLUSH through liburoce and the daemon core (shm
 * ABI 1.6): an in-process daemon (dt_daemon, UROCE_TEST_WORKERS workers)
 * and this process as its client, an RC QP pair over the loopback port; a
 * writes into b's half of one MR.
 *
 *   atomic_write: UROCE_WR_ATOMIC_WRITE through the shared send ring: the 8
 *     bytes land, the completion is UROCE_WC_ATOMIC_WRITE; a misaligned
 *     target completes REM_INV_REQ_ERR.
 *   flush: a WRITE then FLUSH GLOBAL of its range (RANGE) and of the MR (MR)
 *     complete WRITE, FLUSH, FLUSH in order; FLUSH PERSISTENT completes
 *     REM_ACCESS_ERR; REG_MR with FLUSH_PERSISTENT is refused (EINVAL).
 *   bad_posts: SGEs or inline data on either opcode, a FETH level the wire
 *     cannot carry: uroce_post_send() fails with EINVAL, nothing posted.
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
#define ACC \
	(UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ | \
	 UROCE_ACCESS_FLUSH_GLOBAL)

/* buf: a's memory [0, BUF_LEN/2), b's [BUF_LEN/2, BUF_LEN) */
static struct dt_rc_fixture t;

#define BBUF (t.buf + BUF_LEN / 2)

static void
setup(void)
{
	int rc = dt_rc_fixture_start(&t, "iba15", BUF_LEN, ACC, ACC);

	cr_assert_eq(rc, 0, "fixture: %s", strerror(-rc));
	cr_assert_geq(uroce_daemon_abi_minor(t.ctx), 6);
}

static void
teardown(void)
{
	dt_rc_fixture_stop(&t);
}

TestSuite(iba15_api, .init = setup, .fini = teardown, .timeout = 60);

static struct uroce_wc
wait_wc(struct uroce_cq *cq)
{
	struct uroce_wc wc;

	cr_assert_eq(dt_wait_wc(cq, &wc, 10), 1, "no completion");
	return wc;
}

static int
post_aw(uint64_t roff, uint64_t v, uint64_t id)
{
	struct uroce_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = UROCE_WR_ATOMIC_WRITE;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.atomic_write.remote_addr = (uintptr_t)BBUF + roff;
	wr.wr.atomic_write.rkey = t.mr->rkey;
	memcpy(wr.wr.atomic_write.data, &v, 8);
	return uroce_post_send(t.a, &wr, NULL);
}

static int
post_flush(uint64_t roff, uint64_t len, uint8_t type, uint8_t level, uint64_t id)
{
	struct uroce_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = UROCE_WR_FLUSH;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.flush.remote_addr = (uintptr_t)BBUF + roff;
	wr.wr.flush.rkey = t.mr->rkey;
	wr.wr.flush.length = len;
	wr.wr.flush.type = type;
	wr.wr.flush.level = level;
	return uroce_post_send(t.a, &wr, NULL);
}

Test(iba15_api, atomic_write)
{
	uint64_t v = 0xF00DF00DCAFEBEEFull, got;
	struct uroce_wc wc;

	cr_assert_eq(post_aw(1024, v, 1), 0);
	wc = wait_wc(t.cqa);
	cr_assert_eq(wc.status, UROCE_WC_SUCCESS, "%s", uroce_wc_status_name(wc.status));
	cr_expect_eq(wc.opcode, UROCE_WC_ATOMIC_WRITE);
	cr_expect_eq(wc.wr_id, 1);
	memcpy(&got, BBUF + 1024, 8);
	cr_expect_eq(got, v);
	cr_assert_eq(post_aw(1028, 1, 2), 0);
	wc = wait_wc(t.cqa);
	cr_expect_eq(wc.status, UROCE_WC_REM_INV_REQ_ERR, "%s", uroce_wc_status_name(wc.status));
	memcpy(&got, BBUF + 1032, 8);
	cr_expect_eq(got, 0);
}

Test(iba15_api, flush)
{
	struct uroce_sge sge = {(uintptr_t)t.buf, 256, t.mr->lkey};
	struct uroce_send_wr wr;
	struct uroce_wc wc;
	int i;

	memset(t.buf, 0x3C, 256);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 10;
	wr.opcode = UROCE_WR_RDMA_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)BBUF + 4096;
	wr.wr.rdma.rkey = t.mr->rkey;
	cr_assert_eq(uroce_post_send(t.a, &wr, NULL), 0);
	cr_assert_eq(post_flush(4096, 256, UROCE_FLUSH_GLOBAL, UROCE_FLUSH_RANGE, 11), 0);
	cr_assert_eq(post_flush(0, 0, UROCE_FLUSH_GLOBAL, UROCE_FLUSH_MR, 12), 0);
	for (i = 0; i < 3; i++) {
		wc = wait_wc(t.cqa);
		cr_assert_eq(wc.status, UROCE_WC_SUCCESS, "%s", uroce_wc_status_name(wc.status));
		cr_expect_eq(wc.wr_id, 10u + (unsigned int)i);
		cr_expect_eq(wc.opcode, i == 0 ? UROCE_WC_RDMA_WRITE : UROCE_WC_FLUSH);
	}
	cr_expect_eq(BBUF[4096 + 255], 0x3C);
	cr_expect_null(uroce_reg_mr(t.pd, t.buf, 4096, ACC | UROCE_ACCESS_FLUSH_PERSISTENT));
	cr_expect_eq(errno, EINVAL);
	cr_assert_eq(post_flush(0, 64, UROCE_FLUSH_PERSISTENT, UROCE_FLUSH_RANGE, 13), 0);
	wc = wait_wc(t.cqa);
	cr_expect_eq(wc.status, UROCE_WC_REM_ACCESS_ERR, "%s", uroce_wc_status_name(wc.status));
}

Test(iba15_api, bad_posts)
{
	struct uroce_sge sge = {(uintptr_t)t.buf, 8, t.mr->lkey};
	struct uroce_send_wr wr;
	struct uroce_wc wc;
	uint32_t op;

	for (op = UROCE_WR_FLUSH; op <= UROCE_WR_ATOMIC_WRITE; op++) {
		memset(&wr, 0, sizeof(wr));
		wr.opcode = op;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.flush.type = UROCE_FLUSH_GLOBAL;
		cr_expect_eq(uroce_post_send(t.a, &wr, NULL), -EINVAL, "opcode %u with an SGE", op);
		wr.send_flags = UROCE_SEND_INLINE;
		cr_expect_eq(uroce_post_send(t.a, &wr, NULL), -EINVAL, "opcode %u inline", op);
	}
	/* A level that does not fit the FETH's two bits: the daemon refuses the
	 * WQE (LOC_QP_OP_ERR), as any malformed WQE. */
	cr_assert_eq(post_flush(0, 64, UROCE_FLUSH_GLOBAL, 4, 20), 0);
	wc = wait_wc(t.cqa);
	cr_expect_eq(wc.status, UROCE_WC_LOC_QP_OP_ERR, "%s", uroce_wc_status_name(wc.status));
}
