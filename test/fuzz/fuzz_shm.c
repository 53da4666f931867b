/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * libFuzzer target for lib/shm's consumers of shared memory that the other
 * process writes: the daemon's untrusted WQE-ring consumer and CQ producer
 * (with the client's arm word), the client's ring attach, CQ consumer and arm,
 * the doorbell reader, the WQE checks and the control-message validator.
 *
 * One input is one ring (geometry, kind and start index from its first bytes)
 * in an allocation of exactly the size uroce_shm_ring_mem_size() asks for, so
 * ASan sees any access past it, and a sequence of operations that interleave
 * what each side does with arbitrary writes by the "other process" into the
 * header and the entries (indices ahead, behind, far away; torn entries).
 *
 * Invariants checked after each operation (abort on violation):
 *   - no call returns more entries than were asked for or than the ring holds;
 *     a handle's private index moves by exactly what a call returned, and
 *     never from anything written in shared memory;
 *   - once a handle is corrupt every call returns 0 (or -EIO) for good;
 *   - a WQE that passes its check has a known opcode, at most max_sge SGEs or
 *     at most max_inline inline bytes, and a total length (recomputed here in
 *     64 bits) of at most UROCE_MAX_MSG_SIZE;
 *   - the doorbell reader returns only slots below nslots, each at most once
 *     per harvest unless requeued, and then stops;
 *   - a control message that validates has a length equal to its header's,
 *     which is the header plus the body length of its type.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_shm.h"

#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OPS 128

#define CHECK(c)                                                                  \
	do {                                                                      \
		if (!(c)) {                                                       \
			fprintf(stderr, "fuzz_shm: invariant %s failed at line %d\n", \
				#c, __LINE__);                                    \
			abort();                                                  \
		}                                                                 \
	} while (0)

enum kind { K_SEND, K_RECV, K_CQ };

struct state {
	enum kind kind;
	uint8_t *mem;
	size_t len;
	uint32_t size;
	uint32_t esz;
	struct uroce_shm_ring d;   /* the daemon's handle (untrusted peer) */
	struct uroce_shm_ring c;   /* the client's handle */
	bool c_ok;
	uint32_t max_sge, max_inline;
};

static void
check_send_wqe(const struct uroce_shm_send_wqe *w, uint32_t max_sge, uint32_t max_inline)
{
	static uint8_t inl[UROCE_MAX_INLINE];
	/* Half the inputs are read as a UD QP's, half as an RC QP's. */
	struct uroce_shm_wq_limits lim = { max_sge, max_inline,
					   (w->wr_id & 1) ? UROCE_QPT_UD : UROCE_QPT_RC };
	uint64_t total = UINT64_MAX, sum = 0;
	struct uroce_wr_send wr = { .inline_data = inl };
	enum uroce_wc_status st = uroce_shm_send_wqe_read(w, &lim, &wr, &total);
	uint32_t i;

	CHECK(wr.wr_id == w->wr_id && wr.opcode == w->opcode);
	if (st != UROCE_WC_SUCCESS) {
		CHECK(st == UROCE_WC_LOC_QP_OP_ERR || st == UROCE_WC_LOC_LEN_ERR);
		return;
	}
	CHECK(uroce_wr_allowed(w->opcode, lim.qp_type));
	CHECK(w->reserved1 == 0);
	CHECK(lim.qp_type == UROCE_QPT_XRC_SEND ? w->xrc_remote_srqn <= 0xFFFFFF :
						  w->xrc_remote_srqn == 0);
	CHECK(wr.xrc_srqn == w->xrc_remote_srqn);
	CHECK((w->send_flags & ~UROCE_SEND_FLAGS_ALL) == 0);
	/* ATOMIC WRITE and FLUSH: operands in the WQE, no data; a FLUSH's
	 * type and level fit the FETH's bits. */
	if (uroce_wr_props(w->opcode) & UROCE_WRP_EMPTY_RESP)
		CHECK(w->num_sge == 0 && !(w->send_flags & UROCE_SEND_INLINE) && total == 0);
	if (w->opcode == UROCE_WR_FLUSH)
		CHECK(w->wr.flush.type <= 0xF && w->wr.flush.level <= 3 &&
		      wr.swap == ((uint64_t)w->wr.flush.type | (uint64_t)w->wr.flush.level << 4));
	if (w->send_flags & UROCE_SEND_INLINE) {
		CHECK(w->inline_len <= max_inline && w->inline_len <= UROCE_MAX_INLINE);
		CHECK(total == w->inline_len);
	} else {
		CHECK(w->num_sge <= max_sge && w->num_sge <= UROCE_MAX_SGE);
		for (i = 0; i < w->num_sge; i++)
			sum += w->data.sg_list[i].length;
		CHECK(total == sum);
	}
	CHECK(total <= UROCE_MAX_MSG_SIZE);
	CHECK(wr.flags == w->send_flags);
	if (w->send_flags & UROCE_SEND_INLINE)
		CHECK(wr.inline_len == w->inline_len &&
		      memcmp(inl, w->data.inline_data, wr.inline_len) == 0);
	else
		for (i = 0; i < wr.num_sge; i++)
			CHECK(wr.sge[i].addr == w->data.sg_list[i].addr &&
			      wr.sge[i].length == w->data.sg_list[i].length &&
			      wr.sge[i].lkey == w->data.sg_list[i].lkey);
}

static void
check_recv_wqe(const struct uroce_shm_recv_wqe *w, uint32_t max_sge)
{
	uint64_t sum = 0, total;
	struct uroce_wr_recv wr;
	enum uroce_wc_status st = uroce_shm_recv_wqe_read(w, max_sge, &wr);
	uint32_t i;

	CHECK(wr.wr_id == w->wr_id);
	if (st != UROCE_WC_SUCCESS)
		return;
	total = wr.length;
	CHECK(w->num_sge <= max_sge && w->num_sge <= UROCE_MAX_SGE && w->reserved0 == 0);
	for (i = 0; i < w->num_sge; i++)
		sum += w->sg_list[i].length;
	CHECK(total == sum && total <= UROCE_MAX_MSG_SIZE);
}

/* The other process writes anything anywhere in the ring's memory. */
static void
op_scribble(struct fin *in, struct state *s)
{
	uint8_t b[32];
	size_t off = fin_u16(in) % s->len;
	size_t k = fin_bytes(in, b, 1 + fin_u8(in) % sizeof(b));

	if (off + k > s->len)
		k = s->len - off;
	memcpy(s->mem + off, b, k);
}

/* The other process moves an index: near ours, far, or anything. */
static void
op_index(struct fin *in, struct state *s)
{
	struct uroce_shm_ring_hdr *h = (void *)s->mem;
	uint8_t m = fin_u8(in);
	uint32_t base = m & 1 ? h->cons : h->prod;
	uint32_t v;

	switch (m >> 1 & 3) {
	case 0:
		v = base + (uint32_t)(int32_t)(int8_t)fin_u8(in);
		break;
	case 1:
		v = base + s->size + (m >> 3);
		break;
	case 2:
		v = base - 1 - (m >> 3);
		break;
	default:
		v = fin_u32(in);
		break;
	}
	if (m & 0x80)
		h->cons = v;
	else
		h->prod = v;
}

/* The daemon takes WQEs out (copy first) and checks its copies. */
static void
op_daemon_dequeue(struct fin *in, struct state *s)
{
	uint32_t n = fin_u8(in) % (s->size + 3), got, i, head = s->d.head;
	bool was_corrupt = uroce_shm_ring_is_corrupt(&s->d);
	uint8_t *buf;

	if (s->kind == K_CQ) {
		/* The daemon produces CQEs; the client's cons and arm word decide. */
		struct uroce_shm_cqe cqe[8];

		memset(cqe, 0, sizeof(cqe));
		n %= 9;
		for (i = 0; i < n; i++) {
			cqe[i].wr_id = i;
			cqe[i].status = (uint8_t)(fin_u8(in) % 3 ? 0 : 5);
		}
		got = uroce_shm_ring_enqueue_burst(&s->d, cqe, n);
		CHECK(got <= n && got <= s->size);
		CHECK(s->d.head - head == got);
		if (was_corrupt)
			CHECK(got == 0);
		(void)uroce_shm_cq_should_signal(&s->d, fin_u8(in) & 1);
		return;
	}
	buf = malloc((size_t)(n ? n : 1) * s->esz);
	if (buf == NULL)
		return;
	got = uroce_shm_ring_dequeue_burst(&s->d, buf, n);
	CHECK(got <= n && got <= s->size);
	CHECK(s->d.head - head == got);
	if (was_corrupt)
		CHECK(got == 0);
	for (i = 0; i < got; i++) {
		if (s->kind == K_SEND)
			check_send_wqe((const void *)(buf + (size_t)i * s->esz), s->max_sge,
				       s->max_inline);
		else
			check_recv_wqe((const void *)(buf + (size_t)i * s->esz), s->max_sge);
	}
	free(buf);
}

/* The client side does its part: posts WQEs (bytes from the input), or
 * consumes CQEs and arms the CQ. */
static void
op_client(struct fin *in, struct state *s)
{
	uint32_t n = fin_u8(in) % (s->size + 2), got, head;
	uint8_t *buf;

	if (!s->c_ok)
		return;
	head = s->c.head;
	if (s->kind == K_CQ) {
		uint32_t i;

		got = uroce_shm_ring_cons_peek(&s->c, n);
		CHECK(got <= n && got <= s->size);
		for (i = 0; i < got; i++) {
			const struct uroce_shm_cqe *e = uroce_shm_ring_cons_slot(&s->c, i);

			CHECK((const uint8_t *)e >= s->mem + sizeof(struct uroce_shm_ring_hdr) &&
			      (const uint8_t *)(e + 1) <= s->mem + s->len);
		}
		if (got > 0)
			uroce_shm_ring_cons_release(&s->c, got);
		CHECK(s->c.head - head == got);
		(void)uroce_shm_cq_arm(&s->c, fin_u8(in) & 1);
		return;
	}
	buf = calloc(n ? n : 1, s->esz);
	if (buf == NULL)
		return;
	fin_bytes(in, buf, (size_t)n * s->esz);
	got = uroce_shm_ring_enqueue_burst(&s->c, buf, n);
	CHECK(got <= n && got <= s->size);
	CHECK(s->c.head - head == got);
	free(buf);
}

static void
op_counts(struct state *s)
{
	bool corrupt = uroce_shm_ring_is_corrupt(&s->d);
	uint32_t u = s->kind == K_CQ ? uroce_shm_ring_free_count(&s->d)
				     : uroce_shm_ring_used_count(&s->d);

	CHECK(u <= s->size);
	if (corrupt)
		CHECK(u == 0 && uroce_shm_ring_is_corrupt(&s->d));
	if (s->c_ok) {
		u = s->kind == K_CQ ? uroce_shm_ring_used_count(&s->c)
				    : uroce_shm_ring_free_count(&s->c);
		CHECK(u <= s->size);
	}
}

/* The client (re)attaches to whatever the memory holds now, maybe with a
 * length shorter than the ring. */
static void
op_attach(struct fin *in, struct state *s)
{
	size_t len = fin_u8(in) & 1 ? fin_u16(in) % (s->len + 1) : s->len;
	enum uroce_shm_ring_role role = s->kind == K_CQ ? UROCE_SHM_RING_CONSUMER
							: UROCE_SHM_RING_PRODUCER;
	struct uroce_shm_ring r;
	int rc = uroce_shm_ring_attach(&r, s->mem, len, role, 0);

	if (rc != 0) {
		CHECK(rc == -EPROTO || rc == -EPROTONOSUPPORT || rc == -ENOSPC || rc == -EIO ||
		      rc == -EINVAL);
		return;
	}
	CHECK(len >= uroce_shm_ring_mem_size(r.size, r.entry_size));
	CHECK(r.size <= UROCE_SHM_RING_MAX_SIZE && (r.size & (r.size - 1)) == 0);
	/* A ring the other side re-formatted: this handle sees its geometry,
	 * which must still fit the memory. */
	s->c = r;
	s->c_ok = r.size == s->size && r.entry_size == s->esz;
}

static void
op_doorbell(struct fin *in)
{
	struct uroce_shm_db_block *db = aligned_alloc(64, sizeof(*db));
	struct uroce_shm_db_reader rd;
	static uint8_t served[UROCE_SHM_DB_SLOTS];
	uint32_t nslots = fin_u16(in) % (UROCE_SHM_DB_SLOTS + 1);
	unsigned int i, n, rounds = fin_u8(in) % 4 + 1, r, requeued = 0;

	if (db == NULL)
		return;
	memset(db, 0, sizeof(*db));
	uroce_shm_db_reader_init(&rd, db, nslots);
	for (r = 0; r < rounds; r++) {
		/* The client rings some slots, or writes the words directly. */
		n = fin_u8(in) % 16;
		for (i = 0; i < n; i++) {
			uint8_t m = fin_u8(in);

			if (m & 1)
				uroce_shm_db_ring(db, fin_u16(in) % UROCE_SHM_DB_SLOTS);
			else if (m & 2)
				db->summary = fin_u64(in);
			else
				db->words[fin_u8(in) % UROCE_SHM_DB_WORDS] = fin_u64(in);
		}
		memset(served, 0, sizeof(served));
		requeued = 0;
		for (i = 0; i < 2 * UROCE_SHM_DB_SLOTS + 2; i++) {
			int slot = uroce_shm_db_next(&rd);

			if (slot == -EAGAIN)
				break;
			CHECK(slot >= 0 && (uint32_t)slot < nslots);
			/* Once per harvest: a slot comes back only if requeued. */
			CHECK(served[slot] != 1);
			served[slot] = 1;
			if ((fin_u8(in) & 7) == 0 && requeued < 8) {
				uroce_shm_db_requeue(&rd, (uint32_t)slot);
				served[slot] = 2;
				requeued++;
			}
		}
		/* Nothing rings during the loop, so one harvest's slots (each at
		 * most once) plus the requeued ones, then -EAGAIN. */
		CHECK(i <= nslots + requeued);
	}
	free(db);
}

static void
op_message(struct fin *in)
{
	uint8_t raw[UROCE_SHM_MSG_MAX + 16];
	size_t len = fin_bytes(in, raw, fin_u16(in) % sizeof(raw));
	uint8_t *buf = malloc(len ? len : 1);
	bool from_daemon = len & 1, has_fd = len & 2;
	const struct uroce_shm_msg_hdr *h = (const void *)buf;
	uint16_t major, minor;

	if (buf == NULL)
		return;
	memcpy(buf, raw, len);
	if (uroce_shm_msg_validate(buf, len, from_daemon, has_fd) == 0) {
		int blen = uroce_shm_msg_body_len(h->type, from_daemon);

		CHECK(len >= sizeof(*h) && h->length == len);
		CHECK(blen >= 0 && len == sizeof(*h) + (size_t)blen);
		CHECK(h->magic == UROCE_SHM_MSG_MAGIC && h->abi_major == UROCE_SHM_ABI_MAJOR);
	}
	(void)uroce_shm_msg_peer_version(buf, len, &major, &minor);
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t esz[3] = {
		sizeof(struct uroce_shm_send_wqe), sizeof(struct uroce_shm_recv_wqe),
		sizeof(struct uroce_shm_cqe),
	};
	struct fin in = {data, size};
	struct state s;
	uint8_t g;
	uint32_t start;
	unsigned int k;
	enum uroce_shm_ring_role role;
	int rc;

	if (size > 16384)
		return 0;
	memset(&s, 0, sizeof(s));
	g = fin_u8(&in);
	start = fin_u8(&in) & 1 ? fin_u32(&in) : 0u - (fin_u8(&in) % 4); /* near 2^32 too */
	s.kind = (enum kind)(g % 3);
	s.size = 1u << (g / 3 % 7);
	s.esz = esz[s.kind];
	s.max_sge = fin_u8(&in) % (UROCE_MAX_SGE + 2);
	s.max_inline = fin_u16(&in) % (UROCE_MAX_INLINE + 8);
	s.len = uroce_shm_ring_mem_size(s.size, s.esz);
	if (s.len == 0)
		abort();
	/* Exactly the bytes the ring needs (a multiple of 64). */
	s.mem = aligned_alloc(64, s.len);
	if (s.mem == NULL)
		return 0;
	memset(s.mem, 0, s.len);
	rc = uroce_shm_ring_init(&s.d, s.mem, s.len, s.size, s.esz, start,
				 s.kind == K_CQ ? UROCE_SHM_RING_PRODUCER : UROCE_SHM_RING_CONSUMER,
				 UROCE_SHM_RING_F_UNTRUSTED);
	CHECK(rc == 0);
	/* The untrusted handle refuses the zero-copy consumer API. */
	if (s.kind != K_CQ)
		CHECK(uroce_shm_ring_cons_peek(&s.d, 1) == 0);
	role = s.kind == K_CQ ? UROCE_SHM_RING_CONSUMER : UROCE_SHM_RING_PRODUCER;
	rc = uroce_shm_ring_attach(&s.c, s.mem, s.len, role, 0);
	CHECK(rc == 0);
	s.c_ok = true;
	for (k = 0; k < MAX_OPS && fin_left(&in); k++) {
		bool was_corrupt = uroce_shm_ring_is_corrupt(&s.d);

		switch (fin_u8(&in) % 9) {
		case 0:
			op_scribble(&in, &s);
			break;
		case 1:
			op_index(&in, &s);
			break;
		case 2:
		case 3:
			op_daemon_dequeue(&in, &s);
			break;
		case 4:
			op_client(&in, &s);
			break;
		case 5:
			op_attach(&in, &s);
			break;
		case 6:
			op_doorbell(&in);
			break;
		case 7:
			op_message(&in);
			break;
		default:
			break;
		}
		op_counts(&s);
		/* Corruption is sticky. */
		if (was_corrupt)
			CHECK(uroce_shm_ring_is_corrupt(&s.d));
	}
	free(s.mem);
	return 0;
}
