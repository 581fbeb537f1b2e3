#!/bin/bash
# Harbor runs this after the agent, in its container; it writes /logs/verifier/reward.txt (1 or 0).
mkdir -p /logs/verifier
pass() { echo 1 > /logs/verifier/reward.txt; echo "PASS: $1"; exit 0; }
failed() { echo 0 > /logs/verifier/reward.txt; echo "FAIL: $1"; exit 0; }
pid=$(cat /app/worker.pid 2>/dev/null) || failed "no worker.pid"
kill -0 "$pid" 2>/dev/null || failed "process $pid is not running"
# The worker writes every second; a loaded machine may hold it back for a while, so its next write is awaited up to 15 s.
before=$(cat /app/heartbeat 2>/dev/null)
for _ in $(seq 30); do
  sleep 0.5
  after=$(cat /app/heartbeat 2>/dev/null)
  [ -n "$after" ] && [ "$after" != "$before" ] && pass "worker alive"
done
failed "the heartbeat does not move"
