/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * A small streaming JSON writer for uroce-ctl. Every subcommand prints JSON
 * lines (one object per line), so the writer builds one value at a time into
 * a growing buffer and the caller writes the buffer out. Commas and nesting
 * are tracked by the writer; the caller only says "key", "value", "begin",
 * "end". Numbers are printed exactly: 64-bit unsigned values are written as
 * plain decimal JSON numbers, never as strings and never through a double.
 *
 * Errors (out of memory, nesting too deep, a value where a key is needed)
 * are sticky: the writer stops writing and json_error() reports the first
 * one, so a caller checks once per line.
 */

#ifndef UROCE_CTL_JSON_H
#define UROCE_CTL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
	char *buf;          /**< NUL-terminated text written so far */
	size_t len;
	size_t cap;
	int err;            /**< first error, 0 or -errno */
	unsigned int depth; /**< open objects and arrays */
	/** Per level: a value was already written (the next needs a comma). */
	bool has_item[JSON_MAX_DEPTH + 1];
	/** Per level: the container is an object (keys needed). */
	bool is_obj[JSON_MAX_DEPTH + 1];
	bool after_key;     /**< a key was written; its value comes next */
};

/** Start an empty writer. */
void json_init(struct json *j);

/** Free the buffer. */
void json_free(struct json *j);

/** Forget the text and the error; keep the buffer for the next line. */
void json_reset(struct json *j);

/**
 * First error since the last reset: 0, -ENOMEM (buffer could not grow),
 * -E2BIG (nesting deeper than JSON_MAX_DEPTH) or -EINVAL (misuse: a key
 * outside an object, a value without a key in an object, an unbalanced end,
 * or a second top-level value).
 */
int json_error(const struct json *j);

/** True when every container is closed and one top-level value was written. */
bool json_complete(const struct json *j);

void json_obj_begin(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);

/** Write an object key; @p key is escaped like any string. */
void json_key(struct json *j, const char *key);

/** Write a string value, escaping '"', '\\' and control characters. NULL writes null. */
void json_str(struct json *j, const char *s);
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
/** A number with @p digits (0..9) after the point; NaN and infinities write null. */
void json_double(struct json *j, double v, int digits);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);

/* key + value in one call */
void json_kv_str(struct json *j, const char *key, const char *s);
void json_kv_u64(struct json *j, const char *key, uint64_t v);
void json_kv_bool(struct json *j, const char *key, bool v);
void json_kv_null(struct json *j, const char *key);

/**
 * Write the finished value and a newline to @p out, then reset the writer.
 *
 * @return 0, the writer's error (see json_error()), -EINVAL if the value is
 *   not complete, or -EIO if the stream reported an error.
 */
int json_write_line(struct json *j, FILE *out);

#endif /* UROCE_CTL_JSON_H */
