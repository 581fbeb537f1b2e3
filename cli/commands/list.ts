// `br list`: recent runs, newest first, filtered by model, benchmark or status.

import type { Command } from 'commander';
import { listRuns } from '../../client/runs.js';
import type { CliDeps } from '../cli-deps.js';
import { example } from '../help-example.js';
import { addOutputFlags, emitOutput, type OutputFlags } from '../output-flags.js';
import { positiveInt } from '../flag-values.js';
import { connectTemporal } from '../temporal-access.js';

interface ListFlags extends OutputFlags {
  limit: number;
  model?: string;
  benchmark?: string;
  status?: string;
}

export function registerListCommand(program: Command, deps: CliDeps): Command {
  return addOutputFlags(
    program
      .command('list')
      .description('list recent runs')
      .option('--limit <n>', 'how many runs', positiveInt, 20)
      .option('--model <name>', 'only runs of this model')
      .option('--benchmark <name>', 'only runs of this benchmark')
      .option('--status <status>', 'only runs with this status (RUNNING, COMPLETED, PARTIAL, FAILED, CANCELLED)'),
    'runs',
  )
    .addHelpText('after', example('$ br list --model reference-acc80 --status COMPLETED', '$ br list --format csv --out runs.csv'))
    .action(async (flags: ListFlags) => {
      const runs = await listRuns(await connectTemporal(deps, false), flags.limit, {
        model: flags.model,
        benchmark: flags.benchmark,
        status: flags.status?.toUpperCase(),
      });
      const table = {
        name: 'runs',
        columns: ['RUN', 'STATUS', 'BENCHMARK', 'MODEL', 'STARTED'],
        rows: runs.map((r) => [r.runId, r.status, r.benchmark, r.model, r.startTime]),
      };
      await emitOutput({ tables: [table], json: runs }, flags, 'runs', deps);
    });
}
