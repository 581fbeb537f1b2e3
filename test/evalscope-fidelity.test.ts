// Fidelity of the EvalScope bridge, offline: a general_mcq and a general_qa dataset written here run through
// `br run` (worker, gateway, container, harvest) and through `evalscope eval` directly in the same image, both
// against the same replay model. The scores must be equal to the last digit and the records one for one.

import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobArtifactsDir } from '../runs/job-artifacts.js';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import type { RunResult } from '../runs/run-spec.js';
import { evalscopeDirect as runEvalscope } from './support/evalscope-direct.js';
import { startCaptureModel } from './support/capture-model.js';
import { br, repoRoot, startHarness, type Harness } from './support/harness.js';

const benchmarkDir = path.join(repoRoot, 'benchmarks', 'evalscope');
const IMAGE = 'benchrouter-test/evalscope-python:1.14.1';
const MODEL = 'replay';

const MCQ = [
  { question: 'What is 2 + 3?', A: '4', B: '5', C: '6', D: '7', answer: 'B' },
  { question: 'What is 10 - 4?', A: '6', B: '5', C: '14', D: '7', answer: 'A' },
  { question: 'What is 3 * 3?', A: '6', B: '8', C: '9', D: '12', answer: 'C' },
  { question: 'What is 12 / 4?', A: '2', B: '4', C: '6', D: '3', answer: 'D' },
  { question: 'Which is a prime?', A: '9', B: '15', C: '7', D: '21', answer: 'C' },
  { question: 'Which is even?', A: '3', B: '8', C: '5', D: '11', answer: 'B' },
  { question: 'What is 7 + 8?', A: '15', B: '14', C: '16', D: '13', answer: 'A' },
];
const QA = [
  { question: 'What is the capital of France?', answer: 'Paris' },
  { question: 'Which planet is the largest in the solar system?', answer: 'Jupiter' },
  { question: 'Who wrote Hamlet?', answer: 'William Shakespeare' },
  { question: 'What gas do plants absorb?', answer: 'carbon dioxide' },
  { question: 'What is frozen water called?', answer: 'ice' },
];

/** The replay answers: right for some samples, wrong or partly right for others, so scores are fractions. */
function answerFor(prompt: string): string {
  const mcq = MCQ.findIndex((q) => prompt.includes(`问题：${q.question}`));
  if (mcq >= 0) {
    const gold = MCQ[mcq]!.answer;
    return `答案：${mcq % 3 === 1 ? (gold === 'A' ? 'B' : 'A') : gold}`;
  }
  const qa = QA.findIndex((q) => prompt.includes(q.question));
  if (qa >= 0) return [QA[qa]!.answer, 'I think it is Mars', `It is ${QA[qa]!.answer} of course`, 'Shakespeare', 'water'][qa]!;
  throw new Error(`no answer for a prompt the test did not write: ${prompt.slice(0, 200)}`);
}

const textOf = (message: unknown) => String((message as { content?: unknown }).content ?? '');

/** `evalscope eval` straight from the image, as a team runs it, into a fresh work dir (async: the models answering it run in this process). */
async function evalscopeDirect(dataDir: string, workDir: string, endpoint: string): Promise<void> {
  const datasetArgs = { general_mcq: { local_path: '/data/general_mcq' }, general_qa: { local_path: '/data/general_qa', metric_list: ['Rouge'] } };
  await runEvalscope({ image: IMAGE, dataDir, workDir, endpoint, model: MODEL, datasetArgs, batchSize: 8 });
}

const readJsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

interface Report {
  primary_metric_identity: unknown;
  metrics: Array<{ identity: unknown; score: number }>;
}

/** The score EvalScope reports as the headline: the metric whose identity is primary_metric_identity. */
function headline(workDir: string, dataset: string): number {
  const report = JSON.parse(readFileSync(path.join(workDir, 'reports', MODEL, `${dataset}.json`), 'utf8')) as Report;
  const primary = report.metrics.filter((m) => JSON.stringify(m.identity) === JSON.stringify(report.primary_metric_identity));
  expect(primary).toHaveLength(1);
  return primary[0]!.score;
}

describe('EvalScope through BenchRouter, against the same replay model as EvalScope alone', () => {
  let h: Harness;
  let scratch: string;
  let dataDir: string;
  let directDir: string;
  let replay: ReplayModelServer;
  let run: RunResult;

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'br-evalscope-'));
    dataDir = path.join(scratch, 'datasets');
    mkdirSync(path.join(dataDir, 'general_mcq'), { recursive: true });
    mkdirSync(path.join(dataDir, 'general_qa'), { recursive: true });
    writeFileSync(path.join(dataDir, 'general_mcq', 'default_val.jsonl'), MCQ.map((q) => JSON.stringify(q)).join('\n') + '\n');
    writeFileSync(path.join(dataDir, 'general_qa', 'default_test.jsonl'), QA.map((q) => JSON.stringify(q)).join('\n') + '\n');
    execFileSync('docker', ['build', '--quiet', '--tag', IMAGE, path.join(benchmarkDir, 'environments', 'python')], {
      env: { ...process.env, DOCKER_BUILDKIT: '0' },
      stdio: 'pipe',
    });

    // EvalScope's prompt templates are its own: learn the exact requests once, then answer them by replay.
    const capture = await startCaptureModel('答案：A');
    const captureDir = path.join(scratch, 'capture');
    mkdirSync(captureDir, { mode: 0o777 });
    chmodSync(captureDir, 0o777);
    try {
      await evalscopeDirect(dataDir, captureDir, capture.url);
    } finally {
      await capture.close();
    }
    expect(capture.requests).toHaveLength(MCQ.length + QA.length);
    const answersFile = path.join(scratch, 'answers.jsonl');
    writeFileSync(
      answersFile,
      capture.requests.map((messages) => JSON.stringify({ messages, content: answerFor(messages.map(textOf).join('\n')) })).join('\n') + '\n',
    );
    replay = await startReplayModel({ answersFile });

    directDir = path.join(scratch, 'direct');
    mkdirSync(directDir);
    chmodSync(directDir, 0o777);
    await evalscopeDirect(dataDir, directDir, replay.url);

    h = await startHarness('evalscope', { env: { BENCHROUTER_DATASET_DIR: dataDir } });
    const cli = await br(['run', benchmarkDir, '--tasks', 'general_mcq,general_qa', '--model', MODEL, '--endpoint', replay.url, '--json'], h.env);
    expect(cli.stderr).not.toMatch(/error/i);
    run = JSON.parse(cli.stdout) as RunResult;
  }, 1_500_000);

  afterAll(async () => {
    await h?.close();
    await replay?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const job = (task: string) => run.jobs.find((j) => j.task === task)!;
  const resultsDir = (task: string) => path.join(jobArtifactsDir(h.settings.artifactsRoot, { runId: run.runId, jobId: job(task).jobId }), 'results');

  it('completes both tasks, and the replay model knew every request both ways', () => {
    expect(run.jobs.map((j) => [j.task, j.status])).toEqual(
      expect.arrayContaining([
        ['general_mcq', 'SUCCEEDED'],
        ['general_qa', 'SUCCEEDED'],
      ]),
    );
    expect(run.status).toBe('COMPLETED');
    expect(replay.counts.unknown).toBe(0);
    expect(replay.counts.answered).toBe(2 * (MCQ.length + QA.length));
  });

  for (const dataset of ['general_mcq', 'general_qa']) {
    it(`scores ${dataset} exactly as EvalScope alone does (a fraction strictly between 0 and 1)`, () => {
      const direct = headline(directDir, dataset);
      expect(direct).toBeGreaterThan(0);
      expect(direct).toBeLessThan(1);
      expect(job(dataset).result?.overall).toBe(direct);
      const result = JSON.parse(readFileSync(path.join(resultsDir(dataset), 'result.json'), 'utf8')) as { score: number; subsets: Record<string, number> };
      expect(result.score).toBe(direct);
      expect(result.subsets).toEqual({ default: direct });
    });

    it(`writes one ${dataset} record per EvalScope prediction, with its output, gold and score`, () => {
      const predictions = readJsonl(path.join(directDir, 'predictions', MODEL, `${dataset}_default.jsonl`));
      const reviews = new Map(readJsonl(path.join(directDir, 'reviews', MODEL, `${dataset}_default.jsonl`)).map((r) => [r.index, r]));
      const records = new Map(readJsonl(path.join(resultsDir(dataset), 'records.jsonl')).map((r) => [r.sample_index, r]));
      expect(records.size).toBe(predictions.length);
      for (const prediction of predictions) {
        const record = records.get(prediction.index)!;
        const review = reviews.get(prediction.index) as {
          target: string[];
          sample_score: { score: { value: Record<string, number>; main_score_name: string } };
        };
        const output = (prediction.model_output as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content;
        expect(record, `sample ${String(prediction.index)}`).toMatchObject({
          index: `default/${String(prediction.index)}`,
          raw_output: output,
          prediction: output,
          ground_truth: review.target,
        });
        expect(record.score).toBe(review.sample_score.score.value[review.sample_score.score.main_score_name]);
        expect(String(record.prompt)).toBe(textOf((prediction.messages as unknown[])[0]));
      }
    });
  }

  it("imports the EvalScope output folder as a run with EvalScope's own scores and the same records as the bridge", async () => {
    const imported = await br(['import', 'evalscope', directDir, '--json'], h.env);
    expect(imported.stderr).toContain('2 EvalScope results imported');
    expect(imported.code).toBe(0);
    const runs = JSON.parse(imported.stdout) as RunResult[];
    expect(runs.map((r) => [r.model, r.benchmark, r.status])).toEqual([[MODEL, 'evalscope', 'COMPLETED']]);
    const importedRun = runs[0]!;
    expect(Object.fromEntries(importedRun.jobs.map((j) => [j.task, j.result?.overall]))).toEqual({
      general_mcq: headline(directDir, 'general_mcq'),
      general_qa: headline(directDir, 'general_qa'),
    });
    for (const dataset of ['general_mcq', 'general_qa']) {
      const importedJob = importedRun.jobs.find((j) => j.task === dataset)!;
      const importedRecords = readJsonl(
        path.join(jobArtifactsDir(h.settings.artifactsRoot, { runId: importedRun.runId, jobId: importedJob.jobId }), 'results', 'records.jsonl'),
      );
      expect(importedRecords).toEqual(readJsonl(path.join(resultsDir(dataset), 'records.jsonl')));
    }
  });
});
