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

# Loaded mode (UROCE_TEST_LOAD=1; doc/testing.md): the test runs beside the
# idle daemons and busy loops of test/dpdk/load.sh, which must be running.
# Without them the mode would pass for what it did not test: fail.
if [ "${UROCE_TEST_LOAD:-0}" = 1 ]; then
	if ! load_st=$(bash "$(dirname "${BASH_SOURCE[0]}")/load.sh" status 2>&1); then
		fail "UROCE_TEST_LOAD=1 but the load of test/dpdk/load.sh is not (all) running:"
		echo "$load_st" | sed 's/^/    /'
		exit 1
	fi
	log "loaded mode: $(echo "$load_st" | grep -c 'daemon .*running') idle daemons," \
		"$(echo "$load_st" | grep -c 'spinner .*running') busy loops beside this test"
fi

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
# Only a FAIL from --check skips: one that does not finish in READY_S (a
# loaded host) is a failure, not a missing prerequisite.
# require_dropin: what a test of programs run through uroce-run needs.
require_dropin() {
	require_root
	require_uroced
	require_cmd dpdk-telemetry.py dpdk-dev
	require_cmd timeout coreutils
	[ -n "${UROCE_RUN:-}" ] && [ -x "$UROCE_RUN" ] ||
		skip "UROCE_RUN is not set (drivers/verbs not built: libibverbs-dev missing)"
}

# start_memif_pair: uroced a and b from $WORK/a.conf and b.conf (memif_conf),
# until B's link is up; sets PID_A and PID_B; a failure ends the test.
start_memif_pair() {
	start_uroced a - -c "$WORK/a.conf" || finish
	PID_A=$LAST_PID
	start_uroced b - -c "$WORK/b.conf" || finish
	PID_B=$LAST_PID
	wait_link "$PB" || finish
}

require_eal() {
	local out rc
	PREFIXES+=("uroce-probe-$$")
	out=$(timeout "$READY_S" "$UROCED" --no-huge -m 64 -l 0 --file-prefix "uroce-probe-$$" \
		--socket "$WORK/probe.sock" --check 2>&1)
	rc=$?
	echo "$out" | grep -q '^PASS' && return 0
	if [ "$rc" -eq 124 ]; then
		fail "uroced --check (EAL probe) did not finish in $READY_S s: $(echo "$out" | tail -3 | tr '\n' ' ')"
		finish
	fi
	skip "EAL cannot start even with --no-huge (exit $rc): $(echo "$out" | tail -3 | tr '\n' ' ')"
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

# BOUND_X: every wall-clock bound of the dpdk tests is multiplied by it:
# 1 on a quiet host, 4 in loaded mode (a process there can wait tens of
# seconds for a CPU), UROCE_BOUND_X if set. A bound only costs time when
# what it waits for never comes.
if [ -n "${UROCE_BOUND_X:-}" ]; then
	BOUND_X=$UROCE_BOUND_X
elif [ "${UROCE_TEST_LOAD:-0}" = 1 ]; then
	BOUND_X=4
else
	BOUND_X=1
fi
bound() { echo $(($1 * BOUND_X)); }              # bound SECONDS: the bound in use
deadline() { echo $((SECONDS + $1 * BOUND_X)); } # deadline SECONDS: its end, as $SECONDS

# wait_until SECONDS CMD...: run CMD until it succeeds, every 0.1 s, for at
# most SECONDS (times BOUND_X) of wall-clock time (not a count of tries: on a
# loaded host one try can take seconds). Returns 1 if it never did.
wait_until() {
	local end
	end=$(deadline "$1")
	shift
	while :; do
		"$@" && return 0
		[ "$SECONDS" -ge "$end" ] && return 1
		sleep 0.1
	done
}

# wait_until_s SECONDS CMD...: wait_until with SECONDS as they are (already
# scaled).
wait_until_s() {
	local s=$1
	shift
	BOUND_X=1 wait_until "$s" "$@"
}

# The bound on a daemon's start (120 s times BOUND_X). Generous: on a busy 2-CPU host (issue 16:
# five idle daemons and a busy loop on each CPU) EAL alone can take tens of
# seconds; only a failure waits this long.
READY_S=${UROCE_READY_S:-$(bound 120)}

# start_uroced NAME [netns|-] ARGS...: starts uroced in the background, logs to
# $WORK/NAME.log, waits (polling, bounded by READY_S) for its "ready" line, or
# for it to exit. Sets $LAST_PID.
start_uroced() {
	local name="$1" ns="$2" t0=$SECONDS
	shift 2
	# Emptied here, not by the child's redirection: a child not yet run (a
	# busy host) would leave the last instance's "ready" line for the wait
	# below to find.
	: >"$WORK/$name.log"
	if [ "$ns" = "-" ]; then
		"$UROCED" "$@" >>"$WORK/$name.log" 2>&1 &
	else
		ip netns exec "$ns" "$UROCED" "$@" >>"$WORK/$name.log" 2>&1 &
	fi
	LAST_PID=$!
	PIDS+=("$LAST_PID")
	wait_until_s "$READY_S" ready_or_gone "$WORK/$name.log" "$LAST_PID"
	if grep -q '^uroced: ready' "$WORK/$name.log"; then
		UP[$name]=$LAST_PID
		[ $((SECONDS - t0)) -lt 10 ] || log "$name took $((SECONDS - t0)) s to become ready"
		return 0
	fi
	if kill -0 "$LAST_PID" 2>/dev/null; then
		fail "$name did not become ready within $READY_S s (still running); log:"
	else
		fail "$name exited before it was ready; log:"
	fi
	sed 's/^/    /' "$WORK/$name.log"
	return 1
}

# The daemons started and not stopped on purpose: name -> PID.
declare -A UP=()

# daemons_alive: every daemon in UP still runs; else say which died, with
# its log's tail, and end the script (what follows would only time out).
daemons_alive() {
	local n
	for n in "${!UP[@]}"; do
		kill -0 "${UP[$n]}" 2>/dev/null && continue
		fail "uroced $n (pid ${UP[$n]}) died; log tail:"
		tail -5 "$WORK/$n.log" | sed 's/^/    /'
		unset "UP[$n]"
		finish
	done
}

ready_or_gone() { # ready_or_gone LOG PID
	grep -q '^uroced: ready' "$1" || ! kill -0 "$2" 2>/dev/null
}

# stop_uroced PID NAME: SIGTERM, expect a clean exit (exit 0, "stopped")
# within STOP_S (30 s times BOUND_X: a clean stop is quick, a loaded host is
# not).
STOP_S=${UROCE_STOP_S:-$(bound 30)}
stop_uroced() {
	local pid="$1" name="$2" rc
	unset "UP[$name]"
	kill -TERM "$pid"
	if ! wait_until_s "$STOP_S" gone "$pid"; then
		fail "$name did not stop within $STOP_S s of SIGTERM"
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

gone() { ! kill -0 "$1" 2>/dev/null; }

# --- Telemetry ---------------------------------------------------------------
# On a loaded host a query can time out, or come back empty while the daemon
# is busy: every read is checked and retried, and one that never answers is a
# failure with a clear message, never a traceback or a shell error.
#
# tel PREFIX COMMAND: one telemetry query through DPDK's own client. Prints
# the JSON answer, which names COMMAND; tries TEL_TRIES times (5) with a
# 20 s bound each. On failure prints nothing and returns 1 (quietly: polls
# use it too; the readers below say why).
# It runs DPDK's script with /usr/bin/python3: through `env python3` it would
# find whatever python3 is first on PATH (a pyenv shim took 4 to 19 s a query
# on the loaded machine, /usr/bin/python3 under 1 s).
tel() {
	local key="${2%%,*}" out="" try
	for try in $(seq "${TEL_TRIES:-5}"); do
		out=$(echo "$2" | timeout 20 /usr/bin/python3 "$TELEMETRY_PY" -f "$1" 2>/dev/null)
		case "$out" in
		"{\"$key\": "*) echo "$out"; return 0 ;;
		esac
		[ "$try" = "${TEL_TRIES:-5}" ] || sleep 0.5
	done
	return 1
}

TELEMETRY_PY=$(command -v dpdk-telemetry.py)

# tel_error WHAT: a read that failed. It is printed (on stderr: the caller
# may be a command substitution) and kept in $WORK/errors, which finish()
# counts as failures, so that it can never pass unseen.
tel_error() {
	printf '%s: FAIL: %s\n' "$TAG" "$*" >&2
	printf '%s\n' "$*" >>"$WORK/errors"
}

# tel_num PREFIX COMMAND KEY: the integer KEY of the (flat) dictionary that
# COMMAND answers. Prints it, or nothing (and records why) if it cannot be read.
tel_num() {
	local out v
	if ! out=$(tel "$1" "$2"); then
		tel_error "telemetry $2 of $1: no answer after ${TEL_TRIES:-5} tries"
		return 1
	fi
	v=$(printf '%s' "$out" | grep -o "\"$3\": -\?[0-9][0-9]*" | head -1)
	if [ -z "$v" ]; then
		tel_error "telemetry $2 of $1: no integer '$3' in: $(printf '%s' "$out" | head -c 300)"
		return 1
	fi
	echo "${v##* }"
}

# counter PREFIX PORT NAME: one counter from /uroce/port/stats.
counter() {
	tel_num "$1" "/uroce/port/stats,$2" "$3"
}

# dstat PREFIX NAME: one value of /uroce/daemon/stats (daemon and transport).
dstat() {
	tel_num "$1" /uroce/daemon/stats "$2"
}

# counter_until PREFIX PORT NAME OP VALUE [SECONDS]: poll a port counter until
# "counter OP VALUE" holds (OP: -eq, -ge, -gt), for at most SECONDS (30, times
# BOUND_X);
# prints the last value read. A frame sent to a daemon is counted when its
# worker gets the CPU, which on a loaded host is not within a fixed sleep.
counter_until() {
	local v="" end
	end=$(deadline "${6:-30}")
	while :; do
		v=$(TEL_TRIES=1 tel "$1" "/uroce/port/stats,$2" | grep -o "\"$3\": [0-9]*")
		v=${v##* }
		[ -n "$v" ] && [ "$v" "$4" "$5" ] && break
		[ "$SECONDS" -ge "$end" ] && break
		sleep 0.2
	done
	[ -n "$v" ] || v=$(counter "$1" "$2" "$3")
	echo "$v"
}

# expect_counter PREFIX PORT NAME WANT [WHAT]: port counter NAME reaches
# exactly WANT (polled: frames sent are counted when the worker runs), and
# stays there; pass or fail, with WHAT in the message.
expect_counter() {
	local v
	v=$(counter_until "$1" "$2" "$3" -ge "$4")
	if [ "$v" = "$4" ]; then
		pass "${5:+$5: }$3 = $v"
	else
		fail "${5:+$5: }$3 = ${v:-unreadable}, want $4"
	fi
}

# dump_stats PREFIX: the non-zero counters of /uroce/daemon/stats on one
# indented line, for whoever reads a failure (or why they cannot be read).
dump_stats() {
	local out
	out=$(TEL_TRIES=2 tel "$1" /uroce/daemon/stats) || { echo "    $1: daemon stats unreadable"; return; }
	printf '%s' "$out" | /usr/bin/python3 -c '
import json, sys
try:
    d = json.loads(sys.stdin.read())["/uroce/daemon/stats"]
    print("    " + sys.argv[1] + ": " + " ".join("%s=%s" % kv for kv in d.items() if kv[1]))
except Exception as e:
    print("    %s: daemon stats unreadable: %r" % (sys.argv[1], e))' "$1"
}

# arping_all NETNS IFACE IP MAC COUNT WHAT: the kernel in NETNS asks for IP
# by ARP (arping -c COUNT, 30 s times BOUND_X at most); passes if every request it sent was
# answered, by MAC. (On a loaded host arping may send fewer than COUNT before
# its deadline: what counts is that none went unanswered.)
arping_all() {
	local out sent got
	out=$(ip netns exec "$1" timeout $(($(bound 30) + 10)) arping -c "$5" -w "$(bound 30)" \
		-I "$2" "$3" 2>&1)
	sent=$(echo "$out" | sed -n 's/^Sent \([0-9]*\) probe.*/\1/p')
	got=$(echo "$out" | sed -n 's/^Received \([0-9]*\) response.*/\1/p')
	if [ "${sent:-0}" -ge 1 ] && [ "$got" = "$sent" ] &&
		echo "$out" | grep -qi "reply from $3 \[$4\]"; then
		pass "$6: $got of $sent ARP requests answered by $4"
	else
		fail "$6: ${got:-?} of ${sent:-?} ARP requests answered (want all, by $4):"
		echo "$out" | sed 's/^/    /'
	fi
}

# wait_link PREFIX [SECONDS]: port 0's link is up (memif: the peer
# connected), bounded by SECONDS (60); fails loudly if not.
wait_link() {
	wait_until "${2:-60}" link_is_up "$1" && return 0
	fail "port 0 of $1 did not come up within $(bound "${2:-60}") s: $(TEL_TRIES=1 tel "$1" /uroce/port/info,0)"
	return 1
}

link_is_up() {
	TEL_TRIES=1 tel "$1" /uroce/port/info,0 | grep -q '"link_up": 1'
}

# wait_listen PORT PID [SECONDS]: until something listens on TCP PORT (the
# server of a client/server pair is ready), PID exits, or SECONDS (60) pass.
wait_listen() {
	wait_until "${3:-60}" listen_or_gone "$1" "$2"
}

listen_or_gone() {
	ss -Hltn "sport = :$1" | grep -q . || ! kill -0 "$2" 2>/dev/null
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

# memif_pair [A_EXTRA [B_EXTRA]]: daemons A (memif server) and B (client) of
# memif_conf, idle_sleep_us = 10, started and their link up (else finish);
# sets PID_A, PID_B, A_SOCK, B_SOCK. Needs MEMIF, PA and PB.
memif_pair() {
	A_SOCK="$WORK/a.sock"
	B_SOCK="$WORK/b.sock"
	memif_conf a 10 "${1:-}"
	memif_conf b 10 "${2:-}"
	start_memif_pair
}

# gen_runs PREFIX PID: the daemon of PREFIX shows (/uroce/gen) an initiator
# running that has completed messages, and uroce-ctl gen PID still runs.
gen_runs() {
	kill -0 "$2" 2>/dev/null || return 1
	TEL_TRIES=1 tel "$1" /uroce/gen | /usr/bin/python3 -c '
import json, sys
try:
    g = list(json.loads(sys.stdin.read())["/uroce/gen"].values())
    sys.exit(0 if any(x["state"] == "running" and x["completed"] > 0 for x in g) else 1)
except Exception:
    sys.exit(1)'
}

# veth_pair NS_A IF_A NS_B IF_B: two new namespaces joined by a veth pair,
# both ends up, the kernel silent on them (IPv6 off, no address).
veth_pair() {
	new_netns "$1"
	new_netns "$3"
	ip link add "$2" netns "$1" type veth peer name "$4" netns "$3" ||
		{ fail "ip link add $2 type veth peer name $4"; finish; }
	ip netns exec "$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1"
	ip netns exec "$3" sysctl -qw "net.ipv6.conf.$4.disable_ipv6=1"
	ip -n "$1" link set "$2" up
	ip -n "$3" link set "$4" up
}

# afp_conf SIDE N IFACE PREFIX [EXTRA]: writes $WORK/SIDE.conf for uroced SIDE
# (a or b) on af_packet over IFACE: 198.18.4.N/24, 2001:2::4:N/112, MAC
# 02:00:c6:12:04:0N, file prefix PREFIX, lcores as lcores() says. EXTRA:
# more lines for [port.veth].
afp_conf() {
	cat >"$WORK/$1.conf" <<EOF
[eal]
lcores = $(lcores "$1")
no_huge = yes
memory = 256
file_prefix = $4
[daemon]
socket = $WORK/$1.sock
[limits]
mbufs = 4095
idle_sleep_us = 10
neigh_retry_ms = 100
[port.veth]
vdev = net_af_packet$2,iface=$3
ipv4 = 198.18.4.$2/24
ipv6 = 2001:2::4:$2/112
mac = 02:00:c6:12:04:0$2
${5:-}
EOF
}

# require_clients: the example and uroce-perf binaries meson passes.
require_clients() {
	[ -n "${UROCE_PERF:-}" ] && [ -x "$UROCE_PERF" ] || skip "UROCE_PERF is not set (uroce-perf not built)"
	[ -n "${EXAMPLES:-}" ] && [ -x "$EXAMPLES/rc_pingpong" ] ||
		skip "EXAMPLES is not set (configure with -Dexamples=true)"
}

# perf_pair NAME SRV_SOCK CLI_SOCK TCP_PORT ARGS...: one uroce-perf run, the
# server on SRV_SOCK's daemon, the client on CLI_SOCK's (once the server
# listens), both bounded by 180 s.
# Passes when both exit 0 (with --verify: the data checked on both sides).
# Logs: $WORK/NAME.srv and $WORK/NAME.cli. Sets PERF_RC to the client's exit.
# The local ACK timeout is 1.07 s (-u 18), not perftest's 67 ms: on a loaded
# 2-core machine a worker can be descheduled for longer than the 0.5 s that
# 67 ms and 7 retries allow (doc/uroce-perf.md).
perf_pair() {
	local name="$1" ssock="$2" csock="$3" port="$4" spid rc_s
	shift 4
	daemons_alive
	timeout "$(bound 180)" "$UROCE_PERF" "$@" -u 18 --socket "$ssock" -p "$port" >"$WORK/$name.srv" 2>&1 &
	spid=$!
	wait_listen "$port" "$spid"
	timeout "$(bound 180)" "$UROCE_PERF" "$@" -u 18 --socket "$csock" -p "$port" 127.0.0.1 \
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
	daemons_alive
	timeout "$(bound 180)" "$EXAMPLES/$name" "$@" >"$WORK/ex-$name.log" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "$name $* (gid index ${UROCE_GID_INDEX:-0}): $(tail -1 "$WORK/ex-$name.log")"
	else
		fail "$name $* (gid index ${UROCE_GID_INDEX:-0}): exit $rc"
		tail -5 "$WORK/ex-$name.log" | sed 's/^/    /'
	fi
}

finish() {
	local e
	# Reads that failed inside a command substitution (tel_error).
	if [ -s "$WORK/errors" ]; then
		while IFS= read -r e; do fail "$e"; done <"$WORK/errors"
		rm -f "$WORK/errors"
	fi
	if [ "$FAILS" -ne 0 ]; then
		log "$FAILS check(s) failed"
		KEEP_WORK=1
		exit 1
	fi
	log "all checks passed"
	exit 0
}

# wstat SOCK [KEY...]: those counters of the daemon's worker 0 (uroce-ctl
# workers --json keys; default "busy_cycles wqes sleeps"), a 0 for each if
# they cannot be read. Needs UROCE_CTL.
wstat() {
	"$UROCE_CTL" workers --socket "$1" --json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
keys = sys.argv[1:] or ["busy_cycles", "wqes", "sleeps"]
try:
    w = json.load(sys.stdin)["workers"][0]
    print(*(w[k] for k in keys))
except Exception:
    print(*(0 for k in keys))' "${@:2}"
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
