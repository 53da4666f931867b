/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * liburoce. Control calls are synchronous request/response exchanges on the
 * daemon's SOCK_SEQPACKET socket (one at a time per context, under ctx->lock).
 * The data path writes WQEs straight into the shared send/receive rings (the
 * client is their producer) and reads CQEs straight from the CQ ring (the
 * client is its consumer); see doc/shm-abi.md for who owns which index.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "uroce_common.h"
#include "uroce_shm_ctrl.h"
#include "uroce_shm_status.h"
#include "uroce_verbs.h"
#include "uroce_wqe.h"

#include "verbs_internal.h"

/* How long a control request may wait for the daemon. */
#define RPC_TIMEOUT_S 10
/* poll_cq checks the socket once per this many empty polls. */
#define LIVENESS_EVERY 256
/* uroce_get_cq_event() looks at the daemon's heartbeat this often (ms). */
#define EVENT_SLICE_MS 1000
/* UROCE_DAEMON_TIMEOUT_MS: default and range. */
#define DAEMON_TIMEOUT_MS 15000u
#define DAEMON_TIMEOUT_MIN_MS 100u
#define DAEMON_TIMEOUT_MAX_MS 86400000u
/* Async events kept until uroce_get_async_event() takes them (power of two). */
#define EVQ_SIZE 256

/* What an async event names, and what the client's handle table holds. */
enum hkind {
	HK_QP = 1,
	HK_CQ,
	HK_SRQ,
};

/* One object of this context that an async event may name (handle -> object). */
struct hreg {
	struct hreg *next;
	uint32_t handle;
	uint8_t kind;
	void *obj;
};

struct ubuf {
	struct ubuf *next;
	struct uroce_shm_segment seg;
	uint32_t handle;
	uint32_t mrs;
};

struct uroce_context {
	pthread_mutex_t lock; /* control exchanges, buffer list */
	struct uroce_shm_client ctl; /* the control socket (lib/shm) */
	volatile int fatal;
	struct uroce_shm_segment db;
	struct uroce_shm_db_block *dbb;   /* n_db_blocks blocks: one per daemon worker */
	uint32_t n_db_blocks;
	struct ubuf *bufs;
	uint32_t client_id;
	uint32_t max_inline;
	uint32_t max_sge;
	uint16_t daemon_minor;
	/* the daemon's status segment (ABI 1.5; NULL before): its heartbeat and
	 * its workers' sleeping words */
	const struct uroce_shm_status *status;
	uint64_t daemon_timeout_ms;     /* UROCE_DAEMON_TIMEOUT_MS */
	bool stall_reported;            /* the current stall was logged */
	unsigned int rpc_waits;         /* seconds the current call waited (no status) */
	/* Async events, under lock: a FIFO filled by whoever reads the socket
	 * (a control call waiting for its reply, or uroce_get_async_event()). */
	struct uroce_shm_msg_async_event evq[EVQ_SIZE];
	uint32_t evq_head;
	uint32_t evq_count;
	uint64_t evq_lost;      /* events dropped: the queue was full */
	bool fatal_reported;    /* DEVICE_FATAL was returned */
	int evfd;               /* readable while evq is not empty, or fatal */
	int async_fd;           /* epoll over sock and evfd */
	struct hreg *reg;       /* objects an event may name */
};

struct uroce_cq {
	struct uroce_context *context;
	void *cq_context;
	uint32_t handle;
	uint32_t size;
	int evfd;
	unsigned int empty_polls;
	unsigned int unacked;       /* async events taken, not acknowledged */
	pthread_mutex_t lock;
	struct uroce_shm_segment seg;
	struct uroce_shm_ring ring; /* consumer, trusted */
};

/* A QP's or SRQ's doorbell: its slot in the block of the worker that owns
 * it, and that worker's futex word in the daemon's status segment. */
struct db_ref {
	struct uroce_shm_db_block *block;
	uint32_t slot;
	uint32_t worker;
	const struct uroce_shm_status *status; /* NULL: a daemon before ABI 1.5 */
};

static void
db_ref_init(struct db_ref *d, const struct uroce_context *c, uint32_t block, uint32_t slot)
{
	d->block = &c->dbb[block];
	d->slot = slot;
	d->worker = block; /* one block per worker, in worker order (ABI 1.2) */
	d->status = c->status;
}

/* Ring, and wake the worker if it sleeps (idle_sleep_us): its sleep ends at
 * once instead of at its longest. The locked OR of the ring orders the
 * load of the sleeping word. */
static inline void
db_ring(const struct db_ref *d)
{
	uroce_shm_db_ring(d->block, d->slot);
	uroce_shm_status_wake(d->status, d->worker);
}

struct uroce_qp_priv {
	pthread_mutex_t sq_lock;
	pthread_mutex_t rq_lock;
	struct uroce_shm_segment seg;
	struct uroce_shm_ring sq; /* producer */
	struct uroce_shm_ring rq; /* producer */
	struct db_ref db;         /* the QP's doorbell, in its worker's block */
	unsigned int unacked;     /* async events taken, not acknowledged */
};

struct uroce_srq_priv {
	pthread_mutex_t lock;
	struct uroce_shm_segment seg;
	struct uroce_shm_ring ring; /* producer */
	struct db_ref db;         /* the SRQ's doorbell, in its worker's block */
	uint32_t max_wr;
	uint32_t max_sge;
	unsigned int unacked;     /* async events taken, not acknowledged */
};

/* ------------------------------------------------------------------------ */
/* Control exchange                                                          */
/* ------------------------------------------------------------------------ */

static void
set_fatal(struct uroce_context *c)
{
	uint64_t one = 1;

	if (!c->fatal)
		uroce_log(UROCE_LOG_ERR, "liburoce: lost the daemon; the device is fatal");
	c->fatal = 1;
	/* DEVICE_FATAL is an event: make the async fd readable. */
	if (c->evfd >= 0 && write(c->evfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		uroce_log(UROCE_LOG_ERR, "liburoce: async eventfd: %s", strerror(errno));
}

/* Queue an ASYNC_EVENT body (under c->lock). */
static void
evq_push(struct uroce_context *c, const void *body)
{
	uint64_t one = 1;

	if (c->evq_count == EVQ_SIZE) {
		c->evq_lost++;
		return;
	}
	memcpy(&c->evq[(c->evq_head + c->evq_count) % EVQ_SIZE], body, sizeof(c->evq[0]));
	if (c->evq_count++ == 0 && c->evfd >= 0 && write(c->evfd, &one, sizeof(one)) < 0 &&
	    errno != EAGAIN)
		uroce_log(UROCE_LOG_ERR, "liburoce: async eventfd: %s", strerror(errno));
}

/* Take the oldest queued event (under c->lock). @return false if none. */
static bool
evq_pop(struct uroce_context *c, struct uroce_shm_msg_async_event *ev)
{
	uint64_t v;

	if (c->evq_count == 0)
		return false;
	*ev = c->evq[c->evq_head];
	c->evq_head = (c->evq_head + 1) % EVQ_SIZE;
	/* Empty again and not fatal: the async fd is readable only for the socket. */
	if (--c->evq_count == 0 && !c->fatal && c->evfd >= 0 &&
	    read(c->evfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		uroce_log(UROCE_LOG_ERR, "liburoce: async eventfd: %s", strerror(errno));
	return true;
}

/* Remember which local object a daemon handle names (for async events). */
static int
reg_add(struct uroce_context *c, uint32_t handle, uint8_t kind, void *obj)
{
	struct hreg *r = malloc(sizeof(*r));

	if (r == NULL)
		return -ENOMEM;
	r->handle = handle;
	r->kind = kind;
	r->obj = obj;
	pthread_mutex_lock(&c->lock);
	r->next = c->reg;
	c->reg = r;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/*
 * Before destroying @p obj: refuse while an event on it is unacknowledged,
 * else forget its handle, so that no event taken from now on can name it.
 * Both under c->lock, which uroce_get_async_event() holds while it resolves
 * and counts an event. @return 0 or -EBUSY.
 */
static int
reg_detach(struct uroce_context *c, const void *obj, const unsigned int *unacked)
{
	struct hreg **pp, *r;

	pthread_mutex_lock(&c->lock);
	if (__atomic_load_n(unacked, __ATOMIC_ACQUIRE) != 0) {
		pthread_mutex_unlock(&c->lock);
		return -EBUSY;
	}
	for (pp = &c->reg; (r = *pp) != NULL; pp = &r->next)
		if (r->obj == obj) {
			*pp = r->next;
			free(r);
			break;
		}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* The local object of @p handle if it is of @p kind (under c->lock), or NULL. */
static void *
reg_find(struct uroce_context *c, uint32_t handle, uint8_t kind)
{
	struct hreg *r;

	for (r = c->reg; r != NULL; r = r->next)
		if (r->handle == handle && r->kind == kind)
			return r->obj;
	return NULL;
}

/* An ASYNC_EVENT read while a reply was awaited: kept for
 * uroce_get_async_event() (under c->lock, which the caller holds). */
static void
rpc_event(void *arg, const void *body)
{
	evq_push(arg, body);
}

/*
 * Send one request and wait for its response. @return the response status
 * (0 or -errno from the daemon), or -ENOTCONN (the daemon is gone: the
 * context is fatal), -ETIMEDOUT (no answer in time: the daemon lives but
 * did not answer; the call may be retried, the context stays usable),
 * -EPROTO (malformed response), -EPROTONOSUPPORT.
 */
static int
rpc(struct uroce_context *c, uint16_t type, const void *req, size_t req_len, int fd_in,
    void *resp, size_t resp_len, int *fd_out)
{
	int rc;

	if (fd_out != NULL)
		*fd_out = -1;
	pthread_mutex_lock(&c->lock);
	if (c->fatal) {
		rc = -ENOTCONN;
		goto out;
	}
	c->rpc_waits = 0;
	rc = uroce_shm_client_call(&c->ctl, type, req, req_len, fd_in, resp, resp_len, fd_out);
	switch (c->ctl.replied ? 0 : rc) {
	case -ETIMEDOUT:
		uroce_log(UROCE_LOG_ERR, "liburoce: uroced has not answered %s; it may be "
			  "stopped or starved of CPU (the request may still take effect)",
			  uroce_shm_msg_type_name(type));
		break;
	case -EPROTONOSUPPORT:
		uroce_log(UROCE_LOG_ERR, "liburoce: uroced speaks another shm ABI major than "
			  "this liburoce (%u.%u)", UROCE_SHM_ABI_MAJOR, UROCE_SHM_ABI_MINOR);
		set_fatal(c);
		break;
	case -ECONNRESET:
	case -EPROTO:
	case -ENOTCONN:
		set_fatal(c);
		rc = rc == -EPROTO ? -EPROTO : -ENOTCONN;
		break;
	default:
		break;
	}
out:
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int
verbs_rpc(struct uroce_context *c, uint16_t type, const void *req, size_t req_len, int fd_in,
	  void *resp, size_t resp_len, int *fd_out)
{
	return rpc(c, type, req, req_len, fd_in, resp, resp_len, fd_out);
}

int
uroce_ctl_call(struct uroce_context *c, uint16_t type, const void *req, size_t req_len, int fd_in,
	       void *resp, size_t resp_len, int *fd_out)
{
	int len = uroce_shm_msg_body_len(type, false);

	if (fd_out != NULL)
		*fd_out = -1;
	if (c == NULL || len < 0 || (size_t)len != req_len)
		return -EINVAL;
	return rpc(c, type, req, req_len, fd_in, resp, resp_len, fd_out);
}

uint16_t
uroce_daemon_abi_minor(const struct uroce_context *c)
{
	return c != NULL ? c->daemon_minor : 0;
}

static int
rpc_handle(struct uroce_context *c, uint16_t type, uint32_t handle)
{
	struct uroce_shm_msg_handle q = {.handle = handle};

	return rpc(c, type, &q, sizeof(q), -1, NULL, 0, NULL);
}

/* Map the segment whose fd came with a reply; the fd is closed either way. */
static int
map_segment(struct uroce_shm_segment *seg, int fd, size_t size)
{
	int rc = uroce_shm_segment_map(seg, fd, size);

	if (rc != 0)
		close(fd);
	return rc;
}

/*
 * A verbs object and its private part, just calloc()ed: @return true if both
 * are there; else free whichever is, set errno to ENOMEM and return false.
 */
static bool
both_allocated(void *obj, void *priv)
{
	if (obj != NULL && priv != NULL)
		return true;
	free(obj);
	free(priv);
	errno = ENOMEM;
	return false;
}

/*
 * Destroy an object that async events can name: take it out of the registry
 * (refused while an event on it is not acknowledged), then ask the daemon;
 * if the daemon refuses, put it back. @return 0, -ENOTCONN (the daemon is
 * gone: the caller frees its side all the same), -EBUSY (an event on it is
 * not acknowledged) or the daemon's refusal.
 */
static int
destroy_registered(struct uroce_context *c, void *obj, const unsigned int *unacked,
		   uint16_t type, uint32_t handle, uint8_t kind)
{
	int rc;

	rc = reg_detach(c, obj, unacked);
	if (rc != 0)
		return rc;
	rc = rpc_handle(c, type, handle);
	if (rc != 0 && rc != -ENOTCONN)
		reg_add(c, handle, kind, obj);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Device                                                                    */
/* ------------------------------------------------------------------------ */

/* UROCE_DAEMON_TIMEOUT_MS, or the default. @return 0 or -EINVAL (logged). */
static int
daemon_timeout_env(uint64_t *ms)
{
	const char *e = getenv("UROCE_DAEMON_TIMEOUT_MS");
	unsigned long long v;
	char *end;

	*ms = DAEMON_TIMEOUT_MS;
	if (e == NULL || *e == '\0')
		return 0;
	errno = 0;
	v = strtoull(e, &end, 10);
	if (errno != 0 || *end != '\0' || v < DAEMON_TIMEOUT_MIN_MS || v > DAEMON_TIMEOUT_MAX_MS) {
		uroce_log(UROCE_LOG_ERR, "liburoce: UROCE_DAEMON_TIMEOUT_MS='%s': expected "
			  "milliseconds, %u..%u", e, DAEMON_TIMEOUT_MIN_MS, DAEMON_TIMEOUT_MAX_MS);
		return -EINVAL;
	}
	*ms = v;
	return 0;
}

/* Map the daemon's status segment (ABI 1.5): heartbeat and sleeping workers.
 * An older daemon has none: no wake-ups (its workers do not sleep on the
 * futex) and no stall detection. @return 0 or -errno. */
static int
status_map(struct uroce_context *c)
{
	struct uroce_shm_msg_get_status_resp r;
	int rc, fd = -1;

	if (c->daemon_minor < 5)
		return 0;
	rc = rpc(c, UROCE_SHM_MSG_GET_STATUS, NULL, 0, -1, &r, sizeof(r), &fd);
	if (rc != 0)
		return rc;
	c->status = uroce_shm_status_map(fd, r.size);
	rc = c->status == NULL ? -errno : 0;
	close(fd);
	return rc;
}

static bool daemon_stalled(struct uroce_context *c);

/* The control socket's still_alive: while the daemon's heartbeat moves, a
 * slow answer is worth waiting for; without a status segment, RPC_TIMEOUT_S. */
static bool
rpc_still_alive(void *arg)
{
	struct uroce_context *c = arg;

	if (c->status != NULL)
		return !daemon_stalled(c);
	return ++c->rpc_waits < RPC_TIMEOUT_S;
}

struct uroce_context *
uroce_open_device(const char *sock_path)
{
	struct uroce_shm_msg_hello_resp hr;
	struct uroce_context *c;
	int rc, fd = -1;

	sock_path = uroce_shm_socket_path(sock_path);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->db.fd = -1;
	c->evfd = -1;
	c->async_fd = -1;
	/* A daemon that stops answering turns into ETIMEDOUT, never a hang:
	 * the call looks every second whether it still makes progress. */
	c->ctl.timeout_ms = 1000;
	c->ctl.on_event = rpc_event;
	c->ctl.still_alive = rpc_still_alive;
	c->ctl.arg = c;
	rc = daemon_timeout_env(&c->daemon_timeout_ms);
	if (rc != 0)
		goto fail_rc;
	rc = uroce_shm_client_connect(&c->ctl, sock_path);
	if (rc != 0) {
		uroce_log(UROCE_LOG_ERR, "liburoce: cannot connect to uroced at %s: %s (%s)",
			  sock_path, strerror(-rc), uroce_shm_client_advice(rc));
		goto fail_rc;
	}
	pthread_mutex_lock(&c->lock);
	rc = uroce_shm_client_hello(&c->ctl, program_invocation_short_name, &hr, &fd);
	pthread_mutex_unlock(&c->lock);
	if (rc != 0) {
		uroce_log(UROCE_LOG_ERR, "liburoce: HELLO to uroced at %s: %s (%s)", sock_path,
			  strerror(-rc), uroce_shm_client_advice(rc));
		goto fail_rc;
	}
	/* One doorbell block per worker of the daemon (ABI 1.2), one before. */
	if (hr.n_db_blocks == 0 || hr.n_db_blocks > UROCE_SHM_MAX_DB_BLOCKS ||
	    (hr.abi_minor < 2 && hr.n_db_blocks != 1)) {
		if (fd >= 0)
			close(fd);
		rc = -EPROTO;
		goto fail_rc;
	}
	rc = map_segment(&c->db, fd, hr.n_db_blocks * sizeof(struct uroce_shm_db_block));
	if (rc != 0)
		goto fail_rc;
	c->dbb = c->db.addr;
	c->n_db_blocks = hr.n_db_blocks;
	c->client_id = hr.client_id;
	c->max_inline = hr.max_inline;
	c->max_sge = hr.max_sge;
	c->daemon_minor = hr.abi_minor;
	rc = status_map(c);
	if (rc != 0)
		goto fail_db;
	/* The async fd: readable when the socket is (an event, or the daemon's
	 * departure) or when events are queued (evfd). */
	c->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c->async_fd = epoll_create1(EPOLL_CLOEXEC);
	if (c->evfd < 0 || c->async_fd < 0) {
		rc = -errno;
		goto fail_db;
	}
	{
		struct epoll_event ee = {.events = EPOLLIN};

		ee.data.fd = c->ctl.fd;
		if (epoll_ctl(c->async_fd, EPOLL_CTL_ADD, c->ctl.fd, &ee) != 0) {
			rc = -errno;
			goto fail_db;
		}
		ee.data.fd = c->evfd;
		if (epoll_ctl(c->async_fd, EPOLL_CTL_ADD, c->evfd, &ee) != 0) {
			rc = -errno;
			goto fail_db;
		}
	}
	return c;
fail_db:
	uroce_shm_status_unmap(c->status);
	uroce_shm_segment_unmap(&c->db);
	if (c->evfd >= 0)
		close(c->evfd);
	if (c->async_fd >= 0)
		close(c->async_fd);
	goto fail_rc;
fail_rc:
	uroce_shm_client_close(&c->ctl);
	pthread_mutex_destroy(&c->lock);
	free(c);
	errno = -rc;
	return NULL;
}

int
uroce_close_device(struct uroce_context *c)
{
	if (c == NULL)
		return -EINVAL;
	/* Closing the socket is the whole protocol: the daemon reclaims the rest. */
	rbk_context_closed(c);
	uroce_shm_client_close(&c->ctl);
	close(c->async_fd);
	close(c->evfd);
	while (c->reg != NULL) {
		struct hreg *r = c->reg;

		c->reg = r->next;
		free(r);
	}
	while (c->bufs != NULL) {
		struct ubuf *b = c->bufs;

		c->bufs = b->next;
		uroce_shm_segment_unmap(&b->seg);
		free(b);
	}
	uroce_shm_segment_unmap(&c->db);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return 0;
}

bool
uroce_context_fatal(const struct uroce_context *c)
{
	return c->fatal != 0;
}

int
uroce_query_device(struct uroce_context *c, struct uroce_device_attr *a)
{
	struct uroce_shm_msg_query_device_resp r;
	int rc;

	if (c == NULL || a == NULL)
		return -EINVAL;
	rc = rpc(c, UROCE_SHM_MSG_QUERY_DEVICE, NULL, 0, -1, &r, sizeof(r), NULL);
	if (rc != 0)
		return rc;
	memset(a, 0, sizeof(*a));
	a->node_guid = r.node_guid;
	a->max_mr_size = r.max_mr_size;
	a->page_size_cap = r.page_size_cap;
	a->max_qp = r.max_qp;
	a->max_qp_wr = r.max_qp_wr;
	a->max_sge = r.max_sge;
	a->max_cq = r.max_cq;
	a->max_cqe = r.max_cqe;
	a->max_mr = r.max_mr;
	a->max_pd = r.max_pd;
	a->max_qp_rd_atom = r.max_qp_rd_atom;
	a->max_qp_init_rd_atom = r.max_qp_init_rd_atom;
	a->max_srq = r.max_srq;
	a->max_ah = r.max_ah;
	a->max_inline_data = r.max_inline_data;
	a->atomic_cap = r.atomic_cap;
	a->phys_port_cnt = r.phys_port_cnt;
	a->max_pkeys = r.max_pkeys;
	a->sys_image_guid = r.sys_image_guid;
	a->vendor_id = r.vendor_id;
	a->vendor_part_id = r.vendor_part_id;
	a->hw_ver = r.hw_ver;
	a->device_cap_flags = r.device_cap_flags;
	a->max_srq_wr = r.max_srq_wr;
	a->max_srq_sge = r.max_srq_sge;
	return 0;
}

int
uroce_query_port(struct uroce_context *c, uint8_t port, struct uroce_port_attr *a)
{
	struct uroce_shm_msg_query_port_req q;
	struct uroce_shm_msg_query_port_resp r;
	int rc;

	if (c == NULL || a == NULL)
		return -EINVAL;
	memset(&q, 0, sizeof(q));
	q.port_num = port;
	rc = rpc(c, UROCE_SHM_MSG_QUERY_PORT, &q, sizeof(q), -1, &r, sizeof(r), NULL);
	if (rc != 0)
		return rc;
	memset(a, 0, sizeof(*a));
	a->state = r.state;
	a->max_mtu = r.max_mtu;
	a->active_mtu = r.active_mtu;
	a->gid_tbl_len = r.gid_tbl_len;
	a->max_msg_sz = r.max_msg_sz;
	a->pkey_tbl_len = r.pkey_tbl_len;
	a->link_layer = r.link_layer;
	a->phys_state = r.phys_state;
	a->port_cap_flags = r.port_cap_flags;
	a->active_speed = r.active_speed;
	a->active_width = r.active_width;
	return 0;
}

int
uroce_query_gid(struct uroce_context *c, uint8_t port, int index, uint8_t gid[16])
{
	uint32_t type;

	return uroce_query_gid_ex(c, port, index, gid, &type);
}

int
uroce_query_gid_ex(struct uroce_context *c, uint8_t port, int index, uint8_t gid[16],
		   uint32_t *gid_type)
{
	struct uroce_shm_msg_query_gid_req q;
	struct uroce_shm_msg_query_gid_resp r;
	int rc;

	if (c == NULL || gid == NULL || gid_type == NULL || index < 0)
		return -EINVAL;
	memset(&q, 0, sizeof(q));
	q.port_num = port;
	q.index = (uint32_t)index;
	rc = rpc(c, UROCE_SHM_MSG_QUERY_GID, &q, sizeof(q), -1, &r, sizeof(r), NULL);
	if (rc == 0) {
		memcpy(gid, r.gid, 16);
		*gid_type = r.gid_type;
	}
	return rc;
}

/* ------------------------------------------------------------------------ */
/* PD, buffers, MR                                                           */
/* ------------------------------------------------------------------------ */

/* A daemon object that is only a handle (a PD, an XRC domain), asked for
 * with @p type (no body). @return the handle in @p handle, 0 or -errno. */
static int
handle_new(struct uroce_context *c, uint16_t type, uint32_t *handle)
{
	struct uroce_shm_msg_handle r;
	int rc = rpc(c, type, NULL, 0, -1, &r, sizeof(r), NULL);

	if (rc == 0)
		*handle = r.handle;
	return rc;
}

/* Release @p handle with @p type; free @p obj once the daemon's object is
 * gone (or the daemon is). */
static int
handle_release(struct uroce_context *c, uint16_t type, uint32_t handle, void *obj)
{
	int rc = rpc_handle(c, type, handle);

	if (rc == 0 || rc == -ENOTCONN)
		free(obj);
	return rc;
}

/* The client's structure (@p size bytes, zeroed) of a new daemon object of
 * @p type, its handle stored at @p handle_off. NULL with errno set. */
static void *
handle_obj_new(struct uroce_context *c, uint16_t type, size_t size, size_t handle_off)
{
	uint8_t *o = calloc(1, size);
	int rc;

	if (o == NULL)
		return NULL;
	rc = handle_new(c, type, (uint32_t *)(void *)(o + handle_off));
	if (rc != 0) {
		free(o);
		errno = -rc;
		return NULL;
	}
	return o;
}

struct uroce_pd *
uroce_alloc_pd(struct uroce_context *c)
{
	struct uroce_pd *pd;

	if (c == NULL) {
		errno = EINVAL;
		return NULL;
	}
	pd = handle_obj_new(c, UROCE_SHM_MSG_ALLOC_PD, sizeof(*pd),
			    offsetof(struct uroce_pd, handle));
	if (pd != NULL)
		pd->context = c;
	return pd;
}

int
uroce_dealloc_pd(struct uroce_pd *pd)
{
	return pd == NULL ? -EINVAL :
	       handle_release(pd->context, UROCE_SHM_MSG_DEALLOC_PD, pd->handle, pd);
}

struct uroce_xrcd *
uroce_open_xrcd(struct uroce_context *c)
{
	struct uroce_xrcd *x;

	if (c == NULL || (c->daemon_minor < 7 && !c->fatal)) {
		errno = c == NULL ? EINVAL : EOPNOTSUPP;
		return NULL;
	}
	x = handle_obj_new(c, UROCE_SHM_MSG_OPEN_XRCD, sizeof(*x),
			   offsetof(struct uroce_xrcd, handle));
	if (x != NULL)
		x->context = c;
	return x;
}

int
uroce_close_xrcd(struct uroce_xrcd *x)
{
	return x == NULL ? -EINVAL :
	       handle_release(x->context, UROCE_SHM_MSG_CLOSE_XRCD, x->handle, x);
}

struct uroce_ah *
uroce_create_ah(struct uroce_pd *pd, const struct uroce_ah_attr *attr)
{
	struct uroce_shm_msg_create_ah_req q;
	struct uroce_shm_msg_handle r;
	struct uroce_ah *ah;
	int rc;

	if (pd == NULL || attr == NULL || attr->flow_label > 0xfffff) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL)
		return NULL;
	memset(&q, 0, sizeof(q));
	q.pd_handle = pd->handle;
	memcpy(q.attr.dgid, attr->dgid, 16);
	q.attr.flow_label = attr->flow_label;
	q.attr.hop_limit = attr->hop_limit;
	q.attr.traffic_class = attr->traffic_class;
	q.attr.sl = attr->sl;
	q.attr.port_num = attr->port_num;
	q.attr.sgid_index = attr->sgid_index;
	q.attr.is_global = 1;
	rc = rpc(pd->context, UROCE_SHM_MSG_CREATE_AH, &q, sizeof(q), -1, &r, sizeof(r), NULL);
	if (rc != 0) {
		free(ah);
		errno = -rc;
		return NULL;
	}
	ah->context = pd->context;
	ah->pd = pd;
	ah->handle = r.handle;
	return ah;
}

int
uroce_destroy_ah(struct uroce_ah *ah)
{
	int rc;

	if (ah == NULL)
		return -EINVAL;
	rc = rpc_handle(ah->context, UROCE_SHM_MSG_DESTROY_AH, ah->handle);
	if (rc == 0 || rc == -ENOTCONN)
		free(ah);
	return rc;
}

void *
uroce_alloc_buf(struct uroce_context *c, size_t size)
{
	struct uroce_shm_msg_alloc_segment_req q;
	struct uroce_shm_msg_alloc_segment_resp r;
	struct ubuf *b;
	int rc;

	if (c == NULL || size == 0) {
		errno = EINVAL;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return NULL;
	rc = uroce_shm_segment_create(&b->seg, "uroce-buf", size, 0);
	if (rc != 0)
		goto fail;
	memset(&q, 0, sizeof(q));
	q.size = b->seg.size;
	q.flags = b->seg.flags & UROCE_SHM_SEG_HUGETLB;
	rc = rpc(c, UROCE_SHM_MSG_ALLOC_SEGMENT, &q, sizeof(q), b->seg.fd, &r, sizeof(r), NULL);
	if (rc != 0) {
		uroce_shm_segment_unmap(&b->seg);
		goto fail;
	}
	b->handle = r.seg_handle;
	pthread_mutex_lock(&c->lock);
	b->next = c->bufs;
	c->bufs = b;
	pthread_mutex_unlock(&c->lock);
	return b->seg.addr;
fail:
	free(b);
	errno = -rc;
	return NULL;
}

int
uroce_free_buf(struct uroce_context *c, void *addr)
{
	struct ubuf **pp, *b;
	int rc;

	if (c == NULL)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	for (pp = &c->bufs; (b = *pp) != NULL; pp = &b->next)
		if (b->seg.addr == addr)
			break;
	if (b == NULL || b->mrs != 0) {
		pthread_mutex_unlock(&c->lock);
		return b == NULL ? -EINVAL : -EBUSY;
	}
	*pp = b->next;
	pthread_mutex_unlock(&c->lock);
	rc = rpc_handle(c, UROCE_SHM_MSG_FREE_SEGMENT, b->handle);
	uroce_shm_segment_unmap(&b->seg);
	free(b);
	return rc == -ENOTCONN ? 0 : rc;
}

static struct ubuf *
buf_find(struct uroce_context *c, const void *addr, size_t length)
{
	uintptr_t a = (uintptr_t)addr;
	struct ubuf *b;

	for (b = c->bufs; b != NULL; b = b->next) {
		uintptr_t base = (uintptr_t)b->seg.addr;

		if (a >= base && a - base <= b->seg.size && length <= b->seg.size - (a - base))
			return b;
	}
	return NULL;
}

/*
 * The segment behind [addr, + length): a buffer of uroce_alloc_buf() (one
 * more MR on it), else ordinary memory re-backed in place (rbk_acquire).
 */
static int
mem_acquire(struct uroce_context *c, void *addr, size_t length, uint32_t *seg_handle,
	    uint64_t *seg_offset)
{
	struct ubuf *b;

	pthread_mutex_lock(&c->lock);
	b = buf_find(c, addr, length);
	if (b != NULL) {
		b->mrs++;
		*seg_handle = b->handle;
		*seg_offset = (uint64_t)((uintptr_t)addr - (uintptr_t)b->seg.addr);
	}
	pthread_mutex_unlock(&c->lock);
	return b != NULL ? 0 : rbk_acquire(c, addr, length, seg_handle, seg_offset);
}

/* Undo mem_acquire() of the same range. */
static void
mem_release(struct uroce_context *c, void *addr, size_t length)
{
	struct ubuf *b;

	pthread_mutex_lock(&c->lock);
	b = buf_find(c, addr, length);
	if (b != NULL && b->mrs > 0)
		b->mrs--;
	pthread_mutex_unlock(&c->lock);
	if (b == NULL)
		rbk_release(c, addr, length); /* re-backed memory */
}

struct uroce_mr *
uroce_reg_mr(struct uroce_pd *pd, void *addr, size_t length, int access)
{
	struct uroce_shm_msg_reg_mr_req q;
	struct uroce_shm_msg_reg_mr_resp r;
	struct uroce_context *c;
	struct uroce_mr *mr;
	uint32_t seg_handle;
	uint64_t seg_offset;
	int rc;

	if (pd == NULL || access < 0) {
		errno = EINVAL;
		return NULL;
	}
	c = pd->context;
	rc = mem_acquire(c, addr, length, &seg_handle, &seg_offset);
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	memset(&q, 0, sizeof(q));
	q.pd_handle = pd->handle;
	q.seg_handle = seg_handle;
	q.seg_offset = seg_offset;
	q.length = length;
	q.iova = (uint64_t)(uintptr_t)addr;
	q.access = (uint32_t)access;
	rc = rpc(c, UROCE_SHM_MSG_REG_MR, &q, sizeof(q), -1, &r, sizeof(r), NULL);
	if (rc != 0)
		goto fail;
	mr->context = c;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->handle = r.mr_handle;
	mr->lkey = r.lkey;
	mr->rkey = r.rkey;
	return mr;
fail:
	mem_release(c, addr, length);
	free(mr);
	errno = -rc;
	return NULL;
}

int
uroce_dereg_mr(struct uroce_mr *mr)
{
	struct uroce_context *c;
	int rc;

	if (mr == NULL)
		return -EINVAL;
	c = mr->context;
	rc = rpc_handle(c, UROCE_SHM_MSG_DEREG_MR, mr->handle);
	if (rc != 0 && rc != -ENOTCONN)
		return rc;
	mem_release(c, mr->addr, mr->length);
	free(mr);
	return rc;
}

struct uroce_mw *
uroce_alloc_mw(struct uroce_pd *pd, int type)
{
	struct uroce_shm_msg_alloc_mw_req q;
	struct uroce_shm_msg_alloc_mw_resp r;
	struct uroce_mw *mw;
	int rc;

	if (pd == NULL || (type != UROCE_MW_TYPE_1 && type != UROCE_MW_TYPE_2)) {
		errno = EINVAL;
		return NULL;
	}
	if (pd->context->daemon_minor < 5) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (mw == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&q, 0, sizeof(q));
	q.pd_handle = pd->handle;
	q.type = (uint32_t)type;
	rc = rpc(pd->context, UROCE_SHM_MSG_ALLOC_MW, &q, sizeof(q), -1, &r, sizeof(r), NULL);
	if (rc != 0) {
		free(mw);
		errno = -rc;
		return NULL;
	}
	mw->context = pd->context;
	mw->pd = pd;
	mw->handle = r.mw_handle;
	mw->rkey = r.rkey;
	mw->type = (uint32_t)type;
	return mw;
}

int
uroce_dealloc_mw(struct uroce_mw *mw)
{
	int rc;

	if (mw == NULL)
		return -EINVAL;
	rc = rpc_handle(mw->context, UROCE_SHM_MSG_DEALLOC_MW, mw->handle);
	if (rc != 0 && rc != -ENOTCONN)
		return rc;
	free(mw);
	return rc;
}

_Static_assert(UROCE_REREG_TRANSLATION == UROCE_SHM_REREG_TRANSLATION &&
		       UROCE_REREG_PD == UROCE_SHM_REREG_PD &&
		       UROCE_REREG_ACCESS == UROCE_SHM_REREG_ACCESS,
	       "REREG_MR flags are the API's");

int
uroce_rereg_mr(struct uroce_mr *mr, int flags, struct uroce_pd *pd, void *addr, size_t length,
	       int access)
{
	const int all = UROCE_REREG_TRANSLATION | UROCE_REREG_PD | UROCE_REREG_ACCESS;
	struct uroce_shm_msg_rereg_mr_req q;
	struct uroce_shm_msg_reg_mr_resp r;
	struct uroce_context *c;
	int rc;

	if (mr == NULL || flags == 0 || (flags & ~all) != 0 ||
	    ((flags & UROCE_REREG_PD) && (pd == NULL || pd->context != mr->context)) ||
	    ((flags & UROCE_REREG_ACCESS) && access < 0) ||
	    ((flags & UROCE_REREG_TRANSLATION) && length == 0))
		return -EINVAL;
	c = mr->context;
	if (c->daemon_minor < 5)
		return -EOPNOTSUPP;
	memset(&q, 0, sizeof(q));
	q.mr_handle = mr->handle;
	q.flags = (uint32_t)flags;
	if (flags & UROCE_REREG_PD)
		q.pd_handle = pd->handle;
	if (flags & UROCE_REREG_ACCESS)
		q.access = (uint32_t)access;
	if (flags & UROCE_REREG_TRANSLATION) {
		rc = mem_acquire(c, addr, length, &q.seg_handle, &q.seg_offset);
		if (rc != 0)
			return rc;
		q.length = length;
		q.iova = (uint64_t)(uintptr_t)addr;
	}
	rc = rpc(c, UROCE_SHM_MSG_REREG_MR, &q, sizeof(q), -1, &r, sizeof(r), NULL);
	if (flags & UROCE_REREG_TRANSLATION) {
		/* The memory the MR no longer names goes back (or the new, on error). */
		mem_release(c, rc == 0 ? mr->addr : addr, rc == 0 ? mr->length : length);
		if (rc == 0) {
			mr->addr = addr;
			mr->length = length;
		}
	}
	if (rc != 0)
		return rc;
	if (flags & UROCE_REREG_PD)
		mr->pd = pd;
	mr->lkey = r.lkey;
	mr->rkey = r.rkey;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* CQ                                                                        */
/* ------------------------------------------------------------------------ */

struct uroce_cq *
uroce_create_cq(struct uroce_context *c, int cqe, void *cq_context)
{
	struct uroce_shm_msg_create_cq_req q;
	struct uroce_shm_msg_create_cq_resp r;
	struct uroce_cq *cq;
	int rc, fd = -1;

	if (c == NULL || cqe <= 0 || cqe > UROCE_MAX_CQE) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return NULL;
	cq->seg.fd = -1;
	cq->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (cq->evfd < 0) {
		rc = -errno;
		goto fail;
	}
	memset(&q, 0, sizeof(q));
	q.cqe = (uint32_t)cqe;
	q.flags = UROCE_SHM_CQ_F_EVENTFD;
	rc = rpc(c, UROCE_SHM_MSG_CREATE_CQ, &q, sizeof(q), cq->evfd, &r, sizeof(r), &fd);
	if (rc != 0)
		goto fail;
	rc = map_segment(&cq->seg, fd, (size_t)r.seg_size);
	if (rc != 0)
		goto fail_daemon;
	rc = uroce_shm_ring_attach(&cq->ring, (uint8_t *)cq->seg.addr + r.ring_offset,
				   cq->seg.size - r.ring_offset, UROCE_SHM_RING_CONSUMER, 0);
	if (rc != 0) {
		uroce_shm_segment_unmap(&cq->seg);
		goto fail_daemon;
	}
	cq->context = c;
	cq->cq_context = cq_context;
	cq->handle = r.cq_handle;
	cq->size = r.cqe;
	rc = reg_add(c, cq->handle, HK_CQ, cq);
	if (rc != 0) {
		uroce_shm_segment_unmap(&cq->seg);
		goto fail_daemon;
	}
	pthread_mutex_init(&cq->lock, NULL);
	return cq;
fail_daemon:
	rpc_handle(c, UROCE_SHM_MSG_DESTROY_CQ, r.cq_handle);
fail:
	if (cq->evfd >= 0)
		close(cq->evfd);
	free(cq);
	errno = -rc;
	return NULL;
}

int
uroce_destroy_cq(struct uroce_cq *cq)
{
	int rc;

	if (cq == NULL)
		return -EINVAL;
	rc = destroy_registered(cq->context, cq, &cq->unacked, UROCE_SHM_MSG_DESTROY_CQ, cq->handle,
				HK_CQ);
	if (rc != 0 && rc != -ENOTCONN)
		return rc;
	uroce_shm_segment_unmap(&cq->seg);
	close(cq->evfd);
	pthread_mutex_destroy(&cq->lock);
	free(cq);
	return rc;
}

int
uroce_resize_cq(struct uroce_cq *cq, int cqe)
{
	struct uroce_shm_msg_resize_cq_req q;
	struct uroce_shm_msg_create_cq_resp r;
	struct uroce_shm_segment seg;
	struct uroce_shm_ring ring;
	int rc, fd = -1;

	if (cq == NULL || cqe <= 0 || cqe > UROCE_MAX_CQE)
		return -EINVAL;
	if (cq->context->daemon_minor < 5)
		return -EOPNOTSUPP;
	memset(&q, 0, sizeof(q));
	q.cq_handle = cq->handle;
	q.cqe = (uint32_t)cqe;
	/* Nothing is consumed while the daemon moves the CQEs. */
	pthread_mutex_lock(&cq->lock);
	rc = rpc(cq->context, UROCE_SHM_MSG_RESIZE_CQ, &q, sizeof(q), -1, &r, sizeof(r), &fd);
	if (rc == 0) {
		memset(&seg, 0, sizeof(seg));
		seg.fd = -1;
		rc = map_segment(&seg, fd, (size_t)r.seg_size);
	}
	if (rc == 0) {
		rc = uroce_shm_ring_attach(&ring, (uint8_t *)seg.addr + r.ring_offset,
					   seg.size - r.ring_offset, UROCE_SHM_RING_CONSUMER, 0);
		if (rc != 0)
			uroce_shm_segment_unmap(&seg);
	}
	if (rc == 0) {
		ring.cq_arm_seq = cq->ring.cq_arm_seq;
		uroce_shm_segment_unmap(&cq->seg);
		cq->seg = seg;
		cq->ring = ring;
		cq->size = r.cqe;
	}
	pthread_mutex_unlock(&cq->lock);
	return rc;
}

int
uroce_modify_cq(struct uroce_cq *cq, const struct uroce_modify_cq_attr *attr)
{
	struct uroce_shm_msg_modify_cq_req q;

	if (cq == NULL || attr == NULL || attr->attr_mask != UROCE_CQ_ATTR_MODERATE ||
	    attr->cq_period > UROCE_CQ_PERIOD_MAX)
		return -EINVAL;
	if (cq->context->daemon_minor < 8)
		return -EOPNOTSUPP;
	memset(&q, 0, sizeof(q));
	q.cq_handle = cq->handle;
	q.attr_mask = UROCE_CQ_ATTR_MODERATE;
	q.cq_count = attr->cq_count;
	q.cq_period = attr->cq_period;
	return rpc(cq->context, UROCE_SHM_MSG_MODIFY_CQ, &q, sizeof(q), -1, NULL, 0, NULL);
}

uint32_t
uroce_cq_clean(struct uroce_cq *cq, uint32_t qp_num)
{
	uint32_t n, i, gone;

	if (cq == NULL)
		return 0;
	pthread_mutex_lock(&cq->lock);
	n = uroce_shm_ring_cons_peek(&cq->ring, cq->ring.size);
	/* Newest first, the survivors move to the back; the removed ones end
	 * up in front and are consumed. The daemon writes only past them. */
	gone = n;
	for (i = n; i-- > 0;) {
		const struct uroce_shm_cqe *e = uroce_shm_ring_cons_slot(&cq->ring, i);

		if (e->qp_num == qp_num)
			continue;
		gone--;
		if (gone != i)
			memcpy((void *)(uintptr_t)uroce_shm_ring_cons_slot(&cq->ring, gone), e,
			       sizeof(*e));
	}
	if (gone > 0)
		uroce_shm_ring_cons_release(&cq->ring, gone);
	pthread_mutex_unlock(&cq->lock);
	return gone;
}

int
uroce_cq_size(const struct uroce_cq *cq)
{
	return (int)cq->size;
}

void *
uroce_cq_context(const struct uroce_cq *cq)
{
	return cq->cq_context;
}

int
uroce_cq_fd(const struct uroce_cq *cq)
{
	return cq->evfd;
}

/* True if the daemon's end of the socket is gone (no system call if fatal). */
static bool
daemon_gone(struct uroce_context *c)
{
	struct pollfd p = {.fd = c->ctl.fd, .events = POLLIN};
	char b;

	if (c->fatal)
		return true;
	if (poll(&p, 1, 0) <= 0)
		return false;
	if ((p.revents & (POLLHUP | POLLERR)) ||
	    recv(c->ctl.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
		set_fatal(c);
		return true;
	}
	return false;
}

/*
 * True if the daemon has made no progress for UROCE_DAEMON_TIMEOUT_MS (its
 * heartbeat stands still: stopped, or starved of CPU). Not fatal: it may
 * resume. Logged once per stall.
 */
static bool
daemon_stalled(struct uroce_context *c)
{
	if (c->status == NULL || uroce_shm_status_alive(c->status, c->daemon_timeout_ms)) {
		c->stall_reported = false;
		return false;
	}
	if (!c->stall_reported)
		uroce_log(UROCE_LOG_ERR, "liburoce: uroced has made no progress for more than "
			  "%" PRIu64 " ms (stopped, or starved of CPU); giving up waiting "
			  "(UROCE_DAEMON_TIMEOUT_MS sets the bound)", c->daemon_timeout_ms);
	c->stall_reported = true;
	return true;
}

/* What an empty poll of a CQ of @p c reports every LIVENESS_EVERY polls:
 * 0, -ENOTCONN (the daemon is gone) or -ETIMEDOUT (it stands still). */
static int
daemon_check(struct uroce_context *c)
{
	if (daemon_gone(c))
		return -ENOTCONN;
	return daemon_stalled(c) ? -ETIMEDOUT : 0;
}

/*
 * Read every message waiting on the socket into the event queue, without
 * blocking (under c->lock, so never in the middle of a control exchange).
 * Outside an exchange only ASYNC_EVENTs may arrive: anything else is a
 * protocol error and makes the context fatal, as does the end of the stream.
 * @return 0, or -ENOTCONN once the context is fatal.
 */
static int
drain_events_locked(struct uroce_context *c)
{
	int rc;

	if (c->fatal)
		return -ENOTCONN;
	rc = uroce_shm_client_drain(&c->ctl);
	if (rc == -EPROTO)
		uroce_log(UROCE_LOG_ERR, "liburoce: unexpected message outside a request");
	if (rc != 0)
		set_fatal(c); /* end of stream, socket error or protocol fault: gone */
	return c->fatal ? -ENOTCONN : 0;
}

int
uroce_poll_cq(struct uroce_cq *cq, int num, struct uroce_wc *wc)
{
	uint32_t n, i;

	if (cq == NULL || num < 0 || (num > 0 && wc == NULL))
		return -EINVAL;
	pthread_mutex_lock(&cq->lock);
	n = uroce_shm_ring_cons_peek(&cq->ring, (uint32_t)num);
	for (i = 0; i < n; i++) {
		const struct uroce_shm_cqe *e = uroce_shm_ring_cons_slot(&cq->ring, i);

		wc[i].wr_id = e->wr_id;
		wc[i].status = e->status;
		wc[i].opcode = e->opcode;
		wc[i].vendor_err = e->vendor_err;
		wc[i].byte_len = e->byte_len;
		wc[i].imm_data = e->imm_data;
		wc[i].qp_num = e->qp_num;
		wc[i].src_qp = e->src_qp;
		wc[i].wc_flags = e->wc_flags;
		wc[i].pkey_index = e->pkey_index;
		wc[i].sl = e->sl;
	}
	if (n > 0) {
		uroce_shm_ring_cons_release(&cq->ring, n);
		cq->empty_polls = 0;
	}
	pthread_mutex_unlock(&cq->lock);
	if (n > 0)
		return (int)n;
	if (uroce_shm_ring_is_corrupt(&cq->ring))
		return -EIO;
	if (num > 0 && ++cq->empty_polls % LIVENESS_EVERY == 0)
		return daemon_check(cq->context);
	return 0;
}

int
uroce_req_notify_cq(struct uroce_cq *cq, bool solicited_only)
{
	uint64_t one = 1;
	int rc;

	if (cq == NULL)
		return -EINVAL;
	pthread_mutex_lock(&cq->lock);
	rc = uroce_shm_cq_arm(&cq->ring, solicited_only);
	pthread_mutex_unlock(&cq->lock);
	if (rc == 1) {
		/* A qualifying CQE was already there and we claimed the event:
		 * deliver it through our own eventfd. */
		if (write(cq->evfd, &one, sizeof(one)) != (ssize_t)sizeof(one) && errno != EAGAIN)
			return -errno;
		rc = 0;
	}
	return rc;
}

int
uroce_get_cq_event(struct uroce_cq *cq, int timeout_ms)
{
	struct pollfd p[2];
	uint64_t v;
	int rc;

	if (cq == NULL)
		return -EINVAL;
	p[0].fd = cq->evfd;
	p[0].events = POLLIN;
	p[1].fd = cq->context->ctl.fd;
	p[1].events = POLLIN;
	for (;;) {
		int slice = timeout_ms;

		if (cq->context->fatal)
			return -ENOTCONN;
		/* Wait in slices, to notice a daemon that stands still. */
		if (cq->context->status != NULL && (slice < 0 || slice > EVENT_SLICE_MS))
			slice = EVENT_SLICE_MS;
		p[0].revents = p[1].revents = 0;
		rc = poll(p, 2, slice);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (rc == 0 && slice != timeout_ms) {
			if (daemon_stalled(cq->context))
				return -ETIMEDOUT;
			if (timeout_ms > 0)
				timeout_ms -= slice;
			continue;
		}
		if (rc == 0)
			return 0;
		if (p[0].revents & POLLIN) {
			if (read(cq->evfd, &v, sizeof(v)) == (ssize_t)sizeof(v))
				return 1;
			if (errno != EAGAIN)
				return -errno;
		}
		if (p[1].revents && daemon_gone(cq->context))
			return -ENOTCONN;
		if (p[1].revents && !(p[0].revents & POLLIN)) {
			/* Readable socket but alive: an async event. Queue it for
			 * uroce_get_async_event() so that the socket is quiet again;
			 * if a control call holds the socket, it queues the event
			 * itself, so only nap instead of waiting for the lock. */
			struct uroce_context *c = cq->context;

			if (pthread_mutex_trylock(&c->lock) == 0) {
				int drc = drain_events_locked(c);

				pthread_mutex_unlock(&c->lock);
				if (drc != 0)
					return drc;
			} else {
				struct timespec ts = {.tv_nsec = 1000000};

				nanosleep(&ts, NULL);
			}
		}
	}
}

/* ------------------------------------------------------------------------ */
/* QP                                                                        */
/* ------------------------------------------------------------------------ */

struct uroce_qp *
uroce_create_qp(struct uroce_pd *pd, struct uroce_qp_init_attr *init)
{
	struct uroce_shm_msg_create_qp_req q;
	struct uroce_shm_msg_create_qp_resp r;
	struct uroce_context *c;
	struct uroce_qp *qp;
	struct uroce_qp_priv *pv;
	int rc, fd = -1;

	struct uroce_cq *rcq;
	bool no_rq;

	/* IBA 1.2 XRC: an initiator has no receive side; its recv_cq may be
	 * NULL (the daemon takes the send CQ's handle, never used). */
	rcq = init != NULL && init->qp_type == UROCE_QPT_XRC_SEND && init->recv_cq == NULL ?
	      init->send_cq : init != NULL ? init->recv_cq : NULL;
	if (pd == NULL || init == NULL || init->send_cq == NULL || rcq == NULL ||
	    init->send_cq->context != pd->context || rcq->context != pd->context ||
	    (init->srq != NULL && init->srq->context != pd->context) ||
	    init->qp_type == UROCE_QPT_XRC_RECV) {
		errno = EINVAL;
		return NULL;
	}
	no_rq = init->srq != NULL || init->qp_type == UROCE_QPT_XRC_SEND;
	c = pd->context;
	qp = calloc(1, sizeof(*qp));
	pv = calloc(1, sizeof(*pv));
	if (!both_allocated(qp, pv))
		return NULL;
	memset(&q, 0, sizeof(q));
	q.pd_handle = pd->handle;
	q.send_cq = init->send_cq->handle;
	q.recv_cq = rcq->handle;
	q.srq_handle = init->srq != NULL ? init->srq->handle : UROCE_SHM_HANDLE_NONE;
	q.qp_type = init->qp_type;
	q.sq_sig_all = init->sq_sig_all ? 1 : 0;
	q.cap.max_send_wr = init->cap.max_send_wr;
	q.cap.max_recv_wr = init->cap.max_recv_wr;
	q.cap.max_send_sge = init->cap.max_send_sge;
	q.cap.max_recv_sge = init->cap.max_recv_sge;
	q.cap.max_inline_data = init->cap.max_inline_data;
	rc = rpc(c, UROCE_SHM_MSG_CREATE_QP, &q, sizeof(q), -1, &r, sizeof(r), &fd);
	if (rc != 0)
		goto fail;
	rc = map_segment(&pv->seg, fd, (size_t)r.seg_size);
	if (rc != 0)
		goto fail_daemon;
	/* With an SRQ (or none: XRC) there is no receive ring: rq_offset is 0. */
	if (r.sq_offset >= pv->seg.size || r.rq_offset >= pv->seg.size ||
	    (r.rq_offset == 0) != no_rq || (!no_rq && r.rq_offset < r.sq_offset) ||
	    r.db_block >= c->n_db_blocks || r.db_slot >= UROCE_SHM_DB_SLOTS) {
		rc = -EPROTO;
		goto fail_seg;
	}
	rc = uroce_shm_ring_attach(&pv->sq, (uint8_t *)pv->seg.addr + r.sq_offset,
				   (no_rq ? pv->seg.size : r.rq_offset) - r.sq_offset,
				   UROCE_SHM_RING_PRODUCER, 0);
	if (rc == 0 && !no_rq)
		rc = uroce_shm_ring_attach(&pv->rq, (uint8_t *)pv->seg.addr + r.rq_offset,
					   pv->seg.size - r.rq_offset, UROCE_SHM_RING_PRODUCER, 0);
	if (rc != 0)
		goto fail_seg;
	rc = reg_add(c, r.qp_handle, HK_QP, qp);
	if (rc != 0)
		goto fail_seg;
	pthread_mutex_init(&pv->sq_lock, NULL);
	pthread_mutex_init(&pv->rq_lock, NULL);
	db_ref_init(&pv->db, c, r.db_block, r.db_slot);
	qp->context = c;
	qp->pd = pd;
	qp->send_cq = init->send_cq;
	qp->recv_cq = rcq;
	qp->qp_context = init->qp_context;
	qp->handle = r.qp_handle;
	qp->qp_num = r.qp_num;
	qp->qp_type = init->qp_type;
	qp->cap.max_send_wr = r.cap.max_send_wr;
	qp->cap.max_recv_wr = r.cap.max_recv_wr;
	qp->cap.max_send_sge = r.cap.max_send_sge;
	qp->cap.max_recv_sge = r.cap.max_recv_sge;
	qp->cap.max_inline_data = r.cap.max_inline_data;
	qp->priv = pv;
	qp->srq = init->srq;
	init->cap = qp->cap;
	return qp;
fail_seg:
	uroce_shm_segment_unmap(&pv->seg);
fail_daemon:
	rpc_handle(c, UROCE_SHM_MSG_DESTROY_QP, r.qp_handle);
fail:
	free(pv);
	free(qp);
	errno = -rc;
	return NULL;
}

struct uroce_qp *
uroce_create_xrc_tgt_qp(struct uroce_xrcd *xrcd, void *qp_context)
{
	struct uroce_shm_msg_create_qp_req q;
	struct uroce_shm_msg_create_qp_resp r;
	struct uroce_context *c;
	struct uroce_qp *qp;
	struct uroce_qp_priv *pv;
	int rc, fd = -1;

	if (xrcd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	c = xrcd->context;
	qp = calloc(1, sizeof(*qp));
	pv = calloc(1, sizeof(*pv));
	if (!both_allocated(qp, pv))
		return NULL;
	memset(&q, 0, sizeof(q));
	q.pd_handle = xrcd->handle;
	q.send_cq = UROCE_SHM_HANDLE_NONE;
	q.recv_cq = UROCE_SHM_HANDLE_NONE;
	q.srq_handle = UROCE_SHM_HANDLE_NONE;
	q.qp_type = UROCE_QPT_XRC_RECV;
	rc = rpc(c, UROCE_SHM_MSG_CREATE_QP, &q, sizeof(q), -1, &r, sizeof(r), &fd);
	if (rc != 0)
		goto fail;
	/* The segment holds a send ring nothing posts to: it is only mapped,
	 * so that a TGT QP is torn down like any other. */
	rc = map_segment(&pv->seg, fd, (size_t)r.seg_size);
	if (rc != 0)
		goto fail_daemon;
	rc = reg_add(c, r.qp_handle, HK_QP, qp);
	if (rc != 0)
		goto fail_seg;
	pthread_mutex_init(&pv->sq_lock, NULL);
	pthread_mutex_init(&pv->rq_lock, NULL);
	db_ref_init(&pv->db, c, r.db_block < c->n_db_blocks ? r.db_block : 0,
		    r.db_slot < UROCE_SHM_DB_SLOTS ? r.db_slot : 0);
	qp->context = c;
	qp->qp_context = qp_context;
	qp->handle = r.qp_handle;
	qp->qp_num = r.qp_num;
	qp->qp_type = UROCE_QPT_XRC_RECV;
	qp->priv = pv;
	return qp;
fail_seg:
	uroce_shm_segment_unmap(&pv->seg);
fail_daemon:
	rpc_handle(c, UROCE_SHM_MSG_DESTROY_QP, r.qp_handle);
fail:
	free(pv);
	free(qp);
	errno = -rc;
	return NULL;
}

int
uroce_modify_qp(struct uroce_qp *qp, const struct uroce_qp_attr *a, int mask)
{
	struct uroce_shm_msg_modify_qp_req q;

	if (qp == NULL || a == NULL)
		return -EINVAL;
	memset(&q, 0, sizeof(q));
	q.qp_handle = qp->handle;
	q.attr_mask = (uint32_t)mask;
	q.attr.qp_state = a->qp_state;
	q.attr.cur_qp_state = a->cur_qp_state;
	q.attr.path_mtu = a->path_mtu;
	q.attr.qkey = a->qkey;
	q.attr.rq_psn = a->rq_psn;
	q.attr.sq_psn = a->sq_psn;
	q.attr.dest_qp_num = a->dest_qp_num;
	q.attr.qp_access_flags = a->qp_access_flags;
	q.attr.pkey_index = a->pkey_index;
	q.attr.port_num = a->port_num;
	q.attr.max_rd_atomic = a->max_rd_atomic;
	q.attr.max_dest_rd_atomic = a->max_dest_rd_atomic;
	q.attr.min_rnr_timer = a->min_rnr_timer;
	q.attr.timeout = a->timeout;
	q.attr.retry_cnt = a->retry_cnt;
	q.attr.rnr_retry = a->rnr_retry;
	memcpy(q.attr.ah_attr.dgid, a->ah_attr.dgid, 16);
	q.attr.ah_attr.flow_label = a->ah_attr.flow_label;
	q.attr.ah_attr.hop_limit = a->ah_attr.hop_limit;
	q.attr.ah_attr.traffic_class = a->ah_attr.traffic_class;
	q.attr.ah_attr.sl = a->ah_attr.sl;
	q.attr.ah_attr.port_num = a->ah_attr.port_num;
	q.attr.ah_attr.sgid_index = a->ah_attr.sgid_index;
	q.attr.ah_attr.is_global = 1;
	return rpc(qp->context, UROCE_SHM_MSG_MODIFY_QP, &q, sizeof(q), -1, NULL, 0, NULL);
}

int
uroce_query_qp(struct uroce_qp *qp, struct uroce_qp_attr *a, int mask,
	       struct uroce_qp_init_attr *init)
{
	struct uroce_shm_msg_query_qp_req q;
	struct uroce_shm_msg_query_qp_resp r;
	int rc;

	if (qp == NULL || a == NULL)
		return -EINVAL;
	q.qp_handle = qp->handle;
	q.attr_mask = (uint32_t)mask;
	rc = rpc(qp->context, UROCE_SHM_MSG_QUERY_QP, &q, sizeof(q), -1, &r, sizeof(r), NULL);
	if (rc != 0)
		return rc;
	memset(a, 0, sizeof(*a));
	a->qp_state = r.attr.qp_state;
	a->cur_qp_state = r.attr.cur_qp_state;
	a->path_mtu = r.attr.path_mtu;
	a->qkey = r.attr.qkey;
	a->rq_psn = r.attr.rq_psn;
	a->sq_psn = r.attr.sq_psn;
	a->dest_qp_num = r.attr.dest_qp_num;
	a->qp_access_flags = r.attr.qp_access_flags;
	a->pkey_index = r.attr.pkey_index;
	a->port_num = r.attr.port_num;
	a->max_rd_atomic = r.attr.max_rd_atomic;
	a->max_dest_rd_atomic = r.attr.max_dest_rd_atomic;
	a->min_rnr_timer = r.attr.min_rnr_timer;
	a->timeout = r.attr.timeout;
	a->retry_cnt = r.attr.retry_cnt;
	a->rnr_retry = r.attr.rnr_retry;
	a->sq_draining = r.attr.sq_draining;
	memcpy(a->ah_attr.dgid, r.attr.ah_attr.dgid, 16);
	a->ah_attr.flow_label = r.attr.ah_attr.flow_label;
	a->ah_attr.hop_limit = r.attr.ah_attr.hop_limit;
	a->ah_attr.traffic_class = r.attr.ah_attr.traffic_class;
	a->ah_attr.sl = r.attr.ah_attr.sl;
	a->ah_attr.port_num = r.attr.ah_attr.port_num;
	a->ah_attr.sgid_index = r.attr.ah_attr.sgid_index;
	a->cap.max_send_wr = r.cap.max_send_wr;
	a->cap.max_recv_wr = r.cap.max_recv_wr;
	a->cap.max_send_sge = r.cap.max_send_sge;
	a->cap.max_recv_sge = r.cap.max_recv_sge;
	a->cap.max_inline_data = r.cap.max_inline_data;
	if (init != NULL) {
		memset(init, 0, sizeof(*init));
		init->qp_context = qp->qp_context;
		init->send_cq = qp->send_cq;
		init->recv_cq = qp->recv_cq;
		init->srq = qp->srq;
		init->cap = a->cap;
		init->qp_type = r.qp_type;
	}
	return 0;
}

int
uroce_destroy_qp(struct uroce_qp *qp)
{
	int rc;

	if (qp == NULL)
		return -EINVAL;
	rc = destroy_registered(qp->context, qp, &qp->priv->unacked, UROCE_SHM_MSG_DESTROY_QP,
				qp->handle, HK_QP);
	if (rc != 0 && rc != -ENOTCONN)
		return rc;
	uroce_shm_segment_unmap(&qp->priv->seg);
	pthread_mutex_destroy(&qp->priv->sq_lock);
	pthread_mutex_destroy(&qp->priv->rq_lock);
	free(qp->priv);
	free(qp);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Data path                                                                 */
/* ------------------------------------------------------------------------ */

/* One send WR into its slot, with the fill helpers the drop-in uses too. */
static int
wqe_fill(const struct uroce_qp *qp, const struct uroce_send_wr *wr, struct uroce_shm_send_wqe *w)
{
	uint32_t props = uroce_wr_props(wr->opcode);
	int i, rc;

	if (wr->num_sge < 0 || wr->num_sge > (int)qp->cap.max_send_sge ||
	    (wr->num_sge > 0 && wr->sg_list == NULL))
		return -EINVAL;
	rc = uroce_wqe_start(w, qp, wr->wr_id, wr->opcode, wr->send_flags);
	if (rc == 0 && qp->qp_type == UROCE_QPT_XRC_SEND)
		rc = uroce_wqe_set_xrc_srqn(w, wr->xrc_remote_srqn);
	if (rc != 0)
		return rc;
	uroce_wqe_set_imm(w, wr->imm_data);
	if (wr->opcode == UROCE_WR_BIND_MW) {
		if (wr->num_sge != 0 || (wr->send_flags & UROCE_SEND_INLINE))
			return -EINVAL;
		uroce_wqe_set_bind(w, wr->wr.bind_mw.rkey, wr->wr.bind_mw.mr_lkey,
				   wr->wr.bind_mw.addr, wr->wr.bind_mw.length,
				   wr->wr.bind_mw.access);
		return 0;
	}
	if (props & UROCE_WRP_EMPTY_RESP) {
		/* IBA 1.5 A19: operands in the WQE; a daemon before ABI 1.6
		 * knows neither opcode. */
		if (wr->num_sge != 0 || (wr->send_flags & UROCE_SEND_INLINE) ||
		    qp->context->daemon_minor < 6)
			return -EINVAL;
		if (wr->opcode == UROCE_WR_ATOMIC_WRITE)
			uroce_wqe_set_atomic_write(w, wr->wr.atomic_write.remote_addr,
						   wr->wr.atomic_write.rkey,
						   wr->wr.atomic_write.data);
		else
			uroce_wqe_set_flush(w, wr->wr.flush.remote_addr, wr->wr.flush.rkey,
					    wr->wr.flush.length, wr->wr.flush.type,
					    wr->wr.flush.level);
		return 0;
	}
	if (props & UROCE_WRP_ATOMIC)
		uroce_wqe_set_atomic(w, wr->wr.atomic.remote_addr, wr->wr.atomic.rkey,
				     wr->wr.atomic.compare_add, wr->wr.atomic.swap);
	else if (qp->qp_type == UROCE_QPT_UD)
		rc = uroce_wqe_set_ud(w, qp, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
				      wr->wr.ud.remote_qkey);
	else if (props & UROCE_WRP_RDMA)
		uroce_wqe_set_rdma(w, wr->wr.rdma.remote_addr, wr->wr.rdma.rkey);
	if (rc != 0 || !(wr->send_flags & UROCE_SEND_INLINE))
		return rc != 0 ? rc : uroce_wqe_set_sges(w, qp, wr->sg_list, (size_t)wr->num_sge);
	/* Inline: SGE addresses are pointers in this process; the bytes are copied. */
	for (i = 0; i < wr->num_sge && rc == 0; i++)
		rc = uroce_wqe_add_inline(w, qp, (const void *)(uintptr_t)wr->sg_list[i].addr,
					  wr->sg_list[i].length);
	return rc;
}

/* The checks every post makes before it touches a ring: 0, -EINVAL (no QP
 * or no WR), or -ENOTCONN once the daemon is gone. */
static int
post_check(const struct uroce_qp *qp, bool have_wr)
{
	if (qp == NULL || !have_wr)
		return -EINVAL;
	/* An XRC TGT QP has no queues (IBA 1.2 XRC). */
	if (qp->qp_type == UROCE_QPT_XRC_RECV)
		return -EINVAL;
	return qp->context->fatal ? -ENOTCONN : 0;
}

int
uroce_post_send(struct uroce_qp *qp, struct uroce_send_wr *wr, struct uroce_send_wr **bad_wr)
{
	struct uroce_qp_priv *pv;
	uint32_t posted = 0;
	int rc;

	rc = post_check(qp, wr != NULL);
	if (rc != 0) {
		if (bad_wr != NULL)
			*bad_wr = wr;
		return rc;
	}
	pv = qp->priv;
	pthread_mutex_lock(&pv->sq_lock);
	for (; wr != NULL; wr = wr->next) {
		struct uroce_shm_send_wqe *w;

		if (uroce_shm_ring_prod_reserve(&pv->sq, 1) != 1) {
			rc = -ENOMEM;
			break;
		}
		w = uroce_shm_ring_prod_slot(&pv->sq, 0);
		memset(w, 0, offsetof(struct uroce_shm_send_wqe, data));
		rc = wqe_fill(qp, wr, w);
		if (rc != 0)
			break;
		/* Publish each WQE: the release store orders its bytes before prod. */
		uroce_shm_ring_prod_commit(&pv->sq, 1);
		posted++;
	}
	if (posted > 0)
		db_ring(&pv->db);
	pthread_mutex_unlock(&pv->sq_lock);
	if (rc != 0 && bad_wr != NULL)
		*bad_wr = wr;
	return rc;
}

/* The i-th zeroed receive slot of a batch on @p ring, or NULL if full. */
static struct uroce_shm_recv_wqe *
recv_slot(struct uroce_shm_ring *ring, uint32_t i)
{
	struct uroce_shm_recv_wqe *w;

	if (uroce_shm_ring_prod_reserve(ring, i + 1) != i + 1)
		return NULL;
	w = uroce_shm_ring_prod_slot(ring, i);
	/* Not memset(): a constant one of this size is `rep stosq`. */
	uroce_zero_small(w, sizeof(*w));
	return w;
}

/*
 * Post a list of receive WRs to the receive ring @p ring (a QP's RQ or an
 * SRQ), each checked against @p max_sge, under @p lock; ring doorbell
 * @p db once if any was posted. @return 0, -EINVAL (bad num_sge or
 * sg_list) or -ENOMEM (ring full); *bad_wr names the first WR not posted.
 */
static int
post_recv_ring(const struct db_ref *db, struct uroce_shm_ring *ring, pthread_mutex_t *lock,
	       uint32_t max_sge, struct uroce_recv_wr *wr,
	       struct uroce_recv_wr **bad_wr)
{
	uint32_t posted = 0;
	int rc = 0, i;

	pthread_mutex_lock(lock);
	for (; wr != NULL; wr = wr->next) {
		struct uroce_shm_recv_wqe *w;

		if (wr->num_sge < 0 || wr->num_sge > (int)max_sge ||
		    (wr->num_sge > 0 && wr->sg_list == NULL)) {
			rc = -EINVAL;
			break;
		}
		w = recv_slot(ring, 0);
		if (w == NULL) {
			rc = -ENOMEM;
			break;
		}
		w->wr_id = wr->wr_id;
		w->num_sge = (uint32_t)wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			w->sg_list[i].addr = wr->sg_list[i].addr;
			w->sg_list[i].length = wr->sg_list[i].length;
			w->sg_list[i].lkey = wr->sg_list[i].lkey;
		}
		/* Publish each WQE (release store on prod), ring once at the end. */
		uroce_shm_ring_prod_commit(ring, 1);
		posted++;
	}
	if (posted > 0)
		db_ring(db);
	pthread_mutex_unlock(lock);
	if (rc != 0 && bad_wr != NULL)
		*bad_wr = wr;
	return rc;
}

int
uroce_post_recv(struct uroce_qp *qp, struct uroce_recv_wr *wr, struct uroce_recv_wr **bad_wr)
{
	int rc;

	rc = post_check(qp, wr != NULL);
	/* Its receives come from the SRQ (uroce_post_srq_recv); XRC QPs have
	 * no receive queue (IBA 1.2 XRC). */
	if (rc == 0 && (qp->srq != NULL || qp->priv->rq.hdr == NULL))
		rc = -EINVAL;
	if (rc != 0) {
		if (bad_wr != NULL)
			*bad_wr = wr;
		return rc;
	}
	return post_recv_ring(&qp->priv->db, &qp->priv->rq, &qp->priv->rq_lock,
			      qp->cap.max_recv_sge, wr, bad_wr);
}

/* ------------------------------------------------------------------------ */
/* SRQ                                                                       */
/* ------------------------------------------------------------------------ */

/* CREATE_SRQ, or CREATE_XRC_SRQ when @p xrcd is given (its answer carries
 * the SRQ number after CREATE_SRQ's). */
static struct uroce_srq *
srq_create(struct uroce_pd *pd, struct uroce_xrcd *xrcd, struct uroce_cq *cq,
	   struct uroce_srq_init_attr *init)
{
	struct uroce_shm_msg_create_xrc_srq_req q;
	struct uroce_shm_msg_create_xrc_srq_resp xr;
	struct uroce_shm_msg_create_srq_resp r;
	struct uroce_context *c;
	struct uroce_srq_priv *pv;
	struct uroce_srq *srq;
	int rc, fd = -1;

	if (pd == NULL || init == NULL || init->attr.max_wr == 0 ||
	    init->attr.max_wr > UROCE_MAX_QP_WR || init->attr.max_sge > UROCE_MAX_SGE ||
	    (xrcd != NULL && (cq == NULL || xrcd->context != pd->context ||
			      cq->context != pd->context))) {
		errno = EINVAL;
		return NULL;
	}
	c = pd->context;
	if (c->daemon_minor < (xrcd != NULL ? 7 : 1) && !c->fatal) {
		errno = EOPNOTSUPP; /* shm ABI 1.0: an SRQ has no doorbell slot */
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	pv = calloc(1, sizeof(*pv));
	if (!both_allocated(srq, pv))
		return NULL;
	memset(&q, 0, sizeof(q));
	memset(&xr, 0, sizeof(xr));
	q.pd_handle = pd->handle;
	q.max_wr = init->attr.max_wr;
	q.max_sge = init->attr.max_sge;
	q.srq_limit = 0; /* ibv_create_srq ignores srq_limit: arm with modify */
	if (xrcd != NULL) {
		q.xrcd_handle = xrcd->handle;
		q.cq_handle = cq->handle;
		rc = rpc(c, UROCE_SHM_MSG_CREATE_XRC_SRQ, &q, sizeof(q), -1, &xr, sizeof(xr), &fd);
		r = xr.srq;
	} else {
		struct uroce_shm_msg_create_srq_req sq = {
			.pd_handle = q.pd_handle, .max_wr = q.max_wr, .max_sge = q.max_sge,
		};

		rc = rpc(c, UROCE_SHM_MSG_CREATE_SRQ, &sq, sizeof(sq), -1, &r, sizeof(r), &fd);
	}
	if (rc != 0)
		goto fail;
	rc = map_segment(&pv->seg, fd, (size_t)r.seg_size);
	if (rc != 0)
		goto fail_daemon;
	if (r.ring_offset >= pv->seg.size || r.db_block >= c->n_db_blocks ||
	    r.db_slot >= UROCE_SHM_DB_SLOTS ||
	    r.max_wr < init->attr.max_wr || r.max_sge > UROCE_MAX_SGE) {
		rc = -EPROTO;
		goto fail_seg;
	}
	rc = uroce_shm_ring_attach(&pv->ring, (uint8_t *)pv->seg.addr + r.ring_offset,
				   pv->seg.size - r.ring_offset, UROCE_SHM_RING_PRODUCER, 0);
	if (rc == 0)
		rc = reg_add(c, r.srq_handle, HK_SRQ, srq);
	if (rc != 0)
		goto fail_seg;
	pthread_mutex_init(&pv->lock, NULL);
	db_ref_init(&pv->db, c, r.db_block, r.db_slot);
	pv->max_wr = r.max_wr;
	pv->max_sge = r.max_sge;
	srq->context = c;
	srq->pd = pd;
	srq->srq_context = init->srq_context;
	srq->handle = r.srq_handle;
	srq->priv = pv;
	srq->srq_num = xr.srq_num;
	init->attr.max_wr = r.max_wr;
	init->attr.max_sge = r.max_sge;
	init->attr.srq_limit = 0;
	return srq;
fail_seg:
	uroce_shm_segment_unmap(&pv->seg);
fail_daemon:
	rpc_handle(c, UROCE_SHM_MSG_DESTROY_SRQ, r.srq_handle);
fail:
	free(pv);
	free(srq);
	errno = -rc;
	return NULL;
}

struct uroce_srq *
uroce_create_srq(struct uroce_pd *pd, struct uroce_srq_init_attr *init)
{
	return srq_create(pd, NULL, NULL, init);
}

struct uroce_srq *
uroce_create_xrc_srq(struct uroce_pd *pd, struct uroce_xrcd *xrcd, struct uroce_cq *cq,
		     struct uroce_srq_init_attr *init)
{
	if (xrcd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return srq_create(pd, xrcd, cq, init);
}

int
uroce_modify_srq(struct uroce_srq *srq, struct uroce_srq_attr *attr, int attr_mask)
{
	struct uroce_shm_msg_modify_srq_req q;

	if (srq == NULL || attr == NULL || attr_mask <= 0)
		return -EINVAL;
	memset(&q, 0, sizeof(q));
	q.srq_handle = srq->handle;
	q.attr_mask = (uint32_t)attr_mask;
	q.max_wr = attr->max_wr;
	q.srq_limit = attr->srq_limit;
	return rpc(srq->context, UROCE_SHM_MSG_MODIFY_SRQ, &q, sizeof(q), -1, NULL, 0, NULL);
}

int
uroce_query_srq(struct uroce_srq *srq, struct uroce_srq_attr *attr)
{
	struct uroce_shm_msg_handle q;
	struct uroce_shm_msg_query_srq_resp r;
	int rc;

	if (srq == NULL || attr == NULL)
		return -EINVAL;
	memset(&q, 0, sizeof(q));
	q.handle = srq->handle;
	rc = rpc(srq->context, UROCE_SHM_MSG_QUERY_SRQ, &q, sizeof(q), -1, &r, sizeof(r), NULL);
	if (rc != 0)
		return rc;
	attr->max_wr = r.max_wr;
	attr->max_sge = r.max_sge;
	attr->srq_limit = r.srq_limit;
	return 0;
}

int
uroce_destroy_srq(struct uroce_srq *srq)
{
	int rc;

	if (srq == NULL)
		return -EINVAL;
	rc = destroy_registered(srq->context, srq, &srq->priv->unacked,
				UROCE_SHM_MSG_DESTROY_SRQ, srq->handle, HK_SRQ);
	if (rc != 0 && rc != -ENOTCONN)
		return rc; /* -EBUSY: a QP still uses it */
	uroce_shm_segment_unmap(&srq->priv->seg);
	pthread_mutex_destroy(&srq->priv->lock);
	free(srq->priv);
	free(srq);
	return rc;
}

int
uroce_post_srq_recv(struct uroce_srq *srq, struct uroce_recv_wr *wr,
		    struct uroce_recv_wr **bad_wr)
{
	int rc = 0;

	if (srq == NULL || wr == NULL)
		rc = -EINVAL;
	else if (srq->context->fatal)
		rc = -ENOTCONN;
	if (rc != 0) {
		if (bad_wr != NULL)
			*bad_wr = wr;
		return rc;
	}
	return post_recv_ring(&srq->priv->db, &srq->priv->ring, &srq->priv->lock,
			      srq->priv->max_sge, wr, bad_wr);
}

/* ------------------------------------------------------------------------ */
/* Asynchronous events                                                       */
/* ------------------------------------------------------------------------ */

int
uroce_async_fd(const struct uroce_context *c)
{
	return c == NULL ? -EINVAL : c->async_fd;
}

/* The counter of unacknowledged events of what @p ev names, or NULL. */
static unsigned int *
ev_unacked(const struct uroce_async_event *ev)
{
	switch (ev->event_type) {
	case UROCE_ASYNC_CQ_ERR:
		return ev->element.cq != NULL ? &ev->element.cq->unacked : NULL;
	case UROCE_ASYNC_SRQ_ERR:
	case UROCE_ASYNC_SRQ_LIMIT_REACHED:
		return ev->element.srq != NULL ? &ev->element.srq->priv->unacked : NULL;
	case UROCE_ASYNC_DEVICE_FATAL:
	case UROCE_ASYNC_PORT_ACTIVE:
	case UROCE_ASYNC_PORT_ERR:
	case UROCE_ASYNC_LID_CHANGE:
	case UROCE_ASYNC_PKEY_CHANGE:
	case UROCE_ASYNC_SM_CHANGE:
	case UROCE_ASYNC_CLIENT_REREGISTER:
	case UROCE_ASYNC_GID_CHANGE:
		return NULL;
	default:
		return ev->element.qp != NULL ? &ev->element.qp->priv->unacked : NULL;
	}
}

/* Resolve a queued event to a local object (under c->lock). @return false
 * if it names nothing this context still has (destroyed since), or an event
 * type the daemon never sends. */
static bool
ev_resolve(struct uroce_context *c, const struct uroce_shm_msg_async_event *m,
	   struct uroce_async_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->event_type = m->event_type;
	switch (m->event_type) {
	case UROCE_ASYNC_CQ_ERR:
		ev->element.cq = reg_find(c, m->handle, HK_CQ);
		return ev->element.cq != NULL;
	case UROCE_ASYNC_SRQ_ERR:
	case UROCE_ASYNC_SRQ_LIMIT_REACHED:
		ev->element.srq = reg_find(c, m->handle, HK_SRQ);
		return ev->element.srq != NULL;
	case UROCE_ASYNC_QP_FATAL:
	case UROCE_ASYNC_QP_REQ_ERR:
	case UROCE_ASYNC_QP_ACCESS_ERR:
	case UROCE_ASYNC_COMM_EST:
	case UROCE_ASYNC_SQ_DRAINED:
	case UROCE_ASYNC_PATH_MIG:
	case UROCE_ASYNC_PATH_MIG_ERR:
	case UROCE_ASYNC_QP_LAST_WQE_REACHED:
		ev->element.qp = reg_find(c, m->handle, HK_QP);
		return ev->element.qp != NULL;
	default:
		return false;
	}
}

int
uroce_get_async_event(struct uroce_context *c, struct uroce_async_event *ev)
{
	struct uroce_shm_msg_async_event m;

	if (c == NULL || ev == NULL)
		return -EINVAL;
	for (;;) {
		struct pollfd p = {.fd = c->async_fd, .events = POLLIN};
		int fl;

		pthread_mutex_lock(&c->lock);
		drain_events_locked(c);
		while (evq_pop(c, &m)) {
			if (ev_resolve(c, &m, ev)) {
				unsigned int *u = ev_unacked(ev);

				if (u != NULL)
					__atomic_add_fetch(u, 1, __ATOMIC_ACQ_REL);
				pthread_mutex_unlock(&c->lock);
				return 0;
			}
		}
		if (c->fatal) {
			bool first = !c->fatal_reported;

			c->fatal_reported = true;
			pthread_mutex_unlock(&c->lock);
			if (!first)
				return -ENOTCONN;
			memset(ev, 0, sizeof(*ev));
			ev->event_type = UROCE_ASYNC_DEVICE_FATAL;
			return 0;
		}
		pthread_mutex_unlock(&c->lock);
		fl = fcntl(c->async_fd, F_GETFL);
		if (fl >= 0 && (fl & O_NONBLOCK))
			return -EAGAIN;
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return -errno;
	}
}

void
uroce_ack_async_event(struct uroce_async_event *ev)
{
	unsigned int *u;

	if (ev == NULL)
		return;
	u = ev_unacked(ev);
	if (u != NULL && __atomic_load_n(u, __ATOMIC_ACQUIRE) > 0)
		__atomic_sub_fetch(u, 1, __ATOMIC_ACQ_REL);
}

/* ------------------------------------------------------------------------ */
/* Direct ring access (drivers/verbs)                                        */
/* ------------------------------------------------------------------------ */

int
uroce_sq_begin(struct uroce_qp *qp)
{
	int rc = post_check(qp, true);

	if (rc != 0)
		return rc;
	pthread_mutex_lock(&qp->priv->sq_lock);
	return 0;
}

struct uroce_shm_send_wqe *
uroce_sq_slot(struct uroce_qp *qp, uint32_t i)
{
	struct uroce_shm_send_wqe *w;

	if (uroce_shm_ring_prod_reserve(&qp->priv->sq, i + 1) != i + 1)
		return NULL;
	w = uroce_shm_ring_prod_slot(&qp->priv->sq, i);
	memset(w, 0, offsetof(struct uroce_shm_send_wqe, data));
	return w;
}

void
uroce_sq_end(struct uroce_qp *qp, uint32_t n)
{
	struct uroce_qp_priv *pv = qp->priv;

	if (n > 0) {
		/* One release store publishes the whole batch, then one doorbell. */
		uroce_shm_ring_prod_commit(&pv->sq, n);
		db_ring(&pv->db);
	}
	pthread_mutex_unlock(&pv->sq_lock);
}

int
uroce_rq_begin(struct uroce_qp *qp)
{
	int rc = post_check(qp, true);

	if (rc == 0 && (qp->srq != NULL || qp->priv->rq.hdr == NULL))
		rc = -EINVAL; /* its receives come from the SRQ, or it has none (XRC) */
	if (rc != 0)
		return rc;
	pthread_mutex_lock(&qp->priv->rq_lock);
	return 0;
}

struct uroce_shm_recv_wqe *
uroce_rq_slot(struct uroce_qp *qp, uint32_t i)
{
	return recv_slot(&qp->priv->rq, i);
}

void
uroce_rq_end(struct uroce_qp *qp, uint32_t n)
{
	struct uroce_qp_priv *pv = qp->priv;

	if (n > 0) {
		uroce_shm_ring_prod_commit(&pv->rq, n);
		db_ring(&pv->db);
	}
	pthread_mutex_unlock(&pv->rq_lock);
}

int
uroce_srq_begin(struct uroce_srq *srq)
{
	if (srq == NULL)
		return -EINVAL;
	if (srq->context->fatal)
		return -ENOTCONN;
	pthread_mutex_lock(&srq->priv->lock);
	return 0;
}

struct uroce_shm_recv_wqe *
uroce_srq_slot(struct uroce_srq *srq, uint32_t i)
{
	return recv_slot(&srq->priv->ring, i);
}

void
uroce_srq_end(struct uroce_srq *srq, uint32_t n)
{
	struct uroce_srq_priv *pv = srq->priv;

	if (n > 0) {
		uroce_shm_ring_prod_commit(&pv->ring, n);
		db_ring(&pv->db);
	}
	pthread_mutex_unlock(&pv->lock);
}

uint32_t
uroce_srq_max_sge(const struct uroce_srq *srq)
{
	return srq->priv->max_sge;
}

uint32_t
uroce_cq_begin(struct uroce_cq *cq, uint32_t n)
{
	pthread_mutex_lock(&cq->lock);
	return n == 0 ? 0 : uroce_shm_ring_cons_peek(&cq->ring, n);
}

const struct uroce_shm_cqe *
uroce_cq_entry(struct uroce_cq *cq, uint32_t i)
{
	return uroce_shm_ring_cons_slot(&cq->ring, i);
}

int
uroce_cq_end(struct uroce_cq *cq, uint32_t n)
{
	if (n > 0) {
		uroce_shm_ring_cons_release(&cq->ring, n);
		cq->empty_polls = 0;
	}
	pthread_mutex_unlock(&cq->lock);
	if (n > 0)
		return 0;
	if (uroce_shm_ring_is_corrupt(&cq->ring))
		return -EIO;
	if (++cq->empty_polls % LIVENESS_EVERY == 0)
		return daemon_check(cq->context);
	return 0;
}

int
uroce_context_check(struct uroce_context *c)
{
	if (c == NULL)
		return -EINVAL;
	return daemon_gone(c) ? -ENOTCONN : 0;
}
