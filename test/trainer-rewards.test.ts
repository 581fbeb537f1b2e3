// The trainer's view: a run of the built-in arith benchmark against the replay model, on chosen
// instances, read reward by reward through the Python client while the jobs run; the worker is
// killed with kill -9 mid-job and comes back. Every reward arrives once, and the rewards are exactly
// the jobs' final records.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { callApi, startApiProcess, type ApiProcess } from './support/api-process.js';
import { replayAnswers } from './support/benchmark-image.js';
import { repoRoot } from './support/harness.js';
import { spawnWorker, waitFor, type WorkerProcess } from './support/processes.js';

const HOST = 'host-trainer';
let scratch: string;
let env: Record<string, string>;
let api: ApiProcess;
let replay: ReplayModelServer;
let worker: WorkerProcess;

beforeAll(async () => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-trainer-'));
  env = {
    BENCHROUTER_HOME: path.join(scratch, 'home'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    BENCHROUTER_TASK_QUEUE: `trainer-${randomBytes(3).toString('hex')}`,
  };
  mkdirSync(env.BENCHROUTER_HOME!, { recursive: true });
  worker = await spawnWorker(env, HOST);
  api = await startApiProcess(env, env.BENCHROUTER_HOME!);
  // Containers reach it directly (no gateway, which dies with the worker): on every address, a little slow, as a policy is.
  replay = await startReplayModel({ answersFile: replayAnswers('arith.jsonl'), host: '0.0.0.0', delayMs: 400 });
});

afterAll(async () => {
  await worker?.stop();
  await api?.stop();
  await replay?.close();
  rmSync(scratch, { recursive: true, force: true });
});

interface StreamedReward {
  job: string;
  task: string;
  line: number;
  instance: number;
  score: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number | null;
  event_id: string;
}

describe('a trainer reading rewards while the worker is killed mid-job', () => {
  it('gets every reward once, equal to the final records', { timeout: 600_000 }, async () => {
    const instances = Array.from({ length: 12 }, (_, i) => String(i));
    const trainer = spawn(
      'python3',
      [
        path.join(repoRoot, 'clients', 'python', 'examples', 'stream_rewards.py'),
        ...['--api', api.url, '--token', api.fullToken, '--benchmark', 'arith', '--model', 'replay', '--endpoint', replay.url],
        ...['--instances', instances.join(','), '--options', JSON.stringify({ concurrency: 2, gateway: false, heartbeatTimeout: 3, hostTimeout: 60 })],
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    trainer.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    trainer.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => trainer.once('exit', resolve));
    const rewards = () =>
      stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as StreamedReward);
    const runId = () => /^RUN (\S+)$/m.exec(stdout)?.[1];

    await waitFor('3 rewards through the Python client', () => rewards().length >= 3, 240_000);
    const id = runId()!;
    const before = rewards().length;
    await worker.kill9();
    // Mid-job: the run had not ended, and not every reward was in.
    expect((await callApi<{ status: string }>(api, 'GET', `/runs/${id}`)).body.status).toBe('RUNNING');
    expect(before).toBeLessThan(24);
    worker = await spawnWorker(env, HOST);

    expect(await exited, `${stdout}\n${stderr}\n--- worker:\n${worker.output()}`).toBe(0);
    expect(stdout.trimEnd().endsWith('END')).toBe(true);
    const run = await callApi<{ status: string; overall: number; jobs: Array<{ jobId: string; hostsTried: string[] }> }>(api, 'GET', `/runs/${id}/results`);
    expect(run.body.status).toBe('COMPLETED');
    // Instances 3, 7 and 11 have wrong canned answers: 9 of 12 in each task.
    expect(run.body.overall).toBe(0.75);
    expect(run.body.jobs.map((j) => j.hostsTried)).toEqual([[HOST], [HOST]]);

    const streamed = rewards();
    expect(streamed).toHaveLength(24);
    expect(new Set(streamed.map((r) => `${r.job}:${r.line}`)).size).toBe(24);
    expect(new Set(streamed.map((r) => r.event_id)).size).toBe(24);
    const records = await callApi<{ records: Array<StreamedReward & { jobId: string; index: number }> }>(api, 'GET', `/runs/${id}/records?limit=1000`);
    const key = (r: { job: string; instance: number; score: number; prompt_tokens: number; completion_tokens: number; cost: number | null }) =>
      JSON.stringify([r.job, r.instance, r.score, r.prompt_tokens, r.completion_tokens, r.cost]);
    expect(streamed.map(key).sort()).toEqual(records.body.records.map((r) => key({ ...r, job: r.jobId, instance: r.index })).sort());
    // Each job's rewards came in its file's order.
    for (const job of new Set(streamed.map((r) => r.job))) {
      expect(streamed.filter((r) => r.job === job).map((r) => r.instance)).toEqual(instances.map(Number));
    }

    // A reader that reconnects with the id of the 10th reward gets the other 14, each once, then the end.
    const resumed = await fetch(`${api.url}/runs/${id}/rewards`, {
      headers: { authorization: `Bearer ${api.fullToken}`, 'last-event-id': streamed[9]!.event_id },
    });
    const events = (await resumed.text()).split('\n\n').filter((block) => block.includes('event: '));
    const rest = events.filter((block) => block.includes('event: reward')).map((block) => JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as StreamedReward);
    // (Jobs interleave in no set order: the same set, each job's in its order.)
    expect(rest.map((r) => `${r.job}:${r.line}`).sort()).toEqual(
      streamed
        .slice(10)
        .map((r) => `${r.job}:${r.line}`)
        .sort(),
    );
    for (const job of new Set(rest.map((r) => r.job)))
      expect(rest.filter((r) => r.job === job)).toEqual(rest.filter((r) => r.job === job).sort((a, b) => a.line - b.line));
    expect(events.at(-1)).toContain('event: end');
  });
});
