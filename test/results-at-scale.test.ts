// Results at scale: repeated runs with seeds, comparison across models, the leaderboard, exports.
// Real dev server, worker, Docker and reference model.

import ExcelJS from 'exceljs';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedArithScore } from '../reference-model/expected-score.js';
import { br, fixturesDir, repoRoot, startHarness, type Harness } from './support/harness.js';

const seeded = path.join(fixturesDir, 'benchmarks', 'seeded');

let h: Harness;
let scratch: string;
beforeAll(async () => {
  h = await startHarness('scale');
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-scale-'));
});
afterAll(async () => {
  await h?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('--repeats', () => {
  it('runs each task N times with seeds in BENCHROUTER_SEED and reports exact means and stds', async () => {
    const run = await h.run(seeded, { concurrency: 1, repeats: 3 });
    expect(run.status).toBe('COMPLETED');
    expect(run.jobs).toHaveLength(6);
    const seeds = run.jobs.filter((j) => j.task === 'seed-score').map((j) => [j.repeat, j.seed, j.result!.raw_metrics.seed]);
    expect(seeds).toEqual([
      [0, 0, '0'],
      [1, 1, '1'],
      [2, 2, '2'],
    ]);

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

describe('br compare', () => {
  it('puts two reference-model variants side by side with exact cells', async () => {
    const arith = path.join(repoRoot, 'benchmarks', 'arith');
    const a = await h.run(arith, { model: 'reference-acc80' });
    const b = await h.run(arith, { model: 'reference-acc50' });
    const expectedA = expectedArithScore(arith, 'reference-acc80');
    const expectedB = expectedArithScore(arith, 'reference-acc50');

    const compared = await br(['compare', a.runId, b.runId, '--format', 'json'], h.env);
    expect(compared.code).toBe(0);
    // Two runs: the side-by-side table, and the paired one (its figures are tested in cli-program.test.ts).
    const tables = JSON.parse(compared.stdout) as { compare: unknown; paired: Array<{ task: string }> };
    expect(tables.paired.map((row) => row.task)).toEqual(['addition', 'multiplication', 'overall']);
    expect(tables.compare).toEqual([
      { benchmark: 'arith', 'reference-acc80': expectedA.overall, 'reference-acc50': expectedB.overall },
      { benchmark: 'arith/addition', 'reference-acc80': expectedA.perTask.addition, 'reference-acc50': expectedB.perTask.addition },
      { benchmark: 'arith/multiplication', 'reference-acc80': expectedA.perTask.multiplication, 'reference-acc50': expectedB.perTask.multiplication },
    ]);
    expect(expectedA.overall).toBe(0.8);

    // The same two runs, as the routing analysis reads them from their records: reference-acc50 is
    // right only where reference-acc80 is too (hash % 100 < 50 implies < 80), so no router can beat
    // the Best Single, which is the Oracle.
    const analyzed = await br(['analyze', '--runs', a.runId, b.runId, '--json'], h.env);
    expect(analyzed.code).toBe(0);
    const report = JSON.parse(analyzed.stdout);
    const method = (name: string) => report.methods.find((m: { name: string }) => m.name === name);
    expect(report.models.map((m: { model: string }) => m.model).sort()).toEqual(['reference-acc50', 'reference-acc80']);
    expect(method('Best Single')).toMatchObject({ model: 'reference-acc80' });
    expect(method('Oracle').acc).toBe(method('Best Single').acc);
    expect(analyzed.stderr).toContain(`run ${a.runId} (reference-acc80 on arith): 40 records`);
  });
});

describe('br leaderboard', () => {
  it('shows the latest finished result per model and benchmark (or the best), and marks a PARTIAL one', async () => {
    const steady = `lb-steady-${randomBytes(3).toString('hex')}`;
    const flaky = `lb-flaky-${randomBytes(3).toString('hex')}`;
    const seedScore = { tasks: ['seed-score'] };
    await h.run(seeded, { model: steady, ...seedScore, seed: 2 }); // 0.5
    await h.run(seeded, { model: steady, ...seedScore, seed: 1 }); // 0.25, later
    await h.run(path.join(fixturesDir, 'benchmarks', 'outcomes'), { model: flaky }); // PARTIAL, 0.5

    const rowsOf = async (pick: string) => {
      const board = await br(['leaderboard', '--pick', pick, '--format', 'json'], h.env);
      expect(board.code).toBe(0);
      return (JSON.parse(board.stdout) as Array<Record<string, unknown>>).filter((r) => r.model === steady || r.model === flaky);
    };
    // Each cell is a mean over one job without records: n=1, too few for an interval. These runs ran one
    // task of seeded, so their provenance (its images) may differ from the column's majority, which other
    // tests' runs on the shared server decide: a † may follow.
    const cell = (text: string) => expect.stringMatching(new RegExp(`^${text.replace(/[.()]/g, '\\$&')}( †)?$`));
    expect(await rowsOf('latest')).toEqual(
      [
        { model: flaky, outcomes: cell('0.5000 n=1 (PARTIAL)'), seeded: null, mean: 0.5 },
        { model: steady, outcomes: null, seeded: cell('0.2500 n=1'), mean: 0.25 },
      ].map((row) => expect.objectContaining(row)),
    );
    expect((await rowsOf('best')).find((r) => r.model === steady)).toMatchObject({ seeded: cell('0.5000 n=1'), mean: 0.5 });
  });
});

describe('exports', () => {
  it("br run --output writes a CSV that parses and an XLSX that reads back, with the issue's columns", async () => {
    const out = path.join(scratch, 'out');
    const ran = await br(['run', seeded, '--model', 'm', '--endpoint', h.model.url, '--repeats', '2', '--output', out, '--json'], h.env);
    expect(ran.code).toBe(0);
    const run = JSON.parse(ran.stdout);
    const csv = readFileSync(path.join(out, `${run.runId}-results.csv`), 'utf8')
      .trim()
      .split('\r\n')
      .map((line) => line.split(','));
    expect(csv[0]).toEqual([
      'benchmark',
      'score',
      'num samples',
      'active time (h)',
      'latency (s)',
      'TTFT (s)',
      'tok/s',
      'input tokens',
      'output tokens',
      'cost',
      'status',
    ]);
    expect(csv.at(-1)![0]).toBe('seeded');
    expect(csv.at(-1)!.at(-1)).toBe('COMPLETED');

    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(path.join(out, `${run.runId}.xlsx`));
    const sheet = workbook.worksheets[0]!;
    expect((sheet.getRow(1).values as unknown[]).slice(1)).toEqual(csv[0]);
    expect(sheet.rowCount).toBe(csv.length);
    const lastRow = sheet.getRow(sheet.rowCount).values as unknown[];
    expect(lastRow[1]).toBe('seeded');
  });

  it('br run --output DIR --folder-name NAME writes NAME.xlsx into DIR/NAME, with a notes sheet that says prompts were truncated', async () => {
    const out = path.join(scratch, 'out-named');
    const tokenizer = path.join(fixturesDir, 'tokenizer', 'tiny-bpe.json');
    const arith = path.join(repoRoot, 'benchmarks', 'arith');
    const args = ['--model', 'reference-acc80', '--endpoint', h.model.url, '--tasks', 'addition', '--truncation-tokens', '6', '--tokenizer', tokenizer];
    const ran = await br(['run', arith, ...args, '--output', out, '--folder-name', 'week-48', '--json'], h.env);
    expect(ran.code).toBe(0);
    const run = JSON.parse(ran.stdout);
    expect(run.usage.model.truncated).toBe(20);

    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(path.join(out, 'week-48', 'week-48.xlsx'));
    expect(workbook.worksheets.map((s) => s.name)).toEqual(['results', 'notes']);
    const notes = workbook.getWorksheet('notes')!;
    expect((notes.getRow(2).values as unknown[]).slice(1)).toEqual(['arith', run.runId, '20 prompts middle-truncated by the gateway (--truncation-tokens)']);
    expect(readFileSync(path.join(out, 'week-48', 'week-48-results.csv'), 'utf8').split('\r\n')[0]).toMatch(/^benchmark,score,/);

    // A folder name that is a path is refused before anything is submitted, naming the flag.
    const refused = await br(['run', arith, ...args, '--output', out, '--folder-name', '../elsewhere'], h.env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('--folder-name');
    expect(refused.stderr).toContain('is not a folder name');
  });
});

describe('per-instance records', () => {
  it('are validated line by line: two bad lines are reported with their line numbers, and the rest counted and summarized', async () => {
    const run = await h.run(path.join(fixturesDir, 'benchmarks', 'records-check'));
    const records = run.jobs[0]!.records!;
    expect(records).toMatchObject({
      count: 5,
      badLines: 2,
      meanScore: 0.6,
      promptTokens: { total: 51, missing: 0 },
      completionTokens: { total: 11, missing: 0 },
    });
    expect(records.cost.total).toBeCloseTo(0.008, 12);
    expect(records.badLineExamples).toEqual([
      expect.stringMatching(/^line 3: score: expected a number in \[0, 1\] or a boolean, got "high"/),
      expect.stringMatching(/^line 5: not valid JSON/),
    ]);

    const streamed = await br(['records', run.runId, '--json'], h.env);
    expect(streamed.code).toBe(0);
    expect(
      streamed.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).index),
    ).toEqual([0, 1, 3, 5, 6]);
    expect(streamed.stderr).toContain('line 5: not valid JSON');
    // The author hears of it where they look first, beside the score: how many lines, and the first reason.
    const shown = await br(['results', run.runId], h.env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(
      /^records: writes-records: records\.jsonl: 2 of 7 lines rejected; first: line 3: score: expected a number in \[0, 1\] or a boolean, got "high"$/m,
    );
    expect(shown.stdout).toContain(`records: \`br records ${run.runId}\` names every rejected line`);
    const listed = await br(['artifacts', run.runId, '--json'], h.env);
    expect(listed.stdout).toContain('records.jsonl');
    expect(listed.stdout).toContain('container.log');
  });

  it('br validate --run-once runs one task for real and fails naming the rejected lines; a good task passes', async () => {
    const bad = await br(['validate', path.join(fixturesDir, 'benchmarks', 'records-check'), '--run-once', '--limit', '2', '--json'], h.env);
    expect(bad.code, bad.stderr).toBe(2);
    const report = JSON.parse(bad.stdout) as { valid: boolean; runOnce: { job: { status: string }; findings: string[] } };
    expect(report.valid).toBe(false);
    expect(report.runOnce.job.status).toBe('SUCCEEDED');
    expect(report.runOnce.findings).toContain('records.jsonl: 5 read, 2 rejected');
    expect(report.runOnce.findings).toContain('  line 5: not valid JSON');

    const good = await br(['validate', 'arith', '--run-once', '--task', 'multiplication', '--endpoint', h.model.url, '--model', 'reference-acc80'], h.env);
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toContain('records.jsonl: 3 read, 0 rejected');
    expect(good.stdout).toContain('ok: the task ran as the contract asks');
  });

  it('of the arith demo: one per problem, whose mean score is the job score', async () => {
    const run = await h.run(path.join(repoRoot, 'benchmarks', 'arith'), { model: 'reference-acc80' });
    for (const job of run.jobs) expect(job.records).toMatchObject({ count: 20, badLines: 0, meanScore: job.result!.overall });
  });
});

describe('br run --suite', () => {
  it('runs a two-benchmark suite with repeats 3 under one parent, with exact means and stds in one table', async () => {
    const suitesFile = path.join(scratch, 'suites.yaml');
    writeFileSync(suitesFile, `suites:\n  pair:\n    benchmarks:\n      - {benchmark: ${seeded}, repeats: 3}\n      - {benchmark: arith, repeats: 3}\n`);
    const ran = await br(['run', '--suite', 'pair', '--suites', suitesFile, '--model', 'reference-acc80', '--endpoint', h.model.url, '--json'], h.env);
    expect(ran.stderr).not.toMatch(/br: /);
    expect(ran.code).toBe(0);
    const suite = JSON.parse(ran.stdout);
    expect(suite).toMatchObject({ suite: 'pair', model: 'reference-acc80', status: 'COMPLETED' });
    const [first, second] = suite.runs;
    expect(first).toMatchObject({ benchmark: 'seeded', overall: 0.625 });
    expect(first.overallStd).toBeCloseTo(0.125, 12);
    expect(first.jobs).toHaveLength(6);
    // The reference model is deterministic: the same score on every seed.
    expect(second.benchmark).toBe('arith');
    expect(second.overall).toBeCloseTo(0.8, 12);
    expect(second.overallStd).toBeCloseTo(0, 12);
    expect(second.jobs).toHaveLength(6);
    // pass@k from the records of all three repeats: a deterministic model passes the same problems
    // every time, so pass@1 = pass@2 = pass@3 = the task's accuracy.
    const arithTasks = Object.fromEntries(second.tasks.map((t: { task: string; passAtK: unknown }) => [t.task, t.passAtK]));
    for (const k of ['pass@1', 'pass@2', 'pass@3']) {
      expect(arithTasks.addition[k]).toBeCloseTo(0.85, 12);
      expect(arithTasks.multiplication[k]).toBeCloseTo(0.75, 12);
    }
    // seeded writes no records.jsonl: no pass@k where records do not allow it.
    expect(first.tasks.every((t: { passAtK?: unknown }) => t.passAtK === undefined)).toBe(true);

    const table = await br(['run', '--suite', 'pair', '--suites', suitesFile, '--exclude', 'arith', '--model', 'm', '--endpoint', h.model.url], h.env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/seeded\s+0\.6250 ± 0\.1250\s+6\/6\s+COMPLETED/);
    expect(table.stdout).not.toMatch(/^arith/m);
  });

  it('names the suite file and entry when a suite is unknown or an --only name is not in it', async () => {
    const unknown = await br(['run', '--suite', 'nope', '--model', 'm', '--endpoint', h.model.url], h.env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no suite "nope" (have demo, lite, full');
    const only = await br(['run', '--suite', 'lite', '--only', 'mmlu', '--model', 'm', '--endpoint', h.model.url], h.env);
    expect(only.code).toBe(2);
    expect(only.stderr).toContain('suites.yaml: suites.lite: no benchmark "mmlu" in this suite (it has evalscope');
  });
});
