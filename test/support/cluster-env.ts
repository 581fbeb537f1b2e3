// A throwaway compose stack's settings (what scripts/cluster.sh reads) and the environment of a `br` that
// submits to it, for the tests and perf scripts that bring one up with worker hosts of their own engines.

import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { freePort } from '../../embedded/embedded-services.js';

export interface ThrowawayCluster {
  /** For scripts/cluster.sh: a compose project of its own, its certificates, loopback ports, the hosts' queue. */
  clusterEnv: Record<string, string>;
  /** For the submitter's `br` and client: the frontend with mTLS (once `make-certs.sh <tlsDir> client submitter` ran). */
  submitterEnv(home: string): Record<string, string>;
}

export async function throwawayCluster(prefix: string, tlsDir: string, queue: string, containersPerHost: number): Promise<ThrowawayCluster> {
  const port = await freePort();
  return {
    clusterEnv: {
      COMPOSE_PROJECT_NAME: `${prefix}${randomBytes(3).toString('hex')}`,
      BENCHROUTER_CLUSTER_TLS_DIR: tlsDir,
      BENCHROUTER_CLUSTER_BIND: '127.0.0.1',
      BENCHROUTER_CLUSTER_PORT: String(port),
      BENCHROUTER_CLUSTER_UI_PORT: String(await freePort()),
      BENCHROUTER_CLUSTER_API_PORT: String(await freePort()),
      BENCHROUTER_TASK_QUEUE: queue,
      BENCHROUTER_HOST_CONTAINERS: String(containersPerHost),
    },
    submitterEnv: (home) => ({
      BENCHROUTER_HOME: home,
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      BENCHROUTER_TASK_QUEUE: queue,
      TEMPORAL_TLS_CA: path.join(tlsDir, 'ca.pem'),
      TEMPORAL_TLS_CERT: path.join(tlsDir, 'submitter.pem'),
      TEMPORAL_TLS_KEY: path.join(tlsDir, 'submitter-key.pem'),
    }),
  };
}
