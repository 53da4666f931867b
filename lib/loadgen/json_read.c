/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * A small JSON reader (RFC 8259) for the sink description: recursive
 * descent with a depth bound, every read checked against the end of the
 * text, nodes and decoded strings in two growing arrays addressed by index
 * (so growing them never leaves a stale pointer). See loadgen_internal.h.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen_internal.h"

struct lgj_parser {
	struct lgj_doc *d;
	const char *s;
	size_t len;
	size_t pos;
	char *err;
	size_t errlen;
	int rc;
};

static void __attribute__((format(printf, 2, 3)))
fail(struct lgj_parser *p, const char *fmt, ...)
{
	size_t i, line = 1, col = 1;
	char what[160];
	va_list ap;

	if (p->rc != 0)
		return;
	p->rc = -EINVAL;
	if (p->err == NULL || p->errlen == 0)
		return;
	for (i = 0; i < p->pos && i < p->len; i++) {
		if (p->s[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "line %zu, column %zu: %s", line, col, what);
}

static void
fail_rc(struct lgj_parser *p, int rc, const char *what)
{
	if (p->rc != 0)
		return;
	fail(p, "%s", what);
	p->rc = rc;
}

static int32_t
pool_add(struct lgj_parser *p, const char *b, size_t n)
{
	struct lgj_doc *d = p->d;
	size_t at = d->plen;

	if (d->plen + n + 1 > d->pcap) {
		size_t cap = d->pcap ? d->pcap : 256;
		char *np;

		while (cap < d->plen + n + 1)
			cap *= 2;
		np = realloc(d->pool, cap);
		if (np == NULL) {
			fail_rc(p, -ENOMEM, "out of memory");
			return -1;
		}
		d->pool = np;
		d->pcap = cap;
	}
	memcpy(d->pool + at, b, n);
	d->pool[at + n] = '\0';
	d->plen += n + 1;
	return (int32_t)at;
}

static int32_t
node_new(struct lgj_parser *p, enum lgj_type t)
{
	struct lgj_doc *d = p->d;
	struct lgj_node *n;

	if (d->nn == LGJ_MAX_NODES) {
		fail_rc(p, -E2BIG, "too many values");
		return -1;
	}
	if (d->nn == d->ncap) {
		uint32_t cap = d->ncap ? d->ncap * 2 : 64;
		struct lgj_node *nn = realloc(d->n, cap * sizeof(*nn));

		if (nn == NULL) {
			fail_rc(p, -ENOMEM, "out of memory");
			return -1;
		}
		d->n = nn;
		d->ncap = cap;
	}
	n = &d->n[d->nn];
	memset(n, 0, sizeof(*n));
	n->type = t;
	n->key = -1;
	n->text = -1;
	n->child = -1;
	n->next = -1;
	return (int32_t)d->nn++;
}

static void
skip_ws(struct lgj_parser *p)
{
	while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
				   p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
		p->pos++;
}

static int
hex4(struct lgj_parser *p, uint32_t *v)
{
	uint32_t i, x = 0;

	if (p->len - p->pos < 4) {
		fail(p, "truncated \\u escape");
		return -1;
	}
	for (i = 0; i < 4; i++) {
		char c = p->s[p->pos + i];

		x <<= 4;
		if (c >= '0' && c <= '9')
			x |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			x |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			x |= (uint32_t)(c - 'A' + 10);
		else {
			fail(p, "bad \\u escape");
			return -1;
		}
	}
	p->pos += 4;
	*v = x;
	return 0;
}

static size_t
utf8_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string at p->pos (the opening quote): decoded into the pool. */
static int32_t
parse_string(struct lgj_parser *p)
{
	size_t start = ++p->pos, n = 0;
	char *buf;
	int32_t at;

	/* Decoded text is never longer than the source text. */
	while (p->pos < p->len && p->s[p->pos] != '"') {
		if (p->s[p->pos] == '\\')
			p->pos++;
		p->pos++;
	}
	if (p->pos >= p->len) {
		p->pos = start - 1;
		fail(p, "unterminated string");
		return -1;
	}
	buf = malloc(p->pos - start + 1);
	if (buf == NULL) {
		fail_rc(p, -ENOMEM, "out of memory");
		return -1;
	}
	p->pos = start;
	while (p->s[p->pos] != '"') {
		unsigned char c = (unsigned char)p->s[p->pos++];
		uint32_t cp, lo;

		if (c < 0x20) {
			p->pos--;
			fail(p, "control character in a string");
			goto err;
		}
		if (c != '\\') {
			buf[n++] = (char)c;
			continue;
		}
		c = (unsigned char)p->s[p->pos++];
		switch (c) {
		case '"': buf[n++] = '"'; break;
		case '\\': buf[n++] = '\\'; break;
		case '/': buf[n++] = '/'; break;
		case 'b': buf[n++] = '\b'; break;
		case 'f': buf[n++] = '\f'; break;
		case 'n': buf[n++] = '\n'; break;
		case 'r': buf[n++] = '\r'; break;
		case 't': buf[n++] = '\t'; break;
		case 'u':
			if (hex4(p, &cp) != 0)
				goto err;
			if (cp >= 0xd800 && cp < 0xdc00) {
				/* A high surrogate must be followed by a low one. */
				if (p->len - p->pos < 6 || p->s[p->pos] != '\\' ||
				    p->s[p->pos + 1] != 'u') {
					fail(p, "unpaired surrogate in \\u escape");
					goto err;
				}
				p->pos += 2;
				if (hex4(p, &lo) != 0)
					goto err;
				if (lo < 0xdc00 || lo >= 0xe000) {
					fail(p, "unpaired surrogate in \\u escape");
					goto err;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				fail(p, "unpaired surrogate in \\u escape");
				goto err;
			}
			if (cp == 0) {
				fail(p, "\\u0000 in a string is not accepted");
				goto err;
			}
			/* Six source bytes give at most four; twelve give four. */
			n += utf8_put(buf + n, cp);
			break;
		default:
			p->pos--;
			fail(p, "bad escape '\\%c'", c);
			goto err;
		}
	}
	p->pos++; /* the closing quote */
	at = pool_add(p, buf, n);
	free(buf);
	return at;
err:
	free(buf);
	return -1;
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int32_t parse_value(struct lgj_parser *p, unsigned int depth);

static int32_t
parse_number(struct lgj_parser *p)
{
	size_t start = p->pos;
	int32_t id, at;

	if (p->pos < p->len && p->s[p->pos] == '-')
		p->pos++;
	if (p->pos >= p->len || !is_digit(p->s[p->pos])) {
		fail(p, "bad number");
		return -1;
	}
	if (p->s[p->pos] == '0') {
		p->pos++;
	} else {
		while (p->pos < p->len && is_digit(p->s[p->pos]))
			p->pos++;
	}
	if (p->pos < p->len && p->s[p->pos] == '.') {
		p->pos++;
		if (p->pos >= p->len || !is_digit(p->s[p->pos])) {
			fail(p, "bad number: digits must follow '.'");
			return -1;
		}
		while (p->pos < p->len && is_digit(p->s[p->pos]))
			p->pos++;
	}
	if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
		p->pos++;
		if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
			p->pos++;
		if (p->pos >= p->len || !is_digit(p->s[p->pos])) {
			fail(p, "bad number: digits must follow the exponent");
			return -1;
		}
		while (p->pos < p->len && is_digit(p->s[p->pos]))
			p->pos++;
	}
	at = pool_add(p, p->s + start, p->pos - start);
	if (at < 0)
		return -1;
	id = node_new(p, LGJ_NUMBER);
	if (id >= 0)
		p->d->n[id].text = at;
	return id;
}

static bool
literal(struct lgj_parser *p, const char *word)
{
	size_t n = strlen(word);

	if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
		return false;
	p->pos += n;
	return true;
}

/* Append child @p c to container @p parent; @p last tracks the tail. */
static void
link_child(struct lgj_parser *p, int32_t parent, int32_t *last, int32_t c)
{
	struct lgj_node *n = p->d->n;

	if (*last < 0)
		n[parent].child = c;
	else
		n[*last].next = c;
	*last = c;
	n[parent].count++;
}

static int32_t
parse_container(struct lgj_parser *p, unsigned int depth, bool obj)
{
	char close = obj ? '}' : ']';
	int32_t id, last = -1;

	id = node_new(p, obj ? LGJ_OBJECT : LGJ_ARRAY);
	if (id < 0)
		return -1;
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return id;
	}
	for (;;) {
		int32_t key = -1, v;

		skip_ws(p);
		if (obj) {
			if (p->pos >= p->len || p->s[p->pos] != '"') {
				fail(p, "expected a member name (a string)");
				return -1;
			}
			key = parse_string(p);
			if (key < 0)
				return -1;
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':') {
				fail(p, "expected ':' after a member name");
				return -1;
			}
			p->pos++;
		}
		v = parse_value(p, depth + 1);
		if (v < 0)
			return -1;
		p->d->n[v].key = key;
		link_child(p, id, &last, v);
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == close) {
			p->pos++;
			return id;
		}
		fail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		return -1;
	}
}

static int32_t
parse_value(struct lgj_parser *p, unsigned int depth)
{
	int32_t id, at;

	if (depth > LGJ_MAX_DEPTH) {
		fail_rc(p, -E2BIG, "nested too deep");
		return -1;
	}
	skip_ws(p);
	if (p->pos >= p->len) {
		fail(p, "unexpected end of the text");
		return -1;
	}
	switch (p->s[p->pos]) {
	case '{':
		return parse_container(p, depth, true);
	case '[':
		return parse_container(p, depth, false);
	case '"':
		at = parse_string(p);
		if (at < 0)
			return -1;
		id = node_new(p, LGJ_STRING);
		if (id >= 0)
			p->d->n[id].text = at;
		return id;
	case 't':
		if (literal(p, "true"))
			return node_new(p, LGJ_TRUE);
		break;
	case 'f':
		if (literal(p, "false"))
			return node_new(p, LGJ_FALSE);
		break;
	case 'n':
		if (literal(p, "null"))
			return node_new(p, LGJ_NULL);
		break;
	default:
		if (p->s[p->pos] == '-' || is_digit(p->s[p->pos]))
			return parse_number(p);
		break;
	}
	fail(p, "expected a JSON value");
	return -1;
}

int
lgj_parse(struct lgj_doc *d, const char *text, size_t len, char *err, size_t errlen)
{
	struct lgj_parser p = {.d = d, .s = text, .len = len, .err = err, .errlen = errlen};

	memset(d, 0, sizeof(*d));
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (len > LGJ_MAX_TEXT) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%zu bytes: more than %u", len, LGJ_MAX_TEXT);
		return -E2BIG;
	}
	if (parse_value(&p, 0) < 0) {
		lgj_free(d);
		return p.rc != 0 ? p.rc : -EINVAL;
	}
	return 0;
}

void
lgj_free(struct lgj_doc *d)
{
	free(d->n);
	free(d->pool);
	memset(d, 0, sizeof(*d));
}

const struct lgj_node *
lgj_get(const struct lgj_doc *d, const struct lgj_node *obj, const char *key)
{
	const struct lgj_node *found = NULL;
	int32_t c;

	if (obj == NULL || obj->type != LGJ_OBJECT)
		return NULL;
	for (c = obj->child; c >= 0; c = d->n[c].next)
		if (d->n[c].key >= 0 && strcmp(d->pool + d->n[c].key, key) == 0)
			found = &d->n[c];
	return found;
}

const struct lgj_node *
lgj_at(const struct lgj_doc *d, const struct lgj_node *arr, uint32_t i)
{
	int32_t c;

	if (arr == NULL || arr->type != LGJ_ARRAY || i >= arr->count)
		return NULL;
	for (c = arr->child; c >= 0 && i > 0; c = d->n[c].next)
		i--;
	return c >= 0 ? &d->n[c] : NULL;
}

const char *
lgj_str(const struct lgj_doc *d, const struct lgj_node *n)
{
	if (n == NULL || n->type != LGJ_STRING)
		return NULL;
	return d->pool + n->text;
}

int
lgj_u64(const struct lgj_doc *d, const struct lgj_node *n, uint64_t *v)
{
	const char *s;
	uint64_t x = 0;

	if (n == NULL || n->type != LGJ_NUMBER)
		return -EINVAL;
	s = d->pool + n->text;
	if (*s == '-')
		return -EINVAL;
	for (; *s != '\0'; s++) {
		if (!is_digit(*s))
			return -EINVAL; /* a fraction or an exponent */
		if (x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return 0;
}
