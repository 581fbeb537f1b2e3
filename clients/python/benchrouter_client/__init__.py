"""BenchRouter's HTTP API from Python (stdlib only): submit a run, wait for it, read its results, and
iterate over its rewards as the tasks score them, resuming after a dropped connection with no reward
lost or repeated.

    from benchrouter_client import Client
    client = Client("http://127.0.0.1:8391", token)
    run = client.submit("arith", model="my-policy", endpoint="http://127.0.0.1:8000/v1", instances=["0", "3"])
    for reward in client.rewards(run):
        print(reward.instance, reward.score)
"""

import difflib
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional

__all__ = ["Client", "Reward", "ApiError", "TERMINAL_STATUSES", "RUN_OPTIONS", "check_run_options"]

TERMINAL_STATUSES = {"COMPLETED", "PARTIAL", "FAILED", "CANCELLED", "TERMINATED", "TIMED_OUT"}
RETRYABLE_STATUS = {429, 502, 503, 504}

# The submit body's JSON Schema, generated from BenchRouter's one definition of a run's options
# (`npm run generate:run-options`): the names and types a run accepts, with their descriptions.
with open(os.path.join(os.path.dirname(__file__), "run_options.json")) as _file:
    _RUN_REQUEST = json.load(_file)
RUN_OPTIONS = {name: spec for name, spec in _RUN_REQUEST["properties"].items() if name != "benchmark"}

_JSON_TYPES = {
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, (list, tuple)),
    "object": lambda v: isinstance(v, dict),
}


def check_run_options(options: Dict[str, Any]) -> None:
    """Raises ValueError naming the first option BenchRouter does not know, or whose value has the wrong type,
    before anything is sent; the server checks the rest (ranges, rules between options) and says so."""
    for name, value in options.items():
        spec = RUN_OPTIONS.get(name)
        if spec is None:
            close = difflib.get_close_matches(name, RUN_OPTIONS, n=1)
            raise ValueError(f"unknown run option {name!r}" + (f" (did you mean {close[0]!r}?)" if close else "") + "; see docs/run-options.md")
        expected = spec.get("type")
        if expected in _JSON_TYPES and value is not None and not _JSON_TYPES[expected](value):
            raise ValueError(f"run option {name!r}: expected {expected}, got {type(value).__name__} {value!r} ({spec.get('description', '')})")


class ApiError(Exception):
    """An error answer of the API: HTTP status, its code (BAD_REQUEST, NOT_FOUND, ...), message and field."""

    def __init__(self, status: int, code: str, message: str, field: Optional[str] = None):
        super().__init__(f"HTTP {status} {code}: {message}" + (f" ({field})" if field else ""))
        self.status, self.code, self.message, self.field = status, code, message, field


@dataclass(frozen=True)
class Reward:
    """One scored instance: its records.jsonl line, as the stream delivered it."""

    job: str
    task: str
    repeat: int
    line: int
    instance: Any
    score: float
    prompt_tokens: Optional[float]
    completion_tokens: Optional[float]
    cost: Optional[float]
    event_id: str

    @staticmethod
    def from_event(data: Dict[str, Any], event_id: str) -> "Reward":
        return Reward(
            job=data["job"], task=data["task"], repeat=data["repeat"], line=data["line"], instance=data["instance"],
            score=data["score"], prompt_tokens=data.get("prompt_tokens"), completion_tokens=data.get("completion_tokens"),
            cost=data.get("cost"), event_id=event_id,
        )


class Client:
    """`base_url` of `br serve` (e.g. http://127.0.0.1:8391) and a token from `br tokens add`."""

    def __init__(self, base_url: str, token: str, timeout: float = 30.0, retries: int = 5, backoff: float = 0.5):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff

    # --- runs -----------------------------------------------------------------------------------

    def submit(self, benchmark: str, model: str, endpoint: str, idempotency_key: Optional[str] = None, **options: Any) -> str:
        """Starts a run and returns its id. `options` are the run's other options by their one name (instances,
        limit, tasks, repeats, concurrency, apiKeyEnv, ...: RUN_OPTIONS, docs/run-options.md), checked here
        first. With `idempotency_key`, a retried submit names the run the first one made instead of starting another."""
        check_run_options(options)
        body = {"benchmark": benchmark, "model": model, "endpoint": endpoint, **options}
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return self._call("POST", "/evals/submit", body=body, headers=headers)["runId"]

    def status(self, run_id: str) -> Dict[str, Any]:
        """`{runId, workflowStatus, status, progress, overall?, ...}`."""
        return self._call("GET", f"/runs/{_quote(run_id)}")

    def wait(self, run_id: str, timeout: Optional[float] = None, poll: float = 1.0) -> Dict[str, Any]:
        """Waits for the run to end and returns its results; TimeoutError after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.status(run_id)["status"] in TERMINAL_STATUSES:
                return self.results(run_id)
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"run {run_id} did not end within {timeout} s")
            time.sleep(poll)

    def results(self, run_id: str) -> Dict[str, Any]:
        """The finished run's RunResult (`{runId, status, overall, jobs, ...}`); ApiError 409 while it runs."""
        return self._call("GET", f"/runs/{_quote(run_id)}/results")

    def records(self, run_id: str) -> List[Dict[str, Any]]:
        """Every per-instance record of the finished run (all pages)."""
        records: List[Dict[str, Any]] = []
        offset: Optional[int] = 0
        while offset is not None:
            page = self._call("GET", f"/runs/{_quote(run_id)}/records?offset={offset}&limit=1000")
            records.extend(page["records"])
            offset = page.get("nextOffset")
        return records

    # --- rewards --------------------------------------------------------------------------------

    def rewards(self, run_id: str, after: str = "", max_retries: int = 20) -> Iterator[Reward]:
        """Each reward of the run as its task scores it, until every job has its result. A dropped
        connection or a restarting server is retried (up to `max_retries` times in a row, with backoff)
        and resumed from the last reward yielded (Last-Event-ID), so none is lost or repeated. `after`:
        a `Reward.event_id` from an earlier iteration, to resume from there."""
        last_id = after
        failures = 0
        while True:
            headers = {"Accept": "text/event-stream", **({"Last-Event-ID": last_id} if last_id else {})}
            try:
                with self._open("GET", f"/runs/{_quote(run_id)}/rewards", headers=headers, timeout=max(self.timeout, 60.0)) as response:
                    for event, data, event_id in _server_events(response):
                        failures = 0
                        if event == "reward":
                            last_id = event_id
                            yield Reward.from_event(json.loads(data), event_id)
                        elif event == "end":
                            return
                        elif event == "error":
                            raise ConnectionError(json.loads(data).get("message", data))
                # Closed without `end`: the server went away mid-stream.
                raise ConnectionError("the rewards stream closed before its end")
            except ApiError as error:
                if error.status not in RETRYABLE_STATUS:
                    raise
                failures = self._after_failure(failures, max_retries, error)
            except (OSError, ConnectionError, urllib.error.URLError) as error:
                failures = self._after_failure(failures, max_retries, error)

    def _after_failure(self, failures: int, max_retries: int, error: Exception) -> int:
        if failures >= max_retries:
            raise ConnectionError(f"rewards stream failed {failures + 1} times in a row: {error}") from error
        time.sleep(min(self.backoff * 2**failures, 10.0))
        return failures + 1

    # --- HTTP -----------------------------------------------------------------------------------

    def _open(self, method: str, path: str, body: Any = None, headers: Optional[Dict[str, str]] = None, timeout: Optional[float] = None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base_url + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}",
            **({"Content-Type": "application/json"} if data is not None else {}),
            **(headers or {}),
        })
        try:
            return urllib.request.urlopen(request, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as error:
            raise _api_error(error) from None

    def _call(self, method: str, path: str, body: Any = None, headers: Optional[Dict[str, str]] = None) -> Any:
        """One JSON call; connection failures and 429/502/503/504 are retried with backoff (a submit is
        safe to retry only with an idempotency key, so a POST is retried only when it never connected)."""
        for attempt in range(self.retries + 1):
            try:
                with self._open(method, path, body, headers) as response:
                    return json.load(response)
            except ApiError as error:
                if error.status not in RETRYABLE_STATUS or attempt == self.retries:
                    raise
            except urllib.error.URLError as error:
                never_sent = isinstance(error.reason, ConnectionRefusedError)
                if attempt == self.retries or (method != "GET" and not never_sent and not (headers or {}).get("Idempotency-Key")):
                    raise
            time.sleep(min(self.backoff * 2**attempt, 10.0))
        raise AssertionError("unreachable")


def _quote(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _api_error(error: urllib.error.HTTPError) -> ApiError:
    text = error.read().decode(errors="replace")
    try:
        body = json.loads(text)["error"]
        return ApiError(error.code, body.get("code", ""), body.get("message", ""), body.get("field"))
    except (ValueError, KeyError, TypeError):
        return ApiError(error.code, "", text[:500])


def _server_events(response) -> Iterator[tuple]:
    """(event, data, id) of each Server-Sent Event, as the stream delivers them (comments and `retry:` skipped)."""
    event, data, event_id = "message", [], ""
    for raw in response:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                yield event, "\n".join(data), event_id
            event, data = "message", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
        elif field == "id":
            event_id = value
