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
      // A job of a task run in shards says which shard it is (its id's .sNNN) and how many instances it holds.
      const sharded = progress?.jobs.some((j) => j.instances !== undefined) ?? false;
      const jobs = progress?.jobs.map((j) => (sharded ? [j.task, shardOfJobId(j.jobId), j.instances ?? null, j.state] : [j.task, j.state])) ?? [];
      const columns = sharded ? ['job', 'shard', 'instances', 'state'] : ['job', 'state'];
      const text = `${runId}: ${status}\n${
        progress
          ? `${progressLine(progress)}\n${textTable(
              columns.map((c) => c.toUpperCase()),
              jobs.map((row) => row.map((cell) => (cell === null ? '-' : String(cell)))),
            )}\n`
          : ''
      }`;
      await emitOutput(
        { tables: [{ name: 'jobs', columns, rows: jobs }], json: { runId, workflowStatus, status, progress }, text },
        flags,
        `${runId}-status`,
        deps,
      );
      if (result) deps.setExitCode(exitCodeOf(result.status));
    });
}

/** `s003` of a job id `<run>.000-task.s003[.r1]`; `-` for a job of a task not split. */
function shardOfJobId(jobId: string): string {
  return /\.(s\d+)(?:\.r\d+)?$/.exec(jobId)?.[1] ?? '-';
}
