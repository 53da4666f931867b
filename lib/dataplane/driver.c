/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The registry of driver tables (uroce_dp_driver.h): one steering strategy
 * and the PMD quirk tables, filled in by drivers/net before the dataplane
 * reads its configuration. Written on the control thread before any worker
 * runs, read on the control thread afterwards: no lock.
 */

#include <errno.h>
#include <string.h>

#include "uroce_dp_driver.h"

static const struct uroce_dp_steer_ops *steer_ops;
static const struct uroce_dp_pmd_ops *pmds[UROCE_DP_MAX_PMDS];
static unsigned int n_pmds;

int
uroce_dp_register_steer(const struct uroce_dp_steer_ops *ops)
{
	if (ops == NULL || ops->install == NULL || ops->remove == NULL || ops->rules == NULL)
		return -EINVAL;
	if (steer_ops != NULL)
		return steer_ops == ops ? 0 : -EEXIST;
	steer_ops = ops;
	return 0;
}

int
uroce_dp_register_pmd(const struct uroce_dp_pmd_ops *ops)
{
	const struct uroce_dp_pmd_ops *old;

	if (ops == NULL || ops->driver == NULL || ops->driver[0] == '\0')
		return -EINVAL;
	old = uroce_dp_pmd_find(ops->driver);
	if (old != NULL)
		return old == ops ? 0 : -EEXIST;
	if (n_pmds == UROCE_DP_MAX_PMDS)
		return -ENOSPC;
	pmds[n_pmds++] = ops;
	return 0;
}

const struct uroce_dp_pmd_ops *
uroce_dp_pmd_find(const char *driver)
{
	unsigned int i;

	if (driver == NULL)
		return NULL;
	for (i = 0; i < n_pmds; i++)
		if (strcmp(pmds[i]->driver, driver) == 0)
			return pmds[i];
	return NULL;
}

const struct uroce_dp_pmd_ops *
uroce_dp_pmd_of_device(const char *device)
{
	const struct uroce_dp_pmd_ops *best = NULL;
	size_t best_len = 0, l;
	unsigned int i;

	if (device == NULL)
		return NULL;
	for (i = 0; i < n_pmds; i++) {
		l = strlen(pmds[i]->driver);
		if (l > best_len && strncmp(device, pmds[i]->driver, l) == 0) {
			best = pmds[i];
			best_len = l;
		}
	}
	return best;
}

const struct uroce_dp_steer_ops *
uroce_dp_steer(void)
{
	return steer_ops;
}
