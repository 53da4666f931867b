/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * Compile-time limits, in one place. Device attributes reported to users are
 * derived from these, so what uroce advertises is what it enforces.
 */

#ifndef UROCE_LIMITS_H
#define UROCE_LIMITS_H

/** Largest path MTU (IBA MTU enum 5). */
#define UROCE_MAX_PMTU 4096
/** Smallest path MTU (IBA MTU enum 1). */
#define UROCE_MIN_PMTU 256

/** Largest message, as verbs max_msg_sz (2^31, as IBA allows). */
#define UROCE_MAX_MSG_SIZE (1u << 31)

/** Queue pairs per engine, QPN 0 and 1 (SMI/GSI) included. */
#define UROCE_MAX_QP 4096
/** XRC SRQs per engine (their numbers are engine bits | index, index >= 1). */
#define UROCE_MAX_XRC_SRQ 1024
/** First QPN handed out for user QPs (rxe and ConnectX both start above 1). */
#define UROCE_FIRST_USER_QPN 0x11
/** Work requests per send or receive queue. */
#define UROCE_MAX_QP_WR 4096
/** Scatter/gather entries per work request. */
#define UROCE_MAX_SGE 8
/** Bytes of inline data per send WR. */
#define UROCE_MAX_INLINE 256
/** Completion queue entries per CQ. */
#define UROCE_MAX_CQE 65536
/** Memory regions per engine. */
#define UROCE_MAX_MR 8192
/** Outstanding RDMA READ/ATOMIC per QP, as initiator (max_qp_init_rd_atom). */
#define UROCE_MAX_RD_ATOMIC 16
/** Outstanding RDMA READ/ATOMIC per QP, as target (max_qp_rd_atom). */
#define UROCE_MAX_DEST_RD_ATOMIC 16

/** Request an ACK at least every this many packets of a long message. */
#define UROCE_ACKREQ_INTERVAL 32
/** Packets the requester may have in flight per QP before waiting for ACKs. */
#define UROCE_MAX_INFLIGHT_PKTS 256

/** A timer handled this many µs after its deadline was late because the
 * host did not run the engine (descheduled, stopped): see comp_timers(). */
#define UROCE_HOST_STALL_US 1000
/** Local ACK timeouts in a row a QP may put down to host stalls before
 * they count against retry_cnt like any other. */
#define UROCE_HOST_STALL_REARMS 8

#endif /* UROCE_LIMITS_H */
