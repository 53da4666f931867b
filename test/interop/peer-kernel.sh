#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The uroce authors
#
# peer-kernel.sh - build the rxe peer image (../shared/peer/build-image.sh)
# with a kernel from Debian's bookworm-backports instead of bookworm's 6.1,
# into a cache of its own, so the default image stays what it is.
#
# rxe in 6.1 predates IBA 1.5's ATOMIC WRITE and FLUSH (Linux 6.2); the 6.12
# backports kernel has both. The VM's user space stays Debian 12 (rdma-core
# 44, perftest): only the kernel and its modules change.
#
# The backports source is known only to a private apt configuration
# (APT_CONFIG: its own sources list of bookworm, -updates, -security and
# -backports from ROCE_PEER_MIRROR, default http://deb.debian.org/debian,
# and its own package lists and cache under DIR/apt); the host's /etc/apt
# and its lists are never changed.
#
# usage: peer-kernel.sh [build|status|path] [--series 6.12] [--cache DIR]
#                       [--peer DIR] [--force]
#   build   (default) update the private lists, resolve the newest
#           linux-image-SERIES.*-amd64 of bookworm-backports, run
#           build-image.sh with KPKG and ROCE_PEER_CACHE=DIR
#   status  exit 0 when an image with a SERIES kernel is in DIR, else 1
#   path    print DIR
# Defaults: --series 6.12, --cache /var/cache/roce-peer-SERIES (env
# ROCE_PEER_CACHE_612 for 6.12), --peer ../shared/peer (env ROCE_PEER_DIR).
# Then run the peer with: run-peer.sh --cache DIR boot
set -euo pipefail

ACTION=build
SERIES=6.12
CACHE=
FORCE=()
PEER=${ROCE_PEER_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/peer}
MIRROR=${ROCE_PEER_MIRROR:-http://deb.debian.org/debian}
while [ $# -gt 0 ]; do
	case "$1" in
	build|status|path) ACTION=$1 ;;
	--series) SERIES=$2; shift ;;
	--cache) CACHE=$2; shift ;;
	--peer) PEER=$2; shift ;;
	--force) FORCE=(--force) ;;
	-h|--help) sed -n '5,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "peer-kernel.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
case "$SERIES" in
[0-9]*.[0-9]*) ;;
*) echo "peer-kernel.sh: --series wants MAJOR.MINOR, got '$SERIES'" >&2; exit 2 ;;
esac
if [ -z "$CACHE" ]; then
	CACHE=/var/cache/roce-peer-$SERIES
	[ "$SERIES" = 6.12 ] && CACHE=${ROCE_PEER_CACHE_612:-$CACHE}
fi
log() { echo "[peer-kernel] $*" >&2; }

case "$ACTION" in
path) echo "$CACHE"; exit 0 ;;
status)
	[ -f "$CACHE/image.env" ] && [ -f "$CACHE/vmlinuz" ] && [ -f "$CACHE/initrd.img" ] &&
		grep -q "^KVER=$SERIES\." "$CACHE/image.env"
	exit $?
	;;
esac

[ "$(id -u)" = 0 ] || { log "must run as root (build-image.sh writes $CACHE)"; exit 1; }
[ -x "$PEER/build-image.sh" ] || { log "no $PEER/build-image.sh (use --peer)"; exit 1; }

# Private apt state: the host's sources plus bookworm-backports. Backports
# is NotAutomatic (pin 100), so every user-space candidate stays the one the
# default image gets; only the kernel, named explicitly, comes from it.
STATE=$CACHE/apt
mkdir -p "$STATE/lists/partial" "$STATE/cache/archives/partial" "$STATE/sources.list.d"
{
	echo "deb $MIRROR bookworm main"
	echo "deb $MIRROR bookworm-updates main"
	echo "deb $MIRROR bookworm-backports main"
	echo "deb ${MIRROR%/debian}/debian-security bookworm-security main"
} >"$STATE/sources.list"
cat >"$STATE/apt.conf" <<EOF
Dir::Etc::sourcelist "$STATE/sources.list";
Dir::Etc::sourceparts "$STATE/sources.list.d";
Dir::State::lists "$STATE/lists";
Dir::Cache "$STATE/cache";
Acquire::Languages "none";
EOF
export APT_CONFIG=$STATE/apt.conf

# Lists younger than a day are kept (as build-image.sh does for the host).
fresh=$(find "$STATE/lists" -name '*backports*Packages*' -newermt '-1 day' 2>/dev/null | head -1)
if [ -z "$fresh" ]; then
	log "apt-get update (private lists in $STATE/lists)"
	apt-get update -qq >"$STATE/update.log" 2>&1 ||
		{ cat "$STATE/update.log" >&2; exit 1; }
fi

# The newest image package of the generic flavour (not -rt, -cloud,
# -unsigned or -dbg).
esc=${SERIES//./\\.}
KPKG=$(apt-cache pkgnames "linux-image-$SERIES" 2>/dev/null |
	grep -E "^linux-image-$esc\.[0-9]+[^-]*-amd64$" | sort -V | tail -1)
[ -n "$KPKG" ] || { log "no linux-image-$SERIES.*-amd64 in bookworm-backports"; exit 1; }
log "kernel package: $KPKG ($(apt-cache policy "$KPKG" | sed -n 's/^ *Candidate: //p'))"

KPKG=$KPKG ROCE_PEER_CACHE=$CACHE "$PEER/build-image.sh" --no-host-tools "${FORCE[@]}"
. "$CACHE/image.env"
log "image in $CACHE: KVER=$KVER; boot it with: $PEER/run-peer.sh --cache $CACHE boot"
