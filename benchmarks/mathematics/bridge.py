#!/usr/bin/env python3
"""BenchRouter bridge for DeepMind's Mathematics Dataset: draws the questions with the package's own generator
(mathematics_dataset.generate, unmodified, seeded), asks the model each one and scores exact match, the paper's metric,
of the reply's final answer (final_answer: a chat model that shows its working or writes "y = 3" is read as answering 3).

    python3 bridge.py
    python3 bridge.py --list      # the questions' ids (<module>/<n>) in the order they are drawn (task.yaml's instances)
"""
import json, os, random, re, sys, time, urllib.error, urllib.request
from pathlib import Path

import numpy
from absl import flags
from mathematics_dataset import generate

env = os.environ
REGIME = env.get("MATHEMATICS_REGIME", "interpolate")
INSTRUCTION = "Answer this math question. Reply with the final answer only, with no words or working.\n\n"
started = time.monotonic()

# generate's own flag defaults (10 questions per module), one fixed seed: the same questions on every run.
flags.FLAGS(["generate"])
random.seed(0)
numpy.random.seed(0)
generate.init_modules()
if sys.argv[1:] == ["--list"]:
    print("\n".join(f"{name}/{i}" for name in generate.filtered_modules[REGIME] for i in range(generate.counts[REGIME])))
    sys.exit(0)
out = Path(env["BENCHROUTER_OUTPUT_DIR"])
wanted = set(env["BENCHROUTER_INSTANCES"].split(",")) if env.get("BENCHROUTER_INSTANCES") else None
limit = int(env["BENCHROUTER_LIMIT"]) if env.get("BENCHROUTER_LIMIT") else None
problems = []
# One generator draws every question in order, so a question depends only on those before it: stop once the selection is drawn.
for name, module in generate.filtered_modules[REGIME].items():
    for i in range(generate.counts[REGIME]):
        if (limit is not None and len(problems) >= limit) or (wanted is not None and len(problems) == len(wanted)):
            break
        problem, _ = generate.sample_from_module(module)
        if wanted is None or f"{name}/{i}" in wanted:
            problems.append({"id": f"{name}/{i}", "question": str(problem.question), "answer": str(problem.answer)})
if wanted is not None and len(problems) < len(wanted):
    sys.exit(f"bridge.py: BENCHROUTER_INSTANCES: no question {sorted(wanted - {p['id'] for p in problems})} in {REGIME}: expected ids <module>/<n>, n from 0 to {generate.counts[REGIME] - 1}")


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


def final_answer(reply):
    """The answer a reply gives, to compare exactly with the dataset's: its last non-empty line, without a leading
    "The answer is" or "Answer:" or "<variable> =", without TeX's $ or \\boxed{}, and without a closing period.
    Chat models asked for the answer alone still end their working with "c = -21" or "The answer is 23."."""
    lines = [line.strip() for line in reply.splitlines() if line.strip()]
    answer = lines[-1] if lines else ""
    answer = re.sub(r"^(?:the\s+)?(?:final\s+)?answer(?:\s+is)?\s*:?\s*", "", answer, flags=re.I)
    answer = re.sub(r"^[A-Za-z]\w*\s*=\s*", "", answer).strip().strip("$").strip()
    boxed = re.fullmatch(r"\\boxed\{(.*)\}", answer)
    return (boxed.group(1) if boxed else answer).rstrip(".").strip()


correct = 0
with open(out / "records.jsonl", "w") as records:
    for p in problems:
        messages = [{"role": "user", "content": INSTRUCTION + p["question"]}]
        response = chat(messages, p["id"])
        reply = response["choices"][0]["message"].get("content") or ""
        usage = response.get("usage") or {}
        prediction = final_answer(reply)
        score = int(prediction == p["answer"])
        correct += score
        records.write(json.dumps({"index": p["id"], "origin_query": p["question"], "prompt": messages, "prediction": prediction, "ground_truth": p["answer"], "score": score,
                                  "prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens"), "cost": usage.get("cost") or 0, "raw_output": reply}) + "\n")
accuracy = correct / len(problems) if problems else 0.0
(out / "result.json").write_text(json.dumps({"accuracy": accuracy, "correct": correct, "total": len(problems)}) + "\n")
print(f"bridge: accuracy {accuracy} ({correct}/{len(problems)}) in {time.monotonic() - started:.2f} s", flush=True)
