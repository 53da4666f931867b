/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The subcommands that ask a running uroced: devices, gids, qps, clients and
 * counters (doc/uroce-ctl.md). Each prints a human table by default, in the
 * manner of ibv_devinfo, `rdma resource show qp` and `rdma statistic show`,
 * or with --json one JSON document for scripts. The data comes over the
 * control socket (client.c): QUERY_DEVICE, QUERY_PORT and QUERY_GID, and the
 * introspection requests LIST_SESSIONS, LIST_QPS and QUERY_COUNTERS of ABI
 * 1.1, walked page by page (doc/shm-abi.md).
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_cli.h"
#include "uroce_shm_introspect.h"
#include "uroce_wire.h"

#include "ctl.h"
#include "fmt.h"
#include "json.h"

/* uroce-ctl's name for the daemon's one device. */
#define DEV_NAME "uroce0"

struct opts {
	const char *sock;
	bool json;
	bool has_qp;
	uint32_t qp;
};

enum { OPT_QP = 1 };

static void
show_usage(FILE *out, const char *cmd, bool with_qp)
{
	fprintf(out,
		"usage: uroce-ctl %s [-s|--socket PATH] [-j|--json]%s\n"
		"  -s, --socket PATH  uroced control socket (default: $UROCE_SOCKET, else %s)\n"
		"  -j, --json         one JSON document instead of a table\n%s",
		cmd, with_qp ? " [--qp QPN]" : "", uroce_shm_socket_path(NULL),
		with_qp ? "      --qp QPN       the counters of one QP\n" : "");
}

/* @return -1 to go on, else the exit code. */
static int
parse_opts(int argc, char **argv, bool with_qp, struct opts *o)
{
	static const struct option lopts[] = {
		{"socket", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{"qp", required_argument, NULL, OPT_QP},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:jh", lopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->sock = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			show_usage(stdout, argv[0], with_qp);
			return CTL_EXIT_OK;
		case OPT_QP: {
			uint64_t v;

			if (!with_qp)
				goto bad;
			if (cli_num("--qp", optarg, CLI_PLAIN, 0, 0xffffff, &v) != 0)
				return CTL_EXIT_ERROR;
			o->has_qp = true;
			o->qp = (uint32_t)v;
			break;
		}
		default:
			goto bad;
		}
	}
	if (optind != argc) {
		ctl_err("%s: unexpected argument '%s'", argv[0], argv[optind]);
		goto bad;
	}
	o->sock = uroce_shm_socket_path(o->sock);
	return -1;
bad:
	show_usage(stderr, argv[0], with_qp);
	return CTL_EXIT_ERROR;
}

/* @return -1 when connected, else the exit code (message printed). */
static int
connect_daemon(struct uroce_shm_client *c, const struct opts *o)
{
	int rc = uroce_shm_client_open(c, o->sock, "uroce-ctl");

	if (rc == 0)
		return -1;
	ctl_err("cannot connect to uroced at %s: %s (%s)", o->sock, strerror(-rc),
		uroce_shm_client_advice(rc));
	/* No daemon there (or not reachable): 1; a daemon that misbehaves: 2. */
	return rc == -ENOENT || rc == -ECONNREFUSED || rc == -EACCES || rc == -EPERM ||
	       rc == -ENOTSOCK || rc == -ENAMETOOLONG ? CTL_EXIT_NO_DAEMON : CTL_EXIT_ERROR;
}

static int
call_failed(const char *sock, const char *what, int rc)
{
	if (rc == -ECONNRESET || rc == -EOPNOTSUPP)
		ctl_err("%s: %s (uroced at %s closed the connection; it may predate the "
			"introspection messages of ABI 1.1)", what, strerror(-rc), sock);
	else
		ctl_err("%s: %s", what, strerror(-rc));
	return CTL_EXIT_ERROR;
}

/* @p rc: what writing @p what to stdout returned. @return the exit code. */
static int
written(int rc, const char *what)
{
	if (rc != 0) {
		ctl_err("writing %s: %s", what, strerror(-rc));
		return CTL_EXIT_ERROR;
	}
	return CTL_EXIT_OK;
}

static int
json_out(struct json *j)
{
	int rc = json_write_line(j, stdout);

	json_free(j);
	return written(rc, "JSON");
}

static int
tbl_out(struct tbl *t)
{
	int rc = tbl_print(t, stdout);

	tbl_free(t);
	return written(rc, "table");
}

static void
guid_str(uint64_t g, char *buf, size_t n)
{
	snprintf(buf, n, "%04x:%04x:%04x:%04x", (unsigned int)(g >> 48) & 0xffff,
		 (unsigned int)(g >> 32) & 0xffff, (unsigned int)(g >> 16) & 0xffff,
		 (unsigned int)g & 0xffff);
}

/* ------------------------------------------------------------------------ */
/* What every subcommand shares                                              */
/* ------------------------------------------------------------------------ */

/*
 * One subcommand's run: its options, its connection, and its two outputs.
 * The JSON document and the table are filled side by side, row by row; at the
 * end the one the user asked for is printed and the other dropped.
 */
struct show {
	struct opts o;
	struct uroce_shm_client c;
	struct json j;
	struct tbl t;
};

/* Parse the options and connect. @return -1 when connected, else the exit code. */
static int
show_start(struct show *s, int argc, char **argv, bool with_qp)
{
	int rc = parse_opts(argc, argv, with_qp, &s->o);

	if (rc >= 0)
		return rc;
	return connect_daemon(&s->c, &s->o);
}

/* Start both outputs: a table of @p ncol columns, and the JSON document's '{'. */
static void
show_out_begin(struct show *s, const char *const *head, unsigned int ncol)
{
	json_init(&s->j);
	tbl_init(&s->t, ncol, head);
	json_obj_begin(&s->j);
}

/* show_out_begin(), then the document's one array, named @p key. */
static void
show_list_begin(struct show *s, const char *const *head, unsigned int ncol, const char *key)
{
	show_out_begin(s, head, ncol);
	json_key(&s->j, key);
	json_arr_begin(&s->j);
}

/* Close the connection and print the output asked for. @return the exit code. */
static int
show_finish(struct show *s)
{
	uroce_shm_client_close(&s->c);
	if (s->o.json) {
		tbl_free(&s->t);
		return json_out(&s->j);
	}
	json_free(&s->j);
	return tbl_out(&s->t);
}

/* Close the array of show_list_begin() and the document, then show_finish(). */
static int
show_list_finish(struct show *s)
{
	json_arr_end(&s->j);
	json_obj_end(&s->j);
	return show_finish(s);
}

/* A request that failed: drop both outputs, say why. @return the exit code. */
static int
show_fail(struct show *s, const char *what, int rc)
{
	uroce_shm_client_close(&s->c);
	json_free(&s->j);
	tbl_free(&s->t);
	return call_failed(s->o.sock, what, rc);
}

/* One entry of an introspection reply, added to both outputs. */
typedef void (*show_row_fn)(struct show *s, const void *entry, void *arg);

/* An introspection request and where the paging words sit in it and in its reply. */
struct show_pager {
	uint16_t type;          /* UROCE_SHM_MSG_LIST_* or QUERY_COUNTERS */
	const char *what;       /* its name, for errors */
	void *req;
	size_t req_len;
	uint32_t *start;        /* the request's start key */
	void *resp;
	size_t resp_len;
	const struct uroce_shm_list_page *page; /* the reply's paging words */
	const void *entries;    /* the reply's first entry */
	size_t entry_size;
	unsigned int max;       /* entries a reply may hold */
};

/*
 * Walk an introspection request page by page from *p->start, calling @p row
 * for each entry. @return 0, the call's -errno, or -EPROTO for a reply that
 * holds more entries than it can, or whose cursor does not advance (it
 * would loop forever).
 */
static int
show_pages(struct show *s, const struct show_pager *p, show_row_fn row, void *arg)
{
	unsigned int i;
	int rc;

	do {
		rc = uroce_shm_client_request(&s->c, p->type, p->req, p->req_len, p->resp, p->resp_len);
		if (rc != 0)
			return rc;
		if (p->page->count > p->max ||
		    ((p->page->flags & UROCE_SHM_LIST_F_MORE) && p->page->next <= *p->start))
			return -EPROTO;
		for (i = 0; i < p->page->count; i++)
			row(s, (const uint8_t *)p->entries + i * p->entry_size, arg);
		*p->start = p->page->next;
	} while (p->page->flags & UROCE_SHM_LIST_F_MORE);
	return 0;
}

/*
 * A subcommand that lists one kind of entry: a table of @p ncol columns, and
 * a JSON document with the one array @p key; one row per entry of @p pg's
 * request (its start key set by the caller). @return the exit code.
 */
static int
show_list_main(int argc, char **argv, const char *const *head, unsigned int ncol,
	       const char *key, const struct show_pager *pg, show_row_fn row)
{
	struct show s;
	int rc;

	rc = show_start(&s, argc, argv, false);
	if (rc >= 0)
		return rc;
	show_list_begin(&s, head, ncol, key);
	rc = show_pages(&s, pg, row, NULL);
	if (rc != 0)
		return show_fail(&s, pg->what, rc);
	return show_list_finish(&s);
}

/* show_start(), then QUERY_DEVICE. @return -1 when answered, else the exit code. */
static int
show_start_device(struct show *s, int argc, char **argv,
		  struct uroce_shm_msg_query_device_resp *dev)
{
	int rc = show_start(s, argc, argv, false);

	if (rc >= 0)
		return rc;
	rc = uroce_shm_client_request(&s->c, UROCE_SHM_MSG_QUERY_DEVICE, NULL, 0, dev, sizeof(*dev));
	if (rc != 0) {
		uroce_shm_client_close(&s->c);
		return call_failed(s->o.sock, "QUERY_DEVICE", rc);
	}
	return -1;
}

static int
query_port(struct uroce_shm_client *c, unsigned int port, struct uroce_shm_msg_query_port_resp *pr)
{
	struct uroce_shm_msg_query_port_req pq;

	memset(&pq, 0, sizeof(pq));
	pq.port_num = (uint8_t)port;
	return uroce_shm_client_request(c, UROCE_SHM_MSG_QUERY_PORT, &pq, sizeof(pq), pr, sizeof(*pr));
}

/* ------------------------------------------------------------------------ */
/* devices                                                                   */
/* ------------------------------------------------------------------------ */

/* The 32-bit limits of QUERY_DEVICE, in the order both outputs list them. */
static const struct dev_field {
	const char *name;
	size_t off;      /* in struct uroce_shm_msg_query_device_resp */
	int hex;         /* text output: 0 in decimal, else in hex of at least this many digits */
} dev_fields[] = {
#define DEV_FIELD(f, hex) {#f, offsetof(struct uroce_shm_msg_query_device_resp, f), hex}
	DEV_FIELD(vendor_id, 4),
	DEV_FIELD(vendor_part_id, 0),
	DEV_FIELD(hw_ver, 1),
	DEV_FIELD(max_qp, 0),
	DEV_FIELD(max_qp_wr, 0),
	DEV_FIELD(max_sge, 0),
	DEV_FIELD(max_cq, 0),
	DEV_FIELD(max_cqe, 0),
	DEV_FIELD(max_mr, 0),
	DEV_FIELD(max_pd, 0),
	DEV_FIELD(max_ah, 0),
	DEV_FIELD(max_srq, 0),
	DEV_FIELD(max_qp_rd_atom, 0),
	DEV_FIELD(max_qp_init_rd_atom, 0),
	DEV_FIELD(max_inline_data, 0),
#undef DEV_FIELD
};

static uint32_t
dev_field_value(const struct uroce_shm_msg_query_device_resp *dev, const struct dev_field *f)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)dev + f->off, sizeof(v));
	return v;
}

/*
 * One "key:<tabs>value" line of the ibv_devinfo -v layout: @p indent tabs,
 * the key and its colon, then tabs up to column @p col (tab stops of 8).
 */
static void __attribute__((format(printf, 4, 5)))
info_line(unsigned int indent, unsigned int col, const char *key, const char *fmt, ...)
{
	unsigned int at = 8 * indent + (unsigned int)strlen(key) + 1;
	va_list ap;

	printf("%.*s%s:", (int)indent, "\t\t\t\t\t\t\t\t", key);
	do {
		putchar('\t');
		at = (at / 8 + 1) * 8;
	} while (at < col);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void
dev_field_line(const struct uroce_shm_msg_query_device_resp *dev, const struct dev_field *f)
{
	if (f->hex != 0)
		info_line(1, 40, f->name, "0x%0*x", f->hex, dev_field_value(dev, f));
	else
		info_line(1, 40, f->name, "%u", dev_field_value(dev, f));
}

static void
devices_json(struct json *j, const char *sock, unsigned int abi_minor,
	     const struct uroce_shm_msg_query_device_resp *dev,
	     const struct uroce_shm_msg_query_port_resp *port, unsigned int nports,
	     const char *guid, const char *sguid)
{
	unsigned int i;

	json_init(j);
	json_obj_begin(j);
	json_kv_str(j, "socket", sock);
	json_key(j, "abi");
	json_obj_begin(j);
	json_kv_u64(j, "major", UROCE_SHM_ABI_MAJOR);
	json_kv_u64(j, "minor", abi_minor);
	json_obj_end(j);
	json_key(j, "devices");
	json_arr_begin(j);
	json_obj_begin(j);
	json_kv_str(j, "name", DEV_NAME);
	json_kv_str(j, "transport", "RoCEv2");
	json_kv_str(j, "node_guid", guid);
	json_kv_str(j, "sys_image_guid", sguid);
	for (i = 0; i < sizeof(dev_fields) / sizeof(dev_fields[0]); i++)
		json_kv_u64(j, dev_fields[i].name, dev_field_value(dev, &dev_fields[i]));
	json_kv_u64(j, "atomic_cap", dev->atomic_cap);
	json_kv_u64(j, "phys_port_cnt", dev->phys_port_cnt);
	json_key(j, "ports");
	json_arr_begin(j);
	for (i = 0; i < nports; i++) {
		json_obj_begin(j);
		json_kv_u64(j, "port", i + 1);
		json_kv_str(j, "state", fmt_port_state(port[i].state));
		json_kv_u64(j, "max_mtu", fmt_mtu_bytes(port[i].max_mtu));
		json_kv_u64(j, "active_mtu", fmt_mtu_bytes(port[i].active_mtu));
		json_kv_u64(j, "gid_tbl_len", port[i].gid_tbl_len);
		json_kv_u64(j, "max_msg_sz", port[i].max_msg_sz);
		json_kv_str(j, "link_layer", fmt_link_layer(port[i].link_layer));
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
	json_arr_end(j);
	json_obj_end(j);
}

/* ibv_devinfo -v layout: "key:" then tabs, one device, its ports indented. */
static void
devices_text(const char *sock, unsigned int abi_minor,
	     const struct uroce_shm_msg_query_device_resp *dev,
	     const struct uroce_shm_msg_query_port_resp *port, unsigned int nports,
	     const char *guid, const char *sguid)
{
	unsigned int i;

	printf("hca_id:\t%s\n", DEV_NAME);
	info_line(1, 40, "transport", "RoCEv2 (uroce, ABI %u.%u)", UROCE_SHM_ABI_MAJOR,
		  abi_minor);
	info_line(1, 40, "socket", "%s", sock);
	info_line(1, 40, "node_guid", "%s", guid);
	info_line(1, 40, "sys_image_guid", "%s", sguid);
	for (i = 0; i < sizeof(dev_fields) / sizeof(dev_fields[0]); i++)
		dev_field_line(dev, &dev_fields[i]);
	/* As ibv_devinfo -v names it. */
	info_line(1, 40, "atomic_cap", "%s (%u)",
		  dev->atomic_cap == UROCE_ATOMIC_GLOB ? "ATOMIC_GLOB" :
		  dev->atomic_cap == UROCE_ATOMIC_HCA ? "ATOMIC_HCA" : "ATOMIC_NONE",
		  dev->atomic_cap);
	info_line(1, 40, "phys_port_cnt", "%u", dev->phys_port_cnt);
	for (i = 0; i < nports; i++) {
		info_line(2, 24, "port", "%u", i + 1);
		info_line(3, 48, "state", "%s (%u)", fmt_port_state(port[i].state),
			  port[i].state);
		info_line(3, 48, "max_mtu", "%u (%u)", fmt_mtu_bytes(port[i].max_mtu),
			  port[i].max_mtu);
		info_line(3, 48, "active_mtu", "%u (%u)", fmt_mtu_bytes(port[i].active_mtu),
			  port[i].active_mtu);
		info_line(3, 48, "gid_tbl_len", "%u", port[i].gid_tbl_len);
		info_line(3, 48, "max_msg_sz", "0x%x", port[i].max_msg_sz);
		info_line(3, 48, "link_layer", "%s", fmt_link_layer(port[i].link_layer));
	}
}

int
ctl_devices_main(int argc, char **argv)
{
	struct uroce_shm_msg_query_device_resp dev;
	struct uroce_shm_msg_query_port_resp port[8];
	char guid[32], sguid[32];
	unsigned int nports, i;
	struct show s;
	int rc;

	rc = show_start_device(&s, argc, argv, &dev);
	if (rc >= 0)
		return rc;
	nports = dev.phys_port_cnt < 8 ? dev.phys_port_cnt : 8;
	for (i = 0; i < nports; i++) {
		rc = query_port(&s.c, i + 1, &port[i]);
		if (rc != 0) {
			uroce_shm_client_close(&s.c);
			return call_failed(s.o.sock, "QUERY_PORT", rc);
		}
	}
	uroce_shm_client_close(&s.c);
	guid_str(dev.node_guid, guid, sizeof(guid));
	guid_str(dev.sys_image_guid, sguid, sizeof(sguid));
	if (s.o.json) {
		devices_json(&s.j, s.o.sock, s.c.daemon_minor, &dev, port, nports, guid, sguid);
		return json_out(&s.j);
	}
	devices_text(s.o.sock, s.c.daemon_minor, &dev, port, nports, guid, sguid);
	return ferror(stdout) ? CTL_EXIT_ERROR : CTL_EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* gids                                                                      */
/* ------------------------------------------------------------------------ */

static void
gids_row(struct show *s, unsigned int port, unsigned int index,
	 const struct uroce_shm_msg_query_gid_resp *gr)
{
	const char *type = gr->gid_type == 1 ? "RoCEv2" : "IB/RoCEv1";
	char gid[64];

	fmt_gid(gr->gid, gid, sizeof(gid));
	json_obj_begin(&s->j);
	json_kv_str(&s->j, "dev", DEV_NAME);
	json_kv_u64(&s->j, "port", port);
	json_kv_u64(&s->j, "index", index);
	json_kv_str(&s->j, "gid", gid);
	json_kv_str(&s->j, "type", type);
	json_obj_end(&s->j);
	tbl_cell(&s->t, "%s", DEV_NAME);
	tbl_cell(&s->t, "%u", port);
	tbl_cell(&s->t, "%u", index);
	tbl_cell(&s->t, "%s", gid);
	tbl_cell(&s->t, "%s", type);
}

int
ctl_gids_main(int argc, char **argv)
{
	static const char *const head[] = {"DEV", "PORT", "INDEX", "GID", "TYPE"};
	struct uroce_shm_msg_query_device_resp dev;
	struct uroce_shm_msg_query_port_resp pr;
	struct uroce_shm_msg_query_gid_req gq;
	struct uroce_shm_msg_query_gid_resp gr;
	unsigned int p, i;
	struct show s;
	int rc;

	rc = show_start_device(&s, argc, argv, &dev);
	if (rc >= 0)
		return rc;
	show_list_begin(&s, head, sizeof(head) / sizeof(head[0]), "gids");
	for (p = 1; p <= dev.phys_port_cnt; p++) {
		rc = query_port(&s.c, p, &pr);
		if (rc != 0)
			return show_fail(&s, "QUERY_PORT/QUERY_GID", rc);
		for (i = 0; i < pr.gid_tbl_len; i++) {
			memset(&gq, 0, sizeof(gq));
			gq.port_num = (uint8_t)p;
			gq.index = i;
			rc = uroce_shm_client_request(&s.c, UROCE_SHM_MSG_QUERY_GID, &gq, sizeof(gq), &gr,
					   sizeof(gr));
			/* An empty slot of the table is refused or all zero: skip it. */
			if (rc == -EINVAL || rc == -ENOENT || rc == -ENODATA ||
			    (rc == 0 && fmt_gid_is_zero(gr.gid)))
				continue;
			if (rc != 0)
				return show_fail(&s, "QUERY_PORT/QUERY_GID", rc);
			gids_row(&s, p, i, &gr);
		}
	}
	return show_list_finish(&s);
}

/* ------------------------------------------------------------------------ */
/* qps                                                                       */
/* ------------------------------------------------------------------------ */

static void
qps_row(struct show *s, const void *entry, void *arg)
{
	const struct uroce_shm_qp_info *e = entry;
	bool connected = e->qp_type != 4 && e->qp_state >= 2 && e->qp_state != 6;
	bool failed = (e->flags & UROCE_SHM_QP_F_RING_FAILED) != 0;
	struct json *j = &s->j;
	struct tbl *t = &s->t;
	char gid[64];

	(void)arg;
	fmt_gid(e->dgid, gid, sizeof(gid));
	json_obj_begin(j);
	json_kv_u64(j, "qpn", e->qp_num);
	json_kv_str(j, "type", fmt_qp_type(e->qp_type));
	json_kv_str(j, "state", fmt_qp_state(e->qp_state));
	json_key(j, "pid");
	json_i64(j, e->pid);
	json_kv_u64(j, "client_id", e->client_id);
	json_kv_u64(j, "sq_psn", e->sq_psn);
	json_kv_u64(j, "rq_psn", e->rq_psn);
	json_kv_u64(j, "dest_qpn", e->dest_qp_num);
	json_kv_u64(j, "path_mtu", fmt_mtu_bytes(e->path_mtu));
	if (fmt_gid_is_zero(e->dgid))
		json_kv_null(j, "dgid");
	else
		json_kv_str(j, "dgid", gid);
	json_kv_u64(j, "max_send_wr", e->max_send_wr);
	json_kv_u64(j, "max_recv_wr", e->max_recv_wr);
	json_kv_u64(j, "sq_queued", e->sq_queued);
	json_kv_u64(j, "rq_queued", e->rq_queued);
	json_kv_bool(j, "ring_failed", failed);
	json_kv_u64(j, "worker", e->worker);
	json_obj_end(j);
	tbl_cell(t, "%u", e->qp_num);
	tbl_cell(t, "%s", fmt_qp_type(e->qp_type));
	tbl_cell(t, "%s%s", fmt_qp_state(e->qp_state), failed ? "!" : "");
	tbl_cell(t, "%d", e->pid);
	tbl_cell(t, "%u", e->client_id);
	tbl_cell(t, "%u", e->sq_psn);
	tbl_cell(t, "%u", e->rq_psn);
	if (connected)
		tbl_cell(t, "%u", e->dest_qp_num);
	else
		tbl_cell(t, "-");
	if (e->path_mtu != 0)
		tbl_cell(t, "%u", fmt_mtu_bytes(e->path_mtu));
	else
		tbl_cell(t, "-");
	tbl_cell(t, "%s", connected && !fmt_gid_is_zero(e->dgid) ? gid : "-");
	tbl_cell(t, "%u", e->max_send_wr);
	tbl_cell(t, "%u", e->max_recv_wr);
	tbl_cell(t, "%u/%u", e->sq_queued, e->rq_queued);
	tbl_cell(t, "%u", e->worker);
}

int
ctl_qps_main(int argc, char **argv)
{
	static const char *const head[] = {"QPN", "TYPE", "STATE", "PID", "CLIENT", "SQ-PSN",
					   "RQ-PSN", "DQPN", "MTU", "DGID", "SQ-WR", "RQ-WR",
					   "QUEUED", "WORKER"};
	struct uroce_shm_msg_list_qps_resp r;
	struct uroce_shm_msg_list_req q;
	const struct show_pager pg = {
		.type = UROCE_SHM_MSG_LIST_QPS, .what = "LIST_QPS", .req = &q, .req_len = sizeof(q),
		.start = &q.start, .resp = &r, .resp_len = sizeof(r), .page = &r.page,
		.entries = r.q, .entry_size = sizeof(r.q[0]), .max = UROCE_SHM_LIST_QPS_MAX,
	};

	memset(&q, 0, sizeof(q));
	return show_list_main(argc, argv, head, sizeof(head) / sizeof(head[0]), "qps", &pg,
			      qps_row);
}

/* ------------------------------------------------------------------------ */
/* workers                                                                   */
/* ------------------------------------------------------------------------ */

/* @p num / @p den with one decimal, "-" when there is nothing to divide by. */
static void
cell_ratio(struct tbl *t, uint64_t num, uint64_t den)
{
	if (den == 0)
		tbl_cell(t, "-");
	else
		tbl_cell(t, "%.1f", (double)num / (double)den);
}

/* Cycles per packet and per message, the way VPP's "show runtime" gives
 * clocks per vector: busy cycles divided by what the worker handled. */
static void
workers_row(struct show *s, const void *entry, void *arg)
{
	const struct uroce_shm_worker_info *e = entry;
	/* Frames on the worker's queues; without a port, its engine's packets. */
	uint64_t pkts = e->rx_packets + e->tx_packets != 0 ? e->rx_packets + e->tx_packets :
							       e->roce_rx + e->roce_tx;
	uint64_t total = e->busy_cycles + e->idle_cycles;
	struct json *j = &s->j;
	struct tbl *t = &s->t;

	(void)arg;
	json_obj_begin(j);
	json_kv_u64(j, "worker", e->worker);
	json_kv_u64(j, "qps", e->qps);
	json_kv_u64(j, "tsc_hz", e->tsc_hz);
	json_kv_u64(j, "busy_cycles", e->busy_cycles);
	json_kv_u64(j, "idle_cycles", e->idle_cycles);
	json_kv_u64(j, "loops", e->loops);
	json_kv_u64(j, "rx_packets", e->rx_packets);
	json_kv_u64(j, "tx_packets", e->tx_packets);
	json_kv_u64(j, "handoff_in", e->handoff_in);
	json_kv_u64(j, "handoff_out", e->handoff_out);
	json_kv_u64(j, "wqes", e->wqes);
	json_kv_u64(j, "cqes", e->cqes);
	json_kv_u64(j, "roce_rx", e->roce_rx);
	json_kv_u64(j, "roce_tx", e->roce_tx);
	json_kv_u64(j, "sleeps", e->sleeps);
	json_obj_end(j);
	tbl_cell(t, "%u", e->worker);
	tbl_cell(t, "%u", e->qps);
	if (total != 0)
		tbl_cell(t, "%.1f%%", 100.0 * (double)e->busy_cycles / (double)total);
	else
		tbl_cell(t, "-");
	tbl_cell(t, "%llu", (unsigned long long)e->roce_rx);
	tbl_cell(t, "%llu", (unsigned long long)e->roce_tx);
	tbl_cell(t, "%llu", (unsigned long long)e->wqes);
	tbl_cell(t, "%llu", (unsigned long long)e->cqes);
	tbl_cell(t, "%llu/%llu", (unsigned long long)e->handoff_in,
		 (unsigned long long)e->handoff_out);
	/* No cycle counts from a daemon whose shell does not keep them. */
	cell_ratio(t, e->busy_cycles, e->tsc_hz != 0 ? pkts : 0);
	cell_ratio(t, e->busy_cycles, e->tsc_hz != 0 ? e->wqes : 0);
}

int
ctl_workers_main(int argc, char **argv)
{
	static const char *const head[] = {"WORKER", "QPS", "BUSY", "ROCE-RX", "ROCE-TX",
					   "WQES", "CQES", "HANDOFF-IN/OUT", "CYC/PKT",
					   "CYC/MSG"};
	struct uroce_shm_msg_list_workers_resp r;
	struct uroce_shm_msg_list_req q;
	const struct show_pager pg = {
		.type = UROCE_SHM_MSG_LIST_WORKERS, .what = "LIST_WORKERS", .req = &q,
		.req_len = sizeof(q), .start = &q.start, .resp = &r, .resp_len = sizeof(r),
		.page = &r.page, .entries = r.w, .entry_size = sizeof(r.w[0]),
		.max = UROCE_SHM_LIST_WORKERS_MAX,
	};

	memset(&q, 0, sizeof(q));
	return show_list_main(argc, argv, head, sizeof(head) / sizeof(head[0]), "workers", &pg,
			      workers_row);
}

/* ------------------------------------------------------------------------ */
/* clients                                                                   */
/* ------------------------------------------------------------------------ */

static void
clients_row(struct show *s, const void *entry, void *arg)
{
	const struct uroce_shm_session_info *e = entry;
	bool self = (e->flags & UROCE_SHM_SESSION_F_SELF) != 0;
	bool hello = (e->flags & UROCE_SHM_SESSION_F_HELLO) != 0;
	struct json *j = &s->j;
	struct tbl *t = &s->t;

	(void)arg;
	json_obj_begin(j);
	json_kv_u64(j, "client_id", e->client_id);
	json_key(j, "pid");
	json_i64(j, e->pid);
	json_kv_u64(j, "uid", e->uid);
	json_kv_bool(j, "hello", hello);
	json_kv_bool(j, "self", self);
	json_kv_u64(j, "segments", e->segments);
	json_kv_u64(j, "pds", e->pds);
	json_kv_u64(j, "mrs", e->mrs);
	json_kv_u64(j, "cqs", e->cqs);
	json_kv_u64(j, "qps", e->qps);
	json_kv_u64(j, "ahs", e->ahs);
	json_kv_u64(j, "srqs", e->srqs);
	json_obj_end(j);
	tbl_cell(t, "%u", e->client_id);
	tbl_cell(t, "%d", e->pid);
	tbl_cell(t, "%u", e->uid);
	tbl_cell(t, "%u", e->segments);
	tbl_cell(t, "%u", e->pds);
	tbl_cell(t, "%u", e->mrs);
	tbl_cell(t, "%u", e->cqs);
	tbl_cell(t, "%u", e->qps);
	tbl_cell(t, "%u", e->srqs);
	tbl_cell(t, "%u", e->ahs);
	tbl_cell(t, "%s", self ? "this uroce-ctl" : hello ? "" : "before HELLO");
}

int
ctl_clients_main(int argc, char **argv)
{
	static const char *const head[] = {"CLIENT", "PID", "UID", "SEGS", "PDS", "MRS", "CQS",
					   "QPS", "SRQS", "AHS", "NOTE"};
	struct uroce_shm_msg_list_sessions_resp r;
	struct uroce_shm_msg_list_req q;
	const struct show_pager pg = {
		.type = UROCE_SHM_MSG_LIST_SESSIONS, .what = "LIST_SESSIONS", .req = &q,
		.req_len = sizeof(q),
		.start = &q.start, .resp = &r, .resp_len = sizeof(r), .page = &r.page,
		.entries = r.s, .entry_size = sizeof(r.s[0]),
		.max = UROCE_SHM_LIST_SESSIONS_MAX,
	};

	memset(&q, 0, sizeof(q));
	return show_list_main(argc, argv, head, sizeof(head) / sizeof(head[0]), "clients", &pg,
			      clients_row);
}

/* ------------------------------------------------------------------------ */
/* counters                                                                  */
/* ------------------------------------------------------------------------ */

/* @p arg: the group of the JSON object open now, -1 before the first. */
static void
counters_row(struct show *s, const void *entry, void *arg)
{
	static const char *const groups[] = {"daemon", "transport", "congestion",
					     "last_responder_error"};
	const struct uroce_shm_counter *e = entry;
	char name[UROCE_SHM_COUNTER_NAME_LEN + 1];
	const struct uroce_opcode_info *oi;
	int *group = arg;
	const char *g;

	/* The daemon NUL-terminates; do not trust it to. */
	memcpy(name, e->name, UROCE_SHM_COUNTER_NAME_LEN);
	name[UROCE_SHM_COUNTER_NAME_LEN] = '\0';
	g = e->group < 4 ? groups[e->group] : "other";
	/* Counters of a group arrive together: one object per group. */
	if (*group != e->group) {
		if (*group >= 0)
			json_obj_end(&s->j);
		json_key(&s->j, g);
		json_obj_begin(&s->j);
		*group = e->group;
	}
	json_kv_u64(&s->j, name, e->value);
	tbl_cell(&s->t, "%s", g);
	tbl_cell(&s->t, "%s", name);
	/* The table names what the last rejection's numbers mean. */
	oi = uroce_opcode_get((uint8_t)e->value);
	if (e->group == UROCE_SHM_COUNTER_G_RESP_REJECT && strcmp(name, "last_reject_check") == 0)
		tbl_cell(&s->t, "%" PRIu64 " (%s)", e->value, uroce_resp_check_name((uint32_t)e->value));
	else if (e->group == UROCE_SHM_COUNTER_G_RESP_REJECT &&
		 strcmp(name, "last_reject_opcode") == 0 && oi != NULL)
		tbl_cell(&s->t, "%" PRIu64 " (%s)", e->value, oi->name);
	else if (e->group == UROCE_SHM_COUNTER_G_RESP_REJECT && strcmp(name, "last_reject_nak") == 0 &&
		 e->value == UROCE_RESP_REJECT_DROPPED)
		tbl_cell(&s->t, "%" PRIu64 " (dropped)", e->value);
	else
		tbl_cell(&s->t, "%" PRIu64, e->value);
}

int
ctl_counters_main(int argc, char **argv)
{
	static const char *const head[] = {"GROUP", "COUNTER", "VALUE"};
	struct uroce_shm_msg_query_counters_resp r;
	struct uroce_shm_msg_query_counters_req q;
	const struct show_pager pg = {
		.type = UROCE_SHM_MSG_QUERY_COUNTERS, .what = "QUERY_COUNTERS", .req = &q,
		.req_len = sizeof(q),
		.start = &q.start, .resp = &r, .resp_len = sizeof(r), .page = &r.page,
		.entries = r.c, .entry_size = sizeof(r.c[0]), .max = UROCE_SHM_COUNTERS_MAX,
	};
	struct show s;
	int rc, group = -1;

	rc = show_start(&s, argc, argv, true);
	if (rc >= 0)
		return rc;
	show_out_begin(&s, head, sizeof(head) / sizeof(head[0]));
	json_kv_str(&s.j, "scope", s.o.has_qp ? "qp" : "device");
	if (s.o.has_qp)
		json_kv_u64(&s.j, "qpn", s.o.qp);
	else
		json_kv_str(&s.j, "dev", DEV_NAME);
	json_key(&s.j, "counters");
	json_obj_begin(&s.j);
	memset(&q, 0, sizeof(q));
	q.scope = s.o.has_qp ? UROCE_SHM_COUNTERS_QP : UROCE_SHM_COUNTERS_DEVICE;
	q.qp_num = s.o.has_qp ? s.o.qp : 0;
	rc = show_pages(&s, &pg, counters_row, &group);
	if (rc == -ENOENT && s.o.has_qp) {
		uroce_shm_client_close(&s.c);
		json_free(&s.j);
		tbl_free(&s.t);
		ctl_err("no QP %u (or it belongs to another user)", s.o.qp);
		return CTL_EXIT_ERROR;
	}
	if (rc != 0)
		return show_fail(&s, pg.what, rc);
	if (group >= 0)
		json_obj_end(&s.j);
	json_obj_end(&s.j);
	json_obj_end(&s.j);
	return show_finish(&s);
}
