/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The RoCEv2 wire format: the InfiniBand transport headers (BTH and its
 * extension headers), the Ethernet/VLAN/IPv4/IPv6/UDP encapsulation that
 * RoCEv2 puts around them, the declarative opcode table, parsing with full
 * validation, building, the invariant CRC (ICRC), and the protocol arithmetic
 * (PSN, AETH syndromes, RNR timer, MTU enum) that both ends must agree on.
 *
 * Headers are byte buffers read and written through accessors; nothing here
 * casts a packet to a struct, and nothing reads outside the length it is given.
 * This library is part of the core and never includes DPDK.
 */

#ifndef UROCE_WIRE_H
#define UROCE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "uroce_common.h"
#include "uroce_limits.h"
#include "uroce_verbs_defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Lengths and constants                                                     */
/* ------------------------------------------------------------------------ */

#define UROCE_UDP_PORT       4791  /**< IANA RoCEv2 UDP destination port */
#define UROCE_SPORT_MIN      0xC000 /**< RoCEv2 UDP source port range start */

#define UROCE_ETH_LEN        14
#define UROCE_VLAN_LEN       4
#define UROCE_IPV4_LEN       20    /**< without options (uroce never sends any) */
#define UROCE_IPV6_LEN       40
#define UROCE_UDP_LEN        8

#define UROCE_ETHERTYPE_IPV4 0x0800
#define UROCE_ETHERTYPE_IPV6 0x86DD
#define UROCE_ETHERTYPE_ARP  0x0806
#define UROCE_ETHERTYPE_VLAN 0x8100
#define UROCE_ETHERTYPE_QINQ 0x88A8
#define UROCE_IPPROTO_UDP    17

#define UROCE_BTH_LEN        12
#define UROCE_DETH_LEN       8
#define UROCE_RETH_LEN       16
#define UROCE_AETH_LEN       4
#define UROCE_ATMETH_LEN     28
#define UROCE_ATMACK_LEN     8
#define UROCE_IMMDT_LEN      4
#define UROCE_IETH_LEN       4
#define UROCE_FETH_LEN       4     /**< FLUSH extended transport header (IBA 1.5 A19) */
#define UROCE_XRCETH_LEN     4     /**< XRC extended transport header (IBA 1.2, 9.3.4.1) */
#define UROCE_CNP_RSVD_LEN   16    /**< reserved bytes after the BTH of a CNP */
#define UROCE_ICRC_LEN       4

#define UROCE_PSN_MASK       0xFFFFFFu
#define UROCE_QPN_MASK       0xFFFFFFu
#define UROCE_DEFAULT_PKEY   0xFFFF
#define UROCE_GSI_QKEY       0x80010000u

/* ------------------------------------------------------------------------ */
/* Opcodes (IBA 9.2.1, table 35; RoCEv2 annex A17 for CNP)                   */
/* ------------------------------------------------------------------------ */

/** Transport service, the top three bits of the opcode. */
enum uroce_service {
	UROCE_SVC_RC = 0x00,
	UROCE_SVC_UC = 0x20,
	UROCE_SVC_RD = 0x40, /**< not supported: parsed as bad_opcode */
	UROCE_SVC_UD = 0x60,
	UROCE_SVC_CNP = 0x80,
	UROCE_SVC_XRC = 0xA0, /**< extended reliable connected (IBA 1.2, 9.2.1) */
};

/** Operation, the low five bits of the opcode. */
enum uroce_op {
	UROCE_OP_SEND_FIRST = 0x00,
	UROCE_OP_SEND_MIDDLE = 0x01,
	UROCE_OP_SEND_LAST = 0x02,
	UROCE_OP_SEND_LAST_WITH_IMMEDIATE = 0x03,
	UROCE_OP_SEND_ONLY = 0x04,
	UROCE_OP_SEND_ONLY_WITH_IMMEDIATE = 0x05,
	UROCE_OP_RDMA_WRITE_FIRST = 0x06,
	UROCE_OP_RDMA_WRITE_MIDDLE = 0x07,
	UROCE_OP_RDMA_WRITE_LAST = 0x08,
	UROCE_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09,
	UROCE_OP_RDMA_WRITE_ONLY = 0x0A,
	UROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0B,
	UROCE_OP_RDMA_READ_REQUEST = 0x0C,
	UROCE_OP_RDMA_READ_RESPONSE_FIRST = 0x0D,
	UROCE_OP_RDMA_READ_RESPONSE_MIDDLE = 0x0E,
	UROCE_OP_RDMA_READ_RESPONSE_LAST = 0x0F,
	UROCE_OP_RDMA_READ_RESPONSE_ONLY = 0x10,
	UROCE_OP_ACKNOWLEDGE = 0x11,
	UROCE_OP_ATOMIC_ACKNOWLEDGE = 0x12,
	UROCE_OP_COMPARE_SWAP = 0x13,
	UROCE_OP_FETCH_ADD = 0x14,
	UROCE_OP_SEND_LAST_WITH_INVALIDATE = 0x16,
	UROCE_OP_SEND_ONLY_WITH_INVALIDATE = 0x17,
	UROCE_OP_FLUSH = 0x1C,         /**< IBA 1.5 A19: BTH + FETH + RETH, no payload */
	UROCE_OP_ATOMIC_WRITE = 0x1D,  /**< IBA 1.5 A19: BTH + RETH + 8 bytes */
};

/** Full 8-bit opcode from a service and an operation. */
#define UROCE_OPCODE(svc, op) ((uint8_t)((svc) | (op)))

/** The operation (enum uroce_op) of a full 8-bit opcode, without its service. */
#define UROCE_OPCODE_OP(opcode) ((uint8_t)((opcode) & 0x1F))

/** The RoCEv2 congestion notification packet opcode. */
#define UROCE_OPCODE_CNP 0x81

/* Header and role bits of an opcode-table entry. */
#define UROCE_HDR_DETH     (1u << 0)
#define UROCE_HDR_RETH     (1u << 1)
#define UROCE_HDR_AETH     (1u << 2)
#define UROCE_HDR_ATMETH   (1u << 3)
#define UROCE_HDR_ATMACK   (1u << 4)
#define UROCE_HDR_IMMDT    (1u << 5)
#define UROCE_HDR_IETH     (1u << 6)
#define UROCE_HDR_CNPRSVD  (1u << 7)  /**< 16 reserved bytes (CNP) */
#define UROCE_F_PAYLOAD    (1u << 8)  /**< may carry payload */
#define UROCE_F_FULL_PMTU  (1u << 9)  /**< FIRST/MIDDLE: payload must be exactly the PMTU */
#define UROCE_F_REQ        (1u << 10) /**< request (requester → responder) */
#define UROCE_F_RESP       (1u << 11) /**< response (ACK, READ response, atomic ACK) */
#define UROCE_F_SEND       (1u << 12)
#define UROCE_F_WRITE      (1u << 13)
#define UROCE_F_READ       (1u << 14) /**< READ request or READ response */
#define UROCE_F_ATOMIC     (1u << 15) /**< atomic request or atomic ACK */
#define UROCE_F_START      (1u << 16) /**< first packet of a message (FIRST or ONLY) */
#define UROCE_F_MIDDLE     (1u << 17)
#define UROCE_F_END        (1u << 18) /**< last packet of a message (LAST or ONLY) */
#define UROCE_F_IMM        UROCE_HDR_IMMDT
#define UROCE_F_INV        UROCE_HDR_IETH
#define UROCE_F_CNP        (1u << 19)
#define UROCE_HDR_FETH     (1u << 20) /**< FLUSH extended transport header */
#define UROCE_F_FLUSH      (1u << 21) /**< FLUSH request (IBA 1.5 A19) */
#define UROCE_F_ATOMIC_WRITE (1u << 22) /**< ATOMIC WRITE request (IBA 1.5 A19) */
#define UROCE_HDR_XRCETH   (1u << 23) /**< XRC SRQ number: every XRC request (IBA 1.2) */
/** Packet whose payload lands where the receiver's state puts it, not
 * where the packet says (RC SEND and WRITE MIDDLE/LAST, READ responses; UD
 * SENDs, into the next receive WQE): its ICRC may be checked as the payload
 * is copied (see uroce_parse_split()). */
#define UROCE_F_LATE_ICRC  (1u << 24)

/** One entry of the opcode table: the single source of truth for layout. */
struct uroce_opcode_info {
	/** IBA name (table 35), e.g. "RC RDMA WRITE Only"; NULL if the opcode is invalid. */
	const char *name;
	uint32_t mask;        /**< UROCE_HDR_* and UROCE_F_* bits */
	uint8_t hdr_len;      /**< BTH plus every extension header */
	/** Offset from the start of the BTH of each extension header, 0 if absent. */
	uint8_t off_deth;
	uint8_t off_xrceth;
	uint8_t off_feth;
	uint8_t off_reth;
	uint8_t off_aeth;
	uint8_t off_atmeth;
	uint8_t off_atmack;
	uint8_t off_immdt;
	uint8_t off_ieth;
};

/** The 256-entry opcode table; entries with name == NULL are invalid. */
extern const struct uroce_opcode_info uroce_opcode_table[256];

/** Table entry for @p opcode, or NULL if uroce does not accept it. */
static inline const struct uroce_opcode_info *
uroce_opcode_get(uint8_t opcode)
{
	const struct uroce_opcode_info *oi = &uroce_opcode_table[opcode];

	return oi->name != NULL ? oi : NULL;
}

/* ------------------------------------------------------------------------ */
/* BTH accessors (IBA 9.2). @p bth points at the first byte of the BTH.      */
/* ------------------------------------------------------------------------ */

static inline uint8_t uroce_bth_opcode(const uint8_t *bth) { return bth[0]; }
static inline bool uroce_bth_se(const uint8_t *bth) { return bth[1] & 0x80; }
static inline bool uroce_bth_migreq(const uint8_t *bth) { return bth[1] & 0x40; }
static inline uint8_t uroce_bth_padcnt(const uint8_t *bth) { return (bth[1] >> 4) & 0x3; }
static inline uint8_t uroce_bth_tver(const uint8_t *bth) { return bth[1] & 0xF; }
static inline uint16_t uroce_bth_pkey(const uint8_t *bth) { return uroce_get_be16(bth + 2); }
static inline bool uroce_bth_fecn(const uint8_t *bth) { return bth[4] & 0x80; }
static inline bool uroce_bth_becn(const uint8_t *bth) { return bth[4] & 0x40; }
static inline uint32_t uroce_bth_dqpn(const uint8_t *bth) { return uroce_get_be24(bth + 5); }
static inline bool uroce_bth_ackreq(const uint8_t *bth) { return bth[8] & 0x80; }
static inline uint32_t uroce_bth_psn(const uint8_t *bth) { return uroce_get_be24(bth + 9); }

/** BTH fields for building. */
struct uroce_bth_fields {
	uint8_t opcode;
	bool se;        /**< solicited event */
	bool migreq;    /**< rxe sends 0; receivers accept either (no APM on RoCE) */
	uint8_t padcnt; /**< filled by uroce_hdr_build() from the payload length */
	uint16_t pkey;
	bool fecn;
	bool becn;
	uint32_t dqpn;
	bool ackreq;
	uint32_t psn;
};

/* Extension header accessors. Each takes a pointer to that header. */
static inline uint64_t uroce_reth_va(const uint8_t *h) { return uroce_get_be64(h); }
static inline uint32_t uroce_reth_rkey(const uint8_t *h) { return uroce_get_be32(h + 8); }
static inline uint32_t uroce_reth_dma_len(const uint8_t *h) { return uroce_get_be32(h + 12); }
static inline uint8_t uroce_aeth_syndrome(const uint8_t *h) { return h[0]; }
static inline uint32_t uroce_aeth_msn(const uint8_t *h) { return uroce_get_be24(h + 1); }
static inline uint64_t uroce_atmeth_va(const uint8_t *h) { return uroce_get_be64(h); }
static inline uint32_t uroce_atmeth_rkey(const uint8_t *h) { return uroce_get_be32(h + 8); }
static inline uint64_t uroce_atmeth_swap_add(const uint8_t *h) { return uroce_get_be64(h + 12); }
static inline uint64_t uroce_atmeth_compare(const uint8_t *h) { return uroce_get_be64(h + 20); }
static inline uint64_t uroce_atmack_orig(const uint8_t *h) { return uroce_get_be64(h); }
static inline uint32_t uroce_immdt_imm(const uint8_t *h) { return uroce_get_be32(h); }
static inline uint32_t uroce_ieth_rkey(const uint8_t *h) { return uroce_get_be32(h); }
static inline uint32_t uroce_deth_qkey(const uint8_t *h) { return uroce_get_be32(h); }
static inline uint32_t uroce_deth_src_qp(const uint8_t *h) { return uroce_get_be24(h + 5); }
static inline uint32_t uroce_feth_word(const uint8_t *h) { return uroce_get_be32(h); }
/* XRCETH (IBA 1.2, 9.3.4.1): 8 reserved bits, then the 24-bit XRC SRQ number. */
static inline uint32_t uroce_xrceth_srqn(const uint8_t *h) { return uroce_get_be24(h + 1); }

/* FETH (IBA 1.5 A19.4.1): placement type in bits 3:0, selectivity level in
 * bits 5:4; every other bit is reserved. */
#define UROCE_FETH_PLT_MASK   0x0Fu
#define UROCE_FETH_SEL_SHIFT  4
#define UROCE_FETH_SEL_MASK   0x30u

/* Placement types and levels: enum uroce_flush_type and uroce_flush_level. */
/** The FETH word of a placement type set and a selectivity level. */
static inline uint32_t
uroce_feth_make(uint8_t type, uint8_t level)
{
	return (uint32_t)(type & UROCE_FETH_PLT_MASK) |
	       ((uint32_t)level << UROCE_FETH_SEL_SHIFT & UROCE_FETH_SEL_MASK);
}

static inline uint8_t
uroce_feth_type(uint32_t feth)
{
	return (uint8_t)(feth & UROCE_FETH_PLT_MASK);
}

static inline uint8_t
uroce_feth_level(uint32_t feth)
{
	return (uint8_t)((feth & UROCE_FETH_SEL_MASK) >> UROCE_FETH_SEL_SHIFT);
}

/**
 * True if @p feth is a FLUSH request uroce can interpret: at least one
 * placement type and only GLOBAL/PERSISTENT, selectivity RANGE or MR, every
 * reserved bit clear. Anything else is a malformed request.
 */
static inline bool
uroce_feth_valid(uint32_t feth)
{
	uint8_t t = uroce_feth_type(feth);

	return (feth & ~(UROCE_FETH_PLT_MASK | UROCE_FETH_SEL_MASK)) == 0 && t != 0 &&
	       (t & ~(UROCE_FLUSH_GLOBAL | UROCE_FLUSH_PERSISTENT)) == 0 &&
	       uroce_feth_level(feth) <= UROCE_FLUSH_MR;
}

/** Extension header fields for building; only those the opcode carries are used. */
struct uroce_ext_fields {
	uint64_t va;        /**< RETH or AtomicETH virtual address */
	uint32_t rkey;      /**< RETH or AtomicETH R_Key */
	uint32_t dma_len;   /**< RETH DMA length */
	uint8_t syndrome;   /**< AETH */
	uint32_t msn;       /**< AETH */
	uint64_t swap_add;  /**< AtomicETH swap (CMP&SWP) or add (FETCH&ADD) */
	uint64_t compare;   /**< AtomicETH compare */
	uint64_t orig;      /**< AtomicAckETH original remote data */
	uint32_t imm;       /**< ImmDt, in host order (sent big-endian) */
	uint32_t inv_rkey;  /**< IETH */
	uint32_t qkey;      /**< DETH */
	uint32_t src_qp;    /**< DETH */
	uint32_t feth;      /**< FETH word (uroce_feth_make()) */
	uint32_t xrc_srqn;  /**< XRCETH: the responder's XRC SRQ number (24 bits) */
};

/* ------------------------------------------------------------------------ */
/* Parsing                                                                   */
/* ------------------------------------------------------------------------ */

/**
 * Why a packet was rejected. Each has a short name (uroce_wire_strerror())
 * used by counters and by `uroce-ctl decode`.
 */
enum uroce_wire_err {
	UROCE_WIRE_OK = 0,
	UROCE_WIRE_TRUNCATED,   /**< "truncated": a header or length runs past the buffer */
	UROCE_WIRE_NOT_ROCEV2,  /**< "not_rocev2": not Ethernet/[VLAN]/IP/UDP to port 4791 */
	UROCE_WIRE_BAD_IP,      /**< "bad_ip": IP version, IHL, checksum or a fragment */
	UROCE_WIRE_BAD_LENGTH,  /**< "bad_length": IP/UDP/BTH lengths disagree, or with the table */
	UROCE_WIRE_BAD_OPCODE,  /**< "bad_opcode": opcode not in the table */
	UROCE_WIRE_BAD_TVER,    /**< "bad_tver": BTH transport version is not 0 */
	UROCE_WIRE_BAD_ICRC,    /**< "bad_icrc": invariant CRC mismatch */
	UROCE_WIRE_ERR_MAX,
};

/** Short stable name of @p err ("ok", "truncated", ...). */
const char *uroce_wire_strerror(enum uroce_wire_err err);

/** IP family of a frame. */
enum uroce_ip_family {
	UROCE_IP_NONE = 0,
	UROCE_IP_V4 = 4,
	UROCE_IP_V6 = 6,
};

/** True for an IPv4-mapped GID (::ffff:a.b.c.d): such a GID travels as IPv4. */
static inline bool
uroce_gid_is_v4mapped(const uint8_t gid[16])
{
	static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(gid, pfx, 12) == 0;
}

/** True for the all-zero GID (an empty GID table slot, or "not given"). */
static inline bool
uroce_gid_is_zero(const uint8_t gid[16])
{
	static const uint8_t zero[16];

	return memcmp(gid, zero, 16) == 0;
}

/** The IP family a GID travels as. */
static inline enum uroce_ip_family
uroce_gid_family(const uint8_t gid[16])
{
	return uroce_gid_is_v4mapped(gid) ? UROCE_IP_V4 : UROCE_IP_V6;
}

/**
 * The encapsulation of one frame, filled by uroce_frame_parse(). Addresses are
 * kept as 16-byte GIDs: IPv4 as ::ffff:a.b.c.d (the RoCEv2 IPv4-mapped GID).
 */
struct uroce_frame {
	uint8_t dmac[6];
	uint8_t smac[6];
	uint16_t vlan_tci;      /**< valid when has_vlan */
	bool has_vlan;
	enum uroce_ip_family family;
	uint8_t sgid[16];
	uint8_t dgid[16];
	uint8_t tclass;         /**< DSCP << 2 | ECN */
	uint8_t hop_limit;      /**< TTL or hop limit */
	uint32_t flow_label;    /**< IPv6 only */
	uint16_t sport;
	uint16_t dport;
	uint32_t l3_off;        /**< offset of the IP header in the buffer */
	uint32_t bth_off;       /**< offset of the BTH in the buffer */
	uint32_t ib_len;        /**< BTH through ICRC, from the UDP length */
};

/**
 * Parse Ethernet, up to two VLAN tags, IPv4 or IPv6, and UDP, and check that
 * they form a RoCEv2 frame. Lengths come from the IP and UDP headers, never
 * from the buffer, so Ethernet padding is ignored; every length is checked
 * against @p len before anything is read.
 *
 * @return UROCE_WIRE_OK, or the first problem found: TRUNCATED, NOT_ROCEV2,
 *   BAD_IP or BAD_LENGTH. On NOT_ROCEV2, the L2/L3 fields parsed so far stay
 *   valid (family is UROCE_IP_NONE if not even IP).
 */
enum uroce_wire_err uroce_frame_parse(const uint8_t *buf, uint32_t len, struct uroce_frame *f);

/**
 * A validated view of the InfiniBand part of a packet (BTH to ICRC). This is
 * what the transport sees: no DPDK types, and an opaque owner pointer for the
 * buffer that holds the bytes (an mbuf in the daemon).
 */
struct uroce_pkt {
	const uint8_t *bth;                     /**< start of the BTH */
	const struct uroce_opcode_info *info;   /**< opcode table entry */
	const uint8_t *payload;                 /**< first payload byte (after all headers) */
	uint32_t ib_len;                        /**< BTH through ICRC */
	uint32_t paylen;                        /**< payload bytes, pad excluded */
	uint32_t psn;
	uint32_t dqpn;
	uint8_t opcode;
	uint8_t padcnt;
	/** The payload's ICRC is still to be checked: by uroce_pkt_icrc_end() on
	 * the CRC of the payload continued from @p icrc_seed (uroce_crc32_copy()
	 * as it is placed), or by uroce_pkt_icrc_late(). */
	bool icrc_late;
	uint32_t icrc_seed;                     /**< icrc_late: CRC up to the payload */
	uint32_t icrc_want;                     /**< icrc_late: the ICRC the packet carries */
	void *owner;                            /**< whoever holds the buffer */
};

/**
 * Parse and validate the InfiniBand headers against the opcode table.
 * Checks (IBA 9.6.1, C9-92): a known opcode; TVer 0; room for every header
 * the table lists plus the ICRC; no payload and pad count 0 when the opcode
 * carries no payload; payload plus pad a multiple of 4 and no larger than
 * UROCE_MAX_PMTU; FIRST and MIDDLE payloads exactly a valid PMTU; an ATOMIC
 * WRITE payload exactly 8 bytes (IBA 1.5 A19).
 * The ICRC is not checked here (see uroce_icrc_check()); the transport checks
 * what needs QP context (PMTU, PSN, opcode sequence, keys).
 *
 * @param bth    first byte of the BTH; @p ib_len bytes must be readable
 * @param ib_len bytes from the BTH through the ICRC (the UDP payload length)
 * @return UROCE_WIRE_OK, BAD_OPCODE, BAD_TVER or BAD_LENGTH.
 */
enum uroce_wire_err uroce_pkt_parse(const uint8_t *bth, uint32_t ib_len, struct uroce_pkt *p);

/**
 * uroce_frame_parse(), then the ICRC check, then uroce_pkt_parse(): the
 * whole receive-side validation of one frame. The ICRC is checked before the
 * transport headers so that corruption is reported as BAD_ICRC rather than as
 * whatever the flipped bits happen to look like.
 */
enum uroce_wire_err uroce_parse(const uint8_t *buf, uint32_t len, struct uroce_frame *f,
				struct uroce_pkt *p);

/**
 * uroce_parse() of a frame in three pieces, as uroce_frame_wrap_split() makes
 * it (a loopback frame that left its payload where it lies): @p buf holds
 * Ethernet through the last extension header (@p hdr_len bytes), @p payload
 * the payload (@p paylen bytes) and @p trailer the pad and the ICRC
 * (uroce_pad(@p paylen) + 4 bytes). The ICRC is checked over all three, the
 * pad must be zero (IBA 9.2.4), and the headers must end exactly at
 * @p hdr_len. On success @p p->payload is @p payload.
 *
 * @p buf must be readable for hdr_len + paylen + pad + 4 bytes (a buffer with
 * room for the whole frame): the headers' own lengths are checked against
 * that, so that a header claiming more than @p hdr_len is never read outside
 * it. @return as uroce_parse(); BAD_LENGTH if the headers do not end at
 * @p hdr_len.
 *
 * @p late: a payload of at least UROCE_LATE_ICRC_MIN bytes of an opcode
 * with UROCE_F_LATE_ICRC has only its headers folded here (p->icrc_late);
 * the receiver checks the rest as it copies the payload, in one pass over
 * it, and must check it before anything else it does with the packet. A
 * packet whose headers fail uroce_pkt_parse() is checked whole first, so a
 * corrupted one is still BAD_ICRC.
 */
enum uroce_wire_err uroce_parse_split(const uint8_t *buf, uint32_t hdr_len, const uint8_t *payload,
				      uint32_t paylen, const uint8_t *trailer, bool late,
				      struct uroce_frame *f, struct uroce_pkt *p);

/**
 * The second half of uroce_parse(), for a frame @p f that uroce_frame_parse()
 * already accepted from @p buf (a receiver that looked at the BTH's
 * destination QP first, to hand the frame to the QP's owner): the ICRC, then
 * uroce_pkt_parse(). @p late: as for uroce_parse_split() (a packet whose pad
 * bytes are not zero is checked whole). @return UROCE_WIRE_OK, BAD_ICRC, or
 * a BTH problem.
 */
enum uroce_wire_err uroce_parse_rest(const uint8_t *buf, const struct uroce_frame *f, bool late,
				     struct uroce_pkt *p);

/* ------------------------------------------------------------------------ */
/* Building                                                                  */
/* ------------------------------------------------------------------------ */

/** Pad bytes that bring @p paylen to a multiple of 4 (IBA 9.2.4). */
static inline uint8_t
uroce_pad(uint32_t paylen)
{
	return (uint8_t)((4 - (paylen & 3)) & 3);
}

/**
 * Write the BTH and the extension headers that @p bth->opcode carries, in IBA
 * order, at @p buf. Sets the pad count from @p paylen. The caller then writes
 * @p paylen payload bytes at buf + return value, zeroed pad, and the ICRC.
 *
 * @return header length (uroce_opcode_info.hdr_len), or 0 if the opcode is
 *   not in the table, @p cap is too small, or @p paylen is not allowed for it.
 */
uint32_t uroce_hdr_build(uint8_t *buf, uint32_t cap, const struct uroce_bth_fields *bth,
			 const struct uroce_ext_fields *ext, uint32_t paylen);

/** Addressing for the encapsulation of one frame. */
struct uroce_encap {
	uint8_t dmac[6];
	uint8_t smac[6];
	bool has_vlan;
	uint16_t vlan_tci;      /**< PCP(3) | DEI(1) | VID(12) */
	enum uroce_ip_family family;
	uint8_t sgid[16];       /**< IPv4: ::ffff:a.b.c.d */
	uint8_t dgid[16];
	uint8_t tclass;         /**< DSCP << 2 | ECN */
	uint8_t hop_limit;      /**< 0 means 64 */
	uint32_t flow_label;    /**< IPv6 */
	uint16_t sport;         /**< see uroce_udp_sport() */
	uint16_t ip_id;         /**< IPv4 identification */
	/*
	 * For the port that sends the frame (uroce_encap_build() ignores them):
	 * the transport chose the whole traffic class (a CNP), so the port must
	 * not fill in its default DSCP; and an 802.1p priority of the frame's
	 * own for the port's VLAN tag (a CNP's cnp_802p_prio).
	 */
	bool tclass_final;
	bool has_pcp;
	uint8_t pcp;
};

/** Bytes uroce_encap_build() writes before the BTH for @p e (inline: asked
 * three times for every packet sent). */
static inline uint32_t
uroce_encap_len(const struct uroce_encap *e)
{
	uint32_t l3 = e->family == UROCE_IP_V6 ? UROCE_IPV6_LEN : UROCE_IPV4_LEN;

	return UROCE_ETH_LEN + (e->has_vlan ? UROCE_VLAN_LEN : 0) + l3 + UROCE_UDP_LEN;
}

/**
 * Write Ethernet, optional 802.1Q tag, IPv4 (DF set, no options, checksum
 * computed) or IPv6, and UDP (destination 4791, checksum 0) at @p buf, for
 * an InfiniBand part of @p ib_len bytes (BTH through ICRC).
 *
 * @return bytes written (uroce_encap_len()), or 0 if @p cap is too small or
 *   the family is not IPv4/IPv6.
 */
uint32_t uroce_encap_build(uint8_t *buf, uint32_t cap, const struct uroce_encap *e,
			   uint32_t ib_len);

/**
 * Make a frame of an InfiniBand part in place: write the encapsulation @p e
 * into the bytes just before @p ib (BTH through the ICRC slot, @p ib_len
 * bytes; @p headroom bytes are free in front of it) with uroce_encap_build(),
 * then fill the ICRC (after the VLAN tag, if any).
 *
 * @return the bytes written in front of @p ib (the frame starts there), or 0
 *   if they do not fit @p headroom or uroce_encap_build() refused @p e.
 */
uint32_t uroce_frame_wrap(uint8_t *ib, uint32_t headroom, uint32_t ib_len,
			  const struct uroce_encap *e);

/**
 * uroce_frame_wrap() for a frame in three pieces (zero-copy transmission):
 * the headers at @p ib (@p hdr_len bytes, BTH through the last extension
 * header), the payload at @p payload (@p paylen bytes, left where it is),
 * then @p trailer, which receives the pad bytes (zero, IBA 9.2.4) and the
 * ICRC: uroce_pad(@p paylen) + 4 bytes. The ICRC is computed in one pass,
 * reading the payload once.
 *
 * @return the bytes written in front of @p ib, or 0 as uroce_frame_wrap().
 */
uint32_t uroce_frame_wrap_split(uint8_t *ib, uint32_t headroom, uint32_t hdr_len,
				const uint8_t *payload, uint32_t paylen, uint8_t *trailer,
				const struct uroce_encap *e);

/**
 * Mark a parsed frame Congestion Experienced, as an ECN-capable switch does
 * (RFC 3168, 5): the ECN field of the IPv4 TOS or IPv6 traffic class becomes
 * 11 and the IPv4 header checksum is recomputed. The ICRC masks those fields
 * (IBA A17.4.1), so it stays valid. @p f must come from uroce_frame_parse()
 * of these @p len bytes; its tclass is updated too.
 *
 * @return 1 if marked, 0 if the frame already carried CE, -EINVAL if it is
 *   not ECN-capable (not-ECT: a switch drops rather than marks those) or
 *   @p f does not describe an IP header inside @p len.
 */
int uroce_frame_mark_ce(uint8_t *buf, uint32_t len, struct uroce_frame *f);

/**
 * RoCEv2 UDP source port from the flow label, the convention Linux RDMA
 * drivers share: a zero flow label is first derived from the two QPNs, then
 * the 20-bit label is folded into 14 bits and placed in 0xC000-0xFFFF.
 */
uint16_t uroce_udp_sport(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn);

/* ------------------------------------------------------------------------ */
/* ICRC (IBA 7.8.1, RoCEv2 annex A17.4.1)                                    */
/* ------------------------------------------------------------------------ */

/**
 * Compute the ICRC of a RoCEv2 packet: CRC-32 over 8 bytes of 0xFF (in place
 * of the LRH), the IP header with the variant fields set to all ones (IPv4:
 * TOS, TTL, checksum; IPv6: traffic class, flow label, hop limit), the UDP
 * header with its checksum set to ones, the BTH with byte 4 set to ones, and
 * everything after the BTH up to the ICRC.
 *
 * @param l3      first byte of the IP header
 * @param l3_len  bytes from the IP header up to, not including, the ICRC
 * @param family  UROCE_IP_V4 or UROCE_IP_V6
 * @return the CRC in host order; it goes on the wire little-endian. 0 if the
 *   IP, UDP and BTH headers do not fit in @p l3_len, the IPv4 IHL is below 5,
 *   or @p family is not IPv4/IPv6 (uroce_icrc_check() then returns false).
 */
uint32_t uroce_icrc_compute(const uint8_t *l3, uint32_t l3_len, enum uroce_ip_family family);

/**
 * uroce_icrc_compute() of a packet in pieces: @p l3 (@p l3_len bytes, IP
 * through at least the BTH), then @p tail (@p tail_len bytes: the payload
 * where it lies), then @p zeros zero bytes (the pad, at most 3). The ICRC
 * slot is part of none of them.
 */
uint32_t uroce_icrc_compute2(const uint8_t *l3, uint32_t l3_len, const uint8_t *tail,
			     uint32_t tail_len, uint32_t zeros, enum uroce_ip_family family);

/** Compute the ICRC and store it in the 4 bytes after @p l3_len. */
void uroce_icrc_fill(uint8_t *l3, uint32_t l3_len, enum uroce_ip_family family);

/** True if the 4 bytes after @p l3_len hold the right ICRC. */
bool uroce_icrc_check(const uint8_t *l3, uint32_t l3_len, enum uroce_ip_family family);

/** uroce_icrc_check() of a packet in the pieces of uroce_icrc_compute2(), its
 * ICRC at @p icrc (as on the wire). */
bool uroce_icrc_check2(const uint8_t *l3, uint32_t l3_len, const uint8_t *tail, uint32_t tail_len,
		       uint32_t zeros, const uint8_t icrc[4], enum uroce_ip_family family);

/**
 * Plain CRC-32 (the Ethernet/zlib polynomial, reflected, inverted) continued
 * from @p crc (0 to start). Which implementation runs is chosen at build time
 * by measurement; see doc/benchmarks.md.
 */
uint32_t uroce_crc32(uint32_t crc, const void *buf, size_t len);

/**
 * memcpy(@p dst, @p src, @p len) and uroce_crc32(@p crc, @p src, @p len) in
 * one pass over the bytes. The buffers must not overlap.
 */
uint32_t uroce_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len);

/** The smallest payload whose ICRC uroce_parse_split() leaves to its copy. */
#define UROCE_LATE_ICRC_MIN 256

/**
 * The end of a late ICRC check (struct uroce_pkt's icrc_late): @p crc is
 * the CRC of @p p's whole payload continued from p->icrc_seed; the pad is
 * added and the sum compared with the packet's ICRC. @return true if equal.
 */
bool uroce_pkt_icrc_end(const struct uroce_pkt *p, uint32_t crc);

/** A late ICRC check over the payload where it lies, with no copy. */
bool uroce_pkt_icrc_late(const struct uroce_pkt *p);

/** Name of the CRC-32 implementation in use ("isal", "slice8"). */
const char *uroce_crc32_impl(void);

/* ------------------------------------------------------------------------ */
/* Protocol arithmetic                                                       */
/* ------------------------------------------------------------------------ */

/** PSN @p psn advanced by @p n, modulo 2^24 (IBA 9.7.1). */
static inline uint32_t
uroce_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & UROCE_PSN_MASK;
}

/**
 * Signed distance a - b between two PSNs, in [-2^23, 2^23). Positive means
 * @p a is after @p b in the 2^23 window of IBA 9.7.1.
 */
static inline int32_t
uroce_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/** True if @p a comes before @p b (modular). */
static inline bool
uroce_psn_before(uint32_t a, uint32_t b)
{
	return uroce_psn_diff(a, b) < 0;
}

/** Packets a message of @p len bytes takes at path MTU @p pmtu (0 bytes: 1). */
static inline uint32_t
uroce_num_pkts(uint64_t len, uint32_t pmtu)
{
	if (len == 0)
		return 1;
	/* Every IBA path MTU is a power of two: a shift, not a 64-bit divide
	 * (tens of cycles, once or twice per WQE). */
	if (pmtu != 0 && (pmtu & (pmtu - 1)) == 0)
		return (uint32_t)((len + pmtu - 1) >> __builtin_ctz(pmtu));
	return (uint32_t)((len + pmtu - 1) / pmtu);
}

/** AETH syndrome types (IBA 9.7.5.1, table 43), bits 6:5. */
enum uroce_aeth_type {
	UROCE_AETH_ACK = 0x00,
	UROCE_AETH_RNR_NAK = 0x20,
	UROCE_AETH_RESERVED = 0x40,
	UROCE_AETH_NAK = 0x60,
};

/** NAK codes, the low five bits of a NAK syndrome (IBA table 44). */
enum uroce_nak_code {
	UROCE_NAK_PSN_SEQ_ERR = 0,
	UROCE_NAK_INVALID_REQUEST = 1,
	UROCE_NAK_REMOTE_ACCESS_ERR = 2,
	UROCE_NAK_REMOTE_OP_ERR = 3,
	UROCE_NAK_INVALID_RD_REQUEST = 4,
};

/** ACK syndrome with "credits invalid" (0x1F), as RoCE sends for RC without EEC flow control. */
#define UROCE_AETH_ACK_NO_CREDIT 0x1F

/** Type of an AETH syndrome (bits 6:5). */
static inline enum uroce_aeth_type
uroce_aeth_type(uint8_t syn)
{
	return (enum uroce_aeth_type)(syn & 0x60);
}

/** Credit count, RNR timer code or NAK code of a syndrome (bits 4:0). */
static inline uint8_t
uroce_aeth_value(uint8_t syn)
{
	return syn & 0x1F;
}

/** NAK syndrome for @p c. */
static inline uint8_t
uroce_aeth_nak(enum uroce_nak_code c)
{
	return (uint8_t)(UROCE_AETH_NAK | c);
}

/** RNR NAK syndrome with the 5-bit timer code @p timer (IBA table 45). */
static inline uint8_t
uroce_aeth_rnr(uint8_t timer)
{
	return (uint8_t)(UROCE_AETH_RNR_NAK | (timer & 0x1F));
}

/**
 * RNR NAK timer: the 5-bit code of IBA table 45 to microseconds
 * (0 → 655.36 ms, 1 → 0.01 ms, ... 31 → 491.52 ms). Result rounded up to 1 µs.
 */
uint32_t uroce_rnr_timer_us(uint8_t code);

/**
 * Local ACK timeout: 4.096 µs × 2^@p timeout (IBA 9.7.6.1.3), in µs rounded
 * up; 0 means the timer is disabled (infinite) and returns 0. Codes above 31
 * are treated as 31.
 */
uint64_t uroce_ack_timeout_us(uint8_t timeout);

/** IBA MTU enum (1..5) to bytes (256..4096); 0 for an invalid enum. */
static inline uint32_t
uroce_mtu_bytes(uint8_t mtu_enum)
{
	return (mtu_enum >= 1 && mtu_enum <= 5) ? 128u << mtu_enum : 0;
}

/** Bytes (256..4096, power of two) to the IBA MTU enum; 0 if invalid. */
static inline uint8_t
uroce_mtu_enum(uint32_t bytes)
{
	uint8_t e;

	for (e = 1; e <= 5; e++)
		if (bytes == 128u << e)
			return e;
	return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* UROCE_WIRE_H */
