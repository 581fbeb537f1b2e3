#!/usr/bin/env python3
"""BenchRouter bridge for any Inspect eval: runs `inspect eval` unmodified, with Inspect's OpenAI-compatible
provider pointed at BENCHROUTER_MODEL_ENDPOINT (and a simulated user's model role at BENCHROUTER_USER_*, when
set), then reads Inspect's log and writes result.json and one records.jsonl line per sample.

    python3 inspect_bridge.py [--record-score KEY] [inspect_evals/tau2_airline -T shuffle=false]
    python3 inspect_bridge.py --list [inspect_evals/tau2_airline -T shuffle=false]

The eval's arguments follow its name as `-T key=value` pairs. With no name, the eval is BENCHROUTER_TASK and its
arguments BENCHROUTER_TASK_ARGS (a JSON object of strings, each value as `-T` takes it): what a task made from the
benchmark's task template is told. --list prints the eval's sample ids in its dataset's order, one per line, and
runs nothing (task.yaml's `instances`).

Scores: `overall` is the first reported score's `accuracy` (else its `mean`; for a score with neither, the mean of
its values per sample, which is what a run folds shards by), named in `metric`. A sample's record scores that scorer's value, as a number (Inspect's value_to_float: C 1, I 0, P 0.5); a
scorer whose value is a mapping (AgentDojo's {utility, security}, reported as a score per key) is read at the key
--record-score names, or else at that first score's name.
"""
import glob, importlib, importlib.metadata, importlib.util, json, os, subprocess, sys
from pathlib import Path

import yaml
from inspect_ai.log import read_eval_log
from inspect_ai.scorer import value_to_float

env = os.environ
args = sys.argv[1:]
listing = args[:1] == ["--list"]
if listing:
    args = args[1:]
record_key = None
if args[:1] == ["--record-score"]:
    record_key, args = args[1], args[2:]
here = Path(__file__).resolve().parent


def fail(message: str) -> None:
    sys.exit(f"inspect_bridge.py: {message}")


def eval_and_args() -> tuple[str, list[str]]:
    """The eval and its -T arguments: from the command line, or from BENCHROUTER_TASK and BENCHROUTER_TASK_ARGS."""
    if args:
        return args[0], args[1:]
    if not env.get("BENCHROUTER_TASK"):
        fail("no eval named: expected inspect_bridge.py <package>/<eval> [-T key=value ...], or BENCHROUTER_TASK")
    try:
        given = json.loads(env.get("BENCHROUTER_TASK_ARGS") or "{}")
    except json.JSONDecodeError as error:
        fail(f"BENCHROUTER_TASK_ARGS: expected a JSON object of strings, got {env['BENCHROUTER_TASK_ARGS']!r}: {error}")
    if not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values()):
        fail(f"BENCHROUTER_TASK_ARGS: expected a JSON object of strings, got {env['BENCHROUTER_TASK_ARGS']!r}")
    return env["BENCHROUTER_TASK"], [part for key, value in given.items() for part in ("-T", f"{key}={value}")]


task, task_args = eval_and_args()


def local_eval() -> Path | None:
    """An eval of this benchmark's own, `evals/<name>`: the file evals/<name>.py, whose @task function is <name>."""
    if not task.startswith("evals/"):
        return None
    file = here / "evals" / f"{task.split('/', 1)[1]}.py"
    if not file.is_file():
        known = sorted(p.stem for p in (here / "evals").glob("*.py"))
        fail(f"no eval {task!r}: expected the file evals/{file.name} in the benchmark (have {', '.join(known) or 'none'})")
    return file


def task_function():
    """The eval's @task function, found as Inspect finds `<package>/<name>`: the package's `inspect_ai` entry point
    names the module that registers its tasks; or in the benchmark's own evals/<name>.py."""
    if "/" not in task:
        fail(f"expected an eval as <package>/<name> (like inspect_evals/gsm8k), got {task!r}")
    package, name = task.split("/", 1)
    file = local_eval()
    if file:
        spec = importlib.util.spec_from_file_location(f"benchrouter_evals.{name}", file)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found = getattr(module, name, None)
        if not callable(found):
            fail(f"evals/{file.name} has no @task function {name!r}")
        return found
    points = [p for p in importlib.metadata.entry_points(group="inspect_ai") if p.name == package]
    if not points:
        fail(f"no package {package!r} registers Inspect tasks in this image (expected one of {sorted(p.name for p in importlib.metadata.entry_points(group='inspect_ai'))})")
    module = importlib.import_module(points[0].value)
    found = getattr(module, name, None)
    if not callable(found):
        fail(f"no eval {name!r} in {package} (its registry {points[0].value} has no such task)")
    return found


def task_params() -> dict:
    """The -T arguments as Inspect reads them: each value as YAML."""
    params = {}
    for flag, pair in zip(task_args[0::2], task_args[1::2]):
        if flag != "-T" or "=" not in pair:
            fail(f"expected the eval's arguments as -T key=value pairs, got {flag} {pair}")
        key, value = pair.split("=", 1)
        params[key] = yaml.safe_load(value)
    return params


def dataset_ids() -> list[str]:
    """The eval's sample ids in its dataset's order, from the eval itself with the same -T arguments (Inspect
    only warns about a --sample-id it does not find, and runs the rest)."""
    try:
        dataset = task_function()(**task_params()).dataset
    except TypeError as error:  # an argument the eval does not take
        fail(f"{task}: {error}")
    ids = [str(sample.id) for sample in dataset]
    if any(i == "None" for i in ids):
        ids = [str(n + 1) for n in range(len(ids))]  # Inspect numbers samples from 1 when the dataset has no ids
    return ids


if listing:
    print("\n".join(dataset_ids()))
    sys.exit(0)
out = Path(env["BENCHROUTER_OUTPUT_DIR"])

# Inspect's openai-api provider reads <SERVICE>_BASE_URL and <SERVICE>_API_KEY for openai-api/<service>/<model>.
run_env = {**env, "BRMODEL_BASE_URL": env["BENCHROUTER_MODEL_ENDPOINT"], "BRMODEL_API_KEY": env["BENCHROUTER_API_KEY"]}
# The hook that tags each call with its sample (X-BenchRouter-Instance), found through its entry point.
run_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(here / "instance_header"), env.get("PYTHONPATH")]))
# Inspect names a file's eval as <file>@<task>.
local = local_eval()
command = ["inspect", "eval", f"{local}@{local.stem}" if local else task, *task_args, "--model", f"openai-api/brmodel/{env['BENCHROUTER_MODEL_NAME']}"]
if env.get("BENCHROUTER_USER_MODEL"):
    run_env |= {"BRUSER_BASE_URL": env["BENCHROUTER_USER_ENDPOINT"], "BRUSER_API_KEY": env["BENCHROUTER_USER_API_KEY"]}
    command += ["--model-role", f"user=openai-api/bruser/{env['BENCHROUTER_USER_MODEL']}"]
if env.get("BENCHROUTER_JUDGE_MODEL"):
    run_env |= {"BRJUDGE_BASE_URL": env["BENCHROUTER_JUDGE_ENDPOINT"], "BRJUDGE_API_KEY": env["BENCHROUTER_JUDGE_API_KEY"]}
    command += ["--model-role", f"grader=openai-api/brjudge/{env['BENCHROUTER_JUDGE_MODEL']}"]
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
if not log.results or not log.results.scores:
    fail(f"{task} scored nothing: its log has no scores ({logs[-1]})")

# Every score's metrics by name: {"airline_scorer": {"accuracy": 0.5, "stderr": 0.5}}, or AgentDojo's utility and security.
scores = {score.name: {name: metric.value for name, metric in score.metrics.items()} for score in log.results.scores}
# The first score that reports metrics: a scorer whose value is a mapping (AgentDojo's) reports none under its own
# name, and its metrics under each key's (utility, security).
first = next((score for score in log.results.scores if score.metrics), None)
if first is None:
    fail(f"{task}: its scorers ({', '.join(s.name for s in log.results.scores)}) report no metric ({logs[-1]})")
metric = next((m for m in ("accuracy", "mean") if m in first.metrics), next(iter(first.metrics)))
scorer_key = first.scorer  # the scorer a sample's scores are keyed by (a score's name may be a metric group's)

to_float = value_to_float()


def sample_value(sample):
    score = sample.scores.get(scorer_key) or next(iter(sample.scores.values()))
    value = score.value
    if isinstance(value, dict):
        key = record_key or first.name
        if key not in value:
            fail(f"{task}: sample {sample.id}'s score is a mapping of {sorted(value)}: name the one to record with --record-score")
        value = value[key]
    return score, value


sample_scores = []
with open(out / "records.jsonl", "w") as records:
    for sample in log.samples or []:
        if not sample.scores:
            continue  # a sample that errored and was not scored: no record, so a resumed shard asks it again
        score, value = sample_value(sample)
        sample_scores.append(to_float(value))
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
        }, default=str) + "\n")

# A run folds a split eval's score as the mean of its samples' scores: the headline is that mean when it is an
# accuracy or a mean; otherwise (a failure_rate, a var) overall is the mean of the sample scores, so that a run
# scores the same split or not, and the eval's own headline stays in `scores`.
if metric in ("accuracy", "mean"):
    overall, overall_is = scores[first.name][metric], f"{first.name}.{metric}"
else:
    overall = sum(sample_scores) / len(sample_scores) if sample_scores else 0.0
    overall_is = f"the mean of {first.name} per sample (the eval's own headline, {first.name}.{metric}, is in scores)"
(out / "result.json").write_text(json.dumps({
    "task": log.eval.task,
    "overall": overall,
    "metric": overall_is,
    "scores": scores,
    "samples": log.results.completed_samples,
    "total_samples": log.results.total_samples,
    "log": Path(logs[-1]).name,
    "packages": log.eval.packages,
}) + "\n")
print(f"inspect_bridge.py: {json.dumps(scores)} over {log.results.completed_samples} samples", flush=True)
