// A short workflow a submit waits on (an endpoint check, a task's instances listed), by an id derived from its
// run: two submits of one idempotent request at once start it once, and the second waits on the first's.

import { WorkflowExecutionAlreadyStartedError, type WorkflowClient } from '@temporalio/client';

export async function executeOrJoin<T>(
  workflows: WorkflowClient,
  workflowType: string,
  options: { workflowId: string; taskQueue: string; args: unknown[]; workflowExecutionTimeout?: string },
): Promise<T> {
  try {
    return (await workflows.execute(workflowType, options)) as T;
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    return (await workflows.getHandle(options.workflowId).result()) as T;
  }
}
