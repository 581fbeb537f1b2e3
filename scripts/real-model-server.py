"""A real model behind an OpenAI-compatible API, offline: a GGUF (SmolLM2-135M-Instruct, or Qwen2.5-Coder, as
scripts/real-model.sh fetches them) served by llama.cpp's own HTTP server (the PyPI wheel xllamacpp). Started by
scripts/real-model.sh, which installs both; see docs/real-model.md.

    real-model-server.py <gguf path> <port> <model name>

With REAL_MODEL_TOOL_PARSER=json (scripts/real-model.sh sets it for Qwen2.5-Coder), llama.cpp listens on a port of
its own and this process answers on <port>, passing every request through unchanged, and turning a tool call the
model wrote as JSON text into an OpenAI `tool_calls` entry, as vLLM's and llama.cpp's per-model tool parsers do for
the formats they know: Qwen2.5-Coder writes its calls as a fenced JSON object (or list), not in the <tool_call>
tags its chat template asks for, so llama.cpp passes them on as content.
"""

import http.client
import json
import os
import re
import signal
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import xllamacpp

model_path, port, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
params = xllamacpp.CommonParams()
params.model.path = model_path
params.model_alias = {name}  # a set: a plain string would become a set of its characters
tool_parser = os.environ.get("REAL_MODEL_TOOL_PARSER", "")
if tool_parser not in ("", "json"):
    sys.exit(f"real-model-server.py: REAL_MODEL_TOOL_PARSER: expected json or nothing, got {tool_parser!r}")
if tool_parser:
    with socket.socket() as probe:  # a free port for llama.cpp itself; the parser answers on `port`
        probe.bind(("127.0.0.1", 0))
        inner_port = probe.getsockname()[1]
else:
    inner_port = port
params.port = inner_port
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

FENCED = re.compile(r"```(?:json)?\s*\n?(.*?)```", re.S)
TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


def calls_in(text, tool_names):
    """The tool calls a reply writes as text: JSON objects {"name", "arguments"} (or lists of them) in fenced blocks,
    in <tool_call> tags, or as the whole reply, each naming one of the request's tools; None when the reply is
    anything else, so that an ordinary answer stays an answer."""
    pieces = FENCED.findall(text) or TAGGED.findall(text) or [text]
    calls = []
    for piece in pieces:
        piece = piece.strip()
        try:
            parsed = json.loads(piece)
        except ValueError:
            # Seen from Qwen2.5-Coder: the object in doubled braces, as its template's examples escape them.
            if not (piece.startswith("{{") and piece.endswith("}}")):
                return None
            try:
                parsed = json.loads(piece[1:-1])
            except ValueError:
                return None
        for call in parsed if isinstance(parsed, list) else [parsed]:
            if not (isinstance(call, dict) and call.get("name") in tool_names and isinstance(call.get("arguments", {}), (dict, str))):
                return None
            arguments = call.get("arguments", {})
            calls.append({"name": call["name"], "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)})
    return calls or None


def with_tool_calls(request, answer):
    """The answer with each choice's text tool calls as `tool_calls`, when the request offered tools."""
    tool_names = {t.get("function", {}).get("name") for t in request.get("tools") or []}
    if not tool_names:
        return answer
    for choice in answer.get("choices") or []:
        message = choice.get("message") or {}
        calls = None if message.get("tool_calls") else calls_in(message.get("content") or "", tool_names)
        if calls:
            message["content"] = None
            message["tool_calls"] = [{"id": f"call_{i}", "type": "function", "function": call} for i, call in enumerate(calls)]
            choice["finish_reason"] = "tool_calls"
    return answer


class ToolParser(BaseHTTPRequestHandler):
    """Passes each request to llama.cpp; rewrites a non-streamed chat completion's text tool calls."""

    def do_GET(self):
        self.forward(None)

    def do_POST(self):
        self.forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    def forward(self, body):
        upstream = http.client.HTTPConnection("127.0.0.1", inner_port, timeout=3600)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
        upstream.request(self.command, self.path, body=body, headers=headers)
        response = upstream.getresponse()
        try:  # a body llama.cpp refuses as not JSON is passed through, refused by it
            request = json.loads(body) if body and self.path.endswith("/chat/completions") else {}
        except ValueError:
            request = {}
        if response.status == 200 and request and not request.get("stream"):
            payload = json.dumps(with_tool_calls(request, json.loads(response.read()))).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        else:  # as llama.cpp answered, streamed through (HTTP/1.0: the end of the body is the connection's)
            self.send_response(response.status)
            for key, value in response.getheaders():
                if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(key, value)
            self.end_headers()
            while chunk := response.read1(65536):
                self.wfile.write(chunk)
                self.wfile.flush()
        upstream.close()

    def log_message(self, *args):
        pass


server = xllamacpp.Server(params)  # listens on 127.0.0.1 only: it has no API key
if tool_parser:
    parser = ThreadingHTTPServer(("127.0.0.1", port), ToolParser)
    threading.Thread(target=parser.serve_forever, daemon=True).start()
print(f"{name} on http://127.0.0.1:{port}/v1 ({model_path}){' with the JSON tool-call parser' if tool_parser else ''}", flush=True)
signal.sigwait({signal.SIGINT, signal.SIGTERM})
