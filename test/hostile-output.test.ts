// Tasks that leave a FIFO, a link to a host file or a sibling job's result, or 200 MB of records where
// their output belongs, run beside a well-behaved job on one worker: nothing stalls, nothing of the
// host reaches a result, and each failure names what the task did. Real dev server, worker and Docker.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunSpec, followRun, listRuns, runHandle, submitRun } from '../client/runs.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import type { JobResult, RunResult } from '../runs/run-spec.js';
import { definitionsPageId } from '../runs/task-definition-pages.js';
import { br, fixturesDir, startHarness, type Harness } from './support/harness.js';

/** The prompt tokens of each line of a host file a task links to: digits no id, hash or timestamp of a run is likely to hold. */
const HOST_PROMPT_TOKENS = 4_194_301;

const benchmarkDir = path.join(fixturesDir, 'benchmarks', 'hostile-output');
const HUGE_RECORDS_LINES = 1_008_246;
/** What reading the 200 MB file whole costs is several times this; streaming it costs a few MB. */
const RSS_GROWTH_BOUND_MB = 120;

let h: Harness;
let scratch: string;
beforeAll(async () => {
  h = await startHarness('hostile');
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-hostile-'));
});
afterAll(async () => {
  await h?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** The process's resident memory now, and its peak since the last reset (Linux /proc). */
function memoryMb(): { rss: number; peak: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

function resetPeakMemory(): void {
  // "5" resets the peak resident set size (VmHWM) to the current one.
  writeFileSync('/proc/self/clear_refs', '5');
}

async function runTasks(tasks: string[], extraEnv: Record<string, Record<string, string>> = {}): Promise<RunResult> {
  const spec = createRunSpec(loadBenchmark(benchmarkDir), { model: 'reference', endpoint: h.model.url, concurrency: 8, tasks: tasks });
  for (const task of spec.tasks) Object.assign(task.extraEnv, extraEnv[task.name] ?? {});
  return followRun(await submitRun(h.client, h.settings, spec));
}

const byTask = (run: RunResult) => Object.fromEntries(run.jobs.map((j) => [j.task, j])) as Record<string, JobResult>;

describe('a task that leaves something other than a regular file as its output', () => {
  it('cannot stall the worker, read the host or a sibling job, or grow the worker with 200 MB of records', { timeout: 600_000 }, async () => {
    const first = await runTasks(['well-behaved']);
    expect(first.jobs[0]).toMatchObject({ status: 'SUCCEEDED', result: { overall: 0.75 } });
    const sibling = first.jobs[0]!;

    const hostJson = path.join(scratch, 'host-config.json');
    writeFileSync(hostJson, JSON.stringify({ overall: 0.987654, host_marker: 4242.4242, note: 'HOST-JSON-MARKER' }));
    const hostText = path.join(scratch, 'host-notes.txt');
    writeFileSync(hostText, 'HOST-TEXT-MARKER: the worker host must never show this\n');
    const hostRecords = path.join(scratch, 'host-records.jsonl');
    writeFileSync(
      hostRecords,
      Array.from({ length: 7 }, (_, i) => JSON.stringify({ index: `HOST-RECORD-${i}`, score: 1, prompt_tokens: HOST_PROMPT_TOKENS })).join('\n'),
    );

    const before = memoryMb();
    resetPeakMemory();
    const started = Date.now();
    const run = await runTasks(
      ['well-behaved', 'fifo-result', 'fifo-records', 'links-host-json', 'links-host-text', 'links-host-records', 'links-sibling-result', 'huge-records'],
      {
        'links-host-json': { HOST_FILE: hostJson },
        'links-host-text': { HOST_FILE: hostText },
        'links-host-records': { HOST_FILE: hostRecords },
        // From this job's results directory: up to the artifact root, then into the first run's job.
        'links-sibling-result': { SIBLING_RESULT: `../../../${first.runId}/${sibling.jobId}/results/result.json` },
      },
    );
    const growthMb = memoryMb().peak - before.rss;
    const jobs = byTask(run);

    // The well-behaved job beside them is untouched.
    expect(jobs['well-behaved']).toMatchObject({ status: 'SUCCEEDED', result: { overall: 0.75 }, records: { count: 3, badLines: 0, meanScore: 2 / 3 } });
    expect(jobs['well-behaved']!.message).toBeUndefined();

    expect(jobs['fifo-result']).toMatchObject({ status: 'FAILED', reason: 'BAD_RESULT', message: 'result.json is a FIFO, not a regular file; not read' });
    expect(jobs['fifo-records']).toMatchObject({
      status: 'SUCCEEDED',
      result: { overall: 1 },
      message: 'records.jsonl is a FIFO, not a regular file; not read',
    });
    expect(jobs['fifo-records']!.records).toMatchObject({ count: 0, badLines: 1 });

    for (const task of ['links-host-json', 'links-host-text', 'links-sibling-result']) {
      expect(jobs[task], task).toMatchObject({
        status: 'FAILED',
        reason: 'BAD_RESULT',
        message: 'result.json is a symbolic link; links are not followed; not read',
      });
      expect(jobs[task]!.result, task).toBeUndefined();
    }
    expect(jobs['links-host-records']).toMatchObject({
      status: 'SUCCEEDED',
      message: 'records.jsonl is a symbolic link; links are not followed; not read',
      records: { count: 0, badLines: 1 },
    });

    // Nothing of the host's files, nor the sibling's score, is anywhere in the run's result.
    const everything = JSON.stringify(run);
    // The host records' token count, alone or summed over its 7 lines (a bare 777 once matched a timestamp's milliseconds).
    for (const marker of ['HOST-JSON-MARKER', '4242.4242', '0.987654', 'HOST-TEXT', 'HOST-RECORD', String(HOST_PROMPT_TOKENS), String(7 * HOST_PROMPT_TOKENS)])
      expect(everything).not.toContain(marker);

    expect(jobs['huge-records']).toMatchObject({
      status: 'SUCCEEDED',
      result: { overall: 0.5 },
      records: { count: HUGE_RECORDS_LINES, badLines: 0, meanScore: 0.5 },
    });
    expect(jobs['huge-records']!.records!.promptTokens).toEqual({ total: 10 * HUGE_RECORDS_LINES, missing: 0 });
    console.log(
      `hostile run: ${((Date.now() - started) / 1000).toFixed(1)} s; worker RSS ${before.rss.toFixed(0)} MB before, peak growth ${growthMb.toFixed(0)} MB`,
    );
    expect(growthMb).toBeLessThan(RSS_GROWTH_BOUND_MB);
    expect(run.status).toBe('PARTIAL');
  });
});

describe('a benchmark whose definitions are too big to submit', () => {
  it('is refused by br validate and br run with exit 2, naming the file, the field and the limit', async () => {
    const dir = path.join(scratch, 'too-big');
    const taskDir = path.join(dir, 'tasks', 'a');
    mkdirSync(path.join(dir, 'environments', 'shell'), { recursive: true });
    mkdirSync(taskDir, { recursive: true });
    writeFileSync(path.join(dir, 'environments', 'shell', 'Dockerfile'), 'FROM benchrouter/base:bookworm\n');
    writeFileSync(path.join(dir, 'benchmark.yaml'), 'name: too-big\ntasks:\n  - {name: a, environment: shell}\n');
    writeFileSync(path.join(taskDir, 'task.yaml'), `name: a\ncommand: "true"\nextra_env:\n  PROMPTS: ${'p'.repeat(2_200_000)}\n`);

    const expected = new RegExp(
      `${taskDir}/task\\.yaml: extra_env\\.PROMPTS: expected the task's definition to be at most 1,048,576 bytes as submitted, got 2,200,\\d{3} bytes`,
    );
    const validated = await br(['validate', dir], h.env);
    expect(validated.code).toBe(2);
    expect(validated.stderr).toMatch(expected);
    const ran = await br(['run', dir, '--model', 'm', '--endpoint', h.model.url], h.env);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(expected);
  });

  it('is refused before submission when a task definition is too big for a payload, and no workflow is started', async () => {
    const spec = createRunSpec(loadBenchmark(benchmarkDir), { model: 'reference', endpoint: h.model.url, tasks: ['well-behaved'] });
    // Past validation: a definition grown after loading (a retry's carried results, a price table).
    spec.tasks[0]!.extraEnv.GROWN = 'g'.repeat(1_700_000);
    await expect(submitRun(h.client, h.settings, spec)).rejects.toThrow(
      new RegExp(
        `${benchmarkDir}/benchmark\\.yaml: tasks: expected page 0 of the run's task definitions \\(well-behaved\\) to be at most 1,572,864 bytes as submitted, got 1,7\\d\\d,\\d{3}`,
      ),
    );
    await expect(runHandle(h.client, spec.runId).describe()).rejects.toThrow(/not found/i);
    await expect(runHandle(h.client, definitionsPageId(spec.runId, 0)).describe()).rejects.toThrow(/not found/i);
  });
});

describe('br list and br status', () => {
  it('show a terminated run as TERMINATED, not as the RUNNING its status attribute was left at', async () => {
    // A queue no worker polls: the run stays RUNNING until it is terminated.
    const spec = createRunSpec(loadBenchmark(benchmarkDir), {
      model: `listing-${Date.now()}`,
      endpoint: h.model.url,
      tasks: ['well-behaved'],
      // No worker polls its queue, so none could check the endpoint either.
      preflight: false,
    });
    const handle = await submitRun(h.client, { ...h.settings, sharedQueue: `${h.settings.sharedQueue}-idle` }, spec);
    const listed = async (status?: string) =>
      (await listRuns(h.client, 10, { model: spec.options.model, status })).map((r) => ({ runId: r.runId, status: r.status }));
    await expect.poll(async () => (await listed()).map((r) => r.status), { timeout: 20_000 }).toEqual(['RUNNING']);

    await runHandle(h.client, spec.runId).terminate('test: terminated by hand');
    await handle.describe();
    await expect.poll(async () => (await listed()).map((r) => r.status), { timeout: 20_000 }).toEqual(['TERMINATED']);
    expect(await listed('TERMINATED')).toEqual([{ runId: spec.runId, status: 'TERMINATED' }]);
    expect(await listed('RUNNING')).toEqual([]);
    // FAILED and CANCELLED are read from the status attribute or the execution: the query still parses.
    expect(await listed('CANCELLED')).toEqual([]);
    expect(await listed('FAILED')).toEqual([]);

    const cli = await br(['list', '--model', spec.options.model, '--json'], h.env);
    expect(JSON.parse(cli.stdout)).toMatchObject([{ runId: spec.runId, status: 'TERMINATED' }]);
    const status = await br(['status', spec.runId, '--json'], h.env);
    expect(JSON.parse(status.stdout)).toMatchObject({ runId: spec.runId, status: 'TERMINATED' });
  });
});
