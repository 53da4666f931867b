#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# uroced on af_packet over a veth pair between two namespaces the test
# creates. Namespace A holds uroced (198.18.1.2, 2001:2::2); namespace B is a
# Linux kernel stack (198.18.1.1, 2001:2::1).
#   Expect: the kernel in B resolves uroced's IPv4 by ARP (arping, ip neigh).
#   Expect: the kernel in B resolves uroced's IPv6 and link-local by ND.
#   Expect: uroced resolves B (IPv4, IPv6, link-local; learnt from B's own
#           requests, or asked for by ARP request / NS) through its resolve API,
#           fails an address nobody has after neigh_tries, and serves a
#           static neighbour at once.
#   Expect: RoCEv2 frames from B built by scapy (ICRC by scapy.contrib.roce
#           for IPv4, by the annex A17 recipe for IPv6) count as
#           rx_roce_packets; the same frames with one payload byte flipped
#           count as rx_icrc_errors; a frame to another IP counts as
#           rx_dst_not_local.
#   Expect: a second daemon on VLAN 100 / PCP 5 answers tagged ARP with a
#           tag of VLAN 100 priority 5, drops untagged frames
#           (rx_vlan_mismatch), and accepts tagged RoCEv2.
. "$(dirname "$0")/lib.sh"

require_root
require_uroced
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd arping iputils-arping
require_cmd tshark tshark
require_cmd timeout coreutils
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import scapy.contrib.roce' 2>/dev/null ||
	skip "/usr/bin/python3 with scapy.contrib.roce is needed (Debian: python3-scapy)"
require_eal
require_netns_veth

HERE=$(cd "$(dirname "$0")" && pwd)
A="uroce-a-$$"
B="uroce-b-$$"
VA="ua$$"
VB="ub$$"
P="uroce-afp-$$"
PREFIXES+=("$P" "$P-v")
MAC_A=02:00:c6:12:01:02
MAC_B=02:00:c6:12:01:01
LL_A=fe80::c6ff:fe12:102
LL_B=fe80::c6ff:fe12:101

new_netns "$A"
new_netns "$B"
ip link add "$VA" netns "$A" type veth peer name "$VB" netns "$B" || { fail "veth"; finish; }
# The kernel in A must stay silent on the veth: no IPv4 address, no IPv6.
ip netns exec "$A" sysctl -qw "net.ipv6.conf.$VA.disable_ipv6=1"
ip -n "$A" link set "$VA" up
ip -n "$B" link set "$VB" address "$MAC_B"
ip netns exec "$B" sysctl -qw "net.ipv6.conf.$VB.addr_gen_mode=0"
ip -n "$B" addr add 198.18.1.1/24 dev "$VB"
ip -n "$B" addr add 2001:2::1/64 dev "$VB" nodad
# Second addresses that never talk to uroced first: it must ask for them.
ip -n "$B" addr add 198.18.1.3/24 dev "$VB"
ip -n "$B" addr add 2001:2::3/64 dev "$VB" nodad
ip -n "$B" link set "$VB" up

cat >"$WORK/a.conf" <<EOF
# uroced in namespace $A
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
[port.0]
vdev = net_af_packet0,iface=$VA
ipv4 = 198.18.1.2/24
ipv6 = 2001:2::2/64
mac = $MAC_A
neighbor = 198.18.1.77 02:00:c6:12:01:77
EOF
start_uroced a "$A" -c "$WORK/a.conf" || finish
PID_A=$LAST_PID
# B's link-local address must have left the tentative state before it answers NS.
not_tentative() { ! ip -n "$B" -6 addr show dev "$VB" scope link | grep -q tentative; }
wait_until 30 not_tentative || log "B's link-local address is still tentative after $(bound 30) s"

# --- the kernel resolves uroced -----------------------------------------------
arping_all "$B" "$VB" 198.18.1.2 "$MAC_A" 2 "arping from the kernel in B"

# The kernel's own resolution: a datagram to uroced makes B send an ARP request.
ip -n "$B" neigh flush dev "$VB"
ip netns exec "$B" /usr/bin/python3 -c '
import socket, sys
for dst in sys.argv[1:]:
    s = socket.socket(socket.AF_INET6 if ":" in dst else socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", (dst, 9))' 198.18.1.2 2001:2::2 "$LL_A%$VB"
kernel_resolved() { ip -n "$B" neigh show dev "$VB" to "$1" | grep -qi "lladdr $MAC_A"; }
for ip in 198.18.1.2 2001:2::2 "$LL_A"; do
	wait_until 30 kernel_resolved "$ip"
	n=$(ip -n "$B" neigh show dev "$VB" to "$ip")
	if echo "$n" | grep -qi "lladdr $MAC_A"; then
		pass "kernel in B resolved $ip: $n"
	else
		fail "kernel in B did not resolve $ip: '$n'"
	fi
done
if command -v ndisc6 >/dev/null; then
	for ip in 2001:2::2 "$LL_A"; do
		out=$(ip netns exec "$B" timeout 60 ndisc6 -r 10 -w 3000 "$ip" "$VB" 2>&1)
		if echo "$out" | grep -qi "Target link-layer address: $MAC_A"; then
			pass "ndisc6 $ip: NA with target link-layer address $MAC_A"
		else
			fail "ndisc6 $ip: $out"
		fi
	done
else
	log "ndisc6 not installed (Debian: ndisc6): NS/NA checked through the kernel only"
fi

# --- uroced resolves B --------------------------------------------------------
resolve() { # resolve IP WANT_STATE: polls /uroce/port/resolve for up to 30 s
	local ip="$1" want="$2" r end=$(deadline 30)
	while :; do
		r=$(TEL_TRIES=1 tel "$P" "/uroce/port/resolve,0,$ip")
		echo "$r" | grep -q "\"state\": \"$want\"" && { echo "$r"; return 0; }
		[ "$SECONDS" -ge "$end" ] && break
		sleep 0.2
	done
	echo "$r"
	return 1
}
# 198.18.1.1, 2001:2::1 and the link-local were learnt from B's requests above;
# 198.18.1.3 and 2001:2::3 need an ARP request and a neighbour solicitation.
for ip in 198.18.1.1 2001:2::1 "$LL_B" 198.18.1.3 2001:2::3; do
	if r=$(resolve "$ip" reachable) && echo "$r" | grep -qi "$MAC_B"; then
		pass "uroced resolved $ip: $r"
	else
		fail "uroced did not resolve $ip: $r"
	fi
done
if r=$(resolve 198.18.1.99 failed); then
	pass "uroced gave up on 198.18.1.99 after 3 requests: $r"
else
	fail "198.18.1.99 did not fail: $r"
fi
r=$(tel "$P" /uroce/port/resolve,0,198.18.1.77)
echo "$r" | grep -q '"state": "reachable", "mac": "02:00:c6:12:01:77"' &&
	pass "static neighbour 198.18.1.77: $r" || fail "static neighbour: $r"
tel "$P" /uroce/port/neigh,0 | sed 's/^/    /'

# --- RoCEv2 from B --------------------------------------------------------------
send() {
	ip netns exec "$B" /usr/bin/python3 "$HERE/send_roce.py" --iface "$VB" --dmac "$MAC_A" \
		--smac "$MAC_B" "$@" 2>&1 | grep -v '^WARNING'
}
send --src 198.18.1.1 --dst 198.18.1.2 --good 5 --bad 3
send --src 2001:2::1 --dst 2001:2::2 --good 2 --bad 1
send --src 198.18.1.1 --dst 198.18.1.50 --good 1
for c in "rx_roce_packets 7" "rx_icrc_errors 4" "rx_dst_not_local 1"; do
	expect_counter "$P" 0 ${c% *} ${c#* }
done
tel "$P" /uroce/port/stats,0 | sed 's/^/    /'
for c in arp_rx_request arp_tx_reply nd_rx_ns nd_tx_na arp_tx_request arp_rx_reply nd_tx_ns \
	nd_rx_na neigh_failed; do
	v=$(counter_until "$P" 0 "$c" -ge 1)
	[ "${v:-0}" -ge 1 ] && pass "$c = $v" || fail "$c = ${v:-?}, want >= 1"
done

stop_uroced "$PID_A" a

# --- 802.1Q: the same wire, a daemon on VLAN 100 with PCP 5 --------------------
#   Expect: a tagged ARP request (scapy; no 8021q module needed) gets a reply
#           tagged VLAN 100, priority 5 (read by tshark); an untagged request
#           is dropped as rx_vlan_mismatch; tagged RoCEv2 is valid.
sed -e "s/^file_prefix = .*/file_prefix = $P-v/" -e "s|^socket = .*|socket = $WORK/v.sock|" \
	-e 's|^ipv4 = .*|ipv4 = 198.18.4.2/24\nvlan = 100\npcp = 5|' -e '/^ipv6 = /d' \
	-e '/^neighbor = /d' "$WORK/a.conf" >"$WORK/v.conf"
start_uroced v "$A" -c "$WORK/v.conf" || finish
PID_V=$LAST_PID
arp_req() { # arp_req VLAN(0 = untagged)
	ip netns exec "$B" /usr/bin/python3 -c '
import sys
from scapy.all import ARP, Dot1Q, Ether, sendp, conf
conf.verb = 0
l2 = Ether(src=sys.argv[2], dst="ff:ff:ff:ff:ff:ff")
if sys.argv[3] != "0":
    l2 = l2 / Dot1Q(vlan=int(sys.argv[3]))
sendp(l2 / ARP(op=1, hwsrc=sys.argv[2], psrc="198.18.4.1", pdst="198.18.4.2"), iface=sys.argv[1])
' "$VB" "$MAC_B" "$1" 2>&1 | grep -v '^WARNING'
}
# No capture filter: a BPF "arp" does not match a frame whose tag the kernel
# moved to metadata; the display filter sees the tag libpcap puts back.
# tshark runs until the reply is in (-l: a line per frame at once), 60 s at most.
ip netns exec "$B" timeout 120 tshark -l -i "$VB" -a duration:60 -Y "arp.opcode == 2" \
	-T fields -e vlan.id -e vlan.priority -e arp.src.proto_ipv4 >"$WORK/vlan.txt" 2>"$WORK/tshark.log" &
TS=$!
PIDS+=("$TS")
capturing() { grep -q "^Capturing on" "$WORK/tshark.log"; }
wait_until 60 capturing || fail "tshark did not start capturing in $(bound 60) s: $(cat "$WORK/tshark.log")"
sleep 0.5
arp_req 100
wait_until 60 test -s "$WORK/vlan.txt"
kill -INT "$TS" 2>/dev/null
wait "$TS"
read -r vid prio src <"$WORK/vlan.txt"
[ "$vid" = 100 ] && [ "$prio" = 5 ] && [ "$src" = 198.18.4.2 ] &&
	pass "ARP reply to a VLAN 100 request is tagged VLAN $vid, priority $prio (tshark)" ||
	fail "ARP reply tag: '$(cat "$WORK/vlan.txt")', want '100 5 198.18.4.2'"
arp_req 0
send --src 198.18.4.1 --dst 198.18.4.2 --good 2 --bad 1 --vlan 100
v=$(counter_until "$P-v" 0 rx_vlan_mismatch -ge 1)
[ "${v:-0}" -ge 1 ] && pass "untagged frames on a VLAN port: rx_vlan_mismatch = $v" ||
	fail "rx_vlan_mismatch = ${v:-?}, want >= 1"
for c in "rx_roce_packets 2" "rx_icrc_errors 1"; do
	expect_counter "$P-v" 0 ${c% *} ${c#* } "VLAN 100"
done
stop_uroced "$PID_V" v
finish
