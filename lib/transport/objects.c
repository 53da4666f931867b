/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The small objects: protection domains and address handles, plus the
 * counter and status name tables.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport_internal.h"

static const char *const cnt_names[UROCE_CNT_MAX] = {
#define UROCE_CNT(sym, name, desc) [UROCE_CNT_##sym] = name,
#include "counters.def"
#undef UROCE_CNT
};

static const char *const cnt_descs[UROCE_CNT_MAX] = {
#define UROCE_CNT(sym, name, desc) [UROCE_CNT_##sym] = desc,
#include "counters.def"
#undef UROCE_CNT
};

const char *
uroce_eng_counter_name(enum uroce_counter c)
{
	return (unsigned int)c < UROCE_CNT_MAX ? cnt_names[c] : NULL;
}

const char *
uroce_eng_counter_desc(enum uroce_counter c)
{
	return (unsigned int)c < UROCE_CNT_MAX ? cnt_descs[c] : NULL;
}

struct uroce_eng_pd *
uroce_eng_pd_alloc(struct uroce_eng *eng)
{
	struct uroce_eng_pd *pd;

	if (eng == NULL) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pd->dev = eng->dev;
	pd->home = eng;
	TAILQ_INSERT_TAIL(&pd->dev->pds, pd, link);
	return pd;
}

int
uroce_eng_pd_dealloc(struct uroce_eng_pd *pd)
{
	if (pd == NULL)
		return -EINVAL;
	if (__atomic_load_n(&pd->refs, __ATOMIC_RELAXED) != 0)
		return -EBUSY;
	TAILQ_REMOVE(&pd->dev->pds, pd, link);
	free(pd);
	return 0;
}

struct uroce_eng_ah *
uroce_eng_ah_create(struct uroce_eng_pd *pd, const struct uroce_eng_ah_attr *attr)
{
	struct uroce_eng_ah *ah;

	if (pd == NULL || attr == NULL || attr->flow_label > 0xFFFFF) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ah->pd = pd;
	ah->attr = *attr;
	__atomic_fetch_add(&pd->refs, 1, __ATOMIC_RELAXED);
	TAILQ_INSERT_TAIL(&pd->dev->ahs, ah, link);
	return ah;
}

int
uroce_eng_ah_destroy(struct uroce_eng_ah *ah)
{
	if (ah == NULL)
		return -EINVAL;
	__atomic_fetch_sub(&ah->pd->refs, 1, __ATOMIC_RELAXED);
	TAILQ_REMOVE(&ah->pd->dev->ahs, ah, link);
	free(ah);
	return 0;
}

const struct uroce_eng_ah_attr *
uroce_eng_ah_attr(const struct uroce_eng_ah *ah)
{
	return &ah->attr;
}

struct uroce_eng_pd *
uroce_eng_ah_pd(const struct uroce_eng_ah *ah)
{
	return ah->pd;
}

const char *
uroce_eng_qp_state_str(enum uroce_qp_state s)
{
	static const char *const names[] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
	};

	return (unsigned int)s < UROCE_ARRAY_SIZE(names) ? names[s] : "?";
}
