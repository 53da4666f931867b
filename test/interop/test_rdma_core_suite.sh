#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# rdma-core's own Python test suite (v44.0, kept unmodified in
# ../shared/suites/rdma-core-tests and run from there, never copied) against
# the drop-in libibverbs.so.1 (and librdmacm.so.1) and one uroced_lite (the
# daemon core with its loopback port: both ends of every test's QP pair are
# clients of the one daemon), through Debian's python3-pyverbs.
#   Expect: the library pyverbs loads is the drop-in (/proc/PID/maps).
#   Expect: every module but the vendor ones (test_mlx5_*, test_efa*,
#           test_cuda_*) runs to its end within MODULE_LIMIT seconds with no
#           failure and no error; skips are counted and listed (their reasons
#           are in doc/verbs-dropin.md), not failed.
#   Expect: uroced_lite is still running after the last module (no test
#           crashed the daemon).
# Exits 77 (skip) when ../shared/suites/rdma-core-tests or python3-pyverbs is
# absent. SUITE_DIR, MODULES (space separated, e.g. "test_qp test_cq") and
# MODULE_LIMIT (default 300 s) may be set in the environment.
set -u
TAG=test_rdma_core_suite
FAILS=0
DPID=
pass() { printf '%s: ok: %s\n' "$TAG" "$*"; }
fail() { printf '%s: FAIL: %s\n' "$TAG" "$*"; FAILS=$((FAILS + 1)); }
note() { printf '%s: %s\n' "$TAG" "$*"; }
skip() { printf '%s: SKIP: %s\n' "$TAG" "$*"; exit 77; }

[ -n "${UROCE_RUN:-}" ] && [ -x "$UROCE_RUN" ] || skip "UROCE_RUN is not set"
[ -n "${UROCED_LITE:-}" ] && [ -x "$UROCED_LITE" ] || skip "UROCED_LITE is not set"
here=$(cd "$(dirname "$0")" && pwd)
SUITE_DIR=${SUITE_DIR:-$here/../../../shared/suites/rdma-core-tests}
[ -f "$SUITE_DIR/tests/run_tests.py" ] ||
	skip "rdma-core's test suite is not at $SUITE_DIR (../shared/suites/rdma-core-tests)"
SUITE_DIR=$(cd "$SUITE_DIR" && pwd)
# pyverbs is installed for Debian's python3, not for a pyenv shim on PATH.
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3"
"$PY" -c 'import pyverbs.device' 2>/dev/null ||
	skip "python3-pyverbs is not installed (apt-get install python3-pyverbs)"
MODULE_LIMIT=${MODULE_LIMIT:-300}

WORK=$(mktemp -d "/tmp/uroce-$TAG-$$-XXXX")
SOCK=$WORK/verbs-lite.sock
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	if [ "$FAILS" -eq 0 ]; then rm -rf "$WORK"; else note "logs kept in $WORK"; fi
}
trap cleanup EXIT

"$UROCED_LITE" "$SOCK" >"$WORK/daemon.log" 2>&1 &
DPID=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || { fail "uroced_lite did not create $SOCK"; cat "$WORK/daemon.log"; exit 1; }
export UROCE_SOCKET=$SOCK

run() { "$UROCE_RUN" "$PY" "$@"; }

# The library that answers must be the drop-in, not a system provider.
maps=$(cd "$SUITE_DIR" && run -c '
import pyverbs.device as d
ctx = d.Context(name="uroce0")
print(open("/proc/self/maps").read())' 2>&1)
dropin=$(dirname "$(readlink -f "$UROCE_RUN")")/libibverbs.so.1
if echo "$maps" | grep -qF "$(readlink -f "$dropin")"; then
	pass "pyverbs opened uroce0 through $(readlink -f "$dropin")"
else
	fail "pyverbs did not load the drop-in $dropin:"
	echo "$maps" | grep -i 'ibverbs\|rror' | head -5 | sed 's/^/    /'
	exit 1
fi

if [ -z "${MODULES:-}" ]; then
	MODULES=$(cd "$SUITE_DIR/tests" && ls test_*.py | sed 's/\.py$//' |
		grep -v -E '^test_(mlx5|efa|cuda)')
fi

total=0 npass=0 nfail=0 nerr=0 nskip=0
for m in $MODULES; do
	log=$WORK/$m.log
	(cd "$SUITE_DIR" && timeout -k 10 "$MODULE_LIMIT" "$UROCE_RUN" "$PY" tests/run_tests.py \
		--dev uroce0 --port 1 -v "tests.$m") >"$log" 2>&1
	rc=$?
	ran=$(sed -n 's/^Ran \([0-9]*\) tests\? in .*/\1/p' "$log" | tail -1)
	res=$(grep -E '^(OK|FAILED)( \(.*\))?$' "$log" | tail -1)
	f=$(echo "$res" | grep -o 'failures=[0-9]*' | cut -d= -f2)
	e=$(echo "$res" | grep -o 'errors=[0-9]*' | cut -d= -f2)
	s=$(echo "$res" | grep -o 'skipped=[0-9]*' | cut -d= -f2)
	f=${f:-0} e=${e:-0} s=${s:-0}
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		fail "$m: hung, killed after ${MODULE_LIMIT}s"
		tail -5 "$log" | sed 's/^/    /'
		continue
	fi
	if [ -z "$ran" ] || [ -z "$res" ]; then
		fail "$m: no unittest summary (exit $rc):"
		tail -8 "$log" | sed 's/^/    /'
		continue
	fi
	p=$((ran - f - e - s))
	total=$((total + ran)) npass=$((npass + p)) nfail=$((nfail + f))
	nerr=$((nerr + e)) nskip=$((nskip + s))
	if [ "$f" -eq 0 ] && [ "$e" -eq 0 ] && [ "$rc" -eq 0 ]; then
		pass "$m: $ran tests, $p passed, $s skipped"
	else
		fail "$m: $ran tests, $p passed, $f failed, $e errors, $s skipped (exit $rc):"
		grep -E '^(FAIL|ERROR):' "$log" | sed 's/^/    /'
	fi
	# Each skip with its reason, so that the log shows what is missing.
	grep -E ' \.\.\. skipped ' "$log" | sed 's/^/    skipped: /'
done

if kill -0 "$DPID" 2>/dev/null; then
	pass "uroced_lite survived the suite"
else
	fail "uroced_lite died during the suite:"
	tail -5 "$WORK/daemon.log" | sed 's/^/    /'
	DPID=
fi
note "totals: $total tests, $npass passed, $nfail failed, $nerr errors, $nskip skipped"
[ "$FAILS" -eq 0 ] || { note "$FAILS check(s) failed"; exit 1; }
exit 0
