// Suites (runs/suites.ts): loading them from YAML files, the errors a bad file gets, and picking a
// suite's benchmarks with --only and --exclude.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../contract/problems.js';
import { entryNames, loadSuites, selectEntries, type Suite } from '../../runs/suites.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'br-suites-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function suitesFile(yaml: string): string {
  const file = path.join(dir, `suites-${files++}.yaml`);
  writeFileSync(file, yaml);
  return file;
}

function problemsOf(file: string): string[] {
  try {
    loadSuites([file]);
  } catch (error) {
    if (error instanceof InputError) return error.message.split('\n');
    throw error;
  }
  throw new Error(`${file}: expected an InputError`);
}

describe('loadSuites', () => {
  it('reads each suite with its entries, description and file', () => {
    const file = suitesFile(`suites:
  core:
    description: The everyday set
    benchmarks:
      - benchmark: arith
        tasks: [add, mul]
        repeats: 3
        generation: {temperature: 0, thinking: false}
      - benchmark: ./local/qa
`);
    expect(loadSuites([file]).get('core')).toEqual({
      name: 'core',
      description: 'The everyday set',
      file,
      entries: [{ benchmark: 'arith', tasks: ['add', 'mul'], repeats: 3, generation: { temperature: 0, thinking: false } }, { benchmark: './local/qa' }],
    });
  });

  it("lets a later file's suite replace an earlier one of the same name, and skips files that do not exist", () => {
    const builtIn = suitesFile('suites:\n  core: {benchmarks: [{benchmark: arith}]}\n  extra: {benchmarks: [{benchmark: qa}]}\n');
    const user = suitesFile('suites:\n  core: {description: mine, benchmarks: [{benchmark: mine}]}\n');
    const suites = loadSuites([builtIn, path.join(dir, 'absent.yaml'), user]);
    expect([...suites.keys()]).toEqual(['core', 'extra']);
    expect(suites.get('core')).toMatchObject({ description: 'mine', file: user, entries: [{ benchmark: 'mine' }] });
    expect(suites.get('extra')?.description).toBe('');
  });

  it('rejects an empty file, naming the missing suites field', () => {
    const file = suitesFile('');
    expect(problemsOf(file)).toEqual([`${file}: suites: Invalid input: expected record, received undefined`]);
  });

  it('names the file, the field and the expectation for each bad entry, all at once', () => {
    const file = suitesFile(`suites:
  Core:
    benchmarks: [{benchmark: arith}]
  ok:
    benchmarks:
      - {benchmark: arith, repeats: 0}
      - {benchmark: qa, tasks: []}
      - {benchmark: x, unknown_key: 1}
`);
    const problems = problemsOf(file);
    expect(problems).toHaveLength(4);
    expect(problems).toEqual([
      `${file}: suites.Core: expected a lower-case suite name (a-z, 0-9, ".", "_" or "-", starting with a letter or digit)`,
      `${file}: suites.ok.benchmarks[0].repeats: Too small: expected number to be >0`,
      `${file}: suites.ok.benchmarks[1].tasks: Too small: expected array to have >=1 items`,
      `${file}: suites.ok.benchmarks[2]: Unrecognized key: "unknown_key"`,
    ]);
  });

  it('reports a file that is not YAML with its first line of error, beside problems of other files', () => {
    const broken = suitesFile('suites: [unclosed\n');
    const bad = suitesFile('suites:\n  x: {benchmarks: []}\n');
    const error = (() => {
      try {
        loadSuites([broken, bad]);
      } catch (e) {
        return e as InputError;
      }
    })();
    expect(error).toBeInstanceOf(InputError);
    expect(error!.problems.map((p) => [p.file, p.field])).toEqual([
      [broken, ''],
      [bad, 'suites.x.benchmarks'],
    ]);
    expect(error!.problems[0]!.message).toMatch(/^not valid YAML at line \d+, column \d+: [^\n]+$/);
  });
});

describe('selecting entries', () => {
  const suite: Suite = {
    name: 'core',
    description: '',
    file: 'suites.yaml',
    entries: [{ benchmark: 'arith' }, { benchmark: 'benchmarks/qa/' }, { benchmark: '/opt/bench/code', repeats: 2 }],
  };

  it('names an entry by the benchmark as written and by its last path segment', () => {
    expect(entryNames({ benchmark: 'arith' })).toEqual(['arith', 'arith']);
    expect(entryNames({ benchmark: 'benchmarks/qa/' })).toEqual(['benchmarks/qa/', 'qa']);
    expect(entryNames({ benchmark: '/opt/bench/code' })).toEqual(['/opt/bench/code', 'code']);
  });

  it('keeps every entry with no --only or --exclude', () => {
    expect(selectEntries(suite)).toEqual(suite.entries);
  });

  it('keeps only the --only entries, in suite order, by either name', () => {
    expect(selectEntries(suite, ['code', 'arith']).map((e) => e.benchmark)).toEqual(['arith', '/opt/bench/code']);
    expect(selectEntries(suite, ['benchmarks/qa/']).map((e) => e.benchmark)).toEqual(['benchmarks/qa/']);
  });

  it('drops the --exclude entries, also from an --only list', () => {
    expect(selectEntries(suite, [], ['qa']).map((e) => e.benchmark)).toEqual(['arith', '/opt/bench/code']);
    expect(selectEntries(suite, ['arith', 'qa'], ['qa']).map((e) => e.benchmark)).toEqual(['arith']);
  });

  it('rejects a name the suite does not have, listing the names it has', () => {
    expect(() => selectEntries(suite, ['arith', 'mmlu'], ['gsm8k'])).toThrow(
      'suites.yaml: suites.core: no benchmark "mmlu", "gsm8k" in this suite (it has arith, benchmarks/qa/, qa, /opt/bench/code, code)',
    );
  });

  it('picks or drops single tasks of entries that pick tasks, by task name or benchmark/task', () => {
    const evalscope: Suite = {
      name: 'full',
      description: '',
      file: 'suites.yaml',
      entries: [
        { benchmark: 'evalscope', tasks: ['aime24', 'aime25'], repeats: 8 },
        { benchmark: 'evalscope', tasks: ['hle', 'gsm8k'] },
        { benchmark: 'arith' },
      ],
    };
    expect(selectEntries(evalscope, ['aime25', 'evalscope/gsm8k'])).toEqual([
      { benchmark: 'evalscope', tasks: ['aime25'], repeats: 8 },
      { benchmark: 'evalscope', tasks: ['gsm8k'] },
    ]);
    expect(selectEntries(evalscope, [], ['hle', 'gsm8k', 'aime24'])).toEqual([
      { benchmark: 'evalscope', tasks: ['aime25'], repeats: 8 },
      { benchmark: 'arith' },
    ]);
    expect(selectEntries(evalscope, ['evalscope'], ['aime25'])).toEqual([
      { benchmark: 'evalscope', tasks: ['aime24'], repeats: 8 },
      { benchmark: 'evalscope', tasks: ['hle', 'gsm8k'] },
    ]);
    expect(() => selectEntries(evalscope, ['mmlu'])).toThrow('no benchmark "mmlu" in this suite (it has evalscope, arith; tasks aime24, aime25, hle, gsm8k)');
  });
});
