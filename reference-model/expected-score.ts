// The exact score the reference model gets on the `arith` benchmark, computed from the committed
// data and `referenceAnswer`, so integration tests can assert a run's result to the digit.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { referenceAnswer } from './reference-answer.js';

export interface ArithProblem {
  index: number;
  question: string;
  answer: string;
}

export interface ExpectedScore {
  /** Accuracy (correct / total) per task name. */
  perTask: Record<string, number>;
  /** The mean of the per-task accuracies. */
  overall: number;
}

/** Reads `tasks/<task>/problems.jsonl`. */
export function readArithProblems(benchmarkDir: string, task: string): ArithProblem[] {
  const path = join(benchmarkDir, 'tasks', task, 'problems.jsonl');
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line, lineIndex) => {
      const problem = JSON.parse(line) as Partial<ArithProblem>;
      if (typeof problem.question !== 'string' || problem.answer === undefined) {
        throw new Error(`${path}: line ${lineIndex + 1}: expected {"index", "question", "answer"}, got ${line}`);
      }
      return { index: Number(problem.index), question: problem.question, answer: String(problem.answer) };
    });
}

/** Scores one reply the way eval_arith.py does: the last integer, compared exactly with the answer. */
export function scoreArithReply(reply: string, answer: string): boolean {
  return reply.match(/-?\d+/g)?.at(-1) === answer.trim();
}

/** `draw`: which asking of each question a sampled model answers (a run's repeat, when each repeat asks it anew). */
export function expectedArithScore(benchmarkDir: string, model: string, draw = 0): ExpectedScore {
  // The contract's own loader: the task list (and every problem with it) as `br run` sees it.
  const taskNames = loadBenchmark(benchmarkDir).tasks.map((task) => task.name);

  const perTask: Record<string, number> = {};
  for (const task of taskNames) {
    const problems = readArithProblems(benchmarkDir, task);
    const correct = problems.filter((problem) => scoreArithReply(referenceAnswer(model, problem.question, draw), problem.answer)).length;
    perTask[task] = problems.length === 0 ? 0 : correct / problems.length;
  }
  const accuracies = Object.values(perTask);
  return { perTask, overall: accuracies.reduce((sum, accuracy) => sum + accuracy, 0) / accuracies.length };
}
