/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Unit tests of app/uroce-ctl/fmt.c: the names uroce-ctl prints for the
 * verbs enums (the ibv_devinfo / rdma tool spellings), GIDs as text, and the
 * column table (widths from the widest cell, no trailing blanks, sticky
 * errors).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fmt.h"

Test(fmt, qp_state_and_type_names)
{
	/* Expect: the enum uroce_qp_state values 0..6 in order, "?" beyond. */
	cr_expect_str_eq(fmt_qp_state(0), "RESET");
	cr_expect_str_eq(fmt_qp_state(1), "INIT");
	cr_expect_str_eq(fmt_qp_state(2), "RTR");
	cr_expect_str_eq(fmt_qp_state(3), "RTS");
	cr_expect_str_eq(fmt_qp_state(4), "SQD");
	cr_expect_str_eq(fmt_qp_state(5), "SQE");
	cr_expect_str_eq(fmt_qp_state(6), "ERR");
	cr_expect_str_eq(fmt_qp_state(7), "?");
	cr_expect_str_eq(fmt_qp_state(0xffffffffu), "?");
	/* Expect: ibv_qp_type numbers 2, 3, 4; others are unknown. */
	cr_expect_str_eq(fmt_qp_type(2), "RC");
	cr_expect_str_eq(fmt_qp_type(3), "UC");
	cr_expect_str_eq(fmt_qp_type(4), "UD");
	cr_expect_str_eq(fmt_qp_type(0), "?");
	cr_expect_str_eq(fmt_qp_type(1), "?");
}

Test(fmt, mtu_port_state_link_layer)
{
	/* Expect: IBA MTU codes 1..5 are 256..4096 bytes; 0 and 6 are invalid. */
	cr_expect_eq(fmt_mtu_bytes(0), 0);
	cr_expect_eq(fmt_mtu_bytes(1), 256);
	cr_expect_eq(fmt_mtu_bytes(3), 1024);
	cr_expect_eq(fmt_mtu_bytes(5), 4096);
	cr_expect_eq(fmt_mtu_bytes(6), 0);
	cr_expect_eq(fmt_mtu_bytes(200), 0);
	cr_expect_str_eq(fmt_port_state(4), "PORT_ACTIVE");
	cr_expect_str_eq(fmt_port_state(1), "PORT_DOWN");
	cr_expect_str_eq(fmt_port_state(99), "?");
	cr_expect_str_eq(fmt_link_layer(2), "Ethernet");
	cr_expect_str_eq(fmt_link_layer(1), "InfiniBand");
	cr_expect_str_eq(fmt_link_layer(0), "Unspecified");
}

Test(fmt, gids)
{
	static const uint8_t v4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 1};
	static const uint8_t v6[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				       0x02, 0, 0, 0xff, 0xfe, 0, 0, 0x01};
	static const uint8_t zero[16];
	char buf[64];

	/* Expect: IPv4-mapped as ::ffff:a.b.c.d, others RFC 5952. */
	cr_assert_eq(fmt_gid(v4, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "::ffff:198.18.0.1");
	cr_assert_eq(fmt_gid(v6, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "fe80::200:ff:fe00:1");
	cr_assert_eq(fmt_gid(zero, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "::");
	/* Expect: a buffer too small for any address is refused. */
	cr_expect_eq(fmt_gid(v6, buf, 10), -ENOSPC);
	cr_expect(fmt_gid_is_zero(zero));
	cr_expect(!fmt_gid_is_zero(v4));
}

static char *
print_to_string(const struct tbl *t, int *rc)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	cr_assert_not_null(f);
	*rc = tbl_print(t, f);
	fclose(f);
	return s;
}

Test(fmt, table_columns_fit_the_widest_cell)
{
	static const char *const head[] = {"QPN", "STATE", "DGID"};
	struct tbl t;
	char *s;
	int rc;

	tbl_init(&t, 3, head);
	tbl_cell(&t, "%u", 17u);
	tbl_cell(&t, "%s", "RTS");
	tbl_cell(&t, "%s", "::ffff:198.18.0.1");
	tbl_cell(&t, "%u", 123456u);
	tbl_cell(&t, "%s", "RESET");
	tbl_cell(&t, "-");
	cr_expect_eq(tbl_rows(&t), 2);
	s = print_to_string(&t, &rc);
	cr_expect_eq(rc, 0);
	/* Expect: QPN as wide as "123456", STATE as "RESET"; two blanks between
	 * columns; the last column unpadded, so no line ends in a blank. */
	cr_expect_str_eq(s, "QPN     STATE  DGID\n"
			    "17      RTS    ::ffff:198.18.0.1\n"
			    "123456  RESET  -\n");
	free(s);
	tbl_free(&t);
}

Test(fmt, table_empty_trailing_cells_leave_no_blanks)
{
	static const char *const head[] = {"CLIENT", "QPS", "NOTE"};
	struct tbl t;
	char *s;
	int rc;

	tbl_init(&t, 3, head);
	tbl_cell(&t, "1");
	tbl_cell(&t, "3");
	tbl_cell(&t, "%s", "");
	tbl_cell(&t, "7");
	tbl_cell(&t, "%s", "");
	tbl_cell(&t, "this uroce-ctl");
	s = print_to_string(&t, &rc);
	cr_expect_eq(rc, 0);
	/* Expect: row 1 stops after "3"; row 2 pads the empty QPS cell because a
	 * later cell is not empty. */
	cr_expect_str_eq(s, "CLIENT  QPS  NOTE\n"
			    "1       3\n"
			    "7            this uroce-ctl\n");
	free(s);
	tbl_free(&t);
}

Test(fmt, table_header_only_and_errors)
{
	static const char *const head[] = {"A", "B"};
	struct tbl t;
	char *s;
	int rc;

	/* Expect: an empty table still prints its header. */
	tbl_init(&t, 2, head);
	s = print_to_string(&t, &rc);
	cr_expect_eq(rc, 0);
	cr_expect_str_eq(s, "A  B\n");
	free(s);
	/* Expect: a half-filled last row is refused. */
	tbl_cell(&t, "x");
	s = print_to_string(&t, &rc);
	cr_expect_eq(rc, -EINVAL);
	cr_expect_str_eq(s, "");
	free(s);
	tbl_free(&t);
	/* Expect: no columns or too many -> sticky EINVAL, cells ignored. */
	tbl_init(&t, 0, head);
	tbl_cell(&t, "x");
	cr_expect_eq(t.err, -EINVAL);
	cr_expect_eq(t.ncells, 0);
	s = print_to_string(&t, &rc);
	cr_expect_eq(rc, -EINVAL);
	free(s);
	tbl_free(&t);
	tbl_init(&t, TBL_MAX_COLS + 1, head);
	cr_expect_eq(t.err, -EINVAL);
	tbl_free(&t);
}

Test(fmt, table_many_rows_grow)
{
	static const char *const head[] = {"N"};
	struct tbl t;
	char *s;
	int rc, i;

	/* Expect: rows beyond the first allocation are kept, in order. */
	tbl_init(&t, 1, head);
	for (i = 0; i < 1000; i++)
		tbl_cell(&t, "%d", i);
	cr_expect_eq(tbl_rows(&t), 1000);
	s = print_to_string(&t, &rc);
	cr_expect_eq(rc, 0);
	/* The only column is the last one: never padded. */
	cr_expect_eq(strncmp(s, "N\n0\n1\n", 6), 0, "%.20s", s);
	cr_expect_not_null(strstr(s, "\n998\n999\n"));
	free(s);
	tbl_free(&t);
}
