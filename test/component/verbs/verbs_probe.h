/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * What the drop-in probes (verbs_mw.c, verbs_aw.c) share: one device, PD and
 * two CQs, RC QP pairs on the daemon's loopback port, completions, and the
 * "PROBE: ok: ..." / "PROBE: FAIL: ..." lines test_verbs_probe.sh reads.
 */

#ifndef VERBS_PROBE_H
#define VERBS_PROBE_H

#include <stdio.h>
#include <stdlib.h>

#include <infiniband/verbs.h>

extern const char *probe_name;   /* each probe defines it: "verbs_mw", ... */
extern int probe_fails;
extern struct ibv_context *ctx;
extern struct ibv_pd *pd;
extern struct ibv_cq *cqa, *cqb;
extern union ibv_gid gid;

#define CHECK(c, ...)                                                   \
	do {                                                            \
		if (c) {                                                \
			printf("%s: ok: ", probe_name);                 \
		} else {                                                \
			printf("%s: FAIL: ", probe_name);               \
			probe_fails++;                                  \
		}                                                       \
		printf(__VA_ARGS__);                                    \
		printf("\n");                                           \
	} while (0)
#define DIE(...)                                                        \
	do {                                                            \
		printf("%s: FAIL: ", probe_name);                       \
		printf(__VA_ARGS__);                                    \
		printf("\n");                                           \
		exit(1);                                                \
	} while (0)

/** Open the first device, its GID 0, a PD and the CQs a and b (64 each). */
void probe_open(void);

/** Two RC QPs of pd (CQs a and b) in RTS, pointed at each other; @p access
 * is their qp_access_flags, @p send_ops their send_ops_flags (0: none). */
void probe_pair(struct ibv_qp **a, struct ibv_qp **b, unsigned int access, uint64_t send_ops);
/** The same, with @p a on CQ @p ca and @p b on @p cb (send and receive). */
void probe_pair_on(struct ibv_cq *ca, struct ibv_cq *cb, struct ibv_qp **a, struct ibv_qp **b,
		   unsigned int access, uint64_t send_ops);

/** Bring @p qp through INIT, RTR and RTS toward QP @p dqpn on the same port
 * (the RC attribute set; XRC QPs take it too). */
void probe_qp_up(struct ibv_qp *qp, uint32_t dqpn, unsigned int access);

/** One completion of @p cq (10 s at most, else DIE). */
struct ibv_wc probe_wait_wc(struct ibv_cq *cq);

#endif /* VERBS_PROBE_H */
