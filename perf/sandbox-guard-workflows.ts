// Two workflows for perf/sandbox-guard.ts: one stuck in a synchronous loop (the bug the SDK's vm watchdog
// catches), one that should finish in a tenth of a second beside it.

import { sleep } from '@temporalio/workflow';

export async function spinForever(): Promise<string> {
  for (;;) {
    // a synchronous loop: never yields to the workflow's event loop
  }
}

export async function quick(): Promise<string> {
  await sleep(100);
  return 'done';
}
