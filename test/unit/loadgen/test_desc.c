/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Unit tests of lib/loadgen/desc.c and json_read.c: a description written
 * is read back field for field; a sink's whole output (description, then
 * rate records) reads as its description; and untrusted text is refused with
 * a message that names the problem: bad JSON of every kind, missing and
 * mistyped fields, values out of range, hostile sizes and depths.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "uroce_loadgen.h"

static struct uroce_lg_desc d, r;
static char err[256];

static void
sample(struct uroce_lg_desc *x, bool v4)
{
	memset(x, 0, sizeof(*x));
	x->version = UROCE_LG_DESC_VERSION;
	strcpy(x->pattern, UROCE_LG_PATTERN);
	strcpy(x->socket, "/run/uroce/a \"b\".sock");
	x->port = 1;
	x->gid_index = v4 ? 1 : 2;
	cr_assert_eq(uroce_lg_parse_mac("02:00:c6:12:03:01", x->mac), 0);
	strcpy(x->mac_source, "gid0");
	x->has_vlan = !v4;
	x->vlan = v4 ? 0 : 100;
	cr_assert_eq(uroce_lg_addr_gid(v4 ? "198.18.3.1" : "2001:2::3:1", x->gid), 0);
	cr_assert_eq(uroce_lg_addr_gid(v4 ? "198.18.3.254" : "2001:2::3:fe", x->peer_gid), 0);
	x->n_gids = 1;
	memcpy(x->gids[0], x->gid, 16);
	x->gid_idx[0] = x->gid_index;
	x->path_mtu = 1024;
	x->ud_max_payload = 1024;
	x->size = 64;
	x->n_qps = 2;
	x->qps[0] = (struct uroce_lg_qp){.type = UROCE_LG_UC, .qpn = 0x11, .peer_qpn = 0x100,
					 .psn = 0xfffffe, .rkey = 0xdeadbe01,
					 .va = 0xffffffffffffe000ull, .len = 4096,
					 .recv_slots = 256,
					 .ops = UROCE_LG_OP_WRITE | UROCE_LG_OP_WRITE_IMM |
						UROCE_LG_OP_SEND};
	x->qps[1] = (struct uroce_lg_qp){.type = UROCE_LG_UD, .qpn = 0xffffff, .peer_qpn = 0x101,
					 .qkey = 0x11111111, .recv_slots = 4096,
					 .ops = UROCE_LG_OP_SEND};
}

static char *
written(const struct uroce_lg_desc *x)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	cr_assert_eq(uroce_lg_desc_write(f, x), 0);
	fclose(f);
	return text;
}

static int
parse(const char *text)
{
	return uroce_lg_desc_parse(text, strlen(text), &r, err, sizeof(err));
}

static void
same(const struct uroce_lg_desc *a, const struct uroce_lg_desc *b)
{
	unsigned int i;

	cr_assert_eq(a->version, b->version);
	cr_assert_str_eq(a->pattern, b->pattern);
	cr_assert_str_eq(a->socket, b->socket);
	cr_assert_eq(a->port, b->port);
	cr_assert_eq(a->gid_index, b->gid_index);
	cr_assert_arr_eq(a->mac, b->mac, 6);
	cr_assert_str_eq(a->mac_source, b->mac_source);
	cr_assert_eq(a->has_vlan, b->has_vlan);
	cr_assert_eq(a->vlan, b->vlan);
	cr_assert_arr_eq(a->gid, b->gid, 16);
	cr_assert_arr_eq(a->peer_gid, b->peer_gid, 16);
	cr_assert_eq(a->n_gids, b->n_gids);
	cr_assert_arr_eq(a->gids[0], b->gids[0], 16);
	cr_assert_eq(a->path_mtu, b->path_mtu);
	cr_assert_eq(a->ud_max_payload, b->ud_max_payload);
	cr_assert_eq(a->size, b->size);
	cr_assert_eq(a->n_qps, b->n_qps);
	for (i = 0; i < a->n_qps; i++)
		cr_assert_eq(memcmp(&a->qps[i], &b->qps[i], sizeof(a->qps[i])), 0, "QP %u", i);
}

Test(desc, round_trip_ipv4_and_ipv6)
{
	int v4;

	for (v4 = 0; v4 < 2; v4++) {
		char *text;

		sample(&d, v4);
		text = written(&d);
		cr_assert_eq(parse(text), 0, "%s", err);
		same(&d, &r);
		/* Expect: one line, and the address keys readable by a script. */
		cr_assert_eq(strchr(text, '\n'), text + strlen(text) - 1);
		cr_assert_not_null(strstr(text, v4 ? "\"ip\":\"198.18.3.1\"" :
						     "\"ip\":\"2001:2::3:1\""));
		cr_assert_not_null(strstr(text, v4 ? "\"family\":\"ipv4\"" :
						     "\"family\":\"ipv6\""));
		free(text);
	}
}

Test(desc, a_sink_output_reads_as_its_description)
{
	char *text, *all;

	sample(&d, true);
	text = written(&d);
	all = malloc(strlen(text) + 200);
	strcpy(all, text);
	strcat(all, "{\"uroce_rate\":1,\"role\":\"sink\"}\n{\"uroce_sink_summary\":1}\n");
	cr_assert_eq(parse(all), 0, "%s", err);
	same(&d, &r);
	free(all);
	free(text);
}

Test(desc, unknown_keys_are_ignored)
{
	char *text, *more;

	sample(&d, true);
	text = written(&d);
	more = malloc(strlen(text) + 100);
	/* A newer sink's extra keys, inside the object. */
	strcpy(more, "{\"future\":[1,{\"a\":null}],");
	strcat(more, text + 1);
	cr_assert_eq(parse(more), 0, "%s", err);
	same(&d, &r);
	free(more);
	free(text);
}

/* Replace the first occurrence of @p from in the sample's text with @p to;
 * expect the reader to refuse the result with a message holding @p what. */
static void
refuse_edit(const char *from, const char *to, const char *what)
{
	char *text, *p, *edited;

	sample(&d, true);
	text = written(&d);
	p = strstr(text, from);
	cr_assert_not_null(p, "'%s' not in %s", from, text);
	edited = malloc(strlen(text) + strlen(to) + 1);
	memcpy(edited, text, (size_t)(p - text));
	strcpy(edited + (p - text), to);
	strcat(edited, p + strlen(from));
	err[0] = '\0';
	cr_assert_eq(parse(edited), -EINVAL, "accepted: %s", edited);
	cr_assert_not_null(strstr(err, what), "message '%s' does not name '%s'", err, what);
	free(edited);
	free(text);
}

Test(desc, bad_fields_are_refused_by_name)
{
	refuse_edit("\"qpn\":17", "\"qpn\":16777216", "qps[0].qpn");
	refuse_edit("\"qpn\":17", "\"qpn\":1", "qps[0].qpn");
	refuse_edit("\"qpn\":17", "\"qpn\":17.5", "qps[0].qpn");
	refuse_edit("\"qpn\":17", "\"qpn\":-17", "qps[0].qpn");
	refuse_edit("\"qpn\":17", "\"qpn\":\"17\"", "qps[0].qpn");
	refuse_edit("\"qpn\":17,", "", "qps[0].qpn: missing");
	refuse_edit("\"psn\":16777214", "\"psn\":16777216", "qps[0].psn");
	refuse_edit("\"rkey\":3735928321", "\"rkey\":4294967296", "qps[0].rkey");
	refuse_edit("\"va\":18446744073709543424", "\"va\":18446744073709551616", "qps[0].va");
	refuse_edit("\"len\":4096", "\"len\":8193", "wraps");
	refuse_edit("\"type\":\"UD\"", "\"type\":\"RC\"", "qps[1].type");
	refuse_edit("\"qkey\":286331153,", "", "qps[1].qkey");
	refuse_edit("\"ops\":[\"send\"]", "\"ops\":[\"write\"]", "UD QP takes SEND only");
	refuse_edit("\"ops\":[\"send\"]", "\"ops\":\"send\"", "qps[1].ops");
	refuse_edit("\"ops\":[\"send\"]", "\"ops\":[7]", "qps[1].ops[0]");
	refuse_edit("\"qps\":[", "\"qps\":7,\"x\":[", "qps: expected an array");
	refuse_edit("\"mac\":\"02:00:c6:12:03:01\"", "\"mac\":\"02:00:c6:12:03\"", "mac");
	refuse_edit("\"mac\":\"02:00:c6:12:03:01\"", "\"mac\":\"02:00:c6:12:03:0g\"", "mac");
	refuse_edit("\"mac\":\"02:00:c6:12:03:01\"", "\"mac\":\"03:00:c6:12:03:01\"", "multicast");
	refuse_edit("\"gid\":\"::ffff:198.18.3.1\"", "\"gid\":\"198.18.3.300\"", "gid");
	refuse_edit("\"peer_gid\":\"::ffff:198.18.3.254\"", "\"peer_gid\":\"2001:2::fe\"",
		    "families");
	refuse_edit("\"vlan\":null", "\"vlan\":4095", "vlan");
	refuse_edit("\"path_mtu\":1024", "\"path_mtu\":100", "path_mtu");
	refuse_edit("\"uroce_sink\":1", "\"uroce_sink\":2", "version 2");
	refuse_edit("\"uroce_sink\":1,", "", "not a sink description");
	refuse_edit("\"socket\":\"", "\"socket\":\"/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		    "socket");
}

Test(desc, too_many_qps)
{
	unsigned int i;

	sample(&d, false);
	d.n_qps = UROCE_LG_MAX_QPS;
	for (i = 0; i < d.n_qps; i++)
		d.qps[i] = d.qps[1];
	{
		char *text = written(&d), *big = malloc(strlen(text) + 200), *q;

		/* Expect: 256 QPs read; a 257th is refused. */
		cr_assert_eq(parse(text), 0, "%s", err);
		cr_assert_eq(r.n_qps, UROCE_LG_MAX_QPS);
		q = strstr(text, "\"qps\":[") + 7;
		memcpy(big, text, (size_t)(q - text));
		strcpy(big + (q - text), "{},");
		strcat(big, q);
		cr_assert_eq(parse(big), -EINVAL);
		cr_assert_not_null(strstr(err, "at most 256"), "%s", err);
		free(big);
		free(text);
	}
}

Test(desc, bad_json_is_refused_with_a_position)
{
	static const struct {
		const char *text;
		const char *what;
	} cases[] = {
		{"", "end of the text"},
		{"   ", "end of the text"},
		{"{", "member name"},
		{"{\"a\"", "':'"},
		{"{\"a\":}", "JSON value"},
		{"{\"a\":1,}", "member name"},
		{"[1 2]", "',' or ']'"},
		{"{\"a\":tru}", "JSON value"},
		{"{\"a\":01}", "',' or '}'"},
		{"{\"a\":1.}", "digits must follow"},
		{"{\"a\":1e}", "digits must follow"},
		{"{\"a\":-}", "bad number"},
		{"{\"a\":\"x}", "unterminated string"},
		{"{\"a\":\"\\x\"}", "bad escape"},
		{"{\"a\":\"\\u12\"}", "\\u escape"},
		{"{\"a\":\"\\ud800\"}", "surrogate"},
		{"{\"a\":\"\\udc00x\"}", "surrogate"},
		{"{\"a\":\"\\u0000\"}", "\\u0000"},
		{"{\"a\":\"\t\"}", "control character"},
		{"\n\n  {\"a\" 1}", "line 3, column 8"},
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		cr_assert_eq(parse(cases[i].text), -EINVAL, "accepted '%s'", cases[i].text);
		cr_assert_not_null(strstr(err, cases[i].what), "'%s': message '%s'", cases[i].text,
				   err);
	}
	/* Expect: a document that is JSON but not an object. */
	cr_assert_eq(parse("[]"), -EINVAL);
	cr_assert_not_null(strstr(err, "not a JSON object"));
}

Test(desc, strings_decode_escapes_and_utf8)
{
	char *text;

	sample(&d, true);
	strcpy(d.socket, "/tmp/\xc3\xa9\"\\x");
	text = written(&d);
	cr_assert_eq(parse(text), 0, "%s", err);
	cr_assert_str_eq(r.socket, d.socket);
	free(text);
	/* \u escapes (BMP and a surrogate pair) become UTF-8. */
	sample(&d, true);
	strcpy(d.socket, "/tmp/x.sock");
	text = written(&d);
	{
		char *p = strstr(text, "\"socket\":\""), *e2 = malloc(strlen(text) + 64);

		p += strlen("\"socket\":\"");
		memcpy(e2, text, (size_t)(p - text));
		strcpy(e2 + (p - text), "\\u00e9\\ud83d\\ude00\\/");
		strcat(e2, strchr(p, '"'));
		cr_assert_eq(parse(e2), 0, "%s", err);
		cr_assert_str_eq(r.socket, "\xc3\xa9\xf0\x9f\x98\x80/");
		free(e2);
	}
	free(text);
}

Test(desc, hostile_sizes)
{
	size_t n = 40, i;
	char *deep = malloc(2 * n + 1);

	/* Expect: nesting deeper than the bound is -E2BIG, not a stack overflow. */
	for (i = 0; i < n; i++) {
		deep[i] = '[';
		deep[2 * n - 1 - i] = ']';
	}
	deep[2 * n] = '\0';
	cr_assert_eq(parse(deep), -E2BIG);
	free(deep);
	/* Expect: more than 1 MiB of text is -E2BIG before any parsing. */
	{
		size_t big = (1u << 20) + 1;
		char *t = malloc(big);

		memset(t, ' ', big);
		cr_assert_eq(uroce_lg_desc_parse(t, big, &r, err, sizeof(err)), -E2BIG);
		free(t);
	}
	/* Expect: a number larger than 64 bits is out of range, not wrapped. */
	refuse_edit("\"port\":1", "\"port\":99999999999999999999999", "port");
}

Test(desc, address_helpers)
{
	uint8_t g[16], mac[6];
	char buf[64];

	cr_assert_eq(uroce_lg_addr_gid("198.18.0.1", g), 0);
	cr_assert(uroce_lg_gid_is_v4(g));
	cr_assert_str_eq(uroce_lg_gid_addr(g, buf, sizeof(buf)), "198.18.0.1");
	cr_assert_eq(uroce_lg_addr_gid("::ffff:198.18.0.2", g), 0);
	cr_assert_str_eq(uroce_lg_gid_addr(g, buf, sizeof(buf)), "198.18.0.2");
	cr_assert_eq(uroce_lg_addr_gid("2001:2::1", g), 0);
	cr_assert_not(uroce_lg_gid_is_v4(g));
	cr_assert_str_eq(uroce_lg_gid_addr(g, buf, sizeof(buf)), "2001:2::1");
	cr_assert_eq(uroce_lg_addr_gid("198.18.0", g), -EINVAL);
	cr_assert_eq(uroce_lg_addr_gid("", g), -EINVAL);
	cr_assert_eq(uroce_lg_parse_mac("02:00:c6:12:03:01", mac), 0);
	cr_assert_eq(uroce_lg_parse_mac("02:00:c6:12:03:01:", mac), -EINVAL);
	cr_assert_eq(uroce_lg_parse_mac("02:00:c6:12:03: 1", mac), -EINVAL);
	cr_assert_eq(uroce_lg_parse_mac("+2:00:c6:12:03:01", mac), -EINVAL);
	cr_assert_eq(uroce_lg_parse_mac("0200c6120301", mac), -EINVAL);
	/* Expect: the MAC behind uroced's GID 0 (operations.md's example). */
	cr_assert_eq(uroce_lg_addr_gid("fe80::c6ff:fe12:102", g), 0);
	cr_assert_eq(uroce_lg_mac_from_gid(g, mac), 0);
	cr_assert_arr_eq(mac, ((uint8_t[]){0x02, 0x00, 0xc6, 0x12, 0x01, 0x02}), 6);
	cr_assert_eq(uroce_lg_addr_gid("fe80::1", g), 0);
	cr_assert_eq(uroce_lg_mac_from_gid(g, mac), -EINVAL);
	cr_assert_eq(uroce_lg_addr_gid("2001:2::c6ff:fe12:102", g), 0);
	cr_assert_eq(uroce_lg_mac_from_gid(g, mac), -EINVAL);
}
