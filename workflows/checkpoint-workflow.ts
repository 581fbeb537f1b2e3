// CheckpointWorkflow: one firing of an evaluation schedule. It asks the endpoint which checkpoint it
// serves, and starts that checkpoint's run (or suite) as a child whose id is derived from schedule and
// checkpoint. Temporal refuses a second workflow with that id (REJECT_DUPLICATE), so a checkpoint
// already evaluated by this schedule is skipped, durably and even when two firings race.

import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { executeChild, ParentClosePolicy, proxyActivities } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/index.js';
import { FAILURE_TYPES } from '../runs/failure-types.js';
import { checkpointRunId, instantiateTarget, type CheckpointOutcome, type CheckpointScheduleSpec } from '../runs/schedule-spec.js';
import { SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import { runWorkflow } from './run-workflow.js';
import { suiteWorkflow } from './suite-workflow.js';

const { servedCheckpoint } = proxyActivities<SharedActivities>({
  startToCloseTimeout: '30s',
  retry: {
    maximumAttempts: 5,
    initialInterval: '2s',
    backoffCoefficient: 2,
    nonRetryableErrorTypes: [FAILURE_TYPES.missingOnHost, FAILURE_TYPES.badModelList],
  },
});

export async function checkpointWorkflow(spec: CheckpointScheduleSpec): Promise<CheckpointOutcome> {
  const { checkpoint, key } = await servedCheckpoint({ endpoint: spec.endpoint, ...(spec.apiKeyEnv ? { apiKeyEnv: spec.apiKeyEnv } : {}) });
  const runId = checkpointRunId(spec.name, key);
  const target = instantiateTarget(spec.target, runId, checkpoint, new Date().toISOString());
  const benchmark = target.kind === 'run' ? target.run.benchmark.name : `suite:${target.suite.suite}`;
  const common = {
    workflowId: runId,
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    // The run outlives this firing: deleting the schedule or ending this workflow leaves it running.
    parentClosePolicy: ParentClosePolicy.ABANDON,
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTES.model, value: checkpoint },
      { key: SEARCH_ATTRIBUTES.benchmark, value: benchmark },
      { key: SEARCH_ATTRIBUTES.status, value: 'RUNNING' },
    ],
  };
  try {
    if (target.kind === 'run') {
      const run = target.run;
      const result = await executeChild(runWorkflow, {
        ...common,
        args: [run],
        memo: { benchmark: run.benchmark.name, model: checkpoint, tasks: run.tasks.length, schedule: spec.name },
      });
      return { checkpoint, runId, started: true, status: result.status, ...(typeof result.overall === 'number' ? { overall: result.overall } : {}) };
    }
    const suite = target.suite;
    const result = await executeChild(suiteWorkflow, {
      ...common,
      args: [suite],
      memo: { suite: suite.suite, model: checkpoint, benchmarks: suite.runs.map((r) => r.benchmark.name), schedule: spec.name },
    });
    return { checkpoint, runId, started: true, status: result.status };
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return { checkpoint, runId, started: false };
    throw error;
  }
}
