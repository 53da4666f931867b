/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The worker side of lib/daemon, on each worker thread: rings to engine and
 * back (worker.c; the load generators' steps are gen_worker.c's). It hears from the
 * control thread only through core.h's mailbox and answers through its
 * event ring.
 */

#ifndef DAEMON_WORKER_H
#define DAEMON_WORKER_H

#include "core.h"

/* worker.c */
struct dworker *worker_create(struct uroce_daemon *d, unsigned int idx,
			      const struct uroce_daemon_conf *conf);
void worker_destroy(struct dworker *w);
unsigned int worker_poll(struct dworker *w);
/* The worker's time in µs: its port's or shell's clock, else this round's. */
uint64_t worker_now_us(const struct dworker *w);
int worker_rx(struct dworker *w, const struct uroce_pkt *pkt, const struct uroce_frame *frame);
/* Take the worker's events into @p out (at most @p max). Control thread. */
unsigned int worker_events(struct dworker *w, struct devent *out, unsigned int max);
/* Take the worker's next record (a refused request or a failed requester)
 * into @p out. Control thread. @return false if none. */
bool worker_reject(struct dworker *w, struct dreject *out);
/* Sleep at most @p us unless work is there (doorbells, mailbox, frames from
 * other workers, MADs to send, or @p more says so). @return true if it slept. */
bool worker_sleep(struct dworker *w, uint64_t us, bool (*more)(void *ctx), void *ctx);

#endif /* DAEMON_WORKER_H */
