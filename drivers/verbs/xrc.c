/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * XRC (IBA 1.2 eXtended Reliable Connected) in the drop-in: the verbs_context
 * ops behind ibv_open_xrcd(), ibv_close_xrcd(), ibv_create_srq_ex() (XRC
 * SRQs) and ibv_get_srq_num(). XRC QPs are created in qp.c.
 *
 * An XRC domain opened with a file is what the kernel keys it by: the file's
 * inode. Within one context, opening the same file again gives the same
 * domain (counted); O_EXCL refuses an existing one and a file without one
 * needs O_CREAT, as uverbs answers. The daemon never shares a domain
 * between processes: another process opening the same file gets a domain
 * of its own (doc/verbs-dropin.md).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dv_internal.h"

static struct dv_xrcd *
xrcd_new(struct ibv_context *c)
{
	struct dv_xrcd *x = calloc(1, sizeof(*x));

	if (x == NULL)
		return NULL;
	x->ux = uroce_open_xrcd(dv_ctx(c)->uctx);
	if (x->ux == NULL) {
		int err = errno;

		free(x);
		errno = err;
		return NULL;
	}
	x->xrcd.context = c;
	x->refs = 1;
	return x;
}

struct ibv_xrcd *
dv_open_xrcd(struct ibv_context *c, struct ibv_xrcd_init_attr *attr)
{
	struct dv_context *ctx = dv_ctx(c);
	struct dv_xrcd *x;
	struct stat st;

	if (attr == NULL || (attr->comp_mask & ~(uint32_t)(IBV_XRCD_INIT_ATTR_FD |
							   IBV_XRCD_INIT_ATTR_OFLAGS)) != 0 ||
	    !(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) ||
	    !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS) ||
	    (attr->oflags & ~(O_CREAT | O_EXCL)) != 0) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->fd == -1) {
		/* No file: a domain of its own. */
		x = xrcd_new(c);
		return x != NULL ? &x->xrcd : NULL;
	}
	if (fstat(attr->fd, &st) != 0)
		return NULL; /* EBADF */
	pthread_mutex_lock(&ctx->xrcd_lock);
	for (x = ctx->xrcds; x != NULL; x = x->next)
		if (x->dev == st.st_dev && x->ino == st.st_ino)
			break;
	if (x != NULL) {
		if (attr->oflags & O_EXCL) {
			pthread_mutex_unlock(&ctx->xrcd_lock);
			errno = EINVAL;
			return NULL;
		}
		x->refs++;
	} else if (!(attr->oflags & O_CREAT)) {
		pthread_mutex_unlock(&ctx->xrcd_lock);
		errno = EAGAIN; /* no domain for this file yet */
		return NULL;
	} else {
		x = xrcd_new(c);
		if (x != NULL) {
			x->named = true;
			x->dev = st.st_dev;
			x->ino = st.st_ino;
			x->next = ctx->xrcds;
			ctx->xrcds = x;
		}
	}
	pthread_mutex_unlock(&ctx->xrcd_lock);
	DV_TRACE("open_xrcd fd %d: %s", attr->fd, x != NULL ? "ok" : strerror(errno));
	return x != NULL ? &x->xrcd : NULL;
}

int
dv_close_xrcd(struct ibv_xrcd *ibx)
{
	struct dv_xrcd *x = (struct dv_xrcd *)ibx, **p;
	struct dv_context *ctx;
	int rc;

	if (ibx == NULL)
		return EINVAL;
	ctx = dv_ctx(ibx->context);
	pthread_mutex_lock(&ctx->xrcd_lock);
	if (x->refs > 1) {
		x->refs--;
		pthread_mutex_unlock(&ctx->xrcd_lock);
		return 0;
	}
	rc = -uroce_close_xrcd(x->ux);
	if (rc == 0 || rc == ENOTCONN) {
		for (p = &ctx->xrcds; x->named && *p != NULL; p = &(*p)->next)
			if (*p == x) {
				*p = x->next;
				break;
			}
		free(x);
	}
	pthread_mutex_unlock(&ctx->xrcd_lock);
	return rc == ENOTCONN ? 0 : rc;
}

/* ibv_create_srq_ex: a basic SRQ (PD and type only are taken by the inline
 * itself), or an XRC SRQ with PD, XRC domain and CQ. Tag matching: EOPNOTSUPP. */
struct ibv_srq *
dv_create_srq_ex(struct ibv_context *c, struct ibv_srq_init_attr_ex *a)
{
	const uint32_t xrc = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	struct ibv_srq *srq;

	if (a == NULL || !(a->comp_mask & IBV_SRQ_INIT_ATTR_PD) || a->pd == NULL ||
	    a->pd->context != c) {
		errno = EINVAL;
		return NULL;
	}
	if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) || a->srq_type == IBV_SRQT_BASIC) {
		if (a->comp_mask & ~(uint32_t)(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
					       IBV_SRQ_INIT_ATTR_CQ)) {
			errno = EOPNOTSUPP;
			return NULL;
		}
		return dv_srq_new(a->pd, NULL, NULL, a->srq_context, &a->attr);
	}
	if (a->srq_type != IBV_SRQT_XRC) {
		errno = EOPNOTSUPP; /* tag matching */
		return NULL;
	}
	if ((a->comp_mask & xrc) != xrc || (a->comp_mask & ~xrc) != 0 || a->xrcd == NULL ||
	    a->cq == NULL || a->xrcd->context != c || a->cq->context != c) {
		errno = EINVAL;
		return NULL;
	}
	srq = dv_srq_new(a->pd, (struct dv_xrcd *)a->xrcd, a->cq, a->srq_context, &a->attr);
	DV_TRACE("create_srq_ex XRC: %s", srq != NULL ? "ok" : strerror(errno));
	return srq;
}

int
dv_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct dv_srq *srq = (struct dv_srq *)ibsrq;

	if (ibsrq == NULL || srq_num == NULL || srq->usrq->srq_num == 0)
		return EINVAL; /* not an XRC SRQ */
	*srq_num = srq->usrq->srq_num;
	return 0;
}
