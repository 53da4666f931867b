/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Tests for lib/shm/wqe.c: the daemon's WQE reader, which copies a WQE out
 * of the shared ring and checks it, one rejected field at a time.
 */

#include <string.h>

#include <criterion/criterion.h>

#include "uroce_shm.h"

static uint8_t inline_buf[UROCE_MAX_INLINE];

/* Read @p w as the worker does for an RC QP with these limits. */
static enum uroce_wc_status
read_send(const struct uroce_shm_send_wqe *w, uint32_t max_sge, uint32_t max_inline, uint64_t *len)
{
	struct uroce_shm_wq_limits lim = { max_sge, max_inline, UROCE_QPT_RC };
	struct uroce_wr_send wr;

	memset(&wr, 0, sizeof(wr));
	wr.inline_data = inline_buf;
	return uroce_shm_send_wqe_read(w, &lim, &wr, len);
}

static enum uroce_wc_status
read_recv(const struct uroce_shm_recv_wqe *w, uint32_t max_sge, uint64_t *len)
{
	struct uroce_wr_recv wr;
	enum uroce_wc_status st = uroce_shm_recv_wqe_read(w, max_sge, &wr);

	if (st == UROCE_WC_SUCCESS && len != NULL)
		*len = wr.length;
	return st;
}

static struct uroce_shm_send_wqe
send_wqe(uint8_t op, uint32_t nsge)
{
	struct uroce_shm_send_wqe w;

	memset(&w, 0, sizeof(w));
	w.wr_id = 99;
	w.opcode = op;
	w.num_sge = (uint8_t)nsge;
	w.send_flags = UROCE_SEND_SIGNALED;
	for (uint32_t i = 0; i < nsge; i++)
		w.data.sg_list[i] = (struct uroce_shm_sge){0x1000 * (i + 1), 100, 7};
	return w;
}

Test(wqe, good_send_wqes)
{
	struct uroce_shm_send_wqe w;
	uint64_t len = 0;

	/* Expect: SEND with 8 SGEs of 100 B -> success, 800 B. */
	w = send_wqe(UROCE_WR_SEND, 8);
	cr_expect_eq(read_send(&w, 8, 256, &len), UROCE_WC_SUCCESS);
	cr_expect_eq(len, 800);
	/* Expect: zero-length SEND is legal. */
	w = send_wqe(UROCE_WR_SEND, 0);
	cr_expect_eq(read_send(&w, 8, 256, &len), UROCE_WC_SUCCESS);
	cr_expect_eq(len, 0);
	/* Expect: inline WRITE of 256 B. */
	w = send_wqe(UROCE_WR_RDMA_WRITE, 0);
	w.send_flags |= UROCE_SEND_INLINE;
	w.inline_len = 256;
	cr_expect_eq(read_send(&w, 8, 256, &len), UROCE_WC_SUCCESS);
	cr_expect_eq(len, 256);
	/* Expect: atomics with one 8-byte SGE, READ with SGEs. */
	w = send_wqe(UROCE_WR_ATOMIC_FETCH_AND_ADD, 1);
	w.data.sg_list[0].length = 8;
	cr_expect_eq(read_send(&w, 8, 256, NULL), UROCE_WC_SUCCESS);
	w.opcode = UROCE_WR_ATOMIC_CMP_AND_SWP;
	cr_expect_eq(read_send(&w, 8, 256, NULL), UROCE_WC_SUCCESS);
	w = send_wqe(UROCE_WR_RDMA_READ, 2);
	cr_expect_eq(read_send(&w, 8, 256, NULL), UROCE_WC_SUCCESS);
}

/* ABI 1.5: BIND_MW's fields land where the engine reads them; its reserved
 * word must be 0; LOCAL_INV names its rkey in imm_data. */
Test(wqe, bind_and_local_inv)
{
	struct uroce_shm_wq_limits lim = { 8, 256, UROCE_QPT_RC };
	struct uroce_shm_send_wqe w = send_wqe(UROCE_WR_BIND_MW, 0);
	struct uroce_wr_send wr;

	w.wr.bind.addr = 0x1000;
	w.wr.bind.length = 0x200;
	w.wr.bind.mr_lkey = 0x1234;
	w.wr.bind.access = UROCE_ACCESS_REMOTE_READ;
	w.wr.bind.rkey = 0x5678;
	memset(&wr, 0, sizeof(wr));
	cr_assert_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, NULL), UROCE_WC_SUCCESS);
	cr_expect_eq(wr.remote_addr, 0x1000);
	cr_expect_eq(wr.compare_add, 0x200);
	cr_expect_eq(wr.imm, 0x1234);
	cr_expect_eq(wr.swap, UROCE_ACCESS_REMOTE_READ);
	cr_expect_eq(wr.rkey, 0x5678);
	w.wr.bind.reserved = 1;
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, NULL), UROCE_WC_LOC_QP_OP_ERR);
	w = send_wqe(UROCE_WR_LOCAL_INV, 0);
	w.imm_data = 0x4321;
	cr_assert_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, NULL), UROCE_WC_SUCCESS);
	cr_expect_eq(wr.imm, 0x4321);
	/* Expect: not on UD (IBA 10.7.3.1: windows are bound on RC and UC). */
	lim.qp_type = UROCE_QPT_UD;
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, NULL), UROCE_WC_LOC_QP_OP_ERR);
}

/* ABI 1.6: ATOMIC_WRITE and FLUSH carry their operands in the WQE, no SGEs,
 * RC only; FLUSH's type and level become the FETH word. */
Test(wqe, atomic_write_and_flush)
{
	struct uroce_shm_wq_limits lim = { 8, 256, UROCE_QPT_RC };
	struct uroce_shm_send_wqe w = send_wqe(UROCE_WR_ATOMIC_WRITE, 0);
	static const uint8_t bytes[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct uroce_wr_send wr;

	w.wr.atomic_write.remote_addr = 0x2000;
	w.wr.atomic_write.rkey = 0x77;
	memcpy(&w.wr.atomic_write.data, bytes, 8);
	memset(&wr, 0, sizeof(wr));
	cr_assert_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, NULL), UROCE_WC_SUCCESS);
	cr_expect_eq(wr.remote_addr, 0x2000);
	cr_expect_eq(wr.rkey, 0x77);
	cr_expect_eq(memcmp(&wr.compare_add, bytes, 8), 0, "the bytes as they lay");
	w.wr.atomic_write.reserved = 1;
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, NULL), UROCE_WC_LOC_QP_OP_ERR);
	w.wr.atomic_write.reserved = 0;
	w.num_sge = 1;
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, NULL), UROCE_WC_LOC_QP_OP_ERR, "SGE");

	w = send_wqe(UROCE_WR_FLUSH, 0);
	w.wr.flush.remote_addr = 0x3000;
	w.wr.flush.length = 4096;
	w.wr.flush.rkey = 0x99;
	w.wr.flush.type = UROCE_FLUSH_GLOBAL;
	w.wr.flush.level = UROCE_FLUSH_MR;
	cr_assert_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, NULL), UROCE_WC_SUCCESS);
	cr_expect_eq(wr.remote_addr, 0x3000);
	cr_expect_eq(wr.compare_add, 4096);
	cr_expect_eq(wr.rkey, 0x99);
	cr_expect_eq(wr.swap, 0x11, "FETH GLOBAL | MR << 4");
	w.wr.flush.type = 0x10;
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, NULL), UROCE_WC_LOC_QP_OP_ERR);
	w.wr.flush.type = UROCE_FLUSH_GLOBAL;
	w.wr.flush.level = 4;
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, NULL), UROCE_WC_LOC_QP_OP_ERR);
	w.wr.flush.level = 0;
	w.wr.flush.reserved = 1;
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, NULL), UROCE_WC_LOC_QP_OP_ERR);
	w.wr.flush.reserved = 0;
	w.send_flags |= UROCE_SEND_INLINE;
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, NULL), UROCE_WC_LOC_QP_OP_ERR,
		     "inline");
	w.send_flags &= (uint16_t)~UROCE_SEND_INLINE;
	/* Expect: RC only (IBA 1.5 A19 defines RC and RD forms). */
	lim.qp_type = UROCE_QPT_UC;
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, NULL), UROCE_WC_LOC_QP_OP_ERR);
	lim.qp_type = UROCE_QPT_UD;
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, NULL), UROCE_WC_LOC_QP_OP_ERR);
}

Test(wqe, bad_send_wqes)
{
	struct uroce_shm_send_wqe w;
	uint8_t bad_ops[] = {7, 8, 10, 11, 12, 13, 16, 0x80, 0xff};

	/* Expect: unknown opcodes (10-13 are TSO and driver opcodes of
	 * libibverbs, 16 is past ATOMIC_WRITE); LOCAL_INV 7 and BIND_MW 8 with
	 * an SGE (they carry no data). */
	for (size_t i = 0; i < sizeof(bad_ops); i++) {
		w = send_wqe(bad_ops[i], 1);
		cr_expect_eq(read_send(&w, 8, 256, NULL), UROCE_WC_LOC_QP_OP_ERR,
			     "opcode %u", bad_ops[i]);
	}
	/* Expect: unknown flag, reserved words. */
	w = send_wqe(UROCE_WR_SEND, 1);
	w.send_flags |= 1u << 4;
	cr_expect_eq(read_send(&w, 8, 256, NULL), UROCE_WC_LOC_QP_OP_ERR);
	w = send_wqe(UROCE_WR_SEND, 1);
	w.xrc_remote_srqn = 1; /* on an RC QP: must be 0 */
	cr_expect_eq(read_send(&w, 8, 256, NULL), UROCE_WC_LOC_QP_OP_ERR);
	w = send_wqe(UROCE_WR_SEND, 1);
	w.reserved1 = 1;
	cr_expect_eq(read_send(&w, 8, 256, NULL), UROCE_WC_LOC_QP_OP_ERR);
	/* Expect: more SGEs than the QP has, or than the ABI has. */
	w = send_wqe(UROCE_WR_SEND, 4);
	cr_expect_eq(read_send(&w, 3, 256, NULL), UROCE_WC_LOC_QP_OP_ERR);
	w.num_sge = 200;
	cr_expect_eq(read_send(&w, 1000, 256, NULL), UROCE_WC_LOC_QP_OP_ERR);
	/* Expect: inline too long for the QP and for the ABI; inline READ. */
	w = send_wqe(UROCE_WR_SEND, 0);
	w.send_flags |= UROCE_SEND_INLINE;
	w.inline_len = 65;
	cr_expect_eq(read_send(&w, 8, 64, NULL), UROCE_WC_LOC_LEN_ERR);
	w.inline_len = UROCE_MAX_INLINE + 1;
	cr_expect_eq(read_send(&w, 8, 100000, NULL), UROCE_WC_LOC_LEN_ERR);
	w.opcode = UROCE_WR_RDMA_READ;
	w.inline_len = 8;
	cr_expect_eq(read_send(&w, 8, 256, NULL), UROCE_WC_LOC_QP_OP_ERR);
	/* Expect: atomic SGE not exactly one of 8 bytes. */
	w = send_wqe(UROCE_WR_ATOMIC_FETCH_AND_ADD, 1);
	cr_expect_eq(read_send(&w, 8, 256, NULL), UROCE_WC_LOC_LEN_ERR);
	w = send_wqe(UROCE_WR_ATOMIC_CMP_AND_SWP, 2);
	w.data.sg_list[0].length = 8;
	cr_expect_eq(read_send(&w, 8, 256, NULL), UROCE_WC_LOC_LEN_ERR);
	/* Expect: lengths that would overflow 32 bits are summed in 64 and
	 * rejected above 2^31. */
	w = send_wqe(UROCE_WR_SEND, 2);
	w.data.sg_list[0].length = 0xffffffffu;
	w.data.sg_list[1].length = 2;
	cr_expect_eq(read_send(&w, 8, 256, NULL), UROCE_WC_LOC_LEN_ERR);
	w.data.sg_list[0].length = UROCE_MAX_MSG_SIZE - 2;
	cr_expect_eq(read_send(&w, 8, 256, NULL), UROCE_WC_SUCCESS);
}

Test(wqe, recv_wqes)
{
	struct uroce_shm_recv_wqe r;
	uint64_t len = 0;

	memset(&r, 0, sizeof(r));
	r.num_sge = 2;
	r.sg_list[0].length = 4096;
	r.sg_list[1].length = 100;
	/* Expect: success and 4196 B; then too many SGEs, reserved, overflow. */
	cr_expect_eq(read_recv(&r, 8, &len), UROCE_WC_SUCCESS);
	cr_expect_eq(len, 4196);
	cr_expect_eq(read_recv(&r, 1, NULL), UROCE_WC_LOC_QP_OP_ERR);
	r.num_sge = 9;
	cr_expect_eq(read_recv(&r, 100, NULL), UROCE_WC_LOC_QP_OP_ERR);
	r.num_sge = 2;
	r.reserved0 = 1;
	cr_expect_eq(read_recv(&r, 8, NULL), UROCE_WC_LOC_QP_OP_ERR);
	r.reserved0 = 0;
	r.sg_list[0].length = 0xffffffffu;
	cr_expect_eq(read_recv(&r, 8, NULL), UROCE_WC_LOC_LEN_ERR);
}

Test(wqe, copy_is_what_was_read)
{
	struct uroce_shm_wq_limits lim = { 8, 256, UROCE_QPT_RC };
	struct uroce_shm_send_wqe w = send_wqe(UROCE_WR_ATOMIC_CMP_AND_SWP, 1);
	struct uroce_wr_send wr;
	uint64_t len = 0;

	/* Expect: every field the opcode uses lands in the private copy. */
	w.data.sg_list[0].length = 8;
	w.wr.atomic.remote_addr = 0x1234560;
	w.wr.atomic.compare_add = 5;
	w.wr.atomic.swap = 6;
	w.wr.atomic.rkey = 0x77;
	memset(&wr, 0, sizeof(wr));
	cr_assert_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, &len), UROCE_WC_SUCCESS);
	cr_expect_eq(wr.wr_id, 99);
	cr_expect_eq(wr.opcode, UROCE_WR_ATOMIC_CMP_AND_SWP);
	cr_expect_eq(wr.remote_addr, 0x1234560);
	cr_expect_eq(wr.compare_add, 5);
	cr_expect_eq(wr.swap, 6);
	cr_expect_eq(wr.rkey, 0x77);
	cr_expect_eq(wr.num_sge, 1);
	cr_expect_eq(wr.sge[0].addr, 0x1000);
	cr_expect_eq(wr.sge[0].lkey, 7);
	cr_expect_eq(len, 8);
	/* Expect: inline bytes copied into the slot's buffer; none without one. */
	w = send_wqe(UROCE_WR_SEND, 0);
	w.send_flags |= UROCE_SEND_INLINE;
	w.inline_len = 3;
	memcpy(w.data.inline_data, "abc", 3);
	memset(&wr, 0, sizeof(wr));
	wr.inline_data = inline_buf;
	cr_assert_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, &len), UROCE_WC_SUCCESS);
	cr_expect_eq(wr.inline_len, 3);
	cr_expect_eq(memcmp(inline_buf, "abc", 3), 0);
	wr.inline_data = NULL;
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &lim, &wr, &len), UROCE_WC_LOC_LEN_ERR);
}

Test(wqe, qp_type_decides_the_opcodes_and_the_ud_fields)
{
	struct uroce_shm_wq_limits ud = { 8, 256, UROCE_QPT_UD }, uc = { 8, 256, UROCE_QPT_UC };
	struct uroce_shm_send_wqe w = send_wqe(UROCE_WR_SEND, 1);
	struct uroce_wr_send wr;

	memset(&wr, 0, sizeof(wr));
	/* Expect: a UD SEND takes its AH handle, QPN and Q_Key from the WQE. */
	w.wr.ud.ah_handle = 3;
	w.wr.ud.remote_qpn = 0xabcdef;
	w.wr.ud.remote_qkey = 0x11;
	cr_assert_eq(uroce_shm_send_wqe_read(&w, &ud, &wr, NULL), UROCE_WC_SUCCESS);
	cr_expect_eq(wr.ah_handle, 3);
	cr_expect_eq(wr.remote_qpn, 0xabcdef);
	cr_expect_eq(wr.remote_qkey, 0x11);
	/* Expect: a QPN above 24 bits, a reserved word, a WRITE on UD: refused. */
	w.wr.ud.remote_qpn = 0x1000000;
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &ud, &wr, NULL), UROCE_WC_LOC_QP_OP_ERR);
	w.wr.ud.remote_qpn = 1;
	w.wr.ud.reserved = 1;
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &ud, &wr, NULL), UROCE_WC_LOC_QP_OP_ERR);
	w = send_wqe(UROCE_WR_RDMA_WRITE, 1);
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &ud, &wr, NULL), UROCE_WC_LOC_QP_OP_ERR);
	/* Expect: UC carries WRITE but no READ or atomic (IBA 10.7.3.1). */
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &uc, &wr, NULL), UROCE_WC_SUCCESS);
	w = send_wqe(UROCE_WR_RDMA_READ, 1);
	cr_expect_eq(uroce_shm_send_wqe_read(&w, &uc, &wr, NULL), UROCE_WC_LOC_QP_OP_ERR);
	cr_expect_eq(wr.wr_id, 99, "wr_id is set for the error completion");
}
