// `npm run perf:routing`: the full routing analysis, α sweeps included, at LLMRouterBench's scale,
// in two cases, each in a process of its own so each has its own peak RSS:
//   pool     a synthetic pool of 33 models × 12,000 queries (396,000 records) handed straight to the
//            analysis (target ≤ 5 s, ≤ 1 GiB); phase times show where the time goes;
//   release  LLMRouterBench's release shape written under the temp directory in its layout (33 models ×
//            4 datasets × 3,000 prompts, 396,000 records with full text, ~320 MB of JSON) and
//            `br analyze --llmrouterbench-dir` run on it end to end, as a user runs it: process start,
//            loading, baselines, the built-in routers, output (target ≤ 5 s, ≤ 1 GiB); with wall time,
//            CPU time and peak RSS of a baseline timed the same way in the same run (a node process
//            that only reads and JSON.parses the files) and br's ratios to it.
//
//   npm run perf:routing -- [pool|release]

import { REPO_ROOT } from '../config/repository.js';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hashedTfidfEmbedder } from '../analysis/hashed-tfidf-embedder.js';
import { buildQueryPool } from '../analysis/query-pool.js';
import { analyzeRouting, METHOD, type RoutingReport } from '../analysis/routing-analysis.js';
import { syntheticPool } from '../analysis/synthetic-pool.js';

const TARGET_RSS_BYTES = 1024 ** 3;
const MODELS = 33;
const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;

// Not perf-support.js: it loads the Temporal client, whose heap the pool case would then measure around.

async function main(): Promise<void> {
  const which = process.argv[2];
  if (which === 'pool') process.exitCode = await poolCase();
  else if (which === 'release') process.exitCode = await releaseCase();
  else if (which === undefined) {
    // Each case in a child process, so the second's peak RSS does not carry the first's heap.
    let failed = 0;
    for (const name of ['pool', 'release']) {
      const code = await new Promise<number>((resolve) =>
        spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'perf', 'routing-analysis.ts'), name], { cwd: REPO_ROOT, stdio: 'inherit' }).on(
          'exit',
          (c) => resolve(c ?? 1),
        ),
      );
      if (code !== 0) failed++;
      process.stdout.write('\n');
    }
    process.exitCode = failed ? 1 : 0;
  } else throw new Error(`perf/routing-analysis.ts: expected the case "pool" or "release", got "${which}"`);
}

async function poolCase(): Promise<number> {
  const TARGET_SECONDS = 5;
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
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const pool = buildQueryPool(records);
  phases.push(['join records', performance.now() - started]);
  const report = await analyzeRouting(pool, {}, hashedTfidfEmbedder(), (phase, ms) => {
    phases.push([phase, ms]);
    samplePeak();
  });
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  samplePeak();
  clearInterval(sampler);

  const settings = report.costAware.reduce((n, r) => n + r.settings.length, 0);
  const lines = [
    `pool: ${MODELS} models × ${report.pool.queries} queries = ${records.length} records, ${DATASETS} datasets (${report.pool.trainQueries} train / ${report.pool.testQueries} test)`,
    `  embedder ${report.embedder}; cluster router k=${report.options.k} top_k=${report.options.topK} β=${report.options.beta} n_init=${report.options.nInit}; kNN k=${report.options.knnK}; ${settings} α settings`,
    `  (synthetic records generated in ${generateSeconds.toFixed(2)} s, not counted; RSS before the analysis ${gib(rssBefore)})`,
    ...phases.map(([name, ms]) => `  ${name.padEnd(26)} ${(ms / 1000).toFixed(3)} s`),
    // The search runs on a thread of its own beside k-means; its phase above is only the wait left after k-means.
    `  (kNN router's fit, its neighbour search on its own thread: ${(report.methods.find((m) => m.name === METHOD.knnRouter)?.trainSeconds ?? 0).toFixed(3)} s)`,
    verdict('wall time ', seconds, TARGET_SECONDS, peakRss, (cpu.user + cpu.system) / 1e6),
    ...summary(report),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return seconds <= TARGET_SECONDS && peakRss <= TARGET_RSS_BYTES ? 0 : 1;
}

async function releaseCase(): Promise<number> {
  const { writeLlmRouterBenchTree } = await import('./llmrouterbench-tree.js');
  const TARGET_SECONDS = 5;
  if (!existsSync('/usr/bin/time'))
    throw new Error(`/usr/bin/time: not found; the release case reads the analysing process's peak RSS from GNU time (Debian package "time")`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'br-perf-release-'));
  try {
    // LLMRouterBench's release: 33 models × 4 datasets × 3,000 prompts = 396,000 records with their full
    // text (prompt, raw output, prediction, truth), about 300 MB of JSON.
    const written = performance.now();
    const DATASETS = 4;
    const tree = writeLlmRouterBenchTree(dir, { models: MODELS, datasets: DATASETS, promptsPerDataset: 3000 });
    const writeSeconds = (performance.now() - written) / 1000;
    const megabytes = (tree.bytes / 1e6).toFixed(0);

    // The baseline, measured in the same run and the same way: a node process that only reads and
    // JSON.parses every result file, the floor of any analysis of the tree; the ratio says what the
    // analysis costs on top of reading its input.
    const baseline = await timedProcess(process.execPath, ['-e', READ_AND_PARSE, dir]);
    if (baseline.code !== 0) throw new Error(`the read-and-parse baseline exited ${baseline.code}:\n${baseline.stderr}`);
    // `br` rebuilds its cached bundle on its first start after the sources change: once, outside the timing.
    await timedProcess(path.join(REPO_ROOT, 'br'), ['--help']);
    const result = await timedProcess(path.join(REPO_ROOT, 'br'), ['analyze', '--llmrouterbench-dir', dir, '--json']);
    if (result.code !== 0) throw new Error(`br analyze exited ${result.code}:\n${result.stderr}`);
    const { seconds, cpuSeconds, peak } = result;
    const report = JSON.parse(result.stdout) as RoutingReport;
    const ratio = (a: number, b: number) => `${(a / b).toFixed(1)}x`;
    const lines = [
      `release: br analyze --llmrouterbench-dir over ${MODELS} models × ${DATASETS} datasets = ${tree.files} result files, ${tree.records} records, ${megabytes} MB of JSON (${report.pool.trainQueries} train / ${report.pool.testQueries} test queries)`,
      `  (release written in ${writeSeconds.toFixed(2)} s, not counted; the time is the whole br process: start, load, analysis, JSON out)`,
      ...result.stderr
        .split('\n')
        .filter((l) => l && !l.startsWith('maxrss_kb='))
        .map((l) => `  br: ${l}`),
      verdict('wall time ', seconds, TARGET_SECONDS, peak, cpuSeconds),
      `baseline   a node process that only reads and JSON.parses the ${tree.files} files (${baseline.stdout.trim()} records): wall ${baseline.seconds.toFixed(2)} s, CPU ${baseline.cpuSeconds.toFixed(2)} s, peak RSS ${gib(baseline.peak)}`,
      `ratio      br analyze / baseline: wall ${ratio(seconds, baseline.seconds)}, CPU ${ratio(cpuSeconds, baseline.cpuSeconds)}, peak RSS ${ratio(peak, baseline.peak)}`,
      '',
      ...summary(report),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return seconds <= TARGET_SECONDS && peak <= TARGET_RSS_BYTES ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The baseline's script: reads and parses every result file under the directory given, prints the records counted. */
const READ_AND_PARSE = [
  "const fs = require('node:fs'), path = require('node:path');",
  'let records = 0;',
  'const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {',
  '  const p = path.join(d, e.name);',
  "  if (e.isDirectory()) walk(p); else if (e.name.endsWith('.json')) records += JSON.parse(fs.readFileSync(p, 'utf8')).records.length;",
  '} };',
  'walk(process.argv[1]);',
  'console.log(records);',
].join('\n');

/** Runs a process under GNU time: its wall time, CPU time (user + system) and peak RSS, with its output. */
async function timedProcess(
  command: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string; seconds: number; cpuSeconds: number; peak: number }> {
  const started = performance.now();
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('/usr/bin/time', ['-f', 'maxrss_kb=%M cpu_s=%U+%S', command, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => chunks.push(b));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout: Buffer.concat(chunks).toString('utf8'), stderr }));
  });
  const seconds = (performance.now() - started) / 1000;
  const usage = /maxrss_kb=(\d+) cpu_s=([\d.]+)\+([\d.]+)/.exec(result.stderr);
  return {
    ...result,
    seconds,
    peak: Number(usage?.[1] ?? NaN) * 1024,
    cpuSeconds: Number(usage?.[2] ?? NaN) + Number(usage?.[3] ?? NaN),
  };
}

function verdict(label: string, seconds: number, target: number, peakRss: number, cpuSeconds: number): string {
  // On a shared machine the wall time stretches with the load; the CPU time is what the work costs.
  const load = os.loadavg()[0]!.toFixed(1);
  return [
    `${label} ${seconds.toFixed(2)} s   (target ≤ ${target} s)   ${seconds <= target ? 'OK' : 'OVER'}`,
    `CPU time   ${cpuSeconds.toFixed(2)} s   (user + system; load average ${load} on ${os.cpus().length} cores)`,
    `peak RSS   ${gib(peakRss)}   (target ≤ ${gib(TARGET_RSS_BYTES)})   ${peakRss <= TARGET_RSS_BYTES ? 'OK' : 'OVER'}`,
    '',
  ].join('\n');
}

function summary(report: RoutingReport): string[] {
  return [
    ...report.methods.map((m) => `  ${m.name.padEnd(22)} acc ${m.acc.toFixed(4)}  cost $${m.cost.toFixed(2)}`),
    ...report.costAware.map(
      (r) => `  ${r.name.padEnd(28)} PerfGain ${pct(r.perfGain)}  CostSave ${pct(r.costSave)}  ParetoDist ${r.paretoDist?.toFixed(4) ?? 'n/a'}`,
    ),
  ];
}

function pct(x: number | null): string {
  return x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`;
}

await main();
