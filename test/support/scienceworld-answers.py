#!/usr/bin/env python3
"""Writes test/fixtures/replay/scienceworld-test.jsonl, the replay model's canned answers for the scienceworld
fidelity test: the reference agent plays each episode below with the planned replies, as a run does (a fresh
simulator per episode, in the episode list's order), and every request it makes is written with its reply.
Most plans come from the simulator's own gold action sequences.

    docker run --rm -v $PWD/benchmarks/scienceworld:/app/benchmark:ro -v $PWD/test:/test \\
      benchrouter-env/scienceworld-scienceworld:<tag> python3 /test/support/scienceworld-answers.py
"""
import json, sys

sys.path.insert(0, "/app/benchmark")
import agent  # noqa: E402
from scienceworld import ScienceWorldEnv  # noqa: E402


def gold(sw, instance):
    task, variation = instance.rsplit("/", 1)
    sw.load(task, int(variation), "", generateGoldPath=True)
    return sw.get_gold_action_sequence()


sw = ScienceWorldEnv("", envStepLimit=agent.STEP_LIMIT)
planned = {
    # Solved by the gold path: 100.
    "lifespan-longest-lived/93": gold(sw, "lifespan-longest-lived/93"),
    "find-non-living-thing/225": gold(sw, "find-non-living-thing/225"),
    # The first 4 gold steps (paints poured and mixed, not yet focused on), then quit: 40.
    "chemistry-mix-paint-secondary-color/27": gold(sw, "chemistry-mix-paint-secondary-color/27")[:4] + ["quit"],
    # An answer that is no action (the simulator says so, no move), then a focus on the wrong thing: -100, scored 0.
    "find-living-thing/225": ["I would look for a plant.", "focus on door to hallway"],
}
sw.close()
order = open("/app/benchmark/tasks/test/episodes.txt").read().split()
plans = sorted(planned.items(), key=lambda plan: order.index(plan[0]))
lines = []
for instance, plan in plans:
    replies = iter(plan)

    def choose(messages, _instance):
        reply = next(replies)
        lines.append({"messages": messages, "content": reply})
        return reply, {}

    result = agent.play(instance, choose)
    print(f"{instance}: score {result['simulator_score']} after {result['steps']} steps", file=sys.stderr)
with open("/test/fixtures/replay/scienceworld-test.jsonl", "w") as out:
    out.writelines(json.dumps(line) + "\n" for line in lines)
