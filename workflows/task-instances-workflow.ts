// taskInstancesWorkflow: lists a task's instances with its `instances: {command}` on any host, for a
// submit that has to know them before it can plan the run's shards (client/run-plan.ts). The activity
// builds the task's image as a job would and keeps what the command printed per image.

import { proxyActivities } from '@temporalio/workflow';
import type { HostActivities } from '../activities/index.js';
import type { ListInstancesInput } from '../activities/list-task-instances.js';
import { FAILURE_TYPES } from '../runs/failure-types.js';

const { listTaskInstances } = proxyActivities<HostActivities>({
  // An image build may come first, as for a job's first attempt.
  startToCloseTimeout: '75 minutes',
  heartbeatTimeout: '60s',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: [FAILURE_TYPES.imageProblem, FAILURE_TYPES.instancesProblem] },
});

export async function taskInstancesWorkflow(input: ListInstancesInput): Promise<string[]> {
  return listTaskInstances(input);
}
