// The built-in miniwob-mcp benchmark: the model acts on MiniWoB++ pages only through Playwright's MCP server
// and the score is MiniWoB's reward read from the page. Its agent driving the server directly in the same image
// (docker run, no BenchRouter) and through `br run` scores the replay model's canned tool calls identically.

import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { benchmarkImage, builtinDir, dockerRun, replayAnswers } from './support/benchmark-image.js';
import { br, startHarness, type Harness } from './support/harness.js';
import type { RunResult } from '../runs/run-spec.js';
import { expectShardsAgree } from './support/shard-fidelity.js';

// miniwob's fidelity episodes: solved in 1 call, a wrong button, solved in 2 calls, and a call of a tool the
// model is not offered (browser_evaluate, which could write the reward) before the right click.
const EPISODES = ['click-test/0', 'click-test-2/0', 'enter-text/0', 'focus-text/0'];
// On a new machine the first run builds the image (13 minutes on 2 heavily loaded cores; shared with miniwob).
const COLD_BUILD_MS = 30 * 60_000;

interface EpisodeRecord {
  index: string;
  score: number;
  steps: number;
  prediction: unknown[];
  gateway?: { calls: number };
}

let h: Harness;
/** The file's first run, one job a task: what its runs in shards must score. */
let unsplit: RunResult;
let replay: ReplayModelServer;
let scratch: string;
beforeAll(async () => {
  h = await startHarness('miniwob-mcp');
  replay = await startReplayModel({ answersFile: replayAnswers('miniwob-mcp.jsonl') });
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-miniwob-mcp-'));
  chmodSync(scratch, 0o777);
});
afterAll(async () => {
  await h?.close();
  await replay?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const episodeOf = (r: EpisodeRecord) => ({ index: r.index, score: r.score, steps: r.steps, prediction: r.prediction });

describe('miniwob-mcp', () => {
  it('shares miniwob episodes and image', () => {
    const episodes = (benchmark: string) => readFileSync(path.join(builtinDir(benchmark), 'tasks', 'miniwob', 'episodes.jsonl'), 'utf8');
    expect(episodes('miniwob-mcp')).toBe(episodes('miniwob'));
    // The same build context: the second image's build is all cache hits.
    expect(benchmarkImage('miniwob-mcp', 'browser').split(':')[1]).toBe(benchmarkImage('miniwob', 'browser').split(':')[1]);
  });

  it('scores the canned tool calls of 4 episodes from the page as its agent does directly: 3 of 4 solved', { timeout: COLD_BUILD_MS }, async () => {
    const run = await h.run(builtinDir('miniwob-mcp'), { endpoint: replay.url, instances: EPISODES });
    unsplit = run;
    const job = run.jobs[0]!;
    expect(job.status, job.message).toBe('SUCCEEDED');
    expect(job.result).toEqual({ overall: 0.75, raw_metrics: { solved: 3, total: 4 } });
    const harnessed = (await br(['records', run.runId, '--json'], h.env)).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as EpisodeRecord);
    // steps: the tool calls the server ran (the refused browser_evaluate is not one).
    expect(harnessed.map((r) => [r.index, r.score, r.steps, r.gateway?.calls])).toEqual([
      ['click-test/0', 1, 1, 1],
      ['click-test-2/0', 0, 1, 1],
      ['enter-text/0', 1, 2, 2],
      ['focus-text/0', 1, 1, 2],
    ]);

    const direct = await dockerRun(
      benchmarkImage('miniwob-mcp', 'browser'),
      ['sh', '-c', 'cd /app/benchmark/tasks/miniwob && node /app/benchmark/mcp_browser_agent.mjs --episodes episodes.jsonl'],
      {
        env: {
          BENCHROUTER_MODEL_ENDPOINT: replay.url,
          BENCHROUTER_MODEL_NAME: 'replay',
          BENCHROUTER_API_KEY: 'unused',
          BENCHROUTER_OUTPUT_DIR: '/app/results',
          BENCHROUTER_INSTANCES: EPISODES.join(','),
        },
        volumes: [`${builtinDir('miniwob-mcp')}:/app/benchmark:ro`, `${scratch}:/app/results`],
      },
    );
    expect(direct).toContain('mcp_browser_agent: success rate 0.75 (3/4)');
    const records = readFileSync(path.join(scratch, 'records.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as EpisodeRecord);
    expect(records.map(episodeOf)).toEqual(harnessed.map(episodeOf));
    // Both runs saw exactly the recorded tool results: every request hashed as when recorded.
    expect(replay.counts).toEqual({ answered: 12, unknown: 0 });
  });

  it('split into shards of 1 and of 3 scores each task and instance as it does unsplit, to the last digit', { timeout: 10 * 60_000 }, async () => {
    await expectShardsAgree(h, builtinDir('miniwob-mcp'), { endpoint: replay.url, instances: EPISODES }, unsplit, [1, 3]);
  });
});
