/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * rdma_getaddrinfo(): getaddrinfo() with rdma_cm's port spaces and QP types
 * (RC for stream, UD for datagram; PS_TCP or PS_UDP unless the hints say),
 * RAI_PASSIVE giving the source address, else the destination. There is no
 * SA or ibacm here, so no route comes with it (ai_route stays empty), and
 * AF_IB addresses are refused (EAI_FAMILY).
 */

#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "rc_internal.h"

static int
copy_addr(struct sockaddr **dst, socklen_t *dst_len, const struct sockaddr *src, socklen_t len)
{
	*dst = malloc(len);
	if (*dst == NULL)
		return EAI_MEMORY;
	memcpy(*dst, src, len);
	*dst_len = len;
	return 0;
}

static void
hints_to_ai(const struct rdma_addrinfo *h, struct addrinfo *ai)
{
	memset(ai, 0, sizeof(*ai));
	if (h->ai_flags & RAI_PASSIVE)
		ai->ai_flags |= AI_PASSIVE;
	if (h->ai_flags & RAI_NUMERICHOST)
		ai->ai_flags |= AI_NUMERICHOST;
	ai->ai_family = h->ai_family;
	if (h->ai_qp_type == IBV_QPT_UD)
		ai->ai_socktype = SOCK_DGRAM;
	else if (h->ai_qp_type != 0)
		ai->ai_socktype = SOCK_STREAM;
	if (h->ai_port_space == RDMA_PS_TCP)
		ai->ai_protocol = IPPROTO_TCP;
	else if (h->ai_port_space == RDMA_PS_UDP)
		ai->ai_protocol = IPPROTO_UDP;
	else if (h->ai_port_space == RDMA_PS_IB && ai->ai_socktype != 0)
		ai->ai_protocol = ai->ai_socktype == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP;
}

static int
from_ai(struct rdma_addrinfo *r, const struct rdma_addrinfo *h, const struct addrinfo *ai)
{
	r->ai_qp_type = h->ai_qp_type != 0 ? h->ai_qp_type :
		       ai->ai_socktype == SOCK_DGRAM ? IBV_QPT_UD : IBV_QPT_RC;
	r->ai_port_space = h->ai_port_space != 0 ? h->ai_port_space :
			   ai->ai_protocol == IPPROTO_UDP ? RDMA_PS_UDP : RDMA_PS_TCP;
	r->ai_family = ai->ai_family;
	if (ai->ai_flags & AI_PASSIVE) {
		r->ai_flags = RAI_PASSIVE;
		if (ai->ai_canonname != NULL)
			r->ai_src_canonname = strdup(ai->ai_canonname);
		return copy_addr(&r->ai_src_addr, &r->ai_src_len, ai->ai_addr, ai->ai_addrlen);
	}
	if (ai->ai_canonname != NULL)
		r->ai_dst_canonname = strdup(ai->ai_canonname);
	return copy_addr(&r->ai_dst_addr, &r->ai_dst_len, ai->ai_addr, ai->ai_addrlen);
}

RC_EXPORT int
rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		 struct rdma_addrinfo **res)
{
	static const struct rdma_addrinfo none;
	struct rdma_addrinfo *r;
	int rc = 0;

	if (res == NULL || (node == NULL && service == NULL && hints == NULL))
		return rc_err(EINVAL);
	if (hints == NULL)
		hints = &none;
	if (hints->ai_family == AF_IB)
		return EAI_FAMILY; /* no InfiniBand addresses: RoCE only */
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return EAI_MEMORY;
	if (node != NULL || service != NULL) {
		struct addrinfo ah, *ai;

		hints_to_ai(hints, &ah);
		rc = getaddrinfo(node, service, hints == &none ? NULL : &ah, &ai);
		if (rc != 0)
			goto err;
		rc = from_ai(r, hints, ai);
		freeaddrinfo(ai);
	} else {
		r->ai_flags = hints->ai_flags;
		r->ai_family = hints->ai_family;
		r->ai_qp_type = hints->ai_qp_type;
		r->ai_port_space = hints->ai_port_space;
		if (hints->ai_dst_len > 0)
			rc = copy_addr(&r->ai_dst_addr, &r->ai_dst_len, hints->ai_dst_addr,
				       hints->ai_dst_len);
	}
	if (rc == 0 && r->ai_src_len == 0 && hints->ai_src_len > 0)
		rc = copy_addr(&r->ai_src_addr, &r->ai_src_len, hints->ai_src_addr,
			       hints->ai_src_len);
	if (rc != 0)
		goto err;
	*res = r;
	return 0;
err:
	rdma_freeaddrinfo(r);
	return rc;
}

RC_EXPORT void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res != NULL) {
		struct rdma_addrinfo *r = res;

		res = r->ai_next;
		free(r->ai_connect);
		free(r->ai_route);
		free(r->ai_src_canonname);
		free(r->ai_dst_canonname);
		free(r->ai_src_addr);
		free(r->ai_dst_addr);
		free(r);
	}
}
