/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * InfiniBand connection management (IBA chapter 12) for RoCEv2, without
 * DPDK and without sockets:
 *
 *  - the MAD header (IBA 13.4.3) and the codecs of every CM message (REQ,
 *    MRA, REJ, REP, RTU, DREQ, DREP, SIDR_REQ, SIDR_REP, LAP, APR; IBA
 *    12.6), each field read and written through explicit masks, nothing
 *    read outside the 256 bytes of a MAD;
 *  - the communication manager: the connection state machine of the active
 *    and of the passive side (IBA 12.9), its timers, retries, MRAs,
 *    duplicate detection, stale connections, time wait and SIDR, driven by
 *    uroce_cm_rx(), uroce_cm_poll() and calls of the consumer, talking
 *    through an ops table (a clock, a MAD sender, an event callback), so
 *    that it runs under Criterion with a fake clock;
 *  - the derivation of a connected QP's attributes (PSNs, MTU, read/atomic
 *    resources, retry and RNR counts, ACK timeout) from the REQ and REP, as
 *    Linux's CM derives them (doc/rdmacm.md).
 *
 * The rdma_cm layer above it (IP addressing, port spaces, listeners) is in
 * uroce_cma.h. Functions return 0 or -errno; constructors return NULL and
 * set errno. One thread drives a CM; nothing takes a lock.
 */

#ifndef UROCE_CM_H
#define UROCE_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uroce_verbs_defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* MADs (IBA 13.4)                                                           */
/* ------------------------------------------------------------------------ */

#define UROCE_MAD_LEN 256          /**< a GSI MAD is exactly this long (IBA 13.4.2) */
#define UROCE_MAD_HDR_LEN 24
#define UROCE_MAD_DATA_LEN (UROCE_MAD_LEN - UROCE_MAD_HDR_LEN)
#define UROCE_MAD_BASE_VERSION 1
#define UROCE_MGMT_CLASS_CM 0x07
#define UROCE_CM_CLASS_VERSION 2
#define UROCE_GSI_QPN 1
/** Q_Key of QP1 (IBA 10.2.5: the GSI's well-known Q_Key). */
#define UROCE_CM_GSI_QKEY 0x80010000u

/** MAD methods (IBA 13.4.5, table 104). */
enum uroce_mad_method {
	UROCE_MAD_METHOD_GET = 0x01,
	UROCE_MAD_METHOD_SET = 0x02,
	UROCE_MAD_METHOD_SEND = 0x03,
	UROCE_MAD_METHOD_TRAP = 0x05,
	UROCE_MAD_METHOD_REPORT = 0x06,
	UROCE_MAD_METHOD_TRAP_REPRESS = 0x07,
	UROCE_MAD_METHOD_GET_RESP = 0x81,
	UROCE_MAD_METHOD_REPORT_RESP = 0x86,
};

/** MAD status: "the method/attribute combination is not supported" (IBA 13.4.7). */
#define UROCE_MAD_STATUS_UNSUPPORTED_METHOD_ATTR 0x000C

/** The common MAD header, decoded (IBA 13.4.3, table 102). */
struct uroce_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;            /**< transaction ID: opaque, echoed in replies */
	uint16_t attr_id;
	uint32_t attr_mod;
};

/** Decode the header of the MAD at @p mad (at least UROCE_MAD_HDR_LEN bytes). */
void uroce_mad_hdr_decode(const uint8_t *mad, struct uroce_mad_hdr *h);
/** Encode @p h at @p mad; the two reserved bytes are zeroed. */
void uroce_mad_hdr_encode(uint8_t *mad, const struct uroce_mad_hdr *h);

/* ------------------------------------------------------------------------ */
/* CM messages (IBA 12.6)                                                    */
/* ------------------------------------------------------------------------ */

/** CM attribute IDs (IBA 12.6, table 98). */
enum uroce_cm_attr {
	UROCE_CM_ATTR_CLASS_PORT_INFO = 0x0001,
	UROCE_CM_ATTR_REQ = 0x0010,
	UROCE_CM_ATTR_MRA = 0x0011,
	UROCE_CM_ATTR_REJ = 0x0012,
	UROCE_CM_ATTR_REP = 0x0013,
	UROCE_CM_ATTR_RTU = 0x0014,
	UROCE_CM_ATTR_DREQ = 0x0015,
	UROCE_CM_ATTR_DREP = 0x0016,
	UROCE_CM_ATTR_SIDR_REQ = 0x0017,
	UROCE_CM_ATTR_SIDR_REP = 0x0018,
	UROCE_CM_ATTR_LAP = 0x0019,
	UROCE_CM_ATTR_APR = 0x001A,
};

/** Name of a CM attribute ("REQ", ...), "?" if unknown. */
const char *uroce_cm_attr_name(uint16_t attr_id);

/* Private data bytes of each message (IBA 12.6). */
#define UROCE_CM_REQ_PDATA 92
#define UROCE_CM_MRA_PDATA 222
#define UROCE_CM_REJ_PDATA 148
#define UROCE_CM_REP_PDATA 196
#define UROCE_CM_RTU_PDATA 224
#define UROCE_CM_DREQ_PDATA 220
#define UROCE_CM_DREP_PDATA 224
#define UROCE_CM_SIDR_REQ_PDATA 216
#define UROCE_CM_SIDR_REP_PDATA 136
#define UROCE_CM_LAP_PDATA 168
#define UROCE_CM_APR_PDATA 148
#define UROCE_CM_ARI_LEN 72         /**< REJ additional reject information */
#define UROCE_CM_INFO_LEN 72        /**< SIDR_REP, APR additional information */

/** Transport service of a REQ (IBA 12.6.5, table 99). */
enum uroce_cm_transport {
	UROCE_CM_TRANSPORT_RC = 0,
	UROCE_CM_TRANSPORT_UC = 1,
	UROCE_CM_TRANSPORT_RD = 2,
	UROCE_CM_TRANSPORT_XRC = 3,
};

/** What an MRA or REJ refers to (IBA 12.6.6, 12.6.7). */
enum uroce_cm_msg_ref {
	UROCE_CM_REF_REQ = 0,
	UROCE_CM_REF_REP = 1,
	UROCE_CM_REF_OTHER = 2,     /**< MRA: a LAP; REJ: other (3 is reserved) */
};

/** REJ reasons (IBA 12.6.7.2, table 103); the values are the wire's. */
enum uroce_cm_rej_reason {
	UROCE_CM_REJ_NO_QP = 1,
	UROCE_CM_REJ_NO_EEC = 2,
	UROCE_CM_REJ_NO_RESOURCES = 3,
	UROCE_CM_REJ_TIMEOUT = 4,
	UROCE_CM_REJ_UNSUPPORTED = 5,
	UROCE_CM_REJ_INVALID_COMM_ID = 6,
	UROCE_CM_REJ_INVALID_COMM_INSTANCE = 7,
	UROCE_CM_REJ_INVALID_SERVICE_ID = 8,
	UROCE_CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	UROCE_CM_REJ_STALE_CONN = 10,
	UROCE_CM_REJ_RDC_NOT_EXIST = 11,
	UROCE_CM_REJ_INVALID_GID = 12,
	UROCE_CM_REJ_INVALID_LID = 13,
	UROCE_CM_REJ_INVALID_SL = 14,
	UROCE_CM_REJ_INVALID_TRAFFIC_CLASS = 15,
	UROCE_CM_REJ_INVALID_HOP_LIMIT = 16,
	UROCE_CM_REJ_INVALID_PACKET_RATE = 17,
	UROCE_CM_REJ_INVALID_ALT_GID = 18,
	UROCE_CM_REJ_PORT_CM_REDIRECT = 24,
	UROCE_CM_REJ_PORT_REDIRECT = 25,
	UROCE_CM_REJ_INVALID_MTU = 26,
	UROCE_CM_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	UROCE_CM_REJ_CONSUMER_DEFINED = 28,
	UROCE_CM_REJ_INVALID_RNR_RETRY = 29,
	UROCE_CM_REJ_DUPLICATE_LOCAL_COMM_ID = 30,
	UROCE_CM_REJ_INVALID_CLASS_VERSION = 31,
	UROCE_CM_REJ_INVALID_FLOW_LABEL = 32,
	UROCE_CM_REJ_INVALID_ALT_FLOW_LABEL = 33,
	UROCE_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED = 35,
};

/** Short description of a REJ reason ("invalid service ID"), "unknown" if none. */
const char *uroce_cm_rej_reason_str(uint16_t reason);

/** SIDR_REP status (IBA 12.11.2, table 120). */
enum uroce_cm_sidr_status {
	UROCE_CM_SIDR_SUCCESS = 0,
	UROCE_CM_SIDR_UNSUPPORTED = 1,  /**< service ID not supported (no listener) */
	UROCE_CM_SIDR_REJECT = 2,
	UROCE_CM_SIDR_NO_QP = 3,
	UROCE_CM_SIDR_REDIRECT = 4,
	UROCE_CM_SIDR_UNSUPPORTED_VERSION = 5,
};

/** APR status "unsupported" (IBA 12.8.2): a LAP refused (no alternate paths). */
#define UROCE_CM_APR_UNSUPPORTED 2

/** One path of a REQ (primary or alternate) or of a LAP. */
struct uroce_cm_path {
	uint16_t local_lid;
	uint16_t remote_lid;
	uint8_t local_gid[16];
	uint8_t remote_gid[16];
	uint32_t flow_label;        /**< 20 bits */
	uint8_t packet_rate;        /**< 6 bits */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;                 /**< 4 bits */
	bool subnet_local;
	uint8_t local_ack_timeout;  /**< 5 bits */
};

/** REQ (IBA 12.6.5, table 99). */
struct uroce_cm_req {
	uint32_t local_comm_id;
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn;                 /**< 24 bits */
	uint8_t responder_resources;
	uint32_t local_eecn;                /**< 24 bits */
	uint8_t initiator_depth;
	uint32_t remote_eecn;               /**< 24 bits */
	uint8_t remote_cm_response_timeout; /**< 5 bits */
	uint8_t transport;                  /**< 2 bits, enum uroce_cm_transport */
	bool e2e_flow_control;
	uint32_t starting_psn;              /**< 24 bits: the PSN the active side expects */
	uint8_t local_cm_response_timeout;  /**< 5 bits */
	uint8_t retry_count;                /**< 3 bits */
	uint16_t pkey;
	uint8_t path_mtu;                   /**< 4 bits, enum uroce_mtu */
	bool rdc_exists;
	uint8_t rnr_retry_count;            /**< 3 bits */
	uint8_t max_cm_retries;             /**< 4 bits */
	bool srq;
	uint8_t ext_transport;              /**< 3 bits */
	struct uroce_cm_path primary;
	struct uroce_cm_path alternate;     /**< all zero: none */
	bool sap_supported;
	uint8_t private_data[UROCE_CM_REQ_PDATA];
};

/** MRA (IBA 12.6.6, table 100). */
struct uroce_cm_mra {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_mraed;                  /**< enum uroce_cm_msg_ref */
	uint8_t service_timeout;            /**< 5 bits */
	uint8_t private_data[UROCE_CM_MRA_PDATA];
};

/** REJ (IBA 12.6.7, table 101). */
struct uroce_cm_rej {
	uint32_t local_comm_id;             /**< 0 when the rejecter kept no state */
	uint32_t remote_comm_id;
	uint8_t msg_rejected;               /**< enum uroce_cm_msg_ref */
	uint8_t ari_length;                 /**< 7 bits, at most UROCE_CM_ARI_LEN */
	uint16_t reason;                    /**< enum uroce_cm_rej_reason */
	uint8_t ari[UROCE_CM_ARI_LEN];
	uint8_t private_data[UROCE_CM_REJ_PDATA];
};

/** REP (IBA 12.6.8, table 104). */
struct uroce_cm_rep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn;                 /**< 24 bits */
	uint32_t local_eecn;                /**< 24 bits */
	uint32_t starting_psn;              /**< 24 bits: the PSN the passive side expects */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;           /**< 5 bits */
	uint8_t failover_accepted;          /**< 2 bits */
	bool e2e_flow_control;
	uint8_t rnr_retry_count;            /**< 3 bits */
	bool srq;
	uint64_t local_ca_guid;
	uint8_t private_data[UROCE_CM_REP_PDATA];
};

/** RTU (IBA 12.6.9), DREP (IBA 12.6.11): comm IDs and private data. */
struct uroce_cm_rtu {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[UROCE_CM_RTU_PDATA];
};

/** DREQ (IBA 12.6.10, table 106). */
struct uroce_cm_dreq {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;                /**< 24 bits: the receiver's QP */
	uint8_t private_data[UROCE_CM_DREQ_PDATA];
};

/** SIDR_REQ (IBA 12.11.1, table 119). */
struct uroce_cm_sidr_req {
	uint32_t request_id;
	uint16_t pkey;
	uint64_t service_id;
	uint8_t private_data[UROCE_CM_SIDR_REQ_PDATA];
};

/** SIDR_REP (IBA 12.11.2, table 120). */
struct uroce_cm_sidr_rep {
	uint32_t request_id;
	uint8_t status;                     /**< enum uroce_cm_sidr_status */
	uint8_t info_length;                /**< at most UROCE_CM_INFO_LEN */
	uint32_t qpn;                       /**< 24 bits */
	uint64_t service_id;
	uint32_t qkey;
	uint8_t info[UROCE_CM_INFO_LEN];
	uint8_t private_data[UROCE_CM_SIDR_REP_PDATA];
};

/** LAP (IBA 12.8.1, table 115): parsed, then refused (no alternate paths on RoCE). */
struct uroce_cm_lap {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;                /**< 24 bits */
	uint8_t remote_cm_response_timeout; /**< 5 bits */
	struct uroce_cm_path alternate;
	uint8_t private_data[UROCE_CM_LAP_PDATA];
};

/** APR (IBA 12.8.2, table 116). */
struct uroce_cm_apr {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t info_length;                /**< at most UROCE_CM_INFO_LEN */
	uint8_t ap_status;
	uint8_t info[UROCE_CM_INFO_LEN];
	uint8_t private_data[UROCE_CM_APR_PDATA];
};

/** A decoded CM MAD: the header and the message its attribute ID names. */
struct uroce_cm_msg {
	struct uroce_mad_hdr hdr;
	union {
		struct uroce_cm_req req;
		struct uroce_cm_mra mra;
		struct uroce_cm_rej rej;
		struct uroce_cm_rep rep;
		struct uroce_cm_rtu rtu;    /**< RTU and DREP */
		struct uroce_cm_dreq dreq;
		struct uroce_cm_sidr_req sidr_req;
		struct uroce_cm_sidr_rep sidr_rep;
		struct uroce_cm_lap lap;
		struct uroce_cm_apr apr;
	} u;
};

/**
 * Decode a CM MAD. Checks, in this order: the length (exactly
 * UROCE_MAD_LEN, IBA 13.4.2), base version 1, class 0x07 with class
 * version 2 and method Send (IBA 12.6.1), a CM attribute, and the fields
 * whose value can make no sense (MRA/REJ message reference 3, an ARI or
 * additional-information length past its field). Reserved fields are
 * ignored (IBA 13.4.3); values a connection cannot use (a transport, an
 * MTU) are the CM's to refuse with a REJ, not the codec's.
 *
 * @return 0; -EMSGSIZE (length), -EPROTO (base version, class, class
 *   version or method), -EOPNOTSUPP (attribute not a CM message),
 *   -EBADMSG (a field out of range).
 */
int uroce_cm_msg_decode(const uint8_t *mad, uint32_t len, struct uroce_cm_msg *m);

/**
 * Encode @p m (its hdr.attr_id names the message; base version, class,
 * class version and method are set to the CM's) into the UROCE_MAD_LEN
 * bytes at @p mad. Every reserved bit is zero.
 * @return 0, or -EINVAL (an unknown attribute, or a field wider than its
 *   wire field).
 */
int uroce_cm_msg_encode(const struct uroce_cm_msg *m, uint8_t *mad);

/* ------------------------------------------------------------------------ */
/* Time values (IBA 12.7.4, 13.4.6.2)                                        */
/* ------------------------------------------------------------------------ */

/** Milliseconds of a 5-bit CM time value t: 4.096 us * 2^t, as 2^(t-8) ms (at least 1). */
uint32_t uroce_cm_time_ms(uint8_t t);

/**
 * The local ACK timeout a side uses from a peer's ACK delay and the path's
 * packet life time (both 5-bit exponents): the life time plus one, raised to
 * cover the ACK delay, at most 31, as Linux's CM computes it.
 */
uint8_t uroce_cm_ack_timeout(uint8_t ack_delay, uint8_t packet_life_time);

/* ------------------------------------------------------------------------ */
/* The communication manager                                                 */
/* ------------------------------------------------------------------------ */

struct uroce_cm;
struct uroce_cm_id;

/** Where QP1 MADs go or came from (RoCEv2: the GRH is the IP header). */
struct uroce_cm_addr {
	uint8_t sgid[16];      /**< this side's GID */
	uint8_t dgid[16];      /**< the peer's GID */
	uint8_t tclass;
	uint8_t hop_limit;     /**< 0: the sender's default */
	uint32_t flow_label;
	uint32_t remote_qpn;   /**< the peer's GSI QP (1) */
	uint16_t pkey;
};

/** States of a CM id (IBA 12.9.5, figure 160; Linux's names). */
enum uroce_cm_state {
	UROCE_CM_IDLE = 0,
	UROCE_CM_REQ_SENT,
	UROCE_CM_REQ_RCVD,
	UROCE_CM_MRA_REQ_SENT,
	UROCE_CM_MRA_REQ_RCVD,
	UROCE_CM_REP_SENT,
	UROCE_CM_REP_RCVD,
	UROCE_CM_MRA_REP_SENT,
	UROCE_CM_MRA_REP_RCVD,
	UROCE_CM_ESTABLISHED,
	UROCE_CM_DREQ_SENT,
	UROCE_CM_DREQ_RCVD,
	UROCE_CM_TIMEWAIT,
	UROCE_CM_SIDR_REQ_SENT,
	UROCE_CM_SIDR_REQ_RCVD,
	UROCE_CM_STATE_MAX,
};

/** Name of a CM state ("REQ_SENT", ...), "?" if out of range. */
const char *uroce_cm_state_name(enum uroce_cm_state s);

/** What the CM tells an id's owner. */
enum uroce_cm_event_type {
	UROCE_CM_EV_REQ_RECEIVED = 0,  /**< passive: a new id in REQ_RCVD; see the return value */
	UROCE_CM_EV_REP_RECEIVED,      /**< active: REP_RCVD; answer with RTU (or REJ) */
	UROCE_CM_EV_RTU_RECEIVED,      /**< passive: ESTABLISHED */
	UROCE_CM_EV_REJ_RECEIVED,      /**< the peer refused; msg is the REJ */
	UROCE_CM_EV_REQ_TIMEOUT,       /**< active: no REP after every retry */
	UROCE_CM_EV_REP_TIMEOUT,       /**< passive: no RTU after every retry */
	UROCE_CM_EV_MRA_RECEIVED,      /**< the peer asked for more time (timer stretched) */
	UROCE_CM_EV_DREQ_RECEIVED,     /**< DREQ_RCVD; answer with a DREP */
	UROCE_CM_EV_DREP_RECEIVED,     /**< TIMEWAIT */
	UROCE_CM_EV_DREQ_TIMEOUT,      /**< no DREP after every retry: TIMEWAIT */
	UROCE_CM_EV_TIMEWAIT_EXIT,     /**< IDLE again */
	UROCE_CM_EV_SIDR_REQ_RECEIVED, /**< passive: a new id in SIDR_REQ_RCVD; see the return value */
	UROCE_CM_EV_SIDR_REP_RECEIVED, /**< active: IDLE; msg is the SIDR_REP */
	UROCE_CM_EV_SIDR_TIMEOUT,      /**< active: no SIDR_REP after every retry */
	UROCE_CM_EV_MAX,
};

/** Name of an event type ("REQ_RECEIVED", ...), "?" if out of range. */
const char *uroce_cm_event_name(enum uroce_cm_event_type t);

/** An event: the message that caused it (NULL for timers) and where it came from. */
struct uroce_cm_event {
	enum uroce_cm_event_type type;
	const struct uroce_cm_msg *msg;
	const struct uroce_cm_addr *from;
	/**
	 * REQ_RECEIVED / SIDR_REQ_RECEIVED only: the owner may fill it to have
	 * the ARI of the REJ it returns a reason for (IBA 12.6.7.2).
	 */
	uint8_t *ari;
	uint8_t *ari_len;
};

/** How the CM reaches the outside world. Called on the CM's thread. */
struct uroce_cm_ops {
	/** Monotonic microseconds. Required. */
	uint64_t (*now_us)(void *ctx);
	/**
	 * Send one MAD from QP1. A failure (no room) is counted; the
	 * retransmission timer of the message covers it. Required.
	 * @return 0 or -errno.
	 */
	int (*send)(void *ctx, const struct uroce_cm_addr *to, const uint8_t *mad);
	/**
	 * An event for @p id (its context is uroce_cm_id_context()). For
	 * REQ_RECEIVED and SIDR_REQ_RECEIVED the id is new, with a NULL
	 * context: return 0 to keep it (set a context, answer later with a REP,
	 * REJ or SIDR_REP), or a REJ reason (a SIDR_REP status for SIDR) to
	 * have the CM refuse the request and free the id. Other return values
	 * are ignored. The callback may call any function of this API except
	 * uroce_cm_destroy(). Required.
	 */
	int (*event)(void *ctx, struct uroce_cm_id *id, const struct uroce_cm_event *ev);
};

/** CM configuration. */
struct uroce_cm_conf {
	const struct uroce_cm_ops *ops;
	void *ctx;
	uint64_t ca_guid;        /**< this CA's GUID (REQ/REP Local CA GUID, REJ ARI) */
	uint32_t seed;           /**< starts the comm ID sequence (0 is fine) */
	/**
	 * The CA's ACK delay exponent, sent as the REP's Target ACK Delay
	 * (IBA 12.7.31); 0 means 15, rxe's value.
	 */
	uint8_t ack_delay;
	/** Service timeout of the MRAs it sends (IBA 12.6.6); 0 means 24 (rdma_cm's). */
	uint8_t mra_service_timeout;
};

/** Counters of a CM (cm_counters.def). */
enum uroce_cm_counter {
#define UROCE_CM_CNT(sym, name, desc) UROCE_CM_CNT_##sym,
#include "cm_counters.def"
#undef UROCE_CM_CNT
	UROCE_CM_CNT_MAX
};

/** Name of counter @p c ("cm_rx_mads", ...), or NULL if out of range. */
const char *uroce_cm_counter_name(unsigned int c);
/** One-line description of counter @p c, or NULL if out of range. */
const char *uroce_cm_counter_desc(unsigned int c);

/** Create a CM. @return the CM, or NULL with errno EINVAL (no ops) or ENOMEM. */
struct uroce_cm *uroce_cm_create(const struct uroce_cm_conf *conf);

/**
 * Destroy a CM and every id it still has, sending nothing (the consumer
 * disconnects first if it wants the peers told). NULL is a no-op.
 */
void uroce_cm_destroy(struct uroce_cm *cm);

/**
 * A MAD of the CM class arrived on QP1 from @p from (a Send; the GSI
 * answers Get/Set itself). It is decoded, matched to its id by comm IDs and
 * run through the state machine; whatever is malformed, unknown or not
 * expected in the id's state is dropped and counted.
 */
void uroce_cm_rx(struct uroce_cm *cm, const struct uroce_cm_addr *from, const uint8_t *mad,
		 uint32_t len);

/** Run the timers that are due. @return how many fired. */
unsigned int uroce_cm_poll(struct uroce_cm *cm);

/** The earliest timer in µs, or UINT64_MAX. */
uint64_t uroce_cm_next_deadline(const struct uroce_cm *cm);

/** Counter @p c, or 0 if out of range. */
uint64_t uroce_cm_counter(const struct uroce_cm *cm, unsigned int c);

/** Ids alive, those the consumer destroyed that still wait out a state included. */
unsigned int uroce_cm_id_count(const struct uroce_cm *cm);

/**
 * A new id in IDLE for an active connection or SIDR request.
 * @return the id, or NULL with errno ENOMEM.
 */
struct uroce_cm_id *uroce_cm_id_create(struct uroce_cm *cm, void *context);

/**
 * The consumer is done with @p id: no event reaches it any more. What the
 * peer is owed is sent first, as IBA 12.9 asks: a REJ (Timeout) for a REQ
 * in flight, a REJ (Consumer Defined) for a request not yet answered or a
 * REP not yet confirmed, a DREQ for an established connection, a DREP for
 * a DREQ received. A connection then waits out its time wait before the id
 * is freed, so its QPN is not reused toward the peer too early.
 */
void uroce_cm_id_destroy(struct uroce_cm_id *id);

void *uroce_cm_id_context(const struct uroce_cm_id *id);
void uroce_cm_id_set_context(struct uroce_cm_id *id, void *context);
enum uroce_cm_state uroce_cm_id_state(const struct uroce_cm_id *id);
uint32_t uroce_cm_id_local_comm_id(const struct uroce_cm_id *id);
/** The peer's QP1 address (the REQ's, or the one given to uroce_cm_send_req()). */
const struct uroce_cm_addr *uroce_cm_id_addr(const struct uroce_cm_id *id);
/** The REQ of the connection (sent or received), or NULL before one. */
const struct uroce_cm_req *uroce_cm_id_req(const struct uroce_cm_id *id);
/** The REP of the connection (sent or received), or NULL before one. */
const struct uroce_cm_rep *uroce_cm_id_rep(const struct uroce_cm_id *id);

/** What the active side asks for in its REQ. */
struct uroce_cm_req_param {
	struct uroce_cm_addr addr;          /**< the peer's QP1 (remote_qpn 1) */
	uint64_t service_id;
	uint32_t qpn;                       /**< our QP (not checked: UCX sends a dummy) */
	uint8_t transport;                  /**< UROCE_CM_TRANSPORT_RC or _UC */
	uint32_t starting_psn;              /**< our receive PSN (24 bits) */
	uint8_t responder_resources;        /**< READ/atomics we accept at once */
	uint8_t initiator_depth;            /**< READ/atomics we issue at once */
	uint8_t retry_count;                /**< 0..7 */
	uint8_t rnr_retry_count;            /**< 0..7 */
	bool flow_control;
	bool srq;
	uint8_t path_mtu;                   /**< enum uroce_mtu */
	uint8_t packet_life_time;           /**< 5-bit exponent of the path */
	uint8_t remote_cm_response_timeout; /**< 5 bits; rdma_cm: 20 */
	uint8_t local_cm_response_timeout;  /**< 5 bits; rdma_cm: 20 */
	uint8_t max_cm_retries;             /**< 0..15; rdma_cm: 15 */
	uint8_t sl;
	const uint8_t *private_data;
	uint8_t private_data_len;           /**< at most UROCE_CM_REQ_PDATA */
};

/**
 * Send a REQ (IDLE → REQ_SENT) and arm its timer: 2 · ms(packet life time)
 * + ms(remote CM response timeout), resent max_cm_retries times, then
 * REQ_TIMEOUT (IBA 12.7.2, 12.9.6).
 * @return 0, -EINVAL (not IDLE, a value out of range, private data too
 *   long), or the send's -errno (the retry timer still runs).
 */
int uroce_cm_send_req(struct uroce_cm_id *id, const struct uroce_cm_req_param *p);

/** What the passive side answers in its REP. */
struct uroce_cm_rep_param {
	uint32_t qpn;
	uint32_t starting_psn;              /**< our receive PSN (24 bits) */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t rnr_retry_count;            /**< 0..7 */
	bool flow_control;
	bool srq;
	const uint8_t *private_data;
	uint8_t private_data_len;           /**< at most UROCE_CM_REP_PDATA */
};

/**
 * Accept a request (REQ_RCVD or MRA_REQ_SENT → REP_SENT). The REP is
 * resent every ms(REQ local CM response timeout) up to the REQ's max CM
 * retries; then REP_TIMEOUT.
 * @return 0, -EINVAL (wrong state or value), or the send's -errno.
 */
int uroce_cm_send_rep(struct uroce_cm_id *id, const struct uroce_cm_rep_param *p);

/**
 * Confirm a REP (REP_RCVD or MRA_REP_SENT → ESTABLISHED), once the QP is
 * in RTS. @return 0, -EINVAL (wrong state, private data too long).
 */
int uroce_cm_send_rtu(struct uroce_cm_id *id, const uint8_t *pdata, uint8_t len);

/**
 * Refuse a request or a REP (REQ_RCVD, MRA_REQ_SENT, REP_RCVD, MRA_REP_SENT)
 * with @p reason; a refused REP leaves the id in TIMEWAIT, a refused
 * request IDLE. @return 0, -EINVAL (wrong state, ARI or private data too
 * long).
 */
int uroce_cm_send_rej(struct uroce_cm_id *id, uint16_t reason, const uint8_t *ari,
		      uint8_t ari_len, const uint8_t *pdata, uint8_t len);

/**
 * The passive QP saw the first packet of its peer before any RTU
 * (IBA 12.9.7, communication established): REP_SENT or MRA_REP_RCVD →
 * ESTABLISHED. @return 0, -EINVAL (wrong state).
 */
int uroce_cm_established(struct uroce_cm_id *id);

/**
 * Start a disconnection: ESTABLISHED (or REP_SENT, MRA_REP_RCVD: the RTU
 * was lost) → DREQ_SENT; the DREQ is resent at the connection's CM
 * timeout up to its max CM retries, then DREQ_TIMEOUT and TIMEWAIT.
 * @return 0, -EINVAL (wrong state, private data too long).
 */
int uroce_cm_send_dreq(struct uroce_cm_id *id, const uint8_t *pdata, uint8_t len);

/**
 * Answer a DREQ (DREQ_RCVD → TIMEWAIT). @return 0, -EINVAL (wrong state,
 * private data too long).
 */
int uroce_cm_send_drep(struct uroce_cm_id *id, const uint8_t *pdata, uint8_t len);

/** What an active SIDR request asks for. */
struct uroce_cm_sidr_req_param {
	struct uroce_cm_addr addr;
	uint64_t service_id;
	uint32_t timeout_ms;                /**< per try; 0: 4096 */
	uint8_t max_cm_retries;             /**< 0..15 */
	const uint8_t *private_data;
	uint8_t private_data_len;           /**< at most UROCE_CM_SIDR_REQ_PDATA */
};

/**
 * Send a SIDR_REQ (IDLE → SIDR_REQ_SENT; IBA 12.11). @return 0, -EINVAL,
 * or the send's -errno (the retry timer still runs).
 */
int uroce_cm_send_sidr_req(struct uroce_cm_id *id, const struct uroce_cm_sidr_req_param *p);

/** The passive side's SIDR answer. */
struct uroce_cm_sidr_rep_param {
	uint8_t status;                     /**< enum uroce_cm_sidr_status */
	uint32_t qpn;
	uint32_t qkey;
	const uint8_t *private_data;
	uint8_t private_data_len;           /**< at most UROCE_CM_SIDR_REP_PDATA */
};

/**
 * Answer a SIDR_REQ (SIDR_REQ_RCVD → IDLE). @return 0, -EINVAL (wrong
 * state or value), or the send's -errno.
 */
int uroce_cm_send_sidr_rep(struct uroce_cm_id *id, const struct uroce_cm_sidr_rep_param *p);

/* ------------------------------------------------------------------------ */
/* QP attributes of a connection (IBA 12.7; Linux's ib_cm_init_qp_attr)       */
/* ------------------------------------------------------------------------ */

/** Attributes for one transition of a connected QP, verbs style. */
struct uroce_cm_qp_attr {
	enum uroce_qp_state qp_state;
	int qp_access_flags;
	uint16_t pkey_index;
	uint8_t port_num;
	uint32_t qkey;          /**< UD only (the rdma_cm layer's) */
	enum uroce_mtu path_mtu;
	uint32_t dest_qp_num;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint8_t max_dest_rd_atomic;
	uint8_t max_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	/* the address vector (RTR): the peer's GID, ours, the path's GRH fields */
	uint8_t dgid[16];
	uint8_t sgid[16];
	uint8_t sgid_index;     /**< filled by the rdma_cm layer (the CM knows GIDs only) */
	uint32_t flow_label;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t sl;
};

/**
 * The attributes a connected (RC or UC) QP needs for @p state (INIT, RTR or
 * RTS) from what @p id exchanged, and their mask (enum uroce_qp_attr_mask):
 *  - INIT: access REMOTE_WRITE, plus READ and ATOMIC when the side accepts
 *    READs (responder resources > 0); P_Key index 0, port 1;
 *  - RTR: the peer's QPN and GID, the path's MTU (at most @p port_mtu),
 *    flow label, hop limit and traffic class; rq_psn = this side's starting
 *    PSN; max_dest_rd_atomic = this side's responder resources; RNR timer 0;
 *  - RTS: sq_psn = the peer's starting PSN; max_rd_atomic = this side's
 *    initiator depth; the REQ's retry count; the RNR retry count of the
 *    peer's message (REQ on the passive side, REP on the active); the local
 *    ACK timeout: the REQ's on the passive side, uroce_cm_ack_timeout(REP
 *    target ACK delay, packet life time) on the active side.
 * The resources cross over: what the peer may issue at once is what this
 * side must accept, and the reverse (IBA 12.7.29-30).
 *
 * @return 0; -EINVAL (bad state or arguments), -EAGAIN (the exchange has
 *   not got that far: RTS on the active side before the REP).
 */
int uroce_cm_qp_attr(const struct uroce_cm_id *id, enum uroce_qp_state state,
		     enum uroce_mtu port_mtu, struct uroce_cm_qp_attr *attr, int *mask);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_CM_H */
