// Fidelity of the built-in scienceworld benchmark: the reference agent playing the unmodified ScienceWorld
// simulator, run directly in the same image with no BenchRouter, scores 4 test episodes exactly as `br run`
// does, episode by episode, on the replay model's canned moves (two gold paths, a partial one, a failure).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { benchmarkImage, builtinDir, dockerRun, replayAnswers } from './support/benchmark-image.js';
import { br, startHarness, type Harness } from './support/harness.js';
import type { RunResult } from '../runs/run-spec.js';
import { expectShardsAgree } from './support/shard-fidelity.js';

// Written by test/support/scienceworld-answers.py from the simulator's gold action sequences.
const ANSWERS = replayAnswers('scienceworld-test.jsonl');
const EPISODES = ['lifespan-longest-lived/93', 'find-non-living-thing/225', 'chemistry-mix-paint-secondary-color/27', 'find-living-thing/225'];
// On a new machine the run builds the image first (about 2 minutes on 2 loaded cores); the simulator's JVM
// then starts once per episode, 5 to 35 s each with the first load, 8 times (4 episodes, direct and br run): the
// test took 11.5 minutes with the image built, on 2 cores shared with other test runs.
const COLD_BUILD_MS = 25 * 60_000;

interface EpisodeRecord {
  index: string;
  score: number;
  steps: number;
  prompt_tokens: number;
  completion_tokens: number;
  raw_output: { simulator_score: number; completed: boolean };
  gateway?: { calls: number };
}

let h: Harness;
/** The file's first run, one job a task: what its runs in shards must score. */
let unsplit: RunResult;
let replay: ReplayModelServer;
let scratch: string;
beforeAll(async () => {
  h = await startHarness('scienceworld');
  replay = await startReplayModel({ answersFile: ANSWERS });
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-scienceworld-'));
});
afterAll(async () => {
  await h?.close();
  await replay?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const episodeOf = (r: EpisodeRecord) => ({
  index: r.index,
  score: r.score,
  steps: r.steps,
  simulator: r.raw_output.simulator_score,
  completed: r.raw_output.completed,
});

describe('scienceworld', () => {
  it(
    'scores 4 test episodes through br run exactly as the reference agent does on the simulator directly: 2 solved, 1 at 40, 1 failed, 0.6',
    { timeout: COLD_BUILD_MS },
    async () => {
      const run = await h.run(builtinDir('scienceworld'), { endpoint: replay.url, instances: EPISODES });
      unsplit = run;
      const job = run.jobs[0]!;
      expect(job.status, job.message).toBe('SUCCEEDED');
      expect(job.result).toEqual({ overall: 0.6, raw_metrics: { score_by_task_type: 0.6, solved: 2, episodes: 4, steps: 17 } });
      const records = (await br(['records', run.runId, '--json'], h.env)).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as EpisodeRecord);
      // Gold paths end at 100 with the task completed; quitting keeps the 40 reached; a wrong focus is -100, scored 0.
      // In the episode list's order, whatever the order of --instances.
      expect(records.map(episodeOf)).toEqual([
        { index: 'chemistry-mix-paint-secondary-color/27', score: 0.4, steps: 5, simulator: 40, completed: false },
        { index: 'find-living-thing/225', score: 0, steps: 2, simulator: -100, completed: true },
        { index: 'find-non-living-thing/225', score: 1, steps: 7, simulator: 100, completed: true },
        { index: 'lifespan-longest-lived/93', score: 1, steps: 3, simulator: 100, completed: true },
      ]);
      // Every model call carried its episode's id: the gateway counted each episode's steps as its calls.
      expect(records.map((r) => r.gateway?.calls)).toEqual(records.map((r) => r.steps));
      expect(records.every((r) => r.prompt_tokens > 0 && r.completion_tokens > 0)).toBe(true);

      // Directly: the same agent and simulator in the same image, on the same canned moves, with no BenchRouter.
      await dockerRun(
        benchmarkImage('scienceworld', 'scienceworld'),
        ['python3', '/app/benchmark/agent.py', '--episodes', '/app/benchmark/tasks/test/episodes.txt'],
        {
          env: {
            BENCHROUTER_MODEL_ENDPOINT: `${replay.url}`,
            BENCHROUTER_MODEL_NAME: 'reference',
            BENCHROUTER_API_KEY: 'replay',
            BENCHROUTER_OUTPUT_DIR: '/app/results',
            BENCHROUTER_INSTANCES: EPISODES.join(','),
          },
          volumes: [`${builtinDir('scienceworld')}:/app/benchmark:ro`, `${scratch}:/app/results`],
        },
      );
      const direct = JSON.parse(readFileSync(path.join(scratch, 'result.json'), 'utf8')) as Record<string, unknown>;
      expect(direct.score).toBe(job.result?.overall);
      expect({ score_by_task_type: direct.score_by_task_type, solved: direct.solved, episodes: direct.episodes, steps: direct.steps }).toEqual(
        job.result?.raw_metrics,
      );
      const directRecords = readFileSync(path.join(scratch, 'records.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => episodeOf(JSON.parse(line) as EpisodeRecord));
      expect(directRecords).toEqual(records.map(episodeOf));
      expect(replay.counts).toEqual({ answered: 34, unknown: 0 });
    },
  );

  it('refuses at submit an instance id the task does not list, naming it, and starts nothing', async () => {
    await expect(h.run(builtinDir('scienceworld'), { endpoint: replay.url, instances: ['boil/0'] })).rejects.toThrow(
      `instances: the run's instances name an id no task lists: "boil/0"`,
    );
  });

  it('split into shards of 1 and of 3 scores each task and instance as it does unsplit, to the last digit', { timeout: 10 * 60_000 }, async () => {
    await expectShardsAgree(h, builtinDir('scienceworld'), { endpoint: replay.url, instances: EPISODES }, unsplit, [1, 3]);
  });
});
