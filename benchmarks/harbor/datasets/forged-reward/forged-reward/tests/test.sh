#!/bin/bash
# A sloppy verifier: it writes a reward only when the task was done.
set -e
test -f /app/done
mkdir -p /logs/verifier
echo 1 > /logs/verifier/reward.txt
