#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Before and after in one command: bench_client.sh's rows (one uroced with no
# port, its worker busy-polling CPU 1, uroce-perf on CPU 0; bench_engine on
# CPU 1) with two builds of uroce, alternated ROUNDS times in one run, so
# that both see the same machine. Prints, for every row and figure, the
# median of each build, after / before, and in how many rounds "after" was
# the better one (faster, or fewer cycles), then every round's pair. A
# shared machine drifts by tens of per cent over minutes
# (doc/benchmarks.md); only adjacent rounds compare, which is what the
# count and the pairs are for.
#
# Usage: bench_ab.sh BEFORE_BUILD AFTER_BUILD [ROUNDS]     (as root)
#   A BUILD is a meson build directory of uroce with app/uroced/uroced,
#   app/uroce-perf/uroce-perf, app/uroce-ctl/uroce-ctl,
#   test/bench/bench_engine and test/bench/bench_xcore. ROUNDS: 4.
# Knobs: BENCH_ROWS (bench_client.sh's row keys; default the issue-18 rows
# "write-bw-64 read-bw-64 atomic-bw write-bw-64k read-bw-64k"),
# BENCH_SECONDS (per row, 3).
# Example, the tree before a change against today's:
#   git worktree add /tmp/before <commit> && meson setup /tmp/before/build /tmp/before &&
#   ninja -C /tmp/before/build && sudo test/bench/bench_ab.sh /tmp/before/build build
set -u

usage() {
	echo "usage: $0 BEFORE_BUILD AFTER_BUILD [ROUNDS]" >&2
	exit 2
}

if [ $# -lt 2 ] || [ $# -gt 3 ]; then usage; fi
ROUNDS=${3:-4}
case "$ROUNDS" in
'' | *[!0-9]* | 0) echo "$0: ROUNDS must be a positive number, not '$ROUNDS'" >&2; exit 2 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
for b in "$1" "$2"; do
	for f in app/uroced/uroced app/uroce-perf/uroce-perf app/uroce-ctl/uroce-ctl \
		test/bench/bench_engine test/bench/bench_xcore; do
		if [ ! -x "$b/$f" ]; then
			echo "$0: $b is not a built uroce build directory: $b/$f is missing" >&2
			exit 2
		fi
	done
done
BEFORE=$(cd "$1" && pwd)
AFTER=$(cd "$2" && pwd)
export BENCH_ROWS=${BENCH_ROWS:-"write-bw-64 read-bw-64 atomic-bw write-bw-64k read-bw-64k"}
OUT=$(mktemp -d /tmp/uroce-bench-ab.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

# one BUILD NAME ROUND: bench_client.sh with BUILD's binaries; its table kept.
one() {
	local b="$1" name="$2" r="$3" rc
	UROCED="$b/app/uroced/uroced" UROCE_PERF="$b/app/uroce-perf/uroce-perf" \
		UROCE_CTL="$b/app/uroce-ctl/uroce-ctl" BENCH_ENGINE="$b/test/bench/bench_engine" \
		BENCH_XCORE="$b/test/bench/bench_xcore" bash "$HERE/bench_client.sh" \
		>"$OUT/$name.$r.log" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "bench_ab: $name round $r: bench_client.sh exit $rc" >&2
		tail -5 "$OUT/$name.$r.log" | sed 's/^/    /' >&2
		[ "$rc" -eq 77 ] && exit 77
	fi
	grep '^| ' "$OUT/$name.$r.log" | sed "s/^/$name $r /" >>"$OUT/rows"
}

echo "bench_ab: before $BEFORE, after $AFTER, $ROUNDS rounds, rows: $BENCH_ROWS"
echo "bench_ab: start $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$OUT/rows"
for r in $(seq "$ROUNDS"); do
	# Who goes first alternates, so a drift does not favour one build.
	if [ $((r % 2)) -eq 1 ]; then
		one "$BEFORE" before "$r"
		one "$AFTER" after "$r"
	else
		one "$AFTER" after "$r"
		one "$BEFORE" before "$r"
	fi
	echo "bench_ab: round $r done $(date -u +%H:%M:%S)"
done
echo
/usr/bin/python3 - "$OUT/rows" "$ROUNDS" <<'PY'
import re
import statistics
import sys

rows, rounds = sys.argv[1], int(sys.argv[2])
# (row, figure) -> {"before": {round: v}, "after": {round: v}}; figure
# "rate" (more is better) or "cycles" (fewer is better).
vals = {}
order = []

def put(key, build, rnd, v):
    if key not in vals:
        vals[key] = {"before": {}, "after": {}}
        order.append(key)
    vals[key][build][rnd] = v

num = re.compile(r"[-+]?[0-9]*\.?[0-9]+")
for line in open(rows):
    build, rnd, rest = line.split(" ", 2)
    cells = [c.strip() for c in rest.strip().strip("|").split("|")]
    if len(cells) < 2 or cells[0] in ("row", "") or cells[0].startswith("---"):
        continue
    row = cells[0]
    m = num.match(cells[1])
    if m and "ns" not in cells[1]:
        put((row, cells[1][m.end():].strip() or "rate"), build, int(rnd), float(m.group()))
    if len(cells) > 2 and num.fullmatch(cells[2] or "x"):
        put((row, "cycles / WQE"), build, int(rnd), float(cells[2]))

print("| row | figure | before (median) | after (median) | after / before | rounds after better |")
print("|---|---|---:|---:|---:|---:|")
for key in order:
    b, a = vals[key]["before"], vals[key]["after"]
    if not b or not a:
        continue
    lower = key[1].startswith("cycles") or "t_typical" in key[1]
    better = sum(1 for r in b if r in a and (a[r] < b[r] if lower else a[r] > b[r]))
    pairs = sum(1 for r in b if r in a)
    mb, ma = statistics.median(b.values()), statistics.median(a.values())
    print("| %s | %s | %.6g | %.6g | %.3f | %d of %d |" % (key[0], key[1], mb, ma,
          ma / mb if mb else float("nan"), better, pairs))
print()
print("Per round (before / after):")
for key in order:
    b, a = vals[key]["before"], vals[key]["after"]
    print("  %s, %s: %s" % (key[0], key[1], "  ".join(
        "%.4g/%.4g" % (b.get(r, float("nan")), a.get(r, float("nan")))
        for r in sorted(set(b) | set(a)))))
PY
echo
echo "bench_ab: end $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
