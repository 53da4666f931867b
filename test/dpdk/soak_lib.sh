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
	wait_link "$PB" || finish
	# Each resolves the other first, so that no first packet waits for ARP.
	wait_until 60 both_resolved ||
		fail "A and B did not resolve each other in $(bound 60) s (the traffic starts anyway)"
}

both_resolved() {
	TEL_TRIES=1 tel "$PA" /uroce/port/resolve,0,198.18.3.2 | grep -q reachable &&
		TEL_TRIES=1 tel "$PB" /uroce/port/resolve,0,198.18.3.1 | grep -q reachable
}

# holdings PREFIX PID: one line "sessions qps cqs mrs pds segments in_use rss_kb",
# or nothing (the failed read recorded, see tel_error) if it cannot be read.
holdings() {
	local d m out
	d=$(tel "$1" /uroce/daemon/stats) || { tel_error "holdings of $1: /uroce/daemon/stats: no answer"; return 1; }
	m=$(tel "$1" /uroce/port/mempool,0) || { tel_error "holdings of $1: /uroce/port/mempool: no answer"; return 1; }
	out=$(/usr/bin/python3 - "$d" "$m" "$2" 2>&1 <<'PY'
import json, sys
try:
    d = json.loads(sys.argv[1])["/uroce/daemon/stats"]
    m = json.loads(sys.argv[2])["/uroce/port/mempool"]
    rss = 0
    for line in open("/proc/%s/status" % sys.argv[3]):
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    print(d["sessions"], d["qps"], d["cqs"], d["mrs"], d["pds"], d["segments"], m["in_use"], rss)
except Exception as e:
    print("unreadable: %r" % e)
    sys.exit(1)
PY
	) || { tel_error "holdings of $1: $out"; return 1; }
	echo "$out"
}

# compare NAME BEFORE AFTER RSS_SLACK_KB MBUF_SLACK: objects equal, mbufs in
# use and RSS back to the baseline (within the slack).
compare() {
	local name="$1" rss_slack="$4" mbuf_slack="$5"
	if [ -z "$2" ] || [ -z "$3" ]; then
		fail "$name: holdings unreadable (baseline '$2', after '$3')"
		return
	fi
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

# counter_of PREFIX NAME: a counter of port 0 (counter() retries).
counter_of() {
	counter "$1" 0 "$2"
}

# flat NAME SAMPLES...: mbufs in use and RSS of every holdings sample against
# the first: within a burst (32 mbufs) and 2 MiB. Needs two samples at least.
flat() {
	local name="$1" u r u0="" r0="" maxu=0 maxr=0 n=0 smp
	shift
	for smp in "$@"; do
		[ -n "$smp" ] || continue # unreadable (recorded by holdings)
		read -r _ _ _ _ _ _ u r <<<"$smp"
		[ -n "$u0" ] || { u0=$u; r0=$r; }
		[ $((u - u0)) -gt "$maxu" ] && maxu=$((u - u0))
		[ $((r - r0)) -gt "$maxr" ] && maxr=$((r - r0))
		n=$((n + 1))
	done
	if [ "$n" -lt 2 ]; then
		fail "$name: $n holdings sample(s) read, 2 needed (did the traffic end early?)"
		return
	fi
	[ "$maxu" -le 32 ] && [ "$maxr" -le 2048 ] &&
		pass "$name flat over $n samples: mbufs in use at most +$maxu, RSS at most +$maxr kB (first: $u0 mbufs, $r0 kB)" ||
		fail "$name over $n samples: mbufs in use up to +$maxu, RSS up to +$maxr kB (first: $u0, $r0 kB)"
}
