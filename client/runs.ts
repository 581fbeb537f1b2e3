// Talking to Temporal about runs: submit, follow, read, list and cancel. Used by `br` and tests.

import { Client, Connection, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { directoryDigest } from '../contract/benchmark-digest.js';
import type { Benchmark } from '../contract/benchmark.js';
import type { ModelTarget, RunOptions, RunProgress, RunResult, RunSpec } from '../contract/run-spec.js';
import type { Settings } from '../contract/settings.js';
import type { runWorkflow } from '../workflows/run-workflow.js';

export type RunHandle = WorkflowHandle<typeof runWorkflow>;

export async function connectClient(settings: Settings): Promise<Client> {
  const connection = await Connection.connect({ address: settings.temporalAddress, connectTimeout: '5s' });
  return new Client({ connection, namespace: settings.temporalNamespace });
}

export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `br-${stamp}-${randomBytes(3).toString('hex')}`;
}

/** The run definition pinned in the workflow input: history alone then says what was run. */
export function createRunSpec(benchmark: Benchmark, model: ModelTarget, options: RunOptions, taskNames?: string[]): RunSpec {
  const tasks = taskNames?.length ? benchmark.tasks.filter((t) => taskNames.includes(t.name)) : benchmark.tasks;
  return {
    runId: newRunId(),
    benchmark: { name: benchmark.name, dir: benchmark.dir, digest: directoryDigest(benchmark.dir) },
    tasks,
    model,
    options,
    submittedAt: new Date().toISOString(),
  };
}

export async function submitRun(client: Client, settings: Settings, spec: RunSpec): Promise<RunHandle> {
  return client.workflow.start<typeof runWorkflow>('runWorkflow', {
    workflowId: spec.runId,
    taskQueue: settings.sharedQueue,
    args: [spec],
    memo: { benchmark: spec.benchmark.name, model: spec.model.name, tasks: spec.tasks.length },
  });
}

export function runHandle(client: Client, runId: string): RunHandle {
  return client.workflow.getHandle<typeof runWorkflow>(runId);
}

export async function queryProgress(handle: RunHandle): Promise<RunProgress> {
  return handle.query<RunProgress>('progress');
}

/** Waits for the run's result, calling onProgress as counts change (polling the progress query). */
export async function followRun(handle: RunHandle, onProgress?: (p: RunProgress) => void, intervalMs = 500): Promise<RunResult> {
  let done = false;
  const result = handle.result().finally(() => (done = true));
  if (onProgress) {
    void (async () => {
      while (!done) {
        try {
          onProgress(await queryProgress(handle));
        } catch {
          // The workflow may not have run its first task yet, or may just have closed.
        }
        await new Promise((r) => setTimeout(r, intervalMs));
      }
    })();
  }
  return result;
}

export interface RunSummary {
  runId: string;
  status: string;
  benchmark: string;
  model: string;
  startTime: string;
  closeTime?: string;
}

export async function listRuns(client: Client, limit = 50): Promise<RunSummary[]> {
  const runs: RunSummary[] = [];
  for await (const info of client.workflow.list({ query: `WorkflowType = 'runWorkflow'` })) {
    runs.push({
      runId: info.workflowId,
      status: info.status.name,
      benchmark: String(info.memo?.benchmark ?? ''),
      model: String(info.memo?.model ?? ''),
      startTime: info.startTime.toISOString(),
      closeTime: info.closeTime?.toISOString(),
    });
    if (runs.length >= limit) break;
  }
  return runs;
}

export async function runExists(handle: RunHandle): Promise<boolean> {
  try {
    await handle.describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}
