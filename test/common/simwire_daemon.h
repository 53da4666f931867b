/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The simulated lossy wire of simwire.h, put under two daemon cores
 * (lib/daemon) instead of two bare engines. Each side is a wire port
 * (struct uroce_daemon_port_ops): what a daemon sends is wrapped in
 * Ethernet/IP/UDP with uroce_encap_build(), gets its ICRC from
 * uroce_icrc_fill(), and then is dropped, duplicated, delayed, reordered or
 * corrupted, deterministically from a seed, before the receiving side checks
 * it with uroce_parse() (frame, ICRC, BTH) and gives it to
 * uroce_daemon_rx(), as uroced's dataplane does. Frames uroce_parse()
 * rejects are counted by reason and never reach the daemon.
 *
 * The daemons serve real liburoce client processes, so this wire runs on
 * real time (CLOCK_MONOTONIC µs), not on simwire's simulated clock: the seed
 * fixes the fate of the n-th frame sent (drop, corrupt, delay...), but which
 * frame is the n-th depends on scheduling. Everything runs on the thread that
 * calls simwire_daemon_step(), which also polls both daemons.
 * SIMWIRE_TRACE=1 in the environment prints every frame's fate to stderr.
 */

#ifndef UROCE_SIMWIRE_DAEMON_H
#define UROCE_SIMWIRE_DAEMON_H

#include <stdint.h>

#include "uroce_daemon.h"
#include "uroce_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Link behaviour. Probabilities are in parts per million, per frame. */
struct simwire_daemon_conf {
	uint64_t seed;
	uint32_t drop_ppm;
	uint32_t dup_ppm;
	uint32_t reorder_ppm;   /**< frames given an extra random delay */
	uint32_t corrupt_ppm;   /**< one ICRC-covered byte flipped: the receiver drops it */
	uint32_t delay_us;      /**< one-way delay (0: delivered at the next step) */
	uint32_t reorder_us;    /**< extra delay of a reordered frame, up to (0: 300) */
	/**
	 * Zero-copy transmission (port tx_send_zc): the payload is read when
	 * the frame is sent, and the "device" lets go of it zc_hold_steps
	 * simwire_daemon_step() calls later (0: at the next one). Give the
	 * daemons a zc_min for it to be used.
	 */
	bool zc;
	uint32_t zc_hold_steps;
};

/** Link statistics. */
struct simwire_daemon_stats {
	uint64_t sent;          /**< frames the daemons gave to their ports */
	uint64_t delivered;     /**< frames given to uroce_daemon_rx() */
	uint64_t dropped;
	uint64_t duplicated;
	uint64_t reordered;
	uint64_t corrupted;     /**< frames with a byte flipped (a duplicate of one counts too) */
	uint64_t corrupted_arrived; /**< corrupted frames that reached the receiving port */
	uint64_t unroutable;    /**< no other side owns the destination GID, or no room to
				     encapsulate: dropped */
	uint64_t alloc_fail;    /**< tx_alloc or duplicate copies that found no memory */
	uint64_t rejected;      /**< frames uroce_parse() refused at the receiving port */
	uint64_t rejected_by[UROCE_WIRE_ERR_MAX]; /**< the same, by enum uroce_wire_err */
	uint64_t resolve_asked; /**< port resolve() calls (all answered "known") */
	/** Side i asked for the other side's GID before it sent its first frame. */
	bool asked_before_sending[2];
};

struct simwire_daemon;

/** Create the wire (no daemon attached yet). @return NULL with errno ENOMEM. */
struct simwire_daemon *simwire_daemon_create(const struct simwire_daemon_conf *conf);

/** Free the wire and every frame still in flight. NULL is a no-op. */
void simwire_daemon_destroy(struct simwire_daemon *w);

/** The port ops to put in uroce_daemon_conf.port_ops (now_us is NULL: CLOCK_MONOTONIC). */
const struct uroce_daemon_port_ops *simwire_daemon_port_ops(void);

/** The port context of @p side (0 or 1) for uroce_daemon_conf.port_ctx. @return NULL if bad. */
void *simwire_daemon_port_ctx(struct simwire_daemon *w, int side);

/**
 * Attach the daemon created with side @p side's port, and the GID its port
 * answers to (frames for that GID are delivered to it).
 * @return 0, or -EINVAL (bad side, NULL daemon or GID).
 */
int simwire_daemon_attach(struct simwire_daemon *w, int side, struct uroce_daemon *d,
			  const uint8_t gid[16]);

/**
 * One round: poll both daemons, then deliver the frames that are due, at most
 * one receive burst (16): call it in a loop.
 * @return work done (0 when idle).
 */
unsigned int simwire_daemon_step(struct simwire_daemon *w);

/** Frames in flight (sent, not yet delivered or rejected). */
uint32_t simwire_daemon_in_flight(const struct simwire_daemon *w);
/** Zero-copy packets whose payload the device has not let go of yet. */
uint32_t simwire_daemon_zc_held(const struct simwire_daemon *w);

/** Change loss parameters on the fly. */
void simwire_daemon_set_loss(struct simwire_daemon *w, uint32_t drop_ppm, uint32_t dup_ppm,
			     uint32_t reorder_ppm, uint32_t corrupt_ppm);

/** Copy the link statistics. */
struct simwire_daemon_stats simwire_daemon_stats(const struct simwire_daemon *w);

/** The wire's clock: CLOCK_MONOTONIC in µs, the daemons' default clock. */
uint64_t simwire_daemon_now_us(void);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_SIMWIRE_DAEMON_H */
