/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Tests for lib/shm/ctrl.c: every message type in both directions is built
 * and validated, then broken in each way the validator knows (length, type,
 * version, magic, direction, reserved bits, status, descriptor), and each
 * breakage gets its own errno.
 */

#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "uroce_shm.h"


static void
get_hdr(const uint8_t *buf, struct uroce_shm_msg_hdr *h)
{
	memcpy(h, buf, sizeof(*h));
}

static void
put_hdr(uint8_t *buf, const struct uroce_shm_msg_hdr *h)
{
	memcpy(buf, h, sizeof(*h));
}

static bool
fd_ok(uint16_t type, bool from_daemon)
{
	return uroce_shm_msg_fd_rule(type, from_daemon) != UROCE_SHM_FD_NONE;
}

Test(ctrl, body_lengths_are_the_structs)
{
	/* Expect: the table matches the structs (a few spot checks), and
	 * every message fits UROCE_SHM_MSG_MAX. */
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_HELLO, false), 40);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_HELLO, true), 32);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_CREATE_QP, false), 48);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_CREATE_QP, true), 56);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_MODIFY_QP, false), 88);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_MODIFY_QP, true), 0);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_QUERY_DEVICE, false), 0);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_QUERY_DEVICE, true), 112);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_ASYNC_EVENT, false), -EBADMSG);
	/* 1.1 introspection: small requests, replies that fill most of a message. */
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_LIST_SESSIONS, false), 8);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_LIST_SESSIONS, true), 392);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_LIST_QPS, false), 8);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_LIST_QPS, true), 456);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_QUERY_COUNTERS, false), 16);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_QUERY_COUNTERS, true), 448);
	cr_expect_eq(uroce_shm_msg_fd_rule(UROCE_SHM_MSG_LIST_QPS, true), UROCE_SHM_FD_NONE);
	cr_expect_str_eq(uroce_shm_msg_type_name(UROCE_SHM_MSG_QUERY_COUNTERS), "QUERY_COUNTERS");
	/* 1.3 load generator: fixed bodies, no descriptors. */
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_GEN_CREATE, false), 32);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_GEN_CREATE, true), 64);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_GEN_QPS, true), 392);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_GEN_CONNECT, false), 440);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_GEN_START, false), 240);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_GEN_START, true), 0);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_GEN_STATS, true), 200);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_GEN_DESTROY, false), 8);
	cr_expect_eq(uroce_shm_msg_fd_rule(UROCE_SHM_MSG_GEN_CREATE, true), UROCE_SHM_FD_NONE);
	cr_expect_str_eq(uroce_shm_msg_type_name(UROCE_SHM_MSG_GEN_STATS), "GEN_STATS");
	/* 1.4 rdma_cm: a channel comes as a descriptor; events only from the daemon. */
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_CM_CHANNEL_OPEN, false), 8);
	cr_expect_eq(uroce_shm_msg_fd_rule(UROCE_SHM_MSG_CM_CHANNEL_OPEN, false),
		     UROCE_SHM_FD_REQUIRED);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_CM_CONNECT, false), 216);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_CM_BIND, true), 96);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_CM_INIT_QP_ATTR, true), 64);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_CM_EVENT, true), 344);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_CM_EVENT, false), -EBADMSG);
	cr_expect_str_eq(uroce_shm_msg_type_name(UROCE_SHM_MSG_CM_QUERY), "CM_QUERY");
	cr_expect_eq(uroce_shm_msg_body_len(0, false), -EOPNOTSUPP);
	cr_expect_eq(uroce_shm_msg_body_len(UROCE_SHM_MSG_TYPE_MAX + 1, true), -EOPNOTSUPP);
	for (uint16_t t = 1; t <= UROCE_SHM_MSG_TYPE_MAX; t++) {
		cr_expect_str_neq(uroce_shm_msg_type_name(t), "UNKNOWN", "type %u", t);
		for (int dir = 0; dir < 2; dir++)
			cr_expect_leq(uroce_shm_msg_body_len(t, dir) + 24, (int)UROCE_SHM_MSG_MAX);
	}
	cr_expect_str_eq(uroce_shm_msg_type_name(999), "UNKNOWN");
	cr_expect_str_eq(uroce_shm_msg_type_name(UROCE_SHM_MSG_REG_MR), "REG_MR");
}

Test(ctrl, every_type_every_direction)
{
	uint8_t buf[UROCE_SHM_MSG_MAX + 16];
	struct uroce_shm_msg_hdr h, good;
	int len, checked = 0;

	for (uint16_t t = 1; t <= UROCE_SHM_MSG_TYPE_MAX; t++) {
		for (int dir = 0; dir < 2; dir++) {
			bool fd = fd_ok(t, dir);

			len = uroce_shm_msg_init(buf, sizeof(buf), t, 42, dir, 0);
			if (uroce_shm_msg_body_len(t, dir) < 0) {
				/* Expect: no such message (ASYNC_EVENT from a
				 * client) cannot be built... */
				cr_expect_eq(len, -EBADMSG, "type %u dir %d", t, dir);
				/* ...and a forged one is refused. */
				len = uroce_shm_msg_init(buf, sizeof(buf), t, 0, !dir, 0);
				cr_assert_gt(len, 0);
				get_hdr(buf, &h);
				h.flags ^= UROCE_SHM_MSG_F_FROM_DAEMON;
				put_hdr(buf, &h);
				cr_expect_eq(uroce_shm_msg_validate(buf, len, dir, false),
					     -EBADMSG);
				continue;
			}
			cr_assert_gt(len, 0, "type %u dir %d: %d", t, dir, len);
			get_hdr(buf, &good);
			cr_expect_eq(good.length, (uint32_t)len);
			cr_expect_eq(good.seq, 42);
			/* Expect: the well-formed message passes. */
			cr_expect_eq(uroce_shm_msg_validate(buf, len, dir, fd), 0,
				     "type %u dir %d", t, dir);

			/* Expect: one byte more, length field agreeing -> EMSGSIZE. */
			h = good;
			h.length = (uint32_t)len + 1;
			put_hdr(buf, &h);
			cr_expect_eq(uroce_shm_msg_validate(buf, len + 1, dir, fd), -EMSGSIZE);
			/* Expect: one byte less (or a header-only message cut
			 * into the header) -> EMSGSIZE. */
			h.length = (uint32_t)len - 1;
			put_hdr(buf, &h);
			cr_expect_eq(uroce_shm_msg_validate(buf, len - 1, dir, fd), -EMSGSIZE);
			/* Expect: length field disagreeing with the bytes received. */
			h.length = (uint32_t)len + 8;
			put_hdr(buf, &h);
			cr_expect_eq(uroce_shm_msg_validate(buf, len, dir, fd), -EMSGSIZE);
			/* Expect: another major -> EPROTONOSUPPORT. */
			h = good;
			h.abi_major = UROCE_SHM_ABI_MAJOR + 1;
			put_hdr(buf, &h);
			cr_expect_eq(uroce_shm_msg_validate(buf, len, dir, fd), -EPROTONOSUPPORT);
			h.abi_major = 0;
			put_hdr(buf, &h);
			cr_expect_eq(uroce_shm_msg_validate(buf, len, dir, fd), -EPROTONOSUPPORT);
			/* Expect: bad magic -> EPROTO. */
			h = good;
			h.magic ^= 1;
			put_hdr(buf, &h);
			cr_expect_eq(uroce_shm_msg_validate(buf, len, dir, fd), -EPROTO);
			/* Expect: reserved header bits -> EPROTO. */
			h = good;
			h.flags |= 0x8000;
			put_hdr(buf, &h);
			cr_expect_eq(uroce_shm_msg_validate(buf, len, dir, fd), -EPROTO);
			h = good;
			h.reserved = 1;
			put_hdr(buf, &h);
			cr_expect_eq(uroce_shm_msg_validate(buf, len, dir, fd), -EPROTO);
			/* Expect: the other direction's flag -> EBADMSG. */
			h = good;
			h.flags ^= UROCE_SHM_MSG_F_FROM_DAEMON;
			put_hdr(buf, &h);
			cr_expect_eq(uroce_shm_msg_validate(buf, len, dir, fd), -EBADMSG);
			/* Expect: a descriptor where none belongs, or none where
			 * one is required -> EBADF. */
			put_hdr(buf, &good);
			switch (uroce_shm_msg_fd_rule(t, dir)) {
			case UROCE_SHM_FD_NONE:
				cr_expect_eq(uroce_shm_msg_validate(buf, len, dir, true), -EBADF);
				break;
			case UROCE_SHM_FD_REQUIRED:
				cr_expect_eq(uroce_shm_msg_validate(buf, len, dir, false), -EBADF);
				break;
			case UROCE_SHM_FD_OPTIONAL:
				cr_expect_eq(uroce_shm_msg_validate(buf, len, dir, false), 0);
				break;
			}
			/* Expect: status on a request -> EPROTO; a positive
			 * status on a response -> EPROTO; a failed response
			 * never carries a descriptor. */
			h = good;
			h.status = dir ? 5 : -EINVAL;
			put_hdr(buf, &h);
			cr_expect_eq(uroce_shm_msg_validate(buf, len, dir, fd), -EPROTO);
			if (dir) {
				h.status = -ENOMEM;
				put_hdr(buf, &h);
				cr_expect_eq(uroce_shm_msg_validate(buf, len, dir, false), 0);
				cr_expect_eq(uroce_shm_msg_validate(buf, len, dir, true), -EBADF);
			}
			checked++;
		}
	}
	/* Every type x 2 directions, minus ASYNC_EVENT and CM_EVENT from a
	 * client: 23 types in ABI 1.0, 26 since 1.1 (introspection), 27 since
	 * 1.2 (LIST_WORKERS), 33 since 1.3 (the load generator's GEN_*), 52
	 * since 1.4 (rdma_cm's CM_*), 57 since 1.5 (GET_STATUS, ALLOC_MW, DEALLOC_MW,
	 * RESIZE_CQ, REREG_MR), 60 since 1.7 (OPEN_XRCD, CLOSE_XRCD, CREATE_XRC_SRQ),
	 * 61 since 1.8 (MODIFY_CQ). */
	cr_expect_eq(UROCE_SHM_MSG_TYPE_MAX, 61);
	cr_expect_eq(checked, 2 * UROCE_SHM_MSG_TYPE_MAX - 2);
}

Test(ctrl, unknown_types)
{
	uint8_t buf[64];
	struct uroce_shm_msg_hdr h;
	uint16_t bad[] = {0, UROCE_SHM_MSG_TYPE_MAX + 1, 100, 0xffff};

	cr_assert_eq(uroce_shm_msg_init(buf, sizeof(buf), UROCE_SHM_MSG_ALLOC_PD, 1, false, 0),
		     24);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		get_hdr(buf, &h);
		h.type = bad[i];
		put_hdr(buf, &h);
		/* Expect: EOPNOTSUPP in both directions. */
		cr_expect_eq(uroce_shm_msg_validate(buf, 24, false, false), -EOPNOTSUPP);
		h.flags = UROCE_SHM_MSG_F_FROM_DAEMON;
		put_hdr(buf, &h);
		cr_expect_eq(uroce_shm_msg_validate(buf, 24, true, false), -EOPNOTSUPP);
		h.flags = 0;
		put_hdr(buf, &h);
		cr_expect_eq(uroce_shm_msg_init(buf + 32, 32, bad[i], 1, false, 0), -EOPNOTSUPP);
	}
}

Test(ctrl, short_and_null)
{
	uint8_t buf[64];

	cr_assert_eq(uroce_shm_msg_init(buf, sizeof(buf), UROCE_SHM_MSG_ALLOC_PD, 1, false, 0),
		     24);
	/* Expect: shorter than a header -> EMSGSIZE, whatever it holds. */
	for (size_t l = 0; l < 24; l++)
		cr_expect_eq(uroce_shm_msg_validate(buf, l, false, false), -EMSGSIZE);
	cr_expect_eq(uroce_shm_msg_validate(NULL, 24, false, false), -EMSGSIZE);
	/* Expect: builder refuses a small buffer and a status on a request. */
	cr_expect_eq(uroce_shm_msg_init(buf, 23, UROCE_SHM_MSG_ALLOC_PD, 1, false, 0), -ENOSPC);
	cr_expect_eq(uroce_shm_msg_init(buf, sizeof(buf), UROCE_SHM_MSG_ALLOC_PD, 1, false, -1),
		     -EINVAL);
}

Test(ctrl, version_mismatch_is_a_clear_error)
{
	uint8_t buf[128];
	struct uroce_shm_msg_hdr h;
	struct uroce_shm_msg_hello_resp body;
	uint16_t major, minor;
	int len;

	/* A daemon of a future major 2.7 refusing us: it answers HELLO in its
	 * own major with -EPROTONOSUPPORT and its version in the frozen prefix. */
	len = uroce_shm_msg_init(buf, sizeof(buf), UROCE_SHM_MSG_HELLO, 1, true,
				 -EPROTONOSUPPORT);
	cr_assert_gt(len, 0);
	get_hdr(buf, &h);
	h.abi_major = 2;
	put_hdr(buf, &h);
	memset(&body, 0, sizeof(body));
	body.abi_major = 2;
	body.abi_minor = 7;
	memcpy(buf + sizeof(h), &body, sizeof(body));
	/* Expect: validation says "version", and the client can print 2.7. */
	cr_expect_eq(uroce_shm_msg_validate(buf, len, true, false), -EPROTONOSUPPORT);
	cr_assert_eq(uroce_shm_msg_peer_version(buf, len, &major, &minor), 0);
	cr_expect_eq(major, 2);
	cr_expect_eq(minor, 7);
	/* Expect: a non-HELLO gives the major only; garbage gives EPROTO. */
	len = uroce_shm_msg_init(buf, sizeof(buf), UROCE_SHM_MSG_ALLOC_PD, 1, false, 0);
	cr_assert_eq(uroce_shm_msg_peer_version(buf, len, &major, &minor), 0);
	cr_expect_eq(major, UROCE_SHM_ABI_MAJOR);
	cr_expect_eq(minor, 0xffff);
	buf[0] ^= 0xff;
	cr_expect_eq(uroce_shm_msg_peer_version(buf, len, &major, &minor), -EPROTO);
	cr_expect_eq(uroce_shm_msg_peer_version(buf, 10, &major, &minor), -EMSGSIZE);
	/* Expect: version_check: same major any minor is fine. */
	cr_expect_eq(uroce_shm_version_check(UROCE_SHM_ABI_MAJOR, 99), 0);
	cr_expect_eq(uroce_shm_version_check(UROCE_SHM_ABI_MAJOR + 1, 0), -EPROTONOSUPPORT);
}
