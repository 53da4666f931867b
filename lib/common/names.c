/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/* Names of the verbs enumerations (and the responder checks), as tools print
 * them, and what they mean. */

#include "uroce_common.h"
#include "uroce_verbs_defs.h"

#define WC(e, str) [UROCE_WC_##e] = { #e, str }

/* Each status: its enumerator without the prefix, and libibverbs' words
 * for it (ibv_wc_status_str()). */
static const struct {
	const char *name;
	const char *str;
} wc_status_tab[] = {
	WC(SUCCESS, "success"),
	WC(LOC_LEN_ERR, "local length error"),
	WC(LOC_QP_OP_ERR, "local QP operation error"),
	WC(LOC_EEC_OP_ERR, "local EE context operation error"),
	WC(LOC_PROT_ERR, "local protection error"),
	WC(WR_FLUSH_ERR, "Work Request Flushed Error"),
	WC(MW_BIND_ERR, "memory management operation error"),
	WC(BAD_RESP_ERR, "bad response error"),
	WC(LOC_ACCESS_ERR, "local access error"),
	WC(REM_INV_REQ_ERR, "remote invalid request error"),
	WC(REM_ACCESS_ERR, "remote access error"),
	WC(REM_OP_ERR, "remote operation error"),
	WC(RETRY_EXC_ERR, "transport retry counter exceeded"),
	WC(RNR_RETRY_EXC_ERR, "RNR retry counter exceeded"),
	WC(LOC_RDD_VIOL_ERR, "local RDD violation error"),
	WC(REM_INV_RD_REQ_ERR, "remote invalid RD request"),
	WC(REM_ABORT_ERR, "aborted error"),
	WC(INV_EECN_ERR, "invalid EE context number"),
	WC(INV_EEC_STATE_ERR, "invalid EE context state"),
	WC(FATAL_ERR, "fatal error"),
	WC(RESP_TIMEOUT_ERR, "response timeout error"),
	WC(GENERAL_ERR, "general error"),
};

const char *
uroce_wc_status_name(uint32_t status)
{
	return status < sizeof(wc_status_tab) / sizeof(wc_status_tab[0]) ?
	       wc_status_tab[status].name : "unknown status";
}

const char *
uroce_wc_status_str(uint32_t status)
{
	return status < sizeof(wc_status_tab) / sizeof(wc_status_tab[0]) ?
	       wc_status_tab[status].str : "unknown";
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
		[UROCE_RCHK_FETH] = "feth", [UROCE_RCHK_FLUSH_TYPE] = "flush_type",
		[UROCE_RCHK_XRC_SRQ] = "xrc_srq",
	};

	return check < UROCE_RCHK_MAX ? names[check] : "?";
}
