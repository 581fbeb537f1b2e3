// Which runtime runs a task, from its definition: a new runtime is a file and its entry in RUNTIMES.

import type { TaskDefinition } from '../../contract/benchmark.js';
import { dindRuntime } from './dind-runtime.js';
import { simpleRuntime } from './simple-runtime.js';
import type { TaskRuntimeKind } from './task-runtime.js';

/** The first kind that runs a task runs it: Simple mode, which runs any, comes last. */
const RUNTIMES: readonly TaskRuntimeKind[] = [dindRuntime, simpleRuntime];

export function runtimeKindFor(task: TaskDefinition): TaskRuntimeKind {
  const kind = RUNTIMES.find((candidate) => candidate.runs(task));
  if (!kind) throw new Error(`no task runtime runs task ${task.name}: ${RUNTIMES.map((k) => k.name).join(', ')} all declined it`);
  return kind;
}
