#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Congestion control between two uroced over memif (A: memif server, B:
# client, as in test_e2e_memif). B's port marks CE on a fifth of the RoCEv2
# frames it receives (fault_ce = 0.2, fault_dir = rx), as a congested switch
# in front of it would, while uroce-perf write bw --verify sends from A to B.
#   Expect: B's notification point answers with CNPs: fault_ce_marked on B's
#           port, np_ecn_marked_roce_packets and np_cnp_sent in B's transport
#           counters; dpdk-dumpcap on B captures CNPs to A's QP (opcode 0x81,
#           BECN, PSN 0, DSCP 48, ECT(0)) next to A's data (ECT(0)), and
#           tshark and uroce-ctl decode both decode them.
#   Expect: A's reaction point acts on them (rp_cnp_handled) and its QP's
#           rate (uroce-ctl counters --qp: rp_current_rate_kbps) falls while
#           the traffic runs.
#   Expect: once the traffic stops nothing is marked any more: B sends no
#           more CNPs, and A's QP, kept open by uroce-perf --hold, recovers
#           to its maximum rate and its rate limiter turns off.
#   Expect: the data verifies throughout (uroce-perf --verify, both sides).
#
# One run, not two phases around a config reload (uroced has none, and
# fault_ce is fixed for a daemon's life): the marking stops when the traffic
# stops, and that is also when a DCQCN rate recovers on its own (its rate
# increase timer runs without traffic). A's parameters make that quick
# (rpg_time_reset 100 us, rpg_ai_rate 500 Mb/s: about 2 ms from 1 Mb/s to
# 10 Gb/s instead of about a second with ConnectX's 300 us and 5 Mb/s) and
# give its port a speed (line_rate 10000). dpdk-dumpcap attaches to B as a
# secondary process, so B runs on hugepages: the test needs 128 free 2 MB
# pages and a hugetlbfs mount, and SKIPs, saying so, without them.
. "$(dirname "$0")/lib.sh"

require_root
require_uroced
[ -n "${UROCE_PERF:-}" ] && [ -x "$UROCE_PERF" ] || skip "UROCE_PERF is not set (uroce-perf not built)"
[ -n "${UROCE_CTL:-}" ] && [ -x "$UROCE_CTL" ] || skip "UROCE_CTL is not set (uroce-ctl not built)"
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd dpdk-dumpcap dpdk-dev
require_cmd tshark tshark
require_cmd timeout coreutils
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is needed (Debian: python3)"
free=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo 0)
[ "$free" -ge 128 ] || skip "needs 128 free 2 MB hugepages for dpdk-dumpcap's primary (have $free): mkdir -p /dev/hugepages && dpdk-hugepages.py -p 2M --setup 512M"
grep -q hugetlbfs /proc/mounts || skip "hugetlbfs not mounted: mkdir -p /dev/hugepages && dpdk-hugepages.py --mount"
require_eal

MEMIF="$WORK/memif.sock"
PA="uroce-cc-a-$$"
PB="uroce-cc-b-$$"
PREFIXES+=("$PA" "$PB")
A_SOCK="$WORK/a.sock"
B_SOCK="$WORK/b.sock"
TCP_PORT=$((19000 + $$ % 1000))

memif_conf a 10 "${CC_A:-line_rate = 1000
dce_tcp_rtt = 100
rpg_time_reset = 100
rpg_ai_rate = 20}"
memif_conf b 10 "fault_ce = 0.2
fault_dir = rx
fault_seed = 5"
sed -i 's/^no_huge = yes$/no_huge = no/' "$WORK/b.conf"
start_uroced a - -c "$WORK/a.conf" || finish
PID_A=$LAST_PID
start_uroced b - -c "$WORK/b.conf" || finish
PID_B=$LAST_PID
wait_link "$PB" || finish

# cc_rows SOCK QPN NAME...: rows of a QP's congestion group (uroce-ctl), one line.
cc_rows() {
	local sock="$1" qpn="$2"
	shift 2
	"$UROCE_CTL" counters -s "$sock" --json --qp "$qpn" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
try:
    c = json.load(sys.stdin)["counters"]["congestion"]
    print(" ".join(str(c[n]) for n in sys.argv[1:]))
except Exception:
    pass  # no answer (a loaded host): the callers see empty fields' "$@"
}

# --- capture on B, then the traffic ------------------------------------------
timeout 300 stdbuf -oL -eL dpdk-dumpcap --file-prefix "$PB" -i net_memif0 \
	-w "$WORK/b.pcapng" >"$WORK/dumpcap.log" 2>&1 &
DUMPCAP=$!
PIDS+=("$DUMPCAP")
capturing() { grep -q "^Capturing on" "$WORK/dumpcap.log"; }
wait_until 60 capturing ||
	fail "dpdk-dumpcap did not attach to B in $(bound 60) s: $(cat "$WORK/dumpcap.log")"

timeout 180 "$UROCE_PERF" write bw -x 1 --socket "$B_SOCK" -p "$TCP_PORT" >"$WORK/srv.log" 2>&1 &
SRV=$!
PIDS+=("$SRV")
wait_listen "$TCP_PORT" "$SRV"
timeout 180 "$UROCE_PERF" write bw -x 1 -s 65536 -D 3 --verify --hold 10 --socket "$A_SOCK" \
	-p "$TCP_PORT" 127.0.0.1 >"$WORK/cli.log" 2>&1 &
CLI=$!
PIDS+=("$CLI")

# A's QP, and its rate while the traffic runs.
QPN=""
rts_qp() {
	QPN=$("$UROCE_CTL" qps -s "$A_SOCK" --json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
try:
    q = [e for e in json.load(sys.stdin)["qps"] if e["state"] == "RTS"]
except Exception:
    q = []
print(q[0]["qpn"] if q else "")')
	[ -n "$QPN" ]
}
wait_until 60 rts_qp
[ -n "$QPN" ] || { fail "no QP in RTS on A"; kill "$CLI" "$SRV" "$DUMPCAP" 2>/dev/null; finish; }
MAX=$(cc_rows "$A_SOCK" "$QPN" rp_max_rate_kbps)
[ -n "$MAX" ] || { fail "uroce-ctl counters --qp $QPN on A: no answer"; finish; }
min_rate=$MAX
limited_seen=0
looks=0
for _ in $(seq 40); do
	sleep 0.02
	kill -0 "$SRV" 2>/dev/null || break
	read -r l r < <(cc_rows "$A_SOCK" "$QPN" rp_limited rp_current_rate_kbps)
	[ -n "$r" ] || continue
	looks=$((looks + 1))
	[ -n "$r" ] && [ "$r" -lt "$min_rate" ] && min_rate=$r
	[ "$l" = 1 ] && limited_seen=$((limited_seen + 1))
done
# How deep a look finds the rate depends on the host, not on DCQCN: each CNP
# cuts it (by alpha/2, a half at first), and A's quick recovery (100 us
# steps) raises it again until the next CNP. On a busy host fewer frames pass,
# fewer are marked, CNPs come further apart and a look, itself slow there,
# mostly lands between them (28 Nov 2026, beside a busy loop per CPU: 577 891
# kb/s at the lowest of 7 looks). So a look must find the limiter on and the
# rate below the maximum; the arithmetic of each cut is checked exactly by
# test/unit/transport/test_cc.c (rp_first_cnp, rp_monitor_period_and_alpha),
# what it does to competing flows by test/component/test_congestion.c.
[ "$limited_seen" -gt 0 ] && [ "$min_rate" -lt "$MAX" ] &&
	pass "A's QP $QPN under CNPs: rate limited in $limited_seen of $looks looks, down to $min_rate kb/s of $MAX" ||
	fail "A's QP $QPN: limited in $limited_seen of $looks looks, lowest rate $min_rate kb/s of $MAX"

# --- the traffic is over (B's uroce-perf exits); A's QP is held, idle ---------
wait "$SRV"
rc_srv=$?
sleep 0.3 # telemetry's snapshot is refreshed every 100 ms
cnp_b1=$(dstat "$PB" np_cnp_sent)
recovered=""
t_rec=$SECONDS
back_at_max() {
	read -r l r < <(cc_rows "$A_SOCK" "$QPN" rp_limited rp_current_rate_kbps)
	[ "$l" = 0 ] && [ "$r" = "$MAX" ]
}
wait_until 30 back_at_max && recovered=$((SECONDS - t_rec))
[ -n "$recovered" ] &&
	pass "marking stopped with the traffic: A's QP $QPN back at $MAX kb/s, limiter off (seen within $((recovered + 1)) s)" ||
	fail "A's QP $QPN did not recover: rate $r kb/s of $MAX, limited $l"
sleep 0.5
cnp_b2=$(dstat "$PB" np_cnp_sent)
[ -n "$cnp_b1" ] && [ "$cnp_b1" = "$cnp_b2" ] && pass "no CNP from B after the traffic ($cnp_b1 in all)" ||
	fail "B kept sending CNPs after the traffic: $cnp_b1 then $cnp_b2"
wait "$CLI"
rc_cli=$?
[ "$rc_cli" -eq 0 ] && [ "$rc_srv" -eq 0 ] &&
	pass "uroce-perf write bw --verify under marking: both sides exit 0 ($(grep -A1 '#bytes' "$WORK/cli.log" | tail -1 | awk '{print $1 " B x " $2 ", " $4 " MB/s"}'))" ||
	{ fail "uroce-perf: client exit $rc_cli, server exit $rc_srv"; tail -n 5 "$WORK/cli.log" "$WORK/srv.log" | sed 's/^/    /'; }
kill -INT "$DUMPCAP" 2>/dev/null
wait "$DUMPCAP" 2>/dev/null

# --- counters -------------------------------------------------------------------
ce=$(counter "$PB" 0 fault_ce_marked)
np_ce=$(dstat "$PB" np_ecn_marked_roce_packets)
np_cnp=$(dstat "$PB" np_cnp_sent)
rp=$(dstat "$PA" rp_cnp_handled)
rx=$(dstat "$PA" rx_cnp)
[ "${ce:-0}" -gt 0 ] && [ "${np_ce:-0}" -ge "${ce:-0}" ] && [ "${np_cnp:-0}" -gt 0 ] &&
	[ "${np_cnp:-0}" -le "${np_ce:-0}" ] &&
	pass "B: $ce frames marked CE by fault_ce, np_ecn_marked_roce_packets $np_ce, np_cnp_sent $np_cnp" ||
	fail "B: fault_ce_marked $ce, np_ecn_marked_roce_packets $np_ce, np_cnp_sent $np_cnp"
[ "${rp:-0}" -gt 0 ] && [ "${rx:-0}" -ge "${rp:-0}" ] && [ "${rx:-0}" -le "${np_cnp:-0}" ] &&
	pass "A: rx_cnp $rx, rp_cnp_handled $rp (B sent $np_cnp)" ||
	fail "A: rx_cnp $rx, rp_cnp_handled $rp, B sent $np_cnp"

# --- the capture ------------------------------------------------------------------
tshark -n -r "$WORK/b.pcapng" -Y "udp.dstport == 4791" -T fields -E 'separator=|' \
	-e ip.src -e ip.dsfield.dscp -e ip.dsfield.ecn -e infiniband.bth.opcode \
	-e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.reserved \
	>"$WORK/cap.txt" 2>/dev/null
read -r n_cnp cnp_bad n_data data_bad < <(/usr/bin/python3 - "$WORK/cap.txt" "$QPN" <<'EOF'
import sys
qpn = int(sys.argv[2])
n_cnp = cnp_bad = n_data = data_bad = 0
for line in open(sys.argv[1]):
    src, dscp, ecn, op, dqp, psn, rsv = line.rstrip("\n").split("|")
    if int(op) == 129:
        n_cnp += 1
        ok = (src == "198.18.3.2" and (dscp, ecn) == ("48", "2") and int(dqp, 16) == qpn
              and int(psn) == 0 and int(rsv, 16) == 0x40)
        cnp_bad += not ok
    elif src == "198.18.3.1" and int(op) in range(0x06, 0x0C):
        n_data += 1
        data_bad += ecn != "2"
print(n_cnp, cnp_bad, n_data, data_bad)
EOF
)
[ "${n_cnp:-0}" -gt 0 ] && [ "${cnp_bad:-1}" -eq 0 ] &&
	pass "capture on B: $n_cnp CNPs to A's QP $QPN: opcode 0x81 (tshark: $(tshark -n -r "$WORK/b.pcapng" -V -Y 'infiniband.bth.opcode == 129' 2>/dev/null | grep -m1 -o 'Opcode: .*')), BECN, PSN 0, DSCP 48, ECT(0)" ||
	fail "capture on B: $n_cnp CNPs, $cnp_bad not as expected (see $WORK/cap.txt)"
[ "${n_data:-0}" -gt 100 ] && [ "${data_bad:-1}" -eq 0 ] &&
	pass "capture on B: $n_data RDMA WRITE frames from A, all ECT(0) (captured before fault_ce marks them)" ||
	fail "capture on B: $n_data WRITE frames from A, $data_bad not ECT(0)"
"$UROCE_CTL" decode "$WORK/b.pcapng" >"$WORK/decode.json" 2>"$WORK/decode.err"
read -r d_cnp d_bad < <(/usr/bin/python3 - "$WORK/decode.json" <<'EOF'
import json, sys
n = bad = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["opcode"] == 129:
        n += 1
        bad += not (o["valid"] and o["icrc_ok"] and o["opcode_name"] == "CNP" and o["becn"]
                    and o["dscp"] == 48 and o["ecn"] == 2)
print(n, bad)
EOF
)
[ "${d_cnp:-0}" -eq "${n_cnp:-0}" ] && [ "${d_bad:-1}" -eq 0 ] &&
	pass "uroce-ctl decode: $d_cnp CNPs, each valid with a good ICRC, BECN, DSCP 48, ECT(0)" ||
	fail "uroce-ctl decode: $d_cnp CNPs ($d_bad wrong), tshark saw $n_cnp"

stop_uroced "$PID_A" a
stop_uroced "$PID_B" b
finish
