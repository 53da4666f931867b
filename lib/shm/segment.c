/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Shared segments: memfds (hugetlbfs-backed when asked and available) that
 * are sealed against shrinking and growing before they are shared, so that
 * the peer that maps one can never take a SIGBUS from a truncation.
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uroce_common.h>

#include "shm_internal.h"

#define SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
#define QP_ALIGN 4096u

size_t
uroce_shm_segment_round(size_t size, size_t page_size)
{
	if (size == 0 || page_size == 0 || (page_size & (page_size - 1)) != 0)
		return 0;
	if (size > SIZE_MAX - (page_size - 1))
		return 0;
	return (size + page_size - 1) & ~(page_size - 1);
}

static size_t
base_page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (size_t)ps : 4096;
}

/* Create, size, seal and map one memfd; returns 0 or -errno, cleans up. */
static int
create_one(struct uroce_shm_segment *seg, const char *name, size_t size, bool huge)
{
	unsigned int mflags = MFD_CLOEXEC | MFD_ALLOW_SEALING | (huge ? MFD_HUGETLB : 0);
	struct stat st;
	size_t page, bytes;
	void *addr;
	int fd, rc;

	fd = memfd_create(name, mflags);
	if (fd < 0)
		return -errno;
	page = base_page_size();
	if (huge) {
		/* A hugetlbfs file reports its page size as the block size. */
		if (fstat(fd, &st) != 0) {
			rc = -errno;
			goto err_close;
		}
		page = (size_t)st.st_blksize;
	}
	bytes = uroce_shm_segment_round(size, page);
	if (bytes == 0 || bytes > (size_t)INT64_MAX) {
		rc = -EOVERFLOW;
		goto err_close;
	}
	if (ftruncate(fd, (off_t)bytes) != 0) {
		rc = -errno;
		goto err_close;
	}
	if (fcntl(fd, F_ADD_SEALS, SEALS) != 0) {
		rc = -errno;
		goto err_close;
	}
	/* For hugetlbfs, MAP_SHARED reserves the huge pages here, so a
	 * shortage fails now (ENOMEM) rather than as a SIGBUS later. */
	addr = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (addr == MAP_FAILED) {
		rc = -errno;
		goto err_close;
	}
	seg->fd = fd;
	seg->addr = addr;
	seg->size = bytes;
	seg->page_size = page;
	seg->flags = huge ? UROCE_SHM_SEG_HUGETLB : 0;
	return 0;

err_close:
	close(fd);
	return rc;
}

int
uroce_shm_segment_create(struct uroce_shm_segment *seg, const char *name, size_t size,
			 uint32_t flags)
{
	int rc;

	if (seg == NULL || size == 0 || (flags & ~UROCE_SHM_SEG_WANT_HUGETLB) != 0)
		return -EINVAL;
	memset(seg, 0, sizeof(*seg));
	seg->fd = -1;
	if (name == NULL)
		name = "uroce";
	if (uroce_shm_segment_round(size, base_page_size()) == 0)
		return -EOVERFLOW;
	if ((flags & UROCE_SHM_SEG_WANT_HUGETLB) != 0) {
		rc = create_one(seg, name, size, true);
		if (rc == 0)
			return 0;
		/* No hugetlbfs, no free huge pages, or too large: fall back;
		 * seg->flags tells the caller it got small pages. */
	}
	return create_one(seg, name, size, false);
}

int
uroce_shm_segment_map(struct uroce_shm_segment *seg, int fd, size_t min_size)
{
	struct stat st;
	void *addr;
	int seals;

	if (seg == NULL || min_size == 0)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0)
		return errno == EINVAL ? -EPERM : -errno; /* EINVAL: not sealable */
	if ((seals & F_SEAL_SHRINK) == 0)
		return -EPERM;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (st.st_size < 0 || (uint64_t)st.st_size < min_size)
		return -ENOSPC;
	/* Map exactly what the file holds; the shrink seal keeps it so. */
	addr = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (addr == MAP_FAILED)
		return -errno;
	seg->fd = fd;
	seg->addr = addr;
	seg->size = (size_t)st.st_size;
	seg->page_size = (size_t)st.st_blksize;
	/* A hugetlbfs file reports its huge page size as the block size. */
	seg->flags = seg->page_size > base_page_size() ? UROCE_SHM_SEG_HUGETLB : 0;
	return 0;
}

void
uroce_shm_segment_unmap(struct uroce_shm_segment *seg)
{
	if (seg == NULL)
		return;
	if (seg->addr != NULL && seg->size != 0)
		munmap(seg->addr, seg->size);
	if (seg->fd >= 0)
		close(seg->fd);
	seg->addr = NULL;
	seg->size = 0;
	seg->fd = -1;
}

int
uroce_shm_qp_layout(uint32_t sq_size, uint32_t rq_size, struct uroce_shm_qp_layout *out)
{
	size_t sq, rq = 0, off;

	if (out == NULL)
		return -EINVAL;
	sq = uroce_shm_ring_mem_size(sq_size, sizeof(struct uroce_shm_send_wqe));
	if (sq == 0)
		return -EINVAL;
	if (rq_size != 0) {
		rq = uroce_shm_ring_mem_size(rq_size, sizeof(struct uroce_shm_recv_wqe));
		if (rq == 0)
			return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	out->sq_offset = 0;
	out->sq_bytes = sq;
	off = uroce_shm_segment_round(sq, QP_ALIGN);
	if (rq != 0) {
		if (off > UINT32_MAX)
			return -EINVAL;
		out->rq_offset = (uint32_t)off;
		out->rq_bytes = rq;
		off += uroce_shm_segment_round(rq, QP_ALIGN);
	}
	out->total = off;
	return 0;
}
