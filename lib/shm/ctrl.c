/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Control messages: the table of types (body length and descriptor rule per
 * direction), the header builder and the validator. The daemon runs every
 * received message through uroce_shm_msg_validate() before it reads a body
 * field; each way a message can be malformed has its own errno.
 */

#include <errno.h>
#include <string.h>

#include <uroce_common.h>

#include "shm_internal.h"

#define NO_MSG (-1) /* the type does not exist in that direction */

struct msg_desc {
	const char *name;
	int req_len;   /* body bytes client -> daemon, or NO_MSG */
	int resp_len;  /* body bytes daemon -> client, or NO_MSG */
	uint8_t req_fd;
	uint8_t resp_fd;
};

#define H sizeof(struct uroce_shm_msg_handle)
#define S(t) (int)sizeof(struct uroce_shm_msg_##t)

static const struct msg_desc msg_table[UROCE_SHM_MSG_TYPE_MAX + 1] = {
	[UROCE_SHM_MSG_HELLO] = {"HELLO", S(hello_req), S(hello_resp),
				 UROCE_SHM_FD_NONE, UROCE_SHM_FD_REQUIRED},
	[UROCE_SHM_MSG_ALLOC_SEGMENT] = {"ALLOC_SEGMENT", S(alloc_segment_req),
					 S(alloc_segment_resp), UROCE_SHM_FD_REQUIRED,
					 UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_FREE_SEGMENT] = {"FREE_SEGMENT", H, 0, UROCE_SHM_FD_NONE,
					UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_ALLOC_PD] = {"ALLOC_PD", 0, H, UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_DEALLOC_PD] = {"DEALLOC_PD", H, 0, UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_REG_MR] = {"REG_MR", S(reg_mr_req), S(reg_mr_resp), UROCE_SHM_FD_NONE,
				  UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_DEREG_MR] = {"DEREG_MR", H, 0, UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_REREG_MR] = {"REREG_MR", S(rereg_mr_req), S(reg_mr_resp),
				    UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CREATE_CQ] = {"CREATE_CQ", S(create_cq_req), S(create_cq_resp),
				     UROCE_SHM_FD_OPTIONAL, UROCE_SHM_FD_REQUIRED},
	[UROCE_SHM_MSG_DESTROY_CQ] = {"DESTROY_CQ", H, 0, UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_RESIZE_CQ] = {"RESIZE_CQ", S(resize_cq_req), S(create_cq_resp),
				     UROCE_SHM_FD_NONE, UROCE_SHM_FD_REQUIRED},
	[UROCE_SHM_MSG_MODIFY_CQ] = {"MODIFY_CQ", S(modify_cq_req), 0, UROCE_SHM_FD_NONE,
				     UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CREATE_QP] = {"CREATE_QP", S(create_qp_req), S(create_qp_resp),
				     UROCE_SHM_FD_NONE, UROCE_SHM_FD_REQUIRED},
	[UROCE_SHM_MSG_DESTROY_QP] = {"DESTROY_QP", H, 0, UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_MODIFY_QP] = {"MODIFY_QP", S(modify_qp_req), 0, UROCE_SHM_FD_NONE,
				     UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_QUERY_QP] = {"QUERY_QP", S(query_qp_req), S(query_qp_resp),
				    UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CREATE_SRQ] = {"CREATE_SRQ", S(create_srq_req), S(create_srq_resp),
				      UROCE_SHM_FD_NONE, UROCE_SHM_FD_REQUIRED},
	[UROCE_SHM_MSG_DESTROY_SRQ] = {"DESTROY_SRQ", H, 0, UROCE_SHM_FD_NONE,
				       UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_MODIFY_SRQ] = {"MODIFY_SRQ", S(modify_srq_req), 0, UROCE_SHM_FD_NONE,
				      UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_QUERY_SRQ] = {"QUERY_SRQ", H, S(query_srq_resp), UROCE_SHM_FD_NONE,
				     UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CREATE_AH] = {"CREATE_AH", S(create_ah_req), H, UROCE_SHM_FD_NONE,
				     UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_DESTROY_AH] = {"DESTROY_AH", H, 0, UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_QUERY_DEVICE] = {"QUERY_DEVICE", 0, S(query_device_resp),
					UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_QUERY_PORT] = {"QUERY_PORT", S(query_port_req), S(query_port_resp),
				      UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_QUERY_GID] = {"QUERY_GID", S(query_gid_req), S(query_gid_resp),
				     UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_ASYNC_EVENT] = {"ASYNC_EVENT", NO_MSG, S(async_event), UROCE_SHM_FD_NONE,
				       UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_LIST_SESSIONS] = {"LIST_SESSIONS", S(list_req), S(list_sessions_resp),
					 UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_LIST_QPS] = {"LIST_QPS", S(list_req), S(list_qps_resp), UROCE_SHM_FD_NONE,
				    UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_QUERY_COUNTERS] = {"QUERY_COUNTERS", S(query_counters_req),
					  S(query_counters_resp), UROCE_SHM_FD_NONE,
					  UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_LIST_WORKERS] = {"LIST_WORKERS", S(list_req), S(list_workers_resp),
					UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_GEN_CREATE] = {"GEN_CREATE", S(gen_create_req), S(gen_create_resp),
				      UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_GEN_QPS] = {"GEN_QPS", S(gen_qps_req), S(gen_qps_resp), UROCE_SHM_FD_NONE,
				   UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_GEN_CONNECT] = {"GEN_CONNECT", S(gen_connect_req), S(gen_connect_resp),
				       UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_GEN_START] = {"GEN_START", S(gen_start_req), 0, UROCE_SHM_FD_NONE,
				     UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_GEN_STATS] = {"GEN_STATS", S(gen_stats_req), S(gen_stats_resp),
				     UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_GEN_DESTROY] = {"GEN_DESTROY", H, 0, UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	/* ABI 1.4: rdma_cm */
	[UROCE_SHM_MSG_CM_CHANNEL_OPEN] = {"CM_CHANNEL_OPEN", S(cm_channel_open_req), H,
					   UROCE_SHM_FD_REQUIRED, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_CHANNEL_CLOSE] = {"CM_CHANNEL_CLOSE", H, 0, UROCE_SHM_FD_NONE,
					    UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_CREATE_ID] = {"CM_CREATE_ID", S(cm_create_id_req), H, UROCE_SHM_FD_NONE,
					UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_DESTROY_ID] = {"CM_DESTROY_ID", H, 0, UROCE_SHM_FD_NONE,
					 UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_MIGRATE_ID] = {"CM_MIGRATE_ID", S(cm_migrate_req), 0, UROCE_SHM_FD_NONE,
					 UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_SET_OPTION] = {"CM_SET_OPTION", S(cm_option_req), 0, UROCE_SHM_FD_NONE,
					 UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_BIND] = {"CM_BIND", S(cm_addr_req), S(cm_route_resp), UROCE_SHM_FD_NONE,
				   UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_RESOLVE_ADDR] = {"CM_RESOLVE_ADDR", S(cm_addr_req), S(cm_route_resp),
					   UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_RESOLVE_ROUTE] = {"CM_RESOLVE_ROUTE", S(cm_addr_req), S(cm_route_resp),
					    UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_LISTEN] = {"CM_LISTEN", S(cm_addr_req), S(cm_route_resp),
				     UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_CONNECT] = {"CM_CONNECT", S(cm_conn_req), 0, UROCE_SHM_FD_NONE,
				      UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_ACCEPT] = {"CM_ACCEPT", S(cm_conn_req), 0, UROCE_SHM_FD_NONE,
				     UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_REJECT] = {"CM_REJECT", S(cm_reject_req), 0, UROCE_SHM_FD_NONE,
				     UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_ESTABLISH] = {"CM_ESTABLISH", H, 0, UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_DISCONNECT] = {"CM_DISCONNECT", H, 0, UROCE_SHM_FD_NONE,
					 UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_NOTIFY] = {"CM_NOTIFY", S(cm_notify_req), 0, UROCE_SHM_FD_NONE,
				     UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_INIT_QP_ATTR] = {"CM_INIT_QP_ATTR", S(cm_qp_attr_req), S(cm_qp_attr_resp),
					   UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_QUERY] = {"CM_QUERY", H, S(cm_route_resp), UROCE_SHM_FD_NONE,
				    UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CM_EVENT] = {"CM_EVENT", NO_MSG, S(cm_event), UROCE_SHM_FD_NONE,
				    UROCE_SHM_FD_NONE},
	/* ABI 1.5 */
	[UROCE_SHM_MSG_GET_STATUS] = {"GET_STATUS", 0, S(get_status_resp), UROCE_SHM_FD_NONE,
				      UROCE_SHM_FD_REQUIRED},
	[UROCE_SHM_MSG_ALLOC_MW] = {"ALLOC_MW", S(alloc_mw_req), S(alloc_mw_resp), UROCE_SHM_FD_NONE,
				    UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_DEALLOC_MW] = {"DEALLOC_MW", H, 0, UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	/* ABI 1.7 */
	[UROCE_SHM_MSG_OPEN_XRCD] = {"OPEN_XRCD", 0, H, UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CLOSE_XRCD] = {"CLOSE_XRCD", H, 0, UROCE_SHM_FD_NONE, UROCE_SHM_FD_NONE},
	[UROCE_SHM_MSG_CREATE_XRC_SRQ] = {"CREATE_XRC_SRQ", S(create_xrc_srq_req),
					  S(create_xrc_srq_resp), UROCE_SHM_FD_NONE,
					  UROCE_SHM_FD_REQUIRED},
};

#undef H
#undef S

static const struct msg_desc *
lookup(uint16_t type)
{
	if (type == 0 || type > UROCE_SHM_MSG_TYPE_MAX || msg_table[type].name == NULL)
		return NULL;
	return &msg_table[type];
}

int
uroce_shm_msg_body_len(uint16_t type, bool from_daemon)
{
	const struct msg_desc *d = lookup(type);
	int len;

	if (d == NULL)
		return -EOPNOTSUPP;
	len = from_daemon ? d->resp_len : d->req_len;
	return len == NO_MSG ? -EBADMSG : len;
}

enum uroce_shm_msg_fd_rule
uroce_shm_msg_fd_rule(uint16_t type, bool from_daemon)
{
	const struct msg_desc *d = lookup(type);

	if (d == NULL)
		return UROCE_SHM_FD_NONE;
	return (enum uroce_shm_msg_fd_rule)(from_daemon ? d->resp_fd : d->req_fd);
}

const char *
uroce_shm_msg_type_name(uint16_t type)
{
	const struct msg_desc *d = lookup(type);

	return d == NULL ? "UNKNOWN" : d->name;
}

int
uroce_shm_msg_init(void *buf, size_t cap, uint16_t type, uint32_t seq, bool from_daemon,
		   int32_t status)
{
	struct uroce_shm_msg_hdr hdr;
	int body = uroce_shm_msg_body_len(type, from_daemon);
	size_t total;

	if (body < 0)
		return body;
	if (!from_daemon && status != 0)
		return -EINVAL;
	total = sizeof(hdr) + (size_t)body;
	if (buf == NULL || cap < total)
		return -ENOSPC;
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = UROCE_SHM_MSG_MAGIC;
	hdr.abi_major = UROCE_SHM_ABI_MAJOR;
	hdr.type = type;
	hdr.length = (uint32_t)total;
	hdr.seq = seq;
	hdr.status = status;
	hdr.flags = from_daemon ? UROCE_SHM_MSG_F_FROM_DAEMON : 0;
	memset(buf, 0, total);
	memcpy(buf, &hdr, sizeof(hdr));
	return (int)total;
}

int
uroce_shm_msg_validate(const void *buf, size_t len, bool from_daemon, bool has_fd)
{
	struct uroce_shm_msg_hdr hdr;
	const struct msg_desc *d;
	enum uroce_shm_msg_fd_rule rule;
	int body;

	if (buf == NULL || len < sizeof(hdr))
		return -EMSGSIZE;
	/* One copy of the header; nothing is re-read from buf afterwards. */
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.magic != UROCE_SHM_MSG_MAGIC)
		return -EPROTO;
	if (hdr.abi_major != UROCE_SHM_ABI_MAJOR)
		return -EPROTONOSUPPORT;
	if ((hdr.flags & ~UROCE_SHM_MSG_F_FROM_DAEMON) != 0 || hdr.reserved != 0)
		return -EPROTO;
	if (((hdr.flags & UROCE_SHM_MSG_F_FROM_DAEMON) != 0) != from_daemon)
		return -EBADMSG;
	d = lookup(hdr.type);
	if (d == NULL)
		return -EOPNOTSUPP;
	body = from_daemon ? d->resp_len : d->req_len;
	if (body == NO_MSG)
		return -EBADMSG;
	if (hdr.length != len || len != sizeof(hdr) + (size_t)body)
		return -EMSGSIZE;
	if (!from_daemon && hdr.status != 0)
		return -EPROTO;
	if (from_daemon && hdr.status > 0)
		return -EPROTO;
	rule = (enum uroce_shm_msg_fd_rule)(from_daemon ? d->resp_fd : d->req_fd);
	/* A failed response never carries a descriptor. */
	if (from_daemon && hdr.status != 0)
		rule = UROCE_SHM_FD_NONE;
	if ((rule == UROCE_SHM_FD_REQUIRED && !has_fd) || (rule == UROCE_SHM_FD_NONE && has_fd))
		return -EBADF;
	return 0;
}

int
uroce_shm_msg_peer_version(const void *buf, size_t len, uint16_t *major, uint16_t *minor)
{
	struct uroce_shm_msg_hdr hdr;
	uint16_t ver[2];

	if (buf == NULL || len < sizeof(hdr))
		return -EMSGSIZE;
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.magic != UROCE_SHM_MSG_MAGIC)
		return -EPROTO;
	*major = hdr.abi_major;
	*minor = 0xffff;
	/* Both HELLO bodies start with {abi_major, abi_minor} in every major. */
	if (hdr.type == UROCE_SHM_MSG_HELLO && len >= sizeof(hdr) + sizeof(ver)) {
		memcpy(ver, (const uint8_t *)buf + sizeof(hdr), sizeof(ver));
		*minor = ver[1];
	}
	return 0;
}
