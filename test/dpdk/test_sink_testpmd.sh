#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# `uroce-ctl template` pcaps replayed by dpdk-testpmd into a uroced over
# memif: testpmd's port 0 is the net_pcap PMD looping over the pcap
# (infinite_rx=1), its port 1 a memif client of the daemon, io forwarding
# (frames unchanged), the stand-in for pktgen's pcap mode. --no-huge; the
# daemon's worker on CPU 1, testpmd's forwarding lcore on CPU 0, the sink
# sleeping on its CQ event. Here the sink runs first and the frames are made
# from its description, R_Key and window addresses included.
#   Expect (IPv4, 1 KiB): UC RDMA WRITE ONLY and UD SEND ONLY, 8 messages
#           per QP, replayed for many passes: the sink counts the WRITEs from
#           the daemon's per-QP counters (they make no completion), finds
#           every written window byte right and exactly the 8 slots written,
#           verifies every UD payload, counts no error; the port counted no
#           malformed or misaddressed frame.
#   Expect (IPv6 GID, VLAN 100 on the daemon's port, 64 B, 4 flows per QP):
#           UC RDMA WRITE ONLY with immediate (one completion each, the
#           immediate naming the window offset) and UD SEND ONLY verify;
#           the UC QPs resynchronise on the PSN jump of each pass.
#   Expect (frames made wrong on purpose: window addresses shifted by 8
#           bytes, the UD Q_Key changed): the sink finds bad window bytes on
#           the UC QP and counts the UD frames as Q_Key errors (none taken),
#           says FAILED and exits 1.
. "$(dirname "$0")/lib.sh"
# shellcheck source=lib_sink.sh
. "$(dirname "$0")/lib_sink.sh"

require_root
require_uroced
require_sink_tools
require_cmd dpdk-testpmd dpdk
require_cmd stdbuf coreutils
require_eal

MEMIF="$WORK/memif.sock"
PA="uroce-sinktp-a-$$"
PREFIXES+=("$PA")
SOCK="$WORK/a.sock"
trap '' PIPE    # a testpmd that died makes a write to its FIFO fail, not kill us

# start_daemon NAME [EXTRA]: uroced A, memif server, idle_sleep_us 10.
start_daemon() {
	rm -f "$SOCK" "$MEMIF"
	memif_conf a 10 "${2:-}"
	start_uroced "$1" - -c "$WORK/a.conf" || finish
	PID_A=$LAST_PID
}

# replay NAME PCAP MIN_MSGS: testpmd replays PCAP until the sink counted
# MIN_MSGS messages (or 30 s), then stops forwarding (finish_round quits it).
replay() {
	testpmd_replay "tp-$1" "uroce-sinktp-tp$1-$$" "$2" "$MEMIF" 0@0,1@0 || return 1
	if sink_wait "$1" msgs "$3" 120; then
		pass "$1: replay reached $(sink_total "$1" msgs) messages ($3 wanted)"
	else
		fail "$1: only $(sink_total "$1" msgs) messages in $(bound 120) s"
	fi
	testpmd_pause
}

# finish_round NAME: the daemon (memif server) goes first, then the idle
# testpmd quits (see testpmd_pause in lib_sink.sh).
finish_round() {
	stop_uroced "$PID_A" "$1"
	testpmd_quit "tp-$2"
}

# --- 1. IPv4, 1 KiB: UC WRITE without immediate and UD SEND -------------------
start_daemon r1
sink_start s1 "$SOCK" --uc 2 --ud 2 --size 1024 --verify || finish
"$UROCE_CTL" template "$WORK/s1.json" "$WORK/t1.pcap" -n 8 --op write -q ||
	{ fail "template 1"; finish; }
replay s1 "$WORK/t1.pcap" $((32 * 20))
sleep 1.2 # one more interval: the last rate record covers the end of the replay
sink_stop s1
[ "$SINK_RC" -eq 0 ] && pass "s1: sink exit 0" ||
	fail "s1: sink exit $SINK_RC: $(tail -2 "$WORK/s1.err")"
sink_check s1 "s1: verified, no error, no bad data" \
	's["ok"] and s["verify"] and s["total"]["errors"] == 0 and s["total"]["verify_bad"] == 0'
sink_check s1 "s1: UC WRITEs counted from the daemon's counters (no completion), 20+ passes" \
	"all(e['msgs'] >= 20 * 8 and e['cqes'] == 0 and
	     e['counters']['rx_write_requests'] == e['msgs'] for e in s['qps'] if e['type'] == 'UC')"
sink_check s1 "s1: UC windows hold exactly the 8 written 1 KiB slots, every byte right" \
	"all(e['window']['written'] == 8 * 1024 and e['window']['bad_max'] == 0
	     for e in s['qps'] if e['type'] == 'UC')"
sink_check s1 "s1: UD SENDs completed and verified, 20+ passes" \
	"all(e['msgs'] >= 20 * 8 and e['cqes'] > 0 for e in s['qps'] if e['type'] == 'UD')"
sink_check s1 "s1: bytes counted: 1024 per message" \
	"all(e['bytes'] == 1024 * e['msgs'] for e in s['qps'] if e['type'] == 'UC')"
port_clean "$PA" "s1"
finish_round r1 s1

# --- 2. IPv6 GID, VLAN 100, 64 B, 4 flows: WRITE with immediate and UD SEND ---
start_daemon r2 "vlan = 100"
sink_start s2 "$SOCK" --uc 2 --ud 1 -x 2 --vlan 100 --verify || finish
"$UROCE_CTL" template "$WORK/s2.json" "$WORK/t2.pcap" -n 16 --op write-imm --flows 4 -q ||
	{ fail "template 2"; finish; }
"$UROCE_CTL" decode --strict "$WORK/t2.pcap" | /usr/bin/python3 -c '
import json, sys
f = [json.loads(l) for l in sys.stdin]
sys.exit(0 if f and all(":" in x["dst"] for x in f) else 1)' &&
	pass "s2: the template is IPv6, every frame valid" ||
	fail "s2: template not IPv6 or invalid"
replay s2 "$WORK/t2.pcap" $((48 * 20))
sleep 1.2
sink_stop s2
[ "$SINK_RC" -eq 0 ] && pass "s2: sink exit 0" ||
	fail "s2: sink exit $SINK_RC: $(tail -2 "$WORK/s2.err")"
sink_check s2 "s2: verified, no error, no bad data" \
	's["ok"] and s["total"]["errors"] == 0 and s["total"]["verify_bad"] == 0'
sink_check s2 "s2: UC WRITE with immediate: completions verified, 20+ passes, PSN resyncs" \
	"all(e['msgs'] >= 20 * 16 and e['cqes'] >= 20 * 16 and e['resyncs'] >= 20
	     for e in s['qps'] if e['type'] == 'UC')"
sink_check s2 "s2: UD SEND over IPv6 with a VLAN tag, 20+ passes" \
	"all(e['msgs'] >= 20 * 16 for e in s['qps'] if e['type'] == 'UD')"
port_clean "$PA" "s2"
finish_round r2 s2

# --- 3. frames made wrong on purpose: the sink must say so --------------------
start_daemon r3 "vlan = 100"
sink_start s3 "$SOCK" --uc 1 --ud 1 -x 2 --vlan 100 --verify || finish
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for q in d["qps"]:
    if q["type"] == "UC":
        q["va"] += 8           # every WRITE lands 8 bytes off
    else:
        q["qkey"] ^= 1         # a Q_Key the QP does not have
json.dump(d, open(sys.argv[2], "w"))' "$WORK/s3.json" "$WORK/s3-bad.json"
"$UROCE_CTL" template "$WORK/s3-bad.json" "$WORK/t3.pcap" -n 4 --op write -q ||
	{ fail "template 3"; finish; }
testpmd_replay tp-s3 "uroce-sinktp-tps3-$$" "$WORK/t3.pcap" "$MEMIF" 0@0,1@0 &&
	sink_wait s3 msgs 200 120
testpmd_pause
sleep 1.2
sink_stop s3
[ "$SINK_RC" -eq 1 ] && pass "s3: sink exit 1 (bad data and errors seen)" ||
	fail "s3: sink exit $SINK_RC, expected 1"
sink_check s3 "s3: shifted WRITEs found as bad window bytes" \
	"not s['ok'] and all(e['verify_bad'] > 0 and e['window']['bad_max'] > 0
	                     for e in s['qps'] if e['type'] == 'UC')"
sink_check s3 "s3: UD frames with the wrong Q_Key counted as errors, none taken" \
	"all(e['errors'] > 0 and e['counters']['rx_ud_qkey_err'] == e['errors'] and
	     e['msgs'] == 0 for e in s['qps'] if e['type'] == 'UD')"
grep -q "verify: UC QP .* window bytes hold a wrong value" "$WORK/s3.err" &&
	pass "s3: the sink said where: $(grep -m1 'window bytes' "$WORK/s3.err")" ||
	fail "s3: no message about the bad window bytes"
finish_round r3 s3
finish
