#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# uroced on net_tap inside a namespace the test creates. The tap interface is
# the kernel's end of the wire (198.18.6.1); uroced is 198.18.6.2 with a MAC
# of its own (the tap's ethdev MAC is the kernel interface's).
#   Expect: the kernel resolves uroced by ARP (arping); uroced resolves the
#           kernel; scapy RoCEv2 frames from the kernel side count as valid,
#           a corrupted one as rx_icrc_errors.
. "$(dirname "$0")/lib.sh"

require_root
require_uroced
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd arping iputils-arping
require_cmd timeout coreutils
[ -c /dev/net/tun ] || skip "no /dev/net/tun: net_tap cannot create a tap interface"
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import scapy.contrib.roce' 2>/dev/null ||
	skip "/usr/bin/python3 with scapy.contrib.roce is needed (Debian: python3-scapy)"
require_eal

HERE=$(cd "$(dirname "$0")" && pwd)
NS="uroce-t-$$"
TAP="ut$$"
P="uroce-tap-$$"
PREFIXES+=("$P")
MAC_U=02:00:c6:12:06:02

new_netns "$NS"
cat >"$WORK/t.conf" <<CONF
[eal]
lcores = 0,1
no_huge = yes
memory = 128
file_prefix = $P
[daemon]
socket = $WORK/t.sock
[limits]
mbufs = 2047
idle_sleep_us = 100
neigh_retry_ms = 200
[port.tap]
vdev = net_tap0,iface=$TAP
ipv4 = 198.18.6.2/24
mac = $MAC_U
CONF
start_uroced t "$NS" -c "$WORK/t.conf" || finish
PID_T=$LAST_PID
ip netns exec "$NS" sysctl -qw "net.ipv6.conf.$TAP.disable_ipv6=1"
ip -n "$NS" addr add 198.18.6.1/24 dev "$TAP"
ip -n "$NS" link set "$TAP" up
MAC_K=$(cat "/sys/class/net/$TAP/address" 2>/dev/null ||
	ip netns exec "$NS" cat "/sys/class/net/$TAP/address")

out=$(ip netns exec "$NS" timeout 10 arping -c 2 -w 5 -I "$TAP" 198.18.6.2 2>&1)
echo "$out" | sed 's/^/    /'
echo "$out" | grep -qi "reply from 198.18.6.2 \[$MAC_U\]" && echo "$out" | grep -q 'Received 2 response(s)' &&
	pass "arping from the kernel over the tap: 2 replies from $MAC_U" || fail "arping over the tap"
r=""
for _ in $(seq 15); do
	r=$(tel "$P" /uroce/port/resolve,0,198.18.6.1)
	echo "$r" | grep -q '"state": "reachable"' && break
	sleep 0.2
done
echo "$r" | grep -qi "\"mac\": \"$MAC_K\"" && pass "uroced resolved the kernel end 198.18.6.1: $r" ||
	fail "uroced did not resolve 198.18.6.1 to $MAC_K: $r"

ip netns exec "$NS" /usr/bin/python3 "$HERE/send_roce.py" --iface "$TAP" --dmac "$MAC_U" \
	--smac "$MAC_K" --src 198.18.6.1 --dst 198.18.6.2 --good 3 --bad 1 2>&1 | grep -v '^WARNING'
sleep 0.5
for c in "rx_roce_packets 3" "rx_icrc_errors 1"; do
	set -- $c
	v=$(counter "$P" 0 "$1")
	[ "$v" = "$2" ] && pass "$1 = $v" || fail "$1 = $v, want $2"
done
stop_uroced "$PID_T" t
finish
