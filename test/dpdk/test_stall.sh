#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# A daemon that stops running (SIGSTOP), and idle daemons (issue 16.3, 21.3).
# Two uroced over memif (A server, B client), idle_sleep_us = 10: idle
# workers sleep on the status segment's futex, escalating to
# idle_sleep_max_us (10 ms).
#   Expect: idle (no QP), each daemon's threads use under 3 % of a CPU
#           together (the old policy, 10 us sleeps, took about 38 %; the
#           number is logged, the bound only catches a worker that spins).
#   Expect: a verified WRITE after idle completes (the doorbell wakes A's
#           sleeping worker, B's sees the frame within idle_sleep_max_us).
#   Expect: A stopped for 3 s, longer than -u 14's retry budget (7 x 67 ms),
#           under a verified WRITE stream whose requester is on A: A's
#           ACKs waiting on its RX queue are taken in first, and a timer
#           found late re-arms without spending a retry (host_stall_rearm,
#           logged): the stream ends with every byte right, no RETRY_EXC_ERR.
#   Expect: A stopped for good under uroce-perf -D 30 with
#           UROCE_DAEMON_TIMEOUT_MS=2000: A's client exits within seconds,
#           saying that its daemon made no progress and that it is not the
#           peer's doing; B's side exits too (its peer went away).
. "$(dirname "$0")/lib.sh"

require_root
require_uroced
require_clients
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd timeout coreutils
require_eal

MEMIF="$WORK/memif.sock"
PA="uroce-stall-a-$$"
PB="uroce-stall-b-$$"
PREFIXES+=("$PA" "$PB")

memif_pair

# cpu_ticks PID: user + system clock ticks of every thread of PID.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# --- 1. Idle costs little ----------------------------------------------
sleep 3
ta=$(cpu_ticks "$PID_A")
tb=$(cpu_ticks "$PID_B")
sleep 10
da=$(($(cpu_ticks "$PID_A") - ta))
db=$(($(cpu_ticks "$PID_B") - tb))
hz=$(getconf CLK_TCK)
log "idle for 10 s: A used $da ticks, B $db ticks ($hz a second): $((da * 1000 / (10 * hz))) and $((db * 1000 / (10 * hz))) per mille of a CPU"
[ $((da * 100)) -lt $((3 * 10 * hz)) ] && [ $((db * 100)) -lt $((3 * 10 * hz)) ] &&
	pass "idle daemons use under 3 % of a CPU each ($da and $db ticks in 10 s)" ||
	fail "idle daemons too busy: $da and $db ticks in 10 s ($hz a second)"
sl=$(wstat "$A_SOCK" | awk '{print $3}')
[ "${sl:-0}" -gt 0 ] && pass "A's idle worker slept ($sl sleeps)" || fail "A's worker never slept"

# --- 2. First message after idle ---------------------------------------
perf_pair "after-idle" "$A_SOCK" "$B_SOCK" 18801 write lat -x 1 -n 50 --verify

# --- 3. A stopped longer than its retry budget: its QPs survive --------
# The requester (client) on A, the responder (server) on B.
timeout "$(bound 120)" "$UROCE_PERF" write bw -x 1 -u 14 -D 12 -s 4096 --verify \
	--socket "$B_SOCK" -p 18802 >"$WORK/s.srv" 2>&1 &
SRV=$!
wait_listen 18802 "$SRV"
timeout "$(bound 120)" "$UROCE_PERF" write bw -x 1 -u 14 -D 12 -s 4096 --verify \
	--socket "$A_SOCK" -p 18802 127.0.0.1 >"$WORK/s.cli" 2>&1 &
CLI=$!
sleep 3
re0=$(dstat "$PA" host_stall_rearm)
kill -STOP "$PID_A"
sleep 3
kill -CONT "$PID_A"
wait "$CLI"
rc_c=$?
wait "$SRV"
rc_s=$?
re1=$(dstat "$PA" host_stall_rearm)
if [ "$rc_c" -eq 0 ] && [ "$rc_s" -eq 0 ]; then
	pass "A stopped 3 s under a verified WRITE stream (-u 14): it went on, every byte right"
else
	fail "A stopped 3 s: client exit $rc_c, server exit $rc_s"
	tail -n 3 "$WORK/s.cli" "$WORK/s.srv" | sed 's/^/    /'
fi
grep -q RETRY_EXC_ERR "$WORK/s.cli" "$WORK/s.srv" && fail "RETRY_EXC_ERR after a host stall"
# A takes in the ACKs that waited on its RX queue before it judges a timer;
# a timer found late re-arms instead (counted). Either way no retry is spent.
log "A's host_stall_rearm: ${re0:-?} -> ${re1:-?}"
# The stop is on record: A's worker saw a round at least 2 s longer than
# the sleep it asked for (/uroce/workers max_late_us, late_rounds), which is
# how a failed test tells a descheduled daemon from a protocol fault.
late=$(tel "$PA" /uroce/workers | /usr/bin/python3 -c '
import json, sys
try:
    w = json.loads(sys.stdin.read())["/uroce/workers"]["0"]
    print(w["max_late_us"], w["late_rounds"])
except Exception:
    print("")')
read -r late_us late_n <<<"${late:-}"
[ "${late_us:-0}" -ge 2000000 ] && [ "${late_n:-0}" -ge 1 ] &&
	pass "A's worker recorded the stop: max_late_us $late_us, late_rounds $late_n" ||
	fail "A's worker did not record the 3 s stop: /uroce/workers max_late_us '${late_us:-}', late_rounds '${late_n:-}'"

# --- 4. A stopped for good: its clients give up, saying why ------------
export UROCE_DAEMON_TIMEOUT_MS=2000
timeout "$(bound 120)" "$UROCE_PERF" write bw -x 1 -D 30 --socket "$B_SOCK" -p 18803 \
	>"$WORK/d.srv" 2>&1 &
SRV=$!
wait_listen 18803 "$SRV"
timeout "$(bound 120)" "$UROCE_PERF" write bw -x 1 -D 30 --socket "$A_SOCK" -p 18803 127.0.0.1 \
	>"$WORK/d.cli" 2>&1 &
CLI=$!
sleep 2
kill -STOP "$PID_A"
T0=$SECONDS
wait "$CLI"
rc_c=$?
t_c=$((SECONDS - T0))
wait "$SRV"
rc_s=$?
t_s=$((SECONDS - T0))
kill -CONT "$PID_A"
unset UROCE_DAEMON_TIMEOUT_MS
if [ "$rc_c" -ne 0 ] && grep -q "has made no progress" "$WORK/d.cli" && [ "$t_c" -lt 25 ]; then
	pass "A stopped: its client gave up after $t_c s: $(grep -o 'this side.*doing' "$WORK/d.cli" | head -1)"
else
	fail "A stopped: client exit $rc_c after $t_c s: $(tail -2 "$WORK/d.cli" | tr '\n' ' ')"
fi
[ "$rc_s" -ne 0 ] && [ "$t_s" -lt 40 ] && pass "B's side ended too (exit $rc_s after $t_s s): $(tail -1 "$WORK/d.srv")" ||
	fail "B's side: exit $rc_s after $t_s s: $(tail -2 "$WORK/d.srv" | tr '\n' ' ')"

stop_uroced "$PID_A" a
stop_uroced "$PID_B" b
finish
