// `br up`: start the embedded Temporal dev server (with its Web UI), a background worker, and the API
// server with its dashboard on a fixed port (signed in with a local token made on first use).

import type { Command } from 'commander';
import { startBackgroundWorker, startEmbeddedServer } from '../../client/embedded-services.js';
import type { CliDeps } from '../cli-deps.js';
import { startEmbeddedApi } from '../dashboard-link.js';
import { EXIT_CODES } from '../exit-codes.js';
import { ExitError } from '../exit-error.js';
import { example } from '../help-example.js';

export function registerUpCommand(program: Command, deps: CliDeps): Command {
  return program
    .command('up')
    .description('start the embedded Temporal dev server (with Web UI), a background worker and the API server with its dashboard')
    .addHelpText('after', example('$ br up'))
    .action(async () => {
      const settings = deps.settings();
      if (!settings.embedded) throw new ExitError(`TEMPORAL_ADDRESS is set (${settings.temporalAddress}): nothing embedded to start`, EXIT_CODES.BAD_INPUT);
      await startEmbeddedServer(settings, deps.say);
      startBackgroundWorker(settings, deps.say);
      const tokenFile = startEmbeddedApi(deps);
      deps.say(`ready: Temporal ${settings.temporalAddress}, Web UI ${settings.webUiUrl}`);
      deps.say(`dashboard: ${settings.apiUrl}/ (sign in with the token in ${tokenFile}; API docs ${settings.apiUrl}/docs)`);
    });
}
