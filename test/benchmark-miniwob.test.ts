// Fidelity of the built-in miniwob benchmark: the reference agent driving BrowserGym's MiniWoB++ environment
// directly in the same image (docker run, no BenchRouter) and through `br run` scores the replay model's
// canned actions identically, episode by episode.

import { mkdtempSync, readFileSync, rmSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { benchmarkImage, builtinDir, dockerRun, replayAnswers } from './support/benchmark-image.js';
import { br, startHarness, type Harness } from './support/harness.js';
import type { RunResult } from '../runs/run-spec.js';
import { expectShardsAgree } from './support/shard-fidelity.js';

// Solved in 1 step, a wrong button (MiniWoB ends the episode unsolved), solved in 2 steps, and a reply with no
// action that BrowserGym reports as an error, followed by a right one.
const EPISODES = ['click-test/0', 'click-test-2/0', 'enter-text/0', 'focus-text/0'];
// On a new machine the first run builds the image (13 minutes on 2 heavily loaded cores).
const COLD_BUILD_MS = 25 * 60_000;

interface EpisodeRecord {
  index: string;
  score: number;
  steps: number;
  prediction: string[];
  gateway?: { calls: number };
}

let h: Harness;
/** The file's first run, one job a task: what its runs in shards must score. */
let unsplit: RunResult;
let replay: ReplayModelServer;
let scratch: string;
beforeAll(async () => {
  h = await startHarness('miniwob');
  replay = await startReplayModel({ answersFile: replayAnswers('miniwob.jsonl') });
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-miniwob-'));
  chmodSync(scratch, 0o777);
});
afterAll(async () => {
  await h?.close();
  await replay?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const episodeOf = (r: EpisodeRecord) => ({ index: r.index, score: r.score, steps: r.steps, prediction: r.prediction });

describe('miniwob', () => {
  it('scores the canned actions of 4 episodes as BrowserGym does when the agent drives it directly: 3 of 4 solved', { timeout: COLD_BUILD_MS }, async () => {
    const run = await h.run(builtinDir('miniwob'), { endpoint: replay.url, instances: EPISODES });
    unsplit = run;
    const job = run.jobs[0]!;
    expect(job.status, job.message).toBe('SUCCEEDED');
    expect(job.result).toEqual({ overall: 0.75, raw_metrics: { solved: 3, total: 4 } });
    const harnessed = (await br(['records', run.runId, '--json'], h.env)).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as EpisodeRecord);
    expect(harnessed.map((r) => [r.index, r.score, r.steps])).toEqual([
      ['click-test/0', 1, 1],
      ['click-test-2/0', 0, 1],
      ['enter-text/0', 1, 2],
      ['focus-text/0', 1, 2],
    ]);
    // Each step's call is tagged with its episode: the gateway counts as many calls as the episode took steps.
    expect(harnessed.map((r) => r.gateway?.calls)).toEqual(harnessed.map((r) => r.steps));

    // Directly: the same agent on the same episodes in the same image, talking to the replay model itself.
    const direct = await dockerRun(
      benchmarkImage('miniwob', 'browser'),
      ['sh', '-c', 'cd /app/benchmark/tasks/miniwob && python3 /app/benchmark/agent.py --episodes episodes.jsonl'],
      {
        env: {
          BENCHROUTER_MODEL_ENDPOINT: replay.url,
          BENCHROUTER_MODEL_NAME: 'replay',
          BENCHROUTER_API_KEY: 'unused',
          BENCHROUTER_OUTPUT_DIR: '/app/results',
          BENCHROUTER_INSTANCES: EPISODES.join(','),
        },
        volumes: [`${builtinDir('miniwob')}:/app/benchmark:ro`, `${scratch}:/app/results`],
      },
    );
    expect(direct).toContain('agent: success rate 0.75 (3/4)');
    const result = JSON.parse(readFileSync(path.join(scratch, 'result.json'), 'utf8')) as { success_rate: number };
    expect(result.success_rate).toBe(job.result!.overall);
    const records = readFileSync(path.join(scratch, 'records.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as EpisodeRecord);
    expect(records.map(episodeOf)).toEqual(harnessed.map(episodeOf));
    // Both runs asked exactly the canned questions: every observation hashed as when recorded.
    expect(replay.counts).toEqual({ answered: 12, unknown: 0 });
  });

  it('refuses at submit an instance id the task does not list, naming it, and starts nothing', async () => {
    await expect(h.run(builtinDir('miniwob'), { endpoint: replay.url, instances: ['click-test/99'] })).rejects.toThrow(
      `instances: the run's instances name an id no task lists: "click-test/99"`,
    );
  });

  it('split into shards of 1 and of 3 scores each task and instance as it does unsplit, to the last digit', { timeout: 10 * 60_000 }, async () => {
    await expectShardsAgree(h, builtinDir('miniwob'), { endpoint: replay.url, instances: EPISODES }, unsplit, [1, 3]);
  });
});
