#!/bin/bash
# Harbor runs this after the agent, in its container; it writes /logs/verifier/reward.txt (1 or 0).
mkdir -p /logs/verifier
pass() { echo 1 > /logs/verifier/reward.txt; echo "PASS: $1"; exit 0; }
failed() { echo 0 > /logs/verifier/reward.txt; echo "FAIL: $1"; exit 0; }
[ -d /app/project/tests ] || failed "no tests dir"
[ -f /app/project/src/__init__.py ] && [ ! -s /app/project/src/__init__.py ] || failed "__init__.py missing or not empty"
[ "$(cat /app/project/README.md 2>/dev/null)" = "# project" ] || failed "README.md"
pass "tree made"
