#!/usr/bin/env bash
# Builds the base image every built-in environment starts FROM, with no container registry:
# debootstrap a minimal Debian rootfs and `docker import` it (benchrouter/base-rootfs), then add
# this host's CA trust on top (benchrouter/base). Each step skips when its result is current.
#
# CA trust: where egress goes through a TLS-intercepting proxy, the host trusts extra CAs under
# /usr/local/share/ca-certificates/. The base image carries the same certificates in its system
# bundle and points pip, requests, OpenSSL, curl and Node at it, so a benchmark's Dockerfile
# FROM it installs from registries without knowing about the proxy. The image is labelled with a
# digest of those certificates and rebuilt (one small layer) when they change.
set -euo pipefail

IMAGE="${BENCHROUTER_BASE_IMAGE:-benchrouter/base:bookworm}"
ROOTFS_IMAGE="${BENCHROUTER_ROOTFS_IMAGE:-benchrouter/base-rootfs:bookworm}"
SUITE="${BENCHROUTER_BASE_SUITE:-bookworm}"
CA_DIR="${BENCHROUTER_EXTRA_CA_DIR:-/usr/local/share/ca-certificates}"
PACKAGES="python3,curl,ca-certificates"
say() { printf '[bootstrap] %s\n' "$*"; }
label() { docker image inspect --format "{{index .Config.Labels \"$2\"}}" "$1" 2>/dev/null || true; }

# The extra CAs, sorted by name: their digest decides whether the CA layer is current.
mapfile -t cas < <(find "$CA_DIR" -maxdepth 2 -type f -name '*.crt' 2>/dev/null | LC_ALL=C sort)
ca_digest=$( { printf 'rootfs=%s\n' "$ROOTFS_IMAGE"; for f in "${cas[@]}"; do printf '%s\n' "${f#"$CA_DIR"/}"; cat "$f"; done; } | sha256sum | cut -d' ' -f1)

if [ "$(label "$IMAGE" benchrouter.ca.digest)" = "$ca_digest" ] && docker image inspect "$ROOTFS_IMAGE" >/dev/null 2>&1; then
  say "base image $IMAGE: ready"
  exit 0
fi

# A base image from before the CA layer existed is the rootfs itself: keep it rather than
# debootstrapping again.
if ! docker image inspect "$ROOTFS_IMAGE" >/dev/null 2>&1 && docker image inspect "$IMAGE" >/dev/null 2>&1 && [ -z "$(label "$IMAGE" benchrouter.ca.digest)" ]; then
  docker tag "$IMAGE" "$ROOTFS_IMAGE"
fi

if ! docker image inspect "$ROOTFS_IMAGE" >/dev/null 2>&1; then
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
  say "building $ROOTFS_IMAGE: debootstrap $SUITE from $MIRROR (about a minute)"
  debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$rootfs" "$MIRROR" >/tmp/benchrouter-debootstrap.log 2>&1 \
    || { say "debootstrap failed; see /tmp/benchrouter-debootstrap.log"; exit 1; }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["/bin/bash"]' - "$ROOTFS_IMAGE" >/dev/null
fi

context=$(mktemp -d /tmp/benchrouter-base-ca.XXXXXX)
trap 'rm -rf "$context" "${rootfs:-}"' EXIT
mkdir -p "$context/extra-ca"
for f in "${cas[@]}"; do cp "$f" "$context/extra-ca/$(printf '%s' "${f#"$CA_DIR"/}" | tr '/' '_')"; done
cat >"$context/Dockerfile" <<DOCKERFILE
FROM $ROOTFS_IMAGE
COPY extra-ca/ /usr/local/share/ca-certificates/benchrouter-host/
RUN update-ca-certificates >/dev/null 2>&1
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \\
    REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \\
    CURL_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \\
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt \\
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
LABEL benchrouter.ca.digest=$ca_digest
DOCKERFILE
say "base image $IMAGE: adding the host's CA trust (${#cas[@]} extra certificate(s)) to $ROOTFS_IMAGE"
DOCKER_BUILDKIT=0 docker build -t "$IMAGE" "$context" >/tmp/benchrouter-base-ca.log 2>&1 \
  || { say "docker build failed; see /tmp/benchrouter-base-ca.log"; tail -n 20 /tmp/benchrouter-base-ca.log | sed 's/^/[bootstrap]   /'; exit 1; }
say "base image $IMAGE: built"
