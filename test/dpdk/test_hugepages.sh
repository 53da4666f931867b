#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# A clean stop gives back every hugepage (issue 21.5). Two uroced joined by
# memif, on real hugepages with memory = 64 each (EAL preallocates it), as
# .ci/demo runs them; they resolve each other, then stop on SIGTERM.
#   Expect: while they run, each prefix has its <prefix>map_N files in the
#           hugetlbfs mount (so the test really uses hugepages).
#   Expect: after "uroced: stopped", no file of either prefix is left.
#   Expect: a portless daemon on hugepages leaves none either.
# Skips (77) loudly without a hugetlbfs mount or 64 free 2 MB pages; it
# reserves none itself (the machine's hugepages are shared).
. "$(dirname "$0")/lib.sh"

require_root
require_uroced
require_cmd dpdk-telemetry.py dpdk-dev
require_cmd timeout coreutils

MNT=$(awk '$3 == "hugetlbfs" && ($4 !~ /pagesize=/ || $4 ~ /pagesize=2M/) { print $2; exit }' /proc/mounts)
[ -n "$MNT" ] || skip "no hugetlbfs for 2 MB pages is mounted (bash .ci/hugepages sets one up)"
SYS=/sys/kernel/mm/hugepages/hugepages-2048kB
FREE=$(cat "$SYS/free_hugepages" 2>/dev/null || echo 0)
[ "$FREE" -ge 64 ] || skip "needs 64 free 2 MB hugepages, $FREE free (bash .ci/hugepages 128 reserves them)"

files() { # files PREFIX: how many hugepage files the prefix holds
	find "$MNT" -maxdepth 1 -name "${1}map_*" 2>/dev/null | wc -l
}

MEMIF="$WORK/memif.sock"
for side in a b; do
	if [ $side = a ]; then role=server; n=1; else role=client; n=2; fi
	PREFIXES+=("uroce-dp-hp$side-$$")
	cat >"$WORK/$side.conf" <<EOF
[eal]
lcores = 0,1
memory = 64
file_prefix = uroce-dp-hp$side-$$
[daemon]
socket = $WORK/$side.sock
[limits]
mbufs = 2047
idle_sleep_us = 100
neigh_retry_ms = 200
[port.memif]
vdev = net_memif0,role=$role,socket=$MEMIF,id=0
ipv4 = 198.18.12.$n/24
mac = 02:00:c6:12:0c:0$n
EOF
done
PA="uroce-dp-hpa-$$"
PB="uroce-dp-hpb-$$"

start_uroced a - -c "$WORK/a.conf" || finish
PID_A=$LAST_PID
start_uroced b - -c "$WORK/b.conf" || finish
PID_B=$LAST_PID
na=$(files "$PA")
nb=$(files "$PB")
[ "$na" -gt 0 ] && [ "$nb" -gt 0 ] && pass "running: $na and $nb hugepage files in $MNT" ||
	fail "running: $na and $nb hugepage files: the daemons do not use hugepages"
for _ in $(seq 30); do
	tel "$PA" /uroce/port/resolve,0,198.18.12.2 | grep -q reachable && break
	sleep 0.2
done
tel "$PA" /uroce/port/resolve,0,198.18.12.2 | grep -q reachable &&
	pass "A resolved B over memif" || fail "A did not resolve B: $(tel "$PA" /uroce/port/info,0)"

stop_uroced "$PID_B" b
stop_uroced "$PID_A" a
na=$(files "$PA")
nb=$(files "$PB")
[ "$na" -eq 0 ] && [ "$nb" -eq 0 ] && pass "after a clean stop: no hugepage file of either daemon left" ||
	fail "after a clean stop: $na and $nb hugepage files left: $(find "$MNT" -maxdepth 1 -name "uroce-dp-hp*-$$map_*" | head -3 | tr '\n' ' ')"

# The same without a port (the control plane's memory only).
PC="uroce-dp-hpc-$$"
PREFIXES+=("$PC")
if start_uroced c - -m 64 -l 0,1 --file-prefix "$PC" --socket "$WORK/c.sock"; then
	nc=$(files "$PC")
	stop_uroced "$LAST_PID" c
	n=$(files "$PC")
	[ "$nc" -gt 0 ] && [ "$n" -eq 0 ] && pass "portless: $nc hugepage files while running, none after" ||
		fail "portless: $nc hugepage files while running, $n after"
fi
finish
