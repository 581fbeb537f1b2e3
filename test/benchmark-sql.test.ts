// The built-in sql benchmark: PostgreSQL from Debian's packages starts in the task's own daemon
// (DinD, preloaded, no pulls), and execution accuracy on the replay model's canned queries is known.

import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { builtinDir, replayAnswers } from './support/benchmark-image.js';
import { br, startHarness, type Harness } from './support/harness.js';
import type { RunResult } from '../runs/run-spec.js';
import { expectShardsAgree } from './support/shard-fidelity.js';

// On a new machine the first job builds the database image the benchmark declares (about 2.5 minutes),
// and each run loads its 704 MB archive into the task's own daemon (about a minute on 2 loaded cores).
const COLD_BUILD_MS = 10 * 60_000;

let h: Harness;
/** The file's first run, one job a task: what its runs in shards must score. */
let unsplit: RunResult;
let replay: ReplayModelServer;
beforeAll(async () => {
  // The task's own daemon reaches the model through the bridge, not the host's loopback.
  h = await startHarness('sql', { modelHost: '0.0.0.0' });
  replay = await startReplayModel({ answersFile: replayAnswers('sql-bookstore.jsonl'), host: '0.0.0.0' });
});
afterAll(async () => {
  await h?.close();
  await replay?.close();
});

describe('sql', () => {
  it('compares each canned query result set with the gold one in a real PostgreSQL: 6 of 8 right, rows in any order', { timeout: COLD_BUILD_MS }, async () => {
    // No step before the first run: the job builds the image benchmark.yaml declares (or finds it by its content hash).
    const run = await h.run(builtinDir('sql'), { endpoint: replay.url });
    const job = run.jobs[0]!;
    expect(job.status, job.message).toBe('SUCCEEDED');
    const preloaded = JSON.parse(
      execFileSync('docker', ['image', 'inspect', 'benchrouter/bench-postgres:15', '--format', '{{json .Config.Labels}}'], { encoding: 'utf8' }),
    );
    expect(preloaded).toMatchObject({ 'benchrouter.benchmark': 'sql', 'benchrouter.preload-image': 'benchrouter/bench-postgres:15' });
    expect(job.result).toEqual({ overall: 0.75, raw_metrics: { correct: 6, total: 8 } });
    expect(replay.counts.unknown).toBe(0);
    // One tagged call per question: the gateway's figures are on each record.
    const records = (await br(['records', run.runId, '--json'], h.env)).stdout.trim().split('\n');
    expect(records.map((line) => (JSON.parse(line) as { gateway?: { calls: number } }).gateway?.calls)).toEqual(Array(8).fill(1));
  });

  it('runs only the first N questions under --limit', { timeout: 5 * 60_000 }, async () => {
    const run = await h.run(builtinDir('sql'), { endpoint: replay.url, limit: 3 });
    unsplit = run;
    // bookstore-3 asks for names and gets names and cities: wrong.
    expect(run.jobs[0]!.result).toEqual({ overall: 2 / 3, raw_metrics: { correct: 2, total: 3 } });
  });

  it('split into shards of 1 and of 2 scores each task and instance as it does unsplit, to the last digit', { timeout: 10 * 60_000 }, async () => {
    await expectShardsAgree(h, builtinDir('sql'), { endpoint: replay.url, limit: 3 }, unsplit, [1, 2]);
  });
});
