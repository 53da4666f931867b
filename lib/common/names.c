/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* Names of the verbs enumerations (and the responder checks), as tools print them. */

#include "uroce_verbs_defs.h"

const char *
uroce_wc_status_name(uint32_t status)
{
	static const char *const names[] = {
		[UROCE_WC_SUCCESS] = "SUCCESS",
		[UROCE_WC_LOC_LEN_ERR] = "LOC_LEN_ERR",
		[UROCE_WC_LOC_QP_OP_ERR] = "LOC_QP_OP_ERR",
		[UROCE_WC_LOC_EEC_OP_ERR] = "LOC_EEC_OP_ERR",
		[UROCE_WC_LOC_PROT_ERR] = "LOC_PROT_ERR",
		[UROCE_WC_WR_FLUSH_ERR] = "WR_FLUSH_ERR",
		[UROCE_WC_MW_BIND_ERR] = "MW_BIND_ERR",
		[UROCE_WC_BAD_RESP_ERR] = "BAD_RESP_ERR",
		[UROCE_WC_LOC_ACCESS_ERR] = "LOC_ACCESS_ERR",
		[UROCE_WC_REM_INV_REQ_ERR] = "REM_INV_REQ_ERR",
		[UROCE_WC_REM_ACCESS_ERR] = "REM_ACCESS_ERR",
		[UROCE_WC_REM_OP_ERR] = "REM_OP_ERR",
		[UROCE_WC_RETRY_EXC_ERR] = "RETRY_EXC_ERR",
		[UROCE_WC_RNR_RETRY_EXC_ERR] = "RNR_RETRY_EXC_ERR",
		[UROCE_WC_LOC_RDD_VIOL_ERR] = "LOC_RDD_VIOL_ERR",
		[UROCE_WC_REM_INV_RD_REQ_ERR] = "REM_INV_RD_REQ_ERR",
		[UROCE_WC_REM_ABORT_ERR] = "REM_ABORT_ERR",
		[UROCE_WC_INV_EECN_ERR] = "INV_EECN_ERR",
		[UROCE_WC_INV_EEC_STATE_ERR] = "INV_EEC_STATE_ERR",
		[UROCE_WC_FATAL_ERR] = "FATAL_ERR",
		[UROCE_WC_RESP_TIMEOUT_ERR] = "RESP_TIMEOUT_ERR",
		[UROCE_WC_GENERAL_ERR] = "GENERAL_ERR",
	};

	return status < sizeof(names) / sizeof(names[0]) ? names[status] : "unknown status";
}

const char *
uroce_resp_check_name(uint32_t check)
{
	static const char *const names[UROCE_RCHK_MAX] = {
		[UROCE_RCHK_NONE] = "none", [UROCE_RCHK_OP_SEQ] = "op_seq",
		[UROCE_RCHK_LENGTH] = "length", [UROCE_RCHK_QP_ACCESS] = "qp_access",
		[UROCE_RCHK_MSG_SIZE] = "msg_size", [UROCE_RCHK_RKEY] = "rkey",
		[UROCE_RCHK_ATOMIC_ALIGN] = "atomic_align", [UROCE_RCHK_DMA_LENGTH] = "dma_length",
		[UROCE_RCHK_RECV_LENGTH] = "recv_length", [UROCE_RCHK_INVALIDATE] = "invalidate",
		[UROCE_RCHK_RECV_SGE] = "recv_sge", [UROCE_RCHK_WRITE_MR] = "write_mr",
		[UROCE_RCHK_RD_ATOMIC] = "rd_atomic", [UROCE_RCHK_READ_MR] = "read_mr",
		[UROCE_RCHK_REPLAY_MISS] = "replay_miss", [UROCE_RCHK_REPLAY_RANGE] = "replay_range",
	};

	return check < UROCE_RCHK_MAX ? names[check] : "?";
}
