#!/usr/bin/env python3
"""Reference agent for MiniWoB++ through BrowserGym, the only code of ours in this benchmark: for each
episode (a MiniWoB environment and a seed) it shows the model the goal and the page's accessibility tree as
BrowserGym gives them, takes one action string in BrowserGym's own action set from the reply, and hands it
to env.step, which parses and runs it; the reward is BrowserGym's (MiniWoB's raw reward > 0).

    python3 /app/benchmark/agent.py --episodes episodes.jsonl
"""
import argparse, json, os, re, sys, time, urllib.error, urllib.request
from pathlib import Path

import gymnasium as gym
import browsergym.miniwob  # noqa: F401  (registers the browsergym/miniwob.* environments)
from browsergym.core.action.highlevel import HighLevelActionSet
from browsergym.utils.obs import flatten_axtree_to_str

MAX_STEPS = 10
# Element-id actions only (click('12'), fill('7', 'text'), select_option, press...): the tree names each id.
# BrowserGym gives an action 500 ms to find its element actionable ("stable" takes two animation frames),
# which a loaded machine can miss; retry_with_force, its own option, then acts without those checks, so a
# replayed episode does not depend on the machine's load.
ACTIONS = HighLevelActionSet(subsets=["bid"], strict=False, multiaction=False, retry_with_force=True)
SYSTEM = (
    "You act in a web browser to reach a goal. Each turn you see the goal, the page's accessibility tree "
    "(each element's id in [brackets]) and your previous actions. Reply with exactly one action, alone in "
    "one ``` code block.\n\n" + ACTIONS.describe(with_long_description=False, with_examples=True)
)
CODE_BLOCK = re.compile(r"```(?:\w+)?\n?(.*?)```", re.S)
# Debian's Chromium (see the Dockerfile); the task container has no user namespaces for its sandbox.
CHROMIUM = {"executable_path": "/usr/bin/chromium", "chromium_sandbox": False}

env = os.environ
parser = argparse.ArgumentParser()
parser.add_argument("--episodes", required=True)
episodes = [json.loads(line) for line in open(parser.parse_args().episodes) if line.strip()]
if env.get("BENCHROUTER_INSTANCES"):
    wanted = env["BENCHROUTER_INSTANCES"].split(",")
    unknown = sorted(set(wanted) - {e["index"] for e in episodes})
    if unknown:
        sys.exit(f"agent.py: BENCHROUTER_INSTANCES: no episode {unknown}: expected ids such as click-test-2/0 (environment/seed)")
    episodes = [e for e in episodes if e["index"] in set(wanted)]
if env.get("BENCHROUTER_LIMIT"):
    episodes = episodes[: int(env["BENCHROUTER_LIMIT"])]


def chat(messages, instance):
    url = env["BENCHROUTER_MODEL_ENDPOINT"].rstrip("/") + "/chat/completions"
    body = json.dumps({"model": env["BENCHROUTER_MODEL_NAME"], "messages": messages, "temperature": 0}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json", "Authorization": f"Bearer {env['BENCHROUTER_API_KEY']}", "X-BenchRouter-Instance": str(instance)})
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        sys.exit(f"agent.py: POST {url} failed with HTTP {error.code}: {error.read().decode(errors='replace')[:500]}")
    except urllib.error.URLError as error:
        sys.exit(f"agent.py: POST {url} failed: {error.reason}")


def observation_text(obs, actions):
    parts = [f"# Goal\n{obs['goal']}", f"# Page\n{flatten_axtree_to_str(obs['axtree_object'])}"]
    parts.append("# Previous actions\n" + ("\n".join(actions) if actions else "none"))
    if obs["last_action_error"]:
        parts.append(f"# Error of the last action\n{obs['last_action_error']}")
    return "\n\n".join(parts)


def reset(episode, attempts=3):
    """A new environment at the episode's seed. BrowserGym gives a page load 5 s, which a loaded machine can
    miss (Page.goto: Timeout 5000ms exceeded): a failed reset is retried in a new browser."""
    for attempt in range(1, attempts + 1):
        gym_env = gym.make(f"browsergym/miniwob.{episode['env']}", headless=True, pw_chromium_kwargs=CHROMIUM, action_mapping=ACTIONS.to_python_code)
        try:
            return (gym_env, *gym_env.reset(seed=episode["seed"]))
        except Exception as error:
            gym_env.close()
            if attempt == attempts:
                raise
            print(f"agent: {episode['index']}: reset failed ({str(error).splitlines()[0]}), retrying", flush=True)


def run_episode(episode, usage):
    gym_env, obs, info = reset(episode)
    try:
        actions, reward, done, steps = [], 0.0, False, 0
        while not done and steps < MAX_STEPS:
            messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": observation_text(obs, actions)}]
            response = chat(messages, episode["index"])
            for key in usage:
                usage[key] += (response.get("usage") or {}).get(key) or 0
            reply = response["choices"][0]["message"].get("content") or ""
            match = CODE_BLOCK.search(reply)
            action = (match.group(1) if match else reply).strip()
            obs, reward, terminated, truncated, info = gym_env.step(action)
            actions.append(action)
            steps += 1
            done = terminated or truncated
        task_info = info.get("task_info", info)
        return {"reward": float(reward), "steps": steps, "actions": actions, "done": bool(done), "goal": obs["goal"],
                "raw_reward": task_info.get("RAW_REWARD_GLOBAL"), "reason": task_info.get("REWARD_REASON")}
    finally:
        gym_env.close()


out = Path(env["BENCHROUTER_OUTPUT_DIR"])
started = time.monotonic()
solved = 0.0
with open(out / "records.jsonl", "w") as records:
    for episode in episodes:
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        result = run_episode(episode, usage)
        solved += result["reward"]
        records.write(json.dumps({"index": episode["index"], "origin_query": result["goal"], "prompt": {"env": f"browsergym/miniwob.{episode['env']}", "seed": episode["seed"]},
                                  "prediction": result["actions"], "score": result["reward"], "steps": result["steps"], **usage, "cost": 0,
                                  "raw_output": {"done": result["done"], "raw_reward": result["raw_reward"], "reason": result["reason"]}}) + "\n")
        records.flush()
        print(f"agent: {episode['index']}: reward {result['reward']} in {result['steps']} steps", flush=True)
total = len(episodes)
(out / "result.json").write_text(json.dumps({"success_rate": solved / total if total else 0.0, "solved": solved, "total": total}) + "\n")
print(f"agent: success rate {solved / total if total else 0.0} ({solved:g}/{total}) in {time.monotonic() - started:.1f} s", flush=True)
