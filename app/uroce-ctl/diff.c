/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * `uroce-ctl decode --diff A B`: line up the RoCEv2 packets of two captures
 * and print what differs. Alignment is by order: the n-th frame of A that
 * reached the BTH is paired with the n-th such frame of B; frames that are not
 * RoCEv2 (ARP, TCP, other UDP) are skipped on both sides. With --align role,
 * requests are paired with requests and responses with responses, each by
 * order, so that two runs whose ACKs interleave differently with the requests
 * still line up. Both captures are held in memory (about 150 bytes a packet).
 *
 * Compared: error, icrc_ok, every BTH field, payload_len and every
 * extension-header field, by the key names decode prints. Not compared: the
 * frame index and the encapsulation (src, dst, sport), which differ between
 * any two setups. --ignore removes more keys.
 */

#include <stdlib.h>
#include <sys/types.h>
#include <string.h>

#include "uroce_wire.h"

#include "ctl.h"
#include "decode.h"

#define IGNORE_MAX 64

struct ignore_set {
	unsigned int n;
	const char *names[IGNORE_MAX];
	char *storage;
};

/* Keys never compared: they identify the frame or the setup, not the packet. */
static const char *const not_compared[] = {
	"index", "valid", "src", "dst", "sport", "opcode_name",
};

/* True if @p name names field @p f: its full key ("reth.va", "psn"), its
 * header ("reth"), or its field name in any header ("va"). */
static bool
name_matches(const char *name, const struct ctl_field *f)
{
	char key[CTL_KEY_MAX];

	ctl_field_key(f, key, sizeof(key));
	if (strcmp(name, key) == 0)
		return true;
	if (f->group != NULL && strcmp(name, f->group) == 0)
		return true;
	return f->group != NULL && f->name != NULL && strcmp(name, f->name) == 0;
}

static bool
compared(const struct ignore_set *ig, const struct ctl_field *f)
{
	size_t i;

	if (f->group == NULL)
		for (i = 0; i < UROCE_ARRAY_SIZE(not_compared); i++)
			if (strcmp(f->name, not_compared[i]) == 0)
				return false;
	for (i = 0; i < ig->n; i++)
		if (name_matches(ig->names[i], f))
			return false;
	return true;
}

/* A name is known if some opcode's fields match it. The keys come from the
 * same code that prints them (ctl_pkt_fields() over a fully present header
 * for every opcode in the table), so this list cannot drift from the output. */
static bool
name_known(const char *name)
{
	struct ctl_fields fs;
	struct ctl_pkt p;
	unsigned int op, i;

	for (op = 0; op < 256; op++) {
		if (uroce_opcode_get((uint8_t)op) == NULL)
			continue;
		memset(&p, 0, sizeof(p));
		p.hdr[0] = (uint8_t)op;
		p.hdr_avail = CTL_HDR_MAX;
		ctl_pkt_fields(&p, &fs);
		for (i = 0; i < fs.n; i++)
			if (name_matches(name, &fs.f[i]))
				return true;
	}
	return false;
}

static int
ignore_parse(const char *list, struct ignore_set *ig)
{
	char *save = NULL, *tok;

	memset(ig, 0, sizeof(*ig));
	if (list == NULL)
		return 0;
	ig->storage = strdup(list);
	if (ig->storage == NULL) {
		ctl_err("out of memory");
		return -1;
	}
	for (tok = strtok_r(ig->storage, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!name_known(tok)) {
			ctl_err("--ignore: unknown key '%s' (see the keys decode prints, e.g. "
				"psn, dqpn, reth, reth.va, rkey)", tok);
			return -1;
		}
		if (ig->n == IGNORE_MAX) {
			ctl_err("--ignore: more than %d keys", IGNORE_MAX);
			return -1;
		}
		ig->names[ig->n++] = tok;
	}
	return 0;
}

struct capture {
	const char *path;
	struct ctl_pkt *pkts;  /* its RoCEv2 packets, in order */
	size_t n;
	size_t cap;
	ssize_t *partner;      /* index into the other capture's pkts, -1 if none */
};

/* Read every frame of @p c->path that reached the BTH. 0, or -1 after printing why. */
static int
load(struct capture *c)
{
	struct ctl_decoder d = { 0 };
	struct pcap_pkthdr *hdr;
	const u_char *data;
	uint64_t index = 0;
	int rc, ret = -1;
	pcap_t *pc;

	pc = ctl_pcap_open(c->path);
	if (pc == NULL)
		return -1;
	while ((rc = pcap_next_ex(pc, &hdr, &data)) == 1) {
		uint32_t wirelen = UROCE_MAX(hdr->len, hdr->caplen);

		if (c->n == c->cap) {
			size_t ncap = c->cap != 0 ? c->cap * 2 : 1024;
			struct ctl_pkt *np = realloc(c->pkts, ncap * sizeof(*np));

			if (np == NULL) {
				ctl_err("'%s': out of memory after %zu packets", c->path, c->n);
				goto out;
			}
			c->pkts = np;
			c->cap = ncap;
		}
		ctl_pkt_decode(&d, data, hdr->caplen, wirelen, index++, &c->pkts[c->n]);
		if (ctl_pkt_is_roce(&c->pkts[c->n]))
			c->n++;
	}
	if (rc == PCAP_ERROR) {
		ctl_err("'%s': read error after %llu frames: %s", c->path,
			(unsigned long long)index, pcap_geterr(pc));
		goto out;
	}
	c->partner = malloc((c->n + 1) * sizeof(*c->partner));
	if (c->partner == NULL) {
		ctl_err("out of memory");
		goto out;
	}
	ret = 0;
out:
	ctl_decoder_free(&d);
	pcap_close(pc);
	return ret;
}

/* Alignment classes of --align role: requests, responses, the rest (CNP,
 * unknown opcodes). The role comes from the opcode table. */
enum { ROLE_REQ, ROLE_RESP, ROLE_OTHER, ROLE_MAX };

static int
role_of(const struct ctl_pkt *p, bool by_role)
{
	const struct uroce_opcode_info *oi;

	if (!by_role)
		return ROLE_REQ;
	oi = uroce_opcode_get(p->hdr[0]);
	if (oi != NULL && (oi->mask & UROCE_F_REQ))
		return ROLE_REQ;
	if (oi != NULL && (oi->mask & UROCE_F_RESP))
		return ROLE_RESP;
	return ROLE_OTHER;
}

/* Pair the k-th packet of each class in A with the k-th of that class in B. */
static void
align(struct capture *a, struct capture *b, bool by_role)
{
	size_t i, j;
	int r;

	for (i = 0; i < a->n; i++)
		a->partner[i] = -1;
	for (j = 0; j < b->n; j++)
		b->partner[j] = -1;
	for (r = 0; r < ROLE_MAX; r++) {
		i = 0;
		j = 0;
		for (;;) {
			while (i < a->n && role_of(&a->pkts[i], by_role) != r)
				i++;
			while (j < b->n && role_of(&b->pkts[j], by_role) != r)
				j++;
			if (i == a->n || j == b->n)
				break;
			a->partner[i] = (ssize_t)j;
			b->partner[j] = (ssize_t)i;
			i++;
			j++;
		}
	}
}

static bool
field_equal(const struct ctl_field *a, const struct ctl_field *b)
{
	if (a == NULL || b == NULL) {
		/* a key only one side has: equal only if the other is null too */
		const struct ctl_field *x = a != NULL ? a : b;

		return x == NULL || x->kind == CTL_F_NULL;
	}
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case CTL_F_U64:
	case CTL_F_BOOL:
		return a->u == b->u;
	case CTL_F_STR:
		return strcmp(a->s, b->s) == 0;
	case CTL_F_NULL:
	default:
		return true;
	}
}

static const struct ctl_field *
find_key(const struct ctl_fields *fs, const char *key)
{
	char k[CTL_KEY_MAX];
	unsigned int i;

	for (i = 0; i < fs->n; i++) {
		ctl_field_key(&fs->f[i], k, sizeof(k));
		if (strcmp(k, key) == 0)
			return &fs->f[i];
	}
	return NULL;
}

static void
value_or_null(const struct ctl_field *f, struct json *j)
{
	if (f != NULL)
		ctl_field_json(f, j);
	else
		json_null(j);
}

/* Append one ["key": [a, b]] member if the values differ; count it. */
static void
diff_field(const struct ctl_field *fa, const struct ctl_field *fb, const char *key,
	   struct json *j, unsigned int *ndiff)
{
	if (field_equal(fa, fb))
		return;
	if (*ndiff == 0) {
		json_key(j, "diff");
		json_obj_begin(j);
	}
	(*ndiff)++;
	json_key(j, key);
	json_arr_begin(j);
	value_or_null(fa, j);
	value_or_null(fb, j);
	json_arr_end(j);
}

/* Compare a pair; write a line if anything differs. Return 1 if it did, 0 if not, -1 on error. */
static int
diff_pair(const struct ctl_pkt *a, const struct ctl_pkt *b, const struct ignore_set *ig,
	  struct json *j)
{
	struct ctl_fields fa, fb;
	unsigned int i, ndiff = 0;
	char key[CTL_KEY_MAX];

	ctl_pkt_fields(a, &fa);
	ctl_pkt_fields(b, &fb);
	json_obj_begin(j);
	json_kv_u64(j, "a_index", a->index);
	json_kv_u64(j, "b_index", b->index);
	for (i = 0; i < fa.n; i++) {
		if (!compared(ig, &fa.f[i]))
			continue;
		ctl_field_key(&fa.f[i], key, sizeof(key));
		diff_field(&fa.f[i], find_key(&fb, key), key, j, &ndiff);
	}
	for (i = 0; i < fb.n; i++) {
		if (!compared(ig, &fb.f[i]))
			continue;
		ctl_field_key(&fb.f[i], key, sizeof(key));
		if (find_key(&fa, key) == NULL)
			diff_field(NULL, &fb.f[i], key, j, &ndiff);
	}
	if (ndiff == 0) {
		json_reset(j);
		return 0;
	}
	json_obj_end(j);
	json_obj_end(j);
	return json_write_line(j, stdout) == 0 ? 1 : -1;
}

static int
only_in(const struct ctl_pkt *p, bool in_a, struct json *j)
{
	struct ctl_fields fs;

	ctl_pkt_fields(p, &fs);
	json_obj_begin(j);
	if (in_a) {
		json_kv_u64(j, "a_index", p->index);
		json_kv_null(j, "b_index");
	} else {
		json_kv_null(j, "a_index");
		json_kv_u64(j, "b_index", p->index);
	}
	json_kv_str(j, "only_in", in_a ? "a" : "b");
	json_key(j, "packet");
	ctl_fields_json(&fs, j);
	json_obj_end(j);
	return json_write_line(j, stdout) == 0 ? 0 : -1;
}

int
ctl_decode_diff(const char *path_a, const char *path_b, const char *ignore, bool by_role)
{
	struct capture ca = { .path = path_a }, cb = { .path = path_b };
	uint64_t ndiff = 0, only_a = 0, only_b = 0;
	int ret = CTL_EXIT_ERROR;
	struct ignore_set ig;
	struct json j;
	size_t i;
	int r;

	json_init(&j);
	if (ignore_parse(ignore, &ig) != 0)
		goto out;
	if (load(&ca) != 0 || load(&cb) != 0)
		goto out;
	align(&ca, &cb, by_role);

	/* Pairs and A-only packets in A's order, then B-only packets in B's order. */
	for (i = 0; i < ca.n; i++) {
		if (ca.partner[i] >= 0) {
			r = diff_pair(&ca.pkts[i], &cb.pkts[ca.partner[i]], &ig, &j);
			if (r > 0)
				ndiff++;
		} else {
			r = only_in(&ca.pkts[i], true, &j);
			only_a++;
		}
		if (r < 0)
			goto write_err;
	}
	for (i = 0; i < cb.n; i++) {
		if (cb.partner[i] >= 0)
			continue;
		only_b++;
		if (only_in(&cb.pkts[i], false, &j) < 0)
			goto write_err;
	}
	if (fflush(stdout) != 0)
		goto write_err;
	fprintf(stderr,
		"uroce-ctl: diff: %zu RoCEv2 packets in A, %zu in B; %llu pairs differ, "
		"%llu only in A, %llu only in B\n",
		ca.n, cb.n, (unsigned long long)ndiff, (unsigned long long)only_a,
		(unsigned long long)only_b);
	ret = (ndiff != 0 || only_a != 0 || only_b != 0) ? CTL_EXIT_FOUND : CTL_EXIT_OK;
	goto out;
write_err:
	ctl_err("diff: cannot write output");
out:
	free(ca.pkts);
	free(ca.partner);
	free(cb.pkts);
	free(cb.partner);
	free(ig.storage);
	json_free(&j);
	return ret;
}
