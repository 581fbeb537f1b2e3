// `br analyze --llmrouterbench-dir` on a release large enough for the analysis thread (analysis/analysis-thread.ts),
// as the CLI runs it: from its bundle, the thread started from the bundle's own build of that module. The
// report is the one computed in this process on a single thread, figure for figure.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { embedHashedTfidf, TWO_THREADS_MIN_TEXTS } from '../analysis/hashed-tfidf-embedder.js';
import { loadLlmRouterBench, TWO_THREADS_MIN_BYTES } from '../analysis/load-llmrouterbench.js';
import { buildQueryPool } from '../analysis/query-pool.js';
import { analyzeRouting, LLMROUTERBENCH_DEFINITIONS, reportFigures, type RoutingReport } from '../analysis/routing-analysis.js';
import { writeLlmRouterBenchTree } from '../perf/llmrouterbench-tree.js';
import { br } from './support/harness.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'br-analyze-release-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('br analyze on a release of 35 MB', () => {
  it('reads it on two threads and reports what one thread computes', async () => {
    const tree = writeLlmRouterBenchTree(dir, { models: 10, datasets: 2, promptsPerDataset: 2100 });
    expect(tree.bytes).toBeGreaterThan(TWO_THREADS_MIN_BYTES);

    const cli = await br(['analyze', '--llmrouterbench-dir', dir, '--json'], { BENCHROUTER_HOME: path.join(dir, 'home') });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stderr).toContain(`${dir}: 42000 records from 20 result files (skipped 0 demo, 0 superseded by newer files), read on 2 threads`);
    const fromCli = JSON.parse(cli.stdout) as RoutingReport;
    expect(fromCli.pool.queries).toBeGreaterThanOrEqual(TWO_THREADS_MIN_TEXTS);

    const load = await loadLlmRouterBench(dir, 1);
    expect(load.threads).toBe(1);
    const pool = buildQueryPool(load.records, LLMROUTERBENCH_DEFINITIONS.missingRecords);
    // The embedder as it runs on one thread, whatever the number of texts.
    const oneThread = { name: fromCli.embedder, embed: async (texts: readonly string[], fit: Int32Array) => embedHashedTfidf(texts, fit) };
    const here = await analyzeRouting(pool, fromCli.options, oneThread);
    expect(JSON.parse(JSON.stringify(reportFigures(fromCli)))).toEqual(JSON.parse(JSON.stringify(reportFigures(here))));
  });
});
