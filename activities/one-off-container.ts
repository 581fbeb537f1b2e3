// The create body of a one-off container a command runs outside any job: listing a task's instances at submit
// (list-task-instances.ts), writing a run's Inspect logs or ATIF trajectories (`br export`). No network, every capability dropped, no
// new privileges, memory (swap included), CPU and process limits; managed and labelled with its host, so a worker
// that starts after the process that made it died removes it.

import { LABELS } from './container-spec.js';
import type { ContainerCreateBody } from './docker-engine.js';

export interface OneOffContainer {
  image: string;
  entrypoint: string[];
  env: Record<string, string>;
  hostId: string;
  /** More labels (its benchmark and task). */
  labels?: Record<string, string>;
  workingDir: string;
  binds: string[];
  memoryBytes: number;
  cpus: number;
  pids: number;
}

export function oneOffContainerBody(spec: OneOffContainer): ContainerCreateBody {
  return {
    Image: spec.image,
    Entrypoint: spec.entrypoint,
    Cmd: [],
    Env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
    Labels: { [LABELS.managed]: 'true', [LABELS.host]: spec.hostId, ...spec.labels },
    WorkingDir: spec.workingDir,
    HostConfig: {
      NetworkMode: 'none',
      Binds: spec.binds,
      Memory: spec.memoryBytes,
      MemorySwap: spec.memoryBytes,
      NanoCpus: spec.cpus * 1e9,
      PidsLimit: spec.pids,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
    },
  };
}
