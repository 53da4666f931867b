/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uroce_shm.h"

#include "daemon_test_util.h"

unsigned int
dt_workers(void)
{
	const char *e = getenv("UROCE_TEST_WORKERS");
	unsigned long n = e != NULL ? strtoul(e, NULL, 10) : 1;

	return n >= 1 && n <= 64 ? (unsigned int)n : 1; /* the daemon checks its limit */
}

double
dt_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
dt_nap_us(long us)
{
	struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000L};

	nanosleep(&ts, NULL);
}

void
dt_nap_ms(int ms)
{
	dt_nap_us((long)ms * 1000L);
}

void
dt_xwrite(int fd, const void *p, size_t n, const char *what)
{
	ssize_t r = write(fd, p, n);

	if (r != (ssize_t)n) {
		fprintf(stderr, "%s: write %zd of %zu: %s\n", what, r, n, strerror(errno));
		_exit(1);
	}
}

void
dt_xread(int fd, void *p, size_t n, const char *what)
{
	ssize_t r = read(fd, p, n);

	if (r != (ssize_t)n) {
		fprintf(stderr, "%s: read %zd of %zu: %s\n", what, r, n,
			r == 0 ? "end of file" : strerror(errno));
		_exit(1);
	}
}

void
dt_sock_path(char *buf, size_t len, const char *tag)
{
	snprintf(buf, len, "/tmp/uroce-test-%s-%d.sock", tag, (int)getpid());
}

/* Read uroced_lite's first line from @p fd. @return 0 if it says it listens. */
static int
lite_wait_listening(int fd)
{
	char line[256];
	size_t len = 0;

	line[0] = '\0';
	while (len < sizeof(line) - 1) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&pf, 1, 10000) != 1)
			return -ETIMEDOUT;
		n = read(fd, line + len, sizeof(line) - 1 - len);
		if (n <= 0)
			return -EPIPE;
		len += (size_t)n;
		line[len] = '\0';
		if (strchr(line, '\n') != NULL)
			break;
	}
	if (strstr(line, "listening on") == NULL) {
		fprintf(stderr, "uroced_lite: %s", line);
		return -EPIPE;
	}
	return 0;
}

pid_t
dt_lite_start(const char *sock, const char *mode, int *out)
{
	const char *exe = getenv("UROCED_LITE");
	pid_t pid;
	int p[2], rc;

	if (exe == NULL)
		return -EINVAL;
	if (pipe(p) != 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(p[0]);
		close(p[1]);
		return rc;
	}
	if (pid == 0) {
		/* If the test process dies (a crash, a sanitizer abort), so does
		 * the daemon, and nothing is left holding the test's output. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		close(p[1]);
		if (mode != NULL)
			execl(exe, exe, sock, mode, (char *)NULL);
		else
			execl(exe, exe, sock, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	rc = lite_wait_listening(p[0]);
	if (rc != 0) {
		dt_lite_stop(pid, p[0]);
		return rc;
	}
	*out = p[0];
	return pid;
}

int
dt_lite_stop(pid_t pid, int out)
{
	int status = -1;

	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
	}
	if (out >= 0)
		close(out);
	return status;
}

int
dt_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd, rc;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int
dt_msg_build(void *buf, size_t size, uint16_t type, uint32_t seq, const void *body,
	     size_t blen)
{
	int len = uroce_shm_msg_init(buf, size, type, seq, false, 0);

	if (len < 0)
		return len;
	if ((size_t)len != sizeof(struct uroce_shm_msg_hdr) + blen)
		return -EINVAL;
	if (blen > 0)
		memcpy((uint8_t *)buf + sizeof(struct uroce_shm_msg_hdr), body, blen);
	return len;
}

ssize_t
dt_msg_send(int s, uint16_t type, uint32_t seq, const void *body, size_t blen, int fd_in)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	int len = dt_msg_build(buf, sizeof(buf), type, seq, body, blen);

	if (len < 0)
		return len;
	return uroce_shm_sock_send(s, buf, (size_t)len, fd_in);
}

ssize_t
dt_msg_recv(int s, void *buf, size_t size, int *fd)
{
	ssize_t n;

	*fd = -1;
	n = uroce_shm_sock_recv(s, buf, size, fd);
	if (n <= 0)
		return n;
	if (uroce_shm_msg_validate(buf, (size_t)n, true, *fd >= 0) != 0) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EPROTO;
	}
	return n;
}

struct uroce_qp *
dt_qp_create(struct uroce_pd *pd, struct uroce_cq *cq, struct uroce_srq *srq, int type,
	     uint32_t depth, uint32_t sge)
{
	struct uroce_qp_init_attr ia;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.srq = srq;
	ia.qp_type = type;
	ia.cap.max_send_wr = depth;
	ia.cap.max_recv_wr = depth;
	ia.cap.max_send_sge = sge;
	ia.cap.max_recv_sge = sge;
	return uroce_create_qp(pd, &ia);
}

int
dt_qp_init(struct uroce_qp *qp, int access)
{
	struct uroce_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	return uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
					       UROCE_QP_ACCESS_FLAGS);
}

int
dt_qp_rtr_rts(struct uroce_qp *qp, const struct dt_rc *rc)
{
	struct uroce_qp_attr a;
	int r;

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTR;
	a.path_mtu = 3; /* 1024: a 4 KiB message is four packets */
	a.dest_qp_num = rc->dqpn;
	a.rq_psn = rc->rq_psn;
	a.max_dest_rd_atomic = rc->rd_atomic;
	a.min_rnr_timer = 1;
	memcpy(a.ah_attr.dgid, rc->dgid, 16);
	a.ah_attr.port_num = 1;
	a.ah_attr.hop_limit = 64;
	r = uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU |
					    UROCE_QP_DEST_QPN | UROCE_QP_RQ_PSN |
					    UROCE_QP_MAX_DEST_RD_ATOMIC | UROCE_QP_MIN_RNR_TIMER);
	if (r != 0)
		return r;
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTS;
	a.sq_psn = rc->sq_psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7; /* an empty receive queue makes the sender wait, never fail */
	a.max_rd_atomic = rc->rd_atomic;
	return uroce_modify_qp(qp, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN | UROCE_QP_TIMEOUT |
					       UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY |
					       UROCE_QP_MAX_QP_RD_ATOMIC);
}

int
dt_qp_to_rts(struct uroce_qp *qp, int access, const struct dt_rc *rc)
{
	int r = dt_qp_init(qp, access);

	return r != 0 ? r : dt_qp_rtr_rts(qp, rc);
}

int
dt_rc_pair(struct uroce_pd *pd, struct uroce_cq *cqa, struct uroce_cq *cqb, int access,
	   struct uroce_qp **a, struct uroce_qp **b)
{
	struct dt_rc to_a, to_b;
	uint8_t gid[16];
	int rc;

	rc = uroce_query_gid(pd->context, 1, 0, gid);
	if (rc != 0)
		return rc;
	*a = dt_qp_create(pd, cqa, NULL, UROCE_QPT_RC, 32, 2);
	*b = dt_qp_create(pd, cqb, NULL, UROCE_QPT_RC, 32, 2);
	if (*a == NULL || *b == NULL)
		return -errno;
	to_b = (struct dt_rc){.dgid = gid, .dqpn = (*b)->qp_num, .rq_psn = 7, .sq_psn = 5,
			      .rd_atomic = 4};
	to_a = (struct dt_rc){.dgid = gid, .dqpn = (*a)->qp_num, .rq_psn = 5, .sq_psn = 7,
			      .rd_atomic = 4};
	rc = dt_qp_to_rts(*a, access, &to_b);
	return rc != 0 ? rc : dt_qp_to_rts(*b, access, &to_a);
}

int
dt_wait_wc(struct uroce_cq *cq, struct uroce_wc *wc, double timeout_s)
{
	double end = dt_now_s() + timeout_s;
	int n;

	while ((n = uroce_poll_cq(cq, 1, wc)) == 0 && dt_now_s() < end)
		dt_nap_us(100);
	return n;
}
