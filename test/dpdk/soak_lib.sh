# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Helpers of test_churn.sh and test_soak.sh (sourced after lib.sh): two uroced
# joined by memif and what they hold, read from outside while they run.

# soak_pair A_EXTRA B_EXTRA: both daemons, link up. Sets PID_A, PID_B.
soak_pair() {
	memif_conf a 10 "${1:-}"
	memif_conf b 10 "${2:-}"
	start_uroced a - -c "$WORK/a.conf" || finish
	PID_A=$LAST_PID
	start_uroced b - -c "$WORK/b.conf" || finish
	PID_B=$LAST_PID
	for _ in $(seq 50); do
		tel "$PB" /uroce/port/info,0 | grep -q '"link_up": 1' && break
		sleep 0.1
	done
	# Each resolves the other first, so that no first packet waits for ARP.
	for _ in $(seq 50); do
		tel "$PA" /uroce/port/resolve,0,198.18.3.2 | grep -q reachable &&
			tel "$PB" /uroce/port/resolve,0,198.18.3.1 | grep -q reachable && break
		sleep 0.1
	done
}

# holdings PREFIX PID: one line "sessions qps cqs mrs pds segments in_use rss_kb"
holdings() {
	local d m
	d=$(tel "$1" /uroce/daemon/stats)
	m=$(tel "$1" /uroce/port/mempool,0)
	/usr/bin/python3 - "$d" "$m" "$2" <<'PY'
import json, sys
d = json.loads(sys.argv[1])["/uroce/daemon/stats"]
m = json.loads(sys.argv[2])["/uroce/port/mempool"]
rss = 0
for line in open("/proc/%s/status" % sys.argv[3]):
    if line.startswith("VmRSS:"):
        rss = int(line.split()[1])
print(d["sessions"], d["qps"], d["cqs"], d["mrs"], d["pds"], d["segments"], m["in_use"], rss)
PY
}

# compare NAME BEFORE AFTER RSS_SLACK_KB MBUF_SLACK: objects equal, mbufs in
# use and RSS back to the baseline (within the slack).
compare() {
	local name="$1" rss_slack="$4" mbuf_slack="$5"
	read -r s0 q0 c0 m0 p0 g0 u0 r0 <<<"$2"
	read -r s1 q1 c1 m1 p1 g1 u1 r1 <<<"$3"
	[ "$s1 $q1 $c1 $m1 $p1 $g1" = "$s0 $q0 $c0 $m0 $p0 $g0" ] &&
		pass "$name: sessions/QPs/CQs/MRs/PDs/segments back to $s0/$q0/$c0/$m0/$p0/$g0" ||
		fail "$name: objects $s1/$q1/$c1/$m1/$p1/$g1, baseline $s0/$q0/$c0/$m0/$p0/$g0"
	[ "$u1" -le $((u0 + mbuf_slack)) ] &&
		pass "$name: mbufs in use $u1 (baseline $u0)" ||
		fail "$name: mbufs in use $u1, baseline $u0 (leak of $((u1 - u0)))"
	[ "$r1" -le $((r0 + rss_slack)) ] &&
		pass "$name: RSS $r1 kB (baseline $r0 kB, $((r1 - r0)) kB)" ||
		fail "$name: RSS $r1 kB, baseline $r0 kB: grew by $((r1 - r0)) kB"
}

# counter_of PREFIX NAME: a port counter, asked up to three times (telemetry
# answers slowly on a loaded machine).
counter_of() {
	local v
	for _ in 1 2 3; do
		v=$(counter "$1" 0 "$2")
		[ -n "$v" ] && { echo "$v"; return 0; }
		sleep 0.5
	done
	echo ""
}
