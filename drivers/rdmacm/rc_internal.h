/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * drivers/rdmacm: a drop-in librdmacm.so.1 (the rdma-core ABI of the
 * installed <rdma/rdma_cma.h>) over liburoce and the drop-in libibverbs.so.1,
 * so that unmodified rdma_cm programs (rping, ucmatose, udaddy, rdma_server
 * and rdma_client, perftest -R, qperf -cm1, UCX) connect through uroced's
 * connection manager (doc/rdmacm.md).
 *
 * The kernel's part of rdma_cm is uroced's: every id lives in the daemon of
 * a device (a session per device, CM_* requests of shm ABI 1.4 through
 * uroce_ctl_call()), and events come back on event channels. The library's
 * part is librdmacm's: the verbs objects (QPs, CQs, PDs on the drop-in's
 * ibv_context), the QP moves at CONNECT_RESPONSE and rdma_accept() with
 * the attributes the daemon hands out, synchronous ids, rdma_create_ep(),
 * rdma_getaddrinfo().
 *
 * An event channel's fd is an epoll set: one socket per device the channel
 * has ids on (the daemon writes CM_EVENTs into its other end) and an
 * eventfd for events the library holds itself (an id migrated to another
 * channel, a device that went away); it is readable exactly while
 * rdma_get_cm_event() has something, and honours O_NONBLOCK.
 */

#ifndef RC_INTERNAL_H
#define RC_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "uroce_shm.h"
#include "uroce_verbs.h"

#define RC_EXPORT __attribute__((visibility("default")))

/* Devices: one per socket of $UROCE_SOCKET, as the drop-in libibverbs. */
#define RC_MAX_DEVICES 8

/* librdmacm's conventions: -1 and errno. */
static inline int
rc_err(int e)
{
	errno = e;
	return -1;
}

/* A device: its verbs context (the drop-in's) and its daemon session. */
struct rc_dev {
	int index;                      /* ibv_get_device_index() */
	struct ibv_device *ibdev;
	struct ibv_context *verbs;      /* what id->verbs and rdma_get_devices() give */
	struct ibv_pd *pd;              /* the default PD of ids on it */
	struct uroce_context *ctl;      /* CM requests */
	char sock_path[108];
	uint64_t guid;
	uint8_t max_init_depth;         /* max_qp_init_rd_atom */
	uint8_t max_resp_res;           /* max_qp_rd_atom */
	int max_qpsize;
	bool open;                      /* verbs, pd and ctl are there */
	bool dead;                      /* its daemon went away */
};

/* A daemon id of an rdma_cm_id on one device. */
struct rc_bind {
	struct rc_dev *dev;
	uint32_t handle;
};

struct rc_event;

/* An event channel. */
struct rc_chan {
	struct rdma_event_channel ch;   /* fd: the epoll set */
	int evfd;                       /* readable while ready holds events */
	pthread_mutex_t lock;
	struct {
		int fd;                 /* our end, -1: not open on that device */
		uint32_t handle;        /* the daemon's channel */
		bool dead;
	} dev[RC_MAX_DEVICES];
	struct rc_event *ready;         /* processed events not yet handed out */
	struct rc_event **ready_tail;
};

/* An id: the public struct first (librdmacm's programs cast nothing, but
 * the library finds its part with container_of). */
struct rc_id {
	struct rdma_cm_id id;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct rc_bind b[RC_MAX_DEVICES]; /* more than one: a wildcard bind or listen */
	unsigned int nb;
	bool sync;                      /* its own channel (rdma_create_id(NULL, ...)) */
	bool connect_error;             /* the connect failed here: later REJ/DISCONNECTED dropped */
	bool destroying;
	unsigned int events_out;        /* handed out, not acknowledged */
	unsigned int busy;              /* calls in flight whose events must wait (rc_busy) */
	uint8_t initiator_depth;        /* of the connection (request, or what we asked) */
	uint8_t responder_resources;
	/* options kept for daemon ids made later */
	uint8_t tos;
	bool tos_set;
	int reuseaddr;
	int afonly;
	uint8_t ack_timeout;
	/* rdma_create_ep() */
	struct ibv_qp_init_attr *qp_init_attr;
	void *connect;
	uint8_t connect_len;
	struct rc_id *next;             /* every id (rc_ids) */
};

/* An event handed to the application. */
struct rc_event {
	struct rdma_cm_event ev;
	struct rc_event *next;
	struct rc_id *owner;            /* acknowledged against it */
	uint8_t private_data[UROCE_SHM_CM_PDATA_MAX];
};

/* device.c */
/* $UROCE_VERBS_TRACE (uroce-run --trace): CM requests and events on stderr. */
extern int rc_trace_on;
void rc_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define RC_TRACE(...) do { if (rc_trace_on) rc_trace(__VA_ARGS__); } while (0)
int rc_init(void);
int rc_ndevices(void);
struct rc_dev *rc_device(int i);
/* Open the device's verbs context, default PD and daemon session. @return 0 or errno. */
int rc_dev_open(struct rc_dev *d);
/* A CM request on @p d's session. @return 0 or a positive errno. */
int rc_call(struct rc_dev *d, uint16_t type, const void *req, size_t req_len, void *resp,
	    size_t resp_len, int fd_in);

/* event.c */
int rc_chan_attach(struct rc_chan *c, struct rc_dev *d);
uint32_t rc_chan_handle(struct rc_chan *c, struct rc_dev *d);
struct rc_chan *rc_chan_new(void);
void rc_chan_free(struct rc_chan *c);
void rc_chan_push(struct rc_chan *c, struct rc_event *e);
void rc_chan_drop_id(struct rc_chan *c, struct rc_id *x);
int rc_complete(struct rc_id *x);

/* id.c */
extern pthread_mutex_t rc_lock;
extern struct rc_id *rc_ids;
struct rc_id *rc_id_find(struct rc_dev *d, uint32_t handle);
struct rc_id *rc_id_alloc(struct rdma_event_channel *ch, void *context, enum rdma_port_space ps,
			  enum ibv_qp_type qpt);
int rc_id_create(struct rdma_event_channel *ch, struct rdma_cm_id **idp, void *context,
		 enum rdma_port_space ps, enum ibv_qp_type qpt);
void rc_id_set_dev(struct rc_id *x, struct rc_dev *d);
/*
 * Around a request whose event may come back before the call has finished
 * with the id (rdma_resolve_addr picks the id's device after the daemon's
 * answer, while another thread may already read ADDR_RESOLVED and call
 * rdma_resolve_route): an event for a busy id waits until it is not.
 */
void rc_busy(struct rc_id *x, bool on);
void rc_wait_idle(struct rc_id *x);
void rc_route_set(struct rc_id *x, const struct uroce_shm_cm_route *r);
int rc_modify_qp_rtr(struct rc_id *x, uint8_t resp_res);
int rc_modify_qp_rts(struct rc_id *x, uint8_t init_depth);
int rc_modify_qp_err(struct rc_id *x);
int rc_establish(struct rc_id *x);

static inline struct rc_id *
rc_id_of(struct rdma_cm_id *id)
{
	return (struct rc_id *)(void *)id;
}

static inline struct rc_chan *
rc_chan_of(struct rdma_event_channel *ch)
{
	return (struct rc_chan *)(void *)ch;
}

#endif /* RC_INTERNAL_H */
