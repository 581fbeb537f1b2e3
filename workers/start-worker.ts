// One worker process per evaluation machine: it polls the shared queue (workflows, host claims)
// and its own host queue (images, containers, results).

import type { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHostActivities, createSharedActivities, hostFoldersFrom } from '../activities/index.js';
import { DockerEngine } from '../activities/docker-engine.js';
import { checkEngineName, engineNamed } from '../activities/engines/registry.js';
import { hostQueueName } from '../runs/host-queues.js';
import { ContainerSlots } from '../activities/container-slots.js';
import { workerIdentity } from '../runs/worker-identity.js';
import type { Settings } from '../config/settings.js';
import { temporalConnectionOptions, WORKER_GRPC_COMPRESSION } from '../config/temporal-connection.js';
import { payloadCodecsFromEnv } from '../client/payload-codec.js';
import { connectClient } from '../client/runs.js';
import { lastHostOfJob } from '../client/job-host.js';
import { loadDefinitionsPage } from '../client/task-definitions.js';
import { sweepOrphans, whereIsJob } from './sweep-orphans.js';
import { JobAttempts } from '../activities/job-attempts.js';
import { connectPatiently } from './connect-patiently.js';
import { workflowBundleFor } from './workflow-bundle-cache.js';
import { gatewaySecret, ModelGateway } from '../gateway/model-gateway.js';
import { installTaskFirewall, type TaskFirewall } from '../activities/task-firewall.js';
import { OomEventHub } from '../activities/oom-events.js';
import { dindStoreSettled } from '../activities/dind-image-store.js';
import { ensureTaskNetwork, TASK_BRIDGE_INTERFACE, TASK_NETWORK } from '../activities/task-network.js';
import { NetnsPool } from '../activities/netns-pool.js';
import { BASE_IMAGE } from './host-ca-trust.js';
import { missingDependencyPatches, sandboxTimeoutOption } from './dependency-patches.js';

export interface StartWorkerOptions {
  settings: Settings;
  hostId: string;
  docker?: DockerEngine;
  /** A prebuilt workflow bundle; without one, the bundle cached for this version of the code (built if missing). */
  workflowBundlePath?: string;
  maxConcurrentContainers?: number;
  /** Where to report what the worker does on its own (orphan sweeps). */
  say?: (line: string) => void;
}

export interface RunningWorker {
  hostId: string;
  /** How both workers name themselves to Temporal (pollers, workflow task events). */
  identity: string;
  hostQueue: string;
  gatewayPort: number;
  /** Resolves when both workers have stopped. */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * Cancellation reaches an activity only with a heartbeat; the default throttle (80% of the heartbeat
 * timeout) would let a cancelled container run on for ~25 s.
 */
const HEARTBEAT_THROTTLE = { maxHeartbeatThrottleInterval: '1s', defaultHeartbeatThrottleInterval: '1s' } as const;

/** Activities the host's own queue runs at once, for a host of `maxContainers` containers. */
export function pinnedActivitySlots(maxContainers: number): number {
  return Math.max(64, 4 * maxContainers);
}

export const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export async function startWorker(options: StartWorkerOptions): Promise<RunningWorker> {
  const { settings, hostId } = options;
  // An engine this worker cannot run fails it before it connects to anything.
  checkEngineName(settings.engine);
  const docker = options.docker ?? new DockerEngine();
  const say = options.say ?? (() => undefined);
  // A patch that did not apply costs CPU, not correctness: said once here, and the worker runs without it.
  const missingPatches = missingDependencyPatches();
  for (const missing of missingPatches) say(`warning: ${missing.message}`);
  const connection = await connectPatiently(
    () => NativeConnection.connect({ ...temporalConnectionOptions(settings.temporalAddress, settings.temporalTls), grpcCompression: WORKER_GRPC_COMPRESSION }),
    settings.temporalAddress,
    say,
  );
  const hostQueue = hostQueueName(settings.sharedQueue, hostId);
  const dataConverter = { payloadCodecs: payloadCodecsFromEnv() };
  const identity = workerIdentity(hostId, process.pid);

  const gateway = new ModelGateway(gatewaySecret(settings.home));
  const gatewayPort = await gateway.listen(settings.gatewayPort, settings.gatewayHost).catch(async (error: Error) => {
    await connection.close().catch(() => undefined);
    throw new Error(
      `the model gateway cannot listen on ${settings.gatewayHost}:${settings.gatewayPort} (${error.message}); set BENCHROUTER_GATEWAY_PORT to a free port, or BENCHROUTER_GATEWAY_HOST to an address of this machine`,
      { cause: error },
    );
  });
  // What is opened from here on is closed again when a later step fails: a gateway left listening
  // would keep a `br worker` that failed to start alive, silent, on its port.
  let firewall: TaskFirewall | undefined;
  let client: Client | undefined;
  let netns: NetnsPool | undefined;
  const oomEvents = new OomEventHub(docker, say);
  const closeResources = async () => {
    oomEvents.close();
    await netns?.close().catch(() => undefined);
    await gateway.close().catch(() => undefined);
    await firewall?.close().catch(() => undefined);
    await client?.connection.close().catch(() => undefined);
    await connection.close().catch(() => undefined);
    // The DinD image store's background work (a clone made ahead, a task's storage removed) ends before the worker does.
    await dindStoreSettled();
  };
  let shared: Worker;
  let host: Worker;
  try {
    options.say?.(`model gateway on ${settings.gatewayHost}:${gatewayPort}`);
    if (/^(127\.|localhost$|::1$)/.test(settings.gatewayHost)) {
      options.say?.(
        `warning: the model gateway listens on ${settings.gatewayHost} only; tasks on the ${TASK_NETWORK} network cannot reach it (set BENCHROUTER_GATEWAY_HOST=0.0.0.0)`,
      );
    }

    // Tasks run on a network of their own; the firewall keeps them off this host's other ports.
    await ensureTaskNetwork(docker);
    firewall = await installTaskFirewall(TASK_BRIDGE_INTERFACE, gatewayPort);
    options.say?.(
      firewall.active
        ? `task network ${TASK_NETWORK}: host ports closed to tasks except the gateway's (${gatewayPort})`
        : `warning: task network ${TASK_NETWORK}: ${firewall.problem}; tasks can reach every port this host listens on outside loopback`,
    );

    // Kept open while the worker runs: loadTaskDefinitions reads runs' definitions through it.
    const workflowClient = (client = await connectPatiently(() => connectClient(settings), settings.temporalAddress, say));
    const engineKind = await engineNamed(settings.engine);
    await sweepOrphans({
      docker,
      client: workflowClient,
      hostId,
      sharedQueue: settings.sharedQueue,
      dindStorageRoot: settings.dindStorageRoot,
      dindStoreDir: settings.dindStoreDir,
      ...(engineKind.tasksOfHost ? { engineTasks: () => engineKind.tasksOfHost!({ docker, ...hostFoldersFrom(settings) }, hostId) } : {}),
      say,
    });
    netns = await startNetnsPool(docker, hostId, settings, say);
    // Never bundled in this process: webpack would stay in the worker's memory for good.
    const workflowBundle = { codePath: options.workflowBundlePath ?? (await workflowBundleFor(path.join(settings.home, 'workflow-bundles'), workflowsPath)) };

    const maxContainers = options.maxConcurrentContainers ?? 32;
    const hostActivities = await createHostActivities({
      docker,
      hostId,
      ...hostFoldersFrom(settings),
      gateway: { instance: gateway, url: `http://127.0.0.1:${gatewayPort}/v1` },
      firewall,
      netns,
      containerSlots: new ContainerSlots(maxContainers),
      oomEvents,
      // A container left by an attempt the server gave up on is removed once its job has moved on.
      jobAttempts: new JobAttempts({ whereIs: (jobId) => whereIsJob(workflowClient, jobId, hostId, settings.sharedQueue), say }),
    });
    shared = await Worker.create({
      connection,
      namespace: settings.temporalNamespace,
      taskQueue: settings.sharedQueue,
      identity,
      dataConverter,
      workflowBundle,
      // No vm watchdog around each call into the workflow sandbox (a thread started and joined per call,
      // ~28 ms of CPU per job): it only catches a workflow stuck in a synchronous loop, and the workflows
      // are BenchRouter's own, replay-tested code. `isolateExecutionTimeout` is not in the SDK's public
      // options type (so spread in); patches/@temporalio+worker+*.patch makes its 0 mean none.
      ...sandboxTimeoutOption(missingPatches),
      activities: {
        ...createSharedActivities(
          { hostId, taskQueue: hostQueue },
          (ref) => loadDefinitionsPage(workflowClient.workflow, ref.runId, ref.page, ref.digest),
          (workflowId) => lastHostOfJob(workflowClient.workflow.getHandle(workflowId), settings.sharedQueue),
        ),
        // A job's first attempt: handed by the server to the worker that completed the job's first
        // workflow task (eager dispatch), or to any worker with a slot free. Its host is the job's.
        runJobOnHost: hostActivities.runJobOnHost,
        // Listing a task's instances at submit: any host with Docker can.
        listTaskInstances: hostActivities.listTaskInstances,
      },
      // Jobs' first attempts on this queue and later ones on the host's take their containers from one
      // count (ContainerSlots): each worker may run as many, not both together.
      maxConcurrentActivityTaskExecutions: maxContainers,
      ...HEARTBEAT_THROTTLE,
    });
    host = await Worker.create({
      connection,
      namespace: settings.temporalNamespace,
      taskQueue: hostQueue,
      identity,
      dataConverter,
      activities: hostActivities,
      // Not the container bound (ContainerSlots is): this queue holds only jobs pinned to this host, and an
      // attempt that comes back to reattach to its running container must be taken at once, not wait behind
      // busy slots until its schedule-to-start timeout moves the job (and starts its container a second
      // time) elsewhere. An attempt that needs a new container waits for a slot here, heartbeating.
      maxConcurrentActivityTaskExecutions: pinnedActivitySlots(maxContainers),
      ...HEARTBEAT_THROTTLE,
    });
  } catch (error) {
    await closeResources();
    throw error;
  }
  // A worker that fails stops the other: a host queue polled without the shared one (or the reverse)
  // takes work it cannot finish. Resources close once both have stopped, however they stopped.
  const workers = [shared, host];
  const stopAll = () => {
    for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  const runs = workers.map((worker) =>
    worker.run().catch((error: unknown) => {
      stopAll();
      throw error;
    }),
  );
  const done = Promise.allSettled(runs).then(async (outcomes) => {
    await closeResources();
    const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  });
  return {
    hostId,
    identity,
    hostQueue,
    gatewayPort,
    done,
    async shutdown() {
      stopAll();
      await done;
    },
  };
}

/** The pool of network namespaces Simple-mode tasks borrow, with this host's holders adopted; none when turned off or without the base image. */
async function startNetnsPool(docker: DockerEngine, hostId: string, settings: Settings, say: (line: string) => void): Promise<NetnsPool | undefined> {
  if (!settings.netnsPool) return undefined;
  if (!(await docker.imageExists(BASE_IMAGE))) {
    say(`warning: no ${BASE_IMAGE} image on this host: each task gets a network namespace of its own (~0.1 s more per task); scripts/bootstrap.sh builds it`);
    return undefined;
  }
  const pool = new NetnsPool(docker, hostId, settings.netnsDir, BASE_IMAGE);
  for (const problem of await pool.adoptExisting()) say(`warning: ${problem}`);
  return pool;
}
