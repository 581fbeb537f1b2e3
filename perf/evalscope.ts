// perf/evalscope: EvalScope's general_mcq at N samples (default 1,000) with an eval batch size of 32 against
// the replay model, run by `evalscope eval` directly and through BenchRouter (`br run`: worker, gateway,
// container, harvest); prints both wall times and their ratio (target: <= 1.10).
//
//   npm run perf:evalscope -- [samples]

import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startReplayModel } from '../reference-model/replay-model-server.js';
import { startCaptureModel } from '../test/support/capture-model.js';
import { evalscopeDirect as runEvalscope } from '../test/support/evalscope-direct.js';
import { repoRoot, run, startStack } from './perf-support.js';

const SAMPLES = Number(process.argv[2] ?? 1000);
const BATCH = 32;
const IMAGE = 'benchrouter-perf/evalscope-python:1.14.1';
const LETTERS = ['A', 'B', 'C', 'D'];

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
  const replay = await startReplayModel({ answersFile });

  // The benchmark as shipped, with the eval batch size of this measurement.
  const benchmarkDir = path.join(scratch, 'evalscope');
  cpSync(path.join(repoRoot, 'benchmarks', 'evalscope'), benchmarkDir, { recursive: true });
  appendFileSync(path.join(benchmarkDir, 'tasks', 'general_mcq', 'task.yaml'), `extra_env:\n  EVALSCOPE_EVAL_BATCH_SIZE: ${BATCH}\n`);

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
    const direct = await evalscopeDirect(dataDir, path.join(scratch, 'direct'), replay.url);
    const started = performance.now();
    const through = await run(
      path.join(repoRoot, 'br'),
      ['run', benchmarkDir, '--tasks', 'general_mcq', '--model', 'replay', '--endpoint', replay.url, '--json'],
      stack.env,
    );
    const benchrouter = (performance.now() - started) / 1000;
    if (through.code !== 0) throw new Error(`br run failed: ${through.stderr}`);
    const overall = (JSON.parse(through.stdout) as { overall: number }).overall;
    console.log(`general_mcq, ${SAMPLES} samples, eval batch size ${BATCH}, replay model (score ${overall})`);
    console.log(`  evalscope eval directly : ${direct.toFixed(1)} s`);
    console.log(`  through br run          : ${benchrouter.toFixed(1)} s`);
    console.log(`  ratio                   : ${(benchrouter / direct).toFixed(3)} (target <= 1.10)`);
  } finally {
    await stack.stop();
    await replay.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
