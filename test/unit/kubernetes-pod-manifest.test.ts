// The Kubernetes engine's pure parts (activities/engines/kubernetes/): a task's spec as a pod and its
// NetworkPolicy, names and label values made valid for the API (the originals kept), the worker's address as
// its pods reach it, the kubernetes settings, and a pod's status read as the task's state.

import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { CONTAINER_RESULTS_DIR, HOST_ALIAS, LABELS } from '../../activities/container-spec.js';
import type { TaskSpec } from '../../activities/engines/engine.js';
import { registryReference } from '../../activities/engines/kubernetes/cluster-images.js';
import { hostAddressOf, podTaskState } from '../../activities/engines/kubernetes/kubernetes-task-engine.js';
import {
  EXITED_MESSAGE,
  hostPortsOf,
  labelValueFor,
  LABELS_ANNOTATION,
  networkPolicyManifest,
  originalLabels,
  podManifest,
  podNameFor,
  RESULTS_CONTAINER,
  STAGE_CONTAINER,
  STAGE_READY,
  stagedMounts,
  TASK_CONTAINER,
  wrappedCommand,
} from '../../activities/engines/kubernetes/pod-manifest.js';
import { settingsFrom } from '../../config/settings.js';

const longJob = `run-${'x'.repeat(80)}.03`;
const spec: TaskSpec = {
  image: 'benchrouter/base:bookworm',
  command: 'echo "hi"; exit 3',
  workingDir: '/app/benchmark/tasks/probe',
  env: { TZ: 'UTC', BENCHROUTER_MODEL_ENDPOINT: `http://${HOST_ALIAS}:8390/v1`, BENCHROUTER_JUDGE_ENDPOINT: 'https://api.example/v1', A: 'b' },
  labels: { [LABELS.managed]: 'true', [LABELS.job]: longJob, [LABELS.task]: 'my task/1', [LABELS.host]: 'host-1' },
  resources: { memoryBytes: 512 * 1024 * 1024, cpus: 1.5, pids: 256 },
  mounts: [
    { source: '/srv/bench', target: '/app/benchmark', readOnly: true },
    { source: '/srv/artifacts/run/job/results', target: CONTAINER_RESULTS_DIR, readOnly: false },
  ],
  network: 'isolated',
  docker: false,
};
const placement = { namespace: 'benchrouter', image: spec.image, imagePullPolicy: 'Never' as const, hostAddress: '10.247.0.1', inputs: 'hostPath' as const };

describe('names and labels for the Kubernetes API', () => {
  it('keeps a valid pod name, and makes any other a DNS-1123 label of 63 at most with a hash of the original', () => {
    expect(podNameFor('br-host-1-job-2')).toBe('br-host-1-job-2');
    const changed = podNameFor('br-Host_1-run.01-Job');
    expect(changed).toMatch(/^br-host-1-run-01-job-[0-9a-f]{8}$/);
    // Two names that differ only in case stay two.
    expect(podNameFor('br-host-1-run.01-job')).not.toBe(changed);
    const long = podNameFor(`br-host-${longJob}`);
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(podNameFor(`br-host-${longJob}`)).toBe(long);
  });

  it('keeps a valid label value, and makes any other valid with a hash, the original in the annotation', () => {
    expect(labelValueFor('conformance-ab12.01-kubernetes-1')).toBe('conformance-ab12.01-kubernetes-1');
    expect(labelValueFor('')).toBe('');
    expect(labelValueFor('my task/1')).toMatch(/^my-task-1-[0-9a-f]{8}$/);
    const long = labelValueFor(longJob);
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(/^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/);
    expect(labelValueFor('///')).toMatch(/^[0-9a-f]{8}$/);
    const pod = podManifest('p', spec, placement);
    expect(originalLabels(pod.metadata)).toEqual({ ...spec.labels, [LABELS.runtime]: 'kubernetes' });
    expect(originalLabels({ labels: { a: 'b' }, annotations: { [LABELS_ANNOTATION]: 'not json' } })).toEqual({ a: 'b' });
  });
});

describe('a task spec as a pod', () => {
  const pod = podManifest('br-host-1-job', spec, placement);
  const [task, results] = pod.spec!.containers;

  it('runs the command with sh -c in its working directory, wrapped to record its own end, never restarted', () => {
    expect(pod.spec).toMatchObject({ restartPolicy: 'Never', automountServiceAccountToken: false, enableServiceLinks: false });
    expect(task!.name).toBe(TASK_CONTAINER);
    expect(task!.command).toEqual(wrappedCommand(spec.command));
    expect(task!.command!.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(task!.command![2]).toContain('/bin/sh -c "$1"');
    expect(task!.command![2]).toContain(EXITED_MESSAGE);
    expect(task!.command!.at(-1)).toBe(spec.command);
    expect(task!.workingDir).toBe(spec.workingDir);
    expect(task!.imagePullPolicy).toBe('Never');
  });

  it('gives it its env in order, its limits, no privilege, and the host alias in /etc/hosts', () => {
    expect(task!.env).toEqual(Object.entries(spec.env).map(([name, value]) => ({ name, value })));
    expect(task!.resources).toEqual({
      limits: { memory: String(512 * 1024 * 1024), cpu: '1500m' },
      requests: { memory: String(512 * 1024 * 1024), cpu: '150m' },
    });
    expect(task!.securityContext).toEqual({ allowPrivilegeEscalation: false, privileged: false });
    expect(results!.securityContext).toEqual({ allowPrivilegeEscalation: false, privileged: false });
    expect(pod.spec!.hostAliases).toEqual([{ ip: '10.247.0.1', hostnames: [HOST_ALIAS] }]);
    expect(pod.spec!.hostNetwork).toBeUndefined();
    expect(podManifest('p', { ...spec, network: 'host' }, placement).spec).toMatchObject({ hostNetwork: true });
  });

  it('keeps results in an emptyDir that the results container holds, and the read-only mounts as the node paths', () => {
    expect(pod.spec!.volumes).toEqual([
      { name: 'host-0', hostPath: { path: '/srv/bench', type: 'Directory' } },
      { name: 'results', emptyDir: {} },
    ]);
    expect(task!.volumeMounts).toEqual([
      { name: 'host-0', mountPath: '/app/benchmark', readOnly: true },
      { name: 'results', mountPath: CONTAINER_RESULTS_DIR },
    ]);
    expect(results!.name).toBe(RESULTS_CONTAINER);
    expect(results!.volumeMounts).toEqual([{ name: 'results', mountPath: CONTAINER_RESULTS_DIR }]);
  });

  it('with inputs copied, gives each read-only mount an emptyDir that an init container holds until the worker says all is in', () => {
    const copied = podManifest('p', spec, { ...placement, inputs: 'copy' });
    expect(copied.spec!.volumes).toEqual([
      { name: 'input-0', emptyDir: {} },
      { name: 'results', emptyDir: {} },
      { name: 'stage-ready', emptyDir: {} },
    ]);
    expect(copied.spec!.containers[0]!.volumeMounts).toEqual([
      { name: 'input-0', mountPath: '/app/benchmark', readOnly: true },
      { name: 'results', mountPath: CONTAINER_RESULTS_DIR },
    ]);
    const [stage] = copied.spec!.initContainers!;
    expect(stage).toMatchObject({ name: STAGE_CONTAINER, image: spec.image, securityContext: { privileged: false } });
    expect(stage!.command!.at(-1)).toBe(`until [ -e ${STAGE_READY} ]; do sleep 0.2; done`);
    expect(stage!.volumeMounts).toEqual([
      { name: 'input-0', mountPath: '/benchrouter-stage/0' },
      { name: 'stage-ready', mountPath: '/benchrouter-stage/ready' },
    ]);
    expect(stagedMounts(spec)).toEqual([{ source: '/srv/bench', stage: '/benchrouter-stage/0' }]);
    expect(podManifest('p', spec, placement).spec!.initContainers).toBeUndefined();
  });

  it('labels it with valid values, the runtime included, and the originals in an annotation', () => {
    const labels = pod.metadata!.labels!;
    expect(labels[LABELS.runtime]).toBe('kubernetes');
    expect(labels[LABELS.job]).toBe(labelValueFor(longJob));
    expect(JSON.parse(pod.metadata!.annotations![LABELS_ANNOTATION]!)[LABELS.job]).toBe(longJob);
  });

  it('isolates it with a policy: no ingress, egress only to the host address at its model ports on the host', () => {
    expect(hostPortsOf(spec.env)).toEqual([8390]);
    const policy = networkPolicyManifest('br-host-1-job', spec, 'benchrouter', '10.247.0.1', hostPortsOf(spec.env));
    expect(policy.spec).toEqual({
      podSelector: { matchLabels: { [LABELS.job]: labelValueFor(longJob), [LABELS.host]: 'host-1' } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: [{ to: [{ ipBlock: { cidr: '10.247.0.1/32' } }], ports: [{ protocol: 'TCP', port: 8390 }] }],
    });
  });
});

describe('the pod read back', () => {
  const base = { metadata: { uid: 'u1', labels: { a: 'b' } } };
  it("reads the task container's exit, times and out-of-memory kill", () => {
    const pod: V1Pod = {
      ...base,
      status: {
        phase: 'Running',
        containerStatuses: [
          { name: RESULTS_CONTAINER, image: '', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: new Date(0) } } },
          {
            name: TASK_CONTAINER,
            image: '',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: {
              terminated: { exitCode: 0, reason: 'OOMKilled', startedAt: new Date('2026-01-01T00:00:00Z'), finishedAt: new Date('2026-01-01T00:00:05Z') },
            },
          },
        ],
      },
    };
    expect(podTaskState(pod)).toEqual({
      id: 'u1',
      running: false,
      exitCode: 0,
      startedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: '2026-01-01T00:00:05.000Z',
      oomKilled: true,
      labels: { a: 'b' },
    });
  });

  it('reads a pending pod as on its way, and a failed one without its record (evicted) as killed', () => {
    expect(podTaskState({ ...base, status: { phase: 'Pending' } })).toMatchObject({ running: true, exitCode: 0, startedAt: '' });
    expect(podTaskState({ ...base, status: { phase: 'Failed', reason: 'Evicted' } })).toMatchObject({ running: false, exitCode: 137 });
  });
});

describe('kubernetes settings', () => {
  it('defaults to the local cluster of scripts/k8s.sh and namespace benchrouter', () => {
    expect(settingsFrom({}, '/home/u').kubernetes).toEqual({
      kubeconfig: '/home/u/.benchrouter/k8s/admin.kubeconfig',
      namespace: 'benchrouter',
      containerdSocket: '/home/u/.benchrouter/k8s/run/containerd.sock',
      podCidr: '10.247.0.0/24',
      inputs: 'hostPath',
    });
  });

  it('takes BENCHROUTER_KUBECONFIG over KUBECONFIG, and the namespace, registry and host address', () => {
    const env = {
      KUBECONFIG: '/k/other',
      BENCHROUTER_KUBECONFIG: '/k/config',
      BENCHROUTER_K8S_NAMESPACE: 'evals',
      BENCHROUTER_K8S_REGISTRY: 'registry.example:5000/br/',
      BENCHROUTER_K8S_HOST_ADDRESS: '10.0.0.5',
    };
    expect(settingsFrom(env, '/home/u').kubernetes).toMatchObject({
      kubeconfig: '/k/config',
      namespace: 'evals',
      registry: 'registry.example:5000/br',
      hostAddress: '10.0.0.5',
    });
    expect(settingsFrom({ KUBECONFIG: '/k/other' }, '/home/u').kubernetes.kubeconfig).toBe('/k/other');
  });

  it('copies the inputs in on a cluster with a registry, mounts the node paths without, and takes the setting over both', () => {
    expect(settingsFrom({}, '/home/u').kubernetes.inputs).toBe('hostPath');
    expect(settingsFrom({ BENCHROUTER_K8S_REGISTRY: 'r.example/br' }, '/home/u').kubernetes.inputs).toBe('copy');
    expect(settingsFrom({ BENCHROUTER_K8S_INPUTS: 'copy' }, '/home/u').kubernetes.inputs).toBe('copy');
    expect(settingsFrom({ BENCHROUTER_K8S_REGISTRY: 'r.example/br', BENCHROUTER_K8S_INPUTS: 'hostPath' }, '/home/u').kubernetes.inputs).toBe('hostPath');
    expect(() => settingsFrom({ BENCHROUTER_K8S_INPUTS: 'nfs' }, '/home/u')).toThrow('BENCHROUTER_K8S_INPUTS: expected "copy" or "hostPath", got "nfs"');
  });

  it("finds the host's address for pods: the setting, the cluster bridge's, else the pod network's first", () => {
    const settings = settingsFrom({}, '/home/u').kubernetes;
    expect(hostAddressOf({ ...settings, hostAddress: '10.0.0.5' }, {})).toBe('10.0.0.5');
    const bridge = { address: '10.9.0.1', netmask: '255.255.255.0', family: 'IPv4' as const, mac: '', internal: false, cidr: '10.9.0.1/24' };
    expect(hostAddressOf(settings, { 'br-k8s0': [bridge] })).toBe('10.9.0.1');
    expect(hostAddressOf(settings, {})).toBe('10.247.0.1');
  });

  it("names a pushed image by the registry, its repository, its tag and its id's start", () => {
    expect(registryReference('reg:5000/br', 'benchrouter/base:bookworm', 'sha256:0123456789abcdef')).toBe('reg:5000/br/benchrouter/base:bookworm-0123456789ab');
    expect(registryReference('reg', 'localhost:5000/img', 'sha256:abcdefabcdefabcd')).toBe('reg/localhost-5000/img:latest-abcdefabcdef');
  });
});
