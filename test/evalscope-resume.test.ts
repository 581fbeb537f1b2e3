// An EvalScope job whose worker is killed with kill -9 mid-run: the restarted worker reattaches to the
// still-running container, the model is not asked again for samples already answered, and the job's
// container time is counted once.

import type { Client } from '@temporalio/client';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { connectClient, createRunSpec, followRun, submitRun } from '../client/runs.js';
import { settingsFrom } from '../config/settings.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { startCaptureModel, type CaptureModel } from './support/capture-model.js';
import { repoRoot } from './support/harness.js';
import { spawnWorker, waitFor, watchContainerStarts, type WorkerProcess } from './support/processes.js';

const SAMPLES = 30;
const ANSWER_DELAY_MS = 400;

describe('an EvalScope job whose worker is killed mid-run', () => {
  let scratch: string;
  let model: CaptureModel;
  let client: Client;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'br-evalscope-resume-'));
    const dataDir = path.join(scratch, 'datasets');
    mkdirSync(path.join(dataDir, 'general_mcq'), { recursive: true });
    // Gold is A for every third question: the model always answers A.
    const rows = Array.from({ length: SAMPLES }, (_, i) => ({
      question: `Question ${i}: what is ${i} + 1?`,
      A: String(i + 1),
      B: String(i + 2),
      C: String(i),
      D: String(i + 3),
      answer: i % 3 === 0 ? 'A' : 'B',
    }));
    writeFileSync(path.join(dataDir, 'general_mcq', 'default_val.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    model = await startCaptureModel('答案：A', { delayMs: ANSWER_DELAY_MS });
  }, 120_000);

  afterAll(async () => {
    for (const w of workers) await w.stop();
    await client?.connection.close();
    await model?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('does not ask the model again for answered samples, and counts container time once', async () => {
    // The benchmark as shipped, one request at a time, so that the kill falls between answered samples.
    const benchmarkDir = path.join(scratch, 'evalscope');
    cpSync(path.join(repoRoot, 'benchmarks', 'evalscope'), benchmarkDir, { recursive: true });
    appendFileSync(path.join(benchmarkDir, 'tasks', 'general_mcq', 'task.yaml'), 'extra_env:\n  EVALSCOPE_EVAL_BATCH_SIZE: 1\n');
    const env = {
      BENCHROUTER_HOME: path.join(scratch, 'home'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      BENCHROUTER_TASK_QUEUE: `evalscope-resume-${randomBytes(3).toString('hex')}`,
      BENCHROUTER_DATASET_DIR: path.join(scratch, 'datasets'),
    };
    const settings = settingsFrom(env, os.homedir());
    client = await connectClient(settings);
    let worker = await spawnWorker(env, 'host-evalscope-resume');
    workers.push(worker);
    const spec = createRunSpec(loadBenchmark(benchmarkDir), {
      model: 'capture',
      endpoint: model.url,
      heartbeatTimeout: 5,
      hostTimeout: 60,
      tasks: ['general_mcq'],
    });
    const submittedAt = Date.now();
    const handle = await submitRun(client, settings, spec);
    const starts = watchContainerStarts(handle.workflowId);
    try {
      await waitFor('10 samples answered', () => model.requests.length >= 10, 600_000);
      await worker.kill9();
      const answeredBeforeKill = model.requests.length;
      await new Promise((r) => setTimeout(r, 2000));
      worker = await spawnWorker(env, 'host-evalscope-resume');
      workers.push(worker);
      const run = await followRun(handle);
      const runWall = (Date.now() - submittedAt) / 1000;

      expect(run.status, JSON.stringify(run.jobs[0])).toBe('COMPLETED');
      expect(answeredBeforeKill).toBeLessThan(SAMPLES);
      expect(starts.names()).toHaveLength(1);
      // Every sample reached the model once; at most the one request in flight at the kill (batch size 1) twice.
      const prompts = model.requests.map((messages) => JSON.stringify(messages));
      expect(new Set(prompts).size).toBe(SAMPLES);
      expect(prompts.length - SAMPLES).toBeLessThanOrEqual(1);
      const job = run.jobs[0]!;
      // EvalScope's report rounds its scores.
      expect(job.result?.overall).toBeCloseTo(10 / 30, 3);
      expect(job.records?.count).toBe(SAMPLES);
      // Container time is the container's one lifetime, not the sum of the attempts that watched it.
      expect(job.timings.containerSeconds).toBeLessThanOrEqual(runWall);
      expect(job.timings.containerSeconds).toBeGreaterThanOrEqual((SAMPLES * ANSWER_DELAY_MS) / 1000);
    } finally {
      starts.stop();
    }
  }, 900_000);
});
