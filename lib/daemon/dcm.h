/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The daemon's connection manager, private to lib/daemon (doc/rdmacm.md):
 *
 *  - gsi.c: QP1, the General Services Interface, a UD QP of worker 0's
 *    engine (QPN 1) with receive and send buffers in a daemon MR. Worker 0
 *    moves received MADs to the control thread and sends the MADs the
 *    control thread queues, through two single-producer rings; nothing is
 *    shared otherwise. The control thread sorts MADs by class: the CM's go
 *    to the CM, a Get or Set of any other class or method is answered
 *    "unsupported" as IBA 13.4.7 asks, the rest is dropped; all counted.
 *  - cmctl.c: the rdma_cm layer of lib/cm on the control thread (timers on
 *    its loop), and the CM_* control messages of ABI 1.4: event channels
 *    (a socket end the client passed), ids, and CM_EVENTs written to them.
 */

#ifndef DCM_H
#define DCM_H

#include <stdint.h>

#include "uroce_cm.h"

struct uroce_daemon;
struct session;
struct dworker;
struct reply;
struct dgsi;
struct dcm;

/* GSI counters, defined once (expanded below and in gsi.c). */
#define DCM_GSI_COUNTERS(X) \
	X(GSI_RX, "gsi_rx_mads", "MADs received on QP1") \
	X(GSI_RX_BAD, "gsi_rx_bad", "QP1 receives dropped: not one 256-byte MAD, or in error") \
	X(GSI_RX_DROPPED, "gsi_rx_dropped", "MADs dropped: the control thread was too far behind") \
	X(GSI_TX, "gsi_tx_mads", "MADs sent from QP1") \
	X(GSI_TX_DROPPED, "gsi_tx_dropped", "MADs not sent: QP1's queue was full") \
	X(MAD_BAD_VERSION, "mad_bad_base_version", "MADs dropped: base version not 1") \
	X(MAD_UNSUPPORTED_ANSWERED, "mad_unsupported_answered", \
	  "Get/Set MADs of a class or method uroce does not serve, answered unsupported") \
	X(MAD_UNSUPPORTED_DROPPED, "mad_unsupported_dropped", \
	  "MADs of a class or method uroce does not serve that need no answer") \
	X(CM_EVENTS, "cm_events", "rdma_cm events written to event channels") \
	X(CM_EVENTS_LOST, "cm_events_lost", "rdma_cm events of failed channels (not delivered)") \
	X(CM_IDS, "cm_ids", "gauge: CM connection ids alive (time wait included)") \
	X(CM_RDMA_IDS, "cm_rdma_ids", "gauge: rdma_cm ids alive (clients' and listeners' requests)")

enum dcm_counter {
#define DCM_X(sym, name, desc) DCM_CNT_##sym,
	DCM_GSI_COUNTERS(DCM_X)
#undef DCM_X
	DCM_CNT_MAX
};

/* gsi.c: QP1 on worker 0 */
/* Create QP1 on @p w (worker 0, before any worker runs). @return NULL, errno set. */
struct dgsi *gsi_create(struct uroce_daemon *d, struct dworker *w);
void gsi_destroy(struct dgsi *g);
/* Worker 0's turn: repost receives, send queued MADs. @return work done. */
unsigned int gsi_worker_poll(struct dgsi *g);
/* MADs queued for the worker to send (its last look before it sleeps). */
bool gsi_pending(struct dgsi *g);
/*
 * Control thread: take up to @p max received MADs, each given to @p fn with
 * the address it came from (sgid ours, dgid the peer's). @return how many.
 */
unsigned int gsi_take(struct dgsi *g, unsigned int max,
		      void (*fn)(void *arg, const struct uroce_cm_addr *from, const uint8_t *mad),
		      void *arg);
/* Control thread: queue a MAD for QP1 to send. @return 0, -ENOBUFS (full). */
int gsi_send(struct dgsi *g, const struct uroce_cm_addr *to, const uint8_t *mad);
/* Add the GSI's counters (worker side) into @p cnt (DCM_CNT_*). */
void gsi_counters(const struct dgsi *g, uint64_t *cnt);

/* cmctl.c: the CM on the control thread */
int dcm_create(struct uroce_daemon *d, const struct uroce_daemon_conf *conf);
void dcm_destroy(struct uroce_daemon *d);
/* The control thread's CM round: MADs in, timers, channel backlogs. */
unsigned int dcm_control_poll(struct uroce_daemon *d);
/* Worker @p w's part (QP1 lives on worker 0). */
unsigned int dcm_worker_poll(struct uroce_daemon *d, struct dworker *w);
/* Work queued for the worker by the CM (its last look before it sleeps). */
bool dcm_worker_pending(struct uroce_daemon *d, struct dworker *w);
/* A CM_* request of the control protocol. @return 0 or -errno. */
int dcm_dispatch(struct uroce_daemon *d, struct session *s, uint16_t type, const void *body,
		 int *fd, struct reply *r);
/* The session's ids and channels go (it hung up, or the daemon stops). */
void dcm_session_free(struct uroce_daemon *d, struct session *s);

#endif /* DCM_H */
