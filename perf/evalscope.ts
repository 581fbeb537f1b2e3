// perf/evalscope: EvalScope's general_mcq at N samples (default 1,000) with an eval batch size of 32 against
// the replay model, run by `evalscope eval` directly and through BenchRouter (`br run`: worker, gateway,
// container, harvest); prints both wall times and their ratio (target: <= 1.10), where br run's time goes,
// and for comparison a third run through BenchRouter with --no-gateway (the container calls the model
// itself: what the gateway's proxying of every request costs).
//
//   npm run perf:evalscope -- [samples] [rounds]

import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startReplayModel } from '../reference-model/replay-model-server.js';
import { startCaptureModel } from '../test/support/capture-model.js';
import { evalscopeDirect as runEvalscope } from '../test/support/evalscope-direct.js';
import { repoRoot, run, startStack } from './perf-support.js';

const SAMPLES = Number(process.argv[2] ?? 1000);
/** Rounds of the three runs (default 1); with more, the medians are printed too. */
const ROUNDS = Number(process.argv[3] ?? 1);
const BATCH = 32;
const IMAGE = 'benchrouter-perf/evalscope-python:1.14.1';
const LETTERS = ['A', 'B', 'C', 'D'];

interface RunTimes {
  overall: number;
  startedAt: string;
  jobs: Array<{ timings: { queuedAt: string; startedAt: string; finishedAt: string; containerSeconds: number } }>;
}

async function evalscopeDirect(dataDir: string, workDir: string, endpoint: string): Promise<number> {
  mkdirSync(workDir, { recursive: true });
  chmodSync(workDir, 0o777);
  const started = performance.now();
  await runEvalscope({
    image: IMAGE,
    dataDir,
    workDir,
    endpoint,
    model: 'replay',
    datasetArgs: { general_mcq: { local_path: '/data/general_mcq' } },
    batchSize: BATCH,
  });
  return (performance.now() - started) / 1000;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function main(): Promise<void> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-perf-evalscope-'));
  const dataDir = path.join(scratch, 'datasets');
  mkdirSync(path.join(dataDir, 'general_mcq'), { recursive: true });
  const rows = Array.from({ length: SAMPLES }, (_, i) => ({
    question: `What is ${i} + ${i + 1}?`,
    A: String(2 * i + 1),
    B: String(2 * i),
    C: String(2 * i + 2),
    D: String(i),
    answer: 'A',
  }));
  writeFileSync(path.join(dataDir, 'general_mcq', 'default_val.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  execFileSync('docker', ['build', '--quiet', '--tag', IMAGE, path.join(repoRoot, 'benchmarks', 'evalscope', 'environments', 'python')], {
    env: { ...process.env, DOCKER_BUILDKIT: '0' },
  });

  // The prompts are EvalScope's own: learn them once, then answer them from a replay file (one in four wrong).
  const capture = await startCaptureModel('答案：A');
  await evalscopeDirect(dataDir, path.join(scratch, 'capture'), capture.url);
  await capture.close();
  const answersFile = path.join(scratch, 'answers.jsonl');
  capture.requests.forEach((messages, i) => appendFileSync(answersFile, `${JSON.stringify({ messages, content: `答案：${LETTERS[i % 4 === 3 ? 1 : 0]}` })}\n`));
  // On every address: with --no-gateway a container on the task network calls it at host.docker.internal.
  const replay = await startReplayModel({ answersFile, host: '0.0.0.0' });

  // The benchmark as shipped; the eval batch size is the run's --job-concurrency, as a team sets it.
  const benchmarkDir = path.join(repoRoot, 'benchmarks', 'evalscope');

  // The worker process reads its dataset directory from its environment, as on an evaluation machine.
  process.env.BENCHROUTER_DATASET_DIR = dataDir;
  const stack = await startStack('evalscope');
  try {
    // Warm: the environment image is built (cached layers) once before either measurement.
    const warm = await run(
      path.join(repoRoot, 'br'),
      ['run', benchmarkDir, '--tasks', 'general_mcq', '--limit', '4', '--model', 'replay', '--endpoint', replay.url, '--json'],
      stack.env,
    );
    if (warm.code !== 0) throw new Error(`warm-up run failed: ${warm.stderr}`);
    const brRun = async (extra: string[]) => {
      const startedAt = Date.now();
      const started = performance.now();
      const out = await run(
        path.join(repoRoot, 'br'),
        ['run', benchmarkDir, '--tasks', 'general_mcq', '--job-concurrency', String(BATCH), ...extra, '--model', 'replay', '--endpoint', replay.url, '--json'],
        stack.env,
      );
      const seconds = (performance.now() - started) / 1000;
      const endedAt = Date.now();
      if (out.code !== 0) throw new Error(`br run ${extra.join(' ')} failed: ${out.stderr}\n${out.stdout}`);
      return { seconds, startedAt, endedAt, result: JSON.parse(out.stdout) as RunTimes };
    };
    const at = (iso: string) => Date.parse(iso);
    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    const ratios: number[] = [];
    const directs: number[] = [];
    const throughs: number[] = [];
    // Each round runs the three back to back, so that a swing of a shared machine's load hits a round's
    // figures alike; the median of several rounds is the figure to quote under load.
    for (let round = 1; round <= ROUNDS; round++) {
      const direct = await evalscopeDirect(dataDir, path.join(scratch, `direct-${round}`), replay.url);
      const through = await brRun([]);
      const benchrouter = through.seconds;
      const result = through.result;
      const noGateway = await brRun(['--no-gateway']);
      const job = result.jobs[0]!.timings;
      ratios.push(benchrouter / direct);
      directs.push(direct);
      throughs.push(benchrouter);
      console.log(
        `general_mcq, ${SAMPLES} samples, eval batch size ${BATCH}, replay model (score ${result.overall})${ROUNDS > 1 ? `, round ${round} of ${ROUNDS}` : ''}`,
      );
      console.log(`  evalscope eval directly : ${direct.toFixed(2)} s`);
      console.log(`  through br run          : ${benchrouter.toFixed(2)} s`);
      console.log(`  ratio                   : ${(benchrouter / direct).toFixed(3)} (target <= 1.10)`);
      // Where br run's time goes, from the run's own timestamps (this host's clock throughout).
      console.log('  br run, by phase:');
      console.log(`    CLI start to run started      : ${s(at(result.startedAt) - through.startedAt)}`);
      console.log(`    run started to job queued     : ${s(at(job.queuedAt) - at(result.startedAt))}`);
      console.log(`    job queued to container start : ${s(at(job.startedAt) - at(job.queuedAt))}`);
      console.log(`    container running             : ${job.containerSeconds.toFixed(2)} s`);
      console.log(`    container end to job finished : ${s(at(job.finishedAt) - at(job.startedAt) - job.containerSeconds * 1000)}`);
      console.log(`    job finished to CLI exit      : ${s(through.endedAt - at(job.finishedAt))}`);
      const bare = noGateway.result.jobs[0]!.timings;
      console.log(
        `  br run --no-gateway     : ${noGateway.seconds.toFixed(2)} s, container running ${bare.containerSeconds.toFixed(2)} s (score ${noGateway.result.overall}; not the target's measure: the gateway meters every call)`,
      );
    }
    if (ROUNDS > 1) {
      console.log(
        `median of ${ROUNDS} rounds: directly ${median(directs).toFixed(2)} s, through br run ${median(throughs).toFixed(2)} s, ratio ${median(ratios).toFixed(3)} (target <= 1.10; each round's: ${ratios.map((r) => r.toFixed(3)).join(', ')})`,
      );
    }
  } finally {
    await stack.stop();
    await replay.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
