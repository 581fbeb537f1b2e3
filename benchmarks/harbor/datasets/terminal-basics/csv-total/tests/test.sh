#!/bin/bash
# Harbor runs this after the agent, in its container; it writes /logs/verifier/reward.txt (1 or 0).
mkdir -p /logs/verifier
pass() { echo 1 > /logs/verifier/reward.txt; echo "PASS: $1"; exit 0; }
failed() { echo 0 > /logs/verifier/reward.txt; echo "FAIL: $1"; exit 0; }
[ "$(cat /app/total.txt 2>/dev/null | tr -d "[:space:]")" = "5.00" ] || failed "total is $(cat /app/total.txt 2>/dev/null)"
pass "total right"
