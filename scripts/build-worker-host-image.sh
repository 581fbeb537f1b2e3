#!/usr/bin/env bash
# Builds the worker-host image of the compose stack (cluster/worker-host/), with no registry:
#   1. benchrouter/worker-host-deps:<hash>  the DinD image + node + node_modules, tagged by the content of
#      node, package-lock.json, the DinD image's id and Dockerfile.deps;
#   2. benchrouter/worker-host:<hash>       that + this checkout (tracked and untracked, not ignored files),
#      tagged by the deps tag and the checkout's content;
#   3. <out>/preload/<hash>.tar             `docker save` of the base and DinD images, tagged by their ids:
#      each host loads it into its own daemon at start (benchmark images build FROM the base, `docker: true`
#      tasks run the DinD image).
# An input that did not change reuses what exists. Prints `image=<tag>` and `preload=<dir>` on stdout.
# Usage: scripts/build-worker-host-image.sh <out dir>
#        scripts/build-worker-host-image.sh --cached   exit 0 when the dependencies image (the slow one) exists
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: $0 <out dir> | --cached}"
context="$repo/cluster/worker-host"
dind="${BENCHROUTER_DIND_IMAGE:-benchrouter/dind:bookworm}"
base="${BENCHROUTER_BASE_IMAGE:-benchrouter/base:bookworm}"
say() { printf '[worker-host] %s\n' "$*" >&2; }
hash() { sha256sum | cut -c1-16; }
image_exists() { docker image inspect "$1" >/dev/null 2>&1; }
timed() { local start=$SECONDS; "$@"; say "  took $((SECONDS - start)) s"; }

for image in "$base" "$dind"; do
  image_exists "$image" || { [[ "$out" == --cached ]] && exit 1; say "$image is missing: run scripts/bootstrap.sh (it builds the base and DinD images) first"; exit 1; }
done
node_bin="$(command -v node)"
modules="$(realpath "$repo/node_modules")"
[[ -d "$modules" ]] || { say "$repo/node_modules is missing: run npm ci first"; exit 1; }
dind_id="$(docker image inspect -f '{{.Id}}' "$dind")"

deps_tag="$( { cat "$node_bin" "$repo/package-lock.json" "$context/Dockerfile.deps"; echo "$dind_id $repo"; } | hash)"
deps="benchrouter/worker-host-deps:$deps_tag"
if [[ "$out" == --cached ]]; then
  image_exists "$deps"
  exit
fi
if ! image_exists "$deps"; then
  say "building $deps (node and node_modules on $dind)"
  build_deps() {
    # The context is a tar stream: node_modules may be a symlink to another checkout's (as in a worktree).
    tar -c -C "$(dirname "$node_bin")" node -C "$(dirname "$modules")" "$(basename "$modules")" -C "$context" Dockerfile.deps \
      | docker build --pull=false -q -f Dockerfile.deps --build-arg "DIND_IMAGE=$dind" --build-arg "REPO_DIR=$repo" -t "$deps" - >/dev/null
  }
  timed build_deps
fi

# The checkout as git sees it (committed, modified and untracked files, not ignored ones), without what a host
# never reads (node_modules comes from the deps image; the compose file and the scripts that
# build and start the hosts, docs, CI and test files, but not test fixtures:
# benchmarks live there too), so that editing a test or a page does not rebuild the host image.
files() {
  git -C "$repo" ls-files -z -co --exclude-standard \
    | grep -zvE '^(node_modules$|docker-compose\.yml$|scripts/(cluster|build-worker-host-image)\.sh$|docs/|\.ci/|README\.md$|test/.*\.test\.ts$)' | LC_ALL=C sort -z
}
tree_tag="$( { echo "$deps_tag"; cat "$context/Dockerfile"; files | (cd "$repo" && xargs -0 sha256sum); } | hash)"
image="benchrouter/worker-host:$tree_tag"
if ! image_exists "$image"; then
  say "building $image (this checkout on $deps)"
  build_host() {
    files | tar -c -C "$repo" --null -T - --transform 's,^,project/,' -f - \
      | docker build --pull=false -q -f project/cluster/worker-host/Dockerfile --build-arg "DEPS_IMAGE=$deps" --build-arg "REPO_DIR=$repo" -t "$image" - >/dev/null
  }
  timed build_host
fi

preload="$out/preload"
archive="$preload/$( { docker image inspect -f '{{.Id}}' "$base"; echo "$dind_id"; } | hash).tar"
if [[ ! -s "$archive" ]]; then
  say "saving $base and $dind to $archive (each host loads them into its own daemon)"
  mkdir -p "$preload"
  find "$preload" -name '*.tar' -delete
  timed docker save -o "$archive.partial" "$base" "$dind"
  mv "$archive.partial" "$archive"
fi
echo "image=$image"
echo "preload=$preload"
