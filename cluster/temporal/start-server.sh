#!/usr/bin/env bash
# Starts all four Temporal services in one process, bound to this container's address so that
# published ports and the compose network both reach the frontend.
set -euo pipefail
BIND_ON_IP="${BIND_ON_IP:-$(getent hosts "$(hostname)" | awk '{print $1; exit}')}"
export BIND_ON_IP
exec temporal-server --config-file /etc/temporal/config/config-template.yaml --allow-no-auth start
