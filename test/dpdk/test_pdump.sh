#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Packet capture through the DPDK pdump framework: dpdk-dumpcap attaches to a
# running uroced as a secondary process and writes a pcapng that tshark
# decodes as RoCE. A secondary process needs the primary's memory shared,
# i.e. hugepages: without free hugepages this test is SKIPPED (77), loudly.
#   Expect: dpdk-dumpcap captures the RoCEv2 frames B sends (RX) and
#           uroced's ARP reply (TX); tshark shows "RC Send Only".
. "$(dirname "$0")/lib.sh"

require_root
require_uroced
require_cmd dpdk-dumpcap dpdk-dev
require_cmd tshark tshark
require_cmd arping iputils-arping
require_cmd timeout coreutils
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import scapy.contrib.roce' 2>/dev/null ||
	skip "/usr/bin/python3 with scapy.contrib.roce is needed (Debian: python3-scapy)"
free=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo 0)
[ "$free" -ge 128 ] || skip "needs 128 free 2 MB hugepages for a shared-memory primary (have $free): mkdir -p /dev/hugepages && dpdk-hugepages.py -p 2M --setup 512M"
grep -q hugetlbfs /proc/mounts || skip "hugetlbfs not mounted: bash .ci/hugepages (or mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages)"
require_netns_veth

HERE=$(cd "$(dirname "$0")" && pwd)
A="uroce-pa-$$"
B="uroce-pb-$$"
VA="pa$$"
VB="pb$$"
P="uroce-pdump-$$"
PREFIXES+=("$P")
MAC_A=02:00:c6:12:03:02
MAC_B=02:00:c6:12:03:01

new_netns "$A"
new_netns "$B"
ip link add "$VA" netns "$A" type veth peer name "$VB" netns "$B" || { fail "veth"; finish; }
ip netns exec "$A" sysctl -qw "net.ipv6.conf.$VA.disable_ipv6=1"
ip netns exec "$B" sysctl -qw "net.ipv6.conf.$VB.disable_ipv6=1"
ip -n "$A" link set "$VA" up
ip -n "$B" link set "$VB" address "$MAC_B"
ip -n "$B" addr add 198.18.3.1/24 dev "$VB"
ip -n "$B" link set "$VB" up

cat >"$WORK/a.conf" <<EOF
[eal]
lcores = 0,1
memory = 256
file_prefix = $P
[daemon]
socket = $WORK/a.sock
[limits]
mbufs = 2047
idle_sleep_us = 100
[port.0]
vdev = net_af_packet0,iface=$VA
ipv4 = 198.18.3.2/24
mac = $MAC_A
EOF
start_uroced a "$A" -c "$WORK/a.conf" || finish
PID_A=$LAST_PID

timeout 300 stdbuf -oL -eL dpdk-dumpcap --file-prefix "$P" -i net_af_packet0 -w "$WORK/cap.pcapng" -c 5 \
	>"$WORK/dumpcap.log" 2>&1 &
DC=$!
PIDS+=("$DC")
capturing() { grep -q "^Capturing on" "$WORK/dumpcap.log"; }
wait_until 120 capturing || fail "dpdk-dumpcap did not attach in $(bound 120) s: $(cat "$WORK/dumpcap.log")"
ip netns exec "$B" /usr/bin/python3 "$HERE/send_roce.py" --iface "$VB" --dmac "$MAC_A" \
	--smac "$MAC_B" --src 198.18.3.1 --dst 198.18.3.2 --good 3 2>&1 | grep -v '^WARNING'
ip netns exec "$B" timeout 40 arping -c 1 -w 30 -I "$VB" 198.18.3.2 >/dev/null
wait "$DC"
rc=$?
sed 's/^/    /' "$WORK/dumpcap.log"
[ $rc -eq 0 ] && pass "dpdk-dumpcap exit 0" || fail "dpdk-dumpcap exit $rc"
out=$(tshark -r "$WORK/cap.pcapng" -d udp.port==4791,infiniband 2>/dev/null)
echo "$out" | sed 's/^/    /'
n=$(echo "$out" | grep -c 'RC Send Only')
[ "$n" -eq 3 ] && pass "tshark decodes 3 captured RoCEv2 RC Send Only frames" ||
	fail "tshark found $n RC Send Only frames, want 3"
echo "$out" | grep -q "198.18.3.2 is at $MAC_A" && pass "uroced's own ARP reply (TX) was captured" ||
	fail "ARP reply not in the capture"

stop_uroced "$PID_A" a
finish
