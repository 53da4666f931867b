/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * Filling a send WQE in place: the one translation of a send work request
 * into the shared-memory ABI on the client side. uroce_post_send() and the
 * drop-in libibverbs (ibv_post_send() and the ibv_wr_* builder) build every
 * WQE with these, in the slot uroce_sq_slot() gives (its control part
 * zeroed). What each opcode may carry comes from the opcode table
 * (uroce_wr.h); the daemon checks every WQE again when it reads it, so
 * these checks are for a clear synchronous error, not for safety.
 *
 * Each function that can refuse returns 0 or -EINVAL.
 */

#ifndef UROCE_WQE_H
#define UROCE_WQE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <uroce_wr.h>

#include "uroce_shm_datapath.h"
#include "uroce_verbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Start a WQE: @p opcode must be one the QP's type carries (IBA 10.7.3.1),
 * @p flags only UROCE_SEND_* bits. The inline flag is set by
 * uroce_wqe_add_inline(), never taken from @p flags.
 */
static inline int
uroce_wqe_start(struct uroce_shm_send_wqe *w, const struct uroce_qp *qp, uint64_t wr_id,
		uint32_t opcode, uint32_t flags)
{
	if (!uroce_wr_allowed(opcode, (enum uroce_qp_type)qp->qp_type) ||
	    (flags & ~UROCE_SEND_FLAGS_ALL) != 0)
		return -EINVAL;
	w->wr_id = wr_id;
	w->opcode = (uint8_t)opcode;
	w->send_flags = (uint16_t)(flags & ~UROCE_SEND_INLINE);
	w->xrc_remote_srqn = 0;
	return 0;
}

/** XRC_SEND QPs: the remote XRC SRQ the request goes to (IBA 1.2 XRC).
 * @return 0, or -EINVAL if it does not fit the XRCETH's 24 bits. */
static inline int
uroce_wqe_set_xrc_srqn(struct uroce_shm_send_wqe *w, uint32_t srqn)
{
	if (srqn > 0xFFFFFFu)
		return -EINVAL;
	w->xrc_remote_srqn = srqn;
	return 0;
}

/** Immediate data (host order), or the rkey a SEND with invalidate names. */
static inline void
uroce_wqe_set_imm(struct uroce_shm_send_wqe *w, uint32_t imm)
{
	w->imm_data = imm;
}

/** The peer's memory an RDMA WRITE or READ names. */
static inline void
uroce_wqe_set_rdma(struct uroce_shm_send_wqe *w, uint64_t remote_addr, uint32_t rkey)
{
	w->wr.rdma.remote_addr = remote_addr;
	w->wr.rdma.rkey = rkey;
}

/** An atomic's word and operands (@p swap: CMP_AND_SWP only). */
static inline void
uroce_wqe_set_atomic(struct uroce_shm_send_wqe *w, uint64_t remote_addr, uint32_t rkey,
		     uint64_t compare_add, uint64_t swap)
{
	w->wr.atomic.remote_addr = remote_addr;
	w->wr.atomic.rkey = rkey;
	w->wr.atomic.compare_add = compare_add;
	w->wr.atomic.swap = swap;
}

/** An ATOMIC_WRITE (no SGEs): the 8 bytes at @p data, stored at once at
 * @p remote_addr (IBA 1.5 A19). */
static inline void
uroce_wqe_set_atomic_write(struct uroce_shm_send_wqe *w, uint64_t remote_addr, uint32_t rkey,
			   const void *data)
{
	w->wr.atomic_write.remote_addr = remote_addr;
	w->wr.atomic_write.rkey = rkey;
	memcpy(&w->wr.atomic_write.data, data, 8);
	w->num_sge = 0;
}

/** A FLUSH (no SGEs) of placement @p type at selectivity @p level (IBA 1.5
 * A19): [remote_addr, + length) at level RANGE, the whole MR at level MR. */
static inline void
uroce_wqe_set_flush(struct uroce_shm_send_wqe *w, uint64_t remote_addr, uint32_t rkey,
		    uint64_t length, uint8_t type, uint8_t level)
{
	w->wr.flush.remote_addr = remote_addr;
	w->wr.flush.rkey = rkey;
	w->wr.flush.length = length;
	w->wr.flush.type = type;
	w->wr.flush.level = level;
	w->num_sge = 0;
}

/** A BIND_MW (no SGEs): the window of @p rkey over the MR of @p mr_lkey. */
static inline void
uroce_wqe_set_bind(struct uroce_shm_send_wqe *w, uint32_t rkey, uint32_t mr_lkey, uint64_t addr,
		   uint64_t length, uint32_t access)
{
	w->wr.bind.rkey = rkey;
	w->wr.bind.mr_lkey = mr_lkey;
	w->wr.bind.addr = addr;
	w->wr.bind.length = length;
	w->wr.bind.access = access;
	w->num_sge = 0;
}

/** A UD destination: an AH of the QP's context, a 24-bit QPN, a Q_Key (bit 31
 * set: the QP's own, IBA 10.2.5). */
static inline int
uroce_wqe_set_ud(struct uroce_shm_send_wqe *w, const struct uroce_qp *qp,
		 const struct uroce_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey)
{
	if (qp->qp_type != UROCE_QPT_UD || ah == NULL || ah->context != qp->context ||
	    remote_qpn > 0xffffffu)
		return -EINVAL;
	w->wr.ud.ah_handle = ah->handle;
	w->wr.ud.remote_qpn = remote_qpn;
	w->wr.ud.remote_qkey = remote_qkey;
	return 0;
}

/** The SGE list (@p sg laid out as struct uroce_sge), at most max_send_sge. */
static inline int
uroce_wqe_set_sges(struct uroce_shm_send_wqe *w, const struct uroce_qp *qp,
		   const struct uroce_sge *sg, size_t n)
{
	size_t i;

	if (n > qp->cap.max_send_sge || (n > 0 && sg == NULL))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		w->data.sg_list[i].addr = sg[i].addr;
		w->data.sg_list[i].length = sg[i].length;
		w->data.sg_list[i].lkey = sg[i].lkey;
	}
	w->num_sge = (uint8_t)n;
	return 0;
}

/**
 * Append @p len bytes at @p addr (a pointer of this process) to the WQE's
 * inline data, copied now: only for an opcode with a payload, and at most
 * max_inline_data bytes in all.
 */
static inline int
uroce_wqe_add_inline(struct uroce_shm_send_wqe *w, const struct uroce_qp *qp, const void *addr,
		     size_t len)
{
	if (!(uroce_wr_props(w->opcode) & UROCE_WRP_PAYLOAD) ||
	    len > qp->cap.max_inline_data - w->inline_len)
		return -EINVAL;
	memcpy(w->data.inline_data + w->inline_len, addr, len);
	w->inline_len += (uint32_t)len;
	w->num_sge = 0;
	w->send_flags |= UROCE_SEND_INLINE;
	return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* UROCE_WQE_H */
