/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * DPDK telemetry commands under /uroce/ (read them with dpdk-telemetry.py):
 *   /uroce/info              daemon summary
 *   /uroce/ports             port indexes
 *   /uroce/port/info,N       device, MAC, MTU, addresses, VLAN, link
 *   /uroce/port/stats,N      counters (dp_counters.def and the parse errors)
 *   /uroce/port/mempool,N    the mbuf pool: size, in use (caches count as free), avail
 *   /uroce/counters          what each counter means
 *   /uroce/port/gids,N       the GID table; array position = GID index
 *   /uroce/port/neigh,N      the neighbour table
 *   /uroce/port/resolve,N,IP start or poll resolution of IP (like arping):
 *                            {"state": "reachable", "mac": ...} or pending/failed
 * Callbacks run on DPDK's telemetry thread. Counters are summed from the
 * per-thread slots without locking: each is a naturally aligned 64-bit word
 * written by one thread, so a read sees an old or a new value, never a torn one.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>
#include <rte_telemetry.h>

#include "uroce_dp_driver.h"

#include "dp_internal.h"

static struct uroce_dp *tel_dp;

static const char *const cnt_names[] = {
#define DP_CNT(field, name, desc) name,
#include "dp_counters.def"
#undef DP_CNT
};

static const char *const cnt_descs[] = {
#define DP_CNT(field, name, desc) desc,
#include "dp_counters.def"
#undef DP_CNT
};

static struct dp_port *
tel_port(const char *params)
{
	struct uroce_dp *dp = tel_dp;
	unsigned long v;
	char *end;

	if (dp == NULL || params == NULL || *params == '\0')
		return NULL;
	v = strtoul(params, &end, 10);
	if (*end != '\0' || v >= dp->n_ports)
		return NULL;
	return &dp->ports[v];
}

static void
mac_str(const uint8_t *m, char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static int
tel_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct uroce_dp *dp = tel_dp;

	(void)cmd;
	(void)params;
	if (dp == NULL)
		return -EAGAIN;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "config", dp->cfg.file[0] ? dp->cfg.file : "(none)");
	rte_tel_data_add_dict_u64(d, "ports", dp->n_ports);
	rte_tel_data_add_dict_u64(d, "workers", dp->n_workers);
	rte_tel_data_add_dict_u64(d, "tsc_hz", dp->tsc_hz);
	rte_tel_data_add_dict_string(d, "socket", dp->cfg.socket_path);
	rte_tel_data_add_dict_string(d, "crc32", uroce_crc32_impl());
	/* A PMD unmaps rings under the bursts (memif): unmaps wait (grace.h). */
	rte_tel_data_add_dict_int(d, "unmap_guard", dp->unmap_guard);
	rte_tel_data_add_dict_u64(d, "unmaps_waited", dp_grace_unmaps_waited());
	return 0;
}

static int
tel_counters(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char name[64], desc[96];
	unsigned int k;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (k = 0; k < UROCE_ARRAY_SIZE(cnt_names); k++)
		rte_tel_data_add_dict_string(d, cnt_names[k], cnt_descs[k]);
	for (k = 1; k < UROCE_WIRE_ERR_MAX; k++) {
		if (k == UROCE_WIRE_BAD_ICRC)
			snprintf(name, sizeof(name), "rx_icrc_errors");
		else
			snprintf(name, sizeof(name), "rx_%s", uroce_wire_strerror(k));
		snprintf(desc, sizeof(desc), "dropped: RoCEv2 parse error \"%s\" (lib/wire)",
			 uroce_wire_strerror(k));
		rte_tel_data_add_dict_string(d, name, desc);
	}
	return 0;
}

static int
tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct uroce_dp *dp = tel_dp;
	unsigned int i;

	(void)cmd;
	(void)params;
	if (dp == NULL)
		return -EAGAIN;
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (i = 0; i < dp->n_ports; i++)
		rte_tel_data_add_array_int(d, (int)i);
	return 0;
}

/* The port's congestion control parameters, as one nested dictionary. */
static void
tel_port_cc(struct rte_tel_data *d, const struct uroce_eng_cc_params *cc)
{
	struct rte_tel_data *c = rte_tel_data_alloc();
	unsigned int i;

	if (c == NULL)
		return;
	rte_tel_data_start_dict(c);
	for (i = 0; i < uroce_eng_cc_param_count(); i++)
		rte_tel_data_add_dict_u64(c, uroce_eng_cc_param_info(i)->name,
					  uroce_eng_cc_param_get(cc, i));
	if (rte_tel_data_add_dict_container(d, "congestion", c, 0) != 0)
		rte_tel_data_free(c);
}

static int
tel_port_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct dp_port *p = tel_port(params);
	struct rte_eth_link link;
	char buf[96], ip[64];

	(void)cmd;
	if (p == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "section", p->cfg.section);
	rte_tel_data_add_dict_string(d, "device", p->cfg.device);
	rte_tel_data_add_dict_int(d, "ethdev_port", p->port_id);
	rte_tel_data_add_dict_int(d, "numa_node", p->socket);
	mac_str(p->mac, buf, sizeof(buf));
	rte_tel_data_add_dict_string(d, "mac", buf);
	rte_tel_data_add_dict_int(d, "mac_in_software", p->promisc);
	rte_tel_data_add_dict_int(d, "mtu", p->mtu);
	if (p->cfg.has_ipv4) {
		uroce_dp_gid_str(p->v4gid, ip, sizeof(ip));
		snprintf(buf, sizeof(buf), "%s/%u", ip + 7, p->cfg.ipv4_prefix);
		rte_tel_data_add_dict_string(d, "ipv4", buf);
	}
	if (p->cfg.has_ipv6) {
		uroce_dp_gid_str(p->cfg.ipv6, ip, sizeof(ip));
		snprintf(buf, sizeof(buf), "%s/%u", ip, p->cfg.ipv6_prefix);
		rte_tel_data_add_dict_string(d, "ipv6", buf);
	}
	rte_tel_data_add_dict_int(d, "vlan", p->cfg.has_vlan ? p->cfg.vlan_id : 0);
	rte_tel_data_add_dict_int(d, "pcp", p->cfg.pcp);
	rte_tel_data_add_dict_int(d, "dscp", p->cfg.dscp);
	rte_tel_data_add_dict_int(d, "ecn", p->cfg.ecn);
	tel_port_cc(d, &p->cfg.cc);
	rte_tel_data_add_dict_string(d, "steering", p->steered ? "rte_flow" :
				     tel_dp->n_workers > 1 ? "software" : "none");
	rte_tel_data_add_dict_int(d, "steering_rules", uroce_dp_steer() != NULL ?
				  (int)uroce_dp_steer()->rules(p->port_id) : 0);
	if (p->steer_why[0] != '\0')
		rte_tel_data_add_dict_string(d, "steering_reason", p->steer_why);
	/* Payload bytes from which packets leave zero-copy; 0: never. */
	rte_tel_data_add_dict_int(d, "zero_copy_min", p->zc ? (int)tel_dp->cfg.zc_min : 0);
	if (!p->zc && tel_dp->cfg.zc_min != 0)
		rte_tel_data_add_dict_string(d, "zero_copy_reason", p->zc_why);
	if (rte_eth_link_get_nowait(p->port_id, &link) == 0) {
		rte_tel_data_add_dict_int(d, "link_up", link.link_status);
		rte_tel_data_add_dict_u64(d, "link_speed_mbps", link.link_speed);
	}
	return 0;
}

static int
tel_port_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct dp_port *p = tel_port(params);
	struct uroce_dp *dp = tel_dp;
	uint64_t sum[UROCE_ARRAY_SIZE(cnt_names)];
	uint64_t werr[UROCE_WIRE_ERR_MAX];
	char name[64];
	unsigned int i, k;

	(void)cmd;
	if (p == NULL)
		return -EINVAL;
	memset(sum, 0, sizeof(sum));
	memset(werr, 0, sizeof(werr));
	for (i = 0; i <= dp->n_workers; i++) {
		const volatile struct dp_counters *c = &p->cnt[i];

		k = 0;
#define DP_CNT(field, n, desc) sum[k++] += c->field;
#include "dp_counters.def"
#undef DP_CNT
		for (k = 1; k < UROCE_WIRE_ERR_MAX; k++)
			werr[k] += c->wire_err[k];
	}
	rte_tel_data_start_dict(d);
	for (k = 0; k < UROCE_ARRAY_SIZE(cnt_names); k++)
		rte_tel_data_add_dict_u64(d, cnt_names[k], sum[k]);
	for (k = 1; k < UROCE_WIRE_ERR_MAX; k++) {
		/* mlx5 calls the ICRC counter rx_icrc_errors; the rest keep lib/wire's names. */
		if (k == UROCE_WIRE_BAD_ICRC)
			snprintf(name, sizeof(name), "rx_icrc_errors");
		else
			snprintf(name, sizeof(name), "rx_%s", uroce_wire_strerror(k));
		rte_tel_data_add_dict_u64(d, name, werr[k]);
	}
	return 0;
}

/* The port's mbuf pool: in use is what the pool lacks, per-lcore caches
 * counted as available (rte_mempool_in_use_count()), so a soak test can
 * compare it with a baseline once traffic has stopped. */
static int
tel_port_mempool(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct dp_port *p = tel_port(params);

	(void)cmd;
	if (p == NULL || p->pool == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", p->pool->name);
	rte_tel_data_add_dict_u64(d, "size", p->pool->size);
	rte_tel_data_add_dict_u64(d, "cache_size", p->pool->cache_size);
	rte_tel_data_add_dict_u64(d, "in_use", rte_mempool_in_use_count(p->pool));
	rte_tel_data_add_dict_u64(d, "avail", rte_mempool_avail_count(p->pool));
	return 0;
}

static int
tel_port_gids(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct dp_port *p = tel_port(params);
	char buf[64];
	unsigned int i;

	(void)cmd;
	if (p == NULL)
		return -EINVAL;
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	for (i = 0; i < p->n_gid; i++) {
		uroce_dp_gid_str(p->gid[i], buf, sizeof(buf));
		rte_tel_data_add_array_string(d, buf);
	}
	return 0;
}

static int
tel_port_neigh(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *const st[] = {"free", "pending", "reachable", "failed", "static",
					 "probe"};
	struct dp_port *p = tel_port(params);
	char ip_s[64], mac_s[32], buf[128];
	uint8_t ip[16], mac[6];
	unsigned int n = 0;
	uint32_t i;
	int state;

	(void)cmd;
	if (p == NULL)
		return -EINVAL;
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	/* The published table, read as a worker reads it (no lock): in slot order. */
	for (i = 0; i <= p->nt.mask && n < RTE_TEL_MAX_ARRAY_ENTRIES; i++) {
		state = dp_ntable_read(&p->nt, i, ip, mac);
		if (state <= DP_NEIGH_FREE || (size_t)state >= RTE_DIM(st))
			continue;
		uroce_dp_gid_str(ip, ip_s, sizeof(ip_s));
		mac_str(mac, mac_s, sizeof(mac_s));
		snprintf(buf, sizeof(buf), "%s %s %s", ip_s, mac_s, st[state]);
		rte_tel_data_add_array_string(d, buf);
		n++;
	}
	return 0;
}

static int
tel_port_resolve(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct uroce_dp *dp = tel_dp;
	enum uroce_ip_family fam;
	char pbuf[128], mac_s[32];
	uint8_t gid[16], mac[6], pfx;
	struct dp_port *p;
	char *comma;
	int rc;

	(void)cmd;
	if (dp == NULL || params == NULL || strlen(params) >= sizeof(pbuf))
		return -EINVAL;
	snprintf(pbuf, sizeof(pbuf), "%s", params);
	comma = strchr(pbuf, ',');
	if (comma == NULL)
		return -EINVAL;
	*comma = '\0';
	p = tel_port(pbuf);
	if (p == NULL)
		return -EINVAL;
	/* Reuse the prefix parser: "IP" becomes "IP/32" or "IP/128". */
	snprintf(pbuf, sizeof(pbuf), "%s/%d", comma + 1, strchr(comma + 1, ':') ? 128 : 32);
	if (uroce_dp_parse_prefix(pbuf, &fam, gid, &pfx) != 0)
		return -EINVAL;
	rc = uroce_dp_resolve(dp, (uint16_t)(p - dp->ports), gid, mac);
	rte_tel_data_start_dict(d);
	switch (rc) {
	case 0:
		rte_tel_data_add_dict_string(d, "state", "reachable");
		mac_str(mac, mac_s, sizeof(mac_s));
		rte_tel_data_add_dict_string(d, "mac", mac_s);
		break;
	case -EAGAIN:
		rte_tel_data_add_dict_string(d, "state", "pending");
		break;
	case -EHOSTUNREACH:
		rte_tel_data_add_dict_string(d, "state", "failed");
		break;
	default:
		rte_tel_data_add_dict_string(d, "state", "error");
		rte_tel_data_add_dict_string(d, "error", strerror(-rc));
		break;
	}
	return 0;
}

void
dp_telemetry_detach(const struct uroce_dp *dp)
{
	/* Callbacks that already read tel_dp finish before rte_eal_cleanup(). */
	if (tel_dp == dp)
		tel_dp = NULL;
}

int
uroce_dp_telemetry_register(struct uroce_dp *dp)
{
	static bool done;
	int rc = 0;

	tel_dp = dp;
	if (done)
		return 0;
	rc |= rte_telemetry_register_cmd("/uroce/info", tel_info,
					 "uroced summary. Takes no parameters");
	rc |= rte_telemetry_register_cmd("/uroce/counters", tel_counters,
					 "What each port counter means. Takes no parameters");
	rc |= rte_telemetry_register_cmd("/uroce/ports", tel_ports,
					 "uroce port indexes. Takes no parameters");
	rc |= rte_telemetry_register_cmd("/uroce/port/info", tel_port_info,
					 "Port configuration and link. Parameters: int port");
	rc |= rte_telemetry_register_cmd("/uroce/port/stats", tel_port_stats,
					 "Port counters. Parameters: int port");
	rc |= rte_telemetry_register_cmd("/uroce/port/mempool", tel_port_mempool,
					 "mbuf pool: size, in_use, avail. Parameters: int port");
	rc |= rte_telemetry_register_cmd("/uroce/port/gids", tel_port_gids,
					 "GID table; array index = GID index. Parameters: int port");
	rc |= rte_telemetry_register_cmd("/uroce/port/neigh", tel_port_neigh,
					 "Neighbour table. Parameters: int port");
	rc |= rte_telemetry_register_cmd("/uroce/port/resolve", tel_port_resolve,
					 "Resolve an IP (ARP / ND). Parameters: int port, IP");
	done = true;
	return rc != 0 ? -EINVAL : 0;
}
