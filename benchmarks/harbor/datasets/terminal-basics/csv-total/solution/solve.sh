#!/bin/bash
set -euo pipefail
python3 -c "import csv; print(f'{sum(int(r[\"qty\"])*float(r[\"price\"]) for r in csv.DictReader(open(\"/app/sales.csv\"))):.2f}')" > /app/total.txt
