// The Kubernetes API as the engine uses it (@kubernetes/client-node, the kubeconfig's credentials): pods and
// NetworkPolicies in the engine's namespace (created when missing), a pod's log followed as a stream, a
// command run in a pod's container (exec, over the API's websocket), and the node's stats summary.

import * as k8s from '@kubernetes/client-node';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { PassThrough, Writable, type Readable } from 'node:stream';

export function isNotFound(error: unknown): boolean {
  return error instanceof k8s.ApiException && error.code === 404;
}

function isConflict(error: unknown): boolean {
  return error instanceof k8s.ApiException && error.code === 409;
}

/** What an API failure says, without the response headers the exception prints by default. */
export function apiMessage(error: unknown): string {
  if (error instanceof k8s.ApiException) {
    let body = error.body as unknown;
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body);
      } catch {
        // a plain-text body
      }
    }
    const message = typeof body === 'object' && body && 'message' in body ? String((body as { message: unknown }).message) : String(body ?? '');
    return `HTTP ${error.code}${message ? `: ${message}` : ''}`;
  }
  return error instanceof Error ? error.message : String(error);
}

export class KubeCluster {
  readonly config = new k8s.KubeConfig();
  private readonly core: k8s.CoreV1Api;
  private readonly networking: k8s.NetworkingV1Api;
  private namespaceReady?: Promise<void>;

  constructor(
    kubeconfig: string,
    readonly namespace: string,
  ) {
    this.config.loadFromFile(kubeconfig);
    this.core = this.config.makeApiClient(k8s.CoreV1Api);
    this.networking = this.config.makeApiClient(k8s.NetworkingV1Api);
  }

  /** The namespace, created when missing (once per process; again after a failure). */
  ensureNamespace(): Promise<void> {
    this.namespaceReady ??= (async () => {
      try {
        await this.core.readNamespace({ name: this.namespace });
      } catch (error) {
        if (!isNotFound(error)) throw error;
        await this.core
          .createNamespace({ body: { metadata: { name: this.namespace, labels: { 'benchrouter.managed': 'true' } } } })
          .catch((created: unknown) => {
            if (!isConflict(created)) throw created;
          });
      }
    })().catch((error: unknown) => {
      this.namespaceReady = undefined;
      throw new Error(`the kubernetes engine cannot use namespace ${this.namespace}: ${apiMessage(error)}`);
    });
    return this.namespaceReady;
  }

  async readPod(name: string): Promise<k8s.V1Pod | undefined> {
    try {
      return await this.core.readNamespacedPod({ name, namespace: this.namespace });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw new Error(`cannot read pod ${this.namespace}/${name}: ${apiMessage(error)}`);
    }
  }

  /**
   * Creates the pod; `conflict` when one of its name exists. A namespace made a moment ago has no default
   * service account yet, which admission waits for: that refusal is retried for a while.
   */
  async createPod(pod: k8s.V1Pod): Promise<k8s.V1Pod | 'conflict'> {
    for (let tries = 0; ; tries++) {
      try {
        return await this.core.createNamespacedPod({ namespace: this.namespace, body: pod });
      } catch (error) {
        if (isConflict(error)) return 'conflict';
        if (tries < 50 && /serviceaccount|service account/i.test(apiMessage(error))) {
          await sleep(200);
          continue;
        }
        throw new Error(`cannot create pod ${this.namespace}/${pod.metadata?.name}: ${apiMessage(error)}`);
      }
    }
  }

  /** The namespace's pods that match `labelSelector` (none when the namespace does not exist). */
  async listPods(labelSelector: string): Promise<k8s.V1Pod[]> {
    return (await this.core.listNamespacedPod({ namespace: this.namespace, labelSelector })).items;
  }

  /** Deletes the pod now (grace period 0: its containers are killed); one already gone is fine. */
  async deletePod(name: string): Promise<void> {
    try {
      await this.core.deleteNamespacedPod({ name, namespace: this.namespace, gracePeriodSeconds: 0 });
    } catch (error) {
      if (!isNotFound(error)) throw new Error(`cannot delete pod ${this.namespace}/${name}: ${apiMessage(error)}`);
    }
  }

  /** Until the pod of that name is gone (or `ms` passed: then it fails). */
  async podGone(name: string, ms = 60_000): Promise<void> {
    const until = Date.now() + ms;
    while (await this.readPod(name)) {
      if (Date.now() > until) throw new Error(`pod ${this.namespace}/${name} was not gone within ${ms / 1000} s`);
      await sleep(200);
    }
  }

  /** Creates the policy, or replaces one of its name (an earlier attempt's). */
  async applyNetworkPolicy(policy: k8s.V1NetworkPolicy): Promise<void> {
    const name = policy.metadata!.name!;
    try {
      await this.networking.createNamespacedNetworkPolicy({ namespace: this.namespace, body: policy });
    } catch (error) {
      if (!isConflict(error)) throw new Error(`cannot create network policy ${this.namespace}/${name}: ${apiMessage(error)}`);
      await this.networking.replaceNamespacedNetworkPolicy({ name, namespace: this.namespace, body: policy });
    }
  }

  async deleteNetworkPolicy(name: string): Promise<void> {
    try {
      await this.networking.deleteNamespacedNetworkPolicy({ name, namespace: this.namespace });
    } catch (error) {
      if (!isNotFound(error)) throw new Error(`cannot delete network policy ${this.namespace}/${name}: ${apiMessage(error)}`);
    }
  }

  /** What carries `label=value`: its pods, and the network policies left without their pod (a task's policy goes with it). */
  async labelled(label: string, value: string): Promise<string[]> {
    const labelSelector = `${label}=${value}`;
    const pods = (await this.core.listNamespacedPod({ namespace: this.namespace, labelSelector })).items.map((p) => p.metadata?.name ?? '');
    const policies = await this.networking.listNamespacedNetworkPolicy({ namespace: this.namespace, labelSelector });
    const orphaned = policies.items.map((p) => p.metadata?.name ?? '').filter((name) => !pods.includes(name));
    return [...pods.map((name) => `pod/${name}`), ...orphaned.map((name) => `networkpolicy/${name}`)];
  }

  /** A GET on the API server as a stream (a followed log), with the kubeconfig's credentials. */
  async stream(path: string, signal: AbortSignal): Promise<IncomingMessage> {
    const server = this.config.getCurrentCluster()?.server;
    if (!server) throw new Error('the kubeconfig names no current cluster');
    const options: https.RequestOptions = {};
    await this.config.applyToHTTPSOptions(options);
    return new Promise((resolve, reject) => {
      const request = https.request(new URL(path, server), { ...options, method: 'GET', signal }, (response) => {
        if (response.statusCode === 200) return resolve(response);
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => reject(new Error(`GET ${path}: HTTP ${response.statusCode}: ${body.slice(0, 500)}`)));
      });
      request.on('error', reject);
      request.end();
    });
  }

  /** The pod's log: `options` as the API's query (follow, tailLines, timestamps). */
  podLog(name: string, container: string, query: Record<string, string>, signal: AbortSignal): Promise<IncomingMessage> {
    const search = new URLSearchParams({ container, ...query });
    return this.stream(`/api/v1/namespaces/${encodeURIComponent(this.namespace)}/pods/${encodeURIComponent(name)}/log?${search}`, signal);
  }

  /**
   * Runs `command` in the pod's container; resolves when it ended well, its stdout written to `stdout` (not ended
   * here; discarded without one), its stdin read from `stdin`.
   */
  async exec(pod: string, container: string, command: string[], stdout?: Writable, stdin?: Readable): Promise<void> {
    let stderr = '';
    const errors = new Writable({
      write(chunk: Buffer, _encoding, done) {
        stderr = (stderr + chunk.toString()).slice(-2000);
        done();
      },
    });
    // The client's exec, handed a child process's pipe itself (or no stdout), was seen never to open its socket:
    // stdin goes through a stream of our own, stdout always to one.
    const input = stdin && stdin.pipe(new PassThrough());
    const output = stdout ?? new PassThrough().resume();
    let status: k8s.V1Status | undefined;
    const socket = await new k8s.Exec(this.config).exec(this.namespace, pod, container, command, output, errors, input ?? null, false, (s) => (status = s));
    await new Promise<void>((resolve, reject) => {
      socket.on('close', () => resolve());
      socket.on('error', (error: Error) => reject(error));
    });
    if (status?.status !== 'Success') {
      throw new Error(
        `${command.join(' ')} in ${this.namespace}/${pod} (${container}) failed: ${status?.message ?? 'no status'}${stderr ? `: ${stderr.trim()}` : ''}`,
      );
    }
  }

  /** What `command` in the pod's container printed, once it ended well. */
  async output(pod: string, container: string, command: string[]): Promise<Buffer> {
    const chunks: Buffer[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk);
        done();
      },
    });
    await this.exec(pod, container, command, sink);
    return Buffer.concat(chunks);
  }

  /** The kubelet's stats summary of the pod's node, through the API server's node proxy. */
  async nodeStats(node: string): Promise<NodeStats> {
    const text = await this.core.connectGetNodeProxyWithPath({ name: node, path: 'stats/summary' });
    return (typeof text === 'string' ? JSON.parse(text) : text) as NodeStats;
  }
}

/** The part of the kubelet's stats summary the engine reads. */
export interface NodeStats {
  pods?: Array<{
    podRef?: { name?: string; namespace?: string };
    containers?: Array<{ name?: string; rootfs?: { usedBytes?: number } }>;
    volume?: Array<{ name?: string; usedBytes?: number }>;
  }>;
}
