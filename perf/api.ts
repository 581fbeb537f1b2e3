// perf/api: the HTTP API under load, in one run against a throwaway dev server and a real worker, with
// the server as it ships (its rate limit of BENCHROUTER_API_RATE_LIMIT per token, default 600 a minute):
// 1. `GET /runs/{id}` of a finished run at 50 concurrent clients, each with its own token as 50 programs
//    would have, p50/p99 as a ratio to `GET /whoami` (the cheapest authenticated route: the same auth,
//    rate limit and serializer, no run read) measured the same way in the same run; and against the same
//    read through `br status --json` (a process per read, as a script without the API would do it).
// 2. 200 concurrent `POST /evals/submit` of a 1-task run, each with its own Idempotency-Key, then the
//    same 200 again: every run created once, none duplicated (visibility counts them), p99 latency.
//    These go to a `br serve` on a queue no worker polls, so 200 runs wait instead of running.
//
//   npm run perf:api -- [GET requests per route, default 2000]

import { setTimeout as sleep } from 'node:timers/promises';
import os from 'node:os';
import path from 'node:path';
import { addToken } from '../api/api-tokens.js';
import { listRuns } from '../client/runs.js';
import { connectClient } from '../client/runs.js';
import { settingsFrom } from '../config/settings.js';
import { startReferenceModel } from '../reference-model/reference-model-server.js';
import { pool, repoRoot, run, startServe, startStack, stopProcess } from './perf-support.js';

const GETS = Number(process.argv[2] ?? 2000);
const CLIENTS = 50;
const SUBMITS = 200;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await work();
  return { ms: performance.now() - start, value };
}

async function main(): Promise<void> {
  const stack = await startStack('api');
  const tokensFile = path.join(stack.home, 'api-tokens.json');
  const bearer = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
  const headers = bearer(addToken(tokensFile, 'perf', false));
  const submitHeaders = bearer(addToken(tokensFile, 'perf-submit', false));
  const clientHeaders = Array.from({ length: CLIENTS }, (_, i) => bearer(addToken(tokensFile, `perf-client-${i}`, false)));
  const limit = settingsFrom(process.env, '/root').apiRateLimit;
  const model = await startReferenceModel({ port: 0, recordRequests: false });
  const serve = await startServe(stack.env, tokensFile);
  const unpolledEnv = { ...stack.env, BENCHROUTER_TASK_QUEUE: 'perf-api-unpolled' };
  const submitServe = await startServe(unpolledEnv, tokensFile);
  const client = await connectClient(settingsFrom(unpolledEnv, '/root'));
  try {
    // A finished run to read.
    const submitted = (await (
      await fetch(`${serve.url}/evals/submit`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ benchmark: 'arith', model: 'reference', endpoint: model.url, tasks: ['addition'], limit: 2 }),
      })
    ).json()) as { runId: string };
    await (await fetch(`${serve.url}/runs/${submitted.runId}/events`, { headers })).text();

    const runUrl = `${serve.url}/runs/${submitted.runId}`;
    const trivialUrl = `${serve.url}/whoami`;
    // One client first: the latency of a read alone, without queueing behind 49 others.
    const alone = async (url: string) => {
      const ms: number[] = [];
      for (let i = 0; i < 200; i++) ms.push((await timed(() => fetch(url, { headers }).then((r) => r.text()))).ms);
      return ms.sort((a, b) => a - b);
    };
    const trivialAloneMs = await alone(trivialUrl);
    const aloneMs = await alone(runUrl);

    // 50 clients, client i with token i: request i goes to client i mod 50. The two routes take turns in
    // rounds, so neither gets the warmer server or a quieter moment of the machine.
    const ROUNDS = 4;
    const trivial = { ms: [] as number[], seconds: 0 };
    const runRead = { ms: [] as number[], seconds: 0 };
    const loaded = async (url: string, into: { ms: number[]; seconds: number }, count: number) => {
      const start = performance.now();
      await pool(count, CLIENTS, async (i) => {
        const { ms: took, value } = await timed(() => fetch(url, { headers: clientHeaders[i % CLIENTS] }).then((r) => r.status));
        if (value !== 200) throw new Error(`GET ${new URL(url).pathname}: HTTP ${value}`);
        into.ms.push(took);
      });
      into.seconds += (performance.now() - start) / 1000;
    };
    for (let round = 0; round < ROUNDS; round++) {
      const count = Math.ceil(GETS / ROUNDS);
      await loaded(trivialUrl, trivial, count);
      await loaded(runUrl, runRead, count);
    }
    trivial.ms.sort((a, b) => a - b);
    runRead.ms.sort((a, b) => a - b);

    const statusMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const { ms, value } = await timed(() => run(path.join(repoRoot, 'br'), ['status', submitted.runId, '--json'], stack.env));
      if (!value.stdout.includes(submitted.runId)) throw new Error(`br status printed no status: ${value.stdout}`);
      statusMs.push(ms);
    }
    statusMs.sort((a, b) => a - b);

    const tag = `perf-submit-${Date.now()}`;
    const body = JSON.stringify({ benchmark: 'arith', model: tag, endpoint: model.url, tasks: ['addition'], limit: 1 });
    const submitOnce = async (round: number) => {
      const submitMs: number[] = [];
      const answers: Array<{ status: number; runId: string; created: boolean }> = [];
      await pool(SUBMITS, SUBMITS, async (i) => {
        const { ms, value } = await timed(async () => {
          const response = await fetch(`${submitServe.url}/evals/submit`, {
            method: 'POST',
            headers: { ...submitHeaders, 'idempotency-key': `${tag}-${i}` },
            body,
          });
          return { status: response.status, ...((await response.json()) as { runId: string; created: boolean }) };
        });
        submitMs.push(ms);
        answers.push(value);
      });
      submitMs.sort((a, b) => a - b);
      const errors = answers.filter((a) => a.status >= 300).length;
      console.log(
        `submit round ${round}: ${SUBMITS} concurrent, ${errors} errors, ${answers.filter((a) => a.created).length} created, ${new Set(answers.map((a) => a.runId)).size} distinct run ids, p50 ${percentile(submitMs, 50).toFixed(0)} ms, p99 ${percentile(submitMs, 99).toFixed(0)} ms`,
      );
    };
    await submitOnce(1);
    // The same keys again: every answer names the run made the first time.
    await submitOnce(2);
    let listed = 0;
    for (let i = 0; i < 50 && listed < SUBMITS; i++) {
      listed = (await listRuns(client, 1000, { model: tag })).length;
      if (listed < SUBMITS) await sleep(200);
    }
    console.log(`visibility lists ${listed} runs of ${tag} (expected ${SUBMITS}: none duplicated)`);

    const line = (name: string, m: { ms: number[]; seconds: number }) =>
      `${name}: ${m.ms.length} requests at ${CLIENTS} concurrent clients in ${m.seconds.toFixed(1)} s (${(m.ms.length / m.seconds).toFixed(0)}/s): p50 ${percentile(m.ms, 50).toFixed(1)} ms, p99 ${percentile(m.ms, 99).toFixed(1)} ms`;
    const p50 = percentile(runRead.ms, 50);
    const ratio = p50 / percentile(trivial.ms, 50);
    console.log(
      `rate limit as shipped: ${limit ? `${limit} requests a minute per token` : 'off (BENCHROUTER_API_RATE_LIMIT=0)'}; each client has its own token`,
    );
    console.log(line('GET /whoami (baseline)', trivial));
    console.log(line('GET /runs/{id}', runRead));
    console.log(
      `GET /runs/{id} / GET /whoami at p50: ${ratio.toFixed(2)}x (target <= 2), at p99: ${(percentile(runRead.ms, 99) / percentile(trivial.ms, 99)).toFixed(2)}x`,
    );
    console.log(
      `from 1 client: GET /runs/{id} p50 ${percentile(aloneMs, 50).toFixed(1)} ms, p99 ${percentile(aloneMs, 99).toFixed(1)} ms; GET /whoami p50 ${percentile(trivialAloneMs, 50).toFixed(1)} ms; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`,
    );
    console.log(
      `br status --json: p50 ${percentile(statusMs, 50).toFixed(0)} ms over ${statusMs.length} runs; the API read is ${(percentile(statusMs, 50) / p50).toFixed(0)}x faster`,
    );
  } finally {
    await client.connection.close();
    await stopProcess(serve.child);
    await stopProcess(submitServe.child);
    await model.close();
    await stack.stop();
  }
}

await main();
