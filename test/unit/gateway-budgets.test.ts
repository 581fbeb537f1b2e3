// The gateway's budgets and adaptive concurrency, against a scripted upstream in this file: every chat
// call costs 15 tokens (10 prompt, 5 completion); the model `throttle` is answered 429 with Retry-After 0
// once, then served. A spent budget answers 429 `budget_exhausted` without calling the upstream.

import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ModelGateway, type GatewayRoute } from '../../gateway/model-gateway.js';
import { BUILT_IN_PRICES } from '../../gateway/price-table.js';

let upstream: http.Server;
let upstreamUrl: string;
let upstreamCalls = 0;
let throttledOnce = false;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-gateway-budgets-'));
  upstream = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      upstreamCalls += 1;
      if (Buffer.concat(chunks).toString().includes('"model":"throttle"') && !throttledOnce) {
        throttledOnce = true;
        return void res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' }).end('{"error":{"message":"slow down"}}');
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ choices: [{ message: { content: '1' } }], usage: { prompt_tokens: 10, completion_tokens: 5 } }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
  rmSync(scratch, { recursive: true, force: true });
});

let gateway: ModelGateway;
let port: number;
beforeEach(async () => {
  upstreamCalls = 0;
  gateway = new ModelGateway('budgets-secret');
  port = await gateway.listen(0, '127.0.0.1');
});
afterEach(async () => {
  await gateway.close();
});

function register(jobId: string, runId: string, budget?: GatewayRoute['budget'], concurrency = 8): string {
  return gateway.register({
    jobId,
    runId,
    role: 'model',
    upstream: { baseUrl: upstreamUrl, apiKey: 'sk-real-key' },
    generation: { set: {} },
    prices: BUILT_IN_PRICES,
    limits: { concurrency, maxRetries: 2 },
    ...(budget ? { budget } : {}),
    usageFile: path.join(scratch, jobId, 'usage-model.json'),
  });
}

function chat(token: string, model = 'm'): Promise<{ status: number; retryAfter?: string; body: unknown }> {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'What is 1 + 0?' }] });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            ...(res.headers['retry-after'] !== undefined ? { retryAfter: res.headers['retry-after'] } : {}),
            body: JSON.parse(Buffer.concat(chunks).toString()),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('gateway budgets', () => {
  it("refuses a job's calls once its own budget is spent: 429 budget_exhausted, no Retry-After, not sent upstream, counted", async () => {
    const token = register('job-a', 'run-a', { job: { tokens: 40 } });
    // 0, 15 and 30 tokens are under 40: three calls go; the fourth finds 45 spent.
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await chat(token)).status);
    expect(statuses).toEqual([200, 200, 200]);
    const refused = await chat(token);
    expect(refused).toEqual({
      status: 429,
      body: {
        error: {
          message: "BenchRouter budget exhausted: the job's budget is spent (45 of 40 tokens spent); no further model calls are sent (docs/gateway.md#budgets)",
          type: 'budget_exhausted',
          code: null,
        },
      },
    });
    expect(upstreamCalls).toBe(3);
    expect(gateway.jobSpend('job-a')).toEqual({ tokens: 45, cost: expect.any(Number) as number });
    const counters = gateway.unregister('job-a', 'model')!;
    expect([counters.requests, counters.errors, counters.budgetRefused, counters.promptTokens + counters.completionTokens]).toEqual([4, { '429': 1 }, 1, 45]);
  });

  it("refuses once the run's budget is spent by this job and the rest of the run as reported, then every job of the run on this host", async () => {
    const a = register('job-b1', 'run-b', { run: { tokens: 50 } });
    const b = register('job-b2', 'run-b', { run: { tokens: 50 } });
    const other = register('job-c1', 'run-c', { run: { tokens: 50 } });
    gateway.noteRunSpend('job-b1', 'run-b', { tokens: 20, cost: 0 });
    // 20 elsewhere + 0, then + 15: under 50, sent; 20 + 30 = 50: spent.
    expect([(await chat(a)).status, (await chat(a)).status, (await chat(a)).status]).toEqual([200, 200, 429]);
    // job-b2 has spent nothing, and was told nothing, but its run's budget is spent on this host.
    const refused = await chat(b);
    expect([refused.status, (refused.body as { error: { message: string } }).error.message]).toEqual([
      429,
      "BenchRouter budget exhausted: the run's budget is spent (50 of 50 tokens spent); no further model calls are sent (docs/gateway.md#budgets)",
    ]);
    // Another run is not affected.
    expect((await chat(other)).status).toBe(200);
    // The run workflow's word that the budget is spent reaches a job that spent nothing here.
    const d = register('job-d1', 'run-d', { run: { tokens: 1000 } });
    gateway.noteRunSpend('job-d1', 'run-d', { tokens: 10, cost: 0 }, '1000 of 1000 tokens spent');
    expect((await chat(d)).status).toBe(429);
    expect(upstreamCalls).toBe(3);
  });
});

describe('gateway adaptive concurrency', () => {
  it("halves the run's limit on an upstream 429 and records the lowest limit its calls met", async () => {
    const token = register('job-t', 'run-t', undefined, 8);
    expect((await chat(token, 'throttle')).status).toBe(200);
    const counters = gateway.unregister('job-t', 'model')!;
    expect([counters.throttled, counters.retries, counters.concurrencyMin]).toEqual([1, 1, 4]);
  });
});
