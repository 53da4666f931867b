/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The packet model of `uroce-ctl decode`. One captured frame is decoded with
 * lib/wire's parser (uroce_frame_parse, uroce_pkt_parse, uroce_icrc_check)
 * into a compact record (struct ctl_pkt) that keeps the verdicts and a copy of
 * the transport headers. The record is turned into an ordered list of named
 * fields (struct ctl_fields); the JSON printer and `--diff` both walk that
 * list, so the two always agree on key names, order and on what is null.
 */

#ifndef UROCE_CTL_DECODE_H
#define UROCE_CTL_DECODE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <arpa/inet.h>
#include <pcap/pcap.h>

#include "uroce_wire.h"

#include "json.h"

/** Bytes of transport headers kept: more than the longest BTH + extension headers (40). */
#define CTL_HDR_MAX 64

/** One decoded frame. */
struct ctl_pkt {
	uint64_t index;              /**< 0-based frame number in the capture */
	enum uroce_wire_err err;     /**< first problem found, UROCE_WIRE_OK if valid */
	int8_t icrc;                 /**< 1 matches, 0 mismatch, -1 not computed */
	enum uroce_ip_family family; /**< UROCE_IP_NONE: no IP header was read */
	uint8_t src[16];             /**< IPv6, or IPv4-mapped ::ffff:a.b.c.d */
	uint8_t dst[16];
	uint8_t tclass;              /**< IPv4 TOS / IPv6 traffic class, with family */
	bool has_sport;
	uint16_t sport;
	bool has_paylen;
	uint32_t paylen;             /**< payload bytes, pad excluded */
	uint32_t hdr_avail;          /**< bytes of hdr[] taken from the frame; 0: no BTH */
	uint8_t hdr[CTL_HDR_MAX];    /**< the BTH and what follows it */
};

/** Buffers reused from frame to frame. */
struct ctl_decoder {
	uint8_t *pad_buf;   /**< zero-filled copy of a snap-truncated frame */
	uint32_t pad_cap;
};

/** True when the frame reached the BTH: the packets --diff lines up. */
static inline bool
ctl_pkt_is_roce(const struct ctl_pkt *p)
{
	return p->hdr_avail > 0;
}

/**
 * Decode one captured frame.
 *
 * @param data     captured bytes
 * @param caplen   bytes captured
 * @param wirelen  bytes the frame had on the wire (caplen < wirelen: snap-truncated)
 */
void ctl_pkt_decode(struct ctl_decoder *d, const uint8_t *data, uint32_t caplen,
		    uint32_t wirelen, uint64_t index, struct ctl_pkt *p);

void ctl_decoder_free(struct ctl_decoder *d);

enum ctl_fkind {
	CTL_F_NULL,
	CTL_F_U64,
	CTL_F_BOOL,
	CTL_F_STR,
};

/** One output key. */
struct ctl_field {
	const char *group;   /**< extension header key ("reth"), or NULL at top level */
	const char *name;    /**< key; NULL with a group: the whole header is null */
	enum ctl_fkind kind;
	uint64_t u;          /**< CTL_F_U64, CTL_F_BOOL */
	const char *s;       /**< CTL_F_STR */
};

#define CTL_FIELDS_MAX 48

struct ctl_fields {
	unsigned int n;
	struct ctl_field f[CTL_FIELDS_MAX];
	char src[INET6_ADDRSTRLEN];
	char dst[INET6_ADDRSTRLEN];
};

/** Fill @p fs with the keys of @p p, in output order. */
void ctl_pkt_fields(const struct ctl_pkt *p, struct ctl_fields *fs);

/** Write the value of one field. */
void ctl_field_json(const struct ctl_field *f, struct json *j);

/** The dotted name of a field as --diff prints it: "psn", "reth.va", "reth" (null header). */
void ctl_field_key(const struct ctl_field *f, char *buf, size_t cap);

/** Longest ctl_field_key() result, NUL included. */
#define CTL_KEY_MAX 32

/** Write the fields of one packet as one JSON object. */
void ctl_fields_json(const struct ctl_fields *fs, struct json *j);

/**
 * Open a capture for reading and check its link type.
 *
 * @return the handle, or NULL after printing why (unreadable file, not a
 *   capture, link type other than Ethernet).
 */
pcap_t *ctl_pcap_open(const char *path);

/**
 * `decode --diff`: the part of ctl_decode_main() that compares two captures.
 *
 * @param ignore   comma-separated keys to leave out, or NULL
 * @param by_role  pair requests with requests and responses with responses
 *                 (--align role) instead of all RoCEv2 packets by order
 * @return CTL_EXIT_OK, CTL_EXIT_FOUND or CTL_EXIT_ERROR
 */
int ctl_decode_diff(const char *path_a, const char *path_b, const char *ignore, bool by_role);

#endif /* UROCE_CTL_DECODE_H */
