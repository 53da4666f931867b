/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * drivers/net/steer.c without EAL: the ethdev and rte_flow functions it calls
 * are faked here (the binary links steer.c and this file, not librte_ethdev),
 * so the paths no virtual PMD on a test machine can take are covered: a
 * hardware family that accepts every pattern, one that refuses some, create
 * failing after validate, destroy failing, re-install, an unknown driver.
 * The fake also checks the shape of every rule it is asked for: attr ingress,
 * ETH / [VLAN] / IPV4|IPV6 / UDP with dst 4791 under a full mask, and one
 * QUEUE action to the queue given.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_log.h>

#include "uroce_steer.h"

/* ---- the fake ethdev / rte_flow layer --------------------------------- */

RTE_DEFINE_PER_LCORE(int, _rte_errno);

enum fpat { F_V4, F_V6, F_VLAN_V4, F_VLAN_V6, F_BAD, F_MAX };

struct rte_flow {
	enum fpat pat;
	bool alive;
};

#define FAKE_FLOWS 64

static struct {
	const char *driver;
	uint16_t nb_rxq;
	uint16_t valid_port;
	bool port_gone;               /* the port has been closed/detached */
	int validate_rc[F_MAX];       /* per pattern; 0 accepts */
	const char *validate_msg[F_MAX];
	bool create_fails[F_MAX];     /* validate passes, create fails ENOMEM */
	bool destroy_fails;
	unsigned int validate_calls, create_calls, destroy_calls, bad_shape;
	uint32_t last_queue;
	struct rte_flow flows[FAKE_FLOWS];
	unsigned int n_flows;
	char log[256];
} fk;

static unsigned int
live_flows(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < fk.n_flows; i++)
		n += fk.flows[i].alive;
	return n;
}

int
rte_eth_dev_is_valid_port(uint16_t port_id)
{
	return port_id == fk.valid_port && !fk.port_gone;
}

int
rte_eth_dev_info_get(uint16_t port_id, struct rte_eth_dev_info *info)
{
	if (!rte_eth_dev_is_valid_port(port_id))
		return -ENODEV;
	memset(info, 0, sizeof(*info));
	info->driver_name = fk.driver;
	info->nb_rx_queues = fk.nb_rxq;
	return 0;
}

/* Which pattern a rule is, or F_BAD when its shape is not what steer.c owes. */
static enum fpat
shape(const struct rte_flow_attr *attr, const struct rte_flow_item *it,
      const struct rte_flow_action *act)
{
	const struct rte_flow_item_udp *spec, *mask;
	const struct rte_flow_action_queue *q;
	bool vlan = false, v6;
	unsigned int i = 0;

	if (!attr->ingress || attr->egress || attr->transfer)
		return F_BAD;
	if (it[i++].type != RTE_FLOW_ITEM_TYPE_ETH)
		return F_BAD;
	if (it[i].type == RTE_FLOW_ITEM_TYPE_VLAN) {
		vlan = true;
		i++;
	}
	if (it[i].type != RTE_FLOW_ITEM_TYPE_IPV4 && it[i].type != RTE_FLOW_ITEM_TYPE_IPV6)
		return F_BAD;
	v6 = it[i++].type == RTE_FLOW_ITEM_TYPE_IPV6;
	if (it[i].type != RTE_FLOW_ITEM_TYPE_UDP || it[i + 1].type != RTE_FLOW_ITEM_TYPE_END)
		return F_BAD;
	spec = it[i].spec;
	mask = it[i].mask;
	if (spec == NULL || mask == NULL || spec->hdr.dst_port != rte_cpu_to_be_16(4791) ||
	    mask->hdr.dst_port != 0xffff || mask->hdr.src_port != 0)
		return F_BAD;
	if (act[0].type != RTE_FLOW_ACTION_TYPE_QUEUE || act[1].type != RTE_FLOW_ACTION_TYPE_END)
		return F_BAD;
	q = act[0].conf;
	fk.last_queue = q->index;
	if (vlan)
		return v6 ? F_VLAN_V6 : F_VLAN_V4;
	return v6 ? F_V6 : F_V4;
}

int
rte_flow_validate(uint16_t port_id, const struct rte_flow_attr *attr,
		  const struct rte_flow_item pattern[], const struct rte_flow_action actions[],
		  struct rte_flow_error *error)
{
	enum fpat p = shape(attr, pattern, actions);

	(void)port_id;
	fk.validate_calls++;
	if (p == F_BAD) {
		fk.bad_shape++;
		return rte_flow_error_set(error, EINVAL, RTE_FLOW_ERROR_TYPE_ITEM, NULL,
					  "fake: bad shape");
	}
	if (fk.validate_rc[p] != 0)
		return rte_flow_error_set(error, -fk.validate_rc[p], RTE_FLOW_ERROR_TYPE_ITEM,
					  NULL, fk.validate_msg[p]);
	return 0;
}

/* rte_flow_error_set is in librte_ethdev, which this test does not link. */
int
rte_flow_error_set(struct rte_flow_error *error, int code, enum rte_flow_error_type type,
		   const void *cause, const char *message)
{
	if (error != NULL) {
		error->type = type;
		error->cause = cause;
		error->message = message;
	}
	rte_errno = code;
	return -code;
}

struct rte_flow *
rte_flow_create(uint16_t port_id, const struct rte_flow_attr *attr,
		const struct rte_flow_item pattern[], const struct rte_flow_action actions[],
		struct rte_flow_error *error)
{
	enum fpat p = shape(attr, pattern, actions);

	(void)port_id;
	fk.create_calls++;
	if (p == F_BAD || fk.n_flows == FAKE_FLOWS) {
		fk.bad_shape += p == F_BAD;
		rte_flow_error_set(error, EINVAL, RTE_FLOW_ERROR_TYPE_ITEM, NULL, "fake: bad");
		return NULL;
	}
	if (fk.create_fails[p]) {
		/* no message: steer.c falls back to strerror() */
		rte_flow_error_set(error, ENOMEM, RTE_FLOW_ERROR_TYPE_HANDLE, NULL, NULL);
		return NULL;
	}
	fk.flows[fk.n_flows].pat = p;
	fk.flows[fk.n_flows].alive = true;
	return &fk.flows[fk.n_flows++];
}

int
rte_flow_destroy(uint16_t port_id, struct rte_flow *flow, struct rte_flow_error *error)
{
	(void)port_id;
	fk.destroy_calls++;
	cr_assert(flow >= fk.flows && flow < fk.flows + fk.n_flows, "destroy of a foreign handle");
	cr_assert(flow->alive, "destroy of a destroyed rule");
	if (fk.destroy_fails)
		return rte_flow_error_set(error, EBUSY, RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
					  "fake: rule busy");
	flow->alive = false;
	return 0;
}

int
rte_log(uint32_t level, uint32_t logtype, const char *format, ...)
{
	va_list ap;

	(void)level;
	(void)logtype;
	va_start(ap, format);
	vsnprintf(fk.log, sizeof(fk.log), format, ap);
	va_end(ap);
	return 0;
}

int
rte_log_register_type_and_pick_level(const char *name, uint32_t level_def)
{
	(void)name;
	(void)level_def;
	return 42;
}

static void
setup(void)
{
	memset(&fk, 0, sizeof(fk));
	fk.driver = "mlx5_pci";
	fk.nb_rxq = 2;
	fk.valid_port = 3;
}

TestSuite(steer, .init = setup);

/* ---- tests ----------------------------------------------------------- */

Test(steer, hardware_family_gets_four_rules)
{
	char why[256];
	int rc;

	/* Expect: mlx5 accepts all four patterns; 0, four live rules to queue 0. */
	rc = uroce_steer_install(3, 0, why, sizeof(why));
	cr_assert_eq(rc, 0, "rc %d: %s", rc, why);
	cr_assert_eq(uroce_steer_rules(3), 4);
	cr_assert_eq(live_flows(), 4);
	cr_assert_eq(fk.bad_shape, 0);
	cr_assert_eq(fk.validate_calls, 4, "every rule is validated before it is created");
	cr_assert_eq(fk.create_calls, 4);
	cr_assert_str_eq(why, "mlx5_pci: rte_flow, 4 rules to RX queue 0 "
			 "(ipv4 ipv6 vlan/ipv4 vlan/ipv6)");
	cr_assert_eq(fk.flows[0].pat, F_V4);
	cr_assert_eq(fk.flows[1].pat, F_V6);
	cr_assert_eq(fk.flows[2].pat, F_VLAN_V4);
	cr_assert_eq(fk.flows[3].pat, F_VLAN_V6);

	/* Expect: remove destroys each rule once. */
	uroce_steer_remove(3);
	cr_assert_eq(fk.destroy_calls, 4);
	cr_assert_eq(live_flows(), 0);
	cr_assert_eq(uroce_steer_rules(3), 0);
}

Test(steer, queue_index_is_the_one_given)
{
	char why[256];

	fk.nb_rxq = 4;
	cr_assert_eq(uroce_steer_install(3, 3, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(fk.last_queue, 3);
	cr_assert(strstr(why, "to RX queue 3") != NULL, "%s", why);
	/* Expect: queue 4 of a 4-queue port is refused before anything is
	 * touched: the rules of the first call stay. */
	cr_assert_eq(uroce_steer_install(3, 4, why, sizeof(why)), -EINVAL);
	cr_assert_eq(uroce_steer_rules(3), 4, "a refused call leaves the rules in place");
}

Test(steer, partial_refusal_keeps_the_rest)
{
	char why[320];
	int rc;

	/* Expect: IPv6 patterns refused with one message: 0, two rules, and the
	 * reason names what was refused, with the message once. */
	fk.validate_rc[F_V6] = fk.validate_rc[F_VLAN_V6] = -ENOTSUP;
	fk.validate_msg[F_V6] = fk.validate_msg[F_VLAN_V6] = "fake: no IPv6 item";
	rc = uroce_steer_install(3, 0, why, sizeof(why));
	cr_assert_eq(rc, 0, "%s", why);
	cr_assert_eq(uroce_steer_rules(3), 2);
	cr_assert_eq(live_flows(), 2);
	cr_assert_str_eq(why, "mlx5_pci: rte_flow, 2 rules to RX queue 0 (ipv4 vlan/ipv4); "
			 "refused (ipv6 vlan/ipv6: fake: no IPv6 item): software hand-off "
			 "for those");
}

Test(steer, all_refused_falls_back_with_the_first_errno)
{
	char why[320];
	int rc, p;

	for (p = 0; p < F_BAD; p++) {
		fk.validate_rc[p] = p == F_V4 ? -ENOSYS : -ENOTSUP;
		fk.validate_msg[p] = "fake: no flow engine";
	}
	rc = uroce_steer_install(3, 0, why, sizeof(why));
	/* Expect: the first pattern's errno; no rule; one message for the run. */
	cr_assert_eq(rc, -ENOSYS, "%d", rc);
	cr_assert_eq(uroce_steer_rules(3), 0);
	cr_assert_eq(fk.create_calls, 0, "nothing is created when validate refuses");
	cr_assert_str_eq(why, "mlx5_pci: rte_flow refused (ipv4 ipv6 vlan/ipv4 vlan/ipv6: "
			 "fake: no flow engine); software hand-off in use");
}

Test(steer, create_failing_after_validate_is_a_refusal)
{
	char why[320];
	int rc;

	/* Expect: create fails with no driver message: strerror(ENOMEM) is used,
	 * the rule is not counted, nothing leaks. */
	fk.create_fails[F_VLAN_V4] = true;
	rc = uroce_steer_install(3, 0, why, sizeof(why));
	cr_assert_eq(rc, 0, "%s", why);
	cr_assert_eq(uroce_steer_rules(3), 3);
	cr_assert_eq(live_flows(), 3);
	cr_assert(strstr(why, "vlan/ipv4: Cannot allocate memory") != NULL, "%s", why);
	uroce_steer_remove(3);
	cr_assert_eq(live_flows(), 0);
	cr_assert_eq(fk.destroy_calls, 3, "only created rules are destroyed");
}

Test(steer, reinstall_replaces)
{
	char why[256];

	cr_assert_eq(uroce_steer_install(3, 0, why, sizeof(why)), 0);
	cr_assert_eq(uroce_steer_install(3, 1, why, sizeof(why)), 0);
	/* Expect: the first four destroyed, four new ones to queue 1. */
	cr_assert_eq(fk.destroy_calls, 4);
	cr_assert_eq(live_flows(), 4);
	cr_assert_eq(uroce_steer_rules(3), 4);
	cr_assert_eq(fk.last_queue, 1);
}

Test(steer, destroy_failure_is_logged_and_forgotten)
{
	char why[256];

	cr_assert_eq(uroce_steer_install(3, 0, why, sizeof(why)), 0);
	fk.destroy_fails = true;
	uroce_steer_remove(3);
	/* Expect: a warning naming the driver's message; the slot is cleared so a
	 * later remove does not destroy the same handles again. */
	cr_assert(strstr(fk.log, "rte_flow_destroy: fake: rule busy") != NULL, "%s", fk.log);
	cr_assert_eq(uroce_steer_rules(3), 0);
	fk.destroy_fails = false;
	uroce_steer_remove(3);
	cr_assert_eq(fk.destroy_calls, 4);
}

Test(steer, closed_port_only_clears_bookkeeping)
{
	char why[256];

	cr_assert_eq(uroce_steer_install(3, 0, why, sizeof(why)), 0);
	/* Expect: once the port is gone, its handles are not touched. */
	fk.port_gone = true;
	uroce_steer_remove(3);
	cr_assert_eq(fk.destroy_calls, 0);
	cr_assert_eq(uroce_steer_rules(3), 0);
}

Test(steer, ixgbe_is_not_asked_for_vlan)
{
	char why[256];

	fk.driver = "net_ixgbe";
	cr_assert_eq(uroce_steer_install(3, 0, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(fk.validate_calls, 2);
	cr_assert_str_eq(why, "net_ixgbe: rte_flow, 2 rules to RX queue 0 (ipv4 ipv6)");
}

Test(steer, software_families_are_not_tried)
{
	static const char *const sw[] = {
		"net_memif", "net_af_packet", "net_af_xdp", "net_ring", "net_null", "net_pcap",
		"net_virtio", "net_vmxnet3",
	};
	char why[256];
	unsigned int i;

	for (i = 0; i < sizeof(sw) / sizeof(sw[0]); i++) {
		fk.driver = sw[i];
		cr_assert_eq(uroce_steer_install(3, 0, why, sizeof(why)), -ENOTSUP, "%s", sw[i]);
		cr_assert(strncmp(why, sw[i], strlen(sw[i])) == 0 &&
			  strstr(why, "software hand-off in use") != NULL, "%s", why);
	}
	cr_assert_eq(fk.validate_calls, 0);
	cr_assert_str_eq(why, "net_vmxnet3: rte_flow not supported; software hand-off in use");
}

Test(steer, unknown_driver_is_tried)
{
	char why[256];

	fk.driver = "net_newnic";
	cr_assert_eq(uroce_steer_install(3, 0, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(uroce_steer_rules(3), 4);
	cr_assert(strncmp(why, "net_newnic: rte_flow, 4 rules", 29) == 0, "%s", why);
}

Test(steer, bad_arguments)
{
	char why[256];

	cr_assert_eq(uroce_steer_install(4, 0, why, sizeof(why)), -ENODEV);
	cr_assert_str_eq(why, "port 4: no such ethdev port; no steering");
	cr_assert_eq(uroce_steer_install(3, 2, why, sizeof(why)), -EINVAL);
	cr_assert_str_eq(why, "mlx5_pci: RX queue 2 does not exist (the port has 2); software "
			 "hand-off in use");
	cr_assert_eq(uroce_steer_install(3, 0, NULL, 1), -EINVAL);
	cr_assert_eq(uroce_steer_install(3, 0, NULL, 0), 0, "no reason buffer is allowed");
	cr_assert_eq(fk.bad_shape, 0);
	uroce_steer_remove(UINT16_MAX);
	cr_assert_eq(uroce_steer_rules(UINT16_MAX), 0);
}

Test(steer, short_reason_buffer_is_truncated_not_overrun)
{
	char why[12];

	memset(why, 'x', sizeof(why));
	cr_assert_eq(uroce_steer_install(3, 0, why, 8), 0);
	cr_assert_str_eq(why, "mlx5_pc");
	cr_assert_eq(why[8], 'x', "a byte past len was written");
}

Test(steer, different_messages_are_each_kept)
{
	char why[320];

	fk.validate_rc[F_V6] = -ENOTSUP;
	fk.validate_msg[F_V6] = "fake: no IPv6 item";
	fk.validate_rc[F_VLAN_V4] = -EINVAL;
	fk.validate_msg[F_VLAN_V4] = "fake: no VLAN item";
	cr_assert_eq(uroce_steer_install(3, 0, why, sizeof(why)), 0);
	cr_assert_str_eq(why, "mlx5_pci: rte_flow, 2 rules to RX queue 0 (ipv4 vlan/ipv6); "
			 "refused (ipv6: fake: no IPv6 item; vlan/ipv4: fake: no VLAN item): "
			 "software hand-off for those");
}

Test(steer, long_driver_messages_stay_bounded)
{
	static const char *const msg[] = {
		"fake: a very long explanation of why this pattern cannot be offloaded on "
		"this firmware revision, number one, padded well past a line",
		"fake: a very long explanation of why this pattern cannot be offloaded on "
		"this firmware revision, number two, padded well past a line",
	};
	char why[1024];
	int p, rc;

	/* Alternating long messages overflow the internal list: it is cut, the
	 * reason stays one terminated line, the first errno is returned. */
	for (p = 0; p < F_BAD; p++) {
		fk.validate_rc[p] = -ENOTSUP;
		fk.validate_msg[p] = msg[p % 2];
	}
	memset(why, 'x', sizeof(why));
	rc = uroce_steer_install(3, 0, why, sizeof(why));
	cr_assert_eq(rc, -ENOTSUP);
	cr_assert(memchr(why, '\0', sizeof(why)) != NULL);
	cr_assert(strncmp(why, "mlx5_pci: rte_flow refused (ipv4: fake: a very long", 51) == 0,
		  "%s", why);
	cr_assert(strstr(why, "; software hand-off in use") != NULL, "%s", why);
	cr_assert_lt(strlen(why), 400u, "%zu", strlen(why));
}
