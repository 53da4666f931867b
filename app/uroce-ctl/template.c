/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * `uroce-ctl template`: from a sink description (`uroce-perf sink`, or any
 * document of the same form), write a pcap of RoCEv2 frames that the sink's
 * QPs accept, for a packet generator to replay: pktgen's pcap mode, TRex,
 * tcpreplay, DPDK's net_pcap PMD (doc/loadgen.md).
 *
 * Every frame is built with lib/wire (uroce_hdr_build for the BTH and its
 * extension headers, uroce_frame_wrap for Ethernet/[802.1Q]/IPv4 or IPv6/UDP
 * and the ICRC) and carries the payload pattern of lib/loadgen. The frames
 * are single-packet messages (ONLY opcodes), one per (QP, message index),
 * interleaved across QPs, so that a replay in a loop stays acceptable:
 *  - UC: the PSNs of a QP run from its expected PSN up; when the file starts
 *    again the PSN jumps back, the responder resynchronises on that ONLY
 *    packet (IBA 9.8.3, lib/transport/resp.c) and counts out_of_sequence;
 *  - UD: the responder checks no PSN (IBA 9.8.2), only the Q_Key;
 *  - the payload of message i is the same in every pass (the pattern is a
 *    function of where the bytes land, not of when).
 * The UDP source port is the RoCEv2 flow entropy (0xC000-0xFFFF, derived as
 * Linux RDMA drivers do), one per QP and --flows per QP, so that receive-side
 * scaling spreads the flows.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_cli.h"
#include "uroce_loadgen.h"
#include "uroce_wire.h"

#include "ctl.h"

#define TPL_DEF_MSGS 16
#define TPL_MAX_MSGS 65536
#define TPL_MAX_FLOWS 1024
#define TPL_MAX_FRAMES (1u << 22)
/* Room in front of the BTH: Ethernet, 802.1Q, IPv6, UDP. */
#define TPL_HEADROOM 128
#define TPL_DEF_SMAC "02:00:c6:12:ff:fe"
/* pktgen's random-bit slots: 32 of 32 bits (pktgen-random.h). */
#define PKTGEN_SLOTS 32

enum tpl_op { TPL_WRITE, TPL_WRITE_IMM, TPL_SEND };

struct tpl {
	struct uroce_lg_desc *d;
	enum tpl_op uc_op;
	bool want_uc, want_ud;
	uint32_t qpn_filter[64];
	unsigned int n_filter;
	uint32_t msgs;
	uint32_t size;
	bool size_set;
	uint8_t smac[6];
	bool has_src;
	uint8_t src_gid[16];
	int vlan;                /* -1: the description's; 0: none; else the id */
	uint8_t pcp;
	uint8_t dscp, ecn;
	uint32_t flows;
	const char *pktgen_path;
	uint16_t pktgen_port;
	bool quiet;
	const char *in_path, *out_path;
};

static void
tpl_usage(FILE *f)
{
	fprintf(f,
		"usage: uroce-ctl template [options] SINK_JSON OUT_PCAP\n"
		"Write a pcap of RoCEv2 frames that the QPs of a sink description accept\n"
		"(`uroce-perf sink` prints one; '-' reads standard input), for pktgen, TRex,\n"
		"tcpreplay or DPDK's net_pcap to replay in a loop (doc/loadgen.md).\n"
		"  --op write|write-imm|send  operation of the UC QPs' frames (default write);\n"
		"                             UD QPs get SEND ONLY\n"
		"  --uc | --ud                only the UC (UD) QPs of the description\n"
		"  --qpn N[,N...]             only these QPs\n"
		"  -n, --msgs N               messages per QP (default %u); the file holds\n"
		"                             N x QPs frames, interleaved across the QPs\n"
		"  -s, --size BYTES           payload per message (default: the description's)\n"
		"      --flows N              UDP source ports per QP (default 1): a QP's frames\n"
		"                             cycle through N flows, for receive-side scaling\n"
		"      --smac MAC             source MAC (default %s)\n"
		"      --src ADDR             source IP (default: the description's peer_ip)\n"
		"      --vlan ID | --no-vlan  802.1Q tag (default: the description's vlan)\n"
		"      --pcp N                priority of the tag (default 0)\n"
		"      --dscp N, --ecn N      IP traffic class (default 0, 0)\n"
		"      --pktgen FILE          also write a pktgen command file that sends the\n"
		"                             first frame in pktgen's single mode (loadgen.md)\n"
		"      --pktgen-port N        pktgen port of that file (default 0)\n"
		"  -q, --quiet                no summary on standard error\n",
		TPL_DEF_MSGS, TPL_DEF_SMAC);
}

static int
parse_qpns(struct tpl *t, const char *arg)
{
	char buf[1024], *tok, *save = NULL;
	uint64_t v;

	if (strlen(arg) >= sizeof(buf)) {
		ctl_err("--qpn: list too long");
		return -1;
	}
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (t->n_filter == sizeof(t->qpn_filter) / sizeof(t->qpn_filter[0])) {
			ctl_err("--qpn: at most %zu QPs", sizeof(t->qpn_filter) /
				sizeof(t->qpn_filter[0]));
			return -1;
		}
		if (cli_num("--qpn", tok, CLI_PLAIN, 0, 0xffffff, &v) != 0)
			return -1;
		t->qpn_filter[t->n_filter++] = (uint32_t)v;
	}
	if (t->n_filter == 0) {
		ctl_err("--qpn: empty list");
		return -1;
	}
	return 0;
}

enum {
	T_OP = 256, T_UC, T_UD, T_QPN, T_FLOWS, T_SMAC, T_SRC, T_VLAN, T_NO_VLAN, T_PCP, T_DSCP,
	T_ECN, T_PKTGEN, T_PKTGEN_PORT,
};

/* @return -1 to go on, else the exit code. */
static int
tpl_args(struct tpl *t, int argc, char **argv)
{
	static const struct option lopts[] = {
		{"op", required_argument, NULL, T_OP},
		{"uc", no_argument, NULL, T_UC},
		{"ud", no_argument, NULL, T_UD},
		{"qpn", required_argument, NULL, T_QPN},
		{"msgs", required_argument, NULL, 'n'},
		{"size", required_argument, NULL, 's'},
		{"flows", required_argument, NULL, T_FLOWS},
		{"smac", required_argument, NULL, T_SMAC},
		{"src", required_argument, NULL, T_SRC},
		{"vlan", required_argument, NULL, T_VLAN},
		{"no-vlan", no_argument, NULL, T_NO_VLAN},
		{"pcp", required_argument, NULL, T_PCP},
		{"dscp", required_argument, NULL, T_DSCP},
		{"ecn", required_argument, NULL, T_ECN},
		{"pktgen", required_argument, NULL, T_PKTGEN},
		{"pktgen-port", required_argument, NULL, T_PKTGEN_PORT},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c;

	t->uc_op = TPL_WRITE;
	t->msgs = TPL_DEF_MSGS;
	t->flows = 1;
	t->vlan = -1;
	uroce_lg_parse_mac(TPL_DEF_SMAC, t->smac);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:s:qh", lopts, NULL)) != -1) {
		switch (c) {
		case T_OP:
			if (strcmp(optarg, "write") == 0) {
				t->uc_op = TPL_WRITE;
			} else if (strcmp(optarg, "write-imm") == 0) {
				t->uc_op = TPL_WRITE_IMM;
			} else if (strcmp(optarg, "send") == 0) {
				t->uc_op = TPL_SEND;
			} else {
				ctl_err("--op: '%s': write, write-imm or send", optarg);
				return CTL_EXIT_ERROR;
			}
			break;
		case T_UC:
			t->want_uc = true;
			break;
		case T_UD:
			t->want_ud = true;
			break;
		case T_QPN:
			if (parse_qpns(t, optarg) != 0)
				return CTL_EXIT_ERROR;
			break;
		case 'n':
			if (cli_num("--msgs", optarg, CLI_COUNT, 1, TPL_MAX_MSGS, &v) != 0)
				return CTL_EXIT_ERROR;
			t->msgs = (uint32_t)v;
			break;
		case 's':
			if (cli_num("--size", optarg, CLI_BYTES, 0, UROCE_MAX_PMTU, &v) != 0)
				return CTL_EXIT_ERROR;
			t->size = (uint32_t)v;
			t->size_set = true;
			break;
		case T_FLOWS:
			if (cli_num("--flows", optarg, CLI_PLAIN, 1, TPL_MAX_FLOWS, &v) != 0)
				return CTL_EXIT_ERROR;
			t->flows = (uint32_t)v;
			break;
		case T_SMAC:
			if (uroce_lg_parse_mac(optarg, t->smac) != 0 || (t->smac[0] & 1)) {
				ctl_err("--smac: '%s' is not a unicast MAC address", optarg);
				return CTL_EXIT_ERROR;
			}
			break;
		case T_SRC:
			if (uroce_lg_addr_gid(optarg, t->src_gid) != 0) {
				ctl_err("--src: '%s' is not an IPv4 or IPv6 address", optarg);
				return CTL_EXIT_ERROR;
			}
			t->has_src = true;
			break;
		case T_VLAN:
			if (cli_num("--vlan", optarg, CLI_PLAIN, 1, 4094, &v) != 0)
				return CTL_EXIT_ERROR;
			t->vlan = (int)v;
			break;
		case T_NO_VLAN:
			t->vlan = 0;
			break;
		case T_PCP:
			if (cli_num("--pcp", optarg, CLI_PLAIN, 0, 7, &v) != 0)
				return CTL_EXIT_ERROR;
			t->pcp = (uint8_t)v;
			break;
		case T_DSCP:
			if (cli_num("--dscp", optarg, CLI_PLAIN, 0, 63, &v) != 0)
				return CTL_EXIT_ERROR;
			t->dscp = (uint8_t)v;
			break;
		case T_ECN:
			if (cli_num("--ecn", optarg, CLI_PLAIN, 0, 3, &v) != 0)
				return CTL_EXIT_ERROR;
			t->ecn = (uint8_t)v;
			break;
		case T_PKTGEN:
			t->pktgen_path = optarg;
			break;
		case T_PKTGEN_PORT:
			if (cli_num("--pktgen-port", optarg, CLI_PLAIN, 0, 255, &v) != 0)
				return CTL_EXIT_ERROR;
			t->pktgen_port = (uint16_t)v;
			break;
		case 'q':
			t->quiet = true;
			break;
		case 'h':
			tpl_usage(stdout);
			return CTL_EXIT_OK;
		case ':':
			ctl_err("template: option '%s' needs an argument", argv[optind - 1]);
			tpl_usage(stderr);
			return CTL_EXIT_ERROR;
		default:
			ctl_err("template: unknown option '%s'", argv[optind - 1]);
			tpl_usage(stderr);
			return CTL_EXIT_ERROR;
		}
	}
	if (argc - optind != 2) {
		ctl_err("template: SINK_JSON and OUT_PCAP are needed");
		tpl_usage(stderr);
		return CTL_EXIT_ERROR;
	}
	t->in_path = argv[optind];
	t->out_path = argv[optind + 1];
	return -1;
}

/* Read the whole of @p path ('-': standard input). NULL with a message on failure. */
static char *
read_all(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	size_t cap = 4096, n = 0, r;
	char *buf;

	if (f == NULL) {
		ctl_err("%s: %s", path, strerror(errno));
		return NULL;
	}
	buf = malloc(cap);
	while (buf != NULL) {
		r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
		if (n == cap) {
			char *nb = cap < (2u << 20) ? realloc(buf, cap * 2) : NULL;

			if (nb == NULL) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (buf == NULL)
		ctl_err("%s: more than 2 MB, or out of memory", path);
	else if (ferror(f)) {
		ctl_err("%s: read error", path);
		free(buf);
		buf = NULL;
	}
	if (f != stdin)
		fclose(f);
	*len = n;
	return buf;
}

/* One selected QP and how its frames are made. */
struct tpl_qp {
	const struct uroce_lg_qp *q;
	uint8_t opcode;
	uint64_t slots;     /* UC WRITE: message slots in the window */
};

static bool
selected(const struct tpl *t, const struct uroce_lg_qp *q)
{
	unsigned int i;

	if ((t->want_uc || t->want_ud) &&
	    !((t->want_uc && q->type == UROCE_LG_UC) || (t->want_ud && q->type == UROCE_LG_UD)))
		return false;
	if (t->n_filter == 0)
		return true;
	for (i = 0; i < t->n_filter; i++)
		if (t->qpn_filter[i] == q->qpn)
			return true;
	return false;
}

/* The RoCEv2 UDP source port of flow @p flow of @p q. Flow 0 is what a
 * sender with a zero flow label puts (derived from the two QPNs); flow j > 0
 * gets a flow label hashed from (QPN, j), folded the same way. */
static uint16_t
flow_sport(const struct uroce_lg_qp *q, uint32_t flow)
{
	uint64_t z;

	if (flow == 0)
		return uroce_udp_sport(0, q->peer_qpn, q->qpn);
	z = ((uint64_t)q->qpn << 32 | flow) * 0x9e3779b97f4a7c15ull;
	z ^= z >> 29;
	return uroce_udp_sport((uint32_t)(z & 0xfffff) | 1, q->peer_qpn, q->qpn);
}

/*
 * Build frame @p i of @p tq into @p buf (TPL_HEADROOM + ib room), returning
 * where it starts and its length.
 */
static uint8_t *
build_frame(const struct tpl *t, const struct tpl_qp *tq, uint32_t i, uint32_t frame_no,
	    uint8_t *buf, size_t cap, uint32_t *frame_len)
{
	const struct uroce_lg_desc *d = t->d;
	const struct uroce_lg_qp *q = tq->q;
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	struct uroce_encap e;
	uint8_t *ib = buf + TPL_HEADROOM;
	uint32_t hdr, ib_len, front, pad = uroce_pad(t->size);
	uint64_t off = 0;

	memset(&bth, 0, sizeof(bth));
	memset(&ext, 0, sizeof(ext));
	bth.opcode = tq->opcode;
	bth.pkey = UROCE_DEFAULT_PKEY;
	bth.migreq = true; /* as uroce and ConnectX send; receivers accept either */
	bth.dqpn = q->qpn;
	if (q->type == UROCE_LG_UC) {
		bth.psn = uroce_psn_add(q->psn, i);
		if (tq->opcode != UROCE_OPCODE(UROCE_SVC_UC, UROCE_OP_SEND_ONLY)) {
			off = (i % tq->slots) * t->size;
			ext.va = q->va + off;
			ext.rkey = q->rkey;
			ext.dma_len = t->size;
			ext.imm = (uint32_t)off; /* WRITE with immediate: the offset */
		}
	} else {
		bth.psn = i & UROCE_PSN_MASK;
		ext.qkey = q->qkey;
		ext.src_qp = q->peer_qpn;
	}
	hdr = uroce_hdr_build(ib, (uint32_t)(cap - TPL_HEADROOM), &bth, &ext, t->size);
	if (hdr == 0)
		return NULL;
	if (tq->opcode == UROCE_OPCODE(UROCE_SVC_UC, UROCE_OP_SEND_ONLY) ||
	    q->type == UROCE_LG_UD)
		uroce_lg_send_fill(ib + hdr, q->qpn, i, t->size);
	else
		uroce_lg_write_fill(ib + hdr, q->qpn, off, t->size);
	memset(ib + hdr + t->size, 0, pad);
	ib_len = hdr + t->size + pad + UROCE_ICRC_LEN;

	memset(&e, 0, sizeof(e));
	memcpy(e.dmac, d->mac, 6);
	memcpy(e.smac, t->smac, 6);
	if (t->vlan > 0) {
		e.has_vlan = true;
		e.vlan_tci = (uint16_t)(t->pcp << 13 | t->vlan);
	}
	e.family = uroce_lg_gid_is_v4(d->gid) ? UROCE_IP_V4 : UROCE_IP_V6;
	memcpy(e.sgid, t->has_src ? t->src_gid : d->peer_gid, 16);
	memcpy(e.dgid, d->gid, 16);
	e.tclass = (uint8_t)(t->dscp << 2 | t->ecn);
	e.hop_limit = 64;
	e.sport = flow_sport(q, i % t->flows);
	e.ip_id = (uint16_t)frame_no;
	front = uroce_frame_wrap(ib, TPL_HEADROOM, ib_len, &e);
	if (front == 0)
		return NULL;
	*frame_len = front + ib_len;
	return ib - front;
}

/* A pktgen command file that makes pktgen's single-mode packet this frame. */
static int
write_pktgen(const struct tpl *t, const struct tpl_qp *tq, const uint8_t *frame, uint32_t len)
{
	const struct uroce_lg_desc *d = t->d;
	uint32_t l2 = t->vlan > 0 ? 18 : 14, off, slot = 0, bit;
	bool v4 = uroce_lg_gid_is_v4(d->gid);
	char src[64], dst[64];
	unsigned int p = t->pktgen_port;
	FILE *f;

	if (len - l2 > PKTGEN_SLOTS * 4) {
		uint32_t over = len - l2 - PKTGEN_SLOTS * 4;

		/* Payload and pad shrink together, 4 bytes at a time at most. */
		ctl_err("--pktgen: the frame has %u bytes after the Ethernet header; pktgen's %u "
			"random-bit slots cover %u: use a payload of at most %u bytes, or pktgen's "
			"pcap mode (-s %u:FILE)", len - l2, PKTGEN_SLOTS, PKTGEN_SLOTS * 4,
			t->size + uroce_pad(t->size) > over ?
			((t->size + uroce_pad(t->size) - over) & ~3u) : 0, p);
		return -1;
	}
	f = fopen(t->pktgen_path, "w");
	if (f == NULL) {
		ctl_err("--pktgen %s: %s", t->pktgen_path, strerror(errno));
		return -1;
	}
	uroce_lg_gid_addr(t->has_src ? t->src_gid : d->peer_gid, src, sizeof(src));
	uroce_lg_gid_addr(d->gid, dst, sizeof(dst));
	fprintf(f, "# pktgen command file written by uroce-ctl template (run it with\n"
		   "# 'pktgen ... -- -f FILE'): port %u sends one RoCEv2 frame, %s to QPN %u\n"
		   "# (%u-byte payload, %u-byte frame), over and over. pktgen cannot compute an\n"
		   "# ICRC, so every byte from the IP header on is written by 'rnd' masks (all\n"
		   "# '0'/'1': nothing random); the set commands before them only keep pktgen's\n"
		   "# screen truthful. Change nothing after the Ethernet header: the ICRC covers\n"
		   "# it. See doc/loadgen.md.\n",
		p, uroce_opcode_get(tq->opcode)->name, tq->q->qpn, t->size, len);
	fprintf(f, "stop %u\n", p);
	fprintf(f, "set %u type %s\n", p, v4 ? "ipv4" : "ipv6");
	fprintf(f, "set %u proto udp\n", p);
	fprintf(f, "set %u size %u\n", p, len + 4); /* pktgen's sizes include the FCS */
	fprintf(f, "set %u dst mac %02x:%02x:%02x:%02x:%02x:%02x\n", p, frame[0], frame[1],
		frame[2], frame[3], frame[4], frame[5]);
	fprintf(f, "set %u src mac %02x:%02x:%02x:%02x:%02x:%02x\n", p, frame[6], frame[7],
		frame[8], frame[9], frame[10], frame[11]);
	if (t->vlan > 0) {
		fprintf(f, "enable %u vlan\n", p);
		fprintf(f, "set %u vlan %d\n", p, t->vlan);
		fprintf(f, "set %u cos %u\n", p, t->pcp);
	}
	fprintf(f, "set %u src ip %s/%u\n", p, src, v4 ? 24 : 64);
	fprintf(f, "set %u dst ip %s\n", p, dst);
	fprintf(f, "set %u sport %u\n", p, uroce_get_be16(frame + l2 + (v4 ? 20 : 40)));
	fprintf(f, "set %u dport %u\n", p, UROCE_UDP_PORT);
	for (off = l2; off < len; off += 4, slot++) {
		uint32_t n = UROCE_MIN(4u, len - off);

		fprintf(f, "set %u rnd %u %u ", p, slot, off);
		for (bit = 0; bit < 8 * n; bit++)
			fputc(frame[off + bit / 8] & (0x80 >> (bit % 8)) ? '1' : '0', f);
		fputc('\n', f);
	}
	fprintf(f, "enable %u random\n", p);
	fprintf(f, "# start %u\n", p);
	if (fclose(f) != 0) {
		ctl_err("--pktgen %s: write failed", t->pktgen_path);
		return -1;
	}
	return 0;
}

static int
check_selection(struct tpl *t, struct tpl_qp *sel, unsigned int *n_sel)
{
	const struct uroce_lg_desc *d = t->d;
	unsigned int i, n = 0;

	for (i = 0; i < d->n_qps; i++) {
		const struct uroce_lg_qp *q = &d->qps[i];
		struct tpl_qp *tq;

		if (!selected(t, q))
			continue;
		tq = &sel[n++];
		tq->q = q;
		if (q->type == UROCE_LG_UD) {
			if (!(q->ops & UROCE_LG_OP_SEND)) {
				ctl_err("UD QP %u does not take SEND ONLY", q->qpn);
				return -1;
			}
			if (t->size > d->ud_max_payload) {
				ctl_err("--size %u: above the UD maximum %u", t->size,
					d->ud_max_payload);
				return -1;
			}
			tq->opcode = UROCE_OPCODE(UROCE_SVC_UD, UROCE_OP_SEND_ONLY);
			continue;
		}
		if (t->size > d->path_mtu) {
			ctl_err("--size %u: above the path MTU %u (frames are single-packet "
				"messages)", t->size, d->path_mtu);
			return -1;
		}
		/* IBA 9.6: a connected QP takes packets from its peer only; in
		 * RoCEv2 that is the source IP, the sink's peer_ip. */
		if (t->has_src && memcmp(t->src_gid, d->peer_gid, 16) != 0) {
			char a[64];

			ctl_err("--src: UC QP %u takes packets only from its peer %s (the sink's "
				"--peer-ip); give the sink that option instead", q->qpn,
				uroce_lg_gid_addr(d->peer_gid, a, sizeof(a)));
			return -1;
		}
		switch (t->uc_op) {
		case TPL_SEND:
			tq->opcode = UROCE_OPCODE(UROCE_SVC_UC, UROCE_OP_SEND_ONLY);
			if (!(q->ops & UROCE_LG_OP_SEND))
				goto no_op;
			continue;
		case TPL_WRITE_IMM:
			tq->opcode = UROCE_OPCODE(UROCE_SVC_UC,
						  UROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
			if (!(q->ops & UROCE_LG_OP_WRITE_IMM))
				goto no_op;
			break;
		case TPL_WRITE:
			tq->opcode = UROCE_OPCODE(UROCE_SVC_UC, UROCE_OP_RDMA_WRITE_ONLY);
			if (!(q->ops & UROCE_LG_OP_WRITE))
				goto no_op;
			break;
		}
		if (t->size == 0 || q->len < t->size) {
			ctl_err("UC QP %u: a %u-byte WRITE does not fit its %" PRIu64
				"-byte window", q->qpn, t->size, q->len);
			return -1;
		}
		tq->slots = q->len / t->size;
		continue;
no_op:
		ctl_err("UC QP %u does not take %s", q->qpn, uroce_opcode_get(tq->opcode)->name);
		return -1;
	}
	if (n == 0) {
		ctl_err("no QP of the description matches the selection");
		return -1;
	}
	*n_sel = n;
	return 0;
}

int
ctl_template_main(int argc, char **argv)
{
	struct tpl t;
	struct tpl_qp *sel = NULL;
	unsigned int n_sel = 0, k;
	pcap_t *dead = NULL;
	pcap_dumper_t *dump = NULL;
	char err[256], *text;
	uint8_t buf[TPL_HEADROOM + UROCE_MAX_PMTU + 128];
	uint64_t bytes = 0;
	uint32_t i, frames = 0;
	size_t len;
	int rc = CTL_EXIT_ERROR;

	memset(&t, 0, sizeof(t));
	rc = tpl_args(&t, argc, argv);
	if (rc >= 0)
		return rc;
	rc = CTL_EXIT_ERROR;
	text = read_all(t.in_path, &len);
	if (text == NULL)
		return CTL_EXIT_ERROR;
	t.d = calloc(1, sizeof(*t.d));
	sel = calloc(UROCE_LG_MAX_QPS, sizeof(*sel));
	if (t.d == NULL || sel == NULL) {
		ctl_err("out of memory");
		goto out;
	}
	if (uroce_lg_desc_parse(text, len, t.d, err, sizeof(err)) != 0) {
		ctl_err("%s: %s", t.in_path, err);
		goto out;
	}
	if (strcmp(t.d->pattern, UROCE_LG_PATTERN) != 0)
		ctl_err("warning: %s wants pattern '%s'; frames carry '%s'", t.in_path,
			t.d->pattern, UROCE_LG_PATTERN);
	if (!t.size_set)
		t.size = t.d->size;
	if (t.vlan < 0)
		t.vlan = t.d->has_vlan ? t.d->vlan : 0;
	if (t.has_src && uroce_lg_gid_is_v4(t.src_gid) != uroce_lg_gid_is_v4(t.d->gid)) {
		ctl_err("--src: the sink's address is %s; give one of the same family",
			uroce_lg_gid_is_v4(t.d->gid) ? "IPv4" : "IPv6");
		goto out;
	}
	if (check_selection(&t, sel, &n_sel) != 0)
		goto out;
	if ((uint64_t)n_sel * t.msgs > TPL_MAX_FRAMES) {
		ctl_err("%u QPs x %u messages: more than %u frames", n_sel, t.msgs, TPL_MAX_FRAMES);
		goto out;
	}
	dead = pcap_open_dead(DLT_EN10MB, 65535);
	if (dead == NULL) {
		ctl_err("pcap_open_dead failed");
		goto out;
	}
	dump = pcap_dump_open(dead, t.out_path);
	if (dump == NULL) {
		ctl_err("%s: %s", t.out_path, pcap_geterr(dead));
		goto out;
	}
	for (i = 0; i < t.msgs; i++) {
		for (k = 0; k < n_sel; k++) {
			struct pcap_pkthdr h;
			uint32_t flen;
			uint8_t *fr = build_frame(&t, &sel[k], i, frames, buf, sizeof(buf), &flen);

			if (fr == NULL) {
				ctl_err("QP %u message %u: lib/wire refused to build the frame",
					sel[k].q->qpn, i);
				goto out;
			}
			if (frames == 0 && t.pktgen_path != NULL &&
			    write_pktgen(&t, &sel[k], fr, flen) != 0)
				goto out;
			memset(&h, 0, sizeof(h));
			/* One microsecond apart, from 0: the same input gives the same file. */
			h.ts.tv_sec = frames / 1000000;
			h.ts.tv_usec = frames % 1000000;
			h.caplen = h.len = flen;
			pcap_dump((u_char *)dump, &h, fr);
			frames++;
			bytes += flen;
		}
	}
	if (pcap_dump_flush(dump) != 0 || ferror(pcap_dump_file(dump))) {
		ctl_err("%s: write failed", t.out_path);
		goto out;
	}
	if (!t.quiet) {
		char a[64];

		fprintf(stderr, "uroce-ctl template: %u frames (%u QPs x %u messages, %u-byte "
			"payloads, %" PRIu64 " bytes) to %s %s, pattern %s\n", frames, n_sel,
			t.msgs, t.size, bytes, uroce_lg_gid_addr(t.d->gid, a, sizeof(a)),
			t.vlan > 0 ? "tagged" : "untagged", UROCE_LG_PATTERN);
	}
	rc = CTL_EXIT_OK;
out:
	if (dump != NULL)
		pcap_dump_close(dump);
	if (dead != NULL)
		pcap_close(dead);
	free(sel);
	free(t.d);
	free(text);
	return rc;
}
