// `br validate`: check a benchmark directory against the contract and print every problem at once.

import type { Command } from 'commander';
import { inspectBenchmark } from '../../contract/load-benchmark.js';
import { formatProblem } from '../../contract/problems.js';
import type { CliDeps } from '../cli-deps.js';
import { EXIT_CODES } from '../exit-codes.js';
import { example } from '../help-example.js';
import { resolveBenchmarkDir } from '../run-definition.js';

export function registerValidateCommand(program: Command, deps: CliDeps): Command {
  return program
    .command('validate')
    .description('check a benchmark directory against the contract and print every problem')
    .argument('<benchmark>', 'benchmark directory, or the name of a built-in benchmark')
    .option('--json', 'print problems as JSON')
    .addHelpText('after', example('$ br validate benchmarks/arith'))
    .action(async (arg: string, flags: { json?: boolean }) => {
      const outcome = inspectBenchmark(resolveBenchmarkDir(arg));
      if (flags.json) await deps.stdout(`${JSON.stringify({ valid: outcome.problems.length === 0, problems: outcome.problems }, null, 2)}\n`);
      else if (outcome.problems.length === 0) await deps.stdout(`${arg}: valid (${outcome.benchmark!.tasks.length} tasks)\n`);
      else deps.say(outcome.problems.map(formatProblem).join('\n'));
      if (outcome.problems.length) deps.setExitCode(EXIT_CODES.BAD_INPUT);
    });
}
