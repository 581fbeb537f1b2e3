#!/bin/bash
# Harbor runs this after the agent, in its container; it writes /logs/verifier/reward.txt (1 or 0).
mkdir -p /logs/verifier
pass() { echo 1 > /logs/verifier/reward.txt; echo "PASS: $1"; exit 0; }
failed() { echo 0 > /logs/verifier/reward.txt; echo "FAIL: $1"; exit 0; }
for i in $(seq 1 10); do body=$(curl -fsS http://127.0.0.1:8000/index.html 2>/dev/null) && break; sleep 1; done
[ "$body" = "<h1>hello</h1>" ] || failed "nothing serves /app/site on port 8000"
pass "served"
