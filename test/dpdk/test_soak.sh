#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Soak (issue 9): two uroced over memif, each dropping 5 % of the RoCEv2 it
# receives and duplicating and reordering 1 % (fault_* keys), and one client
# process with a context on each (soak_client mixed) keeping an RC QP pair
# busy with WRITE, READ, SEND and FETCH_ADD, 32 at once, for SOAK_SECONDS
# (45 by default; 600 for the long run in doc/soak.md). The local ACK timeout
# is 17 (537 ms; SOAK_TIMEOUT): retry_cnt 7 then gives a peer starved of CPU
# 4.3 s, which a loaded 2-CPU host has been seen to need (doc/soak.md). SOAK_OPS=MASK limits
# the mix (soak_client --ops: bit 0 WRITE, 1 READ, 2 SEND, 3 FETCH_ADD).
#   Expect: every WRITE's and READ's bytes right, every SEND received once and
#           in order, every FETCH_ADD executed exactly once (the counter ends
#           at the number posted, each returned the count before it), every
#           completion successful.
#   Expect: the faults happened (fault_dropped, fault_duplicated and
#           fault_reordered moved, and the transport retransmitted).
#   Expect: mbufs in use and RSS flat: sampled every 5 s after the first 10
#           s, they stay within a burst (32 mbufs) and 2 MiB of the first
#           sample, and once traffic stops both daemons hold no QP.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/soak_lib.sh"

require_root
require_uroced
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd timeout coreutils
[ -n "${SOAK_CLIENT:-}" ] && [ -x "$SOAK_CLIENT" ] || skip "SOAK_CLIENT is not set"
require_eal

MEMIF="$WORK/memif.sock"
PA="uroce-soak-a-$$"
PB="uroce-soak-b-$$"
PREFIXES+=("$PA" "$PB")
SECS=${SOAK_SECONDS:-45}
FAULTS="fault_drop = 0.05
fault_dup = 0.01
fault_reorder = 0.01
fault_dir = rx"

soak_pair "$FAULTS
fault_seed = 11" "$FAULTS
fault_seed = 12"
timeout $((SECS + 300)) "$SOAK_CLIENT" mixed --a "$WORK/a.sock" --b "$WORK/b.sock" \
	--seconds "$SECS" --depth 32 --timeout "${SOAK_TIMEOUT:-17}" ${SOAK_OPS:+--ops "$SOAK_OPS"} \
	>"$WORK/mixed.out" 2>&1 &
CLIENT=$!
PIDS+=("$CLIENT")
T0=$SECONDS
sleep 10
samples_a=()
samples_b=()
while kill -0 "$CLIENT" 2>/dev/null; do
	samples_a+=("$(holdings "$PA" "$PID_A")")
	samples_b+=("$(holdings "$PB" "$PID_B")")
	for _ in $(seq 50); do kill -0 "$CLIENT" 2>/dev/null || break; sleep 0.1; done
done
wait "$CLIENT"
rc=$?
ELAPSED=$((SECONDS - T0))
if [ "$rc" -eq 0 ]; then
	pass "mixed traffic for $SECS s at 5 % loss: $(tail -1 "$WORK/mixed.out")"
else
	fail "mixed traffic failed after $ELAPSED s (exit $rc): $(tail -3 "$WORK/mixed.out" | tr '\n' ' ')"
fi
# What the transport and the ports saw (pass or fail, for doc/soak.md): the
# non-zero counters of each daemon; then every request a responder refused
# and every QP a requester gave up (uroced logs each, with its state).
nonzero() { # nonzero PREFIX COMMAND KEY
	tel "$1" "$2" | /usr/bin/python3 -c '
import json, sys
try:
    d = json.loads(sys.stdin.read())[sys.argv[2]]
    print("    " + sys.argv[1] + " " + sys.argv[2] + ": " +
          " ".join("%s=%d" % kv for kv in d.items() if isinstance(kv[1], int) and kv[1]))
except Exception as e:
    print("    " + sys.argv[1] + " " + sys.argv[2] + ": unreadable (telemetry: %s)" % e)' "$1" "$3"
}
for side in "$PA" "$PB"; do
	nonzero "$side" /uroce/daemon/stats /uroce/daemon/stats
	nonzero "$side" /uroce/port/stats,0 /uroce/port/stats
done
# How long each daemon's worker went without running when it should have
# (late_rounds, max_late_us of /uroce/workers): a responder whose worker is
# not scheduled for longer than the requester's retries last (8 x 268 ms)
# loses the connection whatever the protocol does (doc/soak.md).
for side in "$PA" "$PB"; do
	tel "$side" /uroce/workers | /usr/bin/python3 -c '
import json, sys
try:
    d = json.loads(sys.stdin.read())["/uroce/workers"]
    print("    " + sys.argv[1] + " workers: " + " ".join(
        "%s: late_rounds=%d max_late_us=%d" % (k, v["late_rounds"], v["max_late_us"])
        for k, v in sorted(d.items())))
except Exception as e:
    print("    " + sys.argv[1] + " /uroce/workers: unreadable (telemetry: %s)" % e)' "$side"
done
for side in a b; do
	n=$(grep -c "responder refused\|requester gave up" "$WORK/$side.log")
	log "daemon $side logged $n refused request(s) or failed requester(s)"
	grep "responder refused\|requester gave up" "$WORK/$side.log" | head -20 | sed 's/^/    /'
done
flat "daemon A" "${samples_a[@]}"
flat "daemon B" "${samples_b[@]}"
for side in "$PA" "$PB"; do
	d=$(counter_of "$side" fault_dropped)
	u=$(counter_of "$side" fault_duplicated)
	o=$(counter_of "$side" fault_reordered)
	[ "${d:-0}" -gt 0 ] && [ "${u:-0}" -gt 0 ] && [ "${o:-0}" -gt 0 ] &&
		pass "$side: fault_dropped $d, fault_duplicated $u, fault_reordered $o" ||
		fail "$side: faults did not happen ($d/$u/$o)"
done
rt=$(dstat "$PA" retransmits)
[ "${rt:-0}" -gt 0 ] && pass "daemon A retransmitted $rt packets" || fail "no retransmission on A"
sleep 0.5
end_a=$(holdings "$PA" "$PID_A")
end_b=$(holdings "$PB" "$PID_B")
read -r s q _ <<<"$end_a"
read -r s2 q2 _ <<<"$end_b"
[ "$s $q $s2 $q2" = "0 0 0 0" ] && pass "after traffic: no session and no QP on either daemon" ||
	fail "after traffic: A $end_a; B $end_b"
log "A: ${samples_a[*]} | end $end_a"
log "B: ${samples_b[*]} | end $end_b"
stop_uroced "$PID_A" a
stop_uroced "$PID_B" b
finish
