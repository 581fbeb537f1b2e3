// The Kubernetes engine: a task is a Pod in the engine's namespace (pod-manifest.ts), on the cluster of the
// host's kubeconfig. Its image is imported into (or pushed for) the cluster first (cluster-images.ts). Its
// output is the pod log, followed into container.log through the same capped, redacting writer as Docker's
// (container-log.ts). Its results, written to an emptyDir at /app/results, are copied into the job's results
// directory on this host through the API (exec `tar c` in the pod's results container) once the task has
// exited, or before BenchRouter kills it: records.jsonl arrives then, not while the task runs. Its end,
// exit code and out-of-memory kill are read from the pod's status (polled).

import { ApplicationFailure } from '@temporalio/common';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { appendFileSync, createWriteStream, mkdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { settingsFrom, type KubernetesSettings } from '../../../config/settings.js';
import { FAILURE_TYPES } from '../../../runs/failure-types.js';
import { JOB_FILES, jobResultsDir } from '../../../runs/job-artifacts.js';
import { RECORDS_SIZE_CAP_BYTES } from '../../records-file.js';
import { CappedLogWriter, followInto, LOG_CAP_BYTES, LOG_KEEP_LAST_BYTES, LOG_TAIL_LINES } from '../../container-log.js';
import { CONTAINER_RESULTS_DIR, LABELS } from '../../container-spec.js';
import type { DockerEngine } from '../../docker-engine.js';
import { killedByOutage, OUTAGE_RESTART_LABEL } from '../../outage-restart.js';
import type { AttemptScope, EngineKind, LogCapture, OomWatch, RunningTask, TaskEngine, TaskSpec, TaskState } from '../engine.js';
import { ClusterImages } from './cluster-images.js';
import { apiMessage, KubeCluster } from './kube-cluster.js';
import {
  EXITED_MESSAGE,
  hostPortsOf,
  networkPolicyManifest,
  labelValueFor,
  originalLabels,
  podManifest,
  podNameFor,
  RESULTS_CONTAINER,
  STAGE_CONTAINER,
  STAGE_READY,
  stagedMounts,
  TASK_CONTAINER,
} from './pod-manifest.js';

/** What a worker host gives its Kubernetes engine. */
export interface KubernetesEngineDeps {
  /** Builds the task images (and pushes them to the registry, with one). */
  docker: DockerEngine;
  locksDir: string;
  /** Where the job's results are copied to (runs/job-artifacts.ts). */
  artifactsRoot: string;
  /** The host's settings' (hostFoldersFrom); absent: read from this process's environment. */
  kubernetes?: KubernetesSettings;
}

export const kubernetesEngine: EngineKind<KubernetesEngineDeps> = {
  name: 'kubernetes',
  open: (deps) => new KubernetesTaskEngine(deps),
  async tasksOfHost(deps, hostId) {
    const settings = settingsOf(deps);
    const cluster = new KubeCluster(settings.kubeconfig, settings.namespace);
    const pods = await cluster.listPods(`${LABELS.managed}=true,${LABELS.host}=${labelValueFor(hostId)}`);
    return pods.map((pod) => {
      const name = pod.metadata?.name ?? '';
      return { name: `pod/${cluster.namespace}/${name}`, labels: originalLabels(pod.metadata), remove: () => removePod(cluster, name) };
    });
  },
};

/** The host's kubernetes settings, or this process's environment's. */
const settingsOf = (deps: KubernetesEngineDeps): KubernetesSettings => deps.kubernetes ?? settingsFrom(process.env, os.homedir()).kubernetes;

/** How long a fresh pod may take to get its task container started (scheduling, the runtime's setup). */
const START_TIMEOUT_MS = 300_000;
/** How often a running task's pod is read. */
export const POLL_MS = 1000;
/** The most of a task's records.jsonl copied out in one exec while it runs. */
const RECORDS_SYNC_BYTES = 8 * 1024 * 1024;
/** How long the copy of a task's results may take when BenchRouter kills it (a timeout, a cancel). */
const KILL_COPY_MS = 10_000;
/** Waiting reasons of a container that will not start by waiting longer. */
const FATAL_WAITING = /^(ErrImageNeverPull|InvalidImageName|CreateContainerConfigError|CreateContainerError|RunContainerError|ErrImagePull|ImagePullBackOff)$/;
/** A pod's status reasons (and its DisruptionTarget condition) that say the cluster, not the task, ended it. */
const DISRUPTED = /^(Evicted|NodeLost|Shutdown|Terminated|NodeAffinity|UnexpectedAdmissionError|Preempting)$/;

/** The task container's status in the pod, as a TaskState. A pod that ended without its container's record (evicted) reads as killed (137). */
export function podTaskState(pod: V1Pod): TaskState {
  const status = pod.status?.containerStatuses?.find((c) => c.name === TASK_CONTAINER);
  const running = status?.state?.running;
  const terminated = status?.state?.terminated;
  const ended = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
  const iso = (date: Date | string | undefined) => (date ? new Date(date).toISOString() : '');
  return {
    id: pod.metadata?.uid ?? pod.metadata?.name ?? '',
    running: !terminated && !ended,
    exitCode: terminated?.exitCode ?? (ended ? 137 : 0),
    startedAt: iso(running?.startedAt ?? terminated?.startedAt),
    finishedAt: iso(terminated?.finishedAt),
    oomKilled: terminated?.reason === 'OOMKilled',
    labels: originalLabels(pod.metadata),
  };
}

/** True when the pod's task container has started (running or ended): its log can be read. */
function taskStarted(pod: V1Pod): boolean {
  const state = pod.status?.containerStatuses?.find((c) => c.name === TASK_CONTAINER)?.state;
  return Boolean(state?.running || state?.terminated) || pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';
}

/**
 * The worker's address as its pods reach it: the setting, else the local cluster's bridge address (br-k8s0,
 * there once a pod ran), else the first address of its pod network.
 */
export function hostAddressOf(settings: KubernetesSettings, interfaces = os.networkInterfaces()): string {
  if (settings.hostAddress) return settings.hostAddress;
  const bridge = interfaces['br-k8s0']?.find((a) => a.family === 'IPv4');
  if (bridge) return bridge.address;
  const [base] = settings.podCidr.split('/');
  const parts = base!.split('.').map(Number);
  parts[3] = (parts[3] ?? 0) + 1;
  return parts.join('.');
}

class KubernetesTaskEngine implements TaskEngine {
  readonly name = 'kubernetes';
  readonly cluster: KubeCluster;
  private readonly settings: KubernetesSettings;
  private readonly images: ClusterImages;

  constructor(private readonly deps: KubernetesEngineDeps) {
    const settings = (this.settings = settingsOf(deps));
    this.cluster = new KubeCluster(settings.kubeconfig, settings.namespace);
    this.images = new ClusterImages({
      docker: deps.docker,
      locksDir: deps.locksDir,
      containerdSocket: settings.containerdSocket,
      ...(settings.registry ? { registry: settings.registry } : {}),
    });
  }

  private handle(attempt: AttemptScope, seen: TaskState): KubernetesTask {
    return new KubernetesTask(this.cluster, podNameFor(attempt.name), seen, jobResultsDir(this.deps.artifactsRoot, attempt.job));
  }

  async find(attempt: AttemptScope): Promise<RunningTask | undefined> {
    await this.cluster.ensureNamespace();
    const pod = await this.cluster.readPod(podNameFor(attempt.name));
    return pod && this.handle(attempt, podTaskState(pod));
  }

  async start(spec: TaskSpec, attempt: AttemptScope): Promise<RunningTask | 'conflict'> {
    if (spec.docker) {
      throw ApplicationFailure.nonRetryable(
        `task ${attempt.job.task.name} (job ${attempt.job.jobId}) has docker: true, which the kubernetes task engine does not run: a task's own ` +
          `Docker daemon needs a privileged pod, and BenchRouter's pods are never privileged. Run it on a worker host with --engine docker (BENCHROUTER_ENGINE=docker).`,
        FAILURE_TYPES.missingOnHost,
      );
    }
    await this.cluster.ensureNamespace();
    const image = await attempt.beatingWhile({ preparingImage: spec.image }, this.images.provide(spec.image));
    const name = podNameFor(attempt.name);
    const hostAddress = hostAddressOf(this.settings);
    if (spec.network === 'isolated') {
      await this.cluster.applyNetworkPolicy(networkPolicyManifest(name, spec, this.cluster.namespace, hostAddress, hostPortsOf(spec.env)));
    }
    const { inputs } = this.settings;
    const created = await this.cluster.createPod(podManifest(name, spec, { namespace: this.cluster.namespace, ...image, hostAddress, inputs }));
    if (created === 'conflict') return created;
    if (inputs === 'copy')
      await attempt.beatingWhile({ stagingInputs: name }, withinStartTimeout(this.stageInputs(name, spec), `sending the inputs into pod ${name}`));
    const pod = await attempt.beatingWhile({ startingPod: name }, this.started(name));
    return this.handle(attempt, podTaskState(pod));
  }

  /**
   * Sends the task's read-only folders into its pod (each `tar c` here into `tar x` in the stage container, through
   * the API), then lets the task start. Waits for the stage container to run first.
   */
  private async stageInputs(name: string, spec: TaskSpec): Promise<void> {
    const stageOf = (pod: V1Pod) => pod.status?.initContainerStatuses?.find((c) => c.name === STAGE_CONTAINER);
    await this.untilPod(name, 'its stage container', stageOf, (pod) => Boolean(stageOf(pod)?.state?.running));
    for (const { source, stage } of stagedMounts(spec)) {
      const packed = spawn('tar', ['-c', '-f', '-', '-C', source, '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let packErr = '';
      packed.stderr.on('data', (chunk: Buffer) => (packErr = (packErr + chunk.toString()).slice(-2000)));
      const packedEnd = new Promise<number | null>((resolve, reject) => {
        packed.on('error', reject);
        packed.on('close', resolve);
      });
      try {
        await this.cluster.exec(name, STAGE_CONTAINER, ['tar', '-x', '-f', '-', '--no-same-owner', '-C', stage], undefined, packed.stdout);
      } catch (error) {
        packed.kill();
        throw new Error(`cannot send ${source} into pod ${this.cluster.namespace}/${name}: ${apiMessage(error)}`);
      }
      const code = await packedEnd;
      if (code !== 0) throw new Error(`tar -c of ${source} exited ${code}: ${packErr.trim()}`);
    }
    await this.cluster.exec(name, STAGE_CONTAINER, ['sh', '-c', `: > ${STAGE_READY}`]);
  }

  /** The pod once its task container started (or ended); a container that cannot start fails the start, saying why. */
  private started(name: string): Promise<V1Pod> {
    return this.untilPod(name, 'its task', (pod) => pod.status?.containerStatuses?.find((c) => c.name === TASK_CONTAINER), taskStarted);
  }

  /**
   * The pod once `ready` says so. Fails when it goes away, when `container` (what it waits for: `what`) waits for
   * a reason that waiting longer will not mend, or after START_TIMEOUT_MS, saying what it was waiting on.
   */
  private async untilPod(name: string, what: string, container: (pod: V1Pod) => V1ContainerStatus | undefined, ready: (pod: V1Pod) => boolean): Promise<V1Pod> {
    const until = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const pod = await this.cluster.readPod(name);
      if (!pod) throw new Error(`pod ${this.cluster.namespace}/${name} went away before ${what} started`);
      if (ready(pod)) return pod;
      const waiting = container(pod)?.state?.waiting;
      if (waiting?.reason && FATAL_WAITING.test(waiting.reason)) {
        throw new Error(`pod ${this.cluster.namespace}/${name} cannot start ${what}: ${waiting.reason}: ${waiting.message ?? ''}`.trim());
      }
      if (Date.now() > until) {
        const unscheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
        const why = waiting?.reason ?? (unscheduled ? `unschedulable: ${unscheduled.message ?? unscheduled.reason}` : (pod.status?.phase ?? 'pending'));
        throw new Error(`pod ${this.cluster.namespace}/${name} did not start ${what} within ${START_TIMEOUT_MS / 1000} s (${why})`);
      }
      await sleep(250);
    }
  }

  async remove(attempt: AttemptScope): Promise<void> {
    await removePod(this.cluster, podNameFor(attempt.name));
  }

  async watchOom(attempt: AttemptScope): Promise<OomWatch> {
    // No event stream: the kubelet records an out-of-memory kill of the task container as its termination reason.
    const name = podNameFor(attempt.name);
    let lost = false;
    return {
      stop: async () => {
        const pod = await this.cluster.readPod(name).catch(() => {
          lost = true;
          return undefined;
        });
        return pod && podTaskState(pod).oomKilled ? 1 : 0;
      },
      streamLost: () => lost,
    };
  }
}

/** `work`, or a failure naming `what` once START_TIMEOUT_MS passed (a stuck exec would otherwise hold the attempt for good). */
async function withinStartTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function removePod(cluster: KubeCluster, name: string): Promise<void> {
  await cluster.deletePod(name);
  await cluster.deleteNetworkPolicy(name);
  await cluster.podGone(name);
}

/** A job's pod, read by its name. */
class KubernetesTask implements RunningTask {
  /** Set once BenchRouter killed it: what the task's state reads from then on (the pod is gone). */
  private killedState?: TaskState;
  /** Set once the pod was seen gone without BenchRouter's kill (deleted, evicted with its node). */
  private goneState?: TaskState;
  private last: TaskState;
  private results?: Promise<void>;
  /** Set when the task's records.jsonl became shorter than the job's copy: only the copy at the end takes it. */
  private recordsRewritten = false;
  private stats?: { at: number; value: Promise<{ writable: number; held: number }> };

  constructor(
    private readonly cluster: KubeCluster,
    private readonly name: string,
    readonly seen: TaskState,
    private readonly resultsDir: string,
  ) {
    this.last = seen;
  }

  get id(): string {
    return this.seen.id;
  }

  async state(): Promise<TaskState | undefined> {
    if (this.killedState) return this.killedState;
    if (this.goneState) return this.goneState;
    const pod = await this.cluster.readPod(this.name);
    if (!pod) {
      // Gone under a running task: it ended as a kill from outside does (its state, the last seen, stopped).
      this.goneState = {
        ...this.last,
        running: false,
        exitCode: this.last.running ? 137 : this.last.exitCode,
        finishedAt: this.last.finishedAt || new Date().toISOString(),
      };
      return this.goneState;
    }
    this.last = podTaskState(pod);
    return this.last;
  }

  async wait(signal?: AbortSignal): Promise<number> {
    for (;;) {
      const state = await this.state();
      if (!state?.running) {
        await this.copyResults();
        return state?.exitCode ?? 137;
      }
      await this.syncRecords().catch(() => undefined);
      await sleep(POLL_MS, undefined, signal ? { signal } : undefined);
    }
  }

  /**
   * Appends what the task added to its records.jsonl since the last call to the job's copy, which the attempt's
   * records follower reads as it reads a bind-mounted file: records arrive while the task runs, and the ones
   * already copied outlive a pod lost with its node. At most RECORDS_SYNC_BYTES a call; resolves true when the
   * copy has caught up with the file as it was read. A file shorter than the copy (the task rewrote it) is left
   * to the copy at the end, as is everything after a failure.
   */
  private async syncRecords(): Promise<boolean> {
    if (this.recordsRewritten) return false;
    const file = path.join(this.resultsDir, JOB_FILES.records);
    let have = 0;
    try {
      have = statSync(file).size;
    } catch {
      // none copied yet
    }
    const want = Math.min(RECORDS_SYNC_BYTES, RECORDS_SIZE_CAP_BYTES - have);
    if (want <= 0) return true;
    // Exit 3: the file is shorter than what was copied.
    const script = `f=${CONTAINER_RESULTS_DIR}/${JOB_FILES.records}; [ -f "$f" ] || exit 0; [ "$(wc -c < "$f")" -ge "$1" ] || exit 3; tail -c +$(($1 + 1)) "$f" | head -c "$2"`;
    const added = await this.cluster
      .output(this.name, RESULTS_CONTAINER, ['sh', '-c', script, 'records', String(have), String(want)])
      .catch((error: unknown) => {
        if (/exit code 3\b/.test(error instanceof Error ? error.message : String(error))) this.recordsRewritten = true;
        throw error;
      });
    if (added.length > 0) {
      mkdirSync(this.resultsDir, { recursive: true });
      appendFileSync(file, added);
    }
    return added.length < want;
  }

  /** True once the job's records.jsonl holds all of the task's (to the cap); false when that could not be done. */
  private async catchUpRecords(): Promise<boolean> {
    try {
      for (let call = 0; call * RECORDS_SYNC_BYTES <= RECORDS_SIZE_CAP_BYTES; call++) if (await this.syncRecords()) return true;
    } catch {
      // the copy of the whole folder takes it
    }
    return false;
  }

  /** The results volume copied into the job's results directory, once (a kill takes what is there then). */
  private copyResults(): Promise<void> {
    this.results ??= (async () => {
      if (this.killedState || this.goneState) return;
      mkdirSync(this.resultsDir, { recursive: true });
      // records.jsonl is caught up in place rather than copied again: the records follower holds the job's copy open.
      const recordsCaughtUp = await this.catchUpRecords();
      const untar = spawn('tar', ['-x', '-f', '-', '-C', this.resultsDir, '--no-same-owner', '--no-same-permissions'], { stdio: ['pipe', 'ignore', 'pipe'] });
      let untarErr = '';
      untar.stderr.on('data', (chunk: Buffer) => (untarErr = (untarErr + chunk.toString()).slice(-2000)));
      const extracted = new Promise<void>((resolve, reject) => {
        untar.on('error', reject);
        untar.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`tar -x into ${this.resultsDir} exited ${code}: ${untarErr.trim()}`))));
      });
      untar.stdin.on('error', () => undefined);
      try {
        await this.cluster.exec(
          this.name,
          RESULTS_CONTAINER,
          ['tar', '-c', '-f', '-', ...(recordsCaughtUp ? [`--exclude=./${JOB_FILES.records}`] : []), '-C', CONTAINER_RESULTS_DIR, '.'],
          untar.stdin,
        );
      } finally {
        if (!untar.stdin.writableEnded) untar.stdin.end();
      }
      await extracted;
    })().catch((error: unknown) => {
      this.results = undefined;
      throw new Error(`cannot copy the results of pod ${this.cluster.namespace}/${this.name} out through the API: ${apiMessage(error)}`);
    });
    return this.results;
  }

  async kill(): Promise<void> {
    if (this.killedState) return;
    const state = await this.state();
    if (state && !this.goneState) {
      // What the task wrote so far is kept, as a killed container's bind mount keeps it; bounded, the kill comes anyway.
      const timer = new AbortController();
      await Promise.race([this.copyResults().catch(() => undefined), sleep(KILL_COPY_MS, undefined, { signal: timer.signal }).catch(() => undefined)]);
      timer.abort();
    }
    await this.cluster.deletePod(this.name);
    const at = new Date().toISOString();
    const was = state ?? this.last;
    this.killedState = { ...was, running: false, exitCode: was.running ? 137 : was.exitCode, finishedAt: was.running ? at : was.finishedAt || at };
  }

  async followLog(file: string, secrets: readonly string[]): Promise<LogCapture> {
    await this.untilStarted();
    const following = new AbortController();
    const source = await this.cluster.podLog(this.name, TASK_CONTAINER, { follow: 'true' }, following.signal);
    const writer = new CappedLogWriter(createWriteStream(file), LOG_CAP_BYTES, LOG_KEEP_LAST_BYTES, secrets);
    source.pipe(writer, { end: false });
    return followInto(source, writer, following, {
      beforeEnd: async () => {
        source.unpipe(writer);
        // The file is complete once the task ended and its results are out: the attempt reads them next.
        const failed = following.signal.aborted
          ? undefined
          : await this.wait().then(
              () => undefined,
              (error: unknown) => error,
            );
        if (writer.overCap()) writer.useEnd(await this.logTail(LOG_TAIL_LINES).catch(() => Buffer.alloc(0)));
        if (failed) throw failed;
      },
      failure: (error) => new Error(`pod log of ${this.cluster.namespace}/${this.name}: ${error.message}`),
    });
  }

  /** Until the task container started (its log exists), or the pod is gone. */
  private async untilStarted(): Promise<void> {
    const until = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const pod = await this.cluster.readPod(this.name);
      if (!pod || taskStarted(pod) || Date.now() > until) return;
      await sleep(250);
    }
  }

  async logTail(lines: number): Promise<Buffer> {
    try {
      const source = await this.cluster.podLog(this.name, TASK_CONTAINER, { tailLines: String(lines), timestamps: 'true' }, new AbortController().signal);
      const chunks: Buffer[] = [];
      for await (const chunk of source) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    } catch {
      return Buffer.alloc(0);
    }
  }

  /** The container's and the results volume's bytes as the kubelet's stats summary gives them (it measures every few seconds to a minute); 0 when it cannot tell. */
  private usage(): Promise<{ writable: number; held: number }> {
    if (this.stats && Date.now() - this.stats.at < 2000) return this.stats.value;
    const value = (async () => {
      const pod = await this.cluster.readPod(this.name);
      const node = pod?.spec?.nodeName;
      if (!node) return { writable: 0, held: 0 };
      const summary = await this.cluster.nodeStats(node);
      const mine = summary.pods?.find((p) => p.podRef?.name === this.name && p.podRef?.namespace === this.cluster.namespace);
      return {
        writable: mine?.containers?.find((c) => c.name === TASK_CONTAINER)?.rootfs?.usedBytes ?? 0,
        held: mine?.volume?.find((v) => v.name === 'results')?.usedBytes ?? 0,
      };
    })().catch(() => ({ writable: 0, held: 0 }));
    this.stats = { at: Date.now(), value };
    return value;
  }

  writableBytes = async () => (await this.usage()).writable;
  /** The results volume, which is in the pod until the copy: the disk watchdog counts it as the results directory's. */
  heldBytes = async () => (this.results ? 0 : (await this.usage()).held);

  async killedFromOutside(final: TaskState, timeoutSeconds: number, engineWentAway: boolean): Promise<boolean> {
    // A pod deleted under its task (not by BenchRouter) is an outage's kill, unless it was already the restart after one.
    if (this.goneState && !this.killedState) return this.goneState.labels[OUTAGE_RESTART_LABEL] === undefined;
    if (!killedByOutage(final, timeoutSeconds)) return false;
    const pod = await this.cluster.readPod(this.name).catch(() => undefined);
    if (!pod) return true;
    if (DISRUPTED.test(pod.status?.reason ?? '')) return true;
    if (pod.status?.conditions?.some((c) => c.type === 'DisruptionTarget' && c.status === 'True')) return true;
    // The wrapper records the task's own end: a task container that stopped without that record was killed from outside it.
    const terminated = pod.status?.containerStatuses?.find((c) => c.name === TASK_CONTAINER)?.state?.terminated;
    if (terminated && !(terminated.message ?? '').includes(EXITED_MESSAGE)) return true;
    return engineWentAway && !terminated;
  }

  remove = () => removePod(this.cluster, this.name);
}
