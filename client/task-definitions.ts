// A run's task definitions out of its workflow input (runs/task-definition-pages.ts): stored at submit
// as pages, each the input of a taskDefinitionsWorkflow, and read back by content digest.

import { WorkflowExecutionAlreadyStartedError, type WorkflowClient } from '@temporalio/client';
import { createHash } from 'node:crypto';
import type { TaskDefinition } from '../contract/benchmark.js';
import type { RunSpec } from '../runs/run-spec.js';
import { definitionsPageId, paginateDefinitions, TASK_DEFINITIONS_QUERY, type PinnedTaskDefinitions } from '../runs/task-definition-pages.js';
// Types only: the workflow module brings the workflow SDK, which no client process needs to load.
import type { taskDefinitionsWorkflow } from '../workflows/task-definitions-workflow.js';

/** sha256 (hex) of task definitions as submitted (their JSON). */
export function definitionsDigest(tasks: readonly TaskDefinition[]): string {
  return createHash('sha256').update(JSON.stringify(tasks)).digest('hex');
}

/**
 * Up to this size (as JSON) a run's task definitions travel in its own input, as before page holders:
 * a small run then costs no holder workflow, no load activity and no release signal (a trainer's
 * batches of one or two tasks: a third of the dev server's CPU, perf:rewards). Each execution of a run
 * carries its input again; 64 KB of it is nothing beside Temporal's 2 MB payload limit.
 */
export const INLINE_DEFINITIONS_MAX_BYTES = 64 * 1024;

/**
 * What the run workflow is given for `spec`, and the pages of definitions to store first (none when
 * they travel inline). `byReference` forces the holders whatever the size.
 */
export function pinDefinitions(spec: RunSpec, byReference = false): { input: RunSpec; pages: TaskDefinition[][] } {
  if (!byReference && Buffer.byteLength(JSON.stringify(spec.tasks)) <= INLINE_DEFINITIONS_MAX_BYTES) return { input: spec, pages: [] };
  return definitionsByReference(spec);
}

/**
 * What the run workflow is given instead of `spec`: the spec with no definitions and a reference to
 * them, cut into `pages` for storePages.
 */
export function definitionsByReference(spec: RunSpec): { input: RunSpec; pages: TaskDefinition[][] } {
  const pages = paginateDefinitions(spec.tasks);
  const refs: PinnedTaskDefinitions['pages'] = [];
  let first = 0;
  for (const page of pages) {
    refs.push({ first, count: page.length, digest: definitionsDigest(page) });
    first += page.length;
  }
  const definitions: PinnedTaskDefinitions = { digest: definitionsDigest(spec.tasks), names: spec.tasks.map((task) => task.name), pages: refs };
  return { input: { ...spec, tasks: [], definitions }, pages };
}

/** Starts one holder per page of run `runId`'s definitions; a holder already started (a repeated idempotent submit) is kept. */
export async function storePages(workflows: WorkflowClient, taskQueue: string, runId: string, pages: TaskDefinition[][]): Promise<void> {
  for (const [index, page] of pages.entries()) {
    try {
      await workflows.start<typeof taskDefinitionsWorkflow>('taskDefinitionsWorkflow', {
        workflowId: definitionsPageId(runId, index),
        taskQueue,
        args: [page],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
}

/** One page of a run's definitions, checked against the digest the run pinned. */
export async function loadDefinitionsPage(workflows: WorkflowClient, runId: string, page: number, digest: string): Promise<TaskDefinition[]> {
  const workflowId = definitionsPageId(runId, page);
  const tasks = await workflows.getHandle(workflowId).query<TaskDefinition[]>(TASK_DEFINITIONS_QUERY);
  const found = definitionsDigest(tasks);
  if (found !== digest) throw new Error(`task definitions ${workflowId}: expected sha256 ${digest} as the run pinned, got ${found}`);
  return tasks;
}

/** `spec` with the definitions it pinned by reference read back in; a spec that holds them itself comes back as it is. */
export async function withTaskDefinitions(workflows: WorkflowClient, spec: RunSpec): Promise<RunSpec> {
  if (!spec.definitions) return spec;
  const pinned = spec.definitions;
  const tasks = (await Promise.all(pinned.pages.map((page, index) => loadDefinitionsPage(workflows, spec.runId, index, page.digest)))).flat();
  const found = definitionsDigest(tasks);
  if (found !== pinned.digest) throw new Error(`task definitions of run ${spec.runId}: expected sha256 ${pinned.digest} as the run pinned, got ${found}`);
  const { definitions: _definitions, ...rest } = spec;
  return { ...rest, tasks };
}
