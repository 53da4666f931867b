/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * drivers/net as a whole: the steering strategy (uroce_steer.h) and the
 * per-PMD quirks (pmd.c), registered with lib/dataplane's driver interface
 * (uroce_dp_driver.h) in one call.
 */

#ifndef UROCE_NET_H
#define UROCE_NET_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Register drivers/net's steering strategy and PMD quirk tables with
 * lib/dataplane. Call it once, on the main thread, before
 * uroce_dp_config_load() and uroce_dp_create(); a second call is a no-op.
 *
 * Explicit rather than a constructor: drivers/net is a static library, and
 * the linker leaves out an object file nothing refers to, with its
 * constructor; a call from main() is what keeps the drivers in the program.
 *
 * @return 0, or the first negative errno of uroce_dp_register_steer() /
 *   uroce_dp_register_pmd() (-EEXIST: another table already holds a name,
 *   -ENOSPC: the registry is full).
 */
int uroce_net_register(void);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_NET_H */
