// `br artifacts`, `br logs` and `br records` on a machine that did not run the jobs: two `br worker`
// hosts with homes of their own on the dev server, and a submitter with a third. A retry puts one
// run's jobs on both hosts (a carried job on host a, the rerun on host b), so one command reads
// both hosts, and a local directory where a host has one.

import type { Client } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectClient, createRetrySpec, createRunSpec, followRun, runSpecOf, submitRun } from '../client/runs.js';
import { settingsFrom, type Settings } from '../config/settings.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import type { RunResult } from '../runs/run-spec.js';
import { callApi, startApiProcess } from './support/api-process.js';
import { launchChromium } from './support/chromium.js';
import { br } from './support/harness.js';
import { spawnWorker, type WorkerProcess } from './support/processes.js';

let scratch: string;
let queue: string;
let submitter: { env: Record<string, string>; settings: Settings; client: Client };
const workers = new Map<string, WorkerProcess>();
let first: RunResult;
let retry: RunResult;

const record = (index: number, score: number) => JSON.stringify({ index, prediction: String(index), ground_truth: '1', score });

/**
 * `anywhere` succeeds on any host; `needs-marker` only where the worker's dataset directory holds a
 * marker file (host b), so the first run fails it on host a and its retry reruns it on host b.
 */
function writeBenchmark(dir: string): string {
  const task = (name: string, command: string, files: Record<string, string> = {}) => {
    mkdirSync(path.join(dir, 'tasks', name), { recursive: true });
    writeFileSync(path.join(dir, 'tasks', name, 'task.yaml'), `name: ${name}\ncommand: |\n${command.replace(/^/gm, '  ')}\ntimeout: 60\n`);
    for (const [file, text] of Object.entries(files)) writeFileSync(path.join(dir, 'tasks', name, file), text);
  };
  mkdirSync(path.join(dir, 'environments', 'shell'), { recursive: true });
  writeFileSync(path.join(dir, 'environments', 'shell', 'Dockerfile'), 'FROM benchrouter/base:bookworm\n');
  writeFileSync(
    path.join(dir, 'benchmark.yaml'),
    'name: two-hosts\ndescription: one task per host\ntasks:\n  - {name: anywhere, environment: shell}\n  - {name: needs-marker, environment: shell}\n',
  );
  task('anywhere', 'echo "ran anywhere"\ncp records.jsonl "$BENCHROUTER_OUTPUT_DIR/"\necho \'{"overall": 0.5}\' > "$BENCHROUTER_OUTPUT_DIR/result.json"', {
    'records.jsonl': `${record(0, 1)}\n${record(1, 0)}\n`,
  });
  task(
    'needs-marker',
    'test -f "$BENCHROUTER_DATASET_DIR/marker" || { echo "no marker on this host"; exit 1; }\necho "ran with the marker"\n' +
      `printf '%s\\n' '${record(7, 1)}' > "$BENCHROUTER_OUTPUT_DIR/records.jsonl"\necho '{"overall": 1}' > "$BENCHROUTER_OUTPUT_DIR/result.json"`,
  );
  return dir;
}

function hostEnv(host: 'a' | 'b'): Record<string, string> {
  const datasets = path.join(scratch, `datasets-${host}`);
  mkdirSync(datasets, { recursive: true });
  if (host === 'b') writeFileSync(path.join(datasets, 'marker'), '');
  return { ...submitter.env, BENCHROUTER_HOME: path.join(scratch, `home-${host}`), BENCHROUTER_DATASET_DIR: datasets };
}

async function startHost(host: 'a' | 'b'): Promise<void> {
  workers.set(host, await spawnWorker(hostEnv(host), `host-ra-${host}-${queue}`));
}

async function stopHost(host: 'a' | 'b'): Promise<void> {
  await workers.get(host)?.stop();
  workers.delete(host);
}

const hostId = (host: 'a' | 'b') => `host-ra-${host}-${queue}`;

beforeAll(async () => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-remote-artifacts-'));
  queue = randomBytes(3).toString('hex');
  const env = { BENCHROUTER_HOME: path.join(scratch, 'submitter'), TEMPORAL_ADDRESS: inject('temporalAddress'), BENCHROUTER_TASK_QUEUE: `test-ra-${queue}` };
  const settings = settingsFrom(env, os.homedir());
  submitter = { env, settings, client: await connectClient(settings) };
  const benchmark = loadBenchmark(writeBenchmark(path.join(scratch, 'benchmark')));

  // Host a alone: `anywhere` succeeds there, `needs-marker` fails there.
  await startHost('a');
  first = await followRun(
    await submitRun(submitter.client, submitter.settings, createRunSpec(benchmark, { model: 'm', endpoint: 'http://127.0.0.1:9/v1', preflight: false })),
  );
  // Host b alone: the retry reruns `needs-marker` there and carries `anywhere` over from host a.
  await stopHost('a');
  await startHost('b');
  const handle = await submitRun(
    submitter.client,
    submitter.settings,
    createRetrySpec(await runSpecOf(submitter.client.workflow.getHandle(first.runId)), first),
  );
  retry = await followRun(handle);
  // Both hosts up: each serves the files it holds.
  await startHost('a');
}, 600_000);

afterAll(async () => {
  await Promise.all([...workers.values()].map((w) => w.stop()));
  await submitter?.client.connection.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}, 120_000);

describe('a run whose jobs ran on two other hosts', () => {
  it('ran as set up: the carried job on host a, the rerun on host b, nothing on the submitter', () => {
    expect(first.status).toBe('PARTIAL');
    expect(retry.status).toBe('COMPLETED');
    const byTask = Object.fromEntries(retry.jobs.map((j) => [j.task, j]));
    expect(byTask.anywhere).toMatchObject({ status: 'SUCCEEDED', host: hostId('a'), carriedFrom: first.runId });
    expect(byTask['needs-marker']).toMatchObject({ status: 'SUCCEEDED', host: hostId('b') });
    expect(existsSync(submitter.settings.artifactsRoot)).toBe(false);
  });

  it('br logs prints each job’s log tail, fetched from the host that ran it', async () => {
    const out = await br(['logs', retry.runId], submitter.env);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const anywhere = retry.jobs.find((j) => j.task === 'anywhere')!;
    const rerun = retry.jobs.find((j) => j.task === 'needs-marker')!;
    const [firstJob, secondJob] = [anywhere, rerun].sort((x, y) => x.jobId.localeCompare(y.jobId));
    const tail = (job: typeof anywhere) => (job === anywhere ? 'ran anywhere\n' : 'ran with the marker\n');
    // A carried job keeps the id it had in the run that produced it, so only the retry's own prefix goes.
    const short = (jobId: string) => (jobId.startsWith(`${retry.runId}.`) ? jobId.slice(retry.runId.length + 1) : jobId);
    expect(out.stdout).toBe(`== ${short(firstJob!.jobId)}\n${tail(firstJob!)}== ${short(secondJob!.jobId)}\n${tail(secondJob!)}`);
  });

  it('br records streams both hosts’ records.jsonl as JSON Lines, each with its job', async () => {
    const out = await br(['records', retry.runId, '--json'], submitter.env);
    expect(out.code).toBe(0);
    const anywhere = retry.jobs.find((j) => j.task === 'anywhere')!.jobId;
    const rerun = retry.jobs.find((j) => j.task === 'needs-marker')!.jobId;
    const lines = out.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { job: string; index: number; score: number });
    expect(lines.map(({ job, index, score }) => ({ job, index, score })).sort((x, y) => x.index - y.index)).toEqual([
      { job: anywhere, index: 0, score: 1 },
      { job: anywhere, index: 1, score: 0 },
      { job: rerun, index: 7, score: 1 },
    ]);
    expect(out.stderr).toBe(`run ${retry.runId}: 3 records from 2 jobs, 0 bad lines skipped\n`);
  });

  it('br artifacts lists each job’s files as its host lists them, saying which host holds them', async () => {
    const out = await br(['artifacts', retry.runId, '--json'], submitter.env);
    expect(out.code).toBe(0);
    const listing = JSON.parse(out.stdout) as {
      jobs: Array<{ jobId: string; dir: string | null; host?: string; files: Array<{ name: string; path: string | null }> }>;
    };
    const byJob = Object.fromEntries(listing.jobs.map((j) => [retry.jobs.find((r) => r.jobId === j.jobId)!.task, j]));
    expect(byJob.anywhere).toMatchObject({ dir: null, host: hostId('a') });
    expect(byJob['needs-marker']).toMatchObject({ dir: null, host: hostId('b') });
    for (const job of listing.jobs) {
      expect(job.files.map((f) => f.name)).toEqual([
        'container-outcome.json',
        'container-tail.log',
        'container.log',
        'normalized.json',
        'results/records.jsonl',
        'results/result.json',
        'transcript.jsonl',
        'usage-model.json',
      ]);
      expect(job.files.every((f) => f.path === null)).toBe(true);
    }
  });

  it('on host a, reads its own job from disk and the other from host b', async () => {
    const onA = { ...submitter.env, BENCHROUTER_HOME: path.join(scratch, 'home-a') };
    const out = await br(['artifacts', retry.runId, '--json'], onA);
    expect(out.code).toBe(0);
    const listing = JSON.parse(out.stdout) as { jobs: Array<{ jobId: string; dir: string | null; host?: string }> };
    const anywhere = retry.jobs.find((j) => j.task === 'anywhere')!.jobId;
    const rerun = retry.jobs.find((j) => j.task === 'needs-marker')!.jobId;
    expect(listing.jobs.find((j) => j.jobId === anywhere)).toMatchObject({ dir: path.join(scratch, 'home-a', 'artifacts', first.runId, anywhere) });
    expect(listing.jobs.find((j) => j.jobId === anywhere)!.host).toBeUndefined();
    expect(listing.jobs.find((j) => j.jobId === rerun)).toMatchObject({ dir: null, host: hostId('b') });
    const logs = await br(['logs', retry.runId, 'needs-marker'], onA);
    expect(logs.stdout).toBe('ran with the marker\n');
  });

  it('the run page comes without waiting on the hosts: the jobs’ timeline at once, its calls read from the hosts after', async () => {
    const api = await startApiProcess(submitter.env, submitter.settings.home);
    const browser = await launchChromium();
    try {
      const page = await callApi<string>(api, 'GET', `/ui/runs/${encodeURIComponent(retry.runId)}`);
      expect(page.status).toBe(200);
      expect(String(page.body)).toContain(`data-calls-from="/runs/${encodeURIComponent(retry.runId)}/timeline.svg"`);
      expect(String(page.body)).toContain('id="timeline-calls-pending"');
      const tab = await (await browser.newContext({ extraHTTPHeaders: { authorization: `Bearer ${api.fullToken}` } })).newPage();
      await tab.goto(`${api.url}/ui/runs/${encodeURIComponent(retry.runId)}`);
      await tab.waitForSelector('[data-calls-from][data-complete="true"]', { timeout: 60_000 });
      expect(await tab.locator('#timeline-calls-pending').count()).toBe(0);
      expect(await tab.getAttribute('#run-timeline .panel[data-panel="jobs finished"]', 'data-total')).toBe('2');
      // Read once from the hosts, the calls are kept: the next view draws them inline.
      expect(String((await callApi<string>(api, 'GET', `/ui/runs/${encodeURIComponent(retry.runId)}`)).body)).not.toContain('data-calls-from');
    } finally {
      await browser.close();
      await api.stop();
    }
  }, 120_000);

  it('fails naming the host when the host that holds a job’s files is down', async () => {
    await stopHost('b');
    const out = await br(['logs', retry.runId, 'needs-marker'], submitter.env);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`on host ${hostId('b')}`);
  }, 120_000);
});
