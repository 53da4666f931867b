/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * Control messages of the connection manager (shm ABI 1.4): what
 * drivers/rdmacm asks the daemon and the events it gets back.
 */

#ifndef UROCE_SHM_CM_H
#define UROCE_SHM_CM_H

#include "uroce_shm_ctrl.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * ---------------------------------------------------------------------------
 * rdma_cm (ABI 1.4)
 *
 * The daemon's connection manager (IB CM on QP1 and the rdma_cm layer above
 * it, doc/rdmacm.md) for drivers/rdmacm. A client opens event channels
 * (CM_CHANNEL_OPEN passes one end of a SOCK_SEQPACKET socketpair; the daemon
 * writes CM_EVENT messages into it), creates ids on a channel, and drives
 * them with the requests below; each returns at once, and what follows on
 * the wire comes back as CM_EVENTs (rdma_cm's event numbers). Ids and
 * channels are the session's: another session's handle is -EPERM, a
 * destroyed one -ENOENT; a session that goes away takes its ids down (REJ or
 * DREQ to the peers) and its channels. Sessions below 1.4 get -EOPNOTSUPP.
 * Addresses are GIDs (IPv4 as ::ffff:a.b.c.d), ports host order.
 * ---------------------------------------------------------------------------
 */

/** Most event channels of one session, and ids of one session. */
#define UROCE_SHM_CM_MAX_CHANNELS 64u
#define UROCE_SHM_CM_MAX_IDS 4096u
/** Events a channel may hold unread in the daemon beyond its socket's buffer;
 * more and the channel fails (shut down: its reader sees end of file). */
#define UROCE_SHM_CM_CHANNEL_BACKLOG 1024u

/** An IP endpoint. */
struct uroce_shm_cm_addr {
	uint8_t family;     /**< 4 or 6; 0: none */
	uint8_t reserved;
	uint16_t port;      /**< host order */
	uint8_t ip[16];     /**< IPv4 as ::ffff:a.b.c.d */
};
UROCE_SHM_SIZE(struct uroce_shm_cm_addr, 20);

/** An id's addresses and path (librdmacm's id->route). */
struct uroce_shm_cm_route {
	struct uroce_shm_cm_addr src;
	struct uroce_shm_cm_addr dst;
	uint8_t sgid[16];
	uint8_t dgid[16];
	uint8_t flags;      /**< UROCE_SHM_CM_ROUTE_F_* */
	uint8_t sgid_index;
	uint16_t pkey;
	uint8_t mtu;        /**< enum uroce_mtu */
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t packet_life_time;
	uint32_t flow_label;
	uint8_t sl;
	uint8_t rate;
	uint16_t reserved;
};
UROCE_SHM_OFF(struct uroce_shm_cm_route, sgid, 40);
UROCE_SHM_OFF(struct uroce_shm_cm_route, flow_label, 80);
UROCE_SHM_SIZE(struct uroce_shm_cm_route, 88);

#define UROCE_SHM_CM_ROUTE_F_BOUND (1u << 0)    /**< src is set */
#define UROCE_SHM_CM_ROUTE_F_RESOLVED (1u << 1) /**< dst, sgid, dgid are set */
#define UROCE_SHM_CM_ROUTE_F_PATH (1u << 2)     /**< the path fields are set */

/** Private data bytes a CM message of the ABI carries at most (a REP's). */
#define UROCE_SHM_CM_PDATA_MAX 196u

/** Connection parameters (rdma_conn_param; for UD only qp_num and private data). */
struct uroce_shm_cm_conn_param {
	uint32_t qp_num;
	uint8_t srq;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t private_data_len;
	uint8_t reserved;
	uint8_t private_data[UROCE_SHM_CM_PDATA_MAX];
};
UROCE_SHM_OFF(struct uroce_shm_cm_conn_param, private_data, 12);
UROCE_SHM_SIZE(struct uroce_shm_cm_conn_param, 208);

/** CM_CHANNEL_OPEN request: its descriptor is the daemon's end of the channel. */
struct uroce_shm_msg_cm_channel_open_req {
	uint32_t flags;     /**< 0 */
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_channel_open_req, 8);

/** CM_CREATE_ID request (the response is a handle body: the id). */
struct uroce_shm_msg_cm_create_id_req {
	uint32_t channel;
	uint16_t ps;        /**< RDMA_PS_TCP, _UDP or _IB */
	uint8_t qp_type;    /**< IBV_QPT_RC, _UC or _UD */
	uint8_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_create_id_req, 8);

/** CM_MIGRATE_ID request: the id's events go to another channel of the session. */
struct uroce_shm_msg_cm_migrate_req {
	uint32_t id;
	uint32_t channel;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_migrate_req, 8);

/** CM_SET_OPTION request (RDMA_OPTION_ID level: TOS 0, REUSEADDR 1, AFONLY 2, ACK_TIMEOUT 3). */
struct uroce_shm_msg_cm_option_req {
	uint32_t id;
	uint32_t option;
	uint32_t value;
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_option_req, 16);

/** CM_BIND, CM_RESOLVE_ADDR, CM_RESOLVE_ROUTE and CM_LISTEN request. */
struct uroce_shm_msg_cm_addr_req {
	uint32_t id;
	uint32_t arg;       /**< RESOLVE_ADDR: the ms the next hop's resolution may take;
				 RESOLVE_ROUTE: unused (no SA); LISTEN: the backlog;
				 BIND: 0 */
	struct uroce_shm_cm_addr src; /**< BIND: the address; RESOLVE_ADDR: the source or
					   family 0 */
	struct uroce_shm_cm_addr dst; /**< RESOLVE_ADDR: the destination */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_addr_req, 48);

/** The response of CM_BIND, CM_RESOLVE_*, CM_LISTEN and CM_QUERY: the id's route. */
struct uroce_shm_msg_cm_route_resp {
	struct uroce_shm_cm_route route;
	uint64_t node_guid; /**< the device's (which librdmacm matches ids to devices by) */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_route_resp, 96);

/** CM_CONNECT and CM_ACCEPT request. */
struct uroce_shm_msg_cm_conn_req {
	uint32_t id;
	uint32_t reserved;
	struct uroce_shm_cm_conn_param param;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_conn_req, 216);

/** CM_REJECT request. */
struct uroce_shm_msg_cm_reject_req {
	uint32_t id;
	uint16_t reason;    /**< REJ reason; 0: Consumer Defined (28) */
	uint8_t private_data_len;
	uint8_t reserved;
	uint8_t private_data[UROCE_SHM_CM_PDATA_MAX];
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_reject_req, 8 + 196);

/** CM_NOTIFY request. */
struct uroce_shm_msg_cm_notify_req {
	uint32_t id;
	uint32_t event;     /**< ibv_event_type: 4 (communication established) acts */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_notify_req, 8);

/** CM_INIT_QP_ATTR request. */
struct uroce_shm_msg_cm_qp_attr_req {
	uint32_t id;
	uint32_t qp_state;  /**< enum uroce_qp_state: INIT, RTR or RTS */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_qp_attr_req, 8);

/** CM_INIT_QP_ATTR response: rdma_init_qp_attr()'s attributes and mask. */
struct uroce_shm_msg_cm_qp_attr_resp {
	uint32_t mask;      /**< enum uroce_qp_attr_mask (ibv_qp_attr_mask values) */
	uint32_t qp_state;
	uint32_t qp_access_flags;
	uint32_t qkey;
	uint32_t dest_qp_num;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t flow_label;
	uint8_t dgid[16];
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t path_mtu;
	uint8_t max_dest_rd_atomic;
	uint8_t max_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t sl;
	uint8_t reserved[2];
};
UROCE_SHM_OFF(struct uroce_shm_msg_cm_qp_attr_resp, dgid, 32);
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_qp_attr_resp, 64);

/** Flags of a CM_EVENT. */
#define UROCE_SHM_CM_EV_F_UD (1u << 0)        /**< param is rdma_ud_param, not conn */
#define UROCE_SHM_CM_EV_F_AH (1u << 1)        /**< ud: the address vector is valid */

/**
 * CM_EVENT (daemon to client, on the id's channel, seq 0): one rdma_cm event
 * with everything librdmacm reports with it. For CONNECT_REQUEST, id is a new
 * id of the session on the listener's channel and listen_id the listener.
 */
struct uroce_shm_msg_cm_event {
	uint32_t id;
	uint32_t listen_id;   /**< CONNECT_REQUEST, else UROCE_SHM_HANDLE_NONE */
	int32_t event;        /**< enum rdma_cm_event_type */
	int32_t status;       /**< 0, a REJ reason or SIDR status, or -errno */
	uint32_t flags;       /**< UROCE_SHM_CM_EV_F_* */
	uint32_t qkey;        /**< ud */
	uint8_t ah_dgid[16];  /**< ud, with F_AH */
	uint32_t ah_flow_label;
	uint8_t ah_sgid_index;
	uint8_t ah_hop_limit;
	uint8_t ah_traffic_class;
	uint8_t reserved;
	struct uroce_shm_cm_route route; /**< the id's, as of this event */
	struct uroce_shm_cm_conn_param param;
};
UROCE_SHM_OFF(struct uroce_shm_msg_cm_event, ah_dgid, 24);
UROCE_SHM_OFF(struct uroce_shm_msg_cm_event, route, 48);
UROCE_SHM_OFF(struct uroce_shm_msg_cm_event, param, 136);
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_event, 344);

UROCE_SHM_STATIC_ASSERT(sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_cm_event) <= UROCE_SHM_MSG_MAX &&
			sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_cm_conn_req) <= UROCE_SHM_MSG_MAX,
			"rdma_cm messages fit one message");


#ifdef __cplusplus
}
#endif

#endif /* UROCE_SHM_CM_H */
