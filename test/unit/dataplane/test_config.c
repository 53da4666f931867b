/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * lib/dataplane/config.c without EAL: defaults, the INI file through
 * rte_cfgfile, the one-line error for each kind of mistake, cross-section
 * validation, address helpers, and the EAL argument vector.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "dp_internal.h"
#include "uroce_dataplane.h"
#include "uroce_net.h"

static char path[64];

static void
write_conf(const char *text)
{
	int fd;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/uroce-cfgtest-XXXXXX");
	fd = mkstemp(path);
	cr_assert(fd >= 0);
	f = fdopen(fd, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static void
cleanup(void)
{
	if (path[0] != '\0')
		unlink(path);
}

/* The memif quirks (bsize) come from drivers/net, as in uroced. */
static void
setup(void)
{
	cr_assert_eq(uroce_net_register(), 0);
}

TestSuite(dp_config, .init = setup, .fini = cleanup);

/* Load @text; return rc and leave the error (with the path replaced by F) in @msg. */
static int
load(const char *text, struct uroce_dp_config *cfg, char *msg, size_t len)
{
	char err[UROCE_DP_ERR_LEN] = "";
	size_t pl;
	int rc;

	write_conf(text);
	uroce_dp_config_defaults(cfg);
	rc = uroce_dp_config_load(cfg, path, err, sizeof(err));
	pl = strlen(path);
	if (strncmp(err, path, pl) == 0)
		snprintf(msg, len, "F%s", err + pl);
	else
		snprintf(msg, len, "%s", err);
	return rc;
}

Test(dp_config, defaults)
{
	struct uroce_dp_config c;

	uroce_dp_config_defaults(&c);
	/* Expect: the documented defaults (doc/operations.md). */
	cr_expect_str_eq(c.file_prefix, "uroced");
	cr_expect_str_eq(c.socket_path, "/run/uroce/uroced.sock");
	cr_expect_eq(c.socket_mode, 0660);
	cr_expect_eq(c.burst, 32);
	cr_expect_eq(c.neigh_retry_ms, 1000);
	cr_expect_eq(c.neigh_tries, 3);
	cr_expect_eq(c.neigh_reachable_ms, 30000);
	cr_expect_eq(c.n_ports, 0);
	cr_expect_eq(c.max_qp, UROCE_MAX_QP);
	cr_expect_eq(c.gen_mem_mb, 2048);
	cr_expect_eq(c.zc_min, 0);
	cr_expect_eq(c.loop_zc_min, 2048);
}

Test(dp_config, full_file)
{
	struct uroce_dp_config c;
	char msg[UROCE_DP_ERR_LEN];
	const struct uroce_dp_port_cfg *p;

	cr_assert_eq(load("# sample\n"
			  "[eal]\nlcores = 0,1\nno_huge = yes\nmemory = 128\nfile_prefix = t1\n"
			  "vdev = net_ring0\nvdev = net_null0\n"
			  "[daemon]\nsocket = /tmp/x.sock\nsocket_mode = 0600\n"
			  "[limits]\nburst = 16\nneigh_retry_ms = 200\nneigh_tries = 5\n"
			  "neigh_reachable_ms = 1500\ngen_mem_mb = 64\nloop_zero_copy_min = 0\n"
			  "[port.a]\nvdev = net_af_packet0,iface=veth0\n"
			  "ipv4 = 198.18.1.2/24\nipv6 = 2001:2::2/64\nmac = 02:00:c6:12:01:02\n"
			  "vlan = 100\npcp = 3\nmtu = 4200\ndscp = 26\necn = 2\n"
			  "neighbor = 198.18.1.1 02:00:c6:12:01:01\n"
			  "neighbor = 2001:2::1 02:00:c6:12:01:01\n",
			  &c, msg, sizeof(msg)), 0, "%s", msg);
	cr_expect_str_eq(c.lcores, "0,1");
	cr_expect(c.no_huge);
	cr_expect_eq(c.memory_mb, 128);
	cr_expect_str_eq(c.file_prefix, "t1");
	/* Expect: [eal] vdevs plus the port's vdev, in file order. */
	cr_assert_eq(c.n_vdev, 3);
	cr_expect_str_eq(c.vdev[0], "net_ring0");
	cr_expect_str_eq(c.vdev[2], "net_af_packet0,iface=veth0");
	cr_expect_str_eq(c.socket_path, "/tmp/x.sock");
	cr_expect_eq(c.socket_mode, 0600);
	cr_expect_eq(c.burst, 16);
	cr_expect_eq(c.neigh_tries, 5);
	cr_expect_eq(c.neigh_reachable_ms, 1500);
	cr_expect_eq(c.gen_mem_mb, 64);
	cr_expect_eq(c.loop_zc_min, 0);
	cr_assert_eq(c.n_ports, 1);
	p = &c.ports[0];
	cr_expect_str_eq(p->section, "port.a");
	/* Expect: the device name is the vdev up to its first comma. */
	cr_expect_str_eq(p->device, "net_af_packet0");
	cr_expect(p->has_ipv4);
	cr_expect_eq(memcmp(p->ipv4, "\xc6\x12\x01\x02", 4), 0);
	cr_expect_eq(p->ipv4_prefix, 24);
	cr_expect(p->has_ipv6);
	cr_expect_eq(p->ipv6[0], 0x20);
	cr_expect_eq(p->ipv6[15], 0x02);
	cr_expect_eq(p->ipv6_prefix, 64);
	cr_expect(p->has_mac);
	cr_expect_eq(memcmp(p->mac, "\x02\x00\xc6\x12\x01\x02", 6), 0);
	cr_expect_eq(p->vlan_id, 100);
	cr_expect_eq(p->pcp, 3);
	cr_expect_eq(p->mtu, 4200);
	cr_expect_eq(p->dscp, 26);
	cr_expect_eq(p->ecn, 2);
	/* Expect: congestion control left at ConnectX's defaults, ECT(0). */
	cr_expect_eq(p->cc.rpg_time_reset, 300);
	cr_expect_eq(p->cc.min_time_between_cnps, 4);
	cr_expect_eq(p->cc.ecn, 2);
	cr_expect_eq(p->fault_ce, 0.0);
	cr_assert_eq(p->n_neigh, 2);
	cr_expect_eq(p->neigh[0].family, UROCE_IP_V4);
	cr_expect_eq(p->neigh[0].ip[10], 0xff);
	cr_expect_eq(p->neigh[0].ip[15], 1);
	cr_expect_eq(p->neigh[1].family, UROCE_IP_V6);
	cr_expect_eq(uroce_dp_config_validate(&c, msg, sizeof(msg)), 0, "%s", msg);
}

Test(dp_config, sample_file)
{
	struct uroce_dp_config c;
	char err[UROCE_DP_ERR_LEN] = "";

	/* Expect: config/uroced.conf, as shipped, loads and validates. */
	uroce_dp_config_defaults(&c);
	cr_assert_eq(uroce_dp_config_load(&c, UROCE_SAMPLE_CONF, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(uroce_dp_config_validate(&c, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(c.n_ports, 1);
	cr_expect_str_eq(c.ports[0].device, "net_af_packet0");
	cr_expect_str_eq(c.socket_path, "/run/uroce/uroced.sock");
}

struct bad {
	const char *text;
	const char *want;
};

Test(dp_config, bad_values_one_line_each)
{
	static const struct bad cases[] = {
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nmtuu = 1\n",
		 "F: [port.0] mtuu: unknown key (known: device, vdev, ipv4, ipv6, mac, vlan, "
		 "pcp, mtu, dscp, ecn, neighbor, fault_drop, fault_dup, fault_reorder, "
		 "fault_corrupt, fault_dir, fault_seed, fault_ce, and the congestion control "
		 "keys of doc/congestion.md)"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2\n",
		 "F: [port.0] ipv4 = \"198.18.1.2\": expected an IPv4 address with prefix, e.g. "
		 "198.18.1.2/24"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/33\n",
		 "F: [port.0] ipv4 = \"198.18.1.2/33\": expected an IPv4 address with prefix, "
		 "e.g. 198.18.1.2/24"},
		{"[port.0]\ndevice = d\nipv4 = 127.0.0.1/8\n",
		 "F: [port.0] ipv4 = \"127.0.0.1/8\": not a unicast address (0/8, 127/8, "
		 "multicast and class E are refused); expected an IPv4 address with prefix, "
		 "e.g. 198.18.1.2/24"},
		{"[port.0]\ndevice = d\nipv6 = ff02::1/64\n",
		 "F: [port.0] ipv6 = \"ff02::1/64\": not a unicast IPv6 address; expected a "
		 "global IPv6 address with prefix, e.g. 2001:2::2/64"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nmac = 02:00:00:00:00\n",
		 "F: [port.0] mac = \"02:00:00:00:00\": expected a unicast MAC such as "
		 "02:00:00:00:00:01"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\npcp = 8\n",
		 "F: [port.0] pcp = \"8\": expected an 802.1p priority 0..7"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\ndscp = 64\n",
		 "F: [port.0] dscp = \"64\": expected 0..63"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\necn = 3\n",
		 "F: [port.0] ecn = \"3\": expected 0 (not ECT), 1 (ECT(1)) or 2 (ECT(0))"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nneighbor = 198.18.1.1 01:00:00:00:00:01\n",
		 "F: [port.0] neighbor = \"198.18.1.1 01:00:00:00:00:01\": bad unicast MAC "
		 "address; expected \"IP MAC\", e.g. 198.18.1.1 02:00:00:00:00:01"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nfault_drop = 1%\n",
		 "F: [port.0] fault_drop = \"1%\": a fraction, not a percentage (1% is 0.01); "
		 "expected a fraction 0..1 such as 0.01"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nfault_dup = 1.5\n",
		 "F: [port.0] fault_dup = \"1.5\": above 1; expected a fraction 0..1 such as 0.01"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nfault_reorder = -0.1\n",
		 "F: [port.0] fault_reorder = \"-0.1\": expected a fraction 0..1 such as 0.01"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nfault_corrupt = nan\n",
		 "F: [port.0] fault_corrupt = \"nan\": expected a fraction 0..1 such as 0.01"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nfault_drop = 1e-3\n",
		 "F: [port.0] fault_drop = \"1e-3\": expected a fraction 0..1 such as 0.01"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nfault_drop = 0.1.2\n",
		 "F: [port.0] fault_drop = \"0.1.2\": expected a fraction 0..1 such as 0.01"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nfault_dir = in\n",
		 "F: [port.0] fault_dir = \"in\": expected rx, tx or both"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nfault_seed = -1\n",
		 "F: [port.0] fault_seed = \"-1\": expected an unsigned 64-bit integer"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nfault_seed = 18446744073709551616\n",
		 "F: [port.0] fault_seed = \"18446744073709551616\": expected an unsigned 64-bit "
		 "integer"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nfault_drop = 0.1\nfault_drop = 0.2\n",
		 "F: [port.0] fault_drop: given twice"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nfault_ce = 2\n",
		 "F: [port.0] fault_ce = \"2\": above 1; expected a fraction 0..1 such as 0.01"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nfault_ce = 0.1\nfault_dir = tx\n",
		 "F: [port.0] fault_ce: marks received frames, but fault_dir = tx leaves out the "
		 "received ones (use rx or both)"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nrpg_time_reset = 0\n",
		 "F: [port.0] rpg_time_reset = \"0\": expected 1..131071 (us): rate increase "
		 "timer"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\ncnp_dscp = 64\n",
		 "F: [port.0] cnp_dscp = \"64\": expected 0..63 (DSCP): DSCP of the CNPs sent"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nrpg_gd = x\n",
		 "F: [port.0] rpg_gd = \"x\": expected 1..15 (log2): a cut multiplies the rate "
		 "by 1 - alpha / 2^rpg_gd (alpha in 1/1024)"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\ndce_tcp_g = 1\ndce_tcp_g = 2\n",
		 "F: [port.0] dce_tcp_g: given twice"},
		{"[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\nrpg_max_rate = 1000\n"
		 "rpg_min_rate = 2000\n",
		 "F: [port.0] rpg_min_rate: rpg_min_rate is above the maximum rate (rpg_max_rate, "
		 "or line_rate when rpg_max_rate is 0, or 100000 when both are 0)"},
		{"[port.x y]\ndevice = d\n",
		 "F: [port.x y]: unknown section (known: eal, daemon, limits, port.<name>)"},
		{"[eal]\nmemory = 8\n", "F: [eal] memory = \"8\": expected megabytes, 16..1048576"},
		{"[eal]\nlcores = all\n",
		 "F: [eal] lcores = \"all\": expected an EAL lcore list such as 0,1 or 0-2"},
		{"[eal]\nfile_prefix = a/b\n",
		 "F: [eal] file_prefix = \"a/b\": expected letters, digits, '_', '-' or '.'"},
		{"[daemon]\nsocket_mode = 0999\n",
		 "F: [daemon] socket_mode = \"0999\": expected an octal mode such as 0660"},
		{"[limits]\nmax_qp = 5000\n",
		 "F: [limits] max_qp = \"5000\": expected 2..4096 (UROCE_MAX_QP)"},
		{"[limits]\nneigh_tries = 0\n", "F: [limits] neigh_tries = \"0\": expected 1..100"},
		{"[limits]\ngen_mem_mb = 0\n", "F: [limits] gen_mem_mb = \"0\": expected 1..1048576"},
		{"[limits]\nloop_zero_copy_min = 65536\n",
		 "F: [limits] loop_zero_copy_min = \"65536\": expected 0..65535"},
		{"[limits]\nneigh_reachable_ms = 99\n",
		 "F: [limits] neigh_reachable_ms = \"99\": expected 100..3600000"},
		{"[eal]\nlcores\n", "F: syntax error: line 2: expected 'key = value' or '[section]'"},
		{"[eal\n", "F: syntax error: line 1: section name without ']'"},
		{"a = 1\n", "F: syntax error: line 1: key before the first [section]"},
	};
	struct uroce_dp_config c;
	char msg[UROCE_DP_ERR_LEN];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* Expect: -EINVAL and exactly this line, with no newline in it. */
		cr_expect_eq(load(cases[i].text, &c, msg, sizeof(msg)), -EINVAL, "case %zu", i);
		cr_expect_str_eq(msg, cases[i].want, "case %zu", i);
		cr_expect_null(strchr(msg, '\n'), "case %zu", i);
		cleanup();
	}
}

Test(dp_config, too_many_entries)
{
	struct uroce_dp_config c;
	char text[4096] = "[eal]\n", msg[UROCE_DP_ERR_LEN];
	int i;

	for (i = 0; i <= UROCE_DP_MAX_EAL_ITEMS; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "vdev = net_null%d\n", i);
	/* Expect: the 17th vdev is refused with -E2BIG, naming the limit. */
	cr_expect_eq(load(text, &c, msg, sizeof(msg)), -E2BIG);
	cr_expect_str_eq(msg, "F: [eal] vdev = \"net_null16\": too many entries (at most 16)");
}

Test(dp_config, missing_file)
{
	struct uroce_dp_config c;
	char err[UROCE_DP_ERR_LEN];

	uroce_dp_config_defaults(&c);
	cr_expect_eq(uroce_dp_config_load(&c, "/nonexistent/uroced.conf", err, sizeof(err)),
		     -ENOENT);
	cr_expect_str_eq(err, "/nonexistent/uroced.conf: cannot open: No such file or directory");
}

Test(dp_config, fault_keys)
{
	static const char base[] = "[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\n";
	struct uroce_dp_config c;
	char text[512], msg[UROCE_DP_ERR_LEN];
	const struct uroce_dp_port_cfg *p;

	/* Expect: without fault keys, fault injection is off and applies to both directions. */
	cr_assert_eq(load(base, &c, msg, sizeof(msg)), 0, "%s", msg);
	p = &c.ports[0];
	cr_expect(p->fault_drop == 0.0 && p->fault_dup == 0.0 && p->fault_reorder == 0.0 &&
		  p->fault_corrupt == 0.0);
	cr_expect_eq(p->fault_dir, UROCE_DP_FAULT_BOTH);
	cr_expect_eq(p->fault_seed, 0);
	cleanup();

	snprintf(text, sizeof(text), "%sfault_drop = 0.01\nfault_dup = .02\nfault_reorder = 0.5\n"
		 "fault_corrupt = 0\nfault_dir = tx\nfault_seed = 18446744073709551615\n", base);
	cr_assert_eq(load(text, &c, msg, sizeof(msg)), 0, "%s", msg);
	p = &c.ports[0];
	cr_expect(p->fault_drop == 0.01);
	cr_expect(p->fault_dup == 0.02);
	cr_expect(p->fault_reorder == 0.5);
	cr_expect(p->fault_corrupt == 0.0);
	cr_expect_eq(p->fault_dir, UROCE_DP_FAULT_TX);
	cr_expect_eq(p->fault_seed, UINT64_MAX);
	cleanup();

	/* Expect: fractions adding up to exactly 1 (in decimal) are fine; rx is a direction. */
	snprintf(text, sizeof(text), "%sfault_drop = 0.1\nfault_dup = 0.2\nfault_reorder = 0.3\n"
		 "fault_corrupt = 0.4\nfault_dir = rx\nfault_seed = 0x2a\n", base);
	cr_assert_eq(load(text, &c, msg, sizeof(msg)), 0, "%s", msg);
	cr_expect_eq(c.ports[0].fault_dir, UROCE_DP_FAULT_RX);
	cr_expect_eq(c.ports[0].fault_seed, 42);
	cleanup();

	/* Expect: fractions over 1 in all name the section and say why. */
	snprintf(text, sizeof(text), "%sfault_drop = 0.6\nfault_corrupt = 0.5\n", base);
	cr_expect_eq(load(text, &c, msg, sizeof(msg)), -EINVAL);
	cr_expect_str_eq(msg, "F: [port.0]: fault_drop + fault_dup + fault_reorder + "
			 "fault_corrupt = 1.1: at most one fault is picked per packet, so they "
			 "must add up to at most 1");
	cleanup();
}

Test(dp_config, validate_conflicts)
{
	struct uroce_dp_config c;
	char msg[UROCE_DP_ERR_LEN];

	cr_assert_eq(load("[port.0]\ndevice = d0\nipv4 = 198.18.1.2/24\n"
			  "[port.1]\ndevice = d1\nipv4 = 198.18.1.2/24\n", &c, msg, sizeof(msg)), 0);
	/* Expect: one address on two ports is refused, naming both sections. */
	cr_expect_eq(uroce_dp_config_validate(&c, msg, sizeof(msg)), -EINVAL);
	cr_expect(strstr(msg, "[port.1] ipv4: address already used by [port.0]") != NULL, "%s",
		  msg);

	cr_assert_eq(load("[eal]\nin_memory = yes\nfile_prefix = p\n", &c, msg, sizeof(msg)), 0);
	cr_expect_eq(uroce_dp_config_validate(&c, msg, sizeof(msg)), -EINVAL);
	cr_expect(strstr(msg, "[eal] in_memory: cannot be combined with file_prefix") != NULL,
		  "%s", msg);
}

Test(dp_config, addresses)
{
	enum uroce_ip_family fam;
	uint8_t gid[16], mac[6], pfx;
	char s[64];

	cr_expect_eq(uroce_dp_parse_prefix("198.18.0.1/15", &fam, gid, &pfx), 0);
	cr_expect_eq(fam, UROCE_IP_V4);
	cr_expect_eq(pfx, 15);
	uroce_dp_gid_str(gid, s, sizeof(s));
	/* Expect: IPv4 is kept as the IPv4-mapped GID ::ffff:a.b.c.d (RoCEv2). */
	cr_expect_str_eq(s, "::ffff:198.18.0.1");
	cr_expect_eq(uroce_dp_parse_prefix("2001:2::1/48", &fam, gid, &pfx), 0);
	cr_expect_eq(fam, UROCE_IP_V6);
	cr_expect_eq(pfx, 48);
	cr_expect_eq(uroce_dp_parse_prefix("2001:2::1", &fam, gid, &pfx), -EINVAL);
	cr_expect_eq(uroce_dp_parse_prefix("2001:2::1/129", &fam, gid, &pfx), -EINVAL);
	cr_expect_eq(uroce_dp_parse_prefix("/24", &fam, gid, &pfx), -EINVAL);

	cr_expect_eq(uroce_dp_parse_mac("52:54:00:12:34:56", mac), 0);
	cr_expect_eq(uroce_dp_parse_mac("52:54:00:12:34:56:78", mac), -EINVAL);
	cr_expect_eq(uroce_dp_parse_mac("52:54:00:12:34:5g", mac), -EINVAL);
	/* Expect: link-local by modified EUI-64 (RFC 4291 appendix A): U/L bit
	 * flipped, ff:fe in the middle; qemu's usual MAC gives fe80::5054:ff:fe12:3456. */
	cr_assert_eq(uroce_dp_parse_mac("52:54:00:12:34:56", mac), 0);
	uroce_dp_gid_link_local(mac, gid);
	uroce_dp_gid_str(gid, s, sizeof(s));
	cr_expect_str_eq(s, "fe80::5054:ff:fe12:3456");
}

static int
argv_has(char **argv, int argc, const char *a, const char *b)
{
	int i;

	for (i = 0; i < argc; i++)
		if (strcmp(argv[i], a) == 0 && (b == NULL || (i + 1 < argc && !strcmp(argv[i + 1], b))))
			return 1;
	return 0;
}

Test(dp_config, eal_args)
{
	struct uroce_dp_config c;
	char *argv[64];
	int argc;

	uroce_dp_config_defaults(&c);
	c.no_huge = true;
	snprintf(c.lcores, sizeof(c.lcores), "0,1");
	c.n_vdev = 1;
	snprintf(c.vdev[0], sizeof(c.vdev[0]), "net_ring0");
	argc = uroce_dp_eal_args(&c, "uroced", argv, 64);
	cr_assert_gt(argc, 0);
	cr_expect_str_eq(argv[0], "uroced");
	cr_expect_null(argv[argc]);
	cr_expect(argv_has(argv, argc, "--lcores", "0,1"));
	cr_expect(argv_has(argv, argc, "--no-huge", NULL));
	/* Expect: --no-huge brings a default of 256 MB. */
	cr_expect(argv_has(argv, argc, "-m", "256"));
	cr_expect(argv_has(argv, argc, "--file-prefix", "uroced"));
	cr_expect(argv_has(argv, argc, "--vdev", "net_ring0"));
	/* Expect: no port names a PCI device, so nothing is probed on PCI. */
	cr_expect(argv_has(argv, argc, "--no-pci", NULL));

	c.n_ports = 1;
	snprintf(c.ports[0].device, sizeof(c.ports[0].device), "0000:01:00.0");
	argc = uroce_dp_eal_args(&c, "uroced", argv, 64);
	/* Expect: a PCI port is put on the allow list, and PCI stays on. */
	cr_expect(argv_has(argv, argc, "-a", "0000:01:00.0"));
	cr_expect(!argv_has(argv, argc, "--no-pci", NULL));

	cr_expect_eq(uroce_dp_eal_args(&c, "uroced", argv, 4), -E2BIG);
}

/* Expect: a --file-prefix (either form) or --in-memory after "--" is taken
 * into the config, so the ready line and the prefix check name the prefix EAL
 * uses, and leaves the extras; other extras stay in order; a bad value is
 * refused. */
Test(dp_config, eal_args_after_dashes)
{
	struct uroce_dp_config c;
	char err[UROCE_DP_ERR_LEN] = "";
	char *argv[64];
	int argc, i, n = 0;

	uroce_dp_config_defaults(&c);
	c.n_extra = 4;
	snprintf(c.extra[0], sizeof(c.extra[0]), "--log-level=7");
	snprintf(c.extra[1], sizeof(c.extra[1]), "--file-prefix");
	snprintf(c.extra[2], sizeof(c.extra[2]), "after-dashes");
	snprintf(c.extra[3], sizeof(c.extra[3]), "--huge-unlink");
	cr_assert_eq(uroce_dp_config_adopt_eal_args(&c, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(c.file_prefix, "after-dashes");
	cr_assert_eq(c.n_extra, 2);
	cr_expect_str_eq(c.extra[0], "--log-level=7");
	cr_expect_str_eq(c.extra[1], "--huge-unlink");
	argc = uroce_dp_eal_args(&c, "uroced", argv, 64);
	for (i = 0; i < argc; i++)
		n += strncmp(argv[i], "--file-prefix", 13) == 0;
	cr_expect_eq(n, 1, "EAL gets one --file-prefix");
	cr_expect(argv_has(argv, argc, "--file-prefix", "after-dashes"));

	uroce_dp_config_defaults(&c);
	c.n_extra = 1;
	snprintf(c.extra[0], sizeof(c.extra[0]), "--file-prefix=eq-form");
	cr_assert_eq(uroce_dp_config_adopt_eal_args(&c, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(c.file_prefix, "eq-form");
	cr_expect_eq(c.n_extra, 0);

	uroce_dp_config_defaults(&c);
	c.n_extra = 1;
	snprintf(c.extra[0], sizeof(c.extra[0]), "--in-memory");
	cr_assert_eq(uroce_dp_config_adopt_eal_args(&c, err, sizeof(err)), 0, "%s", err);
	cr_expect(c.in_memory);
	cr_expect_eq(c.n_extra, 0);

	c.n_extra = 1;
	snprintf(c.extra[0], sizeof(c.extra[0]), "--file-prefix");
	cr_expect_eq(uroce_dp_config_adopt_eal_args(&c, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "needs a value") != NULL, "%s", err);
	c.n_extra = 1;
	snprintf(c.extra[0], sizeof(c.extra[0]), "--file-prefix=a/b");
	cr_expect_eq(uroce_dp_config_adopt_eal_args(&c, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "--file-prefix \"a/b\" after --") != NULL, "%s", err);
}

/* Expect: the CPUs of an lcore list, in each form EAL's --lcores takes, are
 * checked against the CPUs allowed; one line names the first missing CPU and
 * the allowed set; text that does not parse is left to EAL. */
Test(dp_config, lcores_on_cpus_that_exist)
{
	char err[UROCE_DP_ERR_LEN] = "";
	cpu_set_t two;

	CPU_ZERO(&two);
	CPU_SET(0, &two);
	CPU_SET(1, &two);
	cr_expect_eq(dp_lcores_check("0,1", &two, err, sizeof(err)), 0);
	cr_expect_eq(dp_lcores_check("0-1", &two, err, sizeof(err)), 0);
	cr_expect_eq(dp_lcores_check("0@1,1@0", &two, err, sizeof(err)), 0);
	cr_expect_eq(dp_lcores_check("5@0,7@(0-1)", &two, err, sizeof(err)), 0,
		     "lcore numbers are not CPUs when mapped");
	cr_expect_eq(dp_lcores_check("(0-1)@(0,1)", &two, err, sizeof(err)), 0);
	cr_expect_eq(dp_lcores_check("", &two, err, sizeof(err)), 0);
	cr_expect_eq(dp_lcores_check("0,,1", &two, err, sizeof(err)), 0, "EAL's to judge");
	cr_expect_eq(dp_lcores_check("0-7", &two, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "lcores \"0-7\": CPU 2 does not exist or is not this process's to "
			 "use (it may run on CPUs 0-1): give lcores on those CPUs, or map each "
			 "lcore onto one of them (LCORE@CPU)");
	cr_expect_eq(dp_lcores_check("0@1,1@(1-3)", &two, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "CPU 2 ") != NULL, "%s", err);
	cr_expect_eq(dp_lcores_check("0,4096", &two, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "CPU 4096 ") != NULL, "beyond any CPU set: %s", err);
	CPU_SET(4, &two);
	cr_expect_eq(dp_lcores_check("3", &two, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "CPUs 0-1,4)") != NULL, "%s", err);
}

/* Expect: every congestion control parameter is a [port.N] key of its
 * ConnectX name; ecn = 0 reaches the parameters too; fault_ce parses. */
Test(dp_config, congestion_keys)
{
	struct uroce_dp_config c;
	char text[8192], msg[UROCE_DP_ERR_LEN];
	const struct uroce_dp_port_cfg *p;
	unsigned int i, n = uroce_eng_cc_param_count();

	snprintf(text, sizeof(text), "[port.0]\ndevice = d\nipv4 = 198.18.1.2/24\n"
		 "fault_ce = 0.25\nfault_dir = rx\n");
	for (i = 0; i < n; i++) {
		const struct uroce_eng_cc_param_info *pi = uroce_eng_cc_param_info(i);

		/* The minimum of each (rpg_min_rate 1 stays below any maximum). */
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s = %u\n",
			 pi->name, pi->min);
	}
	cr_assert_eq(load(text, &c, msg, sizeof(msg)), 0, "%s", msg);
	p = &c.ports[0];
	for (i = 0; i < n; i++)
		cr_expect_eq(uroce_eng_cc_param_get(&p->cc, i), uroce_eng_cc_param_info(i)->min,
			     "%s", uroce_eng_cc_param_info(i)->name);
	cr_expect_eq(p->ecn, 0);
	cr_expect_eq(p->fault_ce, 0.25);
	cleanup();
}

/* Expect: a memif port whose frames outgrow memif's 2048-byte buffers gets
 * bsize = one whole frame (so DPDK 22.11's memif never chains buffers); a
 * bsize the user gave is kept if large enough and refused with advice if
 * not; ports at a standard MTU are left alone. */
Test(dp_config, memif_buffers_hold_a_frame)
{
	struct uroce_dp_config c;
	char msg[UROCE_DP_ERR_LEN];

	cr_assert_eq(load("[port.m]\nvdev = net_memif0,role=server,socket=/tmp/x.sock\n"
			  "ipv4 = 198.18.3.1/24\nmtu = 4200\n", &c, msg, sizeof(msg)), 0, "%s", msg);
	/* 4200 + 14 + 2 x 4 + 4 = 4226, rounded to 64. */
	cr_expect_str_eq(c.vdev[0], "net_memif0,role=server,socket=/tmp/x.sock,bsize=4288");

	cr_assert_eq(load("[port.m]\nvdev = net_memif0,role=client,bsize=8192\n"
			  "ipv4 = 198.18.3.1/24\nmtu = 4200\n", &c, msg, sizeof(msg)), 0, "%s", msg);
	cr_expect_str_eq(c.vdev[0], "net_memif0,role=client,bsize=8192");

	cr_expect_eq(load("[port.m]\nvdev = net_memif0,role=client,bsize=2048\n"
			  "ipv4 = 198.18.3.1/24\nmtu = 4200\n", &c, msg, sizeof(msg)), -EINVAL);
	cr_expect(strstr(msg, "[port.m] vdev") != NULL && strstr(msg, "bsize=4288") != NULL,
		  "%s", msg);

	cr_assert_eq(load("[port.m]\nvdev = net_memif0,role=client\nipv4 = 198.18.3.1/24\n"
			  "mtu = 1500\n", &c, msg, sizeof(msg)), 0, "%s", msg);
	cr_expect_str_eq(c.vdev[0], "net_memif0,role=client");
	cr_assert_eq(load("[port.a]\nvdev = net_af_packet0,iface=veth0\nipv4 = 198.18.3.1/24\n"
			  "mtu = 4200\n", &c, msg, sizeof(msg)), 0, "%s", msg);
	cr_expect_str_eq(c.vdev[0], "net_af_packet0,iface=veth0");
}
