/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * libFuzzer target for the daemon's control protocol and the shared memory it
 * hands out, through the public API only: uroce_daemon_create() once, then
 * for each input a new client on its UNIX socket that sends what the input
 * says, while the test calls uroce_daemon_poll().
 *
 * An input is an optional automatic HELLO and then records:
 *   - a message of any type (known or not) with a body of the right length,
 *     a wrong length, or raw bytes (garbage, truncated headers), carrying no
 *     descriptor, a sealed memfd of a size the input picks, an eventfd, or a
 *     descriptor of the wrong kind (an unsealed memfd, a pipe);
 *   - a write of input bytes anywhere in a segment the daemon sent (doorbell
 *     block, QP rings, CQ ring, SRQ ring), and a doorbell rung for any slot:
 *     the daemon then reads rings, WQEs and doorbells the client scribbled.
 * Body words whose top byte is 0xFE, 0xFD or 0xFC are replaced with a handle
 * the daemon issued to this client, a handle of this client's session with
 * the low bits from the input, or a handle of another client's, so that the
 * fuzzer reaches past the handle checks without guessing session ids.
 *
 * Invariants, besides ASan/UBSan: every message the daemon sends validates
 * as a daemon message (uroce_shm_msg_validate); once the client is gone the
 * daemon reaps its session and every object it created (PDs, MRs, CQs, QPs,
 * SRQs, AHs, segments are back to the other client's alone); the other
 * client's objects still answer it.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "uroce_common.h"
#include "uroce_daemon.h"
#include "uroce_shm.h"

#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RECORDS 48
#define MAX_SEGS 8
#define MAX_HANDLES 16

struct client {
	int s;
	uint32_t seq;
	uint32_t sid;                    /* session id, from the first handle */
	uint32_t handles[MAX_HANDLES];
	unsigned int n_handles;
	struct uroce_shm_segment seg[MAX_SEGS]; /* segments the daemon sent */
	unsigned int n_seg;
	int db;                          /* index in seg[] of the doorbell block, or -1 */
};

static char sock_path[108];
static struct uroce_daemon *dmn;
static struct client other;              /* the bystander with live objects */
static struct uroce_daemon_stats base;   /* counts with only the bystander */

static void
die(const char *what, int err)
{
	fprintf(stderr, "fuzz_daemon_ctl: %s: %s\n", what, strerror(err));
	abort();
}

static void
quiet(enum uroce_log_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

static void
pump(unsigned int rounds)
{
	unsigned int i;

	for (i = 0; i < rounds; i++)
		uroce_daemon_poll(dmn);
}

static int
connect_client(void)
{
	struct sockaddr_un sa;
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (s < 0)
		die("socket", errno);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		die("connect", errno);
	return s;
}

static bool
creates_handle(uint16_t type)
{
	switch (type) {
	case UROCE_SHM_MSG_ALLOC_SEGMENT:
	case UROCE_SHM_MSG_ALLOC_PD:
	case UROCE_SHM_MSG_REG_MR:
	case UROCE_SHM_MSG_CREATE_CQ:
	case UROCE_SHM_MSG_CREATE_QP:
	case UROCE_SHM_MSG_CREATE_SRQ:
	case UROCE_SHM_MSG_CREATE_AH:
		return true;
	default:
		return false;
	}
}

/* Take every message the daemon has sent @p c; check each, keep handles and
 * segments. @return messages read. */
static unsigned int
drain_replies(struct client *c)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	const struct uroce_shm_msg_hdr *h = (const void *)buf;
	unsigned int n = 0;

	for (;;) {
		int fd = -1, rc;
		ssize_t len = uroce_shm_sock_recv(c->s, buf, sizeof(buf), &fd);

		if (len <= 0)
			break;
		n++;
		rc = uroce_shm_msg_validate(buf, (size_t)len, true, fd >= 0);
		if (rc != 0) {
			fprintf(stderr, "daemon sent an invalid message (type %u, %zd bytes): %s\n",
				len >= 8 ? h->type : 0, len, strerror(-rc));
			abort();
		}
		if (h->status == 0 && creates_handle(h->type) && c->n_handles < MAX_HANDLES) {
			uint32_t hd;

			memcpy(&hd, buf + sizeof(*h), 4);
			c->handles[c->n_handles++] = hd;
			if (c->sid == 0)
				c->sid = hd >> 16;
		}
		if (fd >= 0) {
			if (c->n_seg < MAX_SEGS &&
			    uroce_shm_segment_map(&c->seg[c->n_seg], fd, 1) == 0) {
				if (h->type == UROCE_SHM_MSG_HELLO && c->db < 0)
					c->db = (int)c->n_seg;
				c->n_seg++;
			} else {
				close(fd);
			}
		}
	}
	return n;
}

/* Send one message and run the daemon until it has answered (or a bound). */
static void
rpc(struct client *c, const void *msg, size_t len, int fd)
{
	unsigned int i;

	if (uroce_shm_sock_send(c->s, msg, len, fd) < 0)
		return;
	for (i = 0; i < 16; i++) {
		uroce_daemon_poll(dmn);
		if (drain_replies(c) > 0)
			break;
	}
}

static void
client_close(struct client *c)
{
	unsigned int i;

	for (i = 0; i < c->n_seg; i++)
		uroce_shm_segment_unmap(&c->seg[i]);
	close(c->s);
	memset(c, 0, sizeof(*c));
	c->s = -1;
	c->db = -1;
}

static void
hello(struct client *c)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	struct uroce_shm_msg_hello_req *hq = (void *)(buf + sizeof(struct uroce_shm_msg_hdr));
	int n = uroce_shm_msg_init(buf, sizeof(buf), UROCE_SHM_MSG_HELLO, ++c->seq, false, 0);

	hq->abi_major = UROCE_SHM_ABI_MAJOR;
	hq->abi_minor = UROCE_SHM_ABI_MINOR;
	memcpy(hq->name, "fuzz", 4);
	rpc(c, buf, (size_t)n, -1);
}

/* A simple request for the bystander's set-up. */
static uint32_t
setup_rpc(struct client *c, uint16_t type, const void *body, size_t blen, int fd)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	unsigned int before = c->n_handles;
	int n = uroce_shm_msg_init(buf, sizeof(buf), type, ++c->seq, false, 0);

	if (n < 0 || (size_t)n != sizeof(struct uroce_shm_msg_hdr) + blen)
		die("setup message", EINVAL);
	if (blen > 0) /* ALLOC_PD has no body: memcpy from NULL is undefined */
		memcpy(buf + sizeof(struct uroce_shm_msg_hdr), body, blen);
	rpc(c, buf, (size_t)n, fd);
	if (c->n_handles != before + 1)
		die(uroce_shm_msg_type_name(type), EPROTO);
	return c->handles[before];
}

static void
setup(void)
{
	struct uroce_daemon_conf conf;
	struct uroce_shm_segment seg;
	struct uroce_shm_msg_alloc_segment_req sr = {0};
	struct uroce_shm_msg_reg_mr_req mr;
	struct uroce_shm_msg_create_cq_req cq = {.cqe = 16};
	struct uroce_shm_msg_create_qp_req qp;
	uint32_t pdh, segh, cqh;
	int rc;

	uroce_log_set(quiet, UROCE_LOG_ERR);
	snprintf(sock_path, sizeof(sock_path), "/tmp/uroce-fuzz-ctl-%d.sock", (int)getpid());
	memset(&conf, 0, sizeof(conf));
	conf.sock_path = sock_path;
	conf.sock_mode = 0600;
	/* uroced's gen_mem_mb at its smallest: an input's generators are made
	 * and refused as on any daemon, without filling hundreds of MiB. */
	conf.gen_mem_max = 1u << 20;
	dmn = uroce_daemon_create(&conf);
	if (dmn == NULL)
		die("uroce_daemon_create", errno);
	/* The bystander: a client with a segment, an MR, a CQ and a QP. */
	memset(&other, 0, sizeof(other));
	other.db = -1;
	other.s = connect_client();
	pump(2);
	hello(&other);
	rc = uroce_shm_segment_create(&seg, "fuzz-other", 65536, 0);
	if (rc != 0)
		die("segment", -rc);
	sr.size = seg.size;
	segh = setup_rpc(&other, UROCE_SHM_MSG_ALLOC_SEGMENT, &sr, sizeof(sr), seg.fd);
	uroce_shm_segment_unmap(&seg);
	pdh = setup_rpc(&other, UROCE_SHM_MSG_ALLOC_PD, NULL, 0, -1);
	memset(&mr, 0, sizeof(mr));
	mr.pd_handle = pdh;
	mr.seg_handle = segh;
	mr.length = 65536;
	mr.iova = 0x7000000;
	mr.access = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE;
	setup_rpc(&other, UROCE_SHM_MSG_REG_MR, &mr, sizeof(mr), -1);
	cqh = setup_rpc(&other, UROCE_SHM_MSG_CREATE_CQ, &cq, sizeof(cq), -1);
	memset(&qp, 0, sizeof(qp));
	qp.pd_handle = pdh;
	qp.send_cq = cqh;
	qp.recv_cq = cqh;
	qp.srq_handle = UROCE_SHM_HANDLE_NONE;
	qp.qp_type = UROCE_QPT_RC;
	qp.cap.max_send_wr = 8;
	qp.cap.max_recv_wr = 8;
	qp.cap.max_send_sge = 1;
	qp.cap.max_recv_sge = 1;
	setup_rpc(&other, UROCE_SHM_MSG_CREATE_QP, &qp, sizeof(qp), -1);
	uroce_daemon_stats(dmn, &base);
}

/* Replace marked words of a request body with handles (see the file comment). */
static void
patch_handles(const struct client *c, uint8_t *body, size_t blen)
{
	size_t off;

	for (off = 0; off + 4 <= blen; off += 4) {
		uint32_t w;

		memcpy(&w, body + off, 4);
		switch (w >> 24) {
		case 0xFE:
			if (c->n_handles > 0)
				w = c->handles[(w & 0xFF) % c->n_handles];
			break;
		case 0xFD:
			w = c->sid << 16 | (w & 0xFFFF);
			break;
		case 0xFC:
			w = other.handles[(w & 0xFF) % other.n_handles];
			break;
		default:
			continue;
		}
		memcpy(body + off, &w, 4);
	}
}

/* A descriptor of the kind the input asks for, or -1. */
static int
make_fd(struct fin *in, uint8_t kind)
{
	struct uroce_shm_segment seg;
	int fd = -1, p[2];

	switch (kind & 7) {
	case 1: /* sealed memfd, 4 KiB .. 64 KiB */
		if (uroce_shm_segment_create(&seg, "fuzz", 4096u * (1 + fin_u8(in) % 16), 0) == 0) {
			fd = dup(seg.fd);
			uroce_shm_segment_unmap(&seg);
		}
		break;
	case 2:
		fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		break;
	case 3: /* a memfd nobody sealed */
		fd = memfd_create("fuzz-unsealed", MFD_CLOEXEC);
		if (fd >= 0 && ftruncate(fd, 4096) != 0) {
			close(fd);
			fd = -1;
		}
		break;
	case 4:
		if (pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0) {
			close(p[0]);
			fd = p[1];
		}
		break;
	case 5:
		fd = eventfd(0, EFD_CLOEXEC); /* blocking: must be refused */
		break;
	default:
		break;
	}
	return fd;
}

static void
rec_message(struct fin *in, struct client *c)
{
	uint8_t buf[UROCE_SHM_MSG_MAX + 64];
	struct uroce_shm_msg_hdr *h = (void *)buf;
	uint8_t mode = fin_u8(in), fdkind = fin_u8(in);
	uint16_t type = fin_u8(in);
	size_t len;
	int blen, fd;

	memset(buf, 0, sizeof(buf));
	switch (mode & 3) {
	case 0:
	case 1: /* well framed, body from the input */
		type = (uint16_t)(type % (UROCE_SHM_MSG_TYPE_MAX + 2));
		blen = uroce_shm_msg_body_len(type, false);
		if (blen < 0)
			blen = fin_u8(in) % 64;
		h->magic = UROCE_SHM_MSG_MAGIC;
		h->abi_major = UROCE_SHM_ABI_MAJOR;
		h->type = type;
		h->seq = ++c->seq;
		len = sizeof(*h) + (size_t)blen;
		fin_bytes(in, buf + sizeof(*h), (size_t)blen);
		patch_handles(c, buf + sizeof(*h), (size_t)blen);
		h->length = (uint32_t)len;
		if (mode & 4) /* a length field that lies */
			h->length = fin_u16(in);
		if (mode & 8)
			h->status = (int32_t)fin_u32(in);
		if (mode & 16)
			h->flags = fin_u16(in);
		if (mode & 32)
			h->reserved = fin_u16(in);
		if (mode & 64) /* cut short, or longer than the header says */
			len = fin_u16(in) % (UROCE_SHM_MSG_MAX + 65);
		break;
	default: /* raw bytes */
		len = fin_u16(in) % (UROCE_SHM_MSG_MAX + 65);
		len = fin_bytes(in, buf, len);
		if (mode & 4 && len >= 4)
			h->magic = UROCE_SHM_MSG_MAGIC;
		break;
	}
	if (len == 0)
		len = 1;
	fd = make_fd(in, fdkind);
	rpc(c, buf, len, fd);
	if (fd >= 0)
		close(fd);
}

/* Scribble on a segment the daemon shared, then maybe ring a doorbell. */
static void
rec_scribble(struct fin *in, struct client *c)
{
	uint8_t m = fin_u8(in);
	uint8_t bytes[16];
	size_t k;

	if (c->n_seg > 0) {
		struct uroce_shm_segment *g = &c->seg[fin_u8(in) % c->n_seg];
		size_t off = fin_u32(in) % g->size;

		k = fin_bytes(in, bytes, 1 + (m & 15));
		if (off + k > g->size)
			k = g->size - off;
		memcpy((uint8_t *)g->addr + off, bytes, k);
	}
	if ((m & 0x80) && c->db >= 0) {
		struct uroce_shm_db_block *db = c->seg[c->db].addr;

		if (m & 0x40) {
			db->summary = fin_u64(in);
			db->words[fin_u8(in) % UROCE_SHM_DB_WORDS] = fin_u64(in);
		} else {
			uroce_shm_db_ring(db, fin_u16(in) % UROCE_SHM_DB_SLOTS);
		}
	}
	pump(4);
	drain_replies(c);
}

static void
check_reclaimed(void)
{
	struct uroce_daemon_stats st;
	unsigned int i;

	for (i = 0; i < 1000; i++) {
		uroce_daemon_poll(dmn);
		uroce_daemon_stats(dmn, &st);
		if (st.sessions == base.sessions)
			break;
	}
	if (st.sessions != base.sessions || st.segments != base.segments || st.pds != base.pds ||
	    st.mrs != base.mrs || st.cqs != base.cqs || st.qps != base.qps ||
	    st.ahs != base.ahs || st.srqs != base.srqs) {
		fprintf(stderr, "not reclaimed: sessions %u/%u segments %u/%u pds %u/%u mrs %u/%u "
			"cqs %u/%u qps %u/%u ahs %u/%u srqs %u/%u\n", st.sessions, base.sessions,
			st.segments, base.segments, st.pds, base.pds, st.mrs, base.mrs, st.cqs,
			base.cqs, st.qps, base.qps, st.ahs, base.ahs, st.srqs, base.srqs);
		abort();
	}
}

/* The bystander still gets answers, and its QP is still its own. */
static void
check_bystander(void)
{
	uint8_t buf[UROCE_SHM_MSG_MAX];
	struct uroce_shm_msg_query_qp_req *qq = (void *)(buf + sizeof(struct uroce_shm_msg_hdr));
	int n = uroce_shm_msg_init(buf, sizeof(buf), UROCE_SHM_MSG_QUERY_QP, ++other.seq, false, 0);
	uint8_t rb[UROCE_SHM_MSG_MAX];
	const struct uroce_shm_msg_hdr *rh = (const void *)rb;
	unsigned int i;
	ssize_t len = -EAGAIN;
	int fd = -1;

	qq->qp_handle = other.handles[other.n_handles - 1];
	if (uroce_shm_sock_send(other.s, buf, (size_t)n, -1) != n)
		die("bystander send", EPIPE);
	for (i = 0; i < 100 && len == -EAGAIN; i++) {
		uroce_daemon_poll(dmn);
		/* Skip asynchronous events; the answer is the QUERY_QP response. */
		while ((len = uroce_shm_sock_recv(other.s, rb, sizeof(rb), &fd)) > 0 &&
		       rh->type == UROCE_SHM_MSG_ASYNC_EVENT)
			;
	}
	if (len <= 0 || rh->type != UROCE_SHM_MSG_QUERY_QP || rh->status != 0) {
		fprintf(stderr, "bystander's QUERY_QP: %zd bytes, status %d\n", len,
			len > 0 ? rh->status : 0);
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned long runs;
	struct fin in = {data, size};
	struct client c;
	unsigned int rec;
	uint8_t start;

	if (dmn == NULL)
		setup();
	if (size > 8192)
		return 0;
	memset(&c, 0, sizeof(c));
	c.db = -1;
	c.s = connect_client();
	pump(2);
	start = fin_u8(&in);
	if (start & 1)
		hello(&c);
	for (rec = 0; rec < MAX_RECORDS && fin_left(&in); rec++) {
		if (fin_u8(&in) % 4 == 3)
			rec_scribble(&in, &c);
		else
			rec_message(&in, &c);
	}
	pump(8);
	drain_replies(&c);
	client_close(&c);
	check_reclaimed();
	if (++runs % 64 == 0)
		check_bystander();
	return 0;
}
