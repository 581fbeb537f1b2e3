// Results at scale: repeated runs with seeds, comparison across models, the leaderboard, exports.
// Real dev server, worker, Docker and reference model.

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturesDir, startHarness, type Harness } from './support/harness.js';

const seeded = path.join(fixturesDir, 'benchmarks', 'seeded');

let h: Harness;
beforeAll(async () => {
  h = await startHarness('scale');
});
afterAll(async () => h?.close());

describe('--repeats', () => {
  it('runs each task N times with seeds in BENCHROUTER_SEED and reports exact means and stds', async () => {
    const run = await h.run(seeded, { concurrency: 1, options: { repeats: 3 } });
    expect(run.status).toBe('COMPLETED');
    expect(run.jobs).toHaveLength(6);
    const seeds = run.jobs.filter((j) => j.task === 'seed-score').map((j) => [j.repeat, j.seed, j.result!.raw_metrics.seed]);
    expect(seeds).toEqual([[0, 0, '0'], [1, 1, '1'], [2, 2, '2']]);

    const byTask = Object.fromEntries(run.tasks!.map((t) => [t.task, t]));
    expect(byTask['seed-score']).toEqual({ task: 'seed-score', scores: [0, 0.25, 0.5], repeats: 3, mean: 0.25, std: 0.25 });
    expect(byTask.constant).toEqual({ task: 'constant', scores: [1, 1, 1], repeats: 3, mean: 1, std: 0 });
    // Repeat means 0.5, 0.625, 0.75: mean 0.625, sample std 0.125.
    expect(run.overall).toBe(0.625);
    expect(run.overallStd).toBeCloseTo(0.125, 12);

    // Active time counts container time only: at concurrency 1, jobs waited for their slot in between.
    const active = run.jobs.reduce((sum, j) => sum + j.timings.containerSeconds, 0);
    const wall = (Date.parse(run.finishedAt) - Date.parse(run.startedAt)) / 1000;
    expect(active).toBeGreaterThan(0);
    expect(active).toBeLessThan(wall);
  });
});
