/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The rdma_cm layer over the IB CM of uroce_cm.h, without sockets: ids
 * with IP addresses and ports in port spaces (TCP, UDP, IB), binding,
 * address and route resolution on the port's own GID table, listeners on
 * an address or on any address, the CMA private-data header that carries
 * the IP addresses in a REQ or SIDR_REQ (Linux's struct cma_hdr), service
 * IDs, and the translation of CM events into rdma_cm events with
 * librdmacm's numbers, exactly as the kernel's rdma_cm produces them for
 * librdmacm (doc/rdmacm.md).
 *
 * The daemon puts one of these on its port and maps its control messages
 * onto it; Criterion tests drive two of them over a fake wire. One thread
 * drives it; nothing takes a lock. Functions return 0 or -errno.
 */

#ifndef UROCE_CMA_H
#define UROCE_CMA_H

#include <stdbool.h>
#include <stdint.h>

#include "uroce_cm.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Port spaces (librdmacm's enum rdma_port_space). */
enum uroce_cma_ps {
	UROCE_CMA_PS_IPOIB = 0x0002,
	UROCE_CMA_PS_IB = 0x013F,
	UROCE_CMA_PS_TCP = 0x0106,
	UROCE_CMA_PS_UDP = 0x0111,
};

/** The Q_Key of rdma_cm's UD QPs (RDMA_UDP_QKEY). */
#define UROCE_CMA_UDP_QKEY 0x01234567u

/** rdma_cm's event numbers (librdmacm's enum rdma_cm_event_type). */
enum uroce_cma_event_type {
	UROCE_CMA_EV_ADDR_RESOLVED = 0,
	UROCE_CMA_EV_ADDR_ERROR = 1,
	UROCE_CMA_EV_ROUTE_RESOLVED = 2,
	UROCE_CMA_EV_ROUTE_ERROR = 3,
	UROCE_CMA_EV_CONNECT_REQUEST = 4,
	UROCE_CMA_EV_CONNECT_RESPONSE = 5,
	UROCE_CMA_EV_CONNECT_ERROR = 6,
	UROCE_CMA_EV_UNREACHABLE = 7,
	UROCE_CMA_EV_REJECTED = 8,
	UROCE_CMA_EV_ESTABLISHED = 9,
	UROCE_CMA_EV_DISCONNECTED = 10,
	UROCE_CMA_EV_DEVICE_REMOVAL = 11,
	UROCE_CMA_EV_MULTICAST_JOIN = 12,
	UROCE_CMA_EV_MULTICAST_ERROR = 13,
	UROCE_CMA_EV_ADDR_CHANGE = 14,
	UROCE_CMA_EV_TIMEWAIT_EXIT = 15,
};

/** Name of an event ("RDMA_CM_EVENT_ESTABLISHED"), as rdma_event_str() spells it. */
const char *uroce_cma_event_str(int type);

/* ------------------------------------------------------------------------ */
/* The CMA private-data header and service IDs                               */
/* ------------------------------------------------------------------------ */

/** Bytes of the header at the start of a REQ's or SIDR_REQ's private data. */
#define UROCE_CMA_HDR_LEN 36
/** Private data an rdma_cm user may put in a REQ (92 - 36) and in a SIDR_REQ. */
#define UROCE_CMA_REQ_PDATA (UROCE_CM_REQ_PDATA - UROCE_CMA_HDR_LEN)
#define UROCE_CMA_SIDR_PDATA (UROCE_CM_SIDR_REQ_PDATA - UROCE_CMA_HDR_LEN)

/** An IP endpoint. The address is kept as a GID: IPv4 as ::ffff:a.b.c.d. */
struct uroce_cma_addr {
	uint8_t family;     /**< 4 or 6 (0: none) */
	uint16_t port;      /**< host order; 0: any (bind picks one) */
	uint8_t ip[16];     /**< ::ffff:0.0.0.0 or :: is "any" */
};

/** The CMA header, decoded. */
struct uroce_cma_hdr {
	uint8_t version;    /**< 0 */
	uint8_t ip_version; /**< 4 or 6 */
	uint16_t src_port;  /**< the active side's port */
	uint8_t src_ip[16]; /**< as GIDs (IPv4 mapped) */
	uint8_t dst_ip[16];
};

/**
 * Decode the header at the start of @p pd. IPv4 addresses travel as 12
 * zero bytes and the address (not IPv4-mapped); they come back mapped.
 * @return 0; -EMSGSIZE (shorter than UROCE_CMA_HDR_LEN), -EPROTONOSUPPORT
 *   (version not 0), -EAFNOSUPPORT (IP version not 4 or 6).
 */
int uroce_cma_hdr_decode(const uint8_t *pd, uint32_t len, struct uroce_cma_hdr *h);

/** Encode @p h into the UROCE_CMA_HDR_LEN bytes at @p pd. @return 0 or -EINVAL. */
int uroce_cma_hdr_encode(uint8_t *pd, const struct uroce_cma_hdr *h);

/** The IP CM service ID of (port space, port): 0x0000000001PPpppp style. */
static inline uint64_t
uroce_cma_service_id(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << 16 | port;
}

/* ------------------------------------------------------------------------ */
/* The layer                                                                 */
/* ------------------------------------------------------------------------ */

struct uroce_cma;
struct uroce_cma_id;

/** Connection parameters of an event or a call (rdma_conn_param). */
struct uroce_cma_conn_param {
	const uint8_t *private_data;
	uint8_t private_data_len;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;        /**< 7 at most (larger values are lowered) */
	uint8_t rnr_retry_count;    /**< 7 at most (larger values are lowered) */
	uint8_t srq;
	uint32_t qp_num;
};

/** The address vector an active UD side gets with ESTABLISHED (rdma_ud_param). */
struct uroce_cma_ud_param {
	const uint8_t *private_data;
	uint8_t private_data_len;
	uint32_t qp_num;
	uint32_t qkey;
	bool ah_valid;              /**< false on the passive side, as on Linux */
	uint8_t dgid[16];
	uint8_t sgid_index;
	uint32_t flow_label;
	uint8_t hop_limit;
	uint8_t traffic_class;
};

/** An event. */
struct uroce_cma_event {
	int type;                   /**< enum uroce_cma_event_type */
	int status;                 /**< 0, a REJ reason, a SIDR status or -errno */
	struct uroce_cma_id *id;    /**< for CONNECT_REQUEST: the new id */
	struct uroce_cma_id *listen_id; /**< CONNECT_REQUEST: the listener */
	bool ud;                    /**< param.ud is meant, not param.conn */
	struct uroce_cma_conn_param conn;
	struct uroce_cma_ud_param ud_param;
};

/** Everything an id knows of its addresses and path (librdmacm's id->route). */
struct uroce_cma_route {
	struct uroce_cma_addr src;
	struct uroce_cma_addr dst;
	bool bound;                 /**< src is set */
	bool resolved;              /**< dst and the GIDs are set */
	bool has_path;              /**< the path fields below are set */
	uint8_t sgid[16];
	uint8_t dgid[16];
	uint8_t sgid_index;
	uint16_t pkey;
	uint8_t mtu;                /**< enum uroce_mtu */
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;
	uint8_t packet_life_time;
	uint8_t sl;
	uint8_t rate;
};

/** How the layer reaches the outside world. Called on its thread. */
struct uroce_cma_ops {
	uint64_t (*now_us)(void *ctx);
	/** Send one MAD from QP1 (uroce_cm_ops.send). */
	int (*send)(void *ctx, const struct uroce_cm_addr *to, const uint8_t *mad);
	/**
	 * An event for an id. For CONNECT_REQUEST the id is new and ownerless:
	 * return 0 to take it (set its owner), anything else to have the
	 * request refused (REJ Consumer Defined, SIDR_REP Reject) and the id
	 * freed. Other return values are ignored. The callback may call every
	 * function of this API on any id except uroce_cma_destroy().
	 */
	int (*event)(void *ctx, struct uroce_cma_id *id, const struct uroce_cma_event *ev);
	/**
	 * Optional: the next hop of @p gid (the port's neighbour table):
	 * 0 known, -EAGAIN being resolved (the call starts it), -EHOSTUNREACH
	 * the last resolution failed (the call starts over), another negative
	 * errno: cannot be resolved. NULL: every destination is reachable.
	 */
	int (*resolve)(void *ctx, const uint8_t gid[16]);
};

/** Configuration. */
struct uroce_cma_conf {
	const struct uroce_cma_ops *ops;
	void *ctx;
	uint64_t ca_guid;
	uint32_t seed;              /**< comm IDs, PSNs and ephemeral ports start from it */
	unsigned int n_gid;
	uint8_t gids[16][16];       /**< the port's GID table (zero: empty slot) */
	uint8_t active_mtu;         /**< enum uroce_mtu; 0: 1024 */
	/** The paths' packet life time exponent; 0: 16 (Linux from 6.2 on RoCE). */
	uint8_t packet_life_time;
	/** CM response timeout of the REQs and SIDR_REQs sent; 0: 20 (rdma_cm's). */
	uint8_t cm_response_timeout;
	/** CM retries of the REQs, REPs, DREQs and SIDR_REQs sent; 0: 15 (rdma_cm's). */
	uint8_t max_cm_retries;
};

/** Create the layer and its CM. @return NULL with errno EINVAL or ENOMEM. */
struct uroce_cma *uroce_cma_create(const struct uroce_cma_conf *conf);
/** Destroy it and every id (nothing is sent). NULL is a no-op. */
void uroce_cma_destroy(struct uroce_cma *cma);
/** Its CM (counters, uroce_cm_rx() is uroce_cma_rx()). */
struct uroce_cm *uroce_cma_cm(struct uroce_cma *cma);
/** A CM MAD from QP1. */
void uroce_cma_rx(struct uroce_cma *cma, const struct uroce_cm_addr *from, const uint8_t *mad,
		  uint32_t len);
/** Run due timers. @return how many fired. */
unsigned int uroce_cma_poll(struct uroce_cma *cma);
/** The earliest timer in µs, or UINT64_MAX. */
uint64_t uroce_cma_next_deadline(const struct uroce_cma *cma);
/** Ids alive (children included). */
unsigned int uroce_cma_id_count(const struct uroce_cma *cma);

/**
 * A new id in @p ps (TCP, UDP or IB; IPoIB is refused) for QPs of
 * @p qp_type (RC, UC or UD; TCP needs RC or UC, UDP needs UD).
 * @return the id, or NULL with errno EINVAL, EPROTONOSUPPORT, ENOMEM.
 */
struct uroce_cma_id *uroce_cma_id_create(struct uroce_cma *cma, void *owner, uint16_t ps,
					 enum uroce_qp_type qp_type);

/**
 * Destroy an id: its connection is left as uroce_cm_id_destroy() says (a
 * REJ, a DREQ, time wait), its port is free again; a listener's pending
 * requests stay with their own ids.
 */
void uroce_cma_id_destroy(struct uroce_cma_id *id);

void *uroce_cma_id_owner(const struct uroce_cma_id *id);
void uroce_cma_id_set_owner(struct uroce_cma_id *id, void *owner);
uint16_t uroce_cma_id_ps(const struct uroce_cma_id *id);
enum uroce_qp_type uroce_cma_id_qp_type(const struct uroce_cma_id *id);
/** The CM id of its connection, or NULL. */
const struct uroce_cm_id *uroce_cma_id_cm(const struct uroce_cma_id *id);

/** Options (rdma_set_option, RDMA_OPTION_ID level). */
enum uroce_cma_option {
	UROCE_CMA_OPT_TOS = 0,          /**< u8: the IP ToS (REQ traffic class) */
	UROCE_CMA_OPT_REUSEADDR = 1,    /**< int: share a port with ids not listening */
	UROCE_CMA_OPT_AFONLY = 2,       /**< int: an IPv6 listener takes no IPv4 requests */
	UROCE_CMA_OPT_ACK_TIMEOUT = 3,  /**< u8: the QP's local ACK timeout (1..31) */
};

/** Set an option. @return 0, -EINVAL (value out of range, or too late: bound). */
int uroce_cma_set_option(struct uroce_cma_id *id, int option, uint32_t value);

/**
 * Bind to a local address: one of the port's own (or any), and a port
 * (0: an ephemeral one, 32768..60999, free in the id's port space).
 * @return 0; -EINVAL (bound already, bad family), -EADDRNOTAVAIL (not an
 *   address of this port), -EADDRINUSE (port taken), -EAGAIN (no free
 *   ephemeral port).
 */
int uroce_cma_bind(struct uroce_cma_id *id, const struct uroce_cma_addr *a);

/**
 * Resolve @p dst to a GID and pick the source: @p src if given (bound to
 * it), else the address the id is bound to, else the port's address of
 * @p dst's family (the very address if @p dst is one of ours: loopback).
 * ADDR_RESOLVED follows as an event once the port knows the next hop's MAC
 * (ops.resolve), as Linux's waits for ARP; ADDR_ERROR if it cannot be had,
 * with -EHOSTUNREACH, or -ETIMEDOUT after @p timeout_ms (0: at once).
 * @return 0; -EINVAL (bad or multicast destination, wrong state),
 *   -EADDRNOTAVAIL (no address of that family on this port), and the
 *   errors of uroce_cma_bind().
 */
int uroce_cma_resolve_addr(struct uroce_cma_id *id, const struct uroce_cma_addr *src,
			   const struct uroce_cma_addr *dst, uint32_t timeout_ms);

/**
 * Build the path (no SA on RoCE: the port's MTU, hop limit 64, the ToS,
 * the packet life time); ROUTE_RESOLVED follows as an event.
 * @return 0, -EINVAL (address not resolved).
 */
int uroce_cma_resolve_route(struct uroce_cma_id *id);

/**
 * Listen (binding to any address, ephemeral port, if unbound): REQs and
 * SIDR_REQs for its port, and its address or any, become CONNECT_REQUEST
 * events with new ids; at most @p backlog may wait for an answer (<= 0:
 * 1024), more are refused.
 * @return 0, -EINVAL (wrong state), -EADDRINUSE (port taken), -EAGAIN.
 */
int uroce_cma_listen(struct uroce_cma_id *id, int backlog);

/**
 * Connect (route resolved): a REQ (RC, UC) or a SIDR_REQ (UD) with the CMA
 * header and the user's private data (at most UROCE_CMA_REQ_PDATA,
 * UROCE_CMA_SIDR_PDATA bytes).
 * @return 0; -EINVAL (wrong state, private data too long), or the CM's.
 */
int uroce_cma_connect(struct uroce_cma_id *id, const struct uroce_cma_conn_param *p);

/**
 * Accept a CONNECT_REQUEST: a REP with @p p (private data at most 196
 * bytes), or a SIDR_REP with p->qp_num and UROCE_CMA_UDP_QKEY (136).
 * @return 0, -EINVAL (not a request waiting, too much private data).
 */
int uroce_cma_accept(struct uroce_cma_id *id, const struct uroce_cma_conn_param *p);

/**
 * Refuse a CONNECT_REQUEST (REJ with @p reason, 0 meaning Consumer Defined;
 * SIDR_REP Reject), or a CONNECT_RESPONSE (REJ of the REP).
 * @return 0, -EINVAL.
 */
int uroce_cma_reject(struct uroce_cma_id *id, const uint8_t *pd, uint8_t len, uint16_t reason);

/**
 * The active side's QP is in RTS after CONNECT_RESPONSE: send the RTU.
 * @return 0, -EINVAL.
 */
int uroce_cma_establish(struct uroce_cma_id *id);

/**
 * Disconnect: a DREQ, or the DREP owed for a DREQ received. DISCONNECTED
 * follows when the DREP comes (or the DREQ times out).
 * @return 0, -EINVAL (not connected).
 */
int uroce_cma_disconnect(struct uroce_cma_id *id);

/**
 * An event the QP saw (rdma_notify): 4 (communication established) moves
 * a passive connection waiting for its RTU to ESTABLISHED.
 * @return 0, -EINVAL.
 */
int uroce_cma_notify(struct uroce_cma_id *id, int ibv_event);

/**
 * The attributes a QP of this id needs for @p state (rdma_init_qp_attr):
 * INIT before a connection (P_Key index, port, no remote access; the Q_Key
 * for UD), else uroce_cm_qp_attr() with this id's receive PSN and
 * ACK_TIMEOUT option, the GID index filled in.
 * @return 0, -EINVAL, -EAGAIN (not that far yet).
 */
int uroce_cma_init_qp_attr(struct uroce_cma_id *id, enum uroce_qp_state state,
			   struct uroce_cm_qp_attr *a, int *mask);

/** Addresses and path of @p id. @return 0, -EINVAL. */
int uroce_cma_query(const struct uroce_cma_id *id, struct uroce_cma_route *r);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_CMA_H */
