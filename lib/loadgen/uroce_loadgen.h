/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * What a receiver of stateless RoCEv2 load (`uroce-perf sink`) and the tools
 * that feed it (`uroce-ctl template`, a packet generator, the in-daemon load
 * generator) must agree on, in one place:
 *
 *  - the payload pattern "uroce-lg-1": bytes a sender puts in each message
 *    and a receiver checks, chosen so that a pcap replayed in a loop stays
 *    valid (the bytes depend on where a message lands, never on when);
 *  - the sink description: the JSON document a sink prints (addresses, QPs,
 *    keys, windows, PSN and Q_Key expectations), written and read here so
 *    that the writer and the readers cannot drift apart;
 *  - rate records: the JSON line a sink (or a generator) prints once per
 *    interval with messages, bytes, completions and errors, and totals.
 *
 * doc/loadgen.md is the specification a generator written elsewhere follows.
 * Part of the core: no DPDK, no liburoce; the description reader takes
 * untrusted text and checks every field.
 */

#ifndef UROCE_LOADGEN_H
#define UROCE_LOADGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Payload pattern "uroce-lg-1"                                              */
/* ------------------------------------------------------------------------ */

/** Name of the pattern, as the description and the rate records give it. */
#define UROCE_LG_PATTERN "uroce-lg-1"

/** Bytes of the tag at the start of a SEND payload of at least this length. */
#define UROCE_LG_TAG_LEN 4

/**
 * Byte @p k of the pattern stream of @p seed: byte k % 8 (little-endian) of
 * the 64-bit word splitmix64(seed + (k / 8 + 1) * 0x9e3779b97f4a7c15), with
 * its lowest bit set. No pattern byte is ever 0, so memory that was never
 * written (zero) never passes for written data.
 */
uint8_t uroce_lg_byte(uint64_t seed, uint64_t k);

/**
 * The seed of the memory window of the QP @p qpn (the receiver's QPN, the
 * BTH destination QP): an RDMA WRITE to window offset o puts byte
 * uroce_lg_byte(seed, o + j) at o + j. Every write of a window writes the
 * same byte at the same place, so the window stays valid whatever order, or
 * how many times, messages arrive, and a write that lands in another QP's
 * window or at a shifted offset is found.
 */
uint64_t uroce_lg_write_seed(uint32_t qpn);

/**
 * The seed of a SEND payload of @p len bytes to QP @p qpn with tag @p tag.
 * A payload of len >= UROCE_LG_TAG_LEN starts with the tag (big-endian);
 * byte j >= 4 is uroce_lg_byte(seed, j). A shorter payload has tag 0 and
 * every byte j is uroce_lg_byte(seed, j).
 */
uint64_t uroce_lg_send_seed(uint32_t qpn, uint32_t tag, uint32_t len);

/** Fill @p len bytes for a WRITE to offset @p off of QP @p qpn's window. */
void uroce_lg_write_fill(uint8_t *dst, uint32_t qpn, uint64_t off, uint64_t len);

/**
 * Check @p len bytes of QP @p qpn's window from offset @p off: every one
 * must hold its pattern byte. The window may be written while it is read
 * (the writer writes the same bytes), hence the volatile source.
 * @return the index (from @p off) of the first byte that differs, or @p len.
 */
uint64_t uroce_lg_write_check(const volatile uint8_t *src, uint32_t qpn, uint64_t off,
			      uint64_t len);

/** What a scan of a window found. */
struct uroce_lg_scan {
	uint64_t written;   /**< bytes that hold their pattern byte */
	uint64_t unwritten; /**< bytes still 0 (never written) */
	uint64_t bad;       /**< bytes that are neither */
	uint64_t first_bad; /**< offset of the first bad byte (valid when bad > 0) */
};

/**
 * Scan a whole window of @p len bytes (from offset 0), which started zeroed:
 * every byte is either 0 (not written yet) or its pattern byte.
 */
void uroce_lg_write_scan(const volatile uint8_t *win, uint32_t qpn, uint64_t len,
			 struct uroce_lg_scan *out);

/** Fill a SEND payload of @p len bytes to QP @p qpn with tag @p tag. */
void uroce_lg_send_fill(uint8_t *dst, uint32_t qpn, uint32_t tag, uint32_t len);

/**
 * Check a received SEND payload of @p len bytes for QP @p qpn: read the tag
 * from it (0 below UROCE_LG_TAG_LEN bytes) into @p tag (may be NULL), then
 * every other byte against the pattern of (qpn, tag, len).
 * @return the index of the first byte that differs, or @p len.
 */
uint32_t uroce_lg_send_check(const uint8_t *src, uint32_t qpn, uint32_t len, uint32_t *tag);

/* ------------------------------------------------------------------------ */
/* Sink description                                                          */
/* ------------------------------------------------------------------------ */

/** Version of the description document ("uroce_sink" key). */
#define UROCE_LG_DESC_VERSION 1

/** Most QPs a description may hold. */
#define UROCE_LG_MAX_QPS 256

/** Longest socket path kept (as sockaddr_un). */
#define UROCE_LG_PATH_MAX 108

/** QP service of a sink QP. */
enum uroce_lg_qp_type {
	UROCE_LG_UC = 3, /**< as UROCE_QPT_UC */
	UROCE_LG_UD = 4, /**< as UROCE_QPT_UD */
};

/** Operations a sink QP takes (bits of uroce_lg_qp.ops). */
#define UROCE_LG_OP_WRITE     (1u << 0) /**< RDMA WRITE ONLY (UC) */
#define UROCE_LG_OP_WRITE_IMM (1u << 1) /**< RDMA WRITE ONLY with immediate (UC) */
#define UROCE_LG_OP_SEND      (1u << 2) /**< SEND ONLY (UC and UD) */

/** One receive-side QP of a sink. */
struct uroce_lg_qp {
	enum uroce_lg_qp_type type;
	uint32_t qpn;        /**< BTH destination QP of every frame for it */
	uint32_t peer_qpn;   /**< UC: the QP's dest_qp_num; UD: DETH source QP to use */
	uint32_t psn;        /**< UC: ePSN when the sink started (rq_psn) */
	uint32_t qkey;       /**< UD: Q_Key the DETH must carry */
	uint32_t rkey;       /**< UC: R_Key of the window */
	uint64_t va;         /**< UC: window start (RETH virtual address) */
	uint64_t len;        /**< UC: window length in bytes */
	uint32_t recv_slots; /**< receive WQEs kept posted */
	uint32_t ops;        /**< UROCE_LG_OP_* */
};

/** Everything a generator needs to aim at a sink. */
struct uroce_lg_desc {
	uint32_t version;                 /**< UROCE_LG_DESC_VERSION */
	char pattern[16];                 /**< UROCE_LG_PATTERN */
	char socket[UROCE_LG_PATH_MAX];   /**< the daemon's socket the sink used */
	uint8_t port;                     /**< liburoce port number (from 1) */
	uint8_t gid_index;                /**< GID index the frames must address */
	uint8_t mac[6];                   /**< destination MAC: the daemon port's */
	char mac_source[16];              /**< "gid0" (derived) or "option" */
	bool has_vlan;
	uint16_t vlan;                    /**< 802.1Q VLAN id, when has_vlan */
	uint8_t gid[16];                  /**< destination GID (IPv4-mapped for IPv4) */
	uint8_t peer_gid[16];             /**< source GID the sink's UC QPs name as peer */
	unsigned int n_gids;              /**< the port's GID table, for reference */
	uint8_t gids[16][16];
	uint8_t gid_idx[16];
	uint32_t path_mtu;                /**< UC path MTU, bytes */
	uint32_t ud_max_payload;          /**< largest UD SEND payload, bytes */
	uint32_t size;                    /**< message size the sink was set up for */
	unsigned int n_qps;
	struct uroce_lg_qp qps[UROCE_LG_MAX_QPS];
};

/**
 * Write @p d as one JSON object on one line (and a newline) to @p f. Keys
 * and their meaning: doc/loadgen.md.
 * @return 0, or -EIO if the stream reported an error.
 */
int uroce_lg_desc_write(FILE *f, const struct uroce_lg_desc *d);

/**
 * Read a description from @p text (@p len bytes, JSON; the first JSON value
 * in the text is read, anything after it is ignored, so a sink's whole output
 * can be given). Every field is checked (types, ranges, QPN 24 bits, a
 * window inside the address space, a UD QP with a Q_Key, ...); unknown keys
 * are ignored so that newer sinks stay readable.
 * @param err  on failure, a sentence naming the field and the problem
 * @return 0, -EINVAL (bad JSON or a bad field, see @p err), -E2BIG (too big
 *   or too deep), -ENOMEM.
 */
int uroce_lg_desc_parse(const char *text, size_t len, struct uroce_lg_desc *d, char *err,
			size_t errlen);

/** Short name of a QP type: "UC" or "UD". */
const char *uroce_lg_qp_type_name(enum uroce_lg_qp_type t);

/** True if @p gid is ::ffff:a.b.c.d (the GID travels as IPv4). */
bool uroce_lg_gid_is_v4(const uint8_t gid[16]);

/**
 * Format a GID as an address: IPv4 dotted for an IPv4-mapped GID, else
 * RFC 5952 IPv6. @return @p buf.
 */
char *uroce_lg_gid_addr(const uint8_t gid[16], char *buf, size_t len);

/**
 * Parse an IPv4 or IPv6 address (or an IPv6 GID) into a GID, IPv4 as
 * ::ffff:a.b.c.d. @return 0 or -EINVAL.
 */
int uroce_lg_addr_gid(const char *s, uint8_t gid[16]);

/** Parse "aa:bb:cc:dd:ee:ff". @return 0 or -EINVAL. */
int uroce_lg_parse_mac(const char *s, uint8_t mac[6]);

/**
 * The MAC behind a modified EUI-64 link-local GID (fe80::/64 with ff:fe in
 * the middle of the interface id), as uroced's GID 0 is.
 * @return 0, or -EINVAL if @p gid is not of that form.
 */
int uroce_lg_mac_from_gid(const uint8_t gid[16], uint8_t mac[6]);

/* ------------------------------------------------------------------------ */
/* Rate records                                                              */
/* ------------------------------------------------------------------------ */

/** Version of the rate record ("uroce_rate" key). */
#define UROCE_LG_RATE_VERSION 1

/** What a receiver (or a generator) counts; doc/loadgen.md defines each. */
struct uroce_lg_counts {
	uint64_t msgs;       /**< messages accepted and placed */
	uint64_t bytes;      /**< their payload bytes */
	uint64_t cqes;       /**< completions taken (successful or not) */
	uint64_t errors;     /**< rejected: error completions and daemon error counters */
	uint64_t dropped;    /**< not taken for want of a receive WQE (receiver overrun) */
	uint64_t resyncs;    /**< UC PSN jumps the receiver resynchronised on */
	uint64_t verify_bad; /**< messages (or window bytes) that failed the pattern check */
};

/** @p a += @p b, field by field. */
void uroce_lg_counts_add(struct uroce_lg_counts *a, const struct uroce_lg_counts *b);

/** @p a - @p b, field by field (each clamped at 0). */
struct uroce_lg_counts uroce_lg_counts_sub(const struct uroce_lg_counts *a,
					   const struct uroce_lg_counts *b);

/**
 * Write one rate record (one JSON line): @p role ("sink", "gen"), @p t
 * seconds since the start, @p dt the interval, the interval's counts and
 * per-second rates, and the running totals.
 * @return 0, or -EIO if the stream reported an error.
 */
int uroce_lg_rate_write(FILE *f, const char *role, double t, double dt,
			const struct uroce_lg_counts *delta, const struct uroce_lg_counts *total);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_LOADGEN_H */
