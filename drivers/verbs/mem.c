/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Protection domains and memory regions. ibv_reg_mr() on ordinary memory
 * (malloc, memalign, anonymous mmap) goes through liburoce's in-place
 * re-backing (doc/verbs.md, "Registering ordinary memory"); a range that is
 * not page aligned, which liburoce refuses on its own, is first re-backed as
 * its enclosing pages and then registered exactly, so the MR grants no byte
 * beyond what the application asked for.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dv_internal.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

DV_EXPORT struct ibv_pd *
ibv_alloc_pd(struct ibv_context *c)
{
	struct dv_pd *pd;

	if (c == NULL) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL)
		return NULL;
	pd->upd = uroce_alloc_pd(dv_ctx(c)->uctx);
	if (pd->upd == NULL) {
		free(pd);
		return NULL;
	}
	pd->pd.context = c;
	pd->pd.handle = pd->upd->handle;
	return &pd->pd;
}

DV_EXPORT int
ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct dv_pd *p = (struct dv_pd *)pd;
	int rc;

	if (pd == NULL)
		return EINVAL;
	if (p->base != NULL) {
		__atomic_sub_fetch(&p->base->domains, 1, __ATOMIC_RELAXED);
		free(p);
		return 0;
	}
	if (__atomic_load_n(&p->domains, __ATOMIC_RELAXED) != 0)
		return EBUSY;
	rc = uroce_dealloc_pd(p->upd);
	if (rc != 0 && rc != -ENOTCONN)
		return -rc;
	free(p);
	return 0;
}

/*
 * Parent domains (ibv_alloc_parent_domain): a PD as far as uroce is concerned
 * (objects created with one belong to its PD). The custom allocators are
 * accepted but never called: a QP's or CQ's queues are segments the daemon
 * creates and maps into both processes, not memory the provider allocates.
 */
struct ibv_pd *
dv_alloc_parent_domain(struct ibv_context *c, struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct dv_pd *base, *d;

	if (attr == NULL || attr->pd == NULL || attr->pd->context != c ||
	    ((struct dv_pd *)attr->pd)->base != NULL ||
	    (attr->td != NULL && attr->td->context != c)) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & ~known) != 0 ||
	    ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	     (attr->alloc == NULL || attr->free == NULL))) {
		errno = attr->comp_mask & ~known ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	base = (struct dv_pd *)attr->pd;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return NULL;
	d->pd.context = c;
	d->pd.handle = base->pd.handle;
	d->upd = base->upd;
	d->base = base;
	__atomic_add_fetch(&base->domains, 1, __ATOMIC_RELAXED);
	return &d->pd;
}

/* Thread domains: a promise by the caller that it serializes access to the
 * objects of one; uroce's locks are uncontended then, so nothing changes. */
struct ibv_td *
dv_alloc_td(struct ibv_context *c, struct ibv_td_init_attr *attr)
{
	struct ibv_td *td;

	if (attr == NULL || attr->comp_mask != 0) {
		errno = attr == NULL ? EINVAL : EOPNOTSUPP;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (td != NULL)
		td->context = c;
	return td;
}

int
dv_dealloc_td(struct ibv_td *td)
{
	if (td == NULL)
		return EINVAL;
	free(td);
	return 0;
}

/* Access bits uroce implements; optional bits (relaxed ordering, ...) are
 * hints that may be ignored, IBV_ACCESS_HUGETLB too. FLUSH_GLOBAL (1 << 8,
 * rdma-core 45's IBV_ACCESS_FLUSH_GLOBAL, absent from 44's headers) is
 * uroce's own value; FLUSH_PERSISTENT is refused: no pmem MRs. */
#define DV_ACCESS_OK \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | UROCE_ACCESS_FLUSH_GLOBAL)

/*
 * Re-back the pages enclosing [addr, + length) if the range is not page
 * aligned (liburoce re-backs whole pages only): an MR without access that
 * keeps them shared while the exact range is registered. NULL if aligned
 * or on failure.
 */
static struct uroce_mr *
back_enclosing_pages(struct uroce_pd *upd, void *addr, size_t length)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)addr & ~(pg - 1);
	uintptr_t hi = ((uintptr_t)addr + length + pg - 1) & ~(pg - 1);

	if (hi <= lo || (lo == (uintptr_t)addr && hi == (uintptr_t)addr + length))
		return NULL;
	return uroce_reg_mr(upd, (void *)lo, hi - lo, 0);
}

static struct ibv_mr *
dv_reg(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access)
{
	struct dv_pd *p = (struct dv_pd *)pd;
	struct uroce_mr *outer = NULL;
	struct dv_mr *mr;
	int err;

	if (pd == NULL || length == 0) {
		errno = EINVAL;
		return NULL;
	}
	access &= ~(unsigned int)(IBV_ACCESS_OPTIONAL_RANGE | IBV_ACCESS_HUGETLB);
	if ((access & ~(unsigned int)DV_ACCESS_OK) != 0 || iova != (uintptr_t)addr) {
		/* Memory windows, zero-based, on-demand paging, and an iova other
		 * than the address: not implemented. */
		DV_TRACE("reg_mr: access 0x%x / iova unsupported", access);
		errno = EOPNOTSUPP;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return NULL;
	mr->umr = uroce_reg_mr(p->upd, addr, length, (int)access);
	if (mr->umr == NULL && errno == EINVAL) {
		/* Not page aligned: re-back the enclosing pages, then the exact
		 * range lies inside re-backed memory and needs no alignment. */
		outer = back_enclosing_pages(p->upd, addr, length);
		if (outer != NULL)
			mr->umr = uroce_reg_mr(p->upd, addr, length, (int)access);
		else
			errno = EINVAL;
	}
	err = errno;
	if (outer != NULL)
		uroce_dereg_mr(outer); /* the exact MR keeps the memory shared */
	if (mr->umr == NULL) {
		DV_TRACE("reg_mr %p+%zu access 0x%x: %s", addr, length, access, strerror(err));
		free(mr);
		errno = err;
		return NULL;
	}
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.handle = mr->umr->handle;
	mr->mr.lkey = mr->umr->lkey;
	mr->mr.rkey = mr->umr->rkey;
	DV_TRACE("reg_mr %p+%zu access 0x%x: lkey 0x%x", addr, length, access, mr->mr.lkey);
	return &mr->mr;
}

DV_EXPORT struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return dv_reg(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

DV_EXPORT struct ibv_mr *
ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
	return dv_reg(pd, addr, length, iova, (unsigned int)access);
}

DV_EXPORT struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		 unsigned int access)
{
	return dv_reg(pd, addr, length, iova, access);
}

DV_EXPORT int
ibv_dereg_mr(struct ibv_mr *mr)
{
	struct dv_mr *m = (struct dv_mr *)mr;
	int rc;

	if (mr == NULL)
		return EINVAL;
	rc = uroce_dereg_mr(m->umr);
	if (rc != 0 && rc != -ENOTCONN)
		return -rc;
	free(m);
	return 0;
}

DV_EXPORT int
ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
	     int access)
{
	struct dv_mr *m = (struct dv_mr *)mr;
	struct uroce_mr *outer = NULL;
	struct uroce_pd *upd = NULL;
	int rc;

	if (mr == NULL || flags == 0 || (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) != 0 ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) && (pd == NULL || pd->context != mr->context)) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (addr == NULL || length == 0))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS) {
		access &= ~(IBV_ACCESS_OPTIONAL_RANGE | IBV_ACCESS_HUGETLB);
		if ((access & ~DV_ACCESS_OK) != 0) {
			errno = EOPNOTSUPP; /* as at registration */
			return IBV_REREG_MR_ERR_INPUT;
		}
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		upd = ((struct dv_pd *)pd)->upd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION)
		outer = back_enclosing_pages(upd != NULL ? upd : m->umr->pd, addr, length);
	rc = uroce_rereg_mr(m->umr, flags, upd, addr, length, access);
	if (outer != NULL)
		uroce_dereg_mr(outer); /* the MR keeps the memory shared */
	if (rc != 0) {
		DV_TRACE("rereg_mr 0x%x flags 0x%x: %s", mr->lkey, flags, strerror(-rc));
		errno = -rc;
		/* The daemon changed nothing: the MR is as it was. */
		return rc == -EINVAL ? IBV_REREG_MR_ERR_INPUT : IBV_REREG_MR_ERR_CMD;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = length;
	}
	mr->lkey = m->umr->lkey;
	mr->rkey = m->umr->rkey;
	return 0;
}

DV_EXPORT struct ibv_mr *
ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
		  int access)
{
	(void)pd;
	(void)offset;
	(void)length;
	(void)iova;
	(void)fd;
	(void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

/* Sharing objects between processes through a kernel command fd: no kernel. */
DV_EXPORT struct ibv_context *
ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = EOPNOTSUPP;
	return NULL;
}

DV_EXPORT struct ibv_pd *
ibv_import_pd(struct ibv_context *c, uint32_t pd_handle)
{
	(void)c;
	(void)pd_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

DV_EXPORT void
ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd; /* nothing can have been imported */
}

DV_EXPORT struct ibv_mr *
ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd;
	(void)mr_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

DV_EXPORT void
ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

DV_EXPORT struct ibv_dm *
ibv_import_dm(struct ibv_context *c, uint32_t dm_handle)
{
	(void)c;
	(void)dm_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

DV_EXPORT void
ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}
