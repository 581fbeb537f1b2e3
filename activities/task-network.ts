// The Docker network task containers run on unless their task.yaml says `network: host`: a bridge
// of BenchRouter's own, so a task reaches the outside and (through the host firewall, see
// task-firewall.ts) the worker's model gateway, and nothing else on the worker host.

import type { DockerEngine } from './docker-engine.js';

export const TASK_NETWORK = 'benchrouter-tasks';
/** The bridge's interface name, fixed so that the host firewall's rules can name it (at most 15 chars). */
export const TASK_BRIDGE_INTERFACE = 'br-benchrouter';

/**
 * Creates the network when missing; idempotent and safe to race (several workers may share a daemon).
 * Containers on it cannot reach each other either (no inter-container traffic): one job's services
 * are not another job's business. Gives the host's address on the bridge (its gateway).
 */
export async function ensureTaskNetwork(docker: DockerEngine): Promise<{ gateway?: string }> {
  const options = { 'com.docker.network.bridge.name': TASK_BRIDGE_INTERFACE, 'com.docker.network.bridge.enable_icc': 'false' };
  const network = await docker.ensureNetwork(TASK_NETWORK, { Driver: 'bridge', Options: options, Labels: { 'benchrouter.managed': 'true' } });
  if (network.options['com.docker.network.bridge.name'] !== TASK_BRIDGE_INTERFACE) {
    throw new Error(
      `docker network ${TASK_NETWORK}: expected a bridge on interface ${TASK_BRIDGE_INTERFACE} (the one the host firewall guards), got ${network.options['com.docker.network.bridge.name'] ?? 'a generated name'}; remove that network and BenchRouter recreates it`,
    );
  }
  return network.gateway ? { gateway: network.gateway } : {};
}
