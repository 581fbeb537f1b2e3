#!/usr/bin/env bash
# Builds the DinD runtime image (`docker: true` tasks) from runtime/dind, FROM the local base
# image, with no container registry (docker.io comes from the Debian mirror). Skips when the
# image exists and its benchrouter.dind.digest label matches the runtime/dind contents.
set -euo pipefail

IMAGE="${BENCHROUTER_DIND_IMAGE:-benchrouter/dind:bookworm}"
BASE_IMAGE="${BENCHROUTER_BASE_IMAGE:-benchrouter/base:bookworm}"
CONTEXT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../runtime/dind" && pwd)"
say() { printf '[bootstrap] %s\n' "$*"; }

# sha256 over the sorted relative paths and contents of every file in runtime/dind (and the
# id of the base image, which the build depends on: a new CA layer rebuilds it).
digest=$(
  cd "$CONTEXT"
  { printf 'base=%s\n' "$(docker image inspect --format '{{.Id}}' "$BASE_IMAGE" 2>/dev/null || echo "$BASE_IMAGE")"
    find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
  } | sha256sum | cut -d' ' -f1
)

current=$(docker image inspect --format '{{index .Config.Labels "benchrouter.dind.digest"}}' "$IMAGE" 2>/dev/null || true)
old_id=$(docker image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
if [ "$current" = "$digest" ]; then
  say "dind image $IMAGE: ready"
  exit 0
fi

if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  say "dind image $IMAGE needs the base image $BASE_IMAGE; run scripts/build-base-image.sh first"
  exit 1
fi

if [ -n "$current" ]; then
  say "dind image $IMAGE: runtime/dind changed, rebuilding"
else
  say "building dind image $IMAGE from $BASE_IMAGE (installs docker.io from the Debian mirror)"
fi
log=/tmp/benchrouter-dind-build.log
docker build --pull=false --build-arg "BASE_IMAGE=$BASE_IMAGE" \
  --label "benchrouter.dind.digest=$digest" -t "$IMAGE" "$CONTEXT" >"$log" 2>&1 \
  || { say "docker build failed; see $log"; tail -n 20 "$log" | sed 's/^/[bootstrap]   /'; exit 1; }
# Drop the superseded build (untagged now); ignore failure if a container still uses it.
if [ -n "$old_id" ] && [ "$old_id" != "$(docker image inspect --format '{{.Id}}' "$IMAGE")" ]; then
  docker rmi "$old_id" >/dev/null 2>&1 || true
fi
say "dind image $IMAGE: built"
