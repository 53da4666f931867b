/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/**
 * @file
 * uroce-ctl's connection to a running uroced: the control socket of lib/shm
 * (UNIX SOCK_SEQPACKET, one message per record, doc/shm-abi.md). It says
 * HELLO like any client, then sends one request at a time and waits for the
 * response with the same sequence number, with a timeout, so a stuck daemon
 * never hangs the tool. Every response goes through uroce_shm_msg_validate()
 * before a body field is read; a descriptor that comes with a response (the
 * HELLO doorbell segment) is closed at once, since uroce-ctl posts nothing.
 */

#ifndef UROCE_CTL_CLIENT_H
#define UROCE_CTL_CLIENT_H

#include <stddef.h>
#include <stdint.h>

/** Milliseconds to wait for one response. */
#define CTL_RPC_TIMEOUT_MS 5000

struct ctl_conn {
	int fd;
	uint32_t seq;
	uint32_t client_id;  /**< from HELLO */
	uint16_t abi_minor;  /**< daemon's minor, from HELLO */
	char path[108];
};

/**
 * The socket path: @p opt if not NULL, else $UROCE_SOCKET if set and not
 * empty, else UROCE_DEFAULT_SOCKET (the same rule as liburoce).
 */
const char *ctl_socket_path(const char *opt);

/**
 * Connect to the daemon at @p path and say HELLO.
 *
 * @return 0; -ENAMETOOLONG (path too long); the -errno of socket/connect
 *   (-ENOENT, -ECONNREFUSED, -EACCES: no daemon or no permission); or
 *   -EPROTONOSUPPORT (incompatible ABI major), -ETIMEDOUT, -EPROTO
 *   (malformed reply), or the daemon's status.
 */
int ctl_conn_open(struct ctl_conn *c, const char *path);

/** Close the connection (the daemon then reclaims the session). */
void ctl_conn_close(struct ctl_conn *c);

/**
 * One request and its response.
 *
 * @param type  enum uroce_shm_msg_type
 * @param req   request body (@p req_len must be the type's body length)
 * @param resp  response body out (@p resp_len must be the type's body length)
 * @return 0; the daemon's status (-errno) for a refused request;
 *   -EOPNOTSUPP when the daemon does not know the type (older ABI minor);
 *   -ETIMEDOUT, -EPROTO (malformed, wrong type or seq), -ECONNRESET (the
 *   daemon hung up), or the -errno of send/recv.
 */
int ctl_conn_call(struct ctl_conn *c, uint16_t type, const void *req, size_t req_len, void *resp,
		  size_t resp_len);

/** Human advice for a ctl_conn_open() error (one sentence, no newline). */
const char *ctl_conn_advice(int err);

#endif /* UROCE_CTL_CLIENT_H */
