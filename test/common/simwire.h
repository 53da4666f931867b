/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * A simulated wire for tests: two transport engines (side 0 and side 1) in
 * one process, a simulated clock in microseconds, and a link that drops,
 * duplicates, reorders, delays and corrupts packets, deterministically from
 * a seed. Packets are real RoCEv2 frames: the wire adds Ethernet/IP/UDP with
 * uroce_encap_build() and the ICRC with uroce_icrc_fill(), and the receiving
 * side validates them with uroce_parse() before uroce_eng_rx(), exactly
 * as the DPDK shell will. Protocol tests can capture what a side sends
 * instead of delivering it, and inject hand-built packets.
 *
 * Congestion: with bn_rate_mbps set, side 0's packets cross a switch on the
 * way to side 1. Each side-0 QP has a link of its own into the switch
 * (bn_access_mbps), as if it were a host of its own; the switch's egress
 * port to side 1 is the bottleneck: a FIFO served at bn_rate_mbps that marks
 * ECN-capable packets CE as a RED/ECN switch does (never below bn_kmin bytes
 * queued, with a probability rising linearly to bn_pmax_ppm at bn_kmax, every
 * one from bn_kmax up) and drops a packet that does not fit bn_capacity.
 * Time inside the switch is kept in ns; the decisions are drawn from the
 * wire's seeded generator, so a run is repeatable.
 */

#ifndef UROCE_SIMWIRE_H
#define UROCE_SIMWIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "uroce_transport.h"
#include "eng_post.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Link behaviour. Probabilities are in parts per million, per packet. */
struct simwire_conf {
	uint64_t seed;
	uint32_t drop_ppm;
	uint32_t dup_ppm;
	uint32_t reorder_ppm;   /**< packets given an extra random delay */
	uint32_t corrupt_ppm;   /**< one byte flipped: the ICRC check drops it */
	uint32_t delay_us;      /**< one-way delay (0: delivered in the same step) */
	uint32_t reorder_us;    /**< extra delay of a reordered packet, up to (default 50) */
	uint32_t budget;        /**< engine poll budget (0: engine default) */
	bool ipv6;              /**< IPv6 GIDs (default IPv4-mapped 198.18.0.1/2) */
	int drop_only_from;     /**< 0: both ways; 1: only side 0's packets; 2: only side 1's */
	/* The switch on side 0's way to side 1 (see above); bn_rate_mbps 0: none. */
	uint32_t bn_rate_mbps;    /**< egress rate of the bottleneck port */
	uint32_t bn_access_mbps;  /**< each side-0 QP's link into the switch (0: bn_rate_mbps) */
	uint32_t bn_kmin;         /**< bytes queued from which CE marking may happen */
	uint32_t bn_kmax;         /**< bytes queued from which every ECT packet is marked */
	uint32_t bn_pmax_ppm;     /**< marking probability just below bn_kmax */
	uint32_t bn_capacity;     /**< bytes the queue holds; more is tail-dropped */
	/* Zero-copy transmission: engines with zc_min and a tx_send_zc that
	 * reads the payload where it lies into the frame (uroce_frame_wrap_split())
	 * and releases it at the next step, or only on simwire_zc_release() with
	 * zc_hold (a device that is slow to let go). */
	uint32_t zc_min;
	bool zc_hold;
	/*
	 * Faults at the receiving port instead of on the wire, as uroced's
	 * fault_* keys make them (lib/dataplane/fault.c): the packets due at a
	 * side in one step are its receive burst; of each, one draw picks drop,
	 * duplicate (a copy at the end of the same burst) or reorder (held back
	 * until a later burst has delivered at least one packet ahead of it, or
	 * rx_hold_us passed on an idle link; a second reordered packet takes
	 * the first's place). drop_only_from (drops only) and corrupt_ppm (on the
 * wire) keep their meaning.
	 */
	bool rx_faults;
	uint32_t rx_hold_us;      /**< rx_faults: longest hold on an idle link (0: 10 ms) */
	/** Receivers parse as uroced's loopback does: uroce_parse_split() with
	 * late set, so the ICRC of a payload the engine copies out is checked
	 * in that copy (corrupt_ppm then reaches the engine's late check). */
	bool late_icrc;
};

/** Link statistics. */
struct simwire_stats {
	uint64_t sent;
	uint64_t delivered;
	uint64_t dropped;
	uint64_t duplicated;
	uint64_t reordered;
	uint64_t corrupted;
	uint64_t held;          /**< rx_faults: packets held back (reordered) */
	uint64_t bad_parse;     /**< frames uroce_parse() rejected */
	uint64_t late_bad;      /**< late_icrc: packets uroce_eng_rx() found corrupted (-EBADMSG) */
	/* The bottleneck queue (bn_rate_mbps set) */
	uint64_t bn_enqueued;   /**< packets that entered the queue */
	uint64_t bn_marked;     /**< packets it marked CE */
	uint64_t bn_not_ect;    /**< packets above bn_kmin it could not mark (not-ECT) */
	uint64_t bn_dropped;    /**< packets that did not fit */
	uint32_t bn_max_queue;  /**< largest backlog seen, bytes (the arriving packet included) */
};

/** A captured packet: the whole frame and its parsed views. */
struct sim_cap {
	uint8_t *frame;
	uint32_t len;
	struct uroce_frame f;
	struct uroce_pkt p;
	struct uroce_eng_tx_addr addr;
};

struct simwire;

/** Create a wire with two engines. @return NULL on error. */
struct simwire *simwire_create(const struct simwire_conf *conf);
void simwire_destroy(struct simwire *sw);
struct uroce_eng *simwire_engine(struct simwire *sw, int side);
const uint8_t *simwire_gid(const struct simwire *sw, int side);
uint64_t simwire_now(const struct simwire *sw);
void simwire_advance(struct simwire *sw, uint64_t us);
struct simwire_stats simwire_stats(const struct simwire *sw);
/** Bytes in the bottleneck queue now (0 without a bottleneck). */
uint32_t simwire_bn_queue(const struct simwire *sw);
/** Forget bn_max_queue, so that a test can watch a later part of a run. */
void simwire_bn_reset_max(struct simwire *sw);

/** Change loss parameters on the fly. */
void simwire_set_loss(struct simwire *sw, uint32_t drop_ppm, uint32_t dup_ppm,
		      uint32_t reorder_ppm, uint32_t corrupt_ppm);

/** Turn simwire_conf's late_icrc on or off. */
void simwire_set_late_icrc(struct simwire *sw, bool on);

/** How many async events of @p type @p side's engine raised. */
uint32_t simwire_event_count(const struct simwire *sw, int side, enum uroce_event_type type);

/** Capture what @p side sends instead of delivering it. */
void simwire_set_capture(struct simwire *sw, int side, bool on);
uint32_t simwire_ncap(const struct simwire *sw, int side);
const struct sim_cap *simwire_cap(const struct simwire *sw, int side, uint32_t i);
void simwire_cap_clear(struct simwire *sw, int side);
/** Deliver captured packet @p i of @p side to the other side now. */
void simwire_cap_forward(struct simwire *sw, int side, uint32_t i);

/**
 * Build a frame from the other side's GID to @p to_side, carrying the given
 * headers and payload, validate it with uroce_parse() and give it to the
 * engine of @p to_side. @return 0, or -EINVAL if the headers do not build
 * or the frame does not parse.
 */
int simwire_inject(struct simwire *sw, int to_side, const struct uroce_bth_fields *bth,
		   const struct uroce_ext_fields *ext, const void *payload, uint32_t paylen);

/** simwire_inject() with an IP traffic class (DSCP << 2 | ECN; 3 is CE). */
int simwire_inject_tc(struct simwire *sw, int to_side, const struct uroce_bth_fields *bth,
		      const struct uroce_ext_fields *ext, const void *payload, uint32_t paylen,
		      uint8_t tclass);

/** As simwire_inject_tc(), from source GID @p sgid (NULL: the other side's). */
int simwire_inject_from(struct simwire *sw, int to_side, const uint8_t sgid[16],
			const struct uroce_bth_fields *bth, const struct uroce_ext_fields *ext,
			const void *payload, uint32_t paylen, uint8_t tclass);

/** Zero-copy packets of @p side the "device" still holds (zc_hold). */
uint32_t simwire_zc_held(const struct simwire *sw, int side);
/** Let the device release every zero-copy packet of @p side it holds. */
void simwire_zc_release(struct simwire *sw, int side);

/**
 * When something happens next, in µs: the delivery of the first packet in
 * flight or the earliest engine deadline (UINT64_MAX: nothing). A loop that
 * found no work jumps the clock here, never past a packet still on the wire.
 */
uint64_t simwire_next_event(const struct simwire *sw);

/** One round: poll both engines, deliver every packet due. @return work done. */
unsigned int simwire_step(struct simwire *sw);

/**
 * Step until @p done returns true, jumping the clock to the next event when
 * idle. @return true if done, false if @p max_us of simulated time passed
 * or nothing was left to happen.
 */
bool simwire_run_until(struct simwire *sw, bool (*done)(void *arg), void *arg, uint64_t max_us);

/** Step until no packet is in flight and neither engine is busy (no clock jumps to timers). */
void simwire_settle(struct simwire *sw);

/* ------------------------------------------------------------------------ */
/* Test helpers: objects and connected QP pairs                              */
/* ------------------------------------------------------------------------ */

/** QP parameters for sim_connect(). Zero fields take the defaults noted. */
struct sim_qp_opts {
	enum uroce_qp_type type;   /**< default RC */
	enum uroce_mtu mtu;        /**< default 1024 */
	uint32_t psn0;             /**< sq_psn of side 0 (= rq_psn of side 1) */
	uint32_t psn1;
	uint8_t timeout;           /**< default 10 (4.2 ms) */
	uint8_t retry_cnt;         /**< default 7 */
	uint8_t rnr_retry;         /**< default 7 */
	uint8_t min_rnr_timer;     /**< default 1 (10 µs) */
	uint8_t max_rd_atomic;     /**< default 16 */
	uint8_t max_dest_rd_atomic; /**< default 16 */
	int access;                /**< default all remote rights */
	uint32_t qkey;             /**< UD, default 0x11111111 */
	bool explicit_zero;        /**< take timeout/retry/rnr fields as given, even 0 */
};

/** One side's objects for a connected pair. */
struct sim_side {
	struct uroce_eng_pd *pd;
	struct uroce_eng_cq *scq;
	struct uroce_eng_cq *rcq;
	struct uroce_eng_qp *qp;
};

/** Create PD/CQs/QP on both sides and bring the pair to RTS. @return 0 or -errno. */
int sim_pair_create(struct simwire *sw, struct sim_side s[2], const struct sim_qp_opts *o,
		    uint32_t max_wr, int cqe);
/** Create a QP on @p s (PD/CQs already there). */
struct uroce_eng_qp *sim_qp_create(struct sim_side *s, enum uroce_qp_type t, uint32_t max_wr);
/** Bring @p q, a QP of side @p side, to RTS pointed at @p peer (the PSNs of
 * its side in @p o; a UD QP takes only its Q_Key). @return 0 or -errno. */
int sim_qp_up(struct simwire *sw, struct uroce_eng_qp *q, int side, struct uroce_eng_qp *peer,
	      const struct sim_qp_opts *o);
/** Bring @p a and @p b to RTS pointed at each other. */
int sim_connect(struct simwire *sw, struct uroce_eng_qp *a, struct uroce_eng_qp *b,
		const struct sim_qp_opts *o);
void sim_pair_destroy(struct sim_side s[2]);

/**
 * Run the wire until @p n completions have been polled from @p cq into
 * @p wc (or @p max_us simulated µs passed). @return completions collected.
 */
int sim_wait_cq(struct simwire *sw, struct uroce_eng_cq *cq, struct uroce_eng_wc *wc, int n,
		uint64_t max_us);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_SIMWIRE_H */
