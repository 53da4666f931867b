#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# The drop-in libibverbs.so.1 (drivers/verbs) as the loader and unmodified
# programs see it, without DPDK or root: the daemon is uroced_lite (the
# daemon core with its loopback port), so both ends of each program talk to
# one daemon and their packets go through its encapsulation, ICRC and parser.
#   Expect: the drop-in exports exactly the default-version symbols of the
#           installed libibverbs.so.1, and defines the same version nodes
#           with the same parents.
#   Expect: `ib_write_bw --help` loads (libmlx5 and libefa resolve their
#           IBVERBS_PRIVATE imports with BIND_NOW) and exits 0.
#   Expect: with no daemon, ibv_devices lists nothing and ibv_devinfo says
#           "No IB devices found", after one line of the drop-in's naming the
#           socket it tried and why; a bad UROCE_VERBS_VENDOR_ID fails the open
#           with a message.
#   Expect: on uroced_lite: ibv_devinfo shows uroce0 with GID
#           ::ffff:198.18.0.1; ibv_rc_pingpong and ibv_ud_pingpong with -c
#           (data checked), ib_write_bw and ib_read_lat as an unknown device
#           (ibv_wr* API OFF) and as a ConnectX (ON), ib_atomic_bw, and qperf
#           rc_bw and ver_rc_fetch_add (emulated LIDs) all exit 0.
# A missing tool (perftest, ibverbs-utils, qperf) skips only its checks; the
# test exits 77 if the drop-in or uroced_lite is not built.
TAG=test_verbs_abi
. "$(dirname "$0")/../dropin_lib.sh"

# --- the ABI -----------------------------------------------------------------
dropin_abi libibverbs.so.1

if have ib_write_bw; then
	# perftest exits 1 after its usage text; what matters is that it loads.
	"$UROCE_RUN" ib_write_bw --help >"$WORK/help.txt" 2>&1
	grep -q "Usage:" "$WORK/help.txt" && ! grep -qi "symbol lookup error\|version .* not found" \
		"$WORK/help.txt" &&
		pass "ib_write_bw --help loads through the drop-in (libmlx5/libefa BIND_NOW)" ||
		{ fail "ib_write_bw --help:"; head -5 "$WORK/help.txt" | sed 's/^/    /'; }
fi

# --- no daemon ---------------------------------------------------------------
if have ibv_devinfo; then
	out=$(UROCE_SOCKET="$WORK/none.sock" "$UROCE_RUN" ibv_devinfo 2>&1)
	echo "$out" | grep -q "No IB devices found" &&
		pass "no daemon: ibv_devinfo says 'No IB devices found'" || fail "no daemon: $out"
	# ... and the drop-in says first which socket it tried, and why (issue 21.4).
	want="uroce-verbs: no device uroce0: no daemon socket at $WORK/none.sock (No such file or directory); is uroced running with --socket $WORK/none.sock? Set UROCE_SOCKET to its socket"
	[ "$(echo "$out" | grep -c '^uroce-verbs: no device')" -eq 1 ] && echo "$out" | grep -qxF "$want" &&
		pass "no daemon: the drop-in names the socket: '$want'" ||
		fail "no daemon: no line naming the socket: $out"
	: >"$WORK/plain"
	out=$(UROCE_SOCKET="$WORK/plain" "$UROCE_RUN" ibv_devinfo 2>&1)
	echo "$out" | grep -qF "uroce-verbs: no device uroce0: not a socket: $WORK/plain (some other file is there)" &&
		pass "a file that is no socket: named as such" || fail "a file that is no socket: $out"
fi

# --- on uroced_lite --------------------------------------------------------
SOCK="$WORK/lite.sock"
"$UROCED_LITE" "$SOCK" >"$WORK/lite.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || { fail "uroced_lite did not start"; exit 1; }
export UROCE_SOCKET="$SOCK"

if have ibv_devinfo; then
	out=$(UROCE_VERBS_VENDOR_ID=0x2c9x "$UROCE_RUN" ibv_devinfo 2>&1)
	echo "$out" | grep -q "UROCE_VERBS_VENDOR_ID=0x2c9x is not a 32-bit number" &&
		pass "a bad UROCE_VERBS_VENDOR_ID is refused with a message" ||
		fail "bad vendor id: $out"
	"$UROCE_RUN" ibv_devinfo -v >"$WORK/devinfo.txt" 2>&1 &&
		grep -q "hca_id:	uroce0" "$WORK/devinfo.txt" &&
		grep -q "::ffff:198.18.0.1, RoCE v2" "$WORK/devinfo.txt" &&
		grep -q "port_lid:		1" "$WORK/devinfo.txt" &&
		pass "ibv_devinfo -v: uroce0, GID ::ffff:198.18.0.1 RoCE v2, emulated LID 1" ||
		{ fail "ibv_devinfo -v:"; head -20 "$WORK/devinfo.txt" | sed 's/^/    /'; }
fi

PORT=$((20000 + $$ % 5000))
# wait_listen PORT PID: until a TCP socket listens on PORT (the server is
# ready), PID exits, or 30 s pass. A fixed nap loses on a loaded host.
wait_listen() {
	local i
	for i in $(seq 300); do
		ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# pair NAME ENV... -- CMD...: server and client (127.0.0.1) on the one daemon.
pair() {
	local name="$1" env=() cmd=() spid rc_c rc_s
	shift
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	cmd=("$@")
	PORT=$((PORT + 1))
	timeout 60 env "${env[@]}" "$UROCE_RUN" "${cmd[@]}" -p $PORT >"$WORK/$name.srv" 2>&1 &
	spid=$!
	wait_listen "$PORT" "$spid"
	timeout 60 env "${env[@]}" "$UROCE_RUN" "${cmd[@]}" -p $PORT 127.0.0.1 >"$WORK/$name.cli" 2>&1
	rc_c=$?
	wait "$spid"
	rc_s=$?
	if [ "$rc_c" -eq 0 ] && [ "$rc_s" -eq 0 ]; then
		return 0
	fi
	fail "$name: ${cmd[*]}: client exit $rc_c, server exit $rc_s"
	tail -n 4 "$WORK/$name.cli" "$WORK/$name.srv" | sed 's/^/    /'
	return 1
}
if have ibv_rc_pingpong; then
	pair rc X=1 -- ibv_rc_pingpong -g 0 -n 100 -s 3000 -c &&
		pass "ibv_rc_pingpong -c: $(tail -1 "$WORK/rc.cli")"
	pair ud X=1 -- ibv_ud_pingpong -g 0 -n 100 -s 512 -c &&
		pass "ibv_ud_pingpong -c: $(tail -1 "$WORK/ud.cli")"
fi
CX="UROCE_VERBS_VENDOR_ID=0x02c9 UROCE_VERBS_VENDOR_PART_ID=4119"
if have ib_write_bw; then
	for t in "write_bw X=1 OFF" "write_bw $CX ON" "read_lat X=1 OFF" "read_lat $CX ON" \
		"atomic_bw X=1 OFF"; do
		set -- $t
		bin=ib_$1
		shift
		want=${!#}
		envs=("${@:1:$#-1}")
		if pair "$bin-$want" "${envs[@]}" -- "$bin" -n 100 -F; then
			api=$(grep -o 'ibv_wr\* API *: [A-Z]*' "$WORK/$bin-$want.cli" | awk '{print $NF}')
			[ "$api" = "$want" ] && grep -q "#bytes" "$WORK/$bin-$want.cli" &&
				pass "$bin (ibv_wr* API $api): $(grep -A1 '#bytes' "$WORK/$bin-$want.cli" | tail -1 | awk '{print $1 " B x " $2}')" ||
				fail "$bin: API '$api', wanted $want"
		fi
	done
fi
if have qperf; then
	PORT=$((PORT + 1))
	"$UROCE_RUN" qperf -lp $PORT >"$WORK/qperf.srv" 2>&1 &
	QP=$!
	PIDS+=("$QP")
	wait_listen "$PORT" "$QP"
	timeout 60 "$UROCE_RUN" qperf -lp $PORT -t 1 127.0.0.1 rc_bw ver_rc_fetch_add \
		>"$WORK/qperf.cli" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] && grep -q "bw *=" "$WORK/qperf.cli" && grep -q "msg_rate *=" "$WORK/qperf.cli" &&
		! grep -q failed "$WORK/qperf.cli" &&
		pass "qperf rc_bw ver_rc_fetch_add by emulated LID: $(grep '=' "$WORK/qperf.cli" | tr -s ' ' | tr '\n' ';')" ||
		{ fail "qperf (exit $rc):"; sed 's/^/    /' "$WORK/qperf.cli"; }
	kill "$QP" 2>/dev/null
fi

if [ "$FAILS" -ne 0 ]; then
	note "$FAILS check(s) failed"
	exit 1
fi
note "all checks passed"
