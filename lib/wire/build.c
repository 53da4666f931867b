/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Transmit-side header construction: the BTH and its extension headers from
 * the opcode table, and the Ethernet/VLAN/IP/UDP encapsulation RoCEv2 wraps
 * them in. Bytes match what Linux rxe and ConnectX put on the wire: IPv4 with
 * DF and no options, UDP checksum 0, ICRC appended by the caller.
 */

#include <errno.h>
#include <string.h>

#include "uroce_wire.h"
#include "wire_internal.h"

uint32_t
uroce_hdr_build(uint8_t *buf, uint32_t cap, const struct uroce_bth_fields *bth,
		const struct uroce_ext_fields *ext, uint32_t paylen)
{
	const struct uroce_opcode_info *oi = uroce_opcode_get(bth->opcode);
	uint8_t pad;

	if (oi == NULL || cap < oi->hdr_len)
		return 0;
	if (!(oi->mask & UROCE_F_PAYLOAD) && paylen != 0)
		return 0;
	if ((oi->mask & UROCE_F_ATOMIC_WRITE) && paylen != 8)
		return 0;
	if (paylen > UROCE_MAX_PMTU)
		return 0;
	pad = uroce_pad(paylen);

	/* BTH (IBA 9.2): TVer is always 0. */
	buf[0] = bth->opcode;
	buf[1] = (uint8_t)((bth->se ? 0x80 : 0) | (bth->migreq ? 0x40 : 0) | (pad << 4));
	uroce_put_be16(buf + 2, bth->pkey);
	buf[4] = (uint8_t)((bth->fecn ? 0x80 : 0) | (bth->becn ? 0x40 : 0));
	uroce_put_be24(buf + 5, bth->dqpn & UROCE_QPN_MASK);
	buf[8] = bth->ackreq ? 0x80 : 0;
	uroce_put_be24(buf + 9, bth->psn & UROCE_PSN_MASK);

	if (oi->mask & UROCE_HDR_DETH) {
		uint8_t *h = buf + oi->off_deth;

		uroce_put_be32(h, ext->qkey);
		h[4] = 0;
		uroce_put_be24(h + 5, ext->src_qp & UROCE_QPN_MASK);
	}
	if (oi->mask & UROCE_HDR_XRCETH)
		uroce_put_be32(buf + oi->off_xrceth, ext->xrc_srqn & UROCE_QPN_MASK);
	if (oi->mask & UROCE_HDR_FETH)
		uroce_put_be32(buf + oi->off_feth, ext->feth);
	if (oi->mask & UROCE_HDR_RETH) {
		uint8_t *h = buf + oi->off_reth;

		uroce_put_be64(h, ext->va);
		uroce_put_be32(h + 8, ext->rkey);
		uroce_put_be32(h + 12, ext->dma_len);
	}
	if (oi->mask & UROCE_HDR_AETH) {
		uint8_t *h = buf + oi->off_aeth;

		h[0] = ext->syndrome;
		uroce_put_be24(h + 1, ext->msn & 0xFFFFFF);
	}
	if (oi->mask & UROCE_HDR_ATMETH) {
		uint8_t *h = buf + oi->off_atmeth;

		uroce_put_be64(h, ext->va);
		uroce_put_be32(h + 8, ext->rkey);
		uroce_put_be64(h + 12, ext->swap_add);
		uroce_put_be64(h + 20, ext->compare);
	}
	if (oi->mask & UROCE_HDR_ATMACK)
		uroce_put_be64(buf + oi->off_atmack, ext->orig);
	if (oi->mask & UROCE_HDR_IMMDT)
		uroce_put_be32(buf + oi->off_immdt, ext->imm);
	if (oi->mask & UROCE_HDR_IETH)
		uroce_put_be32(buf + oi->off_ieth, ext->inv_rkey);
	if (oi->mask & UROCE_HDR_CNPRSVD)
		memset(buf + oi->hdr_len - UROCE_CNP_RSVD_LEN, 0, UROCE_CNP_RSVD_LEN);
	return oi->hdr_len;
}

/*
 * The IPv4 header checksum of the header uroce_encap_build() writes for @p e,
 * from the values rather than from the bytes just stored: a wide load of
 * those narrow stores cannot be forwarded from the store buffer and waited
 * for them (half of uroce_encap_build()'s samples in bench_engine).
 */
static uint16_t
ipv4_csum_of(const struct uroce_encap *e, uint16_t total_len, uint8_t hop)
{
	uint32_t sum;

	sum = (0x45u << 8 | e->tclass) + total_len + e->ip_id + 0x4000u +
	      ((uint32_t)hop << 8 | UROCE_IPPROTO_UDP) +
	      uroce_get_be16(e->sgid + 12) + uroce_get_be16(e->sgid + 14) +
	      uroce_get_be16(e->dgid + 12) + uroce_get_be16(e->dgid + 14);
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

uint32_t
uroce_encap_build(uint8_t *buf, uint32_t cap, const struct uroce_encap *e, uint32_t ib_len)
{
	uint32_t len = uroce_encap_len(e);
	uint32_t udp_len = UROCE_UDP_LEN + ib_len;
	uint8_t hop = e->hop_limit ? e->hop_limit : 64;
	uint8_t *p = buf;

	if (e->family != UROCE_IP_V4 && e->family != UROCE_IP_V6)
		return 0;
	if (cap < len || udp_len > 0xFFFF - UROCE_IPV4_LEN)
		return 0;

	memcpy(p, e->dmac, 6);
	memcpy(p + 6, e->smac, 6);
	p += 12;
	if (e->has_vlan) {
		uroce_put_be16(p, UROCE_ETHERTYPE_VLAN);
		uroce_put_be16(p + 2, e->vlan_tci);
		p += UROCE_VLAN_LEN;
	}
	if (e->family == UROCE_IP_V4) {
		uroce_put_be16(p, UROCE_ETHERTYPE_IPV4);
		p += 2;
		p[0] = 0x45;
		p[1] = e->tclass;
		uroce_put_be16(p + 2, (uint16_t)(UROCE_IPV4_LEN + udp_len));
		uroce_put_be16(p + 4, e->ip_id);
		uroce_put_be16(p + 6, 0x4000); /* DF: RoCEv2 is never fragmented */
		p[8] = hop;
		p[9] = UROCE_IPPROTO_UDP;
		memcpy(p + 12, e->sgid + 12, 4);
		memcpy(p + 16, e->dgid + 12, 4);
		uroce_put_be16(p + 10, ipv4_csum_of(e, (uint16_t)(UROCE_IPV4_LEN + udp_len), hop));
		p += UROCE_IPV4_LEN;
	} else {
		uroce_put_be16(p, UROCE_ETHERTYPE_IPV6);
		p += 2;
		uroce_put_be32(p, (6u << 28) | ((uint32_t)e->tclass << 20) |
				  (e->flow_label & 0xFFFFF));
		uroce_put_be16(p + 4, (uint16_t)udp_len);
		p[6] = UROCE_IPPROTO_UDP;
		p[7] = hop;
		memcpy(p + 8, e->sgid, 16);
		memcpy(p + 24, e->dgid, 16);
		p += UROCE_IPV6_LEN;
	}
	uroce_put_be16(p, e->sport);
	uroce_put_be16(p + 2, UROCE_UDP_PORT);
	uroce_put_be16(p + 4, (uint16_t)udp_len);
	uroce_put_be16(p + 6, 0); /* RoCEv2: UDP checksum 0, the ICRC covers the data */
	return len;
}

uint32_t
uroce_frame_wrap(uint8_t *ib, uint32_t headroom, uint32_t ib_len, const struct uroce_encap *e)
{
	uint32_t elen = uroce_encap_len(e);
	uint32_t l2 = UROCE_ETH_LEN + (e->has_vlan ? UROCE_VLAN_LEN : 0);
	uint8_t *frame = ib - elen;

	if (elen > headroom || ib_len < UROCE_ICRC_LEN ||
	    uroce_encap_build(frame, elen + ib_len, e, ib_len) != elen)
		return 0;
	/* The ICRC covers IP through payload (IBA A17.4.1): it starts after L2. */
	uroce_icrc_fill(frame + l2, elen - l2 + ib_len - UROCE_ICRC_LEN, e->family);
	return elen;
}

uint32_t
uroce_frame_wrap_split(uint8_t *ib, uint32_t headroom, uint32_t hdr_len, const uint8_t *payload,
		       uint32_t paylen, uint8_t *trailer, const struct uroce_encap *e)
{
	uint32_t elen = uroce_encap_len(e);
	uint32_t l2 = UROCE_ETH_LEN + (e->has_vlan ? UROCE_VLAN_LEN : 0);
	uint32_t pad = uroce_pad(paylen);
	uint32_t ib_len = hdr_len + paylen + pad + UROCE_ICRC_LEN;
	uint8_t *frame = ib - elen;
	uint32_t crc, l3_len;

	if (elen > headroom || hdr_len < UROCE_BTH_LEN ||
	    uroce_encap_build(frame, elen + hdr_len, e, ib_len) != elen)
		return 0;
	/* IBA 9.2.4: pad bytes are zero. One pass: the payload is read once,
	 * where it lies. */
	memset(trailer, 0, pad);
	l3_len = elen - l2 + hdr_len;
	crc = uroce_icrc_compute2(frame + l2, l3_len, payload, paylen, pad, e->family);
	trailer[pad + 0] = (uint8_t)crc;
	trailer[pad + 1] = (uint8_t)(crc >> 8);
	trailer[pad + 2] = (uint8_t)(crc >> 16);
	trailer[pad + 3] = (uint8_t)(crc >> 24);
	return elen;
}

int
uroce_frame_mark_ce(uint8_t *buf, uint32_t len, struct uroce_frame *f)
{
	uint8_t *ip;
	uint32_t ihl;

	if (buf == NULL || f == NULL || f->l3_off >= len)
		return -EINVAL;
	ip = buf + f->l3_off;
	if (f->family == UROCE_IP_V4) {
		uint32_t sum = 0, i;

		ihl = (uint32_t)(ip[0] & 0x0F) * 4;
		if (ihl < UROCE_IPV4_LEN || len - f->l3_off < ihl)
			return -EINVAL;
		if ((ip[1] & 3) == 3)
			return 0;
		if ((ip[1] & 3) == 0)
			return -EINVAL;
		ip[1] |= 3;
		uroce_put_be16(ip + 10, 0);
		for (i = 0; i < ihl; i += 2)
			sum += uroce_get_be16(ip + i);
		while (sum >> 16)
			sum = (sum & 0xFFFF) + (sum >> 16);
		uroce_put_be16(ip + 10, (uint16_t)~sum);
	} else if (f->family == UROCE_IP_V6) {
		/* Traffic class: low nibble of byte 0, high nibble of byte 1; its
		 * two ECN bits are bits 5-4 of byte 1. */
		if (len - f->l3_off < UROCE_IPV6_LEN)
			return -EINVAL;
		if ((ip[1] & 0x30) == 0x30)
			return 0;
		if ((ip[1] & 0x30) == 0)
			return -EINVAL;
		ip[1] |= 0x30;
	} else {
		return -EINVAL;
	}
	f->tclass |= 3;
	return 1;
}

uint16_t
uroce_udp_sport(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn)
{
	uint32_t fl = flow_label & 0xFFFFF;
	uint32_t low;

	if (fl == 0) {
		/* No label given: derive one from the QPN pair so each connection
		 * hashes to its own ECMP path, yet both ends agree. */
		uint64_t v = (uint64_t)lqpn * rqpn;

		v ^= v >> 20;
		v ^= v >> 40;
		fl = (uint32_t)v & 0xFFFFF;
	}
	/* Fold 20 bits into the 14 free bits of the 0xC000-0xFFFF range. */
	low = (fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14);
	return (uint16_t)(UROCE_SPORT_MIN | low);
}
