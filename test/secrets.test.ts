// Secrets: the API key reaches the container and nothing else (history, results, search
// attributes, memo, labels, worker logs); payloads can be encrypted end to end. Real dev server,
// a real `br worker` process, real Docker.

import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { AesGcmPayloadCodec } from '../client/payload-codec.js';
import { startCodecServer } from '../client/codec-server.js';
import { br, fixturesDir } from './support/harness.js';
import { historyJson, historyText } from './support/history-text.js';
import { startReferenceModel } from '../reference-model/reference-model-server.js';
import { runningContainersOf, spawnWorker, waitFor, type WorkerProcess } from './support/processes.js';

const sleepers = path.join(fixturesDir, 'benchmarks', 'sleepers');
const printsKey = path.join(fixturesDir, 'benchmarks', 'prints-key');
let scratch: string;
const workers: WorkerProcess[] = [];

beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-secrets-'));
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function envFor(name: string): Record<string, string> {
  return {
    BENCHROUTER_HOME: path.join(scratch, name),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    BENCHROUTER_TASK_QUEUE: `sec-${name}-${randomBytes(3).toString('hex')}`,
  };
}

describe('an API key named by --api-key-env', () => {
  it('through the gateway: reaches the upstream, never the container, and appears in no history, result, label or log', async () => {
    const secret = `sk-live-${randomBytes(16).toString('hex')}`;
    const env = envFor('key');
    const worker = await spawnWorker({ ...env, BR_TEST_SECRET: secret }, 'host-secret');
    workers.push(worker);
    const model = await startReferenceModel({ port: 0 });
    try {
      // Slow answers (150 ms each) keep the container up long enough to inspect it.
      const modelName = `reference-delay150-${randomBytes(3).toString('hex')}`;
      // The submitting process has no key at all: only the worker host does.
      const submitted = await br(
        ['submit', 'arith', '--model', modelName, '--endpoint', model.url, '--api-key-env', 'BR_TEST_SECRET', '--tasks', 'addition'],
        env,
      );
      expect(submitted.code).toBe(0);
      const runId = submitted.stdout.trim();

      await waitFor('the container', () => runningContainersOf(runId).length === 1);
      const [container] = runningContainersOf(runId);
      const inspected = execFileSync('docker', ['inspect', container!.name], { encoding: 'utf8' });
      expect(JSON.parse(inspected)[0].Config.Env).toContainEqual(expect.stringMatching(/^BENCHROUTER_API_KEY=brj-[0-9a-f]{40}$/));
      expect(inspected).not.toContain(secret);

      const results = await br(['results', runId, '--wait', '--json'], env);
      expect(results.code).toBe(0);
      const run = JSON.parse(results.stdout);
      expect(run.status).toBe('COMPLETED');
      // The upstream got the real key on every call: the gateway attached it.
      const calls = model.requests.filter((r) => r.path === '/v1/chat/completions');
      expect(calls).toHaveLength(20);
      expect(calls.every((r) => r.headers.authorization === `Bearer ${secret}`)).toBe(true);

      const listed = await br(['list', '--model', modelName, '--json'], env);
      expect(JSON.parse(listed.stdout).map((r: { runId: string; status: string }) => [r.runId, r.status])).toEqual([[runId, 'COMPLETED']]);

      // The transcript has every call, and neither the key nor the job's token.
      const transcripts = await br(['transcripts', runId, '--json'], env);
      expect(transcripts.code).toBe(0);
      expect(transcripts.stdout.trim().split('\n')).toHaveLength(20);
      expect(transcripts.stdout).not.toMatch(/brj-[0-9a-f]{40}/);

      const everything = [
        results.stdout,
        listed.stdout,
        transcripts.stdout,
        historyText(runId),
        ...run.jobs.map((j: { jobId: string }) => historyText(j.jobId)),
        // The pages the run wrote its jobs' results into, if any (a small run holds them in its own result).
        ...((run.resultPages ?? []) as string[]).map((page) => historyText(page)),
        worker.output(),
      ].join('\n');
      // Decoded payloads are readable here (the key's name is recorded, so history says where the key
      // came from): the search below would find the key if it were anywhere in them.
      expect(everything).toContain('BR_TEST_SECRET');
      expect(everything).not.toContain(secret);
    } finally {
      await model.close();
    }
  });

  it('with --no-gateway: reaches the container itself, and still appears in no history, label or log', async () => {
    const secret = `sk-live-${randomBytes(16).toString('hex')}`;
    const env = envFor('direct');
    const worker = await spawnWorker({ ...env, BR_TEST_SECRET: secret }, 'host-direct');
    workers.push(worker);
    const ran = await br(
      [
        'run',
        sleepers,
        '--model',
        'm',
        '--endpoint',
        'http://127.0.0.1:9/v1',
        '--no-preflight',
        '--api-key-env',
        'BR_TEST_SECRET',
        '--tasks',
        's1',
        '--no-gateway',
        '--json',
      ],
      env,
    );
    expect(ran.code).toBe(0);
    const run = JSON.parse(ran.stdout);
    // The container got exactly this key: it reports the key's hash, never the key.
    expect(run.jobs[0].result.raw_metrics.key_sha256).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(run.usage).toBeUndefined();
    const everything = [ran.stdout, historyText(run.runId), historyText(run.jobs[0].jobId), worker.output()].join('\n');
    expect(everything).toContain('BR_TEST_SECRET');
    expect(everything).not.toContain(secret);
  });
});

describe('a task that prints the key it was given (--no-gateway)', () => {
  it('keeps the key out of every history and result, shows only its last log line redacted, and leaves the job beside it unaffected', async () => {
    const secret = `sk-live-${randomBytes(16).toString('hex')}`;
    const env = envFor('prints');
    const worker = await spawnWorker({ ...env, BR_TEST_SECRET: secret }, 'host-prints');
    workers.push(worker);
    const ran = await br(
      ['run', printsKey, '--model', 'm', '--endpoint', 'http://127.0.0.1:9/v1', '--no-preflight', '--api-key-env', 'BR_TEST_SECRET', '--no-gateway', '--json'],
      env,
    );
    const run = JSON.parse(ran.stdout);
    const jobs = Object.fromEntries(run.jobs.map((j: { task: string }) => [j.task, j]));
    expect(jobs['well-behaved']).toMatchObject({ status: 'SUCCEEDED', result: { overall: 0.5 } });
    // Only the last non-empty line is shown, with the key cut out; the earlier lines are not.
    expect(jobs['prints-and-fails']).toMatchObject({
      status: 'FAILED',
      reason: 'NON_ZERO_EXIT',
      message: 'command exited with code 2; last log line: giving up: the endpoint refused key [redacted]',
    });
    // A task that writes the key into result.json gets it redacted there too.
    expect(jobs['prints-and-scores']).toMatchObject({ status: 'SUCCEEDED', result: { overall: 1, raw_metrics: { echo: '[redacted]' } } });
    expect(jobs['prints-and-scores'].message).toBeUndefined();

    // The last lines are kept, redacted, as an artifact beside container.log.
    const tail = readFileSync(path.join(env.BENCHROUTER_HOME!, 'artifacts', run.runId, jobs['prints-and-fails'].jobId, 'container-tail.log'), 'utf8');
    expect(tail).toContain('attempt 5 with key [redacted]');
    expect(tail).toContain('giving up: the endpoint refused key [redacted]');
    // container.log itself, the whole output as printed, never holds the key either.
    const log = readFileSync(path.join(env.BENCHROUTER_HOME!, 'artifacts', run.runId, jobs['prints-and-fails'].jobId, 'container.log'), 'utf8');
    expect(log).toContain('attempt 1 with key [redacted]');

    const everything = [
      ran.stdout,
      ran.stderr,
      historyText(run.runId),
      ...run.jobs.map((j: { jobId: string }) => historyText(j.jobId)),
      worker.output(),
      tail,
      log,
    ].join('\n');
    expect(everything).toContain('BR_TEST_SECRET');
    expect(everything).not.toContain(secret);
  });
});

describe('with BENCHROUTER_PAYLOAD_KEY set', () => {
  it('history holds only ciphertext, br still reads results, and the codec server decodes for the Web UI', async () => {
    const payloadKey = randomBytes(12).toString('hex');
    const env = { ...envFor('codec'), BENCHROUTER_PAYLOAD_KEY: payloadKey };
    workers.push(await spawnWorker(env, 'host-codec'));
    const marker = `codec-marker-${randomBytes(4).toString('hex')}`;

    const ran = await br(['run', sleepers, '--model', 'm', '--endpoint', `http://127.0.0.1:9/${marker}/v1`, '--no-preflight', '--tasks', 's1', '--json'], env);
    expect(ran.code).toBe(0);
    const run = JSON.parse(ran.stdout);
    expect(run.status).toBe('COMPLETED');

    const history = historyJson(run.runId);
    const readable = [historyText(run.runId), ...run.jobs.map((j: { jobId: string }) => historyText(j.jobId))].join('\n');
    // A one-job run holds its job's result in its own (encrypted) history: no page workflow.
    expect(run.resultPages).toBeUndefined();
    expect(run.jobs).toHaveLength(1);
    expect(readable).toContain('binary/encrypted');
    expect(readable).not.toContain(marker);

    // Without the key, br cannot read the result; with it, it can.
    const withoutKey = await br(['results', run.runId, '--json'], { ...env, BENCHROUTER_PAYLOAD_KEY: '' });
    expect(withoutKey.code).not.toBe(0);
    const withKey = await br(['results', run.runId, '--json'], env);
    expect(JSON.parse(withKey.stdout)).toEqual(run);
    // Listing needs no key: it reads search attributes, never the encrypted memo.
    const listed = await br(['list', '--json'], { ...env, BENCHROUTER_PAYLOAD_KEY: '' });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).map((r: { runId: string }) => r.runId)).toContain(run.runId);

    const server = await startCodecServer(new AesGcmPayloadCodec(payloadKey), { port: 0, allowOrigin: 'http://localhost:8233' });
    try {
      const { port } = server.address() as { port: number };
      const input = JSON.parse(history).events[0].workflowExecutionStartedEventAttributes.input;
      const response = await fetch(`http://127.0.0.1:${port}/decode`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(input),
      });
      expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
      const decoded = (await response.json()) as { payloads: Array<{ data: string }> };
      expect(Buffer.from(decoded.payloads[0]!.data, 'base64').toString()).toContain(marker);
    } finally {
      server.close();
    }
  });
});
