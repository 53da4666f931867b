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

arping_all "$NS" "$TAP" 198.18.6.2 "$MAC_U" 2 "arping from the kernel over the tap"
r=""
tap_resolved() {
	r=$(TEL_TRIES=1 tel "$P" /uroce/port/resolve,0,198.18.6.1)
	echo "$r" | grep -q '"state": "reachable"'
}
wait_until 30 tap_resolved
echo "$r" | grep -qi "\"mac\": \"$MAC_K\"" && pass "uroced resolved the kernel end 198.18.6.1: $r" ||
	fail "uroced did not resolve 198.18.6.1 to $MAC_K: $r"

ip netns exec "$NS" /usr/bin/python3 "$HERE/send_roce.py" --iface "$TAP" --dmac "$MAC_U" \
	--smac "$MAC_K" --src 198.18.6.1 --dst 198.18.6.2 --good 3 --bad 1 2>&1 | grep -v '^WARNING'
for c in "rx_roce_packets 3" "rx_icrc_errors 1"; do
	expect_counter "$P" 0 ${c% *} ${c#* }
done
stop_uroced "$PID_T" t

# --- Two workers on the tap. net_tap fills every RX descriptor of every
# queue with mbufs of the port's pool: with 2 x 1024 descriptors a pool of
# 2047 is gone before the first frame. uroced must say so and not start
# (it used to start and drop every frame as rx_nombuf).
sed -i 's/^lcores = 0,1$/lcores = 0,1,2@1/' "$WORK/t.conf"
out=$(ip netns exec "$NS" timeout -k 5 "$READY_S" "$UROCED" -c "$WORK/t.conf" 2>&1)
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && echo "$out" | grep -q "raise \[limits\] mbufs"; then
	pass "two workers, mbufs = 2047: refused (exit $rc): $(echo "$out" | grep 'raise \[limits\] mbufs' | sed 's/^uroced: //')"
else
	fail "two workers, mbufs = 2047: exit $rc, no advice on mbufs:"
	echo "$out" | tail -n 5 | sed 's/^/    /'
fi

# Then with enough mbufs: 64 frames of 64 flows, spread over both RX queues
# by the kernel; every one is counted, none lost. (dqpn 0x11 is a QPN of
# worker 0 that no QP has: its engine counts each as rx_bad_qpn; the frames
# worker 1 receives are handed to worker 0 first.)
sed -i 's/^mbufs = 2047$/mbufs = 4095/' "$WORK/t.conf"
start_uroced t2 "$NS" -c "$WORK/t.conf" || finish
PID_T=$LAST_PID
ip -n "$NS" link set "$TAP" up
tap_up() { ip -n "$NS" link show "$TAP" | grep -q 'state UP'; }
wait_until 30 tap_up
ip netns exec "$NS" /usr/bin/python3 "$HERE/send_roce.py" --iface "$TAP" --dmac "$MAC_U" \
	--smac "$MAC_K" --src 198.18.6.1 --dst 198.18.6.2 --good 64 2>&1 | grep -v '^WARNING'
v=$(counter_until "$P" 0 rx_roce_packets -ge 64)
bad_qpn_64() { [ "$(TEL_TRIES=1 tel "$P" /uroce/daemon/stats | grep -o '"rx_bad_qpn": [0-9]*')" = '"rx_bad_qpn": 64' ]; }
wait_until 30 bad_qpn_64 # the frames worker 1 hands over reach worker 0's engine later
h=$(counter "$P" 0 rx_handoff)
bq=$(dstat "$P" rx_bad_qpn)
rxw=$(tel "$P" /uroce/workers | /usr/bin/python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)["/uroce/workers"]
    print(" ".join(str(d[k]["rx_packets"]) for k in sorted(d)))
except Exception:
    print("unreadable")')
[ "$v" = 64 ] && pass "two workers: rx_roce_packets = 64 (per worker RX: $rxw; $h handed to worker 0)" ||
	fail "two workers: rx_roce_packets = $v of 64 (per worker RX: $rxw; rx_handoff $h)"
[ "$bq" = 64 ] && pass "two workers: all 64 reached worker 0's engine (rx_bad_qpn 64)" ||
	fail "two workers: rx_bad_qpn = $bq of 64"
nb=$(tel "$P" /ethdev/stats,0 | grep -o '"rx_nombuf": [0-9]*' | grep -o '[0-9]*$')
[ "$nb" = 0 ] && pass "two workers: rx_nombuf = 0" || fail "two workers: rx_nombuf = $nb"
stop_uroced "$PID_T" t2
finish
