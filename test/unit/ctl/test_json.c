/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Unit tests of app/uroce-ctl/json.c, the JSON-lines writer of uroce-ctl:
 * separators and nesting, string escaping (RFC 8259 section 7), exact 64-bit
 * numbers, sticky errors on misuse, and line output.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "json.h"

static struct json j;

static void
setup(void)
{
	json_init(&j);
}

static void
teardown(void)
{
	json_free(&j);
}

TestSuite(json, .init = setup, .fini = teardown);

Test(json, empty_containers)
{
	json_obj_begin(&j);
	json_obj_end(&j);
	cr_assert_str_eq(j.buf, "{}");
	cr_assert(json_complete(&j));
	json_reset(&j);
	json_arr_begin(&j);
	json_arr_end(&j);
	cr_assert_str_eq(j.buf, "[]");
}

Test(json, members_commas_and_nesting)
{
	/* Expect: commas between members and array items, none after the last. */
	json_obj_begin(&j);
	json_kv_u64(&j, "index", 0);
	json_kv_bool(&j, "valid", false);
	json_kv_null(&j, "error");
	json_kv_str(&j, "src", "198.18.0.1");
	json_key(&j, "reth");
	json_obj_begin(&j);
	json_kv_u64(&j, "va", 1);
	json_kv_u64(&j, "rkey", 2);
	json_obj_end(&j);
	json_key(&j, "psn");
	json_arr_begin(&j);
	json_u64(&j, 1);
	json_null(&j);
	json_bool(&j, true);
	json_arr_begin(&j);
	json_arr_end(&j);
	json_arr_end(&j);
	json_obj_end(&j);
	cr_assert_eq(json_error(&j), 0);
	cr_assert(json_complete(&j));
	cr_assert_str_eq(j.buf, "{\"index\":0,\"valid\":false,\"error\":null,"
				"\"src\":\"198.18.0.1\",\"reth\":{\"va\":1,\"rkey\":2},\"psn\":[1,null,true,[]]}");
}

Test(json, numbers_exact)
{
	/* Expect: 64-bit values printed exactly, not through a double. */
	json_arr_begin(&j);
	json_u64(&j, UINT64_MAX);
	json_u64(&j, (UINT64_C(1) << 53) + 1);
	json_i64(&j, INT64_MIN);
	json_i64(&j, -1);
	json_u64(&j, 0);
	json_arr_end(&j);
	cr_assert_str_eq(j.buf,
			 "[18446744073709551615,9007199254740993,-9223372036854775808,-1,0]");
}

Test(json, string_escapes)
{
	/* Expect: '"', '\\' and every C0 control escaped; UTF-8 and DEL pass through. */
	json_arr_begin(&j);
	json_str(&j, "a\"b\\c\n\r\t\b\f\x01\x1f\x7f");
	json_str(&j, "caf\xc3\xa9");
	json_str(&j, "");
	json_str(&j, NULL);
	json_arr_end(&j);
	cr_assert_str_eq(j.buf, "[\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\x7f\",\"caf\xc3\xa9\","
				"\"\",null]");
}

Test(json, key_escaped)
{
	json_obj_begin(&j);
	json_kv_u64(&j, "a\"b", 1);
	json_obj_end(&j);
	cr_assert_str_eq(j.buf, "{\"a\\\"b\":1}");
}

Test(json, long_string_grows_buffer)
{
	size_t n = 100000;
	char *s = malloc(n + 1);

	cr_assert_not_null(s);
	memset(s, 'x', n);
	s[n] = '\0';
	json_str(&j, s);
	cr_assert_eq(json_error(&j), 0);
	cr_assert_eq(j.len, n + 2);
	cr_assert_eq(j.buf[0], '"');
	cr_assert_eq(j.buf[n + 1], '"');
	cr_assert_eq(j.buf[n + 2], '\0');
	free(s);
}

Test(json, misuse_key_outside_object)
{
	json_key(&j, "k");
	cr_assert_eq(json_error(&j), -EINVAL);
	json_reset(&j);
	json_arr_begin(&j);
	json_key(&j, "k");
	cr_assert_eq(json_error(&j), -EINVAL);
}

Test(json, misuse_value_without_key)
{
	json_obj_begin(&j);
	json_u64(&j, 1);
	cr_assert_eq(json_error(&j), -EINVAL);
	/* Expect: the error is sticky and nothing more is written. */
	json_reset(&j);
	json_obj_begin(&j);
	json_u64(&j, 1);
	json_kv_u64(&j, "k", 2);
	cr_assert_eq(json_error(&j), -EINVAL);
	cr_assert_str_eq(j.buf, "{");
}

Test(json, misuse_two_keys_and_bad_end)
{
	json_obj_begin(&j);
	json_key(&j, "a");
	json_key(&j, "b");
	cr_assert_eq(json_error(&j), -EINVAL);
	json_reset(&j);
	json_obj_begin(&j);
	json_key(&j, "a");
	json_obj_end(&j); /* key without value */
	cr_assert_eq(json_error(&j), -EINVAL);
	json_reset(&j);
	json_obj_begin(&j);
	json_arr_end(&j); /* wrong kind */
	cr_assert_eq(json_error(&j), -EINVAL);
	json_reset(&j);
	json_obj_end(&j); /* nothing open */
	cr_assert_eq(json_error(&j), -EINVAL);
}

Test(json, misuse_second_top_level_value)
{
	json_u64(&j, 1);
	cr_assert(json_complete(&j));
	json_u64(&j, 2);
	cr_assert_eq(json_error(&j), -EINVAL);
	cr_assert(!json_complete(&j));
}

Test(json, depth_limit)
{
	int i;

	for (i = 0; i < JSON_MAX_DEPTH; i++)
		json_arr_begin(&j);
	cr_assert_eq(json_error(&j), 0);
	json_arr_begin(&j);
	cr_assert_eq(json_error(&j), -E2BIG);
}

Test(json, write_line_and_reset)
{
	char out[256];
	FILE *f = tmpfile();
	size_t n;

	cr_assert_not_null(f);
	json_obj_begin(&j);
	json_kv_u64(&j, "a", 1);
	json_obj_end(&j);
	cr_assert_eq(json_write_line(&j, f), 0);
	/* Expect: the writer is empty again and takes the next line. */
	cr_assert_eq(j.len, 0);
	json_arr_begin(&j);
	json_arr_end(&j);
	cr_assert_eq(json_write_line(&j, f), 0);
	/* Expect: an incomplete value is refused and not written. */
	json_obj_begin(&j);
	cr_assert_eq(json_write_line(&j, f), -EINVAL);
	/* Expect: an errored value is refused with its error. */
	json_key(&j, "k");
	cr_assert_eq(json_write_line(&j, f), -EINVAL);
	rewind(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	cr_assert_str_eq(out, "{\"a\":1}\n[]\n");
	fclose(f);
}
