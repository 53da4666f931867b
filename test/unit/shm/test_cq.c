/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Tests for lib/shm/cq.c: arming, one event per arm, solicited-only arming,
 * hostile arm words, and the arm/poll race: an arm is for the next CQE
 * (IBA 11.4.2.2), a client that arms and then polls is never left waiting,
 * and no arm yields two events.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "uroce_shm.h"
#include "shm_concurrent.h"

struct cq_pair {
	void *mem;
	struct uroce_shm_ring d; /* daemon: producer, untrusted peer */
	struct uroce_shm_ring c; /* client: consumer */
};

static void
cq_setup(struct cq_pair *cp, uint32_t size, uint32_t start)
{
	size_t len = uroce_shm_ring_mem_size(size, sizeof(struct uroce_shm_cqe));

	cp->mem = aligned_alloc(64, len);
	cr_assert_not_null(cp->mem);
	cr_assert_eq(uroce_shm_ring_init(&cp->d, cp->mem, len, size,
					 sizeof(struct uroce_shm_cqe), start,
					 UROCE_SHM_RING_PRODUCER, UROCE_SHM_RING_F_UNTRUSTED), 0);
	cr_assert_eq(uroce_shm_ring_attach(&cp->c, cp->mem, len, UROCE_SHM_RING_CONSUMER, 0),
		     0);
}

static void
post_cqe(struct cq_pair *cp, uint64_t wr_id, uint8_t status, uint16_t flags)
{
	struct uroce_shm_cqe e;

	memset(&e, 0, sizeof(e));
	e.wr_id = wr_id;
	e.status = status;
	e.opcode = UROCE_WC_RECV;
	e.wc_flags = flags;
	cr_assert_eq(uroce_shm_ring_enqueue_burst(&cp->d, &e, 1), 1);
}

static uint32_t
poll_all(struct cq_pair *cp)
{
	struct uroce_shm_cqe out[16];
	uint32_t n, total = 0;

	/* The client copies out too here; the trusted zero-copy path is the
	 * same index protocol. */
	while ((n = uroce_shm_ring_cons_peek(&cp->c, 16)) != 0) {
		for (uint32_t i = 0; i < n; i++)
			memcpy(&out[i], uroce_shm_ring_cons_slot(&cp->c, i), sizeof(out[i]));
		uroce_shm_ring_cons_release(&cp->c, n);
		total += n;
	}
	return total;
}

Test(cq, not_armed_no_signal)
{
	struct cq_pair cp;

	cq_setup(&cp, 16, 0);
	post_cqe(&cp, 1, UROCE_WC_SUCCESS, 0);
	/* Expect: nobody armed, no event. */
	cr_expect_not(uroce_shm_cq_should_signal(&cp.d, true));
	free(cp.mem);
}

Test(cq, arm_then_cqe_signals_once)
{
	struct cq_pair cp;

	cq_setup(&cp, 16, UINT32_MAX - 1);
	/* Expect: empty CQ, arm returns 0 (wait for the daemon). */
	cr_expect_eq(uroce_shm_cq_arm(&cp.c, false), 0);
	post_cqe(&cp, 1, UROCE_WC_SUCCESS, 0);
	/* Expect: the daemon signals, once; the arm is consumed. */
	cr_expect(uroce_shm_cq_should_signal(&cp.d, false));
	post_cqe(&cp, 2, UROCE_WC_SUCCESS, 0);
	cr_expect_not(uroce_shm_cq_should_signal(&cp.d, false));
	/* Expect: poll, re-arm (empty again), next CQE signals again. */
	cr_expect_eq(poll_all(&cp), 2);
	cr_expect_eq(uroce_shm_cq_arm(&cp.c, false), 0);
	post_cqe(&cp, 3, UROCE_WC_SUCCESS, 0);
	cr_expect(uroce_shm_cq_should_signal(&cp.d, false));
	free(cp.mem);
}

Test(cq, cqe_published_before_the_arm_raises_no_event)
{
	struct cq_pair cp;

	cq_setup(&cp, 16, 0);
	/* Expect: the daemon publishes and checks a CQE while the CQ is not
	 * armed: no signal. */
	post_cqe(&cp, 1, UROCE_WC_SUCCESS, 0);
	cr_expect_not(uroce_shm_cq_should_signal(&cp.d, false));
	/* Expect: arming afterwards claims nothing for it (IBA 11.4.2.2: the
	 * event is for the next completion; perftest's event mode arms before
	 * it polls and takes each event as a new CQE), and the CQE is there to
	 * poll. */
	cr_expect_eq(uroce_shm_cq_arm(&cp.c, false), 0);
	cr_expect_eq(poll_all(&cp), 1);
	/* Expect: the next CQE raises the one event. */
	post_cqe(&cp, 2, UROCE_WC_SUCCESS, 0);
	cr_expect(uroce_shm_cq_should_signal(&cp.d, false));
	cr_expect_not(uroce_shm_cq_should_signal(&cp.d, false));
	cr_expect_eq(poll_all(&cp), 1);
	free(cp.mem);
}

/*
 * uroce_shm_cq_peek_armed() (CQ moderation): says whether the arm asks for
 * an event for what was just published, without claiming it, and marks it
 * judged; the later claim still finds the arm; a client arming after the
 * peek does not take the peeked CQEs for its own.
 */
Test(cq, peek_armed_judges_without_claiming)
{
	struct cq_pair cp;

	cq_setup(&cp, 16, 0);
	/* Expect: not armed: the peek says no. */
	post_cqe(&cp, 1, UROCE_WC_SUCCESS, 0);
	cr_expect_not(uroce_shm_cq_peek_armed(&cp.d, false));
	/* Expect: arming after that peek claims nothing for CQE 1 (judged). */
	cr_expect_eq(uroce_shm_cq_arm(&cp.c, false), 0);
	/* Expect: CQE 2 after the arm: the peek says yes, twice (no claim),
	 * and the claim afterwards still wins, once. */
	post_cqe(&cp, 2, UROCE_WC_SUCCESS, 0);
	cr_expect(uroce_shm_cq_peek_armed(&cp.d, false));
	cr_expect(uroce_shm_cq_peek_armed(&cp.d, false));
	cr_expect(uroce_shm_cq_should_signal(&cp.d, false));
	cr_expect_not(uroce_shm_cq_should_signal(&cp.d, false));
	cr_expect_not(uroce_shm_cq_peek_armed(&cp.d, false));
	cr_expect_eq(poll_all(&cp), 2);
	/* Expect: solicited-only arm: a plain CQE is no reason, an error is. */
	cr_expect_eq(uroce_shm_cq_arm(&cp.c, true), 0);
	post_cqe(&cp, 3, UROCE_WC_SUCCESS, 0);
	cr_expect_not(uroce_shm_cq_peek_armed(&cp.d, false));
	post_cqe(&cp, 4, UROCE_WC_REM_ACCESS_ERR, 0);
	cr_expect(uroce_shm_cq_peek_armed(&cp.d, true));
	cr_expect(uroce_shm_cq_should_signal(&cp.d, true));
	free(cp.mem);
}

Test(cq, cqe_published_but_not_yet_checked_is_claimed_by_the_arm)
{
	struct cq_pair cp;

	cq_setup(&cp, 16, 0);
	cr_expect_eq(poll_all(&cp), 0);
	/* Expect: a CQE the daemon published but has not yet checked against
	 * the arm word (it is between its commit and its check) may be the
	 * one the client's arm is for: the arm claims it (1), and the daemon's
	 * check then stays quiet, so there is exactly one event. */
	post_cqe(&cp, 1, UROCE_WC_SUCCESS, 0);
	cr_expect_eq(uroce_shm_cq_arm(&cp.c, false), 1);
	cr_expect_not(uroce_shm_cq_should_signal(&cp.d, false));
	cr_expect_eq(poll_all(&cp), 1);
	free(cp.mem);
}

Test(cq, rearm_while_armed_still_signals)
{
	struct cq_pair cp;

	cq_setup(&cp, 16, 0);
	/* Expect: arming twice before any event is one arm: a CQE published
	 * meanwhile raises one event. */
	cr_expect_eq(uroce_shm_cq_arm(&cp.c, false), 0);
	cr_expect_eq(uroce_shm_cq_arm(&cp.c, false), 0);
	post_cqe(&cp, 1, UROCE_WC_SUCCESS, 0);
	cr_expect(uroce_shm_cq_should_signal(&cp.d, false));
	cr_expect_not(uroce_shm_cq_should_signal(&cp.d, false));
	free(cp.mem);
}

Test(cq, solicited_only)
{
	struct cq_pair cp;

	cq_setup(&cp, 16, 0);
	cr_expect_eq(uroce_shm_cq_arm(&cp.c, true), 0);
	/* Expect: an unsolicited success does not fire a solicited arm. */
	post_cqe(&cp, 1, UROCE_WC_SUCCESS, 0);
	cr_expect_not(uroce_shm_cq_should_signal(&cp.d, false));
	/* Expect: a solicited one does. */
	post_cqe(&cp, 2, UROCE_WC_SUCCESS, UROCE_WC_SOLICITED);
	cr_expect(uroce_shm_cq_should_signal(&cp.d, true));
	cr_expect_eq(poll_all(&cp), 2);

	/* Client side of the race, solicited mode: unchecked CQEs that do not
	 * qualify leave the CQ armed (0); an error CQE qualifies (1). */
	post_cqe(&cp, 3, UROCE_WC_SUCCESS, 0);
	cr_expect_eq(uroce_shm_cq_arm(&cp.c, true), 0);
	post_cqe(&cp, 4, UROCE_WC_REM_ACCESS_ERR, 0);
	cr_expect_eq(uroce_shm_cq_arm(&cp.c, true), 1);
	cr_expect_not(uroce_shm_cq_should_signal(&cp.d, true));
	cr_expect_eq(poll_all(&cp), 2);
	free(cp.mem);
}

Test(cq, hostile_arm_words)
{
	struct cq_pair cp;

	cq_setup(&cp, 16, 1000);
	post_cqe(&cp, 1, UROCE_WC_SUCCESS, 0);
	/* Expect: an unknown mode is counted and ignored. */
	cp.c.hdr->cq_arm = (7ull << 32) | 1000;
	cr_expect_not(uroce_shm_cq_should_signal(&cp.d, true));
	cr_expect_eq(cp.d.bad_arm, 1);
	/* Expect: an arming index the client could not have had (more than
	 * twice the CQ size behind) is counted. */
	cp.c.hdr->cq_arm = (1ull << 32) | (1001 - 33);
	cr_expect_not(uroce_shm_cq_should_signal(&cp.d, true));
	cr_expect_eq(cp.d.bad_arm, 2);
	/* Expect: armed at the current producer index: nothing new, no event. */
	cp.c.hdr->cq_arm = (1ull << 32) | 1001;
	cr_expect_not(uroce_shm_cq_should_signal(&cp.d, true));
	cr_expect_eq(cp.d.bad_arm, 2);
	/* Expect: a sane arm word works. */
	cp.c.hdr->cq_arm = (1ull << 32) | 1000;
	cr_expect(uroce_shm_cq_should_signal(&cp.d, false));
	free(cp.mem);
}

Test(cq, arm_errors)
{
	struct cq_pair cp;

	cq_setup(&cp, 16, 0);
	/* Expect: -EINVAL on the producer handle; -EIO once the daemon's prod
	 * (as seen by the client) is impossible. */
	cr_expect_eq(uroce_shm_cq_arm(&cp.d, false), -EINVAL);
	cp.d.hdr->prod = 100;
	cr_expect_eq(uroce_shm_cq_arm(&cp.c, false), -EIO);
	cr_expect(uroce_shm_ring_is_corrupt(&cp.c));
	cr_expect_eq(uroce_shm_cq_arm(&cp.c, false), -EIO);
	free(cp.mem);
}

/* ---- the race, concurrently, with a real eventfd (shm_concurrent.h) ---- */

Test(cq, arm_poll_race_never_lost_never_doubled, .timeout = 60)
{
	struct conc_cq_result res;

	/* Expect: 5000 rounds of "drain, arm, poll, wait only if empty" racing
	 * one daemon CQE each, indices crossing 2^32: a client that found
	 * nothing is always woken, no round has two events, and the CQE is
	 * always there to poll. The arm claims some, the daemon signals some,
	 * and some CQEs come before the arm and raise nothing. */
	res = conc_cq_race(5000);
	cr_expect_eq(res.claimed + res.woken + res.quiet, 5000);
	cr_expect_eq(res.lost, 0);
	cr_expect_eq(res.doubled, 0);
	cr_expect_eq(res.missing, 0);
	cr_expect_eq(res.daemon_signals, res.woken);
	cr_expect_gt(res.woken, 0);
	cr_expect_gt(res.quiet, 0);
	cr_log_info("arm race: 5000 rounds, %u claimed by the arm, %u woken by the daemon, "
		    "%u quiet (CQE before the arm)", res.claimed, res.woken, res.quiet);
}

Test(cq, event_mode_ping_pong)
{
	struct cq_pair cp;
	int i;

	/* A one-entry CQ, as perftest's latency tests make: the armed
	 * consumer index is then two behind the producer. */
	cq_setup(&cp, 1, UINT32_MAX - 20);
	/* perftest's event mode: arm, then per message: wait for the event,
	 * arm again with the CQE still unpolled, poll it. Expect: each new
	 * CQE raises exactly one event, the old one none. */
	cr_expect_eq(uroce_shm_cq_arm(&cp.c, false), 0);
	for (i = 1; i <= 40; i++) {
		post_cqe(&cp, (uint64_t)i, UROCE_WC_SUCCESS, 0);
		cr_expect(uroce_shm_cq_should_signal(&cp.d, false), "CQE %d: no event", i);
		cr_expect_eq(uroce_shm_cq_arm(&cp.c, false), 0, "CQE %d: the arm claimed it", i);
		cr_expect_eq(poll_all(&cp), 1);
	}
	free(cp.mem);
}
