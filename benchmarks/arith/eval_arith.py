#!/usr/bin/env python3
"""Scores a model on arithmetic word problems (python3 stdlib only).

This is the whole BenchRouter benchmark contract in one file: read the 4 BENCHROUTER_* variables,
ask an OpenAI-compatible endpoint each question, write result.json (and records.jsonl) to the
output directory.

    python3 eval_arith.py --problems problems.jsonl
"""

import argparse
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

SYSTEM_PROMPT = "Solve the arithmetic problem. Reply with the number only."
REQUEST_TIMEOUT_SECONDS = 60
MAX_RETRIES = 3
RETRYABLE_STATUS = {429, 500, 502, 503, 504}
INTEGER = re.compile(r"-?\d+")
REQUIRED_ENV = ("BENCHROUTER_MODEL_ENDPOINT", "BENCHROUTER_MODEL_NAME", "BENCHROUTER_API_KEY", "BENCHROUTER_OUTPUT_DIR")


def read_env():
    missing = [name for name in REQUIRED_ENV if not os.environ.get(name)]
    if missing:
        sys.exit(f"eval_arith.py: missing required environment variable(s): {', '.join(missing)}")
    return {name: os.environ[name] for name in REQUIRED_ENV}


def read_problems(path):
    with open(path, encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


def select(problems):
    """BENCHROUTER_INSTANCES (comma-separated indexes) keeps the named problems; BENCHROUTER_LIMIT the first N."""
    wanted = os.environ.get("BENCHROUTER_INSTANCES")
    if wanted:
        ids = wanted.split(",")
        known = {str(problem["index"]) for problem in problems}
        unknown = [i for i in ids if i not in known]
        if unknown:
            sys.exit(f"eval_arith.py: BENCHROUTER_INSTANCES: no problem {unknown}: expected indexes 0 to {len(problems) - 1}")
        problems = [problem for problem in problems if str(problem["index"]) in set(ids)]
    limit = os.environ.get("BENCHROUTER_LIMIT")
    if limit:
        if not limit.isdigit() or int(limit) < 1:
            sys.exit(f"eval_arith.py: BENCHROUTER_LIMIT: expected a positive whole number, got {limit!r}")
        problems = problems[: int(limit)]
    return problems


def chat(endpoint, api_key, model, messages, instance):
    """POSTs one chat completion for one problem (tagged with its index for BenchRouter's per-instance usage);
    retries rate limits, server errors and dropped connections."""
    url = endpoint.rstrip("/") + "/chat/completions"
    payload = json.dumps({"model": model, "messages": messages, "temperature": 0, "max_tokens": 32}).encode()
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {api_key}", "X-BenchRouter-Instance": str(instance)}

    for attempt in range(MAX_RETRIES + 1):
        request = urllib.request.Request(url, data=payload, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_SECONDS) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")[:500]
            if error.code not in RETRYABLE_STATUS or attempt == MAX_RETRIES:
                raise RuntimeError(f"POST {url} failed with HTTP {error.code}: {detail}") from None
            delay = retry_delay(attempt, error.headers.get("Retry-After"))
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
            if attempt == MAX_RETRIES:
                raise RuntimeError(f"POST {url} failed after {MAX_RETRIES + 1} attempts: {error}") from None
            delay = retry_delay(attempt, None)
        time.sleep(delay)


def retry_delay(attempt, retry_after):
    """Honors a numeric Retry-After (capped at 30 s); otherwise backs off 0.5 s, 1 s, 2 s."""
    try:
        return min(float(retry_after), 30.0)
    except (TypeError, ValueError):
        return 0.5 * 2**attempt


def main():
    parser = argparse.ArgumentParser(description="Score a model on arithmetic problems.")
    parser.add_argument("--problems", required=True, help="a JSONL file of {index, question, answer}")
    args = parser.parse_args()

    env = read_env()
    problems = select(read_problems(args.problems))
    output_dir = Path(env["BENCHROUTER_OUTPUT_DIR"])
    output_dir.mkdir(parents=True, exist_ok=True)

    correct = 0
    with open(output_dir / "records.jsonl", "w", encoding="utf-8") as records:
        for done, problem in enumerate(problems, start=1):
            messages = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": problem["question"]},
            ]
            try:
                response = chat(env["BENCHROUTER_MODEL_ENDPOINT"], env["BENCHROUTER_API_KEY"],
                                env["BENCHROUTER_MODEL_NAME"], messages, problem["index"])
            except RuntimeError as error:
                sys.exit(f"eval_arith.py: problem {problem['index']}: {error}")

            reply = response["choices"][0]["message"].get("content") or ""
            integers = INTEGER.findall(reply)
            prediction = integers[-1] if integers else None
            ground_truth = str(problem["answer"]).strip()
            score = 1 if prediction == ground_truth else 0
            correct += score

            usage = response.get("usage") or {}
            records.write(json.dumps({
                "index": problem["index"],
                "origin_query": problem["question"],
                "prompt": messages,
                "prediction": prediction,
                "ground_truth": ground_truth,
                "score": score,
                "prompt_tokens": usage.get("prompt_tokens"),
                "completion_tokens": usage.get("completion_tokens"),
                "cost": usage.get("cost") or 0,
                "raw_output": reply,
            }) + "\n")
            # Each line reaches the file as it is scored: the worker streams them as rewards while the task runs.
            records.flush()

            if done % 5 == 0 or done == len(problems):
                print(f"arith: {done}/{len(problems)} answered, {correct} correct", flush=True)

    total = len(problems)
    result = {"accuracy": correct / total if total else 0.0, "correct": correct, "total": total}
    (output_dir / "result.json").write_text(json.dumps(result) + "\n", encoding="utf-8")
    print(f"arith: accuracy {result['accuracy']:.4f} ({correct}/{total})", flush=True)


if __name__ == "__main__":
    main()
