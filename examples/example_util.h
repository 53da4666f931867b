/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * What every example needs and none of them is about: error exits, exact
 * reads and writes on the socketpair two processes use to swap connection
 * details, the RC connect sequence (RESET -> INIT -> RTR -> RTS), and waiting
 * for completions without spinning. Read an example first; come here for the
 * plumbing.
 */

#ifndef EXAMPLE_UTIL_H
#define EXAMPLE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "uroce_verbs.h"

/** Give up on a completion after this long. */
#define EX_WAIT_MS 10000

/** Prefix of every message, e.g. "rdma_write_read[target]". */
extern char ex_role[48];

/** Set ex_role, printf-style. */
void ex_set_role(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Print "role: what: strerror(err)" and exit 1. */
void ex_die(const char *what, int err) __attribute__((noreturn));

/** liburoce control calls return 0 or -errno: die on an error. */
void ex_ck(int rc, const char *what);

/** Send or receive exactly @p len bytes; a dead peer is an error (no SIGPIPE). */
void ex_send(int fd, const void *p, size_t len);
void ex_recv(int fd, void *p, size_t len);

/** The far end of an RC connection, and how this side talks to it. */
struct ex_rc_conn {
	uint32_t dest_qpn;
	uint32_t rq_psn;        /* the first PSN the peer sends */
	uint32_t sq_psn;        /* the first PSN this side sends */
	const uint8_t *dgid;    /* the peer's GID, 16 bytes */
	uint8_t path_mtu;       /* IBA MTU enum, 1 (256) .. 5 (4096) */
	int access;             /* UROCE_ACCESS_* the peer may use on this QP */
	uint8_t rd_atomic;      /* READs/atomics in flight, each way */
};

/**
 * Move an RC QP from RESET to RTS, aimed at @p c. Timeout 14 (67 ms),
 * retry_cnt 7 (seven retries), rnr_retry 7 (forever), min_rnr_timer 1
 * (0.01 ms, IBA table 45). Dies on an error.
 */
void ex_connect_rc(struct uroce_qp *qp, const struct ex_rc_conn *c);

/**
 * Take up to @p max completions, at least one. When there are none, arm the
 * CQ, poll once more (a completion that arrived before the arm raises no
 * event), then sleep on the CQ's eventfd. Dies after EX_WAIT_MS.
 */
int ex_wait_wcs(struct uroce_cq *cq, int max, struct uroce_wc *wc);

#endif /* EXAMPLE_UTIL_H */
