// What the engine conformance suite (test/engine-conformance.test.ts) runs on: an engine setup per engine and
// mode, opened with what a worker host gives its engine, and the real attempt runner driven in an activity
// context of its own (as test/unit/attempt-runner.test.ts does), with the cancel, the step-aside and the
// record signals a workflow would bring. A new engine is one more EngineSetup: how to open it on this host,
// how to find what a job left on it by label, and how to kill a task as an outage would.

import { asyncLocalStorage, CancelledFailure, type Context } from '@temporalio/activity';
import type { ActivityCancellationDetails } from '@temporalio/common';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { containerNameFor, LABELS } from '../../activities/container-spec.js';
import { dindStoreSettled } from '../../activities/dind-image-store.js';
import { DockerEngine } from '../../activities/docker-engine.js';
import type { AttemptScope, TaskEngine, TaskSpec } from '../../activities/engines/engine.js';
import { openEngine } from '../../activities/engines/registry.js';
import { hostFoldersFrom } from '../../activities/index.js';
import { NetnsPool } from '../../activities/netns-pool.js';
import { OomEventHub } from '../../activities/oom-events.js';
import { KubeCluster } from '../../activities/engines/kubernetes/kube-cluster.js';
import { labelValueFor, podNameFor, TASK_CONTAINER } from '../../activities/engines/kubernetes/pod-manifest.js';
import { unmountStore } from '../../activities/reflink-fs.js';
import { runTaskContainer, type ContainerDeps, type ContainerOutcome } from '../../activities/run-task-container.js';
import { installTaskFirewall } from '../../activities/task-firewall.js';
import { ensureTaskNetwork, TASK_BRIDGE_INTERFACE } from '../../activities/task-network.js';
import { taskDirectory } from '../../contract/task-template.js';
import type { TaskDefinition } from '../../contract/benchmark.js';
import { settingsFrom } from '../../config/settings.js';
import type { RewardBatch } from '../../runs/rewards.js';
import { runOptions } from '../../runs/run-options.js';
import type { JobSpec } from '../../runs/run-spec.js';
import { BASE_IMAGE, DIND_IMAGE } from '../../workers/host-ca-trust.js';
import { FakeTaskEngine, type FakeRun } from './fake-task-engine.js';
import { sampleTask } from './sample-job.js';

/** The variable on the "worker host" that holds the job's API key (--api-key-env): the key reaches the task, and nothing else. */
export const KEY_VARIABLE = 'BR_CONFORMANCE_API_KEY';

/** A host's engine as a case uses it, opened for the suite. */
export interface OpenedEngine {
  /** What the attempt runner is given: the engine, opened as activities/index.ts opens it, and the host's firewall. */
  deps: ContainerDeps;
  /** Whatever of the job is left on the engine (tasks, namespaces it lent them...), found by its job label, as the orphan sweep finds it. */
  leftovers(jobId: string): Promise<string[]>;
  /** Kills the task of that name as the engine going down would: from outside BenchRouter. */
  killFromOutside(name: string): Promise<void>;
  close(): Promise<void>;
}

/** What a case may need beyond running a command: an engine that lacks it skips the case with its reason. */
export type EngineAbility = 'records-while-running' | 'pids-limit' | 'network-isolation';

/** One engine in one mode: a `describe.each` entry of the suite. */
export interface EngineSetup {
  name: string;
  /** The image its tasks run in. */
  image: string;
  /** What its tasks' definitions say beyond a case's (DinD mode: `docker: true`). */
  task: Partial<TaskDefinition>;
  /** The `runtime` its outcomes report. */
  runtime: RegExp;
  /** Runs tasks' commands; the fake engine runs what each case says a command would do instead (`Case.fake`). */
  runsCommands: boolean;
  /** Extra seconds a task takes to start here (a DinD daemon), added to the cases' bounds. */
  startSeconds: number;
  /** What this engine cannot do, by the `needs` a case names, with the reason (the case is skipped, saying it). */
  lacks?: Partial<Record<EngineAbility, string>>;
  /** Opens the engine on this host; `gatewayPort` is the one host port its tasks may reach (a worker's gateway's). */
  open(gatewayPort: number): Promise<OpenedEngine>;
}

/** A server on every interface of this host: a model endpoint the task may reach, or a port it must not. */
export async function listenOnAllInterfaces(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const server = http.createServer((_req, res) => res.end('ok'));
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The Docker engine on this host's daemon, with what a worker host sets up for it (workers/start-worker.ts): its
 * folders from its settings (hostFoldersFrom), the task network and its firewall (open to `gatewayPort` only, as a
 * worker's is to its gateway), the OOM event hub and the pool of network namespaces.
 */
async function openDockerEngine(hostId: string, gatewayPort: number): Promise<OpenedEngine> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'br-conformance-'));
  const settings = settingsFrom({ BENCHROUTER_HOME: home }, os.homedir());
  const docker = new DockerEngine();
  await ensureTaskNetwork(docker);
  const firewall = await installTaskFirewall(TASK_BRIDGE_INTERFACE, gatewayPort);
  const oomEvents = new OomEventHub(docker);
  mkdirSync(settings.netnsDir, { recursive: true });
  const netns = settings.netnsPool && (await docker.imageExists(BASE_IMAGE)) ? new NetnsPool(docker, hostId, settings.netnsDir, BASE_IMAGE) : undefined;
  const host = { docker, hostId, ...hostFoldersFrom(settings), firewall, netns, oomEvents };
  const engine = await openEngine(host.engineName, host);
  const docker_ = (args: string[]) => promisify(execFile)('docker', args, { encoding: 'utf8' });
  return {
    deps: { hostId, artifactsRoot: settings.artifactsRoot, engine, firewall },
    async leftovers(jobId) {
      const { stdout } = await docker_(['ps', '--all', '--format', '{{.Names}}', '--filter', `label=${LABELS.job}=${jobId}`]);
      return stdout.split('\n').filter(Boolean);
    },
    async killFromOutside(name) {
      await docker_(['kill', name]);
    },
    async close() {
      oomEvents.close();
      await netns?.close().catch(() => undefined);
      await firewall.close().catch(() => undefined);
      await dindStoreSettled();
      await unmountStore(settings.dindStoreDir);
      rmSync(home, { recursive: true, force: true });
    },
  };
}

export const dockerSimple: EngineSetup = {
  name: 'docker (simple)',
  image: BASE_IMAGE,
  task: { docker: false },
  runtime: /^simple$/,
  runsCommands: true,
  startSeconds: 0,
  open: (gatewayPort) => openDockerEngine(`conf-simple-${randomBytes(3).toString('hex')}`, gatewayPort),
};

export const dockerDind: EngineSetup = {
  name: 'docker (dind)',
  image: DIND_IMAGE,
  task: { docker: true },
  runtime: /^dind:(sysbox|privileged|capabilities)$/,
  runsCommands: true,
  startSeconds: 10,
  open: (gatewayPort) => openDockerEngine(`conf-dind-${randomBytes(3).toString('hex')}`, gatewayPort),
};

/** The local cluster of scripts/k8s.sh, as its state directory holds it. */
const k8sDir = process.env.BENCHROUTER_K8S_DIR || path.join(process.env.BENCHROUTER_HOME || path.join(os.homedir(), '.benchrouter'), 'k8s');

/** True when BENCHROUTER_K8S_TESTS=1 and the local cluster is up (`scripts/k8s.sh status`). */
export function kubernetesTestsEnabled(): boolean {
  if (process.env.BENCHROUTER_K8S_TESTS !== '1') return false;
  try {
    execFileSync(path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'scripts', 'k8s.sh'), ['status'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The Kubernetes engine on the local cluster (scripts/k8s.sh), in a namespace of the suite's own, opened with
 * what a worker host gives it (hostFoldersFrom). Its tasks reach the host by the cluster's bridge address. A
 * task's first kill from outside is the runtime's (the cluster's containerd) SIGKILL of the task container, as a
 * node's runtime going down gives it; a later one is its pod's deletion by someone else, as a drain gives it.
 */
async function openKubernetesEngine(hostId: string): Promise<OpenedEngine> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'br-conformance-k8s-'));
  const settings = settingsFrom(
    {
      ...process.env,
      BENCHROUTER_HOME: home,
      BENCHROUTER_K8S_DIR: k8sDir,
      BENCHROUTER_K8S_NAMESPACE: 'benchrouter-conformance',
      BENCHROUTER_ENGINE: 'kubernetes',
    },
    os.homedir(),
  );
  const docker = new DockerEngine();
  const host = { docker, hostId, ...hostFoldersFrom(settings) };
  const engine = await openEngine(host.engineName, host);
  const cluster = new KubeCluster(settings.kubernetes.kubeconfig, settings.kubernetes.namespace);
  const killsOf = new Map<string, number>();
  return {
    deps: { hostId, artifactsRoot: settings.artifactsRoot, engine },
    leftovers: (jobId) => cluster.labelled(LABELS.job, labelValueFor(jobId)),
    async killFromOutside(name) {
      // A pod counts as running from its creation: its task container may not have started yet.
      let id: string | undefined;
      await eventually(
        async () => {
          const status = (await cluster.readPod(podNameFor(name)))?.status?.containerStatuses?.find((c) => c.name === TASK_CONTAINER);
          id = status?.state?.running ? status.containerID?.replace(/^\w+:\/\//, '') : undefined;
          return id !== undefined;
        },
        30_000,
        `the task container of ${name} runs`,
      );
      const kills = (killsOf.get(name) ?? 0) + 1;
      killsOf.set(name, kills);
      if (kills > 1) await cluster.deletePod(podNameFor(name));
      else await promisify(execFile)('ctr', ['--address', settings.kubernetes.containerdSocket, '-n', 'k8s.io', 'tasks', 'kill', '-s', 'SIGKILL', id!]);
    },
    async close() {
      rmSync(home, { recursive: true, force: true });
    },
  };
}

export const kubernetes: EngineSetup = {
  name: 'kubernetes',
  image: BASE_IMAGE,
  task: { docker: false },
  runtime: /^kubernetes$/,
  runsCommands: true,
  startSeconds: 5,
  lacks: {
    'pids-limit': 'Kubernetes has no per-pod pids limit (only the kubelet-wide podPidsLimit, unset on the local cluster)',
    'network-isolation': "the local cluster's bridge CNI does not enforce NetworkPolicy: the pod's egress policy is created but nothing applies it",
  },
  open: () => openKubernetesEngine(`conf-k8s-${randomBytes(3).toString('hex')}`),
};

/**
 * The engine in memory that the policy tests use (test/support/fake-task-engine.ts). It runs no command: each
 * case says what its command would do there (Case.fake), and the cases that need a command run are skipped.
 */
export function fakeSetup(fakeRuns: (spec: TaskSpec) => FakeRun): EngineSetup & { engine?: FakeTaskEngine } {
  const setup: EngineSetup & { engine?: FakeTaskEngine } = {
    name: 'fake (in memory)',
    image: 'benchrouter/fake:0',
    task: {},
    runtime: /^simple$/,
    runsCommands: false,
    startSeconds: 0,
    async open() {
      const engine = (setup.engine = new FakeTaskEngine(fakeRuns));
      const root = mkdtempSync(path.join(os.tmpdir(), 'br-conformance-fake-'));
      return {
        deps: { hostId: 'conf-fake', artifactsRoot: root, engine },
        leftovers: async (jobId) => [...engine.tasks.values()].filter((task) => task.spec.labels[LABELS.job] === jobId).map((task) => task.name),
        killFromOutside: async (name) => engine.tasks.get(name)?.killFromOutside(),
        close: async () => rmSync(root, { recursive: true, force: true }),
      };
    },
  };
  return setup;
}

/** What the runner saw of its activity context: heartbeats, and the record batches signalled to its "workflow". */
export interface AttemptTrace {
  heartbeats: Array<Record<string, unknown>>;
  signals: Array<{ atMs: number; batch: RewardBatch }>;
}

/** An attempt of the real runner in an activity context of its own, which the case can cancel or abandon. */
export interface Attempt {
  outcome: Promise<ContainerOutcome>;
  trace: AttemptTrace;
  /** The run's cancel (the workflow cancelled the activity). */
  cancel(): void;
  /** The server giving up on the attempt (its heartbeat timed out, as when its worker was killed -9): the attempt steps aside. */
  abandon(): void;
}

/**
 * Attempt `number` of `job` on `opened`. The context has a workflow execution whose client takes the records
 * follower's signals (nothing else of a workflow is asked for: no gateway, no shard, no budget).
 */
export function startAttempt(opened: OpenedEngine, job: JobSpec, image: string, number: number, heartbeatDetails?: unknown): Attempt {
  const trace: AttemptTrace = { heartbeats: [], signals: [] };
  const controller = new AbortController();
  let details: ActivityCancellationDetails | undefined;
  const cancelled = new Promise<never>((_resolve, reject) =>
    controller.signal.addEventListener('abort', () => reject(new CancelledFailure(details?.cancelRequested ? 'CANCELLED' : 'TIMED_OUT')), { once: true }),
  );
  cancelled.catch(() => undefined);
  const quiet = () => undefined;
  const ctx = {
    info: { attempt: number, activityId: `a-${job.jobId}`, heartbeatDetails, workflowExecution: { workflowId: job.jobId, runId: 'r' } },
    heartbeat: (beat: Record<string, unknown>) => trace.heartbeats.push(beat),
    log: { info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet },
    cancellationSignal: controller.signal,
    get cancellationDetails() {
      return details;
    },
    cancelled,
    client: {
      workflow: {
        getHandle: () => ({
          signal: async (_name: string, batch: RewardBatch) => void trace.signals.push({ atMs: Date.now(), batch }),
        }),
      },
    },
  } as unknown as Context;
  const outcome = asyncLocalStorage.run(ctx, () => runTaskContainer(opened.deps, { job, image }));
  outcome.catch(() => undefined);
  const abort = (flags: Partial<ActivityCancellationDetails>) => {
    details = {
      cancelRequested: false,
      notFound: false,
      timedOut: false,
      workerShutdown: false,
      paused: false,
      reset: false,
      ...flags,
    } as ActivityCancellationDetails;
    controller.abort();
  };
  return { outcome, trace, cancel: () => abort({ cancelRequested: true }), abandon: () => abort({ timedOut: true }) };
}

/** Jobs of one suite run: each its own id (so its own task name and labels), its benchmark a scratch folder. */
export class ConformanceJobs {
  readonly runId = `conformance-${randomBytes(3).toString('hex')}`;
  readonly benchmarkDir: string;
  private count = 0;

  constructor(private readonly scratch: string) {
    this.benchmarkDir = path.join(scratch, 'benchmark');
  }

  /** A job of the setup's task with the case's fields, its model at `endpoint`; its working directory exists in the benchmark. */
  job(setup: EngineSetup, label: string, task: Partial<TaskDefinition>, endpoint: string): JobSpec {
    const definition = sampleTask({ name: 'probe', ...setup.task, ...task });
    mkdirSync(path.join(this.benchmarkDir, 'tasks', taskDirectory(definition)), { recursive: true });
    const slug = setup.name.replace(/[^a-z]+/g, '-').replace(/-$/, '');
    return {
      runId: this.runId,
      jobId: `${this.runId}.${String(++this.count).padStart(2, '0')}-${slug}-${label}`,
      options: runOptions({ model: 'conformance-model', endpoint, gateway: false, apiKeyEnv: KEY_VARIABLE, preflight: false }),
      resolved: { prices: {} },
      cacheFrom: [],
      repeat: { index: 0 },
      benchmark: { name: 'conformance', dir: this.benchmarkDir, digest: 'c'.repeat(64) },
      task: definition,
    };
  }

  close(): void {
    rmSync(this.scratch, { recursive: true, force: true });
  }
}

/** The attempt's scope as the engine knows it, for looking a job's task up from a test. */
export function scopeOf(job: JobSpec, image: string, hostId: string): AttemptScope {
  const ctx = { log: { info: () => undefined, warn: () => undefined }, cancellationSignal: new AbortController().signal } as unknown as Context;
  return { job, image, archives: [], name: containerNameFor(job.jobId, hostId), ctx, beatingWhile: (_details, work) => work };
}

/** Resolves once `check` holds, polling; fails after `ms`. */
export async function eventually(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** True once the job's task is running on the engine (found by its name, as a retry finds it). */
export async function taskRunning(engine: TaskEngine, scope: AttemptScope): Promise<boolean> {
  const found = await engine.find(scope);
  return (await found?.state())?.running === true;
}

/** This host's first non-loopback IPv4 address off Docker's bridges: a host port is reachable there too, not only by the alias. */
export function hostAddress(): string {
  const address = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal && !a.address.startsWith('172.'));
  if (!address) throw new Error('this host has no non-loopback IPv4 address to probe');
  return address.address;
}
