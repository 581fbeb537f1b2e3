#!/usr/bin/env python3
"""Regenerates the arith problem files from a seed (python3 stdlib only).

    python3 generate_problems.py            # rewrites tasks/*/problems.jsonl with the default seed
    python3 generate_problems.py --seed 7

The generated files are committed, so running this is only needed to change the data. Changing the
data changes the exact scores the reference model is known to get (see reference-model/).
"""

import argparse
import json
import random
from pathlib import Path

DEFAULT_SEED = 5
PROBLEMS_PER_TASK = 20
BENCHMARK_DIR = Path(__file__).resolve().parent


def addition_problem(rng):
    a, b = rng.randint(10, 99), rng.randint(10, 99)
    return f"What is {a} + {b}?", a + b


def multiplication_problem(rng):
    a, b = rng.randint(2, 19), rng.randint(11, 99)
    return f"What is {a} * {b}?", a * b


TASKS = {"addition": addition_problem, "multiplication": multiplication_problem}


def generate(make_problem, rng):
    """PROBLEMS_PER_TASK distinct problems, so no question is asked twice."""
    problems, seen = [], set()
    while len(problems) < PROBLEMS_PER_TASK:
        question, answer = make_problem(rng)
        if question in seen:
            continue
        seen.add(question)
        problems.append({"index": len(problems), "question": question, "answer": str(answer)})
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    for task, make_problem in TASKS.items():
        path = BENCHMARK_DIR / "tasks" / task / "problems.jsonl"
        lines = [json.dumps(problem) for problem in generate(make_problem, rng)]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"wrote {len(lines)} problems to {path.relative_to(BENCHMARK_DIR)}")


if __name__ == "__main__":
    main()
