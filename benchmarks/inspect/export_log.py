#!/usr/bin/env python3
"""Writes a BenchRouter run as Inspect eval logs, through inspect_ai's own API (so the format stays Inspect's):
one log per task, one sample per instance. `br export <run> --format inspect` runs it in the inspect benchmark's
image with the run gathered into one JSON file:

    python3 export_log.py RUN.json OUT_DIR

RUN.json: {"run": {run_id, benchmark, model, status, created, completed, benchrouter},
           "tasks": [{"task", "overall", "metrics", "samples": [{id, input, target, output, score, score_value,
                      explanation, prompt_tokens, completion_tokens, messages, metadata}]}]}
`messages` are OpenAI chat messages (the instance's last model call: what it was asked, and its answer).
Prints the path of each log it wrote.
"""
import json, sys
from datetime import datetime, timezone
from pathlib import Path

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalPlan,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser, ModelOutput, ModelUsage
from inspect_ai.tool import ToolCall

from inspect_ai.scorer import Score

bundle = json.loads(Path(sys.argv[1]).read_text())
out_dir = Path(sys.argv[2])
run = bundle["run"]
SCORER = "benchrouter"


def text(value) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def content_text(content) -> str:
    """A chat message's content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text")
    return text(content)


def tool_call(call: dict) -> ToolCall:
    function = call.get("function") or {}
    raw = function.get("arguments") or "{}"
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        arguments = {"raw": raw}  # what the model wrote, when it is not JSON
    return ToolCall(id=str(call.get("id", "")), function=str(function.get("name", "")), arguments=arguments if isinstance(arguments, dict) else {"value": arguments})


def messages_of(sample: dict) -> list:
    """The instance's conversation (OpenAI chat messages, in order) as Inspect's messages; the bare question and
    answer when no call of it was recorded."""
    chat = sample.get("messages") or []
    if not chat:
        return [ChatMessageUser(content=text(sample.get("input"))), ChatMessageAssistant(content=text(sample.get("output")))]
    names = {}
    messages = []
    for m in chat:
        role, body = m.get("role"), content_text(m.get("content"))
        if role in ("system", "developer"):
            messages.append(ChatMessageSystem(content=body))
        elif role == "assistant":
            calls = [tool_call(c) for c in m.get("tool_calls") or []]
            names |= {c.id: c.function for c in calls}
            messages.append(ChatMessageAssistant(content=body, tool_calls=calls or None, model=run["model"]))
        elif role == "tool":
            messages.append(ChatMessageTool(content=body, tool_call_id=m.get("tool_call_id"), function=names.get(m.get("tool_call_id"))))
        else:
            messages.append(ChatMessageUser(content=body))
    return messages


def usage(prompt: int, completion: int) -> ModelUsage:
    return ModelUsage(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion)


def time(value) -> str:
    return value or datetime.now(timezone.utc).isoformat()


for task in bundle["tasks"]:
    samples = []
    for sample in task["samples"]:
        prompt, completion = sample.get("prompt_tokens") or 0, sample.get("completion_tokens") or 0
        samples.append(
            EvalSample(
                id=sample["id"],
                epoch=1,
                input=text(sample.get("input")),
                target=text(sample.get("target")),
                messages=messages_of(sample),
                output=ModelOutput.from_content(model=run["model"], content=text(sample.get("output"))),
                scores={
                    SCORER: Score(
                        value=sample["score"],
                        answer=text(sample.get("output")),
                        explanation=text(sample.get("explanation")) or None,
                        metadata={"score_value": sample.get("score_value")},
                    )
                },
                metadata=sample.get("metadata") or {},
                model_usage={run["model"]: usage(prompt, completion)} if prompt or completion else {},
            )
        )
    scored = [s for s in task["samples"] if isinstance(s.get("score"), (int, float))]
    metrics = {"accuracy": EvalMetric(name="accuracy", value=task["overall"] if task["overall"] is not None else float("nan"))}
    for name, value in (task.get("metrics") or {}).items():
        if isinstance(value, (int, float)) and name != "accuracy":
            metrics[name] = EvalMetric(name=name, value=value)
    log = EvalLog(
        version=2,
        status="success" if run["status"] in ("COMPLETED", "SUCCEEDED") and task["status"] == "SUCCEEDED" else "error",
        eval=EvalSpec(
            run_id=run["run_id"],
            created=time(run.get("created")),
            task=f"{run['benchmark']}/{task['task']}",
            task_id=f"{run['run_id']}/{task['task']}",
            task_version=0,
            dataset=EvalDataset(name=task["task"], samples=len(samples)),
            model=run["model"],
            config=EvalConfig(),
            packages={"benchrouter": run.get("benchrouter") or "unknown"},
            metadata={"benchrouter_run": run["run_id"], "benchmark": run["benchmark"]},
        ),
        plan=EvalPlan(),
        results=EvalResults(
            total_samples=len(samples),
            completed_samples=len(scored),
            scores=[EvalScore(name=SCORER, scorer=SCORER, metrics=metrics)],
        ),
        stats=EvalStats(
            started_at=time(run.get("created")),
            completed_at=time(run.get("completed")),
            model_usage={run["model"]: usage(sum(s.get("prompt_tokens") or 0 for s in task["samples"]), sum(s.get("completion_tokens") or 0 for s in task["samples"]))},
        ),
        samples=samples,
    )
    safe = task["task"].replace("/", ".")
    target = out_dir / f"{run['run_id']}_{safe}.eval"
    write_eval_log(log, str(target))
    print(target)
