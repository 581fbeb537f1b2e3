// perf/scale: one run of 3,000 no-op jobs (30 tasks × 100 repeats) at concurrency 16, through a real
// `br worker`. Prints wall time, jobs/s, the run workflow's largest history (events, bytes) over its
// continue-as-new chain, the largest payload in it, and how long `br results` takes for the run (and
// reading its jobs' results from its result pages), `br leaderboard`, and the dashboard's run page.
// Targets: completes; no history over 10,240 events; no payload over 256 KB; `br results` and
// `br leaderboard` under 2 s; the run page under 1 s.
//
//   npm run perf:scale -- [jobs] [concurrency] [jobs per execution]
//   BENCHROUTER_PERF_HOSTS=2 npm run perf:scale -- 10000 16
//
// With BENCHROUTER_PERF_HOSTS=N the run goes to the compose stack with N worker hosts of their own Docker
// engines (`scripts/cluster.sh up --hosts N`, its images built first when missing), concurrency / N
// containers a host, instead of one worker beside the embedded dev server.
//
// The third argument scales the run down with its boundaries kept: 600 jobs at 200 per execution cross
// two continue-as-new boundaries, as 3,000 at the default 1,000 do.

import proto from '@temporalio/proto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withJobs } from '../client/run-jobs.js';
import { connectClient, createRunSpec, submitRun } from '../client/runs.js';
import { settingsFrom } from '../config/settings.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { makeNoopBenchmark } from './noop-tasks.js';
import { addToken } from '../api/api-tokens.js';
import { JOBS_PER_PAGE } from '../api/dashboard-pages.js';
import { launchChromium } from '../test/support/chromium.js';
import { checkoutScratchDir, startClusterStack } from './cluster-stack.js';
import { repoRoot, run, startServe, startStack, stopProcess, type PerfStack } from './perf-support.js';

const { Payload } = proto.temporal.api.common.v1;
const { History } = proto.temporal.api.history.v1;
const JOBS = Number(process.argv[2] ?? 3000);
const CONCURRENCY = Number(process.argv[3] ?? 16);
const JOBS_PER_EXECUTION = process.argv[4] ? Number(process.argv[4]) : undefined;
const TASKS = 30;

/** Every payload's byte size in a history event, wherever it sits (input, result, memo, failure details). */
function payloadSizes(value: unknown, into: number[] = []): number[] {
  if (value === null || typeof value !== 'object') return into;
  if (value instanceof Uint8Array) return into;
  const record = value as Record<string, unknown>;
  if (record.data instanceof Uint8Array && 'metadata' in record) into.push(Payload.encode(record as proto.temporal.api.common.v1.IPayload).finish().length);
  else for (const child of Object.values(record)) payloadSizes(child, into);
  return into;
}

/**
 * The dashboard's run page of the run through `br serve` (target < 1 s): the first view (which reads the
 * run's result from its pages) after the dashboard's home (the server's first request, timed too), a later
 * view (kept), and a load in Chromium to its `load` event, best of 3.
 */
async function timeRunPage(stack: Pick<PerfStack, 'env' | 'home'>, runId: string, jobs: number): Promise<void> {
  const tokensFile = path.join(stack.home, 'api-tokens.json');
  const authorization = `Bearer ${addToken(tokensFile, 'perf-scale', false)}`;
  const serve = await startServe(stack.env, tokensFile);
  const pageUrl = `${serve.url}/ui/runs/${encodeURIComponent(runId)}`;
  const get = async (url = pageUrl) => {
    const start = performance.now();
    const response = await fetch(url, { headers: { authorization } });
    const body = await response.text();
    if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}: ${body.slice(0, 500)}`);
    if (url === pageUrl && jobs > JOBS_PER_PAGE && !body.includes(`of ${jobs}</span>`))
      throw new Error(`the run page does not say it shows a page of ${jobs} jobs`);
    return { seconds: (performance.now() - start) / 1000, bytes: body.length };
  };
  const browser = await launchChromium();
  try {
    // As a user arrives: the dashboard's home first (the server's own first request, its code cold), then the run.
    const home = await get(`${serve.url}/`);
    const first = await get();
    const later = [await get(), await get(), await get()].sort((a, b) => a.seconds - b.seconds)[0]!;
    const page = await (await browser.newContext({ extraHTTPHeaders: { authorization } })).newPage();
    const loads: number[] = [];
    for (let i = 0; i < 3; i++) {
      const start = performance.now();
      await page.goto(pageUrl, { waitUntil: 'load' });
      loads.push((performance.now() - start) / 1000);
    }
    const rows = await page.locator('#jobs tbody tr').count();
    console.log(
      `dashboard: home page ${home.seconds.toFixed(2)} s (the server's first request); run page: first view ${first.seconds.toFixed(2)} s, later views ${later.seconds.toFixed(3)} s (${(later.bytes / 1024).toFixed(0)} KB of HTML, ${rows} of ${jobs} jobs on the page); in Chromium to its load event ${Math.min(...loads).toFixed(2)} s (best of 3; target < 1 s)`,
    );
  } finally {
    await browser.close();
    await stopProcess(serve.child);
  }
}

const HOSTS = process.env.BENCHROUTER_PERF_HOSTS ? Number(process.env.BENCHROUTER_PERF_HOSTS) : undefined;

/** One worker beside the embedded dev server, or the compose stack's worker hosts (BENCHROUTER_PERF_HOSTS). */
async function stackFor(dir: string): Promise<Pick<PerfStack, 'env' | 'home' | 'stop'> & { cpuSeconds?: () => Record<string, number> }> {
  if (HOSTS === undefined) return startStack('scale');
  if (!Number.isInteger(HOSTS) || HOSTS < 1)
    throw new Error(`BENCHROUTER_PERF_HOSTS: expected a whole number of hosts, got "${process.env.BENCHROUTER_PERF_HOSTS}"`);
  const stack = await startClusterStack('scale', HOSTS, Math.ceil(CONCURRENCY / HOSTS), [dir]);
  console.log(
    `cluster: scripts/cluster.sh up --hosts ${HOSTS} took ${stack.upSeconds.toFixed(0)} s (image builds included); ${Math.ceil(CONCURRENCY / HOSTS)} containers a host`,
  );
  return stack;
}

async function main(): Promise<void> {
  // On the hosts a benchmark is found by its path in their copy of the checkout: generated inside it.
  const dir = HOSTS === undefined ? path.join(mkdtempSync(path.join(os.tmpdir(), 'br-perf-scale-')), 'perf-noop') : checkoutScratchDir(`scale-noop-${TASKS}`);
  makeNoopBenchmark(dir, TASKS);
  const stack = await stackFor(dir);
  try {
    const settings = settingsFrom(stack.env, os.homedir());
    const client = await connectClient(settings);
    const spec = createRunSpec(loadBenchmark(dir), {
      model: 'noop',
      endpoint: 'http://127.0.0.1:9/v1',
      preflight: false,
      concurrency: CONCURRENCY,
      repeats: Math.ceil(JOBS / TASKS),
      ...(JOBS_PER_EXECUTION ? { jobsPerExecution: JOBS_PER_EXECUTION } : {}),
    });
    const jobs = TASKS * spec.options.repeats;

    const cpuBefore = stack.cpuSeconds?.();
    const started = performance.now();
    const handle = await submitRun(client, settings, spec);
    const result = await handle.result();
    const wall = (performance.now() - started) / 1000;
    const jobCount = result.jobCount ?? result.jobs.length; // a small run's result holds its jobs itself
    if (result.status !== 'COMPLETED' || jobCount !== jobs) throw new Error(`the run ended ${result.status} with ${jobCount} of ${jobs} jobs`);
    console.log(
      `${jobs} no-op jobs at concurrency ${CONCURRENCY}, ${spec.options.jobsPerExecution ?? 'default'} jobs per execution: ${wall.toFixed(1)} s wall, ${(jobs / wall).toFixed(2)} jobs/s, status ${result.status}`,
    );

    if (cpuBefore) {
      const after = stack.cpuSeconds!();
      const used = Object.entries(after).map(([service, total]) => `${service} ${(total - (cpuBefore[service] ?? 0)).toFixed(0)} s`);
      console.log(`CPU during the run, by container: ${used.join(', ')} (a host: its worker, inner Docker daemon and task containers)`);
    }

    // The run's continue-as-new chain: every execution of its workflow id.
    const executions: string[] = [];
    for await (const info of client.workflow.list({ query: `WorkflowId = '${spec.runId}'` })) executions.push(info.runId);
    const largest = { events: 0, bytes: 0 };
    let largestPayload = 0;
    for (const runId of executions) {
      const history = await client.workflow.getHandle(spec.runId, runId).fetchHistory();
      const bytes = History.encode(history).finish().length;
      largest.events = Math.max(largest.events, history.events?.length ?? 0);
      largest.bytes = Math.max(largest.bytes, bytes);
      largestPayload = Math.max(largestPayload, ...payloadSizes(history));
    }
    console.log(
      `run workflow: ${executions.length} executions; largest history ${largest.events} events, largest ${(largest.bytes / 1024).toFixed(0)} KB (target ≤ 10,240 events)`,
    );
    console.log(`largest payload in the run's histories: ${(largestPayload / 1024).toFixed(1)} KB (target ≤ 256 KB)`);

    // How long a read of every job's result takes from the pages the run wrote (what `br results` reads), best of 3.
    const best = async (read: () => Promise<unknown>): Promise<number> => {
      const seconds: number[] = [];
      for (let i = 0; i < 3; i++) {
        const start = performance.now();
        await read();
        seconds.push((performance.now() - start) / 1000);
      }
      return Math.min(...seconds);
    };
    const read = await withJobs(client.workflow, result);
    if (read.jobs.length !== jobs) throw new Error(`read ${read.jobs.length} of ${jobs} jobs back`);
    const readSeconds = await best(() => withJobs(client.workflow, result));
    console.log(`reading the ${jobs} jobs' results: ${readSeconds.toFixed(2)} s from ${result.resultPages?.length ?? 0} result pages (best of 3)`);
    // `br results` as a user waits for it (whole process), three times each: the `br` launcher's cached
    // bundle, and the same CLI transpiled by tsx at start (what `br` ran before the bundle), as the baseline.
    const bundled = path.join(repoRoot, 'br');
    const tsxArgs = ['--import', 'tsx', path.join(repoRoot, 'cli', 'bin.ts')];
    await run(bundled, ['--help'], stack.env); // builds the bundle if the sources changed, outside the timing
    const timed = async (command: string, args: string[]): Promise<number> => {
      const seconds: number[] = [];
      for (let i = 0; i < 3; i++) {
        const start = performance.now();
        const out = await run(command, args, stack.env);
        seconds.push((performance.now() - start) / 1000);
        if (out.code !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${out.stderr}`);
        if (args.includes('results') && (JSON.parse(out.stdout) as { jobs: unknown[] }).jobs.length !== jobs)
          throw new Error(`br results listed the wrong number of jobs`);
      }
      return Math.min(...seconds);
    };
    const results = ['results', spec.runId, '--json'];
    const cli = { help: await timed(bundled, ['--help']), results: await timed(bundled, results) };
    const viaTsx = { help: await timed(process.execPath, [...tsxArgs, '--help']), results: await timed(process.execPath, [...tsxArgs, ...results]) };
    console.log(
      `br results: ${cli.results.toFixed(2)} s as a user waits (whole process, best of 3; target < 2 s), ${readSeconds.toFixed(2)} s of it reading the ${jobs} jobs' results from pages; through tsx ${viaTsx.results.toFixed(2)} s (${(viaTsx.results / cli.results).toFixed(1)}x)`,
    );
    console.log(`br --help: ${cli.help.toFixed(2)} s (best of 3); through tsx ${viaTsx.help.toFixed(2)} s (${(viaTsx.help / cli.help).toFixed(1)}x)`);
    const leaderboard = await timed(bundled, ['leaderboard', '--format', 'json']);
    console.log(`br leaderboard: ${leaderboard.toFixed(2)} s with this run among the finished ones (whole process, best of 3; target < 2 s)`);
    await timeRunPage(stack, spec.runId, jobs);
    await client.connection.close();
  } finally {
    await stack.stop();
    rmSync(HOSTS === undefined ? path.dirname(dir) : dir, { recursive: true, force: true });
  }
}

await main();
