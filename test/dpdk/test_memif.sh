#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Two uroced processes joined by memif (A is the memif server, B the client),
# both with --no-huge (memif's regions are memfd-backed, so no hugepages).
#   Expect: both come up and the memif link comes up.
#   Expect: A resolves B and B resolves A by ARP, and by IPv6 ND, over memif;
#           the side that asks sends requests, the side that answers sends
#           replies (counted per port).
#   Expect: both stop cleanly on SIGTERM.
. "$(dirname "$0")/lib.sh"

require_root
require_uroced
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd timeout coreutils
require_eal

MEMIF="$WORK/memif.sock"
for side in a b; do
	if [ $side = a ]; then
		role=server; n=1
	else
		role=client; n=2
	fi
	PREFIXES+=("uroce-memif-$side-$$")
	cat >"$WORK/$side.conf" <<EOF
[eal]
lcores = 0,1
no_huge = yes
memory = 128
file_prefix = uroce-memif-$side-$$
[daemon]
socket = $WORK/$side.sock
[limits]
mbufs = 2047
idle_sleep_us = 100
neigh_retry_ms = 200
[port.memif]
vdev = net_memif0,role=$role,socket=$MEMIF,id=0
ipv4 = 198.18.2.$n/24
ipv6 = 2001:2::2:$n/112
mac = 02:00:c6:12:02:0$n
EOF
done

start_uroced a - -c "$WORK/a.conf" || finish
PID_A=$LAST_PID
start_uroced b - -c "$WORK/b.conf" || finish
PID_B=$LAST_PID
PA="uroce-memif-a-$$"
PB="uroce-memif-b-$$"

wait_link "$PA" && wait_link "$PB" && pass "memif link up on both sides"

resolve() { # resolve PREFIX IP MAC: polls for up to 30 s
	local r end=$(deadline 30)
	while :; do
		r=$(TEL_TRIES=1 tel "$1" "/uroce/port/resolve,0,$2")
		echo "$r" | grep -q "\"state\": \"reachable\", \"mac\": \"$3\"" && {
			pass "$1 resolved $2: $r"
			return 0
		}
		[ "$SECONDS" -ge "$end" ] && break
		sleep 0.2
	done
	fail "$1 did not resolve $2: $r"
}
resolve "$PA" 198.18.2.2 02:00:c6:12:02:02
resolve "$PB" 198.18.2.1 02:00:c6:12:02:01
resolve "$PB" 2001:2::2:1 02:00:c6:12:02:01
resolve "$PA" 2001:2::2:2 02:00:c6:12:02:02

check() { # check PREFIX COUNTER MIN
	local v
	v=$(counter_until "$1" 0 "$2" -ge "$3")
	[ "${v:-0}" -ge "$3" ] && pass "$1 $2 = $v" || fail "$1 $2 = ${v:-?}, want >= $3"
}
check "$PA" arp_tx_request 1
check "$PB" arp_rx_request 1
check "$PB" arp_tx_reply 1
check "$PA" arp_rx_reply 1
check "$PB" nd_tx_ns 1
check "$PA" nd_rx_ns 1
check "$PA" nd_tx_na 1
check "$PB" nd_rx_na 1

stop_uroced "$PID_B" b
stop_uroced "$PID_A" a
finish
