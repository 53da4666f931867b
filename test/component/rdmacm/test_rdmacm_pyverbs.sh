#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# rdma-core's own tests/test_rdmacm.py (pyverbs, ../shared/suites/
# rdma-core-tests, run from there, never copied) through both drop-ins, on
# core A of `uroced_lite --pair` (::ffff:198.18.0.1): server and client are
# two processes on the same daemon core, as the suite runs them.
# The suite takes its device's IP address from the kernel netdev under
# /sys/class/infiniband/DEV/device/net/; uroce has neither, so the test runs
# it in a mount and network namespace of its own (unshare -m -n) with a tmpfs
# on /sys/class holding infiniband/uroce0/device/net/lo, and 198.18.0.1 on
# that namespace's loopback (left down: no kernel traffic, only the address).
#   Expect: the 7 connection tests pass (sync and async traffic, RC and UDP
#           port spaces, READ, WRITE, reject, an external QP); the 3 multicast
#           tests skip ("Multicast is not supported"): "OK (skipped=3)".
#   Expect: the process's librdmacm.so.1 and libibverbs.so.1 are uroce's.
# Skips (77): no suite, no python3-pyverbs, not root (unshare, mount).
set -u
TAG=test_rdmacm_pyverbs
WORK=$(mktemp -d "/tmp/uroce-cm-$TAG-$$-XXXX")
LITE_PID=
cleanup() {
	[ -n "$LITE_PID" ] && kill "$LITE_PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
skip() { printf '%s: SKIP: %s\n' "$TAG" "$*"; exit 77; }
fail() { printf '%s: FAIL: %s\n' "$TAG" "$*"; FAILS=$((FAILS + 1)); }
pass() { printf '%s: ok: %s\n' "$TAG" "$*"; }
FAILS=0

SUITE=${RDMA_CORE_TESTS:-$(dirname "$0")/../../../../shared/suites/rdma-core-tests}
[ -n "${UROCE_RUN:-}" ] && [ -x "$UROCE_RUN" ] || skip "UROCE_RUN is not set"
[ -n "${UROCED_LITE:-}" ] && [ -x "$UROCED_LITE" ] || skip "UROCED_LITE is not set"
[ -f "$SUITE/tests/test_rdmacm.py" ] || skip "no rdma-core tests at $SUITE (set RDMA_CORE_TESTS)"
/usr/bin/python3 -c 'import pyverbs' 2>/dev/null || skip "python3-pyverbs is not installed"
[ "$(id -u)" -eq 0 ] || skip "needs root (unshare -m -n, mount)"
unshare -m -n true 2>/dev/null || skip "unshare -m -n is not permitted here"

A="$WORK/a.sock"
"$UROCED_LITE" --pair "$A" "$WORK/b.sock" >"$WORK/lite.log" 2>&1 &
LITE_PID=$!
for _ in $(seq 50); do [ -S "$A" ] && break; sleep 0.1; done
[ -S "$A" ] || { fail "uroced_lite did not start"; exit 1; }

# in_ns CMD...: CMD in the namespaces described above.
in_ns() {
	UROCE_SOCKET="$A" unshare -m -n bash -c '
		mount -t tmpfs uroce-cm-sys /sys/class &&
		mkdir -p /sys/class/infiniband/uroce0/device/net/lo &&
		ip addr add 198.18.0.1/24 dev lo && exec "$@"' in_ns "$@"
}

libs=$(in_ns "$UROCE_RUN" /usr/bin/python3 -c '
import pyverbs.cmid, pyverbs.device
for l in open("/proc/self/maps"):
    if "librdmacm.so.1" in l or "libibverbs.so.1" in l:
        print(l.split()[-1])' 2>&1 | sort -u)
n_ours=$(echo "$libs" | grep -c "$(dirname "$(dirname "$UROCE_RUN")")")
[ "$n_ours" -eq 2 ] && pass "pyverbs loads uroce's librdmacm.so.1 and libibverbs.so.1" ||
	fail "libraries loaded: $libs"

(cd "$SUITE" && timeout 300 bash -c "$(declare -f in_ns); A='$A'; in_ns '$UROCE_RUN' \
	/usr/bin/python3 tests/run_tests.py --dev uroce0 --port 1 -v tests.test_rdmacm") \
	>"$WORK/suite.log" 2>&1
rc=$?
n_ok=$(grep -c '\.\.\. ok$' "$WORK/suite.log")
if [ "$rc" -eq 0 ] && [ "$n_ok" -eq 7 ] && grep -q "^OK (skipped=3)" "$WORK/suite.log" &&
	[ "$(grep -c "skipped 'Multicast is not supported" "$WORK/suite.log")" -eq 3 ]; then
	pass "tests.test_rdmacm: $n_ok passed, 3 multicast tests skipped"
else
	fail "tests.test_rdmacm (exit $rc, $n_ok passed):"
	tail -n 40 "$WORK/suite.log" | sed 's/^/    /'
fi
[ "$FAILS" -eq 0 ] || exit 1
printf '%s: all checks passed\n' "$TAG"
