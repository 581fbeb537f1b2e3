// `br worker`: this host's worker in the foreground, polling the shared queue and the host's own.

import type { Command } from 'commander';
import { resolveHostId } from '../../workers/host-id.js';
import type { CliDeps } from '../cli-deps.js';
import { positiveInt } from '../flag-values.js';
import { example } from '../help-example.js';
import { DEFAULT_ENGINE } from '../../config/settings.js';

export function registerWorkerCommand(program: Command, deps: CliDeps): Command {
  return program
    .command('worker')
    .description("run this host's worker in the foreground: the shared queue and the host's own queue")
    .addHelpText('after', example('$ BENCHROUTER_HOST_ID=gpu-box-1 TEMPORAL_ADDRESS=temporal.internal:7233 br worker'))
    .option('--max-containers <n>', 'task containers this host runs at once, first attempts and later ones together (default 32)', positiveInt)
    .option('--engine <name>', `the task engine this host runs tasks on (default: BENCHROUTER_ENGINE, else ${DEFAULT_ENGINE}); docker or kubernetes`)
    .action(async (options: { maxContainers?: number; engine?: string }) => {
      const settings = { ...deps.settings(), ...(options.engine ? { engine: options.engine } : {}) };
      const hostId = resolveHostId(settings.home);
      // The worker SDK (and the activities, Docker among them) load here: no other command pays for them.
      const { startWorker } = await import('../../workers/start-worker.js');
      const worker = await startWorker({
        settings,
        hostId,
        workflowBundlePath: deps.env.BENCHROUTER_WORKFLOW_BUNDLE,
        say: deps.say,
        ...(options.maxContainers ? { maxConcurrentContainers: options.maxContainers } : {}),
      });
      deps.say(`worker ${worker.identity}: polling ${settings.sharedQueue} and ${worker.hostQueue} at ${settings.temporalAddress}`);
      // The SDK's runtime shuts the workers down on SIGTERM/SIGINT: running activities are cancelled and
      // `done` resolves. That needs a free event loop; `br down` escalates to SIGKILL for a worker whose loop is blocked.
      await worker.done;
      deps.say(`worker ${worker.identity}: stopped`);
    });
}
