#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Neighbour ageing (issue 9): uroced on af_packet over a veth into namespace A
# (198.18.8.2, 2001:2:8::2) with neigh_reachable_ms = 1000; namespace B is a
# kernel (198.18.8.1, 2001:2:8::1) and a peer (hostile_peer.py neigh) that
# RDMA-WRITEs to a victim client's RC QP and watches where the ACKs go. The
# kernel in B never announces anything on its own (arp_notify and
# ndisc_notify are 0), so only uroced's ageing can notice a change.
#   Expect: the ACKs go to B's MAC; after neigh_reachable_ms the entry is
#           asked again (neigh_refresh moves) and stays reachable with the
#           same MAC (neigh_mac_changed does not move).
#   Expect: B's MAC changes: the ACKs go to the new MAC (on a quiet host within
#           neigh_reachable_ms + neigh_retry_ms + the workers' 1 s next-hop
#           cache; the time is reported, not asserted), the
#           neighbour table holds it for IPv4 and IPv6, neigh_mac_changed moved.
#   Expect: B's addresses go away: the entries fail after neigh_tries requests
#           (neigh_failed moves), and resolution reports "failed".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/soak_lib.sh"

require_root
require_uroced
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd timeout coreutils
[ -n "${HOSTILE_VICTIM:-}" ] && [ -x "$HOSTILE_VICTIM" ] || skip "HOSTILE_VICTIM is not set"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is needed (Debian: python3)"
require_eal
require_netns_veth

HERE=$(cd "$(dirname "$0")" && pwd)
A="uroce-na-$$"
B="uroce-nb-$$"
VA="na$$"
VB="nb$$"
P="uroce-neigh-$$"
PREFIXES+=("$P")
MAC_A=02:00:c6:12:08:02
MAC_1=02:00:c6:12:08:01
MAC_2=02:00:c6:12:08:99

new_netns "$A"
new_netns "$B"
ip link add "$VA" netns "$A" type veth peer name "$VB" netns "$B" || { fail "veth"; finish; }
ip netns exec "$A" sysctl -qw "net.ipv6.conf.$VA.disable_ipv6=1"
ip -n "$A" link set "$VA" up
ip netns exec "$B" sysctl -qw "net.ipv4.conf.all.arp_notify=0" "net.ipv4.conf.default.arp_notify=0"
ip netns exec "$B" sysctl -qw "net.ipv6.conf.all.ndisc_notify=0" 2>/dev/null
ip -n "$B" link set "$VB" address "$MAC_1"
ip -n "$B" addr add 198.18.8.1/24 dev "$VB"
ip -n "$B" addr add 2001:2:8::1/64 dev "$VB" nodad
ip -n "$B" link set "$VB" up

cat >"$WORK/a.conf" <<CONF
[eal]
lcores = 0,1
no_huge = yes
memory = 128
file_prefix = $P
[daemon]
socket = $WORK/a.sock
[limits]
mbufs = 2047
idle_sleep_us = 100
neigh_retry_ms = 200
neigh_tries = 3
neigh_reachable_ms = 1000
[port.0]
vdev = net_af_packet0,iface=$VA
ipv4 = 198.18.8.2/24
ipv6 = 2001:2:8::2/64
mac = $MAC_A
CONF
start_uroced a "$A" -c "$WORK/a.conf" || finish
PID_A=$LAST_PID

neigh_of() { # neigh_of IP: "MAC state" from /uroce/port/neigh,0
	tel "$P" /uroce/port/neigh,0 | /usr/bin/python3 -c '
import json, sys
try:
    n = json.loads(sys.stdin.read())["/uroce/port/neigh"]
except Exception:
    print("unreadable")
    sys.exit(0)
for e in n:
    ip, mac, st = e.split()
    if ip in (sys.argv[1], "::ffff:" + sys.argv[1]):
        print(mac, st)' "$1"
}
resolve_until() { # resolve_until IP STATE [MAC]: poll /uroce/port/resolve for 30 s
	local r end=$(deadline 30)
	while :; do
		r=$(TEL_TRIES=1 tel "$P" "/uroce/port/resolve,0,$1")
		echo "$r" | grep -q "\"state\": \"$2\"" &&
			{ [ -z "${3:-}" ] || echo "$r" | grep -qi "$3"; } && { echo "$r"; return 0; }
		[ "$SECONDS" -ge "$end" ] && break
		sleep 0.1
	done
	echo "$r"
	return 1
}

# The peer talks through a FIFO: one line "PHASE MAC" per phase, one JSON
# line back with where the ACKs went.
mkfifo "$WORK/to_peer"
ip netns exec "$B" timeout "$(bound 300)" /usr/bin/python3 "$HERE/hostile_peer.py" neigh \
	--iface "$VB" --mac-a "$MAC_A" --mac-b "$MAC_1" --ip-a 198.18.8.2 --ip-b 198.18.8.1 \
	--ip6-a 2001:2:8::2 --ip6-b 2001:2:8::1 --victim "$HOSTILE_VICTIM" \
	--socket "$WORK/a.sock" --timeout "$(bound 30)" <"$WORK/to_peer" >"$WORK/peer.out" 2>&1 &
PEER=$!
PIDS+=("$PEER")
exec 7>"$WORK/to_peer"
wait_until 60 grep -q ready "$WORK/peer.out" ||
	{ fail "peer did not start: $(cat "$WORK/peer.out")"; finish; }

phase() { # phase NAME MAC: the ACKs must reach MAC (the peer's --timeout bounds it)
	echo "$1 $2" >&7
	wait_until 90 grep -q "\"phase\": \"$1\"" "$WORK/peer.out"
	grep "\"phase\": \"$1\"" "$WORK/peer.out"
}

r=$(phase before "$MAC_1")
echo "$r" | grep -q '"ok": true' && pass "ACKs go to B's MAC $MAC_1: $r" || fail "before: $r"
resolve_until 2001:2:8::1 reachable "$MAC_1" >/dev/null &&
	pass "IPv6 neighbour 2001:2:8::1 resolved to $MAC_1" || fail "IPv6 neighbour did not resolve"
# Ageing with no change: asked again (after neigh_reachable_ms, 1 s), still
# the same MAC.
refresh=$(counter_until "$P" 0 neigh_refresh -ge 1)
changed=$(counter_of "$P" neigh_mac_changed)
[ "${refresh:-0}" -ge 1 ] && [ "${changed:-1}" -eq 0 ] &&
	pass "after neigh_reachable_ms: neigh_refresh = $refresh, neigh_mac_changed = 0" ||
	fail "after neigh_reachable_ms: neigh_refresh = $refresh, neigh_mac_changed = $changed"
n=$(neigh_of 198.18.8.1)
case "$n" in "$MAC_1 reachable" | "$MAC_1 probe") pass "198.18.8.1 is still $n";;
	*) fail "198.18.8.1 after a refresh: '$n'";; esac

# The peer's MAC changes; nothing announces it.
ip -n "$B" link set "$VB" address "$MAC_2"
r=$(phase after "$MAC_2")
echo "$r" | grep -q '"ok": true' && pass "after the MAC change the ACKs go to $MAC_2: $r" ||
	fail "after the MAC change: $r"
# How long it took is reported, not asserted (a loaded host adds to it): on
# a quiet one about 1 s reachable + 0.2 s retry + 1 s worker cache + a write
# period; nothing but the ageing can have noticed the change (see above).
secs=$(echo "$r" | /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["seconds"])' 2>/dev/null)
log "the MAC change was followed in ${secs:-?} s"
resolve_until 198.18.8.1 reachable "$MAC_2" >/dev/null && pass "IPv4 entry holds $MAC_2" ||
	fail "IPv4 entry: $(neigh_of 198.18.8.1)"
resolve_until 2001:2:8::1 reachable "$MAC_2" >/dev/null && pass "IPv6 entry holds $MAC_2" ||
	fail "IPv6 entry: $(neigh_of 2001:2:8::1)"
changed=$(counter_of "$P" neigh_mac_changed)
[ "${changed:-0}" -ge 2 ] && pass "neigh_mac_changed = $changed (IPv4 and IPv6)" ||
	fail "neigh_mac_changed = ${changed:-?}, want >= 2"
echo "quit" >&7 2>/dev/null
exec 7>&-

# The peer goes away: its addresses are removed, nobody answers.
failed0=$(counter_of "$P" neigh_failed)
ip -n "$B" addr flush dev "$VB"
r=$(resolve_until 198.18.8.1 failed) && pass "a peer gone quiet fails: $r" ||
	fail "198.18.8.1 did not fail: $r ($(neigh_of 198.18.8.1))"
failed=$(counter_of "$P" neigh_failed)
[ "${failed:-0}" -gt "${failed0:-0}" ] && pass "neigh_failed $failed0 -> $failed" ||
	fail "neigh_failed did not move ($failed0 -> $failed)"
tel "$P" /uroce/port/neigh,0 | sed 's/^/    /'
wait "$PEER" 2>/dev/null
stop_uroced "$PID_A" a
finish
