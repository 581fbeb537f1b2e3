// taskDefinitionsWorkflow: holds one page of a run's task definitions (runs/task-definition-pages.ts)
// for as long as the run needs them. Its input is the page, so the page lives in Temporal, which every
// host reaches, and in no host's directory; the `taskDefinitions` query hands it out (the run's
// `loadTaskDefinitions` activity, and `br retry`/`br rerun` re-reading what a run pinned). The run
// releases it when it ends; its history then stays for the namespace's retention, as the run's does.

import { condition, defineQuery, defineSignal, setHandler } from '@temporalio/workflow';
import type { TaskDefinition } from '../contract/benchmark.js';
import { TASK_DEFINITIONS_QUERY } from '../runs/task-definition-pages.js';

const taskDefinitionsQuery = defineQuery<TaskDefinition[]>(TASK_DEFINITIONS_QUERY);
export const releaseDefinitionsSignal = defineSignal('releaseDefinitions');

/** A page whose run never releases it (a terminated run) closes on its own after this long. */
const HELD_AT_MOST = '90 days';

export async function taskDefinitionsWorkflow(page: TaskDefinition[]): Promise<void> {
  let released = false;
  setHandler(taskDefinitionsQuery, () => page);
  setHandler(releaseDefinitionsSignal, () => void (released = true));
  await condition(() => released, HELD_AT_MOST);
}
