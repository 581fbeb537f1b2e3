// Fidelity of the built-in tau2 benchmark: inspect_evals' tau2_airline run by `inspect eval` directly in the
// same image scores exactly what `br run` reports, sample by sample, on the replay model's canned conversations;
// and with --user-model the simulated customer's calls go to their own endpoint, metered apart from the agent's.
// `npm test` runs the first 2 samples (one solved, one not); `npm run test:slow` the first 3, and the --user-model run.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { SLOW_TESTS, benchmarkImage, builtinDir, replayAnswers } from './support/benchmark-image.js';
import { br, startHarness, type Harness } from './support/harness.js';
import { inspectDirect } from './support/inspect-direct.js';
import type { RunResult } from '../runs/run-spec.js';
import { expectShardsAgree } from './support/shard-fidelity.js';

const ANSWERS = replayAnswers('tau2-airline.jsonl');
// On a new machine the first run builds the image (about a minute on an idle 2-core machine, 15 to 19 minutes
// once on 2 loaded cores: Inspect and its dependencies from PyPI). With the image built the file took 116 s
// with 3 samples on an idle machine; at a load average of 15, about 12 minutes a run, most of it Inspect's
// start and upstream's scorer rebuilding the airline database per sample.
const COLD_BUILD_MS = 30 * 60_000;
const RUN_MS = 20 * 60_000;

// Samples 0 and 2 end with the database as the task expects (a look-up, then the $50 certificate the
// customer is owed); in sample 1 the agent cancels a reservation it must not: 2 of 3, or 1 of 2.
// A sample's messages are the customer's side: its instructions, the opening cue, its opening, the agent's reply, its stop.
const PER_SAMPLE = [
  { index: '0', score_value: 'C', messages: 5 },
  { index: '1', score_value: 'I', messages: 5 },
  { index: '2', score_value: 'C', messages: 5 },
].slice(0, SLOW_TESTS ? 3 : 2);
const LIMIT = PER_SAMPLE.length;
const SCORE = PER_SAMPLE.filter((s) => s.score_value === 'C').length / LIMIT;

let h: Harness;
/** The file's first run, one job a task: what its runs in shards must score. */
let unsplit: RunResult;
let replay: ReplayModelServer;
let customer: ReplayModelServer;

interface Tau2Record {
  index: string;
  score: number;
  score_value: string;
  messages: number;
  gateway?: { calls: number };
}

async function recordsOf(runId: string): Promise<Tau2Record[]> {
  const lines = (await br(['records', runId, '--json'], h.env)).stdout.trim().split('\n');
  return lines.map((line) => JSON.parse(line) as Tau2Record);
}

describe('tau2', () => {
  beforeAll(async () => {
    h = await startHarness('tau2');
    replay = await startReplayModel({ answersFile: ANSWERS });
    customer = await startReplayModel({ answersFile: ANSWERS });
  });
  afterAll(async () => {
    await h?.close();
    await replay?.close();
    await customer?.close();
  });

  it(
    `scores the first ${LIMIT} airline samples exactly as inspect eval run directly: ${SCORE * LIMIT}/${LIMIT}, sample by sample`,
    { timeout: COLD_BUILD_MS },
    async () => {
      const before = replay.counts.answered;
      const run = await h.run(builtinDir('inspect'), { endpoint: replay.url, tasks: ['tau2_airline'], limit: LIMIT });
      unsplit = run;
      const job = run.jobs[0]!;
      expect(job.status, job.message).toBe('SUCCEEDED');
      expect(job.result).toEqual({ overall: SCORE, raw_metrics: { stderr: expect.any(Number) as number, samples: LIMIT } });
      // Each sample: the customer's opening, the agent's tool call and its reply, the customer's ###STOP###.
      expect(replay.counts).toEqual({ answered: before + 4 * LIMIT, unknown: 0 });

      const direct = await inspectDirect(
        benchmarkImage('inspect', 'inspect'),
        'inspect_evals/tau2_airline',
        ['-T', 'shuffle=false', '--limit', String(LIMIT)],
        replay.url,
      );
      expect(direct.scores.airline_scorer!.accuracy).toBe(SCORE);
      expect(job.result!.overall).toBe(direct.scores.airline_scorer!.accuracy);
      expect(job.result!.raw_metrics.stderr).toBe(direct.scores.airline_scorer!.stderr);
      expect(replay.counts.unknown).toBe(0);

      const records = await recordsOf(run.runId);
      expect(records.map(({ index, score_value, messages }) => ({ index, score_value, messages }))).toEqual(PER_SAMPLE);
      expect(direct.samples).toEqual(PER_SAMPLE.map(({ index, score_value, messages }) => ({ id: index, value: score_value, messages })));
      expect(records.map((r) => r.score)).toEqual(PER_SAMPLE.map((s) => (s.score_value === 'C' ? 1 : 0)));
      // The bridge's Inspect hook tagged every call with its sample: 2 customer and 2 agent calls each.
      expect(records.map((r) => r.gateway?.calls)).toEqual(PER_SAMPLE.map(() => 4));
    },
  );

  // In `npm run test:slow` only: `npm test` keeps the fidelity run, and the suite within CI's 20 minutes.
  it.runIf(SLOW_TESTS)('sends the simulated customer to --user-model, metered apart from the agent, with the same scores', { timeout: RUN_MS }, async () => {
    const before = { agent: replay.counts.answered, customer: customer.counts.answered };
    const run = await h.run(builtinDir('inspect'), {
      endpoint: replay.url,
      tasks: ['tau2_airline'],
      limit: LIMIT,
      userModel: 'simulated-customer',
      userEndpoint: customer.url,
    });
    const job = run.jobs[0]!;
    expect(job.status, job.message).toBe('SUCCEEDED');
    expect(job.result!.overall).toBe(SCORE);
    expect(replay.counts).toEqual({ answered: before.agent + 2 * LIMIT, unknown: 0 });
    expect(customer.counts).toEqual({ answered: before.customer + 2 * LIMIT, unknown: 0 });
    expect(run.usage!.model.requests).toBe(2 * LIMIT);
    expect(run.usage!.user!.requests).toBe(2 * LIMIT);
    expect(run.provenance!.user).toEqual({ model: 'simulated-customer' });

    const records = await recordsOf(run.runId);
    expect(records.map(({ index, score_value, messages }) => ({ index, score_value, messages }))).toEqual(PER_SAMPLE);
    // Only the agent's calls are the model's, per sample.
    expect(records.map((r) => r.gateway?.calls)).toEqual(PER_SAMPLE.map(() => 2));
  });

  it('split into shards of 1 (and of 2 with 3 samples) scores each task and instance as it does unsplit, to the last digit', { timeout: RUN_MS }, async () => {
    await expectShardsAgree(h, builtinDir('inspect'), { endpoint: replay.url, tasks: ['tau2_airline'], limit: LIMIT }, unsplit, LIMIT > 2 ? [1, 2] : [1]);
  });
});
