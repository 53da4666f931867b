/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Devices of the drop-in librdmacm: those the (drop-in) libibverbs lists,
 * each with its daemon socket (the same position in $UROCE_SOCKET, colon
 * separated, as the drop-in libibverbs names them), opened on first use: its
 * ibv_context (shared by every id on it and by rdma_get_devices()), a
 * default PD, and a session of its own with the daemon for CM requests.
 */

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rc_internal.h"

static struct rc_dev devs[RC_MAX_DEVICES];
static int ndevs;
static int init_err;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;

int rc_trace_on;

void
rc_trace(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "uroce-rdmacm[%d]: ", (int)getpid());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* The @p index-th socket of $UROCE_SOCKET into @p out. @return 0, -1 if none. */
static int
sock_of(int index, char *out, size_t len)
{
	const char *env = getenv("UROCE_SOCKET");
	const char *p = env != NULL && *env != '\0' ? env : "/run/uroce/uroced.sock";
	int i = 0;

	while (p != NULL) {
		const char *e = strchr(p, ':');
		size_t n = e != NULL ? (size_t)(e - p) : strlen(p);

		if (n > 0 && n < len) {
			if (i == index) {
				memcpy(out, p, n);
				out[n] = '\0';
				return 0;
			}
			i++;
		}
		p = e != NULL ? e + 1 : NULL;
	}
	return -1;
}

static void
init_once(void)
{
	struct ibv_device **l;
	int n = 0, i;

	rc_trace_on = getenv("UROCE_VERBS_TRACE") != NULL && *getenv("UROCE_VERBS_TRACE") != '0';
	l = ibv_get_device_list(&n);
	if (l == NULL) {
		init_err = errno ? errno : ENODEV;
		return;
	}
	for (i = 0; i < n && ndevs < RC_MAX_DEVICES; i++) {
		struct rc_dev *d = &devs[ndevs];

		d->ibdev = l[i];
		d->index = ibv_get_device_index(l[i]);
		if (d->index < 0 || sock_of(d->index, d->sock_path, sizeof(d->sock_path)) != 0)
			continue;
		ndevs++;
	}
	/* The devices live as long as the drop-in libibverbs: keep them. */
}

int
rc_init(void)
{
	pthread_once(&once, init_once);
	return init_err;
}

int
rc_ndevices(void)
{
	return ndevs;
}

struct rc_dev *
rc_device(int i)
{
	return i >= 0 && i < ndevs ? &devs[i] : NULL;
}

int
rc_dev_open(struct rc_dev *d)
{
	struct ibv_device_attr a;
	int rc = 0;

	pthread_mutex_lock(&dev_lock);
	if (d->open || d->dead)
		goto out;
	d->verbs = ibv_open_device(d->ibdev);
	if (d->verbs == NULL) {
		rc = errno ? errno : ENODEV;
		goto out;
	}
	if (ibv_query_device(d->verbs, &a) != 0) {
		rc = ENODEV;
		goto fail_verbs;
	}
	d->guid = be64toh(a.node_guid);
	d->max_init_depth = (uint8_t)(a.max_qp_init_rd_atom > 255 ? 255 : a.max_qp_init_rd_atom);
	d->max_resp_res = (uint8_t)(a.max_qp_rd_atom > 255 ? 255 : a.max_qp_rd_atom);
	d->max_qpsize = a.max_qp_wr;
	d->pd = ibv_alloc_pd(d->verbs);
	if (d->pd == NULL) {
		rc = errno ? errno : ENOMEM;
		goto fail_verbs;
	}
	d->ctl = uroce_open_device(d->sock_path);
	if (d->ctl == NULL) {
		rc = errno ? errno : ENODEV;
		goto fail_pd;
	}
	/* rdma_cm needs shm ABI 1.4 (a uroced of this release or later). */
	if (uroce_daemon_abi_minor(d->ctl) < 4) {
		rc = ENOSYS;
		goto fail_ctl;
	}
	d->open = true;
	goto out;
fail_ctl:
	uroce_close_device(d->ctl);
	d->ctl = NULL;
fail_pd:
	ibv_dealloc_pd(d->pd);
	d->pd = NULL;
fail_verbs:
	ibv_close_device(d->verbs);
	d->verbs = NULL;
out:
	pthread_mutex_unlock(&dev_lock);
	return rc;
}

int
rc_call(struct rc_dev *d, uint16_t type, const void *req, size_t req_len, void *resp,
	size_t resp_len, int fd_in)
{
	int rc;

	if (!d->open)
		return ENODEV;
	rc = uroce_ctl_call(d->ctl, type, req, req_len, fd_in, resp, resp_len, NULL);
	if (rc == -ENOTCONN)
		d->dead = true;
	RC_TRACE("%s %s (id 0x%x): %s", d->sock_path, uroce_shm_msg_type_name(type),
		 req_len >= sizeof(uint32_t) ? *(const uint32_t *)req : 0, strerror(-rc));
	return -rc;
}

RC_EXPORT struct ibv_context **
rdma_get_devices(int *num_devices)
{
	struct ibv_context **l;
	int i, n = 0;

	if (num_devices != NULL)
		*num_devices = 0;
	if (rc_init() != 0)
		return NULL;
	l = calloc((size_t)ndevs + 1, sizeof(*l));
	if (l == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < ndevs; i++)
		if (rc_dev_open(&devs[i]) == 0 && devs[i].open)
			l[n++] = devs[i].verbs;
	if (num_devices != NULL)
		*num_devices = n;
	return l;
}

RC_EXPORT void
rdma_free_devices(struct ibv_context **list)
{
	free(list); /* the contexts stay: ids share them */
}
