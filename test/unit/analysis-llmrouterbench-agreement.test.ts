// `br analyze` on LLMRouterBench's release layout agrees with LLMRouterBench's own loader and
// BaselineAggregator (test mode): the expected values below were computed in Python by a line-by-line
// transcription of its split_by_dataset_then_prompt and to_summary_table on the same files
// (test/support/agreement-release.ts). Also: the release at full scale, Python's NaN, and
// accuracy ties that float sums would break.

import { Command } from 'commander';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { routeByRanks } from '../../analysis/cluster-router.js';
import { costSave } from '../../analysis/cost-setting.js';
import { routeByNeighbourBalance, routeByNeighbourScore } from '../../analysis/knn-router.js';
import { hashedTfidfEmbedder } from '../../analysis/hashed-tfidf-embedder.js';
import { loadLlmRouterBench } from '../../analysis/load-llmrouterbench.js';
import { outcomeOf, type QuerySet } from '../../analysis/outcome.js';
import { paretoFrontier } from '../../analysis/pareto-frontier.js';
import { parsePythonJson } from '../../analysis/python-json.js';
import { buildQueryPool } from '../../analysis/query-pool.js';
import { analyzeRouting, METHOD, type RoutingReport } from '../../analysis/routing-analysis.js';
import { splitQueries, splitUnits } from '../../analysis/train-test-split.js';
import { registerAnalyzeCommand } from '../../cli/commands/analyze.js';
import { agreementRelease } from '../support/agreement-release.js';
import { writeReleaseFile } from '../support/llmrouterbench-release.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'br-agreement-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const release = path.join(dir, 'release');
agreementRelease(release);

async function analyze(...args: string[]): Promise<{ report: RoutingReport; notes: string[] }> {
  const out: string[] = [];
  const notes: string[] = [];
  const program = new Command('br').exitOverride();
  registerAnalyzeCommand(program, { stdout: (s) => void out.push(s), say: (s) => notes.push(s), env: { BENCHROUTER_HOME: dir } });
  await program.parseAsync(['node', 'br', 'analyze', ...args, '--json', '--k', '2', '--n-init', '1']);
  return { report: JSON.parse(out.join('')) as RoutingReport, notes };
}

const method = (report: RoutingReport, name: string) => report.methods.find((m) => m.name === name)!;

describe('agreement with LLMRouterBench on its release layout', () => {
  // LLMRouterBench's split_by_dataset_then_prompt(records, 0.7, 42), test side, in its record order.
  const upstreamTest = [
    'alpha/valid#0',
    'alpha/test#1',
    'alpha/test#3',
    'alpha/test#4',
    'alpha/valid#3',
    'alpha/valid#4',
    'alpha/test#8',
    'alpha/valid#8',
    'alpha/valid#9',
    'alpha/valid#11',
    'alpha/test#13',
    'alpha/test#18',
    'alpha/test#26',
    'beta#1',
    'beta#3',
    'beta#24',
    'beta#8',
    'beta#11',
    'beta#12',
    'beta#14',
    'beta#19',
    'beta#21',
  ];

  it('splits on unique prompt text per dataset, splits of a dataset together, prompts by lowest index: the same test queries in the same order', async () => {
    const pool = buildQueryPool((await loadLlmRouterBench(release)).records, 'keep');
    const { test } = splitQueries(pool, { seed: 42, trainRatio: 0.7, splitUnit: 'prompt' });
    expect([...test].map((q) => `${pool.datasets[pool.queryDataset[q]!]}#${pool.queryIndex[q]}`)).toEqual(upstreamTest);
    // alpha/test#4 and alpha/valid#3 share a prompt, as do alpha/test#2 and #7: each pair on one side.
    expect(test).toContain(pool.queryIndex.findIndex((idx, q) => idx === '3' && pool.datasets[pool.queryDataset[q]!] === 'alpha/valid'));
  });

  it('splitting per instance instead puts some duplicated prompts on both sides', async () => {
    const pool = buildQueryPool((await loadLlmRouterBench(release)).records, 'keep');
    const { train, test } = splitQueries(pool, { seed: 42, trainRatio: 0.7, splitUnit: 'instance' });
    const promptsOf = (rows: Int32Array) => new Set([...rows].map((q) => `${pool.datasetGroup[pool.queryDataset[q]!]}:${pool.queryPrompt[q]}`));
    const trainPrompts = promptsOf(train);
    expect([...promptsOf(test)].filter((p) => trainPrompts.has(p)).length).toBeGreaterThan(0);
    const prompt = splitQueries(pool, { seed: 42, trainRatio: 0.7, splitUnit: 'prompt' });
    const promptTrain = promptsOf(prompt.train);
    expect([...promptsOf(prompt.test)].filter((p) => promptTrain.has(p))).toEqual([]);
  });

  it('Random (seeded draw), Max Expert as Dataset Oracle, Oracle (any score > 0) and every model agree, with (dataset, split) kept apart and mc kept without beta', async () => {
    const { report, notes } = await analyze('--llmrouterbench-dir', release, '--seed', '42', '--train-ratio', '0.7');
    expect(report.pool.datasets.map((d) => d.name)).toEqual(['alpha/test', 'alpha/valid', 'beta']);
    expect(report.pool.testQueries).toBe(upstreamTest.length);
    // BaselineAggregator.to_summary_table(test_mode=True), Dataset-Avg and Dataset-Sum columns.
    const close = (actual: number, expected: number) => expect(Math.abs(actual - expected)).toBeLessThanOrEqual(1e-15);
    close(method(report, METHOD.randomDraw).acc, 0.39153439153439157);
    close(method(report, METHOD.randomDraw).cost, 0.08000000000000002);
    close(method(report, METHOD.datasetOracle).acc, 0.5793650793650794);
    close(method(report, METHOD.datasetOracle).cost, 0.14100000000000001); // upstream's own total is 0.42, the largest model total
    close(method(report, METHOD.oracle).acc, 1);
    close(method(report, METHOD.oracle).cost, 0.21900000000000003);
    const models = Object.fromEntries(report.models.map((m) => [m.model, m]));
    close(models['ma']!.acc, 0.4682539682539682);
    close(models['mb']!.acc, 0.38359788359788355);
    close(models['mc']!.acc, 0.16666666666666666);
    close(models['ma']!.cost, 0.041999999999999996);
    close(models['mb']!.cost, 0.42000000000000004);
    close(models['mc']!.cost, 0.07500000000000001);
    expect([report.options.splitUnit, report.options.oracleRule, report.pool.missingRecords]).toEqual(['prompt', 'any-positive', 'keep']);
    expect(report.pool.gaps).toEqual([{ dataset: 'beta', queries: 25, missingModels: ['mc'], partialModels: [], dropped: false }]);
    expect(notes).toContain('beta: records missing for mc (all 25): kept with the models that have its queries');
    expect(notes).toContain("definitions: --split-unit prompt --oracle-rule any-positive --missing-records keep (LLMRouterBench's for its layout)");
  });

  it("--oracle-rule max-score counts partial credit at its value, so the Oracle drops below upstream's", async () => {
    const { report } = await analyze('--llmrouterbench-dir', release, '--oracle-rule', 'max-score');
    expect(method(report, METHOD.oracle).acc).toBeLessThan(1);
    expect(method(report, METHOD.oracle).datasetAcc['beta']).toBeLessThan(1);
    expect(method(report, METHOD.oracle).datasetAcc['alpha/test']).toBe(1);
  });

  it('--missing-records drop drops beta, which mc lacks, and says so', async () => {
    const { report, notes } = await analyze('--llmrouterbench-dir', release, '--missing-records', 'drop');
    expect(report.pool.datasets.map((d) => d.name)).toEqual(['alpha/test', 'alpha/valid']);
    expect(report.pool.droppedByDataset).toEqual({ beta: 25 });
    expect(notes).toContain('beta: records missing for mc (all 25): dataset dropped');
  });

  it('routers never choose a model without a record for the query, even the one they rank first', async () => {
    // Two test queries, three models; the third model is the best by every measure but lacks query 1.
    const allowed = Uint8Array.from([1, 1, 1, 1, 1, 0]);
    const stats = { models: 3, meanScore: Float64Array.from([0.2, 0.5, 0.9, 0.2, 0.5, 0.9]), meanCost: new Float64Array(6) };
    expect([...routeByNeighbourScore(stats)]).toEqual([2, 2]);
    expect([...routeByNeighbourScore(stats, allowed)]).toEqual([2, 1]);
    expect([...routeByNeighbourBalance(stats, 1, allowed)]).toEqual([2, 1]);
    const affinity = { topK: 1, clusters: Int32Array.from([0, 0]), weights: Float64Array.from([1, 1]) };
    const ranks = Int32Array.from([2, 1, 0]);
    expect([...routeByRanks(affinity, ranks, 3, allowed)]).toEqual([2, 1]);
    // End to end, mc (no beta records) is never routed a beta query: every method's beta mean exists.
    const pool = buildQueryPool((await loadLlmRouterBench(release)).records, 'keep');
    const report = await analyzeRouting(pool, { splitUnit: 'prompt', oracleRule: 'any-positive', k: 2, nInit: 1, knnK: 1 }, hashedTfidfEmbedder());
    for (const m of report.methods) expect(m.datasetAcc['beta']).not.toBeNull();
  });

  it('gives each empty prompt a unit of its own (upstream lumps them into one)', () => {
    const records = [0, 1, 2, 3].map((index) => ({ benchmark: 'd', model: 'm', index, prompt: index < 3 ? '' : 'same', score: 1 }));
    records.push({ benchmark: 'd', model: 'm', index: 4, prompt: 'same', score: 1 });
    const pool = buildQueryPool(records);
    expect(splitUnits(pool, 'prompt')).toEqual([[[0], [1], [2], [3, 4]]]);
  });
});

describe('the full release', () => {
  it('analyses 160,000 records from the release layout (a spread of them into push() overflowed the stack)', async () => {
    const big = path.join(dir, 'big');
    const models = 32;
    for (const dataset of ['d1', 'd2']) {
      for (let m = 0; m < models; m++) {
        const records = Array.from({ length: 2500 }, (_, i) => ({
          index: i,
          prompt: `${dataset} q${i} w${i % 97} v${i % 13}`,
          score: (i + m) % 3 === 0 ? 1 : 0,
          cost: (m + 1) * 1e-4,
        }));
        writeReleaseFile(big, dataset, 'test', `model-${String(m).padStart(2, '0')}`, records);
      }
    }
    const { report, notes } = await analyze('--llmrouterbench-dir', big, '--knn-k', '1', '--embedding-dim', '64');
    expect(notes[0]).toBe(`${big}: 160000 records from 64 result files (skipped 0 demo, 0 superseded by newer files)`);
    expect(report.pool.queries).toBe(5000);
    expect(report.pool.models).toHaveLength(models);
  });
});

describe("Python's NaN", () => {
  it('reads NaN and Infinity tokens, counts a NaN cost as missing and reports it', async () => {
    const nanDir = path.join(dir, 'nan');
    const records = [0, 1, 2, 3].map((index) => ({ index, prompt: `q${index}`, score: index % 2, cost: 0.5 }));
    writeReleaseFile(nanDir, 'd', 'test', 'a', records);
    const body = JSON.stringify({
      model_name: 'b',
      dataset_name: 'd',
      split: 'test',
      demo: false,
      records: records.map((r) => ({ ...r, cost: r.index === 1 ? '@NaN' : r.cost })),
    });
    writeReleaseFile(nanDir, 'd', 'test', 'b', [], undefined, body.replace('"@NaN"', 'NaN'));
    const { report, notes } = await analyze('--llmrouterbench-dir', nanDir, '--train-ratio', '0.5');
    expect(report.pool.nanCosts).toBe(1);
    expect(notes).toContain("1 records have a NaN cost (Python's missing value): counted as missing, cost 0");
    const pool = buildQueryPool((await loadLlmRouterBench(nanDir)).records);
    expect([...pool.costs]).toEqual([0.5, 0.5, 0.5, 0, 0.5, 0.5, 0.5, 0.5]);
    expect(parsePythonJson('{"a": [NaN, -Infinity, Infinity], "b": "NaN"}')).toEqual({ a: [NaN, -Infinity, Infinity], b: 'NaN' });
  });
});

describe('accuracy ties are exact', () => {
  // Three datasets of 90, 100 and 80 queries. Counts (0, 12, 2) and (9, 2, 2) give the same macro
  // Acc, 29/600, but summed as floats the first comes out one unit in the last place lower.
  const sizes = [90, 100, 80];
  const set: QuerySet = {
    rows: Int32Array.from({ length: 270 }, (_, i) => i),
    dataset: Int32Array.from({ length: 270 }, (_, i) => (i < 90 ? 0 : i < 190 ? 1 : 2)),
    datasetCount: Int32Array.from(sizes),
  };
  const outcome = (counts: number[], cost: number) => {
    const score = new Float64Array(270);
    let start = 0;
    counts.forEach((c, d) => {
      score.fill(1, start, start + c);
      start += sizes[d]!;
    });
    return { ...outcomeOf(set, score, new Float64Array(270)), cost };
  };
  const router = outcome([0, 12, 2], 4);
  const bestSingle = outcome([9, 2, 2], 10);

  it("a setting with Best Single's accuracy counts for CostSave even when its float sum is lower", () => {
    expect(router.acc).toBeLessThan(bestSingle.acc); // the float noise the comparison must see through
    expect(costSave([router], bestSingle)).toBe(0.6);
    expect(costSave([outcome([0, 11, 2], 4)], bestSingle)).toBeNull();
  });

  it('the frontier drops a point an equally accurate cheaper one dominates, and one an equally expensive more accurate one dominates', () => {
    const dearer = { ...bestSingle, cost: 12 };
    expect(paretoFrontier([router, dearer])).toEqual([0]);
    // 0.1 + 0.2 and 0.3 are the same cost: the more accurate point dominates.
    expect(
      paretoFrontier([
        { cost: 0.1 + 0.2, acc: 0.6 },
        { cost: 0.3, acc: 0.5 },
      ]),
    ).toEqual([0]);
    // Equal points are both kept.
    expect(paretoFrontier([router, { ...bestSingle, cost: 4 }])).toEqual([0, 1]);
  });
});
