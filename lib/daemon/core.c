/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The core both sides of lib/daemon share (core.h): handle tables and the
 * mailbox through which the control thread runs commands on a worker.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

uint32_t
pow2_at_least(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* ------------------------------------------------------------------------ */
/* Handles: chunks that never move, entries stored and loaded whole          */
/* ------------------------------------------------------------------------ */

int
obj_add(struct session *s, uint8_t type, void *p, uint32_t *handle)
{
	uint32_t i;

	/* The first free entry; a new chunk when every chunk is full. */
	for (i = 0; i < s->nobjs; i++)
		if (__atomic_load_n(&s->objs[i / OBJ_CHUNK][i % OBJ_CHUNK], __ATOMIC_RELAXED) == 0)
			break;
	if (i == s->nobjs) {
		if (s->nobjs == SESSION_MAX_OBJS)
			return -ENOMEM;
		if (s->objs[i / OBJ_CHUNK] == NULL) {
			s->objs[i / OBJ_CHUNK] = calloc(OBJ_CHUNK, sizeof(uintptr_t));
			if (s->objs[i / OBJ_CHUNK] == NULL)
				return -ENOMEM;
		}
		s->nobjs++;
	}
	/* Release: a worker that finds this entry finds the object filled in. */
	__atomic_store_n(&s->objs[i / OBJ_CHUNK][i % OBJ_CHUNK], (uintptr_t)p | type,
			 __ATOMIC_RELEASE);
	*handle = (uint32_t)s->id << 16 | i;
	return 0;
}

void *
obj_at(struct session *s, uint32_t i, uint8_t *type)
{
	uintptr_t e;

	if (i >= s->nobjs)
		return NULL;
	e = __atomic_load_n(&s->objs[i / OBJ_CHUNK][i % OBJ_CHUNK], __ATOMIC_ACQUIRE);
	*type = (uint8_t)(e & OBJ_TYPE_MASK);
	return (void *)(e & ~(uintptr_t)OBJ_TYPE_MASK);
}

/* The object of @p handle if it is this session's and of @p type. -EPERM for
 * another session's handle, -ENOENT for no such object of that type. Safe on
 * a worker for AH entries (the table never moves; entries are read whole). */
int
obj_get(struct session *s, uint32_t handle, uint8_t type, void **p)
{
	uint8_t t = OBJ_FREE;
	void *o;

	if ((handle >> 16) != s->id)
		return -EPERM;
	o = obj_at(s, handle & 0xffffu, &t);
	if (o == NULL || t != type)
		return -ENOENT;
	*p = o;
	return 0;
}

void
obj_del(struct session *s, uint32_t handle)
{
	uint32_t i = handle & 0xffffu;

	__atomic_store_n(&s->objs[i / OBJ_CHUNK][i % OBJ_CHUNK], 0, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------------ */
/* Control → worker calls                                                    */
/* ------------------------------------------------------------------------ */

/*
 * Run @p c on worker @p w. With threads, the command goes through the
 * worker's mailbox: the control thread publishes the command pointer and a
 * new sequence number (release), the worker executes it at the top of its
 * next round, where it holds no pointer to any object (a quiescent point),
 * and publishes the sequence number back (release); the control thread
 * waits for it (acquire), pausing, then yielding the CPU if the worker is
 * slow to come round (it may share a core, or sleep while idle).
 */
int
worker_call(struct uroce_daemon *d, unsigned int w, struct dcmd *c)
{
	struct dworker *wk = d->w[w];
	uint64_t seq;
	unsigned int spins = 0;

	if (!d->threaded) {
		wk->exec(wk, c);
		return c->rc;
	}
	seq = wk->req.seq + 1;
	wk->req.cmd = c;
	/* Seq_cst: before the load of the worker's sleeping word. */
	__atomic_store_n(&wk->req.seq, seq, __ATOMIC_SEQ_CST);
	worker_wake(wk);
	while (__atomic_load_n(&wk->done.seq, __ATOMIC_ACQUIRE) != seq) {
		if (++spins < 2000) {
			__builtin_ia32_pause();
		} else {
			struct timespec ts = {0, 10000};

			nanosleep(&ts, NULL);
		}
	}
	return c->rc;
}

void
daemon_barrier(struct uroce_daemon *d)
{
	struct dcmd c;
	unsigned int i;

	if (!d->threaded)
		return;
	for (i = 0; i < d->n_workers; i++) {
		memset(&c, 0, sizeof(c));
		c.type = CMD_BARRIER;
		worker_call(d, i, &c);
	}
}

/*
 * Ask the port for the next hop of @p gid now, so that it is known before
 * the first packet: as a ConnectX, whose driver resolves the MAC while the
 * QP goes to RTR or the AH is made (a packet sent while it is still being
 * resolved is dropped, tx_neigh_pending, and costs RC a retransmission
 * timeout). Control thread, worker 0's context (the port op's rule).
 * @return the port's answer (uroce_daemon_port_ops.resolve); 0 with no port
 * or no resolution.
 */
int
route_prime(struct uroce_daemon *d, const uint8_t gid[16])
{
	if (d->port == NULL || d->port->resolve == NULL)
		return 0;
	return d->port->resolve(d->w[0]->port_ctx, gid);
}

/* The engine-side facts of @p qp (CMD_QP_QUERY on its worker). */
int
qp_state_query(struct uroce_daemon *d, struct dqp *qp, struct dqp_state *st)
{
	struct dcmd c;

	memset(&c, 0, sizeof(c));
	c.type = CMD_QP_QUERY;
	c.u.qp.qp = qp;
	c.u.qp.out = st;
	return worker_call(d, (unsigned int)qp->worker, &c);
}

/* ------------------------------------------------------------------------ */
/* The status segment                                                        */
/* ------------------------------------------------------------------------ */

void
worker_wake_at(struct uroce_daemon *d, unsigned int idx)
{
	/* The work was published by a release store; the load of the sleeping
	 * word must not pass it (store-load order needs a full fence). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	uroce_shm_status_wake(d->status, idx);
}

void
worker_wake(struct dworker *w)
{
	worker_wake_at(w->d, w->idx);
}

int
status_create(struct uroce_daemon *d)
{
	/* FUTURE_WRITE: no client can ever map it writable (a forged heartbeat
	 * or sleeping word would mislead every other client); this mapping,
	 * made before the seal, stays writable. */
	const int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL;
	struct uroce_shm_status *st;
	int fd, err;

	fd = memfd_create("uroce-status", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, UROCE_SHM_STATUS_SIZE) != 0)
		goto fail;
	st = mmap(NULL, UROCE_SHM_STATUS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (st == MAP_FAILED)
		goto fail;
	if (fcntl(fd, F_ADD_SEALS, seals) != 0) {
		err = -errno;
		munmap(st, UROCE_SHM_STATUS_SIZE);
		close(fd);
		return err;
	}
	st->magic = UROCE_SHM_STATUS_MAGIC;
	st->n_workers = (uint16_t)d->n_workers;
	st->heartbeat_period_ms = UROCE_DAEMON_HEARTBEAT_MS;
	st->heartbeat_ms = uroce_shm_now_ms();
	d->status = st;
	d->status_fd = fd;
	return 0;
fail:
	err = -errno;
	close(fd);
	return err;
}

void
status_destroy(struct uroce_daemon *d)
{
	if (d->status != NULL)
		munmap(d->status, UROCE_SHM_STATUS_SIZE);
	if (d->status_fd >= 0)
		close(d->status_fd);
	d->status = NULL;
	d->status_fd = -1;
}

int
cq_ring_move(struct dcq *cq, struct uroce_shm_segment *seg, uint32_t size)
{
	struct uroce_shm_ring *from = &cq->ring, to;
	uint32_t used, tail, i;
	int rc;

	/* The client's consumer index, validated against ours. */
	used = from->size - uroce_shm_ring_free_count(from);
	if (uroce_shm_ring_is_corrupt(from) || cq->pending != 0)
		return -EIO;
	if (used > size)
		return -EINVAL;
	tail = from->head - used;
	rc = uroce_shm_ring_init(&to, seg->addr, seg->size, size, sizeof(struct uroce_shm_cqe),
				 tail, UROCE_SHM_RING_PRODUCER, UROCE_SHM_RING_F_UNTRUSTED);
	if (rc != 0)
		return rc;
	if (used > 0) {
		if (uroce_shm_ring_prod_reserve(&to, used) != used)
			return -EIO;
		for (i = 0; i < used; i++)
			memcpy(uroce_shm_ring_prod_slot(&to, i),
			       from->entries + (size_t)((tail + i) & from->mask) * from->entry_size,
			       from->entry_size);
		uroce_shm_ring_prod_commit(&to, used);
	}
	/* The client holds the CQ's lock: neither word moves under us. */
	to.hdr->cq_judged = from->hdr->cq_judged;
	to.hdr->cq_arm = __atomic_load_n(&from->hdr->cq_arm, __ATOMIC_ACQUIRE);
	uroce_shm_segment_unmap(&cq->seg);
	cq->seg = *seg;
	cq->ring = to;
	cq->size = size;
	return 0;
}
