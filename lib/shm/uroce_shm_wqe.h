/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The daemon's reader of client work queues: a WQE is copied out of the
 * shared ring once and checked against the QP's own limits. Private to the
 * daemon side (lib/daemon, the fuzzers); clients write WQEs with
 * lib/verbs/uroce_wqe.h.
 */

#ifndef UROCE_SHM_WQE_H
#define UROCE_SHM_WQE_H

#include <uroce_wr.h>

#include "uroce_shm_datapath.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a WQE is read against: the QP's (or SRQ's) limits from the daemon's own records. */
struct uroce_shm_wq_limits {
	uint32_t max_sge;         /**< max_send_sge or max_recv_sge */
	uint32_t max_inline;      /**< max_inline_data (send queues) */
	enum uroce_qp_type qp_type; /**< send queues: the opcodes it may post */
};

/**
 * Read a send WQE out of a client's ring and check it: the daemon's one
 * reader, so that what the fuzzer exercises is what runs. Every field of
 * @p shared is loaded once, relaxed, into @p wr (the client may write the
 * slot meanwhile: only what was read is checked and used), inline bytes
 * into wr->inline_data. It checks what the ABI and the QP's limits define:
 * opcode (known, allowed for the QP type), flags, reserved fields, the UD
 * destination QPN, SGE count, inline length, atomic operand size and the
 * total length. Keys, addresses and the UD address handle are the daemon's
 * to check against its own tables.
 *
 * @param shared  the slot in the shared ring
 * @param lim  the QP's limits (max_sge and max_inline are clamped to the ABI's)
 * @param wr  private copy out; wr->inline_data must point at max_inline bytes
 *   or be NULL (then inline WQEs are refused). wr_id and opcode are set even
 *   when the WQE is refused, for its error completion.
 * @param total_len  set to the message length on success (may be NULL)
 * @return
 *   UROCE_WC_SUCCESS, or the completion status to fail the WQE with:
 *   UROCE_WC_LOC_QP_OP_ERR (unknown opcode or flag, opcode the QP type does
 *   not carry, reserved field set, UD QPN above 24 bits, inline on an opcode
 *   that carries no payload, too many SGEs),
 *   UROCE_WC_LOC_LEN_ERR (inline length too large or no inline buffer, atomic
 *   SGE not one of 8 bytes, total length above UROCE_MAX_MSG_SIZE).
 */
enum uroce_wc_status uroce_shm_send_wqe_read(const struct uroce_shm_send_wqe *shared,
					     const struct uroce_shm_wq_limits *lim,
					     struct uroce_wr_send *wr, uint64_t *total_len);

/**
 * Read a receive WQE out of a client's ring and check it, as
 * uroce_shm_send_wqe_read(); wr->length is the sum of the SGE lengths.
 *
 * @return UROCE_WC_SUCCESS, UROCE_WC_LOC_QP_OP_ERR (reserved field set or too
 *   many SGEs), or UROCE_WC_LOC_LEN_ERR (total length above UROCE_MAX_MSG_SIZE).
 *   wr_id is set either way.
 */
enum uroce_wc_status uroce_shm_recv_wqe_read(const struct uroce_shm_recv_wqe *shared,
					     uint32_t max_sge, struct uroce_wr_recv *wr);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_SHM_WQE_H */
