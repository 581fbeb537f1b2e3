// The sleepers fixture's early end, for tests and perf scripts alike (no vitest here: perf scripts import it).

import { execFileSync } from 'node:child_process';

/**
 * Ends the running sleepers of a run now, rather than at their SLEEP_SECONDS: each looks for /tmp/br-release every
 * second. `host` narrows them to one host's containers; `docker` runs the CLI against another daemon. A container
 * that exits between the listing and the exec has nothing left to release.
 */
export function releaseSleepers(
  runId: string,
  { host, docker = (args: string[]) => execFileSync('docker', args, { encoding: 'utf8' }) }: ReleaseOptions = {},
): number {
  const filters = ['--filter', `label=benchrouter.run=${runId}`, ...(host ? ['--filter', `label=benchrouter.host=${host}`] : [])];
  const running = docker(['ps', '--quiet', ...filters])
    .split('\n')
    .filter(Boolean);
  for (const id of running) {
    try {
      docker(['exec', id, 'touch', '/tmp/br-release']);
    } catch {
      // exited meanwhile
    }
  }
  return running.length;
}

interface ReleaseOptions {
  host?: string;
  docker?: (args: string[]) => string;
}
