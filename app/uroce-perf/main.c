/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * uroce-perf: a perftest-style benchmark on liburoce (lib/verbs/uroce_verbs.h
 * only). One binary covers the four tests of perftest (RDMA WRITE, RDMA READ,
 * SEND, ATOMIC FETCH_AND_ADD) in two modes (bandwidth, latency). As with
 * perftest, the same program is the server (no address given: it listens on
 * a TCP port) and the client (the server's address given); the two exchange
 * QPN, PSN, rkey, virtual address and GID over that TCP side channel, then the
 * client is the requester. The TCP connection also carries a per-size
 * START/READY/DONE/RESULT handshake, so that the server can prepare and check
 * its buffers (--verify), and each side notices when the other one goes away.
 *
 *   uroce-perf TEST MODE [options]             server
 *   uroce-perf TEST MODE [options] SERVER_IP   client
 *
 * See doc/uroce-perf.md for the options, the output and how numbers are
 * computed.
 */

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "uroce_cli.h"
#include "uroce_verbs.h"

#include "sink.h"
#include "verify.h"

#define PROG "uroce-perf"
#define DEFAULT_PORT 18515
#define DEFAULT_TX_DEPTH 128
/* perftest's bw default: one signaled WR in 100 (-Q, --cq-mod) */
#define DEFAULT_CQ_MOD 100
#define DEFAULT_BW_ITERS 5000
#define DEFAULT_LAT_ITERS 1000
#define SWEEP_MIN 2u
#define SWEEP_MAX (1u << 23)
#define MAX_QPS 128
#define MAX_ITERS 100000000ul
#define MAX_DURATION 3600
/* Bytes of per-QP buffer space uroce-perf aims at (two areas of this). */
#define AREA_BUDGET (32u << 20)
/* Magic of every side-channel message: "UPRF". */
#define MSG_MAGIC 0x55505246ull
#define MSG_VERSION 1
#define POLL_BATCH 32
/* Empty CQ polls between two checks of the TCP side channel. */
#define PEER_CHECK_SPINS 4096
/* Shortest interval the bw peak is measured over. */
#define PEAK_INTERVAL_US 10000.0
/* bw client: busy polls between two looks at the clock for -D */
#define CLOCK_SPINS 64
/* -e: longest sleep on the completion fd before the peer and the deadline
 * are looked at again. */
#define EVENT_WAIT_MS 100

enum test_kind { TEST_WRITE, TEST_READ, TEST_SEND, TEST_ATOMIC };
enum run_mode { MODE_BW, MODE_LAT };
enum cmd { CMD_START = 1, CMD_DONE, CMD_BYE };

static const char *const test_names[] = {"write", "read", "send", "atomic"};
static const char *const test_titles[] = {"RDMA_Write", "RDMA_Read", "Send",
					   "Atomic FETCH_AND_ADD"};

/* What the client sends in HELLO; the server runs with these. */
struct params {
	uint64_t test;
	uint64_t mode;
	uint64_t size;      /* -s; with sweep: ignored */
	uint64_t sweep;     /* -a */
	uint64_t max_size;  /* top of the sweep */
	uint64_t qps;
	uint64_t iters;     /* per QP; 0 with a duration */
	uint64_t duration;  /* seconds, bw only */
	uint64_t tx_depth;
	uint64_t verify;
};
#define PARAMS_WORDS (sizeof(struct params) / sizeof(uint64_t))

/* One QP's view of itself or of its peer, as exchanged over TCP. */
struct qp_info {
	uint64_t qpn;
	uint64_t psn;
	uint64_t rkey;
	uint64_t va;       /* start of the target area */
	uint64_t area;     /* bytes of the target area */
};
#define QP_INFO_WORDS (sizeof(struct qp_info) / sizeof(uint64_t))

/* Per QP: the buffer is two areas of `area` bytes. The target area [0, area)
 * is what the peer writes, reads, sends into (receive slots) and adds to (the
 * counter at offset 0); the local area [area, 2 area) is the source of this
 * side's writes and sends and where its reads and fetched values land. */
struct perf_qp {
	struct uroce_qp *qp;
	uint8_t *target;
	uint8_t *local;
	struct qp_info me;
	struct qp_info peer;
	uint64_t posted;     /* WRs posted in the current run */
	uint64_t completed;  /* their completions */
	uint64_t received;   /* receive completions in the current run */
	uint64_t rx_posted;  /* receives ever posted (slot = rx_posted % rx_slots) */
	uint64_t rx_done;    /* receives ever completed */
	uint64_t peer_count; /* messages the peer says it sent / applied */
};

struct perf {
	struct params p;
	bool server;
	const char *sock_path;
	const char *sock_used;  /* the daemon socket opened (-S, $UROCE_SOCKET or default) */
	bool allow_offlink;     /* --allow-offlink: a 198.18.0.0/15 server off every local link */
	uint8_t gid_index;      /* -x: source GID index */
	uint8_t want_mtu;       /* -m: IBA MTU enum; 0: the port's active MTU */
	uint8_t qp_timeout;     /* -u: local ACK timeout code, 4.096 us * 2^n */
	uint8_t path_mtu;       /* what the QPs use */
	const char *peer_addr;
	struct in_addr peer_in;  /* peer_addr, checked by check_bench_net() */
	const char *bind_addr;
	uint16_t port;
	int fd;                  /* the TCP side channel */
	struct uroce_context *ctx;
	struct uroce_pd *pd;
	struct uroce_cq *cq;
	struct uroce_mr *mr;
	uint8_t *mem;
	size_t mem_len;
	uint8_t gid[16];
	uint8_t peer_gid[16];
	uint64_t area;           /* bytes per area */
	uint64_t rx_slots;       /* receives kept posted per QP (send test), stride max_size */
	struct perf_qp qps[MAX_QPS];
	unsigned long spins;
	bool verify_failed;
	unsigned int hold;       /* --hold: seconds to keep the QPs after the run */
	bool events;             /* -e: sleep on the CQ's completion fd when it is empty */
	uint64_t cq_mod;         /* -Q: bw client signals one WR in cq_mod */
	uint64_t cq_sleeps;      /* -e: times this side slept on the fd */
};

/* --hold after a failure too: seconds to keep the QPs before exiting, once
 * they exist. */
static unsigned int fatal_hold;

static void __attribute__((noreturn, format(printf, 1, 2)))
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verr(fmt, ap);
	va_end(ap);
	if (fatal_hold != 0) {
		fprintf(stderr, PROG ": keeping the QPs %u s (--hold)\n", fatal_hold);
		fflush(stdout);
		sleep(fatal_hold);
	}
	exit(1);
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " TEST MODE [options]            (server)\n"
		"       " PROG " TEST MODE [options] SERVER_IP  (client)\n"
		"       " PROG " sink [options]                 (see " PROG " sink --help)\n"
		"  TEST  write | read | send | atomic\n"
		"  MODE  bw | lat\n"
		"options:\n"
		"  -s, --size BYTES       message size (default 65536 bw, 2 lat; atomic: 8)\n"
		"  -a, --all              sweep sizes 2, 4, ... up to --max-size (atomic: 8 only)\n"
		"      --max-size BYTES   top of the -a sweep (default %u)\n"
		"  -q, --qps N            number of QPs, bw only (default 1, max %u)\n"
		"  -n, --iters N          iterations per QP (default %u bw, %u lat)\n"
		"  -D, --duration SEC     run each size for SEC seconds instead of -n (bw only)\n"
		"  -t, --tx-depth N       outstanding WRs per QP, bw (default %u, max 4096)\n"
		"  -Q, --cq-mod N         bw client: ask a completion for one WR in N (the\n"
		"                         others complete with it, as perftest -Q; at most the\n"
		"                         WRs in flight; 1 signals every WR; default %u)\n"
		"      --verify           check the data (and the atomic counter)\n"
		"  -e, --events           sleep on the CQ's completion fd instead of busy\n"
		"                         polling it (arm, poll, wait: perftest -e); not for\n"
		"                         write lat, which watches memory\n"
		"      --socket PATH      uroce daemon socket (default $UROCE_SOCKET, then %s)\n"
		"  -x, --gid-index N      source GID index (default 0; uroced: 1 is IPv4, 2 IPv6)\n"
		"  -m, --mtu BYTES        path MTU 256..4096 (default: the port's active MTU;\n"
		"                         both sides must end up with the same)\n"
		"  -u, --qp-timeout N     local ACK timeout 4.096 us * 2^N, 1..31 (default 14:\n"
		"                         67 ms; with 7 retries a QP gives up after 0.5 s)\n"
		"  -p, --port PORT        TCP side-channel port (default %u)\n"
		"      --bind ADDR        server: IPv4 address to listen on (default 127.0.0.1)\n"
		"      --allow-offlink    client: connect to a SERVER_IP in 198.18.0.0/15 (the\n"
		"                         test range) even when no local link is on its subnet\n"
		"      --hold SEC         keep this side's QPs SEC seconds after the run (or\n"
		"                         after it failed), for a look at them\n"
		"                         (uroce-ctl counters --qp N)\n"
		"  -h, --help             this text\n"
		"  -V, --version          the version of uroce\n"
		"Numbers: sizes take K, M, G (KiB...), counts k, M, G (-n 1M, -s 64K).\n",
		SWEEP_MAX, MAX_QPS, DEFAULT_BW_ITERS, DEFAULT_LAT_ITERS, DEFAULT_TX_DEPTH, DEFAULT_CQ_MOD,
		UROCE_DEFAULT_SOCKET, DEFAULT_PORT);
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/*
 * Before the peer is blamed for a failure: was it this side's own daemon
 * that went away? A daemon that stops cleanly first flushes its QPs (error
 * completions) and closes its clients' sockets just after, so wait up to
 * @p grace_ms for the close.
 */
static void
check_local_daemon(struct perf *pf, unsigned int grace_ms, const char *what)
{
	unsigned int waited = 0;

	if (pf->ctx == NULL)
		return;
	for (;;) {
		if (uroce_context_check(pf->ctx) == -ENOTCONN)
			fatal("%s: this side's uroce daemon (%s) went away; not the peer's doing",
			      what, pf->sock_used);
		if (waited >= grace_ms)
			return;
		usleep(50000);
		waited += 50;
	}
}

/* ---- the TCP side channel: messages are arrays of big-endian 64-bit words */

static void
send_words(struct perf *pf, const uint64_t *w, size_t n)
{
	uint64_t buf[8 + MAX_QPS * QP_INFO_WORDS];
	size_t i, off = 0, len = n * sizeof(uint64_t);

	if (n > sizeof(buf) / sizeof(buf[0]))
		fatal("internal: message of %zu words", n);
	for (i = 0; i < n; i++)
		buf[i] = htobe64(w[i]);
	while (off < len) {
		ssize_t r = send(pf->fd, (uint8_t *)buf + off, len - off, MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			check_local_daemon(pf, 200, "TCP send failed");
			fatal("peer disconnected (TCP send: %s)", strerror(errno));
		}
		off += (size_t)r;
	}
}

static void
recv_words(struct perf *pf, uint64_t *w, size_t n)
{
	size_t i, off = 0, len = n * sizeof(uint64_t);

	while (off < len) {
		ssize_t r = recv(pf->fd, (uint8_t *)w + off, len - off, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			check_local_daemon(pf, 200, "TCP connection lost");
		if (r < 0)
			fatal("peer disconnected (TCP receive: %s)", strerror(errno));
		if (r == 0)
			fatal("peer disconnected (TCP connection closed): the other uroce-perf "
			      "exited; its own messages say why");
		off += (size_t)r;
	}
	for (i = 0; i < n; i++)
		w[i] = be64toh(w[i]);
}

/* A message header: magic and command. */
static void
expect_cmd(struct perf *pf, uint64_t *hdr, uint64_t cmd)
{
	recv_words(pf, hdr, 2);
	if (hdr[0] != MSG_MAGIC || hdr[1] != cmd)
		fatal("peer sent a malformed side-channel message (magic %#" PRIx64 ", command %"
		      PRIu64 ", expected %" PRIu64 ")", hdr[0], hdr[1], cmd);
}

/* True if the side channel has data (or EOF) waiting: never blocks. */
static bool
tcp_readable(struct perf *pf)
{
	struct pollfd p = {.fd = pf->fd, .events = POLLIN};

	return poll(&p, 1, 0) > 0;
}

/* Called from busy loops: notice a peer that went away (EOF or error on the
 * side channel) instead of spinning forever. */
static void
check_peer(struct perf *pf)
{
	uint8_t b;
	ssize_t r;

	if (++pf->spins % PEER_CHECK_SPINS != 0 || !tcp_readable(pf))
		return;
	r = recv(pf->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
		check_local_daemon(pf, 200, "TCP connection lost during the run");
	if (r == 0)
		fatal("peer disconnected (TCP connection closed) during the run: the other "
		      "uroce-perf exited; its own messages say why");
	if (r < 0 && errno != EAGAIN && errno != EINTR)
		fatal("peer disconnected (TCP: %s) during the run", strerror(errno));
	/* r > 0: the peer's next message (DONE) is early; it is read later. */
}

static void
tcp_server(struct perf *pf)
{
	struct sockaddr_in sa;
	int one = 1, ls;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(pf->port);
	if (inet_pton(AF_INET, pf->bind_addr, &sa.sin_addr) != 1)
		fatal("--bind %s: not an IPv4 address", pf->bind_addr);
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0)
		fatal("socket: %s", strerror(errno));
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		fatal("cannot listen on %s:%u: %s", pf->bind_addr, pf->port, strerror(errno));
	if (listen(ls, 1) != 0)
		fatal("listen: %s", strerror(errno));
	printf("************************************\n"
	       "* Waiting for client to connect... *\n"
	       "************************************\n");
	fflush(stdout);
	do
		pf->fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	while (pf->fd < 0 && errno == EINTR);
	if (pf->fd < 0)
		fatal("accept: %s", strerror(errno));
	close(ls);
	setsockopt(pf->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/*
 * 198.18.0.0/15 is the benchmarking range (RFC 2544) uroce's tests and
 * documentation use, inside network namespaces they make. Copied into a
 * namespace where no interface is on that subnet, such an address would be
 * reached through the default route, off the machine: refuse it unless a
 * local link holds it or --allow-offlink is given.
 */
static void
check_bench_net(const struct perf *pf, struct in_addr dst)
{
	uint32_t d = ntohl(dst.s_addr);
	struct ifaddrs *ifs, *i;
	bool on_link = false;

	if ((d & 0xfffe0000u) != 0xc6120000u || pf->allow_offlink)
		return;
	if (getifaddrs(&ifs) != 0)
		fatal("getifaddrs: %s", strerror(errno));
	for (i = ifs; i != NULL && !on_link; i = i->ifa_next) {
		uint32_t a, m;

		if (i->ifa_addr == NULL || i->ifa_netmask == NULL ||
		    i->ifa_addr->sa_family != AF_INET)
			continue;
		a = ntohl(((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr);
		m = ntohl(((struct sockaddr_in *)(void *)i->ifa_netmask)->sin_addr.s_addr);
		on_link = (a & m) == (d & m);
	}
	freeifaddrs(ifs);
	if (!on_link)
		fatal("SERVER_IP %s is in the benchmarking range 198.18.0.0/15, but no interface "
		      "of this network namespace is on its subnet: the TCP connection would "
		      "leave the machine by the default route. Run where a link holds it (ip "
		      "netns exec ...), use 127.0.0.1 for a server on this host, or pass "
		      "--allow-offlink", pf->peer_addr);
}

static void
tcp_client(struct perf *pf)
{
	struct sockaddr_in sa;
	double end = now_us() + 10e6;
	int one = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(pf->port);
	sa.sin_addr = pf->peer_in;
	/* The server may still be starting: retry a refused connect for 10 s. */
	for (;;) {
		pf->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (pf->fd < 0)
			fatal("socket: %s", strerror(errno));
		if (connect(pf->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		if (errno != ECONNREFUSED || now_us() > end)
			fatal("cannot connect to %s:%u: %s", pf->peer_addr, pf->port,
			      strerror(errno));
		close(pf->fd);
		usleep(50000);
	}
	setsockopt(pf->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Client -> server: the parameters. Server -> client: 0, or 1 if TEST/MODE differ. */
static void
exchange_params(struct perf *pf)
{
	uint64_t w[2 + PARAMS_WORDS];
	struct params theirs;

	if (!pf->server) {
		w[0] = MSG_MAGIC;
		w[1] = MSG_VERSION;
		memcpy(&w[2], &pf->p, sizeof(pf->p));
		send_words(pf, w, 2 + PARAMS_WORDS);
		recv_words(pf, w, 2);
		if (w[0] != MSG_MAGIC)
			fatal("peer is not a uroce-perf server");
		if (w[1] != 0)
			fatal("the server runs another test or mode; start both with the same "
			      "TEST and MODE");
		return;
	}
	recv_words(pf, w, 2 + PARAMS_WORDS);
	if (w[0] != MSG_MAGIC || w[1] != MSG_VERSION)
		fatal("peer is not a uroce-perf client of version %u", MSG_VERSION);
	memcpy(&theirs, &w[2], sizeof(theirs));
	w[1] = theirs.test != pf->p.test || theirs.mode != pf->p.mode;
	send_words(pf, w, 2);
	if (w[1] != 0)
		fatal("the client runs '%s %s', this server '%s %s'",
		      theirs.test < 4 ? test_names[theirs.test] : "?",
		      theirs.mode == MODE_LAT ? "lat" : "bw", test_names[pf->p.test],
		      pf->p.mode == MODE_LAT ? "lat" : "bw");
	/* Everything else (sizes, QPs, depth, iterations, verify) is the client's. */
	if (theirs.qps < 1 || theirs.qps > MAX_QPS || theirs.max_size < 1 ||
	    theirs.max_size > SWEEP_MAX || theirs.tx_depth < 1 || theirs.tx_depth > 4096 ||
	    theirs.size > theirs.max_size || (!theirs.sweep && theirs.size < 1) ||
	    theirs.test > TEST_ATOMIC || theirs.iters > MAX_ITERS ||
	    theirs.duration > MAX_DURATION || (theirs.iters == 0) == (theirs.duration == 0) ||
	    (theirs.mode == MODE_LAT && (theirs.duration || theirs.qps != 1)))
		fatal("the client sent parameters out of range");
	pf->p = theirs;
}

/* ---- verbs setup */

/* First, before the side channel, so that a missing daemon is reported at once. */
static void
open_device(struct perf *pf)
{
	const char *path = pf->sock_path;

	if (path == NULL)
		path = getenv("UROCE_SOCKET");
	if (path == NULL)
		path = UROCE_DEFAULT_SOCKET;
	pf->sock_used = path;
	pf->ctx = uroce_open_device(path);
	if (pf->ctx == NULL)
		fatal("cannot reach the uroce daemon at %s: %s", path, strerror(errno));
}

/* -x names a GID the port lacks: say which exist (a daemon without ports,
 * like uroced_lite, has GID 0 only; a uroced port has 0 link-local, 1 IPv4,
 * 2 IPv6). */
static void __attribute__((noreturn))
gid_missing(struct perf *pf, uint32_t n)
{
	char list[512], a[INET6_ADDRSTRLEN];
	size_t off = 0;
	uint8_t g[16];
	uint32_t i;

	list[0] = '\0';
	for (i = 0; i < n && i < 16 && off < sizeof(list); i++) {
		if (uroce_query_gid(pf->ctx, 1, (int)i, g) != 0)
			continue;
		inet_ntop(AF_INET6, g, a, sizeof(a));
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%u %s", off ? ", " : "",
					i, a);
	}
	fatal("-x %u: port 1 of the daemon at %s has no GID %u; its GIDs: %s (a uroced "
	      "without ports has GID 0 only; doc/operations.md)", pf->gid_index, pf->sock_used,
	      pf->gid_index, off ? list : "none");
}

/* Once the parameters are agreed: PD, buffer, MR, CQ, QPs. */
static void
create_resources(struct perf *pf)
{
	struct uroce_qp_init_attr ia;
	uint64_t q, slots, cqe;
	int access = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
		     UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC;

	struct uroce_port_attr port;

	if (uroce_query_port(pf->ctx, 1, &port) != 0)
		fatal("query_port failed");
	if (pf->gid_index >= port.gid_tbl_len ||
	    uroce_query_gid(pf->ctx, 1, pf->gid_index, pf->gid) != 0)
		gid_missing(pf, port.gid_tbl_len);
	pf->path_mtu = (uint8_t)port.active_mtu;
	if (pf->want_mtu != 0 && pf->want_mtu > pf->path_mtu)
		fatal("-m %u: above the port's active MTU %u", 128u << pf->want_mtu,
		      128u << pf->path_mtu);
	if (pf->want_mtu != 0)
		pf->path_mtu = pf->want_mtu;
	pf->pd = uroce_alloc_pd(pf->ctx);
	if (pf->pd == NULL)
		fatal("alloc_pd: %s", strerror(errno));

	/* Slots of max_size bytes per area: up to tx_depth, within the budget,
	 * at least 2 (the latency tests use slot 0 and slot 1). */
	slots = AREA_BUDGET / pf->p.qps / pf->p.max_size;
	if (slots > pf->p.tx_depth)
		slots = pf->p.tx_depth;
	if (slots < 2)
		slots = 2;
	pf->rx_slots = slots;
	pf->area = slots * pf->p.max_size;
	pf->mem_len = 2 * pf->area * pf->p.qps;
	pf->mem = uroce_alloc_buf(pf->ctx, pf->mem_len);
	if (pf->mem == NULL)
		fatal("alloc_buf of %zu bytes: %s", pf->mem_len, strerror(errno));
	pf->mr = uroce_reg_mr(pf->pd, pf->mem, pf->mem_len, access);
	if (pf->mr == NULL)
		fatal("reg_mr: %s", strerror(errno));
	cqe = pf->p.qps * (pf->p.tx_depth + pf->rx_slots) * 2;
	if (cqe > 65536)
		cqe = 65536;
	pf->cq = uroce_create_cq(pf->ctx, (int)cqe, NULL);
	if (pf->cq == NULL)
		fatal("create_cq: %s", strerror(errno));
	/* now_us() passes 2^31 µs after 36 minutes: wrap it through an integer, never cast
	 * it straight to a 32-bit type (undefined behaviour). */
	srand((unsigned int)getpid() ^ (unsigned int)(uint64_t)now_us());
	for (q = 0; q < pf->p.qps; q++) {
		struct perf_qp *pq = &pf->qps[q];

		memset(&ia, 0, sizeof(ia));
		ia.send_cq = pf->cq;
		ia.recv_cq = pf->cq;
		ia.qp_type = UROCE_QPT_RC;
		ia.cap.max_send_wr = (uint32_t)pf->p.tx_depth;
		ia.cap.max_recv_wr = (uint32_t)pf->rx_slots;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		pq->qp = uroce_create_qp(pf->pd, &ia);
		if (pq->qp == NULL)
			fatal("create_qp: %s", strerror(errno));
		pq->target = pf->mem + 2 * pf->area * q;
		pq->local = pq->target + pf->area;
		pq->me.qpn = pq->qp->qp_num;
		pq->me.psn = (uint64_t)rand() & 0xffffff;
		pq->me.rkey = pf->mr->rkey;
		pq->me.va = (uint64_t)(uintptr_t)pq->target;
		pq->me.area = pf->area;
	}
}

/* Both sides send GID and their QPs; the client first. */
static void
exchange_qps(struct perf *pf)
{
	uint64_t w[4 + MAX_QPS * QP_INFO_WORDS];
	uint64_t q, n = pf->p.qps;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		bool sending = (pass == 0) != pf->server;

		if (sending) {
			w[0] = MSG_MAGIC;
			w[1] = n;
			memcpy(&w[2], pf->gid, 16);
			for (q = 0; q < n; q++)
				memcpy(&w[4 + q * QP_INFO_WORDS], &pf->qps[q].me,
				       sizeof(struct qp_info));
			send_words(pf, w, 4 + n * QP_INFO_WORDS);
			continue;
		}
		recv_words(pf, w, 4 + n * QP_INFO_WORDS);
		if (w[0] != MSG_MAGIC || w[1] != n)
			fatal("peer sent a malformed QP exchange");
		/* The GID travels as two words: swapped on send, swapped back on receive. */
		memcpy(pf->peer_gid, &w[2], 16);
		for (q = 0; q < n; q++) {
			struct qp_info *pi = &pf->qps[q].peer;

			memcpy(pi, &w[4 + q * QP_INFO_WORDS], sizeof(*pi));
			if (pi->qpn > 0xffffff || pi->area != pf->area)
				fatal("peer sent a bad QP description");
		}
	}
}

static void
connect_qp(struct perf *pf, struct perf_qp *pq)
{
	struct uroce_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
			    UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC;
	rc = uroce_modify_qp(pq->qp, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT |
						 UROCE_QP_ACCESS_FLAGS);
	if (rc)
		fatal("modify_qp to INIT: %s", strerror(-rc));
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTR;
	a.path_mtu = pf->path_mtu;
	a.dest_qp_num = (uint32_t)pq->peer.qpn;
	a.rq_psn = (uint32_t)pq->peer.psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	memcpy(a.ah_attr.dgid, pf->peer_gid, 16);
	a.ah_attr.sgid_index = pf->gid_index;
	a.ah_attr.port_num = 1;
	rc = uroce_modify_qp(pq->qp, &a, UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU |
						 UROCE_QP_DEST_QPN | UROCE_QP_RQ_PSN |
						 UROCE_QP_MAX_DEST_RD_ATOMIC |
						 UROCE_QP_MIN_RNR_TIMER);
	if (rc)
		fatal("modify_qp to RTR: %s", strerror(-rc));
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_RTS;
	a.sq_psn = (uint32_t)pq->me.psn;
	a.timeout = pf->qp_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	rc = uroce_modify_qp(pq->qp, &a, UROCE_QP_STATE | UROCE_QP_SQ_PSN | UROCE_QP_TIMEOUT |
						 UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY |
						 UROCE_QP_MAX_QP_RD_ATOMIC);
	if (rc)
		fatal("modify_qp to RTS: %s", strerror(-rc));
}

static void
close_device(struct perf *pf)
{
	uint64_t q;

	for (q = 0; q < pf->p.qps; q++)
		uroce_destroy_qp(pf->qps[q].qp);
	uroce_destroy_cq(pf->cq);
	uroce_dereg_mr(pf->mr);
	uroce_free_buf(pf->ctx, pf->mem);
	uroce_dealloc_pd(pf->pd);
	uroce_close_device(pf->ctx);
}

/* ---- data patterns (--verify) */

/* Bad messages found by verify_fail(); the first VERIFY_SHOW get a line each. */
#define VERIFY_SHOW 10
static uint64_t verify_bad;

static void
verify_fail(struct perf *pf, const char *what, uint64_t q, uint64_t seq, uint64_t off)
{
	if (verify_bad++ < VERIFY_SHOW)
		fprintf(stderr, PROG ": verify: %s: QP %" PRIu64 " message %" PRIu64
			" differs at byte %" PRIu64 "\n", what, q, seq, off);
	pf->verify_failed = true;
}

/* ---- posting and polling */

static void
post_rdma(struct perf *pf, struct perf_qp *pq, uint32_t opcode, uint64_t wr_id, uint8_t *laddr,
	  uint64_t roff, uint32_t len, bool signaled)
{
	struct uroce_sge sge = {(uint64_t)(uintptr_t)laddr, len, pf->mr->lkey};
	struct uroce_send_wr wr, *bad;
	int rc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = opcode;
	wr.send_flags = signaled ? UROCE_SEND_SIGNALED : 0;
	if (opcode == UROCE_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = pq->peer.va + roff;
		wr.wr.atomic.rkey = (uint32_t)pq->peer.rkey;
		wr.wr.atomic.compare_add = 1;
	} else if (opcode != UROCE_WR_SEND) {
		wr.wr.rdma.remote_addr = pq->peer.va + roff;
		wr.wr.rdma.rkey = (uint32_t)pq->peer.rkey;
	}
	rc = uroce_post_send(pq->qp, &wr, &bad);
	if (rc)
		fatal("post_send: %s", strerror(-rc));
	pq->posted++;
}

/* Keep rx_slots receives of max_size bytes posted, slot = n % rx_slots. */
static void
post_recvs(struct perf *pf, struct perf_qp *pq, uint64_t q)
{
	while (pq->rx_posted - pq->rx_done < pf->rx_slots) {
		uint64_t slot = pq->rx_posted % pf->rx_slots;
		struct uroce_sge sge = {(uint64_t)(uintptr_t)(pq->target + slot * pf->p.max_size),
					(uint32_t)pf->p.max_size, pf->mr->lkey};
		struct uroce_recv_wr wr = {.wr_id = q << 32 | slot, .sg_list = &sge,
					   .num_sge = 1};
		struct uroce_recv_wr *bad;
		int rc = uroce_post_recv(pq->qp, &wr, &bad);

		if (rc)
			fatal("post_recv: %s", strerror(-rc));
		pq->rx_posted++;
	}
}


/* A poll of this side's CQ failed with @p n (< 0): say whose fault it is. */
static void
poll_failed(struct perf *pf, int n)
{
	if (n == -ENOTCONN)
		fatal("this side's uroce daemon (%s) went away", pf->sock_used);
	if (n == -ETIMEDOUT)
		fatal("this side's uroce daemon (%s) has made no progress for UROCE_DAEMON_TIMEOUT_MS "
		      "(stopped, or starved of CPU); not the peer's doing", pf->sock_used);
	fatal("poll_cq: %s", strerror(-n));
}

/*
 * Take up to POLL_BATCH completions. With -e an empty CQ is slept on, the
 * way perftest -e does it: arm, poll once more (a completion that came
 * before the arm raises no event), then wait on the CQ's eventfd and the
 * side channel, at most EVENT_WAIT_MS so that the caller can look at its
 * deadline and its peer.
 */
static int
cq_poll(struct perf *pf, struct uroce_wc *wc)
{
	struct pollfd p[2];
	int n = uroce_poll_cq(pf->cq, POLL_BATCH, wc), rc;

	if (n != 0 || !pf->events)
		return n;
	rc = uroce_req_notify_cq(pf->cq, false);
	if (rc < 0)
		fatal("req_notify_cq: %s", strerror(-rc));
	n = uroce_poll_cq(pf->cq, POLL_BATCH, wc);
	if (n != 0)
		return n;
	p[0] = (struct pollfd){.fd = uroce_cq_fd(pf->cq), .events = POLLIN};
	p[1] = (struct pollfd){.fd = pf->fd, .events = POLLIN};
	pf->cq_sleeps++;
	rc = poll(p, 2, EVENT_WAIT_MS);
	if (rc < 0 && errno != EINTR)
		fatal("poll: %s", strerror(errno));
	/* Consume the event; a timeout also looks at the daemon's socket. */
	rc = uroce_get_cq_event(pf->cq, 0);
	if (rc < 0)
		poll_failed(pf, rc);
	return uroce_poll_cq(pf->cq, POLL_BATCH, wc);
}

/* Poll up to POLL_BATCH completions, failing on any error completion. */
static int
poll_some(struct perf *pf, struct uroce_wc *wc)
{
	int i, n = cq_poll(pf, wc);

	if (n < 0)
		poll_failed(pf, n);
	for (i = 0; i < n; i++) {
		char what[96];

		if (wc[i].status == UROCE_WC_SUCCESS)
			continue;
		snprintf(what, sizeof(what), "completion error %s (%u) on QP %u",
			 uroce_wc_status_name(wc[i].status), wc[i].status, wc[i].qp_num);
		check_local_daemon(pf, 1000, what);
		if (wc[i].status == UROCE_WC_RETRY_EXC_ERR)
			fatal("%s, wr_id %#" PRIx64 ": the peer did not answer within -u %u's "
			      "retries: its daemon or uroce-perf went away, the path is broken, or "
			      "the host is too busy (a larger -u waits longer; doc/operations.md)",
			      what, wc[i].wr_id, pf->qp_timeout);
		fatal("%s, wr_id %#" PRIx64 " (this side's daemon is up: see the peer's "
		      "messages)", what, wc[i].wr_id);
	}
	if (n == 0)
		check_peer(pf);
	return n;
}

/* Handle one receive completion of the send test: check, count, re-post. */
static void
on_recv(struct perf *pf, const struct uroce_wc *wc, uint64_t size)
{
	uint64_t q = wc->wr_id >> 32, slot = wc->wr_id & 0xffffffff;
	struct perf_qp *pq;

	if (q >= pf->p.qps || slot >= pf->rx_slots)
		fatal("receive completion with an unknown wr_id %#" PRIx64, wc->wr_id);
	pq = &pf->qps[q];
	pq->rx_done++;
	if (pf->p.verify) {
		uint64_t off;

		if (wc->byte_len != size) {
			fprintf(stderr, PROG ": verify: QP %" PRIu64 " message %" PRIu64
				" has %u bytes, expected %" PRIu64 "\n", q, pq->received,
				wc->byte_len, size);
			pf->verify_failed = true;
		}
		off = verify_check(pq->target + slot * pf->p.max_size, size,
				   verify_seed(q, pq->received, size));
		if (off != size)
			verify_fail(pf, "received SEND", q, pq->received, off);
	}
	pq->received++;
	post_recvs(pf, pq, q);
}

/* ---- bandwidth */

struct bw_result {
	uint64_t iters;  /* per QP (the smallest, with -D) */
	uint64_t msgs;   /* all QPs */
	double usec;
	double peak;     /* MB/s */
};

static uint64_t
slots_for(struct perf *pf, uint64_t size)
{
	uint64_t s = pf->area / size;

	return s < pf->p.tx_depth ? s : pf->p.tx_depth;
}

static uint32_t
bw_opcode(struct perf *pf)
{
	switch (pf->p.test) {
	case TEST_WRITE:
		return UROCE_WR_RDMA_WRITE;
	case TEST_READ:
		return UROCE_WR_RDMA_READ;
	case TEST_SEND:
		return UROCE_WR_SEND;
	default:
		return UROCE_WR_ATOMIC_FETCH_AND_ADD;
	}
}

/* Check the data of the WR of @p seq on @p wq (--verify: READ and ATOMIC
 * results land on this side). */
static void
bw_verify_one(struct perf *pf, uint64_t wq, uint64_t seq, uint64_t slots, uint64_t size)
{
	struct perf_qp *pq = &pf->qps[wq];

	if (pf->p.test == TEST_READ) {
		uint64_t slot = seq % slots;
		uint64_t off = verify_check(pq->local + slot * size, size,
					    verify_seed(wq, slot, size));

		if (off != size)
			verify_fail(pf, "RDMA READ data", wq, seq, off);
	} else if (pf->p.test == TEST_ATOMIC) {
		uint64_t got;

		memcpy(&got, pq->local + (seq % slots) * 8, 8);
		if (got != seq) {
			fprintf(stderr, PROG ": verify: QP %" PRIu64 " FETCH_ADD %" PRIu64
				" fetched %" PRIu64 "\n", wq, seq, got);
			pf->verify_failed = true;
		}
	}
}

/* Whether WR @p seq of a bw run asks for a completion: one in @p mod, and
 * the last of an -n run. */
static bool
bw_signaled(const struct perf *pf, uint64_t seq, uint64_t mod)
{
	return seq % mod == mod - 1 || (!pf->p.duration && seq == pf->p.iters - 1);
}

/* Whether @p pq has WRs left to post (room in its window aside): with -D
 * until the deadline, then on to its next signaled WR; with -n, iters. */
static bool
bw_to_post(const struct perf *pf, const struct perf_qp *pq, bool stop, uint64_t mod)
{
	return pf->p.duration ? !stop || pq->posted % mod != 0 : pq->posted < pf->p.iters;
}

/*
 * Client side of a bw run: keep every QP's send queue full, round robin.
 * One WR in `mod` asks for a completion (an unsignaled WR is known complete
 * when a later signaled one of its send queue is: completions come in
 * order), and so does the last: after the deadline a QP posts on to its next
 * signaled WR, so that every WR posted is seen complete.
 */
static void
bw_client(struct perf *pf, uint64_t size, struct bw_result *res)
{
	uint64_t slots = slots_for(pf, size), window, q, total_done = 0, mod;
	uint64_t nq = pf->p.qps;
	struct uroce_wc wc[POLL_BATCH];
	uint32_t opcode = bw_opcode(pf);
	double t0, deadline = 0, peak = 0, mark_t;
	uint64_t mark_done = 0, next_look, spins = 0;
	bool stop = false;

	if (pf->p.test == TEST_ATOMIC)
		slots = pf->p.tx_depth;   /* every FETCH_ADD lands in its own 8 B result slot */
	/* A signaled WR must fit in the window, or the window never drains. */
	mod = pf->cq_mod < slots ? pf->cq_mod : slots;
	window = nq * slots;
	next_look = window;
	for (q = 0; q < nq; q++)
		pf->qps[q].posted = pf->qps[q].completed = 0;
	t0 = now_us();
	mark_t = t0;
	if (pf->p.duration)
		deadline = t0 + (double)pf->p.duration * 1e6;
	for (;;) {
		bool more = false;
		int n, i;

		/* The deadline is looked at every CLOCK_SPINS busy polls: the clock
		 * (rdtscp, which waits for the loads before it) read once per poll
		 * held a third of this client's samples on a VM. */
		if (pf->p.duration && !stop && (pf->events || spins++ % CLOCK_SPINS == 0) &&
		    now_us() >= deadline)
			stop = true;
		for (q = 0; q < nq; q++) {
			struct perf_qp *pq = &pf->qps[q];

			while (bw_to_post(pf, pq, stop, mod) && pq->posted - pq->completed < slots) {
				uint64_t seq = pq->posted, slot = seq % slots;
				uint64_t wr_id = q << 32 | (seq & 0xffffffff);
				bool sig = bw_signaled(pf, seq, mod);
				uint8_t *l;

				if (pf->p.test == TEST_ATOMIC) {
					l = pq->local + slot * 8;
					post_rdma(pf, pq, opcode, wr_id, l, 0, 8, sig);
					continue;
				}
				l = pq->local + slot * size;
				if (pf->p.verify && pf->p.test == TEST_READ)
					memset(l, 0, size);
				else if (pf->p.verify)
					verify_fill(l, size, verify_seed(q, seq, size));
				post_rdma(pf, pq, opcode, wr_id, l, slot * size, (uint32_t)size,
					  sig);
			}
			if (pq->completed < pq->posted || bw_to_post(pf, pq, stop, mod))
				more = true;
		}
		if (!more && (stop || !pf->p.duration))
			break;
		n = poll_some(pf, wc);
		for (i = 0; i < n; i++) {
			uint64_t wq = wc[i].wr_id >> 32, seq = wc[i].wr_id & 0xffffffff;
			uint64_t upto;
			struct perf_qp *pq;

			if (wc[i].opcode >= UROCE_WC_RECV || wq >= nq)
				fatal("unexpected completion (opcode %u, wr_id %#" PRIx64 ")",
				      wc[i].opcode, wc[i].wr_id);
			pq = &pf->qps[wq];
			/* This completion and the unsignaled WRs before it. */
			upto = (seq - pq->completed) & 0xffffffff;
			/* completed sits on a multiple of mod: the completion must be
			 * for the first signaled WR in flight. */
			if (upto >= pq->posted - pq->completed || upto >= mod ||
			    !bw_signaled(pf, pq->completed + upto, mod))
				fatal("completion out of order on QP %" PRIu64, wq);
			if (pf->p.verify)
				for (uint64_t k = 0; k <= upto; k++)
					bw_verify_one(pf, wq, pq->completed + k, slots, size);
			pq->completed += upto + 1;
			total_done += upto + 1;
		}
		/* Peak: the best rate over an interval of at least PEAK_INTERVAL_US
		 * that also holds a full window of completions (completions come in
		 * bursts, so shorter intervals would measure the burst). The clock
		 * is read once per window of completions, not per poll. */
		if (total_done >= next_look) {
			double t = now_us();

			next_look = total_done + window;
			if (t - mark_t >= PEAK_INTERVAL_US) {
				double r = (double)(total_done - mark_done) * (double)size /
					   (t - mark_t);

				if (r > peak)
					peak = r;
				mark_t = t;
				mark_done = total_done;
			}
		}
	}
	res->usec = now_us() - t0;
	if (res->usec <= 0)
		res->usec = 1e-3; /* a clock step below resolution */
	res->msgs = total_done;
	res->iters = pf->qps[0].completed;
	for (q = 1; q < nq; q++)
		if (pf->qps[q].completed < res->iters)
			res->iters = pf->qps[q].completed;
	res->peak = peak / 1.048576; /* bytes/us -> MB (2^20 bytes)/s */
}

/* Server side of a bw send run: receive until every QP got what the client
 * says it sent (DONE arrives on the side channel while we poll). */
static void
bw_server_send(struct perf *pf, uint64_t size, uint64_t *hdr)
{
	struct uroce_wc wc[POLL_BATCH];
	bool done = false;
	uint64_t q;

	for (q = 0; q < pf->p.qps; q++)
		pf->qps[q].received = 0;
	for (;;) {
		int i, n;

		if (done) {
			for (q = 0; q < pf->p.qps; q++)
				if (pf->qps[q].received < pf->qps[q].peer_count)
					break;
			if (q == pf->p.qps)
				return;
		} else if ((pf->events || pf->spins % 256 == 0) && tcp_readable(pf)) {
			uint64_t counts[MAX_QPS];

			expect_cmd(pf, hdr, CMD_DONE);
			recv_words(pf, counts, pf->p.qps);
			for (q = 0; q < pf->p.qps; q++)
				pf->qps[q].peer_count = counts[q];
			done = true;
			continue;
		}
		pf->spins++;
		n = cq_poll(pf, wc);
		if (n < 0)
			poll_failed(pf, n);
		if (n == 0 && done)
			check_peer(pf); /* the client waits for RESULT: EOF means it died */
		for (i = 0; i < n; i++) {
			if (wc[i].status != UROCE_WC_SUCCESS)
				fatal("completion error %s (%u) on QP %u",
				      uroce_wc_status_name(wc[i].status), wc[i].status, wc[i].qp_num);
			if (wc[i].opcode != UROCE_WC_RECV)
				fatal("unexpected completion opcode %u", wc[i].opcode);
			on_recv(pf, &wc[i], size);
		}
	}
}

/* Server: after DONE, check the target areas (write) or counters (atomic). */
static uint64_t
server_check(struct perf *pf, uint64_t size)
{
	uint64_t q, checked = 0;

	for (q = 0; q < pf->p.qps && pf->p.verify; q++) {
		struct perf_qp *pq = &pf->qps[q];
		uint64_t total = pq->peer_count;

		if (pf->p.test == TEST_ATOMIC) {
			uint64_t v;

			memcpy(&v, pq->target, 8);
			if (v != total) {
				fprintf(stderr, PROG ": verify: QP %" PRIu64 " counter is %" PRIu64
					", expected %" PRIu64 " (the number of FETCH_ADDs)\n", q, v,
					total);
				pf->verify_failed = true;
			}
			checked += total;
		} else if (pf->p.test == TEST_WRITE && pf->p.mode == MODE_BW) {
			/* Each slot holds the last message written to it. */
			uint64_t slots = slots_for(pf, size), j;

			for (j = 0; j < slots && j < total; j++) {
				uint64_t seq = j + (total - 1 - j) / slots * slots;
				uint64_t off = verify_check(pq->target + j * size, size,
							    verify_seed(q, seq, size));

				if (off != size)
					verify_fail(pf, "RDMA WRITE target", q, seq, off);
				checked++;
			}
		} else if (pf->p.test == TEST_SEND) {
			checked += pq->received;
		}
	}
	return checked;
}

/* ---- latency */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Latency tests (QP 0): take what completed, receives and sends alike. */
static void
lat_poll(struct perf *pf, uint64_t size)
{
	struct uroce_wc wc[POLL_BATCH];
	int i, n = poll_some(pf, wc);

	for (i = 0; i < n; i++) {
		if (wc[i].opcode == UROCE_WC_RECV)
			on_recv(pf, &wc[i], size);
		else
			pf->qps[0].completed++;
	}
}

/* Wait for the last byte of the target's slot 0 to become @p mark. The
 * daemon writes the message's bytes in order, the last one last. */
static void
wait_mark(struct perf *pf, struct perf_qp *pq, uint64_t size, uint8_t mark)
{
	const uint8_t *last = pq->target + size - 1;

	while (__atomic_load_n(last, __ATOMIC_ACQUIRE) != mark)
		lat_poll(pf, size);
}

/* Wait for one receive completion (the send latency test). */
static void
wait_recv(struct perf *pf, uint64_t size)
{
	uint64_t before = pf->qps[0].received;

	while (pf->qps[0].received == before)
		lat_poll(pf, size);
}

/* Wait until every posted send WR of QP 0 completed. */
static void
wait_sends(struct perf *pf, struct perf_qp *pq, uint64_t size)
{
	while (pq->completed < pq->posted)
		lat_poll(pf, size);
}

static uint8_t
mark_of(uint64_t i)
{
	return (uint8_t)(i % 255 + 1);
}

/* One ping-pong side for write lat: the client writes first. Returns per
 * iteration round-trip times (client) in @p samples. */
static void
lat_pingpong(struct perf *pf, uint64_t size, double *samples)
{
	struct perf_qp *pq = &pf->qps[0];
	uint64_t i, n = pf->p.iters;
	bool write = pf->p.test == TEST_WRITE;
	uint8_t *src = pq->local;

	pq->posted = pq->completed = pq->received = 0;
	/* The client clears its target here (the server has not written yet);
	 * the server cleared its own before READY. */
	if (write && !pf->server)
		memset(pq->target, 0, size);
	for (i = 0; i < n; i++) {
		double t0 = now_us();
		uint64_t seed = verify_seed(0, i, size);

		if (pf->server) {
			/* pong: wait for the ping, then answer with the same message */
			if (write) {
				wait_mark(pf, pq, size, mark_of(i));
				if (pf->p.verify &&
				    verify_check(pq->target, size - 1, seed) != size - 1)
					verify_fail(pf, "RDMA WRITE ping", 0, i,
						    verify_check(pq->target, size - 1, seed));
			} else {
				wait_recv(pf, size);
			}
		}
		if (pf->p.verify)
			verify_fill(src, size, seed);
		if (write)
			src[size - 1] = mark_of(i);
		wait_sends(pf, pq, size); /* the source buffer is ours again */
		post_rdma(pf, pq, write ? UROCE_WR_RDMA_WRITE : UROCE_WR_SEND, i, src, 0,
			  (uint32_t)size, true);
		if (!pf->server) {
			if (write) {
				wait_mark(pf, pq, size, mark_of(i));
				if (pf->p.verify &&
				    verify_check(pq->target, size - 1, seed) != size - 1)
					verify_fail(pf, "RDMA WRITE pong", 0, i,
						    verify_check(pq->target, size - 1, seed));
			} else {
				wait_recv(pf, size);
			}
			samples[i] = now_us() - t0;
		}
	}
	wait_sends(pf, pq, size);
	pq->peer_count = n;
}

/* read / atomic lat: one operation outstanding at a time. */
static void
lat_single(struct perf *pf, uint64_t size, double *samples)
{
	struct perf_qp *pq = &pf->qps[0];
	bool atomic = pf->p.test == TEST_ATOMIC;
	struct uroce_wc wc[POLL_BATCH];
	uint64_t i;

	pq->posted = pq->completed = 0;
	for (i = 0; i < pf->p.iters; i++) {
		double t0 = now_us();

		if (pf->p.verify && !atomic)
			memset(pq->local, 0, size);
		post_rdma(pf, pq, atomic ? UROCE_WR_ATOMIC_FETCH_AND_ADD : UROCE_WR_RDMA_READ,
			  i, pq->local, 0, (uint32_t)size, true);
		while (pq->completed < pq->posted)
			pq->completed += (uint64_t)poll_some(pf, wc);
		samples[i] = now_us() - t0;
		if (!pf->p.verify)
			continue;
		if (atomic) {
			uint64_t got;

			memcpy(&got, pq->local, 8);
			if (got != i) {
				fprintf(stderr, PROG ": verify: FETCH_ADD %" PRIu64 " fetched %"
					PRIu64 "\n", i, got);
				pf->verify_failed = true;
			}
		} else if (verify_check(pq->local, size, verify_seed(0, 0, size)) != size) {
			verify_fail(pf, "RDMA READ data", 0, i,
				    verify_check(pq->local, size, verify_seed(0, 0, size)));
		}
	}
}

/* ---- output */

#define RULE "-------------------------------------------" \
	"--------------------------------------------\n"

static void
print_header(struct perf *pf)
{
	uint64_t q;
	char g[INET6_ADDRSTRLEN];

	printf(RULE);
	printf("                    %s %s Test\n", test_titles[pf->p.test],
	       pf->p.mode == MODE_BW ? "BW" : "Latency");
	printf(" Number of qps   : %" PRIu64 "\t\tTransport type : RoCEv2 (uroce)\n", pf->p.qps);
	printf(" Connection type : RC\t\tUsing SRQ      : OFF\n");
	printf(" Role            : %s\n", pf->server ? "server" : "client (requester)");
	if (pf->p.mode == MODE_BW)
		printf(" TX depth        : %" PRIu64 "\n", pf->p.tx_depth);
	if (pf->p.mode == MODE_BW && !pf->server)
		printf(" CQ Moderation   : %" PRIu64 " (at most the WRs in flight)\n", pf->cq_mod);
	printf(" Mtu             : %u[B]\n", 128u << pf->path_mtu);
	if (pf->p.duration)
		printf(" Duration        : %" PRIu64 "[sec] per size\n", pf->p.duration);
	else
		printf(" Iterations      : %" PRIu64 " per QP\n", pf->p.iters);
	printf(" Data verify     : %s\n", pf->p.verify ? "ON" : "OFF");
	printf(" Use events      : %s\n", pf->events ? "ON (sleep on the CQ's fd)" : "OFF (busy poll)");
	printf(" Timer           : clock_gettime(CLOCK_MONOTONIC)\n");
	printf(RULE);
	for (q = 0; q < pf->p.qps; q++) {
		struct perf_qp *pq = &pf->qps[q];

		inet_ntop(AF_INET6, pf->gid, g, sizeof(g));
		printf(" local address: QPN %#06" PRIx64 " PSN %#08" PRIx64 " RKey %#010" PRIx64
		       " VAddr %#018" PRIx64 "\n GID: %s\n", pq->me.qpn, pq->me.psn, pq->me.rkey,
		       pq->me.va, g);
	}
	for (q = 0; q < pf->p.qps; q++) {
		struct perf_qp *pq = &pf->qps[q];

		inet_ntop(AF_INET6, pf->peer_gid, g, sizeof(g));
		printf(" remote address: QPN %#06" PRIx64 " PSN %#08" PRIx64 " RKey %#010" PRIx64
		       " VAddr %#018" PRIx64 "\n GID: %s\n", pq->peer.qpn, pq->peer.psn,
		       pq->peer.rkey, pq->peer.va, g);
	}
	printf(RULE);
	if (pf->server)
		return;
	if (pf->p.mode == MODE_BW)
		printf(" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]"
		       "   MsgRate[Mpps]\n");
	else
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]"
		       "    t_avg[usec]    t_stdev[usec]   99%% percentile[usec]"
		       "   99.9%% percentile[usec] \n");
	fflush(stdout);
}

static void
print_bw(uint64_t size, const struct bw_result *r)
{
	double avg = (double)r->msgs * (double)size / r->usec / 1.048576;
	double peak = r->peak > avg ? r->peak : avg;

	printf(" %-10" PRIu64 " %-10" PRIu64 "     %-14.2f     %-14.2f       %-.6f\n", size,
	       r->iters, peak, avg, (double)r->msgs / r->usec);
	fflush(stdout);
}

static void
print_lat(struct perf *pf, uint64_t size, double *s, uint64_t n)
{
	double sum = 0, var = 0, avg;
	uint64_t i, i99, i999;

	/* Ping-pong tests report half the round trip, as perftest does. */
	if (pf->p.test == TEST_WRITE || pf->p.test == TEST_SEND)
		for (i = 0; i < n; i++)
			s[i] /= 2;
	qsort(s, n, sizeof(*s), cmp_double);
	for (i = 0; i < n; i++)
		sum += s[i];
	avg = sum / (double)n;
	for (i = 0; i < n; i++)
		var += (s[i] - avg) * (s[i] - avg);
	i99 = (uint64_t)ceil(0.99 * (double)n) - 1;
	i999 = (uint64_t)ceil(0.999 * (double)n) - 1;
	printf(" %-7" PRIu64 " %-10" PRIu64 "   %-10.2f     %-10.2f     %-10.2f       %-10.2f"
	       "     %-10.2f       %-10.2f              %-10.2f\n", size, n, s[0], s[n - 1],
	       s[n / 2], avg, sqrt(var / (double)n), s[i99], s[i999]);
	fflush(stdout);
}

/* ---- the run */

static void
run_size(struct perf *pf, uint64_t size, double *samples)
{
	uint64_t hdr[3], w[4], counts[MAX_QPS], q, checked = 0;
	struct bw_result res = {0};

	if (!pf->server) {
		w[0] = MSG_MAGIC;
		w[1] = CMD_START;
		w[2] = size;
		send_words(pf, w, 3);
		recv_words(pf, w, 2);       /* READY */
		if (w[0] != MSG_MAGIC || w[1] != 0)
			fatal("the server could not prepare size %" PRIu64, size);
		if (pf->p.mode == MODE_BW)
			bw_client(pf, size, &res);
		else if (pf->p.test == TEST_WRITE || pf->p.test == TEST_SEND)
			lat_pingpong(pf, size, samples);
		else
			lat_single(pf, size, samples);
		w[0] = MSG_MAGIC;
		w[1] = CMD_DONE;
		send_words(pf, w, 2);
		for (q = 0; q < pf->p.qps; q++)
			counts[q] = pf->p.mode == MODE_BW ? pf->qps[q].completed : pf->p.iters;
		send_words(pf, counts, pf->p.qps);
		recv_words(pf, w, 4);       /* RESULT: magic, failed, checked, size */
		if (w[0] != MSG_MAGIC || w[3] != size)
			fatal("peer sent a malformed result");
		if (pf->p.mode == MODE_BW)
			print_bw(size, &res);
		else
			print_lat(pf, size, samples, pf->p.iters);
		if (w[1] != 0) {
			fprintf(stderr, PROG ": verify: the server found bad data at size %" PRIu64
				"\n", size);
			pf->verify_failed = true;
		}
		return;
	}

	/* Server: prepare the target areas for this size. */
	for (q = 0; q < pf->p.qps; q++) {
		struct perf_qp *pq = &pf->qps[q];
		uint64_t j, slots = slots_for(pf, size);

		if (pf->p.test == TEST_READ)
			for (j = 0; j < slots; j++)
				verify_fill(pq->target + j * size, size,
					    verify_seed(q, pf->p.mode == MODE_LAT ? 0 : j, size));
		else if (pf->p.test == TEST_ATOMIC)
			memset(pq->target, 0, 8);
		else if (pf->p.test == TEST_WRITE && (pf->p.mode == MODE_LAT || pf->p.verify))
			memset(pq->target, 0, pf->area);
	}
	w[0] = MSG_MAGIC;
	w[1] = 0;
	send_words(pf, w, 2);           /* READY */
	if (pf->p.mode == MODE_LAT && (pf->p.test == TEST_WRITE || pf->p.test == TEST_SEND)) {
		lat_pingpong(pf, size, samples);
		expect_cmd(pf, hdr, CMD_DONE);
		recv_words(pf, counts, pf->p.qps);
	} else if (pf->p.test == TEST_SEND) {
		bw_server_send(pf, size, hdr);
	} else {
		expect_cmd(pf, hdr, CMD_DONE);
		recv_words(pf, counts, pf->p.qps);
		for (q = 0; q < pf->p.qps; q++)
			pf->qps[q].peer_count = counts[q];
	}
	checked = server_check(pf, size);
	if (pf->p.mode == MODE_LAT && (pf->p.test == TEST_WRITE || pf->p.test == TEST_SEND))
		checked = pf->p.verify ? pf->p.iters : 0;
	w[0] = MSG_MAGIC;
	w[1] = pf->verify_failed;
	w[2] = checked;
	w[3] = size;
	send_words(pf, w, 4);
	if (pf->p.verify)
		printf(" %-10" PRIu64 " verify %s (%" PRIu64 " messages checked on this side)\n",
		       size, pf->verify_failed ? "FAILED" : "OK", checked);
	fflush(stdout);
}

static void
run(struct perf *pf)
{
	uint64_t size, hdr[3], q;
	double *samples = NULL;

	if (pf->p.mode == MODE_LAT) {
		samples = calloc(pf->p.iters, sizeof(*samples));
		if (samples == NULL)
			fatal("out of memory for %" PRIu64 " samples", pf->p.iters);
	}
	for (q = 0; q < pf->p.qps; q++)
		connect_qp(pf, &pf->qps[q]);
	if (pf->p.test == TEST_SEND)
		for (q = 0; q < pf->p.qps; q++)
			post_recvs(pf, &pf->qps[q], q);
	print_header(pf);
	if (!pf->server) {
		for (size = pf->p.sweep ? SWEEP_MIN : pf->p.size; size <= pf->p.max_size;
		     size *= 2) {
			if (pf->p.test == TEST_ATOMIC)
				size = 8;
			run_size(pf, size, samples);
			if (!pf->p.sweep || pf->p.test == TEST_ATOMIC)
				break;
		}
		hdr[0] = MSG_MAGIC;
		hdr[1] = CMD_BYE;
		send_words(pf, hdr, 2);
	} else {
		for (;;) {
			recv_words(pf, hdr, 2);
			if (hdr[0] != MSG_MAGIC || (hdr[1] != CMD_START && hdr[1] != CMD_BYE))
				fatal("peer sent a malformed side-channel message");
			if (hdr[1] == CMD_BYE)
				break;
			recv_words(pf, &hdr[2], 1);
			if (hdr[2] < 1 || hdr[2] > pf->p.max_size)
				fatal("peer asked for size %" PRIu64, hdr[2]);
			run_size(pf, hdr[2], samples);
		}
	}
	printf(RULE);
	free(samples);
}

static const struct option long_opts[] = {
	{"size", required_argument, NULL, 's'},
	{"all", no_argument, NULL, 'a'},
	{"max-size", required_argument, NULL, 'M'},
	{"qps", required_argument, NULL, 'q'},
	{"iters", required_argument, NULL, 'n'},
	{"duration", required_argument, NULL, 'D'},
	{"tx-depth", required_argument, NULL, 't'},
	{"cq-mod", required_argument, NULL, 'Q'},
	{"verify", no_argument, NULL, 'Y'},
	{"events", no_argument, NULL, 'e'},
	{"socket", required_argument, NULL, 'S'},
	{"gid-index", required_argument, NULL, 'x'},
	{"mtu", required_argument, NULL, 'm'},
	{"port", required_argument, NULL, 'p'},
	{"qp-timeout", required_argument, NULL, 'u'},
	{"bind", required_argument, NULL, 'B'},
	{"hold", required_argument, NULL, 'H'},
	{"allow-offlink", no_argument, NULL, 'O'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static void
parse_args(struct perf *pf, int argc, char **argv)
{
	const char *pos[3];
	int c, npos = 0, i;
	bool size_set = false, max_set = false;
	uint64_t v;

	memset(pf, 0, sizeof(*pf));
	pf->port = DEFAULT_PORT;
	pf->bind_addr = "127.0.0.1";
	pf->qp_timeout = 14; /* perftest's default */
	pf->p.qps = 1;
	pf->p.tx_depth = DEFAULT_TX_DEPTH;
	pf->cq_mod = DEFAULT_CQ_MOD;
	pf->p.max_size = SWEEP_MAX;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:aq:n:D:t:Q:p:x:m:u:ehV", long_opts, NULL)) != -1) {
		switch (c) {
		case 's':
			pf->p.size = cli_num_or_exit("-s", optarg, CLI_BYTES, 1, SWEEP_MAX);
			size_set = true;
			break;
		case 'a':
			pf->p.sweep = 1;
			break;
		case 'M':
			pf->p.max_size = cli_num_or_exit("--max-size", optarg, CLI_BYTES,
							 SWEEP_MIN, SWEEP_MAX);
			max_set = true;
			break;
		case 'q':
			pf->p.qps = cli_num_or_exit("-q", optarg, CLI_PLAIN, 1, MAX_QPS);
			break;
		case 'n':
			pf->p.iters = cli_num_or_exit("-n", optarg, CLI_COUNT, 1, MAX_ITERS);
			break;
		case 'D':
			pf->p.duration = cli_num_or_exit("-D", optarg, CLI_PLAIN, 1, MAX_DURATION);
			break;
		case 't':
			pf->p.tx_depth = cli_num_or_exit("-t", optarg, CLI_PLAIN, 1, 4096);
			break;
		case 'Q':
			pf->cq_mod = cli_num_or_exit("-Q", optarg, CLI_PLAIN, 1, 4096);
			break;
		case 'Y':
			pf->p.verify = 1;
			break;
		case 'e':
			pf->events = true;
			break;
		case 'S':
			pf->sock_path = optarg;
			break;
		case 'x':
			pf->gid_index = (uint8_t)cli_num_or_exit("-x", optarg, CLI_PLAIN, 0, 15);
			break;
		case 'm':
			v = cli_num_or_exit("-m", optarg, CLI_BYTES, 256, 4096);
			/* IBA MTU enum: 1 is 256 bytes ... 5 is 4096 */
			for (pf->want_mtu = 1; pf->want_mtu <= 5; pf->want_mtu++)
				if (128u << pf->want_mtu == v)
					break;
			if (pf->want_mtu > 5)
				cli_usage_error("-m %s: one of 256, 512, 1024, 2048, 4096", optarg);
			break;
		case 'u':
			pf->qp_timeout = (uint8_t)cli_num_or_exit("-u", optarg, CLI_PLAIN, 1, 31);
			break;
		case 'p':
			pf->port = (uint16_t)cli_num_or_exit("-p", optarg, CLI_PLAIN, 1, 65535);
			break;
		case 'B':
			pf->bind_addr = optarg;
			break;
		case 'O':
			pf->allow_offlink = true;
			break;
		case 'H':
			pf->hold = (unsigned int)cli_num_or_exit("--hold", optarg, CLI_PLAIN, 1,
								 MAX_DURATION);
			break;
		case 'h':
			cli_help();
		case 'V':
			cli_version();
		default:
			cli_getopt_error(c, argv);
		}
	}
	for (i = optind; i < argc; i++) {
		if (npos == 3)
			cli_usage_error("too many arguments ('%s')", argv[i]);
		pos[npos++] = argv[i];
	}
	if (npos < 2)
		cli_usage_error("TEST and MODE are required");
	for (i = 0; i < 4; i++)
		if (strcmp(pos[0], test_names[i]) == 0)
			break;
	if (i == 4)
		cli_usage_error("unknown test '%s' (write, read, send or atomic)", pos[0]);
	pf->p.test = (uint64_t)i;
	if (strcmp(pos[1], "bw") == 0)
		pf->p.mode = MODE_BW;
	else if (strcmp(pos[1], "lat") == 0)
		pf->p.mode = MODE_LAT;
	else
		cli_usage_error("unknown mode '%s' (bw or lat)", pos[1]);
	pf->server = npos < 3;
	pf->peer_addr = npos == 3 ? pos[2] : NULL;
	if (!pf->server && inet_pton(AF_INET, pf->peer_addr, &pf->peer_in) != 1)
		cli_usage_error("SERVER_IP '%s' is not an IPv4 address", pf->peer_addr);
	if (!pf->server)
		check_bench_net(pf, pf->peer_in);
	else if (pf->allow_offlink)
		cli_usage_error("--allow-offlink is for the client (a SERVER_IP given)");

	if (pf->p.iters && pf->p.duration)
		cli_usage_error("-n and -D exclude each other");
	if (pf->events && pf->p.test == TEST_WRITE && pf->p.mode == MODE_LAT)
		cli_usage_error("-e: write lat waits for the peer's bytes in memory, with no "
			  "completion to sleep on (as perftest: events are not available "
			  "for the write latency test)");
	if (pf->p.duration && pf->p.mode == MODE_LAT)
		cli_usage_error("-D is supported in bw mode only; use -n in lat mode");
	if (pf->p.qps > 1 && pf->p.mode == MODE_LAT)
		cli_usage_error("-q is supported in bw mode only (latency uses one QP)");
	if (size_set && pf->p.sweep)
		cli_usage_error("-s and -a exclude each other (use --max-size to bound -a)");
	if (max_set && !pf->p.sweep)
		cli_usage_error("--max-size needs -a");
	if (pf->p.test == TEST_ATOMIC && size_set && pf->p.size != 8)
		cli_usage_error("atomic messages are 8 bytes (-s 8)");
	if (!pf->p.duration && !pf->p.iters)
		pf->p.iters = pf->p.mode == MODE_BW ? DEFAULT_BW_ITERS : DEFAULT_LAT_ITERS;
	if (pf->p.test == TEST_ATOMIC) {
		pf->p.size = 8;
		pf->p.max_size = 8;
	} else if (!pf->p.sweep) {
		if (!size_set)
			pf->p.size = pf->p.mode == MODE_BW ? 65536 : 2;
		pf->p.max_size = pf->p.size;
	}
	if (pf->p.max_size < 2)
		pf->p.max_size = 2; /* a 1-byte run still gets two slots */
}

int
main(int argc, char **argv)
{
	struct perf *pf = calloc(1, sizeof(*pf));

	cli_init(PROG, usage);
	if (pf == NULL)
		fatal("out of memory");
	/* A mode of its own (sink.c): receive-side QPs for packet generators. */
	if (argc > 1 && strcmp(argv[1], "sink") == 0) {
		free(pf);
		return sink_main(argc - 1, argv + 1);
	}
	parse_args(pf, argc, argv);
	signal(SIGPIPE, SIG_IGN);
	open_device(pf);
	if (pf->server)
		tcp_server(pf);
	else
		tcp_client(pf);
	exchange_params(pf);
	create_resources(pf);
	fatal_hold = pf->hold;
	exchange_qps(pf);
	run(pf);
	if (pf->events)
		printf(" CQ sleeps       : %" PRIu64 " (-e: times this side slept on the CQ's fd)\n",
		       pf->cq_sleeps);
	if (pf->hold != 0) {
		/* The run is over and reported; the QPs stay as they are (the
		 * peer may already be gone) until the hold ends. */
		fflush(stdout);
		sleep(pf->hold);
	}
	close_device(pf);
	close(pf->fd);
	if (pf->verify_failed) {
		if (verify_bad > VERIFY_SHOW)
			fprintf(stderr, PROG ": verify: %" PRIu64 " bad messages in all (the first %u"
				" shown)\n", verify_bad, VERIFY_SHOW);
		fprintf(stderr, PROG ": data verification FAILED\n");
		free(pf);
		return 1;
	}
	free(pf);
	return 0;
}
