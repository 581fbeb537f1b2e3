// How big a benchmark's task definitions are once submitted. A run's definition travels to Temporal
// as one payload, and Temporal refuses a payload over 2 MB: a definition that cannot be submitted is
// a problem in the benchmark, found by `br validate`, not a failed start.

import type { TaskDefinition } from './benchmark.js';
import type { Problem } from './problems.js';

/** Temporal's limit is 2 MB per payload; the rest of a run's definition (model, options, prices) and a codec's framing need room too. */
export const SUBMITTED_TASKS_LIMIT_BYTES = 1024 * 1024;

/** task.yaml's own names for the definition's fields. */
const YAML_FIELDS: Record<string, string> = {
  timeoutSeconds: 'timeout',
  resultMapping: 'result_mapping',
  dockerImages: 'docker_images',
  extraEnv: 'extra_env',
  instancesCommand: 'instances.command',
  shardSize: 'shard_size',
  minShardSize: 'min_shard_size',
};

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
const shown = (bytes: number) => `${bytes.toLocaleString('en-US')} bytes`;

/** The task.yaml field that makes up most of a definition: a map field is narrowed to its biggest entry (`extra_env.HUGE`). */
export function largestField(task: TaskDefinition): { field: string; bytes: number } {
  let largest = { field: 'name', bytes: 0 };
  for (const [key, value] of Object.entries(task)) {
    const field = YAML_FIELDS[key] ?? key;
    const bytes = bytesOf(value);
    if (bytes <= largest.bytes) continue;
    largest = { field, bytes };
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const [entry] = Object.entries(value).sort(([, a], [, b]) => bytesOf(b) - bytesOf(a));
      if (entry && bytesOf(entry[1]) * 2 > bytes) largest = { field: `${field}.${entry[0]}`, bytes };
    }
  }
  return largest;
}

/**
 * Problems for task definitions too big to submit, all at once. `taskFile` names each task's
 * task.yaml; `benchmarkFile` the benchmark.yaml for a total that is too big only in sum.
 */
export function submittedSizeProblems(
  tasks: TaskDefinition[],
  taskFile: (task: TaskDefinition) => string,
  benchmarkFile: string,
  limit = SUBMITTED_TASKS_LIMIT_BYTES,
): Problem[] {
  const problems: Problem[] = [];
  const sizes = tasks.map((task) => ({ task, bytes: bytesOf(task) }));
  for (const { task, bytes } of sizes) {
    if (bytes <= limit) continue;
    const { field } = largestField(task);
    problems.push({
      file: taskFile(task),
      field,
      message: `expected the task's definition to be at most ${shown(limit)} as submitted, got ${shown(bytes)}, most of it this field (a run goes to Temporal as one payload, limited to 2 MB)`,
    });
  }
  const total = sizes.reduce((sum, s) => sum + s.bytes, 0);
  if (problems.length === 0 && total > limit) {
    const biggest = [...sizes].sort((a, b) => b.bytes - a.bytes).slice(0, 3);
    problems.push({
      file: benchmarkFile,
      field: 'tasks',
      message: `expected the task definitions together to be at most ${shown(limit)} as submitted, got ${shown(total)} (a run goes to Temporal as one payload, limited to 2 MB); the biggest: ${biggest.map((s) => `${taskFile(s.task)} ${largestField(s.task).field} (${shown(s.bytes)})`).join(', ')}`,
    });
  }
  return problems;
}
