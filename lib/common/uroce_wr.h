/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * One description of a work request, shared by every layer that handles one:
 *
 *  - the opcode property table (uroce_wr_props()): what each send opcode
 *    carries, which QP types take it, what completion it reports. liburoce
 *    and the drop-in fill WQEs by it, the daemon's WQE reader checks them by
 *    it, the engine segments and orders them by it;
 *  - struct uroce_wr_send and struct uroce_wr_recv: a work request as the
 *    daemon holds it once it has been read out of a client's ring (lib/shm's
 *    uroce_shm_send_wqe_read()) and as the engine keeps it in its queue slot.
 *
 * No DPDK here: this is part of the core.
 */

#ifndef UROCE_WR_H
#define UROCE_WR_H

#include <stdbool.h>
#include <stdint.h>

#include <uroce_limits.h>
#include <uroce_verbs_defs.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a send opcode does; uroce_wr_props() gives the set of an opcode. */
enum uroce_wr_prop {
	/** Local data goes out, from SGEs or inline bytes (SEND and WRITE families). */
	UROCE_WRP_PAYLOAD = 1u << 0,
	/** remote_addr and rkey name the peer's memory (RDMA WRITE and READ). */
	UROCE_WRP_RDMA = 1u << 1,
	/** A 64-bit atomic on an 8-byte aligned word; the original value lands
	 * in one 8-byte SGE (IBA 9.4.5). */
	UROCE_WRP_ATOMIC = 1u << 2,
	/** Takes one of the responder's resources: counted against max_rd_atomic
	 * and waited for by a fenced WR (IBA 9.7.4.1.3, 10.8.3.3). */
	UROCE_WRP_RD_ATOMIC = 1u << 3,
	/** Immediate data rides on the last packet. */
	UROCE_WRP_IMM = 1u << 4,
	/** An rkey to invalidate rides on the last packet (IBA 10.6.7.2.2). */
	UROCE_WRP_INV = 1u << 5,
	/** Consumes a receive WQE at the responder. */
	UROCE_WRP_RECV = 1u << 6,
	/** Local operation (BIND_MW, LOCAL_INV): no packet; the requester
	 * executes it in send queue order (IBA 10.6.7.3, 10.6.7.2.1). */
	UROCE_WRP_LOCAL = 1u << 7,
	/** One request packet without SGEs, answered by an RDMA READ Response
	 * Only with no payload (IBA 1.5 A19: ATOMIC WRITE, FLUSH). Its
	 * operands ride in the WQE (see struct uroce_wr_send). */
	UROCE_WRP_EMPTY_RESP = 1u << 24,
};

/** The property bit of the QP type @p t that carries an opcode (IBA 10.7.3.1,
 * table 95: which operations each service offers). */
#define UROCE_WRP_QPT(t) (1u << (8 + (t)))

/** Largest send opcode the table knows, plus one. */
#define UROCE_WR_OPCODE_COUNT 16u

/** One row of the opcode table. */
struct uroce_wr_info {
	uint32_t props;      /**< enum uroce_wr_prop | UROCE_WRP_QPT() bits; 0: unknown */
	uint8_t wc_opcode;   /**< enum uroce_wc_opcode its completion reports */
};

/** The opcode table, indexed by enum uroce_wr_opcode (lib/common/wr.c). */
extern const struct uroce_wr_info uroce_wr_info_tab[UROCE_WR_OPCODE_COUNT];

/** The properties of send opcode @p op, or 0 if uroce does not know it. */
static inline uint32_t
uroce_wr_props(uint32_t op)
{
	return op < UROCE_WR_OPCODE_COUNT ? uroce_wr_info_tab[op].props : 0;
}

/** True if @p op is known and has every property in @p props. */
static inline bool
uroce_wr_has(uint32_t op, uint32_t props)
{
	return (uroce_wr_props(op) & props) == props && uroce_wr_props(op) != 0;
}

/** True if a QP of type @p t may post @p op (IBA 10.7.3.1, table 95). */
static inline bool
uroce_wr_allowed(uint32_t op, enum uroce_qp_type t)
{
	return (unsigned int)t < 16 && (uroce_wr_props(op) & UROCE_WRP_QPT(t)) != 0;
}

/** The completion opcode a send work request reports (verbs semantics). */
static inline enum uroce_wc_opcode
uroce_wc_opcode_of(enum uroce_wr_opcode op)
{
	unsigned int wc = UROCE_WC_SEND;

	if (op < UROCE_WR_OPCODE_COUNT)
		wc = uroce_wr_info_tab[op].wc_opcode;
	return (enum uroce_wc_opcode)wc;
}

/** One scatter/gather element of registered memory (ibv_sge). */
struct uroce_wr_sge {
	uint64_t addr;    /**< the MR's iova space */
	uint32_t length;
	uint32_t lkey;
};

/**
 * A send work request as the daemon holds it once it is read out of a
 * client's ring, and as the engine keeps it in its send queue slot.
 */
struct uroce_wr_send {
	uint64_t wr_id;
	uint32_t opcode;             /**< enum uroce_wr_opcode */
	uint32_t flags;              /**< UROCE_SEND_* */
	/** host order; SEND_WITH_INV, LOCAL_INV: the rkey; BIND_MW: the MR's lkey */
	uint32_t imm;
	uint32_t num_sge;            /**< ignored with UROCE_SEND_INLINE */
	/** RDMA, atomics, ATOMIC WRITE, FLUSH; BIND_MW: the window's address */
	uint64_t remote_addr;
	uint32_t rkey;               /**< BIND_MW: the window's new rkey */
	uint32_t inline_len;         /**< bytes at inline_data, with UROCE_SEND_INLINE */
	/** atomics; ATOMIC WRITE: the 8 bytes to store, as they lie in memory;
	 * FLUSH: the length; BIND_MW: the window's length */
	uint64_t compare_add;
	/** CMP_AND_SWP; FLUSH: the FETH (placement type | selectivity << 4);
	 * BIND_MW: the window's UROCE_ACCESS_* flags */
	uint64_t swap;
	uint32_t remote_qpn;         /**< UD */
	uint32_t remote_qkey;        /**< UD */
	uint32_t ah_handle;          /**< UD: the client's address handle, as posted */
	uint32_t xrc_srqn;           /**< XRC_SEND: the remote XRC SRQ (24 bits) */
	/**
	 * The slot's inline buffer of max_inline_data bytes, set by whoever owns
	 * the slot (the engine; NULL when the QP has none): inline bytes are
	 * copied there.
	 */
	uint8_t *inline_data;
	struct uroce_wr_sge sge[UROCE_MAX_SGE];
};

/** A receive work request (@c length is the sum of the SGE lengths). */
struct uroce_wr_recv {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t length;
	struct uroce_wr_sge sge[UROCE_MAX_SGE];
};

/** Every send flag uroce implements; any other bit is refused. */
#define UROCE_SEND_FLAGS_ALL \
	(UROCE_SEND_FENCE | UROCE_SEND_SIGNALED | UROCE_SEND_SOLICITED | UROCE_SEND_INLINE)

#ifdef __cplusplus
}
#endif

#endif /* UROCE_WR_H */
