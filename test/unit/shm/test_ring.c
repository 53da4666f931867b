/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Tests for lib/shm/ring.c: geometry checks, wrap-around of the free-running
 * indices at 2^32, full and empty, hostile peer indices (detected, counted,
 * never trusted), the zero-copy and copy-out APIs, and a concurrent producer
 * and consumer in two threads and in two processes over a memfd.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "uroce_shm.h"
#include "shm_concurrent.h"

struct ent {
	uint64_t seq;
	uint64_t check;
};

#define CHECK(s) ((s) * 0x9e3779b97f4a7c15ull ^ 0x5555aaaa5555aaaaull)

static void *
ring_mem(uint32_t size, uint32_t esize, size_t *len)
{
	size_t l = uroce_shm_ring_mem_size(size, esize);
	void *m;

	cr_assert_neq(l, 0);
	m = aligned_alloc(64, l);
	cr_assert_not_null(m);
	memset(m, 0xa5, l);
	*len = l;
	return m;
}

/* Daemon-side consumer (untrusted peer) and client-side producer on one ring. */
static void *
pair(uint32_t size, uint32_t start, struct uroce_shm_ring *prod, struct uroce_shm_ring *cons)
{
	size_t len;
	void *m = ring_mem(size, sizeof(struct ent), &len);

	cr_assert_eq(uroce_shm_ring_init(cons, m, len, size, sizeof(struct ent), start,
					 UROCE_SHM_RING_CONSUMER, UROCE_SHM_RING_F_UNTRUSTED), 0);
	cr_assert_eq(uroce_shm_ring_attach(prod, m, len, UROCE_SHM_RING_PRODUCER, 0), 0);
	return m;
}

Test(ring, mem_size_geometry)
{
	/* Expect: header (256) + entries, rounded to 64; bad geometry gives 0. */
	cr_expect_eq(uroce_shm_ring_mem_size(1, 8), 256 + 64);
	cr_expect_eq(uroce_shm_ring_mem_size(8, 16), 256 + 128);
	cr_expect_eq(uroce_shm_ring_mem_size(4096, sizeof(struct uroce_shm_send_wqe)),
		     256 + 4096 * 320);
	cr_expect_eq(uroce_shm_ring_mem_size(0, 16), 0);
	cr_expect_eq(uroce_shm_ring_mem_size(3, 16), 0);
	cr_expect_eq(uroce_shm_ring_mem_size(UROCE_SHM_RING_MAX_SIZE * 2, 16), 0);
	cr_expect_eq(uroce_shm_ring_mem_size(8, 12), 0);
	cr_expect_eq(uroce_shm_ring_mem_size(8, 0), 0);
	cr_expect_eq(uroce_shm_ring_mem_size(8, UROCE_SHM_RING_MAX_ENTRY + 8), 0);
}

Test(ring, init_rejects_bad_arguments)
{
	struct uroce_shm_ring r;
	size_t len;
	uint8_t *m = ring_mem(8, 16, &len);

	/* Expect: -EINVAL for geometry, alignment, role, flags; -ENOSPC for length. */
	cr_expect_eq(uroce_shm_ring_init(&r, m, len, 6, 16, 0, UROCE_SHM_RING_CONSUMER, 0),
		     -EINVAL);
	cr_expect_eq(uroce_shm_ring_init(&r, m, len, 8, 20, 0, UROCE_SHM_RING_CONSUMER, 0),
		     -EINVAL);
	cr_expect_eq(uroce_shm_ring_init(&r, m + 8, len - 8, 8, 16, 0,
					 UROCE_SHM_RING_CONSUMER, 0), -EINVAL);
	cr_expect_eq(uroce_shm_ring_init(&r, m, len, 8, 16, 0, 7, 0), -EINVAL);
	cr_expect_eq(uroce_shm_ring_init(&r, m, len, 8, 16, 0, UROCE_SHM_RING_CONSUMER, 0x80),
		     -EINVAL);
	cr_expect_eq(uroce_shm_ring_init(&r, m, len - 1, 8, 16, 0, UROCE_SHM_RING_CONSUMER, 0),
		     -ENOSPC);
	cr_expect_eq(uroce_shm_ring_init(&r, m, len, 8, 16, 0, UROCE_SHM_RING_CONSUMER, 0), 0);
	free(m);
}

Test(ring, attach_validates_header)
{
	struct uroce_shm_ring c, p;
	size_t len;
	uint8_t *m = ring_mem(8, 16, &len);
	struct uroce_shm_ring_hdr *h = (void *)m;

	cr_assert_eq(uroce_shm_ring_init(&c, m, len, 8, 16, 0, UROCE_SHM_RING_CONSUMER, 0), 0);
	/* Expect: a well-formed ring attaches; a short mapping does not. */
	cr_expect_eq(uroce_shm_ring_attach(&p, m, len, UROCE_SHM_RING_PRODUCER, 0), 0);
	cr_expect_eq(p.size, 8);
	cr_expect_eq(p.entry_size, 16);
	cr_expect_eq(uroce_shm_ring_attach(&p, m, len - 64, UROCE_SHM_RING_PRODUCER, 0),
		     -ENOSPC);
	cr_expect_eq(uroce_shm_ring_attach(&p, m, 100, UROCE_SHM_RING_PRODUCER, 0), -ENOSPC);
	/* Expect: wrong major -> -EPROTONOSUPPORT. */
	h->abi_major = UROCE_SHM_ABI_MAJOR + 1;
	cr_expect_eq(uroce_shm_ring_attach(&p, m, len, UROCE_SHM_RING_PRODUCER, 0),
		     -EPROTONOSUPPORT);
	h->abi_major = UROCE_SHM_ABI_MAJOR;
	/* Expect: geometry that is not a power of two, or too big -> -EPROTO. */
	h->size = 6;
	cr_expect_eq(uroce_shm_ring_attach(&p, m, len, UROCE_SHM_RING_PRODUCER, 0), -EPROTO);
	h->size = 1u << 30;
	cr_expect_eq(uroce_shm_ring_attach(&p, m, len, UROCE_SHM_RING_PRODUCER, 0), -EPROTO);
	h->size = 8;
	h->entries_offset = 128;
	cr_expect_eq(uroce_shm_ring_attach(&p, m, len, UROCE_SHM_RING_PRODUCER, 0), -EPROTO);
	h->entries_offset = 256;
	/* Expect: indices further apart than size -> -EIO. */
	h->prod = h->cons + 9;
	cr_expect_eq(uroce_shm_ring_attach(&p, m, len, UROCE_SHM_RING_PRODUCER, 0), -EIO);
	h->prod = h->cons;
	h->magic = 0;
	cr_expect_eq(uroce_shm_ring_attach(&p, m, len, UROCE_SHM_RING_PRODUCER, 0), -EPROTO);
	free(m);
}

Test(ring, empty_and_full)
{
	struct uroce_shm_ring p, c;
	struct ent e[9], out[9];
	uint32_t i;
	void *m = pair(8, 0, &p, &c);

	for (i = 0; i < 9; i++)
		e[i] = (struct ent){i, CHECK(i)};
	/* Expect: a new ring is empty: nothing to dequeue, 8 free. */
	cr_expect_eq(uroce_shm_ring_dequeue_burst(&c, out, 1), 0);
	cr_expect_eq(uroce_shm_ring_used_count(&c), 0);
	cr_expect_eq(uroce_shm_ring_free_count(&p), 8);
	/* Expect: 9 offered, 8 taken; the ring is then full. */
	cr_expect_eq(uroce_shm_ring_enqueue_burst(&p, e, 9), 8);
	cr_expect_eq(uroce_shm_ring_free_count(&p), 0);
	cr_expect_eq(uroce_shm_ring_enqueue_burst(&p, &e[8], 1), 0);
	cr_expect_eq(uroce_shm_ring_used_count(&c), 8);
	/* Expect: all 8 come out in order; then empty again, and 8 free. */
	cr_expect_eq(uroce_shm_ring_dequeue_burst(&c, out, 9), 8);
	for (i = 0; i < 8; i++)
		cr_expect_eq(out[i].seq, i);
	cr_expect_eq(uroce_shm_ring_dequeue_burst(&c, out, 1), 0);
	cr_expect_eq(uroce_shm_ring_free_count(&p), 8);
	cr_expect_not(uroce_shm_ring_is_corrupt(&c));
	cr_expect_not(uroce_shm_ring_is_corrupt(&p));
	/* Expect: the wrong side's calls do nothing. */
	cr_expect_eq(uroce_shm_ring_enqueue_burst(&c, e, 1), 0);
	cr_expect_eq(uroce_shm_ring_dequeue_burst(&p, out, 1), 0);
	free(m);
}

Test(ring, wraps_at_2_pow_32)
{
	struct uroce_shm_ring p, c;
	struct ent e[8], out[8];
	uint64_t next_in = 0, next_out = 0;
	uint32_t round, n, k, i;
	void *m = pair(8, UINT32_MAX - 20, &p, &c);

	/* Expect: bursts of 1..8 cross the 2^32 index wrap several times over
	 * with every entry in order, exactly full at 8 and exactly empty. */
	for (round = 0; round < 200; round++) {
		n = round % 8 + 1;
		for (i = 0; i < n; i++) {
			e[i].seq = next_in + i;
			e[i].check = CHECK(next_in + i);
		}
		cr_assert_eq(uroce_shm_ring_enqueue_burst(&p, e, n), n);
		next_in += n;
		cr_assert_eq(uroce_shm_ring_used_count(&c), n);
		cr_assert_eq(uroce_shm_ring_free_count(&p), 8 - n);
		k = uroce_shm_ring_dequeue_burst(&c, out, 8);
		cr_assert_eq(k, n);
		for (i = 0; i < k; i++) {
			cr_assert_eq(out[i].seq, next_out);
			cr_assert_eq(out[i].check, CHECK(next_out));
			next_out++;
		}
	}
	/* The indices really went through zero. */
	cr_expect_lt(p.head, 2000);
	cr_expect_eq(p.head, c.head);
	cr_expect_eq(p.head, (uint32_t)(UINT32_MAX - 20 + next_in));
	/* Expect: full exactly at the wrap point too. */
	cr_assert_eq(uroce_shm_ring_enqueue_burst(&p, e, 8), 8);
	cr_expect_eq(uroce_shm_ring_enqueue_burst(&p, e, 1), 0);
	cr_expect_not(uroce_shm_ring_is_corrupt(&c));
	free(m);
}

Test(ring, full_exactly_across_wrap)
{
	struct uroce_shm_ring p, c;
	struct ent e[4] = {{1, 1}, {2, 2}, {3, 3}, {4, 4}}, out[4];
	/* prod = UINT32_MAX - 1; 4 entries take it to 2 across zero. */
	void *m = pair(4, UINT32_MAX - 1, &p, &c);

	cr_assert_eq(uroce_shm_ring_enqueue_burst(&p, e, 4), 4);
	cr_expect_eq(p.head, 2);
	/* Expect: prod - cons == size across the wrap is full, not corrupt. */
	cr_expect_eq(uroce_shm_ring_used_count(&c), 4);
	cr_expect_eq(uroce_shm_ring_free_count(&p), 0);
	cr_assert_eq(uroce_shm_ring_dequeue_burst(&c, out, 4), 4);
	cr_expect_eq(out[3].seq, 4);
	free(m);
}

Test(ring, hostile_producer_index_beyond_size)
{
	struct uroce_shm_ring p, c;
	struct ent out[4];
	void *m = pair(8, 100, &p, &c);

	/* Expect: the client writes prod = cons + size + 1: detected, counted,
	 * ring marked corrupt, nothing copied out. */
	c.hdr->prod = 100 + 9;
	cr_expect_eq(uroce_shm_ring_dequeue_burst(&c, out, 4), 0);
	cr_expect(uroce_shm_ring_is_corrupt(&c));
	cr_expect_eq(c.bad_index, 1);
	cr_expect_eq(c.head, 100);
	/* Expect: sticky; even a now-sane index is not trusted again, and the
	 * count does not grow because shared memory is not read again. */
	c.hdr->prod = 101;
	cr_expect_eq(uroce_shm_ring_dequeue_burst(&c, out, 4), 0);
	cr_expect_eq(uroce_shm_ring_used_count(&c), 0);
	cr_expect_eq(c.bad_index, 1);
	free(m);
}

Test(ring, hostile_producer_index_behind_consumer)
{
	struct uroce_shm_ring p, c;
	struct ent e[3] = {{0, 0}, {1, 1}, {2, 2}}, out[4];
	void *m = pair(8, UINT32_MAX - 1, &p, &c);

	cr_assert_eq(uroce_shm_ring_enqueue_burst(&p, e, 3), 3);
	cr_assert_eq(uroce_shm_ring_dequeue_burst(&c, out, 4), 3);
	/* Expect: prod moved back behind our consumer index (across the wrap):
	 * prod - cons wraps to ~2^32, detected. */
	c.hdr->prod = c.head - 1;
	cr_expect_eq(uroce_shm_ring_dequeue_burst(&c, out, 1), 0);
	cr_expect(uroce_shm_ring_is_corrupt(&c));
	cr_expect_eq(c.bad_index, 1);
	free(m);
}

Test(ring, producer_index_exactly_size_ahead_is_valid)
{
	struct uroce_shm_ring p, c;
	struct ent out[8];
	void *m = pair(8, 5, &p, &c);

	/* Expect: prod = cons + size is a full ring, accepted (whatever bytes
	 * the slots hold are copied out for the daemon to validate). */
	c.hdr->prod = 5 + 8;
	cr_expect_eq(uroce_shm_ring_dequeue_burst(&c, out, 8), 8);
	cr_expect_not(uroce_shm_ring_is_corrupt(&c));
	free(m);
}

Test(ring, hostile_consumer_index)
{
	struct uroce_shm_ring p, c;
	size_t len;
	struct ent e = {7, 7};
	void *m = ring_mem(8, sizeof(struct ent), &len);

	/* Daemon produces (a CQ), the client consumes. */
	cr_assert_eq(uroce_shm_ring_init(&p, m, len, 8, sizeof(e), 0, UROCE_SHM_RING_PRODUCER,
					 UROCE_SHM_RING_F_UNTRUSTED), 0);
	cr_assert_eq(uroce_shm_ring_attach(&c, m, len, UROCE_SHM_RING_CONSUMER, 0), 0);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(uroce_shm_ring_enqueue_burst(&p, &e, 1), 1);
	/* Expect: cons ahead of prod -> corrupt on the producer's next refresh. */
	p.hdr->cons = 9;
	cr_expect_eq(uroce_shm_ring_enqueue_burst(&p, &e, 1), 0);
	cr_expect(uroce_shm_ring_is_corrupt(&p));
	cr_expect_eq(p.bad_index, 1);
	cr_expect_eq(uroce_shm_ring_free_count(&p), 0);
	free(m);
}

Test(ring, consumer_index_more_than_size_behind)
{
	struct uroce_shm_ring p, c;
	size_t len;
	struct ent e = {7, 7};
	void *m = ring_mem(8, sizeof(struct ent), &len);

	cr_assert_eq(uroce_shm_ring_init(&p, m, len, 8, sizeof(e), 0, UROCE_SHM_RING_PRODUCER,
					 UROCE_SHM_RING_F_UNTRUSTED), 0);
	cr_assert_eq(uroce_shm_ring_attach(&c, m, len, UROCE_SHM_RING_CONSUMER, 0), 0);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(uroce_shm_ring_enqueue_burst(&p, &e, 1), 1);
	/* Expect: cons = prod - 9 -> corrupt. */
	p.hdr->cons = (uint32_t)0 - 1;
	cr_expect_eq(uroce_shm_ring_free_count(&p), 0);
	cr_expect(uroce_shm_ring_is_corrupt(&p));
	cr_expect_eq(p.bad_index, 1);
	free(m);
}

Test(ring, own_index_and_geometry_never_reread)
{
	struct uroce_shm_ring p, c;
	struct ent e[2] = {{10, CHECK(10)}, {11, CHECK(11)}}, out[2];
	void *m = pair(8, 0, &p, &c);

	cr_assert_eq(uroce_shm_ring_enqueue_burst(&p, e, 2), 2);
	/* Expect: the client scribbles on the daemon's cons and on the geometry;
	 * the daemon still reads from its private index with its private size. */
	c.hdr->cons = 12345;
	c.hdr->size = 1u << 20;
	c.hdr->entry_size = 8;
	cr_assert_eq(uroce_shm_ring_dequeue_burst(&c, out, 2), 2);
	cr_expect_eq(out[0].seq, 10);
	cr_expect_eq(out[1].seq, 11);
	cr_expect_eq(c.head, 2);
	cr_expect_eq(c.hdr->cons, 2, "the consumer republishes its own index");
	free(m);
}

Test(ring, zero_copy_trusted_direction_only)
{
	struct uroce_shm_ring p, c, cu;
	size_t len;
	struct ent *slot;
	const struct ent *in;
	uint32_t n, i;
	void *m = ring_mem(8, sizeof(struct ent), &len);

	cr_assert_eq(uroce_shm_ring_init(&p, m, len, 8, sizeof(struct ent), UINT32_MAX - 2,
					 UROCE_SHM_RING_PRODUCER, 0), 0);
	cr_assert_eq(uroce_shm_ring_attach(&c, m, len, UROCE_SHM_RING_CONSUMER, 0), 0);
	cr_assert_eq(uroce_shm_ring_attach(&cu, m, len, UROCE_SHM_RING_CONSUMER,
					   UROCE_SHM_RING_F_UNTRUSTED), 0);
	/* Expect: reserve caps at the free count; slots wrap; commit publishes. */
	n = uroce_shm_ring_prod_reserve(&p, 20);
	cr_assert_eq(n, 8);
	for (i = 0; i < 6; i++) {
		slot = uroce_shm_ring_prod_slot(&p, i);
		slot->seq = i;
		slot->check = CHECK(i);
	}
	uroce_shm_ring_prod_commit(&p, 6);
	/* Expect: an untrusted handle cannot peek in place. */
	cr_expect_eq(uroce_shm_ring_cons_peek(&cu, 6), 0);
	/* Expect: the trusted consumer sees 6 in place, releases 4, then 2. */
	n = uroce_shm_ring_cons_peek(&c, 16);
	cr_assert_eq(n, 6);
	for (i = 0; i < n; i++) {
		in = uroce_shm_ring_cons_slot(&c, i);
		cr_expect_eq(in->seq, i);
		cr_expect_eq(in->check, CHECK(i));
	}
	uroce_shm_ring_cons_release(&c, 4);
	cr_expect_eq(uroce_shm_ring_cons_peek(&c, 16), 2);
	cr_expect_eq(((const struct ent *)uroce_shm_ring_cons_slot(&c, 0))->seq, 4);
	uroce_shm_ring_cons_release(&c, 2);
	cr_expect_eq(uroce_shm_ring_cons_peek(&c, 16), 0);
	cr_expect_eq(uroce_shm_ring_free_count(&p), 8);
	free(m);
}

/* ---- concurrent producer and consumer (shm_concurrent.h) ---- */

#define CONC_ENTRIES 2000000u
#define CONC_SIZE 1024u

Test(ring, concurrent_two_threads, .timeout = 60)
{
	uint32_t end = 0;

	/* Expect: 2 million entries, in bursts of 1..31 against bursts of 64,
	 * through a 1024-entry ring whose indices wrap at 2^32 mid-run, all
	 * arrive in order with intact contents; neither side sees corruption. */
	cr_expect_eq(conc_ring_threads(CONC_SIZE, UINT32_MAX - 100000, CONC_ENTRIES, &end), 0);
	cr_expect_eq(end, (uint32_t)(UINT32_MAX - 100000 + CONC_ENTRIES));
}

Test(ring, concurrent_two_processes_memfd, .timeout = 60)
{
	struct uroce_shm_segment seg;
	struct uroce_shm_ring p, c;
	size_t len = uroce_shm_ring_mem_size(CONC_SIZE, sizeof(struct conc_ent));
	int status;
	pid_t pid;

	cr_assert_eq(uroce_shm_segment_create(&seg, "ring-test", len, 0), 0);
	/* The "daemon" (this process) formats and consumes; it trusts nothing. */
	cr_assert_eq(uroce_shm_ring_init(&c, seg.addr, seg.size, CONC_SIZE, sizeof(struct conc_ent),
					 UINT32_MAX - 777, UROCE_SHM_RING_CONSUMER,
					 UROCE_SHM_RING_F_UNTRUSTED), 0);
	pid = fork();
	if (pid == 0) {
		/* No Criterion call in the child: with --full-stats even a
		 * passing assertion is a message to the runner, which must
		 * come from the test process itself. */
		/* The "client" maps the same memfd afresh, as a real one would. */
		struct uroce_shm_segment cseg;
		struct conc_prod cc;
		int fd = dup(seg.fd);

		if (fd < 0 || uroce_shm_segment_map(&cseg, fd, len) != 0 ||
		    uroce_shm_ring_attach(&p, cseg.addr, cseg.size, UROCE_SHM_RING_PRODUCER,
					  0) != 0) {
			/* Make the waiting parent stop: an impossible producer
			 * index, written through the inherited mapping. */
			c.hdr->prod = UINT32_MAX - 777 + CONC_SIZE + 1;
			_exit(2);
		}
		cc = (struct conc_prod){.r = &p, .count = CONC_ENTRIES};
		conc_producer(&cc);
		_exit(uroce_shm_ring_is_corrupt(&p) ? 4 : 0);
	}
	cr_assert_gt(pid, 0, "fork: %s", strerror(errno));
	/* Expect: 2 million entries across processes, in order and intact. */
	cr_expect_eq(conc_consume(&c, CONC_ENTRIES), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
	cr_expect_not(uroce_shm_ring_is_corrupt(&c));
	uroce_shm_segment_unmap(&seg);
}
