#!/usr/bin/env python3
"""Text-to-SQL scored by execution against a real PostgreSQL in this task's own Docker daemon.

Starts the preloaded PostgreSQL image, loads the task's schema, asks the model for one query per
question, and counts a question correct when the model's result set equals the gold query's (rows as
a multiset, column order kept: execution accuracy as Spider defines it). python3 stdlib only.

    python3 eval_sql.py --schema schema.sql --questions questions.jsonl
"""
import argparse, json, os, re, subprocess, sys, time, urllib.error, urllib.request
from collections import Counter
from pathlib import Path

IMAGE = "benchrouter/bench-postgres:15"
SQL_BLOCK = re.compile(r"```(?:sql)?\s*(.*?)```", re.S | re.I)
SYSTEM_PROMPT = "You write PostgreSQL. Answer with exactly one SELECT query in a ```sql code block and nothing else."


def psql(sql, read_only=True):
    """Runs SQL in the database container; returns (rows, error). Reads are read-only and time-limited."""
    settings = ["-c", "SET statement_timeout = '10s'"] + (["-c", "SET default_transaction_read_only = on"] if read_only else [])
    done = subprocess.run(["docker", "exec", "-i", "bench-db", "psql", "-U", "postgres", "-X", "-q", "-A", "-t", "-F", "\x1f", "-v", "ON_ERROR_STOP=1", *settings, "-c", sql],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return None, done.stderr.strip()
    return Counter(line for line in done.stdout.split("\n") if line != ""), None


def start_database(schema):
    subprocess.run(["docker", "run", "-d", "--name", "bench-db", IMAGE], check=True, capture_output=True)
    for _ in range(300):
        if subprocess.run(["docker", "exec", "bench-db", "pg_isready", "-q"]).returncode == 0:
            break
        time.sleep(0.2)
    else:
        sys.exit("eval_sql.py: PostgreSQL in bench-db did not become ready within 60 s")
    _, error = psql(schema, read_only=False)
    if error:
        sys.exit(f"eval_sql.py: loading the schema failed: {error}")


def chat(messages, instance):
    url = os.environ["BENCHROUTER_MODEL_ENDPOINT"].rstrip("/") + "/chat/completions"
    body = json.dumps({"model": os.environ["BENCHROUTER_MODEL_NAME"], "messages": messages, "temperature": 0}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json", "Authorization": f"Bearer {os.environ['BENCHROUTER_API_KEY']}", "X-BenchRouter-Instance": str(instance)})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        sys.exit(f"eval_sql.py: POST {url} failed with HTTP {error.code}: {error.read().decode(errors='replace')[:500]}")
    except urllib.error.URLError as error:
        sys.exit(f"eval_sql.py: POST {url} failed: {error.reason}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--schema", required=True)
    parser.add_argument("--questions", required=True)
    args = parser.parse_args()
    schema = Path(args.schema).read_text()
    questions = [json.loads(line) for line in Path(args.questions).read_text().splitlines() if line.strip()]
    if os.environ.get("BENCHROUTER_INSTANCES"):
        wanted = set(os.environ["BENCHROUTER_INSTANCES"].split(","))
        if wanted - {q["index"] for q in questions}:
            sys.exit(f"eval_sql.py: BENCHROUTER_INSTANCES: no question {sorted(wanted - {q['index'] for q in questions})} in {args.questions}")
        questions = [q for q in questions if q["index"] in wanted]
    if os.environ.get("BENCHROUTER_LIMIT"):
        questions = questions[: int(os.environ["BENCHROUTER_LIMIT"])]
    out = Path(os.environ["BENCHROUTER_OUTPUT_DIR"])
    start_database(schema)

    correct = 0
    with open(out / "records.jsonl", "w") as records:
        for q in questions:
            messages = [{"role": "system", "content": SYSTEM_PROMPT},
                        {"role": "user", "content": f"Database schema:\n{schema}\nQuestion: {q['question']}"}]
            response = chat(messages, q["index"])
            reply = response["choices"][0]["message"].get("content") or ""
            match = SQL_BLOCK.search(reply)
            predicted = (match.group(1) if match else reply).strip().rstrip(";")
            gold_rows, gold_error = psql(q["gold"])
            if gold_error:
                sys.exit(f"eval_sql.py: {args.questions}: {q['index']}: the gold query fails: {gold_error}")
            rows, error = psql(predicted)
            score = int(error is None and rows == gold_rows)
            correct += score
            usage = response.get("usage") or {}
            records.write(json.dumps({"index": q["index"], "origin_query": q["question"], "prompt": messages, "prediction": predicted,
                                      "ground_truth": q["gold"], "score": score, "prompt_tokens": usage.get("prompt_tokens"),
                                      "completion_tokens": usage.get("completion_tokens"), "cost": usage.get("cost") or 0, "raw_output": error or reply}) + "\n")
            print(f"eval_sql: {q['index']}: {'correct' if score else 'wrong'}{f' ({error})' if error else ''}", flush=True)
    total = len(questions)
    result = {"execution_accuracy": correct / total if total else 0.0, "correct": correct, "total": total}
    (out / "result.json").write_text(json.dumps(result) + "\n")
    print(f"eval_sql: execution accuracy {result['execution_accuracy']:.4f} ({correct}/{total})", flush=True)


if __name__ == "__main__":
    main()
