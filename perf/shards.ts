// perf/shards: instances as the unit of work, measured against a baseline in the same run.
//
//   fanout   scienceworld on its first N episodes (32) against the reference model with a fixed delay per call,
//            unsplit (one container walks them all) against --shard-size 4 at --concurrency 8. Target: >= 5x.
//   overhead N one-instance shards of a no-op task (1,000) against N raw `docker run`s of the same container at
//            the same concurrency (8). Target: <= 1.15x.
//   resume   a 40-instance task in shards of 10 whose worker is killed (kill -9) half-way, then (a) started again
//            on the same host, and (b) lost with its containers while another host takes over: the model calls
//            each instance got (the reference model's own count), and how many instances were asked twice.
//            Target: none of those scored before the kill is evaluated again.
//
//   npm run perf:shards -- [fanout|overhead|resume|all] [N]

import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { imageTagFor } from '../activities/ensure-image.js';
import { connectClient, createRunSpec, followRun, submitRun } from '../client/runs.js';
import { settingsFrom } from '../config/settings.js';
import { directoryDigest } from '../contract/benchmark-digest.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { startReferenceModel, type ReferenceModelServer } from '../reference-model/reference-model-server.js';
import type { RewardsPage } from '../runs/rewards.js';
import { NOOP_COMMAND, timeRawDockerRuns } from './noop-tasks.js';
import { brJson, cpuDelta, cpuSecondsByProcess, cpuSecondsOfTrees, repoRoot, startStack, startWorkerProcess } from './perf-support.js';

const which = process.argv[2] ?? 'all';
const CONCURRENCY = 8;

async function main(): Promise<void> {
  if (which === 'fanout' || which === 'all') await fanout(Number(process.argv[3] ?? 32));
  if (which === 'overhead' || which === 'all') await overhead(Number(process.argv[3] ?? 1000));
  if (which === 'resume' || which === 'all') await resume();
}

/** `br run` of a benchmark directory with these flags; its wall seconds and JSON result. */
async function brRun(
  env: Record<string, string>,
  dir: string,
  flags: string[],
): Promise<{ seconds: number; result: { status: string; overall: number | null; jobs: unknown[]; runId: string } }> {
  const {
    seconds,
    stderr,
    value: result,
  } = await brJson<{ status: string; overall: number | null; jobs: unknown[]; runId: string }>(['run', dir, ...flags], env);
  if (result?.status !== 'COMPLETED') throw new Error(`br run ended ${result?.status ?? 'without a result'}: ${stderr.slice(-2000)}`);
  return { seconds, result };
}

async function fanout(episodes: number): Promise<void> {
  const delayMs = Number(process.env.BENCHROUTER_PERF_DELAY_MS ?? 100);
  const model = await startReferenceModel({ port: 0, host: '0.0.0.0', recordRequests: false });
  const stack = await startStack('shards-fanout');
  try {
    const dir = path.join(repoRoot, 'benchmarks', 'scienceworld');
    const flags = ['--model', `reference-delay${delayMs}`, '--endpoint', model.url, '--limit', String(episodes), '--concurrency', String(CONCURRENCY)];
    // The image built (and the simulator's first start paid) before either is timed.
    await brRun(stack.env, dir, ['--model', `reference-delay${delayMs}`, '--endpoint', model.url, '--limit', '1']);
    const split = await brRun(stack.env, dir, [...flags, '--shard-size', '4']);
    const whole = await brRun(stack.env, dir, [...flags, '--shard-size', String(episodes)]);
    console.log(`fanout: scienceworld, ${episodes} episodes, the reference model with ${delayMs} ms a call, concurrency ${CONCURRENCY}`);
    console.log(`  unsplit (1 job):           ${whole.seconds.toFixed(1)} s, overall ${whole.result.overall}`);
    console.log(`  --shard-size 4 (${split.result.jobs.length} jobs):   ${split.seconds.toFixed(1)} s, overall ${split.result.overall}`);
    console.log(
      `  speed-up:                  ${(whole.seconds / split.seconds).toFixed(2)}x (target >= 5x); the same overall: ${whole.result.overall === split.result.overall}`,
    );
  } finally {
    await stack.stop();
    await model.close();
  }
}

/** A benchmark of one no-op task listing `count` instances, its score a mean over them. */
function makeNoopInstances(dir: string, count: number): void {
  mkdirSync(path.join(dir, 'environments', 'noop'), { recursive: true });
  writeFileSync(path.join(dir, 'environments', 'noop', 'Dockerfile'), 'FROM benchrouter/base:bookworm\n');
  mkdirSync(path.join(dir, 'tasks', 'noop'), { recursive: true });
  writeFileSync(path.join(dir, 'benchmark.yaml'), 'name: perf-noop\ntasks:\n  - {name: noop, environment: noop}\n');
  writeFileSync(path.join(dir, 'tasks', 'noop', 'ids.txt'), Array.from({ length: count }, (_, i) => `i${i}`).join('\n'));
  writeFileSync(path.join(dir, 'tasks', 'noop', 'task.yaml'), `name: noop\ncommand: |\n  ${NOOP_COMMAND}\ntimeout: 120\ninstances: ids.txt\naggregate: mean\n`);
}

async function overhead(count: number): Promise<void> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-perf-shards-'));
  const dir = path.join(scratch, 'perf-noop');
  makeNoopInstances(dir, count);
  const stack = await startStack('shards-overhead');
  const flags = ['--model', 'noop', '--endpoint', 'http://127.0.0.1:9/v1', '--no-preflight', '--concurrency', String(CONCURRENCY), '--shard-size', '1'];
  try {
    // Warm-up at the measured concurrency: the image, the worker's code, its pool of network namespaces.
    await brRun(stack.env, dir, [...flags, '--limit', String(4 * CONCURRENCY)]);
    const image = imageTagFor('perf-noop', 'noop', directoryDigest(path.join(dir, 'environments', 'noop')));
    const cpu = () => ({
      ...cpuSecondsByProcess({ dockerd: /^(\/usr\/sbin\/)?dockerd/, containerd: /containerd/ }),
      ...cpuSecondsOfTrees({ temporal: [stack.serverPid()], worker: stack.workers.map((w) => w.pid!) }),
    });
    const rounds = Number(process.env.BENCHROUTER_PERF_ROUNDS ?? 1);
    const ratios: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['raw', 'br'] as const) : (['br', 'raw'] as const);
      const taken: Record<string, { seconds: number; cpu: string }> = {};
      for (const side of order) {
        const before = cpu();
        const seconds = side === 'raw' ? await timeRawDockerRuns(image, dir, scratch, count, CONCURRENCY) : (await brRun(stack.env, dir, flags)).seconds;
        taken[side] = { seconds, cpu: cpuDelta(before, cpu()) };
      }
      const ratio = taken.br!.seconds / taken.raw!.seconds;
      ratios.push(ratio);
      console.log(
        `overhead round ${round + 1}: ${count} one-instance shards ${taken.br!.seconds.toFixed(1)} s (CPU ${taken.br!.cpu}), ${count} raw docker runs ${taken.raw!.seconds.toFixed(1)} s (CPU ${taken.raw!.cpu}), ratio ${ratio.toFixed(3)}`,
      );
    }
    ratios.sort((a, b) => a - b);
    console.log(`overhead: ratio ${ratios[Math.floor(ratios.length / 2)]!.toFixed(3)} (median of ${rounds}; target <= 1.15)`);
  } finally {
    await stack.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The steps fixture (test/fixtures/benchmarks/steps) with `count` instances taking `seconds` each. */
function stepsWith(into: string, count: number, seconds: number): string {
  const dir = path.join(into, 'steps');
  cpSync(path.join(repoRoot, 'test', 'fixtures', 'benchmarks', 'steps'), dir, { recursive: true });
  writeFileSync(path.join(dir, 'tasks', 'walk', 'instances.txt'), Array.from({ length: count }, (_, i) => `s${String(i).padStart(2, '0')}`).join('\n'));
  const file = path.join(dir, 'tasks', 'walk', 'task.yaml');
  writeFileSync(file, readFileSync(file, 'utf8').replace('STEP_SECONDS: 0', `STEP_SECONDS: ${seconds}`));
  return dir;
}

/** Model calls per instance ("What is 7 + 1?" is s07's), from the reference model's log. */
function asksPerInstance(model: ReferenceModelServer): Map<string, number> {
  const asks = new Map<string, number>();
  for (const request of model.requests) {
    const body = request.body as { messages?: Array<{ content: string }> } | undefined;
    const n = /What is (\d+) \+ 1\?/.exec(body?.messages?.at(-1)?.content ?? '')?.[1];
    if (n !== undefined) asks.set(`s${n.padStart(2, '0')}`, (asks.get(`s${n.padStart(2, '0')}`) ?? 0) + 1);
  }
  return asks;
}

async function resume(): Promise<void> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-perf-resume-'));
  const dir = stepsWith(scratch, 40, 1);
  for (const variant of ['same host', 'host lost'] as const) {
    const model = await startReferenceModel({ port: 0, host: '0.0.0.0' });
    const stack = await startStack(`shards-resume-${variant === 'same host' ? 'same' : 'lost'}`, {}, []);
    const settings = settingsFrom(stack.env, os.homedir());
    const client = await connectClient(settings);
    try {
      const spec = createRunSpec(loadBenchmark(dir), {
        model: 'reference-acc60',
        endpoint: model.url,
        shardSize: 10,
        concurrency: CONCURRENCY,
        heartbeatTimeout: 5,
        hostTimeout: 6,
      });
      const started = performance.now();
      const handle = await submitRun(client, settings, spec);
      const jobIds = Array.from({ length: 4 }, (_, i) => `${spec.runId}.000-walk.s00${i}`);
      const rewardsOf = async () =>
        (
          await Promise.all(
            jobIds.map((id) =>
              client.workflow
                .getHandle(id)
                .query<RewardsPage, [number]>('rewards', 0)
                .then((page) => page.rewards.map((r) => String(r.instance)))
                .catch(() => [] as string[]),
            ),
          )
        ).flat();
      // Half-way: 20 of the 40 instances scored, their rewards with the jobs.
      for (;;) {
        if ((await rewardsOf()).length >= 20) break;
        await sleep(200);
      }
      const scoredBefore = await rewardsOf();
      const worker = stack.workers[0]!;
      worker.kill('SIGKILL');
      await new Promise((r) => worker.once('exit', r));
      if (variant === 'same host') {
        stack.workers[0] = await startWorkerProcess(stack.env, 'perf-shards-resume-same');
      } else {
        execFileSync('sh', ['-c', `docker ps -q --filter label=benchrouter.run=${spec.runId} | xargs -r docker rm -f`]);
        stack.workers.push(await startWorkerProcess(stack.env, 'perf-shards-resume-other'));
      }
      const result = await followRun(handle);
      const seconds = (performance.now() - started) / 1000;
      const asks = asksPerInstance(model);
      const twice = [...asks].filter(([, n]) => n > 1).map(([id]) => id);
      const scoredTwice = twice.filter((id) => scoredBefore.includes(id));
      const carried = result.jobs.reduce((sum, job) => sum + (job.shard?.carried ?? 0), 0);
      for (const job of result.jobs.filter((j) => j.status !== 'SUCCEEDED'))
        console.log(`  ${job.jobId}: ${job.status} ${job.reason ?? ''} ${job.message ?? ''}`);
      console.log(
        `resume, worker killed half-way (${variant}): ${result.status} in ${seconds.toFixed(1)} s; ${scoredBefore.length} instances scored before the kill; ` +
          `model calls ${[...asks.values()].reduce((a, b) => a + b, 0)} for ${asks.size} instances; asked twice: ${twice.length} (${twice.join(', ') || 'none'}), ` +
          `of them scored before the kill: ${scoredTwice.length} (target 0); carried over: ${carried}`,
      );
    } finally {
      await client.connection.close();
      await stack.stop();
      await model.close();
    }
  }
  rmSync(scratch, { recursive: true, force: true });
}

await main();
