# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
# shellcheck shell=bash disable=SC2034 # its variables are for the tests
#
# Shared by the interop tests against Linux rxe in a QEMU VM
# (test_verbs_rxe.sh, test_rdmacm_rxe.sh, iba15/test_iba15_rxe.sh); sourced
# after ../dpdk/lib.sh.
#
# rxe_setup NAME builds this layout in a network namespace of its own, with
# addresses in 198.18.0.0/24 (NAME goes into every name it creates):
#   VM eth0 198.18.0.1 (rxe0) -- tap $TAP --+
#                                           br0 198.18.0.254 (TCP side channel)
#   uroced af_packet on $VU -- $VB ---------+    (capture on $VB: both ways)
#   uroced: 198.18.0.2, 02:00:c6:12:00:02, MTU 1500 -> path MTU 1024
# and checks what every such test needs (exit 77 with the reason if missing).

VM_IP=198.18.0.1
UROCE_IP=198.18.0.2

rxe_require() {
	require_root
	require_uroced
	require_cmd timeout coreutils
	require_cmd qemu-system-x86_64 qemu-system-x86
	require_cmd tshark tshark
	require_cmd dumpcap tshark
	[ -n "${UROCE_RUN:-}" ] && [ -x "$UROCE_RUN" ] ||
		skip "UROCE_RUN is not set (drivers/verbs not built: libibverbs-dev missing)"
	[ -n "${UROCE_CTL:-}" ] && [ -x "$UROCE_CTL" ] ||
		skip "UROCE_CTL is not set (uroce-ctl not built)"
	PEER=${ROCE_PEER_DIR:-$(dirname "$0")/../../../shared/peer}
	[ -x "$PEER/run-peer.sh" ] && [ -x "$PEER/build-image.sh" ] ||
		skip "no rxe peer scripts at $PEER (set ROCE_PEER_DIR)"
	require_eal
	require_netns_veth
	log "building or checking the rxe VM image ($PEER/build-image.sh)"
	if ! timeout 600 "$PEER/build-image.sh" >"$WORK/build-image.log" 2>&1; then
		tail -5 "$WORK/build-image.log"
		skip "the rxe VM image could not be built (see above; it needs Debian's archive once)"
	fi
}

# rxe_setup NAME: the names, then the namespace, bridge, tap and veth above.
rxe_setup() {
	NS="uroce-$1-$$"
	TAP="${1}t$$"
	VU="${1}v$$"
	VB="${1}b$$"
	PA="uroce-$1-a-$$"
	PREFIXES+=("$PA")
	SOCK="$WORK/a.sock"
	rxe_layout
}

# rxe_layout: the layout above in a new netns $NS with the tap $TAP and the
# veth pair $VU/$VB (a test that names them itself calls this directly).
rxe_layout() {
	new_netns "$NS"
	nsx ip link add br0 type bridge stp_state 0 forward_delay 0 || { fail "bridge"; finish; }
	nsx ip tuntap add "$TAP" mode tap || { fail "tap"; finish; }
	nsx ip link add "$VU" type veth peer name "$VB" || { fail "veth"; finish; }
	local i
	for i in br0 "$TAP" "$VU" "$VB"; do
		nsx sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"
	done
	nsx ip link set "$TAP" master br0
	nsx ip link set "$VB" master br0
	for i in "$TAP" "$VU" "$VB" br0; do nsx ip link set "$i" up; done
	nsx ip addr add 198.18.0.254/24 dev br0
}
nsx() { ip netns exec "$NS" "$@"; }

# rxe_uroced_conf FILE [EXTRA]: uroced's configuration on $VU as $UROCE_IP,
# 02:00:c6:12:00:02 (EAL prefix $PA, socket $SOCK); EXTRA adds [port] lines.
rxe_uroced_conf() {
	cat >"$1" <<EOF
[eal]
lcores = 0,1
no_huge = yes
memory = 256
file_prefix = $PA
[daemon]
socket = $SOCK
[limits]
mbufs = 4095
idle_sleep_us = 10
neigh_retry_ms = 100
[port.veth]
vdev = net_af_packet0,iface=$VU
ipv4 = $UROCE_IP/24
mac = 02:00:c6:12:00:02
${2:-}
EOF
}

# restart_uroced [EXTRA]: (re)start the daemon on $VU; EXTRA adds [port] lines.
PID_A=
restart_uroced() {
	[ -n "$PID_A" ] && stop_uroced "$PID_A" a
	rxe_uroced_conf "$WORK/a.conf" "${1:-}"
	start_uroced a "$NS" -c "$WORK/a.conf" || finish
	PID_A=$LAST_PID
}

# Payload-guessing sub-dissectors call benchmark payloads malformed; off.
TSHARK_OFF=()
for h in rpcrdma_infiniband smb_direct_infiniband smcr_infiniband nvme_rdma lnet_ib \
	iser_infiniband eth_over_ib mellanox_eoib sdp_infiniband fc_infiniband; do
	TSHARK_OFF+=(--disable-heuristic "$h")
done

# cap_start NAME: capture UDP 4791 on $VB (both ways) into $WORK/NAME.pcapng.
CAP_PID=
cap_start() {
	# Not through nsx(): $! must be the process that becomes dumpcap.
	ip netns exec "$NS" dumpcap -q -i "$VB" -f "udp port 4791" -w "$WORK/$1.pcapng" \
		>"$WORK/$1.dumpcap" 2>&1 &
	CAP_PID=$!
	PIDS+=("$CAP_PID")
	for _ in $(seq 50); do
		grep -q "Capturing on\|File:" "$WORK/$1.dumpcap" 2>/dev/null && break
		sleep 0.1
	done
	sleep 0.5
}

# cap_check NAME: stop the capture; every UDP 4791 frame must decode in
# tshark as InfiniBand with nothing malformed, and uroce-ctl decode must find
# each a valid RoCEv2 frame with a good ICRC, sent by both rxe and uroce.
cap_check() {
	local name="$1" cap="$WORK/$1.pcapng" roce udp bad total good src
	sleep 0.5
	kill -INT "$CAP_PID" 2>/dev/null
	wait "$CAP_PID" 2>/dev/null
	roce=$(tshark -r "$cap" "${TSHARK_OFF[@]}" -Y "udp.dstport == 4791 && infiniband" 2>/dev/null | wc -l)
	udp=$(tshark -r "$cap" -Y "udp.dstport == 4791" 2>/dev/null | wc -l)
	bad=$(tshark -r "$cap" "${TSHARK_OFF[@]}" -Y "_ws.malformed || _ws.expert.severity >= error" \
		2>/dev/null | wc -l)
	"$UROCE_CTL" decode "$cap" >"$WORK/$name.json" 2>"$WORK/$name.decode.err"
	read -r total good src < <(/usr/bin/python3 - "$WORK/$name.json" <<'EOF'
import json, sys
total = good = 0
srcs = set()
for line in open(sys.argv[1]):
    f = json.loads(line)
    if f["error"] == "not_rocev2":
        continue
    total += 1
    good += f["icrc_ok"] is True and f["valid"] is True
    srcs.add(f["src"])
print(total, good, len(srcs))
EOF
)
	if [ "$roce" -gt 0 ] && [ "$roce" -eq "$udp" ] && [ "$bad" -eq 0 ] &&
		[ "${total:-0}" -eq "$udp" ] && [ "$good" -eq "$total" ] && [ "${src:-0}" -eq 2 ]; then
		pass "$name: $roce RoCEv2 frames from rxe and uroce, all InfiniBand in tshark, none malformed, every ICRC good"
	else
		fail "$name: $udp UDP 4791 frames, $roce InfiniBand, $bad malformed; uroce-ctl: $total RoCEv2, $good good ICRC, ${src:-0} senders"
	fi
}
