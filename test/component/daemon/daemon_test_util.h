/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * Plumbing shared by the daemon component tests (test_daemon, test_rebacking,
 * test_srq_events, test_ctl_introspect) and their client tool daemon_client:
 * clocks and naps, exact pipe I/O for child processes, the test socket's
 * path, starting and stopping the uroced_lite test tool, the control
 * protocol spoken by hand (connect, build, send and receive one message),
 * and creating and connecting RC QPs through liburoce.
 *
 * It links liburoce and lib/shm only, never lib/daemon: daemon_client is a
 * client like any application. Nothing here asserts: every function returns
 * 0 (or a value) / -errno, or dies with a message where it says so, so that
 * Criterion tests and plain child processes can both use it.
 */

#ifndef DAEMON_TEST_UTIL_H
#define DAEMON_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uroce_verbs.h"

/** CLOCK_MONOTONIC in seconds. */
/* Workers of the in-process daemons the tests create: UROCE_TEST_WORKERS
 * (1 when unset). The same tests run again with 2 (meson: *_2w), so QPs of
 * one client pair are placed on two workers and loop back across them. */
unsigned int dt_workers(void);

double dt_now_s(void);

/** Sleep @p us microseconds (or @p ms milliseconds). */
void dt_nap_us(long us);
void dt_nap_ms(int ms);

/**
 * Write or read exactly @p n bytes on a pipe or socket. For child processes:
 * on a short transfer or an error print "@p what: ..." and _exit(1).
 */
void dt_xwrite(int fd, const void *p, size_t n, const char *what);
void dt_xread(int fd, void *p, size_t n, const char *what);

/** "/tmp/uroce-test-@p tag-PID.sock" into @p buf. */
void dt_sock_path(char *buf, size_t len, const char *tag);

/**
 * Start the uroced_lite test tool ($UROCED_LITE) on @p sock, its socket mode
 * @p mode (octal string, NULL: its default), and wait up to 10 s until it
 * says it is listening (its socket file appears at bind(), before listen()).
 * It gets SIGTERM if this process dies. Its stdout is a pipe whose read end
 * goes to *@p out: keep it open until dt_lite_stop(), so that its last line
 * finds a reader.
 * @return its pid, or -EINVAL ($UROCED_LITE not set), -ETIMEDOUT, -EPIPE (it
 * exited first, or said something else), -errno of pipe() or fork().
 */
pid_t dt_lite_start(const char *sock, const char *mode, int *out);

/** SIGTERM uroced_lite, reap it and close @p out. @return its wait status. */
int dt_lite_stop(pid_t pid, int out);

/**
 * Connect a blocking SOCK_SEQPACKET socket to the daemon at @p path (no
 * HELLO). @return the fd, or -errno (-ENAMETOOLONG for a path that does not fit).
 */
int dt_connect(const char *path);

/**
 * Build a request of @p type, sequence @p seq, with @p blen bytes of @p body
 * into @p buf (UROCE_SHM_MSG_MAX bytes). @return its length, or -EINVAL if
 * @p blen is not the body length of @p type.
 */
int dt_msg_build(void *buf, size_t size, uint16_t type, uint32_t seq, const void *body,
		 size_t blen);

/** dt_msg_build(), then send it with @p fd_in (-1: none). @return bytes sent or -errno. */
ssize_t dt_msg_send(int s, uint16_t type, uint32_t seq, const void *body, size_t blen, int fd_in);

/**
 * Receive one message and validate it as a daemon's (a response or an
 * event). @return its length; 0 if the daemon hung up; -EAGAIN on a
 * non-blocking socket with nothing to read (or on a receive timeout);
 * -EPROTO for a malformed message (any fd that came with it is closed).
 */
ssize_t dt_msg_recv(int s, void *buf, size_t size, int *fd);

/**
 * Create a QP of @p type sending and receiving on @p cq, receiving from
 * @p srq if not NULL, @p depth WRs and @p sge SGEs each way.
 * @return the QP, or NULL with errno set by uroce_create_qp().
 */
struct uroce_qp *dt_qp_create(struct uroce_pd *pd, struct uroce_cq *cq, struct uroce_srq *srq,
			      int type, uint32_t depth, uint32_t sge);

/** The far end of an RC connection on the loopback port (port 1). */
struct dt_rc {
	const uint8_t *dgid;  /* its GID, 16 bytes */
	uint32_t dqpn;
	uint32_t rq_psn;      /* the first PSN it sends */
	uint32_t sq_psn;      /* the first PSN we send */
	uint8_t rd_atomic;    /* READs/atomics in flight, each way */
};

/** RESET -> INIT on port 1 with remote @p access. @return 0 or -errno. */
int dt_qp_init(struct uroce_qp *qp, int access);

/**
 * INIT -> RTR -> RTS aimed at @p rc: path MTU 1024, hop limit 64,
 * min_rnr_timer 1, timeout 14, retry_cnt 7, rnr_retry 7 (forever).
 * @return 0 or -errno of the first transition refused.
 */
int dt_qp_rtr_rts(struct uroce_qp *qp, const struct dt_rc *rc);

/** dt_qp_init(), then dt_qp_rtr_rts(). @return 0 or -errno. */
int dt_qp_to_rts(struct uroce_qp *qp, int access, const struct dt_rc *rc);

/**
 * Two RC QPs of @p pd (32 WRs, 2 SGEs; a completes on @p cqa, b on
 * @p cqb) in RTS with remote @p access, connected to each other over the
 * loopback port's GID 0 (a sends from PSN 5, b from 7; 4 READs/atomics in
 * flight). @return 0 or -errno (QPs created so far are left to the caller's
 * uroce_close_device()).
 */
int dt_rc_pair(struct uroce_pd *pd, struct uroce_cq *cqa, struct uroce_cq *cqb, int access,
	       struct uroce_qp **a, struct uroce_qp **b);

/** Poll @p cq for one completion, up to @p timeout_s. @return 1, 0 if none
 * came, or the negative error of uroce_poll_cq(). */
int dt_wait_wc(struct uroce_cq *cq, struct uroce_wc *wc, double timeout_s);

#endif /* DAEMON_TEST_UTIL_H */
