#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Issue 16 defect 4: the initiator daemon once died with SIGSEGV when the
# target's daemon stopped during `uroce-ctl gen`. This stops the target's
# daemon mid-run again and again, at varied moments, and checks the
# initiator's daemon after each stop (doc/loadgen.md, "Stopping the target's
# daemon"). Two uroced, --no-huge, one worker each; A holds the initiator,
# B the target. STRESS_PMD chooses the wire:
#   afp    (default) af_packet on a veth pair between two namespaces;
#   memif  memif, A the server and B the client as in test_lcgen (a memif
#          client of DPDK 22.11 does not connect again to a server that
#          restarted, so the side that goes away is the client). DPDK
#          22.11's memif PMD unmaps the rings when the peer leaves while a
#          worker may be inside a burst; A died of it in librte_net_memif
#          about once in a hundred stops until uroced held such unmaps for
#          its workers (doc/dataplane.md, "A memif peer that leaves").
#
# STRESS_ROUNDS rounds (12 by default, the meson test; 100 or more by hand),
# each drawn from STRESS_SEED:
#   - a mix (WRITE, READ, SEND, atomics, all), 1 to 8 QPs, with or without
#     --verify, local ACK timeout 14 to 17;
#   - a moment: B stops during the generator's setup (no wait, or a few
#     milliseconds), or once it runs (after its first completions, and then
#     0 to 3 s more);
#   - how: SIGTERM (a clean stop: B destroys its target) or SIGKILL.
#   Expect: uroce-ctl gen ends within 60 s (exit 1: RETRY_EXC_ERR or the
#           target lost; exit 2: setup failed because B went), never hangs;
#           A is alive, answers telemetry, and holds no QP, CQ, MR or PD
#           within 60 s; B is started again for the next round.
#   Expect: at the end A stops cleanly (exit 0) and its log holds no
#           sanitizer report (build with -Db_sanitize=address,undefined and
#           point UROCED and UROCE_CTL at that build to run under ASan).
. "$(dirname "$0")/lib.sh"

require_root
require_uroced
[ -n "${UROCE_CTL:-}" ] && [ -x "$UROCE_CTL" ] || skip "UROCE_CTL is not set (uroce-ctl not built: libpcap-dev missing)"
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd timeout coreutils
require_eal
PMD=${STRESS_PMD:-afp}
case "$PMD" in
afp) require_netns_veth ;;
memif) ;;
*) echo "STRESS_PMD: afp or memif, not '$PMD'" >&2; exit 2 ;;
esac

ROUNDS=${STRESS_ROUNDS:-12}
SEED=${STRESS_SEED:-16}
RANDOM=$SEED
MEMIF="$WORK/memif.sock"
PA="uroce-sgps-a-$$"
PB="uroce-sgps-b-$$"
PREFIXES+=("$PA" "$PB")
A_SOCK="$WORK/a.sock"
B_SOCK="$WORK/b.sock"
# A sanitizer's report goes to the daemon's log; it must not abort the daemon
# on a leak at exit before the log shows why.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=0}

start_a() {
	start_uroced "a$1" "$NS_A" -c "$WORK/a.conf" || finish
	PID_A=$LAST_PID
	LOG_A="$WORK/a$1.log"
}

start_b() {
	rm -f "$B_SOCK"
	start_uroced "b$1" "$NS_B" -c "$WORK/b.conf" || finish
	PID_B=$LAST_PID
	[ "$PMD" = afp ] || wait_link "$PB" || finish
}

# the wire: configs of A and B, and where they run
if [ "$PMD" = memif ]; then
	memif_conf a 10
	memif_conf b 10
	NS_A=-
	NS_B=-
else
	NS_A="uroce-sga-$$"
	NS_B="uroce-sgb-$$"
	veth_pair "$NS_A" "sga$$" "$NS_B" "sgb$$"
	afp_conf a 1 "sga$$" "$PA"
	afp_conf b 2 "sgb$$" "$PB"
fi

# a_holds: "qps cqs mrs pds" of A, or "unreadable".
a_holds() {
	TEL_TRIES=2 tel "$PA" /uroce/daemon/stats | /usr/bin/python3 -c '
import json, sys
try:
    d = json.loads(sys.stdin.read())["/uroce/daemon/stats"]
    print(d["qps"], d["cqs"], d["mrs"], d["pds"])
except Exception:
    print("unreadable")'
}
a_empty() { [ "$(a_holds)" = "0 0 0 0" ]; }

# gen_running PID: A's generator runs and has completed messages, or
# uroce-ctl gen PID ended (nothing to wait for).
gen_running() {
	gen_runs "$PA" "$1" || gone "$1"
}

MIXES=("write:64" "read:1K" "send:1K" "fadd:8,cswap:8" "write:64,read:1K,send:2K,fadd:8"
	"write:4K,read:64")
crashes=0
hangs=0
bad_exit=0
n_term=0
n_kill=0
n_setup=0
n_run=0
early=0
round=0

run_rounds() { # run_rounds N
	local i mix qps qpt verify when how delay gp rc t0 secs holds
	start_a ""
	start_b "-$round"
	for i in $(seq "$1"); do
		round=$((round + 1))
		mix=${MIXES[RANDOM % ${#MIXES[@]}]}
		qps=$((1 + RANDOM % 8))
		qpt=$((14 + RANDOM % 4))
		verify=""
		[ $((RANDOM % 2)) = 0 ] && verify=--verify
		how=TERM
		[ $((RANDOM % 2)) = 0 ] && how=KILL
		case $((RANDOM % 4)) in
		0) when=setup; delay=0 ;;
		1) when=setup; delay=0.0$((RANDOM % 10)) ;;
		*) when=run; delay=$((RANDOM % 4)).$((RANDOM % 10)) ;;
		esac
		timeout 120 "$UROCE_CTL" gen --from "$A_SOCK" --to "$B_SOCK" -u "$qpt" --qps "$qps" \
			--mix "$mix" $verify -D 300 --interval 250 -q \
			>"$WORK/r$round.out" 2>"$WORK/r$round.err" &
		gp=$!
		PIDS+=("$gp")
		if [ "$when" = run ]; then
			wait_until 60 gen_running "$gp" ||
				log "round $round: the generator was not running after $(bound 60) s; stopping B anyway"
			n_run=$((n_run + 1))
		else
			n_setup=$((n_setup + 1))
		fi
		sleep "$delay"
		# A run that failed before B was stopped did so on a healthy link
		# (a transport finding, reported, not this test's subject).
		if [ "$when" = run ] && ! kill -0 "$gp" 2>/dev/null; then
			early=$((early + 1))
			log "round $round: the generator ended BEFORE B was stopped: $(tail -1 "$WORK/r$round.err")"
			dump_stats "$PA"
		fi
		[ "$how" = TERM ] && n_term=$((n_term + 1)) || n_kill=$((n_kill + 1))
		t0=$SECONDS
		unset "UP[b]" # stopped on purpose
		kill "-$how" "$PID_B"
		wait_until 60 gone "$gp"
		if kill -0 "$gp" 2>/dev/null; then
			hangs=$((hangs + 1))
			fail "round $round: uroce-ctl gen still running 60 s after B's SIG$how"
			kill -KILL "$gp"
		fi
		wait "$gp"
		rc=$?
		secs=$((SECONDS - t0))
		wait_until 30 gone "$PID_B" || kill -KILL "$PID_B"
		wait "$PID_B" 2>/dev/null
		if wait_until 60 a_empty; then
			holds="none"
		else
			holds=$(a_holds)
		fi
		if ! kill -0 "$PID_A" 2>/dev/null; then
			crashes=$((crashes + 1))
			fail "round $round: daemon A DIED when B got SIG$how ($when + ${delay} s, mix $mix, $qps QPs, -u $qpt $verify, $PMD)$(grep -q 'librte_net_memif' "$LOG_A" && echo ' inside librte_net_memif'); its log:"
			tail -60 "$LOG_A" | sed 's/^/    /'
			finish
		fi
		[ "$holds" = none ] ||
			fail "round $round: A still holds (qps cqs mrs pds) $holds 60 s after the run"
		if [ "$rc" -ne 1 ] && [ "$rc" -ne 2 ]; then
			bad_exit=$((bad_exit + 1))
			fail "round $round: uroce-ctl gen exit $rc (want 1 or 2): $(tail -2 "$WORK/r$round.err" | tr '\n' ' ')"
		fi
		log "round $round: SIG$how to B at $when + ${delay} s (mix $mix, $qps QPs, -u $qpt${verify:+, verify}): gen exit $rc after ${secs} s ($(tail -1 "$WORK/r$round.err" | cut -c1-120)); A alive, holds $holds"
		start_b "-$round"
	done
	# How many of B's departures found A's worker inside a burst, and were
	# held until it left (memif; doc/dataplane.md, "A memif peer that leaves").
	held=$(tel "$PA" /uroce/info | grep -o '"unmaps_waited": [0-9]*' || true)
	[ -n "$held" ] && log "A's unmaps that waited for its worker: ${held##* }"
	stop_uroced "$PID_B" "b-$round"
	stop_uroced "$PID_A" a
	if grep -q -E "ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:" "$LOG_A"; then
		fail "A's log holds a sanitizer report:"
		grep -A30 -E "ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:" "$LOG_A" |
			head -60 | sed 's/^/    /'
	fi
}

run_rounds "$ROUNDS"
[ "$crashes" = 0 ] && [ "$hangs" = 0 ] && [ "$bad_exit" = 0 ] &&
	pass "$round stops of the target's daemon mid-run over $PMD (SIGTERM $n_term, SIGKILL $n_kill; during setup $n_setup, while running $n_run; seed $SEED): A never died, no generator hung, every run ended with exit 1 or 2, A held nothing afterwards; $early run(s) had ended before B was stopped"
finish
