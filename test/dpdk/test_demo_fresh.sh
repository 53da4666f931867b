#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# README's first command as a fresh Debian 12 machine runs it: no hugetlbfs
# mounted and no mount point. In a private mount namespace every hugetlbfs
# mount is unmounted, the mount point is a path that does not exist yet, and
# .ci/demo (with this build, so it installs and builds nothing) must mount
# hugetlbfs itself, run both daemons on hugepages and verify every transfer.
# It runs twice, as a user who retries would: pages are reserved the second
# time but hugetlbfs is again not mounted.
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
. "$HERE/lib.sh"

require_root
require_uroced
require_cmd unshare util-linux
[ -n "${UROCE_PERF:-}" ] || skip "UROCE_PERF is not set (uroce-perf not built)"
BUILD=$(cd "$(dirname "$UROCED")/../.." && pwd)
[ -x "$BUILD/app/uroce-perf/uroce-perf" ] || skip "no uroce-perf in $BUILD"

for run in 1 2; do
	MNT="$WORK/hugepages-$run"   # does not exist: the demo must create it
	out=$(UROCE_BUILD="$BUILD" UROCE_HUGE_MNT="$MNT" unshare -m --propagation private \
		bash -c '
			for m in $(awk '"'"'$3 == "hugetlbfs" { print $2 }'"'"' /proc/mounts); do
				umount "$m" || exit 90
			done
			if grep -q hugetlbfs /proc/mounts; then exit 91; fi
			cd "$1" && bash .ci/demo' _ "$SRC" 2>&1)
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "run $run: .ci/demo exited $rc:"
		echo "$out" | sed 's/^/    /'
		continue
	fi
	echo "$out" | grep -q "mounted hugetlbfs on $MNT" ||
		fail "run $run: the demo did not mount hugetlbfs on the missing mount point"
	echo "$out" | grep -q "daemons use hugepages: yes" ||
		fail "run $run: the daemons did not use hugepages"
	echo "$out" | grep -q "all data verified" ||
		fail "run $run: no verified summary"
	[ $FAILS -eq 0 ] && pass "run $run: demo mounted hugetlbfs on a fresh mount point and verified"
done
# The private namespace is gone: nothing of it is mounted here.
grep -q " $WORK/hugepages" /proc/mounts && fail "a hugetlbfs mount leaked out of the namespace"
finish
