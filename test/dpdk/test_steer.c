/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * drivers/net steering (uroce_steer.h) on real PMDs, under EAL with
 * --no-huge --no-pci and a file prefix of its own (its runtime directory is
 * removed at exit):
 *
 *   net_ring  Expect: no rte_flow is tried; -ENOTSUP and a reason that names
 *             net_ring and the software hand-off; no rule held. Bad arguments
 *             (no such port, no such queue, NULL reason buffer) are refused
 *             with their errno, a short reason buffer is truncated, not
 *             overrun.
 *   net_tap   (root: the process moves itself into a network namespace of
 *             its own, so the tap interface and its traffic never leave it)
 *             Two RX queues. Frames are sent into the tap from the kernel side
 *             through an AF_PACKET socket: RoCEv2 (UDP 4791) over IPv4, IPv6,
 *             VLAN/IPv4, VLAN/IPv6, and UDP to port 4792 (not RoCEv2), with
 *             many UDP source ports so that the kernel spreads them over both
 *             queues.
 *             Expect: either install returns 0, holds rules, and every RoCEv2
 *             frame of a steered pattern arrives on RX queue 0 while non-RoCEv2
 *             frames all still arrive; or it returns a negative errno with a
 *             reason naming net_tap, and holds nothing. After remove: no rule
 *             held, rte_flow_flush() accepts the port, and (when the baseline
 *             showed spreading) RoCEv2 frames reach queue 1 again.
 *
 * A plain program, not Criterion: EAL starts once per process. Exit 0 pass,
 * 1 fail, 77 skip (meson SKIP: not root, so the net_tap half did not run).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_mbuf.h>

#include "uroce_steer.h"

#define NQ 2            /* RX queues of the tap port */
#define PER_KIND 64     /* frames of each kind per round */
#define SEND_BATCH 16   /* frames sent before the queues are drained */

enum kind {
	K_V4,        /* ETH / IPv4 / UDP 4791 */
	K_V6,        /* ETH / IPv6 / UDP 4791 */
	K_VLAN_V4,   /* ETH / VLAN 100 / IPv4 / UDP 4791 */
	K_VLAN_V6,   /* ETH / VLAN 100 / IPv6 / UDP 4791 */
	K_OTHER,     /* ETH / IPv4 / UDP 4792: not RoCEv2 */
	K_MAX,
};

static const char *const kind_name[K_MAX] = {
	"ipv4", "ipv6", "vlan/ipv4", "vlan/ipv6", "udp4792",
};

static const uint8_t smac[6] = { 0x02, 0x00, 0xc6, 0x12, 0x07, 0x01 };
static const uint8_t dmac[6] = { 0x02, 0x00, 0xc6, 0x12, 0x07, 0x02 };

static int fails;

#define CHECK(cond, ...) do { \
		bool ok_ = (cond); \
		printf("test_steer: %s: ", ok_ ? "ok" : "FAIL"); \
		printf(__VA_ARGS__); \
		printf("\n"); \
		if (!ok_) \
			fails++; \
	} while (0)

static void
skip_loud(const char *why)
{
	fprintf(stderr, "\ntest_steer: SKIP: %s\n\n", why);
	printf("test_steer: SKIP: %s\n", why);
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t
ipv4_csum(const uint8_t *h)
{
	uint32_t s = 0;
	int i;

	for (i = 0; i < 20; i += 2)
		s += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* One test frame; *ethertype gets the outer EtherType (for sll_protocol). */
static size_t
build(uint8_t *b, enum kind k, unsigned int i, uint16_t *ethertype)
{
	bool vlan = k == K_VLAN_V4 || k == K_VLAN_V6;
	bool v6 = k == K_V6 || k == K_VLAN_V6;
	const size_t payload = 16; /* a BTH and an ICRC's worth; not parsed here */
	size_t off = 12, udp;

	memcpy(b, dmac, 6);
	memcpy(b + 6, smac, 6);
	if (vlan) {
		put16(b + off, 0x8100);
		put16(b + off + 2, 100);
		off += 4;
	}
	put16(b + off, v6 ? 0x86dd : 0x0800);
	off += 2;
	*ethertype = vlan ? 0x8100 : v6 ? 0x86dd : 0x0800;
	if (v6) {
		memset(b + off, 0, 40);
		b[off] = 0x60;
		put16(b + off + 4, (uint16_t)(8 + payload));
		b[off + 6] = 17;
		b[off + 7] = 64;
		/* 2001:2::7:1 -> 2001:2::7:2 */
		put16(b + off + 8, 0x2001);
		put16(b + off + 10, 0x0002);
		put16(b + off + 20, 0x0007);
		put16(b + off + 22, 0x0001);
		put16(b + off + 24, 0x2001);
		put16(b + off + 26, 0x0002);
		put16(b + off + 36, 0x0007);
		put16(b + off + 38, 0x0002);
		udp = off + 40;
	} else {
		memset(b + off, 0, 20);
		b[off] = 0x45;
		put16(b + off + 2, (uint16_t)(20 + 8 + payload));
		b[off + 8] = 64;
		b[off + 9] = 17;
		/* 198.18.7.1 -> 198.18.7.2 */
		b[off + 12] = 198, b[off + 13] = 18, b[off + 14] = 7, b[off + 15] = 1;
		b[off + 16] = 198, b[off + 17] = 18, b[off + 18] = 7, b[off + 19] = 2;
		put16(b + off + 10, ipv4_csum(b + off));
		udp = off + 20;
	}
	/* Source port: flow entropy in 0xC000-0xFFFF, different per frame. */
	put16(b + udp, (uint16_t)(0xc000 + i * 97));
	put16(b + udp + 2, k == K_OTHER ? 4792 : 4791);
	put16(b + udp + 4, (uint16_t)(8 + payload));
	put16(b + udp + 6, 0);
	memset(b + udp + 8, 0, payload);
	b[udp + 8] = (uint8_t)k;
	return udp + 8 + payload;
}

/* The kind of a frame we sent, or -1 for anything else (kernel chatter). */
static int
classify(const uint8_t *b, size_t len)
{
	size_t off = 12, udp;
	uint16_t et, dport;
	bool vlan = false;

	if (len < 14 || memcmp(b + 6, smac, 6) != 0)
		return -1;
	et = (uint16_t)(b[off] << 8 | b[off + 1]);
	if (et == 0x8100) {
		vlan = true;
		off += 4;
		if (len < off + 2)
			return -1;
		et = (uint16_t)(b[off] << 8 | b[off + 1]);
	}
	off += 2;
	if (et == 0x0800)
		udp = off + 20;
	else if (et == 0x86dd)
		udp = off + 40;
	else
		return -1;
	if (len < udp + 8)
		return -1;
	dport = (uint16_t)(b[udp + 2] << 8 | b[udp + 3]);
	if (dport == 4792)
		return vlan || et != 0x0800 ? -1 : K_OTHER;
	if (dport != 4791)
		return -1;
	if (et == 0x0800)
		return vlan ? K_VLAN_V4 : K_V4;
	return vlan ? K_VLAN_V6 : K_V6;
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* EAL leaves its runtime directory (config, mp socket) behind: remove ours. */
static void
rm_runtime_dir(const char *dir, const char *prefix)
{
	const char *base = strrchr(dir, '/');

	/* Only a directory named after our own, unique, file prefix. */
	if (dir[0] == '\0' || base == NULL || strcmp(base + 1, prefix) != 0)
		return;
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Drain both RX queues into cnt[kind][queue]; returns frames of ours seen. */
static unsigned int
drain(uint16_t port, unsigned int cnt[K_MAX][NQ])
{
	struct rte_mbuf *m[32];
	unsigned int seen = 0;
	uint16_t q, n, j;

	for (q = 0; q < NQ; q++) {
		do {
			n = rte_eth_rx_burst(port, q, m, RTE_DIM(m));
			for (j = 0; j < n; j++) {
				int k = classify(rte_pktmbuf_mtod(m[j], const uint8_t *),
						 m[j]->data_len);

				if (k >= 0) {
					cnt[k][q]++;
					seen++;
				}
				rte_pktmbuf_free(m[j]);
			}
		} while (n > 0);
	}
	return seen;
}

/*
 * One round: PER_KIND frames of every kind into the tap from the kernel
 * side; cnt[kind][queue] says where they came out. Returns frames sent.
 */
static unsigned int
round_trip(int fd, int ifindex, uint16_t port, unsigned int cnt[K_MAX][NQ])
{
	uint8_t buf[128];
	unsigned int i, sent = 0, seen = 0;
	uint64_t deadline;
	int k;

	memset(cnt, 0, sizeof(unsigned int) * K_MAX * NQ);
	for (i = 0; i < PER_KIND; i++) {
		for (k = 0; k < K_MAX; k++) {
			struct sockaddr_ll sll;
			uint16_t et;
			size_t len = build(buf, (enum kind)k, i, &et);

			memset(&sll, 0, sizeof(sll));
			sll.sll_family = AF_PACKET;
			sll.sll_ifindex = ifindex;
			/* skb->protocol: tc flower matches on it */
			sll.sll_protocol = htons(et);
			sll.sll_halen = 6;
			memcpy(sll.sll_addr, dmac, 6);
			if (sendto(fd, buf, len, 0, (struct sockaddr *)&sll, sizeof(sll)) ==
			    (ssize_t)len)
				sent++;
		}
		if (i % SEND_BATCH == SEND_BATCH - 1)
			seen += drain(port, cnt);
	}
	deadline = now_ms() + 500;
	while (seen < sent && now_ms() < deadline) {
		seen += drain(port, cnt);
		usleep(1000);
	}
	return sent;
}

static void
show(const char *title, unsigned int cnt[K_MAX][NQ])
{
	int k;

	printf("test_steer: %s:", title);
	for (k = 0; k < K_MAX; k++)
		printf(" %s q0=%u q1=%u;", kind_name[k], cnt[k][0], cnt[k][1]);
	printf("\n");
}

static int
port_up(uint16_t port, uint16_t nq, struct rte_mempool *mp)
{
	struct rte_eth_conf conf;
	uint16_t q;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(port, nq, nq, &conf);
	for (q = 0; rc == 0 && q < nq; q++) {
		rc = rte_eth_rx_queue_setup(port, q, 256, SOCKET_ID_ANY, NULL, mp);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(port, q, 256, SOCKET_ID_ANY, NULL);
	}
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	return rc;
}

static void
test_ring(struct rte_mempool *mp)
{
	char why[256], tiny[8];
	uint16_t port;
	int rc;

	rc = rte_dev_probe("net_ring0");
	CHECK(rc == 0, "net_ring0 created (rc %d)", rc);
	if (rc != 0)
		return;
	rc = rte_eth_dev_get_port_by_name("net_ring0", &port);
	CHECK(rc == 0, "net_ring0 has an ethdev port");
	if (rc != 0)
		return;
	rc = port_up(port, 1, mp);
	CHECK(rc == 0, "net_ring0 configured and started (rc %d)", rc);
	if (rc != 0)
		return;

	/* Expect: known software family, no rte_flow attempt, a reason. */
	rc = uroce_steer_install(port, 0, why, sizeof(why));
	printf("test_steer: net_ring install: rc %d why \"%s\"\n", rc, why);
	CHECK(rc == -ENOTSUP, "net_ring: -ENOTSUP (got %d)", rc);
	CHECK(strstr(why, "net_ring") != NULL && strstr(why, "software hand-off") != NULL,
	      "net_ring: the reason names the driver and the software hand-off");
	CHECK(uroce_steer_rules(port) == 0, "net_ring: no rule held");

	/* Expect: bad arguments refused with their errno and a reason. */
	rc = uroce_steer_install(port, 1, why, sizeof(why));
	CHECK(rc == -EINVAL && strstr(why, "RX queue 1") != NULL,
	      "queue 1 of a 1-queue port: -EINVAL, \"%s\" (got %d)", why, rc);
	rc = uroce_steer_install(RTE_MAX_ETHPORTS - 1, 0, why, sizeof(why));
	CHECK(rc == -ENODEV && strstr(why, "no such ethdev port") != NULL,
	      "unused port id %u: -ENODEV, \"%s\" (got %d)", RTE_MAX_ETHPORTS - 1, why, rc);
	rc = uroce_steer_install(port, 0, NULL, 16);
	CHECK(rc == -EINVAL, "NULL reason buffer with len 16: -EINVAL (got %d)", rc);
	rc = uroce_steer_install(port, 0, NULL, 0);
	CHECK(rc == -ENOTSUP, "NULL reason buffer with len 0: still -ENOTSUP (got %d)", rc);
	memset(tiny, 'x', sizeof(tiny));
	rc = uroce_steer_install(port, 0, tiny, sizeof(tiny));
	CHECK(rc == -ENOTSUP && strlen(tiny) == sizeof(tiny) - 1 &&
	      strncmp(tiny, "net_rin", 7) == 0,
	      "8-byte reason buffer: truncated to \"%s\", terminated", tiny);

	/* Expect: remove of a port without rules, or of no port, is a no-op. */
	uroce_steer_remove(port);
	uroce_steer_remove(RTE_MAX_ETHPORTS - 1);
	uroce_steer_remove(UINT16_MAX);
	CHECK(uroce_steer_rules(port) == 0 && uroce_steer_rules(UINT16_MAX) == 0,
	      "remove without rules and on bad port ids: no-op");

	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
	rte_eal_hotplug_remove("vdev", "net_ring0");
}

/* 1 when tap ran, 0 when it was skipped (reason printed). */
static int
test_tap(struct rte_mempool *mp)
{
	unsigned int base[K_MAX][NQ], on[K_MAX][NQ], off[K_MAX][NQ];
	char why[512], args[64], iface[IFNAMSIZ], path[128];
	bool spread = false, steered[K_MAX] = { false };
	struct rte_flow_error ferr;
	unsigned int sent, n_rules;
	int rc, fd, ifindex, k;
	uint16_t port;
	FILE *f;

	if (geteuid() != 0) {
		skip_loud("net_tap half not run: needs root (tap interface, network namespace, "
			  "AF_PACKET); only the net_ring half ran");
		return 0;
	}
	if (access("/dev/net/tun", R_OK | W_OK) != 0) {
		skip_loud("net_tap half not run: no /dev/net/tun");
		return 0;
	}
	snprintf(iface, sizeof(iface), "ust%d", (int)(getpid() % 100000));
	snprintf(args, sizeof(args), "net_tap0,iface=%s", iface);
	rc = rte_dev_probe(args);
	CHECK(rc == 0, "net_tap0 (%s) created in the test's own netns (rc %d)", iface, rc);
	if (rc != 0)
		return 1;
	rc = rte_eth_dev_get_port_by_name("net_tap0", &port);
	CHECK(rc == 0, "net_tap0 has an ethdev port");
	if (rc != 0)
		return 1;
	rc = port_up(port, NQ, mp);
	CHECK(rc == 0, "net_tap0 configured with %d RX queues and started (rc %d)", NQ, rc);
	if (rc != 0)
		goto out;
	/* Keep the kernel quiet on the tap: no IPv6 autoconfiguration chatter. */
	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", iface);
	f = fopen(path, "w");
	if (f != NULL) {
		fputs("1\n", f);
		fclose(f);
	}
	ifindex = (int)if_nametoindex(iface);
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	CHECK(ifindex > 0 && fd >= 0, "AF_PACKET socket on %s (ifindex %d)", iface, ifindex);
	if (ifindex <= 0 || fd < 0)
		goto out;
	rte_delay_ms(100);

	/* Baseline: no rules. Where does the kernel put the frames? */
	sent = round_trip(fd, ifindex, port, base);
	show("baseline without rules", base);
	CHECK(sent == PER_KIND * K_MAX, "baseline: %u frames sent", sent);
	for (k = 0; k < K_MAX; k++) {
		CHECK(base[k][0] + base[k][1] == PER_KIND, "baseline %s: %u of %u received",
		      kind_name[k], base[k][0] + base[k][1], PER_KIND);
		if (k != K_OTHER && base[k][1] > 0)
			spread = true;
	}
	printf("test_steer: baseline: RoCEv2 frames %s on RX queue 1 without rules\n",
	       spread ? "land" : "do NOT land");

	rc = uroce_steer_install(port, 0, why, sizeof(why));
	n_rules = uroce_steer_rules(port);
	printf("test_steer: net_tap install: rc %d, %u rules, why \"%s\"\n", rc, n_rules, why);
	if (rc == 0) {
		CHECK(n_rules > 0 && n_rules <= UROCE_STEER_MAX_RULES,
		      "net_tap: rte_flow, %u rules held", n_rules);
		CHECK(strstr(why, "net_tap: rte_flow") != NULL, "net_tap: reason says rte_flow");
		for (k = 0; k < K_OTHER; k++) {
			/* "(ipv4 ipv6 vlan/ipv4 vlan/ipv6)": the patterns installed */
			const char *list = strchr(why, '(');
			const char *end = list != NULL ? strchr(list, ')') : NULL;
			char pat[16];
			size_t l = strlen(kind_name[k]);
			const char *s;

			snprintf(pat, sizeof(pat), "%s", kind_name[k]);
			for (s = list; s != NULL && end != NULL && s < end; s++)
				if (strncmp(s, pat, l) == 0 && (s[-1] == '(' || s[-1] == ' ') &&
				    (s[l] == ' ' || s[l] == ')')) {
					steered[k] = true;
					break;
				}
		}
		sent = round_trip(fd, ifindex, port, on);
		show("with rules", on);
		for (k = 0; k < K_OTHER; k++) {
			if (steered[k])
				CHECK(on[k][0] == PER_KIND && on[k][1] == 0,
				      "with rules, %s RoCEv2: all %u on RX queue 0 (q0=%u q1=%u)",
				      kind_name[k], PER_KIND, on[k][0], on[k][1]);
			else
				CHECK(on[k][0] + on[k][1] == PER_KIND,
				      "with rules, %s RoCEv2 (not steered): all %u received",
				      kind_name[k], PER_KIND);
		}
		CHECK(on[K_OTHER][0] + on[K_OTHER][1] == PER_KIND,
		      "with rules, UDP 4792 (not RoCEv2): all %u received (q0=%u q1=%u)", PER_KIND,
		      on[K_OTHER][0], on[K_OTHER][1]);

		/* Expect: a second install replaces the rules, it does not add. */
		rc = uroce_steer_install(port, 0, why, sizeof(why));
		CHECK(rc == 0 && uroce_steer_rules(port) == n_rules,
		      "second install: rc %d, %u rules (replaced, not added)", rc,
		      uroce_steer_rules(port));
	} else {
		CHECK(strstr(why, "net_tap") != NULL && strstr(why, "software hand-off") != NULL,
		      "net_tap fallback (rc %d): reason names the driver and the hand-off", rc);
		CHECK(n_rules == 0, "net_tap fallback: no rule held");
	}

	uroce_steer_remove(port);
	CHECK(uroce_steer_rules(port) == 0, "after remove: no rule held");
	memset(&ferr, 0, sizeof(ferr));
	rc = rte_flow_flush(port, &ferr);
	CHECK(rc == 0 || rc == -ENOSYS || rc == -ENOTSUP,
	      "after remove: rte_flow_flush accepts the port (rc %d%s%s)", rc,
	      ferr.message != NULL ? ", " : "", ferr.message != NULL ? ferr.message : "");
	sent = round_trip(fd, ifindex, port, off);
	show("after remove", off);
	for (k = 0; k < K_MAX; k++)
		CHECK(off[k][0] + off[k][1] == PER_KIND, "after remove, %s: all %u received",
		      kind_name[k], PER_KIND);
	if (spread) {
		unsigned int q1 = 0;

		for (k = 0; k < K_OTHER; k++)
			q1 += off[k][1];
		CHECK(q1 > 0, "after remove, RoCEv2 lands on RX queue 1 again (%u frames): "
		      "the rules are gone", q1);
	} else {
		printf("test_steer: after remove: not checked by traffic (the kernel put every "
		       "RoCEv2 frame on queue 0 even without rules)\n");
	}
	close(fd);
out:
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
	rte_eal_hotplug_remove("vdev", "net_tap0");
	return 1;
}

int
main(int argc, char **argv)
{
	char prefix[64];
	char *eal[] = {
		argv[0], "--no-huge", "-m", "128", "--no-pci", "-l", "0",
		"--file-prefix", prefix, "--log-level", "pmd.net.tap:notice",
	};
	struct rte_mempool *mp;
	char rundir[PATH_MAX];
	bool netns = false;
	int rc, tap_ran;

	(void)argc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(prefix, sizeof(prefix), "uroce-steer-%d", (int)getpid());
	/* Root: a network namespace of our own, gone when the process exits, so
	 * the tap interface and every test frame stay in it. */
	if (geteuid() == 0) {
		netns = unshare(CLONE_NEWNET) == 0;
		if (!netns) {
			fprintf(stderr, "test_steer: unshare(CLONE_NEWNET): %s\n", strerror(errno));
			return 1;
		}
	}
	rc = rte_eal_init((int)RTE_DIM(eal), eal);
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	if (rc < 0) {
		rm_runtime_dir(rundir, prefix);
		skip_loud("EAL does not start here even with --no-huge");
		return 77;
	}
	mp = rte_pktmbuf_pool_create("steer_pool", 2047, 64, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     SOCKET_ID_ANY);
	CHECK(mp != NULL, "mbuf pool");
	if (mp != NULL) {
		test_ring(mp);
		tap_ran = test_tap(mp);
	} else {
		tap_ran = 1;
	}
	rte_mempool_free(mp);
	rte_eal_cleanup();
	rm_runtime_dir(rundir, prefix);
	printf("test_steer: %s (%d failure%s)\n",
	       fails ? "FAIL" : tap_ran ? "PASS" : "SKIP (net_ring half passed, net_tap not run)",
	       fails, fails == 1 ? "" : "s");
	if (fails)
		return 1;
	return tap_ran ? 0 : 77;
}
