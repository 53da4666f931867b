#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Fault injection (issue #5) end to end: uroced on af_packet over a veth pair
# into a namespace whose kernel and scapy are the peer, with
#   fault_drop = 0.4, fault_dup = 0.2, fault_reorder = 0.2, fault_corrupt = 0.2
# on received packets, so that every RoCEv2 frame meets exactly one fault.
#   Expect: the four fault counters add up to exactly the RoCEv2 frames sent:
#           nothing else (ARP, the kernel's IPv6 ND) was subject to faults.
#   Expect: the frames that reach the engine (rx_roce_packets) are the
#           duplicated ones twice and the reordered ones once (a held frame
#           is released on an idle link); the corrupted ones fail the ICRC
#           check (rx_icrc_errors); the dropped ones are gone.
#   Expect: the kernel in B still resolves uroced by ARP: every request
#           answered (3 asked).
#   Expect: uroced stops cleanly with faults configured (held frames freed).
. "$(dirname "$0")/lib.sh"

require_root
require_uroced
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd arping iputils-arping
require_cmd timeout coreutils
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import scapy.contrib.roce' 2>/dev/null ||
	skip "/usr/bin/python3 with scapy.contrib.roce is needed (Debian: python3-scapy)"
require_eal
require_netns_veth

HERE=$(cd "$(dirname "$0")" && pwd)
A="uroce-fa-$$"
B="uroce-fb-$$"
VA="fa$$"
VB="fb$$"
P="uroce-fault-$$"
PREFIXES+=("$P")
MAC_A=02:00:c6:12:05:02
MAC_B=02:00:c6:12:05:01
N4=300
N6=100

new_netns "$A"
new_netns "$B"
ip link add "$VA" netns "$A" type veth peer name "$VB" netns "$B" || { fail "veth"; finish; }
ip netns exec "$A" sysctl -qw "net.ipv6.conf.$VA.disable_ipv6=1"
ip -n "$A" link set "$VA" up
ip -n "$B" link set "$VB" address "$MAC_B"
ip -n "$B" addr add 198.18.5.1/24 dev "$VB"
ip -n "$B" addr add 2001:2:5::1/64 dev "$VB" nodad
ip -n "$B" link set "$VB" up

cat >"$WORK/a.conf" <<EOF
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
[port.0]
vdev = net_af_packet0,iface=$VA
ipv4 = 198.18.5.2/24
ipv6 = 2001:2:5::2/64
mac = $MAC_A
fault_drop = 0.4
fault_dup = 0.2
fault_reorder = 0.2
fault_corrupt = 0.2
fault_dir = rx
fault_seed = 7
EOF
start_uroced a "$A" -c "$WORK/a.conf" || finish
PID_A=$LAST_PID

# --- ARP is never subject to faults -------------------------------------------
arping_all "$B" "$VB" 198.18.5.2 "$MAC_A" 3 "ARP with fault_drop = 0.4"

# --- RoCEv2 from B: every frame meets one fault ---------------------------------
send() {
	ip netns exec "$B" /usr/bin/python3 "$HERE/send_roce.py" --iface "$VB" --dmac "$MAC_A" \
		--smac "$MAC_B" "$@" 2>&1 | grep -v '^WARNING'
}
send --src 198.18.5.1 --dst 198.18.5.2 --good "$N4"
send --src 2001:2:5::1 --dst 2001:2:5::2 --good "$N6"
# Every frame met its fault once the four counters add up to the frames
# sent; a held (reordered) frame goes out after 1000 idle polls of 100 us,
# so wait for rx_roce_packets to settle too (bounded: a loaded host).
total=$((N4 + N6))
all_counted() {
	local st sum
	st=$(TEL_TRIES=1 tel "$P" /uroce/port/stats,0) || return 1
	sum=$(echo "$st" | /usr/bin/python3 -c '
import json, sys
try:
    d = json.loads(sys.stdin.read())["/uroce/port/stats"]
    f = [d[k] for k in ("fault_dropped", "fault_duplicated", "fault_reordered", "fault_corrupted")]
    print(sum(f), d["rx_roce_packets"] + d["rx_icrc_errors"] - (2 * f[1] + f[2] + f[3]))
except Exception:
    print("-1 -1")')
	[ "$sum" = "$total 0" ]
}
wait_until 60 all_counted
tel "$P" /uroce/port/stats,0 | sed 's/^/    /'
drop=$(counter "$P" 0 fault_dropped)
dup=$(counter "$P" 0 fault_duplicated)
reord=$(counter "$P" 0 fault_reordered)
corr=$(counter "$P" 0 fault_corrupted)
roce=$(counter "$P" 0 rx_roce_packets)
icrc=$(counter "$P" 0 rx_icrc_errors)
sum=$((${drop:-0} + ${dup:-0} + ${reord:-0} + ${corr:-0}))
detail="dropped $drop, duplicated $dup, reordered $reord, corrupted $corr"
[ "$sum" = "$total" ] && pass "faults add up to the $total frames sent: $detail" ||
	fail "faults add up to $sum, want $total: $detail"
# 400 draws at p = 0.4: mean 160, sd 9.8; at p = 0.2: mean 80, sd 8.
[ "${drop:-0}" -ge 110 ] && [ "${drop:-0}" -le 210 ] &&
	pass "fault_dropped = $drop (expected about 160)" ||
	fail "fault_dropped = $drop, want 110..210"
for c in "fault_duplicated $dup" "fault_reordered $reord" "fault_corrupted $corr"; do
	set -- $c
	[ "${2:-0}" -ge 40 ] && [ "${2:-0}" -le 120 ] &&
		pass "$1 = $2 (expected about 80)" || fail "$1 = ${2:-?}, want 40..120"
done
want=$((2 * ${dup:-0} + ${reord:-0}))
[ "$roce" = "$want" ] &&
	pass "rx_roce_packets = $roce = 2 x duplicated + reordered" ||
	fail "rx_roce_packets = $roce, want $want (2 x $dup duplicated + $reord reordered)"
[ "$icrc" = "$corr" ] && pass "rx_icrc_errors = $icrc = fault_corrupted" ||
	fail "rx_icrc_errors = $icrc, want fault_corrupted = $corr"

stop_uroced "$PID_A" a
finish
