#!/bin/bash
set -euo pipefail
awk '$3 == "ERROR" {n[$2]++} END {for (s in n) print s, n[s]}' /app/app.log | sort > /app/errors.txt
