// perf/rewards: rewards for a trainer's many small batches, in one run against a throwaway dev
// server, a real worker, `br serve` and the replay model answering arith at once.
// 1. One batch alone (image cached, worker warm): time from submit to its first reward, 3 times.
// 2. B batches submitted at once, each arith on its first N instances per task (2 tasks: 2N rewards),
//    each read through its own `GET /runs/{id}/rewards` stream: time to first reward, to last reward,
//    rewards per second, every reward counted once.
// 3. The baseline, measured in the same run: the same 2B containers run with plain `docker run` at the
//    worker's container concurrency (32), against the same model. BenchRouter's share is the part of
//    the time to the last reward that the plain containers did not need; the ratio of the two rates is
//    the figure with a target (>= 0.8).
//
// With `after`, each batch's rewards are read only once its run has ended: the runs' own pace, without
// live readers, for comparison.
//
//   npm run perf:rewards -- [batches, default 64] [instances per task, default 16] [after]

import { setTimeout as sleep } from 'node:timers/promises';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { imageTagFor } from '../activities/ensure-image.js';
import { addToken } from '../api/api-tokens.js';
import { directoryDigest } from '../contract/benchmark-digest.js';
import { startReplayModel } from '../reference-model/replay-model-server.js';
import { cpuDelta, cpuSecondsByProcess, pool, repoRoot, run, startServe, startStack, stopProcess } from './perf-support.js';

const BATCHES = Number(process.argv[2] ?? 64);
const PER_TASK = Number(process.argv[3] ?? 16);
const PER_BATCH = 2 * PER_TASK;
/** `after`: read each batch's rewards only once it has ended, to see what reading them live costs the runs. */
const READ_AFTER = process.argv[4] === 'after';
/** The worker's default maxConcurrentContainers. */
const CONTAINERS_AT_ONCE = 32;
const arithDir = path.join(repoRoot, 'benchmarks', 'arith');

interface BatchTimes {
  runId: string;
  submittedMs: number;
  /** Wall clock at submit, to place the job's own timings (ISO dates) against it. */
  submittedAt: number;
  /** Arrival time of each reward, ms since the perf clock's origin. */
  rewardMs: number[];
  keys: Set<string>;
}

/** Submits one batch and reads its reward stream to the end. */
async function batch(url: string, headers: Record<string, string>, endpoint: string, readAfter = false): Promise<BatchTimes> {
  const submittedMs = performance.now();
  const submittedAt = Date.now();
  const response = await fetch(`${url}/evals/submit`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ benchmark: 'arith', model: 'replay', endpoint, limit: PER_TASK, concurrency: 2 }),
  });
  const { runId } = (await response.json()) as { runId: string };
  if (!runId) throw new Error(`submit answered HTTP ${response.status}`);
  const times: BatchTimes = { runId, submittedMs, submittedAt, rewardMs: [], keys: new Set() };
  if (readAfter) {
    for (;;) {
      const state = (await (await fetch(`${url}/runs/${runId}`, { headers })).json()) as { status: string };
      if (state.status !== 'RUNNING') break;
      await sleep(500);
    }
  }
  const stream = await fetch(`${url}/runs/${runId}/rewards`, { headers });
  let buffer = '';
  let ended = false;
  for await (const chunk of stream.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += Buffer.from(chunk).toString('utf8');
    let at: number;
    while ((at = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      if (block.includes('event: end')) ended = true;
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (!block.includes('event: reward') || !data) continue;
      const reward = JSON.parse(data) as { job: string; line: number };
      times.rewardMs.push(performance.now());
      times.keys.add(`${reward.job}:${reward.line}`);
    }
  }
  if (!ended) throw new Error(`the rewards stream of ${runId} closed without its end event`);
  if (times.rewardMs.length !== PER_BATCH || times.keys.size !== PER_BATCH) {
    // Say how the run's jobs ended: a job that failed (its model calls timing out under load, say) streams fewer rewards.
    await sleep(2000);
    const results = await (await fetch(`${url}/runs/${runId}/results`, { headers })).text();
    throw new Error(
      `run ${runId}: ${times.rewardMs.length} rewards (${times.keys.size} distinct), expected ${PER_BATCH}; its results: ${results.slice(0, 3000)}`,
    );
  }
  return times;
}

/** One plain `docker run` of an arith task; resolves with ms from its start to its first records.jsonl line, and to its exit. */
async function rawDockerRun(image: string, endpoint: string, results: string, task: string): Promise<{ firstLineMs: number; exitMs: number }> {
  mkdirSync(results, { recursive: true, mode: 0o777 });
  const started = performance.now();
  let firstLineMs = NaN;
  const watch = setInterval(() => {
    if (
      Number.isNaN(firstLineMs) &&
      existsSync(path.join(results, 'records.jsonl')) &&
      readFileSync(path.join(results, 'records.jsonl'), 'utf8').includes('\n')
    )
      firstLineMs = performance.now() - started;
  }, 20);
  try {
    const r = await run('docker', [
      ...['run', '--rm', '--network', 'host', '--memory', '2g', '--cpus', '1', '--pids-limit', '512'],
      ...['--mount', `type=bind,source=${arithDir},target=/app/benchmark,readonly`, '--mount', `type=bind,source=${results},target=/app/results`],
      ...['--env', 'BENCHROUTER_OUTPUT_DIR=/app/results', '--env', `BENCHROUTER_MODEL_ENDPOINT=${endpoint}`, '--env', 'BENCHROUTER_MODEL_NAME=replay'],
      ...['--env', 'BENCHROUTER_API_KEY=x', '--env', `BENCHROUTER_LIMIT=${PER_TASK}`, '--workdir', `/app/benchmark/tasks/${task}`],
      ...['--entrypoint', '/bin/sh', image, '-c', 'python3 /app/benchmark/eval_arith.py --problems problems.jsonl'],
    ]);
    if (r.code !== 0) throw new Error(`docker run failed: ${r.stderr}`);
    return { firstLineMs, exitMs: performance.now() - started };
  } finally {
    clearInterval(watch);
  }
}

async function rawDockerRuns(image: string, endpoint: string, scratch: string): Promise<number> {
  const started = performance.now();
  await pool(2 * BATCHES, CONTAINERS_AT_ONCE, async (i) => {
    await rawDockerRun(image, endpoint, path.join(scratch, `raw-${i}`), i % 2 === 0 ? 'addition' : 'multiplication');
  });
  return (performance.now() - started) / 1000;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-perf-rewards-'));
  const stack = await startStack('rewards');
  const tokensFile = path.join(stack.home, 'api-tokens.json');
  const headers = { authorization: `Bearer ${addToken(tokensFile, 'perf', false)}`, 'content-type': 'application/json' };
  const model = await startReplayModel({ answersFile: path.join(repoRoot, 'test', 'fixtures', 'replay', 'arith.jsonl') });
  const serve = await startServe(stack.env, tokensFile);
  try {
    // Warm-up: caches the image and primes the worker and the API. As many batches at once as the
    // measured run keeps containers running (CONTAINERS_AT_ONCE jobs), so the worker's pool of network
    // namespaces (netns-pool.ts) holds a namespace for each, as a long-lived `br up` worker's does from
    // one run to the next (perf/overhead warms the same way): warmed with one batch, the measured run
    // made ~30 namespaces, each a container of its own on the task network, inside its timing.
    await Promise.all(Array.from({ length: CONTAINERS_AT_ONCE / 2 }, () => batch(serve.url, headers, model.url)));
    const alone: number[] = [];
    for (let i = 0; i < 3; i++) {
      const times = await batch(serve.url, headers, model.url);
      alone.push(times.rewardMs[0]! - times.submittedMs);
    }
    const image = imageTagFor('arith', 'python', directoryDigest(path.join(arithDir, 'environments', 'python')));
    const rawAlone: number[] = [];
    for (let i = 0; i < 3; i++) rawAlone.push((await rawDockerRun(image, model.url, path.join(scratch, `alone-${i}`), 'addition')).firstLineMs);
    console.log(
      `one batch alone: first reward ${alone.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(', ')} after submit (target <= 2 s); plain docker run of one task, start to its first records.jsonl line: ${rawAlone.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(', ')}`,
    );

    const processes = {
      dockerd: /^(\/usr\/sbin\/)?dockerd/,
      temporal: new RegExp(`temporal server start-dev .*${stack.home}`),
      worker: new RegExp(`${path.join(repoRoot, 'cli')}/(bin\\.ts|launch\\.mjs) worker`),
      'br serve': new RegExp(`${path.join(repoRoot, 'cli')}/(bin\\.ts|launch\\.mjs) serve`),
    };
    const cpu0 = cpuSecondsByProcess(processes);
    const origin = performance.now();
    const batches = await Promise.all(Array.from({ length: BATCHES }, () => batch(serve.url, headers, model.url, READ_AFTER)));
    const cpu1 = cpuSecondsByProcess(processes);
    const all = batches.flatMap((b) => b.rewardMs).sort((a, b) => a - b);
    const first = (all[0]! - origin) / 1000;
    const last = (all[all.length - 1]! - origin) / 1000;
    const firstPerBatch = batches.map((b) => (b.rewardMs[0]! - b.submittedMs) / 1000);
    console.log(
      `${BATCHES} concurrent batches of ${PER_BATCH} instances (${all.length} rewards, each once${READ_AFTER ? '; each read after its run ended' : ''}): first reward ${first.toFixed(2)} s, last ${last.toFixed(2)} s after the submits; ${(all.length / last).toFixed(0)} rewards/s overall, ${((all.length - 1) / (last - first)).toFixed(0)} rewards/s from first to last (target >= 200)`,
    );
    console.log(
      `per batch, submit to first reward: median ${median(firstPerBatch).toFixed(2)} s, max ${Math.max(...firstPerBatch).toFixed(2)} s; CPU in that time: ${cpuDelta(cpu0, cpu1)}`,
    );

    // Where a batch's time goes: from submit to its containers' start, and from there to its first reward.
    const toStart: number[] = [];
    const startToFirst: number[] = [];
    for (const b of batches) {
      // The stream ends when the jobs have; the run itself ends a moment later (409 until then).
      let response: Response;
      while ((response = await fetch(`${serve.url}/runs/${b.runId}/results`, { headers })).status === 409) await sleep(200);
      const result = (await response.json()) as { jobs: Array<{ timings: { startedAt?: string } }> };
      const started = Math.min(...result.jobs.map((j) => Date.parse(j.timings.startedAt ?? '')));
      toStart.push((started - b.submittedAt) / 1000);
      startToFirst.push((b.rewardMs[0]! - b.submittedMs) / 1000 - (started - b.submittedAt) / 1000);
    }
    console.log(
      `per batch: submit to its first container start median ${median(toStart).toFixed(2)} s (max ${Math.max(...toStart).toFixed(2)} s); that start to its first reward median ${median(startToFirst).toFixed(2)} s (max ${Math.max(...startToFirst).toFixed(2)} s)`,
    );
    const raw = await rawDockerRuns(image, model.url, scratch);
    console.log(
      `baseline: the same ${2 * BATCHES} containers with plain docker run, ${CONTAINERS_AT_ONCE} at once: ${raw.toFixed(2)} s; BenchRouter's share of the time to the last reward: ${(((last - raw) / last) * 100).toFixed(0)}% (${(last - raw).toFixed(2)} s of ${last.toFixed(2)} s); load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`,
    );
    // The throughput target: BenchRouter's rewards a second over the plain containers' (the same rewards
    // in `raw` seconds), both measured in this run, so the machine's load moves both sides.
    console.log(`ratio of rewards a second, BenchRouter / plain docker run: ${(raw / last).toFixed(3)} (target >= 0.8)`);
  } finally {
    await stopProcess(serve.child);
    await model.close();
    await stack.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
