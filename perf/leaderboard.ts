// perf/leaderboard: `br leaderboard` over N completed runs in the dev server (default 500): time to
// build the table, as a user waits for it (the whole `br` process) and inside it (list + arrange).
// Runs are made cheaply but for real: each is a RunWorkflow whose jobs were all carried over from an
// earlier run (a retry with nothing left to run), so it completes at once with a real result.
//
//   npm run perf:leaderboard -- [N]

import { setTimeout as sleep } from 'node:timers/promises';
import { connectClient, createRunSpec, submitRun } from '../client/runs.js';
import { finishedRuns } from '../client/leaderboard.js';
import { buildLeaderboard, leaderboardView } from '../runs/leaderboard.js';
import type { JobResult } from '../runs/run-spec.js';
import { settingsFrom } from '../config/settings.js';
import { pool, repoRoot, run, startStack } from './perf-support.js';
import path from 'node:path';
import { loadBenchmark } from '../contract/load-benchmark.js';

const N = Number(process.argv[2] ?? 500);
const MODELS = 25;
const BENCHMARKS = ['arith', 'outcomes', 'sleepers', 'seeded'];

async function main(): Promise<void> {
  const stack = await startStack('leaderboard');
  const settings = settingsFrom(stack.env, '/root');
  const client = await connectClient(settings);
  const fixtures = path.join(repoRoot, 'test', 'fixtures', 'benchmarks');
  const benchmarks = Object.fromEntries(
    BENCHMARKS.map((name) => [name, loadBenchmark(name === 'arith' ? path.join(repoRoot, 'benchmarks', 'arith') : path.join(fixtures, name))]),
  );
  try {
    const madeStart = performance.now();
    await pool(N, 32, async (i) => {
      const benchmark = benchmarks[BENCHMARKS[i % BENCHMARKS.length]!]!;
      const spec = createRunSpec(benchmark, { model: `model-${i % MODELS}`, endpoint: 'http://127.0.0.1:9/v1', preflight: false, tasks: [] });
      const carried: JobResult[] = benchmark.tasks.map((task, t) => ({
        jobId: `${spec.runId}.${t}`,
        task: task.name,
        status: 'SUCCEEDED',
        result: { overall: ((i * 7 + t * 3) % 100) / 100, raw_metrics: {} },
        timings: { queuedAt: spec.submittedAt, finishedAt: spec.submittedAt, containerSeconds: 1 },
      }));
      const handle = await submitRun(client, settings, { ...spec, tasks: [], retryOf: { runId: 'perf-seed', carried } });
      await handle.result();
    });
    const madeSeconds = (performance.now() - madeStart) / 1000;
    // Visibility is eventually consistent: wait until every run is listed as finished.
    while ((await finishedRuns(client)).length < N) await sleep(200);

    const inside = performance.now();
    const board = buildLeaderboard(await finishedRuns(client));
    const view = leaderboardView(board);
    const insideSeconds = (performance.now() - inside) / 1000;

    const cli = performance.now();
    const result = await run(path.join(repoRoot, 'br'), ['leaderboard', '--format', 'json'], stack.env);
    const cliSeconds = (performance.now() - cli) / 1000;
    const rows = JSON.parse(result.stdout) as unknown[];

    console.log(`${N} completed runs (${MODELS} models x ${BENCHMARKS.length} benchmarks), made in ${madeSeconds.toFixed(1)} s`);
    console.log(`leaderboard: ${view.rows.length} models x ${board.benchmarks.length} benchmarks (br printed ${rows.length} rows)`);
    console.log(`list + arrange in-process: ${insideSeconds.toFixed(3)} s`);
    console.log(`\`br leaderboard\` end to end (process start included): ${cliSeconds.toFixed(3)} s (target <= 3 s)`);
  } finally {
    await client.connection.close();
    await stack.stop();
  }
}

await main();
