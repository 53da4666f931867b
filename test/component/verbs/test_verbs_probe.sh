#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# One drop-in probe (PROBE: verbs_mw, memory windows; verbs_aw, ATOMIC
# WRITE) through the drop-in libibverbs on uroced_lite (no DPDK, no root),
# run by uroce-run; the probe says what it expects. Exits 77 if the drop-in,
# uroce-run, uroced_lite or the probe is not built.
set -u
TAG=test_${PROBE##*/}
skip() { printf '%s: SKIP: %s\n' "$TAG" "$*"; exit 77; }
[ -n "${UROCE_RUN:-}" ] && [ -x "$UROCE_RUN" ] || skip "UROCE_RUN is not set"
[ -n "${UROCED_LITE:-}" ] && [ -x "$UROCED_LITE" ] || skip "UROCED_LITE is not set"
[ -n "${PROBE:-}" ] && [ -x "$PROBE" ] || skip "PROBE is not set"
WORK=$(mktemp -d "/tmp/uroce-$TAG-$$-XXXX")
SOCK="$WORK/lite.sock"
"$UROCED_LITE" "$SOCK" >"$WORK/lite.log" 2>&1 &
LITE=$!
trap 'kill $LITE 2>/dev/null; wait $LITE 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || { echo "$TAG: FAIL: uroced_lite did not start"; exit 1; }
UROCE_SOCKET="$SOCK" timeout 60 "$UROCE_RUN" "$PROBE"
