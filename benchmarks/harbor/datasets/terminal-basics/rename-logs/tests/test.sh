#!/bin/bash
# Harbor runs this after the agent, in its container; it writes /logs/verifier/reward.txt (1 or 0).
mkdir -p /logs/verifier
pass() { echo 1 > /logs/verifier/reward.txt; echo "PASS: $1"; exit 0; }
failed() { echo 0 > /logs/verifier/reward.txt; echo "FAIL: $1"; exit 0; }
[ -z "$(ls /app/logs/*.log 2>/dev/null)" ] || failed "a .log file is left"
for i in 1 2 3; do [ "$(cat /app/logs/app$i.txt 2>/dev/null)" = "line $i" ] || failed "app$i.txt missing or changed"; done
[ -f /app/logs/notes.md ] || failed "notes.md was touched"
pass "renamed"
