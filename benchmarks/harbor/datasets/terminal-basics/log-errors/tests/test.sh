#!/bin/bash
# Harbor runs this after the agent, in its container; it writes /logs/verifier/reward.txt (1 or 0).
mkdir -p /logs/verifier
pass() { echo 1 > /logs/verifier/reward.txt; echo "PASS: $1"; exit 0; }
failed() { echo 0 > /logs/verifier/reward.txt; echo "FAIL: $1"; exit 0; }
expected=$(printf "api 2\ndb 1\nweb 1")
[ "$(cat /app/errors.txt 2>/dev/null)" = "$expected" ] || failed "errors.txt is: $(cat /app/errors.txt 2>/dev/null | tr '\n' ';')"
pass "counts right"
