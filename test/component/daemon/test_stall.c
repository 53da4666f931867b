/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * A daemon that stops running (issue 21.3): liburoce tells a stopped daemon
 * from a slow one by its heartbeat in the status segment (shm ABI 1.5).
 * uroced_lite in its own process, SIGSTOPped and continued.
 */

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "uroce_shm.h"
#include "uroce_verbs.h"

#include "daemon_test_util.h"

static pid_t lite = -1;
static int lite_out = -1;
static char sock[108];

static void
start(void)
{
	dt_sock_path(sock, sizeof(sock), "stall");
	lite = dt_lite_start(sock, NULL, &lite_out);
	cr_assert_gt(lite, 0, "uroced_lite: %s", strerror((int)-lite));
}

static void
stop(void)
{
	if (lite > 0) {
		kill(lite, SIGCONT);
		dt_lite_stop(lite, lite_out);
	}
	lite = -1;
	unsetenv("UROCE_DAEMON_TIMEOUT_MS");
}

/* Poll @p cq until it fails, at most @p s seconds. @return the error, or 0. */
static int
poll_until_error(struct uroce_cq *cq, double s)
{
	double end = dt_now_s() + s;
	struct uroce_wc wc;
	int n;

	while (dt_now_s() < end) {
		n = uroce_poll_cq(cq, 1, &wc);
		if (n < 0)
			return n;
	}
	return 0;
}

/* Expect: with UROCE_DAEMON_TIMEOUT_MS=300, a poll of a CQ fails with
 * -ETIMEDOUT within a few seconds of SIGSTOP (not -ENOTCONN: the context is
 * not fatal), and a control call fails with ETIMEDOUT; after SIGCONT both
 * work again on the same context. */
Test(stall, stopped_daemon_times_out_then_resumes, .init = start, .fini = stop, .timeout = 60)
{
	struct uroce_context *ctx;
	struct uroce_pd *pd, *pd2;
	struct uroce_cq *cq;
	struct uroce_wc wc;
	int rc;

	setenv("UROCE_DAEMON_TIMEOUT_MS", "300", 1);
	ctx = uroce_open_device(sock);
	cr_assert_not_null(ctx, "open: %s", strerror(errno));
	pd = uroce_alloc_pd(ctx);
	cq = uroce_create_cq(ctx, 16, NULL);
	cr_assert(pd != NULL && cq != NULL);
	cr_expect_eq(poll_until_error(cq, 1.0), 0, "a running daemon: polls find nothing, no error");
	cr_assert_eq(kill(lite, SIGSTOP), 0);
	rc = poll_until_error(cq, 20.0);
	cr_expect_eq(rc, -ETIMEDOUT, "poll of a stopped daemon's CQ: %d (%s)", rc, strerror(-rc));
	cr_expect_not(uroce_context_fatal(ctx), "a stopped daemon is not a dead one");
	pd2 = uroce_alloc_pd(ctx);
	cr_expect_null(pd2, "alloc_pd from a stopped daemon");
	cr_expect_eq(errno, ETIMEDOUT, "alloc_pd: %s", strerror(errno));
	cr_assert_eq(kill(lite, SIGCONT), 0);
	dt_nap_ms(500);
	cr_expect_eq(uroce_poll_cq(cq, 1, &wc), 0, "after SIGCONT: an empty poll");
	pd2 = uroce_alloc_pd(ctx);
	cr_expect_not_null(pd2, "alloc_pd after SIGCONT: %s", strerror(errno));
	if (pd2 != NULL)
		uroce_dealloc_pd(pd2);
	cr_expect_eq(uroce_destroy_cq(cq), 0);
	cr_expect_eq(uroce_dealloc_pd(pd), 0);
	cr_expect_eq(uroce_close_device(ctx), 0);
}

/* Expect: a bad UROCE_DAEMON_TIMEOUT_MS refuses the open with EINVAL. */
Test(stall, bad_timeout_is_refused, .init = start, .fini = stop)
{
	static const char *const bad[] = {"abc", "0", "99", "5s", "99999999999"};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("UROCE_DAEMON_TIMEOUT_MS", bad[i], 1);
		errno = 0;
		cr_expect_null(uroce_open_device(sock), "UROCE_DAEMON_TIMEOUT_MS=%s accepted", bad[i]);
		cr_expect_eq(errno, EINVAL, "UROCE_DAEMON_TIMEOUT_MS=%s: %s", bad[i], strerror(errno));
	}
}

/* Expect: the status segment a client gets cannot be mapped writable (a
 * forged heartbeat or sleeping word would mislead other clients), and its
 * read-only mapping shows the magic, the workers and a recent heartbeat. */
Test(stall, status_segment_is_read_only, .init = start, .fini = stop)
{
	struct uroce_shm_msg_get_status_resp r;
	const struct uroce_shm_status *st;
	struct uroce_context *ctx;
	void *w;
	int fd = -1;

	ctx = uroce_open_device(sock);
	cr_assert_not_null(ctx);
	cr_assert_geq(uroce_daemon_abi_minor(ctx), 5);
	cr_assert_eq(uroce_ctl_call(ctx, UROCE_SHM_MSG_GET_STATUS, NULL, 0, -1, &r, sizeof(r), &fd),
		     0);
	cr_assert_geq(fd, 0);
	cr_expect_eq(r.size, UROCE_SHM_STATUS_SIZE);
	w = mmap(NULL, r.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_expect_eq(w, MAP_FAILED, "the status segment mapped writable");
	if (w != MAP_FAILED)
		munmap(w, r.size);
	st = uroce_shm_status_map(fd, r.size);
	cr_assert_not_null(st, "%s", strerror(errno));
	cr_expect_eq(st->magic, UROCE_SHM_STATUS_MAGIC);
	cr_expect_geq(st->n_workers, 1);
	cr_expect(uroce_shm_status_alive(st, 5000), "heartbeat %llu, now %llu",
		  (unsigned long long)st->heartbeat_ms, (unsigned long long)uroce_shm_now_ms());
	uroce_shm_status_unmap(st);
	close(fd);
	cr_expect_eq(uroce_close_device(ctx), 0);
}
