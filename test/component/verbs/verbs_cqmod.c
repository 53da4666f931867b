/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * CQ event moderation through the drop-in libibverbs (drivers/verbs), as a
 * verbs program writes it against rdma-core's verbs.h: run by
 * test_verbs_probe.sh with uroce-run on uroced_lite. The timing itself (no
 * event before cq_count CQEs or cq_period) is tested with the daemon's clock
 * in the test's hands (test_srq_events, cq/moderation_*); this checks what a
 * program sees.
 *
 *   Expect: cq_mod_caps of ibv_query_device_ex are a ConnectX's (65535 CQEs,
 *   4095 us). ibv_modify_cq: attr_mask 0, a reserved bit, or cq_period 4096:
 *   EINVAL; IBV_CQ_ATTR_MODERATE with (2, 4095): 0. An armed moderated CQ
 *   with a completion channel still delivers its event, after one RDMA WRITE
 *   completion (the period) and after two (the count); ibv_modify_cq back to
 *   (0, 0) still delivers one at once.
 * Prints one "verbs_cqmod: ok: ..." line per check; exit 0 only if all pass.
 */

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_probe.h"

#define BUF_LEN 4096

const char *probe_name = "verbs_cqmod";

static int
moderate(struct ibv_cq *cq, uint32_t mask, uint16_t count, uint16_t period)
{
	struct ibv_modify_cq_attr m;

	memset(&m, 0, sizeof(m));
	m.attr_mask = mask;
	m.moderate.cq_count = count;
	m.moderate.cq_period = period;
	return ibv_modify_cq(cq, &m);
}

/* Arm @p cq, post @p n signaled WRITEs on @p a, take their CQEs, then wait
 * (5 s at most) for the channel's event. @return true if it came. */
static bool
writes_raise_event(struct ibv_comp_channel *ch, struct ibv_cq *cq, struct ibv_qp *a,
		   struct ibv_mr *mr, uint8_t *buf, int n)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct ibv_sge sge = {(uintptr_t)buf, 64, mr->lkey};
	struct ibv_send_wr wr, *bad;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int i;

	if (ibv_req_notify_cq(cq, 0) != 0)
		DIE("req_notify_cq");
	for (i = 0; i < n; i++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uint64_t)i;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.remote_addr = (uintptr_t)buf + 1024;
		wr.wr.rdma.rkey = mr->rkey;
		if (ibv_post_send(a, &wr, &bad) != 0)
			DIE("post_send");
	}
	for (i = 0; i < n; i++)
		if (probe_wait_wc(cq).status != IBV_WC_SUCCESS)
			DIE("WRITE failed");
	if (poll(&p, 1, 5000) != 1)
		return false;
	if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx) != 0 || ev_cq != cq)
		return false;
	ibv_ack_cq_events(cq, 1);
	return true;
}

int
main(void)
{
	struct ibv_device_attr_ex dx;
	struct ibv_comp_channel *ch;
	struct ibv_qp *a, *b;
	struct ibv_cq *mcq;
	struct ibv_mr *mr;
	uint8_t *buf;

	probe_open();
	memset(&dx, 0, sizeof(dx));
	CHECK(ibv_query_device_ex(ctx, NULL, &dx) == 0, "query_device_ex");
	CHECK(dx.cq_mod_caps.max_cq_count == 65535 && dx.cq_mod_caps.max_cq_period == 4095,
	      "cq_mod_caps %u CQEs, %u us", dx.cq_mod_caps.max_cq_count,
	      dx.cq_mod_caps.max_cq_period);
	ch = ibv_create_comp_channel(ctx);
	mcq = ch != NULL ? ibv_create_cq(ctx, 64, NULL, ch, 0) : NULL;
	buf = aligned_alloc(4096, BUF_LEN);
	if (mcq == NULL || buf == NULL)
		DIE("objects: %s", strerror(errno));
	memset(buf, 0, BUF_LEN);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (mr == NULL)
		DIE("reg_mr: %s", strerror(errno));

	CHECK(moderate(mcq, 0, 2, 100) == EINVAL, "attr_mask 0: EINVAL");
	CHECK(moderate(mcq, IBV_CQ_ATTR_MODERATE | IBV_CQ_ATTR_RESERVED, 2, 100) == EINVAL,
	      "a reserved attr_mask bit: EINVAL");
	CHECK(moderate(mcq, IBV_CQ_ATTR_MODERATE, 2, 4096) == EINVAL, "cq_period 4096: EINVAL");
	CHECK(moderate(mcq, IBV_CQ_ATTR_MODERATE, 2, 4095) == 0, "cq_count 2, cq_period 4095");

	probe_pair_on(mcq, cqb, &a, &b, IBV_ACCESS_REMOTE_WRITE, 0);

	CHECK(writes_raise_event(ch, mcq, a, mr, buf, 1), "one completion: the event (period)");
	CHECK(writes_raise_event(ch, mcq, a, mr, buf, 2), "two completions: the event (count)");
	CHECK(moderate(mcq, IBV_CQ_ATTR_MODERATE, 0, 0) == 0, "moderation off");
	CHECK(writes_raise_event(ch, mcq, a, mr, buf, 1), "unmoderated: the event");

	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(mcq);
	ibv_destroy_comp_channel(ch);
	ibv_destroy_cq(cqa);
	ibv_destroy_cq(cqb);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	printf("verbs_cqmod: %d failure(s)\n", probe_fails);
	return probe_fails ? 1 : 0;
}
