/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

#include <errno.h>
#include <string.h>

#include "daemon_test_util.h"
#include "dt_daemon.h"

/* Unthreaded: the whole daemon's round, under the lock. Threaded: the
 * control thread's round (the workers run on threads of their own). */
static void *
poll_loop(void *arg)
{
	struct dt_daemon *dd = arg;

	while (!__atomic_load_n(&dd->stop, __ATOMIC_ACQUIRE)) {
		unsigned int w;

		pthread_mutex_lock(&dd->lock);
		w = dd->threaded ? uroce_daemon_control_poll(dd->d, 1) : uroce_daemon_poll(dd->d);
		pthread_mutex_unlock(&dd->lock);
		if (w == 0 && !dd->threaded)
			dt_nap_us(20);
	}
	return NULL;
}

struct dt_worker_arg {
	struct dt_daemon *dd;
	unsigned int idx;
};

static struct dt_worker_arg worker_args[UROCE_DAEMON_MAX_WORKERS];

/* A worker's thread, as uroced runs it: its rounds, a short nap when idle. */
static void *
worker_loop(void *arg)
{
	struct dt_worker_arg *a = arg;

	while (!__atomic_load_n(&a->dd->wstop, __ATOMIC_ACQUIRE))
		if (uroce_daemon_worker_poll(a->dd->d, a->idx) == 0)
			dt_nap_us(20);
	return NULL;
}

static void
workers_join(struct dt_daemon *dd)
{
	unsigned int i;

	__atomic_store_n(&dd->wstop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < dd->n_wthreads; i++)
		pthread_join(dd->wthreads[i], NULL);
	dd->n_wthreads = 0;
}

int
dt_daemon_start(struct dt_daemon *dd, const char *tag, struct uroce_daemon_conf *conf)
{
	unsigned int i;
	int rc;

	dt_sock_path(dd->sock_path, sizeof(dd->sock_path), tag);
	conf->sock_path = dd->sock_path;
	conf->sock_mode = 0600;
	if (conf->n_workers == 0)
		conf->n_workers = dt_workers();
	dd->threaded = conf->threaded;
	dd->d = uroce_daemon_create(conf);
	if (dd->d == NULL)
		return -errno;
	pthread_mutex_init(&dd->lock, NULL);
	dd->stop = 0;
	dd->wstop = 0;
	dd->n_wthreads = 0;
	for (i = 0; dd->threaded && i < uroce_daemon_worker_count(dd->d); i++) {
		/* One threaded dt_daemon at a time per process (worker_args). */
		worker_args[i].dd = dd;
		worker_args[i].idx = i;
		rc = pthread_create(&dd->wthreads[i], NULL, worker_loop, &worker_args[i]);
		if (rc != 0)
			goto fail;
		dd->n_wthreads++;
	}
	rc = pthread_create(&dd->thread, NULL, poll_loop, dd);
	if (rc != 0)
		goto fail;
	dd->running = true;
	return 0;
fail:
	workers_join(dd);
	if (dd->threaded)
		uroce_daemon_workers_stopped(dd->d);
	uroce_daemon_destroy(dd->d);
	dd->d = NULL;
	return -rc;
}

void
dt_daemon_stop(struct dt_daemon *dd)
{
	if (!dd->running)
		return;
	__atomic_store_n(&dd->stop, 1, __ATOMIC_RELEASE);
	pthread_join(dd->thread, NULL);
	if (dd->threaded) {
		/* As uroced: flushes written while the workers still run. */
		uroce_daemon_quiesce(dd->d);
		workers_join(dd);
		uroce_daemon_workers_stopped(dd->d);
	}
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

int
dt_rc_fixture_start(struct dt_rc_fixture *f, const char *tag, size_t len, int mr_access,
		    int qp_access)
{
	struct uroce_daemon_conf conf;
	int rc;

	memset(f, 0, sizeof(*f));
	memset(&conf, 0, sizeof(conf));
	conf.n_workers = dt_workers();
	rc = dt_daemon_start(&f->dd, tag, &conf);
	if (rc != 0)
		return rc;
	f->ctx = uroce_open_device(f->dd.sock_path);
	if (f->ctx == NULL)
		return -errno;
	f->pd = uroce_alloc_pd(f->ctx);
	f->buf = uroce_alloc_buf(f->ctx, len);
	if (f->pd == NULL || f->buf == NULL)
		return -errno;
	memset(f->buf, 0, len);
	f->mr = uroce_reg_mr(f->pd, f->buf, len, mr_access);
	f->cqa = uroce_create_cq(f->ctx, 64, NULL);
	f->cqb = uroce_create_cq(f->ctx, 64, NULL);
	if (f->mr == NULL || f->cqa == NULL || f->cqb == NULL)
		return -errno;
	return dt_rc_pair(f->pd, f->cqa, f->cqb, qp_access, &f->a, &f->b);
}

void
dt_rc_fixture_stop(struct dt_rc_fixture *f)
{
	if (f->ctx != NULL)
		uroce_close_device(f->ctx);
	f->ctx = NULL;
	dt_daemon_stop(&f->dd);
}
