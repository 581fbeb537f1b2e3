// `br compare`: several runs in one table, benchmarks and tasks as rows and one column per model.

import type { Command } from 'commander';
import { runResults } from '../../client/leaderboard.js';
import { compareView } from '../../runs/leaderboard.js';
import type { CliDeps } from '../cli-deps.js';
import { example } from '../help-example.js';
import { addOutputFlags, emitOutput, type OutputFlags } from '../output-flags.js';
import { connectTemporal, existingRun } from '../temporal-access.js';

export function registerCompareCommand(program: Command, deps: CliDeps): Command {
  return addOutputFlags(
    program.command('compare').description('one table of several runs: benchmarks and tasks as rows, one column per model').argument('<run...>', 'run ids'),
    'compare',
  )
    .addHelpText('after', example('$ br compare br-20261129-120000-a1b2c3 br-20261129-130000-d4e5f6 --format md'))
    .action(async (runIds: string[], flags: OutputFlags) => {
      const client = await connectTemporal(deps, false);
      for (const runId of runIds) await existingRun(deps, runId, client);
      await emitOutput({ tables: [compareView(await runResults(client, runIds, 16, false))] }, flags, 'compare', deps);
    });
}
