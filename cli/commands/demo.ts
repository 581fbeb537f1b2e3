// `br demo`: the built-in arith benchmark against the reference model on the embedded default (what
// `npm run demo` runs after bootstrapping), with the dashboard link of the run.

import type { Command } from 'commander';
import { submitRun } from '../../client/runs.js';
import { startReferenceModel } from '../../reference-model/reference-model-server.js';
import type { CliDeps } from '../cli-deps.js';
import { sayDashboardLink, startEmbeddedApi } from '../dashboard-link.js';
import { example } from '../help-example.js';
import { specFromFlags } from '../run-definition.js';
import { printRun, waitWithProgress } from '../run-progress.js';
import { connectTemporal } from '../temporal-access.js';

export function registerDemoCommand(program: Command, deps: CliDeps): Command {
  return program
    .command('demo')
    .description('run the built-in arith benchmark against the reference model on the embedded default')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', example('$ npm run demo'))
    .action(async (flags: { json?: boolean }) => {
      const model = await startReferenceModel({ port: 0, recordRequests: false });
      try {
        deps.say(`reference model on ${model.url}`);
        const spec = specFromFlags('arith', {
          model: 'reference-acc80',
          endpoint: model.url,
          concurrency: 8,
          json: flags.json,
          gateway: true,
          gen: [],
          repeats: 1,
        });
        const client = await connectTemporal(deps, true);
        const api = deps.settings().embedded ? startEmbeddedApi(deps) : undefined;
        const handle = await submitRun(client, deps.settings(), spec);
        deps.say(`run ${spec.runId}: ${spec.tasks.length} jobs of arith against reference-acc80 (the first run builds the image)`);
        // A just-started API server needs a few seconds to listen; the run takes longer than that anyway.
        await sayDashboardLink(deps, spec.runId, api);
        if (api) deps.say(`  sign in with the token in ${api.tokenFile}`);
        await printRun(deps, await waitWithProgress(deps, handle), flags.json);
      } finally {
        await model.close();
      }
    });
}
