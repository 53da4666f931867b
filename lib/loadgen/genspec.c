/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * What the lcore generator sends and how its results are checked
 * (uroce_loadgen.h, doc/loadgen.md "The lcore generator"): sizes and counts
 * as a user writes them, the mix of operations and sizes (joint, or the
 * product of an operation mix and a size mix), its apportionment over a
 * fixed table so that per-message choice is one load, and the model of a
 * target's atomic word. The daemon checks a mix a client sent with
 * uroce_lg_mix_check() before it builds anything from it.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_cli.h"
#include "uroce_loadgen.h"

#define GOLDEN 0x9e3779b97f4a7c15ull
/* "UROCELGA": the kind of the atomic words, as pattern.c's kinds. */
#define KIND_ATOMIC 0x55524f43454c4741ull

#define MAX_SIZE_VALUE (1ull << 40)
#define MAX_COUNT_VALUE 1000000000000000ull

static const char *const op_names[UROCE_LG_NOPS] = {
	[UROCE_LG_WRITE] = "write",
	[UROCE_LG_READ] = "read",
	[UROCE_LG_SEND] = "send",
	[UROCE_LG_FADD] = "fadd",
	[UROCE_LG_CSWAP] = "cswap",
};

/* splitmix64's finaliser, the mixer of pattern.c. */
static uint64_t
mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void
say(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

const char *
uroce_lg_op_name(unsigned int op)
{
	return op < UROCE_LG_NOPS ? op_names[op] : "?";
}

static bool
op_is_atomic(unsigned int op)
{
	return op == UROCE_LG_FADD || op == UROCE_LG_CSWAP;
}

/* The programs' number syntax (lib/cli), so "-n 10k" means the same everywhere. */
int
uroce_lg_parse_size(const char *s, uint64_t *v)
{
	return cli_parse_u64(s, CLI_BYTES, MAX_SIZE_VALUE, v);
}

int
uroce_lg_parse_count(const char *s, uint64_t *v)
{
	return cli_parse_u64(s, CLI_COUNT, MAX_COUNT_VALUE, v);
}

/* ------------------------------------------------------------------------ */
/* Mix                                                                       */
/* ------------------------------------------------------------------------ */

/* An operation name; "atomic" is both atomics. @return a mask, 0 if unknown. */
static unsigned int
op_mask_of(const char *s)
{
	unsigned int i;

	if (strcmp(s, "atomic") == 0)
		return UROCE_LG_ATOMIC_OPS;
	for (i = 0; i < UROCE_LG_NOPS; i++)
		if (strcmp(s, op_names[i]) == 0)
			return UROCE_LG_OP_BIT(i);
	return 0;
}

/* Add @p weight of (op, size) to @p m, merging with an equal entry. */
static int
mix_add(struct uroce_lg_mix *m, unsigned int op, uint32_t size, uint64_t weight, char *err,
	size_t errlen)
{
	unsigned int i;

	for (i = 0; i < m->n; i++) {
		if (m->e[i].op != op || m->e[i].size != size)
			continue;
		if (m->e[i].weight + weight > UROCE_LG_MAX_WEIGHT) {
			say(err, errlen, "the weights of %s of %u bytes add up to more than %u",
			    op_names[op], size, UROCE_LG_MAX_WEIGHT);
			return -EINVAL;
		}
		m->e[i].weight += (uint32_t)weight;
		return 0;
	}
	if (m->n == UROCE_LG_MIX_MAX) {
		say(err, errlen, "more than %u different operation and size pairs",
		    UROCE_LG_MIX_MAX);
		return -EINVAL;
	}
	if (weight == 0 || weight > UROCE_LG_MAX_WEIGHT) {
		say(err, errlen, "weight of %s of %u bytes must be 1..%u", op_names[op], size,
		    UROCE_LG_MAX_WEIGHT);
		return -EINVAL;
	}
	m->e[m->n].op = op;
	m->e[m->n].size = size;
	m->e[m->n].weight = (uint32_t)weight;
	m->n++;
	return 0;
}

/* Split @p text at @p sep into at most @p max fields (modifies it). @return fields, or -1. */
static int
split(char *text, char sep, char **f, int max)
{
	int n = 0;
	char *p = text;

	for (;;) {
		char *q = strchr(p, sep);

		if (n == max)
			return -1;
		f[n++] = p;
		if (q == NULL)
			return n;
		*q = '\0';
		p = q + 1;
	}
}

static int
parse_weight(const char *s, uint64_t *w, const char *entry, char *err, size_t errlen)
{
	if (uroce_lg_parse_count(s, w) != 0 || *w == 0 || *w > UROCE_LG_MAX_WEIGHT) {
		say(err, errlen, "'%s': weight '%s' must be a whole number 1..%u", entry, s,
		    UROCE_LG_MAX_WEIGHT);
		return -EINVAL;
	}
	return 0;
}

static int
parse_msg_size(const char *s, uint64_t *v, const char *entry, char *err, size_t errlen)
{
	if (uroce_lg_parse_size(s, v) != 0 || *v == 0 || *v > UROCE_LG_GEN_MAX_SIZE) {
		say(err, errlen, "'%s': size '%s' must be 1..16M bytes (digits, then K, M)",
		    entry, s);
		return -EINVAL;
	}
	return 0;
}

/* A copy of @p text to cut up, or NULL (with err) when empty or too long. */
static char *
dup_list(const char *text, const char *what, char *err, size_t errlen)
{
	char *t;

	if (text == NULL || text[0] == '\0') {
		say(err, errlen, "the %s is empty", what);
		return NULL;
	}
	if (strlen(text) > 4096) {
		say(err, errlen, "the %s is too long", what);
		return NULL;
	}
	t = strdup(text);
	if (t == NULL)
		say(err, errlen, "out of memory");
	return t;
}

int
uroce_lg_mix_parse(const char *text, struct uroce_lg_mix *m, char *err, size_t errlen)
{
	char *t, *entries[UROCE_LG_MIX_MAX * 4], *f[4];
	int n, k, rc = -EINVAL;

	memset(m, 0, sizeof(*m));
	t = dup_list(text, "mix", err, errlen);
	if (t == NULL)
		return -EINVAL;
	n = split(t, ',', entries, (int)(sizeof(entries) / sizeof(entries[0])));
	if (n < 0) {
		say(err, errlen, "too many entries in the mix (at most %u pairs)",
		    UROCE_LG_MIX_MAX);
		goto out;
	}
	for (k = 0; k < n; k++) {
		char entry[64];
		uint64_t size = 64, w = 1;
		unsigned int mask, op;
		bool size_given;
		int nf;

		snprintf(entry, sizeof(entry), "%s", entries[k]);
		if (entries[k][0] == '\0') {
			say(err, errlen, "entry %d of the mix is empty", k + 1);
			goto out;
		}
		nf = split(entries[k], ':', f, 4);
		if (nf < 0 || nf > 3) {
			say(err, errlen, "'%s': an entry is OP[:SIZE[:WEIGHT]]", entry);
			goto out;
		}
		mask = op_mask_of(f[0]);
		if (mask == 0) {
			say(err, errlen, "'%s': unknown operation '%s' (write, read, send, fadd, "
			    "cswap, atomic)", entry, f[0]);
			goto out;
		}
		/* An empty SIZE is the default: "fadd::10". */
		size_given = nf >= 2 && f[1][0] != '\0';
		if ((mask & UROCE_LG_ATOMIC_OPS) != 0) {
			size = UROCE_LG_ATOMIC_SIZE;
			if (size_given && (uroce_lg_parse_size(f[1], &size) != 0 ||
					   size != UROCE_LG_ATOMIC_SIZE)) {
				say(err, errlen, "'%s': an atomic is 8 bytes (IBA 9.4.5); give 8, "
				    "no size, or an empty one (fadd::WEIGHT)", entry);
				goto out;
			}
		} else if (size_given && parse_msg_size(f[1], &size, entry, err, errlen) != 0) {
			goto out;
		}
		if (nf == 3 && parse_weight(f[2], &w, entry, err, errlen) != 0)
			goto out;
		for (op = 0; op < UROCE_LG_NOPS; op++)
			if ((mask & UROCE_LG_OP_BIT(op)) != 0 &&
			    mix_add(m, op, (uint32_t)size, w, err, errlen) != 0)
				goto out;
	}
	rc = uroce_lg_mix_check(m, err, errlen);
out:
	free(t);
	return rc;
}

int
uroce_lg_mix_product(const char *ops, const char *sizes, struct uroce_lg_mix *m, char *err,
		     size_t errlen)
{
	char *to = NULL, *ts = NULL, *of[UROCE_LG_MIX_MAX * 4], *sf[UROCE_LG_MIX_MAX * 4], *f[3];
	uint64_t sw[UROCE_LG_MIX_MAX * 4], ss[UROCE_LG_MIX_MAX * 4], wsum = 0;
	int no, ns, i, j, rc = -EINVAL;

	memset(m, 0, sizeof(*m));
	to = dup_list(ops, "operation list", err, errlen);
	ts = dup_list(sizes != NULL ? sizes : "64", "size list", err, errlen);
	if (to == NULL || ts == NULL)
		goto out;
	no = split(to, ',', of, (int)(sizeof(of) / sizeof(of[0])));
	ns = split(ts, ',', sf, (int)(sizeof(sf) / sizeof(sf[0])));
	if (no < 0 || ns < 0) {
		say(err, errlen, "too many entries (at most %u operation and size pairs)",
		    UROCE_LG_MIX_MAX);
		goto out;
	}
	for (j = 0; j < ns; j++) {
		char entry[64];
		int nf;

		snprintf(entry, sizeof(entry), "%s", sf[j]);
		nf = split(sf[j], ':', f, 3);
		if (sf[j][0] == '\0' || nf < 0 || nf > 2) {
			say(err, errlen, "'%s': a size entry is SIZE[:WEIGHT]", entry);
			goto out;
		}
		sw[j] = 1;
		if (parse_msg_size(f[0], &ss[j], entry, err, errlen) != 0 ||
		    (nf == 2 && parse_weight(f[1], &sw[j], entry, err, errlen) != 0))
			goto out;
		wsum += sw[j];
	}
	for (i = 0; i < no; i++) {
		char entry[64];
		uint64_t w = 1;
		unsigned int mask, op;
		int nf;

		snprintf(entry, sizeof(entry), "%s", of[i]);
		nf = split(of[i], ':', f, 3);
		if (of[i][0] == '\0' || nf < 0 || nf > 2) {
			say(err, errlen, "'%s': an operation entry is OP[:WEIGHT]", entry);
			goto out;
		}
		mask = op_mask_of(f[0]);
		if (mask == 0) {
			say(err, errlen, "'%s': unknown operation '%s' (write, read, send, fadd, "
			    "cswap, atomic)", entry, f[0]);
			goto out;
		}
		if (nf == 2 && parse_weight(f[1], &w, entry, err, errlen) != 0)
			goto out;
		for (op = 0; op < UROCE_LG_NOPS; op++) {
			if ((mask & UROCE_LG_OP_BIT(op)) == 0)
				continue;
			/* An atomic is 8 bytes whatever the sizes: it keeps its
			 * operation's whole share. */
			if (op_is_atomic(op)) {
				if (w * wsum > UROCE_LG_MAX_WEIGHT) {
					say(err, errlen, "'%s': weight times the size weights "
					    "exceeds %u", entry, UROCE_LG_MAX_WEIGHT);
					goto out;
				}
				if (mix_add(m, op, UROCE_LG_ATOMIC_SIZE, w * wsum, err,
					    errlen) != 0)
					goto out;
				continue;
			}
			for (j = 0; j < ns; j++) {
				if (w * sw[j] > UROCE_LG_MAX_WEIGHT) {
					say(err, errlen, "'%s': weight times the weight of size "
					    "%llu exceeds %u", entry, (unsigned long long)ss[j],
					    UROCE_LG_MAX_WEIGHT);
					goto out;
				}
				if (mix_add(m, op, (uint32_t)ss[j], w * sw[j], err, errlen) != 0)
					goto out;
			}
		}
	}
	rc = uroce_lg_mix_check(m, err, errlen);
out:
	free(to);
	free(ts);
	return rc;
}

int
uroce_lg_mix_check(const struct uroce_lg_mix *m, char *err, size_t errlen)
{
	unsigned int i;

	if (m == NULL || m->n == 0 || m->n > UROCE_LG_MIX_MAX) {
		say(err, errlen, "a mix has 1..%u entries", UROCE_LG_MIX_MAX);
		return -EINVAL;
	}
	for (i = 0; i < m->n; i++) {
		const struct uroce_lg_mix_entry *e = &m->e[i];

		if (e->op >= UROCE_LG_NOPS) {
			say(err, errlen, "entry %u: unknown operation %u", i, e->op);
			return -EINVAL;
		}
		if (op_is_atomic(e->op) ? e->size != UROCE_LG_ATOMIC_SIZE :
		    e->size == 0 || e->size > UROCE_LG_GEN_MAX_SIZE) {
			say(err, errlen, "entry %u: %s of %u bytes (%s)", i, op_names[e->op],
			    e->size, op_is_atomic(e->op) ? "an atomic is 8 bytes" :
			    "1..16 MiB");
			return -EINVAL;
		}
		if (e->weight == 0 || e->weight > UROCE_LG_MAX_WEIGHT) {
			say(err, errlen, "entry %u: weight %u (1..%u)", i, e->weight,
			    UROCE_LG_MAX_WEIGHT);
			return -EINVAL;
		}
	}
	return 0;
}

unsigned int
uroce_lg_mix_ops(const struct uroce_lg_mix *m)
{
	unsigned int mask = 0, i;

	for (i = 0; i < m->n && i < UROCE_LG_MIX_MAX; i++)
		if (m->e[i].op < UROCE_LG_NOPS)
			mask |= UROCE_LG_OP_BIT(m->e[i].op);
	return mask;
}

uint32_t
uroce_lg_mix_max_size(const struct uroce_lg_mix *m, unsigned int op_mask)
{
	uint32_t max = 0;
	unsigned int i;

	for (i = 0; i < m->n && i < UROCE_LG_MIX_MAX; i++)
		if (m->e[i].op < UROCE_LG_NOPS && (op_mask & UROCE_LG_OP_BIT(m->e[i].op)) &&
		    m->e[i].size > max)
			max = m->e[i].size;
	return max;
}

int
uroce_lg_mix_table(const struct uroce_lg_mix *m, uint64_t seed,
		   uint8_t table[UROCE_LG_MIX_TABLE])
{
	uint64_t rem[UROCE_LG_MIX_MAX], sum = 0, x;
	uint32_t slots[UROCE_LG_MIX_MAX], used = 0, i, j, k;

	if (uroce_lg_mix_check(m, NULL, 0) != 0)
		return -EINVAL;
	for (i = 0; i < m->n; i++)
		sum += m->e[i].weight;
	/* Largest remainder: each entry its whole slots, then the slots left
	 * to the largest remainders (the earlier entry on a tie). */
	for (i = 0; i < m->n; i++) {
		slots[i] = (uint32_t)((uint64_t)m->e[i].weight * UROCE_LG_MIX_TABLE / sum);
		rem[i] = (uint64_t)m->e[i].weight * UROCE_LG_MIX_TABLE % sum;
		used += slots[i];
	}
	while (used < UROCE_LG_MIX_TABLE) {
		k = 0;
		for (i = 1; i < m->n; i++)
			if (rem[i] > rem[k])
				k = i;
		slots[k]++;
		rem[k] = 0;
		used++;
	}
	/* Every entry with a weight is sent: one slot at least, taken from
	 * the entry with the most (16 entries never exhaust 1024 slots). */
	for (i = 0; i < m->n; i++) {
		if (slots[i] != 0)
			continue;
		k = 0;
		for (j = 1; j < m->n; j++)
			if (slots[j] > slots[k])
				k = j;
		slots[k]--;
		slots[i] = 1;
	}
	for (i = 0, k = 0; i < m->n; i++)
		for (j = 0; j < slots[i]; j++)
			table[k++] = (uint8_t)i;
	/* Fisher-Yates, driven by the splitmix64 stream of the seed. */
	x = seed;
	for (i = UROCE_LG_MIX_TABLE - 1; i > 0; i--) {
		uint8_t t;

		x += GOLDEN;
		j = (uint32_t)(mix(x) % (i + 1));
		t = table[i];
		table[i] = table[j];
		table[j] = t;
	}
	return 0;
}

uint32_t
uroce_lg_gen_win_len(uint32_t max_size)
{
	uint32_t w = 64u * 1024;

	while (w < max_size)
		w <<= 1;
	return w;
}

/* ------------------------------------------------------------------------ */
/* The atomic word                                                           */
/* ------------------------------------------------------------------------ */

uint64_t
uroce_lg_atomic_init(uint32_t qpn)
{
	return mix(KIND_ATOMIC ^ (qpn & 0xffffffu));
}

void
uroce_lg_atomic_start(struct uroce_lg_atomic *a, uint32_t qpn)
{
	a->value = uroce_lg_atomic_init(qpn);
	a->n = 0;
	a->seed = mix(a->value ^ GOLDEN);
}

void
uroce_lg_atomic_next(struct uroce_lg_atomic *a, unsigned int op, uint64_t *compare_add,
		     uint64_t *swap, uint64_t *expect)
{
	uint64_t w = mix(a->seed + (a->n + 1) * GOLDEN);

	*expect = a->value;
	if (op == UROCE_LG_CSWAP) {
		/* Compare with what the word holds: the swap always happens. */
		*compare_add = a->value;
		*swap = w;
		a->value = w;
	} else {
		/* An odd addend never leaves the word where it was. */
		*compare_add = w | 1;
		*swap = 0;
		a->value += w | 1;
	}
	a->n++;
}

uint64_t
uroce_lg_atomic_digest(uint64_t digest, uint32_t i, uint64_t word)
{
	return mix(digest ^ mix(word + (uint64_t)(i + 1) * GOLDEN));
}
