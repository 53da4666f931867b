/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The daemon's reader of WQEs: each field of the shared slot is loaded once
 * into the private copy, and only the copy is checked and used, so that the
 * client cannot change a WQE between the check and its use (no TOCTOU).
 * Every length is summed in 64 bits. What each opcode may carry comes from
 * the one opcode table (uroce_wr.h).
 */

#include <string.h>

#include <uroce_common.h>
#include <uroce_wr.h>

#include "shm_internal.h"

/* A relaxed atomic load of one field of the shared slot: read once, whole. */
#define SHM_READ(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* Largest QPN a BTH can carry (24 bits, IBA 9.2). */
#define QPN_MASK 0xFFFFFFu

/* The SGE list of a WQE: @p n of them, already bounded. @return the total. */
static uint64_t
read_sges(const struct uroce_shm_sge *src, uint32_t n, struct uroce_wr_sge *dst)
{
	uint64_t total = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		dst[i].addr = SHM_READ(src[i].addr);
		dst[i].length = SHM_READ(src[i].length);
		dst[i].lkey = SHM_READ(src[i].lkey);
		total += dst[i].length;
	}
	return total;
}

enum uroce_wc_status
uroce_shm_send_wqe_read(const struct uroce_shm_send_wqe *sw, const struct uroce_shm_wq_limits *lim,
			struct uroce_wr_send *wr, uint64_t *total_len)
{
	uint8_t op = SHM_READ(sw->opcode), nsge = SHM_READ(sw->num_sge);
	uint16_t flags = SHM_READ(sw->send_flags);
	uint32_t max_sge = UROCE_MIN(lim->max_sge, (uint32_t)UROCE_MAX_SGE);
	uint32_t max_inline = UROCE_MIN(lim->max_inline, (uint32_t)UROCE_MAX_INLINE);
	uint32_t props = uroce_wr_props(op);
	uint64_t total;

	wr->wr_id = SHM_READ(sw->wr_id);
	wr->opcode = op;
	wr->xrc_srqn = SHM_READ(sw->xrc_remote_srqn);
	if (!uroce_wr_allowed(op, lim->qp_type) || (flags & ~UROCE_SEND_FLAGS_ALL) != 0 ||
	    SHM_READ(sw->reserved1) != 0 ||
	    (lim->qp_type == UROCE_QPT_XRC_SEND ? wr->xrc_srqn > QPN_MASK : wr->xrc_srqn != 0))
		return UROCE_WC_LOC_QP_OP_ERR;
	wr->flags = flags;
	wr->imm = SHM_READ(sw->imm_data);
	if (lim->qp_type == UROCE_QPT_UD) {
		wr->ah_handle = SHM_READ(sw->wr.ud.ah_handle);
		wr->remote_qpn = SHM_READ(sw->wr.ud.remote_qpn);
		wr->remote_qkey = SHM_READ(sw->wr.ud.remote_qkey);
		if (SHM_READ(sw->wr.ud.reserved) != 0 || wr->remote_qpn > QPN_MASK)
			return UROCE_WC_LOC_QP_OP_ERR;
	} else if (op == UROCE_WR_BIND_MW) {
		/* The engine checks the binding itself (IBA 10.6.7.3). */
		wr->remote_addr = SHM_READ(sw->wr.bind.addr);
		wr->compare_add = SHM_READ(sw->wr.bind.length);
		wr->imm = SHM_READ(sw->wr.bind.mr_lkey);
		wr->swap = SHM_READ(sw->wr.bind.access);
		wr->rkey = SHM_READ(sw->wr.bind.rkey);
		if (SHM_READ(sw->wr.bind.reserved) != 0)
			return UROCE_WC_LOC_QP_OP_ERR;
	} else if (op == UROCE_WR_ATOMIC_WRITE) {
		wr->remote_addr = SHM_READ(sw->wr.atomic_write.remote_addr);
		wr->compare_add = SHM_READ(sw->wr.atomic_write.data);
		wr->rkey = SHM_READ(sw->wr.atomic_write.rkey);
		if (SHM_READ(sw->wr.atomic_write.reserved) != 0)
			return UROCE_WC_LOC_QP_OP_ERR;
	} else if (op == UROCE_WR_FLUSH) {
		uint8_t type = SHM_READ(sw->wr.flush.type), level = SHM_READ(sw->wr.flush.level);

		/* The FETH (IBA 1.5 A19.4.1): type in bits 3:0, level in 5:4;
		 * the engine checks what the values mean. */
		if (type > 0xF || level > 3 || SHM_READ(sw->wr.flush.reserved) != 0)
			return UROCE_WC_LOC_QP_OP_ERR;
		wr->remote_addr = SHM_READ(sw->wr.flush.remote_addr);
		wr->compare_add = SHM_READ(sw->wr.flush.length);
		wr->rkey = SHM_READ(sw->wr.flush.rkey);
		wr->swap = (uint64_t)type | (uint64_t)level << 4;
	} else if (props & UROCE_WRP_ATOMIC) {
		wr->remote_addr = SHM_READ(sw->wr.atomic.remote_addr);
		wr->compare_add = SHM_READ(sw->wr.atomic.compare_add);
		wr->swap = SHM_READ(sw->wr.atomic.swap);
		wr->rkey = SHM_READ(sw->wr.atomic.rkey);
	} else {
		wr->remote_addr = SHM_READ(sw->wr.rdma.remote_addr);
		wr->rkey = SHM_READ(sw->wr.rdma.rkey);
	}
	/* A bind or invalidation carries no data (IBA 10.6.7.3); an ATOMIC
	 * WRITE or FLUSH carries its operands in the WQE (IBA 1.5 A19). */
	if ((props & (UROCE_WRP_LOCAL | UROCE_WRP_EMPTY_RESP)) &&
	    ((flags & UROCE_SEND_INLINE) || nsge != 0))
		return UROCE_WC_LOC_QP_OP_ERR;
	if (flags & UROCE_SEND_INLINE) {
		uint32_t len = SHM_READ(sw->inline_len);

		if (!(props & UROCE_WRP_PAYLOAD))
			return UROCE_WC_LOC_QP_OP_ERR;
		if (len > max_inline || wr->inline_data == NULL)
			return UROCE_WC_LOC_LEN_ERR;
		/* The bytes are data: whatever the client writes meanwhile is
		 * what it sends; the length was read once and bounded. */
		uroce_copy_small(wr->inline_data, sw->data.inline_data, len);
		wr->inline_len = len;
		wr->num_sge = 0;
		total = len;
	} else {
		if (nsge > max_sge)
			return UROCE_WC_LOC_QP_OP_ERR;
		wr->num_sge = nsge;
		wr->inline_len = 0;
		total = read_sges(sw->data.sg_list, nsge, wr->sge);
		/* IBA 9.4.5: the original value of an atomic comes back into
		 * one 8-byte SGE. */
		if ((props & UROCE_WRP_ATOMIC) && (nsge != 1 || wr->sge[0].length != 8))
			return UROCE_WC_LOC_LEN_ERR;
	}
	if (total > UROCE_MAX_MSG_SIZE)
		return UROCE_WC_LOC_LEN_ERR;
	if (total_len != NULL)
		*total_len = total;
	return UROCE_WC_SUCCESS;
}

enum uroce_wc_status
uroce_shm_recv_wqe_read(const struct uroce_shm_recv_wqe *rw, uint32_t max_sge,
			struct uroce_wr_recv *wr)
{
	uint32_t n = SHM_READ(rw->num_sge);
	uint64_t total;

	wr->wr_id = SHM_READ(rw->wr_id);
	if (SHM_READ(rw->reserved0) != 0 || n > UROCE_MIN(max_sge, (uint32_t)UROCE_MAX_SGE))
		return UROCE_WC_LOC_QP_OP_ERR;
	wr->num_sge = n;
	total = read_sges(rw->sg_list, n, wr->sge);
	if (total > UROCE_MAX_MSG_SIZE)
		return UROCE_WC_LOC_LEN_ERR;
	wr->length = (uint32_t)total;
	return UROCE_WC_SUCCESS;
}
