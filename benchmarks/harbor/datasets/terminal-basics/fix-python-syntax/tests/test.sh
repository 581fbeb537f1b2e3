#!/bin/bash
# Harbor runs this after the agent, in its container; it writes /logs/verifier/reward.txt (1 or 0).
mkdir -p /logs/verifier
pass() { echo 1 > /logs/verifier/reward.txt; echo "PASS: $1"; exit 0; }
failed() { echo 0 > /logs/verifier/reward.txt; echo "FAIL: $1"; exit 0; }
cd /app && python3 -c "from calc.ops import add, mul; assert add(2, 3) == 5 and mul(4, 5) == 20" || failed "calc.ops does not import or compute"
pass "fixed"
