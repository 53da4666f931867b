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

/**
 * uroce_lg_rate_write() with more members: @p extra (may be NULL or empty)
 * is written as is after the per-second rates and before "total", so it must
 * be a sequence of `,"key":value` pairs (the lcore generator's cycles per
 * message, for one). The record stays one JSON object that readers of the
 * plain record read unchanged.
 * @return 0, or -EIO if the stream reported an error.
 */
int uroce_lg_rate_write_ext(FILE *f, const char *role, double t, double dt,
			    const struct uroce_lg_counts *delta,
			    const struct uroce_lg_counts *total, const char *extra);

/* ------------------------------------------------------------------------ */
/* The lcore generator: what it sends and how its results are checked       */
/* ------------------------------------------------------------------------ */

/*
 * The stateful generator inside uroced (doc/loadgen.md, "The lcore
 * generator") sends a mix of operations and sizes over N RC QPs to a target
 * generator of another daemon, whose memory holds the uroce-lg-1 pattern.
 * What is shared between the command that drives it (uroce-ctl gen), the
 * daemon that runs it and the tests is here: the mix, its parsing and its
 * apportionment, where a message lands in its QP's window, and the model of
 * the target's atomic word that the results of FETCH_AND_ADD and
 * COMPARE_AND_SWAP are checked against.
 */

/** An operation of the generator. */
enum uroce_lg_op {
	UROCE_LG_WRITE = 0, /**< RDMA WRITE */
	UROCE_LG_READ = 1,  /**< RDMA READ */
	UROCE_LG_SEND = 2,  /**< SEND */
	UROCE_LG_FADD = 3,  /**< ATOMIC FETCH_AND_ADD */
	UROCE_LG_CSWAP = 4, /**< ATOMIC COMPARE_AND_SWAP */
	UROCE_LG_NOPS
};

/** Bit of @p op in an operation mask (uroce_lg_mix_ops()). */
#define UROCE_LG_OP_BIT(op) (1u << (op))
/** The two atomics, as a mask. */
#define UROCE_LG_ATOMIC_OPS (UROCE_LG_OP_BIT(UROCE_LG_FADD) | UROCE_LG_OP_BIT(UROCE_LG_CSWAP))

/** Entries a mix may have. */
#define UROCE_LG_MIX_MAX 16
/** Largest message of the generator (WRITE, READ, SEND). */
#define UROCE_LG_GEN_MAX_SIZE (16u << 20)
/** Largest weight of one mix entry. */
#define UROCE_LG_MAX_WEIGHT 1000000u
/** Bytes of an atomic operand (IBA 9.4.5). */
#define UROCE_LG_ATOMIC_SIZE 8u
/** Slots of the apportioned mix table (uroce_lg_mix_table()). */
#define UROCE_LG_MIX_TABLE 1024u

/** One kind of message and its share. */
struct uroce_lg_mix_entry {
	uint32_t op;     /**< enum uroce_lg_op */
	uint32_t size;   /**< bytes; UROCE_LG_ATOMIC_SIZE for an atomic */
	uint32_t weight; /**< relative share, 1..UROCE_LG_MAX_WEIGHT */
};

/** What the generator sends: each message is one entry, picked by weight. */
struct uroce_lg_mix {
	unsigned int n;
	struct uroce_lg_mix_entry e[UROCE_LG_MIX_MAX];
};

/** Name of @p op: "write", "read", "send", "fadd", "cswap"; "?" if out of range. */
const char *uroce_lg_op_name(unsigned int op);

/**
 * A size in bytes: decimal digits, optionally followed by K, M or G (also
 * k, KiB, MiB, GiB): powers of 1024. "64", "4K", "64KiB", "1M".
 * @return 0, -EINVAL (not a size), -ERANGE (above 2^40).
 */
int uroce_lg_parse_size(const char *s, uint64_t *v);

/**
 * A count: decimal digits, optionally followed by k, M or G (powers of
 * 1000), as a rate or a number of messages is written: "500", "100k", "2M".
 * @return 0, -EINVAL (not a count), -ERANGE (above 10^15).
 */
int uroce_lg_parse_count(const char *s, uint64_t *v);

/**
 * Parse a joint mix: comma-separated entries OP[:SIZE[:WEIGHT]], where OP is
 * write, read, send, fadd (FETCH_AND_ADD), cswap (COMPARE_AND_SWAP) or atomic
 * (fadd and cswap, each with the weight given), SIZE a size as
 * uroce_lg_parse_size() reads it (default 64, also when empty as in
 * "fadd::10"; an atomic's is 8 and may be given only as 8), WEIGHT
 * 1..UROCE_LG_MAX_WEIGHT (default 1). Entries of
 * the same operation and size add up. "write:64" is every message a 64-byte
 * WRITE; "write:64:70,read:1024:20,fadd:8:10" is a mix of three.
 * @param err  on failure, a sentence naming the entry and the problem
 * @return 0 (the mix passes uroce_lg_mix_check()), or -EINVAL.
 */
int uroce_lg_mix_parse(const char *text, struct uroce_lg_mix *m, char *err, size_t errlen);

/**
 * Build a mix from an operation mix and a size mix chosen independently:
 * @p ops is OP[:WEIGHT],... (OP as in uroce_lg_mix_parse()), @p sizes is
 * SIZE[:WEIGHT],... (NULL: 64). A WRITE, READ or SEND takes each size with
 * its share; an atomic is always 8 bytes. "write:3,read:1" with
 * "64:70,1024:20,65536:10" makes six entries.
 * @return 0, or -EINVAL (with @p err) for a bad list or more than
 *   UROCE_LG_MIX_MAX combinations.
 */
int uroce_lg_mix_product(const char *ops, const char *sizes, struct uroce_lg_mix *m, char *err,
			 size_t errlen);

/**
 * Check a mix received from elsewhere (the daemon checks what a client sent):
 * 1..UROCE_LG_MIX_MAX entries, known operations, sizes 1..UROCE_LG_GEN_MAX_SIZE
 * (atomics exactly 8), weights 1..UROCE_LG_MAX_WEIGHT.
 * @return 0, or -EINVAL with @p err (may be NULL) saying which entry and why.
 */
int uroce_lg_mix_check(const struct uroce_lg_mix *m, char *err, size_t errlen);

/** The operations a mix uses, as a mask of UROCE_LG_OP_BIT(). */
unsigned int uroce_lg_mix_ops(const struct uroce_lg_mix *m);

/** The largest size among the entries of operations in @p op_mask (0: none). */
uint32_t uroce_lg_mix_max_size(const struct uroce_lg_mix *m, unsigned int op_mask);

/**
 * Apportion a checked mix over UROCE_LG_MIX_TABLE slots and shuffle them:
 * entry i gets its share of the slots by the largest-remainder method, at
 * least one, so that any UROCE_LG_MIX_TABLE consecutive messages of one QP
 * follow the weights exactly (to the table's resolution); @p seed fixes the
 * order. @p table receives entry indexes.
 * @return 0, or -EINVAL if the mix does not pass uroce_lg_mix_check().
 */
int uroce_lg_mix_table(const struct uroce_lg_mix *m, uint64_t seed,
		       uint8_t table[UROCE_LG_MIX_TABLE]);

/**
 * Bytes of one QP's window at the target, for messages of at most
 * @p max_size bytes: a power of two, at least 64 KiB and at least the size.
 */
uint32_t uroce_lg_gen_win_len(uint32_t max_size);

/**
 * Window offset of the @p k-th message of @p size bytes of a QP whose window
 * is @p win_len bytes (uroce_lg_gen_win_len()): consecutive messages walk
 * the window, each at k * size modulo the window, moved back to end at the
 * window's end when it would cross it.
 */
static inline uint32_t
uroce_lg_gen_offset(uint64_t k, uint32_t size, uint32_t win_len)
{
	uint32_t off = (uint32_t)((k * size) & (win_len - 1));

	return off > win_len - size ? win_len - size : off;
}

/**
 * The value the target's atomic word of QP @p qpn (the target's QPN) holds
 * before any atomic: a uroce-lg-1 word, so that a word that was never set
 * (zero) is not taken for it.
 */
uint64_t uroce_lg_atomic_init(uint32_t qpn);

/**
 * The model of one atomic word: what it holds after every atomic posted so
 * far has run, exactly once and in order (RC executes a QP's atomics in PSN
 * order, a duplicate is answered from the saved result, IBA 9.7.5.3.3).
 */
struct uroce_lg_atomic {
	uint64_t value; /**< the word after the atomics posted so far */
	uint64_t n;     /**< atomics posted so far */
	uint64_t seed;
};

/** Start the model of the word of the target's QP @p qpn. */
void uroce_lg_atomic_start(struct uroce_lg_atomic *a, uint32_t qpn);

/**
 * The operands of the next atomic, and the original value its completion
 * must return. FETCH_AND_ADD adds an odd pattern word; COMPARE_AND_SWAP
 * compares with the value the word must hold and swaps in a pattern word, so
 * it always succeeds when nothing else touches the word. The model then
 * holds the value the word has after it.
 * @param op  UROCE_LG_FADD or UROCE_LG_CSWAP (any other: FETCH_AND_ADD)
 */
void uroce_lg_atomic_next(struct uroce_lg_atomic *a, unsigned int op, uint64_t *compare_add,
			  uint64_t *swap, uint64_t *expect);

/**
 * A digest of the final atomic words of the QPs of one generator: the
 * initiator computes it from its models, the target from its memory, and
 * equal digests say every atomic ran exactly once. Order matters: word i is
 * QP i's.
 */
uint64_t uroce_lg_atomic_digest(uint64_t digest, uint32_t i, uint64_t word);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_LOADGEN_H */
