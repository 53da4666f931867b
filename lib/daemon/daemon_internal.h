/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Private interface between the two halves of lib/daemon:
 *  - daemon.c speaks lib/shm (sessions, control messages, rings, CQEs);
 *  - eng.c speaks lib/transport (engine, objects, loopback port).
 * The structs below are what crosses between the halves: plain integers
 * whose values are the shared verbs vocabulary (uroce_verbs_defs.h), so the
 * session code never sees an engine object and the engine glue never sees
 * shared memory.
 */

#ifndef DAEMON_INTERNAL_H
#define DAEMON_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <uroce_limits.h>

struct eng;

/* Scatter/gather element: addr is an iova in the MR of lkey. */
struct dsge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/* A send work request, already copied out of shared memory and checked. */
struct dsend_wr {
	uint64_t wr_id;
	int opcode;           /* ibv_wr_opcode value */
	unsigned int flags;   /* ibv_send_flags value */
	uint32_t imm;
	int num_sge;
	struct dsge sge[UROCE_MAX_SGE];
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add;
	uint64_t swap;
	void *ah;             /* UD: engine AH (NULL on RC/UC) */
	uint32_t remote_qpn;  /* UD */
	uint32_t remote_qkey; /* UD */
	uint32_t inline_len;
	uint8_t inline_data[UROCE_MAX_INLINE]; /* daemon-private copy */
};

/* A work completion (ibv_wc values). */
struct dwc {
	uint64_t wr_id;
	uint32_t status;
	uint32_t opcode;
	uint32_t flags;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm;
	uint32_t qp_num;
	uint32_t src_qp;
	uint16_t pkey_index;
	uint8_t sl;
};

/* Queue capacities. */
struct dcap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
};

/* QP attributes (ibv_qp_attr subset, address vector inline). */
struct dqp_attr {
	uint32_t qp_state;
	uint32_t cur_qp_state;
	uint32_t path_mtu;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t access;
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t sq_draining;
	uint8_t dgid[16];
	uint32_t flow_label;
	uint8_t hop_limit;
	uint8_t tclass;
	uint8_t sl;
	uint8_t ah_port;
};

struct eng_counters {
	uint64_t loop_frames;
	uint64_t loop_bad;
};

struct eng *eng_create(const uint8_t gid[16]);
void eng_destroy(struct eng *e);
/* Deliver the loopback frames queued before this call, then run the engine. */
unsigned int eng_poll(struct eng *e);
void eng_counters(const struct eng *e, struct eng_counters *c);

void *eng_pd_alloc(struct eng *e);
int eng_pd_dealloc(void *pd);
void *eng_mr_reg(void *pd, void *addr, uint64_t iova, uint64_t len, int access, uint32_t *lkey,
		 uint32_t *rkey);
int eng_mr_dereg(void *mr);
/* An engine AH on @p pd (GRH fields as ibv_ah_attr); NULL with errno. */
void *eng_ah_create(void *pd, const uint8_t dgid[16], uint8_t tclass, uint8_t hop_limit,
		    uint32_t flow_label, uint8_t sl, uint8_t port);
int eng_ah_destroy(void *ah);
void *eng_cq_create(struct eng *e, int cqe);
int eng_cq_destroy(void *cq);
/* Up to n completions; -EOVERFLOW once drained after an overflow. */
int eng_poll_cq(void *cq, int n, struct dwc *wc);
void *eng_qp_create(void *pd, void *send_cq, void *recv_cq, int qp_type, bool sig_all,
		    const struct dcap *cap, uint32_t *qpn);
int eng_qp_destroy(void *qp);
int eng_modify_qp(void *qp, const struct dqp_attr *a, int mask);
int eng_query_qp(void *qp, struct dqp_attr *a, struct dcap *cap);
/* Move a QP to ERR (flushes its WQEs). */
int eng_qp_to_err(void *qp);
/* 0, -EINVAL (not postable now: the WR must fail), -ENOMEM (queue full: retry later). */
int eng_post_send(void *qp, const struct dsend_wr *wr);
int eng_post_recv(void *qp, uint64_t wr_id, const struct dsge *sge, int num_sge);

#endif /* DAEMON_INTERNAL_H */
