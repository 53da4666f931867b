/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The driver interface of the DPDK shell: what the code for NIC families
 * (drivers/net) gives lib/dataplane. As in DPDK, the library sits below the
 * drivers: lib/dataplane declares these tables and calls through them,
 * drivers/net fills them in and registers them, and nothing in lib/
 * includes drivers/.
 *
 * Two kinds of table:
 *  - one steering strategy (struct uroce_dp_steer_ops): have the NIC put
 *    every RoCEv2 frame on a given RX queue. Without one, every port uses
 *    the software hand-off between workers;
 *  - per-PMD quirks (struct uroce_dp_pmd_ops), one per driver name: what a
 *    PMD needs beyond the generic ethdev path (memif's buffer size and MTU,
 *    tap's MAC). A PMD without a table takes the generic path.
 *
 * Registration is explicit: a program calls its drivers' register function
 * (drivers/net: uroce_net_register()) before it reads a configuration
 * (uroce_dp_config_load() already asks the quirks), and before
 * uroce_dp_create(). The tables must outlive the process's use of the
 * dataplane (static const tables). The registry is process-wide, written on
 * the control thread only, before any worker runs; nothing here is for the
 * data path. This header includes no DPDK header: ports are ethdev port ids.
 */

#ifndef UROCE_DP_DRIVER_H
#define UROCE_DP_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uroce_dataplane.h"

#ifdef __cplusplus
extern "C" {
#endif

/** PMD quirk tables the registry holds at most. */
#define UROCE_DP_MAX_PMDS 32

/**
 * A steering strategy. Each function is called on the control thread, with
 * the port started (install) or before it stops (remove).
 */
struct uroce_dp_steer_ops {
	const char *name; /**< for messages, e.g. "rte_flow" */
	/**
	 * Steer the port's RoCEv2 frames to RX queue @p queue, replacing rules
	 * of an earlier call. @p why (@p len bytes, may be NULL when @p len is
	 * 0) gets one line on what was done or why not.
	 * @return 0 if the NIC steers at least part of RoCEv2; a negative errno
	 *   if nothing is installed (the software hand-off stays in charge).
	 */
	int (*install)(uint16_t port_id, uint16_t queue, char *why, size_t len);
	/** Remove what install() put on the port; a port without rules is a no-op. */
	void (*remove)(uint16_t port_id);
	/** Rules held on the port (for telemetry). */
	unsigned int (*rules)(uint16_t port_id);
};

/** What one PMD (one rte_eth_dev_info.driver_name) needs beyond the generic path. */
struct uroce_dp_pmd_ops {
	/**
	 * The driver name, e.g. "net_memif". A port whose device name starts
	 * with it (a vdev: "net_memif0") is this PMD's before EAL runs; after
	 * probing, rte_eth_dev_info.driver_name decides.
	 */
	const char *driver;
	/**
	 * Configuration time (no EAL): adjust the EAL vdev argument @p vdev
	 * (a string of @p cap bytes) of @p port, e.g. add a buffer size its
	 * MTU needs. NULL: nothing to adjust.
	 * @return 0, or -EINVAL with @p why (@p whylen bytes) saying what is
	 *   wrong with the argument and what to give instead.
	 */
	int (*vdev_args)(const struct uroce_dp_port_cfg *port, char *vdev, size_t cap, char *why,
			 size_t whylen);
	/**
	 * The PMD carries frames longer than the MTU range it reports (its
	 * buffers were sized by vdev_args()): a port MTU above that range is
	 * configured at the reported maximum and carried, instead of refused.
	 */
	bool mtu_beyond_reported;
	/**
	 * The ethdev's MAC belongs to another stack on the same wire (the
	 * kernel on a tap): the port keeps a MAC of its own (the configured
	 * one, else a random local one) in software and goes promiscuous.
	 */
	bool mac_in_software;
	/**
	 * The PMD's control path (EAL's interrupt thread) unmaps memory its
	 * RX/TX bursts read, with no wait for a burst under way: DPDK 22.11's
	 * memif when its peer leaves. While the workers run, every munmap() of
	 * another thread then waits until each worker is outside its bursts
	 * (lib/dataplane/grace.h).
	 */
	bool unmaps_under_burst;
};

/**
 * Register the steering strategy (at most one).
 * @return 0; -EINVAL if @p ops or one of its functions is NULL; -EEXIST if
 *   another strategy is registered (the same table again is a no-op, 0).
 */
int uroce_dp_register_steer(const struct uroce_dp_steer_ops *ops);

/**
 * Register the quirks of one PMD.
 * @return 0; -EINVAL if @p ops or its driver name is NULL or empty;
 *   -EEXIST if another table has that driver name (the same table again is
 *   a no-op, 0); -ENOSPC if UROCE_DP_MAX_PMDS tables are registered.
 */
int uroce_dp_register_pmd(const struct uroce_dp_pmd_ops *ops);

/** The quirks registered for driver @p driver (exact name), or NULL. */
const struct uroce_dp_pmd_ops *uroce_dp_pmd_find(const char *driver);

/**
 * The quirks of the PMD whose driver name begins device name @p device (a
 * vdev name such as "net_memif0"), the longest such name, or NULL.
 */
const struct uroce_dp_pmd_ops *uroce_dp_pmd_of_device(const char *device);

/** The registered steering strategy, or NULL (software hand-off only). */
const struct uroce_dp_steer_ops *uroce_dp_steer(void);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_DP_DRIVER_H */
