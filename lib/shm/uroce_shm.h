/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The shared-memory ABI between uroced and its client processes, whole: one
 * header per concern, included here for a user that wants all of it.
 *
 *   uroce_shm_abi.h         assertions, version, cache line
 *   uroce_shm_datapath.h    WQEs, CQEs, rings, doorbells, CQ arming, segments
 *   uroce_shm_ctrl.h        control messages, their checks, the socket
 *   uroce_shm_introspect.h  sessions, QPs, counters, workers (uroce-ctl)
 *   uroce_shm_gen.h         the lcore load generator
 *   uroce_shm_cm.h          the connection manager (rdma_cm)
 *   uroce_shm_status.h      the daemon's heartbeat and sleeping workers
 *   uroce_shm_wqe.h         the daemon's reader of work queues (private)
 *
 * doc/shm-abi.md describes the layout, the ownership of every index and the
 * memory ordering. No DPDK here: this is part of the core.
 */

#ifndef UROCE_SHM_H
#define UROCE_SHM_H

#include "uroce_shm_abi.h"
#include "uroce_shm_datapath.h"
#include "uroce_shm_ctrl.h"
#include "uroce_shm_introspect.h"
#include "uroce_shm_gen.h"
#include "uroce_shm_cm.h"
#include "uroce_shm_status.h"
#include "uroce_shm_wqe.h"

#endif /* UROCE_SHM_H */
