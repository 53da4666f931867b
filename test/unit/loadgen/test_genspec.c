/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Unit tests of lib/loadgen/genspec.c, what the lcore generator sends and
 * how its results are checked: sizes and counts as users write them, the
 * mix (joint and product forms) with every kind of bad entry refused by a
 * sentence that names it, the apportionment table, window offsets, and the
 * model of the target's atomic word against a word that really executes
 * FETCH_AND_ADD and COMPARE_AND_SWAP (and one that executes one twice).
 * Also the rate record with extra members (rate.c).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "uroce_loadgen.h"

Test(genspec, sizes)
{
	uint64_t v;

	cr_assert_eq(uroce_lg_parse_size("64", &v), 0);
	cr_assert_eq(v, 64);
	cr_assert_eq(uroce_lg_parse_size("4K", &v), 0);
	cr_assert_eq(v, 4096);
	cr_assert_eq(uroce_lg_parse_size("4k", &v), 0);
	cr_assert_eq(v, 4096);
	cr_assert_eq(uroce_lg_parse_size("64KiB", &v), 0);
	cr_assert_eq(v, 65536);
	cr_assert_eq(uroce_lg_parse_size("1M", &v), 0);
	cr_assert_eq(v, 1u << 20);
	cr_assert_eq(uroce_lg_parse_size("2GiB", &v), 0);
	cr_assert_eq(v, 2ull << 30);
	/* Expect: anything that is not digits and a known suffix is refused. */
	cr_expect_eq(uroce_lg_parse_size("", &v), -EINVAL);
	cr_expect_eq(uroce_lg_parse_size("K", &v), -EINVAL);
	cr_expect_eq(uroce_lg_parse_size("-1", &v), -EINVAL);
	cr_expect_eq(uroce_lg_parse_size("+1", &v), -EINVAL);
	cr_expect_eq(uroce_lg_parse_size("1.5K", &v), -EINVAL);
	cr_expect_eq(uroce_lg_parse_size("1T", &v), -EINVAL);
	cr_expect_eq(uroce_lg_parse_size("64 ", &v), -EINVAL);
	cr_expect_eq(uroce_lg_parse_size("0x40", &v), -EINVAL);
	cr_expect_eq(uroce_lg_parse_size(NULL, &v), -EINVAL);
	/* Expect: too large is ERANGE, never a wrapped value. */
	cr_expect_eq(uroce_lg_parse_size("99999999999999999999999", &v), -ERANGE);
	cr_expect_eq(uroce_lg_parse_size("2048G", &v), -ERANGE);
}

Test(genspec, counts)
{
	uint64_t v;

	cr_assert_eq(uroce_lg_parse_count("500", &v), 0);
	cr_assert_eq(v, 500);
	cr_assert_eq(uroce_lg_parse_count("100k", &v), 0);
	cr_assert_eq(v, 100000);
	cr_assert_eq(uroce_lg_parse_count("2M", &v), 0);
	cr_assert_eq(v, 2000000);
	cr_assert_eq(uroce_lg_parse_count("1G", &v), 0);
	cr_assert_eq(v, 1000000000);
	cr_expect_eq(uroce_lg_parse_count("1Ki", &v), -EINVAL);
	cr_expect_eq(uroce_lg_parse_count("m", &v), -EINVAL);
	cr_expect_eq(uroce_lg_parse_count("1e6", &v), -EINVAL);
	cr_expect_eq(uroce_lg_parse_count("2000000G", &v), -ERANGE);
}

static void
expect_entry(const struct uroce_lg_mix *m, unsigned int i, unsigned int op, uint32_t size,
	     uint32_t weight)
{
	cr_assert_lt(i, m->n);
	cr_expect_eq(m->e[i].op, op, "entry %u op %u", i, m->e[i].op);
	cr_expect_eq(m->e[i].size, size, "entry %u size %u", i, m->e[i].size);
	cr_expect_eq(m->e[i].weight, weight, "entry %u weight %u", i, m->e[i].weight);
}

Test(genspec, mix_joint)
{
	struct uroce_lg_mix m;
	char err[256];

	cr_assert_eq(uroce_lg_mix_parse("write:64", &m, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(m.n, 1);
	expect_entry(&m, 0, UROCE_LG_WRITE, 64, 1);
	cr_assert_eq(uroce_lg_mix_parse("write:64:70,read:1K:20,fadd:8:10", &m, err,
					sizeof(err)), 0, "%s", err);
	cr_assert_eq(m.n, 3);
	expect_entry(&m, 0, UROCE_LG_WRITE, 64, 70);
	expect_entry(&m, 1, UROCE_LG_READ, 1024, 20);
	expect_entry(&m, 2, UROCE_LG_FADD, 8, 10);
	/* Expect: defaults (64 bytes, weight 1); atomic is both atomics, each
	 * with the weight; an empty size is the default; equal pairs add up. */
	cr_assert_eq(uroce_lg_mix_parse("send,atomic,cswap::4,write:64:2,write:64:3", &m, err,
					sizeof(err)), 0, "%s", err);
	cr_assert_eq(m.n, 4);
	expect_entry(&m, 0, UROCE_LG_SEND, 64, 1);
	expect_entry(&m, 1, UROCE_LG_FADD, 8, 1);
	expect_entry(&m, 2, UROCE_LG_CSWAP, 8, 5);
	expect_entry(&m, 3, UROCE_LG_WRITE, 64, 5);
	cr_expect_eq(uroce_lg_mix_ops(&m), UROCE_LG_OP_BIT(UROCE_LG_SEND) | UROCE_LG_ATOMIC_OPS |
					   UROCE_LG_OP_BIT(UROCE_LG_WRITE));
	cr_expect_eq(uroce_lg_mix_max_size(&m, ~0u), 64);
	cr_expect_eq(uroce_lg_mix_max_size(&m, UROCE_LG_ATOMIC_OPS), 8);
	cr_expect_eq(uroce_lg_mix_max_size(&m, UROCE_LG_OP_BIT(UROCE_LG_READ)), 0);
	cr_assert_eq(uroce_lg_mix_parse("read:16M,fadd:8:1000000", &m, err, sizeof(err)), 0,
		     "%s", err);
	cr_expect_eq(uroce_lg_mix_max_size(&m, ~0u), 16u << 20);
}

/* A mix that must be refused, with a sentence that contains @p word. */
static void
expect_bad_mix(const char *text, const char *word)
{
	struct uroce_lg_mix m;
	char err[256] = "";

	cr_expect_eq(uroce_lg_mix_parse(text, &m, err, sizeof(err)), -EINVAL, "'%s' accepted",
		     text);
	cr_expect_neq(err[0], '\0', "'%s': no reason given", text);
	cr_expect_not_null(strstr(err, word), "'%s': reason '%s' does not say '%s'", text, err,
			   word);
}

Test(genspec, mix_joint_refused)
{
	char many[512];
	int i, n = 0;

	expect_bad_mix("", "empty");
	expect_bad_mix(",", "empty");
	expect_bad_mix("write:64,", "empty");
	expect_bad_mix("foo", "unknown operation 'foo'");
	expect_bad_mix("WRITE", "unknown operation");
	expect_bad_mix("write:0", "size '0'");
	expect_bad_mix("write:17M", "size '17M'");
	expect_bad_mix("write:64x", "size '64x'");
	expect_bad_mix("read:-5", "size");
	expect_bad_mix("fadd:16", "8 bytes");
	expect_bad_mix("atomic:4", "8 bytes");
	expect_bad_mix("write:64:0", "weight '0'");
	expect_bad_mix("write:64:1000001", "weight");
	expect_bad_mix("write:64:abc", "weight 'abc'");
	expect_bad_mix("write:64:1:1", "OP[:SIZE[:WEIGHT]]");
	expect_bad_mix("write:64:600000,write:64:600000", "add up");
	/* Expect: at most 16 different pairs. */
	for (i = 1; i <= 17; i++)
		n += snprintf(many + n, sizeof(many) - (size_t)n, "%swrite:%d", i > 1 ? "," : "",
			      i);
	expect_bad_mix(many, "more than 16");
}

Test(genspec, mix_product)
{
	struct uroce_lg_mix m;
	char err[256];

	/* Expect: each data operation takes each size with the product of the
	 * two weights; an atomic is 8 bytes with its operation's whole share. */
	cr_assert_eq(uroce_lg_mix_product("write:3,read:1", "64:70,1024:20,65536:10", &m, err,
					  sizeof(err)), 0, "%s", err);
	cr_assert_eq(m.n, 6);
	expect_entry(&m, 0, UROCE_LG_WRITE, 64, 210);
	expect_entry(&m, 1, UROCE_LG_WRITE, 1024, 60);
	expect_entry(&m, 2, UROCE_LG_WRITE, 65536, 30);
	expect_entry(&m, 3, UROCE_LG_READ, 64, 70);
	expect_entry(&m, 5, UROCE_LG_READ, 65536, 10);
	cr_assert_eq(uroce_lg_mix_product("send:1,atomic:2", "64,4K:3", &m, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(m.n, 4);
	expect_entry(&m, 0, UROCE_LG_SEND, 64, 1);
	expect_entry(&m, 1, UROCE_LG_SEND, 4096, 3);
	expect_entry(&m, 2, UROCE_LG_FADD, 8, 8);
	expect_entry(&m, 3, UROCE_LG_CSWAP, 8, 8);
	/* Expect: no sizes means 64 bytes. */
	cr_assert_eq(uroce_lg_mix_product("read", NULL, &m, err, sizeof(err)), 0, "%s", err);
	expect_entry(&m, 0, UROCE_LG_READ, 64, 1);
	/* Expect: refusals name the entry. */
	cr_expect_eq(uroce_lg_mix_product("write,foo", "64", &m, err, sizeof(err)), -EINVAL);
	cr_expect_not_null(strstr(err, "foo"), "%s", err);
	cr_expect_eq(uroce_lg_mix_product("write", "64,0", &m, err, sizeof(err)), -EINVAL);
	cr_expect_not_null(strstr(err, "size '0'"), "%s", err);
	cr_expect_eq(uroce_lg_mix_product("write:2000", "64:1000", &m, err, sizeof(err)), -EINVAL);
	cr_expect_not_null(strstr(err, "exceeds"), "%s", err);
	cr_expect_eq(uroce_lg_mix_product("", "64", &m, err, sizeof(err)), -EINVAL);
	cr_expect_eq(uroce_lg_mix_product("write:1:2", "64", &m, err, sizeof(err)), -EINVAL);
	cr_expect_not_null(strstr(err, "OP[:WEIGHT]"), "%s", err);
	cr_expect_eq(uroce_lg_mix_product("write,read,send", "1,2,3,4,5,6", &m, err, sizeof(err)),
		     -EINVAL);
	cr_expect_not_null(strstr(err, "more than 16"), "%s", err);
}

Test(genspec, mix_check_hostile)
{
	struct uroce_lg_mix m;
	char err[128];

	memset(&m, 0, sizeof(m));
	cr_expect_eq(uroce_lg_mix_check(&m, err, sizeof(err)), -EINVAL);
	cr_expect_eq(uroce_lg_mix_check(NULL, NULL, 0), -EINVAL);
	m.n = 17;
	cr_expect_eq(uroce_lg_mix_check(&m, NULL, 0), -EINVAL);
	m.n = 1;
	m.e[0] = (struct uroce_lg_mix_entry){UROCE_LG_NOPS, 64, 1};
	cr_expect_eq(uroce_lg_mix_check(&m, err, sizeof(err)), -EINVAL);
	m.e[0] = (struct uroce_lg_mix_entry){UROCE_LG_CSWAP, 16, 1};
	cr_expect_eq(uroce_lg_mix_check(&m, err, sizeof(err)), -EINVAL);
	m.e[0] = (struct uroce_lg_mix_entry){UROCE_LG_WRITE, 0, 1};
	cr_expect_eq(uroce_lg_mix_check(&m, err, sizeof(err)), -EINVAL);
	m.e[0] = (struct uroce_lg_mix_entry){UROCE_LG_WRITE, UROCE_LG_GEN_MAX_SIZE + 1, 1};
	cr_expect_eq(uroce_lg_mix_check(&m, err, sizeof(err)), -EINVAL);
	m.e[0] = (struct uroce_lg_mix_entry){UROCE_LG_WRITE, 64, 0};
	cr_expect_eq(uroce_lg_mix_check(&m, err, sizeof(err)), -EINVAL);
	m.e[0] = (struct uroce_lg_mix_entry){UROCE_LG_WRITE, 64, UROCE_LG_MAX_WEIGHT + 1};
	cr_expect_eq(uroce_lg_mix_check(&m, err, sizeof(err)), -EINVAL);
	m.e[0] = (struct uroce_lg_mix_entry){UROCE_LG_READ, UROCE_LG_GEN_MAX_SIZE, 1};
	cr_expect_eq(uroce_lg_mix_check(&m, err, sizeof(err)), 0);
}

static void
table_counts(const struct uroce_lg_mix *m, uint64_t seed, unsigned int *cnt)
{
	uint8_t t[UROCE_LG_MIX_TABLE];
	unsigned int i;

	memset(cnt, 0, sizeof(unsigned int) * UROCE_LG_MIX_MAX);
	cr_assert_eq(uroce_lg_mix_table(m, seed, t), 0);
	for (i = 0; i < UROCE_LG_MIX_TABLE; i++) {
		cr_assert_lt(t[i], m->n);
		cnt[t[i]]++;
	}
}

Test(genspec, mix_table)
{
	uint8_t t1[UROCE_LG_MIX_TABLE], t2[UROCE_LG_MIX_TABLE], t3[UROCE_LG_MIX_TABLE];
	unsigned int cnt[UROCE_LG_MIX_MAX];
	struct uroce_lg_mix m;
	char err[128];

	/* Expect: largest remainder: 716.8, 204.8, 102.4 -> 717, 205, 102. */
	cr_assert_eq(uroce_lg_mix_parse("write:64:70,write:1K:20,write:64K:10", &m, err,
					sizeof(err)), 0);
	table_counts(&m, 1, cnt);
	cr_expect_eq(cnt[0], 717);
	cr_expect_eq(cnt[1], 205);
	cr_expect_eq(cnt[2], 102);
	/* Expect: a weight too small for one slot still gets one. */
	cr_assert_eq(uroce_lg_mix_parse("write:64:1000000,read:64:1", &m, err, sizeof(err)), 0);
	table_counts(&m, 7, cnt);
	cr_expect_eq(cnt[0], 1023);
	cr_expect_eq(cnt[1], 1);
	/* Expect: the seed fixes the order; another seed gives another. */
	cr_assert_eq(uroce_lg_mix_parse("write:64,read:64,send:64,fadd", &m, err, sizeof(err)), 0);
	cr_assert_eq(uroce_lg_mix_table(&m, 42, t1), 0);
	cr_assert_eq(uroce_lg_mix_table(&m, 42, t2), 0);
	cr_assert_eq(uroce_lg_mix_table(&m, 43, t3), 0);
	cr_expect_eq(memcmp(t1, t2, sizeof(t1)), 0);
	cr_expect_neq(memcmp(t1, t3, sizeof(t1)), 0);
	table_counts(&m, 42, cnt);
	cr_expect_eq(cnt[0] + cnt[1] + cnt[2] + cnt[3], UROCE_LG_MIX_TABLE);
	cr_expect_eq(cnt[0], 256);
	/* Expect: shuffled, not in runs: the first quarter holds every entry. */
	{
		unsigned int seen = 0, i;

		for (i = 0; i < UROCE_LG_MIX_TABLE / 4; i++)
			seen |= 1u << t1[i];
		cr_expect_eq(seen, 0xfu);
	}
	/* Expect: a hostile mix builds no table. */
	m.e[0].weight = 0;
	cr_expect_eq(uroce_lg_mix_table(&m, 1, t1), -EINVAL);
}

Test(genspec, windows_and_offsets)
{
	uint32_t sizes[] = {1, 8, 64, 100, 4096, 65535, 65536, 100000};
	unsigned int i;
	uint64_t k;

	cr_expect_eq(uroce_lg_gen_win_len(1), 65536);
	cr_expect_eq(uroce_lg_gen_win_len(65536), 65536);
	cr_expect_eq(uroce_lg_gen_win_len(65537), 131072);
	cr_expect_eq(uroce_lg_gen_win_len(UROCE_LG_GEN_MAX_SIZE), UROCE_LG_GEN_MAX_SIZE);
	/* Expect: every message lies inside its window, whatever k (wrapping
	 * k * size too); a power-of-two size lands on a multiple of itself. */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t win = uroce_lg_gen_win_len(sizes[i]);

		for (k = 0; k < 5000; k++) {
			uint64_t kk = k < 2500 ? k : UINT64_MAX - k;
			uint32_t off = uroce_lg_gen_offset(kk, sizes[i], win);

			cr_assert_leq((uint64_t)off + sizes[i], win, "size %u k %llu off %u",
				      sizes[i], (unsigned long long)kk, off);
			if ((sizes[i] & (sizes[i] - 1)) == 0)
				cr_assert_eq(off % sizes[i], 0);
		}
	}
	/* Expect: consecutive 64-byte messages walk the window. */
	cr_expect_eq(uroce_lg_gen_offset(0, 64, 65536), 0);
	cr_expect_eq(uroce_lg_gen_offset(1, 64, 65536), 64);
	cr_expect_eq(uroce_lg_gen_offset(1024, 64, 65536), 0);
}

/* A target's word: executes atomics as the responder does (IBA 9.4.5). */
static uint64_t
exec_atomic(uint64_t *word, unsigned int op, uint64_t compare_add, uint64_t swap)
{
	uint64_t orig = *word;

	if (op == UROCE_LG_CSWAP) {
		if (orig == compare_add)
			*word = swap;
	} else {
		*word = orig + compare_add;
	}
	return orig;
}

Test(genspec, atomic_model)
{
	struct uroce_lg_atomic a, b;
	uint64_t word, ca, sw, expect, seq = 12345, digest_m = 0, digest_w = 0;
	unsigned int i, bad = 0;

	/* Expect: the initial word is what the model starts from, and not 0. */
	uroce_lg_atomic_start(&a, 0x123);
	word = uroce_lg_atomic_init(0x123);
	cr_expect_eq(a.value, word);
	cr_expect_neq(word, 0);
	cr_expect_neq(uroce_lg_atomic_init(0x124), word);
	/* Expect: executed once each, in order, every original value is the
	 * model's expectation and the word ends where the model does. */
	for (i = 0; i < 1000; i++) {
		unsigned int op;

		seq = seq * 6364136223846793005ull + 1442695040888963407ull;
		op = (seq >> 33) & 1 ? UROCE_LG_CSWAP : UROCE_LG_FADD;
		uroce_lg_atomic_next(&a, op, &ca, &sw, &expect);
		cr_assert_eq(exec_atomic(&word, op, ca, sw), expect, "atomic %u", i);
		if (op == UROCE_LG_FADD)
			cr_assert_eq(ca & 1, 1);
	}
	cr_expect_eq(word, a.value);
	cr_expect_eq(a.n, 1000);
	digest_m = uroce_lg_atomic_digest(digest_m, 0, a.value);
	digest_w = uroce_lg_atomic_digest(digest_w, 0, word);
	cr_expect_eq(digest_m, digest_w);
	/* Expect: the digest depends on the QP index and on the value. */
	cr_expect_neq(uroce_lg_atomic_digest(0, 1, word), digest_w);
	cr_expect_neq(uroce_lg_atomic_digest(0, 0, word + 1), digest_w);
	/* Expect: a FETCH_AND_ADD executed twice (a duplicate not answered from
	 * the saved result) is seen at the next atomic. */
	uroce_lg_atomic_start(&b, 7);
	word = uroce_lg_atomic_init(7);
	for (i = 0; i < 10; i++) {
		uroce_lg_atomic_next(&b, UROCE_LG_FADD, &ca, &sw, &expect);
		if (exec_atomic(&word, UROCE_LG_FADD, ca, sw) != expect)
			bad++;
		if (i == 3)
			exec_atomic(&word, UROCE_LG_FADD, ca, sw);
	}
	cr_expect_eq(bad, 6, "%u mismatches", bad);
	/* Expect: a COMPARE_AND_SWAP after a lost one fails to swap, and the
	 * next original value gives it away. */
	uroce_lg_atomic_start(&b, 9);
	word = uroce_lg_atomic_init(9);
	uroce_lg_atomic_next(&b, UROCE_LG_CSWAP, &ca, &sw, &expect); /* never executed */
	uroce_lg_atomic_next(&b, UROCE_LG_CSWAP, &ca, &sw, &expect);
	cr_expect_neq(exec_atomic(&word, UROCE_LG_CSWAP, ca, sw), expect);
}

Test(genspec, op_names)
{
	cr_expect_str_eq(uroce_lg_op_name(UROCE_LG_WRITE), "write");
	cr_expect_str_eq(uroce_lg_op_name(UROCE_LG_CSWAP), "cswap");
	cr_expect_str_eq(uroce_lg_op_name(99), "?");
}

Test(genspec, rate_record_extra)
{
	struct uroce_lg_counts d = {10, 640, 10, 0, 0, 0, 0}, t = {20, 1280, 20, 0, 0, 0, 0};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	cr_assert_eq(uroce_lg_rate_write_ext(f, "gen", 2.0, 1.0, &d, &t,
					     ",\"initiator_cycles_per_msg\":123.000"), 0);
	fclose(f);
	/* Expect: the extra members after the rates, before total. */
	cr_assert_str_eq(text,
			 "{\"uroce_rate\":1,\"role\":\"gen\",\"t\":2.000,\"dt\":1.000,"
			 "\"msgs\":10,\"bytes\":640,\"cqes\":10,\"errors\":0,\"dropped\":0,"
			 "\"resyncs\":0,\"verify_bad\":0,\"msgs_per_s\":10.0,"
			 "\"bytes_per_s\":640.0,\"cqes_per_s\":10.0,"
			 "\"initiator_cycles_per_msg\":123.000,\"total\":{\"msgs\":20,"
			 "\"bytes\":1280,\"cqes\":20,\"errors\":0,\"dropped\":0,\"resyncs\":0,"
			 "\"verify_bad\":0}}\n");
	free(text);
}
