/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * The data path of the shared-memory ABI: work queue and completion queue
 * entries, the single-producer/single-consumer rings that carry them, the
 * doorbell blocks that tell a daemon worker in O(1) which QPs have work, the
 * CQ arming word, and the memfd/hugetlbfs segments that hold it all. A client
 * writes WQEs and reads CQEs here without a system call; the daemon copies
 * every entry out before it checks it (doc/shm-abi.md).
 */

#ifndef UROCE_SHM_DATAPATH_H
#define UROCE_SHM_DATAPATH_H


#include "uroce_shm_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * ---------------------------------------------------------------------------
 * Verbs vocabulary with fixed numeric values (the same numbers as libibverbs,
 * so that drivers/verbs maps them one to one).
 * ---------------------------------------------------------------------------
 */

/* The send flags are enum uroce_send_flags (uroce_verbs_defs.h); the daemon
 * rejects any other bit (UROCE_SEND_FLAGS_ALL, lib/common/uroce_wr.h). */

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
	 * carries it big-endian); SEND_WITH_INV, LOCAL_INV: the rkey to
	 * invalidate. */
	uint32_t imm_data;
	uint32_t inline_len;  /**< bytes of inline_data, if UROCE_SEND_INLINE */
	/** ABI 1.7: an XRC_SEND QP's WQE names the remote XRC SRQ (24 bits,
	 * ibv_send_wr.qp_type.xrc.remote_srqn); must be 0 on other QPs (was
	 * reserved0, which had to be 0). */
	uint32_t xrc_remote_srqn;
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
		/** BIND_MW (ABI 1.5): bind the window named by @c rkey (its new
		 * key: the window's index, a new variant byte) to
		 * [addr, addr + length) of the MR of @c mr_lkey; type 1 with
		 * length 0 unbinds. No SGEs. */
		struct {
			uint64_t addr;
			uint64_t length;
			uint32_t mr_lkey;
			uint32_t access;  /**< UROCE_ACCESS_REMOTE_* (LOCAL_WRITE ignored) */
			uint32_t rkey;
			uint32_t reserved;
		} bind;
		/** ATOMIC_WRITE (ABI 1.6, IBA 1.5 A19): the 8 bytes stored at
		 * remote_addr (8-aligned) in one piece, as they lie in memory.
		 * No SGEs, not inline. */
		struct {
			uint64_t remote_addr;
			uint64_t data;
			uint32_t rkey;
			uint32_t reserved;
		} atomic_write;
		/** FLUSH (ABI 1.6, IBA 1.5 A19): placement @c type (bits of
		 * GLOBAL 1, PERSISTENT 2) of [remote_addr, + length) at
		 * @c level RANGE 0, or of the whole MR of rkey at level MR 1.
		 * No SGEs, not inline. */
		struct {
			uint64_t remote_addr;
			uint64_t length;
			uint32_t rkey;
			uint8_t type;
			uint8_t level;
			uint16_t reserved;
		} flush;
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
UROCE_SHM_OFF(struct uroce_shm_send_wqe, xrc_remote_srqn, 20);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.rdma.remote_addr, 24);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.rdma.rkey, 32);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.atomic.compare_add, 32);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.atomic.swap, 40);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.atomic.rkey, 48);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.bind.length, 32);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.bind.mr_lkey, 40);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.bind.access, 44);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.bind.rkey, 48);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.atomic_write.data, 32);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.atomic_write.rkey, 40);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.flush.length, 32);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.flush.rkey, 40);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.flush.type, 44);
UROCE_SHM_OFF(struct uroce_shm_send_wqe, wr.flush.level, 45);
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

/** True if a slot is rung or pending (the worker's last look before it sleeps). */
bool uroce_shm_db_pending(const struct uroce_shm_db_reader *rd);

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

/**
 * Daemon side, for a moderated CQ (MODIFY_CQ): the check of
 * uroce_shm_cq_should_signal() without the claim. Marks everything published
 * as checked, as it does, and says whether the client's arm asks for an event
 * for what was just published. The caller claims the event later, when the
 * CQ's moderation lets it, with uroce_shm_cq_should_signal(); the arm stays
 * set until then, so no event is lost, only delayed.
 *
 * @param qualifies  some CQE just published is solicited or unsuccessful
 * @return true if an event is owed.
 */
bool uroce_shm_cq_peek_armed(struct uroce_shm_ring *cq, bool qualifies);

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


#ifdef __cplusplus
}
#endif

#endif /* UROCE_SHM_DATAPATH_H */
