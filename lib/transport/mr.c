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
	/* IBA 1.5 A19: no MR of uroce is persistent memory, so none may be
	 * flushed to persistence (as rxe refuses it outside pmem). */
	const int all = UROCE_ACCESS_FLAGS_ALL & ~UROCE_ACCESS_FLUSH_PERSISTENT;

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

/* A key object of @p pd under @p key, not yet published; NULL with errno
 * ENOMEM. */
static struct uroce_eng_mr *
key_obj_alloc(struct uroce_eng_pd *pd, uint32_t key)
{
	struct uroce_eng_mr *mr = calloc(1, sizeof(*mr));

	if (mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	mr->dev = pd->dev;
	mr->pd = pd;
	mr->key = key;
	return mr;
}

/* A new key object of @p pd in a free slot of the key table, not yet
 * published; NULL with errno ENOMEM. */
static struct uroce_eng_mr *
key_obj_new(struct uroce_eng_pd *pd)
{
	struct uroce_eng_dev *dev = pd->dev;
	struct uroce_eng_mr *mr;
	uint32_t i, idx = 0;
	uint8_t variant;

	/* Round-robin over slots (index 0 is never used, so key 0 is invalid). */
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
	variant = next_variant(dev->mr_variant[idx]);
	mr = key_obj_alloc(pd, idx << 8 | variant);
	if (mr == NULL)
		return NULL;
	dev->mr_next = idx + 1;
	dev->mr_variant[idx] = variant;
	return mr;
}

/* Publish the filled-in object to every engine (mr_lookup()'s acquire): one
 * store, so a lookup sees the old object of the slot or the new. */
static void
key_obj_publish(struct uroce_eng_mr *mr)
{
	__atomic_fetch_add(&mr->pd->refs, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&mr->dev->mrs[KEY_INDEX(mr->key)], mr, __ATOMIC_RELEASE);
}

static void
mr_fill(struct uroce_eng_mr *mr, void *addr, uint64_t iova, uint64_t length, int access)
{
	mr->addr = addr;
	mr->iova = iova;
	mr->length = length;
	mr->access = access;
}

struct uroce_eng_mr *
uroce_eng_mr_reg(struct uroce_eng_pd *pd, void *addr, uint64_t iova, uint64_t length, int access)
{
	struct uroce_eng_mr *mr;

	if (!mr_args_ok(pd, addr, iova, length, access)) {
		errno = EINVAL;
		return NULL;
	}
	mr = key_obj_new(pd);
	if (mr == NULL)
		return NULL;
	mr_fill(mr, addr, iova, length, access);
	key_obj_publish(mr);
	return mr;
}

struct uroce_eng_mr *
uroce_eng_mr_rereg(struct uroce_eng_mr *old, struct uroce_eng_pd *pd, void *addr, uint64_t iova,
		   uint64_t length, int access)
{
	struct uroce_eng_mr *mr;

	if (old == NULL || old->type != 0 || !mr_args_ok(pd, addr, iova, length, access) ||
	    pd->dev != old->dev) {
		errno = EINVAL;
		return NULL;
	}
	if (old->dev->mrs[KEY_INDEX(old->key)] != old) {
		errno = EINVAL; /* revoked, or replaced already */
		return NULL;
	}
	/* Windows bound to it name it by key: they would grant the new range. */
	if (__atomic_load_n(&old->mw_binds, __ATOMIC_RELAXED) != 0) {
		errno = EBUSY;
		return NULL;
	}
	/* The keys stay, as on rxe and ConnectX. */
	mr = key_obj_alloc(pd, old->key);
	if (mr == NULL)
		return NULL;
	mr_fill(mr, addr, iova, length, access);
	key_obj_publish(mr);
	return mr;
}

struct uroce_eng_mr *
uroce_eng_mw_alloc(struct uroce_eng_pd *pd, int type)
{
	struct uroce_eng_mr *mw;

	if (pd == NULL || (type != UROCE_MW_TYPE_1 && type != UROCE_MW_TYPE_2)) {
		errno = EINVAL;
		return NULL;
	}
	/* IBA 10.6.7.1: a type 1 window is created valid but bound to nothing,
	 * a type 2 window FREE; either way it grants nothing yet. */
	mw = key_obj_new(pd);
	if (mw == NULL)
		return NULL;
	mw->type = (uint8_t)type;
	key_obj_publish(mw);
	return mw;
}

/* Count a window bound to (@p d 1) or let go of (-1) the MR of @p key, which
 * may already be gone: the count only makes deregistration refuse
 * (uroce_eng_mr_busy()), a window never reaches memory through it. */
static void
mr_binds_add(struct uroce_eng_dev *dev, uint32_t key, int d)
{
	struct uroce_eng_mr *mr = key_obj(dev, key);

	if (mr != NULL && mr->type == 0 && mr->key == key)
		__atomic_fetch_add(&mr->mw_binds, (uint32_t)d, __ATOMIC_RELAXED);
}

void
uroce_eng_mr_revoke(struct uroce_eng_mr *mr)
{
	/* A window's variant byte changes with its binds; its index does not. */
	uint32_t idx = KEY_INDEX(__atomic_load_n(&mr->key, __ATOMIC_RELAXED));

	if (mr->dev->mrs[idx] == mr)
		__atomic_store_n(&mr->dev->mrs[idx], NULL, __ATOMIC_RELEASE);
}

int
uroce_eng_mr_dereg(struct uroce_eng_mr *mr)
{
	if (mr == NULL)
		return -EINVAL;
	uroce_eng_mr_revoke(mr);
	/* A window still bound lets go of its MR; nothing resolves it now. */
	if (mr->type != 0 && mr->mw_mr_key != 0)
		mr_binds_add(mr->dev, mr->mw_mr_key, -1);
	__atomic_fetch_sub(&mr->pd->refs, 1, __ATOMIC_RELAXED);
	free(mr);
	return 0;
}

bool
uroce_eng_mr_busy(const struct uroce_eng_mr *mr)
{
	return mr != NULL && __atomic_load_n(&mr->mw_binds, __ATOMIC_RELAXED) != 0;
}

uint32_t
uroce_eng_mr_lkey(const struct uroce_eng_mr *mr)
{
	return mr->type == 0 ? mr->key : 0;
}

uint32_t
uroce_eng_mr_rkey(const struct uroce_eng_mr *mr)
{
	return __atomic_load_n(&mr->key, __ATOMIC_RELAXED);
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

static int
sge_xfer(struct uroce_eng *eng, struct uroce_eng_pd *pd, const struct uroce_wr_sge *sge,
	 uint32_t num_sge, uint32_t off, uint8_t *p, uint32_t len, bool to_sge, uint32_t *crc)
{
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
		if (crc != NULL)
			*crc = uroce_crc32_copy(*crc, m, p, n);
		else if (to_sge)
			uroce_copy_small(m, p, n);
		else
			uroce_copy_small(p, m, n);
		p += n;
		len -= n;
		off = 0;
	}
	return len == 0 ? 0 : -ERANGE;
}

void
sge_prefetch_dst(struct uroce_eng *eng, const struct uroce_wr_sge *sge, uint32_t len)
{
	struct uroce_eng_mr *mr;
	const uint8_t *m;
	uint32_t off;

	len = UROCE_MIN(len, sge->length);
	if (len == 0)
		return;
	mr = mr_lookup(eng, sge->lkey);
	if (mr == NULL || !mr_range_ok(mr, sge->addr, len))
		return;
	m = mr->addr + (sge->addr - mr->iova);
	for (off = 0; off < len; off += 64)
		__builtin_prefetch(m + off, 1);
}

int
sge_copy(struct uroce_eng *eng, struct uroce_eng_pd *pd, const struct uroce_wr_sge *sge,
	 uint32_t num_sge, uint32_t off, void *buf, uint32_t len, bool to_sge)
{
	return sge_xfer(eng, pd, sge, num_sge, off, buf, len, to_sge, NULL);
}

int
sge_place(struct uroce_eng_qp *qp, struct uroce_eng_pd *pd, const struct uroce_wr_sge *sge,
	  uint32_t num_sge, uint32_t off, const struct uroce_pkt *pkt, bool *late)
{
	uint32_t crc = pkt->icrc_seed;
	int rc = sge_xfer(qp->eng, pd, sge, num_sge, off, (uint8_t *)(uintptr_t)pkt->payload,
			  pkt->paylen, true, *late ? &crc : NULL);

	if (*late) {
		*late = false;
		/* A copy cut short has only part of the CRC: check in place. */
		if (!qp_icrc_late_ok(qp, pkt, rc == 0 ? &crc : NULL))
			return -EBADMSG;
	}
	return rc;
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

/* ---- memory windows (IBA 10.6.7) ---------------------------------------- */

/* A window's binding, as one reader or writer sees it whole. */
struct mw_view {
	uint32_t key;
	uint32_t mr_key;     /* 0: unbound / FREE */
	uint32_t qpn;
	uint32_t qp_gen;
	uint64_t iova;
	uint64_t length;
	int access;
};

#define MW_LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define MW_ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* The binding of @p mw, read without a lock: retried while a writer is in
 * it (odd sequence) or finished one meanwhile (sequence moved). */
static void
mw_read(const struct uroce_eng_mr *mw, struct mw_view *v)
{
	uint32_t s1, s2;

	do {
		s1 = __atomic_load_n(&mw->mw_seq, __ATOMIC_ACQUIRE);
		v->key = MW_LD(mw->key);
		v->mr_key = MW_LD(mw->mw_mr_key);
		v->qpn = MW_LD(mw->mw_qpn);
		v->qp_gen = MW_LD(mw->mw_qp_gen);
		v->iova = MW_LD(mw->iova);
		v->length = MW_LD(mw->length);
		v->access = MW_LD(mw->access);
		/* The loads above happen before the second look at the sequence. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&mw->mw_seq, __ATOMIC_RELAXED);
	} while ((s1 & 1) != 0 || s1 != s2);
}

/* Become the one writer of @p mw's binding (workers of QPs of one PD may
 * bind or invalidate the same window at once) and read it; returns the odd
 * sequence value for mw_write_end(). A writer holds it for a few stores. */
static uint32_t
mw_write_begin(struct uroce_eng_mr *mw, struct mw_view *v)
{
	uint32_t s = __atomic_load_n(&mw->mw_seq, __ATOMIC_RELAXED);

	while ((s & 1) != 0 || !__atomic_compare_exchange_n(&mw->mw_seq, &s, s + 1, false,
							    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		s = __atomic_load_n(&mw->mw_seq, __ATOMIC_RELAXED);
	/* Readers that see a store below also see the odd sequence. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	v->key = mw->key;
	v->mr_key = mw->mw_mr_key;
	v->qpn = mw->mw_qpn;
	v->qp_gen = mw->mw_qp_gen;
	v->iova = mw->iova;
	v->length = mw->length;
	v->access = mw->access;
	return s + 1;
}

/* Store @p v (NULL: leave the binding as it was) and let readers in. */
static void
mw_write_end(struct uroce_eng_mr *mw, uint32_t seq, const struct mw_view *v)
{
	if (v != NULL) {
		MW_ST(mw->key, v->key);
		MW_ST(mw->mw_mr_key, v->mr_key);
		MW_ST(mw->mw_qpn, v->qpn);
		MW_ST(mw->mw_qp_gen, v->qp_gen);
		MW_ST(mw->iova, v->iova);
		MW_ST(mw->length, v->length);
		MW_ST(mw->access, v->access);
	}
	__atomic_store_n(&mw->mw_seq, seq + 1, __ATOMIC_RELEASE);
}

/* The window in the key table slot of @p key, whatever its variant. */
static struct uroce_eng_mr *
mw_slot(struct uroce_eng *eng, uint32_t key)
{
	struct uroce_eng_mr *mw = key_obj(eng->dev, key);

	return mw != NULL && mw->type != 0 ? mw : NULL;
}

struct uroce_eng_mr *
rkey_lookup(struct uroce_eng_qp *qp, uint32_t rkey, struct uroce_eng_mr *snap)
{
	struct uroce_eng_mr *mw = mw_slot(qp->eng, rkey), *mr;
	struct mw_view v;

	if (mw == NULL)
		return mr_lookup(qp->eng, rkey);
	mw_read(mw, &v);
	/* IBA 10.6.7.2: a window grants access only while bound and only to
	 * its current key (an older variant, an unbound type 1 or an
	 * invalidated type 2 window: remote access error, C9-88). */
	if (v.key != rkey || v.mr_key == 0)
		return NULL;
	/* IBA 10.6.7.2.4 (type 2B): only through the QP that bound it, in the
	 * incarnation that bound it. */
	if (mw->type == UROCE_MW_TYPE_2 && (v.qpn != qp->qpn || v.qp_gen != qp->zc_gen))
		return NULL;
	/* By key: an MR deregistered since leaves the window dead (the MR's
	 * memory is safe to use while this worker holds the pointer, as for
	 * any MR). */
	mr = mr_lookup(qp->eng, v.mr_key);
	if (mr == NULL || !mr_range_ok(mr, v.iova, v.length))
		return NULL;
	memset(snap, 0, sizeof(*snap));
	snap->dev = mw->dev;
	snap->pd = mw->pd;
	snap->addr = mr->addr + (v.iova - mr->iova);
	snap->iova = v.iova;
	snap->length = v.length;
	snap->access = v.access;
	snap->key = rkey;
	snap->zc_ref = mr->zc_ref;
	snap->type = mw->type;
	return snap;
}

/* Bind @p mw (IBA 10.6.7.3). The MR is published and stays so while this
 * worker holds it; its bind count is taken before the window shows it. */
static enum uroce_wc_status
mw_bind(struct uroce_eng_qp *qp, struct uroce_eng_mr *mw, const struct uroce_wr_send *wr)
{
	const int remote = UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_WRITE |
			   UROCE_ACCESS_REMOTE_ATOMIC;
	uint64_t len = wr->compare_add, va = wr->remote_addr;
	int access = (int)wr->swap & remote;
	struct uroce_eng_mr *mr = NULL;
	struct mw_view v;
	uint32_t seq, old;

	/* Remote rights; LOCAL_WRITE means nothing for a window and is ignored
	 * (verbs consumers pass it, rxe takes it). Zero-based windows are not
	 * offered (o10-36.2.2 for type 1; uroce has no zero-based memory). */
	if ((wr->swap & ~(uint64_t)(remote | UROCE_ACCESS_LOCAL_WRITE)) != 0)
		return UROCE_WC_MW_BIND_ERR;
	if (len > 0) {
		mr = mr_lookup(qp->eng, wr->imm);
		/* C10-73: the MR allows binding; the same PD as the window. */
		if (mr == NULL || mr->pd != mw->pd || !(mr->access & UROCE_ACCESS_MW_BIND))
			return UROCE_WC_MW_BIND_ERR;
		/* C10-74: remote write or atomic rights need local write on the MR. */
		if ((access & (UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_ATOMIC)) &&
		    !(mr->access & UROCE_ACCESS_LOCAL_WRITE))
			return UROCE_WC_MW_BIND_ERR;
		/* C10-75: the window lies inside the MR. */
		if (!mr_range_ok(mr, va, len))
			return UROCE_WC_MW_BIND_ERR;
		/* IBA 9.4.5, as uroce_eng_mr_reg(): an 8-aligned VA must name an
		 * 8-aligned word for an atomic to be one CPU instruction. */
		if ((access & UROCE_ACCESS_REMOTE_ATOMIC) &&
		    (((uintptr_t)mr->addr - mr->iova) & 7) != 0)
			return UROCE_WC_MW_BIND_ERR;
	} else if (mw->type == UROCE_MW_TYPE_2) {
		return UROCE_WC_MW_BIND_ERR; /* o10-37.2.40: a type 2 bind has a length */
	}
	seq = mw_write_begin(mw, &v);
	/* o10-37.2.30: a type 2 window is bound only while FREE. */
	if (mw->type == UROCE_MW_TYPE_2 && v.mr_key != 0) {
		mw_write_end(mw, seq, NULL);
		return UROCE_WC_MW_BIND_ERR;
	}
	old = v.mr_key;
	if (mr != NULL)
		__atomic_fetch_add(&mr->mw_binds, 1, __ATOMIC_RELAXED);
	v.key = wr->rkey;
	v.mr_key = mr != NULL ? mr->key : 0;
	v.iova = va;
	v.length = len;
	v.access = access;
	v.qpn = mw->type == UROCE_MW_TYPE_2 ? qp->qpn : 0;
	v.qp_gen = mw->type == UROCE_MW_TYPE_2 ? qp->zc_gen : 0;
	mw_write_end(mw, seq, &v);
	if (old != 0)
		mr_binds_add(mw->dev, old, -1);
	return UROCE_WC_SUCCESS;
}

bool
mw_invalidate(struct uroce_eng_qp *qp, uint32_t rkey, bool check_only)
{
	struct uroce_eng_mr *mw = mw_slot(qp->eng, rkey);
	struct mw_view v;
	uint32_t seq, old;

	/* o10-37.2.26: a type 1 window is never invalidated; an MR neither
	 * (uroce has no fast-registration MRs). A window of another PD is
	 * another consumer's, whatever its key. */
	if (mw == NULL || mw->type != UROCE_MW_TYPE_2 || mw->pd != qp->pd)
		return false;
	if (check_only) {
		mw_read(mw, &v);
		return v.key == rkey && v.mr_key != 0;
	}
	seq = mw_write_begin(mw, &v);
	if (v.key != rkey || v.mr_key == 0) {
		mw_write_end(mw, seq, NULL);
		return false;
	}
	old = v.mr_key;
	v.mr_key = 0;
	v.length = 0;
	v.access = 0;
	mw_write_end(mw, seq, &v);
	mr_binds_add(mw->dev, old, -1);
	return true;
}

enum uroce_wc_status
mw_local_op(struct uroce_eng_qp *qp, const struct uroce_wr_send *wr)
{
	struct uroce_eng_mr *mw;

	if (wr->opcode == UROCE_WR_LOCAL_INV)
		return mw_invalidate(qp, wr->imm, false) ? UROCE_WC_SUCCESS :
							   UROCE_WC_LOC_QP_OP_ERR;
	mw = mw_slot(qp->eng, wr->rkey);
	/* C10-72: a window of the QP's PD. */
	if (mw == NULL || mw->pd != qp->pd)
		return UROCE_WC_MW_BIND_ERR;
	return mw_bind(qp, mw, wr);
}
