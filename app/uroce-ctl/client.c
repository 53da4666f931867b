/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * uroce-ctl's control-socket client: see client.h.
 */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "uroce_shm_ctrl.h"
#include "uroce_verbs.h"

#include "client.h"

const char *
ctl_socket_path(const char *opt)
{
	const char *env;

	if (opt != NULL)
		return opt;
	env = getenv("UROCE_SOCKET");
	if (env != NULL && env[0] != '\0')
		return env;
	return UROCE_DEFAULT_SOCKET;
}

/* Receive the response to @p seq into buf. @return its length or -errno. */
static ssize_t
recv_reply(struct ctl_conn *c, uint8_t *buf, size_t cap, uint16_t type, uint32_t seq)
{
	struct uroce_shm_msg_hdr h;
	struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
	ssize_t n;
	int fd, rc;

	for (;;) {
		rc = poll(&pfd, 1, CTL_RPC_TIMEOUT_MS);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return -errno;
		if (rc == 0)
			return -ETIMEDOUT;
		n = uroce_shm_sock_recv(c->fd, buf, cap, &fd);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0)
			return n == -EMSGSIZE || n == -EBADMSG || n == -ENOBUFS ? -EPROTO : n;
		rc = uroce_shm_msg_validate(buf, (size_t)n, true, fd >= 0);
		if (fd >= 0)
			close(fd); /* the HELLO doorbell segment: uroce-ctl rings no doorbell */
		if (rc == -EPROTONOSUPPORT && type == UROCE_SHM_MSG_HELLO)
			return rc;
		if (rc != 0)
			return -EPROTO;
		memcpy(&h, buf, sizeof(h));
		if (h.type == UROCE_SHM_MSG_ASYNC_EVENT)
			continue; /* no resources, so no event is ours; skip it */
		if (h.type != type || h.seq != seq)
			return -EPROTO;
		return n;
	}
}

int
ctl_conn_call(struct ctl_conn *c, uint16_t type, const void *req, size_t req_len, void *resp,
	      size_t resp_len)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	struct uroce_shm_msg_hdr h;
	uint32_t seq = ++c->seq;
	ssize_t n;
	int len;

	len = uroce_shm_msg_init(buf, sizeof(buf), type, seq, false, 0);
	if (len < 0)
		return len;
	if ((size_t)len != sizeof(h) + req_len || resp_len + sizeof(h) > sizeof(buf))
		return -EINVAL;
	if (req_len > 0)
		memcpy(buf + sizeof(h), req, req_len);
	n = uroce_shm_sock_send(c->fd, buf, (size_t)len, -1);
	if (n == -EPIPE)
		return -ECONNRESET;
	if (n < 0)
		return (int)n;
	n = recv_reply(c, buf, sizeof(buf), type, seq);
	if (n < 0)
		return (int)n;
	memcpy(&h, buf, sizeof(h));
	if ((size_t)n != sizeof(h) + resp_len)
		return -EPROTO;
	if (resp_len > 0)
		memcpy(resp, buf + sizeof(h), resp_len);
	return h.status;
}

int
ctl_conn_open(struct ctl_conn *c, const char *path)
{
	struct uroce_shm_msg_hello_req hq;
	struct uroce_shm_msg_hello_resp hr;
	struct sockaddr_un sa;
	int rc;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (strlen(path) >= sizeof(sa.sun_path) || strlen(path) >= sizeof(c->path))
		return -ENAMETOOLONG;
	strcpy(c->path, path);
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, path);
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rc = -errno;
		goto fail;
	}
	memset(&hq, 0, sizeof(hq));
	hq.abi_major = UROCE_SHM_ABI_MAJOR;
	hq.abi_minor = UROCE_SHM_ABI_MINOR;
	strncpy(hq.name, "uroce-ctl", sizeof(hq.name) - 1);
	memset(&hr, 0, sizeof(hr));
	rc = ctl_conn_call(c, UROCE_SHM_MSG_HELLO, &hq, sizeof(hq), &hr, sizeof(hr));
	if (rc != 0)
		goto fail;
	c->client_id = hr.client_id;
	c->abi_minor = hr.abi_minor;
	return 0;
fail:
	close(c->fd);
	c->fd = -1;
	return rc;
}

void
ctl_conn_close(struct ctl_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

const char *
ctl_conn_advice(int err)
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
		return "uroced speaks another ABI major: use the uroce-ctl of the same release";
	case -ETIMEDOUT:
		return "uroced did not answer within 5 s";
	default:
		return "check the socket path (-s PATH or UROCE_SOCKET)";
	}
}
