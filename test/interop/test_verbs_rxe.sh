#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Interop with Linux rxe through stock perftest: the unmodified Debian
# perftest on uroce (drivers/verbs, uroce-run) against the unmodified perftest
# on rdma_rxe in a QEMU VM (../shared/peer: build-image.sh, run-peer.sh).
#
# Layout, all inside one network namespace this test creates (uroce-rxe-PID),
# addresses in 198.18.0.0/24:
#   VM eth0 198.18.0.1 (rxe0) -- tap urtPID --+
#                                             br0 198.18.0.254 (TCP side channel)
#   uroced af_packet on urvPID -- urbPID -----+    (capture on urbPID: both ways)
#   uroced: 198.18.0.2, 02:00:c6:12:00:02, MTU 1500 -> path MTU 1024
#
# Two VM runs: (1) the VM serves, perftest on uroce is the client; (2) the VM
# is the client, perftest on uroce serves. In each: write, read, send,
# atomic bw, write, read, send lat (4096 B, atomics 8 B), then write and read
# bw again with uroced dropping 5 % of its RoCE frames both ways
# (fault_drop = 0.05, fault_dir = both). For every case:
#   Expect: uroce's perftest and the VM's both exit 0 (the VM's from its
#           RP-TEST-END line);
#   Expect: every UDP 4791 frame captured for the case decodes in tshark as
#           InfiniBand with nothing malformed, and `uroce-ctl decode` finds
#           every ICRC good (frames come from both rxe and uroce);
#   Expect: with drops, uroced's fault counter moved and the transfer still
#           completed.
# Congestion control is on throughout (issue 13): uroce's data and ACKs carry
# ECT(0) (the default), the VM's perftest runs with --tclass=2 so rxe's carry
# ECT(0) too, and in the drop cases uroced also marks 20 % of what it receives
# CE (fault_ce), so uroce's notification point sends CNPs, which rxe drops.
#   Expect: after the drop cases, np_cnp_sent > 0 and np_ecn_marked_roce_packets
#           > 0, and every case above still passes with rxe.
# With the argument `cm` (test_rdmacm_rxe) the cases are perftest -R instead:
# ib_write_bw -R and ib_send_bw -R, the connection set up by rdma_cm (CM
# MADs on QP1, drivers/rdmacm on uroce's side, the kernel's rdma_cm and
# ib_cm in the VM), no drops, uroce as the server (RXE_CM_DIRS="client
# server" adds uroce as the client: under TCG the VM's perftest server is
# often not listening yet for perftest's second connection, which rxe
# rejects with reason 8, so that direction is not run by default).
#   Expect: both sides exit 0; the capture (CM MADs and data) decodes in
#           tshark as InfiniBand with nothing malformed, every ICRC good;
#           uroce's CM sent and received CM MADs (/uroce/cm).
# MTU 4096 is not run: DPDK 22.11's af_packet PMD takes no jumbo frames, so
# uroce's port here carries 1024-byte paths only.
# Needs root, qemu-system-x86, tshark/dumpcap, the peer scripts and network
# access to Debian's archive once (build-image.sh caches the image); without
# them: exit 77 with the reason. ROCE_PEER_DIR overrides where the peer
# scripts are; ROCE_PEER_CACHE where the image is kept.
. "$(dirname "$0")/../dpdk/lib.sh"
. "$(dirname "$0")/rxe_lib.sh"

GROUP="${1:-verbs}"
case "$GROUP" in
verbs) ;;
cm) TAG=test_rdmacm_rxe ;;
*) echo "usage: $0 [verbs|cm]" >&2; exit 2 ;;
esac

require_root
require_uroced
require_cmd timeout coreutils
require_cmd qemu-system-x86_64 qemu-system-x86
require_cmd tshark tshark
require_cmd dumpcap tshark
[ -n "${UROCE_RUN:-}" ] && [ -x "$UROCE_RUN" ] ||
	skip "UROCE_RUN is not set (drivers/verbs not built: libibverbs-dev missing)"
[ -n "${UROCE_CTL:-}" ] && [ -x "$UROCE_CTL" ] || skip "UROCE_CTL is not set (uroce-ctl not built)"
require_cmd ib_write_bw perftest
[ "$GROUP" = verbs ] || [ "${HAVE_RDMACM_DROPIN:-0}" = 1 ] ||
	skip "drivers/rdmacm is not built (librdmacm-dev missing)"
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

NS="uroce-rxe-$$"
TAP="urt$$"
VU="urv$$"
VB="urb$$"
PA="uroce-rxe-a-$$"
PREFIXES+=("$PA")
SOCK="$WORK/a.sock"
ITERS=100
SIZE=4096

rxe_layout

# uroced [EXTRA]: (re)start the daemon on $VU; EXTRA adds [port] lines.
uroced_conf() { rxe_uroced_conf "$WORK/a.conf" "${1:-}"; }
PID_A=
restart_uroced() {
	[ -n "$PID_A" ] && stop_uroced "$PID_A" a
	uroced_conf "${1:-}"
	start_uroced a "$NS" -c "$WORK/a.conf" || finish
	PID_A=$LAST_PID
}
FAULTS="fault_drop = 0.05
fault_dir = both
fault_ce = 0.2
fault_seed = 7"

# case_cmd NAME: perftest binary and arguments of a case (as run-peer.sh runs
# them in the VM, so both sides agree).
case_cmd() {
	case "${1%-drop}" in
	write) echo "ib_write_bw -s $SIZE" ;;
	read) echo "ib_read_bw -s $SIZE" ;;
	send) echo "ib_send_bw -s $SIZE" ;;
	atomic) echo "ib_atomic_bw -A FETCH_AND_ADD" ;;
	write-lat) echo "ib_write_lat -s $SIZE" ;;
	read-lat) echo "ib_read_lat -s $SIZE" ;;
	send-lat) echo "ib_send_lat -s $SIZE" ;;
	write-cm) echo "ib_write_bw -R -s $SIZE" ;;
	send-cm) echo "ib_send_bw -R -s $SIZE" ;;
	esac
}
if [ "$GROUP" = cm ]; then
	CASES=(write-cm send-cm)
	PEER_TESTS="write-cm:$SIZE,send-cm:$SIZE"
else
	CASES=(write read send atomic write-lat read-lat send-lat write-drop read-drop)
	PEER_TESTS="write:$SIZE,read:$SIZE,send:$SIZE,atomic,write-lat:$SIZE,read-lat:$SIZE,send-lat:$SIZE,write:$SIZE,read:$SIZE"
fi

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
cap_check() {
	local name="$1" cap="$WORK/$1.pcapng" roce udp bad total good
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

# peer_result CONSOLE INDEX: the VM's exit code for its INDEX-th test.
peer_result() {
	grep -a "^RP-TEST-END" "$1" | sed -n "$(($2 + 1))p" | sed -n 's/.*rc=\([0-9]*\).*/\1/p'
}

run_peer() { # MODE OUTDIR: start run-peer.sh in the background
	timeout 1200 "$PEER/run-peer.sh" --netns "$NS" --out "$2" --timeout 1100 \
		"$1" --no-capture --tap "$TAP" --host-ip none --test "$PEER_TESTS" -n "$ITERS" \
		--pt-args "--tclass=2" \
		>"$2.log" 2>&1 &
	PEER_PID=$!
	PIDS+=("$PEER_PID")
}

# dcounter NAME: one transport counter of /uroce/daemon/stats.
dcounter() {
	tel "$PA" /uroce/daemon/stats | /usr/bin/python3 -c '
import json, sys
print(json.loads(sys.stdin.read())["/uroce/daemon/stats"].get(sys.argv[1], 0))' "$1"
}

fault_drops() {
	tel "$PA" /uroce/port/stats,0 | /usr/bin/python3 -c '
import json, sys
print(json.loads(sys.stdin.read())["/uroce/port/stats"]["fault_dropped"])'
}

# one_case DIR I NAME: run case I on uroce's side (client or server).
one_case() {
	local dir="$1" i="$2" name="$3" port=$((18515 + $2)) rc drops="" cmd
	cmd=$(case_cmd "$name")
	# The drop cases come last: switch the daemon to faults once.
	if [ "${name%-drop}" != "$name" ] && [ "$FAULTY" = 0 ]; then
		restart_uroced "$FAULTS"
		FAULTY=1
	fi
	cap_start "$dir-$name"
	if [ "$dir" = client ]; then
		# shellcheck disable=SC2086 # $cmd is a command line
		nsx env UROCE_SOCKET="$SOCK" timeout 300 "$UROCE_RUN" $cmd -x 1 -F -n $ITERS \
			-p $port 198.18.0.1 >"$WORK/$dir-$name.log" 2>&1
	else
		# shellcheck disable=SC2086
		nsx env UROCE_SOCKET="$SOCK" timeout 300 "$UROCE_RUN" $cmd -x 1 -F -n $ITERS \
			-p $port >"$WORK/$dir-$name.log" 2>&1
	fi
	rc=$?
	case "$name" in *-drop) drops=" with $(fault_drops) frames dropped by uroced" ;; esac
	# The VM's side of this case ends a moment later.
	for _ in $(seq 100); do
		[ -n "$(peer_result "$PEER_OUT/vm.console" "$i")" ] && break
		sleep 0.2
	done
	prc=$(peer_result "$PEER_OUT/vm.console" "$i")
	# A read_lat server is passive: only the client prints a table.
	table=1
	[ "$dir" = server ] && [ "$name" = read-lat ] && table=0
	if [ "$rc" -eq 0 ] && [ "${prc:-x}" = 0 ] &&
		{ [ $table = 0 ] || grep -q "#bytes" "$WORK/$dir-$name.log"; }; then
		pass "uroce $dir, rxe $( [ $dir = client ] && echo server || echo client): $cmd$drops: both exit 0$( [ $table = 1 ] && echo " ($(grep -A1 '#bytes' "$WORK/$dir-$name.log" | tail -1 | awk '{print $1 " B x " $2}'))")"
	else
		fail "$dir $name: $cmd: uroce exit $rc, rxe exit ${prc:-none}"
		tail -n 5 "$WORK/$dir-$name.log" | sed 's/^/    /'
	fi
	cap_check "$dir-$name"
	if [ -n "$drops" ]; then
		[ "$(fault_drops)" -gt 0 ] && pass "$name: uroced dropped $(fault_drops) frames and the transfer recovered" ||
			fail "$name: no frame was dropped"
		local cnp ce
		cnp=$(dcounter np_cnp_sent)
		ce=$(dcounter np_ecn_marked_roce_packets)
		[ "${cnp:-0}" -gt 0 ] && [ "${ce:-0}" -gt 0 ] &&
			pass "$name: rxe's ECT(0) frames marked CE ($ce), uroce sent $cnp CNPs to rxe, perftest unaffected" ||
			fail "$name: CE-marked ${ce:-?}, CNPs sent ${cnp:-?}"
	fi
}

DIRS="client server"
[ "$GROUP" = cm ] && DIRS=${RXE_CM_DIRS:-server}
for dir in $DIRS; do
	CASE_FAILS=$FAILS
	restart_uroced
	FAULTY=0
	PEER_OUT="$WORK/peer-$dir"
	if [ $dir = client ]; then
		run_peer vm-server "$PEER_OUT"
	else
		run_peer vm-client "$PEER_OUT"
	fi
	for _ in $(seq 600); do
		grep -q "^RP-READY" "$PEER_OUT/vm.console" 2>/dev/null && break
		kill -0 "$PEER_PID" 2>/dev/null || break
		sleep 0.2
	done
	if ! grep -q "^RP-READY" "$PEER_OUT/vm.console" 2>/dev/null; then
		fail "the rxe VM did not come up ($dir run); run-peer log:"
		tail -20 "$PEER_OUT.log" | sed 's/^/    /'
		finish
	fi
	log "rxe VM up ($(grep -a '^RP-UNAME' "$PEER_OUT/vm.console" | tr -d '\r')), uroce as $dir"
	for i in "${!CASES[@]}"; do
		one_case $dir "$i" "${CASES[$i]}"
	done
	# A failed case leaves the VM waiting for its other side: stop it.
	[ "$FAILS" = "$CASE_FAILS" ] || kill "$PEER_PID" 2>/dev/null
	wait "$PEER_PID" 2>/dev/null
	if [ "$GROUP" = cm ]; then
		tx=$(tel_num "$PA" /uroce/cm cm_tx_mads)
		rx=$(tel_num "$PA" /uroce/cm cm_rx_mads)
		[ "${tx:-0}" -gt 0 ] && [ "${rx:-0}" -gt 0 ] &&
			pass "uroce $dir: its CM sent $tx and received $rx CM MADs with rxe" ||
			fail "uroce $dir: CM MADs sent ${tx:-?}, received ${rx:-?}"
	fi
done
stop_uroced "$PID_A" a
finish
