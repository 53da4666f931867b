/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Tests for lib/shm/sock.c over a SOCK_SEQPACKET socketpair: a message with a
 * memfd round-trips and the descriptor works on the other side; a message
 * without one; truncation and two descriptors are refused without leaking
 * one; SO_PEERCRED reports this process.
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "uroce_shm.h"

static int sv[2];

static void
setup(void)
{
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

static void
teardown(void)
{
	close(sv[0]);
	close(sv[1]);
}

static int
open_fd_count(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			n++;
	return n;
}

TestSuite(sock, .init = setup, .fini = teardown);

Test(sock, scm_rights_round_trip)
{
	struct uroce_shm_segment seg, peer;
	uint8_t msg[64], in[UROCE_SHM_MSG_MAX];
	int len, fd = -1;
	ssize_t n;

	cr_assert_eq(uroce_shm_segment_create(&seg, "sock-test", 8192, 0), 0);
	memcpy(seg.addr, "hello, daemon", 14);
	len = uroce_shm_msg_init(msg, sizeof(msg), UROCE_SHM_MSG_ALLOC_SEGMENT, 7, false, 0);
	cr_assert_gt(len, 0);
	/* Expect: the message and the descriptor arrive together. */
	cr_assert_eq(uroce_shm_sock_send(sv[0], msg, (size_t)len, seg.fd), len);
	n = uroce_shm_sock_recv(sv[1], in, sizeof(in), &fd);
	cr_assert_eq(n, len);
	cr_assert_geq(fd, 0);
	cr_expect_neq(fd, seg.fd);
	cr_expect_eq(memcmp(in, msg, (size_t)len), 0);
	cr_expect_eq(uroce_shm_msg_validate(in, (size_t)n, false, fd >= 0), 0);
	/* Expect: close-on-exec, and it maps the same memory. */
	cr_expect_neq(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	cr_assert_eq(uroce_shm_segment_map(&peer, fd, 8192), 0);
	cr_expect_str_eq((char *)peer.addr, "hello, daemon");
	((char *)peer.addr)[0] = 'J';
	cr_expect_eq(((char *)seg.addr)[0], 'J');
	uroce_shm_segment_unmap(&peer);
	uroce_shm_segment_unmap(&seg);
}

Test(sock, no_descriptor)
{
	uint8_t msg[64], in[64];
	int len, fd = 123;

	len = uroce_shm_msg_init(msg, sizeof(msg), UROCE_SHM_MSG_ALLOC_PD, 1, false, 0);
	cr_assert_eq(uroce_shm_sock_send(sv[0], msg, (size_t)len, -1), len);
	/* Expect: fd is set to -1. */
	cr_assert_eq(uroce_shm_sock_recv(sv[1], in, sizeof(in), &fd), len);
	cr_expect_eq(fd, -1);
}

Test(sock, truncated_message_refused_no_leak)
{
	uint8_t msg[100] = {1}, in[16];
	int fd = 5, before;

	before = open_fd_count();
	cr_assert_eq(uroce_shm_sock_send(sv[0], msg, sizeof(msg), sv[0]), (ssize_t)sizeof(msg));
	/* Expect: -EMSGSIZE, and the passed descriptor was closed. */
	cr_expect_eq(uroce_shm_sock_recv(sv[1], in, sizeof(in), &fd), -EMSGSIZE);
	cr_expect_eq(fd, -1);
	cr_expect_eq(open_fd_count(), before);
}

Test(sock, two_descriptors_refused_no_leak)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	uint8_t msg[24] = {0}, in[64];
	struct iovec iov = {.iov_base = msg, .iov_len = sizeof(msg)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;
	int fds[2] = {sv[0], sv[0]}, fd = 9, before;

	memset(&ctl, 0, sizeof(ctl));
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	before = open_fd_count();
	cr_assert_eq(sendmsg(sv[0], &mh, 0), (ssize_t)sizeof(msg));
	/* Expect: -EBADMSG and both received descriptors closed. */
	cr_expect_eq(uroce_shm_sock_recv(sv[1], in, sizeof(in), &fd), -EBADMSG);
	cr_expect_eq(fd, -1);
	cr_expect_eq(open_fd_count(), before);
}

Test(sock, send_arguments_and_closed_peer)
{
	uint8_t msg[UROCE_SHM_MSG_MAX + 1] = {0}, in[8];
	int fd;

	/* Expect: oversize and empty messages refused before any syscall. */
	cr_expect_eq(uroce_shm_sock_send(sv[0], msg, sizeof(msg), -1), -EINVAL);
	cr_expect_eq(uroce_shm_sock_send(sv[0], msg, 0, -1), -EINVAL);
	/* Expect: end of stream is 0; sending to a closed peer is -EPIPE, with
	 * no SIGPIPE (MSG_NOSIGNAL). */
	close(sv[0]);
	cr_expect_eq(uroce_shm_sock_recv(sv[1], in, sizeof(in), &fd), 0);
	cr_expect_eq(uroce_shm_sock_send(sv[1], msg, 8, -1), -EPIPE);
	sv[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

Test(sock, peercred_is_this_process)
{
	pid_t pid = 0;
	uid_t uid = 1;
	gid_t gid = 1;

	/* Expect: the daemon learns pid/uid/gid from the kernel, not the client. */
	cr_assert_eq(uroce_shm_sock_peercred(sv[1], &pid, &uid, &gid), 0);
	cr_expect_eq(pid, getpid());
	cr_expect_eq(uid, getuid());
	cr_expect_eq(gid, getgid());
	cr_expect_eq(uroce_shm_sock_peercred(-1, &pid, &uid, &gid), -EBADF);
}
