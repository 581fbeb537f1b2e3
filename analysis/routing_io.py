"""Reads what BenchRouter gives a router container and writes what it reads back.

BenchRouter copies this file into the router's input directory ($BENCHROUTER_ROUTER_INPUT); a Python
router may import it or read the files itself (docs/routing-analysis.md, "Routers"). Standard
library only, plus numpy where embeddings are asked for.

  train_records()  the training records, from results/bench/<dataset>/<split>/<model>/*.json
  test_queries()   the test queries: id, dataset, index, prompt (and models, when some lack records)
  embed(queries)   one row per query from the embeddings endpoint (through BenchRouter's gateway);
                   a failed call raises, naming the query; never a zero vector
  write_choices()  choices.jsonl: one {"id", "model"} per test query, optionally per cost setting
  write_result()   result.json: how long training and routing took
"""

import glob
import json
import os
import time
import urllib.error
import urllib.request

INPUT = os.environ.get("BENCHROUTER_ROUTER_INPUT", os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.environ.get("BENCHROUTER_OUTPUT_DIR", "/app/results")


def manifest():
    with open(os.path.join(INPUT, "manifest.json"), encoding="utf-8") as f:
        return json.load(f)


def train_records():
    """Every training record: {id, dataset, model, prompt, score, cost}, files in path order."""
    out = []
    for file in sorted(glob.glob(os.path.join(INPUT, "results", "bench", "*", "*", "*", "*.json"))):
        with open(file, encoding="utf-8") as f:
            data = json.load(f)
        for r in data["records"]:
            out.append(
                {
                    "id": r["id"],
                    "dataset": data["benchrouter_dataset"],
                    "model": data["model_name"],
                    "prompt": r.get("prompt") or "",
                    "score": float(r["score"] or 0.0),
                    "cost": float(r["cost"] or 0.0),
                }
            )
    return out


def train_queries(records, models):
    """The training queries in first-seen order, with score and cost matrices (query x model; NaN where a model has no record)."""
    import numpy as np

    ids, prompts, row = [], [], {}
    for r in records:
        if r["id"] not in row:
            row[r["id"]] = len(ids)
            ids.append(r["id"])
            prompts.append(r["prompt"])
    col = {m: j for j, m in enumerate(models)}
    scores = np.full((len(ids), len(models)), np.nan)
    costs = np.full((len(ids), len(models)), np.nan)
    for r in records:
        scores[row[r["id"]], col[r["model"]]] = r["score"]
        costs[row[r["id"]], col[r["model"]]] = r["cost"]
    return ids, prompts, scores, costs


def test_queries():
    with open(os.path.join(INPUT, "test.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def embed(items, batch_size=64, attempts=4):
    """items: [(id, text)]. Returns a float64 array, one L2-normalized row per item."""
    import numpy as np

    endpoint = os.environ.get("BENCHROUTER_MODEL_ENDPOINT", "").rstrip("/")
    model = os.environ.get("BENCHROUTER_MODEL_NAME", "")
    if not endpoint or not model:
        raise RuntimeError("this router needs embeddings: BENCHROUTER_MODEL_ENDPOINT and BENCHROUTER_MODEL_NAME are not set")
    key = os.environ.get("BENCHROUTER_API_KEY", "")
    rows = []
    for start in range(0, len(items), batch_size):
        batch = items[start : start + batch_size]
        body = json.dumps({"model": model, "input": [text or " " for _, text in batch]}).encode()
        for attempt in range(1, attempts + 1):
            request = urllib.request.Request(
                f"{endpoint}/embeddings",
                data=body,
                headers={"content-type": "application/json", "authorization": f"Bearer {key}"},
            )
            try:
                with urllib.request.urlopen(request, timeout=120) as response:
                    data = json.load(response)["data"]
                break
            except (urllib.error.URLError, OSError, ValueError, KeyError) as error:
                retry = not isinstance(error, urllib.error.HTTPError) or error.code == 429 or error.code >= 500
                if attempt == attempts or not retry:
                    raise RuntimeError(f"embedding query {batch[0][0]} (and {len(batch) - 1} more in its batch) failed: {error}") from error
                time.sleep(0.25 * 2 ** (attempt - 1))
        if len(data) != len(batch):
            raise RuntimeError(f"embedding query {batch[0][0]}: expected {len(batch)} embeddings, got {len(data)}")
        for position, item in enumerate(sorted(data, key=lambda d: d.get("index", 0))):
            vector = np.asarray(item["embedding"], dtype=np.float64)
            norm = np.linalg.norm(vector)
            if not np.isfinite(norm) or norm == 0:
                raise RuntimeError(f"embedding query {batch[position][0]}: the endpoint returned a zero or non-finite vector")
            rows.append(vector / norm)
    return np.vstack(rows) if rows else np.zeros((0, 0))


def write_choices(choices):
    """choices: [{"id", "model"}] and, for a cost-aware router, more with "setting" (a number: α, a threshold...)."""
    os.makedirs(OUTPUT, exist_ok=True)
    with open(os.path.join(OUTPUT, "choices.jsonl"), "w", encoding="utf-8") as f:
        for c in choices:
            f.write(json.dumps(c) + "\n")


def write_result(train_seconds, route_seconds, **extra):
    os.makedirs(OUTPUT, exist_ok=True)
    with open(os.path.join(OUTPUT, "result.json"), "w", encoding="utf-8") as f:
        json.dump({"train_seconds": train_seconds, "route_seconds": route_seconds, **extra}, f)
