// Runs that continue as new: a few hundred no-op jobs in small batches, so each run crosses several
// execution boundaries. Real dev server, worker and Docker engine.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunSpec, followRun, listRuns, queryProgress, submitRun } from '../client/runs.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import type { RunProgress, RunResult } from '../runs/run-spec.js';
import { SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import { br, startHarness, type Harness } from './support/harness.js';

const TASKS = 100;

/** A benchmark of `TASKS` no-op tasks, each writing `{"overall": 1}`. */
function noopBenchmark(dir: string): string {
  mkdirSync(path.join(dir, 'environments', 'noop'), { recursive: true });
  writeFileSync(path.join(dir, 'environments', 'noop', 'Dockerfile'), 'FROM benchrouter/base:bookworm\n');
  const names = Array.from({ length: TASKS }, (_, i) => `noop-${String(i).padStart(3, '0')}`);
  writeFileSync(path.join(dir, 'benchmark.yaml'), `name: batched-noop\ntasks:\n${names.map((n) => `  - {name: ${n}, environment: noop}`).join('\n')}\n`);
  for (const name of names) {
    mkdirSync(path.join(dir, 'tasks', name), { recursive: true });
    writeFileSync(
      path.join(dir, 'tasks', name, 'task.yaml'),
      `name: ${name}\ncommand: |\n  echo '{"overall": 1}' > "$BENCHROUTER_OUTPUT_DIR/result.json"\ntimeout: 120\n`,
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

/** Every execution of a run's chain, oldest first, with its history's event count. */
async function executionsOf(runId: string): Promise<Array<{ status: string; events: number }>> {
  const executions: Array<{ runId: string; status: string; start: number }> = [];
  for await (const info of h.client.workflow.list({ query: `WorkflowId = '${runId}'` }))
    executions.push({ runId: info.runId, status: info.status.name, start: info.startTime.getTime() });
  executions.sort((a, b) => a.start - b.start);
  return Promise.all(
    executions.map(async (e) => ({ status: e.status, events: (await h.client.workflow.getHandle(runId, e.runId).fetchHistory()).events?.length ?? 0 })),
  );
}

describe('a run of 200 jobs in batches of 50', () => {
  it('continues as new four times and reports every job, the same progress counts and its search attributes across the boundaries', async () => {
    const spec = createRunSpec(
      loadBenchmark(benchmarkDir),
      { name: 'noop', endpoint: 'http://127.0.0.1:9/v1' },
      { concurrency: 16, repeats: 2, jobsPerExecution: 50 },
      undefined,
      { gateway: { enabled: false } },
    );
    const handle = await submitRun(h.client, h.settings, spec);
    const seen: RunProgress[] = [];
    const run = await followRun(handle, (p) => seen.push(p), 200);

    expect(run.status).toBe('COMPLETED');
    expect(run.overall).toBe(1);
    expect(run.jobs).toHaveLength(200);
    // Repeat-major job order, each job once, read back from the job workflows.
    expect(run.jobs.map((j) => [j.task, j.repeat, j.status])).toEqual(
      [0, 1].flatMap((repeat) => Array.from({ length: TASKS }, (_, i) => [`noop-${String(i).padStart(3, '0')}`, repeat, 'SUCCEEDED'])),
    );
    expect(run.tasks).toHaveLength(TASKS);
    expect(run.tasks!.every((t) => t.repeats === 2 && t.mean === 1)).toBe(true);

    // Progress polled in later executions still counts the earlier ones' jobs: never fewer succeeded than before.
    expect(seen.length).toBeGreaterThan(3);
    expect(seen.every((p) => p.total === 200)).toBe(true);
    expect(seen.some((p) => p.succeeded > 100)).toBe(true);
    const succeeded = seen.map((p) => p.succeeded);
    expect(succeeded).toEqual([...succeeded].sort((a, b) => a - b));

    const executions = await executionsOf(spec.runId);
    expect(executions.map((e) => e.status)).toEqual(['CONTINUED_AS_NEW', 'CONTINUED_AS_NEW', 'CONTINUED_AS_NEW', 'COMPLETED']);
    // About 8 events per job: each execution's history is bounded by its batch, not by the run.
    for (const e of executions) expect(e.events).toBeLessThan(50 * 8 + 50);

    // The last execution still carries the attributes the submitter set, and its own final ones.
    const attributes = (await handle.describe()).typedSearchAttributes;
    expect(attributes.get(SEARCH_ATTRIBUTES.model)).toBe('noop');
    expect(attributes.get(SEARCH_ATTRIBUTES.benchmark)).toBe('batched-noop');
    expect(attributes.get(SEARCH_ATTRIBUTES.status)).toBe('COMPLETED');
    expect(attributes.get(SEARCH_ATTRIBUTES.score)).toBe(1);
    // `br list` shows the run once, not once per execution.
    const listed = (await listRuns(h.client, 100, { benchmark: 'batched-noop' })).filter((r) => r.runId === spec.runId);
    expect(listed).toEqual([expect.objectContaining({ status: 'COMPLETED', score: 1, model: 'noop' })]);

    // `br results` reads the same jobs back.
    const results = await br(['results', spec.runId, '--json'], h.env);
    expect(results.code).toBe(0);
    const printed = JSON.parse(results.stdout) as RunResult;
    expect(printed.jobs).toHaveLength(200);
    expect(printed.jobs.map((j) => j.jobId)).toEqual(run.jobs.map((j) => j.jobId));
  }, 900_000);
});

describe('a batched run cancelled after its first boundary', () => {
  it('ends CANCELLED with every job accounted for, and `br retry` reruns only the jobs that did not succeed', async () => {
    const spec = createRunSpec(
      loadBenchmark(benchmarkDir),
      { name: 'noop', endpoint: 'http://127.0.0.1:9/v1' },
      { concurrency: 4, jobsPerExecution: 30 },
      undefined,
      { gateway: { enabled: false } },
    );
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
