#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Benchmark (suite 'perf'): what RDMA through two uroced over memif costs,
# next to the two things it is built from, all on this machine, one run:
#   1. uroce-perf between two uroced over memif (--no-huge, one worker lcore
#      each, busy-polling: idle_sleep_us = 0; A's on CPU 1, B's on CPU 0);
#      servers on A, clients on B, GID index 1 (IPv4), clients in event mode
#      (-e: they sleep on the CQ's fd, so the two workers are the only busy
#      threads on the two CPUs): write/read/send bw at 64 B and 64 KiB, atomic
#      bw, send and read lat at 64 B; write lat cannot sleep (it watches
#      memory) and runs as a third busy thread, -n BENCH_LAT_ITERS_BUSY. Each
#      row also gets both workers' busy cycles per WQE from their own
#      accounting (uroce-ctl workers), and their sleeps (must be 0).
#   1b. Zero-copy TX: write bw at 256 B, 1 KiB, 4 KiB and 64 KiB with
#      tx_zero_copy_min = 0 (always copy), 64 and 1024 (the default).
#   2. dpdk-testpmd on the same kind of path: a memif server in rxonly on
#      CPU 1 and a memif client in txonly (64-byte frames, BENCH_TESTPMD_LEN) on CPU 0, --no-huge;
#      the rate is the receiver's Rx-pps, the mean of 5 one-second samples.
#   3. Kernel TCP ping-pong on 127.0.0.1 with sockperf (64 B, -t 5).
# Prints one summary table and the ratios (uroce / raw packet rate, uroce
# latency / kernel TCP latency). It never fails on a number: exit 1 only if a
# run fails, 77 (meson SKIP) when not root or a tool is missing.
# Needs UROCED, UROCE_PERF and UROCE_CTL (meson passes the build's binaries).
#
# Knobs (environment): BENCH_DURATION (bw seconds, 3), BENCH_LAT_ITERS (5000),
# BENCH_LAT_ITERS_BUSY (300: busy-polling daemons are slow on 2 CPUs),
# BENCH_TESTPMD_SECS (5; at least 4: the first of its per-second samples is dropped and 3 are needed),
# BENCH_TESTPMD_LEN (testpmd's frame length, 64; 138 is the frame of a 64 B
# RDMA WRITE ONLY over IPv4), BENCH_SOCKPERF_SECS (5), BENCH_PORT (first TCP
# port, 19400; uses the next 10).
# shellcheck source=../dpdk/lib.sh
. "$(dirname "$0")/../dpdk/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (DPDK EAL for uroced and dpdk-testpmd)"
require_uroced
if [ -z "${UROCE_PERF:-}" ] || [ ! -x "$UROCE_PERF" ]; then
	skip "UROCE_PERF is not set to the uroce-perf binary"
fi
if [ -z "${UROCE_CTL:-}" ] || [ ! -x "$UROCE_CTL" ]; then
	skip "UROCE_CTL is not set to the uroce-ctl binary"
fi
require_cmd timeout coreutils
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd dpdk-testpmd dpdk
require_cmd sockperf sockperf
require_cmd awk mawk
require_eal

DURATION=${BENCH_DURATION:-3}
LAT_ITERS=${BENCH_LAT_ITERS:-5000}
LAT_ITERS_BUSY=${BENCH_LAT_ITERS_BUSY:-300}
TP_SECS=${BENCH_TESTPMD_SECS:-5}
TP_LEN=${BENCH_TESTPMD_LEN:-64}
case "$TP_LEN" in
''|*[!0-9]*) skip "BENCH_TESTPMD_LEN: '$TP_LEN' is not a frame length" ;;
esac
[ "$TP_LEN" -ge 64 ] && [ "$TP_LEN" -le 1514 ] || skip "BENCH_TESTPMD_LEN: $TP_LEN is not within 64..1514"
SP_SECS=${BENCH_SOCKPERF_SECS:-5}
PORT=${BENCH_PORT:-19400}

MEMIF="$WORK/memif.sock"
PA="uroce-bench-a-$$"
PB="uroce-bench-b-$$"
TPS="uroce-bench-tps-$$"
TPC="uroce-bench-tpc-$$"
PREFIXES+=("$PA" "$PB" "$TPS" "$TPC")
A_SOCK="$WORK/a.sock"
B_SOCK="$WORK/b.sock"
RES="$WORK/results"    # one line per measurement: KEY VALUE...
: >"$RES"

# start_pair IDLE_US [ZC_MIN]: both daemons, memif link up (else the bench
# fails). Logs: $WORK/a-idleIDLE_US[-zcZC_MIN].log, likewise b.
start_pair() {
	memif_conf a "$1"
	memif_conf b "$1"
	PAIR="idle$1"
	if [ -n "${2:-}" ]; then
		sed -i "s/^\[limits\]$/[limits]\ntx_zero_copy_min = $2/" "$WORK/a.conf" "$WORK/b.conf"
		PAIR="idle$1-zc$2"
	fi
	rm -f "$A_SOCK" "$B_SOCK"
	start_uroced "a-$PAIR" - -c "$WORK/a.conf" || finish
	PID_A=$LAST_PID
	start_uroced "b-$PAIR" - -c "$WORK/b.conf" || finish
	PID_B=$LAST_PID
	for _ in $(seq 50); do
		tel "$PB" /uroce/port/info,0 | grep -q '"link_up": 1' && return 0
		sleep 0.1
	done
	fail "memif link between the two uroced did not come up in 5 s"
	finish
}

# stop_pair: prints what the daemons counted (retransmits, tx_alloc_fail...),
# then stops them.
stop_pair() {
	log "daemon counters after the $PAIR runs:"
	nonzero_stats A "$PA"
	nonzero_stats B "$PB"
	stop_uroced "$PID_A" "a-$PAIR"
	stop_uroced "$PID_B" "b-$PAIR"
}

# nonzero_stats NAME PREFIX: the daemon's nonzero /uroce/daemon/stats, one line.
nonzero_stats() {
	printf '    daemon %s stats (nonzero): ' "$1"
	tel "$2" /uroce/daemon/stats | /usr/bin/python3 -c '
import json, sys
try:
    d = json.loads(sys.stdin.read())["/uroce/daemon/stats"]
    print(" ".join("%s=%s" % (k, v) for k, v in d.items() if v))
except Exception as e:
    print("unavailable (%s)" % e)'
}

# perf KEY ARGS...: one uroce-perf run, server on A, client on B, both bounded
# by 60 s (a run takes 3 s or so; a stall is a failure, not a number).
# Appends "KEY <the client's result row>" to $RES, and "KEY-cpw A B SLEEPS"
# (each worker's busy cycles per WQE, and the sleeps of both).
perf() {
	local key="$1" spid rc_c rc_s row a0 a1 b0 b1
	shift
	PORT=$((PORT + 1))
	a0=$(wstat "$A_SOCK")
	b0=$(wstat "$B_SOCK")
	timeout 60 "$UROCE_PERF" "$@" -x 1 --socket "$A_SOCK" -p "$PORT" >"$WORK/$key.srv" 2>&1 &
	spid=$!
	sleep 0.3
	timeout 60 "$UROCE_PERF" "$@" -x 1 --socket "$B_SOCK" -p "$PORT" 127.0.0.1 \
		>"$WORK/$key.cli" 2>&1
	rc_c=$?
	wait "$spid"
	rc_s=$?
	row=$(grep -A1 '#bytes' "$WORK/$key.cli" | tail -1)
	a1=$(wstat "$A_SOCK")
	b1=$(wstat "$B_SOCK")
	# shellcheck disable=SC2086 # the samples are three words each
	set -- $a0 $a1 $b0 $b1
	echo "$key-cpw $(cpw "$1" "$2" "$4" "$5") $(cpw "$7" "$8" "${10}" "${11}") $(( $6 - $3 + ${12} - $9 ))" >>"$RES"
	if [ "$rc_c" -eq 0 ] && [ "$rc_s" -eq 0 ] && [ -n "$row" ]; then
		echo "$key $row" >>"$RES"
		log "uroce-perf $key: $row (busy cycles/WQE A B, sleeps: $(get "$key-cpw" 1) $(get "$key-cpw" 2) $(get "$key-cpw" 3))"
	else
		fail "uroce-perf $key: client exit $rc_c, server exit $rc_s"
		tail -n 3 "$WORK/$key.cli" "$WORK/$key.srv" | sed 's/^/    /'
		nonzero_stats A "$PA"
		nonzero_stats B "$PB"
	fi
}

# get KEY FIELD: field FIELD (1 = first after the key) of KEY's line, or "-".
get() {
	awk -v k="$1" -v f="$2" '$1 == k { v = $(f + 1) } END { print (v == "" ? "-" : v) }' "$RES"
}

# ratio A B [SCALE]: A / B * SCALE with 3 significant digits, "-" if unknown.
ratio() {
	awk -v a="$1" -v b="$2" -v s="${3:-1}" 'BEGIN {
		if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.3g\n", a / b * s }'
}

log "start $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"

# --- 1. uroce-perf over memif ---------------------------------------------
start_pair 0
for t in write read send; do
	for s in 64 65536; do
		perf "bw-$t-$s" $t bw -s $s -D "$DURATION" -e
	done
done
perf "bw-atomic-8" atomic bw -D "$DURATION" -e
for t in send read; do
	perf "lat-$t" $t lat -s 64 -n "$LAT_ITERS" -e
done
perf "lat-write" write lat -s 64 -n "$LAT_ITERS_BUSY"
stop_pair

# --- 1b. zero-copy TX threshold -------------------------------------------
for zc in 0 64 1024; do
	start_pair 0 $zc
	for s in 256 1024 4096 65536; do
		perf "zc$zc-$s" write bw -s $s -D "$DURATION" -e
	done
	stop_pair
done

# --- 2. dpdk-testpmd over memif: raw packet rate ---------------------------
# Two interactive processes, placed like the two daemons: the rxonly server's
# forwarding lcore on CPU 1, the txonly client's on CPU 0; commands go in
# through a FIFO each. Once both forward, "show port stats 0" every second:
# each gives Rx-pps (Tx-pps) since the previous one. Both stop forwarding
# before they quit: a memif server still polling when its client quits can
# segfault (testpmd 22.11 did, in non-interactive mode stopped by SIGINT).
TP_SOCK="$WORK/tp.sock"
trap '' PIPE    # a testpmd that died makes a write to its FIFO fail, not kill us
mkfifo "$WORK/tps.in" "$WORK/tpc.in"
# wait_for LOG PATTERN: up to 30 s (EAL start-up is slow on a loaded machine).
wait_for() {
	for _ in $(seq 300); do
		grep -q "$2" "$1" && return 0
		sleep 0.1
	done
	return 1
}
# The client starts only once the server's port is started (its prompt is
# printed after that): a memif client that connected while the server was
# still setting up, on this loaded machine, either never got its link up or
# counted packets sent that the server never counted.
# stdbuf: testpmd's stdout is a file here; line buffering keeps the samples
# even if testpmd crashes on its way out.
timeout $((TP_SECS + 90)) stdbuf -oL dpdk-testpmd --lcores 0@0,1@1 --no-huge -m 256 \
	--file-prefix "$TPS" --vdev "net_memif0,role=server,socket=$TP_SOCK,id=0" -- \
	-i --disable-link-check --forward-mode=rxonly --nb-cores=1 --total-num-mbufs=8192 \
	<"$WORK/tps.in" >"$WORK/tp-srv.log" 2>&1 &
TP_SPID=$!
PIDS+=("$TP_SPID")
exec {TPS_FD}>"$WORK/tps.in"
wait_for "$WORK/tp-srv.log" 'testpmd>' || fail "testpmd rxonly: no prompt in 30 s"
timeout $((TP_SECS + 60)) stdbuf -oL dpdk-testpmd --lcores 0@1,1@0 --no-huge -m 256 \
	--file-prefix "$TPC" --vdev "net_memif0,role=client,socket=$TP_SOCK,id=0" -- \
	-i --disable-link-check --forward-mode=txonly --txpkts="$TP_LEN" --nb-cores=1 \
	--total-num-mbufs=8192 <"$WORK/tpc.in" >"$WORK/tp-cli.log" 2>&1 &
TP_CPID=$!
PIDS+=("$TP_CPID")
exec {TPC_FD}>"$WORK/tpc.in"
wait_for "$WORK/tp-cli.log" 'testpmd>' || fail "testpmd txonly: no prompt in 30 s"
for _ in $(seq 20); do
	echo "show port info 0" >&"$TPC_FD"
	sleep 0.5
	grep -q 'Link status: up' "$WORK/tp-cli.log" && break
done
grep -q 'Link status: up' "$WORK/tp-cli.log" || fail "testpmd: memif link not up in 10 s"
echo start >&"$TPS_FD"
echo start >&"$TPC_FD"
sleep 1
for i in $(seq 0 "$TP_SECS"); do
	echo "show port stats 0" >&"$TPS_FD"
	echo "show port stats 0" >&"$TPC_FD"
	[ "$i" -lt "$TP_SECS" ] && sleep 1
done
printf 'stop\nquit\n' >&"$TPC_FD"
exec {TPC_FD}>&-
wait "$TP_CPID"
rc_c=$?
printf 'stop\nquit\n' >&"$TPS_FD"
exec {TPS_FD}>&-
wait "$TP_SPID"
rc_s=$?
# dpdk-testpmd 22.11 sometimes segfaults (exit 139) on quit after its memif
# peer left: the samples are taken by then, so that is reported, not failed.
for side in "txonly:$rc_c:tp-cli" "rxonly:$rc_s:tp-srv"; do
	IFS=: read -r mode rc logf <<<"$side"
	if [ "$rc" -eq 139 ]; then
		log "warning: dpdk-testpmd $mode crashed on quit (SIGSEGV, a testpmd 22.11 bug)"
	elif [ "$rc" -ne 0 ]; then
		fail "testpmd $mode exit $rc"
		tail -5 "$WORK/$logf.log" | sed 's/^/    /'
	fi
done
# pps_of LOG FIELD: "mean n min max" of the per-second samples, without the
# first show (its rate is not over a second of traffic); "-" if under 3.
pps_of() {
	awk -v f="$2" '$1 == f ":" { if (seen++) v[n++] = $2 }
		END {
			if (n < 3) { print "-"; exit }
			s = 0; lo = hi = v[0]
			for (i = 0; i < n; i++) { s += v[i]; if (v[i] < lo) lo = v[i]; if (v[i] > hi) hi = v[i] }
			printf "%.0f %d %.0f %.0f\n", s / n, n, lo, hi
		}' "$1"
}
rx=$(pps_of "$WORK/tp-srv.log" Rx-pps)
tx=$(pps_of "$WORK/tp-cli.log" Tx-pps)
if [ "$rx" = - ] || [ "${rx%% *}" = 0 ]; then
	fail "testpmd: fewer than 3 rate samples from the receiver, or no packets"
	tail -12 "$WORK/tp-srv.log" | sed 's/^/    /'
else
	echo "testpmd-rx $rx" >>"$RES"
	echo "testpmd-tx $tx" >>"$RES"
	log "testpmd rxonly Rx-pps: mean min max over seconds: $rx; txonly Tx-pps: $tx"
fi

# --- 3. kernel TCP ping-pong on loopback -----------------------------------
PORT=$((PORT + 1))
timeout $((SP_SECS + 30)) sockperf server --tcp -i 127.0.0.1 -p "$PORT" >"$WORK/sp-srv.log" 2>&1 &
SP_PID=$!
PIDS+=("$SP_PID")
sleep 0.5
timeout $((SP_SECS + 30)) sockperf ping-pong --tcp -i 127.0.0.1 -p "$PORT" -t "$SP_SECS" -m 64 \
	>"$WORK/sp-cli.log" 2>&1
rc_c=$?
kill -TERM "$SP_PID" 2>/dev/null
wait "$SP_PID" 2>/dev/null
# sockperf's latency is half the round trip, like uroce-perf's write/send lat.
sp=$(sed 's/\x1b\[[0-9;]*m//g' "$WORK/sp-cli.log" | awk '
	/<MIN> observation/ { mn = $NF }
	/percentile 50.000/ { p50 = $NF }
	/percentile 99.000/ { p99 = $NF }
	/avg-latency=/ { sub(/.*avg-latency=/, ""); sub(/ .*/, ""); avg = $0 }
	END { if (p50 == "") print "-"; else print mn, p50, avg, p99 }')
if [ "$rc_c" -ne 0 ] || [ "$sp" = - ]; then
	fail "sockperf ping-pong exit $rc_c, no percentiles"
	tail -5 "$WORK/sp-cli.log" | sed 's/^/    /'
else
	echo "sockperf $sp" >>"$RES"
	log "sockperf TCP ping-pong 64 B, 1/2 RTT usec: min p50 avg p99 = $sp"
fi
log "end $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"

# --- Summary -----------------------------------------------------------------
echo
echo "=== bench_memif summary ($(date -u '+%Y-%m-%d %H:%M UTC'), $(grep -m1 'model name' /proc/cpuinfo |
	sed 's/.*: //'), $(nproc) CPUs, Linux $(uname -r), DPDK $(pkg-config --modversion libdpdk 2>/dev/null ||
	echo '?'))"
echo
echo "| test | size | MB/s (MB = 2^20 B, as uroce-perf) | Mpps | busy cycles/WQE (A / B) | worker sleeps |"
echo "|---|---:|---:|---:|---:|---:|"
for k in bw-write-64 bw-write-65536 bw-read-64 bw-read-65536 bw-send-64 bw-send-65536 bw-atomic-8; do
	t=${k#bw-}
	printf '| uroce-perf %s bw -e | %s | %s | %s | %s / %s | %s |\n' "${t%-*}" "${t##*-}" "$(get "$k" 4)" \
		"$(get "$k" 5)" "$(get "$k-cpw" 1)" "$(get "$k-cpw" 2)" "$(get "$k-cpw" 3)"
done
tpm=$(awk -v v="$(get testpmd-rx 1)" 'BEGIN { if (v == "-") print "-"; else printf "%.6f\n", v / 1e6 }')
for d in rx tx; do
	printf '| dpdk-testpmd %s (%s-pps, mean of %s s, min %s max %s) | %s | %s | %s | | |\n' \
		"$([ $d = rx ] && echo "rxonly, received" || echo "txonly, sent")" \
		"$([ $d = rx ] && echo Rx || echo Tx)" "$(get testpmd-$d 2)" "$(get testpmd-$d 3)" \
		"$(get testpmd-$d 4)" "$TP_LEN" \
		"$(awk -v v="$(get testpmd-$d 1)" -v l="$TP_LEN" 'BEGIN { if (v == "-") print "-"; else printf "%.2f\n", v * l / 1048576 }')" \
		"$(awk -v v="$(get testpmd-$d 1)" 'BEGIN { if (v == "-") print "-"; else printf "%.6f\n", v / 1e6 }')"
done
echo
echo "| test (64 B) | t_min | t_typical | t_avg | 99% | busy cycles/WQE (A / B) |"
echo "|---|---:|---:|---:|---:|---:|"
for t in send read write; do
	half="1/2 RTT, -e"
	[ $t = read ] && half="RTT, -e"
	[ $t = write ] && half="1/2 RTT, busy client, -n $LAT_ITERS_BUSY"
	printf '| uroce-perf %s lat (%s) | %s | %s | %s | %s | %s / %s |\n' $t "$half" \
		"$(get "lat-$t" 3)" "$(get "lat-$t" 5)" "$(get "lat-$t" 6)" "$(get "lat-$t" 8)" \
		"$(get "lat-$t-cpw" 1)" "$(get "lat-$t-cpw" 2)"
done
printf '| sockperf TCP ping-pong 127.0.0.1 (1/2 RTT; t_typical = p50) | %s | %s | %s | %s | |\n' \
	"$(get sockperf 1)" "$(get sockperf 2)" "$(get sockperf 3)" "$(get sockperf 4)"
echo
echo "| write bw -e, MB/s (busy cycles/WQE A / B) | 256 B | 1 KiB | 4 KiB | 64 KiB |"
echo "|---|---:|---:|---:|---:|"
for zc in 0 64 1024; do
	printf '| tx_zero_copy_min = %s |' $zc
	for s in 256 1024 4096 65536; do
		printf ' %s (%s / %s) |' "$(get "zc$zc-$s" 4)" "$(get "zc$zc-$s-cpw" 1)" "$(get "zc$zc-$s-cpw" 2)"
	done
	echo
done
echo
echo "Ratios:"
for t in write read send; do
	echo "  uroce-perf $t bw 64 B Mpps / testpmd Mpps      = $(ratio "$(get "bw-$t-64" 5)" "$tpm")"
done
echo "  uroce send lat t_typical / sockperf TCP p50     = $(ratio "$(get lat-send 5)" "$(get sockperf 2)")"
echo "  uroce read lat t_typical (RTT) / (2 x sockperf p50) = $(ratio "$(get lat-read 5)" "$(get sockperf 2)" 0.5)"
for s in 1024 4096 65536; do
	echo "  write bw $s B, zero-copy from 64 / always copy = $(ratio "$(get "zc64-$s" 4)" "$(get "zc0-$s" 4)")"
done
echo
finish
