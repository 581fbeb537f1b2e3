// The `br` program imported, not spawned: commands built from their modules with a test's own
// settings and sinks, the same output flags on every read command, and `br compare --json` against
// real runs (real dev server, worker, Docker and reference model).

import { CommanderError } from 'commander';
import ExcelJS from 'exceljs';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingsFrom, type Settings } from '../config/settings.js';
import { InputError } from '../contract/problems.js';
import type { CliDeps } from '../cli/cli-deps.js';
import { buildProgram, main, unknownCommand } from '../cli/main.js';
import { expectedArithScore } from '../reference-model/expected-score.js';
import { fixturesDir, repoRoot, startHarness, type Harness } from './support/harness.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-cli-program-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Captured {
  deps: CliDeps;
  stdout: () => string;
  notes: string[];
  exitCode: () => number | undefined;
  settingsReads: () => number;
}

function capture(env: Record<string, string>): Captured {
  const out: string[] = [];
  const notes: string[] = [];
  let exitCode: number | undefined;
  let reads = 0;
  const deps: CliDeps = {
    settings: (): Settings => {
      reads += 1;
      return settingsFrom(env, scratch);
    },
    stdout: (text) => void out.push(text),
    say: (line) => void notes.push(line),
    setExitCode: (code) => {
      exitCode = code;
    },
    env,
  };
  return { deps, stdout: () => out.join(''), notes, exitCode: () => exitCode, settingsReads: () => reads };
}

/** Parses and runs one command line through the program, as `br` would, but in this process. */
async function br(captured: Captured, ...args: string[]): Promise<void> {
  const program = buildProgram(captured.deps)
    .exitOverride()
    .configureOutput({ writeOut: (t) => void captured.notes.push(t), writeErr: (t) => void captured.notes.push(t) });
  for (const command of program.commands)
    command.exitOverride().configureOutput({ writeOut: (t) => void captured.notes.push(t), writeErr: (t) => void captured.notes.push(t) });
  await program.parseAsync(['node', 'br', ...args]);
}

const READ_COMMANDS = ['status', 'results', 'list', 'compare', 'leaderboard', 'records', 'artifacts', 'analyze', 'doctor'];

describe('the br program', () => {
  it('is built without reading settings: a test hands in its own, and they are read when a command runs', async () => {
    const captured = capture({ BENCHROUTER_ARTIFACTS: path.join(scratch, 'nowhere') });
    const program = buildProgram(captured.deps);
    expect(program.commands.map((c) => c.name())).toEqual(expect.arrayContaining(['run', 'submit', ...READ_COMMANDS, 'analyze', 'worker', 'up', 'down']));
    expect(captured.settingsReads()).toBe(0);
    const error = await br(captured, 'artifacts', 'br-x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toContain(path.join(scratch, 'nowhere', 'br-x'));
    expect(captured.settingsReads()).toBeGreaterThan(0);
  });

  it.each(READ_COMMANDS)('%s takes --format table|json|csv|md|xlsx, --out FILE and --json', (name) => {
    const command = buildProgram(capture({}).deps).commands.find((c) => c.name() === name)!;
    const flags = Object.fromEntries(command.options.map((o) => [o.long, o]));
    expect(flags['--format']?.argChoices).toEqual(['table', 'json', 'csv', 'md', 'xlsx']);
    expect(flags['--format']?.defaultValue).toBe('table');
    expect(flags['--out']?.required).toBe(true); // its value is required, not the flag
    expect(flags['--json']?.isBoolean()).toBe(true);
    expect(command.helpInformation()).toMatch(/--json +the same as --format json/);
  });

  it('refuses --json beside another format before doing any work, and main exits 2 saying why', async () => {
    const captured = capture({ TEMPORAL_ADDRESS: '127.0.0.1:1' });
    const error = await br(captured, 'compare', 'br-a', 'br-b', '--json', '--format', 'csv').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toBe('--json: means --format json; it cannot be combined with --format csv');

    await main(['node', 'br', 'leaderboard', '--json', '--format', 'md'], captured.deps);
    expect(captured.exitCode()).toBe(2);
    expect(captured.notes.at(-1)).toBe('--json: means --format json; it cannot be combined with --format md');
  });

  it('rejects an unknown format as bad input (exit 2)', async () => {
    const captured = capture({});
    const error = await br(captured, 'list', '--format', 'xml').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CommanderError);
    expect((error as CommanderError).message).toContain("argument 'xml' is invalid. Allowed choices are table, json, csv, md, xlsx");
    await main(['node', 'br', 'list', '--format', 'xml'], captured.deps);
    expect(captured.exitCode()).toBe(2);
  });

  it('an unknown command exits 2 naming it, with or without --help, and at any level', async () => {
    for (const args of [['frobnicate'], ['frobnicate', '--help'], ['help', 'frobnicate'], ['schedule', 'bogus', '--help']]) {
      const captured = capture({});
      await main(['node', 'br', ...args], captured.deps);
      expect(captured.exitCode(), args.join(' ')).toBe(2);
      const word = args.includes('bogus') ? "'bogus' for br schedule" : "'frobnicate' for br";
      expect(captured.notes).toEqual([`br: unknown command ${word} (\`${args.includes('bogus') ? 'br schedule' : 'br'} --help\` lists its commands)`]);
    }
    const program = buildProgram(capture({}).deps);
    for (const known of [['run', '--help'], ['help', 'run'], ['schedule', 'list', '--help'], ['--help'], ['records', 'br-x', 'job']])
      expect(unknownCommand(program, known), known.join(' ')).toBeUndefined();
  });

  it('exits 1 naming the address when the configured Temporal does not answer', async () => {
    const captured = capture({ TEMPORAL_ADDRESS: '127.0.0.1:1' });
    await main(['node', 'br', 'compare', 'br-a', '--json'], captured.deps);
    expect(captured.exitCode()).toBe(1);
    expect(captured.notes).toEqual(['br: cannot reach Temporal at 127.0.0.1:1: check TEMPORAL_ADDRESS']);
  });
});

describe('records and artifacts through the program', () => {
  const runId = 'br-20260101-000000-cli001';
  const job = `${runId}.000-addition`;
  const env = { BENCHROUTER_ARTIFACTS: path.join(scratch, 'artifacts') };
  beforeAll(() => {
    const results = path.join(env.BENCHROUTER_ARTIFACTS, runId, job, 'results');
    mkdirSync(results, { recursive: true });
    const long = 'x'.repeat(100);
    writeFileSync(
      path.join(results, 'records.jsonl'),
      [
        { index: 0, score: 1, prediction: '=HYPERLINK("http://evil")', ground_truth: '2' },
        { index: 1, score: 0, prediction: long, ground_truth: '-3' },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    writeFileSync(path.join(results, 'result.json'), '{"overall": 0.5}');
  });

  it('records --format csv --out writes whole texts, guarded against formulas, and says where', async () => {
    const captured = capture(env);
    const file = path.join(scratch, 'exports', 'records.csv');
    await br(captured, 'records', runId, '--format', 'csv', '--out', file);
    expect(captured.stdout()).toBe('');
    expect(captured.notes).toContain(`wrote ${file}`);
    expect(readFileSync(file, 'utf8')).toBe(`INDEX,SCORE,PREDICTION,GROUND_TRUTH\r\n0,1,"'=HYPERLINK(""http://evil"")",2\r\n1,0,${'x'.repeat(100)},'-3\r\n`);
  });

  it('records --json and --format json both print the same JSON Lines', async () => {
    const viaJson = capture(env);
    await br(viaJson, 'records', runId, '--json');
    const viaFormat = capture(env);
    await br(viaFormat, 'records', runId, '--format', 'json');
    expect(viaJson.stdout()).toBe(viaFormat.stdout());
    expect(
      viaJson
        .stdout()
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).index),
    ).toEqual([0, 1]);
  });

  it('artifacts --format md prints a Markdown table with exact byte counts', async () => {
    const captured = capture(env);
    await br(captured, 'artifacts', runId, '--format', 'md');
    const lines = captured.stdout().split('\n');
    expect(lines[0]).toBe('| job | file | bytes | path |');
    expect(lines[1]).toBe('| --- | --- | ---: | --- |');
    expect(lines).toContain(`| 000-addition | results/result.json | 16 | ${path.join(env.BENCHROUTER_ARTIFACTS, runId, job, 'results', 'result.json')} |`);
  });
});

describe('br compare against real runs', () => {
  let h: Harness;
  let runs: { a: string; b: string };
  beforeAll(async () => {
    h = await startHarness('cli-compare');
    const seeded = path.join(fixturesDir, 'benchmarks', 'seeded');
    // Without a seed, seed-score scores 0; with seed 1 it scores 0.25. The second model's name is a formula.
    const a = await h.run(seeded, { model: 'plain-model' });
    const b = await h.run(seeded, { model: '=1+1', seed: 1 });
    runs = { a: a.runId, b: b.runId };
  });
  afterAll(async () => h?.close());

  const programDeps = () => capture(h.env);

  it('--json prints the rows as objects, exactly what --format json prints', async () => {
    const viaJson = programDeps();
    await br(viaJson, 'compare', runs.a, runs.b, '--json');
    const viaFormat = programDeps();
    await br(viaFormat, 'compare', runs.a, runs.b, '--format', 'json');
    expect(viaJson.stdout()).toBe(viaFormat.stdout());
    expect(JSON.parse(viaJson.stdout())).toEqual([
      { benchmark: 'seeded', 'plain-model': 0.5, '=1+1': 0.625 },
      { benchmark: 'seeded/seed-score', 'plain-model': 0, '=1+1': 0.25 },
      { benchmark: 'seeded/constant', 'plain-model': 1, '=1+1': 1 },
    ]);
  });

  it('--format csv and xlsx guard the formula-like model name, and keep scores as numbers', async () => {
    const csvOut = programDeps();
    await br(csvOut, 'compare', runs.a, runs.b, '--format', 'csv');
    expect(csvOut.stdout()).toBe("benchmark,plain-model,'=1+1\r\nseeded,0.5,0.625\r\nseeded/seed-score,0,0.25\r\nseeded/constant,1,1\r\n");

    const file = path.join(scratch, 'compare.xlsx');
    await br(programDeps(), 'compare', runs.a, runs.b, '--format', 'xlsx', '--out', file);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(file);
    const sheet = workbook.getWorksheet('compare')!;
    expect(sheet.getCell('C1').value).toBe("'=1+1");
    expect(sheet.getCell('C1').type).toBe(ExcelJS.ValueType.String);
    expect(sheet.getCell('C2').value).toBe(0.625);
  });

  it('two runs with per-instance records: a paired comparison per task and overall, with McNemar counts from the data', async () => {
    const arith = path.join(repoRoot, 'benchmarks', 'arith');
    const strong = await h.run(arith, { model: 'reference-acc80' });
    const weak = await h.run(arith, { model: 'reference-acc50' });
    const captured = programDeps();
    await br(captured, 'compare', strong.runId, weak.runId, '--json');
    const { paired } = JSON.parse(captured.stdout()) as { paired: Array<Record<string, unknown>> };
    // acc50's right answers are a subset of acc80's (the same hash buckets, below 50 and below 80): B is never better.
    const counts = (task: string) => {
      const a = expectedArithScore(arith, 'reference-acc80').perTask[task]!;
      const b = expectedArithScore(arith, 'reference-acc50').perTask[task]!;
      return { A: a, B: b, 'A better': Math.round((a - b) * 20), 'B better': 0 };
    };
    expect(paired.map((row) => row.task)).toEqual(['addition', 'multiplication', 'overall']);
    for (const row of paired.slice(0, 2)) {
      const expected = counts(row.task as string);
      expect(row).toMatchObject({ instances: 20, test: 'mcnemar', ...expected, 'B - A': Number((expected.B - expected.A).toFixed(4)) });
      expect(row['p-value']).toBeCloseTo(Math.min(1, 2 * 0.5 ** expected['A better']), 4);
      expect(row['95% CI low'] as number).toBeLessThanOrEqual(row['B - A'] as number);
      expect(row['95% CI high'] as number).toBeLessThanOrEqual(0);
    }
    expect(paired[2]).toMatchObject({ instances: 40, test: 'mcnemar' });
    expect(captured.notes).toContain(`paired: A is ${strong.runId}, B is ${weak.runId}; B - A with a 95% paired bootstrap interval (docs/results.md)`);
  });

  it('results --json is the whole run result, the same as --format json, and exits with its outcome', async () => {
    const viaJson = programDeps();
    await br(viaJson, 'results', runs.a, '--json');
    const viaFormat = programDeps();
    await br(viaFormat, 'results', runs.a, '--format', 'json');
    expect(viaJson.stdout()).toBe(viaFormat.stdout());
    expect(JSON.parse(viaJson.stdout())).toMatchObject({ runId: runs.a, status: 'COMPLETED', overall: 0.5 });
    expect(viaJson.exitCode()).toBe(0);
  });

  it('names an unknown run as bad input (exit 2)', async () => {
    const captured = programDeps();
    await main(['node', 'br', 'compare', runs.a, 'br-20000101-000000-nope00', '--json'], captured.deps);
    expect(captured.exitCode()).toBe(2);
    expect(captured.notes).toEqual([`br: run br-20000101-000000-nope00 not found in namespace default`]);
    expect(captured.stdout()).toBe('');
  });
});

describe('failure details against a real run', () => {
  let h: Harness;
  let runId: string;
  beforeAll(async () => {
    h = await startHarness('cli-failure');
    runId = (await h.run(path.join(fixturesDir, 'benchmarks', 'outcomes'))).runId;
  });
  afterAll(async () => h?.close());

  it("the table's DETAIL for a non-zero exit is its exit code and the task's last log line", async () => {
    const captured = capture(h.env);
    await br(captured, 'results', runId);
    const row = captured
      .stdout()
      .split('\n')
      .find((line) => line.startsWith('exits-nonzero '));
    expect(row).toMatch(/NON_ZERO_EXIT\s+exit 3: model endpoint refused us$/);
  });

  it('results --task prints the whole reason and the log tail kept beside container.log', async () => {
    const captured = capture(h.env);
    await br(captured, 'results', runId, '--task', 'exits-nonzero');
    const text = captured.stdout();
    expect(text).toContain('FAILED (NON_ZERO_EXIT)');
    expect(text).toContain('reason:\n  command exited with code 3; last log line: model endpoint refused us');
    expect(text).toMatch(/last log lines \(container-tail\.log, secrets redacted\):\nloading 10 problems\nmodel endpoint refused us/);
  });

  it('results --task with a task the run does not have is bad input naming its tasks', async () => {
    const captured = capture(h.env);
    await main(['node', 'br', 'results', runId, '--task', 'nope'], captured.deps);
    expect(captured.exitCode()).toBe(2);
    expect(captured.notes.join('\n')).toContain(`expected a task of run ${runId} (exits-nonzero, non-numeric, scores-half, writes-nothing), got "nope"`);
  });
});
