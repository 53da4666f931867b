/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * `uroce-perf sink`: make a uroced expose receive-side QPs for stateless
 * RoCEv2 traffic, say how to reach them, and count what arrives.
 *
 *  - UC QPs in RTS with a window of an MR that takes RDMA WRITE ONLY (with
 *    and without immediate) and receive WQEs kept posted (WRITE with
 *    immediate and SEND ONLY consume them);
 *  - UD QPs with receive WQEs kept posted for SEND ONLY.
 *
 * Everything a generator needs (MAC, GIDs, QPNs, Q_Key, R_Key, windows, path
 * MTU, the UC QPs' peer QPN and expected PSN) is printed as one JSON line
 * (lib/loadgen's description), then one rate record per interval, then a
 * summary. Messages that complete (UD SEND, UC SEND and WRITE with
 * immediate) are counted and checked from their CQEs; an RDMA WRITE without
 * immediate consumes no receive WQE and makes no CQE at all, so those are
 * counted from the daemon's per-QP transport counters
 * (rx_write_requests, read with QUERY_COUNTERS on a second control
 * connection, as `uroce-ctl counters --qp` does) and checked by scanning the
 * windows. doc/loadgen.md explains every number.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "uroce_cli.h"
#include "uroce_common.h"
#include "uroce_loadgen.h"
#include "uroce_shm_introspect.h"
#include "uroce_verbs.h"

#include "sink.h"

#define PROG "uroce-perf sink"
#define SINK_MAX_QPS 64          /* of each type */
#define SINK_DEF_SLOTS 256
#define SINK_DEF_SIZE 64
#define SINK_DEF_QKEY 0x11111111u
#define SINK_DEF_PEER_QPN 0x100u
#define SINK_POLL_BATCH 32
/* CQEs taken before the loop looks at the clock again. */
#define SINK_DRAIN_MAX 2048
/* Error and bad-data lines printed before they are only counted. */
#define SINK_SHOW 10
/* Bytes of the buffer the sink allocates at most. */
#define SINK_MEM_MAX (512ull << 20)

/* The daemon's per-QP transport counters the sink reads, by their stable
 * names (lib/transport/counters.def), and whether a daemon must have it (an
 * optional one is counted when the daemon has it). */
#define SINK_COUNTERS(X) \
	X(OOS, "out_of_sequence", true) \
	X(WRITE, "rx_write_requests", true) \
	X(SEND, "rx_send_requests", true) \
	X(ACCESS, "resp_remote_access_errors", true) \
	X(INVALID, "resp_remote_invalid_request", true) \
	X(LENGTH, "resp_local_length_error", true) \
	X(PROT, "resp_local_prot_err", true) \
	X(SILENT, "resp_silent_drop", true) \
	X(QKEY, "rx_ud_qkey_err", true) \
	X(UD_DROP, "rx_ud_drop", true) \
	X(BAD_STATE, "rx_bad_state", true) \
	X(BAD_SERVICE, "rx_bad_service", true) \
	X(BAD_PKEY, "rx_bad_pkey", true) \
	X(BAD_SRC, "rx_bad_src_addr", false) \
	X(RX_PACKETS, "rx_packets", true)

enum sink_cnt {
#define SINK_ENUM(e, n, r) SC_##e,
	SINK_COUNTERS(SINK_ENUM)
#undef SINK_ENUM
	SC_MAX
};

static const char *const sink_cnt_names[SC_MAX] = {
#define SINK_NAME(e, n, r) n,
	SINK_COUNTERS(SINK_NAME)
#undef SINK_NAME
};

static const bool sink_cnt_required[SC_MAX] = {
#define SINK_REQ(e, n, r) r,
	SINK_COUNTERS(SINK_REQ)
#undef SINK_REQ
};

struct sink_qp {
	struct uroce_qp *qp;
	struct uroce_lg_qp d;       /* as described */
	uint8_t *win;               /* UC: the window */
	uint8_t *rbuf;              /* receive buffers, recv_slots x stride */
	uint32_t stride;
	uint64_t rx_posted;
	struct uroce_lg_counts own; /* counted here: cqes, bytes of CQEs, errors, verify_bad */
	uint64_t cqe_write_imm;     /* WRITE with immediate completions */
	uint64_t base[SC_MAX];      /* daemon counters when the sink started */
	uint64_t cur[SC_MAX];       /* ... at the last read */
	struct uroce_lg_scan scan;  /* last window scan (UC, --verify) */
	uint64_t win_bad_max;       /* most bad window bytes any scan saw */
	bool flushed;               /* the QP went to ERR (flush completions) */
};

/*
 * The receives a batch of completions gives back, posted after the batch as
 * one chain per QP: one doorbell per QP and batch instead of one per
 * message (each is a cache line the worker's CPU must fetch).
 */
struct repost {
	unsigned int n, n_qps;
	struct uroce_recv_wr wr[SINK_POLL_BATCH];
	struct uroce_sge sge[SINK_POLL_BATCH];
	uint16_t qi[SINK_POLL_BATCH];              /* the QPs touched, in order */
	struct uroce_recv_wr *head[2 * SINK_MAX_QPS];
	struct uroce_recv_wr *tail[2 * SINK_MAX_QPS];
	uint32_t count[2 * SINK_MAX_QPS];
};

struct sink {
	/* options */
	const char *sock_path;
	unsigned int n_uc, n_ud;
	uint32_t slots;
	uint32_t size;
	uint8_t ib_port;
	uint8_t gid_index;
	uint8_t want_mtu;           /* IBA enum, 0: the port's */
	uint32_t qkey;
	uint32_t psn;
	uint32_t peer_qpn;
	bool has_peer;
	uint8_t peer_gid[16];
	bool has_mac;
	uint8_t mac[6];
	bool has_vlan;
	uint16_t vlan;
	bool verify;
	bool busy;
	struct uroce_modify_cq_attr cq_mod; /* --cq-mod; cq_period 0: none */
	bool quiet;
	double duration;
	double interval;
	const char *json_path;
	const char *expect_path;

	/* resources */
	struct uroce_context *ctx;
	struct uroce_shm_client ctl;
	struct uroce_pd *pd;
	struct uroce_cq *cq;
	struct uroce_mr *mr;
	uint8_t *mem;
	size_t mem_len;
	unsigned int n_qps;
	struct sink_qp qps[2 * SINK_MAX_QPS];
	struct uroce_lg_desc desc;
	struct repost repost;       /* heads all NULL between batches */
	int cnt_idx[SC_MAX];        /* index of each counter in QUERY_COUNTERS */
	uint64_t bad_qpn_base, bad_qpn;

	/* running */
	double t0;
	struct uroce_lg_counts last_total;
	double peak_msgs_per_s;
	uint64_t shown_err, shown_bad;
};

static volatile sig_atomic_t sink_stop;

static void
on_signal(int sig)
{
	(void)sig;
	sink_stop = 1;
}

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verr(fmt, ap);
	va_end(ap);
	exit(2);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: uroce-perf sink [options]\n"
		"Expose receive-side QPs of a uroced for stateless RoCEv2 traffic (a packet\n"
		"generator, a replayed pcap), print how to reach them as one JSON line, then a\n"
		"rate record each interval and a summary (doc/loadgen.md).\n"
		"  --uc N              UC QPs taking RDMA WRITE ONLY [with immediate], SEND ONLY\n"
		"  --ud N              UD QPs taking SEND ONLY (default: 1 of each if neither is\n"
		"                      given; at most %u of each)\n"
		"  -s, --size BYTES    message size generators should send (default %u; at most\n"
		"                      the path MTU); sets the UC windows and the bytes of WRITEs\n"
		"      --slots N       receive WQEs kept posted per QP, and message slots of a UC\n"
		"                      window (default %u, max 4096)\n"
		"      --verify        check payloads against the pattern " UROCE_LG_PATTERN "\n"
		"  -D, --duration SEC  stop after SEC seconds (default: at SIGINT/SIGTERM)\n"
		"      --interval MS   rate record interval (default 1000)\n"
		"      --json FILE     also write the description to FILE (atomically)\n"
		"      --expect FILE   fail unless the QPs match FILE's (a description written by\n"
		"                      an earlier run, from which frames were built before this\n"
		"                      daemon started); R_Key and VA differences are only warned\n"
		"                      about\n"
		"  -x, --gid-index N   GID frames must address (default 1: uroced's IPv4 GID)\n"
		"      --ib-port N     port number (default 1)\n"
		"  -m, --mtu BYTES     UC path MTU 256..4096 (default: the port's active MTU)\n"
		"      --qkey Q        Q_Key of the UD QPs (default %#x)\n"
		"      --psn P         PSN the UC QPs expect first (default 0)\n"
		"      --peer-qpn N    QPN the UC QPs name as peer (QP i: N + i; default %#x)\n"
		"      --peer-ip ADDR  address the UC QPs name as peer and generators send from\n"
		"                      (default: the sink's address with the last byte 254)\n"
		"      --mac MAC       the port's MAC, if the daemon's GID 0 does not give it\n"
		"      --vlan ID       VLAN the daemon's port is configured with (JSON only)\n"
		"      --busy          poll the CQ without sleeping (default: sleep on its event)\n"
		"      --cq-mod N,US   moderate the CQ's events (ibv_modify_cq): wake after N\n"
		"                      completions or US microseconds (1..%u) after the first\n"
		"  -q, --quiet         no human-readable lines on stderr\n"
		"      --socket PATH   uroce daemon socket (default $UROCE_SOCKET, then %s)\n"
		"  -h, --help          this text\n",
		SINK_MAX_QPS, SINK_DEF_SIZE, SINK_DEF_SLOTS, SINK_DEF_QKEY, SINK_DEF_PEER_QPN,
		UROCE_CQ_PERIOD_MAX, UROCE_DEFAULT_SOCKET);
}

enum {
	OPT_UC = 256, OPT_UD, OPT_SLOTS, OPT_VERIFY, OPT_INTERVAL, OPT_JSON, OPT_EXPECT,
	OPT_IB_PORT, OPT_QKEY, OPT_PSN, OPT_PEER_QPN, OPT_PEER_IP, OPT_MAC, OPT_VLAN, OPT_BUSY,
	OPT_CQ_MOD, OPT_SOCKET,
};

/* --cq-mod N,US: both parts given, US at least 1 (0 would mean no moderation). */
static void
parse_cq_mod(struct sink *s, const char *arg)
{
	const char *comma = strchr(arg, ',');
	char count[16];

	if (comma == NULL || (size_t)(comma - arg) >= sizeof(count))
		cli_usage_error("--cq-mod '%s': give COUNT,MICROSECONDS (e.g. 64,50)", arg);
	memcpy(count, arg, (size_t)(comma - arg));
	count[comma - arg] = '\0';
	s->cq_mod.attr_mask = UROCE_CQ_ATTR_MODERATE;
	s->cq_mod.cq_count = (uint16_t)cli_num_or_exit("--cq-mod count", count, CLI_PLAIN, 0,
						       UINT16_MAX);
	s->cq_mod.cq_period = (uint16_t)cli_num_or_exit("--cq-mod period", comma + 1, CLI_PLAIN, 1,
							UROCE_CQ_PERIOD_MAX);
}

static void
parse_args(struct sink *s, int argc, char **argv)
{
	static const struct option lopts[] = {
		{"uc", required_argument, NULL, OPT_UC},
		{"ud", required_argument, NULL, OPT_UD},
		{"size", required_argument, NULL, 's'},
		{"slots", required_argument, NULL, OPT_SLOTS},
		{"verify", no_argument, NULL, OPT_VERIFY},
		{"duration", required_argument, NULL, 'D'},
		{"interval", required_argument, NULL, OPT_INTERVAL},
		{"json", required_argument, NULL, OPT_JSON},
		{"expect", required_argument, NULL, OPT_EXPECT},
		{"gid-index", required_argument, NULL, 'x'},
		{"ib-port", required_argument, NULL, OPT_IB_PORT},
		{"mtu", required_argument, NULL, 'm'},
		{"qkey", required_argument, NULL, OPT_QKEY},
		{"psn", required_argument, NULL, OPT_PSN},
		{"peer-qpn", required_argument, NULL, OPT_PEER_QPN},
		{"peer-ip", required_argument, NULL, OPT_PEER_IP},
		{"mac", required_argument, NULL, OPT_MAC},
		{"vlan", required_argument, NULL, OPT_VLAN},
		{"busy", no_argument, NULL, OPT_BUSY},
		{"cq-mod", required_argument, NULL, OPT_CQ_MOD},
		{"quiet", no_argument, NULL, 'q'},
		{"socket", required_argument, NULL, OPT_SOCKET},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool uc_set = false, ud_set = false;
	uint64_t v;
	int c;

	memset(s, 0, sizeof(*s));
	s->slots = SINK_DEF_SLOTS;
	s->size = SINK_DEF_SIZE;
	s->ib_port = 1;
	s->gid_index = 1;
	s->qkey = SINK_DEF_QKEY;
	s->peer_qpn = SINK_DEF_PEER_QPN;
	s->interval = 1.0;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":s:D:x:m:qh", lopts, NULL)) != -1) {
		switch (c) {
		case OPT_UC:
			s->n_uc = (unsigned int)cli_num_or_exit("--uc", optarg, CLI_PLAIN, 0, SINK_MAX_QPS);
			uc_set = true;
			break;
		case OPT_UD:
			s->n_ud = (unsigned int)cli_num_or_exit("--ud", optarg, CLI_PLAIN, 0, SINK_MAX_QPS);
			ud_set = true;
			break;
		case 's':
			s->size = (uint32_t)cli_num_or_exit("--size", optarg, CLI_BYTES, 1, UROCE_MAX_PMTU);
			break;
		case OPT_SLOTS:
			s->slots = (uint32_t)cli_num_or_exit("--slots", optarg, CLI_COUNT, 1, UROCE_MAX_QP_WR);
			break;
		case OPT_VERIFY:
			s->verify = true;
			break;
		case 'D':
			s->duration = (double)cli_num_or_exit("--duration", optarg, CLI_PLAIN, 1, 86400);
			break;
		case OPT_INTERVAL:
			s->interval = (double)cli_num_or_exit("--interval", optarg, CLI_PLAIN, 100, 60000) / 1000.0;
			break;
		case OPT_JSON:
			s->json_path = optarg;
			break;
		case OPT_EXPECT:
			s->expect_path = optarg;
			break;
		case 'x':
			s->gid_index = (uint8_t)cli_num_or_exit("--gid-index", optarg, CLI_PLAIN, 0, 255);
			break;
		case OPT_IB_PORT:
			s->ib_port = (uint8_t)cli_num_or_exit("--ib-port", optarg, CLI_PLAIN, 1, 255);
			break;
		case 'm':
			v = cli_num_or_exit("--mtu", optarg, CLI_BYTES, 256, 4096);
			for (s->want_mtu = 1; s->want_mtu <= 5; s->want_mtu++)
				if (128u << s->want_mtu == v)
					break;
			if (s->want_mtu > 5)
				cli_usage_error("--mtu %s: one of 256, 512, 1024, 2048, 4096", optarg);
			break;
		case OPT_QKEY:
			s->qkey = (uint32_t)cli_num_or_exit("--qkey", optarg, CLI_PLAIN, 0, 0x7fffffff);
			break;
		case OPT_PSN:
			s->psn = (uint32_t)cli_num_or_exit("--psn", optarg, CLI_PLAIN, 0, 0xffffff);
			break;
		case OPT_PEER_QPN:
			s->peer_qpn = (uint32_t)cli_num_or_exit("--peer-qpn", optarg, CLI_PLAIN, 0, 0xffffff);
			break;
		case OPT_PEER_IP:
			if (uroce_lg_addr_gid(optarg, s->peer_gid) != 0)
				cli_usage_error("--peer-ip: '%s' is not an IPv4 or IPv6 address", optarg);
			s->has_peer = true;
			break;
		case OPT_MAC:
			if (uroce_lg_parse_mac(optarg, s->mac) != 0 || (s->mac[0] & 1))
				cli_usage_error("--mac: '%s' is not a unicast MAC address "
					  "(aa:bb:cc:dd:ee:ff)", optarg);
			s->has_mac = true;
			break;
		case OPT_VLAN:
			s->vlan = (uint16_t)cli_num_or_exit("--vlan", optarg, CLI_PLAIN, 1, 4094);
			s->has_vlan = true;
			break;
		case OPT_BUSY:
			s->busy = true;
			break;
		case OPT_CQ_MOD:
			parse_cq_mod(s, optarg);
			break;
		case 'q':
			s->quiet = true;
			break;
		case OPT_SOCKET:
			s->sock_path = optarg;
			break;
		case 'h':
			cli_help();
		default:
			cli_getopt_error(c, argv);
		}
	}
	if (optind != argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (!uc_set && !ud_set) {
		s->n_uc = 1;
		s->n_ud = 1;
	}
	if (s->n_uc + s->n_ud == 0)
		cli_usage_error("--uc 0 and --ud 0: no QP to receive on");
	if (s->peer_qpn + s->n_uc + s->n_ud > 0x1000000)
		cli_usage_error("--peer-qpn %#x: QP %u's peer would pass 0xffffff", s->peer_qpn,
			  s->n_uc + s->n_ud - 1);
}

/* ------------------------------------------------------------------------ */
/* The daemon's counters, over a second control connection                  */
/* ------------------------------------------------------------------------ */

/* Walk QUERY_COUNTERS of @p scope (@p qpn) and call back per counter.
 * @return 0 or the call's -errno. */
static int
walk_counters(struct sink *s, uint32_t scope, uint32_t qpn,
	      void (*fn)(struct sink *s, uint32_t idx, const char *name, uint64_t v, void *arg),
	      void *arg)
{
	struct uroce_shm_msg_query_counters_resp r;
	struct uroce_shm_msg_query_counters_req q;
	unsigned int i;
	int rc;

	memset(&q, 0, sizeof(q));
	q.scope = scope;
	q.qp_num = qpn;
	do {
		char name[UROCE_SHM_COUNTER_NAME_LEN + 1];

		rc = uroce_shm_client_request(&s->ctl, UROCE_SHM_MSG_QUERY_COUNTERS, &q, sizeof(q), &r,
				   sizeof(r));
		if (rc != 0)
			return rc;
		if (r.page.count > UROCE_SHM_COUNTERS_MAX ||
		    ((r.page.flags & UROCE_SHM_LIST_F_MORE) && r.page.next <= q.start))
			return -EPROTO;
		for (i = 0; i < r.page.count; i++) {
			memcpy(name, r.c[i].name, UROCE_SHM_COUNTER_NAME_LEN);
			name[UROCE_SHM_COUNTER_NAME_LEN] = '\0';
			fn(s, q.start + i, name, r.c[i].value, arg);
		}
		q.start = r.page.next;
	} while (r.page.flags & UROCE_SHM_LIST_F_MORE);
	return 0;
}

static void
learn_index(struct sink *s, uint32_t idx, const char *name, uint64_t v, void *arg)
{
	unsigned int i;

	(void)v;
	(void)arg;
	for (i = 0; i < SC_MAX; i++)
		if (strcmp(name, sink_cnt_names[i]) == 0)
			s->cnt_idx[i] = (int)idx;
}

static void
take_value(struct sink *s, uint32_t idx, const char *name, uint64_t v, void *arg)
{
	uint64_t *out = arg;
	unsigned int i;

	(void)name;
	for (i = 0; i < SC_MAX; i++)
		if (s->cnt_idx[i] == (int)idx)
			out[i] = v;
}

static void
take_bad_qpn(struct sink *s, uint32_t idx, const char *name, uint64_t v, void *arg)
{
	(void)s;
	(void)idx;
	if (strcmp(name, "rx_bad_qpn") == 0)
		*(uint64_t *)arg = v;
}

static void
read_counters(struct sink *s, bool base)
{
	unsigned int i;
	int rc;

	for (i = 0; i < s->n_qps; i++) {
		struct sink_qp *q = &s->qps[i];

		rc = walk_counters(s, UROCE_SHM_COUNTERS_QP, q->d.qpn, take_value, q->cur);
		if (rc != 0)
			die("QUERY_COUNTERS of QP %u: %s", q->d.qpn, strerror(-rc));
		if (base)
			memcpy(q->base, q->cur, sizeof(q->base));
	}
	rc = walk_counters(s, UROCE_SHM_COUNTERS_DEVICE, 0, take_bad_qpn, &s->bad_qpn);
	if (rc != 0)
		die("QUERY_COUNTERS of the device: %s", strerror(-rc));
	if (base)
		s->bad_qpn_base = s->bad_qpn;
}

/* Connect the introspection connection and learn where our counters are. */
static void
open_ctl(struct sink *s, const char *path)
{
	unsigned int i;
	int rc;

	rc = uroce_shm_client_open(&s->ctl, path, "uroce-perf");
	if (rc != 0)
		die("second control connection to %s: %s (%s)", path, strerror(-rc),
		    uroce_shm_client_advice(rc));
	if (s->ctl.daemon_minor < 1)
		die("the daemon speaks shm ABI %u.%u: the sink needs 1.1 (QUERY_COUNTERS) to "
		    "count RDMA WRITEs, which make no completion", UROCE_SHM_ABI_MAJOR,
		    s->ctl.daemon_minor);
	for (i = 0; i < SC_MAX; i++)
		s->cnt_idx[i] = -1;
	/* The names are the daemon's (counters.def); find them on the first QP. */
	rc = walk_counters(s, UROCE_SHM_COUNTERS_QP, s->qps[0].d.qpn, learn_index, NULL);
	if (rc != 0)
		die("QUERY_COUNTERS of QP %u: %s", s->qps[0].d.qpn, strerror(-rc));
	for (i = 0; i < SC_MAX; i++)
		if (s->cnt_idx[i] < 0 && sink_cnt_required[i])
			die("the daemon has no per-QP counter '%s' (a different uroce release?)",
			    sink_cnt_names[i]);
}

/* ------------------------------------------------------------------------ */
/* Setup                                                                     */
/* ------------------------------------------------------------------------ */

static uint32_t
align64(uint32_t v)
{
	return (v + 63u) & ~63u;
}

/* The receive WR for @p slot of @p q (its buffer zeroed first with --verify:
 * every pattern byte is odd, so bytes the daemon did not write cannot pass
 * for a payload). */
static void
recv_wr_fill(struct sink *s, struct sink_qp *q, uint32_t slot, struct uroce_recv_wr *wr,
	     struct uroce_sge *sge)
{
	uint8_t *buf = q->rbuf + (size_t)slot * q->stride;

	if (s->verify)
		memset(buf, 0, q->stride);
	sge->addr = (uint64_t)(uintptr_t)buf;
	sge->length = q->stride;
	sge->lkey = s->mr->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = (uint64_t)(q - s->qps) << 32 | slot;
	wr->sg_list = sge;
	wr->num_sge = 1;
}

/* Post the chain @p wr of @p n receives on @p q: one doorbell for all. */
static void
post_recv_chain(struct sink_qp *q, struct uroce_recv_wr *wr, uint32_t n)
{
	struct uroce_recv_wr *bad;
	int rc = uroce_post_recv(q->qp, wr, &bad);

	if (rc == -ENOTCONN)
		die("the uroce daemon went away");
	if (rc != 0)
		die("post_recv on QP %u: %s", q->d.qpn, strerror(-rc));
	q->rx_posted += n;
}

static void
post_recv_slot(struct sink *s, struct sink_qp *q, uint32_t slot)
{
	struct uroce_recv_wr wr;
	struct uroce_sge sge;

	recv_wr_fill(s, q, slot, &wr, &sge);
	post_recv_chain(q, &wr, 1);
}

static void
repost_add(struct sink *s, struct repost *r, struct sink_qp *q, uint32_t slot)
{
	unsigned int qi = (unsigned int)(q - s->qps);
	struct uroce_recv_wr *wr = &r->wr[r->n];

	recv_wr_fill(s, q, slot, wr, &r->sge[r->n]);
	r->n++;
	if (r->head[qi] == NULL) {
		r->head[qi] = wr;
		r->count[qi] = 0;
		r->qi[r->n_qps++] = (uint16_t)qi;
	} else {
		r->tail[qi]->next = wr;
	}
	r->tail[qi] = wr;
	r->count[qi]++;
}

/* Post what a batch of completions gave back, one chain per QP. */
static void
repost_flush(struct sink *s, struct repost *r)
{
	unsigned int i;

	for (i = 0; i < r->n_qps; i++) {
		unsigned int qi = r->qi[i];

		post_recv_chain(&s->qps[qi], r->head[qi], r->count[qi]);
		r->head[qi] = NULL;
	}
	r->n = 0;
	r->n_qps = 0;
}

static void
modify(struct sink_qp *q, struct uroce_qp_attr *a, int mask, const char *to)
{
	int rc = uroce_modify_qp(q->qp, a, mask);

	if (rc != 0)
		die("modify_qp of %s QP %u to %s: %s", uroce_lg_qp_type_name(q->d.type), q->d.qpn,
		    to, strerror(-rc));
}

static void
connect_qp(struct sink *s, struct sink_qp *q, uint8_t path_mtu)
{
	struct uroce_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.port_num = s->ib_port;
	if (q->d.type == UROCE_LG_UD) {
		a.qkey = s->qkey;
		modify(q, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT | UROCE_QP_QKEY,
		       "INIT");
	} else {
		a.qp_access_flags = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE;
		modify(q, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
			      UROCE_QP_ACCESS_FLAGS, "INIT");
	}
	/* Receives go in before RTR, so the first message finds them. */
	while (q->rx_posted < q->d.recv_slots)
		post_recv_slot(s, q, (uint32_t)q->rx_posted);
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTR;
	if (q->d.type == UROCE_LG_UD) {
		modify(q, &a, UROCE_QP_STATE, "RTR");
	} else {
		a.path_mtu = path_mtu;
		a.dest_qp_num = q->d.peer_qpn;
		a.rq_psn = q->d.psn;
		memcpy(a.ah_attr.dgid, s->desc.peer_gid, 16);
		a.ah_attr.sgid_index = s->gid_index;
		a.ah_attr.port_num = s->ib_port;
		modify(q, &a, UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU | UROCE_QP_DEST_QPN |
			      UROCE_QP_RQ_PSN, "RTR");
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTS;
	a.sq_psn = 0;
	modify(q, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN, "RTS");
}

/* The generator's default address: ours with the last byte 254 (253 if that is ours). */
static void
default_peer(const uint8_t gid[16], uint8_t peer[16])
{
	memcpy(peer, gid, 16);
	peer[15] = gid[15] == 254 ? 253 : 254;
}

static void
query_port_info(struct sink *s, struct uroce_port_attr *pa)
{
	struct uroce_lg_desc *d = &s->desc;
	uint8_t gid0[16];
	unsigned int i;
	int rc;

	rc = uroce_query_port(s->ctx, s->ib_port, pa);
	if (rc != 0)
		die("query_port %u: %s", s->ib_port, strerror(-rc));
	if (s->gid_index >= pa->gid_tbl_len)
		die("--gid-index %u: port %u has %u GIDs", s->gid_index, s->ib_port,
		    pa->gid_tbl_len);
	rc = uroce_query_gid(s->ctx, s->ib_port, s->gid_index, d->gid);
	if (rc != 0)
		die("query_gid %u: %s", s->gid_index, strerror(-rc));
	if (d->gid[0] == 0xfe && (d->gid[1] & 0xc0) == 0x80)
		die("--gid-index %u is the link-local GID %s: frames from a generator need a "
		    "routable one (uroced: 1 is IPv4, 2 IPv6)", s->gid_index,
		    uroce_lg_gid_addr(d->gid, (char[64]){0}, 64));
	for (i = 0; i < pa->gid_tbl_len && d->n_gids < 16; i++) {
		uint8_t g[16];
		static const uint8_t zero[16];

		if (uroce_query_gid(s->ctx, s->ib_port, (int)i, g) != 0 || memcmp(g, zero, 16) == 0)
			continue;
		memcpy(d->gids[d->n_gids], g, 16);
		d->gid_idx[d->n_gids++] = (uint8_t)i;
	}
	/* No verbs call gives the port's MAC; uroced's GID 0 is the link-local
	 * address made from it (modified EUI-64), so the MAC is read from it. */
	if (s->has_mac) {
		memcpy(d->mac, s->mac, 6);
		strcpy(d->mac_source, "option");
	} else if (uroce_query_gid(s->ctx, s->ib_port, 0, gid0) == 0 &&
		   uroce_lg_mac_from_gid(gid0, d->mac) == 0) {
		strcpy(d->mac_source, "gid0");
	} else {
		die("GID 0 of port %u is not an EUI-64 link-local address, so the port's MAC is "
		    "unknown: give it with --mac (uroced's config 'mac' key, or "
		    "/uroce/port/info,N in dpdk-telemetry.py)", s->ib_port);
	}
	if (s->has_peer) {
		if (uroce_lg_gid_is_v4(s->peer_gid) != uroce_lg_gid_is_v4(d->gid))
			die("--peer-ip is %s but GID %u is %s: use one family", uroce_lg_gid_is_v4(
			    s->peer_gid) ? "IPv4" : "IPv6", s->gid_index,
			    uroce_lg_gid_is_v4(d->gid) ? "IPv4" : "IPv6");
		memcpy(d->peer_gid, s->peer_gid, 16);
	} else {
		default_peer(d->gid, d->peer_gid);
	}
}

static void
create_resources(struct sink *s)
{
	struct uroce_lg_desc *d = &s->desc;
	struct uroce_port_attr pa;
	uint8_t path_mtu;
	uint64_t total = 0, off = 0;
	unsigned int i;
	int cqe;

	query_port_info(s, &pa);
	path_mtu = (uint8_t)pa.active_mtu;
	if (s->want_mtu != 0 && s->want_mtu > path_mtu)
		die("--mtu %u: above the port's active MTU %u", 128u << s->want_mtu,
		    128u << path_mtu);
	if (s->want_mtu != 0)
		path_mtu = s->want_mtu;
	d->version = UROCE_LG_DESC_VERSION;
	strcpy(d->pattern, UROCE_LG_PATTERN);
	snprintf(d->socket, sizeof(d->socket), "%s", s->sock_path);
	d->port = s->ib_port;
	d->gid_index = s->gid_index;
	d->has_vlan = s->has_vlan;
	d->vlan = s->vlan;
	d->path_mtu = 128u << path_mtu;
	d->ud_max_payload = 128u << pa.active_mtu;
	d->size = s->size;
	if (s->n_uc > 0 && s->size > d->path_mtu)
		die("--size %u: above the UC path MTU %u (messages are single packets)", s->size,
		    d->path_mtu);
	if (s->n_ud > 0 && s->size > d->ud_max_payload)
		die("--size %u: above the largest UD payload %u", s->size, d->ud_max_payload);

	/* One buffer: the UC windows, then every QP's receive buffers. A receive
	 * buffer takes the largest message the QP accepts (UD: GRH and UD MTU;
	 * UC: the path MTU), so a generator may send any size up to that. */
	s->n_qps = s->n_uc + s->n_ud;
	for (i = 0; i < s->n_qps; i++) {
		struct sink_qp *q = &s->qps[i];

		q->d.type = i < s->n_uc ? UROCE_LG_UC : UROCE_LG_UD;
		q->d.recv_slots = s->slots;
		q->stride = q->d.type == UROCE_LG_UD ? align64(UROCE_GRH_LEN + d->ud_max_payload)
						     : align64(d->path_mtu);
		if (q->d.type == UROCE_LG_UC)
			total += align64((uint32_t)((uint64_t)s->slots * s->size));
		total += (uint64_t)s->slots * q->stride;
	}
	if (total > SINK_MEM_MAX)
		die("%u QPs x %u slots need %" PRIu64 " MB of buffers, more than %llu: use fewer "
		    "--slots", s->n_qps, s->slots, total >> 20, SINK_MEM_MAX >> 20);
	s->mem_len = (size_t)total;
	s->mem = uroce_alloc_buf(s->ctx, s->mem_len);
	if (s->mem == NULL)
		die("alloc_buf of %zu bytes: %s", s->mem_len, strerror(errno));
	s->pd = uroce_alloc_pd(s->ctx);
	if (s->pd == NULL)
		die("alloc_pd: %s", strerror(errno));
	s->mr = uroce_reg_mr(s->pd, s->mem, s->mem_len,
			     UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE);
	if (s->mr == NULL)
		die("reg_mr: %s", strerror(errno));
	/* One CQ holds a completion for every receive posted: it never overflows. */
	if ((uint64_t)s->n_qps * s->slots + 64 > UROCE_MAX_CQE)
		die("%u QPs x %u slots: more receives than one CQ of %u entries holds: use fewer "
		    "--slots", s->n_qps, s->slots, UROCE_MAX_CQE);
	cqe = (int)(s->n_qps * s->slots + 64);
	s->cq = uroce_create_cq(s->ctx, cqe, NULL);
	if (s->cq == NULL)
		die("create_cq of %d entries: %s", cqe, strerror(errno));
	if (s->cq_mod.cq_period != 0) {
		int rc = uroce_modify_cq(s->cq, &s->cq_mod);

		if (rc != 0)
			die("--cq-mod: modify_cq: %s", strerror(-rc));
	}
	for (i = 0; i < s->n_qps; i++) {
		struct sink_qp *q = &s->qps[i];

		if (q->d.type == UROCE_LG_UC) {
			q->win = s->mem + off;
			q->d.len = (uint64_t)s->slots * s->size;
			off += align64((uint32_t)q->d.len);
		}
	}
	for (i = 0; i < s->n_qps; i++) {
		struct sink_qp *q = &s->qps[i];
		struct uroce_qp_init_attr ia;

		q->rbuf = s->mem + off;
		off += (uint64_t)s->slots * q->stride;
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = s->cq;
		ia.recv_cq = s->cq;
		ia.qp_type = q->d.type == UROCE_LG_UC ? UROCE_QPT_UC : UROCE_QPT_UD;
		ia.cap.max_send_wr = 1;
		ia.cap.max_recv_wr = s->slots;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		/* In order, UC first: on a fresh daemon the QPNs are then the same
		 * from run to run, which --expect relies on. */
		q->qp = uroce_create_qp(s->pd, &ia);
		if (q->qp == NULL)
			die("create_qp (%s): %s", uroce_lg_qp_type_name(q->d.type),
			    strerror(errno));
		q->d.qpn = q->qp->qp_num;
		if (q->d.type == UROCE_LG_UC) {
			q->d.peer_qpn = s->peer_qpn + i;
			q->d.psn = s->psn;
			q->d.rkey = s->mr->rkey;
			q->d.va = (uint64_t)(uintptr_t)q->win;
			q->d.ops = UROCE_LG_OP_WRITE | UROCE_LG_OP_WRITE_IMM | UROCE_LG_OP_SEND;
		} else {
			q->d.peer_qpn = s->peer_qpn + i;
			q->d.qkey = s->qkey;
			q->d.ops = UROCE_LG_OP_SEND;
		}
		connect_qp(s, q, path_mtu);
		d->qps[d->n_qps++] = q->d;
	}
}

/* --expect: the QPs must be those an earlier run described. */
static void
check_expect(struct sink *s)
{
	const struct uroce_lg_desc *d = &s->desc;
	struct uroce_lg_desc *e = calloc(1, sizeof(*e));
	char err[256], a[64], b[64];
	unsigned int i, warned = 0;
	FILE *f;
	char *text;
	long len;
	int rc;

	if (e == NULL)
		die("out of memory");
	f = fopen(s->expect_path, "r");
	if (f == NULL)
		die("--expect %s: %s", s->expect_path, strerror(errno));
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
		die("--expect %s: cannot read it", s->expect_path);
	text = malloc((size_t)len + 1);
	if (text == NULL || fread(text, 1, (size_t)len, f) != (size_t)len)
		die("--expect %s: cannot read it", s->expect_path);
	fclose(f);
	rc = uroce_lg_desc_parse(text, (size_t)len, e, err, sizeof(err));
	free(text);
	if (rc != 0)
		die("--expect %s: %s", s->expect_path, err);
#define EXPECT(cond, fmt, ...) \
	do { \
		if (!(cond)) \
			die("--expect %s: " fmt, s->expect_path, ##__VA_ARGS__); \
	} while (0)
	EXPECT(memcmp(e->mac, d->mac, 6) == 0, "the port's MAC differs");
	EXPECT(memcmp(e->gid, d->gid, 16) == 0, "the GID was %s, now %s",
	       uroce_lg_gid_addr(e->gid, a, sizeof(a)), uroce_lg_gid_addr(d->gid, b, sizeof(b)));
	EXPECT(memcmp(e->peer_gid, d->peer_gid, 16) == 0, "the peer address differs");
	EXPECT(e->n_qps == d->n_qps, "%u QPs, now %u", e->n_qps, d->n_qps);
	for (i = 0; i < d->n_qps; i++) {
		const struct uroce_lg_qp *x = &e->qps[i], *y = &d->qps[i];

		EXPECT(x->type == y->type && x->qpn == y->qpn, "QP %u was %s %u, now %s %u (was "
		       "the daemon fresh, and this the first client to create QPs?)", i,
		       uroce_lg_qp_type_name(x->type), x->qpn, uroce_lg_qp_type_name(y->type),
		       y->qpn);
		EXPECT(x->peer_qpn == y->peer_qpn && x->psn == y->psn && x->qkey == y->qkey,
		       "QP %u: peer QPN, PSN or Q_Key differ (same options?)", y->qpn);
		if (y->type == UROCE_LG_UC && (x->rkey != y->rkey || x->va != y->va) &&
		    warned++ == 0)
			cli_err("warning: --expect %s: R_Key or VA of the UC windows differ (a new "
			    "daemon draws new keys): RDMA WRITE frames built from it will be "
			    "refused; SEND frames are fine", s->expect_path);
	}
#undef EXPECT
	free(e);
}

static void
write_json_file(struct sink *s)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", s->json_path, (int)getpid()) >=
	    (int)sizeof(tmp))
		die("--json %s: path too long", s->json_path);
	f = fopen(tmp, "w");
	if (f == NULL)
		die("--json %s: %s", tmp, strerror(errno));
	if (uroce_lg_desc_write(f, &s->desc) != 0 || fclose(f) != 0)
		die("--json %s: write failed", tmp);
	/* Readers waiting for the file never see half of it. */
	if (rename(tmp, s->json_path) != 0)
		die("--json: rename %s to %s: %s", tmp, s->json_path, strerror(errno));
}

/* ------------------------------------------------------------------------ */
/* Completions                                                               */
/* ------------------------------------------------------------------------ */


static void
bad_data(struct sink *s, struct sink_qp *q, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
bad_data(struct sink *s, struct sink_qp *q, const char *fmt, ...)
{
	va_list ap;

	q->own.verify_bad++;
	if (s->shown_bad++ >= SINK_SHOW)
		return;
	fprintf(stderr, PROG ": verify: %s QP %u: ", uroce_lg_qp_type_name(q->d.type), q->d.qpn);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* One completion: count it, check the data, give the slot back (into @p r). */
static void
on_cqe(struct sink *s, const struct uroce_wc *wc, struct repost *r)
{
	uint64_t qi = wc->wr_id >> 32, slot = wc->wr_id & 0xffffffffu;
	struct sink_qp *q;
	uint8_t *buf;
	uint32_t len, off;

	if (qi >= s->n_qps || slot >= s->slots) {
		cli_err("completion with a wr_id the sink never posted (%#" PRIx64 ")", wc->wr_id);
		return;
	}
	q = &s->qps[qi];
	q->own.cqes++;
	if (wc->status != UROCE_WC_SUCCESS) {
		q->own.errors++;
		if (wc->status == UROCE_WC_WR_FLUSH_ERR)
			q->flushed = true;
		if (s->shown_err++ < SINK_SHOW)
			cli_err("completion error %s (%u) on %s QP %u", uroce_wc_status_name(wc->status),
			    wc->status, uroce_lg_qp_type_name(q->d.type), q->d.qpn);
		/* A flushed QP is in ERR: posting again would only flush again. */
		if (!q->flushed)
			repost_add(s, r, q, (uint32_t)slot);
		return;
	}
	buf = q->rbuf + slot * q->stride;
	switch (wc->opcode) {
	case UROCE_WC_RECV:
		len = wc->byte_len;
		if (q->d.type == UROCE_LG_UD) {
			/* IBA 11.4.1.2: a UD receive starts with 40 bytes of GRH. */
			if (len < UROCE_GRH_LEN) {
				bad_data(s, q, "UD receive of %u bytes, less than the GRH", len);
				break;
			}
			len -= UROCE_GRH_LEN;
			buf += UROCE_GRH_LEN;
		}
		q->own.bytes += len;
		if (s->verify && len > 0) {
			uint32_t tag, at = uroce_lg_send_check(buf, q->d.qpn, len, &tag);

			if (at != len)
				bad_data(s, q, "SEND of %u bytes (tag %u) differs at byte %u", len,
					 tag, at);
		}
		break;
	case UROCE_WC_RECV_RDMA_WITH_IMM:
		/* The immediate is the window offset the WRITE went to. */
		len = wc->byte_len;
		off = wc->imm_data;
		q->own.bytes += len;
		q->cqe_write_imm++;
		if (!s->verify || q->win == NULL)
			break;
		if ((uint64_t)off + len > q->d.len) {
			bad_data(s, q, "WRITE with immediate %u, %u bytes: outside the %" PRIu64
				 "-byte window", off, len, q->d.len);
			break;
		}
		if (uroce_lg_write_check(q->win + off, q->d.qpn, off, len) != len)
			bad_data(s, q, "WRITE with immediate to offset %u, %u bytes: differs at "
				 "offset %" PRIu64, off, len,
				 off + uroce_lg_write_check(q->win + off, q->d.qpn, off, len));
		break;
	default:
		bad_data(s, q, "unexpected completion opcode %u", wc->opcode);
		break;
	}
	repost_add(s, r, q, (uint32_t)slot);
}

/* Take completions until the CQ is empty or SINK_DRAIN_MAX were taken. */
static unsigned int
drain(struct sink *s)
{
	struct uroce_wc wc[SINK_POLL_BATCH];
	unsigned int got = 0;
	int n, i;

	do {
		n = uroce_poll_cq(s->cq, SINK_POLL_BATCH, wc);
		if (n == -ENOTCONN)
			die("the uroce daemon went away");
		if (n < 0)
			die("poll_cq: %s", strerror(-n));
		for (i = 0; i < n; i++)
			on_cqe(s, &wc[i], &s->repost);
		repost_flush(s, &s->repost);
		got += (unsigned int)n;
	} while (n == SINK_POLL_BATCH && got < SINK_DRAIN_MAX);
	return got;
}

/* ------------------------------------------------------------------------ */
/* Counting                                                                  */
/* ------------------------------------------------------------------------ */

static uint64_t
dc(const struct sink_qp *q, enum sink_cnt c)
{
	return q->cur[c] >= q->base[c] ? q->cur[c] - q->base[c] : 0;
}

/* One QP's totals since the start: the daemon's counters and ours. */
static struct uroce_lg_counts
qp_counts(const struct sink *s, const struct sink_qp *q)
{
	struct uroce_lg_counts c = q->own;
	uint64_t refused = dc(q, SC_ACCESS) + dc(q, SC_INVALID) + dc(q, SC_LENGTH) + dc(q, SC_PROT);
	uint64_t silent = dc(q, SC_SILENT), writes_noimm;

	/* Accepted packets are messages: every message is a single packet. */
	c.msgs = dc(q, SC_WRITE) + dc(q, SC_SEND);
	/* A WRITE without immediate has no CQE: its bytes are the size the sink
	 * was set up for (the window's slot size). */
	writes_noimm = dc(q, SC_WRITE) > q->cqe_write_imm ? dc(q, SC_WRITE) - q->cqe_write_imm : 0;
	c.bytes += writes_noimm * s->size;
	/* rx_bad_src_addr: a UC packet from an address other than the QP's
	 * peer (its --peer-ip), dropped by daemons that check the source. */
	c.errors += refused + dc(q, SC_QKEY) + dc(q, SC_BAD_STATE) + dc(q, SC_BAD_SERVICE) +
		    dc(q, SC_BAD_PKEY) + dc(q, SC_BAD_SRC);
	/* The responder counts a UC message it refuses (IBA 9.8.3: no NAK) once
	 * as the error and once as a silent drop; what remains are messages
	 * dropped for want of a receive WQE or lost in a PSN gap. */
	c.dropped = dc(q, SC_UD_DROP) + (silent > refused ? silent - refused : 0);
	c.resyncs = dc(q, SC_OOS);
	c.verify_bad += q->win_bad_max;
	return c;
}

static struct uroce_lg_counts
all_counts(const struct sink *s)
{
	struct uroce_lg_counts t;
	unsigned int i;

	memset(&t, 0, sizeof(t));
	for (i = 0; i < s->n_qps; i++) {
		struct uroce_lg_counts c = qp_counts(s, &s->qps[i]);

		uroce_lg_counts_add(&t, &c);
	}
	return t;
}

static void
scan_windows(struct sink *s)
{
	unsigned int i;

	if (!s->verify)
		return;
	for (i = 0; i < s->n_qps; i++) {
		struct sink_qp *q = &s->qps[i];

		if (q->win == NULL)
			continue;
		uroce_lg_write_scan(q->win, q->d.qpn, q->d.len, &q->scan);
		if (q->scan.bad <= q->win_bad_max)
			continue;
		if (q->win_bad_max == 0 && s->shown_bad++ < SINK_SHOW)
			cli_err("verify: UC QP %u: %" PRIu64 " window bytes hold a wrong value, the "
			    "first at offset %" PRIu64, q->d.qpn, q->scan.bad, q->scan.first_bad);
		q->win_bad_max = q->scan.bad;
	}
}

static void
tick(struct sink *s, double t, double dt)
{
	struct uroce_lg_counts tot, delta;
	double mps;

	read_counters(s, false);
	scan_windows(s);
	tot = all_counts(s);
	delta = uroce_lg_counts_sub(&tot, &s->last_total);
	s->last_total = tot;
	uroce_lg_rate_write(stdout, "sink", t, dt, &delta, &tot);
	mps = dt > 0 ? (double)delta.msgs / dt : 0;
	if (mps > s->peak_msgs_per_s)
		s->peak_msgs_per_s = mps;
	if (!s->quiet)
		fprintf(stderr, PROG ": %7.1f s  %10.0f msg/s  %8.2f MB/s  cqe %9.0f/s  errors %"
			PRIu64 "  dropped %" PRIu64 "  resyncs %" PRIu64 "  verify_bad %" PRIu64
			"\n", t, mps, dt > 0 ? (double)delta.bytes / dt / 1e6 : 0,
			dt > 0 ? (double)delta.cqes / dt : 0, tot.errors, tot.dropped, tot.resyncs,
			tot.verify_bad);
}

static void
put_json_str(FILE *f, const char *str)
{
	fputc('"', f);
	for (; *str; str++) {
		if (*str == '"' || *str == '\\')
			fputc('\\', f);
		if ((unsigned char)*str >= 0x20)
			fputc(*str, f);
	}
	fputc('"', f);
}

/* The last line: totals, per QP with the daemon's counters, and the verdict. */
static bool
summary(struct sink *s, double t)
{
	struct uroce_lg_counts tot = all_counts(s);
	bool ok = tot.errors == 0 && tot.verify_bad == 0;
	uint64_t bad_qpn = s->bad_qpn >= s->bad_qpn_base ? s->bad_qpn - s->bad_qpn_base : 0;
	unsigned int i, k;

	printf("{\"uroce_sink_summary\":1,\"t\":%.3f,\"verify\":%s,\"ok\":%s,\"total\":{", t,
	       s->verify ? "true" : "false", ok ? "true" : "false");
	printf("\"msgs\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"cqes\":%" PRIu64 ",\"errors\":%"
	       PRIu64 ",\"dropped\":%" PRIu64 ",\"resyncs\":%" PRIu64 ",\"verify_bad\":%" PRIu64
	       "},\"msgs_per_s\":%.1f,\"peak_msgs_per_s\":%.1f,\"rx_bad_qpn\":%" PRIu64
	       ",\"qps\":[", tot.msgs, tot.bytes, tot.cqes, tot.errors, tot.dropped, tot.resyncs,
	       tot.verify_bad, t > 0 ? (double)tot.msgs / t : 0, s->peak_msgs_per_s, bad_qpn);
	for (i = 0; i < s->n_qps; i++) {
		const struct sink_qp *q = &s->qps[i];
		struct uroce_lg_counts c = qp_counts(s, q);

		printf("%s{\"type\":\"%s\",\"qpn\":%u,\"msgs\":%" PRIu64 ",\"bytes\":%" PRIu64
		       ",\"cqes\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"dropped\":%" PRIu64
		       ",\"resyncs\":%" PRIu64 ",\"verify_bad\":%" PRIu64, i ? "," : "",
		       uroce_lg_qp_type_name(q->d.type), q->d.qpn, c.msgs, c.bytes, c.cqes,
		       c.errors, c.dropped, c.resyncs, c.verify_bad);
		if (q->win != NULL && s->verify)
			printf(",\"window\":{\"written\":%" PRIu64 ",\"unwritten\":%" PRIu64
			       ",\"bad\":%" PRIu64 ",\"bad_max\":%" PRIu64 "}", q->scan.written,
			       q->scan.unwritten, q->scan.bad, q->win_bad_max);
		printf(",\"counters\":{");
		for (k = 0; k < SC_MAX; k++) {
			if (s->cnt_idx[k] < 0)
				continue; /* an optional counter this daemon does not have */
			printf("%s", k ? "," : "");
			put_json_str(stdout, sink_cnt_names[k]);
			printf(":%" PRIu64, dc(q, (enum sink_cnt)k));
		}
		printf("}}");
	}
	printf("]}\n");
	fflush(stdout);
	if (!s->quiet)
		cli_err("%.1f s: %" PRIu64 " messages (%.0f/s, peak %.0f/s), %" PRIu64 " bytes, %"
		    PRIu64 " errors, %" PRIu64 " dropped, %" PRIu64 " resyncs, %" PRIu64
		    " bad%s: %s", t, tot.msgs, t > 0 ? (double)tot.msgs / t : 0,
		    s->peak_msgs_per_s, tot.bytes, tot.errors, tot.dropped, tot.resyncs,
		    tot.verify_bad,
		    s->verify ? "" : " (not verifying)", ok ? "OK" : "FAILED");
	return ok;
}

static void
close_resources(struct sink *s)
{
	unsigned int i;

	for (i = 0; i < s->n_qps; i++)
		uroce_destroy_qp(s->qps[i].qp);
	uroce_destroy_cq(s->cq);
	uroce_dereg_mr(s->mr);
	uroce_free_buf(s->ctx, s->mem);
	uroce_dealloc_pd(s->pd);
	uroce_close_device(s->ctx);
}

/* ------------------------------------------------------------------------ */
/* Main loop                                                                 */
/* ------------------------------------------------------------------------ */

static void
run(struct sink *s)
{
	double next = s->t0 + s->interval, last = s->t0, end = s->t0 + s->duration;

	while (!sink_stop) {
		double now = now_s();
		int rc, ms;

		if (now >= next) {
			tick(s, now - s->t0, now - last);
			last = now;
			next += s->interval;
			if (next <= now)
				next = now + s->interval; /* fell behind: do not burst */
			continue;
		}
		if (s->duration > 0 && now >= end)
			break;
		if (drain(s) > 0 || s->busy)
			continue;
		/* Arm, then look once more (a completion may have come in between),
		 * then sleep on the CQ's event until the next tick. */
		rc = uroce_req_notify_cq(s->cq, false);
		if (rc != 0)
			die("req_notify_cq: %s", strerror(-rc));
		if (drain(s) > 0)
			continue;
		ms = (int)((UROCE_MIN(next, s->duration > 0 ? end : next) - now) * 1000.0) + 1;
		rc = uroce_get_cq_event(s->cq, ms);
		if (rc == -ENOTCONN)
			die("the uroce daemon went away");
		if (rc < 0 && rc != -EINTR)
			die("get_cq_event: %s", strerror(-rc));
	}
}

int
sink_main(int argc, char **argv)
{
	struct sink *s = calloc(1, sizeof(*s));
	struct sigaction sa;
	bool ok;
	double t;

	cli_init(PROG, usage);
	if (s == NULL)
		die("out of memory");
	parse_args(s, argc, argv);
	if (s->sock_path == NULL)
		s->sock_path = getenv("UROCE_SOCKET");
	if (s->sock_path == NULL || s->sock_path[0] == '\0')
		s->sock_path = UROCE_DEFAULT_SOCKET;
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* No SA_RESTART: a signal must wake the wait on the CQ event. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	s->ctx = uroce_open_device(s->sock_path);
	if (s->ctx == NULL)
		die("cannot reach the uroce daemon at %s: %s", s->sock_path, strerror(errno));
	create_resources(s);
	open_ctl(s, s->sock_path);
	if (s->expect_path != NULL)
		check_expect(s);
	/* Counting starts here: what arrived while the QPs were being set up
	 * (frames of a replay that started first) is not part of the run. */
	drain(s);
	read_counters(s, true);
	memset(&s->last_total, 0, sizeof(s->last_total));
	if (s->json_path != NULL)
		write_json_file(s);
	if (uroce_lg_desc_write(stdout, &s->desc) != 0)
		die("writing the description: %s", strerror(EIO));
	if (!s->quiet)
		cli_err("ready: %u UC and %u UD QPs on %s, %u-byte messages%s; SIGINT or SIGTERM "
		    "stops", s->n_uc, s->n_ud, s->sock_path, s->size,
		    s->verify ? ", verifying " UROCE_LG_PATTERN : "");
	s->t0 = now_s();
	run(s);
	t = now_s() - s->t0;
	drain(s);
	read_counters(s, false);
	scan_windows(s);
	ok = summary(s, t);
	uroce_shm_client_close(&s->ctl);
	close_resources(s);
	free(s);
	return ok ? 0 : 1;
}
