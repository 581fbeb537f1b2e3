// What `br analyze` hands people and programs: the CSV parses, the XLSX reads back, the SVG holds
// every series, the PNG renders; the command itself, its exit code for bad input, and the
// OpenAI-compatible embeddings client against the reference model's /v1/embeddings.

import { Command, CommanderError } from 'commander';
import ExcelJS from 'exceljs';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PLOT_SERIES, renderAccuracyCostSvg } from '../../analysis/accuracy-cost-plot.js';
import { hashedTfidfEmbedder } from '../../analysis/hashed-tfidf-embedder.js';
import { embedViaEndpoint } from '../../analysis/openai-embeddings-client.js';
import { renderPng } from '../../analysis/plot-png.js';
import { formatTrainSeconds, renderReportText } from '../../analysis/report-text.js';
import { analysesDir, listSavedAnalyses, readSavedAnalysis } from '../../analysis/saved-analyses.js';
import { analyzeRecords, METHOD, type RoutingReport } from '../../analysis/routing-analysis.js';
import { syntheticPool } from '../../analysis/synthetic-pool.js';
import { registerAnalyzeCommand } from '../../cli/commands/analyze.js';
import { routingReportTables, SHEETS } from '../../analysis/routing-report-tables.js';
import { renderViews, xlsxBytes } from '../../cli/table-export.js';
import { InputError } from '../../contract/problems.js';
import { embed, startReferenceModel } from '../../reference-model/reference-model-server.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'br-analyze-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const { records } = syntheticPool({ models: 5, topics: 5, datasets: 2, queriesPerDataset: 60, generalistEvery: 5, seed: 5 });
const report: RoutingReport = await analyzeRecords(records, { nInit: 2 }, hashedTfidfEmbedder());

/** RFC 4180, enough for the report: quoted fields with doubled quotes, CRLF rows. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else if (ch !== '\r') cell += ch;
  }
  return rows;
}

describe('report outputs', () => {
  it('CSV parses into one rectangular table with a row per method, router, setting, model and frontier point, each naming its table', () => {
    const rows = parseCsv(renderViews(routingReportTables(report), 'csv'));
    const [header, ...body] = rows;
    expect(header!.slice(0, 6)).toEqual(['table', 'Method', 'Kind', 'Model', 'Acc', 'Cost (USD)']);
    expect(header).toContain('Acc dataset-00');
    for (const row of body) expect(row).toHaveLength(header!.length);
    const inTable = (name: string) => body.filter((r) => r[0] === name);
    expect(inTable('Methods').filter((r) => r[2] === 'baseline')).toHaveLength(5);
    expect(inTable('Methods').filter((r) => r[2] === 'router')).toHaveLength(2);
    expect(inTable('Models')).toHaveLength(5);
    expect(inTable('Alpha sweeps')).toHaveLength(202);
    expect(inTable('Pareto frontier')).toHaveLength(report.frontier.length);
    const oracle = body.find((r) => r[1] === METHOD.oracle)!;
    expect(Number(oracle[header!.indexOf('Acc')])).toBe(report.methods.find((m) => m.name === METHOD.oracle)!.acc);
    // Every router row of both tables says how long it trained; a baseline trains nothing.
    const train = header!.indexOf('Train (s)');
    for (const row of inTable('Methods')) expect(row[train] !== '', row[1]).toBe(row[2] === 'router');
    expect(inTable('Cost setting').map((r) => Number(r[train]))).toEqual(report.costAware.map((r) => r.trainSeconds));
    expect(inTable('Cost setting')).toHaveLength(2);
  });

  it('XLSX is written and reads back with exceljs', async () => {
    const file = path.join(dir, 'report.xlsx');
    writeFileSync(file, await xlsxBytes(routingReportTables(report)));
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(file);
    expect(workbook.worksheets.map((w) => w.name)).toEqual([...SHEETS]);
    const methods = workbook.getWorksheet('Methods')!;
    expect(methods.getRow(1).getCell(1).value).toBe('Method');
    expect(methods.getRow(2).getCell(1).value).toBe(METHOD.randomExpected);
    expect(methods.getRow(2).getCell(4).value).toBe(report.methods[0]!.acc);
    expect(workbook.getWorksheet('Alpha sweeps')!.rowCount).toBe(1 + 202);
    const cluster = report.methods.findIndex((m) => m.name === METHOD.clusterRouter);
    const trainColumn = (methods.getRow(1).values as unknown[]).indexOf('Train (s)');
    expect(methods.getRow(2 + cluster).getCell(trainColumn).value).toBe(report.methods[cluster]!.trainSeconds);
  });

  it('SVG holds every series, and the PNG renders from it', () => {
    const svg = renderAccuracyCostSvg(report);
    for (const id of Object.values(PLOT_SERIES)) expect(svg).toContain(`id="${id}"`);
    expect(svg.match(/data-label="model-\d\d"/g)).toHaveLength(5);
    expect(svg.match(/data-alpha=/g)).toHaveLength(202);
    expect(svg).toContain('Pareto frontier');
    const png = renderPng(svg);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  });

  it("SVG draws each router container's point and its settings, and a reference router's point", () => {
    const row = (name: string, kind: 'router' | 'reference', acc: number, cost: number) => ({ ...report.methods[0]!, name, kind, acc, cost, trainSeconds: 1 });
    const settings = [
      { alpha: 0.1, acc: 0.5, cost: 0.01, onFrontier: false },
      { alpha: 0.9, acc: 0.7, cost: 0.02, onFrontier: false },
    ];
    const svg = renderAccuracyCostSvg({
      ...report,
      methods: [...report.methods, row('mine', 'router', 0.6, 0.015), row('openrouter', 'reference', 0.55, 0.012)],
      costAware: [
        ...report.costAware,
        { name: 'mine (cost settings)', settingName: 'setting', perfGain: 0, costSave: null, paretoDist: 0, trainSeconds: 1, settings },
      ],
    });
    const group = svg.slice(svg.indexOf(`id="${PLOT_SERIES.routers}"`), svg.indexOf(`id="${PLOT_SERIES.baselines}"`));
    expect(group).toContain('data-label="mine"');
    expect(group).toContain('data-label="openrouter (reference)"');
    expect(group.match(/data-setting="mine [\d.]+"/g)).toEqual(['data-setting="mine 0.1"', 'data-setting="mine 0.9"']);
    expect(svg).toContain('mine, settings dotted');
  });

  it('terminal tables say how long each router trained, in both tables', () => {
    const text = renderReportText(report);
    const line = (name: string) => text.split('\n').find((l) => l.startsWith(name))!;
    for (const name of [METHOD.clusterRouter, METHOD.knnRouter, METHOD.clusterCostAware, METHOD.knnCostAware])
      expect(line(name), name).toMatch(/\d+\.\d (ms|s)$/);
    expect(line(METHOD.oracle)).not.toMatch(/ (ms|s)$/);
    expect(formatTrainSeconds(0.0123)).toBe('12.3 ms');
    expect(formatTrainSeconds(12.34)).toBe('12.3 s');
    expect(formatTrainSeconds(null)).toBe('?');
  });

  it('terminal tables show n/a where CostSave is undefined', () => {
    const text = renderReportText({ ...report, costAware: report.costAware.map((r) => ({ ...r, costSave: null })) });
    expect(text).toContain('Best Single: ');
    expect(text).toMatch(/Avengers-Pro \(cluster router, cost-aware\)\s+\S+\s+n\/a/);
  });
});

describe('br analyze', () => {
  const run = async (...args: string[]) => {
    const out: string[] = [];
    const notes: string[] = [];
    const program = new Command('br').exitOverride().configureOutput({ writeErr: (s) => notes.push(s), writeOut: (s) => out.push(s) });
    registerAnalyzeCommand(program, { stdout: (s) => void out.push(s), say: (s) => notes.push(s), env: { BENCHROUTER_HOME: dir } });
    await program.parseAsync(['node', 'br', 'analyze', ...args]);
    return { out: out.join(''), notes: notes.join('\n') };
  };
  const fixture = path.join(import.meta.dirname, '..', 'fixtures', 'llmrouterbench');

  it('analyses an LLMRouterBench directory and writes CSV, XLSX, SVG and PNG', async () => {
    const plot = path.join(dir, 'plots', 'routing.svg');
    const { out, notes } = await run('--llmrouterbench-dir', fixture, '--missing-records', 'drop', '--json', '--plot', plot, '--k', '2');
    const parsed = JSON.parse(out) as RoutingReport;
    expect(parsed.pool.models).toEqual(['model-a', 'model-b']);
    expect(parsed.pool.droppedQueries).toBe(1);
    expect(parsed.options.k).toBe(2);
    expect(notes).toContain('dropped 1 queries that some model has no record for (mathx 1)');
    // The output convention of every read command: --format csv|xlsx with --out FILE (was --csv FILE, --xlsx FILE).
    for (const format of ['csv', 'xlsx']) {
      const written = await run('--llmrouterbench-dir', fixture, '--format', format, '--out', path.join(dir, `r.${format}`), '--k', '2');
      expect(written.out).toBe('');
      expect(written.notes).toContain(`wrote ${path.join(dir, `r.${format}`)}`);
    }
    for (const f of ['r.csv', 'r.xlsx', 'plots/routing.svg', 'plots/routing.png']) expect(existsSync(path.join(dir, f))).toBe(true);
  });

  it('reads --records JSON Lines and prints tables', async () => {
    const file = path.join(dir, 'records.jsonl');
    writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n'));
    const { out } = await run('--records', file, '--n-init', '1');
    expect(out).toContain('Routing analysis: 2 datasets, 5 models, 120 queries');
    expect(out).toContain('Avengers-Pro (cluster router, cost-aware)');
  });

  it('keeps each report under BENCHROUTER_HOME/analyses, where it reads back as printed; --no-save keeps none', async () => {
    const file = path.join(dir, 'saved.jsonl');
    writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n'));
    const before = listSavedAnalyses(dir).length;
    const { out, notes } = await run('--records', file, '--n-init', '1', '--json');
    const id = /saved analysis (an-\S+) /.exec(notes)![1]!;
    const saved = readSavedAnalysis(dir, id)!;
    expect(saved.report).toEqual(JSON.parse(out));
    expect(saved.inputs).toEqual([`--records ${file}`]);
    const listed = listSavedAnalyses(dir);
    expect(listed).toHaveLength(before + 1);
    expect(listed[0]).toMatchObject({
      id,
      models: 5,
      queries: 120,
      routers: [METHOD.clusterRouter, METHOD.knnRouter, METHOD.clusterCostAware, METHOD.knnCostAware],
    });
    await run('--records', file, '--n-init', '1', '--json', '--no-save');
    expect(listSavedAnalyses(dir)).toHaveLength(before + 1);
    // An id that is not one (a path) reads as absent; a file that breaks the schema is an error naming it and the field.
    expect(readSavedAnalysis(dir, '../../etc/passwd')).toBeUndefined();
    const broken = 'an-20260101-000000000-abcdef';
    writeFileSync(path.join(analysesDir(dir), `${broken}.json`), JSON.stringify({ ...saved, id: broken, report: { ...saved.report, methods: 'x' } }));
    expect(() => readSavedAnalysis(dir, broken)).toThrow(/an-20260101-000000000-abcdef\.json: report\.methods: /);
    expect(listSavedAnalyses(dir).find((a) => a.id === broken)).toMatchObject({ problem: expect.stringContaining('report.methods') });
  });

  it('rejects a bad record naming the file, line, field and expectation', async () => {
    const file = path.join(dir, 'bad.jsonl');
    writeFileSync(file, `${JSON.stringify(records[0])}\n${JSON.stringify({ ...records[1], score: 2 })}\n{oops\n`);
    const error = await run('--records', file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    const [first, second] = (error as InputError).message.split('\n');
    expect(first).toBe(`${file}:2: score: expected a number in [0, 1] or null`);
    // JSON.parse's own wording differs between Node versions.
    expect(second).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3: not valid JSON \\(`));
  });

  it('exits as bad input for a missing input, a bad flag value or a plot name without .svg', async () => {
    await expect(run()).rejects.toThrow(/no input: give --llmrouterbench-dir DIR, --records FILE\.jsonl\.\.\., --runs RUN\.\.\. or --latest-runs/);
    await expect(run('--records', path.join(dir, 'absent.jsonl'))).rejects.toThrow(/absent\.jsonl: cannot read: ENOENT/);
    await expect(run('--records', 'x.jsonl', '--plot', 'plot.png')).rejects.toThrow(/--plot: expected a file name ending in \.svg/);
    const error = await run('--records', 'x.jsonl', '--train-ratio', '1.5').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CommanderError);
    expect((error as CommanderError).message).toMatch(/--train-ratio.*expected a number strictly between 0 and 1, got "1.5"/);
  });

  it('has --help with an example', async () => {
    const error = await run('--help').catch((e: unknown) => e);
    expect((error as CommanderError).exitCode).toBe(0);
  });
});

describe('OpenAI-compatible embeddings client', () => {
  it('embeds in batches through /v1/embeddings, in input order', async () => {
    const server = await startReferenceModel({ port: 0, recordRequests: true });
    try {
      const texts = ['what is 2+2', 'reverse a string', '', 'the third text', 'and a fifth'];
      const matrix = await embedViaEndpoint(texts, { endpoint: server.url, model: 'reference', batchSize: 2 });
      expect(matrix.rows).toBe(5);
      expect(server.requests.filter((r) => r.path === '/v1/embeddings')).toHaveLength(3);
      texts.forEach((text, row) => {
        const expected = embed(text || ' ');
        expected.forEach((v, j) => expect(matrix.data[row * matrix.dim + j]).toBeCloseTo(v, 6));
      });
    } finally {
      await server.close();
    }
  });
});
