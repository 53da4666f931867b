/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * uroce-ctl gen: the one command that runs the lcore load generator
 * (doc/loadgen.md, "The lcore generator"). It asks the daemon at --to for a
 * target (QPs and memory that answer), the daemon at --from for an
 * initiator (QPs that post), joins their QPs pairwise (GEN_QPS and
 * GEN_CONNECT: QPNs, first PSNs, GIDs, the target's rkey and addresses),
 * starts the initiator, and then once per interval reads both generators
 * (GEN_STATS) and both workers' cycle accounting (LIST_WORKERS) and prints a
 * rate record (JSON, stdout) and a line for people (stderr). At the end it
 * checks the target's memory (with --verify), destroys both generators and
 * prints a summary (JSON). Every option is checked before a daemon is
 * asked for anything. The generators belong to this command's control
 * connections: if it dies, the daemons reclaim them.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uroce_common.h"
#include "uroce_loadgen.h"
#include "uroce_shm_gen.h"

#include "ctl.h"
#include "json.h"

#define GEN_DEFAULT_QPS 4
#define GEN_DEFAULT_WINDOW 32
/* How long GEN_START waits for the initiator's port to resolve the target
 * (three times uroced's default neigh_tries x neigh_retry_ms). */
#define GEN_RESOLVE_WAIT_S 10
#define GEN_DEFAULT_SECONDS 10.0
/* Without a completion for this long while WRs are outstanding: stalled. */
#define GEN_STALL_S 10.0

static volatile sig_atomic_t gen_stop;

static void
on_signal(int sig)
{
	gen_stop = sig;
}

struct gopts {
	const char *from;
	const char *to;
	uint32_t qps;
	struct uroce_lg_mix mix;
	char mix_text[512];
	uint32_t window;
	uint64_t rate;
	double seconds;          /* 0: none */
	uint64_t count;          /* 0: none */
	bool verify;
	uint32_t gid_index;
	uint32_t mtu;            /* bytes, 0: the smaller active MTU */
	uint32_t qp_timeout;     /* local ACK timeout exponent, 0: the daemon's 14 */
	uint32_t worker;
	uint32_t target_worker;
	uint32_t interval_ms;
	uint64_t seed;
	const char *json_path;
	bool quiet;
};

/* One daemon and its generator. */
struct side {
	const char *name;        /* "initiator" or "target" */
	const char *path;
	struct uroce_shm_client c;
	bool open;
	bool alive;              /* answered the last request */
	uint32_t worker;
	uint32_t active_mtu;     /* enum uroce_mtu */
	struct uroce_shm_msg_gen_create_resp cr;
	bool created;
	struct uroce_shm_gen_qp *qps;
	struct uroce_shm_msg_gen_stats_resp st;
	struct uroce_shm_worker_info wk;   /* the worker's accounting, last read */
	bool have_wk;
};

static void
gen_usage(FILE *out)
{
	fprintf(out,
		"usage: uroce-ctl gen --from SOCKET --to SOCKET [options]\n"
		"  Runs the lcore load generator: RC QPs on a worker of the daemon at --from\n"
		"  post to QPs on a worker of the daemon at --to (see doc/loadgen.md).\n"
		"  -f, --from PATH       the sending daemon's socket (default: $UROCE_SOCKET, else %s)\n"
		"  -t, --to PATH         the answering daemon's socket (default: the same daemon)\n"
		"      --qps N           RC QPs (default %u, at most %u)\n"
		"      --mix LIST        OP[:SIZE[:WEIGHT]],...; OP: write read send fadd cswap atomic\n"
		"                        (default write:64); e.g. write:64:70,read:1024:20,fadd:8:10\n"
		"      --ops LIST        OP[:WEIGHT],... with --sizes: operations and sizes chosen\n"
		"      --sizes LIST      SIZE[:WEIGHT],... independently (e.g. 64:70,1K:20,64K:10)\n"
		"  -w, --window N        work requests outstanding per QP (default %u, 1..4096)\n"
		"  -r, --rate R          messages per second over all QPs (k, M suffixes; default: no limit)\n"
		"  -D, --seconds S       stop posting after S seconds (default %.0f unless --count)\n"
		"  -n, --count N         stop posting after N messages (k, M suffixes)\n"
		"      --verify          check READ data, atomic results, SEND payloads and the\n"
		"                        target's memory at the end\n"
		"  -x, --gid-index I     GID index of both daemons (default 1: IPv4)\n"
		"  -m, --mtu BYTES       path MTU 256..4096 (default: the smaller active MTU)\n"
		"  -u, --qp-timeout T    local ACK timeout 4.096 us * 2^T, 1..31 (default 14: 67 ms);\n"
		"                        a silent target fails the run after 8 timeouts\n"
		"      --worker N        the initiator's worker (default 0)\n"
		"      --target-worker N the target's worker (default 0)\n"
		"  -i, --interval MS     milliseconds between rate records (default 1000)\n"
		"      --seed N          order of the mix (default 1)\n"
		"      --json FILE       also write the summary to FILE\n"
		"  -q, --quiet           no progress lines on stderr\n"
		"Output: a rate record (JSON) per interval on stdout, then a summary (JSON).\n"
		"Exit: 0 every message completed (and checked), 1 errors or bad data,\n"
		"      2 a bad option or a setup failure. SIGINT/SIGTERM stop it cleanly.\n",
		uroce_shm_socket_path(NULL), GEN_DEFAULT_QPS, UROCE_SHM_GEN_MAX_QPS, GEN_DEFAULT_WINDOW,
		GEN_DEFAULT_SECONDS);
}

static int
bad_opt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
bad_opt(const char *fmt, ...)
{
	va_list ap;

	fputs("uroce-ctl gen: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (uroce-ctl gen --help)\n", stderr);
	return CTL_EXIT_ERROR;
}

/* A whole number within [lo, hi]. */
static int
parse_u32(const char *opt, const char *s, uint32_t lo, uint32_t hi, uint32_t *v)
{
	uint64_t x;

	if (uroce_lg_parse_count(s, &x) != 0 || x < lo || x > hi)
		return bad_opt("%s '%s': expected a whole number %u..%u", opt, s, lo, hi);
	*v = (uint32_t)x;
	return 0;
}

enum {
	OPT_QPS = 256,
	OPT_MIX,
	OPT_OPS,
	OPT_SIZES,
	OPT_VERIFY,
	OPT_WORKER,
	OPT_TWORKER,
	OPT_SEED,
	OPT_JSON,
};

/* @return -1 to go on, else the exit code. */
static int
gen_parse(int argc, char **argv, struct gopts *o)
{
	static const struct option lopts[] = {
		{"from", required_argument, NULL, 'f'},
		{"to", required_argument, NULL, 't'},
		{"qps", required_argument, NULL, OPT_QPS},
		{"mix", required_argument, NULL, OPT_MIX},
		{"ops", required_argument, NULL, OPT_OPS},
		{"sizes", required_argument, NULL, OPT_SIZES},
		{"window", required_argument, NULL, 'w'},
		{"rate", required_argument, NULL, 'r'},
		{"seconds", required_argument, NULL, 'D'},
		{"count", required_argument, NULL, 'n'},
		{"verify", no_argument, NULL, OPT_VERIFY},
		{"gid-index", required_argument, NULL, 'x'},
		{"mtu", required_argument, NULL, 'm'},
		{"qp-timeout", required_argument, NULL, 'u'},
		{"worker", required_argument, NULL, OPT_WORKER},
		{"target-worker", required_argument, NULL, OPT_TWORKER},
		{"interval", required_argument, NULL, 'i'},
		{"seed", required_argument, NULL, OPT_SEED},
		{"json", required_argument, NULL, OPT_JSON},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *mix = NULL, *ops = NULL, *sizes = NULL;
	char err[256];
	uint32_t mtu = 0;
	uint64_t v;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->qps = GEN_DEFAULT_QPS;
	o->window = GEN_DEFAULT_WINDOW;
	o->gid_index = 1;
	o->interval_ms = 1000;
	o->seed = 1;
	o->seconds = -1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:t:w:r:D:n:x:m:u:i:qh", lopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->from = optarg;
			break;
		case 't':
			o->to = optarg;
			break;
		case OPT_QPS:
			if (parse_u32("--qps", optarg, 1, UROCE_SHM_GEN_MAX_QPS, &o->qps))
				return CTL_EXIT_ERROR;
			break;
		case OPT_MIX:
			mix = optarg;
			break;
		case OPT_OPS:
			ops = optarg;
			break;
		case OPT_SIZES:
			sizes = optarg;
			break;
		case 'w':
			if (parse_u32("--window", optarg, 1, UROCE_MAX_QP_WR, &o->window))
				return CTL_EXIT_ERROR;
			break;
		case 'r':
			if (uroce_lg_parse_count(optarg, &o->rate) != 0 || o->rate == 0 ||
			    o->rate > 1000000000ull)
				return bad_opt("--rate '%s': expected messages per second, 1..1G "
					       "(e.g. 500k, 2M)", optarg);
			break;
		case 'D':
			errno = 0;
			o->seconds = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' || !isfinite(o->seconds) ||
			    o->seconds < 0.001 || o->seconds > 86400)
				return bad_opt("--seconds '%s': expected seconds, 0.001..86400",
					       optarg);
			break;
		case 'n':
			if (uroce_lg_parse_count(optarg, &o->count) != 0 || o->count == 0)
				return bad_opt("--count '%s': expected a number of messages, at "
					       "least 1 (k, M, G suffixes)", optarg);
			break;
		case OPT_VERIFY:
			o->verify = true;
			break;
		case 'x':
			if (parse_u32("--gid-index", optarg, 0, 15, &o->gid_index))
				return CTL_EXIT_ERROR;
			break;
		case 'm':
			if (parse_u32("--mtu", optarg, 256, 4096, &mtu))
				return CTL_EXIT_ERROR;
			if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096)
				return bad_opt("--mtu %u: a path MTU is 256, 512, 1024, 2048 or 4096",
					       mtu);
			o->mtu = mtu;
			break;
		case 'u':
			if (parse_u32("--qp-timeout", optarg, 1, 31, &o->qp_timeout))
				return CTL_EXIT_ERROR;
			break;
		case OPT_WORKER:
			if (parse_u32("--worker", optarg, 0, 15, &o->worker))
				return CTL_EXIT_ERROR;
			break;
		case OPT_TWORKER:
			if (parse_u32("--target-worker", optarg, 0, 15, &o->target_worker))
				return CTL_EXIT_ERROR;
			break;
		case 'i':
			if (parse_u32("--interval", optarg, 100, 60000, &o->interval_ms))
				return CTL_EXIT_ERROR;
			break;
		case OPT_SEED:
			if (uroce_lg_parse_count(optarg, &v) != 0)
				return bad_opt("--seed '%s': expected a whole number", optarg);
			o->seed = v;
			break;
		case OPT_JSON:
			o->json_path = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			gen_usage(stdout);
			return CTL_EXIT_OK;
		case ':':
			return bad_opt("option '%s' needs a value", argv[optind - 1]);
		default:
			return bad_opt("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc)
		return bad_opt("unexpected argument '%s'", argv[optind]);
	if (mix != NULL && (ops != NULL || sizes != NULL))
		return bad_opt("--mix is the whole mix: give it, or --ops with --sizes, not both");
	if (sizes != NULL && ops == NULL)
		return bad_opt("--sizes needs --ops (or use --mix OP:SIZE:WEIGHT,...)");
	if (ops != NULL) {
		if (uroce_lg_mix_product(ops, sizes, &o->mix, err, sizeof(err)) != 0)
			return bad_opt("--ops/--sizes: %s", err);
		snprintf(o->mix_text, sizeof(o->mix_text), "--ops %s --sizes %s", ops,
			 sizes != NULL ? sizes : "64");
	} else {
		if (mix == NULL)
			mix = "write:64";
		if (uroce_lg_mix_parse(mix, &o->mix, err, sizeof(err)) != 0)
			return bad_opt("--mix: %s", err);
		snprintf(o->mix_text, sizeof(o->mix_text), "%s", mix);
	}
	if (o->seconds < 0)
		o->seconds = o->count != 0 ? 0 : GEN_DEFAULT_SECONDS;
	o->from = uroce_shm_socket_path(o->from);
	if (o->to == NULL)
		o->to = o->from;
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Talking to the daemons                                                    */
/* ------------------------------------------------------------------------ */


static const char *
state_name(uint32_t st)
{
	static const char *const n[] = {"created", "ready", "running", "draining", "done",
					"failed"};

	return st < sizeof(n) / sizeof(n[0]) ? n[st] : "?";
}

static uint32_t
mtu_enum(uint32_t bytes)
{
	uint32_t e = 1;

	while ((256u << (e - 1)) < bytes)
		e++;
	return e;
}

/* Say why a request to @p s failed. @return CTL_EXIT_ERROR. */
static int
call_err(struct side *s, const char *what, int rc)
{
	if (rc == -EOPNOTSUPP || (rc == -ECONNRESET && s->c.daemon_minor < 3))
		ctl_err("%s: the %s daemon at %s does not know the load generator (it speaks "
			"shm ABI 1.%u; the generator is 1.3): use the uroced of this release",
			what, s->name, s->path, s->c.daemon_minor);
	else if (rc == -ECONNRESET)
		ctl_err("%s: the %s daemon at %s closed the connection (did it stop?)", what,
			s->name, s->path);
	else if (rc == -E2BIG)
		ctl_err("%s on the %s daemon: the generator would need more than %llu MiB of "
			"memory there (QPs x window x largest size with --verify, QPs x window "
			"size for each QP's memory): lower --qps, --window or the sizes", what,
			s->name, (unsigned long long)(UROCE_SHM_GEN_MAX_MEM >> 20));
	else if (rc == -EAGAIN || rc == -EHOSTUNREACH)
		ctl_err("%s on the %s daemon: its port has not resolved the target's MAC in %d s: "
			"does the target answer ARP or neighbour solicitations there? "
			"(dpdk-telemetry.py: /uroce/port/neigh,0)", what, s->name,
			GEN_RESOLVE_WAIT_S);
	else if (rc == -ENOMEM)
		ctl_err("%s on the %s daemon: out of QPs or memory, or over its [limits] "
			"gen_mem_mb, the memory all generators may hold together (%s)", what,
			s->name, strerror(-rc));
	else
		ctl_err("%s on the %s daemon at %s: %s", what, s->name, s->path, strerror(-rc));
	return CTL_EXIT_ERROR;
}

static int
side_open(struct side *s)
{
	struct uroce_shm_msg_query_port_req pq;
	struct uroce_shm_msg_query_port_resp pr;
	int rc = uroce_shm_client_open(&s->c, s->path, "uroce-ctl");

	if (rc != 0) {
		ctl_err("cannot connect to the %s daemon at %s (%s): %s (%s)", s->name, s->path,
			strcmp(s->name, "target") == 0 ? "--to" : "--from",
			strerror(-rc), rc == -ENOENT || rc == -ECONNREFUSED ?
			"is uroced running there? Give its control socket" : uroce_shm_client_advice(rc));
		return CTL_EXIT_ERROR;
	}
	s->open = true;
	s->alive = true;
	if (s->c.daemon_minor < 3)
		return call_err(s, "HELLO", -EOPNOTSUPP);
	memset(&pq, 0, sizeof(pq));
	pq.port_num = 1;
	rc = uroce_shm_client_request(&s->c, UROCE_SHM_MSG_QUERY_PORT, &pq, sizeof(pq), &pr, sizeof(pr));
	if (rc != 0)
		return call_err(s, "QUERY_PORT", rc);
	s->active_mtu = pr.active_mtu;
	return 0;
}

/* Read worker @p s->worker's accounting. @return 0 or -errno. */
static int
side_worker(struct side *s)
{
	struct uroce_shm_msg_list_workers_resp r;
	struct uroce_shm_msg_list_req q;
	int rc;

	memset(&q, 0, sizeof(q));
	q.start = s->worker;
	rc = uroce_shm_client_request(&s->c, UROCE_SHM_MSG_LIST_WORKERS, &q, sizeof(q), &r, sizeof(r));
	if (rc != 0)
		return rc;
	if (r.page.count == 0 || r.page.count > UROCE_SHM_LIST_WORKERS_MAX ||
	    r.w[0].worker != s->worker)
		return -ENOENT;
	s->wk = r.w[0];
	s->have_wk = true;
	return 0;
}

/* The option's worker and GID exist on @p s. @return -1 to go on, else the exit code. */
static int
side_check(struct side *s, const struct gopts *o, const char *wopt)
{
	struct uroce_shm_msg_query_gid_req gq;
	struct uroce_shm_msg_query_gid_resp gr;
	int rc;

	rc = side_worker(s);
	if (rc == -ENOENT) {
		ctl_err("%s %u: the %s daemon at %s has no worker %u (uroce-ctl workers -s %s)",
			wopt, s->worker, s->name, s->path, s->worker, s->path);
		return CTL_EXIT_ERROR;
	}
	if (rc != 0)
		return call_err(s, "LIST_WORKERS", rc);
	memset(&gq, 0, sizeof(gq));
	gq.port_num = 1;
	gq.index = o->gid_index;
	rc = uroce_shm_client_request(&s->c, UROCE_SHM_MSG_QUERY_GID, &gq, sizeof(gq), &gr, sizeof(gr));
	if (rc == 0) {
		static const uint8_t zero[16];

		if (memcmp(gr.gid, zero, 16) == 0)
			rc = -EINVAL;
	}
	if (rc == -EINVAL) {
		ctl_err("--gid-index %u: the %s daemon at %s has no GID at index %u "
			"(uroce-ctl gids -s %s)", o->gid_index, s->name, s->path, o->gid_index,
			s->path);
		return CTL_EXIT_ERROR;
	}
	if (rc != 0)
		return call_err(s, "QUERY_GID", rc);
	return -1;
}

static int
side_create(struct side *s, const struct gopts *o, uint32_t role, uint32_t depth, uint32_t flags,
	    uint32_t max_size)
{
	struct uroce_shm_msg_gen_create_req q;
	int rc;

	memset(&q, 0, sizeof(q));
	q.role = role;
	q.n_qps = o->qps;
	q.worker = s->worker;
	q.gid_index = o->gid_index;
	q.depth = depth;
	q.flags = flags;
	q.max_size = max_size;
	rc = uroce_shm_client_request(&s->c, UROCE_SHM_MSG_GEN_CREATE, &q, sizeof(q), &s->cr, sizeof(s->cr));
	if (rc != 0)
		return call_err(s, "GEN_CREATE", rc);
	s->created = true;
	if (s->cr.n_qps != o->qps)
		return call_err(s, "GEN_CREATE", -EPROTO);
	return 0;
}

static int
side_qps(struct side *s)
{
	struct uroce_shm_msg_gen_qps_resp r;
	struct uroce_shm_msg_gen_qps_req q;
	uint32_t n = 0, i;
	int rc;

	s->qps = calloc(s->cr.n_qps, sizeof(*s->qps));
	if (s->qps == NULL)
		return call_err(s, "GEN_QPS", -ENOMEM);
	memset(&q, 0, sizeof(q));
	q.gen_id = s->cr.gen_id;
	do {
		rc = uroce_shm_client_request(&s->c, UROCE_SHM_MSG_GEN_QPS, &q, sizeof(q), &r, sizeof(r));
		if (rc != 0)
			return call_err(s, "GEN_QPS", rc);
		if (r.page.count > UROCE_SHM_GEN_QPS_MAX || r.page.count > s->cr.n_qps - n ||
		    ((r.page.flags & UROCE_SHM_LIST_F_MORE) && r.page.next <= q.start))
			return call_err(s, "GEN_QPS", -EPROTO);
		for (i = 0; i < r.page.count; i++)
			s->qps[n++] = r.q[i];
		q.start = r.page.next;
	} while (r.page.flags & UROCE_SHM_LIST_F_MORE);
	if (n != s->cr.n_qps)
		return call_err(s, "GEN_QPS", -EPROTO);
	return 0;
}

/* Join @p s's QPs to @p peer's. */
static int
side_connect(struct side *s, const struct side *peer, uint32_t path_mtu, uint32_t timeout)
{
	struct uroce_shm_msg_gen_connect_resp r;
	struct uroce_shm_msg_gen_connect_req q;
	uint32_t first, i;
	int rc;

	for (first = 0; first < s->cr.n_qps; first += UROCE_SHM_GEN_QPS_MAX) {
		memset(&q, 0, sizeof(q));
		q.gen_id = s->cr.gen_id;
		q.first = first;
		q.count = UROCE_MIN(UROCE_SHM_GEN_QPS_MAX, s->cr.n_qps - first);
		q.path_mtu = path_mtu;
		q.timeout = timeout;
		memcpy(q.peer_gid, peer->cr.gid, 16);
		q.peer_rkey = peer->cr.rkey;
		q.peer_win_len = peer->cr.win_len;
		q.peer_va = peer->cr.va;
		q.peer_atomic_off = peer->cr.atomic_off;
		for (i = 0; i < q.count; i++)
			q.q[i] = peer->qps[first + i];
		rc = uroce_shm_client_request(&s->c, UROCE_SHM_MSG_GEN_CONNECT, &q, sizeof(q), &r, sizeof(r));
		if (rc != 0)
			return call_err(s, "GEN_CONNECT", rc);
	}
	return 0;
}

static int
side_stats(struct side *s, uint32_t flags)
{
	struct uroce_shm_msg_gen_stats_req q;
	int rc;

	if (!s->alive)
		return -ECONNRESET;
	memset(&q, 0, sizeof(q));
	q.gen_id = s->cr.gen_id;
	q.flags = flags;
	rc = uroce_shm_client_request(&s->c, UROCE_SHM_MSG_GEN_STATS, &q, sizeof(q), &s->st, sizeof(s->st));
	if (rc == -ECONNRESET || rc == -ETIMEDOUT || rc == -EPIPE)
		s->alive = false;
	return rc;
}

static void
side_close(struct side *s)
{
	struct uroce_shm_msg_handle h;

	if (s->created && s->alive) {
		memset(&h, 0, sizeof(h));
		h.handle = s->cr.gen_id;
		if (uroce_shm_client_request(&s->c, UROCE_SHM_MSG_GEN_DESTROY, &h, sizeof(h), NULL, 0) != 0)
			ctl_err("GEN_DESTROY on the %s daemon at %s failed; closing the connection "
				"reclaims it", s->name, s->path);
	}
	s->created = false;
	if (s->open)
		uroce_shm_client_close(&s->c);
	s->open = false;
	free(s->qps);
	s->qps = NULL;
}

/* ------------------------------------------------------------------------ */
/* Output                                                                    */
/* ------------------------------------------------------------------------ */

/* What the two generators counted, as a rate record counts. */
static void
counts_of(const struct side *a, const struct side *b, struct uroce_lg_counts *c)
{
	memset(c, 0, sizeof(*c));
	c->msgs = a->st.completed;
	c->bytes = a->st.bytes;
	c->cqes = a->st.completed + a->st.errors;
	c->errors = a->st.errors + b->st.errors;
	c->verify_bad = a->st.verify_bad + a->st.order_bad + b->st.verify_bad + b->st.order_bad;
}

/* Cycles per message and busy share of a worker between two readings. */
struct cyc {
	double per_msg;          /* <0: unknown */
	double busy;             /* <0: unknown */
};

static struct cyc
cycles_of(const struct uroce_shm_worker_info *now, const struct uroce_shm_worker_info *before,
	  uint64_t msgs)
{
	struct cyc r = {-1, -1};
	uint64_t busy, idle;

	if (now->tsc_hz == 0 || now->busy_cycles < before->busy_cycles ||
	    now->idle_cycles < before->idle_cycles)
		return r;
	busy = now->busy_cycles - before->busy_cycles;
	idle = now->idle_cycles - before->idle_cycles;
	if (busy + idle > 0)
		r.busy = (double)busy / (double)(busy + idle);
	if (msgs > 0)
		r.per_msg = (double)busy / (double)msgs;
	return r;
}

static void
put_num(char *buf, size_t len, const char *key, double v)
{
	size_t n = strlen(buf);

	if (v < 0)
		snprintf(buf + n, len - n, ",\"%s\":null", key);
	else
		snprintf(buf + n, len - n, ",\"%s\":%.3f", key, v);
}

static void
json_num(struct json *j, const char *key, double v, int digits)
{
	json_key(j, key);
	if (v < 0)
		json_null(j); /* unknown (no cycle counter, no message) */
	else
		json_double(j, v, digits);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sleep up to @p s seconds, waking early for a signal. */
static void
nap(double s)
{
	double end = now_s() + s;

	while (!gen_stop && now_s() < end) {
		struct timespec ts = {0, 20 * 1000 * 1000};

		nanosleep(&ts, NULL);
	}
}

/* ------------------------------------------------------------------------ */
/* The command                                                               */
/* ------------------------------------------------------------------------ */

struct run {
	struct gopts o;
	struct side a;           /* initiator (--from) */
	struct side b;           /* target (--to) */
	uint32_t path_mtu;       /* enum */
	double t0;
	double peak;
	bool stalled;
	bool b_lost;             /* the target stopped answering */
	const char *stopped_by;  /* "done", "failed", "signal", "stall", "lost" */
	struct uroce_shm_worker_info a_wk0, b_wk0; /* accounting at the start */
};

static int
gen_setup(struct run *r)
{
	const struct gopts *o = &r->o;
	unsigned int ops = uroce_lg_mix_ops(&o->mix);
	uint32_t flags = 0, max_size, tdepth;
	struct uroce_shm_msg_gen_start_req q;
	double deadline;
	unsigned int i;
	int rc;

	r->a.name = "initiator";
	r->a.path = o->from;
	r->a.worker = o->worker;
	r->b.name = "target";
	r->b.path = o->to;
	r->b.worker = o->target_worker;
	if (side_open(&r->a) != 0 || side_open(&r->b) != 0)
		return CTL_EXIT_ERROR;
	rc = side_check(&r->a, o, "--worker");
	if (rc < 0)
		rc = side_check(&r->b, o, "--target-worker");
	if (rc >= 0)
		return rc;
	r->path_mtu = UROCE_MIN(r->a.active_mtu, r->b.active_mtu);
	if (o->mtu != 0) {
		if (mtu_enum(o->mtu) > r->path_mtu) {
			ctl_err("--mtu %u: above the active MTU of the %s daemon (%u bytes)", o->mtu,
				r->a.active_mtu < r->b.active_mtu ? "initiator" : "target",
				256u << (r->path_mtu - 1));
			return CTL_EXIT_ERROR;
		}
		r->path_mtu = mtu_enum(o->mtu);
	}
	if (ops & UROCE_LG_OP_BIT(UROCE_LG_READ))
		flags |= UROCE_SHM_GEN_F_READ;
	if (ops & UROCE_LG_OP_BIT(UROCE_LG_SEND))
		flags |= UROCE_SHM_GEN_F_SEND;
	if (ops & UROCE_LG_ATOMIC_OPS)
		flags |= UROCE_SHM_GEN_F_ATOMIC;
	if (o->verify)
		flags |= UROCE_SHM_GEN_F_VERIFY;
	max_size = uroce_lg_mix_max_size(&o->mix, ~0u);
	/* The target keeps two windows' worth of receives posted, so SENDs find
	 * one while it re-posts those the last round took. */
	tdepth = UROCE_MIN(2 * o->window, UROCE_MAX_QP_WR);
	if (side_create(&r->b, o, UROCE_SHM_GEN_TARGET, tdepth, flags, max_size) != 0 ||
	    side_create(&r->a, o, UROCE_SHM_GEN_INITIATOR, o->window, flags, max_size) != 0 ||
	    side_qps(&r->a) != 0 || side_qps(&r->b) != 0 ||
	    side_connect(&r->b, &r->a, r->path_mtu, o->qp_timeout) != 0 ||
	    side_connect(&r->a, &r->b, r->path_mtu, o->qp_timeout) != 0)
		return CTL_EXIT_ERROR;
	memset(&q, 0, sizeof(q));
	q.gen_id = r->a.cr.gen_id;
	q.n_mix = o->mix.n;
	q.window = o->window;
	q.flags = o->verify ? UROCE_SHM_GEN_F_VERIFY : 0;
	q.rate = o->rate;
	q.duration_us = (uint64_t)(o->seconds * 1e6);
	q.count = o->count;
	q.seed = o->seed;
	for (i = 0; i < o->mix.n; i++) {
		q.mix[i].op = o->mix.e[i].op;
		q.mix[i].size = o->mix.e[i].size;
		q.mix[i].weight = o->mix.e[i].weight;
	}
	side_worker(&r->a);
	side_worker(&r->b);
	r->a_wk0 = r->a.wk;
	r->b_wk0 = r->b.wk;
	/* The initiator's daemon refuses to start until its port knows the
	 * target's MAC (GEN_CONNECT began resolving it). */
	deadline = now_s() + GEN_RESOLVE_WAIT_S;
	do {
		rc = uroce_shm_client_request(&r->a.c, UROCE_SHM_MSG_GEN_START, &q, sizeof(q),
					      NULL, 0);
		if ((rc != -EAGAIN && rc != -EHOSTUNREACH) || gen_stop)
			break;
		nap(0.01);
	} while (now_s() < deadline);
	if (rc != 0)
		return call_err(&r->a, "GEN_START", rc);
	r->t0 = now_s();
	if (!o->quiet)
		fprintf(stderr, "uroce-ctl gen: %u RC QPs, initiator worker %u of %s -> target "
			"worker %u of %s, path MTU %u, mix %s, window %u%s%s\n", o->qps,
			r->a.worker, r->a.path, r->b.worker, r->b.path, 256u << (r->path_mtu - 1),
			o->mix_text, o->window, o->rate ? ", rate limited" : "",
			o->verify ? ", verify" : "");
	return 0;
}

/* One interval: read, print. @return true when the run is over. */
static bool
gen_interval(struct run *r, struct uroce_lg_counts *prev, double *t_prev,
	     struct uroce_shm_worker_info *awp, struct uroce_shm_worker_info *bwp,
	     double *last_progress, uint64_t *last_done)
{
	struct uroce_lg_counts cur, d;
	char extra[512];
	double t = now_s(), dt = t - *t_prev, rate;
	struct cyc ca = {-1, -1}, cb = {-1, -1};
	int rc;

	rc = side_stats(&r->a, 0);
	if (rc != 0) {
		call_err(&r->a, "GEN_STATS", rc);
		r->stopped_by = "lost";
		return true;
	}
	if (r->b.alive && side_stats(&r->b, 0) != 0 && !r->b_lost) {
		r->b_lost = true;
		if (!r->o.quiet)
			fprintf(stderr, "uroce-ctl gen: the target daemon at %s stopped answering; "
				"waiting for the initiator's verdict\n", r->b.path);
	}
	if (side_worker(&r->a) != 0)
		r->a.have_wk = false;
	if (!r->b_lost && side_worker(&r->b) != 0)
		r->b.have_wk = false;
	counts_of(&r->a, &r->b, &cur);
	d = uroce_lg_counts_sub(&cur, prev);
	if (r->a.have_wk)
		ca = cycles_of(&r->a.wk, awp, d.msgs);
	if (r->b.have_wk && !r->b_lost)
		cb = cycles_of(&r->b.wk, bwp, d.msgs);
	extra[0] = '\0';
	snprintf(extra, sizeof(extra), ",\"state\":\"%s\",\"outstanding\":%" PRIu64,
		 state_name(r->a.st.state), r->a.st.outstanding);
	put_num(extra, sizeof(extra), "initiator_cycles_per_msg", ca.per_msg);
	put_num(extra, sizeof(extra), "initiator_busy", ca.busy);
	put_num(extra, sizeof(extra), "target_cycles_per_msg", cb.per_msg);
	put_num(extra, sizeof(extra), "target_busy", cb.busy);
	if (uroce_lg_rate_write_ext(stdout, "gen", t - r->t0, dt, &d, &cur, extra) != 0) {
		ctl_err("writing the rate record: %s", strerror(EIO));
		r->stopped_by = "lost";
		return true;
	}
	rate = dt > 0 ? (double)d.msgs / dt : 0;
	if (rate > r->peak)
		r->peak = rate;
	if (!r->o.quiet) {
		char ac[64] = "-", bc[64] = "-";

		if (ca.per_msg >= 0)
			snprintf(ac, sizeof(ac), "%.0f%% %.0f cyc/msg", ca.busy * 100, ca.per_msg);
		if (cb.per_msg >= 0)
			snprintf(bc, sizeof(bc), "%.0f%% %.0f cyc/msg", cb.busy * 100, cb.per_msg);
		fprintf(stderr, "uroce-ctl gen: %6.1f s %11.0f msg/s %9.2f MB/s %8.3f Gb/s  "
			"errors %" PRIu64 "  verify_bad %" PRIu64 "  initiator w%u %s  target w%u %s\n",
			t - r->t0, rate, dt > 0 ? (double)d.bytes / dt / 1048576.0 : 0,
			dt > 0 ? (double)d.bytes * 8 / dt / 1e9 : 0, cur.errors, cur.verify_bad,
			r->a.worker, ac, r->b.worker, bc);
	}
	*prev = cur;
	*t_prev = t;
	if (r->a.have_wk)
		*awp = r->a.wk;
	if (r->b.have_wk)
		*bwp = r->b.wk;
	if (r->a.st.state == UROCE_SHM_GEN_DONE || r->a.st.state == UROCE_SHM_GEN_FAILED) {
		r->stopped_by = r->a.st.state == UROCE_SHM_GEN_DONE ? "done" : "failed";
		return true;
	}
	if (r->a.st.completed + r->a.st.errors != *last_done) {
		*last_done = r->a.st.completed + r->a.st.errors;
		*last_progress = t;
	} else if (r->a.st.outstanding > 0 && t - *last_progress > GEN_STALL_S) {
		r->stalled = true;
		r->stopped_by = "stall";
		return true;
	}
	return false;
}

static void
summary_counts(struct json *j, const struct uroce_lg_counts *c)
{
	json_obj_begin(j);
	json_kv_u64(j, "msgs", c->msgs);
	json_kv_u64(j, "bytes", c->bytes);
	json_kv_u64(j, "cqes", c->cqes);
	json_kv_u64(j, "errors", c->errors);
	json_kv_u64(j, "verify_bad", c->verify_bad);
	json_obj_end(j);
}

static void
summary_side(struct json *j, const char *key, const struct side *s,
	     const struct uroce_shm_worker_info *wk0, uint64_t msgs)
{
	struct cyc c = {-1, -1};

	json_key(j, key);
	json_obj_begin(j);
	json_kv_str(j, "socket", s->path);
	json_kv_u64(j, "worker", s->worker);
	json_kv_str(j, "state", state_name(s->st.state));
	json_kv_u64(j, "posted", s->st.posted);
	json_kv_u64(j, "completed", s->st.completed);
	json_kv_u64(j, "errors", s->st.errors);
	json_kv_u64(j, "verify_bad", s->st.verify_bad);
	json_kv_u64(j, "order_bad", s->st.order_bad);
	json_kv_u64(j, "retransmits", s->st.retransmits);
	json_kv_u64(j, "tx_packets", s->st.tx_packets);
	json_kv_u64(j, "rx_packets", s->st.rx_packets);
	if (s->st.role == UROCE_SHM_GEN_TARGET) {
		json_kv_u64(j, "recv", s->st.recv);
		json_kv_u64(j, "recv_bytes", s->st.recv_bytes);
		json_kv_u64(j, "scan_bytes", s->st.scan_bytes);
		json_kv_u64(j, "scan_bad", s->st.scan_bad);
	}
	if (s->have_wk) {
		c = cycles_of(&s->wk, wk0, msgs);
		json_kv_u64(j, "busy_cycles", s->wk.busy_cycles - wk0->busy_cycles);
		json_kv_u64(j, "tsc_hz", s->wk.tsc_hz);
	}
	json_num(j, "cycles_per_msg", c.per_msg, 1);
	json_num(j, "busy", c.busy, 4);
	json_obj_end(j);
}

int
ctl_gen_main(int argc, char **argv)
{
	struct uroce_shm_worker_info awp, bwp;
	struct uroce_lg_counts prev, total;
	double t_prev, last_progress, elapsed;
	struct sigaction sa, old_int, old_term;
	uint64_t last_done = 0;
	bool ok, atomic_bad = false;
	struct json j;
	struct run *r;
	unsigned int i;
	int rc;

	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		ctl_err("out of memory");
		return CTL_EXIT_ERROR;
	}
	rc = gen_parse(argc, argv, &r->o);
	if (rc >= 0) {
		free(r);
		return rc;
	}
	gen_stop = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	rc = gen_setup(r);
	if (rc != 0)
		goto out;
	memset(&prev, 0, sizeof(prev));
	t_prev = r->t0;
	last_progress = r->t0;
	awp = r->a_wk0;
	bwp = r->b_wk0;
	for (;;) {
		nap((double)r->o.interval_ms / 1000.0);
		if (gen_stop) {
			r->stopped_by = "signal";
			side_stats(&r->a, 0);
			break;
		}
		if (gen_interval(r, &prev, &t_prev, &awp, &bwp, &last_progress, &last_done))
			break;
	}
	elapsed = r->a.st.elapsed_us > 0 ? (double)r->a.st.elapsed_us / 1e6 : now_s() - r->t0;
	/* A run shorter than an interval has no full interval: its mean is its peak. */
	if (elapsed > 0 && (double)r->a.st.completed / elapsed > r->peak &&
	    elapsed < (double)r->o.interval_ms / 1000.0)
		r->peak = (double)r->a.st.completed / elapsed;
	/* The target's memory, checked where it is (with --verify). */
	if (!r->b_lost && side_stats(&r->b, r->o.verify ? UROCE_SHM_GEN_STATS_F_SCAN : 0) != 0)
		r->b_lost = true;
	if (r->o.verify && !r->b_lost && (uroce_lg_mix_ops(&r->o.mix) & UROCE_LG_ATOMIC_OPS) &&
	    r->a.st.state == UROCE_SHM_GEN_DONE && r->a.st.atomic_digest != r->b.st.atomic_digest)
		atomic_bad = true;
	counts_of(&r->a, &r->b, &total);
	total.verify_bad += r->b.st.scan_bad + (atomic_bad ? 1 : 0);
	ok = total.errors == 0 && total.verify_bad == 0 && !r->stalled &&
	     (r->a.st.state == UROCE_SHM_GEN_DONE || strcmp(r->stopped_by, "signal") == 0);
	json_init(&j);
	json_obj_begin(&j);
	json_kv_u64(&j, "uroce_gen_summary", 1);
	json_kv_bool(&j, "ok", ok);
	json_kv_str(&j, "stopped_by", r->stopped_by);
	json_kv_u64(&j, "qps", r->o.qps);
	json_key(&j, "mix");
	json_arr_begin(&j);
	for (i = 0; i < r->o.mix.n; i++) {
		json_obj_begin(&j);
		json_kv_str(&j, "op", uroce_lg_op_name(r->o.mix.e[i].op));
		json_kv_u64(&j, "size", r->o.mix.e[i].size);
		json_kv_u64(&j, "weight", r->o.mix.e[i].weight);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_kv_u64(&j, "window", r->o.window);
	json_kv_u64(&j, "rate_limit", r->o.rate);
	json_kv_u64(&j, "path_mtu", 256u << (r->path_mtu - 1));
	json_kv_bool(&j, "verify", r->o.verify);
	json_kv_u64(&j, "qp_timeout", r->o.qp_timeout != 0 ? r->o.qp_timeout : 14);
	json_num(&j, "elapsed_s", elapsed, 3);
	json_key(&j, "total");
	summary_counts(&j, &total);
	json_num(&j, "msgs_per_s", elapsed > 0 ? (double)total.msgs / elapsed : 0, 1);
	json_num(&j, "bytes_per_s", elapsed > 0 ? (double)total.bytes / elapsed : 0, 1);
	json_num(&j, "gbit_per_s", elapsed > 0 ? (double)total.bytes * 8 / elapsed / 1e9 : 0, 4);
	json_num(&j, "peak_msgs_per_s", r->peak, 1);
	json_key(&j, "per_op");
	json_obj_begin(&j);
	for (i = 0; i < UROCE_LG_NOPS; i++)
		json_kv_u64(&j, uroce_lg_op_name(i), r->a.st.op_msgs[i]);
	json_obj_end(&j);
	json_key(&j, "error");
	if (r->a.st.err_status != 0) {
		json_obj_begin(&j);
		json_kv_str(&j, "status", uroce_wc_status_name(r->a.st.err_status));
		json_kv_u64(&j, "qpn", r->a.st.err_qpn);
		json_kv_str(&j, "op", uroce_lg_op_name(r->a.st.err_op));
		json_obj_end(&j);
	} else {
		json_null(&j);
	}
	json_kv_bool(&j, "atomic_words_match", !atomic_bad);
	json_kv_bool(&j, "target_lost", r->b_lost);
	summary_side(&j, "initiator", &r->a, &r->a_wk0, total.msgs);
	summary_side(&j, "target", &r->b, &r->b_wk0, total.msgs);
	json_obj_end(&j);
	if (r->o.json_path != NULL) {
		FILE *f = fopen(r->o.json_path, "w");

		if (f == NULL || fprintf(f, "%s\n", j.buf) < 0 || fclose(f) != 0)
			ctl_err("--json %s: %s", r->o.json_path, strerror(errno));
	}
	if (json_write_line(&j, stdout) != 0)
		ctl_err("writing the summary failed");
	json_free(&j);
	if (!r->o.quiet || !ok) {
		if (r->a.st.err_status != 0)
			fprintf(stderr, "uroce-ctl gen: error: %s on QP %u (%s)%s\n",
				uroce_wc_status_name(r->a.st.err_status), r->a.st.err_qpn,
				uroce_lg_op_name(r->a.st.err_op),
				r->a.st.err_status == UROCE_WC_RETRY_EXC_ERR ?
				": the target stopped answering" : "");
		if (r->stalled)
			fprintf(stderr, "uroce-ctl gen: error: no completion for %.0f s with %"
				PRIu64 " WRs outstanding\n", GEN_STALL_S, r->a.st.outstanding);
		if (atomic_bad)
			fprintf(stderr, "uroce-ctl gen: error: the target's atomic words are not "
				"what the initiator's atomics must have left\n");
		fprintf(stderr, "uroce-ctl gen: %s after %.2f s: %" PRIu64 " messages, %.0f msg/s, "
			"%.3f Gb/s, errors %" PRIu64 ", verify_bad %" PRIu64 "\n",
			ok ? "ok" : "FAILED", elapsed, total.msgs,
			elapsed > 0 ? (double)total.msgs / elapsed : 0,
			elapsed > 0 ? (double)total.bytes * 8 / elapsed / 1e9 : 0, total.errors,
			total.verify_bad);
	}
	rc = ok ? CTL_EXIT_OK : CTL_EXIT_FOUND;
out:
	/* The initiator first: its traffic stops before its target goes. */
	side_close(&r->a);
	side_close(&r->b);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	free(r);
	return rc;
}
