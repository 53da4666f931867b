/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Structural checks of WQEs, run by the daemon on its private copy (taken by
 * uroce_shm_ring_dequeue_burst()) so that the client cannot change a WQE
 * between the check and its use. Every length is summed in 64 bits.
 */

#include <uroce_common.h>

#include "shm_internal.h"

/* Opcodes that may carry inline data: those whose payload comes from the
 * local side (SEND and RDMA WRITE families). */
static bool
opcode_has_payload(uint8_t op)
{
	switch (op) {
	case UROCE_WR_SEND:
	case UROCE_WR_SEND_WITH_IMM:
	case UROCE_WR_SEND_WITH_INV:
	case UROCE_WR_RDMA_WRITE:
	case UROCE_WR_RDMA_WRITE_WITH_IMM:
		return true;
	default:
		return false;
	}
}

static bool
opcode_known(uint8_t op)
{
	return opcode_has_payload(op) || op == UROCE_WR_RDMA_READ ||
	       op == UROCE_WR_ATOMIC_CMP_AND_SWP || op == UROCE_WR_ATOMIC_FETCH_AND_ADD;
}

enum uroce_wc_status
uroce_shm_send_wqe_check(const struct uroce_shm_send_wqe *w, uint32_t max_sge,
			 uint32_t max_inline, uint64_t *total_len)
{
	uint64_t total = 0;
	uint32_t i;

	max_sge = UROCE_MIN(max_sge, (uint32_t)UROCE_MAX_SGE);
	max_inline = UROCE_MIN(max_inline, (uint32_t)UROCE_MAX_INLINE);
	if (!opcode_known(w->opcode) || (w->send_flags & ~UROCE_SEND_FLAGS_ALL) != 0 ||
	    w->reserved0 != 0 || w->reserved1 != 0)
		return UROCE_WC_LOC_QP_OP_ERR;
	if ((w->send_flags & UROCE_SEND_INLINE) != 0) {
		if (!opcode_has_payload(w->opcode))
			return UROCE_WC_LOC_QP_OP_ERR;
		if (w->inline_len > max_inline)
			return UROCE_WC_LOC_LEN_ERR;
		total = w->inline_len;
	} else {
		if (w->num_sge > max_sge)
			return UROCE_WC_LOC_QP_OP_ERR;
		for (i = 0; i < w->num_sge; i++)
			total += w->data.sg_list[i].length;
		/* Atomics return the 64-bit original value into one 8-byte SGE
		 * (IBA vol. 1, atomic operations: 64-bit operands). */
		if ((w->opcode == UROCE_WR_ATOMIC_CMP_AND_SWP ||
		     w->opcode == UROCE_WR_ATOMIC_FETCH_AND_ADD) &&
		    (w->num_sge != 1 || w->data.sg_list[0].length != 8))
			return UROCE_WC_LOC_LEN_ERR;
	}
	if (total > UROCE_MAX_MSG_SIZE)
		return UROCE_WC_LOC_LEN_ERR;
	if (total_len != NULL)
		*total_len = total;
	return UROCE_WC_SUCCESS;
}

enum uroce_wc_status
uroce_shm_recv_wqe_check(const struct uroce_shm_recv_wqe *w, uint32_t max_sge,
			 uint64_t *total_len)
{
	uint64_t total = 0;
	uint32_t i;

	max_sge = UROCE_MIN(max_sge, (uint32_t)UROCE_MAX_SGE);
	if (w->reserved0 != 0 || w->num_sge > max_sge)
		return UROCE_WC_LOC_QP_OP_ERR;
	for (i = 0; i < w->num_sge; i++)
		total += w->sg_list[i].length;
	if (total > UROCE_MAX_MSG_SIZE)
		return UROCE_WC_LOC_LEN_ERR;
	if (total_len != NULL)
		*total_len = total;
	return UROCE_WC_SUCCESS;
}
