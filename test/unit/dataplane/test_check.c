/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * lib/dataplane/check.c's EAL-free parts: the control socket's directory
 * made as mkdir -p does (mode 0755 whatever the umask, existing directories
 * left alone, a clear refusal), and the probe that tells a live daemon's
 * socket (SOCK_SEQPACKET, as lib/daemon listens) from a stale file.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "uroce_dataplane.h"

static char base[64];

static void
setup(void)
{
	snprintf(base, sizeof(base), "/tmp/uroce-dp-check-XXXXXX");
	cr_assert_not_null(mkdtemp(base));
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		cr_log_warn("could not remove %s", base);
}

TestSuite(dp_check, .init = setup, .fini = teardown);

static mode_t
mode_of(const char *path)
{
	struct stat st;

	cr_assert_eq(stat(path, &st), 0, "stat %s: %s", path, strerror(errno));
	cr_assert(S_ISDIR(st.st_mode), "%s is a directory", path);
	return st.st_mode & 07777;
}

/* Expect: every missing directory is made 0755 under a umask of 077, owned by
 * this user; an existing one keeps its mode; a second call changes nothing. */
Test(dp_check, socket_dir_is_made_0755)
{
	char sock[128], d1[96], d2[96], err[UROCE_DP_ERR_LEN] = "";
	struct stat st;
	mode_t old = umask(077);

	snprintf(d1, sizeof(d1), "%s/run", base);
	snprintf(d2, sizeof(d2), "%s/run/uroce", base);
	snprintf(sock, sizeof(sock), "%s/uroced.sock", d2);
	cr_assert_eq(chmod(base, 0700), 0);
	cr_assert_eq(uroce_dp_socket_dir(sock, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(mode_of(d1), 0755);
	cr_expect_eq(mode_of(d2), 0755);
	cr_expect_eq(mode_of(base), 0700, "an existing directory is left alone");
	cr_assert_eq(stat(d2, &st), 0);
	cr_expect_eq(st.st_uid, geteuid());
	cr_expect_eq(uroce_dp_socket_dir(sock, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(uroce_dp_socket_dir("/socket-in-root.sock", err, sizeof(err)), 0);
	umask(old);
}

/* Expect: a path through a regular file, a relative path and a path too long
 * for a UNIX socket are refused with one line naming the socket and why. */
Test(dp_check, socket_dir_refusals)
{
	char sock[160], file[96], err[UROCE_DP_ERR_LEN] = "", want[320];
	char longp[200];
	int fd;

	snprintf(file, sizeof(file), "%s/file", base);
	fd = open(file, O_CREAT | O_WRONLY, 0644);
	cr_assert(fd >= 0);
	close(fd);
	snprintf(sock, sizeof(sock), "%s/sub/x.sock", file);
	cr_expect_eq(uroce_dp_socket_dir(sock, err, sizeof(err)), -ENOTDIR);
	snprintf(want, sizeof(want), "control socket %s: cannot create its directory %s: ", sock,
		 file);
	cr_expect(strncmp(err, want, strlen(want)) == 0, "%s", err);
	cr_expect(strstr(err, "not a directory is in the way") != NULL, "%s", err);

	cr_expect_eq(uroce_dp_socket_dir("relative/x.sock", err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "relative/x.sock: not an absolute path") != NULL, "%s", err);
	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	cr_expect_eq(uroce_dp_socket_dir(longp, err, sizeof(err)), -EINVAL);
}

/* Expect: a listening SOCK_SEQPACKET socket is live; the same file after its
 * listener is gone is stale (0); no file is 0; a stream listener (not a
 * daemon) is told apart. */
Test(dp_check, socket_probe)
{
	struct sockaddr_un sa;
	char path[96];
	int l;

	snprintf(path, sizeof(path), "%s/d.sock", base);
	cr_expect_eq(uroce_dp_socket_live(path), 0, "no file");
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	l = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	cr_assert(l >= 0);
	cr_assert_eq(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(l, 4), 0);
	cr_expect_eq(uroce_dp_socket_live(path), 1, "a listening daemon's socket");
	close(l);
	cr_expect_eq(uroce_dp_socket_live(path), 0, "the file its listener left");
	unlink(path);

	l = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert(l >= 0);
	cr_assert_eq(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(l, 4), 0);
	cr_expect_eq(uroce_dp_socket_live(path), -EPROTOTYPE, "a stream socket is no daemon");
	close(l);
}
