/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * bench_engine: messages per second between two transport engines in one
 * process, on one core, over a perfect simulated wire (no loss, no delay),
 * for 64-byte RDMA WRITE, SEND and RDMA READ. Every packet is a real RoCEv2
 * frame: the wire builds Ethernet/IPv4/UDP, computes the ICRC and the
 * receiver parses and checks it, so the number includes lib/wire's costs
 * and the simulated wire's malloc/free per packet. It is a benchmark, not a
 * test: it prints numbers and never fails on a time.
 *
 * Usage: bench_engine [messages per op (default 200000)] [queue depth (64)]
 * BENCH_CRC_LEVEL=0, 1 or 2 caps the ICRC code (lib/wire/crc_clmul.c: tables
 * or ISA-L, 128-bit or 512-bit carry-less folds), to compare them in one build.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "simwire.h"
#include "wire_internal.h"

#define MSG 64

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct bench {
	struct simwire *sw;
	struct sim_side s[2];
	uint8_t *buf[2];
	struct uroce_eng_mr *mr[2];
};

static int
bench_init(struct bench *b, uint32_t depth)
{
	struct simwire_conf wc = { .seed = 1 };
	struct sim_qp_opts o = { .mtu = UROCE_MTU_4096 };
	int i;

	memset(b, 0, sizeof(*b));
	b->sw = simwire_create(&wc);
	if (b->sw == NULL || sim_pair_create(b->sw, b->s, &o, depth, (int)depth * 4) != 0)
		return -1;
	for (i = 0; i < 2; i++) {
		b->buf[i] = calloc(1, 4096);
		b->mr[i] = uroce_eng_mr_reg(b->s[i].pd, b->buf[i], 0x1000, 4096,
					UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
					UROCE_ACCESS_REMOTE_READ);
		if (b->buf[i] == NULL || b->mr[i] == NULL)
			return -1;
	}
	return 0;
}

static void
bench_fini(struct bench *b)
{
	simwire_destroy(b->sw);
	free(b->buf[0]);
	free(b->buf[1]);
}

static int
post_one(struct bench *b, enum uroce_wr_opcode op, uint64_t id)
{
	struct uroce_wr_sge sge = { 0x1000, MSG, uroce_eng_mr_lkey(b->mr[0]) };
	struct uroce_eng_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = UROCE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = 0x1000;
	wr.wr.rdma.rkey = uroce_eng_mr_rkey(b->mr[1]);
	return uroce_eng_post_send(b->s[0].qp, &wr, NULL);
}

static int
post_recv(struct bench *b)
{
	struct uroce_wr_sge sge = { 0x1000, 4096, uroce_eng_mr_lkey(b->mr[1]) };
	struct uroce_eng_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };

	return uroce_eng_post_recv(b->s[1].qp, &wr, NULL);
}

static void
run(const char *name, enum uroce_wr_opcode op, uint64_t n, uint32_t depth)
{
	struct bench b;
	struct uroce_eng_wc wc[64];
	uint64_t posted = 0, done = 0, errors = 0;
	uint32_t i;
	double t0, t;
	int k;

	if (bench_init(&b, depth) != 0) {
		fprintf(stderr, "bench_engine: setup failed\n");
		exit(1);
	}
	if (op == UROCE_WR_SEND)
		for (i = 0; i < depth; i++)
			post_recv(&b);
	t0 = now_s();
	while (done < n) {
		while (posted < n && posted - done < depth && post_one(&b, op, posted) == 0)
			posted++;
		simwire_step(b.sw);
		while ((k = uroce_eng_poll_cq(b.s[0].scq, 64, wc)) > 0) {
			for (i = 0; i < (uint32_t)k; i++)
				errors += wc[i].status != UROCE_WC_SUCCESS;
			done += (uint64_t)k;
		}
		if (op == UROCE_WR_SEND)
			while ((k = uroce_eng_poll_cq(b.s[1].rcq, 64, wc)) > 0)
				for (i = 0; i < (uint32_t)k; i++)
					post_recv(&b);
	}
	t = now_s() - t0;
	printf("%-6s %3d B: %10.0f msgs/s  (%llu messages in %.3f s, queue depth %u, "
	       "%llu packets, %llu errors)\n",
	       name, MSG, (double)n / t, (unsigned long long)n, t, depth,
	       (unsigned long long)simwire_stats(b.sw).sent, (unsigned long long)errors);
	bench_fini(&b);
}

int
main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 200000;
	uint32_t depth = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 64;

	if (n == 0 || depth == 0 || depth > 4096) {
		fprintf(stderr, "usage: bench_engine [messages] [depth 1..4096]\n");
		return 2;
	}
	if (getenv("BENCH_CRC_LEVEL") != NULL)
		wire_crc_level_set(atoi(getenv("BENCH_CRC_LEVEL")));
	printf("bench_engine: two engines, one core, perfect simulated wire (RoCEv2 frames "
	       "with ICRC, %s, ICRC level %d)\n", uroce_crc32_impl(), wire_crc_level());
	run("WRITE", UROCE_WR_RDMA_WRITE, n, depth);
	run("SEND", UROCE_WR_SEND, n, depth);
	run("READ", UROCE_WR_RDMA_READ, n, depth);
	return 0;
}
