// How commands reach Temporal: commands that submit start the embedded dev server when none is
// configured; the others say how to reach one. A run is looked up by id, an unknown id is bad input.

import type { Client } from '@temporalio/client';
import { ensureBackgroundWorker, isReachable, startEmbeddedServer } from '../embedded/embedded-services.js';
import { resolveHostId } from '../workers/host-id.js';
import { connectClient, runExists, runHandle, type RunHandle } from '../client/runs.js';
import type { CliDeps } from './cli-deps.js';
import { EXIT_CODES } from './exit-codes.js';
import { ExitError } from './exit-error.js';

export async function connectTemporal(deps: CliDeps, autoStart: boolean): Promise<Client> {
  const settings = deps.settings();
  if (settings.embedded && autoStart) {
    await startEmbeddedServer(settings, deps.say);
    await ensureBackgroundWorker(settings, resolveHostId(settings.home, deps.env), deps.say);
  } else if (!(await isReachable(settings.temporalAddress))) {
    const hint = settings.embedded ? 'start the embedded server with `br up`' : 'check TEMPORAL_ADDRESS';
    throw new ExitError(`cannot reach Temporal at ${settings.temporalAddress}: ${hint}`, EXIT_CODES.ERROR);
  }
  return connectClient(settings);
}

export async function existingRun(deps: CliDeps, runId: string, client?: Client): Promise<RunHandle> {
  const handle = runHandle(client ?? (await connectTemporal(deps, false)), runId);
  if (!(await runExists(handle))) throw new ExitError(`run ${runId} not found in namespace ${deps.settings().temporalNamespace}`, EXIT_CODES.BAD_INPUT);
  return handle;
}
