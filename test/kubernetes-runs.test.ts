// Runs on the Kubernetes engine score what they score on Docker: the same benchmarks, options and model through
// one worker host set to the kubernetes engine (scripts/k8s.sh's local cluster) and one on Docker, compared job
// by job and instance by instance. arith against the reference model; humaneval and miniwob, 3 instances each,
// against their replayed answers. Runs with BENCHROUTER_K8S_TESTS=1 and the cluster up (npm run test:k8s).

import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { KubeCluster } from '../activities/engines/kubernetes/kube-cluster.js';
import { LABELS } from '../activities/container-spec.js';
import { labelValueFor } from '../activities/engines/kubernetes/pod-manifest.js';
import type { RunOptionsInput } from '../runs/run-options.js';
import type { RunResult } from '../runs/run-spec.js';
import { expectedArithScore } from '../reference-model/expected-score.js';
import { builtinDir, replayAnswers } from './support/benchmark-image.js';
import { kubernetesTestsEnabled } from './support/engine-conformance.js';
import { br, startHarness, type Harness } from './support/harness.js';

const enabled = kubernetesTestsEnabled();
// A cold miniwob image build takes 13 minutes on 2 loaded cores; its import into the cluster about two more.
const COLD_MS = 30 * 60_000;
const NAMESPACE = 'benchrouter-runs';

let onDocker: Harness;
/** The kubernetes host as on the local cluster by default: the benchmark folders mounted from the node's paths. */
let onNodePaths: Harness;
/** The kubernetes host as on a real cluster: the benchmark folders sent into each pod through the API. */
let onCopiedInputs: Harness;
let kubernetesEnv: Record<string, string>;
beforeAll(async () => {
  if (!enabled) return;
  const k8sDir = process.env.BENCHROUTER_K8S_DIR || path.join(process.env.BENCHROUTER_HOME || path.join(os.homedir(), '.benchrouter'), 'k8s');
  onDocker = await startHarness('k8s-twin');
  kubernetesEnv = { BENCHROUTER_ENGINE: 'kubernetes', BENCHROUTER_K8S_DIR: k8sDir, BENCHROUTER_K8S_NAMESPACE: NAMESPACE };
  onNodePaths = await startHarness('k8s-runs', { env: kubernetesEnv });
  onCopiedInputs = await startHarness('k8s-copied', { env: { ...kubernetesEnv, BENCHROUTER_K8S_INPUTS: 'copy' } });
});
afterAll(async () => {
  await onDocker?.close();
  await onNodePaths?.close();
  await onCopiedInputs?.close();
});

interface InstanceRecord {
  index: string;
  score: number;
}

async function recordsOf(h: Harness, run: RunResult): Promise<Array<[string, number]>> {
  const printed = await br(['records', run.runId, '--json'], h.env);
  expect(printed.code, printed.stderr).toBe(0);
  return printed.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as InstanceRecord)
    .map((r): [string, number] => [String(r.index), r.score])
    .sort(([a], [b]) => a.localeCompare(b));
}

/** Runs `benchmark` on both hosts with the same options; the Kubernetes run's jobs, results and records equal Docker's. */
/** `expected`: each task's overall, as the benchmark's own scoring gives it for this model (asserted in its own test file). */
async function expectSameOnBoth(
  benchmark: string,
  options: Partial<RunOptionsInput>,
  expected: { perTask: Record<string, number>; records: number },
  onKubernetes = onNodePaths,
) {
  const [docker, kubernetes] = [await onDocker.run(builtinDir(benchmark), options), await onKubernetes.run(builtinDir(benchmark), options)];
  for (const run of [docker, kubernetes]) for (const job of run.jobs) expect(job.status, `${job.jobId}: ${job.message}`).toBe('SUCCEEDED');
  const results = (run: RunResult) => Object.fromEntries(run.jobs.map((job) => [job.task, job.result]));
  expect(results(kubernetes)).toEqual(results(docker));
  expect(Object.fromEntries(kubernetes.jobs.map((job) => [job.task, job.result?.overall]))).toEqual(expected.perTask);
  const records = await recordsOf(onKubernetes, kubernetes);
  expect(records).toEqual(await recordsOf(onDocker, docker));
  expect(records).toHaveLength(expected.records);

  // Every job's task ran as a pod of this cluster, gone after the run; the Docker host's ran as containers.
  expect(kubernetes.jobs.map((job) => job.runtime)).toEqual(kubernetes.jobs.map(() => 'kubernetes'));
  expect(docker.jobs.map((job) => job.runtime)).toEqual(docker.jobs.map(() => 'simple'));
  const cluster = new KubeCluster(onKubernetes.settings.kubernetes.kubeconfig, NAMESPACE);
  for (const job of kubernetes.jobs) expect(await cluster.labelled(LABELS.job, labelValueFor(job.jobId))).toEqual([]);
  return { docker, kubernetes };
}

describe.skipIf(!enabled)('a kubernetes worker host starting', () => {
  it("removes the pods an earlier life of it left whose jobs no longer run there, and no other host's", { timeout: 120_000 }, async () => {
    const cluster = new KubeCluster(onNodePaths.settings.kubernetes.kubeconfig, NAMESPACE);
    const hostId = 'host-k8s-sweep'; // startHarness('k8s-sweep')'s
    const pod = (name: string, host: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NAMESPACE, labels: { [LABELS.managed]: 'true', [LABELS.host]: host, [LABELS.job]: `br-gone-${name}.000-x` } },
      spec: {
        restartPolicy: 'Never',
        automountServiceAccountToken: false,
        containers: [{ name: 'task', image: 'benchrouter/base:bookworm', imagePullPolicy: 'Never', command: ['sleep', '600'] }],
      },
    });
    await cluster.ensureNamespace();
    expect(await cluster.createPod(pod('left-behind', hostId))).not.toBe('conflict');
    expect(await cluster.createPod(pod('another-hosts', 'host-k8s-other'))).not.toBe('conflict');
    try {
      const restarted = await startHarness('k8s-sweep', { env: kubernetesEnv });
      await restarted.close();
      expect(await cluster.readPod('left-behind')).toBeUndefined();
      expect(await cluster.readPod('another-hosts')).toBeDefined();
    } finally {
      await cluster.deletePod('left-behind');
      await cluster.deletePod('another-hosts');
    }
  });
});

describe.skipIf(!enabled)('runs on the kubernetes engine score what they score on docker', () => {
  it('arith against the reference model: both tasks, every problem', { timeout: COLD_MS }, async () => {
    const { perTask } = expectedArithScore(builtinDir('arith'), 'reference-acc80');
    await expectSameOnBoth('arith', { model: 'reference-acc80' }, { perTask, records: 40 });
  });

  it(
    "arith again with the benchmark folder sent into each pod through the API, as on a cluster whose nodes do not share the worker's disk",
    { timeout: COLD_MS },
    async () => {
      expect(onCopiedInputs.settings.kubernetes.inputs).toBe('copy');
      const { perTask } = expectedArithScore(builtinDir('arith'), 'reference-acc80');
      await expectSameOnBoth('arith', { model: 'reference-acc80' }, { perTask, records: 40 }, onCopiedInputs);
    },
  );

  /** `benchmark`'s first 3 instances, each host asking a replay model of `answers` that knows every request. */
  async function expectSameReplayed(benchmark: string, answers: string, perTask: Record<string, number>) {
    const replay: ReplayModelServer = await startReplayModel({ answersFile: replayAnswers(answers) });
    try {
      await expectSameOnBoth(benchmark, { endpoint: replay.url, limit: 3 }, { perTask, records: 3 });
      expect(replay.counts.unknown).toBe(0);
    } finally {
      await replay.close();
    }
  }

  it('humaneval, 3 problems, replayed completions', { timeout: COLD_MS }, () => expectSameReplayed('humaneval', 'humaneval-python.jsonl', { python: 2 / 3 }));

  it('miniwob, 3 episodes, replayed actions', { timeout: COLD_MS }, () => expectSameReplayed('miniwob', 'miniwob.jsonl', { miniwob: 2 / 3 }));
});
