// What a waiting command (`br run` of a run or suite, `br results --wait`, `br cancel`) says while it waits: Temporal's
// view of the run, checked every few seconds on a connection of its own, each new finding on a line of
// its own on stderr; and Ctrl-C, which ends the wait and leaves the run as it is.

import { connectClient } from '../client/runs.js';
import { checkRunHealth, watchHealth, type HealthFinding } from '../client/run-health.js';
import type { RunProgress } from '../runs/run-spec.js';
import type { CliDeps } from './cli-deps.js';

/** Exit status after Ctrl-C, as shells report a process ended by SIGINT. */
export const INTERRUPTED_EXIT_CODE = 130;

export function healthLine(finding: HealthFinding): string {
  return `health: ${finding.message}; more: ${finding.hint}`;
}

/** What Ctrl-C prints: the wait ends, the run does not. */
export function interruptLine(runId: string, cancelling: boolean, suite = false): string {
  if (suite) return `stopped waiting; suite ${runId} and its runs keep running (not cancelled): the Web UI link above follows them`;
  return cancelling
    ? `stopped waiting; the cancellation of ${runId} stays requested and its containers are stopped without you (\`br status ${runId}\`)`
    : `stopped waiting; run ${runId} keeps running (not cancelled): \`br status ${runId}\`, \`br results ${runId} --wait\`, or \`br cancel ${runId}\``;
}

export interface RunWait {
  /** Where the latest progress goes, so that the check looks at the jobs that are running. */
  progress(p: RunProgress): void;
  stop(): void;
}

/**
 * Starts checking the run's health and handling Ctrl-C until stop(). `newLine` is called before a
 * finding is printed, so that a progress bar redrawn in place on a TTY is not overwritten.
 */
export function watchRunWhileWaiting(
  deps: CliDeps,
  runId: string,
  options: { cancelling?: boolean; suite?: boolean; newLine?: () => void; intervalMs?: number } = {},
): RunWait {
  let latest: RunProgress | undefined;
  const settings = deps.settings();
  const client = connectClient(settings);
  client.catch(() => undefined); // unreachable Temporal: the waiting command's own calls say so
  const watch = watchHealth(
    async () => checkRunHealth(await client, settings, runId, latest),
    (finding) => {
      options.newLine?.();
      deps.say(healthLine(finding));
    },
    options.intervalMs ?? Number(deps.env.BENCHROUTER_HEALTH_INTERVAL_MS || 5_000),
  );
  const onInterrupt = () => {
    options.newLine?.();
    deps.say(interruptLine(runId, options.cancelling ?? false, options.suite));
    process.exit(INTERRUPTED_EXIT_CODE);
  };
  process.once('SIGINT', onInterrupt);
  return {
    progress: (p) => (latest = p),
    stop() {
      watch.stop();
      process.removeListener('SIGINT', onInterrupt);
      void client.then((c) => c.connection.close()).catch(() => undefined);
    },
  };
}
