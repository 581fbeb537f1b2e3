// `br up`: start the embedded Temporal dev server (with its Web UI), a background worker and the API
// server with its dashboard; return only once the worker polls and its gateway listens, else say why
// (the worker's own log) and exit 1.

import type { Command } from 'commander';
import { ensureBackgroundWorker, refuseTakenGatewayPort, startEmbeddedServer, waitForApiServer } from '../../embedded/embedded-services.js';
import { resolveHostId } from '../../workers/host-id.js';
import type { CliDeps } from '../cli-deps.js';
import { startEmbeddedApi } from '../dashboard-link.js';
import { EXIT_CODES } from '../exit-codes.js';
import { ExitError } from '../exit-error.js';
import { example } from '../help-example.js';

export function registerUpCommand(program: Command, deps: CliDeps): Command {
  return program
    .command('up')
    .description('start the embedded Temporal dev server (with Web UI), a background worker and the API server with its dashboard; wait until the worker polls')
    .addHelpText('after', example('$ br up'))
    .action(async () => {
      const settings = deps.settings();
      if (!settings.embedded) throw new ExitError(`TEMPORAL_ADDRESS is set (${settings.temporalAddress}): nothing embedded to start`, EXIT_CODES.BAD_INPUT);
      await refuseTakenGatewayPort(settings); // before anything starts: nothing is left half up
      await startEmbeddedServer(settings, deps.say);
      const pid = await ensureBackgroundWorker(settings, resolveHostId(settings.home, deps.env), deps.say);
      deps.say(
        `ready: Temporal ${settings.temporalAddress}, Web UI ${settings.webUiUrl}, worker pid ${pid} polling ${settings.sharedQueue}, gateway on port ${settings.gatewayPort}`,
      );
      const api = startEmbeddedApi(deps);
      if (api.started) await waitForApiServer(settings, api.started);
      deps.say(`dashboard: ${settings.apiUrl}/ (sign in with the token in ${api.tokenFile}; API docs ${settings.apiUrl}/docs)`);
    });
}
