/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * For the Criterion tests that run a daemon core in the test process
 * (test_daemon, test_rebacking): the end-of-test check that a daemon owns
 * nothing once its clients are gone. Header-only, because those tests link
 * lib/daemon and Criterion while daemon_test_util (shared with the pure
 * client daemon_client) may not.
 */

#ifndef DAEMON_CORE_TEST_H
#define DAEMON_CORE_TEST_H

#include <criterion/criterion.h>

#include "uroce_daemon.h"
#include "daemon_test_util.h"

/* Poll @p d until it has reaped every session (5 s at most), then expect it
 * to own nothing: every resource of every client is gone. */
static inline void
dc_expect_all_reclaimed(struct uroce_daemon *d)
{
	struct uroce_daemon_stats st;
	double end = dt_now_s() + 5;

	do {
		uroce_daemon_poll(d);
		uroce_daemon_stats(d, &st);
	} while (st.sessions != 0 && dt_now_s() < end);
	cr_expect_eq(st.sessions, 0);
	cr_expect_eq(st.qps, 0);
	cr_expect_eq(st.srqs, 0);
	cr_expect_eq(st.ahs, 0);
	cr_expect_eq(st.cqs, 0);
	cr_expect_eq(st.mrs, 0);
	cr_expect_eq(st.pds, 0);
	cr_expect_eq(st.segments, 0);
	cr_expect_eq(st.loop_bad, 0);
}

#endif /* DAEMON_CORE_TEST_H */
