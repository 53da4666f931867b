/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

#include <stdarg.h>
#include <stdio.h>

#include "uroce_common.h"

static uroce_log_fn log_sink;
static enum uroce_log_level log_max = UROCE_LOG_NOTICE;

void
uroce_log_set(uroce_log_fn fn, enum uroce_log_level max_level)
{
	log_sink = fn;
	log_max = max_level;
}

void
uroce_log(enum uroce_log_level level, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	if (level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_sink != NULL)
		log_sink(level, msg);
	else
		fprintf(stderr, "uroce: %s\n", msg);
}
