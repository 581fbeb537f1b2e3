// `br export --format inspect` against a real run (arith on the reference model, through the gateway, so each
// instance's model call is in the transcript): inspect_ai's own read_eval_log reads the log back with one sample
// per record, the same ids, scores and token counts, and the model's messages; then `inspect view` serves the log
// to Debian's Chromium, which shows the task and its samples. Screenshots go to test-artifacts/export/.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../runs/run-spec.js';
import { benchmarkImage, builtinDir, dockerRun } from './support/benchmark-image.js';
import { launchChromium } from './support/chromium.js';
import { freePort } from '../embedded/embedded-services.js';
import { br, repoRoot, startHarness, type Harness } from './support/harness.js';

const shots = path.join(repoRoot, 'test-artifacts', 'export');
// The first export on a new machine builds the inspect image (about a minute idle, up to 15 on loaded cores).
const COLD_BUILD_MS = 30 * 60_000;
const LIMIT = 10;
const VIEWER = `br-test-inspect-view-${randomBytes(4).toString('hex')}`;

let h: Harness;
let run: RunResult;
let out: string;
let browser: Browser | undefined;
let viewer: ChildProcess | undefined;

interface Record_ {
  index: string;
  score: number;
  prompt_tokens: number;
  completion_tokens: number;
  prediction: string;
}

interface ReadBack {
  status: string;
  task: string;
  model: string;
  accuracy: number;
  samples: Array<{ id: string; score: number; input: string; roles: string[]; answer: string; tokens: [number, number] }>;
}

beforeAll(async () => {
  h = await startHarness('export');
  out = mkdtempSync(path.join(os.tmpdir(), 'br-export-logs-'));
  // A model right on about half of them, so the log holds passes and failures.
  run = await h.run(builtinDir('arith'), { model: 'reference-acc50', tasks: ['addition'], limit: LIMIT });
});
afterAll(async () => {
  // Killing `docker run` leaves its container running: it is removed by name.
  viewer?.kill('SIGKILL');
  spawnSync('docker', ['rm', '-f', VIEWER]);
  await browser?.close();
  await h?.close();
});

describe('br export --format inspect', () => {
  it(
    'writes an Inspect log that read_eval_log reads back as the run: one sample per record, same scores and usage, the model messages',
    { timeout: COLD_BUILD_MS },
    async () => {
      expect(run.status).toBe('COMPLETED');
      const exported = await br(['export', run.runId, '--format', 'inspect', '--out', out], h.env);
      expect(exported.code, exported.stderr).toBe(0);
      const logs = readdirSync(out);
      expect(logs).toEqual([`${run.runId}_addition.eval`]);
      expect(exported.stdout.trim()).toBe(path.join(out, logs[0]!));

      const records = (await br(['records', run.runId, '--json'], h.env)).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record_);
      expect(records).toHaveLength(LIMIT);

      // Read by Inspect itself, in the image that wrote it.
      const script = [
        'import json, sys',
        'from inspect_ai.log import read_eval_log',
        'log = read_eval_log(sys.argv[1])',
        'print(json.dumps({"status": log.status, "task": log.eval.task, "model": log.eval.model,',
        '  "accuracy": log.results.scores[0].metrics["accuracy"].value,',
        '  "samples": [{"id": str(s.id), "score": s.scores["benchrouter"].value, "input": s.input, "roles": [m.role for m in s.messages],',
        '    "answer": s.messages[-1].text, "tokens": [u.input_tokens for u in s.model_usage.values()] + [u.output_tokens for u in s.model_usage.values()]}',
        '   for s in log.samples]}))',
      ].join('\n');
      const read = JSON.parse(
        await dockerRun(benchmarkImage('inspect', 'inspect'), ['python3', '-c', script, `/logs/${logs[0]}`], { volumes: [`${out}:/logs:ro`] }),
      ) as ReadBack;
      expect(read).toMatchObject({ status: 'success', task: 'arith/addition', model: 'reference-acc50' });
      expect(new Set(read.samples.map((s) => s.score))).toEqual(new Set([0, 1]));
      expect(read.accuracy).toBe(run.overall);
      expect(read.samples.map((s) => [s.id, s.score, s.tokens])).toEqual(
        records.map((r) => [String(r.index), r.score, [r.prompt_tokens, r.completion_tokens]]),
      );
      // Each instance's call as the gateway recorded it: the question asked, and the model's answer last.
      const calls = (await br(['transcripts', run.runId, '--json'], h.env)).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { instance: string; response: { choices: Array<{ message: { content: string } }> } });
      expect(calls).toHaveLength(LIMIT);
      for (const sample of read.samples) {
        expect(sample.roles).toEqual(['system', 'user', 'assistant']);
        expect(sample.answer).toBe(calls.find((c) => c.instance === sample.id)!.response.choices[0]!.message.content);
        expect(sample.answer).toContain(records.find((r) => String(r.index) === sample.id)!.prediction);
      }
    },
  );

  it('opens in inspect view, served from the image, in Chromium: the task, then its samples', { timeout: 5 * 60_000 }, async () => {
    const port = await freePort();
    viewer = spawn('docker', [
      'run',
      '--rm',
      '--name',
      VIEWER,
      '--network',
      'host',
      '-v',
      `${out}:/logs:ro`,
      benchmarkImage('inspect', 'inspect'),
      'inspect',
      'view',
      '--log-dir',
      '/logs',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
    ]);
    const url = `http://127.0.0.1:${port}/`;
    const deadline = Date.now() + 120_000;
    while (
      Date.now() < deadline &&
      !(await fetch(url)
        .then((r) => r.ok)
        .catch(() => false))
    )
      await new Promise((r) => setTimeout(r, 500));
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    mkdirSync(shots, { recursive: true });
    await page.goto(url);
    await page.getByText('addition', { exact: false }).first().waitFor({ timeout: 60_000 });
    await page.screenshot({ path: path.join(shots, 'inspect-view-logs.png') });
    await page.getByText('addition', { exact: false }).first().click();
    // The sample list: each instance's input (the arith question) is shown.
    const records = (await br(['records', run.runId, '--json'], h.env)).stdout.trim().split('\n');
    const first = JSON.parse(records[0]!) as { origin_query: string };
    await page.getByText(first.origin_query.slice(0, 20), { exact: false }).first().waitFor({ timeout: 60_000 });
    await page.screenshot({ path: path.join(shots, 'inspect-view-samples.png') });
    expect(await page.getByText(first.origin_query.slice(0, 20), { exact: false }).count()).toBeGreaterThan(0);
  });
});
