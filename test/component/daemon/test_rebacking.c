/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Component tests of liburoce's re-backing (lib/verbs/rebacking.c):
 * uroce_reg_mr() on ordinary page-aligned memory. The daemon core runs in
 * this process; the clients are forked children that use liburoce:
 *
 *  - the "app" child registers ordinary memory (aligned_alloc, anonymous
 *    mmap, a thread's stack) and checks it through its own pointers;
 *  - the "writer" child (RC QP connected to the app's) serves commands from
 *    the app over a socketpair: RDMA WRITE this pattern to that address with
 *    that rkey, and report the completion status.
 *
 * The app asks this process for the daemon's segment and MR counts over a
 * second socketpair ('S'), or to be SIGKILLed ('K').
 */

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uroce_daemon.h"
#include "uroce_verbs.h"

#include "daemon_core_test.h"
#include "daemon_test_util.h"

#define PAGE 4096u

/* Initialised, so in .data / .rodata (file-backed pages), not .bss. */
static uint8_t data_pages[2 * PAGE] __attribute__((aligned(PAGE))) = {1};
static const uint8_t rodata_page[PAGE] __attribute__((aligned(PAGE))) = {1};

/* In a child: print what failed and exit 1 (never return into Criterion). */
#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: ", __func__, __LINE__);       \
			fprintf(stderr, __VA_ARGS__);                         \
			fprintf(stderr, "\n");                                \
			_exit(1);                                             \
		}                                                             \
	} while (0)

static char sock_path[108];
static struct uroce_daemon *dmn;

/* ------------------------------------------------------------------------ */
/* Helpers shared by both sides                                              */
/* ------------------------------------------------------------------------ */

static uint8_t
pat(size_t i, uint32_t seed)
{
	return (uint8_t)(i * 13 + seed * 101 + (i >> 9) + 1);
}

static void
fill(void *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		((uint8_t *)p)[i] = pat(i, seed);
}

static bool
same(const void *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (((const uint8_t *)p)[i] != pat(i, seed))
			return false;
	return true;
}

/*
 * The mapping that holds @p addr, from /proc/self/smaps: its pathname into
 * @p path and its VmFlags into @p flags. @return false if none holds it.
 */
static bool
vma_of(const void *addr, char *path, size_t plen, char *flags, size_t flen)
{
	uintptr_t a = (uintptr_t)addr;
	char line[512];
	bool in = false, found = false;
	FILE *f = fopen("/proc/self/smaps", "re");

	CHECK(f != NULL, "smaps: %s", strerror(errno));
	path[0] = flags[0] = '\0';
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long s, e, ino;
		char perms[8];
		int pos = 0;

		if (sscanf(line, "%lx-%lx %7s %*x %*x:%*x %lu %n", &s, &e, perms, &ino, &pos) ==
		    4 && pos > 0) {
			if (found)
				break;
			in = a >= s && a < e;
			if (in) {
				size_t k = strcspn(line + pos, "\n");

				k = k < plen ? k : plen - 1;
				memcpy(path, line + pos, k);
				path[k] = '\0';
				found = true;
			}
		} else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			size_t k = strcspn(line + 8, "\n");

			k = k < flen ? k : flen - 1;
			memcpy(flags, line + 8, k);
			flags[k] = '\0';
		}
	}
	fclose(f);
	return found;
}

static bool
is_rebacked(const void *addr)
{
	char path[256], flags[256];

	return vma_of(addr, path, sizeof(path), flags, sizeof(flags)) &&
	       strstr(path, "memfd:uroce-reg") != NULL;
}

/* ------------------------------------------------------------------------ */
/* Client endpoint                                                           */
/* ------------------------------------------------------------------------ */

struct ep {
	struct uroce_context *ctx;
	struct uroce_pd *pd;
	struct uroce_cq *cq;
	struct uroce_qp *qp;
	uint8_t gid[16];
};

struct conn_info {
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
};

/* A write command from the app to the writer; len 0 ends the writer. */
struct cmd {
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
	uint32_t seed;
	uint32_t pad;
};

static void
ep_open(struct ep *e)
{
	e->ctx = uroce_open_device(sock_path);
	CHECK(e->ctx != NULL, "open_device: %s", strerror(errno));
	CHECK(uroce_query_gid(e->ctx, 1, 0, e->gid) == 0, "query_gid");
	e->pd = uroce_alloc_pd(e->ctx);
	CHECK(e->pd != NULL, "alloc_pd: %s", strerror(errno));
	e->cq = uroce_create_cq(e->ctx, 16, NULL);
	CHECK(e->cq != NULL, "create_cq: %s", strerror(errno));
	e->qp = dt_qp_create(e->pd, e->cq, NULL, UROCE_QPT_RC, 8, 1);
	CHECK(e->qp != NULL, "create_qp: %s", strerror(errno));
}

/* Swap QPN/PSN/GID over @p fd and take the QP to RTS. */
static void
ep_connect(struct ep *e, int fd, uint32_t psn)
{
	struct conn_info me = {.qpn = e->qp->qp_num, .psn = psn}, peer;
	struct dt_rc rc = {.sq_psn = psn, .rd_atomic = 1};
	int r;

	memcpy(me.gid, e->gid, 16);
	dt_xwrite(fd, &me, sizeof(me), __func__);
	dt_xread(fd, &peer, sizeof(peer), __func__);
	rc.dgid = peer.gid;
	rc.dqpn = peer.qpn;
	rc.rq_psn = peer.psn;
	r = dt_qp_to_rts(e->qp, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE, &rc);
	CHECK(r == 0, "INIT/RTR/RTS: %d", r);
}

static void
ep_close(struct ep *e)
{
	CHECK(uroce_destroy_qp(e->qp) == 0, "destroy_qp");
	CHECK(uroce_destroy_cq(e->cq) == 0, "destroy_cq");
	CHECK(uroce_dealloc_pd(e->pd) == 0, "dealloc_pd");
	CHECK(uroce_close_device(e->ctx) == 0, "close_device");
}

/*
 * The writer: its source buffer is anonymous mmap'd memory, re-backed too
 * (the daemon reads it through the writer's lkey). Serves commands until a
 * zero-length one; answers each with the WC status.
 */
static void
writer_main(int fd)
{
	const size_t len = 16 * PAGE;
	struct uroce_send_wr wr, *bad;
	struct uroce_sge sge;
	struct uroce_mr *mr;
	struct uroce_wc wc;
	struct cmd c;
	struct ep e;
	uint8_t *src;
	double end;
	int n;

	ep_open(&e);
	src = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(src != MAP_FAILED, "mmap");
	mr = uroce_reg_mr(e.pd, src, len, UROCE_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL, "writer reg_mr of mmap'd memory: %s", strerror(errno));
	CHECK(is_rebacked(src), "writer buffer not re-backed");
	ep_connect(&e, fd, 0x100);
	for (;;) {
		dt_xread(fd, &c, sizeof(c), __func__);
		if (c.len == 0)
			break;
		CHECK(c.len <= len, "command too long");
		fill(src, c.len, c.seed);
		sge.addr = (uintptr_t)src;
		sge.length = c.len;
		sge.lkey = mr->lkey;
		memset(&wr, 0, sizeof(wr));
		wr.opcode = UROCE_WR_RDMA_WRITE;
		wr.send_flags = UROCE_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.remote_addr = c.va;
		wr.wr.rdma.rkey = c.rkey;
		CHECK(uroce_post_send(e.qp, &wr, &bad) == 0, "post_send");
		end = dt_now_s() + 10;
		while ((n = uroce_poll_cq(e.cq, 1, &wc)) == 0) {
			CHECK(dt_now_s() < end, "no completion in 10 s");
			dt_nap_us(20);
		}
		CHECK(n == 1, "poll_cq %d", n);
		dt_xwrite(fd, &wc.status, sizeof(wc.status), __func__);
	}
	CHECK(uroce_dereg_mr(mr) == 0, "writer dereg");
	CHECK(!is_rebacked(src), "writer buffer still shared after dereg");
	munmap(src, len);
	ep_close(&e);
}

/* ------------------------------------------------------------------------ */
/* The app                                                                   */
/* ------------------------------------------------------------------------ */

struct app {
	struct ep e;
	int wfd;   /* to the writer */
	int ctl;   /* to the test process */
};

struct counts {
	uint32_t segments;
	uint32_t mrs;
};

static struct counts
daemon_counts(struct app *a)
{
	struct counts n;

	dt_xwrite(a->ctl, "S", 1, __func__);
	dt_xread(a->ctl, &n, sizeof(n), __func__);
	return n;
}

/* Ask the writer to RDMA WRITE @p len bytes of pattern @p seed to @p va. */
static uint32_t
remote_write(struct app *a, const void *va, uint32_t rkey, uint32_t len, uint32_t seed)
{
	struct cmd c = {.va = (uintptr_t)va, .rkey = rkey, .len = len, .seed = seed};
	uint32_t status;

	dt_xwrite(a->wfd, &c, sizeof(c), __func__);
	dt_xread(a->wfd, &status, sizeof(status), __func__);
	return status;
}

static const int ACC = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE;

/* aligned_alloc'd memory with data in it; a remote write; dereg; fork. */
static void
app_heap(struct app *a)
{
	const size_t len = 16 * PAGE;
	struct counts c0 = daemon_counts(a), c;
	struct uroce_mr *mr;
	uint8_t *buf, *p;
	uint32_t rkey;
	pid_t pid;
	int st;

	buf = aligned_alloc(PAGE, len);
	CHECK(buf != NULL, "aligned_alloc");
	fill(buf, len, 1);
	CHECK(!is_rebacked(buf), "re-backed before reg_mr?");
	mr = uroce_reg_mr(a->e.pd, buf, len, ACC);
	CHECK(mr != NULL, "reg_mr of aligned_alloc'd memory: %s", strerror(errno));
	/* Expect: same pointer, same contents, now a shared memfd mapping. */
	CHECK(mr->addr == buf && mr->length == len, "MR window");
	CHECK(is_rebacked(buf) && is_rebacked(buf + len - 1), "not re-backed");
	CHECK(same(buf, len, 1), "contents changed by re-backing");
	c = daemon_counts(a);
	CHECK(c.segments == c0.segments + 1 && c.mrs == c0.mrs + 1, "one segment, one MR: %u %u",
	      c.segments, c.mrs);
	/* Expect: a remote WRITE lands in the application's buffer. */
	CHECK(remote_write(a, buf + 3 * PAGE + 100, mr->rkey, 5 * PAGE, 2) == UROCE_WC_SUCCESS,
	      "remote write failed");
	CHECK(same(buf + 3 * PAGE + 100, 5 * PAGE, 2), "remote write not seen at the pointer");
	CHECK(same(buf, 3 * PAGE + 100, 1), "bytes before the write changed");
	/* Local writes through the pointer still work. */
	fill(buf, PAGE, 3);
	CHECK(same(buf, PAGE, 3), "local write");
	/* Expect: a fork child does not get the registered pages (MADV_DONTFORK):
	 * touching them kills it; the rest of its memory is fine. */
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		volatile uint8_t x = a->e.gid[0];

		signal(SIGSEGV, SIG_DFL); /* not a sanitizer's handler */

		x = buf[0];
		(void)x;
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "fork child status %#x", st);
	rkey = mr->rkey;
	CHECK(uroce_dereg_mr(mr) == 0, "dereg");
	/* Expect: after dereg the memory is ordinary private memory again with
	 * every byte kept, and the daemon freed the segment. */
	CHECK(!is_rebacked(buf), "still shared after dereg");
	CHECK(same(buf, PAGE, 3) && same(buf + 3 * PAGE + 100, 5 * PAGE, 2), "lost after dereg");
	c = daemon_counts(a);
	CHECK(c.segments == c0.segments && c.mrs == c0.mrs, "segment kept: %u %u", c.segments,
	      c.mrs);
	/* Expect: the old rkey no longer reaches the memory (the writer's QP
	 * goes to ERR with it, so this is the last command). */
	CHECK(remote_write(a, buf, rkey, 64, 6) == UROCE_WC_REM_ACCESS_ERR, "stale rkey accepted");
	CHECK(same(buf, 64, 3), "written through a stale rkey");
	fill(buf, len, 4);
	CHECK(same(buf, len, 4), "write after dereg");
	free(buf);
	/* The allocator may reuse it; our own later allocation works normally. */
	p = malloc(len);
	CHECK(p != NULL, "malloc");
	fill(p, len, 5);
	CHECK(same(p, len, 5), "malloc after free");
	free(p);
}

struct stack_job {
	struct app *a;
	int failed;
};

/* Runs on a thread with a 1 MiB stack; the registered buffer is on it. */
static void *
stack_thread(void *arg)
{
	struct stack_job *j = arg;
	uint8_t buf[8 * PAGE] __attribute__((aligned(4096)));
	struct uroce_mr *mr;

	fill(buf, sizeof(buf), 7);
	mr = uroce_reg_mr(j->a->e.pd, buf, sizeof(buf), ACC);
	CHECK(mr != NULL, "reg_mr of a thread's stack: %s", strerror(errno));
	CHECK(is_rebacked(buf) && same(buf, sizeof(buf), 7), "stack buffer");
	CHECK(remote_write(j->a, buf + PAGE, mr->rkey, 2 * PAGE, 8) == UROCE_WC_SUCCESS,
	      "remote write to the stack");
	CHECK(same(buf + PAGE, 2 * PAGE, 8) && same(buf, PAGE, 7), "stack buffer after write");
	CHECK(uroce_dereg_mr(mr) == 0, "dereg");
	CHECK(!is_rebacked(buf) && same(buf + PAGE, 2 * PAGE, 8), "stack after dereg");
	j->failed = 0;
	return NULL;
}

/* The same on the main thread's stack ([stack], which grows down). */
static void __attribute__((noinline))
main_stack_buffer(struct app *a)
{
	uint8_t buf[4 * PAGE] __attribute__((aligned(4096)));
	char path[256], flags[256];
	struct uroce_mr *mr;

	fill(buf, sizeof(buf), 14);
	CHECK(vma_of(buf, path, sizeof(path), flags, sizeof(flags)) &&
	      strcmp(path, "[stack]") == 0, "not on [stack]: %s", path);
	mr = uroce_reg_mr(a->e.pd, buf, sizeof(buf), ACC);
	CHECK(mr != NULL, "reg_mr of the main stack: %s", strerror(errno));
	CHECK(is_rebacked(buf) && same(buf, sizeof(buf), 14), "main stack buffer");
	CHECK(remote_write(a, buf + 2 * PAGE, mr->rkey, PAGE, 15) == UROCE_WC_SUCCESS,
	      "remote write to the main stack");
	CHECK(same(buf + 2 * PAGE, PAGE, 15) && same(buf, 2 * PAGE, 14), "main stack after write");
	CHECK(uroce_dereg_mr(mr) == 0, "dereg");
	CHECK(!is_rebacked(buf) && same(buf + 2 * PAGE, PAGE, 15), "main stack after dereg");
}

static void
app_stack(struct app *a)
{
	struct stack_job j = {.a = a, .failed = 1};
	struct counts c0 = daemon_counts(a), c;
	pthread_attr_t at;
	pthread_t t;

	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 1 << 20);
	CHECK(pthread_create(&t, &at, stack_thread, &j) == 0, "pthread_create");
	pthread_join(t, NULL);
	pthread_attr_destroy(&at);
	CHECK(j.failed == 0, "thread");
	main_stack_buffer(a);
	c = daemon_counts(a);
	CHECK(c.segments == c0.segments && c.mrs == c0.mrs, "left over: %u %u", c.segments, c.mrs);
}

/* The same range twice, a sub-range, and a second context: one memfd. */
static void
app_double(struct app *a)
{
	const size_t len = 8 * PAGE;
	struct counts c0 = daemon_counts(a), c;
	struct uroce_mr *m1, *m2, *m3, *m4, *m5;
	struct uroce_context *ctx2;
	struct uroce_pd *pd2;
	uint8_t *buf, *buf2;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(buf != MAP_FAILED, "mmap");
	fill(buf, len, 9);
	m1 = uroce_reg_mr(a->e.pd, buf, len, ACC);
	m2 = uroce_reg_mr(a->e.pd, buf, len, ACC);
	/* A sub-range of a re-backed range needs no alignment. */
	m3 = uroce_reg_mr(a->e.pd, buf + PAGE + 100, 1000, ACC);
	CHECK(m1 != NULL && m2 != NULL && m3 != NULL, "double reg: %s", strerror(errno));
	CHECK(m1->rkey != m2->rkey, "two MRs, two keys");
	CHECK(same(buf, len, 9), "contents");
	c = daemon_counts(a);
	CHECK(c.segments == c0.segments + 1 && c.mrs == c0.mrs + 3,
	      "one segment for three MRs: %u %u", c.segments, c.mrs);
	/* A second context of the same process shares the re-backed memory. */
	ctx2 = uroce_open_device(sock_path);
	CHECK(ctx2 != NULL, "open 2");
	pd2 = uroce_alloc_pd(ctx2);
	CHECK(pd2 != NULL, "pd 2");
	m4 = uroce_reg_mr(pd2, buf + PAGE, PAGE, ACC);
	CHECK(m4 != NULL, "reg in context 2: %s", strerror(errno));
	buf2 = aligned_alloc(PAGE, 2 * PAGE);
	CHECK(buf2 != NULL, "aligned_alloc");
	fill(buf2, 2 * PAGE, 16);
	m5 = uroce_reg_mr(pd2, buf2, 2 * PAGE, ACC);
	CHECK(m5 != NULL && is_rebacked(buf2), "reg in context 2: %s", strerror(errno));
	c = daemon_counts(a);
	CHECK(c.segments == c0.segments + 3 && c.mrs == c0.mrs + 5, "context 2: %u %u",
	      c.segments, c.mrs);
	/* Expect: closing context 2 with both MRs still registered (its MR and
	 * PD structures are then leaked, as with ibv_close_device) makes the
	 * memory only it used private again; context 1 keeps the shared one. */
	CHECK(uroce_close_device(ctx2) == 0, "close context 2");
	CHECK(!is_rebacked(buf2) && same(buf2, 2 * PAGE, 16), "context 2's memory");
	CHECK(is_rebacked(buf), "context 1 still holds it");
	free(buf2);
	c = daemon_counts(a);
	CHECK(c.segments == c0.segments + 1 && c.mrs == c0.mrs + 3,
	      "context 2's segments reclaimed: %u %u", c.segments, c.mrs);
	/* Every MR works. */
	CHECK(remote_write(a, buf, m1->rkey, PAGE, 10) == UROCE_WC_SUCCESS, "via m1");
	CHECK(remote_write(a, buf + 2 * PAGE, m2->rkey, 2 * PAGE, 11) == UROCE_WC_SUCCESS,
	      "via m2");
	CHECK(remote_write(a, buf + PAGE + 100, m3->rkey, 1000, 12) == UROCE_WC_SUCCESS,
	      "via m3");
	CHECK(same(buf, PAGE, 10) && same(buf + 2 * PAGE, 2 * PAGE, 11) &&
	      same(buf + PAGE + 100, 1000, 12), "writes via the three MRs");
	/* Dropping one MR keeps the segment for the others. */
	CHECK(uroce_dereg_mr(m1) == 0, "dereg m1");
	CHECK(is_rebacked(buf), "segment dropped with MRs left");
	CHECK(remote_write(a, buf + 6 * PAGE, m2->rkey, PAGE, 13) == UROCE_WC_SUCCESS,
	      "via m2 after m1 went");
	CHECK(same(buf + 6 * PAGE, PAGE, 13), "m2 write");
	c = daemon_counts(a);
	CHECK(c.segments == c0.segments + 1 && c.mrs == c0.mrs + 2, "after m1: %u %u",
	      c.segments, c.mrs);
	CHECK(uroce_dereg_mr(m2) == 0 && uroce_dereg_mr(m3) == 0, "dereg m2 m3");
	CHECK(!is_rebacked(buf), "still shared after the last MR");
	CHECK(same(buf, PAGE, 10) && same(buf + 6 * PAGE, PAGE, 13), "kept after dereg");
	c = daemon_counts(a);
	CHECK(c.segments == c0.segments && c.mrs == c0.mrs, "after all: %u %u", c.segments,
	      c.mrs);
	munmap(buf, len);
}

/*
 * A range that starts in a re-backed range and ends after it grows that
 * range in place (small malloc'ed buffers registered one by one with their
 * enclosing pages meet this): the old MR keeps working on the same pages,
 * the context gets a second, longer segment, and everything goes at the end.
 */
static void
app_grow(struct app *a)
{
	const size_t len = 6 * PAGE;
	struct counts c0 = daemon_counts(a), c;
	struct uroce_mr *m1, *m2, *m3;
	uint8_t *buf;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(buf != MAP_FAILED, "mmap");
	fill(buf, len, 40);
	m1 = uroce_reg_mr(a->e.pd, buf, 2 * PAGE, ACC);
	CHECK(m1 != NULL, "reg m1: %s", strerror(errno));
	CHECK(!is_rebacked(buf + 2 * PAGE), "page 2 re-backed with m1");
	/* Expect: pages 1..3 registered: the range grows by pages 2 and 3. */
	m2 = uroce_reg_mr(a->e.pd, buf + PAGE, 3 * PAGE, ACC);
	CHECK(m2 != NULL, "reg m2 (growth): %s", strerror(errno));
	CHECK(is_rebacked(buf + 3 * PAGE) && !is_rebacked(buf + 4 * PAGE), "grown to 4 pages");
	CHECK(same(buf, len, 40), "contents after growth");
	c = daemon_counts(a);
	CHECK(c.segments == c0.segments + 2 && c.mrs == c0.mrs + 2, "two segments: %u %u",
	      c.segments, c.mrs);
	/* Expect: inside the first 2 pages → the first segment again. */
	m3 = uroce_reg_mr(a->e.pd, buf + 100, 200, ACC);
	CHECK(m3 != NULL, "reg m3: %s", strerror(errno));
	c = daemon_counts(a);
	CHECK(c.segments == c0.segments + 2, "m3 took a segment: %u", c.segments);
	/* Expect: the old MR and the new one write the pages the app reads. */
	CHECK(remote_write(a, buf, m1->rkey, PAGE, 41) == UROCE_WC_SUCCESS, "write via m1");
	CHECK(remote_write(a, buf + 3 * PAGE, m2->rkey, PAGE, 42) == UROCE_WC_SUCCESS,
	      "write via m2");
	CHECK(same(buf, PAGE, 41) && same(buf + 3 * PAGE, PAGE, 42), "writes via m1, m2");
	CHECK(uroce_dereg_mr(m1) == 0, "dereg m1");
	c = daemon_counts(a);
	CHECK(c.segments == c0.segments + 2 && c.mrs == c0.mrs + 2, "m3 keeps segment 1: %u %u",
	      c.segments, c.mrs);
	CHECK(uroce_dereg_mr(m3) == 0, "dereg m3");
	c = daemon_counts(a);
	CHECK(c.segments == c0.segments + 1, "segment 1 kept without MRs: %u", c.segments);
	CHECK(remote_write(a, buf + 2 * PAGE, m2->rkey, PAGE, 43) == UROCE_WC_SUCCESS,
	      "write via m2 alone");
	CHECK(uroce_dereg_mr(m2) == 0, "dereg m2");
	CHECK(!is_rebacked(buf) && !is_rebacked(buf + 3 * PAGE), "still shared after the last MR");
	CHECK(same(buf, PAGE, 41) && same(buf + 2 * PAGE, PAGE, 43) &&
		      same(buf + 3 * PAGE, PAGE, 42),
	      "kept after dereg");
	c = daemon_counts(a);
	CHECK(c.segments == c0.segments && c.mrs == c0.mrs, "after all: %u %u", c.segments,
	      c.mrs);
	munmap(buf, len);
}

/* Refusals; none may leave a segment behind or change the memory. */
static void
app_errors(struct app *a)
{
	struct counts c0 = daemon_counts(a), c;
	struct uroce_pd *pd = a->e.pd;
	struct uroce_mr *mr;
	char path[256], flags[256];
	uint8_t *buf, *p;
	bool locked;
	FILE *tf;

	buf = aligned_alloc(PAGE, 4 * PAGE);
	CHECK(buf != NULL, "aligned_alloc");
	fill(buf, 4 * PAGE, 20);
	/* Expect: not page aligned, or length not whole pages, or 0 → EINVAL. */
	errno = 0;
	CHECK(uroce_reg_mr(pd, buf + 8, PAGE, ACC) == NULL && errno == EINVAL, "unaligned start");
	errno = 0;
	CHECK(uroce_reg_mr(pd, buf, PAGE - 1, ACC) == NULL && errno == EINVAL, "partial page");
	errno = 0;
	CHECK(uroce_reg_mr(pd, buf, 0, ACC) == NULL && errno == EINVAL, "length 0");
	CHECK(!is_rebacked(buf) && same(buf, 4 * PAGE, 20), "touched by a refusal");
	/* Expect: starting before a re-backed range and reaching into it, or
	 * going on past its end to an end that is not page aligned → EINVAL. */
	mr = uroce_reg_mr(pd, buf + PAGE, 2 * PAGE, ACC);
	CHECK(mr != NULL, "reg: %s", strerror(errno));
	errno = 0;
	CHECK(uroce_reg_mr(pd, buf, 2 * PAGE, ACC) == NULL && errno == EINVAL,
	      "overlap at the start");
	errno = 0;
	CHECK(uroce_reg_mr(pd, buf + 2 * PAGE, PAGE + 8, ACC) == NULL && errno == EINVAL,
	      "unaligned growth");
	CHECK(!is_rebacked(buf) && !is_rebacked(buf + 3 * PAGE), "a refusal re-backed a page");
	CHECK(uroce_dereg_mr(mr) == 0 && same(buf, 4 * PAGE, 20), "dereg");
	free(buf);

	/* Expect: a hole in the range, or nothing mapped → EFAULT. */
	p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap");
	fill(p, 4 * PAGE, 21);
	CHECK(munmap(p + 2 * PAGE, PAGE) == 0, "munmap");
	errno = 0;
	CHECK(uroce_reg_mr(pd, p, 4 * PAGE, ACC) == NULL && errno == EFAULT, "hole");
	CHECK(!is_rebacked(p) && same(p, 2 * PAGE, 21), "touched by EFAULT");
	munmap(p, 4 * PAGE);
	errno = 0;
	CHECK(uroce_reg_mr(pd, p, PAGE, ACC) == NULL && errno == EFAULT, "unmapped");

	/* Expect: no read permission → EACCES. */
	p = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap");
	errno = 0;
	CHECK(uroce_reg_mr(pd, p, PAGE, ACC) == NULL && errno == EACCES, "PROT_NONE");
	munmap(p, PAGE);

	/* Expect: shared anonymous memory and file mappings → EOPNOTSUPP. */
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap");
	errno = 0;
	CHECK(uroce_reg_mr(pd, p, PAGE, ACC) == NULL && errno == EOPNOTSUPP, "shared anon");
	munmap(p, PAGE);
	tf = tmpfile();
	CHECK(tf != NULL && ftruncate(fileno(tf), PAGE) == 0, "tmpfile");
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fileno(tf), 0);
	CHECK(p != MAP_FAILED, "mmap file");
	errno = 0;
	CHECK(uroce_reg_mr(pd, p, PAGE, ACC) == NULL && errno == EOPNOTSUPP, "file mapping");
	munmap(p, PAGE);
	fclose(tf);

	/* A static array in the program's .data (its file-backed data segment,
	 * where rdma-core's examples keep their buffers): supported; read-only
	 * data (.rodata) is a file mapping → EOPNOTSUPP. */
	fill(data_pages, sizeof(data_pages), 25);
	CHECK(vma_of(data_pages, path, sizeof(path), flags, sizeof(flags)) && path[0] == '/',
	      "data_pages not in a file mapping: '%s'", path);
	mr = uroce_reg_mr(pd, data_pages, sizeof(data_pages), ACC);
	CHECK(mr != NULL, "reg of .data: %s", strerror(errno));
	CHECK(is_rebacked(data_pages) && same(data_pages, sizeof(data_pages), 25), ".data contents");
	CHECK(uroce_dereg_mr(mr) == 0, "dereg");
	CHECK(!is_rebacked(data_pages) && same(data_pages, sizeof(data_pages), 25),
	      ".data after dereg");
	errno = 0;
	CHECK(uroce_reg_mr(pd, (void *)rodata_page, PAGE, UROCE_ACCESS_LOCAL_WRITE) == NULL &&
		      errno == EOPNOTSUPP,
	      ".rodata: %s", strerror(errno));

	/* Read-only and mlock'd memory: supported, and both kept. */
	p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap");
	fill(p, 2 * PAGE, 22);
	CHECK(mprotect(p + PAGE, PAGE, PROT_READ) == 0, "mprotect");
	CHECK(mlock(p, PAGE) == 0, "mlock: %s", strerror(errno));
	/* AddressSanitizer turns mlock() into a no-op: then only the rest. */
	CHECK(vma_of(p, path, sizeof(path), flags, sizeof(flags)), "vma");
	locked = strstr(flags, " lo") != NULL;
	mr = uroce_reg_mr(pd, p, 2 * PAGE, UROCE_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL, "reg of locked + read-only: %s", strerror(errno));
	CHECK(is_rebacked(p) && same(p, 2 * PAGE, 22), "contents");
	CHECK(vma_of(p, path, sizeof(path), flags, sizeof(flags)), "vma");
	CHECK((!locked || strstr(flags, " lo") != NULL) && strstr(flags, " dc") != NULL,
	      "re-backed page lost mlock or has no MADV_DONTFORK: %s", flags);
	CHECK(vma_of(p + PAGE, path, sizeof(path), flags, sizeof(flags)), "vma");
	CHECK(strstr(flags, " wr") == NULL, "read-only page became writable: %s", flags);
	CHECK(uroce_dereg_mr(mr) == 0, "dereg");
	CHECK(vma_of(p, path, sizeof(path), flags, sizeof(flags)), "vma");
	CHECK(!is_rebacked(p) && (!locked || strstr(flags, " lo") != NULL), "after dereg: %s %s",
	      path, flags);
	CHECK(same(p, 2 * PAGE, 22), "contents after dereg");
	munmap(p, 2 * PAGE);

	/* Expect: REG_MR refused by the daemon after the re-backing (REMOTE_WRITE
	 * without LOCAL_WRITE, as in verbs): the memory is made private again
	 * with its contents, and the segment is freed. */
	p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap");
	fill(p, 2 * PAGE, 23);
	errno = 0;
	CHECK(uroce_reg_mr(pd, p, 2 * PAGE, UROCE_ACCESS_REMOTE_WRITE) == NULL && errno == EINVAL,
	      "REMOTE_WRITE alone accepted? %s", strerror(errno));
	CHECK(!is_rebacked(p) && same(p, 2 * PAGE, 23), "after a refused REG_MR");

	/* Expect: the application unmaps a registered range and maps new memory
	 * there: a new registration is refused (EBUSY, the old MR still has the
	 * old pages), and the old MR's dereg leaves the new memory alone. */
	mr = uroce_reg_mr(pd, p, 2 * PAGE, ACC);
	CHECK(mr != NULL, "reg: %s", strerror(errno));
	CHECK(mmap(p, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		   -1, 0) == p, "mmap over");
	fill(p, 2 * PAGE, 24);
	errno = 0;
	CHECK(uroce_reg_mr(pd, p, PAGE, ACC) == NULL && errno == EBUSY, "replaced range: %s",
	      strerror(errno));
	CHECK(uroce_dereg_mr(mr) == 0, "dereg");
	CHECK(!is_rebacked(p) && same(p, 2 * PAGE, 24), "dereg touched the new memory");
	mr = uroce_reg_mr(pd, p, 2 * PAGE, ACC);
	CHECK(mr != NULL && same(p, 2 * PAGE, 24), "reg after the old MR went: %s",
	      strerror(errno));
	CHECK(uroce_dereg_mr(mr) == 0, "dereg");
	munmap(p, 2 * PAGE);

	c = daemon_counts(a);
	CHECK(c.segments == c0.segments && c.mrs == c0.mrs, "left over: %u %u", c.segments,
	      c.mrs);
}

/* Register, then have the test process SIGKILL us. */
static void
app_kill(struct app *a)
{
	uint8_t *buf = aligned_alloc(PAGE, 4 * PAGE);
	struct uroce_mr *mr;

	CHECK(buf != NULL, "aligned_alloc");
	fill(buf, 4 * PAGE, 30);
	mr = uroce_reg_mr(a->e.pd, buf, 4 * PAGE, ACC);
	CHECK(mr != NULL, "reg: %s", strerror(errno));
	dt_xwrite(a->ctl, "K", 1, __func__);
	pause();
	_exit(1);
}

static void
app_main(const char *mode, int wfd, int ctl)
{
	struct app a = {.wfd = wfd, .ctl = ctl};
	struct cmd end = {0};

	ep_open(&a.e);
	if (wfd >= 0)
		ep_connect(&a.e, wfd, 0xfffff0); /* PSN near 2^24 */
	if (strcmp(mode, "heap") == 0)
		app_heap(&a);
	else if (strcmp(mode, "stack") == 0)
		app_stack(&a);
	else if (strcmp(mode, "double") == 0)
		app_double(&a);
	else if (strcmp(mode, "grow") == 0)
		app_grow(&a);
	else if (strcmp(mode, "errors") == 0)
		app_errors(&a);
	else if (strcmp(mode, "kill") == 0)
		app_kill(&a);
	if (wfd >= 0)
		dt_xwrite(wfd, &end, sizeof(end), __func__);
	ep_close(&a.e);
}

/* ------------------------------------------------------------------------ */
/* The test process: daemon and children                                     */
/* ------------------------------------------------------------------------ */

struct child {
	pid_t pid;
	int status;
	bool done;
};

static void
start_daemon(void)
{
	struct uroce_daemon_conf conf;

	dt_sock_path(sock_path, sizeof(sock_path), "rebacking");
	memset(&conf, 0, sizeof(conf));
	conf.sock_path = sock_path;
	conf.sock_mode = 0600;
	conf.n_workers = dt_workers();
	dmn = uroce_daemon_create(&conf);
	cr_assert_not_null(dmn, "daemon: %s", strerror(errno));
}

/*
 * Run @p mode: the app child, and a writer child unless @p writer is false.
 * The test process runs the daemon and answers the app's 'S' and 'K'.
 */
static void
run_mode(const char *mode, bool writer)
{
	struct child ch[2] = {{0}, {0}};
	int aw[2] = {-1, -1}, ctl[2];
	int i, n = writer ? 2 : 1;
	double end;

	start_daemon();
	cr_assert(socketpair(AF_UNIX, SOCK_STREAM, 0, ctl) == 0);
	if (writer)
		cr_assert(socketpair(AF_UNIX, SOCK_STREAM, 0, aw) == 0);
	fflush(NULL);
	ch[0].pid = fork();
	cr_assert(ch[0].pid >= 0);
	if (ch[0].pid == 0) {
		close(ctl[0]);
		if (writer)
			close(aw[1]);
		app_main(mode, aw[0], ctl[1]);
		_exit(0);
	}
	if (writer) {
		ch[1].pid = fork();
		cr_assert(ch[1].pid >= 0);
		if (ch[1].pid == 0) {
			close(ctl[0]);
			close(ctl[1]);
			close(aw[0]);
			writer_main(aw[1]);
			_exit(0);
		}
		close(aw[0]);
		close(aw[1]);
	}
	close(ctl[1]);
	end = dt_now_s() + 60;
	while (dt_now_s() < end) {
		struct pollfd p = {.fd = ctl[0], .events = POLLIN};
		bool all = true;
		char m;

		if (uroce_daemon_poll(dmn) == 0)
			dt_nap_us(20);
		if (poll(&p, 1, 0) == 1 && read(ctl[0], &m, 1) == 1) {
			struct uroce_daemon_stats st;
			struct counts c;

			uroce_daemon_poll(dmn);
			uroce_daemon_stats(dmn, &st);
			if (m == 'S') {
				c.segments = st.segments;
				c.mrs = st.mrs;
				cr_assert(write(ctl[0], &c, sizeof(c)) == (ssize_t)sizeof(c));
			} else if (m == 'K') {
				/* Expect: the re-backed segment and its MR are live. */
				cr_expect_eq(st.segments, 1);
				cr_expect_eq(st.mrs, 1);
				kill(ch[0].pid, SIGKILL);
			}
		}
		for (i = 0; i < n; i++) {
			if (!ch[i].done && waitpid(ch[i].pid, &ch[i].status, WNOHANG) == ch[i].pid)
				ch[i].done = true;
			all = all && ch[i].done;
		}
		if (all)
			break;
	}
	for (i = 0; i < n; i++)
		if (!ch[i].done) {
			kill(ch[i].pid, SIGKILL);
			waitpid(ch[i].pid, &ch[i].status, 0);
			cr_expect(false, "%s child %d timed out", mode, i);
		}
	close(ctl[0]);
	if (strcmp(mode, "kill") == 0)
		cr_expect(WIFSIGNALED(ch[0].status) && WTERMSIG(ch[0].status) == SIGKILL,
			  "kill: status %#x", ch[0].status);
	else
		for (i = 0; i < n; i++)
			cr_expect(WIFEXITED(ch[i].status) && WEXITSTATUS(ch[i].status) == 0,
				  "%s child %d: status %#x", mode, i, ch[i].status);
	dc_expect_all_reclaimed(dmn);
	uroce_daemon_destroy(dmn);
	dmn = NULL;
}

Test(rebacking, aligned_alloc_memory_keeps_data_and_takes_remote_writes, .timeout = 60)
{
	run_mode("heap", true);
}

Test(rebacking, thread_and_main_stack_buffers, .timeout = 60)
{
	run_mode("stack", true);
}

Test(rebacking, overlapping_registrations_share_one_segment, .timeout = 60)
{
	run_mode("double", true);
}

Test(rebacking, a_range_past_the_end_grows_the_rebacked_memory, .timeout = 60)
{
	run_mode("grow", true);
}

Test(rebacking, unsupported_ranges_are_refused_cleanly, .timeout = 60)
{
	run_mode("errors", false);
}

Test(rebacking, sigkill_reclaims_the_rebacked_segment, .timeout = 60)
{
	run_mode("kill", false);
}
