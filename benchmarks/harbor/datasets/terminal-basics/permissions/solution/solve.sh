#!/bin/bash
set -euo pipefail
chmod 755 /app/job.sh && /app/job.sh
