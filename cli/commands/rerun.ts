// `br rerun`: a new run of every task of a run, on the definitions it pinned (with --cache, its
// gateway answers replayed).

import type { Command } from 'commander';
import { createRerunSpec, runSpecOf, submitRun } from '../../client/runs.js';
import type { CliDeps } from '../cli-deps.js';
import { example } from '../help-example.js';
import { printRun, waitWithProgress } from '../run-progress.js';
import { connectTemporal, existingRun } from '../temporal-access.js';

export function registerRerunCommand(program: Command, deps: CliDeps): Command {
  return program
    .command('rerun')
    .description('start a new run of every task of a run, on the definitions it pinned (with --cache, replaying its answers)')
    .argument('<run>', 'run id')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', example('$ br rerun br-20261129-120000-a1b2c3 --json'))
    .action(async (runId: string, flags: { json?: boolean }) => {
      const original = await existingRun(deps, runId);
      const spec = createRerunSpec(await runSpecOf(original));
      const handle = await submitRun(await connectTemporal(deps, true), deps.settings(), spec);
      deps.say(`run ${spec.runId}: rerun of ${runId}${spec.options.cache ? ' (cached answers replayed)' : ''}`);
      await printRun(deps, await waitWithProgress(deps, handle), flags.json);
    });
}
