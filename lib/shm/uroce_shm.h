/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The shared-memory ABI between uroced and its client processes (liburoce).
 *
 * Everything in this header is a fixed, versioned, binary contract between two
 * processes on the same host: the layout of work queue entries (WQEs) and
 * completion queue entries (CQEs), the single-producer/single-consumer rings
 * that carry them, the doorbell blocks that tell a daemon worker in O(1) which
 * QPs have work, the CQ arming word, the control messages exchanged over the
 * UNIX socket, and helpers for the memfd/hugetlbfs segments that hold it all.
 * It is distinct from the transport engine's in-memory structures: the daemon
 * translates. Integers are in host byte order, which for every supported target
 * is little-endian; the ABI is same-host only and never crosses a network.
 *
 * Trust: the client trusts the daemon; the daemon trusts nothing it reads from
 * shared memory. Its ring handles keep their own index in private memory,
 * validate every index read from the client, and copy entries out before
 * anything looks at them. doc/shm-abi.md describes the layout, the ownership of
 * every index and the memory ordering.
 *
 * No DPDK here: this is part of the core.
 */

#ifndef UROCE_SHM_H
#define UROCE_SHM_H

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
 * channels; doc/rdmacm.md). */
#define UROCE_SHM_ABI_MINOR 4

/**
 * Check a peer's ABI version against ours.
 *
 * @return
 *   0 if compatible, -EPROTONOSUPPORT if the major differs.
 */
int uroce_shm_version_check(uint16_t peer_major, uint16_t peer_minor);

/** Cache line size the layout is built around (x86-64 and arm64 servers). */
#define UROCE_SHM_CACHE_LINE 64

/*
 * ---------------------------------------------------------------------------
 * Verbs vocabulary with fixed numeric values (the same numbers as libibverbs,
 * so that drivers/verbs maps them one to one).
 * ---------------------------------------------------------------------------
 */

/** Every send flag the ABI defines; the daemon rejects any other bit. */
#define UROCE_SEND_FLAGS_ALL \
	(UROCE_SEND_FENCE | UROCE_SEND_SIGNALED | UROCE_SEND_SOLICITED | UROCE_SEND_INLINE)

/*
 * ---------------------------------------------------------------------------
 * Work queue and completion queue entries
 * ---------------------------------------------------------------------------
 */

/** One scatter/gather element: a range of the client's registered memory. */
struct uroce_shm_sge {
	uint64_t addr;   /**< client virtual address (the MR's iova space) */
	uint32_t length; /**< bytes */
	uint32_t lkey;   /**< local key of the MR that covers the range */
};
UROCE_SHM_SIZE(struct uroce_shm_sge, 16);
UROCE_SHM_OFF(struct uroce_shm_sge, length, 8);
UROCE_SHM_OFF(struct uroce_shm_sge, lkey, 12);

/** Send WQE, 320 bytes: a 64-byte control part, then SGEs or inline bytes. */
struct uroce_shm_send_wqe {
	uint64_t wr_id;       /**< returned unchanged in the CQE */
	uint8_t opcode;       /**< enum uroce_wr_opcode */
	uint8_t num_sge;      /**< SGEs used (0..UROCE_MAX_SGE), ignored if inline */
	uint16_t send_flags;  /**< enum uroce_send_flags */
	/** SEND/WRITE_WITH_IMM: immediate data as a host-order integer (the wire
	 * carries it big-endian); SEND_WITH_INV: the rkey to invalidate. */
	uint32_t imm_data;
	uint32_t inline_len;  /**< bytes of inline_data, if UROCE_SEND_INLINE */
	uint32_t reserved0;   /**< must be 0 */
	union {
		/** RDMA WRITE / WRITE_WITH_IMM / READ. */
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
			uint32_t reserved;
		} rdma;
		/** ATOMIC CMP_AND_SWP / FETCH_AND_ADD (64-bit, 8-byte aligned). */
		struct {
			uint64_t remote_addr;
			uint64_t compare_add; /**< compare (CMP_AND_SWP) or add value */
			uint64_t swap;        /**< swap value (CMP_AND_SWP only) */
			uint32_t rkey;
			uint32_t reserved;
		} atomic;
		/** UD: address handle issued by CREATE_AH, destination QP and Q_Key. */
		struct {
			uint32_t ah_handle;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
			uint32_t reserved;
		} ud;
	} wr;
	uint64_t reserved1;   /**< must be 0 */
	union {
		struct uroce_shm_sge sg_list[UROCE_MAX_SGE];
		uint8_t inline_data[UROCE_MAX_INLINE];
	} data;
};
UROCE_SHM_OFF(struct uroce_shm_send_wqe, opcode, 8);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, num_sge, 9);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, send_flags, 10);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, imm_data, 12);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, inline_len, 16);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.rdma.remote_addr, 24);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.rdma.rkey, 32);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.atomic.compare_add, 32);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.atomic.swap, 40);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.atomic.rkey, 48);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.ud.ah_handle, 24);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.ud.remote_qpn, 28);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.ud.remote_qkey, 32);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, data, 64);
UROCE_SHM_STATIC_ASSERT(UROCE_MAX_SGE * 16 <= UROCE_MAX_INLINE,
			"SGE list fits in the inline area");
UROCE_SHM_SIZE(struct uroce_shm_send_wqe, 64 + UROCE_MAX_INLINE);

/** Receive WQE, 144 bytes. */
struct uroce_shm_recv_wqe {
	uint64_t wr_id;     /**< returned unchanged in the CQE */
	uint32_t num_sge;   /**< SGEs used (0..UROCE_MAX_SGE) */
	uint32_t reserved0; /**< must be 0 */
	struct uroce_shm_sge sg_list[UROCE_MAX_SGE];
};
UROCE_SHM_OFF(struct uroce_shm_recv_wqe, num_sge, 8);
UROCE_SHM_OFF(struct uroce_shm_recv_wqe, sg_list, 16);
UROCE_SHM_SIZE(struct uroce_shm_recv_wqe, 16 + 16 * UROCE_MAX_SGE);

/** Completion queue entry, one cache line. */
struct uroce_shm_cqe {
	uint64_t wr_id;          /**< from the WQE */
	uint8_t status;          /**< enum uroce_wc_status */
	uint8_t opcode;          /**< enum uroce_wc_opcode */
	uint16_t wc_flags;       /**< enum uroce_wc_flags */
	uint32_t vendor_err;     /**< uroce detail code for an error status, else 0 */
	uint32_t byte_len;       /**< bytes received (receive completions) */
	/** Immediate data (host order) if WITH_IMM, invalidated rkey if WITH_INV. */
	uint32_t imm_data;
	uint32_t qp_num;         /**< local QPN */
	uint32_t src_qp;         /**< remote QPN (UD receives) */
	uint16_t pkey_index;
	uint16_t slid;           /**< always 0 on RoCE */
	uint8_t sl;
	uint8_t dlid_path_bits;  /**< always 0 on RoCE */
	uint16_t reserved0;
	uint64_t reserved1[3];
};
UROCE_SHM_OFF(struct uroce_shm_cqe, status, 8);
UROCE_SHM_OFF(struct uroce_shm_cqe, opcode, 9);
UROCE_SHM_OFF(struct uroce_shm_cqe, wc_flags, 10);
UROCE_SHM_OFF(struct uroce_shm_cqe, vendor_err, 12);
UROCE_SHM_OFF(struct uroce_shm_cqe, byte_len, 16);
UROCE_SHM_OFF(struct uroce_shm_cqe, imm_data, 20);
UROCE_SHM_OFF(struct uroce_shm_cqe, qp_num, 24);
UROCE_SHM_OFF(struct uroce_shm_cqe, src_qp, 28);
UROCE_SHM_OFF(struct uroce_shm_cqe, pkey_index, 32);
UROCE_SHM_OFF(struct uroce_shm_cqe, slid, 34);
UROCE_SHM_OFF(struct uroce_shm_cqe, sl, 36);
UROCE_SHM_OFF(struct uroce_shm_cqe, dlid_path_bits, 37);
UROCE_SHM_SIZE(struct uroce_shm_cqe, 64);

/**
 * Structural check of a send WQE the daemon has already copied out of shared
 * memory (never call it on the shared slot itself). It checks what the ABI
 * alone defines: opcode, flags, reserved fields, SGE count, inline length,
 * atomic operand size and the total length; keys and addresses are the
 * daemon's to check against its MRs, and the opcode against the QP type.
 *
 * @param w  private copy of the WQE
 * @param max_sge  the QP's max_send_sge (clamped to UROCE_MAX_SGE)
 * @param max_inline  the QP's max_inline_data (clamped to UROCE_MAX_INLINE)
 * @param total_len  set to the message length on success (may be NULL)
 * @return
 *   UROCE_WC_SUCCESS, or the completion status to fail the WQE with:
 *   UROCE_WC_LOC_QP_OP_ERR (unknown opcode or flag, reserved field set, inline
 *   on an opcode that carries no payload, too many SGEs),
 *   UROCE_WC_LOC_LEN_ERR (inline length too large, atomic SGE not 8 bytes,
 *   total length above UROCE_MAX_MSG_SIZE).
 */
enum uroce_wc_status uroce_shm_send_wqe_check(const struct uroce_shm_send_wqe *w,
						  uint32_t max_sge, uint32_t max_inline,
						  uint64_t *total_len);

/**
 * Structural check of a receive WQE copied out of shared memory.
 *
 * @return UROCE_WC_SUCCESS, UROCE_WC_LOC_QP_OP_ERR (reserved field set or too
 *   many SGEs), or UROCE_WC_LOC_LEN_ERR (total length above UROCE_MAX_MSG_SIZE).
 */
enum uroce_wc_status uroce_shm_recv_wqe_check(const struct uroce_shm_recv_wqe *w,
						  uint32_t max_sge, uint64_t *total_len);

/*
 * ---------------------------------------------------------------------------
 * Single-producer / single-consumer ring over shared memory
 * ---------------------------------------------------------------------------
 */

/** "URNG", first word of every ring header. */
#define UROCE_SHM_RING_MAGIC 0x474e5255u
/** Largest ring, in entries. */
#define UROCE_SHM_RING_MAX_SIZE (1u << 24)
/** Largest entry, in bytes. */
#define UROCE_SHM_RING_MAX_ENTRY 4096u

/**
 * Shared ring header, four cache lines; the entries follow at entries_offset.
 * Line 0 is written once by the creator (the daemon) before the segment is
 * handed out. Line 1 is written only by the producer, line 2 only by the
 * consumer, so neither side's stores invalidate the other's line. Line 3 holds
 * per-kind words (the CQ arm word). The daemon never reads line 0 back, nor
 * its own index: it keeps them in struct uroce_shm_ring.
 */
struct uroce_shm_ring_hdr {
	uint32_t magic;          /**< UROCE_SHM_RING_MAGIC */
	uint16_t abi_major;
	uint16_t abi_minor;
	uint32_t size;           /**< entries, a power of two */
	uint32_t entry_size;     /**< bytes, a multiple of 8 */
	uint32_t entries_offset; /**< from the start of this header */
	uint32_t reserved0[11];
	/** Producer index, free-running modulo 2^32. Owner: the producer. */
	uint32_t prod;
	/** CQ only: every CQE below this index was published and checked
	 * against the arm word (ABI 1.2; see uroce_shm_cq_arm()). Owner: the
	 * producer. */
	uint32_t cq_judged;
	uint32_t reserved1[14];
	/** Consumer index, free-running modulo 2^32. Owner: the consumer. */
	uint32_t cons;
	uint32_t reserved2[15];
	/** CQ only: arm word (see uroce_shm_cq_arm()). Written by the client to
	 * arm, cleared by whichever side claims the event, with a CAS. */
	uint64_t cq_arm;
	uint64_t reserved3[7];
};
UROCE_SHM_OFF(struct uroce_shm_ring_hdr, size, 8);
UROCE_SHM_OFF(struct uroce_shm_ring_hdr, entry_size, 12);
UROCE_SHM_OFF(struct uroce_shm_ring_hdr, entries_offset, 16);
UROCE_SHM_OFF(struct uroce_shm_ring_hdr, prod, 64);
UROCE_SHM_OFF(struct uroce_shm_ring_hdr, cq_judged, 68);
UROCE_SHM_OFF(struct uroce_shm_ring_hdr, cons, 128);
UROCE_SHM_OFF(struct uroce_shm_ring_hdr, cq_arm, 192);
UROCE_SHM_SIZE(struct uroce_shm_ring_hdr, 256);

/** Which side of a ring a handle is. */
enum uroce_shm_ring_role {
	UROCE_SHM_RING_PRODUCER = 1,
	UROCE_SHM_RING_CONSUMER = 2,
};

/** Ring handle flag: the other side is not trusted (the daemon's view). The
 * zero-copy consumer API is refused; entries can only be copied out. */
#define UROCE_SHM_RING_F_UNTRUSTED (1u << 0)

/**
 * One side's private handle on a shared ring. It lives in the process's own
 * memory; geometry and this side's index are never re-read from the segment.
 * Fields are read-only for users.
 */
struct uroce_shm_ring {
	struct uroce_shm_ring_hdr *hdr; /**< shared header */
	uint8_t *entries;               /**< shared entry array */
	uint32_t size;                  /**< entries (power of two) */
	uint32_t mask;                  /**< size - 1 */
	uint32_t entry_size;            /**< bytes per entry */
	uint32_t head;                  /**< this side's index (private copy) */
	uint32_t peer;                  /**< last validated index of the other side */
	uint32_t flags;                 /**< UROCE_SHM_RING_F_* */
	uint8_t role;                   /**< enum uroce_shm_ring_role */
	uint8_t corrupt;                /**< sticky: peer index was invalid */
	uint16_t reserved;
	uint32_t cq_arm_seq;            /**< CQ consumer: arm sequence */
	uint64_t bad_index;             /**< invalid peer indices seen */
	uint64_t bad_arm;               /**< CQ producer: invalid arm words seen */
};

/**
 * Bytes of shared memory a ring needs (header plus entries, rounded to a cache
 * line).
 *
 * @return
 *   Byte count, or 0 if size is not a power of two in [1, UROCE_SHM_RING_MAX_SIZE]
 *   or entry_size is not a multiple of 8 in [8, UROCE_SHM_RING_MAX_ENTRY].
 */
size_t uroce_shm_ring_mem_size(uint32_t size, uint32_t entry_size);

/**
 * Format a ring in shared memory and open the creator's side of it. The
 * daemon creates every ring; start_index lets tests begin near 2^32.
 *
 * @param r      handle to fill
 * @param mem    shared memory, 64-byte aligned
 * @param len    bytes available at mem
 * @param size   entries, a power of two
 * @param entry_size bytes per entry, a multiple of 8
 * @param start_index initial producer and consumer index
 * @param role   the creator's side
 * @param flags  UROCE_SHM_RING_F_*
 * @return
 *   0, or -EINVAL (bad geometry, alignment, role or flags), -ENOSPC (len too small).
 */
int uroce_shm_ring_init(struct uroce_shm_ring *r, void *mem, size_t len, uint32_t size,
			uint32_t entry_size, uint32_t start_index, enum uroce_shm_ring_role role,
			uint32_t flags);

/**
 * Open the other side of a ring that uroce_shm_ring_init() formatted, reading
 * its geometry and indices from the header (the client trusts the daemon, but
 * everything is still checked against len).
 *
 * @return
 *   0, or -EINVAL (bad alignment, role or flags), -EPROTO (bad magic or geometry),
 *   -EPROTONOSUPPORT (ABI major differs), -ENOSPC (ring larger than len),
 *   -EIO (indices further apart than the ring size).
 */
int uroce_shm_ring_attach(struct uroce_shm_ring *r, void *mem, size_t len,
			  enum uroce_shm_ring_role role, uint32_t flags);

/** Entries the producer can write now (0 if the ring is corrupt). */
uint32_t uroce_shm_ring_free_count(struct uroce_shm_ring *r);
/** Entries the consumer can read now (0 if the ring is corrupt). */
uint32_t uroce_shm_ring_used_count(struct uroce_shm_ring *r);

/**
 * Copy up to n entries (entry_size bytes each, contiguous in src) into the ring
 * and publish them with one release store.
 *
 * @return number enqueued (0 if full, corrupt or not the producer).
 */
uint32_t uroce_shm_ring_enqueue_burst(struct uroce_shm_ring *r, const void *src, uint32_t n);

/**
 * Copy up to n entries out of the ring into dst (the daemon's API: the copy is
 * taken before anything looks at it), then release the slots.
 *
 * @return number dequeued (0 if empty, corrupt or not the consumer).
 */
uint32_t uroce_shm_ring_dequeue_burst(struct uroce_shm_ring *r, void *dst, uint32_t n);

/**
 * Zero-copy producer: reserve up to n free slots.
 *
 * @return slots reserved (may be fewer than n); fill them with
 *   uroce_shm_ring_prod_slot() and publish with uroce_shm_ring_prod_commit().
 */
uint32_t uroce_shm_ring_prod_reserve(struct uroce_shm_ring *r, uint32_t n);
/** Pointer to the i-th slot after the producer index (i < reserved count). */
void *uroce_shm_ring_prod_slot(struct uroce_shm_ring *r, uint32_t i);
/** Publish n reserved slots (n must not exceed what was reserved). */
void uroce_shm_ring_prod_commit(struct uroce_shm_ring *r, uint32_t n);

/**
 * Zero-copy consumer, trusted direction only (the client reading its CQ):
 * make up to n published entries visible.
 *
 * @return entries available (may be fewer than n); 0 if empty, corrupt, or the
 *   handle has UROCE_SHM_RING_F_UNTRUSTED.
 */
uint32_t uroce_shm_ring_cons_peek(struct uroce_shm_ring *r, uint32_t n);
/**
 * Read in place from a ring whose producer is not trusted (the daemon
 * reading a client's WQEs): make up to n published entries available like
 * uroce_shm_ring_cons_peek(). The producer can still write those entries
 * while they are read, so the caller reads each field exactly once into its
 * own memory and checks only that copy (never a field of the slot twice),
 * then releases them with uroce_shm_ring_cons_release(). The indices are
 * validated as for a copy-out.
 *
 * @return entries available (may be fewer than n); 0 if empty or corrupt.
 */
uint32_t uroce_shm_ring_untrusted_peek(struct uroce_shm_ring *r, uint32_t n);

/** Pointer to the i-th entry after the consumer index (i < peeked count). */
const void *uroce_shm_ring_cons_slot(struct uroce_shm_ring *r, uint32_t i);
/** Release n peeked entries to the producer. */
void uroce_shm_ring_cons_release(struct uroce_shm_ring *r, uint32_t n);

/** True once an invalid peer index was seen; the ring is then never used again. */
static inline bool
uroce_shm_ring_is_corrupt(const struct uroce_shm_ring *r)
{
	return r->corrupt != 0;
}

/*
 * ---------------------------------------------------------------------------
 * Doorbells
 * ---------------------------------------------------------------------------
 */

/** Slots (QPs) in one doorbell block. */
/** Doorbell blocks a daemon may hand out (one per worker). */
#define UROCE_SHM_MAX_DB_BLOCKS 64u
#define UROCE_SHM_DB_SLOTS 4096u
/** Words in the doorbell bitmap. */
#define UROCE_SHM_DB_WORDS (UROCE_SHM_DB_SLOTS / 64)

/**
 * Doorbell block, one 4 KiB page per (client, daemon worker). The daemon gives
 * each QP a slot in the block of the worker that owns it. To ring, the client
 * sets the slot's bit in words[] and, if the word was zero, the word's bit in
 * summary (two atomic ORs at most; no system call). The worker finds rung
 * slots with two find-first-set operations per QP, never scanning idle QPs.
 */
struct uroce_shm_db_block {
	/** Bit w set: words[w] may be non-zero. Client ORs, worker exchanges. */
	uint64_t summary;
	uint64_t reserved0[7];
	/** Bit b of words[w] set: slot 64*w+b has work. Client ORs, worker exchanges. */
	uint64_t words[UROCE_SHM_DB_WORDS];
	uint64_t reserved1[(4096 - 64 - UROCE_SHM_DB_WORDS * 8) / 8];
};
UROCE_SHM_OFF(struct uroce_shm_db_block, words, 64);
UROCE_SHM_SIZE(struct uroce_shm_db_block, 4096);

/**
 * Client side: ring the doorbell of one slot, after publishing the SQ producer
 * index. Lock-free, safe from several client threads at once.
 */
void uroce_shm_db_ring(struct uroce_shm_db_block *db, uint32_t slot);

/** Daemon worker's private view of one doorbell block. */
struct uroce_shm_db_reader {
	struct uroce_shm_db_block *db;         /**< shared block */
	uint32_t nslots;                       /**< slots this client may use (daemon's own) */
	uint32_t reserved;
	uint64_t pending_summary;              /**< harvested, not yet returned */
	uint64_t pending[UROCE_SHM_DB_WORDS];
	uint64_t harvests;                     /**< exchanges of the summary word */
	uint64_t bad_slot;                     /**< bits at or above nslots, dropped */
	uint64_t spurious;                     /**< summary bits with an empty word */
};

/** Initialise a reader over a block; nslots comes from the daemon's own records. */
void uroce_shm_db_reader_init(struct uroce_shm_db_reader *rd, struct uroce_shm_db_block *db,
			      uint32_t nslots);

/**
 * Next slot with work, in O(1) per slot. Harvests the shared bits only when the
 * private set is empty, so every rung QP is served before any is served twice.
 *
 * @return slot in [0, nslots), or -EAGAIN if none is pending.
 */
int uroce_shm_db_next(struct uroce_shm_db_reader *rd);

/** Put a slot back in the private pending set (work left after a budget). */
void uroce_shm_db_requeue(struct uroce_shm_db_reader *rd, uint32_t slot);

/*
 * ---------------------------------------------------------------------------
 * CQ arming
 * ---------------------------------------------------------------------------
 */

/** Arm word: bits 0..31 consumer index at arming, 32..39 mode, 40..63 sequence. */
enum uroce_shm_cq_arm_mode {
	UROCE_SHM_CQ_DISARMED = 0,
	UROCE_SHM_CQ_ARM_NEXT = 1,      /**< any next completion */
	UROCE_SHM_CQ_ARM_SOLICITED = 2, /**< next solicited or unsuccessful one */
};

/**
 * Client side: arm the CQ for one event (ibv_req_notify_cq). The event is for
 * the next completion (IBA 11.4.2.2): CQEs the daemon published and checked
 * against the arm word before the arm was visible raise none, polled or not.
 * The arm word is published, then the ring is re-read: if a qualifying CQE
 * was published that the daemon may not have checked yet, this call tries to
 * claim the event itself.
 *
 * @param cq  the client's consumer handle on the CQ ring
 * @param solicited_only  arm for solicited or error completions only
 * @return
 *   0: armed; the daemon will signal the CQ's eventfd.
 *   1: a qualifying CQE is already there and this call claimed the event: the
 *      caller must deliver it (write the eventfd or return without blocking).
 *   -EINVAL: not a consumer handle; -EIO: the ring is corrupt.
 */
int uroce_shm_cq_arm(struct uroce_shm_ring *cq, bool solicited_only);

/**
 * Daemon side: after publishing CQEs on cq (the daemon's producer handle),
 * decide whether the CQ's eventfd must be signalled, then mark everything
 * published as checked (cq_judged). Disarms the CQ when it says yes, so there
 * is one event per arm. The arm word is client-written and only ever affects
 * the client's own events.
 *
 * @param qualifies  some CQE just published is solicited or unsuccessful
 * @return true if the caller must write the eventfd.
 */
bool uroce_shm_cq_should_signal(struct uroce_shm_ring *cq, bool qualifies);

/*
 * ---------------------------------------------------------------------------
 * Segments
 * ---------------------------------------------------------------------------
 */

/** Segment flag (request): back with hugetlbfs if possible. */
#define UROCE_SHM_SEG_WANT_HUGETLB (1u << 0)
/** Segment flag (result): the segment is backed by huge pages. */
#define UROCE_SHM_SEG_HUGETLB (1u << 1)

/** A mapped shared segment. */
struct uroce_shm_segment {
	int fd;          /**< memfd, or -1 */
	uint32_t flags;  /**< UROCE_SHM_SEG_HUGETLB if huge-page backed */
	void *addr;      /**< mapping, or NULL */
	size_t size;     /**< mapped bytes (rounded to the page size) */
	size_t page_size;
};

/**
 * Round size up to a multiple of page_size (a power of two).
 *
 * @return rounded size, or 0 on overflow or if size is 0.
 */
size_t uroce_shm_segment_round(size_t size, size_t page_size);

/**
 * Create, size, seal (no shrink, no grow) and map a shared segment. With
 * UROCE_SHM_SEG_WANT_HUGETLB, a hugetlbfs memfd is tried first and plain memfd
 * is the fallback; seg->flags says which one was used.
 *
 * @return 0, or -EINVAL (size 0 or unknown flag), -EOVERFLOW (size too large),
 *   or the -errno of memfd_create, ftruncate, fcntl or mmap.
 */
int uroce_shm_segment_create(struct uroce_shm_segment *seg, const char *name, size_t size,
			     uint32_t flags);

/**
 * Map a segment received from a peer. The fd must be a sealed memfd
 * (F_SEAL_SHRINK, so the peer cannot truncate it under the mapping) of at
 * least min_size bytes. On success seg owns fd, and seg->flags has
 * UROCE_SHM_SEG_HUGETLB if the file is huge-page backed; on failure fd is not
 * closed.
 *
 * @return 0, or -EBADF (fd < 0), -EPERM (not sealed against shrinking),
 *   -ENOSPC (smaller than min_size), -EINVAL (min_size 0), or the -errno of
 *   fstat, fcntl or mmap.
 */
int uroce_shm_segment_map(struct uroce_shm_segment *seg, int fd, size_t min_size);

/** Unmap and close a segment; safe on a zeroed or already unmapped one. */
void uroce_shm_segment_unmap(struct uroce_shm_segment *seg);

/** Layout of a QP's queue segment: SQ ring, then RQ ring (absent with an SRQ). */
struct uroce_shm_qp_layout {
	uint32_t sq_offset;
	uint32_t rq_offset; /**< 0 if rq_size is 0 */
	size_t sq_bytes;
	size_t rq_bytes;
	size_t total;       /**< rounded to 4 KiB */
};

/**
 * Compute a QP segment layout; each ring starts on a 4 KiB boundary.
 *
 * @return 0, or -EINVAL (sq_size or a non-zero rq_size not a power of two in range).
 */
int uroce_shm_qp_layout(uint32_t sq_size, uint32_t rq_size, struct uroce_shm_qp_layout *out);

/*
 * ---------------------------------------------------------------------------
 * Control protocol (UNIX SOCK_SEQPACKET socket, one message per record)
 * ---------------------------------------------------------------------------
 */

/** "UROC", first word of every control message. */
#define UROCE_SHM_MSG_MAGIC 0x434f5255u
/** Largest control message, header included. */
#define UROCE_SHM_MSG_MAX 512u
/** Handle value meaning "none" (e.g. no SRQ). */
#define UROCE_SHM_HANDLE_NONE 0xffffffffu

/** Message types. Values are ABI; a new type needs a new minor. */
enum uroce_shm_msg_type {
	UROCE_SHM_MSG_HELLO = 1,
	UROCE_SHM_MSG_ALLOC_SEGMENT = 2,
	UROCE_SHM_MSG_FREE_SEGMENT = 3,
	UROCE_SHM_MSG_ALLOC_PD = 4,
	UROCE_SHM_MSG_DEALLOC_PD = 5,
	UROCE_SHM_MSG_REG_MR = 6,
	UROCE_SHM_MSG_DEREG_MR = 7,
	UROCE_SHM_MSG_CREATE_CQ = 8,
	UROCE_SHM_MSG_DESTROY_CQ = 9,
	UROCE_SHM_MSG_CREATE_QP = 10,
	UROCE_SHM_MSG_DESTROY_QP = 11,
	UROCE_SHM_MSG_MODIFY_QP = 12,
	UROCE_SHM_MSG_QUERY_QP = 13,
	UROCE_SHM_MSG_CREATE_SRQ = 14,
	UROCE_SHM_MSG_DESTROY_SRQ = 15,
	UROCE_SHM_MSG_MODIFY_SRQ = 16,
	UROCE_SHM_MSG_QUERY_SRQ = 17,
	UROCE_SHM_MSG_CREATE_AH = 18,
	UROCE_SHM_MSG_DESTROY_AH = 19,
	UROCE_SHM_MSG_QUERY_DEVICE = 20,
	UROCE_SHM_MSG_QUERY_PORT = 21,
	UROCE_SHM_MSG_QUERY_GID = 22,
	UROCE_SHM_MSG_ASYNC_EVENT = 23, /**< daemon to client only, seq 0 */
	/* ABI 1.1: read-only introspection for uroce-ctl (doc/shm-abi.md). */
	UROCE_SHM_MSG_LIST_SESSIONS = 24,
	UROCE_SHM_MSG_LIST_QPS = 25,
	UROCE_SHM_MSG_QUERY_COUNTERS = 26,
	/* ABI 1.2 */
	UROCE_SHM_MSG_LIST_WORKERS = 27,
	/* ABI 1.3: the lcore load generator (doc/loadgen.md, doc/shm-abi.md). */
	UROCE_SHM_MSG_GEN_CREATE = 28,
	UROCE_SHM_MSG_GEN_QPS = 29,
	UROCE_SHM_MSG_GEN_CONNECT = 30,
	UROCE_SHM_MSG_GEN_START = 31,
	UROCE_SHM_MSG_GEN_STATS = 32,
	UROCE_SHM_MSG_GEN_DESTROY = 33,
	/* ABI 1.4: rdma_cm (the block "rdma_cm" below, doc/shm-abi.md). */
	UROCE_SHM_MSG_CM_CHANNEL_OPEN = 34,
	UROCE_SHM_MSG_CM_CHANNEL_CLOSE = 35,
	UROCE_SHM_MSG_CM_CREATE_ID = 36,
	UROCE_SHM_MSG_CM_DESTROY_ID = 37,
	UROCE_SHM_MSG_CM_MIGRATE_ID = 38,
	UROCE_SHM_MSG_CM_SET_OPTION = 39,
	UROCE_SHM_MSG_CM_BIND = 40,
	UROCE_SHM_MSG_CM_RESOLVE_ADDR = 41,
	UROCE_SHM_MSG_CM_RESOLVE_ROUTE = 42,
	UROCE_SHM_MSG_CM_LISTEN = 43,
	UROCE_SHM_MSG_CM_CONNECT = 44,
	UROCE_SHM_MSG_CM_ACCEPT = 45,
	UROCE_SHM_MSG_CM_REJECT = 46,
	UROCE_SHM_MSG_CM_ESTABLISH = 47,
	UROCE_SHM_MSG_CM_DISCONNECT = 48,
	UROCE_SHM_MSG_CM_NOTIFY = 49,
	UROCE_SHM_MSG_CM_INIT_QP_ATTR = 50,
	UROCE_SHM_MSG_CM_QUERY = 51,
	UROCE_SHM_MSG_CM_EVENT = 52, /**< daemon to client only, on an event channel, seq 0 */
	UROCE_SHM_MSG_TYPE_MAX = 52,
};

/** Header flag: the message comes from the daemon (a response or an event). */
#define UROCE_SHM_MSG_F_FROM_DAEMON (1u << 0)

/**
 * Header of every control message. magic, abi_major, type and length keep
 * these offsets in every major version, so a peer can always tell "wrong
 * version" from "garbage".
 */
struct uroce_shm_msg_hdr {
	uint32_t magic;     /**< UROCE_SHM_MSG_MAGIC */
	uint16_t abi_major; /**< UROCE_SHM_ABI_MAJOR of the sender */
	uint16_t type;      /**< enum uroce_shm_msg_type */
	uint32_t length;    /**< whole message, header included */
	uint32_t seq;       /**< request sequence; a response echoes it */
	int32_t status;     /**< response: 0 or -errno; request: 0 */
	uint16_t flags;     /**< UROCE_SHM_MSG_F_* */
	uint16_t reserved;  /**< must be 0 */
};
UROCE_SHM_OFF(struct uroce_shm_msg_hdr, abi_major, 4);
UROCE_SHM_OFF(struct uroce_shm_msg_hdr, type, 6);
UROCE_SHM_OFF(struct uroce_shm_msg_hdr, length, 8);
UROCE_SHM_OFF(struct uroce_shm_msg_hdr, seq, 12);
UROCE_SHM_OFF(struct uroce_shm_msg_hdr, status, 16);
UROCE_SHM_OFF(struct uroce_shm_msg_hdr, flags, 20);
UROCE_SHM_SIZE(struct uroce_shm_msg_hdr, 24);

/** Body that carries only a handle (DESTROY_*, DEALLOC_PD, DEREG_MR, ...). */
struct uroce_shm_msg_handle {
	uint32_t handle;
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_handle, 8);

/** HELLO request. The first 4 bytes are frozen in every major. */
struct uroce_shm_msg_hello_req {
	uint16_t abi_major;
	uint16_t abi_minor;
	uint32_t flags;     /**< must be 0 */
	char name[32];      /**< client's name for uroce-ctl, NUL-padded */
};
UROCE_SHM_OFF(struct uroce_shm_msg_hello_req, name, 8);
UROCE_SHM_SIZE(struct uroce_shm_msg_hello_req, 40);

/** HELLO response; carries the doorbell segment fd on success. The first
 * 4 bytes are frozen in every major, so a refused client can print them. */
struct uroce_shm_msg_hello_resp {
	uint16_t abi_major;
	uint16_t abi_minor;
	uint32_t client_id;
	uint32_t n_db_blocks;  /**< doorbell blocks in the segment (one per worker) */
	uint32_t db_seg_size;  /**< bytes of the doorbell segment */
	uint32_t max_inline;   /**< UROCE_MAX_INLINE of the daemon */
	uint32_t max_sge;      /**< UROCE_MAX_SGE of the daemon */
	uint32_t max_qp_wr;
	uint32_t max_cqe;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_hello_resp, 32);

/** ALLOC_SEGMENT request: adopt the attached sealed memfd. */
struct uroce_shm_msg_alloc_segment_req {
	uint64_t size;
	uint32_t flags;     /**< UROCE_SHM_SEG_HUGETLB if huge-page backed */
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_alloc_segment_req, 16);

/** ALLOC_SEGMENT response. */
struct uroce_shm_msg_alloc_segment_resp {
	uint32_t seg_handle;
	uint32_t reserved;
	uint64_t size;      /**< bytes the daemon mapped */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_alloc_segment_resp, 16);

/** REG_MR request: a window [seg_offset, seg_offset + length) of a segment. */
struct uroce_shm_msg_reg_mr_req {
	uint32_t pd_handle;
	uint32_t seg_handle;
	uint64_t seg_offset;
	uint64_t length;
	uint64_t iova;      /**< client address of the first byte */
	uint32_t access;    /**< enum uroce_access_flags */
	uint32_t reserved;
};
UROCE_SHM_OFF(struct uroce_shm_msg_reg_mr_req, iova, 24);
UROCE_SHM_SIZE(struct uroce_shm_msg_reg_mr_req, 40);

/** REG_MR response. */
struct uroce_shm_msg_reg_mr_resp {
	uint32_t mr_handle;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_reg_mr_resp, 16);

/** CQ flag: the request carries an eventfd for blocking completions. */
#define UROCE_SHM_CQ_F_EVENTFD (1u << 0)

/** CREATE_CQ request; may carry an eventfd. */
struct uroce_shm_msg_create_cq_req {
	uint32_t cqe;         /**< minimum entries */
	uint32_t comp_vector;
	uint32_t flags;       /**< UROCE_SHM_CQ_F_* */
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_create_cq_req, 16);

/** CREATE_CQ response; carries the CQ segment fd on success. */
struct uroce_shm_msg_create_cq_resp {
	uint32_t cq_handle;
	uint32_t cqe;         /**< ring entries (power of two) */
	uint64_t seg_size;
	uint32_t ring_offset;
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_create_cq_resp, 24);

/** QP capabilities (ibv_qp_cap). */
struct uroce_shm_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_qp_cap, 24);

/** Address vector (ibv_ah_attr with its GRH; RoCE is always global). */
struct uroce_shm_ah_attr {
	uint8_t dgid[16];
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t sl;
	uint8_t port_num;
	uint8_t static_rate;
	uint8_t is_global;
	uint8_t reserved0;
	uint32_t reserved1;
};
UROCE_SHM_OFF(struct uroce_shm_ah_attr, flow_label, 16);
UROCE_SHM_OFF(struct uroce_shm_ah_attr, port_num, 24);
UROCE_SHM_SIZE(struct uroce_shm_ah_attr, 32);

/** QP attributes (ibv_qp_attr subset uroce supports). */
struct uroce_shm_qp_attr {
	uint32_t qp_state;        /**< enum uroce_qp_state */
	uint32_t cur_qp_state;
	uint32_t path_mtu;        /**< IBA MTU enum, 1 (256) .. 5 (4096) */
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qp_access_flags; /**< enum uroce_access_flags */
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t sq_draining;
	uint16_t reserved0;
	uint32_t reserved1;
	struct uroce_shm_ah_attr ah_attr;
};
UROCE_SHM_OFF(struct uroce_shm_qp_attr, pkey_index, 32);
UROCE_SHM_OFF(struct uroce_shm_qp_attr, rnr_retry, 40);
UROCE_SHM_OFF(struct uroce_shm_qp_attr, ah_attr, 48);
UROCE_SHM_SIZE(struct uroce_shm_qp_attr, 80);

/** CREATE_QP request. */
struct uroce_shm_msg_create_qp_req {
	uint32_t pd_handle;
	uint32_t send_cq;
	uint32_t recv_cq;
	uint32_t srq_handle;  /**< or UROCE_SHM_HANDLE_NONE */
	uint32_t qp_type;     /**< enum uroce_qp_type */
	uint32_t sq_sig_all;
	struct uroce_shm_qp_cap cap;
};
UROCE_SHM_OFF(struct uroce_shm_msg_create_qp_req, cap, 24);
UROCE_SHM_SIZE(struct uroce_shm_msg_create_qp_req, 48);

/** CREATE_QP response; carries the QP segment fd (SQ and RQ rings) on success. */
struct uroce_shm_msg_create_qp_resp {
	uint32_t qp_handle;
	uint32_t qp_num;
	struct uroce_shm_qp_cap cap; /**< actual capabilities */
	uint64_t seg_size;
	uint32_t sq_offset;
	uint32_t rq_offset;
	uint32_t db_block;           /**< doorbell block index in the HELLO segment */
	uint32_t db_slot;            /**< slot within that block */
};
UROCE_SHM_OFF(struct uroce_shm_msg_create_qp_resp, seg_size, 32);
UROCE_SHM_SIZE(struct uroce_shm_msg_create_qp_resp, 56);

/** MODIFY_QP request. */
struct uroce_shm_msg_modify_qp_req {
	uint32_t qp_handle;
	uint32_t attr_mask;          /**< enum uroce_qp_attr_mask */
	struct uroce_shm_qp_attr attr;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_modify_qp_req, 88);

/** QUERY_QP request. */
struct uroce_shm_msg_query_qp_req {
	uint32_t qp_handle;
	uint32_t attr_mask;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_qp_req, 8);

/** QUERY_QP response. */
struct uroce_shm_msg_query_qp_resp {
	struct uroce_shm_qp_attr attr;
	struct uroce_shm_qp_cap cap;
	uint32_t qp_type;
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_qp_resp, 112);

/** CREATE_SRQ request. */
struct uroce_shm_msg_create_srq_req {
	uint32_t pd_handle;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_create_srq_req, 16);

/**
 * CREATE_SRQ response; carries the SRQ segment fd on success. Since ABI 1.1 an
 * SRQ has a doorbell slot like a QP's, in the same slot space of the HELLO
 * doorbell segment (a slot names either one QP or one SRQ): the client rings
 * it after publishing receive WQEs, so the daemon finds SRQ work in O(1). The
 * two words were reserved (zero) in 1.0, which is why the size is unchanged.
 */
struct uroce_shm_msg_create_srq_resp {
	uint32_t srq_handle;
	uint32_t max_wr;      /**< ring entries (power of two) */
	uint32_t max_sge;
	uint32_t db_block;    /**< doorbell block index in the HELLO segment (1.1; was reserved) */
	uint64_t seg_size;
	uint32_t ring_offset;
	uint32_t db_slot;     /**< slot within that block (1.1; was reserved) */
};
UROCE_SHM_OFF(struct uroce_shm_msg_create_srq_resp, db_block, 12);
UROCE_SHM_OFF(struct uroce_shm_msg_create_srq_resp, seg_size, 16);
UROCE_SHM_OFF(struct uroce_shm_msg_create_srq_resp, ring_offset, 24);
UROCE_SHM_OFF(struct uroce_shm_msg_create_srq_resp, db_slot, 28);
UROCE_SHM_SIZE(struct uroce_shm_msg_create_srq_resp, 32);

/** MODIFY_SRQ mask bits (ibv_srq_attr_mask values). */
#define UROCE_SRQ_MAX_WR (1u << 0)
#define UROCE_SRQ_LIMIT (1u << 1)

/** MODIFY_SRQ request. */
struct uroce_shm_msg_modify_srq_req {
	uint32_t srq_handle;
	uint32_t attr_mask;
	uint32_t max_wr;
	uint32_t srq_limit;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_modify_srq_req, 16);

/** QUERY_SRQ response. */
struct uroce_shm_msg_query_srq_resp {
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_srq_resp, 16);

/** CREATE_AH request. */
struct uroce_shm_msg_create_ah_req {
	uint32_t pd_handle;
	uint32_t reserved;
	struct uroce_shm_ah_attr attr;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_create_ah_req, 40);

/** QUERY_DEVICE response (ibv_device_attr subset). */
struct uroce_shm_msg_query_device_resp {
	uint64_t node_guid;
	uint64_t sys_image_guid;
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	uint32_t max_qp;
	uint32_t max_qp_wr;
	uint32_t device_cap_flags;
	uint32_t max_sge;
	uint32_t max_cq;
	uint32_t max_cqe;
	uint32_t max_mr;
	uint32_t max_pd;
	uint32_t max_qp_rd_atom;
	uint32_t max_qp_init_rd_atom;
	uint32_t max_srq;
	uint32_t max_srq_wr;
	uint32_t max_srq_sge;
	uint32_t max_ah;
	uint32_t max_inline_data;
	uint8_t atomic_cap;
	uint8_t phys_port_cnt;
	uint16_t max_pkeys;
	uint32_t reserved;
};
UROCE_SHM_OFF(struct uroce_shm_msg_query_device_resp, vendor_id, 32);
UROCE_SHM_OFF(struct uroce_shm_msg_query_device_resp, atomic_cap, 104);
UROCE_SHM_SIZE(struct uroce_shm_msg_query_device_resp, 112);

/** QUERY_PORT request. */
struct uroce_shm_msg_query_port_req {
	uint8_t port_num;
	uint8_t reserved[7];
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_port_req, 8);

/** QUERY_PORT response (ibv_port_attr subset). */
struct uroce_shm_msg_query_port_resp {
	uint32_t state;
	uint32_t max_mtu;
	uint32_t active_mtu;
	uint32_t gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint16_t pkey_tbl_len;
	uint8_t active_speed;
	uint8_t active_width;
	uint8_t phys_state;
	uint8_t link_layer;
	uint16_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_port_resp, 32);

/** QUERY_GID request. */
struct uroce_shm_msg_query_gid_req {
	uint8_t port_num;
	uint8_t reserved[3];
	uint32_t index;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_gid_req, 8);

/** QUERY_GID response. */
struct uroce_shm_msg_query_gid_resp {
	uint8_t gid[16];
	uint32_t gid_type;  /**< 0: IB/RoCEv1, 1: RoCEv2 (as ibv_gid_type) */
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_gid_resp, 24);

/**
 * ASYNC_EVENT (daemon to client), header seq 0, status 0. Sent unprompted
 * since ABI 1.1 when the engine reports an event on one of the client's
 * objects (QP fatal, SQ drained, CQ overrun, SRQ limit reached, last WQE
 * reached). The daemon never blocks on it: when the client's socket is more
 * than half full the event is dropped and counted (doc/shm-abi.md).
 */
struct uroce_shm_msg_async_event {
	uint32_t event_type; /**< enum uroce_async_event_type (ibv_event_type value) */
	uint32_t handle;     /**< QP, CQ or SRQ handle, or UROCE_SHM_HANDLE_NONE */
	uint64_t reserved;   /**< 0 */
};
UROCE_SHM_OFF(struct uroce_shm_msg_async_event, handle, 4);
UROCE_SHM_SIZE(struct uroce_shm_msg_async_event, 16);

/*
 * Introspection (ABI 1.1): LIST_SESSIONS, LIST_QPS and QUERY_COUNTERS are
 * read-only and served to any session that passed HELLO. A client whose uid
 * is 0 or the daemon's own uid sees every session and QP; any other client
 * sees only those of its own uid (a QPN or counter of a QP it may not see is
 * answered -ENOENT, exactly as a QPN that does not exist).
 *
 * Paging: a reply carries a fixed number of entries (a message is at most
 * UROCE_SHM_MSG_MAX bytes). Entries come in ascending key order (client id,
 * QPN, counter index), starting at the request's start key. When more remain,
 * the reply sets UROCE_SHM_LIST_F_MORE and next, the start key of the next
 * request. Keys, not positions, so objects created or destroyed between two
 * requests never shift the rest of the list: nothing that lives through the
 * whole walk is skipped or listed twice. Each page is read when its request is
 * answered; the pages of one walk are not a single snapshot.
 */

/** List reply flag: entries remain; ask again with start = next. */
#define UROCE_SHM_LIST_F_MORE (1u << 0)

/** LIST_SESSIONS and LIST_QPS request. */
struct uroce_shm_msg_list_req {
	uint32_t start; /**< first key: client id (LIST_SESSIONS) or QPN (LIST_QPS) */
	uint32_t flags; /**< must be 0 */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_list_req, 8);

/** Paging words at the start of every introspection reply. */
struct uroce_shm_list_page {
	uint16_t count; /**< entries used in this reply */
	uint16_t flags; /**< UROCE_SHM_LIST_F_MORE */
	uint32_t next;  /**< start key of the next request, if UROCE_SHM_LIST_F_MORE */
};
UROCE_SHM_SIZE(struct uroce_shm_list_page, 8);

/** Session flag: the session that sent the request. */
#define UROCE_SHM_SESSION_F_SELF (1u << 0)
/** Session flag: the client completed HELLO. */
#define UROCE_SHM_SESSION_F_HELLO (1u << 1)

/** One client session (LIST_SESSIONS). Object counts are what it holds now. */
struct uroce_shm_session_info {
	uint32_t client_id; /**< HELLO's client_id */
	int32_t pid;        /**< SO_PEERCRED at connect, -1 if unknown */
	uint32_t uid;
	uint32_t flags;     /**< UROCE_SHM_SESSION_F_* */
	uint32_t segments;
	uint32_t pds;
	uint32_t mrs;
	uint32_t cqs;
	uint32_t qps;
	uint32_t ahs;
	uint32_t srqs;
	uint32_t reserved;
};
UROCE_SHM_OFF(struct uroce_shm_session_info, segments, 16);
UROCE_SHM_OFF(struct uroce_shm_session_info, srqs, 40);
UROCE_SHM_SIZE(struct uroce_shm_session_info, 48);

/** Sessions per LIST_SESSIONS reply. */
#define UROCE_SHM_LIST_SESSIONS_MAX 8

/** LIST_SESSIONS response. */
struct uroce_shm_msg_list_sessions_resp {
	struct uroce_shm_list_page page;
	struct uroce_shm_session_info s[UROCE_SHM_LIST_SESSIONS_MAX];
};
UROCE_SHM_SIZE(struct uroce_shm_msg_list_sessions_resp, 8 + 48 * 8);

/** QP flag: a shared ring of the QP was found corrupt; the daemon moved it to ERR. */
#define UROCE_SHM_QP_F_RING_FAILED (1u << 0)

/** One QP (LIST_QPS). */
struct uroce_shm_qp_info {
	uint32_t qp_num;
	uint32_t client_id;   /**< owner session */
	int32_t pid;          /**< owner's pid, -1 if unknown */
	uint8_t qp_type;      /**< enum uroce_qp_type */
	uint8_t qp_state;     /**< enum uroce_qp_state */
	uint8_t path_mtu;     /**< IBA MTU enum 1 (256) .. 5 (4096), as the engine holds it */
	uint8_t flags;        /**< UROCE_SHM_QP_F_* */
	uint32_t sq_psn;      /**< next PSN the requester sends */
	uint32_t rq_psn;      /**< PSN the responder expects */
	uint32_t dest_qp_num; /**< RC/UC remote QPN */
	uint32_t max_send_wr; /**< ring sizes */
	uint32_t max_recv_wr;
	/** Send WQEs the client posted that the engine has not taken yet (still in
	 * the shared ring, or copied out and waiting for engine room). */
	uint32_t sq_queued;
	uint32_t rq_queued;   /**< the same for receive WQEs */
	uint8_t dgid[16];     /**< RC/UC remote GID */
	uint32_t worker;      /**< the worker that owns it (1.2; was reserved, 0) */
};
UROCE_SHM_OFF(struct uroce_shm_qp_info, qp_type, 12);
UROCE_SHM_OFF(struct uroce_shm_qp_info, dgid, 44);
UROCE_SHM_SIZE(struct uroce_shm_qp_info, 64);

/** QPs per LIST_QPS reply. */
#define UROCE_SHM_LIST_QPS_MAX 7

/** LIST_QPS response. */
struct uroce_shm_msg_list_qps_resp {
	struct uroce_shm_list_page page;
	struct uroce_shm_qp_info q[UROCE_SHM_LIST_QPS_MAX];
};
UROCE_SHM_SIZE(struct uroce_shm_msg_list_qps_resp, 8 + 64 * 7);

/** QUERY_COUNTERS scope: the daemon and its transport engine as a whole. */
#define UROCE_SHM_COUNTERS_DEVICE 0u
/** QUERY_COUNTERS scope: one QP's transport counters. */
#define UROCE_SHM_COUNTERS_QP 1u

/** Counter group: the daemon's own (control messages, sessions, rings). */
#define UROCE_SHM_COUNTER_G_DAEMON 0u
/** Counter group: transport engine (names from lib/transport/counters.def). */
#define UROCE_SHM_COUNTER_G_TRANSPORT 1u
/**
 * Counter group (QP scope, after the transport group): the QP's congestion
 * control, values rather than counters: its DCQCN state (rp_current_rate_kbps,
 * ...) and its parameters (lib/transport/cc_params.def). ABI 1.1 clients show
 * an unknown group under a name of their own.
 */
#define UROCE_SHM_COUNTER_G_CC 2u

/** Longest counter name, NUL included. */
#define UROCE_SHM_COUNTER_NAME_LEN 32

/** QUERY_COUNTERS request. */
struct uroce_shm_msg_query_counters_req {
	uint32_t scope;  /**< UROCE_SHM_COUNTERS_DEVICE or UROCE_SHM_COUNTERS_QP */
	uint32_t qp_num; /**< QP scope: the QPN; device scope: must be 0 */
	uint32_t start;  /**< index of the first counter */
	uint32_t flags;  /**< must be 0 */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_counters_req, 16);

/** One counter: its stable name and value. */
struct uroce_shm_counter {
	char name[UROCE_SHM_COUNTER_NAME_LEN]; /**< NUL-terminated */
	uint64_t value;
	uint8_t group;                         /**< UROCE_SHM_COUNTER_G_* */
	uint8_t reserved[7];
};
UROCE_SHM_OFF(struct uroce_shm_counter, value, 32);
UROCE_SHM_SIZE(struct uroce_shm_counter, 48);

/** Counters per QUERY_COUNTERS reply. */
#define UROCE_SHM_COUNTERS_MAX 9

/** QUERY_COUNTERS response. page.next is the next counter index. */
struct uroce_shm_msg_query_counters_resp {
	struct uroce_shm_list_page page;
	uint32_t total;    /**< counters in this scope */
	uint32_t reserved;
	struct uroce_shm_counter c[UROCE_SHM_COUNTERS_MAX];
};
UROCE_SHM_SIZE(struct uroce_shm_msg_query_counters_resp, 16 + 48 * 9);
/**
 * One worker (LIST_WORKERS, ABI 1.2): what it did since the daemon started.
 * Cycle counts come from the shell that runs the worker (uroced: the TSC);
 * a daemon without one reports tsc_hz 0 and no cycles. Cycles per packet
 * are busy_cycles / (rx_packets + tx_packets), per message busy_cycles / wqes.
 */
struct uroce_shm_worker_info {
	uint32_t worker;
	uint32_t qps;         /**< QPs placed on it */
	uint64_t tsc_hz;
	uint64_t busy_cycles; /**< cycles of rounds that found work */
	uint64_t idle_cycles; /**< cycles of rounds that found none (spinning or asleep) */
	uint64_t loops;
	uint64_t rx_packets;  /**< frames its RX queues received */
	uint64_t tx_packets;  /**< frames its TX queues sent */
	uint64_t handoff_in;  /**< frames other workers handed it (their QP's owner) */
	uint64_t handoff_out; /**< frames it handed to another worker */
	uint64_t wqes;        /**< send and receive WQEs taken from client rings */
	uint64_t cqes;        /**< CQEs written to client rings */
	uint64_t roce_rx;     /**< packets its engine received */
	uint64_t roce_tx;     /**< packets its engine sent */
	uint64_t sleeps;      /**< idle back-offs */
};
UROCE_SHM_OFF(struct uroce_shm_worker_info, tsc_hz, 8);
UROCE_SHM_SIZE(struct uroce_shm_worker_info, 112);

/** Workers per LIST_WORKERS reply. */
#define UROCE_SHM_LIST_WORKERS_MAX 3

/** LIST_WORKERS response (request: struct uroce_shm_msg_list_req, start = worker). */
struct uroce_shm_msg_list_workers_resp {
	struct uroce_shm_list_page page;
	struct uroce_shm_worker_info w[UROCE_SHM_LIST_WORKERS_MAX];
};
UROCE_SHM_SIZE(struct uroce_shm_msg_list_workers_resp, 8 + 112 * 3);

/*
 * The lcore load generator (ABI 1.3). A generator is an object of the
 * session that created it (it goes when the session does): N RC QPs on one
 * worker of the daemon, with a CQ whose completions the worker takes itself,
 * and memory of the daemon's own registered as one MR. An initiator posts
 * work requests into its QPs on its worker; a target answers them, with its
 * memory holding the uroce-lg-1 pattern. uroce-ctl gen creates a target on
 * one daemon and an initiator on the other, exchanges QPNs and PSNs
 * (GEN_QPS, GEN_CONNECT), starts the initiator and reads both
 * (GEN_STATS). Sizes, mixes and the checks: doc/loadgen.md.
 */

/** GEN_CREATE role: posts the work requests. */
#define UROCE_SHM_GEN_INITIATOR 1u
/** GEN_CREATE role: answers them (memory, receives). */
#define UROCE_SHM_GEN_TARGET 2u

/** GEN_CREATE flag: the mix has RDMA READs (initiator: landing memory). */
#define UROCE_SHM_GEN_F_READ (1u << 0)
/** GEN_CREATE flag: the mix has SENDs (target: posted receives). */
#define UROCE_SHM_GEN_F_SEND (1u << 1)
/** GEN_CREATE flag: the mix has atomics (initiator: result memory). */
#define UROCE_SHM_GEN_F_ATOMIC (1u << 2)
/** GEN_CREATE and GEN_START flag: check READ data, atomic results, SEND payloads. */
#define UROCE_SHM_GEN_F_VERIFY (1u << 3)
#define UROCE_SHM_GEN_F_ALL (UROCE_SHM_GEN_F_READ | UROCE_SHM_GEN_F_SEND | \
			     UROCE_SHM_GEN_F_ATOMIC | UROCE_SHM_GEN_F_VERIFY)

/** Most QPs of one generator. */
#define UROCE_SHM_GEN_MAX_QPS 1024u
/** Most bytes of memory one generator may take in the daemon. */
#define UROCE_SHM_GEN_MAX_MEM (512ull << 20)

/** GEN_CREATE request. */
struct uroce_shm_msg_gen_create_req {
	uint32_t role;       /**< UROCE_SHM_GEN_INITIATOR or UROCE_SHM_GEN_TARGET */
	uint32_t n_qps;      /**< 1..UROCE_SHM_GEN_MAX_QPS */
	uint32_t worker;     /**< the worker that runs it, < the daemon's workers */
	uint32_t gid_index;  /**< source GID of its QPs (port 1) */
	uint32_t depth;      /**< initiator: most WRs outstanding per QP; target: receives
				  kept posted per QP (with F_SEND); 1..UROCE_MAX_QP_WR */
	uint32_t flags;      /**< UROCE_SHM_GEN_F_* */
	uint32_t max_size;   /**< largest WRITE, READ or SEND, 1..16 MiB */
	uint32_t reserved;   /**< 0 */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_create_req, 32);

/** GEN_CREATE response. */
struct uroce_shm_msg_gen_create_resp {
	uint32_t gen_id;     /**< the generator's handle within the session */
	uint32_t n_qps;
	uint32_t worker;
	uint32_t win_len;    /**< bytes of each QP's window (uroce_lg_gen_win_len()) */
	uint8_t gid[16];     /**< the QPs' source GID */
	uint32_t rkey;       /**< target: R_Key of its memory; initiator: 0 */
	uint32_t atomic_off; /**< target: offset of QP 0's atomic word from va */
	uint64_t va;         /**< target: address of QP 0's window */
	uint64_t mem_len;    /**< bytes of the generator's memory in the daemon */
	uint32_t active_mtu; /**< the port's active MTU (enum uroce_mtu) */
	uint32_t reserved;
};
UROCE_SHM_OFF(struct uroce_shm_msg_gen_create_resp, gid, 16);
UROCE_SHM_OFF(struct uroce_shm_msg_gen_create_resp, va, 40);
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_create_resp, 64);

/** One QP of a generator: its number and its first send PSN. */
struct uroce_shm_gen_qp {
	uint32_t qpn;
	uint32_t psn;
};
UROCE_SHM_SIZE(struct uroce_shm_gen_qp, 8);

/** QPs per GEN_QPS reply and per GEN_CONNECT request. */
#define UROCE_SHM_GEN_QPS_MAX 48

/** GEN_QPS request: the QPs of a generator from index start (paged). */
struct uroce_shm_msg_gen_qps_req {
	uint32_t gen_id;
	uint32_t start;      /**< QP index */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_qps_req, 8);

/** GEN_QPS response; page.next is the next QP index. */
struct uroce_shm_msg_gen_qps_resp {
	struct uroce_shm_list_page page;
	struct uroce_shm_gen_qp q[UROCE_SHM_GEN_QPS_MAX];
};
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_qps_resp, 8 + 8 * 48);

/**
 * GEN_CONNECT request: QPs first .. first + count - 1 of the generator are
 * joined to the peer's QPs of the same indexes (qpn, and psn: the peer's
 * first send PSN, our expected receive PSN) and brought to RTS. The peer's
 * memory (rkey, va, win_len, atomic_off) is an initiator's to aim at; a
 * target ignores it (zero). timeout is the local ACK timeout of the QPs
 * (IBA 9.7.6.1.3: 4.096 us * 2^timeout; 0 means 14, about 67 ms); with 7
 * retries a silent peer fails the QPs after about 8 x that.
 */
struct uroce_shm_msg_gen_connect_req {
	uint32_t gen_id;
	uint32_t first;
	uint32_t count;          /**< 1..UROCE_SHM_GEN_QPS_MAX */
	uint32_t path_mtu;       /**< enum uroce_mtu, at most the port's active MTU */
	uint8_t peer_gid[16];
	uint32_t peer_rkey;
	uint32_t peer_win_len;
	uint64_t peer_va;
	uint32_t peer_atomic_off;
	uint32_t timeout;        /**< local ACK timeout exponent, 1..31; 0: 14 */
	struct uroce_shm_gen_qp q[UROCE_SHM_GEN_QPS_MAX];
};
UROCE_SHM_OFF(struct uroce_shm_msg_gen_connect_req, peer_va, 40);
UROCE_SHM_OFF(struct uroce_shm_msg_gen_connect_req, q, 56);
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_connect_req, 56 + 8 * 48);

/** GEN_CONNECT response. */
struct uroce_shm_msg_gen_connect_resp {
	uint32_t connected;      /**< QPs of the generator connected so far */
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_connect_resp, 8);

/** One entry of a mix (struct uroce_lg_mix_entry of lib/loadgen). */
struct uroce_shm_gen_mix {
	uint32_t op;             /**< enum uroce_lg_op */
	uint32_t size;
	uint32_t weight;
};
UROCE_SHM_SIZE(struct uroce_shm_gen_mix, 12);

/** Entries of a GEN_START mix. */
#define UROCE_SHM_GEN_MIX_MAX 16

/** GEN_START request: an initiator whose QPs are all connected starts. */
struct uroce_shm_msg_gen_start_req {
	uint32_t gen_id;
	uint32_t n_mix;          /**< 1..UROCE_SHM_GEN_MIX_MAX */
	uint32_t window;         /**< WRs outstanding per QP, 1..the created depth */
	uint32_t flags;          /**< UROCE_SHM_GEN_F_VERIFY (if created with it) */
	uint64_t rate;           /**< messages per second over all QPs; 0: no limit */
	uint64_t duration_us;    /**< stop posting after this; 0: no limit */
	uint64_t count;          /**< stop posting after this many messages; 0: no limit */
	uint64_t seed;           /**< order of the mix (uroce_lg_mix_table()) */
	struct uroce_shm_gen_mix mix[UROCE_SHM_GEN_MIX_MAX];
};
UROCE_SHM_OFF(struct uroce_shm_msg_gen_start_req, rate, 16);
UROCE_SHM_OFF(struct uroce_shm_msg_gen_start_req, mix, 48);
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_start_req, 48 + 12 * 16);

/** A generator's state (GEN_STATS). */
enum uroce_shm_gen_state {
	UROCE_SHM_GEN_CREATED = 0,   /**< QPs exist, not all connected */
	UROCE_SHM_GEN_READY = 1,     /**< every QP connected (a target: answering) */
	UROCE_SHM_GEN_RUNNING = 2,   /**< posting */
	UROCE_SHM_GEN_DRAINING = 3,  /**< done posting, WRs still outstanding */
	UROCE_SHM_GEN_DONE = 4,      /**< every WR completed, none in error */
	UROCE_SHM_GEN_FAILED = 5,    /**< a completion in error; every WR completed or flushed */
};

/** GEN_STATS request flag: a target checks its windows and atomic words now. */
#define UROCE_SHM_GEN_STATS_F_SCAN (1u << 0)

/** GEN_STATS request. */
struct uroce_shm_msg_gen_stats_req {
	uint32_t gen_id;
	uint32_t flags;          /**< UROCE_SHM_GEN_STATS_F_* */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_stats_req, 8);

/** GEN_STATS response: what the generator did since GEN_START (or creation). */
struct uroce_shm_msg_gen_stats_resp {
	uint32_t state;          /**< enum uroce_shm_gen_state */
	uint32_t role;
	uint32_t worker;
	uint32_t n_qps;
	uint32_t err_status;     /**< first error completion: enum uroce_wc_status */
	uint32_t err_qpn;        /**< ... its QP */
	uint32_t err_op;         /**< ... its operation (enum uroce_lg_op) */
	uint32_t reserved;
	uint64_t elapsed_us;     /**< since GEN_START, until every WR completed */
	uint64_t posted;         /**< WRs posted (target: receives posted) */
	uint64_t completed;      /**< completions in success */
	uint64_t errors;         /**< completions in error (flushes included) */
	uint64_t bytes;          /**< bytes of the successful completions */
	uint64_t verify_bad;     /**< READ data, atomic results or SEND payloads that failed */
	uint64_t order_bad;      /**< completions out of posting order (RC forbids it) */
	uint64_t outstanding;    /**< WRs posted, not completed */
	uint64_t op_msgs[5];     /**< successful completions per enum uroce_lg_op */
	uint64_t recv;           /**< target: SENDs received */
	uint64_t recv_bytes;
	uint64_t scan_bytes;     /**< target, F_SCAN: window bytes checked */
	uint64_t scan_bad;       /**< ... bytes that did not hold the pattern */
	uint64_t atomic_digest;  /**< uroce_lg_atomic_digest() of the atomic words (an
				      initiator: of its model, once every atomic completed) */
	uint64_t retransmits;    /**< the transport counters of its QPs, summed */
	uint64_t tx_packets;
	uint64_t rx_packets;
};
UROCE_SHM_OFF(struct uroce_shm_msg_gen_stats_resp, elapsed_us, 32);
UROCE_SHM_OFF(struct uroce_shm_msg_gen_stats_resp, op_msgs, 96);
UROCE_SHM_SIZE(struct uroce_shm_msg_gen_stats_resp, 200);

UROCE_SHM_STATIC_ASSERT(sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_gen_connect_req) <= UROCE_SHM_MSG_MAX &&
			sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_gen_qps_resp) <= UROCE_SHM_MSG_MAX &&
			sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_gen_start_req) <= UROCE_SHM_MSG_MAX,
			"generator messages fit one message");

UROCE_SHM_STATIC_ASSERT(sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_list_workers_resp) <= UROCE_SHM_MSG_MAX &&
			sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_list_qps_resp) <= UROCE_SHM_MSG_MAX &&
			sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_list_sessions_resp) <= UROCE_SHM_MSG_MAX &&
			sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_query_counters_resp) <= UROCE_SHM_MSG_MAX,
			"introspection replies fit one message");

/*
 * ---------------------------------------------------------------------------
 * rdma_cm (ABI 1.4)
 *
 * The daemon's connection manager (IB CM on QP1 and the rdma_cm layer above
 * it, doc/rdmacm.md) for drivers/rdmacm. A client opens event channels
 * (CM_CHANNEL_OPEN passes one end of a SOCK_SEQPACKET socketpair; the daemon
 * writes CM_EVENT messages into it), creates ids on a channel, and drives
 * them with the requests below; each returns at once, and what follows on
 * the wire comes back as CM_EVENTs (rdma_cm's event numbers). Ids and
 * channels are the session's: another session's handle is -EPERM, a
 * destroyed one -ENOENT; a session that goes away takes its ids down (REJ or
 * DREQ to the peers) and its channels. Sessions below 1.4 get -EOPNOTSUPP.
 * Addresses are GIDs (IPv4 as ::ffff:a.b.c.d), ports host order.
 * ---------------------------------------------------------------------------
 */

/** Most event channels of one session, and ids of one session. */
#define UROCE_SHM_CM_MAX_CHANNELS 64u
#define UROCE_SHM_CM_MAX_IDS 4096u
/** Events a channel may hold unread in the daemon beyond its socket's buffer;
 * more and the channel fails (shut down: its reader sees end of file). */
#define UROCE_SHM_CM_CHANNEL_BACKLOG 1024u

/** An IP endpoint. */
struct uroce_shm_cm_addr {
	uint8_t family;     /**< 4 or 6; 0: none */
	uint8_t reserved;
	uint16_t port;      /**< host order */
	uint8_t ip[16];     /**< IPv4 as ::ffff:a.b.c.d */
};
UROCE_SHM_SIZE(struct uroce_shm_cm_addr, 20);

/** An id's addresses and path (librdmacm's id->route). */
struct uroce_shm_cm_route {
	struct uroce_shm_cm_addr src;
	struct uroce_shm_cm_addr dst;
	uint8_t sgid[16];
	uint8_t dgid[16];
	uint8_t flags;      /**< UROCE_SHM_CM_ROUTE_F_* */
	uint8_t sgid_index;
	uint16_t pkey;
	uint8_t mtu;        /**< enum uroce_mtu */
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t packet_life_time;
	uint32_t flow_label;
	uint8_t sl;
	uint8_t rate;
	uint16_t reserved;
};
UROCE_SHM_OFF(struct uroce_shm_cm_route, sgid, 40);
UROCE_SHM_OFF(struct uroce_shm_cm_route, flow_label, 80);
UROCE_SHM_SIZE(struct uroce_shm_cm_route, 88);

#define UROCE_SHM_CM_ROUTE_F_BOUND (1u << 0)    /**< src is set */
#define UROCE_SHM_CM_ROUTE_F_RESOLVED (1u << 1) /**< dst, sgid, dgid are set */
#define UROCE_SHM_CM_ROUTE_F_PATH (1u << 2)     /**< the path fields are set */

/** Private data bytes a CM message of the ABI carries at most (a REP's). */
#define UROCE_SHM_CM_PDATA_MAX 196u

/** Connection parameters (rdma_conn_param; for UD only qp_num and private data). */
struct uroce_shm_cm_conn_param {
	uint32_t qp_num;
	uint8_t srq;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t private_data_len;
	uint8_t reserved;
	uint8_t private_data[UROCE_SHM_CM_PDATA_MAX];
};
UROCE_SHM_OFF(struct uroce_shm_cm_conn_param, private_data, 12);
UROCE_SHM_SIZE(struct uroce_shm_cm_conn_param, 208);

/** CM_CHANNEL_OPEN request: its descriptor is the daemon's end of the channel. */
struct uroce_shm_msg_cm_channel_open_req {
	uint32_t flags;     /**< 0 */
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_channel_open_req, 8);

/** CM_CREATE_ID request (the response is a handle body: the id). */
struct uroce_shm_msg_cm_create_id_req {
	uint32_t channel;
	uint16_t ps;        /**< RDMA_PS_TCP, _UDP or _IB */
	uint8_t qp_type;    /**< IBV_QPT_RC, _UC or _UD */
	uint8_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_create_id_req, 8);

/** CM_MIGRATE_ID request: the id's events go to another channel of the session. */
struct uroce_shm_msg_cm_migrate_req {
	uint32_t id;
	uint32_t channel;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_migrate_req, 8);

/** CM_SET_OPTION request (RDMA_OPTION_ID level: TOS 0, REUSEADDR 1, AFONLY 2, ACK_TIMEOUT 3). */
struct uroce_shm_msg_cm_option_req {
	uint32_t id;
	uint32_t option;
	uint32_t value;
	uint32_t reserved;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_option_req, 16);

/** CM_BIND, CM_RESOLVE_ADDR, CM_RESOLVE_ROUTE and CM_LISTEN request. */
struct uroce_shm_msg_cm_addr_req {
	uint32_t id;
	uint32_t arg;       /**< RESOLVE_*: timeout in ms (unused: resolution is local);
				 LISTEN: the backlog; BIND: 0 */
	struct uroce_shm_cm_addr src; /**< BIND: the address; RESOLVE_ADDR: the source or
					   family 0 */
	struct uroce_shm_cm_addr dst; /**< RESOLVE_ADDR: the destination */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_addr_req, 48);

/** The response of CM_BIND, CM_RESOLVE_*, CM_LISTEN and CM_QUERY: the id's route. */
struct uroce_shm_msg_cm_route_resp {
	struct uroce_shm_cm_route route;
	uint64_t node_guid; /**< the device's (which librdmacm matches ids to devices by) */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_route_resp, 96);

/** CM_CONNECT and CM_ACCEPT request. */
struct uroce_shm_msg_cm_conn_req {
	uint32_t id;
	uint32_t reserved;
	struct uroce_shm_cm_conn_param param;
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_conn_req, 216);

/** CM_REJECT request. */
struct uroce_shm_msg_cm_reject_req {
	uint32_t id;
	uint16_t reason;    /**< REJ reason; 0: Consumer Defined (28) */
	uint8_t private_data_len;
	uint8_t reserved;
	uint8_t private_data[UROCE_SHM_CM_PDATA_MAX];
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_reject_req, 8 + 196);

/** CM_NOTIFY request. */
struct uroce_shm_msg_cm_notify_req {
	uint32_t id;
	uint32_t event;     /**< ibv_event_type: 4 (communication established) acts */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_notify_req, 8);

/** CM_INIT_QP_ATTR request. */
struct uroce_shm_msg_cm_qp_attr_req {
	uint32_t id;
	uint32_t qp_state;  /**< enum uroce_qp_state: INIT, RTR or RTS */
};
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_qp_attr_req, 8);

/** CM_INIT_QP_ATTR response: rdma_init_qp_attr()'s attributes and mask. */
struct uroce_shm_msg_cm_qp_attr_resp {
	uint32_t mask;      /**< enum uroce_qp_attr_mask (ibv_qp_attr_mask values) */
	uint32_t qp_state;
	uint32_t qp_access_flags;
	uint32_t qkey;
	uint32_t dest_qp_num;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t flow_label;
	uint8_t dgid[16];
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t path_mtu;
	uint8_t max_dest_rd_atomic;
	uint8_t max_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t sl;
	uint8_t reserved[2];
};
UROCE_SHM_OFF(struct uroce_shm_msg_cm_qp_attr_resp, dgid, 32);
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_qp_attr_resp, 64);

/** Flags of a CM_EVENT. */
#define UROCE_SHM_CM_EV_F_UD (1u << 0)        /**< param is rdma_ud_param, not conn */
#define UROCE_SHM_CM_EV_F_AH (1u << 1)        /**< ud: the address vector is valid */

/**
 * CM_EVENT (daemon to client, on the id's channel, seq 0): one rdma_cm event
 * with everything librdmacm reports with it. For CONNECT_REQUEST, id is a new
 * id of the session on the listener's channel and listen_id the listener.
 */
struct uroce_shm_msg_cm_event {
	uint32_t id;
	uint32_t listen_id;   /**< CONNECT_REQUEST, else UROCE_SHM_HANDLE_NONE */
	int32_t event;        /**< enum rdma_cm_event_type */
	int32_t status;       /**< 0, a REJ reason or SIDR status, or -errno */
	uint32_t flags;       /**< UROCE_SHM_CM_EV_F_* */
	uint32_t qkey;        /**< ud */
	uint8_t ah_dgid[16];  /**< ud, with F_AH */
	uint32_t ah_flow_label;
	uint8_t ah_sgid_index;
	uint8_t ah_hop_limit;
	uint8_t ah_traffic_class;
	uint8_t reserved;
	struct uroce_shm_cm_route route; /**< the id's, as of this event */
	struct uroce_shm_cm_conn_param param;
};
UROCE_SHM_OFF(struct uroce_shm_msg_cm_event, ah_dgid, 24);
UROCE_SHM_OFF(struct uroce_shm_msg_cm_event, route, 48);
UROCE_SHM_OFF(struct uroce_shm_msg_cm_event, param, 136);
UROCE_SHM_SIZE(struct uroce_shm_msg_cm_event, 344);

UROCE_SHM_STATIC_ASSERT(sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_cm_event) <= UROCE_SHM_MSG_MAX &&
			sizeof(struct uroce_shm_msg_hdr) +
			sizeof(struct uroce_shm_msg_cm_conn_req) <= UROCE_SHM_MSG_MAX,
			"rdma_cm messages fit one message");

/** Whether a message carries a file descriptor (SCM_RIGHTS). */
enum uroce_shm_msg_fd_rule {
	UROCE_SHM_FD_NONE = 0,     /**< never */
	UROCE_SHM_FD_REQUIRED = 1, /**< always (on responses: when status is 0) */
	UROCE_SHM_FD_OPTIONAL = 2, /**< may */
};

/**
 * Body length of a message type in one direction.
 *
 * @return bytes (0 for an empty body), -EOPNOTSUPP (unknown type), or
 *   -EBADMSG (the type does not exist in that direction).
 */
int uroce_shm_msg_body_len(uint16_t type, bool from_daemon);

/** File-descriptor rule of a type in one direction (UROCE_SHM_FD_NONE if unknown). */
enum uroce_shm_msg_fd_rule uroce_shm_msg_fd_rule(uint16_t type, bool from_daemon);

/** Name of a message type ("HELLO"), or "UNKNOWN". */
const char *uroce_shm_msg_type_name(uint16_t type);

/**
 * Write a header and a zeroed body for a message.
 *
 * @return total length, or -EOPNOTSUPP / -EBADMSG as uroce_shm_msg_body_len(),
 *   -ENOSPC (cap too small), -EINVAL (non-zero status on a request).
 */
int uroce_shm_msg_init(void *buf, size_t cap, uint16_t type, uint32_t seq, bool from_daemon,
		       int32_t status);

/**
 * Validate a received message before any field of its body is used. Checks, in
 * this order: header present, magic, ABI major, reserved header bits, direction
 * flag, type, length, status, file descriptor presence. Body fields (handles,
 * sizes, reserved words) are the daemon's to check against its own records.
 *
 * @param buf  the message (any alignment)
 * @param len  bytes received
 * @param from_daemon  true where the client receives, false where the daemon does
 * @param has_fd  a descriptor came with it
 * @return
 *   0 if valid;
 *   -EMSGSIZE: shorter than a header, or length field or size wrong for the type;
 *   -EPROTO: bad magic, reserved header bits set, status set on a request or
 *   positive on a response;
 *   -EPROTONOSUPPORT: ABI major differs (read the peer's version with
 *   uroce_shm_msg_peer_version());
 *   -EBADMSG: direction flag wrong, or type not valid in that direction;
 *   -EOPNOTSUPP: unknown type;
 *   -EBADF: descriptor missing or unexpected.
 */
int uroce_shm_msg_validate(const void *buf, size_t len, bool from_daemon, bool has_fd);

/**
 * Read the peer's ABI version from any message's frozen prefix (header
 * abi_major, and the minor from a HELLO body), even one that failed validation
 * with -EPROTONOSUPPORT.
 *
 * @return 0, -EMSGSIZE (too short) or -EPROTO (bad magic). minor is set to
 *   0xffff when the message is not a HELLO.
 */
int uroce_shm_msg_peer_version(const void *buf, size_t len, uint16_t *major, uint16_t *minor);

/**
 * Send one message with at most one descriptor (SCM_RIGHTS), MSG_NOSIGNAL.
 *
 * @param fd  descriptor to pass, or -1
 * @return bytes sent, or -EINVAL (len 0 or > UROCE_SHM_MSG_MAX), -EMSGSIZE
 *   (partial send), or the -errno of sendmsg (-EAGAIN, -EPIPE, ...).
 */
ssize_t uroce_shm_sock_send(int sock, const void *buf, size_t len, int fd);

/**
 * Receive one message and at most one descriptor (close-on-exec).
 *
 * @param fd  set to the received descriptor or -1
 * @return bytes received (0 at end of stream), or -EMSGSIZE (message longer
 *   than cap; truncated), -ENOBUFS (control data truncated), -EBADMSG (more
 *   than one descriptor, or an unexpected control message), or the -errno of
 *   recvmsg. On every error no descriptor is left open.
 */
ssize_t uroce_shm_sock_recv(int sock, void *buf, size_t cap, int *fd);

/**
 * The peer's credentials (SO_PEERCRED), which is how the daemon learns a
 * client's pid and uid; the HELLO message does not carry them.
 *
 * @return 0, or the -errno of getsockopt.
 */
int uroce_shm_sock_peercred(int sock, pid_t *pid, uid_t *uid, gid_t *gid);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_SHM_H */
