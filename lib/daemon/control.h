/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The control side of lib/daemon, on the control thread: the requests of the
 * control protocol (control.c: resources; introspect.c: what uroce-ctl
 * reads; gen_control.c: the load generators), events to clients, and segment
 * lifetimes. It reaches the workers only through core.h's mailbox.
 */

#ifndef DAEMON_CONTROL_H
#define DAEMON_CONTROL_H

#include "core.h"

/* A reply being built: the message, its body, and a descriptor to pass. */
struct reply {
	uint8_t buf[UROCE_SHM_MSG_MAX];
	void *body;
	int fd;                         /* descriptor to pass with a successful reply */
};

/* control.c: one function per resource request type. @return 0 or -errno;
 * -EOPNOTSUPP for a type that is not a resource request. */
int control_dispatch(struct uroce_daemon *d, struct session *s, uint16_t type, const void *body,
		     int *fd, struct reply *r);
/* Tear a session's objects down (it hung up, or the daemon stops). */
void control_session_free(struct uroce_daemon *d, struct session *s);
/* The device's node GUID (QUERY_DEVICE, and the CM's CA GUID). */
uint64_t daemon_node_guid(const struct uroce_daemon *d);
/* Tell a client about an event on one of its objects. */
void session_event(struct uroce_daemon *d, struct session *s, uint32_t type, uint32_t handle);
/* Unmap a segment once no zero-copy packet reads it. */
void seg_put(struct uroce_daemon *d, struct dseg *g);
/* Unmap the graveyard's segments that are free now. @return how many. */
unsigned int seg_graveyard_sweep(struct uroce_daemon *d);

/* introspect.c: LIST_SESSIONS, LIST_QPS, QUERY_COUNTERS, LIST_WORKERS.
 * @return 0 or -errno; -EOPNOTSUPP for another type. */
int introspect_dispatch(struct uroce_daemon *d, struct session *s, uint16_t type,
			const void *body, struct reply *r);

#endif /* DAEMON_CONTROL_H */
