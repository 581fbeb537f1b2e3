// A task's spec (engines/engine.ts) as a Kubernetes Pod and its NetworkPolicy: names and label values made
// valid for the API (with the originals kept in an annotation), the task's limits, its results in an emptyDir
// that a helper container keeps readable through the API once the task has exited. Pure, so it is tested directly.

import { createHash } from 'node:crypto';
import path from 'node:path';
import type { V1NetworkPolicy, V1Pod, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { CONTAINER_RESULTS_DIR, HOST_ALIAS, LABELS } from '../../container-spec.js';
import type { K8sInputs } from '../../../config/settings.js';
import type { TaskSpec } from '../engine.js';

/** The container that runs the task's command, and the one that holds its results for the copy out. */
export const TASK_CONTAINER = 'task';
export const RESULTS_CONTAINER = 'results';
/**
 * With inputs copied (KubernetesSettings.inputs): the init container that holds the pod until the worker has sent
 * its read-only folders in, each into STAGE_DIR/<its index among the mounts>, then written STAGE_READY.
 */
export const STAGE_CONTAINER = 'stage';
export const STAGE_DIR = '/benchrouter-stage';
export const STAGE_READY = `${STAGE_DIR}/ready/done`;
const RESULTS_VOLUME = 'results';
/** The task's labels as it gave them, before they were made valid label values (JSON). */
export const LABELS_ANNOTATION = 'benchrouter.labels';
/** What LABELS.runtime reads for a task of this engine. */
export const KUBERNETES_RUNTIME = 'kubernetes';
/**
 * Written by the task container's wrapper when the task's shell ended by itself: a task container that
 * stopped without it was killed from outside the pod (its main process, PID 1 in its own PID namespace,
 * ignores a SIGKILL sent from inside).
 */
export const EXITED_MESSAGE = 'benchrouter: the task exited';

const hash8 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);

/**
 * A DNS-1123 label (lowercase alphanumerics and '-', 63 at most, alphanumeric at both ends): the pod's name,
 * its hostname and its NetworkPolicy's. A name that had to change keeps a hash of the original, so that two
 * names that differ only in case or punctuation stay two.
 */
export function podNameFor(name: string): string {
  const clean = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
  if (clean === name && clean.length <= 63) return clean;
  const suffix = `-${hash8(name)}`;
  return `${clean.slice(0, 63 - suffix.length).replace(/-+$/, '')}${suffix}`.replace(/^-/, '');
}

/** A valid label value (63 at most; alphanumerics, '-', '_', '.'; alphanumeric at both ends); a changed one keeps a hash of the original. */
export function labelValueFor(value: string): string {
  if (/^([A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)?$/.test(value)) return value;
  const clean = value.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  const suffix = hash8(value);
  const head = clean.slice(0, 63 - suffix.length - 1).replace(/[^A-Za-z0-9]+$/, '');
  return head ? `${head}-${suffix}` : suffix;
}

/** The pod's labels as the task gave them: the annotation's originals over the (sanitized) labels. */
export function originalLabels(metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } | undefined): Record<string, string> {
  let originals: Record<string, string> = {};
  try {
    originals = JSON.parse(metadata?.annotations?.[LABELS_ANNOTATION] ?? '{}') as Record<string, string>;
  } catch {
    // A mangled annotation leaves the labels as the API holds them.
  }
  return { ...(metadata?.labels ?? {}), ...originals };
}

/** How the pod is placed on its cluster. */
export interface PodPlacement {
  namespace: string;
  /** The image reference as the cluster knows it (a registry's, when there is one). */
  image: string;
  /** Never: the image was imported into the node's runtime; IfNotPresent: pulled from the registry. */
  imagePullPolicy: 'Never' | 'IfNotPresent';
  /** The worker host's address as the pods reach it (HOST_ALIAS names it in the pod's /etc/hosts). */
  hostAddress: string;
  /** How the read-only mounts reach the pod: the node's paths, or copies the worker sends in (STAGE_CONTAINER). */
  inputs: K8sInputs;
}

/** The mounts a pod of `spec` gets as copies (with inputs copied): each with the folder it is staged in. */
export function stagedMounts(spec: TaskSpec): Array<{ source: string; stage: string }> {
  return spec.mounts.flatMap((mount, index) => (mount.target === CONTAINER_RESULTS_DIR ? [] : [{ source: mount.source, stage: `${STAGE_DIR}/${index}` }]));
}

/**
 * The task container's command: the task's shell as a child, so that its own end is recorded in the container's
 * termination message and a kill of the container from outside is told apart from the task's own exit 137.
 */
export function wrappedCommand(command: string): string[] {
  return [
    '/bin/sh',
    '-c',
    `/bin/sh -c "$1"; code=$?; echo "${EXITED_MESSAGE} ($code)" > /dev/termination-log 2>/dev/null; exit $code`,
    'benchrouter-task',
    command,
  ];
}

/**
 * The pod of a task. Read-only mounts are the node's own paths (hostPath: the node must see the worker's folders),
 * or, with inputs copied, emptyDirs that an init container holds until the worker has sent the folders in.
 */
export function podManifest(name: string, spec: TaskSpec, placement: PodPlacement): V1Pod {
  const labels = { ...spec.labels, [LABELS.runtime]: KUBERNETES_RUNTIME };
  const copied = placement.inputs === 'copy';
  const volumes: V1Volume[] = [];
  const mounts: V1VolumeMount[] = [];
  const staging: V1VolumeMount[] = [];
  spec.mounts.forEach((mount, index) => {
    if (mount.target === CONTAINER_RESULTS_DIR) {
      volumes.push({ name: RESULTS_VOLUME, emptyDir: {} });
      mounts.push({ name: RESULTS_VOLUME, mountPath: mount.target });
    } else if (copied) {
      const volume = `input-${index}`;
      volumes.push({ name: volume, emptyDir: {} });
      mounts.push({ name: volume, mountPath: mount.target, readOnly: mount.readOnly });
      staging.push({ name: volume, mountPath: `${STAGE_DIR}/${index}` });
    } else {
      const volume = `host-${index}`;
      volumes.push({ name: volume, hostPath: { path: mount.source, type: 'Directory' } });
      mounts.push({ name: volume, mountPath: mount.target, readOnly: mount.readOnly });
    }
  });
  if (!volumes.some((v) => v.name === RESULTS_VOLUME)) volumes.push({ name: RESULTS_VOLUME, emptyDir: {} });
  if (copied) volumes.push({ name: 'stage-ready', emptyDir: {} });
  const memory = String(spec.resources.memoryBytes);
  const cpuMillis = Math.max(1, Math.round(spec.resources.cpus * 1000));
  const cpu = `${cpuMillis}m`;
  // A tenth of its CPUs is reserved, as Docker reserves none: a limit is a cap, and tasks that wait on the model
  // mostly idle. Its memory is reserved whole: a node that overcommits memory OOM-kills tasks within their limits.
  const cpuRequest = `${Math.max(1, Math.round(cpuMillis / 10))}m`;
  const securityContext = { allowPrivilegeEscalation: false, privileged: false };
  const onHostNetwork = spec.network === 'host';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: placement.namespace,
      labels: Object.fromEntries(Object.entries(labels).map(([key, value]) => [key, labelValueFor(value)])),
      annotations: { [LABELS_ANNOTATION]: JSON.stringify(labels) },
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 5,
      ...(onHostNetwork ? { hostNetwork: true } : { hostAliases: [{ ip: placement.hostAddress, hostnames: [HOST_ALIAS] }] }),
      volumes,
      ...(copied
        ? {
            initContainers: [
              {
                // Waits for the worker's word that every folder is in (it sends them by exec `tar x`), then lets the task start.
                name: STAGE_CONTAINER,
                image: placement.image,
                imagePullPolicy: placement.imagePullPolicy,
                command: ['/bin/sh', '-c', `until [ -e ${STAGE_READY} ]; do sleep 0.2; done`],
                resources: { limits: { memory: '256Mi', cpu: '500m' }, requests: { memory: '16Mi', cpu: '10m' } },
                volumeMounts: [...staging, { name: 'stage-ready', mountPath: path.posix.dirname(STAGE_READY) }],
                securityContext,
              },
            ],
          }
        : {}),
      containers: [
        {
          name: TASK_CONTAINER,
          image: placement.image,
          imagePullPolicy: placement.imagePullPolicy,
          command: wrappedCommand(spec.command),
          workingDir: spec.workingDir,
          env: Object.entries(spec.env).map(([key, value]) => ({ name: key, value })),
          resources: { limits: { memory, cpu }, requests: { memory, cpu: cpuRequest } },
          volumeMounts: mounts,
          securityContext,
          terminationMessagePolicy: 'File',
        },
        {
          // Holds the results volume readable after the task exits: the worker copies it out through the API (exec tar).
          name: RESULTS_CONTAINER,
          image: placement.image,
          imagePullPolicy: placement.imagePullPolicy,
          command: ['/bin/sh', '-c', 'trap "exit 0" TERM INT; while :; do sleep 3600 & wait $!; done'],
          resources: { limits: { memory: '64Mi', cpu: '100m' }, requests: { memory: '16Mi', cpu: '10m' } },
          volumeMounts: [{ name: RESULTS_VOLUME, mountPath: CONTAINER_RESULTS_DIR }],
          securityContext,
        },
      ],
    },
  };
}

/**
 * An isolated task's NetworkPolicy: egress only to the worker's gateway (its address and port), no ingress.
 * Enforced only by a network plugin that implements NetworkPolicy (the local cluster's bridge plugin does not).
 */
export function networkPolicyManifest(name: string, spec: TaskSpec, namespace: string, hostAddress: string, gatewayPorts: number[]): V1NetworkPolicy {
  const podLabels = { [LABELS.job]: labelValueFor(spec.labels[LABELS.job] ?? ''), [LABELS.host]: labelValueFor(spec.labels[LABELS.host] ?? '') };
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, namespace, labels: Object.fromEntries(Object.entries(spec.labels).map(([key, value]) => [key, labelValueFor(value)])) },
    spec: {
      podSelector: { matchLabels: podLabels },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: [{ to: [{ ipBlock: { cidr: `${hostAddress}/32` } }], ports: gatewayPorts.map((port) => ({ protocol: 'TCP', port })) }],
    },
  };
}

/** The ports of the model endpoints a task is given (its gateway's, or loopback ones with --no-gateway) that are on its host. */
export function hostPortsOf(env: Record<string, string>): number[] {
  const ports = new Set<number>();
  for (const [key, value] of Object.entries(env)) {
    if (!/^BENCHROUTER_\w*ENDPOINT$/.test(key)) continue;
    try {
      const url = new URL(value);
      if (url.hostname !== HOST_ALIAS) continue;
      ports.add(Number(url.port || (url.protocol === 'https:' ? 443 : 80)));
    } catch {
      // not a URL: nothing to open
    }
  }
  return [...ports].sort((a, b) => a - b);
}
