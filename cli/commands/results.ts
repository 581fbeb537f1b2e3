// `br results`: a finished run's results, as its table for people or in any export format; exits
// with the run's outcome.

import type { Command } from 'commander';
import { withJobs } from '../../client/run-jobs.js';
import { runWebUiLink } from '../../config/settings.js';
import type { CliDeps } from '../cli-deps.js';
import { EXIT_CODES, exitCodeOf } from '../exit-codes.js';
import { ExitError } from '../exit-error.js';
import { example } from '../help-example.js';
import { addOutputFlags, emitOutput, type OutputFlags } from '../output-flags.js';
import { runResultView } from '../results-view.js';
import { renderRunResult } from '../run-text.js';
import { existingRun } from '../temporal-access.js';

export function registerResultsCommand(program: Command, deps: CliDeps): Command {
  return addOutputFlags(
    program.command('results').description("print a finished run's results table").argument('<run>', 'run id').option('--wait', 'wait for a run that is still going'),
    '<run>',
  )
    .addHelpText('after', example('$ br results br-20261129-120000-a1b2c3 --format xlsx --out results.xlsx'))
    .action(async (runId: string, flags: OutputFlags & { wait?: boolean }) => {
      const handle = await existingRun(deps, runId);
      const { status } = await handle.describe();
      if (status.name === 'RUNNING' && !flags.wait) throw new ExitError(`run ${runId} is still running: see \`br status ${runId}\`, or add --wait`, EXIT_CODES.ERROR);
      if (status.name !== 'RUNNING' && status.name !== 'COMPLETED') throw new ExitError(`run ${runId} ended as ${status.name} without a result`, EXIT_CODES.ERROR);
      const result = await withJobs(handle.client, await handle.result());
      const text = `${renderRunResult(result, runWebUiLink(deps.settings(), result.runId))}\n`;
      await emitOutput({ tables: [runResultView(result, 'results')], json: result, text }, flags, runId, deps);
      deps.setExitCode(exitCodeOf(result.status));
    });
}
