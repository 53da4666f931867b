/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The CM state machine (lib/cm/cm.c): two CMs, A (active) and B (passive),
 * joined by a wire the test drives MAD by MAD (each side's sends are
 * captured; the test delivers, drops or forges them) on a fake clock.
 * Every transition of IBA 12.9 is walked: connection and disconnection from
 * either side, retries and timeouts to the millisecond, MRAs, duplicates,
 * lost RTU and DREP, simultaneous DREQs, rejects (by the consumer, no
 * listener, invalid GID, stale connection), destruction in every state, time
 * wait, SIDR, LAP/APR, and malformed or unexpected MADs dropped and counted.
 */

#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "uroce_common.h"
#include "uroce_cm.h"

#include "cm_pair.h"

TestSuite(cm, .init = cm_pair_setup, .fini = cm_pair_teardown);

/* ------------------------------------------------------------------------ */
/* Connection and disconnection                                              */
/* ------------------------------------------------------------------------ */

Test(cm, connect_and_disconnect)
{
	struct uroce_cm_req_param p;
	struct uroce_cm_rep_param rp;
	struct uroce_cm_msg req, rep, rtu, dreq, drep;
	struct uroce_cm_id *a = uroce_cm_id_create(A.cm, &owner_tag), *b;

	/* Expect: A's REQ carries what it was given, the CA GUID and the permissive LIDs. */
	req_param(&p, 0x11, 15);
	cr_assert_eq(uroce_cm_send_req(a, &p), 0);
	req = deliver(&A, UROCE_CM_ATTR_REQ);
	cr_expect_eq(req.u.req.local_comm_id, uroce_cm_id_local_comm_id(a));
	cr_expect_eq(req.u.req.local_ca_guid, 0xA0A0A0A0A0A0A0A0ull);
	cr_expect_eq(req.u.req.local_qpn, 0x11);
	cr_expect_eq(req.u.req.starting_psn, 0xD4FEAC);
	cr_expect_eq(req.u.req.primary.local_lid, 0xFFFF);
	cr_expect_eq(req.u.req.primary.remote_lid, 0xFFFF);
	cr_expect_eq(req.u.req.primary.local_ack_timeout, 17, "ACK delay 15, life 16");
	cr_expect_eq(req.u.req.max_cm_retries, 15);
	cr_expect_eq(req.u.req.pkey, 0xFFFF);
	cr_expect_arr_eq(req.u.req.primary.local_gid, gid_a, 16);
	cr_expect_eq(req.u.req.private_data[3], 4);
	cr_expect_eq(A.to[0].remote_qpn, 1, "MADs go to QP1");
	/* Expect: B has a new id in REQ_RCVD and told its consumer. */
	b = B.last_new;
	cr_assert_not_null(b);
	expect_event(&B, 0, UROCE_CM_EV_REQ_RECEIVED);
	cr_expect_eq(B.ev[0].msg.u.req.local_qpn, 0x11);
	cr_expect_eq(uroce_cm_id_context(b), &owner_tag);
	cr_expect_arr_eq(uroce_cm_id_addr(b)->dgid, gid_a, 16, "B answers A's GID");
	/* Expect: B's REP echoes the REQ's TID, names A's comm ID, carries the ACK delay. */
	rep_param(&rp, 0x211);
	cr_assert_eq(uroce_cm_send_rep(b, &rp), 0);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_REP_SENT);
	rep = deliver(&B, UROCE_CM_ATTR_REP);
	cr_expect_eq(rep.hdr.tid, req.hdr.tid);
	cr_expect_eq(rep.u.rep.remote_comm_id, req.u.req.local_comm_id);
	cr_expect_eq(rep.u.rep.local_comm_id, uroce_cm_id_local_comm_id(b));
	cr_expect_eq(rep.u.rep.target_ack_delay, 15);
	cr_expect_eq(rep.u.rep.local_ca_guid, 0xB0B0B0B0B0B0B0B0ull);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_REP_RCVD);
	expect_event(&A, 0, UROCE_CM_EV_REP_RECEIVED);
	cr_expect_eq(A.ev[0].msg.u.rep.local_qpn, 0x211);
	/* Expect: the RTU makes both ESTABLISHED, and no timer is left. */
	cr_assert_eq(uroce_cm_send_rtu(a, NULL, 0), 0);
	rtu = deliver(&A, UROCE_CM_ATTR_RTU);
	cr_expect_eq(rtu.hdr.tid, req.hdr.tid);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_ESTABLISHED);
	expect_event(&B, 1, UROCE_CM_EV_RTU_RECEIVED);
	cr_expect_eq(advance_ms(60000), 0, "no timer in ESTABLISHED");
	/* Expect: a DREQ names B's QP; B's DREP echoes its TID; both wait out time wait. */
	cr_assert_eq(uroce_cm_send_dreq(a, NULL, 0), 0);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_DREQ_SENT);
	dreq = deliver(&A, UROCE_CM_ATTR_DREQ);
	cr_expect_eq(dreq.u.dreq.remote_qpn, 0x211);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_DREQ_RCVD);
	expect_event(&B, 2, UROCE_CM_EV_DREQ_RECEIVED);
	cr_assert_eq(uroce_cm_send_drep(b, NULL, 0), 0);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_TIMEWAIT);
	drep = deliver(&B, UROCE_CM_ATTR_DREP);
	cr_expect_eq(drep.hdr.tid, dreq.hdr.tid);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_TIMEWAIT);
	expect_event(&A, 1, UROCE_CM_EV_DREP_RECEIVED);
	/* Time wait: ms(17) = 512 ms on A (its ACK timeout from the REP), ms(17) on B. */
	cr_expect_eq(advance_ms(511), 0);
	cr_expect_eq(advance_ms(1), 2);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_IDLE);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_IDLE);
	expect_event(&A, 2, UROCE_CM_EV_TIMEWAIT_EXIT);
	expect_event(&B, 3, UROCE_CM_EV_TIMEWAIT_EXIT);
	uroce_cm_id_destroy(a);
	uroce_cm_id_destroy(b);
	cr_expect_eq(pending(&A) + pending(&B), 0, "destroying IDLE ids sends nothing");
	cr_expect_eq(uroce_cm_id_count(A.cm) + uroce_cm_id_count(B.cm), 0);
	cr_expect_eq(cnt(&A, UROCE_CM_CNT_REQ_SENT), 1);
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_REQ_RCVD), 1);
	cr_expect_eq(cnt(&A, UROCE_CM_CNT_TIMEWAIT_EXITS), 1);
}

Test(cm, passive_side_disconnects)
{
	struct uroce_cm_id *a = connect_ab(0x11, 15), *b = B.last_new;
	struct uroce_cm_msg dreq;

	cr_assert_eq(uroce_cm_send_dreq(b, NULL, 0), 0);
	dreq = deliver(&B, UROCE_CM_ATTR_DREQ);
	cr_expect_eq(dreq.u.dreq.remote_qpn, 0x11, "names A's QP");
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_DREQ_RCVD);
	cr_assert_eq(uroce_cm_send_drep(a, NULL, 0), 0);
	deliver(&A, UROCE_CM_ATTR_DREP);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_TIMEWAIT);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_TIMEWAIT);
}

/* Both sides disconnect at once: each DREQ meets a DREQ_SENT (IBA 12.9.8.1). */
Test(cm, simultaneous_dreqs)
{
	struct uroce_cm_id *a = connect_ab(0x11, 15), *b = B.last_new;

	cr_assert_eq(uroce_cm_send_dreq(a, NULL, 0), 0);
	cr_assert_eq(uroce_cm_send_dreq(b, NULL, 0), 0);
	deliver(&A, UROCE_CM_ATTR_DREQ);
	deliver(&B, UROCE_CM_ATTR_DREQ);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_DREQ_RCVD);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_DREQ_RCVD);
	cr_assert_eq(uroce_cm_send_drep(a, NULL, 0), 0);
	cr_assert_eq(uroce_cm_send_drep(b, NULL, 0), 0);
	deliver(&A, UROCE_CM_ATTR_DREP);
	deliver(&B, UROCE_CM_ATTR_DREP); /* in TIMEWAIT already: dropped */
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_TIMEWAIT);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_TIMEWAIT);
	cr_expect_eq(advance_ms(10000), 2);
	cr_expect_eq(pending(&A) + pending(&B), 0, "no retransmission left");
}

/* The DREP is lost: the DREQ is resent and answered again from time wait. */
Test(cm, lost_drep_answered_from_timewait)
{
	struct uroce_cm_id *a = connect_ab(0x11, 15), *b = B.last_new;
	struct uroce_cm_msg d1, d2;

	cr_assert_eq(uroce_cm_send_dreq(a, NULL, 0), 0);
	d1 = deliver(&A, UROCE_CM_ATTR_DREQ);
	uroce_cm_send_drep(b, NULL, 0);
	drop(&B, UROCE_CM_ATTR_DREP);
	/* A's DREQ timer: the REQ's interval, 2 ms(16) + ms(20) = 4608 ms. */
	clk_us += 4607 * 1000;
	cr_expect_eq(uroce_cm_poll(A.cm), 0);
	clk_us += 1000;
	cr_expect_eq(uroce_cm_poll(A.cm), 1);
	d2 = deliver(&A, UROCE_CM_ATTR_DREQ);
	cr_expect_eq(d2.hdr.tid, d1.hdr.tid);
	deliver(&B, UROCE_CM_ATTR_DREP);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_TIMEWAIT);
	cr_expect_eq(cnt(&A, UROCE_CM_CNT_DREQ_RETRIES), 1);
}

/* DREQs are retried max_cm_retries times, then DREQ_TIMEOUT and time wait. */
Test(cm, dreq_retries_then_timeout)
{
	struct uroce_cm_id *a = connect_ab(0x11, 2);
	unsigned int i;

	cr_assert_eq(uroce_cm_send_dreq(a, NULL, 0), 0);
	drop(&A, UROCE_CM_ATTR_DREQ);
	for (i = 0; i < 2; i++) {
		advance_ms(4608);
		drop(&A, UROCE_CM_ATTR_DREQ);
	}
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_DREQ_SENT);
	advance_ms(4608);
	cr_expect_eq(pending(&A), 0, "no fourth DREQ");
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_TIMEWAIT);
	expect_event(&A, 1, UROCE_CM_EV_DREQ_TIMEOUT);
	cr_expect_eq(cnt(&A, UROCE_CM_CNT_DREQ_TIMEOUTS), 1);
}

/* ------------------------------------------------------------------------ */
/* Retries, timeouts, MRA, duplicates                                        */
/* ------------------------------------------------------------------------ */

Test(cm, req_retries_then_timeout)
{
	struct uroce_cm_req_param p;
	struct uroce_cm_id *a = uroce_cm_id_create(A.cm, &owner_tag);
	uint64_t t0 = clk_us;
	unsigned int i;

	req_param(&p, 0x11, 3);
	cr_assert_eq(uroce_cm_send_req(a, &p), 0);
	/* IBA 12.7.4: 2 ms(life 16) + ms(remote CM response timeout 20) = 4608 ms. */
	cr_expect_eq(uroce_cm_next_deadline(A.cm), t0 + 4608000);
	for (i = 0; i < 3; i++) {
		cr_expect_eq(advance_ms(4607), 0);
		cr_expect_eq(advance_ms(1), 1, "retry %u", i);
		cr_expect_eq(pending(&A), i + 2);
	}
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_REQ_SENT);
	cr_expect_eq(advance_ms(4608), 1);
	cr_expect_eq(pending(&A), 4, "1 + max_cm_retries REQs in all");
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_IDLE);
	expect_event(&A, 0, UROCE_CM_EV_REQ_TIMEOUT);
	cr_expect_not(A.ev[0].has_msg);
	cr_expect_eq(cnt(&A, UROCE_CM_CNT_REQ_RETRIES), 3);
	cr_expect_eq(cnt(&A, UROCE_CM_CNT_REQ_TIMEOUTS), 1);
	/* every resend is the same REQ */
	cr_expect_arr_eq(A.q[0], A.q[3], UROCE_MAD_LEN);
	uroce_cm_id_destroy(a);
	cr_expect_eq(pending(&A), 4, "an IDLE id is destroyed quietly");
	cr_expect_eq(uroce_cm_id_count(A.cm), 0);
}

/* A send QP1 had no room for is covered by the retransmission timer. */
Test(cm, failed_send_covered_by_retry)
{
	struct uroce_cm_req_param p;
	struct uroce_cm_id *a = uroce_cm_id_create(A.cm, &owner_tag);

	req_param(&p, 0x11, 3);
	A.fail_send = 1;
	cr_expect_eq(uroce_cm_send_req(a, &p), -ENOBUFS);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_REQ_SENT);
	cr_expect_eq(cnt(&A, UROCE_CM_CNT_TX_FAILED), 1);
	advance_ms(4608);
	deliver(&A, UROCE_CM_ATTR_REQ);
	cr_expect_not_null(B.last_new);
}

/* The consumer is slow: a duplicate REQ gets an MRA, which stretches A's wait. */
Test(cm, mra_for_duplicate_req)
{
	struct uroce_cm_id *a = to_req_rcvd(0x11, 15), *b = B.last_new;
	struct uroce_cm_rep_param rp;
	struct uroce_cm_msg mra;

	cr_expect_eq(advance_ms(4608), 1);
	deliver(&A, UROCE_CM_ATTR_REQ); /* the duplicate */
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_MRA_REQ_SENT);
	cr_expect_eq(B.nev, 1, "no second REQ_RECEIVED");
	mra = deliver(&B, UROCE_CM_ATTR_MRA);
	cr_expect_eq(mra.u.mra.msg_mraed, UROCE_CM_REF_REQ);
	cr_expect_eq(mra.u.mra.service_timeout, 24);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_MRA_REQ_RCVD);
	/* ms(24) + ms(A's ACK timeout 17) = 65536 + 512 ms (B has no timer). */
	cr_expect_eq(advance_ms(65536 + 511), 0);
	cr_expect_eq(advance_ms(1), 1);
	deliver(&A, UROCE_CM_ATTR_REQ); /* back to REQ_SENT, another try */
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_REQ_SENT);
	deliver(&B, UROCE_CM_ATTR_MRA); /* B resends the same MRA */
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_MRA_REQ_RCVD);
	/* The consumer answers at last, from MRA_REQ_SENT. */
	rep_param(&rp, 0x211);
	cr_assert_eq(uroce_cm_send_rep(b, &rp), 0);
	deliver(&B, UROCE_CM_ATTR_REP);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_REP_RCVD);
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_DUP_REQ), 2);
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_MRA_SENT), 2);
	cr_expect_eq(cnt(&A, UROCE_CM_CNT_MRA_RCVD), 2);
}

/* No RTU: the REP is resent every ms(REQ local CM response timeout), then REP_TIMEOUT. */
Test(cm, rep_retries_then_timeout)
{
	struct uroce_cm_rep_param rp;
	struct uroce_cm_id *b;
	unsigned int i;

	to_req_rcvd(0x11, 2);
	b = B.last_new;
	rep_param(&rp, 0x211);
	cr_assert_eq(uroce_cm_send_rep(b, &rp), 0);
	drop(&B, UROCE_CM_ATTR_REP);
	for (i = 0; i < 2; i++) {
		clk_us += 4095 * 1000;
		cr_expect_eq(uroce_cm_poll(B.cm), 0);
		clk_us += 1000;
		cr_expect_eq(uroce_cm_poll(B.cm), 1);
		drop(&B, UROCE_CM_ATTR_REP);
	}
	clk_us += 4096 * 1000;
	cr_expect_eq(uroce_cm_poll(B.cm), 1);
	cr_expect_eq(pending(&B), 0);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_IDLE);
	expect_event(&B, 1, UROCE_CM_EV_REP_TIMEOUT);
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_REP_TIMEOUTS), 1);
}

/* The RTU is lost: B resends its REP, and A, established, resends the RTU. */
Test(cm, lost_rtu_resent_on_duplicate_rep)
{
	struct uroce_cm_rep_param rp;
	struct uroce_cm_id *a = to_req_rcvd(0x11, 15), *b = B.last_new;
	struct uroce_cm_msg r1, r2;

	rep_param(&rp, 0x211);
	uroce_cm_send_rep(b, &rp);
	deliver(&B, UROCE_CM_ATTR_REP);
	uroce_cm_send_rtu(a, NULL, 0);
	r1 = drop(&A, UROCE_CM_ATTR_RTU);
	clk_us += 4096 * 1000;
	cr_expect_eq(uroce_cm_poll(B.cm), 1);
	deliver(&B, UROCE_CM_ATTR_REP);
	r2 = deliver(&A, UROCE_CM_ATTR_RTU);
	cr_expect_eq(memcmp(&r1.u.rtu, &r2.u.rtu, sizeof(r1.u.rtu)), 0);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_ESTABLISHED);
	cr_expect_eq(cnt(&A, UROCE_CM_CNT_DUP_REP), 1);
	cr_expect_eq(cnt(&A, UROCE_CM_CNT_RTU_SENT), 2);
}

/* A's consumer is slow to RTU: a duplicate REP gets an MRA(REP). */
Test(cm, mra_for_duplicate_rep)
{
	struct uroce_cm_rep_param rp;
	struct uroce_cm_id *a = to_req_rcvd(0x11, 15), *b = B.last_new;
	struct uroce_cm_msg mra;

	rep_param(&rp, 0x211);
	uroce_cm_send_rep(b, &rp);
	deliver(&B, UROCE_CM_ATTR_REP);
	clk_us += 4096 * 1000;
	cr_expect_eq(uroce_cm_poll(B.cm), 1);
	deliver(&B, UROCE_CM_ATTR_REP);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_MRA_REP_SENT);
	mra = deliver(&A, UROCE_CM_ATTR_MRA);
	cr_expect_eq(mra.u.mra.msg_mraed, UROCE_CM_REF_REP);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_MRA_REP_RCVD);
	cr_expect_eq(A.nev, 1, "one REP_RECEIVED only");
	cr_assert_eq(uroce_cm_send_rtu(a, NULL, 0), 0);
	deliver(&A, UROCE_CM_ATTR_RTU);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_ESTABLISHED);
}

/* The passive QP saw data before any RTU (IBA 12.9.7): ESTABLISHED without it. */
Test(cm, communication_established_without_rtu)
{
	struct uroce_cm_rep_param rp;
	struct uroce_cm_id *b;

	to_req_rcvd(0x11, 15);
	b = B.last_new;
	cr_expect_eq(uroce_cm_established(b), -EINVAL, "not before the REP");
	rep_param(&rp, 0x211);
	uroce_cm_send_rep(b, &rp);
	cr_expect_eq(uroce_cm_established(b), 0);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_ESTABLISHED);
	clk_us += 100000 * 1000ull;
	cr_expect_eq(uroce_cm_poll(B.cm), 0, "the REP timer is gone");
}

/* ------------------------------------------------------------------------ */
/* Rejects                                                                   */
/* ------------------------------------------------------------------------ */

Test(cm, consumer_rejects)
{
	static const uint8_t pd[8] = {9, 8, 7, 6, 5, 4, 3, 2};
	struct uroce_cm_id *a = to_req_rcvd(0x11, 15), *b = B.last_new;
	struct uroce_cm_msg rej;

	cr_assert_eq(uroce_cm_send_rej(b, UROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, pd, sizeof(pd)),
		     0);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_IDLE);
	rej = deliver(&B, UROCE_CM_ATTR_REJ);
	cr_expect_eq(rej.u.rej.reason, 28);
	cr_expect_eq(rej.u.rej.msg_rejected, UROCE_CM_REF_REQ);
	cr_expect_eq(rej.u.rej.remote_comm_id, uroce_cm_id_local_comm_id(a));
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_IDLE);
	expect_event(&A, 0, UROCE_CM_EV_REJ_RECEIVED);
	cr_expect_arr_eq(A.ev[0].msg.u.rej.private_data, pd, sizeof(pd));
	cr_expect_eq(advance_ms(100000), 0, "A's REQ timer is gone");
}

Test(cm, no_listener_rejects_with_invalid_service_id)
{
	struct uroce_cm_req_param p;
	struct uroce_cm_id *a = uroce_cm_id_create(A.cm, &owner_tag);
	struct uroce_cm_msg req, rej;

	B.req_answer = UROCE_CM_REJ_INVALID_SERVICE_ID;
	req_param(&p, 0x11, 15);
	uroce_cm_send_req(a, &p);
	req = deliver(&A, UROCE_CM_ATTR_REQ);
	rej = deliver(&B, UROCE_CM_ATTR_REJ);
	cr_expect_eq(rej.u.rej.reason, 8);
	cr_expect_eq(rej.hdr.tid, req.hdr.tid, "a REJ echoes the TID it answers");
	cr_expect_eq(rej.u.rej.remote_comm_id, uroce_cm_id_local_comm_id(a));
	expect_event(&A, 0, UROCE_CM_EV_REJ_RECEIVED);
	cr_expect_eq(A.ev[0].msg.u.rej.reason, 8);
	cr_expect_eq(uroce_cm_id_count(B.cm), 0, "B kept nothing");
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_REJ_NO_LISTENER), 1);
}

Test(cm, invalid_gid_rejected_with_ari)
{
	struct uroce_cm_msg rej;

	B.req_answer = UROCE_CM_REJ_INVALID_GID;
	memcpy(B.ari, gid_b, 16);
	B.ari_len = 16;
	{
		struct uroce_cm_req_param p;
		struct uroce_cm_id *a = uroce_cm_id_create(A.cm, &owner_tag);

		req_param(&p, 0x11, 15);
		uroce_cm_send_req(a, &p);
		deliver(&A, UROCE_CM_ATTR_REQ);
	}
	rej = deliver(&B, UROCE_CM_ATTR_REJ);
	cr_expect_eq(rej.u.rej.reason, 12);
	cr_expect_eq(rej.u.rej.ari_length, 16);
	cr_expect_arr_eq(rej.u.rej.ari, gid_b, 16);
}

/* CM-level refusals need no consumer: an XRC or RD transport, a bad MTU. */
Test(cm, unusable_req_rejected_by_the_cm)
{
	struct uroce_cm_msg m, rej;

	memset(&m, 0, sizeof(m));
	m.u.req.local_comm_id = 77;
	m.u.req.transport = UROCE_CM_TRANSPORT_XRC;
	m.u.req.path_mtu = UROCE_MTU_1024;
	inject(&B, &m, UROCE_CM_ATTR_REQ);
	rej = deliver(&B, UROCE_CM_ATTR_REJ);
	cr_expect_eq(rej.u.rej.reason, UROCE_CM_REJ_INVALID_TRANSPORT_TYPE);
	cr_expect_eq(rej.u.rej.local_comm_id, 0, "no state kept");
	cr_expect_eq(rej.u.rej.remote_comm_id, 77);
	m.u.req.transport = UROCE_CM_TRANSPORT_RC;
	m.u.req.path_mtu = 6;
	inject(&B, &m, UROCE_CM_ATTR_REQ);
	rej = deliver(&B, UROCE_CM_ATTR_REJ);
	cr_expect_eq(rej.u.rej.reason, UROCE_CM_REJ_INVALID_MTU);
	cr_expect_eq(B.nev, 0);
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_REJ_INVALID), 2);
}

/* A REQ from a QP still connected to us: REJ stale, and the old one is ended. */
Test(cm, stale_connection)
{
	struct uroce_cm_req_param p;
	struct uroce_cm_id *old_b, *a2;
	struct uroce_cm_msg rej;

	connect_ab(0x11, 15);
	old_b = B.last_new;
	B.last_new = NULL;
	a2 = uroce_cm_id_create(A.cm, &owner_tag);
	req_param(&p, 0x11, 15); /* the same QPN from the same CA */
	uroce_cm_send_req(a2, &p);
	deliver(&A, UROCE_CM_ATTR_REQ);
	cr_expect_null(B.last_new, "no new connection");
	rej = deliver(&B, UROCE_CM_ATTR_REJ);
	cr_expect_eq(rej.u.rej.reason, UROCE_CM_REJ_STALE_CONN);
	cr_expect_eq(uroce_cm_id_state(old_b), UROCE_CM_DREQ_SENT);
	/* A's REQ refused as stale: its QPN stays warm in time wait. */
	cr_expect_eq(uroce_cm_id_state(a2), UROCE_CM_TIMEWAIT);
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_REJ_STALE), 1);
}

/* A duplicate REQ for a connection in time wait is stale too. */
Test(cm, duplicate_req_in_timewait)
{
	struct uroce_cm_id *a = connect_ab(0x11, 15), *b = B.last_new;
	struct uroce_cm_msg m;

	uroce_cm_send_dreq(b, NULL, 0);
	deliver(&B, UROCE_CM_ATTR_DREQ);
	uroce_cm_send_drep(a, NULL, 0);
	deliver(&A, UROCE_CM_ATTR_DREP);
	cr_assert_eq(uroce_cm_id_state(b), UROCE_CM_TIMEWAIT);
	m = B.ev[0].msg; /* the REQ B got */
	inject(&B, &m, UROCE_CM_ATTR_REQ);
	cr_expect_eq(drop(&B, UROCE_CM_ATTR_REJ).u.rej.reason, UROCE_CM_REJ_STALE_CONN);
}

/* ------------------------------------------------------------------------ */
/* Destroying ids                                                            */
/* ------------------------------------------------------------------------ */

Test(cm, destroy_sends_what_the_peer_is_owed)
{
	struct uroce_cm_id *a, *b;
	struct uroce_cm_msg m;

	/* REQ_SENT: REJ Timeout, the ARI naming A's CA; B's waiting id ends. */
	a = to_req_rcvd(0x11, 15);
	b = B.last_new;
	uroce_cm_id_destroy(a);
	cr_expect_eq(uroce_cm_id_count(A.cm), 0, "freed at once");
	m = deliver(&A, UROCE_CM_ATTR_REJ);
	cr_expect_eq(m.u.rej.reason, UROCE_CM_REJ_TIMEOUT);
	cr_expect_eq(m.u.rej.ari_length, 8);
	cr_expect_eq(m.u.rej.ari[0], 0xA0);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_IDLE);
	expect_event(&B, 1, UROCE_CM_EV_REJ_RECEIVED);
	uroce_cm_id_destroy(b);

	/* REQ_RCVD: REJ Consumer Defined. */
	a = to_req_rcvd(0x12, 15);
	uroce_cm_id_destroy(B.last_new);
	m = deliver(&B, UROCE_CM_ATTR_REJ);
	cr_expect_eq(m.u.rej.reason, UROCE_CM_REJ_CONSUMER_DEFINED);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_IDLE);
	uroce_cm_id_destroy(a);

	/* ESTABLISHED: one DREQ, then time wait; freed after it. */
	a = connect_ab(0x13, 15);
	b = B.last_new;
	uroce_cm_id_destroy(a);
	cr_expect_eq(uroce_cm_id_count(A.cm), 1, "kept through time wait");
	deliver(&A, UROCE_CM_ATTR_DREQ);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_DREQ_RCVD);
	/* DREQ_RCVD: the DREP is sent for the consumer. */
	uroce_cm_id_destroy(b);
	deliver(&B, UROCE_CM_ATTR_DREP); /* A is in time wait: dropped */
	advance_ms(600);
	cr_expect_eq(uroce_cm_id_count(A.cm) + uroce_cm_id_count(B.cm), 0);
	cr_expect_eq(pending(&A) + pending(&B), 0, "no retransmission");
}

Test(cm, destroy_rep_states_reject_and_wait)
{
	struct uroce_cm_rep_param rp;
	struct uroce_cm_id *a = to_req_rcvd(0x11, 15), *b = B.last_new;
	struct uroce_cm_msg m;

	rep_param(&rp, 0x211);
	uroce_cm_send_rep(b, &rp);
	deliver(&B, UROCE_CM_ATTR_REP);
	/* A in REP_RCVD destroyed: REJ of the REP, time wait. */
	uroce_cm_id_destroy(a);
	m = deliver(&A, UROCE_CM_ATTR_REJ);
	cr_expect_eq(m.u.rej.msg_rejected, UROCE_CM_REF_REP);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_TIMEWAIT);
	expect_event(&B, 1, UROCE_CM_EV_REJ_RECEIVED);
	cr_expect_eq(uroce_cm_id_count(A.cm), 1);
	advance_ms(1000);
	cr_expect_eq(uroce_cm_id_count(A.cm), 0);
	expect_event(&B, 2, UROCE_CM_EV_TIMEWAIT_EXIT);
}

/* Destroying from inside the event callback is safe (ids are freed later). */
static int
destroy_in_callback(void *ctx, struct uroce_cm_id *id, const struct uroce_cm_event *ev)
{
	(void)ctx;
	if (ev->type == UROCE_CM_EV_REJ_RECEIVED || ev->type == UROCE_CM_EV_REQ_TIMEOUT)
		uroce_cm_id_destroy(id);
	return 0;
}

Test(cm, destroy_inside_event)
{
	static const struct uroce_cm_ops o = {now_us, send_mad, destroy_in_callback};
	struct uroce_cm_conf c = {.ops = &o, .ctx = &A, .ca_guid = 1};
	struct uroce_cm_req_param p;
	struct uroce_cm *cm = uroce_cm_create(&c);
	struct uroce_cm_id *a = uroce_cm_id_create(cm, &owner_tag);

	req_param(&p, 0x11, 0);
	uroce_cm_send_req(a, &p);
	clk_us += 4608 * 1000;
	cr_expect_eq(uroce_cm_poll(cm), 1);
	cr_expect_eq(uroce_cm_id_count(cm), 0);
	uroce_cm_destroy(cm);
}

/* ------------------------------------------------------------------------ */
/* SIDR, LAP/APR                                                             */
/* ------------------------------------------------------------------------ */

static struct uroce_cm_id *
sidr_send(uint8_t retries)
{
	static const uint8_t pd[4] = {4, 3, 2, 1};
	struct uroce_cm_sidr_req_param s;
	struct uroce_cm_id *a = uroce_cm_id_create(A.cm, &owner_tag);

	memset(&s, 0, sizeof(s));
	memcpy(s.addr.sgid, gid_a, 16);
	memcpy(s.addr.dgid, gid_b, 16);
	s.service_id = 0x0000000001111234ull;
	s.max_cm_retries = retries;
	s.private_data = pd;
	s.private_data_len = sizeof(pd);
	cr_assert_eq(uroce_cm_send_sidr_req(a, &s), 0);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_SIDR_REQ_SENT);
	return a;
}

Test(cm, sidr_resolution)
{
	struct uroce_cm_sidr_rep_param r = {.status = 0, .qpn = 0x345, .qkey = 0x01234567};
	struct uroce_cm_id *a = sidr_send(3);
	struct uroce_cm_msg q, rep;

	q = deliver(&A, UROCE_CM_ATTR_SIDR_REQ);
	cr_expect_eq(q.u.sidr_req.request_id, uroce_cm_id_local_comm_id(a));
	cr_expect_eq(q.u.sidr_req.pkey, 0xFFFF);
	expect_event(&B, 0, UROCE_CM_EV_SIDR_REQ_RECEIVED);
	cr_expect_eq(uroce_cm_id_state(B.last_new), UROCE_CM_SIDR_REQ_RCVD);
	/* a duplicate while the consumer decides is dropped */
	advance_ms(4096);
	deliver(&A, UROCE_CM_ATTR_SIDR_REQ);
	cr_expect_eq(B.nev, 1);
	cr_assert_eq(uroce_cm_send_sidr_rep(B.last_new, &r), 0);
	rep = deliver(&B, UROCE_CM_ATTR_SIDR_REP);
	cr_expect_eq(rep.hdr.tid, q.hdr.tid);
	cr_expect_eq(rep.u.sidr_rep.service_id, 0x0000000001111234ull);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_IDLE);
	expect_event(&A, 0, UROCE_CM_EV_SIDR_REP_RECEIVED);
	cr_expect_eq(A.ev[0].msg.u.sidr_rep.qpn, 0x345);
	cr_expect_eq(A.ev[0].msg.u.sidr_rep.qkey, 0x01234567);
	cr_expect_eq(advance_ms(100000), 0);
}

Test(cm, sidr_no_listener_and_timeout)
{
	struct uroce_cm_id *a;

	B.req_answer = UROCE_CM_SIDR_UNSUPPORTED;
	a = sidr_send(1);
	deliver(&A, UROCE_CM_ATTR_SIDR_REQ);
	cr_expect_eq(deliver(&B, UROCE_CM_ATTR_SIDR_REP).u.sidr_rep.status, 1);
	expect_event(&A, 0, UROCE_CM_EV_SIDR_REP_RECEIVED);
	cr_expect_eq(uroce_cm_id_count(B.cm), 0);
	uroce_cm_id_destroy(a);
	a = sidr_send(1);
	drop(&A, UROCE_CM_ATTR_SIDR_REQ);
	advance_ms(4096);
	drop(&A, UROCE_CM_ATTR_SIDR_REQ);
	advance_ms(4096);
	expect_event(&A, 1, UROCE_CM_EV_SIDR_TIMEOUT);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_IDLE);
}

Test(cm, lap_refused_apr_dropped)
{
	struct uroce_cm_id *a = connect_ab(0x11, 15), *b = B.last_new;
	struct uroce_cm_msg m;

	memset(&m, 0, sizeof(m));
	m.u.lap.local_comm_id = uroce_cm_id_local_comm_id(a);
	m.u.lap.remote_comm_id = uroce_cm_id_local_comm_id(b);
	inject(&B, &m, UROCE_CM_ATTR_LAP);
	m = drop(&B, UROCE_CM_ATTR_APR);
	cr_expect_eq(m.u.apr.ap_status, UROCE_CM_APR_UNSUPPORTED);
	cr_expect_eq(m.u.apr.remote_comm_id, uroce_cm_id_local_comm_id(a));
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_ESTABLISHED);
	memset(&m, 0, sizeof(m));
	m.u.apr.local_comm_id = uroce_cm_id_local_comm_id(a);
	m.u.apr.remote_comm_id = uroce_cm_id_local_comm_id(b);
	inject(&B, &m, UROCE_CM_ATTR_APR);
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_APR_DROPPED), 1);
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_LAP_REFUSED), 1);
	cr_expect_eq(pending(&B), 0);
}

/* ------------------------------------------------------------------------ */
/* Bad and unexpected MADs                                                   */
/* ------------------------------------------------------------------------ */

Test(cm, malformed_mads_dropped_and_counted)
{
	struct uroce_cm_addr from = {.remote_qpn = 1};
	uint8_t mad[UROCE_MAD_LEN];
	struct uroce_cm_msg m;

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = UROCE_CM_ATTR_RTU;
	uroce_cm_msg_encode(&m, mad);
	uroce_cm_rx(B.cm, &from, mad, 255);
	mad[2] = 1;
	uroce_cm_rx(B.cm, &from, mad, sizeof(mad));
	mad[2] = 2;
	mad[17] = 0x02;
	uroce_cm_rx(B.cm, &from, mad, sizeof(mad));
	mad[17] = 0x11;
	mad[24 + 8] = 0xC0;
	uroce_cm_rx(B.cm, &from, mad, sizeof(mad));
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_RX_MADS), 4);
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_RX_BAD_LENGTH), 1);
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_RX_BAD_HEADER), 1);
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_RX_BAD_ATTR), 1);
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_RX_BAD_FIELD), 1);
	cr_expect_eq(pending(&B), 0);
	cr_expect_eq(B.nev, 0);
	cr_expect_eq(uroce_cm_id_count(B.cm), 0);
}

/* Messages for no connection are dropped; a DREQ is still answered. */
Test(cm, unmatched_messages)
{
	struct uroce_cm_msg m, drep;

	memset(&m, 0, sizeof(m));
	m.u.rtu.local_comm_id = 5;
	m.u.rtu.remote_comm_id = 6;
	inject(&B, &m, UROCE_CM_ATTR_RTU);
	inject(&B, &m, UROCE_CM_ATTR_DREP);
	memset(&m, 0, sizeof(m));
	m.u.rep.local_comm_id = 5;
	m.u.rep.remote_comm_id = 6;
	inject(&B, &m, UROCE_CM_ATTR_REP);
	memset(&m, 0, sizeof(m));
	m.hdr.tid = 0x1234;
	m.u.dreq.local_comm_id = 5;
	m.u.dreq.remote_comm_id = 6;
	inject(&B, &m, UROCE_CM_ATTR_DREQ);
	drep = drop(&B, UROCE_CM_ATTR_DREP);
	cr_expect_eq(drep.hdr.tid, 0x1234);
	cr_expect_eq(drep.u.rtu.local_comm_id, 6);
	cr_expect_eq(drep.u.rtu.remote_comm_id, 5);
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_RX_UNMATCHED), 4);
	cr_expect_eq(pending(&B), 0);
}

/* Right comm IDs, wrong moment: nothing moves (the accepts[] table). */
Test(cm, unexpected_messages_change_nothing)
{
	struct uroce_cm_id *a = to_req_rcvd(0x11, 15), *b = B.last_new;
	uint32_t la = uroce_cm_id_local_comm_id(a), lb = uroce_cm_id_local_comm_id(b);
	static const uint16_t attrs[] = {UROCE_CM_ATTR_RTU, UROCE_CM_ATTR_DREQ, UROCE_CM_ATTR_DREP,
					 UROCE_CM_ATTR_MRA, UROCE_CM_ATTR_LAP};
	struct uroce_cm_msg m;
	unsigned int i;

	/* B in REQ_RCVD takes no RTU, DREQ, DREP, MRA or LAP. */
	for (i = 0; i < UROCE_ARRAY_SIZE(attrs); i++) {
		memset(&m, 0, sizeof(m));
		m.u.rtu.local_comm_id = la;
		m.u.rtu.remote_comm_id = lb;
		if (attrs[i] == UROCE_CM_ATTR_DREQ) {
			m.u.dreq.local_comm_id = la;
			m.u.dreq.remote_comm_id = lb;
		}
		inject(&B, &m, attrs[i]);
		cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_REQ_RCVD, "after %s",
			     uroce_cm_attr_name(attrs[i]));
	}
	cr_expect_eq(cnt(&B, UROCE_CM_CNT_RX_BAD_STATE), UROCE_ARRAY_SIZE(attrs));
	cr_expect_eq(B.nev, 1);
	/* A in REQ_SENT takes no RTU (its comm IDs are not known yet either). */
	memset(&m, 0, sizeof(m));
	m.u.rtu.local_comm_id = lb;
	m.u.rtu.remote_comm_id = la;
	inject(&A, &m, UROCE_CM_ATTR_RTU);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_REQ_SENT);
	/* An MRA naming the wrong message is ignored. */
	memset(&m, 0, sizeof(m));
	m.u.mra.local_comm_id = 0;
	m.u.mra.remote_comm_id = la;
	m.u.mra.msg_mraed = UROCE_CM_REF_REP;
	inject(&A, &m, UROCE_CM_ATTR_MRA);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_REQ_SENT);
	/* A DREQ naming a QP that is not ours is not ours (Linux drops it too). */
	uroce_cm_id_destroy(a);
	deliver(&A, UROCE_CM_ATTR_REJ);
	a = connect_ab(0x20, 15);
	b = B.last_new;
	memset(&m, 0, sizeof(m));
	m.u.dreq.local_comm_id = uroce_cm_id_local_comm_id(a);
	m.u.dreq.remote_comm_id = uroce_cm_id_local_comm_id(b);
	m.u.dreq.remote_qpn = 0x999;
	inject(&B, &m, UROCE_CM_ATTR_DREQ);
	cr_expect_eq(uroce_cm_id_state(b), UROCE_CM_ESTABLISHED);
}

/* Calls in the wrong state are refused and change nothing. */
Test(cm, calls_checked)
{
	struct uroce_cm_req_param p;
	struct uroce_cm_rep_param rp;
	struct uroce_cm_id *a = uroce_cm_id_create(A.cm, &owner_tag);

	req_param(&p, 0x11, 15);
	rep_param(&rp, 1);
	cr_expect_eq(uroce_cm_send_rep(a, &rp), -EINVAL);
	cr_expect_eq(uroce_cm_send_rtu(a, NULL, 0), -EINVAL);
	cr_expect_eq(uroce_cm_send_dreq(a, NULL, 0), -EINVAL);
	cr_expect_eq(uroce_cm_send_drep(a, NULL, 0), -EINVAL);
	cr_expect_eq(uroce_cm_send_rej(a, 28, NULL, 0, NULL, 0), -EINVAL);
	p.retry_count = 8;
	cr_expect_eq(uroce_cm_send_req(a, &p), -EINVAL);
	p.retry_count = 7;
	p.transport = UROCE_CM_TRANSPORT_XRC;
	cr_expect_eq(uroce_cm_send_req(a, &p), -EINVAL);
	p.transport = UROCE_CM_TRANSPORT_RC;
	p.private_data_len = 93;
	cr_expect_eq(uroce_cm_send_req(a, &p), -EINVAL);
	p.private_data_len = 4;
	p.path_mtu = 0;
	cr_expect_eq(uroce_cm_send_req(a, &p), -EINVAL);
	p.path_mtu = UROCE_MTU_1024;
	cr_expect_eq(pending(&A), 0);
	cr_expect_eq(uroce_cm_id_state(a), UROCE_CM_IDLE);
	cr_assert_eq(uroce_cm_send_req(a, &p), 0);
	cr_expect_eq(uroce_cm_send_req(a, &p), -EINVAL, "not twice");
}

Test(cm, names_and_counters)
{
	unsigned int i;

	cr_expect_str_eq(uroce_cm_state_name(UROCE_CM_MRA_REP_RCVD), "MRA_REP_RCVD");
	cr_expect_str_eq(uroce_cm_state_name(UROCE_CM_STATE_MAX), "?");
	cr_expect_str_eq(uroce_cm_event_name(UROCE_CM_EV_TIMEWAIT_EXIT), "TIMEWAIT_EXIT");
	for (i = 0; i < UROCE_CM_STATE_MAX; i++)
		cr_expect_neq(uroce_cm_state_name(i)[0], '?', "state %u has a name", i);
	for (i = 0; i < UROCE_CM_EV_MAX; i++)
		cr_expect_neq(uroce_cm_event_name(i)[0], '?', "event %u has a name", i);
	for (i = 0; i < UROCE_CM_CNT_MAX; i++) {
		cr_expect_not_null(uroce_cm_counter_name(i));
		cr_expect_not_null(uroce_cm_counter_desc(i));
	}
	cr_expect_null(uroce_cm_counter_name(UROCE_CM_CNT_MAX));
}
