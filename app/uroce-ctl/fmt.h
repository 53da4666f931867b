/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * Pure formatting helpers of uroce-ctl's daemon subcommands (devices, gids,
 * qps, clients, counters): names of the verbs enums as `ibv_devinfo` and
 * `rdma resource show` print them, GIDs as text, and a column table that
 * sizes each column to its widest cell. Nothing here talks to the daemon,
 * so all of it is unit-tested on its own (test/unit/ctl/test_fmt.c).
 */

#ifndef UROCE_CTL_FMT_H
#define UROCE_CTL_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR", or "?" (enum uroce_qp_state). */
const char *fmt_qp_state(unsigned int state);

/** "RC", "UC", "UD", or "?" (enum uroce_qp_type). */
const char *fmt_qp_type(unsigned int type);

/** Bytes of an IBA MTU enum (1 -> 256 ... 5 -> 4096), 0 if not a valid code. */
unsigned int fmt_mtu_bytes(unsigned int mtu);

/** ibv_port_state name: "PORT_DOWN", "PORT_INIT", "PORT_ARMED", "PORT_ACTIVE", ... or "?". */
const char *fmt_port_state(unsigned int state);

/** Link layer name: "InfiniBand" (1), "Ethernet" (2), or "Unspecified". */
const char *fmt_link_layer(unsigned int ll);

/**
 * A GID as text: an IPv4-mapped GID as "::ffff:a.b.c.d", any other as an
 * RFC 5952 IPv6 address (inet_ntop).
 *
 * @return 0, or -ENOSPC if @p cap is below INET6_ADDRSTRLEN.
 */
int fmt_gid(const uint8_t gid[16], char *buf, size_t cap);

/** True if all 16 bytes are zero (an empty GID table slot). */
int fmt_gid_is_zero(const uint8_t gid[16]);

/** Most columns a table may have. */
#define TBL_MAX_COLS 16

/**
 * A table built cell by cell, then printed with every column as wide as its
 * widest cell (header included), two spaces between columns, no trailing
 * blanks. Errors are sticky, as in struct json.
 */
struct tbl {
	unsigned int ncols;
	const char *head[TBL_MAX_COLS];
	size_t width[TBL_MAX_COLS];
	char **cells;   /**< row-major, ncols per row */
	size_t ncells;
	size_t cap;
	int err;        /**< first error: 0, -EINVAL or -ENOMEM */
};

/** Start a table with @p ncols columns named by @p head (strings not copied). */
void tbl_init(struct tbl *t, unsigned int ncols, const char *const *head);

/** Append one cell (printf format); a row is complete after ncols cells. */
void tbl_cell(struct tbl *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Rows completed so far. */
size_t tbl_rows(const struct tbl *t);

/**
 * Print the header line and every row.
 *
 * @return 0, the sticky error, -EINVAL if the last row is incomplete, or -EIO.
 */
int tbl_print(const struct tbl *t, FILE *out);

/** Free every cell. */
void tbl_free(struct tbl *t);

#endif /* UROCE_CTL_FMT_H */
