// The task engines a worker host can run its tasks on, by the name its `engine` setting gives
// (`br worker --engine`, BENCHROUTER_ENGINE; config/settings.ts). An engine is a folder beside this file
// and one line in ENGINES (docs/architecture.md, "Task engines", says which files).

import type { EngineKind, TaskEngine } from './engine.js';
import type { DockerEngineDeps } from './docker/modes.js';
import type { KubernetesEngineDeps } from './kubernetes/kubernetes-task-engine.js';

/** What a worker host hands the engine it opens. Every host has a Docker daemon today: it builds the task images. */
export type EngineHost = DockerEngineDeps & KubernetesEngineDeps;

/**
 * Each engine's module, loaded only by a host that opens it: a Docker host never loads the Kubernetes client
 * (about 0.8 s of start-up), and a Kubernetes host loads it once.
 */
export const ENGINES: Readonly<Record<string, () => Promise<EngineKind<EngineHost>>>> = {
  docker: async () => (await import('./docker/docker-task-engine.js')).dockerEngine,
  kubernetes: async () => (await import('./kubernetes/kubernetes-task-engine.js')).kubernetesEngine,
};

/** Engines asked for and planned, but not built yet: a host set to one is told so instead of "unknown". */
const NOT_YET_BUILT: Readonly<Record<string, string>> = {};

/** Fails for a name that is none of ENGINES', saying which there are; loads nothing. */
export function checkEngineName(name: string): void {
  if (Object.hasOwn(ENGINES, name)) return;
  const known = Object.keys(ENGINES).join(', ');
  if (Object.hasOwn(NOT_YET_BUILT, name))
    throw new Error(`the ${name} task engine is not built yet (${NOT_YET_BUILT[name]}): run this worker with --engine ${known} (BENCHROUTER_ENGINE)`);
  throw new Error(`unknown task engine "${name}": expected one of ${known} (--engine, BENCHROUTER_ENGINE)`);
}

/** The engine of that name, its module loaded. */
export async function engineNamed(name: string): Promise<EngineKind<EngineHost>> {
  checkEngineName(name);
  return ENGINES[name]!();
}

/** Opens the engine named `name` for this worker host. */
export async function openEngine(name: string, host: EngineHost): Promise<TaskEngine> {
  return (await engineNamed(name)).open(host);
}
