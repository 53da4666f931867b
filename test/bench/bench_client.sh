#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Benchmark (suite 'perf'): the client path (issue 10). One uroced with no
# port, its one worker busy-polling (idle_sleep_us 0) on CPU 1; uroce-perf
# client and server on CPU 0, so two CPUs carry the two busy threads:
#   64 B WRITE, READ, SEND, ATOMIC bw; 64 KiB WRITE and READ bw (-D BENCH_SECONDS),
#   every WR signaled; 64 B WRITE bw with perftest's -Q 100;
#   64 B READ lat (the server only waits) and WRITE lat (both ends poll
#   memory: with 3 CPUs or more its server polls CPU 2; on 2 CPUs both share
#   CPU 0 and a round trip waits for the scheduler's time slice, some 7 ms,
#   so it runs BENCH_LAT_ITERS_SHARED iterations and measures the scheduler,
#   not uroce; kept to show it); SEND bw with -e (both ends sleep on
#   their CQ's fd: a busy receiver would lose CPU 0 to the sender);
# beside, in the same run: bench_engine (two engines on one core, the
# transport's ceiling) and bench_xcore (the cross-core cache-line round trip).
# For each uroce-perf row the worker's busy cycles per WQE, from its own
# accounting (uroce-ctl workers), and its sleeps (must stay 0: a sleeping
# worker is not measured). Prints one table and the ratios the issue sets;
# never fails on a number: exit 1 only when a run fails, 77 when not root or
# a tool is missing.
# Knobs: BENCH_SECONDS (3), BENCH_LAT_ITERS (20000), BENCH_LAT_ITERS_SHARED
# (200: WRITE lat with both ends on CPU 0), BENCH_PORT (19700),
# BENCH_ROWS (the rows to run, e.g. "write-bw-64 read-bw-64k"; default all).
# shellcheck source=../dpdk/lib.sh
. "$(dirname "$0")/../dpdk/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (DPDK EAL for uroced)"
require_uroced
[ -n "${UROCE_PERF:-}" ] && [ -x "$UROCE_PERF" ] || skip "UROCE_PERF is not set"
[ -n "${UROCE_CTL:-}" ] && [ -x "$UROCE_CTL" ] || skip "UROCE_CTL is not set"
[ -n "${BENCH_ENGINE:-}" ] && [ -x "$BENCH_ENGINE" ] || skip "BENCH_ENGINE is not set"
[ -n "${BENCH_XCORE:-}" ] && [ -x "$BENCH_XCORE" ] || skip "BENCH_XCORE is not set"
require_cmd timeout coreutils
require_cmd taskset util-linux
[ "$(nproc)" -ge 2 ] || skip "needs two CPUs"
require_eal

SECS=${BENCH_SECONDS:-3}
LAT_ITERS=${BENCH_LAT_ITERS:-20000}
LAT_ITERS_SHARED=${BENCH_LAT_ITERS_SHARED:-200}
PORT=${BENCH_PORT:-19700}
P="uroce-bc-$$"
PREFIXES+=("$P")
SOCK="$WORK/d.sock"
RES="$WORK/results"
: >"$RES"

cat >"$WORK/d.conf" <<CONF
[eal]
lcores = 0@0,1@1
no_huge = yes
memory = 512
file_prefix = $P
[daemon]
socket = $SOCK
[limits]
idle_sleep_us = 0
CONF
start_uroced d - -c "$WORK/d.conf" || finish
PID_D=$LAST_PID

# run KEY KIND ARGS...: uroce-perf server and client on CPU 0; records
# "KEY value cycles_per_wqe sleeps" (bw: MB/s and Mpps; lat: t_typical).
run() {
	local key="$1" kind="$2" spid rc_c rc_s row val b0 w0 s0 b1 w1 s1 c
	shift 2
	# BENCH_ROWS: only these rows (keys as in the table), e.g. to repeat a few.
	case " ${BENCH_ROWS:-$key} " in *" $key "*) ;; *) return ;; esac
	PORT=$((PORT + 1))
	read -r b0 w0 s0 <<<"$(wstat "$SOCK")"
	taskset -c "${SRV_CPU:-0}" timeout 120 "$UROCE_PERF" "$@" --socket "$SOCK" -p "$PORT" \
		>"$WORK/$key.srv" 2>&1 &
	spid=$!
	sleep 0.3
	taskset -c 0 timeout 120 "$UROCE_PERF" "$@" --socket "$SOCK" -p "$PORT" 127.0.0.1 \
		>"$WORK/$key.cli" 2>&1
	rc_c=$?
	wait "$spid"
	rc_s=$?
	read -r b1 w1 s1 <<<"$(wstat "$SOCK")"
	row=$(grep -A1 '#bytes' "$WORK/$key.cli" | tail -1)
	if [ "$rc_c" -ne 0 ] || [ "$rc_s" -ne 0 ] || [ -z "$row" ]; then
		fail "$key: client exit $rc_c, server exit $rc_s"
		tail -n 3 "$WORK/$key.cli" "$WORK/$key.srv" | sed 's/^/    /'
		return
	fi
	# bw rows: bytes iters peak avg(MB/s) rate(Mpps); lat: bytes iters min max typical
	if [ "$kind" = bw ]; then val=$(echo "$row" | awk '{print $4 " " $5}')
	else val=$(echo "$row" | awk '{print $5 " -"}'); fi
	c=$(cpw "$b0" "$w0" "$b1" "$w1")
	echo "$key $val $c $((s1 - s0))" >>"$RES"
	log "$key: $row (worker: $c busy cycles per WQE, $((s1 - s0)) sleeps)"
}

# The bw rows signal every WR (-Q 1), as uroce-perf did before it had -Q,
# so that a before/after run (bench_ab.sh) compares like with like; the
# -q100 row is perftest's default moderation (one CQE per 100 WRs).
SIG_EVERY=()
if "$UROCE_PERF" --help 2>&1 | grep -q -- --cq-mod; then SIG_EVERY=(-Q 1); fi
run write-bw-64 bw write bw -s 64 -D "$SECS" -t 128 "${SIG_EVERY[@]}"
[ ${#SIG_EVERY[@]} -eq 0 ] || run write-bw-64-q100 bw write bw -s 64 -D "$SECS" -t 128 -Q 100
run read-bw-64 bw read bw -s 64 -D "$SECS" -t 128 "${SIG_EVERY[@]}"
# The SEND receiver reposts its receives: busy beside the sender on CPU 0 it
# would be descheduled for whole time slices (RNR NAKs); both sleep instead.
run send-bw-64 bw send bw -s 64 -D "$SECS" -t 128 -e "${SIG_EVERY[@]}"
run atomic-bw bw atomic bw -D "$SECS" -t 128 "${SIG_EVERY[@]}"
run write-bw-64k bw write bw -s 65536 -D "$SECS" -t 128 "${SIG_EVERY[@]}"
run read-bw-64k bw read bw -s 65536 -D "$SECS" -t 128 "${SIG_EVERY[@]}"
run read-lat-64 lat read lat -s 64 -n "$LAT_ITERS"
if [ "$(nproc)" -ge 3 ]; then
	SRV_CPU=2 run write-lat-64 lat write lat -s 64 -n "$LAT_ITERS"
else
	log "write-lat-64: both uroce-perf ends poll memory and share CPU 0 (2 CPUs): -n $LAT_ITERS_SHARED, a figure of the scheduler's time slice"
	run write-lat-64 lat write lat -s 64 -n "$LAT_ITERS_SHARED"
fi
stop_uroced "$PID_D" d

ENG=$(taskset -c 1 "$BENCH_ENGINE" 2>&1)
echo "$ENG" | sed 's/^/    /'
XC=$("$BENCH_XCORE" 0 1 200000 2>&1)
echo "    $XC"
# bench_engine prints "RDMA WRITE 64 B: N msgs/s" style rows; take WRITE's rate.
eng_w=$(echo "$ENG" | awk '/WRITE/ { for (i = 1; i <= NF; i++) if ($(i+1) ~ /msg/) { print $i; exit } }')
xc_ns=$(echo "$XC" | awk '{ for (i = 1; i <= NF; i++) if ($(i+1) == "ns") print $i }')

echo
echo "| row | result | worker busy cycles / WQE | worker sleeps |"
echo "|---|---:|---:|---:|"
while read -r key a b c sl; do
	case "$key" in
	*-bw-64k) echo "| $key | $a MB/s | $c | $sl |" ;;
	*-bw*) echo "| $key | $b M msg/s | $c | $sl |" ;;
	*) echo "| $key | $a µs t_typical | $c | $sl |" ;;
	esac
done <"$RES"
echo "| bench_engine WRITE 64 B (one core) | $eng_w msg/s | | |"
echo "| cross-core cache-line round trip | $xc_ns ns | | |"
w64=$(awk '$1 == "write-bw-64" { print $3 }' "$RES")
if [ -n "$w64" ] && [ -n "$eng_w" ]; then
	/usr/bin/python3 -c 'import sys; w, e = float(sys.argv[1]) * 1e6, float(sys.argv[2]); print("ratio: client-path WRITE 64 B / bench_engine WRITE = %.2f" % (w / e))' "$w64" "$eng_w"
fi
finish
