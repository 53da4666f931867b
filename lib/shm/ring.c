/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Single-producer/single-consumer rings over shared memory.
 *
 * Each side keeps its own index in private memory (r->head) and only ever
 * stores it into the shared header; it never reads it back, so a peer that
 * scribbles on the header cannot move our index. The peer's index is loaded
 * with acquire ordering and accepted only if it is at most r->size away from
 * ours in the right direction; any other value marks the ring corrupt
 * (sticky) and is counted in r->bad_index.
 */

#include <assert.h>
#include <errno.h>
#include <string.h>

#include <uroce_common.h>

#include "shm_internal.h"

int
uroce_shm_version_check(uint16_t peer_major, uint16_t peer_minor)
{
	/* Minors of one major interoperate: a newer minor only adds message
	 * types and flags that the older side refuses one by one. */
	(void)peer_minor;
	return peer_major == UROCE_SHM_ABI_MAJOR ? 0 : -EPROTONOSUPPORT;
}

static bool
geometry_ok(uint32_t size, uint32_t entry_size)
{
	if (size == 0 || size > UROCE_SHM_RING_MAX_SIZE || (size & (size - 1)) != 0)
		return false;
	if (entry_size < 8 || entry_size > UROCE_SHM_RING_MAX_ENTRY || (entry_size & 7) != 0)
		return false;
	return true;
}

size_t
uroce_shm_ring_mem_size(uint32_t size, uint32_t entry_size)
{
	size_t bytes;

	if (!geometry_ok(size, entry_size))
		return 0;
	/* At most 2^24 * 4096 = 2^36 bytes: no overflow on 64-bit size_t. */
	bytes = sizeof(struct uroce_shm_ring_hdr) + (size_t)size * entry_size;
	return (bytes + UROCE_SHM_CACHE_LINE - 1) & ~(size_t)(UROCE_SHM_CACHE_LINE - 1);
}

static int
check_open_args(const struct uroce_shm_ring *r, const void *mem, enum uroce_shm_ring_role role,
		uint32_t flags)
{
	if (r == NULL || mem == NULL || ((uintptr_t)mem & (UROCE_SHM_CACHE_LINE - 1)) != 0)
		return -EINVAL;
	if (role != UROCE_SHM_RING_PRODUCER && role != UROCE_SHM_RING_CONSUMER)
		return -EINVAL;
	if ((flags & ~UROCE_SHM_RING_F_UNTRUSTED) != 0)
		return -EINVAL;
	return 0;
}

static void
fill_handle(struct uroce_shm_ring *r, struct uroce_shm_ring_hdr *hdr, uint32_t size,
	    uint32_t entry_size, uint32_t head, uint32_t peer, enum uroce_shm_ring_role role,
	    uint32_t flags)
{
	memset(r, 0, sizeof(*r));
	r->hdr = hdr;
	r->entries = (uint8_t *)hdr + sizeof(*hdr);
	r->size = size;
	r->mask = size - 1;
	r->entry_size = entry_size;
	r->head = head;
	r->peer = peer;
	r->flags = flags;
	r->role = (uint8_t)role;
}

int
uroce_shm_ring_init(struct uroce_shm_ring *r, void *mem, size_t len, uint32_t size,
		    uint32_t entry_size, uint32_t start_index, enum uroce_shm_ring_role role,
		    uint32_t flags)
{
	struct uroce_shm_ring_hdr *hdr = mem;
	size_t need = uroce_shm_ring_mem_size(size, entry_size);
	int rc;

	rc = check_open_args(r, mem, role, flags);
	if (rc != 0)
		return rc;
	if (need == 0)
		return -EINVAL;
	if (len < need)
		return -ENOSPC;

	memset(hdr, 0, sizeof(*hdr));
	hdr->magic = UROCE_SHM_RING_MAGIC;
	hdr->abi_major = UROCE_SHM_ABI_MAJOR;
	hdr->abi_minor = UROCE_SHM_ABI_MINOR;
	hdr->size = size;
	hdr->entry_size = entry_size;
	hdr->entries_offset = sizeof(*hdr);
	/* Both indices: relaxed. Nobody else sees the segment yet; handing the
	 * fd to the peer (sendmsg) orders these stores before its first load. */
	atomic_store_explicit(SHM_A32(&hdr->prod), start_index, memory_order_relaxed);
	atomic_store_explicit(SHM_A32(&hdr->cons), start_index, memory_order_relaxed);
	atomic_store_explicit(SHM_A64(&hdr->cq_arm), 0, memory_order_relaxed);
	fill_handle(r, hdr, size, entry_size, start_index, start_index, role, flags);
	return 0;
}

int
uroce_shm_ring_attach(struct uroce_shm_ring *r, void *mem, size_t len,
		      enum uroce_shm_ring_role role, uint32_t flags)
{
	struct uroce_shm_ring_hdr *hdr = mem;
	uint32_t size, entry_size, prod, cons;
	size_t need;
	int rc;

	rc = check_open_args(r, mem, role, flags);
	if (rc != 0)
		return rc;
	if (len < sizeof(*hdr))
		return -ENOSPC;
	/* Line 0 is written once by the creator before the fd is passed, so
	 * plain loads are enough; each value is copied once, then checked. */
	if (hdr->magic != UROCE_SHM_RING_MAGIC)
		return -EPROTO;
	if (uroce_shm_version_check(hdr->abi_major, hdr->abi_minor) != 0)
		return -EPROTONOSUPPORT;
	size = hdr->size;
	entry_size = hdr->entry_size;
	if (!geometry_ok(size, entry_size) || hdr->entries_offset != sizeof(*hdr))
		return -EPROTO;
	need = uroce_shm_ring_mem_size(size, entry_size);
	if (len < need)
		return -ENOSPC;
	/* prod: owner is the producer; cons: owner is the consumer. Acquire on
	 * both so that, if the peer already worked on the ring, the entries
	 * it published (or the slots it freed) are ordered before our use. */
	prod = atomic_load_explicit(SHM_A32(&hdr->prod), memory_order_acquire);
	cons = atomic_load_explicit(SHM_A32(&hdr->cons), memory_order_acquire);
	if (prod - cons > size)
		return -EIO;
	if (role == UROCE_SHM_RING_PRODUCER)
		fill_handle(r, hdr, size, entry_size, prod, cons, role, flags);
	else
		fill_handle(r, hdr, size, entry_size, cons, prod, role, flags);
	return 0;
}

static void
mark_corrupt(struct uroce_shm_ring *r)
{
	r->corrupt = 1;
	r->bad_index++;
}

/* Producer side: free slots, refreshing the consumer index only when the
 * cached one does not leave room for want entries. */
static uint32_t
prod_free(struct uroce_shm_ring *r, uint32_t want)
{
	uint32_t free_slots = r->size - (r->head - r->peer);
	uint32_t cons;

	if (free_slots >= want)
		return free_slots;
	/* cons is owned by the consumer. Acquire pairs with the consumer's
	 * release store in cons_publish(): its reads of the slots it freed
	 * happen before our writes that reuse them. */
	cons = atomic_load_explicit(SHM_A32(&r->hdr->cons), memory_order_acquire);
	/* Valid only if the consumer is at most size behind us and not ahead. */
	if (unlikely(r->head - cons > r->size)) {
		mark_corrupt(r);
		return 0;
	}
	r->peer = cons;
	return r->size - (r->head - cons);
}

/* Consumer side: published entries, refreshing the producer index only when
 * the cached one does not cover want entries. */
static uint32_t
cons_avail(struct uroce_shm_ring *r, uint32_t want)
{
	uint32_t avail = r->peer - r->head;
	uint32_t prod;

	if (avail >= want)
		return avail;
	/* prod is owned by the producer. Acquire pairs with the producer's
	 * release store in prod_publish(): the entries it wrote before moving
	 * prod are visible to the reads that follow. */
	prod = atomic_load_explicit(SHM_A32(&r->hdr->prod), memory_order_acquire);
	/* Valid only if at most size ahead of our index (behind wraps to huge). */
	if (unlikely(prod - r->head > r->size)) {
		mark_corrupt(r);
		return 0;
	}
	r->peer = prod;
	return prod - r->head;
}

static void
prod_publish(struct uroce_shm_ring *r, uint32_t n)
{
	r->head += n;
	/* prod is owned by us, the producer. Release: the entry bytes written
	 * before become visible no later than the new index. */
	atomic_store_explicit(SHM_A32(&r->hdr->prod), r->head, memory_order_release);
}

static void
cons_publish(struct uroce_shm_ring *r, uint32_t n)
{
	r->head += n;
	/* cons is owned by us, the consumer. Release: our reads (copies) of the
	 * freed slots complete before the producer can see them as free. */
	atomic_store_explicit(SHM_A32(&r->hdr->cons), r->head, memory_order_release);
}

uint32_t
uroce_shm_ring_free_count(struct uroce_shm_ring *r)
{
	if (r->role != UROCE_SHM_RING_PRODUCER || r->corrupt)
		return 0;
	return prod_free(r, r->size);
}

uint32_t
uroce_shm_ring_used_count(struct uroce_shm_ring *r)
{
	if (r->role != UROCE_SHM_RING_CONSUMER || r->corrupt)
		return 0;
	return cons_avail(r, r->size);
}

uint32_t
uroce_shm_ring_enqueue_burst(struct uroce_shm_ring *r, const void *src, uint32_t n)
{
	uint32_t room, idx, first;
	const uint8_t *s = src;

	if (r->role != UROCE_SHM_RING_PRODUCER || r->corrupt || n == 0)
		return 0;
	room = prod_free(r, n);
	if (n > room)
		n = room;
	if (n == 0)
		return 0;
	idx = r->head & r->mask;
	first = UROCE_MIN(n, r->size - idx);
	memcpy(r->entries + (size_t)idx * r->entry_size, s, (size_t)first * r->entry_size);
	if (first < n)
		memcpy(r->entries, s + (size_t)first * r->entry_size,
		       (size_t)(n - first) * r->entry_size);
	prod_publish(r, n);
	return n;
}

uint32_t
uroce_shm_ring_dequeue_burst(struct uroce_shm_ring *r, void *dst, uint32_t n)
{
	uint32_t avail, idx, first;
	uint8_t *d = dst;

	if (r->role != UROCE_SHM_RING_CONSUMER || r->corrupt || n == 0)
		return 0;
	avail = cons_avail(r, n);
	if (n > avail)
		n = avail;
	if (n == 0)
		return 0;
	/* Copy out first: the caller validates the copy, which the peer can
	 * no longer change. */
	idx = r->head & r->mask;
	first = UROCE_MIN(n, r->size - idx);
	memcpy(d, r->entries + (size_t)idx * r->entry_size, (size_t)first * r->entry_size);
	if (first < n)
		memcpy(d + (size_t)first * r->entry_size, r->entries,
		       (size_t)(n - first) * r->entry_size);
	cons_publish(r, n);
	return n;
}

uint32_t
uroce_shm_ring_prod_reserve(struct uroce_shm_ring *r, uint32_t n)
{
	uint32_t room;

	if (r->role != UROCE_SHM_RING_PRODUCER || r->corrupt || n == 0)
		return 0;
	room = prod_free(r, n);
	return UROCE_MIN(n, room);
}

void *
uroce_shm_ring_prod_slot(struct uroce_shm_ring *r, uint32_t i)
{
	return r->entries + (size_t)((r->head + i) & r->mask) * r->entry_size;
}

void
uroce_shm_ring_prod_commit(struct uroce_shm_ring *r, uint32_t n)
{
	/* Invariant of the caller (our own process): n <= reserved. */
	assert(r->role == UROCE_SHM_RING_PRODUCER);
	assert(r->head + n - r->peer <= r->size);
	prod_publish(r, n);
}

uint32_t
uroce_shm_ring_cons_peek(struct uroce_shm_ring *r, uint32_t n)
{
	uint32_t avail;

	if (r->role != UROCE_SHM_RING_CONSUMER || r->corrupt || n == 0 ||
	    (r->flags & UROCE_SHM_RING_F_UNTRUSTED) != 0)
		return 0;
	avail = cons_avail(r, n);
	return UROCE_MIN(n, avail);
}

uint32_t
uroce_shm_ring_untrusted_peek(struct uroce_shm_ring *r, uint32_t n)
{
	uint32_t avail;

	if (r->role != UROCE_SHM_RING_CONSUMER || r->corrupt || n == 0)
		return 0;
	avail = cons_avail(r, n);
	return UROCE_MIN(n, avail);
}

const void *
uroce_shm_ring_cons_slot(struct uroce_shm_ring *r, uint32_t i)
{
	return r->entries + (size_t)((r->head + i) & r->mask) * r->entry_size;
}

void
uroce_shm_ring_cons_release(struct uroce_shm_ring *r, uint32_t n)
{
	/* Invariant of the caller: n <= peeked, so within the validated prod. */
	assert(r->role == UROCE_SHM_RING_CONSUMER);
	assert(r->peer - (r->head + n) <= r->size);
	cons_publish(r, n);
}
