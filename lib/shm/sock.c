/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Socket helpers for the control channel: one message per sendmsg/recvmsg on
 * a SOCK_SEQPACKET UNIX socket, with at most one descriptor (SCM_RIGHTS).
 * Received descriptors are close-on-exec, and none is leaked on any error.
 */

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <uroce_common.h>

#include "shm_internal.h"

/* Room for one descriptor, plus slack so that a peer sending more than one
 * is seen (and the extras closed) rather than truncated. */
#define CMSG_FDS 4

ssize_t
uroce_shm_sock_send(int sock, const void *buf, size_t len, int fd)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cmsg;
	ssize_t n;

	if (buf == NULL || len == 0 || len > UROCE_SHM_MSG_MAX)
		return -EINVAL;
	if (fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	}
	do {
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EMSGSIZE;
	return n;
}

static void
close_fds(struct msghdr *msg)
{
	struct cmsghdr *c;
	size_t i, nfd;
	int fd;

	for (c = CMSG_FIRSTHDR(msg); c != NULL; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < nfd; i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			close(fd);
		}
	}
}

ssize_t
uroce_shm_sock_recv(int sock, void *buf, size_t cap, int *fd)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(CMSG_FDS * sizeof(int))];
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = cap};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;
	int got = -1, bad = 0;
	size_t nfd;
	ssize_t n;

	if (fd == NULL || buf == NULL || cap == 0)
		return -EINVAL;
	*fd = -1;
	memset(&ctl, 0, sizeof(ctl));
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	do {
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((msg.msg_flags & MSG_CTRUNC) != 0) {
		close_fds(&msg);
		return -ENOBUFS;
	}
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
			bad = 1;
			continue;
		}
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (nfd != 1 || got >= 0)
			bad = 1;
		else
			memcpy(&got, CMSG_DATA(c), sizeof(int));
	}
	if (bad) {
		close_fds(&msg);
		return -EBADMSG;
	}
	if ((msg.msg_flags & MSG_TRUNC) != 0) {
		if (got >= 0)
			close(got);
		return -EMSGSIZE;
	}
	*fd = got;
	return n;
}

int
uroce_shm_sock_peercred(int sock, pid_t *pid, uid_t *uid, gid_t *gid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return -errno;
	if (pid != NULL)
		*pid = cred.pid;
	if (uid != NULL)
		*uid = cred.uid;
	if (gid != NULL)
		*gid = cred.gid;
	return 0;
}
