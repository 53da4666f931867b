# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Helpers for the tests and the benchmark that replay `uroce-ctl template`
# pcaps into a `uroce-perf sink` (sourced after lib.sh, not run):
#   - the sink in the background, its description and its rate records;
#   - dpdk-testpmd replaying a pcap with the net_pcap PMD (infinite_rx=1)
#     and forwarding it (io mode) to a memif peer;
#   - checks of the sink's summary and of the daemon's port counters.
# UROCE_PERF and UROCE_CTL must point at the binaries (meson passes them).

require_sink_tools() {
	[ -n "${UROCE_PERF:-}" ] && [ -x "$UROCE_PERF" ] ||
		skip "UROCE_PERF is not set (uroce-perf not built)"
	[ -n "${UROCE_CTL:-}" ] && [ -x "$UROCE_CTL" ] ||
		skip "UROCE_CTL is not set (uroce-ctl not built: libpcap-dev missing?)"
	[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 not found (Debian package python3)"
	require_cmd timeout coreutils
	require_cmd dpdk-telemetry.py dpdk-dev
}

# empty_pcap FILE: a pcap with a header and no frame (net_pcap needs a file).
empty_pcap() {
	/usr/bin/python3 -c 'import struct, sys
open(sys.argv[1], "wb").write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))' "$1"
}

# pcap_conf FILE PREFIX SOCK DEVARGS [EXTRA]: a uroced config whose one port
# is a net_pcap vdev (worker on CPU 1), addresses 198.18.4.1/24 and
# 2001:2::4:1/112, MAC 02:00:c6:12:04:01.
pcap_conf() {
	cat >"$1" <<EOF
[eal]
lcores = 0,1
no_huge = yes
memory = 256
file_prefix = $2
[daemon]
socket = $3
[limits]
mbufs = 8191
idle_sleep_us = 10
neigh_retry_ms = 100
[port.pcap]
vdev = net_pcap0,$4
ipv4 = 198.18.4.1/24
ipv6 = 2001:2::4:1/112
mac = 02:00:c6:12:04:01
${5:-}
EOF
}

# sink_start NAME SOCK ARGS...: uroce-perf sink in the background (bounded by
# 600 s; on the CPUs of $SINK_CPUS if set); stdout $WORK/NAME.out, stderr
# $WORK/NAME.err, description $WORK/NAME.json. Waits up to 120 s for the
# description. Sets SINK_PID.
sink_start() {
	local name="$1" sock="$2" pin=()
	shift 2
	rm -f "$WORK/$name.json"
	[ -n "${SINK_CPUS:-}" ] && pin=(taskset -c "$SINK_CPUS")
	"${pin[@]}" timeout 600 "$UROCE_PERF" sink --socket "$sock" --json "$WORK/$name.json" "$@" \
		>"$WORK/$name.out" 2>"$WORK/$name.err" &
	SINK_PID=$!
	PIDS+=("$SINK_PID")
	wait_until 120 described "$WORK/$name.json" "$SINK_PID"
	[ -s "$WORK/$name.json" ] && return 0
	fail "sink $name did not describe its QPs in $(bound 120) s; stderr:"
	sed 's/^/    /' "$WORK/$name.err"
	return 1
}

described() { [ -s "$1" ] || ! kill -0 "$2" 2>/dev/null; }

# sink_total NAME FIELD: the latest running total of FIELD in the sink's rate
# records (0 before the first one).
sink_total() {
	/usr/bin/python3 -c '
import json, sys
v = 0
for line in open(sys.argv[1]):
    try:
        d = json.loads(line)
    except ValueError:
        continue
    if "uroce_rate" in d:
        v = d["total"][sys.argv[2]]
print(v)' "$WORK/$1.out" "$2"
}

# sink_wait NAME FIELD MIN SECONDS: until the sink's total FIELD reaches MIN.
sink_wait() {
	wait_until "$4" sink_reached "$1" "$2" "$3"
}

sink_reached() {
	[ "$(sink_total "$1" "$2")" -ge "$3" ]
}

# sink_stop NAME: SIGINT (it stops within one interval), wait up to 60 s.
# Sets SINK_RC (the sink's exit status: 0 clean, 1 errors or bad data).
sink_stop() {
	local i
	kill -INT "$SINK_PID" 2>/dev/null
	wait_until 60 gone "$SINK_PID" || kill -KILL "$SINK_PID" 2>/dev/null
	wait "$SINK_PID"
	SINK_RC=$?
}

# sink_check NAME WHAT PYEXPR: pass if PYEXPR holds for the sink's summary
# (s: the summary object, d: the description, q: its QPs by number).
sink_check() {
	local out
	out=$(/usr/bin/python3 -c '
import json, sys
s = d = None
for line in open(sys.argv[1]):
    try:
        x = json.loads(line)
    except ValueError:
        continue
    if "uroce_sink_summary" in x:
        s = x
    if "uroce_sink" in x:
        d = x
if s is None:
    print("no summary")
    sys.exit(1)
q = {e["qpn"]: e for e in s["qps"]}
ok = eval(sys.argv[2])
print("total %s" % json.dumps(s["total"]))
sys.exit(0 if ok else 1)' "$WORK/$1.out" "$3" 2>&1)
	if [ $? -eq 0 ]; then
		pass "$2 ($out)"
	else
		fail "$2: $3 does not hold: $out"
		tail -3 "$WORK/$1.err" | sed 's/^/    /'
	fi
}

# port_clean PREFIX WHAT: the daemon's port 0 counted no malformed or
# misaddressed frame (every wire error, ICRC included, and every drop of a
# frame that was not for it).
port_clean() {
	local out
	out=$(tel "$1" /uroce/port/stats,0 | /usr/bin/python3 -c '
import json, sys
try:
    d = json.loads(sys.stdin.read())["/uroce/port/stats"]
except Exception:
    print("telemetry /uroce/port/stats,0 unreadable")
    sys.exit(1)
bad = ["rx_truncated", "rx_not_rocev2", "rx_bad_ip", "rx_bad_length", "rx_bad_opcode",
       "rx_bad_tver", "rx_icrc_errors", "rx_not_for_us", "rx_vlan_mismatch",
       "rx_dst_not_local", "rx_multiseg", "rx_other"]
nz = {k: d[k] for k in bad if d.get(k)}
print("rx_roce_packets %d, rx_icrc_errors %d%s" % (d["rx_roce_packets"], d["rx_icrc_errors"],
      ", NONZERO " + json.dumps(nz) if nz else ""))
sys.exit(1 if nz or d["rx_roce_packets"] == 0 else 0)' 2>&1)
	if [ $? -eq 0 ]; then
		pass "$2: port counters clean ($out)"
	else
		fail "$2: port counters: $out"
	fi
}

# testpmd_replay NAME PREFIX PCAP MEMIF_SOCK LCORES: dpdk-testpmd with port 0
# the net_pcap PMD replaying PCAP in a loop and port 1 a memif client of
# MEMIF_SOCK, io forwarding (port 0 to 1 unchanged), started interactively
# through a FIFO (so that it stops forwarding before it quits: testpmd 22.11
# can crash when a memif peer goes while it polls). Waits for the memif link,
# then starts forwarding. Sets TP_PID and TP_FD; log $WORK/NAME.log.
testpmd_replay() {
	local name="$1" prefix="$2" pcap="$3" msock="$4" lcores="$5"
	rm -f "$WORK/$name.in"
	mkfifo "$WORK/$name.in"
	PREFIXES+=("$prefix")
	: >"$WORK/$name.log" # here: the child may run late (start_uroced's reason)
	timeout 600 stdbuf -oL dpdk-testpmd --lcores "$lcores" --no-huge -m 256 \
		--file-prefix "$prefix" \
		--vdev "net_pcap0,rx_pcap=$pcap,infinite_rx=1" \
		--vdev "net_memif0,role=client,socket=$msock,id=0" -- \
		-i --forward-mode=io --nb-cores=1 --total-num-mbufs=16384 --disable-link-check \
		<"$WORK/$name.in" >>"$WORK/$name.log" 2>&1 &
	TP_PID=$!
	PIDS+=("$TP_PID")
	exec {TP_FD}>"$WORK/$name.in"
	wait_until 120 prompt_or_gone "$WORK/$name.log" "$TP_PID"
	if ! grep -q 'testpmd>' "$WORK/$name.log"; then
		fail "testpmd $name: no prompt in $(bound 120) s"
		tail -8 "$WORK/$name.log" | sed 's/^/    /'
		return 1
	fi
	wait_until 60 tp_link_up "$WORK/$name.log"
	if ! grep -q 'Link status: up' "$WORK/$name.log"; then
		fail "testpmd $name: memif link to $msock not up in $(bound 60) s"
		return 1
	fi
	echo start >&"$TP_FD"
	return 0
}

prompt_or_gone() { grep -q 'testpmd>' "$1" || ! kill -0 "$2" 2>/dev/null; }

tp_link_up() { # asks testpmd for port 1's link, then reads its log
	echo "show port info 1" >&"$TP_FD"
	sleep 0.25
	grep -q 'Link status: up' "$1"
}

# testpmd_pause: stop forwarding (testpmd prints its forwarding statistics).
# Quit only once the memif peer is gone or idle: the memif PMD of DPDK 22.11
# can crash the side that still polls when its peer leaves (seen here as a
# segfault of uroced's worker in librte_net_memif when testpmd quit under
# traffic).
testpmd_pause() {
	echo stop >&"$TP_FD" 2>/dev/null
	sleep 0.3
}

# testpmd_quit NAME: quit and wait (exit 139 on quit, testpmd 22.11's crash
# after its memif peer left, is reported, not failed).
testpmd_quit() {
	local rc
	echo quit >&"$TP_FD" 2>/dev/null
	exec {TP_FD}>&-
	wait_until 60 gone "$TP_PID" || kill -KILL "$TP_PID" 2>/dev/null
	wait "$TP_PID"
	rc=$?
	if [ "$rc" -eq 139 ]; then
		log "warning: dpdk-testpmd $1 crashed on quit (SIGSEGV, a testpmd 22.11 bug)"
	elif [ "$rc" -ne 0 ]; then
		fail "testpmd $1 exit $rc"
		tail -5 "$WORK/$1.log" | sed 's/^/    /'
	fi
}
