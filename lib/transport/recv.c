/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Receive demultiplexing and the checks common to every packet (IBA 9.6):
 * destination QP exists, service type matches the QP, P_Key matches, a
 * connected QP hears only its peer, QP state accepts packets. Then the
 * packet goes to the responder (requests) or the completer (responses).
 */

#include <errno.h>
#include <string.h>

#include "transport_internal.h"

/* The QP type a packet may reach: XRC requests go to a TGT QP, XRC
 * responses to an INI QP (IBA 1.2 XRC). */
static enum uroce_qp_type
svc_type(uint8_t opcode, uint32_t mask)
{
	switch (opcode & 0xE0) {
	case UROCE_SVC_RC:
		return UROCE_QPT_RC;
	case UROCE_SVC_UC:
		return UROCE_QPT_UC;
	case UROCE_SVC_UD:
		return UROCE_QPT_UD;
	case UROCE_SVC_XRC:
		return (mask & UROCE_F_REQ) ? UROCE_QPT_XRC_RECV : UROCE_QPT_XRC_SEND;
	default:
		return 0;
	}
}

/*
 * A packet dropped here whose ICRC was left to its placement (uroce_pkt's
 * icrc_late) is counted as what it is: corrupted, if its ICRC is wrong, else
 * for the reason @p why.
 */
static void
rx_drop(struct uroce_eng *eng, struct uroce_eng_qp *qp, const struct uroce_pkt *pkt,
	enum uroce_counter why)
{
	if (unlikely(pkt->icrc_late) && !icrc_late_ok(eng, qp, pkt, NULL))
		return;
	(qp != NULL ? qp->cnt : eng->cnt)[why]++;
}

/* The ECN notification point answers a marked packet with a CNP: only one
 * whose ICRC holds. */
static bool
rx_ce(struct uroce_eng_qp *qp, const struct uroce_pkt *pkt, const struct uroce_frame *frame)
{
	if (likely(!cc_frame_ce(frame)))
		return true;
	if (pkt->icrc_late && !qp_icrc_late_ok(qp, pkt, NULL))
		return false;
	cc_np_ce(qp, pkt, frame); /* cc: the notification point */
	return true;
}

static void
eng_rx(struct uroce_eng *eng, const struct uroce_pkt *pkt, const struct uroce_frame *frame)
{
	enum uroce_qp_state st;
	struct uroce_eng_qp *qp;
	uint32_t mask;

	mask = pkt->info->mask;
	/* RoCEv2 A17.9.3: a CNP is congestion feedback, never an error. */
	/* rx_packets counts every packet once: at the engine when no QP takes
	 * it, else at its QP (the engine-wide value sums both). */
	if (mask & UROCE_F_CNP) {
		ENG_CNT(eng, RX_PACKETS);
		ENG_CNT(eng, RX_CNP);
		cc_rp_cnp(eng, pkt, frame); /* cc: the reaction point */
		return;
	}
	/* IBA 9.6.1: the destination QP must exist. */
	qp = eng_qp_of(eng, pkt->dqpn);
	if (qp == NULL) {
		ENG_CNT(eng, RX_PACKETS);
		rx_drop(eng, NULL, pkt, UROCE_CNT_RX_BAD_QPN);
		return;
	}
	QP_CNT(qp, RX_PACKETS);
	/* IBA 9.6.1.1: the opcode's service must match the QP's. */
	if (svc_type(pkt->opcode, mask) != qp->init.qp_type) {
		rx_drop(eng, qp, pkt, UROCE_CNT_RX_BAD_SERVICE);
		return;
	}
	/* IBA 9.6.1.2 / 10.9: P_Key check; uroce has the default P_Key only. The
	 * membership bit is ignored as RoCE implementations do. */
	if ((uroce_bth_pkey(pkt->bth) & 0x7FFF) != (UROCE_DEFAULT_PKEY & 0x7FFF)) {
		rx_drop(eng, qp, pkt, UROCE_CNT_RX_BAD_PKEY);
		return;
	}
	st = qp->attr.qp_state;
	/* IBA 9.6 (validation, connected services): a packet for an RC or UC
	 * QP must come from that QP's destination. In RoCEv2 the source GID is
	 * the IP source address, so a spoofed or stray source is dropped before
	 * any check that could move state, and counted. A QP before RTR has no
	 * peer yet; the state check below drops for it. */
	if (qp->init.qp_type != UROCE_QPT_UD && st >= UROCE_QPS_RTR &&
	    memcmp(frame->sgid, qp->attr.ah_attr.dgid, 16) != 0) {
		rx_drop(eng, qp, pkt, UROCE_CNT_RX_BAD_SRC_ADDR);
		return;
	}
	if (mask & UROCE_F_REQ) {
		/* IBA 10.3.1: RTR, RTS, SQD and SQE receive; RESET/INIT/ERR drop. */
		if (st != UROCE_QPS_RTR && st != UROCE_QPS_RTS && st != UROCE_QPS_SQD &&
		    st != UROCE_QPS_SQE) {
			rx_drop(eng, qp, pkt, UROCE_CNT_RX_BAD_STATE);
			return;
		}
		if (rx_ce(qp, pkt, frame))
			resp_rx(qp, pkt, frame);
	} else if (mask & UROCE_F_RESP) {
		if (!qpt_reliable(qp->init.qp_type) ||
		    (st != UROCE_QPS_RTS && st != UROCE_QPS_SQD)) {
			rx_drop(eng, qp, pkt, UROCE_CNT_RX_BAD_STATE);
			return;
		}
		if (rx_ce(qp, pkt, frame))
			comp_rx(qp, pkt);
	} else {
		rx_drop(eng, qp, pkt, UROCE_CNT_RX_BAD_SERVICE);
	}
}

int
uroce_eng_rx(struct uroce_eng *eng, const struct uroce_pkt *pkt,
	     const struct uroce_frame *frame)
{
	uint64_t bad;

	if (unlikely(eng == NULL || pkt == NULL || pkt->info == NULL || pkt->bth == NULL ||
		     frame == NULL))
		return 0;
	bad = eng->icrc_late_bad;
	eng_rx(eng, pkt, frame);
	return eng->icrc_late_bad != bad ? -EBADMSG : 0;
}
