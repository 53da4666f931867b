/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* Memory regions: keys with a variant byte, access flags, and bounds checks
 * that no wrap-around can fool (IBA 10.6). */

#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>

#include "simwire.h"

static struct simwire *sw;
static struct uroce_eng_pd *pd;
static uint8_t mem[4096];

static void
setup(void)
{
	sw = simwire_create(NULL);
	pd = uroce_eng_pd_alloc(simwire_engine(sw, 0));
	cr_assert_not_null(pd);
}

static void
teardown(void)
{
	simwire_destroy(sw);
}

TestSuite(mr, .init = setup, .fini = teardown);

Test(mr, bounds_inside_and_edges)
{
	struct uroce_eng_mr *mr = uroce_eng_mr_reg(pd, mem, 0x1000, 4096, UROCE_ACCESS_LOCAL_WRITE |
					   UROCE_ACCESS_REMOTE_READ);

	cr_assert_not_null(mr);
	cr_expect(uroce_eng_mr_check(mr, 0x1000, 4096, UROCE_ACCESS_REMOTE_READ));
	cr_expect(uroce_eng_mr_check(mr, 0x1FFF, 1, 0));
	cr_expect(uroce_eng_mr_check(mr, 0x2000, 0, 0), "zero length at the end is inside");
	cr_expect(!uroce_eng_mr_check(mr, 0x2000, 1, 0), "one past the end");
	cr_expect(!uroce_eng_mr_check(mr, 0x0FFF, 1, 0), "one before the start");
	cr_expect(!uroce_eng_mr_check(mr, 0x1000, 4097, 0));
	cr_expect(!uroce_eng_mr_check(mr, 0x2001, 0, 0));
}

Test(mr, bounds_overflow_safe)
{
	struct uroce_eng_mr *mr = uroce_eng_mr_reg(pd, mem, 0x1000, 4096, UROCE_ACCESS_LOCAL_WRITE);

	/* va + len wraps to a small number inside the region: must fail. */
	cr_expect(!uroce_eng_mr_check(mr, 0x1800, UINT64_MAX - 0x100, 0));
	cr_expect(!uroce_eng_mr_check(mr, UINT64_MAX, 2, 0));
	cr_expect(!uroce_eng_mr_check(mr, UINT64_MAX - 8, 0x2000, 0));
	cr_expect(!uroce_eng_mr_check(mr, 0x1000, UINT64_MAX, 0));
	/* A region at the very top of the address space. */
	cr_expect_null(uroce_eng_mr_reg(pd, mem, UINT64_MAX - 10, 4096, 0), "iova + length wraps");
	cr_expect_eq(errno, EINVAL);
	mr = uroce_eng_mr_reg(pd, mem, UINT64_MAX - 4096, 4096, 0);
	cr_assert_not_null(mr);
	cr_expect(uroce_eng_mr_check(mr, UINT64_MAX - 1, 1, 0));
	cr_expect(!uroce_eng_mr_check(mr, UINT64_MAX - 1, 2, 0));
}

Test(mr, access_rights)
{
	struct uroce_eng_mr *mr = uroce_eng_mr_reg(pd, mem, 0, 4096, UROCE_ACCESS_LOCAL_WRITE |
					   UROCE_ACCESS_REMOTE_WRITE);

	cr_expect(uroce_eng_mr_check(mr, 0, 8, UROCE_ACCESS_REMOTE_WRITE));
	cr_expect(!uroce_eng_mr_check(mr, 0, 8, UROCE_ACCESS_REMOTE_READ));
	cr_expect(!uroce_eng_mr_check(mr, 0, 8, UROCE_ACCESS_REMOTE_ATOMIC));
	cr_expect(!uroce_eng_mr_check(mr, 0, 8, UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ));
	/* Remote write without local write is invalid (IBA 10.6.3.1). */
	cr_expect_null(uroce_eng_mr_reg(pd, mem, 0, 16, UROCE_ACCESS_REMOTE_WRITE));
	cr_expect_null(uroce_eng_mr_reg(pd, mem, 0, 16, UROCE_ACCESS_REMOTE_ATOMIC));
	/* Bits no MR may carry: unknown, or FLUSH_PERSISTENT (no pmem MRs). */
	cr_expect_null(uroce_eng_mr_reg(pd, mem, 0, 16, 0x400));
	cr_expect_null(uroce_eng_mr_reg(pd, mem, 0, 16, UROCE_ACCESS_FLUSH_PERSISTENT));
	cr_expect_not_null(uroce_eng_mr_reg(pd, mem, 0, 16, UROCE_ACCESS_FLUSH_GLOBAL));
	cr_expect_not_null(uroce_eng_mr_reg(pd, mem, 0, 16, UROCE_ACCESS_REMOTE_READ));
}

/* An aligned atomic VA must name an aligned word of ours: REMOTE_ATOMIC needs
 * the host address and the iova to agree modulo 8 (a CPU atomic on a
 * misaligned word may split a cache line). */
Test(mr, atomic_mr_must_be_aligned_like_its_iova)
{
	static uint64_t words[64];
	uint8_t *base = (uint8_t *)words;
	const int atomic = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_ATOMIC;

	/* Expect: congruent modulo 8, at any offset: accepted. */
	cr_expect_not_null(uroce_eng_mr_reg(pd, base, 0x1000, 256, atomic));
	cr_expect_not_null(uroce_eng_mr_reg(pd, base + 3, 0x2003, 64, atomic));
	/* Expect: not congruent: EINVAL, but only with REMOTE_ATOMIC. */
	errno = 0;
	cr_expect_null(uroce_eng_mr_reg(pd, base + 4, 0x3000, 64, atomic));
	cr_expect_eq(errno, EINVAL);
	cr_expect_null(uroce_eng_mr_reg(pd, base, 0x4001, 64, atomic));
	cr_expect_not_null(uroce_eng_mr_reg(pd, base + 4, 0x3000, 64, UROCE_ACCESS_LOCAL_WRITE |
					    UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ));
}

Test(mr, key_variant_changes_on_reregistration)
{
	struct uroce_eng_mr *mr;
	uint32_t key[300];
	unsigned int i, j;

	/* Registering in the same slot again and again never reuses a key. The
	 * allocator is round-robin, so a slot comes back after UROCE_MAX_MR. */
	for (i = 0; i < 300; i++) {
		mr = uroce_eng_mr_reg(pd, mem, 0, 16, 0);
		if (mr == NULL)
			cr_assert_fail("registration %u failed", i);
		key[i] = uroce_eng_mr_lkey(mr);
		if (uroce_eng_mr_lkey(mr) != uroce_eng_mr_rkey(mr) || (key[i] >> 8) == 0)
			cr_assert_fail("key %#x: lkey != rkey or index 0", key[i]);
		if (uroce_eng_mr_dereg(mr) != 0)
			cr_assert_fail("dereg failed");
	}
	for (i = 0; i < 300; i++)
		for (j = i + 1; j < 300; j++)
			if (key[i] == key[j])
				cr_assert_fail("key %#x issued twice", key[i]);
	/* Keep going until the allocator wraps to the first index: same index,
	 * different variant byte. */
	for (i = 300; i < UROCE_MAX_MR + 2; i++) {
		mr = uroce_eng_mr_reg(pd, mem, 0, 16, 0);
		if (mr == NULL)
			cr_assert_fail("registration %u failed", i);
		if ((uroce_eng_mr_lkey(mr) >> 8) == (key[0] >> 8)) {
			cr_expect_neq(uroce_eng_mr_lkey(mr), key[0]);
			uroce_eng_mr_dereg(mr);
			return;
		}
		uroce_eng_mr_dereg(mr);
	}
	cr_assert_fail("index never reused");
}

Test(mr, dereg_and_pd_busy)
{
	struct uroce_eng_mr *mr = uroce_eng_mr_reg(pd, mem, 0, 16, 0);

	cr_expect_eq(uroce_eng_pd_dealloc(pd), -EBUSY);
	cr_expect_eq(uroce_eng_mr_dereg(mr), 0);
	cr_expect_eq(uroce_eng_mr_dereg(NULL), -EINVAL);
	cr_expect_eq(uroce_eng_pd_dealloc(pd), 0);
}

/*
 * The variant byte of every key is random (getrandom()), not derived from an
 * address or the time: over 1024 registrations both parities and most of
 * the 256 values appear, and the variants of neighbouring slots are not a
 * progression. The same index never gets its previous variant again.
 */
Test(mr, key_variant_is_random)
{
	static struct uroce_eng_mr *mrs[1024];
	unsigned int seen[256] = { 0 }, distinct = 0, odd = 0, steps_equal = 0, i;

	for (i = 0; i < 1024; i++) {
		mrs[i] = uroce_eng_mr_reg(pd, mem, 0x1000, 64, 0);
		cr_assert_not_null(mrs[i]);
		if (seen[uroce_eng_mr_lkey(mrs[i]) & 0xFF]++ == 0)
			distinct++;
		odd += uroce_eng_mr_lkey(mrs[i]) & 1;
		if (i >= 2 && (uint8_t)(uroce_eng_mr_lkey(mrs[i]) - uroce_eng_mr_lkey(mrs[i - 1])) ==
			      (uint8_t)(uroce_eng_mr_lkey(mrs[i - 1]) - uroce_eng_mr_lkey(mrs[i - 2])))
			steps_equal++;
	}
	/* 1024 draws of 256 values: about 251 distinct; odd about 512. */
	cr_expect_gt(distinct, 200, "%u distinct variants", distinct);
	cr_expect(odd > 400 && odd < 624, "%u odd variants of 1024", odd);
	cr_expect_lt(steps_equal, 30, "%u equal steps: a progression", steps_equal);
	for (i = 0; i < 1024; i++)
		cr_assert_eq(uroce_eng_mr_dereg(mrs[i]), 0);
}
