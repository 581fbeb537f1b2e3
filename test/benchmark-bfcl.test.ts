// Fidelity of the built-in bfcl benchmark: BFCL's own CLI (`bfcl generate` then `bfcl evaluate`), run
// directly in the same image against the replay model, scores exactly what `br run` reports.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { benchmarkImage, builtinDir, dockerRun, replayAnswers } from './support/benchmark-image.js';
import { startHarness, type Harness } from './support/harness.js';
import type { RunResult } from '../runs/run-spec.js';
import { expectShardsAgree } from './support/shard-fidelity.js';

// On a new machine the first run builds the image (about 7 minutes on 2 loaded cores).
const COLD_BUILD_MS = 20 * 60_000;

let h: Harness;
/** The file's first run, one job a task: what its runs in shards must score. */
let unsplit: RunResult;
let replay: ReplayModelServer;
let multiTurn: ReplayModelServer;
beforeAll(async () => {
  h = await startHarness('bfcl');
  replay = await startReplayModel({ answersFile: replayAnswers('bfcl-simple-python.jsonl') });
  multiTurn = await startReplayModel({ answersFile: replayAnswers('bfcl-multi-turn-base.jsonl') });
});
afterAll(async () => {
  await h?.close();
  await replay?.close();
  await multiTurn?.close();
});

/** BFCL run by hand as its README says, on its generic OpenAI-compatible FC entry, for the first N ids. */
async function bfclDirect(
  image: string,
  endpoint: string,
  category: string,
  limit: number,
): Promise<{ accuracy: number; correct_count: number; total_count: number }> {
  const ids = JSON.stringify({ [category]: Array.from({ length: limit }, (_, i) => `${category}_${i}`) });
  const script = [
    `mkdir -p /tmp/bfcl && echo '${ids}' > /tmp/bfcl/test_case_ids_to_generate.json`,
    `bfcl generate --model openbmb/MiniCPM-SALA-FC --test-category ${category} --run-ids --num-threads 1 >&2`,
    `bfcl evaluate --model openbmb/MiniCPM-SALA-FC --test-category ${category} --partial-eval >&2`,
    `head -n 1 /tmp/bfcl/score/*/*/BFCL_v4_${category}_score.json`,
  ].join(' && ');
  const stdout = await dockerRun(image, ['sh', '-c', script], { env: { BFCL_PROJECT_ROOT: '/tmp/bfcl', OPENAI_BASE_URL: endpoint, OPENAI_API_KEY: 'replay' } });
  return JSON.parse(stdout) as { accuracy: number; correct_count: number; total_count: number };
}

describe('bfcl', () => {
  it('scores simple_python under --limit 5 exactly as bfcl generate + evaluate run directly: 3/5', { timeout: COLD_BUILD_MS }, async () => {
    const run = await h.run(builtinDir('bfcl'), { endpoint: replay.url, tasks: ['simple-python'], limit: 5 });
    unsplit = run;
    const job = run.jobs[0]!;
    expect(job.status, job.message).toBe('SUCCEEDED');
    expect(job.result).toEqual({ overall: 0.6, raw_metrics: { correct: 3, total: 5 } });

    const direct = await bfclDirect(benchmarkImage('bfcl', 'bfcl'), replay.url, 'simple_python', 5);
    expect(direct).toEqual({ accuracy: 0.6, correct_count: 3, total_count: 5 });
    expect(job.result?.overall).toBe(direct.accuracy);
    expect(replay.counts.unknown).toBe(0);
  });

  it(
    'scores multi_turn_base under --limit 2 exactly as BFCL run directly: 1/2, judged by the end state of its simulated APIs',
    { timeout: 5 * 60_000 },
    async () => {
      const run = await h.run(builtinDir('bfcl'), { endpoint: multiTurn.url, tasks: ['multi-turn-base'], limit: 2 });
      const job = run.jobs[0]!;
      expect(job.status, job.message).toBe('SUCCEEDED');
      // multi_turn_base_1 leaves out the move of its second turn, so its file system ends up different.
      expect(job.result).toEqual({ overall: 0.5, raw_metrics: { correct: 1, total: 2 } });
      // BFCL counts a multi-turn entry's tokens per turn and step: each record sums them, so every line is kept.
      expect(job.records).toMatchObject({ count: 2, badLines: 0, meanScore: 0.5 });

      const direct = await bfclDirect(benchmarkImage('bfcl', 'bfcl'), multiTurn.url, 'multi_turn_base', 2);
      expect(direct).toEqual({ accuracy: 0.5, correct_count: 1, total_count: 2 });
      expect(multiTurn.counts.unknown).toBe(0);
    },
  );

  it('fails the job with the harness error when a request has no answer, instead of scoring it wrong', async () => {
    const run = await h.run(builtinDir('bfcl'), { endpoint: replay.url, tasks: ['simple-python'], limit: 6 });
    const job = run.jobs[0]!;
    expect(job.status).toBe('FAILED');
    expect(job.message).toContain('1 of 6 requests to the model failed, first: simple_python_5');
  });

  it(
    'split into shards of 1 (raised to its min_shard_size, 2, BFCL scoring no single entry) and of 3 scores as unsplit, to the last digit',
    { timeout: 10 * 60_000 },
    async () => {
      await expectShardsAgree(h, builtinDir('bfcl'), { endpoint: replay.url, tasks: ['simple-python'], limit: 5 }, unsplit, [1, 3]);
    },
  );
});
