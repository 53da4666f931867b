/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

void
json_init(struct json *j)
{
	memset(j, 0, sizeof(*j));
}

void
json_free(struct json *j)
{
	free(j->buf);
	json_init(j);
}

void
json_reset(struct json *j)
{
	char *buf = j->buf;
	size_t cap = j->cap;

	memset(j, 0, sizeof(*j));
	j->buf = buf;
	j->cap = cap;
	if (buf != NULL)
		buf[0] = '\0';
}

int
json_error(const struct json *j)
{
	return j->err;
}

bool
json_complete(const struct json *j)
{
	return j->err == 0 && j->depth == 0 && j->has_item[0];
}

static void
set_err(struct json *j, int err)
{
	if (j->err == 0)
		j->err = err;
}

static void
append(struct json *j, const char *s, size_t n)
{
	if (j->err != 0)
		return;
	if (j->len + n + 1 > j->cap) {
		size_t cap = j->cap != 0 ? j->cap : 256;
		char *nb;

		while (j->len + n + 1 > cap) {
			if (cap > SIZE_MAX / 2) {
				set_err(j, -ENOMEM);
				return;
			}
			cap *= 2;
		}
		nb = realloc(j->buf, cap);
		if (nb == NULL) {
			set_err(j, -ENOMEM);
			return;
		}
		j->buf = nb;
		j->cap = cap;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void
append_c(struct json *j, char c)
{
	append(j, &c, 1);
}

/* Check that a value may be written here and write the comma before it. */
static bool
before_value(struct json *j)
{
	if (j->err != 0)
		return false;
	if (j->depth == 0 && j->has_item[0]) {
		set_err(j, -EINVAL); /* a second top-level value */
		return false;
	}
	if (j->is_obj[j->depth] && !j->after_key) {
		set_err(j, -EINVAL); /* object member without a key */
		return false;
	}
	if (!j->after_key && j->has_item[j->depth])
		append_c(j, ',');
	j->after_key = false;
	j->has_item[j->depth] = true;
	return j->err == 0;
}

static void
append_escaped(struct json *j, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s;

	/* Copy runs of plain bytes at once; escape '"', '\\' and C0 controls
	 * (RFC 8259 section 7). Other bytes, UTF-8 included, pass unchanged. */
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[7];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		append(j, run, (size_t)(s - run));
		run = s + 1;
		switch (c) {
		case '"': append(j, "\\\"", 2); break;
		case '\\': append(j, "\\\\", 2); break;
		case '\n': append(j, "\\n", 2); break;
		case '\r': append(j, "\\r", 2); break;
		case '\t': append(j, "\\t", 2); break;
		case '\b': append(j, "\\b", 2); break;
		case '\f': append(j, "\\f", 2); break;
		default:
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xF];
			esc[6] = '\0';
			append(j, esc, 6);
			break;
		}
	}
	append(j, run, (size_t)(s - run));
}

static void
open_container(struct json *j, bool obj)
{
	if (!before_value(j))
		return;
	if (j->depth >= JSON_MAX_DEPTH) {
		set_err(j, -E2BIG);
		return;
	}
	append_c(j, obj ? '{' : '[');
	j->depth++;
	j->has_item[j->depth] = false;
	j->is_obj[j->depth] = obj;
}

static void
close_container(struct json *j, bool obj)
{
	if (j->err != 0)
		return;
	if (j->depth == 0 || j->is_obj[j->depth] != obj || j->after_key) {
		set_err(j, -EINVAL);
		return;
	}
	append_c(j, obj ? '}' : ']');
	j->depth--;
}

void
json_obj_begin(struct json *j)
{
	open_container(j, true);
}

void
json_obj_end(struct json *j)
{
	close_container(j, true);
}

void
json_arr_begin(struct json *j)
{
	open_container(j, false);
}

void
json_arr_end(struct json *j)
{
	close_container(j, false);
}

void
json_key(struct json *j, const char *key)
{
	if (j->err != 0)
		return;
	if (j->depth == 0 || !j->is_obj[j->depth] || j->after_key || key == NULL) {
		set_err(j, -EINVAL);
		return;
	}
	if (j->has_item[j->depth])
		append_c(j, ',');
	append_c(j, '"');
	append_escaped(j, key);
	append(j, "\":", 2);
	j->after_key = true;
}

void
json_str(struct json *j, const char *s)
{
	if (s == NULL) {
		json_null(j);
		return;
	}
	if (!before_value(j))
		return;
	append_c(j, '"');
	append_escaped(j, s);
	append_c(j, '"');
}

void
json_u64(struct json *j, uint64_t v)
{
	char num[24];
	int n;

	if (!before_value(j))
		return;
	n = snprintf(num, sizeof(num), "%" PRIu64, v);
	append(j, num, (size_t)n);
}

void
json_double(struct json *j, double v, int digits)
{
	char num[64];
	int n;

	if (!isfinite(v)) {
		json_null(j); /* JSON has no NaN or infinity */
		return;
	}
	if (!before_value(j))
		return;
	n = snprintf(num, sizeof(num), "%.*f", digits < 0 ? 0 : digits > 9 ? 9 : digits, v);
	if (n < 0 || n >= (int)sizeof(num)) {
		j->err = j->err ? j->err : -EINVAL;
		return;
	}
	append(j, num, (size_t)n);
}

void
json_i64(struct json *j, int64_t v)
{
	char num[24];
	int n;

	if (!before_value(j))
		return;
	n = snprintf(num, sizeof(num), "%" PRId64, v);
	append(j, num, (size_t)n);
}

void
json_bool(struct json *j, bool v)
{
	if (!before_value(j))
		return;
	if (v)
		append(j, "true", 4);
	else
		append(j, "false", 5);
}

void
json_null(struct json *j)
{
	if (!before_value(j))
		return;
	append(j, "null", 4);
}

void
json_kv_str(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_str(j, s);
}

void
json_kv_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64(j, v);
}

void
json_kv_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_bool(j, v);
}

void
json_kv_null(struct json *j, const char *key)
{
	json_key(j, key);
	json_null(j);
}

int
json_write_line(struct json *j, FILE *out)
{
	int ret = 0;

	if (j->err != 0)
		ret = j->err;
	else if (!json_complete(j))
		ret = -EINVAL;
	else if (fwrite(j->buf, 1, j->len, out) != j->len || fputc('\n', out) == EOF)
		ret = -EIO;
	json_reset(j);
	return ret;
}
