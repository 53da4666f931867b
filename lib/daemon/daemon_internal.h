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
	uint8_t sgid[16];     /* resolved from sgid_index by the daemon */
	uint32_t flow_label;
	uint8_t hop_limit;
	uint8_t tclass;
	uint8_t sl;
	uint8_t ah_port;
};

struct eng_counters {
	uint64_t loop_frames;
	uint64_t loop_bad;
	uint64_t port_tx;
	uint64_t port_rx;
};

struct uroce_daemon_port_ops;
struct uroce_pkt;
struct uroce_frame;
struct uroce_eng_cc_params;

struct eng_conf {
	unsigned int n_gid;
	const uint8_t (*gids)[16];   /* UROCE_DAEMON_GID_MAX entries; [0] is the default */
	const struct uroce_daemon_port_ops *port; /* NULL: loopback only */
	void *port_ctx;
	void *dctx;                  /* passed to daemon_async_event() */
	uint32_t ud_mtu;
	const struct uroce_eng_cc_params *cc; /* NULL: the engine's defaults */
};

struct eng *eng_create(const struct eng_conf *c);
/* A packet from the wire port (ICRC checked by the port). */
void eng_rx(struct eng *e, const struct uroce_pkt *pkt, const struct uroce_frame *frame);
void eng_destroy(struct eng *e);
/* Deliver the loopback frames queued before this call, then run the engine. */
unsigned int eng_poll(struct eng *e);
void eng_counters(const struct eng *e, struct eng_counters *c);
/* Engine-wide transport counters, counters.def order; returns how many exist. */
unsigned int eng_counter_values(const struct eng *e, uint64_t *vals, unsigned int n);

void *eng_pd_alloc(struct eng *e);
int eng_pd_dealloc(void *pd);
void *eng_mr_reg(void *pd, void *addr, uint64_t iova, uint64_t len, int access, uint32_t *lkey,
		 uint32_t *rkey);
int eng_mr_dereg(void *mr);
/* An engine AH on @p pd (GRH fields as ibv_ah_attr); NULL with errno. */
void *eng_ah_create(void *pd, const uint8_t sgid[16], const uint8_t dgid[16], uint8_t tclass,
		    uint8_t hop_limit, uint32_t flow_label, uint8_t sl, uint8_t port);
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

/*
 * SRQ glue (eng_srq.c). An SRQ lives in the PD's engine; a QP created with one
 * takes its receives from it (IBA 10.2.9) and has no receive ring of its own.
 */
/* An engine SRQ of @p max_wr WQEs (1..UROCE_MAX_QP_WR); NULL with errno. */
void *eng_srq_create(void *pd, uint32_t max_wr, uint32_t max_sge);
/* 0, -EBUSY (a QP still uses it). */
int eng_srq_destroy(void *srq);
/* 0, -EINVAL (too many SGEs or too long: the WR must fail), -ENOMEM (SRQ full: retry later). */
int eng_post_srq_recv(void *srq, uint64_t wr_id, const struct dsge *sge, int num_sge);
/* As eng_qp_create(), but the QP's receives come from @p srq (not NULL). */
void *eng_qp_create_srq(void *pd, void *send_cq, void *recv_cq, void *srq, int qp_type,
			bool sig_all, const struct dcap *cap, uint32_t *qpn);

/*
 * Engine asynchronous events, reported to the session that owns the object
 * (daemon.c). @p dctx is the struct uroce_daemon; @p type an ibv_event_type
 * value (enum uroce_async_event_type in uroce_verbs_defs.h, NOT lib/transport's
 * enum uroce_event_type: its SQ_DRAINED is 9, ibverbs' is 5); @p qpn the QPN
 * for QP events (QP_FATAL, SQ_DRAINED); @p eng_cq the engine CQ
 * (eng_cq_create()'s pointer) for CQ_ERR, NULL otherwise. Safe to call from
 * inside eng_poll() (from the engine's ops->async_event): it never re-enters
 * the engine and never blocks (a full client socket drops the event, counted).
 */
void daemon_async_event(void *dctx, int type, uint32_t qpn, void *eng_cq);

/*
 * Introspection (LIST_SESSIONS, LIST_QPS, QUERY_COUNTERS; doc/shm-abi.md).
 * introspect.c answers the requests; it reads the session side through the
 * views below (daemon.c fills them) and the engine side through
 * eng_query_qp() and the counter accessors of eng_introspect.c.
 */
struct uroce_daemon;
struct session;

/* A session, as uroce-ctl sees it: identity and object counts. */
struct dsession_view {
	uint32_t id;
	int32_t pid;
	uint32_t uid;
	bool hello;
	uint32_t segments;
	uint32_t pds;
	uint32_t mrs;
	uint32_t cqs;
	uint32_t qps;
	uint32_t ahs;
	uint32_t srqs;
};

/* The session-side facts of one QP (the engine's come from eng_query_qp()). */
struct dqp_view {
	void *qp;             /* engine QP */
	uint32_t qpn;
	uint32_t type;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t sq_queued;   /* posted in shm, not yet taken by the engine */
	uint32_t rq_queued;
	bool failed;          /* a ring was corrupt */
};

/* Sessions in the daemon's list order; NULL starts the walk. */
struct session *daemon_session_next(struct uroce_daemon *d, struct session *prev);
void daemon_session_view(const struct session *s, struct dsession_view *v);
/* The next QP of @p s at object index *pos or later; *pos moves past it.
 * @return 0, or -ENOENT when there is none. */
int daemon_session_qp_next(struct session *s, uint32_t *pos, struct dqp_view *v);

/* Transport counters (eng_introspect.c): the counters.def set, by index. */
unsigned int eng_counter_count(void);
const char *eng_counter_name(unsigned int i);
uint64_t eng_qp_counter(const void *qp, unsigned int i);
/* A QP's congestion control rows (eng_introspect.c): its reaction point
 * state, then its parameters (cc_params.def), by index. */
unsigned int eng_cc_row_count(void);
const char *eng_cc_row_name(unsigned int i);
uint64_t eng_qp_cc_row(const void *qp, unsigned int i);

/* Request handlers (introspect.c): @p body is the validated request body,
 * @p resp the zeroed response body; 0 or -errno as the response status. */
int introspect_list_sessions(struct uroce_daemon *d, struct session *s, const void *body,
			     void *resp);
int introspect_list_qps(struct uroce_daemon *d, struct session *s, const void *body, void *resp);
int introspect_query_counters(struct uroce_daemon *d, struct session *s, const void *body,
			      void *resp);

#endif /* DAEMON_INTERNAL_H */
