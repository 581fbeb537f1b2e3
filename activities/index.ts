// The activities a worker hosts, made by factories so tests can hand in their own Docker engine,
// directories and host id; the host's task engine is opened here, by the name its settings give.
// Workflows import only the types of these.

import { Context } from '@temporalio/activity';
import type { Settings } from '../config/settings.js';
import type { TaskDefinition } from '../contract/benchmark.js';
import type { ClaimedHost } from '../runs/host-queues.js';
import type { DockerEngine } from './docker-engine.js';
import type { ContainerDeps } from './run-task-container.js';
import { openEngine, type EngineHost } from './engines/registry.js';
import { runJobOnHost, type JobOnHostInput } from './run-job-on-host.js';
import { listTaskInstances, type ListInstancesInput } from './list-task-instances.js';
import { repeatCountsByTask, type PassAtKInput } from './pass-at-k.js';
import { servedCheckpoint, type ServedCheckpointInput } from './served-checkpoint.js';
import { checkEndpoint, type EndpointCheck, type EndpointVerdict } from './endpoint-preflight.js';
import { listJobArtifacts, readJobArtifact, type ArtifactPageRequest, type JobArtifactRef } from './read-job-artifact.js';

/** What a host worker has: its Docker daemon (images are built there), its folders, and what its task engine is opened with. */
export interface HostActivityDeps extends EngineHost {
  docker: DockerEngine;
  /** The task engine this host runs tasks on (engines/registry.ts): its `engine` setting. */
  engineName: string;
  hostId: string;
  artifactsRoot: string;
  locksDir: string;
  buildLogsDir: string;
  imageCacheDir: string;
  instancesCacheDir: string;
  datasetDir?: string;
  gateway?: ContainerDeps['gateway'];
  firewall?: ContainerDeps['firewall'];
  containerSlots?: ContainerDeps['containerSlots'];
  jobAttempts?: ContainerDeps['jobAttempts'];
}

/** A host's folders and limits as its settings give them: what every host worker hands createHostActivities. */
export function hostFoldersFrom(settings: Settings): Omit<HostActivityDeps, 'docker' | 'hostId' | 'gateway' | 'firewall'> {
  return {
    engineName: settings.engine,
    artifactsRoot: settings.artifactsRoot,
    locksDir: settings.locksDir,
    buildLogsDir: settings.buildLogsDir,
    imageCacheDir: settings.imageCacheDir,
    instancesCacheDir: settings.instancesCacheDir,
    dindStorageRoot: settings.dindStorageRoot,
    dindStoreDir: settings.dindStoreDir,
    dindStoreMaxBytes: settings.dindStoreMaxBytes,
    ...(settings.datasetDir ? { datasetDir: settings.datasetDir } : {}),
    kubernetes: settings.kubernetes,
  };
}

/** Activities that run on one host's own task queue: image, container and files stay together. */
export async function createHostActivities(deps: HostActivityDeps) {
  const jobDeps = { ...deps, engine: await openEngine(deps.engineName, deps) };
  return {
    // A job's image, container and harvest as one activity (docs/architecture.md).
    runJobOnHost: (input: JobOnHostInput) => runJobOnHost(jobDeps, input),
    // pass@k's counts are read where the records are: the job's own host.
    repeatCounts: async (input: PassAtKInput) => repeatCountsByTask(deps.artifactsRoot, input),
    // Artifacts leave the host through Temporal: the submitting machine shares no disk with it.
    listJobArtifacts: async (ref: JobArtifactRef) => listJobArtifacts(deps.artifactsRoot, ref),
    readJobArtifact: async (request: ArtifactPageRequest) => readJobArtifact(deps.artifactsRoot, request),
    // A task's instances, listed by its command in its image: any host can, so it runs on the shared queue.
    listTaskInstances: (input: ListInstancesInput) => listTaskInstances(deps, input),
  };
}

/** One page of a run's pinned task definitions (runs/task-definition-pages.ts), checked against its digest. */
export interface DefinitionsPageRef {
  runId: string;
  page: number;
  digest: string;
}

/** Reads a page of definitions from its holder workflow: the worker hands in its Temporal client's reader (client/task-definitions.ts). */
export type DefinitionsPageLoader = (ref: DefinitionsPageRef) => Promise<TaskDefinition[]>;

/** The host of a job workflow's latest host activity, from its history: the worker hands in its Temporal client's reader (client/job-host.ts). */
export type JobHostReader = (workflowId: string) => Promise<string | undefined>;

/** Activities on the shared queue: any live worker answers, and so the job lands on its host. */
export function createSharedActivities(host: ClaimedHost, loadDefinitionsPage?: DefinitionsPageLoader, lastHostOfJob?: JobHostReader) {
  return {
    // A local activity: the worker running the job's workflow task names its own host.
    claimHost: async (): Promise<ClaimedHost> => host,
    // A local activity: the host that took the job's first attempt, when the attempt timed out before a
    // heartbeat named it (the server's timeout failure names no worker). Its container may run there.
    hostOfFirstAttempt: async (): Promise<string | undefined> => {
      const workflowId = Context.current().info.workflowExecution?.workflowId;
      return workflowId && lastHostOfJob ? lastHostOfJob(workflowId) : undefined;
    },
    // Definitions cross hosts through Temporal, as artifacts do: no host holds them on disk.
    loadTaskDefinitions: async (ref: DefinitionsPageRef): Promise<TaskDefinition[]> => {
      if (!loadDefinitionsPage)
        throw new Error(`this worker cannot read task definitions (page ${ref.page} of run ${ref.runId}): it was started without a Temporal client`);
      return loadDefinitionsPage(ref);
    },
    // A schedule's checkpoint is read by whichever worker answers: every host reaches the endpoint.
    servedCheckpoint: (input: ServedCheckpointInput) => servedCheckpoint(input, host.hostId),
    // A run's endpoints checked before it starts, from a host its calls will come from, with the key's variable there.
    checkEndpoints: (checks: EndpointCheck[]): Promise<EndpointVerdict[]> => Promise.all(checks.map((check) => checkEndpoint(check, host.hostId))),
  };
}

export type HostActivities = Awaited<ReturnType<typeof createHostActivities>>;
export type SharedActivities = ReturnType<typeof createSharedActivities>;
