// `br down`: stop the embedded Temporal dev server, the background worker and the API server.

import type { Command } from 'commander';
import { stopEmbedded } from '../../client/embedded-services.js';
import type { CliDeps } from '../cli-deps.js';
import { example } from '../help-example.js';

export function registerDownCommand(program: Command, deps: CliDeps): Command {
  return program
    .command('down')
    .description('stop the embedded Temporal dev server, the background worker and the API server')
    .addHelpText('after', example('$ br down'))
    .action(async () => stopEmbedded(deps.settings(), deps.say));
}
