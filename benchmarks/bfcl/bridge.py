#!/usr/bin/env python3
"""BenchRouter bridge for bfcl-eval: the BENCHROUTER_* variables become BFCL's own configuration, then
BFCL's own `generate` and `evaluate` commands run unmodified and its score file becomes result.json.

    python3 bridge.py --category simple_python
    python3 bridge.py --category simple_python --list     # the category's entry ids, one per line (task.yaml's instances)
"""
import argparse, dataclasses, json, os, sys
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--category", required=True, help="a BFCL test category, e.g. simple_python")
parser.add_argument("--list", action="store_true", help="print the category's entry ids and run nothing")
parsed = parser.parse_args()
category = parsed.category
# BFCL prints its per-request errors to stdout; line-buffered, they come before the bridge's own last word.
sys.stdout.reconfigure(line_buffering=True)
root = Path("/tmp/bfcl")
# BFCL reads these at import time: where it writes results and scores, and the OpenAI-compatible endpoint (none to list ids).
os.environ.update(BFCL_PROJECT_ROOT=str(root), OPENAI_BASE_URL=os.environ.get("BENCHROUTER_MODEL_ENDPOINT", "http://unused/v1"), OPENAI_API_KEY=os.environ.get("BENCHROUTER_API_KEY", "unused"))

from bfcl_eval.__main__ import cli  # noqa: E402
from bfcl_eval.constants.eval_config import PROMPT_PATH, POSSIBLE_ANSWER_PATH  # noqa: E402
from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING  # noqa: E402

data_file = PROMPT_PATH / f"BFCL_v4_{category}.json"
ids = [json.loads(line)["id"] for line in data_file.read_text().splitlines() if line.strip()]
if parsed.list:
    print("\n".join(ids))
    sys.exit(0)

# BFCL knows models by registry name; the served model is registered as BFCL's generic OpenAI
# Chat Completions function-calling entry under its own name, so the request names the real model.
model = os.environ["BENCHROUTER_MODEL_NAME"]
MODEL_CONFIG_MAPPING[model] = dataclasses.replace(MODEL_CONFIG_MAPPING["openbmb/MiniCPM-SALA-FC"], model_name=model, display_name=model)

out = Path(os.environ["BENCHROUTER_OUTPUT_DIR"])
if os.environ.get("BENCHROUTER_INSTANCES"):
    wanted = set(os.environ["BENCHROUTER_INSTANCES"].split(","))
    if wanted - set(ids):
        sys.exit(f"bridge.py: BENCHROUTER_INSTANCES: no entry {sorted(wanted - set(ids))} in BFCL_v4_{category}.json")
    ids = [i for i in ids if i in wanted]
if os.environ.get("BENCHROUTER_LIMIT"):
    ids = ids[: int(os.environ["BENCHROUTER_LIMIT"])]
root.mkdir(parents=True, exist_ok=True)
(root / "test_case_ids_to_generate.json").write_text(json.dumps({category: ids}))

def bfcl(*args):
    print("bridge: bfcl", " ".join(args), flush=True)
    cli(list(args), standalone_mode=False)


bfcl("generate", "--model", model, "--test-category", category, "--run-ids", "--num-threads", "1")
results = {e["id"]: e for e in map(json.loads, next((root / "result").rglob(f"BFCL_v4_{category}_result.json")).read_text().splitlines())}
# BFCL records a request that failed (model unreachable, HTTP error) as a wrong answer; that is a failed run, not a score.
errors = [f"{i}: {e['result']}" for i, e in results.items() if isinstance(e.get("result"), str) and e["result"].startswith("Error during inference")]
def fail(message):
    # On both streams, after BFCL's own lines: Docker reads stdout and stderr apart, so a progress bar's last
    # redraw on stderr can reach the log after a line on stdout; the job's message is the log's last line.
    print(message, flush=True)
    print(message, file=sys.stderr, flush=True)
    sys.exit(1)


if errors:
    fail(f"bridge.py: {len(errors)} of {len(results)} requests to the model failed, first: {errors[0]}")
bfcl("evaluate", "--model", model, "--test-category", category, "--partial-eval")

score_file = next((root / "score").rglob(f"BFCL_v4_{category}_score.json"), None)
if score_file is None:
    fail(f"bridge.py: bfcl evaluate wrote no BFCL_v4_{category}_score.json under {root / 'score'}")
summary, *failures = [json.loads(line) for line in score_file.read_text().splitlines() if line.strip()]
failed = {entry["id"]: entry for entry in failures}
answers = {e["id"]: e for e in map(json.loads, (POSSIBLE_ANSWER_PATH / data_file.name).read_text().splitlines()) if e["id"] in results}


def token_total(count):
    """BFCL's token count of an entry: a number, or in multi-turn categories a list per turn of a list per step."""
    if isinstance(count, list):
        counts = [token_total(c) for c in count]
        return None if any(c is None for c in counts) else sum(counts)
    return count


with open(out / "records.jsonl", "w") as records:
    for index in ids:
        result = results.get(index, {})
        records.write(json.dumps({"index": index, "origin_query": None, "prompt": None, "prediction": result.get("result"),
                                  "ground_truth": answers.get(index, {}).get("ground_truth"), "score": 0 if index in failed else 1,
                                  "prompt_tokens": token_total(result.get("input_token_count")), "completion_tokens": token_total(result.get("output_token_count")),
                                  "cost": 0, "raw_output": failed.get(index, {}).get("error")}, default=str) + "\n")
(out / "result.json").write_text(json.dumps({"category": category, **summary}) + "\n")
print(f"bridge: {category} accuracy {summary['accuracy']} ({summary['correct_count']}/{summary['total_count']})", flush=True)
