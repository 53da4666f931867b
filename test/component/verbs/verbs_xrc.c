/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * XRC (IBA 1.2) through the drop-in libibverbs (drivers/verbs), as a verbs
 * program writes it against rdma-core 44's verbs.h: run by
 * test_verbs_probe.sh with uroce-run on uroced_lite, on the daemon's
 * loopback port.
 *
 *   Expect: device_cap_flags has IBV_DEVICE_XRC. ibv_open_xrcd with a file
 *   and O_CREAT opens a domain; the same file again gives the same one;
 *   O_EXCL then fails (EINVAL); without O_CREAT a new file fails (EAGAIN);
 *   fd -1 gives another domain. An XRC SRQ (ibv_create_srq_ex) has an SRQ
 *   number; a basic SRQ has none (EINVAL). An XRC_SEND QP (PD, send CQ, no
 *   receive side) and an XRC_RECV QP (only the domain) connect. A SEND by
 *   ibv_post_send naming the SRQ (qp_type.xrc.remote_srqn) lands in the
 *   SRQ's receive, completing to the SRQ's CQ with the TGT QP's number; an
 *   RDMA WRITE by ibv_wr_* with ibv_wr_set_xrc_srqn lands in the MR. A SEND
 *   naming another domain's SRQ completes with IBV_WC_REM_ACCESS_ERR.
 *   ibv_close_xrcd with a TGT QP in the domain: EBUSY; after it: 0.
 * Prints one "verbs_xrc: ok: ..." line per check; exit 0 only if all pass.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_probe.h"

#define BUF_LEN 65536
#define QP_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

const char *probe_name = "verbs_xrc";

static struct ibv_xrcd *
open_xrcd(int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &a);
}

static struct ibv_srq *
xrc_srq(struct ibv_xrcd *x, struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.attr.max_wr = 16;
	a.attr.max_sge = 1;
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
		      IBV_SRQ_INIT_ATTR_CQ;
	a.srq_type = IBV_SRQT_XRC;
	a.pd = pd;
	a.xrcd = x;
	a.cq = cq;
	return ibv_create_srq_ex(ctx, &a);
}

static struct ibv_qp *
tgt_qp(struct ibv_xrcd *x)
{
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_RECV;
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	a.xrcd = x;
	return ibv_create_qp_ex(ctx, &a);
}

static struct ibv_qp *
ini_qp(void)
{
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_SEND;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE;
	a.pd = pd;
	a.send_cq = cqa;
	a.cap.max_send_wr = 8;
	a.cap.max_send_sge = 1;
	return ibv_create_qp_ex(ctx, &a);
}

static void
post_srq_recv(struct ibv_srq *srq, struct ibv_mr *mr, uint8_t *addr, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = 256, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_srq_recv(srq, &wr, &bad) != 0)
		DIE("post_srq_recv");
}

static struct ibv_wc
xrc_send(struct ibv_qp *ini, struct ibv_mr *mr, uint8_t *addr, uint32_t srqn)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = 100, .lkey = mr->lkey };
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = srqn;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.qp_type.xrc.remote_srqn = srqn;
	if (ibv_post_send(ini, &wr, &bad) != 0)
		DIE("post_send: %s", strerror(errno));
	return probe_wait_wc(cqa);
}

int
main(void)
{
	char path[] = "/tmp/uroce-verbs-xrc-XXXXXX";
	struct ibv_xrcd *x, *x2, *x3, *xo;
	struct ibv_srq *srq, *osrq, *bsrq;
	struct ibv_srq_init_attr bsa;
	struct ibv_qp *tgt, *ini, *otgt, *oini;
	struct ibv_device_attr da;
	struct ibv_qp_ex *qx;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	uint32_t srqn = 0, osrqn = 0, n;
	uint8_t *buf;
	int fd;

	probe_open();
	CHECK(ibv_query_device(ctx, &da) == 0 && (da.device_cap_flags & IBV_DEVICE_XRC),
	      "device_cap_flags has IBV_DEVICE_XRC (0x%x)", da.device_cap_flags);
	fd = mkstemp(path);
	if (fd < 0)
		DIE("mkstemp");
	x = open_xrcd(fd, O_CREAT);
	CHECK(x != NULL, "open_xrcd(file, O_CREAT)");
	if (x == NULL)
		DIE("open_xrcd: %s", strerror(errno));
	x2 = open_xrcd(fd, O_CREAT);
	CHECK(x2 == x, "the same file again: the same domain");
	errno = 0;
	CHECK(open_xrcd(fd, O_CREAT | O_EXCL) == NULL && errno == EINVAL,
	      "O_EXCL on an existing one: EINVAL (errno %d)", errno);
	xo = open_xrcd(-1, O_CREAT);
	CHECK(xo != NULL && xo != x, "fd -1: a domain of its own");
	x3 = NULL;
	{
		char p2[] = "/tmp/uroce-verbs-xrc-XXXXXX";
		int fd2 = mkstemp(p2);

		errno = 0;
		x3 = open_xrcd(fd2, 0);
		CHECK(x3 == NULL && errno == EAGAIN, "a new file without O_CREAT: EAGAIN (errno %d)",
		      errno);
		close(fd2);
		unlink(p2);
	}
	CHECK(ibv_close_xrcd(x2) == 0, "close the second reference");

	buf = aligned_alloc(4096, BUF_LEN);
	if (buf == NULL || xo == NULL)
		DIE("objects");
	memset(buf, 0, BUF_LEN);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, QP_ACCESS);
	if (mr == NULL)
		DIE("reg_mr: %s", strerror(errno));
	srq = xrc_srq(x, cqb);
	osrq = xrc_srq(xo, cqb);
	CHECK(srq != NULL && osrq != NULL, "create_srq_ex IBV_SRQT_XRC");
	if (srq == NULL || osrq == NULL)
		DIE("create_srq_ex: %s", strerror(errno));
	CHECK(ibv_get_srq_num(srq, &srqn) == 0 && srqn != 0 &&
	      ibv_get_srq_num(osrq, &osrqn) == 0 && osrqn != srqn,
	      "get_srq_num: 0x%x, other domain's 0x%x", srqn, osrqn);
	memset(&bsa, 0, sizeof(bsa));
	bsa.attr.max_wr = 4;
	bsa.attr.max_sge = 1;
	bsrq = ibv_create_srq(pd, &bsa);
	CHECK(bsrq != NULL && ibv_get_srq_num(bsrq, &n) == EINVAL, "a basic SRQ has no number");

	tgt = tgt_qp(x);
	ini = ini_qp();
	otgt = tgt_qp(xo);
	oini = ini_qp();
	CHECK(tgt != NULL && ini != NULL && otgt != NULL && oini != NULL,
	      "XRC_RECV and XRC_SEND QPs");
	if (tgt == NULL || ini == NULL || otgt == NULL || oini == NULL)
		DIE("create_qp_ex: %s", strerror(errno));
	CHECK(tgt->pd == NULL && tgt->send_cq == NULL && tgt->srq == NULL, "TGT QP: no PD, CQ, SRQ");
	probe_qp_up(ini, tgt->qp_num, 0);
	probe_qp_up(tgt, ini->qp_num, QP_ACCESS);
	probe_qp_up(oini, otgt->qp_num, 0);
	probe_qp_up(otgt, oini->qp_num, QP_ACCESS);

	post_srq_recv(srq, mr, buf + 4096, 77);
	memset(buf, 0xA5, 100);
	wc = xrc_send(ini, mr, buf, srqn);
	CHECK(wc.status == IBV_WC_SUCCESS, "XRC SEND by ibv_post_send: %s",
	      ibv_wc_status_str(wc.status));
	wc = probe_wait_wc(cqb);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 77 && wc.opcode == IBV_WC_RECV &&
	      wc.byte_len == 100 && wc.qp_num == tgt->qp_num && buf[4096] == 0xA5 &&
	      buf[4096 + 99] == 0xA5,
	      "the SRQ's receive: %s, wr_id %llu, %u bytes, qp 0x%x (TGT 0x%x)",
	      ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id, wc.byte_len, wc.qp_num,
	      tgt->qp_num);

	qx = ibv_qp_to_qp_ex(ini);
	memset(buf, 0x3C, 64);
	ibv_wr_start(qx);
	qx->wr_id = 5;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, mr->rkey, (uintptr_t)buf + 8192);
	ibv_wr_set_xrc_srqn(qx, srqn);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 64);
	CHECK(ibv_wr_complete(qx) == 0, "ibv_wr_set_xrc_srqn accepted");
	wc = probe_wait_wc(cqa);
	CHECK(wc.status == IBV_WC_SUCCESS && buf[8192] == 0x3C && buf[8192 + 63] == 0x3C,
	      "XRC RDMA WRITE by ibv_wr_*: %s", ibv_wc_status_str(wc.status));

	post_srq_recv(osrq, mr, buf + 12288, 88);
	wc = xrc_send(oini, mr, buf, srqn); /* xo's TGT QP, x's SRQ */
	CHECK(wc.status == IBV_WC_REM_ACCESS_ERR, "another domain's SRQ: %s",
	      ibv_wc_status_str(wc.status));

	CHECK(ibv_close_xrcd(x) == EBUSY, "close_xrcd with a TGT QP and an SRQ in it: EBUSY");
	ibv_destroy_qp(ini);
	ibv_destroy_qp(tgt);
	ibv_destroy_qp(oini);
	ibv_destroy_qp(otgt);
	CHECK(ibv_destroy_srq(srq) == 0 && ibv_destroy_srq(osrq) == 0 && ibv_destroy_srq(bsrq) == 0,
	      "destroy the SRQs");
	CHECK(ibv_close_xrcd(x) == 0 && ibv_close_xrcd(xo) == 0, "close_xrcd once empty");
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cqa);
	ibv_destroy_cq(cqb);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	close(fd);
	unlink(path);
	free(buf);
	printf("verbs_xrc: %d failure(s)\n", probe_fails);
	return probe_fails ? 1 : 0;
}
