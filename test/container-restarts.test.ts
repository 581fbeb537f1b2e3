// When a job's container is started again, and when its exit is final. Real Temporal, real Docker.
// - One that an attempt created but could neither start nor remove (the daemon going away between the
//   create and the start), found by the job's next attempt: it never ran, so the task starts afresh,
//   instead of being followed, which would read its zero exit code as the task's.
// - One whose benchmark got itself killed (exit 137, no kill by anyone else): its exit is the outcome, not
//   an outage's kill, which would start it again (test/docker-daemon-outage.test.ts has those).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerNameFor } from '../activities/container-spec.js';
import { runSpecOfBenchmark } from '../client/run-request.js';
import { followRun, submitRun } from '../client/runs.js';
import { jobSpecsOf } from '../runs/job-specs.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { runOptions } from '../runs/run-options.js';
import { dockerLines, sleepersOf, startHarness, type Harness } from './support/harness.js';

let h: Harness;
let scratch: string;

beforeAll(async () => {
  h = await startHarness('restarts');
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-restarts-'));
});
afterAll(async () => {
  await h?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('a container of the job created but never started, found on its host', () => {
  it('is replaced by a started one, and the job scores as if it had not been there', async () => {
    const spec = runSpecOfBenchmark(sleepersOf(scratch, 1), runOptions({ model: 'm', endpoint: 'http://127.0.0.1:9/v1', preflight: false, concurrency: 8 }));
    const [first] = jobSpecsOf(spec);
    const name = containerNameFor(first!.jobId, h.worker.hostId);
    // What a start that failed under a departing daemon leaves: the job's container, created, never started.
    execFileSync('docker', ['create', '--name', name, 'benchrouter/base:bookworm', 'true'], { stdio: 'ignore' });
    try {
      const run = await followRun(await submitRun(h.client, h.settings, spec));
      expect(run.jobs.map((j) => [j.task, j.status, j.result?.overall])).toEqual([
        ['s1', 'SUCCEEDED', 1],
        ['s2', 'SUCCEEDED', 1],
        ['s3', 'SUCCEEDED', 1],
        ['s4', 'SUCCEEDED', 1],
      ]);
      // The first attempt met the container (its create conflicted) and stepped aside; the next one started the task.
      const history = await h.client.workflow.getHandle(first!.jobId).fetchHistory();
      const failures = (history.events ?? []).map((e) => e.activityTaskFailedEventAttributes?.failure?.message).filter(Boolean);
      expect(failures).toEqual([expect.stringContaining(`container ${name} of job ${first!.jobId} exists already`)]);
      expect(dockerLines(['ps', '--all', '--filter', `name=^${name}$`, '--format', '{{.Names}}'])).toEqual([]);
    } finally {
      execFileSync('docker', ['rm', '--force', name], { stdio: 'ignore' });
    }
  });
});

describe('a container whose benchmark got itself killed', () => {
  it('ends its job with that exit, started once', async () => {
    const { dir } = sleepersOf(path.join(scratch, 'self-killed'), 1);
    // The script's own child is killed, and the script exits with the child's status: 128 + SIGKILL.
    writeFileSync(path.join(dir, 'sleep-then-score.sh'), "#!/bin/sh\nsh -c 'kill -KILL $$'\nexit $?\n");
    const spec = runSpecOfBenchmark(loadBenchmark(dir), runOptions({ model: 'm', endpoint: 'http://127.0.0.1:9/v1', preflight: false, concurrency: 8 }));
    const run = await followRun(await submitRun(h.client, h.settings, spec));
    expect(run.jobs.map((j) => [j.task, j.status, j.exitCode])).toEqual([
      ['s1', 'FAILED', 137],
      ['s2', 'FAILED', 137],
      ['s3', 'FAILED', 137],
      ['s4', 'FAILED', 137],
    ]);
    expect(run.jobs.every((j) => j.message?.includes('exited with code 137'))).toBe(true);
    // One attempt each: no kill from outside was read into it.
    for (const job of run.jobs) {
      const history = await h.client.workflow.getHandle(job.jobId).fetchHistory();
      expect((history.events ?? []).filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt)).toEqual([1]);
    }
  });
});
