// Where BenchRouter keeps things and which Temporal it talks to, from the environment. Pure: the
// caller passes the environment in, so every default is visible and testable.

import { DEFAULT_SHARED_QUEUE } from '../runs/host-queues.js';
import { temporalTlsFrom, type TemporalTlsSettings } from './temporal-connection.js';

export interface Settings {
  /** `~/.benchrouter` unless BENCHROUTER_HOME says otherwise. */
  home: string;
  temporalAddress: string;
  temporalNamespace: string;
  /** mTLS / API key for the Temporal frontend (TEMPORAL_TLS_*, TEMPORAL_API_KEY). */
  temporalTls: TemporalTlsSettings;
  /** True when no TEMPORAL_ADDRESS is configured: `br` manages a local dev server itself. */
  embedded: boolean;
  webUiUrl: string;
  sharedQueue: string;
  artifactsRoot: string;
  locksDir: string;
  buildLogsDir: string;
  /** Tar archives of images preloaded into DinD tasks' own daemons. */
  imageCacheDir: string;
  /** Instance lists tasks' `instances: {command}` printed, per image and benchmark content (activities/list-task-instances.ts). */
  instancesCacheDir: string;
  /** Per-task /var/lib/docker directories of running DinD tasks. */
  dindStorageRoot: string;
  /** Prepared inner /var/lib/docker directories, one per preloaded image set, that DinD tasks start from. */
  dindStoreDir: string;
  /** Read-only copies of the lent network namespaces' /etc files (activities/netns-pool.ts). */
  netnsDir: string;
  /**
   * Simple-mode tasks borrow a pooled network namespace instead of getting a new one each
   * (BENCHROUTER_NETNS_POOL; "0" turns it off: each task's own namespace, ~0.1 s more per task).
   */
  netnsPool: boolean;
  /**
   * Size cap of the DinD image store in bytes (BENCHROUTER_DIND_STORE_MAX, e.g. "50g"): least recently used
   * image sets go first when it is passed. 0 turns the store off, and every task `docker load`s its archives.
   */
  dindStoreMaxBytes: number;
  /**
   * The model gateway's port on each worker host. Fixed (not random) so that containers still running
   * when a worker restarts reach the new worker's gateway at the same address.
   */
  gatewayPort: number;
  /** Where the gateway listens: all interfaces by default, so DinD tasks reach it over the bridge. */
  gatewayHost: string;
  /** Where `br up` starts the HTTP API and dashboard (`br serve`); fixed so that links printed earlier keep working. */
  apiPort: number;
  /** The API's base URL as `br run` prints it (BENCHROUTER_API_URL for a server elsewhere). */
  apiUrl: string;
  /** Requests per minute each API token may make (BENCHROUTER_API_RATE_LIMIT; 0: no limit). */
  apiRateLimit: number;
  /**
   * The task engine a worker host runs its tasks on (activities/engines/registry.ts): BENCHROUTER_ENGINE or
   * `br worker --engine`, `docker` by default. The host's choice, not the benchmark's: a `docker: true` task
   * is DinD mode within the Docker engine.
   */
  engine: string;
  /**
   * A host directory of benchmark datasets (a local ModelScope or Hugging Face cache, say), mounted
   * read-only into every task at /app/datasets: for machines that cannot download them (BENCHROUTER_DATASET_DIR).
   */
  datasetDir?: string;
  /** Where a host set to the kubernetes engine runs its tasks (activities/engines/kubernetes/). */
  kubernetes: KubernetesSettings;
}

/** The cluster a worker host's kubernetes engine runs its tasks on (docs/production-cluster.md). */
export interface KubernetesSettings {
  /** BENCHROUTER_KUBECONFIG, else KUBECONFIG, else the local cluster's (scripts/k8s.sh: <home>/k8s/admin.kubeconfig). */
  kubeconfig: string;
  /** BENCHROUTER_K8S_NAMESPACE (`benchrouter`): the tasks' namespace, created when missing. */
  namespace: string;
  /**
   * BENCHROUTER_K8S_REGISTRY (e.g. `registry.example:5000/benchrouter`): task images are tagged and pushed there
   * and the pods pull them. Without it they are imported into the local cluster's containerd (`containerdSocket`).
   */
  registry?: string;
  /** The local cluster's containerd socket (BENCHROUTER_K8S_CONTAINERD; default <BENCHROUTER_K8S_DIR or home/k8s>/run/containerd.sock). */
  containerdSocket: string;
  /**
   * BENCHROUTER_K8S_HOST_ADDRESS: this worker's address as its pods reach it (host.docker.internal in their
   * /etc/hosts). Default: the local cluster's bridge (br-k8s0) address, or the first address of BENCHROUTER_K8S_POD_CIDR.
   */
  hostAddress?: string;
  /** BENCHROUTER_K8S_POD_CIDR, as scripts/k8s.sh reads it (10.247.0.0/24). */
  podCidr: string;
  /**
   * BENCHROUTER_K8S_INPUTS: how a task's read-only folders (its benchmark, the datasets) reach its pod. `copy`:
   * sent into the pod through the API before its task starts, so that any node can run it; `hostPath`: the node's
   * own paths, which must be the worker's (the local cluster, or a shared filesystem at the same path). Default:
   * `copy` with a registry (a real cluster), `hostPath` without (the local cluster on this machine).
   */
  inputs: K8sInputs;
}

export type K8sInputs = 'copy' | 'hostPath';

export const DEFAULT_K8S_NAMESPACE = 'benchrouter';

export const DEFAULT_GATEWAY_PORT = 8390;

export const EMBEDDED_TEMPORAL_PORT = 7233;

export const EMBEDDED_UI_PORT = 8233;

export const DEFAULT_API_PORT = 8391;

/** Ten requests a second per token: far above what the dashboard and a CI job need, well below a runaway loop. */
export const DEFAULT_API_RATE_LIMIT = 600;

function rateLimitFrom(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_API_RATE_LIMIT;
  if (!/^\d+$/.test(value.trim()))
    throw new Error(`BENCHROUTER_API_RATE_LIMIT: expected a whole number of requests per minute per token (0: no limit), got "${value}"`);
  return Number(value);
}

export const DEFAULT_DIND_STORE_MAX = '50g';

export const DEFAULT_ENGINE = 'docker';

/** "50g", "512m", "0" → bytes; a setting that is none of these names itself. */
function sizeBytes(variable: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)([kmgt]?)b?$/i.exec(text.trim());
  if (!match) throw new Error(`${variable}: expected a size like "50g", "512m" or "0", got "${text}"`);
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }[match[2]!.toLowerCase() as '' | 'k' | 'm' | 'g' | 't'];
  return Math.round(Number(match[1]) * unit);
}

/** The self-hosted Web UI's port, which scripts/cluster.sh publishes by default (BENCHROUTER_CLUSTER_UI_PORT). */
export const CLUSTER_UI_PORT = 8080;

/**
 * Without BENCHROUTER_WEB_UI: the embedded server's UI, or for a cluster the UI on the frontend's host at
 * the self-hosted UI's port (as scripts/cluster.sh publishes it); a UI elsewhere needs BENCHROUTER_WEB_UI.
 */
function defaultWebUi(env: Record<string, string | undefined>): string {
  if (!env.TEMPORAL_ADDRESS) return `http://localhost:${env.BENCHROUTER_EMBEDDED_UI_PORT || EMBEDDED_UI_PORT}`;
  const host = env.TEMPORAL_ADDRESS.slice(0, env.TEMPORAL_ADDRESS.lastIndexOf(':')) || 'localhost';
  return `http://${host}:${CLUSTER_UI_PORT}`;
}

export function settingsFrom(env: Record<string, string | undefined>, homeDir: string): Settings {
  const home = env.BENCHROUTER_HOME || `${homeDir}/.benchrouter`;
  const embedded = !env.TEMPORAL_ADDRESS;
  return {
    home,
    // BENCHROUTER_EMBEDDED_PORT / _UI_PORT move the embedded server off its defaults (a second embedded setup, tests).
    temporalAddress: env.TEMPORAL_ADDRESS || `127.0.0.1:${env.BENCHROUTER_EMBEDDED_PORT || EMBEDDED_TEMPORAL_PORT}`,
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    temporalTls: temporalTlsFrom(env),
    embedded,
    webUiUrl: (env.BENCHROUTER_WEB_UI || defaultWebUi(env)).replace(/\/$/, ''),
    sharedQueue: env.BENCHROUTER_TASK_QUEUE || DEFAULT_SHARED_QUEUE,
    artifactsRoot: env.BENCHROUTER_ARTIFACTS || `${home}/artifacts`,
    locksDir: `${home}/locks`,
    buildLogsDir: `${home}/builds`,
    imageCacheDir: env.BENCHROUTER_IMAGE_CACHE || `${home}/image-cache`,
    instancesCacheDir: `${home}/instances`,
    dindStorageRoot: `${home}/dind`,
    dindStoreDir: `${home}/dind-store`,
    netnsDir: `${home}/netns`,
    netnsPool: env.BENCHROUTER_NETNS_POOL !== '0',
    dindStoreMaxBytes: sizeBytes('BENCHROUTER_DIND_STORE_MAX', env.BENCHROUTER_DIND_STORE_MAX || DEFAULT_DIND_STORE_MAX),
    gatewayPort:
      env.BENCHROUTER_GATEWAY_PORT !== undefined && env.BENCHROUTER_GATEWAY_PORT !== '' ? Number(env.BENCHROUTER_GATEWAY_PORT) : DEFAULT_GATEWAY_PORT,
    gatewayHost: env.BENCHROUTER_GATEWAY_HOST || '0.0.0.0',
    apiPort: env.BENCHROUTER_API_PORT ? Number(env.BENCHROUTER_API_PORT) : DEFAULT_API_PORT,
    apiUrl: (env.BENCHROUTER_API_URL || `http://127.0.0.1:${env.BENCHROUTER_API_PORT || DEFAULT_API_PORT}`).replace(/\/$/, ''),
    apiRateLimit: rateLimitFrom(env.BENCHROUTER_API_RATE_LIMIT),
    engine: env.BENCHROUTER_ENGINE || DEFAULT_ENGINE,
    ...(env.BENCHROUTER_DATASET_DIR ? { datasetDir: env.BENCHROUTER_DATASET_DIR } : {}),
    kubernetes: kubernetesFrom(env, home),
  };
}

function kubernetesFrom(env: Record<string, string | undefined>, home: string): KubernetesSettings {
  const clusterDir = env.BENCHROUTER_K8S_DIR || `${home}/k8s`;
  return {
    kubeconfig: env.BENCHROUTER_KUBECONFIG || env.KUBECONFIG || `${clusterDir}/admin.kubeconfig`,
    namespace: env.BENCHROUTER_K8S_NAMESPACE || DEFAULT_K8S_NAMESPACE,
    ...(env.BENCHROUTER_K8S_REGISTRY ? { registry: env.BENCHROUTER_K8S_REGISTRY.replace(/\/+$/, '') } : {}),
    containerdSocket: env.BENCHROUTER_K8S_CONTAINERD || `${clusterDir}/run/containerd.sock`,
    ...(env.BENCHROUTER_K8S_HOST_ADDRESS ? { hostAddress: env.BENCHROUTER_K8S_HOST_ADDRESS } : {}),
    podCidr: env.BENCHROUTER_K8S_POD_CIDR || '10.247.0.0/24',
    inputs: k8sInputsFrom(env.BENCHROUTER_K8S_INPUTS, Boolean(env.BENCHROUTER_K8S_REGISTRY)),
  };
}

function k8sInputsFrom(value: string | undefined, registry: boolean): K8sInputs {
  if (!value) return registry ? 'copy' : 'hostPath';
  if (value === 'copy' || value === 'hostPath') return value;
  throw new Error(`BENCHROUTER_K8S_INPUTS: expected "copy" or "hostPath", got "${value}"`);
}

export function runWebUiLink(settings: Settings, runId: string): string {
  return `${settings.webUiUrl}/namespaces/${encodeURIComponent(settings.temporalNamespace)}/workflows/${encodeURIComponent(runId)}`;
}
