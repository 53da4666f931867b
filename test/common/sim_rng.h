/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The seeded random source of the simulated wires (simwire.c for two
 * engines, simwire_daemon.c for two daemon cores): xorshift64*, small, fast,
 * and the same sequence for the same seed, so a failing run can be replayed.
 */

#ifndef UROCE_SIM_RNG_H
#define UROCE_SIM_RNG_H

#include <stdbool.h>
#include <stdint.h>

/** A state from @p seed (never 0, which xorshift cannot leave). */
static inline uint64_t
sim_rng_seed(uint64_t seed)
{
	uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x1234567;

	return s != 0 ? s : 1;
}

static inline uint64_t
sim_rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

/** True with probability @p ppm / 1e6. */
static inline bool
sim_chance(uint64_t *s, uint32_t ppm)
{
	return ppm != 0 && sim_rnd(s) % 1000000u < ppm;
}

#endif /* UROCE_SIM_RNG_H */
