/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

#include <errno.h>

#include "daemon_test_util.h"
#include "dt_daemon.h"

static void *
poll_loop(void *arg)
{
	struct dt_daemon *dd = arg;

	while (!__atomic_load_n(&dd->stop, __ATOMIC_ACQUIRE)) {
		unsigned int w;

		pthread_mutex_lock(&dd->lock);
		w = uroce_daemon_poll(dd->d);
		pthread_mutex_unlock(&dd->lock);
		if (w == 0)
			dt_nap_us(20);
	}
	return NULL;
}

int
dt_daemon_start(struct dt_daemon *dd, const char *tag, struct uroce_daemon_conf *conf)
{
	int rc;

	dt_sock_path(dd->sock_path, sizeof(dd->sock_path), tag);
	conf->sock_path = dd->sock_path;
	conf->sock_mode = 0600;
	conf->n_workers = dt_workers();
	dd->d = uroce_daemon_create(conf);
	if (dd->d == NULL)
		return -errno;
	pthread_mutex_init(&dd->lock, NULL);
	dd->stop = 0;
	rc = pthread_create(&dd->thread, NULL, poll_loop, dd);
	if (rc != 0) {
		uroce_daemon_destroy(dd->d);
		dd->d = NULL;
		return -rc;
	}
	dd->running = true;
	return 0;
}

void
dt_daemon_stop(struct dt_daemon *dd)
{
	if (!dd->running)
		return;
	__atomic_store_n(&dd->stop, 1, __ATOMIC_RELEASE);
	pthread_join(dd->thread, NULL);
	uroce_daemon_destroy(dd->d);
	dd->d = NULL;
	dd->running = false;
}

void
dt_daemon_lock(struct dt_daemon *dd)
{
	pthread_mutex_lock(&dd->lock);
}

void
dt_daemon_unlock(struct dt_daemon *dd)
{
	pthread_mutex_unlock(&dd->lock);
}
