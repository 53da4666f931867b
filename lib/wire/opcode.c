/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The declarative opcode table (IBA 9.2.1, table 35; RoCEv2 annex A17.9.3 for
 * the CNP). Each entry lists which extension headers follow the BTH; their
 * offsets and the total header length are derived from that list at compile
 * time, in the fixed order IBA gives them (9.2: DETH, XRCETH, RETH, AETH,
 * AtomicETH, AtomicAckETH, ImmDt, IETH; IBA 1.5 A19 puts the FETH before the
 * RETH). Parsing, building and the transport's
 * opcode-sequence checks all read this table; nothing else knows a layout.
 */

#include "uroce_wire.h"

#define LEN_IF(m, bit, len) (((m) & (bit)) ? (len) : 0)

#define OFF_DETH(m)    UROCE_BTH_LEN
#define OFF_XRCETH(m)  (OFF_DETH(m) + LEN_IF(m, UROCE_HDR_DETH, UROCE_DETH_LEN))
#define OFF_FETH(m)    (OFF_XRCETH(m) + LEN_IF(m, UROCE_HDR_XRCETH, UROCE_XRCETH_LEN))
#define OFF_RETH(m)    (OFF_FETH(m) + LEN_IF(m, UROCE_HDR_FETH, UROCE_FETH_LEN))
#define OFF_AETH(m)    (OFF_RETH(m) + LEN_IF(m, UROCE_HDR_RETH, UROCE_RETH_LEN))
#define OFF_ATMETH(m)  (OFF_AETH(m) + LEN_IF(m, UROCE_HDR_AETH, UROCE_AETH_LEN))
#define OFF_ATMACK(m)  (OFF_ATMETH(m) + LEN_IF(m, UROCE_HDR_ATMETH, UROCE_ATMETH_LEN))
#define OFF_IMMDT(m)   (OFF_ATMACK(m) + LEN_IF(m, UROCE_HDR_ATMACK, UROCE_ATMACK_LEN))
#define OFF_IETH(m)    (OFF_IMMDT(m) + LEN_IF(m, UROCE_HDR_IMMDT, UROCE_IMMDT_LEN))
#define OFF_CNPRSVD(m) (OFF_IETH(m) + LEN_IF(m, UROCE_HDR_IETH, UROCE_IETH_LEN))
#define HDR_LEN(m)     (OFF_CNPRSVD(m) + LEN_IF(m, UROCE_HDR_CNPRSVD, UROCE_CNP_RSVD_LEN))

#define OFF(m, bit, off) (((m) & (bit)) ? (off) : 0)

#define ENTRY(opc, nm, m) \
	[opc] = { \
		.name = (nm), \
		.mask = (m), \
		.hdr_len = HDR_LEN(m), \
		.off_deth = OFF(m, UROCE_HDR_DETH, OFF_DETH(m)), \
		.off_xrceth = OFF(m, UROCE_HDR_XRCETH, OFF_XRCETH(m)), \
		.off_feth = OFF(m, UROCE_HDR_FETH, OFF_FETH(m)), \
		.off_reth = OFF(m, UROCE_HDR_RETH, OFF_RETH(m)), \
		.off_aeth = OFF(m, UROCE_HDR_AETH, OFF_AETH(m)), \
		.off_atmeth = OFF(m, UROCE_HDR_ATMETH, OFF_ATMETH(m)), \
		.off_atmack = OFF(m, UROCE_HDR_ATMACK, OFF_ATMACK(m)), \
		.off_immdt = OFF(m, UROCE_HDR_IMMDT, OFF_IMMDT(m)), \
		.off_ieth = OFF(m, UROCE_HDR_IETH, OFF_IETH(m)), \
	}

/* Packet-position flags. FIRST and MIDDLE carry exactly one PMTU, LAST and ONLY
 * at most one (IBA C9-92; the transport checks against the QP's PMTU). */
#define FIRST  (UROCE_F_START | UROCE_F_PAYLOAD | UROCE_F_FULL_PMTU)
#define MIDDLE (UROCE_F_MIDDLE | UROCE_F_PAYLOAD | UROCE_F_FULL_PMTU)
#define LAST   (UROCE_F_END | UROCE_F_PAYLOAD)
#define ONLY   (UROCE_F_START | UROCE_F_END | UROCE_F_PAYLOAD)
#define ONLY_NODATA (UROCE_F_START | UROCE_F_END)

/* Operation shapes, shared by RC and UC (and UD for SEND ONLY). */
#define SEND_FIRST       (UROCE_F_REQ | UROCE_F_SEND | FIRST)
#define SEND_MIDDLE      (UROCE_F_REQ | UROCE_F_SEND | MIDDLE)
#define SEND_LAST        (UROCE_F_REQ | UROCE_F_SEND | LAST)
#define SEND_LAST_IMM    (SEND_LAST | UROCE_HDR_IMMDT)
#define SEND_LAST_INV    (SEND_LAST | UROCE_HDR_IETH)
#define SEND_ONLY        (UROCE_F_REQ | UROCE_F_SEND | ONLY)
#define SEND_ONLY_IMM    (SEND_ONLY | UROCE_HDR_IMMDT)
#define SEND_ONLY_INV    (SEND_ONLY | UROCE_HDR_IETH)
#define WRITE_FIRST      (UROCE_F_REQ | UROCE_F_WRITE | FIRST | UROCE_HDR_RETH)
#define WRITE_MIDDLE     (UROCE_F_REQ | UROCE_F_WRITE | MIDDLE)
#define WRITE_LAST       (UROCE_F_REQ | UROCE_F_WRITE | LAST)
#define WRITE_LAST_IMM   (WRITE_LAST | UROCE_HDR_IMMDT)
#define WRITE_ONLY       (UROCE_F_REQ | UROCE_F_WRITE | ONLY | UROCE_HDR_RETH)
#define WRITE_ONLY_IMM   (WRITE_ONLY | UROCE_HDR_IMMDT)
#define READ_REQUEST     (UROCE_F_REQ | UROCE_F_READ | ONLY_NODATA | UROCE_HDR_RETH)
#define READ_RESP_FIRST  (UROCE_F_RESP | UROCE_F_READ | FIRST | UROCE_HDR_AETH)
#define READ_RESP_MIDDLE (UROCE_F_RESP | UROCE_F_READ | MIDDLE)
#define READ_RESP_LAST   (UROCE_F_RESP | UROCE_F_READ | LAST | UROCE_HDR_AETH)
#define READ_RESP_ONLY   (UROCE_F_RESP | UROCE_F_READ | ONLY | UROCE_HDR_AETH)
#define ACKNOWLEDGE      (UROCE_F_RESP | ONLY_NODATA | UROCE_HDR_AETH)
#define ATOMIC_ACK       (UROCE_F_RESP | UROCE_F_ATOMIC | ONLY_NODATA | UROCE_HDR_AETH | \
			  UROCE_HDR_ATMACK)
#define ATOMIC_REQ       (UROCE_F_REQ | UROCE_F_ATOMIC | ONLY_NODATA | UROCE_HDR_ATMETH)
/* IBA 1.5 A19: FLUSH carries FETH and RETH and no data; ATOMIC WRITE a RETH
 * and exactly 8 bytes (uroce_pkt_parse() checks the 8). */
#define FLUSH_REQ        (UROCE_F_REQ | UROCE_F_FLUSH | ONLY_NODATA | UROCE_HDR_FETH | \
			  UROCE_HDR_RETH)
#define ATOMIC_WRITE_REQ (UROCE_F_REQ | UROCE_F_ATOMIC_WRITE | ONLY | UROCE_HDR_RETH)
#define UD_SEND_ONLY     (SEND_ONLY | UROCE_HDR_DETH)
#define UD_SEND_ONLY_IMM (SEND_ONLY_IMM | UROCE_HDR_DETH)
#define CNP              (UROCE_F_CNP | UROCE_HDR_CNPRSVD)

/* Lengths add up as IBA's header sizes say (9.2-9.3). */
_Static_assert(HDR_LEN(SEND_FIRST) == 12, "BTH only");
_Static_assert(HDR_LEN(WRITE_ONLY_IMM) == 12 + 16 + 4, "BTH+RETH+ImmDt");
_Static_assert(OFF_IMMDT(WRITE_ONLY_IMM) == 28, "ImmDt follows RETH");
_Static_assert(HDR_LEN(READ_REQUEST) == 28, "BTH+RETH");
_Static_assert(HDR_LEN(ACKNOWLEDGE) == 16, "BTH+AETH");
_Static_assert(HDR_LEN(ATOMIC_ACK) == 12 + 4 + 8, "BTH+AETH+AtomicAckETH");
_Static_assert(OFF_ATMACK(ATOMIC_ACK) == 16, "AtomicAckETH follows AETH");
_Static_assert(HDR_LEN(ATOMIC_REQ) == 12 + 28, "BTH+AtomicETH");
_Static_assert(HDR_LEN(SEND_ONLY_INV) == 16, "BTH+IETH");
_Static_assert(HDR_LEN(UD_SEND_ONLY_IMM) == 12 + 8 + 4, "BTH+DETH+ImmDt");
_Static_assert(OFF_IMMDT(UD_SEND_ONLY_IMM) == 20, "ImmDt follows DETH");
_Static_assert(HDR_LEN(CNP) == 28, "BTH+16 reserved");
_Static_assert(HDR_LEN(FLUSH_REQ) == 12 + 4 + 16, "BTH+FETH+RETH");
_Static_assert(OFF_RETH(FLUSH_REQ) == 16, "RETH follows FETH");
_Static_assert(HDR_LEN(ATOMIC_WRITE_REQ) == 28, "BTH+RETH");
/* IBA 1.2 XRC: the XRCETH follows the BTH in every request. */
#define X(m) ((m) | UROCE_HDR_XRCETH)
_Static_assert(HDR_LEN(X(SEND_ONLY)) == 16, "BTH+XRCETH");
_Static_assert(OFF_RETH(X(WRITE_ONLY_IMM)) == 16 && OFF_IMMDT(X(WRITE_ONLY_IMM)) == 32,
	       "RETH follows XRCETH, ImmDt follows RETH");
_Static_assert(OFF_ATMETH(X(ATOMIC_REQ)) == 16 && HDR_LEN(X(ATOMIC_REQ)) == 12 + 4 + 28,
	       "BTH+XRCETH+AtomicETH");
_Static_assert(OFF_FETH(X(FLUSH_REQ)) == 16 && OFF_RETH(X(FLUSH_REQ)) == 20,
	       "BTH+XRCETH+FETH+RETH");

/* RC continuations and READ responses, and UD SENDs (one packet, into the
 * next receive WQE, which a corrupted one leaves held: resp_ud()). Not UC:
 * its packets can resynchronise the responder (IBA 9.8.3), which changes
 * its state before the payload is placed; not XRC: its requests choose
 * their SRQ by the packet. */
#define LATE(m) ((m) | UROCE_F_LATE_ICRC)

#define RC(op) UROCE_OPCODE(UROCE_SVC_RC, UROCE_OP_##op)
#define UC(op) UROCE_OPCODE(UROCE_SVC_UC, UROCE_OP_##op)
#define UD(op) UROCE_OPCODE(UROCE_SVC_UD, UROCE_OP_##op)
#define XRC(op) UROCE_OPCODE(UROCE_SVC_XRC, UROCE_OP_##op)

const struct uroce_opcode_info uroce_opcode_table[256] = {
	ENTRY(RC(SEND_FIRST), "RC SEND First", SEND_FIRST),
	ENTRY(RC(SEND_MIDDLE), "RC SEND Middle", LATE(SEND_MIDDLE)),
	ENTRY(RC(SEND_LAST), "RC SEND Last", LATE(SEND_LAST)),
	ENTRY(RC(SEND_LAST_WITH_IMMEDIATE), "RC SEND Last with Immediate", SEND_LAST_IMM),
	ENTRY(RC(SEND_ONLY), "RC SEND Only", SEND_ONLY),
	ENTRY(RC(SEND_ONLY_WITH_IMMEDIATE), "RC SEND Only with Immediate", SEND_ONLY_IMM),
	ENTRY(RC(RDMA_WRITE_FIRST), "RC RDMA WRITE First", WRITE_FIRST),
	ENTRY(RC(RDMA_WRITE_MIDDLE), "RC RDMA WRITE Middle", LATE(WRITE_MIDDLE)),
	ENTRY(RC(RDMA_WRITE_LAST), "RC RDMA WRITE Last", LATE(WRITE_LAST)),
	ENTRY(RC(RDMA_WRITE_LAST_WITH_IMMEDIATE), "RC RDMA WRITE Last with Immediate",
	      WRITE_LAST_IMM),
	ENTRY(RC(RDMA_WRITE_ONLY), "RC RDMA WRITE Only", WRITE_ONLY),
	ENTRY(RC(RDMA_WRITE_ONLY_WITH_IMMEDIATE), "RC RDMA WRITE Only with Immediate",
	      WRITE_ONLY_IMM),
	ENTRY(RC(RDMA_READ_REQUEST), "RC RDMA READ Request", READ_REQUEST),
	ENTRY(RC(RDMA_READ_RESPONSE_FIRST), "RC RDMA READ Response First",
	      LATE(READ_RESP_FIRST)),
	ENTRY(RC(RDMA_READ_RESPONSE_MIDDLE), "RC RDMA READ Response Middle",
	      LATE(READ_RESP_MIDDLE)),
	ENTRY(RC(RDMA_READ_RESPONSE_LAST), "RC RDMA READ Response Last",
	      LATE(READ_RESP_LAST)),
	ENTRY(RC(RDMA_READ_RESPONSE_ONLY), "RC RDMA READ Response Only",
	      LATE(READ_RESP_ONLY)),
	ENTRY(RC(ACKNOWLEDGE), "RC Acknowledge", ACKNOWLEDGE),
	ENTRY(RC(ATOMIC_ACKNOWLEDGE), "RC ATOMIC Acknowledge", ATOMIC_ACK),
	ENTRY(RC(COMPARE_SWAP), "RC CmpSwap", ATOMIC_REQ),
	ENTRY(RC(FETCH_ADD), "RC FetchAdd", ATOMIC_REQ),
	ENTRY(RC(SEND_LAST_WITH_INVALIDATE), "RC SEND Last with Invalidate", SEND_LAST_INV),
	ENTRY(RC(SEND_ONLY_WITH_INVALIDATE), "RC SEND Only with Invalidate", SEND_ONLY_INV),
	ENTRY(RC(FLUSH), "RC FLUSH", FLUSH_REQ),
	ENTRY(RC(ATOMIC_WRITE), "RC ATOMIC WRITE", ATOMIC_WRITE_REQ),

	/* UC carries SEND and RDMA WRITE only (IBA 9.8.1). */
	ENTRY(UC(SEND_FIRST), "UC SEND First", SEND_FIRST),
	ENTRY(UC(SEND_MIDDLE), "UC SEND Middle", SEND_MIDDLE),
	ENTRY(UC(SEND_LAST), "UC SEND Last", SEND_LAST),
	ENTRY(UC(SEND_LAST_WITH_IMMEDIATE), "UC SEND Last with Immediate", SEND_LAST_IMM),
	ENTRY(UC(SEND_ONLY), "UC SEND Only", SEND_ONLY),
	ENTRY(UC(SEND_ONLY_WITH_IMMEDIATE), "UC SEND Only with Immediate", SEND_ONLY_IMM),
	ENTRY(UC(RDMA_WRITE_FIRST), "UC RDMA WRITE First", WRITE_FIRST),
	ENTRY(UC(RDMA_WRITE_MIDDLE), "UC RDMA WRITE Middle", WRITE_MIDDLE),
	ENTRY(UC(RDMA_WRITE_LAST), "UC RDMA WRITE Last", WRITE_LAST),
	ENTRY(UC(RDMA_WRITE_LAST_WITH_IMMEDIATE), "UC RDMA WRITE Last with Immediate",
	      WRITE_LAST_IMM),
	ENTRY(UC(RDMA_WRITE_ONLY), "UC RDMA WRITE Only", WRITE_ONLY),
	ENTRY(UC(RDMA_WRITE_ONLY_WITH_IMMEDIATE), "UC RDMA WRITE Only with Immediate",
	      WRITE_ONLY_IMM),

	/* XRC (IBA 1.2, 9.2.1): the RC operations; requests carry the XRCETH,
	 * responses do not. */
	ENTRY(XRC(SEND_FIRST), "XRC SEND First", X(SEND_FIRST)),
	ENTRY(XRC(SEND_MIDDLE), "XRC SEND Middle", X(SEND_MIDDLE)),
	ENTRY(XRC(SEND_LAST), "XRC SEND Last", X(SEND_LAST)),
	ENTRY(XRC(SEND_LAST_WITH_IMMEDIATE), "XRC SEND Last with Immediate", X(SEND_LAST_IMM)),
	ENTRY(XRC(SEND_ONLY), "XRC SEND Only", X(SEND_ONLY)),
	ENTRY(XRC(SEND_ONLY_WITH_IMMEDIATE), "XRC SEND Only with Immediate", X(SEND_ONLY_IMM)),
	ENTRY(XRC(RDMA_WRITE_FIRST), "XRC RDMA WRITE First", X(WRITE_FIRST)),
	ENTRY(XRC(RDMA_WRITE_MIDDLE), "XRC RDMA WRITE Middle", X(WRITE_MIDDLE)),
	ENTRY(XRC(RDMA_WRITE_LAST), "XRC RDMA WRITE Last", X(WRITE_LAST)),
	ENTRY(XRC(RDMA_WRITE_LAST_WITH_IMMEDIATE), "XRC RDMA WRITE Last with Immediate",
	      X(WRITE_LAST_IMM)),
	ENTRY(XRC(RDMA_WRITE_ONLY), "XRC RDMA WRITE Only", X(WRITE_ONLY)),
	ENTRY(XRC(RDMA_WRITE_ONLY_WITH_IMMEDIATE), "XRC RDMA WRITE Only with Immediate",
	      X(WRITE_ONLY_IMM)),
	ENTRY(XRC(RDMA_READ_REQUEST), "XRC RDMA READ Request", X(READ_REQUEST)),
	ENTRY(XRC(RDMA_READ_RESPONSE_FIRST), "XRC RDMA READ Response First", READ_RESP_FIRST),
	ENTRY(XRC(RDMA_READ_RESPONSE_MIDDLE), "XRC RDMA READ Response Middle", READ_RESP_MIDDLE),
	ENTRY(XRC(RDMA_READ_RESPONSE_LAST), "XRC RDMA READ Response Last", READ_RESP_LAST),
	ENTRY(XRC(RDMA_READ_RESPONSE_ONLY), "XRC RDMA READ Response Only", READ_RESP_ONLY),
	ENTRY(XRC(ACKNOWLEDGE), "XRC Acknowledge", ACKNOWLEDGE),
	ENTRY(XRC(ATOMIC_ACKNOWLEDGE), "XRC ATOMIC Acknowledge", ATOMIC_ACK),
	ENTRY(XRC(COMPARE_SWAP), "XRC CmpSwap", X(ATOMIC_REQ)),
	ENTRY(XRC(FETCH_ADD), "XRC FetchAdd", X(ATOMIC_REQ)),
	ENTRY(XRC(SEND_LAST_WITH_INVALIDATE), "XRC SEND Last with Invalidate", X(SEND_LAST_INV)),
	ENTRY(XRC(SEND_ONLY_WITH_INVALIDATE), "XRC SEND Only with Invalidate", X(SEND_ONLY_INV)),
	ENTRY(XRC(FLUSH), "XRC FLUSH", X(FLUSH_REQ)),
	ENTRY(XRC(ATOMIC_WRITE), "XRC ATOMIC WRITE", X(ATOMIC_WRITE_REQ)),

	/* UD carries single-packet SENDs only (IBA 9.8.2). */
	ENTRY(UD(SEND_ONLY), "UD SEND Only", LATE(UD_SEND_ONLY)),
	ENTRY(UD(SEND_ONLY_WITH_IMMEDIATE), "UD SEND Only with Immediate",
	      LATE(UD_SEND_ONLY_IMM)),

	ENTRY(UROCE_OPCODE_CNP, "CNP", CNP),
};
