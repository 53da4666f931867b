#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Unmodified Debian verbs programs on uroce through the drop-in
# libibverbs.so.1 (drivers/verbs, started with uroce-run), between two uroced
# joined by memif (--no-huge, one worker each, idle_sleep_us 10). Servers run
# on daemon A (198.18.3.1), clients on daemon B (198.18.3.2); they meet over
# TCP on 127.0.0.1 as each tool does by default. One GROUP per run, so that a
# missing package skips only its group (exit 77):
#   basic     ibv_devices, ibv_devinfo -v (A alone, and A and B as uroce0 and
#             uroce1); ibv_{rc,uc,ud,srq}_pingpong with -c (the tools check
#             every received byte), on the IPv4 GID and (rc) by LID.
#             Expect: uroce0 with A's node GUID and GID ::ffff:198.18.3.1,
#             PORT_ACTIVE, Ethernet; every pingpong exits 0 on both sides.
#   perftest  ib_{write,read,send,atomic}_{bw,lat}, as perftest sees an
#             unknown vendor (ibv_post_send path, no inline) and as a
#             ConnectX-5 (--as-connectx: ibv_wr_* path, inline); -a sweeps,
#             -q 4, -e (send_bw, read_bw, send_lat), -c UD, -c UC, --use-srq,
#             CMP_AND_SWAP.
#             Expect: both exit codes 0, perftest's result table printed,
#             "ibv_wr* API : OFF" then ON, "Max inline data : 220" for
#             ib_write_lat as a ConnectX.
#   qperf     rc_bw rc_lat uc_bw ud_lat rc_rdma_write_bw rc_rdma_read_bw
#             ver_rc_compare_swap ver_rc_fetch_add (LID addressing, completion
#             events: qperf's default). Expect: a result for every test, no
#             "failed"; the ver_* tests check every atomic's result.
#   ucx       ucx_info -d lists uroce0:1 with rc_verbs and ud_verbs;
#             ucx_perftest over rc_verbs and ud_verbs (UCT level) and with
#             UCX_TLS=rc_verbs,ud_verbs / ud_verbs (UCP tag matching).
#             Expect: both sides exit 0 with a "Final:" line.
#   ucxcm     UCX's sockaddr wire-up through rdma_cm (drivers/rdmacm): ucx_info
#             -d lists the rdmacm connection manager; UCX's io_demo (ucp_listener
#             on A, ucp_ep_create to 198.18.3.1 from B) with
#             UCX_SOCKADDR_TLS_PRIORITY=rdmacm (no TCP fallback) and
#             UCX_TLS=rc_verbs: 200 reads and writes of 1-64 KiB, data checked (-q).
#             Expect: the client exits 0 ("Client exit with status 'OK'"), the
#             server still runs; A received a CM REQ, B sent one and never
#             retried it (rdma_resolve_addr waits for ARP); both daemons wrote
#             completions (the data went over uroce's RC QPs).
#   mpi       Open MPI with the UCX PML, one rank per daemon, UCX_TLS limited
#             to rc_verbs,ud_verbs,self and the vader/tcp BTLs and coll/sm
#             off: verbs_mpi (checked ping-pong, checked allreduce).
#             Expect: exit 0, "verbs_mpi: ok", and both daemons wrote
#             completions (the bytes crossed uroce).
# UCX (and so Open MPI) lists an IB device only if /dev/infiniband/<dev_name>
# is an accessible character device: the ucx and mpi groups create
# /dev/infiniband/uverbs-uroce0 -> /dev/null and remove it afterwards.
. "$(dirname "$0")/lib.sh"

GROUP="${1:-}"
TAG="test_verbs_dropin-$GROUP"
case "$GROUP" in
basic | perftest | qperf | ucx | ucxcm | mpi) ;;
*) echo "usage: $0 basic|perftest|qperf|ucx|ucxcm|mpi" >&2; exit 2 ;;
esac

require_dropin
case "$GROUP" in
basic) require_cmd ibv_devinfo ibverbs-utils; require_cmd ibv_rc_pingpong ibverbs-utils ;;
perftest) require_cmd ib_write_bw perftest ;;
qperf) require_cmd qperf qperf ;;
ucx) require_cmd ucx_perftest ucx-utils; require_cmd ucx_info ucx-utils ;;
ucxcm) require_cmd io_demo ucx-utils; require_cmd ucx_info ucx-utils
	[ "${HAVE_RDMACM_DROPIN:-0}" = 1 ] || skip "drivers/rdmacm is not built (librdmacm-dev missing)" ;;
mpi) require_cmd mpirun openmpi-bin
	[ -n "${VERBS_MPI:-}" ] && [ -x "$VERBS_MPI" ] ||
		skip "VERBS_MPI is not set (verbs_mpi not built: libopenmpi-dev missing)" ;;
esac
require_eal

MEMIF="$WORK/memif.sock"
PA="uroce-dv-a-$$"
PB="uroce-dv-b-$$"
PREFIXES+=("$PA" "$PB")

memif_pair

# The device node UCX looks for (see the header); removed by the EXIT trap.
DEVNODE_MADE=()
make_dev_node() {
	if [ ! -d /dev/infiniband ]; then
		mkdir /dev/infiniband || { fail "mkdir /dev/infiniband"; finish; }
		DEVNODE_MADE+=(/dev/infiniband)
	fi
	if [ ! -e /dev/infiniband/uverbs-uroce0 ]; then
		ln -s /dev/null /dev/infiniband/uverbs-uroce0 ||
			{ fail "ln -s /dev/null /dev/infiniband/uverbs-uroce0"; finish; }
		DEVNODE_MADE=(/dev/infiniband/uverbs-uroce0 "${DEVNODE_MADE[@]}")
	fi
}
dv_cleanup() {
	local p
	for p in "${DEVNODE_MADE[@]}"; do
		if [ -L "$p" ]; then rm -f "$p"; else rmdir "$p" 2>/dev/null; fi
	done
	cleanup
}
trap dv_cleanup EXIT

# on A|B CMD...: run CMD through uroce-run with that daemon as uroce0.
on() {
	local sock
	[ "$1" = A ] && sock=$A_SOCK || sock=$B_SOCK
	shift
	UROCE_SOCKET="$sock" "$UROCE_RUN" "$@"
}

# pair NAME TIMEOUT SERVER_ENV CLIENT_ENV -- CMD...: CMD as a server on A and
# as a client of 127.0.0.1 on B (the last argument), both bounded; pass when
# both exit 0. Logs: $WORK/NAME.srv, $WORK/NAME.cli. Sets PAIR_OK.
pair() {
	local name="$1" tmo="$2" rc_c rc_s try
	shift 2
	for try in 1 2 3; do
		pair_once "$name" "$tmo" "$@"
		# perftest's own CPU clock sampling (a linear fit over busy loops)
		# gives up on a loaded machine: "r^2 < 0.9, Can't produce a report"
		# on either side. That is perftest measuring this host, not uroce:
		# run it again.
		{ [ "$rc_c" -ne 0 ] || [ "$rc_s" -ne 0 ]; } && [ "$try" != 3 ] &&
			cat "$WORK/$name.cli" "$WORK/$name.srv" |
			grep -q "Correlation coefficient r^2" || break
		echo "  $name: perftest could not sample the CPU clock (loaded host); again"
	done
	if [ "$rc_c" -eq 0 ] && [ "$rc_s" -eq 0 ]; then
		PAIR_OK=1
	else
		PAIR_OK=0
		fail "$name: ${CMD[*]}: client exit $rc_c, server exit $rc_s"
		tail -n 6 "$WORK/$name.cli" "$WORK/$name.srv" | sed 's/^/    /'
	fi
}

# cmd_listen PID: until the server of CMD listens on its -p port (a loaded
# host can take seconds to start a verbs program; the clients try once).
cmd_listen() {
	local port="" i
	for ((i = 0; i < ${#CMD[@]} - 1; i++)); do
		[ "${CMD[i]}" = -p ] && port=${CMD[i + 1]}
	done
	[ -n "$port" ] || { log "no -p port in ${CMD[*]}: cannot wait for the server"; sleep 0.5; return; }
	wait_listen "$port" "$1"
}

# pair_once: one run of pair; sets rc_c and rc_s in the caller.
pair_once() {
	local name="$1" tmo="$2" spid
	shift 2
	timeout "$tmo" env "$@" UROCE_SOCKET="$A_SOCK" "$UROCE_RUN" "${CMD[@]}" \
		>"$WORK/$name.srv" 2>&1 &
	spid=$!
	cmd_listen "$spid"
	timeout "$tmo" env "$@" UROCE_SOCKET="$B_SOCK" "$UROCE_RUN" "${CMD[@]}" 127.0.0.1 \
		>"$WORK/$name.cli" 2>&1
	rc_c=$?
	wait "$spid"
	rc_s=$?
}

group_basic() {
	local out guid
	out=$(on A ibv_devices 2>&1)
	guid=$(echo "$out" | awk '$1 == "uroce0" { print $2 }')
	[ -n "$guid" ] && [ "$guid" != 0000000000000000 ] &&
		pass "ibv_devices: uroce0, node GUID $guid" ||
		fail "ibv_devices: no uroce0 with a GUID: $out"
	out=$(UROCE_SOCKET="$A_SOCK:$B_SOCK" "$UROCE_RUN" ibv_devices 2>&1)
	echo "$out" | grep -q uroce0 && echo "$out" | grep -q uroce1 &&
		pass "ibv_devices with UROCE_SOCKET=A:B lists uroce0 and uroce1" ||
		fail "ibv_devices A:B: $out"
	out=$(UROCE_SOCKET="$WORK/none.sock" "$UROCE_RUN" ibv_devinfo 2>&1)
	echo "$out" | grep -q "No IB devices found" &&
		pass "no daemon: ibv_devinfo says 'No IB devices found'" ||
		fail "no daemon: ibv_devinfo: $out"
	on A ibv_devinfo -v >"$WORK/devinfo.txt" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] && grep -q "hca_id:	uroce0" "$WORK/devinfo.txt" &&
		grep -q "PORT_ACTIVE (4)" "$WORK/devinfo.txt" &&
		grep -q "link_layer:		Ethernet" "$WORK/devinfo.txt" &&
		grep -q "::ffff:198.18.3.1, RoCE v2" "$WORK/devinfo.txt" &&
		grep -q "active_mtu:		1024 (3)" "$WORK/devinfo.txt"; then
		pass "ibv_devinfo -v: uroce0 PORT_ACTIVE, Ethernet, active MTU 1024, GID ::ffff:198.18.3.1 RoCE v2"
	else
		fail "ibv_devinfo -v (exit $rc):"
		sed 's/^/    /' "$WORK/devinfo.txt" | head -40
	fi
	local port=19100 t
	for t in rc uc ud srq; do
		port=$((port + 1))
		CMD=(ibv_${t}_pingpong -g 1 -n 200 -c -p $port)
		[ $t = ud ] && CMD+=(-s 1024)
		pair "pp-$t" 60
		[ "$PAIR_OK" = 1 ] && pass "ibv_${t}_pingpong -g 1 -c: $(tail -1 "$WORK/pp-$t.cli")"
	done
	port=$((port + 1))
	CMD=(ibv_rc_pingpong -n 200 -s 8192 -c -p $port)
	pair "pp-rc-lid" 60
	[ "$PAIR_OK" = 1 ] && grep -q "LID 0x0302" "$WORK/pp-rc-lid.cli" &&
		pass "ibv_rc_pingpong by LID (A 0x0301, B 0x0302), 8 KiB, -c: $(tail -1 "$WORK/pp-rc-lid.cli")" ||
		{ [ "$PAIR_OK" = 1 ] && fail "pingpong by LID: B's LID is not 0x0302"; }
}

# perf_case NAME ENV ARGS...: one perftest pair; checks the table and the API.
perf_case() {
	local name="$1" env="$2" api
	shift 2
	PORT=$((PORT + 1))
	CMD=("$@" -p $PORT)
	# shellcheck disable=SC2086 # $env is zero or more VAR=value words
	pair "pt-$name" 120 $env
	[ "$PAIR_OK" = 1 ] || return
	api=$(grep -o 'ibv_wr\* API *: [A-Z]*' "$WORK/pt-$name.cli" | awk '{print $NF}')
	if ! grep -q "#bytes" "$WORK/pt-$name.cli"; then
		fail "$name: $*: no result table"
		return
	fi
	if [ -n "$env" ] && [ "$api" != ON ]; then
		fail "$name: as a ConnectX the ibv_wr* API is '$api'"
		return
	fi
	if [ -z "$env" ] && [ "$api" != OFF ]; then
		fail "$name: as an unknown device the ibv_wr* API is '$api'"
		return
	fi
	pass "$name: $* (wr API $api): $(grep -A1 '#bytes' "$WORK/pt-$name.cli" | tail -1 |
		awk '{print $1 " B x " $2}')"
}

group_perftest() {
	local cx="UROCE_VERBS_VENDOR_ID=0x02c9 UROCE_VERBS_VENDOR_PART_ID=4119" t
	PORT=19200
	for t in write_bw read_bw send_bw atomic_bw write_lat read_lat send_lat atomic_lat; do
		perf_case "$t" "" ib_$t -n 200
		perf_case "$t-cx" "$cx" ib_$t -n 200
	done
	grep -q "Max inline data : 220" "$WORK/pt-write_lat-cx.cli" &&
		pass "ib_write_lat as a ConnectX inlines 220 bytes" ||
		fail "ib_write_lat as a ConnectX: no 220-byte inline"
	perf_case write_bw-sweep "" ib_write_bw -a -n 5
	perf_case read_bw-sweep-cx "$cx" ib_read_bw -a -n 5
	perf_case send_lat-sweep "" ib_send_lat -a -n 5
	perf_case write_bw-q4 "" ib_write_bw -q 4 -n 100
	perf_case send_bw-q4-cx "$cx" ib_send_bw -q 4 -n 100
	perf_case send_bw-e "" ib_send_bw -e -n 200
	perf_case read_bw-e-cx "$cx" ib_read_bw -e -n 200
	# perftest's UD server waits for every datagram of a burst of 128: the
	# worker takes posted receives from the client's ring when the engine
	# runs out (IBA 10.8.3), so none is dropped for want of a WQE.
	perf_case send_bw-ud "" ib_send_bw -c UD -n 200
	# One channel, two CQs: perftest takes each event as the one of the CQ
	# it polls next, so events must come in completion order.
	perf_case send_lat-e "" ib_send_lat -e -n 200
	perf_case send_lat-e-cx "$cx" ib_send_lat -e -n 200
	perf_case send_lat-ud-cx "$cx" ib_send_lat -c UD -n 200
	perf_case write_bw-uc "" ib_write_bw -c UC -n 200
	perf_case send_bw-srq-cx "$cx" ib_send_bw --use-srq -n 200
	perf_case atomic_lat-cas "" ib_atomic_lat -A CMP_AND_SWAP -n 200
}

group_qperf() {
	local port=19300 spid out t bad=0
	# A simple command (uroce-run execs qperf), so that $! is qperf itself.
	UROCE_SOCKET="$A_SOCK" "$UROCE_RUN" qperf -lp $port >"$WORK/qperf.srv" 2>&1 &
	spid=$!
	PIDS+=("$spid")
	wait_listen "$port" "$spid"
	timeout 180 env UROCE_SOCKET="$B_SOCK" "$UROCE_RUN" qperf -lp $port -t 1 127.0.0.1 \
		rc_bw rc_lat uc_bw ud_lat rc_rdma_write_bw rc_rdma_read_bw ver_rc_compare_swap \
		ver_rc_fetch_add >"$WORK/qperf.cli" 2>&1
	rc=$?
	for t in rc_bw rc_lat uc_bw ud_lat rc_rdma_write_bw rc_rdma_read_bw ver_rc_compare_swap \
		ver_rc_fetch_add; do
		# The lines of the test's result: indented, under "$t:".
		out=$(awk -v t="$t:" '$0 == t { on = 1; next } /^[^ ]/ { on = 0 } on' \
			"$WORK/qperf.cli" | tr -s ' ' | tr '\n' ';')
		if echo "$out" | grep -Eq "(bw|latency|msg_rate) = [0-9.]+ " &&
			! echo "$out" | grep -q failed; then
			pass "qperf $t:$out"
		else
			fail "qperf $t: $out"
			bad=1
		fi
	done
	[ "$rc" -eq 0 ] || fail "qperf client exit $rc"
	[ $bad = 0 ] || sed 's/^/    /' "$WORK/qperf.cli"
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
}

group_ucx() {
	local out args tls
	make_dev_node
	out=$(on A ucx_info -d 2>&1)
	if echo "$out" | grep -q "Memory domain: uroce0" &&
		echo "$out" | grep -A2 "Transport: rc_verbs" | grep -q "Device: uroce0:1" &&
		echo "$out" | grep -A2 "Transport: ud_verbs" | grep -q "Device: uroce0:1"; then
		pass "ucx_info -d: memory domain uroce0, rc_verbs and ud_verbs on uroce0:1"
	else
		fail "ucx_info -d does not list uroce0:1:"
		echo "$out" | grep -E "domain|Transport|Device" | sed 's/^/    /'
	fi
	PORT=19400
	for args in "-x rc_verbs -t am_lat -n 2000" "-x rc_verbs -t put_bw -D zcopy -s 65536 -n 500" \
		"-x rc_verbs -t get -D zcopy -s 65536 -n 200" "-x rc_verbs -t fadd -n 1000" \
		"-x ud_verbs -t am_lat -n 2000" "-x ud_verbs -t am_bw -D bcopy -s 1000 -n 2000"; do
		PORT=$((PORT + 1))
		# shellcheck disable=SC2206 # split the argument string on purpose
		CMD=(ucx_perftest -d uroce0:1 $args -p $PORT)
		pair "ucx-$PORT" 120
		[ "$PAIR_OK" = 1 ] && grep -q "^Final:" "$WORK/ucx-$PORT.cli" &&
			pass "ucx_perftest $args: $(grep '^Final:' "$WORK/ucx-$PORT.cli" | tr -s ' ')" ||
			{ [ "$PAIR_OK" = 1 ] && fail "ucx_perftest $args: no Final line"; }
	done
	for tls in rc_verbs,ud_verbs ud_verbs; do
		for args in "-t tag_lat -n 2000" "-t tag_bw -s 200000 -n 100"; do
			PORT=$((PORT + 1))
			# shellcheck disable=SC2206
			CMD=(ucx_perftest $args -p $PORT)
			pair "ucxp-$PORT" 120 UCX_TLS=$tls UCX_NET_DEVICES=uroce0:1
			[ "$PAIR_OK" = 1 ] && grep -q "^Final:" "$WORK/ucxp-$PORT.cli" &&
				pass "UCX_TLS=$tls ucx_perftest $args: $(grep '^Final:' "$WORK/ucxp-$PORT.cli" | tr -s ' ')" ||
				{ [ "$PAIR_OK" = 1 ] && fail "UCX_TLS=$tls ucx_perftest $args: no Final line"; }
		done
	done
}

group_ucxcm() {
	local out ca cb spid rc
	local env=(UCX_SOCKADDR_TLS_PRIORITY=rdmacm UCX_TLS=rc_verbs,self UCX_NET_DEVICES=uroce0:1)
	local io=(io_demo -p 19600 -i 200 -o read,write -d 1024:65536 -q)
	make_dev_node
	out=$(on A ucx_info -d 2>&1)
	echo "$out" | grep -q "^# Connection manager: rdmacm" &&
		pass "ucx_info -d: connection manager rdmacm (through drivers/rdmacm)" ||
		fail "ucx_info -d lists no rdmacm connection manager: $(echo "$out" | grep -i manager)"
	ca=$(dstat "$PA" cqe_written)
	cb=$(dstat "$PB" cqe_written)
	timeout "$(bound 120)" env "${env[@]}" UROCE_SOCKET="$A_SOCK" "$UROCE_RUN" "${io[@]}" \
		>"$WORK/iodemo.srv" 2>&1 &
	spid=$!
	PIDS+=("$spid")
	# It listens once its rdma_cm id does (no TCP socket).
	wait_until 60 rdma_ids_at_least "$PA" 1 || fail "io_demo on A does not listen"
	timeout "$(bound 120)" env "${env[@]}" UROCE_SOCKET="$B_SOCK" "$UROCE_RUN" "${io[@]}" \
		-n 30 -t 60 198.18.3.1 >"$WORK/iodemo.cli" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] && grep -q "Client exit with status 'OK'" "$WORK/iodemo.cli" &&
		kill -0 "$spid" 2>/dev/null; then
		pass "UCX io_demo through rdmacm: 200 checked reads and writes, client OK, server still up"
	else
		fail "UCX io_demo through rdmacm: client exit $rc, server $(kill -0 "$spid" 2>/dev/null && echo up || echo gone)"
		tail -n 5 "$WORK/iodemo.cli" "$WORK/iodemo.srv" | sed 's/^/    /'
	fi
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	# These counters are telemetry, the control thread's snapshot (every
	# 100 ms while the workers work): the whole exchange takes a quarter of
	# a second, so its last part may be in the next snapshot. Wait for it.
	wait_until 5 ucxcm_counted "$ca" "$cb"
	local req rcvd retries
	req=$(cm "$PB" cm_req_sent)
	retries=$(cm "$PB" cm_req_retries)
	rcvd=$(cm "$PA" cm_req_rcvd)
	[ "${req:-0}" -ge 1 ] && [ "${rcvd:-0}" -ge 1 ] && [ "${retries:-x}" = 0 ] &&
		pass "the connection was rdma_cm's: B sent $req REQ(s), none retried, A received $rcvd" ||
		fail "CM REQs: B sent ${req:-?} (${retries:-?} retried), A received ${rcvd:-?}"
	[ "$(dstat "$PA" cqe_written)" -gt "$ca" ] && [ "$(dstat "$PB" cqe_written)" -gt "$cb" ] &&
		pass "both daemons wrote completions (rc_verbs over uroce)" ||
		fail "no completions written by A or B"
}
cm() { tel_num "$1" /uroce/cm "$2"; }
# ucxcm_counted CA CB: A's snapshot shows the REQ it received, and both
# daemons' show completions beyond CA and CB (quiet reads: the checks after
# it read again, and say what they found).
ucxcm_counted() {
	[ "$(tel_quiet "$PA" /uroce/cm cm_req_rcvd)" -ge 1 ] 2>/dev/null &&
		[ "$(tel_quiet "$PA" /uroce/daemon/stats cqe_written)" -gt "$1" ] 2>/dev/null &&
		[ "$(tel_quiet "$PB" /uroce/daemon/stats cqe_written)" -gt "$2" ] 2>/dev/null
}
tel_quiet() { TEL_TRIES=1 tel "$1" "$2" | grep -o "\"$3\": [0-9]*" | grep -o '[0-9]*$'; }
rdma_ids_at_least() { [ "$(cm "$1" cm_rdma_ids 2>/dev/null)" -ge "$2" ] 2>/dev/null; }

group_mpi() {
	local ca0 cb0 ca1 cb1 da db rc
	make_dev_node
	ca0=$(dstat "$PA" cqe_written)
	cb0=$(dstat "$PB" cqe_written)
	timeout 180 "$UROCE_RUN" mpirun --allow-run-as-root --oversubscribe \
		--mca pml ucx --mca btl self --mca coll ^sm,hcoll,ucc --mca osc ^ucx \
		-x UCX_TLS=rc_verbs,ud_verbs,self -x UCX_NET_DEVICES=uroce0:1 \
		-np 1 -x UROCE_SOCKET="$A_SOCK" "$VERBS_MPI" 2000 1048576 : \
		-np 1 -x UROCE_SOCKET="$B_SOCK" "$VERBS_MPI" 2000 1048576 \
		>"$WORK/mpi.log" 2>&1
	rc=$?
	ca1=$(dstat "$PA" cqe_written)
	cb1=$(dstat "$PB" cqe_written)
	if [ "$rc" -eq 0 ] && grep -q "^verbs_mpi: ok" "$WORK/mpi.log"; then
		pass "mpirun -np 1 (daemon A) : -np 1 (daemon B), pml ucx over rc_verbs: $(grep '^verbs_mpi' "$WORK/mpi.log")"
	else
		fail "mpirun exit $rc:"
		tail -20 "$WORK/mpi.log" | sed 's/^/    /'
	fi
	da=$((${ca1:-0} - ${ca0:-0}))
	db=$((${cb1:-0} - ${cb0:-0}))
	[ "$da" -gt 4000 ] && [ "$db" -gt 4000 ] &&
		pass "the MPI bytes crossed uroce: completions written by A +$da, by B +$db" ||
		fail "completions during the MPI job: A +$da, B +$db"
}

"group_$GROUP"
stop_uroced "$PID_A" a
stop_uroced "$PID_B" b
finish
