#!/usr/bin/env python3
"""Writes test/fixtures/replay/swe-repair.jsonl, the replay model's canned agent turns for the swe-repair
fidelity test: runs the shard driver on every planned instance against a recording model on loopback that
answers each instance's planned turns in order, and writes every request it got with its answer. Runs in a
DinD container of the benchmark's harness image (mini-swe-agent's requests go out from there):

    docker run --rm <DinD flags> -v <dir>:/var/lib/docker -v <base image tar dir>:/app/preload:ro \\
      -v $PWD/benchmarks/swe-repair:/app/benchmark:ro -v $PWD/test:/test \\
      benchrouter-env/swe-repair-harness:<tag> python3 /test/support/swe-repair-answers.py
"""
import json, os, subprocess, sys, tempfile, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ACTION = "```mswea_bash_command\n{}\n```"
SUBMIT = "THOUGHT: The patch is ready; submitting it.\n\n" + ACTION.format("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt")


def gold_by_heredoc(instance, source):
    """A turn that applies the reference fix with git apply, and writes patch.txt."""
    patch = Path(f"/app/benchmark/task-repo/tasks/{instance}/gold.patch").read_text()
    return "THOUGHT: I will apply the fix and write the patch.\n\n" + ACTION.format(
        f"cat > /tmp/fix.diff <<'EOF'\n{patch}EOF\ngit apply /tmp/fix.diff && git diff -- {source} > patch.txt"
    )


PLANS = {
    # Fixed with one sed: resolved.
    "semver-453": [
        "THOUGHT: The comparison operators accept only Version, while compare() accepts type(self).\n\n"
        + ACTION.format("sed -i 's/^            Version,$/            type(self),/' src/semver/version.py && git diff -- src/semver/version.py > patch.txt"),
        SUBMIT,
    ],
    # Looks, then submits nothing: an empty patch is not resolved.
    "more-itertools-partition": [
        "THOUGHT: Let me find the function.\n\n" + ACTION.format("grep -n 'def partition' more_itertools/recipes.py"),
        "THOUGHT: I could not find the problem; submitting no change.\n\n" + ACTION.format("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
    ],
    # Fixed with the reference patch: resolved.
    "tabulate-82": [gold_by_heredoc("tabulate-82", "tabulate/__init__.py"), SUBMIT],
    # A wrong fix (a tuple consumes the iterator as a list does): the harness grades it, not resolved.
    "tabulate-175": [
        "THOUGHT: Use a tuple for the index.\n\n"
        + ACTION.format("sed -i 's/rows = _prepend_row_index(rows, list(showindex))/rows = _prepend_row_index(rows, tuple(showindex))/' tabulate/__init__.py && git diff -- tabulate/__init__.py > patch.txt"),
        SUBMIT,
    ],
}
SHARDS = [["semver-453", "more-itertools-partition"], ["tabulate-82", "tabulate-175"]]

recorded = []
turns = {instance: iter(plan) for instance, plan in PLANS.items()}


class Recorder(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        instance = self.headers.get("X-BenchRouter-Instance")
        reply = next(turns[instance])
        recorded.append({"messages": body["messages"], "content": reply})
        answer = {
            "id": f"chatcmpl-{len(recorded)}", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
threading.Thread(target=server.serve_forever, daemon=True).start()
for shard in SHARDS:
    with tempfile.TemporaryDirectory() as out:
        env = {**os.environ, "BENCHROUTER_MODEL_ENDPOINT": f"http://127.0.0.1:{server.server_port}/v1", "BENCHROUTER_MODEL_NAME": "replay",
               "BENCHROUTER_API_KEY": "replay", "BENCHROUTER_OUTPUT_DIR": out}
        subprocess.run([sys.executable, "/app/benchmark/run_shard.py", "--instances", ",".join(shard)], env=env, check=True)
        print(Path(out, "result.json").read_text(), file=sys.stderr)
left = {instance: len(list(rest)) for instance, rest in turns.items()}
if any(left.values()):
    sys.exit(f"planned turns not asked for: {left}")
with open("/test/fixtures/replay/swe-repair.jsonl", "w") as answers:
    answers.writelines(json.dumps(line) + "\n" for line in recorded)
