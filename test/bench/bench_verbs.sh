#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Benchmark (suite 'perf'): what the drop-in libibverbs.so.1 costs. The same
# two uroced over memif (as test_e2e_memif sets them up: --no-huge, one
# worker each, idle_sleep_us 10), the same tests, once with uroce-perf over
# liburoce and once with the unmodified Debian perftest through drivers/verbs
# (uroce-run), in alternation so that drift on the machine hits both alike:
#   write, read, send bw at 64 B and 64 KiB (BENCH_BW_ITERS iterations);
#   write, send, read lat at 64 B (BENCH_LAT_ITERS iterations);
# perftest both as an unknown device (ibv_post_send) and as a ConnectX-5
# (--as-connectx: the ibv_wr_* path, inline for latency).
# Prints one table: MB/s (bw) or typical µs (lat) for each, and perftest's
# value over uroce-perf's. It never fails on a number: exit 1 only if a run
# fails, 77 when not root or a tool is missing. The numbers are only worth
# recording from a quiet machine (doc/benchmarks.md).
# Knobs: BENCH_BW_ITERS (5000), BENCH_LAT_ITERS (5000), BENCH_PORT (19600).
# shellcheck source=../dpdk/lib.sh
. "$(dirname "$0")/../dpdk/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (DPDK EAL for uroced)"
require_uroced
[ -n "${UROCE_PERF:-}" ] && [ -x "$UROCE_PERF" ] || skip "UROCE_PERF is not set"
[ -n "${UROCE_RUN:-}" ] && [ -x "$UROCE_RUN" ] || skip "UROCE_RUN is not set (drivers/verbs not built)"
require_cmd timeout coreutils
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd ib_write_bw perftest
require_eal

BW_ITERS=${BENCH_BW_ITERS:-5000}
LAT_ITERS=${BENCH_LAT_ITERS:-5000}
PORT=${BENCH_PORT:-19600}
MEMIF="$WORK/memif.sock"
PA="uroce-bv-a-$$"
PB="uroce-bv-b-$$"
PREFIXES+=("$PA" "$PB")
A_SOCK="$WORK/a.sock"
B_SOCK="$WORK/b.sock"
RES="$WORK/results"
: >"$RES"

memif_conf a 10
memif_conf b 10
start_uroced a - -c "$WORK/a.conf" || finish
PID_A=$LAST_PID
start_uroced b - -c "$WORK/b.conf" || finish
PID_B=$LAST_PID
for _ in $(seq 50); do
	tel "$PB" /uroce/port/info,0 | grep -q '"link_up": 1' && break
	sleep 0.1
done

# run KEY KIND SRV_CMD... -- CLI_CMD...: a server on A, a client on B;
# records KEY and the client's value (bw: BW average MB/s, lat: t_typical).
run() {
	local key="$1" kind="$2" srv=() cli=() spid rc_c rc_s row val
	shift 2
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	timeout 120 "${srv[@]}" >"$WORK/$key.srv" 2>&1 &
	spid=$!
	sleep 0.5
	timeout 120 "${cli[@]}" >"$WORK/$key.cli" 2>&1
	rc_c=$?
	wait "$spid"
	rc_s=$?
	row=$(grep -A1 '#bytes' "$WORK/$key.cli" | tail -1)
	if [ "$rc_c" -ne 0 ] || [ "$rc_s" -ne 0 ] || [ -z "$row" ]; then
		fail "$key: client exit $rc_c, server exit $rc_s"
		tail -n 3 "$WORK/$key.cli" "$WORK/$key.srv" | sed 's/^/    /'
		return
	fi
	# bw rows: bytes iters peak avg rate; lat rows: bytes iters min max typical ...
	if [ "$kind" = bw ]; then val=$(echo "$row" | awk '{print $4}')
	else val=$(echo "$row" | awk '{print $5}'); fi
	echo "$key $val" >>"$RES"
	log "$key: $row"
}

# perf_pair NAME OP KIND SIZE ITERS: uroce-perf, perftest, perftest as ConnectX.
perf_pair() {
	local op="$1" kind="$2" size="$3" iters="$4" name="$1-$2-$3"
	PORT=$((PORT + 1))
	run "uroce-perf:$name" "$kind" "$UROCE_PERF" "$op" "$kind" -x 1 -s "$size" -n "$iters" \
		--socket "$A_SOCK" -p $PORT -- \
		"$UROCE_PERF" "$op" "$kind" -x 1 -s "$size" -n "$iters" --socket "$B_SOCK" \
		-p $PORT 127.0.0.1
	PORT=$((PORT + 1))
	run "perftest:$name" "$kind" env UROCE_SOCKET="$A_SOCK" "$UROCE_RUN" "ib_${op}_$kind" \
		-x 1 -F -s "$size" -n "$iters" -p $PORT -- \
		env UROCE_SOCKET="$B_SOCK" "$UROCE_RUN" "ib_${op}_$kind" -x 1 -F -s "$size" \
		-n "$iters" -p $PORT 127.0.0.1
	PORT=$((PORT + 1))
	run "perftest-cx:$name" "$kind" env UROCE_SOCKET="$A_SOCK" "$UROCE_RUN" --as-connectx \
		"ib_${op}_$kind" -x 1 -F -s "$size" -n "$iters" -p $PORT -- \
		env UROCE_SOCKET="$B_SOCK" "$UROCE_RUN" --as-connectx "ib_${op}_$kind" -x 1 -F \
		-s "$size" -n "$iters" -p $PORT 127.0.0.1
}

log "start $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
for op in write read send; do
	perf_pair $op bw 64 "$BW_ITERS"
	perf_pair $op bw 65536 "$BW_ITERS"
done
for op in write send read; do
	perf_pair $op lat 64 "$LAT_ITERS"
done
stop_uroced "$PID_A" a
stop_uroced "$PID_B" b

get() { awk -v k="$1" '$1 == k { v = $2 } END { print (v == "" ? "-" : v) }' "$RES"; }
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-";
		else printf "%.3f\n", a / b }'
}
echo
echo "perftest through drivers/verbs vs uroce-perf over liburoce, same two uroced over memif"
printf '%-16s %12s %12s %12s %10s %10s\n' test uroce-perf perftest perftest-cx "pt/up" "ptcx/up"
for name in write-bw-64 write-bw-65536 read-bw-64 read-bw-65536 send-bw-64 send-bw-65536 \
	write-lat-64 send-lat-64 read-lat-64; do
	u=$(get "uroce-perf:$name")
	p=$(get "perftest:$name")
	c=$(get "perftest-cx:$name")
	printf '%-16s %12s %12s %12s %10s %10s\n' "$name" "$u" "$p" "$c" "$(ratio "$p" "$u")" \
		"$(ratio "$c" "$u")"
done
echo "(bw: MB/s, BW average; lat: typical one-way latency in us; ratios > 1 are faster"
echo " for bw, slower for lat)"
finish
