/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * lib/dataplane/fault.c: drop, duplicate, reorder and corrupt on real mbufs.
 * Mbufs need a mempool and a mempool needs EAL, so each test starts EAL in
 * ordinary memory (--no-huge --no-pci --in-memory, 64 MB, one lcore): no
 * hugepages, no device, no files left behind. Frames are real RoCEv2 frames
 * built with lib/wire and carry a sequence number in their payload.
 */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "dp_internal.h"

#define POOL_SIZE 4095
#define PAYLEN 64
#define MAX_FRAME 256

static struct rte_mempool *pool;
static unsigned int pool_start; /* mbufs available before the test */
static bool eal_up;

static void
eal_setup(void)
{
	char prefix[64];
	/* --in-memory is refused with --no-huge (which implies --legacy-mem); --no-shconf
	 * is its part that matters here: no shared config file. */
	char *argv[] = {"test_fault", "--no-huge", "--no-pci", "-m", "64", "--no-shconf",
			"--no-telemetry", "--file-prefix", prefix, "-l", "0", "--log-level",
			"*:error", NULL};

	snprintf(prefix, sizeof(prefix), "uroce-fault-%d", (int)getpid());
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0)
		cr_skip_test("EAL cannot start even with --no-huge --in-memory: %s",
			     rte_strerror(rte_errno));
	eal_up = true;
	/* No per-lcore cache, so the available count is exact. */
	pool = rte_pktmbuf_pool_create("fault_test", POOL_SIZE, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	cr_assert_not_null(pool, "mempool: %s", rte_strerror(rte_errno));
	pool_start = rte_mempool_avail_count(pool);
}

static void
eal_teardown(void)
{
	char dir[PATH_MAX];

	if (!eal_up)
		return;
	rte_mempool_free(pool);
	/* EAL creates its (here empty) runtime directory and leaves it behind. */
	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	rmdir(dir);
}

TestSuite(dp_fault, .init = eal_setup, .fini = eal_teardown);

/* Expect: every mbuf the test took is back in the pool. */
static void
expect_no_leak(void)
{
	cr_expect_eq(rte_mempool_avail_count(pool), pool_start, "leaked %u mbufs",
		     pool_start - rte_mempool_avail_count(pool));
}

/* A RoCEv2 RC SEND_ONLY frame, 198.18.0.1 -> 198.18.0.2 (or 2001:2::1 -> ::2), ICRC filled. */
static uint32_t
build_roce(uint8_t *buf, uint32_t seq, enum uroce_ip_family family)
{
	struct uroce_encap e;
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	uint32_t l2, hdr, ib_len, i;

	memset(&e, 0, sizeof(e));
	memcpy(e.dmac, "\x02\x00\xc6\x12\x00\x02", 6);
	memcpy(e.smac, "\x02\x00\xc6\x12\x00\x01", 6);
	e.family = family;
	if (family == UROCE_IP_V4) {
		memcpy(e.sgid, "\0\0\0\0\0\0\0\0\0\0\xff\xff\xc6\x12\x00\x01", 16);
		memcpy(e.dgid, "\0\0\0\0\0\0\0\0\0\0\xff\xff\xc6\x12\x00\x02", 16);
	} else {
		memcpy(e.sgid, "\x20\x01\x00\x02\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
		memcpy(e.dgid, "\x20\x01\x00\x02\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
	}
	e.sport = 0xC123;
	memset(&bth, 0, sizeof(bth));
	bth.opcode = UROCE_OP_SEND_ONLY; /* RC */
	bth.pkey = 0xffff;
	bth.dqpn = 0x11;
	bth.psn = seq & 0xffffff;
	memset(&ext, 0, sizeof(ext));
	l2 = uroce_encap_len(&e);
	hdr = uroce_hdr_build(buf + l2, MAX_FRAME - l2, &bth, &ext, PAYLEN);
	cr_assert_neq(hdr, 0);
	uroce_put_be32(buf + l2 + hdr, seq);
	for (i = 4; i < PAYLEN; i++)
		buf[l2 + hdr + i] = (uint8_t)(i * 7 + 1);
	ib_len = hdr + PAYLEN + UROCE_ICRC_LEN;
	cr_assert_eq(uroce_encap_build(buf, MAX_FRAME, &e, ib_len), l2);
	uroce_icrc_fill(buf + UROCE_ETH_LEN, l2 - UROCE_ETH_LEN + ib_len - UROCE_ICRC_LEN, family);
	return l2 + ib_len;
}

/* A broadcast ARP request (28 bytes after Ethernet, padded to 60). */
static uint32_t
build_arp(uint8_t *buf)
{
	memset(buf, 0, 60);
	memset(buf, 0xff, 6);
	memcpy(buf + 6, "\x02\x00\xc6\x12\x00\x01", 6);
	uroce_put_be16(buf + 12, UROCE_ETHERTYPE_ARP);
	memcpy(buf + 14, "\x00\x01\x08\x00\x06\x04\x00\x01", 8);
	memcpy(buf + 22, "\x02\x00\xc6\x12\x00\x01\xc6\x12\x00\x01", 10);
	memcpy(buf + 38, "\xc6\x12\x00\x02", 4);
	return 60;
}

static struct rte_mbuf *
mbuf_of(const uint8_t *frame, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *d;

	cr_assert_not_null(m, "pool empty");
	d = rte_pktmbuf_append(m, (uint16_t)len);
	cr_assert_not_null(d);
	memcpy(d, frame, len);
	return m;
}

static struct rte_mbuf *
roce_mbuf(uint32_t seq)
{
	uint8_t f[MAX_FRAME];

	return mbuf_of(f, build_roce(f, seq, UROCE_IP_V4));
}

/* The sequence number a frame from roce_mbuf() carries. */
static uint32_t
seq_of(const struct rte_mbuf *m)
{
	struct uroce_frame fr;
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);

	cr_assert_eq(uroce_frame_parse(b, m->data_len, &fr), UROCE_WIRE_OK);
	return uroce_get_be32(b + fr.bth_off + UROCE_BTH_LEN);
}

static void
free_all(struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++)
		rte_pktmbuf_free(pkts[i]);
}

static void
cfg_init(struct uroce_dp_port_cfg *c, uint64_t seed)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->section, sizeof(c->section), "port.0");
	c->fault_seed = seed;
}

Test(dp_fault, zero_fractions_are_a_no_op)
{
	struct uroce_dp_port_cfg c;
	struct dp_counters cnt;
	struct dp_fault f, dummy, *arr = &dummy;
	struct rte_mbuf *pkts[8], *orig[8];
	uint16_t i;

	cfg_init(&c, 1);
	memset(&cnt, 0, sizeof(cnt));
	/* Expect: nothing wanted, nothing allocated, a disabled state. */
	cr_expect_not(dp_fault_wanted(&c));
	cr_expect_eq(dp_fault_create(&c, 0, 2, &cnt, SOCKET_ID_ANY, &arr), 0);
	cr_expect_null(arr);
	dp_fault_init(&f, &c, 0, 0, DP_FAULT_RX, &cnt);
	cr_expect_not(f.enabled);
	for (i = 0; i < 8; i++)
		orig[i] = pkts[i] = roce_mbuf(i);
	/* Expect: the burst comes back as it was, same mbufs, same order, nothing counted. */
	cr_expect_eq(dp_fault_burst(&f, pkts, 8, 8, pool), 8);
	cr_expect_arr_eq(pkts, orig, sizeof(pkts));
	cr_expect_eq(cnt.fault_dropped + cnt.fault_duplicated + cnt.fault_reordered +
		     cnt.fault_corrupted, 0);
	cr_expect_eq(dp_fault_flush(&f, pkts, 8), 0);
	free_all(pkts, 8);
	expect_no_leak();
}

static bool
is_arp(const struct rte_mbuf *m)
{
	return uroce_get_be16(rte_pktmbuf_mtod(m, const uint8_t *) + 12) == UROCE_ETHERTYPE_ARP;
}

/*
 * Run @total RoCEv2 frames through @f in bursts of @burst, with an ARP frame
 * after every @arp_every of them if that is not 0. Record the sequence
 * numbers of the RoCEv2 frames that come out in @trace; return their count.
 * Expect: every ARP frame comes out.
 */
static uint32_t
run_mixed(struct dp_fault *f, uint32_t total, uint16_t burst, uint16_t room, uint32_t *trace,
	  uint32_t trace_max, unsigned int arp_every)
{
	struct rte_mbuf *pkts[64];
	uint8_t arp[64];
	uint32_t seq = 0, got = 0, arp_in = 0, arp_out = 0;
	uint16_t i, n, k;

	cr_assert(room <= 64 && burst <= room);
	build_arp(arp);
	while (seq < total) {
		for (n = 0; n < burst && seq < total; n++) {
			if (arp_every != 0 && seq % arp_every == 0 && arp_in <= seq / arp_every) {
				pkts[n] = mbuf_of(arp, 60);
				arp_in++;
			} else {
				pkts[n] = roce_mbuf(seq++);
			}
		}
		k = dp_fault_burst(f, pkts, n, room, pool);
		cr_assert(k <= room);
		for (i = 0; i < k; i++) {
			if (is_arp(pkts[i])) {
				arp_out++;
				continue;
			}
			if (trace != NULL && got < trace_max)
				trace[got] = seq_of(pkts[i]);
			got++;
		}
		free_all(pkts, k);
	}
	k = dp_fault_flush(f, pkts, room);
	for (i = 0; i < k; i++) {
		if (trace != NULL && got < trace_max)
			trace[got] = seq_of(pkts[i]);
		got++;
	}
	free_all(pkts, k);
	cr_expect_eq(arp_out, arp_in);
	return got;
}

static uint32_t
run_stream(struct dp_fault *f, uint32_t total, uint16_t burst, uint16_t room, uint32_t *trace,
	   uint32_t trace_max)
{
	return run_mixed(f, total, burst, room, trace, trace_max, 0);
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

Test(dp_fault, drop_fraction_is_sane)
{
	struct uroce_dp_port_cfg c;
	struct dp_counters cnt;
	struct dp_fault f;
	uint32_t got;

	cfg_init(&c, 42);
	c.fault_drop = 0.1;
	memset(&cnt, 0, sizeof(cnt));
	dp_fault_init(&f, &c, 0, 0, DP_FAULT_RX, &cnt);
	got = run_stream(&f, 100000, 32, 32, NULL, 0);
	/*
	 * Expect: about 10000 of 100000 dropped. Binomial sd is ~95, so
	 * 9000..11000 is more than 10 sd: a failure is a bug, not bad luck.
	 */
	cr_expect(cnt.fault_dropped >= 9000 && cnt.fault_dropped <= 11000, "dropped %lu",
		  (unsigned long)cnt.fault_dropped);
	cr_expect_eq(got + cnt.fault_dropped, 100000);
	cr_expect_eq(cnt.fault_duplicated + cnt.fault_reordered + cnt.fault_corrupted, 0);
	expect_no_leak();
}

Test(dp_fault, same_seed_same_decisions)
{
	static uint32_t a[3000], b[3000], d[3000];
	struct uroce_dp_port_cfg c;
	struct dp_counters ca, cb, cd;
	struct dp_fault fa, fb, fd;
	uint32_t na, nb, nd;

	cfg_init(&c, 7);
	c.fault_drop = 0.2;
	c.fault_dup = 0.1;
	c.fault_reorder = 0.1;
	memset(&ca, 0, sizeof(ca));
	memset(&cb, 0, sizeof(cb));
	memset(&cd, 0, sizeof(cd));
	dp_fault_init(&fa, &c, 1, 2, DP_FAULT_TX, &ca);
	dp_fault_init(&fb, &c, 1, 2, DP_FAULT_TX, &cb);
	/* Expect: two states from the same seed, port, worker and side agree packet by packet. */
	na = run_stream(&fa, 2000, 16, 32, a, 3000);
	nb = run_stream(&fb, 2000, 16, 32, b, 3000);
	cr_assert_eq(na, nb);
	cr_expect_arr_eq(a, b, na * sizeof(a[0]));
	cr_expect_eq(memcmp(&ca, &cb, sizeof(ca)), 0);
	/* Expect: another worker draws its own stream from the same seed. */
	dp_fault_init(&fd, &c, 1, 3, DP_FAULT_TX, &cd);
	nd = run_stream(&fd, 2000, 16, 32, d, 3000);
	cr_expect(nd != na || memcmp(a, d, na * sizeof(a[0])) != 0);
	expect_no_leak();
}

Test(dp_fault, other_traffic_does_not_shift_decisions)
{
	static uint32_t a[3000], b[3000];
	struct uroce_dp_port_cfg c;
	struct dp_counters ca, cb;
	struct dp_fault fa, fb;
	uint32_t na, nb;

	cfg_init(&c, 13);
	c.fault_drop = 0.2;
	c.fault_dup = 0.1;
	c.fault_corrupt = 0.1;
	memset(&ca, 0, sizeof(ca));
	memset(&cb, 0, sizeof(cb));
	dp_fault_init(&fa, &c, 0, 0, DP_FAULT_RX, &ca);
	dp_fault_init(&fb, &c, 0, 0, DP_FAULT_RX, &cb);
	/*
	 * Expect: the same 2000 RoCEv2 frames, alone or with an ARP frame after
	 * every third (which shifts burst boundaries, hence where duplicates
	 * land), meet the same faults: same counts, same frames out.
	 */
	na = run_mixed(&fa, 2000, 16, 32, a, 3000, 0);
	nb = run_mixed(&fb, 2000, 16, 32, b, 3000, 3);
	cr_assert_eq(na, nb);
	qsort(a, na, sizeof(a[0]), cmp_u32);
	qsort(b, nb, sizeof(b[0]), cmp_u32);
	cr_expect_arr_eq(a, b, na * sizeof(a[0]));
	cr_expect_eq(memcmp(&ca, &cb, sizeof(ca)), 0);
	cr_expect_gt(ca.fault_dropped, 0);
	cr_expect_gt(ca.fault_duplicated, 0);
	cr_expect_gt(ca.fault_corrupted, 0);
	expect_no_leak();
}

Test(dp_fault, dup_makes_identical_copies)
{
	struct uroce_dp_port_cfg c;
	struct dp_counters cnt;
	struct dp_fault f;
	struct rte_mbuf *pkts[16];
	uint16_t i, k;

	cfg_init(&c, 3);
	c.fault_dup = 1.0;
	memset(&cnt, 0, sizeof(cnt));
	dp_fault_init(&f, &c, 0, 0, DP_FAULT_TX, &cnt);
	for (i = 0; i < 8; i++)
		pkts[i] = roce_mbuf(100 + i);
	/* Expect: 8 frames and room for 16: the 8 originals in order, then 8 copies. */
	k = dp_fault_burst(&f, pkts, 8, 16, pool);
	cr_assert_eq(k, 16);
	cr_expect_eq(cnt.fault_duplicated, 8);
	for (i = 0; i < 8; i++) {
		struct rte_mbuf *o = pkts[i], *d = pkts[8 + i];

		cr_expect_eq(seq_of(o), 100 + i);
		/* Expect: a separate mbuf (the PMD frees each), byte for byte the same. */
		cr_expect_neq(o, d);
		cr_expect_eq(rte_mbuf_refcnt_read(d), 1);
		cr_assert_eq(d->pkt_len, o->pkt_len);
		cr_assert_eq(d->data_len, o->data_len);
		cr_expect_eq(memcmp(rte_pktmbuf_mtod(o, void *), rte_pktmbuf_mtod(d, void *),
				    o->data_len), 0, "copy %u differs", i);
	}
	free_all(pkts, k);
	/* Expect: with room for 12, only 4 copies fit; none is counted that was not made. */
	memset(&cnt, 0, sizeof(cnt));
	for (i = 0; i < 8; i++)
		pkts[i] = roce_mbuf(i);
	k = dp_fault_burst(&f, pkts, 8, 12, pool);
	cr_expect_eq(k, 12);
	cr_expect_eq(cnt.fault_duplicated, 4);
	free_all(pkts, k);
	expect_no_leak();
}

/* Corrupt @m through @f and check the damage: one byte after the BTH, bad ICRC. */
static void
check_corrupt(struct dp_fault *f, const uint8_t *frame, uint32_t len)
{
	struct rte_mbuf *pkts[1];
	struct uroce_frame fr;
	struct uroce_pkt pk;
	const uint8_t *b;
	uint32_t i, diffs = 0, where = 0;

	pkts[0] = mbuf_of(frame, len);
	/* Expect: the frame is intact before (the ICRC the builder wrote is right). */
	cr_assert_eq(uroce_parse(rte_pktmbuf_mtod(pkts[0], const uint8_t *), len, &fr, &pk),
		     UROCE_WIRE_OK);
	cr_assert_eq(dp_fault_burst(f, pkts, 1, 1, pool), 1);
	b = rte_pktmbuf_mtod(pkts[0], const uint8_t *);
	cr_assert_eq(pkts[0]->data_len, len);
	for (i = 0; i < len; i++) {
		if (b[i] != frame[i]) {
			diffs++;
			where = i;
		}
	}
	/* Expect: exactly one byte changed, after the UDP header and after the BTH. */
	cr_expect_eq(diffs, 1);
	cr_expect_geq(where, fr.bth_off + UROCE_BTH_LEN, "byte %u changed", where);
	cr_expect_lt(where, fr.bth_off + fr.ib_len);
	/* Expect: Ethernet, IP, UDP still parse; the ICRC check catches the damage. */
	cr_expect_eq(uroce_frame_parse(b, len, &fr), UROCE_WIRE_OK);
	cr_expect_eq(uroce_parse(b, len, &fr, &pk), UROCE_WIRE_BAD_ICRC);
	rte_pktmbuf_free(pkts[0]);
}

Test(dp_fault, corrupt_flips_one_byte_after_udp)
{
	struct uroce_dp_port_cfg c;
	struct dp_counters cnt;
	struct dp_fault f;
	uint8_t frame[MAX_FRAME];
	uint32_t len, i;

	cfg_init(&c, 9);
	c.fault_corrupt = 1.0;
	memset(&cnt, 0, sizeof(cnt));
	dp_fault_init(&f, &c, 0, 0, DP_FAULT_RX, &cnt);
	for (i = 0; i < 200; i++) {
		len = build_roce(frame, i, i % 2 ? UROCE_IP_V6 : UROCE_IP_V4);
		check_corrupt(&f, frame, len);
	}
	cr_expect_eq(cnt.fault_corrupted, 200);
	expect_no_leak();
}

Test(dp_fault, corrupt_copies_a_shared_frame)
{
	struct uroce_dp_port_cfg c;
	struct dp_counters cnt;
	struct dp_fault f;
	struct rte_mbuf *pkts[1], *kept;
	struct uroce_frame fr;
	struct uroce_pkt pk;
	uint8_t frame[MAX_FRAME];
	uint32_t len;

	cfg_init(&c, 9);
	c.fault_corrupt = 1.0;
	memset(&cnt, 0, sizeof(cnt));
	dp_fault_init(&f, &c, 0, 0, DP_FAULT_TX, &cnt);
	len = build_roce(frame, 5, UROCE_IP_V4);
	/* A TX frame the transport keeps for retransmission: refcnt 2. */
	kept = mbuf_of(frame, len);
	rte_mbuf_refcnt_update(kept, 1);
	pkts[0] = kept;
	cr_assert_eq(dp_fault_burst(&f, pkts, 1, 1, pool), 1);
	/* Expect: a corrupted copy goes out; the kept frame is untouched, one reference dropped. */
	cr_expect_neq(pkts[0], kept);
	cr_expect_eq(cnt.fault_corrupted, 1);
	cr_expect_eq(rte_mbuf_refcnt_read(kept), 1);
	cr_expect_eq(memcmp(rte_pktmbuf_mtod(kept, void *), frame, len), 0);
	cr_expect_eq(uroce_parse(rte_pktmbuf_mtod(pkts[0], const uint8_t *), len, &fr, &pk),
		     UROCE_WIRE_BAD_ICRC);
	rte_pktmbuf_free(pkts[0]);
	rte_pktmbuf_free(kept);
	expect_no_leak();
}

Test(dp_fault, reorder_keeps_every_packet)
{
	static uint32_t trace[2000];
	static uint8_t seen[1000];
	struct uroce_dp_port_cfg c;
	struct dp_counters cnt;
	struct dp_fault f;
	uint32_t got, i, inversions = 0;

	cfg_init(&c, 11);
	c.fault_reorder = 0.3;
	memset(&cnt, 0, sizeof(cnt));
	dp_fault_init(&f, &c, 0, 0, DP_FAULT_RX, &cnt);
	got = run_stream(&f, 1000, 16, 16, trace, 2000);
	/* Expect: the same multiset: 0..999, each exactly once. */
	cr_assert_eq(got, 1000);
	for (i = 0; i < got; i++) {
		cr_assert_lt(trace[i], 1000);
		seen[trace[i]]++;
	}
	for (i = 0; i < 1000; i++)
		cr_expect_eq(seen[i], 1, "seq %u seen %u times", i, seen[i]);
	/* Expect: but not in order, and about 300 held back. */
	for (i = 1; i < got; i++)
		inversions += trace[i] < trace[i - 1];
	cr_expect_gt(inversions, 0);
	cr_expect(cnt.fault_reordered >= 200 && cnt.fault_reordered <= 400, "reordered %lu",
		  (unsigned long)cnt.fault_reordered);
	expect_no_leak();
}

Test(dp_fault, held_packet_release_and_free)
{
	struct uroce_dp_port_cfg c;
	struct dp_counters cnt;
	struct dp_fault f;
	struct rte_mbuf *pkts[4];
	unsigned int i;
	uint16_t k;

	cfg_init(&c, 5);
	c.fault_reorder = 1.0;
	memset(&cnt, 0, sizeof(cnt));
	dp_fault_init(&f, &c, 0, 0, DP_FAULT_TX, &cnt);
	/* Expect: a lone frame is held back: nothing goes out. */
	pkts[0] = roce_mbuf(1);
	cr_expect_eq(dp_fault_burst(&f, pkts, 1, 4, pool), 0);
	cr_expect_eq(cnt.fault_reordered, 1);
	/* Expect: an idle link releases it after DP_FAULT_HOLD_POLLS empty calls, not before. */
	for (i = 1; i < DP_FAULT_HOLD_POLLS; i++)
		cr_assert_eq(dp_fault_burst(&f, pkts, 0, 4, pool), 0, "released at poll %u", i);
	k = dp_fault_burst(&f, pkts, 0, 4, pool);
	cr_assert_eq(k, 1);
	cr_expect_eq(seq_of(pkts[0]), 1);
	rte_pktmbuf_free(pkts[0]);
	/* Expect: with reorder = 1 every new frame swaps with the held one: 2 held, then 3 ... */
	pkts[0] = roce_mbuf(2);
	cr_expect_eq(dp_fault_burst(&f, pkts, 1, 4, pool), 0);
	pkts[0] = roce_mbuf(3);
	cr_assert_eq(dp_fault_burst(&f, pkts, 1, 4, pool), 1);
	cr_expect_eq(seq_of(pkts[0]), 2);
	rte_pktmbuf_free(pkts[0]);
	/* Expect: dp_fault_free() frees the held frame (3): no leak at stop. */
	cr_expect_not_null(f.held);
	dp_fault_free(&f);
	cr_expect_null(f.held);
	cr_expect_eq(dp_fault_flush(&f, pkts, 4), 0);
	expect_no_leak();
}

Test(dp_fault, not_roce_is_never_touched)
{
	struct uroce_dp_port_cfg c;
	struct dp_counters cnt;
	struct dp_fault f;
	struct rte_mbuf *pkts[32], *orig[32];
	uint8_t frame[MAX_FRAME];
	uint32_t len;
	uint16_t i;

	cfg_init(&c, 1);
	c.fault_drop = 1.0;
	memset(&cnt, 0, sizeof(cnt));
	dp_fault_init(&f, &c, 0, 0, DP_FAULT_RX, &cnt);
	for (i = 0; i < 32; i++) {
		if (i % 2 == 0) {
			len = build_arp(frame);
		} else {
			/* UDP to port 4792: not RoCEv2. */
			len = build_roce(frame, i, UROCE_IP_V4);
			uroce_put_be16(frame + UROCE_ETH_LEN + UROCE_IPV4_LEN + 2, 4792);
		}
		orig[i] = pkts[i] = mbuf_of(frame, len);
	}
	/* Expect: drop = 1, yet ARP and other UDP all pass, in order, unchanged. */
	cr_expect_eq(dp_fault_burst(&f, pkts, 32, 32, pool), 32);
	cr_expect_arr_eq(pkts, orig, sizeof(pkts));
	cr_expect_eq(cnt.fault_dropped, 0);
	free_all(pkts, 32);
	/* Expect: and a RoCEv2 frame in the same state is dropped. */
	pkts[0] = roce_mbuf(0);
	cr_expect_eq(dp_fault_burst(&f, pkts, 1, 1, pool), 0);
	cr_expect_eq(cnt.fault_dropped, 1);
	expect_no_leak();
}

Test(dp_fault, direction_and_create)
{
	struct uroce_dp_port_cfg c;
	struct dp_counters cnt[3];
	struct dp_fault *arr = NULL;
	struct rte_mbuf *pkts[2];

	cfg_init(&c, 1);
	c.fault_reorder = 1.0;
	c.fault_dir = UROCE_DP_FAULT_TX;
	memset(cnt, 0, sizeof(cnt));
	/* Expect: an RX and a TX state per worker; only TX is on; each counts into its worker. */
	cr_assert_eq(dp_fault_create(&c, 0, 2, cnt, SOCKET_ID_ANY, &arr), 0);
	cr_assert_not_null(arr);
	cr_expect_not(dp_fault_at(arr, 0, DP_FAULT_RX)->enabled);
	cr_expect_not(dp_fault_at(arr, 1, DP_FAULT_RX)->enabled);
	cr_expect(dp_fault_at(arr, 1, DP_FAULT_TX)->enabled);
	cr_expect_eq(dp_fault_at(arr, 1, DP_FAULT_TX)->cnt, &cnt[1]);
	pkts[0] = roce_mbuf(0);
	cr_expect_eq(dp_fault_burst(dp_fault_at(arr, 0, DP_FAULT_RX), pkts, 1, 2, pool), 1);
	/* Held in worker 1's TX state ... */
	cr_expect_eq(dp_fault_burst(dp_fault_at(arr, 1, DP_FAULT_TX), pkts, 1, 2, pool), 0);
	cr_expect_eq(cnt[1].fault_reordered, 1);
	cr_expect_eq(cnt[0].fault_reordered, 0);
	/* Expect: ... and freed by dp_fault_destroy(). */
	dp_fault_destroy(arr, 2);
	dp_fault_destroy(NULL, 2);
	expect_no_leak();
}

/* A RoCEv2 frame as build_roce() makes it, with traffic class @p tclass (the
 * IPv4 checksum and the ICRC made for it). */
static struct rte_mbuf *
roce_mbuf_tc(uint32_t seq, enum uroce_ip_family family, uint8_t tclass)
{
	uint8_t f[MAX_FRAME];
	uint32_t len = build_roce(f, seq, family);
	struct uroce_frame fr;

	cr_assert_eq(uroce_frame_parse(f, len, &fr), UROCE_WIRE_OK);
	if (family == UROCE_IP_V4) {
		uint32_t sum = 0, i;

		f[fr.l3_off + 1] = tclass;
		uroce_put_be16(f + fr.l3_off + 10, 0);
		for (i = 0; i < UROCE_IPV4_LEN; i += 2)
			sum += uroce_get_be16(f + fr.l3_off + i);
		while (sum >> 16)
			sum = (sum & 0xFFFF) + (sum >> 16);
		uroce_put_be16(f + fr.l3_off + 10, (uint16_t)~sum);
	} else {
		f[fr.l3_off] = (uint8_t)(0x60 | tclass >> 4);
		f[fr.l3_off + 1] = (uint8_t)((tclass & 0x0F) << 4 | (f[fr.l3_off + 1] & 0x0F));
	}
	return mbuf_of(f, len);
}

/*
 * Expect: fault_ce marks about its fraction of the ECT(0) RoCEv2 frames a
 * port receives CE, over IPv4 and IPv6; each marked frame still passes
 * uroce_parse() (IPv4 checksum fixed, ICRC intact) and carries CE; not-ECT
 * frames and ARP pass untouched (not-ECT counted); the TX side marks
 * nothing; nothing is dropped and no mbuf leaks.
 */
Test(dp_fault, ce_marks_received_ect_frames)
{
	static const enum uroce_ip_family fam[2] = { UROCE_IP_V4, UROCE_IP_V6 };
	struct uroce_dp_port_cfg c;
	struct dp_counters cnt;
	struct dp_fault rx, tx;
	struct rte_mbuf *pkts[32];
	struct uroce_frame fr;
	struct uroce_pkt pk;
	uint32_t ce = 0, total = 0, k, j;
	uint8_t arp[64];
	uint16_t i, n;
	int fi;

	cfg_init(&c, 9);
	c.fault_ce = 0.25;
	cr_expect(dp_fault_wanted(&c));
	memset(&cnt, 0, sizeof(cnt));
	dp_fault_init(&rx, &c, 0, 0, DP_FAULT_RX, &cnt);
	dp_fault_init(&tx, &c, 0, 0, DP_FAULT_TX, &cnt);
	cr_expect(rx.enabled);
	cr_expect_not(tx.enabled, "fault_ce never marks what the port sends");
	build_arp(arp);
	for (fi = 0; fi < 2; fi++) {
		for (k = 0; k < 250; k++) {
			for (i = 0; i < 16; i++)
				pkts[i] = roce_mbuf_tc(k * 16 + i, fam[fi], 0x6A);
			pkts[16] = mbuf_of(arp, 60);
			n = dp_fault_burst(&rx, pkts, 17, 32, pool);
			cr_assert_eq(n, 17);
			for (i = 0; i < 16; i++) {
				const uint8_t *b = rte_pktmbuf_mtod(pkts[i], uint8_t *);

				cr_assert_eq(uroce_parse(b, pkts[i]->data_len, &fr, &pk),
					     UROCE_WIRE_OK, "family %d frame %u", fam[fi],
					     k * 16 + i);
				cr_assert(fr.tclass == 0x6A || fr.tclass == 0x6B, "%#x", fr.tclass);
				ce += fr.tclass == 0x6B;
				total++;
			}
			cr_expect(is_arp(pkts[16]));
			free_all(pkts, n);
		}
	}
	/* 8000 frames at 0.25: 2000, sd ~39. */
	cr_expect(ce >= 1800 && ce <= 2200, "%u of %u marked", ce, total);
	cr_expect_eq(cnt.fault_ce_marked, ce);
	cr_expect_eq(cnt.fault_ce_not_ect, 0);
	/* Not-ECT frames: picked as often, left as they were. */
	for (j = 0; j < 100; j++) {
		pkts[0] = roce_mbuf_tc(j, UROCE_IP_V4, 0x68);
		cr_assert_eq(dp_fault_burst(&rx, pkts, 1, 32, pool), 1);
		cr_assert_eq(uroce_parse(rte_pktmbuf_mtod(pkts[0], uint8_t *), pkts[0]->data_len,
					 &fr, &pk), UROCE_WIRE_OK);
		cr_expect_eq(fr.tclass, 0x68);
		free_all(pkts, 1);
	}
	cr_expect_gt(cnt.fault_ce_not_ect, 0);
	cr_expect_eq(cnt.fault_ce_marked, ce);
	cr_expect_eq(cnt.fault_dropped + cnt.fault_duplicated + cnt.fault_reordered +
		     cnt.fault_corrupted, 0);
	/* Expect: the other faults keep their fractions with fault_ce on. */
	cfg_init(&c, 42);
	c.fault_drop = 0.1;
	c.fault_ce = 0.5;
	memset(&cnt, 0, sizeof(cnt));
	dp_fault_init(&rx, &c, 0, 0, DP_FAULT_RX, &cnt);
	k = run_stream(&rx, 20000, 32, 32, NULL, 0);
	cr_expect(cnt.fault_dropped >= 1700 && cnt.fault_dropped <= 2300, "dropped %lu",
		  (unsigned long)cnt.fault_dropped);
	cr_expect_eq(k + cnt.fault_dropped, 20000);
	expect_no_leak();
}
