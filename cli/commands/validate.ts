// `br validate`: check a benchmark directory against the contract and print every problem at once; with
// --run-once, also run one of its tasks for real (a few instances, against the reference model unless a
// model is given) and check what it wrote: result.json against result_mapping, and records.jsonl line by line.

import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { BUILTIN_ROUTERS_DIR, inspectRouter, isRouterDirectory } from '../../contract/load-router.js';
import { submitRun } from '../../client/runs.js';
import { inspectBenchmark } from '../../contract/load-benchmark.js';
import { formatProblem, InputError } from '../../contract/problems.js';
import { startReferenceModel } from '../../reference-model/reference-model-server.js';
import type { JobResult } from '../../runs/run-spec.js';
import type { CliDeps } from '../cli-deps.js';
import { EXIT_CODES } from '../exit-codes.js';
import { example } from '../help-example.js';
import { jobLogTail } from '../run-artifacts.js';
import { resolveBenchmarkDir, specFromFlags } from '../run-definition.js';
import { positiveInt } from '../flag-values.js';
import { waitWithProgress } from '../run-progress.js';
import { connectTemporal } from '../temporal-access.js';

interface ValidateFlags {
  json?: boolean;
  runOnce?: boolean;
  task?: string;
  limit: number;
  model?: string;
  endpoint?: string;
  apiKeyEnv?: string;
}

/** Instances a run-once runs by default: enough to see records, few enough to take seconds. */
const RUN_ONCE_LIMIT = 3;

export function registerValidateCommand(program: Command, deps: CliDeps): Command {
  return program
    .command('validate')
    .description('check a benchmark (or router) directory against its contract and print every problem; --run-once also runs one task and checks its outputs')
    .argument('<benchmark>', 'benchmark or router directory, or the name of a built-in one')
    .option('--json', 'print problems (and the run-once outcome) as JSON')
    .option(
      '--run-once',
      'also run one task for real on this machine (the embedded default unless TEMPORAL_ADDRESS is set) and check result.json and records.jsonl',
    )
    .option('--task <task>', 'with --run-once: the task to run (default: the first)')
    .option('--limit <n>', `with --run-once: instances to run (BENCHROUTER_LIMIT; default ${RUN_ONCE_LIMIT})`, positiveInt, RUN_ONCE_LIMIT)
    .option('--model <name>', 'with --run-once: the model (default: the built-in reference model, started for the check)')
    .option('--endpoint <url>', 'with --run-once and --model: its OpenAI-compatible base URL')
    .option('--api-key-env <var>', 'with --run-once and --model: the variable holding its API key')
    .addHelpText('after', example('$ br validate benchmarks/arith', '$ br validate ./my-benchmark --run-once --task easy --limit 5'))
    .action(async (arg: string, flags: ValidateFlags) => {
      const routerDir = routerDirOf(arg);
      if (routerDir) return validateRouter(deps, arg, routerDir, flags);
      const dir = resolveBenchmarkDir(arg);
      const outcome = inspectBenchmark(dir);
      const valid = outcome.problems.length === 0;
      if (!flags.runOnce || !valid) {
        if (flags.json) await deps.stdout(`${JSON.stringify({ valid, problems: outcome.problems }, null, 2)}\n`);
        else if (valid) await deps.stdout(`${arg}: valid (${outcome.benchmark!.tasks.length} tasks)\n`);
        else deps.say(outcome.problems.map(formatProblem).join('\n'));
        if (!valid) deps.setExitCode(EXIT_CODES.BAD_INPUT);
        return;
      }
      const tasks = outcome.benchmark!.tasks.map((t) => t.name);
      const task = flags.task ?? tasks[0]!;
      if (!tasks.includes(task))
        throw new InputError([{ file: '--task', field: '', message: `expected a task of ${arg} (${tasks.join(', ')}), got "${task}"` }]);
      if (Boolean(flags.model) !== Boolean(flags.endpoint))
        throw new InputError([{ file: '--model', field: '', message: 'give --model and --endpoint together, or neither (the reference model)' }]);
      const { runId, job } = await runOnce(deps, arg, task, flags);
      const findings = runOnceFindings(job, jobLogTail(deps.settings().artifactsRoot, runId, job.jobId));
      if (flags.json) await deps.stdout(`${JSON.stringify({ valid: findings.ok, problems: [], runOnce: { job, findings: findings.lines } }, null, 2)}\n`);
      else await deps.stdout(`${arg}: valid (${tasks.length} tasks)\n${findings.lines.map((l) => `  ${l}`).join('\n')}\n`);
      if (!findings.ok) deps.setExitCode(EXIT_CODES.BAD_INPUT);
    });
}

/** A router directory (one with router.yaml), given as a path or a built-in router's name; undefined for anything else. */
function routerDirOf(arg: string): string | undefined {
  if (existsSync(arg)) return isRouterDirectory(arg) ? path.resolve(arg) : undefined;
  const builtin = path.join(BUILTIN_ROUTERS_DIR, arg);
  return isRouterDirectory(builtin) ? builtin : undefined;
}

/** The router contract's checks (router.yaml, Dockerfile); a router runs only inside `br analyze --routers`. */
async function validateRouter(deps: CliDeps, arg: string, dir: string, flags: ValidateFlags): Promise<void> {
  if (flags.runOnce)
    throw new InputError([{ file: '--run-once', field: '', message: `${arg} is a router: run it with br analyze --routers ${arg} on records` }]);
  const { router, problems } = inspectRouter(dir);
  if (flags.json) await deps.stdout(`${JSON.stringify({ valid: problems.length === 0, kind: 'router', problems }, null, 2)}\n`);
  else if (router) {
    const needs = Object.entries(router.needs)
      .filter(([, v]) => v)
      .map(([k]) => k);
    await deps.stdout(`${arg}: valid router "${router.name}" (needs: ${needs.length ? needs.join(', ') : 'nothing'})\n`);
  } else deps.say(problems.map(formatProblem).join('\n'));
  if (problems.length) deps.setExitCode(EXIT_CODES.BAD_INPUT);
}

/** Runs one task of the benchmark as a real run would, and returns its one job's result. */
async function runOnce(deps: CliDeps, arg: string, task: string, flags: ValidateFlags): Promise<{ runId: string; job: JobResult }> {
  const reference = flags.model ? undefined : await startReferenceModel({ port: 0, recordRequests: false });
  try {
    const spec = specFromFlags(arg, {
      model: flags.model ?? 'reference-acc80',
      endpoint: flags.endpoint ?? reference!.url,
      ...(flags.apiKeyEnv ? { apiKeyEnv: flags.apiKeyEnv } : {}),
      tasks: task,
      limit: flags.limit,
      concurrency: 1,
      gateway: true,
      gen: [],
      repeats: 1,
    });
    const handle = await submitRun(await connectTemporal(deps, true), deps.settings(), spec);
    deps.say(`run-once: task ${task} (${flags.limit} instances) against ${spec.options.model}, run ${spec.runId}`);
    const result = await waitWithProgress(deps, handle);
    return { runId: spec.runId, job: result.jobs[0]! };
  } finally {
    await reference?.close();
  }
}

/** What a benchmark author needs to know of one job: whether it kept the contract, and where not, why. */
export function runOnceFindings(job: JobResult, logTail: string | undefined): { ok: boolean; lines: string[] } {
  const lines: string[] = [`job ${job.jobId}: ${job.status}${job.reason ? ` (${job.reason})` : ''}`];
  let ok = job.status === 'SUCCEEDED';
  if (job.result) lines.push(`result.json -> overall ${job.result.overall}, raw_metrics ${JSON.stringify(job.result.raw_metrics)}`);
  if (job.message) lines.push(`why: ${job.message}`);
  if (!ok && logTail)
    lines.push(
      'the last lines it printed:',
      ...logTail
        .trimEnd()
        .split('\n')
        .map((l) => `  ${l}`),
    );
  const records = job.records;
  if (!records) lines.push('records.jsonl: none written (optional; per-instance records, pass@k and routing analysis need it)');
  else {
    lines.push(`records.jsonl: ${records.count} read, ${records.badLines} rejected`);
    if (records.badLines > 0) {
      ok = false;
      lines.push(...records.badLineExamples.map((problem) => `  ${problem}`), 'each line needs index and score (docs/benchmark-contract.md)');
    }
  }
  lines.push(ok ? 'ok: the task ran as the contract asks' : 'not ok: fix the above before a real run');
  return { ok, lines };
}
