/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * What single PMDs need beyond lib/dataplane's generic ethdev path, as
 * uroce_dp_pmd_ops tables (uroce_dp_driver.h), and the registration of
 * drivers/net as a whole (uroce_net.h): the steering strategy of steer.c
 * and these tables. A PMD not named here takes the generic path.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_dp_driver.h"
#include "uroce_net.h"
#include "uroce_steer.h"

/*
 * memif and frames longer than its buffers. DPDK 22.11's memif sends such a
 * frame as a chain of buffers, but leaves a stale "next" flag on a
 * descriptor that later starts a frame of its own, and the receiver then
 * chains into descriptors that hold nothing: its ring runs away (found by
 * test_memif_mtu4096). With one buffer per frame no chain is ever made, so
 * a memif vdev gets bsize = the largest frame, rounded to 64 bytes, unless
 * it says otherwise; a bsize that is too small is refused. (The client
 * end's bsize sizes the buffers of both directions.)
 */
#define MEMIF_DEFAULT_BSIZE 2048u

static int
memif_vdev_args(const struct uroce_dp_port_cfg *p, char *v, size_t cap, char *why, size_t whylen)
{
	unsigned int frame, bsize;
	const char *b;

	if (p->mtu == 0)
		return 0;
	/* Ethernet header, two VLAN tags, FCS. */
	frame = p->mtu + UROCE_ETH_LEN + 2 * UROCE_VLAN_LEN + 4;
	b = strstr(v, ",bsize=");
	if (b != NULL) {
		bsize = (unsigned int)strtoul(b + 7, NULL, 0);
		if (bsize >= frame)
			return 0;
		snprintf(why, whylen, "memif bsize %u is below the largest frame of mtu %u "
			 "(%u bytes): DPDK 22.11's memif corrupts its ring when frames span "
			 "buffers; give bsize=%u or more, or leave bsize out and uroced sets it",
			 bsize, p->mtu, frame, (frame + 63) & ~63u);
		return -EINVAL;
	}
	if (frame <= MEMIF_DEFAULT_BSIZE)
		return 0;
	bsize = (frame + 63) & ~63u;
	if (strlen(v) + 16 >= cap) {
		snprintf(why, whylen, "too long to add bsize=%u (memif buffers for mtu %u)", bsize,
			 p->mtu);
		return -EINVAL;
	}
	snprintf(v + strlen(v), cap - strlen(v), ",bsize=%u", bsize);
	return 0;
}

static const struct uroce_dp_pmd_ops pmd_memif = {
	.driver = "net_memif",
	.vdev_args = memif_vdev_args,
	/* DPDK 22.11's memif reports a 1518-byte frame limit that its data
	 * path does not have: it carries whatever fits its buffers, which
	 * memif_vdev_args() made hold one frame of the port's MTU. */
	.mtu_beyond_reported = true,
	/* memif_disconnect() clears the connected flag, then unmaps the rings
	 * at once, in the interrupt thread, while a worker may be in a burst. */
	.unmaps_under_burst = true,
};

static const struct uroce_dp_pmd_ops pmd_tap = {
	.driver = "net_tap",
	/* A tap's ethdev MAC is the kernel interface's, and the kernel is the
	 * peer on that wire. */
	.mac_in_software = true,
};

static const struct uroce_dp_pmd_ops *const pmd_tables[] = {
	&pmd_memif,
	&pmd_tap,
};

static const struct uroce_dp_steer_ops steer_rte_flow = {
	.name = "rte_flow",
	.install = uroce_steer_install,
	.remove = uroce_steer_remove,
	.rules = uroce_steer_rules,
};

int
uroce_net_register(void)
{
	unsigned int i;
	int rc;

	rc = uroce_dp_register_steer(&steer_rte_flow);
	for (i = 0; rc == 0 && i < sizeof(pmd_tables) / sizeof(pmd_tables[0]); i++)
		rc = uroce_dp_register_pmd(pmd_tables[i]);
	return rc;
}
