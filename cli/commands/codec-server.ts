// `br codec-server`: serve /encode and /decode so the Temporal Web UI can show encrypted payloads.

import type { Command } from 'commander';
import { startCodecServer } from '../../client/codec-server.js';
import { payloadCodecsFromEnv } from '../../client/payload-codec.js';
import type { CliDeps } from '../cli-deps.js';
import { EXIT_CODES } from '../exit-codes.js';
import { ExitError } from '../exit-error.js';
import { example } from '../help-example.js';
import { positiveInt } from '../flag-values.js';

export function registerCodecServerCommand(program: Command, deps: CliDeps): Command {
  return program
    .command('codec-server')
    .description('serve /encode and /decode so the Temporal Web UI can show encrypted payloads')
    .option('--port <n>', 'port on 127.0.0.1', positiveInt, 8888)
    .option('--ui-origin <url>', 'the Web UI origin allowed to call it (default: BENCHROUTER_WEB_UI, else http://localhost:8233)')
    .addHelpText('after', example('$ BENCHROUTER_PAYLOAD_KEY=... br codec-server --port 8888   # then start-dev --ui-codec-endpoint http://127.0.0.1:8888'))
    .action(async (flags: { port: number; uiOrigin?: string }) => {
      const [codec] = payloadCodecsFromEnv();
      if (!codec) throw new ExitError('BENCHROUTER_PAYLOAD_KEY is not set: there is nothing to decode with', EXIT_CODES.BAD_INPUT);
      const uiOrigin = flags.uiOrigin ?? deps.settings().webUiUrl;
      await startCodecServer(codec, { port: flags.port, allowOrigin: uiOrigin });
      deps.say(`codec server on http://127.0.0.1:${flags.port} for ${uiOrigin}`);
      await new Promise(() => undefined);
    });
}
