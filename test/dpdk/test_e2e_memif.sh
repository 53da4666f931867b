#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# RDMA between two uroced over memif (A: memif server, B: memif client),
# --no-huge, one worker lcore each (A's on CPU 1, B's on CPU 0). Clients of
# A and B are ordinary processes; examples put side 0 on A and side 1 on B
# (UROCE_SOCKET / UROCE_PEER_SOCKET), uroce-perf servers sit on A and clients
# on B unless said otherwise.
#   Expect: every example passes across the two daemons, with the IPv4-mapped
#           GID (index 1) and with the IPv6 GID (index 2).
#   Expect: uroce-perf write/read/send/atomic bw and write/send lat pass with
#           --verify on both GIDs, and write at path MTUs 256, 512 and 1024.
#   Expect: with fault injection on daemon A, RX and TX (1%, then 10% drop,
#           plus duplication, reordering and corruption), transfers verify,
#           the fault counters and the transport's retransmission counters
#           move, and corrupted frames count as rx_icrc_errors.
#   Expect: /uroce/qps and /uroce/qp/stats,N show a running QP and its counters.
#   Expect: kill -9 of one client during traffic leaves another pair's
#           verified transfer unharmed, and both daemons end with no QP.
#   Expect: stopping daemon B under traffic fails A's sender with
#           RETRY_EXC_ERR (its peer is gone); B restarts and serves again.
# With E2E_WORKERS=2 (meson: test_e2e_memif_2w) each daemon has two workers,
# QPs are placed on both (the examples and uroce-perf runs alternate), frames
# that land on the other worker's queue are handed over, and every worker of
# each daemon must have carried RoCEv2 after the first part.
. "$(dirname "$0")/lib.sh"

require_root
require_uroced
require_clients
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd timeout coreutils
require_eal

MEMIF="$WORK/memif.sock"
PA="uroce-e2e-a-$$"
PB="uroce-e2e-b-$$"
PREFIXES+=("$PA" "$PB")

# start_pair [A_EXTRA [B_EXTRA]]: both daemons, memif link up.
start_pair() {
	memif_conf a 10 "${1:-}"
	memif_conf b 10 "${2:-}"
	start_uroced a - -c "$WORK/a.conf" || finish
	PID_A=$LAST_PID
	start_uroced b - -c "$WORK/b.conf" || finish
	PID_B=$LAST_PID
	wait_link "$PB" || finish
}

stop_pair() {
	stop_uroced "$PID_A" a
	stop_uroced "$PID_B" b
}

A_SOCK="$WORK/a.sock"
B_SOCK="$WORK/b.sock"

# --- 1. Examples and uroce-perf, no faults -------------------------------
start_pair ""
export UROCE_SOCKET="$A_SOCK" UROCE_PEER_SOCKET="$B_SOCK"
for gi in 1 2; do
	export UROCE_GID_INDEX=$gi
	run_example rc_pingpong "$A_SOCK" 200 4096
	run_example rdma_write_read "$A_SOCK"
	run_example atomic_counter "$A_SOCK" 3 200
	run_example ud_sendrecv "$A_SOCK" 32
done
unset UROCE_GID_INDEX UROCE_PEER_SOCKET

port=18600
for gi in 1 2; do
	for t in write read send atomic; do
		port=$((port + 1))
		perf_pair "bw-$t-x$gi" "$A_SOCK" "$B_SOCK" $port $t bw -x $gi -n 200 --verify
	done
	for t in write send; do
		port=$((port + 1))
		perf_pair "lat-$t-x$gi" "$A_SOCK" "$B_SOCK" $port $t lat -x $gi -n 200 --verify
	done
done
for m in 256 512 1024; do
	port=$((port + 1))
	perf_pair "mtu-$m" "$A_SOCK" "$B_SOCK" $port write bw -x 1 -m $m -s 20000 -n 100 --verify
	grep -q "Mtu             : $m\[B\]" "$WORK/mtu-$m.cli" && pass "path MTU $m in use" ||
		fail "path MTU $m not reported by uroce-perf"
done
if [ "${E2E_WORKERS:-1}" = 2 ]; then
	workers_busy "$A_SOCK" "daemon A, 2 workers"
	workers_busy "$B_SOCK" "daemon B, 2 workers"
fi

# --- 2. kill -9 of a client under traffic -------------------------------
# -D 60: the kill comes long before the end, however slowly the host runs.
timeout 120 "$UROCE_PERF" write bw -x 1 -D 60 --socket "$A_SOCK" -p 18700 >"$WORK/k1.srv" 2>&1 &
K1S=$!
PIDS+=("$K1S")
wait_listen 18700 "$K1S"
timeout 120 "$UROCE_PERF" write bw -x 1 -D 60 --socket "$B_SOCK" -p 18700 127.0.0.1 \
	>"$WORK/k1.cli" 2>&1 &
K1C=$!
PIDS+=("$K1C")
# Per-QP counters in telemetry while the pair runs: B's QP sends, A's receives.
# /uroce/qps may still list a QP of an earlier run being torn down, and the
# snapshot behind telemetry is refreshed in between: look at each listed QP
# until one is an RC QP in RTS that sends (bounded).
qs=""
qb=""
rts_sending() {
	local q out
	for q in $(TEL_TRIES=1 tel "$PB" /uroce/qps | /usr/bin/python3 -c '
import json, sys
try:
    print(*json.load(sys.stdin)["/uroce/qps"])
except Exception:
    pass'); do
		out=$(TEL_TRIES=1 tel "$PB" "/uroce/qp/stats,$q")
		qs="QP $q: $out"
		if echo "$out" | /usr/bin/python3 -c '
import json, sys
try:
    q = json.load(sys.stdin)["/uroce/qp/stats"]
    ok = q and q["state"] == "RTS" and q["type"] == "RC" and q["tx_packets"] > 0
except Exception:
    ok = False
sys.exit(0 if ok else 1)'; then
			qb=$q
			return 0
		fi
	done
	return 1
}
if wait_until 60 rts_sending; then
	pass "telemetry /uroce/qp/stats,$qb: RC QP in RTS, tx_packets counting"
else
	fail "telemetry /uroce/qp/stats: no RC QP in RTS sending within $(bound 60) s; last: $qs"
fi
kill -0 "$K1C" 2>/dev/null || fail "the client to kill had already ended: $(tail -2 "$WORK/k1.cli")"
kill -KILL "$K1C"
perf_pair "beside-kill" "$A_SOCK" "$B_SOCK" 18701 send bw -x 1 -n 300 --verify
wait "$K1C" 2>/dev/null
wait "$K1S" 2>/dev/null
no_qps() { [ "$(dstat "$PA" qps)" = 0 ] && [ "$(dstat "$PB" qps)" = 0 ]; }
wait_until 60 no_qps
qa=$(dstat "$PA" qps)
qb=$(dstat "$PB" qps)
[ "$qa" = 0 ] && [ "$qb" = 0 ] && pass "after kill -9: no QP left on A or B (reaped $(dstat "$PB" sessions_reaped))" ||
	fail "after kill -9: QPs left: A $qa, B $qb"

# --- 3. Daemon B stops under traffic: A's sender gets RETRY_EXC_ERR ----------
timeout 180 "$UROCE_PERF" write bw -x 1 -D 120 --socket "$B_SOCK" -p 18710 >"$WORK/r.srv" 2>&1 &
RS=$!
PIDS+=("$RS")
wait_listen 18710 "$RS"
r0=$(counter "$PB" 0 rx_roce_packets)
timeout 180 "$UROCE_PERF" write bw -x 1 -D 120 --socket "$A_SOCK" -p 18710 127.0.0.1 \
	>"$WORK/r.cli" 2>&1 &
RC=$!
PIDS+=("$RC")
# Under traffic: B has taken in a thousand frames of this run (however long
# the setup took on a loaded host).
v=$(counter_until "$PB" 0 rx_roce_packets -ge $((${r0:-0} + 1000)) 60)
[ "${v:-0}" -ge $((${r0:-0} + 1000)) ] || fail "no traffic from A to B within $(bound 60) s (rx_roce_packets ${r0:-?} -> ${v:-?})"
stop_uroced "$PID_B" b
wait "$RC"
rc=$?
if [ "$rc" -ne 0 ] && grep -q "RETRY_EXC_ERR" "$WORK/r.cli"; then
	pass "B gone: A's sender failed with RETRY_EXC_ERR ($(grep -o 'completion error [A-Z_]*' "$WORK/r.cli" | head -1))"
else
	fail "B gone: A's sender exit $rc without RETRY_EXC_ERR"
	tail -3 "$WORK/r.cli" | sed 's/^/    /'
	dump_stats "$PA"
fi
wait "$RS"
rc=$?
[ "$rc" -ne 0 ] && pass "B gone: its own client exited with an error ($rc): $(grep -m1 -o 'uroce-perf: .*' "$WORK/r.srv")" ||
	fail "B gone: its client exited 0"
rm -f "$B_SOCK"
start_uroced b - -c "$WORK/b.conf" || finish
PID_B=$LAST_PID
perf_pair "after-restart" "$A_SOCK" "$B_SOCK" 18711 read bw -x 1 -n 100 --verify
stop_pair

# --- 4. Fault injection -------------------------------------------------
# retrans_sum PREFIX: the counters that move when the transport recovers.
retrans_sum() {
	local s=0 c v
	for c in retransmits local_ack_timeout_err packet_seq_err out_of_sequence \
		duplicate_request implied_nak_seq_err; do
		v=$(dstat "$1" $c) # empty if unreadable: recorded, finish() fails
		s=$((s + ${v:-0}))
	done
	echo $s
}
# sum2 NAME: port counter NAME of A plus B's (an unreadable one counts 0 and
# is recorded as a failure).
sum2() {
	local a b
	a=$(counter "$PA" 0 "$1")
	b=$(counter "$PB" 0 "$1")
	echo $((${a:-0} + ${b:-0}))
}
for pct in 1 10; do
	frac=$(printf '0.%02d' "$pct")
	start_pair "fault_drop = $frac
fault_dup = 0.005
fault_reorder = 0.005
fault_corrupt = 0.005
fault_seed = $pct"
	port=$((18800 + pct * 10))
	for t in write read send atomic; do
		port=$((port + 1))
		size="-s 4096"
		[ $t = atomic ] && size=""
		# shellcheck disable=SC2086 # $size is zero or two words
		perf_pair "fault$pct-$t" "$A_SOCK" "$B_SOCK" $port $t bw -x 1 $size -n 60 --verify
	done
	fd=$(sum2 fault_dropped)
	fc=$(sum2 fault_corrupted)
	ic=$(sum2 rx_icrc_errors)
	rt=$(( $(retrans_sum "$PA") + $(retrans_sum "$PB") ))
	[ "$fd" -gt 0 ] && [ "$rt" -gt 0 ] &&
		pass "$pct% loss: $fd frames dropped, transport recovery counters sum $rt" ||
		fail "$pct% loss: dropped $fd, recovery counters $rt"
	[ "$fc" -gt 0 ] && [ "$ic" -gt 0 ] && [ "$ic" -le "$fc" ] &&
		pass "$pct% loss: $fc corrupted, $ic rejected by the ICRC check" ||
		fail "$pct% loss: corrupted $fc but rx_icrc_errors $ic"
	stop_pair
done

finish
