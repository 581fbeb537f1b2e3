#!/usr/bin/env python3
"""BenchRouter bridge for an inspect_evals task: runs `inspect eval` unmodified, with Inspect's OpenAI-compatible
provider pointed at BENCHROUTER_MODEL_ENDPOINT (and a simulated user's model role at BENCHROUTER_USER_*, when
set), then reads Inspect's log and writes result.json and one records.jsonl line per sample.

    python3 inspect_bridge.py [--record-score KEY] inspect_evals/tau2_airline -T shuffle=false
    python3 inspect_bridge.py --list inspect_evals/tau2_airline -T shuffle=false

The task's arguments follow its name as `-T key=value` pairs. A sample's record scores its score's value, or with
--record-score its value's KEY (for a scorer that scores several things at once, as AgentDojo's does). --list
prints the task's sample ids in its dataset's order, one per line, and runs nothing (task.yaml's `instances`).
"""
import glob, importlib, json, os, subprocess, sys
from pathlib import Path

import yaml
from inspect_ai.log import read_eval_log
from inspect_ai.scorer import value_to_float

env = os.environ
args = sys.argv[1:]
listing = args[:1] == ["--list"]
if listing:
    args = args[1:]
record_key = args[1] if args[:1] == ["--record-score"] else None
task, task_args = (args[2], args[3:]) if record_key else (args[0], args[1:])
here = Path(__file__).resolve().parent


def fail(message: str) -> None:
    sys.exit(f"inspect_bridge.py: {message}")


def dataset_ids() -> list[str]:
    """The task's sample ids in its dataset's order, from the task itself with the same -T arguments (Inspect
    only warns about a --sample-id it does not find, and runs the rest)."""
    package, name = task.split("/", 1)
    params = {k: yaml.safe_load(v) for k, v in (a.split("=", 1) for a in task_args[1::2])}
    words = name.split("_")
    for n in range(len(words), 0, -1):  # tau2_airline lives in inspect_evals.tau2, agentdojo in inspect_evals.agentdojo
        try:
            found = getattr(importlib.import_module(f"{package}.{'_'.join(words[:n])}"), name, None)
        except ModuleNotFoundError:
            continue
        if callable(found):
            return [str(sample.id) for sample in found(**params).dataset]
    fail(f"no task {name} in {package}")


if listing:
    print("\n".join(dataset_ids()))
    sys.exit(0)
out = Path(env["BENCHROUTER_OUTPUT_DIR"])

# Inspect's openai-api provider reads <SERVICE>_BASE_URL and <SERVICE>_API_KEY for openai-api/<service>/<model>.
run_env = {**env, "BRMODEL_BASE_URL": env["BENCHROUTER_MODEL_ENDPOINT"], "BRMODEL_API_KEY": env["BENCHROUTER_API_KEY"]}
# The hook that tags each call with its sample (X-BenchRouter-Instance), found through its entry point.
run_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(here / "instance_header"), env.get("PYTHONPATH")]))
command = ["inspect", "eval", task, *task_args, "--model", f"openai-api/brmodel/{env['BENCHROUTER_MODEL_NAME']}"]
if env.get("BENCHROUTER_USER_MODEL"):
    run_env |= {"BRUSER_BASE_URL": env["BENCHROUTER_USER_ENDPOINT"], "BRUSER_API_KEY": env["BENCHROUTER_USER_API_KEY"]}
    command += ["--model-role", f"user=openai-api/bruser/{env['BENCHROUTER_USER_MODEL']}"]
if env.get("BENCHROUTER_INSTANCES"):
    ids = dataset_ids()
    wanted = env["BENCHROUTER_INSTANCES"].split(",")
    if set(wanted) - set(ids):
        fail(f"BENCHROUTER_INSTANCES: no sample {sorted(set(wanted) - set(ids))} in {task}: expected ids such as {', '.join(ids[:3])}")
    selected = [i for i in ids if i in set(wanted)][: int(env["BENCHROUTER_LIMIT"]) if env.get("BENCHROUTER_LIMIT") else None]
    command += ["--sample-id", ",".join(selected)]
elif env.get("BENCHROUTER_LIMIT"):
    command += ["--limit", env["BENCHROUTER_LIMIT"]]
if env.get("BENCHROUTER_SEED"):
    command += ["--seed", env["BENCHROUTER_SEED"]]
if env.get("BENCHROUTER_CONCURRENCY"):
    command += ["--max-connections", env["BENCHROUTER_CONCURRENCY"]]
log_dir = out / "inspect-logs"
command += ["--log-dir", str(log_dir), "--display", "plain"]
print("inspect_bridge.py:", " ".join(command), flush=True)
code = subprocess.run(command, env=run_env).returncode

logs = sorted(glob.glob(str(log_dir / "*.eval")))
if not logs:
    fail(f"inspect eval exited {code} and wrote no log in {log_dir}")
log = read_eval_log(logs[-1])
if log.status != "success" or code != 0:
    fail(f"inspect eval exited {code}, log status {log.status}: {log.error.message if log.error else 'no error recorded'} ({logs[-1]})")

to_float = value_to_float()
with open(out / "records.jsonl", "w") as records:
    for sample in log.samples or []:
        score = next(iter(sample.scores.values()))  # these tasks have one scorer
        value = score.value[record_key] if record_key else score.value
        tokens = list(sample.model_usage.values())
        records.write(json.dumps({
            "index": str(sample.id),
            "origin_query": sample.input if isinstance(sample.input, str) else [m.text for m in sample.input],
            "prediction": sample.output.completion,
            "ground_truth": sample.target,
            "score": to_float(value),
            "prompt_tokens": sum(u.input_tokens for u in tokens),
            "completion_tokens": sum(u.output_tokens for u in tokens),
            "cost": None,
            "raw_output": score.explanation,
            "score_value": score.value,
            "messages": len(sample.messages),
            "usage_by_role": {role: {"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens} for role, u in (sample.role_usage or {}).items()},
        }) + "\n")

# Every score's metrics by name: {"airline_scorer": {"accuracy": 0.5, "stderr": 0.5}}, or AgentDojo's utility and security.
scores = {score.name: {name: metric.value for name, metric in score.metrics.items()} for score in log.results.scores}
(out / "result.json").write_text(json.dumps({
    "task": log.eval.task,
    "scores": scores,
    "samples": log.results.completed_samples,
    "total_samples": log.results.total_samples,
    "log": Path(logs[-1]).name,
    "packages": log.eval.packages,
}) + "\n")
print(f"inspect_bridge.py: {json.dumps(scores)} over {log.results.completed_samples} samples", flush=True)
