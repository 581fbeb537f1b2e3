#!/bin/bash
set -euo pipefail
nohup /app/worker.sh >/dev/null 2>&1 &
echo $! > /app/worker.pid
sleep 2
