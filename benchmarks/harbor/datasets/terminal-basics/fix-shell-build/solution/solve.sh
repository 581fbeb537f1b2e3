#!/bin/bash
set -euo pipefail
sed -i 's/-C \/app sources/-C \/app src/' /app/build.sh && /app/build.sh
