// Fidelity of the built-in mathematics benchmark: the questions DeepMind's own generate_to_file writes
// with the same seed, scored by exact match on the replay model's canned answers, give exactly what `br run` reports.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { benchmarkImage, builtinDir, dockerRun, replayAnswers } from './support/benchmark-image.js';
import { startHarness, type Harness } from './support/harness.js';
import type { RunResult } from '../runs/run-spec.js';
import { expectShardsAgree } from './support/shard-fidelity.js';

const ANSWERS = replayAnswers('mathematics-interpolate.jsonl');
const INSTRUCTION = 'Answer this math question. Reply with the final answer only, with no words or working.\n\n';
// On a new machine the run builds the image first (about 1 minute on 2 loaded cores).
const COLD_BUILD_MS = 10 * 60_000;
// The upstream entry point itself, seeded as the bridge seeds it (after the imports, as there), restricted to the two modules the answers cover.
const GENERATE_TO_FILE = [
  'from absl import app',
  'from mathematics_dataset import generate_to_file',
  'import random, numpy',
  'random.seed(0)',
  'numpy.random.seed(0)',
  "app.run(generate_to_file.main, argv=['generate_to_file', '--output_dir=/work/out', '--train_split=False', '--per_train_module=0', '--filter=algebra__linear_1d'])",
].join('\n');

/**
 * The bridge's reading of a reply (bridge.py final_answer), written again here so that the direct score does not
 * come from the code under test: the last non-empty line, without "The answer is", "Answer:" or "<variable> =",
 * TeX's $ or \\boxed{}, or a closing period.
 */
function finalAnswer(reply: string): string {
  const last =
    reply
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .at(-1) ?? '';
  const answer = last
    .replace(/^(?:the\s+)?(?:final\s+)?answer(?:\s+is)?\s*:?\s*/i, '')
    .replace(/^[A-Za-z]\w*\s*=\s*/, '')
    .trim()
    .replace(/^\$+|\$+$/g, '')
    .trim();
  return (/^\\boxed\{(.*)\}$/.exec(answer)?.[1] ?? answer).replace(/\.+$/, '').trim();
}

let h: Harness;
/** The file's first run, one job a task: what its runs in shards must score. */
let unsplit: RunResult;
let replay: ReplayModelServer;
let scratch: string;
beforeAll(async () => {
  h = await startHarness('mathematics');
  replay = await startReplayModel({ answersFile: ANSWERS });
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-mathematics-'));
});
afterAll(async () => {
  await h?.close();
  await replay?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('mathematics', () => {
  it(
    'scores the canned answers of the first 20 questions exactly as the upstream generator and exact match of the final answer do: accuracy = 17/20 (two "The answer is N." read as N)',
    { timeout: COLD_BUILD_MS },
    async () => {
      const run = await h.run(builtinDir('mathematics'), { endpoint: replay.url, limit: 20 });
      unsplit = run;
      const job = run.jobs[0]!;
      expect(job.status, job.message).toBe('SUCCEEDED');
      expect(job.result).toEqual({ overall: 0.85, raw_metrics: { correct: 17, total: 20 } });

      // Directly: generate_to_file writes question and answer lines per module; each canned answer is looked up by its question.
      await dockerRun(benchmarkImage('mathematics', 'mathematics'), ['python3', '-c', GENERATE_TO_FILE], { volumes: [`${scratch}:/work`] });
      const canned = new Map(
        readFileSync(ANSWERS, 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { messages: { content: string }[]; content: string })
          .map((a) => [a.messages[0]!.content.slice(INSTRUCTION.length), a.content] as const),
      );
      const pairs = ['algebra__linear_1d', 'algebra__linear_1d_composed'].flatMap((module) => {
        const lines = readFileSync(path.join(scratch, 'out', 'interpolate', `${module}.txt`), 'utf8').split('\n');
        return Array.from({ length: 10 }, (_, i) => ({ question: lines[2 * i]!, answer: lines[2 * i + 1]! }));
      });
      expect(pairs.every((p) => canned.has(p.question))).toBe(true);
      const direct = pairs.filter((p) => finalAnswer(canned.get(p.question)!) === p.answer).length / pairs.length;
      expect(direct).toBe(0.85);
      expect(job.result?.overall).toBe(direct);
      expect(replay.counts.unknown).toBe(0);
    },
  );

  it('runs only the named questions under --instances', async () => {
    const run = await h.run(builtinDir('mathematics'), {
      endpoint: replay.url,
      instances: ['algebra__linear_1d/3', 'algebra__linear_1d_composed/0'],
    });
    const job = run.jobs[0]!;
    expect(job.status, job.message).toBe('SUCCEEDED');
    expect(job.result).toEqual({ overall: 0.5, raw_metrics: { correct: 1, total: 2 } });
  });

  it('refuses at submit an instance id the task does not list, naming it, and starts nothing', async () => {
    await expect(h.run(builtinDir('mathematics'), { endpoint: replay.url, instances: ['algebra__linear_1d/3', 'algebra__linear_1d/10'] })).rejects.toThrow(
      `instances: the run's instances name an id no task lists: "algebra__linear_1d/10"`,
    );
  });

  it('fails the job with the bridge error naming the request when the model cannot be reached', async () => {
    const run = await h.run(builtinDir('mathematics'), { endpoint: 'http://127.0.0.1:9/v1', preflight: false, limit: 1 });
    const job = run.jobs[0]!;
    expect(job.status).toBe('FAILED');
    expect(job.message).toMatch(/bridge\.py: POST \S+\/chat\/completions failed/);
  });

  it('split into shards of 1 and of 3 scores each task and instance as it does unsplit, to the last digit', { timeout: 5 * 60_000 }, async () => {
    await expectShardsAgree(h, builtinDir('mathematics'), { endpoint: replay.url, limit: 20 }, unsplit, [1, 3]);
  });
});
