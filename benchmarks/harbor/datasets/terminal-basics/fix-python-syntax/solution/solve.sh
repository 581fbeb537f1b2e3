#!/bin/bash
set -euo pipefail
sed -i 's/^def add(a, b)$/def add(a, b):/' /app/calc/ops.py
