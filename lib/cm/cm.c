/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The communication manager (IBA 12.9): ids, their states and timers.
 *
 * A received MAD goes through a step loop (rx_step below): decode, find
 * the id its comm IDs name (or make a new one for a REQ or SIDR_REQ),
 * check that the id's state accepts that message (the accepts[] table,
 * IBA 12.9.6-12.9.8), then run the message's handler, which moves the id
 * and tells its owner. Timers (retransmission of REQ, REP, DREQ and
 * SIDR_REQ, MRA-stretched waits, time wait) fire from uroce_cm_poll().
 *
 * An id the owner destroyed keeps the states IBA asks for (a REJ or DREQ
 * sent, time wait), then is freed; ids are never freed inside an event
 * callback or an API call made from one, only once the outermost call
 * returns (cm->depth).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_common.h"

#include "cm_internal.h"

/* rdma_cm's MRA service timeout and rxe's ACK delay, the defaults. */
#define CM_DEF_MRA_TIMEOUT 24
#define CM_DEF_ACK_DELAY 15
/* Default SIDR retransmission interval (rdma_cm: CM response timeout 20). */
#define CM_DEF_SIDR_TIMEOUT_MS 4096
/* The high half of every TID this CM originates (the low half is the comm ID). */
#define CM_TID_HI 0x75526f43ull /* "uRoC" */

static const char *const state_names[UROCE_CM_STATE_MAX] = {
	[UROCE_CM_IDLE] = "IDLE",
	[UROCE_CM_REQ_SENT] = "REQ_SENT",
	[UROCE_CM_REQ_RCVD] = "REQ_RCVD",
	[UROCE_CM_MRA_REQ_SENT] = "MRA_REQ_SENT",
	[UROCE_CM_MRA_REQ_RCVD] = "MRA_REQ_RCVD",
	[UROCE_CM_REP_SENT] = "REP_SENT",
	[UROCE_CM_REP_RCVD] = "REP_RCVD",
	[UROCE_CM_MRA_REP_SENT] = "MRA_REP_SENT",
	[UROCE_CM_MRA_REP_RCVD] = "MRA_REP_RCVD",
	[UROCE_CM_ESTABLISHED] = "ESTABLISHED",
	[UROCE_CM_DREQ_SENT] = "DREQ_SENT",
	[UROCE_CM_DREQ_RCVD] = "DREQ_RCVD",
	[UROCE_CM_TIMEWAIT] = "TIMEWAIT",
	[UROCE_CM_SIDR_REQ_SENT] = "SIDR_REQ_SENT",
	[UROCE_CM_SIDR_REQ_RCVD] = "SIDR_REQ_RCVD",
};

const char *
uroce_cm_state_name(enum uroce_cm_state s)
{
	return (unsigned int)s < UROCE_CM_STATE_MAX ? state_names[s] : "?";
}

static const char *const event_names[UROCE_CM_EV_MAX] = {
	[UROCE_CM_EV_REQ_RECEIVED] = "REQ_RECEIVED",
	[UROCE_CM_EV_REP_RECEIVED] = "REP_RECEIVED",
	[UROCE_CM_EV_RTU_RECEIVED] = "RTU_RECEIVED",
	[UROCE_CM_EV_REJ_RECEIVED] = "REJ_RECEIVED",
	[UROCE_CM_EV_REQ_TIMEOUT] = "REQ_TIMEOUT",
	[UROCE_CM_EV_REP_TIMEOUT] = "REP_TIMEOUT",
	[UROCE_CM_EV_MRA_RECEIVED] = "MRA_RECEIVED",
	[UROCE_CM_EV_DREQ_RECEIVED] = "DREQ_RECEIVED",
	[UROCE_CM_EV_DREP_RECEIVED] = "DREP_RECEIVED",
	[UROCE_CM_EV_DREQ_TIMEOUT] = "DREQ_TIMEOUT",
	[UROCE_CM_EV_TIMEWAIT_EXIT] = "TIMEWAIT_EXIT",
	[UROCE_CM_EV_SIDR_REQ_RECEIVED] = "SIDR_REQ_RECEIVED",
	[UROCE_CM_EV_SIDR_REP_RECEIVED] = "SIDR_REP_RECEIVED",
	[UROCE_CM_EV_SIDR_TIMEOUT] = "SIDR_TIMEOUT",
};

const char *
uroce_cm_event_name(enum uroce_cm_event_type t)
{
	return (unsigned int)t < UROCE_CM_EV_MAX ? event_names[t] : "?";
}

static const struct {
	const char *name;
	const char *desc;
} counter_info[UROCE_CM_CNT_MAX] = {
#define UROCE_CM_CNT(sym, name, desc) [UROCE_CM_CNT_##sym] = {name, desc},
#include "cm_counters.def"
#undef UROCE_CM_CNT
};

const char *
uroce_cm_counter_name(unsigned int c)
{
	return c < UROCE_CM_CNT_MAX ? counter_info[c].name : NULL;
}

const char *
uroce_cm_counter_desc(unsigned int c)
{
	return c < UROCE_CM_CNT_MAX ? counter_info[c].desc : NULL;
}

uint64_t
uroce_cm_counter(const struct uroce_cm *cm, unsigned int c)
{
	return cm != NULL && c < UROCE_CM_CNT_MAX ? cm->cnt[c] : 0;
}

/* ------------------------------------------------------------------------ */
/* Which message each state accepts (IBA 12.9.6-12.9.8, figures 160-163)     */
/* ------------------------------------------------------------------------ */

#define M(a) (1u << ((a) - UROCE_CM_ATTR_REQ))

static const uint32_t accepts[UROCE_CM_STATE_MAX] = {
	[UROCE_CM_IDLE] = 0,
	/* active, waiting for the REP */
	[UROCE_CM_REQ_SENT] = M(UROCE_CM_ATTR_REP) | M(UROCE_CM_ATTR_REJ) | M(UROCE_CM_ATTR_MRA),
	[UROCE_CM_MRA_REQ_RCVD] = M(UROCE_CM_ATTR_REP) | M(UROCE_CM_ATTR_REJ),
	/* passive, the consumer deciding: duplicate REQs, the active giving up */
	[UROCE_CM_REQ_RCVD] = M(UROCE_CM_ATTR_REQ) | M(UROCE_CM_ATTR_REJ),
	[UROCE_CM_MRA_REQ_SENT] = M(UROCE_CM_ATTR_REQ) | M(UROCE_CM_ATTR_REJ),
	/* passive, waiting for the RTU; a DREQ means the RTU was lost */
	[UROCE_CM_REP_SENT] = M(UROCE_CM_ATTR_RTU) | M(UROCE_CM_ATTR_REJ) | M(UROCE_CM_ATTR_MRA) |
			      M(UROCE_CM_ATTR_DREQ) | M(UROCE_CM_ATTR_REQ),
	[UROCE_CM_MRA_REP_RCVD] = M(UROCE_CM_ATTR_RTU) | M(UROCE_CM_ATTR_REJ) |
				  M(UROCE_CM_ATTR_DREQ) | M(UROCE_CM_ATTR_REQ),
	/* active, the consumer bringing its QP up: duplicate REPs */
	[UROCE_CM_REP_RCVD] = M(UROCE_CM_ATTR_REP) | M(UROCE_CM_ATTR_REJ),
	[UROCE_CM_MRA_REP_SENT] = M(UROCE_CM_ATTR_REP) | M(UROCE_CM_ATTR_REJ),
	[UROCE_CM_ESTABLISHED] = M(UROCE_CM_ATTR_DREQ) | M(UROCE_CM_ATTR_REJ) |
				 M(UROCE_CM_ATTR_REP) | M(UROCE_CM_ATTR_LAP) | M(UROCE_CM_ATTR_REQ),
	[UROCE_CM_DREQ_SENT] = M(UROCE_CM_ATTR_DREP) | M(UROCE_CM_ATTR_DREQ),
	[UROCE_CM_DREQ_RCVD] = M(UROCE_CM_ATTR_DREQ),
	[UROCE_CM_TIMEWAIT] = M(UROCE_CM_ATTR_DREQ) | M(UROCE_CM_ATTR_REQ) | M(UROCE_CM_ATTR_REP),
	[UROCE_CM_SIDR_REQ_SENT] = M(UROCE_CM_ATTR_SIDR_REP),
	[UROCE_CM_SIDR_REQ_RCVD] = M(UROCE_CM_ATTR_SIDR_REQ),
};

/* ------------------------------------------------------------------------ */
/* Tables and timers                                                         */
/* ------------------------------------------------------------------------ */

static unsigned int
hash_local(uint32_t comm_id)
{
	return (comm_id * 2654435761u) >> (32 - CM_HASH_BITS);
}

static unsigned int
hash_remote(uint32_t comm_id, uint64_t guid)
{
	uint64_t h = (comm_id ^ guid ^ (guid >> 32)) * 0x9E3779B97F4A7C15ull;

	return (unsigned int)(h >> (64 - CM_HASH_BITS));
}

static struct uroce_cm_id *
find_local(const struct uroce_cm *cm, uint32_t comm_id)
{
	struct uroce_cm_id *id;

	for (id = cm->by_local[hash_local(comm_id)]; id != NULL; id = id->local_next)
		if (id->local_comm_id == comm_id)
			return id;
	return NULL;
}

static struct uroce_cm_id *
find_remote(const struct uroce_cm *cm, uint32_t comm_id, uint64_t guid, bool sidr)
{
	struct uroce_cm_id *id;

	for (id = cm->by_remote[hash_remote(comm_id, guid)]; id != NULL; id = id->remote_next)
		if (id->remote_comm_id == comm_id && id->remote_ca_guid == guid &&
		    (id->state == UROCE_CM_SIDR_REQ_RCVD) == sidr)
			return id;
	return NULL;
}

static void
remote_insert(struct uroce_cm_id *id)
{
	struct uroce_cm_id **head =
		&id->cm->by_remote[hash_remote(id->remote_comm_id, id->remote_ca_guid)];

	if (id->in_remote)
		return;
	id->remote_next = *head;
	*head = id;
	id->in_remote = true;
}

static void
remote_remove(struct uroce_cm_id *id)
{
	struct uroce_cm_id **pp;

	if (!id->in_remote)
		return;
	pp = &id->cm->by_remote[hash_remote(id->remote_comm_id, id->remote_ca_guid)];
	for (; *pp != NULL; pp = &(*pp)->remote_next) {
		if (*pp == id) {
			*pp = id->remote_next;
			break;
		}
	}
	id->in_remote = false;
}

/* SIDR has no CA GUID: the requester is known by its GID. */
static uint64_t
gid_key(const uint8_t gid[16])
{
	return uroce_get_be64(gid) ^ uroce_get_be64(gid + 8);
}

static uint64_t
now(const struct uroce_cm *cm)
{
	return cm->conf.ops->now_us(cm->conf.ctx);
}

static void
timer_arm(struct uroce_cm_id *id, uint64_t ms)
{
	uint64_t at = now(id->cm) + ms * 1000u;

	id->deadline = at ? at : 1;
	if (id->deadline < id->cm->next_deadline)
		id->cm->next_deadline = id->deadline;
}

static void
timer_stop(struct uroce_cm_id *id)
{
	id->deadline = 0; /* next_deadline stays a lower bound */
}

uint64_t
uroce_cm_next_deadline(const struct uroce_cm *cm)
{
	return cm->next_deadline;
}

/* ------------------------------------------------------------------------ */
/* Ids                                                                       */
/* ------------------------------------------------------------------------ */

static uint32_t
comm_id_new(struct uroce_cm *cm)
{
	uint32_t c;

	do {
		c = cm->next_comm_id;
		/* an odd step visits every value before repeating */
		cm->next_comm_id += 0x9E3779B1u;
	} while (c == 0 || find_local(cm, c) != NULL);
	return c;
}

static struct uroce_cm_id *
id_new(struct uroce_cm *cm, void *context)
{
	struct uroce_cm_id *id = calloc(1, sizeof(*id));
	struct uroce_cm_id **head;

	if (id == NULL)
		return NULL;
	id->cm = cm;
	id->context = context;
	id->state = UROCE_CM_IDLE;
	id->local_comm_id = comm_id_new(cm);
	head = &cm->by_local[hash_local(id->local_comm_id)];
	id->local_next = *head;
	*head = id;
	id->next = cm->ids;
	if (cm->ids != NULL)
		cm->ids->pprev = &id->next;
	id->pprev = &cm->ids;
	cm->ids = id;
	cm->n_ids++;
	return id;
}

static void
id_free(struct uroce_cm_id *id)
{
	struct uroce_cm *cm = id->cm;
	struct uroce_cm_id **pp;

	remote_remove(id);
	for (pp = &cm->by_local[hash_local(id->local_comm_id)]; *pp != NULL;
	     pp = &(*pp)->local_next) {
		if (*pp == id) {
			*pp = id->local_next;
			break;
		}
	}
	*id->pprev = id->next;
	if (id->next != NULL)
		id->next->pprev = id->pprev;
	cm->n_ids--;
	free(id);
}

/* Free destroyed ids that have nothing left to do, unless a caller up the
 * stack may still hold one (an event callback, an API call made from it). */
static void
reap(struct uroce_cm *cm)
{
	struct uroce_cm_id *id, *next;

	if (cm->depth != 0 || !cm->reap_pending)
		return;
	cm->reap_pending = false;
	for (id = cm->ids; id != NULL; id = next) {
		next = id->next;
		if (id->destroyed && id->state == UROCE_CM_IDLE)
			id_free(id);
	}
}

static void
to_idle(struct uroce_cm_id *id)
{
	timer_stop(id);
	remote_remove(id);
	id->state = UROCE_CM_IDLE;
	if (id->destroyed)
		id->cm->reap_pending = true;
}

/* Tell the owner; a destroyed id has none. A new passive id's owner may
 * also write the ARI of a refusal into @p ari (NULL: none asked).
 * @return the callback's value. */
static int
emit_ari(struct uroce_cm_id *id, enum uroce_cm_event_type t, const struct uroce_cm_msg *msg,
	 const struct uroce_cm_addr *from, uint8_t *ari, uint8_t *ari_len)
{
	struct uroce_cm *cm = id->cm;
	struct uroce_cm_event ev = {.type = t, .msg = msg, .from = from, .ari = ari,
				    .ari_len = ari_len};
	int rc;

	if (id->destroyed)
		return 0;
	cm->depth++;
	rc = cm->conf.ops->event(cm->conf.ctx, id, &ev);
	cm->depth--;
	return rc;
}

static int
emit(struct uroce_cm_id *id, enum uroce_cm_event_type t, const struct uroce_cm_msg *msg,
     const struct uroce_cm_addr *from)
{
	return emit_ari(id, t, msg, from, NULL, NULL);
}

struct uroce_cm_id *
uroce_cm_id_create(struct uroce_cm *cm, void *context)
{
	struct uroce_cm_id *id;

	if (cm == NULL) {
		errno = EINVAL;
		return NULL;
	}
	id = id_new(cm, context);
	if (id == NULL)
		errno = ENOMEM;
	return id;
}

void *
uroce_cm_id_context(const struct uroce_cm_id *id)
{
	return id->context;
}

void
uroce_cm_id_set_context(struct uroce_cm_id *id, void *context)
{
	id->context = context;
}

enum uroce_cm_state
uroce_cm_id_state(const struct uroce_cm_id *id)
{
	return id->state;
}

uint32_t
uroce_cm_id_local_comm_id(const struct uroce_cm_id *id)
{
	return id->local_comm_id;
}

const struct uroce_cm_addr *
uroce_cm_id_addr(const struct uroce_cm_id *id)
{
	return &id->addr;
}

const struct uroce_cm_req *
uroce_cm_id_req(const struct uroce_cm_id *id)
{
	return id->has_req ? &id->req : NULL;
}

const struct uroce_cm_rep *
uroce_cm_id_rep(const struct uroce_cm_id *id)
{
	return id->has_rep ? &id->rep : NULL;
}

unsigned int
uroce_cm_id_count(const struct uroce_cm *cm)
{
	return cm->n_ids;
}

/* ------------------------------------------------------------------------ */
/* Sending                                                                   */
/* ------------------------------------------------------------------------ */

static int
xmit(struct uroce_cm *cm, const struct uroce_cm_addr *to, const uint8_t *mad)
{
	int rc = cm->conf.ops->send(cm->conf.ctx, to, mad);

	if (rc == 0)
		CM_CNT(cm, TX_MADS);
	else
		CM_CNT(cm, TX_FAILED);
	return rc;
}

/* Encode @p m into @p mad and send it to the id's peer. */
static int
send_msg(struct uroce_cm_id *id, struct uroce_cm_msg *m, uint16_t attr, uint64_t tid,
	 uint8_t *mad)
{
	m->hdr.attr_id = attr;
	m->hdr.tid = tid;
	if (uroce_cm_msg_encode(m, mad) != 0)
		return -EINVAL;
	return xmit(id->cm, &id->addr, mad);
}

static uint64_t
tid_of(const struct uroce_cm_id *id)
{
	return CM_TID_HI << 32 | id->local_comm_id;
}

/* The reply address of a received message: back where it came from. */
static void
addr_reply(struct uroce_cm_addr *to, const struct uroce_cm_addr *from)
{
	*to = *from;
	if (to->remote_qpn == 0)
		to->remote_qpn = UROCE_GSI_QPN;
}

static int
send_mra(struct uroce_cm_id *id, uint8_t msg_mraed)
{
	struct uroce_cm_msg m;

	memset(&m, 0, sizeof(m));
	m.u.mra.local_comm_id = id->local_comm_id;
	m.u.mra.remote_comm_id = id->remote_comm_id;
	m.u.mra.msg_mraed = msg_mraed;
	m.u.mra.service_timeout = id->cm->conf.mra_service_timeout;
	CM_CNT(id->cm, MRA_SENT);
	/* Kept: a further duplicate gets the same MRA again. */
	return send_msg(id, &m, UROCE_CM_ATTR_MRA, id->tid, id->mad);
}

static int
resend(struct uroce_cm_id *id)
{
	return xmit(id->cm, &id->addr, id->mad);
}

static void
rej_fill(struct uroce_cm_rej *r, uint32_t local, uint32_t remote, uint8_t msg, uint16_t reason,
	 const uint8_t *ari, uint8_t ari_len, const uint8_t *pdata, uint8_t len)
{
	r->local_comm_id = local;
	r->remote_comm_id = remote;
	r->msg_rejected = msg;
	r->reason = reason;
	r->ari_length = ari_len;
	if (ari_len > 0)
		memcpy(r->ari, ari, ari_len);
	if (len > 0)
		memcpy(r->private_data, pdata, len);
}

/* A REJ from the id's current state (the message it refuses follows from it). */
static int
send_rej_state(struct uroce_cm_id *id, uint16_t reason, const uint8_t *ari, uint8_t ari_len,
	       const uint8_t *pdata, uint8_t len)
{
	uint8_t mad[UROCE_MAD_LEN];
	struct uroce_cm_msg m;
	uint8_t ref;

	switch (id->state) {
	case UROCE_CM_REQ_RCVD:
	case UROCE_CM_MRA_REQ_SENT:
		ref = UROCE_CM_REF_REQ;
		break;
	case UROCE_CM_REP_RCVD:
	case UROCE_CM_MRA_REP_SENT:
		ref = UROCE_CM_REF_REP;
		break;
	default:
		ref = UROCE_CM_REF_OTHER;
		break;
	}
	memset(&m, 0, sizeof(m));
	rej_fill(&m.u.rej, id->local_comm_id, id->remote_comm_id, ref, reason, ari, ari_len, pdata,
		 len);
	CM_CNT(id->cm, REJ_SENT);
	return send_msg(id, &m, UROCE_CM_ATTR_REJ, id->tid, mad);
}

/* Answer a message no id will keep (REJ to a REQ, DREP to a DREQ, APR to a LAP). */
static void
send_stateless(struct uroce_cm *cm, const struct uroce_cm_addr *from, struct uroce_cm_msg *m,
	       uint16_t attr, uint64_t tid)
{
	struct uroce_cm_addr to;
	uint8_t mad[UROCE_MAD_LEN];

	addr_reply(&to, from);
	m->hdr.attr_id = attr;
	m->hdr.tid = tid;
	if (uroce_cm_msg_encode(m, mad) == 0)
		xmit(cm, &to, mad);
}

static void
rej_stateless(struct uroce_cm *cm, const struct uroce_cm_addr *from, const struct uroce_cm_msg *in,
	      uint16_t reason, const uint8_t *ari, uint8_t ari_len)
{
	struct uroce_cm_msg m;

	memset(&m, 0, sizeof(m));
	/* IBA 12.6.7: no state was kept, so the Local Comm ID is 0. */
	rej_fill(&m.u.rej, 0, in->u.req.local_comm_id, UROCE_CM_REF_REQ, reason, ari, ari_len, NULL,
		 0);
	CM_CNT(cm, REJ_SENT);
	send_stateless(cm, from, &m, UROCE_CM_ATTR_REJ, in->hdr.tid);
}

static void
drep_stateless(struct uroce_cm *cm, const struct uroce_cm_addr *from, const struct uroce_cm_msg *in)
{
	struct uroce_cm_msg m;

	memset(&m, 0, sizeof(m));
	m.u.rtu.local_comm_id = in->u.dreq.remote_comm_id;
	m.u.rtu.remote_comm_id = in->u.dreq.local_comm_id;
	CM_CNT(cm, DREP_SENT);
	send_stateless(cm, from, &m, UROCE_CM_ATTR_DREP, in->hdr.tid);
}

static void
sidr_rep_stateless(struct uroce_cm *cm, const struct uroce_cm_addr *from,
		   const struct uroce_cm_msg *in, uint8_t status)
{
	struct uroce_cm_msg m;

	memset(&m, 0, sizeof(m));
	m.u.sidr_rep.request_id = in->u.sidr_req.request_id;
	m.u.sidr_rep.status = status;
	m.u.sidr_rep.service_id = in->u.sidr_req.service_id;
	CM_CNT(cm, SIDR_REP_SENT);
	send_stateless(cm, from, &m, UROCE_CM_ATTR_SIDR_REP, in->hdr.tid);
}

static void
enter_timewait(struct uroce_cm_id *id)
{
	/* IBA 12.9.8.4: wait out packets still in flight on the old QP pair:
	 * the local ACK timeout's worth. */
	id->state = UROCE_CM_TIMEWAIT;
	timer_arm(id, uroce_cm_time_ms(id->local_ack_timeout));
}

/* ------------------------------------------------------------------------ */
/* Consumer calls                                                            */
/* ------------------------------------------------------------------------ */

int
uroce_cm_send_req(struct uroce_cm_id *id, const struct uroce_cm_req_param *p)
{
	struct uroce_cm *cm;
	struct uroce_cm_msg m;
	struct uroce_cm_req *r = &m.u.req;

	if (id == NULL || p == NULL || id->state != UROCE_CM_IDLE || id->destroyed ||
	    (p->transport != UROCE_CM_TRANSPORT_RC && p->transport != UROCE_CM_TRANSPORT_UC) ||
	    p->path_mtu < UROCE_MTU_256 || p->path_mtu > UROCE_MTU_4096 ||
	    p->retry_count > 7 || p->rnr_retry_count > 7 || p->max_cm_retries > 15 ||
	    p->packet_life_time > 31 || p->remote_cm_response_timeout > 31 ||
	    p->local_cm_response_timeout > 31 || p->starting_psn > 0xFFFFFF ||
	    p->qpn > 0xFFFFFF || p->sl > 15 || p->addr.flow_label > 0xFFFFF ||
	    p->private_data_len > UROCE_CM_REQ_PDATA ||
	    (p->private_data_len > 0 && p->private_data == NULL))
		return -EINVAL;
	cm = id->cm;
	memset(&m, 0, sizeof(m));
	r->local_comm_id = id->local_comm_id;
	r->service_id = p->service_id;
	r->local_ca_guid = cm->conf.ca_guid;
	r->local_qpn = p->qpn;
	r->responder_resources = p->responder_resources;
	r->initiator_depth = p->initiator_depth;
	r->remote_cm_response_timeout = p->remote_cm_response_timeout;
	r->transport = p->transport;
	r->e2e_flow_control = p->flow_control;
	r->starting_psn = p->starting_psn;
	r->local_cm_response_timeout = p->local_cm_response_timeout;
	r->retry_count = p->retry_count;
	r->pkey = p->addr.pkey ? p->addr.pkey : 0xFFFF;
	r->path_mtu = p->path_mtu;
	r->rnr_retry_count = p->rnr_retry_count;
	r->max_cm_retries = p->max_cm_retries;
	r->srq = p->srq;
	/* RoCE has no LIDs: a path that leaves the subnet (hop limit > 1)
	 * carries the permissive LID (IBA 12.6.5, as Linux sends it). */
	r->primary.local_lid = 0xFFFF;
	r->primary.remote_lid = 0xFFFF;
	memcpy(r->primary.local_gid, p->addr.sgid, 16);
	memcpy(r->primary.remote_gid, p->addr.dgid, 16);
	r->primary.flow_label = p->addr.flow_label;
	r->primary.traffic_class = p->addr.tclass;
	r->primary.hop_limit = p->addr.hop_limit ? p->addr.hop_limit : 64;
	r->primary.sl = p->sl;
	r->primary.local_ack_timeout = uroce_cm_ack_timeout(cm->conf.ack_delay, p->packet_life_time);
	if (p->private_data_len > 0)
		memcpy(r->private_data, p->private_data, p->private_data_len);
	id->addr = p->addr;
	if (id->addr.remote_qpn == 0)
		id->addr.remote_qpn = UROCE_GSI_QPN;
	id->addr.pkey = r->pkey;
	id->active = true;
	id->req = *r;
	id->has_req = true;
	id->local_qpn = p->qpn;
	id->resp_res = p->responder_resources;
	id->init_depth = p->initiator_depth;
	id->packet_life_time = p->packet_life_time;
	/* Before the REP tells the peer's ACK delay, the path alone. */
	id->local_ack_timeout = (uint8_t)UROCE_MIN(p->packet_life_time + 1, 31);
	id->max_cm_retries = p->max_cm_retries;
	/* IBA 12.7.4: the REQ's wait covers a round trip and the peer's CM. */
	id->cm_timeout_ms = 2 * uroce_cm_time_ms(p->packet_life_time) +
			    uroce_cm_time_ms(p->remote_cm_response_timeout);
	id->tid = tid_of(id);
	id->retries_left = p->max_cm_retries;
	id->state = UROCE_CM_REQ_SENT;
	timer_arm(id, id->cm_timeout_ms);
	CM_CNT(cm, REQ_SENT);
	return send_msg(id, &m, UROCE_CM_ATTR_REQ, id->tid, id->mad);
}

int
uroce_cm_send_rep(struct uroce_cm_id *id, const struct uroce_cm_rep_param *p)
{
	struct uroce_cm_msg m;
	struct uroce_cm_rep *r = &m.u.rep;

	if (id == NULL || p == NULL || id->destroyed ||
	    (id->state != UROCE_CM_REQ_RCVD && id->state != UROCE_CM_MRA_REQ_SENT) ||
	    p->qpn > 0xFFFFFF || p->starting_psn > 0xFFFFFF || p->rnr_retry_count > 7 ||
	    p->private_data_len > UROCE_CM_REP_PDATA ||
	    (p->private_data_len > 0 && p->private_data == NULL))
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	r->local_comm_id = id->local_comm_id;
	r->remote_comm_id = id->remote_comm_id;
	r->local_qpn = p->qpn;
	r->starting_psn = p->starting_psn;
	r->responder_resources = p->responder_resources;
	r->initiator_depth = p->initiator_depth;
	r->target_ack_delay = id->cm->conf.ack_delay;
	r->e2e_flow_control = p->flow_control;
	r->rnr_retry_count = p->rnr_retry_count;
	r->srq = p->srq;
	r->local_ca_guid = id->cm->conf.ca_guid;
	if (p->private_data_len > 0)
		memcpy(r->private_data, p->private_data, p->private_data_len);
	id->rep = *r;
	id->has_rep = true;
	id->local_qpn = p->qpn;
	id->resp_res = p->responder_resources;
	id->init_depth = p->initiator_depth;
	id->retries_left = id->max_cm_retries;
	id->state = UROCE_CM_REP_SENT;
	timer_arm(id, id->cm_timeout_ms);
	CM_CNT(id->cm, REP_SENT);
	return send_msg(id, &m, UROCE_CM_ATTR_REP, id->tid, id->mad);
}

int
uroce_cm_send_rtu(struct uroce_cm_id *id, const uint8_t *pdata, uint8_t len)
{
	struct uroce_cm_msg m;

	if (id == NULL || id->destroyed || len > UROCE_CM_RTU_PDATA || (len > 0 && pdata == NULL) ||
	    (id->state != UROCE_CM_REP_RCVD && id->state != UROCE_CM_MRA_REP_SENT))
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	m.u.rtu.local_comm_id = id->local_comm_id;
	m.u.rtu.remote_comm_id = id->remote_comm_id;
	if (len > 0)
		memcpy(m.u.rtu.private_data, pdata, len);
	id->state = UROCE_CM_ESTABLISHED;
	timer_stop(id);
	CM_CNT(id->cm, RTU_SENT);
	/* Kept: a duplicate REP from now on gets this RTU again. */
	send_msg(id, &m, UROCE_CM_ATTR_RTU, id->tid, id->mad);
	return 0;
}

int
uroce_cm_send_rej(struct uroce_cm_id *id, uint16_t reason, const uint8_t *ari, uint8_t ari_len,
		  const uint8_t *pdata, uint8_t len)
{
	enum uroce_cm_state st;

	if (id == NULL || id->destroyed || ari_len > UROCE_CM_ARI_LEN ||
	    len > UROCE_CM_REJ_PDATA || (len > 0 && pdata == NULL) ||
	    (ari_len > 0 && ari == NULL))
		return -EINVAL;
	st = id->state;
	if (st != UROCE_CM_REQ_RCVD && st != UROCE_CM_MRA_REQ_SENT && st != UROCE_CM_REP_RCVD &&
	    st != UROCE_CM_MRA_REP_SENT)
		return -EINVAL;
	send_rej_state(id, reason, ari, ari_len, pdata, len);
	if (st == UROCE_CM_REP_RCVD || st == UROCE_CM_MRA_REP_SENT)
		enter_timewait(id); /* the peer's QP was told ours: protect the QPNs */
	else
		to_idle(id);
	return 0;
}

int
uroce_cm_established(struct uroce_cm_id *id)
{
	if (id == NULL || (id->state != UROCE_CM_REP_SENT && id->state != UROCE_CM_MRA_REP_RCVD))
		return -EINVAL;
	timer_stop(id);
	id->state = UROCE_CM_ESTABLISHED;
	return 0;
}

static int
dreq_send(struct uroce_cm_id *id, const uint8_t *pdata, uint8_t len)
{
	struct uroce_cm_msg m;

	memset(&m, 0, sizeof(m));
	m.u.dreq.local_comm_id = id->local_comm_id;
	m.u.dreq.remote_comm_id = id->remote_comm_id;
	m.u.dreq.remote_qpn = id->remote_qpn;
	if (len > 0)
		memcpy(m.u.dreq.private_data, pdata, len);
	CM_CNT(id->cm, DREQ_SENT);
	return send_msg(id, &m, UROCE_CM_ATTR_DREQ, tid_of(id), id->mad);
}

int
uroce_cm_send_dreq(struct uroce_cm_id *id, const uint8_t *pdata, uint8_t len)
{
	if (id == NULL || id->destroyed || len > UROCE_CM_DREQ_PDATA || (len > 0 && pdata == NULL) ||
	    (id->state != UROCE_CM_ESTABLISHED && id->state != UROCE_CM_REP_SENT &&
	     id->state != UROCE_CM_MRA_REP_RCVD))
		return -EINVAL;
	id->state = UROCE_CM_DREQ_SENT;
	id->retries_left = id->max_cm_retries;
	timer_arm(id, id->cm_timeout_ms);
	dreq_send(id, pdata, len);
	return 0;
}

static void
drep_send(struct uroce_cm_id *id, const uint8_t *pdata, uint8_t len)
{
	uint8_t mad[UROCE_MAD_LEN];
	struct uroce_cm_msg m;

	memset(&m, 0, sizeof(m));
	m.u.rtu.local_comm_id = id->local_comm_id;
	m.u.rtu.remote_comm_id = id->remote_comm_id;
	if (len > 0)
		memcpy(m.u.rtu.private_data, pdata, len);
	CM_CNT(id->cm, DREP_SENT);
	send_msg(id, &m, UROCE_CM_ATTR_DREP, id->dreq_tid, mad);
}

int
uroce_cm_send_drep(struct uroce_cm_id *id, const uint8_t *pdata, uint8_t len)
{
	if (id == NULL || id->destroyed || id->state != UROCE_CM_DREQ_RCVD ||
	    len > UROCE_CM_DREP_PDATA || (len > 0 && pdata == NULL))
		return -EINVAL;
	drep_send(id, pdata, len);
	enter_timewait(id);
	return 0;
}

int
uroce_cm_send_sidr_req(struct uroce_cm_id *id, const struct uroce_cm_sidr_req_param *p)
{
	struct uroce_cm_msg m;

	if (id == NULL || p == NULL || id->destroyed || id->state != UROCE_CM_IDLE ||
	    p->max_cm_retries > 15 || p->private_data_len > UROCE_CM_SIDR_REQ_PDATA ||
	    (p->private_data_len > 0 && p->private_data == NULL))
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	m.u.sidr_req.request_id = id->local_comm_id;
	m.u.sidr_req.pkey = p->addr.pkey ? p->addr.pkey : 0xFFFF;
	m.u.sidr_req.service_id = p->service_id;
	if (p->private_data_len > 0)
		memcpy(m.u.sidr_req.private_data, p->private_data, p->private_data_len);
	id->addr = p->addr;
	if (id->addr.remote_qpn == 0)
		id->addr.remote_qpn = UROCE_GSI_QPN;
	id->active = true;
	id->req.service_id = p->service_id;
	id->tid = tid_of(id);
	id->cm_timeout_ms = p->timeout_ms ? p->timeout_ms : CM_DEF_SIDR_TIMEOUT_MS;
	id->retries_left = p->max_cm_retries;
	id->state = UROCE_CM_SIDR_REQ_SENT;
	timer_arm(id, id->cm_timeout_ms);
	CM_CNT(id->cm, SIDR_REQ_SENT);
	return send_msg(id, &m, UROCE_CM_ATTR_SIDR_REQ, id->tid, id->mad);
}

int
uroce_cm_send_sidr_rep(struct uroce_cm_id *id, const struct uroce_cm_sidr_rep_param *p)
{
	uint8_t mad[UROCE_MAD_LEN];
	struct uroce_cm_msg m;
	int rc;

	if (id == NULL || p == NULL || id->state != UROCE_CM_SIDR_REQ_RCVD || p->qpn > 0xFFFFFF ||
	    p->private_data_len > UROCE_CM_SIDR_REP_PDATA ||
	    (p->private_data_len > 0 && p->private_data == NULL))
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	m.u.sidr_rep.request_id = id->remote_comm_id;
	m.u.sidr_rep.status = p->status;
	m.u.sidr_rep.qpn = p->qpn;
	m.u.sidr_rep.service_id = id->req.service_id;
	m.u.sidr_rep.qkey = p->qkey;
	if (p->private_data_len > 0)
		memcpy(m.u.sidr_rep.private_data, p->private_data, p->private_data_len);
	CM_CNT(id->cm, SIDR_REP_SENT);
	rc = send_msg(id, &m, UROCE_CM_ATTR_SIDR_REP, id->tid, mad);
	to_idle(id);
	return rc;
}

void
uroce_cm_id_destroy(struct uroce_cm_id *id)
{
	struct uroce_cm *cm;
	uint8_t guid[8];

	if (id == NULL || id->destroyed)
		return;
	cm = id->cm;
	cm->depth++;
	switch (id->state) {
	case UROCE_CM_REQ_SENT:
	case UROCE_CM_MRA_REQ_RCVD:
		/* IBA 12.9.6: the active side gives up; the ARI names its CA. */
		uroce_put_be64(guid, cm->conf.ca_guid);
		send_rej_state(id, UROCE_CM_REJ_TIMEOUT, guid, sizeof(guid), NULL, 0);
		to_idle(id);
		break;
	case UROCE_CM_REQ_RCVD:
	case UROCE_CM_MRA_REQ_SENT:
		send_rej_state(id, UROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		to_idle(id);
		break;
	case UROCE_CM_REP_SENT:
	case UROCE_CM_MRA_REP_RCVD:
	case UROCE_CM_REP_RCVD:
	case UROCE_CM_MRA_REP_SENT:
		send_rej_state(id, UROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		enter_timewait(id);
		break;
	case UROCE_CM_ESTABLISHED:
		/* One DREQ, then time wait at once (the peer's own DREQ, if it
		 * comes, is answered from time wait). */
		dreq_send(id, NULL, 0);
		enter_timewait(id);
		break;
	case UROCE_CM_DREQ_SENT:
		enter_timewait(id);
		break;
	case UROCE_CM_DREQ_RCVD:
		drep_send(id, NULL, 0);
		enter_timewait(id);
		break;
	case UROCE_CM_SIDR_REQ_RCVD: {
		struct uroce_cm_sidr_rep_param p = {.status = UROCE_CM_SIDR_REJECT};

		uroce_cm_send_sidr_rep(id, &p);
		break;
	}
	case UROCE_CM_SIDR_REQ_SENT:
		to_idle(id);
		break;
	case UROCE_CM_IDLE:
	case UROCE_CM_TIMEWAIT:
	case UROCE_CM_STATE_MAX:
		break;
	}
	id->destroyed = true;
	id->context = NULL;
	if (id->state == UROCE_CM_IDLE)
		cm->reap_pending = true;
	cm->depth--;
	reap(cm);
}

/* ------------------------------------------------------------------------ */
/* Receiving: the step loop                                                  */
/* ------------------------------------------------------------------------ */

enum rx_step {
	RX_DECODE,      /* length, header, attribute, fields */
	RX_LOOKUP,      /* the id the comm IDs name */
	RX_NEW_REQ,     /* a REQ nobody knows: validate, create, ask the owner */
	RX_NEW_SIDR,    /* a SIDR_REQ nobody knows */
	RX_UNMATCHED,   /* no id: some messages still get an answer */
	RX_STATE,       /* does the id's state accept it? */
	RX_HANDLE,      /* the message's handler */
	RX_DONE,
};

struct rx {
	struct uroce_cm *cm;
	const struct uroce_cm_addr *from;
	const uint8_t *mad;
	uint32_t len;
	struct uroce_cm_msg msg;
	struct uroce_cm_id *id;
};

static enum rx_step
rx_decode(struct rx *x)
{
	int rc = uroce_cm_msg_decode(x->mad, x->len, &x->msg);

	switch (rc) {
	case 0:
		return RX_LOOKUP;
	case -EMSGSIZE:
		CM_CNT(x->cm, RX_BAD_LENGTH);
		break;
	case -EPROTO:
		CM_CNT(x->cm, RX_BAD_HEADER);
		break;
	case -EOPNOTSUPP:
		CM_CNT(x->cm, RX_BAD_ATTR);
		break;
	default:
		CM_CNT(x->cm, RX_BAD_FIELD);
		break;
	}
	return RX_DONE;
}

/* The sender's and the receiver's comm IDs of a message that carries both. */
static void
comm_ids(const struct uroce_cm_msg *m, uint32_t *local, uint32_t *remote)
{
	switch (m->hdr.attr_id) {
	case UROCE_CM_ATTR_MRA:
		*local = m->u.mra.local_comm_id;
		*remote = m->u.mra.remote_comm_id;
		break;
	case UROCE_CM_ATTR_DREQ:
		*local = m->u.dreq.local_comm_id;
		*remote = m->u.dreq.remote_comm_id;
		break;
	case UROCE_CM_ATTR_LAP:
		*local = m->u.lap.local_comm_id;
		*remote = m->u.lap.remote_comm_id;
		break;
	case UROCE_CM_ATTR_APR:
		*local = m->u.apr.local_comm_id;
		*remote = m->u.apr.remote_comm_id;
		break;
	default: /* RTU, DREP */
		*local = m->u.rtu.local_comm_id;
		*remote = m->u.rtu.remote_comm_id;
		break;
	}
}

static enum rx_step
rx_lookup(struct rx *x)
{
	const struct uroce_cm_msg *m = &x->msg;
	struct uroce_cm_id *id = NULL;

	switch (m->hdr.attr_id) {
	case UROCE_CM_ATTR_REQ:
		/* IBA 12.9.5.1: a REQ is known by the sender's comm ID and CA. */
		id = find_remote(x->cm, m->u.req.local_comm_id, m->u.req.local_ca_guid, false);
		if (id == NULL)
			return RX_NEW_REQ;
		break;
	case UROCE_CM_ATTR_SIDR_REQ:
		id = find_remote(x->cm, m->u.sidr_req.request_id, gid_key(x->from->dgid), true);
		if (id == NULL)
			return RX_NEW_SIDR;
		break;
	case UROCE_CM_ATTR_SIDR_REP:
		id = find_local(x->cm, m->u.sidr_rep.request_id);
		break;
	case UROCE_CM_ATTR_REJ:
		id = find_local(x->cm, m->u.rej.remote_comm_id);
		/* An active side that gave up before our REP knows no comm ID of
		 * ours: its REJ (Timeout) names its own, and its CA in the ARI. */
		if (id == NULL && m->u.rej.remote_comm_id == 0 &&
		    m->u.rej.reason == UROCE_CM_REJ_TIMEOUT && m->u.rej.ari_length >= 8)
			id = find_remote(x->cm, m->u.rej.local_comm_id,
					 uroce_get_be64(m->u.rej.ari), false);
		if (id != NULL && id->remote_comm_id != 0 && m->u.rej.local_comm_id != 0 &&
		    m->u.rej.local_comm_id != id->remote_comm_id)
			id = NULL;
		break;
	case UROCE_CM_ATTR_REP:
		/* The REP is the first message with the passive side's comm ID. */
		id = find_local(x->cm, m->u.rep.remote_comm_id);
		if (id != NULL && id->has_rep && id->remote_comm_id != m->u.rep.local_comm_id)
			id = NULL;
		break;
	default: {
		/* MRA, RTU, DREQ, DREP, LAP, APR: both comm IDs are known. */
		uint32_t local, remote;

		comm_ids(m, &local, &remote);
		id = find_local(x->cm, remote);
		/* Before the REP the active side does not know the peer's comm
		 * ID: only an MRA of its REQ may come then. */
		if (id != NULL && id->remote_comm_id != local &&
		    !(id->remote_comm_id == 0 && m->hdr.attr_id == UROCE_CM_ATTR_MRA))
			id = NULL;
		break;
	}
	}
	if (id == NULL || id->state == UROCE_CM_IDLE)
		return RX_UNMATCHED;
	x->id = id;
	return RX_STATE;
}

static enum rx_step
rx_unmatched(struct rx *x)
{
	CM_CNT(x->cm, RX_UNMATCHED);
	switch (x->msg.hdr.attr_id) {
	case UROCE_CM_ATTR_DREQ:
		/* IBA 12.9.8.3: a DREQ for a connection we do not have is still
		 * answered, or its sender retries until it gives up. */
		drep_stateless(x->cm, x->from, &x->msg);
		break;
	case UROCE_CM_ATTR_APR:
		CM_CNT(x->cm, APR_DROPPED);
		break;
	default:
		break;
	}
	return RX_DONE;
}

/* Refuse a new REQ for a value this CA cannot use (IBA 12.6.7.2, table 103). */
static uint16_t
req_check(const struct uroce_cm_req *r)
{
	if (r->transport != UROCE_CM_TRANSPORT_RC && r->transport != UROCE_CM_TRANSPORT_UC)
		return UROCE_CM_REJ_INVALID_TRANSPORT_TYPE;
	if (r->path_mtu < UROCE_MTU_256 || r->path_mtu > UROCE_MTU_4096)
		return UROCE_CM_REJ_INVALID_MTU;
	return 0;
}

/* A connection still holding the QP a new REQ comes from (IBA 12.9.8.3.1). */
static struct uroce_cm_id *
find_stale(const struct uroce_cm *cm, uint32_t qpn, uint64_t guid)
{
	struct uroce_cm_id *id;

	for (id = cm->ids; id != NULL; id = id->next)
		if (id->remote_qpn == qpn && id->remote_ca_guid == guid && id->has_req &&
		    id->state != UROCE_CM_IDLE && id->state != UROCE_CM_SIDR_REQ_RCVD &&
		    id->state != UROCE_CM_SIDR_REQ_SENT)
			return id;
	return NULL;
}

static enum rx_step
rx_new_req(struct rx *x)
{
	const struct uroce_cm_req *r = &x->msg.u.req;
	struct uroce_cm *cm = x->cm;
	struct uroce_cm_id *id, *old;
	uint8_t ari[UROCE_CM_ARI_LEN], ari_len = 0;
	uint16_t reason;
	int rc;

	reason = req_check(r);
	if (reason != 0) {
		CM_CNT(cm, REJ_INVALID);
		rej_stateless(cm, x->from, &x->msg, reason, NULL, 0);
		return RX_DONE;
	}
	old = find_stale(cm, r->local_qpn, r->local_ca_guid);
	if (old != NULL) {
		/* The peer reuses a QP we still count as connected: refuse, and
		 * end the old connection, which cannot be alive any more. */
		CM_CNT(cm, REJ_STALE);
		rej_stateless(cm, x->from, &x->msg, UROCE_CM_REJ_STALE_CONN, NULL, 0);
		if (old->state == UROCE_CM_ESTABLISHED)
			uroce_cm_send_dreq(old, NULL, 0);
		return RX_DONE;
	}
	id = id_new(cm, NULL);
	if (id == NULL) {
		rej_stateless(cm, x->from, &x->msg, UROCE_CM_REJ_NO_RESOURCES, NULL, 0);
		return RX_DONE;
	}
	CM_CNT(cm, REQ_RCVD);
	addr_reply(&id->addr, x->from);
	id->addr.pkey = r->pkey;
	id->req = *r;
	id->has_req = true;
	id->tid = x->msg.hdr.tid;
	id->remote_comm_id = r->local_comm_id;
	id->remote_ca_guid = r->local_ca_guid;
	id->remote_qpn = r->local_qpn;
	/* What the active side issues we must accept, and the reverse. */
	id->resp_res = r->initiator_depth;
	id->init_depth = r->responder_resources;
	id->local_ack_timeout = r->primary.local_ack_timeout;
	id->packet_life_time = r->primary.local_ack_timeout ? r->primary.local_ack_timeout - 1 : 0;
	id->max_cm_retries = r->max_cm_retries;
	id->cm_timeout_ms = uroce_cm_time_ms(r->local_cm_response_timeout);
	id->state = UROCE_CM_REQ_RCVD;
	remote_insert(id);
	rc = emit_ari(id, UROCE_CM_EV_REQ_RECEIVED, &x->msg, x->from, ari, &ari_len);
	if (rc > 0 && !id->destroyed && id->state == UROCE_CM_REQ_RCVD) {
		if (rc == UROCE_CM_REJ_INVALID_SERVICE_ID)
			CM_CNT(cm, REJ_NO_LISTENER);
		send_rej_state(id, (uint16_t)rc, ari, ari_len > UROCE_CM_ARI_LEN ? 0 : ari_len,
			       NULL, 0);
		to_idle(id);
		id->destroyed = true;
		cm->reap_pending = true;
	}
	return RX_DONE;
}

static enum rx_step
rx_new_sidr(struct rx *x)
{
	struct uroce_cm *cm = x->cm;
	struct uroce_cm_id *id;
	uint8_t ari[UROCE_CM_ARI_LEN], ari_len = 0;
	int rc;

	id = id_new(cm, NULL);
	if (id == NULL) {
		sidr_rep_stateless(cm, x->from, &x->msg, UROCE_CM_SIDR_REJECT);
		return RX_DONE;
	}
	CM_CNT(cm, SIDR_REQ_RCVD);
	addr_reply(&id->addr, x->from);
	id->addr.pkey = x->msg.u.sidr_req.pkey;
	id->tid = x->msg.hdr.tid;
	id->remote_comm_id = x->msg.u.sidr_req.request_id;
	id->remote_ca_guid = gid_key(x->from->dgid);
	id->req.service_id = x->msg.u.sidr_req.service_id;
	id->state = UROCE_CM_SIDR_REQ_RCVD;
	remote_insert(id);
	rc = emit_ari(id, UROCE_CM_EV_SIDR_REQ_RECEIVED, &x->msg, x->from, ari, &ari_len);
	if (rc > 0 && !id->destroyed && id->state == UROCE_CM_SIDR_REQ_RCVD) {
		struct uroce_cm_sidr_rep_param p = {.status = (uint8_t)rc};

		uroce_cm_send_sidr_rep(id, &p);
		id->destroyed = true;
		cm->reap_pending = true;
	}
	return RX_DONE;
}

static enum rx_step
rx_state(struct rx *x)
{
	uint16_t a = x->msg.hdr.attr_id;

	if (accepts[x->id->state] & M(a))
		return RX_HANDLE;
	CM_CNT(x->cm, RX_BAD_STATE);
	if (a == UROCE_CM_ATTR_APR)
		CM_CNT(x->cm, APR_DROPPED);
	return RX_DONE;
}

/* A REQ we already have (IBA 12.9.6.2): the consumer is slow, or our REP was lost. */
static void
on_dup_req(struct rx *x)
{
	struct uroce_cm_id *id = x->id;

	CM_CNT(x->cm, DUP_REQ);
	switch (id->state) {
	case UROCE_CM_REQ_RCVD:
		/* Ask for time: the consumer has not answered yet. */
		id->state = UROCE_CM_MRA_REQ_SENT;
		send_mra(id, UROCE_CM_REF_REQ);
		break;
	case UROCE_CM_MRA_REQ_SENT:
		resend(id);
		CM_CNT(x->cm, MRA_SENT);
		break;
	case UROCE_CM_TIMEWAIT:
		/* The connection it asks for is over. */
		CM_CNT(x->cm, REJ_STALE);
		rej_stateless(x->cm, x->from, &x->msg, UROCE_CM_REJ_STALE_CONN, NULL, 0);
		break;
	default:
		break; /* our REP's own timer resends it */
	}
}

static void
on_rep(struct rx *x)
{
	const struct uroce_cm_rep *r = &x->msg.u.rep;
	struct uroce_cm_id *id = x->id;

	switch (id->state) {
	case UROCE_CM_REQ_SENT:
	case UROCE_CM_MRA_REQ_RCVD:
		break;
	case UROCE_CM_REP_RCVD:
		CM_CNT(x->cm, DUP_REP);
		/* The consumer is still bringing its QP up: ask for time. */
		id->state = UROCE_CM_MRA_REP_SENT;
		send_mra(id, UROCE_CM_REF_REP);
		return;
	case UROCE_CM_MRA_REP_SENT:
		CM_CNT(x->cm, DUP_REP);
		resend(id);
		CM_CNT(x->cm, MRA_SENT);
		return;
	case UROCE_CM_ESTABLISHED:
		/* IBA 12.9.6.3: our RTU was lost; send it again. */
		CM_CNT(x->cm, DUP_REP);
		if (id->active) {
			resend(id);
			CM_CNT(x->cm, RTU_SENT);
		}
		return;
	default:
		CM_CNT(x->cm, DUP_REP);
		return;
	}
	CM_CNT(x->cm, REP_RCVD);
	timer_stop(id);
	id->rep = *r;
	id->has_rep = true;
	id->remote_comm_id = r->local_comm_id;
	id->remote_ca_guid = r->local_ca_guid;
	id->remote_qpn = r->local_qpn;
	/* The passive side's answer crosses over, as the REQ did for it. */
	id->init_depth = r->responder_resources;
	id->resp_res = r->initiator_depth;
	id->local_ack_timeout = uroce_cm_ack_timeout(r->target_ack_delay, id->packet_life_time);
	remote_insert(id);
	id->state = UROCE_CM_REP_RCVD;
	emit(id, UROCE_CM_EV_REP_RECEIVED, &x->msg, x->from);
}

static void
on_rtu(struct rx *x)
{
	CM_CNT(x->cm, RTU_RCVD);
	timer_stop(x->id);
	x->id->state = UROCE_CM_ESTABLISHED;
	emit(x->id, UROCE_CM_EV_RTU_RECEIVED, &x->msg, x->from);
}

static void
on_mra(struct rx *x)
{
	const struct uroce_cm_mra *r = &x->msg.u.mra;
	struct uroce_cm_id *id = x->id;

	if ((id->state == UROCE_CM_REQ_SENT && r->msg_mraed != UROCE_CM_REF_REQ) ||
	    (id->state == UROCE_CM_REP_SENT && r->msg_mraed != UROCE_CM_REF_REP)) {
		CM_CNT(x->cm, RX_BAD_STATE);
		return;
	}
	CM_CNT(x->cm, MRA_RCVD);
	id->state = id->state == UROCE_CM_REQ_SENT ? UROCE_CM_MRA_REQ_RCVD : UROCE_CM_MRA_REP_RCVD;
	/* IBA 12.6.6: the peer needs its service timeout; add a packet's life. */
	timer_arm(id, uroce_cm_time_ms(r->service_timeout) +
			      uroce_cm_time_ms(id->local_ack_timeout));
	emit(id, UROCE_CM_EV_MRA_RECEIVED, &x->msg, x->from);
}

static void
on_rej(struct rx *x)
{
	struct uroce_cm_id *id = x->id;

	CM_CNT(x->cm, REJ_RCVD);
	switch (id->state) {
	case UROCE_CM_REQ_SENT:
	case UROCE_CM_MRA_REQ_RCVD:
		/* A stale-connection REJ still leaves our QPN warm: time wait. */
		if (x->msg.u.rej.reason == UROCE_CM_REJ_STALE_CONN)
			enter_timewait(id);
		else
			to_idle(id);
		break;
	case UROCE_CM_REQ_RCVD:
	case UROCE_CM_MRA_REQ_SENT:
		to_idle(id);
		break;
	default:
		/* REPs were exchanged: our QP knew the peer's. */
		enter_timewait(id);
		break;
	}
	emit(id, UROCE_CM_EV_REJ_RECEIVED, &x->msg, x->from);
}

static void
on_dreq(struct rx *x)
{
	struct uroce_cm_id *id = x->id;

	/* IBA 12.6.10: the DREQ names our QP; one that does not is not ours. */
	if (x->msg.u.dreq.remote_qpn != id->local_qpn) {
		CM_CNT(x->cm, RX_UNMATCHED);
		return;
	}
	switch (id->state) {
	case UROCE_CM_TIMEWAIT: {
		/* Our DREP was lost: answer again. */
		uint64_t keep = id->dreq_tid;

		id->dreq_tid = x->msg.hdr.tid;
		drep_send(id, NULL, 0);
		id->dreq_tid = keep;
		return;
	}
	case UROCE_CM_DREQ_RCVD:
		return; /* the consumer's DREP is coming */
	default:
		break;
	}
	CM_CNT(x->cm, DREQ_RCVD);
	timer_stop(id);
	id->dreq_tid = x->msg.hdr.tid;
	id->state = UROCE_CM_DREQ_RCVD;
	emit(id, UROCE_CM_EV_DREQ_RECEIVED, &x->msg, x->from);
}

static void
on_drep(struct rx *x)
{
	CM_CNT(x->cm, DREP_RCVD);
	enter_timewait(x->id);
	emit(x->id, UROCE_CM_EV_DREP_RECEIVED, &x->msg, x->from);
}

static void
on_lap(struct rx *x)
{
	struct uroce_cm_msg m;

	/* No alternate paths on RoCE (Linux drops LAPs there): refuse. */
	memset(&m, 0, sizeof(m));
	m.u.apr.local_comm_id = x->id->local_comm_id;
	m.u.apr.remote_comm_id = x->id->remote_comm_id;
	m.u.apr.ap_status = UROCE_CM_APR_UNSUPPORTED;
	CM_CNT(x->cm, LAP_REFUSED);
	send_stateless(x->cm, x->from, &m, UROCE_CM_ATTR_APR, x->msg.hdr.tid);
}

static void
on_sidr_rep(struct rx *x)
{
	CM_CNT(x->cm, SIDR_REP_RCVD);
	to_idle(x->id);
	emit(x->id, UROCE_CM_EV_SIDR_REP_RECEIVED, &x->msg, x->from);
}

static enum rx_step
rx_handle(struct rx *x)
{
	switch (x->msg.hdr.attr_id) {
	case UROCE_CM_ATTR_REQ:
		on_dup_req(x);
		break;
	case UROCE_CM_ATTR_REP:
		on_rep(x);
		break;
	case UROCE_CM_ATTR_RTU:
		on_rtu(x);
		break;
	case UROCE_CM_ATTR_MRA:
		on_mra(x);
		break;
	case UROCE_CM_ATTR_REJ:
		on_rej(x);
		break;
	case UROCE_CM_ATTR_DREQ:
		on_dreq(x);
		break;
	case UROCE_CM_ATTR_DREP:
		on_drep(x);
		break;
	case UROCE_CM_ATTR_LAP:
		on_lap(x);
		break;
	case UROCE_CM_ATTR_SIDR_REP:
		on_sidr_rep(x);
		break;
	case UROCE_CM_ATTR_SIDR_REQ:
		CM_CNT(x->cm, DUP_REQ); /* the consumer's SIDR_REP is coming */
		break;
	default:
		break;
	}
	return RX_DONE;
}

static enum rx_step (*const rx_steps[RX_DONE])(struct rx *) = {
	[RX_DECODE] = rx_decode,
	[RX_LOOKUP] = rx_lookup,
	[RX_NEW_REQ] = rx_new_req,
	[RX_NEW_SIDR] = rx_new_sidr,
	[RX_UNMATCHED] = rx_unmatched,
	[RX_STATE] = rx_state,
	[RX_HANDLE] = rx_handle,
};

void
uroce_cm_rx(struct uroce_cm *cm, const struct uroce_cm_addr *from, const uint8_t *mad,
	    uint32_t len)
{
	struct rx x;
	enum rx_step st = RX_DECODE;

	if (cm == NULL || from == NULL)
		return;
	memset(&x, 0, sizeof(x));
	x.cm = cm;
	x.from = from;
	x.mad = mad;
	x.len = len;
	CM_CNT(cm, RX_MADS);
	cm->depth++;
	while (st != RX_DONE)
		st = rx_steps[st](&x);
	cm->depth--;
	reap(cm);
}

/* ------------------------------------------------------------------------ */
/* Timers                                                                    */
/* ------------------------------------------------------------------------ */

/* A retransmission timer fired: resend, or give up with @p ev. */
static void
retry_or_fail(struct uroce_cm_id *id, enum uroce_cm_event_type ev, enum uroce_cm_counter retry,
	      enum uroce_cm_counter fail)
{
	struct uroce_cm *cm = id->cm;

	if (id->retries_left > 0) {
		id->retries_left--;
		cm->cnt[retry]++;
		/* After an MRA's stretched wait, back to the normal one. */
		if (id->state == UROCE_CM_MRA_REQ_RCVD)
			id->state = UROCE_CM_REQ_SENT;
		else if (id->state == UROCE_CM_MRA_REP_RCVD)
			id->state = UROCE_CM_REP_SENT;
		timer_arm(id, id->cm_timeout_ms);
		resend(id);
		return;
	}
	cm->cnt[fail]++;
	if (ev == UROCE_CM_EV_DREQ_TIMEOUT)
		enter_timewait(id);
	else
		to_idle(id);
	emit(id, ev, NULL, NULL);
}

static void
timer_fire(struct uroce_cm_id *id)
{
	id->deadline = 0;
	switch (id->state) {
	case UROCE_CM_REQ_SENT:
	case UROCE_CM_MRA_REQ_RCVD:
		retry_or_fail(id, UROCE_CM_EV_REQ_TIMEOUT, UROCE_CM_CNT_REQ_RETRIES,
			      UROCE_CM_CNT_REQ_TIMEOUTS);
		break;
	case UROCE_CM_REP_SENT:
	case UROCE_CM_MRA_REP_RCVD:
		retry_or_fail(id, UROCE_CM_EV_REP_TIMEOUT, UROCE_CM_CNT_REP_RETRIES,
			      UROCE_CM_CNT_REP_TIMEOUTS);
		break;
	case UROCE_CM_DREQ_SENT:
		retry_or_fail(id, UROCE_CM_EV_DREQ_TIMEOUT, UROCE_CM_CNT_DREQ_RETRIES,
			      UROCE_CM_CNT_DREQ_TIMEOUTS);
		break;
	case UROCE_CM_SIDR_REQ_SENT:
		retry_or_fail(id, UROCE_CM_EV_SIDR_TIMEOUT, UROCE_CM_CNT_REQ_RETRIES,
			      UROCE_CM_CNT_SIDR_TIMEOUTS);
		break;
	case UROCE_CM_TIMEWAIT:
		CM_CNT(id->cm, TIMEWAIT_EXITS);
		to_idle(id);
		emit(id, UROCE_CM_EV_TIMEWAIT_EXIT, NULL, NULL);
		break;
	default:
		break;
	}
}

unsigned int
uroce_cm_poll(struct uroce_cm *cm)
{
	struct uroce_cm_id *id, *next;
	uint64_t t, min = UINT64_MAX;
	unsigned int n = 0;

	if (cm == NULL)
		return 0;
	t = now(cm);
	if (t < cm->next_deadline)
		return 0;
	cm->depth++;
	/* A fired timer may arm others (ids of this list only: new ids come
	 * first in it and are not visited); the minimum is taken after. */
	for (id = cm->ids; id != NULL; id = next) {
		next = id->next;
		if (id->deadline != 0 && id->deadline <= t) {
			timer_fire(id);
			n++;
		}
	}
	for (id = cm->ids; id != NULL; id = id->next)
		if (id->deadline != 0 && id->deadline < min)
			min = id->deadline;
	cm->next_deadline = min;
	cm->depth--;
	reap(cm);
	return n;
}

/* ------------------------------------------------------------------------ */
/* Life                                                                      */
/* ------------------------------------------------------------------------ */

struct uroce_cm *
uroce_cm_create(const struct uroce_cm_conf *conf)
{
	struct uroce_cm *cm;

	if (conf == NULL || conf->ops == NULL || conf->ops->now_us == NULL ||
	    conf->ops->send == NULL || conf->ops->event == NULL || conf->ack_delay > 31 ||
	    conf->mra_service_timeout > 31) {
		errno = EINVAL;
		return NULL;
	}
	cm = calloc(1, sizeof(*cm));
	if (cm == NULL)
		return NULL;
	cm->conf = *conf;
	if (cm->conf.ack_delay == 0)
		cm->conf.ack_delay = CM_DEF_ACK_DELAY;
	if (cm->conf.mra_service_timeout == 0)
		cm->conf.mra_service_timeout = CM_DEF_MRA_TIMEOUT;
	cm->next_comm_id = conf->seed * 2654435761u + 0x1234567u;
	cm->next_deadline = UINT64_MAX;
	return cm;
}

void
uroce_cm_destroy(struct uroce_cm *cm)
{
	if (cm == NULL)
		return;
	while (cm->ids != NULL)
		id_free(cm->ids);
	free(cm);
}
