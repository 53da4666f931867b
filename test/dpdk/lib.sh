# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Shared helpers for the dpdk suite (sourced, not run). Every test:
#   - checks its prerequisites and exits 77 (meson: SKIP) with a loud reason
#     when one is truly missing;
#   - creates its own network namespaces, uses only 198.18.0.0/15 and
#     2001:2::/48 (the IPv4 and IPv6 benchmarking ranges), and removes them
#     in an EXIT trap;
#   - stops only the uroced processes it started, by PID.
# UROCED must point at the uroced binary (meson passes it).

set -u
TAG=$(basename "$0" .sh)
WORK=$(mktemp -d "/tmp/uroce-$TAG-$$-XXXX")
PIDS=()
NETNS=()
PREFIXES=()   # DPDK --file-prefix values, cleaned up at exit
FAILS=0

log() { printf '%s: %s\n' "$TAG" "$*"; }
fail() { printf '%s: FAIL: %s\n' "$TAG" "$*"; FAILS=$((FAILS + 1)); }
pass() { printf '%s: ok: %s\n' "$TAG" "$*"; }

skip() {
	printf '\n%s: SKIP: %s\n\n' "$TAG" "$*" >&2
	printf '%s: SKIP: %s\n' "$TAG" "$*"
	exit 77
}

cleanup() {
	local pid ns
	for pid in "${PIDS[@]}"; do
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid" 2>/dev/null
			for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -KILL "$pid" 2>/dev/null
		fi
	done
	for ns in "${NETNS[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	# A DPDK primary leaves its hugepage files (<prefix>map_N) and runtime
	# directory behind when it exits; left there they hold the pages, and
	# the next run finds none free. Remove those of every prefix we used.
	local prefix mnt
	for prefix in "${PREFIXES[@]}"; do
		for mnt in $(awk '$3 == "hugetlbfs" { print $2 }' /proc/mounts); do
			rm -f "$mnt/${prefix}map_"*
		done
		rm -rf "/var/run/dpdk/$prefix"
	done
	if [ "${KEEP_WORK:-0}" = 1 ]; then
		log "logs kept in $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

require_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (EAL, af_packet and network namespaces)"
}

require_uroced() {
	[ -n "${UROCED:-}" ] && [ -x "$UROCED" ] || skip "UROCED is not set to the uroced binary"
}

require_cmd() {
	command -v "$1" >/dev/null 2>&1 || skip "'$1' not found (Debian package: $2)"
}

# --no-huge works for every PMD these tests use (af_packet, memif, net_ring);
# check once that EAL starts that way here (no-huge needs no special kernel).
require_eal() {
	local out
	PREFIXES+=("uroce-probe-$$")
	out=$(timeout 20 "$UROCED" --no-huge -m 64 -l 0 --file-prefix "uroce-probe-$$" \
		--socket "$WORK/probe.sock" --check 2>&1)
	echo "$out" | grep -q '^PASS' || skip "EAL cannot start even with --no-huge: $(echo "$out" | tail -3 | tr '\n' ' ')"
}

require_netns_veth() {
	local ns="uroce-probe-$$"
	ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace (ip netns add)"
	if ! ip -n "$ns" link add uprobe0 type veth peer name uprobe1 2>/dev/null; then
		ip netns del "$ns"
		skip "no veth support in this kernel (ip link add type veth failed)"
	fi
	ip netns del "$ns"
}

new_netns() {
	local ns="$1"
	ip netns add "$ns" || { fail "ip netns add $ns"; exit 1; }
	NETNS+=("$ns")
	ip -n "$ns" link set lo up
}

# start_uroced NAME [netns|-] ARGS...: starts uroced in the background, logs to
# $WORK/NAME.log, waits (bounded) for its "ready" line. Sets $LAST_PID.
start_uroced() {
	local name="$1" ns="$2"
	shift 2
	if [ "$ns" = "-" ]; then
		"$UROCED" "$@" >"$WORK/$name.log" 2>&1 &
	else
		ip netns exec "$ns" "$UROCED" "$@" >"$WORK/$name.log" 2>&1 &
	fi
	LAST_PID=$!
	PIDS+=("$LAST_PID")
	for _ in $(seq 100); do
		grep -q '^uroced: ready' "$WORK/$name.log" && return 0
		kill -0 "$LAST_PID" 2>/dev/null || break
		sleep 0.1
	done
	fail "$name did not become ready; log:"
	sed 's/^/    /' "$WORK/$name.log"
	return 1
}

# stop_uroced PID NAME: SIGTERM, expect a clean exit within 5 s.
stop_uroced() {
	local pid="$1" name="$2" rc
	kill -TERM "$pid"
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then
		fail "$name did not stop within 5 s of SIGTERM"
		return 1
	fi
	wait "$pid"
	rc=$?
	if [ "$rc" -eq 0 ] && grep -q '^uroced: stopped' "$WORK/$name.log"; then
		pass "$name stopped cleanly on SIGTERM (exit 0)"
	else
		fail "$name exit $rc after SIGTERM; log tail:"
		tail -5 "$WORK/$name.log" | sed 's/^/    /'
	fi
}

# tel PREFIX COMMAND: one telemetry query, through DPDK's own client.
tel() {
	echo "$2" | timeout 10 dpdk-telemetry.py -f "$1" 2>/dev/null
}

# counter PREFIX PORT NAME: one counter from /uroce/port/stats.
counter() {
	tel "$1" "/uroce/port/stats,$2" | /usr/bin/python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
print(d["/uroce/port/stats"][sys.argv[1]])' "$3"
}

# lcores SIDE: the EAL lcores of daemon a or b with $E2E_WORKERS workers
# (1 when unset): a's main lcore on CPU 0 and its first worker on CPU 1, b
# the other way round, so that the two first workers never share a CPU on a
# 2-core machine; a second worker goes on the other CPU of its daemon.
lcores() {
	if [ "${E2E_WORKERS:-1}" = 2 ]; then
		[ "$1" = a ] && echo 0@0,1@1,2@0 || echo 0@1,1@0,2@1
	else
		[ "$1" = a ] && echo 0,1 || echo 0@1,1@0
	fi
}

# memif_conf SIDE IDLE_US [EXTRA]: writes $WORK/SIDE.conf for one of two
# uroced joined by memif at $MEMIF: side a is the memif server with file
# prefix $PA, side b the client with prefix $PB; lcores as lcores() says.
# EXTRA: more lines for [port.memif].
memif_conf() {
	local side="$1" idle="$2" extra="${3:-}" role n lcores prefix
	lcores=$(lcores "$side")
	if [ "$side" = a ]; then
		role=server; n=1; prefix=$PA
	else
		role=client; n=2; prefix=$PB
	fi
	cat >"$WORK/$side.conf" <<EOF
[eal]
lcores = $lcores
no_huge = yes
memory = 256
file_prefix = $prefix
[daemon]
socket = $WORK/$side.sock
[limits]
mbufs = 4095
idle_sleep_us = $idle
neigh_retry_ms = 100
[port.memif]
vdev = net_memif0,role=$role,socket=$MEMIF,id=0
ipv4 = 198.18.3.$n/24
ipv6 = 2001:2::3:$n/112
mac = 02:00:c6:12:03:0$n
$extra
EOF
}

# dstat PREFIX NAME: one value of /uroce/daemon/stats (daemon and transport).
dstat() {
	tel "$1" /uroce/daemon/stats | /usr/bin/python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
print(d["/uroce/daemon/stats"][sys.argv[1]])' "$2"
}

# require_clients: the example and uroce-perf binaries meson passes.
require_clients() {
	[ -n "${UROCE_PERF:-}" ] && [ -x "$UROCE_PERF" ] || skip "UROCE_PERF is not set (uroce-perf not built)"
	[ -n "${EXAMPLES:-}" ] && [ -x "$EXAMPLES/rc_pingpong" ] ||
		skip "EXAMPLES is not set (configure with -Dexamples=true)"
}

# perf_pair NAME SRV_SOCK CLI_SOCK TCP_PORT ARGS...: one uroce-perf run, the
# server on SRV_SOCK's daemon, the client on CLI_SOCK's, both bounded by 120 s.
# Passes when both exit 0 (with --verify: the data checked on both sides).
# Logs: $WORK/NAME.srv and $WORK/NAME.cli. Sets PERF_RC to the client's exit.
# The local ACK timeout is 1.07 s (-u 18), not perftest's 67 ms: on a loaded
# 2-core machine a worker can be descheduled for longer than the 0.5 s that
# 67 ms and 7 retries allow (doc/uroce-perf.md).
perf_pair() {
	local name="$1" ssock="$2" csock="$3" port="$4" spid rc_s
	shift 4
	timeout 120 "$UROCE_PERF" "$@" -u 18 --socket "$ssock" -p "$port" >"$WORK/$name.srv" 2>&1 &
	spid=$!
	sleep 0.3
	timeout 120 "$UROCE_PERF" "$@" -u 18 --socket "$csock" -p "$port" 127.0.0.1 \
		>"$WORK/$name.cli" 2>&1
	PERF_RC=$?
	wait "$spid"
	rc_s=$?
	if [ "$PERF_RC" -eq 0 ] && [ "$rc_s" -eq 0 ]; then
		pass "$name: uroce-perf $* ($(grep -A1 '#bytes' "$WORK/$name.cli" | tail -1 |
			awk '{print $1 " B x " $2}'))"
	else
		fail "$name: uroce-perf $*: client exit $PERF_RC, server exit $rc_s"
		tail -n 4 "$WORK/$name.cli" "$WORK/$name.srv" | sed 's/^/    /'
	fi
}

# example NAME ARGS...: run an example binary (bounded), pass on exit 0.
run_example() {
	local name="$1" rc
	shift
	timeout 60 "$EXAMPLES/$name" "$@" >"$WORK/ex-$name.log" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "$name $* (gid index ${UROCE_GID_INDEX:-0}): $(tail -1 "$WORK/ex-$name.log")"
	else
		fail "$name $* (gid index ${UROCE_GID_INDEX:-0}): exit $rc"
		tail -5 "$WORK/ex-$name.log" | sed 's/^/    /'
	fi
}

finish() {
	if [ "$FAILS" -ne 0 ]; then
		log "$FAILS check(s) failed"
		KEEP_WORK=1
		exit 1
	fi
	log "all checks passed"
	exit 0
}

# wstat SOCK: "busy_cycles wqes sleeps" of the daemon's worker 0 (uroce-ctl
# workers), "0 0 0" if it cannot be read. Needs UROCE_CTL.
wstat() {
	"$UROCE_CTL" workers --socket "$1" --json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
try:
    w = json.load(sys.stdin)["workers"][0]
    print(w["busy_cycles"], w["wqes"], w["sleeps"])
except Exception:
    print("0 0 0")'
}

# cpw B0 W0 B1 W1: busy cycles per WQE between two wstat samples, or "-".
cpw() {
	awk -v b0="$1" -v w0="$2" -v b1="$3" -v w1="$4" 'BEGIN {
		if (w1 > w0) printf "%d\n", (b1 - b0) / (w1 - w0); else print "-" }'
}

# workers_busy SOCK WHAT: pass if every worker of the daemon at socket SOCK
# received and sent RoCEv2 (QPs were placed on each) and frames were handed
# from worker to worker with none lost on the way, else fail.
workers_busy() {
	local out
	out=$("$UROCE_CTL" workers --socket "$1" --json 2>&1)
	if echo "$out" | /usr/bin/python3 -c '
import json, sys
w = json.load(sys.stdin)["workers"]
# QPs on each worker, and frames handed between them: what one handed
# out, the other took in (the hand-off path carried traffic, lost nothing).
ok = len(w) >= 2 and all(x["roce_rx"] > 0 and x["roce_tx"] > 0 for x in w)
ok = ok and sum(x["handoff_out"] for x in w) > 0
ok = ok and sum(x["handoff_out"] for x in w) == sum(x["handoff_in"] for x in w)
print(" ".join("w%d rx %d tx %d handoff %d/%d" % (x["worker"], x["roce_rx"], x["roce_tx"],
      x["handoff_in"], x["handoff_out"]) for x in w))
sys.exit(0 if ok else 1)' >"$WORK/workers.txt"; then
		pass "$2: every worker carried RoCEv2: $(cat "$WORK/workers.txt")"
	else
		fail "$2: not every worker carried RoCEv2: $(cat "$WORK/workers.txt") $out"
	fi
}
