/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "example_util.h"

char ex_role[48] = "example";

void
ex_set_role(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ex_role, sizeof(ex_role), fmt, ap);
	va_end(ap);
}

/* @p msg (NULL: none), then the usage; exit @p status (0: --help, on stdout). */
static void __attribute__((noreturn))
ex_usage(const char *usage, int status, const char *msg)
{
	FILE *out = status == 0 ? stdout : stderr;

	if (msg != NULL)
		fprintf(stderr, "%s: %s\n", ex_role, msg);
	fprintf(out, "usage: %s\n"
		     "SOCKET_PATH defaults to $UROCE_SOCKET, then " UROCE_DEFAULT_SOCKET ".\n"
		     "Environment: UROCE_PEER_SOCKET (the daemon of the second side),\n"
		     "UROCE_GID_INDEX (the GID index both sides use, default 0).\n", usage);
	exit(status);
}

const char *
ex_args(int argc, char **argv, const char *usage, const struct ex_num *nums, int n_nums,
	int *given)
{
	const char *path = NULL;
	char msg[160];
	int i, n = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		unsigned long long v = 0;
		const char *p;

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
			ex_usage(usage, 0, NULL);
		if (a[0] == '-') {
			snprintf(msg, sizeof(msg), "unknown option '%s'", a);
			ex_usage(usage, 2, msg);
		}
		if (i == 1) {
			path = a;
			continue;
		}
		if (n == n_nums) {
			snprintf(msg, sizeof(msg), "too many arguments ('%s')", a);
			ex_usage(usage, 2, msg);
		}
		/* Past max the value stops growing: it is out of range anyway. */
		for (p = a; *p >= '0' && *p <= '9'; p++)
			if (v <= nums[n].max)
				v = v * 10 + (unsigned long long)(*p - '0');
		if (p == a || *p != '\0' || v < nums[n].min || v > nums[n].max) {
			snprintf(msg, sizeof(msg), "%s '%s': expected a number %llu..%llu",
				 nums[n].name, a, (unsigned long long)nums[n].min,
				 (unsigned long long)nums[n].max);
			ex_usage(usage, 2, msg);
		}
		*nums[n++].val = v;
	}
	if (given != NULL)
		*given = n;
	return path;
}

const char *
ex_status(uint32_t status)
{
	static char buf[48];

	snprintf(buf, sizeof(buf), "%s (%u)", uroce_wc_status_name(status), status);
	return buf;
}

void
ex_die(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", ex_role, what, strerror(err));
	exit(1);
}

void
ex_ck(int rc, const char *what)
{
	if (rc < 0)
		ex_die(what, -rc);
}

int
ex_gid_index(void)
{
	static int index = -1;
	const char *v;
	char *end;
	long n;

	if (index >= 0)
		return index;
	v = getenv("UROCE_GID_INDEX");
	if (v == NULL || *v == '\0') {
		index = 0;
		return index;
	}
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || n < 0 || n > UINT8_MAX) {
		fprintf(stderr, "%s: UROCE_GID_INDEX=\"%s\": not a GID index (0..255)\n",
			ex_role, v);
		exit(1);
	}
	index = (int)n;
	return index;
}

struct uroce_context *
ex_open(const char *path, int side, uint8_t gid[16], struct uroce_port_attr *port)
{
	const char *peer = getenv("UROCE_PEER_SOCKET");
	const char *use = path;
	struct uroce_context *ctx;
	int index = ex_gid_index();
	int rc;

	if (side == 1 && peer != NULL && *peer != '\0')
		use = peer;
	ctx = uroce_open_device(use);
	if (ctx == NULL) {
		int err = errno;

		/* liburoce's own choice for NULL, to name it in the message. */
		if (use == NULL)
			use = getenv("UROCE_SOCKET");
		if (use == NULL)
			use = UROCE_DEFAULT_SOCKET;
		fprintf(stderr, "%s: open_device: %s (socket %s)\n", ex_role, strerror(err), use);
		exit(1);
	}
	rc = uroce_query_gid(ctx, 1, index, gid);
	if (rc < 0) {
		char a[INET6_ADDRSTRLEN];
		uint8_t g[16];
		int i;

		/* Name the GIDs there are: a daemon without ports has GID 0 only. */
		fprintf(stderr, "%s: query_gid: port 1 of %s has no GID %d (%s); its GIDs:", ex_role,
			use != NULL ? use : "the default daemon", index, strerror(-rc));
		for (i = 0; i < 16; i++)
			if (uroce_query_gid(ctx, 1, i, g) == 0)
				fprintf(stderr, " %d %s", i, inet_ntop(AF_INET6, g, a, sizeof(a)));
		fprintf(stderr, " (set UROCE_GID_INDEX to one of them)\n");
		uroce_close_device(ctx);
		exit(1);
	}
	if (port != NULL) {
		rc = uroce_query_port(ctx, 1, port);
		if (rc < 0) {
			uroce_close_device(ctx);
			ex_die("query_port", -rc);
		}
	}
	return ctx;
}

void
ex_send(int fd, const void *p, size_t len)
{
	ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

	if (n < 0)
		ex_die("send to peer", errno);
	if ((size_t)n != len)
		ex_die("send to peer", EIO);
}

void
ex_recv(int fd, void *p, size_t len)
{
	ssize_t n = recv(fd, p, len, MSG_WAITALL);

	if (n < 0)
		ex_die("receive from peer", errno);
	if ((size_t)n != len)
		ex_die("receive from peer (peer exited)", ECONNRESET);
}

struct uroce_qp *
ex_create_qp(struct uroce_pd *pd, struct uroce_cq *cq, int type, bool sig_all,
	     uint32_t max_send_wr, uint32_t max_recv_wr)
{
	struct uroce_qp_init_attr ia;
	struct uroce_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = type;
	ia.sq_sig_all = sig_all;
	ia.cap.max_send_wr = max_send_wr;
	ia.cap.max_recv_wr = max_recv_wr;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = uroce_create_qp(pd, &ia);
	if (qp == NULL)
		ex_die("create_qp", errno);
	return qp;
}

void
ex_close(struct uroce_context *ctx, struct uroce_pd *pd, void *buf, struct uroce_mr *mr,
	 struct uroce_cq *cq)
{
	ex_ck(uroce_destroy_cq(cq), "destroy_cq");
	ex_ck(uroce_dereg_mr(mr), "dereg_mr");
	ex_ck(uroce_free_buf(ctx, buf), "free_buf");
	ex_ck(uroce_dealloc_pd(pd), "dealloc_pd");
	ex_ck(uroce_close_device(ctx), "close_device");
}

void
ex_connect_rc(struct uroce_qp *qp, const struct ex_rc_conn *c)
{
	struct uroce_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = (uint32_t)c->access;
	ex_ck(uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
					      UROCE_QP_ACCESS_FLAGS), "modify to INIT");

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTR;
	a.path_mtu = c->path_mtu;
	a.dest_qp_num = c->dest_qpn;
	a.rq_psn = c->rq_psn;
	a.max_dest_rd_atomic = c->rd_atomic;
	a.min_rnr_timer = 1;
	memcpy(a.ah_attr.dgid, c->dgid, 16);
	a.ah_attr.port_num = 1;
	a.ah_attr.sgid_index = (uint8_t)ex_gid_index();  /* the GID the peer was told */
	ex_ck(uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU |
					      UROCE_QP_DEST_QPN | UROCE_QP_RQ_PSN |
					      UROCE_QP_MAX_DEST_RD_ATOMIC | UROCE_QP_MIN_RNR_TIMER),
	      "modify to RTR");

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTS;
	a.sq_psn = c->sq_psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = c->rd_atomic;
	ex_ck(uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN | UROCE_QP_TIMEOUT |
					      UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY |
					      UROCE_QP_MAX_QP_RD_ATOMIC), "modify to RTS");
}

int
ex_wait_wcs(struct uroce_cq *cq, int max, struct uroce_wc *wc)
{
	int n;

	for (;;) {
		n = uroce_poll_cq(cq, max, wc);
		if (n == 0) {
			ex_ck(uroce_req_notify_cq(cq, false), "req_notify_cq");
			n = uroce_poll_cq(cq, max, wc);
		}
		ex_ck(n, "poll_cq");
		if (n > 0)
			return n;
		n = uroce_get_cq_event(cq, EX_WAIT_MS);
		ex_ck(n, "get_cq_event");
		if (n == 0)
			ex_die("waiting for a completion", ETIMEDOUT);
	}
}

void
ex_fill(uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed | 1;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;    /* xorshift32 */
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)(x >> 24);
	}
}
