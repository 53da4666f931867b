/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * XRC (IBA 1.2, shm ABI 1.7) through liburoce and the daemon core: an
 * in-process daemon (dt_daemon, UROCE_TEST_WORKERS workers) and this process
 * as its client, on the loopback port. Each initiator QP has a send CQ of its
 * own; with two workers the domain (SRQ, target QPs) is placed on worker 0
 * with the SRQ's CQ and the first initiator on worker 1 (the round robin),
 * so its requests cross workers.
 *
 *   Expect: traffic: two initiators' SENDs through two target QPs land in the
 *     one XRC SRQ (each receive on the SRQ's CQ with its TGT QP's number);
 *     a WRITE and a FETCH_ADD through a target QP use an rkey of the SRQ's
 *     PD; a SEND naming a number that is no SRQ of the domain completes
 *     REM_ACCESS_ERR at the initiator.
 *   refusals: a domain's handle used as a PD (REG_MR) and a PD's handle used
 *     as a domain (TGT QP, XRC SRQ) are EINVAL; receives on XRC QPs and sends
 *     on a TGT QP are EINVAL; the SRQ's CQ cannot be destroyed (EBUSY) nor the
 *     domain closed (EBUSY) while in use; a 25-bit SRQ number fails the post;
 *     with two workers, an XRC SRQ on a CQ of the other worker is EXDEV.
 *   teardown: closing the client with every XRC object alive reclaims them all.
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_daemon.h"
#include "uroce_verbs.h"

#include "daemon_test_util.h"
#include "dt_daemon.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_LSAN 1
#endif
#endif
#ifdef HAVE_LSAN
#include <sanitizer/lsan_interface.h>
#define lsan_disable() __lsan_disable()
#define lsan_enable() __lsan_enable()
#else
#define lsan_disable() do { } while (0)
#define lsan_enable() do { } while (0)
#endif

#define BUF_LEN 65536u
#define ACC (UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ | \
	     UROCE_ACCESS_REMOTE_ATOMIC)

static struct dt_daemon dd;

struct xenv {
	struct uroce_context *ctx;
	struct uroce_pd *pd;
	uint8_t *buf;
	struct uroce_mr *mr;
	struct uroce_xrcd *x;
	struct uroce_cq *srq_cq, *scq[2];
	struct uroce_srq *srq;
	struct uroce_qp *tgt[2], *ini[2];
};

static void
setup(void)
{
	struct uroce_daemon_conf conf;

	memset(&conf, 0, sizeof(conf));
	conf.n_workers = dt_workers();
	cr_assert_eq(dt_daemon_start(&dd, "xrc", &conf), 0);
}

static void
teardown(void)
{
	dt_daemon_stop(&dd);
}

TestSuite(xrc_api, .init = setup, .fini = teardown, .timeout = 60);

static void
xenv_open(struct xenv *e)
{
	struct uroce_srq_init_attr si;
	uint8_t gid[16];
	int i;

	memset(e, 0, sizeof(*e));
	e->ctx = uroce_open_device(dd.sock_path);
	cr_assert_not_null(e->ctx);
	e->pd = uroce_alloc_pd(e->ctx);
	e->buf = uroce_alloc_buf(e->ctx, BUF_LEN);
	cr_assert(e->pd && e->buf);
	memset(e->buf, 0, BUF_LEN);
	e->mr = uroce_reg_mr(e->pd, e->buf, BUF_LEN, ACC);
	e->x = uroce_open_xrcd(e->ctx);
	e->srq_cq = uroce_create_cq(e->ctx, 64, NULL);
	cr_assert(e->mr && e->x && e->srq_cq, "%s", strerror(errno));
	memset(&si, 0, sizeof(si));
	si.attr.max_wr = 16;
	si.attr.max_sge = 1;
	e->srq = uroce_create_xrc_srq(e->pd, e->x, e->srq_cq, &si);
	cr_assert_not_null(e->srq, "create_xrc_srq: %s", strerror(errno));
	cr_assert_neq(e->srq->srq_num, 0);
	cr_assert_eq(uroce_query_gid(e->ctx, 1, 0, gid), 0);
	for (i = 0; i < 2; i++) {
		struct uroce_qp_init_attr ia;
		struct dt_rc to_tgt, to_ini;

		e->scq[i] = uroce_create_cq(e->ctx, 64, NULL);
		cr_assert_not_null(e->scq[i]);
		e->tgt[i] = uroce_create_xrc_tgt_qp(e->x, NULL);
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = e->scq[i];
		ia.qp_type = UROCE_QPT_XRC_SEND;
		ia.cap.max_send_wr = 16;
		ia.cap.max_send_sge = 1;
		e->ini[i] = uroce_create_qp(e->pd, &ia);
		cr_assert(e->tgt[i] && e->ini[i], "QPs %d: %s", i, strerror(errno));
		cr_expect_eq(e->ini[i]->cap.max_recv_wr, 0);
		to_tgt = (struct dt_rc){.dgid = gid, .dqpn = e->tgt[i]->qp_num, .rq_psn = 9,
					.sq_psn = 3, .rd_atomic = 4};
		to_ini = (struct dt_rc){.dgid = gid, .dqpn = e->ini[i]->qp_num, .rq_psn = 3,
					.sq_psn = 9, .rd_atomic = 4};
		cr_assert_eq(dt_qp_to_rts(e->ini[i], 0, &to_tgt), 0);
		cr_assert_eq(dt_qp_to_rts(e->tgt[i], ACC, &to_ini), 0);
	}
}

/* Destroy what the test left, in dependency order, then close the device
 * (a field a test destroyed itself is NULL). */
static void
xenv_close(struct xenv *e)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (e->ini[i] != NULL)
			cr_expect_eq(uroce_destroy_qp(e->ini[i]), 0);
		if (e->tgt[i] != NULL)
			cr_expect_eq(uroce_destroy_qp(e->tgt[i]), 0);
	}
	if (e->srq != NULL)
		cr_expect_eq(uroce_destroy_srq(e->srq), 0);
	for (i = 0; i < 2; i++)
		if (e->scq[i] != NULL)
			cr_expect_eq(uroce_destroy_cq(e->scq[i]), 0);
	if (e->srq_cq != NULL)
		cr_expect_eq(uroce_destroy_cq(e->srq_cq), 0);
	if (e->x != NULL)
		cr_expect_eq(uroce_close_xrcd(e->x), 0);
	if (e->mr != NULL)
		cr_expect_eq(uroce_dereg_mr(e->mr), 0);
	if (e->pd != NULL)
		cr_expect_eq(uroce_dealloc_pd(e->pd), 0);
	uroce_close_device(e->ctx);
}

static int
post(struct xenv *e, int i, uint32_t op, uint32_t srqn, uint64_t id, uint32_t off, uint32_t len,
     uint32_t roff)
{
	struct uroce_sge sge = {.addr = (uintptr_t)(e->buf + off), .length = len,
				.lkey = e->mr->lkey};
	struct uroce_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = op;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.xrc_remote_srqn = srqn;
	if (op == UROCE_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)(e->buf + roff);
		wr.wr.atomic.rkey = e->mr->rkey;
		wr.wr.atomic.compare_add = 3;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)(e->buf + roff);
		wr.wr.rdma.rkey = e->mr->rkey;
	}
	return uroce_post_send(e->ini[i], &wr, NULL);
}

static struct uroce_wc
wait_wc(struct uroce_cq *cq)
{
	struct uroce_wc wc;

	cr_assert_eq(dt_wait_wc(cq, &wc, 10), 1, "no completion");
	return wc;
}

Test(xrc_api, traffic)
{
	struct uroce_sge sge;
	struct uroce_recv_wr rw;
	struct uroce_wc wc;
	uint64_t v = 40;
	struct xenv e;
	int i, seen = 0;

	xenv_open(&e);
	for (i = 0; i < 2; i++) {
		sge = (struct uroce_sge){.addr = (uintptr_t)(e.buf + 8192 + i * 1024), .length = 1024,
					 .lkey = e.mr->lkey};
		rw = (struct uroce_recv_wr){.wr_id = 50 + (uint64_t)i, .sg_list = &sge,
					    .num_sge = 1};
		cr_assert_eq(uroce_post_srq_recv(e.srq, &rw, NULL), 0);
	}
	memset(e.buf, 0x11, 300);
	memset(e.buf + 512, 0x22, 300);
	cr_assert_eq(post(&e, 0, UROCE_WR_SEND, e.srq->srq_num, 1, 0, 300, 0), 0);
	cr_assert_eq(post(&e, 1, UROCE_WR_SEND, e.srq->srq_num, 2, 512, 300, 0), 0);
	for (i = 0; i < 2; i++) {
		wc = wait_wc(e.scq[i]);
		cr_expect_eq(wc.status, UROCE_WC_SUCCESS, "send %d: %s", i,
			     uroce_wc_status_str(wc.status));
	}
	for (i = 0; i < 2; i++) {
		const uint8_t *p;

		wc = wait_wc(e.srq_cq);
		cr_assert_eq(wc.status, UROCE_WC_SUCCESS);
		cr_expect_eq(wc.byte_len, 300);
		p = e.buf + 8192 + (wc.wr_id - 50) * 1024;
		if (wc.qp_num == e.tgt[0]->qp_num) {
			cr_expect_eq(p[0], 0x11);
			cr_expect_eq(p[299], 0x11);
			seen |= 1;
		} else {
			cr_expect_eq(wc.qp_num, e.tgt[1]->qp_num);
			cr_expect_eq(p[0], 0x22);
			cr_expect_eq(p[299], 0x22);
			seen |= 2;
		}
	}
	cr_expect_eq(seen, 3, "one receive through each TGT QP");

	memset(e.buf + 1024, 0x33, 200);
	cr_assert_eq(post(&e, 1, UROCE_WR_RDMA_WRITE, e.srq->srq_num, 3, 1024, 200, 20000), 0);
	wc = wait_wc(e.scq[1]);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	cr_expect_eq(e.buf[20000], 0x33);
	cr_expect_eq(e.buf[20199], 0x33);
	memcpy(e.buf + 24576, &v, 8);
	cr_assert_eq(post(&e, 0, UROCE_WR_ATOMIC_FETCH_AND_ADD, e.srq->srq_num, 4, 4096, 8, 24576),
		     0);
	wc = wait_wc(e.scq[0]);
	cr_expect_eq(wc.status, UROCE_WC_SUCCESS);
	memcpy(&v, e.buf + 4096, 8);
	cr_expect_eq(v, 40);
	memcpy(&v, e.buf + 24576, 8);
	cr_expect_eq(v, 43);
	cr_expect_eq(uroce_poll_cq(e.srq_cq, 1, &wc), 0, "one-sided: no receive");

	cr_assert_eq(post(&e, 0, UROCE_WR_SEND, e.srq->srq_num + 1000, 5, 0, 8, 0), 0);
	wc = wait_wc(e.scq[0]);
	cr_expect_eq(wc.status, UROCE_WC_REM_ACCESS_ERR, "%s", uroce_wc_status_str(wc.status));
	xenv_close(&e);
}

Test(xrc_api, refusals)
{
	struct uroce_sge sge;
	struct uroce_recv_wr rw;
	struct uroce_send_wr sw;
	struct uroce_srq_init_attr si;
	struct xenv e;
	struct uroce_pd fake_pd;
	struct uroce_xrcd fake_x;
	struct uroce_mr *mr;

	xenv_open(&e);
	fake_pd = (struct uroce_pd){.context = e.ctx, .handle = e.x->handle};
	mr = uroce_reg_mr(&fake_pd, e.buf, 4096, UROCE_ACCESS_LOCAL_WRITE);
	cr_expect(mr == NULL && errno == EINVAL, "a domain as a PD: errno %d", errno);
	fake_x = (struct uroce_xrcd){.context = e.ctx, .handle = e.pd->handle};
	cr_expect(uroce_create_xrc_tgt_qp(&fake_x, NULL) == NULL && errno == EINVAL,
		  "a PD as a domain (TGT QP): errno %d", errno);
	memset(&si, 0, sizeof(si));
	si.attr.max_wr = 4;
	cr_expect(uroce_create_xrc_srq(e.pd, &fake_x, e.srq_cq, &si) == NULL && errno == EINVAL,
		  "a PD as a domain (XRC SRQ): errno %d", errno);
	sge = (struct uroce_sge){.addr = (uintptr_t)e.buf, .length = 64, .lkey = e.mr->lkey};
	rw = (struct uroce_recv_wr){.wr_id = 1, .sg_list = &sge, .num_sge = 1};
	cr_expect_eq(uroce_post_recv(e.tgt[0], &rw, NULL), -EINVAL, "receive on a TGT QP");
	cr_expect_eq(uroce_post_recv(e.ini[0], &rw, NULL), -EINVAL, "receive on an INI QP");
	memset(&sw, 0, sizeof(sw));
	sw.opcode = UROCE_WR_SEND;
	sw.sg_list = &sge;
	sw.num_sge = 1;
	cr_expect_eq(uroce_post_send(e.tgt[0], &sw, NULL), -EINVAL, "send on a TGT QP");
	sw.xrc_remote_srqn = 0x1000000;
	cr_expect_eq(uroce_post_send(e.ini[0], &sw, NULL), -EINVAL, "25-bit SRQ number");
	/* With two workers the first initiator's CQ runs on worker 1, the
	 * domain on worker 0: an XRC SRQ of the domain on that CQ is -EXDEV. */
	{
		struct uroce_srq *x2;

		si.attr.max_wr = 4;
		x2 = uroce_create_xrc_srq(e.pd, e.x, e.scq[0], &si);
		if (dt_workers() > 1) {
			cr_expect(x2 == NULL && errno == EXDEV, "a CQ of another worker: errno %d",
				  errno);
		} else {
			cr_expect_not_null(x2, "one worker: the same CQ is fine");
			cr_expect_eq(uroce_destroy_srq(x2), 0);
		}
	}
	cr_expect_eq(uroce_destroy_cq(e.srq_cq), -EBUSY, "the XRC SRQ's CQ");
	cr_expect_eq(uroce_close_xrcd(e.x), -EBUSY, "domain in use");
	cr_expect_eq(uroce_destroy_qp(e.tgt[0]), 0);
	cr_expect_eq(uroce_destroy_qp(e.tgt[1]), 0);
	e.tgt[0] = e.tgt[1] = NULL;
	cr_expect_eq(uroce_close_xrcd(e.x), -EBUSY, "the SRQ is still in it");
	cr_expect_eq(uroce_destroy_srq(e.srq), 0);
	e.srq = NULL;
	cr_expect_eq(uroce_destroy_cq(e.srq_cq), 0, "free once the SRQ is gone");
	e.srq_cq = NULL;
	cr_expect_eq(uroce_close_xrcd(e.x), 0);
	e.x = NULL;
	xenv_close(&e);
}

Test(xrc_api, teardown_reclaims_everything)
{
	struct uroce_daemon_stats st;
	struct xenv e;
	int i;

	/* Closing the device with every object alive leaves the client's own
	 * structures allocated, as ibv_close_device() does: not what this test
	 * is about, so not reported as a leak. */
	lsan_disable();
	xenv_open(&e);
	uroce_close_device(e.ctx);
	lsan_enable();
	for (i = 0; i < 5000; i++) {
		dt_daemon_lock(&dd);
		uroce_daemon_stats(dd.d, &st);
		dt_daemon_unlock(&dd);
		if (st.sessions == 0 && st.srqs == 0 && st.qps == 0 && st.cqs == 0 &&
		    st.mrs == 0 && st.pds == 0 && st.segments == 0)
			break;
		dt_nap_ms(2);
	}
	cr_expect_eq(st.sessions + st.srqs + st.qps + st.cqs + st.mrs + st.pds + st.segments, 0,
		     "left: sessions %u srqs %u qps %u cqs %u mrs %u pds %u segments %u",
		     st.sessions, st.srqs, st.qps, st.cqs, st.mrs, st.pds, st.segments);
}
