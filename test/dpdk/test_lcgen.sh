#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# The lcore load generator (doc/loadgen.md, "Stateful RC generator") between
# two uroced over memif, --no-huge, one worker each (A's on CPU 1, B's on
# CPU 0), idle_sleep_us = 10 so that the daemons yield. `uroce-ctl gen`
# puts the initiator on A's worker and the target on B's. CI time: 25-60 s.
#   Expect: RDMA WRITE, RDMA READ, SEND and ATOMIC (FETCH_AND_ADD,
#           COMPARE_AND_SWAP), all with verification, each run 2 s over 4
#           QPs, and a mix of all at 20000 messages: exit 0, every message
#           completed, no error, no
#           bad data, a non-zero rate, cycles per message from A's worker, and
#           (with verification) the target's windows and atomic words checked.
#   Expect: the first run drops no packet for want of the peer's MAC
#           (tx_neigh_pending 0 on both ports: resolved before GEN_START).
#   Expect: /uroce/gen on both daemons shows the running generators with a
#           rate and cycles per message; /uroce/workers counts their QPs.
#   Expect: bad options are refused with a sentence (exit 2), before or at the
#           daemon (a worker or GID index it does not have).
#   Expect: SIGINT to uroce-ctl gen mid-run stops it (exit 0, "signal"), and
#           SIGKILL mid-run too (the daemons reclaim the session): no QP, CQ,
#           MR or PD is left on either daemon, and no worker holds a QP.
#   Expect: daemon B stopped under load (SIGSTOP: it answers nothing) makes
#           A's initiator fail with RETRY_EXC_ERR within seconds, as A's
#           /uroce/gen shows while B is still stopped; once B goes on,
#           uroce-ctl gen reports it and exits 1 instead of hanging, and A is
#           left with no QP. B is frozen, its memif link still up: a peer
#           that answers nothing. A target daemon that exits is
#           stress_gen_peer_stop's (af_packet in CI, memif by hand).
. "$(dirname "$0")/lib.sh"

require_root
require_uroced
[ -n "${UROCE_CTL:-}" ] && [ -x "$UROCE_CTL" ] || skip "UROCE_CTL is not set (uroce-ctl not built: libpcap-dev missing)"
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd timeout coreutils
require_eal

MEMIF="$WORK/memif.sock"
PA="uroce-lcgen-a-$$"
PB="uroce-lcgen-b-$$"
PREFIXES+=("$PA" "$PB")
A_SOCK="$WORK/a.sock"
B_SOCK="$WORK/b.sock"
# Local ACK timeout 4.096 us * 2^17 = 0.54 s: on a shared 2-core machine a
# worker may wait for its CPU long enough that the default (67 ms, 8 tries)
# gives up on a peer that is only slow. The lost-target case keeps 15.
QPT=17

start_pair() {
	memif_conf a 10
	memif_conf b 10
	start_uroced a - -c "$WORK/a.conf" || finish
	PID_A=$LAST_PID
	start_uroced b - -c "$WORK/b.conf" || finish
	PID_B=$LAST_PID
	wait_link "$PB" || finish
}

# summary NAME: the summary line (last JSON line) of a run's stdout.
summary() {
	grep '"uroce_gen_summary"' "$WORK/$1.out" | tail -1
}

# gen NAME ARGS...: one uroce-ctl gen run from A to B, bounded; sets GEN_RC.
gen() {
	local name="$1"
	shift
	timeout 180 "$UROCE_CTL" gen --from "$A_SOCK" --to "$B_SOCK" -u "$QPT" --interval 500 "$@" \
		>"$WORK/$name.out" 2>"$WORK/$name.err"
	GEN_RC=$?
}

# check_run NAME EXTRA_PY: the run passed, with what every run must show, and
# EXTRA_PY (a Python expression over s, the summary) true.
check_run() {
	local name="$1" extra="$2" out
	if [ "$GEN_RC" -ne 0 ]; then
		fail "$name: uroce-ctl gen exit $GEN_RC"
		tail -5 "$WORK/$name.err" | sed 's/^/    /'
		return
	fi
	if out=$(summary "$name" | /usr/bin/python3 -c '
import json, sys
s = json.loads(sys.stdin.read())
rec = [json.loads(l) for l in open(sys.argv[1]) if "\"uroce_rate\"" in l]
t = s["total"]
ok = s["ok"] and s["stopped_by"] == "done" and t["errors"] == 0 and t["verify_bad"] == 0
ok = ok and t["msgs"] > 0 and s["msgs_per_s"] > 0 and t["msgs"] == s["initiator"]["posted"]
ok = ok and s["initiator"]["order_bad"] == 0 and s["error"] is None
# a rate record with messages in it, and A'"'"'s cycles per message beside it
ok = ok and any(r["msgs_per_s"] > 0 and (r["initiator_cycles_per_msg"] or 0) > 0 for r in rec)
ok = ok and (s["initiator"]["cycles_per_msg"] or 0) > 0
ok = ok and bool(eval(sys.argv[2]))
print("%d msgs, %.0f msg/s, %.3f Gb/s, %s cycles/msg on A, %s on B, per op %s" % (
    t["msgs"], s["msgs_per_s"], s["gbit_per_s"], s["initiator"]["cycles_per_msg"],
    s["target"]["cycles_per_msg"], {k: v for k, v in s["per_op"].items() if v}))
sys.exit(0 if ok else 1)' "$WORK/$name.out" "$extra" 2>&1); then
		pass "$name: $out"
	else
		fail "$name: $out"
		summary "$name" | sed 's/^/    /'
		tail -3 "$WORK/$name.err" | sed 's/^/    /'
	fi
}

# left SIDE: "qps cqs mrs pds worker_qps" of daemon SIDE (a or b).
left() {
	local prefix sock t w
	[ "$1" = a ] && prefix=$PA || prefix=$PB
	[ "$1" = a ] && sock=$A_SOCK || sock=$B_SOCK
	t=$(TEL_TRIES=2 tel "$prefix" /uroce/daemon/stats)
	w=$("$UROCE_CTL" workers --socket "$sock" --json 2>/dev/null)
	/usr/bin/python3 -c '
import json, sys
d = json.loads(sys.argv[1])["/uroce/daemon/stats"]
w = json.loads(sys.argv[2])["workers"]
print(d["qps"], d["cqs"], d["mrs"], d["pds"], sum(x["qps"] for x in w))' "$t" "$w" 2>/dev/null ||
		echo "unreadable"
}

# no_gen_left WHAT [A_only]: within 60 s, no QP, CQ, MR or PD on the daemons
# (no client holds any here) and no QP on any worker.
no_gen_left() {
	local what="$1" la lb="0 0 0 0 0" end=$(deadline 60)
	while :; do
		la=$(left a)
		[ "${2:-}" = A_only ] || lb=$(left b)
		[ "$la" = "0 0 0 0 0" ] && [ "$lb" = "0 0 0 0 0" ] && break
		[ "$SECONDS" -ge "$end" ] && break
		sleep 0.2
	done
	if [ "$la" = "0 0 0 0 0" ] && [ "$lb" = "0 0 0 0 0" ]; then
		pass "$what: no QP, CQ, MR or PD left, none on a worker${2:+ (A)}"
	else
		fail "$what: left (qps cqs mrs pds worker-qps): A $la, B $lb"
	fi
}

# gen_running PID: A's /uroce/gen shows one initiator running that has
# completed messages (bounded: 60 s), while uroce-ctl gen PID still runs.
gen_running() {
	wait_until 60 gen_runs "$PA" "$1"
}

start_pair

# --- 1. The four operations ---------------------------------------------------
gen write --qps 4 --mix write:64:3,write:4K:1 -D 2 --verify
check_run write 's["per_op"]["write"] == s["total"]["msgs"] and s["target"]["scan_bytes"] > 0 and s["target"]["scan_bad"] == 0'
# That was the first traffic between the two: GEN_CONNECT asked each port for
# the other's MAC and GEN_START waited for A's answer, so no packet was
# dropped for want of one (dataplane.md, "Resolved before the first packet").
np=""
for p in "$PA" "$PB"; do
	np+="$(TEL_TRIES=2 tel "$p" /uroce/port/stats,0 | /usr/bin/python3 -c '
import json, sys
print(json.loads(sys.stdin.read())["/uroce/port/stats"]["tx_neigh_pending"])' 2>/dev/null || echo unreadable) "
done
if [ "$np" = "0 0 " ]; then
	pass "first run: no packet dropped while a MAC was resolved (tx_neigh_pending 0 on A and B)"
else
	fail "first run: tx_neigh_pending on A and B: $np(expected 0 0)"
fi
gen read --qps 4 --mix read:64,read:1K,read:16K -D 2 --verify
check_run read 's["per_op"]["read"] == s["total"]["msgs"] and s["total"]["bytes"] > s["total"]["msgs"] * 64'
gen send --qps 4 --mix send:64,send:3000 -D 2 --verify
check_run send 's["target"]["recv"] == s["total"]["msgs"] and s["target"]["recv_bytes"] == s["total"]["bytes"] and s["target"]["verify_bad"] == 0'
gen atomic --qps 4 --mix fadd:8:1,cswap:8:1 -D 2 --verify
check_run atomic 's["per_op"]["fadd"] > 0 and s["per_op"]["cswap"] > 0 and s["atomic_words_match"]'
gen mixed --qps 2 --ops write,read,send,atomic --sizes 64,2K -n 20000 --window 8 --verify
check_run mixed 's["total"]["msgs"] == 20000 and all(v > 0 for v in s["per_op"].values())'

# --- 2. Telemetry while it runs --------------------------------------------------
# Until A's /uroce/gen shows the initiator running with a rate (its rates
# need a second of snapshots; setup may be slow on a loaded machine), then
# B's and the worker counts, then SIGINT ends the run.
timeout 300 "$UROCE_CTL" gen --from "$A_SOCK" --to "$B_SOCK" -u "$QPT" --qps 2 -D 120 -q \
	>"$WORK/tel.out" 2>"$WORK/tel.err" &
TP=$!
PIDS+=("$TP")
tel_ok=0
ta=""
tb=""
end=$(deadline 60)
while [ "$SECONDS" -lt "$end" ]; do
	sleep 0.5
	ta=$(TEL_TRIES=1 tel "$PA" /uroce/gen)
	if echo "$ta" | /usr/bin/python3 -c '
import json, sys
try:
    g = list(json.loads(sys.stdin.read())["/uroce/gen"].values())
except Exception:
    sys.exit(1)
ok = len(g) == 1 and g[0]["role"] == "initiator" and g[0]["state"] == "running"
ok = ok and g[0]["msgs_per_s"] > 0 and g[0]["cycles_per_msg"] > 0 and g[0]["qps"] == 2
ok = ok and g[0]["completed"] > 0 and g[0]["errors"] == 0 and g[0]["verify_bad"] == 0
ok = ok and g[0]["posted"] >= g[0]["completed"] and 0 < g[0]["worker_busy_permille"] <= 1000
ok = ok and abs(g[0]["bytes_per_s"] - g[0]["msgs_per_s"] * 64) < 64  # all 64 B
print(g)
sys.exit(0 if ok else 1)' >"$WORK/tel-a.txt" 2>&1; then
		tel_ok=1
		break
	fi
done
# B's the same way (a telemetry query may time out on a loaded machine).
tb_ok=0
end=$(deadline 60)
while [ "$SECONDS" -lt "$end" ]; do
	tb=$(TEL_TRIES=1 tel "$PB" /uroce/gen)
	if echo "$tb" | /usr/bin/python3 -c '
import json, sys
try:
    g = list(json.loads(sys.stdin.read())["/uroce/gen"].values())
except Exception:
    sys.exit(1)
sys.exit(0 if len(g) == 1 and g[0]["role"] == "target" and g[0]["state"] == "ready" and
         g[0]["qps"] == 2 and g[0]["errors"] == 0 else 1)' 2>/dev/null; then
		tb_ok=1
		break
	fi
	sleep 0.5
done
if [ "$tel_ok" = 1 ] && [ "$tb_ok" = 1 ]; then
	pass "/uroce/gen: A runs an initiator ($(grep -o "'msgs_per_s': [0-9]*, 'bytes_per_s': [0-9]*, 'cycles_per_msg': [0-9]*" "$WORK/tel-a.txt")), B a target"
else
	fail "/uroce/gen: A: $ta B: $tb"
fi
wq=$("$UROCE_CTL" workers --socket "$A_SOCK" --json 2>&1 | /usr/bin/python3 -c '
import json, sys
try:
    print(sum(w["qps"] for w in json.load(sys.stdin)["workers"]))
except Exception as e:
    print("unreadable (%r)" % e)')
[ "$wq" = 2 ] && pass "uroce-ctl workers counts the generator's 2 QPs on A" ||
	fail "uroce-ctl workers: $wq QPs on A, expected 2"
kill -INT "$TP"
wait "$TP"
GEN_RC=$?
[ "$GEN_RC" -eq 0 ] && pass "the telemetry run ended cleanly on SIGINT" ||
	fail "telemetry run exit $GEN_RC; $(tail -2 "$WORK/tel.err")"

# --- 3. Bad options ----------------------------------------------------------
bad() {
	local want="$1" rc
	shift
	timeout 180 "$UROCE_CTL" gen --from "$A_SOCK" --to "$B_SOCK" -D 1 "$@" >"$WORK/bad.out" 2>"$WORK/bad.err"
	rc=$?
	if [ "$rc" -eq 2 ] && grep -q -- "$want" "$WORK/bad.err"; then
		pass "refused: gen $* ($(head -1 "$WORK/bad.err"))"
	else
		fail "gen $*: exit $rc, stderr: $(cat "$WORK/bad.err")"
	fi
}
bad "size '0'" --mix write:0
bad "8 bytes" --mix fadd:16
bad "unknown operation" --mix wrte:64
bad "--window" --window 0
bad "no worker 3" --worker 3
bad "no GID at index 7" -x 7
bad "--mix is the whole mix" --mix write --ops read
bad "--qp-timeout" -u 0
no_gen_left "after the refused options"

# --- 4. Stopping mid-run --------------------------------------------------------
timeout 300 "$UROCE_CTL" gen --from "$A_SOCK" --to "$B_SOCK" -u "$QPT" --qps 8 --mix write:64,read:1K -D 120 \
	-q >"$WORK/int.out" 2>"$WORK/int.err" &
IP=$!
PIDS+=("$IP")
gen_running "$IP" || fail "SIGINT case: the generator was not running within $(bound 60) s"
kill -INT "$IP"
wait "$IP"
rc=$?
if [ "$rc" -eq 0 ] && summary int | grep -q '"stopped_by":"signal"'; then
	pass "SIGINT mid-run: exit 0, stopped by the signal ($(summary int | grep -o '"msgs":[0-9]*' | head -1))"
else
	fail "SIGINT mid-run: exit $rc; $(tail -2 "$WORK/int.err")"
fi
no_gen_left "after SIGINT"
"$UROCE_CTL" gen --from "$A_SOCK" --to "$B_SOCK" -u "$QPT" --qps 8 --mix send:1K -D 120 -q \
	>"$WORK/kill.out" 2>"$WORK/kill.err" &
KP=$!
PIDS+=("$KP")
gen_running "$KP" || fail "SIGKILL case: the generator was not running within $(bound 60) s"
kill -KILL "$KP"
wait "$KP" 2>/dev/null
no_gen_left "after SIGKILL of uroce-ctl gen"

# --- 5. The target's daemon stops answering ---------------------------------------
# a_gen_failed: A's /uroce/gen shows an initiator with an error completion
# of status 12 (RETRY_EXC_ERR).
a_gen_failed() {
	TEL_TRIES=1 tel "$PA" /uroce/gen | /usr/bin/python3 -c '
import json, sys
try:
    g = list(json.loads(sys.stdin.read())["/uroce/gen"].values())
    sys.exit(0 if any(x["role"] == "initiator" and x["errors"] > 0 and x["err_status"] == 12
                      for x in g) else 1)
except Exception:
    sys.exit(1)'
}
timeout 300 "$UROCE_CTL" gen --from "$A_SOCK" --to "$B_SOCK" -u 15 --qps 4 --mix write:64,read:64 -D 120 \
	--interval 250 >"$WORK/lost.out" 2>"$WORK/lost.err" &
LP=$!
PIDS+=("$LP")
gen_running "$LP" || fail "lost-target case: the generator was not running within $(bound 60) s"
t0=$(date +%s.%N)
kill -STOP "$PID_B"
# -u 15: 134 ms a try, 8 tries: about 1 s; the bound allows for a busy host.
if wait_until 60 a_gen_failed; then
	t1=$(date +%s.%N)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	pass "B stopped: A's initiator failed with RETRY_EXC_ERR ${secs} s after B stopped"
else
	fail "B stopped: A's /uroce/gen shows no RETRY_EXC_ERR within $(bound 60) s"
fi
kill -CONT "$PID_B"
wait "$LP"
rc=$?
if [ "$rc" -eq 1 ] && summary lost | grep -q '"status":"RETRY_EXC_ERR"' &&
	summary lost | grep -q '"qp_timeout":15,' &&
	grep -q "RETRY_EXC_ERR" "$WORK/lost.err"; then
	pass "B stopped: uroce-ctl gen reported RETRY_EXC_ERR and exited 1 once B went on"
else
	fail "B stopped: uroce-ctl gen exit $rc; $(tail -3 "$WORK/lost.err" | tr '\n' ' ')"
	summary lost | sed 's/^/    /'
fi
no_gen_left "A and B after B's stop"
stop_uroced "$PID_B" b
stop_uroced "$PID_A" a

finish
