#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# The loaded machine of issue 16 (doc/testing.md, "Loaded mode"): the dpdk
# suite must pass while the host is busy with other work. This script makes
# that work and takes it away again:
#   - UROCE_LOAD_DAEMONS (5) idle uroced: no port, no client, --no-huge,
#     idle_sleep_us = idle_sleep_max_us = UROCE_LOAD_IDLE_US (10: the old
#     policy the tests and the demo used, whose idle workers wake up every
#     few microseconds; today's daemons sleep longer when idle), each
#     with its own socket and EAL file prefix, their workers alternating
#     between CPU 1 and CPU 0;
#   - one busy loop pinned to each CPU (UROCE_LOAD_SPINNERS: how many CPUs,
#     all by default).
#
#   load.sh start          start them (refused if a load is running already)
#   load.sh stop           stop them, by the PIDs start recorded
#   load.sh status         say what runs and what it costs; exit 1 if the
#                          load is not complete (a process died)
#   load.sh run CMD ARG... start, run CMD with UROCE_TEST_LOAD=1, stop
#                          (whatever happens: an EXIT trap), exit with CMD's
#                          status, e.g. load.sh run meson test -C build --suite dpdk
#
# UROCED: the uroced binary (default: build/app/uroced/uroced under the
# source tree). UROCE_LOAD_DIR: where the state lives (default
# /tmp/uroce-load); the dpdk tests read it (lib.sh, require_load) when
# UROCE_TEST_LOAD=1. Needs root (EAL), like the dpdk suite.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
UROCED=${UROCED:-$SRC/build/app/uroced/uroced}
DIR=${UROCE_LOAD_DIR:-/tmp/uroce-load}
NDAEMONS=${UROCE_LOAD_DAEMONS:-5}
IDLE_US=${UROCE_LOAD_IDLE_US:-10}
NCPU=$(nproc)
NSPIN=${UROCE_LOAD_SPINNERS:-$NCPU}
STATE="$DIR/pids"          # one line per process: PID START_TICKS KIND NAME
READY_S=120                # bound on one daemon's start on a loaded host

say() { printf 'load.sh: %s\n' "$*"; }
die() { printf 'load.sh: error: %s\n' "$*" >&2; exit 1; }

# start_ticks PID: the process's start time (field 22 of /proc/PID/stat), so
# that a PID reused by another process is never taken for ours.
start_ticks() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	set -- $stat
	echo "${20}"
}

# ours PID TICKS: PID is still the process we started.
ours() {
	[ "$(start_ticks "$1" 2>/dev/null)" = "$2" ]
}

record() { # record PID KIND NAME
	local t
	t=$(start_ticks "$1") || t=0
	echo "$1 $t $2 $3" >>"$STATE"
}

# running: a state file with at least one process of ours alive.
running() {
	local pid t
	[ -f "$STATE" ] || return 1
	while read -r pid t _ _; do
		ours "$pid" "$t" && return 0
	done <"$STATE"
	return 1
}

daemon_conf() { # daemon_conf N
	local n="$1" lcores
	# The workers alternate between the CPUs, so that both take wake-ups.
	if [ $((n % 2)) = 1 ] || [ "$NCPU" -lt 2 ]; then lcores=0,1; else lcores=0@1,1@0; fi
	cat >"$DIR/d$n.conf" <<EOF
# Idle load daemon $n (test/dpdk/load.sh): no port, no client.
[eal]
lcores = $lcores
no_huge = yes
memory = 64
file_prefix = uroce-load-$n
[daemon]
socket = $DIR/d$n.sock
[limits]
idle_sleep_us = $IDLE_US
idle_sleep_max_us = $IDLE_US
EOF
}

do_stop() {
	local pid t kind name i left=0
	[ -f "$STATE" ] || { say "no load recorded in $DIR"; return 0; }
	while read -r pid t kind name; do
		ours "$pid" "$t" || continue
		kill -TERM "$pid" 2>/dev/null
	done <"$STATE"
	while read -r pid t kind name; do
		for i in $(seq 100); do ours "$pid" "$t" || break; sleep 0.1; done
		if ours "$pid" "$t"; then
			say "$kind $name (pid $pid) did not stop within 10 s of SIGTERM: SIGKILL"
			kill -KILL "$pid" 2>/dev/null
			left=1
		fi
	done <"$STATE"
	for i in $(seq "$NDAEMONS"); do
		rm -rf "/var/run/dpdk/uroce-load-$i"
	done
	say "stopped the load recorded in $DIR"
	rm -rf "$DIR"
	return $left
}

do_start() {
	local i pid c
	running && die "a load is running already ($STATE): load.sh stop first"
	[ -x "$UROCED" ] || die "no uroced at $UROCED (build first, or set UROCED)"
	[ "$(id -u)" -eq 0 ] || die "needs root (EAL), as the dpdk suite does"
	command -v taskset >/dev/null || die "taskset not found (Debian package util-linux)"
	rm -rf "$DIR"
	mkdir -p "$DIR" || die "cannot create $DIR"
	: >"$STATE"
	for i in $(seq "$NDAEMONS"); do
		daemon_conf "$i"
		"$UROCED" -c "$DIR/d$i.conf" >"$DIR/d$i.log" 2>&1 </dev/null &
		pid=$!
		record "$pid" daemon "d$i"
	done
	# Every daemon ready (bounded, polled) before the busy loops start.
	for i in $(seq "$NDAEMONS"); do
		pid=$(awk -v n="d$i" '$4 == n { print $1 }' "$STATE")
		for _ in $(seq $((READY_S * 10))); do
			grep -q '^uroced: ready' "$DIR/d$i.log" && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if ! grep -q '^uroced: ready' "$DIR/d$i.log"; then
			say "idle daemon d$i did not become ready; its log:"
			sed 's/^/    /' "$DIR/d$i.log"
			do_stop >/dev/null
			exit 1
		fi
	done
	for c in $(seq 0 $((NSPIN - 1))); do
		taskset -c $((c % NCPU)) bash -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &
		record "$!" spinner "cpu$((c % NCPU))"
	done
	say "started $NDAEMONS idle uroced (idle_sleep_us = $IDLE_US, --no-huge, no port) and" \
		"$NSPIN busy loops (one per CPU); state in $DIR"
}

# status [-q]: every recorded process alive; without -q, what each costs.
do_status() {
	local pid t kind name bad=0 cpu
	[ -f "$STATE" ] || { [ "${1:-}" = -q ] || say "no load running ($DIR)"; return 1; }
	while read -r pid t kind name; do
		if ours "$pid" "$t"; then
			cpu=$(ps -o %cpu= -p "$pid" 2>/dev/null | tr -d ' ')
			[ "${1:-}" = -q ] || say "$kind $name pid $pid: running, ${cpu:-?} % of a CPU since it started"
		else
			bad=1
			[ "${1:-}" = -q ] || say "$kind $name pid $pid: GONE"
		fi
	done <"$STATE"
	return $bad
}

do_run() {
	local rc
	[ $# -ge 1 ] || die "usage: load.sh run CMD [ARG...]"
	do_start || exit 1
	# Whatever happens to CMD (failure, a signal to us), the load goes.
	trap 'do_stop' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	UROCE_TEST_LOAD=1 UROCE_LOAD_DIR="$DIR" "$@"
	rc=$?
	do_status
	return $rc
}

case "${1:-}" in
start) do_start ;;
stop) do_stop ;;
status) shift; do_status "$@" ;;
run) shift; do_run "$@"; exit $? ;;
*) echo "usage: $0 start|stop|status [-q]|run CMD [ARG...]" >&2; exit 2 ;;
esac
