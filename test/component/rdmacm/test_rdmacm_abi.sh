#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# The drop-in librdmacm.so.1 (drivers/rdmacm) as the loader and unmodified
# rdma_cm programs see it, without DPDK or root: the daemons are the two
# cores of `uroced_lite --pair` (A ::ffff:198.18.0.1, B ::ffff:198.18.0.2,
# joined by the simulated wire), so every connection goes through both
# daemons' QP1, their connection managers and the wire as between two hosts.
# Servers run on B, clients on A, unless said otherwise.
#   Expect: the drop-in exports exactly the default-version symbols of the
#           installed librdmacm.so.1, with the same version nodes.
#   Expect: with no daemon, rdma_client's rdma_create_ep fails "No such
#           device" (ENODEV).
#   Expect: rping -V (data checked) both ways, ucmatose with 4 connections,
#           udaddy (UD, SIDR) with 2, rdma_server/rdma_client (rdma_create_ep,
#           synchronous ids, static buffers), ib_write_bw -R, ib_send_lat -R,
#           ib_read_bw -R: both sides exit 0 (perftest prints its table).
#   Expect: rdma_create_id with an unknown port space fails EINVAL (udaddy
#           -p 7174: its -p is the port space).
#   Expect: 64 ucmatose connections at once, both sides exit 0 (each
#           registers a 100-byte malloc'ed buffer: re-backed pages grow).
#   Expect: ucmatose to a port nobody listens on: RDMA_CM_EVENT_REJECTED,
#           error 8 (invalid service ID), exit status 8.
#   Expect: rstream (rsockets, not implemented): "rsocket failed: Address
#           family not supported by protocol".
# A missing tool (rdmacm-utils, perftest) skips only its checks; the test
# exits 77 if the drop-ins or uroced_lite are not built.
TAG=test_rdmacm_abi
. "$(dirname "$0")/../dropin_lib.sh"
# shellcheck source=../../common/rping_race.sh
. "$(dirname "$0")/../../common/rping_race.sh"

# --- the ABI -----------------------------------------------------------------
dropin_abi librdmacm.so.1

HAVE_UTILS=1
have rping && have ucmatose && have udaddy && have rdma_server || {
	HAVE_UTILS=0
	note "SKIP rdmacm-utils checks: rping/ucmatose/udaddy/rdma_server not installed"
}

# --- no daemon ---------------------------------------------------------------
if [ "$HAVE_UTILS" = 1 ]; then
	out=$(UROCE_SOCKET="$WORK/none.sock" timeout 20 "$UROCE_RUN" rdma_client -s 198.18.0.2 2>&1)
	echo "$out" | grep -q "rdma_create_ep: No such device" &&
		pass "no daemon: rdma_create_ep fails with ENODEV" || fail "no daemon: $out"
fi

# --- on uroced_lite --pair ---------------------------------------------------
A="$WORK/a.sock"
B="$WORK/b.sock"
"$UROCED_LITE" --pair "$A" "$B" >"$WORK/lite.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do [ -S "$A" ] && [ -S "$B" ] && break; sleep 0.1; done
[ -S "$A" ] && [ -S "$B" ] || { fail "uroced_lite did not start"; exit 1; }

PORT=$((20000 + $$ % 5000))
TMO=120
# pair NAME SRV_SOCK CLI_SOCK SERVER_CMD... -- CLIENT_CMD...: the server,
# then the client (again while it is rejected with error 8: the server did
# not listen yet); pass when both exit 0. Logs: $WORK/NAME.{srv,cli}.
pair() {
	local name="$1" ss="$2" cs="$3" srv=() cli=() spid rc_c rc_s try
	shift 3
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	timeout $TMO env UROCE_SOCKET="$ss" "$UROCE_RUN" "${srv[@]}" >"$WORK/$name.srv" 2>&1 &
	spid=$!
	for try in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.5
		timeout $TMO env UROCE_SOCKET="$cs" "$UROCE_RUN" "${cli[@]}" >"$WORK/$name.cli" 2>&1
		rc_c=$?
		# Rejected with reason 8: the server did not listen yet (a loaded
		# host); perftest says so as "Unexpected CM event bl blka 8".
		grep -qiE "REJECTED, error:? 8|Unexpected CM event bl blka 8" "$WORK/$name.cli" || break
	done
	wait "$spid"
	rc_s=$?
	if [ "$rc_c" -eq 0 ] && [ "$rc_s" -eq 0 ]; then
		return 0
	fi
	if [ "${srv[0]}" = rping ] && rping_teardown_race "$rc_c" "$rc_s" "$WORK/$name.srv"; then
		printf "%s: %s\n" "$TAG" "$name: $RPING_RACE_SAID"
		return 0
	fi
	fail "$name: ${cli[*]}: client exit $rc_c, server exit $rc_s"
	tail -n 6 "$WORK/$name.cli" "$WORK/$name.srv" | sed 's/^/    /'
	return 1
}
next() { PORT=$((PORT + 1)); }

if [ "$HAVE_UTILS" = 1 ]; then
	next
	pair rping "$B" "$A" rping -s -a 198.18.0.2 -p $PORT -C 10 -V -- \
		rping -c -a 198.18.0.2 -p $PORT -C 10 -V -v &&
		[ "$(grep -c '^ping data: rdma-ping-' "$WORK/rping.cli")" -eq 10 ] &&
		pass "rping -V, 10 pings checked (server on B, client on A)"
	next
	pair rping_ba "$A" "$B" rping -s -a 198.18.0.1 -p $PORT -C 10 -V -- \
		rping -c -a 198.18.0.1 -p $PORT -C 10 -V &&
		pass "rping -V, 10 pings (server on A, client on B)"
	next
	pair ucmatose "$B" "$A" ucmatose -p $PORT -c 4 -C 10 -- \
		ucmatose -s 198.18.0.2 -p $PORT -c 4 -C 10 &&
		pass "ucmatose, 4 connections x 10 messages: $(grep -c 'disconnecting' "$WORK/ucmatose.cli") disconnect round(s)"
	# udaddy has no port option (its -p is the port space): port 7174.
	pair udaddy "$B" "$A" udaddy -c 2 -C 10 -- udaddy -s 198.18.0.2 -c 2 -C 10 &&
		pass "udaddy (UD over SIDR), 2 endpoints x 10 messages"
	out=$(UROCE_SOCKET="$B" timeout 20 "$UROCE_RUN" udaddy -p 7174 2>&1)
	echo "$out" | grep -q "listen request failed: Invalid argument" &&
		pass "udaddy -p 7174 (not a port space): rdma_create_id fails EINVAL" ||
		fail "udaddy with a bad port space: $out"
	next
	pair rdma_cs "$B" "$A" rdma_server -p $PORT -- rdma_client -s 198.18.0.2 -p $PORT &&
		grep -q "rdma_client: end 0" "$WORK/rdma_cs.cli" &&
		grep -q "rdma_server: end 0" "$WORK/rdma_cs.srv" &&
		pass "rdma_server / rdma_client: end 0 on both"
	next
	pair many "$B" "$A" ucmatose -p $PORT -c 64 -C 1 -- \
		ucmatose -s 198.18.0.2 -p $PORT -c 64 -C 1 &&
		pass "64 ucmatose connections at once"

	next
	timeout $TMO env UROCE_SOCKET="$A" "$UROCE_RUN" ucmatose -s 198.18.0.2 -p $PORT \
		>"$WORK/rej.cli" 2>&1
	rc=$?
	grep -q "RDMA_CM_EVENT_REJECTED, error: 8" "$WORK/rej.cli" && [ "$rc" -eq 8 ] &&
		pass "no listener: REJECTED, error 8 (invalid service ID), exit 8" ||
		{ fail "no listener (exit $rc):"; sed 's/^/    /' "$WORK/rej.cli"; }
fi
if have rstream; then
	out=$(UROCE_SOCKET="$A" timeout 20 "$UROCE_RUN" rstream -s 198.18.0.2 2>&1)
	echo "$out" | grep -q "rsocket failed: Address family not supported" &&
		pass "rsockets: rstream fails with EAFNOSUPPORT" || fail "rstream: $out"
fi
if have ib_write_bw; then
	for t in ib_write_bw ib_send_lat ib_read_bw; do
		next
		pair "$t" "$B" "$A" "$t" -R -n 200 -p $PORT -- "$t" -R -n 200 -p $PORT 198.18.0.2 &&
			grep -q "#bytes" "$WORK/$t.cli" &&
			pass "$t -R: $(grep -A1 '#bytes' "$WORK/$t.cli" | tail -1 | awk '{print $1 " B x " $2}')"
	done
else
	note "SKIP perftest -R: perftest not installed"
fi

if [ "$FAILS" -ne 0 ]; then
	note "$FAILS check(s) failed"
	exit 1
fi
note "all checks passed"
