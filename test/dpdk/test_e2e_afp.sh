#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# RDMA between two uroced over af_packet on a veth pair whose ends sit in two
# network namespaces this test creates (198.18.4.0/24, 2001:2::4:0/112). The
# kernel stays silent on both ends (no addresses, IPv6 off). MTU 1500, so the
# verbs active MTU is 1024 (DPDK 22.11's af_packet takes no jumbo frames).
# Both ports on VLAN 100. Clients (examples,
# uroce-perf) run in the root namespace: they reach the daemons by their
# UNIX sockets, and uroce-perf's TCP side channel uses 127.0.0.1.
#   Expect: every example passes on the IPv4 GID and on the IPv6 GID.
#   Expect: uroce-perf write/read/send/atomic with --verify pass, at path MTU
#           1024 and 512.
#   Expect: the frames carry VLAN 100 with each port's PCP and ECT(0), and
#           A's carry its DSCP 26, over IPv4 and IPv6.
#   Expect: dumpcap on A's veth end captures WRITE, SEND, atomic, READ and UD
#           traffic on both GIDs; tshark
#           decodes every frame as InfiniBand over UDP 4791 with no malformed
#           packet, and `uroce-ctl decode` reports every ICRC good.
. "$(dirname "$0")/lib.sh"

require_root
require_uroced
require_clients
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd dumpcap tshark
require_cmd mergecap tshark
require_cmd tshark tshark
require_cmd timeout coreutils
[ -n "${UROCE_CTL:-}" ] && [ -x "$UROCE_CTL" ] || skip "UROCE_CTL is not set (uroce-ctl not built: libpcap-dev)"
require_eal
require_netns_veth

NA="uroce-ea-$$"
NB="uroce-eb-$$"
VA="ea$$"
VB="eb$$"
PA="uroce-e2e-afp-a-$$"
PB="uroce-e2e-afp-b-$$"
PREFIXES+=("$PA" "$PB")

veth_pair "$NA" "$VA" "$NB" "$VB"
# A marks its RoCEv2 traffic DSCP 26 (AF31) ECT(0) with 802.1p priority 3;
# B keeps DSCP 0 and the default ECN bits, ECT(0) (doc/congestion.md), and
# uses priority 5. (uroce-perf's QPs set traffic class 0, so the port
# defaults apply.)
# With E2E_WORKERS=2 (test_e2e_afp_2w), two workers each: af_packet gives
# each a queue pair (qpairs) and the kernel spreads frames over them.
QP_ARG=""
[ "${E2E_WORKERS:-1}" = 2 ] && QP_ARG=",qpairs=2"
afp_conf a 1 "$VA$QP_ARG" "$PA" "vlan = 100
pcp = 3
dscp = 26
ecn = 2"
afp_conf b 2 "$VB$QP_ARG" "$PB" "vlan = 100
pcp = 5"
start_uroced a "$NA" -c "$WORK/a.conf" || finish
PID_A=$LAST_PID
start_uroced b "$NB" -c "$WORK/b.conf" || finish
PID_B=$LAST_PID
A_SOCK="$WORK/a.sock"
B_SOCK="$WORK/b.sock"

export UROCE_SOCKET="$A_SOCK" UROCE_PEER_SOCKET="$B_SOCK"
for gi in 1 2; do
	export UROCE_GID_INDEX=$gi
	run_example rc_pingpong "$A_SOCK" 100 4096
	run_example rdma_write_read "$A_SOCK"
	run_example atomic_counter "$A_SOCK" 2 100
	run_example ud_sendrecv "$A_SOCK" 16
done
unset UROCE_GID_INDEX UROCE_PEER_SOCKET

port=18900
for gi in 1 2; do
	for t in write read send atomic; do
		port=$((port + 1))
		perf_pair "afp-$t-x$gi" "$A_SOCK" "$B_SOCK" $port $t bw -x $gi -n 100 --verify
	done
done
grep -q "Mtu             : 1024\[B\]" "$WORK/afp-write-x1.cli" &&
	pass "path MTU 1024 (the active MTU) over a 1500-byte veth" ||
	fail "active MTU is not 1024 on MTU 1500"
perf_pair "afp-mtu512" "$A_SOCK" "$B_SOCK" 18950 send bw -x 2 -m 512 -s 30000 -n 100 --verify
if [ "${E2E_WORKERS:-1}" = 2 ]; then
	workers_busy "$A_SOCK" "daemon A, 2 workers"
	workers_busy "$B_SOCK" "daemon B, 2 workers"
fi

# --- a capture of every operation ------------------------------------------
# The af_packet PMD sends with PACKET_QDISC_BYPASS, so a capture on a
# sender's own interface misses what it sends: capture at both ends (each
# sees what the other sent) and merge.
ip netns exec "$NA" timeout 600 dumpcap -q -i "$VA" -w "$WORK/at-a.pcapng" >"$WORK/dumpcap-a.log" 2>&1 &
DUMPCAP_A=$!
ip netns exec "$NB" timeout 600 dumpcap -q -i "$VB" -w "$WORK/at-b.pcapng" >"$WORK/dumpcap-b.log" 2>&1 &
DUMPCAP_B=$!
PIDS+=("$DUMPCAP_A" "$DUMPCAP_B")
both_capturing() {
	grep -q "^Capturing on" "$WORK/dumpcap-a.log" && grep -q "^Capturing on" "$WORK/dumpcap-b.log"
}
wait_until 60 both_capturing ||
	fail "dumpcap did not start capturing in $(bound 60) s: $(cat "$WORK/dumpcap-a.log" "$WORK/dumpcap-b.log")"
perf_pair "cap-write" "$A_SOCK" "$B_SOCK" 18951 write bw -x 1 -s 16384 -n 50 --verify
perf_pair "cap-send" "$A_SOCK" "$B_SOCK" 18952 send bw -x 2 -s 3000 -n 50 --verify
perf_pair "cap-atomic" "$A_SOCK" "$B_SOCK" 18953 atomic bw -x 1 -n 50 --verify
UROCE_GID_INDEX=2 UROCE_PEER_SOCKET="$B_SOCK" run_example rdma_write_read "$A_SOCK"
UROCE_GID_INDEX=1 UROCE_PEER_SOCKET="$B_SOCK" run_example ud_sendrecv "$A_SOCK" 8
sleep 0.5
kill -INT "$DUMPCAP_A" "$DUMPCAP_B"
wait "$DUMPCAP_A" "$DUMPCAP_B"
CAP="$WORK/full.pcapng"
mergecap -w "$CAP" "$WORK/at-a.pcapng" "$WORK/at-b.pcapng" || fail "mergecap"
# Payload-guessing sub-dissectors of Wireshark's InfiniBand dissector take
# benchmark payloads for upper protocols and then call them malformed; off.
TSHARK_OFF=()
for h in rpcrdma_infiniband smb_direct_infiniband smcr_infiniband nvme_rdma lnet_ib \
	iser_infiniband eth_over_ib mellanox_eoib sdp_infiniband fc_infiniband; do
	TSHARK_OFF+=(--disable-heuristic "$h")
done
roce=$(tshark -r "$CAP" "${TSHARK_OFF[@]}" -Y "udp.dstport == 4791 && infiniband" 2>/dev/null | wc -l)
udp=$(tshark -r "$CAP" -Y "udp.dstport == 4791" 2>/dev/null | wc -l)
# Allowed: IPv6 UDP checksum 0, which every RoCEv2 sender (rxe, NICs) uses and
# Wireshark flags as an error (RFC 6935/6936 allow it for tunnels).
bad=$(tshark -r "$CAP" "${TSHARK_OFF[@]}" -Y "_ws.malformed || _ws.expert.severity >= error" \
	-T fields -E 'separator=|' -e ipv6.version -e _ws.expert.message 2>/dev/null |
	grep -cv '^6|Illegal checksum value (0)$')
[ "$roce" -gt 200 ] && [ "$roce" -eq "$udp" ] && [ "$bad" -eq 0 ] &&
	pass "tshark: $roce RoCEv2 frames captured, all decoded as InfiniBand, none malformed" ||
	fail "tshark: $udp UDP 4791 frames, $roce decoded as InfiniBand, $bad malformed"
# Each sender's marking: VLAN 100, its PCP, (A only) DSCP 26, and ECT(0).
tshark -r "$CAP" -Y "udp.dstport == 4791" -T fields -E 'separator=|' -e vlan.id \
	-e vlan.priority -e ip.src -e ip.dsfield.dscp -e ip.dsfield.ecn -e ipv6.src \
	-e ipv6.tclass.dscp -e ipv6.tclass.ecn >"$WORK/marks.txt" 2>/dev/null
marks=$(/usr/bin/python3 - "$WORK/marks.txt" <<'EOF'
import sys
want = {"a": ("3", "26", "2"), "b": ("5", "0", "2")}
ok = {"a": 0, "b": 0}
bad = 0
for line in open(sys.argv[1]):
    vid, pcp, s4, d4, e4, s6, d6, e6 = line.rstrip("\n").split("|")
    src, dscp, ecn = (s4, d4, e4) if s4 else (s6, d6, e6)
    side = "a" if src in ("198.18.4.1", "2001:2::4:1") else "b"
    if (vid, pcp, dscp, ecn) == ("100",) + want[side]:
        ok[side] += 1
    else:
        bad += 1
print(ok["a"], ok["b"], bad)
EOF
)
read -r mk_a mk_b mk_bad <<<"$marks"
[ "${mk_a:-0}" -gt 100 ] && [ "${mk_b:-0}" -gt 100 ] && [ "${mk_bad:-1}" -eq 0 ] &&
	pass "marking: $mk_a frames from A with VLAN 100 PCP 3 DSCP 26 ECT(0), $mk_b from B with PCP 5 DSCP 0 ECT(0)" ||
	fail "marking: A $mk_a, B $mk_b right, $mk_bad wrong (see $WORK/marks.txt)"
"$UROCE_CTL" decode "$CAP" >"$WORK/full.json" 2>"$WORK/decode.err"
read -r total good v4 v6 < <(/usr/bin/python3 - "$WORK/full.json" <<'EOF'
import json, sys
total = good = v4 = v6 = 0
for line in open(sys.argv[1]):
    f = json.loads(line)
    if f["error"] == "not_rocev2":   # ARP, neighbour discovery
        continue
    total += 1
    good += f["icrc_ok"] is True and f["valid"] is True
    v6 += ":" in (f["src"] or "")
    v4 += "." in (f["src"] or "") and ":" not in f["src"]
print(total, good, v4, v6)
EOF
)
[ "${total:-0}" -gt 200 ] && [ "$total" -eq "$good" ] && [ "$v4" -gt 0 ] && [ "$v6" -gt 0 ] &&
	pass "uroce-ctl decode: $total RoCEv2 frames ($v4 IPv4, $v6 IPv6), every ICRC good" ||
	fail "uroce-ctl decode: $total RoCEv2 frames, $good good ICRCs ($v4 IPv4, $v6 IPv6); see $WORK/full.json"

stop_uroced "$PID_A" a
stop_uroced "$PID_B" b
finish
