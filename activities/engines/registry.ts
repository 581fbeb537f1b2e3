// The task engines a worker host can run its tasks on, by the name its `engine` setting gives
// (`br worker --engine`, BENCHROUTER_ENGINE; config/settings.ts). An engine is a folder beside this file
// and one line in ENGINES (docs/architecture.md, "Task engines", says which files).

import type { EngineKind, TaskEngine } from './engine.js';
import { dockerEngine } from './docker/docker-task-engine.js';
import type { DockerEngineDeps } from './docker/modes.js';
import { kubernetesEngine, type KubernetesEngineDeps } from './kubernetes/kubernetes-task-engine.js';

/** What a worker host hands the engine it opens. Every host has a Docker daemon today: it builds the task images. */
export type EngineHost = DockerEngineDeps & KubernetesEngineDeps;

export const ENGINES: Readonly<Record<string, EngineKind<EngineHost>>> = {
  docker: dockerEngine,
  kubernetes: kubernetesEngine,
};

/** Engines asked for and planned, but not built yet: a host set to one is told so instead of "unknown". */
const NOT_YET_BUILT: Readonly<Record<string, string>> = {};

/** The engine of that name; a name that is none of ENGINES' fails, saying which there are. */
export function engineNamed(name: string): EngineKind<EngineHost> {
  const kind = Object.hasOwn(ENGINES, name) ? ENGINES[name] : undefined;
  if (kind) return kind;
  const known = Object.keys(ENGINES).join(', ');
  if (Object.hasOwn(NOT_YET_BUILT, name))
    throw new Error(`the ${name} task engine is not built yet (${NOT_YET_BUILT[name]}): run this worker with --engine ${known} (BENCHROUTER_ENGINE)`);
  throw new Error(`unknown task engine "${name}": expected one of ${known} (--engine, BENCHROUTER_ENGINE)`);
}

/** Opens the engine named `name` for this worker host. */
export function openEngine(name: string, host: EngineHost): TaskEngine {
  return engineNamed(name).open(host);
}
