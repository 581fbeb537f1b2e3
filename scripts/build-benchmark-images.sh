#!/usr/bin/env bash
# Builds the host images that built-in benchmarks preload into their own daemon (docker_images).
# No registry is needed: each builds FROM the local base image. Idempotent; a cached build is quick.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
DOCKER_BUILDKIT=0 docker build --quiet --tag benchrouter/bench-postgres:15 "$here/benchmark-images/postgres"
