#!/usr/bin/env python3
"""BenchRouter bridge for a Harbor dataset: runs Harbor's own `harbor run` unmodified on the dataset's selected
tasks, with the agent the run names, in the job's own Docker daemon, then reads each trial's result and writes
result.json and one records.jsonl line per Harbor task.

    python3 harbor_bridge.py            # run (the dataset is datasets/$BENCHROUTER_TASK)
    python3 harbor_bridge.py --list     # print the dataset's task names, one per line, and run nothing

BENCHROUTER_TASK_ARGS (the run's -T key=value): `agent` (default terminus-2; oracle, nop, or any agent Harbor
ships), `model` (the LiteLLM model string; default openai/$BENCHROUTER_MODEL_NAME), `attempts`; any other key is
the agent's own keyword argument (harbor run --ak key=value). A model agent reaches the model through
BENCHROUTER_MODEL_ENDPOINT with BENCHROUTER_API_KEY (LiteLLM's OPENAI_BASE_URL and OPENAI_API_KEY).

A record's score is the trial's verifier reward (`verifier_result.rewards.reward`, 0 when the trial ended in an
exception before its verifier); it carries the agent, the task's digest (Harbor's lock.json), the verifier's
output and the trial's folder under harbor-jobs/, which the job's artifacts keep (result.json, trial.log, agent/,
verifier/).
"""
import json, os, shutil, subprocess, sys, tempfile
from pathlib import Path

env = os.environ
here = Path(__file__).resolve().parent


def fail(message: str) -> None:
    sys.exit(f"harbor_bridge.py: {message}")


dataset_name = env.get("BENCHROUTER_TASK") or fail("BENCHROUTER_TASK: expected the dataset's name (a directory of datasets/)")
dataset = here / "datasets" / dataset_name
if not dataset.is_dir():
    known = sorted(p.name for p in (here / "datasets").iterdir() if p.is_dir())
    fail(f"no dataset {dataset_name!r} in datasets/ (have {', '.join(known)})")
tasks = sorted(p.name for p in dataset.iterdir() if (p / "task.toml").is_file())
if not tasks:
    fail(f"datasets/{dataset_name}: expected Harbor task directories (each with a task.toml), found none")

if sys.argv[1:] == ["--list"]:
    print("\n".join(tasks))
    sys.exit(0)

try:
    args = json.loads(env.get("BENCHROUTER_TASK_ARGS") or "{}")
except json.JSONDecodeError as error:
    fail(f"BENCHROUTER_TASK_ARGS: expected a JSON object of strings: {error}")
agent = args.pop("agent", "terminus-2")
model = args.pop("model", None)
attempts = args.pop("attempts", "1")

selected = tasks
if env.get("BENCHROUTER_INSTANCES"):
    wanted = env["BENCHROUTER_INSTANCES"].split(",")
    unknown = sorted(set(wanted) - set(tasks))
    if unknown:
        fail(f"BENCHROUTER_INSTANCES: no task {unknown} in datasets/{dataset_name}: expected names such as {', '.join(tasks[:3])}")
    selected = [t for t in tasks if t in set(wanted)]
if env.get("BENCHROUTER_LIMIT"):
    selected = selected[: int(env["BENCHROUTER_LIMIT"])]

out = Path(env["BENCHROUTER_OUTPUT_DIR"])
jobs = out / "harbor-jobs"
# The selected tasks only, as a dataset of their own (Harbor runs every task of the directory it is given).
chosen = Path(tempfile.mkdtemp(prefix="harbor-dataset-"))
for name in selected:
    shutil.copytree(dataset / name, chosen / name)

command = ["harbor", "run", "-p", str(chosen), "-a", agent, "-o", str(jobs), "--job-name", "run", "-y", "-q",
           "-n", env.get("BENCHROUTER_CONCURRENCY", "4"), "--n-attempts", attempts]
run_env = {**env, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
if agent not in ("oracle", "nop"):
    command += ["-m", model or f"openai/{env['BENCHROUTER_MODEL_NAME']}"]
    run_env |= {"OPENAI_BASE_URL": env["BENCHROUTER_MODEL_ENDPOINT"], "OPENAI_API_BASE": env["BENCHROUTER_MODEL_ENDPOINT"], "OPENAI_API_KEY": env["BENCHROUTER_API_KEY"]}
for key, value in args.items():
    command += ["--ak", f"{key}={value}"]
print("harbor_bridge.py:", " ".join(command), flush=True)
code = subprocess.run(command, env=run_env).returncode

trials = sorted((jobs / "run").glob("*/result.json"))
if not trials:
    fail(f"harbor run exited {code} and wrote no trial under {jobs / 'run'}")


def tail(path: Path, limit: int = 4000) -> str | None:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    return text[-limit:]


records, rewards = [], {}
for file in trials:
    trial = json.loads(file.read_text())
    folder = file.parent
    lock = json.loads((folder / "lock.json").read_text()) if (folder / "lock.json").is_file() else {}
    name = (lock.get("task") or {}).get("name") or Path(trial["config"]["task"]["path"]).name
    verified = (trial.get("verifier_result") or {}).get("rewards") or {}
    reward = verified.get("reward")
    if reward is not None and not 0 <= reward <= 1:
        fail(f"task {name}: its verifier's reward {reward} is outside [0, 1], which a record's score must be")
    exception = trial.get("exception_info")
    usage = trial.get("agent_result") or {}
    rewards[name] = reward if reward is not None else 0.0
    records.append({
        "index": name,
        "score": rewards[name],
        "prompt_tokens": usage.get("n_input_tokens"),
        "completion_tokens": usage.get("n_output_tokens"),
        "cost": usage.get("cost_usd"),
        "prediction": None,
        "ground_truth": None,
        "raw_output": tail(folder / "verifier" / "test-stdout.txt"),
        "agent": (trial.get("agent_info") or {}).get("name", agent),
        "task_digest": (lock.get("task") or {}).get("digest"),
        "rewards": verified,
        "exception": exception,
        "trial": str(folder.relative_to(out)),
        # The instance's files, which the dashboard's instance page links (the contract's record field).
        "artifacts": str(folder.relative_to(out)),
    })

missing = sorted(set(selected) - set(rewards))
if missing:
    fail(f"harbor run exited {code} and left no trial for {missing}")
records.sort(key=lambda r: selected.index(r["index"]))
with open(out / "records.jsonl", "w") as f:
    for record in records:
        f.write(json.dumps(record) + "\n")
(out / "result.json").write_text(json.dumps({
    "overall": sum(rewards.values()) / len(rewards),
    "tasks": len(rewards),
    "rewards": rewards,
    "agent": agent,
    "dataset": dataset_name,
    "harbor_exit": code,
}) + "\n")
print(f"harbor_bridge.py: mean reward {sum(rewards.values()) / len(rewards):.4f} over {len(rewards)} tasks ({agent})", flush=True)
