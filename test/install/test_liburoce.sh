#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# liburoce as an application gets it: `meson install --destdir` into a
# scratch tree, then, using that tree and pkg-config only,
#  - every installed header compiles on its own, as C and as C++ (extern "C":
#    a C++ program calls into liburoce and links);
#  - the installed headers are uroce_verbs.h and what it includes, no more;
#  - liburoce.so.1 (SONAME) and liburoce.a export exactly the functions the
#    public headers declare (nm), nothing unprefixed;
#  - examples/rc_pingpong.c and example_util.c, built against the tree
#    (shared, then static), run against a uroced_lite.
# Args: BUILD_DIR SOURCE_DIR UROCED_LITE. Exit 0 pass, 1 fail, 77 skip.
set -u
BUILD=$1 SRC=$2 LITE=$3
TAG=test_liburoce
FAILS=0
fail() { printf '%s: FAIL: %s\n' "$TAG" "$*"; FAILS=$((FAILS + 1)); }
pass() { printf '%s: ok: %s\n' "$TAG" "$*"; }
skip() { printf '%s: SKIP: %s\n' "$TAG" "$*"; exit 77; }
for t in meson pkg-config cc c++ nm readelf python3; do
	command -v "$t" >/dev/null || skip "$t not found (bash .ci/install-deps)"
done

WORK=$(mktemp -d /tmp/uroce-inst-lib-XXXXXX)
LITE_PID=
cleanup() {
	[ -n "$LITE_PID" ] && kill "$LITE_PID" 2>/dev/null && wait "$LITE_PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

DEST=$WORK/root
if ! meson install -C "$BUILD" --no-rebuild --destdir "$DEST" >"$WORK/install.log" 2>&1; then
	cat "$WORK/install.log"
	fail "meson install --destdir"
	exit 1
fi
pc=$(find "$DEST" -name liburoce.pc | head -1)
[ -n "$pc" ] || { fail "no liburoce.pc installed"; exit 1; }
export PKG_CONFIG_PATH=${pc%/*} PKG_CONFIG_SYSROOT_DIR=$DEST PKG_CONFIG_LIBDIR=
CFLAGS=$(pkg-config --cflags liburoce) || { fail "pkg-config --cflags liburoce"; exit 1; }
LIBS=$(pkg-config --libs liburoce)
# With PKG_CONFIG_SYSROOT_DIR, pkg-config's variables carry the scratch root.
LIBDIR=$(pkg-config --variable=libdir liburoce)
INCDIR=$(pkg-config --variable=includedir liburoce)/uroce
# Nothing from the build tree: meson test points LD_LIBRARY_PATH there.
unset LD_LIBRARY_PATH
pass "installed: $(pkg-config --modversion liburoce), cflags '$CFLAGS', libs '$LIBS'"

# A sanitizer build's liburoce needs the runtime in the program too.
SAN=
readelf -d "$LIBDIR/liburoce.so" | grep -q 'libasan' && SAN="-fsanitize=address"
readelf -d "$LIBDIR/liburoce.so" | grep -q 'libubsan' && SAN="$SAN -fsanitize=undefined"

# Headers: what uroce_verbs.h needs and nothing else (its include closure),
# each compiling alone in C and C++.
hdrs=$(cd "$INCDIR" && ls)
printf '#include <uroce_verbs.h>\n' | cc $CFLAGS -M -x c - 2>/dev/null | tr ' \\' '\n\n' |
	grep "^$INCDIR/" | sed 's|.*/||' | sort -u >"$WORK/needed"
for h in $hdrs; do
	grep -qxF "$h" "$WORK/needed" ||
		fail "$h is installed but uroce_verbs.h does not include it (a private header?)"
done
[ -s "$WORK/needed" ] && pass "installed headers: $(echo $hdrs) (uroce_verbs.h's closure)" ||
	fail "uroce_verbs.h is not installed or does not preprocess"
for h in $hdrs; do
	printf '#include <%s>\n#include <%s>\n' "$h" "$h" >"$WORK/h.c"
	if cc $CFLAGS -std=c11 -Wall -Wextra -Werror -fsyntax-only -x c "$WORK/h.c" \
		2>"$WORK/h.err"; then
		pass "$h compiles alone (C11, twice included)"
	else
		fail "$h alone in C: $(head -5 "$WORK/h.err")"
	fi
	if c++ $CFLAGS -std=c++17 -Wall -Wextra -Werror -fsyntax-only -x c++ "$WORK/h.c" \
		2>"$WORK/h.err"; then
		pass "$h compiles alone (C++17)"
	else
		fail "$h alone in C++: $(head -5 "$WORK/h.err")"
	fi
done
cat >"$WORK/cxx.cc" <<'CXX'
#include <uroce_verbs.h>
#include <cstdio>
int main()
{
	/* C linkage: these resolve in liburoce only through extern "C". */
	std::printf("%s\n", uroce_wc_status_name(UROCE_WC_RETRY_EXC_ERR));
	return uroce_open_device("/nonexistent/uroce.sock") == nullptr ? 0 : 1;
}
CXX
if c++ $CFLAGS $SAN -o "$WORK/cxx" "$WORK/cxx.cc" $LIBS 2>"$WORK/cxx.err" &&
	out=$(LD_LIBRARY_PATH=$LIBDIR "$WORK/cxx") && [ "$out" = RETRY_EXC_ERR ]; then
	pass "a C++ program links and calls liburoce"
else
	fail "C++ program: $(head -5 "$WORK/cxx.err") ${out:-}"
fi

# Exports: the functions the public headers declare, and nothing else.
python3 -c 'import re, sys
names = set()
for f in sys.argv[1:]:
    text = re.sub(r"/\*.*?\*/", "", open(f).read(), flags=re.S)
    names |= set(re.findall(r"\b(uroce_[a-z0-9_]+)\s*\(", text))
    names -= set(re.findall(r"static\s+inline\b[^;{]*?\b(uroce_[a-z0-9_]+)\s*\(", text))
print("\n".join(sorted(names)))' "$INCDIR"/uroce_verbs.h "$INCDIR"/uroce_verbs_defs.h >"$WORK/declared"
soname=$(readelf -d "$LIBDIR/liburoce.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = liburoce.so.1 ] && pass "SONAME $soname" || fail "SONAME '$soname'"
nm -D --defined-only "$LIBDIR/liburoce.so" | awk '$2 ~ /[TWDBR]/ { print $3 }' |
	sed 's/@.*//' | sort -u >"$WORK/exported"
if [ ! -s "$WORK/declared" ]; then
	fail "no uroce_* function found in the installed uroce_verbs.h"
elif diff "$WORK/declared" "$WORK/exported" >"$WORK/diff"; then
	pass "liburoce.so exports the $(wc -l <"$WORK/declared") declared functions only"
else
	fail "liburoce.so exports differ from the public declarations (< declared, > exported): $(cat "$WORK/diff")"
fi
nm -g --defined-only "$LIBDIR/liburoce.a" 2>/dev/null | awk 'NF == 3 { print $3 }' |
	sort -u >"$WORK/a-global"
if diff "$WORK/declared" "$WORK/a-global" >"$WORK/diff"; then
	pass "liburoce.a: the same globals (internal names are local)"
else
	fail "liburoce.a globals differ: $(cat "$WORK/diff")"
fi

# An example, built with pkg-config alone, on a daemon.
SOCK=$WORK/lite.sock
"$LITE" "$SOCK" >"$WORK/lite.log" 2>&1 &
LITE_PID=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || { cat "$WORK/lite.log"; fail "uroced_lite did not start"; exit 1; }
EX="$SRC/examples/rc_pingpong.c $SRC/examples/example_util.c"

# run_example KIND BINARY SIZE [LD_LIBRARY_PATH]: 50 round trips on the daemon.
run_example() {
	local out
	if out=$(LD_LIBRARY_PATH=${4:-} timeout 60 "$2" "$SOCK" 50 "$3" 2>&1) &&
		echo "$out" | grep -q "^rc_pingpong: 50 round trips of $3 bytes"; then
		pass "$1: $out"
	else
		fail "rc_pingpong ($1) on uroced_lite: $out"
	fi
}

if cc $CFLAGS $SAN -o "$WORK/rc_pingpong" $EX $LIBS 2>"$WORK/cc.err"; then
	pass "rc_pingpong built: cc \$(pkg-config --cflags) ... \$(pkg-config --libs)"
	LD_LIBRARY_PATH=$LIBDIR ldd "$WORK/rc_pingpong" | grep -q "liburoce.so.1 => $LIBDIR/" ||
		fail "rc_pingpong does not load the installed liburoce: $(LD_LIBRARY_PATH=$LIBDIR ldd "$WORK/rc_pingpong" | grep uroce)"
	run_example shared "$WORK/rc_pingpong" 64 "$LIBDIR"
else
	fail "rc_pingpong does not build against the installed tree: $(head -5 "$WORK/cc.err")"
fi
# Static: the archive, plus what pkg-config --static adds.
if cc $CFLAGS $SAN -o "$WORK/rc_static" $EX "$LIBDIR/liburoce.a" \
	$(pkg-config --static --libs-only-other --libs-only-l liburoce | sed 's/-luroce//') \
	2>"$WORK/cc.err"; then
	if ldd "$WORK/rc_static" | grep -q liburoce; then
		fail "rc_pingpong (static) still loads liburoce.so"
	else
		run_example static "$WORK/rc_static" 4096
	fi
else
	fail "rc_pingpong does not link statically: $(head -5 "$WORK/cc.err")"
fi

[ "$FAILS" -eq 0 ] || { echo "$TAG: $FAILS failure(s)"; exit 1; }
echo "$TAG: all passed"
