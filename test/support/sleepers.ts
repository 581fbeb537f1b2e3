// The sleepers fixture (test/fixtures/benchmarks/sleepers: tasks that sleep SLEEP_SECONDS) for tests and perf
// scripts alike, no vitest here (perf scripts import it): a copy with the sleep a case needs, the early end of
// its sleeps, and whether a restart's jobs are followed again.

import type { Client } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time.js';
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Benchmark } from '../../contract/benchmark.js';
import { loadBenchmark } from '../../contract/load-benchmark.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/benchmarks/sleepers', import.meta.url));
const PENDING_ACTIVITY_STATE_STARTED = 2;

/** The sleepers fixture with every task sleeping `seconds` (and timing out after `timeoutSeconds`), in a scratch copy under `into`. */
export function sleepersOf(into: string, seconds: number, timeoutSeconds?: number): Benchmark {
  const dir = path.join(into, 'sleepers');
  cpSync(FIXTURE, dir, { recursive: true });
  for (const task of readdirSync(path.join(dir, 'tasks'))) {
    const file = path.join(dir, 'tasks', task, 'task.yaml');
    let yaml = readFileSync(file, 'utf8').replace(/SLEEP_SECONDS: \d+/, `SLEEP_SECONDS: ${seconds}`);
    if (timeoutSeconds !== undefined) yaml = yaml.replace(/^timeout: \d+$/m, `timeout: ${timeoutSeconds}`);
    writeFileSync(file, yaml);
  }
  return loadBenchmark(dir);
}

/**
 * Whether each job has its host activity (runJobOnHost) running an attempt that started at or after `sinceMs`:
 * after a restart, each job's container is followed again, by a reattaching attempt (or a new one).
 */
export async function attemptsStartedSince(client: Client, jobIds: string[], sinceMs: number): Promise<boolean> {
  const followed = async (jobId: string) => {
    const { raw } = await client.workflow.getHandle(jobId).describe();
    return (raw.pendingActivities ?? []).some(
      (a) =>
        a.activityType?.name === 'runJobOnHost' && Number(a.state) === PENDING_ACTIVITY_STATE_STARTED && (optionalTsToMs(a.lastStartedTime) ?? 0) >= sinceMs,
    );
  };
  return (await Promise.all(jobIds.map(followed))).every(Boolean);
}

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
