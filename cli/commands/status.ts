// `br status`: a run's state and per-job progress; exits with the run's outcome once it has one.

import type { Command } from 'commander';
import { queryProgress } from '../../client/runs.js';
import type { CliDeps } from '../cli-deps.js';
import { exitCodeOf } from '../exit-codes.js';
import { example } from '../help-example.js';
import { addOutputFlags, emitOutput, type OutputFlags } from '../output-flags.js';
import { progressLine } from '../run-text.js';
import { textTable } from '../table-export.js';
import { existingRun } from '../temporal-access.js';

export function registerStatusCommand(program: Command, deps: CliDeps): Command {
  return addOutputFlags(program.command('status').description("show a run's state and progress").argument('<run>', 'run id'), '<run>-status')
    .addHelpText('after', example('$ br status br-20261129-120000-a1b2c3', '$ br status br-20261129-120000-a1b2c3 --json'))
    .action(async (runId: string, flags: OutputFlags) => {
      const handle = await existingRun(deps, runId);
      const description = await handle.describe();
      const workflowStatus = description.status.name;
      const progress = await queryProgress(handle).catch(() => undefined);
      const result = workflowStatus === 'COMPLETED' ? await handle.result() : undefined;
      const status = result?.status ?? workflowStatus;
      const jobs = progress?.jobs.map((j) => [j.task, j.state]) ?? [];
      const text = `${runId}: ${status}\n${progress ? `${progressLine(progress)}\n${textTable(['JOB', 'STATE'], jobs)}\n` : ''}`;
      await emitOutput(
        { tables: [{ name: 'jobs', columns: ['job', 'state'], rows: jobs }], json: { runId, workflowStatus, status, progress }, text },
        flags,
        `${runId}-status`,
        deps,
      );
      if (result) deps.setExitCode(exitCodeOf(result.status));
    });
}
