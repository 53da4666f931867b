# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# Shared by the drop-in ABI tests (verbs/test_verbs_abi.sh,
# rdmacm/test_rdmacm_abi.sh): set TAG, then source this. It gives a work
# directory, pass/fail/note/skip, a cleanup of PIDS at exit, the checks of
# UROCE_RUN, DROPIN, SYSLIB and UROCED_LITE, and dropin_abi SONAME: the
# drop-in exports exactly the default-version symbols of the installed
# library, with the same version nodes and parents.
set -u
WORK=$(mktemp -d "/tmp/uroce-$TAG-$$-XXXX")
FAILS=0
PIDS=()
pass() { printf '%s: ok: %s\n' "$TAG" "$*"; }
fail() { printf '%s: FAIL: %s\n' "$TAG" "$*"; FAILS=$((FAILS + 1)); }
note() { printf '%s: %s\n' "$TAG" "$*"; }
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	if [ "$FAILS" -eq 0 ]; then rm -rf "$WORK"; else note "logs kept in $WORK"; fi
}
trap cleanup EXIT
skip() { printf '%s: SKIP: %s\n' "$TAG" "$*"; exit 77; }
have() { command -v "$1" >/dev/null 2>&1; }

[ -n "${UROCE_RUN:-}" ] && [ -x "$UROCE_RUN" ] || skip "UROCE_RUN is not set"
[ -n "${DROPIN:-}" ] && [ -e "$DROPIN" ] || skip "DROPIN is not set (the drop-in is not built)"
[ -n "${UROCED_LITE:-}" ] && [ -x "$UROCED_LITE" ] || skip "UROCED_LITE is not set"

dropin_abi() { # dropin_abi SONAME
	local n s o
	[ -n "${SYSLIB:-}" ] && [ -e "$SYSLIB" ] || skip "SYSLIB (${SYSLIB:-}) is not the installed $1"
	defaults() { nm -D --with-symbol-versions --defined-only "$1" | awk '{print $3}' | grep '@@' | sort; }
	nodes() {
		readelf -V --wide "$1" | sed -n '/Version definition/,/Version needs/p' |
			grep -oE 'Name: [^ ]+|Parent 1: [^ ]+' | tr '\n' ' '
	}
	defaults "$SYSLIB" >"$WORK/sys.txt"
	defaults "$DROPIN" >"$WORK/ours.txt"
	n=$(wc -l <"$WORK/sys.txt")
	if diff "$WORK/sys.txt" "$WORK/ours.txt" >"$WORK/abi.diff"; then
		pass "the $n default-version symbols of $(basename "$(readlink -f "$SYSLIB")") are exported, no more"
	else
		fail "exports differ from $SYSLIB:"
		sed 's/^/    /' "$WORK/abi.diff" | head -20
	fi
	s=$(nodes "$SYSLIB" | sed "s/Name: $1 //")
	o=$(nodes "$DROPIN" | sed "s/Name: $1 //")
	[ "$s" = "$o" ] && pass "version nodes and parents match: $(echo "$s" | grep -o 'Name: [^ ]*' | wc -l) nodes" ||
		fail "version nodes differ: system [$s] drop-in [$o]"
}
