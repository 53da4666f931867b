/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The client's end of the control socket (uroce_shm_ctrl.h), shared by
 * liburoce, uroce-ctl and uroce-perf. Every reply goes through
 * uroce_shm_msg_validate() before a body field is read. A slow daemon is
 * told from a dead one: end of stream is death, silence is not; the caller's
 * still_alive() decides how long silence may last.
 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "shm_internal.h"

const char *
uroce_shm_socket_path(const char *opt)
{
	const char *env;

	if (opt != NULL)
		return opt;
	env = getenv("UROCE_SOCKET");
	if (env != NULL && env[0] != '\0')
		return env;
	return UROCE_DEFAULT_SOCKET;
}

int
uroce_shm_client_connect(struct uroce_shm_client *c, const char *path)
{
	struct sockaddr_un sa;

	c->fd = -1;
	c->seq = 0;
	c->abandoned = 0;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, path);
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int rc = -errno;

		close(c->fd);
		c->fd = -1;
		return rc;
	}
	return 0;
}

void
uroce_shm_client_close(struct uroce_shm_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* Wait until the socket is readable. @return 0, -ETIMEDOUT, or -errno. */
static int
wait_readable(struct uroce_shm_client *c)
{
	struct pollfd p = {.fd = c->fd, .events = POLLIN};
	int rc;

	for (;;) {
		rc = poll(&p, 1, c->timeout_ms);
		if (rc > 0)
			return 0;
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return -errno;
		if (c->still_alive == NULL || !c->still_alive(c->arg))
			return -ETIMEDOUT;
	}
}

/* What recv_msg() found. */
enum recv_kind {
	RECV_REPLY,       /* a reply: the caller matches it */
	RECV_HANDLED,     /* an event (given to on_event) or a late reply (skipped) */
};

/*
 * Receive one message (the socket is readable). Events go to on_event and
 * late replies of calls given up are skipped, both RECV_HANDLED; for a reply
 * other than @p seq's, -EPROTO. @return a recv_kind, or -errno as
 * uroce_shm_client_call() (-EAGAIN: nothing there after all).
 */
static int
recv_msg(struct uroce_shm_client *c, uint8_t *buf, size_t cap, uint32_t seq, ssize_t *len,
	 int *fd)
{
	const struct uroce_shm_msg_hdr *h = (const void *)buf;
	ssize_t n;
	int rc;

	*fd = -1;
	n = uroce_shm_sock_recv(c->fd, buf, cap, fd);
	if (n == 0 || n == -ECONNRESET || n == -EPIPE)
		return -ECONNRESET;
	if (n == -EAGAIN || n == -EWOULDBLOCK || n == -EINTR)
		return -EAGAIN;
	if (n < 0)
		return n == -EMSGSIZE || n == -EBADMSG || n == -ENOBUFS ? -EPROTO : (int)n;
	rc = uroce_shm_msg_validate(buf, (size_t)n, true, *fd >= 0);
	if (rc != 0)
		goto drop;
	/* An event is seq 0 and status 0; a reply never is (seq starts at 1). */
	if (h->type == UROCE_SHM_MSG_ASYNC_EVENT && h->seq == 0 && h->status == 0) {
		if (c->on_event != NULL)
			c->on_event(c->arg, buf + sizeof(*h));
		return RECV_HANDLED;
	}
	if (h->seq != seq) {
		/* The late reply of a call that gave up waiting: skip it. Any
		 * other reply out of turn breaks the protocol. */
		rc = c->abandoned > 0 && seq - h->seq < (1u << 31) ? RECV_HANDLED : -EPROTO;
		goto drop;
	}
	*len = n;
	return RECV_REPLY;
drop:
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return rc == -EPROTONOSUPPORT || rc == RECV_HANDLED ? rc : -EPROTO;
}

/*
 * Receive until the reply to @p seq (of @p type) comes. @return its length,
 * or -errno as uroce_shm_client_call().
 */
static ssize_t
recv_reply(struct uroce_shm_client *c, uint8_t *buf, size_t cap, uint16_t type, uint32_t seq,
	   int *fd)
{
	const struct uroce_shm_msg_hdr *h = (const void *)buf;
	ssize_t n = 0;
	int rc;

	for (;;) {
		rc = wait_readable(c);
		if (rc != 0)
			return rc;
		rc = recv_msg(c, buf, cap, seq, &n, fd);
		if (rc == RECV_HANDLED || rc == -EAGAIN)
			continue;
		if (rc < 0)
			return rc;
		if (h->type != type) {
			if (*fd >= 0)
				close(*fd);
			*fd = -1;
			return -EPROTO;
		}
		return n;
	}
}

int
uroce_shm_client_drain(struct uroce_shm_client *c)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	ssize_t n;
	int rc, fd;

	if (c->fd < 0)
		return -ENOTCONN;
	for (;;) {
		struct pollfd p = {.fd = c->fd, .events = POLLIN};

		if (poll(&p, 1, 0) <= 0)
			return 0;
		/* seq + 1 was never sent: a reply here is one given up or a fault. */
		rc = recv_msg(c, buf, sizeof(buf), c->seq + 1, &n, &fd);
		if (rc == -EAGAIN)
			return 0;
		if (rc < 0)
			return rc;
		if (rc == RECV_REPLY) {
			if (fd >= 0)
				close(fd);
			return -EPROTO;
		}
	}
}

int
uroce_shm_client_call(struct uroce_shm_client *c, uint16_t type, const void *req,
		      size_t req_len, int fd_in, void *resp, size_t resp_len, int *fd_out)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	const struct uroce_shm_msg_hdr *h = (const void *)buf;
	uint32_t seq;
	ssize_t n;
	int len, fd = -1;

	if (fd_out != NULL)
		*fd_out = -1;
	c->replied = false;
	if (c->fd < 0)
		return -ENOTCONN;
	seq = ++c->seq;
	if (seq == 0)
		seq = ++c->seq; /* 0 is an event's */
	len = uroce_shm_msg_init(buf, sizeof(buf), type, seq, false, 0);
	if (len < 0)
		return len;
	if ((size_t)len != sizeof(*h) + req_len || resp_len + sizeof(*h) > sizeof(buf))
		return -EINVAL;
	if (req_len > 0)
		memcpy(buf + sizeof(*h), req, req_len);
	n = uroce_shm_sock_send(c->fd, buf, (size_t)len, fd_in);
	if (n == -EPIPE || n == -ECONNRESET)
		return -ECONNRESET;
	if (n < 0)
		return (int)n;
	n = recv_reply(c, buf, sizeof(buf), type, seq, &fd);
	if (n == -ETIMEDOUT)
		c->abandoned++;
	if (n < 0)
		return (int)n;
	if (h->status == 0 && (size_t)n != sizeof(*h) + resp_len) {
		if (fd >= 0)
			close(fd);
		return -EPROTO;
	}
	if (h->status == 0 && resp_len > 0)
		memcpy(resp, buf + sizeof(*h), resp_len);
	if (fd_out != NULL)
		*fd_out = fd;
	else if (fd >= 0)
		close(fd);
	c->replied = true;
	return h->status;
}

int
uroce_shm_client_hello(struct uroce_shm_client *c, const char *name,
		       struct uroce_shm_msg_hello_resp *resp, int *fd_out)
{
	struct uroce_shm_msg_hello_req hq;

	memset(&hq, 0, sizeof(hq));
	hq.abi_major = UROCE_SHM_ABI_MAJOR;
	hq.abi_minor = UROCE_SHM_ABI_MINOR;
	snprintf(hq.name, sizeof(hq.name), "%s", name);
	int rc;

	memset(resp, 0, sizeof(*resp));
	rc = uroce_shm_client_call(c, UROCE_SHM_MSG_HELLO, &hq, sizeof(hq), -1, resp,
				   sizeof(*resp), fd_out);
	if (rc == 0) {
		c->client_id = resp->client_id;
		c->daemon_minor = resp->abi_minor;
	}
	return rc;
}

int
uroce_shm_client_open(struct uroce_shm_client *c, const char *path, const char *name)
{
	struct uroce_shm_msg_hello_resp hr;
	int rc;

	memset(c, 0, sizeof(*c));
	c->timeout_ms = UROCE_SHM_CLIENT_TIMEOUT_MS;
	rc = uroce_shm_client_connect(c, path);
	if (rc == 0)
		rc = uroce_shm_client_hello(c, name, &hr, NULL);
	if (rc != 0)
		uroce_shm_client_close(c);
	return rc;
}

const char *
uroce_shm_client_advice(int err)
{
	switch (err) {
	case -ENOENT:
	case -ECONNREFUSED:
		return "is uroced running? Start it, or give its socket with -s PATH "
		       "or UROCE_SOCKET";
	case -EACCES:
	case -EPERM:
		return "no permission on the socket: run as a member of the socket's group, "
		       "or as root";
	case -EPROTONOSUPPORT:
		return "uroced speaks another ABI major: use the tools of the same release";
	case -ETIMEDOUT:
		return "uroced did not answer in time: it may be stopped or starved of CPU";
	default:
		return "check the socket path (-s PATH or UROCE_SOCKET)";
	}
}
