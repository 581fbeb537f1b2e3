// The dashboard on the embedded default: `br up` and `br demo` start `br serve` on the fixed API port
// (with a local token made on first use), and run commands print a run's dashboard link when it answers.

import { ensureLocalToken } from '../api/api-tokens.js';
import type { StartedProcess } from '../embedded/background-process.js';
import { isReachable, startApiServer, waitForApiServer } from '../embedded/embedded-services.js';
import type { CliDeps } from './cli-deps.js';

/** `host:port` of a URL, with the scheme's default port spelled out. */
function hostPort(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || (parsed.protocol === 'https:' ? '443' : '80')}`;
}

/** The embedded API server, started in the background unless it runs, and the file holding the local token. */
export interface EmbeddedApi {
  tokenFile: string;
  /** Absent when a server was running already. */
  started?: StartedProcess;
}

/** Starts the API server in the background unless it runs; returns the file holding the local token. */
export function startEmbeddedApi(deps: CliDeps): EmbeddedApi {
  const settings = deps.settings();
  const token = ensureLocalToken(settings.home);
  const started = startApiServer(settings, deps.say);
  return { tokenFile: token.file, ...(started ? { started } : {}) };
}

/**
 * Says the run's dashboard link when the API server answers: at once, or once the one `api` started listens.
 * A server that dies while starting is said with its own last log lines; the run goes on without it.
 */
export async function sayDashboardLink(deps: CliDeps, runId: string, api?: EmbeddedApi): Promise<void> {
  const settings = deps.settings();
  if (api?.started) {
    try {
      await waitForApiServer(settings, api.started);
    } catch (error) {
      deps.say(`br: no dashboard for this run: ${(error as Error).message}`);
      return;
    }
  } else if (!(await isReachable(hostPort(settings.apiUrl)))) return;
  deps.say(`dashboard: ${settings.apiUrl}/ui/runs/${encodeURIComponent(runId)}`);
}
