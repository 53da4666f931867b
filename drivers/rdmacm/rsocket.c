/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * rsockets (<rdma/rsocket.h>): not implemented on uroce. rsocket() fails
 * with EAFNOSUPPORT, so no rsocket descriptor ever exists, and every call
 * on one fails with EBADF, as it would with a descriptor that is not one.
 * rpoll() and rselect() are poll() and select(): rping, ucmatose and
 * udaddy wait on event channels with rpoll(), and an rsocket-free rpoll is
 * exactly poll() (as librdmacm's is on ordinary descriptors).
 */

#include <errno.h>
#include <poll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <rdma/rsocket.h>

#include "rc_internal.h"

RC_EXPORT int
rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}

RC_EXPORT int
rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout)
{
	return select(nfds, readfds, writefds, exceptfds, timeout);
}

RC_EXPORT int
rsocket(int domain, int type, int protocol)
{
	(void)domain;
	(void)type;
	(void)protocol;
	return rc_err(EAFNOSUPPORT);
}

RC_EXPORT int
rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket;
	(void)addr;
	(void)addrlen;
	return rc_err(EBADF);
}

RC_EXPORT int
rlisten(int socket, int backlog)
{
	(void)socket;
	(void)backlog;
	return rc_err(EBADF);
}

RC_EXPORT int
raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket;
	(void)addr;
	(void)addrlen;
	return rc_err(EBADF);
}

RC_EXPORT int
rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket;
	(void)addr;
	(void)addrlen;
	return rc_err(EBADF);
}

RC_EXPORT int
rshutdown(int socket, int how)
{
	(void)socket;
	(void)how;
	return rc_err(EBADF);
}

RC_EXPORT int
rclose(int socket)
{
	(void)socket;
	return rc_err(EBADF);
}

RC_EXPORT ssize_t
rrecv(int socket, void *buf, size_t len, int flags)
{
	(void)socket;
	(void)buf;
	(void)len;
	(void)flags;
	return rc_err(EBADF);
}

RC_EXPORT ssize_t
rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
	  socklen_t *addrlen)
{
	(void)src_addr;
	(void)addrlen;
	return rrecv(socket, buf, len, flags);
}

RC_EXPORT ssize_t
rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	(void)msg;
	return rrecv(socket, NULL, 0, flags);
}

RC_EXPORT ssize_t
rsend(int socket, const void *buf, size_t len, int flags)
{
	(void)socket;
	(void)buf;
	(void)len;
	(void)flags;
	return rc_err(EBADF);
}

RC_EXPORT ssize_t
rsendto(int socket, const void *buf, size_t len, int flags, const struct sockaddr *dest_addr,
	socklen_t addrlen)
{
	(void)dest_addr;
	(void)addrlen;
	return rsend(socket, buf, len, flags);
}

RC_EXPORT ssize_t
rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	(void)msg;
	return rsend(socket, NULL, 0, flags);
}

RC_EXPORT ssize_t
rread(int socket, void *buf, size_t count)
{
	return rrecv(socket, buf, count, 0);
}

RC_EXPORT ssize_t
rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	(void)iov;
	(void)iovcnt;
	return rrecv(socket, NULL, 0, 0);
}

RC_EXPORT ssize_t
rwrite(int socket, const void *buf, size_t count)
{
	return rsend(socket, buf, count, 0);
}

RC_EXPORT ssize_t
rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	(void)iov;
	(void)iovcnt;
	return rsend(socket, NULL, 0, 0);
}

RC_EXPORT int
rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	return raccept(socket, addr, addrlen);
}

RC_EXPORT int
rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	return raccept(socket, addr, addrlen);
}

RC_EXPORT int
rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{
	(void)level;
	(void)optname;
	(void)optval;
	(void)optlen;
	return rshutdown(socket, 0);
}

RC_EXPORT int
rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	(void)level;
	(void)optname;
	(void)optval;
	(void)optlen;
	return rshutdown(socket, 0);
}

RC_EXPORT int
rfcntl(int socket, int cmd, ...)
{
	(void)cmd;
	return rshutdown(socket, 0);
}

RC_EXPORT off_t
riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	(void)buf;
	(void)len;
	(void)prot;
	(void)flags;
	(void)offset;
	return rshutdown(socket, 0);
}

RC_EXPORT int
riounmap(int socket, void *buf, size_t len)
{
	(void)buf;
	(void)len;
	return rshutdown(socket, 0);
}

RC_EXPORT size_t
riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	(void)buf;
	(void)offset;
	(void)flags;
	/* size_t return: (size_t)-1 and errno, as librdmacm's */
	return (size_t)rsend(socket, NULL, count, 0);
}
