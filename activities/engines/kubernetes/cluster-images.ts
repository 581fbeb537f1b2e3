// A task image made available to the cluster before its pod starts. Images are built by the worker host's
// Docker daemon; the local cluster (scripts/k8s.sh) has no registry, so an image is imported into its
// containerd as `scripts/k8s.sh import` does (docker save | ctr -n k8s.io images import), once per image id
// (kept in memory, checked against containerd), under a host lock. With a registry setting the image is
// tagged and pushed there instead, and the pod pulls it.

import { spawn } from 'node:child_process';
import type { DockerEngine } from '../../docker-engine.js';
import { withHostLock } from '../../host-lock.js';

export interface ClusterImagesDeps {
  docker: Pick<DockerEngine, 'inspectImage'>;
  locksDir: string;
  containerdSocket: string;
  registry?: string;
}

/** What a pod names its image by, and how it gets it. */
export interface ClusterImage {
  image: string;
  imagePullPolicy: 'Never' | 'IfNotPresent';
}

/** Runs a command; its stdout, or a failure with its stderr's last lines. `input` is piped into it from another command's stdout. */
function run(command: string, args: string[], from?: { command: string; args: string[] }): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: [from ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    let sourceFailure: string | undefined;
    if (from) {
      const source = spawn(from.command, from.args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let sourceErr = '';
      source.stderr.on('data', (chunk: Buffer) => (sourceErr = (sourceErr + chunk.toString()).slice(-4000)));
      source.stdout.pipe(child.stdin!);
      source.on('error', (error) => (sourceFailure = error.message));
      source.on('close', (code) => {
        if (code !== 0) sourceFailure = `${from.command} ${from.args.join(' ')} exited ${code}: ${sourceErr.trim()}`;
      });
    }
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0 && !sourceFailure) resolve(stdout);
      else reject(new Error(sourceFailure ?? `${command} ${args.join(' ')} exited ${code}: ${stderr.trim()}`));
    });
  });
}

/** The reference an image is pushed to in `registry`: its repository's last part and tag, with the image id's start. */
export function registryReference(registry: string, image: string, imageId: string): string {
  const withoutDigest = image.split('@')[0]!;
  const slash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  const repository = colon > slash ? withoutDigest.slice(0, colon) : withoutDigest;
  const tag = colon > slash ? withoutDigest.slice(colon + 1) : 'latest';
  const name = repository.replace(/[^a-z0-9._/-]/g, '-');
  return `${registry}/${name}:${tag}-${imageId.replace(/^sha256:/, '').slice(0, 12)}`.replace(/:(.{128}).+$/, ':$1');
}

export class ClusterImages {
  /** Image ids already in the cluster (imported or pushed by this process), by the reference pods use. */
  private readonly ready = new Map<string, Promise<ClusterImage>>();

  constructor(private readonly deps: ClusterImagesDeps) {}

  /** The image as the cluster's pods name it, imported or pushed first when it is not there yet. */
  async provide(image: string): Promise<ClusterImage> {
    const inspected = await this.deps.docker.inspectImage(image);
    if (!inspected) throw new Error(`no Docker image ${image} on this worker host to give the cluster`);
    const key = `${inspected.id} ${image}`;
    let ready = this.ready.get(key);
    if (!ready) {
      ready = this.deps.registry ? this.push(image, inspected.id, this.deps.registry) : this.importLocal(image, inspected.id);
      this.ready.set(key, ready);
      ready.catch(() => this.ready.delete(key));
    }
    return ready;
  }

  /** Into the local cluster's containerd, unless it holds this image id under this name already (a cluster that was restarted does not). */
  private async importLocal(image: string, imageId: string): Promise<ClusterImage> {
    const { containerdSocket, locksDir } = this.deps;
    const ctr = (...args: string[]) => ['--address', containerdSocket, '-n', 'k8s.io', ...args];
    await withHostLock(locksDir, `k8s-import-${imageId.replace(/^sha256:/, '').slice(0, 16)}`, async () => {
      if (await this.holds(image, imageId)) return;
      await run('ctr', ctr('images', 'import', '-'), { command: 'docker', args: ['save', image] }).catch((error: Error) => {
        throw new Error(`could not import image ${image} into the cluster's containerd (${containerdSocket}): ${error.message}`);
      });
    });
    return { image, imagePullPolicy: 'Never' };
  }

  /** True when containerd has `image` and its config is `imageId` (what `docker save` gave it). */
  private async holds(image: string, imageId: string): Promise<boolean> {
    const ctr = (...args: string[]) => run('ctr', ['--address', this.deps.containerdSocket, '-n', 'k8s.io', ...args]);
    const name = image.includes('/') ? `docker.io/${image}` : `docker.io/library/${image}`;
    const listed = await ctr('images', 'ls', `name==${name}`).catch(() => '');
    let digest = /\s(sha256:[0-9a-f]{64})\s/.exec(listed.split('\n')[1] ?? '')?.[1];
    for (let depth = 0; digest && depth < 2; depth++) {
      const content = JSON.parse(await ctr('content', 'get', digest).catch(() => '{}')) as {
        config?: { digest?: string };
        manifests?: Array<{ digest?: string }>;
      };
      if (content.config) return content.config.digest === imageId;
      digest = content.manifests?.[0]?.digest;
    }
    return false;
  }

  /** Tagged for the registry and pushed (docker push uses the host's registry credentials). Untested here: there is no registry. */
  private async push(image: string, imageId: string, registry: string): Promise<ClusterImage> {
    const reference = registryReference(registry, image, imageId);
    await withHostLock(this.deps.locksDir, `k8s-push-${imageId.replace(/^sha256:/, '').slice(0, 16)}`, async () => {
      await run('docker', ['tag', image, reference]);
      await run('docker', ['push', reference]).catch((error: Error) => {
        throw new Error(`could not push image ${image} to ${registry} as ${reference}: ${error.message}`);
      });
    });
    return { image: reference, imagePullPolicy: 'IfNotPresent' };
  }
}
