#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# A uroced whose port is DPDK's net_pcap PMD replaying a `uroce-ctl template`
# pcap in a loop (rx_pcap=...,infinite_rx=1), into a `uroce-perf sink`,
# --no-huge, one worker on CPU 1.
#
# net_pcap reads the pcap when the daemon sets the port up, before any client
# exists, so the frames are made first, from the description of an earlier
# run: phase 1 starts the daemon on an empty pcap, runs the sink once and
# keeps its description; phase 2 starts a fresh daemon on the template made
# from it. A fresh daemon gives the same QPNs to the same sequence of QPs, and
# the sink's --expect checks that it did. R_Keys are drawn anew by each
# daemon (they must not be guessable), so this path carries SEND ONLY frames:
# UC and UD. RDMA WRITE, which needs the R_Key, is test_sink_testpmd's.
#   Expect: the template of 2 UC + 2 UD QPs (16 messages each, 2 flows per
#           QP) decodes cleanly in uroce-ctl decode;
#   Expect: phase 2's sink finds the QPs of phase 1 (--expect), receives many
#           passes of the file (every QP at least 5 passes), verifies every
#           payload, counts no error, and the UC QPs resynchronised on the
#           PSN jump at each pass;
#   Expect: the daemon's port counted no malformed, bad-ICRC or misaddressed
#           frame;
#   Expect: a second sink on the same daemon gets other QPNs, and --expect
#           refuses to run with a message naming them.
. "$(dirname "$0")/lib.sh"
# shellcheck source=lib_sink.sh
. "$(dirname "$0")/lib_sink.sh"

require_root
require_uroced
require_sink_tools
require_eal

PD="uroce-sinkpcap-$$"
PREFIXES+=("$PD")
SOCK="$WORK/d.sock"
MSGS=16

# --- phase 1: the description, from a daemon on an empty pcap ---------------
empty_pcap "$WORK/empty.pcap"
pcap_conf "$WORK/d1.conf" "$PD" "$SOCK" "rx_pcap=$WORK/empty.pcap"
start_uroced phase1 - -c "$WORK/d1.conf" || finish
P1=$LAST_PID
if timeout 180 "$UROCE_PERF" sink --socket "$SOCK" --uc 2 --ud 2 -D 1 -q \
	--json "$WORK/p1.json" >"$WORK/p1.out" 2>"$WORK/p1.err"; then
	pass "phase 1: sink described its QPs: $(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(", ".join("%s %d" % (q["type"], q["qpn"]) for q in d["qps"]), "at", d["ip"], d["mac"])' \
		"$WORK/p1.json")"
else
	fail "phase 1: sink exit $?"
	sed 's/^/    /' "$WORK/p1.err"
	finish
fi
stop_uroced "$P1" phase1
rm -f "$SOCK"

"$UROCE_CTL" template "$WORK/p1.json" "$WORK/t.pcap" -n $MSGS --op send --flows 2 \
	2>"$WORK/tpl.err" || { fail "template: $(cat "$WORK/tpl.err")"; finish; }
if "$UROCE_CTL" decode --strict "$WORK/t.pcap" >"$WORK/t.json"; then
	pass "template: $(wc -l <"$WORK/t.json") frames, every one valid with a good ICRC"
else
	fail "template: uroce-ctl decode --strict found an invalid frame"
fi
FRAMES=$(wc -l <"$WORK/t.json")

# --- phase 2: a fresh daemon replays the template in a loop ------------------
pcap_conf "$WORK/d2.conf" "$PD" "$SOCK" "rx_pcap=$WORK/t.pcap,infinite_rx=1"
start_uroced phase2 - -c "$WORK/d2.conf" || finish
P2=$LAST_PID
sink_start s2 "$SOCK" --uc 2 --ud 2 --verify --expect "$WORK/p1.json" || finish
# Frames flow from the start: wait for 20 passes of the file.
if sink_wait s2 msgs $((20 * FRAMES)) 120; then
	pass "replay: $(sink_total s2 msgs) messages received, $((20 * FRAMES)) needed"
else
	fail "replay: only $(sink_total s2 msgs) messages in $(bound 120) s"
fi
sink_stop s2
[ "$SINK_RC" -eq 0 ] && pass "sink exit 0 (no error, every check passed)" ||
	fail "sink exit $SINK_RC; stderr:"$'\n'"$(tail -5 "$WORK/s2.err")"
sink_check s2 "summary: verified, no error, no bad data" \
	's["ok"] and s["verify"] and s["total"]["errors"] == 0 and s["total"]["verify_bad"] == 0'
sink_check s2 "every QP received at least 5 passes of its $MSGS messages" \
	"all(e['msgs'] >= 5 * $MSGS and e['cqes'] >= 5 * $MSGS for e in s['qps'])"
sink_check s2 "UC QPs resynchronised on the PSN jump of each pass" \
	"all(e['resyncs'] >= 5 for e in s['qps'] if e['type'] == 'UC')"
sink_check s2 "UD QPs never count a PSN resync (UD checks no PSN)" \
	"all(e['resyncs'] == 0 for e in s['qps'] if e['type'] == 'UD')"
port_clean "$PD" "replay"

# --- --expect refuses QPs that are not those of the description --------------
if timeout 180 "$UROCE_PERF" sink --socket "$SOCK" --uc 2 --ud 2 -D 1 -q \
	--expect "$WORK/p1.json" >"$WORK/x.out" 2>"$WORK/x.err"; then
	fail "--expect: a second sink (other QPNs) was accepted"
else
	rc=$?
	grep -q "was UC [0-9]*, now UC [0-9]*" "$WORK/x.err" && [ "$rc" -eq 2 ] &&
		pass "--expect: a second sink refused, exit $rc: $(head -1 "$WORK/x.err")" ||
		fail "--expect: exit $rc, message: $(cat "$WORK/x.err")"
fi
stop_uroced "$P2" phase2
finish
