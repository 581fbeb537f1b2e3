// SuiteWorkflow: several benchmarks for one model under one parent. Each benchmark is a child
// RunWorkflow, so every run keeps its own progress, results and retries; the suite adds them up.

import { CancellationScope, defineQuery, executeChild, isCancellation, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { RunResult, RunSpec, RunStatus } from '../runs/run-spec.js';
import { jobCountOf } from '../runs/job-specs.js';
import { SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import { runWorkflow } from './run-workflow.js';

export interface SuiteSpec {
  suiteId: string;
  suite: string;
  model: string;
  runs: RunSpec[];
  /** Benchmarks running at once. */
  parallel: number;
}

export interface SuiteResult {
  suiteId: string;
  suite: string;
  model: string;
  status: RunStatus;
  runs: RunResult[];
  startedAt: string;
  finishedAt: string;
}

export interface SuiteProgress {
  runs: Array<{ runId: string; benchmark: string; tasks: number; state: 'pending' | 'running' | 'done' }>;
}

export const suiteProgressQuery = defineQuery<SuiteProgress>('suiteProgress');

export function suiteStatus(runs: ReadonlyArray<Pick<RunResult, 'status'>>, cancelled: boolean): RunStatus {
  if (cancelled) return 'CANCELLED';
  if (runs.length > 0 && runs.every((r) => r.status === 'COMPLETED')) return 'COMPLETED';
  return runs.some((r) => r.status === 'COMPLETED' || r.status === 'PARTIAL') ? 'PARTIAL' : 'FAILED';
}

export async function suiteWorkflow(spec: SuiteSpec): Promise<SuiteResult> {
  const startedAt = new Date().toISOString();
  const progress: SuiteProgress = {
    runs: spec.runs.map((run) => ({
      runId: run.runId,
      benchmark: run.benchmark.name,
      // A run that pins its definitions by reference carries their names only.
      tasks: jobCountOf(run),
      state: 'pending',
    })),
  };
  setHandler(suiteProgressQuery, () => progress);
  const results: Array<RunResult | undefined> = spec.runs.map(() => undefined);
  const cancelled = () => CancellationScope.current().consideredCancelled;

  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < spec.runs.length && !cancelled()) {
      const index = next++;
      const run = spec.runs[index]!;
      progress.runs[index]!.state = 'running';
      try {
        results[index] = await executeChild(runWorkflow, {
          workflowId: run.runId,
          args: [run],
          memo: { benchmark: run.benchmark.name, model: run.options.model, suite: spec.suite, suiteId: spec.suiteId },
          typedSearchAttributes: [
            { key: SEARCH_ATTRIBUTES.model, value: run.options.model },
            { key: SEARCH_ATTRIBUTES.benchmark, value: run.benchmark.name },
            { key: SEARCH_ATTRIBUTES.status, value: 'RUNNING' },
          ],
        });
      } catch (error) {
        if (!isCancellation(error)) throw error;
      }
      progress.runs[index]!.state = 'done';
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(spec.parallel, spec.runs.length)) }, lane));

  const runs = results.filter((r): r is RunResult => r !== undefined);
  const status = suiteStatus(runs, cancelled());
  upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.status, value: status }]);
  return { suiteId: spec.suiteId, suite: spec.suite, model: spec.model, status, runs, startedAt, finishedAt: new Date().toISOString() };
}
