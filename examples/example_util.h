/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * What every example needs and none of them is about: opening the device
 * (which daemon, which GID), error exits, exact reads and writes on the
 * socketpair two processes use to swap connection details, the RC connect
 * sequence (RESET -> INIT -> RTR -> RTS), and waiting for completions without
 * spinning. Read an example first; come here for the plumbing.
 *
 * Every example has two sides (rc_pingpong: QP a and QP b; rdma_write_read:
 * target and initiator; atomic_counter: server and clients; ud_sendrecv: a
 * and b). By default both use one daemon. Two environment variables put them
 * on two daemons, e.g. two uroced instances joined by memif or af_packet:
 *   UROCE_PEER_SOCKET  socket of the daemon side 1 uses (default: the same
 *                      as side 0: SOCKET_PATH, else $UROCE_SOCKET, else
 *                      /run/uroce/uroced.sock)
 *   UROCE_GID_INDEX    index of the GID each side uses on port 1 (default 0).
 *                      On a DPDK port 0 is the IPv6 link-local GID, 1 the
 *                      IPv4-mapped one, 2 the configured IPv6 address; both
 *                      daemons must have a GID of the same family there.
 */

#ifndef EXAMPLE_UTIL_H
#define EXAMPLE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uroce_verbs.h"

/** Give up on a completion after this long. */
#define EX_WAIT_MS 10000

/** A completion's status, e.g. "RETRY_EXC_ERR (12)", for messages. */
const char *ex_status(uint32_t status);

/** Prefix of every message, e.g. "rdma_write_read[target]". */
extern char ex_role[48];

/** Set ex_role, printf-style. */
void ex_set_role(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** One number on an example's command line, after SOCKET_PATH. */
struct ex_num {
	const char *name;   /* as the usage names it, e.g. "ITERATIONS" */
	uint64_t min, max;
	uint64_t *val;      /* keeps its default unless given */
};

/**
 * The command line every example takes: [SOCKET_PATH] [NUMBER...]. -h or
 * --help prints "usage: @p usage" and the environment the examples read, and
 * exits 0. A SOCKET_PATH starting with '-', a number that is not decimal
 * within its range, or more arguments than @p nums names is a usage error
 * (message, usage on stderr, exit 2). Sets @p nums[i].val for each number
 * given. @return SOCKET_PATH, or NULL when none is given (liburoce's
 * default); *@p given is the count of numbers given.
 */
const char *ex_args(int argc, char **argv, const char *usage, const struct ex_num *nums,
		    int n_nums, int *given);

/** Print "role: what: strerror(err)" and exit 1. */
void ex_die(const char *what, int err) __attribute__((noreturn));

/** liburoce control calls return 0 or -errno: die on an error. */
void ex_ck(int rc, const char *what);

/** Fill @p len bytes with a pattern only @p seed decides (xorshift32), so
 * the receiving side can compute what it should have got. */
void ex_fill(uint8_t *p, size_t len, uint32_t seed);

/** Send or receive exactly @p len bytes; a dead peer is an error (no SIGPIPE). */
void ex_send(int fd, const void *p, size_t len);
void ex_recv(int fd, void *p, size_t len);

/**
 * The GID index both sides use: $UROCE_GID_INDEX, default 0. The value is
 * parsed once; one that is not a decimal number in 0..255 prints an error
 * naming the variable and exits 1.
 */
int ex_gid_index(void);

/**
 * Open the daemon for one side of an example and learn what it needs to
 * connect: side 0 opens @p path, side 1 opens $UROCE_PEER_SOCKET if it is set
 * and not empty, else @p path (NULL: liburoce's default, $UROCE_SOCKET then
 * /run/uroce/uroced.sock). Reads GID ex_gid_index() of port 1 into @p gid and,
 * if @p port is not NULL, port 1's attributes (active_mtu bounds the path MTU).
 * Dies with a message naming the socket on any error, e.g. "open_device:
 * No such file or directory" when no daemon listens there.
 */
struct uroce_context *ex_open(const char *path, int side, uint8_t gid[16],
			      struct uroce_port_attr *port);

/**
 * Create a QP of @p type (UROCE_QPT_RC or UROCE_QPT_UD) whose sends and
 * receives both complete on @p cq, with one SGE per WR each way; with
 * @p sig_all every send WR completes. Dies on an error.
 */
struct uroce_qp *ex_create_qp(struct uroce_pd *pd, struct uroce_cq *cq, int type, bool sig_all,
			      uint32_t max_send_wr, uint32_t max_recv_wr);

/**
 * Release one side's objects in reverse order of making them: @p cq, @p mr,
 * the buffer @p buf (from uroce_alloc_buf()), @p pd, then close @p ctx.
 * Destroy the QPs and AHs on them first. Dies on an error.
 */
void ex_close(struct uroce_context *ctx, struct uroce_pd *pd, void *buf, struct uroce_mr *mr,
	      struct uroce_cq *cq);

/** The far end of an RC connection, and how this side talks to it. */
struct ex_rc_conn {
	uint32_t dest_qpn;
	uint32_t rq_psn;        /* the first PSN the peer sends */
	uint32_t sq_psn;        /* the first PSN this side sends */
	const uint8_t *dgid;    /* the peer's GID, 16 bytes */
	uint8_t path_mtu;       /* IBA MTU enum, 1 (256) .. 5 (4096); both sides
				 * must use the same one, at most either
				 * port's active MTU */
	int access;             /* UROCE_ACCESS_* the peer may use on this QP */
	uint8_t rd_atomic;      /* READs/atomics in flight, each way */
};

/**
 * Move an RC QP from RESET to RTS, aimed at @p c, sending from GID
 * ex_gid_index() (the one ex_open() returned). Timeout 14 (67 ms),
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
