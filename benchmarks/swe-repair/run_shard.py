#!/usr/bin/env python3
"""One shard of the code-repair benchmark, in its own Docker daemon: SWE-bench's harness builds each instance
image from the task repo, mini-swe-agent (as it ships, its SWE-bench config) works in a container of it and
writes a patch, and the harness grades the patches (FAIL_TO_PASS / PASS_TO_PASS). This file only runs the two
upstream CLIs and reads their outputs into result.json and records.jsonl.

    python3 run_shard.py                                   # the task's instances (instances.txt), as selected
    python3 run_shard.py --instances semver-453,tabulate-82   # these ones

BENCHROUTER_INSTANCES and BENCHROUTER_LIMIT select among them: a job of a run gets its shard's instances that way.
Also runs with no BenchRouter (the fidelity test): the same 4 BENCHROUTER_* variables, a Docker daemon.
"""
import argparse, json, os, shutil, subprocess, sys, time
from pathlib import Path

TASK_REPO = Path(__file__).parent / "task-repo"
DATASET = "swe-repair"
# The image names the harness derives (swebench/sweb.eval.x86_64.<id>:latest) and mini-swe-agent starts.
NAMESPACE = "swebench"
# mini-swe-agent's own SWE-bench config (text actions in ```mswea_bash_command blocks) and our limits.
AGENT_CONFIG = "swebench_backticks.yaml"
STEP_LIMIT = int(os.environ.get("SWE_REPAIR_STEP_LIMIT", "30"))
EVAL_TIMEOUT = 600


def fail(message):
    sys.exit(f"run_shard.py: {message}")


def run(command, log, **kwargs):
    """Runs an upstream CLI with its output in log; the log's tail is the error when it fails."""
    started = time.monotonic()
    with open(log, "a") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, **kwargs)
    if done.returncode != 0:
        tail = Path(log).read_text(errors="replace")[-3000:]
        fail(f"{' '.join(command[:3])} exited {done.returncode}; end of {log}:\n{tail}")
    return time.monotonic() - started


def selected(shard):
    ids = shard
    if os.environ.get("BENCHROUTER_INSTANCES"):
        wanted = os.environ["BENCHROUTER_INSTANCES"].split(",")
        unknown = sorted(set(wanted) - set(shard))
        if unknown:
            fail(f"BENCHROUTER_INSTANCES: no instance {unknown} among {','.join(shard)}")
        ids = [i for i in shard if i in wanted]
    if os.environ.get("BENCHROUTER_LIMIT"):
        ids = ids[: int(os.environ["BENCHROUTER_LIMIT"])]
    return ids


def write_dataset(repo, ids, path):
    """The instances as mini-swe-agent's `--subset` reads a local dataset: read by swebench's own task-repo reader."""
    from swebench.task.repo import load_task_repo

    path.mkdir(parents=True, exist_ok=True)
    with open(path / "test.jsonl", "w") as out:
        for instance in load_task_repo(repo, ids):
            out.write(json.dumps({k: instance[k] for k in ("instance_id", "problem_statement", "image")}) + "\n")


def trajectory_figures(traj_path):
    """Steps (model calls), tokens and cost as mini-swe-agent recorded them."""
    if not traj_path.is_file():
        return {"steps": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0, "exit_status": "no trajectory"}
    traj = json.loads(traj_path.read_text())
    if "_start_container" in traj.get("info", {}).get("traceback", ""):
        # Not the model's doing: the instance's container did not start, so the instance was never attempted.
        fail(f"{traj_path.name}: the agent's container did not start: {traj['info'].get('exception_str', '')[:500]}")
    prompt = completion = 0
    for message in traj.get("messages", []):
        usage = ((message.get("extra") or {}).get("response") or {}).get("usage") or {}
        prompt += usage.get("prompt_tokens") or 0
        completion += usage.get("completion_tokens") or 0
    stats = traj.get("info", {}).get("model_stats", {})
    return {
        "steps": stats.get("api_calls", 0),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cost": stats.get("instance_cost", 0.0),
        "exit_status": traj.get("info", {}).get("exit_status"),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--instances", help="instance ids, comma-separated (default: the task's instances.txt)")
    args = parser.parse_args()
    for name in ("BENCHROUTER_MODEL_ENDPOINT", "BENCHROUTER_MODEL_NAME", "BENCHROUTER_API_KEY", "BENCHROUTER_OUTPUT_DIR"):
        if not os.environ.get(name):
            fail(f"{name} is not set")
    started = time.monotonic()
    shard = [i for i in args.instances.split(",") if i] if args.instances else [i.strip() for i in open("instances.txt") if i.strip()]
    ids = selected(shard)
    out = Path(os.environ["BENCHROUTER_OUTPUT_DIR"])
    work = Path(os.environ.get("SWE_REPAIR_WORK_DIR", "/tmp/swe-repair"))
    shutil.rmtree(work, ignore_errors=True)
    # The harness writes its Dockerfiles and logs beside what it reads; the mounted benchmark is read-only.
    repo = work / "task-repo"
    shutil.copytree(TASK_REPO, repo)
    missing = sorted(set(shard) - {d.name for d in (repo / "tasks").iterdir()})
    if missing:
        fail(f"--instances: no task {missing} in {TASK_REPO / 'tasks'}")
    if not ids:
        fail(f"no instance of this shard ({','.join(shard)}) is selected by BENCHROUTER_INSTANCES / BENCHROUTER_LIMIT")
    write_dataset(repo, ids, work / "dataset")
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    timings = {}

    # 1. The instance images, built by the harness in this daemon (from the preloaded base image).
    timings["build_s"] = run(["swebench", "images", "build", str(repo), "-n", NAMESPACE, "-j", "1", *[a for i in ids for a in ("-i", i)]], logs / "build.log", cwd=work)

    # 2. The agent, once per instance so that each model call carries its instance id to the gateway.
    model_env = {
        **os.environ,
        "OPENAI_API_KEY": os.environ["BENCHROUTER_API_KEY"],
        "OPENAI_API_BASE": os.environ["BENCHROUTER_MODEL_ENDPOINT"],
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
    }
    agent_started = time.monotonic()
    for instance in ids:
        run(
            [
                "mini-extra", "swebench", "--subset", str(work / "dataset"), "--split", "test",
                "--filter", f"^{instance}$", "-o", str(work / "agent"), "--model", f"openai/{os.environ['BENCHROUTER_MODEL_NAME']}",
                "--model-class", "litellm_textbased", "-c", AGENT_CONFIG,
                "-c", f"agent.step_limit={STEP_LIMIT}",
                "-c", "model.model_kwargs.temperature=0",
                "-c", "model.model_kwargs.extra_headers=" + json.dumps({"X-BenchRouter-Instance": instance}),
                "-c", "environment.run_args=" + json.dumps(["--rm", "--network", "none", "--memory", "1g", "--pids-limit", "256"]),
            ],
            logs / "agent.log", cwd=work, env=model_env,
        )
    timings["agent_s"] = time.monotonic() - agent_started

    # 3. Grading by the harness, from the same task repo (it rebuilds the images: cached layers, seconds).
    predictions = json.loads((work / "agent" / "preds.json").read_text())
    for instance in ids:
        predictions.setdefault(instance, {"instance_id": instance, "model_name_or_path": os.environ["BENCHROUTER_MODEL_NAME"], "model_patch": ""})
        predictions[instance]["model_patch"] = predictions[instance].get("model_patch") or ""
    preds_path = work / "preds.jsonl"
    preds_path.write_text("".join(json.dumps(p) + "\n" for p in predictions.values()))
    timings["grade_s"] = run(
        ["swebench", "eval", DATASET, "--task-repo", str(repo), "--split", "test", "-p", str(preds_path),
         "--run-id", "shard", "-j", "1", "-t", str(EVAL_TIMEOUT), "--report-dir", str(work / "report"),
         *[a for i in ids for a in ("-i", i)]],
        logs / "eval.log", cwd=work,
    )

    reports = {}
    for report in (work / "logs" / "run_evaluation" / "shard").glob("*/*/report.json"):
        reports.update(json.loads(report.read_text()))
    resolved = 0
    with open(out / "records.jsonl", "w") as records:
        for index, instance in enumerate(ids):
            patch = predictions[instance]["model_patch"]
            report = reports.get(instance, {})
            figures = trajectory_figures(work / "agent" / instance / f"{instance}.traj.json")
            resolved += bool(report.get("resolved"))
            records.write(json.dumps({
                "index": instance,
                "origin_query": instance,
                "prompt": (repo / "tasks" / instance / "problem_statement.md").read_text(),
                "prediction": patch,
                "ground_truth": (repo / "tasks" / instance / "gold.patch").read_text(),
                "score": 1.0 if report.get("resolved") else 0.0,
                "prompt_tokens": figures["prompt_tokens"],
                "completion_tokens": figures["completion_tokens"],
                "cost": figures["cost"],
                "steps": figures["steps"],
                "raw_output": {
                    "resolved": bool(report.get("resolved")),
                    "patch_lines": len(patch.splitlines()),
                    "patch_bytes": len(patch.encode()),
                    "exit_status": figures["exit_status"],
                    "patch_applied": report.get("patch_successfully_applied", False),
                    "tests_status": report.get("tests_status"),
                },
            }) + "\n")
    result = {"resolved_rate": resolved / len(ids), "resolved": resolved, "instances": len(ids), **{k: round(v, 1) for k, v in timings.items()}}
    (out / "result.json").write_text(json.dumps(result) + "\n")
    print(json.dumps(result))
    # The harness's own time, as perf/catalogue reads it from the last lines of the log.
    print(f"run_shard.py: {len(ids)} instances built, repaired and graded in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
