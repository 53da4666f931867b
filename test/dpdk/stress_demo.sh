#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# README's first command on a busy host (issue 21.1): .ci/demo DEMO_RUNS
# times in a row (10 by default) with the build given (UROCE_BUILD: it
# installs and builds nothing), inside test/dpdk/load.sh's loaded machine:
# five idle uroced of the old idle policy and a busy loop on each CPU.
#   Expect: every run exits 0 with its summary table; the first failure
#           stops the loop and shows the run's output.
# Not in a suite (a loaded run of ten demos takes 20 to 40 minutes on two
# CPUs); run it as root before changing the demo, the transport's timers or
# the idle policy, and record the result in doc/testing.md:
#   bash test/dpdk/stress_demo.sh [BUILD_DIR]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd) || exit 2
RUNS=${DEMO_RUNS:-10}
[ "$(id -u)" -eq 0 ] || { echo "stress_demo: needs root (EAL, hugepages)"; exit 77; }
[ -x "$BUILD/app/uroced/uroced" ] && [ -x "$BUILD/app/uroce-perf/uroce-perf" ] ||
	{ echo "stress_demo: no uroced/uroce-perf in $BUILD"; exit 2; }

UROCED=$BUILD/app/uroced/uroced bash "$HERE/load.sh" run bash -c '
	ok=0
	for i in $(seq "$1"); do
		t0=$SECONDS
		if out=$(UROCE_BUILD="$2" bash "$3/.ci/demo" 2>&1); then
			ok=$((ok + 1))
			echo "stress_demo: run $i passed in $((SECONDS - t0)) s"
		else
			echo "stress_demo: run $i FAILED after $((SECONDS - t0)) s:"
			echo "$out" | tail -20 | sed "s/^/    /"
			break
		fi
	done
	echo "stress_demo: $ok of $1 runs passed on the loaded host"
	[ "$ok" -eq "$1" ]' stress_demo "$RUNS" "$BUILD" "$SRC"
