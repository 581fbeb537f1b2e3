#!/usr/bin/env bash
# The production Temporal cluster (docker-compose.yml) on this machine:
#   scripts/cluster.sh up       build what is missing, start, wait until healthy
#   scripts/cluster.sh up --hosts N
#                               the same and N evaluation hosts (host-1 .. host-N of docker-compose.yml),
#                               each a container with its own Docker daemon, home and client certificate
#   scripts/cluster.sh status   one line per service
#   scripts/cluster.sh prebuild build the Go binaries of the server images when those images are missing
#                               (into their cache only; `up` then finds them)
#   scripts/cluster.sh cached   exit 0 when up --hosts N would build nothing slow (its images exist)
#   scripts/cluster.sh down     stop and remove the containers (data stays on its volume;
#                               `down --volumes` deletes it)
# Certificates: BENCHROUTER_CLUSTER_TLS_DIR, made by cluster/make-certs.sh when it has no CA yet.
# Operations: docs/production-cluster.md.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
home="${BENCHROUTER_HOME:-$HOME/.benchrouter}"
export BENCHROUTER_CLUSTER_TLS_DIR="${BENCHROUTER_CLUSTER_TLS_DIR:-$home/cluster-tls}"
export TEMPORAL_SERVER_VERSION="${TEMPORAL_SERVER_VERSION:-v1.32.2}"
# The UI server's version is pinned by the module that builds it.
export TEMPORAL_UI_SERVER_VERSION="$(awk '$1 == "github.com/temporalio/ui-server/v2" { print $2; exit }' "$repo/cluster/ui/go/go.mod")"
# The API image carries this checkout at this checkout's path (runs name benchmark directories by
# path), tagged by the committed tree: a new commit builds a new image, an unchanged one reuses it.
export BENCHROUTER_REPO_DIR="$repo"
# ... and its node_modules where it really is (a worktree's is a symlink to another checkout's, which the
# API container would not see through the checkout's mount alone).
export BENCHROUTER_NODE_MODULES_DIR="$(realpath "$repo/node_modules")"
# The API image holds node and nothing of this checkout (which it mounts): tagged by node's and its
# Dockerfile's content, so it is built once per node version, not once per commit.
api_image_inputs() { cat "$(command -v node)" "$repo/cluster/api/Dockerfile"; }
export BENCHROUTER_API_IMAGE_TAG="${BENCHROUTER_API_IMAGE_TAG:-$(api_image_inputs | sha256sum | cut -c1-12)}"
# The server image holds this checkout's scripts and configuration beside the binaries: tagged by the server
# version and their content, so a changed script (a new search attribute) builds a new image, an unchanged one
# is reused.
temporal_image_inputs() { cat "$repo"/cluster/temporal/*; }
export BENCHROUTER_TEMPORAL_IMAGE_TAG="${BENCHROUTER_TEMPORAL_IMAGE_TAG:-$TEMPORAL_SERVER_VERSION-$(temporal_image_inputs | sha256sum | cut -c1-12)}"
compose() { docker-compose --project-directory "$repo" -f "$repo/docker-compose.yml" "$@"; }

command -v docker-compose >/dev/null || { echo "scripts/cluster.sh: docker-compose not found; install Debian's package: apt-get install docker-compose" >&2; exit 1; }

image_missing() { ! docker image inspect "$1" >/dev/null 2>&1; }
# The images built from the Go binaries (cluster/build-binaries.sh): when one is missing, the binaries are needed.
server_images_missing() {
  image_missing "benchrouter/cluster-temporal:$BENCHROUTER_TEMPORAL_IMAGE_TAG" || image_missing "benchrouter/cluster-temporal-ui:$TEMPORAL_UI_SERVER_VERSION"
}

api_healthy() {
  local api
  api="$(compose ps -q api)"
  [[ -n "$api" && "$(docker inspect -f '{{.State.Health.Status}}' "$api")" == healthy ]]
}

wait_healthy() {
  local deadline=$((SECONDS + ${BENCHROUTER_CLUSTER_WAIT_SECONDS:-300}))
  local setup
  while :; do
    setup="$(compose ps -q temporal-setup)"
    if [[ -n "$setup" ]]; then
      local state code
      state="$(docker inspect -f '{{.State.Status}}' "$setup")"
      code="$(docker inspect -f '{{.State.ExitCode}}' "$setup")"
      if [[ "$state" == exited && "$code" == 0 ]]; then
        # The namespace is ready; the API server connects to it and answers soon after.
        if api_healthy; then break; fi
      elif [[ "$state" == exited ]]; then
        compose logs --tail 40 temporal-setup temporal >&2
        echo "scripts/cluster.sh: temporal-setup exited with code $code (logs above)" >&2
        return 1
      fi
    fi
    if ((SECONDS > deadline)); then
      compose logs --tail 40 >&2
      echo "scripts/cluster.sh: the cluster was not ready within ${BENCHROUTER_CLUSTER_WAIT_SECONDS:-300} s (logs above)" >&2
      return 1
    fi
    sleep 1
  done
  echo "cluster ready: frontend ${BENCHROUTER_CLUSTER_BIND:-0.0.0.0}:${BENCHROUTER_CLUSTER_PORT:-7233} (mTLS, CA $BENCHROUTER_CLUSTER_TLS_DIR/ca.pem), Web UI http://localhost:${BENCHROUTER_CLUSTER_UI_PORT:-8080}, API http://localhost:${BENCHROUTER_CLUSTER_API_PORT:-8391}"
  # What a client on this machine sets to use it (each user and host gets a certificate of its own).
  cat <<CLIENT
to use it from this machine: cluster/make-certs.sh $BENCHROUTER_CLUSTER_TLS_DIR client \$USER, then
  export TEMPORAL_ADDRESS=127.0.0.1:${BENCHROUTER_CLUSTER_PORT:-7233} TEMPORAL_TLS_CA=$BENCHROUTER_CLUSTER_TLS_DIR/ca.pem
  export TEMPORAL_TLS_CERT=$BENCHROUTER_CLUSTER_TLS_DIR/\$USER.pem TEMPORAL_TLS_KEY=$BENCHROUTER_CLUSTER_TLS_DIR/\$USER-key.pem
  export BENCHROUTER_WEB_UI=http://localhost:${BENCHROUTER_CLUSTER_UI_PORT:-8080} BENCHROUTER_API_URL=http://localhost:${BENCHROUTER_CLUSTER_API_PORT:-8391}
CLIENT
}

# Each host's own Docker daemon answers (its healthcheck: the preloaded images are loaded before it starts
# the worker, which then connects to the frontend).
wait_hosts() {
  local deadline=$((SECONDS + ${BENCHROUTER_CLUSTER_WAIT_SECONDS:-300})) n id ready
  while :; do
    ready=0
    for ((n = 1; n <= $1; n++)); do
      id="$(compose ps -q "host-$n")"
      [[ -n "$id" && "$(docker inspect -f '{{.State.Health.Status}}' "$id")" == healthy ]] && ready=$((ready + 1))
    done
    ((ready == $1)) && break
    if ((SECONDS > deadline)); then
      compose logs --tail 40 $(seq -f 'host-%g' 1 "$1") >&2
      echo "scripts/cluster.sh: $ready of $1 worker hosts had their Docker daemon up within ${BENCHROUTER_CLUSTER_WAIT_SECONDS:-300} s (logs above)" >&2
      return 1
    fi
    sleep 1
  done
  echo "worker hosts ready: $(seq -s ' ' -f 'host-%g' 1 "$1") (each its own Docker daemon; \`docker-compose exec host-1 docker ps\` shows its containers)"
}

# The host ports the cluster publishes must be free: Docker's own refusal ("bind: address already in use")
# names neither who holds the port nor what to do. The usual holder is `br up`'s embedded server.
check_ports() {
  local busy=0 port label var holder own
  # Our own containers hold them once the cluster is up: that is not a conflict.
  own=" $(compose ps -q 2>/dev/null | xargs -r docker inspect -f '{{range $p, $b := .NetworkSettings.Ports}}{{range $b}}{{.HostPort}} {{end}}{{end}}' | tr '\n' ' ') "
  while IFS='|' read -r port label var; do
    [[ "$own" == *" $port "* ]] && continue
    ss -Hltn "sport = :$port" 2>/dev/null | grep -q . || continue
    busy=1
    holder="$(ss -Hltnp "sport = :$port" 2>/dev/null | grep -o 'users:(("[^"]*",pid=[0-9]*' | head -1 | sed -E 's/users:\(\("([^"]*)",pid=([0-9]*)/\1 (pid \2)/')"
    echo "scripts/cluster.sh: port $port, where the cluster publishes its $label, is in use${holder:+ by $holder}" >&2
    if [[ "$holder" == temporal* ]]; then
      echo "  a Temporal server, like the one `br up` starts: stop that with `./br down`, or publish the cluster elsewhere: $var=<free port> scripts/cluster.sh up" >&2
    else
      echo "  stop that process, or publish the cluster elsewhere: $var=<free port> scripts/cluster.sh up" >&2
    fi
  done <<PORTS
${BENCHROUTER_CLUSTER_PORT:-7233}|frontend|BENCHROUTER_CLUSTER_PORT
${BENCHROUTER_CLUSTER_UI_PORT:-8080}|Web UI|BENCHROUTER_CLUSTER_UI_PORT
${BENCHROUTER_CLUSTER_API_PORT:-8391}|API|BENCHROUTER_CLUSTER_API_PORT
PORTS
  return "$busy"
}

# docker-compose checks the API's build context exists for every command, even when its image does.
mkdir -p "$repo/cluster/.bin/api"

case "${1:-}" in
  up)
    shift
    hosts=0
    while (($#)); do
      case "$1" in
        --hosts) hosts="${2:-}"; shift 2 || true ;;
        --hosts=*) hosts="${1#--hosts=}"; shift ;;
        *) echo "scripts/cluster.sh: unknown option $1 (usage: scripts/cluster.sh up [--hosts N])" >&2; exit 2 ;;
      esac
    done
    defined_hosts="$(compose config --services | grep -c '^host-[0-9]*$' || true)"
    if ! [[ "$hosts" =~ ^[0-9]+$ ]] || ((hosts > defined_hosts)); then
      echo "scripts/cluster.sh: --hosts wants a number from 0 to $defined_hosts (the host-N services of docker-compose.yml; add a block there for more), not '$hosts'" >&2
      exit 2
    fi
    "$repo/cluster/make-certs.sh" "$BENCHROUTER_CLUSTER_TLS_DIR"
    # The API server is a frontend client like any host: a certificate of its own.
    "$repo/cluster/make-certs.sh" "$BENCHROUTER_CLUSTER_TLS_DIR" client api >/dev/null
    if server_images_missing; then
      # The Go binaries are cached by module version; only a new version builds anything.
      "$repo/cluster/build-binaries.sh" "$repo/cluster/.bin"
    fi
    if image_missing "benchrouter/cluster-api:$BENCHROUTER_API_IMAGE_TAG"; then
      # The API image runs this machine's node (the version bootstrap.sh checked), staged into its context.
      cp "$(command -v node)" "$repo/cluster/.bin/api/node"
      cp "$repo/cluster/api/Dockerfile" "$repo/cluster/.bin/api/Dockerfile"
    fi
    # Every service but the hosts, then host-1 .. host-N.
    services=($(compose config --services | grep -v '^host-[0-9]*$'))
    if ((hosts > 0)); then
      # Each host its own client certificate (its identity to the frontend), like a host on another machine.
      for ((n = 1; n <= hosts; n++)); do
        "$repo/cluster/make-certs.sh" "$BENCHROUTER_CLUSTER_TLS_DIR" client "host-$n" >/dev/null
        services+=("host-$n")
      done
      built="$("$repo/scripts/build-worker-host-image.sh" "$repo/cluster/.bin")"
      export BENCHROUTER_WORKER_HOST_IMAGE="$(sed -n 's/^image=//p' <<<"$built")"
      export BENCHROUTER_WORKER_HOST_PRELOAD="$(sed -n 's/^preload=//p' <<<"$built")"
    fi
    check_ports || exit 1
    # Builds only images that do not exist yet (their tags carry the versions and the API image's content).
    compose up -d "${services[@]}"
    wait_healthy
    ((hosts == 0)) || wait_hosts "$hosts"
    ;;
  cached)
    # Exit 0 when `up --hosts N` would build nothing slow (the server's Go build, the worker hosts' npm layer):
    # .ci/run runs the three-host test only then.
    server_images_missing && exit 1
    for image in "benchrouter/cluster-api:$BENCHROUTER_API_IMAGE_TAG" benchrouter/cluster-postgresql:15; do
      image_missing "$image" && exit 1
    done
    "$repo/scripts/build-worker-host-image.sh" --cached
    ;;
  status)
    compose ps
    ;;
  prebuild)
    if server_images_missing; then
      "$repo/cluster/build-binaries.sh" --cache-only
    fi
    ;;
  down)
    shift
    compose down "$@"
    ;;
  *)
    echo "usage: scripts/cluster.sh up [--hosts N]|status|prebuild|cached|down [--volumes]" >&2
    exit 2
    ;;
esac
