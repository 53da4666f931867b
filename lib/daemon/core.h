/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The core of lib/daemon that its two sides share: the objects, the handle
 * tables, the mailbox between the control thread and the workers, and the
 * workers' counts. Two kinds of thread use it:
 *
 *  - the control thread (daemon.c, control.c, introspect.c) owns the
 *    listening socket and every session: it reads control requests, keeps
 *    the handle tables, maps and unmaps segments, registers MRs and AHs on
 *    the device, and reaches a worker's objects only through worker_call();
 *  - each worker (worker.c) owns an engine, the QPs, CQs and SRQs placed on
 *    it, and their shared-memory rings: it takes WQEs from the rings, runs
 *    the engine, writes CQEs, and tells the control thread about events
 *    through its event ring.
 *
 * Which fields of a shared struct belong to whom is said at each struct.
 * Without threads (uroce_daemon_conf.threaded false) one thread plays both
 * parts, and worker_call() runs the command directly.
 */

#ifndef DAEMON_CORE_H
#define DAEMON_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include <uroce_limits.h>

#include "uroce_daemon.h"
#include "uroce_shm.h"
#include "uroce_transport.h"

#define DAEMON_CACHE_LINE 64
/* The control thread advances the status segment's heartbeat at least this
 * often (ms), as long as it is called (uroce_daemon_control_poll()). */
#define UROCE_DAEMON_HEARTBEAT_MS 1000u

/* PDs, CQs, AHs, SRQs in the whole daemon (device limits of QUERY_DEVICE). */
#define DAEMON_MAX_PD UROCE_MAX_QP
#define DAEMON_MAX_CQ UROCE_MAX_QP
#define DAEMON_MAX_AH UROCE_MAX_QP
#define DAEMON_MAX_SRQ UROCE_MAX_QP
/* QUERY_DEVICE's vendor id: 0xffffff, no IEEE OUI, as Linux's rxe. */
#define UROCE_VENDOR_ID_NONE 0xffffffu

/* Objects per session: handles are session id << 16 | index. The table is
 * made of chunks that never move, because workers read AH entries. */
#define SESSION_MAX_OBJS 65535u
#define OBJ_CHUNK 256u
#define OBJ_CHUNKS ((SESSION_MAX_OBJS + OBJ_CHUNK) / OBJ_CHUNK)

enum obj_type {
	OBJ_FREE = 0,
	OBJ_SEG,
	OBJ_PD,
	OBJ_MR,
	OBJ_CQ,
	OBJ_QP,
	OBJ_AH,
	OBJ_SRQ,
};

/* An object table entry: pointer | type, the type in the low 3 bits (every
 * object is at least 8-byte aligned), stored and loaded whole. */
#define OBJ_TYPE_MASK 7u

struct session;
struct dworker;
struct dgen;
struct dcm;      /* the connection manager (dcm.h) */
struct dcm_sess;

/* ------------------------------------------------------------------------ */
/* Objects. "ctl:" fields are the control thread's; "wrk:" fields are the  */
/* owner worker's once the object is placed; the rest never change.        */
/* ------------------------------------------------------------------------ */

struct dseg {
	struct uroce_shm_segment seg;
	uint32_t refs;                  /* ctl: MRs over it */
	/* Zero-copy packets whose payload the device may still read here
	 * (atomic: workers add, the device's release takes away). The mapping
	 * stays until it reads 0, whatever the client does (seg_put()). */
	uint32_t zc_inflight;
	struct dseg *grave_next;        /* ctl: on the daemon's graveyard */
};

struct dpd {
	struct uroce_eng_pd *pd;
	/*
	 * An XRC domain (IBA 1.2 XRC) is a PD-table object too (the table has
	 * no type bit left): pd is then its own hidden PD, which only its TGT
	 * QPs are created in (their R_Keys are checked against the PD of the
	 * XRC SRQ a request names). pd_get() refuses it where a PD is meant.
	 */
	bool is_xrcd;
	uint32_t xrcd_id;               /* daemon-wide, non-zero: the engines' domain number */
	int xrcd_worker;                /* ctl: -1 until its first TGT QP or XRC SRQ */
	uint32_t xrcd_users;            /* ctl: TGT QPs and XRC SRQs in it */
};

struct dmr {
	struct uroce_eng_mr *mr;
	struct dseg *seg;
	/* what it was registered with, for REREG_MR to keep what it does not change */
	struct dpd *pd;
	uint64_t seg_offset;
	uint64_t length;
	uint64_t iova;
	uint32_t access;
};

struct dah {
	struct uroce_eng_ah *ah;
};

struct dcq {
	struct session *owner;
	uint32_t handle;
	uint32_t size;
	int evfd;
	struct uroce_shm_segment seg;
	int worker;                     /* ctl: -1 until the first QP places it */
	uint32_t qps;                   /* ctl: QPs on it */
	struct uroce_eng_cq *cq;        /* wrk (created by the placing command) */
	struct dworker *wk;             /* wrk: the worker it is placed on */
	struct uroce_shm_ring ring;     /* wrk: producer, the client untrusted */
	uint32_t pending;               /* wrk: CQEs written, not yet published */
	bool qualifies;                 /* wrk: a pending CQE wakes a solicited arm */
	bool dirty;                     /* wrk: on the worker's dirty list */
	bool overflowed;                /* wrk */
	bool err_reported;              /* wrk: CQ_ERR sent once */
	struct dcq *dirty_next;         /* wrk */
	/* Moderation (MODIFY_CQ): ctl until placed, then wrk (CMD_CQ_MODERATE).
	 * A window opens at the first CQE an arm asks an event for; the event
	 * is claimed when mod_count CQEs came in it or at mod_due_us. */
	uint16_t mod_count;             /* 0: the period alone */
	uint16_t mod_period_us;         /* 0: off, an event at once */
	uint32_t mod_n;                 /* wrk: CQEs in the open window */
	uint64_t mod_due_us;            /* wrk: 0: no window open */
	bool mod_qualifies;             /* wrk: a CQE in it wakes a solicited arm */
	struct dcq *mod_next;           /* wrk: on the worker's moderated list, */
	struct dcq *mod_prev;           /* wrk: in the order of mod_due_us */
};

/*
 * A shared receive queue (IBA 10.2.9). Its doorbell is a slot of the block
 * of db_worker, chosen at creation; the SRQ itself is placed with its first
 * QP (worker). Its WQEs are taken from the client's ring into the engine
 * SRQ when its doorbell rings (if it rings on the SRQ's own worker), and on
 * demand whenever a message finds the engine SRQ empty. The limit event
 * compares the WQEs the SRQ holds (engine plus ring) with the armed limit.
 */
struct dsrq {
	struct session *owner;
	uint32_t handle;
	unsigned int db_worker;         /* the block its doorbell slot is in */
	uint32_t slot;
	uint32_t max_wr;
	uint32_t max_sge;
	struct uroce_shm_segment seg;
	int worker;                     /* ctl: -1 until its first QP places it */
	uint32_t qps;                   /* ctl: QPs on it */
	struct dpd *pd;
	struct dpd *xrcd;               /* XRC SRQ: its domain (NULL: a plain SRQ) */
	struct dcq *cq;                 /* XRC SRQ: the CQ its receives complete to */
	uint32_t srqn;                  /* XRC SRQ: its number (ibv_get_srq_num) */
	struct uroce_eng_srq *srq;      /* wrk */
	struct uroce_shm_ring ring;     /* wrk once placed: consumer, untrusted */
	uint32_t limit;                 /* armed srq_limit, 0: not armed (ctl, then wrk) */
	bool failed;                    /* wrk: ring corrupt, no more WQEs taken */
};

struct dqp {
	struct session *owner;
	uint32_t handle;
	int worker;
	uint32_t slot;
	uint32_t qpn;
	uint32_t type;
	uint32_t sig_all;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	struct dpd *pd;
	struct dcq *scq;
	struct dcq *rcq;
	struct dsrq *srq;
	struct dpd *xrcd;               /* XRC TGT QP: its domain (scq, rcq NULL) */
	struct uroce_shm_segment seg;
	struct uroce_eng_qp *qp;        /* wrk */
	struct uroce_shm_ring sq;       /* wrk: consumer, untrusted */
	struct uroce_shm_ring rq;       /* wrk: consumer, untrusted */
	/* wrk: receive WQEs read from rq into the engine whose ring slots are
	 * not released yet: a slot goes back to the client only when its WQE
	 * completes, so the client can have exactly max_recv_wr outstanding */
	uint32_t rq_held;
	bool rq_deferred;               /* wrk: a look left receives in rq (RQ_LOW) */
	bool rq_dirty;                  /* wrk: on the worker's rq_dirty list */
	struct dqp *rq_dirty_next;      /* wrk */
	bool failed;                    /* wrk: a ring was corrupt, QP forced to ERR */
};

/* Slots a worker polls without their doorbell after they had work, per session. */
#define HOT_SLOTS 8

/* One session's doorbell block and slots on one worker (wrk, except s). */
struct dwsess {
	struct session *s;
	struct uroce_shm_db_reader rd;
	/* Slots served lately (worker.c, session_doorbells()): their rings are
	 * looked at every round, the doorbell block only every few. */
	uint16_t hot[HOT_SLOTS];
	uint8_t hot_idle[HOT_SLOTS];    /* rounds each has found nothing */
	uint8_t n_hot;
	uint8_t rounds_unharvested;     /* rounds since the doorbells were read */
	uintptr_t slot[UROCE_SHM_DB_SLOTS]; /* struct dqp * | 1, struct dsrq * | 2, or 0 */
};

#define SLOT_QP 1u
#define SLOT_SRQ 2u
#define SLOT_MASK 3u

struct session {
	struct session *next;
	int fd;
	uint16_t id;
	bool hello;
	bool dead;
	uint16_t minor;                 /* the client's ABI minor (HELLO) */
	pid_t pid;
	uid_t uid;
	unsigned int n_db_blocks;       /* doorbell blocks the client has: 1, or one per worker */
	int last_cq_worker;             /* worker of the CQ placed last, -1: none yet */
	struct uroce_shm_segment db;
	uintptr_t *objs[OBJ_CHUNKS];    /* entries: see OBJ_TYPE_MASK */
	uint32_t nobjs;
	struct dwsess *ws[UROCE_DAEMON_MAX_WORKERS];
	/* slots in use per worker's block: one bit each */
	uint64_t *slot_bits[UROCE_DAEMON_MAX_WORKERS];
	struct dgen *gens;              /* ctl: its load generators (gen.c) */
	uint32_t last_gen_id;           /* ctl: the id given last */
	struct dcm_sess *cm;            /* ctl: its rdma_cm ids and channels (cmctl.c) */
};

/* ------------------------------------------------------------------------ */
/* Control → worker commands (worker_call), worker → control events         */
/* ------------------------------------------------------------------------ */

enum dcmd_type {
	CMD_BARRIER,      /* nothing: returning proves a quiescent point */
	CMD_WS_ADD,       /* start serving a session's doorbell block */
	CMD_WS_DEL,       /* stop serving it */
	CMD_CQ_PLACE,     /* create the engine CQ of a CQ placed here */
	CMD_CQ_DESTROY,
	CMD_CQ_RESIZE,    /* move the CQ's CQEs into a new ring (u.cq_resize) */
	CMD_CQ_MODERATE,  /* set its moderation (u.cq_mod) */
	CMD_SRQ_CREATE,
	CMD_SRQ_DESTROY,
	CMD_SRQ_LIMIT,    /* arm (or disarm) the SRQ limit */
	CMD_SRQ_QUERY,
	CMD_QP_CREATE,
	CMD_QP_DESTROY,
	CMD_QP_MODIFY,
	CMD_QP_QUERY,
	CMD_QP_TO_ERR,
	CMD_QUIESCE,      /* every QP to ERR, flushes delivered */
	CMD_STATS,
	CMD_GEN,          /* a load generator's step (gen.c: u.gen.op) */
};

/* Engine-side facts of one QP, as CMD_QP_QUERY returns them. */
struct dqp_state {
	struct uroce_eng_qp_attr attr;
	uint32_t sq_queued;             /* WQEs in the client's ring, not yet taken */
	uint32_t rq_queued;
	bool failed;
	unsigned int n_cnt;
	uint64_t cnt[UROCE_CNT_MAX];
	struct uroce_eng_cc_state cc;           /* reaction point state */
	struct uroce_eng_cc_params cc_params;   /* the QP's congestion parameters */
	struct uroce_eng_resp_reject reject;    /* the last request refused (seq 0: none) */
};

/* What a worker counts (CMD_STATS adds its engine's transport counters): the
 * rows of daemon_stats.def kept by workers, and its loop rounds. */
#define DWORKER_CNT_CTL(name)
#define DWORKER_CNT_WRK(name) uint64_t name;
#define DWORKER_CNT_ALL(name) uint64_t name;
struct dworker_cnt {
#define UROCE_DAEMON_STAT(name, type, kept_by, desc) DWORKER_CNT_##kept_by(name)
#include "daemon_stats.def"
#undef UROCE_DAEMON_STAT
	uint64_t polls;                 /* loop rounds */
};

struct dcmd {
	enum dcmd_type type;
	int rc;
	union {
		struct dwsess *ws;
		struct dcq *cq;
		struct {
			struct dcq *cq;
			struct uroce_shm_segment *seg;
			uint32_t size;
		} cq_resize;
		struct {
			struct dcq *cq;
			uint16_t count;
			uint16_t period_us;
		} cq_mod;
		struct {
			struct dsrq *srq;
			struct dpd *pd;
			uint32_t limit;
		} srq;
		struct {
			struct dqp *qp;
			const struct uroce_eng_qp_attr *attr;
			int mask;
			struct dqp_state *out;
		} qp;
		struct {
			struct dworker_cnt cnt;
			uint64_t eng[UROCE_CNT_MAX];
			unsigned int qps;       /* QPs placed */
			unsigned int flushed;   /* CMD_QUIESCE */
		} stats;
		struct {
			struct dgen *g;
			unsigned int op;        /* gen.c's own steps */
			uint32_t first;
			uint32_t count;
			void *out;
		} gen;
	} u;
};

/* An event for a client, raised on a worker, sent by the control thread. */
struct devent {
	uint16_t session_id;
	uint16_t reserved;
	uint32_t type;                  /* enum uroce_async_event_type */
	uint32_t handle;
};

#define DWORKER_EVENTS 256u

/* A request a QP's responder refused, or a QP's requester that failed, for
 * the control thread's log. */
struct dreject {
	uint16_t session_id;
	uint8_t is_req;                 /* q, else r */
	uint8_t reserved;
	int32_t pid;
	union {
		struct uroce_eng_resp_reject r;
		struct uroce_eng_req_error q;
	} u;
};

#define DWORKER_REJECTS 16u

/* ------------------------------------------------------------------------ */
/* Worker and daemon                                                         */
/* ------------------------------------------------------------------------ */

struct loop_frame;

struct dworker {
	struct uroce_daemon *d;
	unsigned int idx;
	/* runs a command (worker.c); worker_call() calls it directly when the
	 * daemon has no threads */
	void (*exec)(struct dworker *w, struct dcmd *c);
	struct uroce_eng *eng;
	void *port_ctx;
	/* wrk: sessions whose doorbell block this worker serves */
	struct dwsess **ws;
	unsigned int n_ws;
	unsigned int cap_ws;
	/* wrk: CQs with CQEs written since the last publish, in the order of
	 * their first CQE: a client waiting on several CQs through one channel
	 * hears of them in completion order, as from a HCA */
	struct dcq *dirty;
	struct dcq **dirty_tail;
	bool cqe_streamed;          /* a CQE of this round went by streaming stores */
	/* wrk: moderated CQs with a window open (an event owed, not yet due),
	 * soonest due first */
	struct dcq *moderated;
	struct dcq *moderated_tail;
	/* wrk: QPs with receive completions since the last publish, whose ring
	 * slots are released before those CQEs are published */
	struct dqp *rq_dirty;
	/* wrk: placed QPs by QPN index (SRQ accounting of completions, events) */
	struct dqp **qps;
	/* wrk: loopback */
	struct loop_frame **loop_free;  /* frames free to send, a stack */
	uint32_t loop_nfree;
	struct loop_frame *loop_head;   /* frames to deliver to this worker's engine */
	struct loop_frame **loop_tail;
	struct loop_frame *loop_frames; /* the pool's memory */
	uint32_t *zc_ref;               /* a run of zero-copy frames home from one segment */
	uint32_t zc_ref_n;              /* (loop_zc_done()): references not yet given back */
	void *loop_mem;                 /* rings to and from the other workers */
	uint64_t now_us;                /* wrk: this poll's time */
	struct dworker_cnt cnt;         /* wrk */
	struct dgen *gens;              /* wrk: load generators placed here (gen.c) */
	/* mailbox: the control thread writes req, the worker done */
	struct {
		uint64_t seq;
		struct dcmd *cmd;
	} req __attribute__((aligned(DAEMON_CACHE_LINE)));
	struct {
		uint64_t seq;
	} done __attribute__((aligned(DAEMON_CACHE_LINE)));
	uint64_t handled;               /* wrk: last request seq executed */
	/* event ring: the worker writes ev_tail, the control thread ev_head */
	uint32_t ev_tail __attribute__((aligned(DAEMON_CACHE_LINE)));
	uint32_t ev_head __attribute__((aligned(DAEMON_CACHE_LINE)));
	struct devent ev[DWORKER_EVENTS];
	/* rejection ring: the worker writes rej_tail, the control thread rej_head */
	uint32_t rej_tail __attribute__((aligned(DAEMON_CACHE_LINE)));
	uint32_t rej_head __attribute__((aligned(DAEMON_CACHE_LINE)));
	struct dreject rej[DWORKER_REJECTS];
};

struct uroce_daemon {
	/* the status segment (uroce_shm_status.h): heartbeat (ctl), futex
	 * words (workers); clients map status_fd read-only */
	struct uroce_shm_status *status;
	int status_fd;
	int lfd;
	int epfd;                       /* listening socket and every session socket */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	unsigned int n_gid;
	uint8_t gids[UROCE_DAEMON_GID_MAX][16]; /* port 1; all zero: empty slot */
	uint8_t active_mtu;             /* enum uroce_mtu */
	uint32_t max_sessions;
	uint16_t next_sid;
	bool threaded;
	const struct uroce_daemon_port_ops *port;
	void *port_ctx;
	uint64_t (*clock_us)(void *ctx); /* a worker's clock (port's or shell's); NULL: w->now_us */
	void (*worker_stats_fn)(void *ctx, unsigned int worker,
				struct uroce_daemon_worker_stats *st);
	void *worker_stats_ctx;
	struct session *sessions;
	struct uroce_eng_dev *dev;
	unsigned int n_workers;
	unsigned int next_worker;       /* round robin of placement */
	uint32_t xrcd_next;             /* the last XRC domain number given */
	uint32_t loop_frames;
	struct dworker *w[UROCE_DAEMON_MAX_WORKERS];
	uint32_t zc_min;                /* payload bytes from which packets go zero-copy */
	uint64_t gen_mem_max;           /* ctl: bytes all generators may hold */
	uint64_t gen_mem_used;          /* ctl: bytes they hold now */
	struct dseg *graveyard;         /* ctl: freed segments the device still reads */
	struct uroce_daemon_stats st;   /* ctl: the control thread's counts */
	/* ctl: responder rejections logged in the current second, and not */
	uint64_t rej_window_s;
	unsigned int rej_logged;
	uint64_t rej_unlogged;
	struct dcm *cm;                 /* QP1 and the CM (dcm.h) */
};

/* ------------------------------------------------------------------------ */
/* core.c                                                                    */
/* ------------------------------------------------------------------------ */

int obj_add(struct session *s, uint8_t type, void *p, uint32_t *handle);
int obj_get(struct session *s, uint32_t handle, uint8_t type, void **p);
void obj_del(struct session *s, uint32_t handle);
/* The object of entry @p i of @p s (NULL if free) and its type. */
void *obj_at(struct session *s, uint32_t i, uint8_t *type);
/* Run @p c on worker @p w and wait for it. @return c->rc. */
int worker_call(struct uroce_daemon *d, unsigned int w, struct dcmd *c);
/* Wait until every worker has passed a quiescent point. */
void daemon_barrier(struct uroce_daemon *d);
/* Wake worker @p w if it sleeps (after giving it work). Any thread. */
void worker_wake(struct dworker *w);
/* The same by index: another worker wakes one without reading its struct
 * dworker, whose lines that worker writes all the time. */
void worker_wake_at(struct uroce_daemon *d, unsigned int idx);
/* The status segment: created before the workers, destroyed after them. */
int status_create(struct uroce_daemon *d);
void status_destroy(struct uroce_daemon *d);
/* The engine-side facts of @p qp, from its worker. @return 0 or -errno. */
int qp_state_query(struct uroce_daemon *d, struct dqp *qp, struct dqp_state *st);
uint32_t pow2_at_least(uint32_t v);
/* Start resolving the next hop of @p gid through the port (core.c).
 * @return 0 known (or no port), -EAGAIN being resolved, -errno. */
int route_prime(struct uroce_daemon *d, const uint8_t gid[16]);

/*
 * Move @p cq's CQEs not yet consumed into a ring of @p size entries formatted
 * in @p seg, at the same indices (so the client's consumer index, the arm
 * word and cq_judged stay valid), and make it the CQ's ring; the old segment
 * is unmapped. Run by the CQ's worker, or by the control thread while the
 * CQ is placed on none. @return 0, -EINVAL (more CQEs than @p size), -EIO.
 */
int cq_ring_move(struct dcq *cq, struct uroce_shm_segment *seg, uint32_t size);

#endif /* DAEMON_CORE_H */
