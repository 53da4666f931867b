/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Re-backing ordinary memory for uroce_reg_mr(). The daemon can reach only
 * memory it has mapped, so a page-aligned range of private anonymous memory
 * (malloc/aligned_alloc, anonymous mmap, a thread's stack) is moved into a
 * sealed memfd in place: the contents are copied into the memfd, which is
 * then mapped MAP_SHARED|MAP_FIXED over the range. MAP_FIXED replaces the old
 * pages in one step, so the range is never unmapped and the application's
 * pointers stay valid. When the last MR on the range goes, the reverse move
 * (a private anonymous copy moved over it with mremap) makes it ordinary
 * memory again. doc/verbs.md lists what is supported and the limits.
 *
 * Re-backed ranges belong to the process, not to a context: one table of
 * regions under one lock, each with a hold per context (the context's segment
 * handle and how many of its MRs use the region).
 */

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "uroce_common.h"
#include "uroce_verbs.h"

#include "verbs_internal.h"

/* No F_SEAL_GROW: a region grows at its end (region_grow). The daemon needs
 * only the shrink seal: it maps what the file holds when the segment comes. */
#define SEALS (F_SEAL_SHRINK | F_SEAL_SEAL)

/* One mapping (VMA) of the original range: what to restore on it. */
struct piece {
	uintptr_t start;
	uintptr_t end;
	int prot;
	bool locked;
};

/*
 * One context's use of a region: one daemon segment of the region's first
 * seg_len bytes. A context has one hold per size the region had when it
 * needed one; an MR goes to the smallest hold that covers it.
 */
struct hold {
	struct hold *next;
	struct uroce_context *c;
	uint32_t seg_handle;
	uint32_t mrs;
	size_t seg_len;
};

struct region {
	struct region *next;
	uintptr_t addr;
	size_t len;
	size_t file_len; /* >= len: a failed growth leaves the file longer */
	int fd;
	dev_t dev;
	ino_t ino;
	struct piece *pieces;
	unsigned int n_pieces;
	struct hold *holds;
};

static pthread_mutex_t rbk_lock = PTHREAD_MUTEX_INITIALIZER;
static struct region *regions; /* under rbk_lock */

static size_t
page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (size_t)ps : 4096;
}

/* ------------------------------------------------------------------------ */
/* The process's mappings (/proc/self/smaps)                                 */
/* ------------------------------------------------------------------------ */

enum walk_mode {
	WALK_PRIVATE, /* every mapping must be re-backable; collect pieces */
	WALK_OURS,    /* every mapping must be the region's memfd */
};

struct vma {
	uintptr_t start;
	uintptr_t end;
	char perms[8];
	unsigned long long offset;
	unsigned int dev_major;
	unsigned int dev_minor;
	unsigned long inode;
	char path[64];
	char flags[128]; /* VmFlags: two-letter names separated by spaces */
};

struct walk {
	enum walk_mode mode;
	uintptr_t start;
	uintptr_t end;
	uintptr_t cursor; /* covered up to here */
	const struct region *ours;
	struct piece *pieces;
	unsigned int n_pieces;
	unsigned int cap;
	int rc;
	bool done;
};

static bool
has_flag(const char *flags, const char *name)
{
	const char *p = flags;
	size_t n = strlen(name);

	while ((p = strstr(p, name)) != NULL) {
		if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0' || p[n] == '\n'))
			return true;
		p += n;
	}
	return false;
}

/* Anonymous memory names: none, the heap, a stack, or a prctl(PR_SET_VMA) name. */
static bool
anon_name_ok(const char *path)
{
	return path[0] == '\0' || strcmp(path, "[heap]") == 0 ||
	       strncmp(path, "[stack", 6) == 0 || strncmp(path, "[anon:", 6) == 0;
}

/* Is [start, end) inside the writable PT_LOAD segment of a loaded object? */
struct data_seg {
	uintptr_t start;
	uintptr_t end;
	bool found;
};

static int
data_seg_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct data_seg *d = arg;
	uintptr_t page = (uintptr_t)page_size();
	ElfW(Half) i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo, hi;

		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) == 0)
			continue;
		lo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + page - 1) & ~(page - 1);
		if (d->start >= lo && d->end <= hi) {
			d->found = true;
			return 1;
		}
	}
	return 0;
}

/*
 * The file-backed part of a program's or library's data segment (.data and
 * the first page of .bss share the segment's last file page): private
 * writable memory like the heap, so it may be re-backed; rdma-core's
 * examples register static arrays there. Other file mappings are not.
 */
static bool
is_data_segment(const struct vma *v)
{
	struct data_seg d = {.start = v->start, .end = v->end};

	if (v->perms[1] != 'w' || v->perms[3] != 'p' || v->inode == 0)
		return false;
	dl_iterate_phdr(data_seg_cb, &d);
	return d.found;
}

/* Check one mapping against the walk; sets w->rc / w->done. */
static void
walk_vma(struct walk *w, const struct vma *v)
{
	uintptr_t s, e;

	if (w->done || v->end <= w->start)
		return;
	if (v->start >= w->end) {
		w->done = true;
		return;
	}
	if (v->start > w->cursor) {
		w->rc = w->mode == WALK_OURS ? -EBUSY : -EFAULT; /* a hole */
		w->done = true;
		return;
	}
	s = w->cursor;
	e = v->end < w->end ? v->end : w->end;
	w->cursor = e;
	if (w->mode == WALK_OURS) {
		const struct region *r = w->ours;

		if (v->perms[3] != 's' || v->inode != (unsigned long)r->ino ||
		    v->dev_major != major(r->dev) || v->dev_minor != minor(r->dev) ||
		    v->start < r->addr || v->offset != (unsigned long long)(v->start - r->addr)) {
			w->rc = -EBUSY;
			w->done = true;
		}
		return;
	}
	if (v->perms[0] != 'r') {
		w->rc = -EACCES;
	} else if (v->perms[3] != 'p' ||
		   (v->inode != 0 ? !is_data_segment(v) : !anon_name_ok(v->path)) ||
		   has_flag(v->flags, "ht") || has_flag(v->flags, "io") ||
		   has_flag(v->flags, "pf") || has_flag(v->flags, "sh")) {
		/* shared, a file, hugetlb, or a special mapping (vdso, device) */
		w->rc = -EOPNOTSUPP;
	}
	if (w->rc != 0) {
		w->done = true;
		return;
	}
	if (w->n_pieces == w->cap) {
		unsigned int cap = w->cap ? w->cap * 2 : 8;
		struct piece *p = realloc(w->pieces, cap * sizeof(*p));

		if (p == NULL) {
			w->rc = -ENOMEM;
			w->done = true;
			return;
		}
		w->pieces = p;
		w->cap = cap;
	}
	w->pieces[w->n_pieces].start = s;
	w->pieces[w->n_pieces].end = e;
	w->pieces[w->n_pieces].prot = (v->perms[0] == 'r' ? PROT_READ : 0) |
				      (v->perms[1] == 'w' ? PROT_WRITE : 0) |
				      (v->perms[2] == 'x' ? PROT_EXEC : 0);
	w->pieces[w->n_pieces].locked = has_flag(v->flags, "lo");
	w->n_pieces++;
}

/*
 * Walk the mappings that cover [start, end) in address order. smaps rather
 * than maps because only smaps has VmFlags (hugetlb, locked, I/O). Stops
 * reading at the first mapping past the range.
 */
static int
walk_range(struct walk *w)
{
	struct vma v;
	bool have = false;
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	f = fopen("/proc/self/smaps", "re");
	if (f == NULL)
		return -errno;
	w->cursor = w->start;
	while (!w->done && getline(&line, &cap, f) > 0) {
		struct vma n;
		unsigned long s, e;
		int pos = 0;

		memset(&n, 0, sizeof(n));
		if (sscanf(line, "%lx-%lx %7s %llx %x:%x %lu %n", &s, &e, n.perms, &n.offset,
			   &n.dev_major, &n.dev_minor, &n.inode, &pos) == 7 && pos > 0) {
			if (have)
				walk_vma(w, &v);
			n.start = s;
			n.end = e;
			snprintf(n.path, sizeof(n.path), "%s", line + pos);
			n.path[strcspn(n.path, "\n")] = '\0';
			v = n;
			have = true;
		} else if (have && strncmp(line, "VmFlags:", 8) == 0) {
			snprintf(v.flags, sizeof(v.flags), "%s", line + 8);
		}
	}
	if (have)
		walk_vma(w, &v);
	free(line);
	fclose(f);
	if (w->rc == 0 && w->cursor < w->end)
		w->rc = w->mode == WALK_OURS ? -EBUSY : -EFAULT;
	return w->rc;
}

/* ------------------------------------------------------------------------ */
/* Moving pages                                                              */
/* ------------------------------------------------------------------------ */

/*
 * Re-backing copies whole pages, and a page may hold bytes of allocations
 * other than the registered one (drivers/verbs re-backs the pages around an
 * unaligned buffer). Under AddressSanitizer those bytes are redzones, read
 * here on purpose: these two functions are not instrumented then, and the
 * copy avoids the memcpy interceptor. Other builds are unchanged.
 */
#if defined(__SANITIZE_ADDRESS__)
#define RBK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RBK_ASAN 1
#endif
#endif
#ifdef RBK_ASAN
#define RBK_NO_ASAN __attribute__((no_sanitize_address))
#else
#define RBK_NO_ASAN
#endif

RBK_NO_ASAN static bool
page_is_zero(const void *p, size_t len)
{
	const uint64_t *q = p;
	uint64_t acc = 0;
	size_t i;

	for (i = 0; i < len / sizeof(*q); i++)
		acc |= q[i];
	return acc == 0;
}

/*
 * Copy @p len bytes page by page, skipping pages that are all zero: the
 * destination is fresh (reads as zero), so untouched memory stays unallocated.
 */
RBK_NO_ASAN static void
copy_pages(void *dst, const void *src, size_t len)
{
	size_t page = page_size(), off;

	for (off = 0; off < len; off += page) {
		if (page_is_zero((const uint8_t *)src + off, page))
			continue;
#ifdef RBK_ASAN
		{
			/* volatile: not turned back into a call to memcpy */
			volatile uint64_t *d = (volatile uint64_t *)(void *)((uint8_t *)dst + off);
			const uint64_t *q = (const uint64_t *)(const void *)((const uint8_t *)src + off);
			size_t i;

			for (i = 0; i < page / sizeof(*q); i++)
				d[i] = q[i];
		}
#else
		memcpy((uint8_t *)dst + off, (const uint8_t *)src + off, page);
#endif
	}
}

/* Put back each original mapping's protection and mlock. */
static void
apply_pieces(const struct piece *pieces, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct piece *p = &pieces[i];

		if (p->prot != (PROT_READ | PROT_WRITE) &&
		    mprotect((void *)p->start, p->end - p->start, p->prot) != 0)
			uroce_log(UROCE_LOG_WARNING, "liburoce: mprotect after re-backing: %s",
				  strerror(errno));
		if (p->locked && mlock((void *)p->start, p->end - p->start) != 0)
			uroce_log(UROCE_LOG_WARNING, "liburoce: mlock after re-backing: %s",
				  strerror(errno));
	}
}

/* Move the region's memory into a new sealed memfd, in place. */
static int
reback(struct region *r)
{
	struct stat st;
	void *tmp, *p;
	int rc;

	r->fd = memfd_create("uroce-reg", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (r->fd < 0)
		return -errno;
	r->file_len = r->len;
	if (ftruncate(r->fd, (off_t)r->len) != 0 || fcntl(r->fd, F_ADD_SEALS, SEALS) != 0 ||
	    fstat(r->fd, &st) != 0) {
		rc = -errno;
		goto fail;
	}
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	tmp = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (tmp == MAP_FAILED) {
		rc = -errno;
		goto fail;
	}
	/* Writes by other threads between this copy and the remap are lost:
	 * the application must not write the range during uroce_reg_mr(). */
	copy_pages(tmp, (const void *)r->addr, r->len);
	munmap(tmp, r->len);
	/* One mmap replaces every page of the range at once: no moment where
	 * the range is unmapped (another thread's mmap cannot land there). */
	p = mmap((void *)r->addr, r->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, r->fd, 0);
	if (p == MAP_FAILED) {
		rc = -errno;
		uroce_log(UROCE_LOG_ERR, "liburoce: re-backing %p+%zu failed: %s",
			  (void *)r->addr, r->len, strerror(-rc));
		goto fail;
	}
	apply_pieces(r->pieces, r->n_pieces);
	/* A child of fork() must not share these pages with the parent (they
	 * are MAP_SHARED now): leave them out of it, as rdma-core does for
	 * registered memory with ibv_fork_init(). */
	if (madvise(p, r->len, MADV_DONTFORK) != 0)
		uroce_log(UROCE_LOG_WARNING, "liburoce: MADV_DONTFORK: %s", strerror(errno));
	return 0;
fail:
	close(r->fd);
	r->fd = -1;
	return rc;
}

/*
 * Make the region private anonymous memory again with the same contents, if
 * it is still our mapping (the application may have unmapped it, e.g. a
 * thread's stack after the thread exited: then it is left alone).
 */
static void
restore(struct region *r)
{
	struct walk w = {.mode = WALK_OURS, .start = r->addr, .end = r->addr + r->len, .ours = r};
	void *tmp;

	if (walk_range(&w) != 0)
		return;
	tmp = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tmp == MAP_FAILED)
		goto keep_shared;
	copy_pages(tmp, (const void *)r->addr, r->len);
	/* mremap onto the range replaces it in one step, like MAP_FIXED. */
	if (mremap(tmp, r->len, r->len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)r->addr) ==
	    MAP_FAILED) {
		munmap(tmp, r->len);
		goto keep_shared;
	}
	apply_pieces(r->pieces, r->n_pieces);
	return;
keep_shared:
	/* Still valid memory with the right contents, only shared. */
	uroce_log(UROCE_LOG_WARNING, "liburoce: %p+%zu stays shared memory: %s", (void *)r->addr,
		  r->len, strerror(errno));
	madvise((void *)r->addr, r->len, MADV_DOFORK);
}

/* ------------------------------------------------------------------------ */
/* Region table (under rbk_lock)                                             */
/* ------------------------------------------------------------------------ */

static struct region *
region_overlapping(uintptr_t a, size_t len)
{
	struct region *r;

	for (r = regions; r != NULL; r = r->next)
		if (a < r->addr + r->len && r->addr < a + len)
			return r;
	return NULL;
}

/*
 * The smallest hold of @p c whose segment covers the region's first @p end
 * bytes. Holds of a context are made only when none covers, each with the
 * region's size then, which only grows: so the hold an MR was given is the
 * one found again for it at release.
 */
static struct hold *
hold_find(struct region *r, const struct uroce_context *c, size_t end)
{
	struct hold *h, *best = NULL;

	for (h = r->holds; h != NULL; h = h->next)
		if (h->c == c && h->seg_len >= end && (best == NULL || h->seg_len < best->seg_len))
			best = h;
	return best;
}

static int
region_create(uintptr_t a, size_t len, struct region **out)
{
	struct walk w = {.mode = WALK_PRIVATE, .start = a, .end = a + len};
	struct region *r;
	int rc;

	rc = walk_range(&w);
	if (rc != 0) {
		free(w.pieces);
		return rc;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		free(w.pieces);
		return -ENOMEM;
	}
	r->addr = a;
	r->len = len;
	r->pieces = w.pieces;
	r->n_pieces = w.n_pieces;
	rc = reback(r);
	if (rc != 0) {
		free(r->pieces);
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

/*
 * Grow region @p r at its end up to @p end (page aligned), in place like
 * reback(): the memfd gets longer, the new pages' contents go into it and
 * it is mapped over them at their offset. The old pages and every segment
 * and MR on them stay as they are. A buffer that starts in a re-backed
 * page and ends after it (small malloc'ed buffers registered one by one,
 * each re-backed with its enclosing pages) needs this.
 */
static int
region_grow(struct region *r, uintptr_t end)
{
	uintptr_t start = r->addr + r->len;
	struct walk w = {.mode = WALK_PRIVATE, .start = start, .end = end};
	size_t add = end - start;
	struct piece *pieces;
	void *tmp, *p;
	int rc;

	rc = walk_range(&w);
	if (rc != 0)
		goto out;
	pieces = realloc(r->pieces, (r->n_pieces + w.n_pieces) * sizeof(*pieces));
	if (pieces == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	r->pieces = pieces;
	/* The shrink seal forbids going back: a file already long enough from
	 * a failed growth is used as it is. */
	if (r->len + add > r->file_len) {
		if (ftruncate(r->fd, (off_t)(r->len + add)) != 0) {
			rc = -errno;
			goto out;
		}
		r->file_len = r->len + add;
	}
	tmp = mmap(NULL, add, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, (off_t)r->len);
	if (tmp == MAP_FAILED) {
		rc = -errno;
		goto out;
	}
	copy_pages(tmp, (const void *)start, add);
	munmap(tmp, add);
	p = mmap((void *)start, add, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, r->fd,
		 (off_t)r->len);
	if (p == MAP_FAILED) {
		rc = -errno;
		uroce_log(UROCE_LOG_ERR, "liburoce: re-backing %p+%zu failed: %s", (void *)start,
			  add, strerror(-rc));
		goto out;
	}
	apply_pieces(w.pieces, w.n_pieces);
	if (madvise(p, add, MADV_DONTFORK) != 0)
		uroce_log(UROCE_LOG_WARNING, "liburoce: MADV_DONTFORK: %s", strerror(errno));
	memcpy(&r->pieces[r->n_pieces], w.pieces, w.n_pieces * sizeof(*w.pieces));
	r->n_pieces += w.n_pieces;
	r->len += add;
out:
	free(w.pieces);
	return rc;
}

/* Unlink (if linked), make private again, free. */
static void
region_destroy(struct region *r)
{
	struct region **pp;

	for (pp = &regions; *pp != NULL; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	restore(r);
	close(r->fd);
	free(r->pieces);
	free(r);
}

/* Drop a hold that has no MR left; the region goes with its last hold. */
static void
hold_drop(struct region *r, struct hold *h, bool tell_daemon)
{
	struct uroce_shm_msg_handle q = {.handle = h->seg_handle};
	struct hold **pp;
	int rc;

	if (tell_daemon) {
		rc = verbs_rpc(h->c, UROCE_SHM_MSG_FREE_SEGMENT, &q, sizeof(q), -1, NULL, 0, NULL);
		if (rc != 0 && rc != -ENOTCONN)
			uroce_log(UROCE_LOG_WARNING,
				  "liburoce: FREE_SEGMENT of re-backed memory: %s", strerror(-rc));
	}
	for (pp = &r->holds; *pp != NULL; pp = &(*pp)->next)
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	free(h);
	if (r->holds == NULL)
		region_destroy(r);
}

/* ------------------------------------------------------------------------ */
/* Interface (verbs_internal.h)                                              */
/* ------------------------------------------------------------------------ */

int
rbk_acquire(struct uroce_context *c, void *addr, size_t length, uint32_t *seg_handle,
	    uint64_t *seg_offset)
{
	struct uroce_shm_msg_alloc_segment_req q;
	struct uroce_shm_msg_alloc_segment_resp resp;
	uintptr_t a = (uintptr_t)addr;
	size_t page = page_size();
	struct region *r;
	struct hold *h;
	bool created = false;
	int rc;

	if (c == NULL || length == 0 || length > UINTPTR_MAX - a)
		return -EINVAL;
	pthread_mutex_lock(&rbk_lock);
	r = region_overlapping(a, length);
	if (r != NULL) {
		uintptr_t r_end = r->addr + r->len;
		struct walk w = {.mode = WALK_OURS, .start = a, .end = a + length, .ours = r};

		/* Inside a re-backed range: reuse it, any alignment. Starting in
		 * one and going on past its end: it grows, if the new end is page
		 * aligned and no other re-backed range is in the way. Starting
		 * before one: refused (a new memfd over it would leave the old
		 * MRs on the old pages, and a memfd cannot grow at its start). */
		if (a < r->addr || (a + length > r_end && ((a + length) % page != 0 ||
							   region_overlapping(r_end, a + length -
									      r_end) != NULL))) {
			rc = -EINVAL;
			goto out;
		}
		w.end = a + length < r_end ? a + length : r_end;
		rc = walk_range(&w);
		if (rc != 0)
			goto out; /* -EBUSY: unmapped or replaced under live MRs */
		if (a + length > r_end) {
			rc = region_grow(r, a + length);
			if (rc != 0)
				goto out;
		}
	} else {
		if (a % page != 0 || length % page != 0) {
			rc = -EINVAL;
			goto out;
		}
		rc = region_create(a, length, &r);
		if (rc != 0)
			goto out;
		r->next = regions;
		regions = r;
		created = true;
	}
	h = hold_find(r, c, a + length - r->addr);
	if (h == NULL) {
		h = calloc(1, sizeof(*h));
		if (h == NULL) {
			rc = -ENOMEM;
			goto fail_region;
		}
		memset(&q, 0, sizeof(q));
		q.size = r->len;
		rc = verbs_rpc(c, UROCE_SHM_MSG_ALLOC_SEGMENT, &q, sizeof(q), r->fd, &resp,
			       sizeof(resp), NULL);
		if (rc != 0) {
			free(h);
			goto fail_region;
		}
		h->c = c;
		h->seg_handle = resp.seg_handle;
		h->seg_len = r->len;
		h->next = r->holds;
		r->holds = h;
	}
	h->mrs++;
	*seg_handle = h->seg_handle;
	*seg_offset = a - r->addr;
	rc = 0;
	goto out;
fail_region:
	if (created)
		region_destroy(r); /* the memory stays valid: made private again */
out:
	pthread_mutex_unlock(&rbk_lock);
	return rc;
}

int
rbk_release(struct uroce_context *c, const void *addr, size_t length)
{
	uintptr_t a = (uintptr_t)addr;
	struct region *r;
	struct hold *h = NULL;

	pthread_mutex_lock(&rbk_lock);
	r = length > UINTPTR_MAX - a ? NULL : region_overlapping(a, length);
	if (r != NULL && a >= r->addr)
		h = hold_find(r, c, a + length - r->addr);
	if (h == NULL || h->mrs == 0) {
		pthread_mutex_unlock(&rbk_lock);
		return -ENOENT;
	}
	if (--h->mrs == 0)
		hold_drop(r, h, true);
	pthread_mutex_unlock(&rbk_lock);
	return 0;
}

void
rbk_context_closed(struct uroce_context *c)
{
	struct region *r, *next;
	struct hold *h;

	pthread_mutex_lock(&rbk_lock);
	for (r = regions; r != NULL; r = next) {
		next = r->next;
		while ((h = hold_find(r, c, 0)) != NULL) {
			bool last = r->holds == h && h->next == NULL;

			hold_drop(r, h, false); /* frees the region with its last hold */
			if (last)
				break;
		}
	}
	pthread_mutex_unlock(&rbk_lock);
}
