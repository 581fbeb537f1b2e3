// The dashboard on the embedded default: `br up` and `br demo` start `br serve` on the fixed API port
// (with a local token made on first use), and run commands print a run's dashboard link when it answers.

import { ensureLocalToken } from '../api/api-tokens.js';
import { isReachable, startApiServer, waitUntilReachable } from '../client/embedded-services.js';
import type { CliDeps } from './cli-deps.js';

/** `host:port` of a URL, with the scheme's default port spelled out. */
function hostPort(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || (parsed.protocol === 'https:' ? '443' : '80')}`;
}

/** Starts the API server in the background unless it runs; returns the file holding the local token. */
export function startEmbeddedApi(deps: CliDeps): string {
  const settings = deps.settings();
  const token = ensureLocalToken(settings.home);
  startApiServer(settings, deps.say);
  return token.file;
}

/** Says the run's dashboard link when the API server answers (waiting up to `waitMs` for one just started). */
export async function sayDashboardLink(deps: CliDeps, runId: string, waitMs = 0): Promise<void> {
  const { apiUrl } = deps.settings();
  const up = waitMs > 0 ? await waitUntilReachable(hostPort(apiUrl), waitMs) : await isReachable(hostPort(apiUrl));
  if (up) deps.say(`dashboard: ${apiUrl}/ui/runs/${encodeURIComponent(runId)}`);
}
