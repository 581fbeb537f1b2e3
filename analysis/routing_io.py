"""Reads what BenchRouter gives a router container and writes what it reads back.

BenchRouter copies this file into the router's input directory ($BENCHROUTER_ROUTER_INPUT); a Python
router may import it or read the files itself (docs/routing-analysis.md, "Routers"). Standard
library only, plus numpy where embeddings are asked for.

  train_records()  the training records, from results/bench/<dataset>/<split>/<model>/*.json
  test_queries()   the test queries: id, dataset, index, prompt (and models, when some lack records)
  embed(queries)   one row per query: from embeddings.jsonl (the analysis's own cache) where it has the
                   text, else from the embeddings endpoint (through BenchRouter's gateway); a failed
                   call raises, naming the query; never a zero vector
  serve_embeddings()  a local OpenAI-compatible /embeddings endpoint answering through embed(), for
                   upstream router code that embeds by itself (point OPENAI_BASE_URL at it)
  strong_and_weak()  the pair a two-model router routes between, from the training means
  write_choices()  choices.jsonl: one {"id", "model"} per test query, optionally per cost setting
  write_result()   result.json: how long training and routing took
"""

import base64
import glob
import hashlib
import http.server
import json
import os
import threading
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


def strong_and_weak(mean_score, mean_cost):
    """(strong, weak) for routers of a pair (HybridLLM, RouteLLM) on records of any number of models: the most
    accurate on train (ties: the dearer, then the first), and the cheapest of the rest (ties: the more accurate,
    then the first); of two models, simply the other."""
    everyone = range(len(mean_score))
    strong = min(everyone, key=lambda m: (-mean_score[m], -mean_cost[m], m))
    weak = min((m for m in everyone if m != strong), key=lambda m: (mean_cost[m], -mean_score[m], m))
    return strong, weak


def test_queries():
    with open(os.path.join(INPUT, "test.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


_cached = None


def cached_vectors():
    """{sha256 of a text: its vector} from embeddings.jsonl, the analysis's cache (empty without it)."""
    global _cached
    if _cached is None:
        import numpy as np

        _cached = {}
        file = os.path.join(INPUT, "embeddings.jsonl")
        if os.path.exists(file):
            with open(file, encoding="utf-8") as f:
                for line in f:
                    if line.strip():
                        entry = json.loads(line)
                        _cached[entry["h"]] = np.frombuffer(base64.b64decode(entry["v"]), dtype="<f4").astype(np.float64)
    return _cached


def embed(items, batch_size=64, attempts=4):
    """items: [(id, text)]. Returns a float64 array, one L2-normalized row per item."""
    import numpy as np

    known = cached_vectors()
    hashes = [hashlib.sha256(text.encode("utf-8")).hexdigest() for _, text in items]
    missing = [i for i, h in enumerate(hashes) if h not in known]
    if missing:
        fresh = _embed_by_endpoint([items[i] for i in missing], batch_size, attempts)
        for row, i in enumerate(missing):
            known[hashes[i]] = fresh[row]
    rows = []
    for (query_id, _), h in zip(items, hashes):
        vector = known[h]
        norm = np.linalg.norm(vector)
        if not np.isfinite(norm) or norm == 0:
            raise RuntimeError(f"embedding query {query_id}: a zero or non-finite vector")
        rows.append(vector / norm)
    return np.vstack(rows) if rows else np.zeros((0, 0))


def serve_embeddings():
    """Starts a local OpenAI-compatible embeddings endpoint (a daemon thread) answering through embed();
    returns its base URL, e.g. for OPENAI_BASE_URL. It counts the requests it answered in served["requests"]."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = embed([(f"text {text[:40]!r}", text) for text in texts])
                as_base64 = body.get("encoding_format") == "base64"
                data = [
                    {
                        "object": "embedding",
                        "index": i,
                        "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode() if as_base64 else v.tolist(),
                    }
                    for i, v in enumerate(vectors)
                ]
                answer = json.dumps({"object": "list", "data": data, "model": body.get("model", ""), "usage": {"prompt_tokens": 0, "total_tokens": 0}}).encode()
                served["requests"] += 1
                self.send_response(200)
            except Exception as error:  # the caller sees the failure, naming the query, as an HTTP error
                answer = json.dumps({"error": {"message": str(error)}}).encode()
                self.send_response(502)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args):
            pass

    served["requests"] = 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


served = {"requests": 0}


def _embed_by_endpoint(items, batch_size, attempts):
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
            rows.append(vector)
    return rows


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
