/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Memory regions: registration, keys, and the overflow-safe bounds and
 * rights checks every local and remote access goes through (IBA 10.6).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "transport_internal.h"

/*
 * The variant byte of a new key (IBA 10.6.3.4: the CI chooses key values).
 * It comes from the kernel's CSPRNG, so a peer cannot predict the key of an
 * MR from its index, the time or an address, and it always differs from the
 * slot's previous variant, so a stale key never matches its successor.
 * getrandom() of one byte from an initialised pool does not block or fail
 * short; should it fail, the old variant + 1 still keeps keys distinct.
 */
static uint8_t
next_variant(uint8_t prev)
{
	uint8_t v;

	do {
		if (getrandom(&v, 1, 0) != 1)
			v = (uint8_t)(prev + 1);
	} while (v == prev);
	return v;
}

/* The arguments of a registration or re-registration: true if valid. */
static bool
mr_args_ok(const struct uroce_eng_pd *pd, const void *addr, uint64_t iova, uint64_t length,
	   int access)
{
	const int all = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
			UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC;

	if (pd == NULL || (access & ~all) != 0 || (addr == NULL && length != 0) ||
	    iova + length < iova)
		return false;
	/* IBA 10.6.3.1 (as verbs): remote write/atomic need local write. */
	if ((access & (UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & UROCE_ACCESS_LOCAL_WRITE))
		return false;
	/* IBA 9.4.5 aligns an atomic's VA to 8 bytes; the word it names must be
	 * 8-aligned in our mapping too, or no CPU atomic can execute it (a
	 * misaligned locked access may split a cache line: slow, or a fault). */
	return !(access & UROCE_ACCESS_REMOTE_ATOMIC) || (((uintptr_t)addr - iova) & 7) == 0;
}

/* A filled-in MR under @p key holding a reference on @p pd, not yet published. */
static struct uroce_eng_mr *
mr_new(struct uroce_eng_pd *pd, void *addr, uint64_t iova, uint64_t length, int access,
       uint32_t key)
{
	struct uroce_eng_mr *mr = calloc(1, sizeof(*mr));

	if (mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	mr->dev = pd->dev;
	mr->pd = pd;
	mr->addr = addr;
	mr->iova = iova;
	mr->length = length;
	mr->access = access;
	mr->key = key;
	__atomic_fetch_add(&pd->refs, 1, __ATOMIC_RELAXED);
	return mr;
}

struct uroce_eng_mr *
uroce_eng_mr_reg(struct uroce_eng_pd *pd, void *addr, uint64_t iova, uint64_t length, int access)
{
	struct uroce_eng_dev *dev;
	struct uroce_eng_mr *mr;
	uint32_t i, idx;

	if (!mr_args_ok(pd, addr, iova, length, access)) {
		errno = EINVAL;
		return NULL;
	}
	dev = pd->dev;
	/* Round-robin over slots (index 0 is never used, so key 0 is invalid). */
	idx = 0;
	for (i = 0; i < UROCE_MAX_MR; i++) {
		uint32_t c = (dev->mr_next + i) % UROCE_MAX_MR;

		if (c != 0 && dev->mrs[c] == NULL) {
			idx = c;
			break;
		}
	}
	if (idx == 0) {
		errno = ENOMEM;
		return NULL;
	}
	mr = mr_new(pd, addr, iova, length, access,
		    idx << 8 | next_variant(dev->mr_variant[idx]));
	if (mr == NULL)
		return NULL;
	dev->mr_next = idx + 1;
	dev->mr_variant[idx] = (uint8_t)mr->key;
	/* Publish the filled-in MR to every engine (mr_lookup()'s acquire). */
	__atomic_store_n(&dev->mrs[idx], mr, __ATOMIC_RELEASE);
	return mr;
}

struct uroce_eng_mr *
uroce_eng_mr_rereg(struct uroce_eng_mr *old, struct uroce_eng_pd *pd, void *addr, uint64_t iova,
		   uint64_t length, int access)
{
	struct uroce_eng_mr *mr;
	uint32_t idx;

	if (old == NULL || !mr_args_ok(pd, addr, iova, length, access) || pd->dev != old->dev) {
		errno = EINVAL;
		return NULL;
	}
	idx = KEY_INDEX(old->key);
	if (old->dev->mrs[idx] != old) {
		errno = EINVAL; /* revoked, or replaced already */
		return NULL;
	}
	/* The keys stay, as on rxe and ConnectX. */
	mr = mr_new(pd, addr, iova, length, access, old->key);
	if (mr == NULL)
		return NULL;
	/* One store swaps the whole MR: a lookup sees the old one or the new. */
	__atomic_store_n(&old->dev->mrs[idx], mr, __ATOMIC_RELEASE);
	return mr;
}

void
uroce_eng_mr_revoke(struct uroce_eng_mr *mr)
{
	uint32_t idx = KEY_INDEX(mr->key);

	if (mr->dev->mrs[idx] == mr)
		__atomic_store_n(&mr->dev->mrs[idx], NULL, __ATOMIC_RELEASE);
}

int
uroce_eng_mr_dereg(struct uroce_eng_mr *mr)
{
	if (mr == NULL)
		return -EINVAL;
	uroce_eng_mr_revoke(mr);
	__atomic_fetch_sub(&mr->pd->refs, 1, __ATOMIC_RELAXED);
	free(mr);
	return 0;
}

uint32_t
uroce_eng_mr_lkey(const struct uroce_eng_mr *mr)
{
	return mr->key;
}

uint32_t
uroce_eng_mr_rkey(const struct uroce_eng_mr *mr)
{
	return mr->key;
}

/* IBA 10.6.3.3 (bounds): [va, va + len) inside [iova, iova + length),
 * computed without ever forming va + len, so no wrap can fool it. */
bool
mr_range_ok(const struct uroce_eng_mr *mr, uint64_t va, uint64_t len)
{
	uint64_t off;

	if (va < mr->iova)
		return false;
	off = va - mr->iova;
	if (off > mr->length)
		return false;
	return len <= mr->length - off;
}

bool
uroce_eng_mr_check(const struct uroce_eng_mr *mr, uint64_t va, uint64_t len, int access)
{
	if (mr == NULL)
		return false;
	if ((mr->access & access) != access)
		return false;
	return mr_range_ok(mr, va, len);
}

bool
sge_list_ok(struct uroce_eng *eng, struct uroce_eng_pd *pd, const struct uroce_wr_sge *sge,
	    uint32_t num_sge, int access)
{
	uint32_t i;

	for (i = 0; i < num_sge; i++) {
		struct uroce_eng_mr *mr;

		if (sge[i].length == 0)
			continue;
		mr = mr_lookup(eng, sge[i].lkey);
		if (mr == NULL || mr->pd != pd || !uroce_eng_mr_check(mr, sge[i].addr,
								  sge[i].length, access))
			return false;
	}
	return true;
}

int
sge_copy(struct uroce_eng *eng, struct uroce_eng_pd *pd, const struct uroce_wr_sge *sge,
	 uint32_t num_sge, uint32_t off, void *buf, uint32_t len, bool to_sge)
{
	uint8_t *p = buf;
	uint32_t i;

	for (i = 0; i < num_sge && len > 0; i++) {
		struct uroce_eng_mr *mr;
		uint32_t n;
		uint8_t *m;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = UROCE_MIN(sge[i].length - off, len);
		mr = mr_lookup(eng, sge[i].lkey);
		if (mr == NULL || mr->pd != pd ||
		    !uroce_eng_mr_check(mr, sge[i].addr + off, n,
				    to_sge ? UROCE_ACCESS_LOCAL_WRITE : 0))
			return -EACCES;
		m = mr->addr + (sge[i].addr + off - mr->iova);
		if (to_sge)
			memcpy(m, p, n);
		else
			memcpy(p, m, n);
		p += n;
		len -= n;
		off = 0;
	}
	return len == 0 ? 0 : -ERANGE;
}

const uint8_t *
sge_span(struct uroce_eng *eng, struct uroce_eng_pd *pd, const struct uroce_wr_sge *sge,
	 uint32_t num_sge, uint32_t off, uint32_t len, struct uroce_eng_mr **mrp)
{
	struct uroce_eng_mr *mr;
	uint32_t i;

	for (i = 0; i < num_sge && off >= sge[i].length; i++)
		off -= sge[i].length;
	if (i == num_sge || len > sge[i].length - off)
		return NULL;
	mr = mr_lookup(eng, sge[i].lkey);
	if (mr == NULL || mr->pd != pd || !uroce_eng_mr_check(mr, sge[i].addr + off, len, 0))
		return NULL;
	*mrp = mr;
	return mr->addr + (sge[i].addr + off - mr->iova);
}

void
uroce_eng_mr_set_zc_ref(struct uroce_eng_mr *mr, uint32_t *ref)
{
	if (mr != NULL)
		mr->zc_ref = ref;
}

void
uroce_eng_zc_mem_release(const struct uroce_eng_zc *zc)
{
	/* Release: what the device read happened before the memory may go. */
	if (zc != NULL && zc->mem_ref != NULL)
		__atomic_fetch_sub(zc->mem_ref, 1, __ATOMIC_RELEASE);
}
