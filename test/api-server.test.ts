// `br serve` as a process against the real dev server, worker, Docker engine and reference model:
// submit through POST /evals/submit, follow the SSE stream to the result, read results and records,
// cancel, retry, the leaderboard; auth and the error statuses; idempotent submits.

import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedArithScore } from '../reference-model/expected-score.js';
import type { RunProgress, RunResult } from '../runs/run-spec.js';
import { callApi, readEvents, startApiProcess, type ApiProcess } from './support/api-process.js';
import { fixturesDir, repoRoot, startHarness, type Harness } from './support/harness.js';
import { waitFor } from './support/processes.js';

const arithDir = path.join(repoRoot, 'benchmarks', 'arith');
let h: Harness;
let api: ApiProcess;
/**
 * A model name of this file's own (the reference model reads the accuracy from `acc80`), so visibility filters
 * and the leaderboard see only its runs: other files run arith against reference-acc80 on the same dev server, and
 * the leaderboard keeps the latest run per model.
 */
const model = `api-acc80-${randomBytes(3).toString('hex')}`;
let finished: RunResult;

beforeAll(async () => {
  h = await startHarness('api');
  api = await startApiProcess(h.env, h.home);
});

afterAll(async () => {
  await api?.stop();
  await h?.close();
});

interface ErrorBody {
  error: { code: string; message: string; field?: string };
}

describe('br serve: auth and errors', () => {
  it('answers 401 without a token and with an unknown one, and 403 when a read-only token posts', async () => {
    const none = await callApi<ErrorBody>(api, 'GET', '/runs', { token: null });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('UNAUTHORIZED');
    expect((await callApi(api, 'GET', '/runs', { token: 'br_not-a-token' })).status).toBe(401);
    expect((await callApi(api, 'GET', '/runs', { token: api.readToken })).status).toBe(200);
    const post = await callApi<ErrorBody>(api, 'POST', '/evals/submit', { token: api.readToken, body: { benchmark: 'arith', model, endpoint: h.model.url } });
    expect(post.status).toBe(403);
    expect(post.body.error.message).toContain('read-only');
  });

  it('answers 400 naming the field of a bad body, and 422 for a task the benchmark lacks', async () => {
    const missing = await callApi<ErrorBody>(api, 'POST', '/evals/submit', { body: { benchmark: 'arith', model } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.field).toBe('body.endpoint');
    const badUrl = await callApi<ErrorBody>(api, 'POST', '/evals/submit', { body: { benchmark: 'arith', model, endpoint: 'ftp://x' } });
    expect(badUrl.status).toBe(400);
    expect(badUrl.body.error.message).toContain('http(s) URL');
    const unknownTask = await callApi<ErrorBody>(api, 'POST', '/evals/submit', {
      body: { benchmark: 'arith', model, endpoint: h.model.url, tasks: ['division'] },
    });
    expect(unknownTask.status).toBe(422);
    expect(unknownTask.body.error).toMatchObject({ code: 'UNPROCESSABLE', field: 'body.tasks' });
    expect(unknownTask.body.error.message).toContain('no task named "division"');
  });

  it('answers 404 for an unknown run and an unknown route, and 413 for a body over the limit', async () => {
    const run = await callApi<ErrorBody>(api, 'GET', '/runs/br-20000101-000000-000000');
    expect(run.status).toBe(404);
    expect(run.body.error.message).toContain('br-20000101-000000-000000 not found');
    expect((await callApi(api, 'GET', '/no-such-route')).status).toBe(404);
    const huge = await callApi<ErrorBody>(api, 'POST', '/evals/submit', {
      body: { benchmark: 'arith', model, endpoint: h.model.url, prices: { x: { input: 1, output: 1 } }, pad: 'x'.repeat(100 * 1024) },
    });
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('serves an OpenAPI document generated from the zod schemas without a token', async () => {
    const doc = await callApi<{
      openapi: string;
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } }>>;
    }>(api, 'GET', '/openapi.json', { token: null });
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        '/evals/submit',
        '/runs',
        '/runs/{id}',
        '/runs/{id}/events',
        '/runs/{id}/rewards',
        '/runs/{id}/results',
        '/runs/{id}/records',
        '/runs/{id}/cancel',
        '/runs/{id}/retry',
        '/leaderboard',
        '/compare',
        '/benchmarks',
      ]),
    );
    expect(Object.keys(doc.body.paths['/evals/submit']!.post!.requestBody!.content['application/json']!.schema.properties)).toEqual(
      expect.arrayContaining(['benchmark', 'model', 'endpoint', 'tasks', 'repeats', 'seed', 'limit', 'gen', 'maxTokens', 'hostTimeout']),
    );
  });
});

describe('br serve: runs', () => {
  it('runs the built-in arith benchmark submitted over HTTP, streams progress over SSE and ends with the reference score', async () => {
    const submitted = await callApi<{ runId: string; created: boolean; jobs: number; links: { dashboard: string; webUi: string } }>(
      api,
      'POST',
      '/evals/submit',
      { body: { benchmark: 'arith', model, endpoint: h.model.url } },
    );
    expect(submitted.status).toBe(201);
    expect(submitted.body).toMatchObject({ created: true, jobs: 2 });
    expect(submitted.body.links.dashboard).toBe(`${api.url}/ui/runs/${submitted.body.runId}`);
    const events = await readEvents(api, submitted.body.runId);
    const progress = events.filter((e) => e.event === 'progress').map((e) => e.data as RunProgress);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)).toMatchObject({ total: 2, succeeded: 2, pending: 0, running: 0 });
    expect(events.at(-1)!.event).toBe('result');
    finished = events.at(-1)!.data as RunResult;
    expect(finished.status).toBe('COMPLETED');
    expect(finished.overall).toBe(expectedArithScore(arithDir, model).overall);

    const results = await callApi<RunResult>(api, 'GET', `/runs/${finished.runId}/results`);
    expect(results.status).toBe(200);
    expect(results.body.overall).toBe(finished.overall);
    expect(results.body.jobs.map((j) => j.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    const state = await callApi<{ status: string; progress: RunProgress }>(api, 'GET', `/runs/${finished.runId}`, { token: api.readToken });
    expect(state.body).toMatchObject({ status: 'COMPLETED', progress: { total: 2, succeeded: 2 } });
  });

  it('pages the records of a finished run', async () => {
    const first = await callApi<{ records: Array<{ index: number; task: string }>; nextOffset?: number }>(
      api,
      'GET',
      `/runs/${finished.runId}/records?limit=3`,
    );
    expect(first.status).toBe(200);
    expect(first.body.records).toHaveLength(3);
    expect(first.body.nextOffset).toBe(3);
    const second = await callApi<{ records: Array<{ index: number; task: string }> }>(api, 'GET', `/runs/${finished.runId}/records?offset=3&limit=3`);
    expect(second.body.records[0]).not.toEqual(first.body.records[0]);
    const total = finished.jobs.reduce((sum, j) => sum + (j.records?.count ?? 0), 0);
    const all = await callApi<{ records: unknown[]; nextOffset?: number }>(api, 'GET', `/runs/${finished.runId}/records?limit=1000`);
    expect(all.body.records).toHaveLength(total);
    expect(all.body.nextOffset).toBeUndefined();
  });

  it('shows the finished run on the leaderboard with its score', async () => {
    // Visibility lags the run's end; with three test files at once it has taken over 30 s on this 2-core machine.
    let seen: unknown;
    await waitFor(
      'the score to reach visibility',
      async () => {
        const board = await callApi<{ cells: Record<string, Record<string, { runId: string; score: number }>> }>(api, 'GET', '/leaderboard?benchmark=arith', {
          token: api.readToken,
        });
        seen = board.body.cells[model];
        return board.body.cells[model]?.arith?.runId === finished.runId;
      },
      90_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message} (run ${finished.runId}); the leaderboard's row for ${model}: ${JSON.stringify(seen)}`);
    });
    const board = await callApi<{ cells: Record<string, Record<string, { score: number }>> }>(api, 'GET', '/leaderboard?benchmark=arith');
    expect(board.body.cells[model]!.arith!.score).toBe(finished.overall);
  });

  it('creates one run for concurrent submits with the same Idempotency-Key, and refuses the key for another body', async () => {
    const body = { benchmark: 'arith', model: 'reference', endpoint: h.model.url, tasks: ['addition'], limit: 2 };
    const headers = { 'idempotency-key': `api-test-${Date.now()}` };
    const answers = await Promise.all([1, 2, 3].map(() => callApi<{ runId: string; created: boolean }>(api, 'POST', '/evals/submit', { body, headers })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 201]);
    expect(new Set(answers.map((a) => a.body.runId)).size).toBe(1);
    expect(answers.filter((a) => a.body.created)).toHaveLength(1);
    const runId = answers[0]!.body.runId;
    await readEvents(api, runId);
    const retried = await callApi<{ runId: string; created: boolean }>(api, 'POST', '/evals/submit', { body, headers });
    expect(retried).toMatchObject({ status: 200, body: { runId, created: false } });
    const other = await callApi<ErrorBody>(api, 'POST', '/evals/submit', { body: { ...body, limit: 3 }, headers });
    expect(other.status).toBe(422);
    expect(other.body.error.field).toBe('header.idempotency-key');
  });

  it('cancels a running run (CANCELLED, 409 once it ended), then retries it as a new run of its unfinished job', async () => {
    const submitted = await callApi<{ runId: string }>(api, 'POST', '/evals/submit', {
      body: { benchmark: path.join(fixturesDir, 'benchmarks', 'sleeper'), model, endpoint: h.model.url },
    });
    expect(submitted.status).toBe(201);
    const runId = submitted.body.runId;
    await waitFor(
      'the sleeper job to run',
      async () => (await callApi<{ progress: RunProgress | null }>(api, 'GET', `/runs/${runId}`)).body.progress?.running === 1,
      60_000,
    );
    const cancel = await callApi(api, 'POST', `/runs/${runId}/cancel`);
    expect(cancel).toMatchObject({ status: 202, body: { runId, status: 'CANCELLING' } });
    const events = await readEvents(api, runId);
    expect(events.at(-1)).toMatchObject({ event: 'result', data: { status: 'CANCELLED' } });
    expect((await callApi(api, 'POST', `/runs/${runId}/cancel`)).status).toBe(409);

    const retry = await callApi<{ runId: string; retryOf: string; jobs: number; carried: number }>(api, 'POST', `/runs/${runId}/retry`);
    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({ retryOf: runId, jobs: 1, carried: 0 });
    expect(retry.body.runId).not.toBe(runId);
    // The sleeper outlives its 3 s timeout: the retry runs it again, to TIMED_OUT.
    const retryEvents = await readEvents(api, retry.body.runId);
    expect(retryEvents.at(-1)).toMatchObject({ event: 'result', data: { retryOf: runId, jobs: [{ status: 'TIMED_OUT' }] } });
  });

  it('refuses to retry a run whose jobs all succeeded (409)', async () => {
    const retry = await callApi<ErrorBody>(api, 'POST', `/runs/${finished.runId}/retry`);
    expect(retry.status).toBe(409);
    expect(retry.body.error.message).toContain('nothing to retry');
  });

  it('compares chosen runs and serves a job log', async () => {
    const compare = await callApi<{ view: { columns: string[]; rows: unknown[][] } }>(api, 'GET', `/compare?runs=${finished.runId}`);
    expect(compare.status).toBe(200);
    expect(compare.body.view.rows.length).toBeGreaterThan(0);
    const job = finished.jobs[0]!;
    const log = await callApi(api, 'GET', `/runs/${finished.runId}/jobs/${job.jobId}/log`);
    expect(log.status).toBe(200);
    expect(typeof log.body).toBe('string');
    expect((await callApi(api, 'GET', `/runs/${finished.runId}/jobs/..%2F..%2Fetc/log`)).status).toBe(400);
  });
});
