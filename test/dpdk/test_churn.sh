#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Churn (issue 9): two uroced over memif, one client process with a context
# on each (soak_client churn). CHURN_CYCLES times (10000 by default) an RC QP
# is created on each side, connected to the other, carries one WRITE whose
# bytes are checked, and both are destroyed; every 100 cycles the CQs and MRs
# are made again too.
#   Expect: every cycle's WRITE lands where it should.
#   Expect: after a warm-up of 1000 cycles (the daemon's heap settles: RSS
#           grows by about 4 MB in the first thousand cycles, then by about
#           100 kB in the next eleven thousand) as the baseline, both daemons
#           end the 10000 cycles holding exactly what they held (sessions,
#           QPs, CQs, MRs, PDs, segments: none), the same mbufs in use (within
#           a burst of 32), and an RSS within 1 MiB of the baseline.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/soak_lib.sh"

require_root
require_uroced
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd timeout coreutils
[ -n "${SOAK_CLIENT:-}" ] && [ -x "$SOAK_CLIENT" ] || skip "SOAK_CLIENT is not set"
require_eal

MEMIF="$WORK/memif.sock"
PA="uroce-churn-a-$$"
PB="uroce-churn-b-$$"
PREFIXES+=("$PA" "$PB")
CYCLES=${CHURN_CYCLES:-10000}

soak_pair "" ""
churn() { # churn N LABEL
	local t0=$SECONDS out
	out=$(timeout 1800 "$SOAK_CLIENT" churn --a "$WORK/a.sock" --b "$WORK/b.sock" \
		--cycles "$1" 2>&1)
	if [ $? -eq 0 ]; then
		pass "$2: $1 create/connect/WRITE/destroy cycles: $(echo "$out" | tail -1)"
	else
		fail "$2: $(echo "$out" | tail -3 | tr '\n' ' ')"
	fi
	log "$2 took $((SECONDS - t0)) s"
}
churn 1000 warm-up
sleep 0.5
base_a=$(holdings "$PA" "$PID_A")
base_b=$(holdings "$PB" "$PID_B")
log "baseline A: $base_a; B: $base_b (sessions qps cqs mrs pds segments mbufs_in_use rss_kb)"
churn "$CYCLES" churn
sleep 0.5
end_a=$(holdings "$PA" "$PID_A")
end_b=$(holdings "$PB" "$PID_B")
log "after A: $end_a; B: $end_b"
compare "daemon A" "$base_a" "$end_a" 1024 32
compare "daemon B" "$base_b" "$end_b" 1024 32
read -r s q _ <<<"$end_a"
[ "$s $q" = "0 0" ] && pass "daemon A holds no session and no QP" || fail "daemon A: $end_a"
stop_uroced "$PID_A" a
stop_uroced "$PID_B" b
finish
