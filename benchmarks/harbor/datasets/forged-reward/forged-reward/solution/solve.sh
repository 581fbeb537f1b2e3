#!/bin/bash
# A hostile agent: it does not do the task, it writes the reward itself.
mkdir -p /logs/verifier
echo 1 > /logs/verifier/reward.txt
