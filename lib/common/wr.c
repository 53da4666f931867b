/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* The send opcode table (uroce_wr.h): the one place that says what each
 * opcode carries and which services take it. */

#include "uroce_wr.h"

/* IBA 1.2 XRC: an XRC initiator (XRC_SEND) posts RC's remote operations. */
#define RC (UROCE_WRP_QPT(UROCE_QPT_RC) | UROCE_WRP_QPT(UROCE_QPT_XRC_SEND))
#define RC_ONLY UROCE_WRP_QPT(UROCE_QPT_RC)
#define UC UROCE_WRP_QPT(UROCE_QPT_UC)
#define UD UROCE_WRP_QPT(UROCE_QPT_UD)

/* IBA 10.7.3.1 (table 95): RC offers every operation; UC offers SEND and
 * RDMA WRITE; UD offers SEND only. SEND with invalidate is RC's (IBA
 * 10.6.7.2.2 on RC; rdma-core refuses it on UC as well). */
const struct uroce_wr_info uroce_wr_info_tab[UROCE_WR_OPCODE_COUNT] = {
	[UROCE_WR_RDMA_WRITE] = { UROCE_WRP_PAYLOAD | UROCE_WRP_RDMA | RC | UC,
				  UROCE_WC_RDMA_WRITE },
	[UROCE_WR_RDMA_WRITE_WITH_IMM] = { UROCE_WRP_PAYLOAD | UROCE_WRP_RDMA | UROCE_WRP_IMM |
					   UROCE_WRP_RECV | RC | UC, UROCE_WC_RDMA_WRITE },
	[UROCE_WR_SEND] = { UROCE_WRP_PAYLOAD | UROCE_WRP_RECV | RC | UC | UD, UROCE_WC_SEND },
	[UROCE_WR_SEND_WITH_IMM] = { UROCE_WRP_PAYLOAD | UROCE_WRP_IMM | UROCE_WRP_RECV |
				     RC | UC | UD, UROCE_WC_SEND },
	[UROCE_WR_RDMA_READ] = { UROCE_WRP_RDMA | UROCE_WRP_RD_ATOMIC | RC, UROCE_WC_RDMA_READ },
	[UROCE_WR_ATOMIC_CMP_AND_SWP] = { UROCE_WRP_ATOMIC | UROCE_WRP_RD_ATOMIC | RC,
					  UROCE_WC_COMP_SWAP },
	[UROCE_WR_ATOMIC_FETCH_AND_ADD] = { UROCE_WRP_ATOMIC | UROCE_WRP_RD_ATOMIC | RC,
					    UROCE_WC_FETCH_ADD },
	/* IBA 10.6.7.3 / 10.6.7.2.1: binds and local invalidation are posted to
	 * an RC or UC send queue (rdma-core providers take them there). */
	[UROCE_WR_LOCAL_INV] = { UROCE_WRP_LOCAL | RC_ONLY | UC, UROCE_WC_LOCAL_INV },
	[UROCE_WR_BIND_MW] = { UROCE_WRP_LOCAL | RC_ONLY | UC, UROCE_WC_BIND_MW },
	[UROCE_WR_SEND_WITH_INV] = { UROCE_WRP_PAYLOAD | UROCE_WRP_INV | UROCE_WRP_RECV | RC,
				     UROCE_WC_SEND },
	/* IBA 1.5 A19: RC only (the RD forms are not implemented); each takes
	 * a responder resource like a READ (oA19-14). */
	[UROCE_WR_FLUSH] = { UROCE_WRP_RDMA | UROCE_WRP_RD_ATOMIC | UROCE_WRP_EMPTY_RESP | RC,
			     UROCE_WC_FLUSH },
	[UROCE_WR_ATOMIC_WRITE] = { UROCE_WRP_RDMA | UROCE_WRP_RD_ATOMIC | UROCE_WRP_EMPTY_RESP |
				    RC, UROCE_WC_ATOMIC_WRITE },
};
