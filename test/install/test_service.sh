#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# uroced as a service, from the installed tree (meson install --destdir):
#  - the unit, the tmpfiles.d entry, the sample config and the four man
#    pages are installed where systemd, systemd-tmpfiles and man look;
#  - `systemd-analyze verify` accepts the unit inside the tree (--root: its
#    ExecStartPre/ExecStart binaries exist there, its Documentation= pages
#    resolve), and refuses a copy whose ExecStart names no binary, so the
#    check is not vacuous;
#  - the unit runs `uroced --check` before uroced, both on the installed
#    config; the tmpfiles entry creates /run/uroce;
#  - `man -l` renders each page with no groff warning, with the options of
#    the program's --help and the version of --version.
# Args: BUILD_DIR. Exit 0 pass, 1 fail, 77 skip.
set -u
BUILD=$1
TAG=test_service
FAILS=0
fail() { printf '%s: FAIL: %s\n' "$TAG" "$*"; FAILS=$((FAILS + 1)); }
pass() { printf '%s: ok: %s\n' "$TAG" "$*"; }
skip() { printf '%s: SKIP: %s\n' "$TAG" "$*"; exit 77; }
command -v meson >/dev/null || skip "meson not found"

WORK=$(mktemp -d /tmp/uroce-inst-svc-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
DEST=$WORK/root
meson install -C "$BUILD" --no-rebuild --destdir "$DEST" >"$WORK/install.log" 2>&1 ||
	{ cat "$WORK/install.log"; fail "meson install --destdir"; exit 1; }
# Where meson put things, from its introspection file.
opt() {
	python3 -c 'import json, sys
opts = json.load(open(sys.argv[1] + "/meson-info/intro-buildoptions.json"))
print(next(o["value"] for o in opts if o["name"] == sys.argv[2]))' "$BUILD" "$1"
}
PREFIX=$(opt prefix) BINDIR=$(opt bindir) SYSCONF=$(opt sysconfdir) MANDIR=$(opt mandir)
abs() { case $1 in /*) echo "$1" ;; *) echo "$PREFIX/$1" ;; esac; }
BINDIR=$(abs "$BINDIR") SYSCONF=$(abs "$SYSCONF") MANDIR=$(abs "$MANDIR")
UNIT=$PREFIX/lib/systemd/system/uroced.service
TMPF=$PREFIX/lib/tmpfiles.d/uroce.conf
CONF=$SYSCONF/uroce/uroced.conf

for f in "$UNIT" "$TMPF" "$CONF" "$BINDIR/uroced"; do
	[ -e "$DEST$f" ] && pass "installed $f" || fail "$f not installed"
done
[ -e "$DEST$BINDIR/uroced" ] || { echo "$TAG: no uroced (DPDK missing?)"; skip "uroced not built"; }

# The unit's commands: the preflight first, on the installed config.
pre=$(sed -n 's/^ExecStartPre=//p' "$DEST$UNIT")
start=$(sed -n 's/^ExecStart=//p' "$DEST$UNIT")
[ "$pre" = "$BINDIR/uroced -c $CONF --check" ] && pass "ExecStartPre=$pre" ||
	fail "ExecStartPre='$pre'"
[ "$start" = "$BINDIR/uroced -c $CONF" ] && pass "ExecStart=$start" || fail "ExecStart='$start'"
grep -qx 'd /run/uroce 0755 root root -' "$DEST$TMPF" && pass "tmpfiles.d: d /run/uroce" ||
	fail "tmpfiles entry: $(cat "$DEST$TMPF")"
if command -v systemd-tmpfiles >/dev/null; then
	# The entry applied to a scratch root creates the directory.
	if systemd-tmpfiles --root="$WORK/tmproot" --create "$DEST$TMPF" 2>"$WORK/tmpf.err" &&
		[ -d "$WORK/tmproot/run/uroce" ]; then
		pass "systemd-tmpfiles --create makes /run/uroce ($(stat -c %a "$WORK/tmproot/run/uroce"))"
	else
		fail "systemd-tmpfiles --create: $(cat "$WORK/tmpf.err")"
	fi
fi

# systemd-analyze verify, inside the installed tree: it needs systemd's own
# units there (sysinit.target and the like), copied from this machine.
if ! command -v systemd-analyze >/dev/null; then
	echo "$TAG: SKIP part: systemd-analyze not found (Debian: systemd)"
	SKIPPED=1
else
	sysunits=
	for d in /usr/lib/systemd/system /lib/systemd/system; do
		[ -e "$d/sysinit.target" ] && { sysunits=$d; break; }
	done
	if [ -z "$sysunits" ]; then
		echo "$TAG: SKIP part: no systemd unit directory on this machine (a container without systemd): systemd-analyze verify not run"
		SKIPPED=1
	else
		mkdir -p "$DEST/usr/lib/systemd"
		cp -a "$sysunits" "$DEST/usr/lib/systemd/" 2>/dev/null ||
			cp -a "$sysunits/." "$DEST/usr/lib/systemd/system/"
		if MANPATH=$DEST$MANDIR systemd-analyze --root="$DEST" verify "$UNIT" \
			>"$WORK/verify.log" 2>&1; then
			pass "systemd-analyze verify $UNIT: clean"
		else
			fail "systemd-analyze verify: $(cat "$WORK/verify.log")"
		fi
		sed "s|^ExecStart=$BINDIR/uroced|ExecStart=$BINDIR/uroced-missing|" "$DEST$UNIT" \
			>"$DEST${UNIT%/*}/uroced-broken.service"
		if MANPATH=$DEST$MANDIR systemd-analyze --root="$DEST" verify \
			"${UNIT%/*}/uroced-broken.service" >"$WORK/verify.log" 2>&1; then
			fail "systemd-analyze verify accepted a unit whose binary is missing"
		else
			pass "and refuses a unit whose ExecStart is missing: $(grep -m1 missing "$WORK/verify.log")"
		fi
	fi
fi

# Man pages: each renders without a warning and carries the program's
# options and version.
if ! command -v man >/dev/null; then
	echo "$TAG: SKIP part: man not found (Debian: man-db)"
	SKIPPED=1
else
	version=$("$DEST$BINDIR/uroced" --version | awk '{ print $3 }')
	for p in uroced.8:--config uroce-ctl.8:decode uroce-perf.1:--qp-timeout \
		uroce-run.1:--as-connectx; do
		page=${p%%:*} want=${p#*:}
		f=$DEST$MANDIR/man${page##*.}/$page
		if [ ! -f "$f" ]; then
			fail "man page $page not installed"
			continue
		fi
		if ! out=$(MANWIDTH=100 man --warnings -l "$f" 2>"$WORK/man.err"); then
			fail "man -l $page: $(cat "$WORK/man.err")"
		elif [ -s "$WORK/man.err" ]; then
			fail "man -l $page warns: $(head -3 "$WORK/man.err")"
		elif ! echo "$out" | grep -q -- "$want" || ! echo "$out" | grep -q "uroce $version"; then
			fail "man -l $page lacks '$want' or 'uroce $version'"
		else
			pass "man -l $page: $(echo "$out" | sed -n '4p' | sed 's/^ *//')"
		fi
	done
fi

[ "$FAILS" -eq 0 ] || { echo "$TAG: $FAILS failure(s)"; exit 1; }
echo "$TAG: all passed${SKIPPED:+ (parts skipped, see above)}"
