/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The lcore load generator (doc/loadgen.md, "The lcore generator"): what
 * pktgen is to a NIC, inside the daemon. A generator is an object of the
 * session that created it: N RC QPs on one worker, one CQ whose completions
 * come straight back to it (a sink of the engine, no shared memory), and
 * memory of the daemon's own, registered as one MR of its own PD.
 *
 *  - An initiator posts WRITE, READ, SEND and atomics into its QPs' engine
 *    slots on its worker, at the mix, window and rate GEN_START gave, and
 *    checks what comes back: READ data against a mirror of the target's
 *    memory, atomic results against a model of the target's word
 *    (lib/loadgen), completions in posting order.
 *  - A target lends its memory (each QP a window holding the uroce-lg-1
 *    pattern of its QPN, and an atomic word), keeps receives posted for
 *    SENDs and checks their payloads.
 *
 * Threads: the control thread creates, connects, starts, reads and destroys
 * (GEN_* requests, through CMD_GEN on the generator's worker); the worker
 * posts and takes completions in its round (gen_poll) with bounded work
 * and no system call. Fields are marked as in core.h: "ctl:"
 * the control thread's, "wrk:" the worker's once the generator is placed.
 *
 * A generator's QPs and CQ carry no context pointer: the worker's engine
 * callbacks (async events, receive refill) take a NULL context for "not a
 * client's object" and leave it alone. The generator finds its QP from a
 * completion's wr_id (QP index << 32 | sequence).
 */

#ifndef DAEMON_GEN_INTERNAL_H
#define DAEMON_GEN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "uroce_loadgen.h"
#include "uroce_shm_gen.h"

#include "core.h"

/* Work bounds of one worker round, over all its generators. */
#define GEN_POST_BUDGET 256u
#define GEN_RECV_BUDGET 256u

/* Transport attributes of every generator QP (doc/loadgen.md). */
#define GEN_TIMEOUT 14          /* default local ACK timeout 4.096 µs * 2^14 = 67 ms */
#define GEN_RETRY_CNT 7         /* so a silent peer fails the QP in about 0.5 s */
#define GEN_RNR_RETRY 7         /* infinite: a target behind on receives slows SENDs */
#define GEN_MIN_RNR_TIMER 1     /* 0.01 ms */
#define GEN_HOP_LIMIT 64

/* The rate limit's tokens: one message is GEN_TOKEN (µs x messages/s). */
#define GEN_TOKEN 1000000ull

/* Alignment of the memory regions. */
#define GEN_ALIGN 64u

enum gen_step {
	GEN_W_CREATE,
	GEN_W_CONNECT,
	GEN_W_START,
	GEN_W_STATS,
	GEN_W_DESTROY,
};

/* One outstanding WR of an initiator QP. */
struct gen_slot {
	uint64_t expect;        /* atomic: the original value the completion must return */
	uint32_t off;           /* WRITE, READ, SEND: window offset */
	uint32_t size;
	uint32_t op;            /* enum uroce_lg_op */
};

struct gen_qp {
	struct uroce_eng_qp *qp;        /* wrk (created by GEN_W_CREATE) */
	uint32_t qpn;
	uint32_t psn;                   /* our first send PSN */
	uint32_t peer_qpn;              /* ctl, before GEN_W_CONNECT */
	uint32_t peer_psn;
	uint64_t rwin;                  /* initiator: the peer's address of our window */
	uint64_t ratomic;               /* initiator: the peer's address of our atomic word */
	bool connected;                 /* ctl */
	/* wrk */
	bool live;                      /* connected (RTS), as the worker knows it */
	bool dead;                      /* an error completion: posts no more */
	uint32_t tpos;                  /* next slot of the mix table */
	uint64_t posted;                /* WRs (target: receives) posted */
	uint64_t done;                  /* their completions */
	struct uroce_lg_atomic am;      /* initiator: the model of the peer's word */
	struct gen_slot *slots;         /* initiator: depth of them */
};

/* What GEN_START asked; the control thread writes it before the worker
 * starts, the worker only reads it. */
struct gen_run {
	struct uroce_lg_mix mix;
	uint8_t table[UROCE_LG_MIX_TABLE];
	uint32_t window;
	bool verify;
	uint64_t rate;
	uint64_t duration_us;
	uint64_t count;
};

struct dgen {
	struct dgen *next;              /* ctl: the session's list */
	struct dgen *wnext;             /* wrk: the worker's list */
	struct session *owner;
	uint32_t id;
	uint32_t role;
	uint32_t n_qps;
	uint32_t depth;                 /* asked */
	uint32_t slots;                 /* depth rounded up to a power of two */
	uint32_t flags;
	uint32_t max_size;
	uint32_t win_len;
	unsigned int worker;
	bool placed;                    /* ctl: GEN_W_CREATE done */
	bool started;                   /* ctl: GEN_START done */
	uint32_t n_connected;           /* ctl */
	uint8_t gid[16];
	uint8_t peer_gid[16];           /* ctl, before GEN_W_CONNECT */
	uint8_t path_mtu;               /* ctl, before GEN_W_CONNECT */
	uint8_t timeout;                /* ctl, before GEN_W_CONNECT: local ACK timeout */
	uint32_t peer_rkey;
	/* memory: one allocation, one MR; the window (mirror) region first */
	uint8_t *mem;
	size_t mem_len;
	size_t budget;                  /* ctl: bytes counted in d->gen_mem_used */
	size_t off_land, land_stride;   /* initiator: READ landing */
	size_t off_send, send_stride;   /* initiator: SEND payloads (verify) */
	size_t off_ares;                /* initiator: atomic results, 8 bytes a slot */
	size_t off_atomic;              /* target: atomic words, 8 bytes a QP */
	size_t off_recv, recv_stride;   /* target: receive buffers */
	struct uroce_eng_pd *pd;
	struct uroce_eng_mr *mr;
	uint32_t lkey;
	struct gen_qp *qps;
	struct gen_slot *slot_mem;
	struct gen_run run;
	/* wrk */
	struct uroce_eng_cq *cq;
	enum uroce_shm_gen_state state;
	uint32_t w_connected;
	uint32_t rr;                    /* the QP to serve first next round */
	bool failed;                    /* an error completion was seen */
	bool flush_all;                 /* ... and the QPs still have to go to ERR */
	bool recv_dirty;                /* target: receives may need posting */
	uint64_t t_start, t_end, t_done, t_last;
	uint64_t tokens;
	uint64_t posted_total;
	uint64_t outstanding;
	struct uroce_shm_msg_gen_stats_resp st; /* counters only; the rest at GEN_W_STATS */
};


struct reply;

/* gen_control.c, on the control thread: a GEN_* request. @return 0 or
 * -errno; -EOPNOTSUPP for another type. */
int gen_dispatch(struct uroce_daemon *d, struct session *s, uint16_t type, const void *body,
		 struct reply *r);
/* Destroy the session's generators (it hung up, or the daemon stops). */
void gen_session_free(struct uroce_daemon *d, struct session *s);

/* gen_worker.c, on the generator's worker */
/* CMD_GEN. @return the command's rc. */
int gen_exec(struct dworker *w, struct dcmd *c);
/* The generators' turn in a worker round. @return work done. */
unsigned int gen_poll(struct dworker *w);
/* The earliest time (µs) a generator of @p w wants a round, or UINT64_MAX. */
uint64_t gen_deadline(struct dworker *w);

/* Where things are in a generator's memory (one allocation, one MR). */

static inline uint64_t
iova_of(const uint8_t *p)
{
	return (uint64_t)(uintptr_t)p;
}

static inline uint8_t *
mirror_of(const struct dgen *g, uint32_t qi)
{
	return g->mem + (size_t)qi * g->win_len;
}

static inline uint8_t *
land_of(const struct dgen *g, uint32_t qi, uint64_t k)
{
	size_t slot = g->run.verify ? (size_t)(k & (g->slots - 1)) * g->max_size : 0;

	return g->mem + g->off_land + (size_t)qi * g->land_stride + slot;
}

static inline uint8_t *
send_of(const struct dgen *g, uint32_t qi, uint64_t k)
{
	return g->mem + g->off_send + (size_t)qi * g->send_stride +
	       (size_t)(k & (g->slots - 1)) * g->max_size;
}

static inline uint8_t *
ares_of(const struct dgen *g, uint32_t qi, uint64_t k)
{
	return g->mem + g->off_ares + ((size_t)qi * g->slots + (k & (g->slots - 1))) * 8;
}

static inline uint8_t *
recv_of(const struct dgen *g, uint32_t qi, uint64_t k)
{
	if (g->recv_stride == 0)
		return g->mem + g->off_recv; /* one buffer shared: nothing reads it */
	return g->mem + g->off_recv + (size_t)qi * g->recv_stride +
	       (size_t)(k & (g->slots - 1)) * g->max_size;
}

#endif /* DAEMON_GEN_INTERNAL_H */
