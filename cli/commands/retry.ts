// `br retry`: a new run of the jobs of a finished run that did not succeed, carrying the succeeded
// results over.

import { jobCountOf } from '../../runs/job-specs.js';
import type { Command } from 'commander';
import { withJobs } from '../../client/run-jobs.js';
import { retrySpecOf, submitRun } from '../../client/runs.js';
import type { CliDeps } from '../cli-deps.js';
import { EXIT_CODES } from '../exit-codes.js';
import { ExitError } from '../exit-error.js';
import { example } from '../help-example.js';
import { printRun, waitWithProgress } from '../run-progress.js';
import { connectTemporal, existingRun } from '../temporal-access.js';

export function registerRetryCommand(program: Command, deps: CliDeps): Command {
  return program
    .command('retry')
    .description('start a new run of the jobs that did not succeed, carrying the succeeded results over')
    .argument('<run>', 'run id of a finished run')
    .option('--json', 'print the result as JSON')
    .option('--no-wait', 'print the new run id and return')
    .addHelpText('after', example('$ br retry br-20261129-120000-a1b2c3'))
    .action(async (runId: string, flags: { json?: boolean; wait: boolean }) => {
      const original = await existingRun(deps, runId);
      const { status } = await original.describe();
      if (status.name !== 'COMPLETED') throw new ExitError(`run ${runId} is ${status.name}: only a finished run can be retried`, EXIT_CODES.BAD_INPUT);
      const result = await withJobs(original.client, await original.result());
      const spec = await retrySpecOf(original, result);
      if (jobCountOf(spec) === 0) {
        deps.say(`run ${runId}: every job succeeded; nothing to retry`);
        return;
      }
      const handle = await submitRun(await connectTemporal(deps, true), deps.settings(), spec);
      const instances = Object.values(spec.retryOf!.instances ?? {}).reduce((sum, carried) => sum + carried.rewards.length, 0);
      deps.say(
        `run ${spec.runId}: retrying ${jobCountOf(spec)} of ${result.jobs.length} jobs of ${runId} (${spec.retryOf!.carried.length} carried over${instances ? `, and ${instances} instances their shards had scored` : ''})`,
      );
      if (!flags.wait) {
        await deps.stdout(`${spec.runId}\n`);
        return;
      }
      await printRun(deps, await waitWithProgress(deps, handle), flags.json);
    });
}
