/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * lib/loadgen's private parts: a small JSON reader (RFC 8259) that turns
 * untrusted text into a tree of nodes, with bounded size and depth, for the
 * description reader (desc.c). Numbers keep their text, so 64-bit integers
 * are read exactly (never through a double).
 */

#ifndef UROCE_LOADGEN_INTERNAL_H
#define UROCE_LOADGEN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds on what the reader accepts. */
#define LGJ_MAX_TEXT (1u << 20)
#define LGJ_MAX_NODES 65536
#define LGJ_MAX_DEPTH 32

enum lgj_type {
	LGJ_NULL,
	LGJ_FALSE,
	LGJ_TRUE,
	LGJ_NUMBER,
	LGJ_STRING,
	LGJ_ARRAY,
	LGJ_OBJECT,
};

/* One value. Strings (and member keys) are decoded, NUL-terminated, in the
 * document's pool; a number's text is kept there as written. */
struct lgj_node {
	enum lgj_type type;
	int32_t key;    /* pool offset of the member name, -1 outside an object */
	int32_t text;   /* pool offset: string contents or number text */
	uint32_t count; /* array/object: children */
	int32_t child;  /* first child, -1 if none */
	int32_t next;   /* next sibling, -1 if none */
};

struct lgj_doc {
	struct lgj_node *n;
	uint32_t nn, ncap;
	char *pool;
	size_t plen, pcap;
};

/*
 * Parse the first JSON value of @p text (@p len bytes; leading white space
 * skipped, anything after the value ignored). The root is node 0.
 * @return 0, -EINVAL (not JSON; @p err says where and why), -E2BIG (over the
 *   bounds above), -ENOMEM.
 */
int lgj_parse(struct lgj_doc *d, const char *text, size_t len, char *err, size_t errlen);

void lgj_free(struct lgj_doc *d);

static inline const struct lgj_node *
lgj_root(const struct lgj_doc *d)
{
	return &d->n[0];
}

/* Member @p key of object @p obj (the last one if repeated), or NULL. */
const struct lgj_node *lgj_get(const struct lgj_doc *d, const struct lgj_node *obj,
			       const char *key);

/* Element @p i of array @p arr, or NULL. */
const struct lgj_node *lgj_at(const struct lgj_doc *d, const struct lgj_node *arr, uint32_t i);

/* The string of a LGJ_STRING node (NULL for another type). */
const char *lgj_str(const struct lgj_doc *d, const struct lgj_node *n);

/* A non-negative integer number without fraction or exponent, exactly.
 * @return 0, or -EINVAL (another type, a sign, a fraction) / -ERANGE. */
int lgj_u64(const struct lgj_doc *d, const struct lgj_node *n, uint64_t *v);

#endif /* UROCE_LOADGEN_INTERNAL_H */
