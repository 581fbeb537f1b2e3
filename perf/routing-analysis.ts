// `npm run perf:routing`: the full routing analysis, α sweeps included, on a synthetic pool at
// LLMRouterBench's scale (33 models × 12,000 queries, about 400,000 records), against the targets
// of ≤ 5 s wall time and ≤ 2 GiB peak RSS. Phase times show where the time goes.

import { hashedTfidfEmbedder } from '../analysis/hashed-tfidf-embedder.js';
import { buildQueryPool } from '../analysis/query-pool.js';
import { analyzeRouting } from '../analysis/routing-analysis.js';
import { syntheticPool } from '../analysis/synthetic-pool.js';

const TARGET_SECONDS = 5;
const TARGET_RSS_BYTES = 2 * 1024 ** 3;
const MODELS = 33;
const DATASETS = 20;
const QUERIES_PER_DATASET = 600;

let peakRss = process.memoryUsage.rss();
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 20);
const samplePeak = () => (peakRss = Math.max(peakRss, process.memoryUsage.rss()));

const generated = performance.now();
const { records } = syntheticPool({ models: MODELS, datasets: DATASETS, queriesPerDataset: QUERIES_PER_DATASET, topics: 24, generalistEvery: 8, seed: 1 });
const generateSeconds = (performance.now() - generated) / 1000;
samplePeak();
const rssBefore = process.memoryUsage.rss();

const phases: Array<[string, number]> = [];
const started = performance.now();
const pool = buildQueryPool(records);
phases.push(['join records', performance.now() - started]);
const report = await analyzeRouting(pool, {}, hashedTfidfEmbedder(), (phase, ms) => {
  phases.push([phase, ms]);
  samplePeak();
});
const seconds = (performance.now() - started) / 1000;
samplePeak();
clearInterval(sampler);

const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
const settings = report.costAware.reduce((n, r) => n + r.settings.length, 0);
const lines = [
  `routing analysis: ${MODELS} models × ${report.pool.queries} queries = ${records.length} records, ${DATASETS} datasets (${report.pool.trainQueries} train / ${report.pool.testQueries} test)`,
  `  embedder ${report.embedder}; cluster router k=${report.options.k} top_k=${report.options.topK} β=${report.options.beta} n_init=${report.options.nInit}; kNN k=${report.options.knnK}; ${settings} α settings`,
  `  (synthetic records generated in ${generateSeconds.toFixed(2)} s, not counted; RSS before the analysis ${gib(rssBefore)})`,
  ...phases.map(([name, ms]) => `  ${name.padEnd(26)} ${(ms / 1000).toFixed(3)} s`),
  `wall time  ${seconds.toFixed(2)} s   (target ≤ ${TARGET_SECONDS} s)   ${seconds <= TARGET_SECONDS ? 'OK' : 'OVER'}`,
  `peak RSS   ${gib(peakRss)}   (target ≤ ${gib(TARGET_RSS_BYTES)})   ${peakRss <= TARGET_RSS_BYTES ? 'OK' : 'OVER'}`,
  '',
  ...report.methods.map((m) => `  ${m.name.padEnd(22)} acc ${m.acc.toFixed(4)}  cost $${m.cost.toFixed(2)}`),
  ...report.costAware.map((r) => `  ${r.name.padEnd(28)} PerfGain ${pct(r.perfGain)}  CostSave ${pct(r.costSave)}  ParetoDist ${r.paretoDist?.toFixed(4) ?? 'n/a'}`),
];
process.stdout.write(`${lines.join('\n')}\n`);
process.exitCode = seconds <= TARGET_SECONDS && peakRss <= TARGET_RSS_BYTES ? 0 : 1;

function pct(x: number | null): string {
  return x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`;
}
