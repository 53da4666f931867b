/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The sink description (uroce_loadgen.h, doc/loadgen.md): one JSON object
 * that `uroce-perf sink` prints and `uroce-ctl template` (or a script) reads.
 * The writer and the reader live side by side so that a key renamed in one
 * is renamed in the other; the unit tests read back what is written. The
 * reader treats the text as untrusted: a missing or mistyped field is an
 * error that names it, and values are range-checked before use.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen_internal.h"
#include "uroce_loadgen.h"

/* ------------------------------------------------------------------------ */
/* Addresses                                                                 */
/* ------------------------------------------------------------------------ */

bool
uroce_lg_gid_is_v4(const uint8_t gid[16])
{
	static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(gid, pfx, sizeof(pfx)) == 0;
}

char *
uroce_lg_gid_addr(const uint8_t gid[16], char *buf, size_t len)
{
	if (uroce_lg_gid_is_v4(gid)) {
		if (inet_ntop(AF_INET, gid + 12, buf, (socklen_t)len) == NULL && len > 0)
			buf[0] = '\0';
	} else if (inet_ntop(AF_INET6, gid, buf, (socklen_t)len) == NULL && len > 0) {
		buf[0] = '\0';
	}
	return buf;
}

int
uroce_lg_addr_gid(const char *s, uint8_t gid[16])
{
	uint8_t v4[4];

	if (inet_pton(AF_INET, s, v4) == 1) {
		memset(gid, 0, 10);
		gid[10] = 0xff;
		gid[11] = 0xff;
		memcpy(gid + 12, v4, 4);
		return 0;
	}
	if (inet_pton(AF_INET6, s, gid) == 1)
		return 0;
	return -EINVAL;
}

int
uroce_lg_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6], i;
	char tail;

	if (strlen(s) != 17 ||
	    sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		/* sscanf's %x takes a sign or a space; only hex digits are a MAC. */
		const char *h = s + 3 * i;

		if (!((h[0] >= '0' && h[0] <= '9') || (h[0] >= 'a' && h[0] <= 'f') ||
		      (h[0] >= 'A' && h[0] <= 'F')) ||
		    !((h[1] >= '0' && h[1] <= '9') || (h[1] >= 'a' && h[1] <= 'f') ||
		      (h[1] >= 'A' && h[1] <= 'F')))
			return -EINVAL;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

int
uroce_lg_mac_from_gid(const uint8_t gid[16], uint8_t mac[6])
{
	static const uint8_t ll[8] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0};

	/* fe80::/64, interface id aa:bb:cc:ff:fe:dd:ee:ff with the U/L bit
	 * flipped (RFC 4291 appendix A, modified EUI-64). */
	if (memcmp(gid, ll, sizeof(ll)) != 0 || gid[11] != 0xff || gid[12] != 0xfe)
		return -EINVAL;
	mac[0] = gid[8] ^ 0x02;
	mac[1] = gid[9];
	mac[2] = gid[10];
	mac[3] = gid[13];
	mac[4] = gid[14];
	mac[5] = gid[15];
	return 0;
}

const char *
uroce_lg_qp_type_name(enum uroce_lg_qp_type t)
{
	return t == UROCE_LG_UC ? "UC" : t == UROCE_LG_UD ? "UD" : "?";
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */
/* ------------------------------------------------------------------------ */

static void
put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void
put_gid(FILE *f, const char *key, const uint8_t gid[16])
{
	char buf[INET6_ADDRSTRLEN];

	/* The GID in IPv6 form (::ffff:a.b.c.d for IPv4); "ip" keys give the address. */
	if (inet_ntop(AF_INET6, gid, buf, sizeof(buf)) == NULL)
		buf[0] = '\0';
	fprintf(f, "\"%s\":", key);
	put_str(f, buf);
}

static void
put_ops(FILE *f, uint32_t ops)
{
	static const char *const names[] = {"write", "write_imm", "send"};
	unsigned int i;
	bool first = true;

	fputc('[', f);
	for (i = 0; i < 3; i++) {
		if (!(ops & (1u << i)))
			continue;
		fprintf(f, "%s\"%s\"", first ? "" : ",", names[i]);
		first = false;
	}
	fputc(']', f);
}

int
uroce_lg_desc_write(FILE *f, const struct uroce_lg_desc *d)
{
	char addr[INET6_ADDRSTRLEN];
	unsigned int i;

	fprintf(f, "{\"uroce_sink\":%u,\"pattern\":", d->version);
	put_str(f, d->pattern);
	fprintf(f, ",\"socket\":");
	put_str(f, d->socket);
	fprintf(f, ",\"port\":%u,\"gid_index\":%u", d->port, d->gid_index);
	fprintf(f, ",\"mac\":\"%02x:%02x:%02x:%02x:%02x:%02x\",\"mac_source\":", d->mac[0],
		d->mac[1], d->mac[2], d->mac[3], d->mac[4], d->mac[5]);
	put_str(f, d->mac_source);
	if (d->has_vlan)
		fprintf(f, ",\"vlan\":%u", d->vlan);
	else
		fprintf(f, ",\"vlan\":null");
	fprintf(f, ",\"family\":\"%s\",", uroce_lg_gid_is_v4(d->gid) ? "ipv4" : "ipv6");
	put_gid(f, "gid", d->gid);
	fprintf(f, ",\"ip\":");
	put_str(f, uroce_lg_gid_addr(d->gid, addr, sizeof(addr)));
	fputc(',', f);
	put_gid(f, "peer_gid", d->peer_gid);
	fprintf(f, ",\"peer_ip\":");
	put_str(f, uroce_lg_gid_addr(d->peer_gid, addr, sizeof(addr)));
	fprintf(f, ",\"gids\":[");
	for (i = 0; i < d->n_gids && i < 16; i++) {
		fprintf(f, "%s{\"index\":%u,", i ? "," : "", d->gid_idx[i]);
		put_gid(f, "gid", d->gids[i]);
		fputc('}', f);
	}
	fprintf(f, "],\"path_mtu\":%u,\"ud_max_payload\":%u,\"size\":%u,\"qps\":[", d->path_mtu,
		d->ud_max_payload, d->size);
	for (i = 0; i < d->n_qps; i++) {
		const struct uroce_lg_qp *q = &d->qps[i];

		fprintf(f, "%s{\"type\":\"%s\",\"qpn\":%u,\"peer_qpn\":%u", i ? "," : "",
			uroce_lg_qp_type_name(q->type), q->qpn, q->peer_qpn);
		if (q->type == UROCE_LG_UC)
			fprintf(f, ",\"psn\":%u,\"rkey\":%u,\"va\":%" PRIu64 ",\"len\":%" PRIu64,
				q->psn, q->rkey, q->va, q->len);
		else
			fprintf(f, ",\"qkey\":%u", q->qkey);
		fprintf(f, ",\"recv_slots\":%u,\"ops\":", q->recv_slots);
		put_ops(f, q->ops);
		fputc('}', f);
	}
	fprintf(f, "]}\n");
	fflush(f);
	return ferror(f) ? -EIO : 0;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */
/* ------------------------------------------------------------------------ */

struct rd {
	const struct lgj_doc *doc;
	char *err;
	size_t errlen;
	bool failed;
};

static void __attribute__((format(printf, 2, 3)))
rd_fail(struct rd *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return;
	r->failed = true;
	if (r->err == NULL || r->errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(r->err, r->errlen, fmt, ap);
	va_end(ap);
}

/* Integer member @p key of @p obj in [lo, hi]; @p where names the object. */
static uint64_t
rd_uint(struct rd *r, const struct lgj_node *obj, const char *where, const char *key, uint64_t lo,
	uint64_t hi)
{
	const struct lgj_node *n = lgj_get(r->doc, obj, key);
	uint64_t v = 0;
	int rc;

	if (n == NULL) {
		rd_fail(r, "%s%s: missing", where, key);
		return lo;
	}
	rc = lgj_u64(r->doc, n, &v);
	if (rc != 0 || v < lo || v > hi) {
		rd_fail(r, "%s%s: expected an integer %" PRIu64 "..%" PRIu64, where, key, lo, hi);
		return lo;
	}
	return v;
}

static const char *
rd_str(struct rd *r, const struct lgj_node *obj, const char *where, const char *key)
{
	const char *s = lgj_str(r->doc, lgj_get(r->doc, obj, key));

	if (s == NULL) {
		rd_fail(r, "%s%s: expected a string", where, key);
		return "";
	}
	return s;
}

static void
rd_gid(struct rd *r, const struct lgj_node *obj, const char *where, const char *key,
       uint8_t gid[16])
{
	const char *s = rd_str(r, obj, where, key);

	if (!r->failed && uroce_lg_addr_gid(s, gid) != 0)
		rd_fail(r, "%s%s: '%s' is not an IPv4 or IPv6 address", where, key, s);
}

static uint32_t
rd_ops(struct rd *r, const struct lgj_node *arr, const char *where)
{
	uint32_t ops = 0, i;

	if (arr == NULL || arr->type != LGJ_ARRAY) {
		rd_fail(r, "%sops: expected an array of strings", where);
		return 0;
	}
	for (i = 0; i < arr->count; i++) {
		const char *s = lgj_str(r->doc, lgj_at(r->doc, arr, i));

		if (s != NULL && strcmp(s, "write") == 0)
			ops |= UROCE_LG_OP_WRITE;
		else if (s != NULL && strcmp(s, "write_imm") == 0)
			ops |= UROCE_LG_OP_WRITE_IMM;
		else if (s != NULL && strcmp(s, "send") == 0)
			ops |= UROCE_LG_OP_SEND;
		/* Other strings: operations of a newer sink; ignored. */
		else if (s == NULL)
			rd_fail(r, "%sops[%u]: expected a string", where, i);
	}
	return ops;
}

static void
rd_qp(struct rd *r, const struct lgj_node *o, unsigned int i, struct uroce_lg_qp *q)
{
	char where[32];
	const char *t;

	snprintf(where, sizeof(where), "qps[%u].", i);
	if (o == NULL || o->type != LGJ_OBJECT) {
		rd_fail(r, "qps[%u]: expected an object", i);
		return;
	}
	memset(q, 0, sizeof(*q));
	t = rd_str(r, o, where, "type");
	if (strcmp(t, "UC") == 0)
		q->type = UROCE_LG_UC;
	else if (strcmp(t, "UD") == 0)
		q->type = UROCE_LG_UD;
	else if (!r->failed)
		rd_fail(r, "%stype: '%s' is neither \"UC\" nor \"UD\"", where, t);
	/* QPs 0 and 1 are the special QPs; a sink's QPs are above. */
	q->qpn = (uint32_t)rd_uint(r, o, where, "qpn", 2, 0xffffff);
	q->peer_qpn = (uint32_t)rd_uint(r, o, where, "peer_qpn", 0, 0xffffff);
	q->recv_slots = (uint32_t)rd_uint(r, o, where, "recv_slots", 0, UINT32_MAX);
	q->ops = rd_ops(r, lgj_get(r->doc, o, "ops"), where);
	if (q->type == UROCE_LG_UC) {
		q->psn = (uint32_t)rd_uint(r, o, where, "psn", 0, 0xffffff);
		q->rkey = (uint32_t)rd_uint(r, o, where, "rkey", 0, UINT32_MAX);
		q->va = rd_uint(r, o, where, "va", 0, UINT64_MAX);
		q->len = rd_uint(r, o, where, "len", 0, UINT64_MAX);
		if (!r->failed && q->va + q->len < q->va)
			rd_fail(r, "%sva + len: the window wraps around the address space", where);
		if (!r->failed && (q->ops & ~(UROCE_LG_OP_WRITE | UROCE_LG_OP_WRITE_IMM |
					      UROCE_LG_OP_SEND)))
			rd_fail(r, "%sops: unknown bits", where);
	} else if (q->type == UROCE_LG_UD) {
		q->qkey = (uint32_t)rd_uint(r, o, where, "qkey", 0, UINT32_MAX);
		if (!r->failed && (q->ops & (UROCE_LG_OP_WRITE | UROCE_LG_OP_WRITE_IMM)))
			rd_fail(r, "%sops: a UD QP takes SEND only", where);
	}
}

int
uroce_lg_desc_parse(const char *text, size_t len, struct uroce_lg_desc *d, char *err,
		    size_t errlen)
{
	struct rd r = {.err = err, .errlen = errlen};
	const struct lgj_node *root, *qps, *gids, *vlan;
	const char *s;
	struct lgj_doc doc;
	unsigned int i;
	int rc;

	memset(d, 0, sizeof(*d));
	rc = lgj_parse(&doc, text, len, err, errlen);
	if (rc != 0)
		return rc;
	r.doc = &doc;
	root = lgj_root(&doc);
	if (root->type != LGJ_OBJECT) {
		rd_fail(&r, "the document is not a JSON object");
		goto out;
	}
	if (lgj_get(&doc, root, "uroce_sink") == NULL) {
		rd_fail(&r, "not a sink description (no \"uroce_sink\" key)");
		goto out;
	}
	d->version = (uint32_t)rd_uint(&r, root, "", "uroce_sink", 1, UINT32_MAX);
	if (!r.failed && d->version != UROCE_LG_DESC_VERSION) {
		rd_fail(&r, "uroce_sink: version %u, this reader knows %u", d->version,
			UROCE_LG_DESC_VERSION);
		goto out;
	}
	s = rd_str(&r, root, "", "pattern");
	if (strlen(s) >= sizeof(d->pattern))
		rd_fail(&r, "pattern: too long");
	else
		strcpy(d->pattern, s);
	s = rd_str(&r, root, "", "socket");
	if (strlen(s) >= sizeof(d->socket))
		rd_fail(&r, "socket: longer than %zu bytes", sizeof(d->socket) - 1);
	else
		strcpy(d->socket, s);
	d->port = (uint8_t)rd_uint(&r, root, "", "port", 1, 255);
	d->gid_index = (uint8_t)rd_uint(&r, root, "", "gid_index", 0, 255);
	s = rd_str(&r, root, "", "mac");
	if (!r.failed && uroce_lg_parse_mac(s, d->mac) != 0)
		rd_fail(&r, "mac: '%s' is not a MAC address (aa:bb:cc:dd:ee:ff)", s);
	if (!r.failed && (d->mac[0] & 1))
		rd_fail(&r, "mac: '%s' is a multicast address", s);
	s = lgj_str(&doc, lgj_get(&doc, root, "mac_source"));
	snprintf(d->mac_source, sizeof(d->mac_source), "%s", s != NULL ? s : "");
	vlan = lgj_get(&doc, root, "vlan");
	if (vlan != NULL && vlan->type != LGJ_NULL) {
		d->has_vlan = true;
		d->vlan = (uint16_t)rd_uint(&r, root, "", "vlan", 1, 4094);
	}
	rd_gid(&r, root, "", "gid", d->gid);
	rd_gid(&r, root, "", "peer_gid", d->peer_gid);
	if (!r.failed && uroce_lg_gid_is_v4(d->gid) != uroce_lg_gid_is_v4(d->peer_gid))
		rd_fail(&r, "gid and peer_gid are of different IP families");
	gids = lgj_get(&doc, root, "gids");
	if (gids != NULL && gids->type == LGJ_ARRAY) {
		for (i = 0; i < gids->count && i < 16 && !r.failed; i++) {
			const struct lgj_node *g = lgj_at(&doc, gids, i);

			d->gid_idx[i] = (uint8_t)rd_uint(&r, g, "gids[].", "index", 0, 255);
			rd_gid(&r, g, "gids[].", "gid", d->gids[i]);
		}
		d->n_gids = i;
	}
	d->path_mtu = (uint32_t)rd_uint(&r, root, "", "path_mtu", 256, 4096);
	d->ud_max_payload = (uint32_t)rd_uint(&r, root, "", "ud_max_payload", 0, 4096);
	d->size = (uint32_t)rd_uint(&r, root, "", "size", 0, 4096);
	qps = lgj_get(&doc, root, "qps");
	if (!r.failed && (qps == NULL || qps->type != LGJ_ARRAY)) {
		rd_fail(&r, "qps: expected an array");
		goto out;
	}
	if (!r.failed && qps->count > UROCE_LG_MAX_QPS) {
		rd_fail(&r, "qps: %u QPs, at most %u", qps->count, UROCE_LG_MAX_QPS);
		goto out;
	}
	for (i = 0; !r.failed && i < qps->count; i++)
		rd_qp(&r, lgj_at(&doc, qps, i), i, &d->qps[i]);
	d->n_qps = r.failed ? 0 : qps->count;
out:
	lgj_free(&doc);
	return r.failed ? -EINVAL : 0;
}
