/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * `uroce-ctl decode`: read a capture with libpcap and print one JSON object
 * per frame. All parsing and validation is lib/wire's (uroce_frame_parse,
 * uroce_pkt_parse, uroce_icrc_check, the opcode table and the header
 * accessors); this file only decides what to report when they stop early,
 * and formats the result. doc/uroce-ctl.md describes every key.
 */

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_wire.h"

#include "ctl.h"
#include "decode.h"

/* libpcap's own upper bound on a packet (MAXIMUM_SNAPLEN); a record claiming
 * a longer wire length is not padded for decoding. */
#define CTL_MAX_WIRELEN 262144u

void
ctl_decoder_free(struct ctl_decoder *d)
{
	free(d->pad_buf);
	d->pad_buf = NULL;
	d->pad_cap = 0;
}

/*
 * A snap-truncated frame (tcpdump -s 128) usually holds every header but not
 * the payload. The IP and UDP lengths then point past the captured bytes and
 * uroce_frame_parse() rightly says "truncated". To still report the headers,
 * the frame is copied into a zero-filled buffer of its wire length and parsed
 * again; only fields inside the captured bytes are reported from that parse,
 * and no ICRC is computed over the invented zeros.
 */
static const uint8_t *
pad_frame(struct ctl_decoder *d, const uint8_t *data, uint32_t caplen, uint32_t wirelen)
{
	if (wirelen > CTL_MAX_WIRELEN || caplen >= wirelen)
		return NULL;
	if (d->pad_cap < wirelen) {
		uint8_t *nb = realloc(d->pad_buf, wirelen);

		if (nb == NULL)
			return NULL;
		d->pad_buf = nb;
		d->pad_cap = wirelen;
	}
	memcpy(d->pad_buf, data, caplen);
	memset(d->pad_buf + caplen, 0, wirelen - caplen);
	return d->pad_buf;
}

/*
 * uroce_frame_parse() says bad_length when the UDP length disagrees with the
 * IP length, and then leaves bth_off unset: the receive path drops such a
 * frame without looking further. For a person debugging the sender, the BTH
 * is still worth showing, and the ICRC still tells whether the bytes are the
 * ones that were sent. The IP header is the outer, checksummed length, and
 * RoCEv2 puts the ICRC at the end of the IP payload (annex A17.4.1), so the
 * transport part is located from it. uroce_frame_parse() has already checked
 * that the IP header and the whole IP payload are inside @p len, and that the
 * UDP header was read (dport is 4791), before it compared the lengths; the
 * bounds are checked again here anyway.
 */
static bool
locate_by_ip_len(const uint8_t *buf, uint32_t len, const struct uroce_frame *f,
		 uint32_t *bth_off, uint32_t *ib_len)
{
	const uint8_t *ip = buf + f->l3_off;
	uint32_t l4_off, l4_len, hlen;

	if (f->dport != UROCE_UDP_PORT)
		return false;
	if (f->family == UROCE_IP_V4) {
		if ((uint64_t)f->l3_off + UROCE_IPV4_LEN > len)
			return false;
		hlen = (uint32_t)(ip[0] & 0xF) * 4;
		l4_off = f->l3_off + hlen;
		l4_len = uroce_get_be16(ip + 2);
		if (l4_len < hlen)
			return false;
		l4_len -= hlen;
	} else if (f->family == UROCE_IP_V6) {
		if ((uint64_t)f->l3_off + UROCE_IPV6_LEN > len)
			return false;
		l4_off = f->l3_off + UROCE_IPV6_LEN;
		l4_len = uroce_get_be16(ip + 4);
	} else {
		return false;
	}
	if (l4_len < UROCE_UDP_LEN || (uint64_t)l4_off + l4_len > len)
		return false;
	*bth_off = l4_off + UROCE_UDP_LEN;
	*ib_len = l4_len - UROCE_UDP_LEN;
	return true;
}

void
ctl_pkt_decode(struct ctl_decoder *d, const uint8_t *data, uint32_t caplen, uint32_t wirelen,
	       uint64_t index, struct ctl_pkt *p)
{
	enum uroce_wire_err fe, pe = UROCE_WIRE_OK;
	const uint8_t *buf = data;
	uint32_t buf_len = caplen;
	bool snap = caplen < wirelen;
	uint32_t bth_off = 0, ib_len = 0;
	struct uroce_frame f;
	struct uroce_pkt pk;

	memset(p, 0, sizeof(*p));
	p->index = index;
	p->icrc = -1;

	fe = uroce_frame_parse(data, caplen, &f);
	if (fe == UROCE_WIRE_TRUNCATED && snap) {
		const uint8_t *padded = pad_frame(d, data, caplen, wirelen);
		struct uroce_frame f2;

		/* Take the second parse only if it got through UDP and the BTH
		 * starts inside the captured bytes. */
		if (padded != NULL && uroce_frame_parse(padded, wirelen, &f2) == UROCE_WIRE_OK &&
		    f2.bth_off < caplen) {
			f = f2;
			fe = UROCE_WIRE_OK;
			buf = padded;
			buf_len = wirelen;
		}
	}

	/* uroce_frame_parse() fills the addresses once it has the IP header. */
	p->family = f.family;
	if (f.family != UROCE_IP_NONE) {
		memcpy(p->src, f.sgid, sizeof(p->src));
		memcpy(p->dst, f.dgid, sizeof(p->dst));
		p->tclass = f.tclass;
	}
	/* ... and the ports once it has the UDP header. */
	if (f.dport != 0) {
		p->has_sport = true;
		p->sport = f.sport;
	}

	if (fe == UROCE_WIRE_OK) {
		bth_off = f.bth_off;
		ib_len = f.ib_len;
	} else if (fe == UROCE_WIRE_BAD_LENGTH) {
		if (!locate_by_ip_len(buf, buf_len, &f, &bth_off, &ib_len))
			bth_off = 0;
	}

	if (bth_off != 0 && ib_len >= UROCE_ICRC_LEN) {
		uint32_t real = caplen > bth_off ? caplen - bth_off : 0;
		uint32_t n = ib_len - UROCE_ICRC_LEN;

		n = UROCE_MIN(n, real);
		n = UROCE_MIN(n, (uint32_t)CTL_HDR_MAX);
		memcpy(p->hdr, data + bth_off, n);
		p->hdr_avail = n;

		/* The ICRC needs every byte from the IP header to the ICRC itself. */
		if (ib_len >= UROCE_BTH_LEN + UROCE_ICRC_LEN &&
		    (uint64_t)bth_off + ib_len <= caplen)
			p->icrc = uroce_icrc_check(data + f.l3_off,
						   bth_off - f.l3_off + ib_len - UROCE_ICRC_LEN,
						   f.family) ? 1 : 0;

		pe = uroce_pkt_parse(buf + bth_off, ib_len, &pk);
		if (pe == UROCE_WIRE_OK && p->hdr_avail >= pk.info->hdr_len &&
		    p->hdr_avail >= UROCE_BTH_LEN) {
			p->has_paylen = true;
			p->paylen = pk.paylen;
		}
	}

	/* Order of verdicts: a frame cut by the capture is "truncated" whatever
	 * else; then the encapsulation; then the ICRC, before the transport
	 * headers, as uroce_parse() does, so flipped bits are reported as
	 * corruption rather than as whatever they happen to look like. */
	if (snap)
		p->err = UROCE_WIRE_TRUNCATED;
	else if (fe != UROCE_WIRE_OK)
		p->err = fe;
	else if (p->icrc == 0)
		p->err = UROCE_WIRE_BAD_ICRC;
	else
		p->err = pe;
}

/* ------------------------------------------------------------------------ */
/* Fields                                                                    */
/* ------------------------------------------------------------------------ */

static bool
have(const struct ctl_pkt *p, uint32_t off, uint32_t len)
{
	return p->hdr_avail >= off + len;
}

static void
add(struct ctl_fields *fs, const char *group, const char *name, enum ctl_fkind kind, uint64_t u,
    const char *s)
{
	struct ctl_field *f;

	if (fs->n >= CTL_FIELDS_MAX)
		return; /* cannot happen: the list below has fewer keys */
	f = &fs->f[fs->n++];
	f->group = group;
	f->name = name;
	f->kind = kind;
	f->u = u;
	f->s = s;
}

static void
add_u(struct ctl_fields *fs, const char *group, const char *name, bool known, uint64_t v)
{
	add(fs, group, name, known ? CTL_F_U64 : CTL_F_NULL, v, NULL);
}

static void
add_b(struct ctl_fields *fs, const char *name, bool known, bool v)
{
	add(fs, NULL, name, known ? CTL_F_BOOL : CTL_F_NULL, v, NULL);
}

static void
add_s(struct ctl_fields *fs, const char *name, const char *s)
{
	add(fs, NULL, name, s != NULL ? CTL_F_STR : CTL_F_NULL, 0, s);
}

static void
addr_str(enum uroce_ip_family fam, const uint8_t gid[16], char *out, size_t cap)
{
	/* IPv4 is kept as the IPv4-mapped GID; print it dotted (RFC 5952 for IPv6). */
	if (inet_ntop(fam == UROCE_IP_V4 ? AF_INET : AF_INET6,
		      fam == UROCE_IP_V4 ? gid + 12 : gid, out, (socklen_t)cap) == NULL)
		out[0] = '\0';
}

/* Extension headers, in the key order of the output. */
struct ext_desc {
	const char *key;
	uint32_t bit;
	uint32_t len;
};

static const struct ext_desc ext_descs[] = {
	{ "reth", UROCE_HDR_RETH, UROCE_RETH_LEN },
	{ "aeth", UROCE_HDR_AETH, UROCE_AETH_LEN },
	{ "atomiceth", UROCE_HDR_ATMETH, UROCE_ATMETH_LEN },
	{ "atomicacketh", UROCE_HDR_ATMACK, UROCE_ATMACK_LEN },
	{ "immdt", UROCE_HDR_IMMDT, UROCE_IMMDT_LEN },
	{ "ieth", UROCE_HDR_IETH, UROCE_IETH_LEN },
	{ "deth", UROCE_HDR_DETH, UROCE_DETH_LEN },
	{ "feth", UROCE_HDR_FETH, UROCE_FETH_LEN },
	{ "xrceth", UROCE_HDR_XRCETH, UROCE_XRCETH_LEN },
};

static uint32_t
ext_off(const struct uroce_opcode_info *oi, uint32_t bit)
{
	switch (bit) {
	case UROCE_HDR_RETH: return oi->off_reth;
	case UROCE_HDR_AETH: return oi->off_aeth;
	case UROCE_HDR_ATMETH: return oi->off_atmeth;
	case UROCE_HDR_ATMACK: return oi->off_atmack;
	case UROCE_HDR_IMMDT: return oi->off_immdt;
	case UROCE_HDR_IETH: return oi->off_ieth;
	case UROCE_HDR_DETH: return oi->off_deth;
	case UROCE_HDR_FETH: return oi->off_feth;
	case UROCE_HDR_XRCETH: return oi->off_xrceth;
	default: return 0;
	}
}

static void
add_ext(struct ctl_fields *fs, const struct ext_desc *e, const uint8_t *h)
{
	const char *g = e->key;

	switch (e->bit) {
	case UROCE_HDR_RETH:
		add_u(fs, g, "va", true, uroce_reth_va(h));
		add_u(fs, g, "rkey", true, uroce_reth_rkey(h));
		add_u(fs, g, "dma_len", true, uroce_reth_dma_len(h));
		break;
	case UROCE_HDR_AETH:
		add_u(fs, g, "syndrome", true, uroce_aeth_syndrome(h));
		add_u(fs, g, "msn", true, uroce_aeth_msn(h));
		break;
	case UROCE_HDR_ATMETH:
		add_u(fs, g, "va", true, uroce_atmeth_va(h));
		add_u(fs, g, "rkey", true, uroce_atmeth_rkey(h));
		add_u(fs, g, "swap_add", true, uroce_atmeth_swap_add(h));
		add_u(fs, g, "compare", true, uroce_atmeth_compare(h));
		break;
	case UROCE_HDR_ATMACK:
		add_u(fs, g, "orig", true, uroce_atmack_orig(h));
		break;
	case UROCE_HDR_IMMDT:
		add_u(fs, g, "imm", true, uroce_immdt_imm(h));
		break;
	case UROCE_HDR_IETH:
		add_u(fs, g, "rkey", true, uroce_ieth_rkey(h));
		break;
	case UROCE_HDR_DETH:
		add_u(fs, g, "qkey", true, uroce_deth_qkey(h));
		add_u(fs, g, "src_qp", true, uroce_deth_src_qp(h));
		break;
	case UROCE_HDR_FETH:
		add_u(fs, g, "placement", true, uroce_feth_type(uroce_feth_word(h)));
		add_u(fs, g, "selectivity", true, uroce_feth_level(uroce_feth_word(h)));
		add_u(fs, g, "word", true, uroce_feth_word(h));
		break;
	case UROCE_HDR_XRCETH:
		add_u(fs, g, "srqn", true, uroce_xrceth_srqn(h));
		break;
	default:
		break;
	}
}

void
ctl_pkt_fields(const struct ctl_pkt *p, struct ctl_fields *fs)
{
	const struct uroce_opcode_info *oi = NULL;
	const uint8_t *bth = p->hdr;
	size_t i;

	fs->n = 0;
	fs->src[0] = '\0';
	fs->dst[0] = '\0';
	if (have(p, 0, 1))
		oi = uroce_opcode_get(uroce_bth_opcode(bth));

	add_u(fs, NULL, "index", true, p->index);
	add_b(fs, "valid", true, p->err == UROCE_WIRE_OK);
	add_s(fs, "error", p->err == UROCE_WIRE_OK ? NULL : uroce_wire_strerror(p->err));
	add_b(fs, "icrc_ok", p->icrc >= 0, p->icrc == 1);
	if (p->family != UROCE_IP_NONE) {
		addr_str(p->family, p->src, fs->src, sizeof(fs->src));
		addr_str(p->family, p->dst, fs->dst, sizeof(fs->dst));
	}
	add_s(fs, "src", fs->src[0] != '\0' ? fs->src : NULL);
	add_s(fs, "dst", fs->dst[0] != '\0' ? fs->dst : NULL);
	add_u(fs, NULL, "sport", p->has_sport, p->sport);
	/* DSCP and ECN (RFC 3168: 3 is CE) of the IP header, for congestion
	 * control: data ECT(0), CNPs DSCP 48 (doc/congestion.md). */
	add_u(fs, NULL, "dscp", p->family != UROCE_IP_NONE, (uint64_t)(p->tclass >> 2));
	add_u(fs, NULL, "ecn", p->family != UROCE_IP_NONE, (uint64_t)(p->tclass & 3));
	/* BTH (IBA 9.2): each field is reported if its bytes were captured. */
	add_u(fs, NULL, "opcode", have(p, 0, 1), have(p, 0, 1) ? uroce_bth_opcode(bth) : 0);
	add_s(fs, "opcode_name", oi != NULL ? oi->name : NULL);
	add_u(fs, NULL, "dqpn", have(p, 5, 3), have(p, 5, 3) ? uroce_bth_dqpn(bth) : 0);
	add_u(fs, NULL, "psn", have(p, 9, 3), have(p, 9, 3) ? uroce_bth_psn(bth) : 0);
	add_b(fs, "ackreq", have(p, 8, 1), have(p, 8, 1) && uroce_bth_ackreq(bth));
	add_b(fs, "solicited", have(p, 1, 1), have(p, 1, 1) && uroce_bth_se(bth));
	add_b(fs, "migreq", have(p, 1, 1), have(p, 1, 1) && uroce_bth_migreq(bth));
	add_u(fs, NULL, "padcnt", have(p, 1, 1), have(p, 1, 1) ? uroce_bth_padcnt(bth) : 0);
	add_u(fs, NULL, "pkey", have(p, 2, 2), have(p, 2, 2) ? uroce_bth_pkey(bth) : 0);
	add_b(fs, "fecn", have(p, 4, 1), have(p, 4, 1) && uroce_bth_fecn(bth));
	add_b(fs, "becn", have(p, 4, 1), have(p, 4, 1) && uroce_bth_becn(bth));
	add_u(fs, NULL, "payload_len", p->has_paylen, p->paylen);

	/* One key per extension header the opcode carries (opcode table); null
	 * when the header is cut off. */
	if (oi == NULL)
		return;
	for (i = 0; i < UROCE_ARRAY_SIZE(ext_descs); i++) {
		const struct ext_desc *e = &ext_descs[i];
		uint32_t off;

		if (!(oi->mask & e->bit))
			continue;
		off = ext_off(oi, e->bit);
		if (off != 0 && have(p, off, e->len))
			add_ext(fs, e, bth + off);
		else
			add(fs, e->key, NULL, CTL_F_NULL, 0, NULL);
	}
}

void
ctl_field_json(const struct ctl_field *f, struct json *j)
{
	switch (f->kind) {
	case CTL_F_U64: json_u64(j, f->u); break;
	case CTL_F_BOOL: json_bool(j, f->u != 0); break;
	case CTL_F_STR: json_str(j, f->s); break;
	case CTL_F_NULL: default: json_null(j); break;
	}
}

void
ctl_field_key(const struct ctl_field *f, char *buf, size_t cap)
{
	if (f->group == NULL)
		snprintf(buf, cap, "%s", f->name);
	else if (f->name == NULL)
		snprintf(buf, cap, "%s", f->group);
	else
		snprintf(buf, cap, "%s.%s", f->group, f->name);
}

void
ctl_fields_json(const struct ctl_fields *fs, struct json *j)
{
	const char *open = NULL; /* extension header object now open */
	unsigned int i;

	json_obj_begin(j);
	for (i = 0; i < fs->n; i++) {
		const struct ctl_field *f = &fs->f[i];

		if (open != NULL && f->group != open) {
			json_obj_end(j);
			open = NULL;
		}
		if (f->group != NULL && f->name == NULL) {
			json_kv_null(j, f->group);
			continue;
		}
		if (f->group != NULL && open == NULL) {
			json_key(j, f->group);
			json_obj_begin(j);
			open = f->group;
		}
		json_key(j, f->name);
		ctl_field_json(f, j);
	}
	if (open != NULL)
		json_obj_end(j);
	json_obj_end(j);
}

/* ------------------------------------------------------------------------ */
/* The command                                                               */
/* ------------------------------------------------------------------------ */

pcap_t *
ctl_pcap_open(const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *pc;
	int dlt;

	errbuf[0] = '\0';
	/* libpcap reads classic pcap (either byte order, µs or ns) and pcapng. */
	pc = pcap_open_offline(path, errbuf);
	if (pc == NULL) {
		ctl_err("cannot read capture '%s': %s", path, errbuf);
		return NULL;
	}
	dlt = pcap_datalink(pc);
	if (dlt != DLT_EN10MB) {
		const char *name = pcap_datalink_val_to_name(dlt);
		const char *desc = pcap_datalink_val_to_description(dlt);

		ctl_err("'%s': link type %d (%s, %s) is not supported; decode reads Ethernet "
			"captures (DLT_EN10MB) only, e.g. from tcpdump -i IFACE, not -i any",
			path, dlt, name != NULL ? name : "?", desc != NULL ? desc : "?");
		pcap_close(pc);
		return NULL;
	}
	return pc;
}

static int
decode_file(const char *path, bool strict, bool roce_only)
{
	struct ctl_decoder d = { 0 };
	struct pcap_pkthdr *hdr;
	const u_char *data;
	struct ctl_fields fs;
	struct json j;
	uint64_t index = 0, bad = 0;
	int ret = CTL_EXIT_OK;
	pcap_t *pc;
	int rc;

	pc = ctl_pcap_open(path);
	if (pc == NULL)
		return CTL_EXIT_ERROR;
	json_init(&j);
	while ((rc = pcap_next_ex(pc, &hdr, &data)) == 1) {
		struct ctl_pkt p;
		uint32_t wirelen = UROCE_MAX(hdr->len, hdr->caplen);
		int wr;

		ctl_pkt_decode(&d, data, hdr->caplen, wirelen, index, &p);
		if (p.err != UROCE_WIRE_OK && p.err != UROCE_WIRE_NOT_ROCEV2)
			bad++;
		if (roce_only && p.err == UROCE_WIRE_NOT_ROCEV2) {
			index++;    /* "index" stays the frame's place in the capture */
			continue;
		}
		ctl_pkt_fields(&p, &fs);
		ctl_fields_json(&fs, &j);
		wr = json_write_line(&j, stdout);
		if (wr != 0) {
			ctl_err("writing frame %llu: %s", (unsigned long long)index, strerror(-wr));
			ret = CTL_EXIT_ERROR;
			goto out;
		}
		index++;
	}
	if (rc == PCAP_ERROR) {
		/* e.g. a file cut in the middle of a record: what was read is printed. */
		ctl_err("'%s': read error after %llu frames: %s", path,
			(unsigned long long)index, pcap_geterr(pc));
		ret = CTL_EXIT_ERROR;
		goto out;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		ctl_err("writing output: %s", strerror(errno));
		ret = CTL_EXIT_ERROR;
		goto out;
	}
	if (strict && bad != 0) {
		ctl_err("'%s': %llu of %llu frames are invalid RoCEv2 packets", path,
			(unsigned long long)bad, (unsigned long long)index);
		ret = CTL_EXIT_FOUND;
	}
out:
	json_free(&j);
	ctl_decoder_free(&d);
	pcap_close(pc);
	return ret;
}

static void
decode_usage(FILE *out)
{
	fprintf(out,
		"usage: uroce-ctl decode [--strict] [--roce-only] FILE\n"
		"       uroce-ctl decode --diff [--align order|role] [--ignore KEY[,...]] A B\n"
		"\n"
		"Decode every frame of a pcap or pcapng capture (Ethernet link type; '-' reads\n"
		"stdin) as one JSON object per line: BTH and extension-header fields, ICRC\n"
		"verdict, and why a frame is not a valid RoCEv2 packet.\n"
		"\n"
		"  --strict        exit 1 if any frame is an invalid RoCEv2 packet (frames that\n"
		"                  are simply not RoCEv2, such as ARP or TCP, do not count)\n"
		"  --roce-only     print no line for frames that are not RoCEv2 (a test's TCP\n"
		"                  side channel, ARP); \"index\" still counts every frame\n"
		"  --diff          line up the RoCEv2 packets of two captures by their order and\n"
		"                  print one JSON line per pair whose BTH or extension-header\n"
		"                  fields differ, and per packet found in one capture only;\n"
		"                  exit 0 if none, 1 if any\n"
		"  --align MODE    with --diff: 'order' (default) pairs the n-th RoCEv2 packet\n"
		"                  of A with the n-th of B; 'role' pairs requests with\n"
		"                  requests and responses with responses, each in order\n"
		"  --ignore KEYS   with --diff: keys not to compare, e.g. psn,dqpn,rkey,va\n"
		"                  (a key, a header such as reth, or a field of any header)\n"
		"  -h, --help      this text\n"
		"\n"
		"Exit: 0 success, 1 see --strict/--diff, 2 usage or read error.\n"
		"Keys and formats: doc/uroce-ctl.md\n");
}

int
ctl_decode_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "diff", no_argument, NULL, 'd' },
		{ "ignore", required_argument, NULL, 'i' },
		{ "align", required_argument, NULL, 'a' },
		{ "strict", no_argument, NULL, 's' },
		{ "roce-only", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ignore = NULL, *align = NULL;
	bool diff = false, strict = false, by_role = false, roce_only = false;
	int c;

	optind = 0; /* glibc: full reset, argv[0] is the subcommand name */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			diff = true;
			break;
		case 'i':
			ignore = optarg;
			break;
		case 'a':
			align = optarg;
			break;
		case 's':
			strict = true;
			break;
		case 'r':
			roce_only = true;
			break;
		case 'h':
			decode_usage(stdout);
			return CTL_EXIT_OK;
		default:
			/* unknown option, or --ignore without its value */
			ctl_err("decode: bad option '%s'", argv[optind - 1]);
			decode_usage(stderr);
			return CTL_EXIT_ERROR;
		}
	}
	argc -= optind;
	argv += optind;
	if (align != NULL) {
		if (strcmp(align, "role") == 0) {
			by_role = true;
		} else if (strcmp(align, "order") != 0) {
			ctl_err("decode: --align takes 'order' or 'role', not '%s'", align);
			return CTL_EXIT_ERROR;
		}
	}
	if (diff) {
		if (argc != 2 || strict || roce_only) {
			ctl_err("decode --diff takes two captures%s",
				strict || roce_only ? " and no --strict or --roce-only (it compares "
				"RoCEv2 packets only)" : "");
			decode_usage(stderr);
			return CTL_EXIT_ERROR;
		}
		return ctl_decode_diff(argv[0], argv[1], ignore, by_role);
	}
	if (argc != 1 || ignore != NULL || align != NULL) {
		ctl_err("decode takes one capture%s", ignore != NULL || align != NULL ?
			" (--ignore and --align need --diff)" : "");
		decode_usage(stderr);
		return CTL_EXIT_ERROR;
	}
	return decode_file(argv[0], strict, roce_only);
}
