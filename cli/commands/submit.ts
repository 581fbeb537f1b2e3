// `br submit`: start a run and print its id without waiting.

import type { Command } from 'commander';
import { submitRun } from '../../client/runs.js';
import { runWebUiLink } from '../../config/settings.js';
import type { CliDeps } from '../cli-deps.js';
import { example } from '../help-example.js';
import { specFromFlags } from '../run-definition.js';
import { addRunOptionFlags, type ParsedFlags } from '../run-option-flags.js';
import { connectTemporal } from '../temporal-access.js';

export function registerSubmitCommand(program: Command, deps: CliDeps): Command {
  return addRunOptionFlags(
    program
      .command('submit')
      .description('start a run and print its id without waiting')
      .argument('<benchmark>', 'benchmark directory, or the name of a built-in benchmark'),
  )
    .option('--json', 'print the run id and its Web UI link as JSON')
    .addHelpText('after', example('$ br submit arith --model gpt-4o-mini --endpoint https://api.openai.com/v1 --api-key-env OPENAI_API_KEY'))
    .action(async (arg: string, flags: ParsedFlags & { json?: boolean }) => {
      const spec = specFromFlags(arg, flags);
      await submitRun(await connectTemporal(deps, true), deps.settings(), spec);
      if (flags.json) await deps.stdout(`${JSON.stringify({ runId: spec.runId, webUi: runWebUiLink(deps.settings(), spec.runId) }, null, 2)}\n`);
      else await deps.stdout(`${spec.runId}\n`);
    });
}
