#!/bin/bash
# Harbor runs this after the agent, in its container; it writes /logs/verifier/reward.txt (1 or 0).
mkdir -p /logs/verifier
pass() { echo 1 > /logs/verifier/reward.txt; echo "PASS: $1"; exit 0; }
failed() { echo 0 > /logs/verifier/reward.txt; echo "FAIL: $1"; exit 0; }
[ "$(stat -c %a /app/job.sh)" = "755" ] || failed "mode is $(stat -c %a /app/job.sh)"
[ "$(cat /app/ran.txt 2>/dev/null)" = "ran" ] || failed "the script did not run"
pass "executable and ran"
