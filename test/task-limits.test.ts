// What a task cannot do to the worker or hide from the result: print without bound (the log file is
// capped and the worker's memory stays flat) or lose a process to the kernel's OOM killer unnoticed
// (reported even when the task's shell exits 0). Real dev server, real worker, real Docker.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_CAP_BYTES, LOG_KEEP_LAST_BYTES } from '../activities/container-log.js';
import { startHarness, type Harness } from './support/harness.js';

const WRITE_RESULT = 'echo "{\\"overall\\": 1}" > "$BENCHROUTER_OUTPUT_DIR/result.json"';

/** A one-environment benchmark whose tasks are the given task.yaml bodies. */
function writeBenchmark(dir: string, name: string, tasks: Record<string, string>): string {
  const root = path.join(dir, name);
  mkdirSync(path.join(root, 'environments', 'shell'), { recursive: true });
  writeFileSync(path.join(root, 'environments', 'shell', 'Dockerfile'), 'FROM benchrouter/base:bookworm\n');
  writeFileSync(
    path.join(root, 'benchmark.yaml'),
    `name: ${name}\ntasks:\n${Object.keys(tasks)
      .map((t) => `  - {name: ${t}, environment: shell}`)
      .join('\n')}\n`,
  );
  for (const [task, yaml] of Object.entries(tasks)) {
    mkdirSync(path.join(root, 'tasks', task), { recursive: true });
    writeFileSync(path.join(root, 'tasks', task, 'task.yaml'), `name: ${task}\n${yaml}`);
  }
  return root;
}

let h: Harness;
let scratch: string;
beforeAll(async () => {
  h = await startHarness('limits');
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-limits-'));
});
afterAll(async () => {
  await h?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('a task whose child process is killed for memory', () => {
  it('is reported as OOM-killed in the job message although its shell exits 0 and it writes a result', async () => {
    const benchmark = writeBenchmark(scratch, 'oom', {
      // The child touches 256 MiB under a 64 MiB limit; the shell goes on, as a benchmark harness would.
      'child-oom': `resources: {memory: 64m}\ncommand: |\n  python3 -c "b = bytearray(256 * 1024 * 1024)"\n  echo "child exited $?"\n  ${WRITE_RESULT}\n`,
      'fits-in-memory': `resources: {memory: 64m}\ncommand: |\n  python3 -c "b = bytearray(8 * 1024 * 1024)"\n  ${WRITE_RESULT}\n`,
    });
    const run = await h.run(benchmark);
    const byTask = Object.fromEntries(run.jobs.map((j) => [j.task, j]));

    expect(byTask['child-oom']).toMatchObject({ status: 'SUCCEEDED', exitCode: 0, result: { overall: 1 } });
    expect(byTask['child-oom']!.message).toMatch(/^out of memory: \d+ process(es)? of the task killed for exceeding its 64m memory limit$/);
    const log = readFileSync(path.join(h.settings.artifactsRoot, run.runId, byTask['child-oom']!.jobId, 'container.log'), 'utf8');
    expect(log).toMatch(/child exited 137/);

    expect(byTask['fits-in-memory']).toMatchObject({ status: 'SUCCEEDED', exitCode: 0 });
    expect(byTask['fits-in-memory']!.message).toBeUndefined();
  });
});

describe('a task that prints 200 MB', () => {
  it('leaves a capped container.log ending in its last lines, and the worker memory flat', async () => {
    const benchmark = writeBenchmark(scratch, 'chatty', {
      prints: `timeout: 300\ncommand: |\n  yes "a line of benchmark output that goes on and on, as verbose harnesses do" | head -c 200000000\n  echo "the very last line"\n  ${WRITE_RESULT}\n`,
    });
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    let run;
    try {
      run = await h.run(benchmark);
    } finally {
      clearInterval(sampler);
    }
    const job = run.jobs[0]!;
    expect(job.status).toBe('SUCCEEDED');

    const file = path.join(h.settings.artifactsRoot, run.runId, job.jobId, 'container.log');
    expect(statSync(file).size).toBeLessThanOrEqual(LOG_CAP_BYTES + LOG_KEEP_LAST_BYTES + 200);
    const log = readFileSync(file, 'utf8');
    expect(log).toMatch(/\n\[benchrouter\] output past the 16 MiB log cap: at least \d+(\.\d+)? (MiB|bytes) dropped; the last \d+ bytes follow\n/);
    // The end is the task's real end, even where the follower fell behind the daemon's log rotation.
    expect(log.trimEnd().endsWith('the very last line')).toBe(true);
    // The whole output held in memory (as the log used to be) would add 200 MB or more.
    expect((peak - baseline) / 1024 / 1024).toBeLessThan(100);
  });
});
