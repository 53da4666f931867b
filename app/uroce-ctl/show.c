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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_shm.h"

#include "client.h"
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
		cmd, with_qp ? " [--qp QPN]" : "", ctl_socket_path(NULL),
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
			char *end;
			unsigned long v;

			if (!with_qp)
				goto bad;
			errno = 0;
			v = strtoul(optarg, &end, 0);
			if (errno != 0 || *end != '\0' || end == optarg || v > 0xffffff) {
				ctl_err("--qp: '%s' is not a QP number (0..0xffffff)", optarg);
				return CTL_EXIT_ERROR;
			}
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
	o->sock = ctl_socket_path(o->sock);
	return -1;
bad:
	show_usage(stderr, argv[0], with_qp);
	return CTL_EXIT_ERROR;
}

/* @return -1 when connected, else the exit code (message printed). */
static int
connect_daemon(struct ctl_conn *c, const struct opts *o)
{
	int rc = ctl_conn_open(c, o->sock);

	if (rc == 0)
		return -1;
	ctl_err("cannot connect to uroced at %s: %s (%s)", o->sock, strerror(-rc),
		ctl_conn_advice(rc));
	/* No daemon there (or not reachable): 1; a daemon that misbehaves: 2. */
	return rc == -ENOENT || rc == -ECONNREFUSED || rc == -EACCES || rc == -EPERM ||
	       rc == -ENOTSOCK || rc == -ENAMETOOLONG ? CTL_EXIT_NO_DAEMON : CTL_EXIT_ERROR;
}

static int
call_failed(const struct ctl_conn *c, const char *what, int rc)
{
	if (rc == -ECONNRESET || rc == -EOPNOTSUPP)
		ctl_err("%s: %s (uroced at %s closed the connection; it may predate the "
			"introspection messages of ABI 1.1)", what, strerror(-rc), c->path);
	else
		ctl_err("%s: %s", what, strerror(-rc));
	return CTL_EXIT_ERROR;
}

static int
json_out(struct json *j)
{
	int rc = json_write_line(j, stdout);

	json_free(j);
	if (rc != 0) {
		ctl_err("writing JSON: %s", strerror(-rc));
		return CTL_EXIT_ERROR;
	}
	return CTL_EXIT_OK;
}

static int
tbl_out(struct tbl *t)
{
	int rc = tbl_print(t, stdout);

	tbl_free(t);
	if (rc != 0) {
		ctl_err("writing table: %s", strerror(-rc));
		return CTL_EXIT_ERROR;
	}
	return CTL_EXIT_OK;
}

static void
guid_str(uint64_t g, char *buf, size_t n)
{
	snprintf(buf, n, "%04x:%04x:%04x:%04x", (unsigned int)(g >> 48) & 0xffff,
		 (unsigned int)(g >> 32) & 0xffff, (unsigned int)(g >> 16) & 0xffff,
		 (unsigned int)g & 0xffff);
}

/* ------------------------------------------------------------------------ */
/* devices                                                                   */
/* ------------------------------------------------------------------------ */

int
ctl_devices_main(int argc, char **argv)
{
	struct uroce_shm_msg_query_device_resp dev;
	struct uroce_shm_msg_query_port_resp port[8];
	struct uroce_shm_msg_query_port_req pq;
	struct ctl_conn c;
	struct opts o;
	char guid[32], sguid[32];
	unsigned int nports, i;
	struct json j;
	int rc;

	rc = parse_opts(argc, argv, false, &o);
	if (rc >= 0)
		return rc;
	rc = connect_daemon(&c, &o);
	if (rc >= 0)
		return rc;
	rc = ctl_conn_call(&c, UROCE_SHM_MSG_QUERY_DEVICE, NULL, 0, &dev, sizeof(dev));
	if (rc != 0) {
		ctl_conn_close(&c);
		return call_failed(&c, "QUERY_DEVICE", rc);
	}
	nports = dev.phys_port_cnt < 8 ? dev.phys_port_cnt : 8;
	for (i = 0; i < nports; i++) {
		memset(&pq, 0, sizeof(pq));
		pq.port_num = (uint8_t)(i + 1);
		rc = ctl_conn_call(&c, UROCE_SHM_MSG_QUERY_PORT, &pq, sizeof(pq), &port[i],
				   sizeof(port[i]));
		if (rc != 0) {
			ctl_conn_close(&c);
			return call_failed(&c, "QUERY_PORT", rc);
		}
	}
	ctl_conn_close(&c);
	guid_str(dev.node_guid, guid, sizeof(guid));
	guid_str(dev.sys_image_guid, sguid, sizeof(sguid));
	if (o.json) {
		json_init(&j);
		json_obj_begin(&j);
		json_kv_str(&j, "socket", o.sock);
		json_key(&j, "abi");
		json_obj_begin(&j);
		json_kv_u64(&j, "major", UROCE_SHM_ABI_MAJOR);
		json_kv_u64(&j, "minor", c.abi_minor);
		json_obj_end(&j);
		json_key(&j, "devices");
		json_arr_begin(&j);
		json_obj_begin(&j);
		json_kv_str(&j, "name", DEV_NAME);
		json_kv_str(&j, "transport", "RoCEv2");
		json_kv_str(&j, "node_guid", guid);
		json_kv_str(&j, "sys_image_guid", sguid);
		json_kv_u64(&j, "vendor_id", dev.vendor_id);
		json_kv_u64(&j, "vendor_part_id", dev.vendor_part_id);
		json_kv_u64(&j, "hw_ver", dev.hw_ver);
		json_kv_u64(&j, "max_qp", dev.max_qp);
		json_kv_u64(&j, "max_qp_wr", dev.max_qp_wr);
		json_kv_u64(&j, "max_sge", dev.max_sge);
		json_kv_u64(&j, "max_cq", dev.max_cq);
		json_kv_u64(&j, "max_cqe", dev.max_cqe);
		json_kv_u64(&j, "max_mr", dev.max_mr);
		json_kv_u64(&j, "max_pd", dev.max_pd);
		json_kv_u64(&j, "max_ah", dev.max_ah);
		json_kv_u64(&j, "max_srq", dev.max_srq);
		json_kv_u64(&j, "max_qp_rd_atom", dev.max_qp_rd_atom);
		json_kv_u64(&j, "max_qp_init_rd_atom", dev.max_qp_init_rd_atom);
		json_kv_u64(&j, "max_inline_data", dev.max_inline_data);
		json_kv_u64(&j, "atomic_cap", dev.atomic_cap);
		json_kv_u64(&j, "phys_port_cnt", dev.phys_port_cnt);
		json_key(&j, "ports");
		json_arr_begin(&j);
		for (i = 0; i < nports; i++) {
			json_obj_begin(&j);
			json_kv_u64(&j, "port", i + 1);
			json_kv_str(&j, "state", fmt_port_state(port[i].state));
			json_kv_u64(&j, "max_mtu", fmt_mtu_bytes(port[i].max_mtu));
			json_kv_u64(&j, "active_mtu", fmt_mtu_bytes(port[i].active_mtu));
			json_kv_u64(&j, "gid_tbl_len", port[i].gid_tbl_len);
			json_kv_u64(&j, "max_msg_sz", port[i].max_msg_sz);
			json_kv_str(&j, "link_layer", fmt_link_layer(port[i].link_layer));
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
		json_arr_end(&j);
		json_obj_end(&j);
		return json_out(&j);
	}
	/* ibv_devinfo -v layout: "key:" then tabs, one device, its ports indented. */
	printf("hca_id:\t%s\n", DEV_NAME);
	printf("\ttransport:\t\t\tRoCEv2 (uroce, ABI %u.%u)\n", UROCE_SHM_ABI_MAJOR,
	       c.abi_minor);
	printf("\tsocket:\t\t\t\t%s\n", o.sock);
	printf("\tnode_guid:\t\t\t%s\n", guid);
	printf("\tsys_image_guid:\t\t\t%s\n", sguid);
	printf("\tvendor_id:\t\t\t0x%04x\n", dev.vendor_id);
	printf("\tvendor_part_id:\t\t\t%u\n", dev.vendor_part_id);
	printf("\thw_ver:\t\t\t\t0x%x\n", dev.hw_ver);
	printf("\tmax_qp:\t\t\t\t%u\n", dev.max_qp);
	printf("\tmax_qp_wr:\t\t\t%u\n", dev.max_qp_wr);
	printf("\tmax_sge:\t\t\t%u\n", dev.max_sge);
	printf("\tmax_cq:\t\t\t\t%u\n", dev.max_cq);
	printf("\tmax_cqe:\t\t\t%u\n", dev.max_cqe);
	printf("\tmax_mr:\t\t\t\t%u\n", dev.max_mr);
	printf("\tmax_pd:\t\t\t\t%u\n", dev.max_pd);
	printf("\tmax_ah:\t\t\t\t%u\n", dev.max_ah);
	printf("\tmax_srq:\t\t\t%u\n", dev.max_srq);
	printf("\tmax_qp_rd_atom:\t\t\t%u\n", dev.max_qp_rd_atom);
	printf("\tmax_qp_init_rd_atom:\t\t%u\n", dev.max_qp_init_rd_atom);
	printf("\tmax_inline_data:\t\t%u\n", dev.max_inline_data);
	printf("\tphys_port_cnt:\t\t\t%u\n", dev.phys_port_cnt);
	for (i = 0; i < nports; i++) {
		printf("\t\tport:\t%u\n", i + 1);
		printf("\t\t\tstate:\t\t\t%s (%u)\n", fmt_port_state(port[i].state),
		       port[i].state);
		printf("\t\t\tmax_mtu:\t\t%u (%u)\n", fmt_mtu_bytes(port[i].max_mtu),
		       port[i].max_mtu);
		printf("\t\t\tactive_mtu:\t\t%u (%u)\n", fmt_mtu_bytes(port[i].active_mtu),
		       port[i].active_mtu);
		printf("\t\t\tgid_tbl_len:\t\t%u\n", port[i].gid_tbl_len);
		printf("\t\t\tmax_msg_sz:\t\t0x%x\n", port[i].max_msg_sz);
		printf("\t\t\tlink_layer:\t\t%s\n", fmt_link_layer(port[i].link_layer));
	}
	return ferror(stdout) ? CTL_EXIT_ERROR : CTL_EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* gids                                                                      */
/* ------------------------------------------------------------------------ */

int
ctl_gids_main(int argc, char **argv)
{
	struct uroce_shm_msg_query_device_resp dev;
	struct uroce_shm_msg_query_port_resp pr;
	struct uroce_shm_msg_query_port_req pq;
	struct uroce_shm_msg_query_gid_req gq;
	struct uroce_shm_msg_query_gid_resp gr;
	static const char *const head[] = {"DEV", "PORT", "INDEX", "GID", "TYPE"};
	struct ctl_conn c;
	struct opts o;
	struct json j;
	struct tbl t;
	char gid[64];
	unsigned int p, i;
	int rc;

	rc = parse_opts(argc, argv, false, &o);
	if (rc >= 0)
		return rc;
	rc = connect_daemon(&c, &o);
	if (rc >= 0)
		return rc;
	rc = ctl_conn_call(&c, UROCE_SHM_MSG_QUERY_DEVICE, NULL, 0, &dev, sizeof(dev));
	if (rc != 0) {
		ctl_conn_close(&c);
		return call_failed(&c, "QUERY_DEVICE", rc);
	}
	json_init(&j);
	tbl_init(&t, sizeof(head) / sizeof(head[0]), head);
	json_obj_begin(&j);
	json_key(&j, "gids");
	json_arr_begin(&j);
	for (p = 1; p <= dev.phys_port_cnt; p++) {
		memset(&pq, 0, sizeof(pq));
		pq.port_num = (uint8_t)p;
		rc = ctl_conn_call(&c, UROCE_SHM_MSG_QUERY_PORT, &pq, sizeof(pq), &pr, sizeof(pr));
		if (rc != 0)
			goto fail;
		for (i = 0; i < pr.gid_tbl_len; i++) {
			memset(&gq, 0, sizeof(gq));
			gq.port_num = (uint8_t)p;
			gq.index = i;
			rc = ctl_conn_call(&c, UROCE_SHM_MSG_QUERY_GID, &gq, sizeof(gq), &gr,
					   sizeof(gr));
			/* An empty slot of the table is refused or all zero: skip it. */
			if (rc == -EINVAL || rc == -ENOENT || rc == -ENODATA ||
			    (rc == 0 && fmt_gid_is_zero(gr.gid)))
				continue;
			if (rc != 0)
				goto fail;
			fmt_gid(gr.gid, gid, sizeof(gid));
			json_obj_begin(&j);
			json_kv_str(&j, "dev", DEV_NAME);
			json_kv_u64(&j, "port", p);
			json_kv_u64(&j, "index", i);
			json_kv_str(&j, "gid", gid);
			json_kv_str(&j, "type", gr.gid_type == 1 ? "RoCEv2" : "IB/RoCEv1");
			json_obj_end(&j);
			tbl_cell(&t, "%s", DEV_NAME);
			tbl_cell(&t, "%u", p);
			tbl_cell(&t, "%u", i);
			tbl_cell(&t, "%s", gid);
			tbl_cell(&t, "%s", gr.gid_type == 1 ? "RoCEv2" : "IB/RoCEv1");
		}
	}
	ctl_conn_close(&c);
	json_arr_end(&j);
	json_obj_end(&j);
	if (o.json) {
		tbl_free(&t);
		return json_out(&j);
	}
	json_free(&j);
	return tbl_out(&t);
fail:
	ctl_conn_close(&c);
	json_free(&j);
	tbl_free(&t);
	return call_failed(&c, "QUERY_PORT/QUERY_GID", rc);
}

/* ------------------------------------------------------------------------ */
/* qps                                                                       */
/* ------------------------------------------------------------------------ */

int
ctl_qps_main(int argc, char **argv)
{
	static const char *const head[] = {"QPN", "TYPE", "STATE", "PID", "CLIENT", "SQ-PSN",
					   "RQ-PSN", "DQPN", "MTU", "DGID", "SQ-WR", "RQ-WR",
					   "QUEUED"};
	struct uroce_shm_msg_list_qps_resp r;
	struct uroce_shm_msg_list_req q;
	struct ctl_conn c;
	struct opts o;
	struct json j;
	struct tbl t;
	char gid[64];
	unsigned int i;
	int rc;

	rc = parse_opts(argc, argv, false, &o);
	if (rc >= 0)
		return rc;
	rc = connect_daemon(&c, &o);
	if (rc >= 0)
		return rc;
	json_init(&j);
	tbl_init(&t, sizeof(head) / sizeof(head[0]), head);
	json_obj_begin(&j);
	json_key(&j, "qps");
	json_arr_begin(&j);
	memset(&q, 0, sizeof(q));
	do {
		rc = ctl_conn_call(&c, UROCE_SHM_MSG_LIST_QPS, &q, sizeof(q), &r, sizeof(r));
		if (rc != 0)
			goto fail;
		rc = -EPROTO;
		if (r.page.count > UROCE_SHM_LIST_QPS_MAX ||
		    ((r.page.flags & UROCE_SHM_LIST_F_MORE) && r.page.next <= q.start))
			goto fail; /* a cursor that does not advance would loop forever */
		for (i = 0; i < r.page.count; i++) {
			const struct uroce_shm_qp_info *e = &r.q[i];
			bool connected = e->qp_type != 4 && e->qp_state >= 2 && e->qp_state != 6;

			fmt_gid(e->dgid, gid, sizeof(gid));
			json_obj_begin(&j);
			json_kv_u64(&j, "qpn", e->qp_num);
			json_kv_str(&j, "type", fmt_qp_type(e->qp_type));
			json_kv_str(&j, "state", fmt_qp_state(e->qp_state));
			json_key(&j, "pid");
			json_i64(&j, e->pid);
			json_kv_u64(&j, "client_id", e->client_id);
			json_kv_u64(&j, "sq_psn", e->sq_psn);
			json_kv_u64(&j, "rq_psn", e->rq_psn);
			json_kv_u64(&j, "dest_qpn", e->dest_qp_num);
			json_kv_u64(&j, "path_mtu", fmt_mtu_bytes(e->path_mtu));
			if (fmt_gid_is_zero(e->dgid))
				json_kv_null(&j, "dgid");
			else
				json_kv_str(&j, "dgid", gid);
			json_kv_u64(&j, "max_send_wr", e->max_send_wr);
			json_kv_u64(&j, "max_recv_wr", e->max_recv_wr);
			json_kv_u64(&j, "sq_queued", e->sq_queued);
			json_kv_u64(&j, "rq_queued", e->rq_queued);
			json_kv_bool(&j, "ring_failed",
				     (e->flags & UROCE_SHM_QP_F_RING_FAILED) != 0);
			json_obj_end(&j);
			tbl_cell(&t, "%u", e->qp_num);
			tbl_cell(&t, "%s", fmt_qp_type(e->qp_type));
			tbl_cell(&t, "%s%s", fmt_qp_state(e->qp_state),
				 (e->flags & UROCE_SHM_QP_F_RING_FAILED) ? "!" : "");
			tbl_cell(&t, "%d", e->pid);
			tbl_cell(&t, "%u", e->client_id);
			tbl_cell(&t, "%u", e->sq_psn);
			tbl_cell(&t, "%u", e->rq_psn);
			if (connected)
				tbl_cell(&t, "%u", e->dest_qp_num);
			else
				tbl_cell(&t, "-");
			if (e->path_mtu != 0)
				tbl_cell(&t, "%u", fmt_mtu_bytes(e->path_mtu));
			else
				tbl_cell(&t, "-");
			tbl_cell(&t, "%s", connected && !fmt_gid_is_zero(e->dgid) ? gid : "-");
			tbl_cell(&t, "%u", e->max_send_wr);
			tbl_cell(&t, "%u", e->max_recv_wr);
			tbl_cell(&t, "%u/%u", e->sq_queued, e->rq_queued);
		}
		q.start = r.page.next;
	} while (r.page.flags & UROCE_SHM_LIST_F_MORE);
	ctl_conn_close(&c);
	json_arr_end(&j);
	json_obj_end(&j);
	if (o.json) {
		tbl_free(&t);
		return json_out(&j);
	}
	json_free(&j);
	return tbl_out(&t);
fail:
	ctl_conn_close(&c);
	json_free(&j);
	tbl_free(&t);
	return call_failed(&c, "LIST_QPS", rc);
}

/* ------------------------------------------------------------------------ */
/* clients                                                                   */
/* ------------------------------------------------------------------------ */

int
ctl_clients_main(int argc, char **argv)
{
	static const char *const head[] = {"CLIENT", "PID", "UID", "SEGS", "PDS", "MRS", "CQS",
					   "QPS", "SRQS", "AHS", "NOTE"};
	struct uroce_shm_msg_list_sessions_resp r;
	struct uroce_shm_msg_list_req q;
	struct ctl_conn c;
	struct opts o;
	struct json j;
	struct tbl t;
	unsigned int i;
	int rc;

	rc = parse_opts(argc, argv, false, &o);
	if (rc >= 0)
		return rc;
	rc = connect_daemon(&c, &o);
	if (rc >= 0)
		return rc;
	json_init(&j);
	tbl_init(&t, sizeof(head) / sizeof(head[0]), head);
	json_obj_begin(&j);
	json_key(&j, "clients");
	json_arr_begin(&j);
	memset(&q, 0, sizeof(q));
	do {
		rc = ctl_conn_call(&c, UROCE_SHM_MSG_LIST_SESSIONS, &q, sizeof(q), &r, sizeof(r));
		if (rc != 0)
			goto fail;
		rc = -EPROTO;
		if (r.page.count > UROCE_SHM_LIST_SESSIONS_MAX ||
		    ((r.page.flags & UROCE_SHM_LIST_F_MORE) && r.page.next <= q.start))
			goto fail;
		for (i = 0; i < r.page.count; i++) {
			const struct uroce_shm_session_info *e = &r.s[i];
			bool self = (e->flags & UROCE_SHM_SESSION_F_SELF) != 0;
			bool hello = (e->flags & UROCE_SHM_SESSION_F_HELLO) != 0;

			json_obj_begin(&j);
			json_kv_u64(&j, "client_id", e->client_id);
			json_key(&j, "pid");
			json_i64(&j, e->pid);
			json_kv_u64(&j, "uid", e->uid);
			json_kv_bool(&j, "hello", hello);
			json_kv_bool(&j, "self", self);
			json_kv_u64(&j, "segments", e->segments);
			json_kv_u64(&j, "pds", e->pds);
			json_kv_u64(&j, "mrs", e->mrs);
			json_kv_u64(&j, "cqs", e->cqs);
			json_kv_u64(&j, "qps", e->qps);
			json_kv_u64(&j, "ahs", e->ahs);
			json_kv_u64(&j, "srqs", e->srqs);
			json_obj_end(&j);
			tbl_cell(&t, "%u", e->client_id);
			tbl_cell(&t, "%d", e->pid);
			tbl_cell(&t, "%u", e->uid);
			tbl_cell(&t, "%u", e->segments);
			tbl_cell(&t, "%u", e->pds);
			tbl_cell(&t, "%u", e->mrs);
			tbl_cell(&t, "%u", e->cqs);
			tbl_cell(&t, "%u", e->qps);
			tbl_cell(&t, "%u", e->srqs);
			tbl_cell(&t, "%u", e->ahs);
			tbl_cell(&t, "%s", self ? "this uroce-ctl" : hello ? "" : "before HELLO");
		}
		q.start = r.page.next;
	} while (r.page.flags & UROCE_SHM_LIST_F_MORE);
	ctl_conn_close(&c);
	json_arr_end(&j);
	json_obj_end(&j);
	if (o.json) {
		tbl_free(&t);
		return json_out(&j);
	}
	json_free(&j);
	return tbl_out(&t);
fail:
	ctl_conn_close(&c);
	json_free(&j);
	tbl_free(&t);
	return call_failed(&c, "LIST_SESSIONS", rc);
}

/* ------------------------------------------------------------------------ */
/* counters                                                                  */
/* ------------------------------------------------------------------------ */

int
ctl_counters_main(int argc, char **argv)
{
	static const char *const head[] = {"GROUP", "COUNTER", "VALUE"};
	static const char *const groups[] = {"daemon", "transport"};
	struct uroce_shm_msg_query_counters_resp r;
	struct uroce_shm_msg_query_counters_req q;
	struct ctl_conn c;
	struct opts o;
	struct json j;
	struct tbl t;
	unsigned int i;
	int rc, group = -1;

	rc = parse_opts(argc, argv, true, &o);
	if (rc >= 0)
		return rc;
	rc = connect_daemon(&c, &o);
	if (rc >= 0)
		return rc;
	json_init(&j);
	tbl_init(&t, sizeof(head) / sizeof(head[0]), head);
	json_obj_begin(&j);
	json_kv_str(&j, "scope", o.has_qp ? "qp" : "device");
	if (o.has_qp)
		json_kv_u64(&j, "qpn", o.qp);
	else
		json_kv_str(&j, "dev", DEV_NAME);
	json_key(&j, "counters");
	json_obj_begin(&j);
	memset(&q, 0, sizeof(q));
	q.scope = o.has_qp ? UROCE_SHM_COUNTERS_QP : UROCE_SHM_COUNTERS_DEVICE;
	q.qp_num = o.has_qp ? o.qp : 0;
	do {
		rc = ctl_conn_call(&c, UROCE_SHM_MSG_QUERY_COUNTERS, &q, sizeof(q), &r, sizeof(r));
		if (rc == -ENOENT && o.has_qp) {
			ctl_conn_close(&c);
			json_free(&j);
			tbl_free(&t);
			ctl_err("no QP %u (or it belongs to another user)", o.qp);
			return CTL_EXIT_ERROR;
		}
		if (rc != 0)
			goto fail;
		rc = -EPROTO;
		if (r.page.count > UROCE_SHM_COUNTERS_MAX ||
		    ((r.page.flags & UROCE_SHM_LIST_F_MORE) && r.page.next <= q.start))
			goto fail;
		for (i = 0; i < r.page.count; i++) {
			const struct uroce_shm_counter *e = &r.c[i];
			char name[UROCE_SHM_COUNTER_NAME_LEN + 1];
			const char *g;

			/* The daemon NUL-terminates; do not trust it to. */
			memcpy(name, e->name, UROCE_SHM_COUNTER_NAME_LEN);
			name[UROCE_SHM_COUNTER_NAME_LEN] = '\0';
			g = e->group < 2 ? groups[e->group] : "other";
			/* Counters of a group arrive together: one object per group. */
			if (group != e->group) {
				if (group >= 0)
					json_obj_end(&j);
				json_key(&j, g);
				json_obj_begin(&j);
				group = e->group;
			}
			json_kv_u64(&j, name, e->value);
			tbl_cell(&t, "%s", g);
			tbl_cell(&t, "%s", name);
			tbl_cell(&t, "%" PRIu64, e->value);
		}
		q.start = r.page.next;
	} while (r.page.flags & UROCE_SHM_LIST_F_MORE);
	ctl_conn_close(&c);
	if (group >= 0)
		json_obj_end(&j);
	json_obj_end(&j);
	json_obj_end(&j);
	if (o.json) {
		tbl_free(&t);
		return json_out(&j);
	}
	json_free(&j);
	return tbl_out(&t);
fail:
	ctl_conn_close(&c);
	json_free(&j);
	tbl_free(&t);
	return call_failed(&c, "QUERY_COUNTERS", rc);
}
