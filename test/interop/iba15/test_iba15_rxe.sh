#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# IBA 1.5 ATOMIC WRITE and FLUSH, and memory windows, between uroce and a
# current Linux rxe: the peer VM booted with bookworm-backports' 6.12 kernel
# (test/interop/peer-kernel.sh builds that image; rxe in the default 6.1
# image predates ATOMIC WRITE and FLUSH). The VM runs iba15_rxe on Debian's
# libibverbs (rdma-core 44), uroced's side runs iba15_uroce on liburoce
# (rdma-core 44 has no ibv_wr_flush). One VM boot, three steps:
#   caps       Expect: rxe reports FLUSH_GLOBAL and ATOMIC_WRITE in
#              device_cap_flags_ex and registers an MR with FLUSH_GLOBAL
#              (raw 1<<8); ibv_devinfo -v is kept in the log.
#   write      uroce requests, rxe responds. Expect: ATOMIC WRITE completes
#              and its 8 bytes are in rxe's MR (read back by the VM); FLUSH
#              GLOBAL (range and whole MR) completes; an RDMA WRITE through
#              a type 2 window that rxe bound lands; a SEND with Invalidate
#              of the window arrives at rxe WITH_INV and that rkey; a write
#              through it afterwards completes REM_ACCESS_ERR and changes
#              nothing; a FLUSH to an rxe MR without FLUSH access completes
#              REM_ACCESS_ERR (rxe's NAK).
#   read-back  rxe requests with ibv_wr_atomic_write. Expect: it completes
#              IBV_WC_ATOMIC_WRITE and the bytes are in uroce's MR; into
#              uroce's MR without REMOTE_WRITE it completes REM_ACCESS_ERR
#              and the MR is untouched.
# For write and read-back: Expect: every UDP 4791 frame captured decodes in
# tshark as InfiniBand with the same BTH opcode per frame that `uroce-ctl
# decode` finds (tshark 4.0 has no names for 0x1C/0x1D), every ICRC good,
# frames from both sides, and the case's opcodes present (0x1D, 0x1C, 0x10
# empty READ Response Only, 0x17 SEND Only with Invalidate, NAK ACKs).
# Layout as test_verbs_rxe: one netns (ur-k612-PID), br0 198.18.0.254
# holding the VM's tap (k612tPID) and uroced's veth (k612vPID/k612bPID),
# VM 198.18.0.1, uroced 198.18.0.2.
# Skips (77) without root, qemu, tshark, cpio, EAL or the 6.12 image
# (ROCE_PEER_CACHE_612, default /var/cache/roce-peer-6.12).
. "$(dirname "$0")/../../dpdk/lib.sh"
. "$(dirname "$0")/../rxe_lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
require_root
require_uroced
require_cmd timeout coreutils
require_cmd qemu-system-x86_64 qemu-system-x86
require_cmd tshark tshark
require_cmd dumpcap tshark
require_cmd cpio cpio
[ -n "${UROCE_CTL:-}" ] && [ -x "$UROCE_CTL" ] || skip "UROCE_CTL is not set (uroce-ctl not built)"
[ -x "${IBA15_RXE:-}" ] && [ -x "${IBA15_UROCE:-}" ] ||
	skip "IBA15_RXE / IBA15_UROCE are not set (test programs not built)"
KCACHE=$("$HERE/../peer-kernel.sh" path)
"$HERE/../peer-kernel.sh" status ||
	skip "no 6.12 rxe peer image in $KCACHE: build it with test/interop/peer-kernel.sh build" \
		"(root, Debian's archive once, 5-15 minutes)"
require_eal
require_netns_veth
. "$KCACHE/image.env"

NS="ur-k612-$$"
TAP="k612t$$"
VU="k612v$$"
VB="k612b$$"
PA="uroce-k612-$$"
PREFIXES+=("$PA")
SOCK="$WORK/a.sock"
PORT_W=18741
PORT_R=18742

rxe_layout
rxe_uroced_conf "$WORK/a.conf"
start_uroced a "$NS" -c "$WORK/a.conf" || finish
PID_A=$LAST_PID

# The VM: the 6.12 image plus a cpio with the job and iba15_rxe (Linux
# unpacks concatenated cpio archives; guest-init.sh runs /etc/rp/job.sh).
R="$WORK/vmroot"
mkdir -p "$R/etc/rp"
cp "$IBA15_RXE" "$R/etc/rp/iba15_rxe"
printf 'RP_NAME=iba15\nRP_IP=198.18.0.1/24\nRP_MTU=1500\n' >"$R/etc/rp/job.env"
# rxe's counters and debug messages (dynamic debug, into the kernel log
# only, not the console: they would split the lines parsed here) after each
# case say why it dropped or refused something.
cat >"$R/etc/rp/job.sh" <<EOF
mount -t debugfs none /sys/kernel/debug 2>/dev/null
echo 'module rdma_rxe +p' >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
diag() {
	for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
		[ "\$(cat \$f)" = 0 ] || echo "RP-RXE-COUNTER \$1 \$(basename \$f) \$(cat \$f)"
	done
	dmesg -c | grep 'rxe0' | grep -v 'state = \|rxe_qp_from_attr' | tail -20 |
		sed "s/^/RP-RXE-LOG \$1 /"
}
echo "RP-CMD ibv_devinfo -v -d rxe0"; ibv_devinfo -v -d rxe0
timeout 120 /etc/rp/iba15_rxe caps; echo "RP-CASE-END caps rc=\$?"
timeout 400 /etc/rp/iba15_rxe write 198.18.0.254 $PORT_W \$RP_GIDX
echo "RP-CASE-END write rc=\$?"
diag write
timeout 400 /etc/rp/iba15_rxe read-back 198.18.0.254 $PORT_R \$RP_GIDX
echo "RP-CASE-END read-back rc=\$?"
diag read-back
EOF
(cd "$R" && find . | cpio -o -H newc --owner=0:0 --quiet | gzip) >"$WORK/job.cpio.gz"
cat "$KCACHE/initrd.img" "$WORK/job.cpio.gz" >"$WORK/vm.initrd"
if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
	ACCEL=(-accel kvm -cpu host)
else
	ACCEL=(-accel tcg,thread=multi -cpu max)
fi
CON="$WORK/vm.console"
# Not through nsx(): $! must be the qemu process.
ip netns exec "$NS" qemu-system-x86_64 "${ACCEL[@]}" -M pc -m 768 -smp 1 -nodefaults \
	-no-user-config -display none -no-reboot -kernel "$KCACHE/vmlinuz" -initrd "$WORK/vm.initrd" \
	-append "console=ttyS0 panic=-1 loglevel=4 mitigations=off" \
	-netdev "tap,id=n0,ifname=$TAP,script=no,downscript=no" \
	-device "virtio-net-pci,netdev=n0,mac=52:54:00:18:00:01" \
	-serial "file:$CON" -monitor none </dev/null >"$WORK/qemu.log" 2>&1 &
VM_PID=$!
PIDS+=("$VM_PID")
T0=$SECONDS

vm_ready() { grep -qa '^RP-READY\|^RP-RXE-FAILED' "$CON" 2>/dev/null || gone "$VM_PID"; }
wait_until 180 vm_ready
if ! grep -qa '^RP-READY' "$CON"; then
	fail "the 6.12 VM did not come up; console tail:"
	tail -20 "$CON" 2>/dev/null | sed 's/^/    /'
	finish
fi
uname=$(sed -n 's/^RP-UNAME //p' "$CON" | tr -d '\r')
[ "$uname" = "$KVER" ] && pass "VM up with kernel $uname in $((SECONDS - T0)) s, rxe0 added" ||
	fail "VM kernel '$uname', image built for '$KVER'"
grep -a '^RP-WARN' "$CON" | sed 's/^/    /'

case_end() { grep -qa "^RP-CASE-END $1 " "$CON" || gone "$VM_PID"; }
flush_outcome() { grep -q 'FLUSH (0x1C)' "$WORK/$2.uroce.log" || gone "$1"; }
either_done() { gone "$1" || case_end "$2"; }
both_done() { gone "$1" && case_end "$2"; }
case_rc() { sed -n "s/^RP-CASE-END $1 rc=\([0-9]*\).*/\1/p" "$CON" | tr -d '\r'; }

wait_until 120 case_end caps
grep -a '^iba15 rxe' "$CON" | tr -d '\r' | sed 's/^/    /'
sed -n '/^RP-CMD ibv_devinfo/,/^RP-CASE-END caps/p' "$CON" | tr -d '\r' |
	grep -E '^[[:space:]]+(device_cap_flags_ex|Unknown flags|max_mw)' | sed 's/^/    devinfo: /'
[ "$(case_rc caps)" = 0 ] &&
	pass "rxe $uname: FLUSH_GLOBAL and ATOMIC_WRITE capabilities, FLUSH_GLOBAL MR" ||
	fail "rxe capabilities (caps rc=$(case_rc caps))"

# cap_verdict NAME OPCODES: the capture of case NAME against tshark and
# uroce-ctl decode; OPCODES (decimal) must all appear.
cap_verdict() {
	local cap="$WORK/$1.pcapng" want="$2" out
	"$UROCE_CTL" decode "$cap" >"$WORK/$1.json" 2>"$WORK/$1.decode.err"
	tshark -r "$cap" "${TSHARK_OFF[@]}" -Y "udp.dstport == 4791" -T fields \
		-e frame.number -e infiniband.bth.opcode -e _ws.malformed -e _ws.expert.severity \
		>"$WORK/$1.tshark" 2>/dev/null
	out=$(/usr/bin/python3 - "$WORK/$1.json" "$WORK/$1.tshark" "$want" <<'EOF'
import json, sys
dec = [json.loads(l) for l in open(sys.argv[1])]
dec = [f for f in dec if f["error"] != "not_rocev2"]
ts = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.strip()]
errs = []
if len(ts) != len(dec) or not dec:
    errs.append("tshark sees %d UDP 4791 frames, uroce-ctl %d RoCEv2" % (len(ts), len(dec)))
for t, d in zip(ts, dec):
    if len(t) < 2 or t[1] == "" or int(t[1], 0) != d["opcode"]:
        errs.append("frame %s: tshark BTH opcode %r, uroce-ctl %s" % (t[0], t[1:2], d["opcode"]))
    if len(t) > 2 and t[2]:
        errs.append("frame %s: tshark calls it malformed" % t[0])
    # 0x1C/0x1D are unknown to tshark 4.0: it names no expert error for them
    if len(t) > 3 and t[3] and int(t[3], 0) >= 0x800000:
        errs.append("frame %s: tshark expert error (severity %s)" % (t[0], t[3]))
bad = [f["index"] for f in dec if not (f["icrc_ok"] is True and f["valid"] is True)]
if bad:
    errs.append("ICRC or validity bad in frames %s" % bad[:5])
if len({f["src"] for f in dec}) != 2:
    errs.append("frames from %d senders" % len({f["src"] for f in dec}))
ops = {f["opcode"] for f in dec}
miss = [hex(int(o)) for o in sys.argv[3].split() if int(o) not in ops]
if miss:
    errs.append("opcodes missing: %s" % miss)
hist = {}
for f in dec:
    k = "0x%02x %s" % (f["opcode"], f.get("opcode_name") or "?")
    hist[k] = hist.get(k, 0) + 1
print("%d frames: %s" % (len(dec), ", ".join("%s x%d" % kv for kv in sorted(hist.items()))))
for e in errs:
    print("ERR " + e)
EOF
)
	if echo "$out" | grep -q '^ERR'; then
		fail "$1 capture: $(echo "$out" | head -1)"
		echo "$out" | grep '^ERR' | sed 's/^ERR /    /'
	else
		pass "$1 capture: $out; tshark and uroce-ctl agree on every BTH opcode, every ICRC good"
	fi
}

# run_case NAME PORT OPCODES: uroce's side of one case with its capture.
run_case() {
	local name="$1" port="$2" rc cap_pid upid
	# (without flush_inject.py's replays, which leave from 02:00:c6:12:00:99)
	ip netns exec "$NS" dumpcap -q -i "$VB" -f "udp port 4791 and not ether src 02:00:c6:12:00:99" \
		-w "$WORK/$name.pcapng" \
		>"$WORK/$name.dumpcap" 2>&1 &
	cap_pid=$!
	PIDS+=("$cap_pid")
	wait_until 10 grep -q "Capturing on\|File:" "$WORK/$name.dumpcap"
	sleep 0.5
	if [ "$name" = write ]; then
		ip netns exec "$NS" /usr/bin/python3 "$HERE/flush_inject.py" "$VB" "$VU" \
			"$WORK/inject-now" "$WORK/inject-done" >"$WORK/inject.log" 2>&1 &
		PIDS+=("$!")
	fi
	# Not through nsx(): $! must be the process that becomes iba15_uroce.
	ip netns exec "$NS" env UROCE_SOCKET="$SOCK" UROCE_GID_INDEX=1 \
		IBA15_HOLD="$WORK/inject-done" "$IBA15_UROCE" "$name" \
		198.18.0.254 "$port" >"$WORK/$name.uroce.log" 2>&1 &
	upid=$!
	PIDS+=("$upid")
	[ "$name" = write ] && wait_until 120 flush_outcome "$upid" "$name" &&
		touch "$WORK/inject-now"
	# Either side may fail first; the other gets 30 s to notice.
	wait_until 400 either_done "$upid" "$name"
	wait_until 30 both_done "$upid" "$name" || { log "$name: stopping what still runs"; kill "$upid"; }
	wait "$upid"
	rc=$?
	sleep 0.5
	kill -INT "$cap_pid" 2>/dev/null
	wait "$cap_pid" 2>/dev/null
	grep '^iba15 uroce: \(ok\|FAIL\)' "$WORK/$name.uroce.log" | sed 's/^/    /'
	if [ "$rc" -eq 0 ] && grep -q '^iba15 uroce: ok' "$WORK/$name.uroce.log"; then
		pass "$name: uroce's side: $(grep -c '^iba15 uroce: ok' "$WORK/$name.uroce.log") checks passed"
	else
		fail "$name: uroce's side exit $rc; log tail:"
		tail -5 "$WORK/$name.uroce.log" | sed 's/^/    /'
	fi
	[ "$(case_rc "$name")" = 0 ] && pass "$name: rxe's side exit 0" ||
		fail "$name: rxe's side exit $(case_rc "$name")"
	cap_verdict "$name" "$3"
	[ "$name" = write ] && flush_verdict
}

# rxe 6.12 does not answer uroce's FLUSH (iba15_uroce says "rxe-defect"):
# Expect: every FLUSH uroce sent carries the standard ICRC and not the one
# rxe computes for FLUSH (flush_icrc.py), and rxe ignores a replay of it
# with the standard ICRC but answers one with its own (flush_inject.py).
# Then the defect is rxe's, shown on the wire, and the case passes as a
# known interop failure; any other outcome fails.
flush_verdict() {
	grep -q '^iba15 uroce: rxe-defect' "$WORK/write.uroce.log" || return 0
	tshark -r "$WORK/write.pcapng" -Y "infiniband.bth.opcode == 28" -F pcap \
		-w "$WORK/flush.pcap" 2>/dev/null
	/usr/bin/python3 "$HERE/flush_icrc.py" "$WORK/flush.pcap" >"$WORK/flush-icrc.log"
	local icrc_rc=$?
	sed 's/^/    /' "$WORK/flush-icrc.log" | head -3
	sed 's/^/    /' "$WORK/inject.log"
	if [ $icrc_rc -eq 0 ] && grep -q "rxe-6.12 ICRC.*rxe answered" "$WORK/inject.log" &&
		grep -q "standard ICRC.*no answer" "$WORK/inject.log"; then
		pass "write: FLUSH is a known rxe 6.12 defect: uroce's" \
			"$(wc -l <"$WORK/flush-icrc.log") FLUSH frames carry the standard ICRC;" \
			"rxe drops them and answers only a FLUSH with its own (headers counted twice)"
	else
		fail "write: FLUSH unanswered by rxe, and not for the known ICRC reason (above)"
	fi
}

# 0x1D ATOMIC WRITE, 0x1C FLUSH, 0x10 READ Response Only (their empty
# responses), 0x17 SEND Only with Invalidate, 0x0A RDMA WRITE Only, 0x11 ACK.
run_case write $PORT_W "29 28 16 23 10 17"
run_case read-back $PORT_R "29 16 17"
echo "    rxe's checks (VM console):"
grep -a '^iba15 rxe: \(ok\|FAIL\)' "$CON" | tr -d '\r' | sed 's/^/      /'
grep -qa '^iba15 rxe: FAIL' "$CON" && fail "rxe's side reported failures (above)"
echo "    rxe's counters and debug log after each case (VM console):"
grep -a '^RP-RXE-\(COUNTER\|LOG\)' "$CON" | tr -d '\r' | sed 's/^/      /'

wait_until 60 gone "$VM_PID" || log "the VM did not power off; stopping it"
stop_uroced "$PID_A" a
log "VM run took $((SECONDS - T0)) s"
finish
