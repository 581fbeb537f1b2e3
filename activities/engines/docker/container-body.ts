// A task's spec (engines/engine.ts) as a Docker Engine API create body, placed by its mode: Simple mode
// is the base; DinD mode adds what the task's own daemon needs. Pure, so it is tested directly.

import {
  CONTAINER_PRELOAD_DIR,
  DIND_ENTRYPOINT,
  HOST_ALIAS,
  LABELS,
  TASK_LOG_CONFIG,
  taskSpec,
  type ModelAccess,
  type PreloadPath,
  type TaskSpecInput,
} from '../../container-spec.js';
import type { ContainerCreateBody } from '../../docker-engine.js';
import type { NetnsLease } from '../../netns-pool.js';
import { TASK_NETWORK } from '../../task-network.js';
import type { TaskSpec } from '../engine.js';

export interface DindPlacement {
  /** HostConfig fields of the detected runtime (sysbox, privileged or capabilities). */
  runtimeHostConfig: Record<string, unknown>;
  runtimeName: string;
  /** Host directory bound at /var/lib/docker: the task daemon's own storage. */
  storageDir: string;
  /** Host paths of image archives to preload, mounted read-only under /app/preload. */
  archives: string[];
  /** How its images were preloaded, labelled for an attempt that reattaches (absent: none to preload). */
  preload?: PreloadPath;
}

/** Where a mode places the container. */
export interface Placement {
  /** Present for `docker: true` tasks. */
  dind?: DindPlacement;
  /**
   * The host's address on the task network (its gateway), which host.docker.internal names. Docker's
   * `host-gateway` is docker0's address instead, which a DinD task's own daemon takes for its own
   * bridge (it sees no route to that subnet from the task network), hiding the host behind it.
   */
  hostAddress?: string;
  /** A Simple-mode task's network namespace, lent by the worker's pool (netns-pool.ts); without one, a namespace of its own. */
  netns?: NetnsLease;
}

export function containerBody(spec: TaskSpec, placement: Placement): ContainerCreateBody {
  const { dind } = placement;
  const onHostNetwork = !dind && spec.network === 'host';
  const mounts = spec.mounts.map((mount) => ({ Type: 'bind', Source: mount.source, Target: mount.target, ReadOnly: mount.readOnly }));
  const bind = (Source: string, Target: string, ReadOnly = false) => ({ Type: 'bind', Source, Target, ReadOnly });
  const memory = spec.resources.memoryBytes;
  // MemorySwap equal to Memory: the limit is the task's memory, not memory plus as much swap again.
  const limits = { Memory: memory, MemorySwap: memory, NanoCpus: Math.round(spec.resources.cpus * 1e9), PidsLimit: spec.resources.pids };
  // The task network keeps tasks off the host's own ports (see task-firewall.ts); host.docker.internal
  // is how they still reach the worker's model gateway. `network: host` gives all of that up.
  // A lent namespace (Simple mode only) is on the task network already, host.docker.internal included.
  const lent = !dind && !onHostNetwork ? placement.netns : undefined;
  const network = onHostNetwork
    ? { NetworkMode: 'host' }
    : lent
      ? { NetworkMode: lent.networkMode }
      : { NetworkMode: TASK_NETWORK, ExtraHosts: [`${HOST_ALIAS}:${placement.hostAddress ?? 'host-gateway'}`] };

  const hostConfig: Record<string, unknown> = dind
    ? {
        ...dind.runtimeHostConfig,
        ...limits,
        ...network,
        LogConfig: TASK_LOG_CONFIG,
        Mounts: [
          ...mounts,
          bind(dind.storageDir, '/var/lib/docker'),
          ...dind.archives.map((archive) => bind(archive, `${CONTAINER_PRELOAD_DIR}/${archive.split('/').pop()}`, true)),
        ],
      }
    : {
        ...limits,
        ...network,
        LogConfig: TASK_LOG_CONFIG,
        SecurityOpt: ['no-new-privileges'],
        Mounts: [...mounts, ...(lent?.mounts ?? [])],
      };

  return {
    Image: spec.image,
    Entrypoint: dind ? [DIND_ENTRYPOINT] : ['/bin/sh'],
    Cmd: dind ? ['sh', '-c', spec.command] : ['-c', spec.command],
    Env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
    Labels: {
      ...spec.labels,
      [LABELS.runtime]: dind ? `dind:${dind.runtimeName}` : 'simple',
      ...(dind?.preload ? { [LABELS.preload]: dind.preload } : {}),
    },
    WorkingDir: spec.workingDir,
    HostConfig: hostConfig,
  };
}

export type ContainerSpecInput = TaskSpecInput & Placement;

/** A job's task container in one step, spec and placement: what the engine creates for it. */
export function taskContainerBody(input: ContainerSpecInput, apiKey: string, access: ModelAccess = {}): ContainerCreateBody {
  return containerBody(taskSpec(input, apiKey, access), input);
}
