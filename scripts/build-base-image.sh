#!/usr/bin/env bash
# Builds the base image every built-in environment starts FROM, with no container registry:
# debootstrap a minimal Debian rootfs and `docker import` it. Skips when the image exists.
set -euo pipefail

IMAGE="${BENCHROUTER_BASE_IMAGE:-benchrouter/base:bookworm}"
SUITE="${BENCHROUTER_BASE_SUITE:-bookworm}"
PACKAGES="python3,curl,ca-certificates"
say() { printf '[bootstrap] %s\n' "$*"; }

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
  say "base image $IMAGE: ready"
  exit 0
fi

# Use the mirror the host's apt already uses, so the build works wherever apt does.
MIRROR="${BENCHROUTER_DEBIAN_MIRROR:-}"
if [ -z "$MIRROR" ]; then
  MIRROR=$(grep -rhoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
    | head -1 | sed -E 's/^(URIs:|deb) +//; s/ +$//' || true)
fi
MIRROR="${MIRROR:-http://deb.debian.org/debian}"

if ! command -v debootstrap >/dev/null 2>&1; then
  say "installing debootstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

rootfs=$(mktemp -d /tmp/benchrouter-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
say "building base image $IMAGE: debootstrap $SUITE from $MIRROR (about a minute)"
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$rootfs" "$MIRROR" >/tmp/benchrouter-debootstrap.log 2>&1 \
  || { say "debootstrap failed; see /tmp/benchrouter-debootstrap.log"; exit 1; }
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["/bin/bash"]' - "$IMAGE" >/dev/null
say "base image $IMAGE: built"
