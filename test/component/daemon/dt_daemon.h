/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * An in-process daemon core polled by a thread of the test, for component
 * tests that talk to it through liburoce and look at it directly in
 * between (dt_daemon_lock() around any uroce_daemon_* call of the test).
 */

#ifndef DT_DAEMON_H
#define DT_DAEMON_H

#include <pthread.h>
#include <stdbool.h>

#include "uroce_daemon.h"

struct dt_daemon {
	char sock_path[108];
	struct uroce_daemon *d;
	pthread_t thread;
	pthread_mutex_t lock;
	volatile int stop;
	bool running;
};

/**
 * Create the daemon on "/tmp/uroce-test-@p tag-PID.sock" with @p conf (its
 * sock_path, sock_mode and n_workers are set here: 0600, dt_workers()) and
 * start its poll thread.
 * @return 0, or -errno of uroce_daemon_create() or pthread_create().
 */
int dt_daemon_start(struct dt_daemon *dd, const char *tag, struct uroce_daemon_conf *conf);

/** Stop the poll thread and destroy the daemon (every session torn down). */
void dt_daemon_stop(struct dt_daemon *dd);

void dt_daemon_lock(struct dt_daemon *dd);
void dt_daemon_unlock(struct dt_daemon *dd);

#endif
