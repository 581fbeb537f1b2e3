#!/usr/bin/env python3
"""Writes each instance of a BenchRouter run as a Harbor ATIF trajectory (Agent Trajectory Interchange Format),
built with Harbor's own pydantic models (harbor.models.trajectories) and written as Harbor's agents write theirs
(format_trajectory_json of to_json_dict), so the format stays Harbor's. `br export <run> --format atif` runs it in
the harbor benchmark's image with the run gathered into one JSON file:

    python3 export_atif.py RUN.json OUT_DIR

RUN.json: {"run": {run_id, benchmark, benchmark_digest, model, status, created, completed, benchrouter},
           "trajectories": [{path, session_id, task, record: {id, input, target, output, score, score_value,
                             explanation, prompt_tokens, completion_tokens, metadata},
                             calls: [{seq, sent_at, at, model, asked, answer, usage, latency_ms, cache}],
                             tools, capped}]}
Each call's `asked` holds the chat messages its request added to the conversation, `answer` the model's message,
each as {role, text, reasoning, tool_calls: [{id, name, arguments}], tool_call_id} (cli/export-atif.ts). Steps: system (and developer) messages as system steps, user messages as user steps, each answer as an
agent step (its tool calls, reasoning and token usage), tool results as the observation of the agent step whose
call they answer; an assistant message the harness wrote into a request (no call of the model's answered it: a
few-shot example, a rewritten history) is an agent step marked is_copied_context. The n-th trajectory is written
as OUT_DIR/<n>.json (the caller puts it at its path); prints each file it wrote.
"""
import json, sys
from pathlib import Path

from harbor.models.trajectories import Agent, FinalMetrics, Metrics, Observation, ObservationResult, Step, ToolCall, Trajectory
from harbor.utils.trajectory_utils import format_trajectory_json

bundle = json.loads(Path(sys.argv[1]).read_text())
out_dir = Path(sys.argv[2])
run = bundle["run"]


def text(value) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def metrics(call: dict) -> Metrics:
    usage = call.get("usage") or {}
    extra = {"latency_ms": call.get("latency_ms")}
    if usage.get("reasoning_tokens") is not None:
        extra["reasoning_tokens"] = usage["reasoning_tokens"]
    if call.get("cache"):
        extra["cache"] = call["cache"]
    return Metrics(
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        cached_tokens=usage.get("cached_tokens"),
        cost_usd=usage.get("cost_usd"),
        extra=extra,
    )


def steps_of(trajectory: dict) -> tuple[list[Step], str | None]:
    """The trajectory's steps, and a note on what they leave out."""
    steps: list[dict] = []
    calls = trajectory["calls"]
    record = trajectory["record"]

    def agent_step(message: dict, **fields) -> dict:
        calls_made = [ToolCall(tool_call_id=c["id"], function_name=c["name"], arguments=c["arguments"]) for c in message["tool_calls"]]
        return {"source": "agent", "message": message["text"], "tool_calls": calls_made or None, **fields}

    def observe(message: dict, at: str) -> None:
        """A tool result: on the agent step that made the call, else (a call no step holds) a system step of its own."""
        call_id = message.get("tool_call_id")
        result = {"content": message["text"]}
        for step in reversed(steps):
            if any(c.tool_call_id == call_id for c in step.get("tool_calls") or []):
                step.setdefault("results", []).append(ObservationResult(source_call_id=call_id, **result))
                return
        extra = {"tool_call_id": call_id} if call_id else None
        steps.append({"source": "system", "message": "", "timestamp": at, "results": [ObservationResult(extra=extra, **result)]})

    for call in calls:
        for message in call["asked"]:
            role = message["role"]
            if role == "tool":
                observe(message, call["sent_at"])
            elif role == "assistant":
                steps.append(agent_step(message, timestamp=call["sent_at"], is_copied_context=True))
            else:
                source = "system" if role in ("system", "developer") else "user"
                steps.append({"source": source, "message": message["text"], "timestamp": call["sent_at"]})
        answer = call.get("answer")
        if answer is None:
            continue
        model = call.get("model") if call.get("model") not in (None, run["model"]) else None
        steps.append(
            agent_step(
                answer,
                timestamp=call["at"],
                model_name=model,
                reasoning_content=answer.get("reasoning"),
                metrics=metrics(call),
                llm_call_count=1,
                extra={"call_seq": call["seq"]},
            )
        )

    note = None
    if not calls:
        # No call of the instance in the transcript: its record's question and answer stand in.
        note = "No model call of this instance is in its job's transcript (a harness that does not tag its calls, or a run without the gateway): the steps are its record's input and answer."
        tokens = {k: record.get(k) for k in ("prompt_tokens", "completion_tokens") if record.get(k) is not None}
        steps = [
            {"source": "user", "message": text(record.get("input"))},
            {"source": "agent", "message": text(record.get("output")), **({"metrics": Metrics(**tokens)} if tokens else {})},
        ]
    elif trajectory.get("capped"):
        note = "The job's transcript stopped at its cap: later calls of this instance may be missing."
    built = []
    for n, step in enumerate(steps, start=1):
        results = step.pop("results", None)
        fields = {k: v for k, v in step.items() if v is not None}
        built.append(Step(step_id=n, observation=Observation(results=results) if results else None, **fields))
    return built, note


def total(steps: list[Step], field: str):
    values = [getattr(s.metrics, field) for s in steps if s.metrics is not None]
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def total_cost(steps: list[Step]):
    """The trajectory's cost when every step that used tokens has one (no partial sum passes for the total)."""
    used = [s.metrics for s in steps if s.metrics is not None and (s.metrics.prompt_tokens or s.metrics.completion_tokens)]
    return sum(m.cost_usd for m in used) if used and all(m.cost_usd is not None for m in used) else None


for n, trajectory in enumerate(bundle["trajectories"]):
    record = trajectory["record"]
    steps, note = steps_of(trajectory)
    built = Trajectory(
        session_id=trajectory["session_id"],
        agent=Agent(
            name=run["benchmark"],
            version=run.get("benchmark_digest") or "unknown",
            model_name=run["model"],
            tool_definitions=trajectory.get("tools") or None,
            extra={"benchrouter": run.get("benchrouter") or "unknown"},
        ),
        steps=steps,
        notes=note,
        final_metrics=FinalMetrics(
            total_prompt_tokens=total(steps, "prompt_tokens"),
            total_completion_tokens=total(steps, "completion_tokens"),
            total_cached_tokens=total(steps, "cached_tokens"),
            total_cost_usd=total_cost(steps),
            total_steps=len(steps),
        ),
        extra={
            "benchrouter_run": run["run_id"],
            "run_status": run["status"],
            "task": trajectory["task"],
            "instance": record["id"],
            "score": record["score"],
            "score_value": record.get("score_value"),
            "target": record.get("target"),
            "prediction": record.get("output"),
            **(record.get("metadata") or {}),
        },
    )
    target = out_dir / f"{n}.json"
    target.write_text(format_trajectory_json(built.to_json_dict()) + "\n")
    print(target)
