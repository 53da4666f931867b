/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The tests' way of driving a transport engine, verbs style: chains of work
 * requests posted with a copy (ibv_post_send), and CQs with a ring of their
 * own that a test polls (ibv_poll_cq). The engine itself has neither: the
 * daemon writes WRs straight into the engine's slots (uroce_eng_sq_reserve()
 * and commit) and takes completions through a sink. This harness is built
 * on exactly those entry points, so what the tests exercise is what the
 * daemon runs.
 */

#ifndef UROCE_ENG_POST_H
#define UROCE_ENG_POST_H

#include <stdint.h>

#include "uroce_transport.h"

/** Send work request (ibv_send_wr). */
struct uroce_eng_send_wr {
	struct uroce_eng_send_wr *next;
	uint64_t wr_id;
	struct uroce_wr_sge *sg_list;
	int num_sge;
	enum uroce_wr_opcode opcode;
	unsigned int send_flags;     /**< UROCE_SEND_* */
	uint32_t imm_data;           /**< host order */
	uint32_t invalidate_rkey;    /**< SEND_WITH_INV, LOCAL_INV */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		/** ATOMIC_WRITE: the 8 bytes of @c data (IBA 1.5 A19). */
		struct {
			uint64_t remote_addr;
			uint8_t data[8];
			uint32_t rkey;
		} atomic_write;
		/** FLUSH: enum uroce_flush_type bits at an enum uroce_flush_level. */
		struct {
			uint64_t remote_addr;
			uint64_t length;
			uint32_t rkey;
			uint8_t type;
			uint8_t level;
		} flush;
		/** BIND_MW (ibv_bind_mw_info; the window is named by @c rkey). */
		struct {
			uint32_t rkey;            /**< the window's new rkey */
			struct uroce_eng_mr *mr;  /**< NULL with length 0 (type 1 unbind) */
			uint64_t addr;
			uint64_t length;
			int access;
		} bind_mw;
		struct {
			struct uroce_eng_ah *ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
	} wr;
	uint32_t xrc_remote_srqn;    /**< XRC_SEND QPs: the remote XRC SRQ */
};

/** Receive work request (ibv_recv_wr). */
struct uroce_eng_recv_wr {
	struct uroce_eng_recv_wr *next;
	uint64_t wr_id;
	struct uroce_wr_sge *sg_list;
	int num_sge;
};

/**
 * Post a chain of send WRs. WRs are copied (inline data too) into the
 * engine's slots and committed one by one; the first bad WR stops the chain.
 *
 * @param bad_wr  if not NULL, set to the first WR not posted on error
 * @return 0; -EINVAL (QP state RESET/INIT/RTR, opcode not allowed for the
 *   QP type, too many SGEs, inline too long, UD without AH or longer than
 *   the MTU, atomic not 8 bytes, a message of more than 2^22 packets at the
 *   current path MTU), -ENOMEM (send queue full).
 */
int uroce_eng_post_send(struct uroce_eng_qp *qp, struct uroce_eng_send_wr *wr,
			struct uroce_eng_send_wr **bad_wr);

/**
 * Post a chain of receive WRs on the QP's own RQ.
 * @return 0; -EINVAL (QP in RESET, QP uses an SRQ, too many SGEs),
 *   -ENOMEM (receive queue full).
 */
int uroce_eng_post_recv(struct uroce_eng_qp *qp, struct uroce_eng_recv_wr *wr,
			struct uroce_eng_recv_wr **bad_wr);

/**
 * Post a chain of receive WRs on an SRQ.
 * @return 0; -EINVAL (too many SGEs), -ENOMEM (SRQ full).
 */
int uroce_eng_post_srq_recv(struct uroce_eng_srq *srq, struct uroce_eng_recv_wr *wr,
			    struct uroce_eng_recv_wr **bad_wr);

/**
 * Create a CQ of @p cqe entries (1..UROCE_MAX_CQE) whose completions wait
 * in a ring for uroce_eng_poll_cq().
 * @return the CQ, or NULL with errno EINVAL/ENOMEM.
 */
struct uroce_eng_cq *uroce_eng_cq_create(struct uroce_eng *eng, int cqe, void *cq_context);

/**
 * Take up to @p num completions of a CQ made by uroce_eng_cq_create(),
 * oldest first.
 * @return the number taken (0 if none), or -EOVERFLOW once the CQ is empty
 *   after having overflowed (completions were lost; the CQ is in error, as
 *   IBA 11.4.2.1 CQ overrun), -EINVAL on bad arguments.
 */
int uroce_eng_poll_cq(struct uroce_eng_cq *cq, int num, struct uroce_eng_wc *wc);

/** Completions waiting in a CQ made by uroce_eng_cq_create(). */
uint32_t uroce_eng_cq_count(const struct uroce_eng_cq *cq);

#endif /* UROCE_ENG_POST_H */
