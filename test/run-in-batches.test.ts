// Runs that continue as new: a few hundred no-op jobs in small batches, so each run crosses several
// execution boundaries. Real dev server, worker and Docker engine.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import proto from '@temporalio/proto';
import { readFileSync } from 'node:fs';
import { createRunSpec, followRun, listRuns, queryProgress, submitRun } from '../client/runs.js';
import { listedJobs, pagedJobs, withJobs } from '../client/run-jobs.js';
import { definitionsPageId, paginateDefinitions } from '../runs/task-definition-pages.js';
import { INLINE_DEFINITIONS_MAX_BYTES } from '../client/task-definitions.js';
import type { RunSpec } from '../runs/run-spec.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import type { RunProgress, RunResult } from '../runs/run-spec.js';
import { SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import { br, startHarness, type Harness } from './support/harness.js';

const TASKS = 100;
/** The batched run's tasks: 40 of them, twice each. */
const BATCHED_TASKS = Array.from({ length: 40 }, (_, i) => `noop-${String(i).padStart(3, '0')}`);

/** A benchmark of `TASKS` no-op tasks, each writing `{"overall": 1}` (and carrying `padding` bytes of comment in its command). */
function noopBenchmark(dir: string, padding = 0): string {
  mkdirSync(path.join(dir, 'environments', 'noop'), { recursive: true });
  writeFileSync(path.join(dir, 'environments', 'noop', 'Dockerfile'), 'FROM benchrouter/base:bookworm\n');
  const names = Array.from({ length: TASKS }, (_, i) => `noop-${String(i).padStart(3, '0')}`);
  writeFileSync(path.join(dir, 'benchmark.yaml'), `name: batched-noop\ntasks:\n${names.map((n) => `  - {name: ${n}, environment: noop}`).join('\n')}\n`);
  for (const name of names) {
    mkdirSync(path.join(dir, 'tasks', name), { recursive: true });
    writeFileSync(
      path.join(dir, 'tasks', name, 'task.yaml'),
      `name: ${name}\ncommand: |\n${padding ? `  # ${'x'.repeat(padding)}\n` : ''}  echo '{"overall": 1}' > "$BENCHROUTER_OUTPUT_DIR/result.json"\ntimeout: 120\n`,
    );
  }
  return dir;
}

let h: Harness;
let scratch: string;
let benchmarkDir: string;
// A few hundred containers on a shared machine: minutes, not seconds.
beforeAll(async () => {
  h = await startHarness('batches');
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-batches-'));
  benchmarkDir = noopBenchmark(path.join(scratch, 'batched-noop'));
});
afterAll(async () => {
  await h?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Every execution of a run's chain, oldest first: its status, its history (and event count) and the input it started with. */
async function executionsOf(
  runId: string,
): Promise<Array<{ status: string; events: number; history: proto.temporal.api.history.v1.IHistory; input: RunSpec }>> {
  const executions: Array<{ runId: string; status: string; start: number }> = [];
  for await (const info of h.client.workflow.list({ query: `WorkflowId = '${runId}'` }))
    executions.push({ runId: info.runId, status: info.status.name, start: info.startTime.getTime() });
  executions.sort((a, b) => a.start - b.start);
  return Promise.all(
    executions.map(async (e) => {
      const history = await h.client.workflow.getHandle(runId, e.runId).fetchHistory();
      const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
      return { status: e.status, events: history.events?.length ?? 0, history, input: JSON.parse(Buffer.from(payload.data!).toString('utf8')) as RunSpec };
    }),
  );
}

describe('a run of 80 jobs in batches of 20', () => {
  it('continues as new four times and reports every job, the same progress counts and its search attributes across the boundaries', async () => {
    const spec = createRunSpec(loadBenchmark(benchmarkDir), {
      model: 'noop',
      endpoint: 'http://127.0.0.1:9/v1',
      preflight: false,
      concurrency: 16,
      tasks: BATCHED_TASKS,
      repeats: 2,
      jobsPerExecution: 20,
      gateway: false,
    });
    const handle = await submitRun(h.client, h.settings, spec);
    const seen: RunProgress[] = [];
    const run = await followRun(handle, (p) => seen.push(p), 200);

    expect(run.status).toBe('COMPLETED');
    expect(run.overall).toBe(1);
    expect(run.jobs).toHaveLength(80);
    // Repeat-major job order, each job once, read back from the job workflows.
    expect(run.jobs.map((j) => [j.task, j.repeat, j.status])).toEqual([0, 1].flatMap((repeat) => BATCHED_TASKS.map((task) => [task, repeat, 'SUCCEEDED'])));
    expect(run.tasks).toHaveLength(BATCHED_TASKS.length);
    expect(run.tasks!.every((t) => t.repeats === 2 && t.mean === 1)).toBe(true);

    // Progress polled in later executions still counts the earlier ones' jobs: never fewer succeeded than before.
    expect(seen.length).toBeGreaterThan(3);
    expect(seen.every((p) => p.total === 80)).toBe(true);
    expect(seen.some((p) => p.succeeded > 40)).toBe(true);
    const succeeded = seen.map((p) => p.succeeded);
    expect(succeeded).toEqual([...succeeded].sort((a, b) => a - b));

    const executions = await executionsOf(spec.runId);
    expect(executions.map((e) => e.status)).toEqual(['CONTINUED_AS_NEW', 'CONTINUED_AS_NEW', 'CONTINUED_AS_NEW', 'COMPLETED']);
    // About 8 events per job: each execution's history is bounded by its batch, not by the run.
    for (const e of executions) expect(e.events).toBeLessThan(20 * 8 + 50);

    // The last execution still carries the attributes the submitter set, and its own final ones.
    const attributes = (await handle.describe()).typedSearchAttributes;
    expect(attributes.get(SEARCH_ATTRIBUTES.model)).toBe('noop');
    expect(attributes.get(SEARCH_ATTRIBUTES.benchmark)).toBe('batched-noop');
    expect(attributes.get(SEARCH_ATTRIBUTES.status)).toBe('COMPLETED');
    expect(attributes.get(SEARCH_ATTRIBUTES.score)).toBe(1);
    // `br list` shows the run once, not once per execution.
    const listed = (await listRuns(h.client, 100, { benchmark: 'batched-noop' })).filter((r) => r.runId === spec.runId);
    expect(listed).toEqual([expect.objectContaining({ status: 'COMPLETED', score: 1, model: 'noop' })]);

    // The jobs came from the result pages each execution wrote, one page per batch of 20 here; they
    // equal, field for field, what the job workflows themselves returned (each job's own history).
    const raw = await handle.result();
    expect(raw.jobs).toEqual([]);
    expect(raw.resultPages).toEqual([0, 20, 40, 60].map((first) => `${spec.runId}.results-${first}-0`));
    const paged = await pagedJobs(h.client.workflow, raw.resultPages!);
    expect([...paged.values()]).toEqual(run.jobs);
    const fromJobs = await listedJobs(h.client.workflow, spec.runId);
    expect(fromJobs.size).toBe(80);
    expect(run.jobs.map((j) => fromJobs.get(j.jobId))).toEqual(run.jobs);
    // No job wrote its result into its memo: the pages hold it (one visibility write a job fewer).
    expect((await h.client.workflow.getHandle(run.jobs[0]!.jobId).describe()).memo?.result).toBeUndefined();
    for (const page of raw.resultPages!) expect((await h.client.workflow.getHandle(page).describe()).status.name).toBe('COMPLETED');

    // `br results` reads the same jobs back.
    const results = await br(['results', spec.runId, '--json'], h.env);
    expect(results.code).toBe(0);
    const printed = JSON.parse(results.stdout) as RunResult;
    expect(printed.jobs).toHaveLength(80);
    expect(printed.jobs.map((j) => j.jobId)).toEqual(run.jobs.map((j) => j.jobId));
  }, 900_000);
});

describe('a small run in one execution', () => {
  it('returns its jobs in its own result and writes no result page (a cancelled run, below, still writes its pages)', async () => {
    const tasks = ['noop-000', 'noop-001', 'noop-002'];
    const spec = createRunSpec(loadBenchmark(benchmarkDir), {
      model: 'noop',
      endpoint: 'http://127.0.0.1:9/v1',
      preflight: false,
      concurrency: 3,
      tasks: tasks,
      gateway: false,
    });
    const handle = await submitRun(h.client, h.settings, spec);
    const run = await followRun(handle);
    expect(run.status).toBe('COMPLETED');
    const raw = await handle.result();
    expect(raw.jobsIn).toBeUndefined();
    expect(raw.resultPages).toBeUndefined();
    expect(raw.jobs.map((j) => [j.task, j.status, j.result?.overall])).toEqual(tasks.map((t) => [t, 'SUCCEEDED', 1]));
    // What readers get is the result as it is, and the same as the job workflows themselves returned.
    expect((await withJobs(h.client.workflow, raw)).jobs).toEqual(raw.jobs);
    const listed = await listedJobs(h.client.workflow, spec.runId);
    expect(raw.jobs.map((j) => listed.get(j.jobId))).toEqual(raw.jobs);
    for (const job of raw.jobs) expect((await h.client.workflow.getHandle(job.jobId).describe()).memo?.result).toBeUndefined();
    await expect(h.client.workflow.getHandle(`${spec.runId}.results-0-0`).describe()).rejects.toThrow(/not found/i);
  }, 300_000);
});

describe('a batched run cancelled after its first boundary', () => {
  it('ends CANCELLED with every job accounted for, and `br retry` reruns only the jobs that did not succeed', async () => {
    const spec = createRunSpec(loadBenchmark(benchmarkDir), {
      model: 'noop',
      endpoint: 'http://127.0.0.1:9/v1',
      preflight: false,
      concurrency: 4,
      jobsPerExecution: 30,
      gateway: false,
    });
    const handle = await submitRun(h.client, h.settings, spec);
    const firstExecution = (await handle.describe()).runId;
    // Wait until a later execution runs and has jobs of its own done.
    for (;;) {
      const progress = await queryProgress(handle).catch(() => undefined);
      if (progress && progress.succeeded >= 40) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect((await handle.describe()).runId).not.toBe(firstExecution);
    await handle.cancel();
    const cancelled = await followRun(handle);

    expect(cancelled.status).toBe('CANCELLED');
    expect(cancelled.jobs).toHaveLength(TASKS);
    // Its pages hold every job it started, those of the batch the cancel cut short too; the rest are known from its definition.
    const raw = await handle.result();
    const paged = await pagedJobs(h.client.workflow, raw.resultPages!);
    expect(paged.size).toBe(cancelled.jobs.filter((j) => j.message !== 'run cancelled before this job started').length);
    expect(paged.size).toBeGreaterThanOrEqual(40);
    const done = cancelled.jobs.filter((j) => j.status === 'SUCCEEDED');
    expect(done.length).toBeGreaterThanOrEqual(40);
    expect(done.length).toBeLessThan(TASKS);
    expect(cancelled.jobs.filter((j) => j.status !== 'SUCCEEDED').every((j) => j.status === 'CANCELLED')).toBe(true);
    expect((await handle.describe()).typedSearchAttributes.get(SEARCH_ATTRIBUTES.status)).toBe('CANCELLED');

    const retried = await br(['retry', spec.runId, '--json'], h.env);
    expect(retried.code).toBe(0);
    const retry = JSON.parse(retried.stdout) as RunResult;
    expect(retry.status).toBe('COMPLETED');
    expect(retry.retryOf).toBe(spec.runId);
    expect(retry.jobs).toHaveLength(TASKS);
    expect(
      retry.jobs
        .filter((j) => j.carriedFrom === spec.runId)
        .map((j) => j.jobId)
        .sort(),
    ).toEqual(done.map((j) => j.jobId).sort());
    expect(retry.jobs.filter((j) => !j.carriedFrom).every((j) => j.jobId.startsWith(`${retry.runId}.`) && j.status === 'SUCCEEDED')).toBe(true);
  }, 900_000);
});

describe("a run's task definitions", () => {
  it('stay out of its input in every execution, each page under 256 KB, and `br rerun` runs the pinned ones after the benchmark changed', async () => {
    // 100 definitions of 5,312 bytes each as JSON: 531 KB in all, three pages of at most 192 KB.
    const dir = noopBenchmark(path.join(scratch, 'padded-noop'), 5000);
    const benchmark = loadBenchmark(dir);
    const pages = paginateDefinitions(benchmark.tasks);
    expect(pages.map((p) => p.length)).toEqual([37, 37, 26]);
    const spec = await runInBatchesOf40(benchmark);
    const executions = await executionsOf(spec.runId);
    expect(executions).toHaveLength(3);
    let largestPayload = 0;
    for (const { history, input } of executions) {
      expect([input.tasks, input.definitions?.names.length, input.definitions?.pages.map((p) => [p.first, p.count])]).toEqual([
        [],
        TASKS,
        [
          [0, 37],
          [37, 37],
          [74, 26],
        ],
      ]);
      largestPayload = Math.max(largestPayload, ...payloadSizes(history));
    }
    expect(largestPayload).toBeLessThanOrEqual(256 * 1024);
    // Each execution loads the pages its batch of 40 jobs needs: jobs 0-39 pages 0-1, 40-79 pages 1-2, 80-99 page 2.
    expect(executions.map(({ history }) => definitionLoads(history)).sort()).toEqual([1, 2, 2]);
    // The run released its pages' holders when it ended.
    for (const page of [0, 1, 2]) expect((await h.client.workflow.getHandle(`${spec.runId}.definitions-${page}`).describe()).status.name).toBe('COMPLETED');

    // The benchmark changes after the run: its first task now scores 0.5. A rerun runs what the run pinned.
    const firstTask = path.join(dir, 'tasks', 'noop-000', 'task.yaml');
    writeFileSync(firstTask, readFileSync(firstTask, 'utf8').replace('{"overall": 1}', '{"overall": 0.5}'));
    const rerun = await br(['rerun', spec.runId, '--json'], h.env);
    expect(rerun.code).toBe(0);
    const again = JSON.parse(rerun.stdout) as RunResult;
    expect([again.status, again.overall, again.jobs.length, again.jobs[0]?.result?.overall]).toEqual(['COMPLETED', 1, TASKS, 1]);
  }, 900_000);

  it('travel in its input when they are small (no holder, no load), in every execution', async () => {
    const benchmark = loadBenchmark(noopBenchmark(path.join(scratch, 'small-noop')));
    expect(Buffer.byteLength(JSON.stringify(benchmark.tasks))).toBeLessThanOrEqual(INLINE_DEFINITIONS_MAX_BYTES);
    const spec = await runInBatchesOf40(benchmark);
    const executions = await executionsOf(spec.runId);
    expect(executions).toHaveLength(3);
    for (const { history, input } of executions) {
      expect([input.tasks.length, input.definitions]).toEqual([TASKS, undefined]);
      expect(definitionLoads(history)).toBe(0);
    }
    await expect(h.client.workflow.getHandle(definitionsPageId(spec.runId, 0)).describe()).rejects.toThrow(/not found/i);
  }, 900_000);
});

/** Runs every task of `benchmark` at 40 jobs per execution (three executions), and expects it COMPLETED with 1. */
async function runInBatchesOf40(benchmark: ReturnType<typeof loadBenchmark>): Promise<RunSpec> {
  const spec = createRunSpec(benchmark, {
    model: 'noop',
    endpoint: 'http://127.0.0.1:9/v1',
    preflight: false,
    concurrency: 16,
    jobsPerExecution: 40,
    gateway: false,
  });
  const run = await followRun(await submitRun(h.client, h.settings, spec));
  expect([run.status, run.overall, run.jobs.length]).toEqual(['COMPLETED', 1, TASKS]);
  return spec;
}

/** How many pages of task definitions an execution loaded. */
const definitionLoads = (history: proto.temporal.api.history.v1.IHistory) =>
  history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'loadTaskDefinitions').length;

/** Every payload's byte size in a history event, wherever it sits (input, result, memo, failure details). */
function payloadSizes(value: unknown, into: number[] = []): number[] {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return into;
  const record = value as Record<string, unknown>;
  if (record.data instanceof Uint8Array && 'metadata' in record)
    into.push(proto.temporal.api.common.v1.Payload.encode(record as proto.temporal.api.common.v1.IPayload).finish().length);
  else for (const child of Object.values(record)) payloadSizes(child, into);
  return into;
}
