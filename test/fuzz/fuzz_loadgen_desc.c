/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * libFuzzer target for lib/loadgen's sink description reader (and the JSON
 * reader under it): any byte string is a description file. Invariants: a
 * refusal always says why; an accepted description, written again with
 * uroce_lg_desc_write(), reads back to the same fields.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_loadgen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
same(const struct uroce_lg_desc *a, const struct uroce_lg_desc *b)
{
	unsigned int i;

	if (a->version != b->version || strcmp(a->pattern, b->pattern) != 0 ||
	    strcmp(a->socket, b->socket) != 0 || a->port != b->port ||
	    a->gid_index != b->gid_index || memcmp(a->mac, b->mac, 6) != 0 ||
	    strcmp(a->mac_source, b->mac_source) != 0 || a->has_vlan != b->has_vlan ||
	    a->vlan != b->vlan || memcmp(a->gid, b->gid, 16) != 0 ||
	    memcmp(a->peer_gid, b->peer_gid, 16) != 0 || a->n_gids != b->n_gids ||
	    a->path_mtu != b->path_mtu || a->ud_max_payload != b->ud_max_payload ||
	    a->size != b->size || a->n_qps != b->n_qps)
		abort();
	for (i = 0; i < a->n_gids; i++)
		if (memcmp(a->gids[i], b->gids[i], 16) != 0 || a->gid_idx[i] != b->gid_idx[i])
			abort();
	for (i = 0; i < a->n_qps; i++) {
		const struct uroce_lg_qp *x = &a->qps[i], *y = &b->qps[i];

		if (x->type != y->type || x->qpn != y->qpn || x->peer_qpn != y->peer_qpn ||
		    x->psn != y->psn || x->qkey != y->qkey || x->rkey != y->rkey ||
		    x->va != y->va || x->len != y->len || x->recv_slots != y->recv_slots ||
		    x->ops != y->ops)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct uroce_lg_desc d, r;
	char err[256] = "", *text = NULL;
	size_t len = 0;
	FILE *f;

	if (uroce_lg_desc_parse((const char *)data, size, &d, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			abort(); /* a refusal without a reason */
		return 0;
	}
	f = open_memstream(&text, &len);
	if (f == NULL)
		return 0;
	if (uroce_lg_desc_write(f, &d) != 0)
		abort();
	fclose(f);
	if (uroce_lg_desc_parse(text, len, &r, err, sizeof(err)) != 0)
		abort(); /* what the writer wrote, the reader refused */
	same(&d, &r);
	free(text);
	return 0;
}
