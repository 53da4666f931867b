/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The MAD header and the CM message codecs (IBA 13.4.3, 12.6). Offsets are
 * those of IBA's tables 99-120, counted from the start of the MAD data
 * (MAD byte 24); a sub-byte field is read and written through
 * cm_bits_get()/cm_bits_put() with its "byte[bit]" position. The golden
 * capture test/vectors/rxe/rxe-write-cm-s4096.pcap (rxe, Linux 6.1) is
 * decoded field by field in test/unit/cm/test_mad.c.
 */

#include <errno.h>
#include <string.h>

#include "uroce_common.h"

#include "cm_internal.h"

#define D UROCE_MAD_HDR_LEN /* MAD data offset */

void
uroce_mad_hdr_decode(const uint8_t *mad, struct uroce_mad_hdr *h)
{
	h->base_version = mad[0];
	h->mgmt_class = mad[1];
	h->class_version = mad[2];
	h->method = mad[3];
	h->status = uroce_get_be16(mad + 4);
	h->class_specific = uroce_get_be16(mad + 6);
	h->tid = uroce_get_be64(mad + 8);
	h->attr_id = uroce_get_be16(mad + 16);
	h->attr_mod = uroce_get_be32(mad + 20);
}

void
uroce_mad_hdr_encode(uint8_t *mad, const struct uroce_mad_hdr *h)
{
	mad[0] = h->base_version;
	mad[1] = h->mgmt_class;
	mad[2] = h->class_version;
	mad[3] = h->method;
	uroce_put_be16(mad + 4, h->status);
	uroce_put_be16(mad + 6, h->class_specific);
	uroce_put_be64(mad + 8, h->tid);
	uroce_put_be16(mad + 16, h->attr_id);
	mad[18] = 0;
	mad[19] = 0;
	uroce_put_be32(mad + 20, h->attr_mod);
}

const char *
uroce_cm_attr_name(uint16_t attr_id)
{
	switch (attr_id) {
	case UROCE_CM_ATTR_CLASS_PORT_INFO:
		return "ClassPortInfo";
	case UROCE_CM_ATTR_REQ:
		return "REQ";
	case UROCE_CM_ATTR_MRA:
		return "MRA";
	case UROCE_CM_ATTR_REJ:
		return "REJ";
	case UROCE_CM_ATTR_REP:
		return "REP";
	case UROCE_CM_ATTR_RTU:
		return "RTU";
	case UROCE_CM_ATTR_DREQ:
		return "DREQ";
	case UROCE_CM_ATTR_DREP:
		return "DREP";
	case UROCE_CM_ATTR_SIDR_REQ:
		return "SIDR_REQ";
	case UROCE_CM_ATTR_SIDR_REP:
		return "SIDR_REP";
	case UROCE_CM_ATTR_LAP:
		return "LAP";
	case UROCE_CM_ATTR_APR:
		return "APR";
	default:
		return "?";
	}
}

static const char *const rej_reason_str[] = {
	[UROCE_CM_REJ_NO_QP] = "no QP",
	[UROCE_CM_REJ_NO_EEC] = "no EEC",
	[UROCE_CM_REJ_NO_RESOURCES] = "no resources",
	[UROCE_CM_REJ_TIMEOUT] = "timeout",
	[UROCE_CM_REJ_UNSUPPORTED] = "unsupported request",
	[UROCE_CM_REJ_INVALID_COMM_ID] = "invalid comm ID",
	[UROCE_CM_REJ_INVALID_COMM_INSTANCE] = "invalid comm instance",
	[UROCE_CM_REJ_INVALID_SERVICE_ID] = "invalid service ID",
	[UROCE_CM_REJ_INVALID_TRANSPORT_TYPE] = "invalid transport type",
	[UROCE_CM_REJ_STALE_CONN] = "stale connection",
	[UROCE_CM_REJ_RDC_NOT_EXIST] = "RDC does not exist",
	[UROCE_CM_REJ_INVALID_GID] = "invalid GID",
	[UROCE_CM_REJ_INVALID_LID] = "invalid LID",
	[UROCE_CM_REJ_INVALID_SL] = "invalid SL",
	[UROCE_CM_REJ_INVALID_TRAFFIC_CLASS] = "invalid traffic class",
	[UROCE_CM_REJ_INVALID_HOP_LIMIT] = "invalid hop limit",
	[UROCE_CM_REJ_INVALID_PACKET_RATE] = "invalid packet rate",
	[UROCE_CM_REJ_INVALID_ALT_GID] = "invalid alternate GID",
	[UROCE_CM_REJ_PORT_CM_REDIRECT] = "port CM redirect",
	[UROCE_CM_REJ_PORT_REDIRECT] = "port redirect",
	[UROCE_CM_REJ_INVALID_MTU] = "invalid MTU",
	[UROCE_CM_REJ_INSUFFICIENT_RESP_RESOURCES] = "insufficient responder resources",
	[UROCE_CM_REJ_CONSUMER_DEFINED] = "consumer defined",
	[UROCE_CM_REJ_INVALID_RNR_RETRY] = "invalid RNR retry count",
	[UROCE_CM_REJ_DUPLICATE_LOCAL_COMM_ID] = "duplicate local comm ID",
	[UROCE_CM_REJ_INVALID_CLASS_VERSION] = "invalid class version",
	[UROCE_CM_REJ_INVALID_FLOW_LABEL] = "invalid flow label",
	[UROCE_CM_REJ_INVALID_ALT_FLOW_LABEL] = "invalid alternate flow label",
	[UROCE_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED] = "vendor option not supported",
};

const char *
uroce_cm_rej_reason_str(uint16_t reason)
{
	if (reason < UROCE_ARRAY_SIZE(rej_reason_str) && rej_reason_str[reason] != NULL)
		return rej_reason_str[reason];
	return "unknown";
}

/* ------------------------------------------------------------------------ */
/* Paths: 44 bytes in a REQ (table 99, offsets 52 and 96)                    */
/* ------------------------------------------------------------------------ */

static void
path_decode(const uint8_t *p, struct uroce_cm_path *x)
{
	x->local_lid = uroce_get_be16(p + 0);
	x->remote_lid = uroce_get_be16(p + 2);
	memcpy(x->local_gid, p + 4, 16);
	memcpy(x->remote_gid, p + 20, 16);
	x->flow_label = uroce_get_be32(p + 36) >> 12;      /* [36..39] bits 0-19 */
	x->packet_rate = cm_bits_get(p[39], 2, 6);
	x->traffic_class = p[40];
	x->hop_limit = p[41];
	x->sl = cm_bits_get(p[42], 0, 4);
	x->subnet_local = cm_bits_get(p[42], 4, 1);
	x->local_ack_timeout = cm_bits_get(p[43], 0, 5);
}

static bool
path_encode(uint8_t *p, const struct uroce_cm_path *x)
{
	if (!cm_fits(x->flow_label, 20) || !cm_fits(x->packet_rate, 6) || !cm_fits(x->sl, 4) ||
	    !cm_fits(x->local_ack_timeout, 5))
		return false;
	uroce_put_be16(p + 0, x->local_lid);
	uroce_put_be16(p + 2, x->remote_lid);
	memcpy(p + 4, x->local_gid, 16);
	memcpy(p + 20, x->remote_gid, 16);
	uroce_put_be32(p + 36, x->flow_label << 12);
	p[39] |= cm_bits_put(x->packet_rate, 2, 6);
	p[40] = x->traffic_class;
	p[41] = x->hop_limit;
	p[42] = cm_bits_put(x->sl, 0, 4) | cm_bits_put(x->subnet_local, 4, 1);
	p[43] = cm_bits_put(x->local_ack_timeout, 0, 5);
	return true;
}

/* ------------------------------------------------------------------------ */
/* REQ (table 99)                                                            */
/* ------------------------------------------------------------------------ */

static int
req_decode(const uint8_t *m, struct uroce_cm_req *r)
{
	r->local_comm_id = uroce_get_be32(m + 0);
	r->service_id = uroce_get_be64(m + 8);
	r->local_ca_guid = uroce_get_be64(m + 16);
	r->local_qkey = uroce_get_be32(m + 28);
	r->local_qpn = uroce_get_be24(m + 32);
	r->responder_resources = m[35];
	r->local_eecn = uroce_get_be24(m + 36);
	r->initiator_depth = m[39];
	r->remote_eecn = uroce_get_be24(m + 40);
	r->remote_cm_response_timeout = cm_bits_get(m[43], 0, 5);
	r->transport = cm_bits_get(m[43], 5, 2);
	r->e2e_flow_control = cm_bits_get(m[43], 7, 1);
	r->starting_psn = uroce_get_be24(m + 44);
	r->local_cm_response_timeout = cm_bits_get(m[47], 0, 5);
	r->retry_count = cm_bits_get(m[47], 5, 3);
	r->pkey = uroce_get_be16(m + 48);
	r->path_mtu = cm_bits_get(m[50], 0, 4);
	r->rdc_exists = cm_bits_get(m[50], 4, 1);
	r->rnr_retry_count = cm_bits_get(m[50], 5, 3);
	r->max_cm_retries = cm_bits_get(m[51], 0, 4);
	r->srq = cm_bits_get(m[51], 4, 1);
	r->ext_transport = cm_bits_get(m[51], 5, 3);
	path_decode(m + 52, &r->primary);
	path_decode(m + 96, &r->alternate);
	r->sap_supported = cm_bits_get(m[139], 5, 1);
	memcpy(r->private_data, m + 140, UROCE_CM_REQ_PDATA);
	return 0;
}

static int
req_encode(uint8_t *m, const struct uroce_cm_req *r)
{
	if (!cm_fits(r->local_qpn, 24) || !cm_fits(r->local_eecn, 24) ||
	    !cm_fits(r->remote_eecn, 24) || !cm_fits(r->remote_cm_response_timeout, 5) ||
	    !cm_fits(r->transport, 2) || !cm_fits(r->starting_psn, 24) ||
	    !cm_fits(r->local_cm_response_timeout, 5) || !cm_fits(r->retry_count, 3) ||
	    !cm_fits(r->path_mtu, 4) || !cm_fits(r->rnr_retry_count, 3) ||
	    !cm_fits(r->max_cm_retries, 4) || !cm_fits(r->ext_transport, 3))
		return -EINVAL;
	uroce_put_be32(m + 0, r->local_comm_id);
	uroce_put_be64(m + 8, r->service_id);
	uroce_put_be64(m + 16, r->local_ca_guid);
	uroce_put_be32(m + 28, r->local_qkey);
	uroce_put_be24(m + 32, r->local_qpn);
	m[35] = r->responder_resources;
	uroce_put_be24(m + 36, r->local_eecn);
	m[39] = r->initiator_depth;
	uroce_put_be24(m + 40, r->remote_eecn);
	m[43] = cm_bits_put(r->remote_cm_response_timeout, 0, 5) |
		cm_bits_put(r->transport, 5, 2) | cm_bits_put(r->e2e_flow_control, 7, 1);
	uroce_put_be24(m + 44, r->starting_psn);
	m[47] = cm_bits_put(r->local_cm_response_timeout, 0, 5) | cm_bits_put(r->retry_count, 5, 3);
	uroce_put_be16(m + 48, r->pkey);
	m[50] = cm_bits_put(r->path_mtu, 0, 4) | cm_bits_put(r->rdc_exists, 4, 1) |
		cm_bits_put(r->rnr_retry_count, 5, 3);
	m[51] = cm_bits_put(r->max_cm_retries, 0, 4) | cm_bits_put(r->srq, 4, 1) |
		cm_bits_put(r->ext_transport, 5, 3);
	if (!path_encode(m + 52, &r->primary) || !path_encode(m + 96, &r->alternate))
		return -EINVAL;
	m[139] |= cm_bits_put(r->sap_supported, 5, 1);
	memcpy(m + 140, r->private_data, UROCE_CM_REQ_PDATA);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* MRA (table 100), REJ (table 101)                                          */
/* ------------------------------------------------------------------------ */

static int
mra_decode(const uint8_t *m, struct uroce_cm_mra *r)
{
	r->local_comm_id = uroce_get_be32(m + 0);
	r->remote_comm_id = uroce_get_be32(m + 4);
	r->msg_mraed = cm_bits_get(m[8], 0, 2);
	r->service_timeout = cm_bits_get(m[9], 0, 5);
	memcpy(r->private_data, m + 10, UROCE_CM_MRA_PDATA);
	/* IBA 12.6.6: value 3 of Message MRAed is reserved. */
	return r->msg_mraed > UROCE_CM_REF_OTHER ? -EBADMSG : 0;
}

static int
mra_encode(uint8_t *m, const struct uroce_cm_mra *r)
{
	if (r->msg_mraed > UROCE_CM_REF_OTHER || !cm_fits(r->service_timeout, 5))
		return -EINVAL;
	uroce_put_be32(m + 0, r->local_comm_id);
	uroce_put_be32(m + 4, r->remote_comm_id);
	m[8] = cm_bits_put(r->msg_mraed, 0, 2);
	m[9] = cm_bits_put(r->service_timeout, 0, 5);
	memcpy(m + 10, r->private_data, UROCE_CM_MRA_PDATA);
	return 0;
}

static int
rej_decode(const uint8_t *m, struct uroce_cm_rej *r)
{
	r->local_comm_id = uroce_get_be32(m + 0);
	r->remote_comm_id = uroce_get_be32(m + 4);
	r->msg_rejected = cm_bits_get(m[8], 0, 2);
	r->ari_length = cm_bits_get(m[9], 0, 7);
	r->reason = uroce_get_be16(m + 10);
	memcpy(r->ari, m + 12, UROCE_CM_ARI_LEN);
	memcpy(r->private_data, m + 84, UROCE_CM_REJ_PDATA);
	/* IBA 12.6.7: Message Rejected 3 is reserved; the ARI field has 72 bytes. */
	if (r->msg_rejected > UROCE_CM_REF_OTHER || r->ari_length > UROCE_CM_ARI_LEN)
		return -EBADMSG;
	return 0;
}

static int
rej_encode(uint8_t *m, const struct uroce_cm_rej *r)
{
	if (r->msg_rejected > UROCE_CM_REF_OTHER || r->ari_length > UROCE_CM_ARI_LEN)
		return -EINVAL;
	uroce_put_be32(m + 0, r->local_comm_id);
	uroce_put_be32(m + 4, r->remote_comm_id);
	m[8] = cm_bits_put(r->msg_rejected, 0, 2);
	m[9] = cm_bits_put(r->ari_length, 0, 7);
	uroce_put_be16(m + 10, r->reason);
	memcpy(m + 12, r->ari, UROCE_CM_ARI_LEN);
	memcpy(m + 84, r->private_data, UROCE_CM_REJ_PDATA);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* REP (table 104), RTU/DREP (tables 105, 107), DREQ (table 106)             */
/* ------------------------------------------------------------------------ */

static int
rep_decode(const uint8_t *m, struct uroce_cm_rep *r)
{
	r->local_comm_id = uroce_get_be32(m + 0);
	r->remote_comm_id = uroce_get_be32(m + 4);
	r->local_qkey = uroce_get_be32(m + 8);
	r->local_qpn = uroce_get_be24(m + 12);
	r->local_eecn = uroce_get_be24(m + 16);
	r->starting_psn = uroce_get_be24(m + 20);
	r->responder_resources = m[24];
	r->initiator_depth = m[25];
	r->target_ack_delay = cm_bits_get(m[26], 0, 5);
	r->failover_accepted = cm_bits_get(m[26], 5, 2);
	r->e2e_flow_control = cm_bits_get(m[26], 7, 1);
	r->rnr_retry_count = cm_bits_get(m[27], 0, 3);
	r->srq = cm_bits_get(m[27], 3, 1);
	r->local_ca_guid = uroce_get_be64(m + 28);
	memcpy(r->private_data, m + 36, UROCE_CM_REP_PDATA);
	return 0;
}

static int
rep_encode(uint8_t *m, const struct uroce_cm_rep *r)
{
	if (!cm_fits(r->local_qpn, 24) || !cm_fits(r->local_eecn, 24) ||
	    !cm_fits(r->starting_psn, 24) || !cm_fits(r->target_ack_delay, 5) ||
	    !cm_fits(r->failover_accepted, 2) || !cm_fits(r->rnr_retry_count, 3))
		return -EINVAL;
	uroce_put_be32(m + 0, r->local_comm_id);
	uroce_put_be32(m + 4, r->remote_comm_id);
	uroce_put_be32(m + 8, r->local_qkey);
	uroce_put_be24(m + 12, r->local_qpn);
	uroce_put_be24(m + 16, r->local_eecn);
	uroce_put_be24(m + 20, r->starting_psn);
	m[24] = r->responder_resources;
	m[25] = r->initiator_depth;
	m[26] = cm_bits_put(r->target_ack_delay, 0, 5) | cm_bits_put(r->failover_accepted, 5, 2) |
		cm_bits_put(r->e2e_flow_control, 7, 1);
	m[27] = cm_bits_put(r->rnr_retry_count, 0, 3) | cm_bits_put(r->srq, 3, 1);
	uroce_put_be64(m + 28, r->local_ca_guid);
	memcpy(m + 36, r->private_data, UROCE_CM_REP_PDATA);
	return 0;
}

static int
rtu_decode(const uint8_t *m, struct uroce_cm_rtu *r)
{
	r->local_comm_id = uroce_get_be32(m + 0);
	r->remote_comm_id = uroce_get_be32(m + 4);
	memcpy(r->private_data, m + 8, UROCE_CM_RTU_PDATA);
	return 0;
}

static int
rtu_encode(uint8_t *m, const struct uroce_cm_rtu *r)
{
	uroce_put_be32(m + 0, r->local_comm_id);
	uroce_put_be32(m + 4, r->remote_comm_id);
	memcpy(m + 8, r->private_data, UROCE_CM_RTU_PDATA);
	return 0;
}

static int
dreq_decode(const uint8_t *m, struct uroce_cm_dreq *r)
{
	r->local_comm_id = uroce_get_be32(m + 0);
	r->remote_comm_id = uroce_get_be32(m + 4);
	r->remote_qpn = uroce_get_be24(m + 8);
	memcpy(r->private_data, m + 12, UROCE_CM_DREQ_PDATA);
	return 0;
}

static int
dreq_encode(uint8_t *m, const struct uroce_cm_dreq *r)
{
	if (!cm_fits(r->remote_qpn, 24))
		return -EINVAL;
	uroce_put_be32(m + 0, r->local_comm_id);
	uroce_put_be32(m + 4, r->remote_comm_id);
	uroce_put_be24(m + 8, r->remote_qpn);
	memcpy(m + 12, r->private_data, UROCE_CM_DREQ_PDATA);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* SIDR_REQ (table 119), SIDR_REP (table 120)                                */
/* ------------------------------------------------------------------------ */

static int
sidr_req_decode(const uint8_t *m, struct uroce_cm_sidr_req *r)
{
	r->request_id = uroce_get_be32(m + 0);
	r->pkey = uroce_get_be16(m + 4);
	r->service_id = uroce_get_be64(m + 8);
	memcpy(r->private_data, m + 16, UROCE_CM_SIDR_REQ_PDATA);
	return 0;
}

static int
sidr_req_encode(uint8_t *m, const struct uroce_cm_sidr_req *r)
{
	uroce_put_be32(m + 0, r->request_id);
	uroce_put_be16(m + 4, r->pkey);
	uroce_put_be64(m + 8, r->service_id);
	memcpy(m + 16, r->private_data, UROCE_CM_SIDR_REQ_PDATA);
	return 0;
}

static int
sidr_rep_decode(const uint8_t *m, struct uroce_cm_sidr_rep *r)
{
	r->request_id = uroce_get_be32(m + 0);
	r->status = m[4];
	r->info_length = m[5];
	r->qpn = uroce_get_be24(m + 8);
	r->service_id = uroce_get_be64(m + 12);
	r->qkey = uroce_get_be32(m + 20);
	memcpy(r->info, m + 24, UROCE_CM_INFO_LEN);
	memcpy(r->private_data, m + 96, UROCE_CM_SIDR_REP_PDATA);
	return r->info_length > UROCE_CM_INFO_LEN ? -EBADMSG : 0;
}

static int
sidr_rep_encode(uint8_t *m, const struct uroce_cm_sidr_rep *r)
{
	if (r->info_length > UROCE_CM_INFO_LEN || !cm_fits(r->qpn, 24))
		return -EINVAL;
	uroce_put_be32(m + 0, r->request_id);
	m[4] = r->status;
	m[5] = r->info_length;
	uroce_put_be24(m + 8, r->qpn);
	uroce_put_be64(m + 12, r->service_id);
	uroce_put_be32(m + 20, r->qkey);
	memcpy(m + 24, r->info, UROCE_CM_INFO_LEN);
	memcpy(m + 96, r->private_data, UROCE_CM_SIDR_REP_PDATA);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* LAP (table 115), APR (table 116)                                          */
/* ------------------------------------------------------------------------ */

static int
lap_decode(const uint8_t *m, struct uroce_cm_lap *r)
{
	struct uroce_cm_path *a = &r->alternate;

	r->local_comm_id = uroce_get_be32(m + 0);
	r->remote_comm_id = uroce_get_be32(m + 4);
	r->remote_qpn = uroce_get_be24(m + 12);
	r->remote_cm_response_timeout = cm_bits_get(m[15], 0, 5);
	a->local_lid = uroce_get_be16(m + 20);
	a->remote_lid = uroce_get_be16(m + 22);
	memcpy(a->local_gid, m + 24, 16);
	memcpy(a->remote_gid, m + 40, 16);
	a->flow_label = uroce_get_be32(m + 56) >> 12;
	a->traffic_class = m[59];
	a->hop_limit = m[60];
	a->packet_rate = cm_bits_get(m[61], 2, 6);
	a->sl = cm_bits_get(m[62], 0, 4);
	a->subnet_local = cm_bits_get(m[62], 4, 1);
	a->local_ack_timeout = cm_bits_get(m[63], 0, 5);
	memcpy(r->private_data, m + 64, UROCE_CM_LAP_PDATA);
	return 0;
}

static int
lap_encode(uint8_t *m, const struct uroce_cm_lap *r)
{
	const struct uroce_cm_path *a = &r->alternate;

	if (!cm_fits(r->remote_qpn, 24) || !cm_fits(r->remote_cm_response_timeout, 5) ||
	    !cm_fits(a->flow_label, 20) || !cm_fits(a->packet_rate, 6) || !cm_fits(a->sl, 4) ||
	    !cm_fits(a->local_ack_timeout, 5))
		return -EINVAL;
	uroce_put_be32(m + 0, r->local_comm_id);
	uroce_put_be32(m + 4, r->remote_comm_id);
	uroce_put_be24(m + 12, r->remote_qpn);
	m[15] = cm_bits_put(r->remote_cm_response_timeout, 0, 5);
	uroce_put_be16(m + 20, a->local_lid);
	uroce_put_be16(m + 22, a->remote_lid);
	memcpy(m + 24, a->local_gid, 16);
	memcpy(m + 40, a->remote_gid, 16);
	uroce_put_be32(m + 56, a->flow_label << 12);
	m[59] = a->traffic_class;
	m[60] = a->hop_limit;
	m[61] = cm_bits_put(a->packet_rate, 2, 6);
	m[62] = cm_bits_put(a->sl, 0, 4) | cm_bits_put(a->subnet_local, 4, 1);
	m[63] = cm_bits_put(a->local_ack_timeout, 0, 5);
	memcpy(m + 64, r->private_data, UROCE_CM_LAP_PDATA);
	return 0;
}

static int
apr_decode(const uint8_t *m, struct uroce_cm_apr *r)
{
	r->local_comm_id = uroce_get_be32(m + 0);
	r->remote_comm_id = uroce_get_be32(m + 4);
	r->info_length = m[8];
	r->ap_status = m[9];
	memcpy(r->info, m + 12, UROCE_CM_INFO_LEN);
	memcpy(r->private_data, m + 84, UROCE_CM_APR_PDATA);
	return r->info_length > UROCE_CM_INFO_LEN ? -EBADMSG : 0;
}

static int
apr_encode(uint8_t *m, const struct uroce_cm_apr *r)
{
	if (r->info_length > UROCE_CM_INFO_LEN)
		return -EINVAL;
	uroce_put_be32(m + 0, r->local_comm_id);
	uroce_put_be32(m + 4, r->remote_comm_id);
	m[8] = r->info_length;
	m[9] = r->ap_status;
	memcpy(m + 12, r->info, UROCE_CM_INFO_LEN);
	memcpy(m + 84, r->private_data, UROCE_CM_APR_PDATA);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                  */
/* ------------------------------------------------------------------------ */

int
uroce_cm_msg_decode(const uint8_t *mad, uint32_t len, struct uroce_cm_msg *m)
{
	const uint8_t *d;

	/* IBA 13.4.2: every GSI MAD is 256 bytes. */
	if (mad == NULL || len != UROCE_MAD_LEN)
		return -EMSGSIZE;
	d = mad + D;
	uroce_mad_hdr_decode(mad, &m->hdr);
	/* IBA 12.6.1: CM messages are Sends of class 0x07, class version 2. */
	if (m->hdr.base_version != UROCE_MAD_BASE_VERSION ||
	    m->hdr.mgmt_class != UROCE_MGMT_CLASS_CM ||
	    m->hdr.class_version != UROCE_CM_CLASS_VERSION ||
	    m->hdr.method != UROCE_MAD_METHOD_SEND)
		return -EPROTO;
	switch (m->hdr.attr_id) {
	case UROCE_CM_ATTR_REQ:
		return req_decode(d, &m->u.req);
	case UROCE_CM_ATTR_MRA:
		return mra_decode(d, &m->u.mra);
	case UROCE_CM_ATTR_REJ:
		return rej_decode(d, &m->u.rej);
	case UROCE_CM_ATTR_REP:
		return rep_decode(d, &m->u.rep);
	case UROCE_CM_ATTR_RTU:
	case UROCE_CM_ATTR_DREP:
		return rtu_decode(d, &m->u.rtu);
	case UROCE_CM_ATTR_DREQ:
		return dreq_decode(d, &m->u.dreq);
	case UROCE_CM_ATTR_SIDR_REQ:
		return sidr_req_decode(d, &m->u.sidr_req);
	case UROCE_CM_ATTR_SIDR_REP:
		return sidr_rep_decode(d, &m->u.sidr_rep);
	case UROCE_CM_ATTR_LAP:
		return lap_decode(d, &m->u.lap);
	case UROCE_CM_ATTR_APR:
		return apr_decode(d, &m->u.apr);
	default:
		return -EOPNOTSUPP;
	}
}

int
uroce_cm_msg_encode(const struct uroce_cm_msg *m, uint8_t *mad)
{
	struct uroce_mad_hdr h = m->hdr;
	uint8_t *d = mad + D;

	memset(mad, 0, UROCE_MAD_LEN);
	h.base_version = UROCE_MAD_BASE_VERSION;
	h.mgmt_class = UROCE_MGMT_CLASS_CM;
	h.class_version = UROCE_CM_CLASS_VERSION;
	h.method = UROCE_MAD_METHOD_SEND;
	uroce_mad_hdr_encode(mad, &h);
	switch (h.attr_id) {
	case UROCE_CM_ATTR_REQ:
		return req_encode(d, &m->u.req);
	case UROCE_CM_ATTR_MRA:
		return mra_encode(d, &m->u.mra);
	case UROCE_CM_ATTR_REJ:
		return rej_encode(d, &m->u.rej);
	case UROCE_CM_ATTR_REP:
		return rep_encode(d, &m->u.rep);
	case UROCE_CM_ATTR_RTU:
	case UROCE_CM_ATTR_DREP:
		return rtu_encode(d, &m->u.rtu);
	case UROCE_CM_ATTR_DREQ:
		return dreq_encode(d, &m->u.dreq);
	case UROCE_CM_ATTR_SIDR_REQ:
		return sidr_req_encode(d, &m->u.sidr_req);
	case UROCE_CM_ATTR_SIDR_REP:
		return sidr_rep_encode(d, &m->u.sidr_rep);
	case UROCE_CM_ATTR_LAP:
		return lap_encode(d, &m->u.lap);
	case UROCE_CM_ATTR_APR:
		return apr_encode(d, &m->u.apr);
	default:
		return -EINVAL;
	}
}

/* ------------------------------------------------------------------------ */
/* Time values                                                               */
/* ------------------------------------------------------------------------ */

uint32_t
uroce_cm_time_ms(uint8_t t)
{
	/* 4.096 us * 2^t is 2^(t-8) ms rounded down to a power of two, at least 1. */
	if (t > 31)
		t = 31;
	return t <= 8 ? 1u : 1u << (t - 8);
}

uint8_t
uroce_cm_ack_timeout(uint8_t ack_delay, uint8_t packet_life_time)
{
	unsigned int t = packet_life_time + 1u;

	/* The timeout covers a round trip (twice the life time) plus the
	 * peer's ACK delay: with exponents, the larger of the two plus one when
	 * they are close. */
	if (t >= ack_delay)
		t += ack_delay >= t - 1u;
	else
		t = ack_delay + (t >= ack_delay - 1u);
	return (uint8_t)(t > 31 ? 31 : t);
}
