// Exports of result tables (cli/table-export.ts): CSV, Markdown, JSON and aligned text, XLSX sheets
// read back with ExcelJS, sheet names Excel accepts, and no formula injection.

import ExcelJS from 'exceljs';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RecordsSummary } from '../../contract/records.js';
import type { JobResult, RunResult } from '../../runs/run-spec.js';
import type { UsageSummary } from '../../runs/usage.js';
import { RESULT_COLUMNS, runResultView } from '../../cli/results-view.js';
import { renderView, renderViews, sheetNames, spreadsheetSafe, writeXlsx } from '../../cli/table-export.js';
import type { TableView } from '../../runs/table-view.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-table-export-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A strict RFC 4180 reader: quoted fields may hold commas, CRLF and doubled quotes; records end in CRLF. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = '';
    if (text[i] === '"') {
      i += 1;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i += 1;
          break;
        }
        field += text[i];
        i += 1;
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') {
        if (text[i] === '"') throw new Error(`bare quote in an unquoted field at ${i}`);
        field += text[i];
        i += 1;
      }
    }
    record.push(field);
    if (text[i] === ',') {
      i += 1;
    } else if (text.startsWith('\r\n', i)) {
      records.push(record);
      record = [];
      i += 2;
    } else {
      throw new Error(`expected a comma or CRLF at ${i}, got ${JSON.stringify(text[i] ?? 'end of text')}`);
    }
  }
  if (record.length) throw new Error('last record does not end in CRLF');
  return records;
}

const tricky: TableView = {
  name: 'tricky',
  columns: ['name', 'score', 'note'],
  rows: [
    ['a, b', 0.5, 'say "hi"'],
    ['multi\nline', 1, 'cr\r\nlf'],
    ['pipe | here', null, ''],
    ['plain', Number.NaN, 'x'],
  ],
};

describe('renderView', () => {
  it('writes CSV that an RFC 4180 parser reads back cell for cell', () => {
    const csv = renderView(tricky, 'csv');
    expect(parseCsv(csv)).toEqual([
      ['name', 'score', 'note'],
      ['a, b', '0.5', 'say "hi"'],
      ['multi\nline', '1', 'cr\r\nlf'],
      ['pipe | here', '', ''],
      ['plain', '', 'x'],
    ]);
    expect(csv.split('\r\n')[1]).toBe('"a, b",0.5,"say ""hi"""');
  });

  it('escapes pipes and line breaks in Markdown and right-aligns number columns', () => {
    const md = renderView(tricky, 'md').split('\n');
    expect(md[0]).toBe('| name | score | note |');
    expect(md[1]).toBe('| --- | ---: | --- |');
    expect(md[3]).toBe('| multi<br>line | 1 | cr<br>lf |');
    expect(md[4]).toBe('| pipe \\| here | - |  |');
    // Every row has exactly the header's number of unescaped separators.
    for (const row of md.filter(Boolean)) expect(row.split(/(?<!\\)\|/).length).toBe(5);
  });

  it('writes JSON as an array of objects keyed by column, with missing numbers as null', () => {
    expect(JSON.parse(renderView(tricky, 'json'))).toEqual([
      { name: 'a, b', score: 0.5, note: 'say "hi"' },
      { name: 'multi\nline', score: 1, note: 'cr\r\nlf' },
      { name: 'pipe | here', score: null, note: '' },
      { name: 'plain', score: null, note: 'x' },
    ]);
  });

  it('aligns a table for people, numbers to 4 decimals and missing cells as -', () => {
    const text = renderView(
      {
        name: 't',
        columns: ['task', 'score'],
        rows: [
          ['addition', 0.85],
          ['multiplication', null],
        ],
      },
      'table',
    );
    expect(text).toBe('task            score\naddition        0.8500\nmultiplication  -\n');
  });
});

describe('sheetNames', () => {
  it('keeps names within 31 characters, free of []:*?/\\ and unique regardless of case', () => {
    const names = sheetNames(['results: arith/addition [v2]', 'A'.repeat(40), 'a'.repeat(40), 'Run', 'run', '']);
    expect(names).toEqual(['results_ arith_addition _v2_', 'A'.repeat(31), `${'a'.repeat(27)} (2)`, 'Run', 'run (2)', 'Sheet']);
    for (const name of names) expect(name.length).toBeLessThanOrEqual(31);
  });
});

function usage(fields: Partial<UsageSummary>): UsageSummary {
  return {
    requests: 0,
    errors: {},
    retries: 0,
    throttled: 0,
    queued: 0,
    promptTokens: 0,
    completionTokens: 0,
    totalTokens: 0,
    cost: 0,
    cacheHits: 0,
    cacheMisses: 0,
    latencyMs: null,
    ttftMs: null,
    outputTokensPerSecond: null,
    ...fields,
  };
}

const counters = {} as NonNullable<JobResult['usage']>['counters'];
const timings = (containerSeconds: number) => ({
  queuedAt: '2026-01-01T00:00:00Z',
  startedAt: '2026-01-01T00:00:01Z',
  finishedAt: '2026-01-01T01:00:00Z',
  containerSeconds,
});
const recordsSummary = (count: number): RecordsSummary => ({
  count,
  badLines: 0,
  badLineExamples: [],
  meanScore: 0.5,
  promptTokens: { total: 100, missing: 0 },
  completionTokens: { total: 20, missing: 0 },
  cost: { total: 0.5, missing: 0 },
});

const run: RunResult = {
  runId: 'br-20260101-000000-abcdef',
  benchmark: 'arith',
  model: 'reference-acc80',
  status: 'PARTIAL',
  overall: 0.85,
  jobs: [
    {
      jobId: 'br-20260101-000000-abcdef.000-addition',
      task: 'addition',
      status: 'SUCCEEDED',
      result: { overall: 0.85, raw_metrics: { total: 20 } },
      usage: {
        model: usage({
          promptTokens: 400,
          completionTokens: 40,
          cost: 0.25,
          latencyMs: { mean: 1500, p50: 1400, p95: 2000 },
          ttftMs: { mean: 200, p50: 190, p95: 300 },
          outputTokensPerSecond: 42,
        }),
        counters,
      },
      timings: timings(1800),
    },
    // The records summary counts samples ahead of raw_metrics; with no gateway usage its token figures stand in.
    {
      jobId: 'br-20260101-000000-abcdef.001-multiplication',
      task: 'multiplication',
      status: 'SUCCEEDED',
      result: { overall: 0.75, raw_metrics: { n: 99 } },
      timings: timings(900),
      records: recordsSummary(18),
    } as JobResult,
    { jobId: 'br-20260101-000000-abcdef.002-division', task: 'division', status: 'FAILED', reason: 'NO_RESULT', timings: timings(0) },
  ],
  usage: {
    model: usage({
      promptTokens: 400,
      completionTokens: 40,
      cost: 0.25,
      latencyMs: { mean: 1500, p50: 1400, p95: 2000 },
      ttftMs: { mean: 200, p50: 190, p95: 300 },
      outputTokensPerSecond: 42,
    }),
  },
  startedAt: '2026-01-01T00:00:00Z',
  finishedAt: '2026-01-01T01:00:00Z',
};

describe('runResultView', () => {
  it('has a row per job and a row for the run, with the columns the export asks for', () => {
    const view = runResultView(run);
    expect(view.name).toBe(run.runId);
    expect(view.columns).toEqual([
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
    expect(view.columns).toEqual([...RESULT_COLUMNS]);
    expect(view.rows).toEqual([
      ['arith/addition', 0.85, 20, 0.5, 1.5, 0.2, 42, 400, 40, 0.25, 'SUCCEEDED'],
      ['arith/multiplication', 0.75, 18, 0.25, null, null, null, 100, 20, 0.5, 'SUCCEEDED'],
      ['arith/division', null, null, 0, null, null, null, null, null, null, 'FAILED'],
      ['arith', 0.85, 38, 0.75, 1.5, 0.2, 42, 500, 60, 0.75, 'PARTIAL'],
    ]);
  });

  it('tells repeats of one task apart', () => {
    const job = run.jobs[0]!;
    const repeated: RunResult = {
      ...run,
      jobs: [
        { ...job, repeat: 0 },
        { ...job, repeat: 1 },
      ] as JobResult[],
    };
    expect(runResultView(repeated, 'repeats').rows.map((r) => r[0])).toEqual(['arith/addition (repeat 0)', 'arith/addition (repeat 1)', 'arith']);
  });
});

describe('writeXlsx', () => {
  it('writes one sheet per view that reads back with numbers as numbers, a bold frozen header and fitted widths', async () => {
    const file = path.join(scratch, 'out', 'results.xlsx');
    const long = { ...tricky, name: 'a sheet name that is much longer than Excel allows' };
    await writeXlsx([runResultView(run, 'reference-acc80'), tricky, long], file);

    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(file);
    expect(workbook.worksheets.map((s) => s.name)).toEqual(['reference-acc80', 'tricky', 'a sheet name that is much longe']);

    const sheet = workbook.getWorksheet('reference-acc80')!;
    expect(sheet.getRow(1).values).toEqual([undefined, ...RESULT_COLUMNS]);
    for (let c = 1; c <= RESULT_COLUMNS.length; c++) expect(sheet.getRow(1).getCell(c).font?.bold).toBe(true);
    expect(sheet.getCell('A2').font?.bold).not.toBe(true);
    expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(sheet.rowCount).toBe(5);
    expect(sheet.getCell('B2').type).toBe(ExcelJS.ValueType.Number);
    expect(sheet.getCell('B2').value).toBe(0.85);
    expect(sheet.getCell('H5').value).toBe(500);
    expect(sheet.getCell('K5').value).toBe('PARTIAL');
    // A missing figure is an empty cell, not the text "null".
    expect(sheet.getCell('E3').type).toBe(ExcelJS.ValueType.Null);
    expect(sheet.getColumn(1).width).toBe('arith/multiplication'.length + 2);

    const second = workbook.getWorksheet('tricky')!;
    expect(second.getCell('A3').value).toBe('multi\nline');
    expect(second.getCell('B5').type).toBe(ExcelJS.ValueType.Null);
  });
});

// Cells a spreadsheet would run: a formula, DDE via + or -, @ functions, and tab / CR prefixes.
const hostile: TableView = {
  name: 'hostile',
  columns: ['=cmd|"/c calc"!A1', 'value'],
  rows: [
    ['=1+1', -0.5],
    ['+cmd', 2],
    ['-2+3', null],
    ['@SUM(A1)', 1],
    ['\tx', 0],
    ['\rx', 0],
    ['plain = text', 0],
  ],
};

describe('formula injection', () => {
  it('puts an apostrophe before text starting with = + - @ tab or CR, and leaves other text alone', () => {
    expect(['=1', '+1', '-1', '@a', '\t1', '\r1', 'a=1', ' =1', ''].map(spreadsheetSafe)).toEqual([
      "'=1",
      "'+1",
      "'-1",
      "'@a",
      "'\t1",
      "'\r1",
      'a=1',
      ' =1',
      '',
    ]);
  });

  it('guards every CSV cell and header, and never a number (a negative score stays a number)', () => {
    expect(parseCsv(renderView(hostile, 'csv'))).toEqual([
      ['\'=cmd|"/c calc"!A1', 'value'],
      ["'=1+1", '-0.5'],
      ["'+cmd", '2'],
      ["'-2+3", ''],
      ["'@SUM(A1)", '1'],
      ["'\tx", '0'],
      ["'\rx", '0'],
      ['plain = text', '0'],
    ]);
  });

  it('guards every XLSX text cell and header, which read back as text, not formulas', async () => {
    const file = path.join(scratch, 'hostile.xlsx');
    await writeXlsx([hostile], file);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(file);
    const sheet = workbook.getWorksheet('hostile')!;
    expect(sheet.getCell('A1').value).toBe('\'=cmd|"/c calc"!A1');
    const column = [2, 3, 4, 5, 6, 7, 8].map((row) => sheet.getCell(`A${row}`));
    // XML reads a bare CR back as LF: the guard is what matters, and it is there.
    expect(column.map((cell) => cell.value)).toEqual(["'=1+1", "'+cmd", "'-2+3", "'@SUM(A1)", "'\tx", "'\nx", 'plain = text']);
    for (const cell of column) expect(cell.type).toBe(ExcelJS.ValueType.String);
    expect(sheet.getCell('B2').value).toBe(-0.5);
  });

  it('leaves table, Markdown and JSON as they are: no spreadsheet reads them', () => {
    expect(JSON.parse(renderView(hostile, 'json'))[0]).toEqual({ '=cmd|"/c calc"!A1': '=1+1', value: -0.5 });
    expect(renderView(hostile, 'md').split('\n')[2]).toBe('| =1+1 | -0.5000 |');
    expect(renderView(hostile, 'table').split('\n')[1]).toMatch(/^=1\+1 +-0\.5000$/);
  });
});

describe('renderViews', () => {
  const scores: TableView = {
    name: 'scores',
    columns: ['model', 'acc', 'on frontier'],
    rows: [
      ['m1', 0.5, true],
      ['m2', 0.25, false],
    ],
  };
  const costs: TableView = { name: 'costs', columns: ['model', 'cost'], rows: [['m1', 1.5]] };

  it('joins several tables into one CSV: a table column, shared columns merged by name', () => {
    expect(parseCsv(renderViews([scores, costs], 'csv'))).toEqual([
      ['table', 'model', 'acc', 'on frontier', 'cost'],
      ['scores', 'm1', '0.5', 'true', ''],
      ['scores', 'm2', '0.25', 'false', ''],
      ['costs', 'm1', '', '', '1.5'],
    ]);
  });

  it('keys several tables by name in JSON, and heads each in Markdown and text', () => {
    expect(JSON.parse(renderViews([scores, costs], 'json'))).toEqual({
      scores: [
        { model: 'm1', acc: 0.5, 'on frontier': true },
        { model: 'm2', acc: 0.25, 'on frontier': false },
      ],
      costs: [{ model: 'm1', cost: 1.5 }],
    });
    expect(renderViews([scores, costs], 'md')).toBe(
      '## scores\n\n| model | acc | on frontier |\n| --- | ---: | --- |\n| m1 | 0.5000 | yes |\n| m2 | 0.2500 | no |\n\n## costs\n\n| model | cost |\n| --- | ---: |\n| m1 | 1.5000 |\n',
    );
    expect(renderViews([scores, costs], 'table')).toBe(
      'scores\n\nmodel  acc     on frontier\nm1     0.5000  yes\nm2     0.2500  no\n\ncosts\n\nmodel  cost\nm1     1.5000\n',
    );
  });

  it('renders one table as renderView does', () => {
    for (const format of ['table', 'json', 'csv', 'md'] as const) expect(renderViews([costs], format)).toBe(renderView(costs, format));
  });
});
