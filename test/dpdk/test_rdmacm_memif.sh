#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Unmodified rdma_cm programs through the drop-ins (librdmacm.so.1 and
# libibverbs.so.1, started with uroce-run) between two uroced joined by memif
# (--no-huge, one worker each): every connection goes through both daemons'
# QP1 and connection managers and the DPDK port. Servers on daemon A
# (198.18.3.1), clients on daemon B (198.18.3.2). B's CM gives up on a REQ
# quickly (cm_response_timeout 14, cm_max_retries 3: about 2.5 s).
#   Expect: rping -V (100 pings, data checked), ucmatose with 4 connections x
#           10 messages, udaddy (UD, SIDR) with 2, rdma_server/rdma_client,
#           ib_write_bw -R, ib_send_lat -R, ib_read_bw -R, qperf -cm1 rc_bw
#           rc_lat (in a namespace of its own, whose loopback carries
#           198.18.3.1 for qperf's TCP control connection): both sides exit 0.
#   Expect: inside one daemon (server and client both clients of A, the
#           connection looped back by A's port): rping -V (100 pings) and
#           ucmatose with 4 connections x 10 messages.
#   Expect: ucmatose to a port nobody listens on: RDMA_CM_EVENT_REJECTED,
#           error 8 (invalid service ID).
#   Expect: with A's uroced stopped (SIGSTOP) mid-handshake, the client's REQ
#           is retried, then RDMA_CM_EVENT_UNREACHABLE (B's cm_req_retries
#           and cm_req_timeouts grow); after SIGCONT A works again.
#   Expect: DREQs were sent and answered in both directions (cm_dreq_sent
#           and cm_drep_rcvd on A and on B).
#   Expect: 64 ucmatose connections at once, 5 rounds of 16 set up and torn
#           down; at the end, with every program gone, both daemons hold no
#           rdma_cm id, no CM connection (after time wait), QP, MR or PD.
# A missing tool (rdmacm-utils, perftest, qperf) skips only its checks.
. "$(dirname "$0")/lib.sh"
# shellcheck source=../common/rping_race.sh
. "$(dirname "$0")/../common/rping_race.sh"

require_dropin
[ "${HAVE_RDMACM_DROPIN:-0}" = 1 ] ||
	skip "drivers/rdmacm is not built (librdmacm-dev missing)"
require_cmd rping rdmacm-utils
require_eal
have() { command -v "$1" >/dev/null 2>&1; }

MEMIF="$WORK/memif.sock"
PA="uroce-cm-a-$$"
PB="uroce-cm-b-$$"
PREFIXES+=("$PA" "$PB")
A_SOCK="$WORK/a.sock"
B_SOCK="$WORK/b.sock"
A_IP=198.18.3.1

memif_conf a 10
memif_conf b 10
# B's CM: REQs time out after about 0.6 s, 3 retries.
sed -i 's/^\[limits\]/cm_response_timeout = 14\ncm_max_retries = 3\n[limits]/' "$WORK/b.conf"
start_memif_pair

QNS="ur-cm-q-$$"
TMO=$(bound 90)

# pair NAME -- SERVER_CMD... -- CLIENT_CMD...: the server through A, then the
# client through B (again while it is rejected with error 8: the server did
# not listen yet); pass when both exit 0.
pair() {
	local name="$1" srv=() cli=() spid rc_c rc_s try
	shift 2
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	timeout "$TMO" env UROCE_SOCKET="$A_SOCK" "$UROCE_RUN" "${srv[@]}" \
		>"$WORK/$name.srv" 2>&1 &
	spid=$!
	for try in $(seq 20); do
		sleep 0.5
		timeout "$TMO" env UROCE_SOCKET="$CLI_SOCK" "$UROCE_RUN" "${cli[@]}" \
			>"$WORK/$name.cli" 2>&1
		rc_c=$?
		grep -qiE "REJECTED, error:? 8|failed to connect|Connection refused" \
			"$WORK/$name.cli" || break
	done
	wait "$spid"
	rc_s=$?
	[ "$rc_c" -eq 0 ] && [ "$rc_s" -eq 0 ] && return 0
	if [ "${srv[0]}" = rping ] && rping_teardown_race "$rc_c" "$rc_s" "$WORK/$name.srv"; then
		log "$name: $RPING_RACE_SAID"
		return 0
	fi
	fail "$name: ${cli[*]}: client exit $rc_c, server exit $rc_s"
	tail -n 6 "$WORK/$name.cli" "$WORK/$name.srv" | sed 's/^/    /'
	return 1
}

cm() { tel_num "$1" /uroce/cm "$2"; }

CLI_SOCK=$B_SOCK  # pair's clients: on daemon B, unless a case says otherwise

pair rping -- rping -s -a $A_IP -p 7001 -C 100 -V -- rping -c -a $A_IP -p 7001 -C 100 -V -v &&
	[ "$(grep -c '^ping data: rdma-ping-' "$WORK/rping.cli")" -eq 100 ] &&
	pass "rping -V: 100 pings checked"
pair ucmatose -- ucmatose -p 7002 -c 4 -C 10 -- ucmatose -s $A_IP -p 7002 -c 4 -C 10 &&
	pass "ucmatose: 4 connections x 10 messages"
pair udaddy -- udaddy -c 2 -C 10 -- udaddy -s $A_IP -c 2 -C 10 &&
	pass "udaddy (UD over SIDR): 2 endpoints x 10 messages"
CLI_SOCK=$A_SOCK
pair rping_one -- rping -s -a $A_IP -p 7006 -C 100 -V -- rping -c -a $A_IP -p 7006 -C 100 -V -v &&
	[ "$(grep -c '^ping data: rdma-ping-' "$WORK/rping_one.cli")" -eq 100 ] &&
	pass "rping -V inside daemon A: 100 pings checked"
pair ucmatose_one -- ucmatose -p 7007 -c 4 -C 10 -- ucmatose -s $A_IP -p 7007 -c 4 -C 10 &&
	pass "ucmatose inside daemon A: 4 connections x 10 messages"
CLI_SOCK=$B_SOCK
if have rdma_server; then
	pair rdma_cs -- rdma_server -p 7003 -- rdma_client -s $A_IP -p 7003 &&
		grep -q "rdma_client: end 0" "$WORK/rdma_cs.cli" &&
		grep -q "rdma_server: end 0" "$WORK/rdma_cs.srv" &&
		pass "rdma_server / rdma_client: end 0 on both"
fi
if have ib_write_bw; then
	p=7010
	for t in ib_write_bw ib_send_lat ib_read_bw; do
		p=$((p + 1))
		pair "$t" -- "$t" -R -n 200 -p $p -- "$t" -R -n 200 -p $p $A_IP &&
			grep -q "#bytes" "$WORK/$t.cli" &&
			pass "$t -R: $(grep -A1 '#bytes' "$WORK/$t.cli" | tail -1 | awk '{print $1 " B x " $2}')"
	done
else
	log "SKIP perftest -R: perftest not installed"
fi
if have qperf; then
	# qperf's control connection is TCP to the server's address: give it
	# A's address on the loopback of a namespace of its own, where both run.
	ip netns add "$QNS" && NETNS+=("$QNS") &&
		ip -n "$QNS" link set lo up && ip -n "$QNS" addr add $A_IP/32 dev lo ||
		fail "namespace $QNS for qperf"
	# qperf's server never exits: it is stopped after the client.
	ip netns exec "$QNS" env UROCE_SOCKET="$A_SOCK" "$UROCE_RUN" qperf -lp 19765 \
		>"$WORK/qperf.srv" 2>&1 &
	qpid=$!
	PIDS+=("$qpid")
	sleep 1
	timeout "$TMO" ip netns exec "$QNS" env UROCE_SOCKET="$B_SOCK" "$UROCE_RUN" \
		qperf -lp 19765 -cm1 -t 2 $A_IP rc_bw rc_lat >"$WORK/qperf.cli" 2>&1
	rc=$?
	kill "$qpid" 2>/dev/null
	wait "$qpid" 2>/dev/null
	if [ "$rc" -eq 0 ] && grep -q "bw  *=" "$WORK/qperf.cli" &&
		grep -q "latency  *=" "$WORK/qperf.cli" && ! grep -q failed "$WORK/qperf.cli"; then
		pass "qperf -cm1 rc_bw rc_lat: $(grep -E 'bw  *=|latency  *=' "$WORK/qperf.cli" |
			tr -s ' ' | tr '\n' ' ')"
	else
		fail "qperf -cm1 (exit $rc):"
		sed 's/^/    /' "$WORK/qperf.cli" "$WORK/qperf.srv" | head -20
	fi
else
	log "SKIP qperf -cm1: qperf not installed"
fi

# --- REJ: nobody listens -------------------------------------------------------
timeout "$TMO" env UROCE_SOCKET="$B_SOCK" "$UROCE_RUN" ucmatose -s $A_IP -p 7099 \
	>"$WORK/rej.cli" 2>&1
grep -q "RDMA_CM_EVENT_REJECTED, error: 8" "$WORK/rej.cli" &&
	pass "no listener: RDMA_CM_EVENT_REJECTED, error 8 (invalid service ID)" ||
	{ fail "no listener:"; sed 's/^/    /' "$WORK/rej.cli"; }

# --- the peer vanishes mid-handshake --------------------------------------------
r0=$(cm "$PB" cm_req_retries)
t0=$(cm "$PB" cm_req_timeouts)
kill -STOP "$PID_A"
timeout "$TMO" env UROCE_SOCKET="$B_SOCK" "$UROCE_RUN" ucmatose -s $A_IP -p 7098 -c 1 \
	>"$WORK/vanish.cli" 2>&1
kill -CONT "$PID_A"
# Telemetry is a snapshot, refreshed every second while the workers idle.
req_timed_out() { [ "$(cm "$PB" cm_req_timeouts)" -gt "$t0" ] 2>/dev/null; }
wait_until 10 req_timed_out
r1=$(cm "$PB" cm_req_retries)
t1=$(cm "$PB" cm_req_timeouts)
if grep -q "RDMA_CM_EVENT_UNREACHABLE" "$WORK/vanish.cli" && [ "$((r1 - r0))" -ge 3 ] &&
	[ "$((t1 - t0))" -ge 1 ]; then
	pass "A stopped: REQ retried $((r1 - r0)) times, then RDMA_CM_EVENT_UNREACHABLE"
else
	fail "A stopped: retries $r0 -> $r1, timeouts $t0 -> $t1; client:"
	sed 's/^/    /' "$WORK/vanish.cli"
fi
pair after_cont -- ucmatose -p 7004 -c 2 -C 2 -- ucmatose -s $A_IP -p 7004 -c 2 -C 2 &&
	pass "A continued: ucmatose connects again"

# --- many connections ------------------------------------------------------------
pair many -- ucmatose -p 7005 -c 64 -C 1 -- ucmatose -s $A_IP -p 7005 -c 64 -C 1 &&
	pass "64 ucmatose connections at once"
ok=0
for round in 1 2 3 4 5; do
	pair "round$round" -- ucmatose -p $((7100 + round)) -c 16 -C 1 -- \
		ucmatose -s $A_IP -p $((7100 + round)) -c 16 -C 1 && ok=$((ok + 1))
done
[ "$ok" = 5 ] && pass "5 rounds of 16 connections set up and torn down"

# --- DREQ both ways, nothing left over ----------------------------------------------
for side in "$PA" "$PB"; do
	ds=$(cm "$side" cm_dreq_sent)
	dr=$(cm "$side" cm_drep_rcvd)
	[ "${ds:-0}" -ge 1 ] && [ "${dr:-0}" -ge 1 ] &&
		pass "${side%-*}: $ds DREQs sent, $dr DREPs received" ||
		fail "${side%-*}: DREQs sent ${ds:-?}, DREPs received ${dr:-?}"
done
left() { # left PREFIX: "rdma_ids cm_ids qps mrs pds"
	echo "$(cm "$1" cm_rdma_ids) $(cm "$1" cm_ids) $(dstat "$1" qps) $(dstat "$1" mrs)" \
		"$(dstat "$1" pds)"
}
nothing_left() { [ "$(left "$PA")" = "0 0 0 0 0" ] && [ "$(left "$PB")" = "0 0 0 0 0" ]; }
if wait_until 60 nothing_left; then
	pass "nothing left over on A or B (rdma_cm ids, CM ids, QPs, MRs, PDs)"
else
	fail "left over (rdma_ids cm_ids qps mrs pds): A $(left "$PA"), B $(left "$PB")"
fi
log "A /uroce/cm: $(tel "$PA" /uroce/cm | head -c 600)"
stop_uroced "$PID_B" b
stop_uroced "$PID_A" a
finish
