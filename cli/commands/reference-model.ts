// `br reference-model`: serve the deterministic OpenAI-compatible reference model.

import type { Command } from 'commander';
import { startReferenceModel } from '../../reference-model/reference-model-server.js';
import type { CliDeps } from '../cli-deps.js';
import { example } from '../help-example.js';
import { positiveInt } from '../flag-values.js';

export function registerReferenceModelCommand(program: Command, deps: CliDeps): Command {
  return program
    .command('reference-model')
    .description('serve the deterministic OpenAI-compatible reference model')
    .option('--port <n>', 'port on 127.0.0.1', positiveInt, 8399)
    .option('--served-model <name>', 'the model id GET /v1/models lists (a checkpoint, say); default: every reference name')
    .addHelpText('after', example('$ br reference-model --port 8399', '$ br reference-model --served-model reference-acc50'))
    .action(async (flags: { port: number; servedModel?: string }) => {
      const server = await startReferenceModel({
        port: flags.port,
        recordRequests: false,
        ...(flags.servedModel ? { servedModels: [flags.servedModel] } : {}),
      });
      deps.say(`reference model listening on ${server.url}`);
      await new Promise(() => undefined);
    });
}
