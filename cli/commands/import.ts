// `br import evalscope DIR`: earlier EvalScope evaluations become BenchRouter runs of the evalscope benchmark,
// one per model, so they appear in `br leaderboard`, `br results` and `br analyze --runs` beside new runs.

import type { Command } from 'commander';
import { withJobs } from '../../client/run-jobs.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readEvalScopeOutputs, type EvalScopeResult } from '../evalscope-outputs.js';
import { createRunSpec, submitRun } from '../../client/runs.js';
import { loadBenchmark } from '../../contract/load-benchmark.js';
import { jobFile, jobResultsDir } from '../../runs/job-artifacts.js';
import type { JobResult, RunResult } from '../../runs/run-spec.js';
import type { CliDeps } from '../cli-deps.js';
import { EXIT_CODES } from '../exit-codes.js';
import { ExitError } from '../exit-error.js';
import { example } from '../help-example.js';
import { resolveBenchmarkDir } from '../run-definition.js';
import { connectTemporal } from '../temporal-access.js';

/** Where an imported run says its results came from (its endpoint is no model: nothing is called). */
const IMPORT_ENDPOINT = 'evalscope-import:';

function importedJob(runId: string, index: number, result: EvalScopeResult, at: string): JobResult {
  return {
    jobId: `${runId}.${String(index + 1).padStart(3, '0')}-${result.dataset}`,
    task: result.dataset,
    status: 'SUCCEEDED',
    result: {
      overall: result.score,
      raw_metrics: { score: result.score, samples: result.num, metric: result.metric, subsets: result.subsets, report: result.reportFile },
    },
    message: `imported from ${result.reportFile}`,
    repeat: 0,
    timings: { queuedAt: at, finishedAt: at, containerSeconds: 0 },
  };
}

export function registerImportCommand(program: Command, deps: CliDeps): Command {
  const command = program
    .command('import')
    .description('bring results made outside BenchRouter into its runs')
    .addHelpText('after', example('$ br import evalscope ./outputs/20260519_120000'));
  command
    .command('evalscope')
    .description('an EvalScope output folder (reports and reviews) as runs of the evalscope benchmark, one per model')
    .argument('<dir>', 'an EvalScope work dir, or a folder of them (timestamped reruns: the newest wins)')
    .option('--json', 'print the imported runs as JSON')
    .addHelpText('after', example('$ br import evalscope ./outputs'))
    .action(async (dir: string, flags: { json?: boolean }) => {
      const results = readEvalScopeOutputs(path.resolve(dir));
      const benchmark = loadBenchmark(resolveBenchmarkDir('evalscope'));
      const known = new Set(benchmark.tasks.map((t) => t.name));
      const unknown = [...new Set(results.map((r) => r.dataset).filter((d) => !known.has(d)))];
      if (unknown.length)
        throw new ExitError(
          `${dir}: no evalscope task for dataset ${unknown.join(', ')}: add it to benchmarks/evalscope/generate_tasks.py`,
          EXIT_CODES.BAD_INPUT,
        );
      const settings = deps.settings();
      const client = await connectTemporal(deps, true);
      const runs: RunResult[] = [];
      for (const model of [...new Set(results.map((r) => r.model))].sort()) {
        const made = createRunSpec(benchmark, { model, endpoint: 'http://import.invalid/v1' });
        // Nothing was called: the endpoint records where the results came from instead.
        const spec = { ...made, options: { ...made.options, endpoint: `${IMPORT_ENDPOINT}${path.resolve(dir)}` } };
        const at = spec.submittedAt;
        const jobs = results.filter((r) => r.model === model).map((r, i) => ({ job: importedJob(spec.runId, i, r, at), result: r }));
        // Records go where a run's own jobs keep theirs, so `br analyze --runs` and `br records` read them alike.
        for (const { job, result } of jobs) {
          const ref = { runId: spec.runId, jobId: job.jobId };
          mkdirSync(jobResultsDir(settings.artifactsRoot, ref), { recursive: true });
          writeFileSync(
            jobFile(settings.artifactsRoot, ref, 'records'),
            result.records.map((r) => JSON.stringify(r)).join('\n') + (result.records.length ? '\n' : ''),
          );
          writeFileSync(jobFile(settings.artifactsRoot, ref, 'result'), `${JSON.stringify(job.result!.raw_metrics, null, 2)}\n`);
        }
        // Nothing to run: every job is carried in, so the run workflow ends at once with them as its results.
        const handle = await submitRun(client, settings, {
          ...spec,
          // Its endpoint names the folder the results came from: nothing to check, nothing is called.
          options: { ...spec.options, preflight: false },
          tasks: [],
          retryOf: { runId: `${IMPORT_ENDPOINT}${path.resolve(dir)}`, carried: jobs.map((j) => j.job) },
        });
        const run = await withJobs(handle.client, await handle.result());
        runs.push(run);
        deps.say(`run ${run.runId}: ${model}, ${jobs.length} EvalScope results imported (overall ${run.overall ?? 'n/a'})`);
      }
      await deps.stdout(flags.json ? `${JSON.stringify(runs, null, 2)}\n` : runs.map((r) => `${r.runId}\t${r.model}\t${r.overall ?? ''}`).join('\n') + '\n');
    });
  return command;
}
