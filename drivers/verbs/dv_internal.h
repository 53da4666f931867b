/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * drivers/verbs: a drop-in libibverbs.so.1 (the rdma-core ABI of the
 * installed <infiniband/verbs.h>) over liburoce, so that unmodified verbs
 * programs (perftest, qperf, the ibv_*_pingpong tools, UCX, Open MPI) run on
 * uroce. Every verbs object here is a struct that starts with (or, for the
 * context, ends with) the public libibverbs struct the application sees,
 * followed by the liburoce object it maps to. The data path (post_send,
 * post_recv, poll_cq, the ibv_wr_* builder, ibv_cq_ex polling) writes WQEs
 * and reads CQEs in liburoce's shared rings through liburoce's direct ring
 * API: no system call and no copy beyond liburoce's own. See
 * doc/verbs-dropin.md.
 */

#ifndef DV_INTERNAL_H
#define DV_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

#include "uroce_verbs.h"
#include "uroce_wqe.h"

/* Exported entry points (the version script decides which names leave). */
#define DV_EXPORT __attribute__((visibility("default")))

/* Devices a process sees: one per socket of $UROCE_SOCKET (colon separated). */
#define DV_MAX_DEVICES 8
/* GID table entries the drop-in reads from the daemon. */
#define DV_MAX_GIDS 16

/*
 * A device. Its first part has the layout of rdma-core's private struct
 * verbs_device (struct ibv_device, then the provider ops pointer): libmlx5 and
 * libefa, which perftest links, read that pointer to tell their own devices
 * (is_mlx5_dev(), is_efa_dev()); NULL makes them refuse ours cleanly.
 */
struct dv_device {
	struct ibv_device device;
	const void *provider_ops; /* always NULL */
	int refcount_unused;
	void *list_unused[2];
	void *sysfs_unused;
	uint64_t core_support_unused;
	/* ours */
	char sock_path[108];
	int index;
	bool said_missing; /* dv_no_device() spoke for it */
};

/* A context: our fields, then struct verbs_context whose last member is the
 * struct ibv_context the application holds. */
struct dv_context {
	struct uroce_context *uctx;
	struct dv_device *dev;
	struct uroce_device_attr dattr;  /* cached at open */
	uint32_t vendor_id;              /* reported (after $UROCE_VERBS_VENDOR_ID) */
	uint32_t vendor_part_id;
	uint8_t active_mtu;              /* port 1, cached at open */
	/* Emulated LID routing (doc/verbs-dropin.md, "LIDs"): the port's LID is
	 * the low 16 bits of its IPv4 address; a non-global address vector to
	 * LID x goes to the IPv4-mapped GID prefix16.x, from GID ipv4_gid_index. */
	uint16_t lid;
	uint8_t ipv4_prefix[2];
	int ipv4_gid_index;              /* -1: no IPv4 GID, no LID routing */
	pthread_mutex_t xrcd_lock;       /* the XRC domains opened with a file */
	struct dv_xrcd *xrcds;
	struct verbs_context vctx;       /* last */
};

struct dv_pd {
	struct ibv_pd pd;
	struct uroce_pd *upd;      /* a parent domain's: that of its PD */
	struct dv_pd *base;        /* a parent domain: the PD it wraps; a PD: NULL */
	uint32_t domains;          /* a PD: parent domains wrapping it */
};

struct dv_mr {
	struct ibv_mr mr;
	struct uroce_mr *umr;
};

struct dv_ah {
	struct ibv_ah ah;
	struct uroce_ah *uah;
};

struct dv_channel {
	struct ibv_comp_channel ch; /* ch.fd: an epoll set of its CQs' eventfds */
};

/* A CQ is an ibv_cq_ex, whose first part is struct ibv_cq, so that
 * ibv_create_cq() and ibv_create_cq_ex() give the same object. */
struct dv_cq {
	struct ibv_cq_ex cqx;
	struct uroce_cq *ucq;
	struct dv_context *ctx;
	uint32_t events_delivered;       /* by ibv_get_cq_event(), under cqx.mutex */
	/* ibv_cq_ex polling, between start_poll and end_poll */
	uint32_t ex_avail;
	uint32_t ex_pos;
	const struct uroce_shm_cqe *ex_cur;
};

struct dv_srq {
	struct ibv_srq srq;
	struct uroce_srq *usrq;
};

/* An XRC domain (IBA 1.2 XRC). One opened with a file is shared, counted,
 * by every ibv_open_xrcd() of this context on the same file (dev, ino). */
struct dv_xrcd {
	struct ibv_xrcd xrcd;
	struct uroce_xrcd *ux;
	bool named;
	dev_t dev;
	ino_t ino;
	unsigned int refs;         /* under the context's xrcd_lock */
	struct dv_xrcd *next;
};

/* A QP embeds ibv_qp_ex (qp_base first), so ibv_qp_to_qp_ex() is a cast. */
struct dv_qp {
	struct ibv_qp_ex qpx;
	struct uroce_qp *uqp;
	struct dv_context *ctx;
	bool ex;                  /* created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS */
	bool sq_sig_all;
	uint64_t send_ops_flags;
	/* ibv_wr_* batch state, between wr_start and wr_complete/wr_abort */
	bool wr_open;
	int wr_err;
	uint32_t wr_n;
	struct uroce_shm_send_wqe *wr_cur;
};

static inline struct dv_context *
dv_ctx(struct ibv_context *c)
{
	return (struct dv_context *)(void *)((uint8_t *)c - offsetof(struct dv_context, vctx.context));
}

/* device.c */
int dv_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *attr,
		  size_t attr_len);
int dv_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
		       struct ibv_device_attr_ex *attr, size_t attr_size);
/* Fill a uroce address vector from an ibv one (emulated LIDs included). */
int dv_ah_attr_to_uroce(struct dv_context *ctx, const struct ibv_ah_attr *in,
			struct uroce_ah_attr *out);
void dv_ah_attr_from_uroce(struct dv_context *ctx, const struct uroce_ah_attr *in,
			   struct ibv_ah_attr *out);

/* mem.c */
struct ibv_pd *dv_alloc_parent_domain(struct ibv_context *c,
				      struct ibv_parent_domain_init_attr *attr);
struct ibv_td *dv_alloc_td(struct ibv_context *c, struct ibv_td_init_attr *attr);
int dv_dealloc_td(struct ibv_td *td);

/* cq.c */
int dv_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc);
int dv_req_notify_cq(struct ibv_cq *cq, int solicited_only);
struct ibv_cq_ex *dv_create_cq_ex(struct ibv_context *c, struct ibv_cq_init_attr_ex *attr);
int dv_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);

/* qp.c */
int dv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int dv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int dv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
struct ibv_qp *dv_create_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *attr);
/* An SRQ, or an XRC SRQ of @p xrcd completing to @p cq; @p attr in and out. */
struct ibv_srq *dv_srq_new(struct ibv_pd *pd, struct dv_xrcd *xrcd, struct ibv_cq *cq,
			   void *srq_context, struct ibv_srq_attr *attr);

/* xrc.c: XRC domains and SRQs (IBA 1.2 XRC) */
struct ibv_xrcd *dv_open_xrcd(struct ibv_context *c, struct ibv_xrcd_init_attr *attr);
int dv_close_xrcd(struct ibv_xrcd *xrcd);
struct ibv_srq *dv_create_srq_ex(struct ibv_context *c, struct ibv_srq_init_attr_ex *attr);
int dv_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);

/* Trace of control calls when $UROCE_VERBS_TRACE is set (never on the data path). */
extern int dv_trace_on;
void dv_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define DV_TRACE(...) do { if (dv_trace_on) dv_trace(__VA_ARGS__); } while (0)

/* mw.c: memory windows */
struct ibv_mw *dv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int dv_dealloc_mw(struct ibv_mw *mw);
int dv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
/* A BIND_MW WQE of @p mw with its new @p rkey. @return 0 or EINVAL. */
int dv_bind_fill(struct uroce_shm_send_wqe *w, const struct ibv_mw *mw, uint32_t rkey,
		 const struct ibv_mw_bind_info *info);

#endif /* DV_INTERNAL_H */
