#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# A hostile RoCEv2 peer against a live uroced (issue 9). uroced runs on
# af_packet over a veth into namespace A (198.18.7.2, 2001:2:7::2); namespace
# B holds a kernel with 198.18.7.1 / 2001:2:7::1 (which answers uroced's ARP
# and ND) and hostile_peer.py, which starts the victim client
# (hostile_victim: canary memory around its MRs, MRs with fewer rights, QPs in
# every state) and attacks it from the wire with frames it builds itself.
#   Expect: every case gets the answer IBA prescribes (NAK syndrome and PSN,
#           ACK, or silence), leaves the victim QP in the state it must be in,
#           moves the counter it must move (uroce-ctl counters --qp, DPDK
#           telemetry), and no canary byte of either victim client moves.
#   Expect: after HOSTILE_MUTATIONS (3000 in CI) random mutations of valid
#           packets, uroced still serves the peer (a WRITE lands, a READ
#           returns it) on IPv4 and IPv6, and stops cleanly.
. "$(dirname "$0")/lib.sh"

require_root
require_uroced
require_cmd timeout coreutils
[ -n "${UROCE_CTL:-}" ] && [ -x "$UROCE_CTL" ] || skip "UROCE_CTL is not set (uroce-ctl not built: libpcap-dev)"
[ -n "${HOSTILE_VICTIM:-}" ] && [ -x "$HOSTILE_VICTIM" ] || skip "HOSTILE_VICTIM is not set"
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import scapy.contrib.roce' 2>/dev/null ||
	skip "/usr/bin/python3 with scapy.contrib.roce is needed (Debian: python3-scapy)"
require_eal
require_netns_veth

HERE=$(cd "$(dirname "$0")" && pwd)
A="uroce-ha-$$"
B="uroce-hb-$$"
VA="ha$$"
VB="hb$$"
P="uroce-hostile-$$"
PREFIXES+=("$P")
MAC_A=02:00:c6:12:07:02
MAC_B=02:00:c6:12:07:01

new_netns "$A"
new_netns "$B"
ip link add "$VA" netns "$A" type veth peer name "$VB" netns "$B" || { fail "veth"; finish; }
ip netns exec "$A" sysctl -qw "net.ipv6.conf.$VA.disable_ipv6=1"
ip -n "$A" link set "$VA" up
ip -n "$B" link set "$VB" address "$MAC_B"
ip -n "$B" addr add 198.18.7.1/24 dev "$VB"
ip -n "$B" addr add 2001:2:7::1/64 dev "$VB" nodad
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
mbufs = 4095
idle_sleep_us = 50
neigh_retry_ms = 100
[port.0]
vdev = net_af_packet0,iface=$VA
ipv4 = 198.18.7.2/24
ipv6 = 2001:2:7::2/64
mac = $MAC_A
CONF
start_uroced a "$A" -c "$WORK/a.conf" || finish
PID_A=$LAST_PID

# The peer waits up to HOSTILE_ANSWER_S (20 s times BOUND_X) for an answer
# that must come (hostile_peer.py).
ip netns exec "$B" env HOSTILE_ANSWER_S="$(bound 20)" timeout "$(bound 600)" \
	/usr/bin/python3 "$HERE/hostile_peer.py" attack \
	--iface "$VB" --mac-a "$MAC_A" --mac-b "$MAC_B" --ip-a 198.18.7.2 --ip-b 198.18.7.1 \
	--ip6-a 2001:2:7::2 --ip6-b 2001:2:7::1 --ip-spoof 198.18.7.66 \
	--victim "$HOSTILE_VICTIM" --socket "$WORK/a.sock" --ctl "$UROCE_CTL" --prefix "$P" \
	--mutations "${HOSTILE_MUTATIONS:-3000}" --log "$WORK/peer.log" 2>&1 | tee "$WORK/attack.out"
rc=${PIPESTATUS[0]}
n_fail=$(grep -c '^hostile_peer: FAIL' "$WORK/attack.out")
n_ok=$(grep -c '^hostile_peer: ok' "$WORK/attack.out")
if [ "$rc" -eq 0 ] && [ "$n_fail" -eq 0 ] && [ "$n_ok" -gt 100 ]; then
	pass "hostile peer: $n_ok checks passed"
else
	fail "hostile peer: exit $rc, $n_ok checks passed, $n_fail failed"
fi
kill -0 "$PID_A" 2>/dev/null && pass "uroced survived the attack" || fail "uroced died"
stop_uroced "$PID_A" a
finish
