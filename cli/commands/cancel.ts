// `br cancel`: stop a run's containers; the run ends CANCELLED and keeps what was harvested.

import type { Command } from 'commander';
import { withJobs } from '../../client/run-jobs.js';
import type { CliDeps } from '../cli-deps.js';
import { example } from '../help-example.js';
import { printRun } from '../run-progress.js';
import { existingRun } from '../temporal-access.js';

export function registerCancelCommand(program: Command, deps: CliDeps): Command {
  return program
    .command('cancel')
    .description('cancel a run: stop its containers and keep the results already harvested')
    .argument('<run>', 'run id')
    .option('--json', 'print the final result as JSON')
    .addHelpText('after', example('$ br cancel br-20261129-120000-a1b2c3'))
    .action(async (runId: string, flags: { json?: boolean }) => {
      const handle = await existingRun(deps, runId);
      await handle.cancel();
      deps.say(`cancellation requested for ${runId}; waiting for its containers to stop`);
      await printRun(deps, await withJobs(handle.client, await handle.result()), flags.json);
    });
}
