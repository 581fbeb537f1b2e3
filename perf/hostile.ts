// perf/hostile: what hostile neighbours cost a well-behaved job and the worker. One real `br worker`
// runs a steady job alone (the baseline), then the same job beside a task that prints 1 GB to stdout
// and one that writes a 1 GB records.jsonl. Prints the worker's peak RSS and the steady job's
// slowdown. Targets: peak RSS under 400 MB; slowdown under 10%.
// Usage: npm run perf:hostile -- [MiB per hostile task, default 1024] [--only printer|records]
// (--only runs one hostile task beside the steady job, to see which one costs what.)

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuDelta, cpuSecondsByProcess, repoRoot, run, startStack } from './perf-support.js';
import { setTimeout as sleep } from 'node:timers/promises';

const args = process.argv.slice(2);
const onlyAt = args.indexOf('--only');
const only = onlyAt === -1 ? undefined : args.splice(onlyAt, 2)[1];
if (only !== undefined && only !== 'printer' && only !== 'records') throw new Error(`--only: expected printer or records, got "${only ?? ''}"`);
const mib = Number(args[0] ?? 1024);
if (!Number.isInteger(mib) || mib <= 0) throw new Error(`expected a positive whole number of MiB, got "${args[0]}"`);

/** A benchmark of the given tasks (name → shell command), in a scratch directory. */
function writeBenchmark(root: string, name: string, tasks: Record<string, string>): string {
  const dir = path.join(root, name);
  mkdirSync(path.join(dir, 'environments', 'shell'), { recursive: true });
  writeFileSync(path.join(dir, 'environments', 'shell', 'Dockerfile'), 'FROM benchrouter/base:bookworm\n');
  writeFileSync(
    path.join(dir, 'benchmark.yaml'),
    `name: ${name}\ntasks:\n${Object.keys(tasks)
      .map((t) => `  - {name: ${t}, environment: shell}`)
      .join('\n')}\n`,
  );
  for (const [task, command] of Object.entries(tasks)) {
    mkdirSync(path.join(dir, 'tasks', task), { recursive: true });
    writeFileSync(
      path.join(dir, 'tasks', task, 'task.yaml'),
      `name: ${task}\ntimeout: 1800\nresources:\n  disk: 4g\ncommand: |\n${command.replace(/^/gm, '  ')}\n`,
    );
  }
  return dir;
}

// The steady job does fixed work (hashing in Python) and writes records: what a real harness does.
const steady = `python3 -c '
import hashlib, json, os
out = os.environ["BENCHROUTER_OUTPUT_DIR"]
h = b"x"
for i in range(3_000_000): h = hashlib.sha256(h).digest()
with open(out + "/records.jsonl", "w") as f:
    for i in range(1000): f.write(json.dumps({"index": i, "score": 1}) + "\\n")
json.dump({"overall": 1.0}, open(out + "/result.json", "w"))
'`;
const printer = `yes 'a line a hostile task prints, over and over, to fill the log' | head -c ${mib}m\necho '{"overall": 0}' > "$BENCHROUTER_OUTPUT_DIR/result.json"`;
const recordsWriter = `python3 -c '
import json, os
out = os.environ["BENCHROUTER_OUTPUT_DIR"]
line = json.dumps({"index": 0, "score": 1, "prediction": "p" * 180}) + "\\n"
with open(out + "/records.jsonl", "w") as f:
    for i in range(${mib} * 1024 * 1024 // len(line)): f.write(line.replace("\\"index\\": 0", "\\"index\\": %d" % i, 1))
json.dump({"overall": 0}, open(out + "/result.json", "w"))
'`;

function peakRssMiB(pid: number): number {
  const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(hwm ?? 0) / 1024;
}

/** CPU seconds (user + system) the process has used so far. */
function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ on Linux
}

function jobSeconds(result: { jobs: Array<{ task: string; timings: { queuedAt: string; finishedAt: string } }> }, task: string): number {
  const job = result.jobs.find((j) => j.task === task)!;
  return (Date.parse(job.timings.finishedAt) - Date.parse(job.timings.queuedAt)) / 1000;
}

const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-perf-hostile-'));
const stack = await startStack('hostile');
// The worker's peak once it polls: start-up alone (the SDK, tsx, the workflow bundle).
const rssAtStart = peakRssMiB(stack.workers[0]!.pid!);
try {
  const alone = writeBenchmark(scratch, 'steady-alone', { steady });
  const hostile = { ...(only !== 'records' ? { printer } : {}), ...(only !== 'printer' ? { 'records-writer': recordsWriter } : {}) };
  const crowded = writeBenchmark(scratch, 'steady-crowded', { steady, ...hostile });
  const br = (dir: string) =>
    run(path.join(repoRoot, 'br'), ['run', dir, '--model', 'none', '--endpoint', 'http://127.0.0.1:9/v1', '--no-preflight', '--json'], stack.env);
  await br(alone); // builds the image; not measured
  const baseline = JSON.parse((await br(alone)).stdout) as Parameters<typeof jobSeconds>[0];
  const workerPid = stack.workers[0]!.pid!;
  const rssBefore = peakRssMiB(workerPid);
  // dockerd is shared with anything else on the machine: its figure is an upper bound.
  const cpuBefore = { worker: cpuSecondsOf(workerPid), ...cpuSecondsByProcess({ dockerd: /^(\/usr\/sbin\/)?dockerd/ }) };
  const crowdedRun = await br(crowded);
  const cpuAfter = { worker: cpuSecondsOf(workerPid), ...cpuSecondsByProcess({ dockerd: /^(\/usr\/sbin\/)?dockerd/ }) };
  await sleep(500);
  const result = JSON.parse(crowdedRun.stdout) as Parameters<typeof jobSeconds>[0] & {
    jobs: Array<{ task: string; status: string; records?: { count: number } }>;
  };
  const base = jobSeconds(baseline, 'steady');
  const beside = jobSeconds(result, 'steady');
  const told = [only !== 'records' ? `one prints ${mib} MiB to stdout` : '', only !== 'printer' ? `one writes a ${mib} MiB records.jsonl` : ''].filter(Boolean);
  console.log(`hostile neighbours: ${told.join(', ')}`);
  for (const job of result.jobs)
    console.log(
      `  ${job.task.padEnd(15)} ${job.status.padEnd(10)} ${jobSeconds(result, job.task).toFixed(1)} s${job.records ? `, ${job.records.count} records` : ''}`,
    );
  console.log(
    `worker peak RSS: ${peakRssMiB(workerPid).toFixed(0)} MiB (at start ${rssAtStart.toFixed(0)} MiB, before the hostile run ${rssBefore.toFixed(0)} MiB; target < 400 MiB)`,
  );
  console.log(`CPU during the crowded run: ${cpuDelta(cpuBefore, cpuAfter)}`);
  console.log(
    `steady job: alone ${base.toFixed(2)} s, beside the hostile tasks ${beside.toFixed(2)} s; slowdown ${(((beside - base) / base) * 100).toFixed(1)}% (target < 10%)`,
  );
} finally {
  await stack.stop();
  rmSync(scratch, { recursive: true, force: true });
}
