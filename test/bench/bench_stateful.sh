#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Benchmark (suite 'perf'): the stateful RC load generator (`uroce-ctl gen`,
# doc/loadgen.md) between two uroced over memif, set up as test_lcgen does
# (--no-huge, one worker lcore each: A's on CPU 1, B's on CPU 0). The
# initiator runs on A's worker, the target on B's; no client process and no
# shared-memory hop. For each case it prints messages/s, Gb/s and both
# workers' busy cycles per message and busy share (the workers' own TSC
# accounting, as uroce-ctl gen reads it over LIST_WORKERS):
#   write 64 B, write 64 KiB, read 64 B, read 64 KiB, send 64 B,
#   fadd, cswap  (no verification: the hot path only)
# The testpmd reference for the same memif path is bench_memif's (64-byte
# txonly -> rxonly packets/s); the issue's target is 64 B WRITE >= 0.5 x that.
# It never fails on a number: exit 1 only if a run fails, 77 (meson SKIP)
# when not root or a tool is missing. Needs UROCED and UROCE_CTL.
#
# Knobs (environment): BENCH_GEN_SECS (seconds per case, 3), BENCH_GEN_QPS
# (8), BENCH_GEN_WINDOW (32), BENCH_GEN_IDLE_US (the daemons' idle_sleep_us:
# 0, busy-polling workers, the only busy threads as no client process runs),
# BENCH_GEN_CASES (names from the list above, e.g. "write64 read64").
# shellcheck source=../dpdk/lib.sh
. "$(dirname "$0")/../dpdk/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (DPDK EAL for uroced)"
require_uroced
[ -n "${UROCE_CTL:-}" ] && [ -x "$UROCE_CTL" ] || skip "UROCE_CTL is not set (uroce-ctl not built)"
require_cmd timeout coreutils
require_cmd dpdk-telemetry.py dpdk-dev
require_eal

SECS=${BENCH_GEN_SECS:-3}
QPS=${BENCH_GEN_QPS:-8}
WINDOW=${BENCH_GEN_WINDOW:-32}
IDLE=${BENCH_GEN_IDLE_US:-0}
CASES=${BENCH_GEN_CASES:-"write64 write64k read64 read64k send64 fadd cswap"}

MEMIF="$WORK/memif.sock"
PA="uroce-bgen-a-$$"
PB="uroce-bgen-b-$$"
PREFIXES+=("$PA" "$PB")
A_SOCK="$WORK/a.sock"
B_SOCK="$WORK/b.sock"
RES="$WORK/results"
: >"$RES"

mix_of() {
	case "$1" in
	write64) echo write:64 ;;
	write64k) echo write:64K ;;
	read64) echo read:64 ;;
	read64k) echo read:64K ;;
	send64) echo send:64 ;;
	fadd) echo fadd ;;
	cswap) echo cswap ;;
	*) return 1 ;;
	esac
}

for c in $CASES; do
	mix_of "$c" >/dev/null || skip "BENCH_GEN_CASES: unknown case '$c'"
done

log "start $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
log "$QPS QPs, window $WINDOW, $SECS s per case, idle_sleep_us $IDLE"
memif_conf a "$IDLE"
memif_conf b "$IDLE"
start_uroced a - -c "$WORK/a.conf" || finish
PID_A=$LAST_PID
start_uroced b - -c "$WORK/b.conf" || finish
PID_B=$LAST_PID
up=0
for _ in $(seq 50); do
	tel "$PB" /uroce/port/info,0 | grep -q '"link_up": 1' && { up=1; break; }
	sleep 0.1
done
[ "$up" = 1 ] || { fail "memif link between the two uroced did not come up in 5 s"; finish; }

for c in $CASES; do
	timeout $((SECS + 60)) "$UROCE_CTL" gen --from "$A_SOCK" --to "$B_SOCK" -u 17 \
		--qps "$QPS" --window "$WINDOW" --mix "$(mix_of "$c")" -D "$SECS" -q \
		>"$WORK/$c.out" 2>"$WORK/$c.err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "$c: uroce-ctl gen exit $rc"
		tail -3 "$WORK/$c.err" | sed 's/^/    /'
		continue
	fi
	grep '"uroce_gen_summary"' "$WORK/$c.out" | tail -1 | /usr/bin/python3 -c '
import json, sys
s = json.loads(sys.stdin.read())
def f(v, fmt):
    return "-" if v is None else fmt % v
a, b = s["initiator"], s["target"]
print(sys.argv[1], "%.0f" % s["msgs_per_s"], "%.3f" % s["gbit_per_s"],
      f(a["cycles_per_msg"], "%.0f"), f(b["cycles_per_msg"], "%.0f"),
      f(a["busy"], "%.2f"), f(b["busy"], "%.2f"), a["retransmits"])' "$c" >>"$RES" ||
		fail "$c: no summary"
done

log "daemon and port counters after the runs (nonzero):"
for side in A B; do
	[ "$side" = A ] && p=$PA || p=$PB
	for cmd in /uroce/daemon/stats /uroce/port/stats,0; do
		printf '    %s %s: ' "$side" "${cmd%%,*}"
		tel "$p" "$cmd" | /usr/bin/python3 -c '
import json, sys
try:
    d = json.loads(sys.stdin.read())[sys.argv[1]]
    print(" ".join("%s=%s" % (k, v) for k, v in d.items()
                   if v and not isinstance(v, (dict, list))))
except Exception as e:
    print("unavailable (%s)" % e)' "${cmd%%,*}"
	done
done
stop_uroced "$PID_A" a
stop_uroced "$PID_B" b

echo
echo "| case | msg/s | Gb/s | cycles/msg A (initiator) | cycles/msg B (target) | busy A | busy B | retransmits |"
echo "|---|---|---|---|---|---|---|---|"
while read -r c m g ca cb ba bb rt; do
	echo "| $c | $m | $g | $ca | $cb | $ba | $bb | $rt |"
done <"$RES"
echo
finish
