// A job of the `arith` benchmark's `addition` task, for unit tests that need a JobSpec or a TaskDefinition
// and care only about the fields they set.

import type { TaskDefinition } from '../../contract/benchmark.js';
import { runOptions } from '../../runs/run-options.js';
import type { JobSpec } from '../../runs/run-spec.js';

export function sampleTask(fields: Partial<TaskDefinition> = {}): TaskDefinition {
  return {
    name: 'addition',
    environment: 'python',
    command: 'true',
    timeoutSeconds: 60,
    resultMapping: { overall: 'accuracy' },
    docker: false,
    dockerImages: [],
    extraEnv: {},
    resources: { memory: '1g', cpus: 1, pids: 256 },
    network: 'isolated',
    ...fields,
  };
}

/** Job `jobId` of run `run-1`, straight to the model at a loopback endpoint (no gateway), running `task`. */
export function sampleJob(jobId: string, task: Partial<TaskDefinition> = {}): JobSpec {
  return {
    runId: 'run-1',
    jobId,
    options: runOptions({ model: 'reference-acc80', endpoint: 'http://127.0.0.1:18080/v1', gateway: false }),
    resolved: { prices: {} },
    cacheFrom: [],
    repeat: { index: 0 },
    benchmark: { name: 'arith', dir: '/srv/benchmarks/arith', digest: 'f'.repeat(64) },
    task: sampleTask(task),
  };
}
