// The built-in mcp benchmark: the model works through the official MCP filesystem server, and the
// verifier checks the workspace's end state. The replay model's plan reaches 4 of 5 end states.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { builtinDir, replayAnswers } from './support/benchmark-image.js';
import { br, startHarness, type Harness } from './support/harness.js';
import type { RunResult } from '../runs/run-spec.js';
import { expectShardsAgree } from './support/shard-fidelity.js';

// On a new machine the first run builds the image (about 2.5 minutes on 2 loaded cores).
const COLD_BUILD_MS = 10 * 60_000;

let h: Harness;
/** The file's first run, one job a task: what its runs in shards must score. */
let unsplit: RunResult;
let replay: ReplayModelServer;
beforeAll(async () => {
  h = await startHarness('mcp');
  replay = await startReplayModel({ answersFile: replayAnswers('mcp-filesystem.jsonl') });
});
afterAll(async () => {
  await h?.close();
  await replay?.close();
});

describe('mcp', () => {
  it('scores the end state the canned tool calls leave: 4 of 5, the edit that drops a final newline fails its check', { timeout: COLD_BUILD_MS }, async () => {
    const run = await h.run(builtinDir('mcp'), { endpoint: replay.url });
    unsplit = run;
    const job = run.jobs[0]!;
    expect(job.status, job.message).toBe('SUCCEEDED');
    expect(job.result).toEqual({ overall: 0.8, raw_metrics: { passed: 4, total: 5 } });
    // Every step of every instance was answered: the server's tool results hashed as when recorded.
    expect(replay.counts).toEqual({ answered: 14, unknown: 0 });
    // The agent tags each step's call with its instance: the gateway's 14 calls, instance by instance.
    const records = (await br(['records', run.runId, '--json'], h.env)).stdout.trim().split('\n');
    const calls = records.map((line) => JSON.parse(line) as { index: string; gateway?: { calls: number } });
    expect(calls.every((r) => r.gateway!.calls >= 1)).toBe(true);
    expect(calls.reduce((sum, r) => sum + r.gateway!.calls, 0)).toBe(14);
    // Its transcript: the instance's calls in order, each tool call the model made.
    const first = calls.find((r) => r.gateway!.calls > 1)!;
    const shown = await br(['transcripts', run.runId, '--instance', first.index], h.env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`${first.gateway!.calls} calls of instance ${first.index}`);
    expect(shown.stdout.match(/^#\d+ {2}instance /gm)).toHaveLength(first.gateway!.calls);
    expect(shown.stdout).toMatch(/ {2}assistant → \w+\(/);
  });

  it('runs only the named instances under --instances', async () => {
    const run = await h.run(builtinDir('mcp'), { endpoint: replay.url, instances: ['fs-3', 'fs-5'] });
    expect(run.jobs[0]!.result).toEqual({ overall: 0.5, raw_metrics: { passed: 1, total: 2 } });
  });

  it('split into shards of 1 and of 2 scores each task and instance as it does unsplit, to the last digit', { timeout: 5 * 60_000 }, async () => {
    await expectShardsAgree(h, builtinDir('mcp'), { endpoint: replay.url }, unsplit, [1, 2]);
  });
});
