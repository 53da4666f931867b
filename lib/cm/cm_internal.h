/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Private interface of lib/cm: the bit-field accessors the codecs share and
 * the CM's own structures (cm.c owns them; attr.c reads an id's REQ, REP
 * and role to derive QP attributes).
 */

#ifndef CM_INTERNAL_H
#define CM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "uroce_cm.h"

/*
 * Fields narrower than a byte are numbered as IBA tables do, "byte[bit]"
 * with bit 0 the most significant: a field of @p width bits starting at
 * bit @p bit of a byte occupies the mask below.
 */
static inline uint8_t
cm_bits_get(uint8_t byte, unsigned int bit, unsigned int width)
{
	return (uint8_t)((byte >> (8u - bit - width)) & ((1u << width) - 1u));
}

static inline uint8_t
cm_bits_put(unsigned int v, unsigned int bit, unsigned int width)
{
	return (uint8_t)((v & ((1u << width) - 1u)) << (8u - bit - width));
}

/* True if @p v fits in @p width bits. */
static inline bool
cm_fits(uint64_t v, unsigned int width)
{
	return width >= 64 || (v >> width) == 0;
}

/* Hash chains of ids: by local comm ID, and by the peer's (comm ID, CA GUID). */
#define CM_HASH_BITS 10
#define CM_HASH_SIZE (1u << CM_HASH_BITS)

struct uroce_cm_id {
	struct uroce_cm *cm;
	void *context;              /* NULL: no owner (new, or destroyed) */
	bool destroyed;             /* the owner let go; freed once IDLE */
	bool active;                /* sent the REQ / SIDR_REQ */
	bool has_req;
	bool has_rep;
	bool rep_rtu_pending;       /* passive: an RTU is still owed to us */
	enum uroce_cm_state state;
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint64_t remote_ca_guid;
	uint32_t local_qpn;
	uint32_t remote_qpn;
	uint8_t resp_res;           /* READs/atomics this side accepts at once */
	uint8_t init_depth;         /* READs/atomics this side issues at once */
	uint8_t local_ack_timeout;  /* the QP's (and time wait's) exponent */
	uint8_t packet_life_time;
	uint8_t max_cm_retries;
	uint32_t cm_timeout_ms;     /* REQ/REP/DREQ retransmission interval */
	uint64_t tid;               /* the connection's REQ (or SIDR_REQ) transaction */
	uint64_t dreq_tid;
	struct uroce_cm_addr addr;  /* the peer's QP1 */
	struct uroce_cm_req req;
	struct uroce_cm_rep rep;
	/* the message resent on timeout, and its timer */
	uint8_t mad[UROCE_MAD_LEN];
	uint8_t retries_left;
	uint64_t deadline;          /* 0: no timer armed */
	/* links */
	struct uroce_cm_id *next;             /* every id */
	struct uroce_cm_id **pprev;
	struct uroce_cm_id *local_next;       /* local comm ID chain */
	struct uroce_cm_id *remote_next;      /* (remote comm ID, GUID) chain */
	bool in_remote;
};

struct uroce_cm {
	struct uroce_cm_conf conf;
	uint32_t next_comm_id;
	struct uroce_cm_id *ids;
	unsigned int n_ids;
	struct uroce_cm_id *by_local[CM_HASH_SIZE];
	struct uroce_cm_id *by_remote[CM_HASH_SIZE];
	uint64_t next_deadline;     /* a lower bound of every armed deadline */
	unsigned int depth;         /* calls in progress: ids are freed only at 0 */
	bool reap_pending;          /* a destroyed id reached IDLE */
	uint64_t cnt[UROCE_CM_CNT_MAX];
};

#define CM_CNT(cm, sym) ((cm)->cnt[UROCE_CM_CNT_##sym]++)

#endif /* CM_INTERNAL_H */
