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
