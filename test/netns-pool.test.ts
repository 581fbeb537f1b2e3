// The worker's pool of network namespaces (activities/netns-pool.ts): Simple-mode tasks borrow a
// namespace on the task network, one task at a time, instead of Docker making (and tearing down) one
// per task. What must hold: tasks running at once never share one; a task cannot leave anything in
// its namespace's /etc files for the next; a restarted worker does not lend a namespace a running task
// still uses; a holder that died is replaced; a stopping worker removes the idle ones.
// Real dev server, real workers, real Docker.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { NETNS_HOLDER_LABEL } from '../activities/netns-pool.js';
import { freePort } from '../embedded/embedded-services.js';
import { createRunSpec, followRun, submitRun } from '../client/runs.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import type { RunResult } from '../runs/run-spec.js';
import { startWorker } from '../workers/start-worker.js';
import { dockerLines, startHarness, type Harness } from './support/harness.js';
import { PY_MODEL_ANSWERS } from './support/model-probe.js';
import { waitFor } from './support/processes.js';

/** Reads /etc/hosts (a previous task's leftovers would show), tries to write it, holds on, asks the model. */
const PROBE = `import json, os, socket, time, urllib.request

probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
probe.connect(("host.docker.internal", 9))
ip = probe.getsockname()[0]
probe.close()
poisoned = "poisoned.example" in open("/etc/hosts").read()
try:
    with open("/etc/hosts", "a") as hosts:
        hosts.write("6.6.6.6 poisoned.example host.docker.internal\\n")
    hosts_writable = True
except OSError:
    hosts_writable = False
time.sleep(float(os.environ["HOLD_SECONDS"]))
${PY_MODEL_ANSWERS}
with open(os.path.join(os.environ["BENCHROUTER_OUTPUT_DIR"], "result.json"), "w") as f:
    json.dump({"overall": 1 if model else 0, "ip": ip, "poisoned": poisoned, "hosts_writable": hosts_writable, "model": model}, f)
`;

/** A benchmark of `tasks` probe tasks, each holding its namespace `holdSeconds` (per task name). */
function probeBenchmark(dir: string, holdSeconds: Record<string, number>): string {
  mkdirSync(path.join(dir, 'environments', 'shell'), { recursive: true });
  writeFileSync(path.join(dir, 'environments', 'shell', 'Dockerfile'), 'FROM benchrouter/base:bookworm\n');
  writeFileSync(path.join(dir, 'probe.py'), PROBE);
  const names = Object.keys(holdSeconds);
  writeFileSync(path.join(dir, 'benchmark.yaml'), `name: netns-probe\ntasks:\n${names.map((n) => `  - {name: ${n}, environment: shell}`).join('\n')}\n`);
  for (const name of names) {
    mkdirSync(path.join(dir, 'tasks', name), { recursive: true });
    writeFileSync(
      path.join(dir, 'tasks', name, 'task.yaml'),
      `name: ${name}\ncommand: python3 /app/benchmark/probe.py\ntimeout: 120\nextra_env:\n  HOLD_SECONDS: "${holdSeconds[name]}"\n` +
        'result_mapping:\n  overall: overall\n  ip: ip\n  poisoned: poisoned\n  hosts_writable: hosts_writable\n  model: model\n',
    );
  }
  return dir;
}

const holders = (hostId: string) => dockerLines(['ps', '-a', '--filter', `label=${NETNS_HOLDER_LABEL}=${hostId}`, '--format', '{{.ID}} {{.State}}']);

function expectCleanProbe(run: RunResult): void {
  expect(run.status).toBe('COMPLETED');
  for (const job of run.jobs) {
    expect(job.status).toBe('SUCCEEDED');
    expect(job.result?.raw_metrics).toMatchObject({ model: true, hosts_writable: false, poisoned: false });
  }
}

const overlap = (a: RunResult['jobs'][number], b: RunResult['jobs'][number]) =>
  Date.parse(a.timings.startedAt!) < Date.parse(b.timings.finishedAt) && Date.parse(b.timings.startedAt!) < Date.parse(a.timings.finishedAt);

let h: Harness;
let scratch: string;
beforeAll(async () => {
  h = await startHarness('netns');
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-netns-'));
});
afterAll(async () => {
  await h?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('the pool of network namespaces', () => {
  it('lends one namespace per running task, reuses it afterwards, and keeps its /etc files read-only', async () => {
    const benchmark = probeBenchmark(path.join(scratch, 'four'), { a: 2, b: 2, c: 2, d: 2 });
    const run = await h.run(benchmark, { concurrency: 2 });
    expectCleanProbe(run);
    const ips = run.jobs.map((job) => job.result?.raw_metrics.ip as string);
    // Four tasks, two at a time: two namespaces, each used twice, never by two tasks at once.
    expect(new Set(ips).size).toBe(2);
    for (const [i, a] of run.jobs.entries())
      for (const b of run.jobs.slice(i + 1)) if (overlap(a, b)) expect(a.result?.raw_metrics.ip).not.toBe(b.result?.raw_metrics.ip);
    expect(holders('host-netns').map((line) => line.split(' ')[1])).toEqual(['running', 'running']);
  });

  it('replaces holders that were removed behind its back: a container that cannot join its holder starts in a fresh one', async () => {
    const before = holders('host-netns').map((line) => line.split(' ')[0]!);
    expect(before.length).toBe(2);
    for (const id of before) dockerLines(['rm', '-f', id]);
    const run = await h.run(probeBenchmark(path.join(scratch, 'two'), { e: 0, f: 0 }), { concurrency: 2 });
    expectCleanProbe(run);
    const after = holders('host-netns').map((line) => line.split(' ')[0]!);
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((id) => before.includes(id))).toEqual([]);
  });

  it('after a worker restart, does not lend the namespace a still-running task holds; a stopping worker removes idle ones', async () => {
    const hostId = 'host-netns-restart';
    // A fixed gateway port, as on a real machine: the running task's endpoint must still answer after the restart.
    const settings = { ...h.settings, sharedQueue: `${h.settings.sharedQueue}-restart`, gatewayPort: await freePort() };
    const start = () => startWorker({ settings, hostId, workflowBundlePath: inject('workflowBundlePath') });
    const model = { model: 'reference', endpoint: h.model.url };
    const submit = (dir: string) => submitRun(h.client, settings, createRunSpec(loadBenchmark(dir), { ...model, concurrency: 1 }));

    let worker = await start();
    const long = await submit(probeBenchmark(path.join(scratch, 'long'), { long: 8 }));
    await waitFor(
      'the long task to start',
      () => dockerLines(['ps', '--filter', `label=benchrouter.run=${long.workflowId}`, '--format', '{{.ID}}']).length === 1,
    );
    await worker.shutdown(); // the task runs on, in its namespace; its activity is retried by the next worker
    worker = await start();
    try {
      const short = await followRun(await submit(probeBenchmark(path.join(scratch, 'short'), { short: 0 })));
      const longRun = await followRun(long);
      expectCleanProbe(short);
      expectCleanProbe(longRun);
      expect(overlap(short.jobs[0]!, longRun.jobs[0]!)).toBe(true);
      expect(short.jobs[0]!.result?.raw_metrics.ip).not.toBe(longRun.jobs[0]!.result?.raw_metrics.ip);
      expect(holders(hostId).length).toBe(2);
    } finally {
      await worker.shutdown();
    }
    expect(holders(hostId)).toEqual([]);
  });
});
