/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * RoCEv2 steering: per-NIC-family strategies that make the NIC deliver every
 * RoCEv2 frame (UDP destination port 4791, over IPv4 or IPv6, untagged or with
 * one 802.1Q tag) to the RX queue of the worker that owns the QPs, so that
 * the software hand-off between workers (lib/dataplane/rx.c) is rare. All
 * other traffic keeps the port's default distribution (RSS or the PMD's own).
 *
 * Where a driver family has rte_flow, uroce_steer_install() validates and
 * creates one rule per pattern (ETH / [VLAN] / IPV4|IPV6 / UDP dst 4791 →
 * QUEUE). Which families are tried, and why the others are not, is one
 * declarative table in steer.c, keyed by rte_eth_dev_info.driver_name; a
 * driver the table does not know is tried, and falls back on any refusal.
 * The fallback is always the software hand-off, which needs nothing from the
 * NIC: steering is an optimisation, never a requirement.
 *
 * This header holds no DPDK type: ports are DPDK ethdev port ids (uint16_t).
 * The functions are control path: call them from one thread (the control
 * thread), after rte_eth_dev_start() and before rte_eth_dev_stop().
 */

#ifndef UROCE_STEER_H
#define UROCE_STEER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** RoCEv2 patterns a port can be steered on; one rte_flow rule each. */
#define UROCE_STEER_MAX_RULES 4

/**
 * Steer the RoCEv2 frames a port receives to one of its RX queues.
 *
 * Rules already installed on the port by an earlier call are removed first,
 * so calling it again (after a restart) replaces them. When some patterns are
 * refused and others accepted, the accepted ones stay (the refused ones go
 * through the software hand-off) and the call returns 0; @p why names both.
 *
 * @param port_id
 *   DPDK ethdev port id; the port must be configured with more than @p queue
 *   RX queues, and should be started.
 * @param queue
 *   RX queue that receives the RoCEv2 frames.
 * @param why
 *   Buffer for one line saying what was done, e.g. "net_tap: rte_flow, 4 rules
 *   to RX queue 0 (ipv4 ipv6 vlan/ipv4 vlan/ipv6)" or, on a fallback,
 *   "net_memif: rte_flow not supported; software hand-off in use". May be
 *   NULL when @p len is 0.
 * @param len
 *   Size of @p why in bytes.
 * @return
 *   0: at least one rte_flow rule is installed.
 *   A negative errno means no rule is installed and the software hand-off is
 *   the strategy, with @p why saying why:
 *   -ENODEV: @p port_id is not a valid ethdev port.
 *   -EINVAL: @p queue is not below the port's number of RX queues, or @p why
 *            is NULL with @p len > 0.
 *   -ENOTSUP: the driver family has no usable rte_flow (steering table).
 *   Any other negative errno: what the driver's rte_flow_validate() or
 *   rte_flow_create() returned for the first pattern it refused (-ENOSYS,
 *   -ENOTSUP, -EINVAL, -ENOMEM, ...).
 */
int uroce_steer_install(uint16_t port_id, uint16_t queue, char *why, size_t len);

/**
 * Destroy the rules uroce_steer_install() created on a port. A port without
 * rules, or an invalid port id, is a no-op; a rule the driver fails to
 * destroy is logged (log type "uroce.steer") and forgotten. Call it before
 * rte_eth_dev_stop()/rte_eth_dev_close(): a closed port has dropped its rules
 * already, and only the bookkeeping is cleared then.
 *
 * @param port_id
 *   DPDK ethdev port id.
 */
void uroce_steer_remove(uint16_t port_id);

/**
 * Number of rte_flow rules uroce_steer_install() holds on a port (0 after a
 * fallback or uroce_steer_remove(), or for an invalid port id). For telemetry
 * and tests.
 *
 * @param port_id
 *   DPDK ethdev port id.
 * @return
 *   0 .. UROCE_STEER_MAX_RULES.
 */
unsigned int uroce_steer_rules(uint16_t port_id);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_STEER_H */
