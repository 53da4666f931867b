/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * MAD header and CM message codecs (lib/cm/mad.c): every message encoded
 * with each field at a distinct value and decoded back; the golden rxe CM
 * exchange (test/vectors/rxe-cm/rxe-write-cm-mads.pcap: two connections of
 * ib_write_bw -R, Linux 6.1) decoded field by field and re-encoded byte for
 * byte; every malformation refused with its own errno; the time helpers.
 */

#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "pcap_rd.h"
#include "uroce_cm.h"
#include "uroce_cma.h"
#include "uroce_wire.h"

#ifndef UROCE_VECTORS_DIR
#error "UROCE_VECTORS_DIR must name test/vectors"
#endif

#define GOLDEN UROCE_VECTORS_DIR "/rxe-cm/rxe-write-cm-mads.pcap"

static void
roundtrip(const struct uroce_cm_msg *in, struct uroce_cm_msg *out)
{
	uint8_t mad[UROCE_MAD_LEN];

	/* zeroed: the tests compare whole structs, padding included */
	memset(out, 0, sizeof(*out));
	cr_assert_eq(uroce_cm_msg_encode(in, mad), 0, "encode %s", uroce_cm_attr_name(in->hdr.attr_id));
	cr_assert_eq(uroce_cm_msg_decode(mad, sizeof(mad), out), 0);
	cr_expect_eq(out->hdr.tid, in->hdr.tid);
	cr_expect_eq(out->hdr.attr_id, in->hdr.attr_id);
	cr_expect_eq(out->hdr.mgmt_class, UROCE_MGMT_CLASS_CM);
	cr_expect_eq(out->hdr.class_version, 2);
	cr_expect_eq(out->hdr.method, UROCE_MAD_METHOD_SEND);
}

static void
fill(uint8_t *p, size_t n, uint8_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static void
path_fill(struct uroce_cm_path *p, uint8_t k)
{
	p->local_lid = (uint16_t)(0x1111 * k);
	p->remote_lid = (uint16_t)(0x2222 + k);
	fill(p->local_gid, 16, (uint8_t)(0x10 + k));
	fill(p->remote_gid, 16, (uint8_t)(0x40 + k));
	p->flow_label = 0xABCDE - k;
	p->packet_rate = (uint8_t)(0x2A + k);
	p->traffic_class = (uint8_t)(0xB8 + k);
	p->hop_limit = (uint8_t)(0x40 + k);
	p->sl = (uint8_t)(0xA + k);
	p->subnet_local = k & 1;
	p->local_ack_timeout = (uint8_t)(0x13 + k);
}

static void
path_expect(const struct uroce_cm_path *a, const struct uroce_cm_path *b)
{
	cr_expect_eq(a->local_lid, b->local_lid);
	cr_expect_eq(a->remote_lid, b->remote_lid);
	cr_expect_arr_eq(a->local_gid, b->local_gid, 16);
	cr_expect_arr_eq(a->remote_gid, b->remote_gid, 16);
	cr_expect_eq(a->flow_label, b->flow_label);
	cr_expect_eq(a->packet_rate, b->packet_rate);
	cr_expect_eq(a->traffic_class, b->traffic_class);
	cr_expect_eq(a->hop_limit, b->hop_limit);
	cr_expect_eq(a->sl, b->sl);
	cr_expect_eq(a->subnet_local, b->subnet_local);
	cr_expect_eq(a->local_ack_timeout, b->local_ack_timeout);
}

Test(mad, header_roundtrip)
{
	struct uroce_mad_hdr h, g;
	uint8_t mad[UROCE_MAD_LEN];

	memset(&h, 0, sizeof(h));
	h.base_version = 1;
	h.mgmt_class = 0x07;
	h.class_version = 2;
	h.method = 0x03;
	h.status = 0x1234;
	h.class_specific = 0x5678;
	h.tid = 0x0102030405060708ull;
	h.attr_id = 0x0010;
	h.attr_mod = 0xA1B2C3D4;
	memset(mad, 0xFF, sizeof(mad));
	memset(&g, 0, sizeof(g));
	uroce_mad_hdr_encode(mad, &h);
	cr_expect_eq(mad[18], 0);
	cr_expect_eq(mad[19], 0);
	uroce_mad_hdr_decode(mad, &g);
	cr_expect_eq(memcmp(&g, &h, sizeof(h)), 0);
	cr_expect_eq(mad[4], 0x12);
	cr_expect_eq(mad[8], 0x01);
	cr_expect_eq(mad[15], 0x08);
	cr_expect_eq(mad[17], 0x10);
	cr_expect_eq(mad[23], 0xD4);
}

Test(mad, req_roundtrip_every_field)
{
	struct uroce_cm_msg m, o;
	struct uroce_cm_req *r = &m.u.req;

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = UROCE_CM_ATTR_REQ;
	m.hdr.tid = 0xFEEDFACECAFEBEEFull;
	r->local_comm_id = 0x11223344;
	r->service_id = 0x0000000001061C06ull;
	r->local_ca_guid = 0x505400fffe180002ull;
	r->local_qkey = 0x0BADF00D;
	r->local_qpn = 0xABCDEF;
	r->responder_resources = 0x7E;
	r->local_eecn = 0x123456;
	r->initiator_depth = 0x5C;
	r->remote_eecn = 0x654321;
	r->remote_cm_response_timeout = 0x1D;
	r->transport = UROCE_CM_TRANSPORT_UC;
	r->e2e_flow_control = true;
	r->starting_psn = 0xFEDCBA;
	r->local_cm_response_timeout = 0x15;
	r->retry_count = 6;
	r->pkey = 0x8001;
	r->path_mtu = UROCE_MTU_4096;
	r->rdc_exists = true;
	r->rnr_retry_count = 5;
	r->max_cm_retries = 0xE;
	r->srq = true;
	r->ext_transport = 3;
	path_fill(&r->primary, 1);
	path_fill(&r->alternate, 2);
	r->sap_supported = true;
	fill(r->private_data, sizeof(r->private_data), 9);
	roundtrip(&m, &o);
	cr_expect_eq(o.u.req.local_comm_id, r->local_comm_id);
	cr_expect_eq(o.u.req.service_id, r->service_id);
	cr_expect_eq(o.u.req.local_ca_guid, r->local_ca_guid);
	cr_expect_eq(o.u.req.local_qkey, r->local_qkey);
	cr_expect_eq(o.u.req.local_qpn, r->local_qpn);
	cr_expect_eq(o.u.req.responder_resources, r->responder_resources);
	cr_expect_eq(o.u.req.local_eecn, r->local_eecn);
	cr_expect_eq(o.u.req.initiator_depth, r->initiator_depth);
	cr_expect_eq(o.u.req.remote_eecn, r->remote_eecn);
	cr_expect_eq(o.u.req.remote_cm_response_timeout, r->remote_cm_response_timeout);
	cr_expect_eq(o.u.req.transport, r->transport);
	cr_expect_eq(o.u.req.e2e_flow_control, r->e2e_flow_control);
	cr_expect_eq(o.u.req.starting_psn, r->starting_psn);
	cr_expect_eq(o.u.req.local_cm_response_timeout, r->local_cm_response_timeout);
	cr_expect_eq(o.u.req.retry_count, r->retry_count);
	cr_expect_eq(o.u.req.pkey, r->pkey);
	cr_expect_eq(o.u.req.path_mtu, r->path_mtu);
	cr_expect_eq(o.u.req.rdc_exists, r->rdc_exists);
	cr_expect_eq(o.u.req.rnr_retry_count, r->rnr_retry_count);
	cr_expect_eq(o.u.req.max_cm_retries, r->max_cm_retries);
	cr_expect_eq(o.u.req.srq, r->srq);
	cr_expect_eq(o.u.req.ext_transport, r->ext_transport);
	path_expect(&o.u.req.primary, &r->primary);
	path_expect(&o.u.req.alternate, &r->alternate);
	cr_expect_eq(o.u.req.sap_supported, r->sap_supported);
	cr_expect_arr_eq(o.u.req.private_data, r->private_data, UROCE_CM_REQ_PDATA);
}

Test(mad, req_refuses_values_wider_than_their_fields)
{
	struct uroce_cm_msg m;
	uint8_t mad[UROCE_MAD_LEN];

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = UROCE_CM_ATTR_REQ;
	m.u.req.local_qpn = 0x1000000;
	cr_expect_eq(uroce_cm_msg_encode(&m, mad), -EINVAL);
	m.u.req.local_qpn = 1;
	m.u.req.retry_count = 8;
	cr_expect_eq(uroce_cm_msg_encode(&m, mad), -EINVAL);
	m.u.req.retry_count = 7;
	m.u.req.primary.flow_label = 0x100000;
	cr_expect_eq(uroce_cm_msg_encode(&m, mad), -EINVAL);
	m.u.req.primary.flow_label = 0;
	m.u.req.path_mtu = 16;
	cr_expect_eq(uroce_cm_msg_encode(&m, mad), -EINVAL);
}

Test(mad, rep_mra_rej_rtu_dreq_drep_roundtrip)
{
	struct uroce_cm_msg m, o;

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = UROCE_CM_ATTR_REP;
	m.u.rep.local_comm_id = 1;
	m.u.rep.remote_comm_id = 2;
	m.u.rep.local_qkey = 3;
	m.u.rep.local_qpn = 0x00ABCD;
	m.u.rep.local_eecn = 0x00EF01;
	m.u.rep.starting_psn = 0x54C4C2;
	m.u.rep.responder_resources = 16;
	m.u.rep.initiator_depth = 17;
	m.u.rep.target_ack_delay = 15;
	m.u.rep.failover_accepted = 2;
	m.u.rep.e2e_flow_control = true;
	m.u.rep.rnr_retry_count = 6;
	m.u.rep.srq = true;
	m.u.rep.local_ca_guid = 0x1122334455667788ull;
	fill(m.u.rep.private_data, UROCE_CM_REP_PDATA, 3);
	roundtrip(&m, &o);
	cr_expect_eq(memcmp(&o.u.rep, &m.u.rep, sizeof(m.u.rep)), 0);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = UROCE_CM_ATTR_MRA;
	m.u.mra.local_comm_id = 5;
	m.u.mra.remote_comm_id = 6;
	m.u.mra.msg_mraed = UROCE_CM_REF_REP;
	m.u.mra.service_timeout = 24;
	fill(m.u.mra.private_data, UROCE_CM_MRA_PDATA, 4);
	roundtrip(&m, &o);
	cr_expect_eq(memcmp(&o.u.mra, &m.u.mra, sizeof(m.u.mra)), 0);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = UROCE_CM_ATTR_REJ;
	m.u.rej.local_comm_id = 7;
	m.u.rej.remote_comm_id = 8;
	m.u.rej.msg_rejected = UROCE_CM_REF_OTHER;
	m.u.rej.ari_length = 72;
	m.u.rej.reason = UROCE_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED;
	fill(m.u.rej.ari, UROCE_CM_ARI_LEN, 5);
	fill(m.u.rej.private_data, UROCE_CM_REJ_PDATA, 6);
	roundtrip(&m, &o);
	cr_expect_eq(memcmp(&o.u.rej, &m.u.rej, sizeof(m.u.rej)), 0);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = UROCE_CM_ATTR_RTU;
	m.u.rtu.local_comm_id = 9;
	m.u.rtu.remote_comm_id = 10;
	fill(m.u.rtu.private_data, UROCE_CM_RTU_PDATA, 7);
	roundtrip(&m, &o);
	cr_expect_eq(memcmp(&o.u.rtu, &m.u.rtu, sizeof(m.u.rtu)), 0);
	m.hdr.attr_id = UROCE_CM_ATTR_DREP;
	roundtrip(&m, &o);
	cr_expect_eq(memcmp(&o.u.rtu, &m.u.rtu, sizeof(m.u.rtu)), 0);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = UROCE_CM_ATTR_DREQ;
	m.u.dreq.local_comm_id = 11;
	m.u.dreq.remote_comm_id = 12;
	m.u.dreq.remote_qpn = 0xFFFFFF;
	fill(m.u.dreq.private_data, UROCE_CM_DREQ_PDATA, 8);
	roundtrip(&m, &o);
	cr_expect_eq(memcmp(&o.u.dreq, &m.u.dreq, sizeof(m.u.dreq)), 0);
}

Test(mad, sidr_lap_apr_roundtrip)
{
	struct uroce_cm_msg m, o;

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = UROCE_CM_ATTR_SIDR_REQ;
	m.u.sidr_req.request_id = 0xDEADBEEF;
	m.u.sidr_req.pkey = 0xFFFF;
	m.u.sidr_req.service_id = 0x0000000001111234ull;
	fill(m.u.sidr_req.private_data, UROCE_CM_SIDR_REQ_PDATA, 1);
	roundtrip(&m, &o);
	cr_expect_eq(memcmp(&o.u.sidr_req, &m.u.sidr_req, sizeof(m.u.sidr_req)), 0);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = UROCE_CM_ATTR_SIDR_REP;
	m.u.sidr_rep.request_id = 0xDEADBEEF;
	m.u.sidr_rep.status = UROCE_CM_SIDR_REJECT;
	m.u.sidr_rep.info_length = 72;
	m.u.sidr_rep.qpn = 0x123456;
	m.u.sidr_rep.service_id = 0x0000000001111234ull;
	m.u.sidr_rep.qkey = UROCE_CMA_UDP_QKEY;
	fill(m.u.sidr_rep.info, UROCE_CM_INFO_LEN, 2);
	fill(m.u.sidr_rep.private_data, UROCE_CM_SIDR_REP_PDATA, 3);
	roundtrip(&m, &o);
	cr_expect_eq(memcmp(&o.u.sidr_rep, &m.u.sidr_rep, sizeof(m.u.sidr_rep)), 0);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = UROCE_CM_ATTR_LAP;
	m.u.lap.local_comm_id = 1;
	m.u.lap.remote_comm_id = 2;
	m.u.lap.remote_qpn = 0x654321;
	m.u.lap.remote_cm_response_timeout = 20;
	path_fill(&m.u.lap.alternate, 3);
	/* LAP carries no alternate remote/local split of SL bits beyond these. */
	fill(m.u.lap.private_data, UROCE_CM_LAP_PDATA, 4);
	roundtrip(&m, &o);
	path_expect(&o.u.lap.alternate, &m.u.lap.alternate);
	cr_expect_eq(o.u.lap.remote_qpn, m.u.lap.remote_qpn);
	cr_expect_eq(o.u.lap.remote_cm_response_timeout, 20);
	cr_expect_arr_eq(o.u.lap.private_data, m.u.lap.private_data, UROCE_CM_LAP_PDATA);

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = UROCE_CM_ATTR_APR;
	m.u.apr.local_comm_id = 3;
	m.u.apr.remote_comm_id = 4;
	m.u.apr.info_length = 5;
	m.u.apr.ap_status = UROCE_CM_APR_UNSUPPORTED;
	fill(m.u.apr.info, UROCE_CM_INFO_LEN, 5);
	fill(m.u.apr.private_data, UROCE_CM_APR_PDATA, 6);
	roundtrip(&m, &o);
	cr_expect_eq(memcmp(&o.u.apr, &m.u.apr, sizeof(m.u.apr)), 0);
}

/* Every malformation has its own errno and touches nothing past 256 bytes. */
Test(mad, bad_mads_refused)
{
	struct uroce_cm_msg m, o;
	uint8_t mad[UROCE_MAD_LEN + 1];

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = UROCE_CM_ATTR_RTU;
	cr_assert_eq(uroce_cm_msg_encode(&m, mad), 0);
	cr_expect_eq(uroce_cm_msg_decode(mad, UROCE_MAD_LEN - 1, &o), -EMSGSIZE);
	cr_expect_eq(uroce_cm_msg_decode(mad, UROCE_MAD_LEN + 1, &o), -EMSGSIZE);
	cr_expect_eq(uroce_cm_msg_decode(NULL, UROCE_MAD_LEN, &o), -EMSGSIZE);
	mad[0] = 2; /* base version */
	cr_expect_eq(uroce_cm_msg_decode(mad, UROCE_MAD_LEN, &o), -EPROTO);
	mad[0] = 1;
	mad[1] = 0x04; /* PerfMgt class */
	cr_expect_eq(uroce_cm_msg_decode(mad, UROCE_MAD_LEN, &o), -EPROTO);
	mad[1] = 0x07;
	mad[2] = 1; /* class version */
	cr_expect_eq(uroce_cm_msg_decode(mad, UROCE_MAD_LEN, &o), -EPROTO);
	mad[2] = 2;
	mad[3] = UROCE_MAD_METHOD_GET;
	cr_expect_eq(uroce_cm_msg_decode(mad, UROCE_MAD_LEN, &o), -EPROTO);
	mad[3] = UROCE_MAD_METHOD_SEND;
	mad[17] = 0x01; /* ClassPortInfo: not a CM message */
	cr_expect_eq(uroce_cm_msg_decode(mad, UROCE_MAD_LEN, &o), -EOPNOTSUPP);
	mad[17] = 0x1B; /* past APR */
	cr_expect_eq(uroce_cm_msg_decode(mad, UROCE_MAD_LEN, &o), -EOPNOTSUPP);
	mad[17] = 0x11; /* MRA with Message MRAed 3 (reserved) */
	mad[24 + 8] = 0xC0;
	cr_expect_eq(uroce_cm_msg_decode(mad, UROCE_MAD_LEN, &o), -EBADMSG);
	mad[24 + 8] = 0x40;
	cr_expect_eq(uroce_cm_msg_decode(mad, UROCE_MAD_LEN, &o), 0);
	mad[17] = 0x12; /* REJ with an ARI longer than its field */
	mad[24 + 8] = 0;
	mad[24 + 9] = 73 << 1;
	cr_expect_eq(uroce_cm_msg_decode(mad, UROCE_MAD_LEN, &o), -EBADMSG);
	mad[24 + 9] = 72 << 1;
	cr_expect_eq(uroce_cm_msg_decode(mad, UROCE_MAD_LEN, &o), 0);
	cr_expect_eq(o.u.rej.ari_length, 72);
	mad[17] = 0x18; /* SIDR_REP with too much additional information */
	mad[24 + 5] = 73;
	cr_expect_eq(uroce_cm_msg_decode(mad, UROCE_MAD_LEN, &o), -EBADMSG);
	mad[17] = 0x1A; /* APR likewise */
	mad[24 + 8] = 73;
	cr_expect_eq(uroce_cm_msg_decode(mad, UROCE_MAD_LEN, &o), -EBADMSG);
	/* Reserved bits are ignored on receive (IBA 13.4.3). */
	mad[17] = 0x14;
	mad[18] = 0xFF;
	cr_expect_eq(uroce_cm_msg_decode(mad, UROCE_MAD_LEN, &o), 0);
	m.hdr.attr_id = 0x0001;
	cr_expect_eq(uroce_cm_msg_encode(&m, mad), -EINVAL);
}

Test(mad, names)
{
	cr_expect_str_eq(uroce_cm_attr_name(UROCE_CM_ATTR_REQ), "REQ");
	cr_expect_str_eq(uroce_cm_attr_name(UROCE_CM_ATTR_APR), "APR");
	cr_expect_str_eq(uroce_cm_attr_name(0x99), "?");
	cr_expect_str_eq(uroce_cm_rej_reason_str(8), "invalid service ID");
	cr_expect_str_eq(uroce_cm_rej_reason_str(34), "unknown");
	cr_expect_str_eq(uroce_cm_rej_reason_str(0xFFFF), "unknown");
}

Test(mad, time_values)
{
	/* 4.096 us * 2^t as 2^(t-8) ms: CM response timeout 20 is 4096 ms. */
	cr_expect_eq(uroce_cm_time_ms(20), 4096);
	cr_expect_eq(uroce_cm_time_ms(16), 256);
	cr_expect_eq(uroce_cm_time_ms(18), 1024);
	cr_expect_eq(uroce_cm_time_ms(8), 1);
	cr_expect_eq(uroce_cm_time_ms(0), 1);
	cr_expect_eq(uroce_cm_time_ms(31), 1u << 23);
	cr_expect_eq(uroce_cm_time_ms(255), 1u << 23);
	/* The golden REQ's ACK timeout 19 comes from ACK delay 15, life 18 (Linux 6.1). */
	cr_expect_eq(uroce_cm_ack_timeout(15, 18), 19);
	cr_expect_eq(uroce_cm_ack_timeout(15, 16), 17);
	cr_expect_eq(uroce_cm_ack_timeout(15, 14), 16);
	cr_expect_eq(uroce_cm_ack_timeout(15, 13), 16);
	cr_expect_eq(uroce_cm_ack_timeout(20, 10), 20);
	cr_expect_eq(uroce_cm_ack_timeout(0, 31), 31);
	cr_expect_eq(uroce_cm_ack_timeout(31, 31), 31);
}

/* ------------------------------------------------------------------------ */
/* The golden exchange                                                       */
/* ------------------------------------------------------------------------ */

struct golden {
	uint8_t frame[512];
	uint32_t len;
	struct uroce_frame f;
	struct uroce_pkt p;
	struct uroce_cm_msg m;
};

static unsigned int
golden_read(struct golden *g, unsigned int max)
{
	struct pcap_rd r;
	unsigned int n = 0;
	int rc;

	cr_assert_eq(pcap_rd_open(&r, GOLDEN), 0, "open %s", GOLDEN);
	while (n < max && (rc = pcap_rd_next(&r, g[n].frame, sizeof(g[n].frame), &g[n].len)) == 1) {
		cr_assert_eq(uroce_parse(g[n].frame, g[n].len, &g[n].f, &g[n].p), UROCE_WIRE_OK,
			     "frame %u does not parse", n + 1);
		n++;
	}
	pcap_rd_close(&r);
	return n;
}

static const uint8_t gid_a[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 1};
static const uint8_t gid_b[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2};

/* QP1 framing of every golden MAD: UD SEND Only, P_Key, QP1 both ways, GSI Q_Key. */
Test(mad, golden_qp1_framing)
{
	static struct golden g[16];
	unsigned int n = golden_read(g, 16), i;

	cr_assert_eq(n, 10);
	for (i = 0; i < n; i++) {
		const uint8_t *deth = g[i].p.bth + UROCE_BTH_LEN;

		cr_expect_eq(g[i].p.opcode, 0x64, "frame %u", i + 1);
		cr_expect_eq(uroce_bth_pkey(g[i].p.bth), 0xFFFF);
		cr_expect_eq(g[i].p.dqpn, 1);
		cr_expect_eq(uroce_deth_qkey(deth), UROCE_CM_GSI_QKEY);
		cr_expect_eq(uroce_deth_src_qp(deth), 1);
		cr_expect_eq(g[i].p.paylen, UROCE_MAD_LEN);
		cr_expect_eq(g[i].f.sport, 55410, "rxe's QP1 source port");
		cr_expect_eq(uroce_cm_msg_decode(g[i].p.payload, g[i].p.paylen, &g[i].m), 0,
			     "frame %u decodes", i + 1);
	}
}

Test(mad, golden_req_field_by_field)
{
	static struct golden g[16];
	const struct uroce_cm_req *r;
	struct uroce_cma_hdr h;

	cr_assert_eq(golden_read(g, 16), 10);
	cr_assert_eq(uroce_cm_msg_decode(g[0].p.payload, g[0].p.paylen, &g[0].m), 0);
	cr_expect_eq(g[0].m.hdr.tid, 0x00000002bce63e97ull);
	cr_expect_eq(g[0].m.hdr.attr_id, UROCE_CM_ATTR_REQ);
	cr_expect_eq(g[0].m.hdr.status, 0);
	cr_expect_eq(g[0].m.hdr.attr_mod, 0);
	r = &g[0].m.u.req;
	cr_expect_eq(r->local_comm_id, 0x973ee6bc);
	cr_expect_eq(r->service_id, 0x0000000001064853ull, "PS_TCP port 18515");
	cr_expect_eq(r->local_ca_guid, 0x505400fffe180002ull);
	cr_expect_eq(r->local_qkey, 0);
	cr_expect_eq(r->local_qpn, 0x11);
	cr_expect_eq(r->responder_resources, 0);
	cr_expect_eq(r->local_eecn, 0);
	cr_expect_eq(r->initiator_depth, 0);
	cr_expect_eq(r->remote_eecn, 0);
	cr_expect_eq(r->remote_cm_response_timeout, 20);
	cr_expect_eq(r->transport, UROCE_CM_TRANSPORT_RC);
	cr_expect_eq(r->e2e_flow_control, false);
	cr_expect_eq(r->starting_psn, 0xd4feac);
	cr_expect_eq(r->local_cm_response_timeout, 20);
	cr_expect_eq(r->retry_count, 7);
	cr_expect_eq(r->pkey, 0xFFFF);
	cr_expect_eq(r->path_mtu, UROCE_MTU_1024);
	cr_expect_eq(r->rdc_exists, false);
	cr_expect_eq(r->rnr_retry_count, 7);
	cr_expect_eq(r->max_cm_retries, 15);
	cr_expect_eq(r->srq, false);
	cr_expect_eq(r->ext_transport, 0);
	cr_expect_eq(r->primary.local_lid, 0xFFFF);
	cr_expect_eq(r->primary.remote_lid, 0xFFFF);
	cr_expect_arr_eq(r->primary.local_gid, gid_b, 16);
	cr_expect_arr_eq(r->primary.remote_gid, gid_a, 16);
	cr_expect_eq(r->primary.flow_label, 0x98F17);
	cr_expect_eq(r->primary.packet_rate, 0);
	cr_expect_eq(r->primary.traffic_class, 0);
	cr_expect_eq(r->primary.hop_limit, 64);
	cr_expect_eq(r->primary.sl, 0);
	cr_expect_eq(r->primary.subnet_local, false);
	cr_expect_eq(r->primary.local_ack_timeout, 19);
	cr_expect_eq(r->alternate.local_lid, 0);
	cr_expect_eq(r->alternate.hop_limit, 0);
	/* The CMA header: version 0, IPv4, source port 0xd0bc, the IPs. */
	cr_assert_eq(uroce_cma_hdr_decode(r->private_data, UROCE_CM_REQ_PDATA, &h), 0);
	cr_expect_eq(h.version, 0);
	cr_expect_eq(h.ip_version, 4);
	cr_expect_eq(h.src_port, 0xd0bc);
	cr_expect_arr_eq(h.src_ip, gid_b, 16);
	cr_expect_arr_eq(h.dst_ip, gid_a, 16);
	/* rdma_cm's RoCE flow label from the two ports. */
	cr_expect_eq(((uint32_t)h.src_port * 31 + 0x4853) & 0xFFFFF, r->primary.flow_label);
}

Test(mad, golden_rep_rtu_dreq_drep_field_by_field)
{
	static struct golden g[16];
	unsigned int i;

	cr_assert_eq(golden_read(g, 16), 10);
	for (i = 0; i < 10; i++)
		cr_assert_eq(uroce_cm_msg_decode(g[i].p.payload, g[i].p.paylen, &g[i].m), 0);
	/* REP: the passive side's comm ID, its QP, the PSN the active side sends with. */
	cr_expect_eq(g[1].m.hdr.attr_id, UROCE_CM_ATTR_REP);
	cr_expect_eq(g[1].m.hdr.tid, g[0].m.hdr.tid, "REP echoes the REQ's TID");
	cr_expect_eq(g[1].m.u.rep.local_comm_id, 0x079c7e65);
	cr_expect_eq(g[1].m.u.rep.remote_comm_id, 0x973ee6bc);
	cr_expect_eq(g[1].m.u.rep.local_qkey, 0);
	cr_expect_eq(g[1].m.u.rep.local_qpn, 0x11);
	cr_expect_eq(g[1].m.u.rep.local_eecn, 0);
	cr_expect_eq(g[1].m.u.rep.starting_psn, 0x54c4c2);
	cr_expect_eq(g[1].m.u.rep.responder_resources, 0);
	cr_expect_eq(g[1].m.u.rep.initiator_depth, 0);
	cr_expect_eq(g[1].m.u.rep.target_ack_delay, 15);
	cr_expect_eq(g[1].m.u.rep.failover_accepted, 0);
	cr_expect_eq(g[1].m.u.rep.e2e_flow_control, false);
	cr_expect_eq(g[1].m.u.rep.rnr_retry_count, 7);
	cr_expect_eq(g[1].m.u.rep.srq, false);
	cr_expect_eq(g[1].m.u.rep.local_ca_guid, 0x505400fffe180001ull);
	/* RTU */
	cr_expect_eq(g[2].m.hdr.attr_id, UROCE_CM_ATTR_RTU);
	cr_expect_eq(g[2].m.hdr.tid, g[0].m.hdr.tid);
	cr_expect_eq(g[2].m.u.rtu.local_comm_id, 0x973ee6bc);
	cr_expect_eq(g[2].m.u.rtu.remote_comm_id, 0x079c7e65);
	/* The second connection: another QP, PSN and flow label. */
	cr_expect_eq(g[3].m.u.req.local_qpn, 0x12);
	cr_expect_eq(g[3].m.u.req.starting_psn, 0x7554d7);
	cr_expect_eq(g[3].m.u.req.primary.flow_label, 0x40B61);
	cr_expect_eq(g[4].m.u.rep.starting_psn, 0x0ea1bb);
	/* DREQ from the active side, naming the passive side's QP... */
	cr_expect_eq(g[6].m.hdr.attr_id, UROCE_CM_ATTR_DREQ);
	cr_expect_eq(g[6].m.u.dreq.local_comm_id, 0x963ee6bc);
	cr_expect_eq(g[6].m.u.dreq.remote_comm_id, 0x059c7e65);
	cr_expect_eq(g[6].m.u.dreq.remote_qpn, 0x12);
	/* ...answered by a DREP with its TID. */
	cr_expect_eq(g[7].m.hdr.attr_id, UROCE_CM_ATTR_DREP);
	cr_expect_eq(g[7].m.hdr.tid, g[6].m.hdr.tid);
	cr_expect_eq(g[7].m.u.rtu.local_comm_id, 0x059c7e65);
	cr_expect_eq(g[7].m.u.rtu.remote_comm_id, 0x963ee6bc);
	/* DREQ from the passive side (of the first connection): a TID of its own. */
	cr_expect_eq(g[8].m.hdr.attr_id, UROCE_CM_ATTR_DREQ);
	cr_expect_eq(g[8].m.hdr.tid, 0x00000002657e9c07ull);
	cr_expect_eq(g[8].m.u.dreq.remote_qpn, 0x11);
	cr_expect_eq(g[9].m.hdr.tid, g[8].m.hdr.tid);
}

/* Decoding then encoding gives the golden bytes back: no field is lost. */
Test(mad, golden_reencodes_byte_for_byte)
{
	static struct golden g[16];
	uint8_t mad[UROCE_MAD_LEN];
	unsigned int i;

	cr_assert_eq(golden_read(g, 16), 10);
	for (i = 0; i < 10; i++) {
		cr_assert_eq(uroce_cm_msg_decode(g[i].p.payload, g[i].p.paylen, &g[i].m), 0);
		cr_assert_eq(uroce_cm_msg_encode(&g[i].m, mad), 0);
		cr_expect_arr_eq(mad, g[i].p.payload, UROCE_MAD_LEN, "frame %u (%s)", i + 1,
				 uroce_cm_attr_name(g[i].m.hdr.attr_id));
	}
}

/* ------------------------------------------------------------------------ */
/* uroce in rxe's place: the golden REQ answered                              */
/* ------------------------------------------------------------------------ */

static struct {
	uint8_t mad[4][UROCE_MAD_LEN];
	struct uroce_cm_addr to[4];
	unsigned int n;
	struct uroce_cma_event ev[4];
	unsigned int nev;
} srv;
static int srv_owner;

static uint64_t
srv_now(void *ctx)
{
	(void)ctx;
	return 1000000;
}

static int
srv_send(void *ctx, const struct uroce_cm_addr *to, const uint8_t *mad)
{
	(void)ctx;
	cr_assert_lt(srv.n, 4);
	memcpy(srv.mad[srv.n], mad, UROCE_MAD_LEN);
	srv.to[srv.n++] = *to;
	return 0;
}

static int
srv_event(void *ctx, struct uroce_cma_id *id, const struct uroce_cma_event *ev)
{
	(void)ctx;
	cr_assert_lt(srv.nev, 4);
	srv.ev[srv.nev++] = *ev;
	if (ev->type == UROCE_CMA_EV_CONNECT_REQUEST)
		uroce_cma_id_set_owner(id, &srv_owner);
	return 0;
}

/*
 * uroce as perftest's server in VM A's place: rxe's REQ (frame 1) gives a
 * CONNECT_REQUEST with what the client asked, and the REP uroce sends to
 * rxe's QP1 carries what Linux's ib_cm and rdma_cm read from rxe's own REP
 * (frame 2): the REQ's TID and comm ID echoed, the QP and PSN, perftest's
 * resources, no failover, no end-to-end credits, the RNR retry count; the
 * QP gets the PSNs, path and flow label. rxe's RTU (frame 3) then
 * establishes the connection.
 */
Test(mad, golden_req_answered_as_rxe_answers)
{
	static const struct uroce_cma_ops ops = {srv_now, srv_send, srv_event, NULL};
	static struct golden g[16];
	struct uroce_cma_conf c;
	struct uroce_cma *cma;
	struct uroce_cma_id *l, *s;
	struct uroce_cma_addr any = {.family = 4, .port = 0x4853};
	struct uroce_cma_conn_param ap;
	struct uroce_cm_addr from;
	struct uroce_cm_msg rep, rtu;
	const struct uroce_cm_rep *want;
	struct uroce_cm_qp_attr qa;
	int mask;

	memset(&srv, 0, sizeof(srv));
	cr_assert_eq(golden_read(g, 16), 10);
	cr_assert_eq(uroce_cm_msg_decode(g[1].p.payload, g[1].p.paylen, &g[1].m), 0);
	want = &g[1].m.u.rep;
	memset(&c, 0, sizeof(c));
	c.ops = &ops;
	c.ca_guid = 0x505400fffe180001ull;
	c.seed = 1;
	c.n_gid = 1;
	memcpy(c.gids[0], gid_a, 16);
	c.active_mtu = UROCE_MTU_1024;
	cma = uroce_cma_create(&c);
	cr_assert_not_null(cma);
	any.ip[10] = 0xff;
	any.ip[11] = 0xff;
	l = uroce_cma_id_create(cma, &srv_owner, UROCE_CMA_PS_TCP, UROCE_QPT_RC);
	cr_assert_eq(uroce_cma_bind(l, &any), 0);
	cr_assert_eq(uroce_cma_listen(l, 0), 0);
	/* the REQ as QP1 hands it over: from rxe's GID and QP1 */
	memset(&from, 0, sizeof(from));
	memcpy(from.sgid, gid_a, 16);
	memcpy(from.dgid, gid_b, 16);
	from.remote_qpn = 1;
	from.pkey = 0xFFFF;
	from.hop_limit = 64;
	uroce_cma_rx(cma, &from, g[0].p.payload, g[0].p.paylen);
	cr_assert_eq(srv.nev, 1, "CONNECT_REQUEST");
	cr_expect_eq(srv.ev[0].type, UROCE_CMA_EV_CONNECT_REQUEST);
	cr_expect_eq(srv.ev[0].conn.qp_num, 0x11);
	cr_expect_eq(srv.ev[0].conn.rnr_retry_count, 7);
	cr_expect_eq(srv.ev[0].conn.private_data_len, UROCE_CM_REQ_PDATA - UROCE_CMA_HDR_LEN);
	s = srv.ev[0].id;
	/* perftest's accept, as VM A's: QP 0x11, no reads either way */
	memset(&ap, 0, sizeof(ap));
	ap.qp_num = want->local_qpn;
	ap.retry_count = 7;
	ap.rnr_retry_count = 7;
	cr_assert_eq(uroce_cma_accept(s, &ap), 0);
	cr_assert_eq(srv.n, 1, "one REP");
	cr_expect_arr_eq(srv.to[0].dgid, gid_b, 16, "to rxe's GID");
	cr_expect_arr_eq(srv.to[0].sgid, gid_a, 16);
	cr_expect_eq(srv.to[0].remote_qpn, 1, "to rxe's QP1");
	cr_assert_eq(uroce_cm_msg_decode(srv.mad[0], UROCE_MAD_LEN, &rep), 0);
	cr_expect_eq(rep.hdr.attr_id, UROCE_CM_ATTR_REP);
	cr_expect_eq(rep.hdr.tid, g[1].m.hdr.tid, "the REQ's TID, as rxe's REP");
	cr_expect_eq(rep.hdr.status, 0);
	cr_expect_eq(rep.u.rep.remote_comm_id, want->remote_comm_id);
	cr_expect_eq(rep.u.rep.local_qkey, want->local_qkey);
	cr_expect_eq(rep.u.rep.local_qpn, want->local_qpn);
	cr_expect_eq(rep.u.rep.local_eecn, 0);
	cr_expect_eq(rep.u.rep.responder_resources, want->responder_resources);
	cr_expect_eq(rep.u.rep.initiator_depth, want->initiator_depth);
	cr_expect_eq(rep.u.rep.failover_accepted, want->failover_accepted);
	cr_expect_eq(rep.u.rep.e2e_flow_control, want->e2e_flow_control);
	cr_expect_eq(rep.u.rep.rnr_retry_count, want->rnr_retry_count);
	cr_expect_eq(rep.u.rep.srq, want->srq);
	cr_expect_eq(rep.u.rep.local_ca_guid, c.ca_guid);
	/* the QP perftest moves to RTR/RTS: each side's Starting PSN is the
	 * one it receives from (Linux's rdma_cm: its seq_num), so it receives
	 * from the REP's and sends from the REQ's; rxe's QP over the REQ's path */
	cr_assert_eq(uroce_cma_init_qp_attr(s, UROCE_QPS_RTR, &qa, &mask), 0);
	cr_expect_eq(qa.dest_qp_num, 0x11);
	cr_expect_eq(qa.rq_psn, rep.u.rep.starting_psn);
	cr_expect_eq(qa.path_mtu, UROCE_MTU_1024);
	cr_expect_arr_eq(qa.dgid, gid_b, 16);
	cr_expect_eq(qa.flow_label, 0x98F17, "the REQ's flow label (the data's UDP port)");
	cr_assert_eq(uroce_cma_init_qp_attr(s, UROCE_QPS_RTS, &qa, &mask), 0);
	cr_expect_eq(qa.sq_psn, 0xd4feac);
	cr_expect_eq(qa.retry_cnt, 7);
	cr_expect_eq(qa.rnr_retry, 7);
	/* rxe's RTU, its remote comm ID made ours */
	cr_assert_eq(uroce_cm_msg_decode(g[2].p.payload, g[2].p.paylen, &rtu), 0);
	rtu.u.rtu.remote_comm_id = rep.u.rep.local_comm_id;
	cr_assert_eq(uroce_cm_msg_encode(&rtu, srv.mad[3]), 0);
	uroce_cma_rx(cma, &from, srv.mad[3], UROCE_MAD_LEN);
	cr_assert_eq(srv.nev, 2);
	cr_expect_eq(srv.ev[1].type, UROCE_CMA_EV_ESTABLISHED);
	uroce_cma_destroy(cma);
}
