#!/bin/bash
# Harbor runs this after the agent, in its container; it writes /logs/verifier/reward.txt (1 or 0).
mkdir -p /logs/verifier
pass() { echo 1 > /logs/verifier/reward.txt; echo "PASS: $1"; exit 0; }
failed() { echo 0 > /logs/verifier/reward.txt; echo "FAIL: $1"; exit 0; }
python3 -c "import json,sys; sys.exit(json.load(open('/app/active.json')) != {'ada': 'ada@example.org', 'cy': 'cy@example.org'})" 2>/dev/null || failed "active.json is not the mapping of active users"
pass "mapping right"
