/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * lg_send: a test tool that plays a stateless generator with liburoce. It
 * reads a sink description (`uroce-perf sink --json`), makes one QP of its
 * own per sink QP on the same daemon, and sends N messages to each carrying
 * the pattern uroce-lg-1, exactly as `uroce-ctl template` frames would:
 * UC RDMA WRITE (window slot i mod slots, immediate = offset), UC SEND or UD
 * SEND (tag = i). --corrupt K flips one bit of message K to the first QP,
 * so that a test can check the sink notices. Exit 0 when every send
 * completed successfully.
 *
 *   lg_send SOCKET SINK_JSON write|write-imm|send N [--corrupt K]
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_loadgen.h"
#include "uroce_verbs.h"

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lg_send: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = malloc(1 << 20);

	if (f == NULL || buf == NULL)
		die("%s: %s", path, strerror(errno));
	*len = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	return buf;
}

static void
modify(struct uroce_qp *qp, struct uroce_qp_attr *a, int mask, const char *to)
{
	int rc = uroce_modify_qp(qp, a, mask);

	if (rc != 0)
		die("modify_qp to %s: %s", to, strerror(-rc));
}

int
main(int argc, char **argv)
{
	struct uroce_lg_desc *d = calloc(1, sizeof(*d));
	struct uroce_qp *qps[UROCE_LG_MAX_QPS];
	struct uroce_ah *ah = NULL;
	struct uroce_context *ctx;
	struct uroce_pd *pd;
	struct uroce_cq *cq;
	struct uroce_mr *mr;
	uint32_t n, i, k, size, corrupt = UINT32_MAX, op;
	uint64_t posted = 0, done = 0;
	uint8_t *buf;
	char err[256], *text;
	size_t len, buf_len;
	int rc;

	if (argc != 5 && !(argc == 7 && strcmp(argv[5], "--corrupt") == 0))
		die("usage: lg_send SOCKET SINK_JSON write|write-imm|send N [--corrupt K]");
	op = strcmp(argv[3], "write") == 0 ? UROCE_WR_RDMA_WRITE :
	     strcmp(argv[3], "write-imm") == 0 ? UROCE_WR_RDMA_WRITE_WITH_IMM : UROCE_WR_SEND;
	n = (uint32_t)strtoul(argv[4], NULL, 0);
	if (argc == 7)
		corrupt = (uint32_t)strtoul(argv[6], NULL, 0);
	text = slurp(argv[2], &len);
	if (d == NULL || uroce_lg_desc_parse(text, len, d, err, sizeof(err)) != 0)
		die("%s: %s", argv[2], err);
	free(text);
	size = d->size;
	ctx = uroce_open_device(argv[1]);
	if (ctx == NULL)
		die("open %s: %s", argv[1], strerror(errno));
	pd = uroce_alloc_pd(ctx);
	buf_len = (size_t)d->n_qps * n * (size ? size : 1) + 4096;
	buf = uroce_alloc_buf(ctx, buf_len);
	if (pd == NULL || buf == NULL)
		die("pd or buffer: %s", strerror(errno));
	mr = uroce_reg_mr(pd, buf, buf_len, UROCE_ACCESS_LOCAL_WRITE);
	cq = uroce_create_cq(ctx, (int)(d->n_qps * n + 16), NULL);
	if (mr == NULL || cq == NULL)
		die("mr or cq: %s", strerror(errno));
	for (k = 0; k < d->n_qps; k++) {
		const struct uroce_lg_qp *q = &d->qps[k];
		struct uroce_qp_init_attr ia;
		struct uroce_qp_attr a;

		memset(&ia, 0, sizeof(ia));
		ia.send_cq = cq;
		ia.recv_cq = cq;
		ia.qp_type = q->type == UROCE_LG_UC ? UROCE_QPT_UC : UROCE_QPT_UD;
		ia.cap.max_send_wr = n;
		ia.cap.max_recv_wr = 1;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		qps[k] = uroce_create_qp(pd, &ia);
		if (qps[k] == NULL)
			die("create_qp: %s", strerror(errno));
		memset(&a, 0, sizeof(a));
		a.qp_state = UROCE_QPS_INIT;
		a.port_num = d->port;
		a.qkey = 1;
		a.qp_access_flags = UROCE_ACCESS_LOCAL_WRITE;
		modify(qps[k], &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
				   (q->type == UROCE_LG_UC ? UROCE_QP_ACCESS_FLAGS : UROCE_QP_QKEY),
		       "INIT");
		memset(&a, 0, sizeof(a));
		a.qp_state = UROCE_QPS_RTR;
		if (q->type == UROCE_LG_UC) {
			a.path_mtu = 0;
			while ((128u << ++a.path_mtu) < d->path_mtu)
				;
			a.dest_qp_num = q->qpn;
			memcpy(a.ah_attr.dgid, d->gid, 16);
			a.ah_attr.sgid_index = d->gid_index;
			a.ah_attr.port_num = d->port;
			modify(qps[k], &a, UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU |
					   UROCE_QP_DEST_QPN | UROCE_QP_RQ_PSN, "RTR");
		} else {
			modify(qps[k], &a, UROCE_QP_STATE, "RTR");
		}
		memset(&a, 0, sizeof(a));
		a.qp_state = UROCE_QPS_RTS;
		/* UC: the PSN the sink's QP expects, as a template's frames carry. */
		a.sq_psn = q->type == UROCE_LG_UC ? q->psn : 0;
		modify(qps[k], &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN, "RTS");
		if (q->type == UROCE_LG_UD && ah == NULL) {
			struct uroce_ah_attr aa;

			memset(&aa, 0, sizeof(aa));
			memcpy(aa.dgid, d->gid, 16);
			aa.sgid_index = d->gid_index;
			aa.port_num = d->port;
			ah = uroce_create_ah(pd, &aa);
			if (ah == NULL)
				die("create_ah: %s", strerror(errno));
		}
	}
	/* Message i of every QP, QP by QP, as a template interleaves them. */
	for (i = 0; i < n; i++) {
		for (k = 0; k < d->n_qps; k++) {
			const struct uroce_lg_qp *q = &d->qps[k];
			uint8_t *p = buf + ((size_t)k * n + i) * (size ? size : 1);
			struct uroce_sge sge = {(uint64_t)(uintptr_t)p, size, mr->lkey};
			struct uroce_send_wr wr, *bad;
			uint64_t off = 0;

			memset(&wr, 0, sizeof(wr));
			wr.wr_id = posted;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.send_flags = UROCE_SEND_SIGNALED;
			wr.opcode = q->type == UROCE_LG_UD ? UROCE_WR_SEND : op;
			if (wr.opcode == UROCE_WR_SEND) {
				uroce_lg_send_fill(p, q->qpn, i, size);
			} else {
				off = (i % (q->len / size)) * size;
				uroce_lg_write_fill(p, q->qpn, off, size);
				wr.wr.rdma.remote_addr = q->va + off;
				wr.wr.rdma.rkey = q->rkey;
				wr.imm_data = (uint32_t)off;
			}
			if (q->type == UROCE_LG_UD) {
				wr.wr.ud.ah = ah;
				wr.wr.ud.remote_qpn = q->qpn;
				wr.wr.ud.remote_qkey = q->qkey;
			}
			if (k == 0 && i == corrupt && size > 0)
				p[size - 1] ^= 0x40; /* a wrong bit: the sink must say so */
			rc = uroce_post_send(qps[k], &wr, &bad);
			if (rc != 0)
				die("post_send: %s", strerror(-rc));
			posted++;
		}
	}
	while (done < posted) {
		struct uroce_wc wc[32];
		int j, got = uroce_poll_cq(cq, 32, wc);

		if (got < 0)
			die("poll_cq: %s", strerror(-got));
		for (j = 0; j < got; j++)
			if (wc[j].status != UROCE_WC_SUCCESS)
				die("send completion status %u on QP %u", wc[j].status,
				    wc[j].qp_num);
		done += (uint64_t)got;
	}
	printf("lg_send: %" PRIu64 " messages sent\n", posted);
	for (k = 0; k < d->n_qps; k++)
		uroce_destroy_qp(qps[k]);
	if (ah != NULL)
		uroce_destroy_ah(ah);
	uroce_destroy_cq(cq);
	uroce_dereg_mr(mr);
	uroce_free_buf(ctx, buf);
	uroce_dealloc_pd(pd);
	uroce_close_device(ctx);
	free(d);
	return 0;
}
