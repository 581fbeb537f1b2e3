// How commands reach Temporal: commands that submit start the embedded dev server when none is
// configured; the others say how to reach one. A run is looked up by id, an unknown id is bad input.

import type { Client } from '@temporalio/client';
import { ensureBackgroundWorker, isReachable, startEmbeddedServer } from '../embedded/embedded-services.js';
import { resolveHostId } from '../workers/host-id.js';
import { connectClient, runExists, runHandle, type RunHandle } from '../client/runs.js';
import type { Settings } from '../config/settings.js';
import { usesTls } from '../config/temporal-connection.js';
import { speaksTls } from '../config/tls-probe.js';
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
  try {
    return await connectClient(settings);
  } catch (error) {
    if (error instanceof Error && /^TEMPORAL_/.test(error.message)) throw error; // a setting that is wrong says so itself
    throw new ExitError(await whyNoConnection(settings, error as Error), EXIT_CODES.ERROR);
  }
}

/** The port answers but the connection failed: most often TLS on one side only, which Temporal reports as a timeout. */
async function whyNoConnection(settings: Settings, error: Error): Promise<string> {
  const address = settings.temporalAddress;
  const clientTls = usesTls(settings.temporalTls);
  const serverTls = await speaksTls(address);
  if (serverTls && !clientTls)
    return `Temporal at ${address} requires TLS and this client has no TLS settings: set TEMPORAL_TLS_CA (the CA of the server's certificate) and, for a cluster that asks for client certificates (mTLS), TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY (docs/production-cluster.md)`;
  if (!serverTls && clientTls)
    return `Temporal at ${address} does not speak TLS, but TEMPORAL_TLS_* or TEMPORAL_API_KEY is set: unset them for a plain server, or check TEMPORAL_ADDRESS`;
  return `cannot connect to Temporal at ${address}: ${error.message}${clientTls ? " (check that TEMPORAL_TLS_CERT is signed by a CA the server trusts and TEMPORAL_TLS_CA signed the server's certificate)" : ''}`;
}

export async function existingRun(deps: CliDeps, runId: string, client?: Client): Promise<RunHandle> {
  const handle = runHandle(client ?? (await connectTemporal(deps, false)), runId);
  if (!(await runExists(handle))) throw new ExitError(`run ${runId} not found in namespace ${deps.settings().temporalNamespace}`, EXIT_CODES.BAD_INPUT);
  return handle;
}
