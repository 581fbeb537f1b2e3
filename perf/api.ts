// perf/api: the HTTP API under load, in one run against a throwaway dev server and a real worker.
// 1. `GET /runs/{id}` of a finished run at 50 concurrent clients: p50/p99, against the same read
//    through `br status --json` (a process per read, as a script without the API would do it).
// 2. 200 concurrent `POST /evals/submit` of a 1-task run, each with its own Idempotency-Key, then the
//    same 200 again: every run created once, none duplicated (visibility counts them), p99 latency.
//    These go to a `br serve` on a queue no worker polls, so 200 runs wait instead of running.
//
//   npm run perf:api -- [GET requests, default 2000]

import { setTimeout as sleep } from 'node:timers/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { addToken } from '../api/api-tokens.js';
import { listRuns } from '../client/runs.js';
import { connectClient } from '../client/runs.js';
import { settingsFrom } from '../config/settings.js';
import { startReferenceModel } from '../reference-model/reference-model-server.js';
import { freePort, pool, repoRoot, run, startStack, stopProcess } from './perf-support.js';

const GETS = Number(process.argv[2] ?? 2000);
const CLIENTS = 50;
const SUBMITS = 200;

async function startServe(env: Record<string, string>, tokensFile: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(path.join(repoRoot, 'br'), ['serve', '--port', String(port), '--tokens', tokensFile], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stderr!.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes('listening on')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`br serve exited with ${code}: ${seen}`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

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
  const token = addToken(tokensFile, 'perf', false);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
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

    // One client first: the latency of a read alone, without queueing behind 49 others.
    const aloneMs: number[] = [];
    for (let i = 0; i < 200; i++) aloneMs.push((await timed(() => fetch(`${serve.url}/runs/${submitted.runId}`, { headers }).then((r) => r.text()))).ms);
    aloneMs.sort((a, b) => a - b);

    const getMs: number[] = [];
    const getStart = performance.now();
    await pool(GETS, CLIENTS, async () => {
      const { ms, value } = await timed(() => fetch(`${serve.url}/runs/${submitted.runId}`, { headers }).then((r) => r.status));
      if (value !== 200) throw new Error(`GET /runs/{id}: HTTP ${value}`);
      getMs.push(ms);
    });
    const getSeconds = (performance.now() - getStart) / 1000;
    getMs.sort((a, b) => a - b);

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
          const response = await fetch(`${submitServe.url}/evals/submit`, { method: 'POST', headers: { ...headers, 'idempotency-key': `${tag}-${i}` }, body });
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

    const p50 = percentile(getMs, 50);
    console.log(
      `GET /runs/{id}: ${GETS} requests at ${CLIENTS} concurrent clients in ${getSeconds.toFixed(1)} s: p50 ${p50.toFixed(1)} ms, p99 ${percentile(getMs, 99).toFixed(1)} ms (target p50 <= 10 ms)`,
    );
    console.log(
      `GET /runs/{id} from 1 client: p50 ${percentile(aloneMs, 50).toFixed(1)} ms, p99 ${percentile(aloneMs, 99).toFixed(1)} ms; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`,
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
