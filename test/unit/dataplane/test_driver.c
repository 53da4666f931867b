/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * lib/dataplane/driver.c, the registry of the driver interface
 * (uroce_dp_driver.h), and how the config parser asks a PMD's quirks: with
 * fake tables, no EAL. Criterion runs each test in a process of its own,
 * so every test starts with an empty registry.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "uroce_dataplane.h"
#include "uroce_dp_driver.h"
#include "uroce_net.h"

static int
fake_install(uint16_t port_id, uint16_t queue, char *why, size_t len)
{
	(void)port_id;
	(void)queue;
	snprintf(why, len, "fake");
	return 0;
}

static void
fake_remove(uint16_t port_id)
{
	(void)port_id;
}

static unsigned int
fake_rules(uint16_t port_id)
{
	return port_id;
}

static const struct uroce_dp_steer_ops steer_a = {"a", fake_install, fake_remove, fake_rules};
static const struct uroce_dp_steer_ops steer_b = {"b", fake_install, fake_remove, fake_rules};

/* Expect: one strategy; the same table twice is fine, a second one refused. */
Test(dp_driver, one_steering_strategy)
{
	struct uroce_dp_steer_ops half = steer_a;

	cr_assert_null(uroce_dp_steer(), "nothing registered: software hand-off");
	half.rules = NULL;
	cr_expect_eq(uroce_dp_register_steer(NULL), -EINVAL);
	cr_expect_eq(uroce_dp_register_steer(&half), -EINVAL);
	cr_assert_eq(uroce_dp_register_steer(&steer_a), 0);
	cr_expect_eq(uroce_dp_register_steer(&steer_a), 0);
	cr_expect_eq(uroce_dp_register_steer(&steer_b), -EEXIST);
	cr_expect_eq(uroce_dp_steer(), &steer_a);
	cr_expect_eq(uroce_dp_steer()->rules(3), 3);
}

/* Expect: tables are found by exact driver name, and a vdev name by the
 * longest driver name it starts with; names are unique; the registry has
 * UROCE_DP_MAX_PMDS places. */
Test(dp_driver, pmd_lookup)
{
	static struct uroce_dp_pmd_ops many[UROCE_DP_MAX_PMDS];
	static char names[UROCE_DP_MAX_PMDS][16];
	static const struct uroce_dp_pmd_ops af = {.driver = "net_af"};
	static const struct uroce_dp_pmd_ops afp = {.driver = "net_af_packet"};
	static const struct uroce_dp_pmd_ops afp2 = {.driver = "net_af_packet"};
	static const struct uroce_dp_pmd_ops empty = {.driver = ""};
	unsigned int i;

	cr_expect_eq(uroce_dp_register_pmd(NULL), -EINVAL);
	cr_expect_eq(uroce_dp_register_pmd(&empty), -EINVAL);
	cr_assert_eq(uroce_dp_register_pmd(&af), 0);
	cr_assert_eq(uroce_dp_register_pmd(&afp), 0);
	cr_expect_eq(uroce_dp_register_pmd(&afp), 0, "the same table again");
	cr_expect_eq(uroce_dp_register_pmd(&afp2), -EEXIST);
	cr_expect_eq(uroce_dp_pmd_find("net_af_packet"), &afp);
	cr_expect_eq(uroce_dp_pmd_find("net_af"), &af);
	cr_expect_null(uroce_dp_pmd_find("net_af_packet0"), "exact names only");
	cr_expect_null(uroce_dp_pmd_find(NULL));
	cr_expect_eq(uroce_dp_pmd_of_device("net_af_packet0"), &afp, "the longest prefix");
	cr_expect_eq(uroce_dp_pmd_of_device("net_af_xdp0"), &af);
	cr_expect_null(uroce_dp_pmd_of_device("0000:01:00.0"));
	cr_expect_null(uroce_dp_pmd_of_device(NULL));
	for (i = 0; i < UROCE_DP_MAX_PMDS - 2; i++) {
		snprintf(names[i], sizeof(names[i]), "net_x%u", i);
		many[i].driver = names[i];
		cr_assert_eq(uroce_dp_register_pmd(&many[i]), 0);
	}
	snprintf(names[i], sizeof(names[i]), "net_full");
	many[i].driver = names[i];
	cr_expect_eq(uroce_dp_register_pmd(&many[i]), -ENOSPC);
}

static unsigned int vdev_calls;

static int
fake_vdev_args(const struct uroce_dp_port_cfg *p, char *v, size_t cap, char *why, size_t whylen)
{
	vdev_calls++;
	if (strstr(v, ",bad") != NULL) {
		snprintf(why, whylen, "no bad here (mtu %u)", p->mtu);
		/* A refusal may have written to the argument: the parser restores it. */
		snprintf(v, cap, "garbage");
		return -EINVAL;
	}
	snprintf(v + strlen(v), cap - strlen(v), ",fixed=%u", p->mtu);
	return 0;
}

static const struct uroce_dp_pmd_ops fake_pmd = {
	.driver = "net_fake",
	.vdev_args = fake_vdev_args,
};

static int
load(const char *text, struct uroce_dp_config *cfg, char *err, size_t len)
{
	char path[] = "/tmp/uroce-drvtest-XXXXXX";
	int fd = mkstemp(path), rc;
	FILE *f;

	cr_assert(fd >= 0);
	f = fdopen(fd, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	uroce_dp_config_defaults(cfg);
	rc = uroce_dp_config_load(cfg, path, err, len);
	unlink(path);
	return rc;
}

/* Expect: the config parser hands a port's vdev to its PMD's vdev_args()
 * (and only to it); a refusal becomes the one-line error that names the
 * section, the key and the value as given, and the value is restored. */
Test(dp_driver, config_asks_the_pmd)
{
	struct uroce_dp_config c;
	char err[UROCE_DP_ERR_LEN];

	cr_assert_eq(load("[port.f]\nvdev = net_fake0,a=1\nipv4 = 198.18.3.1/24\nmtu = 1500\n"
			  "[port.r]\nvdev = net_ring0\nipv4 = 198.18.4.1/24\n", &c, err,
			  sizeof(err)), 0, "%s", err);
	cr_expect_eq(vdev_calls, 0, "no table registered: nobody asked");
	cr_expect_str_eq(c.vdev[0], "net_fake0,a=1");

	cr_assert_eq(uroce_dp_register_pmd(&fake_pmd), 0);
	cr_assert_eq(load("[port.f]\nvdev = net_fake0,a=1\nipv4 = 198.18.3.1/24\nmtu = 1500\n"
			  "[port.r]\nvdev = net_ring0\nipv4 = 198.18.4.1/24\n", &c, err,
			  sizeof(err)), 0, "%s", err);
	cr_expect_eq(vdev_calls, 1, "only the fake port's vdev");
	cr_expect_str_eq(c.vdev[0], "net_fake0,a=1,fixed=1500");
	cr_expect_str_eq(c.vdev[1], "net_ring0");

	cr_expect_eq(load("[port.f]\nvdev = net_fake0,bad\nipv4 = 198.18.3.1/24\nmtu = 9000\n",
			  &c, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "[port.f] vdev = \"net_fake0,bad\": no bad here (mtu 9000)") !=
		  NULL, "%s", err);
	cr_expect_str_eq(c.vdev[0], "net_fake0,bad");
}

/* Expect: drivers/net registers its steering strategy and the memif and tap
 * quirks, once; a second call changes nothing. */
Test(dp_driver, drivers_net_registers)
{
	const struct uroce_dp_pmd_ops *memif, *tap;

	cr_assert_eq(uroce_net_register(), 0);
	cr_assert_eq(uroce_net_register(), 0);
	cr_assert_not_null(uroce_dp_steer());
	cr_expect_str_eq(uroce_dp_steer()->name, "rte_flow");
	memif = uroce_dp_pmd_of_device("net_memif3");
	cr_assert_not_null(memif);
	cr_expect(memif->mtu_beyond_reported && memif->vdev_args != NULL && !memif->mac_in_software);
	tap = uroce_dp_pmd_find("net_tap");
	cr_assert_not_null(tap);
	cr_expect(tap->mac_in_software && !tap->mtu_beyond_reported);
	cr_expect_null(uroce_dp_pmd_find("net_af_packet"), "af_packet takes the generic path");
}
