/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The engine side of introspection: the transport counters of
 * lib/transport/counters.def by index, engine-wide and per QP, for
 * introspect.c (which, like daemon.c, never includes a transport header).
 */

#include <stdint.h>

#include "uroce_transport.h"

#include "daemon_internal.h"

unsigned int
eng_counter_count(void)
{
	return UROCE_CNT_MAX;
}

const char *
eng_counter_name(unsigned int i)
{
	return uroce_eng_counter_name((enum uroce_counter)i);
}

uint64_t
eng_qp_counter(const void *qp, unsigned int i)
{
	if (qp == NULL || i >= UROCE_CNT_MAX)
		return 0;
	return uroce_eng_qp_counter(qp, (enum uroce_counter)i);
}

/* The reaction point state rows, then one row per parameter. */
static const char *const cc_state_rows[] = {
	"rp_limited", "rp_current_rate_kbps", "rp_target_rate_kbps", "rp_max_rate_kbps",
	"rp_alpha", "rp_time_stage", "rp_byte_stage",
};

#define N_CC_STATE (sizeof(cc_state_rows) / sizeof(cc_state_rows[0]))

unsigned int
eng_cc_row_count(void)
{
	return N_CC_STATE + uroce_eng_cc_param_count();
}

const char *
eng_cc_row_name(unsigned int i)
{
	if (i < N_CC_STATE)
		return cc_state_rows[i];
	if (i < eng_cc_row_count())
		return uroce_eng_cc_param_info(i - N_CC_STATE)->name;
	return NULL;
}

uint64_t
eng_qp_cc_row(const void *qp, unsigned int i)
{
	struct uroce_eng_cc_params p;
	struct uroce_eng_cc_state st;
	const uint32_t *v[N_CC_STATE] = { NULL, &st.rate_kbps, &st.target_kbps, &st.max_kbps,
					  &st.alpha, &st.time_stage, &st.byte_stage };

	if (qp == NULL || i >= eng_cc_row_count())
		return 0;
	if (i >= N_CC_STATE) {
		if (uroce_eng_qp_cc_get(qp, &p) != 0)
			return 0;
		return uroce_eng_cc_param_get(&p, i - N_CC_STATE);
	}
	if (uroce_eng_qp_cc_state(qp, &st) != 0)
		return 0;
	return i == 0 ? st.limited : *v[i];
}
