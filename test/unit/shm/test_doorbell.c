/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Tests for lib/shm/doorbell.c: a rung slot is found, duplicates collapse,
 * ringing every slot at once loses none ("overflow"), bits the daemon never
 * handed out are counted and dropped, hostile summary bits are harmless, and
 * a concurrent client ringing while the worker harvests never loses work.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "uroce_shm.h"
#include "shm_concurrent.h"

static struct uroce_shm_db_block *
new_block(void)
{
	struct uroce_shm_db_block *db = aligned_alloc(4096, sizeof(*db));

	cr_assert_not_null(db);
	memset(db, 0, sizeof(*db));
	return db;
}

Test(doorbell, empty_block_has_no_work)
{
	struct uroce_shm_db_block *db = new_block();
	struct uroce_shm_db_reader rd;

	uroce_shm_db_reader_init(&rd, db, 128);
	/* Expect: -EAGAIN, and no exchange was needed (the peek saw zero). */
	cr_expect_eq(uroce_shm_db_next(&rd), -EAGAIN);
	cr_expect_eq(rd.harvests, 0);
	free(db);
}

Test(doorbell, one_slot)
{
	struct uroce_shm_db_block *db = new_block();
	struct uroce_shm_db_reader rd;

	uroce_shm_db_reader_init(&rd, db, 128);
	uroce_shm_db_ring(db, 77);
	/* Expect: bit 13 of word 1 and bit 1 of the summary. */
	cr_expect_eq(db->words[1], 1ull << 13);
	cr_expect_eq(db->summary, 1ull << 1);
	cr_expect_eq(uroce_shm_db_next(&rd), 77);
	cr_expect_eq(uroce_shm_db_next(&rd), -EAGAIN);
	/* Expect: the worker cleared the shared bits it harvested. */
	cr_expect_eq(db->words[1], 0);
	cr_expect_eq(db->summary, 0);
	free(db);
}

Test(doorbell, duplicates_collapse)
{
	struct uroce_shm_db_block *db = new_block();
	struct uroce_shm_db_reader rd;
	int i;

	uroce_shm_db_reader_init(&rd, db, UROCE_SHM_DB_SLOTS);
	/* Expect: 100000 rings of the same two QPs give each QP once. */
	for (i = 0; i < 100000; i++) {
		uroce_shm_db_ring(db, 5);
		uroce_shm_db_ring(db, 4095);
	}
	cr_expect_eq(uroce_shm_db_next(&rd), 5);
	cr_expect_eq(uroce_shm_db_next(&rd), 4095);
	cr_expect_eq(uroce_shm_db_next(&rd), -EAGAIN);
	/* Expect: ringing again after the harvest is seen again. */
	uroce_shm_db_ring(db, 5);
	cr_expect_eq(uroce_shm_db_next(&rd), 5);
	free(db);
}

Test(doorbell, every_slot_rung_nothing_lost)
{
	struct uroce_shm_db_block *db = new_block();
	struct uroce_shm_db_reader rd;
	static uint8_t seen[UROCE_SHM_DB_SLOTS];
	int s, n = 0;
	uint32_t i, rep;

	uroce_shm_db_reader_init(&rd, db, UROCE_SHM_DB_SLOTS);
	/* Expect: a client ringing every one of its 4096 slots three times,
	 * in a scrambled order, cannot overflow anything: each slot comes out
	 * exactly once, in ascending order, and the next call says empty. */
	for (rep = 0; rep < 3; rep++)
		for (i = 0; i < UROCE_SHM_DB_SLOTS; i++)
			uroce_shm_db_ring(db, (i * 2654435761u) % UROCE_SHM_DB_SLOTS);
	while ((s = uroce_shm_db_next(&rd)) >= 0) {
		cr_assert_lt(s, (int)UROCE_SHM_DB_SLOTS);
		cr_assert_eq(seen[s], 0, "slot %d twice", s);
		seen[s] = 1;
		n++;
	}
	cr_expect_eq(n, (int)UROCE_SHM_DB_SLOTS);
	cr_expect_eq(rd.bad_slot, 0);
	cr_expect_eq(rd.harvests, 1);
	free(db);
}

Test(doorbell, slots_not_handed_out_are_dropped_and_counted)
{
	struct uroce_shm_db_block *db = new_block();
	struct uroce_shm_db_reader rd;

	/* The daemon gave this client 70 slots (0..69). */
	uroce_shm_db_reader_init(&rd, db, 70);
	uroce_shm_db_ring(db, 69);
	uroce_shm_db_ring(db, 70);
	uroce_shm_db_ring(db, 4000);
	/* Expect: a slot index from the client is masked into the block. */
	uroce_shm_db_ring(db, 0x10000 + 3);
	/* Expect: 3 then 69; 70 and 4000 dropped and counted. */
	cr_expect_eq(uroce_shm_db_next(&rd), 3);
	cr_expect_eq(uroce_shm_db_next(&rd), 69);
	cr_expect_eq(uroce_shm_db_next(&rd), -EAGAIN);
	cr_expect_eq(rd.bad_slot, 2);
	/* Expect: requeue of an out-of-range slot is refused and counted. */
	uroce_shm_db_requeue(&rd, 500);
	cr_expect_eq(rd.bad_slot, 3);
	cr_expect_eq(uroce_shm_db_next(&rd), -EAGAIN);
	free(db);
}

Test(doorbell, hostile_summary_and_words)
{
	struct uroce_shm_db_block *db = new_block();
	struct uroce_shm_db_reader rd;
	int s, n = 0;

	uroce_shm_db_reader_init(&rd, db, 64);
	/* Expect: a summary with every bit and words full of garbage cost one
	 * bounded harvest; only slots 0..63 come out, the rest are counted. */
	db->summary = ~0ull;
	memset(db->words, 0xff, sizeof(db->words));
	db->words[5] = 0;
	while ((s = uroce_shm_db_next(&rd)) >= 0) {
		cr_assert_lt(s, 64);
		n++;
	}
	cr_expect_eq(n, 64);
	cr_expect_eq(rd.spurious, 1);
	cr_expect_eq(rd.bad_slot, 62ull * 64);
	/* Expect: word bits with no summary bit are simply not looked at. */
	db->words[0] = 1;
	cr_expect_eq(uroce_shm_db_next(&rd), -EAGAIN);
	free(db);
}

Test(doorbell, requeue_and_round_robin)
{
	struct uroce_shm_db_block *db = new_block();
	struct uroce_shm_db_reader rd;

	uroce_shm_db_reader_init(&rd, db, 256);
	uroce_shm_db_ring(db, 10);
	uroce_shm_db_ring(db, 200);
	/* Expect: 10 served, work left, requeued; a new ring of 10 while the
	 * private set is non-empty waits for the next harvest (200 first). */
	cr_expect_eq(uroce_shm_db_next(&rd), 10);
	uroce_shm_db_requeue(&rd, 10);
	cr_expect_eq(uroce_shm_db_next(&rd), 10);
	uroce_shm_db_ring(db, 10);
	cr_expect_eq(uroce_shm_db_next(&rd), 200);
	cr_expect_eq(uroce_shm_db_next(&rd), 10);
	cr_expect_eq(uroce_shm_db_next(&rd), -EAGAIN);
	free(db);
}

/* ---- concurrent: client threads post and ring (shm_concurrent.h) ---- */

Test(doorbell, concurrent_ring_and_harvest_loses_nothing, .timeout = 60)
{
	struct conc_db_result res;

	/* Expect: two client threads ring one block while the worker harvests;
	 * the worker drains a QP's ring only when its doorbell says so (never
	 * a scan) and still receives all 2 x 100000 entries, each QP's entries
	 * in posting order. A lost doorbell would strand entries in the
	 * 16-deep rings (and abort the test with a message). */
	res = conc_doorbell(100000, 30);
	cr_expect_eq(res.got, 200000);
	cr_expect_eq(res.misorder, 0);
	cr_expect_eq(res.bad_slot, 0);
}
