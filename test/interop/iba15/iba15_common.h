/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The uroce authors
 */

/*
 * The side channel of the IBA 1.5 interop pair (iba15_rxe in the rxe VM,
 * iba15_uroce on uroced): text lines over one TCP connection, which the
 * uroce side listens for and the VM side makes. Both programs are built from
 * this header alone plus their own verbs library, so the VM's copy needs
 * nothing but Debian's libibverbs.
 *
 *   rxe -> uroce   QP <qpn0> <qpn1> <psn> <gid, 32 hex digits>
 *   uroce -> rxe   QP ...                         (both go to RTS)
 * case "write" (uroce requests, rxe responds):
 *   rxe -> uroce   KEYS <addr a> <rkey a> <addr b> <rkey b> <mw addr> <mw rkey>
 *   uroce -> rxe   DONE                           (rxe checks its memory)
 *   rxe -> uroce   BYE
 * case "read-back" (rxe requests ATOMIC WRITE, uroce responds):
 *   uroce -> rxe   KEYS <addr rw> <rkey rw> <addr ro> <rkey ro>
 *   rxe -> uroce   DONE                           (uroce checks its memory)
 *   uroce -> rxe   BYE
 * Every check prints "iba15 SIDE: ok: ..." or "iba15 SIDE: FAIL: ..."; the
 * exit code is the number of FAIL lines (at most 100).
 */

#ifndef IBA15_COMMON_H
#define IBA15_COMMON_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>

/* Offsets in the 4 KiB target buffer a of case "write". */
#define IBA15_AW_OFF 64        /* ATOMIC WRITE lands here */
#define IBA15_MW_OFF 1024      /* the type 2 window covers [1024, 2048) */
#define IBA15_MW_LEN 1024
#define IBA15_BUF 4096
#define IBA15_AW_VALUE 0x1d1d0a0b0c0d0e0fULL  /* 0x1D: ATOMIC WRITE's opcode */
#define IBA15_WIN_BYTE 0x5a
#define IBA15_WIN_LEN 16
#define IBA15_PSN 0x1234

/* Bounds on the side channel: how long the VM keeps trying to connect and
 * the uroce side waits for it, and how long either waits for a line. */
#define IBA15_CONNECT_S 240
#define IBA15_LINE_S 60

static int iba15_fails;
static const char *iba15_side = "?";

static void __attribute__((format(printf, 2, 3)))
iba15_check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("iba15 %s: %s: ", iba15_side, ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		iba15_fails++;
}

/* A fatal set-up error: the case cannot go on. */
static void __attribute__((noreturn, format(printf, 1, 2)))
iba15_die(const char *fmt, ...)
{
	va_list ap;

	printf("iba15 %s: FAIL: ", iba15_side);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	_exit(100);
}

/* A side channel that stops answering fails the case instead of hanging. */
static void
iba15_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = IBA15_LINE_S };

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0)
		iba15_die("side channel: setsockopt: %s", strerror(errno));
}

static void
iba15_sendline(int fd, const char *line)
{
	size_t len = strlen(line), off = 0;

	while (off < len) {
		ssize_t n = write(fd, line + off, len - off);

		if (n <= 0)
			iba15_die("side channel: write: %s", n < 0 ? strerror(errno) : "closed");
		off += (size_t)n;
	}
}

/* One '\n'-terminated line (without it) into @p buf of @p size. */
static void
iba15_readline(int fd, char *buf, size_t size)
{
	size_t n = 0;

	for (;;) {
		char c;
		ssize_t r = read(fd, &c, 1);

		if (r <= 0)
			iba15_die("side channel: read: %s",
				  r < 0 ? strerror(errno) : "peer closed");
		if (c == '\n')
			break;
		if (n + 1 >= size)
			iba15_die("side channel: line longer than %zu bytes", size);
		buf[n++] = c;
	}
	buf[n] = '\0';
}

/* Send the KEYS line @p keys, then wait for the other side's DONE. */
static void
iba15_keys_then_done(int fd, const char *keys)
{
	char line[64];

	iba15_sendline(fd, keys);
	iba15_readline(fd, line, sizeof(line));
	if (strcmp(line, "DONE") != 0)
		iba15_die("side channel: expected DONE, got '%s'", line);
}

/* The 8 bytes of the other side's ATOMIC WRITE at @p p. */
static void
iba15_check_aw(const uint8_t *p, const char *what)
{
	uint64_t v;

	memcpy(&v, p, 8);
	iba15_check(v == IBA15_AW_VALUE, "%s: 0x%016llx (expected 0x%016llx)", what,
		    (unsigned long long)v, (unsigned long long)IBA15_AW_VALUE);
}

static void
iba15_gid_hex(const uint8_t gid[16], char out[33])
{
	int i;

	for (i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", gid[i]);
}

/* @return 0, or -1 when @p hex is not 32 hex digits. */
static int
iba15_gid_parse(const char *hex, uint8_t gid[16])
{
	int i;

	if (strlen(hex) != 32)
		return -1;
	for (i = 0; i < 16; i++) {
		unsigned int b;

		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -1;
		gid[i] = (uint8_t)b;
	}
	return 0;
}

#endif /* IBA15_COMMON_H */
