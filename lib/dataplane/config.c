/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * uroced configuration: defaults, the INI file (read by rte_cfgfile, checked
 * key by key against the tables below), validation across sections, and the
 * EAL argument vector. No EAL is needed here, so tests/unit/dataplane runs it
 * without hugepages.
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>
#include <rte_log.h>

#include "uroce_dataplane.h"
#include "uroce_dp_driver.h"

#include "dp_internal.h"

#define DEFAULT_SOCKET "/run/uroce/uroced.sock"

void
uroce_dp_config_defaults(struct uroce_dp_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->file_prefix, sizeof(cfg->file_prefix), "uroced");
	snprintf(cfg->socket_path, sizeof(cfg->socket_path), "%s", DEFAULT_SOCKET);
	cfg->socket_mode = 0660;
	cfg->max_qp = UROCE_MAX_QP;
	cfg->mbufs = 8191;
	cfg->rx_desc = 1024;
	cfg->tx_desc = 1024;
	cfg->burst = 32;
	cfg->neigh_retry_ms = 1000;
	cfg->neigh_tries = 3;
	cfg->neigh_reachable_ms = 30000;
	cfg->neigh_max = 256;
	cfg->idle_sleep_us = 0;
	cfg->idle_sleep_max_us = 10000;
	cfg->idle_spin_us = 20;
	cfg->gen_mem_mb = 2048; /* UROCE_DAEMON_GEN_MEM_DEFAULT */
	cfg->zc_min = 0; /* off: no gain measured on the copying PMDs it may run on (doc/benchmarks.md) */
	cfg->loop_zc_min = UROCE_DP_LOOP_ZC_MIN_DEFAULT;
}

/* One error line: "FILE: [section] key = "value": problem". */
static int
cfg_err(char *err, size_t errlen, int rc, const char *file, const char *sec, const char *key,
	const char *val, const char *fmt, ...) __attribute__((format(printf, 8, 9)));

static int
cfg_err(char *err, size_t errlen, int rc, const char *file, const char *sec, const char *key,
	const char *val, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err == NULL || errlen == 0)
		return rc;
	if (key != NULL && val != NULL)
		snprintf(err, errlen, "%s: [%s] %s = \"%s\": %s", file, sec, key, val, msg);
	else if (key != NULL)
		snprintf(err, errlen, "%s: [%s] %s: %s", file, sec, key, msg);
	else if (sec != NULL)
		snprintf(err, errlen, "%s: [%s]: %s", file, sec, msg);
	else
		snprintf(err, errlen, "%s: %s", file, msg);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Value parsers: 0 or -EINVAL, never a partial result.                    */
/* ---------------------------------------------------------------------- */

static int
parse_uint(const char *s, unsigned long min, unsigned long max, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (*s == '\0' || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

static int
parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"1", "yes", "true", "on"};
	static const char *const no[] = {"0", "no", "false", "off"};
	unsigned int i;

	for (i = 0; i < UROCE_ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

int
uroce_dp_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6)
		return -EINVAL;
	if (strlen(s) != 17)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

static void
gid_from_ipv4(const uint8_t ip[4], uint8_t gid[16])
{
	memset(gid, 0, 10);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, ip, 4);
}

/* A bare address, IPv4 or IPv6, into GID form. */
static int
parse_ip(const char *s, enum uroce_ip_family *family, uint8_t gid[16])
{
	uint8_t v4[4];

	if (strchr(s, ':') == NULL) {
		if (inet_pton(AF_INET, s, v4) != 1)
			return -EINVAL;
		gid_from_ipv4(v4, gid);
		*family = UROCE_IP_V4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, gid) != 1)
		return -EINVAL;
	*family = UROCE_IP_V6;
	return 0;
}

int
uroce_dp_parse_prefix(const char *s, enum uroce_ip_family *family, uint8_t gid[16],
		      uint8_t *prefix)
{
	char addr[64];
	const char *slash = strchr(s, '/');
	unsigned int len;
	size_t n;

	if (slash == NULL)
		return -EINVAL;
	n = (size_t)(slash - s);
	if (n == 0 || n >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, s, n);
	addr[n] = '\0';
	if (parse_ip(addr, family, gid) != 0)
		return -EINVAL;
	if (parse_uint(slash + 1, 1, *family == UROCE_IP_V4 ? 32 : 128, &len) != 0)
		return -EINVAL;
	*prefix = (uint8_t)len;
	return 0;
}

void
uroce_dp_gid_str(const uint8_t gid[16], char *buf, size_t len)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	char tmp[INET6_ADDRSTRLEN];

	if (memcmp(gid, mapped, sizeof(mapped)) == 0) {
		snprintf(buf, len, "::ffff:%u.%u.%u.%u", gid[12], gid[13], gid[14], gid[15]);
		return;
	}
	if (inet_ntop(AF_INET6, gid, tmp, sizeof(tmp)) == NULL)
		snprintf(tmp, sizeof(tmp), "?");
	snprintf(buf, len, "%s", tmp);
}

void
uroce_dp_gid_link_local(const uint8_t mac[6], uint8_t gid[16])
{
	/* RFC 4291 appendix A: modified EUI-64, universal/local bit inverted. */
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	gid[8] = mac[0] ^ 0x02;
	gid[9] = mac[1];
	gid[10] = mac[2];
	gid[11] = 0xff;
	gid[12] = 0xfe;
	gid[13] = mac[3];
	gid[14] = mac[4];
	gid[15] = mac[5];
}

/* ---------------------------------------------------------------------- */
/* Key tables                                                              */
/* ---------------------------------------------------------------------- */

struct key_ctx {
	struct uroce_dp_config *cfg;
	struct uroce_dp_port_cfg *port;
	const char *problem; /* set by a setter for a specific message */
};

/* A setter returns 0, -EINVAL (bad value; ctx->problem may say why) or -E2BIG. */
typedef int (*key_set_fn)(struct key_ctx *c, const char *val);

struct key_desc {
	const char *name;
	key_set_fn set;
	const char *expect; /* shown when the value is rejected */
	bool repeat;        /* may appear more than once */
};

static int
set_str(char *dst, size_t cap, const char *val, struct key_ctx *c)
{
	if (strlen(val) >= cap) {
		c->problem = "value too long";
		return -EINVAL;
	}
	memcpy(dst, val, strlen(val) + 1);
	return 0;
}

#define SET_UINT(fn, field, min, max)                                     \
	static int fn(struct key_ctx *c, const char *val)                 \
	{                                                                 \
		return parse_uint(val, (min), (max), &c->cfg->field);     \
	}

static int
eal_lcores(struct key_ctx *c, const char *val)
{
	const char *p;

	for (p = val; *p != '\0'; p++)
		if (!isdigit((unsigned char)*p) && strchr(",-@()", *p) == NULL)
			return -EINVAL;
	return set_str(c->cfg->lcores, sizeof(c->cfg->lcores), val, c);
}

static bool
prefix_ok(const char *val)
{
	const char *p;

	for (p = val; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.')
			return false;
	return *val != '\0';
}

static int
eal_file_prefix(struct key_ctx *c, const char *val)
{
	if (!prefix_ok(val))
		return -EINVAL;
	return set_str(c->cfg->file_prefix, sizeof(c->cfg->file_prefix), val, c);
}

static int
eal_no_huge(struct key_ctx *c, const char *val)
{
	return parse_bool(val, &c->cfg->no_huge);
}

static int
eal_in_memory(struct key_ctx *c, const char *val)
{
	return parse_bool(val, &c->cfg->in_memory);
}

static int
eal_no_pci(struct key_ctx *c, const char *val)
{
	return parse_bool(val, &c->cfg->no_pci);
}

SET_UINT(eal_memory, memory_mb, 16, 1048576)

static int
eal_log_level(struct key_ctx *c, const char *val)
{
	return set_str(c->cfg->log_level, sizeof(c->cfg->log_level), val, c);
}

static int
add_vdev(struct uroce_dp_config *cfg, const char *val, struct key_ctx *c)
{
	if (cfg->n_vdev >= UROCE_DP_MAX_EAL_ITEMS)
		return -E2BIG;
	if (!isalpha((unsigned char)val[0])) {
		c->problem = "a vdev starts with its driver name, e.g. net_af_packet0,iface=eth0";
		return -EINVAL;
	}
	if (set_str(cfg->vdev[cfg->n_vdev], sizeof(cfg->vdev[0]), val, c) != 0)
		return -EINVAL;
	cfg->n_vdev++;
	return 0;
}

static int
eal_vdev(struct key_ctx *c, const char *val)
{
	return add_vdev(c->cfg, val, c);
}

static int
eal_allow(struct key_ctx *c, const char *val)
{
	struct uroce_dp_config *cfg = c->cfg;

	if (cfg->n_allow >= UROCE_DP_MAX_EAL_ITEMS)
		return -E2BIG;
	if (set_str(cfg->allow[cfg->n_allow], sizeof(cfg->allow[0]), val, c) != 0)
		return -EINVAL;
	cfg->n_allow++;
	return 0;
}

static int
daemon_socket(struct key_ctx *c, const char *val)
{
	if (val[0] != '/')
		return -EINVAL;
	return set_str(c->cfg->socket_path, sizeof(c->cfg->socket_path), val, c);
}

static int
daemon_socket_mode(struct key_ctx *c, const char *val)
{
	unsigned int m;
	char *end;

	errno = 0;
	m = (unsigned int)strtoul(val, &end, 8);
	if (errno != 0 || *end != '\0' || *val == '\0' || m > 0777)
		return -EINVAL;
	c->cfg->socket_mode = m;
	return 0;
}

SET_UINT(lim_max_qp, max_qp, 2, UROCE_MAX_QP)
SET_UINT(lim_mbufs, mbufs, 511, 1048575)
SET_UINT(lim_rx_desc, rx_desc, 64, 16384)
SET_UINT(lim_tx_desc, tx_desc, 64, 16384)
SET_UINT(lim_burst, burst, 1, 256)
SET_UINT(lim_neigh_retry_ms, neigh_retry_ms, 10, 60000)
SET_UINT(lim_neigh_tries, neigh_tries, 1, 100)
SET_UINT(lim_neigh_reachable_ms, neigh_reachable_ms, 100, 3600000)
SET_UINT(lim_neigh_max, neigh_max, 4, 65536)
SET_UINT(lim_idle_sleep_us, idle_sleep_us, 0, 100000)
SET_UINT(lim_idle_sleep_max_us, idle_sleep_max_us, 0, 100000)
SET_UINT(lim_idle_spin_us, idle_spin_us, 0, 10000000)
SET_UINT(lim_zc_min, zc_min, 0, 65535)
SET_UINT(lim_loop_zc_min, loop_zc_min, 0, 65535)
SET_UINT(lim_gen_mem_mb, gen_mem_mb, 1, 1048576)

static int
port_device(struct key_ctx *c, const char *val)
{
	return set_str(c->port->device, sizeof(c->port->device), val, c);
}

static int
port_vdev(struct key_ctx *c, const char *val)
{
	size_t n = strcspn(val, ",");
	int rc;

	rc = add_vdev(c->cfg, val, c);
	if (rc != 0)
		return rc;
	if (n >= sizeof(c->port->device)) {
		c->problem = "device name too long";
		return -EINVAL;
	}
	memcpy(c->port->device, val, n);
	c->port->device[n] = '\0';
	return 0;
}

static int
port_ipv4(struct key_ctx *c, const char *val)
{
	enum uroce_ip_family fam;
	uint8_t gid[16], pfx;
	uint8_t *a = gid + 12;

	if (uroce_dp_parse_prefix(val, &fam, gid, &pfx) != 0 || fam != UROCE_IP_V4)
		return -EINVAL;
	if (a[0] == 0 || a[0] == 127 || a[0] >= 224) {
		c->problem = "not a unicast address (0/8, 127/8, multicast and class E are refused)";
		return -EINVAL;
	}
	memcpy(c->port->ipv4, a, 4);
	c->port->ipv4_prefix = pfx;
	c->port->has_ipv4 = true;
	return 0;
}

static int
port_ipv6(struct key_ctx *c, const char *val)
{
	static const uint8_t zero[16];
	enum uroce_ip_family fam;
	uint8_t gid[16], pfx;

	if (uroce_dp_parse_prefix(val, &fam, gid, &pfx) != 0 || fam != UROCE_IP_V6)
		return -EINVAL;
	if (gid[0] == 0xff || memcmp(gid, zero, 16) == 0 ||
	    (gid[0] == 0 && gid[10] == 0xff && gid[11] == 0xff && memcmp(gid, zero, 10) == 0)) {
		c->problem = "not a unicast IPv6 address";
		return -EINVAL;
	}
	if (gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80) {
		c->problem = "the link-local address is derived from the MAC (GID index 0); "
			     "configure a global address here";
		return -EINVAL;
	}
	memcpy(c->port->ipv6, gid, 16);
	c->port->ipv6_prefix = pfx;
	c->port->has_ipv6 = true;
	return 0;
}

static int
port_mac(struct key_ctx *c, const char *val)
{
	static const uint8_t zero[6];

	if (uroce_dp_parse_mac(val, c->port->mac) != 0)
		return -EINVAL;
	if ((c->port->mac[0] & 1) != 0 || memcmp(c->port->mac, zero, 6) == 0) {
		c->problem = "not a unicast MAC address";
		return -EINVAL;
	}
	c->port->has_mac = true;
	return 0;
}

static int
port_vlan(struct key_ctx *c, const char *val)
{
	unsigned int v;

	if (parse_uint(val, 1, 4094, &v) != 0)
		return -EINVAL;
	c->port->vlan_id = (uint16_t)v;
	c->port->has_vlan = true;
	return 0;
}

static int
port_pcp(struct key_ctx *c, const char *val)
{
	unsigned int v;

	if (parse_uint(val, 0, 7, &v) != 0)
		return -EINVAL;
	c->port->pcp = (uint8_t)v;
	return 0;
}

static int
port_mtu(struct key_ctx *c, const char *val)
{
	unsigned int v;

	if (parse_uint(val, 576, 9600, &v) != 0)
		return -EINVAL;
	c->port->mtu = (uint16_t)v;
	return 0;
}

static int
port_dscp(struct key_ctx *c, const char *val)
{
	unsigned int v;

	if (parse_uint(val, 0, 63, &v) != 0)
		return -EINVAL;
	c->port->dscp = (uint8_t)v;
	return 0;
}

static int
port_ecn(struct key_ctx *c, const char *val)
{
	unsigned int v;

	if (parse_uint(val, 0, 2, &v) != 0)
		return -EINVAL;
	c->port->ecn = (uint8_t)v;
	c->port->cc.ecn = v;
	return 0;
}

static int
port_neighbor(struct key_ctx *c, const char *val)
{
	struct uroce_dp_port_cfg *p = c->port;
	struct uroce_dp_neigh_cfg *n;
	char ip[64], mac[32], tail[2];

	if (p->n_neigh >= UROCE_DP_MAX_STATIC_NEIGH)
		return -E2BIG;
	n = &p->neigh[p->n_neigh];
	if (sscanf(val, "%63s %31s %1s", ip, mac, tail) != 2)
		return -EINVAL;
	if (parse_ip(ip, &n->family, n->ip) != 0) {
		c->problem = "bad IP address";
		return -EINVAL;
	}
	if (uroce_dp_parse_mac(mac, n->mac) != 0 || (n->mac[0] & 1) != 0) {
		c->problem = "bad unicast MAC address";
		return -EINVAL;
	}
	p->n_neigh++;
	return 0;
}

/*
 * Fault injection (issue #5). A fraction is a plain decimal 0..1 ("0.01" is
 * one packet in a hundred); percentages are refused with a hint rather than
 * guessed at, so that "1" can never mean 1%.
 */
static int
parse_fraction(const char *s, double *out, struct key_ctx *c)
{
	const char *p;
	char *end;
	double v;

	if (strchr(s, '%') != NULL) {
		c->problem = "a fraction, not a percentage (1% is 0.01)";
		return -EINVAL;
	}
	/* Digits and one '.' only: no sign, exponent, hex, "nan" or "inf". */
	for (p = s; *p != '\0'; p++)
		if (!isdigit((unsigned char)*p) && *p != '.')
			return -EINVAL;
	if (*s == '\0' || strchr(s, '.') != strrchr(s, '.') || strcmp(s, ".") == 0)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0')
		return -EINVAL;
	if (v > 1.0) {
		c->problem = "above 1";
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int
port_fault_drop(struct key_ctx *c, const char *val)
{
	return parse_fraction(val, &c->port->fault_drop, c);
}

static int
port_fault_dup(struct key_ctx *c, const char *val)
{
	return parse_fraction(val, &c->port->fault_dup, c);
}

static int
port_fault_reorder(struct key_ctx *c, const char *val)
{
	return parse_fraction(val, &c->port->fault_reorder, c);
}

static int
port_fault_corrupt(struct key_ctx *c, const char *val)
{
	return parse_fraction(val, &c->port->fault_corrupt, c);
}

static int
port_fault_ce(struct key_ctx *c, const char *val)
{
	return parse_fraction(val, &c->port->fault_ce, c);
}

static int
port_fault_dir(struct key_ctx *c, const char *val)
{
	if (strcmp(val, "both") == 0)
		c->port->fault_dir = UROCE_DP_FAULT_BOTH;
	else if (strcmp(val, "rx") == 0)
		c->port->fault_dir = UROCE_DP_FAULT_RX;
	else if (strcmp(val, "tx") == 0)
		c->port->fault_dir = UROCE_DP_FAULT_TX;
	else
		return -EINVAL;
	return 0;
}

static int
port_fault_seed(struct key_ctx *c, const char *val)
{
	unsigned long long v;
	char *end;

	/* strtoull() would accept "-1" and wrap it: refuse anything but digits. */
	if (*val == '\0' || !isdigit((unsigned char)*val))
		return -EINVAL;
	errno = 0;
	v = strtoull(val, &end, 0);
	if (errno != 0 || *end != '\0')
		return -EINVAL;
	c->port->fault_seed = v;
	return 0;
}

/* The four fractions share one draw per packet, so they cannot add up to more than 1. */
static int
check_fault_sum(const struct uroce_dp_port_cfg *p, const char *file, char *err, size_t errlen)
{
	double sum = p->fault_drop + p->fault_dup + p->fault_reorder + p->fault_corrupt;

	/* The slack absorbs binary rounding: 0.1 + 0.2 + 0.3 + 0.4 is not exactly 1. */
	if (sum <= 1.0 + 1e-9)
		return 0;
	return cfg_err(err, errlen, -EINVAL, file, p->section, NULL, NULL,
		       "fault_drop + fault_dup + fault_reorder + fault_corrupt = %g: at most one "
		       "fault is picked per packet, so they must add up to at most 1", sum);
}

/*
 * A PMD's own needs in its vdev argument (uroce_dp_pmd_ops.vdev_args, from
 * drivers/net: memif's buffer size, for one): asked once the port's keys
 * are read, for the vdev that creates the port's device.
 */
static int
pmd_vdev_args(struct uroce_dp_config *cfg, struct uroce_dp_port_cfg *p, const char *file,
	      char *err, size_t errlen)
{
	const struct uroce_dp_pmd_ops *pmd = uroce_dp_pmd_of_device(p->device);
	size_t dlen = strlen(p->device);
	char before[sizeof(cfg->vdev[0])], why[256];
	unsigned int i;
	char *v = NULL;
	int rc;

	if (pmd == NULL || pmd->vdev_args == NULL)
		return 0;
	for (i = 0; i < cfg->n_vdev; i++)
		if (strncmp(cfg->vdev[i], p->device, dlen) == 0 &&
		    (cfg->vdev[i][dlen] == ',' || cfg->vdev[i][dlen] == '\0'))
			v = cfg->vdev[i];
	if (v == NULL)
		return 0;
	snprintf(before, sizeof(before), "%s", v);
	why[0] = '\0';
	rc = pmd->vdev_args(p, v, sizeof(cfg->vdev[0]), why, sizeof(why));
	if (rc != 0) {
		snprintf(v, sizeof(cfg->vdev[0]), "%s", before);
		return cfg_err(err, errlen, rc, file, p->section, "vdev", before, "%s",
			       why[0] != '\0' ? why : "refused by its driver");
	}
	return 0;
}

/* fault_ce acts on received frames; the congestion parameters hang together. */
static int
check_port_cc(const struct uroce_dp_port_cfg *p, const char *file, char *err, size_t errlen)
{
	unsigned int bad = 0;

	if (p->fault_ce > 0.0 && p->fault_dir == UROCE_DP_FAULT_TX)
		return cfg_err(err, errlen, -EINVAL, file, p->section, "fault_ce", NULL,
			       "marks received frames, but fault_dir = tx leaves out the "
			       "received ones (use rx or both)");
	if (uroce_eng_cc_params_check(&p->cc, &bad) != 0)
		return cfg_err(err, errlen, -EINVAL, file, p->section,
			       uroce_eng_cc_param_info(bad)->name, NULL,
			       "rpg_min_rate is above the maximum rate (rpg_max_rate, or "
			       "line_rate when rpg_max_rate is 0, or 100000 when both are 0)");
	return 0;
}

static const struct key_desc eal_keys[] = {
	{"lcores", eal_lcores, "an EAL lcore list such as 0,1 or 0-2", false},
	{"file_prefix", eal_file_prefix, "letters, digits, '_', '-' or '.'", false},
	{"no_huge", eal_no_huge, "yes or no", false},
	{"in_memory", eal_in_memory, "yes or no", false},
	{"no_pci", eal_no_pci, "yes or no", false},
	{"memory", eal_memory, "megabytes, 16..1048576", false},
	{"log_level", eal_log_level, "an EAL --log-level argument", false},
	{"vdev", eal_vdev, "a vdev argument such as net_ring0", true},
	{"allow", eal_allow, "a PCI address such as 0000:01:00.0", true},
};

SET_UINT(daemon_cm_response_timeout, cm_response_timeout, 0, 31)
SET_UINT(daemon_cm_max_retries, cm_max_retries, 0, 15)
SET_UINT(daemon_cm_packet_life_time, cm_packet_life_time, 0, 30)

static const struct key_desc daemon_keys[] = {
	{"socket", daemon_socket, "an absolute path", false},
	{"socket_mode", daemon_socket_mode, "an octal mode such as 0660", false},
	{"cm_response_timeout", daemon_cm_response_timeout, "0..31 (0: 20)", false},
	{"cm_max_retries", daemon_cm_max_retries, "0..15 (0: 15)", false},
	{"cm_packet_life_time", daemon_cm_packet_life_time, "0..30 (0: 16)", false},
};

static const struct key_desc limits_keys[] = {
	{"max_qp", lim_max_qp, "2..4096 (UROCE_MAX_QP)", false},
	{"mbufs", lim_mbufs, "511..1048575", false},
	{"rx_desc", lim_rx_desc, "64..16384", false},
	{"tx_desc", lim_tx_desc, "64..16384", false},
	{"burst", lim_burst, "1..256", false},
	{"neigh_retry_ms", lim_neigh_retry_ms, "10..60000", false},
	{"neigh_tries", lim_neigh_tries, "1..100", false},
	{"neigh_reachable_ms", lim_neigh_reachable_ms, "100..3600000", false},
	{"neigh_max", lim_neigh_max, "4..65536", false},
	{"idle_sleep_us", lim_idle_sleep_us, "0..100000", false},
	{"idle_sleep_max_us", lim_idle_sleep_max_us, "0..100000", false},
	{"idle_spin_us", lim_idle_spin_us, "0..10000000", false},
	{"tx_zero_copy_min", lim_zc_min, "0..65535", false},
	{"loop_zero_copy_min", lim_loop_zc_min, "0..65535", false},
	{"gen_mem_mb", lim_gen_mem_mb, "1..1048576", false},
};

static const struct key_desc port_keys[] = {
	{"device", port_device, "an ethdev name (PCI address or vdev name)", false},
	{"vdev", port_vdev, "a vdev argument such as net_af_packet0,iface=eth0", false},
	{"ipv4", port_ipv4, "an IPv4 address with prefix, e.g. 198.18.1.2/24", false},
	{"ipv6", port_ipv6, "a global IPv6 address with prefix, e.g. 2001:2::2/64", false},
	{"mac", port_mac, "a unicast MAC such as 02:00:00:00:00:01", false},
	{"vlan", port_vlan, "a VLAN id 1..4094", false},
	{"pcp", port_pcp, "an 802.1p priority 0..7", false},
	{"mtu", port_mtu, "576..9600", false},
	{"dscp", port_dscp, "0..63", false},
	{"ecn", port_ecn, "0 (not ECT), 1 (ECT(1)) or 2 (ECT(0))", false},
	{"neighbor", port_neighbor, "\"IP MAC\", e.g. 198.18.1.1 02:00:00:00:00:01", true},
	{"fault_drop", port_fault_drop, "a fraction 0..1 such as 0.01", false},
	{"fault_dup", port_fault_dup, "a fraction 0..1 such as 0.01", false},
	{"fault_reorder", port_fault_reorder, "a fraction 0..1 such as 0.01", false},
	{"fault_corrupt", port_fault_corrupt, "a fraction 0..1 such as 0.01", false},
	{"fault_dir", port_fault_dir, "rx, tx or both", false},
	{"fault_seed", port_fault_seed, "an unsigned 64-bit integer", false},
	{"fault_ce", port_fault_ce, "a fraction 0..1 such as 0.01", false},
};

/*
 * The congestion control keys of [port.N]: one per parameter of
 * lib/transport/cc_params.def, named as ConnectX names them. The ecn key is
 * the table's own (port_ecn), which sets cc.ecn as well.
 * @return 0, -ENOENT if @p name is no such key, -EINVAL with @p err set.
 */
static int
port_cc_key(struct key_ctx *c, const char *file, const char *name, const char *val, char *err,
	    size_t errlen)
{
	const struct uroce_eng_cc_param_info *pi;
	unsigned int v;
	int i = uroce_eng_cc_param_find(name);

	if (i < 0 || strcmp(name, "ecn") == 0)
		return -ENOENT;
	pi = uroce_eng_cc_param_info((unsigned int)i);
	if (parse_uint(val, pi->min, pi->max, &v) != 0 ||
	    uroce_eng_cc_param_set(&c->port->cc, (unsigned int)i, v) != 0)
		return cfg_err(err, errlen, -EINVAL, file, c->port->section, name, val,
			       "expected %u..%u (%s): %s", pi->min, pi->max, pi->unit, pi->desc);
	return 0;
}

static int
apply_section(struct rte_cfgfile *f, const char *file, const char *sec,
	      const struct key_desc *keys, size_t n_keys, struct key_ctx *ctx, char *err,
	      size_t errlen)
{
	struct rte_cfgfile_entry *ent;
	int n, i, rc = 0;
	size_t k, j;

	n = rte_cfgfile_section_num_entries(f, sec);
	if (n <= 0)
		return 0;
	ent = calloc((size_t)n, sizeof(*ent));
	if (ent == NULL)
		return cfg_err(err, errlen, -ENOMEM, file, sec, NULL, NULL, "out of memory");
	n = rte_cfgfile_section_entries(f, sec, ent, n);
	for (i = 0; i < n && rc == 0; i++) {
		const struct key_desc *kd = NULL;

		for (k = 0; k < n_keys; k++)
			if (strcmp(ent[i].name, keys[k].name) == 0)
				kd = &keys[k];
		if (kd == NULL && keys == port_keys) {
			for (j = 0; j < (size_t)i; j++)
				if (strcmp(ent[j].name, ent[i].name) == 0)
					break;
			if (j < (size_t)i && uroce_eng_cc_param_find(ent[i].name) >= 0) {
				rc = cfg_err(err, errlen, -EINVAL, file, sec, ent[i].name, NULL,
					     "given twice");
				break;
			}
			rc = port_cc_key(ctx, file, ent[i].name, ent[i].value, err, errlen);
			if (rc != -ENOENT) {
				if (rc != 0)
					break;
				continue;
			}
			rc = 0;
		}
		if (kd == NULL) {
			char known[512] = "";
			size_t off = 0;

			for (k = 0; k < n_keys && off < sizeof(known); k++)
				off += (size_t)snprintf(known + off, sizeof(known) - off, "%s%s",
							k ? ", " : "", keys[k].name);
			rc = cfg_err(err, errlen, -EINVAL, file, sec, ent[i].name, NULL,
				     "unknown key (known: %s%s)", known, keys == port_keys ?
				     ", and the congestion control keys of doc/congestion.md" : "");
			break;
		}
		if (!kd->repeat) {
			for (j = 0; j < (size_t)i; j++)
				if (strcmp(ent[j].name, kd->name) == 0)
					break;
			if (j < (size_t)i) {
				rc = cfg_err(err, errlen, -EINVAL, file, sec, kd->name, NULL,
					     "given twice");
				break;
			}
		}
		ctx->problem = NULL;
		rc = kd->set(ctx, ent[i].value);
		if (rc == -E2BIG)
			rc = cfg_err(err, errlen, -E2BIG, file, sec, kd->name, ent[i].value,
				     "too many entries (at most %d)",
				     kd->set == port_neighbor ? UROCE_DP_MAX_STATIC_NEIGH
							      : UROCE_DP_MAX_EAL_ITEMS);
		else if (rc != 0)
			rc = cfg_err(err, errlen, -EINVAL, file, sec, kd->name, ent[i].value,
				     "%s%sexpected %s", ctx->problem ? ctx->problem : "",
				     ctx->problem ? "; " : "", kd->expect);
	}
	free(ent);
	return rc;
}

/* Load with DPDK's log captured, so a syntax error becomes our one line. */
static struct rte_cfgfile *
load_quiet(const char *path, char *why, size_t whylen)
{
	struct rte_cfgfile_parameters params;
	struct rte_cfgfile *f;
	FILE *old = rte_log_get_stream();
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;

	memset(&params, 0, sizeof(params));
	params.comment_character = '#';
	mem = open_memstream(&buf, &len);
	if (mem != NULL)
		rte_openlog_stream(mem);
	f = rte_cfgfile_load_with_params(path, 0, &params);
	if (mem != NULL) {
		rte_openlog_stream(old == stderr ? NULL : old);
		fclose(mem);
	}
	why[0] = '\0';
	if (buf != NULL) {
		char *nl;
		char *p = buf;

		/* Keep the first message, minus any "CFGFILE: " style prefix. */
		nl = strchr(p, '\n');
		if (nl != NULL)
			*nl = '\0';
		if (strncmp(p, "CFGFILE: ", 9) == 0)
			p += 9;
		if (strncmp(p, "rte_cfgfile_load_with_params(): ", 32) == 0)
			p += 32;
		snprintf(why, whylen, "%s", p);
		free(buf);
	}
	return f;
}

/*
 * rte_cfgfile (22.11) silently skips a line that has no '=', and rejects an
 * unterminated section without saying where. This pass does no parsing: it
 * only finds such lines, so the error can name the line.
 */
static int
lint_lines(const char *path, char *why, size_t whylen)
{
	char l[1024];
	unsigned int n = 0;
	bool in_section = false;
	int rc = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return 0;
	while (rc == 0 && fgets(l, sizeof(l), f) != NULL) {
		char *p = l, *hash;

		n++;
		hash = strchr(p, '#');
		if (hash != NULL)
			*hash = '\0';
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			continue;
		if (*p == '[') {
			if (strchr(p, ']') == NULL) {
				snprintf(why, whylen, "line %u: section name without ']'", n);
				rc = -EINVAL;
			}
			in_section = true;
		} else if (!in_section) {
			snprintf(why, whylen, "line %u: key before the first [section]", n);
			rc = -EINVAL;
		} else if (strchr(p, '=') == NULL) {
			snprintf(why, whylen, "line %u: expected 'key = value' or '[section]'", n);
			rc = -EINVAL;
		}
	}
	fclose(f);
	return rc;
}

static bool
port_section(const char *sec)
{
	const char *p;

	if (strncmp(sec, "port.", 5) != 0 || sec[5] == '\0')
		return false;
	for (p = sec + 5; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
			return false;
	return true;
}

int
uroce_dp_config_load(struct uroce_dp_config *cfg, const char *path, char *err, size_t errlen)
{
	struct rte_cfgfile *f;
	char why[256];
	char **secs = NULL;
	int n, i, rc = 0;
	struct key_ctx ctx = {.cfg = cfg};
	FILE *probe;

	probe = fopen(path, "r");
	if (probe == NULL) {
		rc = -errno;
		return cfg_err(err, errlen, rc, path, NULL, NULL, NULL, "cannot open: %s",
			       strerror(-rc));
	}
	fclose(probe);
	if (lint_lines(path, why, sizeof(why)) != 0)
		return cfg_err(err, errlen, -EINVAL, path, NULL, NULL, NULL, "syntax error: %s",
			       why);
	f = load_quiet(path, why, sizeof(why));
	if (f == NULL)
		return cfg_err(err, errlen, -EINVAL, path, NULL, NULL, NULL, "syntax error: %s",
			       why[0] ? why : "rte_cfgfile could not parse the file");
	snprintf(cfg->file, sizeof(cfg->file), "%s", path);

	n = rte_cfgfile_num_sections(f, NULL, 0);
	if (n > 0) {
		secs = calloc((size_t)n, sizeof(*secs));
		if (secs == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		for (i = 0; i < n; i++) {
			secs[i] = malloc(CFG_NAME_LEN);
			if (secs[i] == NULL) {
				rc = -ENOMEM;
				goto out;
			}
		}
		rte_cfgfile_sections(f, secs, n);
	}
	for (i = 0; i < n && rc == 0; i++) {
		const char *s = secs[i];
		int j;

		for (j = 0; j < i; j++)
			if (strcmp(secs[j], s) == 0)
				break;
		if (j < i) {
			rc = cfg_err(err, errlen, -EINVAL, path, s, NULL, NULL,
				     "section given twice");
			break;
		}
		if (strcmp(s, "eal") == 0) {
			rc = apply_section(f, path, s, eal_keys, UROCE_ARRAY_SIZE(eal_keys), &ctx,
					   err, errlen);
		} else if (strcmp(s, "daemon") == 0) {
			rc = apply_section(f, path, s, daemon_keys, UROCE_ARRAY_SIZE(daemon_keys),
					   &ctx, err, errlen);
		} else if (strcmp(s, "limits") == 0) {
			rc = apply_section(f, path, s, limits_keys, UROCE_ARRAY_SIZE(limits_keys),
					   &ctx, err, errlen);
		} else if (port_section(s)) {
			struct uroce_dp_port_cfg *p;

			if (cfg->n_ports >= UROCE_DP_MAX_PORTS) {
				rc = cfg_err(err, errlen, -E2BIG, path, s, NULL, NULL,
					     "too many ports (at most %d)", UROCE_DP_MAX_PORTS);
				break;
			}
			p = &cfg->ports[cfg->n_ports];
			memset(p, 0, sizeof(*p));
			snprintf(p->section, sizeof(p->section), "%s", s);
			/* ConnectX's congestion control, ECT(0) on data. */
			uroce_eng_cc_params_default(&p->cc);
			p->ecn = (uint8_t)p->cc.ecn;
			ctx.port = p;
			rc = apply_section(f, path, s, port_keys, UROCE_ARRAY_SIZE(port_keys),
					   &ctx, err, errlen);
			if (rc == 0 && p->device[0] == '\0')
				rc = cfg_err(err, errlen, -EINVAL, path, s, "device", NULL,
					     "missing: give device = <ethdev name> or "
					     "vdev = <vdev argument>");
			if (rc == 0 && !p->has_ipv4 && !p->has_ipv6)
				rc = cfg_err(err, errlen, -EINVAL, path, s, "ipv4", NULL,
					     "missing: a port needs ipv4 and/or ipv6");
			if (rc == 0)
				rc = check_fault_sum(p, path, err, errlen);
			if (rc == 0)
				rc = check_port_cc(p, path, err, errlen);
			if (rc == 0)
				rc = pmd_vdev_args(cfg, p, path, err, errlen);
			if (rc == 0)
				cfg->n_ports++;
		} else {
			rc = cfg_err(err, errlen, -EINVAL, path, s, NULL, NULL,
				     "unknown section (known: eal, daemon, limits, port.<name>)");
		}
	}
out:
	if (rc == -ENOMEM)
		cfg_err(err, errlen, rc, path, NULL, NULL, NULL, "out of memory");
	if (secs != NULL) {
		for (i = 0; i < n; i++)
			free(secs[i]);
		free(secs);
	}
	rte_cfgfile_close(f);
	return rc;
}

/*
 * The CPUs of an lcore list in EAL's --lcores syntax: elements
 * "LCORES[@CPUS]" separated by commas, each set a number, a range "a-b" or
 * a parenthesised list of those; without "@", an lcore runs on the CPU of
 * its number. 0, or -EINVAL where the text does not parse (EAL judges it).
 */
static int
lc_num(const char **s, unsigned int *v)
{
	char *end;
	unsigned long n;

	if (!isdigit((unsigned char)**s))
		return -EINVAL;
	errno = 0;
	n = strtoul(*s, &end, 10);
	if (errno != 0 || n > UINT_MAX)
		return -EINVAL;
	*v = (unsigned int)n;
	*s = end;
	return 0;
}

/* One number or range at *s, added to @set (numbers past the set: @over). */
static int
lc_range(const char **s, cpu_set_t *set, unsigned int *over)
{
	unsigned int lo, hi, i;

	if (lc_num(s, &lo) != 0)
		return -EINVAL;
	hi = lo;
	if (**s == '-') {
		(*s)++;
		if (lc_num(s, &hi) != 0 || hi < lo)
			return -EINVAL;
	}
	for (i = lo; i <= hi && i < CPU_SETSIZE; i++)
		CPU_SET(i, set);
	if (hi >= CPU_SETSIZE && *over == UINT_MAX)
		*over = UROCE_MAX(lo, (unsigned int)CPU_SETSIZE);
	return 0;
}

static int
lc_set(const char **s, cpu_set_t *set, unsigned int *over)
{
	if (**s != '(')
		return lc_range(s, set, over);
	do {
		(*s)++;
		if (lc_range(s, set, over) != 0)
			return -EINVAL;
	} while (**s == ',');
	if (**s != ')')
		return -EINVAL;
	(*s)++;
	return 0;
}

static int
lc_cpus(const char *list, cpu_set_t *cpus, unsigned int *over)
{
	const char *s = list;

	CPU_ZERO(cpus);
	*over = UINT_MAX;
	for (;;) {
		cpu_set_t lcores;

		CPU_ZERO(&lcores);
		if (lc_set(&s, &lcores, over) != 0)
			return -EINVAL;
		if (*s == '@') {
			s++;
			if (lc_set(&s, cpus, over) != 0)
				return -EINVAL;
		} else {
			CPU_OR(cpus, cpus, &lcores);
		}
		if (*s == '\0')
			return 0;
		if (*s++ != ',')
			return -EINVAL;
	}
}

/* "0-1,4" */
static void
cpus_str(const cpu_set_t *set, char *buf, size_t len)
{
	unsigned int i, j;
	size_t l = 0;

	buf[0] = '\0';
	for (i = 0; i < CPU_SETSIZE && l < len; i++) {
		if (!CPU_ISSET(i, set))
			continue;
		for (j = i; j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, set); j++)
			;
		if (j == i)
			l += (size_t)snprintf(buf + l, len - l, "%s%u", l ? "," : "", i);
		else
			l += (size_t)snprintf(buf + l, len - l, "%s%u-%u", l ? "," : "", i, j);
		i = j;
	}
}

int
dp_lcores_check(const char *lcores, const cpu_set_t *allowed, char *err, size_t errlen)
{
	char have[128];
	cpu_set_t want;
	unsigned int i, over;

	if (lcores == NULL || lcores[0] == '\0' || lc_cpus(lcores, &want, &over) != 0)
		return 0;
	cpus_str(allowed, have, sizeof(have));
	for (i = 0; i < CPU_SETSIZE && over == UINT_MAX; i++)
		if (CPU_ISSET(i, &want) && !CPU_ISSET(i, allowed))
			over = i;
	if (over == UINT_MAX)
		return 0;
	snprintf(err, errlen, "lcores \"%s\": CPU %u does not exist or is not this process's "
		 "to use (it may run on CPUs %s): give lcores on those CPUs, or map each "
		 "lcore onto one of them (LCORE@CPU)", lcores, over, have[0] ? have : "none");
	return -EINVAL;
}

int
uroce_dp_lcores_check(const char *lcores, char *err, size_t errlen)
{
	cpu_set_t allowed;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		return 0; /* cannot tell: EAL judges */
	return dp_lcores_check(lcores, &allowed, err, errlen);
}

int
uroce_dp_config_adopt_eal_args(struct uroce_dp_config *cfg, char *err, size_t errlen)
{
	unsigned int i, j, n;

	for (i = 0; i < cfg->n_extra; i += n) {
		const char *a = cfg->extra[i], *val = NULL;

		n = 1;
		if (strcmp(a, "--file-prefix") == 0) {
			if (i + 1 >= cfg->n_extra)
				return cfg_err(err, errlen, -EINVAL, "command line", NULL, NULL, NULL,
					       "--file-prefix after -- needs a value");
			val = cfg->extra[i + 1];
			n = 2;
		} else if (strncmp(a, "--file-prefix=", 14) == 0) {
			val = a + 14;
		} else if (strcmp(a, "--in-memory") == 0) {
			cfg->in_memory = true;
		} else {
			continue;
		}
		if (val != NULL) {
			if (!prefix_ok(val) || strlen(val) >= sizeof(cfg->file_prefix))
				return cfg_err(err, errlen, -EINVAL, "command line", NULL, NULL, NULL,
					       "--file-prefix \"%s\" after --: letters, digits, "
					       "'_', '-' or '.', at most %zu", val,
					       sizeof(cfg->file_prefix) - 1);
			memmove(cfg->file_prefix, val, strlen(val) + 1);
		}
		/* Taken into the config: uroce_dp_eal_args() passes it once. */
		for (j = i; j + n < cfg->n_extra; j++)
			memcpy(cfg->extra[j], cfg->extra[j + n], sizeof(cfg->extra[0]));
		cfg->n_extra -= n;
		n = 0;
	}
	return 0;
}

static const char *
cfg_name(const struct uroce_dp_config *cfg)
{
	return cfg->file[0] ? cfg->file : "command line";
}

int
uroce_dp_config_validate(const struct uroce_dp_config *cfg, char *err, size_t errlen)
{
	unsigned int i, j, k;

	if (cfg->in_memory && cfg->file_prefix[0] != '\0' && strcmp(cfg->file_prefix, "uroced")) {
		/* EAL refuses --in-memory with --file-prefix. */
		return cfg_err(err, errlen, -EINVAL, cfg_name(cfg), "eal", "in_memory", NULL,
			       "cannot be combined with file_prefix (EAL refuses both)");
	}
	for (i = 0; i < cfg->n_ports; i++) {
		const struct uroce_dp_port_cfg *p = &cfg->ports[i];

		for (j = 0; j < i; j++) {
			const struct uroce_dp_port_cfg *q = &cfg->ports[j];

			if (strcmp(p->device, q->device) == 0)
				return cfg_err(err, errlen, -EINVAL, cfg_name(cfg), p->section,
					       "device", p->device, "already used by [%s]",
					       q->section);
			if (p->has_ipv4 && q->has_ipv4 && memcmp(p->ipv4, q->ipv4, 4) == 0)
				return cfg_err(err, errlen, -EINVAL, cfg_name(cfg), p->section,
					       "ipv4", NULL, "address already used by [%s]",
					       q->section);
			if (p->has_ipv6 && q->has_ipv6 && memcmp(p->ipv6, q->ipv6, 16) == 0)
				return cfg_err(err, errlen, -EINVAL, cfg_name(cfg), p->section,
					       "ipv6", NULL, "address already used by [%s]",
					       q->section);
		}
		if (p->has_ipv6 && p->mtu != 0 && p->mtu < 1280)
			return cfg_err(err, errlen, -EINVAL, cfg_name(cfg), p->section, "mtu", NULL,
				       "%u is below 1280, the IPv6 minimum (RFC 8200)", p->mtu);
		for (k = 0; k < p->n_neigh; k++) {
			const struct uroce_dp_neigh_cfg *n = &p->neigh[k];
			char ip[64];

			uroce_dp_gid_str(n->ip, ip, sizeof(ip));
			if (n->family == UROCE_IP_V4 && !p->has_ipv4)
				return cfg_err(err, errlen, -EINVAL, cfg_name(cfg), p->section,
					       "neighbor", ip + 7, "IPv4 neighbour on a port with no "
					       "ipv4 address");
		}
	}
	return 0;
}

/* "0000:01:00.0" or "01:00.0": a PCI address, as EAL's allow list takes it. */
static bool
looks_pci(const char *s)
{
	unsigned int d, b, dev, f;
	char tail;

	return sscanf(s, "%x:%x:%x.%x%c", &d, &b, &dev, &f, &tail) == 4 ||
	       sscanf(s, "%x:%x.%x%c", &b, &dev, &f, &tail) == 3;
}

int
uroce_dp_eal_args(const struct uroce_dp_config *cfg, const char *prog, char **argv, int max)
{
	static char mem[16];
	bool pci = false;
	int argc = 0;
	unsigned int i;

#define ADD(s)                           \
	do {                             \
		if (argc >= max - 1)     \
			return -E2BIG;   \
		argv[argc++] = (char *)(s); \
	} while (0)

	ADD(prog);
	if (cfg->lcores[0] != '\0') {
		ADD("--lcores"); /* -l takes no "lcore@cpu" mapping */
		ADD(cfg->lcores);
	}
	if (cfg->in_memory) {
		ADD("--in-memory");
	} else {
		ADD("--file-prefix");
		ADD(cfg->file_prefix);
	}
	if (cfg->no_huge)
		ADD("--no-huge");
	if (cfg->memory_mb != 0 || cfg->no_huge) {
		snprintf(mem, sizeof(mem), "%u", cfg->memory_mb ? cfg->memory_mb : 256);
		ADD("-m");
		ADD(mem);
	}
	/* Probe only the PCI devices the ports name (plus any allow entries). */
	for (i = 0; i < cfg->n_ports; i++) {
		unsigned int j;

		if (!looks_pci(cfg->ports[i].device))
			continue;
		pci = true;
		for (j = 0; j < cfg->n_allow; j++)
			if (strcmp(cfg->allow[j], cfg->ports[i].device) == 0)
				break;
		if (j == cfg->n_allow) {
			ADD("-a");
			ADD(cfg->ports[i].device);
		}
	}
	if (cfg->no_pci || (!pci && cfg->n_allow == 0))
		ADD("--no-pci");
	if (cfg->log_level[0] != '\0') {
		ADD("--log-level");
		ADD(cfg->log_level);
	}
	for (i = 0; i < cfg->n_vdev; i++) {
		ADD("--vdev");
		ADD(cfg->vdev[i]);
	}
	for (i = 0; i < cfg->n_allow; i++) {
		ADD("-a");
		ADD(cfg->allow[i]);
	}
	for (i = 0; i < cfg->n_extra; i++)
		ADD(cfg->extra[i]);
#undef ADD
	argv[argc] = NULL;
	return argc;
}
