# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# What the tests against the rxe peer VM share (sourced after
# test/dpdk/lib.sh): the network layout, uroced's configuration on it and
# the tshark options for checking captures.
#
# rxe_layout: in a new netns $NS, br0 198.18.0.254/24 (TCP side channels)
# bridging the VM's tap $TAP and the veth end $VB, whose peer $VU carries
# uroced (af_packet); IPv6 off everywhere. Defines nsx (run in $NS).
rxe_layout() {
	new_netns "$NS"
	nsx() { ip netns exec "$NS" "$@"; }
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

# rxe_uroced_conf FILE [EXTRA]: uroced on $VU as 198.18.0.2,
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
ipv4 = 198.18.0.2/24
mac = 02:00:c6:12:00:02
${2:-}
EOF
}

# Payload-guessing sub-dissectors call benchmark payloads malformed; off.
TSHARK_OFF=()
for h in rpcrdma_infiniband smb_direct_infiniband smcr_infiniband nvme_rdma lnet_ib \
	iser_infiniband eth_over_ib mellanox_eoib sdp_infiniband fc_infiniband; do
	TSHARK_OFF+=(--disable-heuristic "$h")
done
