// N no-op tasks, timed through `br run` and as raw `docker run`: the two sides of an overhead figure,
// shared by perf/overhead and perf/cluster.

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pool, repoRoot, run } from './perf-support.js';

export const NOOP_COMMAND = `echo '{"overall": 1}' > "$BENCHROUTER_OUTPUT_DIR/result.json"`;

export function makeNoopBenchmark(dir: string, count: number): void {
  mkdirSync(path.join(dir, 'environments', 'noop'), { recursive: true });
  writeFileSync(path.join(dir, 'environments', 'noop', 'Dockerfile'), 'FROM benchrouter/base:bookworm\n');
  const names = Array.from({ length: count }, (_, i) => `noop-${String(i).padStart(3, '0')}`);
  writeFileSync(path.join(dir, 'benchmark.yaml'), `name: perf-noop\ntasks:\n${names.map((n) => `  - {name: ${n}, environment: noop}`).join('\n')}\n`);
  for (const name of names) {
    mkdirSync(path.join(dir, 'tasks', name), { recursive: true });
    writeFileSync(path.join(dir, 'tasks', name, 'task.yaml'), `name: ${name}\ncommand: |\n  ${NOOP_COMMAND}\ntimeout: 120\n`);
  }
}

/** Seconds for `br run` of every task of `dir`, through the Temporal that `env` names. */
export async function timeBrRun(env: Record<string, string>, dir: string, count: number, concurrency: number, tasks?: string): Promise<number> {
  return (await brRunNoop(env, dir, count, concurrency, tasks)).seconds;
}

/** A job as `br run --json` prints it: what a perf script reads of its timings. */
export interface NoopJob {
  runtime?: string;
  timings: { queuedAt: string; startedAt?: string; finishedAt: string; containerSeconds: number };
}

/** `br run` of every task of `dir` (or `tasks`): its wall seconds, run id and jobs; throws unless all `count` jobs ran and it COMPLETED. */
export async function brRunNoop(
  env: Record<string, string>,
  dir: string,
  count: number,
  concurrency: number,
  tasks?: string,
): Promise<{ seconds: number; runId: string; jobs: NoopJob[] }> {
  const started = performance.now();
  const result = await run(
    path.join(repoRoot, 'br'),
    [
      'run',
      dir,
      '--model',
      'noop',
      '--endpoint',
      'http://127.0.0.1:9/v1',
      // The no-op tasks call no model: nothing listens there.
      '--no-preflight',
      '--concurrency',
      String(concurrency),
      ...(tasks ? ['--tasks', tasks] : []),
      '--json',
    ],
    env,
  );
  const seconds = (performance.now() - started) / 1000;
  const parsed = JSON.parse(result.stdout || '{}') as { runId?: string; status?: string; jobs?: NoopJob[] };
  if (parsed.status !== 'COMPLETED' || parsed.jobs?.length !== count)
    throw new Error(`br run ended ${parsed.status} with ${parsed.jobs?.length} jobs: ${result.stderr}`);
  return { seconds, runId: parsed.runId!, jobs: parsed.jobs };
}

/**
 * `network`: `host` (no network namespace of its own: the cheapest container Docker starts), or the
 * name of a network, as BenchRouter's task network, which gives each container its own namespace.
 */
export async function timeRawDockerRuns(
  image: string,
  benchmarkDir: string,
  scratch: string,
  count: number,
  concurrency: number,
  network = 'host',
): Promise<number> {
  const started = performance.now();
  await pool(count, concurrency, async (i) => {
    const results = path.join(scratch, `raw-${i}`);
    mkdirSync(results, { recursive: true });
    const r = await run('docker', [
      'run',
      '--rm',
      '--network',
      network,
      '--memory',
      '2g',
      '--cpus',
      '1',
      '--pids-limit',
      '512',
      '--mount',
      `type=bind,source=${benchmarkDir},target=/app/benchmark,readonly`,
      '--mount',
      `type=bind,source=${results},target=/app/results`,
      '--env',
      'BENCHROUTER_OUTPUT_DIR=/app/results',
      '--entrypoint',
      '/bin/sh',
      image,
      '-c',
      NOOP_COMMAND,
    ]);
    if (r.code !== 0) throw new Error(`docker run failed: ${r.stderr}`);
  });
  return (performance.now() - started) / 1000;
}
