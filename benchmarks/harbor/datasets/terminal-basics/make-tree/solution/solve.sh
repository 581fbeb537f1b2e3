#!/bin/bash
set -euo pipefail
mkdir -p /app/project/src /app/project/tests && touch /app/project/src/__init__.py && echo "# project" > /app/project/README.md
