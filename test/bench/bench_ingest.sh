#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Benchmark (suite 'perf'): how many stateless RoCEv2 messages a uroced
# absorbs, against what dpdk-testpmd absorbs on the same path, in one run.
# For UC RDMA WRITE ONLY and UD SEND ONLY, at 64 B and 1 KiB payloads:
#   1. uroce: a `uroce-perf sink` (4 QPs of the type) on a uroced whose port
#      is a memif server (its one worker pinned to CPU 1, busy polling); the
#      frames come from `uroce-ctl template` (64 messages per QP) replayed by
#      dpdk-testpmd: port 0 the net_pcap PMD looping over the pcap
#      (infinite_rx=1), port 1 a memif client, io forwarding on CPU 0. The
#      rate is the sink's messages/s (UC: the daemon's rx_write_requests; UD:
#      the completions the sink took), the mean of its one-second records.
#   2. raw: the same replaying testpmd into a `dpdk-testpmd rxonly` memif
#      server whose forwarding lcore is pinned to CPU 1; the rate is its
#      Rx-pps, the mean of one-second samples.
# One busy thread per process, pinned: never more busy threads than the two
# CPUs (the sink sleeps on its CQ event and shares CPU 0 with the replayer;
# for UD it must re-post receives, so on two CPUs it competes with the
# replayer, and UD messages it could not take in time count as dropped).
# Prints a table: offered packets/s (testpmd's memif Tx-pps), absorbed
# messages/s, dropped, and the ratio uroce / testpmd rxonly. Never fails on
# a number: exit 1 only if a run fails, 77 (meson SKIP) without root or a tool.
# It also prints the worker's busy share and busy cycles per received frame
# over the measured seconds (uroce-ctl workers).
#
# Knobs (environment): BENCH_INGEST_SECS (seconds measured per run, 3),
# BENCH_INGEST_CASES (default "uc-write:64 uc-write:1024 ud-send:64
# ud-send:1024"), BENCH_INGEST_QPS (4), BENCH_INGEST_MSGS (64 per QP),
# BENCH_INGEST_SLOTS (receives the sink keeps posted per QP, 1024; with 4096
# a UD row stops dropping for want of a receive while the sink waits for CPU 0,
# and shows the worker's own limit instead), BENCH_INGEST_CQ_MOD (COUNT,US:
# the sink's --cq-mod, CQ event moderation, 1024,200: the sink is woken once
# per 1024 completions or 200 us, not at every one; set it empty for an event
# per arm, as before 6 Dec 2026), BENCH_INGEST_RAW (1; 0 skips the testpmd
# rxonly runs, for comparing uroce builds by their worker's cycles alone).
# Needs UROCED, UROCE_PERF and UROCE_CTL (meson passes the build's binaries).
# shellcheck source=../dpdk/lib.sh
. "$(dirname "$0")/../dpdk/lib.sh"
# shellcheck source=../dpdk/lib_sink.sh
. "$(dirname "$0")/../dpdk/lib_sink.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (DPDK EAL for uroced and dpdk-testpmd)"
require_uroced
require_sink_tools
require_cmd dpdk-testpmd dpdk
require_cmd stdbuf coreutils
require_cmd taskset util-linux
require_cmd awk mawk
require_eal

SECS=${BENCH_INGEST_SECS:-3}
CASES=${BENCH_INGEST_CASES:-"uc-write:64 uc-write:1024 ud-send:64 ud-send:1024"}
NQP=${BENCH_INGEST_QPS:-4}
NMSG=${BENCH_INGEST_MSGS:-64}
SLOTS=${BENCH_INGEST_SLOTS:-1024}
CQ_MOD=${BENCH_INGEST_CQ_MOD-1024,200}
RAW=${BENCH_INGEST_RAW:-1}
MEMIF="$WORK/memif.sock"
PA="uroce-ingest-a-$$"
PREFIXES+=("$PA")
SOCK="$WORK/a.sock"
RES="$WORK/results"
: >"$RES"
trap '' PIPE

# mean_of FILE FIELD: mean of the per-second samples "FIELD: value" after the
# first (the first show covers the start), "-" if fewer than 2.
mean_of() {
	awk -v f="$2" '$1 == f ":" { if (seen++) { s += $2; n++ } }
		END { if (n < 2) print "-"; else printf "%.0f\n", s / n }' "$1"
}

# sample TP_FD PORT: one "show port stats PORT" a second for SECS + 1 seconds.
sample() {
	local i
	for i in $(seq 0 "$SECS"); do
		echo "show port stats $2" >&"$1"
		[ "$i" -lt "$SECS" ] && sleep 1
	done
	sleep 0.3
}

# run_uroce KEY TYPE SIZE
run_uroce() {
	local key="$1" type="$2" size="$3" qps rate dropped t0 t1
	rm -f "$SOCK" "$MEMIF"
	memif_conf a 0
	start_uroced "uroce-$key" - -c "$WORK/a.conf" || return 1
	PID_A=$LAST_PID
	if [ "$type" = uc-write ]; then qps="--uc $NQP --ud 0"; else qps="--uc 0 --ud $NQP"; fi
	# shellcheck disable=SC2086 # $qps is two options
	SINK_CPUS=0 sink_start "sink-$key" "$SOCK" $qps --size "$size" --slots "$SLOTS" \
		${CQ_MOD:+--cq-mod "$CQ_MOD"} -q || {
		stop_uroced "$PID_A" "uroce-$key"; return 1; }
	"$UROCE_CTL" template "$WORK/sink-$key.json" "$WORK/$key.pcap" -n "$NMSG" --op write -q ||
		{ fail "$key: template"; return 1; }
	if testpmd_replay "tp-$key" "uroce-ingest-tp$key-$$" "$WORK/$key.pcap" "$MEMIF" 0@0,1@0; then
		sleep 1 # warm up: rings and mempools fill, the first record is partial
		t0=$(sink_records "sink-$key")
		w0=$(wstat "$SOCK" busy_cycles idle_cycles rx_packets)
		sample "$TP_FD" 1
		w1=$(wstat "$SOCK" busy_cycles idle_cycles rx_packets)
		t1=$(sink_records "sink-$key")
		testpmd_pause
		rate=$(sink_rate "sink-$key" "$t0" "$t1" msgs_per_s)
		dropped=$(sink_rate "sink-$key" "$t0" "$t1" dropped)
		# shellcheck disable=SC2086 # three counters each
		work=$(worker_delta $w0 $w1)
		echo "$key uroce $rate $(mean_of "$WORK/tp-$key.log" Tx-pps) $dropped $work" >>"$RES"
		log "$key: uroce absorbed $rate msg/s (dropped $dropped/s), testpmd offered $(mean_of "$WORK/tp-$key.log" Tx-pps) pps; worker busy share and cycles per received packet: $work"
	fi
	sink_stop
	[ "$SINK_RC" -eq 0 ] || fail "$key: sink exit $SINK_RC: $(tail -2 "$WORK/sink-$key.err")"
	# The memif server goes first, while testpmd is idle (lib_sink.sh).
	stop_uroced "$PID_A" "uroce-$key"
	[ -n "${TP_FD:-}" ] && testpmd_quit "tp-$key"
	TP_FD=
}

# worker_delta B0 I0 R0 B1 I1 R1: the worker's busy share and busy cycles per
# packet it received between two `wstat SOCK busy_cycles idle_cycles
# rx_packets` ("- -" if nothing was read): where its time went, whichever
# side limits the rate.
worker_delta() {
	awk -v b="$(($4 - $1))" -v i="$(($5 - $2))" -v r="$(($6 - $3))" 'BEGIN {
		if (b + i <= 0) { print "- -"; exit }
		printf "%.2f %s\n", b / (b + i), (r > 0 ? sprintf("%.0f", b / r) : "-") }'
}

# sink_records NAME: how many rate records the sink has written so far.
sink_records() {
	grep -c '"uroce_rate"' "$WORK/$1.out"
}

# sink_rate NAME FROM TO FIELD: mean per second of FIELD over rate records
# FROM+1..TO ("msgs_per_s" directly; other fields divided by their dt).
sink_rate() {
	/usr/bin/python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if "\"uroce_rate\"" in l]
sel = recs[int(sys.argv[2]):int(sys.argv[3])]
f = sys.argv[4]
if not sel:
    print("-")
elif f == "msgs_per_s":
    print("%.0f" % (sum(r["msgs"] for r in sel) / sum(r["dt"] for r in sel)))
else:
    print("%.0f" % (sum(r[f] for r in sel) / sum(r["dt"] for r in sel)))' \
		"$WORK/$1.out" "$2" "$3" "$4"
}

# run_raw KEY: the same replay into dpdk-testpmd rxonly (memif server, CPU 1).
run_raw() {
	local key="$1" srv="$WORK/rx-$1"
	rm -f "$MEMIF" "$srv.in"
	mkfifo "$srv.in"
	PREFIXES+=("uroce-ingest-rx$key-$$")
	timeout 300 stdbuf -oL dpdk-testpmd --lcores 0@0,1@1 --no-huge -m 256 \
		--file-prefix "uroce-ingest-rx$key-$$" \
		--vdev "net_memif0,role=server,socket=$MEMIF,id=0" -- \
		-i --forward-mode=rxonly --nb-cores=1 --total-num-mbufs=16384 --disable-link-check \
		<"$srv.in" >"$srv.log" 2>&1 &
	RX_PID=$!
	PIDS+=("$RX_PID")
	exec {RX_FD}>"$srv.in"
	for _ in $(seq 300); do grep -q 'testpmd>' "$srv.log" && break; sleep 0.1; done
	echo start >&"$RX_FD"
	if testpmd_replay "tpraw-$key" "uroce-ingest-tpraw$key-$$" "$WORK/$key.pcap" "$MEMIF" \
		0@0,1@0; then
		sleep 1
		sample "$RX_FD" 0 &
		sample "$TP_FD" 1
		wait $!
		# Both idle before either quits; then the client, then the server.
		testpmd_pause
		echo stop >&"$RX_FD"
		sleep 0.3
		testpmd_quit "tpraw-$key"
	fi
	echo quit >&"$RX_FD" 2>/dev/null
	exec {RX_FD}>&-
	for _ in $(seq 100); do kill -0 "$RX_PID" 2>/dev/null || break; sleep 0.1; done
	wait "$RX_PID"
	local rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 139 ] || fail "$key: testpmd rxonly exit $rc"
	echo "$key raw $(mean_of "$srv.log" Rx-pps) $(mean_of "$WORK/tpraw-$key.log" Tx-pps)" >>"$RES"
	log "$key: testpmd rxonly received $(mean_of "$srv.log" Rx-pps) pps, offered $(mean_of "$WORK/tpraw-$key.log" Tx-pps) pps"
}

log "start $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
for c in $CASES; do
	type=${c%%:*}
	size=${c##*:}
	case "$type" in
	uc-write|ud-send) ;;
	*) fail "BENCH_INGEST_CASES: '$c': the type is uc-write or ud-send"; continue ;;
	esac
	key="$type-$size"
	# Each step's time, so that a slow or stuck one can be found in the log.
	log "$key: uroce run from $(date -u '+%H:%M:%S')"
	run_uroce "$key" "$type" "$size" && [ -s "$WORK/$key.pcap" ] && [ "$RAW" != 0 ] &&
		log "$key: testpmd rxonly run from $(date -u '+%H:%M:%S')" && run_raw "$key"
done
log "end $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"

# get KEY KIND FIELD: field FIELD (1 = first after KEY KIND) of the line, or "-".
get() {
	awk -v k="$1" -v w="$2" -v f="$3" '$1 == k && $2 == w { v = $(f + 2) }
		END { print (v == "" ? "-" : v) }' "$RES"
}

echo
echo "=== bench_ingest summary ($(date -u '+%Y-%m-%d %H:%M UTC'), $(grep -m1 'model name' /proc/cpuinfo |
	sed 's/.*: //'), $(nproc) CPUs, Linux $(uname -r), DPDK $(pkg-config --modversion libdpdk 2>/dev/null ||
	echo '?')); $NQP QPs, $NMSG messages per QP per pass, $SLOTS receives per QP, CQ moderation ${CQ_MOD:-none}, ${SECS} s per run"
echo
echo "| frames | uroce offered pps | uroce absorbed msg/s | uroce dropped/s | testpmd rxonly pps (offered) | ratio | worker busy | worker cycles/packet |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for c in $CASES; do
	key="${c%%:*}-${c##*:}"
	u=$(get "$key" uroce 1)
	r=$(get "$key" raw 1)
	ratio=$(awk -v a="$u" -v b="$r" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.3g\n", a / b }')
	printf '| %s %s B | %s | %s | %s | %s (%s) | %s | %s | %s |\n' "${c%%:*}" "${c##*:}" \
		"$(get "$key" uroce 2)" "$u" "$(get "$key" uroce 3)" "$r" "$(get "$key" raw 2)" "$ratio" \
		"$(get "$key" uroce 4)" "$(get "$key" uroce 5)"
done
echo
echo "ratio = messages/s the sink's QPs absorbed / packets/s testpmd rxonly received on the same path;"
echo "worker: uroced's one worker (uroce-ctl workers) over the measured seconds, its busy cycles per"
echo "frame it received (absorbed or dropped)"
echo
finish
