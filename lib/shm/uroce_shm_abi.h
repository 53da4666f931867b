/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The shared-memory ABI between uroced and its clients: what every part of it
 * shares (the size and offset assertions, the version and its check, the
 * cache line the layout is built around).
 *
 * The ABI is a fixed, versioned, binary contract between two processes on the
 * same host, distinct from the transport engine's in-memory structures (the
 * daemon translates). Integers are in host byte order, which for every
 * supported target is little-endian; the ABI never crosses a network.
 *
 * Trust: the client trusts the daemon; the daemon trusts nothing it reads from
 * shared memory. Its ring handles keep their own index in private memory,
 * validate every index read from the client, and copy entries out before
 * anything looks at them. doc/shm-abi.md describes the layout, the ownership of
 * every index and the memory ordering.
 *
 * No DPDK here: this is part of the core.
 */

#ifndef UROCE_SHM_ABI_H
#define UROCE_SHM_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <uroce_limits.h>
#include <uroce_verbs_defs.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
#define UROCE_SHM_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define UROCE_SHM_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

/** Assert the size of an ABI struct. */
#define UROCE_SHM_SIZE(type, n) \
	UROCE_SHM_STATIC_ASSERT(sizeof(type) == (n), #type " size is ABI")
/** Assert the offset of a field of an ABI struct. */
#define UROCE_SHM_OFF(type, field, n) \
	UROCE_SHM_STATIC_ASSERT(offsetof(type, field) == (n), #type "." #field " offset is ABI")

/*
 * ---------------------------------------------------------------------------
 * Version
 * ---------------------------------------------------------------------------
 */

/** ABI major version. A peer with a different major is refused. */
#define UROCE_SHM_ABI_MAJOR 1
/** ABI minor version. Minors of one major interoperate (see doc/shm-abi.md).
 * 1.1: SRQs get a doorbell slot (create_srq_resp.db_block/db_slot), ASYNC_EVENT
 * is sent, introspection messages (LIST_SESSIONS, LIST_QPS, QUERY_COUNTERS).
 * 1.2: one doorbell block per worker (hello_resp.n_db_blocks; a QP or SRQ
 * rings the block of the worker that owns it, create_*_resp.db_block), the
 * owner worker in LIST_QPS (qp_info.worker), LIST_WORKERS. A 1.0 or 1.1
 * client gets one block, and its QPs and SRQs all go to worker 0.
 * 1.3: the lcore load generator (GEN_CREATE ... GEN_DESTROY).
 * 1.4: rdma_cm (CM_CHANNEL_OPEN ... CM_QUERY requests, CM_EVENT on event
 * channels; doc/rdmacm.md).
 * 1.5: the status segment (GET_STATUS, uroce_shm_status.h): the daemon's
 * heartbeat, and idle workers a client wakes after a doorbell; memory
 * windows (ALLOC_MW, DEALLOC_MW; BIND_MW and LOCAL_INV send WQEs,
 * send_wqe.wr.bind); MW_BIND access on REG_MR; RESIZE_CQ and REREG_MR.
 * 1.6: IBA 1.5 ATOMIC_WRITE (15) and FLUSH (14) send WQEs
 * (send_wqe.wr.atomic_write, wr.flush), the FLUSH access flags on REG_MR
 * (GLOBAL only) and QPs; QUERY_DEVICE is unchanged: a 1.6 daemon offers
 * both (the drop-in reports their capability bits from the minor).
 * 1.7: XRC (IBA 1.2): OPEN_XRCD, CLOSE_XRCD, CREATE_XRC_SRQ; CREATE_QP takes
 * XRC_SEND and XRC_RECV; send_wqe.xrc_remote_srqn (was reserved0).
 * 1.8: CQ moderation (MODIFY_CQ). */
#define UROCE_SHM_ABI_MINOR 8

/**
 * Check a peer's ABI version against ours.
 *
 * @return
 *   0 if compatible, -EPROTONOSUPPORT if the major differs.
 */
int uroce_shm_version_check(uint16_t peer_major, uint16_t peer_minor);

/** Where clients find the daemon's control socket when nothing says otherwise. */
#define UROCE_DEFAULT_SOCKET "/run/uroce/uroced.sock"

/** Cache line size the layout is built around (x86-64 and arm64 servers). */
#define UROCE_SHM_CACHE_LINE 64


#ifdef __cplusplus
}
#endif

#endif /* UROCE_SHM_ABI_H */
