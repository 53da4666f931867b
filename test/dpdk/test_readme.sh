#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# The documents' commands run as written: every fenced ```sh block of
# README.md, and of doc/operations.md's "Quick start", in order, in one bash
# session per document (as a reader pastes them into one terminal, so a
# daemon started in one block serves the next), with `set -e` (no pipefail:
# `... | head -3` is fine as written).
# A block that is not meant to run (a second host, a program of your own,
# the whole CI) is preceded by the line
#   <!-- doc-test: skip REASON -->
# and is listed as skipped with its reason. `build/` is this build tree;
# config/, test/ and examples/ are the checkout's: the session runs in a
# scratch directory of links to them. Background jobs still running when a
# session ends are stopped; the fixed paths the documents use (/run/uroce/
# a.sock, b.sock, memif-ab.sock, /tmp/uroced.sock, /tmp/uroce.sock, file
# prefixes uroce-a, uroce-b, uroced) are cleaned up. Needs root (EAL).
# Env: UROCED (for the build tree), SRC (the checkout).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (uroced, /run/uroce)"
SRC=${SRC:?}
BUILD=$(cd "$(dirname "$UROCED")/../.." && pwd)
for c in ib_write_bw ib_send_lat qperf; do
	command -v "$c" >/dev/null || skip "$c not found (README runs it; bash .ci/install-deps)"
done
[ -x "$BUILD/drivers/verbs/uroce-run" ] || skip "drivers/verbs not built (libibverbs-dev)"
PREFIXES+=(uroce-a uroce-b uroced)
FIXED=(/run/uroce/a.sock /run/uroce/b.sock /run/uroce/memif-ab.sock /tmp/uroced.sock
	/tmp/uroce.sock)
for f in "${FIXED[@]}"; do
	# A daemon of someone else's on these paths would make the blocks lie.
	if [ -S "$f" ] && python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])' "$f" 2>/dev/null; then
		skip "$f is served by a running daemon: the documents' paths are taken"
	fi
done
trap 'rm -f "${FIXED[@]}"; cleanup' EXIT

# extract DOC SECTION: the blocks of DOC (SECTION: only under that heading)
# as one script; skipped blocks are reported on stderr.
extract() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import re, sys
path, section = sys.argv[1], sys.argv[2]
lines = open(path).read().split("\n")
if section:
    start = next(i for i, l in enumerate(lines) if l.strip() == section)
    level = section.split()[0]
    end = next((i for i in range(start + 1, len(lines))
                if re.match(r"#{1,%d} " % len(level), lines[i])), len(lines))
    lines = lines[start:end]
out, i, n = [], 0, 0
while i < len(lines):
    if lines[i].strip() == "```sh":
        j = lines.index("```", i + 1)
        body = lines[i + 1:j]
        prev = next((l for l in reversed(lines[:i]) if l.strip()), "")
        m = re.match(r"<!-- doc-test: skip (.*) -->", prev.strip())
        n += 1
        if m:
            print(f"block {n} (line {i + 1}): skipped: {m.group(1)}", file=sys.stderr)
        else:
            out.append(f'echo "=== {path} block {n} (line {i + 1})"')
            out.append(f'BLOCK="{path} block {n}"')
            out += body
        i = j
    i += 1
print("\n".join(out))
PY
}

# A scratch directory that looks like a checkout with its build in build/.
RUN=$WORK/tree
mkdir -p "$RUN"
for d in config test examples doc lib app drivers .ci meson.build meson_options.txt; do
	ln -s "$SRC/$d" "$RUN/$d"
done
ln -s "$BUILD" "$RUN/build"

session() {
	local doc=$1 section=$2 script=$WORK/$(basename "$1").sh out=$WORK/$(basename "$1").out
	{
		echo 'set -e'
		echo 'trap '\''rc=$?; [ $rc -eq 0 ] || echo "=== FAILED in $BLOCK: exit $rc at: $BASH_COMMAND"'\'' EXIT'
		extract "$SRC/$doc" "$section" 2>"$WORK/skipped"
		# Whatever a block left running in the background is stopped.
		echo 'for j in $(jobs -p); do kill $j 2>/dev/null || true; done; wait 2>/dev/null || true'
	} >"$script"
	while read -r l; do log "$doc: $l"; done <"$WORK/skipped"
	log "$doc: running $(grep -c '^BLOCK=' "$script") block(s)"
	(cd "$RUN" && timeout 900 bash "$script") >"$out" 2>&1
	local rc=$?
	# Stop what a failed session left behind (daemons, servers): the
	# processes whose working directory is the session's.
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/cwd" 2>/dev/null)" = "$RUN" ] && PIDS+=("${p#/proc/}")
	done
	if [ $rc -eq 0 ]; then
		pass "$doc${section:+ ($section)}: every block ran: $(grep -c '^=== ' "$out") block(s); last lines: $(grep -v '^\s*$' "$out" | tail -2 | tr '\n' ' ' | cut -c1-200)"
	else
		sed 's/^/    | /' "$out" | tail -40
		fail "$doc${section:+ ($section)}: $(grep '^=== FAILED' "$out" || echo "exit $rc")"
	fi
	cleanup_daemons
}

cleanup_daemons() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || continue
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
	done
	PIDS=()
	rm -f "${FIXED[@]}"
}

session README.md ""
session doc/operations.md "### Quick start"
finish
