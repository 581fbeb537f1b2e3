// perf/overhead: what BenchRouter's orchestration costs over plain Docker. Runs N no-op tasks
// through `br run` at concurrency 8, then the same container N times with raw `docker run` at
// concurrency 8, in the same process, and prints both wall times and their ratio (target <= 1.15).
//
//   npm run perf:overhead -- [N]

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { imageTagFor } from '../activities/ensure-image.js';
import { directoryDigest } from '../contract/benchmark-digest.js';
import { cpuDelta, cpuSecondsByProcess, pool, repoRoot, run, startStack } from './perf-support.js';

const N = Number(process.argv[2] ?? 100);
const CONCURRENCY = 8;
const COMMAND = `echo '{"overall": 1}' > "$BENCHROUTER_OUTPUT_DIR/result.json"`;

function makeBenchmark(dir: string): void {
  mkdirSync(path.join(dir, 'environments', 'noop'), { recursive: true });
  writeFileSync(path.join(dir, 'environments', 'noop', 'Dockerfile'), 'FROM benchrouter/base:bookworm\n');
  const names = Array.from({ length: N }, (_, i) => `noop-${String(i).padStart(3, '0')}`);
  writeFileSync(path.join(dir, 'benchmark.yaml'), `name: perf-noop\ntasks:\n${names.map((n) => `  - {name: ${n}, environment: noop}`).join('\n')}\n`);
  for (const name of names) {
    mkdirSync(path.join(dir, 'tasks', name), { recursive: true });
    writeFileSync(path.join(dir, 'tasks', name, 'task.yaml'), `name: ${name}\ncommand: |\n  ${COMMAND}\ntimeout: 120\n`);
  }
}

async function timeBr(stack: Awaited<ReturnType<typeof startStack>>, dir: string): Promise<number> {
  const started = performance.now();
  const result = await run(path.join(repoRoot, 'br'), ['run', dir, '--model', 'noop', '--endpoint', 'http://127.0.0.1:9/v1', '--concurrency', String(CONCURRENCY), '--json'], stack.env);
  const seconds = (performance.now() - started) / 1000;
  const parsed = JSON.parse(result.stdout) as { status: string; jobs: unknown[] };
  if (parsed.status !== 'COMPLETED' || parsed.jobs.length !== N) throw new Error(`br run ended ${parsed.status} with ${parsed.jobs.length} jobs: ${result.stderr}`);
  return seconds;
}

async function timeRawDocker(image: string, benchmarkDir: string, scratch: string): Promise<number> {
  const started = performance.now();
  await pool(N, CONCURRENCY, async (i) => {
    const results = path.join(scratch, `raw-${i}`);
    mkdirSync(results, { recursive: true });
    const r = await run('docker', [
      'run', '--rm', '--network', 'host', '--memory', '2g', '--cpus', '1', '--pids-limit', '512',
      '--mount', `type=bind,source=${benchmarkDir},target=/app/benchmark,readonly`,
      '--mount', `type=bind,source=${results},target=/app/results`,
      '--env', 'BENCHROUTER_OUTPUT_DIR=/app/results', '--entrypoint', '/bin/sh', image, '-c', COMMAND,
    ]);
    if (r.code !== 0) throw new Error(`docker run failed: ${r.stderr}`);
  });
  return (performance.now() - started) / 1000;
}

async function main(): Promise<void> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-perf-overhead-'));
  const benchmarkDir = path.join(scratch, 'perf-noop');
  makeBenchmark(benchmarkDir);
  const stack = await startStack('overhead');
  try {
    // Warm-up: builds the image and primes the worker, so neither side pays a first-time cost.
    const warm = path.join(scratch, 'warm');
    makeBenchmark(warm);
    await run(path.join(repoRoot, 'br'), ['run', warm, '--model', 'noop', '--endpoint', 'http://127.0.0.1:9/v1', '--tasks', 'noop-000', '--json'], stack.env);
    const image = imageTagFor('perf-noop', 'noop', directoryDigest(path.join(benchmarkDir, 'environments', 'noop')));

    const processes = { dockerd: /^(\/usr\/sbin\/)?dockerd/, containerd: /containerd/, temporal: /temporal server/, worker: /cli\/bin\.ts worker/, 'br run': /cli\/bin\.ts run/ };
    const cpu0 = cpuSecondsByProcess(processes);
    const raw = await timeRawDocker(image, benchmarkDir, scratch);
    const cpu1 = cpuSecondsByProcess(processes);
    const br = await timeBr(stack, benchmarkDir);
    const cpu2 = cpuSecondsByProcess(processes);
    console.log(`tasks: ${N}, concurrency: ${CONCURRENCY}`);
    console.log(`raw docker run: ${raw.toFixed(2)} s (${((raw / N) * 1000).toFixed(0)} ms per task)`);
    console.log(`br run:         ${br.toFixed(2)} s (${((br / N) * 1000).toFixed(0)} ms per task)`);
    console.log(`ratio br/raw:   ${(br / raw).toFixed(3)} (target <= 1.15)`);
    console.log(`CPU during raw: ${cpuDelta(cpu0, cpu1)}`);
    console.log(`CPU during br:  ${cpuDelta(cpu1, cpu2)} (br run: exited, not counted)`);
  } finally {
    await stack.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
