/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Private interfaces between the files of liburoce. verbs.c owns the
 * context and its control exchange with the daemon; rebacking.c re-backs
 * ordinary page-aligned process memory with shared memory in place so that
 * uroce_reg_mr() can register it (doc/verbs.md, "Registering ordinary
 * memory").
 */

#ifndef VERBS_INTERNAL_H
#define VERBS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "uroce_shm_ctrl.h"
#include "uroce_verbs.h"

/*
 * One control exchange with the daemon (verbs.c): send a request of @p type
 * (with descriptor @p fd_in if >= 0), wait for its response.
 * @return the daemon's status (0 or -errno), or -ENOTCONN, -ETIMEDOUT,
 *   -EPROTO, -EPROTONOSUPPORT.
 */
int verbs_rpc(struct uroce_context *c, uint16_t type, const void *req, size_t req_len,
	      int fd_in, void *resp, size_t resp_len, int *fd_out);

/*
 * Make [@p addr, @p addr + @p length) reachable by the daemon for one more
 * MR of context @p c. A range inside a range already re-backed (by any
 * context) reuses that memory; otherwise the range must be page aligned and
 * is re-backed in place: a sealed memfd takes its contents and is mapped
 * MAP_SHARED|MAP_FIXED over it, so pointers and contents stay valid. The
 * memfd is given to the daemon (ALLOC_SEGMENT) once per context.
 * On success *@p seg_handle and *@p seg_offset name the window for REG_MR,
 * and the caller owes one rbk_release() for the same range.
 * @return 0, or -EINVAL (length 0, wraps, a new range not page aligned, or
 *   partly overlapping a re-backed range), -EFAULT (part of the range is not
 *   mapped), -EACCES (part is not readable), -EOPNOTSUPP (part is a file,
 *   shared, hugetlb or special mapping), -EBUSY (a re-backed range with
 *   live MRs was unmapped or replaced by the application), -ENOMEM, or the
 *   -errno of memfd_create/ftruncate/mmap or of the daemon exchange.
 */
int rbk_acquire(struct uroce_context *c, void *addr, size_t length, uint32_t *seg_handle,
		uint64_t *seg_offset);

/*
 * Drop one MR's hold taken by rbk_acquire() on the same range. When the
 * context's last MR on the memory goes, the daemon is told to free the
 * segment (FREE_SEGMENT); when the last context goes, the range is turned
 * back into private anonymous memory with the same contents (if the
 * application has not unmapped it meanwhile).
 * @return 0, or -ENOENT if no re-backed range of @p c covers it.
 */
int rbk_release(struct uroce_context *c, const void *addr, size_t length);

/*
 * Forget every hold of context @p c without talking to the daemon (it
 * reclaims the segments when the socket closes); memory no other context
 * uses is turned back into private memory.
 */
void rbk_context_closed(struct uroce_context *c);

#endif /* VERBS_INTERNAL_H */
