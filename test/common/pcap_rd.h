/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * A minimal classic-pcap reader for the test vectors (test/vectors/README.md):
 * plain stdio, either byte order, µs or ns stamps, whole records only. Tests
 * that read golden captures use it instead of libpcap.
 */

#ifndef UROCE_TEST_PCAP_RD_H
#define UROCE_TEST_PCAP_RD_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct pcap_rd {
	FILE *f;
	bool swap;
	uint32_t linktype;
};

static inline uint32_t
pcap_rd_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

static inline uint32_t
pcap_rd_u32(const struct pcap_rd *r, const uint8_t *p)
{
	uint32_t v = pcap_rd_le32(p);

	return r->swap ? __builtin_bswap32(v) : v;
}

/* Open @p path. @return 0, the -errno of fopen, or -EPROTO (not a classic pcap). */
static inline int
pcap_rd_open(struct pcap_rd *r, const char *path)
{
	uint8_t gh[24];
	uint32_t magic;

	r->swap = false;
	r->linktype = 0;
	r->f = fopen(path, "rb");
	if (r->f == NULL)
		return -errno;
	if (fread(gh, 1, sizeof(gh), r->f) != sizeof(gh))
		goto bad;
	magic = pcap_rd_le32(gh);
	if (magic == 0xA1B2C3D4u || magic == 0xA1B23C4Du)
		r->swap = false;
	else if (magic == 0xD4C3B2A1u || magic == 0x4D3CB2A1u)
		r->swap = true;
	else
		goto bad;
	r->linktype = pcap_rd_u32(r, gh + 20);
	return 0;
bad:
	fclose(r->f);
	r->f = NULL;
	return -EPROTO;
}

/*
 * The next record into @p buf (@p cap bytes).
 * @return 1 and its length in *@p len; 0 at the end; -EMSGSIZE (longer than
 *   @p cap), -EPROTO (truncated, or snapped: vectors must be whole).
 */
static inline int
pcap_rd_next(struct pcap_rd *r, uint8_t *buf, uint32_t cap, uint32_t *len)
{
	uint8_t rh[16];
	size_t got = fread(rh, 1, sizeof(rh), r->f);
	uint32_t incl, orig;

	if (got == 0)
		return 0;
	if (got != sizeof(rh))
		return -EPROTO;
	incl = pcap_rd_u32(r, rh + 8);
	orig = pcap_rd_u32(r, rh + 12);
	if (incl > cap)
		return -EMSGSIZE;
	if (incl != orig || fread(buf, 1, incl, r->f) != incl)
		return -EPROTO;
	*len = incl;
	return 1;
}

static inline void
pcap_rd_close(struct pcap_rd *r)
{
	if (r->f != NULL)
		fclose(r->f);
	r->f = NULL;
}

#endif /* UROCE_TEST_PCAP_RD_H */
