/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * An in-process daemon core polled by a thread of the test, for component
 * tests that talk to it through liburoce and look at it directly in
 * between (dt_daemon_lock() around any uroce_daemon_* call of the test).
 * With uroce_daemon_conf.threaded it runs as uroced does: that thread is
 * the control thread, and each worker polls on a thread of its own, so the
 * workers really run at the same time.
 */

#ifndef DT_DAEMON_H
#define DT_DAEMON_H

#include <pthread.h>
#include <stdbool.h>

#include "uroce_daemon.h"
#include "uroce_verbs.h"

struct dt_daemon {
	char sock_path[108];
	struct uroce_daemon *d;
	pthread_t thread;
	pthread_mutex_t lock;
	volatile int stop;
	bool running;
	bool threaded;
	pthread_t wthreads[UROCE_DAEMON_MAX_WORKERS];
	unsigned int n_wthreads;
	volatile int wstop;
};

/**
 * Create the daemon on "/tmp/uroce-test-@p tag-PID.sock" with @p conf (its
 * sock_path and sock_mode are set here: 0600; n_workers 0 becomes
 * dt_workers()) and start its poll thread (and, with conf->threaded, one
 * thread per worker; one threaded daemon at a time per process).
 * @return 0, or -errno of uroce_daemon_create() or pthread_create().
 */
int dt_daemon_start(struct dt_daemon *dd, const char *tag, struct uroce_daemon_conf *conf);

/** Stop the poll thread and destroy the daemon (every session torn down). */
void dt_daemon_stop(struct dt_daemon *dd);

/**
 * A daemon with this process as its one client and an RC QP pair on the
 * loopback port: what test_mw and test_iba15_api start every test from.
 * buf is one MR (a's half first, b's second).
 */
struct dt_rc_fixture {
	struct dt_daemon dd;
	struct uroce_context *ctx;
	struct uroce_pd *pd;
	uint8_t *buf;
	struct uroce_mr *mr;
	struct uroce_cq *cqa, *cqb;
	struct uroce_qp *a, *b;
};

/**
 * Start the daemon (dt_workers() workers, socket tagged @p tag), open it,
 * allocate @p len bytes registered with @p mr_access, two CQs of 64 and a
 * dt_rc_pair() with @p qp_access. @return 0, or -errno of the first step
 * that failed (call dt_rc_fixture_stop() either way).
 */
int dt_rc_fixture_start(struct dt_rc_fixture *f, const char *tag, size_t len, int mr_access,
			int qp_access);

/** Close the client (the daemon frees what is left) and stop the daemon. */
void dt_rc_fixture_stop(struct dt_rc_fixture *f);

void dt_daemon_lock(struct dt_daemon *dd);
void dt_daemon_unlock(struct dt_daemon *dd);

#endif
