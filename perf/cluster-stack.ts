// The compose stack with worker hosts of their own Docker engines (`scripts/cluster.sh up --hosts N`), for perf
// scripts that measure a run on real hosts rather than on one worker beside the embedded dev server: the
// submitter gets a client certificate and the environment a user's `br` would export.
//
// Hosts find a benchmark by its path in their image's copy of this checkout (docs/production-cluster.md), so
// a perf script's generated benchmark must live inside the checkout, untracked and not ignored, before `up`
// builds the host image: `checkoutScratchDir` gives such a place, removed by `stop`.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { throwawayCluster } from '../test/support/cluster-env.js';
import { repoRoot } from './perf-support.js';

export interface ClusterStack {
  /** What the submitter's `br` and client use: the frontend with mTLS, the hosts' queue. */
  env: Record<string, string>;
  /** The submitter's home. */
  home: string;
  /** How long `scripts/cluster.sh up --hosts N` took, image builds included. */
  upSeconds: number;
  /** CPU seconds each of the stack's services (temporal, postgresql, host-1, …) has used so far, from its cgroup. */
  cpuSeconds(): Record<string, number>;
  stop(): Promise<void>;
}

/**
 * A directory inside the checkout for a generated benchmark the hosts must see (see the header). Named by
 * `name` alone, so that a rerun generating the same files reuses the host image built for them.
 */
export function checkoutScratchDir(name: string): string {
  return path.join(repoRoot, 'perf', `.generated-${name}`);
}

/**
 * Brings the stack up with `hosts` worker hosts, each running at most `containersPerHost` containers.
 * `generated` directories (inside the checkout) are removed on stop, with the stack and its volumes.
 */
export async function startClusterStack(name: string, hosts: number, containersPerHost: number, generated: string[] = []): Promise<ClusterStack> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), `br-perf-${name}-cluster-`));
  const tlsDir = path.join(scratch, 'tls');
  const queue = `perf-${name}-${randomBytes(3).toString('hex')}`;
  const { clusterEnv, submitterEnv } = await throwawayCluster(`brperf${name.replace(/[^a-z0-9]/g, '')}`, tlsDir, queue, containersPerHost);
  const cluster = (args: string[]) =>
    execFileSync(path.join(repoRoot, 'scripts', 'cluster.sh'), args, { env: { ...process.env, ...clusterEnv }, stdio: ['ignore', 'ignore', 'inherit'] });
  const started = performance.now();
  cluster(['up', '--hosts', String(hosts)]);
  const upSeconds = (performance.now() - started) / 1000;
  execFileSync(path.join(repoRoot, 'cluster', 'make-certs.sh'), [tlsDir, 'client', 'submitter'], { stdio: 'ignore' });
  const home = path.join(scratch, 'submitter');
  mkdirSync(home, { recursive: true });
  return {
    env: submitterEnv(home),
    home,
    upSeconds,
    cpuSeconds: () => composeCpuSeconds(clusterEnv.COMPOSE_PROJECT_NAME!),
    async stop() {
      try {
        cluster(['down', '--volumes']);
      } finally {
        for (const dir of generated) rmSync(dir, { recursive: true, force: true });
        rmSync(scratch, { recursive: true, force: true });
      }
    },
  };
}

/**
 * CPU seconds of each running container of a compose project, by service: a host's figure is its whole
 * container (worker, inner Docker daemon and the task containers under it). cgroup v1 or v2.
 */
export function composeCpuSeconds(project: string): Record<string, number> {
  const listed = execFileSync(
    'docker',
    ['ps', '--no-trunc', '--filter', `label=com.docker.compose.project=${project}`, '--format', '{{.ID}} {{.Label "com.docker.compose.service"}}'],
    { encoding: 'utf8' },
  );
  const seconds: Record<string, number> = {};
  for (const line of listed.trim().split('\n').filter(Boolean)) {
    const [id, service] = line.split(' ') as [string, string];
    const v1 = `/sys/fs/cgroup/cpuacct/docker/${id}/cpuacct.usage`;
    const v2 = [`/sys/fs/cgroup/system.slice/docker-${id}.scope/cpu.stat`, `/sys/fs/cgroup/docker/${id}/cpu.stat`].find(existsSync);
    if (existsSync(v1)) seconds[service] = Number(readFileSync(v1, 'utf8')) / 1e9;
    else if (v2) seconds[service] = Number(/usage_usec (\d+)/.exec(readFileSync(v2, 'utf8'))?.[1] ?? NaN) / 1e6;
  }
  return seconds;
}
