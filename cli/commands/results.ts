// `br results`: a finished run's results, as its table for people or in any export format, or one
// task's jobs in full (--task); exits with the run's outcome.

import type { Command } from 'commander';
import { withJobs } from '../../client/run-jobs.js';
import { runWebUiLink } from '../../config/settings.js';
import type { CliDeps } from '../cli-deps.js';
import { EXIT_CODES, exitCodeOf } from '../exit-codes.js';
import { ExitError } from '../exit-error.js';
import { InputError } from '../../contract/problems.js';
import { example } from '../help-example.js';
import { renderJobDetail } from '../job-detail.js';
import { addOutputFlags, emitOutput, type OutputFlags } from '../output-flags.js';
import { runResultView } from '../results-view.js';
import { jobLogTail } from '../run-artifacts.js';
import { waitWithProgress } from '../run-progress.js';
import { renderRunResult } from '../run-text.js';
import { existingRun } from '../temporal-access.js';

export function registerResultsCommand(program: Command, deps: CliDeps): Command {
  return addOutputFlags(
    program
      .command('results')
      .description("print a finished run's results table")
      .argument('<run>', 'run id')
      .option('--wait', 'wait for a run that is still going')
      .option('--task <task>', "only this task's jobs, in full: the whole failure reason and the last lines the container printed"),
    '<run>',
  )
    .addHelpText(
      'after',
      example('$ br results br-20261129-120000-a1b2c3 --format xlsx --out results.xlsx', '$ br results br-20261129-120000-a1b2c3 --task exits-nonzero'),
    )
    .action(async (runId: string, flags: OutputFlags & { wait?: boolean; task?: string }) => {
      const handle = await existingRun(deps, runId);
      const { status } = await handle.describe();
      if (status.name === 'RUNNING' && !flags.wait)
        throw new ExitError(`run ${runId} is still running: see \`br status ${runId}\`, or add --wait`, EXIT_CODES.ERROR);
      if (status.name !== 'RUNNING' && status.name !== 'COMPLETED')
        throw new ExitError(`run ${runId} ended as ${status.name} without a result`, EXIT_CODES.ERROR);
      const result = status.name === 'RUNNING' ? await waitWithProgress(deps, handle) : await withJobs(handle.client, await handle.result());
      if (flags.task !== undefined) {
        const jobs = result.jobs.filter((job) => job.task === flags.task || job.jobId === flags.task);
        if (!jobs.length)
          throw new InputError([
            {
              file: '--task',
              field: '',
              message: `expected a task of run ${runId} (${[...new Set(result.jobs.map((j) => j.task))].sort().join(', ')}), got "${flags.task}"`,
            },
          ]);
        const root = deps.settings().artifactsRoot;
        const detailed = jobs.map((job) => ({ job, logTail: jobLogTail(root, job.carriedFrom ?? runId, job.jobId) }));
        const table = {
          name: 'jobs',
          columns: ['job', 'task', 'status', 'reason', 'message', 'log tail'],
          rows: detailed.map(({ job, logTail }) => [job.jobId, job.task, job.status, job.reason ?? null, job.message ?? null, logTail ?? null]),
        };
        await emitOutput(
          {
            tables: [table],
            json: detailed.map(({ job, logTail }) => ({ ...job, logTail: logTail ?? null })),
            text: detailed.map(({ job, logTail }) => renderJobDetail(job, logTail)).join('\n'),
          },
          flags,
          `${runId}-${flags.task}`,
          deps,
        );
        deps.setExitCode(exitCodeOf(result.status));
        return;
      }
      const text = `${renderRunResult(result, runWebUiLink(deps.settings(), result.runId), process.stdout.columns)}\n`;
      await emitOutput({ tables: [runResultView(result, 'results')], json: result, text }, flags, runId, deps);
      deps.setExitCode(exitCodeOf(result.status));
    });
}
