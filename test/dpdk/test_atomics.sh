#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Remote atomics across workers (issue 16, defect 1) through the drop-in
# libibverbs.so.1: one uroced with two workers on two CPUs and no port
# (--no-huge; RDMA to its own GID loops back inside), and verbs_atomics, a
# plain verbs program run by uroce-run: eight RC QPs placed on both workers in
# turn, connected in pairs across the workers, each posting FETCH_ADDs and
# an incrementing compare-and-swap loop to its peer's memory, first all on
# one word (while the program's own CPU adds to it too), then on the four
# neighbouring words of one cache line.
#   Expect: ibv_query_device() reports IBV_ATOMIC_HCA (as ConnectX and rxe); every completion
#           succeeds; every word ends at exactly its number of increments;
#           the originals returned are all distinct (verbs_atomics exits 0).
#   Expect: both workers executed atomics (uroce-ctl workers: each received
#           RoCEv2), and the daemon counted every one of them once
#           (rx_atomic_requests at least the atomics the program did).
# Knobs: ATOMICS_FADD, ATOMICS_CAS, ATOMICS_CPU (per QP / CPU adds).
. "$(dirname "$0")/lib.sh"

require_dropin
[ -n "${VERBS_ATOMICS:-}" ] && [ -x "$VERBS_ATOMICS" ] || skip "VERBS_ATOMICS is not set"
[ -n "${UROCE_CTL:-}" ] && [ -x "$UROCE_CTL" ] || skip "UROCE_CTL is not set (uroce-ctl not built)"
[ "$(nproc)" -ge 2 ] || skip "needs two CPUs (two workers executing at the same time)"
require_eal

P="uroce-atomics-$$"
PREFIXES+=("$P")
SOCK="$WORK/d.sock"
# Main lcore and worker 1 on CPU 0, worker 2 on CPU 1: the two workers run
# at the same time.
cat >"$WORK/d.conf" <<CONF
[eal]
lcores = 0@0,1@0,2@1
no_huge = yes
memory = 256
file_prefix = $P
[daemon]
socket = $SOCK
[limits]
idle_sleep_us = 10
CONF
start_uroced d - -c "$WORK/d.conf" || finish
PID_D=$LAST_PID

FADD=${ATOMICS_FADD:-5000}
CAS=${ATOMICS_CAS:-300}
CPU=${ATOMICS_CPU:-50000}
before=$(dstat "$P" rx_atomic_requests)
UROCE_SOCKET="$SOCK" timeout 300 "$UROCE_RUN" "$VERBS_ATOMICS" --qps 8 --fadd "$FADD" \
	--cas "$CAS" --cpu "$CPU" >"$WORK/atomics.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
	pass "$(grep 'one word:' "$WORK/atomics.out" | sed 's/^verbs_atomics: //')"
	pass "$(grep 'neighbouring words:' "$WORK/atomics.out" | sed 's/^verbs_atomics: //')"
	pass "$(tail -1 "$WORK/atomics.out" | sed 's/^verbs_atomics: //')"
else
	fail "verbs_atomics exit $rc:"
	tail -5 "$WORK/atomics.out" | sed 's/^/    /'
fi
after=$(dstat "$P" rx_atomic_requests)
# Each phase: 8 QPs x (FADD + CAS successes), and the CAS retries on top.
min=$((2 * 8 * (FADD + CAS)))
if [ -n "$before" ] && [ -n "$after" ] && [ $((after - before)) -ge "$min" ]; then
	pass "the daemon executed $((after - before)) atomics (at least $min posted)"
else
	fail "rx_atomic_requests went from '${before}' to '${after}' (expected at least +$min)"
fi
out=$("$UROCE_CTL" workers --socket "$SOCK" --json 2>&1)
if echo "$out" | /usr/bin/python3 -c '
import json, sys
w = json.load(sys.stdin)["workers"]
print(" ".join("w%d roce_rx %d roce_tx %d" % (x["worker"], x["roce_rx"], x["roce_tx"]) for x in w))
sys.exit(0 if len(w) == 2 and all(x["roce_rx"] > 0 and x["roce_tx"] > 0 for x in w) else 1)' \
	>"$WORK/workers.txt" 2>&1; then
	pass "both workers executed atomics: $(cat "$WORK/workers.txt")"
else
	fail "not both workers carried the traffic: $(cat "$WORK/workers.txt") $out"
fi
stop_uroced "$PID_D" d
finish
