#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Benchmark (suite 'perf'): scaling over worker lcores, with no client
# process. One uroced with no port (its loopback), W workers busy-polling
# CPUs of their own, and W stateful generators (`uroce-ctl gen`,
# doc/loadgen.md) run at once, each with its initiator and its target on
# workers of that daemon:
#   self   generator k's initiator and target both on worker k: what each
#          worker does alone, and what the workers cost one another (shared
#          lines, the memory system) when they run side by side;
#   cross  initiator on worker k, target on worker k+1 (mod W): every packet
#          is handed from one worker to the other (W >= 2).
# Each worker then carries one initiator and one target in both layouts. A
# generator is a client inside the daemon, so nothing but the workers is
# busy, and W can reach the CPU count (scale-workers.sh, with a busy
# uroce-perf client per worker, needs 2W+1 CPUs). The main lcore shares the
# first CPU (it sleeps in the control loop); with W below the CPU count the
# workers take CPUs 2..W+1 of the affinity list and leave the first alone.
# For each W and layout: aggregate messages/s, its ratio to one worker in
# the same round, each worker's rate and busy cycles per message (its own TSC
# accounting), the worst cycles per message against the one-worker figure,
# and the slowest worker against the mean (issue 18's scaling criteria).
# It never fails on a number: exit 1 only when a run fails, 77 when not root
# or a tool is missing.
# Knobs: BENCH_WORKERS (default "1 2 4 7", each capped at the CPU count, a W
# above it is left out with a line saying so), BENCH_ROUNDS (2: the list is
# run that many times, alternating its order), BENCH_GEN_SECS (3),
# BENCH_GEN_QPS (8 per generator), BENCH_GEN_WINDOW (32), BENCH_GEN_MIX
# (write:64), BENCH_PLACE ("self cross").
# shellcheck source=../dpdk/lib.sh
. "$(dirname "$0")/../dpdk/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (DPDK EAL for uroced)"
require_uroced
[ -n "${UROCE_CTL:-}" ] && [ -x "$UROCE_CTL" ] || skip "UROCE_CTL is not set (uroce-ctl not built)"
require_cmd timeout coreutils
require_cmd taskset util-linux
require_eal

SECS=${BENCH_GEN_SECS:-3}
QPS=${BENCH_GEN_QPS:-8}
WINDOW=${BENCH_GEN_WINDOW:-32}
MIX=${BENCH_GEN_MIX:-write:64}
ROUNDS=${BENCH_ROUNDS:-2}
PLACES=${BENCH_PLACE:-"self cross"}
# The CPUs this script may use, in order (taskset's list, ranges expanded).
mapfile -t CPUS < <(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' |
	awk -F- '{ if (NF == 2) for (i = $1; i <= $2; i++) print i; else print $1 }')
NCPU=${#CPUS[@]}
WLIST=()
for w in ${BENCH_WORKERS:-1 2 4 7}; do
	case "$w" in '' | *[!0-9]* | 0) skip "BENCH_WORKERS: '$w' is not a worker count" ;; esac
	if [ "$w" -gt "$NCPU" ]; then
		log "W=$w left out: more busy workers than the $NCPU CPUs this script may use"
		continue
	fi
	WLIST+=("$w")
done
[ ${#WLIST[@]} -gt 0 ] || skip "no worker count in BENCH_WORKERS fits $NCPU CPUs"
for p in $PLACES; do
	case "$p" in self | cross) ;; *) skip "BENCH_PLACE: unknown layout '$p'" ;; esac
done
RES="$WORK/results"
: >"$RES"

# lcores W: "main@cpu,1@cpu,...": workers on CPUs 2..W+1 of the list while
# they fit beside the main lcore's CPU, else on all W with the main lcore
# sharing the first.
lcores() {
	local w=$1 i first=1 s
	[ "$w" -lt "$NCPU" ] || first=0
	s="0@${CPUS[0]}"
	for ((i = 0; i < w; i++)); do s+=",$((i + 1))@${CPUS[$((first + i))]}"; done
	echo "$s"
}

# one_run ROUND W PLACE: W generators at once; appends
# "ROUND W PLACE worker msgs_per_s cycles_per_msg busy" per generator.
one_run() {
	local r=$1 w=$2 place=$3 k t pids=() rc=0 p="uroce-bw-$$-$2-$1" sock="$WORK/d.sock"
	PREFIXES+=("$p")
	cat >"$WORK/d.conf" <<CONF
[eal]
lcores = $(lcores "$w")
no_huge = yes
memory = $((256 + 128 * w))
file_prefix = $p
[daemon]
socket = $sock
[limits]
idle_sleep_us = 0
CONF
	start_uroced "d$w" - -c "$WORK/d.conf" || return 1
	local pid=$LAST_PID
	for ((k = 0; k < w; k++)); do
		t=$k
		[ "$place" = cross ] && t=$(((k + 1) % w))
		timeout $((SECS + 60)) "$UROCE_CTL" gen --from "$sock" -x 0 -u 17 \
			--worker "$k" --target-worker "$t" --qps "$QPS" --window "$WINDOW" \
			--mix "$MIX" -D "$SECS" -q --json "$WORK/g$k.json" \
			>"$WORK/g$k.out" 2>"$WORK/g$k.err" &
		pids+=($!)
	done
	for ((k = 0; k < w; k++)); do
		if ! wait "${pids[$k]}"; then
			fail "round $r, W=$w $place: generator on worker $k failed"
			tail -3 "$WORK/g$k.err" | sed 's/^/    /'
			rc=1
			continue
		fi
		/usr/bin/python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
a = s["initiator"]
print(*sys.argv[2:], a["worker"], "%.0f" % s["msgs_per_s"],
      "%.0f" % (a["cycles_per_msg"] or 0), "%.3f" % (a["busy"] or 0))' \
			"$WORK/g$k.json" "$r" "$w" "$place" >>"$RES" || { fail "no summary from worker $k"; rc=1; }
	done
	stop_uroced "$pid" "d$w"
	return $rc
}

log "start $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $NCPU CPUs (${CPUS[*]}); load average $(cut -d' ' -f1-3 /proc/loadavg)"
log "workers ${WLIST[*]}; layouts $PLACES; $ROUNDS rounds; per generator $QPS QPs, window $WINDOW, mix $MIX, $SECS s"
for ((r = 1; r <= ROUNDS; r++)); do
	order=("${WLIST[@]}")
	# Even rounds run the list backwards, so that a drift of the host
	# does not always favour the same W.
	if [ $((r % 2)) -eq 0 ]; then
		order=()
		for ((i = ${#WLIST[@]} - 1; i >= 0; i--)); do order+=("${WLIST[$i]}"); done
	fi
	for w in "${order[@]}"; do
		for place in $PLACES; do
			[ "$place" = cross ] && [ "$w" -lt 2 ] && continue
			one_run "$r" "$w" "$place"
		done
	done
done

echo
/usr/bin/python3 - "$RES" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
runs = {}
for r, w, place, worker, rate, cyc, busy in rows:
    runs.setdefault((int(r), int(w), place), []).append((int(worker), float(rate), float(cyc), float(busy)))
print("| round | workers | layout | aggregate M msg/s | x one worker | per worker M msg/s"
      " | busy cycles/msg per worker | worst cycles vs one worker | slowest / mean |")
print("|---|---:|---|---:|---:|---|---|---:|---:|")
for (r, w, place), g in sorted(runs.items()):
    g.sort()
    one = runs.get((r, 1, "self"))
    agg = sum(x[1] for x in g)
    mean = agg / len(g)
    x1 = "%.2f" % (agg / one[0][1]) if one else "-"
    worst = "%.2f" % (max(x[2] for x in g) / one[0][2]) if one and one[0][2] else "-"
    print("| %d | %d | %s | %.2f | %s | %s | %s | %s | %.2f |" % (
        r, w, place, agg / 1e6, x1, ", ".join("%.2f" % (x[1] / 1e6) for x in g),
        ", ".join("%.0f" % x[2] for x in g), worst, min(x[1] for x in g) / mean))
PY
finish
