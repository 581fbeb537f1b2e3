// `br leaderboard`: the latest (or best) finished result per model and benchmark, over every run in
// the cluster, each with its n and 95% interval, and marked † where its provenance differs from its column's.

import { Option, type Command } from 'commander';
import { finishedRuns } from '../../client/leaderboard.js';
import { entryNames } from '../../runs/suites.js';
import { buildLeaderboard, DIFFERS_NOTE, leaderboardView } from '../../runs/leaderboard.js';
import type { CliDeps } from '../cli-deps.js';
import { example } from '../help-example.js';
import { addOutputFlags, emitOutput, type OutputFlags } from '../output-flags.js';
import { findSuite } from '../run-definition.js';
import { connectTemporal } from '../temporal-access.js';

interface LeaderboardFlags extends OutputFlags {
  benchmark?: string;
  suite?: string;
  suites?: string;
  pick: 'latest' | 'best';
}

export function registerLeaderboardCommand(program: Command, deps: CliDeps): Command {
  return addOutputFlags(
    program
      .command('leaderboard')
      .description('the latest (or best) finished result per model and benchmark, across every run in the cluster')
      .option('--benchmark <name>', 'only this benchmark')
      .option('--suite <name>', "only this suite's benchmarks")
      .option('--suites <file>', 'a suites YAML file of your own (default ~/.benchrouter/suites.yaml)')
      .addOption(new Option('--pick <which>', 'which run a cell shows').choices(['latest', 'best']).default('latest')),
    'leaderboard',
  )
    .addHelpText('after', example('$ br leaderboard --pick best --format xlsx --out leaderboard.xlsx'))
    .action(async (flags: LeaderboardFlags) => {
      let entries = await finishedRuns(await connectTemporal(deps, false), { benchmark: flags.benchmark });
      if (flags.suite) {
        const names = new Set(findSuite(flags.suite, flags.suites, deps.settings()).entries.flatMap(entryNames));
        entries = entries.filter((e) => names.has(e.benchmark));
      }
      const board = buildLeaderboard(entries, flags.pick);
      await emitOutput({ tables: [leaderboardView(board)] }, flags, 'leaderboard', deps);
      // On stderr, so that every format's output stays the table alone.
      if (Object.values(board.cells).some((row) => Object.values(row).some((cell) => cell.differs))) deps.say(DIFFERS_NOTE);
    });
}
