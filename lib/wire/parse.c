/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Receive-side validation of RoCEv2 frames. Every length is checked against
 * the bytes actually present before anything is read, and the IP and UDP
 * lengths must agree with each other, so Ethernet padding never becomes
 * payload and a lying length never becomes a read past the buffer.
 */

#include <string.h>

#include "uroce_wire.h"
#include "wire_internal.h"

static const char *const wire_err_names[UROCE_WIRE_ERR_MAX] = {
	[UROCE_WIRE_OK] = "ok",
	[UROCE_WIRE_TRUNCATED] = "truncated",
	[UROCE_WIRE_NOT_ROCEV2] = "not_rocev2",
	[UROCE_WIRE_BAD_IP] = "bad_ip",
	[UROCE_WIRE_BAD_LENGTH] = "bad_length",
	[UROCE_WIRE_BAD_OPCODE] = "bad_opcode",
	[UROCE_WIRE_BAD_TVER] = "bad_tver",
	[UROCE_WIRE_BAD_ICRC] = "bad_icrc",
};

const char *
uroce_wire_strerror(enum uroce_wire_err err)
{
	if ((unsigned int)err >= UROCE_WIRE_ERR_MAX)
		return "unknown";
	return wire_err_names[err];
}

/*
 * ::ffff:a.b.c.d, written as two 8-byte stores: the GID is read back at once
 * as two 8-byte words (the destination check of every received frame), and a
 * load that spans several narrower stores cannot be forwarded from the store
 * buffer; it waits for them to reach the cache (5.8 % of a worker receiving
 * UD SENDs, doc/benchmarks.md).
 */
static void
gid_from_ipv4(uint8_t gid[16], const uint8_t *addr)
{
	const uint64_t zero = 0;
	uint32_t a;
	uint64_t hi;

	memcpy(&a, addr, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	hi = (uint64_t)0xFFFF << 32 | a;
#else
	hi = (uint64_t)a << 32 | 0xFFFF0000u;
#endif
	memcpy(gid, &zero, 8);
	memcpy(gid + 8, &hi, 8);
}

/* Parses UDP at @off (after IP). @l4_len is the IP payload length. */
static enum uroce_wire_err
parse_udp(const uint8_t *buf, uint32_t off, uint32_t l4_len, struct uroce_frame *f)
{
	uint16_t udp_len;

	if (l4_len < UROCE_UDP_LEN)
		return UROCE_WIRE_BAD_LENGTH;
	f->sport = uroce_get_be16(buf + off);
	f->dport = uroce_get_be16(buf + off + 2);
	if (f->dport != UROCE_UDP_PORT)
		return UROCE_WIRE_NOT_ROCEV2;
	udp_len = uroce_get_be16(buf + off + 4);
	/* The UDP and IP lengths must agree: the ICRC sits at the end of both. */
	if (udp_len != l4_len)
		return UROCE_WIRE_BAD_LENGTH;
	if (udp_len < UROCE_UDP_LEN + UROCE_BTH_LEN + UROCE_ICRC_LEN)
		return UROCE_WIRE_BAD_LENGTH;
	f->bth_off = off + UROCE_UDP_LEN;
	f->ib_len = (uint32_t)udp_len - UROCE_UDP_LEN;
	return UROCE_WIRE_OK;
}

static enum uroce_wire_err
parse_ipv4(const uint8_t *buf, uint32_t len, uint32_t off, struct uroce_frame *f)
{
	const uint8_t *ip = buf + off;
	uint32_t ihl, tot_len;
	uint16_t frag;

	if (len - off < UROCE_IPV4_LEN)
		return UROCE_WIRE_TRUNCATED;
	if ((ip[0] >> 4) != 4)
		return UROCE_WIRE_BAD_IP;
	ihl = (uint32_t)(ip[0] & 0xF) * 4;
	if (ihl < UROCE_IPV4_LEN)
		return UROCE_WIRE_BAD_IP;
	if (len - off < ihl)
		return UROCE_WIRE_TRUNCATED;
	f->family = UROCE_IP_V4;
	f->tclass = ip[1];
	f->hop_limit = ip[8];
	gid_from_ipv4(f->sgid, ip + 12);
	gid_from_ipv4(f->dgid, ip + 16);
	tot_len = uroce_get_be16(ip + 2);
	if (tot_len < ihl)
		return UROCE_WIRE_BAD_LENGTH;
	if (ip[9] != UROCE_IPPROTO_UDP)
		return UROCE_WIRE_NOT_ROCEV2;
	if (len - off < tot_len)
		return UROCE_WIRE_TRUNCATED;
	if (wire_ipv4_sum(ip, ihl) != 0xFFFF)
		return UROCE_WIRE_BAD_IP;
	/* RoCEv2 is never fragmented: MF set or a fragment offset is not ours. */
	frag = uroce_get_be16(ip + 6);
	if (frag & 0x3FFF)
		return UROCE_WIRE_BAD_IP;
	return parse_udp(buf, off + ihl, tot_len - ihl, f);
}

static enum uroce_wire_err
parse_ipv6(const uint8_t *buf, uint32_t len, uint32_t off, struct uroce_frame *f)
{
	const uint8_t *ip = buf + off;
	uint32_t vtf, pay_len;

	if (len - off < UROCE_IPV6_LEN)
		return UROCE_WIRE_TRUNCATED;
	vtf = uroce_get_be32(ip);
	if ((vtf >> 28) != 6)
		return UROCE_WIRE_BAD_IP;
	f->family = UROCE_IP_V6;
	f->tclass = (uint8_t)(vtf >> 20);
	f->flow_label = vtf & 0xFFFFF;
	f->hop_limit = ip[7];
	memcpy(f->sgid, ip + 8, 16);
	memcpy(f->dgid, ip + 24, 16);
	/* RoCEv2 puts UDP right after the fixed header; extension headers are not ours. */
	if (ip[6] != UROCE_IPPROTO_UDP)
		return UROCE_WIRE_NOT_ROCEV2;
	pay_len = uroce_get_be16(ip + 4);
	if (len - off - UROCE_IPV6_LEN < pay_len)
		return UROCE_WIRE_TRUNCATED;
	return parse_udp(buf, off + UROCE_IPV6_LEN, pay_len, f);
}

enum uroce_wire_err
uroce_frame_parse(const uint8_t *buf, uint32_t len, struct uroce_frame *f)
{
	uint32_t off = UROCE_ETH_LEN;
	uint16_t etype;
	int tags;

	memset(f, 0, sizeof(*f));
	if (len < UROCE_ETH_LEN)
		return UROCE_WIRE_TRUNCATED;
	memcpy(f->dmac, buf, 6);
	memcpy(f->smac, buf + 6, 6);
	etype = uroce_get_be16(buf + 12);

	/* Up to two tags (802.1ad outer, 802.1Q inner); the innermost TCI is kept. */
	for (tags = 0; tags < 2; tags++) {
		if (etype != UROCE_ETHERTYPE_VLAN && etype != UROCE_ETHERTYPE_QINQ)
			break;
		if (len - off < UROCE_VLAN_LEN)
			return UROCE_WIRE_TRUNCATED;
		f->has_vlan = true;
		f->vlan_tci = uroce_get_be16(buf + off);
		etype = uroce_get_be16(buf + off + 2);
		off += UROCE_VLAN_LEN;
	}
	f->l3_off = off;

	switch (etype) {
	case UROCE_ETHERTYPE_IPV4:
		return parse_ipv4(buf, len, off, f);
	case UROCE_ETHERTYPE_IPV6:
		return parse_ipv6(buf, len, off, f);
	default:
		return UROCE_WIRE_NOT_ROCEV2;
	}
}

enum uroce_wire_err
uroce_pkt_parse(const uint8_t *bth, uint32_t ib_len, struct uroce_pkt *p)
{
	const struct uroce_opcode_info *oi;
	uint32_t rest;
	uint8_t pad;

	if (ib_len < UROCE_BTH_LEN + UROCE_ICRC_LEN)
		return UROCE_WIRE_BAD_LENGTH;
	/* IBA 9.6.1: an opcode this node does not implement is dropped. */
	oi = uroce_opcode_get(uroce_bth_opcode(bth));
	if (oi == NULL)
		return UROCE_WIRE_BAD_OPCODE;
	/* IBA 9.6.1: only transport header version 0 exists. */
	if (uroce_bth_tver(bth) != 0)
		return UROCE_WIRE_BAD_TVER;
	if (ib_len < (uint32_t)oi->hdr_len + UROCE_ICRC_LEN)
		return UROCE_WIRE_BAD_LENGTH;

	rest = ib_len - oi->hdr_len - UROCE_ICRC_LEN; /* payload + pad */
	pad = uroce_bth_padcnt(bth);
	if (!(oi->mask & UROCE_F_PAYLOAD)) {
		if (rest != 0 || pad != 0)
			return UROCE_WIRE_BAD_LENGTH;
	} else {
		/* IBA 9.2.4: payload plus pad fills whole 4-byte words. */
		if ((rest & 3) != 0 || rest < pad)
			return UROCE_WIRE_BAD_LENGTH;
		if (rest - pad > UROCE_MAX_PMTU)
			return UROCE_WIRE_BAD_LENGTH;
		/* IBA C9-92: FIRST and MIDDLE carry exactly one PMTU, so no pad. */
		if ((oi->mask & UROCE_F_FULL_PMTU) && (pad != 0 || uroce_mtu_enum(rest) == 0))
			return UROCE_WIRE_BAD_LENGTH;
		/* IBA 1.5 A19: an ATOMIC WRITE carries exactly 8 bytes. */
		if ((oi->mask & UROCE_F_ATOMIC_WRITE) && (rest != 8 || pad != 0))
			return UROCE_WIRE_BAD_LENGTH;
	}

	p->bth = bth;
	p->info = oi;
	p->payload = bth + oi->hdr_len;
	p->ib_len = ib_len;
	p->paylen = rest - pad;
	p->psn = uroce_bth_psn(bth);
	p->dqpn = uroce_bth_dqpn(bth);
	p->opcode = uroce_bth_opcode(bth);
	p->padcnt = pad;
	p->icrc_late = false;
	p->owner = NULL;
	return UROCE_WIRE_OK;
}

enum uroce_wire_err
uroce_parse(const uint8_t *buf, uint32_t len, struct uroce_frame *f, struct uroce_pkt *p)
{
	enum uroce_wire_err err;

	err = uroce_frame_parse(buf, len, f);
	if (err != UROCE_WIRE_OK)
		return err;
	return uroce_parse_rest(buf, f, false, p);
}

/*
 * Leave the ICRC of the payload of @p p, which uroce_pkt_parse() accepted,
 * to the receiver's copy (p->icrc_late) if its opcode and length allow it:
 * its headers (@p hdrs bytes from @p l3) are folded here, @p icrc is what
 * it carries. @return true if left; otherwise the caller checks it whole,
 * first, so that a corrupted packet is BAD_ICRC (rx_icrc_errors) and not
 * whatever its flipped bits look like.
 */
static bool
icrc_leave_late(const uint8_t *l3, uint32_t hdrs, const uint8_t *icrc,
		enum uroce_ip_family family, struct uroce_pkt *p)
{
	if (!(p->info->mask & UROCE_F_LATE_ICRC) || p->paylen < UROCE_LATE_ICRC_MIN ||
	    !wire_icrc_head(l3, hdrs, family, &p->icrc_seed))
		return false;
	p->icrc_late = true;
	p->icrc_want = wire_icrc_get(icrc);
	return true;
}

enum uroce_wire_err
uroce_parse_split(const uint8_t *buf, uint32_t hdr_len, const uint8_t *payload, uint32_t paylen,
		  const uint8_t *trailer, bool late, struct uroce_frame *f, struct uroce_pkt *p)
{
	uint32_t pad = uroce_pad(paylen), i;
	enum uroce_wire_err err;

	if (paylen > UROCE_MAX_PMTU)
		return UROCE_WIRE_BAD_LENGTH;
	err = uroce_frame_parse(buf, hdr_len + paylen + pad + UROCE_ICRC_LEN, f);
	if (err != UROCE_WIRE_OK)
		return err;
	if (f->bth_off + UROCE_BTH_LEN > hdr_len)
		return UROCE_WIRE_BAD_LENGTH;
	/* IBA 9.2.4: the pad is zero; the ICRC is computed over zeros. */
	for (i = 0; i < pad; i++)
		if (trailer[i] != 0)
			return UROCE_WIRE_BAD_ICRC;
	err = uroce_pkt_parse(buf + f->bth_off, f->ib_len, p);
	/* The headers the opcode names end where the header piece does. */
	if (err == UROCE_WIRE_OK && (p->payload != buf + hdr_len || p->paylen != paylen))
		err = UROCE_WIRE_BAD_LENGTH;
	p->payload = payload;
	if (late && err == UROCE_WIRE_OK &&
	    icrc_leave_late(buf + f->l3_off, hdr_len - f->l3_off, trailer + pad, f->family, p))
		return UROCE_WIRE_OK;
	if (!uroce_icrc_check2(buf + f->l3_off, hdr_len - f->l3_off, payload, paylen, pad,
			       trailer + pad, f->family))
		return UROCE_WIRE_BAD_ICRC;
	return err;
}

enum uroce_wire_err
uroce_parse_rest(const uint8_t *buf, const struct uroce_frame *f, bool late, struct uroce_pkt *p)
{
	const uint8_t *l3 = buf + f->l3_off, *icrc = buf + f->bth_off + f->ib_len - UROCE_ICRC_LEN;
	enum uroce_wire_err err = uroce_pkt_parse(buf + f->bth_off, f->ib_len, p);
	uint32_t i;

	if (late && err == UROCE_WIRE_OK) {
		/* The late check adds the pad as zeros (IBA 9.2.4): a packet
		 * whose pad is not is checked whole, over its own bytes. */
		for (i = 0; i < p->padcnt; i++)
			if (p->payload[p->paylen + i] != 0)
				late = false;
		if (late && icrc_leave_late(l3, (uint32_t)(p->payload - l3), icrc, f->family, p))
			return UROCE_WIRE_OK;
	}
	if (!uroce_icrc_check(l3, (uint32_t)(icrc - l3), f->family))
		return UROCE_WIRE_BAD_ICRC;
	return err;
}
