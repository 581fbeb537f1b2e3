// Simple mode: the task's container alone, on the task network (in a namespace lent by the worker's
// pool, netns-pool.ts, or in one of its own) or, with `network: host`, on the host's network.

import { ensureTaskNetwork } from '../../task-network.js';
import type { DockerMode, DockerModeKind, ModeScope } from './modes.js';

export const simpleMode: DockerModeKind = { name: 'simple', runs: () => true, open: openSimpleMode };

function openSimpleMode({ deps: { docker, netns: pool }, job, name, ctx }: ModeScope): DockerMode {
  const onTaskNetwork = job.task.network !== 'host';
  const netns = onTaskNetwork ? pool : undefined;
  return {
    async start(body) {
      // A namespace of its own is on the bridge, where host.docker.internal is the host's address.
      const hostAddress = onTaskNetwork && !netns ? (await ensureTaskNetwork(docker)).gateway : undefined;
      /** In a namespace lent now: a start that fails in it leaves no container, and the namespace is dropped. */
      const create = async () => {
        try {
          return await docker.createAndStart(name, body({ hostAddress, netns: await netns?.lease(name) }));
        } catch (error) {
          if (netns) {
            await docker.remove(name);
            await netns.discard(name);
          }
          throw error;
        }
      };
      return create().catch((error: unknown) => {
        if (!netns) throw error;
        // The lent namespace may be the fault (its holder stopped with a daemon restart): once more in a
        // fresh one, in this attempt, so that a task restarted after an outage keeps its "restarted once" label.
        ctx.log.warn(`job ${job.jobId}: container ${name} did not start in its lent network namespace (${(error as Error).message}); trying a fresh one`);
        return create();
      });
    },

    heldBytes: async () => 0,

    async remove(nameOrId) {
      await docker.remove(nameOrId);
      netns?.release(name);
    },
  };
}
