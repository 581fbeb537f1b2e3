#!/bin/bash
set -euo pipefail
cd /app/site && nohup python3 -m http.server 8000 >/tmp/http.log 2>&1 &
sleep 2
