/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Formatting helpers of uroce-ctl's daemon subcommands: see fmt.h.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

const char *
fmt_qp_state(unsigned int state)
{
	static const char *const names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

const char *
fmt_qp_type(unsigned int type)
{
	switch (type) {
	case 2:
		return "RC";
	case 3:
		return "UC";
	case 4:
		return "UD";
	default:
		return "?";
	}
}

unsigned int
fmt_mtu_bytes(unsigned int mtu)
{
	return mtu >= 1 && mtu <= 5 ? 128u << mtu : 0;
}

const char *
fmt_port_state(unsigned int state)
{
	static const char *const names[] = {"PORT_NOP", "PORT_DOWN", "PORT_INIT", "PORT_ARMED",
					    "PORT_ACTIVE", "PORT_ACTIVE_DEFER"};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

const char *
fmt_link_layer(unsigned int ll)
{
	return ll == 1 ? "InfiniBand" : ll == 2 ? "Ethernet" : "Unspecified";
}

int
fmt_gid(const uint8_t gid[16], char *buf, size_t cap)
{
	if (cap < INET6_ADDRSTRLEN)
		return -ENOSPC;
	/* inet_ntop already writes IPv4-mapped addresses as ::ffff:a.b.c.d. */
	if (inet_ntop(AF_INET6, gid, buf, (socklen_t)cap) == NULL)
		return -errno;
	return 0;
}

int
fmt_gid_is_zero(const uint8_t gid[16])
{
	static const uint8_t zero[16];

	return memcmp(gid, zero, 16) == 0;
}

void
tbl_init(struct tbl *t, unsigned int ncols, const char *const *head)
{
	unsigned int i;

	memset(t, 0, sizeof(*t));
	if (ncols == 0 || ncols > TBL_MAX_COLS || head == NULL) {
		t->err = -EINVAL;
		return;
	}
	t->ncols = ncols;
	for (i = 0; i < ncols; i++) {
		t->head[i] = head[i] != NULL ? head[i] : "";
		t->width[i] = strlen(t->head[i]);
	}
}

void
tbl_cell(struct tbl *t, const char *fmt, ...)
{
	unsigned int col;
	va_list ap;
	char *s;
	int n;

	if (t->err != 0)
		return;
	if (t->ncells == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **c = realloc(t->cells, cap * sizeof(*c));

		if (c == NULL) {
			t->err = -ENOMEM;
			return;
		}
		t->cells = c;
		t->cap = cap;
	}
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		t->err = -ENOMEM;
		return;
	}
	col = (unsigned int)(t->ncells % t->ncols);
	if ((size_t)n > t->width[col])
		t->width[col] = (size_t)n;
	t->cells[t->ncells++] = s;
}

size_t
tbl_rows(const struct tbl *t)
{
	return t->ncols ? t->ncells / t->ncols : 0;
}

/* Cells padded to their column's width, except the last non-empty one, so
 * that no line ends in blanks (empty trailing cells print nothing). */
static void
print_row(const struct tbl *t, const char *const *row, FILE *out)
{
	unsigned int i, last = 0;

	for (i = 0; i < t->ncols; i++)
		if (row[i][0] != '\0')
			last = i;
	for (i = 0; i < last; i++)
		fprintf(out, "%-*s  ", (int)t->width[i], row[i]);
	fprintf(out, "%s\n", row[last]);
}

int
tbl_print(const struct tbl *t, FILE *out)
{
	size_t r;

	if (t->err != 0)
		return t->err;
	if (t->ncells % t->ncols != 0)
		return -EINVAL;
	print_row(t, t->head, out);
	for (r = 0; r < tbl_rows(t); r++)
		print_row(t, (const char *const *)&t->cells[r * t->ncols], out);
	return ferror(out) ? -EIO : 0;
}

void
tbl_free(struct tbl *t)
{
	size_t i;

	for (i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->ncells = 0;
	t->cap = 0;
}
