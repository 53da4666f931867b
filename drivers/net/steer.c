/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * RoCEv2 steering by NIC family. The table below says, per driver name, which
 * strategy a family gets and which RoCEv2 patterns to ask for; the code only
 * executes it. A family marked software is not even tried (its PMD has no
 * rte_flow, or none that can match a UDP port), and its reason is reported.
 * Any other driver is tried: each pattern is validated, then created, and a
 * refusal is reported with the driver's own rte_flow error message.
 *
 * State: one slot per ethdev port holding the rule handles. Control path
 * only, one thread (see uroce_steer.h).
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_log.h>

#include "uroce_steer.h"

/* The IANA-assigned RoCEv2 UDP destination port (IBA Annex A17, RoCEv2). */
#define STEER_ROCEV2_UDP_PORT 4791

RTE_LOG_REGISTER(steer_logtype, uroce.steer, NOTICE);

/* The RoCEv2 patterns, one rte_flow rule each. */
enum steer_pattern {
	PAT_IPV4,      /* ETH / IPV4 / UDP dst 4791 */
	PAT_IPV6,      /* ETH / IPV6 / UDP dst 4791 */
	PAT_VLAN_IPV4, /* ETH / VLAN / IPV4 / UDP dst 4791 */
	PAT_VLAN_IPV6, /* ETH / VLAN / IPV6 / UDP dst 4791 */
	PAT_MAX,
};

_Static_assert(PAT_MAX == UROCE_STEER_MAX_RULES, "one rule per pattern");

#define PAT_BIT(p) (1u << (p))
#define PAT_ALL (PAT_BIT(PAT_IPV4) | PAT_BIT(PAT_IPV6) | PAT_BIT(PAT_VLAN_IPV4) | \
		 PAT_BIT(PAT_VLAN_IPV6))

static const char *const pattern_name[PAT_MAX] = {
	[PAT_IPV4] = "ipv4",
	[PAT_IPV6] = "ipv6",
	[PAT_VLAN_IPV4] = "vlan/ipv4",
	[PAT_VLAN_IPV6] = "vlan/ipv6",
};

enum steer_strategy {
	STEER_RTE_FLOW,  /* validate and create the patterns */
	STEER_SOFTWARE,  /* do not try: software hand-off */
};

/*
 * One NIC family. The hardware rows have flow engines that match a UDP
 * destination port with a QUEUE action; none of them has been run here (no
 * such NIC on the test machine), so each is tried and, refused, falls back
 * like any other driver. The ixgbe row is deliberately conservative: only the
 * untagged patterns are asked for. net_tap needs the kernel's multiq qdisc,
 * flower classifier and skbedit action; without them it refuses at create.
 */
struct steer_family {
	const char *driver;           /* rte_eth_dev_info.driver_name */
	enum steer_strategy strategy;
	unsigned int patterns;        /* PAT_BIT() set to install */
	const char *note;             /* software: the reason reported; rte_flow: what does it */
};

static const struct steer_family families[] = {
	{ "mlx5_pci", STEER_RTE_FLOW, PAT_ALL, "ConnectX flow steering" },
	{ "net_ice", STEER_RTE_FLOW, PAT_ALL, "E810 flow director / switch filter" },
	{ "net_i40e", STEER_RTE_FLOW, PAT_ALL, "X710 flow director" },
	{ "net_iavf", STEER_RTE_FLOW, PAT_ALL, "E810/X710 VF flow director" },
	{ "net_ixgbe", STEER_RTE_FLOW, PAT_BIT(PAT_IPV4) | PAT_BIT(PAT_IPV6),
	  "82599/X5xx ntuple or flow director; untagged patterns only" },
	{ "net_tap", STEER_RTE_FLOW, PAT_ALL, "tc flower rules on the tap interface" },
	{ "net_memif", STEER_SOFTWARE, 0, "rte_flow not supported" },
	{ "net_af_packet", STEER_SOFTWARE, 0,
	  "rte_flow not supported (the kernel picks the queue: PACKET_FANOUT)" },
	{ "net_af_xdp", STEER_SOFTWARE, 0,
	  "rte_flow not supported (steer with ethtool ntuple rules on the kernel side)" },
	{ "net_ring", STEER_SOFTWARE, 0, "rte_flow not supported" },
	{ "net_null", STEER_SOFTWARE, 0, "rte_flow not supported" },
	{ "net_pcap", STEER_SOFTWARE, 0, "rte_flow not supported" },
	{ "net_virtio", STEER_SOFTWARE, 0, "rte_flow not supported" },
	{ "net_vmxnet3", STEER_SOFTWARE, 0, "rte_flow not supported" },
};

/* A driver the table does not name: try every pattern. */
static const struct steer_family family_generic = {
	NULL, STEER_RTE_FLOW, PAT_ALL, "generic rte_flow attempt",
};

struct steer_port {
	struct rte_flow *flow[PAT_MAX];
	unsigned int n;
};

static struct steer_port steer_ports[RTE_MAX_ETHPORTS];

static int
say(char *why, size_t len, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
say(char *why, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;

	if (why != NULL && len > 0) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static const struct steer_family *
family_of(const char *driver)
{
	unsigned int i;

	if (driver == NULL)
		return &family_generic;
	for (i = 0; i < RTE_DIM(families); i++)
		if (strcmp(families[i].driver, driver) == 0)
			return &families[i];
	return &family_generic;
}

/* The driver's message, or strerror() when it gave none, copied into msg. */
static void
flow_err_msg(const struct rte_flow_error *e, int rc, char *msg, size_t len)
{
	snprintf(msg, len, "%s", e->message != NULL && e->message[0] != '\0' ? e->message :
		 strerror(-rc));
}

/* Validate, then create, one pattern: 0 and *flow set, or -errno and msg. */
static int
create_rule(uint16_t port_id, uint16_t queue, enum steer_pattern pat, struct rte_flow **flow,
	    char *msg, size_t msglen)
{
	static const struct rte_flow_item_udp udp_mask = {
		.hdr.dst_port = RTE_BE16(0xffff),
	};
	const struct rte_flow_item_udp udp_spec = {
		.hdr.dst_port = RTE_BE16(STEER_ROCEV2_UDP_PORT),
	};
	const struct rte_flow_attr attr = { .ingress = 1 };
	const struct rte_flow_action_queue act_queue = { .index = queue };
	const struct rte_flow_action actions[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &act_queue },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow_item items[5];
	struct rte_flow_error err;
	unsigned int n = 0;
	bool v6 = pat == PAT_IPV6 || pat == PAT_VLAN_IPV6;
	int rc;

	/* ETH, VLAN and IP items without spec: any MAC, any VID, any address.
	 * Only the UDP destination port is matched. */
	memset(items, 0, sizeof(items));
	items[n++].type = RTE_FLOW_ITEM_TYPE_ETH;
	if (pat == PAT_VLAN_IPV4 || pat == PAT_VLAN_IPV6)
		items[n++].type = RTE_FLOW_ITEM_TYPE_VLAN;
	items[n++].type = v6 ? RTE_FLOW_ITEM_TYPE_IPV6 : RTE_FLOW_ITEM_TYPE_IPV4;
	items[n].type = RTE_FLOW_ITEM_TYPE_UDP;
	items[n].spec = &udp_spec;
	items[n].mask = &udp_mask;
	n++;
	items[n].type = RTE_FLOW_ITEM_TYPE_END;

	memset(&err, 0, sizeof(err));
	rc = rte_flow_validate(port_id, &attr, items, actions, &err);
	if (rc != 0) {
		flow_err_msg(&err, rc, msg, msglen);
		return rc;
	}
	memset(&err, 0, sizeof(err));
	*flow = rte_flow_create(port_id, &attr, items, actions, &err);
	if (*flow == NULL) {
		rc = rte_errno != 0 ? -rte_errno : -EIO;
		flow_err_msg(&err, rc, msg, msglen);
		return rc;
	}
	return 0;
}

int
uroce_steer_install(uint16_t port_id, uint16_t queue, char *why, size_t len)
{
	const struct steer_family *fam;
	struct rte_eth_dev_info info;
	struct steer_port *sp;
	char done[64] = "", refused[320] = "", msg[128], last_msg[128] = "";
	int first_rc = 0, rc;
	unsigned int p;

	if (why == NULL && len > 0)
		return -EINVAL;
	if (why != NULL && len > 0)
		why[0] = '\0';
	if (!rte_eth_dev_is_valid_port(port_id))
		return say(why, len, -ENODEV, "port %u: no such ethdev port; no steering",
			   port_id);
	rc = rte_eth_dev_info_get(port_id, &info);
	if (rc != 0)
		return say(why, len, rc, "port %u: cannot read device info: %s; software "
			   "hand-off in use", port_id, strerror(-rc));
	if (queue >= info.nb_rx_queues)
		return say(why, len, -EINVAL, "%s: RX queue %u does not exist (the port has %u); "
			   "software hand-off in use", info.driver_name, queue,
			   info.nb_rx_queues);

	uroce_steer_remove(port_id);
	sp = &steer_ports[port_id];
	fam = family_of(info.driver_name);
	if (fam->strategy == STEER_SOFTWARE)
		return say(why, len, -ENOTSUP, "%s: %s; software hand-off in use",
			   info.driver_name, fam->note);

	for (p = 0; p < PAT_MAX; p++) {
		size_t l, ml;

		if (!(fam->patterns & PAT_BIT(p)))
			continue;
		rc = create_rule(port_id, queue, (enum steer_pattern)p, &sp->flow[sp->n], msg,
				 sizeof(msg));
		if (rc == 0) {
			sp->n++;
			l = strlen(done);
			snprintf(done + l, sizeof(done) - l, "%s%s", l ? " " : "", pattern_name[p]);
			continue;
		}
		if (first_rc == 0)
			first_rc = rc;
		/* "ipv4 ipv6: <msg>; vlan/ipv4: <other msg>": a message once per run */
		l = strlen(refused);
		ml = strlen(msg);
		if (strcmp(last_msg, msg) == 0 && l >= ml + 2 &&
		    strcmp(refused + l - ml, msg) == 0 &&
		    strncmp(refused + l - ml - 2, ": ", 2) == 0) {
			/* take ": <msg>" off the run, add this name, put it back */
			l -= ml + 2;
			snprintf(refused + l, sizeof(refused) - l, " %s: %s", pattern_name[p],
				 msg);
		} else {
			snprintf(refused + l, sizeof(refused) - l, "%s%s: %s", l ? "; " : "",
				 pattern_name[p], msg);
		}
		snprintf(last_msg, sizeof(last_msg), "%s", msg);
	}
	if (sp->n == 0)
		return say(why, len, first_rc != 0 ? first_rc : -ENOTSUP,
			   "%s: rte_flow refused (%s); software hand-off in use",
			   info.driver_name, first_rc != 0 ? refused : "no pattern to try");
	if (refused[0] != '\0')
		return say(why, len, 0, "%s: rte_flow, %u rules to RX queue %u (%s); refused "
			   "(%s): software hand-off for those", info.driver_name, sp->n, queue,
			   done, refused);
	return say(why, len, 0, "%s: rte_flow, %u rules to RX queue %u (%s)", info.driver_name,
		   sp->n, queue, done);
}

void
uroce_steer_remove(uint16_t port_id)
{
	struct steer_port *sp;
	struct rte_flow_error err;
	unsigned int i;
	int rc;

	if (port_id >= RTE_MAX_ETHPORTS)
		return;
	sp = &steer_ports[port_id];
	/* A closed or detached port took its rules with it: forget the handles. */
	if (rte_eth_dev_is_valid_port(port_id)) {
		for (i = 0; i < sp->n; i++) {
			memset(&err, 0, sizeof(err));
			rc = rte_flow_destroy(port_id, sp->flow[i], &err);
			if (rc != 0) {
				char msg[128];

				flow_err_msg(&err, rc, msg, sizeof(msg));
				rte_log(RTE_LOG_WARNING, steer_logtype,
					"uroce.steer: port %u: rte_flow_destroy: %s\n", port_id,
					msg);
			}
		}
	}
	memset(sp, 0, sizeof(*sp));
}

unsigned int
uroce_steer_rules(uint16_t port_id)
{
	if (port_id >= RTE_MAX_ETHPORTS)
		return 0;
	return steer_ports[port_id].n;
}
