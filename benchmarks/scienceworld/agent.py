#!/usr/bin/env python3
"""ScienceWorld's reference agent, the only code of ours in this benchmark: for each episode (a task and one
of its test variations) it shows the model the task, the action templates and each observation, and sends
the one action the model answers to the unmodified simulator, until the simulator ends the episode or the
step cap is reached. The episode's score is the simulator's own (0-100).

    python3 agent.py --episodes episodes.txt   # the episodes listed there (BENCHROUTER_LIMIT/INSTANCES select)
    python3 agent.py --list                    # asks the simulator for its test episodes and prints them

episodes.txt is `--list`'s output: listing them takes the simulator a minute and a half, a run should not.
"""
import json, os, sys, time, urllib.error, urllib.request
from pathlib import Path

from scienceworld import ScienceWorldEnv

# Upstream's default envStepLimit: the simulator ends an episode after this many moves, and the agent
# asks the model at most this many times per episode (an answer that is no action costs no move).
STEP_LIMIT = 100
# Turns of (action, observation) kept in the prompt besides the task; older turns are dropped.
HISTORY_TURNS = 10
# Upstream's example agents end an episode on these; the episode keeps the score it reached.
EXIT_COMMANDS = {"quit", "exit"}
SYSTEM = (
    "You are an agent in ScienceWorld, a text simulation of a house, a workshop, a greenhouse and the outdoors "
    "where elementary science tasks are done. Each turn you are shown what your last action did. Reply with "
    "exactly one action on one line, made from one of the action templates with objects named as in the "
    "observations (for example: open door to kitchen, pick up thermometer, focus on water), and nothing else."
)

env = os.environ


def list_episodes(sw):
    """Every task's test variations as upstream splits them, round-robin over the tasks in upstream's order
    (the first test variation of each task, then the second, ...), so a limit of N covers as many task
    types as it can."""
    per_task = []
    for task in sw.get_task_names():
        sw.load(task, 0, "")
        per_task.append([f"{task}/{variation}" for variation in sw.get_variations_test()])
    return [ids[i] for i in range(max(map(len, per_task))) for ids in per_task if i < len(ids)]


def select(ids):
    if env.get("BENCHROUTER_INSTANCES"):
        wanted = env["BENCHROUTER_INSTANCES"].split(",")
        unknown = sorted(set(wanted) - set(ids))
        if unknown:
            sys.exit(f"agent.py: BENCHROUTER_INSTANCES: no test episode {unknown}: expected ids such as boil/{ids[0].split('/')[1]} (task name/test variation)")
        ids = [i for i in ids if i in set(wanted)]
    if env.get("BENCHROUTER_LIMIT"):
        ids = ids[: int(env["BENCHROUTER_LIMIT"])]
    return ids


def chat(messages, instance):
    url = env["BENCHROUTER_MODEL_ENDPOINT"].rstrip("/") + "/chat/completions"
    body = json.dumps({"model": env["BENCHROUTER_MODEL_NAME"], "messages": messages, "temperature": 0}).encode()
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {env['BENCHROUTER_API_KEY']}", "X-BenchRouter-Instance": instance}
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        sys.exit(f"agent.py: {instance}: POST {url} failed with HTTP {error.code}: {error.read().decode(errors='replace')[:500]}")
    except urllib.error.URLError as error:
        sys.exit(f"agent.py: {instance}: POST {url} failed: {error.reason}")


def action_of(reply):
    """The first non-empty line of the reply, without quotes or backticks, lower-cased as upstream's agents send it."""
    line = next((l for l in (reply or "").splitlines() if l.strip()), "")
    return line.strip().strip("`'\"").strip().lower()


def prompt(task, templates, first, turns):
    head = f"Task: {task}\n\nAction templates: {', '.join(templates)}\n\n{first}"
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": head}]
    for action, observation in turns[-HISTORY_TURNS:]:
        messages += [{"role": "assistant", "content": action}, {"role": "user", "content": observation}]
    return messages


def play(instance, choose):
    """Plays one episode in a simulator of its own. The simulator lists a room's objects in an order that
    depends on what it did before in the same JVM, so a fresh one per episode makes each episode's
    observations the same whichever episodes run with it."""
    sw = ScienceWorldEnv("", envStepLimit=STEP_LIMIT)
    try:
        return run_episode(sw, instance, choose)
    finally:
        sw.close()


def run_episode(sw, instance, choose):
    """Plays one episode; `choose(messages, instance)` returns (the model's reply, its usage)."""
    task, variation = instance.rsplit("/", 1)
    sw.load(task, int(variation), "")
    first, info = sw.reset()
    description, templates = sw.get_task_description(), sw.get_possible_actions()
    turns, actions, usage = [], [], {"prompt_tokens": 0, "completion_tokens": 0}
    score, completed, steps = info["score"], False, 0
    while not completed and steps < STEP_LIMIT:
        messages = prompt(description, templates, first, turns)
        reply, used = choose(messages, instance)
        steps += 1
        for field in usage:
            usage[field] += used.get(field) or 0
        action = action_of(reply)
        actions.append(action)
        if action in EXIT_COMMANDS:
            break
        observation, _, completed, info = sw.step(action)
        score = info["score"]
        turns.append((action, observation))
    return {"index": instance, "task": task, "variation": int(variation), "score": max(score, 0) / 100, "simulator_score": score,
            "completed": bool(completed), "steps": steps, "moves": sw.get_num_moves(), "description": description, "first": prompt(description, templates, first, []),
            "actions": actions, "goal_progress": sw.get_goal_progress(), **usage}


def model_choice(messages, instance):
    response = chat(messages, instance)
    return response["choices"][0]["message"].get("content") or "", response.get("usage") or {}


def main():
    if "--list" in sys.argv:
        sw = ScienceWorldEnv("", envStepLimit=STEP_LIMIT)
        print("\n".join(list_episodes(sw)))
        sw.close()
        return
    ids = select(Path(sys.argv[sys.argv.index("--episodes") + 1]).read_text().split())
    out = Path(env["BENCHROUTER_OUTPUT_DIR"])
    results = []
    with open(out / "records.jsonl", "w") as records:
        for instance in ids:
            started = time.monotonic()
            r = play(instance, model_choice)
            results.append(r)
            records.write(json.dumps({"index": r["index"], "origin_query": r["description"], "prompt": r["first"], "prediction": r["actions"],
                                      "ground_truth": None, "score": r["score"], "prompt_tokens": r["prompt_tokens"], "completion_tokens": r["completion_tokens"],
                                      "cost": 0, "steps": r["steps"], "raw_output": {k: r[k] for k in ("simulator_score", "completed", "moves", "goal_progress")}}) + "\n")
            records.flush()
            print(f"agent: {instance}: score {r['simulator_score']} after {r['steps']} steps ({r['moves']} moves){', completed' if r['completed'] else ''}, {time.monotonic() - started:.1f} s", flush=True)
    by_task = {}
    for r in results:
        by_task.setdefault(r["task"], []).append(r["score"])
    per_task = {task: sum(s) / len(s) for task, s in by_task.items()}
    summary = {
        "score": sum(r["score"] for r in results) / len(results) if results else 0.0,
        "score_by_task_type": sum(per_task.values()) / len(per_task) if per_task else 0.0,
        "solved": sum(r["simulator_score"] == 100 for r in results),
        "episodes": len(results),
        "steps": sum(r["steps"] for r in results),
        "per_task": per_task,
    }
    (out / "result.json").write_text(json.dumps(summary) + "\n")
    print(f"agent: score {summary['score']} over {len(results)} episodes ({summary['solved']} solved)", flush=True)


if __name__ == "__main__":
    main()
