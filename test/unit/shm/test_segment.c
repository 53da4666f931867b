/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Tests for lib/shm/segment.c: size rounding, create/map/unmap of sealed
 * memfds, refusal of unsealed or short descriptors, the hugetlbfs path (run
 * when huge pages are free, skipped loudly otherwise) and its fallback, and
 * the QP segment layout.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "uroce_shm.h"

static long
free_hugepages(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long n = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Free: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

Test(segment, round)
{
	cr_expect_eq(uroce_shm_segment_round(1, 4096), 4096);
	cr_expect_eq(uroce_shm_segment_round(4096, 4096), 4096);
	cr_expect_eq(uroce_shm_segment_round(4097, 4096), 8192);
	cr_expect_eq(uroce_shm_segment_round(3 << 20, 2 << 20), 4 << 20);
	/* Expect: 0 on zero size, bad page size, overflow. */
	cr_expect_eq(uroce_shm_segment_round(0, 4096), 0);
	cr_expect_eq(uroce_shm_segment_round(100, 3000), 0);
	cr_expect_eq(uroce_shm_segment_round(100, 0), 0);
	cr_expect_eq(uroce_shm_segment_round(SIZE_MAX - 10, 4096), 0);
}

Test(segment, create_map_unmap)
{
	struct uroce_shm_segment a, b;
	int seals, fd;

	/* Expect: size rounded to the page, sealed, mapped, close-on-exec. */
	cr_assert_eq(uroce_shm_segment_create(&a, "seg-test", 10000, 0), 0);
	cr_expect_eq(a.size, 12288);
	cr_expect_eq(a.flags & UROCE_SHM_SEG_HUGETLB, 0);
	cr_expect_not_null(a.addr);
	seals = fcntl(a.fd, F_GET_SEALS);
	cr_expect_eq(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
		     F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	cr_expect_neq(fcntl(a.fd, F_GETFD) & FD_CLOEXEC, 0);
	/* Expect: a truncation is refused by the seal. */
	cr_expect_neq(ftruncate(a.fd, 4096), 0);
	/* Expect: the peer maps it (via a dup'd fd, as after SCM_RIGHTS) and
	 * both see the same bytes. */
	fd = dup(a.fd);
	cr_assert_eq(uroce_shm_segment_map(&b, fd, 12288), 0);
	cr_expect_eq(b.size, 12288);
	memset(a.addr, 0x5a, a.size);
	cr_expect_eq(((uint8_t *)b.addr)[12287], 0x5a);
	uroce_shm_segment_unmap(&b);
	cr_expect_null(b.addr);
	cr_expect_eq(b.fd, -1);
	uroce_shm_segment_unmap(&b); /* twice is safe */
	uroce_shm_segment_unmap(&a);
}

Test(segment, map_refuses_unsealed_short_and_bad)
{
	struct uroce_shm_segment a, b;
	int fd;

	/* Expect: an unsealed memfd could be truncated under the daemon -> EPERM. */
	fd = memfd_create("unsealed", MFD_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 4096), 0);
	cr_expect_eq(uroce_shm_segment_map(&b, fd, 4096), -EPERM);
	close(fd);
	/* Expect: a regular file cannot be sealed -> EPERM. */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_expect_eq(uroce_shm_segment_map(&b, fd, 4096), -EPERM);
	close(fd);
	/* Expect: smaller than the daemon expects -> ENOSPC; bad args. */
	cr_assert_eq(uroce_shm_segment_create(&a, "short", 4096, 0), 0);
	cr_expect_eq(uroce_shm_segment_map(&b, a.fd, 8192), -ENOSPC);
	cr_expect_eq(uroce_shm_segment_map(&b, a.fd, 0), -EINVAL);
	cr_expect_eq(uroce_shm_segment_map(&b, -1, 4096), -EBADF);
	uroce_shm_segment_unmap(&a);
	/* Expect: create refuses size 0 and unknown flags. */
	cr_expect_eq(uroce_shm_segment_create(&a, "x", 0, 0), -EINVAL);
	cr_expect_eq(uroce_shm_segment_create(&a, "x", 4096, 0x80), -EINVAL);
	cr_expect_eq(uroce_shm_segment_create(&a, "x", SIZE_MAX, 0), -EOVERFLOW);
}

Test(segment, hugetlb)
{
	struct uroce_shm_segment a, b;
	int fd;

	if (free_hugepages() < 2) {
		/* Criterion shows the reason with --verbose ([SKIP] line). */
		cr_skip_test("SKIPPED: no free huge pages (HugePages_Free < 2); the hugetlbfs "
			     "path is untested here. Reserve some: echo 64 > "
			     "/proc/sys/vm/nr_hugepages");
	}
	/* Expect: huge-page backed, rounded to the huge page size. */
	cr_assert_eq(uroce_shm_segment_create(&a, "huge", 100, UROCE_SHM_SEG_WANT_HUGETLB), 0);
	cr_expect_neq(a.flags & UROCE_SHM_SEG_HUGETLB, 0);
	cr_expect_geq(a.page_size, 2u << 20);
	cr_expect_eq(a.size, a.page_size);
	memset(a.addr, 1, a.size);
	/* Expect: the receiving side sees it is huge-page backed too. */
	fd = dup(a.fd);
	cr_assert_eq(uroce_shm_segment_map(&b, fd, a.size), 0);
	cr_expect_neq(b.flags & UROCE_SHM_SEG_HUGETLB, 0);
	cr_expect_eq(((uint8_t *)b.addr)[a.size - 1], 1);
	uroce_shm_segment_unmap(&b);
	uroce_shm_segment_unmap(&a);
}

Test(segment, hugetlb_fallback_without_hugepages)
{
	struct uroce_shm_segment a;

	if (free_hugepages() != 0)
		cr_skip_test("SKIPPED: huge pages are free here, so the fallback is not "
			     "exercised");
	/* Expect: asked for huge pages, none free: plain memfd, flag clear. */
	cr_assert_eq(uroce_shm_segment_create(&a, "nohuge", 100, UROCE_SHM_SEG_WANT_HUGETLB),
		     0);
	cr_expect_eq(a.flags & UROCE_SHM_SEG_HUGETLB, 0);
	cr_expect_eq(a.size, (size_t)sysconf(_SC_PAGESIZE));
	memset(a.addr, 1, a.size);
	uroce_shm_segment_unmap(&a);
}

Test(segment, qp_layout)
{
	struct uroce_shm_qp_layout l;

	/* Expect: SQ at 0 (256 + 64*320 = 20736 -> 24576), RQ after it. */
	cr_assert_eq(uroce_shm_qp_layout(64, 32, &l), 0);
	cr_expect_eq(l.sq_offset, 0);
	cr_expect_eq(l.sq_bytes, 256 + 64 * 320);
	cr_expect_eq(l.rq_offset, 24576);
	cr_expect_eq(l.rq_bytes, 256 + 32 * 144);
	cr_expect_eq(l.total, 24576 + 8192);
	/* Expect: no RQ with an SRQ. */
	cr_assert_eq(uroce_shm_qp_layout(64, 0, &l), 0);
	cr_expect_eq(l.rq_offset, 0);
	cr_expect_eq(l.total, 24576);
	cr_expect_eq(uroce_shm_qp_layout(63, 32, &l), -EINVAL);
	cr_expect_eq(uroce_shm_qp_layout(64, 33, &l), -EINVAL);
	cr_expect_eq(uroce_shm_qp_layout(0, 0, &l), -EINVAL);
}
