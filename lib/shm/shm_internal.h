/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * Private helpers of lib/shm: atomic views of the plain integer fields of the
 * shared structs. The public header keeps plain uint32_t/uint64_t so that it
 * compiles as C++ too; every access to a shared index or flag goes through
 * these casts, as C11 atomics, never as a plain load or store.
 */

#ifndef SHM_INTERNAL_H
#define SHM_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "uroce_shm.h"

/* The ABI needs lock-free, address-free 32- and 64-bit atomics with the same
 * representation as the plain integers: that is what makes them usable across
 * two processes mapping the same page. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "32-bit atomics are lock-free");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics are lock-free");
_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t), "atomic u32 is 4 bytes");
_Static_assert(sizeof(_Atomic uint64_t) == sizeof(uint64_t), "atomic u64 is 8 bytes");

#define SHM_A32(p) ((_Atomic uint32_t *)(void *)(p))
#define SHM_A64(p) ((_Atomic uint64_t *)(void *)(p))

/* Arm word encoding (see uroce_shm_cq_arm()). */
#define SHM_ARM_CONS(w) ((uint32_t)(w))
#define SHM_ARM_MODE(w) ((uint32_t)((w) >> 32) & 0xffu)
#define SHM_ARM_SEQ(w) ((uint32_t)((w) >> 40))
#define SHM_ARM_WORD(cons, mode, seq) \
	((uint64_t)(cons) | ((uint64_t)((mode) & 0xffu) << 32) | \
	 ((uint64_t)((seq) & 0xffffffu) << 40))

#endif /* SHM_INTERNAL_H */
