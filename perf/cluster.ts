// perf/cluster: the overhead benchmark against the production cluster (built by scripts/cluster.sh:
// PostgreSQL, mTLS) and against the embedded dev server, in the same run: N no-op tasks at
// concurrency 8 through `br run` on each, and raw `docker run` as the baseline of both ratios.
//
//   node --import tsx perf/cluster.ts [N]

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { imageTagFor } from '../activities/ensure-image.js';
import { directoryDigest } from '../contract/benchmark-digest.js';
import { throwawayCluster } from '../test/support/cluster-env.js';
import { repoRoot, startStack, startWorkerProcess, stopProcess } from './perf-support.js';
import { makeNoopBenchmark, timeBrRun, timeRawDockerRuns } from './noop-tasks.js';

const N = Number(process.argv[2] ?? 100);
const CONCURRENCY = 8;

async function main(): Promise<void> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-perf-cluster-'));
  const benchmarkDir = path.join(scratch, 'perf-noop');
  makeNoopBenchmark(benchmarkDir, N);
  const tlsDir = path.join(scratch, 'tls');
  const { clusterEnv, submitterEnv } = await throwawayCluster('brperf', tlsDir, 'perf-cluster', CONCURRENCY);
  const cluster = (args: string[]) =>
    execFileSync(path.join(repoRoot, 'scripts', 'cluster.sh'), args, { env: { ...process.env, ...clusterEnv }, stdio: ['ignore', 'ignore', 'inherit'] });
  const embedded = await startStack('cluster-embedded');
  cluster(['up']);
  try {
    execFileSync(path.join(repoRoot, 'cluster', 'make-certs.sh'), [tlsDir, 'client', 'submitter']);
    const clusterBr = { ...submitterEnv(path.join(scratch, 'cluster-home')), BENCHROUTER_HOST_ID: 'perf-cluster' };
    const worker = await startWorkerProcess(clusterBr, 'perf-cluster');
    try {
      // Warm-up on both: the image is built and each worker primed before anything is timed.
      await timeBrRun(embedded.env, benchmarkDir, 1, 1, 'noop-000');
      await timeBrRun(clusterBr, benchmarkDir, 1, 1, 'noop-000');
      const image = imageTagFor('perf-noop', 'noop', directoryDigest(path.join(benchmarkDir, 'environments', 'noop')));

      const raw = await timeRawDockerRuns(image, benchmarkDir, scratch, N, CONCURRENCY);
      const onEmbedded = await timeBrRun(embedded.env, benchmarkDir, N, CONCURRENCY);
      const onCluster = await timeBrRun(clusterBr, benchmarkDir, N, CONCURRENCY);
      console.log(`tasks: ${N}, concurrency: ${CONCURRENCY}`);
      console.log(`raw docker run:           ${raw.toFixed(2)} s (${((raw / N) * 1000).toFixed(0)} ms per task)`);
      console.log(`br run, embedded server:  ${onEmbedded.toFixed(2)} s, ratio ${(onEmbedded / raw).toFixed(3)}`);
      console.log(`br run, cluster (mTLS):   ${onCluster.toFixed(2)} s, ratio ${(onCluster / raw).toFixed(3)}`);
    } finally {
      await stopProcess(worker);
    }
  } finally {
    await embedded.stop();
    cluster(['down', '--volumes']);
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
