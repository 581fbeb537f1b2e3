#!/bin/bash
# Harbor runs this after the agent, in its container; it writes /logs/verifier/reward.txt (1 or 0).
mkdir -p /logs/verifier
pass() { echo 1 > /logs/verifier/reward.txt; echo "PASS: $1"; exit 0; }
failed() { echo 0 > /logs/verifier/reward.txt; echo "FAIL: $1"; exit 0; }
tar -tzf /app/dist/release.tar.gz 2>/dev/null | grep -qx "src/main.py" || failed "release.tar.gz does not hold src/main.py"
/app/build.sh >/dev/null 2>&1 || failed "build.sh still fails"
pass "builds"
