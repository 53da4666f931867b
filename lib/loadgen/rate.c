/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Rate records (uroce_loadgen.h, doc/loadgen.md): one JSON line per
 * interval with the interval's counts, their per-second rates and the
 * running totals. A sink prints them with role "sink"; a generator that
 * counts the same things prints them with its own role, so one script reads
 * both.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "uroce_loadgen.h"

/* The fields, in the order every record lists them. */
#define LG_FIELDS(X) X(msgs) X(bytes) X(cqes) X(errors) X(dropped) X(resyncs) X(verify_bad)

void
uroce_lg_counts_add(struct uroce_lg_counts *a, const struct uroce_lg_counts *b)
{
#define LG_ADD(f) a->f += b->f;
	LG_FIELDS(LG_ADD)
#undef LG_ADD
}

struct uroce_lg_counts
uroce_lg_counts_sub(const struct uroce_lg_counts *a, const struct uroce_lg_counts *b)
{
	struct uroce_lg_counts r;

#define LG_SUB(f) r.f = a->f > b->f ? a->f - b->f : 0;
	LG_FIELDS(LG_SUB)
#undef LG_SUB
	return r;
}

static void
put_counts(FILE *f, const struct uroce_lg_counts *c)
{
	const char *sep = "";

#define LG_PUT(fld) fprintf(f, "%s\"" #fld "\":%" PRIu64, sep, c->fld); sep = ",";
	LG_FIELDS(LG_PUT)
#undef LG_PUT
}

int
uroce_lg_rate_write(FILE *f, const char *role, double t, double dt,
		    const struct uroce_lg_counts *delta, const struct uroce_lg_counts *total)
{
	return uroce_lg_rate_write_ext(f, role, t, dt, delta, total, NULL);
}

int
uroce_lg_rate_write_ext(FILE *f, const char *role, double t, double dt,
			const struct uroce_lg_counts *delta, const struct uroce_lg_counts *total,
			const char *extra)
{
	double per = dt > 0 ? 1.0 / dt : 0;

	/* role is one of the program's own constants: no escaping needed. */
	fprintf(f, "{\"uroce_rate\":%u,\"role\":\"%s\",\"t\":%.3f,\"dt\":%.3f,",
		UROCE_LG_RATE_VERSION, role, t, dt);
	put_counts(f, delta);
	fprintf(f, ",\"msgs_per_s\":%.1f,\"bytes_per_s\":%.1f,\"cqes_per_s\":%.1f",
		(double)delta->msgs * per, (double)delta->bytes * per, (double)delta->cqes * per);
	/* extra: the caller's own ,"key":value pairs (see the header) */
	if (extra != NULL)
		fputs(extra, f);
	fprintf(f, ",\"total\":{");
	put_counts(f, total);
	fprintf(f, "}}\n");
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
