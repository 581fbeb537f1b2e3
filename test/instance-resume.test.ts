// Resuming a task run in shards instance by instance: a shard that did not finish keeps the instances it
// scored, and its rerun (`br retry`, or its own retry on another host after its host was lost) evaluates only
// the rest, so no instance is asked of the model twice, and the task's score is the one a run that never
// failed reports, to the last digit. Real dev server, workers, Docker and reference model; the `steps`
// fixture scores each instance with a fraction, so the score's sum is not exact by luck.

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectClient, createRunSpec, followRun, submitRun } from '../client/runs.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { settingsFrom } from '../config/settings.js';
import { startReferenceModel, type ReferenceModelServer } from '../reference-model/reference-model-server.js';
import type { RewardsPage } from '../runs/rewards.js';
import { JobRewardsHistory } from '../api/job-rewards-history.js';
import type { RunResult } from '../runs/run-spec.js';
import { br, containersOfRun, fixturesDir, startHarness, type Harness } from './support/harness.js';
import { spawnWorker, waitFor, type WorkerProcess } from './support/processes.js';

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-resume-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A copy of the steps fixture with these extra_env values. */
function steps(name: string, env: { DIE_AT?: string; STEP_SECONDS?: number }): string {
  const dir = path.join(scratch, name);
  cpSync(path.join(fixturesDir, 'benchmarks', 'steps'), dir, { recursive: true });
  const file = path.join(dir, 'tasks', 'walk', 'task.yaml');
  writeFileSync(
    file,
    readFileSync(file, 'utf8')
      .replace("DIE_AT: ''", `DIE_AT: '${env.DIE_AT ?? ''}'`)
      .replace('STEP_SECONDS: 0', `STEP_SECONDS: ${env.STEP_SECONDS ?? 0}`),
  );
  return dir;
}

/** How many times the model was asked about each instance ("What is 3 + 1?" is s03's). */
function asksPerInstance(model: ReferenceModelServer, modelName: string): Record<string, number> {
  const asks: Record<string, number> = {};
  for (const request of model.requests) {
    const body = request.body as { model?: string; messages?: Array<{ content: string }> } | undefined;
    if (request.path !== '/v1/chat/completions' || body?.model !== modelName) continue;
    const n = /What is (\d+) \+ 1\?/.exec(body.messages?.at(-1)?.content ?? '')?.[1];
    if (n !== undefined) asks[`s${n.padStart(2, '0')}`] = (asks[`s${n.padStart(2, '0')}`] ?? 0) + 1;
  }
  return asks;
}

const ALL = Array.from({ length: 10 }, (_, i) => `s${String(i).padStart(2, '0')}`);

interface RecordLine {
  index: string;
  score: number;
  carried?: boolean;
  carried_from?: string;
}

describe('br retry of a shard that died after scoring some of its instances', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('resume-retry');
  });
  afterAll(async () => {
    await h?.close();
  });

  it(
    'reruns only its instances without a record, the one in flight from the gateway cache, and reports the score of a run that never failed',
    { timeout: 300_000 },
    async () => {
      const model = 'reference-acc60';
      const clean = await h.run(steps('clean', {}), { model, shardSize: 5 });
      expect(clean.status).toBe('COMPLETED');
      const asksBefore = asksPerInstance(h.model, model);
      expect(asksBefore).toEqual(Object.fromEntries(ALL.map((id) => [id, 1])));
      h.model.requests.length = 0;

      // s03 dies in the first shard, after s00-s02 are scored and after its own model call.
      const original = await h.run(steps('dies', { DIE_AT: 's03' }), { model, shardSize: 5, cache: true });
      expect(original.status).toBe('PARTIAL');
      expect(original.jobs.map((job) => [job.shard!.index, job.status, job.reason])).toEqual([
        [0, 'FAILED', 'NON_ZERO_EXIT'],
        [1, 'SUCCEEDED', undefined],
      ]);
      expect(original.tasks![0]!.results![0]).toMatchObject({ instances: { total: 10, scored: 5, carried: 0 }, shards: { total: 2, succeeded: 1 } });

      const retried = await br(['retry', original.runId, '--json'], h.env);
      expect(retried.code, retried.stderr).toBe(0);
      expect(retried.stderr).toContain('retrying 1 of 2 jobs');
      expect(retried.stderr).toContain('and 3 instances their shards had scored');
      const run = JSON.parse(retried.stdout) as RunResult;
      expect(run.status).toBe('COMPLETED');
      const rerun = run.jobs.find((job) => !job.carriedFrom)!;
      expect(rerun.shard).toMatchObject({ index: 0, instances: 5, carried: 3 });
      // Its container was given only the instances without a record.
      const log = await br(['logs', run.runId, rerun.jobId], h.env);
      expect(log.stdout).toContain('walk: s03,s04');

      // The task's score and records are the clean run's, to the last digit.
      expect(run.overall).toBe(clean.overall);
      // Its other metrics no longer add up (the rerun counted only what it walked): left out, not miscounted.
      const cleanResult = clean.tasks![0]!.results![0]!;
      expect(cleanResult.result!.raw_metrics).toEqual({ walked: 10 });
      expect(run.tasks![0]!.results![0]).toEqual({
        ...cleanResult,
        result: { overall: cleanResult.result!.overall, raw_metrics: {} },
        instances: { total: 10, scored: 10, carried: 3 },
      });
      const records = (await br(['records', run.runId, '--json'], h.env)).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as RecordLine);
      const cleanRecords = (await br(['records', clean.runId, '--json'], h.env)).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as RecordLine);
      expect(records.map((r) => [r.index, r.score])).toEqual(cleanRecords.map((r) => [r.index, r.score]));
      const originalShard = original.jobs[0]!.jobId;
      expect(records.slice(0, 3).map((r) => [r.carried, r.carried_from])).toEqual(Array(3).fill([true, originalShard]));

      // Each instance asked of the model once over both runs: s03's second ask was the gateway cache's.
      expect(asksPerInstance(h.model, model)).toEqual(Object.fromEntries(ALL.map((id) => [id, 1])));
      expect(containersOfRun(run.runId)).toEqual([]);
    },
  );
});

describe('a host lost while its shard runs', () => {
  const workers: WorkerProcess[] = [];
  let model: ReferenceModelServer;
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await model?.close();
  });

  it('moves the shard to another host, where its container runs only the instances the job holds no reward for', { timeout: 300_000 }, async () => {
    model = await startReferenceModel({ port: 0 });
    const env = {
      BENCHROUTER_HOME: path.join(scratch, 'loss'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      BENCHROUTER_TASK_QUEUE: `resume-${randomBytes(3).toString('hex')}`,
    };
    const settings = settingsFrom(env, os.homedir());
    const client = await connectClient(settings);
    try {
      const a = await spawnWorker(env, 'resume-a');
      workers.push(a);
      const benchmark = loadBenchmark(steps('slow', { STEP_SECONDS: 2 }));
      const handle = await submitRun(
        client,
        settings,
        createRunSpec(benchmark, { model: 'reference-acc60', endpoint: model.url, shardSize: 10, heartbeatTimeout: 3, hostTimeout: 4 }),
      );
      const jobId = `${handle.workflowId}.000-walk`;
      // Three instances scored, and their rewards with the job, before the host vanishes with its container.
      await waitFor(
        'three rewards of the shard',
        async () => {
          const page = await client.workflow
            .getHandle(jobId)
            .query<RewardsPage, [number]>('rewards', 0)
            .catch(() => undefined);
          return (page?.total ?? 0) >= 3;
        },
        120_000,
      );
      await a.kill9();
      execFileSync('sh', [
        '-c',
        `docker ps -q --filter label=benchrouter.host=resume-a --filter label=benchrouter.run=${handle.workflowId} | xargs -r docker rm -f`,
      ]);
      // What the job holds now, from its history (no worker is left to answer a query).
      const held = await new JobRewardsHistory(client, jobId).next(new AbortController().signal);
      const carriedBefore = held.kind === 'read' ? held.rewards.map((r) => String(r.instance)) : [];
      expect(carriedBefore.length).toBeGreaterThanOrEqual(3);
      const b = await spawnWorker(env, 'resume-b');
      workers.push(b);

      const run = await followRun(handle);
      expect(run.status).toBe('COMPLETED');
      const job = run.jobs[0]!;
      expect(job).toMatchObject({ host: 'resume-b', hostsTried: ['resume-a', 'resume-b'] });
      expect(job.shard!.carried).toBe(carriedBefore.length);
      // Asked once each: the instance in flight on the lost host was asked again (its answer was not kept there).
      const asks = asksPerInstance(model, 'reference-acc60');
      for (const id of carriedBefore) expect(asks[id], id).toBe(1);
      expect(Object.keys(asks).sort()).toEqual(ALL);
      expect(Object.values(asks).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(11);
      const clean = await followRun(
        await submitRun(client, settings, createRunSpec(loadBenchmark(steps('slow-clean', {})), { model: 'reference-acc60', endpoint: model.url })),
      );
      expect(run.overall).toBe(clean.overall);
      expect(containersOfRun(handle.workflowId)).toEqual([]);
    } finally {
      await client.connection.close();
    }
  });
});
