/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Memory windows (ibv_alloc_mw, ibv_bind_mw, ibv_dealloc_mw: static inline
 * in verbs.h over the context ops filled here) over liburoce's windows. A
 * bind is a BIND_MW send WQE either way: ibv_bind_mw (type 1) posts one, as
 * rdma-core providers do, with the window's rkey advanced by ibv_inc_rkey().
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dv_internal.h"

struct dv_mw {
	struct ibv_mw mw;
	struct uroce_mw *umw;
};

struct ibv_mw *
dv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct dv_mw *m;

	if (pd == NULL || (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	/* ibv_mw_type and uroce_mw_type share their values (1 and 2). */
	m->umw = uroce_alloc_mw(((struct dv_pd *)pd)->upd, (int)type);
	if (m->umw == NULL) {
		free(m);
		return NULL; /* errno from liburoce */
	}
	m->mw.context = pd->context;
	m->mw.pd = pd;
	m->mw.rkey = m->umw->rkey;
	m->mw.handle = m->umw->handle;
	m->mw.type = type;
	return &m->mw;
}

int
dv_dealloc_mw(struct ibv_mw *mw)
{
	struct dv_mw *m = (struct dv_mw *)mw;
	int rc;

	if (mw == NULL)
		return EINVAL;
	rc = uroce_dealloc_mw(m->umw);
	if (rc != 0 && rc != -ENOTCONN)
		return -rc;
	free(m);
	return 0;
}

int
dv_bind_fill(struct uroce_shm_send_wqe *w, const struct ibv_mw *mw, uint32_t rkey,
	     const struct ibv_mw_bind_info *info)
{
	if (mw == NULL || info == NULL || (info->length > 0 && info->mr == NULL) ||
	    (rkey >> 8) != (mw->rkey >> 8))
		return EINVAL;
	/* No zero-based windows (o10-36.2.2 for type 1; uroce has none). */
	if (info->mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return EINVAL;
	uroce_wqe_set_bind(w, rkey, info->length > 0 ? info->mr->lkey : 0, info->addr,
			   info->length, info->mw_access_flags);
	return 0;
}

int
dv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr, *bad;
	int rc;

	if (qp == NULL || mw == NULL || mw_bind == NULL || mw->type != IBV_MW_TYPE_1)
		return EINVAL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = mw_bind->wr_id;
	wr.send_flags = mw_bind->send_flags;
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	rc = dv_post_send(qp, &wr, &bad);
	if (rc == 0)
		mw->rkey = wr.bind_mw.rkey;
	return rc;
}
