/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Engine glue for shared receive queues (IBA 10.2.9): thin translations
 * between the daemon's neutral structs (daemon_internal.h) and lib/transport's
 * SRQ API, and the creation of a QP that takes its receives from an SRQ. The
 * daemon (daemon.c) owns everything about shared memory, ownership and the
 * SRQ limit; nothing here sees a client.
 */

#include <errno.h>
#include <string.h>

#include "uroce_transport.h"

#include "daemon_internal.h"

void *
eng_srq_create(void *pd, uint32_t max_wr, uint32_t max_sge)
{
	struct uroce_eng_srq_init_attr ia;

	memset(&ia, 0, sizeof(ia));
	ia.max_wr = max_wr;
	ia.max_sge = max_sge;
	return uroce_eng_srq_create(pd, &ia);
}

int
eng_srq_destroy(void *srq)
{
	return uroce_eng_srq_destroy(srq);
}

int
eng_post_srq_recv(void *srq, uint64_t wr_id, const struct dsge *s, int num_sge)
{
	struct uroce_eng_recv_wr wr;
	struct uroce_eng_sge sge[UROCE_MAX_SGE];
	int i;

	if (num_sge < 0 || num_sge > UROCE_MAX_SGE)
		return -EINVAL;
	for (i = 0; i < num_sge; i++) {
		sge[i].addr = s[i].addr;
		sge[i].length = s[i].length;
		sge[i].lkey = s[i].lkey;
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = sge;
	wr.num_sge = num_sge;
	return uroce_eng_post_srq_recv(srq, &wr, NULL);
}

void *
eng_qp_create_srq(void *pd, void *send_cq, void *recv_cq, void *srq, int qp_type, bool sig_all,
		  const struct dcap *cap, uint32_t *qpn)
{
	struct uroce_eng_qp_init_attr ia;
	struct uroce_eng_qp *qp;

	if (srq == NULL) {
		errno = EINVAL;
		return NULL;
	}
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = send_cq;
	ia.recv_cq = recv_cq;
	ia.srq = srq;
	ia.qp_type = (enum uroce_qp_type)qp_type;
	ia.sq_sig_all = sig_all;
	ia.cap.max_send_wr = cap->max_send_wr;
	ia.cap.max_send_sge = cap->max_send_sge;
	ia.cap.max_inline_data = cap->max_inline;
	/* Receive capacities belong to the SRQ (ibv_qp_init_attr ignores them). */
	qp = uroce_eng_qp_create(pd, &ia);
	if (qp != NULL)
		*qpn = uroce_eng_qp_num(qp);
	return qp;
}
