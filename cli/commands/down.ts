// `br down`: stop the background worker, the API server and the embedded Temporal dev server: SIGTERM,
// then SIGKILL after a grace period (a wedged worker cannot act on SIGTERM); it reports only stops that happened.

import type { Command } from 'commander';
import { stopEmbedded } from '../../embedded/embedded-services.js';
import type { CliDeps } from '../cli-deps.js';
import { example } from '../help-example.js';
import { positiveInt } from '../flag-values.js';

export function registerDownCommand(program: Command, deps: CliDeps): Command {
  return program
    .command('down')
    .description('stop the background worker, the API server and the embedded Temporal dev server (SIGTERM, then SIGKILL after --grace seconds)')
    .option('--grace <seconds>', 'how long each process gets to stop after SIGTERM before SIGKILL', positiveInt, 15)
    .addHelpText('after', example('$ br down', '$ br down --grace 60'))
    .action(async (flags: { grace: number }) => stopEmbedded(deps.settings(), deps.say, flags.grace * 1000));
}
