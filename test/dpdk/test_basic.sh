#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# uroced with no ports and no hugepages (--no-huge): it starts, answers
# telemetry, refuses a second instance on the same socket or file prefix with
# a clear message, stops cleanly on SIGTERM; `--check` reports (a live
# daemon's socket as in use, a stale one as stale); it makes its socket's
# directory (0755) or says why it cannot; and every bad
# configuration gives exactly one line naming the key and the problem, and a
# non-zero exit.
. "$(dirname "$0")/lib.sh"

require_root
require_uroced
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd timeout coreutils
require_eal

P="uroce-basic-$$"
PREFIXES+=("$P" "$P-2" "$P-3" "$P-4")
SOCK="$WORK/ctl.sock"
EAL=(--no-huge -m 64 -l 0,1)

# --- no ports, no hugepages: starts and serves telemetry -------------------
if start_uroced d1 - "${EAL[@]}" --file-prefix "$P" --socket "$SOCK"; then
	pid1=$LAST_PID
	pass "uroced started with no ports: $(grep '^uroced: ready' "$WORK/d1.log")"
	info=$(tel "$P" /uroce/info)
	if echo "$info" | grep -q '"ports": 0' && echo "$info" | grep -q '"workers": 1'; then
		pass "telemetry /uroce/info: $info"
	else
		fail "telemetry /uroce/info gave: '$info'"
	fi
	[ -S "$SOCK" ] && pass "control socket $SOCK exists" || fail "no control socket at $SOCK"

	# A second daemon on the same socket: refused, and says why.
	out=$(timeout "$READY_S" "$UROCED" "${EAL[@]}" --file-prefix "$P-2" --socket "$SOCK" 2>&1)
	rc=$?
	want="uroced: control socket $SOCK: address already in use: another uroced is running (stop it, or give this one --socket and --file-prefix of its own)"
	if [ $rc -ne 0 ] && echo "$out" | grep -qxF "$want"; then
		pass "second daemon on the same socket: exit $rc, '$want'"
	else
		fail "second daemon on the same socket: exit $rc, output: $out"
	fi

	# --check against the live daemon's socket: FAIL, not "stale" (issue 21.2:
	# the probe must use the daemon's SOCK_SEQPACKET).
	out=$(timeout 30 "$UROCED" "${EAL[@]}" --file-prefix "$P-3" --socket "$SOCK" --check 2>/dev/null)
	rc=$?
	want="FAIL  socket $SOCK: address already in use: another uroced listens there; stop it or choose another [daemon] socket"
	if [ $rc -ne 0 ] && echo "$out" | grep -qxF "$want" && echo "$out" | grep -q '^FAIL: 1 problem(s)'; then
		pass "--check against a live daemon: exit $rc, '$want'"
	else
		fail "--check against a live daemon: exit $rc, output: $out"
	fi

	# A second daemon with the same file prefix: refused before EAL starts.
	out=$(timeout "$READY_S" "$UROCED" "${EAL[@]}" --file-prefix "$P" --socket "$WORK/other.sock" 2>&1)
	rc=$?
	want="uroced: file prefix \"$P\" is in use by another DPDK process (pid $pid1): give each daemon its own --file-prefix"
	if [ $rc -ne 0 ] && [ "$out" = "$want" ]; then
		pass "second daemon with the same file prefix: exit $rc, '$want'"
	else
		fail "second daemon with the same file prefix: exit $rc, output: $out"
	fi

	stop_uroced "$pid1" d1
	[ -e "$SOCK" ] && fail "control socket left behind after SIGTERM" ||
		pass "control socket removed on shutdown"
fi

# --- a stale socket file (its daemon died) is replaced; SIGINT stops ---------
/usr/bin/python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$SOCK"
[ -S "$SOCK" ] || fail "could not create a stale socket at $SOCK"
out=$(timeout "$READY_S" "$UROCED" "${EAL[@]}" --file-prefix "$P" --socket "$SOCK" --check 2>/dev/null)
echo "$out" | grep -qxF "WARN  socket $SOCK: stale socket file (nobody listens); uroced will replace it" &&
	pass "--check warns about the stale socket" || fail "--check on a stale socket: $out"
if start_uroced d2 - "${EAL[@]}" --file-prefix "$P" --socket "$SOCK"; then
	pid2=$LAST_PID
	unset "UP[d2]" # stopped on purpose
	kill -INT "$pid2"
	wait_until "$STOP_S" gone "$pid2" || kill -KILL "$pid2"
	wait "$pid2"
	rc=$?
	if [ $rc -eq 0 ] && grep -q '^uroced: signal 2: stopping' "$WORK/d2.log"; then
		pass "started over a stale socket file; SIGINT: clean stop (exit 0)"
	else
		fail "SIGINT: exit $rc; $(tail -2 "$WORK/d2.log")"
	fi
fi

# --- the socket's directory: made if missing (0755), refused with a reason ----
NEWDIR="$WORK/run/uroce"
out=$(timeout 30 "$UROCED" "${EAL[@]}" --file-prefix "$P-4" --socket "$NEWDIR/d.sock" --check 2>/dev/null)
echo "$out" | grep -qxF "OK    socket $NEWDIR/d.sock: directory $NEWDIR does not exist; uroced creates it (mode 0755)" &&
	[ ! -e "$WORK/run" ] && pass "--check: a missing socket directory is OK (uroced creates it), and --check creates nothing" ||
	fail "--check with a missing socket directory: $out"
if start_uroced d3 - "${EAL[@]}" --file-prefix "$P-4" --socket "$NEWDIR/d.sock"; then
	m=$(stat -c '%a %U' "$WORK/run" "$NEWDIR" | tr '\n' ' ')
	[ -S "$NEWDIR/d.sock" ] && [ "$m" = "755 root 755 root " ] &&
		pass "uroced made its socket directory: $WORK/run and $NEWDIR are '$m'" ||
		fail "socket directory: '$m', socket $(ls -l "$NEWDIR" 2>&1)"
	stop_uroced "$LAST_PID" d3
fi
: >"$WORK/plainfile"
out=$(timeout 20 "$UROCED" "${EAL[@]}" --file-prefix "$P-4" --socket "$WORK/plainfile/d.sock" 2>&1)
rc=$?
want="uroced: control socket $WORK/plainfile/d.sock: cannot create its directory $WORK/plainfile: Not a directory (something that is not a directory is in the way; choose another --socket)"
[ $rc -ne 0 ] && echo "$out" | grep -qxF "$want" && pass "an uncreatable socket directory: exit $rc, '$want'" ||
	fail "an uncreatable socket directory: exit $rc, output: $out"

# --- issue 21.8: a prefix after -- is the one shown; too many CPUs: one line --
if start_uroced d4 - --no-huge -m 64 -l 0,1 --socket "$WORK/d4.sock" -- --file-prefix "$P-4"; then
	grep -qxF "uroced: ready: 0 port(s), 1 worker(s), socket $WORK/d4.sock, file prefix $P-4" "$WORK/d4.log" &&
		tel "$P-4" /uroce/info | grep -q '"ports": 0' &&
		pass "--file-prefix after --: the ready line and telemetry use $P-4" ||
		fail "--file-prefix after --: $(grep '^uroced: ready' "$WORK/d4.log"); telemetry: $(tel "$P-4" /uroce/info)"
	stop_uroced "$LAST_PID" d4
fi
n=$(nproc)
out=$(timeout 20 "$UROCED" --no-huge -m 64 -l "0-$n" --file-prefix "$P-4" --socket "$WORK/d5.sock" 2>&1)
rc=$?
[ $rc -ne 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
	echo "$out" | grep -q "^uroced: lcores \"0-$n\": CPU [0-9]* does not exist or is not this process's to use" &&
	pass "-l 0-$n on $n CPUs: exit $rc, one line: $out" ||
	fail "-l 0-$n on $n CPUs: exit $rc, $(printf '%s\n' "$out" | wc -l) lines: $(printf '%s\n' "$out" | head -5)"
# Any other bad EAL argument: EAL's reason on stderr, no usage text.
out=$(timeout 20 "$UROCED" --no-huge -m 64 -l 0 --file-prefix "$P-4" --socket "$WORK/d5.sock" -- --no-such-eal-option 2>&1)
rc=$?
[ $rc -ne 0 ] && ! echo "$out" | grep -q "EAL common options" &&
	echo "$out" | grep -q "^uroced: EAL init failed" &&
	pass "a bad EAL argument: exit $rc, $(printf '%s\n' "$out" | wc -l) lines, no usage text" ||
	fail "a bad EAL argument: exit $rc: $(printf '%s\n' "$out" | head -12)"

# --- --check ------------------------------------------------------------------
out=$(timeout "$READY_S" "$UROCED" "${EAL[@]}" --file-prefix "$P" --socket "$SOCK" --check 2>/dev/null)
rc=$?
echo "$out" | sed 's/^/    /'
if [ $rc -eq 0 ] && echo "$out" | grep -q '^OK    memory: --no-huge' &&
   echo "$out" | grep -q '^WARN  no \[port\.\*\] section' && echo "$out" | grep -q '^PASS: 0 problem(s)'; then
	pass "--check with no ports: exit 0"
else
	fail "--check with no ports: exit $rc"
fi

cat >"$WORK/missing.conf" <<EOF
[eal]
no_huge = yes
memory = 64
lcores = 0,1
file_prefix = $P
[daemon]
socket = $SOCK
[port.0]
device = net_ring9
ipv4 = 198.18.5.1/24
EOF
out=$(timeout "$READY_S" "$UROCED" -c "$WORK/missing.conf" --check 2>/dev/null)
rc=$?
echo "$out" | sed 's/^/    /'
if [ $rc -ne 0 ] && echo "$out" | grep -q '^FAIL  \[port.0\] device "net_ring9": port not found' &&
   echo "$out" | grep -q '^FAIL: 1 problem(s)'; then
	pass "--check with a missing device: exit $rc, FAIL line names the port"
else
	fail "--check with a missing device: exit $rc"
fi

cat >"$WORK/ring.conf" <<EOF
[eal]
no_huge = yes
memory = 64
lcores = 0,1
file_prefix = $P
[daemon]
socket = $SOCK
[port.r]
vdev = net_ring0
ipv4 = 198.18.5.1/24
ipv6 = 2001:2::5:1/64
mac = 02:00:c6:12:05:01
EOF
out=$(timeout "$READY_S" "$UROCED" -c "$WORK/ring.conf" --check 2>/dev/null)
rc=$?
echo "$out" | sed 's/^/    /'
if [ $rc -eq 0 ] &&
   echo "$out" | grep -qxF 'OK    [port.r] gid 0 fe80::c6ff:fe12:501 (link-local, EUI-64 of the MAC)' &&
   echo "$out" | grep -qxF 'OK    [port.r] gid 1 ::ffff:198.18.5.1' &&
   echo "$out" | grep -qxF 'OK    [port.r] gid 2 2001:2::5:1'; then
	pass "--check on net_ring: GIDs 0 (EUI-64 link-local), 1 (IPv4-mapped), 2 (IPv6)"
else
	fail "--check on net_ring: exit $rc or GID lines wrong"
fi

# --- bad configurations: one line each, non-zero exit ------------------------
# Each case: the config text, then the exact expected line (@F@ = the file).
bad_case() {
	local text="$1" want="$2" f="$WORK/bad.conf" out rc
	printf '%b' "$text" >"$f"
	out=$(timeout "$READY_S" "$UROCED" --no-huge -c "$f" 2>&1)
	rc=$?
	want=${want//@F@/$f}
	if [ $rc -ne 0 ] && [ "$out" = "$want" ]; then
		pass "bad config -> exit $rc: $out"
	else
		fail "bad config: want exit!=0 and '$want'; got exit $rc and '$out'"
	fi
}
PORT='[port.0]\ndevice = net_ring0\n'
bad_case "${PORT}ipv4 = 198.18.1.2/24\nmtuu = 1500\n" \
	'uroced: @F@: [port.0] mtuu: unknown key (known: device, vdev, ipv4, ipv6, mac, vlan, pcp, mtu, dscp, ecn, neighbor, fault_drop, fault_dup, fault_reorder, fault_corrupt, fault_dir, fault_seed, fault_ce, and the congestion control keys of doc/congestion.md)'
bad_case "${PORT}ipv4 = 198.18.1.300/24\n" \
	'uroced: @F@: [port.0] ipv4 = "198.18.1.300/24": expected an IPv4 address with prefix, e.g. 198.18.1.2/24'
bad_case "${PORT}ipv4 = 224.0.0.1/24\n" \
	'uroced: @F@: [port.0] ipv4 = "224.0.0.1/24": not a unicast address (0/8, 127/8, multicast and class E are refused); expected an IPv4 address with prefix, e.g. 198.18.1.2/24'
bad_case "${PORT}ipv6 = fe80::1/64\n" \
	'uroced: @F@: [port.0] ipv6 = "fe80::1/64": the link-local address is derived from the MAC (GID index 0); configure a global address here; expected a global IPv6 address with prefix, e.g. 2001:2::2/64'
bad_case "${PORT}ipv4 = 198.18.1.2/24\nmac = 03:00:00:00:00:01\n" \
	'uroced: @F@: [port.0] mac = "03:00:00:00:00:01": not a unicast MAC address; expected a unicast MAC such as 02:00:00:00:00:01'
bad_case "${PORT}ipv4 = 198.18.1.2/24\nvlan = 4095\n" \
	'uroced: @F@: [port.0] vlan = "4095": expected a VLAN id 1..4094'
bad_case "${PORT}ipv4 = 198.18.1.2/24\nmtu = 100\n" \
	'uroced: @F@: [port.0] mtu = "100": expected 576..9600'
bad_case "${PORT}ipv6 = 2001:2::2/64\nmtu = 1000\n" \
	'uroced: @F@: [port.0] mtu: 1000 is below 1280, the IPv6 minimum (RFC 8200)'
bad_case "${PORT}ipv4 = 198.18.1.2/24\nrpg_time_reset = 0\n" \
	'uroced: @F@: [port.0] rpg_time_reset = "0": expected 1..131071 (us): rate increase timer'
bad_case "${PORT}ipv4 = 198.18.1.2/24\nfault_ce = 0.5\nfault_dir = tx\n" \
	'uroced: @F@: [port.0] fault_ce: marks received frames, but fault_dir = tx leaves out the received ones (use rx or both)'
bad_case "${PORT}ipv4 = 198.18.1.2/24\nneighbor = 198.18.1.1\n" \
	'uroced: @F@: [port.0] neighbor = "198.18.1.1": expected "IP MAC", e.g. 198.18.1.1 02:00:00:00:00:01'
bad_case "${PORT}ipv6 = 2001:2::2/64\nneighbor = 198.18.1.1 02:00:00:00:00:01\n" \
	'uroced: @F@: [port.0] neighbor = "198.18.1.1": IPv4 neighbour on a port with no ipv4 address'
bad_case "${PORT}" \
	'uroced: @F@: [port.0] ipv4: missing: a port needs ipv4 and/or ipv6'
bad_case '[port.0]\nipv4 = 198.18.1.2/24\n' \
	'uroced: @F@: [port.0] device: missing: give device = <ethdev name> or vdev = <vdev argument>'
bad_case "${PORT}ipv4 = 198.18.1.2/24\n[port.1]\ndevice = net_ring0\nipv4 = 198.18.2.2/24\n" \
	'uroced: @F@: [port.1] device = "net_ring0": already used by [port.0]'
bad_case '[ports]\ndevice = x\n' \
	'uroced: @F@: [ports]: unknown section (known: eal, daemon, limits, port.<name>)'
bad_case '[eal]\nno_huge = maybe\n' \
	'uroced: @F@: [eal] no_huge = "maybe": expected yes or no'
bad_case '[eal]\nlcores = 0,1\n[eal]\nmemory = 64\n' \
	'uroced: @F@: [eal]: section given twice'
bad_case '[daemon]\nsocket = relative.sock\n' \
	'uroced: @F@: [daemon] socket = "relative.sock": expected an absolute path'
bad_case '[limits]\nburst = 0\n' \
	'uroced: @F@: [limits] burst = "0": expected 1..256'
bad_case '[eal]\nlcores 0,1\n' \
	'uroced: @F@: syntax error: line 2: expected '"'"'key = value'"'"' or '"'"'[section]'"'"
bad_case '[eal\nlcores = 0,1\n' \
	'uroced: @F@: syntax error: line 1: section name without '"'"']'"'"
bad_case 'lcores = 0,1\n' \
	'uroced: @F@: syntax error: line 1: key before the first [section]'
bad_case '[eal]\nlcores =\n' \
	'uroced: @F@: syntax error: line 2 - cannot use empty values'

out=$(timeout "$READY_S" "$UROCED" --no-huge -c "$WORK/does-not-exist.conf" 2>&1)
rc=$?
want="uroced: $WORK/does-not-exist.conf: cannot open: No such file or directory"
[ $rc -ne 0 ] && [ "$out" = "$want" ] && pass "missing config file -> exit $rc: $out" ||
	fail "missing config file: exit $rc, '$out'"
out=$(timeout "$READY_S" "$UROCED" --no-huge --memory lots 2>&1)
rc=$?
want='uroced: --memory "lots": expected megabytes, 16..1048576'
[ $rc -ne 0 ] && [ "$out" = "$want" ] && pass "bad option -> exit $rc: $out" ||
	fail "bad option: exit $rc, '$out'"

finish
