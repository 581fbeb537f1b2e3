"""shell_facts: questions about files that only a shell in the sample's Docker sandbox can answer, the model using
Inspect's bash() tool. An eval of this benchmark's own (`br run inspect --tasks evals/shell_facts`), written as any
Inspect eval is, whose sandbox is Inspect's `docker` kind on the local base image: the job's own daemon serves it,
with the image preloaded and no registry."""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match
from inspect_ai.solver import generate, system_message, use_tools
from inspect_ai.tool import bash

SAMPLES = [
    Sample(
        id="log-lines",
        input="How many lines does /data/app.log have? Answer with the number only.",
        target="6",
        files={"/data/app.log": "".join(f"2026-01-0{n} event {n}\n" for n in range(1, 7))},
    ),
    Sample(
        id="sum-numbers",
        input="What is the sum of the numbers in /data/numbers.txt (one per line)? Answer with the number only.",
        target="42",
        files={"/data/numbers.txt": "7\n11\n24\n"},
    ),
    Sample(
        id="largest-quota",
        input="/data/users.csv lists users and their quota in GB. Which user has the largest quota? Answer with the name only.",
        target="carol",
        files={"/data/users.csv": "name,quota\nalice,10\nbob,25\ncarol,40\ndave,5\n"},
    ),
    Sample(
        id="count-files",
        input="How many regular files are there under /data/tree, in all its subdirectories? Answer with the number only.",
        target="5",
        files={f"/data/tree/{path}": "x\n" for path in ["a.txt", "b/c.txt", "b/d.txt", "e/f/g.txt", "e/h.txt"]},
    ),
]


@task
def shell_facts() -> Task:
    return Task(
        dataset=SAMPLES,
        solver=[system_message("You answer questions about files by running shell commands with the bash tool."), use_tools(bash(timeout=30)), generate()],
        scorer=match(),
        sandbox=("docker", str(Path(__file__).parent / "shell_facts.compose.yaml")),
    )
