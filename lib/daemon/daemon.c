/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The control thread of lib/daemon: listening socket and epoll, client
 * sessions and their handle tables, the framing of the control protocol of
 * lib/shm (requests themselves are in control.c), events to clients, the
 * mailbox calls into workers, and the public API. See doc/verbs.md and
 * doc/architecture.md.
 *
 * Trust: nothing read from a client (socket or shared memory) is trusted.
 * Control bodies are checked field by field after uroce_shm_msg_validate();
 * the workers read WQEs field by field, once, and check what they read.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "uroce_common.h"
#include "uroce_daemon.h"
#include "uroce_shm.h"

#include "control.h"
#include "gen_internal.h"
#include "worker.h"
#include "dcm.h"

/* Work bounds of one control round. */
#define MSGS_PER_POLL 16
#define ACCEPTS_PER_POLL 8
#define EPOLL_BATCH 32

/* epoll data of the listening socket; sessions carry their pointer. */
#define EP_LISTEN ((uint64_t)0)
#define EP_WATCH ((uint64_t)1)


/* ------------------------------------------------------------------------ */
/* Events to clients                                                         */
/* ------------------------------------------------------------------------ */


/* Rejections and requester failures logged per second at most: a peer that
 * sends garbage must not flood the log (the rest are counted, and the next
 * responder line says how many). */
#define REJECT_LOG_PER_S 20u

static const char *
nak_name(uint8_t nak)
{
	static const char *const n[] = {"PSN sequence error", "invalid request",
					"remote access error", "remote operational error",
					"invalid RD request"};

	if (nak == UROCE_RESP_REJECT_DROPPED)
		return "dropped";
	return nak < sizeof(n) / sizeof(n[0]) ? n[nak] : "?";
}

/*
 * One log line for a request a responder refused: the request, the
 * responder's expected PSN and message in progress, and every saved
 * READ/ATOMIC resource (doc/operations.md, "A QP in ERR after a remote
 * error"). Control thread only.
 */
/* The kind of a saved responder resource (uroce_eng_resp_res.type). */
static const char *
res_type_name(uint8_t type)
{
	static const char *const names[] = { "free", "READ", "ATOMIC", "ATOMIC_WRITE", "FLUSH" };

	return type < UROCE_ARRAY_SIZE(names) ? names[type] : "?";
}

static void
log_reject(struct uroce_daemon *d, const struct dreject *e)
{
	const struct uroce_eng_resp_reject *r = &e->u.r;
	/* A READ response that could not be sent has no request packet. */
	const struct uroce_opcode_info *oi = r->check == UROCE_RCHK_READ_MR ? NULL :
					     uroce_opcode_get(r->opcode);
	char res[UROCE_MAX_DEST_RD_ATOMIC * 112 + 1], more[64] = "", msg[80];
	size_t off = 0;
	uint32_t i;

	if (d->rej_unlogged != 0)
		snprintf(more, sizeof(more), "; %" PRIu64 " before it not logged", d->rej_unlogged);
	res[0] = '\0';
	for (i = 0; i < r->n_res && i < UROCE_MAX_DEST_RD_ATOMIC && off < sizeof(res); i++) {
		const struct uroce_eng_resp_res *x = &r->res[i];
		int n;

		if (x->type == 0)
			continue;
		n = snprintf(res + off, sizeof(res) - off,
			     " [%u %s psn %#x-%#x va %#" PRIx64 " len %u rkey %#x msn %u%s%s"
			     " cur %#x resid %u]", i, res_type_name(x->type),
			     x->first_psn, x->last_psn, x->va, x->len, x->rkey, x->msn,
			     x->queued ? " queued" : "", x->replay ? " replay" : "", x->cur_psn,
			     x->resid);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (r->in_msg == 2)
		snprintf(msg, sizeof(msg), "WRITE (va %#" PRIx64 " rkey %#x resid %u)", r->w_va,
			 r->w_rkey, r->w_resid);
	else
		snprintf(msg, sizeof(msg), "%s", r->in_msg == 1 ? "SEND" : "none");
	uroce_log(r->nak == UROCE_RESP_REJECT_DROPPED ? UROCE_LOG_NOTICE : UROCE_LOG_WARNING,
		  "uroce daemon: qp %#x (client %u pid %d): responder refused %s psn %#x "
		  "(rejection %" PRIu64 ", t %" PRIu64 " us): check %s, %s; epsn %#x msn %u; "
		  "va %#" PRIx64 " rkey %#x len %u; in message %s; resources:%s%s", r->qpn,
		  e->session_id, e->pid,
		  oi != NULL ? oi->name : r->check == UROCE_RCHK_READ_MR ? "(READ response)" : "?",
		  r->psn, r->seq, r->time_us, uroce_resp_check_name(r->check), nak_name(r->nak),
		  r->epsn, r->msn, r->va, r->rkey, r->len, msg, off == 0 ? " none" : res, more);
}

/* One log line for a requester that failed its oldest WQE: the WQE, the
 * PSNs and its last events off the good path. Control thread only. */
static void
log_req_error(const struct dreject *e)
{
	static const char *const kind[] = {"?", "timeout", "nak_seq", "implied_nak",
					   "retry_skipped", "rnr", "nak"};
	const struct uroce_eng_req_error *q = &e->u.q;
	char ev[UROCE_REQ_EVENTS * 96 + 1];
	size_t off = 0;
	uint32_t i;

	ev[0] = '\0';
	for (i = 0; i < q->n_ev && i < UROCE_REQ_EVENTS && off < sizeof(ev); i++) {
		const struct uroce_eng_req_event *x = &q->ev[i];
		int n = snprintf(ev + off, sizeof(ev) - off,
				 " [t %" PRIu64 " %s psn %#x comp %#x req %#x retries %u]", x->time_us,
				 x->kind < sizeof(kind) / sizeof(kind[0]) ? kind[x->kind] : "?", x->psn,
				 x->comp_psn, x->req_psn, x->retry_left);

		if (n < 0)
			break;
		off += (size_t)n;
	}
	uroce_log(UROCE_LOG_WARNING,
		  "uroce daemon: qp %#x (client %u pid %d): requester gave up (t %" PRIu64 " us): %s "
		  "on WR opcode %u of %u bytes, psn %#x-%#x; comp_psn %#x req_psn %#x psn_hi %#x; "
		  "%u WQEs outstanding (%u READ/atomic); retry_cnt %u timeout %u; events:%s",
		  q->qpn, e->session_id, e->pid, q->time_us, uroce_wc_status_name(q->status),
		  q->opcode, q->length, q->first_psn, q->last_psn, q->comp_psn, q->req_psn,
		  q->psn_hi, q->outstanding, q->rd_outstanding, q->retry_cnt, q->timeout,
		  off == 0 ? " none" : ev);
}

/* Log the rejections and requester failures the workers recorded. */
static unsigned int
drain_rejects(struct uroce_daemon *d)
{
	struct dreject e;
	unsigned int n = 0, i;

	struct timespec ts;

	for (i = 0; i < d->n_workers; i++)
		while (worker_reject(d->w[i], &e)) {
			n++;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			if ((uint64_t)ts.tv_sec != d->rej_window_s) {
				d->rej_window_s = (uint64_t)ts.tv_sec;
				d->rej_logged = 0;
			}
			if (d->rej_logged >= REJECT_LOG_PER_S) {
				d->rej_unlogged++;
				continue;
			}
			d->rej_logged++;
			if (e.is_req)
				log_req_error(&e);
			else
				log_reject(d, &e);
			d->rej_unlogged = 0;
		}
	return n;
}

/* Send the events the workers raised to their sessions. */
static unsigned int
drain_events(struct uroce_daemon *d)
{
	struct devent ev[32];
	unsigned int total = 0, i, n, k;

	for (i = 0; i < d->n_workers; i++) {
		while ((n = worker_events(d->w[i], ev, 32)) > 0) {
			for (k = 0; k < n; k++) {
				struct session *s;

				for (s = d->sessions; s != NULL; s = s->next)
					if (s->id == ev[k].session_id)
						break;
				session_event(d, s, ev[k].type, ev[k].handle);
			}
			total += n;
		}
	}
	return total + drain_rejects(d);
}

/* ------------------------------------------------------------------------ */
/* Control protocol framing                                                  */
/* ------------------------------------------------------------------------ */

/* Hand a valid request to its side: resources (control.c), introspection
 * (introspect.c), a load generator (gen_control.c) or the connection
 * manager (cmctl.c). Only HELLO comes before HELLO. */
static int
dispatch(struct uroce_daemon *d, struct session *s, uint16_t type, const void *body, int *fd,
	 struct reply *r)
{
	int rc;

	if (type != UROCE_SHM_MSG_HELLO && !s->hello)
		return -EPROTO;
	rc = introspect_dispatch(d, s, type, body, r);
	if (rc == -EOPNOTSUPP)
		rc = gen_dispatch(d, s, type, body, r);
	if (rc == -EOPNOTSUPP)
		rc = control_dispatch(d, s, type, body, fd, r);
	if (rc == -EOPNOTSUPP && type >= UROCE_SHM_MSG_CM_CHANNEL_OPEN && type <= UROCE_SHM_MSG_CM_QUERY)
		rc = dcm_dispatch(d, s, type, body, fd, r);
	return rc;
}

/* Answer one message. @return false if the session must be closed. */
static bool
session_msg(struct uroce_daemon *d, struct session *s, const uint8_t *buf, size_t len, int fd)
{
	const struct uroce_shm_msg_hdr *h = (const void *)buf;
	struct reply r;
	uint16_t type;
	int rc, n;
	bool keep = true;

	rc = uroce_shm_msg_validate(buf, len, false, fd >= 0);
	if (rc == -EPROTONOSUPPORT) {
		/* Incompatible client: a HELLO response in our major carrying our
		 * version in its frozen prefix, then hang up (doc/shm-abi.md). */
		struct uroce_shm_msg_hello_resp *p;

		d->st.hello_refused++;
		n = uroce_shm_msg_init(r.buf, sizeof(r.buf), UROCE_SHM_MSG_HELLO,
				       len >= sizeof(*h) ? h->seq : 0, true, -EPROTONOSUPPORT);
		if (n > 0) {
			p = (void *)(r.buf + sizeof(*h));
			p->abi_major = UROCE_SHM_ABI_MAJOR;
			p->abi_minor = UROCE_SHM_ABI_MINOR;
			uroce_shm_sock_send(s->fd, r.buf, (size_t)n, -1);
		}
		if (fd >= 0)
			close(fd);
		return false;
	}
	if (rc != 0) {
		d->st.bad_msgs++;
		if (fd >= 0)
			close(fd);
		/* Garbage we cannot even frame: the client is broken; hang up. */
		if (len < sizeof(*h) || rc == -EPROTO || rc == -EOPNOTSUPP || rc == -EBADMSG)
			return false;
		type = h->type;
		n = uroce_shm_msg_init(r.buf, sizeof(r.buf), type, h->seq, true, rc);
		if (n < 0 || uroce_shm_sock_send(s->fd, r.buf, (size_t)n, -1) != n)
			return false;
		return true;
	}
	type = h->type;
	n = uroce_shm_msg_init(r.buf, sizeof(r.buf), type, h->seq, true, 0);
	if (n < 0) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	r.body = r.buf + sizeof(*h);
	r.fd = -1;
	rc = dispatch(d, s, type, buf + sizeof(*h), &fd, &r);
	if (fd >= 0)
		close(fd); /* a descriptor the request did not consume */
	d->st.msgs++;
	if (rc != 0) {
		n = uroce_shm_msg_init(r.buf, sizeof(r.buf), type, h->seq, true, rc);
		r.fd = -1;
		if (type == UROCE_SHM_MSG_HELLO && rc == -EPROTONOSUPPORT) {
			struct uroce_shm_msg_hello_resp *hp = r.body;

			d->st.hello_refused++;
			hp->abi_major = UROCE_SHM_ABI_MAJOR;
			hp->abi_minor = UROCE_SHM_ABI_MINOR;
			keep = false;
		}
	}
	if (uroce_shm_sock_send(s->fd, r.buf, (size_t)n, r.fd) != n)
		return false;
	return keep;
}

static unsigned int
session_control(struct uroce_daemon *d, struct session *s)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	unsigned int n;

	for (n = 0; n < MSGS_PER_POLL && !s->dead; n++) {
		int fd = -1;
		ssize_t len = uroce_shm_sock_recv(s->fd, buf, sizeof(buf), &fd);

		if (len == -EAGAIN || len == -EWOULDBLOCK)
			break;
		if (len == 0 || (len < 0 && len != -EMSGSIZE && len != -ENOBUFS &&
				 len != -EBADMSG)) {
			s->dead = true; /* hang-up or socket error */
			break;
		}
		if (len < 0) {
			d->st.bad_msgs++;
			s->dead = true; /* truncated or fd-stuffed: a broken client */
			break;
		}
		if (!session_msg(d, s, buf, (size_t)len, fd))
			s->dead = true;
	}
	return n;
}

static void
session_free(struct uroce_daemon *d, struct session *s)
{
	unsigned int i;

	if (s->fd >= 0) {
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, s->fd, NULL);
		close(s->fd);
		s->fd = -1;
	}
	dcm_session_free(d, s); /* its rdma_cm ids (their peers are told) and channels */
	gen_session_free(d, s); /* its load generators: their QPs, CQs, MRs and memory */
	control_session_free(d, s);
	uroce_shm_segment_unmap(&s->db);
	for (i = 0; i < OBJ_CHUNKS; i++)
		free(s->objs[i]);
	for (i = 0; i < UROCE_DAEMON_MAX_WORKERS; i++)
		free(s->slot_bits[i]);
	free(s);
	d->st.sessions--;
}

static void
accept_clients(struct uroce_daemon *d)
{
	int i;

	for (i = 0; i < ACCEPTS_PER_POLL; i++) {
		struct epoll_event ee;
		struct session *s;
		gid_t gid;
		int fd = accept4(d->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		if (d->st.sessions >= d->max_sessions) {
			close(fd);
			continue;
		}
		s = calloc(1, sizeof(*s));
		if (s == NULL) {
			close(fd);
			continue;
		}
		s->fd = fd;
		s->db.fd = -1;
		s->last_cq_worker = -1;
		if (uroce_shm_sock_peercred(fd, &s->pid, &s->uid, &gid) != 0)
			s->pid = -1;
		/* Session ids are never 0 and skip ids still in use. */
		for (;;) {
			struct session *o;

			if (++d->next_sid == 0)
				d->next_sid = 1;
			for (o = d->sessions; o != NULL; o = o->next)
				if (o->id == d->next_sid)
					break;
			if (o == NULL)
				break;
		}
		s->id = d->next_sid;
		memset(&ee, 0, sizeof(ee));
		ee.events = EPOLLIN | EPOLLRDHUP;
		ee.data.ptr = s;
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ee) != 0) {
			close(fd);
			free(s);
			continue;
		}
		s->next = d->sessions;
		d->sessions = s;
		d->st.sessions++;
		uroce_log(UROCE_LOG_INFO, "uroce daemon: client %u connected (pid %d uid %u)",
			  s->id, (int)s->pid, (unsigned int)s->uid);
	}
}

static unsigned int
reap_sessions(struct uroce_daemon *d)
{
	struct session **pp, *s;
	unsigned int n = 0;

	for (pp = &d->sessions; (s = *pp) != NULL;) {
		if (!s->dead) {
			pp = &s->next;
			continue;
		}
		*pp = s->next;
		uroce_log(UROCE_LOG_INFO, "uroce daemon: client %u gone, reclaiming", s->id);
		session_free(d, s);
		d->st.sessions_reaped++;
		n++;
	}
	return n;
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                */
/* ------------------------------------------------------------------------ */

struct uroce_daemon *
uroce_daemon_create(const struct uroce_daemon_conf *conf)
{
	static const uint8_t zero[16];
	struct epoll_event ee;
	struct sockaddr_un sa;
	struct uroce_daemon *d;
	unsigned int i;
	int err;

	if (conf == NULL || conf->sock_path == NULL ||
	    strlen(conf->sock_path) >= sizeof(sa.sun_path) || conf->sock_path[0] == '\0' ||
	    conf->n_gid > UROCE_DAEMON_GID_MAX || conf->active_mtu > UROCE_MTU_4096 ||
	    conf->n_workers > UROCE_DAEMON_MAX_WORKERS ||
	    (conf->port_ops != NULL && conf->port_ops->tx_send_zc != NULL &&
	     conf->port_ops->tx_zc_reap == NULL) ||
	    (conf->port_ops != NULL && (conf->port_ops->tx_alloc == NULL ||
					conf->port_ops->tx_send == NULL ||
					conf->port_ops->tx_free == NULL))) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return NULL;
	d->lfd = -1;
	d->epfd = -1;
	d->status_fd = -1;
	strcpy(d->path, conf->sock_path);
	d->max_sessions = conf->max_sessions ? conf->max_sessions : 64;
	d->gen_mem_max = conf->gen_mem_max ? conf->gen_mem_max : UROCE_DAEMON_GEN_MEM_DEFAULT;
	d->threaded = conf->threaded;
	d->port = conf->port_ops;
	d->port_ctx = conf->port_ctx;
	/* A worker's clock, chosen once: the port's, else the shell's, else
	 * CLOCK_MONOTONIC read per round (worker_now_us()). */
	d->clock_us = conf->port_ops != NULL && conf->port_ops->now_us != NULL ?
		      conf->port_ops->now_us : conf->clock_us;
	d->worker_stats_fn = conf->worker_stats_fn;
	d->worker_stats_ctx = conf->worker_stats_ctx;
	d->n_workers = conf->n_workers ? conf->n_workers : 1;
	d->loop_frames = conf->loop_frames ? conf->loop_frames : 1024;
	/* Without a port every frame is a loop frame (loop_send_zc()). */
	if (conf->port_ops == NULL)
		d->zc_min = conf->loop_zc_min;
	else
		d->zc_min = conf->port_ops->tx_send_zc != NULL ? conf->zc_min : 0;
	if (conf->n_gid != 0) {
		d->n_gid = conf->n_gid;
		memcpy(d->gids, conf->gids, sizeof(d->gids[0]) * conf->n_gid);
	} else if (memcmp(conf->gid, zero, 16) == 0) {
		/* ::ffff:198.18.0.1 (RFC 2544 benchmarking range) */
		static const uint8_t def[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
						198, 18, 0, 1};
		d->n_gid = 1;
		memcpy(d->gids[0], def, 16);
	} else {
		d->n_gid = 1;
		memcpy(d->gids[0], conf->gid, 16);
	}
	d->active_mtu = conf->active_mtu ? conf->active_mtu : UROCE_MTU_4096;
	err = status_create(d);
	if (err != 0) {
		errno = -err;
		goto fail;
	}
	d->dev = uroce_eng_dev_create();
	if (d->dev == NULL)
		goto fail;
	for (i = 0; i < d->n_workers; i++) {
		d->w[i] = worker_create(d, i, conf);
		if (d->w[i] == NULL)
			goto fail;
	}
	/* QP1 on worker 0 and the CM on this thread (no worker runs yet). */
	err = dcm_create(d, conf);
	if (err != 0) {
		errno = -err;
		goto fail;
	}
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0)
		goto fail;
	d->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (d->lfd < 0)
		goto fail;
	memset(&ee, 0, sizeof(ee));
	ee.events = EPOLLIN;
	ee.data.u64 = EP_LISTEN;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->lfd, &ee) != 0)
		goto fail;
	/* Bind under a temporary name and move it into place once listening, so
	 * the socket file exists only when a connect can succeed (a client that
	 * waits for the file never races the listen). */
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s.%d", d->path, (int)getpid()) >=
	    sizeof(sa.sun_path))
		strcpy(sa.sun_path, d->path); /* no room for a suffix: bind in place */
	unlink(sa.sun_path);
	if (bind(d->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		goto fail;
	if (chmod(sa.sun_path, conf->sock_mode ? conf->sock_mode : 0660) != 0 ||
	    listen(d->lfd, 64) != 0 ||
	    (strcmp(sa.sun_path, d->path) != 0 && rename(sa.sun_path, d->path) != 0)) {
		err = errno;
		unlink(sa.sun_path);
		errno = err;
		goto fail;
	}
	return d;
fail:
	err = errno ? errno : ENOMEM;
	if (d->lfd >= 0)
		close(d->lfd);
	if (d->epfd >= 0)
		close(d->epfd);
	dcm_destroy(d);
	for (i = 0; i < d->n_workers; i++)
		worker_destroy(d->w[i]);
	uroce_eng_dev_destroy(d->dev);
	status_destroy(d);
	free(d);
	errno = err;
	return NULL;
}

void
uroce_daemon_destroy(struct uroce_daemon *d)
{
	unsigned int i;

	if (d == NULL)
		return;
	/* The workers are stopped: their objects are ours to take down. */
	uroce_daemon_workers_stopped(d);
	while (d->sessions != NULL) {
		struct session *s = d->sessions;

		d->sessions = s->next;
		session_free(d, s);
	}
	close(d->lfd);
	close(d->epfd);
	unlink(d->path);
	dcm_destroy(d); /* QP1 before its worker's engine */
	for (i = 0; i < d->n_workers; i++)
		worker_destroy(d->w[i]);
	uroce_eng_dev_destroy(d->dev);
	/* The shell stopped its ports first, so the device let go of every
	 * zero-copy packet; should one still count, its segment's bookkeeping
	 * stays (a late release must not write freed memory). */
	seg_graveyard_sweep(d);
	while (d->graveyard != NULL) {
		struct dseg *g = d->graveyard;

		d->graveyard = g->grave_next;
		uroce_log(UROCE_LOG_WARNING, "uroce daemon: a segment still had %u zero-copy "
			  "packets out at exit", __atomic_load_n(&g->zc_inflight, __ATOMIC_ACQUIRE));
		uroce_shm_segment_unmap(&g->seg);
	}
	status_destroy(d);
	free(d);
}

/* Tell clients this thread runs (uroce_shm_status.h). A relaxed store of a
 * line no one else writes. */
static void
heartbeat(struct uroce_daemon *d)
{
	if (d->status != NULL)
		__atomic_store_n(&d->status->heartbeat_ms, uroce_shm_now_ms(), __ATOMIC_RELAXED);
}

unsigned int
uroce_daemon_control_poll(struct uroce_daemon *d, int timeout_ms)
{
	struct epoll_event ev[EPOLL_BATCH];
	unsigned int work = 0;
	int n, i;

	heartbeat(d);
	work += drain_events(d);
	n = epoll_wait(d->epfd, ev, EPOLL_BATCH, work > 0 ? 0 : timeout_ms);
	for (i = 0; i < n; i++) {
		struct session *s = ev[i].data.ptr;

		if (ev[i].data.u64 == EP_WATCH) {
			work++; /* the caller's news: it reads the descriptor itself */
			continue;
		}
		if (ev[i].data.u64 == EP_LISTEN) {
			accept_clients(d);
			work++;
			continue;
		}
		work += session_control(d, s);
		if (ev[i].events & (EPOLLHUP | EPOLLERR))
			s->dead = true;
		/* EPOLLRDHUP: read what is left; the next read returns 0. */
		if ((ev[i].events & EPOLLRDHUP) && !s->dead)
			work += session_control(d, s);
	}
	work += reap_sessions(d);
	work += drain_events(d);
	work += dcm_control_poll(d); /* MADs from QP1, CM timers, event channels */
	if (d->graveyard != NULL)
		work += seg_graveyard_sweep(d);
	return work;
}

unsigned int
uroce_daemon_worker_poll(struct uroce_daemon *d, unsigned int worker)
{
	return worker < d->n_workers ? worker_poll(d->w[worker]) : 0;
}

unsigned int
uroce_daemon_poll(struct uroce_daemon *d)
{
	unsigned int work, i;

	work = uroce_daemon_control_poll(d, 0);
	for (i = 0; i < d->n_workers; i++)
		work += worker_poll(d->w[i]);
	return work;
}

int
uroce_daemon_watch_fd(struct uroce_daemon *d, int fd)
{
	struct epoll_event ee = {.events = EPOLLIN, .data.u64 = EP_WATCH};

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ee) == 0 ? 0 : -errno;
}

bool
uroce_daemon_worker_sleep(struct uroce_daemon *d, unsigned int worker, uint64_t us,
			  bool (*more)(void *ctx), void *ctx)
{
	return worker < d->n_workers && worker_sleep(d->w[worker], us, more, ctx);
}

void
uroce_daemon_worker_wake(struct uroce_daemon *d, unsigned int worker)
{
	if (worker < d->n_workers)
		worker_wake(d->w[worker]);
}

int
uroce_daemon_worker_rx(struct uroce_daemon *d, unsigned int worker, const struct uroce_pkt *pkt,
		       const struct uroce_frame *frame)
{
	if (worker >= d->n_workers)
		return 0;
	return worker_rx(d->w[worker], pkt, frame);
}

int
uroce_daemon_rx(struct uroce_daemon *d, const struct uroce_pkt *pkt,
		const struct uroce_frame *frame)
{
	unsigned int w = uroce_daemon_qpn_worker(pkt->dqpn);

	/* A QPN no worker owns: worker 0's engine counts it (rx_bad_qpn). */
	return worker_rx(d->w[w < d->n_workers ? w : 0], pkt, frame);
}

uint64_t
uroce_daemon_worker_deadline(struct uroce_daemon *d, unsigned int worker)
{
	uint64_t e, g;

	if (worker >= d->n_workers)
		return UINT64_MAX;
	e = uroce_eng_next_deadline(d->w[worker]->eng);
	/* A rate-limited or timed load generator wakes the worker too. */
	g = d->w[worker]->gens != NULL ? gen_deadline(d->w[worker]) : UINT64_MAX;
	return g < e ? g : e;
}

unsigned int
uroce_daemon_worker_count(const struct uroce_daemon *d)
{
	return d->n_workers;
}

void
uroce_daemon_workers_stopped(struct uroce_daemon *d)
{
	d->threaded = false;
}

unsigned int
uroce_daemon_quiesce(struct uroce_daemon *d)
{
	unsigned int n = 0, i;
	struct dcmd c;

	for (i = 0; i < d->n_workers; i++) {
		memset(&c, 0, sizeof(c));
		c.type = CMD_QUIESCE;
		worker_call(d, i, &c);
		n += c.u.stats.flushed;
	}
	drain_events(d);
	return n;
}

int
uroce_daemon_fd(const struct uroce_daemon *d)
{
	return d == NULL ? -EINVAL : d->epfd;
}

