// perf/real-model-catalogue: every built-in benchmark against a real model (docs/real-model.md), with limits
// that fit about an hour on a 2-core machine. Starts the model with scripts/real-model.sh (REAL_MODEL, the
// 1.5B Qwen2.5-Coder by default) unless --endpoint names one that is up, runs each entry through `br run` on a
// throwaway stack, and prints per benchmark: status and score, instances scored, model calls, tokens and wall
// time. Each run's records and transcripts stay under the stack's home, kept and printed at the end, to read
// why an instance scored 0 (`br records`, `br transcript` with that BENCHROUTER_HOME and TEMPORAL_ADDRESS).
//
//   npm run real-model:catalogue -- [--endpoint URL --model NAME] [--limit N | --instances A,B] [NAME...]
//   (NAMEs run only those entries, --limit or --instances in place of theirs; REAL_MODEL picks the model
//   scripts/real-model.sh serves)

import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RunResult } from '../runs/run-spec.js';
import { brJson, freePort, repoRoot, startStack, stopProcess } from './perf-support.js';

interface Entry {
  benchmark: string;
  /** The `br run` options that select what runs. */
  options: string[];
}

// The first instances of each, but where those are far beyond a small model (ScienceWorld's list opens with
// boiling and freezing), the named ones. Not evalscope: its datasets come from ModelScope, unreachable here (its
// fidelity test writes two of its own).
const ENTRIES: Entry[] = [
  { benchmark: 'arith', options: ['--limit', '10'] },
  { benchmark: 'humaneval', options: ['--limit', '5'] },
  { benchmark: 'mathematics', options: ['--limit', '5'] },
  { benchmark: 'bfcl', options: ['--limit', '4'] },
  { benchmark: 'mcp', options: ['--limit', '3'] },
  { benchmark: 'sql', options: ['--limit', '5'] },
  { benchmark: 'miniwob', options: ['--limit', '4'] },
  { benchmark: 'miniwob-mcp', options: ['--limit', '2'] },
  { benchmark: 'scienceworld', options: ['--instances', 'find-living-thing/225,find-non-living-thing/225'] },
  { benchmark: 'swe-repair', options: ['--limit', '2'] },
  { benchmark: 'inspect', options: ['--tasks', 'tau2_airline', '--limit', '1'] },
  { benchmark: 'inspect', options: ['--tasks', 'agentdojo', '--limit', '2'] },
];

const args = process.argv.slice(2);
const flag = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const flagValues = new Set(['--endpoint', '--model', '--limit', '--instances'].flatMap((f) => (flag(f) ? [flag(f)!] : [])));
/** The selection given on the command line, in place of each entry's. */
const selection = (['--limit', '--instances'] as const).flatMap((f) => (flag(f) ? [f, flag(f)!] : []));
const only = args.filter((a) => !a.startsWith('--') && !flagValues.has(a));

/** scripts/real-model.sh on a free port; resolves with its endpoint once it answers. */
async function startModel(model: string): Promise<{ child: ChildProcess; endpoint: string }> {
  const port = await freePort();
  const child = spawn(path.join(repoRoot, 'scripts', 'real-model.sh'), [String(port)], {
    env: { ...process.env, REAL_MODEL: model },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const endpoint = `http://127.0.0.1:${port}/v1`;
  for (let waited = 0; waited < 600; waited++) {
    if (child.exitCode !== null) throw new Error(`scripts/real-model.sh exited with ${child.exitCode}`);
    const up = await fetch(`${endpoint}/models`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return { child, endpoint };
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error('scripts/real-model.sh: no answer on /v1/models after 600 s');
}

interface Row {
  benchmark: string;
  options: string;
  status: string;
  overall: number | null;
  instances: number | null;
  calls: number;
  promptTokens: number;
  completionTokens: number;
  wallSeconds: number;
  runId: string;
  failures: string[];
}

async function main(): Promise<void> {
  const model = flag('--model') ?? process.env.REAL_MODEL ?? 'qwen2.5-coder-1.5b-instruct';
  const served = flag('--endpoint') ? undefined : await startModel(model);
  const endpoint = flag('--endpoint') ?? served!.endpoint;
  const stack = await startStack('real-model', {}, []);
  const rows: Row[] = [];
  try {
    for (const listed of ENTRIES.filter((e) => only.length === 0 || only.includes(e.benchmark))) {
      const kept = listed.options.filter((o, i, all) => o === '--tasks' || all[i - 1] === '--tasks');
      const entry = selection.length > 0 ? { ...listed, options: [...kept, ...selection] } : listed;
      const brArgs = ['run', path.join(repoRoot, 'benchmarks', entry.benchmark), '--model', model, '--endpoint', endpoint, ...entry.options];
      const { seconds: wallSeconds, code, stderr, value: result } = await brJson<RunResult>(brArgs, stack.env);
      if (!result) {
        console.error(`real-model:catalogue: ${entry.benchmark}: no JSON result (exit ${code}): ${stderr.slice(-800)}`);
        continue;
      }
      const usage = result.usage?.model;
      const row: Row = {
        benchmark: entry.benchmark,
        options: entry.options.join(' '),
        status: result.status,
        overall: result.overall ?? null,
        instances: result.scoreStats?.n ?? null,
        calls: usage?.requests ?? 0,
        promptTokens: usage?.promptTokens ?? 0,
        completionTokens: usage?.completionTokens ?? 0,
        wallSeconds,
        runId: result.runId,
        failures: result.jobs.filter((j) => j.status !== 'SUCCEEDED').map((j) => `${j.jobId} ${j.status} ${j.reason ?? ''}: ${j.message ?? ''}`),
      };
      rows.push(row);
      console.error(`real-model:catalogue: ${JSON.stringify(row)}`);
    }
  } finally {
    // The home holds the runs' records and transcripts: kept, to read each zero's reason from.
    writeFileSync(path.join(stack.home, 'catalogue.json'), JSON.stringify({ model, endpoint, rows }, null, 2));
    await stack.stop({ keepHome: true });
    if (served) await stopProcess(served.child);
  }
  console.log(`model ${model}; runs kept in ${stack.home} (BENCHROUTER_HOME; start a dev server on its temporal.db to read them)`);
  console.log('| Benchmark | Options | Status | Overall | Instances | Model calls | Tokens in / out | Wall |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const row of rows)
    console.log(
      `| ${row.benchmark} | \`${row.options}\` | ${row.status} | ${row.overall === null ? '-' : row.overall.toFixed(4)} | ${row.instances ?? '-'} | ${row.calls} | ${row.promptTokens.toLocaleString('en')} / ${row.completionTokens.toLocaleString('en')} | ${row.wallSeconds.toFixed(0)} s |`,
    );
  for (const row of rows) for (const failure of row.failures) console.log(`${row.benchmark}: ${failure}`);
}

await main();
